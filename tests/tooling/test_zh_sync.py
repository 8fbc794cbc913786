"""The Chinese edition (zh/) is a faithful, current translation of the English notebooks.

Each Chinese notebook must be exactly what its English notebook and its gettext catalogs
(locale/zh/.../*.po and locale/zh/shared.po, kept by tools/zh_sync.py) generate. An entry not
translated yet, or changed in English since, shows its English text marked 〔待译〕: that passes,
so an English edit lands before its translation, and `status` counts them. No kernel runs here: a Chinese notebook
without the exercises' language switch has the English code and outputs, which the English
notebook's strict nbval run covers; nbval re-executes those with the switch. The machinery is
tested on small notebooks in a temporary folder.
"""

import gettext
import os
import runpy
import shutil
import subprocess
import xml.etree.ElementTree as ET

import nbformat
import polib
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import zh_sync

COURSE = zh_sync.Course()
ROOT = COURSE.root
ENGLISH = COURSE.files()
SOURCES = ENGLISH + [ROOT / zh_sync.MESSAGES_EN]  # each with a catalog
CATALOGS = COURSE.catalogs() + [COURSE.catalog_path(SOURCES[-1])]
SYNC = "run `python tools/zh_sync.py`"


def test_every_english_notebook_has_a_chinese_one_and_a_catalog_and_no_other():
    chinese = set(COURSE.files("zh"))
    expected = {COURSE.zh_path(path) for path in ENGLISH}
    assert not expected - chinese, f"no Chinese notebook yet ({SYNC}): {sorted(expected - chinese)}"
    assert not chinese - expected, f"English notebook gone ({SYNC}): {sorted(chinese - expected)}"
    assert set(CATALOGS) == {COURSE.catalog_path(path) for path in SOURCES} | {ROOT / zh_sync.SHARED}


@pytest.mark.parametrize("en_file", SOURCES + [zh_sync.SHARED],
                         ids=[COURSE.name(path) for path in SOURCES] + ["shared"])
def test_each_chinese_notebook_and_the_checks_messages_are_a_faithful_current_translation(en_file):
    """What `status` lists as wrong: the notebook (or checker/messages_zh.mo) and its catalog are
    what the tool writes (re-executed with the switch since the code changed), each translated
    entry keeps formulas, links, code, numbers and placeholders, in the house style. Entries still
    to translate may remain: they show their English, marked."""
    found = COURSE.audit(en_file)
    wrong = {kind: found[kind] for kind in ("generated", "run", "text", "style") if found[kind]}
    assert not wrong, wrong


def test_one_english_text_has_one_translation():
    assert COURSE.translation_variants() == {}


def test_code_cells_are_chinese_in_exercises_practice_and_solutions_and_the_setup_cell_everywhere():
    shared = {e.msgid: e for e in polib.pofile(str(ROOT / zh_sync.SHARED))}
    for en_file in ENGLISH:
        folder = en_file.relative_to(ROOT).parts[0]
        setup = next(c for c in zh_sync.read(en_file).cells if c.cell_type == "code")
        catalog = polib.pofile(str(COURSE.catalog_path(en_file)))
        code = [e for e in catalog if e.comment == zh_sync.CODE_NOTE and not e.obsolete]
        own = [e for e in code if e.msgctxt == setup.id]
        assert own or setup.source in shared, en_file  # its own entry, or the shared text's
        assert (len(code) > len(own)) == (folder in zh_sync.CODE_FOLDERS), en_file
        # an entry still to translate shows its English, marked (CONTRIBUTING.md): it may wait
        assert all(zh_sync.CHINESE.search(e.msgstr) for e in code if e.translated()), en_file
    assert all(zh_sync.CHINESE.search(e.msgstr) for e in shared.values() if e.translated())


def test_links_in_the_chinese_notebooks_reach_a_file():
    broken = []
    for zh_file in COURSE.files("zh"):
        for cell in zh_sync.read(zh_file).cells:
            markdown = cell.source if cell.cell_type == "markdown" else ""
            for target in zh_sync.carried_parts(markdown)[0]["link target"]:
                path = target.partition("#")[0]
                if "://" not in target and path and not (zh_file.parent / path).is_file():
                    broken.append(f"{COURSE.name(zh_file)}: {target}")
    assert not broken


def test_nbval_runs_exactly_the_chinese_notebooks_with_the_switch():
    """The root conftest.py keeps nbval off the Chinese notebooks that copy English outputs."""
    globs = runpy.run_path(str(ROOT / "conftest.py"))["collect_ignore_glob"]
    for zh_file in COURSE.files("zh"):
        ignored = any(zh_file.match(str(ROOT / pattern)) for pattern in globs)
        has_switch = zh_sync.checks_import(zh_sync.read(zh_file)) is not None
        assert ignored != has_switch, COURSE.name(zh_file)


# ---- the catalogs as translators' tools read them ----------------------------------------------


def test_gettext_accepts_each_catalog_and_writes_it_unchanged():
    """msgfmt --check warns about nothing; msgcat --no-wrap, what Poedit and Weblate keep when set
    not to wrap, rewrites each file byte for byte. Skipped without GNU gettext, except in CI
    (CI_REQUIRES_GETTEXT: there it fails); the audit checks each file's form either way."""
    if not shutil.which("msgfmt") and not os.environ.get("CI_REQUIRES_GETTEXT"):
        pytest.skip("GNU gettext (msgfmt, msgcat) is not installed, so msgfmt --check did not run "
                    "(CI runs it)")
    refused = {}
    for path in CATALOGS:
        checked = subprocess.run(["msgfmt", "--check", "-o", "/dev/null", path],
                                 capture_output=True, text=True)
        rewritten = subprocess.run(["msgcat", "--no-wrap", path], capture_output=True, text=True)
        if checked.returncode or checked.stderr or rewritten.stdout != path.read_text():
            refused[COURSE.name(path)] = checked.stderr or "msgcat --no-wrap rewrites it"
    assert refused == {}


def test_the_glossary_file_is_what_the_glossary_generates():
    committed = (ROOT / zh_sync.GLOSSARY_FILE).read_text()
    assert committed == zh_sync.glossary_tbx((ROOT / "GLOSSARY.zh.md").read_text()), SYNC
    terms = {entry.find("langSet/tig/term").text: entry.findall("langSet/tig/term")[1].text
             for entry in ET.fromstring(committed).iter("termEntry")}
    assert terms["token"] == "词元" and terms["gibberish"] == "毫无意义的文本" and len(terms) > 200


# ---- the machinery, on notebooks in a temporary folder ----------------------------------------

LINKED = ("The model of [notebook 02](02_more.ipynb) has $d^2$ weights, 768 wide; "
          "see [the README](../README.md) and `gpt.py`.")
ZH_LINKED = ("[笔记本 02](02_more.ipynb) 的模型有 $d^2$ 个权重，宽 768；见 [README](../../README.zh.md) 和 "
             "`gpt.py`。")  # LINKED translated, its link to the README adjusted for zh/
STUB = "# TODO: count the parameters\nff_params = None\nprint(\"your count:\", ff_params)"
TITLE = "# 4.1 标题\n\n两句说明。"
DEMO, EXERCISE = "notebooks/01_demo.ipynb", "exercises/exercise_4_1.ipynb"
MESSAGES = zh_sync.MESSAGES_EN.as_posix()  # its catalog lies where a notebook's would


def write_notebook(path, cells):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=cells), path)


def code_cell(source, text, cell_id):
    return new_code_cell(source, id=cell_id, execution_count=1,
                         outputs=[new_output("stream", name="stdout", text=text)])


@pytest.fixture
def repo(tmp_path):
    """A course folder with one chapter notebook, one exercise, the checks' messages and a
    glossary, synced once by the tool (without running a notebook)."""
    write_notebook(tmp_path / DEMO, [
        new_markdown_cell("# 4.1 A title\n\nTwo sentences of prose.", id="title"),
        code_cell("print(2 + 2)", "4\n", "add"),
        new_markdown_cell(LINKED, id="linked"),
    ])
    write_notebook(tmp_path / EXERCISE, [
        new_markdown_cell("# Exercise 4.1\n\nCount the parameters.", id="ex-title"),
        new_code_cell("# Colab only: the setup cell\nimport os", id="setup"),
        new_code_cell("from checker.exercises import check_4_1", id="imports"),
        code_cell(STUB, "your count: None\n", "stub"),
        code_cell("print(3 * 3)", "9\n", "mul"),
        code_cell("check_4_1(None)", "Not attempted yet\n", "feedback"),
    ])
    (tmp_path / "checker").mkdir()
    (tmp_path / MESSAGES).write_text('ENGLISH = {"hello": "Hello, {name}."}\n')
    (tmp_path / "GLOSSARY.zh.md").write_text(
        "# Glossary\n\n## Glossary\n\n| English | 中文 | note |\n|---|---|---|\n"
        "| token / token ID | 词元 / 词元 ID | not 令牌 |\n| gibberish | 毫无意义的文本 | |\n")
    course = zh_sync.Course(tmp_path)
    course.update(run=False)
    return course


def notebook_path(course, name=DEMO, zh=True):
    return course.root / ("zh/" if zh else "") / name


def catalog(course, name=DEMO):
    return polib.pofile(str(course.catalog_path(course.root / name)))


def translate(course, key, chinese, name=DEMO):
    """What a translator does in Poedit: set the Chinese text, clear the fuzzy flag, save."""
    po = catalog(course, name)
    entry = po.find(key, by="msgctxt")
    entry.msgstr, entry.flags, entry.previous_msgid = chinese, [], None
    po.save()


def edit_cell(path, cell_id, **changes):
    notebook = zh_sync.read(path)
    next(c for c in notebook.cells if c.id == cell_id).update(changes)
    nbformat.write(notebook, path)


def test_update_writes_a_catalog_and_shows_english_marked_where_no_translation_exists(repo):
    english = zh_sync.read(notebook_path(repo, zh=False))
    chinese = zh_sync.read(notebook_path(repo))
    assert chinese.cells[1] == english.cells[1]
    assert chinese.cells[0].source == "# 〔待译〕 4.1 A title\n\nTwo sentences of prose."
    po = catalog(repo)
    assert {"Language-Team", "Plural-Forms", "PO-Revision-Date"} <= set(po.metadata)
    assert [(e.msgctxt, e.msgid, e.msgstr, e.occurrences, e.comment) for e in po] == [
        ("title", english.cells[0].source, "", [(DEMO, "1")], zh_sync.MARKDOWN_NOTE),
        ("linked", LINKED, "", [(DEMO, "3")], zh_sync.MARKDOWN_NOTE)]
    found = repo.audit(notebook_path(repo, zh=False))
    assert found["untranslated"] == ["title", "linked"] and not found["generated"]


def test_update_dates_the_catalog_only_when_an_entry_changes(repo):
    path = repo.catalog_path(notebook_path(repo, zh=False))
    po = catalog(repo)
    po.metadata["PO-Revision-Date"] = "2000-01-01 00:00+0000"
    po.save()
    repo.update(run=False)
    text = path.read_text()
    assert "2000-01-01" in text  # no entry changed: no new date
    repo.update(run=False)
    assert path.read_text() == text  # a second run writes nothing
    edit_cell(notebook_path(repo, zh=False), "title", source="# 4.1 A new title")
    repo.update(run=False)
    assert "2000-01-01" not in path.read_text()


def test_a_changed_english_cell_makes_its_entry_fuzzy_and_shows_its_english_marked(repo):
    en_file = notebook_path(repo, zh=False)
    translate(repo, "title", TITLE)
    assert repo.audit(en_file)["generated"]  # the notebook is not regenerated yet
    repo.update(run=False)
    assert repo.audit(en_file)["untranslated"] == ["linked"]
    assert zh_sync.read(notebook_path(repo)).cells[0].source == TITLE

    edit_cell(en_file, "title", source="# 4.1 A title\n\nTwo changed sentences.")
    found = repo.audit(en_file)
    assert found["changed"] == ["title"] and found["generated"]  # before any update
    repo.update(run=False)
    entry = catalog(repo)[0]
    assert entry.fuzzy and entry.msgstr == TITLE
    assert entry.previous_msgid == "# 4.1 A title\n\nTwo sentences of prose."
    assert zh_sync.read(notebook_path(repo)).cells[0].source == (
        "# 〔待译〕 4.1 A title\n\nTwo changed sentences.")
    found = repo.audit(en_file)
    assert found["changed"] == ["title"] and not (found["generated"] or found["text"])


def test_a_removed_cell_leaves_no_entry_and_its_translation_follows_a_new_id(repo):
    translate(repo, "title", TITLE)
    edit_cell(notebook_path(repo, zh=False), "title", id="regenerated")
    repo.update(run=False)
    entries = {e.msgctxt: e for e in catalog(repo)}
    assert "title" not in entries and entries["regenerated"].msgstr == TITLE
    assert zh_sync.read(notebook_path(repo)).cells[0].source == TITLE


def test_a_hand_edited_chinese_notebook_is_caught(repo):
    edit_cell(notebook_path(repo), "title", source="# 4.1 另一个标题\n\n两句说明。")
    assert repo.audit(notebook_path(repo, zh=False))["generated"] == [
        "zh/notebooks/01_demo.ipynb differs from what its catalog generates: run "
        "`python tools/zh_sync.py`"]


def test_a_translation_that_drops_a_formula_or_breaks_the_style_fails_the_audit(repo):
    translate(repo, "linked", ZH_LINKED.replace("$d^2$ 个", "很多").replace("的模型", "的面板"))
    found = repo.audit(notebook_path(repo, zh=False))
    assert found["text"] == ["linked: formula missing: $d^2$"]
    assert found["style"] == ["linked: a figure's panel: 子图: '面板'"]


def test_an_english_edit_lands_without_its_translation_and_status_counts_it(repo, capsys):
    """An English contributor runs the tool and nothing else: the suite's checks pass, the
    Chinese notebook shows the new English text marked, and status counts the entry as fuzzy."""
    for key, chinese in (("title", TITLE), ("linked", ZH_LINKED)):
        translate(repo, key, chinese)
    repo.update(run=False)
    en_file = notebook_path(repo, zh=False)
    edit_cell(en_file, "linked", source=LINKED.replace("768 wide", "1,024 wide"))
    assert repo.audit(en_file)["generated"]  # before the tool runs, the suite fails
    repo.update(run=False)
    found = repo.audit(en_file)
    assert found["changed"] == ["linked"] and not any(found[k] for k in ("generated", "run", "text"))
    shown_text = zh_sync.read(notebook_path(repo)).cells[2].source
    assert shown_text.startswith("〔待译〕\n\nThe model of") and "1,024 wide" in shown_text
    exercise = zh_sync.read(notebook_path(repo, EXERCISE))  # as if executed, for status
    exercise.metadata["zh"] = {"executed_for": repo.execution_stamp(
        exercise, zh_sync.read(notebook_path(repo, EXERCISE, zh=False)))}
    nbformat.write(exercise, notebook_path(repo, EXERCISE))
    assert repo.status()  # nothing wrong: entries still to translate
    assert "01_demo.po                     1/2   translated; 1 fuzzy (shown in English, marked 〔待译〕)" in (
        capsys.readouterr().out)


def test_a_text_that_several_notebooks_share_is_translated_once(repo):
    second = "notebooks/02_demo.ipynb"
    write_notebook(repo.root / second, [
        new_markdown_cell("## Where this step fits", id="fits-2"),
        new_markdown_cell("Another notebook.", id="other")])
    edit_cell(notebook_path(repo, zh=False), "title", source="## Where this step fits")
    repo.update(run=False)
    shared = polib.pofile(str(repo.root / zh_sync.SHARED))
    assert [e.msgid for e in shared] == ["## Where this step fits"]
    assert "title" not in {e.msgctxt for e in catalog(repo)}
    assert "fits-2" not in {e.msgctxt for e in catalog(repo, second)}
    shared[0].msgstr = "## 这一步在整体中的位置"
    shared.save()
    repo.update(run=False)
    for name in (DEMO, second):
        assert zh_sync.read(notebook_path(repo, name)).cells[0].source == "## 这一步在整体中的位置"
    assert not repo.audit(zh_sync.SHARED)["generated"]


def test_an_edited_shared_text_keeps_the_translation_of_the_closest_old_text_only(repo):
    """Each of two edited shared texts takes, fuzzy, the translation of the old text closest to
    it; a third new one, as close to one of them, gets none: each old translation goes to one."""
    second = "notebooks/02_demo.ipynb"
    texts = ["## Where this step fits", "> The model only predicts the next token."]
    cells = [new_markdown_cell(text, id=f"shared-{i}") for i, text in enumerate(texts)]
    write_notebook(repo.root / DEMO, cells)
    write_notebook(repo.root / second, cells)
    repo.update(run=False)
    shared = polib.pofile(str(repo.root / zh_sync.SHARED))
    chinese = {texts[0]: "## 这一步在整体中的位置", texts[1]: "> 模型只预测下一个词元。"}
    for entry in shared:
        entry.msgstr = chinese[entry.msgid]
    shared.save()
    edited = ["> The model only ever predicts the next token.", "## Where this step fits in",
              "## Where this step fits next"]  # in another order than the texts they replace
    for name in (DEMO, second):
        write_notebook(repo.root / name, [new_markdown_cell(text, id=f"shared-{i}")
                                          for i, text in enumerate(edited)])
    repo.update(run=False)
    shared = polib.pofile(str(repo.root / zh_sync.SHARED))
    assert [(e.msgid, e.msgstr, e.previous_msgid, e.fuzzy) for e in shared] == [
        (edited[0], chinese[texts[1]], texts[1], True),
        (edited[1], chinese[texts[0]], texts[0], True),
        (edited[2], "", None, False)]
    shown = [cell.source for cell in zh_sync.read(notebook_path(repo)).cells]
    assert shown[0] == f"{zh_sync.PENDING}\n\n{edited[0]}"  # still a blockquote


def one_line_per_text(path):
    """A catalog as Weblate saves it with po_line_wrap -1: each text on one line, \n escapes in it."""
    lines, out = path.read_text().split("\n"), []
    for line in lines:
        if line.startswith('"') and out and out[-1].endswith('"') and not out[-1].startswith("#"):
            out[-1] = out[-1][:-1] + line[1:]  # glue the continuation onto the line before
        else:
            out.append(line)
    path.write_text("\n".join(out))


def needs_gettext():
    if not shutil.which("msgcat") and not os.environ.get("CI_REQUIRES_GETTEXT"):
        pytest.skip("GNU gettext (msgcat) is not installed (CI runs this test)")


def test_a_catalog_saved_by_weblate_at_65535_is_what_the_tool_writes(repo):
    """po_line_wrap 65535, "only wrap at newlines", writes what msgcat --no-wrap writes."""
    needs_gettext()
    translate(repo, "linked", ZH_LINKED)
    repo.update(run=False)
    path = repo.catalog_path(notebook_path(repo, zh=False))
    saved = subprocess.run(["msgcat", "--no-wrap", path], capture_output=True, text=True).stdout
    assert saved == path.read_text()


def test_a_catalog_saved_by_weblate_at_minus_one_is_named_and_repaired(repo):
    en_file = notebook_path(repo, zh=False)
    translate(repo, "title", TITLE)
    repo.update(run=False)
    path = repo.catalog_path(en_file)
    one_line_per_text(path)
    assert catalog(repo).find("title", by="msgctxt").msgstr == TITLE  # the same catalog
    assert any("po_line_wrap must be 65535" in p for p in repo.audit(en_file)["generated"])
    repo.update(run=False)  # the documented repair
    assert not repo.audit(en_file)["generated"]
    assert zh_sync.read(notebook_path(repo)).cells[0].source == TITLE


def test_a_catalog_saved_by_poedit_keeps_its_header_and_is_repaired(repo):
    """Poedit wraps at 79 columns unless told not to, and writes its own header fields."""
    needs_gettext()
    en_file = notebook_path(repo, zh=False)
    translate(repo, "linked", ZH_LINKED)
    repo.update(run=False)
    path = repo.catalog_path(en_file)
    po = zh_sync.load_po(path)
    po.metadata.update({"X-Generator": "Poedit 3.4.2", "Last-Translator": "Li Hua <li@example.org>"})
    po.save()
    path.write_text(subprocess.run(["msgcat", "--width=79", path], capture_output=True,
                                   text=True).stdout)
    assert any("wrapped" in p for p in repo.audit(en_file)["generated"])
    repo.update(run=False)
    assert not repo.audit(en_file)["generated"]
    assert catalog(repo).metadata["X-Generator"] == "Poedit 3.4.2"


def test_status_says_what_is_wrong_with_a_catalog(repo, capsys):
    path = repo.catalog_path(notebook_path(repo, zh=False))
    one_line_per_text(path)
    assert not repo.status()
    assert "saved otherwise than the tool writes it" in capsys.readouterr().out


def test_a_catalog_saved_with_wrapped_lines_is_out_of_step(repo):
    """As Poedit or Weblate may save it: status and the tests report it, the tool rewrites it."""
    en_file = notebook_path(repo, zh=False)
    path = repo.catalog_path(en_file)
    path.write_text(path.read_text().replace(f'msgid "{LINKED}"',
                                             f'msgid ""\n"{LINKED[:40]}"\n"{LINKED[40:]}"'))
    assert catalog(repo).find("linked", by="msgctxt").msgid == LINKED  # the same catalog
    assert any("wrapped" in problem for problem in repo.audit(en_file)["generated"])
    repo.update(run=False)
    assert repo.audit(en_file)["generated"] == []


def test_code_cells_in_exercises_translate_comments_and_strings_only(repo):
    entries = {e.msgctxt: e for e in catalog(repo, EXERCISE)}
    assert set(entries) == {"ex-title", "setup", "stub"}  # not code without words
    assert entries["stub"].comment == zh_sync.CODE_NOTE
    chinese = "# TODO：统计参数量\nff_params = None\nprint(\"你的结果：\", ff_params)"
    translate(repo, "stub", chinese, EXERCISE)
    repo.update(run=False)
    assert zh_sync.read(notebook_path(repo, EXERCISE)).cells[4].source == chinese  # after switch
    translate(repo, "stub", chinese.replace("None", "0"), EXERCISE)
    assert repo.audit(notebook_path(repo, EXERCISE, zh=False))["text"] == [
        "stub: the code changed: translate only comments and strings"]


def test_exercises_get_the_switch_and_may_differ_only_in_feedback(repo):
    en_file = notebook_path(repo, EXERCISE, zh=False)
    assert repo.update(run=False) == [notebook_path(repo, EXERCISE)]  # until it is executed
    chinese = zh_sync.read(notebook_path(repo, EXERCISE))
    assert [c.id for c in chinese.cells] == ["ex-title", "setup", "imports", zh_sync.SWITCH_ID,
                                             "stub", "mul", "feedback"]
    assert repo.audit(en_file)["run"]

    chinese.metadata["zh"] = {"executed_for": repo.execution_stamp(chinese, zh_sync.read(en_file))}
    nbformat.write(chinese, notebook_path(repo, EXERCISE))
    chinese_feedback = [new_output("stream", name="stdout", text="尚未作答\n")]
    edit_cell(notebook_path(repo, EXERCISE), "feedback", outputs=chinese_feedback)
    assert not repo.audit(en_file)["generated"]
    edit_cell(notebook_path(repo, EXERCISE), "mul", outputs=chinese_feedback)
    assert repo.audit(en_file)["generated"] == [
        "mul: outputs differ from the English ones (not a check's feedback)"]


def test_a_chinese_notebook_and_catalog_whose_english_one_is_gone_are_removed(repo):
    notebook_path(repo, zh=False).unlink()
    repo.update(run=False)
    assert not notebook_path(repo).exists()
    assert not repo.catalog_path(notebook_path(repo, zh=False)).exists()


def test_update_writes_the_glossary_file_with_one_entry_per_term(repo):
    tbx = ET.parse(repo.root / zh_sync.GLOSSARY_FILE)
    assert [[t.text for t in entry.iter("term")] for entry in tbx.iter("termEntry")] == [
        ["token", "词元"], ["token ID", "词元 ID"], ["gibberish", "毫无意义的文本"]]


def shown_message(root, code, english):
    """What the checker shows in Chinese for this message (checker/feedback.py reads it so)."""
    with open(root / zh_sync.MESSAGES_ZH, "rb") as compiled:
        return gettext.GNUTranslations(compiled).pgettext(code, english)


def test_a_changed_english_message_makes_its_translation_fuzzy_and_english_shows(repo):
    source = repo.root / MESSAGES
    assert repo.audit(source)["untranslated"] == ["hello"]
    translate(repo, "hello", "你好，{name}。", MESSAGES)
    assert repo.audit(source)["generated"]  # checker/messages_zh.mo not compiled from it yet
    repo.update(run=False)
    assert shown_message(repo.root, "hello", "Hello, {name}.") == "你好，{name}。"

    source.write_text('ENGLISH = {"hello": "Hello again, {name}."}\n')
    assert repo.audit(source)["generated"]  # stale until zh_sync runs
    repo.update(run=False)
    entry = catalog(repo, MESSAGES)[0]
    assert entry.fuzzy and entry.previous_msgid == "Hello, {name}."
    assert repo.audit(source)["changed"] == ["hello"]
    assert shown_message(repo.root, "hello", "Hello again, {name}.") == "〔待译〕 Hello again, {name}."

    translate(repo, "hello", "你好，{nam}。", MESSAGES)
    repo.update(run=False)
    assert repo.audit(source)["text"] == ["hello: placeholders ['name'] became ['nam']"]


# ---- the checks, one function at a time --------------------------------------------------------

SETUP = ('if ok:  # see the README\n    raise ValueError(f"No folder at {path}: upload it")\n'
         '    %pip install -e {path}')
CHINESE_SETUP = ('if ok:  # 见 README\n    raise ValueError(f"{path} 处没有文件夹：请上传")\n'
                 '    %pip install -e {path}')  # a comment and a string translated, a field moved


@pytest.mark.parametrize("chinese, problem", [
    (CHINESE_SETUP, None),
    (CHINESE_SETUP.replace("{path} 处", "{other} 处"), "the code changed"),
    (CHINESE_SETUP.replace("-e ", ""), "the code changed"),  # in a magic
    (CHINESE_SETUP.replace("ValueError", "TypeError"), "the code changed"),
    (CHINESE_SETUP.replace('")', '"'), "does not parse"),
])
def test_a_code_translation_changes_only_comments_strings_and_field_order(chinese, problem):
    found = zh_sync.code_problems(SETUP, chinese)
    assert any(problem in p for p in found) if problem else found == []


@pytest.mark.parametrize("chinese, problem", [
    (ZH_LINKED.replace("[笔记本 02](02_more.ipynb) 的", ""), "link target missing: 02_more.ipynb"),
    (ZH_LINKED.replace("，宽 768", ""), "number missing: 768"),
    (ZH_LINKED.replace(" 和 `gpt.py`", ""), "code span missing: `gpt.py`"),
    (ZH_LINKED.replace("$d^2$ 个", "很多"), "formula missing: $d^2$"),
    (LINKED.replace("../README.md", "../../README.zh.md"), "no Chinese text"),
    ("## " + ZH_LINKED, "headings"),
])
def test_translation_problems_name_what_was_lost(chinese, problem):
    english = COURSE.english_for_zh(LINKED, ROOT / DEMO)
    assert any(p.startswith(problem) for p in zh_sync.translation_problems(english, chinese))


@pytest.mark.parametrize("chinese, problem", [
    ("本章的模型最后只会生成乱码。", "乱码 is mojibake"),
    ('我们用 "不用层归一化" 的模型训练。', "ASCII quotes around Chinese text"),
    ("Xiong et al.（2020）表明", "et al."),
    ("本 notebook 检验三种说法。", "English the glossary translates"),
    ("每个面板中的曲线", "a figure's panel"),
    ("嵌入层和输出头共享权重", "output head"),
    ("# 附加内容：训练", "bonus"),
    ("## 巩固\n\n导入 `gpt`", "the closing section"),
    ("这是*特征*。", "italics"), ("这是 _特征_。", "italics"), ("这是**特征**。", None),
    ("**选读。** 本章的笔记本", "a bold label"), ("- **转置的权重：** 它的", "a bold label"),
    ("**选读**。本章的**占位模型**。", None),
    ("Kaplan 等人（“Scaling Laws”，2020）把它写成", "citation order"),
    ("Mixtral（Jiang 等人，“Mixtral of Experts”，2024）有", "citation order"),
    ("Kaplan 等人在“Scaling Laws”（2020）的表 1 中", "citation order"),
    ("Ainslie 等人（2023），“GQA”，表 1", "citation order"),
    ("Xiong 等人（2020，“On Layer Normalization”）表明；GPT-2（Radford 等人，2019，“Language "
     "Models”）；Kaplan 等人（2020）；Hoffmann 等人（2022，“Training”，即 Chinchilla 论文）", None),
    ("`*args*` 与 $a*b*c$ 以及 *English only*", None),
    ('见 `notebook.ipynb` 和 [笔记本 02](../bonus/02_panel.ipynb)，$\\text{bug}$；Hugging Face 中的 '
     '"llama3" 与 "default" 两种取值，以及 <https://example.org/notebooks>。', None),
])
def test_the_style_check_flags_what_the_glossary_rules_out_in_chinese_prose(chinese, problem):
    found = zh_sync.style_problems(chinese)
    assert any(p.startswith(problem) for p in found) if problem else found == []


def test_links_leave_the_chinese_folder_except_to_notebooks():
    en_file = ROOT / DEMO
    assert COURSE.english_for_zh(LINKED, en_file) == LINKED.replace("../README.md",
                                                                    "../../README.zh.md")
    for kept in ("../exercises/exercise_4_1.ipynb", "https://example.org/a.md", "#a-heading"):
        assert COURSE.zh_link(kept, en_file) == kept
    assert COURSE.zh_link("../gpt.py", en_file) == "../../gpt.py"


def test_glossary_rows_of_several_terms_give_one_term_each():
    assert zh_sync.glossary_terms("output layer, output head (`out_head`)", "输出层") == [
        ("output layer", "输出层", ""), ("output head", "输出层", "`out_head`")]
    assert zh_sync.glossary_terms("layer normalization (layer norm)", "层归一化") == [
        ("layer normalization", "层归一化", ""), ("layer norm", "层归一化", "")]
