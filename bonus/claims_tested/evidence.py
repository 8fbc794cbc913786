"""What bonus 08's training runs measured for one of the chapter's design claims, in three lines:
the chapter notebooks print it where they say that a component helps.

    measured("no layer norm")   # a key of claims_sweep.COMPARISONS
"""

from bonus.claims_tested import claims_sweep, verdicts


def measured(comparison):
    """Print the paired held-out difference (variant minus baseline) after one epoch with its 95%
    interval and word, then the words of the early phase (120 steps at four learning rates)."""
    stored, _ = claims_sweep.load_results()
    variant, base = claims_sweep.COMPARISONS[comparison]
    epoch, early, best, _ = verdicts.phases(stored, variant, base)
    print(f"{comparison}: held-out loss, minus the chapter model's (95% interval over paired seeds)")
    print(f"  after one epoch:  {verdicts.describe(epoch)} -> {verdicts.verdict([epoch])}")
    print(f"  after 120 steps:  {verdicts.verdict(early)} over four learning rates; "
          f"{verdicts.verdict([best])} with each model at its best rate")
