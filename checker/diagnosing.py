"""Diagnosing: which known mistake (a mutant of the chapter's code, checker/planted.py) gives
the learner's outputs, one or two at once; else a probe, a concrete look at the first
difference. Judged by behaviour, never by the source."""

import copy
import functools
import itertools
import re

import torch
import torch.nn as nn

from checker import planted
from checker.feedback import diagnosis, names, probe, problem, say
from checker.locating import enclosing, first_to_change_its_input, locate
from checker.planted import COMPONENTS, CONFIG, DIAGNOSES
from checker.running import (
    Raised,
    changes_input,
    dropout_rates,
    gap,
    join,
    number,
    run,
    same,
    shape,
    tolerance,
)

MODEL_TOKENS = 64  # compare_models tries up to 64 tokens: GPT-2 sized models stay quick


def where(path, kind):
    return say("where", path=path, kind=kind) if path else kind


MEASURED = ("ln_eps_value", "gelu_constants")  # mistakes made to measure, below


def _mistakes_for(kind, reference, yours):
    """{code: (mutant, message params)}: the planted mistakes, plus those made to measure: a
    layer norm whose own `eps` differs is tried with that value, a GELU of the tanh form with
    the constants read off its outputs (each must then match on every input)."""
    mistakes = {code: (mutant, {}) for code, mutant in COMPONENTS[kind].mistakes.items()}
    eps = getattr(yours, "eps", None)
    if kind == "LayerNorm" and isinstance(eps, (int, float)) and eps != reference.eps:
        mutant = functools.partial(planted.layer_norm, eps_value=eps)
        mistakes["ln_eps_value"] = (mutant, {"eps": eps})
    constants = _gelu_constants(yours) if kind == "GELU" else None
    if constants is not None:
        a, b = constants
        mutant = functools.partial(_gelu_with, constant=a, cubic=b)
        mistakes["gelu_constants"] = (mutant, _said_constants(a, b))
    return mistakes


def _said_constants(a, b):
    """a and b as the message says them: the chapter's own where they are within what reading
    them off float32 outputs can tell (a typo or a rounding such as 0.7978 is 1e-4 or more)."""
    same_a = abs(a / planted.TANH_CONSTANT - 1) < 5e-5
    same_b = abs(b / 0.044715 - 1) < 5e-4
    return {"a": "sqrt(2 / pi)" if same_a else f"{a:.4g}", "b": "0.044715" if same_b else f"{b:.4g}"}


def _gelu_with(module, x, constant, cubic):
    return planted.gelu_tanh(x, constant=constant, cubic=cubic)


def _gelu_constants(yours):
    """(a, b) such that yours is 0.5 x (1 + tanh(a (x + b x^3))) at x = 1 and 2, read off its
    outputs there; None where that form cannot give them, or where a and b are the chapter's.
    Solving at two points proves nothing: match() then tries the pair on every input."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    y = run(yours, (x,))
    if not (isinstance(y, torch.Tensor) and y.shape == x.shape and y.is_floating_point()):
        return None
    inner = torch.atanh(2 * y.double() / x - 1)  # a x + a b x^3 at each point
    if not bool(inner.isfinite().all()):
        return None
    ab = (inner[1] - 2 * inner[0]) / 6  # from a + ab = inner[0] and 2a + 8ab = inner[1]
    a = (inner[0] - ab).item()
    if abs(a) < 1e-3:
        return None
    b = ab.item() / a
    if abs(a - planted.TANH_CONSTANT) < 1e-6 and abs(b - 0.044715) < 1e-6:
        return None
    return a, b


def _both(a, b):
    """One mutant with two mistakes planted, where both change keywords of one function."""
    if not (isinstance(a, functools.partial) and isinstance(b, functools.partial)):
        return None
    if a.func is not b.func or a.keywords.keys() & b.keywords.keys():
        return None
    return functools.partial(a.func, **a.keywords, **b.keywords)


def _outputs(module, inputs, model):
    """Each input's output; a function (generate_text_simple) is called with the model first."""
    if model is None:
        return [run(module, args) for args in inputs]
    return [run(module, (model, *args)) for args in inputs]


def match(kind, reference, yours, inputs, at, model=None, your_outs=None):
    """The known mistakes (one, else two at once) whose mutant gives your outputs."""
    your_outs = your_outs or _outputs(yours, inputs, model)

    def fits(mutant):  # the same outputs, and the same error where yours raises one
        for y, args in zip(your_outs, inputs):
            out = run(mutant, (reference, *args))
            if not (_same_error(y, out) or same(y, out, tolerance(args))):
                return False
        return True

    mistakes = _mistakes_for(kind, reference, yours)
    single = [diagnosis(code, where=at, **params) for code, (mutant, params) in mistakes.items()
              if fits(mutant)]
    if any(f.code == "ln_eps_value" for f in single):  # yours with its own eps: the one
        return [f for f in single if f.code == "ln_eps_value"]  # explanation (a tiny eps fits ln_no_eps)
    if any(f.code not in MEASURED for f in single):  # a named mistake says more than constants
        single = [f for f in single if f.code not in MEASURED]
    if single or not COMPONENTS[kind].pairs:
        return single
    for (a, (mutant_a, params_a)), (b, (mutant_b, params_b)) in itertools.combinations(
            mistakes.items(), 2):
        both = _both(mutant_a, mutant_b)
        if both and fits(both):
            return [problem("two_mistakes", where=at), diagnosis(a, where=at, **params_a),
                    diagnosis(b, where=at, **params_b)]
    return []


def _same_error(a, b):
    """Two errors of one kind and one wording, whatever the sizes they name: an uncut mask and
    a reshape to context_length both fail on a short input, with different messages."""
    if not (isinstance(a, Raised) and isinstance(b, Raised)):
        return False
    return re.sub(r"\d+", "#", a.error) == re.sub(r"\d+", "#", b.error)


def _unit(module):
    """A copy with scale 1 and shift 0, to read a norm's output rows as they are."""
    module = copy.deepcopy(module)
    for name, param in module.named_parameters():
        param.data.fill_(1.0 if name.rpartition(".")[2] in ("scale", "weight") else 0.0)
    return module


def _keys_seen(module, x):
    """[query, key]: whether changing the input at key changes the output at query."""
    base, seen = run(module, (x,)), []
    for j in range(x.shape[1]):
        out = run(module, (x + (torch.arange(x.shape[1]) == j)[:, None],))
        if not (isinstance(out, torch.Tensor) and out.shape == base.shape):
            return None
        seen.append(gap(out, base).amax(dim=(0, 2)) > 1e-6)
    return torch.stack(seen, dim=1)


def _spans(keys):
    """[0, 1, 2, 3, 7] -> "0..3, 7"."""
    starts = [k for k in keys if k - 1 not in keys]
    ends = [k for k in keys if k + 1 not in keys]
    return names(f"{a}..{b}" if b > a else a for a, b in zip(starts, ends)) or "-"


def look(kind, reference, yours, inputs, at, model=None):
    """A probe: a concrete look at the first difference, for when no known mistake fits."""
    reference_outs = _outputs(reference if model is None else COMPONENTS[kind].reference,
                              inputs, model)
    your_outs = _outputs(yours, inputs, model)
    i = next(i for i, (y, r) in enumerate(zip(your_outs, reference_outs))
             if not same(y, r, tolerance(inputs[i])))
    about = {"where": at, "shape": shape(inputs[i][0]), "i": i + 1, "n": len(inputs)}
    yours_i, reference_i = your_outs[i], reference_outs[i]
    if not isinstance(yours_i, torch.Tensor) or yours_i.shape != reference_i.shape:
        return [probe("wrong_shape", **about, yours=shape(yours_i), expected=shape(reference_i))]
    if kind == "GELU":
        x = torch.arange(-3.0, 4.0)
        outs = [run(m, (x,)) for m in (yours, reference)]
        if all(isinstance(o, torch.Tensor) and o.shape == x.shape for o in outs):
            return [probe("probe_gelu", where=at, yours=names(map(number, outs[0])),
                          expected=names(map(number, outs[1])))]
    if kind == "LayerNorm":
        outs = [run(_unit(m), inputs[i]) for m in (yours, reference)]
        if same(*outs, tolerance(inputs[i])):  # the normalizing agrees: scale and shift differ
            return [probe("probe_affine", where=at)]
        if all(isinstance(o, torch.Tensor) and o.dim() > 1 for o in outs):
            rows = [o.reshape(-1, o.shape[-1])[0].double() for o in outs]
            return [probe("probe_norm", **about, mean=number(rows[0].mean()),
                          var=number(rows[0].var(unbiased=False)),
                          expected_var=number(rows[1].var(unbiased=False)))]
    if model is not None:  # token ids: the first new one that differs
        row, col = (yours_i != reference_i).nonzero()[0].tolist()
        start = inputs[i][0].shape[1]
        return [probe("probe_ids", **about, step=col - start + 1, row=row,
                      yours=yours_i[row, col].item(), expected=reference_i[row, col].item())]
    nan = yours_i.isnan() & ~reference_i.isnan() if yours_i.is_floating_point() else None
    if nan is not None and nan.any() and yours_i.dim() == 3:
        position = nan.any(dim=2).any(dim=0).nonzero()[0].item()
        return [probe("probe_nan", **about, position=position, length=yours_i.shape[1])]
    if kind == "MultiHeadAttention":
        seen = [_keys_seen(m, inputs[0][0]) for m in (yours, reference)]
        if seen[0] is not None and not torch.equal(*seen):
            q = (seen[0] != seen[1]).any(dim=1).nonzero()[0].item()
            return [probe("probe_keys", where=at, query=q,
                          yours=_spans(seen[0][q].nonzero().flatten().tolist()),
                          expected=_spans(seen[1][q].nonzero().flatten().tolist()))]
    difference = gap(yours_i, reference_i)
    if yours_i.dim() == 3 and kind != "FeedForward":
        position = (difference.amax(dim=(0, 2)) > tolerance(inputs[i])).nonzero()[0].item()
        return [probe("probe_position", **about, position=position, length=yours_i.shape[1],
                      difference=f"{difference.max().item():.2g}")]
    index = tuple((difference > tolerance(inputs[i])).nonzero()[0].tolist())
    return [probe("probe_values", **about, index=list(index), yours=number(yours_i[index]),
                  expected=number(reference_i[index]))]


def locate_and_diagnose(reference, yours, args, path, crashed=False):
    """locate(), then the culprit's mistakes or those of a chapter component around it (inside
    out), else a probe of the culprit."""
    located = locate(reference, yours, args, path, crashed)
    found = located.findings
    if located.culprit is None:
        return found
    your_modules, reference_modules = dict(yours.named_modules()), dict(reference.named_modules())
    steps = [(outer, match) for outer in enclosing(located.culprit)[:-1]]
    for outer, step in steps + [(located.culprit, look)]:
        kind = type(reference_modules[outer]).__name__
        if kind not in COMPONENTS or outer not in your_modules:
            continue
        own = [a for n, a, _ in located.reference_calls if n == outer]
        found = found + step(kind, reference_modules[outer], your_modules[outer], own,
                             where(join(path, outer), kind))
        if found[-1].code in DIAGNOSES:
            return found
    return found


def diagnose(kind, reference, yours, inputs, path=""):
    """Findings where `yours` computes something else than `reference` (for a function: the
    model it is called with), or changes its input; [] if nothing does."""
    model = reference if COMPONENTS[kind].build is None else None
    changed = _changed_input(kind, yours, inputs, model, path)
    return changed + _diagnose_outputs(kind, reference, yours, inputs, path)


def _diagnose_outputs(kind, reference, yours, inputs, path):
    spec = COMPONENTS[kind]
    model = reference if spec.build is None else None
    reference_outs = _outputs(spec.reference if model is not None else reference, inputs, model)
    your_outs = _outputs(yours, inputs, model)
    bad = [i for i, (y, r) in enumerate(zip(your_outs, reference_outs))
           if not same(y, r, tolerance(inputs[i]))]
    at = where(path, kind)
    if not bad:  # the same values; in the same dtype too, or the next layer may refuse them
        dtypes = {(y.dtype, r.dtype) for y, r in zip(your_outs, reference_outs)
                  if isinstance(y, torch.Tensor) and y.dtype != r.dtype}
        return [problem("wrong_dtype", where=at, yours=str(y).removeprefix("torch."),
                        expected=str(r).removeprefix("torch.")) for y, r in sorted(dtypes, key=str)][:1]

    def about(i):
        return {"where": at, "shape": shape(inputs[i][0]), "i": i + 1, "n": len(inputs)}

    raised = [i for i in bad if isinstance(your_outs[i], Raised)]
    if raised:  # their own error first; then what the inputs that ran say
        error = your_outs[raised[0]]
        found = [problem("raised", **about(raised[0]), error=error.error)]
        if error.at:
            found.append(problem("your_line", **error.at))
        matched = match(kind, reference, yours, inputs, at, model, your_outs)
        if matched:  # the same outputs, and errors on the same inputs (mask_not_cut, no_crop)
            return found + matched
        ran = [i for i in range(len(inputs)) if i not in raised]
        if ran and not set(ran) & set(bad):  # right wherever it runs
            inside = [f for f in parts(reference, yours) if f.code in DIAGNOSES] if model is None else []
            return found + (inside or [probe("right_elsewhere", where=at, shapes=names(
                shape(inputs[i][0]) for i in ran))])
        if set(ran) & set(bad):
            found += match(kind, reference, yours, [inputs[i] for i in ran], at, model,
                           [your_outs[i] for i in ran])
        if model is None:
            found += locate_and_diagnose(reference, yours, inputs[raised[0]], path, crashed=True)
        return found
    i = bad[0]
    if not isinstance(your_outs[i], torch.Tensor):
        if model is not None and isinstance(your_outs[i], list):
            code = "returns_list"
        elif your_outs[i] is not None:
            code = "not_tensor"
        elif spec.build:
            code = "returns_none"
        else:
            code = "returns_none_function"
        return [problem(code, where=at, kind=type(your_outs[i]).__name__)]
    if not same(_outputs(yours, inputs[i:i + 1], model)[0], your_outs[i], 0):  # random
        if model is not None:
            return [problem("random_ids", where=at)]
        if dropout_rates(yours, inputs[i]):
            return [problem("random_in_eval", where=at)]
        return [problem("random_draws", where=at)]
    matched = match(kind, reference, yours, inputs, at, model, your_outs)
    if matched:
        return matched
    located = [] if model is not None else locate_and_diagnose(reference, yours, inputs[i], path)
    if your_outs[i].shape != reference_outs[i].shape:
        return [probe("wrong_shape", **about(i), yours=shape(your_outs[i]),
                      expected=shape(reference_outs[i]))] + located
    if any(f.kind in ("diagnosis", "probe") for f in located):
        return located
    return located + look(kind, reference, yours, inputs, at, model)


def _changed_input(kind, yours, inputs, model, path):
    """A finding if yours, or a submodule of it, changes its input in place."""
    at = where(path, kind)
    for i, args in enumerate(inputs):
        if model is not None:
            if changes_input(yours, (model, *args)) == 1:
                return [problem("changes_idx", where=at)]
            continue
        if changes_input(yours, args) is None:
            continue
        name = first_to_change_its_input(yours, args)
        if name:
            at = where(join(path, name), type(yours.get_submodule(name)).__name__)
        return [problem("changes_input", where=at, shape=shape(args[0]), i=i + 1, n=len(inputs))]
    return []


def parts(reference, yours):
    """Findings for the first chapter component inside that differs on inputs of its own.

    Inside a model a part only sees the inputs the model gives it; its own inputs (rows with a
    mean of 100 for a layer norm, say) can show a mistake that those hide.
    """
    your_modules = dict(yours.named_modules())
    for name, part in reference.named_modules():
        kind = type(part).__name__
        if not name or kind not in COMPONENTS or not COMPONENTS[kind].alone:
            continue
        if name in your_modules:
            found = diagnose(kind, part, your_modules[name], inputs_for(kind, part), name)
            if found:
                return [problem("part_alone", where=where(name, kind))] + found
    return []


def inputs_for(kind, module):
    """Inputs sized for a built module: up to MODEL_TOKENS tokens, so GPT-2 stays quick."""
    if kind == "GPTModel":
        vocab, context = module.tok_emb.num_embeddings, module.pos_emb.num_embeddings
        return planted.token_inputs({"vocab_size": vocab,
                                     "context_length": min(context, MODEL_TOKENS)})
    first = next((m for m in module.modules() if isinstance(m, (nn.Linear, nn.LayerNorm))), None)
    width = first.normalized_shape[0] if isinstance(first, nn.LayerNorm) else getattr(
        first, "in_features", None)
    if width is None:  # LayerNorm or GELU: no nn.Linear inside
        scale = getattr(module, "scale", None)
        width = scale.numel() if isinstance(scale, torch.Tensor) else CONFIG["emb_dim"]
    masks = [b for n, b in module.named_buffers() if n.endswith("mask")]
    context = min(masks[0].shape[-1], MODEL_TOKENS) if masks else CONFIG["context_length"]
    return COMPONENTS[kind].inputs({"emb_dim": width, "context_length": context})

