"""The words of bonus 08 and 09, and the rule that gives them.

For one comparison at one setting, each seed gives a paired difference: the variant's test loss
minus the baseline's. The rule turns those differences into one word:

1. An exact Wilcoxon signed-rank test, two-sided: the differences are ranked by size, and the test
   asks how often a fair coin, choosing each one's sign, gives the positive ranks a sum at least as
   extreme. A run that stalls is one large difference: one rank, the largest, however large, so it
   counts as evidence for its side and cannot widen anything (a t-interval would widen).
2. Holm's correction over a family: the comparisons at one setting (every comparison at the
   shared rate is one family, every comparison with each arm at its own best rate another).
3. **worse** (the variant's loss is higher) or **better** where the corrected p is below 0.05,
   on the side the ranks lean to; **unresolved** otherwise.
4. The words come from the discovery seeds; the confirmation seeds, used for nothing else, give
   words by the same rule. A word is **reliable** where both give it.

With n seeds the smallest possible p is 2 / 2**n: ten seeds all on one side give 0.002, which
Holm's correction over twelve comparisons still accepts (0.05 / 12 = 0.004); five seeds cannot
give a word at all.

    summarize([0.12, 0.08, 0.15, 0.11, 0.09, 0.10, 0.07, 0.13, 0.14, 0.06])   # p 0.002
"""

import math
from dataclasses import dataclass, replace

ALPHA = 0.05


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    median: float
    higher: int  # seeds on which the variant's loss is higher
    p: float  # exact two-sided Wilcoxon signed-rank test
    p_holm: float = math.nan  # p after Holm's correction over its family
    word: str = ""


def _ranks(values):
    """Ranks 1..n of `values` (ties share the mean of their ranks), doubled to stay integers."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    doubled, i = [0] * len(values), 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            doubled[order[k]] = i + j + 2  # 2 x the mean of ranks i+1 .. j+1
        i = j + 1
    return doubled


def _signed_ranks(diffs):
    """The doubled ranks of the non-zero differences' sizes, each with its difference's sign."""
    diffs = [d for d in diffs if d != 0]  # a zero difference leans neither way
    return [(r, d > 0) for r, d in zip(_ranks([abs(d) for d in diffs]), diffs)]


def wilcoxon_p(diffs):
    """Exact two-sided p of the signed-rank statistic (zero differences are dropped)."""
    signed = _signed_ranks(diffs)
    if not signed:
        return 1.0
    ranks = [r for r, _ in signed]
    observed = sum(r for r, positive in signed if positive)
    counts = {0: 1}  # how many of the 2**n sign choices give each positive rank sum
    for r in ranks:
        grown = dict(counts)
        for total, c in counts.items():
            grown[total + r] = grown.get(total + r, 0) + c
        counts = grown
    low = sum(c for total, c in counts.items() if total <= observed)
    high = sum(c for total, c in counts.items() if total >= observed)
    return min(1.0, 2 * min(low, high) / 2 ** len(signed))


def holm(pvalues):
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * len(pvalues), 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - step) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def summarize(diffs):
    n, ordered = len(diffs), sorted(diffs)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return Summary(n, sum(diffs) / n, median, sum(d > 0 for d in diffs), wilcoxon_p(diffs))


def _leans_higher(diffs):
    """Whether the positive differences' rank sum is the larger, ranked as the test ranks them."""
    signed = _signed_ranks(diffs)
    return sum(r for r, positive in signed if positive) > sum(r for r, positive in signed if not positive)


def judge(family):
    """{name: diffs} of one family -> {name: Summary with its corrected p and its word}."""
    names = list(family)
    summaries = [summarize(family[name]) for name in names]
    judged = {}
    for name, s, p in zip(names, summaries, holm([s.p for s in summaries])):
        word = "unresolved"
        if p < ALPHA:
            word = "worse" if _leans_higher(family[name]) else "better"
        judged[name] = replace(s, p_holm=p, word=word)
    return judged


def reliable(discovered, confirmed):
    """The discovery seeds' word, with "reliable" where the confirmation seeds give it too."""
    if discovered == "unresolved":
        return discovered
    return f"{discovered}, " + ("reliable" if confirmed == discovered else "not confirmed")


def describe(s):
    """One line: the differences' mean and median, their signs, p (and Holm's) and the word."""
    if abs(s.mean) > 100:  # some run diverged: its loss is rounding noise
        centre = f"a run diverged, median {s.median:+.3f}"
    else:
        centre = f"mean {s.mean:+.3f}, median {s.median:+.3f}"
    return f"{centre}, higher on {s.higher:2d} of {s.n}, p {s.p:.4f} (Holm {s.p_holm:.3f}) -> {s.word}"


def paired(stored, variant, base, lr, base_lr, seeds):
    """Variant at `lr` minus baseline at `base_lr`, test loss, seed by seed."""
    return [stored[variant, s, lr]["test_loss"] - stored[base, s, base_lr]["test_loss"]
            for s in seeds]


def families(stored, comparisons, chosen, seeds, shared_rate):
    """The two families, judged: {"shared": {claim: Summary}, "own": {claim: Summary}}, the
    second with each arm at its own rate in `chosen` (from validation)."""
    settings = {"shared": lambda v, b: (shared_rate, shared_rate),
                "own": lambda v, b: (chosen[v], chosen[b])}
    return {name: judge({claim: paired(stored, v, b, *rates(v, b), seeds)
                         for claim, (v, b) in comparisons.items()})
            for name, rates in settings.items()}


def stalled(stored, arm, lr, seeds, plateau):
    """How many of the arm's runs started slowly: halfway through training, their validation loss
    (the curve's fixed batches) still above `plateau`, the unigram's validation loss, so they had
    learned no more than how often each token occurs."""
    def halfway(run):
        steps, losses = run["curve"]["step"], run["curve"]["val_loss"]
        middle = min(range(len(steps)), key=lambda i: abs(steps[i] - run["steps"] / 2))
        return losses[middle]
    return sum(halfway(stored[arm, s, lr]) > plateau for s in seeds)
