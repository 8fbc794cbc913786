"""The chapter notebooks keep engineering off the learner's path: it lives in gpt_engineering.py
and the appendix, and a chapter notebook uses it in one line at most."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = sorted((ROOT / "notebooks").glob("0[1-7]_*.ipynb"))  # 01-07, not 04a

# What the appendix explains and a chapter notebook must not define or use in a code cell.
ENGINEERING = {
    "a hash": r"\bhashlib\b|\bsha256\b",
    "a byte map": r"\bbyte_of\b|\bisprintable\(",
    "a guard helper": r"^\s*def check_\w+\(",
    "a weak reference": r"\bweakref\b",
    "a hook": r"register_\w*hook\(",
    "a random-state probe": r"\b(get|set)_rng_state\(",
}


def code_cells(path):
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


@pytest.mark.parametrize("path", CHAPTER, ids=lambda path: path.name)
def test_no_engineering_in_a_chapter_notebooks_code(path):
    found = [f"{cell.id}: {what}" for cell in code_cells(path)
             for what, pattern in ENGINEERING.items() if re.search(pattern, cell.source, re.M)]
    assert not found, f"{path.name} defines what the appendix explains: {found}"


def test_engineering_is_one_import_line_where_it_is_used():
    uses = [line for path in CHAPTER for cell in code_cells(path)
            for line in cell.source.splitlines() if "gpt_engineering" in line]
    assert uses and all(line.startswith("from gpt_engineering import ") for line in uses)


def test_only_printouts_of_float_tensors_go_unchecked():
    """nbval compares every output but printouts of float32 tensors whose last digits are
    rounding noise (02's tiny means, a zero's sign; 01's logits, one of whose values lies within
    float32's noise of a rounding boundary): an unchecked cell may print nothing else."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in code_cells(path):
            if ("nbval-ignore-output" in cell.metadata.get("tags", [])
                    or "NBVAL_IGNORE_OUTPUT" in cell.source):
                text = "".join(output.get("text", "") for output in cell.outputs)
                assert all(output.output_type == "stream" for output in cell.outputs), cell.id
                assert re.search(r"tensor\(\[.*\d\.\d{4}", text, re.S), f"{path.name}: {cell.id}"


def unfolded_word_count(path):
    """How many words (\\w+) a notebook's markdown cells hold outside any folded <details> block."""
    cells = nbformat.read(path, as_version=4).cells
    text = "\n".join(re.sub(r"<details>.*?</details>", "", cell.source, flags=re.DOTALL)
                     for cell in cells if cell.cell_type == "markdown")
    return len(re.findall(r"\w+", text))


def test_the_path_is_short_and_the_readme_is_for_learners():
    """Notebooks 01-07 read in at most 7,000 words outside their folded notes and answers (the
    attention notebook aside); the README in at most 1,500."""
    assert sum(unfolded_word_count(path) for path in CHAPTER) <= 7000
    assert len(re.findall(r"\w+", (ROOT / "README.md").read_text(encoding="utf-8"))) <= 1500
