"""No notebook gives away an exercise's answer before the box that poses it, and the READMEs
give away none.

The notebooks are read in order (01 to 07, the appendix last), prose, code and outputs alike. A
box is a markdown cell that starts with "> **Exercise 4.N"; everything before 4.N's box must be
free of 4.N's answers, written in any of the ways a notebook or a README would print them: exact,
rounded, in words ("1,558 million", "1.56 billion", "1558M"), in Chinese (15.58 亿).
"""

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))

# The exercises' answers (the solutions notebooks print them): 4.1's per-block counts (and their
# 12-block totals, which give them away by a division), 4.2's totals and tied counts, with and
# without the query, key and value biases of OpenAI's released weights (whose tied counts give
# the names 355M, 774M and 1558M), and their float32 MB.
COUNTS = {
    "4.1": [4_722_432, 2_360_064, 56_669_184, 28_320_768],
    "4.2": [406_212_608, 354_749_440, 838_220_800, 773_891_840, 1_637_792_000, 1_557_380_800,
            354_823_168, 774_030_080, 1_557_611_200],
}
MEGABYTES = {"4.2": [1549.58, 3197.56, 6247.68]}
# 4.1's counts as shares of GPT-2 small's 163,009,536 parameters (attention, feed-forward): a
# table of shares answers "how do the two compare" as surely as the counts do.
SHARES = {"4.1": [28_320_768 / 163_009_536, 56_669_184 / 163_009_536]}


def spellings(exercise):
    """Every way a notebook might write the exercise's answers."""
    for n in COUNTS.get(exercise, []):
        yield from (str(n), f"{n:,}", f"{n:_}", f"{n / 1e6:.2f}M", f"{n / 1e6:.1f} million")
        if n >= 1e8:  # a model's size, rounded to whole millions, billions or 亿 (1e8)
            millions = round(n / 1e6)
            yield from (f"{millions:,} million", f"{millions} million", f"{millions}M",
                        f"{millions} M", f"{n / 1e9:.2f} billion", f"{n / 1e9:.2f}B",
                        f"{n / 1e8:.2f} 亿", f"{n / 1e8:.2f}亿", f"{n / 1e8:.1f}亿")
    for share in SHARES.get(exercise, []):
        yield from (f"{share:.1%}", f"{share:.2%}", f"{100 * share:.1f} %", f"{100 * share:.2f} %")
    for mb in MEGABYTES.get(exercise, []):
        yield from (f"{mb:.2f}", f"{mb:,.2f}", f"{mb:,.0f} MB", f"{mb:.0f} MB", f"{mb / 1024:.2f} GB")


def cell_text(cell):
    text = cell.source
    for output in cell.get("outputs", []):
        text += output.get("text", "") + output.get("data", {}).get("text/plain", "")
    return text


def text_before_box(exercise):
    """(all prose, code and outputs before the box, the notebook holding the box)."""
    seen = []
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.startswith(f"> **Exercise {exercise}"):
                return "\n".join(seen), path.name
            seen.append(cell_text(cell))
    return "\n".join(seen), None


def leaks(exercise, text):
    return [answer for answer in spellings(exercise) if answer in text]


def outside_the_answer_section(path):
    """A notebook's text, leaving out its one section headed "## After exercises ..."."""
    kept, inside = [], False
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            inside = cell.source.startswith("## After exercises")
        if not inside:
            kept.append(cell_text(cell))
    return "\n".join(kept)


@pytest.mark.parametrize("exercise, posed_in", [("4.1", "06_gpt_model.ipynb"),
                                               ("4.2", "06_gpt_model.ipynb"),
                                               ("4.3", "07_generating_text.ipynb")])
def test_each_exercise_is_posed_where_the_book_poses_it_and_answered_only_after(exercise, posed_in):
    """A learner reads the posing notebook to the end before opening the exercise notebooks: its
    answers (06's 'Predict, then run' table of shares included) sit only under the heading that
    warns them."""
    text, where = text_before_box(exercise)
    assert where == posed_in
    assert not leaks(exercise, text), f"exercise {exercise}'s answer appears before its box"
    text = outside_the_answer_section(NOTEBOOKS[0].parent / posed_in)
    assert not leaks(exercise, text), f"{posed_in} answers {exercise} outside 'After exercises'"


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readmes_give_no_exercise_answer(readme):
    text = (NOTEBOOKS[0].parents[1] / readme).read_text(encoding="utf-8")
    assert [answer for exercise in COUNTS for answer in leaks(exercise, text)] == []


def test_the_rounded_and_worded_forms_are_caught():
    assert leaks("4.2", "GPT-2 XL's released weights have 1,558 million parameters") == ["1,558 million"]
    assert "1.56 billion" in leaks("4.2", "about 1.56 billion with tying")
    assert leaks("4.2", "the 345, 762 and 1,542 million the book names") == []
