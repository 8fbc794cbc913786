"""The sweep behind bonus 08 and section 11 of bonus 09: each run trains one arm for one seed at
one learning rate (on one thread) and scores every held-out target. The results/ files' commands:

    python bonus/claims_tested/claims_sweep.py --steps 1189 --seeds 1 2 3 4 5 --workers 2 --out bonus/claims_tested/results/claims_epoch.json
    python bonus/claims_tested/claims_sweep.py --steps 1189 --seeds 6 7 8 9 10 --arms chapter no_norm relu post_ln post_ln_warmup gpt2_init embeddings_init tied_gpt2_init modern modern_gpt2_init --workers 2 --out bonus/claims_tested/results/claims_epoch_more.json
    python bonus/claims_tested/claims_sweep.py --lrs 1e-3 3e-3 1e-2 3e-2 --workers 2 --out bonus/claims_tested/results/claims_short.json
    python bonus/claims_tested/claims_sweep.py --lrs 1e-3 3e-3 1e-2 3e-2 --seeds 6 7 8 9 10 --arms chapter relu post_ln post_ln_warmup gpt2_init embeddings_init tied_gpt2_init modern modern_gpt2_init --workers 2 --out bonus/claims_tested/results/claims_short_more.json
    python bonus/claims_tested/claims_sweep.py --lrs 3e-4 1e-1 --seeds 1 2 3 4 5 6 7 8 9 10 --arms post_ln post_ln_warmup tied gpt2_init --workers 2 --out bonus/claims_tested/results/claims_edges.json
"""

import argparse
import collections
import functools
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

import gpt
from bonus.claims_tested import claims
from bonus.gpt2_to_llama_qwen import modern
from bonus.watch_it_learn import train

# width 64, 4 heads, 4 blocks, a 32-token context, no dropout; the deep stack: width 32, 8 blocks
SHAPE = {"context_length": 32, "emb_dim": 64, "n_heads": 4, "n_layers": 4, "drop_rate": 0.0}
DEEP_SHAPE = {**SHAPE, "emb_dim": 32, "n_layers": 8}
RESULTS = Path(__file__).resolve().parent / "results"
FILES = ("claims_epoch.json", "claims_epoch_more.json", "claims_short.json", "claims_short_more.json",
         "claims_edges.json")
BATCH_SIZE = 8
EVAL_BATCHES = 8

# arm: (config, options for claims.GPTVariant, init); an init of None is PyTorch's.
ARMS = {
    "chapter": ("base", {}, None),
    "no_norm": ("base", {"block": claims.BlockNoNorm, "final_norm": False}, None),
    "relu": ("base", {"block": claims.BlockReLU}, None),
    "post_ln": ("base", {"block": claims.BlockPostLN}, None),
    "post_ln_warmup": ("base", {"block": claims.BlockPostLN}, None),  # and WARMUP below
    "tied": ("base", {"tie_weights": True}, None),
    "gpt2_init": ("base", {}, claims.gpt2_init_),
    "embeddings_init": ("base", {}, claims.embeddings_init_),
    "tied_gpt2_init": ("base", {"tie_weights": True}, claims.gpt2_init_),
    "deep_chapter": ("deep", {}, None),
    "no_shortcut": ("deep", {"block": claims.BlockNoShortcut}, None),
    "modern": ("modern", {}, None),
    "modern_gpt2_init": ("modern", {}, claims.gpt2_init_),
}
# claim: (variant, baseline); each comparison is variant minus baseline, seed by seed
COMPARISONS = {
    "no layer norm": ("no_norm", "chapter"),
    "no shortcuts (8 blocks)": ("no_shortcut", "deep_chapter"),
    "ReLU for GELU": ("relu", "chapter"),
    "post-LN for pre-LN": ("post_ln", "chapter"),
    "post-LN with warm-up for pre-LN": ("post_ln_warmup", "chapter"),
    "warm-up, for post-LN": ("post_ln_warmup", "post_ln"),
    "tied, PyTorch's init": ("tied", "chapter"),
    "tied, GPT-2's init for both": ("tied_gpt2_init", "gpt2_init"),
    "GPT-2's init": ("gpt2_init", "chapter"),
    "GPT-2's init, embeddings only": ("embeddings_init", "chapter"),
    "modern, PyTorch's init": ("modern", "chapter"),
    "modern, GPT-2's init for both": ("modern_gpt2_init", "gpt2_init"),
}
WARMUP = {"post_ln_warmup": 0.1}  # arm: the fraction of its steps spent warming the rate up


@functools.cache  # once per process: each worker of the sweep loads it once
def load_data():
    """Tiny Shakespeare in GPT-2 tokens, renumbered to the tokens it uses; the last 10% held out."""
    tokenizer = gpt.get_tokenizer()
    gpt2_ids = tokenizer.encode(train.load_shakespeare())
    vocab = train.Vocab(gpt2_ids)
    train_ids, val_ids = train.split(vocab.encode(gpt2_ids))
    return vocab, train_ids, val_ids


def baseline_losses(train_ids, val_ids, vocab_size, prior=100):
    """Held-out loss of three models without a network, from the training part's counts: uniform
    over the vocabulary; unigram (add-one counts); bigram (the counts of what follows each token,
    smoothed towards the unigram with `prior` pseudo-counts, about the best prior for this split)."""
    unigram = torch.bincount(train_ids, minlength=vocab_size).double() + 1
    unigram /= unigram.sum()
    pair_counts = collections.Counter(zip(train_ids[:-1].tolist(), train_ids[1:].tolist()))
    count = torch.tensor([pair_counts[p] for p in zip(val_ids[:-1].tolist(), val_ids[1:].tolist())])
    follows = torch.bincount(train_ids[:-1], minlength=vocab_size).double()
    targets = val_ids[1:]
    bigram = (count + prior * unigram[targets]) / (follows[val_ids[:-1]] + prior)
    return {"uniform": math.log(vocab_size), "unigram": -unigram[targets].log().mean().item(),
            "bigram": -bigram.log().mean().item()}


def configs(vocab_size):
    base = {**gpt.GPT_CONFIG_124M, "vocab_size": vocab_size, **SHAPE}
    deep = {**base, **DEEP_SHAPE}
    # ModernGPT at the same width, heads, depth and context; as many key/value heads as query
    # heads; the SwiGLU width that brings its parameter count closest to GPTModel's.
    mod = {**modern.TINY_CONFIG, **{k: v for k, v in base.items() if k in modern.TINY_CONFIG},
           "n_kv_groups": 4, "head_dim": 16, "norm_eps": 1e-5, "tie_embeddings": False}
    target = sum(gpt.parameter_breakdown(base).values())
    without_ff = sum(modern.parameter_breakdown({**mod, "hidden_dim": 0}).values())
    mod["hidden_dim"] = round((target - without_ff) / (3 * 64 * 4))
    return {"base": base, "deep": deep, "modern": mod}


def build(arm, cfgs, seed):
    cfg_name, change, init = ARMS[arm]
    torch.manual_seed(seed)
    model_class = modern.ModernGPT if cfg_name == "modern" else claims.GPTVariant
    model = model_class(cfgs[cfg_name], **change)
    return init(model) if init is not None else model


def run_one(arm, seed, lr, steps, data, eval_every=None, keep_model=False):
    """Train one arm for one seed: its final losses and its curve (and, with keep_model, the
    trained model under "model")."""
    vocab, train_ids, val_ids = data
    threads, start = torch.get_num_threads(), time.perf_counter()
    torch.set_num_threads(1)  # as the stored runs were made; the caller's setting comes back
    try:
        model = build(arm, configs(len(vocab)), seed)
        history = train.train(model, train_ids, val_ids, steps=steps, batch_size=BATCH_SIZE,
                              lr=lr, eval_every=eval_every or steps, seed=seed,
                              warmup_steps=round(WARMUP.get(arm, 0) * steps))
        # the verdicts' loss: every held-out target; the training loss on fixed batches
        val_loss = train.evaluate_split(model, val_ids, SHAPE["context_length"])
        train_loss = train.evaluate(model, train_ids, BATCH_SIZE, SHAPE["context_length"],
                                    batches=EVAL_BATCHES)
    finally:
        torch.set_num_threads(threads)
    return {"arm": arm, "seed": seed, "lr": lr, "steps": steps,
            "train_loss": round(train_loss, 5), "val_loss": round(val_loss, 5),
            "seconds": round(time.perf_counter() - start, 1),
            "curve": {k: [round(x, 4) for x in history[k]] for k in ("step", "train_loss", "val_loss")},
            **({"model": model} if keep_model else {})}


def load_results(names=FILES):
    """The stored runs of the results files, by (arm, seed, lr, steps); and each file's command."""
    runs, commands = {}, {}
    for name in names:
        results = json.loads((RESULTS / name).read_text())
        commands[name] = results["command"]
        runs.update({(r["arm"], r["seed"], r["lr"], r["steps"]): r for r in results["runs"]})
    return runs, commands


def _run_in_worker(arm, seed, lr, steps):
    return run_one(arm, seed, lr, steps, load_data(), eval_every=max(steps // 6, 1))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lrs", type=float, nargs="+", default=[3e-3])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    parser.add_argument("--workers", type=int, default=1, help="processes, one thread each")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def jobs_of(args):
    """The runs a command asks for, as (arm, seed, lr, steps), in the order they are stored."""
    return [(arm, seed, lr, args.steps) for lr in args.lrs for seed in args.seeds for arm in args.arms]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    results = {"command": "python bonus/claims_tested/claims_sweep.py " + " ".join(argv),
               "torch": torch.__version__, "threads": 1, "batch_size": BATCH_SIZE,
               "eval_batches": EVAL_BATCHES, "comparisons": COMPARISONS, "runs": []}
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for run in pool.map(_run_in_worker, *zip(*jobs_of(args))):  # in the jobs' order
            results["runs"].append(run)
            results["seconds"] = round(time.perf_counter() - start)
            args.out.write_text(json.dumps(results, indent=1) + "\n")
            print(f"lr {run['lr']:g} seed {run['seed']} {run['arm']}: train {run['train_loss']:.3f} "
                  f"held-out {run['val_loss']:.3f}", flush=True)


if __name__ == "__main__":
    main()
