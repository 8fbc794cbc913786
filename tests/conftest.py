"""Fixtures shared by the unit tests (the xdist grouping lives in the root conftest.py).

torch and gpt are imported inside the fixtures: pytest's main process loads this file too
but runs no test under xdist, so it should not pay ~200 MB for importing torch.
"""

import pytest

from tests.helpers import TINY_CONFIG


@pytest.fixture(scope="session")
def tokenizer():
    import gpt

    return gpt.get_tokenizer()


@pytest.fixture(scope="module")
def gpt2_small():
    """GPT-2 small as the book builds it (seed 123), in eval mode; do not modify it.

    Module-scoped: freed after each test module, so it never sits beside the other GPT-2-sized
    models that the "big-models" group builds one after another on the same worker.
    """
    import torch

    import gpt

    torch.manual_seed(123)
    return gpt.GPTModel(gpt.GPT_CONFIG_124M).eval()


@pytest.fixture
def figures():
    """For tests that draw: no display needed, and every figure closed afterwards."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


@pytest.fixture
def tiny_model():
    import torch

    import gpt

    torch.manual_seed(123)
    return gpt.GPTModel(TINY_CONFIG).eval()
