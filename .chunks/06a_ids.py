def check_token_ids(in_idx, vocab_size, context_length):
    """Raise a clear error unless `in_idx` is a [batch, num_tokens] tensor of valid ids."""
    if not isinstance(in_idx, torch.Tensor):
        raise TypeError(f"token ids must be a torch.Tensor, got {type(in_idx).__name__}")
    if in_idx.dtype.is_floating_point or in_idx.dtype.is_complex or in_idx.dtype == torch.bool:
        raise TypeError(f"token ids must be integers, got dtype {in_idx.dtype}")
    if in_idx.dim() != 2:
        raise ValueError(
            f"token ids must have shape [batch, num_tokens], got {list(in_idx.shape)}"
            " (use ids.unsqueeze(0) for a single sequence)"
        )
    num_tokens = in_idx.shape[1]
    if num_tokens == 0:
        raise ValueError("token ids are empty: need at least one token")
    if num_tokens > context_length:
        raise ValueError(
            f"input has {num_tokens} tokens but the model's context_length is {context_length}"
            " (crop it, e.g. in_idx[:, -context_length:])"
        )
    low, high = in_idx.min().item(), in_idx.max().item()
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"token id {bad} is outside the vocabulary [0, {vocab_size - 1}]")
