"""What bonus 08's sweep measured, read from its results files: each arm's rate, chosen on
validation; the words of the discovery seeds and their confirmation on the others.

    measured("no layer norm")   # the chapter notebooks print this where they say a part helps
    report("no layer norm")     # bonus 08's fuller lines
"""

import functools
import json
from typing import NamedTuple

from bonus.claims_tested import claims_sweep, verdicts
from trained import ngrams

DISCOVERY = tuple(range(11, 21))  # the seeds the words come from
CONFIRMATION = tuple(range(21, 31))  # the seeds that confirm them, used for nothing else
SEED_SETS = {"discovery": DISCOVERY, "confirmation": CONFIRMATION}
SETTINGS = {"shared": "at the shared rate", "own": "each at its own best rate"}


class Evidence(NamedTuple):
    stored: dict  # (arm, seed, lr) -> run, the test stage's runs
    chosen: dict  # arm -> its own best rate, from the select stage (validation)
    yardsticks: dict  # test loss without a network: uniform, unigram, bigram, trigram
    judged: dict  # seed set -> setting -> claim -> verdicts.Summary


@functools.cache
def evidence():
    stored, _ = claims_sweep.load_results([claims_sweep.DISCOVER, claims_sweep.CONFIRM])
    chosen = claims_sweep.best_rates(claims_sweep.load_results([claims_sweep.SELECT])[0])
    results = json.loads((claims_sweep.RESULTS / claims_sweep.DISCOVER).read_text())
    judged = {name: verdicts.families(stored, claims_sweep.COMPARISONS, chosen, seeds,
                                      claims_sweep.SHARED_RATE)
              for name, seeds in SEED_SETS.items()}
    return Evidence(stored, chosen, results["yardsticks"], judged)


def rates(claim):
    """(variant's rate, baseline's rate) for each setting."""
    variant, base = claims_sweep.COMPARISONS[claim]
    chosen = evidence().chosen
    return {"shared": (claims_sweep.SHARED_RATE,) * 2, "own": (chosen[variant], chosen[base])}


def word(claim, setting):
    """The discovery seeds' word, and whether the confirmation seeds give it too."""
    judged = evidence().judged
    return verdicts.reliable(judged["discovery"][setting][claim].word,
                             judged["confirmation"][setting][claim].word)


@functools.cache
def plateau():
    """The unigram's validation loss: where a run sits while it has learned only how often each
    token occurs (fitted on the training part, as the yardsticks are)."""
    vocab, parts = claims_sweep.load_data()
    fitted = ngrams.unigram(parts["train"].tolist(), len(vocab))
    return ngrams.cross_entropy(fitted, parts["validation"].tolist(), order=1)


def stalls(claim, setting, seeds=DISCOVERY):
    """(variant's, baseline's) runs still on the unigram's plateau halfway through training."""
    e = evidence()
    arms = claims_sweep.COMPARISONS[claim]
    return tuple(verdicts.stalled(e.stored, arm, lr, seeds, plateau())
                 for arm, lr in zip(arms, rates(claim)[setting]))


def report(claim):
    """For each setting: its rates and word, each seed set's line, and the stalls."""
    variant, base = claims_sweep.COMPARISONS[claim]
    print(f"{claim}: {variant} minus {base}, test loss after one epoch")
    for setting, label in SETTINGS.items():
        v_rate, b_rate = rates(claim)[setting]
        print(f"  {label} ({v_rate:.0e} | {b_rate:.0e}): {word(claim, setting)}")
        for name in SEED_SETS:
            print(f"    {name:12s} {verdicts.describe(evidence().judged[name][setting][claim])}")
        v_stalled, b_stalled = stalls(claim, setting)
        print(f"    stalled, discovery seeds: {variant} {v_stalled} of 10, {base} {b_stalled} of 10")


def measured(claim):
    """Three lines for a chapter notebook: the claim, then its word at each setting with the
    median difference on the discovery seeds."""
    variant, base = claims_sweep.COMPARISONS[claim]
    print(f"{claim}: {variant} minus {base}, test loss after one epoch, seeds 11-20 "
          "(checked on 21-30)")
    for setting, label in SETTINGS.items():
        s = evidence().judged["discovery"][setting][claim]
        v_rate, b_rate = rates(claim)[setting]
        print(f"  {label} ({v_rate:.0e} | {b_rate:.0e}): median {s.median:+.3f}, higher on "
              f"{s.higher} of {s.n} -> {word(claim, setting)}")
