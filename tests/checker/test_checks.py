"""The exercise self-checks: right answers pass, each known mistake gets its diagnosis code.

The tables below hold answers a learner might give, mistakes and odd types alike, each with the
diagnosis codes it must get; frozen_feedback.json (test_frozen_feedback.py) stores each case's full text. The
wording lives in checker/messages.py, and no feedback may contain an expected figure.
"""

import json
import re
import string
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import checker
import gpt
from checker.exercises import (
    RATES_4_3,
    check_4_1,
    check_4_2,
    check_4_3,
    hint_4_1,
    hint_4_2,
    hint_4_3,
    review_4_1,
    review_4_2,
    review_4_3,
)
from checker.feedback import MESSAGES

ROOT = Path(__file__).resolve().parents[2]

# The chapter's reference figures (the solution notebooks print them), written out rather than recomputed.
FF, ATT, D = 4_722_432, 2_360_064, 768
REFERENCE = {  # total, tied, MB (float32, bytes / 1024**2)
    "gpt2-small": (163_009_536, 124_412_160, 621.83),
    "gpt2-medium": (406_212_608, 354_749_440, 1549.58),
    "gpt2-large": (838_220_800, 773_891_840, 3197.56),
    "gpt2-xl": (1_637_792_000, 1_557_380_800, 6247.68),
}
SIZES = {"gpt2-medium": (1024, 24, 16), "gpt2-large": (1280, 36, 20), "gpt2-xl": (1600, 48, 25)}
QKV_BIASES = {"gpt2-medium": 24 * 3 * 1024, "gpt2-large": 36 * 3 * 1280, "gpt2-xl": 48 * 3 * 1600}


def assert_no_answer(text):
    """No expected figure or config value appears in `text`, in any of the usual spellings."""
    numbers = [FF, ATT] + [n for name in SIZES for n in REFERENCE[name][:2]]
    spellings = [f(n) for n in numbers for f in (str, "{:,}".format, "{:_}".format)]
    spellings += [f"{REFERENCE[name][2]:.{digits}f}" for name in SIZES for digits in (1, 2)]
    leaked = [s for s in spellings if s in text]
    unit_free = re.sub(r"10[02][04]\*\*\d", "", text)  # "bytes / 1024**2" is advice, not a value
    leaked += [n for n in re.findall(r"\d+", unit_free) if int(n) in sum(SIZES.values(), ())]
    assert not leaked, f"feedback reveals {leaked}"


# ---- answers the tables are built from --------------------------------------------------------


def configs(**changes):
    """The three right configs; changes={name: {key: value}} overrides some of their values."""
    return {name: {**gpt.GPT_CONFIG_124M, "emb_dim": d, "n_layers": n, "n_heads": h,
                   **changes.get(name.replace("gpt2-", ""), {})}
            for name, (d, n, h) in SIZES.items()}


def starter_configs():
    return {name: {**gpt.GPT_CONFIG_124M, "emb_dim": None, "n_layers": None, "n_heads": None}
            for name in SIZES}


def results_with(mistake=lambda **_: {}):
    """The right results, with `mistake(name=, total=, tied=, mb=)` -> {field: value} applied."""
    return {name: {"total_params": total, "tied_params": tied, "size_mb": mb,
                   **mistake(name=name, total=total, tied=tied, mb=mb)}
            for name, (total, tied, mb) in REFERENCE.items() if name in SIZES}


def results_after(mistake):
    """A 4.2 answer: the right configs, and the right results with `mistake` applied."""
    return lambda: (configs(), results_with(mistake))


def built_results(config_for):
    """The results a learner gets by counting a model built from `config_for(name)`.

    Counted with gpt.parameter_breakdown, which equals the built model's count (test_gpt.py).
    """
    results = {}
    for name in SIZES:
        parts = gpt.parameter_breakdown(config_for(name))
        total = sum(parts.values())
        results[name] = {"total_params": total, "tied_params": total - parts["output head"],
                         "size_mb": total * 4 / 1024**2}
    return results


class RaisesOnGet(dict):
    def get(self, key, default=None):
        raise RuntimeError("a mapping that fails on read")


TINY_4_3 = {"vocab_size": 64, "context_length": 16, "emb_dim": 32, "n_heads": 4, "n_layers": 2,
            "qkv_bias": False, **RATES_4_3}
RIGHT = tuple(RATES_4_3.values())  # embedding, attention weights, shortcut


def model_with_rates(emb, attn, shortcut, blocks=None):
    """A tiny model whose dropout modules get these rates (in `blocks`, default all).

    It stands for a learner's model, right or wrong: the check only inspects the modules.
    """
    base = {k: v for k, v in TINY_4_3.items() if k not in RATES_4_3}
    model = gpt.GPTModel({**base, "drop_rate": emb})
    for i, block in enumerate(model.trf_blocks):
        if blocks is None or i in blocks:
            block.att.dropout = nn.Dropout(attn)
            block.drop_shortcut = nn.Dropout(shortcut)
    return model


def right_model_then(change):
    """Makes a right model, then applies `change(model)`, as a learner's later edit would."""
    def make():
        model = model_with_rates(*RIGHT)
        change(model)
        return model
    return make


class ForgetsShortcutDropout(gpt.TransformerBlock):
    def forward(self, x):  # drop_shortcut exists with the right rate but is never applied
        x = x + self.att(self.norm1(x))
        return x + self.ff(self.norm2(x))


class UnfinishedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop_emb = nn.Dropout(RATES_4_3["drop_rate_emb"])
        self.trf_blocks = model_with_rates(*RIGHT).trf_blocks

    def forward(self, in_idx):
        raise NotImplementedError("forward is not written yet")


class EmptySkeleton(nn.Module):  # the exercise's starter before the constructors are completed
    def __init__(self, cfg):
        super().__init__()


# ---- the tables: (name, arguments, the diagnosis codes they must get) --------------------------

CASES_4_1 = [
    ("untouched starter", (None, None), ("not_attempted_4_1",)),
    ("feed-forward without biases", (8 * D * D, ATT), ("biases",)),
    ("only the first linear layer", (4 * D * D + 4 * D, ATT), ("missing_layer",)),
    ("out_proj's bias forgotten", (FF, ATT - D), ("biases",)),
    ("query/key/value biases invented", (FF, ATT + 3 * D), ("biases",)),
    ("out_proj left out", (FF, 3 * D * D), ("missing_layer",)),
    ("the causal mask counted", (FF, ATT + 1024 * 1024), ("mask_counted",)),
    ("swapped", (ATT, FF), ("swapped",)),
    ("the attention count twice", (ATT, ATT), ("missing_layer", "other_module")),
    ("the feed-forward count twice", (FF, FF), ("other_module",)),
    ("feed-forward of all 12 blocks", (12 * FF, ATT), ("all_blocks",)),
    ("attention x12: heads or layers", (FF, 12 * ATT), ("all_blocks", "heads_share")),
    ("a full query/key/value per head", (FF, 12 * 3 * D * D + D * D + D), ("heads_share",)),
    ("one head's slice only", (FF, 3 * D * 64 + D * D + D), ("heads_share",)),
    ("the whole block", (FF + ATT + 4 * D, ATT), ("whole_block",)),
    ("off by one", (FF + 1, ATT), ("wrong_count_4_1",)),
    ("half done", (FF, None), ("not_filled",)),
    ("not a whole number", (FF, ATT + 0.5), ("not_whole",)),
    ("a string", (FF, str(ATT)), ("not_a_number",)),
    ("True", (True, ATT), ("not_a_number",)),
    ("nested containers", ([FF], {"att": ATT}), ("not_a_number",)),
    ("a tensor of two counts", (torch.tensor([FF, ATT]), ATT), ("not_scalar",)),
    ("a meta tensor", (FF, torch.tensor(ATT, device="meta")), ("meta_tensor",)),
]

CASES_4_2 = [
    ("untouched starter", lambda: (starter_configs(), {name: dict.fromkeys(
        ("total_params", "tied_params", "size_mb")) for name in SIZES}), ("not_attempted_4_2",)),
    ("None", lambda: (None, None), ("not_attempted_4_2",)),
    # the configs
    ("configs as a list", lambda: (list(configs().values()), results_with()), ("not_a_dict",)),
    ("a size missing", lambda: ({k: v for k, v in configs().items() if k != "gpt2-xl"},
                                results_with()), ("missing_names",)),
    ("a size misnamed", lambda: ({("medium" if k == "gpt2-medium" else k): v
                                  for k, v in configs().items()}, results_with()),
     ("unknown_names", "missing_names")),
    ("a config left as None", lambda: ({**configs(), "gpt2-large": None}, results_with()),
     ("not_filled",)),
    ("a config half filled", lambda: (configs(xl={"n_heads": None}), results_with()),
     ("not_filled",)),
    ("a misspelled key", lambda: (configs(medium={"n_head": 16}), results_with()),
     ("config_keys",)),
    ("another value changed", lambda: (configs(large={"qkv_bias": True}), results_with()),
     ("base_changed",)),
    ("a wrong n_layers", lambda: (configs(medium={"n_layers": 36}), results_with()),
     ("size_value_off",)),
    ("heads and layers mixed up", lambda: (configs(xl={"n_layers": 25, "n_heads": 48}),
                                           results_with()), ("size_value_off",)),
    ("a width as text", lambda: (configs(large={"emb_dim": "1280"}), results_with()),
     ("not_a_number",)),
    # the results, once the configs are right
    ("results as a list", lambda: (configs(), list(results_with().values())), ("not_a_dict",)),
    ("a result missing", lambda: (configs(), {k: v for k, v in results_with().items()
                                              if k != "gpt2-xl"}), ("missing_names",)),
    ("entries as lists", lambda: (configs(), {name: list(REFERENCE[name]) for name in SIZES}),
     ("not_a_dict",)),
    ("a misspelled field", results_after(lambda **_: {"total": 1}), ("unknown_keys",)),
    ("half filled", results_after(lambda **_: {"tied_params": None}), ("not_filled",)),
    ("head left out of the total", results_after(lambda tied, **_: {"total_params": tied}),
     ("head_left_out",)),
    ("head still in the tied count", results_after(lambda total, **_: {"tied_params": total}),
     ("head_counted",)),
    ("total and tied swapped", results_after(
        lambda total, tied, **_: {"total_params": tied, "tied_params": total}), ("swapped",)),
    ("both vocabulary matrices subtracted", results_after(
        lambda total, tied, **_: {"tied_params": tied - (total - tied)}), ("both_vocab",)),
    ("the position embedding subtracted", results_after(
        lambda name, tied, **_: {"tied_params": tied - 1024 * SIZES[name][0]}),
     ("pos_subtracted",)),
    ("query/key/value biases in both counts", results_after(
        lambda name, total, tied, **_: {"total_params": total + QKV_BIASES[name],
                                        "tied_params": tied + QKV_BIASES[name],
                                        "size_mb": (total + QKV_BIASES[name]) * 4 / 1024**2}),
     ("qkv_biases", "follows_total")),
    ("query/key/value biases in the tied count", results_after(
        lambda name, tied, **_: {"tied_params": tied + QKV_BIASES[name]}), ("qkv_biases",)),
    ("sizes shifted by one", lambda: (configs(), {
        "gpt2-medium": results_with()["gpt2-large"], "gpt2-large": results_with()["gpt2-xl"],
        "gpt2-xl": results_with()["gpt2-medium"]}), ("other_size", "follows_total")),
    ("a tied count of another size", results_after(
        lambda name, **_: {"tied_params": REFERENCE["gpt2-xl"][1]} if name == "gpt2-medium"
        else {}), ("other_size",)),
    ("GPT-2 small's tied count", results_after(
        lambda name, **_: {"tied_params": REFERENCE["gpt2-small"][1]} if name == "gpt2-large"
        else {}), ("other_size",)),
    ("the last digit off", results_after(
        lambda name, total, **_: {"total_params": total + 1} if name == "gpt2-xl" else {}),
     ("wrong_total",)),
    ("tied off by one", results_after(lambda tied, **_: {"tied_params": tied - 1}),
     ("wrong_tied",)),
    ("the unchanged config for every size", lambda: (configs(), built_results(
        lambda name: gpt.GPT_CONFIG_124M)), ("not_from_config", "follows_total")),
    ("only n_layers reached the model", lambda: (configs(), built_results(
        lambda name: {**gpt.GPT_CONFIG_124M, "n_layers": SIZES[name][1]})),
     ("not_from_config", "follows_total")),
    ("n_layers did not reach the model", lambda: (configs(), built_results(
        lambda name: {**gpt.gpt2_config(name), "n_layers": 12})),
     ("not_from_config", "follows_total")),
    ("MB as bytes / 1000**2", results_after(
        lambda total, **_: {"size_mb": round(total * 4 / 1000**2, 2)}), ("mb_unit",)),
    ("bytes", results_after(lambda total, **_: {"size_mb": total * 4}), ("mb_unit",)),
    ("kilobytes", results_after(lambda total, **_: {"size_mb": total * 4 / 1024}),
     ("mb_unit",)),
    ("gigabytes", results_after(lambda total, **_: {"size_mb": total * 4 / 1024**3}),
     ("mb_unit",)),
    ("float16", results_after(lambda total, **_: {"size_mb": round(total * 2 / 1024**2, 2)}),
     ("mb_bytes_per_param",)),
    ("float64", results_after(lambda total, **_: {"size_mb": total * 8 / 1024**2}),
     ("mb_bytes_per_param",)),
    ("one byte per parameter", results_after(lambda total, **_: {"size_mb": total / 1024**2}),
     ("mb_bytes_per_param",)),
    ("size from the tied count", results_after(
        lambda tied, **_: {"size_mb": round(tied * 4 / 1024**2, 2)}), ("mb_from_tied",)),
    ("size rounded to one decimal", results_after(lambda mb, **_: {"size_mb": round(mb, 1)}),
     ("mb_rounding",)),
    ("size rounded to a whole number", results_after(lambda mb, **_: {"size_mb": round(mb)}),
     ("mb_rounding",)),
    ("size off", results_after(lambda mb, **_: {"size_mb": mb + 1}), ("wrong_size",)),
    ("size as text", results_after(lambda mb, **_: {"size_mb": f"{mb} MB"}),
     ("not_a_number",)),
    ("size as a meta tensor", results_after(
        lambda mb, **_: {"size_mb": torch.tensor(mb, device="meta")}), ("meta_tensor",)),
    ("a fractional count", results_after(lambda total, **_: {"total_params": total + 0.5}),
     ("not_whole",)),
    ("a mapping that fails on read", lambda: (configs(), {name: RaisesOnGet(v) for name, v in
                                                          results_with().items()}),
     ("could_not_read",)),
]

CASES_4_3 = [
    ("untouched starter", lambda: EmptySkeleton(TINY_4_3), ("not_attempted_4_3",)),
    ("None", lambda: None, ("not_attempted_4_3",)),
    ("the class, not a model", lambda: gpt.GPTModel, ("pass_instance",)),
    ("the config", lambda: TINY_4_3, ("is_config",)),
    ("a string", lambda: "model", ("not_module",)),
    ("another module", lambda: nn.Linear(2, 2), ("site_missing",)),
    ("no blocks", right_model_then(lambda model: delattr(model, "trf_blocks")), ("no_blocks",)),
    ("one rate everywhere", lambda: model_with_rates(0.1, 0.1, 0.1), ("one_rate",)),
    ("attention gets the shortcut rate", lambda: model_with_rates(0.1, 0.3, 0.3),
     ("rate_of_other_site",)),
    ("attention and shortcut swapped", lambda: model_with_rates(0.1, 0.3, 0.2),
     ("rate_of_other_site",)),
    ("a rate from nowhere", lambda: model_with_rates(0.1, 0.5, 0.3), ("rate_unknown",)),
    ("only the first block changed", lambda: model_with_rates(*RIGHT, blocks={0}),
     ("differs_between_blocks",)),
    ("a rate stored as text", right_model_then(
        lambda model: setattr(model.trf_blocks[0].att.dropout, "p", "0.2")), ("not_a_number",)),
    ("a block without drop_shortcut", right_model_then(
        lambda model: delattr(model.trf_blocks[1], "drop_shortcut")), ("site_missing",)),
    ("a dropout forward never applies", right_model_then(
        lambda model: setattr(model.trf_blocks[1], "__class__", ForgetsShortcutDropout)),
     ("never_applied",)),
    ("a forward that fails", UnfinishedForward, ("forward_failed",)),
    ("on the meta device", lambda: model_with_rates(*RIGHT).to("meta"), ("unverified_meta",)),
]

CASES = (
    [pytest.param(review_4_1, check_4_1, lambda a=args: a, codes, id=f"4.1 {name}")
     for name, args, codes in CASES_4_1]
    + [pytest.param(review_4_2, check_4_2, make, codes, id=f"4.2 {name}")
       for name, make, codes in CASES_4_2]
    + [pytest.param(review_4_3, check_4_3, lambda f=make: (f(),), codes, id=f"4.3 {name}")
       for name, make, codes in CASES_4_3]
)


@pytest.mark.parametrize("review, check, make_args, codes", CASES)
def test_each_mistake_gets_its_diagnosis(capsys, review, check, make_args, codes):
    args = make_args()
    feedback = review(*args)
    assert feedback.codes == codes, feedback.text
    assert feedback.passed is False
    assert_no_answer(feedback.text)
    assert check(*args) is None  # a notebook cell shows the feedback and echoes nothing
    assert capsys.readouterr().out == feedback.text + "\n"


def test_every_diagnosis_is_exercised():
    """Each code of the message table is the expected outcome of some case (or test below)."""
    framing = {"not_quite", "several", "numbered", "hint", "hint_more", "no_more_hints", "hint_repr",
               "sep_field", "sep_names"}
    tested = {code for cases in (CASES_4_1, CASES_4_2, CASES_4_3) for *_, codes in cases
              for code in codes}
    tested |= {"correct_4_1", "correct_4_2", "correct_4_3", "config_changed"}  # tests below
    codes = list(MESSAGES["en"])  # the component checker's come last: tests/checker/test_components.py
    diagnoses = {code for code in codes[:codes.index("not_attempted_component")]
                 if code not in framing and not code.startswith("hint_4")}
    assert diagnoses == tested


# ---- right answers, in any numeric type ---------------------------------------------------------


@pytest.mark.parametrize(
    "ff, att",
    [(FF, ATT), (float(FF), np.float32(ATT)), (np.int64(FF), torch.tensor(ATT)),
     (torch.tensor([FF]), np.array(ATT))],
)
def test_4_1_accepts_the_counts(ff, att):
    assert review_4_1(ff, att) == (True, MESSAGES["en"]["correct_4_1"], ("correct_4_1",))


@pytest.mark.parametrize(
    "make",
    [
        lambda: (configs(), results_with()),
        lambda: ({name: gpt.gpt2_config(name) for name in SIZES}, built_results(gpt.gpt2_config)),
        lambda: (configs(medium={"emb_dim": 1024.0, "n_layers": np.int64(24),
                                 "n_heads": torch.tensor(16)}),
                 results_with(lambda total, tied, mb, **_: {
                     "total_params": torch.tensor(total), "tied_params": np.int64(tied),
                     "size_mb": torch.tensor(mb, dtype=torch.float64)})),
        results_after(  # truncated, not rounded
            lambda total, **_: {"size_mb": int(total * 4 / 1024**2 * 100) / 100}),
        lambda: ({**configs(), "gpt2-small": dict(gpt.GPT_CONFIG_124M)},  # small as well
                 {**results_with(), "gpt2-small": dict(zip(
                     ("total_params", "tied_params", "size_mb"), REFERENCE["gpt2-small"]))}),
    ],
)
def test_4_2_accepts_the_configs_and_figures(make):
    feedback = review_4_2(*make())
    assert feedback.passed and feedback.codes == ("correct_4_2",)


def test_4_3_accepts_separate_rates_and_leaves_the_model_and_rng_as_they_were():
    model = model_with_rates(*RIGHT).train()
    rng = torch.get_rng_state()
    assert review_4_3(model).codes == ("correct_4_3",)
    assert model.training
    assert torch.equal(torch.get_rng_state(), rng)  # the check drew no random numbers


def test_4_2_wants_the_configs():
    with pytest.raises(TypeError):
        review_4_2(results_with())  # a call without the configs is a clear error, not feedback


def test_4_2_checks_the_results_only_once_the_configs_are_right():
    assert review_4_2(configs(medium={"n_layers": 36}), None).codes == ("size_value_off",)


# ---- a config changed in place -------------------------------------------------------------------

WARNING = ("Warning: gpt.GPT_CONFIG_124M was changed in place (emb_dim, n_heads, n_layers), so "
           "all that reads it later in this session sees the change. Build new configs as "
           "copies, {**gpt.GPT_CONFIG_124M, ...}, and restart the kernel to get the original "
           "back.")


def test_a_config_changed_in_place_is_reported_and_does_not_move_the_answers(monkeypatch):
    # The classic 4.2 slip: cfg = gpt.GPT_CONFIG_124M, then cfg["emb_dim"] = ... per size.
    same_dict = {name: gpt.GPT_CONFIG_124M for name in SIZES}
    for key, value in zip(("emb_dim", "n_layers", "n_heads"), SIZES["gpt2-xl"]):
        monkeypatch.setitem(gpt.GPT_CONFIG_124M, key, value)
    feedback = review_4_2(same_dict, results_with())
    assert feedback.codes == ("size_value_off", "config_changed")
    assert feedback.text.startswith("Not quite:\n  - gpt2-medium, gpt2-large: emb_dim:")
    assert feedback.text.endswith("\n" + WARNING)
    assert review_4_1(FF, ATT).codes == ("correct_4_1", "config_changed")
    assert review_4_1(None, None).codes == ("not_attempted_4_1", "config_changed")


# ---- hints ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("hint, exercise", [(hint_4_1, "4_1"), (hint_4_2, "4_2"),
                                            (hint_4_3, "4_3")])
def test_hints_get_more_specific_and_never_give_the_answer(capsys, monkeypatch, hint, exercise):
    monkeypatch.setattr(hint, "calls", 0)
    texts = []
    for _ in range(3):
        assert hint() is None
        texts.append(capsys.readouterr().out)
    first, second, third = texts
    assert first.startswith("Hint 1 of 2:") and "more specific hint" in first
    assert second.startswith("Hint 2 of 2:") and "more specific" not in second
    assert first != second
    assert third == f"No more hints: compare your work with solutions/solution_{exercise}.ipynb.\n"
    assert repr(hint) == f"hint_{exercise}: call it, hint_{exercise}(), to see a hint"
    for text in texts:
        assert_no_answer(text)
        assert "sum(" not in text and "for p in" not in text  # no solution code


# ---- languages -----------------------------------------------------------------------------------


def placeholders(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    checker.set_language("en")


def test_every_language_has_the_same_codes_and_placeholders():
    english = {code: placeholders(text) for code, text in MESSAGES["en"].items()}
    for language, table in MESSAGES.items():
        assert {code: placeholders(text) for code, text in table.items()} == english, language


def test_every_word_of_feedback_comes_from_the_message_table(monkeypatch):
    """In a made-up language whose texts are only their codes, no English is left over."""
    table = {code: "[" + " ".join([code] + [f"{{{p}}}" for p in sorted(placeholders(text))]) + "]"
             for code, text in MESSAGES["en"].items()}
    monkeypatch.setitem(MESSAGES, "xx", table)
    checker.set_language("xx")
    labels = re.compile(r"(gpt2-\w+|[\w.]*[_.][\w.]*|configs?|results)$")  # names, not words
    for review, _, make_args, codes in (case.values for case in CASES):
        feedback = review(*make_args())
        assert feedback.codes == codes
        # the table's texts, params inside (a separator's too: it keeps the names apart)
        leftover, nested = feedback.text, True
        while nested:  # a list joined with the separator sits inside the text that names it
            leftover, nested = re.subn(r"\[[^\[\]]*\]", " ", leftover)
        assert all(labels.match(word) for word in re.findall(r"[A-Za-z][\w.\-]*", leftover)), (
            feedback.text)


@pytest.mark.parametrize("language, error", [("zz", ValueError), (["en"], TypeError)])
def test_an_unknown_language_is_a_clear_error(language, error):
    with pytest.raises(error):
        checker.set_language(language)


def test_chinese_feedback_for_a_right_answer():
    checker.set_language("zh")
    assert review_4_1(FF, ATT).text.startswith("正确")


# ---- the notebooks -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((ROOT / "exercises").glob("*.ipynb"))
                         + sorted((ROOT / "solutions").glob("*.ipynb")), ids=lambda p: p.name)
def test_check_cells_show_only_the_feedback(path):
    cells = json.loads(path.read_text())["cells"]
    calls_check = re.compile(r"^check_4_\d\(", re.MULTILINE)
    check_cells = [c for c in cells if calls_check.search("".join(c["source"]))]
    assert check_cells
    for cell in check_cells:
        assert [o["output_type"] for o in cell["outputs"]] == ["stream"]
