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


@pytest.mark.parametrize("variant", BLOCKS)
def test_blocks_are_subclasses_that_mark_every_change_new(variant):
    """A variant overrides only what changes: a forward differs from the chapter's only in
    lines marked # NEW; an __init__ runs the chapter's, then every line it adds is marked."""
    assert issubclass(variant, gpt.TransformerBlock)
    own = [name for name in ("__init__", "forward") if name in vars(variant)]
    assert len(own) == 1, own
    if own == ["forward"]:
        assert_changes_marked_new(gpt.TransformerBlock.forward, variant.forward)
    else:
        lines = inspect.getsource(variant.__init__).splitlines()
        assert lines[0].strip() == "def __init__(self, cfg):"
        assert lines[1].strip() == "super().__init__(cfg)"
        assert lines[2:] and all("# NEW" in line for line in lines[2:])


def test_model_changes_only_lines_marked_new():
    assert_changes_marked_new(gpt.GPTModel, claims.GPTVariant)


# BLOCKS[1:]: all but BlockNoNorm, which has fewer weights (its own test below)
@pytest.mark.parametrize("change", [{}] + [{"block": block} for block in BLOCKS[1:]])
def test_same_seed_same_weights_as_the_chapter(change):
    """Under one seed the defaults and the block variants draw the chapter's weights (same names,
    same values); the defaults compute its logits exactly, each block variant something else:
    a block's change is in the computation, not the parameters."""
    variant = claims.make_model(CFG, seed=1, **change).eval()
    chapter = chapter_model(seed=1)
    assert list(variant.state_dict()) == list(chapter.state_dict())
    assert all(torch.equal(a, b) for a, b in
               zip(variant.state_dict().values(), chapter.state_dict().values()))
    if change:
        assert not torch.allclose(variant(IDS), chapter(IDS), atol=1e-3)
    else:
        assert torch.equal(variant(IDS), chapter(IDS))


def test_no_norm_is_the_chapter_model_with_identity_norms():
    variant = claims.make_model(CFG, seed=1, block=claims.BlockNoNorm, final_norm=False).eval()
    assert not any(isinstance(m, gpt.LayerNorm) for m in variant.modules())
    chapter = chapter_model(seed=2)
    chapter.load_state_dict(variant.state_dict(), strict=False)  # the variant's weights
    for block in chapter.trf_blocks:
        block.norm1 = block.norm2 = nn.Identity()
    chapter.final_norm = nn.Identity()
    assert torch.equal(variant(IDS), chapter(IDS))


def test_each_block_computes_its_formula_with_the_chapter_modules():
    x = torch.randn(2, 16, CFG["emb_dim"], generator=torch.Generator().manual_seed(3))
    torch.manual_seed(1)
    chapter = gpt.TransformerBlock(CFG).eval()
    expected = {
        claims.BlockNoShortcut: chapter.ff(chapter.norm2(chapter.att(chapter.norm1(x)))),
        claims.BlockPostLN: (lambda h: chapter.norm2(h + chapter.ff(h)))(
            chapter.norm1(x + chapter.att(x))),
    }
    for block, want in expected.items():
        variant = block(CFG).eval()
        variant.load_state_dict(chapter.state_dict())
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
