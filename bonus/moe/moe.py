"""A mixture-of-experts (MoE) feed-forward layer for the chapter's GPT-2, nothing else changed.

    cfg = {**gpt.GPT_CONFIG_124M, "n_experts": 8, "top_k": 2, "shared_expert": False}
    model = moe_gpt_model(cfg)                      # gpt.GPTModel, each block's ff a MoE layer
    gpt.generate_text_simple(model, idx, 10, 1024)  # generates like any GPTModel

gpt.FeedForward with every changed line marked `# NEW`. See bonus/moe/README.md.
"""

import torch
import torch.nn as nn

import gpt
from bonus.flops.flops import flops_breakdown
from gpt import GELU
from gpt_engineering import check_config

MOE_KEYS = ("n_experts", "top_k", "shared_expert")  # what a MoE config adds to a GPT config
OPTIONAL_MOE_KEYS = ("expert_hidden_dim",)  # each expert's hidden width, 4 * emb_dim if absent


def expert_hidden_dim(cfg):
    """Each expert's hidden width: cfg["expert_hidden_dim"], else gpt.FeedForward's 4 * emb_dim."""
    return cfg.get("expert_hidden_dim", 4 * cfg["emb_dim"])


class ExpertFeedForward(nn.Module):  # NEW: gpt.FeedForward with a hidden width of its own
    """Expand each token vector to hidden_dim, apply GELU, project back to emb_dim."""  # NEW

    def __init__(self, cfg, hidden_dim):  # NEW
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg["emb_dim"], hidden_dim),  # NEW
            GELU(),
            nn.Linear(hidden_dim, cfg["emb_dim"]),  # NEW
        )

    def forward(self, x):
        return self.layers(x)


class MoEFeedForward(nn.Module):  # NEW: a router sends each token to a few feed-forward networks
    """A mixture of experts: each token goes through top_k of n_experts FeedForwards."""  # NEW

    def __init__(self, cfg):
        super().__init__()
        self.top_k = cfg["top_k"]  # NEW
        hidden = expert_hidden_dim(cfg)  # NEW: 4 * emb_dim unless the config says otherwise
        self.router = nn.Linear(cfg["emb_dim"], cfg["n_experts"], bias=False)  # NEW: expert scores
        self.experts = nn.ModuleList(  # NEW
            ExpertFeedForward(cfg, hidden) for _ in range(cfg["n_experts"]))  # NEW
        self.shared_expert = ExpertFeedForward(cfg, hidden) if cfg["shared_expert"] else None  # NEW

    def route(self, x):  # NEW: the gate (weight) of each token's experts, and which they are
        probs = torch.softmax(self.router(x), dim=-1)  # NEW: over ALL experts, so the router learns
        return torch.topk(probs, self.top_k, dim=-1)  # NEW: the k most probable experts

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])  # NEW: one row per token, (b * tokens, emb_dim)
        gates, chosen = self.route(tokens)  # NEW: each (b * tokens, top_k)
        out = torch.zeros_like(tokens)  # NEW
        for i, expert in enumerate(self.experts):  # NEW: each expert runs on its tokens only
            rows, slot = torch.where(chosen == i)  # NEW: the tokens that chose expert i, and where
            out.index_add_(0, rows, gates[rows, slot, None] * expert(tokens[rows]))  # NEW
        if self.shared_expert is not None:  # NEW
            out = out + self.shared_expert(tokens)  # NEW
        return out.view_as(x)  # NEW


def dense_reference(moe, x):
    """What moe(x) computes, done densely: every expert runs on every token, and an expert the
    token did not choose gets gate 0. The same numbers for n_experts / top_k times the work."""
    gates, chosen = moe.route(x)
    all_gates = torch.zeros(*chosen.shape[:-1], len(moe.experts)).scatter(-1, chosen, gates)
    outputs = torch.stack([expert(x) for expert in moe.experts], dim=-1)  # (..., emb, experts)
    out = (outputs * all_gates.unsqueeze(-2)).sum(dim=-1)
    if moe.shared_expert is not None:
        out = out + moe.shared_expert(x)
    return out


def moe_gpt_model(cfg):
    """gpt.GPTModel with each block's feed-forward network replaced by a MoEFeedForward.

    `cfg` is a GPT config plus MOE_KEYS (and optionally OPTIONAL_MOE_KEYS); a misspelled GPT
    key is refused with a ValueError.
    """
    gpt_keys = {k: v for k, v in cfg.items() if k not in MOE_KEYS + OPTIONAL_MOE_KEYS}
    model = gpt.GPTModel(check_config(gpt_keys, gpt.GPT_CONFIG_124M))
    for block in model.trf_blocks:
        block.ff = MoEFeedForward(cfg)
    return model


def routes(model, in_idx):
    """Each MoE layer's (gates, chosen experts) for the tokens of model(in_idx), in order."""
    found = []
    hooks = [m.register_forward_hook(lambda layer, inputs, _: found.append(layer.route(inputs[0])))
             for m in model.modules() if isinstance(m, MoEFeedForward)]
    try:
        with torch.no_grad():
            model(in_idx)
    finally:
        for hook in hooks:
            hook.remove()
    return found


def moe_parameter_counts(cfg):
    """Parameters of moe_gpt_model(cfg): in total, and active (those one token uses).

    As in published figures, the active count includes the embeddings and the output head:
    everything but the experts a token does not go through.
    """
    dense = gpt.parameter_breakdown(cfg)
    layers, d, hidden = cfg["n_layers"], cfg["emb_dim"], expert_hidden_dim(cfg)
    expert = (d * hidden + hidden) + (hidden * d + d)  # expand + contract, with biases
    per_layer = d * cfg["n_experts"] + (expert if cfg["shared_expert"] else 0)  # router + shared
    rest = sum(dense.values()) - dense["feed-forward"]  # attention, embeddings, norms, head
    return {
        "total": rest + layers * (per_layer + cfg["n_experts"] * expert),
        "active": rest + layers * (per_layer + cfg["top_k"] * expert),
    }


def moe_flops_breakdown(cfg, num_tokens):
    """bonus.flops.flops.flops_breakdown for moe_gpt_model(cfg): the feed-forward part becomes the
    router plus top_k experts (and the shared one) per token, whichever experts they are."""
    parts = flops_breakdown(cfg, num_tokens)
    layers, t, d, hidden = cfg["n_layers"], num_tokens, cfg["emb_dim"], expert_hidden_dim(cfg)
    experts_run = cfg["top_k"] + int(cfg["shared_expert"])
    expert = 2 * 2 * t * d * hidden  # d -> hidden, then hidden -> d, for each of t tokens
    router = 2 * t * d * cfg["n_experts"]
    parts["feed-forward"] = layers * (experts_run * expert + router)
    return parts


# Mixtral 8x7B's published configuration: config.json of mistralai/Mixtral-8x7B-v0.1 on the
# Hugging Face Hub (Jiang et al., "Mixtral of Experts", arXiv:2401.04088). Mistral AI states
# 46.7B parameters in total, 12.9B used per token.
MIXTRAL_8X7B = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 14336,  # each expert's hidden width
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,  # grouped-query attention: 8 key/value heads for 32 queries
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
}


def mixtral_parameter_counts(config=MIXTRAL_8X7B):
    """Total and active parameters of a Mixtral-style model, from its config.json values.

    Its blocks differ from GPT-2's: no biases, RMSNorm (a scale only), grouped-query attention,
    and experts with three matrices (SwiGLU: gate, up and down projections).
    """
    d, layers = config["hidden_size"], config["num_hidden_layers"]
    kv_width = d // config["num_attention_heads"] * config["num_key_value_heads"]
    attention = 2 * d * d + 2 * d * kv_width  # queries and output d x d; keys, values narrower
    expert = 3 * d * config["intermediate_size"]
    router = d * config["num_local_experts"]
    norms = 2 * d  # before attention and before the experts
    embeddings = config["vocab_size"] * d * (1 if config["tie_word_embeddings"] else 2)
    rest = embeddings + d + layers * (attention + router + norms)  # + d: the final norm
    return {
        "total": rest + layers * config["num_local_experts"] * expert,
        "active": rest + layers * config["num_experts_per_tok"] * expert,
    }
