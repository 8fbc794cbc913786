"""From GPT-2 to Llama 3 and Qwen3: the chapter's model with the changes today's open models share.

    model = ModernGPT(TINY_CONFIG)                        # or {**LLAMA_3_2_1B, ...}, QWEN3_0_6B
    out = generate_text_cached(model, idx, 20, 64)        # the ids gpt.generate_text_simple gives

gpt.py's classes with every changed line marked `# NEW` (tests/bonus/test_modern.py checks it):
RMSNorm, SwiGLU, RoPE, grouped-query attention, QK-norm. See bonus/gpt2_to_llama_qwen/README.md.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from bonus.kv_cache.kv_cache import generate_text_cached  # noqa: F401 (ModernGPT has its cache)
from bonus.kv_cache_variants.kv_variants import appended, repeated
from gpt_engineering import check_config, check_num_tokens

# A small model for the notebook and the tests, in the shape of Llama 3 / Qwen3. n_kv_groups is
# the number of key/value heads, hidden_dim the SwiGLU's width (modern_hf.py has the HF names).
TINY_CONFIG = {
    "vocab_size": 1000, "context_length": 64, "emb_dim": 64, "n_heads": 4, "n_kv_groups": 2,
    "head_dim": 16, "hidden_dim": 176, "n_layers": 2,
    "rope_base": 10_000.0, "rope_scaling": None,
    "norm_eps": 1e-6, "qk_norm": False, "tie_embeddings": False,
}

# The config.json of meta-llama/Llama-3.2-1B on the Hugging Face hub, in our names.
LLAMA_3_2_1B = {
    "vocab_size": 128_256, "context_length": 131_072, "emb_dim": 2048, "n_heads": 32,
    "n_kv_groups": 8, "head_dim": 64, "hidden_dim": 8192, "n_layers": 16,
    "rope_base": 500_000.0,
    "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_context_length": 8192},
    "norm_eps": 1e-5, "qk_norm": False, "tie_embeddings": True,
}

# The config.json of Qwen/Qwen3-0.6B: its 16 heads of 128 (2048 numbers) are twice its width.
QWEN3_0_6B = {
    "vocab_size": 151_936, "context_length": 40_960, "emb_dim": 1024, "n_heads": 16,
    "n_kv_groups": 8, "head_dim": 128, "hidden_dim": 3072, "n_layers": 28,
    "rope_base": 1_000_000.0, "rope_scaling": None,
    "norm_eps": 1e-6, "qk_norm": True, "tie_embeddings": True,
}


# ---- rotary position embeddings ----------------------------------------------------------------


def rope_frequencies(head_dim, base, scaling=None):
    """The angle per position of each of the head_dim / 2 rotated pairs: base^(-2i / head_dim).

    `scaling` (Llama 3.1 and later) slows the low frequencies down by `factor`, leaves the high
    ones alone and blends the ones between, so a model trained on original_context_length
    positions reaches further (the "llama3" rope_type of Hugging Face).
    """
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2).float() / head_dim)
    if scaling is None:
        return inv_freq
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    wavelength = 2 * math.pi / inv_freq
    # 1 for the fast pairs (kept), 0 for the slow ones (`factor` times slower), a blend between
    smooth = ((scaling["original_context_length"] / wavelength - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * inv_freq / scaling["factor"] + smooth * inv_freq


def rotary_angles(positions, inv_freq, dtype=None):
    """(cos, sin) of every position's angles, each (num_tokens, head_dim): pair i is the
    features i and i + head_dim / 2, as in Hugging Face's Llama.

    The angles stay in inv_freq's dtype (float32 in ModernGPT: in bfloat16, position 1000's angle
    would be off by up to 2 radians). Only cos and sin, between -1 and 1, are cast to `dtype` (the
    activations'; default inv_freq's), so bfloat16 queries and keys stay bfloat16.
    """
    angles = positions.to(inv_freq.dtype)[:, None] * inv_freq[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    dtype = dtype or inv_freq.dtype
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x, cos, sin):
    """Rotate each pair (x_i, x_{i + d/2}) of every head of `x` (b, heads, num_tokens, d)."""
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-second, first), dim=-1) * sin


# ---- the chapter's classes, changed -------------------------------------------------------------


class RMSNorm(nn.Module):  # NEW: LayerNorm without the mean and the shift
    """Divide each token vector by its root mean square, then rescale."""  # NEW

    def __init__(self, emb_dim, eps=1e-6):  # NEW: eps from the config
        super().__init__()
        self.eps = eps  # NEW
        self.scale = nn.Parameter(torch.ones(emb_dim))
        # NEW: no shift parameter

    def forward(self, x):
        # NEW: in float32 and cast back, as Hugging Face does: a bfloat16 or float16 square sum
        # NEW: loses digits (or overflows float16's 65504)
        mean_square = x.float().pow(2).mean(dim=-1, keepdim=True)  # NEW: no mean subtracted
        norm_x = (x.float() * torch.rsqrt(mean_square + self.eps)).to(x.dtype)  # NEW
        return self.scale * norm_x  # NEW: no shift


class FeedForward(nn.Module):
    """SwiGLU: a SiLU-gated projection times a plain one, projected back to emb_dim."""  # NEW

    def __init__(self, cfg):
        super().__init__()
        self.gate = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], bias=False)  # NEW
        self.up = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], bias=False)  # NEW
        self.down = nn.Linear(cfg["hidden_dim"], cfg["emb_dim"], bias=False)  # NEW

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))  # NEW


class GroupedQueryAttention(nn.Module):  # NEW: RoPE, GQA, optional QK-norm, no bias or dropout
    """Causal self-attention: grouped key/value heads, RoPE, optional QK-norm, a KV cache."""  # NEW

    def __init__(self, d_in, num_heads, num_kv_groups, head_dim, qk_norm=False,  # NEW
                 norm_eps=1e-6):  # NEW
        super().__init__()
        self.d_out = num_heads * head_dim  # NEW: head_dim is a setting of its own
        self.num_heads = num_heads
        self.head_dim = head_dim  # NEW
        self.num_kv_groups = num_kv_groups  # NEW
        self.group_size = num_heads // num_kv_groups  # NEW: query heads per key/value head
        self.W_query = nn.Linear(d_in, self.d_out, bias=False)  # NEW: no bias
        self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, bias=False)  # NEW
        self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=False)  # NEW
        self.out_proj = nn.Linear(self.d_out, d_in, bias=False)  # NEW: no bias, back to d_in
        self.q_norm = RMSNorm(head_dim, norm_eps) if qk_norm else nn.Identity()  # NEW: Qwen3
        self.k_norm = RMSNorm(head_dim, norm_eps) if qk_norm else nn.Identity()  # NEW
        self.reset_cache()  # NEW: no dropout; the mask is built per call (131,072 positions)

    def reset_cache(self):  # NEW: forget the cached keys and values
        self.cache_k, self.cache_v = None, None  # NEW: each (b, kv groups, positions, head_dim)

    def forward(self, x, rope, use_cache=False):  # NEW: rope = (cos, sin) of the new positions
        b, num_tokens, _ = x.shape
        # Project, then split the last dimension into heads: (b, num_heads, num_tokens, head_dim).
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)  # NEW
        keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)  # NEW
        values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim)  # NEW
        queries = self.q_norm(queries).transpose(1, 2)  # NEW: per head, before the rotation
        keys, values = self.k_norm(keys).transpose(1, 2), values.transpose(1, 2)  # NEW
        queries, keys = apply_rope(queries, *rope), apply_rope(keys, *rope)  # NEW: values stay
        if use_cache:  # NEW: the cache keeps the rotated keys of the kv groups
            keys, values = appended(self.cache_k, keys, 2), appended(self.cache_v, values, 2)  # NEW
            self.cache_k, self.cache_v = keys, values  # NEW
        keys = repeated(keys, self.group_size)  # NEW: (b, num_heads, num_keys, head_dim)
        values = repeated(values, self.group_size)  # NEW
        num_keys = keys.shape[2]  # NEW: cached positions + new tokens

        attn_scores = queries @ keys.transpose(2, 3)  # NEW shape: (b, num_heads, num_tokens, num_keys)
        # NEW: True above the diagonal of the new queries' rows: no position after their own
        mask = torch.ones(num_tokens, num_keys, dtype=torch.bool, device=x.device)  # NEW
        attn_scores.masked_fill_(mask.triu(num_keys - num_tokens + 1), -torch.inf)  # NEW
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        # NEW: no dropout on the attention weights

        context = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context = context.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class TransformerBlock(nn.Module):
    """Pre-norm block: attention then feed-forward, each wrapped in a shortcut."""  # NEW

    def __init__(self, cfg):
        super().__init__()
        self.att = GroupedQueryAttention(  # NEW
            d_in=cfg["emb_dim"],
            # NEW: d_out is n_heads * head_dim; RoPE needs no context_length; no dropout
            num_heads=cfg["n_heads"],
            num_kv_groups=cfg["n_kv_groups"],  # NEW
            head_dim=cfg["head_dim"],  # NEW
            qk_norm=cfg["qk_norm"],  # NEW
            norm_eps=cfg["norm_eps"],  # NEW
        )
        self.ff = FeedForward(cfg)
        self.norm1 = RMSNorm(cfg["emb_dim"], cfg["norm_eps"])  # NEW
        self.norm2 = RMSNorm(cfg["emb_dim"], cfg["norm_eps"])  # NEW

    def forward(self, x, rope, use_cache=False):  # NEW: no dropout; the rotation angles
        shortcut = x  # the attention sub-layer: keep its input to add back
        x = self.norm1(x)
        x = self.att(x, rope, use_cache)  # NEW: the angles and use_cache
        # NEW: no dropout
        x = x + shortcut

        shortcut = x  # the feed-forward sub-layer, the same way
        x = self.norm2(x)
        x = self.ff(x)
        # NEW: no dropout
        x = x + shortcut
        return x


class ModernGPT(nn.Module):  # NEW
    def __init__(self, cfg):
        super().__init__()
        self.cfg = check_config(cfg, TINY_CONFIG)  # NEW: refuses a key TINY_CONFIG does not have
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        # NEW: no pos_emb, no dropout; the angles per position, in float32, as a plain attribute:
        # NEW: .to(torch.bfloat16) casts buffers, and would round them to 8 significant bits
        self.inv_freq = rope_frequencies(cfg["head_dim"], cfg["rope_base"], cfg["rope_scaling"])  # NEW
        self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["n_layers"])])  # NEW
        self.final_norm = RMSNorm(cfg["emb_dim"], cfg["norm_eps"])  # NEW
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        if cfg["tie_embeddings"]:  # NEW: one matrix for the token embedding and the head
            self.out_head.weight = self.tok_emb.weight  # NEW
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
        # NEW: cos and sin for the blocks' rotations, from float32 angles, in the activations' dtype
        rope = rotary_angles(positions, self.inv_freq.to(in_idx.device), tok_embeds.dtype)  # NEW
        x = tok_embeds  # NEW: no position embedding is added
        for block in self.trf_blocks:  # NEW: each block gets the angles and use_cache
            x = block(x, rope, use_cache)  # NEW
        if use_cache:  # NEW
            self.current_pos = start + seq_len  # NEW
        x = self.final_norm(x)
        logits = self.out_head(x)  # (batch, num_tokens, vocab_size)
        return logits


def parameter_breakdown(cfg):
    """Parameter counts per component of ModernGPT(cfg), from the config alone (like gpt.py's)."""
    d, v, n = cfg["emb_dim"], cfg["vocab_size"], cfg["n_layers"]
    q, kv = cfg["n_heads"] * cfg["head_dim"], cfg["n_kv_groups"] * cfg["head_dim"]
    qk_norms = 2 * cfg["head_dim"] if cfg["qk_norm"] else 0
    return {
        "token embedding": v * d,
        "attention": n * (d * q + 2 * d * kv + q * d + qk_norms),  # W_query, W_key/W_value, out
        "feed-forward": n * 3 * d * cfg["hidden_dim"],  # gate, up, down
        "norms": n * 2 * d + d,  # norm1 and norm2 of each block, final_norm: a scale each
        "output head": 0 if cfg["tie_embeddings"] else d * v,
    }


def kv_cache_bytes_per_token(cfg, bytes_per_value=2):
    """Bytes a KV cache holds per token: a key and a value per key/value head, in every layer
    (2 bytes per value in bfloat16 or float16, as the models are served)."""
    return 2 * cfg["n_layers"] * cfg["n_kv_groups"] * cfg["head_dim"] * bytes_per_value

