"""bonus/claims_tested/claims_sweep.py: a stored run is reproduced by rerunning it, and the sweep's files
hold every run its comparisons need."""

import json
from pathlib import Path

import pytest

from bonus.claims_tested import claims_sweep

RESULTS = Path(claims_sweep.__file__).parent / "results"


@pytest.fixture(scope="module")
def data():
    return claims_sweep.load_data()


def test_a_stored_run_is_reproduced(data):
    """claims_check.json is a short run made by the script (its command is in the file):
    rerunning it gives the same losses within 1e-3 (float sums differ between threads and
    PyTorch versions in the last digits)."""
    check = json.loads((RESULTS / "claims_check.json").read_text())
    assert check["command"].startswith("python bonus/claims_tested/claims_sweep.py")
    (stored,) = check["runs"]
    rerun = claims_sweep.run_one(stored["arm"], stored["seed"], stored["lr"], stored["steps"], data)
    for key in ("train_loss", "val_loss"):
        assert rerun[key] == pytest.approx(stored[key], abs=1e-3)


def test_the_sweep_files_hold_every_paired_run():
    runs = [r for name in ("claims_sweep.json", "claims_long.json")
            for r in json.loads((RESULTS / name).read_text())["runs"]]
    have = {(r["arm"], r["seed"], r["lr"], r["steps"]) for r in runs}
    settings = [(1e-3, 120), (3e-3, 120), (1e-2, 120), (3e-3, 360)]
    for variant, base in claims_sweep.COMPARISONS.values():
        for lr, steps in settings:
            for seed in (1, 2, 3, 4, 5):
                assert {(variant, seed, lr, steps), (base, seed, lr, steps)} <= have


def test_variants_start_from_the_baselines_weights(data):
    """Pairing: under one seed a block variant draws its baseline's initial weights."""
    cfgs = claims_sweep.configs(len(data[0]))
    for variant, base in (("relu", "chapter"), ("post_ln", "chapter"), ("no_shortcut", "deep_chapter")):
        a = claims_sweep.build(variant, cfgs, seed=3).state_dict()
        b = claims_sweep.build(base, cfgs, seed=3).state_dict()
        assert all((a[k] == b[k]).all() for k in b)
