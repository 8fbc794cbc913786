"""Keep every notebook's first code cell equal to the setup cell that CONTRIBUTING.md shows.

    python tools/setup_cell.py          # list the notebooks whose first code cell differs (exit 1)
    python tools/setup_cell.py --write  # make each notebook's first code cell that setup cell

CONTRIBUTING.md ("Setup cell") is the one place the cell is written; change it there, then run
`--write`. Only each notebook's first code cell is rewritten: its source, and the metadata that
folds it away (collapsed in JupyterLab, a form showing only its `#@title` line in Colab).
"""

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "CONTRIBUTING.md"
FOLDERS = ("notebooks", "exercises", "solutions", "practice", "bonus")
LABEL = "Setup cell"  # the line that introduces the cell's code block in CONTRIBUTING.md
FOLDED = {"jupyter": {"source_hidden": True}, "cellView": "form"}  # JupyterLab's and Colab's key


def canonical_cell():
    """The code block that follows the line starting with LABEL in CONTRIBUTING.md."""
    match = re.search(rf"^{LABEL}.*?^```python\n(.*?)\n```", GUIDE.read_text(), re.M | re.S)
    if match is None:
        raise ValueError(f"{GUIDE.name} has no ```python block after a line starting with {LABEL!r}")
    return match.group(1)


def notebooks():
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in path.parts)


def first_code_cell(notebook):
    return next(cell for cell in notebook.cells if cell.cell_type == "code")


def differing(paths, cell_source):
    """The notebooks among `paths` whose first code cell is not `cell_source`, folded away."""
    cells = {path: first_code_cell(nbformat.read(path, as_version=4)) for path in paths}
    return [path for path, cell in cells.items()
            if cell.source != cell_source or not FOLDED.items() <= cell.metadata.items()]


def write(path, cell_source):
    notebook = nbformat.read(path, as_version=4)
    cell = first_code_cell(notebook)
    cell.source = cell_source
    cell.metadata.update(FOLDED)
    nbformat.write(notebook, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the cells that differ")
    args = parser.parse_args(argv)
    cell_source = canonical_cell()
    stale = differing(notebooks(), cell_source)
    for path in stale:
        if args.write:
            write(path, cell_source)
        print(f"{'rewrote' if args.write else 'differs'}: {path.relative_to(ROOT)}")
    if stale and not args.write:
        sys.exit("`python tools/setup_cell.py --write` gives them CONTRIBUTING.md's setup cell")


if __name__ == "__main__":
    main()
