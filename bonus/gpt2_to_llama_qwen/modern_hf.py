"""Turn Hugging Face's Llama and Qwen3 models into modern.py's ModernGPT.

    model = model_from_hf(hf_model)             # a LlamaForCausalLM or Qwen3ForCausalLM -> ours
    model = load_modern("Qwen/Qwen3-0.6B")      # a folder or a hub name (online, or cached)

The converted model shares memory with the source, on its device and in its dtype.
"""

import os
from pathlib import Path

import torch

from bonus.gpt2_to_llama_qwen.modern import ModernGPT, rope_frequencies
from bonus.hf_side_by_side.hf_interop import expand_name_map

# transformers is imported inside the functions that use it: it takes seconds to import.

# (our name, Hugging Face's); `{i}` is the block index. q_norm/k_norm exist in Qwen3 only.
NAME_MAP = [
    ("tok_emb.weight", "model.embed_tokens.weight"),
    ("trf_blocks.{i}.norm1.scale", "model.layers.{i}.input_layernorm.weight"),
    ("trf_blocks.{i}.att.W_query.weight", "model.layers.{i}.self_attn.q_proj.weight"),
    ("trf_blocks.{i}.att.W_key.weight", "model.layers.{i}.self_attn.k_proj.weight"),
    ("trf_blocks.{i}.att.W_value.weight", "model.layers.{i}.self_attn.v_proj.weight"),
    ("trf_blocks.{i}.att.out_proj.weight", "model.layers.{i}.self_attn.o_proj.weight"),
    ("trf_blocks.{i}.att.q_norm.scale", "model.layers.{i}.self_attn.q_norm.weight"),
    ("trf_blocks.{i}.att.k_norm.scale", "model.layers.{i}.self_attn.k_norm.weight"),
    ("trf_blocks.{i}.norm2.scale", "model.layers.{i}.post_attention_layernorm.weight"),
    ("trf_blocks.{i}.ff.gate.weight", "model.layers.{i}.mlp.gate_proj.weight"),
    ("trf_blocks.{i}.ff.up.weight", "model.layers.{i}.mlp.up_proj.weight"),
    ("trf_blocks.{i}.ff.down.weight", "model.layers.{i}.mlp.down_proj.weight"),
    ("final_norm.scale", "model.norm.weight"),
    ("out_head.weight", "lm_head.weight"),
]
SUPPORTED = {"llama": False, "qwen3": True}  # model_type: has a norm on queries and keys
MIRROR_HINT = ("Reaching the hub only through a mirror? Set the HF_ENDPOINT environment variable "
               "to the mirror's address before starting Python, or download the model's folder "
               "(config.json and *.safetensors) and pass its path.")


def config_from_hf(hf_config):
    """bonus.gpt2_to_llama_qwen.modern's config dict for a Hugging Face Llama or Qwen3 config."""
    if hf_config.model_type not in SUPPORTED:
        raise ValueError(f"expected a Llama or Qwen3 config, got model_type "
                         f"{hf_config.model_type!r}")
    fixed = {"attention_bias": False, "mlp_bias": False, "sliding_window": None,  # ModernGPT's
             "attention_dropout": 0.0, "hidden_act": "silu"}
    unsupported = [name for name, value in fixed.items() if getattr(hf_config, name, value) != value]
    if unsupported:
        raise ValueError(f"ModernGPT has no equivalent for these settings: {unsupported}")
    rope = hf_config.rope_parameters
    rope_type = rope.get("rope_type", "default")
    if rope_type not in ("default", "llama3"):
        raise ValueError(f"rope_type {rope_type!r} is not supported (default, llama3)")
    scaling = None
    if rope_type == "llama3":  # the keys of modern.rope_frequencies' `scaling`
        scaling = {key: rope[key] for key in ("factor", "low_freq_factor", "high_freq_factor")}
        scaling["original_context_length"] = rope["original_max_position_embeddings"]
    return {
        "vocab_size": hf_config.vocab_size,
        "context_length": hf_config.max_position_embeddings,
        "emb_dim": hf_config.hidden_size,
        "n_heads": hf_config.num_attention_heads,
        "n_kv_groups": hf_config.num_key_value_heads,
        "head_dim": hf_config.head_dim,
        "hidden_dim": hf_config.intermediate_size,
        "n_layers": hf_config.num_hidden_layers,
        "rope_base": float(rope["rope_theta"]),
        "rope_scaling": scaling,
        "norm_eps": hf_config.rms_norm_eps,
        "qk_norm": SUPPORTED[hf_config.model_type],
        "tie_embeddings": bool(hf_config.tie_word_embeddings),
    }


def model_from_hf(hf_model):
    """A ModernGPT computing what `hf_model` (LlamaForCausalLM or Qwen3ForCausalLM) computes,
    in the same mode, sharing its tensors."""
    cfg = config_from_hf(hf_model.config)
    hf_state = hf_model.state_dict()  # lists a tied lm_head.weight too
    ours = {name: hf_state[hf_name] for name, hf_name in expand_name_map(cfg["n_layers"], NAME_MAP)
            if hf_name in hf_state}  # q_norm and k_norm: Qwen3 only
    with torch.device("meta"):  # shapes only: no random initial weights to throw away
        model = ModernGPT(cfg)
    model.load_state_dict(ours, assign=True, strict=True)
    if cfg["tie_embeddings"]:
        model.out_head.weight = model.tok_emb.weight
    # Computed, not loaded: built again off the meta device (forward moves it where it runs).
    model.inv_freq = rope_frequencies(cfg["head_dim"], cfg["rope_base"], cfg["rope_scaling"])
    return model.train(hf_model.training)


def load_modern(name_or_path, local_files_only=False, dtype="auto"):
    """A ModernGPT in eval mode with the weights of a Llama or Qwen3 folder or hub name.

    `dtype="auto"` keeps the checkpoint's dtype (bfloat16 for Llama 3.2 and Qwen3: 2 bytes per
    parameter); `dtype=torch.float32` doubles that. Only safetensors files are read. Offline,
    or with nothing cached, it raises OSError with a sentence on how to get the weights
    (`local_files_only=True` never touches the network).
    """
    from transformers import AutoConfig, AutoModelForCausalLM

    path = Path(name_or_path)
    if path.is_dir() and not any(path.glob("*.safetensors")):
        raise FileNotFoundError(f"{path} has no .safetensors weights (.bin pickles are refused)")
    try:
        config = AutoConfig.from_pretrained(name_or_path, local_files_only=local_files_only)
        config_from_hf(config)  # refuse an unsupported model before downloading its weights
        hf_model = AutoModelForCausalLM.from_pretrained(
            name_or_path, config=config, use_safetensors=True, local_files_only=local_files_only,
            dtype=dtype)
    except OSError as err:
        where = os.environ.get("HF_ENDPOINT", "the Hugging Face hub")
        raise OSError(f"could not load {name_or_path!r} from a folder or from {where} "
                      f"({type(err).__name__}). {MIRROR_HINT}") from err
    return model_from_hf(hf_model).eval()
