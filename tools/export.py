"""Build gpt.py from the notebooks' export cells (the nbdev `#| export` convention).

    python tools/export.py          # rewrite gpt.py from notebooks/*.ipynb
    python tools/export.py --check  # exit 1 if gpt.py differs from what the notebooks say

A code cell is exported when its first line is exactly `#| export`. Cells are taken
in notebook order (notebooks sorted by file name), the marker line dropped. Each notebook
imports what its own cells need; the module gets every import once, at the top, sorted by ruff
(requirements-dev.txt) as the lint wants them.
"""

import argparse
import ast
import difflib
import subprocess
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

# The command line is the plain module gpt_cli.py: `python gpt.py` runs its main().
FOOTER = '''
if __name__ == "__main__":
    import gpt_cli

    gpt_cli.main()
'''


def export_cells(notebook_path):
    """Source of each export cell in one notebook, marker removed."""
    cells = nbformat.read(notebook_path, as_version=4).cells
    return [cell.source.partition("\n")[2].strip("\n") for cell in cells
            if cell.cell_type == "code" and cell.source.partition("\n")[0].strip() == MARKER]


def split_imports(source):
    """(top-level import statements, the rest of the source); comments on imports dropped."""
    imports = [node for node in ast.parse(source).body
               if isinstance(node, (ast.Import, ast.ImportFrom))]
    dropped = {i for node in imports for i in range(node.lineno - 1, node.end_lineno)}
    rest = [line for i, line in enumerate(source.splitlines()) if i not in dropped]
    return imports, "\n".join(rest).strip("\n")


def import_block(imports):
    """The imports once each, merged, grouped and sorted as the lint wants: by ruff's isort rules,
    with pyproject.toml's list of the course's own modules."""
    ruff = [sys.executable, "-m", "ruff", "check", "--select", "I", "--fix", "--quiet",
            "--stdin-filename", MODULE.name, "-"]
    sorted_imports = subprocess.run(ruff, input="\n".join(map(ast.unparse, imports)), cwd=ROOT,
                                    capture_output=True, text=True, check=True).stdout
    return sorted_imports.strip("\n")


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args(argv)
    expected = render_module()
    if not args.check:
        MODULE.write_text(expected)
        print(f"wrote {MODULE.name} ({expected.count(chr(10))} lines)")
    elif (actual := MODULE.read_text()) != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                    "from notebooks", "gpt.py", lineterm="")
        sys.exit("gpt.py is out of sync with the notebooks: edit the notebook's `#| export` cell "
                 "(never gpt.py by hand), then run `python tools/export.py`\n" + "\n".join(diff))
    else:
        print("gpt.py matches the notebooks' export cells")


if __name__ == "__main__":
    main()
