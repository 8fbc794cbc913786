"""Keep the Chinese edition (zh/) in step with the English notebooks.

    python tools/zh_sync.py                          # update every zh notebook from its English one
    python tools/zh_sync.py status                   # per notebook: translated, changed, new cells
    python tools/zh_sync.py todo zh/notebooks/02_layer_norm.ipynb > /tmp/02.md
    python tools/zh_sync.py todo --all zh/notebooks/02_layer_norm.ipynb   # every prose cell
    python tools/zh_sync.py apply zh/notebooks/02_layer_norm.ipynb /tmp/02.md

zh/ mirrors notebooks/, exercises/, solutions/, practice/ and bonus/. A Chinese notebook is its
English notebook with the prose translated: every code cell, source and outputs, is a copy, and
each translated markdown cell records in its metadata ("zh": {"en_sha256": ...}) the SHA-256 of the
English text it translates. `update` rebuilds each Chinese notebook from its English source: a
translation is kept while its English text is unchanged (found by that hash, so new cell ids do
not lose it); a cell whose English is new or changed shows the English text, links adjusted, and
is marked {"todo": true} (with the earlier translation, if any, under "earlier_translation").
tests/test_zh_sync.py fails on any such cell, on any code cell that differs from the English one,
and on an English notebook without a Chinese one.

Notebooks that use the exercise checks (exercises/, solutions/) or the component checker
(practice/, exercises/components.py) get one extra code cell, the language switch, after the cell
that imports them; their feedback outputs then differ from the English ones, so `update`
re-executes them (tools/run_notebooks.py) whenever their code, the English outputs or
exercises/checks.py, components.py and messages.py change, and strict nbval re-executes them in
the suite. Every other Chinese notebook has exactly the English code and outputs, so it
adds no kernel time: the root conftest.py keeps nbval away from it.

Translating (the guide, with the glossary, is GLOSSARY.zh.md): `todo` prints the cells to
translate as blocks, each a line `=== <cell id> en:<hash prefix>` followed by the English text;
replace the English with Chinese and `apply` the file (or a JSON object {"<cell id>": "<Chinese
text>"}). Lines starting with `%% ` are notes and are ignored; the hash prefix lets `apply` refuse
a translation whose English text changed after `todo` printed it. `apply` sets the Chinese text of those cells
and stamps each with the hash of the current English text, after checking that the translation
keeps the English cell's formulas, link targets, code spans, code blocks, numbers and headings;
if any cell fails a check, nothing is written.
"""

import argparse
import copy
import hashlib
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "exercises", "solutions", "practice", "bonus")
ZH = "zh"
KEY = "zh"  # the cell and notebook metadata this tool owns

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
CHECKERS = ("checks.py", "components.py", "messages.py")  # in exercises/: the feedback's source

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


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def read(path):
    return nbformat.read(path, as_version=4)


def english_notebooks(root=ROOT):
    return sorted(path for folder in FOLDERS for path in (root / folder).glob("*.ipynb"))


def chinese_notebooks(root=ROOT):
    return sorted(path for folder in FOLDERS for path in (root / ZH / folder).glob("*.ipynb"))


def zh_path(en_path, root=ROOT):
    return root / ZH / en_path.relative_to(root)


def en_path_of(zh_file, root=ROOT):
    return root / Path(zh_file).resolve().relative_to((root / ZH).resolve())


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


def english_runs(chinese):
    """Runs of six or more English words in the prose: most likely left untranslated."""
    return ENGLISH_RUN.findall(carried_parts(chinese)[1])


# ---- building a Chinese notebook ---------------------------------------------------------------


def translations(notebook):
    """{hash of the English text: Chinese text} of the notebook's translated cells."""
    found = {}
    for cell in notebook.cells:
        stamp = cell.metadata.get(KEY, {}).get("en_sha256")
        if cell.cell_type == "markdown" and stamp:
            found.setdefault(stamp, cell.source)
    return found


def translation_pool(notebooks):
    """{hash of an English text: its translation} over all the notebooks, the first one found."""
    pool = {}
    for notebook in notebooks:
        for stamp, chinese in translations(notebook).items():
            pool.setdefault(stamp, chinese)
    return pool


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


def build(en_file, old, pool, root=ROOT):
    """The Chinese notebook for `en_file`; `old` is the current one (or None), `pool` maps hashes
    of English texts to translations found anywhere in zh/. Returns (notebook, needs a run)."""
    english = read(en_file)
    notebook = copy.deepcopy(english)
    old_cells = {c.get("id"): c for c in old.cells} if old else {}
    pool = {**pool, **(translations(old) if old else {})}  # this notebook's own come first
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        stamp = sha256(cell.source)
        before = old_cells.get(cell.id)
        before_meta = before.metadata.get(KEY, {}) if before is not None else {}
        if before_meta.get("en_sha256") == stamp:
            chinese = before.source
        else:
            chinese = pool.get(stamp)
        if chinese is not None:
            cell.source = chinese
            cell.metadata[KEY] = {"en_sha256": stamp}
            continue
        cell.source = english_for_zh(cell.source, en_file, root)
        cell.metadata[KEY] = {"todo": True}
        earlier = before.source if before_meta.get("en_sha256") else before_meta.get(
            "earlier_translation")
        if earlier:
            cell.metadata[KEY]["earlier_translation"] = earlier
    if not uses_checks(english):
        return notebook, False
    notebook.cells.insert(switch_index(notebook), new_code_cell(SWITCH_SOURCE, id=SWITCH_ID))
    stamp = execution_stamp(notebook, english, root)
    if old is None or old.metadata.get(KEY, {}).get("executed_for") != stamp:
        return notebook, True
    for cell in notebook.cells:  # unchanged since the last run: keep its outputs
        if cell.cell_type == "code" and cell.id in old_cells:
            cell.outputs = old_cells[cell.id].outputs
            cell.execution_count = old_cells[cell.id].execution_count
    notebook.metadata[KEY] = {"executed_for": stamp}
    return notebook, False


def write_if_changed(notebook, path):
    nbformat.validate(notebook)
    text = nbformat.writes(notebook)
    text += "" if text.endswith("\n") else "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def has_chinese_messages(root=ROOT):
    return "zh" in runpy.run_path(str(root / "exercises" / "messages.py"))["MESSAGES"]


def execute(zh_file, root=ROOT):
    """Re-execute a notebook with the language switch and stamp what its outputs come from."""
    subprocess.run([sys.executable, str(root / "tools" / "run_notebooks.py"), str(zh_file)],
                   check=True)
    notebook = read(zh_file)
    english = read(en_path_of(zh_file, root))
    notebook.metadata[KEY] = {"executed_for": execution_stamp(notebook, english, root)}
    write_if_changed(notebook, zh_file)


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


def update(root=ROOT, run=True):
    """Rebuild every Chinese notebook; remove those whose English notebook is gone."""
    existing = {path: read(path) for path in chinese_notebooks(root)}
    pool = translation_pool(existing.values())
    pending = []
    for en_file in english_notebooks(root):
        zh_file = zh_path(en_file, root)
        notebook, needs_run = build(en_file, existing.get(zh_file), pool, root)
        if write_if_changed(notebook, zh_file):
            print(f"updated: {zh_file.relative_to(root)}")
        if needs_run:
            pending.append(zh_file)
    for zh_file in existing:
        if not en_path_of(zh_file, root).is_file():
            zh_file.unlink()
            print(f"removed (its English notebook is gone): {zh_file.relative_to(root)}")
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


def apply(zh_file, chinese_by_id, root=ROOT):
    """Set the Chinese text of the given cells, each stamped with its current English hash.

    `chinese_by_id` maps cell ids to the Chinese text, or to {"zh": text, "en_sha256": prefix}
    where prefix starts the hash of the English text that was translated."""
    en_file = en_path_of(zh_file, root)
    if not en_file.is_file():
        raise ValueError(f"{zh_file}: no English notebook {en_file.relative_to(root)}")
    old = read(zh_file) if Path(zh_file).is_file() else None
    notebook, needs_run = build(en_file, old, {}, root)
    english = {c.id: c for c in read(en_file).cells}
    cells = {c.id: c for c in notebook.cells}
    errors = []
    for cell_id, value in chinese_by_id.items():
        chinese, translated = (value.get("zh"), value.get("en_sha256")) if isinstance(
            value, dict) else (value, None)
        cell = cells.get(cell_id)
        if not isinstance(chinese, str):
            errors.append(f"{cell_id}: the translation must be a string")
            continue
        if cell is None or cell.cell_type != "markdown":
            errors.append(f"{cell_id}: no markdown cell with this id in {en_file.relative_to(root)}")
            continue
        stamp = sha256(english[cell_id].source)
        if translated and not stamp.startswith(translated):
            errors.append(f"{cell_id}: its English text changed since `todo` printed it; run "
                          "`todo` again and translate the new text")
            continue
        chinese = chinese.strip("\n").rstrip()
        problems = translation_problems(english_for_zh(english[cell_id].source, en_file, root),
                                        chinese)
        errors += [f"{cell_id}: {problem}" for problem in problems]
        cell.source = chinese
        cell.metadata[KEY] = {"en_sha256": stamp}
        for run_of_words in english_runs(chinese):
            print(f"note, {cell_id}: English left in the prose? {run_of_words!r}")
        if WRAPPED.search(chinese):
            print(f"note, {cell_id}: a line break inside a Chinese paragraph shows as a space")
    if errors:
        raise ValueError("nothing written:\n  " + "\n  ".join(errors))
    write_if_changed(notebook, Path(zh_file))
    if needs_run:
        run_pending([Path(zh_file)], root)
    return len(chinese_by_id)


def todo(zh_file, everything=False, root=ROOT):
    """The cells to translate as `=== <cell id>` blocks (every markdown cell with everything)."""
    en_file = en_path_of(zh_file, root)
    old = read(zh_file) if Path(zh_file).is_file() else None
    notebook, _ = build(en_file, old, {}, root)
    english = {c.id: c for c in read(en_file).cells}
    blocks = []
    for cell in notebook.cells:
        meta = cell.metadata.get(KEY, {})
        if cell.cell_type != "markdown" or not (everything or meta.get("todo")):
            continue
        notes = []
        if meta.get("earlier_translation"):
            notes = ["English changed since this cell was translated. The earlier translation:"]
            notes += meta["earlier_translation"].splitlines()
        elif not meta.get("todo"):
            notes = ["Translated. The English text:"]
            notes += english_for_zh(english[cell.id].source, en_file, root).splitlines()
        header = f"=== {cell.id} en:{sha256(english[cell.id].source)[:12]}"
        lines = [header] + [f"%% {note}".rstrip() for note in notes] + [cell.source, ""]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


# ---- checking the whole edition ----------------------------------------------------------------


def audit(en_file, root=ROOT):
    """What keeps the Chinese notebook of `en_file` from being a complete, current translation.

    Returns {"code": [...], "run": [...], "untranslated": [cell ids], "changed": [cell ids],
    "text": [...]}: code cells that differ from the English ones, a notebook with the language
    switch whose outputs are not from its current code, prose cells never translated or whose
    English changed since, and translations that lose a formula, a link, a number, ...
    """
    found = {"code": [], "run": [], "untranslated": [], "changed": [], "text": []}
    zh_file = zh_path(en_file, root)
    if not zh_file.is_file():
        found["code"].append(f"no {zh_file.relative_to(root)}: run `python tools/zh_sync.py`")
        return found
    english, chinese = read(en_file), read(zh_file)
    cells = list(chinese.cells)
    switch = uses_checks(english)
    if switch:
        at = switch_index(english)
        if len(cells) <= at or cells[at].get("id") != SWITCH_ID or cells[at].source != SWITCH_SOURCE:
            found["code"].append(f"the language switch is not the cell after the checks' import "
                                 f"(cell {at + 1}): run `python tools/zh_sync.py`")
            return found
        if chinese.metadata.get(KEY, {}).get("executed_for") != execution_stamp(chinese, english, root):
            found["run"].append("not executed since its code, the English outputs or the checks "
                                "changed: run `python tools/zh_sync.py`")
        del cells[at]
    if [(c.cell_type, c.get("id")) for c in english.cells] != [(c.cell_type, c.get("id")) for c in cells]:
        found["code"].append("cells added, removed or moved in English: run `python tools/zh_sync.py`")
        return found
    for en, zh in zip(english.cells, cells):
        if en.cell_type == "markdown":
            stamp = zh.metadata.get(KEY, {}).get("en_sha256")
            if stamp is None:
                found["untranslated"].append(en.id)
            elif stamp != sha256(en.source):
                found["changed"].append(en.id)
            else:
                english_text = english_for_zh(en.source, en_file, root)
                found["text"] += [f"{en.id}: {p}" for p in translation_problems(english_text, zh.source)]
        elif en.source != zh.source:
            found["code"].append(f"{en.id}: the code differs from the English cell")
        elif switch and not FEEDBACK.search(en.source) and shown(en) != shown(zh):
            found["code"].append(f"{en.id}: outputs differ from the English ones (not a check's feedback)")
        elif not switch and en != zh:
            found["code"].append(f"{en.id}: outputs or metadata differ from the English cell")
    return found


def status(root=ROOT):
    """One line per Chinese notebook, counting its prose cells as `update` would leave them;
    returns whether every notebook is translated, current and in step with its English one."""
    pool = translation_pool(read(path) for path in chinese_notebooks(root))
    done = total = 0
    complete = True
    for en_file in english_notebooks(root):
        zh_file = zh_path(en_file, root)
        current = read(zh_file) if zh_file.is_file() else None
        notebook, needs_run = build(en_file, current, pool, root)
        marks = [c.metadata[KEY] for c in notebook.cells if c.cell_type == "markdown"]
        changed = sum("earlier_translation" in m for m in marks)
        new = sum("todo" in m for m in marks) - changed
        notes = [f"{changed} changed in English"] * bool(changed) + [f"{new} untranslated"] * bool(new)
        if current is None or nbformat.writes(notebook) != nbformat.writes(current):
            notes.append("not in step with English: run `python tools/zh_sync.py`")
        else:
            found = audit(en_file, root)
            notes += [f"{len(found['text'])} translation problems"] * bool(found["text"])
            notes += ["not executed with the current code"] * bool(needs_run or found["run"])
        print(f"{zh_file.relative_to(root).as_posix():45} {len(marks) - changed - new:3}/"
              f"{len(marks):<3} translated" + ("; " + ", ".join(notes) if notes else ""))
        done, total = done + len(marks) - changed - new, total + len(marks)
        complete = complete and not notes
    print(f"{done} of {total} prose cells translated")
    return complete


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:7]))
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("update", help="rebuild every Chinese notebook (the default)")
    commands.add_parser("status", help="cells translated per notebook; exit 1 if any is left")
    todo_parser = commands.add_parser("todo", help="print the cells to translate")
    todo_parser.add_argument("notebook", type=Path)
    todo_parser.add_argument("--all", action="store_true", help="every markdown cell")
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
