"""Check a learner's own version of a chapter component against the chapter's, in gpt.py.

    check_component(LayerNorm)                  # prints feedback; the reference found by name
    review_component(MyNorm, reference=gpt.LayerNorm)   # returns Feedback(passed, text, codes)
    compare_models(my_model, gpt_model)         # two built models: where do they first differ?

`check_component` builds the learner's class and the reference with the same arguments and seed,
lines up their parameters by the book's names, copies the reference's weights into the learner's
module and runs both on the same inputs, in eval mode and, with one seed, in training mode. When
they differ it looks for the first submodule whose output differs and asks which known mistake
it behaves like: each mistake is planted into the reference (each Component's `mistakes`) and the learner's
output is compared with that mutant's, so a diagnosis never depends on how the code is written.
Nothing a learner passes makes a check raise; the texts live in exercises/messages.py.
"""

import copy
import functools
import math
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
from exercises.checks import Feedback, _say

SEED = 123
RTOL, ATOL = 1e-4, 1e-5  # float32 rewrites (F.layer_norm, einsum, SDPA) agree far closer
# A config small enough to check in milliseconds, with distinct sizes so that a mix-up shows:
# head_dim 4 against emb_dim 12, 3 heads, a context of 8 and a vocabulary of 64.
CONFIG = {"vocab_size": 64, "context_length": 8, "emb_dim": 12, "n_heads": 3, "n_layers": 2,
          "drop_rate": 0.25, "qkv_bias": False}
FUSED_QKV = ("qkv", "W_qkv", "c_attn")  # accepted names of one (3 * d_out, d_in) projection
ALIASES = {"scale": "weight", "shift": "bias"}  # nn.LayerNorm's names for LayerNorm's


# ---- the chapter's components: how to build them, feed them and break them --------------------


def _vector_inputs(cfg, n):
    g = torch.Generator().manual_seed(SEED)
    d, t = cfg["emb_dim"], cfg["context_length"]
    return [(torch.randn(2, t, d, generator=g),),  # the usual scale
            (2 * torch.randn(2, max(t - 3, 1), d, generator=g) + 0.5,),  # shorter, shifted
            (0.01 * torch.randn(2, t, d, generator=g),)][:n]  # a tiny variance: eps matters


def _token_inputs(cfg):
    g = torch.Generator().manual_seed(SEED)
    v, t = cfg["vocab_size"], cfg["context_length"]
    return [(torch.randint(0, v, (2, t), generator=g),),
            (torch.randint(0, v, (2, 3), generator=g),),
            (torch.randint(0, t, (2, t), generator=g),)]  # ids < context_length: see pos_from_ids


def _generation_inputs(cfg):
    """(idx, max_new_tokens, context_size); the second needs cropping to the last 4 ids."""
    g = torch.Generator().manual_seed(SEED)
    v, t = cfg["vocab_size"], cfg["context_length"]
    return [(torch.randint(0, v, (2, 3), generator=g), 4, t),
            (torch.randint(0, v, (2, t - 2), generator=g), 5, t // 2)]


def _layer_norm(m, x, *, unbiased=False, eps="inside", center=True, root=True, dim=-1,
                affine=True, eps_value=None):
    eps_value = m.eps if eps_value is None else eps_value
    mean = x.mean(dim=dim, keepdim=True) if center else 0
    var = x.var(dim=dim, keepdim=True, unbiased=unbiased)
    spread = torch.sqrt(var) if root else var
    spread = {"inside": torch.sqrt(var + eps_value) if root else var + eps_value,
              "outside": spread + eps_value, "none": spread}[eps]
    norm_x = (x - mean) / spread
    return m.scale * norm_x + m.shift if affine else norm_x


TANH_CONSTANT = math.sqrt(2 / math.pi)


def _gelu_tanh(x, constant=TANH_CONSTANT, half=0.5):
    return half * x * (1 + torch.tanh(constant * (x + 0.044715 * x**3)))


def _feed_forward(m, x, activation):
    first, _, second = m.layers
    return second(activation(first(x)))


def _attention(m, x, *, diagonal=1, cut_mask=True, scale="head_dim", softmax_dim=-1,
               split="transpose", merge="transpose", out_proj=True, mask="before"):
    b, t, _ = x.shape
    h, hd = m.num_heads, m.head_dim

    def heads(y):
        if split == "view":  # (b, h, t, hd) read straight out of (b, t, d_out)
            return y.view(b, h, t, hd)
        return y.view(b, t, h, hd).transpose(1, 2)

    q, k, v = heads(m.W_query(x)), heads(m.W_key(x)), heads(m.W_value(x))
    scores = q @ k.transpose(2, 3)
    n = m.mask.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(
        diagonal if diagonal is not None else n)
    causal = causal[:t, :t] if cut_mask else causal
    divisor = {"head_dim": hd**0.5, "d_out": m.d_out**0.5, "no_sqrt": hd, "none": 1}[scale]
    if mask == "before":
        scores = scores.masked_fill(causal, -torch.inf)
    weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if mask == "after":  # zeroed after the softmax: the rows no longer sum to 1
        weights = weights.masked_fill(causal, 0.0)
    context = weights @ v
    context = context.transpose(1, 2) if merge == "transpose" else context
    context = context.contiguous().view(b, t, m.d_out)
    return m.out_proj(context) if out_proj else context


def _block(m, x, *, order="pre", att_shortcut=1, ff_shortcut=1, second_norm="norm2"):
    norm2 = getattr(m, second_norm)
    if order == "post":
        x = m.norm1(x + m.drop_shortcut(m.att(x)))
        return norm2(x + m.drop_shortcut(m.ff(x)))
    if order == "after_norm":  # the shortcut taken from the normalized x
        x = m.norm1(x)
        x = x + m.drop_shortcut(m.att(x))
        x = norm2(x)
        return x + m.drop_shortcut(m.ff(x))
    x = att_shortcut * x + m.drop_shortcut(m.att(m.norm1(x)))
    return ff_shortcut * x + m.drop_shortcut(m.ff(norm2(x)))


def _gpt(m, idx, *, positions="arange", final_norm=True, head="out_head", softmax=False):
    t = idx.shape[1]
    x = m.tok_emb(idx)
    if positions == "arange":
        x = x + m.pos_emb(torch.arange(t, device=idx.device))
    elif positions == "ids":
        x = x + m.pos_emb(idx)
    x = m.trf_blocks(m.drop_emb(x))
    x = m.final_norm(x) if final_norm else x
    logits = m.out_head(x) if head == "out_head" else x @ m.tok_emb.weight.T
    return torch.softmax(logits, dim=-1) if softmax else logits


def _generate(model, idx, max_new_tokens, context_size, *, crop="last", position=-1, axis=-1):
    for _ in range(max_new_tokens):
        idx_cond = {"last": idx[:, -context_size:], "first": idx[:, :context_size],
                    "none": idx}[crop]
        with torch.no_grad():
            logits = model(idx_cond)[:, position, :]
        idx_next = torch.argmax(torch.softmax(logits, dim=-1), dim=axis, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _mistakes(function, **variants):
    """{code: mutant(module, *inputs)}: `function` with one keyword changed per code."""
    return {code: functools.partial(function, **change) for code, change in variants.items()}


class Component(NamedTuple):
    reference: object  # the class or function in gpt.py
    signature: str  # as the chapter calls it, for the wrong-signature message
    build: object  # build(cls, cfg) -> module (None for a function)
    inputs: object  # inputs(cfg) -> [args, ...]
    mistakes: dict  # {diagnosis code: mutant(reference module, *args)}
    dropout: bool  # whether the chapter's version applies dropout in training mode


COMPONENTS = {
    "LayerNorm": Component(
        gpt.LayerNorm, "LayerNorm(emb_dim)", lambda cls, cfg: cls(cfg["emb_dim"]),
        lambda cfg: _vector_inputs(cfg, 3),
        _mistakes(_layer_norm, ln_unbiased={"unbiased": True}, ln_eps_outside={"eps": "outside"},
                  ln_no_eps={"eps": "none"}, ln_no_sqrt={"root": False},
                  ln_no_centering={"center": False}, ln_wrong_axis={"dim": -2},
                  ln_no_affine={"affine": False}),
        False),
    "GELU": Component(
        gpt.GELU, "GELU()", lambda cls, cfg: cls(), lambda cfg: _vector_inputs(cfg, 2),
        {"gelu_erf": lambda m, x: F.gelu(x), "gelu_relu": lambda m, x: F.relu(x),
         "gelu_constant": lambda m, x: _gelu_tanh(x, constant=2 / math.pi),
         "gelu_no_half": lambda m, x: _gelu_tanh(x, half=1.0)},
        False),
    "FeedForward": Component(
        gpt.FeedForward, "FeedForward(cfg)", lambda cls, cfg: cls(cfg),
        lambda cfg: _vector_inputs(cfg, 2),
        {"ff_relu": functools.partial(_feed_forward, activation=F.relu),
         "gelu_erf": functools.partial(_feed_forward, activation=F.gelu),
         "ff_no_activation": functools.partial(_feed_forward, activation=lambda x: x)},
        False),
    "MultiHeadAttention": Component(
        gpt.MultiHeadAttention,
        "MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)",
        lambda cls, cfg: cls(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"],
                             context_length=cfg["context_length"], dropout=cfg["drop_rate"],
                             num_heads=cfg["n_heads"], qkv_bias=cfg["qkv_bias"]),
        lambda cfg: _vector_inputs(cfg, 2),
        _mistakes(_attention, no_mask={"diagonal": None},
                  mask_includes_diagonal={"diagonal": 0}, mask_leaks_one={"diagonal": 2},
                  mask_not_cut={"cut_mask": False}, mask_after_softmax={"mask": "after"},
                  no_scaling={"scale": "none"}, scale_d_out={"scale": "d_out"},
                  scale_no_sqrt={"scale": "no_sqrt"}, softmax_wrong_axis={"softmax_dim": -2},
                  softmax_heads_axis={"softmax_dim": 1}, split_no_transpose={"split": "view"},
                  merge_no_transpose={"merge": "view"}, no_out_proj={"out_proj": False}),
        True),
    "TransformerBlock": Component(
        gpt.TransformerBlock, "TransformerBlock(cfg)", lambda cls, cfg: cls(cfg),
        lambda cfg: _vector_inputs(cfg, 2),
        _mistakes(_block, post_ln={"order": "post"}, shortcut_after_norm={"order": "after_norm"},
                  no_att_shortcut={"att_shortcut": 0}, no_ff_shortcut={"ff_shortcut": 0},
                  doubled_att_shortcut={"att_shortcut": 2},
                  doubled_ff_shortcut={"ff_shortcut": 2}, one_norm={"second_norm": "norm1"}),
        True),
    "GPTModel": Component(
        gpt.GPTModel, "GPTModel(cfg)", lambda cls, cfg: cls(cfg), _token_inputs,
        _mistakes(_gpt, no_final_norm={"final_norm": False}, pos_from_ids={"positions": "ids"},
                  no_positions={"positions": "none"}, tied_head={"head": "tok_emb"},
                  softmax_output={"softmax": True}),
        True),
    "generate_text_simple": Component(
        gpt.generate_text_simple, "generate_text_simple(model, idx, max_new_tokens, context_size)",
        None, _generation_inputs,
        _mistakes(_generate, no_crop={"crop": "none"}, crop_first={"crop": "first"},
                  first_position={"position": 0}, argmax_wrong_axis={"axis": 0}),
        False),
}

DIAGNOSES = {code for spec in COMPONENTS.values() for code in spec.mistakes} | {"ln_eps_value"}
PARTS = ("LayerNorm", "GELU", "FeedForward", "MultiHeadAttention")  # checked alone in a model


# ---- running a module or function without letting it raise ------------------------------------


class Raised(NamedTuple):
    error: str  # "TypeName: message"


class NotAttempted(Exception):
    """The learner's code raised NotImplementedError: a stub not filled in yet."""


def _run(function, args):
    try:
        with torch.no_grad():
            return function(*args)
    except NotImplementedError as err:
        raise NotAttempted from err
    except Exception as err:  # a learner's code may fail in any way: that is a finding
        return Raised(f"{type(err).__name__}: {err}")


def _same(a, b):
    if isinstance(a, Raised) or isinstance(b, Raised):
        return isinstance(a, Raised) and isinstance(b, Raised)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False
    return torch.allclose(a.double(), b.double(), rtol=RTOL, atol=ATOL, equal_nan=True)


def _max_difference(a, b):
    return (a.double() - b.double()).abs().nan_to_num(nan=math.inf).max().item()


def _shape(out):
    return tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__


def _seeded(function, args, seed=SEED):
    torch.manual_seed(seed)
    return _run(function, args)


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


def _shape_problem(name, yours, expected):
    wider = yours.dim() == expected.dim() and any(
        e == 4 * y for e, y in zip(expected.shape, yours.shape))  # the 4x hidden layer
    return ("ff_no_expansion" if wider else "param_shape",
            {"name": name, "yours": tuple(yours.shape), "expected": tuple(expected.shape)})


def _align(reference, yours):
    """Pairs (your tensor, reference tensor), problems, and {your name: book name} for renames.

    Besides the book's names it accepts nn.LayerNorm's weight/bias for scale/shift and one
    fused query-key-value projection (FUSED_QKV) for W_query, W_key and W_value.
    """
    theirs = dict(yours.named_parameters())
    pairs, used, problems, renamed = [], set(), [], {}
    for name, param in reference.named_parameters():
        prefix, _, leaf = name.rpartition(".")
        alias = f"{prefix}.{ALIASES[leaf]}".lstrip(".") if leaf in ALIASES else None
        found = name if name in theirs else alias if alias in theirs else None
        fused = None if found else _fused_slice(theirs, name, param)
        if found:
            mine = theirs[found]
        elif fused:
            found, mine = fused
            name = f"{prefix.rpartition('.')[0]}.W_query/W_key/W_value.{leaf}".lstrip(".")
        else:
            problems.append(("missing_param", {"name": name}))
            continue
        used.add(found)
        if mine.shape != param.shape:
            problems.append(_shape_problem(found, mine, param))
            continue
        pairs.append((mine, param))
        if found != name:
            renamed[found] = name
    book = dict(reference.named_parameters())
    for n, p in theirs.items():
        if n in used:
            continue
        unbiased = n.endswith(".bias") and n[:-4] + "weight" in book  # a layer with bias=False
        problems.append(("extra_bias", {"name": n}) if unbiased else
                        ("extra_param", {"name": n, "shape": tuple(p.shape)}))
    if any(code == "ff_no_expansion" for code, _ in problems):  # one sentence says it all
        first = next(p for p in problems if p[0] == "ff_no_expansion")
        problems = [p for p in problems if p[0] != "ff_no_expansion" or p is first]
    if any(code in ("extra_param", "extra_bias") for code, _ in problems):
        problems.append(("align_first", {}))
    return pairs, problems, renamed


def _copy_weights(pairs):
    with torch.no_grad():
        for mine, reference in pairs:
            mine.copy_(reference)


def _perturb(module):
    """Random norm scales, shifts and biases, so that a step that skips them shows."""
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for param in module.parameters():
            if param.dim() == 1:
                param.add_(0.5 * torch.randn(param.shape, generator=g))


# ---- where two models first differ -------------------------------------------------------------


def _trace(model, args):
    """[(name, args, output)] for each submodule call that returned, in order, and
    (the innermost submodule that raised, Raised) or None."""
    returned, open_calls, raised, hooks = [], [], [], []

    def enter(name):
        open_calls.append(name)

    def leave(name, a, out):
        open_calls.remove(name)
        returned.append((name, a, out))

    for name, module in model.named_modules():
        if name:
            hooks.append(module.register_forward_pre_hook(lambda _m, _a, name=name: enter(name)))
            hooks.append(module.register_forward_hook(
                lambda _m, a, out, name=name: leave(name, a, out)))
    try:
        outcome = _run(model, args)
        if isinstance(outcome, Raised) and open_calls:
            raised.append((open_calls[-1], outcome))
    finally:
        for hook in hooks:
            hook.remove()
    return returned, (raised or [None])[0]


def _nth_calls(records):
    counts, keyed = {}, {}
    for name, args, out in records:
        k = counts[name] = counts.get(name, -1) + 1
        keyed[name, k] = args, out
    return keyed


def _first_difference(reference, yours, inputs):
    """(name, k, your output or Raised or None, reference output, input index) where yours
    first differs.

    Walks the reference's submodule calls in order; a name yours lacks (a fused projection,
    say) is skipped. None: every submodule output agrees.
    """
    names = dict(yours.named_modules())
    for i, args in enumerate(inputs):
        ref_records, _ = _trace(reference, args)
        my_records, raised_in = _trace(yours, args)
        mine, counts = _nth_calls(my_records), {}
        for name, _args, ref_out in ref_records:
            k = counts[name] = counts.get(name, -1) + 1
            if name not in names:
                continue
            if (name, k) not in mine:
                if raised_in is not None:
                    return raised_in[0], 0, raised_in[1], None, i
                if _same(_args[0], ref_out):
                    continue  # skipping an identity (dropout in eval mode) changes nothing
                called = {".".join(n.split(".")[:j]) for n, _ in mine
                          for j in range(1, n.count(".") + 2)}  # called, or a part of it was
                while "." in name and name.rpartition(".")[0] in names and (
                        name.rpartition(".")[0] not in called):
                    name = name.rpartition(".")[0]  # a whole skipped block, not its first part
                return name, k, None, ref_out, i
            if not _same(mine[name, k][1], ref_out):
                return name, k, mine[name, k][1], ref_out, i
    return None


def _captured_args(reference, name, k, inputs):
    """The arguments the reference's submodule `name` got at its k-th call, for every input."""
    return [_nth_calls(_trace(reference, args)[0])[name, k][0] for args in inputs]


def _enclosing(name):
    """`name` and the names of its ancestors, innermost first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


# ---- diagnosis ---------------------------------------------------------------------------------


def _mistakes_for(kind, spec, reference, yours):
    """{code: (mutant, message params)}: the planted mistakes, plus one made to measure: a
    layer norm whose own `eps` differs is tried with that value (and must then match)."""
    mistakes = {code: (mutant, {}) for code, mutant in spec.mistakes.items()}
    eps = getattr(yours, "eps", None)
    if kind == "LayerNorm" and isinstance(eps, (int, float)) and eps != reference.eps:
        mistakes["ln_eps_value"] = (functools.partial(_layer_norm, eps_value=eps), {"eps": eps})
    return mistakes


def _where(path, kind):
    return f"{path} ({kind})" if path else kind


def _diagnose(kind, reference, yours, inputs, path="", report=True):
    """Findings [(code, params)] where `yours` computes something else than `reference`.

    First the mistakes planted in the reference; then, inside a composite module, the first
    submodule output that differs; else what differs, generically. [] if nothing does.
    """
    spec = COMPONENTS[kind]
    if spec.build is None:  # a function: `reference` is the model it is called with
        ref_outs = [_run(spec.reference, (reference, *args)) for args in inputs]
        my_outs = [_run(yours, (reference, *args)) for args in inputs]
    else:
        ref_outs, my_outs = ([_run(m, args) for args in inputs] for m in (reference, yours))
    if all(_same(m, r) for m, r in zip(my_outs, ref_outs)):
        return []
    where = _where(path, kind)
    odd = [m for m in my_outs if not isinstance(m, (torch.Tensor, Raised))]
    if odd:
        code = "not_tensor" if odd[0] is not None else (
            "returns_none" if spec.build else "returns_none_function")
        return [(code, {"where": where, "kind": type(odd[0]).__name__})]
    matched = []
    for code, (mutant, params) in _mistakes_for(kind, spec, reference, yours).items():
        outs = [_run(mutant, (reference, *args)) for args in inputs]
        if all(_same(m, o) for m, o in zip(my_outs, outs)):
            matched.append((code, {"where": where, **params}))
    if matched:
        return matched
    if spec.build is not None and any(True for _ in reference.children()):
        found = _located(reference, yours, inputs, path, report)
        if found:
            return found
    i = next(i for i, (m, r) in enumerate(zip(my_outs, ref_outs)) if not _same(m, r))
    mine, ref_out = my_outs[i], ref_outs[i]
    about = {"where": where, "shape": _shape(inputs[i][0]), "i": i + 1, "n": len(inputs)}
    if isinstance(mine, Raised):
        return [("raised", {**about, "error": mine.error})]
    if mine.shape != ref_out.shape:
        return [("wrong_shape", {**about, "yours": _shape(mine), "expected": _shape(ref_out)})]
    if spec.build is None:  # token ids: their difference means nothing
        return [("ids_differ", about)]
    return [("values_differ", {**about, "difference": f"{_max_difference(mine, ref_out):.2g}"})]


def _located(reference, yours, inputs, path, report=True):
    """The first output that differs, then findings for the innermost chapter component there.

    `report`: start with a line naming that output (once, at the outermost call).
    """
    first = _first_difference(reference, yours, inputs)
    if first is None:
        return []
    name, k, mine, ref_out, i = first
    full = f"{path}.{name}" if path else name
    if mine is None:
        where = [("never_called", {"where": full})]
    elif isinstance(mine, Raised):
        where = [("raised_inside", {"where": full, "error": mine.error})]
    elif _shape(mine) != _shape(ref_out):
        where = [("first_difference_shape", {"where": full, "yours": _shape(mine),
                                             "expected": _shape(ref_out)})]
    else:
        where = [("first_difference", {"where": full, "shape": _shape(mine),
                                       "difference": f"{_max_difference(mine, ref_out):.2g}"})]
    ref_modules, my_modules = dict(reference.named_modules()), dict(yours.named_modules())
    generic = []
    for inner in _enclosing(name):
        kind = type(ref_modules[inner]).__name__
        if kind in COMPONENTS and inner in my_modules:
            sub_path = f"{path}.{inner}" if path else inner
            found = _diagnose(kind, ref_modules[inner], my_modules[inner],
                              _captured_args(reference, inner, k if inner == name else 0, inputs),
                              sub_path, report=False)
            if any(code in DIAGNOSES for code, _ in found):
                return where + found if report else found
            generic = generic or [f for f in found if f not in where]  # the innermost
    if not generic and isinstance(mine, torch.Tensor) and name in my_modules:
        args = _captured_args(reference, name, k, inputs[i:i + 1])[0]
        if _same(_run(my_modules[name], args), ref_out):  # right output for the right input
            parent = full.rpartition(".")[0] or type(yours).__name__
            generic = [("input_differs", {"where": full, "parent": parent})]
    return where + generic if report else generic or where


def _parts(reference, yours):
    """Findings for the first chapter component inside that differs on inputs of its own.

    Inside a model a part only sees the inputs the model gives it; its own inputs (a tiny
    variance for a layer norm, say) can show a mistake that those hide.
    """
    mine = dict(yours.named_modules())
    for name, part in reference.named_modules():
        kind = type(part).__name__
        if name and kind in PARTS and name in mine:
            found = _diagnose(kind, part, mine[name], _inputs_for(kind, part), name, report=False)
            if found:
                return [("part_alone", {"where": f"{name} ({kind})"})] + found
    return []


def _dropout_calls(model, args):
    """The names of the nn.Dropout modules with p > 0 that one training-mode call runs."""
    return [name for name, _, _ in _trace(model, args)[0]
            if isinstance(model.get_submodule(name), nn.Dropout) and model.get_submodule(name).p]


def _training(kind, reference, yours, inputs, rebuild):
    """Findings for training mode, once eval mode agrees. `rebuild(drop_rate)` -> both again.

    Dropout draws the same random numbers in the same order only where it is applied as the
    chapter applies it, so with one seed the outputs must match exactly.
    """
    reference.train(), yours.train()
    try:
        ref_outs = [_seeded(reference, args) for args in inputs]
        my_outs = [_seeded(yours, args) for args in inputs]
        if all(_same(m, r) for m, r in zip(my_outs, ref_outs)):
            return []
        where = {"where": kind}
        if not COMPONENTS[kind].dropout:
            return [("dropout_extra", where)]
        mine, theirs = _dropout_calls(yours, inputs[0]), _dropout_calls(reference, inputs[0])
        extra, missing = _minus(mine, theirs), _minus(theirs, mine)
        if extra:
            return [("dropout_extra_at", {**where, "names": ", ".join(extra)})]
        if all(_same(_seeded(yours, args, SEED + 1), m) for args, m in zip(inputs, my_outs)):
            return [("no_dropout", where)]
        if missing:
            return [("no_dropout_at", {**where, "names": ", ".join(missing)})]
    finally:
        reference.eval(), yours.eval()
    ref_off, mine_off = rebuild(0.0)
    ref_off.train(), mine_off.train()
    if all(_same(_seeded(mine_off, args), _seeded(ref_off, args)) for args in inputs):
        return [("dropout_elsewhere", {**where, "sites": _say(f"sites_{kind}")})]
    return [("training_differs", where)]


def _minus(names, others):
    """The names in `names` left after taking out each of `others` once."""
    left = list(names)
    for name in others:
        if name in left:
            left.remove(name)
    return left


def _build(spec, cls, cfg):
    torch.manual_seed(SEED)
    return spec.build(cls, cfg)


def _prepare(spec, reference, yours, cfg):
    """Both modules built from `cfg`, the reference's weights copied into yours, and findings."""
    ref_module = _build(spec, reference, cfg)
    _perturb(ref_module)
    try:
        module = _build(spec, yours, cfg)
    except NotImplementedError as err:
        raise NotAttempted from err
    except TypeError as err:
        return ref_module, None, [("wrong_signature", {"signature": spec.signature,
                                                         "error": str(err)})], {}
    except Exception as err:
        return ref_module, None, [("build_failed", {"error": f"{type(err).__name__}: {err}"})], {}
    if not isinstance(module, nn.Module):
        return ref_module, None, [("component_not_module", {"kind": type(module).__name__})], {}
    if any(t.is_meta for t in [*module.parameters(), *module.buffers()]):
        return ref_module, None, [("on_meta", {})], {}
    pairs, problems, renamed = _align(ref_module, module)
    _copy_weights(pairs)
    return ref_module, module, problems, renamed


def _unaligned(problems):
    """Weights the check could not copy make any comparison of outputs meaningless."""
    return any(code != "missing_param" for code, _ in problems)


def _renamed(renamed):
    return [("renamed", {"names": ", ".join(f"{a} → {b}" for a, b in renamed.items())})
            ] if renamed else []


def _review_class(kind, spec, reference, yours):
    ref_module, module, problems, renamed = _prepare(spec, reference, yours, CONFIG)
    if module is None:
        return problems, []
    inputs = spec.inputs(CONFIG)
    module.eval()
    _run(module, inputs[0])  # a stub raises NotImplementedError here
    notes = _renamed(renamed)
    if _unaligned(problems):
        return problems, notes
    findings = _diagnose(kind, ref_module.eval(), module, inputs) or _parts(ref_module, module)
    if findings or problems:
        return problems + findings, notes

    def rebuild(drop_rate):
        ref_off, off, _, _ = _prepare(spec, reference, yours, {**CONFIG, "drop_rate": drop_rate})
        return ref_off, off

    return _training(kind, ref_module, module, inputs, rebuild), notes


def _review_function(spec, yours):
    if isinstance(yours, type):
        return [("expected_function", {"name": yours.__name__})], []
    torch.manual_seed(SEED)
    model = gpt.GPTModel(CONFIG).eval()
    _perturb(model)
    inputs = spec.inputs(CONFIG)
    _run(yours, (model, *inputs[0]))  # a stub raises NotImplementedError here
    outs = [_run(yours, (model, *args)) for args in inputs]
    if any(isinstance(out, list) for out in outs):
        return [("returns_list", {})], []
    return _diagnose("generate_text_simple", model, yours, inputs), []


def _kind_of(yours, reference):
    """(kind, reference, None) or (None, None, a finding that explains why there is none)."""
    if reference is None:
        name = getattr(yours, "__name__", None)
        if name in COMPONENTS:
            return name, COMPONENTS[name].reference, None
        return None, None, ("unknown_component", {"name": str(name), "names": ", ".join(COMPONENTS)})
    name = getattr(reference, "__name__", None)
    if name not in COMPONENTS:
        return None, None, ("unknown_reference", {"name": str(name),
                                                  "names": ", ".join(COMPONENTS)})
    return name, reference, None


def _render(findings, notes, success):
    lines = [_say(code, **params) for code, params in notes]
    if not findings:
        return Feedback(True, "\n".join([success] + lines), ("correct_component",))
    texts = [_say(code, **params) for code, params in findings]
    diagnoses = [i for i, (code, _) in enumerate(findings) if code in DIAGNOSES]
    if len(diagnoses) > 1:  # one behaviour that several mistakes produce
        where, first = findings[diagnoses[0]][1]["where"], diagnoses[0]
        texts[first:] = [_say("several_mistakes", where=where, n=len(diagnoses))] + [
            _say("numbered", i=i, text=texts[j]) for i, j in enumerate(diagnoses, 1)]
    body = [_say("not_quite")] + [f"  - {t}" for t in texts] + lines
    return Feedback(False, "\n".join(body), tuple(dict.fromkeys(code for code, _ in findings)))


def _single(code, **params):
    return Feedback(False, _say(code, **params), (code,))


def review_component(yours, reference=None):
    """Feedback(passed, text, codes) on `yours`, a chapter class or generate_text_simple."""
    if yours is None:
        return _single("not_attempted_component")
    if isinstance(yours, nn.Module):
        return _single("pass_class", kind=type(yours).__name__)
    if not callable(yours):
        return _single("not_component", kind=type(yours).__name__)
    kind, reference, why = _kind_of(yours, reference)
    if why:
        return _single(*why[:1], **why[1])
    spec = COMPONENTS[kind]
    name = getattr(yours, "__name__", kind)
    try:
        if spec.build is None:
            findings, notes = _review_function(spec, yours)
        elif not isinstance(yours, type):
            return _single("expected_class", name=name, kind=kind)
        else:
            findings, notes = _review_class(kind, spec, reference, yours)
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort: the diagnoses handle every input we know of
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    success = _say("correct_function" if spec.build is None else "correct_component",
                   name=name, reference=kind)
    return _render(findings, notes, success)


def check_component(yours, reference=None):
    """Print feedback on `yours`, a chapter class or generate_text_simple (see review_component)."""
    print(review_component(yours, reference).text)


# ---- two built models --------------------------------------------------------------------------


def _inputs_for(kind, module):
    """Inputs sized for a built module: at most 8 tokens, so GPT-2-sized models stay cheap."""
    if kind == "GPTModel":
        vocab, context = module.tok_emb.num_embeddings, module.pos_emb.num_embeddings
        return _token_inputs({"vocab_size": vocab, "context_length": min(context, 8)})
    width = next((m.normalized_shape[0] if isinstance(m, nn.LayerNorm) else m.in_features
                  for m in module.modules() if isinstance(m, (nn.Linear, nn.LayerNorm))), None)
    if width is None:  # LayerNorm or GELU: no nn.Linear inside
        scale = getattr(module, "scale", None)
        width = scale.numel() if isinstance(scale, torch.Tensor) else CONFIG["emb_dim"]
    masks = [b for n, b in module.named_buffers() if n.endswith("mask")]
    context = min(masks[0].shape[-1], 8) if masks else CONFIG["context_length"]
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
        return _single("unknown_reference", name=kind, names=", ".join(COMPONENTS))
    was_training = reference.training
    try:
        device = next(reference.parameters(), torch.empty(0)).device
        yours = copy.deepcopy(yours).to(device)  # your model keeps its own weights
        pairs, problems, renamed = _align(reference, yours)
        _copy_weights(pairs)
        inputs = [tuple(a.to(device) for a in args) for args in _inputs_for(kind, reference)]
        _run(yours.eval(), inputs[0])
        findings = [] if _unaligned(problems) else (
            _diagnose(kind, reference.eval(), yours, inputs) or _parts(reference, yours))
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort, as in review_component
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    finally:
        reference.train(was_training)
    return _render(problems + findings, _renamed(renamed), _say("same_models", reference=kind))


def compare_models(yours, reference):
    """Print where `yours` (a built model) first computes something else than `reference`."""
    print(review_models(yours, reference).text)
