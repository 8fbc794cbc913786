"""Matching: which known mistake (a mutant of the chapter's code, checker/planted.py) gives the
learner's outputs on every input, one or two at once. Most are planted; two are made to measure
from the learner's module (its own eps; GELU's constants read off its outputs)."""

import functools
import itertools
import re

import torch

from checker import planted
from checker.feedback import diagnosis, problem
from checker.planted import COMPONENTS, MEASURED
from checker.running import Raised, run, same, tolerance


def _mistakes_for(kind, reference, yours):
    """{code: (mutant, message params)}: the planted mistakes, plus those made to measure: a
    layer norm whose own `eps` differs is tried with that value, a GELU of the tanh form with
    the constants read off its outputs (each must then match on every input)."""
    mistakes = {code: (mutant, {}) for code, mutant in COMPONENTS[kind].mistakes.items()}
    eps = getattr(yours, "eps", None)
    if kind == "LayerNorm" and isinstance(eps, (int, float)) and eps != reference.eps:
        mutant = functools.partial(planted.layer_norm, eps_value=eps)
        mistakes["ln_eps_value"] = (mutant, {"eps": eps})
    constants = _gelu_constants(yours) if kind == "GELU" else None
    if constants is not None:
        a, b = constants
        mutant = functools.partial(_gelu_with, constant=a, cubic=b)
        mistakes["gelu_constants"] = (mutant, _said_constants(a, b))
    return mistakes


def _said_constants(a, b):
    """a and b as the message says them: the chapter's own where they are within what reading
    them off float32 outputs can tell (a typo or a rounding such as 0.7978 is 1e-4 or more)."""
    same_a = abs(a / planted.TANH_CONSTANT - 1) < 5e-5
    same_b = abs(b / planted.CUBIC_CONSTANT - 1) < 5e-4
    return {"a": "sqrt(2 / pi)" if same_a else f"{a:.4g}",
            "b": str(planted.CUBIC_CONSTANT) if same_b else f"{b:.4g}"}


def _gelu_with(module, x, constant, cubic):
    return planted.gelu_tanh(x, constant=constant, cubic=cubic)


def _gelu_constants(yours):
    """(a, b) such that yours is 0.5 x (1 + tanh(a (x + b x^3))) at x = 1 and 2, read off its
    outputs there; None where that form cannot give them, or where a and b are the chapter's.
    Solving at two points proves nothing: match() then tries the pair on every input."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    y = run(yours, (x,))
    if not (isinstance(y, torch.Tensor) and y.shape == x.shape and y.is_floating_point()):
        return None
    inner = torch.atanh(2 * y.double() / x - 1)  # a x + a b x^3 at each point
    if not bool(inner.isfinite().all()):
        return None
    ab = (inner[1] - 2 * inner[0]) / 6  # from a + ab = inner[0] and 2a + 8ab = inner[1]
    a = (inner[0] - ab).item()
    if abs(a) < 1e-3:
        return None
    b = ab.item() / a
    if abs(a - planted.TANH_CONSTANT) < 1e-6 and abs(b - planted.CUBIC_CONSTANT) < 1e-6:
        return None
    return a, b


def _both(a, b):
    """One mutant with two mistakes planted, where both change keywords of one function."""
    if not (isinstance(a, functools.partial) and isinstance(b, functools.partial)):
        return None
    if a.func is not b.func or a.keywords.keys() & b.keywords.keys():
        return None
    return functools.partial(a.func, **a.keywords, **b.keywords)


def outputs(module, inputs, model):
    """Each input's output; a function (generate_text_simple) is called with the model first."""
    if model is None:
        return [run(module, args) for args in inputs]
    return [run(module, (model, *args)) for args in inputs]


def match(kind, reference, yours, inputs, at, model=None, your_outs=None):
    """The known mistakes (one, else two at once) whose mutant gives your outputs."""
    your_outs = your_outs or outputs(yours, inputs, model)

    def fits(mutant):  # the same outputs, and the same error where yours raises one
        for y, args in zip(your_outs, inputs):
            out = run(mutant, (reference, *args))
            if not (_same_error(y, out) or same(y, out, tolerance(args))):
                return False
        return True

    mistakes = _mistakes_for(kind, reference, yours)
    single = [diagnosis(code, where=at, **params) for code, (mutant, params) in mistakes.items()
              if fits(mutant)]
    own_eps = [f for f in single if f.code == "ln_eps_value"]
    if own_eps:  # yours with its own eps: the one explanation (a tiny eps fits ln_no_eps too)
        return own_eps
    if any(f.code not in MEASURED for f in single):  # a named mistake says more than constants
        single = [f for f in single if f.code not in MEASURED]
    if single or not COMPONENTS[kind].pairs:
        return single
    for (a, (mutant_a, params_a)), (b, (mutant_b, params_b)) in itertools.combinations(
            mistakes.items(), 2):
        both = _both(mutant_a, mutant_b)
        if both and fits(both):
            return [problem("two_mistakes", where=at), diagnosis(a, where=at, **params_a),
                    diagnosis(b, where=at, **params_b)]
    return []


def _same_error(a, b):
    """Two errors of one kind and one wording, whatever the sizes they name: an uncut mask and
    a reshape to context_length both fail on a short input, with different messages."""
    if not (isinstance(a, Raised) and isinstance(b, Raised)):
        return False
    return re.sub(r"\d+", "#", a.error) == re.sub(r"\d+", "#", b.error)
