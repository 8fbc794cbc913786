"""Race the greedy generators on the same weights, and compare them with this machine's limits.

    python bonus/kv_cache/benchmark.py           # GPT-2 small, 200 new tokens: 5 to 7 minutes on 2 cores
    python bonus/kv_cache/benchmark.py --quick   # a tiny model and a few tokens: a smoke test

Contenders take turns, round after round; each figure is the median round (see the README).
"""

import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.nn.attention import SDPBackend, sdpa_kernel

import gpt
from bonus.flops.flops import counted_flops, matmul_flops_per_second
from bonus.hf_side_by_side.hf_interop import hf_from_gptmodel
from bonus.kv_cache import kv_cache
from bonus.kv_cache.kv_cache_fast import FastGPT, generate_fast, lay_out, new_cache

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


def hf_generator(model, idx):
    """Greedy generation from `idx` with Hugging Face's GPT2LMHeadModel holding `model`'s
    weights: a function of the number of new tokens."""
    hf_model = hf_from_gptmodel(model).eval()
    # hf_from_gptmodel shares our tensors as transposed views, but a model loaded from a
    # checkpoint holds contiguous ones: race it in that, its usual, layout.
    with torch.no_grad():
        for param in hf_model.parameters():
            param.data = param.data.contiguous()
    # The model is untrained, so end-of-text means nothing: generate every token, as we do.
    hf_model.generation_config.eos_token_id = None
    return lambda n: hf_model.generate(idx, attention_mask=torch.ones_like(idx),
                                       max_new_tokens=n, do_sample=False, use_cache=True)


def print_table(columns, rows):
    """Rows of (label, values formatted as strings) under right-aligned column titles."""
    print(f"  {'':52s}" + "".join(f"{title:>12s}" for title in columns))
    for label, values in rows:
        print(f"  {label:52s}" + "".join(f"{value:>12s}" for value in values))


def weight_streams(model):
    """What one-token steps cannot avoid, as functions of the number of tokens, and its bytes.

    A one-token step multiplies a vector by each weight matrix (embeddings: a row looked up),
    so torch.mv over them all, by row (nn.Linear's layout) or laid out as kv_cache_fast does,
    is a practical floor on a step's time. Copying as many bytes takes no arithmetic at all.
    """
    by_row = [m.weight.detach() for m in model.modules() if isinstance(m, nn.Linear)]
    fast_layout = [lay_out(w) for w in by_row]
    vectors = [torch.randn(w.shape[1]) for w in by_row]
    source = torch.ones(sum(w.numel() for w in by_row))
    target = torch.empty_like(source)

    def stream(matrices, n):
        return [[torch.mv(w, v) for w, v in zip(matrices, vectors)] for _ in range(n)]

    return {"floor, by row": lambda n: stream(by_row, n),
            "floor, fast layout": lambda n: stream(fast_layout, n),
            "copy": lambda n: [target.copy_(source) for _ in range(n)]}, source.nbytes


def generation_race(model, fast, new_tokens, rounds):
    """Race the generators, and the weight streams over as many tokens; print tokens/s and
    whether all ids agree. Returns both."""
    idx = gpt.text_to_token_ids(PROMPT, gpt.get_tokenizer())
    readable = kv_cache.from_gpt(model)  # a copy in the same layout: not timed
    context = fast.cfg["context_length"]  # FastGPT(model) keeps model's config
    generators = {
        "simple": lambda n: gpt.generate_text_simple(model, idx, n, context),
        "readable": lambda n: kv_cache.generate_text_cached(readable, idx, n, context),
        "fast": lambda n: generate_fast(fast, idx, n, context),
        "hf": hf_generator(model, idx),
    }
    streams, weight_bytes = weight_streams(model)
    every = {**generators, **streams}
    race({name: lambda g=g: g(2) for name, g in every.items()}, 1)  # warm-up
    contenders = {name: lambda g=g: g(new_tokens) for name, g in every.items()}
    contenders["convert"] = lambda: FastGPT(model)  # what a one-shot call pays on top
    ids, seconds = race(contenders, rounds)
    convert_seconds = seconds.pop("convert")
    identical = all(torch.equal(ids[name], ids["simple"]) for name in generators)
    speed = {name: new_tokens / s for name, s in seconds.items()}
    speed["one-shot"] = new_tokens / (seconds["fast"] + convert_seconds)
    # A copy reads and writes each byte: bandwidth counts both (as the STREAM benchmark does).
    speed["copy limit"] = 2 * speed.pop("copy")

    print(f"\nGreedy generation: {new_tokens} new tokens from {PROMPT!r}, batch 1")
    labels = {"simple": "gpt.generate_text_simple (no cache)",
              "readable": "generate_text_cached (bonus/kv_cache/kv_cache.py)",
              "fast": "generate_fast (bonus/kv_cache/kv_cache_fast.py)",
              "hf": "Hugging Face generate (its KV cache)",
              "one-shot": "generate_fast, one-shot: FastGPT(model) first"}
    print_table(["tokens/s", "vs no cache", "vs HF"], [(label, [
        f"{speed[name]:.1f}", f"{speed[name] / speed['simple']:.2f}x",
        f"{speed[name] / speed['hf']:.2f}x"]) for name, label in labels.items()])
    print(f"  identical ids: {identical}")
    print(f"  converting with FastGPT(model) takes {1000 * convert_seconds:.0f} ms, "
          f"as long as {convert_seconds * speed['fast']:.1f} tokens of generate_fast")

    print(f"\nMemory: each new token reads every weight matrix once, {weight_bytes / 1e6:.1f} MB")
    labels = {"copy limit": "limit: copy bandwidth (read + write) / bytes",
              "floor, fast layout": "floor: torch.mv over them, kv_cache_fast's layout",
              "floor, by row": "floor: torch.mv over them, nn.Linear's layout",
              "fast": "generate_fast", "readable": "generate_text_cached"}
    print_table(["tokens/s", "GB/s"], [(label, [
        f"{speed[name]:.1f}", f"{speed[name] * weight_bytes / 1e9:.1f}"])
        for name, label in labels.items()])
    for name, floor in [("fast", "floor, fast layout"), ("readable", "floor, by row")]:
        print(f"  {labels[name]} runs at {speed[name] / speed[floor]:.0%} of its layout's floor "
              f"and {speed[name] / speed['copy limit']:.0%} of the copy limit")
    return identical


def forward_flops(model, fast, x):
    """FLOPs torch.utils.flop_counter counts for the forward passes that forward_race times.

    On the CPU, FlopCounterMode has no formula for scaled_dot_product_attention's fused
    kernel; its math backend does the same products as matrix multiplications, which it counts.
    """
    with sdpa_kernel(SDPBackend.MATH):
        return {"teaching": counted_flops(model, x), "fast": counted_flops(fast, x),
                "prefill": counted_flops(fast, x, new_cache(fast.cfg, *x.shape), last_only=True)}


def forward_race(model, fast, batch, seq_len, matmul_size, rounds):
    """Print tokens/s and FLOP/s of forward passes against a square matmul's; return whether
    the fast logits agree with the chapter's within 1e-5."""
    x = torch.randint(0, fast.cfg["vocab_size"], (batch, seq_len))
    with torch.inference_mode():
        logits, seconds = race({
            "teaching": lambda: model(x), "fast": lambda: fast(x),
            # generate_fast's first step on a prompt: fill a cache, last position's logits only
            "prefill": lambda: fast(x, new_cache(fast.cfg, batch, seq_len), last_only=True),
            # FLOP/s of a square matmul, the reference, as measured in the last round
            "matmul": lambda: matmul_flops_per_second(matmul_size),
        }, rounds)
    reference = logits.pop("matmul")
    close = (torch.allclose(logits["fast"], logits["teaching"], rtol=0, atol=1e-5)
             and torch.allclose(logits["prefill"], logits["teaching"][:, -1:], rtol=0, atol=1e-5))
    flops = forward_flops(model, fast, x)

    print(f"\nForward pass, batch {batch} x {seq_len} tokens, FLOPs counted by FlopCounterMode")
    labels = {"teaching": "gpt.GPTModel, logits at every position",
              "fast": "FastGPT, logits at every position",
              "prefill": "FastGPT, prefill: cache + last logits"}
    print_table(["tokens/s", "GFLOP/s", "of matmul"], [(label, [
        f"{batch * seq_len / seconds[name]:.1f}", f"{flops[name] / seconds[name] / 1e9:.1f}",
        f"{flops[name] / seconds[name] / reference:.0%}"]) for name, label in labels.items()])
    print(f"  matmul: a float32 {matmul_size} x {matmul_size} product, {reference / 1e9:.1f} "
          "GFLOP/s; a reference, not a bound: products of other shapes may run faster")
    print(f"  logits match within 1e-5: {close}")
    return close


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny model, few tokens (seconds)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median is reported)")
    args = parser.parse_args(argv)
    cfg = {**(QUICK_CONFIG if args.quick else gpt.GPT_CONFIG_124M), "qkv_bias": True}
    new_tokens, (batch, seq_len) = (20, (2, 32)) if args.quick else (200, (8, 128))

    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()  # qkv_bias=True: the biases are real numbers
    fast = FastGPT(model)  # converted once, before the race, like the HF model
    size = "a tiny GPT (--quick)" if args.quick else "GPT-2 small (124M config)"
    print(f"{size}, qkv_bias=True, untied head, seed 123, float32")
    print(f"torch threads: {torch.get_num_threads()}, median of {args.rounds} alternating rounds")
    identical = generation_race(model, fast, new_tokens, args.rounds)
    close = forward_race(model, fast, batch, seq_len, 256 if args.quick else 2048, args.rounds)
    return 0 if identical and close else 1


if __name__ == "__main__":
    sys.exit(main())
