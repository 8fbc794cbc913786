"""bonus/claims_tested/verdicts.py: the signed-rank test, Holm's correction and the rule that
turns them into words."""

import itertools

import pytest

from bonus.claims_tested import verdicts


def brute_force_p(diffs):
    """The two-sided signed-rank p by listing all 2**n sign choices (rank sums by hand)."""
    diffs = [d for d in diffs if d != 0]
    size = sorted(abs(d) for d in diffs)
    rank = {v: sum(i + 1 for i, w in enumerate(size) if w == v) / size.count(v) for v in size}
    observed = sum(rank[abs(d)] for d in diffs if d > 0)
    sums = [sum(rank[abs(d)] for d, s in zip(diffs, signs) if s)
            for signs in itertools.product((0, 1), repeat=len(diffs))]
    low, high = sum(s <= observed for s in sums), sum(s >= observed for s in sums)
    return min(1.0, 2 * min(low, high) / len(sums))


@pytest.mark.parametrize("diffs", [
    [0.1] * 10, [0.3, -0.1, 0.2, 0.25, 0.4, 0.15, 0.05, 0.35, -0.02, 0.12],
    [0.1, 0.1, -0.1, 0.2, 0.2, -0.3],  # ties share their ranks
    [0.5, -0.4, 0.3, -0.2, 0.1], [1e-3, 0.0, 2e-3, -1e-3, 4e-3, 5e-3, -6e-3]])
def test_the_exact_p_is_the_brute_force_one(diffs):
    assert verdicts.wilcoxon_p(diffs) == pytest.approx(brute_force_p(diffs))


def test_known_p_values():
    assert verdicts.wilcoxon_p([0.1] * 5) == pytest.approx(2 / 32)  # 5 of 5: never below 0.05
    assert verdicts.wilcoxon_p([-0.1 * k for k in range(1, 11)]) == pytest.approx(2 / 1024)
    assert verdicts.wilcoxon_p([1, -1]) == 1.0


def test_a_stall_is_evidence_not_noise():
    """Three runs that stall far above the rest leave the p where it was: one rank each. (A
    t-interval on the same numbers would widen until it crossed zero.)"""
    steady = [0.02, 0.03, 0.01, 0.04, 0.02, 0.05, 0.03, 0.06, 0.01, 0.04]
    stalls = steady[:7] + [0.78, 0.40, 0.32]
    assert verdicts.wilcoxon_p(stalls) == verdicts.wilcoxon_p(steady) == pytest.approx(2 / 1024)


def test_a_stalled_run_is_one_still_on_the_plateau_halfway():
    """Curves shaped as the sweep stores them (select runs of post-LN at 3e-3, seeds 1 and 2):
    the second sits at the unigram's 6.46 until past the middle evaluation, step 528."""
    steps = [176, 352, 528, 704, 880, 1056, 1057]
    learning = [6.2113, 5.9132, 5.7049, 5.492, 5.2575, 5.1889, 5.1947]
    slow = [6.5189, 6.5209, 6.5239, 6.4184, 6.1559, 6.0918, 6.0759]
    stored = {("post_ln", seed, 3e-3): {"steps": 1057, "curve": {"step": steps, "val_loss": curve}}
              for seed, curve in ((1, learning), (2, slow))}
    assert verdicts.stalled(stored, "post_ln", 3e-3, [1, 2], plateau=6.46) == 1
    assert verdicts.stalled(stored, "post_ln", 3e-3, [1], plateau=6.46) == 0


def test_holm_by_hand():
    # sorted: 0.01 x 4 = 0.04; 0.02 x 3 = 0.06; 0.03 x 2 = 0.06 (never below the step before); 0.5
    assert verdicts.holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])


def test_the_words():
    family = {"worse": [0.1 * k for k in range(1, 11)], "better": [-0.01 * k for k in range(1, 11)],
              "unresolved": [0.1, -0.2, 0.3, -0.1, 0.2, -0.3, 0.1, 0.05, -0.05, 0.02]}
    judged = verdicts.judge(family)
    assert {name: s.word for name, s in judged.items()} == {k: k for k in family}
    assert judged["worse"].p_holm == pytest.approx(3 * 2 / 1024)


def test_many_comparisons_cost_a_word():
    """9 of 10 higher, the lower one second smallest: p 0.0059, a word alone, none among 12."""
    nine = [0.1] + [0.1 * k for k in range(3, 11)] + [-0.2]
    assert verdicts.wilcoxon_p(nine) == pytest.approx(6 / 1024)
    assert verdicts.judge({"a": nine})["a"].word == "worse"
    twelve = {f"c{i}": nine for i in range(12)}
    assert {s.word for s in verdicts.judge(twelve).values()} == {"unresolved"}


def test_reliable_only_where_both_seed_sets_agree():
    assert verdicts.reliable("worse", "worse") == "worse, reliable"
    assert verdicts.reliable("worse", "unresolved") == "worse, not confirmed"
    assert verdicts.reliable("worse", "better") == "worse, not confirmed"
    assert verdicts.reliable("unresolved", "better") == "unresolved"  # confirmation decides nothing
    assert verdicts.reliable("unresolved", "unresolved") == "unresolved"


def test_a_diverged_run_prints_no_digits_for_the_mean():
    line = verdicts.describe(verdicts.judge({"x": [1e12] + [0.1] * 9})["x"])
    assert line.startswith("a run diverged") and "higher on 10 of 10" in line
