"""The verdict words of bonus 08 and 09: paired differences (variant minus baseline, held-out
loss, one per seed) -> mean, 95% interval (Student's t) and exact sign test -> one word.

- "worse" / "better": every setting's interval lies above zero / below zero;
- "reverses with the learning rate": one interval lies above zero and another below;
- "unresolved": otherwise (some interval contains zero, none lies on the other side).

    verdict([summarize([0.12, 0.08, 0.15, 0.11, 0.09])])   # "worse": +0.110 [+0.076, +0.144]
"""

import math
from dataclasses import dataclass

# Student's t, two-sided 95%: t such that P(|T| <= t) = 0.95 with `df` degrees of freedom
T_95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
        25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042}


@dataclass(frozen=True)
class Summary:
    mean: float
    low: float  # the 95% confidence interval of the mean
    high: float
    n: int
    higher: int  # seeds on which the variant's loss is higher
    sign_p: float  # exact two-sided sign test of "higher on as many seeds as lower"


def sign_test_p(higher, n):
    """The probability, under a fair coin, of a split at least as uneven as `higher` of `n`."""
    tail = sum(math.comb(n, k) for k in range(min(higher, n - higher) + 1))
    return min(1.0, 2 * tail / 2**n)


def summarize(diffs):
    """Mean, 95% interval and sign test of paired differences (at least 2, at most 31)."""
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = T_95[n - 1] * sd / math.sqrt(n)
    higher = sum(d > 0 for d in diffs)
    return Summary(mean, mean - half, mean + half, n, higher, sign_test_p(higher, n))


def verdict(summaries):
    """The word for one comparison over its settings (see the module's docstring)."""
    above = [s.low > 0 for s in summaries]
    below = [s.high < 0 for s in summaries]
    if all(above):
        return "worse"
    if all(below):
        return "better"
    if any(above) and any(below):
        return "reverses with the learning rate"
    return "unresolved"


def describe(s):
    """One setting's line: mean [interval], seeds, sign count and p (no digits for a
    difference above 100 nats: some run diverged, and its loss is rounding noise)."""
    seeds = f"{s.n} seeds, higher on {s.higher} (sign test p {s.sign_p:.3f})"
    if abs(s.mean) > 100:
        return f"a run diverged (difference > 100), {seeds}"
    return f"{s.mean:+.3f} [{s.low:+.3f}, {s.high:+.3f}], {seeds}"


def paired(stored, variant, base, lr, steps, base_lr=None):
    """Variant at `lr` minus baseline at `base_lr` (by default `lr` too), seed by seed, over the
    seeds both have."""
    base_lr = lr if base_lr is None else base_lr
    seeds = sorted(s for a, s, rate, n in stored if (a, rate, n) == (variant, lr, steps)
                   and (base, s, base_lr, steps) in stored)
    return [stored[variant, s, lr, steps]["val_loss"] - stored[base, s, base_lr, steps]["val_loss"]
            for s in seeds]


def mean_val_loss(stored, arm, lr, steps):
    """The arm's held-out loss at this setting, averaged over its seeds."""
    losses = [r["val_loss"] for (a, _, rate, n), r in stored.items() if (a, rate, n) == (arm, lr, steps)]
    return sum(losses) / len(losses)


def rates_of(stored, arm, steps):
    """The learning rates this arm was trained at for this length, smallest first."""
    return sorted({lr for a, _, lr, n in stored if (a, n) == (arm, steps)})


def best_rate(stored, arm, steps):
    """The arm's rate with the lowest mean held-out loss at this length."""
    return min(rates_of(stored, arm, steps), key=lambda lr: mean_val_loss(stored, arm, lr, steps))


# The sweep's two phases (bonus/claims_tested/claims_sweep.py's docstring): one epoch at one rate,
# and 120 steps at four rates for every arm (and at the rates beyond, where an arm's best was at an end)
EPOCH, EPOCH_LR, EARLY, EARLY_LRS = 1189, 3e-3, 120, (1e-3, 3e-3, 1e-2, 3e-2)


def phases(stored, variant, base):
    """Summaries of one comparison: one epoch; 120 steps at each rate; 120 steps with each arm
    at its own best rate (and those two rates)."""
    epoch = summarize(paired(stored, variant, base, EPOCH_LR, EPOCH))
    early = [summarize(paired(stored, variant, base, lr, EARLY)) for lr in EARLY_LRS]
    rates = best_rate(stored, variant, EARLY), best_rate(stored, base, EARLY)
    best = summarize(paired(stored, variant, base, rates[0], EARLY, base_lr=rates[1]))
    return epoch, early, best, rates


def words(stored, variant, base):
    """A comparison's three words: one epoch; 120 steps over the four rates; each at its best."""
    epoch, early, best, _ = phases(stored, variant, base)
    return verdict([epoch]), verdict(early), verdict([best])


def report(stored, variant, base, title):
    """Print a comparison's summaries and verdicts, phase by phase."""
    epoch, early, best, rates = phases(stored, variant, base)
    print(f"{title}: {variant} minus {base}, held-out loss")
    print(f"  one epoch, lr {EPOCH_LR:.0e}:   {describe(epoch)} -> {verdict([epoch])}")
    for lr, summary in zip(EARLY_LRS, early):
        print(f"  {EARLY} steps, lr {lr:.0e}: {describe(summary)}")
    print(f"  {EARLY} steps, the four rates -> {verdict(early)}")
    print(f"  {EARLY} steps, each at its best rate ({rates[0]:.0e}, {rates[1]:.0e}): "
          f"{describe(best)} -> {verdict([best])}")
