"""Pictures for the course notebooks, computed from the code they show.

Not part of the chapter: the notebooks call these functions to draw diagrams and plots, so a
learner reads one line instead of the drawing code. `pip install -e .` makes it importable.
Nothing in a picture is typed in by hand: the data paths come from tracing a module and running
an example through it, the generation loop from running one step of `gpt.generate_text_simple`,
the roadmap from the notebooks' titles and export cells. Change the code and the picture follows.
"""

import ast
import json
import linecache
import operator
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import torch
import torch.fx as fx
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Polygon, Rectangle
from matplotlib.path import Path as ArrowPath
from torch.overrides import TorchFunctionMode

import gpt

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
ADDITIONS = (operator.add, torch.add)

# ---- Drawing primitives. Every canvas measures in inches: 1 data unit = 1 inch, y = 0 at the top.

ROW, BOX_H, RADIUS, TITLE_H = 0.62, 0.44, 0.15, 0.45
PATH_COLOR, SHORTCUT_COLOR, SHAPE_COLOR = "0.3", "tab:orange", "0.35"
BOX_COLOR, INPUT_COLOR, HIGHLIGHT_COLOR = "#dbe9f6", "0.92", "#fdd9b5"


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
    handles = [Line2D([], [], color=color, lw=width) for _, color, width in entries]
    labels = [label for label, _, _ in entries]
    ax.legend(handles, labels, loc="lower center", ncol=len(entries), fontsize=8, frameon=False)


def draw_box(ax, x, y, half_width, label, shape, color=BOX_COLOR, **label_style):
    """A rounded box centred at (x, y): a label above a shape, e.g. "[2, 4, 768]"."""
    corner = (x - half_width, y - BOX_H / 2)
    style = "round,pad=0,rounding_size=0.06"
    ax.add_patch(
        FancyBboxPatch(
            corner, 2 * half_width, BOX_H, boxstyle=style, facecolor=color, edgecolor=PATH_COLOR
        )
    )
    label_style = {"fontsize": 9, **label_style}  # e.g. family="monospace" for code
    ax.text(x, y + 0.08, label, ha="center", va="center", **label_style)
    ax.text(x, y - 0.11, shape, ha="center", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_adder(ax, x, y, shape):
    """A circled "+" centred at (x, y), with the shape of the sum on its left."""
    ax.add_patch(Circle((x, y), RADIUS, facecolor="white", edgecolor=PATH_COLOR))
    ax.text(x, y, "+", ha="center", va="center", fontsize=12)
    ax.text(x - RADIUS - 0.1, y, shape, ha="right", va="center", fontsize=8, color=SHAPE_COLOR)


def draw_arrow(ax, points, color=PATH_COLOR, linewidth=1.0, **style):
    """An arrow along the straight segments joining `points`."""
    arrow = FancyArrowPatch(
        path=ArrowPath(points), arrowstyle="-|>", mutation_scale=10, color=color,
        linewidth=linewidth, **style,
    )
    ax.add_patch(arrow)


# ---- The data path of a module: torch.fx records what forward calls, a real run gives shapes.


@dataclass
class Step:
    """One step of a forward pass: an input, a submodule call, an addition or the positions."""

    name: str  # unique: the fx node's name, e.g. "norm1", "drop_shortcut_1", "add", "in_idx"
    label: str  # the text of the step's box, e.g. "norm1: LayerNorm"
    shape: list  # the shape of the step's output
    inputs: list  # names of the steps whose outputs it reads
    scope: str = ""  # the opened-up submodule it runs inside (see trace_steps), or ""
    targets: list = field(default_factory=list)  # the submodule(s) it calls


class _DataPathTracer(fx.Tracer):
    """Records each submodule call as one step, except in the submodules opened up.

    A condition on a traced value (`if x.shape == out.shape:`) is decided by running the steps
    traced so far on the example input, so the recorded path is the one that example takes.
    Where that cannot be done (a value test on the meta device), the condition is taken as
    False: in these modules such conditions are input guards (`if bad: raise ...`), which a
    valid example passes.
    """

    def __init__(self, expand, example_input=None):
        super().__init__()
        self.expand = expand
        self.example_input = example_input
        self.evaluating = False  # True while to_bool runs real tensors: no recording then

    def is_leaf_module(self, module, qualified_name):
        # Opening "trf_blocks.0" means tracing through "trf_blocks" too.
        return not any(path == qualified_name or path.startswith(qualified_name + ".")
                       for path in self.expand)

    def call_module(self, module, forward, args, kwargs):
        if self.evaluating:
            return forward(*args, **kwargs)
        return super().call_module(module, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self.evaluating:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def to_bool(self, obj):
        if self.example_input is None:
            return False
        graph, copies = fx.Graph(), {}
        for node in self.graph.nodes:  # the steps up to the condition
            copies[node] = graph.node_copy(node, copies.__getitem__)
            if node is obj.node:
                break
        graph.output(copies[obj.node])
        self.evaluating = True
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                return bool(fx.GraphModule(self.root, graph)(self.example_input))
        except Exception:  # e.g. the values of a meta tensor
            return False
        finally:
            self.evaluating = False


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


def _scope(node, expand):
    """The innermost opened-up submodule that `node` runs inside, or ""."""
    stack = node.meta.get("nn_module_stack", {}).values()  # the modules being traced through
    inside = [path for path, _ in stack if path in expand]
    return inside[-1] if inside else ""


def _label(node, module, scope, names):
    """The text of a kept step's box, or None for bookkeeping (shape lookups, guards, ...)."""
    if node.op == "placeholder":
        return f"{node.name} (input)"
    if node.op == "call_module":
        shown = names.get(node.target, node.target.removeprefix(f"{scope}."))
        return f"{shown}: {describe(module.get_submodule(node.target))}"
    if node.op == "call_function" and node.target is torch.arange:
        return f"positions 0..{node.meta['shape'][0] - 1}"
    if node.op == "call_function" and node.target in ADDITIONS:
        return "+"
    return None


def _continues_run(step, node, inputs, module):
    """Whether `node` calls the next sibling of like kind on `step`'s output.

    E.g. trf_blocks.2 after trf_blocks.1: such a run is drawn as one box.
    """
    if node.op != "call_module" or inputs != [step.name] or not step.targets:
        return False
    parent, _, index = step.targets[-1].rpartition(".")
    kinds = {type(module.get_submodule(target)) for target in (step.targets[-1], node.target)}
    return index.isdigit() and node.target == f"{parent}.{int(index) + 1}" and len(kinds) == 1


def _extend_run(step, node, module):
    """Add the call of `node` to the run of submodules that `step` stands for."""
    step.targets.append(node.target)
    step.shape = node.meta["shape"]
    shown = step.label.partition(": ")[0].partition("–")[0]  # e.g. "trf_blocks.1"
    kind = type(module.get_submodule(node.target)).__name__
    last = node.target.rpartition(".")[2]
    step.label = f"{shown}–{last}: {len(step.targets)} × {kind}"


def trace_steps(module, example_input, expand=(), names=None):
    """The data path of `module.forward` with each step's output shape.

    torch.fx records the operations of `forward` as a graph, calling each submodule one step,
    except the submodules listed in `expand` (paths such as "trf_blocks.0"), whose own steps are
    recorded instead. Running `example_input` through that graph gives every shape. Kept are the
    inputs, submodule calls, additions, and `torch.arange(n)` as a second input ("positions
    0..n-1": it reads only the input's length); bookkeeping such as shape lookups or input
    guards is skipped, and a step's inputs are the nearest kept steps upstream of it. `names`
    renames submodules in the labels, e.g. {"layers.0": "layer 1"}.
    """
    names = names or {}
    for path in (*expand, *names):
        try:
            module.get_submodule(path)
        except AttributeError:
            raise ValueError(f"{type(module).__name__} has no submodule {path!r}") from None
    graph = _DataPathTracer(tuple(expand), example_input).trace(module)
    traced = fx.GraphModule(module, graph)
    traced.graph.eliminate_dead_code()  # e.g. the masks a guard computes, never used after it
    # Dropout draws random numbers even here: a drawing must not shift the caller's next ones.
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        _ShapeRecorder(traced).run(example_input)
    steps, sources = [], {}  # sources: fx node -> names of the kept steps it derives from
    for node in traced.graph.nodes:
        inputs = list(dict.fromkeys(name for arg in node.all_input_nodes for name in sources[arg]))
        if steps and _continues_run(steps[-1], node, inputs, module):
            _extend_run(steps[-1], node, module)
            sources[node] = [steps[-1].name]
            continue
        scope = _scope(node, expand)
        label = _label(node, module, scope, names)
        if label is None:
            sources[node] = inputs
            continue
        if node.target is torch.arange:
            inputs = []  # the positions depend on the input's length, not on its values
        targets = [node.target] if node.op == "call_module" else []
        steps.append(Step(node.name, label, node.meta["shape"], inputs, scope, targets))
        sources[node] = [node.name]
    return steps


def _layout(steps):
    """Row of each step (one below the deepest step it reads), and the shortcut edges."""
    depth = {}
    for step in steps:
        depth[step.name] = 1 + max((depth[name] for name in step.inputs), default=-1)
    edges = [(source, step.name) for step in steps for source in step.inputs]
    shortcuts = {(a, b) for a, b in edges if depth[b] - depth[a] > 1}
    return depth, edges, shortcuts


def draw_module(module, example_input, title, expand=(), names=None):
    """Draw `module`'s data path top to bottom, each step with the shape of its output.

    Steps at the same depth sit side by side; a connection that skips rows (a shortcut) runs
    down the right-hand side. Submodules in `expand` (e.g. ("trf_blocks.0",)) are drawn opened
    up, framed; `names` renames submodules (see `trace_steps`). Returns the figure; end the
    cell with `plt.show()`.
    """
    steps = trace_steps(module, example_input, expand, names)
    depth, edges, shortcuts = _layout(steps)
    width, span = 5.0, 3.3  # the boxes of a row share `span` inches
    n_rows = max(depth.values()) + 1
    fig, ax = canvas(width, n_rows * ROW + (0.45 if shortcuts else 0.0), title)
    center = 2.15 if shortcuts else width / 2  # shortcuts need room on the right
    lane = center + span / 2 + 0.3

    place = {}  # step name -> (x, y, half width, half height)
    for row in range(n_rows):
        names_in_row = [step.name for step in steps if depth[step.name] == row]
        slot = span / len(names_in_row)
        for i, name in enumerate(names_in_row):
            x = center - span / 2 + slot * (i + 0.5)
            place[name] = (x, -ROW / 2 - row * ROW, slot / 2 - 0.06, BOX_H / 2)
    for step in steps:
        x, y, half_w, _ = place[step.name]
        if step.label == "+":
            place[step.name] = (x, y, RADIUS, RADIUS)
            draw_adder(ax, x, y, str(step.shape))
        else:  # inputs, which read no other step, in grey
            color = BOX_COLOR if step.inputs else INPUT_COLOR
            draw_box(ax, x, y, half_w, step.label, str(step.shape), color)

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
    class and the feature counts it maps between. Returns the figure.
    """
    if not isinstance(getattr(feed_forward, "layers", None), torch.nn.Sequential):
        raise TypeError(f"expected a gpt.FeedForward, got {type(feed_forward).__name__}")
    steps = trace_steps(feed_forward, example_input, expand=("layers",))
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
        ax.text(x + bar_w / 2, middle + h / 2 + 0.12, f"{step.shape[-1]:,}", ha="center",
                fontsize=9)
        ends = {0: "input\n", len(steps) - 1: "output\n"}
        ax.text(x + bar_w / 2, middle - tallest / 2 - 0.15, ends.get(i, "") + str(step.shape),
                ha="center", va="top", fontsize=8, color=SHAPE_COLOR)
    for i, step in enumerate(steps[1:]):  # the layer between bar i and bar i + 1
        left, right = xs[i] + bar_w, xs[i + 1]
        h_in, h_out = height[i], height[i + 1]
        corners = [(left, middle - h_in / 2), (left, middle + h_in / 2),
                   (right, middle + h_out / 2), (right, middle - h_out / 2)]
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


def _draw_cells(ax, tensor, left, top, groups, names):
    """Draw a 2-D tensor as a grid, a 3-D one as its matrices side by side; return the corners.

    Each cell shows its value, coloured by `groups` (same colour: same result element).
    `names` labels each matrix. Returns the (left, top) corner of each matrix.
    """
    corners = []
    for matrix, group, name in zip(tensor.reshape(-1, *tensor.shape[-2:]),
                                   groups.reshape(-1, *tensor.shape[-2:]), names):
        corners.append((left, top))
        ax.text(left, top + 0.05, name, fontsize=8, family="monospace", color=SHAPE_COLOR)
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
    values and shapes shown are those of real `mean` calls. Returns the figure.
    """
    if any(x.dim() not in (2, 3) for x in tensors):
        raise ValueError(f"tensors must be 2-D or 3-D, got shapes {[list(x.shape) for x in tensors]}")
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
        result_groups = torch.arange(kept.numel()).reshape(kept.shape)
        matrix_names = [f"x[{i}]" for i in range(x.shape[0])] if x.dim() == 3 else ["x"]
        corners = _draw_cells(ax, x, 0.3, top - 0.7, result_groups.expand(x.shape),
                              matrix_names)
        _draw_reduced_axis(ax, x, dim, corners)
        right = max(cx for cx, _ in corners) + x.shape[-1] * CELL
        ax.text(right + 0.3, top - 0.7 - x.shape[-2] * CELL / 2, "→", fontsize=16,
                va="center")
        kept_names = ["mean"] if kept.dim() == 2 else [f"mean[{i}]" for i in range(len(kept))]
        _draw_cells(ax, kept, right + 0.8, top - 0.7, result_groups, kept_names)
        top -= height
    return fig


# ---- Generation: one step of gpt.generate_text_simple, line by line.


def generation_steps(model, idx, context_size):
    """Run `gpt.generate_text_simple` for one new token; note each line that makes a tensor.

    Returns (code, shape) pairs in running order: the code of every line of the function that
    produced a tensor (the model call included) and that tensor's shape.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    code = gpt.generate_text_simple.__code__
    shapes = {}  # line number -> shape of the tensor it produced; dicts keep running order

    class LineRecorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            caller = sys._getframe(1)  # only calls made by the function itself, not the model
            if caller.f_code is code and isinstance(result, torch.Tensor):
                shapes[caller.f_lineno] = list(result.shape)
            return result

    def after_model_call(module, args, output):
        frame = sys._getframe()
        while frame is not None and frame.f_code is not code:
            frame = frame.f_back
        if frame is not None:
            shapes[frame.f_lineno] = list(output.shape)

    hook = model.register_forward_hook(after_model_call)
    try:
        with torch.random.fork_rng(devices=[]), LineRecorder():
            gpt.generate_text_simple(model, idx, 1, context_size)
    finally:
        hook.remove()
    lines = [linecache.getline(code.co_filename, number) for number in shapes]
    return [(line.split("  #")[0].strip(), shape) for line, shape in zip(lines, shapes.values())]


def draw_generation_loop(model, idx, context_size):
    """Draw one step of greedy generation (`gpt.generate_text_simple`) and its loop back.

    Each box is a line of the function that makes a tensor, with the shape it had when one
    step ran on `model` and the ids `idx`. Returns the figure; end the cell with `plt.show()`.
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
    first step chose. The dashed line is the uniform probability 1 / vocab_size. Returns the
    figure; end the cell with `plt.show()`.
    """
    steps, vocab_size = step_probas.shape
    cols = min(3, steps)
    rows = -(-steps // cols)
    height = 2.6 * rows
    fig, axes = plt.subplots(rows, cols, figsize=(10, height), sharex=True, squeeze=False)
    fig.subplots_adjust(left=0.13, right=0.98, top=1 - 0.6 / height, bottom=0.95 / height,
                        wspace=0.6, hspace=0.35)
    for step, ax in enumerate(axes.flat):
        if step >= steps:
            ax.set_visible(False)
            continue
        top = torch.topk(step_probas[step], top_k)
        ids = top.indices.tolist()
        labels = [repr(tokenizer.decode([i])) for i in ids]
        colors = [SHORTCUT_COLOR if i == int(chosen[step]) else "tab:blue" for i in ids]
        bars = ax.barh(range(top_k), (top.values * 1e4).tolist(), color=colors,
                       tick_label=labels)
        for bar in bars:
            bar.set_gid("candidate bar")
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


# ---- The chapter's roadmap, read from the notebooks themselves.


@dataclass
class Section:
    """One chapter notebook: its section number, its title and what it builds."""

    number: str  # "4.3"
    title: str  # "GELU and the feed-forward network"
    builds: list  # the classes its code cells define, e.g. ["GELU", "FeedForward"]; where it
    # defines none, the functions its `#| export` cells define (["generate_text_simple"])


def _top_level(source, kind):
    """Names of the classes (kind ast.ClassDef) or functions a cell's top-level code defines
    (IPython's %magic lines left out)."""
    python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))
    return [node.name for node in ast.parse(python).body if isinstance(node, kind)]


def chapter_sections(notebook_dir=NOTEBOOKS):
    """The chapter notebooks in `notebook_dir` (title "# 4.N ..."), in file-name order."""
    if not Path(notebook_dir).is_dir():
        raise FileNotFoundError(f"no notebook folder at {notebook_dir} (see README, set-up)")
    sections = []
    for path in sorted(Path(notebook_dir).glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = ["".join(cell["source"]) for cell in cells]
        heading = sources[0].splitlines()[0] if sources and sources[0] else ""
        number, _, title = heading.removeprefix("# ").partition(" ")
        if not (heading.startswith("# 4.") and number[2:].isdigit()):
            continue  # not a chapter section (the appendix, say)
        code = [(source, source.split("\n")[0].strip() == "#| export")
                for cell, source in zip(cells, sources) if cell["cell_type"] == "code"
                and "predict" not in cell.get("metadata", {}).get("tags", [])]  # not the quiz
        builds = [name for source, _ in code for name in _top_level(source, ast.ClassDef)]
        builds = builds or [name for source, exported in code if exported
                            for name in _top_level(source, ast.FunctionDef)]
        sections.append(Section(number, title, builds))
    return sections


def draw_roadmap(current, notebook_dir=NOTEBOOKS):
    """The chapter's notebooks in build order, section `current` (e.g. "4.3") highlighted.

    Each box shows a notebook's number and title; under it, the classes it builds (or, in 4.7,
    the function). All are read from the notebooks. Returns the figure; end the cell with `plt.show()`.
    """
    if not isinstance(current, str):
        raise TypeError(f"current must be a section number such as '4.3', got {current!r}")
    sections = chapter_sections(notebook_dir)
    numbers = [section.number for section in sections]
    if current not in numbers:
        raise ValueError(f"no chapter notebook is section {current!r}; sections: {numbers}")
    box_w, gap, box_h = 1.3, 0.2, 0.62
    fig, ax = canvas(0.2 + len(sections) * (box_w + gap) - gap, box_h + 0.6,
                     f"Chapter 4 step by step: this is {current} (under each: what it builds)")
    done = True
    for i, section in enumerate(sections):
        x, y = 0.1 + i * (box_w + gap), -0.05
        is_current = section.number == current
        face = HIGHLIGHT_COLOR if is_current else BOX_COLOR if done else "0.95"
        ax.add_patch(FancyBboxPatch((x, y - box_h), box_w, box_h, facecolor=face, gid="step",
                                    boxstyle="round,pad=0,rounding_size=0.06",
                                    edgecolor=SHORTCUT_COLOR if is_current else PATH_COLOR,
                                    linewidth=2 if is_current else 1))
        text_color = "black" if done else SHAPE_COLOR
        ax.text(x + box_w / 2, y - 0.13, section.number, ha="center", va="center",
                fontsize=9, fontweight="bold", color=text_color)
        title = "\n".join(textwrap.wrap(section.title, 20, break_on_hyphens=False))
        ax.text(x + box_w / 2, y - 0.4, title, ha="center", va="center", fontsize=7.5,
                color=text_color)
        builds = "\n".join(textwrap.wrap(", ".join(section.builds) or "(nothing)", 22,
                                          break_long_words=False))
        ax.text(x + box_w / 2, y - box_h - 0.06, builds, ha="center", va="top",
                fontsize=6.5, family="monospace", color=SHAPE_COLOR)
        if i:
            draw_arrow(ax, [(x - gap + 0.02, y - box_h / 2), (x - 0.02, y - box_h / 2)])
        done = done and not is_current
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


# ---- Attention heads: how MultiHeadAttention.forward splits each token vector.

HEAD_COLORS = plt.get_cmap("Set3").colors  # 12 colours: one per head of GPT-2 small


def head_split_steps(attention, x):
    """Run `attention` on `x` and record how its `forward` splits the queries into heads.

    A hook replaces W_query's output by the position of each of its entries (0, 1, 2, ...), so
    the tensors made from it on the queries' line of `forward` show where every entry goes.
    Returns (call, tensor) pairs in running order: ("W_query(x)", positions), then each call on
    that line, e.g. ("view(2, 4, 12, 64)", result), with the results as integer positions.
    """
    if not isinstance(getattr(attention, "W_query", None), torch.nn.Linear):
        raise TypeError(f"expected a MultiHeadAttention, got {type(attention).__name__}")
    code = type(attention).forward.__code__
    steps, made, line = [], set(), []  # made: ids of the tensors derived from the positions

    def number_entries(module, args, output):
        positions = torch.arange(output.numel(), dtype=output.dtype).view(output.shape)
        steps.append(("W_query(x)", positions))
        made.add(id(positions))
        return positions

    class SplitRecorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            caller = sys._getframe(1)  # only calls written in forward itself
            if (caller.f_code is code and args and id(args[0]) in made
                    and caller.f_lineno in (line or [caller.f_lineno])):
                line[:] = [caller.f_lineno]  # later lines use the queries: not the split
                steps.append((f"{func.__name__}({', '.join(map(repr, args[1:]))})", result))
                made.add(id(result))
            return result

    hook = attention.W_query.register_forward_hook(number_entries)
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad(), SplitRecorder():
            attention(x)
    finally:
        hook.remove()
    return [(call, tensor.long()) for call, tensor in steps]


def _head_blocks(positions, num_tokens, d_out, head_dim):
    """(token, head) of each block of `head_dim` entries along the last axis, or None if mixed.

    A block belongs to head h of token t when it holds that token's features h * head_dim to
    (h + 1) * head_dim - 1, in order.
    """
    blocks = positions.reshape(-1, head_dim)
    token, feature = blocks // d_out % num_tokens, blocks % d_out
    whole = ((token == token[:, :1]).all(dim=1)
             & (feature == feature[:, :1] + torch.arange(head_dim)).all(dim=1)
             & (feature[:, 0] % head_dim == 0))
    return [(t, f // head_dim) if ok else None
            for t, f, ok in zip(token[:, 0].tolist(), feature[:, 0].tolist(), whole.tolist())]


def _caption(cells):
    """("token", t) or ("head", h) when all `cells` share that token or head, else None."""
    for index, kind in enumerate(("token", "head")):
        if all(cells) and len({cell[index] for cell in cells}) == 1:
            return kind, cells[0][index]
    return None


def draw_head_split(attention, x):
    """Draw how `attention.forward` splits the queries into heads, for the first sequence of `x`.

    The steps come from a real run (see `head_split_steps`): W_query's output, then each call
    of the split with the shape it gave. In every step, axis 1 runs down the rows. A cell
    stands for `head_dim` entries of one token, coloured by the head its features belong to and
    labelled "t<token>·h<head>". Returns the figure; end the cell with `plt.show()`.
    """
    steps = head_split_steps(attention, x)
    b, num_tokens, d_out = steps[0][1].shape
    head_dim = steps[-1][1].shape[-1]
    cell_w, cell_h, row_h, left = 0.5, 0.22, 0.3, 0.85
    panels = []  # (heading, rows of (token, head) cells)
    for i, (call, tensor) in enumerate(steps):
        first = tensor[0].reshape(tensor.shape[1], -1)  # sequence 0: one row per index of axis 1
        rows = [_head_blocks(row, num_tokens, d_out, head_dim) for row in first]
        kinds = {caption[0] if caption else "mixed" for caption in map(_caption, rows)}
        axis = f"rows: {kinds.pop()}s" if len(kinds) == 1 else "rows: mixed"
        panels.append((f"{'.' if i else ''}{call}: {list(tensor.shape)}    {axis}", rows))
    heights = [0.6 + len(rows) * row_h for _, rows in panels]
    grid_w = [len(rows[0]) * (cell_w + 0.08) for _, rows in panels]
    width = left + max(*grid_w, grid_w[-1] + 2.6)  # room for the note beside the last step
    fig, ax = canvas(width, sum(heights) + 0.3,
                     f"Splitting the queries of sequence 0 (the first of {b}) "
                     f"into heads of {head_dim} features")
    top = 0.0
    for i, ((heading, rows), height) in enumerate(zip(panels, heights)):
        ax.text(0.1, top - 0.22, heading, fontsize=9, family="monospace", va="center")
        gap = 0.08 if i else 0.0  # W_query's output: one unbroken vector per token
        for r, cells in enumerate(rows):
            y = top - 0.55 - r * row_h
            for c, cell in enumerate(cells):
                x0 = left + c * (cell_w + gap)
                face = HEAD_COLORS[cell[1] % len(HEAD_COLORS)] if cell else "white"
                ax.add_patch(Rectangle((x0, y - cell_h), cell_w, cell_h, facecolor=face,
                                       edgecolor=PATH_COLOR, hatch=None if cell else "///",
                                       gid="head cell"))
                ax.text(x0 + cell_w / 2, y - cell_h / 2,
                        f"t{cell[0]}·h{cell[1]}" if cell else "mixed",
                        ha="center", va="center", fontsize=6.5)
            caption = _caption(cells)
            ax.text(left - 0.1, y - cell_h / 2, f"{caption[0]} {caption[1]}" if caption else "",
                    ha="right", va="center", fontsize=7.5, color=SHAPE_COLOR)
        if i == 0:  # the features in each column
            for c in range(len(rows[0])):
                ax.text(left + (c + 0.5) * cell_w, top - 0.5,
                        f"{c * head_dim}–{(c + 1) * head_dim - 1}", ha="center", va="bottom",
                        fontsize=6, color=SHAPE_COLOR)
        if i == len(panels) - 1 and heading.endswith("rows: heads"):
            ax.text(left + grid_w[-1] + 0.25, top - 0.55 - len(rows) * row_h / 2,
                    f"each row: one head's [{len(rows[0])}, {head_dim}] matrix\n"
                    f"({len(rows[0])} tokens × {head_dim} features),\n"
                    "the input of that head's attention", fontsize=8, va="center")
        top -= height
    ax.text(0.1, top - 0.05, f"each cell: {head_dim} features of one token "
            f"(t = its token, h = the head those features belong to)", fontsize=8,
            color=SHAPE_COLOR, va="top")
    return fig
