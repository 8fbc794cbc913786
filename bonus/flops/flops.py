"""FLOPs: what PyTorch counts, what the chapter's GPT-2 costs per component, and how fast this
machine does a float32 matmul.

    flops_breakdown(cfg, num_tokens)      # derived from the config, like gpt.parameter_breakdown
    counted_breakdown(model, in_idx)      # what FlopCounterMode counts on model(in_idx), same parts

Both count matrix products only, 2 FLOPs per multiply-add. See bonus/flops/README.md.
"""

import statistics
import timeit

import torch
import torch.nn.functional as F
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


def _flops_per_second(fn, *args, rounds):
    """Counted FLOPs of fn(*args) over its median time without gradients (counting warms up)."""
    flops = counted_flops(fn, *args)
    with torch.no_grad():
        return flops / statistics.median(timeit.repeat(lambda: fn(*args), number=1, repeat=rounds))


def matmul_flops_per_second(size=2048, rounds=5):
    """FLOP/s of one float32 square matrix product: a reference speed for this CPU."""
    return _flops_per_second(torch.matmul, *torch.randn(2, size, size), rounds=rounds)


def forward_flops_per_second(model, in_idx, rounds=3):
    """Counted FLOPs of model(in_idx) divided by its median time, without gradients."""
    return _flops_per_second(model, in_idx, rounds=rounds)


def flops_breakdown(cfg, num_tokens):
    """FLOPs of gpt.GPTModel(cfg)'s forward pass over one sequence of `num_tokens` tokens.

    Derived from the config alone, per component, counting what FlopCounterMode counts. A batch
    of B sequences costs B times as much.
    """
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


def causal_scores_flops(cfg, num_tokens):
    """flops_breakdown's "attention scores and mixing" without the masked scores.

    Position t (counting from 1) meets t positions: its scores and weighted sum cost 2 * 2 * t * d
    per layer, as one cached generation step does. Summed over t = 1..T: 2 L d T (T + 1), a
    fraction (T + 1) / (2T) of the full T x T count. Causal kernels such as FlashAttention skip
    the tiles above the diagonal, so they execute about this much.
    """
    return cfg["n_layers"] * 2 * cfg["emb_dim"] * num_tokens * (num_tokens + 1)


def kaplan_forward_flops(cfg, n_ctx):
    """Forward FLOPs per token by Kaplan et al. (2020), "Scaling Laws for Neural Language
    Models", Table 1: C_forward = 2N + 2 n_layer n_ctx d_attn.

    N = 2 d_model n_layer (2 d_attn + d_ff) counts the non-embedding weights of the blocks;
    GPT-2 has d_attn = d_model and d_ff = 4 d_model. The output head (their "de-embed") is
    not in this total.
    """
    d, layers = cfg["emb_dim"], cfg["n_layers"]
    non_embedding = 2 * d * layers * (2 * d + 4 * d)
    return 2 * non_embedding + 2 * layers * n_ctx * d


def chinchilla_forward_flops(cfg, seq_len):
    """Forward FLOPs of one sequence by Hoffmann et al. (2022), "Training Compute-Optimal Large
    Language Models", Appendix F, term by term (key_size x num_heads = d_model in GPT-2)."""
    d, layers, heads, t = cfg["emb_dim"], cfg["n_layers"], cfg["n_heads"], seq_len
    key_size, vocab, ffw_size = d // heads, cfg["vocab_size"], 4 * d
    embeddings = 2 * t * vocab * d  # the lookup counted as a product with one-hot vectors
    attention = (2 * 3 * t * d * (key_size * heads)  # key, query and value projections
                 + 2 * t * t * (key_size * heads)  # key @ query logits
                 + 3 * heads * t * t  # softmax
                 + 2 * t * t * (key_size * heads)  # softmax @ query reductions: weights @ V
                 + 2 * t * (key_size * heads) * d)  # final linear
    dense_block = 2 * t * (d * ffw_size + d * ffw_size)
    logits = 2 * t * d * vocab
    return embeddings + layers * (attention + dense_block) + logits


def counted_training_flops(model, in_idx, target_idx):
    """What FlopCounterMode counts in one training step: the forward pass to the cross-entropy
    loss, then its backward pass. Returns {"forward": ..., "backward": ...}.

    The backward pass leaves the gradients in the parameters' .grad, as in training.
    """
    with FlopCounterMode(display=False) as forward:
        logits = model(in_idx)
        loss = F.cross_entropy(logits.flatten(0, 1), target_idx.flatten().to(logits.device))
    with FlopCounterMode(display=False) as backward:
        loss.backward()
    return {"forward": forward.get_total_flops(), "backward": backward.get_total_flops()}


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
