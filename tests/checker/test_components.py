"""The component checker (exercises/components.py): planted mistakes, rewrites, odd inputs.

Every mistake below is written the way a learner would write it, as a class or function of its
own (most copy the chapter's code with one line changed); the checker must give it its
diagnosis code. The equivalent rewrites must pass, and nothing a learner passes may raise.
"""

import functools
import math
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
from exercises import checks, components, planted
from exercises import feedback as texts
from exercises.components import check_component, compare_models
from exercises.messages import MESSAGES
from exercises.planted import COMPONENTS, DIAGNOSES, NOTES

review_component, review_models = components.review_component, components.review_models


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


def test_every_diagnosis_is_planted_here():
    assert set(PLANTED) == DIAGNOSES - {"ln_eps_value"} | {"ff_no_expansion"}  # eps: below


def test_a_layer_norm_with_another_eps_is_told_its_value():
    class LayerNorm(gpt.LayerNorm):
        def __init__(self, emb_dim):
            super().__init__(emb_dim)
            self.eps = 1e-6

    feedback = review_component(LayerNorm)
    assert feedback.codes == ("ln_eps_value",) and "eps is 1e-06" in feedback.text


@pytest.mark.parametrize("code", PLANTED)
def test_planted_mistake_is_diagnosed(code):
    yours, reference = PLANTED[code]
    feedback = review_component(yours, reference)
    assert feedback.passed == (code in NOTES), feedback.text  # the exact GELU: a note, no bug
    assert code in feedback.codes, feedback.text
    assert [c for c in feedback.codes if c in DIAGNOSES] in ([code], []), feedback.text


def test_erf_gelu_passes_with_a_note():
    for yours in (gelu(nn.GELU()), with_parts("GPTModel", GELU=gelu(nn.GELU()))):
        feedback = review_component(yours)
        assert feedback.passed and feedback.codes == ("correct_component", "gelu_erf")
        assert feedback.text.startswith("Correct") and 'approximate="tanh"' in feedback.text


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
                    "context_length"], dropout=cfg["drop_rate"], num_heads=cfg["n_heads"]) if (
                    kind == "MultiHeadAttention") else COMPONENTS[kind].build(new, cfg)
                self.get_submodule(parent).register_module(leaf, part)

    return type(kind, (base,), {"__init__": __init__})


@pytest.mark.parametrize("kind, part, code, where", [
    ("GPTModel", "LayerNorm", "ln_eps_outside", "trf_blocks.0.norm1 (LayerNorm)"),
    ("GPTModel", "GELU", "gelu_no_half", "trf_blocks.0.ff.layers.1 (GELU)"),
    ("GPTModel", "MultiHeadAttention", "no_mask", "trf_blocks.0.att (MultiHeadAttention)"),
    ("GPTModel", "MultiHeadAttention", "mask_not_cut", "trf_blocks.0.att (MultiHeadAttention)"),
    ("GPTModel", "TransformerBlock", "post_ln", "trf_blocks.0 (TransformerBlock)"),
    ("TransformerBlock", "MultiHeadAttention", "merge_no_transpose", "att (MultiHeadAttention)"),
    ("TransformerBlock", "FeedForward", "ff_relu", "ff.layers.1 (GELU)"),  # said of the GELU
    ("TransformerBlock", "FeedForward", "ff_no_activation", "ff (FeedForward)"),
])
def test_mistake_inside_is_located_and_diagnosed(kind, part, code, where):
    feedback = review_component(with_parts(kind, **{part: PLANTED[code][0]}))
    code = "gelu_relu" if code == "ff_relu" else code
    assert code in feedback.codes and f"{where}: " in feedback.text, feedback.text
    assert feedback.codes[0] in ("first_difference", "raised", "part_alone"), feedback.codes


def test_unknown_difference_names_the_first_differing_output():
    class Doubled(gpt.LayerNorm):  # no mistake the check knows
        def forward(self, x):
            return 2 * super().forward(x)

    feedback = review_component(with_parts("TransformerBlock", LayerNorm=Doubled))
    assert feedback.codes == ("first_difference", "probe_norm"), feedback.text
    assert "is that of norm1 (largest difference" in feedback.text
    assert "has mean 0 and variance 3.9999; the chapter's has mean 0 and variance 1" in feedback.text


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


def test_compare_models_on_a_model_typed_from_the_book():
    torch.manual_seed(1)
    yours = TypedGPTModel(SMALL, norm=layer_norm(ln_unbiased))
    before = {k: v.clone() for k, v in yours.state_dict().items()}
    torch.manual_seed(2)
    feedback = review_models(yours, gpt.GPTModel(SMALL))
    assert feedback.codes == ("first_difference", "ln_unbiased"), feedback.text
    assert "trf_blocks.0.norm1 (LayerNorm): " in feedback.text
    assert all(torch.equal(v, before[k]) for k, v in yours.state_dict().items())  # untouched

    torch.manual_seed(3)
    assert review_models(TypedGPTModel(SMALL), gpt.GPTModel(SMALL)).passed


def test_compare_models_with_nn_layer_norm_accepts_its_names():
    norm = lambda d: nn.LayerNorm(d, eps=1e-5)  # noqa: E731
    feedback = review_models(TypedGPTModel(SMALL, norm=norm), gpt.GPTModel(SMALL))
    assert feedback.passed, feedback.text
    assert "trf_blocks.0.norm1.weight → trf_blocks.0.norm1.scale" in feedback.text


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


@pytest.mark.parametrize("yours, reference", [
    (FunctionalLayerNorm, gpt.LayerNorm),
    (TorchGELU, gpt.GELU),
    (feed_forward(nn.GELU(approximate="tanh")), None),
    (EinsumAttention, gpt.MultiHeadAttention),
    (SdpaAttention, gpt.MultiHeadAttention),
    (FusedAttention, gpt.MultiHeadAttention),
    (with_parts("TransformerBlock", MultiHeadAttention=FusedAttention), None),
    (with_parts("GPTModel", LayerNorm=FunctionalLayerNorm, GELU=TorchGELU), None),
    (generate_without_softmax, gpt.generate_text_simple),
])
def test_equivalent_rewrite_passes(yours, reference):
    feedback = review_component(yours, reference)
    assert feedback.passed and feedback.codes == ("correct_component",), feedback.text


def test_fused_projection_is_read_as_the_three_book_names():
    text = review_component(FusedAttention, gpt.MultiHeadAttention).text
    assert "qkv.weight → W_query/W_key/W_value.weight" in text


@pytest.mark.parametrize("reference", [gpt.LayerNorm, gpt.GELU, gpt.FeedForward,
                                       gpt.MultiHeadAttention, gpt.TransformerBlock, gpt.GPTModel,
                                       gpt.generate_text_simple])
def test_the_reference_itself_passes(reference):
    assert review_component(reference).passed


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


@pytest.mark.parametrize("yours, reference, code", [
    (FeedForwardWithDropout, gpt.FeedForward, "dropout_extra"),
    (AttentionWithoutDropout, gpt.MultiHeadAttention, "no_dropout"),
    (BlockWithExtraDropout, gpt.TransformerBlock, "dropout_extra_at"),
    (type("LayerNorm", (gpt.LayerNorm,), {"forward": lambda self, x: gpt.LayerNorm.forward(
        self, x) * (0.9 if self.training else 1.0)}), gpt.LayerNorm, "training_differs"),
])
def test_training_mode_mistakes(yours, reference, code):
    feedback = review_component(yours, reference)
    assert feedback.codes == (code,), feedback.text


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


@pytest.mark.parametrize("yours, reference, code", [
    (None, None, "not_attempted_component"),
    (type("LayerNorm", (Stub,), {}), None, "not_attempted_component"),
    (stub_generate, gpt.generate_text_simple, "not_attempted_component"),
    (gpt.LayerNorm(4), None, "pass_class"),
    ("LayerNorm", None, "not_component"),
    (nn.Linear, None, "unknown_component"),
    (gpt.LayerNorm, nn.Linear, "unknown_reference"),
    (lambda x: x, gpt.LayerNorm, "expected_class"),
    (gpt.LayerNorm, gpt.generate_text_simple, "expected_function"),
    (gpt.FeedForward, gpt.LayerNorm, "wrong_signature"),  # FeedForward(cfg) given an int
    (NotAModule, gpt.LayerNorm, "component_not_module"),
    (layer_norm(raises_runtime_error), None, "raised"),
    (layer_norm(lambda self, x: None), None, "returns_none"),
    (layer_norm(lambda self, x: [x]), None, "not_tensor"),
    (list_generate, gpt.generate_text_simple, "returns_list"),
])
def test_odd_input_gets_a_sentence(yours, reference, code):
    feedback = review_component(yours, reference)
    assert not feedback.passed and code in feedback.codes, feedback.text


def test_wrong_signature_shows_the_chapter_signature():
    def __init__(self, d_in, d_out, num_heads, context_length, dropout):  # order swapped
        gpt.MultiHeadAttention.__init__(self, d_in, d_out, context_length, dropout, num_heads)

    feedback = review_component(type("MultiHeadAttention", (Attention,), {"__init__": __init__}))
    assert feedback.codes == ("wrong_signature",)
    assert COMPONENTS["MultiHeadAttention"].signature in feedback.text


def test_models_on_the_meta_device_and_classes_get_a_sentence():
    with torch.device("meta"):
        meta = gpt.GPTModel(SMALL)
    assert review_models(meta, gpt.GPTModel(SMALL)).codes == ("on_meta",)
    assert review_models(gpt.GPTModel, gpt.GPTModel(SMALL)).codes == ("models_need_instances",)
    assert review_models(gpt.GPTModel(SMALL), [1]).codes == ("component_not_module",)


def test_missing_and_extra_parameters_are_named():
    class Renamed(gpt.LayerNorm):
        def __init__(self, emb_dim):
            super().__init__(emb_dim)
            del self.shift
            self.beta = nn.Parameter(torch.zeros(emb_dim))

        def forward(self, x):
            mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
            return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.beta

    feedback = review_component(Renamed, gpt.LayerNorm)
    assert feedback.codes[:2] == ("missing_param", "extra_param"), feedback.text
    assert "no parameter shift" in feedback.text and "beta (shape (12,))" in feedback.text


def test_check_component_prints_in_the_chosen_language(capsys):
    check_component(layer_norm(ln_unbiased))
    compare_models(gpt.GPTModel(SMALL), gpt.GPTModel(SMALL))
    english = capsys.readouterr().out
    try:
        checks.set_language("zh")
        check_component(layer_norm(ln_unbiased))
    finally:
        checks.set_language("en")
    chinese = capsys.readouterr().out
    assert english.startswith("Not quite:") and "Same function" in english
    assert chinese.startswith("还不对") and "unbiased=False" in chinese


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


@pytest.mark.parametrize("yours, kind, code", [
    (AttentionDropsOutput, "MultiHeadAttention", "dropout_elsewhere"),
    (BlockDropsInput, "TransformerBlock", "dropout_elsewhere"),
    (GPTDropsLate, "GPTModel", "dropout_elsewhere"),
    (AttentionOwnDropout, "MultiHeadAttention", "no_dropout_at"),
    (BlockOneDropout, "TransformerBlock", "no_dropout_at"),
])
def test_dropout_at_another_place(yours, kind, code):
    feedback = review_component(yours, getattr(gpt, kind))
    assert feedback.codes == (code,), feedback.text


def test_training_mode_that_differs_beyond_dropout():
    feedback = review_component(AttentionScaledInTraining, gpt.MultiHeadAttention)
    assert feedback.codes == ("training_differs",), feedback.text


def test_a_skipped_submodule_is_named():
    def no_norm2(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(x))

    feedback = review_component(block(no_norm2))
    assert feedback.codes[0] == "never_called" and "norm2 is never called" in feedback.text


def test_a_wrong_shape_inside_is_named_with_both_shapes():
    class LastTokenOnly(Attention):
        def forward(self, x):
            return super().forward(x)[:, -1:, :]  # (b, 1, d_out): the block still broadcasts it

    feedback = review_component(with_parts("TransformerBlock", MultiHeadAttention=LastTokenOnly))
    assert feedback.codes == ("first_difference_shape", "wrong_shape"), feedback.text
    assert "att: shape (2, 1, 12), the chapter's (2, 24, 12)" in feedback.text


def test_a_skipped_layer_inside_is_named_after_the_error_it_causes():
    class HalfFeedForward(gpt.FeedForward):
        def forward(self, x):
            return self.layers[:2](x)  # the second layer left out

    feedback = review_component(with_parts("TransformerBlock", FeedForward=HalfFeedForward))
    assert feedback.codes[:3] == ("raised", "first_difference_shape", "never_called"), feedback.text
    assert "ff: shape (2, 24, 48), the chapter's (2, 24, 12)" in feedback.text
    assert "  - ff.layers.2 is never called: the forward pass skips it" in feedback.text


def test_a_skipped_block_is_named_as_a_whole():
    class SkipsLastBlock(gpt.GPTModel):
        def forward(self, in_idx):
            x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1]))
            return self.out_head(self.final_norm(self.trf_blocks[0](x)))

    feedback = review_component(SkipsLastBlock, gpt.GPTModel)
    assert feedback.text.splitlines()[1].startswith(
        "  - trf_blocks.1 is never called: the forward pass skips it"), feedback.text


def test_a_part_given_another_input_points_at_its_caller():
    def ff_first(self, x):
        x = x + self.drop_shortcut(self.ff(self.norm2(x)))
        return x + self.drop_shortcut(self.att(self.norm1(x)))

    feedback = review_component(block(ff_first))
    assert feedback.codes == ("input_from", "probe_position"), feedback.text
    assert "norm2 receives what the chapter gives to norm1: check the order of the calls in the " \
           "forward of TransformerBlock" in feedback.text


def test_generation_that_samples_gets_other_ids():
    def generate_text_simple(model, idx, max_new_tokens, context_size):
        torch.manual_seed(0)
        for _ in range(max_new_tokens):
            probas = torch.softmax(model(idx[:, -context_size:])[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probas, 1)), dim=1)
        return idx

    feedback = review_component(generate_text_simple)
    assert feedback.codes == ("probe_ids",), feedback.text
    assert "the new ids first differ at step 1 of row 0" in feedback.text


def test_generation_that_returns_nothing():
    def generate_text_simple(model, idx, max_new_tokens, context_size):
        idx = gpt.generate_text_simple(model, idx, max_new_tokens, context_size)  # noqa: F841

    assert review_component(generate_text_simple).codes == ("returns_none_function",)


def test_unaligned_weights_stop_the_comparison():
    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.gamma, self.beta = nn.Parameter(torch.ones(emb_dim)), nn.Parameter(torch.zeros(emb_dim))

        def forward(self, x):
            return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta, 1e-5)

    feedback = review_component(LayerNorm)
    assert feedback.codes == ("missing_param", "extra_param", "align_first"), feedback.text


def test_an_output_head_with_a_bias_is_told_bias_false():
    class GPTModel(gpt.GPTModel):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"])

    feedback = review_component(GPTModel)
    assert feedback.codes == ("extra_bias", "align_first"), feedback.text
    assert "out_head.bias: the chapter creates this layer with bias=False" in feedback.text


def test_a_parameter_of_another_shape_is_named():
    class RowLayerNorm(gpt.LayerNorm):
        def __init__(self, emb_dim):
            super().__init__(emb_dim)
            self.scale = nn.Parameter(torch.ones(1, emb_dim))

    feedback = review_component(RowLayerNorm, gpt.LayerNorm)
    assert feedback.codes[0] == "param_shape"
    assert "scale has shape (1, 12), the chapter's has (12,)" in feedback.text


def test_a_constructor_that_fails_otherwise():
    def __init__(self, emb_dim):
        raise ValueError("no")

    feedback = review_component(type("LayerNorm", (gpt.LayerNorm,), {"__init__": __init__}))
    assert feedback.codes == ("build_failed", "your_line") and "ValueError: no" in feedback.text
    assert 'in __init__: raise ValueError("no")' in feedback.text


def test_behaviour_that_several_mistakes_produce_lists_them(monkeypatch):
    mistakes = dict(COMPONENTS["GELU"].mistakes, gelu_twin=COMPONENTS["GELU"].mistakes["gelu_relu"])
    monkeypatch.setitem(COMPONENTS, "GELU", COMPONENTS["GELU"]._replace(mistakes=mistakes))
    monkeypatch.setitem(MESSAGES["en"], "gelu_twin", "{where}: a twin")
    monkeypatch.setattr(components, "DIAGNOSES", DIAGNOSES | {"gelu_twin"})
    feedback = review_component(gelu(torch.relu))
    assert feedback.codes == ("gelu_relu", "gelu_twin")
    assert feedback.text.startswith("Not quite:\n  - GELU behaves like 2 mistakes at once")


def test_an_unexpected_failure_in_the_check_is_one_sentence(monkeypatch):
    def broken(*args):
        raise RuntimeError("internal")

    monkeypatch.setattr(components, "_align", broken)
    assert review_component(gpt.LayerNorm).codes == ("could_not_check",)
    assert review_models(gpt.GPTModel(SMALL), gpt.GPTModel(SMALL)).codes == ("could_not_check",)


def test_every_message_of_the_checker_is_used_by_it():
    """Each code of the table appears in the checker's source, or is a diagnosis or a sites_ text."""
    source = "".join(Path(m.__file__).read_text() for m in (components, checks, planted, texts))
    used = {c for c in MESSAGES["en"] if f'"{c}"' in source or c in DIAGNOSES
            or c.startswith(("sites_", "correct_", "hint_4_", "not_attempted_4_"))}
    assert set(MESSAGES["en"]) - used == set()


# ---- learner code the first round let through or misread ----------------------------------------


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


@pytest.mark.parametrize("yours, reference, code, words", [
    (AttentionRightForEight, gpt.MultiHeadAttention, "initial_mask", "row 8, column 9"),
    (LayerNormOnePass, gpt.LayerNorm, "probe_norm", "input 4 of 4"),
    (LayerNormClampedMean, gpt.LayerNorm, "probe_norm", "variance"),
    (LayerNormOverTheBatch, gpt.LayerNorm, "probe_norm", "input 1 of 4"),
    (LayerNormSwappedInit, gpt.LayerNorm, "initial_value",
     "scale starts as all 0; the chapter's starts as all 1"),
    (LayerNormData, gpt.LayerNorm, "no_gradient", "no gradient reaches scale"),
    (LayerNormDetached, gpt.LayerNorm, "no_gradient", "no gradient reaches the input"),
    (AttentionSwappedLinear, gpt.MultiHeadAttention, "param_shape",
     "W_query.weight has shape (12, 18), the chapter's has (18, 12)"),
    (GPTWrappedPositions, gpt.GPTModel, "probe_position", "is 8 of 24"),
])
def test_what_the_first_round_let_through_fails(yours, reference, code, words):
    feedback = review_component(yours, reference)
    assert not feedback.passed and code in feedback.codes and words in feedback.text, feedback.text


def test_a_mask_right_for_eight_positions_shows_which_keys_a_query_sees():
    class MultiHeadAttention(Attention):
        def masked(self, scores, t):  # the buffer is fine; the mask used is not
            return scores.masked_fill(causal(t, 1) & (torch.arange(t) < 8)[:, None], -torch.inf)

    feedback = review_component(MultiHeadAttention)
    assert feedback.codes == ("input_differs", "probe_keys"), feedback.text
    assert "out_proj computes what" in feedback.text and "query 8 draws on keys 0..23, the chapter's on keys 0..8" in feedback.text


def test_models_are_compared_well_past_eight_positions():
    torch.manual_seed(0)
    reference = gpt.GPTModel(SMALL)
    yours = GPTWrappedPositions(SMALL)
    feedback = review_models(yours, reference)
    assert "probe_position" in feedback.codes and "is 8 of 32" in feedback.text, feedback.text


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


def test_dropout_split_into_calls_passes_and_dropout_on_another_tensor_fails():
    assert review_component(AttentionHeadLoop, gpt.MultiHeadAttention).passed
    block = with_parts("TransformerBlock", MultiHeadAttention=AttentionHeadLoop)
    assert review_component(block).passed
    feedback = review_component(AttentionDropsScores, gpt.MultiHeadAttention)
    assert not feedback.passed and feedback.codes == ("dropout_elsewhere",), feedback.text


def test_their_own_error_comes_first_and_matches_no_mistake():
    def generate_text_simple(model, idx, max_new_tokens, context_size):
        for _ in range(max_new_tokens):
            logits = model(idx[:, -context_size:])[:, -1, :]
            idx_next = torch.argmax(logits, dim=-1)  # keepdim forgotten
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

    feedback = review_component(generate_text_simple)
    assert feedback.codes == ("raised", "your_line"), feedback.text
    assert "your line" in feedback.text and "idx = torch.cat((idx, idx_next), dim=1)" in feedback.text

    class MultiHeadAttention(Attention):
        def merge(self, context, b, t):
            return context.transpose(1, 2).view(b, t, self.d_out)  # .contiguous() forgotten

    feedback = review_component(MultiHeadAttention)
    assert feedback.codes == ("raised", "your_line"), feedback.text
    assert "RuntimeError: view size is not compatible" in feedback.text
    assert "return context.transpose(1, 2).view(b, t, self.d_out)" in feedback.text


def test_a_class_where_a_module_belongs_is_its_own_error_not_a_signature():
    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            d = cfg["emb_dim"]
            self.layers = nn.Sequential(nn.Linear(d, 4 * d), gpt.GELU, nn.Linear(4 * d, d))

    feedback = review_component(FeedForward)
    assert feedback.codes == ("build_failed", "your_line"), feedback.text
    assert "gpt.GELU, nn.Linear(4 * d, d))" in feedback.text


class GPTReadsPositions(gpt.GPTModel):
    def forward(self, in_idx, final_first=False):
        x = self.tok_emb(in_idx) + self.pos_emb.weight[:in_idx.shape[1]]  # read, not called
        x = self.drop_emb(x)
        x = self.final_norm(x) if final_first else x
        x = self.trf_blocks(x)
        return self.out_head(x if final_first else self.final_norm(x))


def test_location_follows_what_ran():
    model = with_parts("GPTModel", TransformerBlock=block(post_ln))
    reads = type("GPTModel", (model, GPTReadsPositions), {"forward": GPTReadsPositions.forward})
    feedback = review_component(reads)
    assert "pos_emb" not in feedback.text and "post_ln" in feedback.codes, feedback.text

    final_first = gpt_model(lambda self, idx: GPTReadsPositions.forward(self, idx, final_first=True))
    feedback = review_component(final_first)
    assert feedback.codes[0] == "input_from", feedback.text
    assert "final_norm receives what the chapter gives to trf_blocks: check the order of the " \
           "calls in the forward of GPTModel" in feedback.text


def test_one_block_repeated_is_named_shared():
    class GPTModel(gpt.GPTModel):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.trf_blocks = nn.Sequential(*[gpt.TransformerBlock(cfg)] * cfg["n_layers"])

    feedback = review_component(GPTModel)
    assert feedback.codes == ("shared_module",), feedback.text
    assert "trf_blocks.0, trf_blocks.1 are one and the same module object" in feedback.text


def test_two_mistakes_at_once_are_named_as_such():
    def forward(self, x):
        mean, std = x.mean(dim=-1, keepdim=True), x.std(dim=-1, keepdim=True)  # n - 1
        return self.scale * (x - mean) / (std + self.eps) + self.shift  # eps outside

    feedback = review_component(layer_norm(forward))
    assert feedback.codes == ("two_mistakes", "ln_unbiased", "ln_eps_outside"), feedback.text
    assert "LayerNorm makes two mistakes at once:\n  - (1) LayerNorm: it uses" in feedback.text


def test_a_missing_parameter_gets_no_generic_line():
    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.eps, self.scale = 1e-5, nn.Parameter(torch.ones(emb_dim))

        def forward(self, x):
            return self.scale * (x - x.mean(-1, keepdim=True)) / torch.sqrt(
                x.var(-1, keepdim=True, unbiased=False) + self.eps)

    feedback = review_component(LayerNorm)
    assert feedback.codes == ("missing_param",), feedback.text


def test_chinese_lists_and_locations_use_chinese_punctuation():
    try:
        checks.set_language("zh")
        shared = review_component(type("GPTModel", (gpt.GPTModel,), {"__init__": lambda self, cfg: (
            gpt.GPTModel.__init__(self, cfg), setattr(self, "trf_blocks", nn.Sequential(
                *[gpt.TransformerBlock(cfg)] * cfg["n_layers"])))[0]})).text
        inside = review_component(with_parts("GPTModel", LayerNorm=layer_norm(ln_unbiased))).text
    finally:
        checks.set_language("en")
    assert "trf_blocks.0、trf_blocks.1 是同一个模块对象" in shared
    assert "trf_blocks.0.norm1（LayerNorm）：" in inside


@pytest.mark.parametrize("kind", [k for k in COMPONENTS if k != "GELU"])
def test_the_mistakes_default_behaviour_is_the_chapter_s(kind):
    spec = COMPONENTS[kind]
    base = {m.func for m in spec.mistakes.values() if isinstance(m, functools.partial)}
    torch.manual_seed(0)
    module = gpt.GPTModel(components.CONFIG).eval() if spec.build is None else spec.build(
        spec.reference, components.CONFIG).eval()
    for args in spec.inputs(components.CONFIG):
        expected = spec.reference(module, *args) if spec.build is None else module(*args)
        assert all(torch.allclose(f(module, *args), expected) for f in base)


def test_the_gelu_formula_is_the_chapter_s():
    x = torch.linspace(-5, 5, 101)
    assert torch.allclose(planted.gelu_tanh(x), gpt.GELU()(x))
