"""gpt.py never drifts from the notebooks: it must be exactly what tools/export.py renders."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import export


def test_gpt_py_matches_the_notebooks_export_cells():
    rendered = export.render_module()
    actual = export.MODULE.read_text()
    assert actual == rendered, (
        "gpt.py is out of sync with the notebooks: edit the notebook's `#| export` cell "
        "(never gpt.py by hand), then run `python tools/export.py`"
    )


def test_only_marked_code_cells_are_exported(tmp_path):
    notebook = new_notebook(
        cells=[
            new_markdown_cell("#| export\nprose is never exported"),
            new_code_cell("x = 1  # a demonstration"),
            new_code_cell("#| export\ndef kept():\n    return 1"),
            new_code_cell("# #| export in a comment is not the marker\ny = 2"),
        ]
    )
    nbformat.write(notebook, tmp_path / "01_demo.ipynb")
    assert export.export_cells(tmp_path / "01_demo.ipynb") == ["def kept():\n    return 1"]
    module = export.render_module(tmp_path)
    assert "def kept():" in module and "x = 1" not in module and "y = 2" not in module


def test_cells_follow_notebook_order(tmp_path):
    for name, source in [("02_b.ipynb", "B = 2"), ("01_a.ipynb", "A = 1")]:
        nbformat.write(new_notebook(cells=[new_code_cell("#| export\n" + source)]), tmp_path / name)
    module = export.render_module(tmp_path)
    assert module.index("A = 1") < module.index("B = 2")


def test_a_hand_edit_of_gpt_py_is_detected(tmp_path, monkeypatch):
    edited = tmp_path / "gpt.py"
    edited.write_text(export.MODULE.read_text() + "\n\ndef added_by_hand():\n    pass\n")
    monkeypatch.setattr(export, "MODULE", edited)
    monkeypatch.setattr("sys.argv", ["export.py", "--check"])
    try:
        export.main()
    except SystemExit as exit:
        assert "out of sync" in str(exit.code) and "added_by_hand" in str(exit.code)
    else:
        raise AssertionError("--check accepted a hand-edited gpt.py")
