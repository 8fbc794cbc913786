"""Pictures for 09_gpt2_to_llama_qwen.ipynb, computed from modern.py's code.

    draw_rope_rotation(head_dim=16, base=10_000.0, pairs=(0, 1, 2))   # apply_rope, drawn
    draw_wavelengths({"base 10,000": rope_frequencies(64, 10_000.0)})  # one curve per setting
    draw_gpt2_vs_modern(gpt_model, modern_model)                       # the two data paths
"""

import math

import matplotlib.pyplot as plt
import torch

from bonus.gpt2_to_llama_qwen.modern import apply_rope, rope_frequencies, rotary_angles
from gpt_figures import (
    BOX_COLOR,
    BOX_H,
    HIGHLIGHT_COLOR,
    PATH_COLOR,
    ROW,
    SHAPE_COLOR,
    SHORTCUT_COLOR,
    add_legend,
    canvas,
    draw_adder,
    draw_arrow,
    draw_box,
)


def draw_rope_rotation(head_dim=16, base=10_000.0, pairs=(0, 1, 2), num_positions=8):
    """One panel per pair in `pairs`: the pair (1, 0) of a query, rotated by apply_rope at
    positions 0 .. num_positions - 1, one arrow per position. Returns the figure."""
    inv_freq = rope_frequencies(head_dim, base)
    x = torch.zeros(1, 1, num_positions, head_dim)  # (batch, heads, positions, head_dim)
    x[..., list(pairs)] = 1.0  # each drawn pair starts as (1, 0): feature i is 1, i + d/2 is 0
    rotated = apply_rope(x, *rotary_angles(torch.arange(num_positions), inv_freq))[0, 0]
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.3 * len(pairs), 3.9), squeeze=False)
    colors = plt.get_cmap("viridis")(torch.linspace(0, 0.9, num_positions).tolist())
    circle = torch.linspace(0, 2 * math.pi, 200)
    for ax, i in zip(axes[0], pairs):
        ax.plot(circle.cos().tolist(), circle.sin().tolist(), color="0.85", linewidth=1)
        points = zip(rotated[:, i].tolist(), rotated[:, i + head_dim // 2].tolist())
        for m, ((px, py), color) in enumerate(zip(points, colors)):
            ax.annotate("", xy=(px, py), xytext=(0, 0), gid="position arrow",
                        arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 1.4})
            ax.text(1.2 * px, 1.2 * py, str(m), ha="center", va="center", fontsize=8, color=color)
        ax.set(xlim=(-1.4, 1.4), ylim=(-1.4, 1.4), aspect="equal", xticks=[], yticks=[])
        ax.set_xlabel(f"feature {i}")
        ax.set_ylabel(f"feature {i + head_dim // 2}")
        ax.set_title(f"pair {i}: {inv_freq[i].item():.3g} rad per position", fontsize=10)
    fig.suptitle(f"RoPE: the pair (1, 0) at positions 0 to {num_positions - 1} "
                 f"(head_dim {head_dim}, base {base:,.0f})")
    fig.tight_layout()
    return fig


def draw_wavelengths(frequencies, marks=None):
    """The wavelength 2π / θ_i of each pair i, one curve per entry of `frequencies` (label ->
    the angles per position, as rope_frequencies returns them), on a log scale. `marks` (label
    -> a number of tokens) adds dotted horizontal lines, e.g. a context length. Returns the figure."""
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for label, inv_freq in frequencies.items():
        wavelengths = 2 * math.pi / inv_freq
        ax.plot(range(len(inv_freq)), wavelengths.tolist(), ".-", label=label)
    for label, tokens in (marks or {}).items():
        ax.axhline(tokens, color="0.45", linestyle=":", linewidth=1)
        ax.text(0, tokens * 1.15, label, fontsize=8, color="0.3", va="bottom")
    ax.set_yscale("log")
    ax.set_xlabel("pair i (features i and i + head_dim / 2)")
    ax.set_ylabel(r"wavelength $2\pi / \theta_i$ (tokens)")
    ax.set_title("RoPE: how many tokens one full turn takes")
    ax.legend(loc="lower right", fontsize=9)
    fig.tight_layout()
    return fig


# ---- The data paths side by side ------------------------------------------------------------------

ABSENT = "none"  # a row one model has and the other has not


def _learns(module):
    return "learns " + " and ".join(name for name, _ in module.named_parameters(recurse=False))


def _gpt_rows(model):
    """(label, detail) of each row of the chapter's GPTModel; a block's rows once."""
    block = model.trf_blocks[0]
    att, layers = block.att, block.ff.layers
    drop = f"Dropout(p={block.drop_shortcut.p})"
    return [
        ("tok_emb: Embedding", "a vector per token"),
        ("+ pos_emb: Embedding", f"learned, {model.pos_emb.num_embeddings:,} positions"),
        ("drop_emb", f"Dropout(p={model.drop_emb.p})"),
        (f"norm1: {type(block.norm1).__name__}", _learns(block.norm1)),
        (f"att: {type(att).__name__}", f"{att.num_heads} heads, each its own keys and values"),
        ("drop_shortcut", drop),
        ("+", ""),
        (f"norm2: {type(block.norm2).__name__}", _learns(block.norm2)),
        (f"ff: {type(block.ff).__name__}", " → ".join(type(layer).__name__ for layer in layers)),
        ("drop_shortcut", drop),
        ("+", ""),
        (f"final_norm: {type(model.final_norm).__name__}", _learns(model.final_norm)),
        ("out_head: Linear", "its own weights"),
    ]


def _modern_rows(model):
    """The rows of a ModernGPT, aligned with _gpt_rows: ABSENT where it has no such part."""
    block = model.trf_blocks[0]
    att, ff = block.att, block.ff
    qk_norm = "" if isinstance(att.q_norm, torch.nn.Identity) else ", QK-norm"
    tied = model.out_head.weight is model.tok_emb.weight
    return [
        ("tok_emb: Embedding", "a vector per token"),
        (ABSENT, "no position embedding"),
        (ABSENT, "no dropout"),
        (f"norm1: {type(block.norm1).__name__}", _learns(block.norm1)),
        (f"att: {type(att).__name__}",
         f"{att.num_heads} query heads share {att.num_kv_groups} key/value heads{qk_norm}"),
        (ABSENT, "no dropout"),
        ("+", ""),
        (f"norm2: {type(block.norm2).__name__}", _learns(block.norm2)),
        ("ff: FeedForward (SwiGLU)", f"down(SiLU(gate(x)) · up(x)), {ff.gate.out_features:,} wide"),
        (ABSENT, "no dropout"),
        ("+", ""),
        (f"final_norm: {type(model.final_norm).__name__}", _learns(model.final_norm)),
        ("out_head: Linear", "tied: tok_emb's weights" if tied else "its own weights"),
    ]


SHORTCUTS = [(3, 6), (7, 10)]  # a block's: (row a shortcut branches off above, row of its "+")


def draw_gpt2_vs_modern(gpt_model, modern_model):
    """The chapter's GPTModel (left) and a modern.py ModernGPT (right), input to output, with one
    transformer block opened up. Rows align what corresponds; on the right, what changed is
    highlighted and what was dropped is a dashed outline. Returns the figure."""
    columns = [("GPT-2 (the chapter's GPTModel)", _gpt_rows(gpt_model), gpt_model),
               ("Llama 3 / Qwen3 (ModernGPT)", _modern_rows(modern_model), modern_model)]
    n_rows, half_w, top = len(columns[0][1]), 1.55, -0.75
    width, height = 10.6, top * -1 + n_rows * ROW + 0.55
    fig, ax = canvas(width, height, "The data path of GPT-2 and of today's open models")
    y_of = [top - ROW / 2 - r * ROW for r in range(n_rows)]
    for c, (heading, rows, model) in enumerate(columns):
        x = 2.45 + c * 5.15
        ax.text(x, top + 0.3, heading, ha="center", va="center", fontsize=11, weight="bold")
        ax.text(x, top + 0.05, "token ids", ha="center", va="center", fontsize=8, color=SHAPE_COLOR)
        draw_arrow(ax, [(x, top - 0.05), (x, y_of[0] + BOX_H / 2)])
        for r, (label, detail) in enumerate(rows):
            y = y_of[r]
            if r < n_rows - 1:  # the arrow to the next row
                below = y_of[r + 1] + (0.15 if rows[r + 1][0] == "+" else BOX_H / 2)
                draw_arrow(ax, [(x, y - (0.15 if label == "+" else BOX_H / 2)), (x, below)])
            if label == "+":
                draw_adder(ax, x, y, "")
            elif label == ABSENT:
                ax.add_patch(plt.Rectangle((x - half_w, y - BOX_H / 2), 2 * half_w, BOX_H,
                                           fill=False, edgecolor="0.6", linestyle="--",
                                           gid="absent"))
                ax.text(x, y, detail, ha="center", va="center", fontsize=9, color="0.45")
            else:
                changed = c == 1 and (label, detail) != columns[0][1][r]
                draw_box(ax, x, y, half_w, label, detail, HIGHLIGHT_COLOR if changed else BOX_COLOR)
        lane = x + half_w + 0.3
        for start, end in SHORTCUTS:  # branch off above the norm, join at the "+"
            branch_y = y_of[start] + BOX_H / 2 + 0.1
            draw_arrow(ax, [(x, branch_y), (lane, branch_y), (lane, y_of[end]),
                            (x + 0.15, y_of[end])], SHORTCUT_COLOR, 1.6)
            ax.plot(x, branch_y, "o", color=SHORTCUT_COLOR, markersize=4)
        block_top = y_of[SHORTCUTS[0][0]] + BOX_H / 2 + 0.2  # the block: rows 3 to 10
        block_bottom = y_of[SHORTCUTS[-1][1]] - 0.25
        ax.add_patch(plt.Rectangle((x - half_w - 0.2, block_bottom), 2 * half_w + 0.75,
                                   block_top - block_bottom, fill=False, edgecolor=SHAPE_COLOR,
                                   linestyle="--", linewidth=1))
        ax.text(x - half_w - 0.28, (block_top + block_bottom) / 2,
                f"transformer block, × {len(model.trf_blocks)}", rotation=90, ha="right",
                va="center", fontsize=8, color=SHAPE_COLOR)
    # RoPE: the positions' angles go into every attention layer, where queries and keys turn.
    rope_x, att_left = 2.45 + 5.15 / 2 + 0.15, 2.45 + 5.15 - half_w
    draw_box(ax, rope_x, y_of[4], 0.55, "RoPE", "turns q and k", HIGHLIGHT_COLOR)
    draw_arrow(ax, [(rope_x + 0.55, y_of[4]), (att_left, y_of[4])])
    add_legend(ax, [("data path", PATH_COLOR, 1.0), ("shortcut", SHORTCUT_COLOR, 1.6),
                    ("changed", HIGHLIGHT_COLOR, 6)])
    return fig
