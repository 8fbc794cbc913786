"""Sliding-window attention (SWA): each position sees only the last `window` positions.

    model = swa_model(cfg, window=128)                       # every layer slides
    model = swa_model(cfg, window=128, local_per_global=5)   # 5 sliding layers, then a full one
    model = swa_model(cfg, 128, 5, n_kv_groups=3)            # the same over grouped-query heads

gpt.MultiHeadAttention with kv_cache.py's cache and grouped heads, every changed line marked
`# NEW`. See bonus/kv_cache_variants/README.md.
"""

import torch
import torch.nn as nn

from bonus.kv_cache_variants import gqa
from bonus.kv_cache_variants.kv_variants import (
    appended,
    attention_args,
    mask_rows,
    model_with_attention,
    repeated,
)


def keep_last(tensor, count):
    """The last `count` positions (dim 2) of `tensor`, as a tensor of their own.

    A copy, not a view: a view would keep the dropped positions' memory alive.
    """
    if tensor.shape[2] <= count:
        return tensor
    return tensor[:, :, tensor.shape[2] - count :].clone()


class SlidingWindowAttention(nn.Module):  # NEW: a window, grouped kv heads, a KV cache
    """Causal self-attention over the last `window` positions; grouped kv heads; KV cache."""  # NEW

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window,  # NEW
                 num_kv_groups, qkv_bias=False):  # NEW: window, num_kv_groups
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.window = window  # NEW: how many positions a query sees, itself included
        self.num_kv_groups = num_kv_groups  # NEW
        self.group_size = num_heads // num_kv_groups  # NEW: query heads per key/value head
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)  # NEW
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)  # NEW
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads' outputs
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: position t may not look at positions after t.
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        # NEW: and True from `window` below it: nor at positions t - window and earlier
        mask |= torch.tril(torch.ones_like(mask), diagonal=-window)  # NEW
        self.register_buffer("mask", mask)
        self.reset_cache()  # NEW: start with an empty cache

    def reset_cache(self):  # NEW: forget the cached keys and values
        self.cache_k, self.cache_v = None, None  # NEW: each (b, kv groups, positions, head_dim)

    def forward(self, x, use_cache=False):  # NEW: use_cache
        b, num_tokens, _ = x.shape
        # Project, then split the last dimension into heads: (b, num_heads, num_tokens, head_dim).
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        # NEW: keys and values have num_kv_groups heads: (b, kv groups, tokens, head_dim)
        keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)  # NEW
        values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)  # NEW
        keys, values = keys.transpose(1, 2), values.transpose(1, 2)  # NEW
        if use_cache:  # NEW: attend over the cached positions and the new ones, ...
            keys, values = appended(self.cache_k, keys, 2), appended(self.cache_v, values, 2)  # NEW
            # NEW: ... but keep only what a later token can see: the last window - 1 positions
            self.cache_k = keep_last(keys, self.window - 1)  # NEW
            self.cache_v = keep_last(values, self.window - 1)  # NEW
        # NEW: key/value head g serves query heads g * group_size ... (g + 1) * group_size - 1
        keys = repeated(keys, self.group_size)  # NEW: (b, heads, keys, head_dim)
        values = repeated(values, self.group_size)  # NEW
        num_keys = keys.shape[2]  # NEW: cached positions + new tokens

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        # NEW: the mask only depends on the distance between query and key, so its rows fit
        attn_scores.masked_fill_(mask_rows(self.mask, num_tokens, num_keys), -torch.inf)  # NEW
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


def is_sliding(layer, local_per_global):
    """Whether block `layer` slides: `local_per_global` sliding blocks, then a full one, repeated.

    local_per_global=None: every block slides. Gemma 3's pattern is local_per_global=5.
    """
    return local_per_global is None or (layer + 1) % (local_per_global + 1) != 0


def swa_model(cfg, window, local_per_global=None, n_kv_groups=None):
    """A GPT (bonus.kv_cache.kv_cache.GPTModel) whose blocks use SlidingWindowAttention, or some of them.

    With `local_per_global`, that many sliding blocks alternate with one block of full
    attention (bonus.kv_cache_variants.gqa's, with the same groups), starting with the sliding ones.
    `n_kv_groups` key/value heads in every block; None: one per head, multi-head attention.
    """
    groups = cfg["n_heads"] if n_kv_groups is None else n_kv_groups

    def make_attention(layer):
        if is_sliding(layer, local_per_global):
            return SlidingWindowAttention(**attention_args(cfg), window=window, num_kv_groups=groups)
        return gqa.GroupedQueryAttention(**attention_args(cfg), num_kv_groups=groups)

    return model_with_attention(cfg, make_attention)


def kv_cache_bytes(cfg, window, num_tokens, local_per_global=None, n_kv_groups=None,
                   batch_size=1, bytes_per_number=4):
    """Bytes of the caches after `num_tokens` positions: a sliding block keeps window - 1.

    Each position a block keeps holds a key and a value of head_dim numbers per kv group.
    """
    groups = cfg["n_heads"] if n_kv_groups is None else n_kv_groups
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    positions = [min(num_tokens, window - 1) if is_sliding(layer, local_per_global) else num_tokens
                 for layer in range(cfg["n_layers"])]
    return 2 * groups * head_dim * sum(positions) * batch_size * bytes_per_number
