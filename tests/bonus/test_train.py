"""bonus/watch_it_learn/train.py: the loop learns, evaluation does not train, sampling keeps its promises."""

import pytest
import torch

import gpt
from bonus.watch_it_learn import train
from tests.helpers import TINY_CONFIG

SENTENCE = [5, 1, 4, 2, 8, 3, 7, 6, 0, 9]  # ids of a made-up ten-token "sentence"
CFG = {**TINY_CONFIG, "vocab_size": 10, "context_length": 8, "n_layers": 1, "drop_rate": 0.0}


def tiny_model(cfg=CFG, seed=123):
    torch.manual_seed(seed)
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


def test_temperature_zero_and_near_zero_are_greedy():
    model = tiny_model(cfg={**CFG, "vocab_size": 50}).eval()
    prompt = torch.tensor([[1, 2, 3], [4, 5, 6]])
    greedy = gpt.generate_text_simple(model, prompt, 6, 8)
    assert torch.equal(train.generate(model, prompt, 6, 8, temperature=0.0), greedy)
    sampled = train.generate(model, prompt, 6, 8, temperature=1e-4,
                             generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled, greedy)


def test_top_k_never_samples_outside_the_k_most_likely():
    model = tiny_model(cfg={**CFG, "vocab_size": 50}).eval()
    prompts = torch.randint(0, 50, (2000, 3), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        allowed = torch.topk(model(prompts)[:, -1, :], 3).indices
    drawn = train.generate(model, prompts, 1, 8, temperature=5.0, top_k=3,
                           generator=torch.Generator().manual_seed(2))[:, -1:]
    assert (drawn == allowed).any(dim=1).all()
    assert len(drawn.unique()) > 3  # the rows differ: a high temperature spreads the draws


def test_sampling_arguments_are_checked():
    model = tiny_model().eval()
    prompt = torch.tensor([[1, 2]])
    with pytest.raises(ValueError, match="temperature"):
        train.generate(model, prompt, 1, 8, temperature=-1.0)
    with pytest.raises(ValueError, match="top_k"):
        train.generate(model, prompt, 1, 8, top_k=11)


def test_vocab_renumbers_and_refuses_unseen_tokens():
    vocab = train.Vocab([50, 7, 50, 300])
    assert len(vocab) == 3
    assert vocab.encode([7, 300, 50]).tolist() == [0, 2, 1]
    assert vocab.decode(torch.tensor([2, 0])).tolist() == [300, 7]
    with pytest.raises(ValueError, match=r"\[8\] are not in this vocabulary"):
        vocab.encode([7, 8])


def test_the_text_is_hash_checked(tmp_path):
    assert train.load_text().startswith("I HAD always thought Jack Gisburn")
    damaged = tmp_path / "the-verdict.txt"
    damaged.write_text(train.load_text().replace("Gisburn", "Gisborn"))
    with pytest.raises(ValueError, match="damaged or edited"):
        train.load_text(damaged)


def test_tiny_shakespeare_ships_hash_checked():
    text = train.load_shakespeare()
    assert len(text) == 1_115_394 and text.startswith("First Citizen:")
    sums = (train.CORPORA / "SHA256SUMS").read_text()
    assert f"{train.TINY_SHAKESPEARE_SHA256}  tinyshakespeare.txt" in sums
    assert f"{train.THE_VERDICT_SHA256}  the-verdict.txt" in sums


def test_adamw_decays_the_2d_weights_only():
    """As nanoGPT: matrices and embeddings decay; biases and the norms' scale and shift do not."""
    model = tiny_model()
    groups = train.adamw(model, lr=1e-3).param_groups
    decayed = {id(p) for p in groups[0]["params"]}
    assert groups[0]["weight_decay"] == 0.1 and groups[1]["weight_decay"] == 0.0
    for name, p in model.named_parameters():
        assert (id(p) in decayed) == (p.dim() == 2), name
    assert {id(p) for g in groups for p in g["params"]} == {id(p) for p in model.parameters()}


def test_evaluate_split_scores_every_target_once():
    """The whole-split loss is the mean over every next-token target, the short last window
    included, whatever the window batches."""
    model = tiny_model().eval()
    ids = torch.tensor(SENTENCE * 3 + [4, 2, 8])  # 33 ids: four windows of 8, then one of 0
    with torch.no_grad():
        by_hand = [torch.nn.functional.cross_entropy(model(ids[i : i + 8][None])[0], ids[i + 1 : i + 9],
                                                     reduction="sum") for i in range(0, 32, 8)]
    expected = sum(by_hand).item() / 32
    assert train.evaluate_split(model, ids, 8) == pytest.approx(expected, rel=1e-6)
    assert train.evaluate_split(model, ids, 8, windows_per_batch=3) == pytest.approx(expected, rel=1e-6)
    shorter = ids[:30]  # three windows of 8, then one of 5 inputs
    with torch.no_grad():
        tail = torch.nn.functional.cross_entropy(model(shorter[24:29][None])[0], shorter[25:30],
                                                 reduction="sum")
    expected = (sum(by_hand[:3]) + tail).item() / 29
    assert train.evaluate_split(model, shorter, 8) == pytest.approx(expected, rel=1e-6)
    per_target = train.evaluate_split(model, shorter, 8, per_target=True)
    assert per_target.shape == (29,) and per_target.sum().item() == pytest.approx(expected * 29, rel=1e-6)


def test_warmup_climbs_linearly_to_the_rate(monkeypatch):
    rates, real_step = [], torch.optim.AdamW.step

    def recording_step(optimizer, *args, **kwargs):
        rates.append(optimizer.param_groups[0]["lr"])
        return real_step(optimizer, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    ids = torch.tensor(SENTENCE * 5)
    train.train(tiny_model(), ids, ids, steps=6, batch_size=2, lr=1e-2, eval_every=6, warmup_steps=4)
    assert rates == pytest.approx([2.5e-3, 5e-3, 7.5e-3, 1e-2, 1e-2, 1e-2])


def test_a_generator_on_another_device_is_refused():
    with torch.device("meta"):
        model = tiny_model()
    with pytest.raises(ValueError, match="torch.Generator"):
        train.generate(model, torch.tensor([[1, 2]]), 2, 8, temperature=1.0,
                       generator=torch.Generator().manual_seed(0))
