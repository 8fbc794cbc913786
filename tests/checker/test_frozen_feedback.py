"""Every learner-style case of the checker's tests, with the feedback it gets, frozen.

frozen_feedback.json stores, for each case of tests/checker/learner.py (the component checker)
and of tests/checker/test_checks.py (exercises 4.1-4.3), whether it passes, its codes and its
English text. A change to the checker that changes any feedback fails here until the file is
rewritten, so the diff of frozen_feedback.json shows each changed feedback for review:

    python -m tests.checker.test_frozen_feedback     # rewrite it from the checker as it is

The Chinese feedback is not frozen, so that a translator's change to a message needs no rewrite
here: each case must give, in Chinese, the same verdict and codes, every line in Chinese (or
marked 〔待译〕 where a message waits for its translation).
"""

import functools
import json
import re
from pathlib import Path

import pytest
import torch

import checker
from checker import exercises, review_component, review_models
from tests.checker import learner, test_checks

STORED = Path(__file__).with_name("frozen_feedback.json")
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _exercise_cases():
    tables = [("4.1", exercises.review_4_1, test_checks.CASES_4_1, lambda args: args),
              ("4.2", exercises.review_4_2, test_checks.CASES_4_2, lambda make: make()),
              ("4.3", exercises.review_4_3, test_checks.CASES_4_3, lambda make: (make(),))]
    return {f"exercise {number} {name}": (lambda r=review, a=arguments, x=made: r(*a(x)))
            for number, review, cases, arguments in tables for name, made, _ in cases}


CASES = {
    **{f"component {name}": (lambda y=yours, r=reference: review_component(y, r))
       for name, yours, reference in learner.CASES},
    **{f"models {name}": (lambda m=make: review_models(*m())) for name, make in learner.MODEL_CASES},
    **_exercise_cases(),
}


def feedback_of(case, language="en"):
    """{passed, codes, text}: the case's feedback, the text as its lines."""
    try:
        checker.set_language(language)
        feedback = CASES[case]()
    finally:
        checker.set_language("en")
    return {"passed": feedback.passed, "codes": " ".join(feedback.codes),
            language: feedback.text.split("\n")}


@functools.cache
def stored():
    return json.loads(STORED.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_the_feedback_is_the_stored_one(case):
    assert feedback_of(case) == stored().get(case), "python -m tests.checker.test_frozen_feedback rewrites it"


@pytest.mark.parametrize("case", CASES)
def test_the_chinese_feedback_gives_the_same_verdict_in_chinese(case):
    zh = feedback_of(case, "zh")
    assert (zh["passed"], zh["codes"]) == (stored()[case]["passed"], stored()[case]["codes"])
    assert all(CHINESE.search(line) for line in zh["zh"] if line.strip()), zh["zh"]


def test_every_stored_feedback_has_its_case():
    assert list(stored()) == list(CASES)


if __name__ == "__main__":
    torch.set_num_threads(1)  # as the tests run (conftest.py)
    text = json.dumps({case: feedback_of(case) for case in CASES}, ensure_ascii=False, indent=1)
    STORED.write_text(text + "\n", encoding="utf-8")
    print(f"the feedback on {len(CASES)} cases written to {STORED}")
