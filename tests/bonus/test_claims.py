"""bonus/claims_tested/claims.py: each experiment's model differs from the chapter's in exactly one change."""

import inspect
import math

import pytest
import torch
import torch.nn as nn

import gpt
from bonus.claims_tested import claims
from tests.helpers import TINY_CONFIG, assert_changes_marked_new

CFG = {**TINY_CONFIG, "vocab_size": 50, "n_layers": 3, "drop_rate": 0.0}
IDS = torch.randint(0, 50, (2, 16), generator=torch.Generator().manual_seed(0))
BLOCKS = [claims.BlockNoNorm, claims.BlockNoShortcut, claims.BlockReLU, claims.BlockPostLN]


def chapter_model(seed=1):
    torch.manual_seed(seed)
    return gpt.GPTModel(CFG).eval()


@pytest.mark.parametrize("variant", BLOCKS + [claims.GPTVariant])
def test_variants_are_subclasses_that_mark_every_change_new(variant):
    """A variant overrides one method of the chapter's class: a forward, or GPTVariant's
    __init__, differs from the chapter's only in lines marked # NEW; a block's __init__ runs the
    chapter's, then every line it adds is marked."""
    assert variant.__base__ in (gpt.TransformerBlock, gpt.GPTModel)
    (own,) = [name for name in ("__init__", "forward") if name in vars(variant)]
    lines = inspect.getsource(getattr(variant, own)).splitlines()
    if lines[1].strip() == "super().__init__(cfg)":
        assert lines[0].strip() == "def __init__(self, cfg):"
        assert lines[2:] and all("# NEW" in line for line in lines[2:])
    else:
        assert_changes_marked_new(getattr(variant.__base__, own), getattr(variant, own))


@pytest.mark.parametrize("change", [{}, {"block": claims.BlockNoNorm, "final_norm": False}]
                         + [{"block": block} for block in BLOCKS[1:]])
def test_same_seed_same_weights_as_the_chapter(change):
    """Under one seed every variant draws the chapter's weights (same names, same values; without
    norms, all but the norms'); the defaults compute its logits exactly, each variant something
    else: a change is in the computation, not in the weights drawn."""
    variant = claims.make_model(CFG, seed=1, **change).eval()
    chapter = chapter_model(seed=1)
    no_norms = change.get("final_norm") is False  # BlockNoNorm, and no final norm either
    weights = {k: w for k, w in chapter.state_dict().items() if not (no_norms and "norm" in k)}
    assert list(variant.state_dict()) == list(weights)
    assert all(torch.equal(a, b) for a, b in zip(variant.state_dict().values(), weights.values()))
    if change:
        assert not torch.allclose(variant(IDS), chapter(IDS), atol=1e-3)
    else:
        assert torch.equal(variant(IDS), chapter(IDS))


def test_each_block_computes_its_formula_with_the_chapter_modules():
    x = torch.randn(2, 16, CFG["emb_dim"], generator=torch.Generator().manual_seed(3))
    torch.manual_seed(1)
    chapter = gpt.TransformerBlock(CFG).eval()
    expected = {
        claims.BlockNoNorm: (lambda h: h + chapter.ff(h))(x + chapter.att(x)),
        claims.BlockNoShortcut: chapter.ff(chapter.norm2(chapter.att(chapter.norm1(x)))),
        claims.BlockPostLN: (lambda h: chapter.norm2(h + chapter.ff(h)))(
            chapter.norm1(x + chapter.att(x))),
    }
    for block, want in expected.items():
        variant = block(CFG).eval()
        variant.load_state_dict(chapter.state_dict(), strict=block is not claims.BlockNoNorm)
        assert torch.allclose(variant(x), want, atol=1e-6), block
    relu = claims.BlockReLU(CFG).eval()
    relu.load_state_dict(chapter.state_dict())
    assert isinstance(relu.ff.layers[1], nn.ReLU)
    chapter.ff.layers[1] = nn.ReLU()  # undo the one change: the chapter's block with ReLU
    assert torch.equal(relu(x), chapter(x))


def test_tied_model_shares_one_matrix():
    tied = claims.make_model(CFG, seed=1, tie_weights=True)
    assert tied.out_head.weight is tied.tok_emb.weight
    separate = sum(p.numel() for p in claims.make_model(CFG, seed=1).parameters())
    assert separate - sum(p.numel() for p in tied.parameters()) == 50 * CFG["emb_dim"]


def test_embeddings_init_draws_the_embeddings_only():
    model = claims.embeddings_init_(claims.make_model(CFG, seed=1))
    default = claims.make_model(CFG, seed=1).state_dict()
    changed = [k for k, w in model.state_dict().items() if not torch.equal(w, default[k])]
    assert changed == ["tok_emb.weight", "pos_emb.weight"] and model.tok_emb.weight.std() < 0.03


def test_gpt2_init_has_std_002_scaled_residual_projections_and_zero_biases():
    cfg = {**CFG, "emb_dim": 128, "n_layers": 4}
    model = claims.gpt2_init_(claims.make_model(cfg, seed=1))
    residual = 0.02 / math.sqrt(2 * 4)
    for name, p in model.named_parameters():
        if name.endswith(("att.out_proj.weight", "ff.layers.2.weight")):
            assert abs(p.std().item() - residual) < 0.1 * residual, name
        elif name.endswith("bias"):
            assert not p.any(), name
        elif "norm" in name:
            assert torch.equal(p, torch.ones_like(p) if name.endswith("scale") else torch.zeros_like(p))
        else:
            assert abs(p.std().item() - 0.02) < 0.002 and abs(p.mean().item()) < 0.002, name
