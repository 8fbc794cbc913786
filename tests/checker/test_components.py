"""The component checker (checker/components.py): what the frozen feedback does not show.

frozen_feedback.json (test_frozen_feedback.py) pins what the checker says about each learner-style case of
learner.py. The tests here state the rules across cases (each planted mistake gets its own code,
each rewrite passes) and what no feedback shows: models and the random state left as they were,
printing, a behaviour two mistakes share, a failure of the check itself, the checker's tables.
"""

import functools
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import checker
import gpt
from checker import (
    check_component,
    compare_models,
    components,
    diagnosing,
    planted,
    review_component,
    review_models,
)
from checker.feedback import MESSAGES
from checker.planted import COMPONENTS, DIAGNOSES, NOTES
from checker.running import Factories
from tests.checker import learner
from tests.checker.learner import PLANTED, SMALL, gelu, layer_norm, with_parts


def test_every_diagnosis_is_planted_here():
    # ln_eps_value: the cases "eps 1e-6" and "eps 1e-12" of learner.CASES
    assert set(PLANTED) == DIAGNOSES - {"ln_eps_value"} | {"ff_no_expansion"}


@pytest.mark.parametrize("code", PLANTED)
def test_planted_mistake_is_diagnosed(code):
    yours, reference = PLANTED[code]
    feedback = review_component(yours, reference)
    assert feedback.passed == (code in NOTES), feedback.text  # the exact GELU: a note, no bug
    assert code in feedback.codes, feedback.text
    assert [c for c in feedback.codes if c in DIAGNOSES] in ([code], []), feedback.text


@pytest.mark.parametrize("yours, reference", [
    pytest.param(yours, reference, id=name) for name, yours, reference in learner.CASES
    if name.startswith(("rewrite ", "reference "))])
def test_equivalent_rewrites_and_the_chapter_s_own_code_pass(yours, reference):
    spec = COMPONENTS[(reference or yours).__name__]
    if spec.build is None:
        success = "correct_function"
    else:  # the message names dropout only where the chapter's component has some
        success = "correct_component" if spec.dropout else "correct_component_no_dropout"
    feedback = review_component(yours, reference)
    assert feedback.passed and feedback.codes == (success,), feedback.text


def test_compare_models_leaves_both_models_and_the_random_state_as_they_were():
    torch.manual_seed(0)
    reference = gpt.GPTModel(SMALL)
    for yours in (with_parts("GPTModel", GELU=gelu(nn.GELU()))(SMALL),  # passes: every step runs
                  learner.TypedGPTModel(SMALL, norm=layer_norm(learner.ln_unbiased))):  # located
        before = {k: v.clone() for k, v in yours.state_dict().items()}
        rng = torch.get_rng_state()
        review_models(yours, reference)
        assert torch.equal(torch.get_rng_state(), rng)
        torch.testing.assert_close(yours.state_dict(), before, rtol=0, atol=0)
    assert reference.training  # built in training mode, and left so


def test_models_on_the_meta_device_and_classes_get_a_sentence():
    with torch.device("meta"):
        meta = gpt.GPTModel(SMALL)
    assert review_models(meta, gpt.GPTModel(SMALL)).codes == ("on_meta",)
    assert review_models(gpt.GPTModel, gpt.GPTModel(SMALL)).codes == ("models_need_instances",)
    assert review_models(gpt.GPTModel(SMALL), [1]).codes == ("component_not_module",)


def test_check_component_prints_in_the_chosen_language(capsys):
    check_component(layer_norm(learner.ln_unbiased))
    compare_models(gpt.GPTModel(SMALL), gpt.GPTModel(SMALL))
    english = capsys.readouterr().out
    try:
        checker.set_language("zh")
        check_component(layer_norm(learner.ln_unbiased))
    finally:
        checker.set_language("en")
    chinese = capsys.readouterr().out
    assert english.startswith("Not quite:") and "Same function" in english
    assert chinese.startswith("还不对") and "unbiased=False" in chinese


def test_behaviour_that_several_mistakes_produce_lists_them(monkeypatch):
    mistakes = dict(COMPONENTS["GELU"].mistakes, gelu_twin=COMPONENTS["GELU"].mistakes["gelu_relu"])
    monkeypatch.setitem(COMPONENTS, "GELU", COMPONENTS["GELU"]._replace(mistakes=mistakes))
    monkeypatch.setitem(MESSAGES["en"], "gelu_twin", "{where}: a twin")
    for module in (components, diagnosing):
        monkeypatch.setattr(module, "DIAGNOSES", DIAGNOSES | {"gelu_twin"})
    feedback = review_component(gelu(torch.relu))
    assert feedback.codes == ("gelu_relu", "gelu_twin")
    assert feedback.text.startswith("Not quite:\n  - GELU behaves like 2 mistakes at once")


def test_an_unexpected_failure_in_the_check_is_one_sentence(monkeypatch):
    def broken(*args):
        raise RuntimeError("internal")

    monkeypatch.setattr(components, "align", broken)
    assert review_component(gpt.LayerNorm).codes == ("could_not_check",)
    assert review_models(gpt.GPTModel(SMALL), gpt.GPTModel(SMALL)).codes == ("could_not_check",)


def test_every_message_of_the_checker_is_used_by_it():
    """Each code of the table appears in the checker's source, or is a diagnosis or a sites_ text."""
    source = "".join(p.read_text() for p in Path(checker.__file__).parent.glob("*.py"))
    used = {c for c in MESSAGES["en"] if f'"{c}"' in source or c in DIAGNOSES
            or c.startswith(("sites_", "correct_", "hint_4_", "not_attempted_4_"))}
    assert set(MESSAGES["en"]) - used == set()


@pytest.mark.parametrize("kind", [k for k in COMPONENTS if k != "GELU"])
def test_the_mistakes_default_behaviour_is_the_chapter_s(kind):
    spec = COMPONENTS[kind]
    base = {m.func for m in spec.mistakes.values() if isinstance(m, functools.partial)}
    torch.manual_seed(0)
    module = gpt.GPTModel(planted.CONFIG).eval() if spec.build is None else spec.build(
        spec.reference, planted.CONFIG).eval()
    for args in spec.inputs(planted.CONFIG):
        expected = spec.reference(module, *args) if spec.build is None else module(*args)
        assert all(torch.allclose(f(module, *args), expected) for f in base)


def test_the_gelu_formula_is_the_chapter_s():
    x = torch.linspace(-5, 5, 101)
    assert torch.allclose(planted.gelu_tanh(x), gpt.GELU()(x))


@pytest.mark.parametrize("yours", [learner.AttentionTorchDropout,
                                   learner.AttentionHeadLoopImportedDropout])
def test_a_rate_written_in_is_found_through_torch_dropout_or_an_imported_dropout(yours):
    class MultiHeadAttention(yours):  # each passes as it is: its "rewrite" case
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.dropout = nn.Dropout(0.1)  # the rate passed in is ignored

    assert review_component(MultiHeadAttention).codes == ("dropout_rate",)


def test_learner_code_that_writes_into_its_config_changes_no_later_check():
    """The checker hands each build a copy of its config: a check run again, and every check after
    it, gets the feedback it gets in a fresh session."""
    first = review_component(learner.BlockWithoutDropout)
    assert not first.passed
    assert review_component(learner.BlockWithoutDropout) == first
    assert review_component(gpt.MultiHeadAttention).passed
    assert review_component(learner.BlockStoresHeadDim).passed
    assert review_component(gpt.GPTModel).passed


def test_a_factory_given_device_none_counts_as_made_on_the_cpu():
    with Factories() as made:
        torch.ones(3, device=None)  # the CPU, whatever the input's device
        torch.zeros(3, device="cpu")  # a device given
        torch.tensor(2.0)  # 0 dimensions: combines with a tensor on any device
    assert made.calls == ["torch.ones"]


def test_importing_the_checker_does_not_import_matplotlib():
    """A practice notebook's first check should not wait 1.75 s for a plotting library."""
    code = "import sys, checker; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
