"""FLOPs: what PyTorch counts for a computation, what the chapter's GPT-2 costs per component,
and how fast this machine does a float32 matmul.

    flops_breakdown(cfg, num_tokens)   # derived from the config, like gpt.parameter_breakdown
    counted_breakdown(model, in_idx)   # what FlopCounterMode counts on model(in_idx), same parts

torch.utils.flop_counter.FlopCounterMode counts matrix products only (mm, addmm, bmm, and
the GPU kernels of fused attention), two FLOPs per multiply-add; a bias added by addmm,
softmax, layer norm, GELU, masking and additions count nothing. (In PyTorch 2.13,
F.scaled_dot_product_attention on the CPU runs a kernel the counter has no formula for: it
counts 0 unless torch.nn.attention.sdpa_kernel(SDPBackend.MATH) makes it use matrix products.)
The derivation follows the same rules, so the two agree exactly. The notebook
bonus/04_flops.ipynb explains both.
"""

import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

COMPONENTS = ("attention projections", "attention scores and mixing", "feed-forward",
              "output head")
PROJECTIONS = ("W_query", "W_key", "W_value", "out_proj")  # gpt.MultiHeadAttention's matrices


def _flop_counter(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) without gradients under a FlopCounterMode; return the counter."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter


def counted_flops(fn, *args, **kwargs):
    """The FLOPs torch.utils.flop_counter counts while `fn(*args, **kwargs)` runs.

    It counts matrix products (and fused attention on a GPU): a multiply and an add are two
    FLOPs. Softmax, layer norm, GELU and other element-wise work count nothing.
    """
    return _flop_counter(fn, *args, **kwargs).get_total_flops()


def counted_flops_by_op(fn, *args, **kwargs):
    """counted_flops split by the operation that ran, e.g. {"aten.mm": ..., "aten.bmm": ...}."""
    counts = _flop_counter(fn, *args, **kwargs).get_flop_counts()
    return {str(op): flops for op, flops in counts.get("Global", {}).items()}


def _seconds(fn, rounds):
    """Median seconds of `rounds` calls of fn(), after one untimed warm-up call."""
    fn()
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def matmul_flops_per_second(size=2048, rounds=5):
    """FLOP/s of one float32 square matrix product: a reference speed for this CPU."""
    a, b = torch.randn(2, size, size)
    return 2 * size**3 / _seconds(lambda: a @ b, rounds)


def forward_flops_per_second(model, in_idx, rounds=3):
    """Counted FLOPs of model(in_idx) divided by its median time, without gradients."""
    flops = counted_flops(model, in_idx)
    with torch.no_grad():
        return flops / _seconds(lambda: model(in_idx), rounds)


def flops_breakdown(cfg, num_tokens):
    """FLOPs of gpt.GPTModel(cfg)'s forward pass over one sequence of `num_tokens` tokens.

    Derived from the config alone, per component, counting what FlopCounterMode counts:
    2 FLOPs per multiply-add of a matrix product, nothing else. A batch of B sequences costs
    B times as much.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"cfg must be a dict, got {type(cfg).__name__}")
    if isinstance(num_tokens, bool) or not isinstance(num_tokens, int):
        raise TypeError(f"num_tokens must be an int, got {num_tokens!r}")
    if num_tokens < 1:
        raise ValueError(f"num_tokens must be positive, got {num_tokens}")
    d, layers, t = cfg["emb_dim"], cfg["n_layers"], num_tokens
    return {
        # W_query, W_key, W_value and out_proj: each token's vector times a d x d matrix.
        "attention projections": layers * 4 * 2 * t * d * d,
        # Q K^T and weights @ V over all heads: the chapter computes the full t x t scores,
        # masked ones included, so this grows with t for every token.
        "attention scores and mixing": layers * 2 * 2 * t * t * d,
        "feed-forward": layers * 2 * 2 * t * d * 4 * d,  # d -> 4d, then 4d -> d
        "output head": 2 * t * d * cfg["vocab_size"],
    }


def counted_breakdown(model, in_idx):
    """What FlopCounterMode counts while model(in_idx) runs, split into flops_breakdown's parts.

    The parts come from the module that ran each product, so this works for any model laid out
    like gpt.GPTModel (trf_blocks holding `att` and `ff`, then `out_head`), whatever its `ff`
    computes. Products run elsewhere are in no part: compare the sum with counted_flops.
    """
    counts = _flop_counter(model, in_idx).get_flop_counts()
    per_module = {name: sum(ops.values()) for name, ops in counts.items()}
    root = type(model).__name__  # FlopCounterMode names modules from the model's class
    parts = dict.fromkeys(COMPONENTS, 0)
    for i in range(len(model.trf_blocks)):
        block = f"{root}.trf_blocks.{i}"
        projections = sum(per_module.get(f"{block}.att.{name}", 0) for name in PROJECTIONS)
        parts["attention projections"] += projections
        parts["attention scores and mixing"] += per_module.get(f"{block}.att", 0) - projections
        parts["feed-forward"] += per_module.get(f"{block}.ff", 0)
    parts["output head"] = per_module.get(f"{root}.out_head", 0)
    return parts
