"""bonus/gpt2_to_llama_qwen/modern.py: the chapter's GPT with RMSNorm, SwiGLU, RoPE, GQA and QK-norm.

Each change is proven on its own (the # NEW discipline, RMSNorm against LayerNorm, RoPE's
relative positions, SwiGLU against an MLP), then the whole: cached generation equals the
chapter's loop, and the published configurations have their published parameter counts.
"""

import math

import pytest
import torch
import torch.nn as nn

import gpt
from bonus.gpt2_to_llama_qwen import modern
from tests.helpers import assert_changes_marked_new, cached_and_full_logits


@pytest.mark.parametrize("chapter, variant", [
    (gpt.LayerNorm, modern.RMSNorm),
    (gpt.FeedForward, modern.FeedForward),
    (gpt.MultiHeadAttention, modern.GroupedQueryAttention),
    (gpt.TransformerBlock, modern.TransformerBlock),
    (gpt.GPTModel, modern.ModernGPT),
])
def test_every_change_against_the_chapter_is_marked_new(chapter, variant):
    assert_changes_marked_new(chapter, variant)


def test_rms_norm_is_layer_norms_scale_path_on_zero_mean_input():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    centered = x - x.mean(dim=-1, keepdim=True)
    layer_norm, rms_norm = gpt.LayerNorm(16), modern.RMSNorm(16, eps=1e-5)
    with torch.no_grad():
        layer_norm.scale.copy_(torch.randn(16))
        rms_norm.scale.copy_(layer_norm.scale)
        assert torch.allclose(rms_norm(centered), layer_norm(centered), atol=1e-6)
        assert not torch.allclose(rms_norm(x + 1), layer_norm(x + 1), atol=1e-2)


def rotated(x, position, inv_freq):
    cos, sin = modern.rotary_angles(torch.tensor([position]), inv_freq)
    return modern.apply_rope(x[None, None, None, :], cos, sin)[0, 0, 0]


@pytest.mark.parametrize("scaling", [None, modern.LLAMA_3_2_1B["rope_scaling"]])
def test_rope_scores_depend_only_on_the_distance_and_keep_norms(scaling):
    torch.manual_seed(0)
    inv_freq = modern.rope_frequencies(64, 500_000.0, scaling).double()
    q, k = torch.randn(64, dtype=torch.float64), torch.randn(64, dtype=torch.float64)
    score = rotated(q, 7, inv_freq) @ rotated(k, 3, inv_freq)
    for shift in (1, 100, 5000):
        assert torch.isclose(rotated(q, 7 + shift, inv_freq) @ rotated(k, 3 + shift, inv_freq),
                             score, rtol=1e-9)
    assert not torch.isclose(rotated(q, 8, inv_freq) @ rotated(k, 3, inv_freq), score)
    assert torch.isclose(rotated(q, 12345, inv_freq).norm(), q.norm(), rtol=1e-12)


def test_llama3_scaling_slows_only_the_low_frequencies():
    plain = modern.rope_frequencies(64, 500_000.0)
    scaled = modern.rope_frequencies(64, 500_000.0, modern.LLAMA_3_2_1B["rope_scaling"])
    wavelength = 2 * math.pi / plain
    fast, slow = wavelength < 8192 / 4, wavelength > 8192
    assert torch.equal(scaled[fast], plain[fast])
    assert torch.allclose(scaled[slow], plain[slow] / 32)
    middle = ~fast & ~slow
    assert middle.any() and (scaled[middle] < plain[middle]).all()
    assert (scaled[middle] > plain[middle] / 32).all()


def test_swiglu_with_its_linear_branch_fixed_at_one_is_the_chapters_mlp_with_silu():
    torch.manual_seed(0)
    cfg = {**modern.TINY_CONFIG, "emb_dim": 8, "hidden_dim": 24}
    ff, x = modern.FeedForward(cfg), torch.randn(3, 8)
    mlp = nn.Sequential(ff.gate, nn.SiLU(), ff.down)  # Linear, activation, Linear: 4.3's shape
    with torch.no_grad():
        assert not torch.allclose(ff(x), mlp(x))
        ff.up.forward = lambda h: torch.ones(*h.shape[:-1], 24)  # the linear branch held at 1
        assert torch.allclose(ff(x), mlp(x))


def model(**changes):
    torch.manual_seed(123)
    return modern.ModernGPT({**modern.TINY_CONFIG, **changes}).eval()


@pytest.mark.parametrize("changes", [
    {},
    {"qk_norm": True, "tie_embeddings": True},
    {"n_kv_groups": 1, "rope_scaling": {"factor": 4.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0, "original_context_length": 16}},
    {"n_kv_groups": 4, "head_dim": 8},
])
def test_cached_logits_and_generation_equal_the_chapters_full_passes(changes):
    m = model(**changes)
    prompt = torch.randint(0, 1000, (2, 6), generator=torch.Generator().manual_seed(1))
    for steps, context in ((10, 64), (30, 16)):  # the second slides the window
        expected = gpt.generate_text_simple(m, prompt, steps, context)
        assert torch.equal(modern.generate_text_cached(m, prompt, steps, context), expected)
    cached, full = cached_and_full_logits(m, torch.randint(0, 1000, (1, 12)), 8)
    assert torch.allclose(cached, full, atol=1e-5) and m.current_pos == 12


@pytest.mark.parametrize("dtype, tolerance", [(torch.bfloat16, 0.1), (torch.float16, 0.02)])
def test_bfloat16_and_float16_models_run_near_float32_with_float32_rope(dtype, tolerance):
    m, ids = model(qk_norm=True), torch.randint(0, 1000, (2, 40))
    with torch.no_grad():
        full = m(ids)
        low = m.to(dtype)  # in place, as nn.Module.to is
        assert low.tok_emb.weight.dtype == dtype and low(ids).dtype == dtype
        assert low.inv_freq.dtype == torch.float32  # .to() rounds no frequency
        assert torch.equal(low.inv_freq, modern.rope_frequencies(16, 10_000.0))
        assert (low(ids).float() - full).abs().max() < tolerance  # measured 0.014 and 0.0015
    prompt = ids[:, :6]
    assert torch.equal(modern.generate_text_cached(low, prompt, 10, 64),
                       gpt.generate_text_simple(low, prompt, 10, 64))


@pytest.mark.parametrize("cfg, total, kv_bytes", [  # tied: the head adds no parameter
    (modern.LLAMA_3_2_1B, 1_235_814_400, 32_768),
    (modern.QWEN3_0_6B, 596_049_920, 114_688),
    ({**modern.TINY_CONFIG, "qk_norm": True}, None, 2 * 2 * 2 * 16 * 2),
])
def test_parameter_breakdown_and_cache_bytes_match_a_built_model(cfg, total, kv_bytes):
    with torch.device("meta"):
        built = sum(p.numel() for p in modern.ModernGPT(cfg).parameters())
    assert sum(modern.parameter_breakdown(cfg).values()) == built
    assert total is None or built == total
    assert modern.kv_cache_bytes_per_token(cfg) == kv_bytes


def test_unknown_config_keys_and_ids_outside_the_vocabulary_or_context_are_refused():
    with pytest.raises(ValueError, match=r"differ: \['drop_rate'\]"):  # GPT-2's, not read here
        modern.ModernGPT({**modern.TINY_CONFIG, "drop_rate": 0.1})
    with pytest.raises(ValueError, match="token ids"):
        modern.generate_text_cached(model(), torch.tensor([[1000]]), 1, 8)
    with pytest.raises(ValueError, match="context_length"):
        model()(torch.zeros(1, 65, dtype=torch.long))
