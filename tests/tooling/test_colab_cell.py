"""The notebooks' first cell: CONTRIBUTING.md's setup cell everywhere, and in Colab it either
makes `import gpt` work or stops with one sentence saying what to upload where.

Colab is played by stand-ins inside a real kernel: a `google.colab` module whose
`drive.mount` only records its argument, and a `%pip` magic that records its command line
(a real `pip install -e` would reach the network and reinstall the course in the test's own
environment). The cell reads the Drive folder from LLM_CH4_FOLDER, here a temporary folder.
"""

import json
import shutil

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

from tools import setup_cell

COLAB_STAND_IN = """\
import os, sys, types
mounted, pip_lines = [], []
drive = types.SimpleNamespace(mount=mounted.append)
sys.modules["google.colab"] = types.SimpleNamespace(drive=drive)
get_ipython().register_magic_function(pip_lines.append, "line", "pip")
"""

# What the cell did, read back from the kernel.
REPORT = """\
import json, os, sys
print(json.dumps({"mounted": mounted, "pip": pip_lines, "cwd": os.getcwd(),
                  "gpt": getattr(sys.modules.get("gpt"), "__file__", None)}))
"""


def run(client, source):
    """Run `source` in the client's kernel; returns the executed cell."""
    cell = new_code_cell(source)
    client.nb.cells.append(cell)
    client.execute_cell(cell, len(client.nb.cells) - 1)
    return cell


def report(client):
    return json.loads(run(client, REPORT).outputs[0]["text"])


def test_every_notebook_starts_with_the_setup_cell():
    setup_cell.main([])  # prints each notebook that differs, exits with the command that fixes it


def test_write_replaces_only_the_first_code_cells_source(tmp_path):
    path = tmp_path / "demo.ipynb"
    notebook = new_notebook(cells=[new_code_cell("old setup"), new_code_cell("x = 1")])
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", text="kept\n")]
    nbformat.write(notebook, path)
    assert setup_cell.differing([path], "new setup") == [path]
    setup_cell.write(path, "new setup")
    cells = nbformat.read(path, as_version=4).cells
    assert [c.source for c in cells] == ["new setup", "x = 1"]
    assert cells[0].metadata == setup_cell.FOLDED and cells[1].metadata == {}  # folded away
    assert cells[0].outputs[0].text == "kept\n"
    assert setup_cell.differing([path], "new setup") == []


@pytest.mark.slow  # a notebook kernel of its own; .ci/run runs it
def test_in_colab_the_cell_stops_clearly_or_makes_gpt_importable(tmp_path):
    cell = setup_cell.canonical_cell()
    course = tmp_path / "llm-ch4"  # a Drive copy of the course, with what `import gpt` needs
    course.mkdir()
    for name in ("pyproject.toml", "gpt.py"):
        shutil.copy(setup_cell.ROOT / name, course)
    missing = tmp_path / "not-uploaded"

    client = NotebookClient(new_notebook(), kernel_name="python3", timeout=60,
                            shutdown_kernel="immediate",  # a graceful one waits for nothing here
                            resources={"metadata": {"path": str(tmp_path)}})  # starts in tmp_path
    with client.setup_kernel():
        run(client, COLAB_STAND_IN + f"os.environ['LLM_CH4_FOLDER'] = {str(missing)!r}")
        with pytest.raises(CellExecutionError) as stopped:  # an error stops "Run all" here
            run(client, cell)
        assert stopped.value.ename == "FileNotFoundError"
        assert stopped.value.evalue == (
            f"No course folder at {missing}: upload this repository's folder to your "
            "Google Drive as MyDrive/llm-ch4, then run this cell again."
        )
        outputs = client.nb.cells[-1].outputs
        assert [out["output_type"] for out in outputs] == ["error"]  # no pip or cd output
        nothing_done = {"mounted": ["/content/drive"], "pip": [], "cwd": str(tmp_path), "gpt": None}
        assert report(client) == nothing_done

        run(client, f"os.environ['LLM_CH4_FOLDER'] = {str(course)!r}")
        assert run(client, cell).outputs == []
        run(client, "import gpt")
        assert report(client) == {
            "mounted": ["/content/drive"] * 2,
            "pip": [f"install -q -e {course}"],
            "cwd": str(course),
            "gpt": str(course / "gpt.py"),  # the Drive copy, not the course installed here
        }
