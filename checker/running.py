"""Running the learner's code without letting it raise, and comparing what it returns."""

import math
import os
import traceback
from typing import NamedTuple

import torch

import gpt
from checker.planted import SEED

RTOL, ATOL = 1e-4, 1e-5  # float32 rewrites (F.layer_norm, einsum, SDPA) agree far closer
NOT_YOURS = (os.path.dirname(os.__file__), os.path.dirname(torch.__file__),
             os.path.dirname(__file__), gpt.__file__)


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
    """function(*args), or Raised if it raises; NotAttempted for a stub."""
    try:
        with torch.set_grad_enabled(grad):
            return function(*args)
    except NotImplementedError as err:
        raise NotAttempted from err
    except Exception as err:  # a learner's code may fail in any way: that is a finding
        return raised(err)


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
