"""Bad input gets a clear ValueError that names the problem, raised up front; a wrong type gets
Python's or PyTorch's TypeError, never a silent wrong answer."""

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
        ({**TINY_CONFIG, "drop_rate": 1.5}, r"dropout probability has to be between 0 and 1"),
    ],
)
def test_bad_config(cfg, message):
    with pytest.raises(ValueError, match=message):
        gpt.GPTModel(cfg)


@pytest.mark.parametrize(
    "idx, message",
    [
        (torch.zeros(1, 17, dtype=torch.long), r"shape \(1, 17\): need .* at most 16 tokens; 0 out"),
        (torch.tensor([1, 2]), r"shape \(2,\): need \(batch, tokens\)"),  # no batch dimension
        (torch.zeros(1, 1, 2, dtype=torch.long), r"shape \(1, 1, 2\): need \(batch, tokens\)"),
        (torch.tensor([[1, 50257]]), r"1 outside the vocabulary \[0, 50256\]"),
        (torch.tensor([[-1, -2, 3]]), r"2 outside the vocabulary"),
    ],
)
def test_bad_token_ids(tiny_model, idx, message):
    with pytest.raises(ValueError, match=message):
        tiny_model(idx)


def test_the_longest_input_and_the_last_id_are_accepted(tiny_model):
    assert tiny_model(torch.full((2, 16), 50256)).shape == (2, 16, 50257)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_new_tokens": -1}, ValueError, r"max_new_tokens >= 0.*got \(1, 2\), -1 and 16"),
        ({"context_size": 0}, ValueError, r"context_size >= 1; got \(1, 2\), 2 and 0"),
        ({"idx": torch.tensor([1, 2])}, ValueError, r"shape \(batch, tokens\).*got \(2,\), 2"),
        ({"max_new_tokens": 2.0}, TypeError, r"'float' object cannot be interpreted as an integer"),
        ({"context_size": 4.0}, TypeError, r"slice indices must be integers"),
        ({"idx": [[1, 2]]}, TypeError, r"idx must be a tensor of token ids, got list"),
        ({"idx": torch.tensor([[1, 99999]])}, ValueError, r"1 outside the vocabulary"),
    ],
)
def test_bad_generation_arguments(tiny_model, kwargs, error, message):
    args = {"idx": torch.tensor([[1, 2]]), "max_new_tokens": 2, "context_size": 16, **kwargs}
    with pytest.raises(error, match=message):
        gpt.generate_text_simple(tiny_model, **args)


def test_generation_crops_a_long_context_instead_of_failing(tiny_model):
    idx = torch.randint(0, 1000, (1, 20))  # longer than context_length (16)
    out = gpt.generate_text_simple(tiny_model, idx, max_new_tokens=3, context_size=16)
    assert out.shape == (1, 23) and torch.equal(out[:, :20], idx)


def test_zero_new_tokens_returns_the_input(tiny_model):
    idx = torch.tensor([[5, 6, 7]])
    assert torch.equal(gpt.generate_text_simple(tiny_model, idx, 0, 16), idx)


def test_empty_prompt(tokenizer):
    with pytest.raises(ValueError, match="text is empty"):
        gpt.text_to_token_ids("", tokenizer)


def test_prompt_must_be_text(tokenizer):
    with pytest.raises(TypeError, match="text must be a str"):
        gpt.text_to_token_ids([1, 2], tokenizer)


def test_unknown_model_size():
    with pytest.raises(ValueError, match="unknown model 'gpt2-tiny'"):
        gpt.gpt2_config("gpt2-tiny")
