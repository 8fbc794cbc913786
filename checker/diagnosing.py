"""Diagnosing: where the learner's outputs differ from the chapter's and why, in steps: their own
error, no tensor, random draws, then a known mistake that gives the same outputs (matching.py),
else the first module that differs (locating.py) and a probe, a concrete look at it. Judged by
behaviour, never by the source."""

import copy
import re
from typing import NamedTuple

import torch
import torch.nn as nn

from checker import planted
from checker.feedback import names, probe, problem, say
from checker.locating import enclosing, first_to_change_its_input, locate
from checker.matching import match, outputs
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
    """[0, 1, 2, 3, 7] -> "0..3, 7" (each language writes a span its own way)."""
    starts = [k for k in keys if k - 1 not in keys]
    ends = [k for k in keys if k + 1 not in keys]
    return names(say("span", a=a, b=b) if b > a else a for a, b in zip(starts, ends)) or "-"


class Outputs(NamedTuple):
    """One comparison of outputs: what each side returned on each input, and where."""
    kind: str
    reference: object  # the chapter's module; for a function, the model it is called with
    yours: object
    inputs: list
    path: str
    model: object  # the model a function is called with, else None
    yours_out: list
    reference_out: list

    @property
    def at(self):
        return where(self.path, self.kind)

    def about(self, i):
        return {"where": self.at, "shape": shape(self.inputs[i][0]), "i": i + 1,
                "n": len(self.inputs)}

    def differing(self):
        """The indices of the inputs on which the outputs differ."""
        return [i for i, (y, r) in enumerate(zip(self.yours_out, self.reference_out))
                if not same(y, r, tolerance(self.inputs[i]))]


def _outputs(kind, reference, yours, inputs, path, model):
    """Outputs: each side's on every input; a function's beside the chapter's function's, both
    called with `model`."""
    chapter = reference if model is None else COMPONENTS[kind].reference
    return Outputs(kind, reference, yours, inputs, path, model, outputs(yours, inputs, model),
                   outputs(chapter, inputs, model))


def _wrong_shape(o, i):
    """[a probe] if yours returns no tensor, or one of another shape, on input i; else []."""
    yours_i, reference_i = o.yours_out[i], o.reference_out[i]
    if isinstance(yours_i, torch.Tensor) and yours_i.shape == reference_i.shape:
        return []
    return [probe("wrong_shape", **o.about(i), yours=shape(yours_i), expected=shape(reference_i))]


def look(o, i):
    """A probe: a concrete look at input i, the first whose outputs differ, for when no known
    mistake fits."""
    wrong_shape = _wrong_shape(o, i)
    if wrong_shape:
        return wrong_shape
    about, at, args = o.about(i), o.at, o.inputs[i]
    yours_i, reference_i = o.yours_out[i], o.reference_out[i]
    if o.kind == "GELU":
        x = torch.arange(-3.0, 4.0)
        outs = [run(m, (x,)) for m in (o.yours, o.reference)]
        if all(isinstance(out, torch.Tensor) and out.shape == x.shape for out in outs):
            return [probe("probe_gelu", where=at, yours=names(map(number, outs[0])),
                          expected=names(map(number, outs[1])))]
    if o.kind == "LayerNorm":
        outs = [run(_unit(m), args) for m in (o.yours, o.reference)]
        if same(*outs, tolerance(args)):  # the normalizing agrees: scale and shift differ
            return [probe("probe_affine", where=at)]
        if all(isinstance(out, torch.Tensor) and out.dim() > 1 for out in outs):
            rows = [out.reshape(-1, out.shape[-1])[0].double() for out in outs]
            return [probe("probe_norm", **about, mean=number(rows[0].mean()),
                          var=number(rows[0].var(unbiased=False)),
                          expected_var=number(rows[1].var(unbiased=False)))]
    if o.model is not None:  # token ids: the first new one that differs
        row, col = (yours_i != reference_i).nonzero()[0].tolist()
        start = args[0].shape[1]
        return [probe("probe_ids", **about, step=col - start + 1, row=row,
                      yours=yours_i[row, col].item(), expected=reference_i[row, col].item())]
    nan = yours_i.isnan() & ~reference_i.isnan() if yours_i.is_floating_point() else None
    if nan is not None and nan.any() and yours_i.dim() == 3:
        position = nan.any(dim=2).any(dim=0).nonzero()[0].item()
        return [probe("probe_nan", **about, position=position, length=yours_i.shape[1])]
    if o.kind == "MultiHeadAttention":
        seen = [_keys_seen(m, o.inputs[0][0]) for m in (o.yours, o.reference)]
        if seen[0] is not None and not torch.equal(*seen):
            q = (seen[0] != seen[1]).any(dim=1).nonzero()[0].item()
            return [probe("probe_keys", where=at, query=q,
                          yours=_spans(seen[0][q].nonzero().flatten().tolist()),
                          expected=_spans(seen[1][q].nonzero().flatten().tolist()))]
    difference = gap(yours_i, reference_i)
    if yours_i.dim() == 3 and o.kind != "FeedForward":
        position = (difference.amax(dim=(0, 2)) > tolerance(args)).nonzero()[0].item()
        return [probe("probe_position", **about, position=position, length=yours_i.shape[1],
                      difference=f"{difference.max().item():.2g}")]
    index = tuple((difference > tolerance(args)).nonzero()[0].tolist())
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
    steps = [(outer, _match_alone) for outer in enclosing(located.culprit)[:-1]]
    for outer, step in steps + [(located.culprit, _look_alone)]:
        kind = type(reference_modules[outer]).__name__
        if kind not in COMPONENTS or outer not in your_modules:
            continue
        own = [a for n, a, _ in located.reference_calls if n == outer]
        found = found + step(kind, reference_modules[outer], your_modules[outer], own,
                             join(path, outer))
        if found[-1].code in DIAGNOSES:
            return found
    return found


def _match_alone(kind, reference, yours, inputs, path):
    """The known mistakes that give a submodule's outputs on the inputs the chapter gives it."""
    return match(kind, reference, yours, inputs, where(path, kind))


def _look_alone(kind, reference, yours, inputs, path):
    """A probe of a submodule at the first input (of those the chapter gives it) where it
    computes something else."""
    o = _outputs(kind, reference, yours, inputs, path, model=None)
    return look(o, o.differing()[0])


def compare(kind, reference, yours, inputs, path=""):
    """Findings where `yours` computes something else than `reference` (for a function: the
    model it is called with), or changes its input; [] if nothing does."""
    model = reference if COMPONENTS[kind].build is None else None
    changed = _changed_input(kind, yours, inputs, model, path)
    return changed + _compare_outputs(kind, reference, yours, inputs, path, model)


def _compare_outputs(kind, reference, yours, inputs, path, model):
    """The steps, in order: the same values (then the dtype); your own error; something that is
    no tensor; random draws in eval mode; a named mistake, else where it differs and a probe."""
    o = _outputs(kind, reference, yours, inputs, path, model)
    bad = o.differing()
    if not bad:
        return _dtype(o)
    if any(isinstance(o.yours_out[i], Raised) for i in bad):
        return _raised(o, bad)
    i = bad[0]
    if not isinstance(o.yours_out[i], torch.Tensor):
        return _not_a_tensor(o, o.yours_out[i])
    if not same(outputs(yours, inputs[i:i + 1], model)[0], o.yours_out[i], 0):
        return _random(o, i)
    return _named_or_probed(o, i)


def _dtype(o):
    """The same values; in the same dtype too, or the next layer may refuse them."""
    dtypes = {(y.dtype, r.dtype) for y, r in zip(o.yours_out, o.reference_out)
              if isinstance(y, torch.Tensor) and y.dtype != r.dtype}
    return [problem("wrong_dtype", where=o.at, yours=str(y).removeprefix("torch."),
                    expected=str(r).removeprefix("torch.")) for y, r in sorted(dtypes, key=str)][:1]


def _raised(o, bad):
    """Your own error first, with your line; then what the inputs that ran say."""
    raised = [i for i in bad if isinstance(o.yours_out[i], Raised)]
    error = o.yours_out[raised[0]]
    found = [problem("raised", **o.about(raised[0]), error=error.error)]
    if error.at:
        found.append(problem("your_line", **error.at))
        found += _fixed_length(o, raised[0], error)
    matched = match(o.kind, o.reference, o.yours, o.inputs, o.at, o.model, o.yours_out)
    if matched:  # the same outputs, and the same errors on the same inputs (mask_not_cut)
        return found + matched
    ran = [i for i in range(len(o.inputs)) if i not in raised]
    if ran and not set(ran) & set(bad):  # right wherever it runs
        inside = [f for f in parts(o.reference, o.yours) if f.code in DIAGNOSES] if (
            o.model is None) else []
        return found + (inside or [probe("right_elsewhere", where=o.at, shapes=names(
            shape(o.inputs[i][0]) for i in ran))])
    if set(ran) & set(bad):
        found += match(o.kind, o.reference, o.yours, [o.inputs[i] for i in ran], o.at, o.model,
                       [o.yours_out[i] for i in ran])
    if o.model is None:
        found += locate_and_diagnose(o.reference, o.yours, o.inputs[raised[0]], o.path,
                                     crashed=True)
    return found


RESHAPE = re.compile(r"shape '\[([-\d, ]+)\]' is invalid for input of size")


def _fixed_length(o, i, error):
    """A reshape (view or reshape) on a short input to a shape holding the longest input's
    number of tokens, as read from the error: the context length written in."""
    reshape = RESHAPE.search(error.error)
    lengths = [args[0].shape[1] for args in o.inputs if args[0].dim() > 1]
    if reshape is None or not lengths:
        return []
    sizes = [int(n) for n in reshape.group(1).split(",")]
    tokens, full = o.inputs[i][0].shape[1], max(lengths)
    if tokens == full or full not in sizes or tokens in sizes:
        return []
    return [problem("reshape_fixed_length", where=o.at, tokens=tokens, full=full,
                    shape=reshape.group(1))]


def _not_a_tensor(o, out):
    if o.model is not None and isinstance(out, list):
        code = "returns_list"
    elif out is not None:
        code = "not_tensor"
    else:
        code = "returns_none" if o.model is None else "returns_none_function"
    return [problem(code, where=o.at, kind=type(out).__name__)]


def _random(o, i):
    """Two runs on one input differ in eval mode: dropout left on, or other random draws."""
    if o.model is not None:
        return [problem("random_ids", where=o.at)]
    if dropout_rates(o.yours, o.inputs[i]):
        return [problem("random_in_eval", where=o.at)]
    return [problem("random_draws", where=o.at)]


def _named_or_probed(o, i):
    """A planted mistake that gives your outputs; else the module where they first differ, a
    mistake of its own, or a probe of it (or of the whole)."""
    matched = match(o.kind, o.reference, o.yours, o.inputs, o.at, o.model, o.yours_out)
    if matched:
        return matched
    located = [] if o.model is not None else locate_and_diagnose(o.reference, o.yours,
                                                                 o.inputs[i], o.path)
    wrong_shape = _wrong_shape(o, i)
    if wrong_shape:
        return wrong_shape + located
    if any(f.kind in ("diagnosis", "probe") for f in located):
        return located
    return located + look(o, i)


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
            found = compare(kind, part, your_modules[name], inputs_for(kind, part), name)
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

