"""Learner-style code for the component checker's tests: each class or function is written the
way a learner would write it (most copy the chapter's code with one line changed).

CASES names every one of them with the chapter component it is checked against. What the checker
says about each, tests/checker/test_frozen_feedback.py freezes in frozen_feedback.json, which
quotes some lines here by number: after moving code here, rewrite it and check its diff.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import dropout

import gpt
from checker.planted import COMPONENTS

# ---- LayerNorm ---------------------------------------------------------------------------------


def layer_norm(normalize):
    """A LayerNorm whose forward is `normalize(self, x)`."""
    return type("LayerNorm", (gpt.LayerNorm,), {"forward": normalize})


def ln_unbiased(self, x):
    mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True)
    return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


def ln_eps_outside(self, x):
    mean, std = x.mean(dim=-1, keepdim=True), x.std(dim=-1, keepdim=True, unbiased=False)
    return self.scale * (x - mean) / (std + self.eps) + self.shift


def ln_no_eps(self, x):
    mean, std = x.mean(dim=-1, keepdim=True), x.std(dim=-1, keepdim=True, unbiased=False)
    return self.scale * (x - mean) / std + self.shift


def ln_no_sqrt(self, x):
    mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True, unbiased=False)
    return self.scale * (x - mean) / (var + self.eps) + self.shift


def ln_no_centering(self, x):
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return self.scale * x / torch.sqrt(var + self.eps) + self.shift


def ln_wrong_axis(self, x):
    mean, var = x.mean(dim=1, keepdim=True), x.var(dim=1, keepdim=True, unbiased=False)
    return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


def ln_no_affine(self, x):
    mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + self.eps)


# ---- GELU and FeedForward ----------------------------------------------------------------------


def gelu(activation):
    return type("GELU", (nn.Module,), {"forward": lambda self, x: activation(x)})


def tanh_gelu(x, c=0.7978845608, half=0.5):  # c: sqrt(2 / pi)
    return half * x * (1 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3))))


def feed_forward(activation, hidden=4):
    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            d = cfg["emb_dim"]
            self.layers = nn.Sequential(nn.Linear(d, hidden * d), activation,
                                        nn.Linear(hidden * d, d))

        def forward(self, x):
            return self.layers(x)

    return FeedForward


class FeedForwardWithDropout(gpt.FeedForward):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.dropout = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        return self.dropout(self.layers(x))


# ---- MultiHeadAttention: the chapter's forward with one change each ----------------------------


class Attention(gpt.MultiHeadAttention):
    """The chapter's attention, written out in steps a learner can get wrong one at a time."""

    def split(self, y, b, t):
        return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def masked(self, scores, t):
        return scores.masked_fill(self.mask[:t, :t], -torch.inf)

    def weights(self, scores):
        return torch.softmax(scores / self.head_dim**0.5, dim=-1)

    def merge(self, context, b, t):
        return context.transpose(1, 2).contiguous().view(b, t, self.d_out)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.dropout(self.weights(self.masked(q @ k.transpose(2, 3), t)))
        return self.out_proj(self.merge(w @ v, b, t))


def attention(**methods):
    return type("MultiHeadAttention", (Attention,), methods)


def causal(t, diagonal):
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=diagonal)


class AttentionMaskAfterSoftmax(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(q @ k.transpose(2, 3)).masked_fill(self.mask[:t, :t], 0.0)
        return self.out_proj(self.merge(self.dropout(w) @ v, b, t))


class AttentionNoOutProj(nn.Module):  # out_proj never created: a missing parameter too
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads, self.head_dim, self.d_out = num_heads, d_out // num_heads, d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (W(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
                   for W in (self.W_query, self.W_key, self.W_value))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        w = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))
        return (w @ v).transpose(1, 2).reshape(b, t, self.d_out)


# ---- TransformerBlock, GPTModel, generate_text_simple -------------------------------------------


def block(forward):
    return type("TransformerBlock", (gpt.TransformerBlock,), {"forward": forward})


def block_forward(self, x, att_shortcut=True, ff_shortcut=True, att_twice=False,
                  ff_twice=False):
    """The chapter's block, step by step; the flags plant a missing or doubled shortcut."""
    shortcut = x
    x = self.drop_shortcut(self.att(self.norm1(x)))
    x = x + shortcut if att_shortcut else x
    x = x + shortcut if att_twice else x
    shortcut = x
    x = self.drop_shortcut(self.ff(self.norm2(x)))
    x = x + shortcut if ff_shortcut else x
    return x + shortcut if ff_twice else x


def post_ln(self, x):
    x = self.norm1(x + self.drop_shortcut(self.att(x)))
    return self.norm2(x + self.drop_shortcut(self.ff(x)))


def shortcut_after_norm(self, x):
    x = self.norm1(x)
    x = x + self.drop_shortcut(self.att(x))
    x = self.norm2(x)
    return x + self.drop_shortcut(self.ff(x))


def one_norm(self, x):
    x = x + self.drop_shortcut(self.att(self.norm1(x)))
    return x + self.drop_shortcut(self.ff(self.norm1(x)))


def gpt_model(forward):
    return type("GPTModel", (gpt.GPTModel,), {"forward": forward})


def book_gpt_forward(self, in_idx, positions=None, final_norm=True):
    """The chapter's GPTModel.forward; `positions` and `final_norm` plant two mistakes."""
    t = in_idx.shape[1]
    x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(t) if positions is None else positions)
    x = self.trf_blocks(self.drop_emb(x))
    return self.out_head(self.final_norm(x) if final_norm else x)


def generate(step):
    """generate_text_simple whose loop body is `step(model, idx, context_size)` -> next ids."""

    def generate_text_simple(model, idx, max_new_tokens, context_size):
        for _ in range(max_new_tokens):
            idx = torch.cat((idx, step(model, idx, context_size)), dim=1)
        return idx

    return generate_text_simple


PLANTED = {
    "ln_unbiased": (layer_norm(ln_unbiased), None),
    "ln_eps_outside": (layer_norm(ln_eps_outside), None),
    "ln_no_eps": (layer_norm(ln_no_eps), None),
    "ln_no_sqrt": (layer_norm(ln_no_sqrt), None),
    "ln_no_centering": (layer_norm(ln_no_centering), None),
    "ln_wrong_axis": (layer_norm(ln_wrong_axis), None),
    "ln_no_affine": (layer_norm(ln_no_affine), None),
    "gelu_erf": (gelu(nn.GELU()), None),
    "gelu_relu": (gelu(torch.relu), None),
    "gelu_constant": (gelu(lambda x: tanh_gelu(x, c=2 / math.pi)), None),
    "gelu_no_half": (gelu(lambda x: tanh_gelu(x, half=1)), None),
    "ff_relu": (feed_forward(nn.ReLU()), gpt.FeedForward),
    "ff_no_activation": (feed_forward(nn.Identity()), gpt.FeedForward),
    "ff_no_expansion": (feed_forward(gpt.GELU(), hidden=1), gpt.FeedForward),
    "no_mask": (attention(masked=lambda self, s, t: s), None),
    "mask_includes_diagonal": (attention(
        masked=lambda self, s, t: s.masked_fill(causal(t, 0), -torch.inf)), None),
    "mask_leaks_one": (attention(
        masked=lambda self, s, t: s.masked_fill(causal(t, 2), -torch.inf)), None),
    "mask_not_cut": (attention(masked=lambda self, s, t: s.masked_fill(self.mask, -torch.inf)),
                     None),
    "mask_after_softmax": (AttentionMaskAfterSoftmax, gpt.MultiHeadAttention),
    "no_scaling": (attention(weights=lambda self, s: torch.softmax(s, dim=-1)), None),
    "scale_d_out": (attention(
        weights=lambda self, s: torch.softmax(s / math.sqrt(self.d_out), dim=-1)), None),
    "scale_no_sqrt": (attention(weights=lambda self, s: torch.softmax(s / self.head_dim, -1)),
                      None),
    "softmax_wrong_axis": (attention(
        weights=lambda self, s: torch.softmax(s / self.head_dim**0.5, dim=2)), None),
    "softmax_heads_axis": (attention(
        weights=lambda self, s: torch.softmax(s / self.head_dim**0.5, dim=1)), None),
    "split_no_transpose": (attention(
        split=lambda self, y, b, t: y.view(b, self.num_heads, t, self.head_dim)), None),
    "merge_no_transpose": (attention(
        merge=lambda self, c, b, t: c.contiguous().view(b, t, self.d_out)), None),
    "no_out_proj": (AttentionNoOutProj, gpt.MultiHeadAttention),
    "post_ln": (block(post_ln), None),
    "shortcut_after_norm": (block(shortcut_after_norm), None),
    "no_att_shortcut": (block(lambda self, x: block_forward(self, x, att_shortcut=False)), None),
    "no_ff_shortcut": (block(lambda self, x: block_forward(self, x, ff_shortcut=False)), None),
    "doubled_att_shortcut": (block(lambda self, x: block_forward(self, x, att_twice=True)), None),
    "doubled_ff_shortcut": (block(lambda self, x: block_forward(self, x, ff_twice=True)), None),
    "one_norm": (block(one_norm), None),
    "no_final_norm": (gpt_model(lambda self, idx: book_gpt_forward(self, idx, final_norm=False)),
                      None),
    "pos_from_ids": (gpt_model(lambda self, idx: book_gpt_forward(self, idx, positions=idx)),
                     None),
    "no_positions": (gpt_model(lambda self, idx: self.out_head(self.final_norm(
        self.trf_blocks(self.tok_emb(idx))))), None),
    "tied_head": (gpt_model(lambda self, idx: F.linear(self.final_norm(self.trf_blocks(
        self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1])))), self.tok_emb.weight)),
        None),
    "softmax_output": (gpt_model(lambda self, idx: book_gpt_forward(self, idx).softmax(dim=-1)),
                       None),
    "no_crop": (generate(lambda model, idx, n: model(idx)[:, -1].argmax(-1, keepdim=True)), None),
    "crop_first": (generate(lambda model, idx, n: model(idx[:, :n])[:, -1].argmax(-1)[:, None]),
                   None),
    "first_position": (generate(
        lambda model, idx, n: model(idx[:, -n:])[:, 0, :].argmax(dim=-1, keepdim=True)), None),
    "argmax_wrong_axis": (generate(
        lambda model, idx, n: torch.argmax(model(idx[:, -n:])[:, -1, :], dim=0, keepdim=True)),
        None),
}


# ---- the same mistakes inside larger modules: located, then diagnosed ---------------------------


def with_parts(kind, **parts):
    """A chapter class `kind` whose submodules of type gpt.X are replaced by parts["X"]."""
    base = getattr(gpt, kind)

    def __init__(self, cfg):
        base.__init__(self, cfg)
        for name, module in list(self.named_modules()):
            new = parts.get(type(module).__name__)
            if new is not None and name:
                parent, _, leaf = name.rpartition(".")
                kind = type(module).__name__
                part = new(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg[
                    "context_length"], dropout=cfg["drop_rate"], num_heads=cfg["n_heads"],
                    qkv_bias=cfg["qkv_bias"]) if (
                    kind == "MultiHeadAttention") else COMPONENTS[kind].build(new, cfg)
                self.get_submodule(parent).register_module(leaf, part)

    return type(kind, (base,), {"__init__": __init__})


class TypedGPTModel(nn.Module):
    """A GPTModel as a learner types it from the book, in their own notebook."""

    def __init__(self, cfg, norm=gpt.LayerNorm):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[gpt.TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        for b in self.trf_blocks:
            b.norm1, b.norm2 = norm(cfg["emb_dim"]), norm(cfg["emb_dim"])
        self.final_norm = norm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    forward = book_gpt_forward


SMALL = {**gpt.GPT_CONFIG_124M, "vocab_size": 500, "emb_dim": 48, "n_heads": 4, "n_layers": 2, "context_length": 32}


# ---- equivalent rewrites pass --------------------------------------------------------------------


class FunctionalLayerNorm(gpt.LayerNorm):
    def forward(self, x):
        return F.layer_norm(x, self.scale.shape, self.scale, self.shift, self.eps)


class TorchGELU(nn.GELU):
    def __init__(self):
        super().__init__(approximate="tanh")


class EinsumAttention(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (W(x).view(b, t, self.num_heads, self.head_dim)
                   for W in (self.W_query, self.W_key, self.W_value))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.head_dim)
        w = self.dropout(torch.softmax(scores.masked_fill(self.mask[:t, :t], -math.inf), -1))
        return self.out_proj(torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(b, t, self.d_out))


class SdpaAttention(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        p = self.dropout.p if self.training else 0.0
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out_proj(self.merge(context, b, t))


class FusedAttention(nn.Module):
    """One qkv projection, (3 * d_out, d_in), as GPT-2's c_attn; SDPA for the rest."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads, self.d_out, self.p = num_heads, d_out, dropout
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        return self.out_proj(context.transpose(1, 2).reshape(b, t, self.d_out))


def generate_without_softmax(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])
        idx = torch.cat([idx, logits[:, -1].argmax(dim=-1).unsqueeze(-1)], dim=-1)
    return idx


# ---- training mode -----------------------------------------------------------------------------


class AttentionWithoutDropout(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(self.masked(q @ k.transpose(2, 3), t))  # self.dropout left out
        return self.out_proj(self.merge(w @ v, b, t))


class BlockWithExtraDropout(gpt.TransformerBlock):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.drop_ff = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.drop_ff(self.ff(self.norm2(x))))


# ---- odd inputs get one sentence ---------------------------------------------------------------


def raises_runtime_error(self, x):
    raise RuntimeError("boom")


class Stub(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()

    def forward(self, x):
        raise NotImplementedError


def stub_generate(model, idx, max_new_tokens, context_size):
    raise NotImplementedError("fill me in")


class NotAModule:
    def __init__(self, emb_dim):
        pass


def list_generate(model, idx, max_new_tokens, context_size):
    return gpt.generate_text_simple(model, idx, max_new_tokens, context_size).tolist()


# ---- the rarer findings ------------------------------------------------------------------------


class AttentionOwnDropout(Attention):
    """Drops attention weights with its own random numbers: the same rate, other draws."""

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(self.masked(q @ k.transpose(2, 3), t))
        if self.training:
            p = self.dropout.p
            w = w * (torch.rand_like(w) >= p) / (1 - p)
        return self.out_proj(self.merge(w @ v, b, t))


class AttentionScaledInTraining(Attention):
    def forward(self, x):
        return super().forward(x) * (1.5 if self.training else 1.0)


class AttentionDropsOutput(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(self.masked(q @ k.transpose(2, 3), t))
        return self.dropout(self.out_proj(self.merge(w @ v, b, t)))  # dropout moved


class BlockDropsInput(gpt.TransformerBlock):
    def forward(self, x):
        x = x + self.att(self.drop_shortcut(self.norm1(x)))
        return x + self.ff(self.drop_shortcut(self.norm2(x)))


class GPTDropsLate(gpt.GPTModel):
    def forward(self, in_idx):
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1]))
        return self.out_head(self.final_norm(self.drop_emb(self.trf_blocks(x))))


class BlockOneDropout(gpt.TransformerBlock):
    def forward(self, x):
        x = x + self.att(self.norm1(x))  # drop_shortcut left out here only
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


# ---- mistakes that hide at 8 positions, in eval mode or from the outputs alone -------------------


class AttentionRightForEight(Attention):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mask[8:] = False  # a mask that only holds for the first 8 positions


class LayerNormOnePass(gpt.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = (x * x).mean(dim=-1, keepdim=True) - mean**2  # E[x^2] - E[x]^2
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class LayerNormClampedMean(gpt.LayerNorm):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True).clamp(-10, 10)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class LayerNormSwappedInit(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        self.scale = nn.Parameter(torch.zeros(emb_dim))
        self.shift = nn.Parameter(torch.ones(emb_dim))


class LayerNormData(gpt.LayerNorm):
    def forward(self, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
        return self.scale.data * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class LayerNormDetached(gpt.LayerNorm):
    def forward(self, x):
        x = x.detach()
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class LayerNormOverTheBatch(gpt.LayerNorm):
    def forward(self, x):  # one mean and variance for all rows of the batch
        mean, var = x.mean(dim=(0, -1), keepdim=True), x.var(dim=(0, -1), keepdim=True,
                                                             unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class AttentionSwappedLinear(Attention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.W_query = nn.Linear(d_out, d_in, bias=qkv_bias)  # in and out swapped


class GPTWrappedPositions(gpt.GPTModel):
    def forward(self, in_idx):
        t = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(t) % 8)  # wraps after 8
        return self.out_head(self.final_norm(self.trf_blocks(self.drop_emb(x))))


class AttentionHeadLoop(nn.Module):
    """One head at a time, with dropout on each head's weights: the chapter's function."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x, drop_scores=False):
        t = x.shape[1]
        heads = []
        for h in range(self.num_heads):
            part = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = (W(x)[..., part] for W in (self.W_query, self.W_key, self.W_value))
            scores = q @ k.transpose(1, 2) / self.head_dim**0.5
            scores = self.dropout(scores) if drop_scores else scores  # dropout on another tensor
            w = torch.softmax(scores.masked_fill(self.mask[:t, :t].bool(), -torch.inf), dim=-1)
            heads.append((w if drop_scores else self.dropout(w)) @ v)
        return self.out_proj(torch.cat(heads, dim=-1))


class AttentionDropsScores(AttentionHeadLoop):
    def forward(self, x):
        return super().forward(x, drop_scores=True)


class GPTReadsPositions(gpt.GPTModel):
    def forward(self, in_idx, final_first=False):
        x = self.tok_emb(in_idx) + self.pos_emb.weight[:in_idx.shape[1]]  # read, not called
        x = self.drop_emb(x)
        x = self.final_norm(x) if final_first else x
        x = self.trf_blocks(x)
        return self.out_head(x if final_first else self.final_norm(x))


# ---- code that tests of their own check ---------------------------------------------------------


class LayerNormEps1e6(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        self.eps = 1e-6


class DoubledLayerNorm(gpt.LayerNorm):  # no mistake the check knows
    def forward(self, x):
        return 2 * super().forward(x)


class AttentionUsesMaskForEight(Attention):
    def masked(self, scores, t):  # the buffer is fine; the mask used is not
        return scores.masked_fill(causal(t, 1) & (torch.arange(t) < 8)[:, None], -torch.inf)


def generate_forgets_keepdim(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1)  # keepdim forgotten
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class AttentionForgetsContiguous(Attention):
    def merge(self, context, b, t):
        return context.transpose(1, 2).view(b, t, self.d_out)  # .contiguous() forgotten


class FeedForwardWithGELUClass(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(d, 4 * d), gpt.GELU, nn.Linear(4 * d, d))


GPTReadsPositionsPostLN = type("GPTModel", (with_parts("GPTModel", TransformerBlock=block(post_ln)),
                                            GPTReadsPositions),
                               {"forward": GPTReadsPositions.forward})
GPTFinalNormFirst = gpt_model(lambda self, idx: GPTReadsPositions.forward(self, idx,
                                                                          final_first=True))


class GPTRepeatedBlock(gpt.GPTModel):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.trf_blocks = nn.Sequential(*[gpt.TransformerBlock(cfg)] * cfg["n_layers"])


def ln_two_mistakes(self, x):
    mean, std = x.mean(dim=-1, keepdim=True), x.std(dim=-1, keepdim=True)  # n - 1
    return self.scale * (x - mean) / (std + self.eps) + self.shift  # eps outside


class LayerNormWithoutShift(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps, self.scale = 1e-5, nn.Parameter(torch.ones(emb_dim))

    def forward(self, x):
        return self.scale * (x - x.mean(-1, keepdim=True)) / torch.sqrt(
            x.var(-1, keepdim=True, unbiased=False) + self.eps)


class AttentionSwappedArguments(Attention):
    def __init__(self, d_in, d_out, num_heads, context_length, dropout):  # order swapped
        gpt.MultiHeadAttention.__init__(self, d_in, d_out, context_length, dropout, num_heads)


class LayerNormRenamedShift(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        del self.shift
        self.beta = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.beta


def no_norm2(self, x):
    x = x + self.drop_shortcut(self.att(self.norm1(x)))
    return x + self.drop_shortcut(self.ff(x))


class AttentionLastTokenOnly(Attention):
    def forward(self, x):
        return super().forward(x)[:, -1:, :]  # (b, 1, d_out): the block still broadcasts it


class HalfFeedForward(gpt.FeedForward):
    def forward(self, x):
        return self.layers[:2](x)  # the second layer left out


class GPTSkipsLastBlock(gpt.GPTModel):
    def forward(self, in_idx):
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1]))
        return self.out_head(self.final_norm(self.trf_blocks[0](x)))


def ff_first(self, x):
    x = x + self.drop_shortcut(self.ff(self.norm2(x)))
    return x + self.drop_shortcut(self.att(self.norm1(x)))


def generate_samples(model, idx, max_new_tokens, context_size):
    torch.manual_seed(0)
    for _ in range(max_new_tokens):
        probas = torch.softmax(model(idx[:, -context_size:])[:, -1, :], dim=-1)
        idx = torch.cat((idx, torch.multinomial(probas, 1)), dim=1)
    return idx


def generate_returns_nothing(model, idx, max_new_tokens, context_size):
    idx = gpt.generate_text_simple(model, idx, max_new_tokens, context_size)  # noqa: F841


class LayerNormGammaBeta(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(emb_dim)), nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta, 1e-5)


class GPTHeadWithBias(gpt.GPTModel):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"])


class RowLayerNorm(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        self.scale = nn.Parameter(torch.ones(1, emb_dim))


class LayerNormInitRaises(gpt.LayerNorm):
    def __init__(self, emb_dim):
        raise ValueError("no")


LayerNormScaledInTraining = type("LayerNorm", (gpt.LayerNorm,), {
    "forward": lambda self, x: gpt.LayerNorm.forward(self, x) * (0.9 if self.training else 1.0)})


def _named(kind, *learner_code):
    """Learners name their code as the chapter does, and the check finds its reference so."""
    for code in learner_code:
        code.__name__ = code.__qualname__ = kind


_named("LayerNorm", LayerNormEps1e6, DoubledLayerNorm, LayerNormRenamedShift, RowLayerNorm,
       LayerNormInitRaises, LayerNormWithoutShift, LayerNormGammaBeta)
_named("FeedForward", FeedForwardWithGELUClass, HalfFeedForward)
_named("MultiHeadAttention", AttentionUsesMaskForEight, AttentionForgetsContiguous,
       AttentionSwappedArguments, AttentionLastTokenOnly)
_named("GPTModel", GPTSkipsLastBlock, GPTHeadWithBias, GPTRepeatedBlock)
_named("generate_text_simple", generate_forgets_keepdim, generate_samples,
       generate_returns_nothing)


# ---- every case: (name, your code, the chapter component it is checked against or None) ---------

INSIDE = [  # (kind, part, planted code): a planted mistake inside a larger module
    ("GPTModel", "LayerNorm", "ln_eps_outside"), ("GPTModel", "GELU", "gelu_no_half"),
    ("GPTModel", "MultiHeadAttention", "no_mask"),
    ("GPTModel", "MultiHeadAttention", "mask_not_cut"),
    ("GPTModel", "TransformerBlock", "post_ln"),
    ("TransformerBlock", "MultiHeadAttention", "merge_no_transpose"),
    ("TransformerBlock", "FeedForward", "ff_relu"),
    ("TransformerBlock", "FeedForward", "ff_no_activation"),
]

CASES = [(f"planted {code}", yours, reference) for code, (yours, reference) in PLANTED.items()]
CASES += [(f"inside {kind} {code}", with_parts(kind, **{part: PLANTED[code][0]}), None)
          for kind, part, code in INSIDE]
CASES += [
    ("eps 1e-6", LayerNormEps1e6, None),
    ("exact GELU in a model", with_parts("GPTModel", GELU=gelu(nn.GELU())), None),
    ("doubled layer norm in a block", with_parts("TransformerBlock", LayerNorm=DoubledLayerNorm),
     None),
    # rewrites that compute the chapter's function
    ("rewrite F.layer_norm", FunctionalLayerNorm, gpt.LayerNorm),
    ("rewrite nn.GELU tanh", TorchGELU, gpt.GELU),
    ("rewrite feed-forward with nn.GELU", feed_forward(nn.GELU(approximate="tanh")), None),
    ("rewrite einsum attention", EinsumAttention, gpt.MultiHeadAttention),
    ("rewrite SDPA attention", SdpaAttention, gpt.MultiHeadAttention),
    ("rewrite fused qkv", FusedAttention, gpt.MultiHeadAttention),
    ("rewrite fused qkv in a block", with_parts("TransformerBlock",
                                                MultiHeadAttention=FusedAttention), None),
    ("rewrite model with F.layer_norm and nn.GELU", with_parts(
        "GPTModel", LayerNorm=FunctionalLayerNorm, GELU=TorchGELU), None),
    ("rewrite generate without softmax", generate_without_softmax, gpt.generate_text_simple),
    ("rewrite attention loop over heads", AttentionHeadLoop, gpt.MultiHeadAttention),
    ("rewrite loop over heads in a block", with_parts("TransformerBlock",
                                                      MultiHeadAttention=AttentionHeadLoop), None),
]
CASES += [(f"reference {name}", getattr(gpt, name), None) for name in COMPONENTS]
CASES += [
    # training mode
    ("feed-forward with dropout", FeedForwardWithDropout, gpt.FeedForward),
    ("attention without dropout", AttentionWithoutDropout, gpt.MultiHeadAttention),
    ("block with an extra dropout", BlockWithExtraDropout, gpt.TransformerBlock),
    ("layer norm scaled in training", LayerNormScaledInTraining, gpt.LayerNorm),
    ("attention drops its output", AttentionDropsOutput, gpt.MultiHeadAttention),
    ("block drops the sublayers' inputs", BlockDropsInput, gpt.TransformerBlock),
    ("model drops after the blocks", GPTDropsLate, gpt.GPTModel),
    ("attention with its own dropout draws", AttentionOwnDropout, gpt.MultiHeadAttention),
    ("block with one shortcut dropout", BlockOneDropout, gpt.TransformerBlock),
    ("attention scaled in training", AttentionScaledInTraining, gpt.MultiHeadAttention),
    ("attention drops the scores", AttentionDropsScores, gpt.MultiHeadAttention),
    # odd inputs
    ("None", None, None),
    ("stub", type("LayerNorm", (Stub,), {}), None),
    ("stub generate", stub_generate, gpt.generate_text_simple),
    ("a built module", gpt.LayerNorm(4), None),
    ("a string", "LayerNorm", None),
    ("an unknown class", nn.Linear, None),
    ("an unknown reference", gpt.LayerNorm, nn.Linear),
    ("a function for a class", lambda x: x, gpt.LayerNorm),
    ("a class for a function", gpt.LayerNorm, gpt.generate_text_simple),
    ("another signature", gpt.FeedForward, gpt.LayerNorm),
    ("not a module", NotAModule, gpt.LayerNorm),
    ("forward raises", layer_norm(raises_runtime_error), None),
    ("forward returns None", layer_norm(lambda self, x: None), None),
    ("forward returns a list", layer_norm(lambda self, x: [x]), None),
    ("generate returns a list", list_generate, gpt.generate_text_simple),
    ("arguments in another order", AttentionSwappedArguments, None),
    # the rarer findings
    ("shift renamed beta", LayerNormRenamedShift, gpt.LayerNorm),
    ("block without norm2", block(no_norm2), None),
    ("attention returns the last token", with_parts("TransformerBlock",
                                                    MultiHeadAttention=AttentionLastTokenOnly),
     None),
    ("feed-forward skips its second layer", with_parts("TransformerBlock",
                                                       FeedForward=HalfFeedForward), None),
    ("model skips the last block", GPTSkipsLastBlock, gpt.GPTModel),
    ("block runs the feed-forward first", block(ff_first), None),
    ("generate samples", generate_samples, None),
    ("generate returns nothing", generate_returns_nothing, None),
    ("layer norm named gamma and beta", LayerNormGammaBeta, None),
    ("output head with a bias", GPTHeadWithBias, None),
    ("scale of shape (1, emb_dim)", RowLayerNorm, gpt.LayerNorm),
    ("constructor raises", LayerNormInitRaises, None),
    # mistakes that hide at 8 positions, in eval mode or from the outputs alone
    ("attention mask right for 8 positions", AttentionRightForEight, gpt.MultiHeadAttention),
    ("one-pass variance", LayerNormOnePass, gpt.LayerNorm),
    ("clamped mean", LayerNormClampedMean, gpt.LayerNorm),
    ("norm over the batch", LayerNormOverTheBatch, gpt.LayerNorm),
    ("scale and shift initialized swapped", LayerNormSwappedInit, gpt.LayerNorm),
    ("scale.data", LayerNormData, gpt.LayerNorm),
    ("input detached", LayerNormDetached, gpt.LayerNorm),
    ("W_query in and out swapped", AttentionSwappedLinear, gpt.MultiHeadAttention),
    ("positions wrap after 8", GPTWrappedPositions, gpt.GPTModel),
    ("attention uses a mask right for 8", AttentionUsesMaskForEight, None),
    ("generate forgets keepdim", generate_forgets_keepdim, None),
    ("attention forgets contiguous", AttentionForgetsContiguous, None),
    ("feed-forward holds the GELU class", FeedForwardWithGELUClass, None),
    ("model reads pos_emb's weight", GPTReadsPositionsPostLN, None),
    ("model normalizes before the blocks", GPTFinalNormFirst, None),
    ("one block repeated", GPTRepeatedBlock, None),
    ("two layer-norm mistakes", layer_norm(ln_two_mistakes), None),
    ("layer norm without shift", LayerNormWithoutShift, None),
]


def _models(yours, seed_yours=3, seed_reference=None):
    """compare_models' arguments: your model and the chapter's, each built with its own seed."""
    def make():
        torch.manual_seed(seed_yours)
        mine = yours()
        if seed_reference is not None:
            torch.manual_seed(seed_reference)
        return mine, gpt.GPTModel(SMALL)

    return make


# compare_models: (name, a function that builds (your model, the reference model))
MODEL_CASES = [
    ("typed model, unbiased variance", _models(
        lambda: TypedGPTModel(SMALL, norm=layer_norm(ln_unbiased)), 1, 2)),
    ("typed model", _models(lambda: TypedGPTModel(SMALL))),
    ("typed model with nn.LayerNorm", _models(
        lambda: TypedGPTModel(SMALL, norm=lambda d: nn.LayerNorm(d, eps=1e-5)))),
    ("positions wrap after 8", _models(lambda: GPTWrappedPositions(SMALL), 0)),
    ("the same model", _models(lambda: gpt.GPTModel(SMALL))),
]


# ---- wrong code that is easy to pass, or to send astray with a wrong cause ----------------------


class AttentionBiasFalse(Attention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=False)  # qkv_bias ignored
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)


class AttentionMaskAttribute(Attention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        del self.mask
        self.mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)


def generate_overwrites_prompt(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])
        idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
        idx.data = torch.cat((idx, idx_next), dim=1)  # the caller's tensor grows
    return idx


class GPTModuleListStale(gpt.GPTModel):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.trf_blocks = nn.ModuleList(gpt.TransformerBlock(cfg) for _ in range(cfg["n_layers"]))

    def forward(self, in_idx):
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1]))
        x = self.drop_emb(x)
        for block in self.trf_blocks:
            h = block(x)  # each block gets the embeddings, not the previous block's output
        return self.out_head(self.final_norm(h))


class AttentionMaskTooSmall(Attention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.register_buffer("mask", causal(16, 1))  # a fixed size, smaller than the context


def generate_batch_of_one(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])[:, -1, :]
        idx_next = logits.argmax().view(1, 1)  # one id: right only for a batch of one
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class LayerNormSubInPlace(gpt.LayerNorm):
    def forward(self, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
        return self.scale * x.sub_(mean) / torch.sqrt(var + self.eps) + self.shift


class GELUMulInPlace(nn.Module):
    def forward(self, x):
        return x.mul_(0.5 * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))))


class BlockAddsInPlace(gpt.TransformerBlock):
    def forward(self, x):
        x += self.drop_shortcut(self.att(self.norm1(x)))  # the caller's x changes
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class AttentionDropoutFixedRate(Attention):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.dropout = nn.Dropout(0.1)  # the rate passed in is ignored


def generate_samples_unseeded(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        probas = torch.softmax(model(idx[:, -context_size:])[:, -1, :], dim=-1)
        idx = torch.cat((idx, torch.multinomial(probas, 1)), dim=1)
    return idx


class LayerNormPlainTensors(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        del self.scale, self.shift
        self.scale, self.shift = torch.ones(emb_dim), torch.zeros(emb_dim)


class LayerNormEps1e12(gpt.LayerNorm):
    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        self.eps = 1e-12


class BlockNoNorm1Raises(gpt.TransformerBlock):
    def forward(self, x):
        x = x + self.drop_shortcut(self.att(x))  # norm1 forgotten
        b, t, d = x.shape
        x = x.view(b, 24, d)  # the context length written in: shorter inputs fail here
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


def generate_no_crop(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        logits = model(idx)  # the whole idx, however long it grows
        idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


AttentionScaleDIn = attention(weights=lambda self, s: torch.softmax(
    s / self.W_query.in_features**0.5, dim=-1))
AttentionStridedHeads = attention(split=lambda self, y, b, t: y.view(
    b, t, self.head_dim, self.num_heads).permute(0, 3, 1, 2))
AttentionSoftmaxBatch = attention(weights=lambda self, s: torch.softmax(
    s / self.head_dim**0.5, dim=0))
AttentionScaledAfterSoftmax = attention(  # and the diagonal masked: query 0 has no key left
    masked=lambda self, s, t: s.masked_fill(causal(t, 0), -torch.inf),
    weights=lambda self, s: torch.softmax(s, dim=-1) / self.head_dim**0.5)


def block_stale_shortcut(self, x):
    shortcut = x
    x = self.drop_shortcut(self.att(self.norm1(x))) + shortcut
    x = self.drop_shortcut(self.ff(self.norm2(x))) + shortcut  # shortcut not updated
    return x


class AttentionTorchDropout(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(self.masked(q @ k.transpose(2, 3), t))
        w = torch.dropout(w, self.dropout.p, self.training)
        return self.out_proj(self.merge(w @ v, b, t))


class AttentionHeadLoopImportedDropout(AttentionHeadLoop):
    def forward(self, x):
        t, heads = x.shape[1], []
        for h in range(self.num_heads):
            part = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q, k, v = (W(x)[..., part] for W in (self.W_query, self.W_key, self.W_value))
            scores = (q @ k.transpose(1, 2) / self.head_dim**0.5).masked_fill(
                self.mask[:t, :t].bool(), -torch.inf)
            w = dropout(torch.softmax(scores, dim=-1), self.dropout.p, self.training)
            heads.append(w @ v)
        return self.out_proj(torch.cat(heads, dim=-1))


_named("LayerNorm", LayerNormSubInPlace, LayerNormPlainTensors, LayerNormEps1e12)
_named("GELU", GELUMulInPlace)
_named("TransformerBlock", BlockAddsInPlace, BlockNoNorm1Raises)
_named("MultiHeadAttention", AttentionTorchDropout, AttentionHeadLoopImportedDropout,
       AttentionBiasFalse, AttentionMaskAttribute, AttentionMaskTooSmall,
       AttentionDropoutFixedRate)
_named("GPTModel", GPTModuleListStale)
_named("generate_text_simple", generate_overwrites_prompt, generate_batch_of_one,
       generate_samples_unseeded, generate_no_crop)

CASES += [
    ("qkv_bias ignored", AttentionBiasFalse, None),
    ("mask as a plain attribute", AttentionMaskAttribute, None),
    ("generate overwrites the prompt", generate_overwrites_prompt, None),
    ("ModuleList of blocks, stale input", GPTModuleListStale, None),
    ("mask smaller than the context", AttentionMaskTooSmall, None),
    ("generate right for a batch of one", generate_batch_of_one, None),
    ("x.sub_ in a layer norm", LayerNormSubInPlace, None),
    ("x.mul_ in a GELU", GELUMulInPlace, None),
    ("x += in a block", BlockAddsInPlace, None),
    ("dropout rate written in", AttentionDropoutFixedRate, None),
    ("generate samples, unseeded", generate_samples_unseeded, None),
    ("scale and shift plain tensors", LayerNormPlainTensors, None),
    ("eps 1e-12", LayerNormEps1e12, None),
    ("block raises after a wiring mistake", BlockNoNorm1Raises, None),
    ("generate does not crop", generate_no_crop, None),
    ("scores scaled by d_in", AttentionScaleDIn, None),
    ("heads taken with a stride", AttentionStridedHeads, None),
    ("softmax over the batch", AttentionSoftmaxBatch, None),
    ("scaled after the softmax, diagonal masked", AttentionScaledAfterSoftmax, None),
    ("stale second shortcut", block(block_stale_shortcut), None),
    ("rewrite torch.dropout", AttentionTorchDropout, None),
    ("rewrite loop over heads, imported dropout", AttentionHeadLoopImportedDropout, None),
]

class LayerNormFloat64(gpt.LayerNorm):
    """Right values, computed and returned in float64: the next nn.Linear refuses them."""

    def forward(self, x):
        x = x.double()
        mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class BlockWithoutDropout(gpt.TransformerBlock):
    """Switches dropout off by writing into the config it is given."""

    def __init__(self, cfg):
        cfg["drop_rate"] = 0.0  # no dropout while debugging
        super().__init__(cfg)


class BlockStoresHeadDim(gpt.TransformerBlock):
    """Right, and keeps a value it computed in the config it is given."""

    def __init__(self, cfg):
        cfg["head_dim"] = cfg["emb_dim"] // cfg["n_heads"]
        super().__init__(cfg)


class GELUConstantAttribute(gpt.GELU):
    """Right: keeps sqrt(2 / pi) as a 0-dimension tensor, which follows the input to any device."""

    def __init__(self):
        super().__init__()
        self.c = torch.sqrt(torch.tensor(2.0 / torch.pi))

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(self.c * (x + 0.044715 * torch.pow(x, 3))))


class AttentionMaskMadeInForward(gpt.MultiHeadAttention):
    """Right on the CPU: builds its mask in forward, on the CPU whatever the input's device."""

    def forward(self, x):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        scores = (queries @ keys.transpose(2, 3)).masked_fill(mask, -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))
        context = (weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


class GELUTanhInPlace(gpt.GELU):
    """Right values; adds 1 in place to the tanh that autograd needs for the backward pass."""

    def forward(self, x):
        t = torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3)))
        t += 1
        return 0.5 * x * t


class GELUThroughNumPy(gpt.GELU):
    """Right values, computed in NumPy: fine without gradients, an error with them."""

    def forward(self, x):
        c = math.sqrt(2.0 / math.pi)
        y = x.numpy()
        return torch.from_numpy(0.5 * y * (1 + np.tanh(c * (y + 0.044715 * y**3))))


class LayerNormNoGrad(gpt.LayerNorm):
    """Right values, computed under torch.no_grad(): no gradient reaches the input or a weight."""

    def forward(self, x):
        with torch.no_grad():
            return super().forward(x)


_named("LayerNorm", LayerNormFloat64, LayerNormNoGrad)
_named("GELU", GELUTanhInPlace, GELUThroughNumPy)
_named("MultiHeadAttention", AttentionMaskMadeInForward)
_named("GELU", GELUConstantAttribute)
_named("TransformerBlock", BlockWithoutDropout, BlockStoresHeadDim)

CASES += [
    ("returns float64", LayerNormFloat64, None),
    ("writes drop_rate 0 into its config", BlockWithoutDropout, None),
    ("stores head_dim in its config", BlockStoresHeadDim, None),
    ("a 0-dimension constant as an attribute", GELUConstantAttribute, None),
    ("mask made in forward on the CPU", AttentionMaskMadeInForward, None),
    ("an in-place += that backward needs", GELUTanhInPlace, None),
    ("NumPy inside forward", GELUThroughNumPy, None),
    ("forward under torch.no_grad()", LayerNormNoGrad, None),
]

MODEL_CASES += [
    ("typed model with the exact GELU", _models(lambda: with_parts("GPTModel", GELU=gelu(
        nn.GELU()))(SMALL))),
    ("dropout after the blocks", _models(lambda: GPTDropsLate(SMALL))),
    ("mask as a plain attribute", _models(lambda: with_parts(
        "GPTModel", MultiHeadAttention=AttentionMaskAttribute)(SMALL))),
]

PLANTED.update({  # mistakes the check plants, as learners write them (see above)
    "scale_d_in": (AttentionScaleDIn, None), "split_strided": (AttentionStridedHeads, None),
    "softmax_batch_axis": (AttentionSoftmaxBatch, None),
    "stale_shortcut": (block(block_stale_shortcut), None),
})


# ---- the cause each message names, as code: buffers, swapped sizes, a tied head, eps as a floor --


class LayerNormAffineBuffers(gpt.LayerNorm):
    """Right values; scale and shift registered as buffers, so training never changes them."""

    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        del self.scale, self.shift
        self.register_buffer("scale", torch.ones(emb_dim))
        self.register_buffer("shift", torch.zeros(emb_dim))


class FeedForwardFunctionalDropout(gpt.FeedForward):
    """A dropout the chapter's feed-forward does not have, through F.dropout (no nn.Dropout)."""

    def forward(self, x):
        return F.dropout(self.layers(x), 0.1, self.training)


class FeedForwardSwappedSizes(gpt.FeedForward):
    """nn.Linear's two sizes swapped in both layers: the hidden layer is 4 times wider, reversed."""

    def __init__(self, cfg):
        super().__init__(cfg)
        d = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(4 * d, d), gpt.GELU(), nn.Linear(d, 4 * d))


class AttentionMaskParameter(Attention):
    """The mask as an nn.Parameter (frozen) where the chapter registers a buffer."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        mask = self.mask
        del self.mask
        self.mask = nn.Parameter(mask, requires_grad=False)


class AttentionViewContextLength(Attention):
    """Splits the heads with the context length where the number of tokens belongs."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.context_length = context_length

    def split(self, y, b, t):
        return y.view(b, self.context_length, self.num_heads, self.head_dim).transpose(1, 2)


class GPTTiedHead(gpt.GPTModel):
    """Weight tying, as GPT-2 does: the output head reuses the token embedding's matrix."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.out_head.weight = self.tok_emb.weight


class LayerNormClampedVariance(gpt.LayerNorm):
    """eps as a floor under the variance (clamp), not added to it."""

    def forward(self, x):
        mean, var = x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var.clamp(min=self.eps)) + self.shift


class LayerNormExtraGain(gpt.LayerNorm):
    """The book's parameters, named as the book does, and one more: a learned gain."""

    def __init__(self, emb_dim):
        super().__init__(emb_dim)
        self.gain = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.gain * super().forward(x)


_named("LayerNorm", LayerNormAffineBuffers, LayerNormClampedVariance, LayerNormExtraGain)
_named("FeedForward", FeedForwardFunctionalDropout, FeedForwardSwappedSizes)
_named("MultiHeadAttention", AttentionMaskParameter, AttentionViewContextLength)
_named("GPTModel", GPTTiedHead)

CASES += [
    ("scale and shift as buffers", LayerNormAffineBuffers, None),
    ("feed-forward with F.dropout", FeedForwardFunctionalDropout, None),
    ("feed-forward with sizes swapped", FeedForwardSwappedSizes, None),
    ("mask as an nn.Parameter", AttentionMaskParameter, None),
    ("heads split with the context length", AttentionViewContextLength, None),
    ("output head tied to the token embedding", GPTTiedHead, None),
    ("variance clamped at eps", LayerNormClampedVariance, None),
    ("an extra parameter beside the book's", LayerNormExtraGain, None),
]
PLANTED["ln_eps_floor"] = (LayerNormClampedVariance, None)


# ---- families of mistakes that each get a name: attention, GELU, norm axes, generation ----------


class AttentionKeysTimesQueries(Attention):
    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.dropout(self.weights(self.masked(k @ q.transpose(2, 3), t)))  # keys first
        return self.out_proj(self.merge(w @ v, b, t))


class AttentionSingleHead(Attention):
    """num_heads ignored: one head over all d_out features, scaled by their number."""

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        t = x.shape[1]
        scores = (q @ k.transpose(1, 2)).masked_fill(self.mask[:t, :t], -torch.inf)
        w = self.dropout(torch.softmax(scores / k.shape[-1]**0.5, dim=-1))
        return self.out_proj(w @ v)


def generate_new_only(model, idx, max_new_tokens, context_size):
    new = []
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
        new.append(idx_next)
    return torch.cat(new, dim=1)  # the prompt left out


def generate_one_short(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens - 1):  # one new id short
        logits = model(idx[:, -context_size:])[:, -1, :]
        idx = torch.cat((idx, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
    return idx


def generate_returns_in_loop(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context_size:])[:, -1, :]
        idx = torch.cat((idx, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
        return idx  # indented one level too far: after the first new id


FAMILIES = {
    "attention scaled by sqrt(num_heads)": attention(
        weights=lambda self, s: torch.softmax(s / self.num_heads**0.5, dim=-1)),
    "attention scaled by sqrt(num_tokens)": attention(
        weights=lambda self, s: torch.softmax(s / s.shape[-1]**0.5, dim=-1)),
    "attention scaled after the softmax": attention(
        weights=lambda self, s: torch.softmax(s, dim=-1) / self.head_dim**0.5),
    "attention keys @ queries^T": AttentionKeysTimesQueries,
    "attention merged with heads interleaved": attention(
        merge=lambda self, c, b, t: c.permute(0, 2, 3, 1).contiguous().view(b, t, self.d_out)),
    "attention with a single head": AttentionSingleHead,
    "GELU constant typo 0.04715": gelu(lambda x: 0.5 * x * (1 + torch.tanh(
        math.sqrt(2 / math.pi) * (x + 0.04715 * x**3)))),
    "GELU sqrt(pi / 2)": gelu(lambda x: tanh_gelu(x, c=math.sqrt(math.pi / 2))),
    "GELU x squared": gelu(lambda x: 0.5 * x * (1 + torch.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x**2)))),
    "GELU sigmoid (quick GELU)": gelu(lambda x: x * torch.sigmoid(1.702 * x)),
    "GELU without the x factor": gelu(lambda x: 0.5 * (1 + torch.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "GELU parentheses: constant on x only": gelu(lambda x: 0.5 * x * (1 + torch.tanh(
        math.sqrt(2 / math.pi) * x + 0.044715 * x**3))),
    "GELU 0.7978 rounded": gelu(lambda x: tanh_gelu(x, c=0.7978)),
    "layer norm over dim 0": layer_norm(lambda self, x: self.scale * (
        x - x.mean(dim=0, keepdim=True)) / torch.sqrt(
        x.var(dim=0, keepdim=True, unbiased=False) + self.eps) + self.shift),
    "layer norm without keepdim": layer_norm(lambda self, x: self.scale * (
        x - x.mean(dim=-1)) / torch.sqrt(x.var(dim=-1, unbiased=False) + self.eps) + self.shift),
    "layer norm over all values": layer_norm(lambda self, x: self.scale * (
        x - x.mean()) / torch.sqrt(x.var(unbiased=False) + self.eps) + self.shift),
    "layer norm scale and shift swapped": layer_norm(lambda self, x: self.shift * (
        x - x.mean(-1, keepdim=True)) / torch.sqrt(
        x.var(-1, keepdim=True, unbiased=False) + self.eps) + self.scale),
    "layer norm shift inside the scale": layer_norm(lambda self, x: self.scale * (
        (x - x.mean(-1, keepdim=True)) / torch.sqrt(
            x.var(-1, keepdim=True, unbiased=False) + self.eps) + self.shift)),
    "layer norm without shift": layer_norm(lambda self, x: self.scale * (
        x - x.mean(-1, keepdim=True)) / torch.sqrt(
        x.var(-1, keepdim=True, unbiased=False) + self.eps)),
    "generate returns the new ids only": generate_new_only,
    "generate stops one short": generate_one_short,
    "generate returns inside the loop": generate_returns_in_loop,
}


_named("generate_text_simple", generate_new_only, generate_one_short, generate_returns_in_loop)
_named("MultiHeadAttention", AttentionKeysTimesQueries, AttentionSingleHead)
CASES += [(name, yours, None) for name, yours in FAMILIES.items()]


class AttentionOwnDropoutNoRescale(Attention):
    """Drops attention weights by hand and forgets to divide the kept ones by 1 - p."""

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (self.split(W(x), b, t) for W in (self.W_query, self.W_key, self.W_value))
        w = self.weights(self.masked(q @ k.transpose(2, 3), t))
        if self.training:
            w = w * (torch.rand_like(w) >= self.dropout.p)
        return self.out_proj(self.merge(w @ v, b, t))


_named("MultiHeadAttention", AttentionOwnDropoutNoRescale)
CASES += [("hand-written dropout without the rescale", AttentionOwnDropoutNoRescale, None)]
PLANTED.update({name: (FAMILIES[case], None) for name, case in {
    "scale_num_heads": "attention scaled by sqrt(num_heads)",
    "scale_num_tokens": "attention scaled by sqrt(num_tokens)",
    "scale_after_softmax": "attention scaled after the softmax",
    "keys_times_queries": "attention keys @ queries^T",
    "merge_interleaved": "attention merged with heads interleaved",
    "single_head": "attention with a single head",
    "gelu_constants": "GELU constant typo 0.04715",
    "gelu_squared": "GELU x squared", "gelu_sigmoid": "GELU sigmoid (quick GELU)",
    "gelu_no_x": "GELU without the x factor",
    "ln_batch_axis": "layer norm over dim 0", "ln_no_keepdim": "layer norm without keepdim",
    "ln_all_values": "layer norm over all values",
    "ln_affine_swapped": "layer norm scale and shift swapped",
    "ln_shift_inside": "layer norm shift inside the scale", "ln_no_shift": "layer norm without shift",
    "new_ids_only": "generate returns the new ids only", "one_short": "generate stops one short",
    "return_in_loop": "generate returns inside the loop"}.items()})
PLANTED.update({"ln_one_pass": (LayerNormOnePass, gpt.LayerNorm),
                "ln_batch_and_features": (LayerNormOverTheBatch, gpt.LayerNorm),
                "ln_sequence": (layer_norm(lambda self, x: self.scale * (
                    x - x.mean(dim=(1, 2), keepdim=True)) / torch.sqrt(
                    x.var(dim=(1, 2), keepdim=True, unbiased=False) + self.eps) + self.shift), None)})
PLANTED.update({"argmax_no_keepdim": (generate_forgets_keepdim, None),
                "merge_not_contiguous": (AttentionForgetsContiguous, None)})
