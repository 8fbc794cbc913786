"""Bad input gets a clear error that names the problem, raised up front (a wrong value: ValueError,
a wrong type: TypeError), never a silent wrong answer. The forward pass checks shapes only; ids
given straight to it get PyTorch's own errors."""

import pytest
import torch

import gpt
from tests.helpers import TINY_CONFIG


@pytest.mark.parametrize(
    "cfg, message",
    [
        ({**TINY_CONFIG, "drop_rte": 0.1}, r"differ: \['drop_rte'\]"),  # an extra, misspelled key
        ({k: v for k, v in TINY_CONFIG.items() if k != "n_layers"}, r"differ: \['n_layers'\]"),
        ({**{k: v for k, v in TINY_CONFIG.items() if k != "n_heads"}, "n_head": 4},
         r"differ: \['n_head', 'n_heads'\]"),
        ({**TINY_CONFIG, "emb_dim": 30}, r"d_out \(30\) must be divisible by num_heads \(4\)"),
    ],
)
def test_bad_config(cfg, message):
    with pytest.raises(ValueError, match=message):
        gpt.GPTModel(cfg)


def test_an_input_up_to_the_context_length_is_accepted_and_a_longer_one_named(tiny_model):
    assert tiny_model(torch.full((2, 16), 50256)).shape == (2, 16, 50257)  # the last id too
    with pytest.raises(ValueError, match=r"17 tokens, but the model's context_length is 16"):
        tiny_model(torch.zeros(1, 17, dtype=torch.long))


@pytest.mark.parametrize(
    "idx, error, message",
    [
        # PyTorch's own messages, which the forward pass leaves alone (appendix, "Token ids")
        (torch.tensor([[1, 50257]]), IndexError, r"index out of range"),
        (torch.tensor([[1.0, 2.0]]), RuntimeError, r"Long, Int; but got torch.FloatTensor"),
        (torch.tensor([1, 2]), ValueError, r"not enough values to unpack"),  # no batch dimension
    ],
)
def test_forward_leaves_id_values_to_pytorch(tiny_model, idx, error, message):
    with pytest.raises(error, match=message):
        tiny_model(idx)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_new_tokens": -1}, ValueError, r"max_new_tokens must be at least 0, got -1"),
        ({"context_size": 0}, ValueError, r"context_size must be at least 1, got 0"),
        ({"idx": torch.tensor([1, 2])}, ValueError, r"shape \(batch, num_tokens\), got \(2,\)"),
        ({"max_new_tokens": 2.0}, TypeError, r"max_new_tokens must be an int, got 2.0"),
        ({"context_size": True}, TypeError, r"context_size must be an int, got True"),
        ({"idx": [[1, 2]]}, TypeError, r"integer token ids, got list"),
        ({"idx": torch.tensor([[1.0, 2.0]])}, TypeError, r"integer token ids, got torch.float32"),
        ({"idx": torch.tensor([[1, 99999]])}, ValueError, r"\[0, 50256\].*from 1 to 99999"),
        ({"idx": torch.tensor([[-1, 2]])}, ValueError, r"from -1 to 2"),
    ],
)
def test_bad_generation_arguments(tiny_model, kwargs, error, message):
    args = {"idx": torch.tensor([[1, 2]]), "max_new_tokens": 2, "context_size": 16, **kwargs}
    with pytest.raises(error, match=message):
        gpt.generate_text_simple(tiny_model, **args)


def test_generation_crops_a_long_context_and_zero_new_tokens_return_the_input(tiny_model):
    idx = torch.randint(0, 1000, (1, 20))  # longer than context_length (16)
    out = gpt.generate_text_simple(tiny_model, idx, max_new_tokens=3, context_size=16)
    assert out.shape == (1, 23) and torch.equal(out[:, :20], idx)
    assert torch.equal(gpt.generate_text_simple(tiny_model, idx, 0, 16), idx)


@pytest.mark.parametrize("text, error, message", [
    ("", ValueError, "text is empty"), ([1, 2], TypeError, "text must be a str")])
def test_a_prompt_must_be_text_with_a_token(tokenizer, text, error, message):
    with pytest.raises(error, match=message):
        gpt.text_to_token_ids(text, tokenizer)


def test_unknown_model_size():
    with pytest.raises(ValueError, match="unknown model 'gpt2-tiny'"):
        gpt.gpt2_config("gpt2-tiny")
