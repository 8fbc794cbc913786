"""The exercise self-checks accept right answers, reject plausible wrong ones, and never leak.

Every wrong answer here is a mistake a learner is likely to make; each must return False with
a message that names the mistake, and no output may contain an expected figure.
"""

import copy

import pytest
import torch.nn as nn

import gpt
from exercises.checks import RATES_4_3, check_4_1, check_4_2, check_4_3

# The chapter's reference figures (COURSE_SPEC.md), written out rather than recomputed.
FF, ATT = 4_722_432, 2_360_064
REFERENCE = {  # total, tied, MB (float32, bytes / 1024**2)
    "gpt2-small": (163_009_536, 124_412_160, 621.83),
    "gpt2-medium": (406_212_608, 354_749_440, 1549.58),
    "gpt2-large": (838_220_800, 773_891_840, 3197.56),
    "gpt2-xl": (1_637_792_000, 1_557_380_800, 6247.68),
}
HEAD = 50257 * 768  # GPT-2 small's output head

TINY_4_3 = {  # a tiny GPT with the three rates instead of drop_rate; builds in milliseconds
    "vocab_size": 64,
    "context_length": 16,
    "emb_dim": 32,
    "n_heads": 4,
    "n_layers": 2,
    "qkv_bias": False,
    **RATES_4_3,
}


def assert_no_answer(text):
    """No expected figure appears in `text`, in any of the usual spellings."""
    numbers = [FF, ATT] + [n for total, tied, _ in REFERENCE.values() for n in (total, tied)]
    spellings = [f(n) for n in numbers for f in (str, "{:,}".format, "{:_}".format)]
    spellings += [f"{mb:.2f}" for _, _, mb in REFERENCE.values()]
    spellings += [f"{mb:.1f}" for _, _, mb in REFERENCE.values()]
    leaked = [s for s in spellings if s in text]
    assert not leaked, f"feedback reveals {leaked}"


def run_check(capsys, check, *args):
    verdict = check(*args)
    out = capsys.readouterr().out
    assert_no_answer(out)
    return verdict, out


# ---- 4.1 ----


def test_4_1_accepts_the_reference_counts(capsys):
    verdict, out = run_check(capsys, check_4_1, FF, ATT)
    assert verdict is True and out.startswith("Correct")


def test_4_1_untouched_starter_is_not_attempted(capsys):
    verdict, out = run_check(capsys, check_4_1, None, None)
    assert verdict is False and "Not attempted" in out


@pytest.mark.parametrize(
    "ff, att, clue",
    [
        (FF - 4 * 768 - 768, ATT, "bias terms are missing"),  # feed-forward without biases
        (FF, ATT - 768, "bias terms are missing"),  # out_proj's bias forgotten
        (FF, ATT + 3 * 768, "qkv_bias is False"),  # biases invented for query/key/value
        (FF, ATT + 1024 * 1024, "causal mask"),  # state_dict counted: the mask buffer
        (ATT, FF, "swapped"),
        (12 * FF, ATT, "all 12 blocks"),
        (FF, None, "not filled in"),  # half done is not done
        (FF, 2_360_064.5, "whole number"),
    ],
)
def test_4_1_rejects_plausible_mistakes(capsys, ff, att, clue):
    verdict, out = run_check(capsys, check_4_1, ff, att)
    assert verdict is False and clue in out


# ---- 4.2 ----


def reference_results():
    return {
        name: {"total_params": total, "tied_params": tied, "size_mb": mb}
        for name, (total, tied, mb) in REFERENCE.items()
    }


def test_4_2_accepts_the_reference_figures(capsys):
    verdict, out = run_check(capsys, check_4_2, reference_results())
    assert verdict is True and out.startswith("Correct")


def test_4_2_accepts_unrounded_sizes(capsys):
    results = reference_results()
    for entry in results.values():
        entry["size_mb"] = entry["total_params"] * 4 / 1024**2
    assert run_check(capsys, check_4_2, results)[0] is True


@pytest.mark.parametrize(
    "results",
    [None, {}, {name: dict.fromkeys(("total_params", "tied_params", "size_mb")) for name in REFERENCE}],
)
def test_4_2_untouched_starter_is_not_attempted(capsys, results):
    verdict, out = run_check(capsys, check_4_2, results)
    assert verdict is False and "Not attempted" in out


def with_mistake(mistake):
    """Reference results with `mistake(total, tied)` -> {field: wrong value} applied to every size."""
    results = reference_results()
    for entry in results.values():
        entry.update(mistake(entry["total_params"], entry["tied_params"]))
    return results


@pytest.mark.parametrize(
    "mistake, clue",
    [
        (lambda total, tied: {"tied_params": total}, "output head is still counted"),
        (lambda total, tied: {"total_params": tied, "tied_params": total}, "swapped"),
        (lambda total, tied: {"tied_params": tied - (total - tied)}, "count it once"),
        (lambda total, tied: {"size_mb": round(total * 4 / 1000**2, 2)}, "1000**2"),
        (lambda total, tied: {"size_mb": total * 4}, "that is bytes"),
        (lambda total, tied: {"size_mb": round(total * 2 / 1024**2, 2)}, "float16"),
        (lambda total, tied: {"size_mb": round(tied * 4 / 1024**2, 2)}, "from tied_params"),
        (lambda total, tied: {"size_mb": f"{total * 4 / 1024**2:.2f} MB"}, "should be a number"),
    ],
)
def test_4_2_rejects_plausible_mistakes(capsys, mistake, clue):
    verdict, out = run_check(capsys, check_4_2, with_mistake(mistake))
    assert verdict is False and clue in out


def test_4_2_rejects_sizes_built_from_the_unchanged_config(capsys):
    results = reference_results()
    for name in ("gpt2-medium", "gpt2-large", "gpt2-xl"):
        results[name] = copy.deepcopy(results["gpt2-small"])
    verdict, out = run_check(capsys, check_4_2, results)
    assert verdict is False and out.count("same as GPT-2 small") == 3


def test_4_2_rejects_a_missing_size(capsys):
    results = reference_results()
    del results["gpt2-xl"]
    verdict, out = run_check(capsys, check_4_2, results)
    assert verdict is False and "no entry for gpt2-xl" in out


def test_4_2_points_only_at_the_wrong_size(capsys):
    results = reference_results()
    results["gpt2-large"]["tied_params"] += HEAD
    verdict, out = run_check(capsys, check_4_2, results)
    assert verdict is False and "gpt2-large" in out
    assert not any(name in out for name in ("gpt2-small", "gpt2-medium", "gpt2-xl"))


# ---- 4.3 ----


def model_with_rates(emb, attn, shortcut, blocks=None):
    """A tiny gpt.GPTModel whose dropout modules get these rates (in `blocks`, default all)."""
    base = {k: v for k, v in TINY_4_3.items() if k not in RATES_4_3}
    model = gpt.GPTModel({**base, "drop_rate": emb})
    model.cfg = dict(TINY_4_3)  # as a learner's subclass would record its config
    for i, block in enumerate(model.trf_blocks):
        if blocks is None or i in blocks:
            block.att.dropout = nn.Dropout(attn)
            block.drop_shortcut = nn.Dropout(shortcut)
    return model


RIGHT = tuple(RATES_4_3.values())  # embedding, attention weights, shortcut


def assert_rates_not_shown(out):
    assert not any(str(rate) in out for rate in RATES_4_3.values())


def test_4_3_accepts_separate_rates(capsys):
    verdict, out = run_check(capsys, check_4_3, model_with_rates(*RIGHT))
    assert verdict is True and out.startswith("Correct")


def test_4_3_accepts_a_model_on_the_meta_device(capsys):
    verdict, out = run_check(capsys, check_4_3, model_with_rates(*RIGHT).to("meta"))
    assert verdict is True and "meta device" in out


def test_4_3_leaves_the_training_mode_as_it_was():
    model = model_with_rates(*RIGHT).train()
    assert check_4_3(model) is True and model.training


def test_4_3_untouched_starter_is_not_attempted(capsys):
    verdict, out = run_check(capsys, check_4_3, None)
    assert verdict is False and "Not attempted" in out


@pytest.mark.parametrize(
    "model, clue",
    [
        (lambda: model_with_rates(0.1, 0.1, 0.1), "one shared rate"),
        (lambda: model_with_rates(0.1, 0.3, 0.3), "uses the rate meant for the shortcut"),
        (lambda: model_with_rates(0.1, 0.3, 0.2), "attention-weights dropout (att.dropout in each "
                                                  "block) uses the rate meant for the shortcut"),
        (lambda: model_with_rates(0.3, 0.2, 0.1), "embedding dropout (model.drop_emb) uses the rate"),
        (lambda: model_with_rates(*RIGHT, blocks={0}), "every block"),
        (lambda: gpt.GPTModel({k: v for k, v in TINY_4_3.items() if k not in RATES_4_3}
                              | {"drop_rate": 0.1}), "single drop_rate"),
    ],
)
def test_4_3_rejects_wrong_wiring(capsys, model, clue):
    verdict, out = run_check(capsys, check_4_3, model())
    assert verdict is False and clue in out
    assert_rates_not_shown(out)


class ForgetsShortcutDropout(gpt.TransformerBlock):
    def forward(self, x):  # drop_shortcut exists with the right rate but is never applied
        x = x + self.att(self.norm1(x))
        return x + self.ff(self.norm2(x))


def test_4_3_rejects_a_dropout_that_forward_never_uses(capsys):
    model = model_with_rates(*RIGHT)
    model.trf_blocks[1].__class__ = ForgetsShortcutDropout
    verdict, out = run_check(capsys, check_4_3, model)
    assert verdict is False and "trf_blocks.1.drop_shortcut is never applied" in out


@pytest.mark.parametrize(
    "model, clue",
    [
        (gpt.GPTModel, "not the class"),
        (TINY_4_3, "this is a config"),
        (nn.Linear(2, 2), "model.drop_emb is not an nn.Dropout"),
    ],
)
def test_4_3_explains_what_it_cannot_inspect(capsys, model, clue):
    verdict, out = run_check(capsys, check_4_3, model)
    assert verdict is False and clue in out
