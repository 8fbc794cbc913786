"""Move weights between our GPTModel (gpt.py) and Hugging Face's GPT2LMHeadModel.

    model = gptmodel_from_hf(hf_model)   # Hugging Face -> ours
    hf_model = hf_from_gptmodel(model)   # ours -> Hugging Face
    model = load_pretrained("gpt2")      # OpenAI's GPT-2 weights in our GPTModel

The result shares memory with its source (views, not copies). See bonus/hf_side_by_side/README.md.
"""

from pathlib import Path

import torch

import gpt
from gpt_engineering import config_of

# transformers is imported inside the functions that use it: it takes seconds to import, and
# importing this module (as the test suite does on every worker) should not pay that up front.

# One row per tensor: (our name, Hugging Face name, transposed?, part of c_attn).
# `{i}` is the block index. part 0/1/2 is the query/key/value third of c_attn's output.
NAME_MAP = [
    ("tok_emb.weight", "transformer.wte.weight", False, None),
    ("pos_emb.weight", "transformer.wpe.weight", False, None),
    ("trf_blocks.{i}.norm1.scale", "transformer.h.{i}.ln_1.weight", False, None),
    ("trf_blocks.{i}.norm1.shift", "transformer.h.{i}.ln_1.bias", False, None),
    ("trf_blocks.{i}.att.W_query.weight", "transformer.h.{i}.attn.c_attn.weight", True, 0),
    ("trf_blocks.{i}.att.W_key.weight", "transformer.h.{i}.attn.c_attn.weight", True, 1),
    ("trf_blocks.{i}.att.W_value.weight", "transformer.h.{i}.attn.c_attn.weight", True, 2),
    ("trf_blocks.{i}.att.W_query.bias", "transformer.h.{i}.attn.c_attn.bias", False, 0),
    ("trf_blocks.{i}.att.W_key.bias", "transformer.h.{i}.attn.c_attn.bias", False, 1),
    ("trf_blocks.{i}.att.W_value.bias", "transformer.h.{i}.attn.c_attn.bias", False, 2),
    ("trf_blocks.{i}.att.out_proj.weight", "transformer.h.{i}.attn.c_proj.weight", True, None),
    ("trf_blocks.{i}.att.out_proj.bias", "transformer.h.{i}.attn.c_proj.bias", False, None),
    ("trf_blocks.{i}.norm2.scale", "transformer.h.{i}.ln_2.weight", False, None),
    ("trf_blocks.{i}.norm2.shift", "transformer.h.{i}.ln_2.bias", False, None),
    ("trf_blocks.{i}.ff.layers.0.weight", "transformer.h.{i}.mlp.c_fc.weight", True, None),
    ("trf_blocks.{i}.ff.layers.0.bias", "transformer.h.{i}.mlp.c_fc.bias", False, None),
    ("trf_blocks.{i}.ff.layers.2.weight", "transformer.h.{i}.mlp.c_proj.weight", True, None),
    ("trf_blocks.{i}.ff.layers.2.bias", "transformer.h.{i}.mlp.c_proj.bias", False, None),
    ("final_norm.scale", "transformer.ln_f.weight", False, None),
    ("final_norm.shift", "transformer.ln_f.bias", False, None),
    ("out_head.weight", "lm_head.weight", False, None),
]


def expand_name_map(n_layers, name_map=NAME_MAP):
    """`name_map` with `{i}` filled in for every block: the full list of tensor pairs."""
    rows = []
    for ours, hf, *rest in name_map:
        blocks = range(n_layers) if "{i}" in ours else [None]
        rows += [(ours.format(i=i), hf.format(i=i), *rest) for i in blocks]
    return rows


def config_from_hf(hf_config):
    """Our config dict for a Hugging Face GPT2Config, or a ValueError naming what differs."""
    # Settings our GPTModel hard-codes, with the value it hard-codes.
    fixed = {
        "activation_function": "gelu_new",  # the tanh approximation of GELU
        "layer_norm_epsilon": 1e-5,
        "scale_attn_weights": True,  # divide scores by sqrt(head_dim)
        "scale_attn_by_inverse_layer_idx": False,
        "add_cross_attention": False,
    }
    for key, value in fixed.items():
        actual = getattr(hf_config, key)
        if actual != value:
            raise ValueError(f"GPTModel cannot express {key}={actual!r} (it uses {value!r})")
    n_inner = hf_config.n_inner  # the feed-forward width; None means 4 * n_embd
    if n_inner not in (None, 4 * hf_config.n_embd):
        raise ValueError(f"GPTModel cannot express n_inner={n_inner} (it uses 4 * n_embd)")
    # Our single drop_rate plays the three roles GPT-2 gives separate rates (exercise 4.3 builds
    # a variant with three; these converters take only gpt.GPTModel).
    rates = {hf_config.embd_pdrop, hf_config.attn_pdrop, hf_config.resid_pdrop}
    if len(rates) > 1:
        raise ValueError(
            "GPTModel has one drop_rate, but this config has embd_pdrop="
            f"{hf_config.embd_pdrop}, attn_pdrop={hf_config.attn_pdrop}, "
            f"resid_pdrop={hf_config.resid_pdrop}; set them equal first"
        )
    return {
        "vocab_size": hf_config.vocab_size,
        "context_length": hf_config.n_positions,
        "emb_dim": hf_config.n_embd,
        "n_heads": hf_config.n_head,
        "n_layers": hf_config.n_layer,
        "drop_rate": rates.pop(),
        "qkv_bias": True,  # c_attn always has a bias
    }


def gptmodel_from_hf(hf_model):
    """Our GPTModel computing the same function as a Hugging Face GPT2LMHeadModel.

    The result shares memory with `hf_model` and keeps its training/eval mode. A tied
    head stays tied: `out_head.weight` is then the same Parameter as `tok_emb.weight`.
    """
    from transformers import GPT2LMHeadModel

    if not isinstance(hf_model, GPT2LMHeadModel):
        raise TypeError(f"expected a transformers GPT2LMHeadModel, got {type(hf_model).__name__}")
    cfg = config_from_hf(hf_model.config)
    hf_state = hf_model.state_dict()
    state = {}
    for ours, hf, transposed, part in expand_name_map(cfg["n_layers"]):
        tensor = hf_state[hf]
        if part is not None:
            tensor = tensor.chunk(3, dim=-1)[part]  # the last dim of c_attn holds q | k | v
        state[ours] = tensor.T if transposed else tensor
    # The causal mask is a constant, not a weight: one copy serves every block.
    n = cfg["context_length"]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=state["tok_emb.weight"].device), 1)
    state.update({f"trf_blocks.{i}.att.mask": mask for i in range(cfg["n_layers"])})

    with torch.device("meta"):  # shapes only: the weights come from hf_model
        model = gpt.GPTModel(cfg)
    model.load_state_dict(state, assign=True)
    if hf_model.lm_head.weight is hf_model.transformer.wte.weight:
        model.out_head.weight = model.tok_emb.weight
    return model.train(hf_model.training)


def hf_from_gptmodel(model):
    """A Hugging Face GPT2LMHeadModel computing the same function as our GPTModel.

    The result shares memory with `model` except for `c_attn`, which has to be assembled
    from our three projections; it keeps `model`'s training/eval mode. Without qkv_bias,
    `c_attn`'s bias is zero. The head is tied only if `model` ties it (`out_head.weight`
    is `tok_emb.weight`); otherwise `lm_head` keeps its own matrix.
    """
    if not isinstance(model, gpt.GPTModel):
        raise TypeError(f"expected a gpt.GPTModel, got {type(model).__name__}")
    cfg = config_of(model)
    # GPT2Config gets GPTModel's one drop_rate; rates changed after construction: ValueError.
    rates = sorted({m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)})
    if len(rates) > 1:
        raise ValueError(f"the model's dropout layers have the rates {rates}; "
                         "hf_from_gptmodel converts a GPTModel with one drop_rate")

    from transformers import GPT2Config, GPT2LMHeadModel

    tied = model.out_head.weight is model.tok_emb.weight
    state = model.state_dict()
    zeros = state["tok_emb.weight"].new_zeros(cfg["emb_dim"])  # same dtype and device
    hf_parts = {}  # Hugging Face name -> our tensors; c_attn's are q, k, v in NAME_MAP's order
    for ours, hf, transposed, _ in expand_name_map(cfg["n_layers"]):
        tensor = state.get(ours, zeros)  # without qkv_bias, c_attn's bias is zero
        hf_parts.setdefault(hf, []).append(tensor.T if transposed else tensor)
    hf_state = {hf: torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]  # views, but c_attn
                for hf, parts in hf_parts.items()}

    rate = cfg["drop_rate"]
    config = GPT2Config(
        vocab_size=cfg["vocab_size"], n_positions=cfg["context_length"], n_embd=cfg["emb_dim"],
        n_layer=cfg["n_layers"], n_head=cfg["n_heads"], embd_pdrop=rate, attn_pdrop=rate,
        resid_pdrop=rate, tie_word_embeddings=tied)
    with torch.device("meta"):  # shapes only: the weights come from model
        hf_model = GPT2LMHeadModel(config)
    hf_model.load_state_dict(hf_state, assign=True)
    if tied:
        hf_model.lm_head.weight = hf_model.transformer.wte.weight
    return hf_model.train(model.training)


def load_pretrained(name_or_path, local_files_only=False):
    """A GPTModel, in eval mode, holding the GPT-2 weights from a folder or the hub.

    `name_or_path` is a folder written by `save_pretrained` (config.json + model.safetensors)
    or a hub name such as "gpt2" or "gpt2-medium" (downloaded once, then cached). Only
    safetensors files are read: a pickled pytorch_model.bin can run code, so it is refused.
    `local_files_only=True` never touches the network (it raises OSError if nothing is cached).
    """
    from transformers import AutoConfig, GPT2LMHeadModel

    path = Path(name_or_path)
    if path.is_dir() and not any(path.glob("*.safetensors")):
        raise FileNotFoundError(f"{path} has no .safetensors weights (.bin pickles are refused)")
    config = AutoConfig.from_pretrained(name_or_path, local_files_only=local_files_only)
    if config.model_type != "gpt2":
        raise ValueError(f"{name_or_path} holds a {config.model_type!r} model, not GPT-2")
    hf_model = GPT2LMHeadModel.from_pretrained(
        name_or_path, config=config, use_safetensors=True, local_files_only=local_files_only
    )
    return gptmodel_from_hf(hf_model).eval()
