"""Tests for gpt_figures.py: the pictures must show what the code does."""

import inspect
import re
from pathlib import Path

import nbformat
import pytest
import torch
import torch.nn as nn
from matplotlib.colors import to_rgba

import gpt
import gpt_figures
from tests.helpers import SMALL_VOCAB_CONFIG, TINY_CONFIG, TWO_PROMPTS

BATCH = torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]])
NOTEBOOKS = Path(gpt.__file__).parent / "notebooks"

pytestmark = pytest.mark.usefixtures("figures")


@pytest.fixture(scope="module")
def gpt2_small_meta():
    """GPT-2 small without weights: shapes for free."""
    with torch.device("meta"):
        return gpt.GPTModel(gpt.GPT_CONFIG_124M)


def texts(fig):
    return [text.get_text() for text in fig.axes[0].texts]


def colors(fig, gid):
    return [patch.get_facecolor() for patch in fig.axes[0].patches if patch.get_gid() == gid]


def notebook_classes(notebook, *names):
    """The classes `names` as the notebook defines them (the cells that define them, run)."""
    cells = nbformat.read(NOTEBOOKS / notebook, as_version=4).cells
    namespace = {"nn": nn, "torch": torch, "GELU": gpt.GELU}
    for name in names:
        exec(next(cell.source for cell in cells if f"class {name}(" in cell.source), namespace)
    return [namespace[name] for name in names]


def toy_network(layer_sizes, use_shortcut):
    *_, network = notebook_classes("04_shortcut_connections.ipynb", "ExampleDeepNeuralNetwork")
    return network(layer_sizes, use_shortcut)


def dummy_gpt_model(cfg):
    *_, model = notebook_classes("01_gpt_backbone.ipynb", "DummyTransformerBlock",
                                 "DummyGPTModel")
    return model(cfg)


def follow(module, steps, x):
    """Each step's output, computed by following the written path: the submodules it names,
    called in its order, and the additions it names."""
    values = {}
    for step in steps:
        if step.does == "input":
            values[step.name] = x
        elif step.does == "positions":
            values[step.name] = torch.arange(x.shape[-1])
        elif step.does == "+":
            first, second = (values[name] for name in step.reads)
            values[step.name] = first + second
        else:
            value = values[step.reads[0]]
            for call in step.calls:
                value = module.get_submodule(call)(value)
            values[step.name] = value
    return values


def called_in_forward(module, x, names):
    """The submodules among `names` in the order a real forward starts them."""
    order = []
    hooks = [module.get_submodule(name).register_forward_pre_hook(
        lambda *_, name=name: order.append(name)) for name in set(names)]
    module(x)
    for hook in hooks:
        hook.remove()
    return order


PROMPTS = torch.tensor(TWO_PROMPTS)  # ids below 500


@pytest.mark.parametrize("build, x, expand", [
    (lambda: dummy_gpt_model(SMALL_VOCAB_CONFIG), PROMPTS, ()),
    (lambda: gpt.GPTModel(SMALL_VOCAB_CONFIG), PROMPTS, ()),
    (lambda: gpt.GPTModel(SMALL_VOCAB_CONFIG), PROMPTS, ("trf_blocks.0",)),
    (lambda: gpt.GPTModel(SMALL_VOCAB_CONFIG), PROMPTS, ("trf_blocks.1",)),
    (lambda: gpt.TransformerBlock(TINY_CONFIG), torch.rand(2, 4, 32), ()),
    (lambda: gpt.FeedForward(TINY_CONFIG), torch.rand(2, 4, 32), ()),
    (lambda: toy_network([3, 3, 3, 3, 3, 1], use_shortcut=True), torch.rand(1, 3), ()),
    (lambda: toy_network([3, 3, 3, 1, 1, 1], use_shortcut=True), torch.rand(1, 3), ()),
    (lambda: toy_network([3, 3, 3, 3, 3, 1], use_shortcut=False), torch.rand(1, 3), ()),
], ids=["DummyGPTModel", "GPTModel", "block 0 opened", "last block opened", "TransformerBlock",
        "FeedForward", "toy network", "toy network, shapes change", "toy network, no shortcuts"])
def test_each_written_path_computes_what_its_module_computes(build, x, expand):
    torch.manual_seed(123)
    module = build().eval()
    steps = gpt_figures.data_path(module, x, expand)
    with torch.no_grad():
        calls = [call for step in steps for call in step.calls]
        assert called_in_forward(module, x, calls) == calls
        values = follow(module, steps, x)
        assert [step.shape for step in steps] == [list(values[step.name].shape) for step in steps]
        assert torch.equal(values[steps[-1].name], module(x))


def test_block_drawing_has_two_shortcuts_and_leaves_the_random_stream_alone():
    torch.manual_seed(123)
    block = gpt.TransformerBlock(TINY_CONFIG)  # training mode: dropout draws random numbers
    x = torch.rand(2, 4, 32)
    state = torch.get_rng_state()
    fig = gpt_figures.draw_module(block, x, "a block")
    assert torch.equal(torch.get_rng_state(), state)
    assert fig.axes[0].get_title() == "a block"
    assert texts(fig).count("[2, 4, 32]") == 9  # the input and every step
    assert "att: MultiHeadAttention" in texts(fig) and texts(fig).count("+") == 2
    assert fig.axes[0].get_legend() is not None  # shortcuts are drawn, so the legend explains them


def test_a_module_without_a_written_path_or_with_another_forward_is_refused():
    with pytest.raises(ValueError, match="GPTModel, TransformerBlock"):
        gpt_figures.draw_module(nn.Linear(3, 3), torch.rand(1, 3), "no path")

    class TransformerBlock(gpt.TransformerBlock):  # post-LayerNorm: norm1 after the addition
        def forward(self, x):
            x = self.norm1(x + self.drop_shortcut(self.att(x)))
            return self.norm2(x + self.drop_shortcut(self.ff(x)))

    with pytest.raises(RuntimeError, match="'att', 'drop_shortcut', 'norm1'"):
        gpt_figures.draw_module(TransformerBlock(TINY_CONFIG), torch.rand(2, 4, 32), "drifted")


def test_gpt2_small_is_labelled_by_its_submodules_on_the_meta_device(gpt2_small_meta):
    steps = gpt_figures.data_path(gpt2_small_meta, BATCH.to("meta"))
    assert [(step.label, step.shape) for step in steps] == [
        ("in_idx (input)", [2, 4]),
        ("tok_emb: Embedding", [2, 4, 768]),
        ("positions 0..3", [4]),
        ("pos_emb: Embedding", [4, 768]),
        ("+", [2, 4, 768]),
        ("drop_emb: Dropout", [2, 4, 768]),
        ("trf_blocks: 12 × TransformerBlock", [2, 4, 768]),
        ("final_norm: LayerNorm", [2, 4, 768]),
        ("out_head: Linear", [2, 4, 50257]),
    ]
    assert gpt_figures.describe(gpt2_small_meta.trf_blocks[0].ff.layers) == "Linear → GELU → Linear"


def test_an_opened_block_shows_its_steps_and_the_other_blocks_stay_one_box(gpt2_small_meta,
                                                                          tiny_model):
    steps = gpt_figures.data_path(gpt2_small_meta, BATCH.to("meta"), expand=("trf_blocks.0",))
    labels = [step.label for step in steps]
    opened = ["norm1: LayerNorm", "att: MultiHeadAttention", "drop_shortcut: Dropout", "+",
              "norm2: LayerNorm", "ff: FeedForward", "drop_shortcut: Dropout", "+"]
    assert labels[6:14] == opened
    assert [step.scope for step in steps[6:14]] == ["trf_blocks.0"] * 8
    assert labels[14:] == ["trf_blocks.1–11: 11 × TransformerBlock", "final_norm: LayerNorm",
                           "out_head: Linear"]
    assert all(step.shape == [2, 4, 768] for step in steps[6:15])

    fig = gpt_figures.draw_module(gpt2_small_meta, BATCH.to("meta"), "opened",
                                  expand=("trf_blocks.0",))
    assert "trf_blocks.0: TransformerBlock, opened up" in texts(fig)
    assert texts(fig).count("+") == 3
    # Two blocks: the other one is not called a run.
    labels = [step.label for step in gpt_figures.data_path(tiny_model, BATCH, ("trf_blocks.0",))]
    assert "trf_blocks.1: TransformerBlock" in labels
    with pytest.raises(ValueError, match="expand takes blocks of an nn.Sequential"):
        gpt_figures.data_path(tiny_model, BATCH, ("trf_blocks.2",))


def test_toy_network_shows_the_shortcuts_its_run_takes():
    network = toy_network([3, 3, 3, 3, 3, 1], use_shortcut=True)
    steps = gpt_figures.data_path(network, torch.tensor([[1.0, 0.0, -1.0]]))
    # The layers sit in a ModuleList, which has no forward: each layer is a step of its own.
    layers = [step.label for step in steps if step.does == "call"]
    assert layers == [f"layers.{n}: Linear → GELU" for n in range(5)]
    additions = [step.reads for step in steps if step.does == "+"]
    assert additions == [("x", "layers.0"), ("add_0", "layers.1"), ("add_1", "layers.2"),
                         ("add_2", "layers.3")]  # none after the last layer: it changes the width
    assert steps[-1].shape == [1, 1]


def test_generation_loop_shows_each_line_of_generate_text_simple_with_its_shape(tiny_model):
    source = inspect.getsource(gpt.generate_text_simple)
    lines = [line.split("  #")[0].strip() for line in source.splitlines()]
    drawn = [lines.index(line) for line in gpt_figures.GENERATION_LINES]
    assert drawn == sorted(drawn)  # the lines of the function, in its order
    prompt = BATCH[:1]
    steps = gpt_figures.generation_steps(tiny_model, prompt, context_size=16)
    assert [code for code, _ in steps] == list(gpt_figures.GENERATION_LINES)
    assert [shape for _, shape in steps] == [[1, 4], [1, 4, 50257], [1, 50257], [1, 50257],
                                             [1, 1], [1, 5]]
    cropped = gpt_figures.generation_steps(tiny_model, prompt, context_size=3)
    assert [shape for _, shape in cropped[:2]] == [[1, 3], [1, 3, 50257]]

    fig = gpt_figures.draw_generation_loop(tiny_model, prompt, context_size=16)
    assert texts(fig)[:2] == ["idx (input)", "[1, 4]"]
    assert "next step: 5 tokens" in texts(fig)


def test_greedy_candidate_bars_are_the_top_probabilities_and_the_argmax_is_orange(tokenizer):
    torch.manual_seed(123)
    probas = torch.softmax(torch.randn(4, 300), dim=-1)  # 4 steps over a 300-token vocabulary
    chosen = probas.argmax(dim=-1)
    fig = gpt_figures.draw_greedy_candidates(probas, chosen, tokenizer, first_position=7, top_k=3)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 4 and len(fig.axes) == 6  # 2 x 3 grid, the last two panels hidden
    for step, ax in enumerate(panels):
        top = torch.topk(probas[step], 3)
        bars = [patch for patch in ax.patches if patch.get_gid() == "candidate bar"]
        assert [bar.get_width() for bar in bars] == pytest.approx((top.values * 1e4).tolist())
        assert [label.get_text() for label in ax.get_yticklabels()] == [
            repr(tokenizer.decode([i])) for i in top.indices.tolist()]
        assert [to_rgba(bar.get_facecolor()) for bar in bars] == [
            to_rgba("tab:orange")] + [to_rgba("tab:blue")] * 2  # the argmax, then the others
        assert ax.get_title().startswith(f"step {step + 1}, position {7 + step}: ")
        assert ax.lines[0].get_xdata()[0] == pytest.approx(1e4 / 300)  # uniform: 1 / vocab


def test_feedforward_bars_are_as_tall_as_the_feature_counts():
    torch.manual_seed(123)
    fig = gpt_figures.draw_feedforward(gpt.FeedForward(TINY_CONFIG), torch.rand(2, 3, 32))
    bars = [patch for patch in fig.axes[0].patches if patch.get_gid() == "feature bar"]
    heights = [bar.get_height() / bars[0].get_height() for bar in bars]
    assert heights == pytest.approx([1, 4, 4, 1])  # 32 -> 128 -> 128 -> 32
    for text in ("Linear\n32 → 128", "GELU", "Linear\n128 → 32", "input\n[2, 3, 32]",
                 "[2, 3, 128]", "output\n[2, 3, 32]"):
        assert text in texts(fig)


@pytest.mark.parametrize(
    "x, dim, heading, input_groups, results",
    [
        (torch.arange(6.0).reshape(2, 3), 0,
         "x.mean(dim=0, keepdim=True): [2, 3] → [1, 3]    (keepdim=False: [3])",
         [0, 1, 2, 0, 1, 2], ["1.5", "2.5", "3.5"]),
        (torch.arange(12.0).reshape(2, 2, 3), 0,  # x[0][i][j] and x[1][i][j] go together
         "x.mean(dim=0, keepdim=True): [2, 2, 3] → [1, 2, 3]    (keepdim=False: [2, 3])",
         list(range(6)) * 2, ["3", "4", "5", "6", "7", "8"]),
        (torch.arange(12.0).reshape(2, 2, 3), -1,
         "x.mean(dim=-1, keepdim=True): [2, 2, 3] → [2, 2, 1]    (keepdim=False: [2, 2])",
         [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], ["1", "4", "7", "10"]),
    ],
)
def test_reduction_colours_each_result_cell_like_the_cells_it_averages(
    x, dim, heading, input_groups, results
):
    fig = gpt_figures.draw_reductions([x], dims=(dim,))
    assert texts(fig)[0] == heading
    values = [text for text in texts(fig)[1:] if text[0].isdigit()]  # not the matrix names
    assert values[x.numel():] == results
    cells = colors(fig, "cell")
    inputs, outputs = cells[: x.numel()], cells[x.numel():]
    assert len(set(outputs)) == len(outputs) == len(results)  # one colour per result element
    assert inputs == [outputs[group] for group in input_groups]


def test_roadmap_names_each_chapter_notebook_and_what_it_builds():
    notebooks = [path for path in sorted(NOTEBOOKS.glob("0*.ipynb"))  # 4.1 to 4.7, by their titles
                 if nbformat.read(path, as_version=4).cells[0].source.startswith("# 4.")]
    assert len(notebooks) == len(gpt_figures.CHAPTER_STEPS)
    for path, (number, title, builds) in zip(notebooks, gpt_figures.CHAPTER_STEPS):
        cells = nbformat.read(path, as_version=4).cells
        assert cells[0].source.splitlines()[0] == f"# {number} {title}"
        code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
        assert all(re.search(rf"^(class|def) {name}\b", code, re.M) for name in builds), path.name


def test_roadmap_puts_the_attention_notebook_between_4_4_and_4_5():
    keys = [key for key, _, _ in gpt_figures.ROADMAP]
    assert keys == ["4.1", "4.2", "4.3", "4.4", "attention", "4.5", "4.6", "4.7"]
    cells = nbformat.read(NOTEBOOKS / "04a_attention.ipynb", as_version=4).cells  # 04_ < 04a_ < 05_
    assert cells[0].source.startswith(f"# {gpt_figures.ATTENTION_STEP[1]}")
    assert any('draw_roadmap("attention")' in cell.source for cell in cells)


@pytest.mark.parametrize("current, here", [("4.2", 1), ("attention", 4)])
def test_roadmap_highlights_the_current_step_and_greys_the_later_ones(current, here):
    fig = gpt_figures.draw_roadmap(current)
    assert colors(fig, "step") == [to_rgba(gpt_figures.BOX_COLOR)] * here + [
        to_rgba(gpt_figures.HIGHLIGHT_COLOR)] + [to_rgba("0.95")] * (7 - here)
    steps = [patch for patch in fig.axes[0].patches if patch.get_gid() == "step"]
    assert [patch.get_linestyle() == "-" for patch in steps] == [True] * 4 + [False] + [True] * 3
    assert "Layer normalization" in texts(fig) and "LayerNorm" in texts(fig)
    assert "ch. 3, in brief" in texts(fig)
    this = "chapter 3's attention in brief" if current == "attention" else current
    assert fig.axes[0].get_title() == (f"Chapter 4 step by step: this is {this} "
                                       "(under each: what it builds)")


@pytest.fixture
def small_attention():
    torch.manual_seed(123)
    return gpt.MultiHeadAttention(d_in=24, d_out=24, context_length=8, dropout=0.0, num_heads=4)


def test_the_pictured_head_split_and_merge_are_the_ones_multi_head_attention_uses(
        small_attention):
    attention, x = small_attention, torch.rand(2, 3, 24)
    split_steps = gpt_figures.head_split_steps(attention, x)
    assert [(call, list(t.shape)) for call, t in split_steps] == [
        ("W_query(x)", [2, 3, 24]), ("view(2, 3, 4, 6)", [2, 3, 4, 6]),
        ("transpose(1, 2)", [2, 4, 3, 6])]
    merge_steps = gpt_figures.head_merge_steps(attention, x)
    assert [(call, list(t.shape)) for call, t in merge_steps] == [
        ("attn_weights @ values", [2, 4, 3, 6]), ("transpose(1, 2)", [2, 3, 4, 6]),
        ("contiguous()", [2, 3, 4, 6]), ("view(2, 3, 24)", [2, 3, 24])]
    split = split_steps[-1][1]  # where each entry of W_query(x) goes
    merge = merge_steps[-1][1]  # where each entry of attn_weights @ values goes
    assert torch.equal(split.flatten()[merge], split_steps[0][1])  # the merge undoes the split

    with torch.no_grad():  # attention computed the pictures' way
        queries, keys, values = (projection(x).flatten()[split] for projection in
                                 (attention.W_query, attention.W_key, attention.W_value))
        scores = (queries @ keys.transpose(2, 3)).masked_fill(attention.mask[:3, :3], -torch.inf)
        context = torch.softmax(scores / 6**0.5, dim=-1) @ values
        by_picture = attention.out_proj(context.flatten()[merge])
        torch.testing.assert_close(by_picture, attention(x), rtol=0, atol=1e-6)
    with pytest.raises(RuntimeError):  # the merge's note: without .contiguous(), view refuses
        merge_steps[1][1].view(2, 3, 24)


def test_head_split_picture_shows_each_head_as_a_row_of_tokens(small_attention):
    fig = gpt_figures.draw_head_split(small_attention, torch.rand(2, 3, 24))
    assert ".transpose(1, 2): [2, 4, 3, 6]    rows: heads" in texts(fig)
    assert ".view(2, 3, 4, 6): [2, 3, 4, 6]    rows: tokens" in texts(fig)
    # The last step's rows, one per head: its colour, and its block of tokens 0, 1, 2.
    assert colors(fig, "head cell")[-12:] == [to_rgba(gpt_figures.HEAD_COLORS[h])
                                               for h in range(4) for _ in range(3)]
    cells = [text for text in texts(fig) if "·" in text]
    assert cells[-12:] == [f"t{t}·h{h}" for h in range(4) for t in range(3)]
    assert {f"head {h}" for h in range(4)} <= set(texts(fig))


def test_head_merge_picture_shows_the_memory_order_before_and_after_contiguous(small_attention):
    fig = gpt_figures.draw_head_merge(small_attention, torch.rand(2, 3, 24))
    for heading in ("attn_weights @ values: [2, 4, 3, 6]    rows: heads",
                    ".transpose(1, 2): [2, 3, 4, 6]    rows: tokens",
                    ".view(2, 3, 24): [2, 3, 24]    rows: tokens"):
        assert heading in texts(fig)
    cells = [text for text in texts(fig) if "·" in text]
    assert cells[:12] == [f"t{t}·h{h}" for h in range(4) for t in range(3)]  # a row per head
    assert cells[-12:] == [f"t{t}·h{h}" for t in range(3) for h in range(4)]  # a row per token
    # In memory: head after head after the transpose, token after token after .contiguous().
    head = [to_rgba(color) for color in gpt_figures.HEAD_COLORS[:4]]
    assert colors(fig, "memory cell") == ([head[h] for h in range(4) for _ in range(3)]
                                          + [head[h] for _ in range(3) for h in range(4)])
    assert ["is_contiguous(): False", "is_contiguous(): True"] == [
        text for text in texts(fig) if text.startswith("is_contiguous")]


def test_token_boxes_show_each_token_and_the_bytes_of_a_split_character(tokenizer):
    fig = gpt_figures.draw_tokens(tokenizer, ["Every effort", "Ł"], "tokens")
    # "Ł" is two bytes in UTF-8, and GPT-2's tokenizer gives each byte a token of its own.
    assert texts(fig) == ["Every", "6109", "\u2423effort", "3626", "'Every effort'",
                          "0xc5", "129", "0x81", "223", "'Ł'"]
