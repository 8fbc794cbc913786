"""Pictures for the course notebooks, drawn from the code they show.

Not part of the chapter: the notebooks call these functions to draw diagrams and plots, so a
learner reads one line instead of the drawing code. `pip install -e .` makes it importable.
The data paths come from running an example through a module with forward hooks, the shapes of
the generation loop from running one step of it; the roadmap and the lines of the loop are
written down here, and tests/chapter/test_figures.py checks them against the notebooks and gpt.py.
Each draw_* function returns its figure; a notebook cell ends with `plt.show()`.
"""

import inspect
import textwrap
from dataclasses import dataclass, field

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


# ---- The data path of a module: forward hooks record its calls, autograd how they connect.


@dataclass
class Step:
    """One step of a forward pass: an input, a submodule call, an addition or the positions."""

    name: str  # unique, e.g. "in_idx", "norm1", "drop_shortcut_1", "add_1"
    label: str  # the text of the step's box, e.g. "norm1: LayerNorm"
    shape: list  # the shape of the step's output
    inputs: list  # names of the steps whose outputs it reads
    scope: str = ""  # the opened-up submodule it runs inside (see trace_steps), or ""
    calls: list = field(default_factory=list)  # the submodule(s) it calls


def describe(module):
    """A submodule's class; for a Sequential, what it chains (e.g. "12 × TransformerBlock")."""
    if not isinstance(module, torch.nn.Sequential):
        return type(module).__name__
    kinds = [type(child).__name__ for child in module]
    return f"{len(kinds)} × {kinds[0]}" if len(set(kinds)) == 1 else " → ".join(kinds)


def _next_sibling(module, path, after):
    """Whether submodule `path` follows submodule `after` in their list and is of its class,
    e.g. trf_blocks.2 after trf_blocks.1."""
    parent, _, index = after.rpartition(".")
    return (index.isdigit() and path == f"{parent}.{int(index) + 1}"
            and type(module.get_submodule(path)) is type(module.get_submodule(after)))


def trace_steps(module, example_input, expand=()):
    """The data path of `module.forward` with each step's output shape.

    Forward hooks record each submodule call of a real run on `example_input` as one step,
    except for the submodules listed in `expand` (paths such as "trf_blocks.0"), the ones above
    them and lists of modules, whose own calls are recorded instead. The autograd graph of that
    run (the input is made to require gradients) says which earlier steps each input was
    computed from, and where two of them were added ("+"). The positions forward makes with
    `torch.arange(n)` are a second input ("positions 0..n-1": they read only the input's
    length). A run of like siblings, each reading the one before (trf_blocks.1, trf_blocks.2,
    ...), is one step.
    """
    x = example_input.detach()
    if x.is_floating_point():
        x.requires_grad_()
    first_arg = next(iter(inspect.signature(module.forward).parameters))
    steps = [Step(first_arg, f"{first_arg} (input)", list(x.shape), [])]
    # A tensor or an autograd node -> the step that made it; the keys keep the tensors alive.
    made_by = {x: first_arg}
    scopes = [""]  # the opened-up submodules running, innermost last
    seen = {}  # how often each step name was given

    def new_step(name, label, shape, inputs, calls=()):
        seen[name] = seen.get(name, -1) + 1  # a second call of drop_shortcut: drop_shortcut_1
        name = f"{name}_{seen[name]}" if seen[name] else name
        steps.append(Step(name, label, list(shape), inputs, scopes[-1], list(calls)))
        return name

    def read(tensors):
        """Names of the steps that the tensors among `tensors` are, or were computed from."""
        return list(dict.fromkeys(name for tensor in tensors if isinstance(tensor, torch.Tensor)
                                  for name in sources(tensor)))

    def sources(tensor):
        if tensor not in made_by and tensor.grad_fn is None:  # made in forward from no step
            n = len(tensor) if tensor.dim() == 1 else 0  # the meta device has no values to check
            arange = n and (tensor.is_meta or torch.equal(tensor.cpu(), torch.arange(n)))
            label = f"positions 0..{n - 1}" if arange else "made in forward"
            made_by[tensor] = new_step("positions", label, tensor.shape, [])
        if tensor in made_by:
            return [made_by[tensor]]
        return from_node(tensor.grad_fn, tensor.shape)

    def from_node(node, shape=None):
        if node is None:  # a tensor that needs no gradient
            return []
        if node in made_by:
            return [made_by[node]]
        variable = getattr(node, "variable", None)  # a tensor autograd starts from
        if variable is not None:
            return [made_by[variable]] if variable in made_by else []  # else a weight
        inputs = list(dict.fromkeys(name for parent, _ in node.next_functions
                                    for name in from_node(parent)))
        if node.name() != "AddBackward0":
            return inputs
        if shape is None:  # an addition read by another addition
            shape = torch.broadcast_shapes(*(step.shape for step in steps if step.name in inputs))
        made_by[node] = new_step("add", "+", shape, inputs)
        return [made_by[node]]

    def enter(path, args):  # what an opened-up submodule reads was made before it started
        read(args)
        scopes.append(path)

    def leave(out):  # its output may be an addition made inside it
        read([out])
        scopes.pop()

    def call(path, args, out):
        inputs, last = read(args), steps[-1]
        if inputs == [last.name] and last.calls and _next_sibling(module, path, last.calls[-1]):
            last.calls.append(path)  # e.g. trf_blocks.1–11, drawn as one box
            last.shape = list(out.shape)
            shown = last.label.partition(": ")[0].partition("–")[0]  # e.g. "trf_blocks.1"
            kind = type(module.get_submodule(path)).__name__
            last.label = f"{shown}–{path.rpartition('.')[2]}: {len(last.calls)} × {kind}"
        else:
            shown = path.removeprefix(f"{scopes[-1]}.")
            new_step(path, f"{shown}: {describe(module.get_submodule(path))}", out.shape,
                     inputs, [path])
        made_by[out] = steps[-1].name
        if out.grad_fn is not None:
            made_by[out.grad_fn] = steps[-1].name

    opened = {""} | {".".join(path.split(".")[:n]) for path in expand
                     for n in range(1, path.count(".") + 2)}
    hooks = []
    for path, sub in module.named_modules():  # parents first
        if path.rpartition(".")[0] in opened and isinstance(sub, torch.nn.ModuleList):
            opened.add(path)  # a ModuleList has no forward: its children are called
        if path in expand:
            hooks.append(sub.register_forward_pre_hook(
                lambda _, args, path=path: enter(path, args)))
            hooks.append(sub.register_forward_hook(lambda _, args, out: leave(out)))
        elif path not in opened and path.rpartition(".")[0] in opened:
            hooks.append(sub.register_forward_hook(
                lambda _, args, out, path=path: call(path, args, out)))
    try:
        # Dropout draws random numbers even here: a drawing must not shift the caller's next ones.
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            read([module(x)])  # e.g. a block's last addition
    finally:
        for hook in hooks:
            hook.remove()
    return steps


def draw_module(module, example_input, title, expand=()):
    """Draw `module`'s data path top to bottom, each step with the shape of its output.

    Steps at the same depth sit side by side; a connection that skips rows (a shortcut) runs
    down the right-hand side. Submodules in `expand` (e.g. ("trf_blocks.0",)) are drawn opened
    up, framed.
    """
    steps = trace_steps(module, example_input, expand)
    depth = {}  # the row of each step: one below the deepest step it reads
    for step in steps:
        depth[step.name] = 1 + max((depth[name] for name in step.inputs), default=-1)
    edges = [(source, step.name) for step in steps for source in step.inputs]
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
        if step.label == "+":
            place[step.name] = (x, y, RADIUS, RADIUS)
            draw_adder(ax, x, y, str(step.shape))
        else:  # inputs, which read no other step, in grey
            place[step.name] = (x, y, slot / 2 - 0.06, BOX_H / 2)
            color = BOX_COLOR if step.inputs else INPUT_COLOR
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


def draw_roadmap(current):
    """The chapter's notebooks in build order, section `current` (e.g. "4.3") highlighted.

    Each box shows a notebook's number and title; under it, what it builds.
    """
    box_w, gap, box_h = 1.3, 0.2, 0.62
    fig, ax = canvas(0.2 + len(CHAPTER_STEPS) * (box_w + gap) - gap, box_h + 0.6,
                     f"Chapter 4 step by step: this is {current} (under each: what it builds)")
    for i, (number, title, builds) in enumerate(CHAPTER_STEPS):
        x, y = 0.1 + i * (box_w + gap), -0.05
        is_current, reached = number == current, number <= current  # "4.1" < "4.2" as text too
        face = HIGHLIGHT_COLOR if is_current else BOX_COLOR if reached else "0.95"
        ax.add_patch(FancyBboxPatch((x, y - box_h), box_w, box_h, boxstyle=ROUNDED, gid="step",
                                    facecolor=face, linewidth=2 if is_current else 1,
                                    edgecolor=SHORTCUT_COLOR if is_current else PATH_COLOR))
        text_color = "black" if reached else SHAPE_COLOR
        ax.text(x + box_w / 2, y - 0.13, number, ha="center", va="center",
                fontsize=9, fontweight="bold", color=text_color)
        title = "\n".join(textwrap.wrap(title, 20, break_on_hyphens=False))
        ax.text(x + box_w / 2, y - 0.4, title, ha="center", va="center", fontsize=7.5,
                color=text_color)
        builds = "\n".join(textwrap.wrap(", ".join(builds), 22, break_long_words=False))
        ax.text(x + box_w / 2, y - box_h - 0.06, builds, ha="center", va="top",
                fontsize=6.5, family="monospace", color=SHAPE_COLOR)
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


# ---- Attention heads: how MultiHeadAttention.forward splits each token vector.

HEAD_COLORS = plt.get_cmap("Set3").colors  # 12 colours: one per head of GPT-2 small


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


def _caption(cells):
    """("token", t) when all `cells` of a row belong to token t, else ("head", h) of the first."""
    return ("token", cells[0][0]) if len({t for t, _ in cells}) == 1 else ("head", cells[0][1])


def draw_head_split(attention, x):
    """Draw how `attention.forward` splits the queries into heads, for the first sequence of `x`.

    The steps are those of `head_split_steps`: W_query's output, then each call of the split
    with the shape it gives. In every step, axis 1 runs down the rows. A cell stands for
    `head_dim` entries of one token, coloured by the head its features belong to and labelled
    "t<token>·h<head>".
    """
    steps = head_split_steps(attention, x)
    b, head_dim, d_out = len(x), attention.head_dim, attention.d_out
    cell_w, cell_h, row_h, left = 0.5, 0.22, 0.3, 0.85
    panels = []  # (heading, rows of (token, head) cells)
    for i, (call, tensor) in enumerate(steps):
        first = tensor[0].reshape(tensor.shape[1], -1)  # sequence 0: one row per index of axis 1
        # A cell per block of head_dim entries: the (token, head) of its first entry's position.
        rows = [[(p // d_out, p % d_out // head_dim) for p in row[::head_dim].tolist()]
                for row in first]
        axis = f"rows: {_caption(rows[0])[0]}s"
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
            for c, (token, head) in enumerate(cells):
                x0 = left + c * (cell_w + gap)
                face = HEAD_COLORS[head % len(HEAD_COLORS)]
                ax.add_patch(Rectangle((x0, y - cell_h), cell_w, cell_h, facecolor=face,
                                       edgecolor=PATH_COLOR, gid="head cell"))
                ax.text(x0 + cell_w / 2, y - cell_h / 2, f"t{token}·h{head}", ha="center",
                        va="center", fontsize=6.5)
            ax.text(left - 0.1, y - cell_h / 2, " ".join(map(str, _caption(cells))),
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
