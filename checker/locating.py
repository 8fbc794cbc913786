"""Locating the first difference: one hook pass over each side records every submodule call, in
the order they return; the first of yours whose output differs from the chapter's call of the
same name is the place to look, and the innermost module around it whose own code, given the
chapter's inputs, computes something else is the one to diagnose (checker/diagnosing.py)."""

from typing import NamedTuple

import torch
import torch.nn as nn

from checker.feedback import place, problem
from checker.running import gap, join, run, same, shape, tolerance


class Located(NamedTuple):
    findings: list
    culprit: str  # the module whose own code differs, to diagnose; None: nothing to diagnose
    reference_calls: list  # [(name, args, output)] of the chapter's forward


def trace(model, args):
    """[(name, args, output)] for each submodule call that returned, in order."""
    calls, hooks = [], []
    for name, module in model.named_modules():
        if name:
            hooks.append(module.register_forward_hook(
                lambda _m, a, out, name=name: calls.append((name, a, out))))
    try:
        run(model, args)
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def _keyed(calls):
    """{(name, k): (args, output)} for the k-th call of each module, in order."""
    counts, keyed = {}, {}
    for name, args, out in calls:
        counts[name] = counts.get(name, -1) + 1
        keyed[name, counts[name]] = args, out
    return keyed


def enclosing(name):
    """`name` and the names of its ancestors, innermost first, then "" (the whole)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + [""]


def _identity(args, out):
    """A call that changes nothing (dropout in eval mode): no place to look."""
    return bool(args) and same(args[0], out)


def _never_called(reference_calls, your_calls, inside, atol, crashed=False):
    """The outermost modules inside `inside` that the chapter's forward calls and yours never
    does, where it matters: the next call both make differs (a weight read rather than called
    that gives the same result is no finding). If your forward raised, only those it passed:
    yours called a module that the chapter calls after them."""
    called = {a for name, _, _ in your_calls for a in enclosing(name)}
    skipped = {n for n, a, out in reference_calls if n not in called and inside in enclosing(n)
               and not _identity(a, out)}
    yours, reference_keys = _keyed(your_calls), list(_keyed(reference_calls).items())

    def matters(n):
        last = max(i for i, ((m, _), _) in enumerate(reference_keys) if n in enclosing(m))
        after = [(key, out) for key, (_, out) in reference_keys[last + 1:] if key in yours]
        if crashed:
            return bool(after)
        return not after or not same(yours[after[0][0]][1], after[0][1], atol)

    in_order = dict.fromkeys(n for n, _, _ in reference_calls if n in skipped)
    return [n for n in in_order if n.rpartition(".")[0] not in skipped and matters(n)]


def _differs_alone(module, name, reference_calls, atol):
    """Whether `module`, given the chapter's inputs to `name`, computes something else (a
    container such as nn.ModuleList has no forward of its own to run)."""
    if type(module).forward is nn.Module.forward:
        return False
    return any(not same(run(module, a), out, atol) for n, a, out in reference_calls if n == name)


def _giver(reference_calls, culprit, name, your_args, atol):
    """The module to which the chapter gives what yours gives to `name`, inside culprit first."""
    def inside_first(call):
        return culprit not in enclosing(call[0]), call[0].count(".")

    for n, a, out in sorted(reference_calls, key=inside_first):
        if not a or not your_args or n in (name, culprit) or _identity(a, out):
            continue
        if same(a[0], your_args[0], atol):
            return n
    return None


def _first_difference(your_at, reference_at, atol):
    """The key (name, k) of the first of your calls whose output differs from the chapter's
    call of the same name and rank, or None (calls that change nothing are passed over)."""
    for key, (_, out) in your_at.items():
        if key not in reference_at or _identity(*reference_at[key]):
            continue
        if not same(out, reference_at[key][1], atol):
            return key
    return None


def _culprit(name, your_modules, reference_calls, atol):
    """The innermost module around `name` (itself first) whose own forward, given the chapter's
    inputs, computes something else; "" if none: the difference comes from the whole."""
    for candidate in enclosing(name)[:-1]:
        if candidate in your_modules and _differs_alone(your_modules[candidate], candidate,
                                                        reference_calls, atol):
            return candidate
    return ""


def _first_line(where, your_out, reference_out):
    """Where the first difference is, with its size, or the two shapes where they differ."""
    shapes = shape(your_out), shape(reference_out)
    if shapes[0] != shapes[1]:
        return place("first_difference_shape", where=where, yours=shapes[0], expected=shapes[1])
    return place("first_difference", where=where,
                 difference=f"{gap(your_out, reference_out).max():.2g}")


def locate(reference, yours, args, path, crashed=False):
    """The first module whose output differs among those your forward called, and the culprit
    to diagnose. No finding if every module that ran agrees (and `crashed`: your forward raised)."""
    reference_calls, your_calls = trace(reference, args), trace(yours, args)
    reference_at, your_at, atol = _keyed(reference_calls), _keyed(your_calls), tolerance(args)
    first = _first_difference(your_at, reference_at, atol)
    if first is None:  # every call agrees: a module skipped, or nothing to say
        skipped = [] if crashed else _never_called(reference_calls, your_calls, "", atol)
        return Located([problem("never_called", where=join(path, n)) for n in skipped], None,
                       reference_calls)
    name, (your_args, your_out) = first[0], your_at[first]
    culprit = _culprit(name, dict(yours.named_modules()), reference_calls, atol)
    found = [problem("never_called", where=join(path, n))
             for n in _never_called(reference_calls, your_calls, culprit, atol, crashed)]
    where, parent = join(path, name), join(path, culprit) or type(yours).__name__
    if culprit != name:  # its input differs: the code that made it is the culprit's forward
        given = _giver(reference_calls, culprit, name, your_args, atol)
        found.append(place("input_from", where=where, parent=parent, other=join(path, given))
                     if given else place("input_differs", where=where, parent=parent))
    if not culprit:
        return Located(found, None, reference_calls)
    return Located([_first_line(where, your_out, reference_at[first][1])] + found, culprit,
                   reference_calls)


def first_to_change_its_input(model, args):
    """The first submodule call (in the order they return) that changes its input in place."""
    before, changed, hooks = {}, [], []

    def snapshot(module, inputs):
        before[id(module)] = [a.clone() for a in inputs if isinstance(a, torch.Tensor)]

    def compare(name):
        def hook(module, inputs, _out):
            now = [a for a in inputs if isinstance(a, torch.Tensor)]
            if any(a.shape != b.shape or not torch.equal(a, b)
                   for a, b in zip(now, before.get(id(module), now))):
                changed.append(name)
        return hook

    for name, module in model.named_modules():
        if name:
            hooks += [module.register_forward_pre_hook(snapshot),
                      module.register_forward_hook(compare(name))]
    try:
        run(model, args)
    finally:
        for hook in hooks:
            hook.remove()
    return changed[0] if changed else None
