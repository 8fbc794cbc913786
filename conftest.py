"""How pytest-xdist splits the suite over two workers.

Every test file and notebook runs whole on one worker (a notebook's cells share a kernel).
Work that materializes a GPT-2-sized model (~650 MB each in float32) joins one group, so
those models are built one after another rather than side by side: that keeps the suite's
peak memory down on a small machine. Tests join that group by using the `gpt2_small` fixture
or by carrying `@pytest.mark.xdist_group("big-models")`. Importing Hugging Face transformers
takes seconds per process, so the tests that need it share the "transformers" group. (A test
carries one group mark at most: xdist joins several into a new group name.)
"""

import os
import re

import pytest

# Answers of "Predict, then run" cells are stored hidden; this plugin shows them to nbval.
pytest_plugins = ["tools.predictions"]

# Two workers share two cores: one thread each avoids oversubscription (notebook kernels and
# subprocesses inherit it). .ci/run re-checks the notebooks with two threads.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# glibc raises its mmap threshold after a large block is freed, after which freed model weights
# stay in the process's heap; a fixed threshold hands them back, so the big models built one
# after another on a worker do not pile up.
os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))

# The Chinese edition (zh/, kept by tools/zh_sync.py): a Chinese notebook without the exercises'
# language switch has the English notebook's code and outputs unchanged (tests/tooling/test_zh_sync.py
# proves it without a kernel), and nbval re-executes the English one; so nbval re-executes only
# the Chinese notebooks with the switch, zh/exercises, zh/solutions and zh/practice.
collect_ignore_glob = ["zh/notebooks/*", "zh/bonus/*/*"]

# Notebooks that build a GPT-2-sized model with real weights.
BIG_NOTEBOOKS = {"notebooks/06_gpt_model.ipynb", "notebooks/07_generating_text.ipynb"}
# Test files whose tests import transformers (a single test elsewhere carries the mark itself).
TRANSFORMERS_FILES = {"test_hf_interop.py", "test_modern_hf.py"}


@pytest.hookimpl(tryfirst=True)  # before xdist turns xdist_group marks into node ids
def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        notebook = "/".join(item.path.parts[-2:])  # folder/name: practice/06 builds no GPT-2
        if "gpt2_small" in getattr(item, "fixturenames", ()) or notebook in BIG_NOTEBOOKS:
            group = "big-models"
        elif item.path.name in TRANSFORMERS_FILES:
            group = "transformers"
        else:
            group = re.sub(r"\W", "_", item.path.stem)  # the file; \W confuses xdist
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session):
    """Fail loudly if xdist ignored the groups (it does with pytest 9.2, xdist issue #1386)."""
    config = session.config
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):  # on an xdist worker
        if any("@" not in item.nodeid for item in session.items):
            raise pytest.UsageError("pytest-xdist ignored the xdist_group marks: see requirements.txt")
