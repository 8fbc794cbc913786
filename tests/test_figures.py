"""Tests for gpt_figures.py: the diagrams must show what the code does."""

import matplotlib

matplotlib.use("Agg")  # draw without a display

import matplotlib.pyplot as plt
import pytest
import torch

import gpt
import gpt_figures
from tests.helpers import TINY_CONFIG

BATCH = torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_block_has_two_shortcuts_from_its_input_and_its_midpoint():
    torch.manual_seed(123)
    steps = gpt_figures.trace_steps(gpt.TransformerBlock(TINY_CONFIG), torch.rand(2, 4, 32))
    additions = [step.inputs for step in steps if step.label == "+"]
    # x + drop(att(norm1(x))), then that sum + drop(ff(norm2(sum))).
    assert additions == [["x", "drop_shortcut"], ["add", "drop_shortcut_1"]]
    modules = ["x", "norm1", "att", "drop_shortcut", "norm2", "ff", "drop_shortcut_1"]
    assert [step.name for step in steps if step.label != "+"] == modules


def test_model_steps_carry_the_shapes_of_a_real_forward_pass(tiny_model):
    steps = gpt_figures.trace_steps(tiny_model, BATCH)
    shapes = {step.name: step.shape for step in steps}
    assert shapes == {
        "in_idx": [2, 4],
        "tok_emb": [2, 4, 32],
        "pos_emb": [4, 32],
        "add": [2, 4, 32],
        "drop_emb": [2, 4, 32],
        "trf_blocks": [2, 4, 32],
        "final_norm": [2, 4, 32],
        "out_head": [2, 4, 50257],
    }
    # The positions come from the input's length: both embeddings read the token ids.
    inputs = {step.name: step.inputs for step in steps}
    assert inputs["pos_emb"] == inputs["tok_emb"] == ["in_idx"]
    assert inputs["add"] == ["tok_emb", "pos_emb"]


def test_every_label_names_a_real_submodule_and_its_class(tiny_model):
    for step in gpt_figures.trace_steps(tiny_model, BATCH)[1:]:
        if step.label != "+":
            submodule = tiny_model.get_submodule(step.name)
            assert step.label == f"{step.name}: {gpt_figures.describe(submodule)}"
    assert gpt_figures.describe(tiny_model.trf_blocks) == "2 × TransformerBlock"
    assert gpt_figures.describe(tiny_model.trf_blocks[0].ff.layers) == "Linear → GELU → Linear"


def test_drawing_shows_titles_shapes_and_leaves_the_random_stream_alone():
    torch.manual_seed(123)
    block = gpt.TransformerBlock(TINY_CONFIG)  # training mode: dropout draws random numbers
    x = torch.rand(2, 4, 32)
    state = torch.get_rng_state()
    fig = gpt_figures.draw_module(block, x, "a block")
    assert torch.equal(torch.get_rng_state(), state)

    (ax,) = fig.axes
    texts = [text.get_text() for text in ax.texts]
    assert ax.get_title() == "a block"
    assert texts.count("[2, 4, 32]") == 9  # the input and every step
    assert "att: MultiHeadAttention" in texts
    assert ax.get_legend() is not None  # shortcuts are drawn, so the legend explains them


def test_token_boxes_show_each_token_and_the_bytes_of_a_split_character(tokenizer):
    fig = gpt_figures.draw_tokens(tokenizer, ["Every effort", "Ł"], "tokens")
    texts = [text.get_text() for text in fig.axes[0].texts]
    # "Ł" is two bytes in UTF-8, and GPT-2's tokenizer gives each byte a token of its own.
    assert texts == ["Every", "6109", "\u2423effort", "3626", "'Every effort'",
                     "0xc5", "129", "0x81", "223", "'Ł'"]
