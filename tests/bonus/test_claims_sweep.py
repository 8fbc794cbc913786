"""bonus/claims_tested/claims_sweep.py and evidence.py: a stored run is reproduced by rerunning
it, each results file holds exactly the runs its command asks for, no choice reads the test
part, and every comparison has the runs its words need."""

import re
import shlex

import pytest

from bonus.claims_tested import claims_sweep, evidence
from trained import train_shakespeare


@pytest.fixture(scope="module")
def data():
    return claims_sweep.load_data()


@pytest.mark.slow  # 50 s of training; .ci/run runs it
def test_a_stored_run_is_reproduced():
    """A one-epoch run of the select stage at its lowest rate, rerun as the sweep ran it. Float
    sums differ between machines in their last digits, and over 1,057 steps the differences
    grow; on the machine that made the file the rerun gave every stored digit again."""
    stored = claims_sweep.load_results([claims_sweep.SELECT])[0]["relu", 2, 1e-3]
    rerun = claims_sweep.run_as_swept("relu", 2, 1e-3, score_test=False)
    for key in ("train_loss", "val_loss"):
        assert rerun[key] == pytest.approx(stored[key], abs=5e-3)
    assert rerun["curve"]["val_loss"] == pytest.approx(stored["curve"]["val_loss"], abs=5e-3)


@pytest.mark.parametrize("name", claims_sweep.FILES)
def test_each_file_holds_what_its_command_asks_for(name):
    runs, commands = claims_sweep.load_results([name])
    assert f"    {commands[name]}\n" in claims_sweep.__doc__  # the docstring gives each command
    words = shlex.split(commands[name])
    assert words[:2] == ["python", "bonus/claims_tested/claims_sweep.py"]
    args = claims_sweep.parse_args(words[2:])
    assert args.out.name == name
    assert list(runs) == claims_sweep.jobs_of(args, runs)  # the runs, in the order of the file


def test_no_choice_reads_the_test_part():
    """The select stage never scores test, and the choice of a rate goes by validation alone:
    runs whose test losses would pick another rate change nothing."""
    select, _ = claims_sweep.load_results([claims_sweep.SELECT])
    assert not any("test_loss" in run for run in select.values())
    runs = {("a", 1, lr): {"val_loss": v, "test_loss": t}
            for lr, v, t in ((1e-3, 5.0, 4.0), (3e-3, 4.5, 6.0))}
    assert claims_sweep.best_rates(runs) == {"a": 3e-3}
    assert evidence.evidence().chosen == claims_sweep.best_rates(select)


def test_each_arms_rate_lies_inside_the_rates_it_tried():
    """A best rate at an end of the grid was tried one step further; the sweep stops at 3e-4
    and 3e-2."""
    select, _ = claims_sweep.load_results([claims_sweep.SELECT])
    for arm, best in claims_sweep.best_rates(select).items():
        tried = sorted({lr for a, _, lr in select if a == arm})
        assert tried[0] < best < tried[-1] or best in (3e-4, 3e-2), (arm, tried, best)


def test_the_seed_sets_are_apart():
    sets = [set(claims_sweep.SELECTION_SEEDS), set(evidence.DISCOVERY), set(evidence.CONFIRMATION)]
    assert all(not a & b for i, a in enumerate(sets) for b in sets[i + 1:])


def test_every_comparison_has_its_paired_runs():
    """Each seed set, each setting: both arms of every comparison, on every seed."""
    e = evidence.evidence()
    for claim, (variant, base) in claims_sweep.COMPARISONS.items():
        for v_rate, b_rate in evidence.rates(claim).values():
            for seed in evidence.DISCOVERY + evidence.CONFIRMATION:
                assert (variant, seed, v_rate) in e.stored and (base, seed, b_rate) in e.stored


def test_variants_start_from_the_baselines_weights(data):
    """Pairing: under one seed a block variant draws its baseline's initial weights."""
    cfgs = claims_sweep.configs(len(data[0]))
    for variant, base in (("relu", "chapter"), ("post_ln", "chapter"), ("no_shortcut", "deep_chapter")):
        a = claims_sweep.build(variant, cfgs, seed=3).state_dict()
        b = claims_sweep.build(base, cfgs, seed=3).state_dict()
        assert all((a[k] == b[k]).all() for k in b)


def test_the_stored_yardsticks(data):
    """Recomputed: fitted on training, their discounts chosen on validation, scored on test."""
    vocab, parts = data
    losses, discounts = train_shakespeare.yardsticks(parts, len(vocab))
    assert losses == pytest.approx(evidence.evidence().yardsticks)
    assert losses["uniform"] > losses["unigram"] > losses["bigram"] > losses["trigram"]
    assert losses["uniform"] == pytest.approx(9.3679, abs=1e-4)  # ln 11,706


def test_the_readme_table_has_the_words_the_rule_gives():
    """bonus/claims_tested/README.md's table, row by row, against evidence.word."""
    readme = (claims_sweep.RESULTS.parent / "README.md").read_text()
    table = readme.split("| claim | shared word | own word |\n|---|---|---|\n")[1].split("\n\n")[0]
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \|$", table, re.M)
    assert [name for name, *_ in rows] == list(claims_sweep.COMPARISONS)
    for name, shared, own in rows:
        assert shared == evidence.word(name, "shared"), name
        assert own.startswith(evidence.word(name, "own")), name
