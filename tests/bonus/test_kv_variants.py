"""gqa.py, mla.py and swa.py (bonus/kv_cache_variants/): each reduces to the chapter's attention,
caches what its formula says and generates the ids of uncached generation; benchmark_variants.py
fails when one of those checks fails."""

import pytest
import torch

import gpt
from bonus.kv_cache import kv_cache
from bonus.kv_cache_variants import benchmark_variants, gqa, mla, swa
from bonus.kv_cache_variants.kv_variants import cache_bytes, copy_weights, repeated
from gpt_engineering import config_of
from tests.helpers import SMALL_VOCAB_CONFIG, TWO_PROMPTS, assert_changes_marked_new

CFG = SMALL_VOCAB_CONFIG
PROMPTS = torch.tensor(TWO_PROMPTS)
HEADS = CFG["n_heads"]
WINDOW, LATENT = 5, 8


def mla_as_mha(model):
    """mla_model(latent_dim=emb_dim) holding `model`'s weights, with the identity as W_kv_down."""
    cfg = config_of(model)
    emb_dim = cfg["emb_dim"]
    identity = {f"trf_blocks.{i}.att.W_kv_down.weight": torch.eye(emb_dim)
                for i in range(cfg["n_layers"])}
    variant = mla.mla_model(cfg, emb_dim)
    variant.load_state_dict({**model.state_dict(), **identity})
    return variant.train(model.training)


# name -> (build the model, its predicted cache bytes for (tokens, batch))
VARIANTS = {
    "MHA (kv_cache.py)": (lambda: kv_cache.GPTModel(CFG),
                          lambda n, b: gqa.kv_cache_bytes(CFG, HEADS, n, b)),
    "GQA": (lambda: gqa.gqa_model(CFG, 2), lambda n, b: gqa.kv_cache_bytes(CFG, 2, n, b)),
    "MQA": (lambda: gqa.gqa_model(CFG, 1), lambda n, b: gqa.kv_cache_bytes(CFG, 1, n, b)),
    "MLA": (lambda: mla.mla_model(CFG, LATENT), lambda n, b: mla.kv_cache_bytes(CFG, LATENT, n, b)),
    "MLA absorbed": (lambda: mla.absorbed_model(mla.mla_model(CFG, LATENT).eval()),
                     lambda n, b: mla.kv_cache_bytes(CFG, LATENT, n, b)),
    "SWA": (lambda: swa.swa_model(CFG, WINDOW),
            lambda n, b: swa.kv_cache_bytes(CFG, WINDOW, n, batch_size=b)),
    "SWA 1:1": (lambda: swa.swa_model(CFG, WINDOW, local_per_global=1),
                lambda n, b: swa.kv_cache_bytes(CFG, WINDOW, n, 1, batch_size=b)),
    "GQA + SWA 1:1": (lambda: swa.swa_model(CFG, WINDOW, 1, n_kv_groups=1),
                      lambda n, b: swa.kv_cache_bytes(CFG, WINDOW, n, 1, 1, batch_size=b)),
}


def variant_model(name):
    torch.manual_seed(123)
    return VARIANTS[name][0]().eval()


@pytest.mark.parametrize("cls", [gqa.GroupedQueryAttention, mla.MultiHeadLatentAttention,
                                 mla.AbsorbedLatentAttention, swa.SlidingWindowAttention])
def test_variant_differs_from_chapter_only_in_lines_marked_new(cls):
    assert_changes_marked_new(gpt.MultiHeadAttention, cls)


# ---- a variant holding the chapter's attention, or GQA's, computes it bit for bit ----

WHOLE_CONTEXT = CFG["context_length"]
# name -> (build the model it reduces to from a config, that variant holding the model's weights)
REDUCES = {
    "MHA, kv_cache.py's copy": (gpt.GPTModel, kv_cache.from_gpt),
    "GQA, a group per head": (
        gpt.GPTModel, lambda m: copy_weights(m, gqa.gqa_model(config_of(m), HEADS))),
    "SWA, a window as long as the text": (
        gpt.GPTModel, lambda m: copy_weights(m, swa.swa_model(config_of(m), WHOLE_CONTEXT))),
    "MLA, the identity as W_kv_down": (gpt.GPTModel, mla_as_mha),
    "GQA + SWA 1:1, a window as long as the text": (
        lambda cfg: gqa.gqa_model(cfg, 2),
        lambda m: copy_weights(m, swa.swa_model(config_of(m), WHOLE_CONTEXT, 1, n_kv_groups=2))),
}


@pytest.mark.parametrize("qkv_bias", [False, True])
@pytest.mark.parametrize("name", REDUCES)
def test_a_reduced_variant_gives_the_logits_at_every_length_even_in_training(name, qkv_bias):
    """Bit for bit, dropout and all (the same random numbers)."""
    build, holding = REDUCES[name]
    torch.manual_seed(123)
    model = build({**CFG, "qkv_bias": qkv_bias}).train()
    variant = holding(model)
    assert variant.training
    for length in range(1, WHOLE_CONTEXT + 1):
        ids = PROMPTS.repeat(1, 4)[:, :length]
        torch.manual_seed(1)
        expected = model(ids)
        torch.manual_seed(1)
        assert torch.equal(variant(ids), expected), length


def test_repeated_is_repeat_interleave_and_a_view_for_one_head_per_group():
    kv_heads = torch.randn(2, 3, 5, 4).transpose(2, 3)  # not contiguous, like a transposed key
    assert torch.equal(repeated(kv_heads, 4), kv_heads.repeat_interleave(4, dim=1))
    same = repeated(kv_heads, 1)
    assert same.data_ptr() == kv_heads.data_ptr() and same.stride() == kv_heads.stride()


def test_gqa_shares_each_kv_head_with_consecutive_query_heads():
    """GQA is MHA whose query heads 2g and 2g + 1 have kv head g's key and value weights."""
    torch.manual_seed(123)
    grouped = gqa.gqa_model(CFG, 2).eval()
    model = gpt.GPTModel(CFG).eval()
    state = grouped.state_dict()
    for name in state:
        if ".W_key." in name or ".W_value." in name:  # (2 kv heads * head_dim, ...) -> per head
            by_head = state[name].view(2, -1, *state[name].shape[1:])
            state[name] = by_head.repeat_interleave(HEADS // 2, dim=0).flatten(0, 1)
    model.load_state_dict(state)
    with torch.no_grad():
        assert (grouped(PROMPTS) - model(PROMPTS)).abs().max() < 1e-6


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_absorbed_mla_computes_what_mla_computes(qkv_bias):
    torch.manual_seed(123)
    plain = mla.mla_model({**CFG, "qkv_bias": qkv_bias}, LATENT).eval()
    with torch.no_grad():  # real biases, not the zeros nn.Linear may start with
        for param in plain.parameters():
            param.add_(0.1 * torch.randn_like(param))
        absorbed = mla.absorbed_model(plain)
        assert (absorbed(PROMPTS) - plain(PROMPTS)).abs().max() < 1e-5
    assert not any(isinstance(m, mla.MultiHeadLatentAttention) for m in absorbed.modules())
    assert all(isinstance(b.att, mla.MultiHeadLatentAttention) for b in plain.trf_blocks)


def test_sliding_window_sees_exactly_window_positions():
    torch.manual_seed(123)
    model = swa.swa_model({**CFG, "n_layers": 1}, WINDOW).eval()
    ids = PROMPTS.repeat(1, 3)[:1].repeat(3, 1)  # 12 tokens, three times
    ids[1, -WINDOW] = ids[2, -1 - WINDOW] = 42  # the oldest token the last sees, the newest unseen
    with torch.no_grad():
        last, oldest_seen_changed, first_unseen_changed = model(ids)[:, -1]
    assert (oldest_seen_changed - last).abs().max() > 1e-4
    assert torch.equal(first_unseen_changed, last)


def test_mixed_model_alternates_sliding_and_full_layers_with_the_same_groups():
    model = swa.swa_model({**CFG, "n_layers": 12}, WINDOW, local_per_global=5, n_kv_groups=2)
    kinds = ["L" if isinstance(b.att, swa.SlidingWindowAttention) else "G" for b in model.trf_blocks]
    assert "".join(kinds) == "LLLLLG" * 2
    assert all(type(b.att) is gqa.GroupedQueryAttention for b in model.trf_blocks[5::6])
    assert {b.att.num_kv_groups for b in model.trf_blocks} == {2}


# ---- with a cache: the same logits and ids as without, and the predicted bytes ----

@pytest.mark.parametrize("name", VARIANTS)
def test_each_cached_step_gives_the_full_forward_logits_and_holds_the_predicted_bytes(name):
    model, predicted = variant_model(name), VARIANTS[name][1]
    ids = PROMPTS.repeat(1, 4)  # 16 tokens: the whole context, more than the window
    with torch.no_grad():
        steps = [model(ids[:, :3], use_cache=True)[:, -1]]
        held = [cache_bytes(model) == predicted(3, 2)]
        for t in range(3, 16):
            steps.append(model(ids[:, t : t + 1], use_cache=True)[:, -1])
            held.append(cache_bytes(model) == predicted(t + 1, 2))
        full = model(ids)[:, 2:]
    assert all(held)
    assert (torch.stack(steps, dim=1) - full).abs().max() < 1e-5


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize(
    "prompt_len, context_size",
    [
        (4, 16),  # grows into the full context, then slides
        (24, 16),  # longer than context_length: cropped, then slides from the first step
        (12, 7),  # a window shorter than the context, and than the prompt
    ],
)
def test_cached_generation_gives_the_ids_of_uncached(name, prompt_len, context_size):
    """A batch of two, generating past the window (context_length is 16)."""
    model = variant_model(name)
    idx = PROMPTS.repeat(1, 6)[:, :prompt_len]
    expected = gpt.generate_text_simple(model, idx, 20, context_size)
    assert torch.equal(kv_cache.generate_text_cached(model, idx, 20, context_size), expected)


def test_formulas_at_gpt2_small_width():
    """Per token, float32: the reductions the notebook quotes."""
    cfg = gpt.GPT_CONFIG_124M
    mha = gqa.kv_cache_bytes(cfg, 12, 1)
    assert mha == 73_728  # 2 * 12 * 768 * 4
    assert gqa.kv_cache_bytes(cfg, 3, 1) * 4 == mha
    assert gqa.kv_cache_bytes(cfg, 1, 1) * 12 == mha
    assert mla.kv_cache_bytes(cfg, 256, 1) * 6 == mha
    assert swa.kv_cache_bytes(cfg, 128, 1000) == 127 * mha  # window - 1 positions kept
    assert swa.kv_cache_bytes(cfg, 128, 1000, 5) == (10 * 127 + 2 * 1000) * mha // 12
    assert swa.kv_cache_bytes(cfg, 128, 1000, 5, n_kv_groups=3) == (10 * 127 + 2 * 1000) * mha // 48


# ---- the benchmark, and its checks ----

# Counting FLOPs imports torch._dynamo (seconds, once per process): on the worker that already
# imported it with transformers.
@pytest.mark.xdist_group("transformers")
def test_benchmark_quick_prints_every_variant_and_passes_its_checks(capsys):
    assert benchmark_variants.main(["--quick", "--steps", "1"]) == 0
    out = capsys.readouterr().out
    for name in benchmark_variants.variants(benchmark_variants.QUICK_CONFIG):
        assert name in out
    assert "ms/token" in out and "weights MB" in out
    assert out.count(": True") == 3 and "fails" not in out


@pytest.mark.xdist_group("transformers")
@pytest.mark.parametrize("bug, failed_check", [
    (lambda tensor, count: tensor,  # a window's cache that never forgets
     "cache bytes equal the formula: False"),
    (lambda tensor, count, keep_last=swa.keep_last: keep_last(tensor, count - 1),  # one too few
     "a cached step gives the full forward's logits: False"),
], ids=["keeps all", "drops a position still seen"])
def test_benchmark_fails_when_a_window_keeps_the_wrong_positions(monkeypatch, capsys, bug,
                                                                   failed_check):
    monkeypatch.setattr(swa, "keep_last", bug)
    assert benchmark_variants.main(["--quick", "--steps", "1"]) == 1
    out = capsys.readouterr().out
    assert failed_check in out and "(fails: SWA, window 4, SWA 4, 5 local" in out
