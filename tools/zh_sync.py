"""Keep the Chinese edition (zh/) in step with the English notebooks, through gettext catalogs.

    python tools/zh_sync.py           # update the catalogs and the glossary file, regenerate zh/
    python tools/zh_sync.py status    # per catalog: translated, fuzzy, untranslated, problems

One catalog per English notebook, locale/zh/<folder>/<name>.po, one for checker/messages.py, and
locale/zh/shared.po for each text that several notebooks share, translated there once (guide:
GLOSSARY.zh.md). `update` makes a new entry empty, a changed one fuzzy, drops a removed one (its
translation still goes to a cell that moved), and re-executes a notebook with the language switch
when its code, the English outputs or the checker change. An entry without a current translation
shows its English text marked PENDING, so an English edit lands before its translation and the
Chinese notebook says what is not translated yet. `audit` (tests/tooling/test_zh_sync.py) and
`status` report what keeps the translation from being faithful and current, and count what is
still to translate."""

import argparse
import ast
import copy
import difflib
import functools
import hashlib
import io
import json
import math
import os
import re
import runpy
import string
import subprocess
import sys
import tokenize
from datetime import datetime, timezone
from pathlib import Path
from xml.sax.saxutils import escape

import nbformat
import polib
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "exercises", "solutions", "practice", "bonus")
CODE_FOLDERS = ("exercises", "practice", "solutions")  # where code cells are translated too
LOCALE = Path("locale") / "zh"
GLOSSARY_FILE = LOCALE / "glossary.tbx"
SHARED = LOCALE / "shared.po"  # the texts several notebooks share, each translated once
PENDING = "〔待译〕"  # marks English shown where a translation is missing or out of date
SECONDS_PER_RUN = 6  # a re-executed Chinese notebook, on two cores: said before a run starts
KEY = "zh"  # the notebook metadata this tool owns
CODE_NOTE = "code: translate the comments and strings only; the code stays as it is"
MARKDOWN_NOTE = ("keep exactly: formulas, link targets, code spans, numbers, heading levels; one "
                 "line per paragraph")
HEADER = {"Project-Id-Version": "llm-ch4", "Report-Msgid-Bugs-To": "", "Last-Translator": "",
          "Language-Team": "Chinese (Simplified), see GLOSSARY.zh.md", "Language": "zh_CN",
          "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8",
          "Content-Transfer-Encoding": "8bit", "Plural-Forms": "nplurals=1; plural=0;"}

SWITCH_ID = "zh-language-switch"
SWITCH_SOURCE = """\
# 练习的检查和提示用中文显示（改成 "en" 则显示英文）
import checker

checker.set_language("zh")"""
IMPORTS_CHECKS = re.compile(r"^(?:from checker(?:\.\w+)? import|import checker)", re.MULTILINE)
# Calls whose output is in the language: the exercises' checks and hints, the component checker.
FEEDBACK = re.compile(
    r"\b(?:(?:check|review|hint)_\d+_\d+|(?:check|review)_component|(?:compare|review)_models)\b")
CHECKER = Path("checker")  # the checks' code and texts: the feedback the notebooks show
# The checks' messages: English in checker/messages.py, one catalog entry per message (msgctxt =
# its code) where a notebook's catalog would lie, compiled into checker/messages_zh.mo, which the
# checker reads with Python's gettext.
MESSAGES_EN, MESSAGES_ZH = CHECKER / "messages.py", CHECKER / "messages_zh.mo"
MESSAGE_NOTE = "a check's message: keep each {placeholder}, identifier and code as it is"
FINDINGS = ("generated", "run", "untranslated", "changed", "text", "style")  # an audit's lists
HEADERS = {  # a catalog's header comment, by the suffix of its English file
    ".ipynb": "Chinese translation of {}: one entry per cell, msgctxt = the cell id.\nKept by "
              "tools/zh_sync.py; see GLOSSARY.zh.md.",
    ".py": "Chinese translation of the checks' messages ({}): one entry per message, msgctxt = its "
           "code.\nKept by tools/zh_sync.py, which compiles it into checker/messages_zh.mo; see "
           "GLOSSARY.zh.md.",
    "shared": "Chinese translation of the texts that several notebooks share: one entry per text, "
              "translated once\nfor every notebook listed in its references. Kept by "
              "tools/zh_sync.py; see GLOSSARY.zh.md."}


# The parts of a markdown text that a translation must carry over unchanged.
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]+`")
COMMENT = re.compile(r"(?:^|[ \t]+)#[ \t].*$", re.MULTILINE)  # a shell or Python comment in a block
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)")  # group 2: the link target
# Numbers of two digits or more, or with a decimal point (a lone digit may become 三, 二 ...).
NUMBER = re.compile(r"\d+(?:[.,]\d+)+|\d{2,}")
HEADING = re.compile(r"^(#{1,6}) ", re.MULTILINE)
CHINESE = re.compile(r"[\u4e00-\u9fff]")
WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+")  # a comment or string with words in it
MAGIC = re.compile(r"^[ \t]*[%!].*$", re.MULTILINE)  # an IPython line magic, e.g. %pip install

# The house style (GLOSSARY.zh.md), checked in the Chinese prose of every markdown entry.
STYLE = {r"\bet al\.": "et al.: cite as Xiong 等人（2020，“…”）",
         r"(?i)\b(?:notebook|bug|panel)s?\b": "English the glossary translates (笔记本, 错误, 子图)",
         "乱码": "乱码 is mojibake: gibberish is 毫无意义的文本", "输出头": "output head: 输出层",
         "面板": "a figure's panel: 子图", r"(?m)^#+ 巩固": "the closing section is ## 整合",
         "附加内容": "bonus: 拓展",
         r"[：。；，！？]\*\* ": "a bold label closes before its punctuation: **选读**。本章",
         # a paper: the year, then the title, within one pair of brackets
         r"“[^“”\n]*”(?:[，,]\s*(?:19|20)\d\d[）)]|（(?:19|20)\d\d)|等人（(?:19|20)\d\d）[，,]\s*“":
             "citation order: Xiong 等人（2020，“…”） or （Xiong 等人，2020，“…”）"}
QUOTED = re.compile(r'"[^"\n]*"')  # ASCII double quotes, paired left to right on a line
# Markdown italics (*text* or _text_, not **bold**) around Chinese: rendered as slanted fake glyphs.
ITALIC = re.compile(r"(?<!\*)\*(?![*\s])[^*\n]+?(?<![*\s])\*(?!\*)"
                    r"|(?<![A-Za-z0-9])_[^_\n]+?_(?![A-Za-z0-9])")
URL = re.compile(r"<?https?://[^\s>)]+>?")
TBX = ('<?xml version="1.0" encoding="UTF-8"?>\n<martif type="TBX" xml:lang="en">\n<martifHeader>'
       "<fileDesc><sourceDesc><p>Generated from GLOSSARY.zh.md by tools/zh_sync.py</p></sourceDesc>"
       "</fileDesc></martifHeader>\n<text><body>\n{}</body></text>\n</martif>\n")
TBX_TERM = '<langSet xml:lang="{}"><tig><term>{}</term></tig></langSet>'


def placeholder_problems(english, chinese):
    """Why a message's translation does not keep its {placeholders}; [] if it does."""
    en, zh = (sorted({name for _, name, _, _ in string.Formatter().parse(text) if name})
              for text in (english, chinese))
    return [] if en == zh else [f"placeholders {en} became {zh}"]


def synced_catalog(catalog, header, items, pool):
    """`catalog` with one entry per (key, English, note, occurrence) of `items`, in their order: a
    new key's entry empty, or translated as `pool` ({English: Chinese}) translates its English; a
    changed English makes the entry fuzzy; the entries of gone keys are dropped; a
    new revision date if an entry changed."""
    entries, result = {e.msgctxt: e for e in catalog}, polib.POFile(wrapwidth=0)
    result.header = header
    for key, text, note, occurrence in items:
        entry = copy.deepcopy(entries.get(key)) or polib.POEntry(msgctxt=key, msgid="")
        entry.obsolete = False
        if entry.msgid != text:
            if entry.msgstr and not entry.fuzzy:
                entry.previous_msgid = entry.msgid
            entry.fuzzy = bool(entry.msgstr)
            entry.msgid = text
        if not entry.translated() and text in pool:  # translated elsewhere
            entry.msgstr, entry.flags, entry.previous_msgid = pool[text], [], None
        entry.comment, entry.occurrences = note, [occurrence]
        result.append(entry)
    return dated(result, catalog)


def dated(result, catalog):
    """`result` with `catalog`'s header fields, and a new revision date if an entry changed.
    (A removed key's entry is gone: `pool` carried its translation to a cell that moved.)"""
    result.metadata = {**HEADER, **catalog.metadata}
    if ([str(e) for e in result] != [str(e) for e in catalog]
            or "PO-Revision-Date" not in catalog.metadata):  # an entry changed
        now = datetime.now(timezone.utc)
        result.metadata["PO-Revision-Date"] = now.strftime("%Y-%m-%d %H:%M+0000")
    return result


def replaced_entry(text, first_notebook, gone):
    """The entry of `gone` that `text` most likely replaces: of those whose first notebook is
    `first_notebook`, the one with the closest English (difflib's ratio, 0.6 or more), or None."""
    candidates = {e.msgid: e for e in gone if e.occurrences[0][0] == first_notebook}
    closest = difflib.get_close_matches(text, candidates, n=1)
    return candidates[closest[0]] if closest else None


def synced_shared(catalog, header, items, pool):
    """The shared catalog: one entry per (English, note, occurrences) of `items`, keyed by its
    English text. A text new here takes `pool`'s translation or, fuzzy, that of the entry it
    replaces (see `replaced_entry`; each old translation goes to one new text at most); texts no
    longer shared are dropped."""
    old, result = {e.msgid: e for e in catalog if not e.obsolete}, polib.POFile(wrapwidth=0)
    result.header = header
    shared_now = {text for text, *_ in items}
    # translated texts no longer shared: an edit of a shared text takes its translation, fuzzy
    gone = [e for e in old.values() if e.msgstr and e.occurrences and e.msgid not in shared_now]
    for text, note, occurrences in items:
        entry = copy.deepcopy(old.get(text))
        if entry is None:
            entry = polib.POEntry(msgid=text, msgstr=pool.get(text, ""))
            replaced = None if entry.msgstr else replaced_entry(text, occurrences[0][0], gone)
            if replaced is not None:
                gone.remove(replaced)
                entry.msgstr, entry.previous_msgid = replaced.msgstr, replaced.msgid
                entry.flags = ["fuzzy"]
        # the first notebook as the reference, all of them in the comment (msgcat and Weblate
        # wrap reference lines, never comments)
        entry.comment = f"{note}\nin {len(occurrences)} notebooks: " + ", ".join(
            f"{notebook}:{number}" for notebook, number in occurrences)
        entry.occurrences = occurrences[:1]
        result.append(entry)
    return dated(result, catalog)


def pending(cell_type, english):
    """English text shown for want of a current translation, marked PENDING: after a heading's
    hashes, else in a paragraph of its own (in front of a first line, it would end a blockquote,
    a list or a table there), or as a first comment line of code (after a Colab form's #@title
    line)."""
    if cell_type == "markdown":
        heading = HEADING.match(english)
        return (english[:heading.end()] + PENDING + " " + english[heading.end():] if heading
                else f"{PENDING}\n\n{english}")
    lines = english.split("\n")
    at = 1 if lines[0].startswith("#@") else 0
    return "\n".join(lines[:at] + [f"# {PENDING}"] + lines[at:])


def compiled(catalog):
    """The checks' catalog as the checker reads it: an entry without a current translation shows
    its English, marked PENDING."""
    marked = copy.deepcopy(catalog)
    for entry in marked:
        if not entry.translated() and not entry.obsolete:
            entry.msgstr, entry.flags = f"{PENDING} {entry.msgid}", []
    return marked.to_binary()


def read(path):
    return nbformat.read(path, as_version=4)


def checks_import(notebook):
    """The index of the cell that imports the checks, or None."""
    return next((i for i, c in enumerate(notebook.cells)
                 if c.cell_type == "code" and IMPORTS_CHECKS.search(c.source)), None)


def carried_parts(text):
    """The parts of a markdown text that a translation keeps, and what is left (the prose)."""
    # A code block is carried over as it is, but for its comments, which may be translated.
    parts = {"code block": [COMMENT.sub("", block) for block in FENCE.findall(text)]}
    prose = FENCE.sub(" ", text)
    parts["code span"] = CODE_SPAN.findall(prose)
    prose = CODE_SPAN.sub(" ", prose)
    parts["formula"] = MATH.findall(prose)
    prose = MATH.sub(" ", prose)
    parts["link target"] = [m[2] for m in LINK.finditer(prose)]
    prose = LINK.sub(r"\1", prose)
    parts["number"] = NUMBER.findall(prose)
    parts["headings"] = [len(h) for h in HEADING.findall(prose)]
    return parts, prose


def translation_problems(english, chinese):
    """Why `chinese` cannot be the translation of `english` (links already adjusted); [] if none."""
    en, en_prose = carried_parts(english)
    zh, zh_prose = carried_parts(chinese)
    problems = ["no Chinese text"] * bool(re.search(r"[A-Za-z]{2}", en_prose)
                                          and not CHINESE.search(zh_prose))
    if en["headings"] != zh["headings"]:
        problems.append(f"headings (levels) {en['headings']} became {zh['headings']}")
    for kind in ("code block", "formula", "link target", "code span", "number"):
        problems += [f"{kind} missing: {p}" for p in sorted(set(en[kind]) - set(zh[kind]))]
        if kind not in ("code span", "number"):  # a translation may add these, never drop one
            problems += [f"{kind} not in the English text: {p}"
                         for p in sorted(set(zh[kind]) - set(en[kind]))]
    return problems


def style_problems(chinese):
    """Breaches of the house style in the prose (no code, formulas, URLs) of a Chinese text."""
    prose = URL.sub(" ", carried_parts(chinese)[1])
    found = [f"ASCII quotes around Chinese text, use “”: {q}" for q in QUOTED.findall(prose)
             if CHINESE.search(q)]
    found += [f"italics on Chinese text, use bold or nothing: {m}" for m in ITALIC.findall(prose)
              if CHINESE.search(m)]
    return found + [f"{why}: {m[0]!r}" for rule, why in STYLE.items()
                    for m in re.finditer(rule, prose)]


class _StringsBlanked(ast.NodeTransformer):
    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):  # an f-string: its fields, in order; the text may move
        node.values = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        return node


def parse(source):
    """The syntax tree of a code cell, each IPython magic line parsed as `pass`."""
    return ast.parse(MAGIC.sub(lambda m: m[0][:len(m[0]) - len(m[0].lstrip())] + "pass", source))


def code_shape(source):
    """The syntax tree with every string emptied (comments are not in it), and the magic lines."""
    return ast.dump(_StringsBlanked().visit(parse(source))), MAGIC.findall(source)


def code_problems(english, chinese):
    """Why `chinese` is not `english` with only its comments and strings translated."""
    try:
        return [] if code_shape(chinese) == code_shape(english) else [
            "the code changed: translate only comments and strings"]
    except SyntaxError as err:
        return [f"the translated code does not parse: {err.msg} (line {err.lineno})"]


def has_words(source):
    """Whether code that parses has words in its comments or strings."""
    try:
        parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError):
        return False
    return any(t.type in (tokenize.COMMENT, tokenize.STRING) and WORDS.search(t.string)
               for t in tokens)


def entry_cells(english, folder):
    """(number from 1, cell) for each cell with an entry: prose, and code with words in comments
    or strings: the setup cell (the first code cell) everywhere, any code cell in CODE_FOLDERS."""
    code = [c for c in english.cells if c.cell_type == "code"]
    return [(n, c) for n, c in enumerate(english.cells, 1) if c.cell_type == "markdown"
            or c.cell_type == "code" and (folder in CODE_FOLDERS or c is code[0])
            and has_words(c.source)]


def load_po(path):
    """The catalog at `path` (an empty one if there is none), its lines never wrapped."""
    return polib.pofile(str(path), wrapwidth=0) if path.is_file() else polib.POFile(wrapwidth=0)


def pool_of(catalog_files):
    """{English text: Chinese} over the translated entries of the catalogs."""
    entries = [e for path in catalog_files for e in polib.pofile(str(path))]
    return {e.msgid: e.msgstr for e in reversed(entries) if e.msgstr and not e.fuzzy}  # first wins


def shown(cell):
    """A code cell's outputs as strict nbval compares them: text only, a stream's runs joined."""
    outputs = []
    for o in cell.outputs:
        if o.output_type == "stream" and outputs and outputs[-1][:2] == ("stream", o.name):
            outputs[-1] = ("stream", o.name, outputs[-1][2] + o.text)
        else:
            outputs.append(("stream", o.name, o.text) if o.output_type == "stream" else
                           (o.output_type, o.get("data", {}).get("text/plain"), o.get("ename")))
    return outputs


def notebook_text(notebook):
    nbformat.validate(notebook)
    return nbformat.writes(notebook).rstrip("\n") + "\n"


def string_pairs(english, chinese):
    """(English, Chinese) for each string a code entry's translation changed, in tree order."""
    def strings(source):
        return [n.value for n in ast.walk(parse(source))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)]

    en, zh = strings(english), strings(chinese)
    return [(e, z) for e, z in zip(en, zh) if e and e != z] if len(en) == len(zh) else []


def is_alias(aside, term):
    """Whether "term (aside)" gives another name of the term: LLM, layer norm, config."""
    words, initials = aside.split(), "".join(w[0] for w in re.split(r"[\s-]+", term) if w)
    if aside.isupper():
        return aside == initials.upper()
    return len(words) == len(term.split()) and all(
        t.lower().startswith(a.lower()) for a, t in zip(words, term.split()))


@functools.lru_cache(maxsize=4)
def shared_texts(root, stamp):
    """{English text: (cell type, [(notebook, cell number), ...])} for the entry texts of two or
    more of the notebooks in `stamp` ((path, mtime, size) each: a changed file is read again). A
    text with a link is never shared: its target depends on the notebook's folder."""
    found = {}
    for path, *_ in stamp:
        english, name = read(path), Path(path).relative_to(root)
        for number, cell in entry_cells(english, name.parts[0]):
            found.setdefault(cell.source, (cell.cell_type, []))[1].append(
                (name.as_posix(), str(number)))
    return {text: (kind, where) for text, (kind, where) in found.items()
            if len({notebook for notebook, _ in where}) > 1 and not LINK.search(text)}


def glossary_terms(english, chinese):
    """(English term, Chinese term, note) for one glossary row: "a / b" and "a, b" give a term
    each (paired with the Chinese side when it splits the same way), an English "(...)" another
    name of the term or, when it only explains, the note (Weblate matches terms literally)."""
    for separator in (" / ", ", "):
        outside = re.escape(separator) + r"(?![^(（]*[)）])"  # no ")" before the next "("
        en, zh = re.split(outside, english), re.split(outside, chinese)
        if len(en) > 1:
            pairs = zip(en, zh) if len(en) == len(zh) else ((term, chinese) for term in en)
            return [triple for e, z in pairs for triple in glossary_terms(e, z)]
    asides = re.findall(r"\(([^()]*)\)", english)
    term = " ".join(re.sub(r"\([^()]*\)", " ", english).split())
    aliases = [a for a in asides if is_alias(a, term)]
    note = "; ".join(a for a in asides if a not in aliases and len(a) > 1)
    return [(term, chinese, note)] + [(alias, chinese, "") for alias in aliases]


def glossary_tbx(markdown):
    """The tables under GLOSSARY.zh.md's "## Glossary" as TBX, the terminology format Weblate and
    other translation tools import: one entry per English term that can appear in a text."""
    rows = []
    for line in markdown.partition("\n## Glossary\n")[2].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] == "English" or set(cells[0]) <= set("-: "):
            continue
        for en, zh, aside in glossary_terms(cells[0], cells[1]):
            notes = "; ".join(n for n in (aside, cells[2]) if n).replace("`", "")
            note = f"<note>{escape(notes)}</note>" if notes else ""
            terms = "".join(TBX_TERM.format(lang, escape(term.replace("`", "").strip()))
                            for lang, term in (("en", en), ("zh-Hans", zh)))
            rows.append(f'  <termEntry id="t{len(rows) + 1}">{note}{terms}</termEntry>\n')
    return TBX.format("".join(rows))


class Course:
    """The English notebooks under `root`, their catalogs and their Chinese notebooks."""

    def __init__(self, root=ROOT):
        self.root = Path(root)

    def files(self, under=".", suffix=".ipynb"):  # the English notebooks by default
        return sorted(p for f in FOLDERS for p in (self.root / under / f).rglob(f"*{suffix}")
                      if ".ipynb_checkpoints" not in p.parts)

    def name(self, path):
        return path.relative_to(self.root).as_posix()

    def zh_path(self, en_file):
        return self.root / "zh" / en_file.relative_to(self.root)

    def catalog_path(self, en_file):
        return self.root / LOCALE / en_file.relative_to(self.root).with_suffix(".po")

    def catalogs(self):
        """The catalog files of the notebooks' texts: each notebook's, then the shared one. The
        checks' messages (locale/zh/checker/messages.po) are left out on purpose: their
        translations neither translate a notebook's text (`pool_of`) nor are compared with its
        translations (`translation_variants`)."""
        return self.files(LOCALE, ".po") + [self.root / SHARED] * (self.root / SHARED).is_file()

    def shared(self):
        """The texts several notebooks share (see `shared_texts`)."""
        stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in self.files())
        return shared_texts(self.root, stamp)

    def shared_items(self):
        """(English, note, occurrences) for each shared text, in the order first met."""
        return [(text, CODE_NOTE if kind == "code" else MARKDOWN_NOTE, where)
                for text, (kind, where) in self.shared().items()]

    def zh_link(self, target, en_file):
        """A link target of `en_file` as the Chinese notebook needs it: a notebook keeps it (zh/
        has the same layout), other files are one folder up, README.md becomes README.zh.md."""
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|#", target):  # a URL or an anchor in the same page
            return target
        path, hash_sign, fragment = target.partition("#")
        relative = Path(os.path.relpath(en_file.parent / path, self.root))
        outside = relative.parts[0] == ".."
        if outside or relative.suffix == ".ipynb" and relative.parts[0] in FOLDERS:
            return target
        if relative == Path("README.md"):
            relative = Path("README.zh.md")
        new = Path(os.path.relpath(self.root / relative, self.zh_path(en_file).parent)).as_posix()
        return new + hash_sign + fragment

    def english_for_zh(self, source, en_file):
        """The English text with its links pointing where they must from the Chinese notebook."""
        return LINK.sub(lambda m: m[1] + self.zh_link(m[2], en_file), source)

    def write(self, data, path):
        """Write `data` (text or bytes) to `path` unless it holds it already, and say so."""
        data = data.encode() if isinstance(data, str) else data
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"updated: {self.name(path)}")

    def entries(self, en_file):
        """(key, English, note, occurrence) for each entry of `en_file`'s catalog, in order: the
        cells with words of a notebook, or the messages of checker/messages.py."""
        if en_file.suffix == ".py":
            return [(code, text, MESSAGE_NOTE, (self.name(en_file), ""))
                    for code, text in runpy.run_path(str(en_file))["ENGLISH"].items()]
        cells = entry_cells(read(en_file), en_file.relative_to(self.root).parts[0])
        shared = self.shared()  # translated in the shared catalog instead
        return [(cell.id, cell.source, CODE_NOTE if cell.cell_type == "code" else MARKDOWN_NOTE,
                 (self.name(en_file), str(number))) for number, cell in cells
                if cell.source not in shared]

    def synced(self, en_file, pool, catalog=None):
        """`catalog` (by default the one saved) in step with `en_file`, a notebook or the checks'
        messages; `pool` translates new entries."""
        if catalog is None:
            catalog = load_po(self.catalog_path(en_file))
        return synced_catalog(catalog, HEADERS[en_file.suffix].format(self.name(en_file)),
                              self.entries(en_file), pool)

    def execution_stamp(self, zh_notebook, en_notebook):
        """What a re-executed notebook's outputs depend on: code, English outputs, checker."""
        code = [c.source for c in zh_notebook.cells if c.cell_type == "code"]
        outputs = [shown(c) for c in en_notebook.cells if c.cell_type == "code"]
        checker = sorted((self.root / CHECKER).glob("*.py")) + [self.root / MESSAGES_ZH]
        checks = [path.read_bytes().hex() for path in checker]  # its code and messages, not its README
        return hashlib.sha256(json.dumps([code, outputs, checks]).encode()).hexdigest()

    def build(self, en_file, catalog, old, shared=None):
        """(The Chinese notebook, whether it needs a run); one with the switch keeps the outputs of
        `old` (the current one, or None) while its stamp holds. A cell with an entry, in `catalog`
        or in the `shared` catalog (by default the one saved), shows its translation, else its
        English text marked PENDING."""
        english = read(en_file)
        notebook = copy.deepcopy(english)
        shared = load_po(self.root / SHARED) if shared is None else shared
        entries = {e.msgctxt: e for e in catalog if not e.obsolete}
        texts = {e.msgid: e for e in shared if not e.obsolete}
        cells = {cell.id for _, cell in entry_cells(english, en_file.relative_to(self.root).parts[0])}
        for cell in notebook.cells:
            if cell.id not in cells:
                continue
            entry = entries.get(cell.id) or texts.get(cell.source)
            if entry is not None and entry.translated() and entry.msgid == cell.source:
                cell.source = entry.msgstr
            elif cell.cell_type == "markdown":
                cell.source = pending("markdown", self.english_for_zh(cell.source, en_file))
            else:
                cell.source = pending("code", cell.source)
        imports = checks_import(english)
        if imports is None:
            return notebook, False
        notebook.cells.insert(imports + 1, new_code_cell(SWITCH_SOURCE, id=SWITCH_ID))
        stamp = self.execution_stamp(notebook, english)
        if old is None or old.metadata.get(KEY, {}).get("executed_for") != stamp:
            return notebook, True
        old_cells = {c.get("id"): c for c in old.cells}
        for cell in notebook.cells:  # unchanged since the last run: keep its outputs
            if cell.cell_type == "code" and cell.id in old_cells:
                cell.outputs = old_cells[cell.id].outputs
                cell.execution_count = old_cells[cell.id].execution_count
        notebook.metadata[KEY] = {"executed_for": stamp}
        return notebook, False

    def update(self, run=True):
        """Sync the catalogs, compile the checks' one, regenerate zh/ and the glossary file, drop
        what has no English notebook; re-execute (if `run`) and return the stale notebooks."""
        messages = self.root / MESSAGES_EN
        if messages.is_file():  # first: the notebooks' execution stamps read the checker
            catalog = self.synced(messages, {})
            self.write(str(catalog), self.catalog_path(messages))
            self.write(compiled(catalog), self.root / MESSAGES_ZH)
        pool, stale = pool_of(self.catalogs()), []
        shared = self.synced_shared(pool)
        self.write(str(shared), self.root / SHARED)
        for en_file in self.files():
            catalog, zh_file = self.synced(en_file, pool), self.zh_path(en_file)
            notebook, needs_run = self.build(en_file, catalog, read(zh_file) if zh_file.is_file()
                                             else None, shared)
            self.write(str(catalog), self.catalog_path(en_file))
            self.write(notebook_text(notebook), zh_file)
            stale += [zh_file] * needs_run
        kept = {f(p) for p in self.files() for f in (self.zh_path, self.catalog_path)}
        for path in sorted(set(self.files("zh") + self.files(LOCALE, ".po")) - kept):
            path.unlink()
            print(f"removed (its English notebook is gone): {self.name(path)}")
        glossary = self.root / "GLOSSARY.zh.md"
        if glossary.is_file():
            self.write(glossary_tbx(glossary.read_text()), self.root / GLOSSARY_FILE)
        if stale and run:
            minutes = math.ceil(len(stale) * SECONDS_PER_RUN / 60)
            print(f"re-executing {len(stale)} Chinese notebooks whose code, English outputs or "
                  f"checker changed: about {minutes} minute{'s' * (minutes > 1)} on two cores")
        for zh_file in stale if run else []:  # re-execute, then stamp what the outputs come from
            subprocess.run([sys.executable, self.root / "tools" / "run_notebooks.py", zh_file],
                           check=True)
            notebook = read(zh_file)
            english = read(self.root / zh_file.relative_to(self.root / "zh"))
            notebook.metadata[KEY] = {"executed_for": self.execution_stamp(notebook, english)}
            self.write(notebook_text(notebook), zh_file)
        return stale

    def synced_shared(self, pool, catalog=None):
        """The shared catalog (by default the one saved) in step with the texts shared now."""
        if catalog is None:
            catalog = load_po(self.root / SHARED)
        return synced_shared(catalog, HEADERS["shared"], self.shared_items(), pool)

    def audit(self, en_file):
        """What keeps the translation of `en_file` (a notebook, checker/messages.py, or SHARED for
        the shared catalog) from being faithful and current: files out of step, lost formulas,
        placeholders ..., the house style; and what is still to translate (untranslated or
        changed entries, shown in English marked PENDING)."""
        found = {kind: [] for kind in FINDINGS}

        def out_of_step(why, kind="generated"):
            found[kind].append(f"{why}: run `python tools/zh_sync.py`")

        if en_file == SHARED:
            return self._audit_shared(found, out_of_step)
        messages = en_file.suffix == ".py"
        zh_file = self.root / MESSAGES_ZH if messages else self.zh_path(en_file)
        path = self.catalog_path(en_file)
        if not zh_file.is_file() or not path.is_file():
            out_of_step(f"no {self.name(zh_file)} or no catalog {self.name(path)}")
            return found
        catalog = load_po(path)
        entries = {e.msgctxt: e for e in catalog if not e.obsolete}
        self._check_entries(found, [(key, english, note, entries.get(key))
                                    for key, english, note, _ in self.entries(en_file)], en_file)
        self._check_saved(out_of_step, path, catalog, self.synced(en_file, {}, catalog))
        if messages:
            if zh_file.read_bytes() != compiled(catalog):
                out_of_step(f"{self.name(zh_file)} is not compiled from its catalog")
            return found
        english, chinese = read(en_file), read(zh_file)
        generated, needs_run = self.build(en_file, catalog, chinese)
        if needs_run:
            out_of_step("not executed since its code, the English outputs or the checks changed",
                        "run")
        elif notebook_text(generated) != notebook_text(chinese):
            out_of_step(f"{self.name(zh_file)} differs from what its catalog generates")
        if checks_import(english) is not None:
            found["generated"] += unexpected_outputs(english, chinese, entries)
        return found

    def _audit_shared(self, found, out_of_step):
        path = self.root / SHARED
        catalog = load_po(path)
        texts = {e.msgid: e for e in catalog if not e.obsolete}
        self._check_entries(found, [(english[:40], english, note, texts.get(english))
                                    for english, note, _ in self.shared_items()])
        self._check_saved(out_of_step, path, catalog, self.synced_shared({}, catalog))
        return found

    def _check_entries(self, found, entries, en_file=None):
        """Each (key, English, note, entry or None): untranslated, changed, or its problems."""
        problems = {CODE_NOTE: code_problems, MESSAGE_NOTE: placeholder_problems,
                    MARKDOWN_NOTE: lambda english, chinese: translation_problems(
                        self.english_for_zh(english, en_file) if en_file else english, chinese)}
        for key, english, note, entry in entries:
            if entry is None or not entry.msgstr:
                found["untranslated"].append(key)
            elif entry.msgid != english or entry.fuzzy:
                found["changed"].append(key)
            else:
                found["text"] += [f"{key}: {p}" for p in problems[note](english, entry.msgstr)]
                if note == MARKDOWN_NOTE:
                    found["style"] += [f"{key}: {p}" for p in style_problems(entry.msgstr)]

    def _check_saved(self, out_of_step, path, catalog, synced):
        """Whether the catalog file is what the tool writes: in step, and in its form."""
        if not path.is_file() or str(synced) != str(catalog):
            out_of_step(f"{self.name(path)} is not in step with the English texts")
        elif path.read_text(encoding="utf-8") != str(catalog):
            out_of_step(f"{self.name(path)} is saved otherwise than the tool writes it (lines "
                        "wrapped, or not broken after each \\n: Weblate's po_line_wrap must be "
                        "65535, Poedit's wrapping off)")

    def translation_variants(self):
        """{English text: {Chinese: [catalog:msgctxt, ...]}} for each English text that the
        catalogs translate in more than one way (one English text, one translation)."""
        seen = {}
        for path in self.catalogs():
            for e in load_po(path):
                if e.msgstr and not e.obsolete and not e.fuzzy:
                    where = f"{self.name(path)}:{e.msgctxt or 'shared'}"
                    seen.setdefault(e.msgid, {}).setdefault(e.msgstr, []).append(where)
        return {english: found for english, found in seen.items() if len(found) > 1}

    def status(self):
        """A line per catalog, what is wrong with it and what is still to translate; whether no
        catalog has a problem (entries still to translate are none: they show English, marked)."""
        pool, totals, clean = pool_of(self.catalogs()), [0, 0, 0], True
        sources = [(en_file, pool) for en_file in self.files()] + [
            (self.root / MESSAGES_EN, {}), (SHARED, pool)]  # the messages take no notebook's
        for en_file, known in sources:
            if en_file == SHARED:
                path, catalog = self.root / SHARED, self.synced_shared(known)
            else:
                path, catalog = self.catalog_path(en_file), self.synced(en_file, known)
            found = self.audit(en_file)
            counts = [len(catalog.translated_entries()), len(catalog.fuzzy_entries()),
                      len(catalog.untranslated_entries())]
            todo = [f"{n} {what}" for n, what in zip(counts[1:], ("fuzzy", "untranslated")) if n]
            wrong = [f"{n} {what}" for n, what in zip(
                (len(found["text"]), len(found["style"])), ("translation problems", "style problems"))
                if n] + ["out of step"] * bool(found["generated"] or found["run"])
            shown = f" (shown in English, marked {PENDING})" if todo else ""
            print(f"{self.name(path):48} {counts[0]:3}/{sum(counts):<3} translated"
                  + ("; " + ", ".join(todo) + shown if todo else "")
                  + ("; " + ", ".join(wrong) if wrong else ""))
            print("".join(f"    {problem}\n" for kind in ("generated", "run", "text", "style")
                          for problem in found[kind]), end="")
            totals = [t + c for t, c in zip(totals, counts)]
            clean = clean and not wrong
        for english, found in self.translation_variants().items():
            print(f"one English text, {len(found)} translations (make them one): "
                  f"{english.splitlines()[0][:60]!r}")
            print("".join(f"    {zh.splitlines()[0][:50]!r}: {', '.join(where)}\n"
                          for zh, where in found.items()), end="")
            clean = False
        rest = f": those show their English text, marked {PENDING}" if totals[1] + totals[2] else ""
        print(f"{totals[0]} of {sum(totals)} entries translated, {totals[1]} fuzzy, "
              f"{totals[2]} untranslated{rest}")
        return clean


def unexpected_outputs(english, chinese, entries):
    """Cells of a re-executed notebook whose outputs differ from the English ones beyond the
    feedback and the strings translated in the code entries (an error's message, say)."""
    zh_cells = {c.id: c for c in chinese.cells}
    pairs = sorted((pair for e in entries.values() if e.comment == CODE_NOTE and e.translated()
                    and not code_problems(e.msgid, e.msgstr)  # then both parse
                    for pair in string_pairs(e.msgid, e.msgstr)), key=lambda p: -len(p[0]))

    def translated(outputs):
        text = json.dumps(outputs)
        for en, zh in pairs:
            text = text.replace(json.dumps(en)[1:-1], json.dumps(zh)[1:-1])
        return text

    return [f"{cell.id}: outputs differ from the English ones (not a check's feedback)"
            for cell in english.cells if cell.cell_type == "code" and cell.id in zh_cells
            and not FEEDBACK.search(cell.source) and cell.id not in entries
            and translated(shown(cell)) != json.dumps(shown(zh_cells[cell.id]))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:5]))
    parser.add_argument("command", nargs="?", choices=("update", "status"), default="update")
    if parser.parse_args().command == "status":
        sys.exit(0 if Course().status() else 1)
    Course().update()


if __name__ == "__main__":
    main()
