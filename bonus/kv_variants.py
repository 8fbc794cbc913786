"""What the attention variants in bonus/gqa.py, bonus/mla.py and bonus/swa.py share.

Each variant is gpt.MultiHeadAttention with a KV cache, as in bonus/kv_cache.py, plus its own
changes; every line that differs from gpt.py's class ends with `# NEW`. A model with a variant
is bonus.kv_cache's GPTModel with each block's attention swapped for it, so
bonus.kv_cache.generate_text_cached generates with it unchanged. The helpers here keep the
variants' own code down to what makes each one different.
"""

import torch

from bonus import kv_cache


def check_count(name, value):
    """Raise a clear TypeError/ValueError unless `value` is a positive int."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be positive, got {value}")


def appended(cache, new, dim):
    """The cached positions followed by the `new` ones, along `dim` (just `new` if none cached)."""
    return new if cache is None else torch.cat((cache, new), dim=dim)


def mask_rows(mask, num_tokens, num_keys):
    """The rows of `mask` for the last `num_tokens` of `num_keys` positions: the new queries'.

    With a cache, the keys are the cached positions followed by the new tokens, and the
    queries are those of the new tokens only.
    """
    return mask[num_keys - num_tokens : num_keys, :num_keys]


def attention_args(cfg):
    """The arguments TransformerBlock gives its attention, read from a GPT config."""
    return {"d_in": cfg["emb_dim"], "d_out": cfg["emb_dim"],
            "context_length": cfg["context_length"], "dropout": cfg["drop_rate"],
            "num_heads": cfg["n_heads"], "qkv_bias": cfg["qkv_bias"]}


def model_with_attention(cfg, make_attention):
    """bonus.kv_cache.GPTModel(cfg) whose block number `layer` attends with make_attention(layer).

    Every other part (embeddings, feed-forward, norms, head) is the chapter's.
    """
    model = kv_cache.GPTModel(cfg)
    for layer, block in enumerate(model.trf_blocks):
        block.att = make_attention(layer)
    return model


def copy_weights(source, target):
    """Copy every parameter of `source` into the parameter of `target` with the same name.

    Buffers are not copied: a variant's mask belongs to the variant, not to the weights.
    """
    theirs, ours = dict(source.named_parameters()), dict(target.named_parameters())
    if theirs.keys() != ours.keys():
        raise ValueError(f"parameter names differ: {sorted(theirs.keys() ^ ours.keys())}")
    with torch.no_grad():
        for name, param in ours.items():
            if param.shape != theirs[name].shape:
                raise ValueError(f"{name}: shape {list(theirs[name].shape)}, "
                                 f"expected {list(param.shape)}")
            param.copy_(theirs[name])
    return target


def cache_bytes(module):
    """Bytes of memory the caches in `module` (a model or one attention) hold.

    Sums the storage of every `cache_*` tensor of the module and its submodules: the storage,
    not the tensor's own size, because a cache kept as a view of a larger tensor keeps all of
    that tensor's memory.
    """
    return sum(value.untyped_storage().nbytes()
               for part in module.modules() for name, value in vars(part).items()
               if name.startswith("cache_") and value is not None)
