"""bonus/moe/moe.py: the mixture-of-experts layer reduces to the chapter's FeedForward, routes each
token to its most probable experts with gates the router learns from, runs only the chosen
experts, and builds a GPTModel that generates."""

import pytest
import torch

import gpt
from bonus.flops.flops import counted_breakdown, counted_flops
from bonus.moe import moe
from tests.helpers import TINY_CONFIG, assert_changes_marked_new

D = TINY_CONFIG["emb_dim"]


def moe_config(n_experts=4, top_k=2, shared_expert=False, **other_keys):
    return {**TINY_CONFIG, **other_keys, "n_experts": n_experts, "top_k": top_k,
            "shared_expert": shared_expert}


@pytest.mark.parametrize("variant", [moe.ExpertFeedForward, moe.MoEFeedForward])
def test_moe_classes_differ_from_feedforward_only_in_lines_marked_new(variant):
    assert_changes_marked_new(gpt.FeedForward, variant)


@pytest.mark.parametrize("n_experts, top_k, shared_expert, hidden",
                         [(4, 1, False, 4 * D), (4, 2, False, 4 * D), (4, 2, True, 4 * D),
                          (3, 3, False, 4 * D), (8, 2, True, 2 * D)])
def test_sparse_computation_equals_dense_reference(n_experts, top_k, shared_expert, hidden):
    torch.manual_seed(123)
    cfg = moe_config(n_experts, top_k, shared_expert, expert_hidden_dim=hidden)
    layer = moe.MoEFeedForward(cfg)
    x = torch.randn(2, 9, D)
    with torch.no_grad():
        assert torch.allclose(layer(x), moe.dense_reference(layer, x), atol=1e-6)


# Router scores chosen by hand, one row per token: token j's input is the j-th basis vector, so
# the router's weight column j is token j's scores. Best experts: 1, 3 | 0, 3 | 3, 2.
SCORES = torch.tensor([[0.5, 2.0, -1.0, 1.0],
                       [3.0, -2.0, 0.0, 0.2],
                       [-1.0, 0.1, 1.5, 2.5]])
BEST = [[1, 3], [0, 3], [3, 2]]  # each token's experts, highest score first


@pytest.mark.parametrize("top_k", [1, 2])
def test_router_chooses_the_highest_scores_gated_by_their_softmax_over_all_experts(top_k):
    torch.manual_seed(123)
    layer = moe.MoEFeedForward(moe_config(n_experts=4, top_k=top_k))
    best = [row[:top_k] for row in BEST]
    expected_gates = torch.stack([torch.softmax(s, dim=-1)[b] for s, b in zip(SCORES, best)])
    with torch.no_grad():
        layer.router.weight.zero_()
        layer.router.weight[:, :len(SCORES)] = SCORES.T
        x = torch.eye(D)[:len(SCORES)].unsqueeze(0)  # (1, 3 tokens, D)
        gates, chosen = layer.route(x)
        assert chosen[0].tolist() == best
        assert torch.allclose(gates[0], expected_gates, atol=1e-6)
        expected_out = torch.stack([  # the gate-weighted sum of the chosen experts' outputs
            sum(g * layer.experts[i](token) for g, i in zip(token_gates, token_best))
            for token, token_gates, token_best in zip(x[0], expected_gates, best)])
        assert torch.allclose(layer(x)[0], expected_out, atol=1e-6)


@pytest.mark.parametrize("top_k", [1, 2])
def test_the_router_gets_a_gradient_even_at_top_1(top_k):
    """A gate of exactly 1 (a softmax over the chosen score alone) would give it none."""
    torch.manual_seed(123)
    layer = moe.MoEFeedForward(moe_config(n_experts=4, top_k=top_k))
    layer(torch.randn(2, 6, D)).pow(2).mean().backward()
    assert layer.router.weight.grad.norm() > 1e-4


def test_one_expert_top_1_is_the_chapters_feedforward_and_model():
    """gpt.GPTModel's weights in a one-expert MoE model: the same logits and generated ids, so
    each MoE layer computes exactly what gpt.FeedForward computes."""
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


def test_routes_record_every_layer_and_token():
    torch.manual_seed(123)
    model = moe.moe_gpt_model(moe_config(n_experts=4, top_k=2)).eval()
    idx = torch.randint(0, TINY_CONFIG["vocab_size"], (3, 8))
    found = moe.routes(model, idx)
    assert len(found) == TINY_CONFIG["n_layers"]
    for gates, chosen in found:
        assert gates.shape == chosen.shape == (3, 8, 2)
    assert not any(m._forward_hooks for m in model.modules())  # the hooks are gone again


@pytest.mark.parametrize("n_experts, top_k, shared_expert, hidden",
                         [(4, 1, False, 4 * D), (4, 2, True, 4 * D), (8, 4, True, D)])
def test_counted_flops_are_top_k_experts_per_token(n_experts, top_k, shared_expert, hidden):
    """Only the chosen experts run: the count matches the formula whatever the routing."""
    cfg = moe_config(n_experts, top_k, shared_expert, expert_hidden_dim=hidden)
    torch.manual_seed(123)
    model = moe.moe_gpt_model(cfg).eval()
    in_idx = torch.randint(0, cfg["vocab_size"], (2, 16))
    derived = moe.moe_flops_breakdown(cfg, 16)
    assert counted_breakdown(model, in_idx) == {part: 2 * n for part, n in derived.items()}


def test_experts_of_width_4d_over_k_cost_what_the_chapters_feedforward_costs():
    """The compute-matched design: counted FLOPs exceed the dense model's by the router only."""
    cfg = moe_config(n_experts=8, top_k=2, expert_hidden_dim=4 * D // 2)
    torch.manual_seed(123)
    model, dense = moe.moe_gpt_model(cfg).eval(), gpt.GPTModel(TINY_CONFIG).eval()
    in_idx = torch.randint(0, cfg["vocab_size"], (2, 16))
    router = cfg["n_layers"] * 2 * (2 * 16) * D * cfg["n_experts"]
    assert counted_flops(model, in_idx) == counted_flops(dense, in_idx) + router


def test_parameter_counts_match_the_built_models():
    for cfg in (moe_config(4, 2, False), moe_config(4, 1, True),
                moe_config(8, 2, True, expert_hidden_dim=2 * D)):
        torch.manual_seed(123)
        model = moe.moe_gpt_model(cfg)
        counts = moe.moe_parameter_counts(cfg)
        expert = sum(p.numel() for p in model.trf_blocks[0].ff.experts[0].parameters())
        unchosen = cfg["n_layers"] * (cfg["n_experts"] - cfg["top_k"]) * expert
        assert counts["total"] == sum(p.numel() for p in model.parameters())
        assert counts["active"] == counts["total"] - unchosen


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


def test_a_misspelled_key_is_refused():
    cfg = {**{k: v for k, v in moe_config().items() if k != "n_experts"}, "n_expert": 4}
    with pytest.raises(ValueError, match=r"differ: \['n_expert'\]"):  # not a GPT key either
        moe.moe_gpt_model(cfg)
