"""Grouped-query attention (GQA): query heads share key/value heads, so the cache shrinks.

    model = gqa_model(cfg, n_kv_groups=3)               # 12 query heads, 3 key/value heads
    out = generate_text_cached(model, idx, 50, 1024)    # bonus.kv_cache.kv_cache's generator

gpt.MultiHeadAttention with kv_cache.py's cache, every changed line marked `# NEW`;
n_kv_groups=1 is multi-query attention (MQA). See bonus/kv_cache_variants/README.md.
"""

import torch
import torch.nn as nn

from bonus.kv_cache_variants.kv_variants import (
    appended,
    attention_args,
    mask_rows,
    model_with_attention,
    repeated,
)


class GroupedQueryAttention(nn.Module):  # NEW: num_kv_groups key/value heads, a KV cache
    """Causal self-attention, query heads sharing num_kv_groups key/value heads; KV cache."""  # NEW

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups,  # NEW
                 qkv_bias=False):  # NEW: num_kv_groups
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.num_kv_groups = num_kv_groups  # NEW
        self.group_size = num_heads // num_kv_groups  # NEW: query heads per key/value head
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)  # NEW
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)  # NEW
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads' outputs
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: position t may not look at positions after t.
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
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
        if use_cache:  # NEW: the cache keeps the kv groups only, before they are repeated
            keys, values = appended(self.cache_k, keys, 2), appended(self.cache_v, values, 2)  # NEW
            self.cache_k, self.cache_v = keys, values  # NEW
        # NEW: key/value head g serves query heads g * group_size ... (g + 1) * group_size - 1
        keys = repeated(keys, self.group_size)  # NEW: (b, heads, keys, head_dim)
        values = repeated(values, self.group_size)  # NEW
        num_keys = keys.shape[2]  # NEW: cached positions + new tokens

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        attn_scores.masked_fill_(mask_rows(self.mask, num_tokens, num_keys), -torch.inf)  # NEW
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


def gqa_model(cfg, n_kv_groups):
    """A GPT (bonus.kv_cache.kv_cache.GPTModel) whose every block uses GroupedQueryAttention."""
    return model_with_attention(
        cfg, lambda layer: GroupedQueryAttention(**attention_args(cfg), num_kv_groups=n_kv_groups)
    )


def kv_cache_bytes(cfg, n_kv_groups, num_tokens, batch_size=1, bytes_per_number=4):
    """Bytes of a GQA cache: a key and a value of head_dim numbers per kv group, layer, token."""
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    per_token = 2 * cfg["n_layers"] * n_kv_groups * head_dim
    return per_token * num_tokens * batch_size * bytes_per_number
