"""Bad input gets a clear TypeError/ValueError that names the problem, raised up front."""

import pytest
import torch

import gpt
from tests.helpers import TINY_CONFIG


def config(**changes):
    return {**TINY_CONFIG, **changes}


@pytest.mark.parametrize(
    "cfg, error, message",
    [
        (config(emb_dim=30, n_heads=4), ValueError, r"emb_dim \(30\) must be divisible by n_heads \(4\)"),
        ({k: v for k, v in TINY_CONFIG.items() if k != "n_layers"}, ValueError, r"missing key.*n_layers"),
        (config(drop_rte=0.1), ValueError, r"unknown key.*drop_rte"),
        (config(drop_rate=-0.1), ValueError, r"drop_rate.*between 0 and 1"),
        (config(drop_rate=1.5), ValueError, r"drop_rate.*between 0 and 1"),
        (config(drop_rate="0.1"), TypeError, r"drop_rate.*number"),
        (config(n_layers=0), ValueError, r"n_layers.*positive"),
        (config(emb_dim=32.0), TypeError, r"emb_dim.*int"),
        (config(qkv_bias="no"), TypeError, r"qkv_bias.*True or False"),
        ([("emb_dim", 32)], TypeError, r"config must be a dict"),
    ],
)
def test_bad_config(cfg, error, message):
    with pytest.raises(error, match=message):
        gpt.GPTModel(cfg)


def test_attention_heads_must_divide_width():
    with pytest.raises(ValueError, match=r"d_out \(10\) must be divisible by num_heads \(3\)"):
        gpt.MultiHeadAttention(10, 10, context_length=8, dropout=0.0, num_heads=3)


@pytest.mark.parametrize(
    "idx, error, message",
    [
        (torch.zeros(1, 17, dtype=torch.long), ValueError, r"17 tokens.*context_length is 16"),
        (torch.tensor([[1, 50257]]), ValueError, r"token id 50257 is outside the vocabulary"),
        (torch.tensor([[1, -1]]), ValueError, r"token id -1 is outside the vocabulary"),
        (torch.tensor([[1.0, 2.0]]), TypeError, r"must be integers.*float"),
        (torch.tensor([1, 2, 3]), ValueError, r"shape \[batch, num_tokens\].*\[3\]"),
        (torch.zeros(1, 2, 3, dtype=torch.long), ValueError, r"shape \[batch, num_tokens\]"),
        (torch.zeros(1, 0, dtype=torch.long), ValueError, r"empty"),
        ([[1, 2, 3]], TypeError, r"torch.Tensor"),
    ],
)
def test_bad_token_ids(tiny_model, idx, error, message):
    with pytest.raises(error, match=message):
        tiny_model(idx)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_new_tokens": -1}, ValueError, r"max_new_tokens must be >= 0"),
        ({"max_new_tokens": 2.0}, TypeError, r"max_new_tokens must be an int"),
        ({"context_size": 0}, ValueError, r"context_size must be a positive int"),
        ({"idx": torch.tensor([1, 2])}, ValueError, r"\[batch, num_tokens\]"),
        ({"idx": torch.tensor([[1, 99999]])}, ValueError, r"token id 99999"),
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
