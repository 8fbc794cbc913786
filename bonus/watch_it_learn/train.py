"""Train the chapter's GPTModel on a short text, on a CPU, in about a minute; then sample from it.

    vocab = Vocab(tokenizer.encode(text))               # only the GPT-2 tokens the text uses
    train_ids, val_ids = split(vocab.encode(tokenizer.encode(text)))
    model = gpt.GPTModel({**gpt.GPT_CONFIG_124M, "vocab_size": len(vocab), ...})
    history = train(model, train_ids, val_ids, steps=400)

Batches are drawn on the CPU and sent to the model's device; gpt.py is used unchanged.
"""

import functools
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import gpt_engineering

CORPORA = Path(__file__).resolve().parents[2] / "data" / "corpora"
THE_VERDICT_SHA256 = "b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f"
TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


def load_text(path=CORPORA / "the-verdict.txt", sha256=THE_VERDICT_SHA256):
    """The text of `path`, after checking its SHA-256 sum (as the tokenizer's files are)."""
    return gpt_engineering.read_checked(Path(path), sha256).decode("utf-8")


def load_shakespeare():
    """Tiny Shakespeare (1,115,394 characters), hash-checked: a text long enough that a small
    model learns what carries over to held-out lines instead of memorising."""
    return load_text(CORPORA / "tinyshakespeare.txt", TINY_SHAKESPEARE_SHA256)


class Vocab:
    """The GPT-2 token ids a text uses, renumbered 0, 1, 2, ... in the order of the GPT-2 ids."""

    def __init__(self, gpt2_ids):
        self.gpt2_ids = torch.tensor(sorted(set(gpt2_ids)))

    def __len__(self):
        return len(self.gpt2_ids)

    def encode(self, gpt2_ids):
        """GPT-2 ids -> this vocabulary's ids (a ValueError for a token the text never used)."""
        gpt2_ids = torch.as_tensor(gpt2_ids)
        unknown = gpt2_ids[~torch.isin(gpt2_ids, self.gpt2_ids)]
        if unknown.numel():
            raise ValueError(f"GPT-2 token ids {unknown.unique().tolist()[:5]} are not in this "
                             "vocabulary: the training text never uses them")
        return torch.searchsorted(self.gpt2_ids, gpt2_ids)

    def decode(self, ids):
        """This vocabulary's ids -> GPT-2 ids, ready for tokenizer.decode."""
        return self.gpt2_ids[torch.as_tensor(ids)]


def split(ids, held_out=0.1):
    """(the first 1 - held_out of the ids for training, the rest held out)."""
    cut = round(len(ids) * (1 - held_out))
    return ids[:cut], ids[cut:]


def get_batch(data, batch_size, context_length, generator):
    """Inputs and targets: `batch_size` windows of the ids at random offsets, the targets one
    token later, so position t of a window is trained to predict token t + 1."""
    starts = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + context_length] for i in starts.tolist()])
    y = torch.stack([data[i + 1 : i + context_length + 1] for i in starts.tolist()])
    return x, y


def loss_on(model, x, y, reduction="mean"):
    """Cross-entropy of the model's next-token predictions over every position: their mean, or
    with reduction="none" one per position; x and y are moved to the model's device first."""
    device = next(model.parameters()).device
    logits = model(x.to(device))  # (batch, num_tokens, vocab_size)
    return F.cross_entropy(logits.flatten(0, 1), y.to(device).flatten(), reduction=reduction)


def in_eval_mode(function):
    """Run function(model, ...) under torch.no_grad() in eval mode (no dropout), then put the
    model back in the mode it was in."""

    @functools.wraps(function)
    @torch.no_grad()
    def wrapper(model, *args, **kwargs):
        was_training = model.training
        try:
            return function(model.eval(), *args, **kwargs)
        finally:
            model.train(was_training)

    return wrapper


@in_eval_mode
def evaluate(model, data, batch_size, context_length, batches=4, seed=0):
    """Mean loss on the same `batches` batches of `data` every time (see `in_eval_mode`)."""
    generator = torch.Generator().manual_seed(seed)
    losses = [loss_on(model, *get_batch(data, batch_size, context_length, generator)).item()
              for _ in range(batches)]
    return sum(losses) / len(losses)


@in_eval_mode
def evaluate_split(model, data, context_length, windows_per_batch=64, per_target=False):
    """Mean loss over every target of `data` (or, with per_target=True, each target's loss): the
    ids cut into consecutive windows of `context_length`, the last one shorter, in eval mode."""
    n = (len(data) - 1) // context_length
    inputs = data[: n * context_length].view(n, context_length)
    targets = data[1 : n * context_length + 1].view(n, context_length)
    batches = list(zip(inputs.split(windows_per_batch), targets.split(windows_per_batch)))
    rest = data[n * context_length :]
    if len(rest) > 1:
        batches.append((rest[None, :-1], rest[None, 1:]))
    losses = torch.cat([loss_on(model, x, y, reduction="none").cpu() for x, y in batches])
    return losses if per_target else losses.double().mean().item()


def adamw(model, lr, weight_decay=0.1):
    """AdamW that decays only the 2-D weights (the linear layers' matrices and the embeddings),
    as nanoGPT does; biases and the norms' scales and shifts are not pulled towards 0."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


def learning_rate_factor(done, steps, warmup_steps=0, final_factor=None):
    """The factor of the learning rate for the step after `done` steps of `steps`: a linear
    climb over `warmup_steps`, then 1, or, with `final_factor`, a cosine from 1 down to it."""
    if done < warmup_steps or final_factor is None:
        return min(1.0, (done + 1) / max(warmup_steps, 1))
    progress = (done - warmup_steps) / max(steps - warmup_steps, 1)
    return final_factor + (1 - final_factor) * (1 + math.cos(math.pi * progress)) / 2


def train(model, train_ids, val_ids, steps, batch_size=16, lr=1e-3, eval_every=50, seed=123,
          on_eval=None, warmup_steps=0, final_lr=None):
    """AdamW (`adamw`) on next-token cross-entropy; every `eval_every` steps, both splits are evaluated
    and `on_eval(step, model)` is called. Returns the losses and the tokens trained per second.
    With `warmup_steps`, the learning rate climbs linearly from lr / warmup_steps to lr over them;
    with `final_lr`, it then falls along a cosine towards `final_lr`, which it would reach one
    step after the last."""
    context_length = gpt_engineering.config_of(model)["context_length"]
    generator = torch.Generator().manual_seed(seed)
    optimizer = adamw(model, lr)
    final_factor = None if final_lr is None else final_lr / lr
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda done: learning_rate_factor(done, steps, warmup_steps, final_factor))
    history = {"step": [], "train_loss": [], "val_loss": []}
    trained_seconds, tokens = 0.0, 0
    model.train()
    for step in range(1, steps + 1):
        start = time.perf_counter()
        x, y = get_batch(train_ids, batch_size, context_length, generator)
        loss = loss_on(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        if loss.device.type == "cuda":  # a GPU works asynchronously: wait before reading the clock
            torch.cuda.synchronize(loss.device)
        trained_seconds += time.perf_counter() - start
        tokens += x.numel()
        if step % eval_every == 0 or step == steps:
            history["step"].append(step)
            history["train_loss"].append(evaluate(model, train_ids, batch_size, context_length))
            history["val_loss"].append(evaluate(model, val_ids, batch_size, context_length))
            if on_eval is not None:
                on_eval(step, model)
    history["tokens_per_second"] = tokens / trained_seconds
    return history


def sampling_distribution(logits, temperature=1.0, top_k=None):
    """The distribution `generate` draws from: softmax(logits / temperature), restricted to the
    `top_k` largest logits (the rest get probability 0)."""
    if top_k is not None:  # every logit below the k-th largest can never be drawn
        kth_largest = torch.topk(logits, top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth_largest, -torch.inf)
    return torch.softmax(logits / temperature, dim=-1)


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None,
             generator=None):
    """generate_text_simple with sampling: temperature 0 is greedy decoding; otherwise the next
    token is drawn from `sampling_distribution(logits, temperature, top_k)`.

    The ids are moved to the model's device and tokens are drawn there, so a `generator`
    must live on that device too: `torch.Generator(device=...)`."""
    gpt_engineering.check_generation_args(model, idx, max_new_tokens, context_size)
    if max_new_tokens:  # the longest window the model is given (the last new id is not fed back)
        gpt_engineering.check_num_tokens(min(idx.shape[1] + max_new_tokens - 1, context_size),
                                         gpt_engineering.config_of(model)["context_length"])
    if temperature < 0:  # it would favour the least likely tokens
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    idx = idx.to(next(model.parameters()).device)
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        if temperature == 0:  # the most likely token, within the top k too
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        else:
            probas = sampling_distribution(logits, temperature, top_k)
            idx_next = torch.multinomial(probas, 1, generator=generator)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
