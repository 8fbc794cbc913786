"""Gradients and training mode, checked once the outputs in eval mode agree."""

import collections
import math

import torch
import torch.nn as nn

from checker.feedback import names, probe, problem, say
from checker.locating import trace
from checker.planted import COMPONENTS, SEED
from checker.running import Dropouts, Raised, dropout_rates, raised, run, same, seeded, tolerance


def _gradients_of(module, params, args):
    """([the input's gradient] + [each parameter's] after one backward pass of a fixed loss, all
    None when no tensor comes out or no gradient reaches it; and what was raised on the way, as
    (code, Raised), or None)."""
    saved, no_gradients = [p.grad for p in params], [None] * (len(params) + 1)
    x = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in args]
    try:
        out = run(module, x, grad=True)
        if isinstance(out, Raised):  # forward itself fails once gradients are recorded
            return no_gradients, ("raised_with_grad", out)
        if not out.requires_grad:  # torch.no_grad() or .detach(): autograd would raise here
            return no_gradients, None
        g = torch.Generator().manual_seed(SEED)
        try:
            (out * torch.randn(out.shape, generator=g)).sum().backward()
        except RuntimeError as err:  # autograd cannot go back through what forward did
            return no_gradients, ("backward_raised", raised(err))
        return [x[0].grad] + [p.grad for p in params], None
    except Exception:  # no tensor
        return no_gradients, None
    finally:
        for p, s in zip(params, saved):
            p.grad = s


def gradients(reference, yours, pairs, args):
    """Findings for the parameters (and the input) whose gradient, after one backward pass of
    the same loss, is missing or differs from the chapter's: .data, .detach(), torch.no_grad();
    or the error raised on the way, with the learner's line."""
    # Parameters only: not the rows of a fused projection, nor a buffer (already named)
    pairs = [pair for pair in pairs if isinstance(pair.yours, nn.Parameter)]
    book = [say("the_input")] + [pair.book_name for pair in pairs]
    yours, error = _gradients_of(yours, [pair.yours for pair in pairs], args)
    chapter, _ = _gradients_of(reference, [pair.reference for pair in pairs], args)
    if error is not None:
        code, err = error
        return [problem(code, error=err.error)] + ([problem("your_line", **err.at)] if err.at else [])
    none = [n for n, y, r in zip(book, yours, chapter) if y is None and r is not None]
    differ = [n for n, y, r in zip(book, yours, chapter) if y is not None and r is not None
              and not (y - r).abs().max() <= 1e-3 * r.abs().max() + 1e-6]  # NaN: differs
    return [problem(code, names=names(found)) for code, found in
            (("no_gradient", none), ("gradient_differs", differ)) if found]


def _same_drops(reference, yours, inputs):
    """Whether yours drops the same values as the chapter's at the same rates, however it
    splits them into calls (a loop over heads): each dropout keeps the values above a threshold
    taken from the chapter's own dropout inputs, whatever the order."""
    seen = {}

    def record(x, p, training):
        seen.setdefault(p if training else 0, []).append(x.detach().flatten())
        return x

    def drop(x, p, training):
        if not (training and p):
            return x
        return x * (x > cut.get(p, math.inf)) / (1 - p)

    with Dropouts(record):
        for args in inputs:
            run(reference, args)
    # The threshold is the median of the distinct values the chapter's dropout sees: about half
    # are kept, whatever the order or grouping of the calls, and a tie cannot straddle it.
    values = {p: torch.cat(v).double().unique() for p, v in seen.items() if p}
    cut = {p: (v[len(v) // 2 - 1: len(v) // 2 + 1].mean().item()) for p, v in values.items()}
    with Dropouts(drop):
        return all(same(run(yours, a), run(reference, a), tolerance(a)) for a in inputs)


def _dropout_calls(model, args):
    """The names of the nn.Dropout modules with p > 0 that one training-mode call runs."""
    found = []
    for name, _, _ in trace(model, args):
        module = model.get_submodule(name)
        if isinstance(module, nn.Dropout) and module.p:
            found.append(name)
    return found


RUNS = 200  # training-mode runs averaged: the mean's noise is then well under 1%


def _own_draws(kind, yours, args, rates):
    """A finding for a dropout written by hand. Averaged over many runs, dropout's output is
    the eval-mode one (the kept values grow by 1 / (1 - p)); without that rescaling it shrinks
    to (1 - p) times it. Measured as the slope of the mean output against eval mode's, each
    feature centred first (a bias after the dropout passes unscaled)."""
    found = problem("draws_without_dropout", where=kind)
    if kind != "MultiHeadAttention" or len(set(rates)) != 1:  # linear in what it drops
        return found
    eval_out = run(yours.eval(), args)
    yours.train()
    outs = [seeded(yours, args, SEED + i) for i in range(RUNS)]
    if not all(isinstance(o, torch.Tensor) and o.shape == eval_out.shape for o in outs):
        return found
    mean = torch.stack(outs).double().mean(dim=0)
    e = eval_out.double() - eval_out.double().mean(dim=(0, 1))
    slope = ((mean - mean.mean(dim=(0, 1))) * e).sum() / (e * e).sum()
    keep = 1 - rates[0]
    if abs(slope - keep) < 0.05 * keep and abs(slope - 1) > 0.1:
        return problem("dropout_no_rescale", where=kind, keep=keep)
    return found


def train_mode(kind, reference, yours, inputs):
    """Findings for training mode, once eval mode agrees.

    With one seed the outputs match where dropout draws its random numbers as the chapter's does;
    else the same values must be dropped at the same rates (see _same_drops).
    """
    reference.train(), yours.train()
    try:
        reference_outs = [seeded(reference, args) for args in inputs]
        your_outs = [seeded(yours, args) for args in inputs]
        if all(same(y, r) for y, r in zip(your_outs, reference_outs)):
            return []
        if _same_drops(reference, yours, inputs):
            return []
        at = {"where": kind}
        your_drops = _dropout_calls(yours, inputs[0])
        if not COMPONENTS[kind].dropout:  # a dropout of its own (a module or a call), or else
            dropping = your_drops or dropout_rates(yours, inputs[0])
            return [problem("dropout_extra" if dropping else "training_differs", **at)]
        if all(same(seeded(yours, args, SEED + 1), y) for args, y in zip(inputs, your_outs)):
            return [problem("no_dropout", **at)]
        your_rates, reference_rates = (dropout_rates(m, inputs[0]) for m in (yours, reference))
        if not your_rates:  # its own random numbers: do the kept values get 1 / (1 - p)?
            return [_own_draws(kind, yours, inputs[0], reference_rates)]
        if sorted(set(your_rates)) != sorted(set(reference_rates)):  # what was seen: the rates
            return [probe("dropout_rate", **at, yours=names(sorted(set(your_rates))),
                          expected=names(sorted(set(reference_rates))))]
        reference_drops = _dropout_calls(reference, inputs[0])
        extra = [n for n in your_drops if n not in reference_drops]
        if extra:
            return [problem("dropout_extra_at", **at, names=names(extra))]
        counts = collections.Counter(reference_drops) - collections.Counter(your_drops)
        if counts and len(your_rates) < len(reference_rates):  # fewer calls, modules unused
            return [problem("no_dropout_at", **at, names=names(counts.elements()))]
        with Dropouts(lambda x, p, training: x):  # every rate 0
            if all(same(run(yours, a), run(reference, a)) for a in inputs):
                return [problem("dropout_elsewhere", **at, sites=say(f"sites_{kind}"))]
        return [problem("training_differs", **at)]
    finally:
        reference.train(False), yours.train(False)
