"""A KV cache added to the chapter's GPT-2, and nothing else changed.

    cached = from_gpt(model)                             # any gpt.GPTModel (weights copied)
    out = generate_text_cached(cached, idx, 200, 1024)  # the ids generate_text_simple returns

gpt.py's MultiHeadAttention, TransformerBlock and GPTModel, every line that differs marked
`# NEW`. How it works: bonus/kv_cache/README.md.
"""

import torch
import torch.nn as nn

from gpt import GPT_CONFIG_124M, FeedForward, LayerNorm
from gpt_engineering import check_config, check_generation_args, check_num_tokens, config_of


class MultiHeadAttention(nn.Module):
    """Causal (masked) multi-head self-attention, the module built in chapter 3."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads' outputs
        self.dropout = nn.Dropout(dropout)
        # True above the diagonal: position t may not look at positions after t.
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)
        self.reset_cache()  # NEW: start with an empty cache

    def reset_cache(self):  # NEW: forget the cached keys and values
        self.cache_k, self.cache_v = None, None  # NEW: each (b, heads, positions, head_dim)

    def forward(self, x, use_cache=False):  # NEW: use_cache
        b, num_tokens, _ = x.shape
        # Project, then split the last dimension into heads: (b, num_heads, num_tokens, head_dim).
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        if use_cache:  # NEW: the new tokens' keys and values come after the cached ones
            if self.cache_k is not None:  # NEW
                keys = torch.cat((self.cache_k, keys), dim=2)  # NEW
                values = torch.cat((self.cache_v, values), dim=2)  # NEW
            self.cache_k, self.cache_v = keys, values  # NEW: kept for the next call
        num_keys = keys.shape[2]  # NEW: cached positions + new tokens

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        # NEW: the queries are the last num_tokens of num_keys positions: their rows of the mask
        mask = self.mask[num_keys - num_tokens : num_keys, :num_keys]  # NEW
        attn_scores.masked_fill_(mask, -torch.inf)  # NEW: mask (the rows above)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class TransformerBlock(nn.Module):
    """Pre-LayerNorm block: attention then feed-forward, each wrapped in a shortcut."""

    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            dropout=cfg["drop_rate"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x, use_cache=False):  # NEW: use_cache
        shortcut = x  # the attention sub-layer: keep its input to add back
        x = self.norm1(x)
        x = self.att(x, use_cache)  # NEW: use_cache; (batch, num_tokens, emb_dim)
        x = self.drop_shortcut(x)
        x = x + shortcut

        shortcut = x  # the feed-forward sub-layer, the same way
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        x = x + shortcut
        return x


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = check_config(cfg, GPT_CONFIG_124M)  # NEW: refuses a misspelled key; kept for forward
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.current_pos = 0  # NEW: how many positions the cache holds

    def reset_cache(self):  # NEW: empty every block's cache before a new sequence
        self.current_pos = 0  # NEW
        for block in self.trf_blocks:  # NEW
            block.att.reset_cache()  # NEW

    def forward(self, in_idx, use_cache=False):  # NEW: use_cache
        batch_size, seq_len = in_idx.shape
        start = self.current_pos if use_cache else 0  # NEW: first position after the cached ones
        check_num_tokens(start + seq_len, self.cfg["context_length"])  # NEW: cached ones count
        tok_embeds = self.tok_emb(in_idx)  # (batch, num_tokens, emb_dim)
        positions = torch.arange(start, start + seq_len, device=in_idx.device)  # NEW: from start
        pos_embeds = self.pos_emb(positions)  # NEW: the positions above
        x = tok_embeds + pos_embeds  # broadcast over the batch
        x = self.drop_emb(x)
        for block in self.trf_blocks:  # NEW: nn.Sequential cannot pass use_cache on
            x = block(x, use_cache)  # NEW
        if use_cache:  # NEW
            self.current_pos = start + seq_len  # NEW
        x = self.final_norm(x)
        logits = self.out_head(x)  # (batch, num_tokens, vocab_size)
        return logits


def from_gpt(model):
    """This module's GPTModel with a copy of a gpt.GPTModel's weights, in the same mode, on the
    same device and in the same dtype."""
    weight = model.tok_emb.weight
    with torch.device("meta"):  # shapes only: no random initial weights, no seed used up
        cached = GPTModel(config_of(model))
    cached = cached.to_empty(device=weight.device).to(weight.dtype)  # the masks stay bool
    cached.load_state_dict(model.state_dict())  # same names and shapes: the classes match
    return cached.train(model.training)


def generate_text_cached(model, idx, max_new_tokens, context_size):
    """gpt.generate_text_simple with a KV cache: same arguments, same ids.

    `model` is this module's GPTModel (from_gpt converts a gpt.GPTModel), or any model with its
    cache: `reset_cache()`, `current_pos` and `forward(ids, use_cache=True)`, such as the
    variants in bonus/kv_cache_variants/ and bonus/gpt2_to_llama_qwen/'s ModernGPT.
    """
    check_generation_args(model, idx, max_new_tokens, context_size)
    model.reset_cache()
    feed = idx[:, -context_size:]  # the first step sees the whole window at once
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(feed, use_cache=True)
        idx_next = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)  # (batch, 1)
        idx = torch.cat((idx, idx_next), dim=1)
        if model.current_pos < context_size:
            feed = idx_next  # room in the window: next time, only the new token
        else:
            # The window slides: every token it keeps moves one position back, which changes
            # its position embedding and so every key and value. Start again on the new window.
            model.reset_cache()
            feed = idx[:, -context_size:]
    model.reset_cache()  # free the cache's memory
    return idx
