"""The sweep behind bonus/claims_tested/08_claims_tested.ipynb (and section 11 of 09): every claim, 5 paired
seeds, three learning rates and one run four times longer, on Tiny Shakespeare.

    python bonus/claims_tested/claims_sweep.py --out bonus/claims_tested/results/claims_sweep.json           # the lr sweep
    python bonus/claims_tested/claims_sweep.py --lrs 3e-3 --steps 480 --out bonus/claims_tested/results/claims_long.json

Each run trains one arm (a variant, or the baseline it is compared with) for one seed at one
learning rate and stores its final training and held-out loss. A seed fixes the initial weights
(the variants draw the same weights as their baseline wherever the shapes allow: see
bonus/claims_tested/claims.py) and the batches, so variant minus baseline on one seed is one paired
difference. The results file holds the command that made it; the notebook reads the file, and
tests/bonus/test_claims_sweep.py reruns one run (`run_one`) and compares it with the stored value.
Runs are written as they finish, one thread each, so a long sweep can be read while it runs.
"""

import argparse
import json
import sys
import time
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
BATCH_SIZE = 8
EVAL_BATCHES = 8

# arm: (config, block and options for claims.make_model, init); an init of None is PyTorch's.
ARMS = {
    "chapter": ("base", {}, None),
    "no_norm": ("base", {"block": claims.BlockNoNorm, "final_norm": False}, None),
    "relu": ("base", {"block": claims.BlockReLU}, None),
    "post_ln": ("base", {"block": claims.BlockPostLN}, None),
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
    "tied, PyTorch's init": ("tied", "chapter"),
    "tied, GPT-2's init for both": ("tied_gpt2_init", "gpt2_init"),
    "GPT-2's init": ("gpt2_init", "chapter"),
    "GPT-2's init, embeddings only": ("embeddings_init", "chapter"),
    "modern, PyTorch's init": ("modern", "chapter"),
    "modern, GPT-2's init for both": ("modern_gpt2_init", "gpt2_init"),
}


def load_data():
    """Tiny Shakespeare in GPT-2 tokens, renumbered to the tokens it uses; the last 10% held out."""
    tokenizer = gpt.get_tokenizer()
    gpt2_ids = tokenizer.encode(train.load_shakespeare())
    vocab = train.Vocab(gpt2_ids)
    train_ids, val_ids = train.split(vocab.encode(gpt2_ids))
    return vocab, train_ids, val_ids


def configs(vocab_size):
    base = {**gpt.GPT_CONFIG_124M, "vocab_size": vocab_size, **SHAPE}
    deep = {**gpt.GPT_CONFIG_124M, "vocab_size": vocab_size, **DEEP_SHAPE}
    # ModernGPT at the same width, heads, depth and context; as many key/value heads as query
    # heads; the SwiGLU width that brings its parameter count closest to GPTModel's.
    mod = {**modern.TINY_CONFIG, "vocab_size": vocab_size, "context_length": 32, "emb_dim": 64,
           "n_heads": 4, "n_kv_groups": 4, "head_dim": 16, "n_layers": 4, "norm_eps": 1e-5,
           "tie_embeddings": False}
    target = sum(gpt.parameter_breakdown(base).values())
    without_ff = sum(modern.parameter_breakdown({**mod, "hidden_dim": 0}).values())
    mod["hidden_dim"] = round((target - without_ff) / (3 * 64 * 4))
    return {"base": base, "deep": deep, "modern": mod}


def build(arm, cfgs, seed):
    cfg_name, change, init = ARMS[arm]
    if cfg_name == "modern":
        torch.manual_seed(seed)
        model = modern.ModernGPT(cfgs["modern"])
    else:
        model = claims.make_model(cfgs[cfg_name], seed, **change)
    return init(model) if init is not None else model


def run_one(arm, seed, lr, steps, data, eval_every=None):
    """Train one arm for one seed; its final losses on the same fixed batches for every arm."""
    vocab, train_ids, val_ids = data
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the stored runs were made; the caller's setting comes back
    try:
        model = build(arm, configs(len(vocab)), seed)
        history = train.train(model, train_ids, val_ids, steps=steps, batch_size=BATCH_SIZE,
                              lr=lr, eval_every=eval_every or steps, seed=seed)
        model.eval()
        # the final losses on more batches than the curve's points, so every arm is judged alike
        final = {key: train.evaluate(model, ids, BATCH_SIZE, SHAPE["context_length"],
                                     batches=EVAL_BATCHES)
                 for key, ids in (("train_loss", train_ids), ("val_loss", val_ids))}
    finally:
        torch.set_num_threads(threads)
    return {"arm": arm, "seed": seed, "lr": lr, "steps": steps,
            "train_loss": round(final["train_loss"], 5), "val_loss": round(final["val_loss"], 5),
            "curve": {k: [round(x, 4) for x in history[k]] for k in ("step", "train_loss", "val_loss")}}


def load_results(names=("claims_sweep.json", "claims_long.json")):
    """The stored runs of the results files, by (arm, seed, lr, steps); and each file's command."""
    runs, commands = {}, {}
    for name in names:
        results = json.loads((RESULTS / name).read_text())
        commands[name] = results["command"]
        runs.update({(r["arm"], r["seed"], r["lr"], r["steps"]): r for r in results["runs"]})
    return runs, commands


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-3, 3e-3, 1e-2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--arms", nargs="+", default=list(ARMS))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    data = load_data()
    results = {"command": "python bonus/claims_tested/claims_sweep.py " + " ".join(sys.argv[1:] if argv is None else argv),
               "torch": torch.__version__, "threads": 1, "batch_size": BATCH_SIZE,
               "eval_batches": EVAL_BATCHES, "comparisons": COMPARISONS, "runs": []}
    start = time.perf_counter()
    for lr in args.lrs:
        for seed in args.seeds:  # seed by seed, so a partial file holds whole seeds
            for arm in args.arms:
                results["runs"].append(run_one(arm, seed, lr, args.steps, data,
                                               eval_every=max(args.steps // 6, 1)))
                results["seconds"] = round(time.perf_counter() - start)
                args.out.write_text(json.dumps(results, indent=1) + "\n")
                print(f"lr {lr:g} seed {seed} {arm}: train {results['runs'][-1]['train_loss']:.3f} "
                      f"held-out {results['runs'][-1]['val_loss']:.3f}", flush=True)


if __name__ == "__main__":
    main()
