"""bonus/moe.py: the mixture-of-experts layer reduces to the chapter's FeedForward, runs only
the chosen experts, and builds a GPTModel that generates."""

import pytest
import torch

import gpt
from bonus import moe
from bonus.flops import counted_breakdown
from tests.helpers import TINY_CONFIG, assert_changes_marked_new


def moe_config(n_experts=4, top_k=2, shared_expert=False, **gpt_keys):
    return {**TINY_CONFIG, **gpt_keys, "n_experts": n_experts, "top_k": top_k,
            "shared_expert": shared_expert}


def test_moe_layer_differs_from_feedforward_only_in_lines_marked_new():
    assert_changes_marked_new(gpt.FeedForward, moe.MoEFeedForward)


def test_one_expert_top_1_is_the_chapters_feedforward():
    torch.manual_seed(123)
    feed_forward = gpt.FeedForward(TINY_CONFIG)
    layer = moe.MoEFeedForward(moe_config(n_experts=1, top_k=1))
    layer.experts[0].load_state_dict(feed_forward.state_dict())
    x = torch.randn(2, 5, TINY_CONFIG["emb_dim"])
    assert torch.equal(layer(x), feed_forward(x))


@pytest.mark.parametrize("n_experts, top_k, shared_expert",
                         [(4, 1, False), (4, 2, False), (4, 2, True), (3, 3, False)])
def test_sparse_computation_equals_dense_reference(n_experts, top_k, shared_expert):
    torch.manual_seed(123)
    layer = moe.MoEFeedForward(moe_config(n_experts, top_k, shared_expert))
    x = torch.randn(2, 9, TINY_CONFIG["emb_dim"])
    with torch.no_grad():
        assert torch.allclose(layer(x), moe.dense_reference(layer, x), atol=1e-6)


def test_each_token_gets_top_k_distinct_experts_weighted_to_one():
    torch.manual_seed(123)
    layer = moe.MoEFeedForward(moe_config(n_experts=5, top_k=3))
    weights, chosen = layer.route(torch.randn(2, 6, TINY_CONFIG["emb_dim"]))
    assert chosen.shape == (2, 6, 3)
    assert all(len(set(row)) == 3 for row in chosen.reshape(-1, 3).tolist())
    assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 6))


def test_moe_model_with_one_expert_is_the_chapters_model():
    """gpt.GPTModel's weights in a one-expert MoE model: the same logits and generated ids."""
    torch.manual_seed(123)
    model = gpt.GPTModel(TINY_CONFIG).eval()
    moe_model = moe.moe_gpt_model(moe_config(n_experts=1, top_k=1)).eval()
    state = {key.replace(".ff.layers.", ".ff.experts.0.layers."): value
             for key, value in model.state_dict().items()}
    missing, unexpected = moe_model.load_state_dict(state, strict=False)
    assert all(key.endswith("ff.router.weight") for key in missing) and not unexpected
    idx = torch.tensor([[15496, 11, 314, 716]])
    with torch.no_grad():
        assert torch.equal(moe_model(idx), model(idx))
    assert torch.equal(gpt.generate_text_simple(moe_model, idx, 6, 16),
                       gpt.generate_text_simple(model, idx, 6, 16))


def test_moe_model_runs_forward_and_generates():
    torch.manual_seed(123)
    model = moe.moe_gpt_model(moe_config(n_experts=4, top_k=2, shared_expert=True)).eval()
    idx = torch.tensor([[15496, 11, 314, 716]])
    out = gpt.generate_text_simple(model, idx, 20, TINY_CONFIG["context_length"])
    assert out.shape == (1, 24) and torch.equal(out[:, :4], idx)
    assert all(isinstance(block.ff, moe.MoEFeedForward) for block in model.trf_blocks)


def test_routes_record_every_layer_and_token():
    torch.manual_seed(123)
    model = moe.moe_gpt_model(moe_config(n_experts=4, top_k=2)).eval()
    idx = torch.randint(0, TINY_CONFIG["vocab_size"], (3, 8))
    found = moe.routes(model, idx)
    assert len(found) == TINY_CONFIG["n_layers"]
    for weights, chosen in found:
        assert weights.shape == chosen.shape == (3, 8, 2)
    assert not any(m._forward_hooks for m in model.modules())  # the hooks are gone again


@pytest.mark.parametrize("n_experts, top_k, shared_expert", [(4, 1, False), (4, 2, True)])
def test_counted_flops_are_top_k_experts_per_token(n_experts, top_k, shared_expert):
    """Only the chosen experts run: the count matches the formula whatever the routing."""
    cfg = moe_config(n_experts, top_k, shared_expert)
    torch.manual_seed(123)
    model = moe.moe_gpt_model(cfg).eval()
    in_idx = torch.randint(0, cfg["vocab_size"], (2, 16))
    derived = moe.moe_flops_breakdown(cfg, 16)
    assert counted_breakdown(model, in_idx) == {part: 2 * n for part, n in derived.items()}


def test_parameter_counts_match_the_built_models():
    for cfg in (moe_config(4, 2, False), moe_config(4, 1, True)):
        torch.manual_seed(123)
        model = moe.moe_gpt_model(cfg)
        counts = moe.moe_parameter_counts(cfg)
        expert = sum(p.numel() for p in model.trf_blocks[0].ff.experts[0].parameters())
        unchosen = cfg["n_layers"] * (cfg["n_experts"] - cfg["top_k"]) * expert
        assert counts["total"] == sum(p.numel() for p in model.parameters())
        assert counts["active"] == counts["total"] - unchosen
    cfg = {**gpt.GPT_CONFIG_124M, "n_experts": 8, "top_k": 2, "shared_expert": False}
    with torch.device("meta"):
        gpt2_small_moe = moe.moe_gpt_model(cfg)
    assert moe.moe_parameter_counts(cfg)["total"] == sum(
        p.numel() for p in gpt2_small_moe.parameters())


def test_mixtral_counts_are_the_published_figures():
    counts = moe.mixtral_parameter_counts()
    assert round(counts["total"] / 1e9, 1) == 46.7
    assert round(counts["active"] / 1e9, 1) == 12.9


@pytest.mark.xdist_group("transformers")
def test_mixtral_total_matches_hugging_faces_model():
    from transformers import MixtralConfig, MixtralForCausalLM  # slow: imported here only

    with torch.device("meta"):
        model = MixtralForCausalLM(MixtralConfig(**moe.MIXTRAL_8X7B))
    total = sum(p.numel() for p in model.parameters())
    assert total == moe.mixtral_parameter_counts()["total"]


@pytest.mark.parametrize(
    "changes, error",
    [
        ({"n_experts": 2.0}, TypeError),
        ({"n_experts": 0}, ValueError),
        ({"top_k": True}, TypeError),
        ({"top_k": 5}, ValueError),
        ({"top_k": 0}, ValueError),
        ({"shared_expert": 1}, TypeError),
    ],
)
def test_bad_moe_config_gets_a_clear_error(changes, error):
    with pytest.raises(error):
        moe.MoEFeedForward({**moe_config(), **changes})


def test_missing_moe_key_gets_a_clear_error():
    with pytest.raises(ValueError, match="top_k"):
        moe.moe_gpt_model({**TINY_CONFIG, "n_experts": 4, "shared_expert": False})
    with pytest.raises(TypeError):
        moe.moe_parameter_counts([4, 2])
