"""Running the learner's code without letting it raise, and comparing what it returns."""

import math
import os
import traceback
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

import gpt
import gpt_engineering
from checker.planted import SEED

RTOL, ATOL = 1e-4, 1e-5  # float32 rewrites (F.layer_norm, einsum, SDPA) agree far closer
# Python's, PyTorch's and the course's own files: a line there is never the learner's. (The
# figures' module is named by its path: importing it would import matplotlib, 1.75 s.)
NOT_YOURS = (os.path.dirname(os.__file__), os.path.dirname(torch.__file__),
             os.path.dirname(__file__), gpt.__file__, gpt_engineering.__file__,
             os.path.join(os.path.dirname(gpt.__file__), "gpt_figures.py"))


class Raised(NamedTuple):
    error: str  # "TypeName: message"
    at: dict  # {"function", "line", "source"}: the learner's own line that raised, or None


class NotAttempted(Exception):
    """The learner's code raised NotImplementedError: a stub not filled in yet."""


def raised(err):
    """What `err` says, and the learner's own line where it was raised (the last of the traceback
    that is not in Python, PyTorch or the course's modules)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not f.filename.startswith(NOT_YOURS) and "site-packages" not in f.filename]
    at = None
    if frames:
        last = frames[-1]
        at = {"function": last.name, "line": last.lineno, "source": (last.line or "").strip()}
    return Raised(f"{type(err).__name__}: {err}", at)


def run(function, args, grad=False):
    """function(*args) on copies of the tensors in `args`, or Raised if it raises; NotAttempted
    for a stub (not for a container such as nn.ModuleList called as if it had a forward)."""
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with torch.set_grad_enabled(grad):
            return function(*args)
    except NotImplementedError as err:
        if traceback.extract_tb(err.__traceback__)[-1].name != "_forward_unimplemented":
            raise NotAttempted from err
        return raised(err)
    except Exception as err:  # a learner's code may fail in any way: that is a finding
        return raised(err)


def changes_input(function, args):
    """The index of the first tensor in `args` that function(*args) changes in place, or None."""
    copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with torch.no_grad():
            function(*copies)
    except Exception:  # a stub or an error: run() reports it
        return None
    for i, (a, c) in enumerate(zip(args, copies)):
        if isinstance(a, torch.Tensor) and (a.shape != c.shape or not torch.equal(a, c)):
            return i
    return None


def seeded(function, args, seed=SEED):
    torch.manual_seed(seed)
    return run(function, args)


def tolerance(args):
    """Float32 rounding grows with the size of the values: rows with a mean of 100 get 100x."""
    x = args[0] if args and isinstance(args[0], torch.Tensor) else torch.zeros(1)
    if not x.is_floating_point():
        return ATOL
    return ATOL * max(1.0, x.abs().mean().item())


def same(a, b, atol=ATOL):
    """Two tensors of one shape that agree; an exception never equals anything."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False
    return torch.allclose(a.double(), b.double(), rtol=RTOL, atol=atol, equal_nan=True)


def gap(a, b):
    return (a.double() - b.double()).abs().nan_to_num(nan=math.inf)


def shape(out):
    return tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__


def number(x):
    return f"{round(float(x), 4) + 0.0:g}"


def join(path, name):
    """A submodule's name inside the module at `path`."""
    if path and name:
        return f"{path}.{name}"
    return path or name


class Dropouts(TorchFunctionMode):
    """Inside `with Dropouts(replace):` every dropout call, F.dropout (which nn.Dropout calls),
    torch.dropout or an imported `dropout`, returns replace(x, p, training) instead."""

    def __init__(self, replace):
        super().__init__()
        self.replace = replace

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.dropout:
            return self.replace(args[0], kwargs.get("p", 0.5), kwargs.get("training", True))
        if func is torch.dropout:
            return self.replace(*args, **kwargs)
        return func(*args, **kwargs)


def dropout_rates(function, args):
    """The rates of the dropout calls that function(*args) makes while dropping, in order."""
    rates = []

    def record(x, p, training):
        if training and p:
            rates.append(p)
        return x

    with Dropouts(record):
        run(function, args)
    return rates


# The functions that make a new tensor from sizes or values: on the CPU unless given a device.
FACTORIES = {torch.arange, torch.ones, torch.zeros, torch.full, torch.empty, torch.tensor,
             torch.rand, torch.randn, torch.randint, torch.eye, torch.linspace}


class Factories(TorchFunctionMode):
    """Inside `with Factories() as made:`, made.calls collects the name of every factory call
    without a device= whose tensor has one dimension or more. (A 0-dimension tensor, such as a
    constant, combines with tensors on any device; one with dimensions left on the CPU does
    not.)"""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if (func in FACTORIES and kwargs.get("device") is None and isinstance(out, torch.Tensor)
                and out.dim()):
            self.calls.append(f"torch.{func.__name__}")
        return out


def made_on_the_cpu(function, args):
    """The factory calls of function(*args) that leave a tensor on the CPU, whatever device the
    input is on (see Factories), in the order first made."""
    with Factories() as made:
        run(function, args)
    return list(dict.fromkeys(made.calls))
