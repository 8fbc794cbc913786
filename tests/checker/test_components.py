"""The component checker (checker/components.py): planted mistakes, rewrites, odd inputs.

Every mistake below is written the way a learner would write it, as a class or function of its
own (most copy the chapter's code with one line changed); the checker must give it its
diagnosis code. The equivalent rewrites must pass, and nothing a learner passes may raise.
"""

import functools
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
from tests.checker import learner
from tests.checker.learner import PLANTED, SMALL, block, feed_forward, gelu, layer_norm, with_parts


def test_every_diagnosis_is_planted_here():
    assert set(PLANTED) == DIAGNOSES - {"ln_eps_value"} | {"ff_no_expansion"}  # eps: below


def test_a_layer_norm_with_another_eps_is_told_its_value():
    feedback = review_component(learner.LayerNormEps1e6)
    assert feedback.codes == ("ln_eps_value",) and "eps is 1e-06" in feedback.text


@pytest.mark.parametrize("code", PLANTED)
def test_planted_mistake_is_diagnosed(code):
    yours, reference = PLANTED[code]
    feedback = review_component(yours, reference)
    assert feedback.passed == (code in NOTES), feedback.text  # the exact GELU: a note, no bug
    assert code in feedback.codes, feedback.text
    assert [c for c in feedback.codes if c in DIAGNOSES] in ([code], []), feedback.text


def test_erf_gelu_passes_with_a_note():
    for yours in (gelu(nn.GELU()), with_parts("GPTModel", GELU=gelu(nn.GELU()))):
        feedback = review_component(yours)
        assert feedback.passed and feedback.codes == ("correct_component", "gelu_erf")
        assert feedback.text.startswith("Correct") and 'approximate="tanh"' in feedback.text


@pytest.mark.parametrize("kind, part, code, where", [
    ("GPTModel", "LayerNorm", "ln_eps_outside", "trf_blocks.0.norm1 (LayerNorm)"),
    ("GPTModel", "GELU", "gelu_no_half", "trf_blocks.0.ff.layers.1 (GELU)"),
    ("GPTModel", "MultiHeadAttention", "no_mask", "trf_blocks.0.att (MultiHeadAttention)"),
    ("GPTModel", "MultiHeadAttention", "mask_not_cut", "trf_blocks.0.att (MultiHeadAttention)"),
    ("GPTModel", "TransformerBlock", "post_ln", "trf_blocks.0 (TransformerBlock)"),
    ("TransformerBlock", "MultiHeadAttention", "merge_no_transpose", "att (MultiHeadAttention)"),
    ("TransformerBlock", "FeedForward", "ff_relu", "ff.layers.1 (GELU)"),  # said of the GELU
    ("TransformerBlock", "FeedForward", "ff_no_activation", "ff (FeedForward)"),
])
def test_mistake_inside_is_located_and_diagnosed(kind, part, code, where):
    feedback = review_component(with_parts(kind, **{part: PLANTED[code][0]}))
    code = "gelu_relu" if code == "ff_relu" else code
    assert code in feedback.codes and f"{where}: " in feedback.text, feedback.text
    assert feedback.codes[0] in ("first_difference", "raised", "part_alone"), feedback.codes


def test_unknown_difference_names_the_first_differing_output():
    feedback = review_component(with_parts("TransformerBlock", LayerNorm=learner.DoubledLayerNorm))
    assert feedback.codes == ("first_difference", "probe_norm"), feedback.text
    assert "is that of norm1 (largest difference" in feedback.text
    assert "has mean 0 and variance 3.9999; the chapter's has mean 0 and variance 1" in feedback.text


def test_compare_models_on_a_model_typed_from_the_book():
    torch.manual_seed(1)
    yours = learner.TypedGPTModel(SMALL, norm=layer_norm(learner.ln_unbiased))
    before = {k: v.clone() for k, v in yours.state_dict().items()}
    torch.manual_seed(2)
    feedback = review_models(yours, gpt.GPTModel(SMALL))
    assert feedback.codes == ("first_difference", "ln_unbiased"), feedback.text
    assert "trf_blocks.0.norm1 (LayerNorm): " in feedback.text
    assert all(torch.equal(v, before[k]) for k, v in yours.state_dict().items())  # untouched

    torch.manual_seed(3)
    assert review_models(learner.TypedGPTModel(SMALL), gpt.GPTModel(SMALL)).passed


def test_compare_models_with_nn_layer_norm_accepts_its_names():
    norm = lambda d: nn.LayerNorm(d, eps=1e-5)  # noqa: E731
    feedback = review_models(learner.TypedGPTModel(SMALL, norm=norm), gpt.GPTModel(SMALL))
    assert feedback.passed, feedback.text
    assert "trf_blocks.0.norm1.weight → trf_blocks.0.norm1.scale" in feedback.text


@pytest.mark.parametrize("yours, reference", [
    (learner.FunctionalLayerNorm, gpt.LayerNorm),
    (learner.TorchGELU, gpt.GELU),
    (feed_forward(nn.GELU(approximate="tanh")), None),
    (learner.EinsumAttention, gpt.MultiHeadAttention),
    (learner.SdpaAttention, gpt.MultiHeadAttention),
    (learner.FusedAttention, gpt.MultiHeadAttention),
    (with_parts("TransformerBlock", MultiHeadAttention=learner.FusedAttention), None),
    (with_parts("GPTModel", LayerNorm=learner.FunctionalLayerNorm, GELU=learner.TorchGELU), None),
    (learner.generate_without_softmax, gpt.generate_text_simple),
])
def test_equivalent_rewrite_passes(yours, reference):
    feedback = review_component(yours, reference)
    assert feedback.passed and feedback.codes == ("correct_component",), feedback.text


def test_fused_projection_is_read_as_the_three_book_names():
    text = review_component(learner.FusedAttention, gpt.MultiHeadAttention).text
    assert "qkv.weight → W_query/W_key/W_value.weight" in text


@pytest.mark.parametrize("reference", [gpt.LayerNorm, gpt.GELU, gpt.FeedForward,
                                       gpt.MultiHeadAttention, gpt.TransformerBlock, gpt.GPTModel,
                                       gpt.generate_text_simple])
def test_the_reference_itself_passes(reference):
    assert review_component(reference).passed


@pytest.mark.parametrize("yours, reference, code", [
    (learner.FeedForwardWithDropout, gpt.FeedForward, "dropout_extra"),
    (learner.AttentionWithoutDropout, gpt.MultiHeadAttention, "no_dropout"),
    (learner.BlockWithExtraDropout, gpt.TransformerBlock, "dropout_extra_at"),
    (learner.LayerNormScaledInTraining, gpt.LayerNorm, "training_differs"),
])
def test_training_mode_mistakes(yours, reference, code):
    feedback = review_component(yours, reference)
    assert feedback.codes == (code,), feedback.text


@pytest.mark.parametrize("yours, reference, code", [
    (None, None, "not_attempted_component"),
    (type("LayerNorm", (learner.Stub,), {}), None, "not_attempted_component"),
    (learner.stub_generate, gpt.generate_text_simple, "not_attempted_component"),
    (gpt.LayerNorm(4), None, "pass_class"),
    ("LayerNorm", None, "not_component"),
    (nn.Linear, None, "unknown_component"),
    (gpt.LayerNorm, nn.Linear, "unknown_reference"),
    (lambda x: x, gpt.LayerNorm, "expected_class"),
    (gpt.LayerNorm, gpt.generate_text_simple, "expected_function"),
    (gpt.FeedForward, gpt.LayerNorm, "wrong_signature"),  # FeedForward(cfg) given an int
    (learner.NotAModule, gpt.LayerNorm, "component_not_module"),
    (layer_norm(learner.raises_runtime_error), None, "raised"),
    (layer_norm(lambda self, x: None), None, "returns_none"),
    (layer_norm(lambda self, x: [x]), None, "not_tensor"),
    (learner.list_generate, gpt.generate_text_simple, "returns_list"),
])
def test_odd_input_gets_a_sentence(yours, reference, code):
    feedback = review_component(yours, reference)
    assert not feedback.passed and code in feedback.codes, feedback.text


def test_wrong_signature_shows_the_chapter_signature():
    feedback = review_component(learner.AttentionSwappedArguments)
    assert feedback.codes == ("wrong_signature",)
    assert COMPONENTS["MultiHeadAttention"].signature in feedback.text


def test_models_on_the_meta_device_and_classes_get_a_sentence():
    with torch.device("meta"):
        meta = gpt.GPTModel(SMALL)
    assert review_models(meta, gpt.GPTModel(SMALL)).codes == ("on_meta",)
    assert review_models(gpt.GPTModel, gpt.GPTModel(SMALL)).codes == ("models_need_instances",)
    assert review_models(gpt.GPTModel(SMALL), [1]).codes == ("component_not_module",)


def test_missing_and_extra_parameters_are_named():
    feedback = review_component(learner.LayerNormRenamedShift, gpt.LayerNorm)
    assert feedback.codes[:2] == ("missing_param", "extra_param"), feedback.text
    assert "no parameter shift" in feedback.text and "beta (shape (12,))" in feedback.text


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


@pytest.mark.parametrize("yours, kind, code", [
    (learner.AttentionDropsOutput, "MultiHeadAttention", "dropout_elsewhere"),
    (learner.BlockDropsInput, "TransformerBlock", "dropout_elsewhere"),
    (learner.GPTDropsLate, "GPTModel", "dropout_elsewhere"),
    (learner.AttentionOwnDropout, "MultiHeadAttention", "draws_without_dropout"),
    (learner.BlockOneDropout, "TransformerBlock", "no_dropout_at"),
])
def test_dropout_at_another_place(yours, kind, code):
    feedback = review_component(yours, getattr(gpt, kind))
    assert feedback.codes == (code,), feedback.text


def test_training_mode_that_differs_beyond_dropout():
    feedback = review_component(learner.AttentionScaledInTraining, gpt.MultiHeadAttention)
    assert feedback.codes == ("training_differs",), feedback.text


def test_a_skipped_submodule_is_named():
    feedback = review_component(block(learner.no_norm2))
    assert feedback.codes[0] == "never_called" and "norm2 is never called" in feedback.text


def test_a_wrong_shape_inside_is_named_with_both_shapes():
    feedback = review_component(with_parts("TransformerBlock",
                                           MultiHeadAttention=learner.AttentionLastTokenOnly))
    assert feedback.codes == ("first_difference_shape", "wrong_shape"), feedback.text
    assert "att: shape (2, 1, 12), the chapter's (2, 24, 12)" in feedback.text


def test_a_skipped_layer_inside_is_named_after_the_error_it_causes():
    feedback = review_component(with_parts("TransformerBlock", FeedForward=learner.HalfFeedForward))
    assert feedback.codes[:3] == ("raised", "first_difference_shape", "never_called"), feedback.text
    assert "ff: shape (2, 24, 48), the chapter's (2, 24, 12)" in feedback.text
    assert "  - ff.layers.2 is never called: the forward pass skips it" in feedback.text


def test_a_skipped_block_is_named_as_a_whole():
    feedback = review_component(learner.GPTSkipsLastBlock, gpt.GPTModel)
    assert feedback.text.splitlines()[1].startswith(
        "  - trf_blocks.1 is never called: the forward pass skips it"), feedback.text


def test_a_part_given_another_input_points_at_its_caller():
    feedback = review_component(block(learner.ff_first))
    assert feedback.codes == ("input_from", "probe_position"), feedback.text
    assert "norm2 receives what the chapter gives to norm1: check the order of the calls in the " \
           "forward of TransformerBlock" in feedback.text


def test_generation_that_samples_gets_other_ids():
    feedback = review_component(learner.generate_samples)
    assert feedback.codes == ("probe_ids",), feedback.text
    assert "the new ids first differ at step 1 of row 0" in feedback.text


def test_generation_that_returns_nothing():
    assert review_component(learner.generate_returns_nothing).codes == ("returns_none_function",)


def test_unaligned_weights_stop_the_comparison():
    feedback = review_component(learner.LayerNormGammaBeta)
    assert feedback.codes == ("missing_param", "extra_param", "align_first"), feedback.text


def test_an_output_head_with_a_bias_is_told_bias_false():
    feedback = review_component(learner.GPTHeadWithBias)
    assert feedback.codes == ("extra_bias", "align_first"), feedback.text
    assert "out_head.bias: the chapter creates this layer with bias=False" in feedback.text


def test_a_parameter_of_another_shape_is_named():
    feedback = review_component(learner.RowLayerNorm, gpt.LayerNorm)
    assert feedback.codes[0] == "param_shape"
    assert "scale has shape (1, 12), the chapter's has (12,)" in feedback.text


def test_a_constructor_that_fails_otherwise():
    feedback = review_component(learner.LayerNormInitRaises)
    assert feedback.codes == ("build_failed", "your_line") and "ValueError: no" in feedback.text
    assert 'in __init__: raise ValueError("no")' in feedback.text


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


@pytest.mark.parametrize("yours, reference, code, words", [
    (learner.AttentionRightForEight, gpt.MultiHeadAttention, "initial_mask", "row 8, column 9"),
    (learner.LayerNormOnePass, gpt.LayerNorm, "probe_norm", "input 4 of 4"),
    (learner.LayerNormClampedMean, gpt.LayerNorm, "probe_norm", "variance"),
    (learner.LayerNormOverTheBatch, gpt.LayerNorm, "probe_norm", "input 1 of 4"),
    (learner.LayerNormSwappedInit, gpt.LayerNorm, "initial_value",
     "scale starts as all 0; the chapter's starts as all 1"),
    (learner.LayerNormData, gpt.LayerNorm, "no_gradient", "no gradient reaches scale"),
    (learner.LayerNormDetached, gpt.LayerNorm, "no_gradient", "no gradient reaches the input"),
    (learner.AttentionSwappedLinear, gpt.MultiHeadAttention, "param_shape",
     "W_query.weight has shape (12, 18), the chapter's has (18, 12)"),
    (learner.GPTWrappedPositions, gpt.GPTModel, "probe_position", "is 8 of 24"),
])
def test_what_the_first_round_let_through_fails(yours, reference, code, words):
    feedback = review_component(yours, reference)
    assert not feedback.passed and code in feedback.codes and words in feedback.text, feedback.text


def test_a_mask_right_for_eight_positions_shows_which_keys_a_query_sees():
    feedback = review_component(learner.AttentionUsesMaskForEight)
    assert feedback.codes == ("input_differs", "probe_keys"), feedback.text
    assert "out_proj computes what" in feedback.text and "query 8 draws on keys 0..23, the chapter's on keys 0..8" in feedback.text


def test_models_are_compared_well_past_eight_positions():
    torch.manual_seed(0)
    reference = gpt.GPTModel(SMALL)
    yours = learner.GPTWrappedPositions(SMALL)
    feedback = review_models(yours, reference)
    assert "probe_position" in feedback.codes and "is 8 of 32" in feedback.text, feedback.text


def test_dropout_split_into_calls_passes_and_dropout_on_another_tensor_fails():
    assert review_component(learner.AttentionHeadLoop, gpt.MultiHeadAttention).passed
    block = with_parts("TransformerBlock", MultiHeadAttention=learner.AttentionHeadLoop)
    assert review_component(block).passed
    feedback = review_component(learner.AttentionDropsScores, gpt.MultiHeadAttention)
    assert not feedback.passed and feedback.codes == ("dropout_elsewhere",), feedback.text


def test_their_own_error_comes_first_and_matches_no_mistake():
    feedback = review_component(learner.generate_forgets_keepdim)
    assert feedback.codes == ("raised", "your_line"), feedback.text
    assert "your line" in feedback.text and "idx = torch.cat((idx, idx_next), dim=1)" in feedback.text

    feedback = review_component(learner.AttentionForgetsContiguous)
    assert feedback.codes == ("raised", "your_line"), feedback.text
    assert "RuntimeError: view size is not compatible" in feedback.text
    assert "return context.transpose(1, 2).view(b, t, self.d_out)" in feedback.text


def test_a_class_where_a_module_belongs_is_its_own_error_not_a_signature():
    feedback = review_component(learner.FeedForwardWithGELUClass)
    assert feedback.codes == ("build_failed", "your_line"), feedback.text
    assert "gpt.GELU, nn.Linear(4 * d, d))" in feedback.text


def test_location_follows_what_ran():
    feedback = review_component(learner.GPTReadsPositionsPostLN)
    assert "pos_emb" not in feedback.text and "post_ln" in feedback.codes, feedback.text

    feedback = review_component(learner.GPTFinalNormFirst)
    assert feedback.codes[0] == "input_from", feedback.text
    assert "final_norm receives what the chapter gives to trf_blocks: check the order of the " \
           "calls in the forward of GPTModel" in feedback.text


def test_one_block_repeated_is_named_shared():
    feedback = review_component(learner.GPTRepeatedBlock)
    assert feedback.codes == ("shared_module",), feedback.text
    assert "trf_blocks.0, trf_blocks.1 are one and the same module object" in feedback.text


def test_two_mistakes_at_once_are_named_as_such():
    feedback = review_component(layer_norm(learner.ln_two_mistakes))
    assert feedback.codes == ("two_mistakes", "ln_unbiased", "ln_eps_outside"), feedback.text
    assert "LayerNorm makes two mistakes at once:\n  - (1) LayerNorm: it uses" in feedback.text


def test_a_missing_parameter_gets_no_generic_line():
    feedback = review_component(learner.LayerNormWithoutShift)
    assert feedback.codes == ("missing_param",), feedback.text


def test_chinese_lists_and_locations_use_chinese_punctuation():
    try:
        checker.set_language("zh")
        shared = review_component(learner.GPTRepeatedBlock).text
        inside = review_component(with_parts("GPTModel", LayerNorm=layer_norm(learner.ln_unbiased))).text
    finally:
        checker.set_language("en")
    assert "trf_blocks.0、trf_blocks.1 是同一个模块对象" in shared
    assert "trf_blocks.0.norm1（LayerNorm）：" in inside


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


# ---- round 3: wrong code fails, and every message names a cause it has or what was seen --------


@pytest.mark.parametrize("yours, codes, words", [
    (learner.AttentionBiasFalse, ("qkv_bias_ignored",), "it has no W_query.bias, W_key.bias, W_value.bias"),
    (learner.AttentionMaskAttribute, ("not_buffer",), "mask is a plain tensor attribute"),
    (learner.generate_overwrites_prompt, ("changes_idx",), "changes the caller's idx in place"),
    (learner.GPTModuleListStale, ("input_from", "probe_position"),
     "trf_blocks.1.norm1 receives what the chapter gives to trf_blocks"),
    (learner.AttentionMaskTooSmall, ("raised", "your_line", "right_elsewhere"),
     "on the check's other inputs (shape (2, 8, 12)) it computes what the chapter's computes"),
    (learner.generate_batch_of_one, ("raised", "your_line", "right_elsewhere"), "shape (1, 4)"),
    (learner.LayerNormSubInPlace, ("changes_input",), "LayerNorm: it changes its input in place"),
    (learner.GELUMulInPlace, ("changes_input",), "GELU: it changes its input in place"),
    (learner.BlockAddsInPlace, ("changes_input",), "TransformerBlock: it changes its input in place"),
    (learner.AttentionDropoutFixedRate, ("dropout_rate",), "drops with rate 0.1; the chapter's drops with 0.25"),
    (learner.generate_samples_unseeded, ("random_ids",), "it draws random numbers"),
    (learner.LayerNormPlainTensors, ("not_parameter",), "scale is a plain tensor, not an nn.Parameter"),
    (learner.LayerNormEps1e12, ("ln_eps_value",), "eps is 1e-12"),
    (learner.BlockNoNorm1Raises, ("raised", "your_line", "never_called", "input_from"),
     "norm1 is never called"),
    (learner.generate_no_crop, ("raised", "your_line", "no_crop"), "in generate_no_crop: logits = model(idx)"),
    (learner.AttentionScaledAfterSoftmax, ("input_differs", "probe_nan"), "its output is NaN from position 0"),
])
def test_round_3_wrong_code_gets_its_cause_or_what_was_seen(yours, codes, words):
    feedback = review_component(yours)
    assert not feedback.passed and feedback.codes == codes and words in feedback.text, feedback.text


def test_no_line_of_the_course_s_own_modules_is_called_the_learner_s():
    text = review_component(learner.generate_no_crop).text
    assert "check_num_tokens" not in text and "line 85" not in text


def test_a_forward_that_raised_is_not_told_it_skips_what_it_never_reached():
    text = review_component(learner.BlockNoNorm1Raises).text
    assert "norm2 is never called" not in text and "ff is never called" not in text


@pytest.mark.parametrize("yours", [learner.AttentionTorchDropout,
                                   learner.AttentionHeadLoopImportedDropout])
def test_dropout_through_torch_dropout_or_an_imported_dropout_is_compared(yours):
    assert review_component(yours).passed
    class MultiHeadAttention(yours):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.dropout = nn.Dropout(0.1)  # the rate passed in is ignored

    assert review_component(MultiHeadAttention).codes == ("dropout_rate",)


def test_compare_models_passes_the_exact_gelu_with_a_note_and_checks_training_mode():
    torch.manual_seed(0)
    reference = gpt.GPTModel(SMALL)
    exact = with_parts("GPTModel", GELU=gelu(nn.GELU()))(SMALL)
    rng = torch.get_rng_state()
    feedback = review_models(exact, reference)
    assert feedback.passed and feedback.codes == ("correct_component", "gelu_erf"), feedback.text
    assert 'approximate="tanh"' in feedback.text and torch.equal(torch.get_rng_state(), rng)
    assert review_models(learner.GPTDropsLate(SMALL), reference).codes == ("dropout_elsewhere",)
    assert reference.training  # built in training mode, and left so
