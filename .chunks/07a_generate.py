def generate_text_simple(model, idx, max_new_tokens, context_size):
    """Greedy decoding: append the most likely next token, `max_new_tokens` times."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
        raise TypeError(f"max_new_tokens must be an int, got {max_new_tokens!r}")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if isinstance(context_size, bool) or not isinstance(context_size, int) or context_size < 1:
        raise ValueError(f"context_size must be a positive int, got {context_size!r}")
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2:
        raise ValueError("idx must be a [batch, num_tokens] tensor of token ids")
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]  # the model only sees the last context_size tokens
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]  # only the last position predicts the next token
        probas = torch.softmax(logits, dim=-1)  # monotonic: argmax is unchanged
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)  # (batch, 1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
