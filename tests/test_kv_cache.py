"""bonus/kv_cache.py: generate_cached returns exactly what generate_text_simple returns."""

import pytest
import torch

import gpt
from bonus import benchmark
from bonus.kv_cache import KVCacheGPT, generate_cached, new_cache
from tests.conftest import TINY_CONFIG

HELLO = [15496, 11, 314, 716]  # "Hello, I am"
# How gpt.generate_text_simple continues HELLO with the seed-123 GPT-2 small (gpt.GPTModel):
# the spec's 6 tokens, then 14 more recorded from it.
HELLO_CONTINUATION = [27018, 24086, 47843, 30961, 42348, 7267, 49706, 43231, 47062, 34657,
                      18631, 49188, 43312, 45933, 23154, 15983, 10345, 16369, 46214, 22954]
TWO_PROMPTS = torch.tensor([HELLO, [6109, 3626, 6100, 345]])


@pytest.fixture(scope="module")
def fast_small(gpt2_small):
    """The shared seed-123 GPT-2 small, converted once for this module (~380 MB of copies)."""
    return KVCacheGPT.from_gpt(gpt2_small)


def test_gpt2_small_ids_match_simple(fast_small):
    out = generate_cached(fast_small, torch.tensor([HELLO]), 20, 1024)
    assert out[0].tolist() == HELLO + HELLO_CONTINUATION


def test_gpt2_small_logits_match(gpt2_small, fast_small):
    """The fast forward, and each cached step, give the teaching model's logits."""
    ids = TWO_PROMPTS.repeat(1, 3)  # 12 tokens
    with torch.no_grad():
        expected = gpt2_small(ids)
        assert (fast_small(ids) - expected).abs().max() < 1e-5
        cache = new_cache(gpt.GPT_CONFIG_124M, 2, ids.shape[1])
        steps = [fast_small(ids[:, :4], cache)[:, -1]]  # prefill 4 tokens, then one at a time
        steps += [fast_small(ids[:, t : t + 1], cache, start_pos=t)[:, -1] for t in range(4, 12)]
    assert (torch.stack(steps, dim=1) - expected[:, 3:]).abs().max() < 1e-5


# TINY_CONFIG's context_length is 16; each case generates past the window. Greedy output
# of a random model soon falls into a loop, which could hide a wrong slide; prompts that
# already fill the window make it slide from the first step.
@pytest.mark.parametrize(
    "prompt_len, context_size",
    [
        (4, 16),  # grows into the full context, then slides
        (16, 16),  # slides from the first step
        (12, 7),  # a window shorter than the context, and than the prompt
        (4, 5),
        (4, 1),  # every step sees one token, at position 0
    ],
)
def test_window_slides_like_simple(tiny_model, prompt_len, context_size):
    idx = TWO_PROMPTS.repeat(1, 4)[:, :prompt_len]
    expected = gpt.generate_text_simple(tiny_model, idx, 30, context_size)
    assert torch.equal(generate_cached(tiny_model, idx, 30, context_size), expected)


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_state_dict_round_trip(qkv_bias):
    """KVCacheGPT rearranges weights in memory; a GPTModel state dict loads in and out."""
    cfg = {**TINY_CONFIG, "qkv_bias": qkv_bias}
    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()
    fast = KVCacheGPT(cfg)
    fast.load_state_dict(model.state_dict())  # strict: same names, same shapes
    with torch.no_grad():
        assert (fast(TWO_PROMPTS) - model(TWO_PROMPTS)).abs().max() < 1e-5
    back = gpt.GPTModel(cfg)
    back.load_state_dict(fast.state_dict())
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in back.state_dict().items())


def test_model_left_untouched(tiny_model):
    before = {k: v.clone() for k, v in tiny_model.state_dict().items()}
    generate_cached(tiny_model, TWO_PROMPTS, 3, 16)
    after = tiny_model.state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].is_contiguous() for k in before)


@pytest.mark.parametrize(
    "idx, max_new_tokens, context_size",
    [
        (torch.tensor([HELLO]), 2.0, 16),  # max_new_tokens not an int
        (torch.tensor([HELLO]), True, 16),
        (torch.tensor([HELLO]), -1, 16),
        (torch.tensor([HELLO]), 2, 0),  # context_size not positive
        (torch.tensor([HELLO]), 2, 4.0),
        (torch.tensor(HELLO), 2, 16),  # no batch dimension
        (HELLO, 2, 16),  # not a tensor
        (torch.tensor([HELLO]).float(), 2, 16),  # not integer ids
        (torch.tensor([[1, 2, 50257]]), 2, 16),  # outside the vocabulary
        (torch.tensor([[-1, 2]]), 2, 16),
        (torch.zeros(1, 0, dtype=torch.long), 2, 16),  # empty
        (torch.tensor([HELLO * 5]), 2, 20),  # prompt longer than context_length (16)
    ],
)
def test_bad_input_errors_as_in_gpt(tiny_model, idx, max_new_tokens, context_size):
    with pytest.raises(Exception) as simple:
        gpt.generate_text_simple(tiny_model, idx, max_new_tokens, context_size)
    with pytest.raises(simple.type) as cached:
        generate_cached(tiny_model, idx, max_new_tokens, context_size)
    assert str(cached.value) == str(simple.value)


def test_window_longer_than_context_length_errors_up_front(tiny_model):
    idx = torch.tensor([HELLO])
    with pytest.raises(ValueError, match="context_length"):
        gpt.generate_text_simple(tiny_model, idx, 20, 100)  # fails after 13 new tokens
    with pytest.raises(ValueError, match="context_length is 16"):
        generate_cached(tiny_model, idx, 20, 100)  # fails before generating anything


def test_benchmark_quick_reports_identical_ids(capsys):
    assert benchmark.main(["--quick", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "identical ids: True" in out
    assert "logits match within 1e-5: True" in out
