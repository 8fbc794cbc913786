"""Bad input gets a clear error that names the problem where it enters (a wrong value: ValueError,
a wrong type: TypeError), never a silent wrong answer: the tokenizer's helpers, gpt2_config, the
command line and the bonus entry points check it, with gpt_engineering's checks. The chapter's
classes and generate_text_simple are the book's listings and check nothing: what is given
straight to them gets PyTorch's or Python's own errors."""

import inspect
import io
import re

import pytest
import torch

import gpt
import gpt_cli
import gpt_engineering
from bonus.claims_tested import claims
from bonus.kv_cache import kv_cache
from bonus.moe import moe
from bonus.watch_it_learn import train
from gpt_engineering import check_generation_args
from tests.helpers import SMALL_VOCAB_CONFIG, TINY_CONFIG

# ---- the chapter's code checks nothing -------------------------------------------------

CHAPTER_CODE = [gpt.GELU, gpt.LayerNorm, gpt.FeedForward, gpt.MultiHeadAttention,
                gpt.TransformerBlock, gpt.GPTModel, gpt.generate_text_simple]
ENGINEERING = sorted(name for name, value in vars(gpt_engineering).items()
                     if inspect.isfunction(value) and value.__module__ == "gpt_engineering")


@pytest.mark.parametrize("code", CHAPTER_CODE, ids=lambda code: code.__name__)
def test_the_chapter_code_calls_nothing_from_gpt_engineering(code):
    """No guard line: no graph break, no device sync, and the listing reads as the book's."""
    assert {"check_config", "check_num_tokens", "check_generation_args"} <= set(ENGINEERING)
    source = inspect.getsource(code)
    assert not [name for name in ENGINEERING if re.search(rf"\b{name}\b", source)]
    assert "# guard" not in source and "self.cfg" not in source


def test_a_gpt_model_keeps_no_config():
    """The book's class reads cfg in __init__ only; gpt_engineering.config_of reads it back."""
    assert not hasattr(gpt.GPTModel(TINY_CONFIG), "cfg")


# ---- configs: refused by gpt2_config and by the bonus entry points -----------------------


@pytest.mark.parametrize(
    "name, changes, message",
    [
        ("gpt2-tiny", {}, r"unknown model 'gpt2-tiny'; choose one of \['gpt2-small', "),
        ("gpt2-small", {"drop_rte": 0.1}, r"differ: \['drop_rte'\]"),  # a misspelled override
        ("gpt2-medium", {"n_head": 4}, r"differ: \['n_head'\]"),  # n_heads stays 16: refused
    ],
)
def test_gpt2_config_refuses_an_unknown_size_or_key(name, changes, message):
    with pytest.raises(ValueError, match=message):
        gpt.gpt2_config(name, **changes)


def test_gpt2_config_applies_its_overrides_to_a_copy():
    cfg = gpt.gpt2_config("gpt2-medium", drop_rate=0.0, qkv_bias=True)
    assert cfg == {**gpt.GPT_CONFIG_124M, "emb_dim": 1024, "n_layers": 24, "n_heads": 16,
                   "drop_rate": 0.0, "qkv_bias": True}
    cfg["emb_dim"] = 1
    assert gpt.GPT2_SIZES["gpt2-medium"]["emb_dim"] == 1024
    assert gpt.gpt2_config("gpt2-small") == gpt.GPT_CONFIG_124M


BAD_CONFIGS = [
    ({**TINY_CONFIG, "drop_rte": 0.1}, r"differ: \['drop_rte'\]"),  # an extra, misspelled key
    ({k: v for k, v in TINY_CONFIG.items() if k != "n_layers"}, r"differ: \['n_layers'\]"),
    ({**{k: v for k, v in TINY_CONFIG.items() if k != "n_heads"}, "n_head": 4},
     r"differ: \['n_head', 'n_heads'\]"),
]
MOE_KEYS = {"n_experts": 2, "top_k": 1, "shared_expert": False}
BUILDERS = {  # bonus entry points that build a GPT from a learner's config
    "kv_cache.GPTModel": kv_cache.GPTModel,
    "claims.make_model": lambda cfg: claims.make_model(cfg, seed=1),
    "moe.moe_gpt_model": lambda cfg: moe.moe_gpt_model({**cfg, **MOE_KEYS}),
}


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("cfg, message", BAD_CONFIGS)
def test_bonus_builders_refuse_a_misspelled_config(build, cfg, message):
    with pytest.raises(ValueError, match=message):
        BUILDERS[build](cfg)
    BUILDERS[build](TINY_CONFIG)  # the config spelled right: built


def test_given_straight_to_gpt_model_a_config_meets_pythons_errors():
    """A missing key is a KeyError that names it; the one check the class makes itself is the
    book's: emb_dim must split evenly into heads (its assert, here a ValueError)."""
    with pytest.raises(KeyError, match="n_layers"):
        gpt.GPTModel({k: v for k, v in TINY_CONFIG.items() if k != "n_layers"})
    with pytest.raises(ValueError, match=r"d_out \(30\) must be divisible by num_heads \(4\)"):
        gpt.GPTModel({**TINY_CONFIG, "emb_dim": 30})


# ---- the forward pass: PyTorch's own errors ----------------------------------------------


def test_an_input_up_to_the_context_length_is_accepted_a_longer_one_gets_pytorchs_error(
        tiny_model):
    assert tiny_model(torch.full((2, 16), 50256)).shape == (2, 16, 50257)  # the last id too
    with pytest.raises(IndexError, match=r"index out of range"):  # position 16 has no embedding
        tiny_model(torch.zeros(1, 17, dtype=torch.long))


@pytest.mark.parametrize(
    "idx, error, message",
    [
        # PyTorch's own messages, which the forward pass leaves alone (appendix, "Token ids")
        (torch.tensor([[1, 50257]]), IndexError, r"index out of range"),
        (torch.tensor([[1.0, 2.0]]), RuntimeError, r"Long, Int; but got torch.FloatTensor"),
        (torch.tensor([1, 2]), ValueError, r"not enough values to unpack"),  # no batch dimension
    ],
)
def test_forward_leaves_id_values_to_pytorch(tiny_model, idx, error, message):
    with pytest.raises(error, match=message):
        tiny_model(idx)


# ---- generation: check_generation_args, and the entry points that call it ----------------

BAD_GENERATION_ARGS = [
    ({"max_new_tokens": -1}, ValueError, r"max_new_tokens must be at least 0, got -1"),
    ({"context_size": 0}, ValueError, r"context_size must be at least 1, got 0"),
    ({"idx": torch.tensor([1, 2])}, ValueError, r"shape \(batch, num_tokens\), got \(2,\)"),
    ({"max_new_tokens": 2.0}, TypeError, r"max_new_tokens must be an int, got 2.0"),
    ({"context_size": True}, TypeError, r"context_size must be an int, got True"),
    ({"idx": [[1, 2]]}, TypeError, r"integer token ids, got list"),
    ({"idx": torch.tensor([[1.0, 2.0]])}, TypeError, r"integer token ids, got torch.float32"),
    ({"idx": torch.tensor([[1, 99999]])}, ValueError, r"\[0, 50256\].*from 1 to 99999"),
    ({"idx": torch.tensor([[-1, 2]])}, ValueError, r"from -1 to 2"),
]
GOOD_ARGS = {"idx": torch.tensor([[1, 2]]), "max_new_tokens": 2, "context_size": 16}


@pytest.mark.parametrize("kwargs, error, message", BAD_GENERATION_ARGS)
def test_check_generation_args(tiny_model, kwargs, error, message):
    with pytest.raises(error, match=message):
        check_generation_args(tiny_model, **{**GOOD_ARGS, **kwargs})


def test_check_generation_args_reads_the_models_own_vocabulary():
    """config_of(model) gives the vocabulary, for the book's class (which keeps no config) and
    for a bonus model (which keeps its own)."""
    torch.manual_seed(123)
    for model in (gpt.GPTModel(SMALL_VOCAB_CONFIG), kv_cache.GPTModel(SMALL_VOCAB_CONFIG)):
        check_generation_args(model, torch.tensor([[0, 499]]), 2, 16)  # accepted: no error
        with pytest.raises(ValueError, match=r"\[0, 499\].*from 0 to 500"):
            check_generation_args(model, torch.tensor([[0, 500]]), 2, 16)


# Entry points with generate_text_simple's arguments, each checks them up front (the KV-cache
# generators are tested for the same cases in tests/bonus/test_kv_cache.py).
GENERATORS = {
    "gpt_cli.generate_streaming": lambda model, *args: gpt_cli.generate_streaming(
        model, *args, None, io.StringIO()),  # no tokenizer: refused before it is needed
    "train.generate": train.generate,
}


@pytest.mark.parametrize("generate", GENERATORS)
@pytest.mark.parametrize("kwargs, error, message",
                         [BAD_GENERATION_ARGS[i] for i in (1, 2, 3, 7)])
def test_generation_entry_points_refuse_bad_arguments(tiny_model, generate, kwargs, error,
                                                      message):
    args = {**GOOD_ARGS, **kwargs}
    with pytest.raises(error, match=message):
        GENERATORS[generate](tiny_model, args["idx"], args["max_new_tokens"], args["context_size"])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"idx": torch.tensor([1, 2])}, IndexError, r"too many indices"),  # no batch dimension
        ({"max_new_tokens": 2.0}, TypeError, r"'float' object cannot be interpreted as an integer"),
        # the window outgrows context_length (16): position 16 has no embedding
        ({"max_new_tokens": 20, "context_size": 100}, IndexError, r"index out of range"),
    ],
)
def test_generate_text_simple_leaves_bad_arguments_to_python_and_pytorch(tiny_model, kwargs,
                                                                         error, message):
    with pytest.raises(error, match=message):
        gpt.generate_text_simple(tiny_model, **{**GOOD_ARGS, **kwargs})


def test_generation_crops_a_long_context_and_zero_new_tokens_return_the_input(tiny_model):
    idx = torch.randint(0, 1000, (1, 20))  # longer than context_length (16)
    out = gpt.generate_text_simple(tiny_model, idx, max_new_tokens=3, context_size=16)
    assert out.shape == (1, 23) and torch.equal(out[:, :20], idx)
    assert torch.equal(gpt.generate_text_simple(tiny_model, idx, 0, 16), idx)


# ---- text -----------------------------------------------------------------------------


@pytest.mark.parametrize("text, error, message", [
    ("", ValueError, "text is empty"), ([1, 2], TypeError, "text must be a str")])
def test_a_prompt_must_be_text_with_a_token(tokenizer, text, error, message):
    with pytest.raises(error, match=message):
        gpt.text_to_token_ids(text, tokenizer)
