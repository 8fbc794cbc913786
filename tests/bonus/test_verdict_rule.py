"""bonus/claims_tested/verdicts.py: the interval, the sign test and the rule that turns them into words."""

import math

import pytest

from bonus.claims_tested import verdicts


def student_t_cdf(t, df, steps=2000):
    """P(T <= t) for Student's t with `df` degrees of freedom, by Simpson's rule on its density."""
    density = lambda x: (math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
                         * (1 + x * x / df) ** (-(df + 1) / 2))
    h = t / steps
    area = density(0) + density(t) + sum((4 if i % 2 else 2) * density(i * h) for i in range(1, steps))
    return 0.5 + area * h / 3


@pytest.mark.parametrize("df", sorted(verdicts.T_95))
def test_the_t_table_holds_95_percent(df):
    assert 2 * student_t_cdf(verdicts.T_95[df], df) - 1 == pytest.approx(0.95, abs=2e-4)


def test_sign_test_p_values():
    assert verdicts.sign_test_p(5, 5) == 0.0625  # "worse on 5 of 5" is not below 0.05
    assert verdicts.sign_test_p(0, 10) == pytest.approx(2 / 1024)
    assert verdicts.sign_test_p(9, 10) == pytest.approx(22 / 1024)
    assert verdicts.sign_test_p(5, 10) == 1.0


def test_summarize_by_hand():
    s = verdicts.summarize([1.0, 2.0, 3.0])  # mean 2, sd 1: 2 +- 4.303 / sqrt(3)
    assert (s.mean, s.n, s.higher) == (2.0, 3, 3)
    assert s.low == pytest.approx(2 - 4.303 / math.sqrt(3)) and s.high == pytest.approx(2 + 4.303 / math.sqrt(3))


@pytest.mark.parametrize("settings, word", [
    ([[0.1, 0.2, 0.15], [0.3, 0.25, 0.35]], "worse"),
    ([[-0.1, -0.2, -0.15]], "better"),
    ([[0.1, 0.2, 0.15], [-0.3, -0.25, -0.35]], "reverses with the learning rate"),
    ([[0.1, 0.2, 0.15], [0.3, -0.25, 0.35]], "unresolved"),  # one interval contains 0
    ([[0.2, 0.2, 0.2, -0.3]], "unresolved"),  # higher on 3 of 4, but the interval contains 0
])
def test_the_rule(settings, word):
    assert verdicts.verdict([verdicts.summarize(d) for d in settings]) == word


def test_a_diverged_run_prints_no_digits():
    line = verdicts.describe(verdicts.summarize([1e12, 0.1, 0.2, 0.3, 0.1]))
    assert line.startswith("a run diverged") and "higher on 5" in line


def test_each_arm_at_its_own_best_rate():
    """Rates an arm alone was trained at count for its best rate; the pairs are by seed."""
    loss = {("a", 1e-3): [5.0, 5.2], ("a", 1e-2): [4.0, 4.4], ("b", 1e-3): [4.5, 4.9], ("b", 3e-4): [4.6, 4.7]}
    stored = {(arm, seed, lr, 120): {"val_loss": v}
              for (arm, lr), values in loss.items() for seed, v in enumerate(values, 1)}
    assert verdicts.rates_of(stored, "b", 120) == [3e-4, 1e-3]
    assert verdicts.mean_val_loss(stored, "b", 3e-4, 120) == pytest.approx(4.65)
    assert (verdicts.best_rate(stored, "a", 120), verdicts.best_rate(stored, "b", 120)) == (1e-2, 3e-4)
    assert verdicts.paired(stored, "a", "b", 1e-2, 120, base_lr=3e-4) == pytest.approx([-0.6, -0.3])
    assert verdicts.paired(stored, "a", "b", 1e-3, 120) == pytest.approx([0.5, 0.3])
