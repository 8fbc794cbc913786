"""Race three greedy generators on the same weights, and time a forward pass.

    python bonus/benchmark.py           # GPT-2 small, 200 new tokens: about 4 minutes on 2 cores
    python bonus/benchmark.py --quick   # a tiny model and a few tokens: a smoke test

Contenders: gpt.generate_text_simple (no cache), generate_cached (bonus/kv_cache.py) and
Hugging Face's GPT2LMHeadModel.generate with its own KV cache, all holding the weights of one
seed-123 GPTModel. They run in turn, round after round, in this one process, so a machine
that gets busier or quieter affects all of them alike; each figure is the median round.
"""

import argparse
import statistics
import sys
import time

import torch

import gpt
from bonus.hf_interop import hf_from_gptmodel
from bonus.kv_cache import KVCacheGPT, generate_cached, new_cache

QUICK_CONFIG = {**gpt.GPT_CONFIG_124M, "emb_dim": 64, "n_heads": 4, "n_layers": 2,
                "context_length": 64}
PROMPT = "Hello, I am"


def race(contenders, rounds):
    """Call each contender once per round, in turn; return its last output and median time."""
    times = {name: [] for name in contenders}
    outputs = {}
    for _ in range(rounds):
        for name, fn in contenders.items():
            outputs.pop(name, None)  # free the last output first: logits can be large
            start = time.perf_counter()
            outputs[name] = fn()
            times[name].append(time.perf_counter() - start)
    return outputs, {name: statistics.median(t) for name, t in times.items()}


def generation_race(model, fast, new_tokens, rounds):
    """Tokens/s of each generator, and whether all three returned the same ids."""
    hf_model = hf_from_gptmodel(model).eval()
    # hf_from_gptmodel shares our tensors as transposed views, but a model loaded from a
    # checkpoint holds contiguous ones: race it in that, its usual, layout.
    with torch.no_grad():
        for param in hf_model.parameters():
            param.data = param.data.contiguous()
    # The model is untrained, so end-of-text means nothing: generate every token, as we do.
    hf_model.generation_config.eos_token_id = None
    idx = gpt.text_to_token_ids(PROMPT, gpt.get_tokenizer())
    context = model.cfg["context_length"]

    def hf_generate(n):
        return hf_model.generate(idx, attention_mask=torch.ones_like(idx), max_new_tokens=n,
                                 do_sample=False, use_cache=True)

    generators = {
        "simple": lambda n: gpt.generate_text_simple(model, idx, n, context),
        "cached": lambda n: generate_cached(fast, idx, n, context),
        "hf": hf_generate,
    }
    race({name: lambda g=g: g(2) for name, g in generators.items()}, 1)  # warm-up
    ids, seconds = race({name: lambda g=g: g(new_tokens) for name, g in generators.items()},
                        rounds)
    identical = all(torch.equal(out, ids["simple"]) for out in ids.values())
    return {name: new_tokens / s for name, s in seconds.items()}, identical


def forward_race(model, fast, batch, seq_len, rounds):
    """Tokens/s of one forward pass, and whether the logits agree within 1e-5."""
    x = torch.randint(0, model.cfg["vocab_size"], (batch, seq_len))

    def prefill():  # what generate_cached does with a prompt: fill a cache, last logits only
        return fast(x, new_cache(model.cfg, batch, seq_len), last_only=True)

    with torch.inference_mode():
        logits, seconds = race({"teaching": lambda: model(x), "fast": lambda: fast(x),
                                "prefill": prefill}, rounds)
    close = all([
        (logits["fast"] - logits["teaching"]).abs().max().item() < 1e-5,
        (logits["prefill"] - logits["teaching"][:, -1:]).abs().max().item() < 1e-5,
    ])
    return {name: batch * seq_len / s for name, s in seconds.items()}, close


def print_speeds(speed, labels, baselines):
    """A table: tokens/s per contender, then its ratio to each baseline contender."""
    print(f"  {'':44s}{'tokens/s':>9s}" + "".join(f"{title:>13s}" for title in baselines))
    for name, label in labels.items():
        ratios = "".join(f"{speed[name] / speed[base]:12.2f}x" for base in baselines.values())
        print(f"  {label:44s}{speed[name]:9.1f}{ratios}")


def verdict(ratio, target):
    return f"{ratio:6.2f}x (target >= {target}x): {'met' if ratio >= target else 'NOT met'}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny model, few tokens (seconds)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median is reported)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    cfg = {**(QUICK_CONFIG if args.quick else gpt.GPT_CONFIG_124M), "qkv_bias": True}
    new_tokens, (batch, seq_len) = (20, (2, 32)) if args.quick else (200, (8, 128))

    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()  # qkv_bias=True: the biases are real numbers
    fast = KVCacheGPT.from_gpt(model)  # converted once, before the race, like the HF model
    speed, identical = generation_race(model, fast, new_tokens, args.rounds)
    fwd_speed, close = forward_race(model, fast, batch, seq_len, args.rounds)

    size = "a tiny GPT (--quick)" if args.quick else "GPT-2 small (124M config)"
    print(f"{size}, qkv_bias=True, untied head, seed 123, float32, "
          f"torch threads: {torch.get_num_threads()}, median of {args.rounds} alternating rounds")
    print(f"\nGreedy generation: {new_tokens} new tokens from {PROMPT!r}, batch 1")
    print_speeds(speed, {"simple": "gpt.generate_text_simple (no cache)",
                         "cached": "generate_cached (bonus/kv_cache.py)",
                         "hf": "Hugging Face generate (its KV cache)"},
                 baselines={"vs simple": "simple", "vs HF": "hf"})
    print(f"  identical ids: {identical}")

    print(f"\nForward pass, batch {batch} x {seq_len} tokens")
    print_speeds(fwd_speed, {"teaching": "gpt.GPTModel, logits at every position",
                             "fast": "KVCacheGPT, logits at every position",
                             "prefill": "KVCacheGPT, prefill: cache + last logits"},
                 baselines={"vs teaching": "teaching"})
    print(f"  logits match within 1e-5: {close}")

    if args.quick:
        print("\nTargets are judged on the full run only (without --quick).")
    else:
        print("\nTargets (ratios within this run)")
        targets = [
            ("generate_cached vs Hugging Face generate", speed["cached"] / speed["hf"], 1.15),
            ("generate_cached vs generate_text_simple", speed["cached"] / speed["simple"], 6),
            ("forward, every position: fast vs teaching",
             fwd_speed["fast"] / fwd_speed["teaching"], 1.5),
        ]
        for label, ratio, target in targets:
            print(f"  {label:44s}{verdict(ratio, target)}")
    return 0 if identical and close else 1


if __name__ == "__main__":
    sys.exit(main())
