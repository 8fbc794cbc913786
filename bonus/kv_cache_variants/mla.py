"""Multi-head latent attention (MLA, DeepSeek-V2): the cache keeps one small latent per token.

    model = mla_model(cfg, latent_dim=256)             # keys and values from a 256-wide latent
    fast = absorbed_model(model)                       # the same outputs, latent never expanded
    out = generate_text_cached(fast, idx, 50, 1024)    # bonus.kv_cache.kv_cache's generator

Both classes are gpt.MultiHeadAttention with every changed line marked `# NEW`; no RoPE part
(GPT-2 adds positions to the embeddings). See bonus/kv_cache_variants/README.md.
"""

import copy

import torch
import torch.nn as nn

from bonus.kv_cache_variants.kv_variants import (
    appended,
    attention_args,
    mask_rows,
    model_with_attention,
)


class MultiHeadLatentAttention(nn.Module):  # NEW: keys and values from a cached latent
    """Causal self-attention, keys and values expanded from a cached latent (MLA)."""  # NEW

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, latent_dim,  # NEW
                 qkv_bias=False):  # NEW: latent_dim
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.latent_dim = latent_dim  # NEW
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_kv_down = nn.Linear(d_in, latent_dim, bias=False)  # NEW: compresses each token
        self.W_key = nn.Linear(latent_dim, d_out, bias=qkv_bias)  # NEW: latent -> keys
        self.W_value = nn.Linear(latent_dim, d_out, bias=qkv_bias)  # NEW: latent -> values
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads' outputs
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: position t may not look at positions after t.
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)
        self.reset_cache()  # NEW: start with an empty cache

    def reset_cache(self):  # NEW: forget the cached latents
        self.cache_latent = None  # NEW: (b, positions, latent_dim)

    def forward(self, x, use_cache=False):  # NEW: use_cache
        b, num_tokens, _ = x.shape
        # Project, then split the last dimension into heads: (b, num_heads, num_tokens, head_dim).
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        latent = self.W_kv_down(x)  # NEW: (b, tokens, latent_dim)
        if use_cache:  # NEW: only the latent is cached
            latent = self.cache_latent = appended(self.cache_latent, latent, 1)  # NEW
        num_keys = latent.shape[1]  # NEW: cached positions + new tokens
        # NEW: every cached position's keys and values are expanded again from its latent
        keys = self.W_key(latent).view(b, num_keys, self.num_heads, self.head_dim)  # NEW
        values = self.W_value(latent).view(b, num_keys, self.num_heads, self.head_dim)  # NEW
        keys, values = keys.transpose(1, 2), values.transpose(1, 2)  # NEW

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        attn_scores.masked_fill_(mask_rows(self.mask, num_tokens, num_keys), -torch.inf)  # NEW
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class AbsorbedLatentAttention(nn.Module):  # NEW: MLA with W_key, W_value folded in
    """MLA, W_key folded into the queries, W_value into out_proj: attends to the latent."""  # NEW

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, latent_dim,  # NEW
                 qkv_bias=False):  # NEW: latent_dim
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.latent_dim = latent_dim  # NEW
        # NEW: each head's query, already multiplied by that head's part of W_key
        self.W_query = nn.Linear(d_in, num_heads * latent_dim, bias=qkv_bias)  # NEW
        self.W_kv_down = nn.Linear(d_in, latent_dim, bias=False)  # NEW: as in MLA
        # NEW: each head's part of W_value, then the chapter's out_proj, as one matrix
        self.out_proj = nn.Linear(num_heads * latent_dim, d_out)  # NEW
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: position t may not look at positions after t.
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)
        self.reset_cache()  # NEW: start with an empty cache

    def reset_cache(self):  # NEW: forget the cached latents
        self.cache_latent = None  # NEW: (b, positions, latent_dim)

    def forward(self, x, use_cache=False):  # NEW: use_cache
        b, num_tokens, _ = x.shape
        # NEW: split into heads of latent_dim: (b, heads, tokens, latent_dim)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.latent_dim)  # NEW
        queries = queries.transpose(1, 2)  # NEW
        latent = self.W_kv_down(x)  # NEW: (b, tokens, latent_dim)
        if use_cache:  # NEW: only the latent is cached
            latent = self.cache_latent = appended(self.cache_latent, latent, 1)  # NEW
        num_keys = latent.shape[1]  # NEW: cached positions + new tokens
        keys = values = latent.unsqueeze(1)  # NEW: the latent, shared by all heads: never expanded

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        attn_scores.masked_fill_(mask_rows(self.mask, num_tokens, num_keys), -torch.inf)  # NEW
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2)  # NEW shape: (b, num_tokens, num_heads, latent)
        context = context.contiguous().view(b, num_tokens, self.num_heads * self.latent_dim)  # NEW
        return self.out_proj(context)


def mla_model(cfg, latent_dim):
    """A GPT (bonus.kv_cache.kv_cache.GPTModel) whose every block uses MultiHeadLatentAttention."""
    return model_with_attention(
        cfg, lambda layer: MultiHeadLatentAttention(**attention_args(cfg), latent_dim=latent_dim)
    )


def absorb(att):
    """An AbsorbedLatentAttention that computes what MultiHeadLatentAttention `att` computes,
    on its device and in its dtype.

    For head h, a score is q_h . k_h with k_h = K_h c (c: a latent, K_h: the head's rows of
    W_key), which equals (K_h^T q_h) . c: fold K_h^T into the query projection. A head's
    output is a weighted sum of V_h c; V_h can be applied after the sum, and folded into the
    out_proj columns that read head h. Biases: the key bias adds q_h . b to all of a query's
    scores, which softmax ignores; the value bias passes through the weighted sum (the
    weights add up to 1, so in eval mode) and into out_proj's bias.
    """
    heads, head_dim, latent_dim = att.num_heads, att.head_dim, att.latent_dim
    d_in, weight = att.W_query.in_features, att.W_query.weight
    with torch.random.fork_rng():  # initial weights, all replaced: leave the caller's seed alone
        absorbed = AbsorbedLatentAttention(d_in, att.d_out, att.mask.shape[0], att.dropout.p, heads,
                                           latent_dim, qkv_bias=att.W_query.bias is not None)
    key_up = att.W_key.weight.view(heads, head_dim, latent_dim).transpose(1, 2)  # K_h^T
    value_up = att.W_value.weight.view(heads, head_dim, latent_dim)  # V_h
    out_by_head = att.out_proj.weight.view(att.d_out, heads, head_dim).transpose(0, 1)
    query = key_up @ weight.view(heads, head_dim, d_in)  # (heads, latent, d_in)
    out = out_by_head @ value_up  # (heads, d_out, latent)
    state = {"W_query.weight": query.reshape(heads * latent_dim, d_in),
             "W_kv_down.weight": att.W_kv_down.weight, "mask": att.mask,
             "out_proj.weight": out.transpose(0, 1).reshape(att.d_out, heads * latent_dim),
             "out_proj.bias": att.out_proj.bias}
    if att.W_query.bias is not None:  # qkv_bias: the key bias is dropped, as said above
        state["W_query.bias"] = (key_up @ att.W_query.bias.view(heads, head_dim, 1)).flatten()
        state["out_proj.bias"] = att.out_proj.bias + att.out_proj.weight @ att.W_value.bias
    absorbed.to(weight.device, weight.dtype).load_state_dict(state)
    return absorbed.train(att.training)


def absorbed_model(model):
    """A copy of an mla_model with every block's attention absorbed (for inference)."""
    absorbed = copy.deepcopy(model)
    for block in absorbed.trf_blocks:
        block.att = absorb(block.att)
    absorbed.reset_cache()  # the copy starts a new sequence
    return absorbed


def kv_cache_bytes(cfg, latent_dim, num_tokens, batch_size=1, bytes_per_number=4):
    """Bytes of an MLA cache: one latent of latent_dim numbers per layer and token."""
    return cfg["n_layers"] * latent_dim * num_tokens * batch_size * bytes_per_number
