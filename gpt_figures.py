"""Pictures for the course notebooks, drawn from the code they show.

Not part of the chapter: the notebooks call these functions to draw diagrams and plots, so a
learner reads one line instead of the drawing code. `pip install -e .` makes it importable.
The data paths of the modules (DATA_PATHS), the roadmap and the lines of the generation loop are
written down here; the shapes come from running an example through the module once (forward
hooks record them) or one step of the loop. tests/chapter/test_figures.py checks what is written
against the notebooks and gpt.py: followed step by step, a data path must compute exactly what
its module computes.
Each draw_* function returns its figure; a notebook cell ends with `plt.show()`.
"""

import textwrap
from dataclasses import dataclass
from itertools import groupby

import matplotlib.pyplot as plt
import torch
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Polygon, Rectangle
from matplotlib.path import Path as ArrowPath

# ---- Drawing primitives. Every canvas measures in inches: 1 data unit = 1 inch, y = 0 at the top.

ROW, BOX_H, RADIUS, TITLE_H = 0.62, 0.44, 0.15, 0.45
PATH_COLOR, SHORTCUT_COLOR, SHAPE_COLOR = "0.3", "tab:orange", "0.35"
BOX_COLOR, INPUT_COLOR, HIGHLIGHT_COLOR = "#dbe9f6", "0.92", "#fdd9b5"
ROUNDED = "round,pad=0,rounding_size=0.06"  # the corners of every box


def canvas(width, height, title):
    """A figure whose drawing area is `width` x `height` inches, with `title` above it."""
    fig, ax = plt.subplots(figsize=(width, height + TITLE_H))
    fig.subplots_adjust(left=0, right=1, bottom=0, top=height / (height + TITLE_H))
    ax.set(xlim=(0, width), ylim=(-height, 0))
    ax.set_title(title)
    ax.set_axis_off()
    return fig, ax


def add_legend(ax, entries):
    """A one-line legend under the drawing; `entries` are (label, color, line width)."""
    handles = [Line2D([], [], color=color, lw=width, label=label) for label, color, width in entries]
    ax.legend(handles=handles, loc="lower center", ncol=len(entries), fontsize=8, frameon=False)


def draw_box(ax, x, y, half_width, label, shape, color=BOX_COLOR, fontsize=9, **label_style):
    """A rounded box centred at (x, y): a label above a shape, e.g. "[2, 4, 768]"."""
    ax.add_patch(FancyBboxPatch((x - half_width, y - BOX_H / 2), 2 * half_width, BOX_H,
                                boxstyle=ROUNDED, facecolor=color, edgecolor=PATH_COLOR))
    ax.text(x, y + 0.08, label, ha="center", va="center", fontsize=fontsize, **label_style)
    ax.text(x, y - 0.11, shape, ha="center", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_adder(ax, x, y, shape):
    """A circled "+" centred at (x, y), with the shape of the sum on its left."""
    ax.add_patch(Circle((x, y), RADIUS, facecolor="white", edgecolor=PATH_COLOR))
    ax.text(x, y, "+", ha="center", va="center", fontsize=12)
    ax.text(x - RADIUS - 0.1, y, shape, ha="right", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_arrow(ax, points, color=PATH_COLOR, linewidth=1.0):
    """An arrow along the straight segments joining `points`."""
    ax.add_patch(FancyArrowPatch(path=ArrowPath(points), arrowstyle="-|>", mutation_scale=10,
                                 color=color, linewidth=linewidth))


# ---- Data paths: written down per class, with the shapes of one real run.
#
# A data path is a table, one row per step of forward, in order: (name, what the step does, the
# steps it reads). What a step does: "input" (forward's argument), "positions" (forward's
# torch.arange over the input's length), "+" (adds the steps it reads) or the name of the
# submodule it calls. tests/chapter/test_figures.py follows each table step by step and checks
# that it computes exactly what the module computes.

GPT_MODEL_PATH = (
    ("in_idx", "input", ()),
    ("tok_emb", "tok_emb", ("in_idx",)),
    ("positions", "positions", ()),  # reads only the input's length
    ("pos_emb", "pos_emb", ("positions",)),
    ("add", "+", ("tok_emb", "pos_emb")),
    ("drop_emb", "drop_emb", ("add",)),
    ("trf_blocks", "trf_blocks", ("drop_emb",)),
    ("final_norm", "final_norm", ("trf_blocks",)),
    ("out_head", "out_head", ("final_norm",)),
)

TRANSFORMER_BLOCK_PATH = (
    ("x", "input", ()),
    ("norm1", "norm1", ("x",)),
    ("att", "att", ("norm1",)),
    ("drop_shortcut", "drop_shortcut", ("att",)),
    ("add", "+", ("drop_shortcut", "x")),  # x = x + shortcut
    ("norm2", "norm2", ("add",)),
    ("ff", "ff", ("norm2",)),
    ("drop_shortcut_1", "drop_shortcut", ("ff",)),  # the second call of drop_shortcut
    ("add_1", "+", ("drop_shortcut_1", "add")),
)

FEED_FORWARD_PATH = (  # self.layers(x): the Sequential calls its three layers in turn
    ("x", "input", ()),
    ("layers.0", "layers.0", ("x",)),
    ("layers.1", "layers.1", ("layers.0",)),
    ("layers.2", "layers.2", ("layers.1",)),
)


def shortcut_network_path(network, calls):
    """The path of notebook 4.4's ExampleDeepNeuralNetwork, which depends on the instance: its
    layers in turn, each followed by a "+" that adds the layer's input back where use_shortcut
    is on and the layer keeps the shape (as forward decides; `calls` holds the shapes)."""
    shapes = {name: (shape_in, shape_out) for name, shape_in, shape_out in calls}
    path, x = [("x", "input", ())], "x"
    for i in range(len(network.layers)):
        layer = f"layers.{i}"
        path.append((layer, layer, (x,)))
        shape_in, shape_out = shapes[layer]
        if network.use_shortcut and shape_in == shape_out:
            path.append((f"add_{i}", "+", (x, layer)))  # x = x + layer_output
            x = f"add_{i}"
        else:
            x = layer
    return path


# By class name, because the notebooks define their own classes (DummyGPTModel has the forward
# of GPTModel).
DATA_PATHS = {
    "DummyGPTModel": GPT_MODEL_PATH,
    "GPTModel": GPT_MODEL_PATH,
    "TransformerBlock": TRANSFORMER_BLOCK_PATH,
    "FeedForward": FEED_FORWARD_PATH,
    "ExampleDeepNeuralNetwork": shortcut_network_path,
}


@dataclass
class Step:
    """One step of a data path, ready to draw."""

    name: str  # unique in the path, e.g. "norm1", "add_1", "trf_blocks.0.norm1"
    does: str  # "input", "positions", "+" or "call"
    reads: tuple  # the names of the steps whose outputs it reads
    label: str  # the text of its box, e.g. "norm1: LayerNorm"
    calls: tuple = ()  # the submodules it calls in turn, e.g. ("trf_blocks.0.norm1",)
    scope: str = ""  # the opened-up block it is part of, e.g. "trf_blocks.0", or ""
    shape: list = None  # the shape of its output


def describe(module):
    """A submodule's class; for a Sequential, what it chains (e.g. "12 × TransformerBlock")."""
    if not isinstance(module, torch.nn.Sequential):
        return type(module).__name__
    kinds = [type(child).__name__ for child in module]
    return f"{len(kinds)} × {kinds[0]}" if len(set(kinds)) == 1 else " → ".join(kinds)


def record_calls(module, example_input):
    """Run `example_input` through `module` once; return each call of a submodule, in the order
    the calls returned, as (name, input shape, output shape), e.g. ("norm1", [2, 4, 768],
    [2, 4, 768])."""
    calls = []

    def record(name):
        return lambda _, args, out: calls.append((name, list(args[0].shape), list(out.shape)))

    hooks = [sub.register_forward_hook(record(name)) for name, sub in module.named_modules() if name]
    try:
        # Dropout draws random numbers even here: a drawing must not shift the caller's next ones.
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            module(example_input)
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def written_steps(module, calls, prefix=""):
    """`module`'s written data path as Steps, their names prefixed by `prefix` (e.g.
    "trf_blocks.0." inside an opened-up block); `calls` is what record_calls gives for it."""
    kind = type(module).__name__
    if kind not in DATA_PATHS:
        raise ValueError(f"gpt_figures has no data path written down for {kind}; it draws "
                         f"{', '.join(DATA_PATHS)}")
    path = DATA_PATHS[kind]
    if callable(path):  # a path that depends on the instance
        path = path(module, calls)
    steps = []
    for name, does, reads in path:
        reads = tuple(prefix + read for read in reads)
        if does == "input":
            steps.append(Step(prefix + name, does, reads, f"{name} (input)"))
        elif does in ("positions", "+"):  # the positions' label waits for their number
            steps.append(Step(prefix + name, does, reads, does))
        else:
            label = f"{does}: {describe(module.get_submodule(does))}"
            steps.append(Step(prefix + name, "call", reads, label, (prefix + does,)))
    return steps


def run_of_blocks(module, blocks, reads):
    """One step for blocks of a Sequential called one after the other, e.g. trf_blocks.1 to
    trf_blocks.11, labelled "trf_blocks.1–11: 11 × TransformerBlock"."""
    kind = type(module.get_submodule(blocks[0])).__name__
    name = blocks[0] if len(blocks) == 1 else f"{blocks[0]}–{blocks[-1].rpartition('.')[2]}"
    label = f"{name}: {kind}" if len(blocks) == 1 else f"{name}: {len(blocks)} × {kind}"
    return Step(name, "call", (reads,), label, tuple(blocks))


def open_up(module, steps, block, calls):
    """`steps` with `block`, a block of a Sequential on the path (e.g. "trf_blocks.0"), opened
    up: the blocks before it and those after it as one step each, between them the block's own
    written path, marked with its scope so that draw_module frames it."""
    sequence = block.rpartition(".")[0]
    outer = next((step for step in steps if step.calls == (sequence,)), None)
    blocks = []  # the blocks of the Sequential, e.g. trf_blocks.0 to trf_blocks.11
    if outer and isinstance(module.get_submodule(sequence), torch.nn.Sequential):
        blocks = [f"{sequence}.{i}" for i in range(len(module.get_submodule(sequence)))]
    if block not in blocks:
        raise ValueError(f"expand takes blocks of an nn.Sequential on the path, such as "
                         f"'trf_blocks.0', not {block!r}")
    k = blocks.index(block)
    inner_calls = [(name.removeprefix(f"{block}."), *shapes) for name, *shapes in calls
                   if name.startswith(f"{block}.")]
    block_input, *inside = written_steps(module.get_submodule(block), inner_calls, f"{block}.")

    new, last = [], outer.reads[0]  # `last`: the step whose output flows on
    if k > 0:
        new.append(run_of_blocks(module, blocks[:k], last))
        last = new[-1].name
    for step in inside:  # what the block's input was, is now the step before the block
        step.reads = tuple(last if read == block_input.name else read for read in step.reads)
        step.scope = block
    new += inside
    last = new[-1].name
    if k + 1 < len(blocks):
        new.append(run_of_blocks(module, blocks[k + 1:], last))
        last = new[-1].name
    i = steps.index(outer)
    for step in steps[i + 1:]:
        step.reads = tuple(last if read == outer.name else read for read in step.reads)
    return steps[:i] + new + steps[i + 1:]


def data_path(module, example_input, expand=()):
    """The written data path of `module`, each step with the shape of its output when
    `example_input` runs through it; the blocks in `expand` (e.g. ("trf_blocks.0",)) opened up.

    The shapes come from one run with forward hooks; a forward that calls its submodules in
    another order than the written path is refused with a RuntimeError.
    """
    calls = record_calls(module, example_input)
    steps = written_steps(module, calls)
    for block in expand:
        steps = open_up(module, steps, block, calls)

    expected = [call for step in steps for call in step.calls]
    called = [(name, shape) for name, _, shape in calls if name in expected]
    if [name for name, _ in called] != expected:
        raise RuntimeError(f"{type(module).__name__}.forward called {[n for n, _ in called]}, "
                           f"but its data path in gpt_figures.py calls {expected}")
    outputs = iter(shape for _, shape in called)
    shapes = {}  # step name -> the shape of its output
    for step in steps:
        if step.does == "input":
            step.shape = list(example_input.shape)
        elif step.does == "positions":  # torch.arange over the input's length
            step.shape = [example_input.shape[-1]]
            step.label = f"positions 0..{step.shape[0] - 1}"
        elif step.does == "+":
            step.shape = list(torch.broadcast_shapes(*(shapes[read] for read in step.reads)))
        else:
            for _ in step.calls:  # a run of blocks: the last one's output
                step.shape = next(outputs)
        shapes[step.name] = step.shape
    return steps


def draw_module(module, example_input, title, expand=()):
    """Draw `module`'s data path (see `data_path`) top to bottom, each step with the shape of
    its output when `example_input` runs through it.

    Steps at the same depth sit side by side; a connection that skips rows (a shortcut) runs
    down the right-hand side. Submodules in `expand` (e.g. ("trf_blocks.0",)) are drawn opened
    up, framed.
    """
    steps = data_path(module, example_input, expand)
    depth = {}  # the row of each step: one below the deepest step it reads
    for step in steps:
        depth[step.name] = 1 + max((depth[name] for name in step.reads), default=-1)
    edges = [(source, step.name) for step in steps for source in step.reads]
    shortcuts = {(a, b) for a, b in edges if depth[b] - depth[a] > 1}
    width, span = 5.0, 3.3  # the boxes of a row share `span` inches
    fig, ax = canvas(width, (max(depth.values()) + 1) * ROW + (0.45 if shortcuts else 0.0), title)
    center = 2.15 if shortcuts else width / 2  # shortcuts need room on the right
    lane = center + span / 2 + 0.3

    place = {}  # step name -> (x, y, half width, half height)
    for step in steps:
        row = [other.name for other in steps if depth[other.name] == depth[step.name]]
        slot = span / len(row)
        x = center - span / 2 + slot * (row.index(step.name) + 0.5)
        y = -ROW / 2 - depth[step.name] * ROW
        if step.does == "+":
            place[step.name] = (x, y, RADIUS, RADIUS)
            draw_adder(ax, x, y, str(step.shape))
        else:  # inputs, which read no other step, in grey
            place[step.name] = (x, y, slot / 2 - 0.06, BOX_H / 2)
            color = BOX_COLOR if step.reads else INPUT_COLOR
            draw_box(ax, x, y, slot / 2 - 0.06, step.label, str(step.shape), color)

    for source, target in edges:
        sx, sy, _, s_half_h = place[source]
        x, y, half_w, half_h = place[target]
        if (source, target) not in shortcuts:
            draw_arrow(ax, [(sx, sy - s_half_h), (x, y + half_h)])
            continue
        # Branch off the arrow leaving `source`, run down the right, enter `target` sideways.
        branch = (sx, sy - s_half_h - 0.1)
        draw_arrow(ax, [branch, (lane, branch[1]), (lane, y), (x + half_w, y)], SHORTCUT_COLOR, 1.6)
        ax.plot(*branch, "o", color=SHORTCUT_COLOR, markersize=4)

    for scope in dict.fromkeys(step.scope for step in steps if step.scope):
        rows = [depth[step.name] for step in steps if step.scope == scope]
        # From just below the previous row (where a shortcut branches off) to the last row.
        top = -ROW / 2 - min(rows) * ROW + BOX_H / 2 + 0.12
        bottom = -ROW / 2 - max(rows) * ROW - BOX_H / 2 - 0.05
        left, right = center - span / 2 - 0.12, lane + 0.15
        ax.add_patch(Rectangle((left, bottom), right - left, top - bottom, fill=False,
                               edgecolor=SHAPE_COLOR, linestyle="--", linewidth=1))
        kind = type(module.get_submodule(scope)).__name__
        ax.text(left - 0.08, (top + bottom) / 2, f"{scope}: {kind}, opened up", rotation=90,
                ha="right", va="center", fontsize=8, color=SHAPE_COLOR)
    if shortcuts:
        add_legend(ax, [("data path", PATH_COLOR, 1.0),
                        ("shortcut: input added back", SHORTCUT_COLOR, 1.6)])
    return fig


# ---- The feed-forward network: widen each token vector, then narrow it back.


def draw_feedforward(feed_forward, example_input):
    """Draw a `gpt.FeedForward`'s layers as bars as tall as each result's feature count.

    The shapes come from running `example_input` through it; each layer is labelled with its
    class and the feature counts it maps between.
    """
    steps = data_path(feed_forward, example_input)
    features = [step.shape[-1] for step in steps]
    tallest, bar_w, gap = 2.2, 0.3, 1.55
    height = [tallest * n / max(features) for n in features]
    width = 0.6 + len(steps) * bar_w + (len(steps) - 1) * gap + 0.6
    title = (f"FeedForward: each token's {features[0]:,} features widened to "
             f"{max(features):,}, then narrowed to {features[-1]:,}")
    fig, ax = canvas(width, tallest + 1.0, title)
    middle = -0.4 - tallest / 2
    xs = [0.6 + i * (bar_w + gap) for i in range(len(steps))]
    for i, (x, h, step) in enumerate(zip(xs, height, steps)):
        ax.add_patch(Rectangle((x, middle - h / 2), bar_w, h, facecolor=BOX_COLOR,
                               edgecolor=PATH_COLOR, gid="feature bar"))
        ax.text(x + bar_w / 2, middle + h / 2 + 0.12, f"{features[i]:,}", ha="center", fontsize=9)
        ends = {0: "input\n", len(steps) - 1: "output\n"}
        ax.text(x + bar_w / 2, middle - tallest / 2 - 0.15, ends.get(i, "") + str(step.shape),
                ha="center", va="top", fontsize=8, color=SHAPE_COLOR)
    for i, step in enumerate(steps[1:]):  # the layer between bar i and bar i + 1
        left, right = xs[i] + bar_w, xs[i + 1]
        corners = [(left, middle - height[i] / 2), (left, middle + height[i] / 2),
                   (right, middle + height[i + 1] / 2), (right, middle - height[i + 1] / 2)]
        changes = features[i] != features[i + 1]
        ax.add_patch(Polygon(corners, facecolor=HIGHLIGHT_COLOR if changes else "0.96",
                             edgecolor="none"))
        kind = step.label.partition(": ")[2]
        text = f"{kind}\n{features[i]:,} → {features[i + 1]:,}" if changes else kind
        ax.text((left + right) / 2, middle, text, ha="center", va="center", fontsize=9)
    return fig


# ---- Reductions: which axis `dim` collapses.

CELL = 0.4
GROUP_COLORS = plt.get_cmap("Pastel1").colors


def _draw_cells(ax, tensor, name, left, top, groups):
    """Draw a 2-D tensor as a grid named `name`, a 3-D one as its matrices side by side (`name[0]`,
    `name[1]`, ...); return the (left, top) corner of each matrix.

    Each cell shows its value, coloured by `groups` (same colour: same result element).
    """
    corners = []
    matrices = tensor.reshape(-1, *tensor.shape[-2:])
    groups = groups.expand(tensor.shape).reshape(matrices.shape)
    names = [name] if tensor.dim() == 2 else [f"{name}[{i}]" for i in range(len(tensor))]
    for matrix, group, label in zip(matrices, groups, names):
        corners.append((left, top))
        ax.text(left, top + 0.05, label, fontsize=8, family="monospace", color=SHAPE_COLOR)
        for i, row in enumerate(matrix.tolist()):
            for j, value in enumerate(row):
                color = GROUP_COLORS[group[i, j] % len(GROUP_COLORS)]
                ax.add_patch(Rectangle((left + j * CELL, top - (i + 1) * CELL), CELL, CELL,
                                       facecolor=color, edgecolor=PATH_COLOR, gid="cell"))
                ax.text(left + (j + 0.5) * CELL, top - (i + 0.45) * CELL, f"{value:.3g}",
                        ha="center", va="center", fontsize=8)
        left += matrix.shape[1] * CELL + 0.35
    return corners


def _draw_reduced_axis(ax, tensor, dim, corners):
    """Arrows along the axis that `dim` reduces: rows, columns, or across the matrices."""
    axis = dim % tensor.dim() + (3 - tensor.dim())  # as if 3-D: matrix, row, column
    rows, cols = tensor.shape[-2:]
    if axis == 0:  # one arc from the first matrix to the last
        (x0, y0), (x1, _) = corners[0], corners[-1]
        start, end = (x0 + cols * CELL / 2, y0 + 0.2), (x1 + cols * CELL / 2, y0 + 0.2)
        ax.add_patch(FancyArrowPatch(start, end, connectionstyle="arc3,rad=-0.25",
                                     arrowstyle="-|>", mutation_scale=10, color=SHORTCUT_COLOR,
                                     linewidth=1.4))
        return
    for x, y in corners:
        for k in range(rows if axis == 2 else cols):
            if axis == 2:  # along a row, below its numbers
                row_y = y - (k + 0.8) * CELL
                points = [(x + 0.1, row_y), (x + cols * CELL - 0.08, row_y)]
            else:  # down a column, right of its numbers
                col_x = x + (k + 0.85) * CELL
                points = [(col_x, y - 0.1), (col_x, y - rows * CELL + 0.08)]
            draw_arrow(ax, points, SHORTCUT_COLOR, 1.4)


def draw_reductions(tensors, dims=(0, -1)):
    """For each tensor and each dim: which cells `x.mean(dim=..., keepdim=True)` averages.

    One row per (tensor, dim): the tensor's cells with arrows along the reduced axis, then the
    result's cells. A result cell and the input cells averaged into it share a colour. The
    values and shapes shown are those of real `mean` calls.
    """
    panels = []  # (tensor, dim, its mean with keepdim=True, heading)
    for x in tensors:
        for dim in dims:
            kept, dropped = x.mean(dim=dim, keepdim=True), x.mean(dim=dim)
            heading = (f"x.mean(dim={dim}, keepdim=True): {list(x.shape)} → {list(kept.shape)}"
                       f"    (keepdim=False: {list(dropped.shape)})")
            panels.append((x, dim, kept, heading))
    heights = [x.shape[-2] * CELL + 0.9 for x, *_ in panels]
    # The input's matrices side by side, the arrow, then at most as many result matrices.
    matrices_w = [len(x.reshape(-1, *x.shape[-2:])) * (x.shape[-1] * CELL + 0.35) for x in tensors]
    width = max(0.75 + 2 * max(matrices_w), *(0.075 * len(panel[-1]) + 0.4 for panel in panels))
    fig, ax = canvas(width, sum(heights), "Which cells x.mean(dim=...) averages")
    top = 0.0
    for (x, dim, kept, heading), height in zip(panels, heights):
        ax.text(0.15, top - 0.2, heading, fontsize=9, family="monospace", va="center")
        # Result element k averages the input cells that broadcasting it back would fill.
        groups = torch.arange(kept.numel()).reshape(kept.shape)
        corners = _draw_cells(ax, x, "x", 0.3, top - 0.7, groups)
        _draw_reduced_axis(ax, x, dim, corners)
        right = max(cx for cx, _ in corners) + x.shape[-1] * CELL
        ax.text(right + 0.3, top - 0.7 - x.shape[-2] * CELL / 2, "→", fontsize=16, va="center")
        _draw_cells(ax, kept, "mean", right + 0.8, top - 0.7, groups)
        top -= height
    return fig


# ---- Generation: one step of gpt.generate_text_simple, line by line.


# The lines of gpt.generate_text_simple's loop that make a tensor (comments left out).
GENERATION_LINES = (
    "idx_cond = idx[:, -context_size:]",
    "logits = model(idx_cond)",
    "logits = logits[:, -1, :]",
    "probas = torch.softmax(logits, dim=-1)",
    "idx_next = torch.argmax(probas, dim=-1, keepdim=True)",
    "idx = torch.cat((idx, idx_next), dim=1)",
)


def generation_steps(model, idx, context_size):
    """GENERATION_LINES, each with the shape of the tensor it makes when one step runs on
    `model` and the ids `idx`: a list of (code, shape)."""
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        idx_cond = idx[:, -context_size:]
        logits = model(idx_cond)
        last = logits[:, -1, :]
        probas = torch.softmax(last, dim=-1)
        idx_next = torch.argmax(probas, dim=-1, keepdim=True)
        grown = torch.cat((idx, idx_next), dim=1)
    made = (idx_cond, logits, last, probas, idx_next, grown)
    return [(line, list(tensor.shape)) for line, tensor in zip(GENERATION_LINES, made)]


def draw_generation_loop(model, idx, context_size):
    """Draw one step of greedy generation (`gpt.generate_text_simple`) and its loop back.

    Each box is a line of the function that makes a tensor, with the shape it had when one
    step ran on `model` and the ids `idx`.
    """
    steps = [("idx (input)", list(idx.shape))] + generation_steps(model, idx, context_size)
    half_w = max(0.034 * len(code) for code, _ in steps) + 0.2  # 8 pt monospace: 0.067 in/char
    x = 0.3 + half_w
    fig, ax = canvas(2 * x + 0.9, len(steps) * ROW + 0.45,
                     "One step of generate_text_simple, line by line")
    for row, (code, shape) in enumerate(steps):
        y = -ROW / 2 - row * ROW
        draw_box(ax, x, y, half_w, code, str(shape), BOX_COLOR if row else INPUT_COLOR,
                 family="monospace", fontsize=8)
        if row:
            draw_arrow(ax, [(x, y + ROW - BOX_H / 2), (x, y + BOX_H / 2)])
    # The loop: the longer sequence goes back in as the next step's input.
    top, bottom, lane = -ROW / 2, -ROW / 2 - (len(steps) - 1) * ROW, x + half_w + 0.35
    draw_arrow(ax, [(x + half_w, bottom), (lane, bottom), (lane, top), (x + half_w, top)],
               SHORTCUT_COLOR, 1.6)
    _, grown = steps[-1]  # the shape after appending the new token
    ax.text(lane + 0.12, (top + bottom) / 2, f"next step: {grown[1]} tokens",
            rotation=90, ha="left", va="center", fontsize=8, color=SHORTCUT_COLOR)
    add_legend(ax, [("one step", PATH_COLOR, 1.0),
                    ("loop: repeated max_new_tokens times", SHORTCUT_COLOR, 1.6)])
    return fig


def draw_greedy_candidates(step_probas, chosen, tokenizer, first_position=0, top_k=5):
    """Bars of the `top_k` most likely next tokens at each greedy step, the chosen one in orange.

    `step_probas` holds one row of next-token probabilities per step ([steps, vocab_size]),
    `chosen` the id each step picked, and `first_position` the position of the token that the
    first step chose. The dashed line is the uniform probability 1 / vocab_size.
    """
    steps, vocab_size = step_probas.shape
    cols = min(3, steps)
    rows = -(-steps // cols)
    height = 2.6 * rows
    fig, axes = plt.subplots(rows, cols, figsize=(10, height), sharex=True, squeeze=False)
    fig.subplots_adjust(left=0.13, right=0.98, top=1 - 0.6 / height, bottom=0.95 / height,
                        wspace=0.6, hspace=0.35)
    for ax in axes.flat[steps:]:  # the grid's empty places
        ax.set_visible(False)
    for step, ax in enumerate(axes.flat[:steps]):
        top = torch.topk(step_probas[step], top_k)
        ids = top.indices.tolist()
        labels = [repr(tokenizer.decode([i])) for i in ids]
        colors = [SHORTCUT_COLOR if i == int(chosen[step]) else "tab:blue" for i in ids]
        ax.barh(range(top_k), (top.values * 1e4).tolist(), color=colors, tick_label=labels,
                gid="candidate bar")
        ax.axvline(1e4 / vocab_size, color="black", linestyle="--", linewidth=1)
        ax.invert_yaxis()  # the most likely candidate on top
        ax.set_title(f"step {step + 1}, position {first_position + step}: "
                     f"{tokenizer.decode([int(chosen[step])])!r}", fontsize=9.5)
    for ax in axes[-1]:
        ax.set_xlabel(r"probability ($\times 10^{-4}$)")
    for ax in axes[:, 0]:
        ax.set_ylabel("candidate token")
    legend = [Rectangle((0, 0), 1, 1, color=SHORTCUT_COLOR, label="chosen (argmax)"),
              Rectangle((0, 0), 1, 1, color="tab:blue", label=f"other top-{top_k} candidates"),
              Line2D([], [], color="black", linestyle="--", label=f"uniform: 1/{vocab_size:,}")]
    fig.legend(handles=legend, loc="lower center", ncol=3, frameon=False)
    fig.suptitle("Next-token probabilities at each greedy step")
    return fig


# ---- The chapter's roadmap.

# Each chapter notebook: its section, its title and what it builds (its classes; in 4.7, the
# function it exports). tests/chapter/test_figures.py checks them against the notebooks.
CHAPTER_STEPS = (
    ("4.1", "The GPT backbone", ("DummyTransformerBlock", "DummyLayerNorm", "DummyGPTModel")),
    ("4.2", "Layer normalization", ("LayerNorm",)),
    ("4.3", "GELU and the feed-forward network", ("GELU", "FeedForward")),
    ("4.4", "Shortcut connections", ("ExampleDeepNeuralNetwork",)),
    ("4.5", "The transformer block", ("MultiHeadAttention", "TransformerBlock")),
    ("4.6", "The full GPT model", ("GPTModel",)),
    ("4.7", "Generating text", ("generate_text_simple",)),
)


# For readers without the book, chapter 3's attention in brief, between 4.4 and 4.5: the notebook
# notebooks/04a_attention.ipynb. It exports nothing; under its box, what it covers.
ATTENTION_STEP = ("attention", "Attention", ("queries, keys, values; heads",))
ROADMAP = CHAPTER_STEPS[:4] + (ATTENTION_STEP,) + CHAPTER_STEPS[4:]


def draw_roadmap(current):
    """The chapter's notebooks in build order, `current` highlighted: a section (e.g. "4.3") or
    "attention", chapter 3's attention in brief, drawn dashed (optional with the book).

    Each box shows a notebook's number and title; under it, what it builds.
    """
    keys = [key for key, _, _ in ROADMAP]
    if current not in keys:
        raise ValueError(f"draw_roadmap takes one of {keys}, not {current!r}")
    here = keys.index(current)
    this = "chapter 3's attention in brief" if current == "attention" else current
    box_w, gap, box_h = 1.13, 0.18, 0.62
    fig, ax = canvas(0.2 + len(ROADMAP) * (box_w + gap) - gap, box_h + 0.6,
                     f"Chapter 4 step by step: this is {this} (under each: what it builds)")
    for i, (key, title, builds) in enumerate(ROADMAP):
        x, y = 0.1 + i * (box_w + gap), -0.05
        brief = key == "attention"
        face = HIGHLIGHT_COLOR if i == here else BOX_COLOR if i < here else "0.95"
        ax.add_patch(FancyBboxPatch((x, y - box_h), box_w, box_h, boxstyle=ROUNDED, gid="step",
                                    facecolor=face, linewidth=2 if i == here else 1,
                                    linestyle="--" if brief else "-",
                                    edgecolor=SHORTCUT_COLOR if i == here else PATH_COLOR))
        text_color = "black" if i <= here else SHAPE_COLOR
        ax.text(x + box_w / 2, y - 0.13, "ch. 3, in brief" if brief else key, ha="center",
                va="center", fontsize=9, fontweight="bold", color=text_color)
        title = "\n".join(textwrap.wrap(title, 20, break_on_hyphens=False))
        ax.text(x + box_w / 2, y - 0.4, title, ha="center", va="center", fontsize=7.5,
                color=text_color)
        builds = "\n".join(textwrap.wrap(", ".join(builds), 20, break_long_words=False))
        ax.text(x + box_w / 2, y - box_h - 0.06, builds, ha="center", va="top", fontsize=6.5,
                family="sans-serif" if brief else "monospace", color=SHAPE_COLOR)
        if i:
            draw_arrow(ax, [(x - gap + 0.02, y - box_h / 2), (x - 0.02, y - box_h / 2)])
    return fig


# ---- Tokens.


def draw_tokens(tokenizer, texts, title):
    """Each text as a row of boxes, one per token: the token's text above its id.

    A token that is only part of a character cannot be shown as text; its box shows its byte
    in hex instead.
    """
    rows = []  # per text: (piece, id, box width) for each token
    for text in texts:
        row = []
        for token_id in tokenizer.encode(text):
            raw = tokenizer.decode_single_token_bytes(token_id)
            try:
                piece = repr(raw.decode("utf-8"))[1:-1].replace(" ", "\u2423")  # show spaces
            except UnicodeDecodeError:
                piece = " ".join(f"0x{byte:02x}" for byte in raw)
            row.append((piece, token_id, 0.09 * max(len(piece), len(str(token_id))) + 0.22))
        rows.append(row)
    left = 0.075 * max(len(repr(text)) for text in texts) + 0.3  # room for the texts
    width = left + max(sum(w + 0.075 for _, _, w in row) for row in rows) + 0.1
    fig, ax = canvas(width, 0.7 * len(texts) + 0.1, title)
    for i, (text, row) in enumerate(zip(texts, rows)):
        x, y = left, -0.4 - 0.7 * i
        for piece, token_id, box_w in row:
            draw_box(ax, x + box_w / 2, y, box_w / 2, piece, str(token_id))
            x += box_w + 0.075
        ax.text(left - 0.12, y, repr(text), ha="right", va="center", fontsize=9)
    return fig


# ---- Attention heads: how MultiHeadAttention.forward splits each token vector among the heads,
# and merges the heads' results back. Positions stand in for the values (0, 1, 2, ...), so a
# picture shows where each entry goes.

HEAD_COLORS = plt.get_cmap("Set3").colors  # 12 colours: one per head of GPT-2 small
HEAD_CELL_W, HEAD_CELL_H, HEAD_ROW, HEAD_LEFT = 0.5, 0.22, 0.3, 0.85  # inches


def head_split_steps(attention, x):
    """How `attention.forward` (gpt.MultiHeadAttention's) splits the queries of `x` into heads.

    W_query's output is stood for by the position of each of its entries (0, 1, 2, ...), so
    the split shows where every entry goes. Returns (call, tensor) pairs in order:
    ("W_query(x)", positions), ("view(b, num_tokens, num_heads, head_dim)", ...),
    ("transpose(1, 2)", ...).
    """
    b, num_tokens, _ = x.shape
    heads, head_dim = attention.num_heads, attention.head_dim
    positions = torch.arange(b * num_tokens * attention.d_out).view(b, num_tokens, -1)
    split = positions.view(b, num_tokens, heads, head_dim)
    return [("W_query(x)", positions), (f"view({b}, {num_tokens}, {heads}, {head_dim})", split),
            ("transpose(1, 2)", split.transpose(1, 2))]


def head_merge_steps(attention, x):
    """How `attention.forward` merges the heads' context vectors back into one vector per token,
    for an input shaped like `x`.

    The output of `attn_weights @ values` is stood for by the position of each of its entries.
    Returns (call, tensor) pairs in order: ("attn_weights @ values", positions),
    ("transpose(1, 2)", ...), ("contiguous()", ...), ("view(b, num_tokens, d_out)", ...).
    """
    b, num_tokens, _ = x.shape
    heads, head_dim, d_out = attention.num_heads, attention.head_dim, attention.d_out
    context = torch.arange(b * heads * num_tokens * head_dim).view(b, heads, num_tokens, head_dim)
    swapped = context.transpose(1, 2)
    in_order = swapped.contiguous()  # a copy, token after token
    return [("attn_weights @ values", context), ("transpose(1, 2)", swapped),
            ("contiguous()", in_order), (f"view({b}, {num_tokens}, {d_out})",
                                         in_order.view(b, num_tokens, d_out))]


def _head_rows(tensor, token_and_head, head_dim):
    """Sequence 0 of `tensor` (of positions), one row per index of axis 1, one cell per block of
    `head_dim` entries: the (token, head) that `token_and_head` gives for its first position."""
    first = tensor[0].reshape(tensor.shape[1], -1)
    return [[token_and_head(p) for p in row[::head_dim].tolist()] for row in first]


def _caption(cells):
    """("token", t) when all `cells` of a row belong to token t, else ("head", h) of the first."""
    return ("token", cells[0][0]) if len({t for t, _ in cells}) == 1 else ("head", cells[0][1])


def _heading(i, call, tensor, rows):
    """E.g. ".view(2, 4, 12, 64): [2, 4, 12, 64]    rows: tokens" (no dot before the first)."""
    return f"{'.' if i else ''}{call}: {list(tensor.shape)}    rows: {_caption(rows[0])[0]}s"


def _draw_head_grid(ax, top, heading, rows, gap):
    """`heading`, then `rows` of cells "t<token>·h<head>", coloured by head, each row captioned
    with its token or head; `gap` between the cells of a row. Returns the bottom."""
    ax.text(0.1, top - 0.22, heading, fontsize=9, family="monospace", va="center")
    for r, cells in enumerate(rows):
        y = top - 0.55 - r * HEAD_ROW
        for c, (token, head) in enumerate(cells):
            x0 = HEAD_LEFT + c * (HEAD_CELL_W + gap)
            ax.add_patch(Rectangle((x0, y - HEAD_CELL_H), HEAD_CELL_W, HEAD_CELL_H,
                                   facecolor=HEAD_COLORS[head % len(HEAD_COLORS)],
                                   edgecolor=PATH_COLOR, gid="head cell"))
            ax.text(x0 + HEAD_CELL_W / 2, y - HEAD_CELL_H / 2, f"t{token}·h{head}", ha="center",
                    va="center", fontsize=6.5)
        ax.text(HEAD_LEFT - 0.1, y - HEAD_CELL_H / 2, " ".join(map(str, _caption(cells))),
                ha="right", va="center", fontsize=7.5, color=SHAPE_COLOR)
    return top - 0.6 - len(rows) * HEAD_ROW


def _draw_feature_ranges(ax, top, columns, head_dim):
    """Over an unbroken grid: the features in each column, e.g. "64–127"."""
    for c in range(columns):
        ax.text(HEAD_LEFT + (c + 0.5) * HEAD_CELL_W, top - 0.5,
                f"{c * head_dim}–{(c + 1) * head_dim - 1}", ha="center", va="bottom",
                fontsize=6, color=SHAPE_COLOR)


def draw_head_split(attention, x):
    """Draw how `attention.forward` splits the queries into heads, for the first sequence of `x`.

    The steps are those of `head_split_steps`: W_query's output, then each call of the split
    with the shape it gives. In every step, axis 1 runs down the rows. A cell stands for
    `head_dim` entries of one token, coloured by the head its features belong to and labelled
    "t<token>·h<head>".
    """
    b, num_tokens, _ = x.shape
    head_dim, d_out = attention.head_dim, attention.d_out

    def token_and_head(p):  # p: a position in W_query(x), laid out (b, num_tokens, d_out)
        return p // d_out % num_tokens, p % d_out // head_dim

    panels = []  # (heading, rows of (token, head) cells)
    for i, (call, tensor) in enumerate(head_split_steps(attention, x)):
        rows = _head_rows(tensor, token_and_head, head_dim)
        panels.append((_heading(i, call, tensor, rows), rows))
    heights = [0.6 + len(rows) * HEAD_ROW for _, rows in panels]
    grid_w = [len(rows[0]) * (HEAD_CELL_W + 0.08) for _, rows in panels]
    width = HEAD_LEFT + max(*grid_w, grid_w[-1] + 2.6)  # room for the note beside the last step
    fig, ax = canvas(width, sum(heights) + 0.3,
                     f"Splitting the queries of sequence 0 (the first of {b}) "
                     f"into heads of {head_dim} features")
    top = 0.0
    for i, (heading, rows) in enumerate(panels):
        if i == 0:  # W_query's output: one unbroken vector per token
            _draw_feature_ranges(ax, top, len(rows[0]), head_dim)
        bottom = _draw_head_grid(ax, top, heading, rows, gap=0.08 if i else 0.0)
        if i == len(panels) - 1 and heading.endswith("rows: heads"):
            ax.text(HEAD_LEFT + grid_w[-1] + 0.25, (top - 0.55 + bottom) / 2,
                    f"each row: one head's [{len(rows[0])}, {head_dim}] matrix\n"
                    f"({len(rows[0])} tokens × {head_dim} features),\n"
                    "the input of that head's attention", fontsize=8, va="center")
        top = bottom
    ax.text(0.1, top - 0.05, f"each cell: {head_dim} features of one token "
            f"(t = its token, h = the head those features belong to)", fontsize=8,
            color=SHAPE_COLOR, va="top")
    return fig


def _draw_memory(ax, top, tensor, token_and_head, head_dim, width):
    """A strip of sequence 0's blocks of `head_dim` entries of `tensor` in the order they lie in
    memory, coloured by head, with the head (or token) of each run of blocks above it. Returns
    the bottom."""
    first = tensor[0]
    in_memory = torch.as_strided(first, (first.numel(),), (1,))  # memory order, not index order
    cells = [token_and_head(p) for p in in_memory[::head_dim].tolist()]
    cell_w, y = width / len(cells), top - 0.3
    ax.text(HEAD_LEFT - 0.1, y - HEAD_CELL_H / 2, "in memory", ha="right", va="center",
            fontsize=7.5, color=SHAPE_COLOR)
    for c, (_, head) in enumerate(cells):
        ax.add_patch(Rectangle((HEAD_LEFT + c * cell_w, y - HEAD_CELL_H), cell_w, HEAD_CELL_H,
                               facecolor=HEAD_COLORS[head % len(HEAD_COLORS)],
                               edgecolor=PATH_COLOR, linewidth=0.5, gid="memory cell"))
    # Runs of one head (heads-major memory) or of one token (token-major memory).
    by_head = len(cells) > 1 and cells[0][1] == cells[1][1]
    runs = [(key, len(list(run))) for key, run in
            groupby(head if by_head else token for token, head in cells)]
    start = 0
    for key, length in runs:
        ax.text(HEAD_LEFT + (start + length / 2) * cell_w, y + 0.03,
                f"{'head' if by_head else 'token'} {key}", ha="center", va="bottom", fontsize=6,
                color=SHAPE_COLOR)
        start += length
    ax.text(HEAD_LEFT + width + 0.1, y - HEAD_CELL_H / 2,
            f"is_contiguous(): {tensor.is_contiguous()}", va="center", fontsize=7.5,
            family="monospace")
    return y - HEAD_CELL_H - 0.1


def draw_head_merge(attention, x):
    """Draw how `attention.forward` merges the heads back into one vector per token, for the
    first sequence of `x`: `(attn_weights @ values).transpose(1, 2)`, then
    `.contiguous().view(b, num_tokens, d_out)`.

    The steps are those of `head_merge_steps`, drawn as in `draw_head_split`; after the
    transpose and after `.contiguous()`, a strip shows the order in which the entries lie in
    memory, which is what `.view` needs to be token after token.
    """
    b, num_tokens, _ = x.shape
    heads, head_dim, d_out = attention.num_heads, attention.head_dim, attention.d_out

    def token_and_head(p):  # p: a position in attn_weights @ values, (b, heads, num_tokens, head_dim)
        return p // head_dim % num_tokens, p // (num_tokens * head_dim) % heads

    ((product_call, context), (transpose_call, swapped), (contiguous_call, in_order),
     (view_call, merged)) = head_merge_steps(attention, x)
    rows = [_head_rows(tensor, token_and_head, head_dim) for tensor in (context, swapped, merged)]
    grid_w = heads * (HEAD_CELL_W + 0.08) - 0.08  # a row of the transposed context
    width = HEAD_LEFT + max(grid_w + 1.7, num_tokens * (HEAD_CELL_W + 0.08) + 2.6)
    note = (f"Each cell: {head_dim} features of one token's context (t = its token, h = the "
            f"head that computed them).\nWhy .contiguous(): .view({b}, {num_tokens}, {d_out}) needs each token's {d_out} "
            f"features side by side in memory, token after token. transpose(1, 2) moves no "
            f"number, it only swaps two strides: memory still holds head 0's {num_tokens} "
            f"tokens, then head 1's, and so on, and .view raises a RuntimeError. "
            f".contiguous() copies the entries into token-major order.")
    columns = int(width / 0.075)  # 8 pt: about 0.075 inch a character
    note = "\n".join(textwrap.fill(paragraph, columns) for paragraph in note.split("\n"))
    height = (sum(0.6 + len(r) * HEAD_ROW for r in rows) + 2 * 0.63 + 0.45
              + 0.16 * (note.count("\n") + 1))
    fig, ax = canvas(width, height, f"Merging the heads of sequence 0 (the first of {b}) back "
                                    f"into vectors of {d_out} features")

    top = _draw_head_grid(ax, 0.0, _heading(0, product_call, context, rows[0]), rows[0], gap=0.08)
    ax.text(HEAD_LEFT + num_tokens * (HEAD_CELL_W + 0.08) + 0.25, (0.0 - 0.55 + top) / 2,
            f"each row: one head's [{num_tokens}, {head_dim}] context\n"
            f"({num_tokens} tokens × {head_dim} features),\n"
            "the output of that head's attention", fontsize=8, va="center")
    top = _draw_head_grid(ax, top, _heading(1, transpose_call, swapped, rows[1]), rows[1],
                          gap=0.08)
    top = _draw_memory(ax, top, swapped, token_and_head, head_dim, grid_w)
    ax.text(0.1, top - 0.22, f".{contiguous_call}: {list(in_order.shape)}    the same rows, copied",
            fontsize=9, family="monospace", va="center")
    top = _draw_memory(ax, top - 0.3, in_order, token_and_head, head_dim, grid_w)
    _draw_feature_ranges(ax, top, heads, head_dim)
    top = _draw_head_grid(ax, top, _heading(3, view_call, merged, rows[2]), rows[2], gap=0.0)
    ax.text(0.1, top - 0.1, note, fontsize=8, va="top")
    return fig


# ---- What trained heads look at.


def token_labels(tokenizer, ids):
    """Each GPT-2 token's text as a tick label: a newline as "\\n", every space as "␣"."""
    return [tokenizer.decode([i]).replace("\n", "\\n").replace(" ", "\u2423") for i in ids]


def draw_attention(weights, labels, titles, title):
    """Heatmaps of several heads' attention weights ([num_tokens, num_tokens] each) side by
    side: rows are the queries, columns the keys, both labelled with the tokens. Each panel's
    colour scale runs from 0 to its own largest weight, so no weight is clipped."""
    fig, axes = plt.subplots(1, len(weights), figsize=(3.3 * len(weights) + 0.6, 3.9),
                             squeeze=False)
    for ax, w, name in zip(axes[0], weights, titles):
        ax.imshow(w, cmap="Blues", vmin=0, vmax=float(w.max()))
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6.5)
        ax.set_yticks(range(len(labels)), labels if ax is axes[0][0] else [], fontsize=6.5)
        ax.set_title(name, fontsize=9.5)
        ax.set_xlabel("key (attended to)", fontsize=8)
    axes[0][0].set_ylabel("query (attending)", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
