"""Helpers the test modules share (fixtures live in conftest.py)."""

import difflib
import inspect

TINY_CONFIG = {
    "vocab_size": 50257,  # the real vocabulary, so the tokenizer's ids stay valid
    "context_length": 16,
    "emb_dim": 32,
    "n_heads": 4,
    "n_layers": 2,
    "drop_rate": 0.1,
    "qkv_bias": False,
}
# For tests that need no tokenizer: the output head dominates a tiny model's time.
SMALL_VOCAB_CONFIG = {**TINY_CONFIG, "vocab_size": 500}
TWO_PROMPTS = [[154, 11, 314, 71], [109, 362, 400, 345]]  # ids below 500; torch.tensor(...) them


def assert_changes_marked_new(chapter, variant):
    """Fail unless `variant`'s source differs from `chapter`'s only in lines marked `# NEW`.

    `chapter` and `variant` are classes or functions (e.g. gpt.MultiHeadAttention and a bonus
    copy of it). A chapter line may be replaced by a marked line, never dropped silently; a mark
    on a chapter line that is otherwise unchanged is refused too (it would point at no change).
    """
    old = inspect.getsource(chapter).splitlines()
    new = inspect.getsource(variant).splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        assert new[j1:j2], f"chapter lines removed, nothing marked instead: {old[i1:i2]}"
        unmarked = [line for line in new[j1:j2] if line.strip() and "# NEW" not in line]
        assert not unmarked, f"changed without a # NEW comment: {unmarked}"
        restated = [line for line in new[j1:j2]
                    if line.split("# NEW")[0].rstrip() in old[i1:i2] and line.split("#")[0].strip()]
        assert not restated, f"marked # NEW but the chapter's line as it is: {restated}"


def cached_and_full_logits(model, ids, prefill):
    """The last logits of each call with `model`'s KV cache (the first `prefill` tokens at once,
    then one token per call), and the logits at those positions from one pass without it."""
    import torch

    with torch.no_grad():
        model.reset_cache()
        steps = [model(ids[:, :prefill], use_cache=True)[:, -1]]
        steps += [model(ids[:, t : t + 1], use_cache=True)[:, -1]
                  for t in range(prefill, ids.shape[1])]
        return torch.stack(steps, dim=1), model(ids)[:, prefill - 1 :]


# The chapter's end result (notebook 07): "Hello, I am" continued by the seed-123 GPT-2 small.
HELLO_IDS = [15496, 11, 314, 716]
BOOK_OUTPUT_IDS = HELLO_IDS + [27018, 24086, 47843, 30961, 42348, 7267]
BOOK_OUTPUT_TEXT = "Hello, I am Featureiman Byeswickattribute argue"
