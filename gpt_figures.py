"""Pictures for the course notebooks, drawn by code so they cannot drift from the model.

Not part of the chapter: the notebooks call these functions to draw diagrams and plots, so a
learner reads one line instead of the drawing code. `pip install -e .` makes it importable.
"""

import operator
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
import torch.fx as fx
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
from matplotlib.path import Path

import gpt

ADDITIONS = (operator.add, torch.add)


@dataclass
class Step:
    """One step of a forward pass: the input, a submodule call or an addition."""

    name: str  # the submodule's path ("norm1", "layers.0"), "add", "add_1", ... or the input's
    label: str  # the text of the step's box, e.g. "norm1: LayerNorm"
    shape: list  # the shape of the step's output
    inputs: list  # names of the steps whose outputs it reads


class _SubmodulesAsLeaves(fx.Tracer):
    """Records each submodule that `forward` calls as one step, without looking inside it."""

    def is_leaf_module(self, module, qualified_name):
        return True


class _ShapeRecorder(fx.Interpreter):
    """Runs a traced graph on real tensors and notes the shape of every tensor result."""

    def run_node(self, node):
        result = super().run_node(node)
        if isinstance(result, torch.Tensor):
            node.meta["shape"] = list(result.shape)
        return result


def describe(module):
    """A submodule's class; for a Sequential, what it chains (e.g. "12 × TransformerBlock")."""
    if not isinstance(module, torch.nn.Sequential):
        return type(module).__name__
    kinds = [type(child).__name__ for child in module]
    if len(set(kinds)) == 1:
        return f"{len(kinds)} × {kinds[0]}"
    return " → ".join(kinds)


def trace_steps(module, example_input):
    """The data path of `module.forward`, one level deep, with each step's output shape.

    torch.fx records the operations of `forward` as a graph; running `example_input` through
    that graph gives every shape. Only the input, submodule calls and additions are kept:
    bookkeeping such as shape lookups, torch.arange or input checks is skipped, and a step's
    inputs are the nearest kept steps upstream of it.
    """
    # GPTModel's input check branches on the ids' values, which tracing cannot follow: it is
    # recorded as one call instead.
    graph = _SubmodulesAsLeaves(autowrap_functions=(gpt.check_token_ids,)).trace(module)
    # Dropout draws random numbers even here: a drawing must not shift the caller's next ones.
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        _ShapeRecorder(fx.GraphModule(module, graph)).run(example_input)
    steps, sources = [], {}  # sources: fx node -> names of the kept steps it derives from
    for node in graph.nodes:
        inputs = list(dict.fromkeys(name for arg in node.all_input_nodes for name in sources[arg]))
        if node.op == "placeholder":
            label = f"{node.name} (input)"
        elif node.op == "call_module":
            label = f"{node.target}: {describe(module.get_submodule(node.target))}"
        elif node.op == "call_function" and node.target in ADDITIONS:
            label = "+"
        else:
            sources[node] = inputs
            continue
        steps.append(Step(node.name, label, node.meta["shape"], inputs))
        sources[node] = [node.name]
    return steps


# Diagram layout, in inches: one row per depth, boxes centred on one column (moved left to
# make room for shortcuts on its right).
ROW, BOX_H, RADIUS, SPAN, WIDTH = 0.62, 0.44, 0.15, 3.3, 5.0
PATH_COLOR, SHORTCUT_COLOR, SHAPE_COLOR, BOX_COLOR = "0.3", "tab:orange", "0.35", "#dbe9f6"


def draw_box(ax, x, y, half_width, label, shape, color=BOX_COLOR):
    """A rounded box centred at (x, y): a label above a shape, e.g. "[2, 4, 768]"."""
    corner = (x - half_width, y - BOX_H / 2)
    style = "round,pad=0,rounding_size=0.06"
    ax.add_patch(
        FancyBboxPatch(
            corner, 2 * half_width, BOX_H, boxstyle=style, facecolor=color, edgecolor=PATH_COLOR
        )
    )
    ax.text(x, y + 0.08, label, ha="center", va="center", fontsize=9)
    ax.text(x, y - 0.11, shape, ha="center", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_adder(ax, x, y, shape):
    """A circled "+" centred at (x, y), with the shape of the sum on its left."""
    ax.add_patch(Circle((x, y), RADIUS, facecolor="white", edgecolor=PATH_COLOR))
    ax.text(x, y, "+", ha="center", va="center", fontsize=12)
    ax.text(x - RADIUS - 0.1, y, shape, ha="right", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_arrow(ax, points, color=PATH_COLOR, linewidth=1.0):
    """An arrow along the straight segments joining `points`."""
    arrow = FancyArrowPatch(
        path=Path(points), arrowstyle="-|>", mutation_scale=10, color=color, linewidth=linewidth
    )
    ax.add_patch(arrow)


def draw_module(module, example_input, title):
    """Draw `module`'s data path top to bottom, each step with the shape of its output.

    Steps at the same depth sit side by side; a connection that skips rows (a shortcut) runs
    down the right-hand side. Returns the figure; end the cell with `plt.show()`.
    """
    steps = trace_steps(module, example_input)
    depth = {}
    for step in steps:  # one row below the deepest step it reads from
        depth[step.name] = 1 + max((depth[name] for name in step.inputs), default=-1)
    edges = [(source, step.name) for step in steps for source in step.inputs]
    shortcuts = [(a, b) for a, b in edges if depth[b] - depth[a] > 1]
    n_rows = max(depth.values()) + 1
    legend_h = 0.45 if shortcuts else 0.0
    axes_h = n_rows * ROW + legend_h
    fig = plt.figure(figsize=(WIDTH, axes_h + 0.45))  # 0.45 inch for the title
    ax = fig.add_axes((0, 0, 1, axes_h / (axes_h + 0.45)))
    ax.set(xlim=(0, WIDTH), ylim=(ROW / 2 - axes_h, ROW / 2))  # 1 unit = 1 inch
    ax.set_title(title)
    ax.set_axis_off()

    center = 2.15 if shortcuts else WIDTH / 2
    place = {}  # step name -> (x, y, half width, half height)
    for row in range(n_rows):
        names = [step.name for step in steps if depth[step.name] == row]
        slot = SPAN / len(names)
        for i, name in enumerate(names):
            x = center - SPAN / 2 + slot * (i + 0.5)
            place[name] = (x, -row * ROW, slot / 2 - 0.06, BOX_H / 2)
    for step in steps:
        x, y, half_w, _ = place[step.name]
        if step.label == "+":
            place[step.name] = (x, y, RADIUS, RADIUS)
            draw_adder(ax, x, y, str(step.shape))
        else:
            color = "0.92" if step is steps[0] else BOX_COLOR  # the input in grey
            draw_box(ax, x, y, half_w, step.label, str(step.shape), color)

    for source, target in edges:
        sx, sy, _, s_half_h = place[source]
        x, y, half_w, half_h = place[target]
        if (source, target) not in shortcuts:
            draw_arrow(ax, [(sx, sy - s_half_h), (x, y + half_h)])
            continue
        # Branch off the arrow leaving `source`, run down the right, enter `target` sideways.
        branch = (sx, sy - s_half_h - 0.1)
        lane = center + SPAN / 2 + 0.3
        draw_arrow(ax, [branch, (lane, branch[1]), (lane, y), (x + half_w, y)], SHORTCUT_COLOR, 1.6)
        ax.plot(*branch, "o", color=SHORTCUT_COLOR, markersize=4)
    if shortcuts:
        handles = [Line2D([], [], color=PATH_COLOR), Line2D([], [], color=SHORTCUT_COLOR, lw=1.6)]
        labels = ["data path", "shortcut: input added back"]
        ax.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    return fig


def draw_generation_loop(num_tokens, context_size, vocab_size):
    """Draw one step of greedy generation (`gpt.generate_text_simple`) and its loop back.

    The shapes are those of a batch of one holding `num_tokens` tokens. Returns the figure;
    end the cell with `plt.show()`.
    """
    seen = min(num_tokens, context_size)  # what the model sees after cropping
    steps = [
        ("token ids (input)", [1, num_tokens]),
        (f"crop: idx[:, -{context_size}:]", [1, seen]),
        ("model: GPTModel → logits", [1, seen, vocab_size]),
        ("last position: logits[:, -1, :]", [1, vocab_size]),
        ("softmax → probabilities", [1, vocab_size]),
        ("argmax → next token id", [1, 1]),
        ("append: torch.cat((idx, next_id), dim=1)", [1, num_tokens + 1]),
    ]
    axes_h = len(steps) * ROW + 0.45  # + the legend
    fig = plt.figure(figsize=(WIDTH, axes_h + 0.45))  # 0.45 inch for the title
    ax = fig.add_axes((0, 0, 1, axes_h / (axes_h + 0.45)))
    ax.set(xlim=(0, WIDTH), ylim=(ROW / 2 - axes_h, ROW / 2))  # 1 unit = 1 inch
    ax.set_title("One step of generate_text_simple")
    ax.set_axis_off()

    x, half_w = 2.15, SPAN / 2
    for row, (label, shape) in enumerate(steps):
        draw_box(ax, x, -row * ROW, half_w, label, str(shape), "0.92" if row == 0 else BOX_COLOR)
        if row:
            draw_arrow(ax, [(x, BOX_H / 2 - (row - 1) * ROW - BOX_H), (x, BOX_H / 2 - row * ROW)])
    # The loop: the longer sequence goes back in as the next step's input.
    bottom, lane = -(len(steps) - 1) * ROW, x + half_w + 0.35
    loop = [(x + half_w, bottom), (lane, bottom), (lane, 0), (x + half_w, 0)]
    draw_arrow(ax, loop, SHORTCUT_COLOR, 1.6)
    ax.text(lane + 0.12, bottom / 2, f"next step: {num_tokens + 1} tokens", rotation=90,
            ha="left", va="center", fontsize=8, color=SHORTCUT_COLOR)
    handles = [Line2D([], [], color=PATH_COLOR), Line2D([], [], color=SHORTCUT_COLOR, lw=1.6)]
    labels = ["one step", "loop: repeated max_new_tokens times"]
    ax.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    return fig


def draw_tokens(tokenizer, texts, title):
    """Each text as a row of boxes, one per token: the token's text above its id.

    A token that is only part of a character cannot be shown as text; its box shows its byte
    in hex instead.
    """
    fig, ax = plt.subplots()
    right = 0.0
    for row, text in enumerate(texts):
        x = 0.0
        for token_id in tokenizer.encode(text):
            raw = tokenizer.decode_single_token_bytes(token_id)
            try:
                piece = repr(raw.decode("utf-8"))[1:-1].replace(" ", "\u2423")  # show spaces
            except UnicodeDecodeError:
                piece = " ".join(f"0x{byte:02x}" for byte in raw)
            width = 0.12 * max(len(piece), len(str(token_id))) + 0.3
            draw_box(ax, x + width / 2, -row, width / 2, piece, str(token_id))
            x += width + 0.1
        right = max(right, x)
        ax.text(-0.15, -row, repr(text), ha="right", va="center", fontsize=9)
    left = -0.1 * max(len(repr(text)) for text in texts) - 0.3
    ax.set(title=title, xlim=(left, right), ylim=(-len(texts) + 0.5, 0.6))
    ax.axis("off")
    fig.set_size_inches(0.75 * (right - left), 0.9 * len(texts) + 0.5)
    return fig
