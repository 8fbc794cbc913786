"""The Chinese edition (zh/) is a complete translation of the current English notebooks.

The translations live in gettext catalogs (locale/zh/.../*.po, kept by tools/zh_sync.py), and
each Chinese notebook must be exactly what its English notebook and catalog generate, as
gpt.py must be what the notebooks' export cells generate. No kernel runs here: the notebooks are
read as files. A Chinese notebook without the exercises' language switch has exactly the English
code cells, outputs included, so the English notebook's strict nbval run covers it; those with
the switch are re-executed by nbval themselves. The machinery is tested on small notebooks in a
temporary folder.
"""

import ast
import functools
import json
import shutil

import nbformat
import polib
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import zh_sync

ROOT = zh_sync.ROOT
ENGLISH = zh_sync.english_notebooks()
NAMES = [path.relative_to(ROOT).as_posix() for path in ENGLISH]
SYNC = "run `python tools/zh_sync.py`"


@functools.cache
def audit(en_file):
    return zh_sync.audit(en_file)


def test_every_english_notebook_has_a_chinese_one_and_a_catalog_and_no_other():
    chinese = set(zh_sync.chinese_notebooks())
    expected = {zh_sync.zh_path(path) for path in ENGLISH}
    assert not expected - chinese, f"no Chinese notebook yet ({SYNC}): {sorted(expected - chinese)}"
    assert not chinese - expected, f"English notebook gone ({SYNC}): {sorted(chinese - expected)}"
    assert set(zh_sync.catalogs()) == {zh_sync.catalog_path(path) for path in ENGLISH}


@pytest.mark.parametrize("en_file", ENGLISH, ids=NAMES)
def test_each_chinese_notebook_is_what_its_catalog_generates(en_file):
    assert not audit(en_file)["generated"]


@pytest.mark.parametrize("en_file", ENGLISH, ids=NAMES)
def test_every_cell_translates_the_current_english_text(en_file):
    found = audit(en_file)
    assert not found["changed"], (
        "English text changed since these cells were translated (fuzzy entries); translate "
        f"them again (`python tools/zh_sync.py todo ...`, then `apply`): {found['changed']}")
    assert not found["untranslated"], f"not translated yet: {found['untranslated']}"


@pytest.mark.parametrize("en_file", ENGLISH, ids=NAMES)
def test_translations_keep_formulas_links_code_and_numbers(en_file):
    assert not audit(en_file)["text"]


@pytest.mark.parametrize("en_file", [p for p in ENGLISH if zh_sync.uses_checks(zh_sync.read(p))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebooks_with_the_language_switch_ran_with_the_current_code(en_file):
    assert not audit(en_file)["run"]


def test_code_cells_are_chinese_in_exercises_practice_and_solutions_and_the_setup_cell_everywhere():
    for en_file in ENGLISH:
        folder = en_file.relative_to(ROOT).parts[0]
        setup = next(c for c in zh_sync.read(en_file).cells if c.cell_type == "code")
        catalog = polib.pofile(str(zh_sync.catalog_path(en_file)))
        code = [e for e in catalog if e.comment == zh_sync.CODE_NOTE and not e.obsolete]
        assert code[0].msgctxt == setup.id, en_file
        assert (len(code) > 1) == (folder in zh_sync.CODE_FOLDERS), en_file
        assert all(zh_sync.CHINESE.search(e.msgstr) for e in code), en_file


def test_links_in_the_chinese_notebooks_reach_a_file():
    broken = []
    for zh_file in zh_sync.chinese_notebooks():
        for cell in zh_sync.read(zh_file).cells:
            parts, _ = zh_sync.carried_parts(cell.source) if cell.cell_type == "markdown" else ({}, "")
            for target in parts.get("link target", []):
                path = target.partition("#")[0]
                if "://" not in target and path and not (zh_file.parent / path).is_file():
                    broken.append(f"{zh_file.relative_to(ROOT)}: {target}")
    assert not broken


def test_nbval_runs_exactly_the_chinese_notebooks_with_the_switch():
    """The root conftest.py keeps nbval off the Chinese notebooks that copy English outputs."""
    tree = ast.parse((ROOT / "conftest.py").read_text())
    globs = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and [t.id for t in node.targets] == ["collect_ignore_glob"])
    for zh_file in zh_sync.chinese_notebooks():
        ignored = any(zh_file.match(str(ROOT / pattern)) for pattern in globs)
        has_switch = zh_sync.uses_checks(zh_sync.read(zh_file))
        assert ignored != has_switch, zh_file.relative_to(ROOT)


# ---- the machinery, on notebooks in a temporary folder ----------------------------------------

LINKED = ("The model of [notebook 02](02_more.ipynb) has $d^2$ weights, 768 wide; "
          "see [the README](../README.md) and `gpt.py`.")
STUB = "# TODO: count the parameters\nff_params = None\nprint(\"your count:\", ff_params)"


def write_notebook(path, cells):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=cells), path)


def code_cell(source, text, cell_id):
    return new_code_cell(source, id=cell_id, execution_count=1,
                         outputs=[new_output("stream", name="stdout", text=text)])


@pytest.fixture
def repo(tmp_path):
    """A course folder with one chapter notebook, one exercise and the checks' two files."""
    write_notebook(tmp_path / "notebooks" / "01_demo.ipynb", [
        new_markdown_cell("# 4.1 A title\n\nTwo sentences of prose.", id="title"),
        code_cell("print(2 + 2)", "4\n", "add"),
        new_markdown_cell(LINKED, id="linked"),
    ])
    write_notebook(tmp_path / "exercises" / "exercise_4_1.ipynb", [
        new_markdown_cell("# Exercise 4.1\n\nCount the parameters.", id="ex-title"),
        new_code_cell("# Colab only: the setup cell\nimport os", id="setup"),
        new_code_cell("from exercises.checks import check_4_1", id="imports"),
        code_cell(STUB, "your count: None\n", "stub"),
        code_cell("print(3 * 3)", "9\n", "mul"),
        code_cell("check_4_1(None)", "Not attempted yet\n", "feedback"),
    ])
    (tmp_path / "exercises" / "checks.py").write_text("def check_4_1(answer): ...\n")
    (tmp_path / "exercises" / "messages.py").write_text('MESSAGES = {"en": {}}\n')
    return tmp_path


def notebook_path(repo, name="notebooks/01_demo.ipynb", zh=True):
    return repo / ("zh/" if zh else "") / name


def catalog(repo, name="notebooks/01_demo.ipynb"):
    return polib.pofile(str(zh_sync.catalog_path(repo / name, repo)))


def edit_cell(path, cell_id, **changes):
    notebook = zh_sync.read(path)
    cell = next(c for c in notebook.cells if c.id == cell_id)
    for key, value in changes.items():
        cell[key] = value
    nbformat.write(notebook, path)


def translate_title(repo):
    zh_sync.apply(notebook_path(repo), {"title": "# 4.1 标题\n\n两句说明。"}, repo)


def test_update_writes_a_catalog_and_shows_english_where_no_translation_exists(repo):
    zh_sync.update(repo, run=False)
    english = zh_sync.read(notebook_path(repo, zh=False))
    chinese = zh_sync.read(notebook_path(repo))
    assert chinese.cells[1] == english.cells[1]
    assert chinese.cells[0].source == english.cells[0].source
    entries = [(e.msgctxt, e.msgid, e.msgstr) for e in catalog(repo)]
    assert entries == [("title", english.cells[0].source, ""), ("linked", LINKED, "")]
    found = zh_sync.audit(notebook_path(repo, zh=False), repo)
    assert found["untranslated"] == ["title", "linked"] and not found["generated"]


def test_a_changed_english_cell_makes_its_entry_fuzzy_and_fails_the_audit(repo):
    en_file = notebook_path(repo, zh=False)
    zh_sync.update(repo, run=False)
    translate_title(repo)
    assert zh_sync.audit(en_file, repo)["untranslated"] == ["linked"]
    assert zh_sync.read(notebook_path(repo)).cells[0].source.startswith("# 4.1 标题")

    edit_cell(en_file, "title", source="# 4.1 A title\n\nTwo changed sentences.")
    found = zh_sync.audit(en_file, repo)
    assert found["changed"] == ["title"] and found["generated"]  # before any update
    zh_sync.update(repo, run=False)
    entry = catalog(repo)[0]
    assert "fuzzy" in entry.flags and entry.msgstr == "# 4.1 标题\n\n两句说明。"
    assert entry.previous_msgid == "# 4.1 A title\n\nTwo sentences of prose."
    assert zh_sync.read(notebook_path(repo)).cells[0].source.endswith("Two changed sentences.")
    assert zh_sync.audit(en_file, repo)["changed"] == ["title"]


def test_a_removed_cell_becomes_obsolete_and_its_translation_follows_a_new_id(repo):
    en_file = notebook_path(repo, zh=False)
    zh_sync.update(repo, run=False)
    translate_title(repo)
    edit_cell(en_file, "title", id="regenerated")
    zh_sync.update(repo, run=False)
    entries = {e.msgctxt: e for e in catalog(repo)}
    assert entries["title"].obsolete and entries["regenerated"].msgstr.startswith("# 4.1 标题")
    assert zh_sync.read(notebook_path(repo)).cells[0].source.startswith("# 4.1 标题")


def test_a_hand_edited_chinese_notebook_is_caught(repo):
    en_file = notebook_path(repo, zh=False)
    zh_sync.update(repo, run=False)
    translate_title(repo)
    edit_cell(notebook_path(repo), "title", source="# 4.1 另一个标题\n\n两句说明。")
    assert zh_sync.audit(en_file, repo)["generated"] == [
        "zh/notebooks/01_demo.ipynb differs from what its catalog generates: run "
        "`python tools/zh_sync.py`"]
    zh_sync.update(repo, run=False)
    edit_cell(notebook_path(repo), "add", source="print(2 + 3)")
    assert zh_sync.audit(en_file, repo)["generated"]


def test_the_pilot_fails_when_one_english_cell_changes(tmp_path):
    """On a copy of notebooks/02_layer_norm.ipynb, its catalog and its translation."""
    name = "notebooks/02_layer_norm.ipynb"
    for path in (name, f"zh/{name}", zh_sync.catalog_path(ROOT / name).relative_to(ROOT)):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    en_file = tmp_path / name
    assert zh_sync.audit(en_file, tmp_path) == {k: [] for k in zh_sync.audit(en_file, tmp_path)}
    english = zh_sync.read(en_file)
    cell = next(c for c in english.cells if c.cell_type == "markdown")
    cell.source += " One more sentence."
    nbformat.write(english, en_file)
    after = zh_sync.audit(en_file, tmp_path)
    assert after["changed"] == [cell.id] and after["generated"]


def test_apply_refuses_a_translation_of_english_text_changed_since_todo(repo, tmp_path):
    zh_sync.update(repo, run=False)
    printed = zh_sync.todo(notebook_path(repo), root=repo)
    header = next(line for line in printed.splitlines() if line.startswith("=== title en:"))
    translated = tmp_path / "title.md"
    translated.write_text(f"{header}\n# 4.1 标题\n\n两句说明。\n")
    zh_sync.apply(notebook_path(repo), zh_sync.read_translations(translated), repo)
    assert zh_sync.audit(notebook_path(repo, zh=False), repo)["untranslated"] == ["linked"]

    edit_cell(notebook_path(repo, zh=False), "title", source="# 4.1 A new title")
    with pytest.raises(ValueError, match="changed since `todo` printed it"):
        zh_sync.apply(notebook_path(repo), zh_sync.read_translations(translated), repo)


def test_apply_refuses_a_translation_that_drops_a_formula_and_writes_nothing(repo):
    zh_sync.update(repo, run=False)
    before = zh_sync.catalog_path(notebook_path(repo, zh=False), repo).read_text()
    dropped = "[笔记本 02](02_more.ipynb) 的模型有很多权重，宽 768；见 [README](../../README.zh.md) 和 `gpt.py`。"
    with pytest.raises(ValueError, match=r"formula missing: \$d\^2\$"):
        zh_sync.apply(notebook_path(repo), {"title": "# 4.1 标题\n\n两句。", "linked": dropped}, repo)
    assert zh_sync.catalog_path(notebook_path(repo, zh=False), repo).read_text() == before


def test_code_cells_in_exercises_translate_comments_and_strings_only(repo):
    name = "exercises/exercise_4_1.ipynb"
    zh_sync.update(repo, run=False)
    entries = {e.msgctxt: e for e in catalog(repo, name)}
    assert set(entries) == {"ex-title", "setup", "stub"}  # not code without words
    assert entries["stub"].comment == zh_sync.CODE_NOTE
    chinese = "# TODO：统计参数量\nff_params = None\nprint(\"你的结果：\", ff_params)"
    zh_sync.apply(notebook_path(repo, name), {"stub": chinese}, repo)
    assert zh_sync.read(notebook_path(repo, name)).cells[4].source == chinese  # after the switch
    with pytest.raises(ValueError, match="the code changed"):
        zh_sync.apply(notebook_path(repo, name), {"stub": chinese.replace("None", "0")}, repo)
    with pytest.raises(ValueError, match="does not parse"):
        zh_sync.apply(notebook_path(repo, name), {"stub": "print(\"没有括号\""}, repo)


SETUP = 'if ok:  # see the README\n    raise ValueError(f"No folder at {path}: upload it")\n    %pip install -e {path}'


@pytest.mark.parametrize("chinese, accepted", [
    ('if ok:  # 见 README\n    raise ValueError(f"{path} 处没有文件夹：请上传")\n    %pip install -e {path}', True),
    ('if ok:\n    raise ValueError(f"{other} 处没有文件夹")\n    %pip install -e {path}', False),
    ('if ok:\n    raise ValueError(f"{path} 处没有文件夹")\n    %pip install {path}', False),
    ('if ok:\n    raise TypeError(f"{path} 处没有文件夹")\n    %pip install -e {path}', False),
])
def test_a_code_translation_may_change_comments_strings_and_move_fstring_fields_only(chinese, accepted):
    assert (zh_sync.code_problems(SETUP, chinese) == []) == accepted


@pytest.mark.parametrize("chinese, problem", [
    ("模型有 $d^2$ 个权重，宽 768。见 [README](../../README.zh.md) 和 `gpt.py`。", "link target missing"),
    ("[笔记本 02](02_more.ipynb) 的模型有 $d^2$ 个权重。见 [README](../../README.zh.md) 和 `gpt.py`。",
     "number missing: 768"),
    ("[笔记本 02](02_more.ipynb) 的模型有 $d^2$ 个权重，宽 768；见 [README](../../README.zh.md)。",
     "code span missing: `gpt.py`"),
    ("The model of [notebook 02](02_more.ipynb) has $d^2$ weights, 768 wide; "
     "see [the README](../../README.zh.md) and `gpt.py`.", "no Chinese text"),
    ("## [笔记本 02](02_more.ipynb) 的模型有 $d^2$ 个权重，宽 768；见 [README](../../README.zh.md) 和 "
     "`gpt.py`。", "headings"),
])
def test_translation_problems_name_what_was_lost(chinese, problem):
    english = zh_sync.english_for_zh(LINKED, ROOT / "notebooks" / "01_demo.ipynb")
    assert any(p.startswith(problem) for p in zh_sync.translation_problems(english, chinese))


def test_links_leave_the_chinese_folder_except_to_notebooks():
    en_file = ROOT / "notebooks" / "01_demo.ipynb"
    assert zh_sync.english_for_zh(LINKED, en_file) == LINKED.replace("../README.md", "../../README.zh.md")
    for kept in ("../exercises/exercise_4_1.ipynb", "https://example.org/a.md", "#a-heading"):
        assert zh_sync.zh_link(kept, en_file) == kept
    assert zh_sync.zh_link("../gpt.py", en_file) == "../../gpt.py"


def test_exercises_get_the_switch_and_may_differ_only_in_feedback(repo):
    name = "exercises/exercise_4_1.ipynb"
    en_file = notebook_path(repo, name, zh=False)
    pending = zh_sync.update(repo, run=False)
    assert pending == [notebook_path(repo, name)]
    chinese = zh_sync.read(notebook_path(repo, name))
    assert [c.id for c in chinese.cells] == ["ex-title", "setup", "imports", zh_sync.SWITCH_ID,
                                             "stub", "mul", "feedback"]
    assert zh_sync.audit(en_file, repo)["run"]  # not executed yet

    chinese.metadata["zh"] = {"executed_for": zh_sync.execution_stamp(chinese, zh_sync.read(en_file), repo)}
    nbformat.write(chinese, notebook_path(repo, name))
    chinese_feedback = [new_output("stream", name="stdout", text="尚未作答\n")]
    edit_cell(notebook_path(repo, name), "feedback", outputs=chinese_feedback)
    assert not zh_sync.audit(en_file, repo)["generated"]
    edit_cell(notebook_path(repo, name), "mul", outputs=chinese_feedback)
    assert zh_sync.audit(en_file, repo)["generated"] == [
        "mul: outputs differ from the English ones (not a check's feedback)"]


def test_without_a_chinese_message_table_nothing_is_executed(repo, capsys):
    zh_sync.update(repo)  # would fail if it started a kernel: there is no gpt or checks here
    assert 'no "zh" table yet' in capsys.readouterr().out


def test_a_chinese_notebook_and_catalog_whose_english_one_is_gone_are_removed(repo):
    zh_sync.update(repo, run=False)
    notebook_path(repo, zh=False).unlink()
    zh_sync.update(repo, run=False)
    assert not notebook_path(repo).exists()
    assert not zh_sync.catalog_path(notebook_path(repo, zh=False), repo).exists()


def test_translations_read_from_blocks_or_json(tmp_path):
    blocks = tmp_path / "t.md"
    blocks.write_text("=== title\n%% a note\n# 标题\n\n正文。\n\n=== linked\n链接。\n")
    assert zh_sync.read_translations(blocks) == {"title": "# 标题\n\n正文。", "linked": "链接。"}
    as_json = tmp_path / "t.json"
    as_json.write_text(json.dumps({"title": "# 标题", "linked": {"zh": "链接。"}}))
    assert zh_sync.read_translations(as_json) == {"title": "# 标题", "linked": {"zh": "链接。"}}
    blocks.write_text("=== title\n一\n=== title\n二\n")
    with pytest.raises(ValueError, match="appears twice"):
        zh_sync.read_translations(blocks)


# ---- the two READMEs ----------------------------------------------------------------------------


def setup_commands(readme):
    """The command under each `# N. ...` comment of the set-up block."""
    lines = (ROOT / readme).read_text().splitlines()
    return [lines[i + 1] for i, line in enumerate(lines) if line[:3] in ("# 1", "# 2")]


def test_the_chinese_readme_has_the_english_set_up_commands():
    assert setup_commands("README.zh.md") == setup_commands("README.md")
    assert len(setup_commands("README.md")) == 2


@pytest.mark.parametrize("readme, other", [("README.md", "README.zh.md"), ("README.zh.md", "README.md")])
def test_the_readmes_link_each_other(readme, other):
    targets = zh_sync.carried_parts((ROOT / readme).read_text())[0]["link target"]
    assert other in targets


def test_links_in_the_chinese_readme_reach_a_file():
    targets = zh_sync.carried_parts((ROOT / "README.zh.md").read_text())[0]["link target"]
    assert [t for t in targets if not (ROOT / t).exists()] == []
