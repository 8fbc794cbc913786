# The four published GPT-2 sizes differ only in width, depth and number of heads.
GPT2_SIZES = {
    "gpt2-small": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},    # 124M
    "gpt2-medium": {"emb_dim": 1024, "n_layers": 24, "n_heads": 16},  # 355M
    "gpt2-large": {"emb_dim": 1280, "n_layers": 36, "n_heads": 20},   # 774M
    "gpt2-xl": {"emb_dim": 1600, "n_layers": 48, "n_heads": 25},      # 1558M
}


def gpt2_config(name):
    """GPT_CONFIG_124M with the width, depth and heads of the named GPT-2 size."""
    if name not in GPT2_SIZES:
        raise ValueError(f"unknown model {name!r}; choose one of {list(GPT2_SIZES)}")
    return {**GPT_CONFIG_124M, **GPT2_SIZES[name]}


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
