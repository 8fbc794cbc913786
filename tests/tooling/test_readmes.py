"""The two READMEs: the same set-up commands (the Chinese one opens the Chinese notebook), links
to each other; they, CONTRIBUTING.md and every folder's README link only to files that exist."""

import pytest

from tools import zh_sync

ROOT = zh_sync.ROOT


def setup_commands(readme):
    """The command under each `# N. ...` comment of the set-up block."""
    lines = (ROOT / readme).read_text().splitlines()
    return [lines[i + 1] for i, line in enumerate(lines) if line[:3] in ("# 1", "# 2")]


def link_targets(readme):
    return zh_sync.carried_parts((ROOT / readme).read_text())[0]["link target"]


def test_the_readmes_link_each_other_and_the_chinese_one_has_the_english_set_up_commands():
    assert "README.zh.md" in link_targets("README.md")
    assert "README.md" in link_targets("README.zh.md")
    english = setup_commands("README.md")
    assert len(english) == 2
    assert setup_commands("README.zh.md") == [
        english[0].replace(" notebooks/01_gpt_backbone", " zh/notebooks/01_gpt_backbone"), english[1]]


def folder_readmes():
    """Every folder's README.md but those in zh/ (generated, tested with the catalogs) and in an
    environment's folders: hidden ones (.venv, caches) or a virtual environment by another name."""
    folders = [folder for folder in ROOT.iterdir() if folder.is_dir() and folder.name != "zh"
               and not folder.name.startswith(".") and not (folder / "pyvenv.cfg").is_file()]
    return sorted(path.relative_to(ROOT).as_posix() for folder in folders
                  for path in folder.rglob("README.md"))


READMES = ["README.md", "README.zh.md", "CONTRIBUTING.md", *folder_readmes()]


@pytest.mark.parametrize("readme", READMES)
def test_links_in_the_readmes_reach_a_file(readme):
    folder = (ROOT / readme).parent
    targets = link_targets(readme)
    assert [t for t in targets if "://" not in t and not (folder / t.partition("#")[0]).exists()] == []
