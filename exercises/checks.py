"""Self-checks for exercises 4.1-4.3, in the style of Kaggle Learn's `q1.check()`.

Each `check_4_N(...)` prints its feedback and returns True or False: "not attempted yet" while
the starter code is unchanged, a short diagnosis when an answer is wrong, a confirmation when
it is right. Feedback never shows the expected numbers. `hint_4_N()` prints a nudge.

The expected values are derived from gpt.py, so the checks follow the course's model.
"""

import math
import numbers
import textwrap
from collections.abc import Mapping

import torch
import torch.nn as nn

import gpt

# ---- helpers ----------------------------------------------------------------------------


def _as_int(value):
    """`value` as an int if it is a whole number (int, integral float, 1-element tensor)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_float(value):
    """`value` as a float if it is a real number (int, float, 1-element tensor)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _same_mb(a, b):
    return round(a, 2) == round(b, 2)  # MB are compared to two decimals


def _diagnose(value, expected, mistakes, fallback, same=lambda a, b: a == b):
    """None if `value` is right, else the message of the first known mistake it matches."""
    if same(value, expected):
        return None
    for wrong, message in mistakes:
        if not same(wrong, expected) and same(value, wrong):
            return message
    return fallback


def _report(problems, success=None):
    """Print the problems (and return False), or else the success message (and return True)."""
    if problems:
        print("Not quite:")
        for problem in problems:
            print(f"  - {problem}")
        return False
    print(success)
    return True


def _hint(text):
    print(textwrap.fill("Hint: " + text, width=88))


def _not_attempted(what):
    print(f"Not attempted yet: {what}, then run this cell again.")
    return False


# ---- exercise 4.1 ---------------------------------------------------------------------------


def check_4_1(ff_params, att_params):
    """Parameters of one block's feed-forward module and of its attention module (GPT-2 small)."""
    if ff_params is None and att_params is None:
        return _not_attempted("set ff_params and att_params to your counts")

    cfg = gpt.GPT_CONFIG_124M
    d, n_layers, ctx = cfg["emb_dim"], cfg["n_layers"], cfg["context_length"]
    breakdown = gpt.parameter_breakdown(cfg)
    ff = breakdown["feed-forward"] // n_layers
    att = breakdown["attention"] // n_layers
    block = ff + att + 4 * d  # plus norm1 and norm2 (scale and shift each)

    answers = {"ff_params": _as_int(ff_params), "att_params": _as_int(att_params)}
    if answers["ff_params"] == att and answers["att_params"] == ff:
        return _report(["the two counts are swapped: which module is the larger one?"])

    whole_block = (block, "that is the whole transformer block; count only this one module")
    all_blocks = f"that is all {n_layers} blocks together; count the module of a single block"
    mistakes = {
        "ff_params": [
            (8 * d * d, "looks like the bias terms are missing: both nn.Linear layers have a bias "
                        "vector, one entry per output unit"),
            (4 * d * d + 4 * d, "only the first nn.Linear is counted; the feed-forward has two"),
            (4 * d * d + d, "only the second nn.Linear is counted; the feed-forward has two"),
            (att, "that is the attention module's count"),
            (n_layers * ff, all_blocks),
            whole_block,
        ],
        "att_params": [
            (4 * d * d, "looks like the bias terms are missing: out_proj has a bias even though "
                        "the query, key and value projections do not"),
            (4 * d * d + 4 * d, "query, key and value have no bias here (qkv_bias is False); "
                                "only out_proj has one"),
            (3 * d * d, "out_proj is missing: after W_query, W_key and W_value a fourth nn.Linear "
                        "mixes the heads"),
            (att + ctx * ctx, "the causal mask is included: it is a buffer, not a trainable "
                              "parameter (count model.parameters(), not the state_dict)"),
            (ff, "that is the feed-forward module's count"),
            (n_layers * att, all_blocks),
            whole_block,
        ],
    }
    expected = {"ff_params": ff, "att_params": att}
    problems = []
    for name, raw in (("ff_params", ff_params), ("att_params", att_params)):
        value = answers[name]
        if raw is None:
            problems.append(f"{name} is not filled in yet")
        elif value is None:
            problems.append(f"{name} should be a whole number (an int), got {type(raw).__name__}")
        else:
            message = _diagnose(value, expected[name], mistakes[name],
                                "not the right count; add up the weights and the biases of every "
                                "nn.Linear in the module")
            if message:
                problems.append(f"{name}: {message}")
    return _report(problems, "Correct: both counts match. Now explain why one module is about "
                             "twice the size of the other.")


def hint_4_1():
    _hint(
        "sum(p.numel() for p in module.parameters()) counts every weight and bias of a "
        "module. To check it by hand: nn.Linear(n_in, n_out) holds n_in * n_out weights plus "
        "n_out biases (if it has a bias). List the nn.Linear layers of block.ff and block.att "
        "with print(block.ff) and print(block.att)."
    )


# ---- exercise 4.2 ---------------------------------------------------------------------------

SIZES = tuple(gpt.GPT2_SIZES)  # gpt2-small, gpt2-medium, gpt2-large, gpt2-xl
FIELDS = ("total_params", "tied_params", "size_mb")


def _count(cfg):
    return sum(gpt.parameter_breakdown(cfg).values())


def _expected_4_2(name):
    cfg = gpt.gpt2_config(name)
    parts = gpt.parameter_breakdown(cfg)
    total = sum(parts.values())
    return {
        "total_params": total,
        "tied_params": total - parts["output head"],
        "size_mb": total * 4 / 1024**2,  # float32: 4 bytes per parameter
        "parts": parts,
        "cfg": cfg,
    }


def _diagnose_4_2(name, entry, expected):
    """Messages for what is wrong in one size's entry (empty when all is right)."""
    if not isinstance(entry, Mapping):
        return [f"{name}: should be a dict with the keys {', '.join(FIELDS)}"]
    exp = expected[name]
    others = {other: o for other, o in expected.items() if other != name}
    total, tied, size = exp["total_params"], exp["tied_params"], exp["size_mb"]
    head, pos = exp["parts"]["output head"], exp["parts"]["position embedding"]

    problems = []
    values = {}
    for field in FIELDS:
        raw = entry.get(field)
        values[field] = _as_float(raw) if field == "size_mb" else _as_int(raw)
        if raw is None:
            problems.append(f"{name}: {field} is not filled in yet")
        elif values[field] is None:
            kind = "a number" if field == "size_mb" else "a whole number (an int)"
            problems.append(f"{name}: {field} should be {kind}, got {type(raw).__name__}")
    if problems:
        return problems
    if values["total_params"] == tied and values["tied_params"] == total:
        return [f"{name}: total_params and tied_params are swapped"]

    base = gpt.GPT_CONFIG_124M
    total_mistakes = [
        (tied, "the output head is left out; total_params counts every parameter of the model"),
        (_count(base), "same as GPT-2 small: this size's emb_dim, n_layers and n_heads did not "
                       "reach the config"),
        (_count({**exp["cfg"], "n_layers": base["n_layers"]}), "n_layers was not updated"),
        (_count({**base, "n_layers": exp["cfg"]["n_layers"]}), "emb_dim was not updated"),
    ] + [(o["total_params"], f"this is the count of {other}") for other, o in others.items()]
    tied_mistakes = [
        (total, "the output head is still counted; with weight tying it reuses the token "
                "embedding's matrix, so leave its parameters out"),
        (total - 2 * head, "both vocabulary-sized matrices are subtracted; tying shares one matrix "
                           "between tok_emb and out_head, so count it once"),
        (total - head - pos, "the position embedding is subtracted too; only the output head is "
                             "shared with the token embedding"),
    ] + [(o["tied_params"], f"this is the tied count of {other}") for other, o in others.items()]
    size_mistakes = [
        (total * 4 / 1000**2, "looks like MB = bytes / 1000**2; this course uses bytes / 1024**2"),
        (total * 4, "that is bytes; divide by 1024**2 to get MB"),
        (total * 4 / 1024, "that is kilobytes (bytes / 1024); MB is bytes / 1024**2"),
        (total * 4 / 1024**3, "that is gigabytes; MB is bytes / 1024**2"),
        (total * 2 / 1024**2, "2 bytes per parameter is float16; these parameters are float32"),
        (total * 8 / 1024**2, "8 bytes per parameter is float64; these parameters are float32"),
        (total / 1024**2, "the bytes per parameter are missing: a float32 number takes 4 bytes"),
        (tied * 4 / 1024**2, "computed from tied_params; the model as built stores all of its "
                             "parameters, the output head included"),
    ]
    message = _diagnose(values["total_params"], total, total_mistakes,
                        "not the right count; sum numel() over all of model.parameters()")
    if message:
        problems.append(f"{name}: total_params: {message}")
    message = _diagnose(values["tied_params"], tied, tied_mistakes,
                        "not the right count; subtract the output head's parameters from the total")
    if message:
        problems.append(f"{name}: tied_params: {message}")
    if not _same_mb(values["size_mb"], size):
        if values["total_params"] != total and _same_mb(values["size_mb"],
                                                        values["total_params"] * 4 / 1024**2):
            message = "follows from total_params, which needs fixing first"
        else:
            message = _diagnose(values["size_mb"], size, size_mistakes,
                                "not the right size; float32 takes 4 bytes per parameter and "
                                "MB means bytes / 1024**2", same=_same_mb)
        problems.append(f"{name}: size_mb: {message}")
    return problems


def _is_blank_4_2(results):
    """True for the untouched starter: nothing, or every field still None."""
    if results is None:
        return True
    if not isinstance(results, Mapping):
        return False
    return all(
        entry is None or (isinstance(entry, Mapping) and all(v is None for v in entry.values()))
        for entry in results.values()
    )


def check_4_2(results):
    """results[name] = {"total_params": int, "tied_params": int, "size_mb": float} per size."""
    if _is_blank_4_2(results):
        return _not_attempted("fill in results for the four sizes")
    if not isinstance(results, Mapping):
        return _report([f"results should be a dict keyed by model name, got "
                        f"{type(results).__name__}"])
    missing = [name for name in SIZES if name not in results]
    if missing:
        return _report([f"results has no entry for {', '.join(missing)} (keys are the names "
                        f"{', '.join(SIZES)})"])
    expected = {name: _expected_4_2(name) for name in SIZES}
    problems = [p for name in SIZES for p in _diagnose_4_2(name, results[name], expected)]
    return _report(problems, "Correct: all four sizes match. Notice how much of the total the "
                             "output head accounts for in the small model, and how little in XL.")


def hint_4_2():
    _hint(
        "Start each config from a copy of gpt.GPT_CONFIG_124M and overwrite emb_dim, "
        "n_layers and n_heads (gpt.GPT2_SIZES lists them). Build the model inside "
        "`with torch.device('meta'):` to get real shapes without allocating memory. The output "
        "head is model.out_head. A float32 number takes 4 bytes, and MB here means bytes / 1024**2."
    )


# ---- exercise 4.3 ---------------------------------------------------------------------------

# The rates exercise 4.3 asks for. They are distinct, so a rate at the wrong site shows.
RATES_4_3 = {"drop_rate_emb": 0.1, "drop_rate_attn": 0.2, "drop_rate_shortcut": 0.3}

SITES_4_3 = {
    "drop_rate_emb": "embedding dropout (model.drop_emb)",
    "drop_rate_attn": "attention-weights dropout (att.dropout in each block)",
    "drop_rate_shortcut": "shortcut dropout (drop_shortcut in each block)",
}


def _find_sites(model):
    """{rate key: [(module name, nn.Dropout), ...]}, or a message saying what is missing."""
    keep_names = " (keep gpt.py's module names so the check can find each site)"
    if not isinstance(getattr(model, "drop_emb", None), nn.Dropout):
        return None, "model.drop_emb is not an nn.Dropout" + keep_names
    blocks = getattr(model, "trf_blocks", None)
    if not isinstance(blocks, (nn.Sequential, nn.ModuleList)) or len(blocks) == 0:
        return None, "model.trf_blocks is not a non-empty nn.Sequential of blocks" + keep_names
    sites = {"drop_rate_emb": [("drop_emb", model.drop_emb)], "drop_rate_attn": [],
             "drop_rate_shortcut": []}
    for i, block in enumerate(blocks):
        attn_drop = getattr(getattr(block, "att", None), "dropout", None)
        shortcut_drop = getattr(block, "drop_shortcut", None)
        for key, name, module in (("drop_rate_attn", f"trf_blocks.{i}.att.dropout", attn_drop),
                                  ("drop_rate_shortcut", f"trf_blocks.{i}.drop_shortcut",
                                   shortcut_drop)):
            if not isinstance(module, nn.Dropout):
                return None, f"model.{name} is not an nn.Dropout" + keep_names
            sites[key].append((name, module))
    return sites, None


def _unused_sites(model, sites):
    """Names of dropout modules that a forward pass never calls (or an error message)."""
    called = set()
    hooks = [
        module.register_forward_hook(lambda mod, inp, out, name=name: called.add(name))
        for modules in sites.values()
        for name, module in modules
    ]
    was_training = model.training
    try:
        device = next(model.parameters()).device
        model.eval()  # eval: dropout draws no random numbers, so the learner's RNG is untouched
        with torch.no_grad():
            model(torch.zeros(1, 2, dtype=torch.long, device=device))
    except Exception as err:  # any failure becomes feedback, never a crash
        return None, f"running the model on two tokens failed ({type(err).__name__}: {err})"
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)
    return [name for modules in sites.values() for name, _ in modules if name not in called], None


def check_4_3(model):
    """The model built for exercise 4.3, with a separate dropout rate at each of three sites."""
    if model is None:
        return _not_attempted("build `model` with the three dropout rates")
    if isinstance(model, type):
        return _report(["pass the built model (an instance, e.g. YourModel(cfg)), not the class"])
    if isinstance(model, Mapping):
        return _report(["this is a config; build the model from it and pass the model"])
    if not isinstance(model, nn.Module):
        return _report([f"expected a torch nn.Module, got {type(model).__name__}"])

    sites, problem = _find_sites(model)
    if problem:
        return _report([problem])

    rates = {key: [module.p for _, module in modules] for key, modules in sites.items()}
    if len({p for ps in rates.values() for p in ps}) == 1:
        cfg = getattr(model, "cfg", None)
        if isinstance(cfg, Mapping) and "drop_rate" in cfg and not set(RATES_4_3) & set(cfg):
            return _report(["the model is still built from the single drop_rate, so all three "
                            "sites share one rate"])
        return _report(["every dropout has the same rate: one shared rate reaches all three "
                        "sites"])

    problems = []
    for key, ps in rates.items():
        if len(set(ps)) > 1:
            problems.append(f"the {SITES_4_3[key]} differs between blocks: did the change reach "
                            f"every block in trf_blocks?")
            continue
        p = ps[0]
        if math.isclose(p, RATES_4_3[key]):
            continue
        meant_for = [other for other, rate in RATES_4_3.items() if math.isclose(p, rate)]
        if meant_for:
            problems.append(f"the {SITES_4_3[key]} uses the rate meant for the "
                            f"{SITES_4_3[meant_for[0]]}, {meant_for[0]}")
        else:
            problems.append(f"the {SITES_4_3[key]} has a rate that is none of the three given")
    if problems:
        return _report(problems)

    if any(p.is_meta for p in model.parameters()):
        return _report([], "Correct: each of the three dropout sites has its own rate (a model "
                           "on the meta device cannot run, so forward was not tried).")
    unused, error = _unused_sites(model, sites)
    if error:
        return _report([error])
    if unused:
        return _report([f"model.{name} is never applied in forward" for name in unused])
    return _report([], "Correct: each of the three dropout sites has its own rate, and forward "
                       "applies every one of them.")


def hint_4_3():
    _hint(
        "gpt.GPTModel checks its config and rejects unknown keys, so it cannot take the "
        "three rates directly. An nn.Dropout holds no parameters: you can build the model "
        "from a config it accepts and then replace the dropout module at each site - "
        "model.drop_emb, and in every block att.dropout and drop_shortcut. Wrapping that in a "
        "subclass of gpt.GPTModel keeps it reusable."
    )
