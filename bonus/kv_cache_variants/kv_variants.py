"""What the attention variants of gqa.py, mla.py and swa.py share.

A model with a variant is bonus.kv_cache.kv_cache's GPTModel with each block's attention
swapped for it, so kv_cache.generate_text_cached generates with it unchanged.
"""

import torch

from bonus.kv_cache import kv_cache


def appended(cache, new, dim):
    """The cached positions followed by the `new` ones, along `dim` (just `new` if none cached)."""
    return new if cache is None else torch.cat((cache, new), dim=dim)


def repeated(kv_heads, group_size):
    """Each key/value head (dim 1) `group_size` times in a row: (b, kv heads, n, d) -> (b, heads, n, d).

    The order of kv_heads.repeat_interleave(group_size, dim=1). Written with expand, it is a
    view of `kv_heads`, no copy, when group_size is 1: the matrix products then see the
    chapter's tensors, memory layout included (a contiguous copy may take another kernel).
    """
    b, groups, n, d = kv_heads.shape
    return kv_heads.unsqueeze(2).expand(b, groups, group_size, n, d).reshape(b, -1, n, d)


def mask_rows(mask, num_tokens, num_keys):
    """The rows of `mask` for the new queries: with a cache, the keys are the cached positions
    followed by the new tokens, and the queries are the last `num_tokens` of `num_keys`."""
    return mask[num_keys - num_tokens : num_keys, :num_keys]


def attention_args(cfg):
    """The arguments TransformerBlock gives its attention, read from a GPT config."""
    return {"d_in": cfg["emb_dim"], "d_out": cfg["emb_dim"],
            "context_length": cfg["context_length"], "dropout": cfg["drop_rate"],
            "num_heads": cfg["n_heads"], "qkv_bias": cfg["qkv_bias"]}


def model_with_attention(cfg, make_attention):
    """bonus.kv_cache.kv_cache.GPTModel(cfg) whose block number `layer` attends with
    make_attention(layer); every other part is the chapter's."""
    model = kv_cache.GPTModel(cfg)
    for layer, block in enumerate(model.trf_blocks):
        block.att = make_attention(layer)
    return model


def copy_weights(source, target):
    """Copy every parameter of `source` into the parameter of `target` with the same name;
    `target` moves to the device and dtype of `source`'s parameters first.

    Buffers are not copied: a variant's mask belongs to the variant, not to the weights.
    """
    theirs = dict(source.named_parameters())
    weight = next(iter(theirs.values()))
    target.to(weight.device, weight.dtype)  # bool masks move but stay bool
    ours = dict(target.named_parameters())
    if theirs.keys() != ours.keys():
        raise ValueError(f"parameter names differ: {sorted(theirs.keys() ^ ours.keys())}")
    target.load_state_dict({**target.state_dict(), **theirs})  # refuses a shape that differs
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
