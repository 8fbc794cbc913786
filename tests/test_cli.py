"""`python gpt.py`: the book's output by default, one-line errors for bad arguments."""

import subprocess
import sys

import pytest

import gpt

def test_default_run_prints_the_books_output(capsys, monkeypatch, gpt2_small):
    """Defaults: seed 123, GPT-2 small, "Hello, I am", 6 tokens. The seed-123 model is the
    shared fixture (building GPT-2 small takes seconds), handed to main where it builds one."""
    seeds, configs = [], []
    monkeypatch.setattr(gpt.torch, "manual_seed", seeds.append)
    monkeypatch.setattr(gpt, "GPTModel", lambda cfg: configs.append(cfg) or gpt2_small)
    gpt.main([])
    assert seeds == [123] and configs == [gpt.GPT_CONFIG_124M]
    assert capsys.readouterr().out.splitlines() == [
        "Input ids:  [15496, 11, 314, 716]",
        "Output ids: [15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]",
        "Output text: Hello, I am Featureiman Byeswickattribute argue",
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-new-tokens", "-1"], "must be >= 0"),
        (["--max-new-tokens", "many"], "invalid non_negative_int value: 'many'"),
        (["--model", "gpt2-huge"], "invalid choice: 'gpt2-huge'"),
        (["--seed", "x"], "invalid int value: 'x'"),
        (["--prompt", ""], "text is empty"),
        (["--temperature", "1"], "unrecognized arguments: --temperature 1"),
    ],
)
def test_bad_arguments_exit_with_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        gpt.main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpt.py: error:") and message in err


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit:
        gpt.main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    for option in ("--prompt", "--max-new-tokens", "--seed", "--model", "gpt2-xl"):
        assert option in out


def test_script_reports_bad_arguments_without_a_traceback():
    result = subprocess.run(
        [sys.executable, "gpt.py", "--max-new-tokens", "-3"],
        capture_output=True, text=True, cwd=gpt.Path(gpt.__file__).parent, timeout=120,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == "gpt.py: error: argument --max-new-tokens: must be >= 0, got -3 (see --help)"
