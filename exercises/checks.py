"""Self-checks for exercises 4.1-4.3, in the style of Kaggle Learn's `q1.check()`.

`check_4_N(...)` prints feedback and returns nothing, so a notebook cell shows only the
feedback: "not attempted yet" while the starter is unchanged, one line per distinct mistake
while an answer is wrong, a confirmation once it is right. `review_4_N(...)` returns the same
feedback as a `Feedback(passed, text)` (the tests read it). Feedback never shows an expected
figure, and no value makes a check raise. `hint_4_N()` gives a nudge; calling it again gives
a more specific one.

The expected values come from gpt.py and from a copy of gpt.GPT_CONFIG_124M taken when this
module is imported, so a config changed in place later cannot move them.
"""

import copy
import math
import numbers
import textwrap
from collections.abc import Mapping
from typing import NamedTuple

import torch
import torch.nn as nn

import gpt

BASE_CONFIG = dict(gpt.GPT_CONFIG_124M)  # GPT-2 small, as gpt.py defines it
SIZES = copy.deepcopy(gpt.GPT2_SIZES)  # gpt2-small, gpt2-medium, gpt2-large, gpt2-xl


class Feedback(NamedTuple):
    passed: bool
    text: str


# ---- helpers ----------------------------------------------------------------------------


def _correct(message):
    return Feedback(True, f"Correct: {message}")


def _wrong(problems):
    return Feedback(False, "\n".join(["Not quite:"] + [f"  - {p}" for p in problems]))


def _not_attempted(what):
    return Feedback(False, f"Not attempted yet: {what}, then run this cell again.")


def _config_changes():
    """Keys of gpt.GPT_CONFIG_124M that no longer hold the values gpt.py gave them."""
    current = gpt.GPT_CONFIG_124M
    if not isinstance(current, Mapping):
        return ["it is no longer a dict"]

    def same(a, b):  # the original values are ints, floats and bools: == is safe between them
        return type(a) is type(b) and a == b

    keys = set(current) | set(BASE_CONFIG)
    return sorted(str(k) for k in keys if not same(current.get(k), BASE_CONFIG.get(k)))


def _safely(review, *args):
    """`review(*args)`, which must never raise, plus a warning if the base config was changed."""
    try:
        feedback = review(*args)
    except Exception as err:  # a last resort: the reviews handle every value we know of
        feedback = Feedback(False, f"The check could not read this answer ({type(err).__name__}: "
                                   f"{err}); compare its form with the starter code and run this "
                                   "cell again.")
    changed = _config_changes()
    if changed:
        feedback = feedback._replace(text=(
            f"{feedback.text}\nWarning: gpt.GPT_CONFIG_124M was changed in place "
            f"({', '.join(changed)}), so everything that reads it later in this session sees "
            "the change. Build new configs as copies, {**gpt.GPT_CONFIG_124M, ...}, and restart "
            "the kernel to get the original back."))
    return feedback


def _number(value):
    """(value as a Python int or float, None), or (None, what it is) if it is not one number."""
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return None, ("a tensor on the meta device, which has a shape but no value (compute "
                          "it from Python numbers: numel() returns an int)")
        if value.numel() != 1:
            return None, f"a tensor of shape {list(value.shape)}"
        value = value.item()
    elif type(value).__module__ == "numpy" and getattr(value, "size", None) == 1:
        value = value.item()  # a numpy scalar or one-element array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None, type(value).__name__
    if isinstance(value, numbers.Integral):
        return int(value), None
    return float(value), None


def _whole_number(value):
    """(value as an int, None) if it is a whole number of any numeric type, else (None, why)."""
    number, kind = _number(value)
    if kind:
        return None, kind
    if isinstance(number, float):
        if not number.is_integer():
            return None, "a float that is not a whole number"
        number = int(number)
    return number, None


def _diagnose(value, expected, mistakes, fallback, same=lambda a, b: a == b):
    """None if `value` is right, else what it matches in `mistakes` (pairs of value, message).

    A value that several mistakes produce gets all of their messages, numbered.
    """
    if same(value, expected):
        return None
    matches = []
    for wrong, message in mistakes:
        if not same(wrong, expected) and same(value, wrong) and message not in matches:
            matches.append(message)
    if len(matches) > 1:
        numbered = " ".join(f"({i}) {message}." for i, message in enumerate(matches, 1))
        return f"this value fits {len(matches)} mistakes. {numbered}"
    return matches[0] if matches else fallback


class _Hints:
    """A hint function that gets more specific each time it is called."""

    def __init__(self, exercise, *tiers):
        self.exercise, self.tiers, self.calls = exercise, tiers, 0

    def __call__(self):
        if self.calls < len(self.tiers):
            text = f"Hint {self.calls + 1} of {len(self.tiers)}: {self.tiers[self.calls]}"
            if self.calls + 1 < len(self.tiers):
                text += " (Run the cell again for a more specific hint.)"
        else:
            text = (f"No more hints: compare your work with "
                    f"solutions/solution_{self.exercise}.ipynb.")
        self.calls += 1
        print(textwrap.fill(text, width=88))

    def __repr__(self):  # shown if the parentheses are left out
        return f"hint_{self.exercise}: call it, hint_{self.exercise}(), to see a hint"


# ---- exercise 4.1 ---------------------------------------------------------------------------


def _review_4_1(ff_params, att_params):
    if ff_params is None and att_params is None:
        return _not_attempted("set ff_params and att_params to your counts")

    d, ctx = BASE_CONFIG["emb_dim"], BASE_CONFIG["context_length"]
    n_layers, n_heads = BASE_CONFIG["n_layers"], BASE_CONFIG["n_heads"]
    head_dim = d // n_heads
    breakdown = gpt.parameter_breakdown(BASE_CONFIG)
    ff = breakdown["feed-forward"] // n_layers
    att = breakdown["attention"] // n_layers
    block = ff + att + 4 * d  # plus norm1 and norm2 (scale and shift each)

    answers, problems = {}, []
    for name, raw in (("ff_params", ff_params), ("att_params", att_params)):
        answers[name], kind = _whole_number(raw)
        if raw is None:
            problems.append(f"{name} is not filled in yet")
        elif kind:
            problems.append(f"{name} should be a whole number (an int), got {kind}")
    if problems:
        return _wrong(problems)
    if answers["ff_params"] == att and answers["att_params"] == ff:
        return _wrong(["the two counts are swapped: which module is the larger one?"])

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
                              "parameter (count parameters(), not the state_dict)"),
            (ff, "that is the feed-forward module's count"),
            (n_layers * att, all_blocks),
            (n_heads * att, f"the module is counted once per head; its {n_heads} heads share the "
                            "same four matrices, each head using a slice of them"),
            (n_heads * 3 * d * d + d * d + d,
             "each head got its own full-size query, key and value matrices; the heads share "
             f"W_query, W_key and W_value, each using a slice of head_dim = {head_dim} columns"),
            (3 * d * head_dim + d * d + d,
             "only one head's slice of W_query, W_key and W_value is counted; each of them is a "
             "full emb_dim x emb_dim matrix that all heads share"),
            whole_block,
        ],
    }
    for name, expected in (("ff_params", ff), ("att_params", att)):
        message = _diagnose(answers[name], expected, mistakes[name],
                            "not the right count (counts must match exactly); add up the weights "
                            "and the biases of every nn.Linear in the module")
        if message:
            problems.append(f"{name}: {message}")
    if problems:
        return _wrong(problems)
    return _correct("both counts match exactly. Now explain why one module is about twice the "
                    "size of the other.")


def review_4_1(ff_params, att_params):
    """Feedback on the parameter counts of one block's feed-forward and attention modules."""
    return _safely(_review_4_1, ff_params, att_params)


def check_4_1(ff_params, att_params):
    """Print feedback on exercise 4.1 (see review_4_1)."""
    print(review_4_1(ff_params, att_params).text)


hint_4_1 = _Hints(
    "4_1",
    "both modules are made of nn.Linear layers; GELU, dropout and the causal mask hold no "
    "trainable parameters. print(block.ff) and print(block.att) list the layers with their "
    "in_features, out_features and whether they have a bias.",
    "an nn.Linear(n_in, n_out) holds an n_out x n_in weight matrix plus n_out biases, unless it "
    "was created with bias=False. Add that up layer by layer. To confirm with PyTorch: "
    "module.parameters() yields every weight and bias tensor, and a tensor's numel() is its "
    "number of entries.",
)


# ---- exercise 4.2 ---------------------------------------------------------------------------

FIELDS = ("total_params", "tied_params", "size_mb")
MB_TOLERANCE = 0.01  # size_mb passes within 0.01 MB: two decimals, rounded or not


def _count(cfg):
    return sum(gpt.parameter_breakdown(cfg).values())


def _expected_4_2(name):
    cfg = {**BASE_CONFIG, **SIZES[name]}
    parts = gpt.parameter_breakdown(cfg)
    total = sum(parts.values())
    return {
        "total_params": total,
        "tied_params": total - parts["output head"],
        "size_mb": total * 4 / 1024**2,  # float32: 4 bytes per parameter
        "parts": parts,
        "cfg": cfg,
    }


def _same_mb(a, b):
    return abs(a - b) < MB_TOLERANCE


def _read_entry(entry):
    """({field: number}, problems) for one size's entry of the results dict."""
    if not isinstance(entry, Mapping):
        return None, [f"should be a dict with the keys {', '.join(FIELDS)}, "
                      f"got {type(entry).__name__}"]
    unknown = sorted(str(key) for key in entry if key not in FIELDS)
    if unknown:
        return None, [f"has unknown key(s) {', '.join(unknown)}; the keys are {', '.join(FIELDS)}"]
    values, problems = {}, []
    for field in FIELDS:
        raw = entry.get(field)
        read = _number if field == "size_mb" else _whole_number
        values[field], kind = read(raw)
        if raw is None:
            problems.append(f"{field} is not filled in yet")
        elif kind:
            wanted = "a number" if field == "size_mb" else "a whole number (an int)"
            problems.append(f"{field} should be {wanted}, got {kind}")
    return values, problems


def _mistakes_4_2(name, expected):
    """{field: [(wrong value, diagnosis), ...]}: the known mistakes for one size."""
    exp = expected[name]
    cfg, parts = exp["cfg"], exp["parts"]
    total, tied, size = exp["total_params"], exp["tied_params"], exp["size_mb"]
    head, pos = parts["output head"], parts["position embedding"]
    qkv_biases = cfg["n_layers"] * 3 * cfg["emb_dim"]
    unchanged = _count(BASE_CONFIG)  # what every size gets if its config never changed
    others = {other: o for other, o in expected.items() if other != name}
    with_biases = ("includes query, key and value biases; this exercise keeps qkv_bias False, "
                   "as in GPT_CONFIG_124M")
    two_decimals = ("the check needs two decimals (it accepts anything within "
                    f"{MB_TOLERANCE} MB), e.g. round(size_mb, 2)")
    return {
        "total_params": [
            (tied, "the output head is left out; total_params counts every parameter of the "
                   "model"),
            (unchanged, "same as GPT-2 small: this size's emb_dim, n_layers and n_heads did not "
                        "reach the config"),
            (_count({**cfg, "n_layers": BASE_CONFIG["n_layers"]}),
             "n_layers kept GPT-2 small's value"),
            (_count({**BASE_CONFIG, "n_layers": cfg["n_layers"]}),
             "only n_layers reached the config; emb_dim kept GPT-2 small's value"),
            (total + qkv_biases, with_biases),
        ] + [(o["total_params"], f"this is the count of {other}")
             for other, o in others.items() if o["total_params"] != unchanged],
        "tied_params": [
            (total, "the output head is still counted; with weight tying it reuses the token "
                    "embedding's matrix, so leave its parameters out"),
            (total - 2 * head, "both vocabulary-sized matrices are subtracted; tying shares one "
                               "matrix between tok_emb and out_head, so count it once"),
            (total - head - pos, "the position embedding is subtracted too; only the output head "
                                 "is shared with the token embedding"),
            (tied + qkv_biases, with_biases),
        ] + [(o["tied_params"], f"this is the tied count of {other}")
             for other, o in others.items()],
        "size_mb": [
            (round(size, 1), f"rounded to one decimal; {two_decimals}"),
            (round(size), f"rounded to a whole number; {two_decimals}"),
            (total * 4 / 1000**2, "looks like MB = bytes / 1000**2; this course uses "
                                  "bytes / 1024**2"),
            (total * 4, "that is bytes; divide by 1024**2 to get MB"),
            (total * 4 / 1024, "that is kilobytes (bytes / 1024); MB is bytes / 1024**2"),
            (total * 4 / 1024**3, "that is gigabytes; MB is bytes / 1024**2"),
            (total * 2 / 1024**2, "2 bytes per parameter is float16; these parameters are "
                                  "float32"),
            (total * 8 / 1024**2, "8 bytes per parameter is float64; these parameters are "
                                  "float32"),
            (total / 1024**2, "the bytes per parameter are missing: a float32 number takes 4 "
                              "bytes"),
            (tied * 4 / 1024**2, "computed from tied_params; the model as built stores all of "
                                 "its parameters, the output head included"),
        ],
    }


def _diagnose_4_2(name, entry, expected):
    """Messages for what is wrong in one size's entry (empty when all is right)."""
    values, problems = _read_entry(entry)
    if problems:
        return problems
    exp = expected[name]
    total, tied, size = (exp[field] for field in FIELDS)
    got_total, got_tied, got_size = (values[field] for field in FIELDS)
    if got_total == tied and got_tied == total:
        return ["total_params and tied_params are swapped"]

    mistakes = _mistakes_4_2(name, expected)
    follows = "follows from total_params, which needs fixing first"
    # A wrong total minus the output head of any of the four widths is a consistent tied count.
    heads = {BASE_CONFIG["vocab_size"] * dims["emb_dim"] for dims in SIZES.values()}

    message = _diagnose(got_total, total, mistakes["total_params"],
                        "not the right count (counts must match exactly); sum numel() over all "
                        "of the model's parameters")
    if message:
        problems.append(f"total_params: {message}")
    if got_tied != tied and got_total != total and got_total - got_tied in heads:
        message = f"{follows} (the output head is subtracted correctly)"
    else:
        message = _diagnose(got_tied, tied, mistakes["tied_params"],
                            "not the right count (counts must match exactly); subtract the output "
                            "head's parameters from the total")
    if message:
        problems.append(f"tied_params: {message}")
    if _same_mb(got_size, size):
        message = None
    elif got_total != total and _same_mb(got_size, got_total * 4 / 1024**2):
        message = follows
    else:
        message = _diagnose(got_size, size, mistakes["size_mb"],
                            "not the right size; float32 takes 4 bytes per parameter, MB means "
                            "bytes / 1024**2, and the check accepts anything within "
                            f"{MB_TOLERANCE} MB", same=_same_mb)
    if message:
        problems.append(f"size_mb: {message}")
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


def _review_4_2(results):
    if _is_blank_4_2(results):
        return _not_attempted("fill in results for the four sizes")
    if not isinstance(results, Mapping):
        return _wrong([f"results should be a dict keyed by model name, got "
                       f"{type(results).__name__}"])
    missing = [name for name in SIZES if name not in results]
    if missing:
        return _wrong([f"results has no entry for {', '.join(missing)} (the keys are the names "
                       f"{', '.join(SIZES)})"])
    expected = {name: _expected_4_2(name) for name in SIZES}
    sizes_with = {}  # each distinct message -> the sizes it applies to, in order
    for name in SIZES:
        for message in _diagnose_4_2(name, results[name], expected):
            sizes_with.setdefault(message, []).append(name)
    if sizes_with:
        return _wrong([
            f"{'all four sizes' if len(names) == len(SIZES) else ', '.join(names)}: {message}"
            for message, names in sizes_with.items()
        ])
    return _correct(f"all four sizes match (counts exactly, size_mb within {MB_TOLERANCE} MB). "
                    "Notice how much of the total the output head accounts for in the small "
                    "model, and how little in XL.")


def review_4_2(results):
    """Feedback on results[name] = {"total_params", "tied_params", "size_mb"} for each size."""
    return _safely(_review_4_2, results)


def check_4_2(results):
    """Print feedback on exercise 4.2 (see review_4_2)."""
    print(review_4_2(results).text)


hint_4_2 = _Hints(
    "4_2",
    "each size needs a config of its own: a copy of gpt.GPT_CONFIG_124M (leave the original "
    "alone) with that size's emb_dim, n_layers and n_heads from gpt.GPT2_SIZES. Build each "
    "model inside `with torch.device('meta'):`, which gives every parameter its real shape "
    "without allocating memory.",
    "total_params adds up the number of entries of every parameter tensor of the model. "
    "tied_params leaves out the weight of model.out_head, the matrix that weight tying would "
    "share with model.tok_emb. size_mb: a float32 number takes 4 bytes, and MB here means "
    "bytes / 1024**2.",
)


# ---- exercise 4.3 ---------------------------------------------------------------------------

# The rates exercise 4.3 asks for. They are distinct, so a rate at the wrong site shows.
RATES_4_3 = {"drop_rate_emb": 0.1, "drop_rate_attn": 0.2, "drop_rate_shortcut": 0.3}
RATE_TOLERANCE = 1e-6

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


def _read_rates(sites):
    """({rate key: [p of each module]}, problems): every p must be a number."""
    rates, problems = {}, []
    for key, modules in sites.items():
        rates[key] = []
        for name, module in modules:
            p, kind = _number(module.p)
            if kind:
                problems.append(f"model.{name} has a rate p that is not a number (got {kind})")
            rates[key].append(p)
    return rates, problems


def _misplaced_rates(rates):
    """One message per site whose rate is not the one the config gives it."""
    problems = []
    for key, ps in rates.items():
        if any(not math.isclose(p, ps[0], abs_tol=RATE_TOLERANCE) for p in ps):
            problems.append(f"the {SITES_4_3[key]} differs between blocks: are all the blocks "
                            "in trf_blocks built by the same class?")
        elif not math.isclose(ps[0], RATES_4_3[key], abs_tol=RATE_TOLERANCE):
            meant_for = [other for other, rate in RATES_4_3.items()
                         if math.isclose(ps[0], rate, abs_tol=RATE_TOLERANCE)]
            if meant_for:
                problems.append(f"the {SITES_4_3[key]} uses the rate meant for the "
                                f"{SITES_4_3[meant_for[0]]}, {meant_for[0]}")
            else:
                problems.append(f"the {SITES_4_3[key]} has a rate that is none of the three given "
                                f"(rates are compared to within {RATE_TOLERANCE:f})")
    return problems


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


def _review_4_3(model):
    if model is None:
        return _not_attempted("build `model` from CONFIG_4_3")
    if isinstance(model, type):
        return _wrong(["pass the built model (an instance, e.g. YourModel(cfg)), not the class"])
    if isinstance(model, Mapping):
        return _wrong(["this is a config; build the model from it and pass the model"])
    if not isinstance(model, nn.Module):
        return _wrong([f"expected a torch nn.Module, got {type(model).__name__}"])
    if not list(model.children()) and not list(model.parameters()):
        return _not_attempted("complete the two constructors, assigning each part to self (the "
                              "model has no submodules so far)")

    sites, problem = _find_sites(model)
    if problem:
        return _wrong([problem])
    rates, problems = _read_rates(sites)
    if problems:
        return _wrong(problems)
    all_rates = [p for ps in rates.values() for p in ps]
    if all(math.isclose(p, all_rates[0], abs_tol=RATE_TOLERANCE) for p in all_rates):
        cfg = getattr(model, "cfg", None)
        if isinstance(cfg, Mapping) and "drop_rate" in cfg and not set(RATES_4_3) & set(cfg):
            return _wrong(["the model is still built from the single drop_rate, so all three "
                           "sites share one rate"])
        return _wrong(["every dropout has the same rate: one shared rate reaches all three sites"])
    problems = _misplaced_rates(rates)
    if problems:
        return _wrong(problems)

    if any(t.is_meta for t in model.parameters()):
        return Feedback(False, "Cannot verify on the meta device: the three rates sit at the "
                               "right sites, but a model without data cannot run, so the check "
                               "cannot see whether forward applies them. Build the model on the "
                               "CPU (it is small) and run this cell again.")
    unused, error = _unused_sites(model, sites)
    if error:
        return _wrong([error])
    if unused:
        return _wrong([f"model.{name} is never applied in forward" for name in unused])
    return _correct("each of the three dropout sites has its own rate (to within "
                    f"{RATE_TOLERANCE:f}), and forward applies every one of them.")


def review_4_3(model):
    """Feedback on the exercise 4.3 model, with a separate dropout rate at each of three sites."""
    return _safely(_review_4_3, model)


def check_4_3(model):
    """Print feedback on exercise 4.3 (see review_4_3)."""
    print(review_4_3(model).text)


hint_4_3 = _Hints(
    "4_3",
    "three constructors create the dropouts: gpt.GPTModel's creates drop_emb, "
    "gpt.TransformerBlock's creates drop_shortcut, and gpt.MultiHeadAttention creates its own "
    "from the rate passed as its `dropout` argument. Your two classes create the same parts, "
    "in the same order, as those in gpt.py; only the rates they read change.",
    "in your block, MultiHeadAttention's `dropout` argument takes the attention-weights rate "
    "and drop_shortcut the shortcut rate; in your model, drop_emb takes the embedding rate, "
    "and trf_blocks stacks cfg['n_layers'] of your blocks (not gpt.TransformerBlock, which "
    "reads drop_rate).",
)
