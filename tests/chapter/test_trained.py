"""trained/: the chapter's GPTModel trained on Tiny Shakespeare. The committed weights are the file
the record names, load as the record says they score, and the command that made them makes them
again; the n-gram yardsticks are proper distributions."""

import hashlib
import json
import math
import random

import pytest
import safetensors.torch
import torch

import gpt
import trained
from bonus.watch_it_learn import train
from trained import ngrams, train_shakespeare

RECORD = json.loads((train_shakespeare.HERE / "shakespeare.json").read_text())


@pytest.fixture(scope="module")
def shakespeare():
    return trained.load()


@pytest.fixture(scope="module")
def parts():
    return train_shakespeare.load_parts()[1]


def flip_last_bit(path):
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))


def write_record(weights):
    """A record beside `weights` that vouches for them, as train_shakespeare writes one."""
    sha256 = hashlib.sha256(weights.read_bytes()).hexdigest()
    weights.with_suffix(".json").write_text(json.dumps({"sha256": sha256}))


def test_the_weights_are_the_recorded_file_and_an_edit_is_refused_whatever_its_record(
        tmp_path, monkeypatch):
    data = trained.WEIGHTS.read_bytes()
    assert hashlib.sha256(data).hexdigest() == trained.WEIGHTS_SHA256 == RECORD["sha256"]
    assert len(data) < 11 * 1024**2  # small enough to commit
    edited = tmp_path / "shakespeare.safetensors"
    edited.write_bytes(data)
    flip_last_bit(edited)
    write_record(edited)
    monkeypatch.setattr(trained, "WEIGHTS", edited)  # it stands for the shipped file
    with pytest.raises(ValueError, match="damaged or edited"):
        trained.load(edited)


def test_retrained_weights_are_checked_against_their_own_record(tmp_path):
    tensors = safetensors.torch.load_file(trained.WEIGHTS)
    tensors["out_head.weight"] /= 2  # weights the shipped sum does not match
    retrained = tmp_path / "again.safetensors"
    safetensors.torch.save_file(tensors, retrained, metadata={"config": json.dumps(RECORD["config"])})
    write_record(retrained)
    model = trained.load(retrained).model
    torch.testing.assert_close(model.out_head.weight, tensors["out_head.weight"])
    flip_last_bit(retrained)
    with pytest.raises(ValueError, match="damaged or edited"):
        trained.load(retrained)


def test_the_loaded_model_is_the_chapters_class_with_the_recorded_config(shakespeare):
    assert type(shakespeare.model) is gpt.GPTModel and not shakespeare.model.training
    assert shakespeare.config == RECORD["config"]
    assert RECORD["config"].keys() == gpt.GPT_CONFIG_124M.keys()


def test_loading_gives_the_recorded_held_out_loss_and_continuation(shakespeare, parts):
    loss = train.evaluate_split(shakespeare.model, parts["test"], shakespeare.context_length)
    assert loss == pytest.approx(RECORD["test_loss"], abs=1e-4)
    sample = RECORD["sample"]
    out = gpt.generate_text_simple(shakespeare.model, shakespeare.encode(sample["prompt"]),
                                   sample["max_new_tokens"], shakespeare.context_length)
    assert out[0].tolist() == sample["ids"]


def test_text_goes_in_and_comes_back_and_an_unknown_token_is_named(shakespeare):
    text = "ROMEO:\nGood morrow, neighbour."
    assert shakespeare.decode(shakespeare.encode(text)) == text
    with pytest.raises(ValueError, match=r"never uses the tokens \['Photos', 'ynthesis'\]"):
        shakespeare.encode("Photosynthesis")
    # x . \n | \n | GRE MI O : \n | Good mor row: only the line naming a speaker counts
    flags = shakespeare.speaker_tokens(shakespeare.encode("x.\n\nGREMIO:\nGood morrow")[0])
    assert flags.tolist() == [False] * 4 + [True] * 5 + [False] * 3


def test_the_notebooks_baselines_are_those_of_the_record(parts):
    """Their discounts chosen on validation (fitted on training alone), then refitted on what the
    network saw and scored on test."""
    assert train_shakespeare.chosen_discounts(parts, RECORD["config"]["vocab_size"]) == RECORD["discounts"]
    seen = torch.cat([parts["train"], parts["validation"]])
    losses, _ = train_shakespeare.baselines(seen, parts["test"], RECORD["config"]["vocab_size"],
                                            RECORD["discounts"])
    assert {k: round(v, 4) for k, v in losses.items()} == RECORD["baselines"]
    assert RECORD["test_loss"] < RECORD["baselines"]["trigram"]  # the model beats every yardstick


@pytest.mark.parametrize("order", [2, 3])
def test_kneser_ney_gives_a_distribution_for_seen_and_unseen_contexts(order):
    rng = random.Random(0)
    vocab_size = 30
    ids = [rng.randrange(12) for _ in range(400)]  # tokens 12..29 never seen
    model = ngrams.kneser_ney(ids, order, 0.75, vocab_size)
    for context in (ids[5:7], [3, 3], [20, 25], [4]):
        total = sum(model(context, w) for w in range(vocab_size))
        assert total == pytest.approx(1.0, abs=1e-9)
        assert all(model(context, w) > 0 for w in range(vocab_size))
    unigram = ngrams.unigram(ids, vocab_size)
    assert sum(unigram([], w) for w in range(vocab_size)) == pytest.approx(1.0)


def test_cross_entropy_is_the_mean_negative_log_probability():
    uniform = lambda context, w: 1 / 8  # noqa: E731
    assert ngrams.cross_entropy(uniform, [1, 2, 3, 4]) == pytest.approx(math.log(8))


def test_the_command_trains_on_the_recipes_threads_and_gives_the_callers_back(monkeypatch):
    threads, used = torch.get_num_threads(), []
    monkeypatch.setattr(train_shakespeare, "train_and_record",
                        lambda args: used.append(torch.get_num_threads()))
    train_shakespeare.main(["--threads", str(threads + 1)])
    assert used == [threads + 1] and torch.get_num_threads() == threads


@pytest.mark.slow  # the whole training run again: about 7 minutes on 2 threads
def test_the_command_makes_the_weights_again(tmp_path):
    """The committed command, rerun. On the machine that made them (same CPU, PyTorch and thread
    count) it wrote the same file, byte for byte; on another CPU float sums may round otherwise
    in their last bits, and training compounds that. So: the first epoch's held-out loss within
    2e-4, every later one and the final loss within 2e-3, the n-gram baselines exactly."""
    train_shakespeare.main(["--out", str(tmp_path / "again")])
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["config"] == RECORD["config"] and again["recipe"] == RECORD["recipe"]
    first, *later = RECORD["test_loss_by_epoch"]
    assert again["test_loss_by_epoch"][0] == pytest.approx(first, abs=2e-4)
    assert again["test_loss_by_epoch"][1:] == pytest.approx(later, abs=2e-3)
    assert again["test_loss"] == pytest.approx(RECORD["test_loss"], abs=2e-3)
    assert again["baselines"] == RECORD["baselines"]


def test_attention_weights_are_each_heads_causal_softmax_whatever_the_pass_size(shakespeare, parts):
    windows = parts["test"][: 5 * 64].view(5, 64)
    weights = trained.attention_weights(shakespeare.model, windows, windows_per_pass=2)
    assert weights.shape == (5, 4, 4, 64, 64)
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(5, 4, 4, 64))
    assert (weights.triu(diagonal=1) == 0).all()
    torch.testing.assert_close(trained.attention_weights(shakespeare.model, windows), weights)
