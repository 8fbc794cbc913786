"""bonus/gpt2_to_llama_qwen/modern_hf.py: Hugging Face's Llama and Qwen3, converted, compute what ours computes.

Tiny random models built locally, in several shapes, every parameter drawn at random (norm
gains included: with gains of 1 a name map that swaps two norms would still pass).
"""

import pytest
import torch

import gpt
from bonus.gpt2_to_llama_qwen import modern, modern_hf

COMMON = {"vocab_size": 120, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "max_position_embeddings": 64,
          "eos_token_id": None}  # LlamaConfig's 2 would stop hf.generate early on some weights
IDS = torch.randint(0, COMMON["vocab_size"], (2, 40), generator=torch.Generator().manual_seed(1))
LLAMA3_ROPE = {"rope_type": "llama3", "rope_theta": 10_000.0, "factor": 4.0,
               "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 16}

SHAPES = {
    "Llama, 2 kv groups, tied, llama3 RoPE": ("llama", {"num_key_value_heads": 2, "head_dim": 16,
                                                        "tie_word_embeddings": True,
                                                        "rope_parameters": LLAMA3_ROPE}),
    "Llama, MHA (4 groups), untied": ("llama", {"num_key_value_heads": 4,
                                                "tie_word_embeddings": False}),
    "Llama, MQA (1 group), head_dim 32": ("llama", {"num_key_value_heads": 1, "head_dim": 32}),
    "Qwen3, QK-norm, 2 groups, tied": ("qwen3", {"num_key_value_heads": 2, "head_dim": 16,
                                                 "tie_word_embeddings": True}),
    "Qwen3, QK-norm, 1 group, untied, head_dim 32": ("qwen3", {"num_key_value_heads": 1,
                                                               "head_dim": 32}),
}


def hf_model(kind, changes):
    """A `kind` model ("llama", "qwen3") with every parameter drawn anew: gains (1-D) from 0.5
    to 1.5, matrices N(0, 0.1²)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    hf = AutoModelForCausalLM.from_config(AutoConfig.for_model(kind, **COMMON, **changes))
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in hf.parameters():
            fresh = (torch.rand(param.shape, generator=generator) + 0.5 if param.ndim == 1
                     else torch.randn(param.shape, generator=generator) * 0.1)
            param.copy_(fresh)
    return hf.eval()


@pytest.fixture(params=SHAPES, scope="module")
def pair(request):
    hf = hf_model(*SHAPES[request.param])
    return hf, modern_hf.model_from_hf(hf)


def test_logits_match_within_1e_5_with_every_setting_read_and_the_weights_shared(pair):
    hf, ours = pair
    with torch.no_grad():
        assert (hf(IDS).logits - ours(IDS)).abs().max() < 1e-5
    assert ours.cfg["qk_norm"] == (hf.config.model_type == "qwen3")
    assert ours.cfg["tie_embeddings"] == (ours.out_head.weight is ours.tok_emb.weight)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())
    assert ours.tok_emb.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()


def test_greedy_generation_gives_identical_ids(pair):
    hf, ours = pair
    prompt = IDS[:, :5]
    expected = hf.generate(prompt, max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert torch.equal(gpt.generate_text_simple(ours, prompt, 12, 64), expected)
    assert torch.equal(modern.generate_text_cached(ours, prompt, 12, 64), expected)


def in_dtype(hf, dtype, attn_implementation="sdpa"):
    """`hf`'s weights, rounded to `dtype`, in a model built as from_pretrained builds it (the
    RoPE frequencies in float32)."""
    low = type(hf)._from_config(hf.config, dtype=dtype, attn_implementation=attn_implementation)
    low.load_state_dict(hf.state_dict())
    return low.eval()


# Largest logit difference allowed (the logits reach about 3.5). Hugging Face's default attention
# (sdpa) is one fused kernel that rounds elsewhere than ours: measured up to 0.047 in bfloat16
# (8 significant bits; its own float32 logits are up to 0.055 away) and 0.0066 in float16 (11).
# Its "eager" attention runs our operations in our order: measured 0.0 and 0.0027 (head_dim 32,
# where it multiplies by 1/sqrt(32) and we divide), so one rounding step at logits 4 to 8.
TOLERANCE = {"sdpa": {torch.bfloat16: 0.1, torch.float16: 0.02},
             "eager": {torch.bfloat16: 2**-5, torch.float16: 2**-8}}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_bfloat16_and_float16_match_hugging_face(pair, dtype):
    for attention, tolerance in TOLERANCE.items():
        low = in_dtype(pair[0], dtype, attention)
        ours = modern_hf.model_from_hf(low)
        assert {p.dtype for p in ours.parameters()} == {dtype}
        assert ours.inv_freq.dtype == torch.float32
        with torch.no_grad():
            logits = ours(IDS)
            assert logits.dtype == dtype
            assert (logits - low(IDS).logits).abs().max() <= tolerance[dtype]
    # Greedy ids: against eager, since near-ties in bfloat16 go either way across kernels.
    expected = low.generate(IDS[:, :5], max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert torch.equal(modern.generate_text_cached(ours, IDS[:, :5], 12, 64), expected)


def test_the_conversion_stays_on_the_meta_device():
    from transformers import LlamaConfig, LlamaForCausalLM

    with torch.device("meta"):
        hf = LlamaForCausalLM(LlamaConfig(**COMMON))
    ours = modern_hf.model_from_hf(hf)
    assert all(t.is_meta for t in [*ours.parameters(), *ours.buffers()])


def test_unsupported_models_and_settings_are_refused():
    from transformers import GPT2Config, LlamaConfig

    with pytest.raises(ValueError, match="Llama or Qwen3"):
        modern_hf.config_from_hf(GPT2Config())
    with pytest.raises(ValueError, match="attention_bias"):
        modern_hf.config_from_hf(LlamaConfig(**COMMON, attention_bias=True))
    with pytest.raises(ValueError, match="attention_dropout"):
        modern_hf.config_from_hf(LlamaConfig(**COMMON, attention_dropout=0.1))
    linear = {"rope_type": "linear", "rope_theta": 1e4, "factor": 2.0}
    with pytest.raises(ValueError, match="rope_type"):
        modern_hf.config_from_hf(LlamaConfig(**COMMON, rope_parameters=linear))


def test_load_modern_reads_a_saved_folder_in_its_dtype(tmp_path):
    hf = hf_model(*SHAPES["Qwen3, QK-norm, 2 groups, tied"])
    saved = in_dtype(hf, torch.bfloat16)
    saved.save_pretrained(tmp_path)
    loaded, ids = modern_hf.load_modern(tmp_path), torch.tensor([[3, 1, 4, 1, 5]])
    assert loaded.tok_emb.weight.dtype == torch.bfloat16 and not loaded.training
    as_float32 = modern_hf.load_modern(tmp_path, dtype=torch.float32)
    assert as_float32.tok_emb.weight.dtype == torch.float32
    hf.load_state_dict(saved.state_dict())  # the saved, rounded weights in float32
    with torch.no_grad():
        assert torch.allclose(as_float32(ids), hf(ids).logits, atol=1e-5)


def test_load_modern_offline_says_what_to_do(tmp_path):
    name = "llm-ch4-tests/no-such-model"  # never in a cache; local_files_only: no network
    with pytest.raises(OSError) as raised:
        modern_hf.load_modern(name, local_files_only=True)
    assert name in str(raised.value) and modern_hf.MIRROR_HINT in str(raised.value)
    with pytest.raises(FileNotFoundError, match="safetensors"):
        modern_hf.load_modern(tmp_path)
