"""GPT-2 from chapter 4 of "Build a Large Language Model (From Scratch)", consolidated.

GENERATED from the `#| export` cells of notebooks/*.ipynb by tools/export.py - do not edit
by hand: change the notebook, then run `python tools/export.py`. Run `python gpt.py --help`
for the command line.
"""

import torch
import torch.nn as nn

from gpt_engineering import check_config, get_tokenizer

# ---- from notebooks/01_gpt_backbone.ipynb ----
GPT_CONFIG_124M = {
    "vocab_size": 50257,     # how many distinct tokens the BPE tokenizer knows
    "context_length": 1024,  # longest input the positional embedding covers
    "emb_dim": 768,          # width of every token vector
    "n_heads": 12,           # attention heads per transformer block
    "n_layers": 12,          # number of transformer blocks
    "drop_rate": 0.1,        # dropout probability (only active in training mode)
    "qkv_bias": False,       # whether the query/key/value projections have a bias
}


# ---- from notebooks/02_layer_norm.ipynb ----
class LayerNorm(nn.Module):
    """Normalize each token vector to mean 0 and variance 1, then rescale and shift."""

    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5  # keeps the division safe when the variance is ~0
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # divide by n, as GPT-2 does
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift


# ---- from notebooks/03_gelu_feedforward.ipynb ----
class GELU(nn.Module):
    """GELU activation, in the tanh approximation that GPT-2 was trained with."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(
            torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))
        ))


class FeedForward(nn.Module):
    """Expand each token vector 4x, apply GELU, project back to emb_dim."""

    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
            GELU(),
            nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
        )

    def forward(self, x):
        return self.layers(x)


# ---- from notebooks/05_transformer_block.ipynb ----
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

    def forward(self, x):
        b, num_tokens, _ = x.shape
        # Project, then split the last dimension into heads: (b, num_heads, num_tokens, head_dim).
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_tokens)
        attn_scores.masked_fill_(self.mask[:num_tokens, :num_tokens], -torch.inf)
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

    def forward(self, x):
        shortcut = x  # the attention sub-layer: keep its input to add back
        x = self.norm1(x)
        x = self.att(x)  # (batch, num_tokens, emb_dim)
        x = self.drop_shortcut(x)
        x = x + shortcut

        shortcut = x  # the feed-forward sub-layer, the same way
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        x = x + shortcut
        return x


# ---- from notebooks/06_gpt_model.ipynb ----
class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)  # (batch, num_tokens, emb_dim)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = tok_embeds + pos_embeds  # broadcast over the batch
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        logits = self.out_head(x)  # (batch, num_tokens, vocab_size)
        return logits


# ---- from notebooks/07_generating_text.ipynb ----
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]  # the model only sees the last context_size tokens
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]  # only the last position predicts the next token
        probas = torch.softmax(logits, dim=-1)  # monotonic: argmax is unchanged
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)  # (batch, 1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


# ---- from notebooks/appendix_engineering.ipynb ----
def text_to_token_ids(text, tokenizer):
    """Encode `text` into a [1, num_tokens] tensor (a batch of one)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text:
        raise ValueError("text is empty: the model needs at least one token to continue")
    ids = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(ids).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    """Decode a [1, num_tokens] (or flat) tensor of ids back to text."""
    return tokenizer.decode(token_ids.flatten().tolist())


# The four published GPT-2 sizes differ only in width, depth and number of heads.
GPT2_SIZES = {
    "gpt2-small": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "gpt2-medium": {"emb_dim": 1024, "n_layers": 24, "n_heads": 16},
    "gpt2-large": {"emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "gpt2-xl": {"emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}


def gpt2_config(name, **changes):
    """GPT_CONFIG_124M with the width, depth and heads of the named GPT-2 size, then `changes`
    (drop_rate=0.0, say); an unknown size or a misspelled key is refused with a ValueError."""
    if name not in GPT2_SIZES:
        raise ValueError(f"unknown model {name!r}; choose one of {list(GPT2_SIZES)}")
    return check_config({**GPT_CONFIG_124M, **GPT2_SIZES[name], **changes}, GPT_CONFIG_124M)


def parameter_breakdown(cfg):
    """Parameter counts per component of GPTModel(cfg), computed from the config alone."""
    d, v, t, n = cfg["emb_dim"], cfg["vocab_size"], cfg["context_length"], cfg["n_layers"]
    qkv_bias = 3 * d if cfg["qkv_bias"] else 0
    attention = 3 * d * d + qkv_bias + (d * d + d)  # W_query/W_key/W_value + out_proj
    feed_forward = (d * 4 * d + 4 * d) + (4 * d * d + d)  # expand + contract, with biases
    block_norms = 2 * 2 * d  # norm1 and norm2, each with scale and shift
    return {
        "token embedding": v * d,
        "position embedding": t * d,
        "attention": n * attention,
        "feed-forward": n * feed_forward,
        "layer norms": n * block_norms + 2 * d,  # + final_norm
        "output head": d * v,
    }


if __name__ == "__main__":
    import gpt_cli

    gpt_cli.main()
