"""Every model of the course traces into one graph: torch.compile(fullgraph=True) raises at the
first graph break, so each test proves there is none (a check on tensor values in forward would
break it; shape checks do not). backend="eager": tracing finds graph breaks, without the time
code generation takes. The readable caches recompile for each new position (their position is
a Python int): speed, not correctness; kv_cache_fast.py is the fast path.
"""

import pytest
import torch

import gpt
from bonus.gpt2_to_llama_qwen import modern
from bonus.kv_cache import kv_cache, kv_cache_fast
from bonus.kv_cache_variants import gqa, mla, swa
from bonus.moe import moe
from tests.helpers import SMALL_VOCAB_CONFIG, TWO_PROMPTS

CFG = SMALL_VOCAB_CONFIG
PROMPTS = torch.tensor(TWO_PROMPTS)

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
# The chapter's model and the two caches trace in every run of the suite; the bonus models'
# traces are marked slow: .ci/run runs them, the README's command 2 leaves them out.
EVERY_RUN = ["chapter GPTModel", "KV cache, readable"]


def params(names):
    return [pytest.param(name, marks=() if name in EVERY_RUN else pytest.mark.slow)
            for name in names]


def build(name):
    torch.manual_seed(123)
    return MODELS[name]().eval()


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()  # no graphs or recompile counts carried over from another test
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("name", params(MODELS))
def test_forward_traces_as_one_graph(name):
    model = build(name)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        assert torch.equal(compiled(PROMPTS), model(PROMPTS))


@pytest.mark.parametrize("name", params(CACHED))
def test_cached_prefill_and_step_trace_as_one_graph(name):
    model = build(name)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        model.reset_cache()
        expected = [model(PROMPTS, use_cache=True), model(PROMPTS[:, :1], use_cache=True)]
        model.reset_cache()
        traced = [compiled(PROMPTS, use_cache=True), compiled(PROMPTS[:, :1], use_cache=True)]
    torch.testing.assert_close(traced, expected, rtol=0, atol=0)
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
    """The tests above can fail: a check on the ids' values in forward breaks the graph."""

    class CheckedGPTModel(gpt.GPTModel):
        def forward(self, in_idx):
            outside = in_idx[(in_idx < 0) | (in_idx >= self.tok_emb.num_embeddings)]
            if outside.numel():
                raise ValueError("token ids outside the vocabulary")
            return super().forward(in_idx)

    torch.manual_seed(123)
    compiled = torch.compile(CheckedGPTModel(CFG).eval(), fullgraph=True, backend="eager")
    with pytest.raises(Exception, match="(?i)graph break|data-dependent|dynamic"):
        compiled(PROMPTS)
