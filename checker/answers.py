"""Reading the exercises' answers, and their hints: the parts of checker/exercises.py that do not
depend on what an exercise asks."""

import numbers

import torch

from checker.feedback import messages, say


class Hint:
    """hint_4_N(): a nudge, more specific at each call, then a pointer to the solution."""

    def __init__(self, exercise):
        self.exercise, self.calls = exercise, 0

    def __call__(self):
        table = messages()
        tiers = [table[key] for key in sorted(table) if key.startswith(f"hint_{self.exercise}_")]
        n, self.calls = self.calls, self.calls + 1
        if n >= len(tiers):
            text = say("no_more_hints", exercise=self.exercise)
        else:
            text = say("hint", n=n + 1, total=len(tiers), text=tiers[n])
            text += say("hint_more") if n + 1 < len(tiers) else ""
        print(text)

    def __repr__(self):  # shown if the parentheses are left out
        return say("hint_repr", exercise=self.exercise)


def read_number(value, whole):
    """(value as an int or float, None), or (None, (code, params)) saying why it is not one."""
    if value is None:
        return None, ("not_filled", {})
    if isinstance(value, torch.Tensor):
        if value.is_meta:
            return None, ("meta_tensor", {})
        if value.numel() != 1:
            return None, ("not_scalar", {"shape": list(value.shape)})
        value = value.item()
    elif type(value).__module__ == "numpy" and getattr(value, "size", None) == 1:
        value = value.item()  # a numpy scalar or one-element array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None, ("not_a_number", {"kind": type(value).__name__})
    if isinstance(value, numbers.Integral):
        return int(value), None
    if whole and not float(value).is_integer():
        return None, ("not_whole", {})
    return (int(value) if whole else float(value)), None


def read_numbers(subject, answers, whole):
    """({field: number}, remarks) for the {field: raw value} answers, a remark for each that is
    no number; `whole`: the fields that must be whole numbers (counts)."""
    values, remarks = {}, []
    for field, raw in answers.items():
        values[field], why = read_number(raw, field in whole)
        if why:
            remarks.append((subject, field, [why]))
    return values, remarks
