"""Pictures of what a GPTModel has learned: loss curves, generations, attention, next-token odds.

Every function takes any `gpt.GPTModel` (trained or not, any size) and token ids in that model's
vocabulary, so you can point them at a model you built or trained yourself. `decode` turns one
id into the text shown on the axes, e.g. `lambda i: tokenizer.decode([i])` for GPT-2's
vocabulary. Models are run in eval mode without gradients and left in the mode they were in.
"""

import textwrap

import matplotlib.pyplot as plt
import torch

import trained

# sampling_distribution: the distribution train.generate draws from, drawn by this module too
from bonus.watch_it_learn.train import in_eval_mode, sampling_distribution


@in_eval_mode
def attention_weights(model, idx):
    """The attention weights of every layer and head on one sequence of ids `idx` (shape
    (1, num_tokens)): a tensor (n_layers, n_heads, num_tokens, num_tokens) whose row t holds
    how much position t attends to each position; each row sums to 1."""
    # trained.attention_weights reads what each attention hands its dropout, which passes the
    # weights on unchanged only in eval mode: hence the wrapper.
    return trained.attention_weights(model, idx)[0]


@in_eval_mode
def next_token_logits(model, idx):
    """The model's logits for the token after the last one of `idx` (1, num_tokens)."""
    return model(idx)[0, -1]


def next_token_probabilities(model, idx):
    """softmax of the model's logits for the token after the last one of `idx` (1, num_tokens)."""
    return torch.softmax(next_token_logits(model, idx), dim=-1)


def draw_loss_curves(history, title="Training and held-out loss"):
    """The losses of a `train.train` history; a dotted line marks the lowest held-out loss."""
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    ax.plot(history["step"], history["train_loss"], "o-", label="training text")
    ax.plot(history["step"], history["val_loss"], "s-", label="held-out text")
    best = history["step"][history["val_loss"].index(min(history["val_loss"]))]
    ax.axvline(best, color="gray", linestyle=":", label=f"lowest held-out loss (step {best})")
    ax.set_title(title)
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy loss (nats per token)")
    ax.legend()
    fig.tight_layout()
    return fig


def draw_generations(texts, prompt, title="Greedy continuation during training", width=80):
    """`texts` maps a label (e.g. "step 100") to a generated text that starts with `prompt`;
    one row each, line breaks shown as \\n."""
    fig, ax = plt.subplots(figsize=(10, 0.75 + 0.5 * len(texts)))
    ax.axis("off")
    ax.set_title(title)
    text_x = 0.012 * max(len(label) for label in texts) + 0.02  # right of the longest label
    for row, (label, text) in enumerate(texts.items()):
        shown = prompt + text.removeprefix(prompt).replace("\n", "\\n")
        y = 1 - (row + 0.5) / len(texts)
        ax.text(0.0, y, label, fontweight="bold", va="center", transform=ax.transAxes)
        ax.text(text_x, y, textwrap.shorten(shown, width, placeholder=" ..."), va="center",
                family="monospace", fontsize=9, transform=ax.transAxes)
    return fig


def draw_attention(models, idx, decode, layer=-1, title=None):
    """One row per model of `models` ({name: GPTModel}), one column per head: the attention
    weights of layer `layer` on the ids `idx` (1, num_tokens), darker = more attention."""
    labels = [decode(i) for i in idx[0].tolist()]
    maps = {name: attention_weights(model, idx)[layer] for name, model in models.items()}
    n_layers, n_heads = len(next(iter(models.values())).trf_blocks), len(next(iter(maps.values())))
    fig, axes = plt.subplots(len(maps), n_heads, figsize=(2.6 * n_heads, 3.1 * len(maps)),
                             squeeze=False)
    for row, (name, heads) in enumerate(maps.items()):
        for head, ax in enumerate(axes[row]):
            ax.imshow(heads[head].numpy(), cmap="Blues", vmin=0, vmax=1)
            ax.set_title(f"{name}, head {head}", fontsize=9)
            ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
            ax.set_yticks(range(len(labels)), labels if head == 0 else [], fontsize=7)
    fig.suptitle(title or f"Attention weights of layer {layer % n_layers} (row: the position "
                          "attending, column: the position attended to)")
    fig.tight_layout(h_pad=2)
    return fig


def _bars(ax, probabilities, decode, ids):
    """Horizontal bars (0 to 1) of `probabilities` at `ids`, the first at the top, labelled."""
    bars = ax.barh(range(len(ids)), probabilities[ids].tolist(), color="tab:blue")
    ax.bar_label(bars, fmt="%.3f", padding=2, fontsize=7)
    ax.set_yticks(range(len(ids)), [repr(decode(i)) for i in ids], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability")


def draw_next_token(models, idx, decode, k=10, title=None):
    """For each model of `models` ({name: GPTModel}), its `k` most likely next tokens after
    the ids `idx` (1, num_tokens) and their probabilities."""
    fig, axes = plt.subplots(1, len(models), figsize=(4 * len(models), 0.6 + 0.3 * k),
                             squeeze=False)
    for ax, (name, model) in zip(axes[0], models.items()):
        probabilities = next_token_probabilities(model, idx)
        _bars(ax, probabilities, decode, torch.topk(probabilities, k).indices.tolist())
        ax.set_title(name, fontsize=10)
    prompt = "".join(decode(i) for i in idx[0].tolist())
    fig.suptitle(title or f"The {k} most likely tokens after {prompt!r}")
    fig.tight_layout()
    return fig


def draw_sampling_distributions(model, idx, decode, temperatures=(0.5, 1.0, 2.0), top_k=3, k=10):
    """The distributions sampling draws the token after `idx` from: softmax at each of
    `temperatures`, then at temperature 1 restricted to the `top_k` most likely. The same `k`
    tokens (the most likely) in every panel; each title gives the probability left to all the
    other tokens."""
    logits = next_token_logits(model, idx)
    ids = torch.topk(logits, k).indices.tolist()
    panels = [(f"temperature {t:g}", sampling_distribution(logits, t)) for t in temperatures]
    panels.append((f"top-{top_k}, temperature 1", sampling_distribution(logits, 1.0, top_k)))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 0.8 + 0.3 * k),
                             sharey=True)
    for ax, (name, probabilities) in zip(axes, panels):
        _bars(ax, probabilities, decode, ids)
        ax.set_title(f"{name}\nother tokens: {1 - probabilities[ids].sum().item():.2f}",
                     fontsize=9)
    prompt = "".join(decode(i) for i in idx[0].tolist())
    fig.suptitle(f"What sampling draws from after {prompt!r}")
    fig.tight_layout()
    return fig
