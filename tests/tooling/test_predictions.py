"""'Predict, then run': the committed chapter notebooks hide each answer until the learner runs its
cell, and strict nbval still compares every hidden answer (tools/predictions.py)."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools.predictions import KEY, TAG, hide_predictions, is_prediction, reference

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = sorted((ROOT / "notebooks").glob("0[1-7]_*.ipynb"))


def prediction_section(notebook):
    """The code cells after the '## Predict, then run' heading."""
    headings = [i for i, cell in enumerate(notebook.cells)
                if cell.cell_type == "markdown" and cell.source.startswith("## Predict, then run")]
    assert len(headings) == 1, "one 'Predict, then run' section per chapter notebook"
    return [cell for cell in notebook.cells[headings[0]:] if cell.cell_type == "code"]


@pytest.mark.parametrize("path", CHAPTER, ids=lambda path: path.name)
def test_every_answer_is_hidden_until_its_cell_runs(path):
    notebook = nbformat.read(path, as_version=4)
    cells = prediction_section(notebook)
    assert len(cells) >= 3
    assert [cell for cell in notebook.cells if is_prediction(cell)] == cells, (
        f"the section's code cells, and only those, are tagged {TAG!r}")
    for cell in cells:
        assert cell.outputs == [] and cell.execution_count is None, f"{cell.id} shows its answer"
        assert cell.metadata[KEY], f"{cell.id} has no stored answer for nbval to compare"


def notebook_with_answer(printed, stored):
    cell = nbformat.v4.new_code_cell(f"print({printed!r})", metadata={"tags": [TAG]})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{stored}\n")]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    hide_predictions(notebook)
    return notebook


def test_hiding_then_showing_gives_back_the_run_cell():
    notebook = notebook_with_answer("[3, 7]", "[3, 7]")
    hidden = notebook.cells[0]
    shown = reference(hidden)
    assert hidden.outputs == [] and shown.outputs[0].text == "[3, 7]\n"
    assert shown.execution_count is not None and KEY not in shown.metadata
    hidden.outputs = shown.outputs  # a cell run by hand, then saved without the tool
    with pytest.raises(ValueError, match="run_notebooks"):
        reference(hidden)


@pytest.mark.slow  # a notebook kernel under nbval, in a subprocess; .ci/run runs it
def test_strict_nbval_fails_on_a_wrong_hidden_answer(tmp_path):
    nbformat.write(notebook_with_answer("[3, 7]", "[3, 7]"), tmp_path / "right.ipynb")
    nbformat.write(notebook_with_answer("[3, 7]", "[7, 3]"), tmp_path / "wrong.ipynb")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--disable-plugin-autoload",
         "-p", "nbval", "-p", "tools.predictions", "--nbval", "--nbval-current-env", "."],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "1 failed, 1 passed" in run.stdout, run.stdout + run.stderr
    assert "wrong.ipynb" in run.stdout and "[7, 3]" in run.stdout

