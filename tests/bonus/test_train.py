"""bonus/watch_it_learn/train.py: the loop learns, evaluation does not train, sampling keeps its promises."""

import math

import pytest
import torch
import torch.nn.functional as F

import gpt
from bonus.watch_it_learn import train
from tests.helpers import TINY_CONFIG

SENTENCE = [5, 1, 4, 2, 8, 3, 7, 6, 0, 9]  # ids of a made-up ten-token "sentence"
CFG = {**TINY_CONFIG, "vocab_size": 10, "context_length": 8, "n_layers": 1, "drop_rate": 0.0}


def tiny_model(cfg=CFG):
    torch.manual_seed(123)
    return gpt.GPTModel(cfg)


def test_the_loop_learns_a_repeated_sentence():
    ids = torch.tensor(SENTENCE * 30)
    model = tiny_model()
    history = train.train(model, ids, ids, steps=150, batch_size=8, lr=1e-2, eval_every=50)
    assert history["train_loss"][0] > history["train_loss"][-1]
    assert history["train_loss"][-1] < 0.05  # ln(10) = 2.3 at the start: it learned the cycle
    assert history["step"] == [50, 100, 150] and history["tokens_per_second"] > 0


@pytest.mark.parametrize("mode", [True, False])
def test_evaluation_does_not_train(mode):
    model = tiny_model(cfg={**CFG, "drop_rate": 0.5}).train(mode)
    before = {name: p.clone() for name, p in model.named_parameters()}
    modes = []
    model.register_forward_pre_hook(lambda module, args: modes.append(module.training))
    loss = train.evaluate(model, torch.tensor(SENTENCE * 5), batch_size=4, context_length=8)
    assert modes and not any(modes)  # every forward pass ran in eval mode: no dropout
    assert model.training is mode  # and the model is left as it was found
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(p, before[name]) for name, p in model.named_parameters())
    assert loss == train.evaluate(model, torch.tensor(SENTENCE * 5), 4, 8)  # the same batches


def test_batches_and_prompts_go_to_the_models_device():
    with torch.device("meta"):  # a device other than the CPU's, which any machine has
        model = tiny_model()
    seen = []
    model.register_forward_pre_hook(lambda module, args: seen.append(args[0].device.type))
    x, y = train.get_batch(torch.tensor(SENTENCE * 5), 4, 8, torch.Generator().manual_seed(0))
    assert train.loss_on(model, x, y).is_meta
    assert train.generate(model, torch.tensor([[1, 2]]), 2, 8).is_meta
    assert seen == ["meta"] * 3


def test_batches_are_next_token_pairs():
    ids = torch.arange(100)
    x, y = train.get_batch(ids, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)


def test_temperature_zero_and_near_zero_are_greedy_below_zero_refused():
    model = tiny_model(cfg={**CFG, "vocab_size": 50}).eval()
    prompt = torch.tensor([[1, 2, 3], [4, 5, 6]])
    greedy = gpt.generate_text_simple(model, prompt, 6, 8)
    assert torch.equal(train.generate(model, prompt, 6, 8, temperature=0.0), greedy)
    sampled = train.generate(model, prompt, 6, 8, temperature=1e-4,
                             generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled, greedy)
    with pytest.raises(ValueError, match="temperature"):  # it would favour the least likely
        train.generate(model, prompt, 6, 8, temperature=-1.0)


@pytest.mark.parametrize("args, error, message", [
    ((torch.tensor([1, 2]), 2, 8), ValueError, r"shape \(batch, num_tokens\), got \(2,\)"),
    ((torch.tensor([[1, 50]]), 2, 8), ValueError, r"\[0, 49\].*from 1 to 50"),
    ((torch.tensor([[1, 2]]), 2.0, 8), TypeError, r"max_new_tokens must be an int"),
    # 2 + 8 ids, of which the model sees all but the last: 9, one more than context_length (8)
    ((torch.tensor([[1, 2]]), 8, 100), ValueError, r"^9 tokens, but the model's context_length is 8"),
])
def test_bad_arguments_are_refused_before_the_loop(args, error, message):
    model = tiny_model(cfg={**CFG, "vocab_size": 50}).eval()
    with pytest.raises(error, match=message):
        train.generate(model, *args)
    assert train.generate(model, torch.tensor([[1, 2]]), 7, 100).shape == (1, 9)  # 8 ids seen


def test_top_k_never_samples_outside_the_k_most_likely():
    model = tiny_model(cfg={**CFG, "vocab_size": 50}).eval()
    prompts = torch.randint(0, 50, (2000, 3), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        allowed = torch.topk(model(prompts)[:, -1, :], 3).indices
    drawn = train.generate(model, prompts, 1, 8, temperature=5.0, top_k=3,
                           generator=torch.Generator().manual_seed(2))[:, -1:]
    assert (drawn == allowed).any(dim=1).all()
    assert len(drawn.unique()) > 3  # the rows differ: a high temperature spreads the draws


def test_vocab_renumbers_and_refuses_unseen_tokens():
    vocab = train.Vocab([50, 7, 50, 300])
    assert len(vocab) == 3
    assert vocab.encode([7, 300, 50]).tolist() == [0, 2, 1]
    assert vocab.decode(torch.tensor([2, 0])).tolist() == [300, 7]
    with pytest.raises(ValueError, match=r"\[8\] are not in this vocabulary"):
        vocab.encode([7, 8])


def test_the_texts_ship_hash_checked(tmp_path):
    assert train.load_text().startswith("I HAD always thought Jack Gisburn")
    shakespeare = train.load_shakespeare()
    assert len(shakespeare) == 1_115_394 and shakespeare.startswith("First Citizen:")
    sums = (train.CORPORA / "SHA256SUMS").read_text()
    assert f"{train.TINY_SHAKESPEARE_SHA256}  tinyshakespeare.txt" in sums
    assert f"{train.THE_VERDICT_SHA256}  the-verdict.txt" in sums
    damaged = tmp_path / "the-verdict.txt"
    damaged.write_text(train.load_text().replace("Gisburn", "Gisborn"))
    with pytest.raises(ValueError, match="damaged or edited"):
        train.load_text(damaged)


def test_adamw_decays_the_2d_weights_only():
    """As nanoGPT: matrices and embeddings decay; biases and the norms' scale and shift do not."""
    model = tiny_model()
    groups = train.adamw(model, lr=1e-3).param_groups
    decayed = {id(p) for p in groups[0]["params"]}
    assert groups[0]["weight_decay"] == 0.1 and groups[1]["weight_decay"] == 0.0
    for name, p in model.named_parameters():
        assert (id(p) in decayed) == (p.dim() == 2), name
    assert {id(p) for g in groups for p in g["params"]} == {id(p) for p in model.parameters()}


# 33 ids: four windows of 8 targets, none left; 30 ids: three windows of 8, then one of 5
@pytest.mark.parametrize("ids", [SENTENCE * 3 + [4, 2, 8], SENTENCE * 3])
@pytest.mark.parametrize("windows_per_batch", [64, 3])
def test_evaluate_split_scores_every_target_once(ids, windows_per_batch):
    """Each next-token target's loss once, the short last window's included, however the windows
    are batched; the whole-split loss is their mean."""
    model, ids = tiny_model().eval(), torch.tensor(ids)
    windows = [ids[i : i + 9] for i in range(0, len(ids) - 1, 8)]
    with torch.no_grad():
        by_hand = torch.cat([F.cross_entropy(model(w[None, :-1])[0], w[1:], reduction="none")
                             for w in windows])
    assert by_hand.shape == (len(ids) - 1,)
    torch.testing.assert_close(train.evaluate_split(model, ids, 8, windows_per_batch, per_target=True), by_hand)
    mean = train.evaluate_split(model, ids, 8, windows_per_batch)
    assert mean == pytest.approx(by_hand.double().mean().item(), rel=1e-6)


@pytest.fixture
def rates(monkeypatch):
    """The learning rate of every optimizer step train.train takes, in order."""
    seen, real_step = [], torch.optim.AdamW.step

    def recording_step(optimizer, *args, **kwargs):
        seen.append(optimizer.param_groups[0]["lr"])
        return real_step(optimizer, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    return seen


def test_warmup_climbs_linearly_to_the_rate(rates):
    ids = torch.tensor(SENTENCE * 5)
    train.train(tiny_model(), ids, ids, steps=6, batch_size=2, lr=1e-2, eval_every=6, warmup_steps=4)
    assert rates == pytest.approx([2.5e-3, 5e-3, 7.5e-3, 1e-2, 1e-2, 1e-2])


def test_with_a_final_rate_the_rate_falls_along_a_cosine_after_the_warm_up(rates):
    ids = torch.tensor(SENTENCE * 5)
    train.train(tiny_model(), ids, ids, steps=6, batch_size=2, lr=1e-2, eval_every=6, warmup_steps=2,
                final_lr=1e-3)
    # two warm-up steps, then 1e-3 + 9e-3 * (1 + cos(pi * k / 4)) / 2 for k = 0..3
    cosine = [1e-3 + 9e-3 * (1 + math.cos(math.pi * k / 4)) / 2 for k in range(4)]
    assert rates == pytest.approx([5e-3, 1e-2] + cosine)
