"""bonus/kv_cache/benchmark.py: it runs, its checks hold, and its FLOP counts are the right ones.

No timing is asserted here: speeds depend on the machine and belong in the script's output.
"""

import pytest
import torch
import torch.nn as nn

import gpt
from bonus.kv_cache import benchmark
from bonus.kv_cache.kv_cache_fast import FastGPT
from tests.helpers import TINY_CONFIG

# The quick run races Hugging Face's generate: on the worker that already imported transformers.
pytestmark = pytest.mark.xdist_group("transformers")


@pytest.mark.slow  # 4.5 s of benchmarking; .ci/run runs it
def test_quick_run_prints_every_table_and_its_checks_hold(capsys):
    assert benchmark.main(["--quick", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    for row in ("(no cache)", "kv_cache.py", "kv_cache_fast.py", "Hugging Face generate",
                "one-shot", "copy bandwidth", "kv_cache_fast's layout", "nn.Linear's layout",
                "of its layout's floor", "prefill", "of matmul"):
        assert row in out
    assert "identical ids: True" in out
    assert "logits match within 1e-5: True" in out


def test_counted_flops_include_the_fused_attention():
    cfg = {**TINY_CONFIG, "qkv_bias": True}
    torch.manual_seed(123)
    model = gpt.GPTModel(cfg).eval()
    batch, seq_len = 2, 8
    x = torch.randint(0, cfg["vocab_size"], (batch, seq_len))
    flops = benchmark.forward_flops(model, FastGPT(model), x)
    # Two FLOPs per matrix weight per token, plus attention's scores and weighted sums over
    # every pair of positions (the chapter's masked attention computes them all).
    weights = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    attention = 4 * batch * cfg["n_layers"] * seq_len**2 * cfg["emb_dim"]
    assert flops["teaching"] == flops["fast"] == 2 * batch * seq_len * weights + attention
    # The prefill runs the output head at the last position only.
    head_skipped = 2 * batch * (seq_len - 1) * cfg["emb_dim"] * cfg["vocab_size"]
    assert flops["prefill"] == flops["fast"] - head_skipped
