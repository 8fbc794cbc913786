"""Check a learner's own version of a chapter component against the chapter's, in gpt.py.

    check_component(LayerNorm)                  # prints feedback; the reference found by name
    review_component(MyNorm, reference=gpt.LayerNorm)   # returns Feedback(passed, text, codes)
    compare_models(my_model, gpt_model)         # two built models: where do they first differ?

Both built with the same arguments and seed: the initial values the chapter fixes, then (the
reference's weights copied in by the book's names) the outputs in eval mode on inputs a real model
meets, one backward pass, and dropout in training mode. The learner's own error comes first; else
one hook pass finds the first module whose output differs, and the mistakes planted into the
reference (exercises/planted.py) say which one it behaves like, or a probe shows where to look.
Judged by behaviour, never by the source; nothing a learner passes makes a check raise.
"""

import collections
import copy
import functools
import itertools
import math
import os
import traceback
from typing import NamedTuple
from unittest import mock

import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
from exercises import planted
from exercises.feedback import Feedback, names, numbered, render, say
from exercises.planted import COMPONENTS, CONFIG, DIAGNOSES, NOTES, SEED

RTOL, ATOL = 1e-4, 1e-5  # float32 rewrites (F.layer_norm, einsum, SDPA) agree far closer
MODEL_TOKENS = 64  # compare_models tries up to 64 tokens: GPT-2 sized models stay quick
FUSED_QKV = ("qkv", "W_qkv", "c_attn")  # accepted names of one (3 * d_out, d_in) projection
ALIASES = {"scale": "weight", "shift": "bias"}  # nn.LayerNorm's names for LayerNorm's


# ---- running the learner's code without letting it raise ----------------------------------------


class Raised(NamedTuple):
    error: str  # "TypeName: message"
    at: dict  # {"function", "line", "source"}: the learner's own line that raised, or None


class NotAttempted(Exception):
    """The learner's code raised NotImplementedError: a stub not filled in yet."""


NOT_THEIRS = (os.path.dirname(os.__file__), os.path.dirname(torch.__file__),
              os.path.dirname(__file__), gpt.__file__)


def _raised(err):
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not f.filename.startswith(NOT_THEIRS) and "site-packages" not in f.filename]
    at = {"function": frames[-1].name, "line": frames[-1].lineno,
          "source": (frames[-1].line or "").strip()} if frames else None
    return Raised(f"{type(err).__name__}: {err}", at)


def _run(function, args, grad=False):
    try:
        with torch.set_grad_enabled(grad):
            return function(*args)
    except NotImplementedError as err:
        raise NotAttempted from err
    except Exception as err:  # a learner's code may fail in any way: that is a finding
        return _raised(err)


def _atol(args):
    """Float32 rounding grows with the size of the values: rows with a mean of 100 get 100x."""
    x = args[0] if args and isinstance(args[0], torch.Tensor) else torch.zeros(1)
    return ATOL * max(1.0, x.abs().mean().item() if x.is_floating_point() else 1.0)


def _same(a, b, atol=ATOL):
    """Two tensors of one shape that agree; an exception never equals anything."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False
    return torch.allclose(a.double(), b.double(), rtol=RTOL, atol=atol, equal_nan=True)


def _gap(a, b):
    return (a.double() - b.double()).abs().nan_to_num(nan=math.inf)


def _shape(out):
    return tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__


def _seeded(function, args, seed=SEED):
    torch.manual_seed(seed)
    return _run(function, args)


def _num(x):
    return f"{round(float(x), 4) + 0.0:g}"


# ---- lining up the learner's parameters with the book's ----------------------------------------


QKV = ("W_query", "W_key", "W_value")


def _fused_slice(theirs, name, param):
    """(fused name, the rows of it that stand for `name`) or None; see FUSED_QKV."""
    prefix, _, leaf = name.rpartition(".")
    parent, _, projection = prefix.rpartition(".")
    if projection not in QKV:
        return None
    size, part = param.shape[0], QKV.index(projection)
    for fused in FUSED_QKV:
        fused_name = f"{parent}.{fused}.{leaf}".lstrip(".")
        fused_param = theirs.get(fused_name)
        if fused_param is not None and fused_param.shape == (3 * size, *param.shape[1:]):
            return fused_name, fused_param[part * size:(part + 1) * size]
    return None


def _shared(yours):
    """Findings for one module object that sits at several places ([block] * n)."""
    places = {}
    for name, module in yours.named_modules(remove_duplicate=False):
        if name and any(True for _ in module.parameters()):
            places.setdefault(id(module), []).append(name)
    groups = [p for p in places.values() if len(p) > 1]
    inner = {n for p in groups for n in p}
    return [("shared_module", {"names": names(p)}) for p in groups
            if p[0].rpartition(".")[0] not in inner]


def _align(reference, yours):
    """Pairs (your name, your tensor, book name, reference tensor), problems, and {your name:
    book name} for renames: nn.LayerNorm's weight/bias for scale/shift, and one fused
    query-key-value projection (FUSED_QKV) for W_query, W_key and W_value."""
    shared = _shared(yours)
    if shared:
        return [], shared, {}
    theirs, book = dict(yours.named_parameters()), dict(reference.named_parameters())
    pairs, problems, renamed = [], [], {}
    for name, param in book.items():
        prefix, _, leaf = name.rpartition(".")
        found = next((n for n in (name, f"{prefix}.{ALIASES.get(leaf)}".lstrip("."))
                      if n in theirs), None)
        mine = theirs.get(found)
        if found is None and _fused_slice(theirs, name, param):
            found, mine = _fused_slice(theirs, name, param)
            name = f"{prefix.rpartition('.')[0]}.W_query/W_key/W_value.{leaf}".lstrip(".")
        if found is None:
            problems.append(("missing_param", {"name": name}))
        elif mine.shape != param.shape:
            problems.append(("param_shape", {"name": found, "yours": tuple(mine.shape),
                                             "expected": tuple(param.shape)}))
        else:
            pairs.append((found, mine, name, param))
        if found is not None and found != name:
            renamed[found] = name
    for n in [n for n in theirs if n not in renamed and n not in book]:
        unbiased = n.endswith(".bias") and n[:-4] + "weight" in book  # a layer with bias=False
        problems.append(("extra_bias", {"name": n}) if unbiased else
                        ("extra_param", {"name": n, "shape": tuple(theirs[n].shape)}))
    wider = [p for p in problems if p[0] == "param_shape" and len(p[1]["yours"]) == len(
        p[1]["expected"]) and any(4 * y == e for y, e in zip(p[1]["yours"], p[1]["expected"]))]
    if wider:  # the 4x hidden layer: one sentence says it all
        problems = [("ff_no_expansion", wider[0][1])] + [p for p in problems if p[0] !=
                                                          "param_shape"]
    if any(code in ("extra_param", "extra_bias") for code, _ in problems):
        problems.append(("align_first", {}))
    return pairs, problems, renamed


def _copy_weights(pairs):
    for _, mine, _, reference in pairs:
        mine.data.copy_(reference)


def _perturb(module):
    """Random norm scales, shifts and biases, so that a step that skips them shows."""
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for param in module.parameters():
            if param.dim() == 1:
                param.add_(0.5 * torch.randn(param.shape, generator=g))


def _initial_values(fixed, module, renamed):
    """Findings for the values the chapter starts from whatever the seed (`fixed`: {book name:
    tensor}, a norm's scale and shift, the mask) where the learner's module starts elsewhere."""
    found = []
    for name, mine in module.state_dict().items():
        book = fixed.get(renamed.get(name, name))
        if book is None or mine.shape != book.shape:
            continue
        if book.dtype == torch.bool:  # a mask: True (or -inf) above the diagonal, or its inverse
            if not (torch.equal(mine.bool(), book) or torch.equal(mine.bool(), ~book)):
                row, col = (mine.bool() != book).nonzero()[0].tolist()
                found.append(("initial_mask", {"name": name, "row": row, "column": col}))
        elif not torch.equal(mine.to(book.dtype), book):
            found.append(("initial_value", {"name": name, "yours": _describe(mine),
                                            "expected": _describe(book)}))
    return found


def _describe(t):
    t = t.detach().double().flatten()
    return say("all_values", value=_num(t[0])) if bool((t == t[0]).all()) else say(
        "value_range", low=_num(t.min()), high=_num(t.max()))


# ---- one hook pass: every submodule call, in the order they return -----------------------------


def _trace(model, args):
    """[(name, args, output)] for each submodule call that returned, in order."""
    calls, hooks = [], []
    for name, module in model.named_modules():
        if name:
            hooks.append(module.register_forward_hook(
                lambda _m, a, out, name=name: calls.append((name, a, out))))
    try:
        _run(model, args)
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


def _enclosing(name):
    """`name` and the names of its ancestors, innermost first, then "" (the whole)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + [""]


def _identity(args, out):
    """A call that changes nothing (dropout in eval mode): no place to look."""
    return bool(args) and _same(args[0], out)


def _never_called(ref_calls, my_calls, inside, atol):
    """The outermost modules inside `inside` that the chapter's forward calls and yours never
    does, where it matters: the next call both make differs (a weight read rather than called
    that gives the same result is no finding)."""
    called = {a for name, _, _ in my_calls for a in _enclosing(name)}
    skipped = {n for n, a, out in ref_calls if n not in called and inside in _enclosing(n)
               and not _identity(a, out)}
    mine, ref_keys = _keyed(my_calls), list(_keyed(ref_calls).items())

    def matters(n):
        last = max(i for i, ((m, _), _) in enumerate(ref_keys) if n in _enclosing(m))
        after = [(key, out) for key, (_, out) in ref_keys[last + 1:] if key in mine]
        return not after or not _same(mine[after[0][0]][1], after[0][1], atol)

    return [n for n in dict.fromkeys(n for n, _, _ in ref_calls if n in skipped)
            if n.rpartition(".")[0] not in skipped and matters(n)]


def _locate(reference, yours, args, path, crashed=False):
    """Findings for the first module whose output differs among those your forward called:
    the innermost one whose own code, given the chapter's inputs, computes something else, and
    what that code does wrong: the mistakes of it or of a chapter component around it (inside
    out), else a probe of it. [] if every module that ran agrees (and `crashed`: your forward raised)."""
    ref_calls, my_calls = _trace(reference, args), _trace(yours, args)
    ref_at, my_at, atol = _keyed(ref_calls), _keyed(my_calls), _atol(args)
    mine, ref_modules = dict(yours.named_modules()), dict(reference.named_modules())
    first = next((key for key, (_, out) in my_at.items() if key in ref_at and not
                  _same(out, ref_at[key][1], atol) and not _identity(*ref_at[key])), None)
    if first is None:
        return [] if crashed else [("never_called", {"where": _join(path, n)})
                                   for n in _never_called(ref_calls, my_calls, "", atol)]
    name, (my_args, my_out), ref_out = first[0], my_at[first], ref_at[first][1]
    culprit = next((c for c in _enclosing(name)[:-1] if c in mine and any(
        not _same(_run(mine[c], a), out, atol) for n, a, out in ref_calls if n == c)), "")
    found = [("never_called", {"where": _join(path, n)})
             for n in _never_called(ref_calls, my_calls, culprit, atol)]
    where, parent = _join(path, name), _join(path, culprit) or type(yours).__name__
    if culprit != name:  # its input differs: the code that made it is the culprit's forward
        given = next((n for n, a, out in sorted(ref_calls, key=lambda c: (  # inside it first
                          culprit not in _enclosing(c[0]), c[0].count("."))) if a
                      and my_args and n not in (name, culprit) and not _identity(a, out)
                      and _same(a[0], my_args[0], atol)), None)
        found.append(("input_from", {"where": where, "parent": parent, "other": _join(
            path, given)}) if given else ("input_differs", {"where": where, "parent": parent}))
    if not culprit:
        return found
    shapes = _shape(my_out), _shape(ref_out)
    found.insert(0, ("first_difference_shape", {"where": where, "yours": shapes[0], "expected":
                                                shapes[1]}) if shapes[0] != shapes[1] else (
        "first_difference", {"where": where, "difference": f"{_gap(my_out, ref_out).max():.2g}"}))
    for outer, look in [(o, _match) for o in _enclosing(culprit)[:-1]] + [(culprit, _probe)]:
        kind, own = type(ref_modules[outer]).__name__, [a for n, a, _ in ref_calls if n == outer]
        found += kind in COMPONENTS and outer in mine and look(
            kind, ref_modules[outer], mine[outer], own, _where(_join(path, outer), kind)) or []
        if found[-1][0] in DIAGNOSES:
            return found
    return found


def _join(path, name):
    return f"{path}.{name}" if path and name else path or name


def _where(path, kind):
    return say("where", path=path, kind=kind) if path else kind


# ---- diagnosis ---------------------------------------------------------------------------------


def _mistakes_for(kind, reference, yours):
    """{code: (mutant, message params)}: the planted mistakes, plus one made to measure: a
    layer norm whose own `eps` differs is tried with that value (and must then match)."""
    mistakes = {code: (mutant, {}) for code, mutant in COMPONENTS[kind].mistakes.items()}
    eps = getattr(yours, "eps", None)
    if kind == "LayerNorm" and isinstance(eps, (int, float)) and eps != reference.eps:
        mistakes["ln_eps_value"] = (functools.partial(planted.layer_norm, eps_value=eps), {"eps": eps})
    return mistakes


def _both(a, b):
    """One mutant with two mistakes planted, where both change keywords of one function."""
    if isinstance(a, functools.partial) and isinstance(b, functools.partial) and (
            a.func is b.func and not a.keywords.keys() & b.keywords.keys()):
        return functools.partial(a.func, **a.keywords, **b.keywords)
    return None


def _outputs(module, inputs, model):
    return [_run(module, (model, *args) if model is not None else args) for args in inputs]


def _match(kind, reference, yours, inputs, where, model=None, mine=None):
    """The known mistakes (one, else two at once) whose mutant gives your outputs (`mine`)."""
    mine = mine or _outputs(yours, inputs, model)

    def fits(mutant):
        return all(_same(m, _run(mutant, (reference, *a)), _atol(a)) for m, a in zip(mine, inputs))

    mistakes = _mistakes_for(kind, reference, yours)
    single = [(code, {"where": where, **params}) for code, (mutant, params) in mistakes.items()
              if fits(mutant)]
    pairs = itertools.combinations(mistakes.items(), 2) if kind in planted.PAIRS else ()
    for (a, (ma, pa)), (b, (mb, pb)) in [] if single else pairs:
        if _both(ma, mb) and fits(_both(ma, mb)):
            return [("two_mistakes", {"where": where}), (a, {"where": where, **pa}),
                    (b, {"where": where, **pb})]
    return single


def _unit(module):
    """A copy with scale 1 and shift 0, to read a norm's output rows as they are."""
    module = copy.deepcopy(module)
    for name, param in module.named_parameters():
        param.data.fill_(1.0 if name.rpartition(".")[2] in ("scale", "weight") else 0.0)
    return module


def _keys_seen(module, x):
    """[query, key]: whether changing the input at key changes the output at query."""
    base, seen = _run(module, (x,)), []
    for j in range(x.shape[1]):
        out = _run(module, (x + (torch.arange(x.shape[1]) == j)[:, None],))
        if not (isinstance(out, torch.Tensor) and out.shape == base.shape):
            return None
        seen.append(_gap(out, base).amax(dim=(0, 2)) > 1e-6)
    return torch.stack(seen, dim=1)


def _spans(keys):
    """[0, 1, 2, 3, 7] -> "0..3, 7"."""
    ends = [k for k in keys if k + 1 not in keys]
    return names(f"{a}..{b}" if b > a else a for a, b in zip(
        [k for k in keys if k - 1 not in keys], ends)) or "-"


def _probe(kind, reference, yours, inputs, where, model=None):
    """A concrete look at the first difference, for when no known mistake fits."""
    ref_outs = _outputs(reference if model is None else COMPONENTS[kind].reference, inputs, model)
    mine = _outputs(yours, inputs, model)
    i = next(i for i, (m, r) in enumerate(zip(mine, ref_outs)) if not _same(m, r, _atol(inputs[i])))
    about = {"where": where, "shape": _shape(inputs[i][0]), "i": i + 1, "n": len(inputs)}
    if not isinstance(mine[i], torch.Tensor) or mine[i].shape != ref_outs[i].shape:
        return [("wrong_shape", {**about, "yours": _shape(mine[i]), "expected": _shape(ref_outs[i])})]
    if kind == "GELU":
        x = torch.arange(-3.0, 4.0)
        outs = [_run(m, (x,)) for m in (yours, reference)]
        if all(isinstance(o, torch.Tensor) and o.shape == x.shape for o in outs):
            return [("probe_gelu", {"where": where, "yours": names(map(_num, outs[0])),
                                    "expected": names(map(_num, outs[1]))})]
    if kind == "LayerNorm":
        outs = [_run(_unit(m), inputs[i]) for m in (yours, reference)]
        if all(isinstance(o, torch.Tensor) and o.dim() > 1 for o in outs):
            rows = [o.reshape(-1, o.shape[-1])[0].double() for o in outs]
            return [("probe_norm", {**about, "mean": _num(rows[0].mean()),
                                    "var": _num(rows[0].var(unbiased=False)),
                                    "expected_var": _num(rows[1].var(unbiased=False))})]
    mine, ref_out = mine[i], ref_outs[i]
    if model is not None:  # token ids: the first new one that differs
        row, col = (mine != ref_out).nonzero()[0].tolist()
        start = inputs[i][0].shape[1]
        return [("probe_ids", {**about, "step": col - start + 1, "row": row,
                               "yours": mine[row, col].item(), "expected": ref_out[row, col].item()})]
    if kind == "MultiHeadAttention":
        seen = [_keys_seen(m, inputs[0][0]) for m in (yours, reference)]
        if seen[0] is not None and not torch.equal(*seen):
            q = (seen[0] != seen[1]).any(dim=1).nonzero()[0].item()
            return [("probe_keys", {"where": where, "query": q, "yours": _spans(
                seen[0][q].nonzero().flatten().tolist()), "expected": _spans(
                seen[1][q].nonzero().flatten().tolist())})]
    if mine.dim() == 3 and kind != "FeedForward":
        position = (_gap(mine, ref_out).amax(dim=(0, 2)) > _atol(inputs[i])).nonzero()[0].item()
        return [("probe_position", {**about, "position": position, "length": mine.shape[1],
                                    "difference": f"{_gap(mine, ref_out).max().item():.2g}"})]
    index = (_gap(mine, ref_out) > _atol(inputs[i])).nonzero()[0].tolist()
    return [("probe_values", {**about, "index": list(index), "yours": _num(mine[tuple(index)]),
                              "expected": _num(ref_out[tuple(index)])})]


def _diagnose(kind, reference, yours, inputs, path=""):
    """Findings [(code, params)] where `yours` computes something else than `reference` (for a
    function: the model it is called with); [] if nothing does."""
    spec = COMPONENTS[kind]
    model = reference if spec.build is None else None
    ref_outs = _outputs(spec.reference if model is not None else reference, inputs, model)
    mine = _outputs(yours, inputs, model)
    bad = [i for i, (m, r) in enumerate(zip(mine, ref_outs)) if not _same(m, r, _atol(inputs[i]))]
    if not bad:
        return []
    where = _where(path, kind)

    def about(i):
        return {"where": where, "shape": _shape(inputs[i][0]), "i": i + 1, "n": len(inputs)}

    raised = [i for i in bad if isinstance(mine[i], Raised)]
    if raised:  # their own error first; then what the inputs that ran say
        error = mine[raised[0]]
        found = [("raised", {**about(raised[0]), "error": error.error})] + (
            [("your_line", error.at)] if error.at else [])
        ran = [i for i in range(len(inputs)) if i not in raised]
        if ran and not set(ran) & set(bad):  # right wherever it runs: a length it cannot take
            return found + ([(planted.LENGTH[kind], {"where": where})] if kind in planted.LENGTH else [
                f for f in _parts(reference, yours) if f[0] in DIAGNOSES] if model is None else [])
        if set(ran) & set(bad):
            found += _match(kind, reference, yours, [inputs[i] for i in ran], where, model,
                            [mine[i] for i in ran])
        return found + (_locate(reference, yours, inputs[raised[0]], path, crashed=True)
                        if model is None else [])
    i = bad[0]
    if not isinstance(mine[i], torch.Tensor):
        code = "returns_list" if model is not None and isinstance(mine[i], list) else (
            "not_tensor" if mine[i] is not None else
            "returns_none" if spec.build else "returns_none_function")
        return [(code, {"where": where, "kind": type(mine[i]).__name__})]
    if not _same(_outputs(yours, inputs[i:i + 1], model)[0], mine[i], 0):
        return [("random_in_eval", {"where": where})]
    matched = _match(kind, reference, yours, inputs, where, model, mine)
    if matched:
        return matched
    located = _locate(reference, yours, inputs[i], path) if model is None else []
    if mine[i].shape != ref_outs[i].shape:
        return [("wrong_shape", {**about(i), "yours": _shape(mine[i]),
                                 "expected": _shape(ref_outs[i])})] + located
    if any(code in DIAGNOSES or code[:5] in ("probe", "wrong") for code, _ in located):
        return located
    return located + _probe(kind, reference, yours, inputs, where, model)


def _parts(reference, yours):
    """Findings for the first chapter component inside that differs on inputs of its own.

    Inside a model a part only sees the inputs the model gives it; its own inputs (rows with a
    mean of 100 for a layer norm, say) can show a mistake that those hide.
    """
    mine = dict(yours.named_modules())
    for name, part in reference.named_modules():
        kind = type(part).__name__
        if name and kind in planted.PARTS and name in mine:
            found = _diagnose(kind, part, mine[name], _inputs_for(kind, part), name)
            if found:
                return [("part_alone", {"where": _where(name, kind)})] + found
    return []


# ---- one backward pass, then training mode ------------------------------------------------------


def _gradients(reference, yours, pairs, args):
    """Findings for the parameters (and the input) whose gradient, after one backward pass of
    the same loss, is missing or differs from the chapter's: .data, .detach(), torch.no_grad()."""
    def grads(module, params):
        saved = [p.grad for p in params]
        x = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in args]
        try:
            out = _run(module, x, grad=True)
            g = torch.Generator().manual_seed(SEED)
            (out * torch.randn(out.shape, generator=g)).sum().backward()
            return [x[0].grad] + [p.grad for p in params]
        except Exception:  # no tensor, or one that no gradient reaches
            return [None] * (len(params) + 1)
        finally:
            for p, s in zip(params, saved):
                p.grad = s

    pairs = [pair for pair in pairs if pair[1].is_leaf]  # not the rows of a fused projection
    book = [say("the_input")] + [name for _, _, name, _ in pairs]
    mine = grads(yours, [p for _, p, _, _ in pairs])
    theirs = grads(reference, [p for _, _, _, p in pairs])
    none = [n for n, m, t in zip(book, mine, theirs) if m is None and t is not None]
    differ = [n for n, m, t in zip(book, mine, theirs) if m is not None and t is not None and
              not (m - t).abs().max() <= 1e-3 * t.abs().max() + 1e-6]  # NaN: differs
    return ([("no_gradient", {"names": names(none)})] if none else []) + (
        [("gradient_differs", {"names": names(differ)})] if differ else [])


def _same_drops(reference, yours, inputs):
    """Whether yours drops the same values as the chapter's at the same rates, however it
    splits them into calls (a loop over heads): F.dropout (which nn.Dropout calls) keeps the
    values above a threshold taken from the chapter's own dropout inputs, whatever the order."""
    seen = {}

    def record(x, p=0.5, training=True, inplace=False):
        seen.setdefault(p if training else 0, []).append(x.detach().flatten())
        return x

    def drop(x, p=0.5, training=True, inplace=False):
        return x * (x > cut.get(p, math.inf)) / (1 - p) if training and p else x

    with mock.patch.object(F, "dropout", record):
        [_run(reference, args) for args in inputs]
    values = {p: torch.cat(v).double().unique() for p, v in seen.items() if p}
    cut = {p: (v[len(v) // 2 - 1: len(v) // 2 + 1].mean().item()) for p, v in values.items()}
    with mock.patch.object(F, "dropout", drop):
        return all(_same(_run(yours, a), _run(reference, a), _atol(a)) for a in inputs)


def _dropout_calls(model, args):
    """The names of the nn.Dropout modules with p > 0 that one training-mode call runs."""
    return [name for name, _, _ in _trace(model, args)
            if isinstance(model.get_submodule(name), nn.Dropout) and model.get_submodule(name).p]


def _training(kind, reference, yours, inputs):
    """Findings for training mode, once eval mode agrees.

    With one seed the outputs match where dropout draws its random numbers as the chapter's does;
    else the same values must be dropped at the same rates (see _same_drops).
    """
    reference.train(), yours.train()
    try:
        ref_outs = [_seeded(reference, args) for args in inputs]
        my_outs = [_seeded(yours, args) for args in inputs]
        if all(_same(m, r) for m, r in zip(my_outs, ref_outs)) or _same_drops(
                reference, yours, inputs):
            return []
        where = {"where": kind}
        if not COMPONENTS[kind].dropout:  # a dropout of its own, or something else
            return [("dropout_extra" if _dropout_calls(yours, inputs[0]) else "training_differs",
                     where)]
        mine, theirs = _dropout_calls(yours, inputs[0]), _dropout_calls(reference, inputs[0])
        extra = [n for n in mine if n not in theirs]
        missing = list((collections.Counter(theirs) - collections.Counter(mine)).elements())
        if extra:
            return [("dropout_extra_at", {**where, "names": names(extra)})]
        if all(_same(_seeded(yours, args, SEED + 1), m) for args, m in zip(inputs, my_outs)):
            return [("no_dropout", where)]
        if missing:
            return [("no_dropout_at", {**where, "names": names(missing)})]
        with mock.patch.object(F, "dropout", lambda x, *args, **kwargs: x):  # every rate 0
            if all(_same(_run(yours, a), _run(reference, a)) for a in inputs):
                return [("dropout_elsewhere", {**where, "sites": say(f"sites_{kind}")})]
        return [("training_differs", where)]
    finally:
        reference.eval(), yours.eval()


# ---- the checks --------------------------------------------------------------------------------


def _build(spec, cls, cfg, seed=SEED):
    torch.manual_seed(seed)
    return spec.build(cls, cfg)


def _prepare(spec, reference, yours, cfg=CONFIG):
    """Both modules built from `cfg`, the reference's weights copied into yours, findings."""
    ref_module = _build(spec, reference, cfg)
    other_seed = _build(spec, reference, cfg, SEED + 1).state_dict()
    fixed = {n: t.clone() for n, t in ref_module.state_dict().items() if torch.equal(t, other_seed[n])}
    _perturb(ref_module)
    try:
        module = _build(spec, yours, cfg)
    except NotImplementedError as err:
        raise NotAttempted from err
    except Exception as err:
        error = _raised(err)
        if isinstance(err, TypeError) and error.at is None:  # the call itself: its arguments
            return ref_module, None, [("wrong_signature", {"signature": spec.signature,
                                                             "error": str(err)})], {}
        return ref_module, None, [("build_failed", {"error": error.error})] + (
            [("your_line", error.at)] if error.at else []), {}
    if not isinstance(module, nn.Module):
        return ref_module, None, [("component_not_module", {"kind": type(module).__name__})], {}
    if any(t.is_meta for t in [*module.parameters(), *module.buffers()]):
        return ref_module, None, [("on_meta", {})], {}
    pairs, problems, renamed = _align(ref_module, module)
    problems += _initial_values(fixed, module, renamed)
    _copy_weights(pairs)
    return ref_module, module, problems, (pairs, renamed)


def _unaligned(problems):
    """Weights the check could not copy make any comparison of outputs meaningless."""
    return any(code not in ("missing_param", "initial_value", "initial_mask")
               for code, _ in problems)


def _renamed(renamed):
    return [("renamed", {"names": names(f"{a} → {b}" for a, b in renamed.items())})
            ] if renamed else []


def _exact_gelu(module):
    """`module` with the chapter's tanh GELUs replaced by the exact one, nn.GELU()."""
    if isinstance(module, gpt.GELU):
        return nn.GELU()
    for name, part in list(module.named_modules()):
        if isinstance(part, gpt.GELU):
            parent, _, leaf = name.rpartition(".")
            module.get_submodule(parent).register_module(leaf, nn.GELU())
    return module


def _compare(kind, ref_module, module, inputs, pairs, training=True):
    """Eval-mode outputs, then one backward pass, then training mode."""
    findings = _diagnose(kind, ref_module.eval(), module.eval(), inputs) or _parts(
        ref_module, module)
    if findings or COMPONENTS[kind].build is None:
        return findings
    findings = _gradients(ref_module, module, pairs, inputs[0])
    return findings or (_training(kind, ref_module, module, inputs) if training else [])


def _review_class(kind, spec, reference, yours, exact=False):
    ref_module, module, problems, aligned = _prepare(spec, reference, yours)
    if module is None:
        return problems, []
    pairs, renamed = aligned
    inputs = spec.inputs(CONFIG)
    _run(module.eval(), inputs[0])  # a stub raises NotImplementedError here
    if _unaligned(problems):
        return problems, _renamed(renamed)
    ref_module = _exact_gelu(ref_module) if exact else ref_module
    return problems + _compare(kind, ref_module, module, inputs, pairs), _renamed(renamed)


def _review_function(spec, yours):
    if isinstance(yours, type):
        return [("expected_function", {"name": yours.__name__})], []
    torch.manual_seed(SEED)
    model = gpt.GPTModel(CONFIG).eval()
    _perturb(model)
    inputs = spec.inputs(CONFIG)
    _run(yours, (model, *inputs[0]))  # a stub raises NotImplementedError here
    return _diagnose("generate_text_simple", model, yours, inputs), []


GENERIC = ("first_difference", "probe")  # codes that start so: a look, not a cause


def _render(findings, notes, success):
    """Feedback: one line per finding; several diagnoses of one behaviour numbered."""
    if any(code == "missing_param" for code, _ in findings):  # it says why: no generic line
        findings = [f for f in findings if not f[0].startswith(GENERIC)]
    texts = [say(code, **params) for code, params in findings]
    diagnoses = [i for i, (code, _) in enumerate(findings) if code in DIAGNOSES]
    if len(diagnoses) > 1:  # two mistakes at once, or one behaviour that several produce
        two = findings[diagnoses[0] - 1][0] == "two_mistakes"
        start = diagnoses[0] - two
        header = texts[start] if two else say(
            "several_mistakes", where=findings[start][1]["where"], n=len(diagnoses))
        texts[start:] = numbered(header, [texts[j] for j in diagnoses]) + [
            t for j, t in enumerate(texts) if j > start and j not in diagnoses]
    notes = [say(code, **params) for code, params in notes]
    return render(texts, [code for code, _ in findings] or ["correct_component"], success, notes)


def _single(code, **params):
    return Feedback(False, say(code, **params), (code,))


def review_component(yours, reference=None):
    """Feedback(passed, text, codes) on `yours`, a chapter class or generate_text_simple."""
    if yours is None:
        return _single("not_attempted_component")
    if isinstance(yours, nn.Module):
        return _single("pass_class", kind=type(yours).__name__)
    if not callable(yours):
        return _single("not_component", kind=type(yours).__name__)
    kind = getattr(yours if reference is None else reference, "__name__", None)
    if kind not in COMPONENTS:
        return _single("unknown_component" if reference is None else "unknown_reference",
                       name=str(kind), names=names(COMPONENTS))
    spec, name = COMPONENTS[kind], getattr(yours, "__name__", kind)
    reference = reference or spec.reference
    try:
        if spec.build is None:
            findings, notes = _review_function(spec, yours)
        elif not isinstance(yours, type):
            return _single("expected_class", name=name, kind=kind)
        else:
            findings, notes = _review_class(kind, spec, reference, yours)
            if {code for code, _ in findings} & DIAGNOSES == NOTES:  # the exact GELU: no bug
                findings, notes = _review_class(kind, spec, reference, yours, exact=True)
                notes += [("gelu_erf", {})]
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort: the diagnoses handle every input we know of
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    success = say("correct_function" if spec.build is None else "correct_component",
                  name=name, reference=kind)
    feedback = _render(findings, notes, success)
    return feedback._replace(codes=feedback.codes + tuple(c for c, _ in notes if c in NOTES))


def check_component(yours, reference=None):
    """Print feedback on `yours`, a chapter class or generate_text_simple (see review_component)."""
    print(review_component(yours, reference).text)


# ---- two built models --------------------------------------------------------------------------


def _inputs_for(kind, module):
    """Inputs sized for a built module: up to MODEL_TOKENS tokens, so GPT-2 stays quick."""
    if kind == "GPTModel":
        vocab, context = module.tok_emb.num_embeddings, module.pos_emb.num_embeddings
        return planted.token_inputs({"vocab_size": vocab, "context_length": min(context, MODEL_TOKENS)})
    width = next((m.normalized_shape[0] if isinstance(m, nn.LayerNorm) else m.in_features
                  for m in module.modules() if isinstance(m, (nn.Linear, nn.LayerNorm))), None)
    if width is None:  # LayerNorm or GELU: no nn.Linear inside
        scale = getattr(module, "scale", None)
        width = scale.numel() if isinstance(scale, torch.Tensor) else CONFIG["emb_dim"]
    masks = [b for n, b in module.named_buffers() if n.endswith("mask")]
    context = min(masks[0].shape[-1], MODEL_TOKENS) if masks else CONFIG["context_length"]
    return COMPONENTS[kind].inputs({"emb_dim": width, "context_length": context})


def review_models(yours, reference):
    """Feedback on two built models: the first submodule whose output differs, and why."""
    for model in (yours, reference):
        if isinstance(model, type):
            return _single("models_need_instances", name=model.__name__)
        if not isinstance(model, nn.Module):
            return _single("component_not_module", kind=type(model).__name__)
        if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
            return _single("on_meta")
    kind = type(reference).__name__
    if kind not in COMPONENTS:
        return _single("unknown_reference", name=kind, names=names(COMPONENTS))
    was_training = reference.training
    try:
        device = next(reference.parameters(), torch.empty(0)).device
        yours = copy.deepcopy(yours).to(device)  # your model keeps its own weights
        pairs, problems, renamed = _align(reference, yours)
        _copy_weights(pairs)
        inputs = [tuple(a.to(device) for a in args) for args in _inputs_for(kind, reference)]
        _run(yours.eval(), inputs[0])
        findings = [] if _unaligned(problems) else _compare(kind, reference, yours, inputs, pairs, False)
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort, as in review_component
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    finally:
        reference.train(was_training)
    return _render(problems + findings, _renamed(renamed), say("same_models", reference=kind))


def compare_models(yours, reference):
    """Print where `yours` (a built model) first computes something else than `reference`."""
    print(review_models(yours, reference).text)
