GPT_CONFIG_124M = {
    "vocab_size": 50257,     # how many distinct tokens the BPE tokenizer knows
    "context_length": 1024,  # longest input the positional embedding covers
    "emb_dim": 768,          # width of every token vector
    "n_heads": 12,           # attention heads per transformer block
    "n_layers": 12,          # number of transformer blocks
    "drop_rate": 0.1,        # dropout probability (only active in training mode)
    "qkv_bias": False,       # whether the query/key/value projections have a bias
}

_POSITIVE_INT_KEYS = ("vocab_size", "context_length", "emb_dim", "n_heads", "n_layers")


def check_config(cfg):
    """Raise a clear TypeError/ValueError if `cfg` is not a usable GPT config."""
    if not isinstance(cfg, dict):
        raise TypeError(f"config must be a dict, got {type(cfg).__name__}")
    missing = sorted(set(GPT_CONFIG_124M) - set(cfg))
    unknown = sorted(set(cfg) - set(GPT_CONFIG_124M))
    if missing:
        raise ValueError(f"config is missing key(s) {missing}")
    if unknown:
        raise ValueError(f"config has unknown key(s) {unknown}; expected {sorted(GPT_CONFIG_124M)}")
    for key in _POSITIVE_INT_KEYS:
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"config['{key}'] must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"config['{key}'] must be positive, got {value}")
    rate = cfg["drop_rate"]
    if isinstance(rate, bool) or not isinstance(rate, (int, float)):
        raise TypeError(f"config['drop_rate'] must be a number, got {rate!r}")
    if not 0 <= rate <= 1:
        raise ValueError(f"config['drop_rate'] must be between 0 and 1, got {rate}")
    if not isinstance(cfg["qkv_bias"], bool):
        raise TypeError(f"config['qkv_bias'] must be True or False, got {cfg['qkv_bias']!r}")
    if cfg["emb_dim"] % cfg["n_heads"]:
        raise ValueError(
            f"emb_dim ({cfg['emb_dim']}) must be divisible by n_heads ({cfg['n_heads']})"
        )
