"""The feedback both checkers give: one Feedback, one way to say a message, one renderer.

The texts live in exercises/messages.py, one table per language; `set_language` picks the table.
"""

from typing import NamedTuple

from exercises.messages import MESSAGES

_language = "en"


def set_language(language):
    """Show feedback and hints in `language`, a key of MESSAGES."""
    global _language
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, got {type(language).__name__}")
    if language not in MESSAGES:
        raise ValueError(f"no messages in {language!r}; choose one of {sorted(MESSAGES)}")
    _language = language


def messages():
    """The current language's table."""
    return MESSAGES[_language]


def say(code, **params):
    return MESSAGES[_language][code].format(**params)


def names(items):
    """Items joined with the language's list separator (", " or "、")."""
    return say("sep_names").join(str(item) for item in items)


def numbered(header, texts):
    """`header`, then the texts as (1) ..., (2) ...: one behaviour that several mistakes fit."""
    return [header] + [say("numbered", i=i, text=text) for i, text in enumerate(texts, 1)]


class Feedback(NamedTuple):
    passed: bool
    text: str
    codes: tuple  # the diagnosis codes behind the text, in order


def render(lines, codes, success, notes=()):
    """A pass (`success`, then the notes) when there are no lines, else "Not quite:", one bullet
    per line, then the notes."""
    codes = tuple(dict.fromkeys(codes))
    if not lines:
        return Feedback(True, "\n".join([success, *notes]), codes)
    bullets = [f"  - {line}" for line in lines]
    return Feedback(False, "\n".join([say("not_quite"), *bullets, *notes]), codes)
