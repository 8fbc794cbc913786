"""Every model of the course traces into one graph: torch.compile(fullgraph=True) raises at the
first graph break, so each test proves there is none. A check on tensor values in a forward
pass (an id guard, `.item()`, a boolean mask) would break the graph; shape checks do not.

backend="eager" runs the traced graph as it is: tracing is what finds graph breaks, and
skipping code generation keeps each test to about a second. (The readable caches keep their
position as a Python int attribute, which dynamo treats as a constant: a compiled cached model
traces as one graph but recompiles for each new position. That costs speed, not correctness;
bonus/kv_cache/kv_cache_fast.py is the fast path.)
"""

import pytest
import torch

import gpt
from bonus.gpt2_to_llama_qwen import modern
from bonus.kv_cache import kv_cache, kv_cache_fast
from bonus.kv_cache_variants import gqa, mla, swa
from bonus.moe import moe
from tests.helpers import TINY_CONFIG

CFG = {**TINY_CONFIG, "vocab_size": 500}
PROMPTS = torch.tensor([[154, 11, 314, 71], [109, 362, 400, 345]])

# name -> build a model (in eval mode) from CFG; every one is an nn.Module with a GPT's forward.
MODELS = {
    "chapter GPTModel": lambda: gpt.GPTModel(CFG),
    "KV cache, readable": lambda: kv_cache.GPTModel(CFG),
    "GQA": lambda: gqa.gqa_model(CFG, 2),
    "MLA": lambda: mla.mla_model(CFG, 8),
    "MLA absorbed": lambda: mla.absorbed_model(mla.mla_model(CFG, 8).eval()),
    "SWA, local:global 1:1": lambda: swa.swa_model(CFG, 3, local_per_global=1),
    "GQA + SWA 1:1": lambda: swa.swa_model(CFG, 3, local_per_global=1, n_kv_groups=2),
    "MoE": lambda: moe.moe_gpt_model({**CFG, "n_experts": 4, "top_k": 2, "shared_expert": True}),
    "Llama/Qwen3-style": lambda: modern.ModernGPT({**modern.TINY_CONFIG, "vocab_size": 500,
                                                    "qk_norm": True, "tie_embeddings": True}),
    # cos/sin and RMSNorm cast between float32 and bfloat16 inside the graph
    "Llama/Qwen3-style, bfloat16": lambda: modern.ModernGPT(
        {**modern.TINY_CONFIG, "vocab_size": 500, "qk_norm": True}).to(torch.bfloat16),
}
CACHED = ["KV cache, readable", "GQA", "MLA", "MLA absorbed", "SWA, local:global 1:1",
          "GQA + SWA 1:1", "Llama/Qwen3-style"]


def build(name):
    torch.manual_seed(123)
    return MODELS[name]().eval()


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()  # no graphs or recompile counts carried over from another test
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("name", MODELS)
def test_forward_traces_as_one_graph(name):
    model = build(name)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        assert torch.equal(compiled(PROMPTS), model(PROMPTS))


@pytest.mark.parametrize("name", CACHED)
def test_cached_prefill_and_step_trace_as_one_graph(name):
    model = build(name)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        model.reset_cache()
        expected = [model(PROMPTS, use_cache=True), model(PROMPTS[:, :1], use_cache=True)]
        model.reset_cache()
        traced = [compiled(PROMPTS, use_cache=True), compiled(PROMPTS[:, :1], use_cache=True)]
    assert all(torch.equal(a, b) for a, b in zip(traced, expected))
    assert model.current_pos == PROMPTS.shape[1] + 1  # the traced graph kept the cache's count


def test_fast_kv_cache_traces_as_one_graph():
    fast = kv_cache_fast.FastGPT(build("chapter GPTModel"))
    step = torch.compile(fast.__call__, fullgraph=True, backend="eager")
    with torch.inference_mode():
        cache = kv_cache_fast.new_cache(fast.cfg, 2, 8)
        prefill = step(PROMPTS, cache, 0, last_only=True)
        one = step(PROMPTS[:, :1], cache, PROMPTS.shape[1], last_only=True)
        cache = kv_cache_fast.new_cache(fast.cfg, 2, 8)
        assert torch.equal(prefill, fast(PROMPTS, cache, 0, last_only=True))
        assert torch.equal(one, fast(PROMPTS[:, :1], cache, PROMPTS.shape[1], last_only=True))


def test_a_check_on_id_values_would_break_the_graph():
    """The tests above can fail: the id guard the chapter's model once had breaks the graph."""

    class CheckedGPTModel(gpt.GPTModel):
        def forward(self, in_idx):
            outside = in_idx[(in_idx < 0) | (in_idx >= self.cfg["vocab_size"])]
            if outside.numel():
                raise ValueError("token ids outside the vocabulary")
            return super().forward(in_idx)

    torch.manual_seed(123)
    compiled = torch.compile(CheckedGPTModel(CFG).eval(), fullgraph=True, backend="eager")
    with pytest.raises(Exception, match="(?i)graph break|data-dependent|dynamic"):
        compiled(PROMPTS)
