"""Language models without a network, the yardsticks for the trained GPTModel's held-out loss.

Each is fitted on the training ids alone and scored, like the network, by its mean cross-entropy
(in nats) on every target of a held-out part: the uniform guess over the vocabulary, unigram
frequencies, and Kneser-Ney bigrams and trigrams (interpolated, one absolute discount per model).

    fit = kneser_ney(train_ids, order=3, discount=0.9, vocab_size=len(vocab))
    held_out = cross_entropy(fit, test_ids)
"""

import collections
import math


def unigram(train_ids, vocab_size):
    """P(w) from the training counts, each count plus one (so no token has probability 0)."""
    counts = collections.Counter(train_ids)
    total = len(train_ids) + vocab_size
    return lambda context, w: (counts[w] + 1) / total


def kneser_ney(train_ids, order, discount, vocab_size):
    """Interpolated Kneser-Ney of `order` (2: bigram, 3: trigram) as P(w | context).

    The highest order counts each n-gram; every lower order counts, for each (n-1)-gram, how many
    different tokens precede it in the training text (its "continuation" count), so a token seen
    after many contexts gets more weight than one seen often after a single context. Each level
    takes `discount` from every seen count and hands that mass to the level below, down to the
    uniform guess 1 / vocab_size.
    """
    grams = [collections.Counter(zip(*(train_ids[i:] for i in range(n)))) for n in
             range(1, order + 1)]  # grams[n - 1]: the n-grams and their counts
    counts = [collections.Counter() for _ in range(order)]  # counts[k][(context, w)]
    counts[order - 1] = collections.Counter({(g[:-1], g[-1]): c for g, c in grams[-1].items()})
    for n in range(1, order):  # continuation counts: distinct tokens before each n-gram
        for g in grams[n]:
            counts[n - 1][g[1:-1], g[-1]] += 1
    totals = [collections.Counter() for _ in range(order)]  # per context: the sum of its counts
    types = [collections.Counter() for _ in range(order)]  # per context: how many w follow it
    for k in range(order):
        for (context, _), c in counts[k].items():
            totals[k][context] += c
            types[k][context] += 1

    def prob(context, w, k=order - 1):
        if k < 0:
            return 1 / vocab_size
        context = tuple(context[len(context) - k:]) if k else ()
        lower = prob(context, w, k - 1)
        total = totals[k][context]
        if not total:  # a context never seen: the level below alone
            return lower
        seen = max(counts[k][context, w] - discount, 0)
        return (seen + discount * types[k][context] * lower) / total

    return prob


def cross_entropy(model, ids, order=3):
    """Mean -ln P(target | the up to order - 1 ids before it) over ids[1:], in nats."""
    ids = list(ids)
    nll = [-math.log(model(ids[max(0, t - order + 1):t], ids[t])) for t in range(1, len(ids))]
    return sum(nll) / len(nll)
