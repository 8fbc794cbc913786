"""Every converter's result lives where its source lives, in its dtype.

A float64 or bfloat16 source on the CPU takes the path a GPU source takes (a result built in
float32 on the CPU shows up as a wrong dtype here, as a wrong device there); the meta device
checks the device itself. Hugging Face's converters are checked in test_hf_interop.py and
test_modern_hf.py.
"""

import pytest
import torch

import gpt
from bonus.claims_tested import claims
from bonus.kv_cache import kv_cache
from bonus.kv_cache.kv_cache_fast import FastGPT, generate_fast
from bonus.kv_cache_variants import gqa, mla
from bonus.kv_cache_variants.kv_variants import copy_weights
from tests.helpers import SMALL_VOCAB_CONFIG, TWO_PROMPTS

CFG = {**SMALL_VOCAB_CONFIG, "drop_rate": 0.0}
IDS = torch.tensor(TWO_PROMPTS)
DTYPES = [torch.float64, torch.bfloat16]


def chapter_model(dtype):
    torch.manual_seed(123)
    return gpt.GPTModel(CFG).to(dtype).eval()


def float_tensors(module):
    return [t for t in [*module.parameters(), *module.buffers()] if t.is_floating_point()]


@pytest.mark.parametrize("dtype", DTYPES)
def test_cached_model_and_gqa_copy_keep_the_dtype_and_the_logits(dtype):
    model = chapter_model(dtype)
    for converted in (kv_cache.from_gpt(model), copy_weights(model, gqa.gqa_model(CFG, 4))):
        assert {t.dtype for t in float_tensors(converted)} == {dtype}
        with torch.no_grad():  # the same operations in the same dtype: the same numbers
            assert torch.equal(converted.eval()(IDS), model(IDS))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_gpt_keeps_the_dtype_and_the_ids(dtype):
    model = chapter_model(dtype)
    fast = FastGPT(model)
    assert fast.tok_emb.dtype == fast.blocks[0].qkv_weight.dtype == fast.out_head.dtype == dtype
    with torch.no_grad():
        assert fast(IDS).dtype == dtype
    assert torch.equal(generate_fast(fast, IDS, 6, 16), gpt.generate_text_simple(model, IDS, 6, 16))


@pytest.mark.parametrize("dtype", DTYPES)
def test_absorbed_mla_keeps_the_dtype(dtype):
    torch.manual_seed(0)
    att = mla.mla_model(CFG, 8).trf_blocks[0].att.to(dtype).eval()
    absorbed = mla.absorb(att)
    assert {t.dtype for t in float_tensors(absorbed)} == {dtype}
    x = torch.randn(2, 5, CFG["emb_dim"], dtype=torch.float64).to(dtype)
    with torch.no_grad():  # the product is reassociated: equal within dtype's rounding
        tolerance = 1e-12 if dtype == torch.float64 else 0.05
        assert (absorbed(x) - att(x)).abs().max() < tolerance


@pytest.mark.parametrize("dtype", DTYPES)
def test_gpt2_initialization_keeps_the_dtype(dtype):
    model = claims.gpt2_init_(claims.make_model(CFG, seed=1, tie_weights=True).to(dtype))
    assert {t.dtype for t in float_tensors(model)} == {dtype}
    assert model.out_head.weight is model.tok_emb.weight


def test_converters_stay_on_the_meta_device():
    with torch.device("meta"):
        model = chapter_model(torch.float32)
    for converted in (kv_cache.from_gpt(model), copy_weights(model, gqa.gqa_model(CFG, 4))):
        assert {t.device.type for t in [*converted.parameters(), *converted.buffers()]} == {"meta"}
    assert FastGPT(model).blocks[0].qkv_weight.is_meta
