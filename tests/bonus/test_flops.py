"""bonus/flops/flops.py: the FLOPs derived from a config equal what FlopCounterMode counts."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import gpt
from bonus.flops.flops import (
    COMPONENTS,
    causal_scores_flops,
    chinchilla_forward_flops,
    counted_breakdown,
    counted_flops,
    counted_flops_by_op,
    counted_training_flops,
    flops_breakdown,
    kaplan_forward_flops,
)
from bonus.kv_cache import kv_cache
from tests.helpers import TINY_CONFIG


def test_counter_counts_matrix_products_only():
    """The convention the derivation relies on: 2 FLOPs per multiply-add, biases and
    element-wise work (GELU, layer norm, softmax) free."""
    x = torch.rand(2, 5, 32)
    assert counted_flops_by_op(torch.nn.Linear(32, 48), x) == {"aten.addmm": 2 * 10 * 32 * 48}
    assert counted_flops_by_op(torch.matmul, x, torch.rand(32, 7)) == {"aten.mm": 2 * 10 * 32 * 7}
    for elementwise in (gpt.GELU(), gpt.LayerNorm(32), lambda t: torch.softmax(t, dim=-1)):
        assert counted_flops(elementwise, x) == 0


@pytest.mark.parametrize("name", [  # the large two are slow: .ci/run runs them
    pytest.param(name, marks=pytest.mark.slow) if name in ("gpt2-large", "gpt2-xl") else name
    for name in gpt.GPT2_SIZES])
def test_derived_equals_counted_for_every_gpt2_size(name):
    """The real forward pass of each GPT-2 size, with its weights on the meta device (shapes,
    no memory) and ordinary token ids, over the full 1024-token context."""
    cfg = gpt.gpt2_config(name)
    with torch.device("meta"):
        model = gpt.GPTModel(cfg)
    in_idx = torch.zeros(1, cfg["context_length"], dtype=torch.long)
    counted = counted_breakdown(model, in_idx)
    assert counted == flops_breakdown(cfg, cfg["context_length"])
    assert sum(counted.values()) == counted_flops(model, in_idx)  # nothing counted elsewhere


@pytest.mark.parametrize("qkv_bias", [False, True])
@pytest.mark.parametrize("num_tokens", [1, 7, 16])
def test_derived_equals_counted_with_real_weights(qkv_bias, num_tokens):
    torch.manual_seed(123)
    model = gpt.GPTModel({**TINY_CONFIG, "qkv_bias": qkv_bias}).eval()
    in_idx = torch.randint(0, TINY_CONFIG["vocab_size"], (2, num_tokens))  # a batch of two
    derived = flops_breakdown(TINY_CONFIG, num_tokens)
    assert counted_breakdown(model, in_idx) == {part: 2 * derived[part] for part in COMPONENTS}
    assert 2 * sum(derived.values()) == counted_flops(model, in_idx)


def test_causal_count_is_what_cached_generation_runs_token_by_token():
    """Feeding 16 tokens one at a time through bonus/kv_cache/kv_cache.py's model runs each position's
    scores and weighted sum over itself and the earlier positions only (the bmm products)."""
    torch.manual_seed(123)
    model = kv_cache.GPTModel(TINY_CONFIG).eval()
    ids = torch.randint(0, TINY_CONFIG["vocab_size"], (1, 16))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        for t in range(16):
            model(ids[:, t:t + 1], use_cache=True)
    scores = counter.get_flop_counts()["Global"][torch.ops.aten.bmm]
    assert scores == causal_scores_flops(TINY_CONFIG, 16)
    dense = flops_breakdown(TINY_CONFIG, 16)["attention scores and mixing"]
    assert 2 * 16 * scores == (16 + 1) * dense  # a fraction (T + 1) / 2T of the full count


@pytest.mark.parametrize("name", list(gpt.GPT2_SIZES))
def test_kaplan_and_chinchilla_differ_from_ours_by_the_terms_they_count_otherwise(name):
    """Kaplan's Table 1: 2N is the blocks' weight matrices, counted on the model; its attention
    term is half the chapter's full T x T count; the output head is not in it. Chinchilla adds
    the embedding lookup as a product and the softmax."""
    cfg = gpt.gpt2_config(name)
    t, d, v, heads, layers = 1024, cfg["emb_dim"], cfg["vocab_size"], cfg["n_heads"], cfg["n_layers"]
    with torch.device("meta"):
        model = gpt.GPTModel(cfg)
    block_matrices = sum(p.numel() for p in model.trf_blocks.parameters() if p.dim() == 2)
    parts = flops_breakdown(cfg, t)
    kaplan = kaplan_forward_flops(cfg, t)
    assert 2 * block_matrices * t == parts["attention projections"] + parts["feed-forward"]
    assert (kaplan - 2 * block_matrices) * 2 * t == parts["attention scores and mixing"]
    ours = sum(parts.values())
    assert chinchilla_forward_flops(cfg, t) == ours + 2 * t * v * d + layers * 3 * heads * t * t


def test_backward_counts_twice_the_forward():
    """Each product's backward is two products of its size (gradients of its input and of its
    weights); the loss adds nothing. A batch of two, dropout on, as in training."""
    torch.manual_seed(123)
    model = gpt.GPTModel(TINY_CONFIG).train()
    ids = torch.randint(0, TINY_CONFIG["vocab_size"], (2, 16))
    counted = counted_training_flops(model, ids, ids.roll(-1, dims=1))
    assert counted["forward"] == 2 * sum(flops_breakdown(TINY_CONFIG, 16).values())
    assert counted["backward"] == 2 * counted["forward"]
    assert all(p.grad is not None for p in model.parameters())
