"""Build gpt.py from the notebooks' export cells (the nbdev `#| export` convention).

    python tools/export.py          # rewrite gpt.py from notebooks/*.ipynb
    python tools/export.py --check  # exit 1 if gpt.py differs from what the notebooks say

A code cell is exported when its first line is exactly `#| export`. Cells are taken
in notebook order (notebooks sorted by file name), the marker line dropped. Each notebook
imports what its own cells need; the module gets every import once, at the top, standard
library first.
"""

import argparse
import ast
import difflib
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
MODULE = ROOT / "gpt.py"
MARKER = "#| export"

HEADER = '''\
"""GPT-2 from chapter 4 of "Build a Large Language Model (From Scratch)", consolidated.

GENERATED from the `#| export` cells of notebooks/*.ipynb by tools/export.py - do not edit
by hand: change the notebook, then run `python tools/export.py`. Run `python gpt.py --help`
for the command line.
"""
'''

FOOTER = '''
if __name__ == "__main__":
    main()
'''


def export_cells(notebook_path):
    """Source of each export cell in one notebook, marker removed."""
    notebook = nbformat.read(notebook_path, as_version=4)
    sources = []
    for cell in notebook.cells:
        lines = cell.source.splitlines()
        if cell.cell_type == "code" and lines and lines[0].strip() == MARKER:
            sources.append("\n".join(lines[1:]).strip("\n"))
    return sources


def split_imports(source):
    """(top-level import statements, the rest of the source)."""
    lines = source.splitlines()
    imports = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            span = range(node.lineno - 1, node.end_lineno)
            imports.append("\n".join(lines[i] for i in span))
            for i in span:
                lines[i] = None
    return imports, "\n".join(line for line in lines if line is not None).strip("\n")


def import_block(imports):
    """Unique imports in two sorted groups: the standard library, then the rest."""
    def group(stmt):
        return stmt.split()[1].split(".")[0] in sys.stdlib_module_names

    def key(stmt):  # `import x` before `from x import y`, then by module name
        return stmt.startswith("from"), stmt.split()[1]

    unique = set(imports)
    stdlib = sorted((s for s in unique if group(s)), key=key)
    others = sorted((s for s in unique if not group(s)), key=key)
    return "\n\n".join("\n".join(part) for part in (stdlib, others) if part)


def render_module(notebook_dir=NOTEBOOKS):
    """The text gpt.py must have, given the notebooks in `notebook_dir`."""
    imports, blocks = [], []
    for path in sorted(Path(notebook_dir).glob("*.ipynb")):
        bodies = []
        for cell in export_cells(path):
            cell_imports, body = split_imports(cell)
            imports += cell_imports
            if body:
                bodies.append(body)
        if bodies:
            blocks.append(f"# ---- from notebooks/{path.name} ----\n" + "\n\n\n".join(bodies))
    top = import_block(imports) + "\n\n" if imports else ""  # one blank line, then a comment
    return HEADER + "\n" + top + "\n\n\n".join(blocks) + "\n\n" + FOOTER


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args()
    expected = render_module()
    if not args.check:
        MODULE.write_text(expected)
        print(f"wrote {MODULE.name} ({expected.count(chr(10))} lines)")
        return
    actual = MODULE.read_text() if MODULE.exists() else ""
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "from notebooks", "gpt.py", lineterm=""
        )
        sys.exit("gpt.py is out of sync with the notebooks:\n" + "\n".join(diff))
    print("gpt.py matches the notebooks' export cells")


if __name__ == "__main__":
    main()
