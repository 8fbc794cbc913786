"""kv_cache.py and kv_cache_fast.py (bonus/kv_cache/): the ids generate_text_simple returns."""

import pytest
import torch

import gpt
from bonus.kv_cache import kv_cache
from bonus.kv_cache.kv_cache_fast import FastGPT, generate_fast, new_cache
from tests.helpers import (
    BOOK_OUTPUT_IDS,
    HELLO_IDS,
    TINY_CONFIG,
    assert_changes_marked_new,
    cached_and_full_logits,
)

# How gpt.generate_text_simple continues HELLO_IDS with the seed-123 GPT-2 small (gpt.GPTModel):
# the book's 6 tokens, then 14 more recorded from it.
HELLO_CONTINUATION = BOOK_OUTPUT_IDS[4:] + [49706, 43231, 47062, 34657, 18631, 49188, 43312,
                                            45933, 23154, 15983, 10345, 16369, 46214, 22954]
TWO_PROMPTS = torch.tensor([HELLO_IDS, [6109, 3626, 6100, 345]])

GENERATORS = {  # name -> generate(gpt.GPTModel, *generate_text_simple's other arguments)
    "readable": lambda model, *args: kv_cache.generate_text_cached(kv_cache.from_gpt(model), *args),
    "fast": lambda model, *args: generate_fast(FastGPT(model), *args),
}


def test_fast_gpt2_small_ids_match_simple(gpt2_small):
    out = generate_fast(FastGPT(gpt2_small), torch.tensor([HELLO_IDS]), 20, 1024)
    assert out[0].tolist() == HELLO_IDS + HELLO_CONTINUATION


# TINY_CONFIG's context_length is 16; every case generates past the window, for a batch of
# two. Greedy output of a random model soon falls into a loop, which could hide a wrong
# slide; prompts that already fill the window make it slide from the first step.
@pytest.mark.parametrize(
    "prompt_len, context_size",
    [
        (4, 16),  # grows into the full context, then slides
        (24, 16),  # longer than context_length: cropped, then slides from the first step
        (12, 7),  # a window shorter than the context, and than the prompt
        (4, 1),  # every step sees one token, at position 0
    ],
)
def test_ids_match_simple_past_the_window(tiny_model, prompt_len, context_size):
    idx = TWO_PROMPTS.repeat(1, 6)[:, :prompt_len]
    expected = gpt.generate_text_simple(tiny_model, idx, 30, context_size)
    for name, generate in GENERATORS.items():
        assert torch.equal(generate(tiny_model, idx, 30, context_size), expected), name


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_each_cached_step_gives_the_full_forward_logits(qkv_bias):
    """Prefill 4 tokens, then feed one at a time: the logits of running all 12 at once."""
    cfg = {**TINY_CONFIG, "qkv_bias": qkv_bias}
    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()
    ids = TWO_PROMPTS.repeat(1, 3)  # 12 tokens
    readable_steps, expected = cached_and_full_logits(kv_cache.from_gpt(model), ids, 4)
    fast, cache = FastGPT(model), new_cache(cfg, 2, 12)
    fast_steps = [fast(ids[:, :4], cache)[:, -1]]
    fast_steps += [fast(ids[:, t : t + 1], cache, start_pos=t)[:, -1] for t in range(4, 12)]
    assert (readable_steps - expected).abs().max() < 1e-5
    assert (torch.stack(fast_steps, dim=1) - expected).abs().max() < 1e-5


@pytest.mark.parametrize("name", ["MultiHeadAttention", "TransformerBlock", "GPTModel"])
def test_readable_class_differs_from_gpt_only_in_lines_marked_new(name):
    assert_changes_marked_new(getattr(gpt, name), getattr(kv_cache, name))


def test_fast_conversion_leaves_the_model_untouched(tiny_model):
    before = {k: v.clone() for k, v in tiny_model.state_dict().items()}
    generate_fast(FastGPT(tiny_model), TWO_PROMPTS, 3, 16)
    after = tiny_model.state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].is_contiguous() for k in before)


@pytest.mark.parametrize(
    "idx, max_new_tokens, context_size, error, message",
    [
        (torch.tensor([HELLO_IDS]), 2.0, 16, TypeError, r"max_new_tokens must be an int, got 2.0"),
        (torch.tensor([HELLO_IDS]), 2, 0, ValueError, r"context_size must be at least 1, got 0"),
        (HELLO_IDS, 2, 16, TypeError, r"integer token ids, got list"),
        (torch.tensor(HELLO_IDS), 2, 16, ValueError, r"shape \(batch, num_tokens\), got \(4,\)"),
        (torch.tensor([[1, 2, 50257]]), 2, 16, ValueError, r"\[0, 50256\].*from 1 to 50257"),
        # longer than context_length (16): the prompt, then the window as it grows
        (torch.tensor([HELLO_IDS * 5]), 2, 20, ValueError, r"^20 tokens, .* context_length is 16"),
        (torch.tensor([HELLO_IDS]), 20, 100, ValueError, r"^17 tokens, .* context_length is 16"),
    ],
)
def test_bad_input_is_refused_with_one_clear_error(tiny_model, idx, max_new_tokens, context_size,
                                                   error, message):
    """The cached generators are entry points: each checks its arguments up front (gpt_engineering's
    check_generation_args) and the length of what it feeds, where generate_text_simple, the book's
    listing, would stop on PyTorch's own error or go on silently."""
    for generate in GENERATORS.values():
        with pytest.raises(error, match=message):
            generate(tiny_model, idx, max_new_tokens, context_size)
