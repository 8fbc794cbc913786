"""bonus/flops.py: the FLOPs derived from a config equal what FlopCounterMode counts."""

import pytest
import torch

import gpt
from bonus.flops import (
    COMPONENTS,
    counted_breakdown,
    counted_flops,
    counted_flops_by_op,
    flops_breakdown,
)
from tests.helpers import TINY_CONFIG


def test_counter_counts_matrix_products_only():
    """The convention the derivation relies on: 2 FLOPs per multiply-add, biases and
    element-wise work (GELU, layer norm, softmax) free."""
    x = torch.rand(2, 5, 32)
    assert counted_flops_by_op(torch.nn.Linear(32, 48), x) == {"aten.addmm": 2 * 10 * 32 * 48}
    assert counted_flops_by_op(torch.matmul, x, torch.rand(32, 7)) == {"aten.mm": 2 * 10 * 32 * 7}
    for elementwise in (gpt.GELU(), gpt.LayerNorm(32), lambda t: torch.softmax(t, dim=-1)):
        assert counted_flops(elementwise, x) == 0


@pytest.mark.parametrize("name", list(gpt.GPT2_SIZES))
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


def test_scores_and_mixing_grow_with_the_square_of_the_context():
    one, double = (flops_breakdown(gpt.GPT_CONFIG_124M, t) for t in (512, 1024))
    assert double["attention scores and mixing"] == 4 * one["attention scores and mixing"]
    assert double["feed-forward"] == 2 * one["feed-forward"]


@pytest.mark.parametrize(
    "cfg, num_tokens, error",
    [
        ([768], 4, TypeError),
        (gpt.GPT_CONFIG_124M, 4.0, TypeError),
        (gpt.GPT_CONFIG_124M, True, TypeError),
        (gpt.GPT_CONFIG_124M, 0, ValueError),
    ],
)
def test_flops_breakdown_rejects_bad_input(cfg, num_tokens, error):
    with pytest.raises(error):
        flops_breakdown(cfg, num_tokens)
