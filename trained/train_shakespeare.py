"""Train the chapter's GPTModel on Tiny Shakespeare: the weights the chapter notebooks load.

    python -m trained.train_shakespeare                 # writes shakespeare.safetensors and .json
    python -m trained.train_shakespeare --validation    # the same recipe, scored on validation

The play is cut into three parts, in order: training (the first 80% of its tokens), validation
(the next 10%) and test (the last 10%). Every setting of the recipe below was chosen with
`--validation` runs: trained on the training part, scored on validation (README.md lists them).
The final run trains on training and validation together and is scored on the test part, which
no choice saw. The training loop is bonus/watch_it_learn/train.py's. After training, the output
head is divided by a temperature chosen on validation: a trained model is too sure of its
likeliest tokens, and one number, folded into the head's weights, tempers every prediction
without changing which token is likeliest.
"""

import argparse
import hashlib
import json
import math
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

import gpt
from bonus.watch_it_learn import train
from trained import ngrams

HERE = Path(__file__).resolve().parent
SPLITS = {"train": (0.0, 0.8), "validation": (0.8, 0.9), "test": (0.9, 1.0)}
# The chapter's GPTModel, smaller: GPT_CONFIG_124M with these changes and the play's vocabulary.
SHAPE = {"emb_dim": 96, "n_heads": 4, "n_layers": 4, "context_length": 64, "drop_rate": 0.0}
RECIPE = {"epochs": 6, "batch_size": 8, "lr": 2e-3, "final_lr": 2e-4, "warmup_steps": 100,
          "seed": 123, "threads": 2, "temperature": 1.2}
TEMPERATURES = (1.0, 1.1, 1.2, 1.3, 1.4)  # tried on validation
DISCOUNTS = (0.7, 0.8, 0.9, 0.95)  # Kneser-Ney discounts tried on validation
SAMPLE = "ROMEO:\n"  # the record keeps the model's greedy continuation of it


def load_parts():
    """The play's vocabulary and its three parts, as ids of that vocabulary."""
    gpt2_ids = gpt.get_tokenizer().encode(train.load_shakespeare())
    vocab = train.Vocab(gpt2_ids)
    ids = vocab.encode(gpt2_ids)
    return vocab, {name: ids[round(len(ids) * start):round(len(ids) * end)]
                   for name, (start, end) in SPLITS.items()}


def baselines(fit_ids, score_ids, vocab_size, discounts):
    """Held-out loss of the models without a network, fitted on `fit_ids`; `discounts` gives the
    Kneser-Ney discount of "bigram" and "trigram", or a tuple of them to choose from (the best on
    `score_ids` is taken). Returns the losses and the discounts used."""
    fit, score = fit_ids.tolist(), score_ids.tolist()
    losses = {"uniform": math.log(vocab_size),
              "unigram": ngrams.cross_entropy(ngrams.unigram(fit, vocab_size), score, order=1)}
    chosen = {}
    for order, name in ((2, "bigram"), (3, "trigram")):
        options = discounts[name] if isinstance(discounts[name], tuple) else (discounts[name],)
        scored = {d: ngrams.cross_entropy(ngrams.kneser_ney(fit, order, d, vocab_size), score, order)
                  for d in options}
        chosen[name] = min(scored, key=scored.get)
        losses[name] = scored[chosen[name]]
    return losses, chosen


def chosen_discounts(parts, vocab_size):
    """The Kneser-Ney discounts of "bigram" and "trigram" that score best on validation, each
    fitted on the training part alone."""
    _, chosen = baselines(parts["train"], parts["validation"], vocab_size,
                          {"bigram": DISCOUNTS, "trigram": DISCOUNTS})
    return chosen


def yardsticks(parts, vocab_size):
    """Test loss of the models without a network (uniform, unigram, Kneser-Ney bigram and
    trigram), fitted on the training part with the discounts chosen on validation; and those
    discounts."""
    discounts = chosen_discounts(parts, vocab_size)
    losses, _ = baselines(parts["train"], parts["test"], vocab_size, discounts)
    return losses, discounts


def temper(model, temperature):
    """Divide the model's logits by `temperature`, for good: its output head has no bias."""
    with torch.no_grad():
        model.out_head.weight /= temperature


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validation", action="store_true",
                        help="train on the training part only and score the validation part")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write NAME.safetensors and NAME.json (default: "
                        "trained/shakespeare; with --validation, nothing is written unless given)")
    for key, value in {**SHAPE, **RECIPE}.items():  # each setting can be varied for --validation
        parser.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)  # the recipe's: float sums round by the thread count
    try:
        train_and_record(args)
    finally:  # a caller in the same process, such as a test, keeps its own thread count
        torch.set_num_threads(threads)


def train_and_record(args):
    """Train with the settings `args` and report the scored loss; write the weights and their
    record unless `--validation` is given without `--out`."""
    vocab, parts = load_parts()
    if args.validation:
        fit, score, scored = parts["train"], parts["validation"], "validation"
    else:
        fit, score, scored = torch.cat([parts["train"], parts["validation"]]), parts["test"], "test"
    cfg = {**gpt.GPT_CONFIG_124M, "vocab_size": len(vocab),
           **{key: getattr(args, key) for key in SHAPE}}
    context = cfg["context_length"]
    steps_per_epoch = len(fit) // (args.batch_size * context)
    curve = []  # the loss on every target of the scored part, after each epoch

    def after_epoch(step, model):
        curve.append(round(train.evaluate_split(model, score, context), 4))
        print(f"epoch {step // steps_per_epoch}: {scored} loss {curve[-1]:.4f}", flush=True)

    torch.manual_seed(args.seed)
    model = gpt.GPTModel(cfg)
    start = time.perf_counter()
    train.train(model, fit, score, steps=args.epochs * steps_per_epoch, batch_size=args.batch_size,
                lr=args.lr, final_lr=args.final_lr, warmup_steps=args.warmup_steps,
                eval_every=steps_per_epoch, seed=args.seed, on_eval=after_epoch)
    seconds = time.perf_counter() - start
    model.eval()
    if args.validation:  # the temperatures to choose from
        for temperature in TEMPERATURES:
            temper(model, temperature)
            loss = train.evaluate_split(model, score, context)
            print(f"temperature {temperature}: validation loss {loss:.4f}", flush=True)
            temper(model, 1 / temperature)
        if args.out is None:
            return
    temper(model, args.temperature)
    loss = round(train.evaluate_split(model, score, context), 4)
    print(f"{scored} loss {loss:.4f} at temperature {args.temperature}, after {seconds:.0f} s "
          "of training", flush=True)
    # The n-gram discounts are chosen on validation, fitted on training alone; then refitted on
    # what the network was trained on and scored on the same part as the network.
    discounts = chosen_discounts(parts, len(vocab))
    losses, _ = baselines(fit, score, len(vocab), discounts)
    out = args.out or HERE / "shakespeare"
    weights = out.with_suffix(".safetensors")
    tensors = {**model.state_dict(), "vocab.gpt2_ids": vocab.gpt2_ids}
    save_file({k: v.contiguous() for k, v in tensors.items()}, weights,
              metadata={"config": json.dumps(cfg)})
    prompt = vocab.encode(gpt.get_tokenizer().encode(SAMPLE))
    sample = gpt.generate_text_simple(model, prompt[None], 40, context)
    record = {
        "command": "python -m trained.train_shakespeare" + (" --validation" * args.validation),
        "config": cfg, "recipe": {key: getattr(args, key) for key in RECIPE}, "splits": SPLITS,
        "trained_on": "train" if args.validation else "train and validation", "scored_on": scored,
        "training_seconds": round(seconds), "torch": torch.__version__,
        f"{scored}_loss_by_epoch": curve, f"{scored}_loss": loss,
        "baselines": {k: round(v, 4) for k, v in losses.items()}, "discounts": discounts,
        "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "sample": {"prompt": SAMPLE, "max_new_tokens": 40, "ids": sample[0].tolist()},
    }
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
