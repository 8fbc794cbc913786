"""gpt.py never drifts from the notebooks: it must be exactly what tools/export.py renders."""

import ast

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


# ---- no chapter notebook uses a name that only a later notebook defines ---------------------


def defined_names(source):
    """The top-level names an export cell defines (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


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


def later_names_used(folder):
    """{notebook: names it uses that only a later notebook's export cells define}."""
    notebooks = sorted(folder.glob("*.ipynb"))
    defined = [set().union(*map(defined_names, export.export_cells(p))) for p in notebooks]
    found = {}
    for i, path in enumerate(notebooks):
        later = set().union(*defined[i + 1 :]) - set().union(*defined[: i + 1])
        if names_used(path) & later:
            found[path.name] = sorted(names_used(path) & later)
    return found


def test_no_chapter_notebook_uses_a_name_defined_later():
    assert later_names_used(export.NOTEBOOKS) == {}
