"""Race the greedy generators on the same weights, and measure what the fast path's choices buy.

    python bonus/benchmark.py           # GPT-2 small, 200 new tokens: about 5 minutes on 2 cores
    python bonus/benchmark.py --quick   # a tiny model and a few tokens: a smoke test

Contenders: gpt.generate_text_simple (no cache), generate_text_cached (bonus/kv_cache.py, the
readable cache), generate_fast (bonus/kv_cache_fast.py) and Hugging Face's
GPT2LMHeadModel.generate with its own KV cache, all holding the weights of one seed-123
GPTModel. They run in turn, round after round, in this one process, so a machine that gets
busier or quieter affects all of them alike; each figure is the median round.
"""

import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
from bonus import kv_cache
from bonus.hf_interop import hf_from_gptmodel
from bonus.kv_cache_fast import FastGPT, by_column, generate_fast, layer_norm, new_cache

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


def hf_generator(model):
    """Greedy generation with Hugging Face's GPT2LMHeadModel holding `model`'s weights."""
    hf_model = hf_from_gptmodel(model).eval()
    # hf_from_gptmodel shares our tensors as transposed views, but a model loaded from a
    # checkpoint holds contiguous ones: race it in that, its usual, layout.
    with torch.no_grad():
        for param in hf_model.parameters():
            param.data = param.data.contiguous()
    # The model is untrained, so end-of-text means nothing: generate every token, as we do.
    hf_model.generation_config.eos_token_id = None

    def generate(idx, n):
        return hf_model.generate(idx, attention_mask=torch.ones_like(idx), max_new_tokens=n,
                                 do_sample=False, use_cache=True)

    return generate


def generation_race(model, fast, idx, new_tokens, rounds):
    """Tokens/s of each generator, seconds FastGPT(model) takes, and whether all ids agree."""
    readable = kv_cache.from_gpt(model)  # a copy in the same layout: not timed
    hf_generate = hf_generator(model)
    context = model.cfg["context_length"]
    generators = {
        "simple": lambda n: gpt.generate_text_simple(model, idx, n, context),
        "readable": lambda n: kv_cache.generate_text_cached(readable, idx, n, context),
        "fast": lambda n: generate_fast(fast, idx, n, context),
        "hf": lambda n: hf_generate(idx, n),
    }
    race({name: lambda g=g: g(2) for name, g in generators.items()}, 1)  # warm-up
    contenders = {name: lambda g=g: g(new_tokens) for name, g in generators.items()}
    contenders["convert"] = lambda: FastGPT(model)  # what a one-shot call pays on top
    ids, seconds = race(contenders, rounds)
    convert_seconds = seconds.pop("convert")
    del ids["convert"]
    identical = all(torch.equal(out, ids["simple"]) for out in ids.values())
    speed = {name: new_tokens / s for name, s in seconds.items()}
    speed["one-shot"] = new_tokens / (seconds["fast"] + convert_seconds)
    return speed, convert_seconds, identical


def copy_bandwidth(nbytes, rounds):
    """Bytes per second a large tensor copy moves, counting each byte read and each written
    (the convention of the STREAM benchmark's "copy")."""
    source = torch.ones(nbytes // 4)
    target = torch.empty_like(source)
    _, seconds = race({"copy": lambda: target.copy_(source)}, rounds)
    return 2 * source.nbytes / seconds["copy"]


def weight_bytes_per_token(model):
    """Bytes of weights one generation step reads: all but the embeddings (one row each)."""
    return sum(p.nbytes for name, p in model.named_parameters() if "_emb." not in name)


def optimization_pairs(model, fast, position):
    """For each optimization of kv_cache_fast: one step's worth of the work it changes, done
    without it (as gpt.py or the readable cache does it) and with it, over every layer.

    The step feeds one token at `position`, after `position` cached ones.
    """
    cfg = model.cfg
    heads, head_dim = cfg["n_heads"], cfg["emb_dim"] // cfg["n_heads"]
    x = torch.randn(1, 1, cfg["emb_dim"])
    hidden = torch.randn(1, 1, 4 * cfg["emb_dim"])
    blocks = model.trf_blocks

    matrices = [fast.out_head] + [w for b in fast.blocks for w in
                                  (b.qkv_weight, b.out_proj[0], b.ff_expand[0], b.ff_contract[0])]
    row_major = [w.contiguous() for w in matrices]  # nn.Linear's layout
    vectors = [torch.randn(1, w.shape[1]) for w in matrices]
    separate_qkv = [[by_column(part.contiguous()) for part in b.qkv_weight.chunk(3)]
                    for b in fast.blocks]

    cached = torch.randn(2, 1, heads, position, head_dim)  # keys and values so far
    new = torch.randn(2, 1, heads, 1, head_dim)
    cache = new_cache(cfg, 1, position + 1)
    query = torch.randn(1, heads, 1, head_dim)
    keys, values = torch.randn(2, 1, heads, position + 1, head_dim)
    att = blocks[0].att

    def chapter_attention():  # gpt.MultiHeadAttention's arithmetic, one query
        scores = query @ keys.transpose(2, 3)
        scores.masked_fill_(att.mask[position : position + 1, : position + 1], -torch.inf)
        return torch.softmax(scores / head_dim**0.5, dim=-1) @ values

    chapter_norms = [n for b in blocks for n in (b.norm1, b.norm2)] + [model.final_norm]
    fast_norms = [n for b in fast.blocks for n in (b.norm1, b.norm2)] + [fast.final_norm]
    chapter_gelu = blocks[0].ff.layers[1]
    token = torch.tensor([[0]])

    def step_with(grad_mode):
        with torch.inference_mode(False), grad_mode():  # leave the race's inference mode
            return fast(token, cache, position, last_only=True)

    layers = range(cfg["n_layers"])
    return {
        "wide matrices stored by column": (
            lambda: [F.linear(v, w) for v, w in zip(vectors, row_major)],
            lambda: [F.linear(v, w) for v, w in zip(vectors, matrices)]),
        "query, key, value as one matrix": (
            lambda: [F.linear(x, w) for qkv in separate_qkv for w in qkv],
            lambda: [F.linear(x, b.qkv_weight) for b in fast.blocks]),
        "cache written in place (not torch.cat)": (
            lambda: [torch.cat((cached[i], new[i]), dim=2) for _ in layers for i in (0, 1)],
            lambda: [cache[i, :, :, :, position:].copy_(new) for i in layers]),
        "fused attention (scaled_dot_product)": (
            lambda: [chapter_attention() for _ in layers],
            lambda: [F.scaled_dot_product_attention(query, keys, values) for _ in layers]),
        "F.layer_norm (not gpt.LayerNorm)": (
            lambda: [norm(x) for norm in chapter_norms],
            lambda: [layer_norm(x, norm) for norm in fast_norms]),
        "F.gelu (not gpt.GELU)": (
            lambda: [chapter_gelu(hidden) for _ in layers],
            lambda: [F.gelu(hidden, approximate="tanh") for _ in layers]),
        "inference_mode (not no_grad), whole step": (
            lambda: step_with(torch.no_grad),
            lambda: step_with(torch.inference_mode)),
    }


def optimization_race(model, fast, position, rounds):
    """Milliseconds per token of each optimization's work, without and with it."""
    pairs = optimization_pairs(model, fast, position)
    contenders = {}
    for label, (without, with_it) in pairs.items():
        contenders[(label, "without")] = without
        contenders[(label, "with")] = with_it
    with torch.inference_mode():  # as in generate_fast (the last pair sets its own mode)
        _, seconds = race(contenders, rounds)
    return {label: (1000 * seconds[(label, "without")], 1000 * seconds[(label, "with")])
            for label in pairs}


def forward_race(model, fast, batch, seq_len, matmul_size, rounds):
    """Tokens/s and GFLOP/s of one forward pass and of a large square matrix product (the
    ceiling), and whether the fast logits agree with the chapter's within 1e-5."""
    cfg = model.cfg
    x = torch.randint(0, cfg["vocab_size"], (batch, seq_len))
    a, b = torch.randn(2, matmul_size, matmul_size)

    def prefill():  # what generate_fast does with a prompt: fill a cache, last logits only
        return fast(x, new_cache(cfg, batch, seq_len), last_only=True)

    with torch.inference_mode():
        logits, seconds = race({"teaching": lambda: model(x), "fast": lambda: fast(x),
                                "prefill": prefill, "matmul": lambda: a @ b}, rounds)
    # Two FLOPs (multiply, add) per matrix weight per token, plus attention's scores and
    # weighted sums (the chapter computes them for every pair of positions): what
    # torch.utils.flop_counter counts for the chapter's model. The fast forward does the same
    # multiplications; the prefill skips the output head at all but the last position.
    matrix_weights = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    forward_flops = (2 * batch * seq_len * matrix_weights
                     + 4 * batch * cfg["n_layers"] * seq_len**2 * cfg["emb_dim"])
    head_flops_skipped = 2 * batch * (seq_len - 1) * cfg["emb_dim"] * cfg["vocab_size"]
    flops = {"teaching": forward_flops, "fast": forward_flops,
             "prefill": forward_flops - head_flops_skipped, "matmul": 2 * matmul_size**3}
    close = all([
        (logits["fast"] - logits["teaching"]).abs().max().item() < 1e-5,
        (logits["prefill"] - logits["teaching"][:, -1:]).abs().max().item() < 1e-5,
    ])
    tokens_per_s = {name: batch * seq_len / s for name, s in seconds.items()}
    gflops = {name: flops[name] / s / 1e9 for name, s in seconds.items()}
    return tokens_per_s, gflops, close


def print_speeds(speed, labels, baselines):
    """A table: tokens/s per contender, then its ratio to each baseline contender."""
    print(f"  {'':48s}{'tokens/s':>9s}" + "".join(f"{title:>13s}" for title in baselines))
    for name, label in labels.items():
        ratios = "".join(f"{speed[name] / speed[base]:12.2f}x" for base in baselines.values())
        print(f"  {label:48s}{speed[name]:9.1f}{ratios}")


def report_generation(speed, convert_seconds, identical, new_tokens):
    print(f"\nGreedy generation: {new_tokens} new tokens from {PROMPT!r}, batch 1")
    print_speeds(speed, {"simple": "gpt.generate_text_simple (no cache)",
                         "readable": "generate_text_cached (bonus/kv_cache.py)",
                         "fast": "generate_fast (bonus/kv_cache_fast.py)",
                         "hf": "Hugging Face generate (its KV cache)",
                         "one-shot": "generate_fast, one-shot: FastGPT(model) first"},
                 baselines={"vs no cache": "simple", "vs HF": "hf"})
    print(f"  identical ids: {identical}")
    print(f"  converting with FastGPT(model) takes {1000 * convert_seconds:.0f} ms, "
          f"as long as {convert_seconds * speed['fast']:.1f} tokens of generate_fast")


def report_bandwidth(speed, weight_bytes, bandwidth):
    limit = bandwidth / weight_bytes
    print("\nMemory bandwidth: each new token reads every weight matrix once")
    print(f"  weights read per token {weight_bytes / 1e6:.1f} MB; copy bandwidth (read + written)"
          f" {bandwidth / 1e9:.1f} GB/s: at most {limit:.1f} tokens/s")
    print(f"  generate_fast reaches {speed['fast'] / limit:.0%} of that limit")


def report_optimizations(saved, speed, position):
    print("\nWhat each optimization of kv_cache_fast buys: the work it changes in one step")
    print(f"(the step at position {position}, all layers), in ms per token")
    print(f"  {'':48s}{'without':>9s}{'with':>9s}{'saved':>9s}")
    for label, (without, with_it) in saved.items():
        print(f"  {label:48s}{without:9.2f}{with_it:9.2f}{without - with_it:9.2f}")
    total = sum(without - with_it for without, with_it in saved.values())
    readable, fast = 1000 / speed["readable"], 1000 / speed["fast"]
    print(f"  {'total saved':48s}{'':18s}{total:9.2f}")
    print(f"  (whole tokens: readable cache {readable:.2f} ms, fast cache {fast:.2f} ms, "
          f"{readable - fast:.2f} ms apart)")


def report_forward(tokens_per_s, gflops, close, batch, seq_len, matmul_size):
    print(f"\nForward pass, batch {batch} x {seq_len} tokens, and the float32 matmul ceiling")
    print(f"  {'':48s}{'tokens/s':>9s}{'GFLOP/s':>9s}{'of ceiling':>12s}")
    labels = {"teaching": "gpt.GPTModel, logits at every position",
              "fast": "FastGPT, logits at every position",
              "prefill": "FastGPT, prefill: cache + last logits",
              "matmul": f"ceiling: square matmul, {matmul_size} x {matmul_size}"}
    for name, label in labels.items():
        tokens = f"{tokens_per_s[name]:9.1f}" if name != "matmul" else f"{'':9s}"
        print(f"  {label:48s}{tokens}{gflops[name]:9.1f}{gflops[name] / gflops['matmul']:12.0%}")
    print(f"  logits match within 1e-5: {close}")


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
    matmul_size = 256 if args.quick else 2048
    short_rounds = 10 * args.rounds  # for the measurements that take milliseconds

    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()  # qkv_bias=True: the biases are real numbers
    fast = FastGPT(model)  # converted once, before the race, like the HF model
    idx = gpt.text_to_token_ids(PROMPT, gpt.get_tokenizer())
    speed, convert_seconds, identical = generation_race(model, fast, idx, new_tokens, args.rounds)
    weight_bytes = weight_bytes_per_token(model)
    bandwidth = copy_bandwidth(weight_bytes, short_rounds)
    middle = idx.shape[1] + new_tokens // 2  # a step in the middle of the generation race
    saved = optimization_race(model, fast, middle, short_rounds)
    tokens_per_s, gflops, close = forward_race(model, fast, batch, seq_len, matmul_size,
                                               args.rounds)

    size = "a tiny GPT (--quick)" if args.quick else "GPT-2 small (124M config)"
    print(f"{size}, qkv_bias=True, untied head, seed 123, float32")
    print(f"torch threads: {torch.get_num_threads()}, median of {args.rounds} alternating rounds")
    report_generation(speed, convert_seconds, identical, new_tokens)
    report_bandwidth(speed, weight_bytes, bandwidth)
    report_optimizations(saved, speed, middle)
    report_forward(tokens_per_s, gflops, close, batch, seq_len, matmul_size)
    if args.quick:
        print("\nTargets are judged on the full run only (without --quick).")
    else:
        print("\nTarget (ratio within this run)")
        label = "generate_fast vs Hugging Face generate"
        print(f"  {label:48s}{verdict(speed['fast'] / speed['hf'], 1.15)}")
    return 0 if identical and close else 1


if __name__ == "__main__":
    sys.exit(main())
