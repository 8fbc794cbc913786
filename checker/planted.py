"""The chapter's components as the component checker (checker/components.py) sees them: one
record each, with how to build it, which inputs to feed it, and the mistakes to plant into it.

A mistake is a mutant of the chapter's code: `layer_norm(m, x)` computes what gpt.LayerNorm
does, and `layer_norm(m, x, unbiased=True)` the same with one known mistake. A learner's module
whose outputs equal a mutant's on every input gets that mistake's message (checker/messages.py).
"""

import functools
import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

import gpt

SEED = 123
# Small enough to check in milliseconds, with distinct sizes so that a mix-up shows: head_dim 4
# against emb_dim 12, 3 heads, a vocabulary of 64, a context of 24 (well past 8 positions).
CONFIG = {"vocab_size": 64, "context_length": 24, "emb_dim": 12, "n_heads": 3, "n_layers": 2,
          "drop_rate": 0.25, "qkv_bias": False}
D_OUT = 18  # attention checked alone maps 12 features to 18: nn.Linear(d_out, d_in) shows


def _vector_inputs(cfg, norm=False):
    """The full context, a shorter input, and for a norm rows with a variance below eps (1e-6,
    where adding eps and flooring at eps part ways) and rows with a mean of 100 (where a one-pass
    variance cancels); the two rows of each batch differ."""
    g = torch.Generator().manual_seed(SEED)
    d, t = cfg["emb_dim"], cfg["context_length"]
    inputs = [torch.randn(2, t, d, generator=g), 2 * torch.randn(2, max(t // 3, 1), d, generator=g)
              + 0.5, 0.001 * torch.randn(2, t, d, generator=g), torch.randn(2, t, d, generator=g)
              + torch.tensor([[[100.0]], [[-30.0]]])]
    return [(x,) for x in inputs[:4 if norm else 2]]


def token_inputs(cfg):
    g = torch.Generator().manual_seed(SEED)
    v, t = cfg["vocab_size"], cfg["context_length"]
    return [(torch.randint(0, v, (2, t), generator=g),),
            (torch.randint(0, v, (2, 3), generator=g),),
            (torch.randint(0, t, (2, t), generator=g),)]  # ids < context_length: see pos_from_ids


def _generation_inputs(cfg):
    """(idx, max_new_tokens, context_size); the second needs cropping to the last ids."""
    g = torch.Generator().manual_seed(SEED)
    v, t = cfg["vocab_size"], cfg["context_length"]
    return [(torch.randint(0, v, (2, 3), generator=g), 4, t),
            (torch.randint(0, v, (2, t - 2), generator=g), 5, t // 2),
            (torch.randint(0, v, (1, 4), generator=g), 3, t)]  # a batch of one


def layer_norm(m, x, *, unbiased=False, eps="inside", center=True, root=True, dim=-1,
               keepdim=True, one_pass=False, affine="scale, shift", eps_value=None):
    eps_value = m.eps if eps_value is None else eps_value
    dim = tuple(range(x.dim())) if dim == "all" else dim
    mean = x.mean(dim=dim, keepdim=keepdim) if center else 0
    var = x.var(dim=dim, keepdim=keepdim, unbiased=unbiased)
    if one_pass:  # E[x^2] - E[x]^2: cancels where the mean is large against the spread
        var = (x * x).mean(dim=dim, keepdim=keepdim) - x.mean(dim=dim, keepdim=keepdim)**2
    spread = torch.sqrt(var) if root else var
    spread = {"inside": torch.sqrt(var + eps_value) if root else var + eps_value,
              "outside": spread + eps_value, "none": spread,
              "floor": torch.sqrt(var.clamp(min=eps_value))}[eps]
    norm_x = (x - mean) / spread
    return {"scale, shift": lambda: m.scale * norm_x + m.shift, "none": lambda: norm_x,
            "scale only": lambda: m.scale * norm_x, "swapped": lambda: m.shift * norm_x + m.scale,
            "shift inside": lambda: m.scale * (norm_x + m.shift)}[affine]()


TANH_CONSTANT, CUBIC_CONSTANT = math.sqrt(2 / math.pi), 0.044715  # the chapter's GELU: a and b


def gelu_tanh(x, constant=TANH_CONSTANT, half=0.5, cubic=CUBIC_CONSTANT, power=3, times_x=True):
    return half * (x if times_x else 1) * (1 + torch.tanh(constant * (x + cubic * x**power)))


def _feed_forward(m, x, activation=None):
    first, gelu, second = m.layers
    return second((activation or gelu)(first(x)))


def _attention(m, x, *, diagonal=1, scale="head_dim", softmax_dim=-1, split="transpose",
               merge="transpose", out_proj=True, mask="before", scale_at="before",
               keys_first=False):
    b, t, _ = x.shape
    h, hd = (1, m.d_out) if split == "single" else (m.num_heads, m.head_dim)

    def heads(y):
        if split == "view":  # (b, h, t, hd) read straight out of (b, t, d_out)
            return y.view(b, h, t, hd)
        if split == "strided":  # head j takes features j, j + h, j + 2h, ...
            return y.view(b, t, hd, h).permute(0, 3, 1, 2)
        return y.view(b, t, h, hd).transpose(1, 2)  # "transpose", or one head: "single"

    q, k, v = heads(m.W_query(x)), heads(m.W_key(x)), heads(m.W_value(x))
    scores = k @ q.transpose(2, 3) if keys_first else q @ k.transpose(2, 3)
    causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(
        diagonal if diagonal is not None else t)
    divisor = {"head_dim": hd**0.5, "d_out": m.d_out**0.5, "d_in": m.W_query.in_features**0.5,
               "no_sqrt": hd, "none": 1, "num_heads": h**0.5, "num_tokens": t**0.5}[scale]
    if mask == "before":
        scores = scores.masked_fill(causal, -torch.inf)
    if mask == "uncut":  # the whole context_length x context_length mask: the full length only
        scores = scores.masked_fill(m.mask.bool(), -torch.inf)
    if scale_at == "after":
        weights = torch.softmax(scores, dim=softmax_dim) / divisor
    else:
        weights = torch.softmax(scores / divisor, dim=softmax_dim)
    if mask == "after":  # zeroed after the softmax: the rows no longer sum to 1
        weights = weights.masked_fill(causal, 0.0)
    context = weights @ v
    if merge == "not_contiguous":  # .view on a transposed tensor: an error
        return context.transpose(1, 2).view(b, t, m.d_out)
    context = {"transpose": context.transpose(1, 2), "view": context,
               "interleaved": context.permute(0, 2, 3, 1)}[merge]
    context = context.contiguous().view(b, t, m.d_out)
    return m.out_proj(context) if out_proj else context


def _block(m, x, *, order="pre", att_shortcut=1, ff_shortcut=1, second_norm="norm2",
           stale=False):
    norm2 = getattr(m, second_norm)
    if order == "post":
        x = m.norm1(x + m.drop_shortcut(m.att(x)))
        return norm2(x + m.drop_shortcut(m.ff(x)))
    if order == "after_norm":  # the shortcut taken from the normalized x
        x = m.norm1(x)
        x = x + m.drop_shortcut(m.att(x))
        x = norm2(x)
        return x + m.drop_shortcut(m.ff(x))
    block_input = x
    x = att_shortcut * x + m.drop_shortcut(m.att(m.norm1(x)))
    return ff_shortcut * (block_input if stale else x) + m.drop_shortcut(m.ff(norm2(x)))


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


def _generate(model, idx, max_new_tokens, context_size, *, crop="last", position=-1, axis=-1,
              steps_short=0, return_in_loop=False, new_only=False, keepdim=True):
    prompt_length = idx.shape[1]
    for _ in range(max_new_tokens - steps_short):
        idx_cond = {"last": idx[:, -context_size:], "first": idx[:, :context_size],
                    "none": idx}[crop]
        with torch.no_grad():
            logits = model(idx_cond)[:, position, :]
        idx_next = torch.argmax(torch.softmax(logits, dim=-1), dim=axis, keepdim=keepdim)
        idx = torch.cat((idx, idx_next), dim=1)
        if return_in_loop:  # the return indented into the loop: after the first new id
            break
    return idx[:, prompt_length:] if new_only else idx


def _mistakes(function, **variants):
    """{code: mutant(module, *inputs)}: `function` with one keyword changed per code."""
    return {code: functools.partial(function, **change) for code, change in variants.items()}


class Component(NamedTuple):
    reference: object  # the class or function in gpt.py
    signature: str  # as the chapter calls it, for the wrong-signature message
    build: object  # build(cls, cfg) -> module (None for a function)
    inputs: object  # inputs(cfg) -> [args, ...]
    mistakes: dict  # {diagnosis code: mutant(reference module, *args)}
    dropout: bool = False  # whether the chapter's version applies dropout in training mode
    alone: bool = False  # checked alone too, on inputs of its own, when inside a larger module
    pairs: bool = False  # tried for two of its mistakes at once
    qkv_bias: bool = False  # built with qkv_bias=True too: the argument must reach W_query ...
    notes: tuple = ()  # diagnoses that are no bug: the check passes with a note


COMPONENTS = {
    "LayerNorm": Component(
        gpt.LayerNorm, "LayerNorm(emb_dim)", lambda cls, cfg: cls(cfg["emb_dim"]),
        lambda cfg: _vector_inputs(cfg, norm=True),
        _mistakes(layer_norm, ln_unbiased={"unbiased": True}, ln_eps_outside={"eps": "outside"},
                  ln_no_eps={"eps": "none"}, ln_eps_floor={"eps": "floor"}, ln_no_sqrt={"root": False},
                  ln_no_centering={"center": False}, ln_wrong_axis={"dim": -2},
                  ln_batch_axis={"dim": 0}, ln_batch_and_features={"dim": (0, -1)},
                  ln_sequence={"dim": (-2, -1)}, ln_all_values={"dim": "all"},
                  ln_no_keepdim={"keepdim": False}, ln_one_pass={"one_pass": True},
                  ln_no_affine={"affine": "none"}, ln_no_shift={"affine": "scale only"},
                  ln_affine_swapped={"affine": "swapped"},
                  ln_shift_inside={"affine": "shift inside"}),
        alone=True, pairs=True),
    "GELU": Component(
        gpt.GELU, "GELU()", lambda cls, cfg: cls(), _vector_inputs,
        {"gelu_erf": lambda m, x: F.gelu(x), "gelu_relu": lambda m, x: F.relu(x),
         "gelu_constant": lambda m, x: gelu_tanh(x, constant=2 / math.pi),
         "gelu_no_half": lambda m, x: gelu_tanh(x, half=1.0),
         "gelu_squared": lambda m, x: gelu_tanh(x, power=2),
         "gelu_no_x": lambda m, x: gelu_tanh(x, times_x=False),
         "gelu_sigmoid": lambda m, x: x * torch.sigmoid(1.702 * x)},
        alone=True, notes=("gelu_erf",)),
    "FeedForward": Component(
        gpt.FeedForward, "FeedForward(cfg)", lambda cls, cfg: cls(cfg), _vector_inputs,
        {"ff_relu": functools.partial(_feed_forward, activation=F.relu),
         "gelu_erf": functools.partial(_feed_forward, activation=F.gelu),
         "ff_no_activation": functools.partial(_feed_forward, activation=lambda x: x)},
        alone=True, notes=("gelu_erf",)),
    "MultiHeadAttention": Component(
        gpt.MultiHeadAttention,
        "MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)",
        lambda cls, cfg: cls(d_in=cfg["emb_dim"], d_out=D_OUT, context_length=cfg["context_length"],
                             dropout=cfg["drop_rate"], num_heads=cfg["n_heads"],
                             qkv_bias=cfg["qkv_bias"]),
        _vector_inputs,
        _mistakes(_attention, no_mask={"diagonal": None},
                  mask_includes_diagonal={"diagonal": 0}, mask_leaks_one={"diagonal": 2},
                  mask_after_softmax={"mask": "after"}, mask_not_cut={"mask": "uncut"},
                  no_scaling={"scale": "none"}, scale_d_out={"scale": "d_out"},
                  scale_d_in={"scale": "d_in"}, scale_no_sqrt={"scale": "no_sqrt"},
                  softmax_wrong_axis={"softmax_dim": -2}, softmax_heads_axis={"softmax_dim": 1},
                  softmax_batch_axis={"softmax_dim": 0}, split_no_transpose={"split": "view"},
                  split_strided={"split": "strided"}, merge_no_transpose={"merge": "view"},
                  no_out_proj={"out_proj": False}, scale_num_heads={"scale": "num_heads"},
                  scale_num_tokens={"scale": "num_tokens"}, scale_after_softmax={"scale_at": "after"},
                  keys_times_queries={"keys_first": True}, merge_interleaved={"merge": "interleaved"},
                  single_head={"split": "single"}, merge_not_contiguous={"merge": "not_contiguous"}),
        dropout=True, alone=True, pairs=True, qkv_bias=True),
    "TransformerBlock": Component(
        gpt.TransformerBlock, "TransformerBlock(cfg)", lambda cls, cfg: cls(cfg), _vector_inputs,
        _mistakes(_block, post_ln={"order": "post"}, shortcut_after_norm={"order": "after_norm"},
                  no_att_shortcut={"att_shortcut": 0}, no_ff_shortcut={"ff_shortcut": 0},
                  doubled_att_shortcut={"att_shortcut": 2},
                  doubled_ff_shortcut={"ff_shortcut": 2}, one_norm={"second_norm": "norm1"},
                  stale_shortcut={"stale": True}),
        dropout=True, pairs=True, qkv_bias=True),
    "GPTModel": Component(
        gpt.GPTModel, "GPTModel(cfg)", lambda cls, cfg: cls(cfg), token_inputs,
        _mistakes(_gpt, no_final_norm={"final_norm": False}, pos_from_ids={"positions": "ids"},
                  no_positions={"positions": "none"}, tied_head={"head": "tok_emb"},
                  softmax_output={"softmax": True}),
        dropout=True, qkv_bias=True),
    "generate_text_simple": Component(
        gpt.generate_text_simple, "generate_text_simple(model, idx, max_new_tokens, context_size)",
        None, _generation_inputs,
        _mistakes(_generate, no_crop={"crop": "none"}, crop_first={"crop": "first"},
                  first_position={"position": 0}, argmax_wrong_axis={"axis": 0},
                  new_ids_only={"new_only": True}, one_short={"steps_short": 1},
                  return_in_loop={"return_in_loop": True}, argmax_no_keepdim={"keepdim": False})),
}

# Another eps, and GELU's constants, are tried as mutants made to measure (checker/matching.py).
MEASURED = ("ln_eps_value", "gelu_constants")
DIAGNOSES = {code for spec in COMPONENTS.values() for code in spec.mistakes} | set(MEASURED)
NOTES = {code for spec in COMPONENTS.values() for code in spec.notes}
