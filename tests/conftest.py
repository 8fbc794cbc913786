"""Shared fixtures, and how pytest-xdist splits the suite over two workers.

Every test file and notebook runs whole on one worker (a notebook's cells share a kernel).
Work that materializes a GPT-2-sized model (~650 MB each in float32) joins one group, so
those models are built one after another rather than side by side: that keeps the suite's
peak memory down on a small machine.
"""

import pytest
import torch

import gpt

BIG_MODELS = "big-models"

# Notebooks that build a GPT-2-sized model with real weights.
BIG_NOTEBOOKS = {
    "06_gpt_model.ipynb",
    "07_generating_text.ipynb",
}

TINY_CONFIG = {
    "vocab_size": 50257,  # the real vocabulary, so the tokenizer's ids stay valid
    "context_length": 16,
    "emb_dim": 32,
    "n_heads": 4,
    "n_layers": 2,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


@pytest.fixture(scope="session")
def tokenizer():
    return gpt.get_tokenizer()


@pytest.fixture(scope="module")
def gpt2_small():
    """GPT-2 small as the book builds it (seed 123), in eval mode; freed after each module."""
    torch.manual_seed(123)
    return gpt.GPTModel(gpt.GPT_CONFIG_124M).eval()


@pytest.fixture
def tiny_model():
    torch.manual_seed(123)
    return gpt.GPTModel(TINY_CONFIG).eval()


@pytest.hookimpl(tryfirst=True)  # before xdist turns xdist_group marks into node ids
def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        big = "gpt2_small" in getattr(item, "fixturenames", ()) or item.path.name in BIG_NOTEBOOKS
        item.add_marker(pytest.mark.xdist_group(BIG_MODELS if big else str(item.path)))
