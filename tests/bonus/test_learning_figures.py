"""bonus/watch_it_learn/learning_figures.py: the numbers behind the pictures are the model's own."""

import matplotlib
import pytest
import torch

import gpt
from bonus.watch_it_learn import learning_figures as lf
from tests.helpers import TINY_CONFIG

matplotlib.use("Agg")
CFG = {**TINY_CONFIG, "vocab_size": 40, "context_length": 8, "drop_rate": 0.5}
IDS = torch.tensor([[3, 1, 4, 1, 5, 9, 2]])


@pytest.fixture
def model():
    torch.manual_seed(123)
    return gpt.GPTModel(CFG).train()  # training mode with dropout: the functions must undo it


def test_attention_weights_are_the_ones_the_model_uses(model):
    weights = lf.attention_weights(model, IDS)
    assert weights.shape == (CFG["n_layers"], CFG["n_heads"], 7, 7)
    assert torch.allclose(weights.sum(-1), torch.ones(1))
    assert torch.all(weights.triu(diagonal=1) == 0)  # causal: nothing from later positions
    assert model.training  # left as it was found
    # Layer 0's weights times its values, through out_proj, give that layer's attention output.
    model.eval()
    att = model.trf_blocks[0].att
    x = model.trf_blocks[0].norm1(model.tok_emb(IDS) + model.pos_emb(torch.arange(7)))
    values = att.W_value(x).view(1, 7, CFG["n_heads"], -1).transpose(1, 2)
    context = (weights[0] @ values).transpose(1, 2).reshape(1, 7, CFG["emb_dim"])
    assert torch.allclose(att.out_proj(context), att(x), atol=1e-6)


def test_next_token_probabilities_in_eval_mode(model):
    probabilities = lf.next_token_probabilities(model, IDS)
    assert model.training and probabilities.grad_fn is None
    expected = torch.softmax(model.eval()(IDS)[0, -1], dim=-1)
    assert torch.allclose(probabilities, expected)


def test_sampling_distribution_is_softmax_with_temperature_and_top_k():
    """The distribution train.generate draws from (it calls this function)."""
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0, 3.0])
    assert torch.allclose(lf.sampling_distribution(logits), torch.softmax(logits, -1))
    cooler, hotter = lf.sampling_distribution(logits, 0.5), lf.sampling_distribution(logits, 2.0)
    assert cooler.max() > torch.softmax(logits, -1).max() > hotter.max()  # T sharpens or flattens
    top2 = lf.sampling_distribution(logits, 1.0, top_k=2)
    e = torch.e  # the two largest logits, 3 and 2, share the mass as e : 1
    assert torch.allclose(top2, torch.tensor([1 / (1 + e), 0, 0, 0, e / (1 + e)]))


def test_the_figures_draw_for_any_model(model):
    history = {"step": [1, 2, 3], "train_loss": [3.0, 2.0, 1.0], "val_loss": [3.1, 2.5, 2.9]}
    figures = [
        lf.draw_loss_curves(history),
        lf.draw_generations({"step 0": "Hi\nthere", "step 50": "Hi there"}, prompt="Hi"),
        lf.draw_attention({"untrained": model, "also untrained": model}, IDS, str),
        lf.draw_next_token({"a": model, "b": model}, IDS, str, k=4),
        lf.draw_sampling_distributions(model, IDS, str, top_k=2, k=4),
    ]
    assert [len(f.axes) for f in figures] == [1, 1, 2 * CFG["n_heads"], 2, 4]
    assert "step 2" in figures[0].axes[0].get_legend_handles_labels()[1][-1]  # lowest held-out
    assert "Hi\\nthere" in [t.get_text() for t in figures[1].axes[0].texts]
    assert figures[4].axes[3].get_title().startswith("top-2")
    assert model.training
    for figure in figures:
        matplotlib.pyplot.close(figure)
