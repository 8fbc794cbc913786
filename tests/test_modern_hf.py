"""bonus/modern_hf.py: Hugging Face's Llama and Qwen3, converted, compute what ours computes.

Tiny random models built locally (no download): the logits agree within 1e-5 and greedy
generation gives the same ids, for several shapes - GQA group counts, tied and untied
embeddings, QK-norm on and off, Llama 3's RoPE scaling.
"""

import pytest
import torch

import gpt
from bonus import modern
from bonus.modern_hf import MIRROR_HINT, config_from_hf, load_modern, model_from_hf

pytest.importorskip("transformers")  # in requirements-bonus.txt, so CI always has it

COMMON = {"vocab_size": 120, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "max_position_embeddings": 64}
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
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM

    config_class, model_class = {"llama": (LlamaConfig, LlamaForCausalLM),
                                 "qwen3": (Qwen3Config, Qwen3ForCausalLM)}[kind]
    torch.manual_seed(0)
    return model_class(config_class(**COMMON, **changes)).eval()


@pytest.fixture(params=SHAPES, scope="module")
def pair(request):
    hf = hf_model(*SHAPES[request.param])
    return hf, model_from_hf(hf)


def test_logits_match_within_1e_5(pair):
    hf, ours = pair
    ids = torch.randint(0, COMMON["vocab_size"], (2, 40), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert (hf(ids).logits - ours(ids)).abs().max() < 1e-5


def test_greedy_generation_gives_identical_ids(pair):
    hf, ours = pair
    prompt = torch.randint(0, COMMON["vocab_size"], (2, 5), generator=torch.Generator().manual_seed(2))
    expected = hf.generate(prompt, max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert torch.equal(gpt.generate_text_simple(ours, prompt, 12, 64), expected)
    assert torch.equal(modern.generate_text_cached(ours, prompt, 12, 64), expected)


def test_the_conversion_reads_every_setting(pair):
    hf, ours = pair
    cfg = ours.cfg
    assert cfg["qk_norm"] == (hf.config.model_type == "qwen3")
    assert cfg["tie_embeddings"] == (ours.out_head.weight is ours.tok_emb.weight)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in hf.parameters())
    assert ours.tok_emb.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()  # shared


def test_unsupported_models_and_settings_are_refused():
    from transformers import GPT2Config, LlamaConfig

    with pytest.raises(ValueError, match="Llama or Qwen3"):
        config_from_hf(GPT2Config())
    with pytest.raises(ValueError, match="attention_bias"):
        config_from_hf(LlamaConfig(**COMMON, attention_bias=True))
    with pytest.raises(ValueError, match="rope_type"):
        config_from_hf(LlamaConfig(**COMMON, rope_parameters={"rope_type": "linear",
                                                              "rope_theta": 1e4, "factor": 2.0}))


def test_load_modern_reads_a_saved_folder(tmp_path):
    hf = hf_model(*SHAPES["Qwen3, QK-norm, 2 groups, tied"])
    hf.save_pretrained(tmp_path)
    loaded, ids = load_modern(tmp_path), torch.tensor([[3, 1, 4, 1, 5]])
    with torch.no_grad():
        assert torch.allclose(loaded(ids), hf(ids).logits, atol=1e-5)
    assert not loaded.training


def test_load_modern_offline_says_what_to_do(tmp_path):
    name = "llm-ch4-tests/no-such-model"  # never in a cache; local_files_only: no network
    with pytest.raises(OSError) as raised:
        load_modern(name, local_files_only=True)
    assert name in str(raised.value) and MIRROR_HINT in str(raised.value)
    with pytest.raises(FileNotFoundError, match="safetensors"):
        load_modern(tmp_path)
