"""Pairing the learner's parameters with the chapter's by the book's names, and comparing the
values both start from before any weight is copied."""

from typing import NamedTuple

import torch

from checker.feedback import names, problem, say
from checker.planted import SEED
from checker.running import number

FUSED_QKV = ("qkv", "W_qkv", "c_attn")  # accepted names of one (3 * d_out, d_in) projection
QKV = ("W_query", "W_key", "W_value")
ALIASES = {"scale": "weight", "shift": "bias"}  # nn.LayerNorm's names for LayerNorm's


class Pair(NamedTuple):  # a parameter of yours and the chapter's that it stands for
    name: str
    yours: torch.Tensor
    book_name: str
    reference: torch.Tensor


def _fused_rows(your_params, name, param):
    """(fused name, the rows of it that stand for `name`) or None; see FUSED_QKV."""
    prefix, _, leaf = name.rpartition(".")
    parent, _, projection = prefix.rpartition(".")
    if projection not in QKV:
        return None
    size, part = param.shape[0], QKV.index(projection)
    for fused in FUSED_QKV:
        fused_name = f"{parent}.{fused}.{leaf}".lstrip(".")
        fused_param = your_params.get(fused_name)
        if fused_param is not None and fused_param.shape == (3 * size, *param.shape[1:]):
            return fused_name, fused_param[part * size:(part + 1) * size]
    return None


def _shared(yours):
    """Findings for one module object that sits at several places ([block] * n)."""
    places = {}
    for name, module in yours.named_modules(remove_duplicate=False):
        if name and any(True for _ in module.parameters()):
            places.setdefault(id(module), []).append(name)
    groups = [p for p in places.values() if len(p) > 1]
    inner = {n for p in groups for n in p}
    return [problem("shared_module", names=names(p)) for p in groups
            if p[0].rpartition(".")[0] not in inner]


def _tied(yours):
    """Findings for one parameter held under several names (weight tying, as GPT-2 does)."""
    places = {}
    for name, param in yours.named_parameters(remove_duplicate=False):
        places.setdefault(id(param), []).append(name)
    return [problem("tied_weights", names=names(p)) for p in places.values() if len(p) > 1]


def _your_name(your_params, name):
    """The name under which yours holds the chapter's parameter `name`, or None."""
    prefix, _, leaf = name.rpartition(".")
    for candidate in (name, f"{prefix}.{ALIASES.get(leaf)}".lstrip(".")):
        if candidate in your_params:
            return candidate
    return None


def _counterpart(your_params, your_buffers, name, param):
    """(your name, your tensor, the name to say, a finding or None) for the chapter's parameter
    `name`: yours by that name or an alias, rows of a fused projection, a buffer (saved and
    moved along, but never trained), or nothing (None, None, name, missing_param)."""
    found = _your_name(your_params, name)
    if found is not None:
        return found, your_params[found], name, None
    fused = _fused_rows(your_params, name, param)
    if fused:
        prefix, _, leaf = name.rpartition(".")
        return (*fused, f"{prefix.rpartition('.')[0]}.W_query/W_key/W_value.{leaf}".lstrip("."),
                None)
    buffer = _your_name(your_buffers, name)
    if buffer is not None:
        return buffer, your_buffers[buffer], name, problem("buffer_not_parameter", name=buffer)
    return None, None, name, problem("missing_param", name=name)


def align(reference, yours):
    """Pairs, problems, and {your name: book name} for renames: nn.LayerNorm's weight and bias
    for scale and shift, and one fused query-key-value projection (FUSED_QKV) for W_query,
    W_key and W_value."""
    shared = _shared(yours)
    if shared:
        return [], shared, {}
    tied = _tied(yours)
    if tied:
        return [], tied, {}
    your_params, book = dict(yours.named_parameters()), dict(reference.named_parameters())
    your_buffers, book_buffers = dict(yours.named_buffers()), dict(reference.named_buffers())
    pairs, problems, renamed = [], [], {}
    for name, param in book.items():
        found, tensor, name, finding = _counterpart(your_params, your_buffers, name, param)
        problems += [finding] if finding else []
        if found is None:
            continue
        if tensor.dim() == 2 and tensor.shape == param.shape[::-1] != param.shape:
            problems.append(problem("param_swapped", name=found, yours=tuple(tensor.shape),
                                    expected=tuple(param.shape)))
        elif tensor.shape != param.shape:
            problems.append(problem("param_shape", name=found, yours=tuple(tensor.shape),
                                    expected=tuple(param.shape)))
        else:  # a buffer's values are copied too: the outputs are still compared
            pairs.append(Pair(found, tensor, name, param))
        if found != name:
            renamed[found] = name
    for name in your_params:
        if name in renamed or name in book:
            continue
        if name.endswith(".bias") and name[:-4] + "weight" in book:  # a layer with bias=False
            problems.append(problem("extra_bias", name=name))
        elif name in book_buffers:  # the mask, as a parameter the optimizer would train
            problems.append(problem("parameter_not_buffer", name=name))
        else:
            problems.append(problem("extra_param", name=name,
                                    shape=tuple(your_params[name].shape)))
    swapped = any(p.code == "param_swapped" for p in problems)
    wider = [p for p in problems if p.code == "param_shape" and _four_times(p.params)]
    if wider and not swapped:  # the 4x hidden layer: one sentence says it all
        problems = [problem("ff_no_expansion", **wider[0].params)] + [
            p for p in problems if p.code != "param_shape"]
    problems = _plain_tensors(yours, book, problems)
    if any(p.code in ("extra_param", "extra_bias") for p in problems):
        unmatched = any(p.code in ("missing_param", "param_shape") for p in problems)
        problems.append(problem("align_first" if unmatched else "remove_extra"))
    return pairs, problems, renamed


def _plain_tensors(yours, book, problems):
    """Tensors held as plain attributes: not parameters (then not trained), nor buffers (then
    not in the state_dict, and left behind by .to(device))."""
    for module_name, module in yours.named_modules():
        for attribute, value in vars(module).items():
            if not isinstance(value, torch.Tensor):
                continue
            name = f"{module_name}.{attribute}".lstrip(".")
            book_name = _book_name(name, book)
            if book_name is not None:  # said instead of "no parameter {name}"
                problems = [p for p in problems if p.params.get("name") != book_name]
                problems.append(problem("not_parameter", name=name))
            elif value.dim():  # a 0-dimension constant combines with tensors on any device
                problems.append(problem("not_buffer", name=name))
    return problems


def _book_name(name, book):
    """The chapter's name of the parameter that yours calls `name` (nn.LayerNorm's names too)."""
    prefix, _, leaf = name.rpartition(".")
    aliases = {alias: own for own, alias in ALIASES.items()}
    for candidate in (name, f"{prefix}.{aliases.get(leaf)}".lstrip(".")):
        if candidate in book:
            return candidate
    return None


def _four_times(params):
    """Whether yours is the chapter's shape with one size 4 times smaller (a hidden layer of
    emb_dim units), and not, say, the two sizes of nn.Linear swapped."""
    yours, expected = params["yours"], params["expected"]
    if len(yours) != len(expected):
        return False
    smaller = [4 * y == e for y, e in zip(yours, expected)]
    return sum(smaller) == 1 and all(s or y == e for s, y, e in zip(smaller, yours, expected))


def copy_weights(pairs):
    for pair in pairs:
        pair.yours.data.copy_(pair.reference)


def perturb(module):
    """Random norm scales, shifts and biases, so that a step that skips them shows."""
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for param in module.parameters():
            if param.dim() == 1:
                param.add_(0.5 * torch.randn(param.shape, generator=g))


def initial_values(fixed, module, renamed):
    """Findings for the values the chapter starts from whatever the seed (`fixed`: {book name:
    tensor}, a norm's scale and shift, the mask) where the learner's module starts elsewhere."""
    found = []
    for name, yours in module.state_dict().items():
        book = fixed.get(renamed.get(name, name))
        if book is None or yours.shape != book.shape:
            continue
        if book.dtype == torch.bool:  # a mask: True (or -inf) above the diagonal, or its inverse
            if not (torch.equal(yours.bool(), book) or torch.equal(yours.bool(), ~book)):
                row, col = (yours.bool() != book).nonzero()[0].tolist()
                found.append(problem("initial_mask", name=name, row=row, column=col))
        elif not torch.equal(yours.to(book.dtype), book):
            found.append(problem("initial_value", name=name, yours=_describe(yours),
                                 expected=_describe(book)))
    return found


def _describe(t):
    t = t.detach().double().flatten()
    if bool((t == t[0]).all()):
        return say("all_values", value=number(t[0]))
    return say("value_range", low=number(t.min()), high=number(t.max()))
