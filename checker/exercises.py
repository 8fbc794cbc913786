"""Self-checks for exercises 4.1-4.3, in the style of Kaggle Learn's `q1.check()`.

Each `_judge_4_N` describes its exercise as data: the right answer, and each mistake worth
naming as a diagnosis code with the wrong value it produces. Each exercise then has `review_4_N`
(the feedback, as `Feedback(passed, text, codes)`, made by `_review`), `check_4_N` (prints it)
and `hint_4_N` (a nudge, more specific when called again). An untouched starter gets "not
attempted yet"; feedback never shows an expected figure, and no answer makes a check raise. The
texts live in checker/messages.py (English; `checker.set_language` picks another). Expected
values come from gpt.py and a copy of GPT_CONFIG_124M taken at import, which a later change
cannot move.
"""

import functools
import math
import operator
from collections.abc import Mapping

import torch
import torch.nn as nn

import gpt
from checker.answers import Hint, read_number, read_numbers
from checker.feedback import Feedback, names, numbered, render, say, sentences

BASE_CONFIG = dict(gpt.GPT_CONFIG_124M)  # GPT-2 small, as gpt.py defines it
SIZES = {name: dict(size) for name, size in gpt.GPT2_SIZES.items()}
MB_TOLERANCE = 0.01  # size_mb passes within 0.01 MB: two decimals, rounded or not
RATE_TOLERANCE = 1e-6


def _say(code, **params):  # the exercises' tolerances are part of some of their texts
    return say(code, mb_tolerance=MB_TOLERANCE, rate_tolerance=f"{RATE_TOLERANCE:f}", **params)


# ---- the engine --------------------------------------------------------------------------------


def _remark(code, subject=None, field=None, **params):
    """A remark is (subject, field, [(code, params), ...]), e.g. a size, its size_mb, a code."""
    return subject, field, [(code, params)]


def _feedback_from(remarks, exercise):
    """Feedback with one line per distinct diagnosis, naming every subject it applies to."""
    lines, codes = {}, []
    for subject, field, diagnoses in remarks:
        texts = [_say(code, **params) for code, params in diagnoses]
        if len(texts) > 1:  # a value that several mistakes produce
            texts = numbered(_say("several", n=len(texts)), texts)
        lines.setdefault((field, sentences(texts)), []).append(subject)
        codes += [code for code, _ in diagnoses]
    colon = _say("sep_field")  # the language's punctuation
    text = [colon.join([w for w in (names(filter(None, subjects)), field) if w] + [line])
            for (field, line), subjects in lines.items()]
    return render(text, codes or [f"correct_{exercise}"], _say(f"correct_{exercise}"))


def _same_value(a, b):  # config values are ints, floats and bools: == is safe between them
    return type(a) is type(b) and a == b


def _config_changes():
    """Keys of gpt.GPT_CONFIG_124M that no longer hold the values gpt.py gave them."""
    current = gpt.GPT_CONFIG_124M
    if not isinstance(current, Mapping):
        return ["it is no longer a dict"]
    keys = set(current) | set(BASE_CONFIG)
    return sorted(str(k) for k in keys if not _same_value(current.get(k), BASE_CONFIG.get(k)))


def _review(exercise, judge, *answers):
    """The feedback on one exercise's answers, from its judge function: a list of remarks
    (none: the answer is right) or, for feedback that is a single message (not attempted yet,
    cannot verify), a (code, params) pair. A changed GPT_CONFIG_124M is warned of at the end."""
    try:
        outcome = judge(*answers)
    except Exception as err:  # a last resort: the diagnoses handle every answer we know of
        outcome = "could_not_read", {"error": f"{type(err).__name__}: {err}"}
    if isinstance(outcome, tuple):
        feedback = Feedback(False, _say(outcome[0], **outcome[1]), (outcome[0],))
    else:
        feedback = _feedback_from(outcome, exercise)
    changed = _config_changes()
    if changed:
        warning = _say("config_changed", keys=names(changed))
        feedback = Feedback(feedback.passed, f"{feedback.text}\n{warning}",
                            feedback.codes + ("config_changed",))
    return feedback


def _diagnose(subject, field, value, expected, mistakes, fallback, same=operator.eq, **params):
    """[] if `value` is right, else one remark naming every mistake that produces it.

    `mistakes` holds (code, wrong value) or (code, wrong value, {params}) entries.
    """
    if same(value, expected):
        return []
    found = []
    for code, wrong, *extra in mistakes:
        match = code, {**params, **(extra[0] if extra else {})}
        if not same(wrong, expected) and same(value, wrong) and match not in found:
            found.append(match)
    return [(subject, field, found or [(fallback, params)])]


# ---- exercise 4.1 ------------------------------------------------------------------------------


def _judge_4_1(ff_params, att_params):
    """Remarks on the parameter counts of one block's feed-forward and attention modules."""
    if ff_params is None and att_params is None:
        return "not_attempted_4_1", {}
    counts = ("ff_params", "att_params")
    got, remarks = read_numbers(None, dict(zip(counts, (ff_params, att_params))), whole=counts)
    if remarks:
        return remarks
    d, ctx = BASE_CONFIG["emb_dim"], BASE_CONFIG["context_length"]
    layers, heads = BASE_CONFIG["n_layers"], BASE_CONFIG["n_heads"]
    parts = gpt.parameter_breakdown(BASE_CONFIG)
    ff, att = parts["feed-forward"] // layers, parts["attention"] // layers
    if (got["ff_params"], got["att_params"]) == (att, ff):
        return [_remark("swapped", a="ff_params", b="att_params")]
    block, head_dim = ff + att + 4 * d, d // heads  # a block adds two norms: 2 x (scale, shift)
    return _diagnose(None, "ff_params", got["ff_params"], ff, [
        ("biases", 8 * d * d), ("missing_layer", 4 * d * d + 4 * d),
        ("missing_layer", 4 * d * d + d), ("other_module", att), ("all_blocks", layers * ff),
        ("whole_block", block),
    ], "wrong_count_4_1", n_layers=layers) + _diagnose(None, "att_params", got["att_params"], att, [
        ("biases", 4 * d * d), ("biases", 4 * d * d + 4 * d), ("missing_layer", 3 * d * d),
        ("mask_counted", att + ctx * ctx), ("other_module", ff), ("all_blocks", layers * att),
        ("heads_share", heads * att), ("heads_share", heads * 3 * d * d + d * d + d),
        ("heads_share", 3 * d * head_dim + d * d + d), ("whole_block", block),
    ], "wrong_count_4_1", n_layers=layers, n_heads=heads, head_dim=head_dim)


def review_4_1(ff_params, att_params):
    """Feedback on the parameter counts of one block's feed-forward and attention modules."""
    return _review("4_1", _judge_4_1, ff_params, att_params)


def check_4_1(ff_params, att_params):
    """Print the feedback on exercise 4.1's two counts (see review_4_1)."""
    print(review_4_1(ff_params, att_params).text)


hint_4_1 = Hint("4_1")


# ---- exercise 4.2 ------------------------------------------------------------------------------

EXERCISE_SIZES = ("gpt2-medium", "gpt2-large", "gpt2-xl")
SIZE_KEYS = ("emb_dim", "n_layers", "n_heads")
FIELDS = ("total_params", "tied_params", "size_mb")
MB = 1024**2
_same_mb = functools.partial(math.isclose, rel_tol=0, abs_tol=MB_TOLERANCE)


def _figures(cfg):
    parts = gpt.parameter_breakdown(cfg)
    total = sum(parts.values())
    return {"total_params": total, "tied_params": total - parts["output head"],
            "size_mb": total * 4 / MB, "head": parts["output head"],  # float32: 4 bytes each
            "pos": parts["position embedding"], "qkv": cfg["n_layers"] * 3 * cfg["emb_dim"]}


def _untouched(answers, fields):
    """True in the starter's state: nothing, or every entry's `fields` still None."""
    return answers is None or isinstance(answers, Mapping) and all(
        entry is None or isinstance(entry, Mapping) and all(entry.get(f) is None for f in fields)
        for entry in answers.values())


def _name_remarks(label, answers):
    if not isinstance(answers, Mapping):
        return [_remark("not_a_dict", field=label, kind=type(answers).__name__)]
    expected = names(EXERCISE_SIZES)
    remarks = [_remark("unknown_names", field=label, names=str(name), expected=expected)
               for name in answers if name not in SIZES]
    missing = [name for name in EXERCISE_SIZES if name not in answers]
    if missing:
        remarks.append(_remark("missing_names", field=label, names=names(missing),
                               expected=expected))
    return remarks


def _config_remarks(name, cfg):
    if not isinstance(cfg, Mapping):
        code = "not_filled" if cfg is None else "not_a_dict"
        return [_remark(code, name, "config", kind=type(cfg).__name__)]
    right = {**BASE_CONFIG, **SIZES[name]}
    odd = sorted(str(key) for key in set(cfg) ^ set(right))
    changed = [key for key in BASE_CONFIG if key not in SIZE_KEYS and key in cfg
               and not _same_value(cfg[key], BASE_CONFIG[key])]
    remarks = [_remark("config_keys", name, "config", keys=names(odd))] if odd else []
    if changed:
        remarks.append(_remark("base_changed", name, "config", keys=names(changed)))
    got, unread = read_numbers(name, {k: cfg[k] for k in SIZE_KEYS if k in cfg}, whole=SIZE_KEYS)
    return remarks + unread + [_remark("size_value_off", name, key) for key, value in got.items()
                               if value is not None and value != right[key]]


def _result_remarks(name, entry, expected):
    if not isinstance(entry, Mapping):
        return [_remark("not_a_dict", name, kind=type(entry).__name__)]
    unknown = sorted(str(key) for key in entry if key not in FIELDS)
    if unknown:
        return [_remark("unknown_keys", name, keys=names(unknown), expected=names(FIELDS))]
    got, remarks = read_numbers(name, {f: entry.get(f) for f in FIELDS}, whole=FIELDS[:2])
    if remarks:
        return remarks
    exp, cfg = expected[name], {**BASE_CONFIG, **SIZES[name]}
    total, tied, size = (exp[f] for f in FIELDS)
    got_total, got_tied, got_size = (got[f] for f in FIELDS)
    if (got_total, got_tied) == (tied, total):
        return [_remark("swapped", name, a="total_params", b="tied_params")]
    others = [(other, expected[other]) for other in SIZES if other != name]
    small_layers = {"n_layers": BASE_CONFIG["n_layers"]}
    remarks = _diagnose(name, "total_params", got_total, total, [
        ("head_left_out", tied), ("qkv_biases", total + exp["qkv"]),
        ("not_from_config", _figures(BASE_CONFIG)["total_params"], {"fields": "emb_dim, n_layers"}),
        ("not_from_config", _figures({**cfg, **small_layers})["total_params"], {"fields": "n_layers"}),
        ("not_from_config", _figures({**BASE_CONFIG, "n_layers": cfg["n_layers"]})["total_params"],
         {"fields": "emb_dim"}),
    ] + [("other_size", o["total_params"], {"other": other}) for other, o in others
         if other in EXERCISE_SIZES], "wrong_total")  # small's total: not_from_config says more
    heads = {BASE_CONFIG["vocab_size"] * size["emb_dim"] for size in SIZES.values()}
    if got_tied != tied and got_total != total and got_total - got_tied in heads:
        remarks.append(_remark("follows_total", name, "tied_params"))  # head subtracted right
    else:
        remarks += _diagnose(name, "tied_params", got_tied, tied, [
            ("head_counted", total), ("both_vocab", total - 2 * exp["head"]),
            ("pos_subtracted", total - exp["head"] - exp["pos"]), ("qkv_biases", tied + exp["qkv"]),
        ] + [("other_size", o["tied_params"], {"other": other}) for other, o in others],
            "wrong_tied")
    if not _same_mb(got_size, size) and got_total != total and _same_mb(got_size, got_total * 4 / MB):
        return remarks + [_remark("follows_total", name, "size_mb")]
    return remarks + _diagnose(name, "size_mb", got_size, size, [
        ("mb_rounding", round(size, 1)), ("mb_rounding", round(size)), ("mb_unit", total * 4),
        ("mb_unit", total * 4 / 1024), ("mb_unit", total * 4 / 1024**3),
        ("mb_unit", total * 4 / 1000**2), ("mb_bytes_per_param", total * 2 / MB),
        ("mb_bytes_per_param", total * 8 / MB), ("mb_bytes_per_param", total / MB),
        ("mb_from_tied", tied * 4 / MB),
    ], "wrong_size", same=_same_mb)


def _judge_4_2(configs, results):
    """Remarks on configs[name] and on results[name] = {total_params, tied_params, size_mb}."""
    if _untouched(configs, SIZE_KEYS) and _untouched(results, FIELDS):
        return "not_attempted_4_2", {}
    remarks = _name_remarks("configs", configs)
    if not remarks:
        remarks = [p for name, cfg in configs.items() for p in _config_remarks(name, cfg)]
    if remarks:  # the results follow from the configs: check them once the configs are right
        return remarks
    remarks = _name_remarks("results", results)
    if remarks:
        return remarks
    expected = {name: _figures({**BASE_CONFIG, **size}) for name, size in SIZES.items()}
    return [p for name, entry in results.items() for p in _result_remarks(name, entry, expected)]


def review_4_2(configs, results):
    """Feedback on configs[name] and on results[name] = {total_params, tied_params, size_mb}."""
    return _review("4_2", _judge_4_2, configs, results)


def check_4_2(configs, results):
    """Print the feedback on exercise 4.2's configs and results (see review_4_2)."""
    print(review_4_2(configs, results).text)


hint_4_2 = Hint("4_2")


# ---- exercise 4.3 ------------------------------------------------------------------------------

# The rates exercise 4.3 asks for. They are distinct, so a rate at the wrong site shows.
RATES_4_3 = {"drop_rate_emb": 0.1, "drop_rate_attn": 0.2, "drop_rate_shortcut": 0.3}
SITES_4_3 = {"drop_rate_emb": "drop_emb", "drop_rate_attn": "att.dropout",
             "drop_rate_shortcut": "drop_shortcut"}  # in the model, then in each block
_close = functools.partial(math.isclose, abs_tol=RATE_TOLERANCE)


def _unapplied(model, paths):
    """Problems for the dropout modules that a forward pass never calls."""
    called = set()
    hooks = [model.get_submodule(path).register_forward_hook(
        lambda *_, path=path: called.add(path)) for path in paths]
    was_training = model.training
    try:
        device = next(model.parameters(), torch.empty(0)).device
        model.eval()  # eval: dropout draws no random numbers, so the learner's RNG is untouched
        with torch.no_grad():
            model(torch.zeros(1, 2, dtype=torch.long, device=device))
    except Exception as err:  # any failure becomes feedback, never a crash
        return [_remark("forward_failed", error=f"{type(err).__name__}: {err}")]
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)
    return [_remark("never_applied", field=f"model.{path}") for path in paths if path not in called]


def _judge_4_3(model):
    """Remarks on the exercise 4.3 model, with a separate dropout rate at each of three sites."""
    empty = isinstance(model, nn.Module) and next(model.children(), None) is None and next(
        model.parameters(), None) is None  # the starter's constructors create nothing
    if model is None or empty:
        return "not_attempted_4_3", {}
    if isinstance(model, type):
        return [_remark("pass_instance")]
    if isinstance(model, Mapping):
        return [_remark("is_config")]
    if not isinstance(model, nn.Module):
        return [_remark("not_module", kind=type(model).__name__)]
    blocks = getattr(model, "trf_blocks", None)
    n_blocks = len(blocks) if isinstance(blocks, (nn.Sequential, nn.ModuleList)) else 0
    keys = {SITES_4_3["drop_rate_emb"]: "drop_rate_emb"} | {
        f"trf_blocks.{i}.{SITES_4_3[key]}": key
        for i in range(n_blocks) for key in ("drop_rate_attn", "drop_rate_shortcut")}
    modules, rates, remarks = dict(model.named_modules()), {key: [] for key in RATES_4_3}, []
    for path, key in keys.items():
        module = modules.get(path)
        if not isinstance(module, nn.Dropout):
            return [_remark("site_missing", field=f"model.{path}")]
        rate, why = read_number(module.p, whole=False)
        remarks += [(None, f"model.{path}.p", [why])] if why else []
        rates[key].append(rate)
    if not n_blocks:
        return [_remark("no_blocks", field="model.trf_blocks")]
    if remarks:
        return remarks
    if all(_close(p, rates["drop_rate_emb"][0]) for ps in rates.values() for p in ps):
        return [_remark("one_rate")]
    for key, ps in rates.items():
        meant = [other for other, rate in RATES_4_3.items() if _close(ps[0], rate)]
        if any(not _close(p, ps[0]) for p in ps):
            remarks.append(_remark("differs_between_blocks", field=SITES_4_3[key]))
        elif meant and meant[0] != key:
            remarks.append(_remark("rate_of_other_site", field=SITES_4_3[key], key=meant[0],
                                   own=key))
        elif not meant:
            remarks.append(_remark("rate_unknown", field=SITES_4_3[key]))
    if remarks:
        return remarks
    if any(t.is_meta for t in model.parameters()):
        return "unverified_meta", {}
    return _unapplied(model, list(keys))


def review_4_3(model):
    """Feedback on the exercise 4.3 model, with a separate dropout rate at each of three sites."""
    return _review("4_3", _judge_4_3, model)


def check_4_3(model):
    """Print the feedback on exercise 4.3's model (see review_4_3)."""
    print(review_4_3(model).text)


hint_4_3 = Hint("4_3")
