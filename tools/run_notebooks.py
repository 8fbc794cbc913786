"""Re-execute notebooks top to bottom in fresh kernels and store their outputs.

    python tools/run_notebooks.py notebooks/03_gelu_feedforward.ipynb
    python tools/run_notebooks.py            # every chapter, exercise, solution and bonus notebook

Run it after changing a notebook (and after `python tools/export.py`): the committed outputs
must come from a clean run, because CI re-executes each notebook with strict nbval and
compares every output with the stored one. The outputs of 'Predict, then run' cells (tagged
`predict`) are stored hidden in the cell's metadata: see tools/predictions.py.
"""

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from predictions import hide_predictions  # tools/predictions.py, beside this script
from setup_cell import notebooks  # tools/setup_cell.py: every notebook of the course


def merge_streams(cell):
    """One output per run of prints to the same stream: a busy machine delivers stdout in pieces,
    a quiet one in one, and the stored notebook should not depend on which."""
    merged = []
    for output in cell.get("outputs", []):
        last = merged[-1] if merged else None
        if last and output.output_type == last.output_type == "stream" and output.name == last.name:
            last.text += output.text
        else:
            merged.append(output)
    cell.outputs = merged


def execute(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        record_timing=False,  # keep run timestamps out of the stored notebooks
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},  # run in the notebook's folder
    )
    client.execute()
    for cell in notebook.cells:  # timestamps of an earlier run would only add noise to diffs
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            merge_streams(cell)
    hide_predictions(notebook)  # answers to 'Predict, then run' stay hidden until run
    nbformat.write(notebook, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    args = parser.parse_args()
    for path in args.paths or notebooks():
        if not path.is_file():
            sys.exit(f"no such notebook: {path}")
        start = time.perf_counter()
        execute(path.resolve())
        print(f"{time.perf_counter() - start:5.1f} s  {path}")


if __name__ == "__main__":
    main()
