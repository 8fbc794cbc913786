"""Check each attention variant, then time one decoding step of each deep into the context.

    python bonus/kv_cache_variants/benchmark_variants.py            # GPT-2 small's width, ~1000 cached positions
    python bonus/kv_cache_variants/benchmark_variants.py --quick    # a tiny model: a smoke test
    python bonus/kv_cache_variants/benchmark_variants.py --threads 1    # steadier on a busy machine

Exit status 1 if a check fails. What is timed and checked: bonus/kv_cache_variants/README.md.
"""

import argparse
import os
import sys

import torch

import gpt
from bonus.flops.flops import counted_flops
from bonus.kv_cache import kv_cache
from bonus.kv_cache.benchmark import race
from bonus.kv_cache_variants import gqa, mla, swa
from bonus.kv_cache_variants.kv_variants import cache_bytes

# A smoke test's model: small enough to build and run in a moment, 6 layers for the 5 : 1 mix.
QUICK_CONFIG = {**gpt.GPT_CONFIG_124M, "vocab_size": 1000, "emb_dim": 64, "n_heads": 8,
                "n_layers": 6, "context_length": 32}


def variants(cfg):
    """name -> (a function building that variant's model, its cache bytes after n tokens).

    Settings in the published models' proportions: 4 query heads per key/value head (Llama 3
    8B), a latent of 4 head sizes (DeepSeek-V2/V3), a window of an eighth of the context and
    Gemma 3's 5 windowed layers per full one, alone and over the grouped heads (as in Gemma 3).
    Each model is built right after torch.manual_seed(123): "MLA" and "MLA absorbed" hold the
    same attention weights.
    """
    heads, head_dim = cfg["n_heads"], cfg["emb_dim"] // cfg["n_heads"]
    groups, latent, window = heads // 4, 4 * head_dim, cfg["context_length"] // 8
    return {
        "MHA (kv_cache.py)": (lambda: kv_cache.GPTModel(cfg),
                              lambda n: gqa.kv_cache_bytes(cfg, heads, n)),
        f"GQA, {groups} kv groups": (lambda: gqa.gqa_model(cfg, groups),
                                     lambda n: gqa.kv_cache_bytes(cfg, groups, n)),
        "MQA (1 kv group)": (lambda: gqa.gqa_model(cfg, 1), lambda n: gqa.kv_cache_bytes(cfg, 1, n)),
        f"MLA, latent {latent}": (lambda: mla.mla_model(cfg, latent),
                                  lambda n: mla.kv_cache_bytes(cfg, latent, n)),
        f"MLA absorbed, latent {latent}": (
            lambda: mla.absorbed_model(mla.mla_model(cfg, latent)),
            lambda n: mla.kv_cache_bytes(cfg, latent, n)),
        f"SWA, window {window}": (lambda: swa.swa_model(cfg, window),
                                  lambda n: swa.kv_cache_bytes(cfg, window, n)),
        f"SWA {window}, 5 local : 1 global": (lambda: swa.swa_model(cfg, window, 5),
                                              lambda n: swa.kv_cache_bytes(cfg, window, n, 5)),
        f"GQA {groups} + SWA {window}, 5 : 1": (
            lambda: swa.swa_model(cfg, window, 5, n_kv_groups=groups),
            lambda n: swa.kv_cache_bytes(cfg, window, n, 5, n_kv_groups=groups)),
    }


def share_all_but_attention(model, base):
    """Give `model` the embeddings, feed-forward layers, norms and head of `base`."""
    model.tok_emb, model.pos_emb, model.final_norm = base.tok_emb, base.pos_emb, base.final_norm
    model.out_head = base.out_head
    for block, base_block in zip(model.trf_blocks, base.trf_blocks):
        block.ff, block.norm1, block.norm2 = base_block.ff, base_block.norm1, base_block.norm2
    return model.eval()


def weight_bytes_per_step(model):
    """Bytes of the parameters one new token reads: all but the embeddings (a row each)."""
    embeddings = {id(p) for p in (model.tok_emb.weight, model.pos_emb.weight)}
    return sum(p.nbytes for p in model.parameters() if id(p) not in embeddings)


def check_variants(models, formulas, prompt):
    """name of a check -> the variants that fail it (empty when all pass).

    Fills each model's cache with `prompt` but its last token, then takes that token as one
    cached step: its cache must hold the formula's bytes, and the step must give the logits
    the full forward pass over `prompt` gives at that position, without the cache.
    """
    cached_step, full, failed = {}, {}, {"cache bytes equal the formula": []}
    with torch.no_grad():
        for name, model in models.items():
            model(prompt[:, :-1], use_cache=True)
            cached_step[name] = model(prompt[:, -1:], use_cache=True)[0, -1]
            full[name] = model(prompt)[0, -1]
            if cache_bytes(model) != formulas[name](prompt.shape[1]):
                failed["cache bytes equal the formula"].append(name)
    failed["a cached step gives the full forward's logits"] = [
        name for name in models if not close(cached_step[name], full[name])]
    plain, absorbed = [name for name in models if name.startswith("MLA")]
    failed["absorbed MLA gives plain MLA's logits"] = (
        [] if close(full[absorbed], full[plain]) else [absorbed])
    return failed


def close(logits, expected):
    """Equal up to float32 rounding: sums of hundreds of products, done in another order."""
    return torch.allclose(logits, expected, rtol=1e-4, atol=1e-4)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny model (seconds)")
    parser.add_argument("--steps", type=int, default=15, help="timed steps per variant")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    cfg = QUICK_CONFIG if args.quick else gpt.GPT_CONFIG_124M
    cached = cfg["context_length"] - args.steps - 1  # the last step still fits the context

    torch.manual_seed(123)
    base = kv_cache.GPTModel(cfg).eval()
    models, formulas = {}, {}
    for name, (build, formula) in variants(cfg).items():
        torch.manual_seed(123)
        models[name], formulas[name] = share_all_but_attention(build(), base), formula
    torch.manual_seed(123)
    prompt = torch.randint(0, cfg["vocab_size"], (1, cached))
    failed = check_variants(models, formulas, prompt)  # fills the caches: not timed
    held = {name: cache_bytes(model) for name, model in models.items()}
    weights = {name: weight_bytes_per_step(model) for name, model in models.items()}
    # The 1-minute load average: how busy the machine is (None where not reported: Windows).
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    # Each model takes a step in turn, step after step: a machine that gets busier or quieter
    # slows all of them (almost) alike. Any token will do: a step's time does not depend on it.
    with torch.no_grad():
        _, seconds = race({name: lambda model=model: model(prompt[:, :1], use_cache=True)
                           for name, model in models.items()}, args.steps)
    flops = {name: counted_flops(model, prompt[:, :1], use_cache=True)  # one more step
             for name, model in models.items()}

    size = "a tiny GPT (--quick)" if args.quick else "GPT-2 small's width (768, 12 heads, 12 layers)"
    busy = "" if load is None else f", load average before timing: {load:.1f}"
    print(f"{size}, float32, batch 1, torch threads: {torch.get_num_threads()}{busy}")
    print(f"One new token after {cached:,} cached positions, median of {args.steps} steps taken in "
          f"turn\n")
    header = f"{'variant':34s} {'cache MB':>9s} {'weights MB':>11s} {'GFLOP':>7s} {'ms/token':>9s}"
    print(header)
    print("-" * len(header))
    for name in models:
        print(f"{name:34s} {held[name] / 2**20:9.1f} {weights[name] / 2**20:11.1f} "
              f"{flops[name] / 1e9:7.3f} {1000 * seconds[name]:9.1f}")
    print("\nMB: 2**20 bytes. cache: what the caches hold, which a step reads (and, with "
          "kv_cache.py's torch.cat, copies).\nweights: the parameters a step reads (all but the "
          "embeddings). GFLOP: counted by torch.utils.flop_counter for one step.\n")
    for check, names in failed.items():
        print(f"{check}: {not names}" + (f" (fails: {', '.join(names)})" if names else ""))
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
