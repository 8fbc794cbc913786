"""The exercise self-checks: right answers pass, and wrong or odd ones get the exact diagnosis.

The table holds values a learner might pass, mistakes and odd types alike. Each must get
exactly the expected feedback, printed by the notebook-facing check with nothing echoed, and
no feedback may contain an expected figure.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import gpt
from exercises.checks import (
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

ROOT = Path(__file__).resolve().parent.parent

# The chapter's reference figures (COURSE_SPEC.md), written out rather than recomputed.
FF, ATT = 4_722_432, 2_360_064
REFERENCE = {  # total, tied, MB (float32, bytes / 1024**2)
    "gpt2-small": (163_009_536, 124_412_160, 621.83),
    "gpt2-medium": (406_212_608, 354_749_440, 1549.58),
    "gpt2-large": (838_220_800, 773_891_840, 3197.56),
    "gpt2-xl": (1_637_792_000, 1_557_380_800, 6247.68),
}
D, V = 768, 50257  # GPT-2 small's emb_dim and vocabulary
QKV_BIASES = {"gpt2-small": 12 * 3 * 768, "gpt2-medium": 24 * 3 * 1024,
              "gpt2-large": 36 * 3 * 1280, "gpt2-xl": 48 * 3 * 1600}

TINY_4_3 = {  # a tiny GPT with the three rates instead of drop_rate; builds in milliseconds
    "vocab_size": 64,
    "context_length": 16,
    "emb_dim": 32,
    "n_heads": 4,
    "n_layers": 2,
    "qkv_bias": False,
    **RATES_4_3,
}
RIGHT = tuple(RATES_4_3.values())  # embedding, attention weights, shortcut


def assert_no_answer(text):
    """No expected figure appears in `text`, in any of the usual spellings."""
    numbers = [FF, ATT] + [n for total, tied, _ in REFERENCE.values() for n in (total, tied)]
    spellings = [f(n) for n in numbers for f in (str, "{:,}".format, "{:_}".format)]
    spellings += [f"{mb:.2f}" for _, _, mb in REFERENCE.values()]
    spellings += [f"{mb:.1f}" for _, _, mb in REFERENCE.values()]
    leaked = [s for s in spellings if s in text]
    assert not leaked, f"feedback reveals {leaked}"


def wrong(*problems):
    return "\n".join(["Not quite:"] + [f"  - {problem}" for problem in problems])


# ---- answers the table is built from ---------------------------------------------------------


def reference_results():
    return {
        name: {"total_params": total, "tied_params": tied, "size_mb": mb}
        for name, (total, tied, mb) in REFERENCE.items()
    }


def results_with(mistake):
    """Reference results, with `mistake(name, total, tied, mb)` -> {field: value} applied."""
    results = reference_results()
    for name, entry in results.items():
        entry.update(mistake(name, *REFERENCE[name]))
    return results


def built_results(config_for):
    """The results a learner gets by building each size from `config_for(name)`.

    Counted with gpt.parameter_breakdown, which equals the built model's count (test_gpt.py)
    and saves the first meta-device build's one-time import of torch._dynamo.
    """
    results = {}
    for name in REFERENCE:
        parts = gpt.parameter_breakdown(config_for(name))
        total = sum(parts.values())
        tied = total - parts["output head"]
        results[name] = {"total_params": total, "tied_params": tied, "size_mb": total * 4 / 1024**2}
    return results


class RaisesOnGet(dict):
    def get(self, key, default=None):
        raise RuntimeError("a mapping that fails on read")


def model_with_rates(emb, attn, shortcut, blocks=None):
    """A tiny model whose dropout modules get these rates (in `blocks`, default all).

    It stands for a learner's model, right or wrong: the check only inspects the modules.
    """
    base = {k: v for k, v in TINY_4_3.items() if k not in RATES_4_3}
    model = gpt.GPTModel({**base, "drop_rate": emb})
    model.cfg = dict(TINY_4_3)
    for i, block in enumerate(model.trf_blocks):
        if blocks is None or i in blocks:
            block.att.dropout = nn.Dropout(attn)
            block.drop_shortcut = nn.Dropout(shortcut)
    return model


def with_rate_p(value):
    model = model_with_rates(*RIGHT)
    model.trf_blocks[0].att.dropout.p = value  # as `module.p = ...` after construction would
    return model


class ForgetsShortcutDropout(gpt.TransformerBlock):
    def forward(self, x):  # drop_shortcut exists with the right rate but is never applied
        x = x + self.att(self.norm1(x))
        return x + self.ff(self.norm2(x))


def forgets_shortcut_dropout():
    model = model_with_rates(*RIGHT)
    model.trf_blocks[1].__class__ = ForgetsShortcutDropout
    return model


def without_drop_shortcut():
    model = model_with_rates(*RIGHT)
    del model.trf_blocks[1].drop_shortcut
    return model


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
        self.cfg = dict(cfg)


def single_drop_rate_model():
    base = {k: v for k, v in TINY_4_3.items() if k not in RATES_4_3}
    return gpt.GPTModel({**base, "drop_rate": 0.1})


# ---- the table ------------------------------------------------------------------------------

BIAS_MISSING_FF = ("looks like the bias terms are missing: both nn.Linear layers have a bias "
                   "vector, one entry per output unit")
NOT_A_COUNT_41 = ("not the right count (counts must match exactly); add up the weights and the "
                  "biases of every nn.Linear in the module")
FOLLOWS = "follows from total_params, which needs fixing first"
SAME_RATE = "every dropout has the same rate: one shared rate reaches all three sites"
KEEP_NAMES = " (keep gpt.py's module names so the check can find each site)"
ATT_SITE = "attention-weights dropout (att.dropout in each block)"
SHORTCUT_SITE = "shortcut dropout (drop_shortcut in each block)"
EMB_SITE = "embedding dropout (model.drop_emb)"

CASES_4_1 = [
    ("untouched starter", (None, None),
     "Not attempted yet: set ff_params and att_params to your counts, then run this cell again."),
    ("feed-forward without biases", (8 * D * D, ATT), wrong(f"ff_params: {BIAS_MISSING_FF}")),
    ("only the first linear layer", (4 * D * D + 4 * D, ATT),
     wrong("ff_params: only the first nn.Linear is counted; the feed-forward has two")),
    ("out_proj's bias forgotten", (FF, ATT - D),
     wrong("att_params: looks like the bias terms are missing: out_proj has a bias even though "
           "the query, key and value projections do not")),
    ("query/key/value biases invented", (FF, ATT + 3 * D),
     wrong("att_params: query, key and value have no bias here (qkv_bias is False); only "
           "out_proj has one")),
    ("out_proj left out", (FF, 3 * D * D),
     wrong("att_params: out_proj is missing: after W_query, W_key and W_value a fourth "
           "nn.Linear mixes the heads")),
    ("the causal mask counted", (FF, ATT + 1024 * 1024),
     wrong("att_params: the causal mask is included: it is a buffer, not a trainable parameter "
           "(count parameters(), not the state_dict)")),
    ("swapped", (ATT, FF), wrong("the two counts are swapped: which module is the larger one?")),
    ("feed-forward of all 12 blocks", (12 * FF, ATT),
     wrong("ff_params: that is all 12 blocks together; count the module of a single block")),
    ("attention x12: heads or layers", (FF, 12 * ATT),
     wrong("att_params: this value fits 2 mistakes. (1) that is all 12 blocks together; count "
           "the module of a single block. (2) the module is counted once per head; its 12 heads "
           "share the same four matrices, each head using a slice of them.")),
    ("a full query/key/value per head", (FF, 12 * 3 * D * D + D * D + D),
     wrong("att_params: each head got its own full-size query, key and value matrices; the heads "
           "share W_query, W_key and W_value, each using a slice of head_dim = 64 columns")),
    ("one head's slice only", (FF, 3 * D * 64 + D * D + D),
     wrong("att_params: only one head's slice of W_query, W_key and W_value is counted; each of "
           "them is a full emb_dim x emb_dim matrix that all heads share")),
    ("the whole block", (FF + ATT + 4 * D, ATT),
     wrong("ff_params: that is the whole transformer block; count only this one module")),
    ("off by one", (FF + 1, ATT), wrong(f"ff_params: {NOT_A_COUNT_41}")),
    ("half done", (FF, None), wrong("att_params is not filled in yet")),
    ("not a whole number", (FF, ATT + 0.5),
     wrong("att_params should be a whole number (an int), got a float that is not a whole number")),
    ("a string", (FF, str(ATT)), wrong("att_params should be a whole number (an int), got str")),
    ("True", (True, ATT), wrong("ff_params should be a whole number (an int), got bool")),
    ("nested containers", ([FF], {"att": ATT}),
     wrong("ff_params should be a whole number (an int), got list",
           "att_params should be a whole number (an int), got dict")),
    ("a tensor of two counts", (torch.tensor([FF, ATT]), ATT),
     wrong("ff_params should be a whole number (an int), got a tensor of shape [2]")),
    ("a meta tensor", (FF, torch.tensor(ATT, device="meta")),
     wrong("att_params should be a whole number (an int), got a tensor on the meta device, which "
           "has a shape but no value (compute it from Python numbers: numel() returns an int)")),
]

CASES_4_2 = [
    ("untouched starter", lambda: {name: dict.fromkeys(("total_params", "tied_params", "size_mb"))
                                   for name in REFERENCE},
     "Not attempted yet: fill in results for the four sizes, then run this cell again."),
    ("None", lambda: None,
     "Not attempted yet: fill in results for the four sizes, then run this cell again."),
    ("a list of results", lambda: list(reference_results().values()),
     wrong("results should be a dict keyed by model name, got list")),
    ("a size missing", lambda: {k: v for k, v in reference_results().items() if k != "gpt2-xl"},
     wrong("results has no entry for gpt2-xl (the keys are the names gpt2-small, gpt2-medium, "
           "gpt2-large, gpt2-xl)")),
    ("entries as lists", lambda: {name: list(v) for name, v in REFERENCE.items()},
     wrong("all four sizes: should be a dict with the keys total_params, tied_params, size_mb, "
           "got list")),
    ("a misspelled field", lambda: results_with(lambda name, total, tied, mb: {"total": total}),
     wrong("all four sizes: has unknown key(s) total; the keys are total_params, tied_params, "
           "size_mb")),
    ("half filled", lambda: results_with(
        lambda name, total, tied, mb: {} if name == "gpt2-small" else {"tied_params": None}),
     wrong("gpt2-medium, gpt2-large, gpt2-xl: tied_params is not filled in yet")),
    ("head still in the tied count", lambda: results_with(
        lambda name, total, tied, mb: {"tied_params": total}),
     wrong("all four sizes: tied_params: the output head is still counted; with weight tying it "
           "reuses the token embedding's matrix, so leave its parameters out")),
    ("total and tied swapped", lambda: results_with(
        lambda name, total, tied, mb: {"total_params": tied, "tied_params": total}),
     wrong("all four sizes: total_params and tied_params are swapped")),
    ("both vocabulary matrices subtracted", lambda: results_with(
        lambda name, total, tied, mb: {"tied_params": tied - (total - tied)}),
     wrong("all four sizes: tied_params: both vocabulary-sized matrices are subtracted; tying "
           "shares one matrix between tok_emb and out_head, so count it once")),
    ("query/key/value biases counted", lambda: results_with(
        lambda name, total, tied, mb: {"tied_params": tied + QKV_BIASES[name]}),
     wrong("all four sizes: tied_params: includes query, key and value biases; this exercise "
           "keeps qkv_bias False, as in GPT_CONFIG_124M")),
    ("only one size wrong", lambda: results_with(
        lambda name, total, tied, mb: {"tied_params": total} if name == "gpt2-large" else {}),
     wrong("gpt2-large: tied_params: the output head is still counted; with weight tying it "
           "reuses the token embedding's matrix, so leave its parameters out")),
    ("MB as bytes / 1000**2", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": round(total * 4 / 1000**2, 2)}),
     wrong("all four sizes: size_mb: looks like MB = bytes / 1000**2; this course uses "
           "bytes / 1024**2")),
    ("bytes", lambda: results_with(lambda name, total, tied, mb: {"size_mb": total * 4}),
     wrong("all four sizes: size_mb: that is bytes; divide by 1024**2 to get MB")),
    ("float16", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": round(total * 2 / 1024**2, 2)}),
     wrong("all four sizes: size_mb: 2 bytes per parameter is float16; these parameters are "
           "float32")),
    ("size from the tied count", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": round(tied * 4 / 1024**2, 2)}),
     wrong("all four sizes: size_mb: computed from tied_params; the model as built stores all of "
           "its parameters, the output head included")),
    ("size rounded to one decimal", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": round(total * 4 / 1024**2, 1)}),
     wrong("all four sizes: size_mb: rounded to one decimal; the check needs two decimals (it "
           "accepts anything within 0.01 MB), e.g. round(size_mb, 2)")),
    ("size rounded to a whole number", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": round(total * 4 / 1024**2)}),
     wrong("all four sizes: size_mb: rounded to a whole number; the check needs two decimals (it "
           "accepts anything within 0.01 MB), e.g. round(size_mb, 2)")),
    ("size as text", lambda: results_with(lambda name, total, tied, mb: {"size_mb": f"{mb} MB"}),
     wrong("all four sizes: size_mb should be a number, got str")),
    ("size as a meta tensor", lambda: results_with(
        lambda name, total, tied, mb: {"size_mb": torch.tensor(mb, device="meta")}),
     wrong("all four sizes: size_mb should be a number, got a tensor on the meta device, which "
           "has a shape but no value (compute it from Python numbers: numel() returns an int)")),
    ("the unchanged config for every size", lambda: built_results(lambda name: gpt.GPT_CONFIG_124M),
     wrong("gpt2-medium, gpt2-large, gpt2-xl: total_params: same as GPT-2 small: this size's "
           "emb_dim, n_layers and n_heads did not reach the config",
           f"gpt2-medium, gpt2-large, gpt2-xl: tied_params: {FOLLOWS} (the output head is "
           "subtracted correctly)",
           f"gpt2-medium, gpt2-large, gpt2-xl: size_mb: {FOLLOWS}")),
    ("only n_layers updated", lambda: built_results(
        lambda name: {**gpt.GPT_CONFIG_124M, "n_layers": gpt.GPT2_SIZES[name]["n_layers"]}),
     wrong("gpt2-medium, gpt2-large, gpt2-xl: total_params: only n_layers reached the config; "
           "emb_dim kept GPT-2 small's value",
           f"gpt2-medium, gpt2-large, gpt2-xl: tied_params: {FOLLOWS} (the output head is "
           "subtracted correctly)",
           f"gpt2-medium, gpt2-large, gpt2-xl: size_mb: {FOLLOWS}")),
    ("n_layers not updated", lambda: built_results(
        lambda name: {**gpt.gpt2_config(name), "n_layers": 12}),
     wrong("gpt2-medium, gpt2-large, gpt2-xl: total_params: n_layers kept GPT-2 small's value",
           f"gpt2-medium, gpt2-large, gpt2-xl: tied_params: {FOLLOWS} (the output head is "
           "subtracted correctly)",
           f"gpt2-medium, gpt2-large, gpt2-xl: size_mb: {FOLLOWS}")),
    ("the last digit off", lambda: results_with(
        lambda name, total, tied, mb: {"total_params": total + 1} if name == "gpt2-xl" else {}),
     wrong("gpt2-xl: total_params: not the right count (counts must match exactly); sum numel() "
           "over all of the model's parameters")),
    ("a mapping that fails on read", lambda: {name: RaisesOnGet(v) for name, v in
                                              reference_results().items()},
     "The check could not read this answer (RuntimeError: a mapping that fails on read); "
     "compare its form with the starter code and run this cell again."),
]

CASES_4_3 = [
    ("untouched starter", lambda: None,
     "Not attempted yet: build `model` from CONFIG_4_3, then run this cell again."),
    ("constructors still empty", lambda: EmptySkeleton(TINY_4_3),
     "Not attempted yet: complete the two constructors, assigning each part to self (the model "
     "has no submodules so far), then run this cell again."),
    ("the class, not a model", lambda: gpt.GPTModel,
     wrong("pass the built model (an instance, e.g. YourModel(cfg)), not the class")),
    ("the config", lambda: TINY_4_3,
     wrong("this is a config; build the model from it and pass the model")),
    ("a string", lambda: "model", wrong("expected a torch nn.Module, got str")),
    ("another module", lambda: nn.Linear(2, 2),
     wrong(f"model.drop_emb is not an nn.Dropout{KEEP_NAMES}")),
    ("the single drop_rate", single_drop_rate_model,
     wrong("the model is still built from the single drop_rate, so all three sites share one "
           "rate")),
    ("one rate everywhere", lambda: model_with_rates(0.1, 0.1, 0.1), wrong(SAME_RATE)),
    ("attention gets the shortcut rate", lambda: model_with_rates(0.1, 0.3, 0.3),
     wrong(f"the {ATT_SITE} uses the rate meant for the {SHORTCUT_SITE}, drop_rate_shortcut")),
    ("attention and shortcut swapped", lambda: model_with_rates(0.1, 0.3, 0.2),
     wrong(f"the {ATT_SITE} uses the rate meant for the {SHORTCUT_SITE}, drop_rate_shortcut",
           f"the {SHORTCUT_SITE} uses the rate meant for the {ATT_SITE}, drop_rate_attn")),
    ("embedding and shortcut swapped", lambda: model_with_rates(0.3, 0.2, 0.1),
     wrong(f"the {EMB_SITE} uses the rate meant for the {SHORTCUT_SITE}, drop_rate_shortcut",
           f"the {SHORTCUT_SITE} uses the rate meant for the {EMB_SITE}, drop_rate_emb")),
    ("a rate from nowhere", lambda: model_with_rates(0.1, 0.5, 0.3),
     wrong(f"the {ATT_SITE} has a rate that is none of the three given (rates are compared to "
           "within 0.000001)")),
    ("only the first block changed", lambda: model_with_rates(0.1, 0.2, 0.3, blocks={0}),
     wrong(f"the {ATT_SITE} differs between blocks: are all the blocks in trf_blocks built by "
           "the same class?",
           f"the {SHORTCUT_SITE} differs between blocks: are all the blocks in trf_blocks built "
           "by the same class?")),
    ("a rate stored as text", lambda: with_rate_p("0.2"),
     wrong("model.trf_blocks.0.att.dropout has a rate p that is not a number (got str)")),
    ("a rate of None", lambda: with_rate_p(None),
     wrong("model.trf_blocks.0.att.dropout has a rate p that is not a number (got NoneType)")),
    ("a block without drop_shortcut", without_drop_shortcut,
     wrong(f"model.trf_blocks.1.drop_shortcut is not an nn.Dropout{KEEP_NAMES}")),
    ("a dropout forward never applies", forgets_shortcut_dropout,
     wrong("model.trf_blocks.1.drop_shortcut is never applied in forward")),
    ("a forward that fails", UnfinishedForward,
     wrong("running the model on two tokens failed (NotImplementedError: forward is not written "
           "yet)")),
    ("on the meta device", lambda: model_with_rates(*RIGHT).to("meta"),
     "Cannot verify on the meta device: the three rates sit at the right sites, but a model "
     "without data cannot run, so the check cannot see whether forward applies them. Build the "
     "model on the CPU (it is small) and run this cell again."),
]

CASES = (
    [pytest.param(review_4_1, check_4_1, lambda a=args: a, text, id=f"4.1 {name}")
     for name, args, text in CASES_4_1]
    + [pytest.param(review_4_2, check_4_2, lambda f=make: (f(),), text, id=f"4.2 {name}")
       for name, make, text in CASES_4_2]
    + [pytest.param(review_4_3, check_4_3, lambda f=make: (f(),), text, id=f"4.3 {name}")
       for name, make, text in CASES_4_3]
)


@pytest.mark.parametrize("review, check, make_args, expected", CASES)
def test_feedback_on_wrong_or_odd_answers(capsys, review, check, make_args, expected):
    args = make_args()
    feedback = review(*args)
    assert feedback.text == expected
    assert feedback.passed is False
    assert_no_answer(feedback.text)
    assert check(*args) is None  # a notebook cell shows the feedback and echoes nothing
    assert capsys.readouterr().out == expected + "\n"


# ---- right answers, in any numeric type ------------------------------------------------------


@pytest.mark.parametrize(
    "ff, att",
    [(FF, ATT), (float(FF), np.float32(ATT)), (np.int64(FF), torch.tensor(ATT)),
     (torch.tensor([FF]), np.array(ATT))],
)
def test_4_1_accepts_the_counts(ff, att):
    feedback = review_4_1(ff, att)
    assert feedback.passed and feedback.text.startswith("Correct: both counts match exactly.")


@pytest.mark.parametrize(
    "variant",
    [
        lambda name, total, tied, mb: {},
        lambda name, total, tied, mb: {"size_mb": total * 4 / 1024**2},  # unrounded
        lambda name, total, tied, mb: {"size_mb": int(total * 4 / 1024**2 * 100) / 100},  # cut
        lambda name, total, tied, mb: {"total_params": torch.tensor(total),
                                       "tied_params": np.int64(tied),
                                       "size_mb": torch.tensor(mb, dtype=torch.float64)},
    ],
)
def test_4_2_accepts_the_figures(variant):
    feedback = review_4_2(results_with(variant))
    assert feedback.passed and feedback.text.startswith("Correct: all four sizes match (counts "
                                                        "exactly, size_mb within 0.01 MB).")


def test_4_3_accepts_separate_rates_and_keeps_the_training_mode():
    model = model_with_rates(*RIGHT).train()
    feedback = review_4_3(model)
    assert feedback.passed and feedback.text.startswith("Correct: each of the three dropout sites")
    assert model.training


# ---- a config changed in place ---------------------------------------------------------------

WARNING = ("Warning: gpt.GPT_CONFIG_124M was changed in place (emb_dim, n_layers), so everything "
           "that reads it later in this session sees the change. Build new configs as copies, "
           "{**gpt.GPT_CONFIG_124M, ...}, and restart the kernel to get the original back.")


def test_a_config_changed_in_place_is_reported_and_does_not_move_the_answers(monkeypatch):
    # The classic 4.2 slip: cfg = gpt.GPT_CONFIG_124M, then cfg["emb_dim"] = ... per size.
    monkeypatch.setitem(gpt.GPT_CONFIG_124M, "emb_dim", 1600)
    monkeypatch.setitem(gpt.GPT_CONFIG_124M, "n_layers", 48)
    feedback = review_4_2(reference_results())
    assert feedback.passed and feedback.text.endswith("\n" + WARNING)
    feedback = review_4_1(FF, ATT)
    assert feedback.passed and feedback.text.endswith("\n" + WARNING)
    assert review_4_1(None, None).text.endswith(WARNING)


def test_no_warning_while_the_config_is_intact():
    assert "Warning" not in review_4_2(reference_results()).text


# ---- hints -----------------------------------------------------------------------------------


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
    assert third == f"No more hints: compare your work with solutions/solution_{exercise}.ipynb.\n"
    for text in texts:
        assert_no_answer(text)
        assert "sum(" not in text and "for p in" not in text  # no solution code


# ---- the notebooks ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((ROOT / "exercises").glob("*.ipynb"))
                         + sorted((ROOT / "solutions").glob("*.ipynb")), ids=lambda p: p.name)
def test_check_cells_show_only_the_feedback(path):
    cells = json.loads(path.read_text())["cells"]
    calls_check = re.compile(r"^check_4_\d\(", re.MULTILINE)
    check_cells = [c for c in cells if calls_check.search("".join(c["source"]))]
    assert check_cells
    for cell in check_cells:
        assert [o["output_type"] for o in cell["outputs"]] == ["stream"]
