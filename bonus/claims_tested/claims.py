"""The chapter's design choices, each undone on its own (bonus 08 trains them; see its README).

    model = make_model(cfg, seed=1, block=BlockReLU)     # the chapter's GPT with ReLU, nothing else
    model = make_model(cfg, seed=1, tie_weights=True)    # out_head shares tok_emb's weight
    gpt2_init_(make_model(cfg, seed=1))                  # GPT-2's initialization

Each variant subclasses gpt.py's class and overrides one method, every changed line ending in
`# NEW`; with its defaults `GPTVariant` is gpt.GPTModel, weight for weight under one seed.
"""

import math

import torch
import torch.nn as nn

from gpt import GPT_CONFIG_124M, GPTModel, LayerNorm, TransformerBlock
from gpt_engineering import check_config


class BlockNoNorm(TransformerBlock):  # NEW: no LayerNorms; the shortcuts stay
    def __init__(self, cfg):
        super().__init__(cfg)
        self.norm1 = nn.Identity()  # NEW: no layer normalization
        self.norm2 = nn.Identity()  # NEW: no layer normalization


class BlockNoShortcut(TransformerBlock):  # NEW: pre-LN, attention then feed-forward, no shortcuts
    def forward(self, x):
        # NEW: no "shortcut = x": nothing is added back
        x = self.norm1(x)
        x = self.att(x)  # (batch, num_tokens, emb_dim)
        x = self.drop_shortcut(x)
        # NEW: no "x = x + shortcut": the sub-layer's output alone goes on

        # NEW: no "shortcut = x"
        x = self.norm2(x)
        x = self.ff(x)
        x = self.drop_shortcut(x)
        # NEW: no "x = x + shortcut"
        return x


class BlockReLU(TransformerBlock):  # NEW: the feed-forward network uses ReLU
    def __init__(self, cfg):
        super().__init__(cfg)
        self.ff.layers[1] = nn.ReLU()  # NEW: instead of GELU(); the weights stay as drawn


class BlockPostLN(TransformerBlock):  # NEW: post-LN, each shortcut sum normalized after it is added
    def forward(self, x):
        shortcut = x  # the attention sub-layer: keep its input to add back
        # NEW: no norm1 here: attention gets the input itself
        x = self.att(x)  # (batch, num_tokens, emb_dim)
        x = self.drop_shortcut(x)
        x = x + shortcut
        x = self.norm1(x)  # NEW: normalize after the sum

        shortcut = x  # the feed-forward sub-layer, the same way
        # NEW: no norm2 here: the feed-forward network gets the input itself
        x = self.ff(x)
        x = self.drop_shortcut(x)
        x = x + shortcut
        x = self.norm2(x)  # NEW: normalize after the sum
        return x


class GPTVariant(GPTModel):  # NEW: gpt.GPTModel with three options; only __init__ changes
    def __init__(self, cfg, block=TransformerBlock, final_norm=True, tie_weights=False):  # NEW
        nn.Module.__init__(self)  # NEW: GPTModel.__init__ would draw the chapter's blocks
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[block(cfg) for _ in range(cfg["n_layers"])])  # NEW
        self.final_norm = LayerNorm(cfg["emb_dim"]) if final_norm else nn.Identity()  # NEW
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        if tie_weights:  # NEW: one matrix for both: row i embeds token i and scores token i
            self.out_head.weight = self.tok_emb.weight  # NEW


def make_model(cfg, seed, **change):
    """GPTVariant(cfg, **change), its random weights drawn after torch.manual_seed(seed); a
    misspelled key in `cfg` is refused with a ValueError."""
    cfg = check_config(cfg, GPT_CONFIG_124M)
    torch.manual_seed(seed)
    return GPTVariant(cfg, **change)


def gpt2_init_(model, std=0.02, kinds=(nn.Linear, nn.Embedding)):
    """GPT-2's initialization, in place: every weight normal with std 0.02, every bias 0, and
    the two projections that write into the shortcut stream (attention's out_proj and the
    feed-forward's second linear layer) scaled by 1 / sqrt(2 * n_layers). LayerNorms keep 1, 0.
    Only the modules of `kinds` are drawn anew; the others keep PyTorch's default."""
    residual_std = std / math.sqrt(2 * len(model.trf_blocks))  # two projections per block
    for name, module in model.named_modules():
        if isinstance(module, kinds):
            # ff.down: the same layer in bonus/gpt2_to_llama_qwen/modern.py's SwiGLU network
            writes_to_stream = name.endswith(("att.out_proj", "ff.layers.2", "ff.down"))
            nn.init.normal_(module.weight, mean=0.0, std=residual_std if writes_to_stream else std)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
    return model


def embeddings_init_(model):
    """Only the embeddings drawn as GPT-2 draws them: separates their share of gpt2_init_'s effect."""
    return gpt2_init_(model, kinds=nn.Embedding)
