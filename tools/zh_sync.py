"""Keep the Chinese edition (zh/) in step with the English notebooks, through gettext catalogs.

    python tools/zh_sync.py                          # update the catalogs, regenerate zh/
    python tools/zh_sync.py status                   # per catalog: translated, fuzzy, new
    python tools/zh_sync.py todo zh/notebooks/02_layer_norm.ipynb > /tmp/02.md
    python tools/zh_sync.py todo --all zh/notebooks/02_layer_norm.ipynb   # every entry
    python tools/zh_sync.py apply zh/notebooks/02_layer_norm.ipynb /tmp/02.md

The translations live in gettext catalogs, one per English notebook: locale/zh/<folder>/<name>.po
(polib reads and writes them; Poedit, Weblate and the gettext tools edit them too). Each entry is
one cell: its context (msgctxt) is the cell id, msgid the English text, msgstr the Chinese. The
entries are the markdown cells, the setup cell (the first code cell, the same everywhere), and
in exercises/, practice/ and solutions/ the code cells with words in their comments or strings:
comments, docstrings and printed strings are translated, the code must stay the same (checked on
its syntax tree; f-string fields may move within their string). `update` brings each catalog in step with its notebook: a
new cell becomes an empty entry (or takes the translation of the same English text found in any
catalog), a changed English text makes its entry fuzzy with the previous msgid kept, and the
entry of a removed cell becomes obsolete. It then generates each Chinese notebook from its
English notebook and catalog: a copy in which every translated cell reads Chinese and every other
shows its English text (links adjusted), and a notebook that uses the checks gets the language
switch. tests/test_zh_sync.py fails on any fuzzy or untranslated entry, on a translation that
loses a formula, a link, a number or a line of code, and on a Chinese notebook that differs from
what its catalog generates.

Notebooks that use the exercise checks or the component checker (exercises/, solutions/,
practice/) get one extra code cell, the language switch, after the cell that imports them; their
outputs then differ from the English ones, so `update` re-executes them (tools/run_notebooks.py)
whenever their code, the English outputs or the checker's files change, and strict nbval
re-executes them in the suite. Every other Chinese notebook has exactly the English code and
outputs, so it adds no kernel time: the root conftest.py keeps nbval away from it.

Translating (the guide, with the glossary, is GLOSSARY.zh.md): edit the .po file, or let `todo`
print the entries to translate as blocks, each a line `=== <cell id> en:<hash prefix>` followed
by the English text; replace the English with Chinese and `apply` the file (or a JSON object
{"<cell id>": "<Chinese text>"}). Lines starting with `%% ` are notes and are ignored; the hash
prefix lets `apply` refuse a translation whose English text changed after `todo` printed it.
`apply` checks every translation before it writes any.
"""

import argparse
import ast
import copy
import hashlib
import io
import json
import os
import re
import runpy
import subprocess
import sys
import tokenize
from pathlib import Path

import nbformat
import polib
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "exercises", "solutions", "practice", "bonus")
CODE_FOLDERS = ("exercises", "practice", "solutions")  # where code cells are translated too
ZH = "zh"
LOCALE = Path("locale") / "zh"
KEY = "zh"  # the notebook metadata this tool owns
WRAP = 100  # line width of the catalogs' msgid/msgstr lines
CODE_NOTE = "code: translate the comments and strings only; the code stays as it is"

SWITCH_ID = "zh-language-switch"
SWITCH_SOURCE = """\
# 练习的检查和提示用中文显示（改成 "en" 则显示英文）
from exercises import checks

checks.set_language("zh")"""
IMPORTS_CHECKS = re.compile(
    r"^(?:from exercises\.(?:checks|components) import|import exercises\.(?:checks|components)"
    r"|from exercises import (?:checks|components))",
    re.MULTILINE,
)
# Calls whose output is in the language: the exercises' checks and hints, the component checker.
FEEDBACK = re.compile(
    r"\b(?:(?:check|review|hint)_\d+_\d+|(?:check|review)_component|(?:compare|review)_models)\b")
CHECKERS = ("checks.py", "components.py", "feedback.py", "messages.py", "planted.py")  # the feedback

# The parts of a markdown text that a translation must carry over unchanged.
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]+`")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)")  # group 2: the link target
# Numbers of two digits or more, or with a decimal point: a lone digit may become a Chinese
# numeral ("three decimals", 三位小数; "2-D", 二维).
NUMBER = re.compile(r"\d+(?:[.,]\d+)+|\d{2,}")
HEADING = re.compile(r"^(#{1,6}) ", re.MULTILINE)
CHINESE = re.compile(r"[\u4e00-\u9fff]")
WRAPPED = re.compile(r"[\u4e00-\u9fff，、：；]\n[\u4e00-\u9fff]")  # a paragraph broken mid-sentence
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'-]*(?:[ ,]+[A-Za-z][A-Za-z'-]*){5,}")  # six words
WORDS = re.compile(r"[A-Za-z]+ [A-Za-z]+")  # a comment or string with words in it


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def read(path):
    return nbformat.read(path, as_version=4)


def english_notebooks(root=ROOT):
    return sorted(path for folder in FOLDERS for path in (root / folder).glob("*.ipynb"))


def chinese_notebooks(root=ROOT):
    return sorted(path for folder in FOLDERS for path in (root / ZH / folder).glob("*.ipynb"))


def catalogs(root=ROOT):
    return sorted(path for folder in FOLDERS for path in (root / LOCALE / folder).glob("*.po"))


def zh_path(en_path, root=ROOT):
    return root / ZH / en_path.relative_to(root)


def en_path_of(zh_file, root=ROOT):
    return root / Path(zh_file).resolve().relative_to((root / ZH).resolve())


def catalog_path(en_path, root=ROOT):
    return root / LOCALE / en_path.relative_to(root).with_suffix(".po")


def uses_checks(notebook):
    return any(c.cell_type == "code" and IMPORTS_CHECKS.search(c.source) for c in notebook.cells)


def switch_index(notebook):
    """Where the language switch goes: right after the first cell that imports the checks."""
    first = next(i for i, c in enumerate(notebook.cells)
                 if c.cell_type == "code" and IMPORTS_CHECKS.search(c.source))
    return first + 1


# ---- links -------------------------------------------------------------------------------------


def zh_link(target, en_file, root=ROOT):
    """Where a link in `en_file` must point from the Chinese notebook.

    A notebook of the course keeps its relative target, which then reaches its Chinese
    counterpart (zh/ has the same layout); any other file of the repository is reached one
    folder further up, and README.md becomes README.zh.md.
    """
    if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|#", target):  # a URL or an anchor in the same page
        return target
    path, hash_sign, fragment = target.partition("#")
    resolved = Path(os.path.normpath(en_file.parent / path))
    try:
        relative = resolved.relative_to(root)
    except ValueError:  # outside the repository: leave it alone
        return target
    if relative.suffix == ".ipynb" and relative.parts[0] in FOLDERS:
        return target
    if relative == Path("README.md"):
        relative = Path("README.zh.md")
    new = Path(os.path.relpath(root / relative, zh_path(en_file, root).parent)).as_posix()
    return new + hash_sign + fragment


def english_for_zh(source, en_file, root=ROOT):
    """The English text with its links pointing where they must from the Chinese notebook."""
    return LINK.sub(lambda m: m[1] + zh_link(m[2], en_file, root), source)


# ---- checking a translation --------------------------------------------------------------------


def carried_parts(text):
    """The parts of a markdown text that a translation keeps, and what is left (the prose)."""
    parts = {"code block": FENCE.findall(text)}
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
    problems = []
    if re.search(r"[A-Za-z]{2}", en_prose) and not CHINESE.search(zh_prose):
        problems.append("no Chinese text")
    if en["headings"] != zh["headings"]:
        problems.append(f"headings (levels) {en['headings']} became {zh['headings']}")
    for kind in ("code block", "formula", "link target"):
        missing = sorted(set(en[kind]) - set(zh[kind]))
        extra = sorted(set(zh[kind]) - set(en[kind]))
        problems += [f"{kind} missing: {part}" for part in missing]
        problems += [f"{kind} not in the English text: {part}" for part in extra]
    for kind in ("code span", "number"):  # a translation may add these, never drop one
        problems += [f"{kind} missing: {part}" for part in sorted(set(en[kind]) - set(zh[kind]))]
    return problems


class _StringsBlanked(ast.NodeTransformer):
    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):  # an f-string: its fields, in order; the text may move
        node.values = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        return node


MAGIC = re.compile(r"^[ \t]*[%!].*$", re.MULTILINE)  # an IPython line magic, e.g. %pip install


def code_shape(source):
    """The syntax tree of `source` with every string emptied (comments are not in it), and its
    IPython magic lines as they are (each parsed as `pass`)."""
    plain = MAGIC.sub(lambda m: m[0][:len(m[0]) - len(m[0].lstrip())] + "pass", source)
    return ast.dump(_StringsBlanked().visit(ast.parse(plain))), MAGIC.findall(source)


def code_problems(english, chinese):
    """Why `chinese` is not `english` with only its comments and strings translated."""
    try:
        same = code_shape(chinese) == code_shape(english)
    except SyntaxError as err:
        return [f"the translated code does not parse: {err.msg} (line {err.lineno})"]
    return [] if same else ["the code changed: translate only comments and strings"]


def english_runs(chinese):
    """Runs of six or more English words in the prose: most likely left untranslated."""
    return ENGLISH_RUN.findall(carried_parts(chinese)[1])


# ---- the catalogs ------------------------------------------------------------------------------


def translatable(cell, index_of_code, en_file, root=ROOT):
    """Whether a cell has an entry: prose always; code with words in its comments or strings in
    CODE_FOLDERS, and the setup cell (the first code cell, the same everywhere) in every folder.
    A notebook that is not re-executed keeps the English outputs: its setup cell prints nothing
    outside Colab."""
    if cell.cell_type == "markdown":
        return True
    folder = en_file.relative_to(root).parts[0]
    if cell.cell_type != "code" or (folder not in CODE_FOLDERS and index_of_code != 0):
        return False
    try:
        code_shape(cell.source)
        tokens = list(tokenize.generate_tokens(io.StringIO(cell.source).readline))
    except (SyntaxError, tokenize.TokenError):
        return False
    return any(t.type in (tokenize.COMMENT, tokenize.STRING) and WORDS.search(t.string)
               for t in tokens)


def entry_cells(english, en_file, root=ROOT):
    code = [c for c in english.cells if c.cell_type == "code"]
    return [c for c in english.cells if translatable(
        c, code.index(c) if c.cell_type == "code" else None, en_file, root)]


def is_translated(entry):
    return bool(entry.msgstr) and "fuzzy" not in entry.flags and not entry.obsolete


def new_catalog(en_file, root=ROOT):
    catalog = polib.POFile(wrapwidth=WRAP)
    catalog.header = (f"Chinese translation of {en_file.relative_to(root).as_posix()}: one entry "
                      f"per cell, msgctxt = the cell id.\nKept by tools/zh_sync.py; see its "
                      "docstring and GLOSSARY.zh.md.")
    catalog.metadata = {"Project-Id-Version": "llm-ch4", "Language": "zh_CN",
                        "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8",
                        "Content-Transfer-Encoding": "8bit"}
    return catalog


def load_catalog(en_file, root=ROOT):
    path = catalog_path(en_file, root)
    return polib.pofile(str(path), wrapwidth=WRAP) if path.is_file() else new_catalog(en_file, root)


def pool_of(catalog_files):
    """{English text: Chinese} over the translated entries (obsolete ones too) of the catalogs."""
    pool = {}
    for path in catalog_files:
        for entry in polib.pofile(str(path)):
            if entry.msgstr and "fuzzy" not in entry.flags:
                pool.setdefault(entry.msgid, entry.msgstr)
    return pool


def synced(catalog, english, en_file, pool, root=ROOT):
    """The catalog with one entry per translatable cell of `english`, in its order.

    A changed English text makes its entry fuzzy, keeping the earlier msgid as previous_msgid
    and the earlier translation as msgstr; entries of removed cells become obsolete.
    """
    entries = {e.msgctxt: e for e in catalog}
    result = new_catalog(en_file, root)
    result.header, result.metadata = catalog.header or result.header, catalog.metadata or result.metadata
    cells = entry_cells(english, en_file, root)
    for cell in cells:
        entry = copy.deepcopy(entries.get(cell.id)) or polib.POEntry(msgctxt=cell.id, msgid="")
        entry.obsolete = False
        if entry.msgid != cell.source:
            if entry.msgstr and "fuzzy" not in entry.flags:
                entry.previous_msgid = entry.msgid
            if entry.msgstr:
                entry.flags = sorted(set(entry.flags) | {"fuzzy"})
            entry.msgid = cell.source
        if not is_translated(entry) and cell.source in pool:  # translated elsewhere
            entry.msgstr, entry.flags, entry.previous_msgid = pool[cell.source], [], None
        entry.comment = CODE_NOTE if cell.cell_type == "code" else ""
        result.append(entry)
    ids = {cell.id for cell in cells}
    for entry in catalog:
        if entry.msgctxt not in ids and entry.msgstr:  # keep a removed cell's translation
            gone = copy.deepcopy(entry)
            gone.obsolete = True
            result.append(gone)
    return result


def catalog_text(catalog):
    return str(catalog).rstrip("\n") + "\n"


def write_if_changed(text, path):
    """Write `text` to `path` unless it holds it already; whether it wrote."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


# ---- generating a Chinese notebook -------------------------------------------------------------


def execution_stamp(zh_notebook, en_notebook, root=ROOT):
    """What a re-executed notebook's outputs depend on: its code, the English outputs, the checks."""
    code = [c.source for c in zh_notebook.cells if c.cell_type == "code"]
    outputs = [shown(c) for c in en_notebook.cells if c.cell_type == "code"]
    checks = [(root / "exercises" / name).read_text() for name in CHECKERS
              if (root / "exercises" / name).is_file()]
    return sha256(json.dumps([code, outputs, checks]))


def shown(cell):
    """A code cell's outputs as strict nbval compares them: text, not images or counts, and a
    run of prints to one stream as one output (however the kernel split it)."""
    outputs = []
    for o in cell.outputs:
        if o.output_type == "stream" and outputs and outputs[-1][:2] == ("stream", o.name):
            outputs[-1] = ("stream", o.name, outputs[-1][2] + o.text)
        elif o.output_type == "stream":
            outputs.append(("stream", o.name, o.text))
        else:
            outputs.append((o.output_type, o.get("data", {}).get("text/plain"), o.get("ename")))
    return outputs


def build(en_file, catalog, old, root=ROOT):
    """The Chinese notebook for `en_file` from its (synced) catalog; `old` is the current one
    (or None), whose outputs a notebook with the switch keeps while its stamp holds. Returns
    (notebook, needs a run)."""
    english = read(en_file)
    notebook = copy.deepcopy(english)
    entries = {e.msgctxt: e for e in catalog if not e.obsolete}
    for cell in notebook.cells:
        entry = entries.get(cell.id)
        if entry is not None and is_translated(entry) and entry.msgid == cell.source:
            cell.source = entry.msgstr
        elif cell.cell_type == "markdown":
            cell.source = english_for_zh(cell.source, en_file, root)
    if not uses_checks(english):
        return notebook, False
    notebook.cells.insert(switch_index(notebook), new_code_cell(SWITCH_SOURCE, id=SWITCH_ID))
    stamp = execution_stamp(notebook, english, root)
    if old is None or old.metadata.get(KEY, {}).get("executed_for") != stamp:
        return notebook, True
    old_cells = {c.get("id"): c for c in old.cells}
    for cell in notebook.cells:  # unchanged since the last run: keep its outputs
        if cell.cell_type == "code" and cell.id in old_cells:
            cell.outputs = old_cells[cell.id].outputs
            cell.execution_count = old_cells[cell.id].execution_count
    notebook.metadata[KEY] = {"executed_for": stamp}
    return notebook, False


def notebook_text(notebook):
    nbformat.validate(notebook)
    text = nbformat.writes(notebook)
    return text if text.endswith("\n") else text + "\n"


def has_chinese_messages(root=ROOT):
    return "zh" in runpy.run_path(str(root / "exercises" / "messages.py"))["MESSAGES"]


def execute(zh_file, root=ROOT):
    """Re-execute a notebook with the language switch and stamp what its outputs come from."""
    subprocess.run([sys.executable, str(root / "tools" / "run_notebooks.py"), str(zh_file)],
                   check=True)
    notebook = read(zh_file)
    english = read(en_path_of(zh_file, root))
    notebook.metadata[KEY] = {"executed_for": execution_stamp(notebook, english, root)}
    write_if_changed(notebook_text(notebook), zh_file)


def run_pending(pending, root=ROOT):
    if not pending:
        return
    if not has_chinese_messages(root):
        print(f'exercises/messages.py has no "zh" table yet: {len(pending)} notebook(s) with the '
              "language switch keep the English outputs and are not executed; run "
              "`python tools/zh_sync.py` again once it has one.")
        return
    for zh_file in pending:
        execute(zh_file, root)


def update_one(en_file, pool, root=ROOT):
    """Sync the catalog of `en_file`, save it, regenerate its Chinese notebook; needs a run?"""
    catalog = synced(load_catalog(en_file, root), read(en_file), en_file, pool, root)
    path = catalog_path(en_file, root)
    if write_if_changed(catalog_text(catalog), path):
        print(f"updated: {path.relative_to(root)}")
    zh_file = zh_path(en_file, root)
    notebook, needs_run = build(en_file, catalog, read(zh_file) if zh_file.is_file() else None,
                                root)
    if write_if_changed(notebook_text(notebook), zh_file):
        print(f"updated: {zh_file.relative_to(root)}")
    return needs_run


def update(root=ROOT, run=True):
    """Sync every catalog and regenerate every Chinese notebook; remove those of gone notebooks."""
    pool = pool_of(catalogs(root))
    pending = [zh_path(en_file, root) for en_file in english_notebooks(root)
               if update_one(en_file, pool, root)]
    for zh_file in chinese_notebooks(root):
        if not en_path_of(zh_file, root).is_file():
            zh_file.unlink()
            print(f"removed (its English notebook is gone): {zh_file.relative_to(root)}")
    for path in catalogs(root):
        if not (root / path.relative_to(root / LOCALE).with_suffix(".ipynb")).is_file():
            path.unlink()
            print(f"removed (its English notebook is gone): {path.relative_to(root)}")
    if run:
        run_pending(pending, root)
    return pending


# ---- translating -------------------------------------------------------------------------------


def read_translations(path):
    """{cell id: Chinese text} from a JSON object, or from `=== <cell id>` blocks as `todo`
    prints them; a block whose header names the English text (`en:<hash prefix>`) maps its id
    to {"zh": text, "en_sha256": prefix} instead, so that `apply` can tell if it changed since."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object {{cell id: Chinese text}}")
        return data
    blocks, current = {}, None
    for line in text.splitlines():
        header = re.fullmatch(r"=== (\S+)(?: en:([0-9a-f]+))?", line.rstrip())
        if header:
            current = header[1]
            if current in blocks:
                raise ValueError(f"{path}: cell {current} appears twice")
            blocks[current] = {"lines": [], "en_sha256": header[2]}
        elif line == "%%" or line.startswith("%% "):
            continue
        elif current is None:
            if line.strip():
                raise ValueError(f"{path}: text before the first `=== <cell id>` line")
        else:
            blocks[current]["lines"].append(line)
    translations = {}
    for cell_id, block in blocks.items():
        chinese = "\n".join(block["lines"]).strip("\n")
        translations[cell_id] = {"zh": chinese, "en_sha256": block["en_sha256"]} if block[
            "en_sha256"] else chinese
    return translations


def problems_of(entry, chinese, en_file, root=ROOT):
    """What is wrong with `chinese` as the translation of `entry`'s English text."""
    if entry.comment == CODE_NOTE:
        return code_problems(entry.msgid, chinese)
    return translation_problems(english_for_zh(entry.msgid, en_file, root), chinese)


def apply(zh_file, chinese_by_id, root=ROOT):
    """Set the Chinese text of the given cells in the catalog, then regenerate the notebook.

    `chinese_by_id` maps cell ids to the Chinese text, or to {"zh": text, "en_sha256": prefix}
    where prefix starts the hash of the English text that was translated."""
    en_file = en_path_of(zh_file, root)
    if not en_file.is_file():
        raise ValueError(f"{zh_file}: no English notebook {en_file.relative_to(root)}")
    catalog = synced(load_catalog(en_file, root), read(en_file), en_file, {}, root)
    entries = {e.msgctxt: e for e in catalog if not e.obsolete}
    errors = []
    for cell_id, value in chinese_by_id.items():
        chinese, translated = (value.get("zh"), value.get("en_sha256")) if isinstance(
            value, dict) else (value, None)
        entry = entries.get(cell_id)
        if not isinstance(chinese, str):
            errors.append(f"{cell_id}: the translation must be a string")
            continue
        if entry is None:
            errors.append(f"{cell_id}: no entry for this cell id in {en_file.relative_to(root)}")
            continue
        if translated and not sha256(entry.msgid).startswith(translated):
            errors.append(f"{cell_id}: its English text changed since `todo` printed it; run "
                          "`todo` again and translate the new text")
            continue
        chinese = chinese.strip("\n").rstrip()
        errors += [f"{cell_id}: {problem}" for problem in problems_of(entry, chinese, en_file, root)]
        entry.msgstr, entry.flags, entry.previous_msgid = chinese, [], None
        if entry.comment != CODE_NOTE:
            for run_of_words in english_runs(chinese):
                print(f"note, {cell_id}: English left in the prose? {run_of_words!r}")
            if WRAPPED.search(chinese):
                print(f"note, {cell_id}: a line break inside a Chinese paragraph shows as a space")
    if errors:
        raise ValueError("nothing written:\n  " + "\n  ".join(errors))
    write_if_changed(catalog_text(catalog), catalog_path(en_file, root))
    if update_one(en_file, {}, root):
        run_pending([zh_path(en_file, root)], root)
    return len(chinese_by_id)


def todo(zh_file, everything=False, root=ROOT):
    """The entries to translate as `=== <cell id>` blocks (every entry with everything)."""
    en_file = en_path_of(zh_file, root)
    catalog = synced(load_catalog(en_file, root), read(en_file), en_file, {}, root)
    blocks = []
    for entry in (e for e in catalog if not e.obsolete):
        if not everything and is_translated(entry):
            continue
        notes = [CODE_NOTE] if entry.comment == CODE_NOTE else []
        if entry.msgstr and "fuzzy" in entry.flags:
            notes += ["English changed since this cell was translated. The earlier translation:"]
            notes += entry.msgstr.splitlines()
        elif entry.msgstr:
            notes += ["Translated. The English text:"] + entry.msgid.splitlines()
        text = entry.msgstr if is_translated(entry) else (
            entry.msgid if entry.comment == CODE_NOTE else english_for_zh(entry.msgid, en_file, root))
        header = f"=== {entry.msgctxt} en:{sha256(entry.msgid)[:12]}"
        blocks.append("\n".join([header] + [f"%% {n}".rstrip() for n in notes] + [text, ""]))
    return "\n".join(blocks)


# ---- checking the whole edition ----------------------------------------------------------------


def audit(en_file, root=ROOT):
    """What keeps the Chinese notebook of `en_file` from being a complete, current translation.

    Returns {"generated": [...], "run": [...], "untranslated": [cell ids], "changed": [cell ids],
    "text": [...]}: a catalog or notebook out of step with the English one, a notebook with the
    switch whose outputs are not from its current code, cells without a translation or whose
    English changed since, and translations that lose a formula, a link, a number, the code ...
    """
    found = {"generated": [], "run": [], "untranslated": [], "changed": [], "text": []}
    zh_file, path = zh_path(en_file, root), catalog_path(en_file, root)
    if not zh_file.is_file() or not path.is_file():
        found["generated"].append(f"no {zh_file.relative_to(root)} or no catalog "
                                  f"{path.relative_to(root)}: run `python tools/zh_sync.py`")
        return found
    english, catalog = read(en_file), polib.pofile(str(path), wrapwidth=WRAP)
    entries = {e.msgctxt: e for e in catalog if not e.obsolete}
    for cell in entry_cells(english, en_file, root):
        entry = entries.get(cell.id)
        if entry is None or not entry.msgstr:
            found["untranslated"].append(cell.id)
        elif entry.msgid != cell.source or "fuzzy" in entry.flags:
            found["changed"].append(cell.id)
        else:
            found["text"] += [f"{cell.id}: {p}" for p in problems_of(entry, entry.msgstr, en_file,
                                                                       root)]
    if catalog_text(synced(catalog, english, en_file, {}, root)) != catalog_text(catalog):
        found["generated"].append(f"{path.relative_to(root)} is not in step with the English "
                                  "notebook: run `python tools/zh_sync.py`")
    chinese = read(zh_file)
    generated, needs_run = build(en_file, catalog, chinese, root)
    if needs_run:
        found["run"].append("not executed since its code, the English outputs or the checks "
                            "changed: run `python tools/zh_sync.py`")
    elif notebook_text(generated) != notebook_text(chinese):
        found["generated"].append(f"{zh_file.relative_to(root)} differs from what its catalog "
                                  "generates: run `python tools/zh_sync.py`")
    if uses_checks(english):
        found["generated"] += unexpected_outputs(english, chinese, entries)
    return found


def string_pairs(english, chinese):
    """(English, Chinese) for each string of a code entry that the translation changed, paired
    by their place in the syntax tree (code_problems checks that the trees match)."""
    def strings(source):
        plain = MAGIC.sub(lambda m: m[0][:len(m[0]) - len(m[0].lstrip())] + "pass", source)
        return [n.value for n in ast.walk(ast.parse(plain))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)]

    en, zh = strings(english), strings(chinese)
    return [(e, z) for e, z in zip(en, zh) if e and e != z] if len(en) == len(zh) else []


def unexpected_outputs(english, chinese, entries):
    """Cells of a re-executed notebook whose outputs differ from the English ones, beyond a
    check's feedback, the cell's own translation, and strings translated in other cells (the
    message of an error that a translated class raises, say)."""
    zh_cells = {c.id: c for c in chinese.cells}
    pairs = sorted((pair for e in entries.values() if e.comment == CODE_NOTE and is_translated(e)
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


def status(root=ROOT):
    """One line per catalog: entries translated, fuzzy, untranslated and obsolete; returns
    whether every Chinese notebook is translated, current and generated from its catalog."""
    pool = pool_of(catalogs(root))
    totals = [0, 0, 0, 0]
    complete = True
    for en_file in english_notebooks(root):
        catalog = synced(load_catalog(en_file, root), read(en_file), en_file, pool, root)
        live = [e for e in catalog if not e.obsolete]
        counts = [sum(map(is_translated, live)), sum("fuzzy" in e.flags for e in live),
                  sum(not e.msgstr for e in live), sum(e.obsolete for e in catalog)]
        found = audit(en_file, root)
        notes = [f"{counts[1]} fuzzy"] * bool(counts[1]) + [f"{counts[2]} untranslated"] * bool(
            counts[2]) + [f"{len(found['text'])} translation problems"] * bool(found["text"])
        notes += ["out of step: run `python tools/zh_sync.py`"] * bool(found["generated"] or found["run"])
        print(f"{catalog_path(en_file, root).relative_to(root).as_posix():48} "
              f"{counts[0]:3}/{len(live):<3} translated" + ("; " + ", ".join(notes) if notes else ""))
        totals = [t + c for t, c in zip(totals, counts)]
        complete = complete and not notes
    print(f"{totals[0]} of {totals[0] + totals[1] + totals[2]} entries translated, {totals[1]} "
          f"fuzzy, {totals[2]} untranslated, {totals[3]} obsolete")
    return complete


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:7]))
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("update", help="sync the catalogs, regenerate zh/ (the default)")
    commands.add_parser("status", help="entries translated per catalog; exit 1 if any is left")
    todo_parser = commands.add_parser("todo", help="print the entries to translate")
    todo_parser.add_argument("notebook", type=Path)
    todo_parser.add_argument("--all", action="store_true", help="every entry")
    apply_parser = commands.add_parser("apply", help="set the Chinese text of some cells")
    apply_parser.add_argument("notebook", type=Path)
    apply_parser.add_argument("translations", type=Path, help="`=== <cell id>` blocks or JSON")
    args = parser.parse_args()
    try:
        if args.command == "status":
            sys.exit(0 if status() else 1)
        elif args.command == "todo":
            print(todo(args.notebook, args.all))
        elif args.command == "apply":
            count = apply(args.notebook, read_translations(args.translations))
            print(f"applied {count} translation(s) to {args.notebook}")
        else:
            update()
    except ValueError as err:
        sys.exit(f"error: {err}")


if __name__ == "__main__":
    main()
