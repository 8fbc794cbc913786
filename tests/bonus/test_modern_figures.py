"""bonus/gpt2_to_llama_qwen/modern_figures.py: the pictures show what bonus/gpt2_to_llama_qwen/modern.py computes."""

import math

import pytest
import torch
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyBboxPatch

import gpt
from bonus.gpt2_to_llama_qwen import modern
from bonus.gpt2_to_llama_qwen import modern_figures as mf
from gpt_figures import BOX_COLOR, HIGHLIGHT_COLOR
from tests.helpers import TINY_CONFIG

pytestmark = pytest.mark.usefixtures("figures")


def test_the_rotation_picture_turns_each_pair_by_position_times_its_angle():
    fig = mf.draw_rope_rotation(head_dim=16, base=10_000.0, pairs=(0, 2), num_positions=8)
    assert len(fig.axes) == 2
    for ax, theta in zip(fig.axes, modern.rope_frequencies(16, 10_000.0)[[0, 2]]):
        angles = torch.arange(8.0) * theta  # pair i at position m: m * theta_i
        # A pair that starts as (1, 0) ends at (cos, sin) of its angle: features i and i + 8
        # turn together (pairing i with i + 1 would leave the second feature at 0).
        tips = [arrow.xy for arrow in ax.texts if arrow.get_gid() == "position arrow"]
        assert torch.allclose(torch.tensor(tips), torch.stack((angles.cos(), angles.sin()), -1),
                              atol=1e-6)
    assert fig.axes[1].get_title().startswith("pair 2: 0.1 rad")  # 10,000^(-4/16)
    assert fig.axes[1].get_ylabel() == "feature 10"


def test_wavelengths_are_two_pi_over_the_angles():
    plain = modern.rope_frequencies(64, 500_000.0)
    scaled = modern.rope_frequencies(64, 500_000.0, modern.LLAMA_3_2_1B["rope_scaling"])
    fig = mf.draw_wavelengths({"plain": plain, "scaled": scaled}, marks={"8,192": 8192})
    ax = fig.axes[0]
    curves = [line for line in ax.lines if line.get_label() in ("plain", "scaled")]
    assert [line.get_label() for line in curves] == ["plain", "scaled"]
    assert torch.allclose(torch.tensor(curves[1].get_ydata(), dtype=torch.float32), 2 * math.pi / scaled)
    assert [tuple(line.get_ydata()) for line in ax.lines[2:]] == [(8192, 8192)]  # the mark
    assert ax.get_yscale() == "log"


def models(**modern_changes):
    torch.manual_seed(123)
    chapter = gpt.GPTModel({**TINY_CONFIG, "vocab_size": 40, "context_length": 8})
    return chapter, modern.ModernGPT({**modern.TINY_CONFIG, **modern_changes})


def test_the_data_paths_are_labelled_from_the_models():
    fig = mf.draw_gpt2_vs_modern(*models(qk_norm=True, tie_embeddings=True, n_layers=3))
    shown = [text.get_text() for text in fig.axes[0].texts]
    for label in ("norm1: LayerNorm", "norm1: RMSNorm", "att: MultiHeadAttention",
                  "att: GroupedQueryAttention", "Linear → GELU → Linear", "learns scale and shift",
                  "learns scale", "tied: tok_emb's weights", "learned, 8 positions",
                  "transformer block, × 2", "transformer block, × 3", "no position embedding",
                  "4 query heads share 2 key/value heads, QK-norm", "RoPE"):
        assert label in shown, label
    assert shown.count("no dropout") == 3


def test_the_data_paths_follow_the_config_and_what_changed_is_highlighted():
    fig = mf.draw_gpt2_vs_modern(*models())
    shown = [text.get_text() for text in fig.axes[0].texts]
    assert "4 query heads share 2 key/value heads" in shown  # no QK-norm
    assert "its own weights" in shown and "tied: tok_emb's weights" not in shown
    assert "down(SiLU(gate(x)) · up(x)), 176 wide" in shown
    ax = fig.axes[0]
    boxes = [patch for patch in ax.patches if isinstance(patch, FancyBboxPatch)]

    def faces(label):  # the colours of the boxes that hold `label`
        points = [ax.transData.transform(t.get_position()) for t in ax.texts if t.get_text() == label]
        return {box.get_facecolor() for box in boxes for point in points if box.contains_point(point)}

    assert faces("norm1: RMSNorm") == {to_rgba(HIGHLIGHT_COLOR)}
    assert faces("norm1: LayerNorm") == {to_rgba(BOX_COLOR)}
    assert faces("tok_emb: Embedding") == {to_rgba(BOX_COLOR)}  # the same on both sides
    assert sum(patch.get_gid() == "absent" for patch in ax.patches) == 4  # pos_emb, 3 dropouts
