"""The sweep behind bonus 08 and section 11 of bonus 09: each run trains one arm for one seed at
one learning rate for one epoch of the play's training part (on one thread).

The play is cut into training (the first 80% of its tokens), validation (the next 10%) and test
(the last 10%), as trained/train_shakespeare.py cuts it. The sweep has three stages, each with
its own seeds, fixed before any run:

1. select: seeds 1-3 at 1e-3, 3e-3 and 1e-2 (and one step beyond where an arm's best is at an
   end), scored on validation only: each arm's own best rate. No test loss is computed.
2. discover: seeds 11-20 at the shared rate, 3e-3, and at each arm's own best rate, scored on
   test: the words.
3. confirm: seeds 21-30, the same runs: a word is reliable when these seeds give it too.

The results/ files' commands (each stores every run as it ends; run again, it goes on where it
stopped):

    python bonus/claims_tested/claims_sweep.py select --workers 2 --out bonus/claims_tested/results/select.json
    python bonus/claims_tested/claims_sweep.py test --seeds 11 12 13 14 15 16 17 18 19 20 --workers 2 --out bonus/claims_tested/results/discover.json
    python bonus/claims_tested/claims_sweep.py test --seeds 21 22 23 24 25 26 27 28 29 30 --workers 2 --out bonus/claims_tested/results/confirm.json
"""

import argparse
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
from trained import train_shakespeare

# width 64, 4 heads, 4 blocks, a 32-token context, no dropout; the deep stack: width 32, 8 blocks
SHAPE = {"context_length": 32, "emb_dim": 64, "n_heads": 4, "n_layers": 4, "drop_rate": 0.0}
DEEP_SHAPE = {**SHAPE, "emb_dim": 32, "n_layers": 8}
RESULTS = Path(__file__).resolve().parent / "results"
SELECT, DISCOVER, CONFIRM = "select.json", "discover.json", "confirm.json"
FILES = (SELECT, DISCOVER, CONFIRM)
BATCH_SIZE = 8
EVAL_BATCHES = 8
RATES = (1e-3, 3e-3, 1e-2)  # every arm is tried at these on validation
BEYOND = {1e-3: 3e-4, 1e-2: 3e-2}  # a best rate at an end of the grid: one step further is tried
SHARED_RATE = 3e-3
SELECTION_SEEDS = (1, 2, 3)
WARMUP = 0.1  # the share of the steps over which the "_warmup" arms' rate climbs to its value

# arm: (config, options for claims.GPTVariant, init); an init of None is PyTorch's.
ARMS = {
    "chapter": ("base", {}, None),
    "chapter_warmup": ("base", {}, None),
    "no_norm": ("base", {"block": claims.BlockNoNorm, "final_norm": False}, None),
    "relu": ("base", {"block": claims.BlockReLU}, None),
    "post_ln": ("base", {"block": claims.BlockPostLN}, None),
    "post_ln_warmup": ("base", {"block": claims.BlockPostLN}, None),
    "tied": ("base", {"tie_weights": True}, None),
    "gpt2_init": ("base", {}, claims.gpt2_init_),
    "tied_gpt2_init": ("base", {"tie_weights": True}, claims.gpt2_init_),
    "deep_chapter": ("deep", {}, None),
    "no_shortcut": ("deep", {"block": claims.BlockNoShortcut}, None),
    "modern": ("modern", {}, None),
}
# claim: (variant, baseline); each comparison is variant minus baseline, seed by seed
COMPARISONS = {
    "no layer norm": ("no_norm", "chapter"),
    "no shortcuts (8 blocks)": ("no_shortcut", "deep_chapter"),
    "ReLU for GELU": ("relu", "chapter"),
    "post-LN for pre-LN": ("post_ln", "chapter"),
    "post-LN with warm-up for pre-LN": ("post_ln_warmup", "chapter"),
    "post-LN for pre-LN, both warmed up": ("post_ln_warmup", "chapter_warmup"),
    "warm-up, for post-LN": ("post_ln_warmup", "post_ln"),
    "warm-up, for pre-LN": ("chapter_warmup", "chapter"),
    "tied, PyTorch's init": ("tied", "chapter"),
    "tied, GPT-2's init for both": ("tied_gpt2_init", "gpt2_init"),
    "GPT-2's init": ("gpt2_init", "chapter"),
    "modern (bonus 09)": ("modern", "chapter"),
}


@functools.cache  # once per process: each worker of the sweep loads it once
def load_data():
    """The play's vocabulary and its three parts ("train", "validation", "test"), as ids."""
    return train_shakespeare.load_parts()


def epoch_steps(train_ids):
    """Steps of BATCH_SIZE windows that draw as many targets as the training part holds."""
    return math.ceil((len(train_ids) - 1) / (BATCH_SIZE * SHAPE["context_length"]))


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


def run_one(arm, seed, lr, data, steps=None, score_test=True, eval_every=None, keep_model=False):
    """Train one arm for one seed (one epoch unless `steps` says otherwise): its losses on
    validation and, with score_test, on test (every target of each), the training loss on fixed
    batches, and a curve on fixed validation batches; with keep_model, the model too."""
    vocab, parts = data
    steps = steps or epoch_steps(parts["train"])
    threads, start = torch.get_num_threads(), time.perf_counter()
    torch.set_num_threads(1)  # as the stored runs were made; the caller's setting comes back
    try:
        model = build(arm, configs(len(vocab)), seed)
        warmup = round(WARMUP * steps) if arm.endswith("_warmup") else 0
        history = train.train(model, parts["train"], parts["validation"], steps=steps,
                              batch_size=BATCH_SIZE, lr=lr, eval_every=eval_every or steps,
                              seed=seed, warmup_steps=warmup)
        context = SHAPE["context_length"]
        losses = {"val_loss": train.evaluate_split(model, parts["validation"], context)}
        if score_test:
            losses["test_loss"] = train.evaluate_split(model, parts["test"], context)
        losses["train_loss"] = train.evaluate(model, parts["train"], BATCH_SIZE, context,
                                              batches=EVAL_BATCHES)
    finally:
        torch.set_num_threads(threads)
    return {"arm": arm, "seed": seed, "lr": lr, "steps": steps,
            **{k: round(v, 5) for k, v in losses.items()},
            "seconds": round(time.perf_counter() - start, 1),
            "curve": {k: [round(x, 4) for x in history[k]] for k in ("step", "train_loss", "val_loss")},
            **({"model": model} if keep_model else {})}


def load_results(names=FILES):
    """The stored runs of the results files, by (arm, seed, lr); and each file's command."""
    runs, commands = {}, {}
    for name in names:
        results = json.loads((RESULTS / name).read_text())
        commands[name] = results["command"]
        runs.update({(r["arm"], r["seed"], r["lr"]): r for r in results["runs"]})
    return runs, commands


def mean_val_loss(runs, arm, lr):
    losses = [r["val_loss"] for (a, _, rate), r in runs.items() if (a, rate) == (arm, lr)]
    return sum(losses) / len(losses)


def best_rates(selection_runs):
    """{arm: the rate with the lowest mean validation loss}, from the select stage's runs (which
    hold no test loss: the choice cannot read it)."""
    rates = {}
    for arm, _, lr in selection_runs:
        rates.setdefault(arm, set()).add(lr)
    return {arm: min(sorted(tried), key=lambda lr: mean_val_loss(selection_runs, arm, lr))
            for arm, tried in rates.items()}


def run_as_swept(arm, seed, lr, score_test):
    """run_one as the sweep's workers call it: one epoch, a curve point every sixth of it."""
    return run_one(arm, seed, lr, load_data(), score_test=score_test,
                   eval_every=max(epoch_steps(load_data()[1]["train"]) // 6, 1))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stage", choices=("select", "test"))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SELECTION_SEEDS))
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    parser.add_argument("--workers", type=int, default=1, help="processes, one thread each")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def test_jobs(args, chosen):
    """The test stage's runs: every arm at the shared rate, then at its own best rate where that
    differs, as (arm, seed, lr), in the order they are stored."""
    shared = [(arm, seed, SHARED_RATE) for seed in args.seeds for arm in args.arms]
    own = [(arm, seed, chosen[arm]) for seed in args.seeds for arm in args.arms
           if chosen[arm] != SHARED_RATE]
    return shared + own


def selection_rounds(args, runs):
    """The select stage's runs still to do, as (arm, seed, lr): the grid first, then, for each arm
    whose best rate so far lies at an end of the rates it tried, one step beyond (BEYOND)."""
    if not runs:
        return [(arm, seed, lr) for lr in RATES for seed in args.seeds for arm in args.arms]
    tried = {}
    for arm, _, lr in runs:
        tried.setdefault(arm, set()).add(lr)
    beyond = []
    for arm, best in best_rates(runs).items():
        edge = BEYOND.get(best) if best in (min(tried[arm]), max(tried[arm])) else None
        if edge is not None and edge not in tried[arm]:
            beyond += [(arm, seed, edge) for seed in args.seeds]
    return sorted(beyond, key=lambda job: (job[2], job[1], list(ARMS).index(job[0])))


def jobs_of(args, runs=None):
    """Every run a command asks for, in the order of its file; the select stage's later rounds
    depend on the earlier rounds' `runs` (all of them, once the file is complete)."""
    if args.stage == "test":
        return test_jobs(args, best_rates(load_results([SELECT])[0]))
    runs, done, jobs = dict(runs or {}), {}, []
    while True:
        batch = selection_rounds(args, done)
        if not batch or any(job not in runs for job in batch):
            return jobs + batch
        jobs += batch
        done.update({job: runs[job] for job in batch})


def _save(results, out):
    out.write_text(json.dumps(results, indent=1) + "\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    results = {"command": "python bonus/claims_tested/claims_sweep.py " + " ".join(argv),
               "torch": torch.__version__, "threads": 1, "batch_size": BATCH_SIZE,
               "eval_batches": EVAL_BATCHES, "comparisons": COMPARISONS, "runs": []}
    start, score_test = time.perf_counter(), args.stage == "test"
    if args.out.exists():  # an interrupted command goes on where it stopped
        earlier = json.loads(args.out.read_text())
        if earlier["command"] != results["command"]:
            sys.exit(f"{args.out} holds the runs of another command: {earlier['command']}")
        results["runs"] = earlier["runs"]
        start -= earlier.get("seconds", 0)  # "seconds" counts every session of the command
    if score_test:  # the yardsticks beside every word: fitted on training, chosen on validation
        vocab, parts = load_data()
        results["yardsticks"], results["discounts"] = train_shakespeare.yardsticks(parts, len(vocab))
    with ProcessPoolExecutor(args.workers) as pool:
        while True:
            stored = {(r["arm"], r["seed"], r["lr"]): r for r in results["runs"]}
            batch = [job for job in jobs_of(args, stored) if job not in stored]
            if not batch:
                return
            for run in pool.map(run_as_swept, *zip(*batch), [score_test] * len(batch)):
                results["runs"].append(run)
                results["seconds"] = round(time.perf_counter() - start)
                _save(results, args.out)
                scored = f"test {run['test_loss']:.3f}" if score_test else ""
                print(f"lr {run['lr']:g} seed {run['seed']} {run['arm']}: validation "
                      f"{run['val_loss']:.3f} {scored}", flush=True)


if __name__ == "__main__":
    main()
