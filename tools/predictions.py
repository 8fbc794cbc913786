"""'Predict, then run' cells: their answers stay hidden in the committed notebooks, yet are checked.

A code cell tagged `predict` settles a question that the learner answers before running it. After
a clean run, `hide_predictions` moves such a cell's outputs into its metadata (`expected_outputs`)
and leaves the cell unrun, so JupyterLab shows no answer until the learner runs it. As a pytest
plugin (conftest.py loads it), this module hands nbval those outputs as the cell's reference, so
strict nbval compares every answer like any other output.
"""

import copy

import pytest

TAG = "predict"
KEY = "expected_outputs"


def is_prediction(cell):
    return cell.get("cell_type") == "code" and TAG in cell.get("metadata", {}).get("tags", [])


def hide_predictions(notebook):
    """Move the outputs of every `predict` cell of an executed notebook into its metadata."""
    for cell in notebook.cells:
        if is_prediction(cell):
            cell.metadata[KEY] = cell.outputs
            cell.outputs = []
            cell.execution_count = None


def reference(cell):
    """The cell as nbval should compare it: a `predict` cell run, with its hidden outputs."""
    if not is_prediction(cell):
        return cell
    if KEY not in cell.metadata or cell.outputs:
        raise ValueError(f"predict cell {cell.get('id')} was not stored by tools/run_notebooks.py "
                         "(its outputs belong in its metadata): run that tool on the notebook")
    shown = copy.deepcopy(cell)
    shown.outputs = shown.metadata.pop(KEY)
    shown.execution_count = 1
    return shown


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if hasattr(item, "cell") and hasattr(item, "cell_num"):  # nbval's notebook cells
            item.cell = reference(item.cell)
