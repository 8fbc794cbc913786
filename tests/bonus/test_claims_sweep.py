"""bonus/claims_tested/claims_sweep.py: a stored run is reproduced by rerunning it, each results
file holds exactly the runs its command asks for, and the comparisons have the runs they need."""

import json
import shlex
from pathlib import Path

import pytest

from bonus.claims_tested import claims_sweep

RESULTS = Path(claims_sweep.__file__).parent / "results"
FILES = ("claims_epoch.json", "claims_short.json")


@pytest.fixture(scope="module")
def data():
    return claims_sweep.load_data()


def stored_file(name):
    return json.loads((RESULTS / name).read_text())


def test_a_stored_run_is_reproduced(data):
    """One 120-step run of claims_short.json, rerun: the same losses within 1e-3 (float sums
    differ between threads and PyTorch versions in the last digits)."""
    (stored,) = [r for r in stored_file("claims_short.json")["runs"]
                 if (r["arm"], r["seed"], r["lr"]) == ("relu", 2, 1e-2)]
    rerun = claims_sweep.run_one(stored["arm"], stored["seed"], stored["lr"], stored["steps"], data)
    for key in ("train_loss", "val_loss"):
        assert rerun[key] == pytest.approx(stored[key], abs=1e-3)


@pytest.mark.parametrize("name", FILES)
def test_each_file_holds_what_its_command_asks_for(name):
    results = stored_file(name)
    words = shlex.split(results["command"])
    assert words[:2] == ["python", "bonus/claims_tested/claims_sweep.py"]
    args = claims_sweep.parse_args(words[2:])
    assert args.out.name == name
    assert [(r["arm"], r["seed"], r["lr"], r["steps"]) for r in results["runs"]] == claims_sweep.jobs_of(args)


def test_every_comparison_has_its_paired_runs():
    """One epoch: at least 5 paired seeds; 120 steps: 5 seeds at 4 rates."""
    stored, _ = claims_sweep.load_results()
    for variant, base in claims_sweep.COMPARISONS.values():
        epoch = {s for a, s, lr, n in stored if (a, lr, n) == (variant, 3e-3, 1189)}
        assert len(epoch) >= 5 and all((base, s, 3e-3, 1189) in stored for s in epoch)
        for lr in (1e-3, 3e-3, 1e-2, 3e-2):
            assert all((arm, s, lr, 120) in stored for arm in (variant, base) for s in range(1, 6))


def test_variants_start_from_the_baselines_weights(data):
    """Pairing: under one seed a block variant draws its baseline's initial weights."""
    cfgs = claims_sweep.configs(len(data[0]))
    for variant, base in (("relu", "chapter"), ("post_ln", "chapter"), ("no_shortcut", "deep_chapter")):
        a = claims_sweep.build(variant, cfgs, seed=3).state_dict()
        b = claims_sweep.build(base, cfgs, seed=3).state_dict()
        assert all((a[k] == b[k]).all() for k in b)


def test_the_baselines_without_a_network(data):
    vocab, train_ids, val_ids = data
    losses = claims_sweep.baseline_losses(train_ids, val_ids, len(vocab))
    assert losses["uniform"] > losses["unigram"] > losses["bigram"]
    assert losses["uniform"] == pytest.approx(9.3679, abs=1e-4)  # ln 11,706
