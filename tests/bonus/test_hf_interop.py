"""bonus/hf_side_by_side/hf_interop.py: our GPTModel and Hugging Face's GPT2LMHeadModel hold the same weights.

Nothing here needs the network: the Hugging Face models are randomly initialised, and the
pretrained loader reads a model that the test saves itself.
"""

import copy
import json

import pytest
import torch
from safetensors.torch import save_file

import gpt
from bonus.hf_side_by_side.hf_interop import gptmodel_from_hf, hf_from_gptmodel, load_pretrained
from tests.helpers import TINY_CONFIG

# Odd sizes (3 heads, 3 layers) catch code that assumes GPT-2 small's shapes.
TINY_HF = {"n_embd": 48, "n_layer": 3, "n_head": 3, "n_positions": 24}
PROMPTS = torch.tensor([[15496, 11, 314, 716], [6109, 3626, 6100, 345]])


def meta_hf_model(**config):
    """A GPT2LMHeadModel of shapes only (transformers is imported on first use: it is slow)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        return GPT2LMHeadModel(GPT2Config(**config))


def random_hf_model(spread, **config):
    """A GPT2LMHeadModel with every parameter drawn from N(0, spread), in eval mode.

    Built on the meta device, then filled: much faster than Hugging Face's own initialisation
    for GPT-2 small, and the tied head stays tied.
    """
    hf_model = meta_hf_model(**config)
    hf_model.to_empty(device="cpu")
    hf_model.tie_weights()  # to_empty gives lm_head a tensor of its own; share wte's again
    torch.manual_seed(123)
    with torch.no_grad():
        for p in hf_model.parameters():  # a tied matrix is listed once
            p.normal_(0, spread)
    return hf_model.eval()


def assert_same_function(model, hf_model, new_tokens=6):
    """Logits within 1e-5 and identical greedy continuations (HF's uses its KV cache)."""
    with torch.no_grad():
        ours, theirs = model(PROMPTS), hf_model(PROMPTS).logits
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().max() < 1e-5
    context = hf_model.config.n_positions
    ours = gpt.generate_text_simple(model, PROMPTS, new_tokens, context_size=context)
    mask = torch.ones_like(PROMPTS)  # no padding; saying so keeps transformers quiet
    theirs = hf_model.generate(
        PROMPTS, attention_mask=mask, max_new_tokens=new_tokens, do_sample=False
    )
    assert ours.tolist() == theirs.tolist()


@pytest.fixture(scope="module")
def tiny_hf():
    # HF's init (std 0.02) makes an untrained model repeat one token; wider weights give
    # varied greedy output, so comparing continuations tests more.
    return random_hf_model(spread=0.1, **TINY_HF)


@pytest.fixture(scope="module")
def small_hf():
    """A random 124M GPT-2 (std 0.02, as Hugging Face initialises it): the only GPT-2-sized
    model this module builds."""
    return random_hf_model(spread=0.02)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_round_trip_is_exact_in_the_sources_dtype(tiny_hf, dtype):
    hf_model = copy.deepcopy(tiny_hf).to(dtype)
    model = gptmodel_from_hf(hf_model)
    back = hf_from_gptmodel(model)
    for converted in (model, back):
        assert {p.dtype for p in converted.parameters()} == {dtype}
    torch.testing.assert_close(back.state_dict(), hf_model.state_dict(), rtol=0, atol=0)
    assert back.lm_head.weight is back.transformer.wte.weight
    assert back.config.to_diff_dict() == hf_model.config.to_diff_dict()
    with torch.no_grad():
        assert model(PROMPTS).dtype == dtype


@pytest.mark.slow  # two GPT-2-sized models; .ci/run runs it
@pytest.mark.xdist_group("big-models")
def test_124m_hf_to_ours_matches(small_hf):
    # A few tokens suffice: without a KV cache, each costs our model a full forward pass.
    assert_same_function(gptmodel_from_hf(small_hf), small_hf, new_tokens=3)


def test_conversion_shares_memory_instead_of_copying_all_but_c_attn(tiny_hf):
    def storages(tensors):
        return {t.untyped_storage().data_ptr() for t in tensors}

    model = gptmodel_from_hf(tiny_hf)
    assert storages(model.parameters()) <= storages(tiny_hf.parameters())
    back = hf_from_gptmodel(model)
    not_c_attn = [p for name, p in back.named_parameters() if ".c_attn." not in name]
    assert storages(not_c_attn) <= storages(model.parameters())


def test_training_mode_is_kept():
    hf_model = meta_hf_model(**TINY_HF)
    for training in (True, False):
        model = gptmodel_from_hf(hf_model.train(training))
        back = hf_from_gptmodel(model)
        assert model.training == back.training == training
        assert all(t.is_meta for t in [*model.parameters(), *model.buffers(), *back.parameters()])


@pytest.mark.parametrize("tie", [True, False])
def test_parameter_count_follows_the_tied_head(tie):
    hf_model = meta_hf_model(tie_word_embeddings=tie)  # the 124M config costs no memory
    model = gptmodel_from_hf(hf_model)
    assert (model.out_head.weight is model.tok_emb.weight) == tie
    expected = 124_439_808 if tie else 124_439_808 + 50257 * 768
    assert sum(p.numel() for p in model.parameters()) == hf_model.num_parameters() == expected


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_chapter_model_to_hf_matches(qkv_bias):
    """The direction the benchmark uses: our untied model, with or without qkv bias."""
    torch.manual_seed(123)
    model = gpt.GPTModel({**TINY_CONFIG, "qkv_bias": qkv_bias}).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.1)  # see tiny_hf: varied greedy output
    hf_model = hf_from_gptmodel(model)
    assert not hf_model.config.tie_word_embeddings
    assert hf_model.lm_head.weight is not hf_model.transformer.wte.weight
    assert_same_function(model, hf_model)
    if not qkv_bias:
        assert not hf_model.transformer.h[0].attn.c_attn.bias.any()


def test_tiny_hf_to_ours_matches_loaded_from_a_saved_folder(tiny_hf, tmp_path):
    tiny_hf.save_pretrained(tmp_path)
    model = load_pretrained(tmp_path)
    assert not model.training
    assert model.out_head.weight is model.tok_emb.weight
    assert_same_function(model, tiny_hf)


def test_load_pretrained_refuses_pickles_and_other_models(tiny_hf, tmp_path):
    tiny_hf.config.save_pretrained(tmp_path / "pickled")
    torch.save(tiny_hf.state_dict(), tmp_path / "pickled" / "pytorch_model.bin")
    with pytest.raises(FileNotFoundError, match="safetensors"):
        load_pretrained(tmp_path / "pickled")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    save_file({"weight": torch.zeros(2)}, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match="not GPT-2"):
        load_pretrained(tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        {"activation_function": "relu"},
        {"layer_norm_epsilon": 1e-6},
        {"n_inner": 100},
        {"attn_pdrop": 0.0},  # three different dropout rates cannot share one drop_rate
        {"scale_attn_by_inverse_layer_idx": True},
    ],
)
def test_config_ours_cannot_express_is_refused(change):
    with pytest.raises(ValueError, match=next(iter(change))):
        gptmodel_from_hf(meta_hf_model(**TINY_HF, **change))


def test_other_models_and_variants_are_refused(tiny_hf, tiny_model):
    with pytest.raises(TypeError, match="GPT2LMHeadModel"):
        gptmodel_from_hf(tiny_hf.transformer)  # the body without the head
    with pytest.raises(TypeError, match="GPTModel"):
        hf_from_gptmodel(tiny_hf)
    # A GPTModel given exercise 4.3's separate attention rate after construction.
    tiny_model.trf_blocks[1].att.dropout.p = 0.2
    with pytest.raises(ValueError, match=r"rates \[0.1, 0.2\]; .* one drop_rate"):
        hf_from_gptmodel(tiny_model)
