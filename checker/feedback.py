"""What the checks find and how they say it: Finding, Feedback, the language of the texts.

The English texts are in checker/messages.py; the Chinese ones come from the catalog
locale/zh/checker/messages.po, which tools/zh_sync.py compiles into checker/messages_zh.mo (a
message not translated yet, or changed since, shows its English text). `set_language` picks one.
"""

import gettext
from pathlib import Path
from typing import NamedTuple

from checker.messages import ENGLISH

with open(Path(__file__).with_name("messages_zh.mo"), "rb") as compiled:
    _CHINESE = gettext.GNUTranslations(compiled)
MESSAGES = {"en": ENGLISH, "zh": {code: _CHINESE.pgettext(code, text)
                                  for code, text in ENGLISH.items()}}
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


def sentences(texts):
    """Sentences of one line: a space between them, none after Chinese full stops."""
    return ("" if _language == "zh" else " ").join(texts)


def names(items):
    """Items joined with the language's list separator (", " or "、")."""
    return say("sep_names").join(str(item) for item in items)


def numbered(header, texts):
    """`header`, then the texts as (1) ..., (2) ...: one behaviour that several mistakes fit."""
    return [header] + [say("numbered", i=i, text=text) for i, text in enumerate(texts, 1)]


class Finding(NamedTuple):
    """One line of feedback: its message code, the message's parameters, and its kind:
    "problem" (what is wrong, for sure), "place" (where the outputs first differ), "probe" (what
    a look there shows), "diagnosis" (a known mistake that gives the same outputs), "note"."""

    code: str
    params: dict
    kind: str = "problem"

    def text(self):
        return say(self.code, **self.params)


def _finding(kind):
    return lambda code, **params: Finding(code, params, kind)


problem, place, probe, diagnosis = map(_finding, ("problem", "place", "probe", "diagnosis"))


class Feedback(NamedTuple):
    passed: bool
    text: str
    codes: tuple  # the message codes behind the text, in order


def render(lines, codes, success, notes=()):
    """A pass (`success`, then the notes) when there are no lines, else "Not quite:", one bullet
    per line, then the notes."""
    codes = tuple(dict.fromkeys(codes))
    if not lines:
        return Feedback(True, "\n".join([success, *notes]), codes)
    bullets = [f"  - {line}" for line in lines]
    return Feedback(False, "\n".join([say("not_quite"), *bullets, *notes]), codes)
