"""`python gpt.py` (its code: gpt_cli.py): the book's output on stdout, progress and streamed
text on stderr, one-line errors for bad arguments."""

import json
import subprocess
import sys
from pathlib import Path
from unittest.mock import Mock

import pytest
import torch

import gpt
import gpt_cli
from tests.helpers import BOOK_OUTPUT_IDS, BOOK_OUTPUT_TEXT, HELLO_IDS, TINY_CONFIG


@pytest.fixture(autouse=True)
def shared_tokenizer(monkeypatch, tokenizer):
    """main() reuses the session's tokenizer instead of loading the BPE files on every call."""
    monkeypatch.setattr(gpt, "get_tokenizer", lambda: tokenizer)


def test_default_run_prints_the_books_output(capsys, monkeypatch, gpt2_small):
    """Defaults: seed 123, GPT-2 small, "Hello, I am", 6 tokens; streamed token by token, the ids
    are still those of the book's generate_text_simple. The seed-123 model is the shared fixture
    (building GPT-2 small takes seconds), handed to main where it builds one."""
    seeds, configs = [], []
    monkeypatch.setattr(gpt.torch, "manual_seed", seeds.append)
    monkeypatch.setattr(gpt, "GPTModel", lambda cfg: configs.append(cfg) or gpt2_small)
    gpt_cli.main([])
    assert seeds == [123] and configs == [gpt.GPT_CONFIG_124M]
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"Input ids:  {HELLO_IDS}",
        f"Output ids: {BOOK_OUTPUT_IDS}",
        f"Output text: {BOOK_OUTPUT_TEXT}",
    ]
    assert f"\n{BOOK_OUTPUT_TEXT}\n" in captured.err


def test_a_prompt_is_continued_on_stdout_and_streamed_with_progress_on_stderr(capsys, monkeypatch):
    build = gpt.GPTModel  # main() builds a tiny model: the same class and code path, but fast
    monkeypatch.setattr(gpt, "GPTModel", lambda cfg: build({**cfg, **TINY_CONFIG}))
    gpt_cli.main(["Every effort moves you", "--max-new-tokens", "5"])
    captured = capsys.readouterr()
    input_ids, output_ids, output_text = captured.out.splitlines()
    prompt_ids = [6109, 3626, 6100, 345]
    assert input_ids == f"Input ids:  {prompt_ids}"
    ids = json.loads(output_ids.removeprefix("Output ids: "))
    assert ids[:4] == prompt_ids and len(ids) == 9
    text = output_text.removeprefix("Output text: ")
    assert text.startswith("Every effort moves you")
    assert captured.err.startswith("Building gpt2-small: 163,009,536 parameters, 622 MB in float32")
    assert f"\n{text}\n(5 new tokens in " in captured.err  # the same text, streamed


def test_a_character_split_across_tokens_is_written_whole(tokenizer):
    ids = tokenizer.encode("日本語")  # each character is two tokens
    choices = iter(ids)

    class ScriptedModel(gpt.GPTModel):  # greedy generation picks each of `ids` in turn
        def forward(self, idx):
            logits = torch.zeros(*idx.shape, 50257)
            logits[:, -1, next(choices)] = 1.0
            return logits

    stream = Mock()  # records each write separately, as a terminal would show them
    gpt_cli.generate_streaming(ScriptedModel(TINY_CONFIG), torch.tensor([[15496]]), len(ids), 16,
                               tokenizer, stream)
    assert [call.args[0] for call in stream.write.call_args_list] == ["", "日", "", "本", "", "語", ""]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-new-tokens", "many"], "argument --max-new-tokens: must be a whole number from 0 "
                                       "to 100,000, got 'many'"),
        (["--max-new-tokens", "1" + "0" * 5000], "got '100000000000000000000...'"),
        (["--seed", str(2**64)], "argument --seed: must be a whole number from 0 to "
                                 "18,446,744,073,709,551,615, got '18446744073709551616'"),
        (["--max", "5"], "unrecognized arguments: --max"),  # no abbreviations
        (["--prompt", "Hi"], "unrecognized arguments: --prompt"),  # one way to give the prompt
        (["--model", "gpt2-huge"], "invalid choice: 'gpt2-huge'"),
        ([""], "the prompt must have 1 to 1024 tokens, it has 0"),
        (["word " * 1025], "the prompt must have 1 to 1024 tokens, it has 1026"),
    ],
)
def test_bad_arguments_exit_with_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        gpt_cli.main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpt.py: error:") and message in err
    assert "parse" not in err  # argparse names the type function when it raises ValueError


def test_a_damaged_tokenizer_file_is_not_an_argument_error(monkeypatch):
    damaged = Mock(side_effect=ValueError("Hash mismatch for data/gpt2-bpe/vocab.bpe"))
    monkeypatch.setattr(gpt, "get_tokenizer", damaged)
    with pytest.raises(SystemExit) as exit:
        gpt_cli.main([])
    assert exit.value.code == ("gpt.py: cannot load the GPT-2 tokenizer: "
                               "Hash mismatch for data/gpt2-bpe/vocab.bpe")


def test_help_shows_each_option_its_default_and_the_context_limit(capsys):
    with pytest.raises(SystemExit) as exit:
        gpt_cli.main(["--help"])
    assert exit.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # undo argparse's line wrapping
    for text in (
        "[prompt]", "--max-new-tokens N", "--seed", "--model", "gpt2-xl",
        "(default: 'Hello, I am')", "(default: 6)", "(default: 123)", "(default: gpt2-small)",
        "at most 1024 tokens",
    ):
        assert text in out


def test_script_reports_bad_arguments_without_a_traceback():
    result = subprocess.run(
        [sys.executable, "gpt.py", "--max-new-tokens", "-3"],
        capture_output=True, text=True, cwd=Path(gpt.__file__).parent, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == ("gpt.py: error: argument --max-new-tokens: must be a whole number "
                             "from 0 to 100,000, got '-3' (see --help)\n")
