"""tools/check_gpu.py: without CUDA it checks nothing and says so; with it, one line per claim.

The claims themselves need a GPU (CI has none); `python -m tools.check_gpu --device cpu --quick`
runs them on the CPU by hand.
"""

import torch

from tools import check_gpu


def test_without_a_gpu_it_says_so_and_exits_0(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert check_gpu.main([]) == 0
    assert capsys.readouterr().out == "no GPU: nothing checked (torch.cuda.is_available() is False)\n"


def test_a_failing_or_raising_claim_is_one_fail_line_and_exit_1(monkeypatch, capsys):
    def raising(device, quick):
        raise RuntimeError("CUDA error: out of memory\nmore detail")

    claims = [lambda device, quick: (True, "holds"), lambda device, quick: (False, "fails"), raising]
    monkeypatch.setattr(check_gpu, "CLAIMS", claims)
    assert check_gpu.main(["--device", "cpu"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "PASS  holds", "FAIL  fails",
        "FAIL  raising raised RuntimeError: CUDA error: out of memory", "1 of 3 claims hold"]
