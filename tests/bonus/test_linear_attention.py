"""bonus/linear_attention/linear_attention.py: the parallel and recurrent forms give the same outputs, and the
cost formulas match the tensors and FlopCounterMode."""

import pytest
import torch
import torch.nn.functional as F

from bonus.flops.flops import counted_flops_by_op
from bonus.kv_cache import kv_cache
from bonus.linear_attention.linear_attention import (
    elu_feature_map,
    kv_cache_costs,
    normalized_parallel_form,
    normalized_recurrent_form,
    normalized_weights,
    parallel_form,
    recurrent_form,
    recurrent_step,
    state_costs,
)

GPT2_HEADS = {"emb_dim": 768, "n_heads": 12}  # gpt.GPT_CONFIG_124M's attention layout


def inputs(num_tokens=24, d_k=8, d_v=6, dtype=torch.float64, seed=123):
    """Batch 2, 3 heads; unit-length queries and keys, gates in (0, 1), as the models use."""
    generator = torch.Generator().manual_seed(seed)
    shape = (2, 3, num_tokens)
    q = F.normalize(torch.randn(*shape, d_k, generator=generator, dtype=dtype), dim=-1)
    k = F.normalize(torch.randn(*shape, d_k, generator=generator, dtype=dtype), dim=-1)
    v = torch.randn(*shape, d_v, generator=generator, dtype=dtype)
    beta = torch.rand(*shape, generator=generator, dtype=dtype)
    alpha = 0.5 + 0.5 * torch.rand(*shape, generator=generator, dtype=dtype)
    return q, k, v, beta, alpha


@pytest.mark.parametrize("use_beta, use_alpha", [(False, False), (True, False), (True, True),
                                                  (False, True)],
                         ids=["linear attention", "DeltaNet", "Gated DeltaNet",
                              "gated linear attention"])
@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_parallel_form_equals_recurrent_form(use_beta, use_alpha, dtype, tolerance):
    q, k, v, beta, alpha = inputs(dtype=dtype)
    gates = (beta if use_beta else None), (alpha if use_alpha else None)
    recurrent, _ = recurrent_form(q, k, v, *gates)
    assert (parallel_form(q, k, v, *gates) - recurrent).abs().max() < tolerance


def test_linear_attention_is_the_masked_sum_of_dot_products():
    """o_t = sum over i <= t of (q_t . k_i) v_i, written out position by position."""
    q, k, v, _, _ = inputs(num_tokens=6)
    def dot(t, i):
        return (q[..., t, :] * k[..., i, :]).sum(dim=-1, keepdim=True)

    expected = torch.stack([sum(dot(t, i) * v[..., i, :] for i in range(t + 1)) for t in range(6)],
                           dim=-2)
    assert torch.allclose(parallel_form(q, k, v), expected)


def test_gated_deltanet_with_alpha_one_is_deltanet():
    q, k, v, beta, alpha = inputs()
    assert torch.allclose(parallel_form(q, k, v, beta, torch.ones_like(alpha)),
                          parallel_form(q, k, v, beta))


def test_delta_rule_with_beta_one_replaces_a_keys_value():
    """Write v1 then v2 under the same key: linear attention retrieves their sum, the delta
    rule with beta = 1 only the newer value."""
    k = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    v = torch.tensor([[1.0, 2.0], [5.0, -1.0]])
    q = k  # read with the key itself after each write
    assert parallel_form(q, k, v)[-1].tolist() == [6.0, 1.0]
    assert parallel_form(q, k, v, beta=torch.ones(2))[-1].tolist() == [5.0, -1.0]


@pytest.mark.parametrize("num_tokens", [1, 5, 40])
def test_state_size_does_not_grow_with_the_sequence(num_tokens):
    _, state = recurrent_form(*inputs(num_tokens=num_tokens))
    assert state.shape == (2, 3, 6, 8)  # batch, heads, d_v, d_k


@pytest.mark.parametrize("delta_rule", [False, True])
def test_state_costs_match_the_state_and_the_counted_step(delta_rule):
    heads, head_dim = GPT2_HEADS["n_heads"], GPT2_HEADS["emb_dim"] // GPT2_HEADS["n_heads"]
    state = torch.zeros(1, heads, head_dim, head_dim)
    q = k = v = torch.randn(1, heads, head_dim)
    beta = torch.rand(1, heads) if delta_rule else None
    numbers, flops = state_costs(GPT2_HEADS, delta_rule)
    assert state.numel() == numbers
    assert counted_flops_by_op(recurrent_step, state, q, k, v, beta) == {"aten.bmm": flops}


@pytest.mark.parametrize("num_keys", [1, 9, 40])
def test_kv_cache_costs_match_the_chapters_cached_attention(num_keys):
    """A step of bonus/kv_cache/kv_cache.py's attention over num_keys positions: its cache holds the
    formula's numbers, and its scores and weighted sum (the bmm products) the formula's FLOPs."""
    torch.manual_seed(123)
    d = GPT2_HEADS["emb_dim"]
    att = kv_cache.MultiHeadAttention(d, d, 64, 0.0, GPT2_HEADS["n_heads"])
    with torch.no_grad():
        if num_keys > 1:
            att(torch.randn(1, num_keys - 1, d), use_cache=True)  # the earlier positions
        counted = counted_flops_by_op(att, torch.randn(1, 1, d), use_cache=True)
    numbers, flops = kv_cache_costs(GPT2_HEADS, num_keys)
    assert att.cache_k.numel() + att.cache_v.numel() == numbers
    assert counted["aten.bmm"] == flops


def test_elu_feature_map_is_positive():
    x = torch.tensor([-3.0, -1.0, 0.0, 0.5, 2.0])
    assert torch.allclose(elu_feature_map(x), torch.tensor([torch.e**-3, torch.e**-1, 1, 1.5, 3]))


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_normalized_parallel_form_equals_recurrent_form(dtype, tolerance):
    q, k, v, _, _ = inputs(dtype=dtype)
    q, k = 3 * q, 3 * k  # coordinates well on both sides of 0: both branches of elu
    recurrent, (state, normalizer) = normalized_recurrent_form(q, k, v)
    assert torch.allclose(normalized_parallel_form(q, k, v), recurrent, rtol=0, atol=tolerance)
    assert state.shape == (2, 3, 6, 8) and normalizer.shape == (2, 3, 8)  # as after 1 token


def test_normalized_form_averages_the_values_with_positive_causal_weights_that_sum_to_one():
    """Unlike the raw q . k of the unnormalised form, which here has negative weights. Equal
    values come out unchanged, and every output lies between the smallest and largest value
    seen so far."""
    q, k, v, _, _ = inputs()
    weights = normalized_weights(q, k)
    causal = torch.ones(24, 24, dtype=torch.bool).tril()
    assert (weights[..., causal] > 0).all() and (weights[..., ~causal] == 0).all()
    assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 3, 24, dtype=torch.float64))
    assert ((q @ k.transpose(-2, -1))[..., causal] < 0).any()
    equal_values = torch.full_like(v, 2.5)
    assert torch.allclose(normalized_parallel_form(q, k, equal_values), equal_values)
    out = normalized_parallel_form(q, k, v)
    assert (v.cummin(dim=-2).values - 1e-12 <= out).all()
    assert (out <= v.cummax(dim=-2).values + 1e-12).all()
