"""gpt.py never drifts from the notebooks: it must be exactly what tools/export.py renders."""

import ast
import symtable

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import export


def test_gpt_py_matches_the_notebooks_and_a_hand_edit_is_caught(tmp_path, monkeypatch):
    export.main(["--check"])  # exits with the difference and what to do if gpt.py drifted
    edited = tmp_path / "gpt.py"
    edited.write_text(export.MODULE.read_text() + "\n\ndef added_by_hand():\n    pass\n")
    monkeypatch.setattr(export, "MODULE", edited)
    with pytest.raises(SystemExit, match="(?s)out of sync.*added_by_hand"):
        export.main(["--check"])


def test_only_marked_code_cells_are_exported_in_notebook_order(tmp_path):
    demo = new_notebook(
        cells=[
            new_markdown_cell("#| export\nprose is never exported"),
            new_code_cell("x = 1  # a demonstration"),
            new_code_cell("#| export\ndef kept():\n    return 1"),
            new_code_cell("# #| export in a comment is not the marker\ny = 2"),
        ]
    )
    nbformat.write(demo, tmp_path / "01_demo.ipynb")
    nbformat.write(new_notebook(cells=[new_code_cell("#| export\nB = 2")]), tmp_path / "00_b.ipynb")
    assert export.export_cells(tmp_path / "01_demo.ipynb") == ["def kept():\n    return 1"]
    module = export.render_module(tmp_path)
    assert module.index("B = 2") < module.index("def kept():")
    assert "x = 1" not in module and "y = 2" not in module


# ---- no chapter notebook uses a name that only a later notebook defines ---------------------


def defined_names(source):
    """The names an export cell binds at the top level (functions, classes, assignments)."""
    return {s.get_name() for s in symtable.symtable(source, "cell", "exec").get_symbols()
            if s.is_assigned()}


def names_used(notebook_path):
    """Names the notebook's code reads, `gpt.X` and `from gpt import X` included."""
    used = set()
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(line for line in cell.source.splitlines()
                         if not line.lstrip().startswith(("%", "!")))  # IPython magics
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "gpt"):
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module == "gpt":
                used |= {alias.name for alias in node.names}
    return used


def test_no_chapter_notebook_uses_a_name_defined_later():
    notebooks = sorted(export.NOTEBOOKS.glob("*.ipynb"))
    defined = [set().union(*map(defined_names, export.export_cells(p))) for p in notebooks]
    for i, path in enumerate(notebooks):
        only_later = set().union(*defined[i + 1 :]) - set().union(*defined[: i + 1])
        assert not names_used(path) & only_later, f"{path.name} uses names defined only later"
