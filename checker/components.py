"""Check a learner's own version of a chapter component against the chapter's, in gpt.py.

    check_component(LayerNorm)                  # prints feedback; the reference found by name
    review_component(MyNorm, reference=gpt.LayerNorm)   # returns Feedback(passed, text, codes)
    compare_models(my_model, gpt_model)         # two built models: where do they first differ?

Both built with the same arguments and seed: the initial values the chapter fixes, then (the
reference's weights copied in by the book's names) the outputs in eval mode on inputs a real model
meets, one backward pass, and dropout in training mode. The learner's own error comes first; else
one hook pass finds the first module whose output differs, and the mistakes planted into the
reference (checker/planted.py) say which one it behaves like, or a probe shows where to look.
Judged by behaviour, never by the source; nothing a learner passes makes a check raise. The steps
live in their own modules: running.py, pairing.py, diagnosing.py, matching.py, locating.py,
train_mode.py (see checker/README.md).
"""

import copy

import torch
import torch.nn as nn

import gpt
from checker.diagnosing import compare, inputs_for, parts
from checker.feedback import Feedback, names, numbered, problem, render, say
from checker.pairing import align, copy_weights, initial_values, perturb
from checker.planted import COMPONENTS, CONFIG, DIAGNOSES, NOTES, SEED
from checker.running import NotAttempted, made_on_the_cpu, raised, run
from checker.train_mode import gradients, train_mode


def _build(spec, cls, cfg, seed=SEED):
    """spec.build(cls, cfg) after seeding, with a copy of `cfg`: what a constructor writes into
    its config stays there, out of every later check in the session."""
    torch.manual_seed(seed)
    return spec.build(cls, copy.deepcopy(cfg))


def _prepare(spec, reference, yours, cfg=CONFIG):
    """Both modules built from `cfg`, the reference's weights copied into yours, findings."""
    reference_module = _build(spec, reference, cfg)
    # What the chapter starts from whatever the seed (norm scales 1, shifts 0, the mask) is what
    # a second build with another seed leaves unchanged: yours must start there too.
    other_seed = _build(spec, reference, cfg, SEED + 1).state_dict()
    fixed = {n: t.clone() for n, t in reference_module.state_dict().items()
             if torch.equal(t, other_seed[n])}
    # Scale 1 and shift 0 would hide a step that forgets them: random ones make it show.
    perturb(reference_module)
    try:
        module = _build(spec, yours, cfg)
    except NotImplementedError as err:
        raise NotAttempted from err
    except Exception as err:
        error = raised(err)
        if isinstance(err, TypeError) and error.at is None:  # the call itself: its arguments
            found = [problem("wrong_signature", signature=spec.signature, error=str(err))]
        else:
            found = [problem("build_failed", error=error.error)]
            if error.at:
                found.append(problem("your_line", **error.at))
        return reference_module, None, found, {}
    if not isinstance(module, nn.Module):
        return reference_module, None, [problem("component_not_module",
                                                kind=type(module).__name__)], {}
    if any(t.is_meta for t in [*module.parameters(), *module.buffers()]):
        return reference_module, None, [problem("on_meta")], {}
    pairs, problems, renamed = align(reference_module, module)
    problems += initial_values(fixed, module, renamed)
    copy_weights(pairs)
    return reference_module, module, problems, (pairs, renamed)


def _unaligned(problems):
    """Weights the check could not copy make any comparison of outputs meaningless."""
    comparable = ("missing_param", "initial_value", "initial_mask", "not_buffer",
                  "buffer_not_parameter", "parameter_not_buffer")
    return any(p.code not in comparable for p in problems)


def _renamed(renamed):
    if not renamed:
        return []
    return [problem("renamed", names=names(f"{a} → {b}" for a, b in renamed.items()))]


def _exact_gelu(module):
    """`module` with the chapter's tanh GELUs replaced by the exact one, nn.GELU()."""
    if isinstance(module, gpt.GELU):
        return nn.GELU()
    for name, part in list(module.named_modules()):
        if isinstance(part, gpt.GELU):
            parent, _, leaf = name.rpartition(".")
            module.get_submodule(parent).register_module(leaf, nn.GELU())
    return module


def _compare_modes(kind, reference_module, module, inputs, pairs):
    """Eval-mode outputs, then one backward pass, then training mode."""
    findings = compare(kind, reference_module.eval(), module.eval(), inputs)
    if not findings:
        findings = parts(reference_module, module)
    if findings or COMPONENTS[kind].build is None:
        return findings
    findings = gradients(reference_module, module, pairs, inputs[0])
    if findings:
        return findings
    return train_mode(kind, reference_module, module, inputs)


def _review_class(kind, spec, reference, yours, exact=False):
    reference_module, module, problems, aligned = _prepare(spec, reference, yours)
    if module is None:
        return problems, []
    pairs, renamed = aligned
    inputs = spec.inputs(CONFIG)
    run(module.eval(), inputs[0])  # a stub raises NotImplementedError here
    if _unaligned(problems):
        return problems, _renamed(renamed)
    if exact:
        reference_module = _exact_gelu(reference_module)
    findings = problems + _compare_modes(kind, reference_module, module, inputs, pairs)
    if not findings and spec.qkv_bias:
        findings = _with_qkv_bias(kind, spec, reference, yours, exact)
    if not findings:  # right on the CPU; and on a GPU?
        findings = _device(kind, reference_module, module, inputs[0])
    return findings, _renamed(renamed)


def _device(kind, reference_module, module, args):
    """A tensor made in forward without the input's device: right on the CPU, where every check
    runs, and an error on a GPU. The chapter's code makes none (it passes device=)."""
    chapter = made_on_the_cpu(reference_module, args)
    extra = [c for c in made_on_the_cpu(module, args) if c not in chapter]
    if not extra:
        return []
    return [problem("made_on_cpu", where=kind, calls=names(extra), example=extra[0])]


def _with_qkv_bias(kind, spec, reference, yours, exact):
    """Findings for yours built with qkv_bias=True, as chapter 5 builds GPT-2 to load its weights:
    W_query, W_key and W_value get biases, and the outputs still agree."""
    cfg = {**CONFIG, "qkv_bias": True}
    reference_module, module, problems, _ = _prepare(spec, reference, yours, cfg)
    missing = [p.params["name"] for p in problems if p.code == "missing_param"]
    if missing:
        return [problem("qkv_bias_ignored", names=names(missing))]
    if module is None or _unaligned(problems):
        return [problem("with_qkv_bias")] + problems
    if exact:
        reference_module = _exact_gelu(reference_module)
    found = compare(kind, reference_module.eval(), module.eval(), spec.inputs(cfg))
    return [problem("with_qkv_bias")] + found if found else []


def _review_function(spec, yours):
    if isinstance(yours, type):
        return [problem("expected_function", name=yours.__name__)], []
    torch.manual_seed(SEED)
    model = gpt.GPTModel(CONFIG).eval()
    perturb(model)
    inputs = spec.inputs(CONFIG)
    run(yours, (model, *inputs[0]))  # a stub raises NotImplementedError here
    return compare("generate_text_simple", model, yours, inputs), []


def _feedback_from(findings, notes, success, **success_params):
    """Feedback: one line per finding, several diagnoses of one behaviour numbered; with no
    finding, the message whose code is `success`, and that code."""
    if any(f.code == "missing_param" for f in findings):  # it says why: no generic line
        findings = [f for f in findings if not f.code.startswith(("first_difference", "probe"))]
    texts = [f.text() for f in findings]
    diagnoses = [i for i, f in enumerate(findings) if f.code in DIAGNOSES]
    if len(diagnoses) > 1:  # two mistakes at once, or one behaviour that several produce
        two = findings[diagnoses[0] - 1].code == "two_mistakes"
        start = diagnoses[0] - two
        if two:
            header = texts[start]
        else:
            header = say("several_mistakes", where=findings[start].params["where"],
                         n=len(diagnoses))
        texts[start:] = numbered(header, [texts[j] for j in diagnoses]) + [
            t for j, t in enumerate(texts) if j > start and j not in diagnoses]
    codes = [f.code for f in findings] or [success]
    return render(texts, codes, say(success, **success_params), [n.text() for n in notes])


def _success_code(spec, reference):
    """The success message says what was compared: dropout only where the chapter's has some."""
    if spec.build is None:
        return "correct_function"
    with torch.random.fork_rng(devices=[]):  # _build seeds: the caller's random state stays
        built = _build(spec, reference, CONFIG)
    has_dropout = any(isinstance(m, nn.Dropout) for m in built.modules())
    return "correct_component" if has_dropout else "correct_component_no_dropout"


def _single(code, **params):
    return Feedback(False, say(code, **params), (code,))


def review_component(yours, reference=None):
    """Feedback(passed, text, codes) on `yours`, a chapter class or generate_text_simple."""
    if yours is None:
        return _single("not_attempted_component")
    if isinstance(yours, nn.Module):
        return _single("pass_class", kind=type(yours).__name__)
    if not callable(yours):
        return _single("not_component", kind=type(yours).__name__)
    kind = getattr(yours if reference is None else reference, "__name__", None)
    if kind not in COMPONENTS:
        return _single("unknown_component" if reference is None else "unknown_reference",
                       name=str(kind), names=names(COMPONENTS))
    spec, name = COMPONENTS[kind], getattr(yours, "__name__", kind)
    reference = reference or spec.reference
    try:
        if spec.build is None:
            findings, notes = _review_function(spec, yours)
        elif not isinstance(yours, type):
            return _single("expected_class", name=name, kind=kind)
        else:
            findings, notes = _review_class(kind, spec, reference, yours)
            if {f.code for f in findings} & DIAGNOSES == NOTES:  # the exact GELU: no bug
                findings, notes = _review_class(kind, spec, reference, yours, exact=True)
                notes += [problem("gelu_erf")]
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort: the diagnoses handle every input we know of
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    feedback = _feedback_from(findings, notes, _success_code(spec, reference), name=name,
                              reference=kind)
    return feedback._replace(codes=feedback.codes + tuple(n.code for n in notes
                                                          if n.code in NOTES))


def check_component(yours, reference=None):
    """Print feedback on `yours`, a chapter class or generate_text_simple (see review_component)."""
    print(review_component(yours, reference).text)


def review_models(yours, reference):
    """Feedback on two built models: the first submodule whose output differs, and why."""
    for model in (yours, reference):
        if isinstance(model, type):
            return _single("models_need_instances", name=model.__name__)
        if not isinstance(model, nn.Module):
            return _single("component_not_module", kind=type(model).__name__)
        if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
            return _single("on_meta")
    kind = type(reference).__name__
    if kind not in COMPONENTS:
        return _single("unknown_reference", name=kind, names=names(COMPONENTS))
    was_training, notes = reference.training, []
    try:
        device = next(reference.parameters(), torch.empty(0)).device
        yours = copy.deepcopy(yours).to(device)  # your model keeps its own weights
        pairs, problems, renamed = align(reference, yours)
        copy_weights(pairs)
        inputs = [tuple(a.to(device) for a in args) for args in inputs_for(kind, reference)]
        run(yours.eval(), inputs[0])
        findings = []
        with torch.random.fork_rng(devices=[]):  # training mode draws: the caller's RNG stays
            if not _unaligned(problems):
                findings = _compare_modes(kind, reference, yours, inputs, pairs)
            if {f.code for f in findings} & DIAGNOSES == NOTES:  # the exact GELU: no bug
                exact = _exact_gelu(copy.deepcopy(reference))
                findings = _compare_modes(kind, exact, yours, inputs, pairs)
                notes = [problem("gelu_erf")]
    except NotAttempted:
        return _single("not_attempted_component")
    except Exception as err:  # a last resort, as in review_component
        return _single("could_not_check", error=f"{type(err).__name__}: {err}")
    finally:
        reference.train(was_training)
    feedback = _feedback_from(problems + findings, _renamed(renamed) + notes, "same_models",
                              reference=kind)
    return feedback._replace(codes=feedback.codes + tuple(n.code for n in notes))


def compare_models(yours, reference):
    """Print where `yours` (a built model) first computes something else than `reference`."""
    print(review_models(yours, reference).text)
