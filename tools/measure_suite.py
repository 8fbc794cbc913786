"""Run the test suite once and print its wall time and peak memory (all processes together).

    python tools/measure_suite.py            # runs `pytest -q`
    python tools/measure_suite.py -- -k gpt  # extra arguments go to pytest

Memory is sampled every SAMPLE_SECONDS over pytest and all its descendants (xdist workers,
notebook kernels, subprocesses). Reading PSS is costly: sampling every 50 ms took about 25 s of
CPU over the run, which on 2 cores lengthened the very wall time being measured. Two sums are
printed: RSS counts shared library pages once per process (an upper bound); PSS splits shared
pages between the processes that map them (the machine's actual use).
"""

import contextlib
import subprocess
import sys
import time

import psutil

SAMPLE_SECONDS = 0.5  # long-lived processes hold the peak, so it is not missed


def tree_memory(root):
    """(RSS, PSS) summed over `root` and its descendants, in bytes."""
    infos = []
    for proc in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):  # it ended meanwhile
            infos.append(proc.memory_full_info())
    return sum(info.rss for info in infos), sum(info.pss for info in infos)


def main():
    extra = sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:]
    start = time.perf_counter()
    pytest = subprocess.Popen([sys.executable, "-m", "pytest", "-q", *extra])
    root = psutil.Process(pytest.pid)
    samples = [(0, 0)]
    while pytest.poll() is None:
        samples.append(tree_memory(root))
        time.sleep(SAMPLE_SECONDS)
    peak_rss, peak_pss = map(max, zip(*samples))
    wall = time.perf_counter() - start
    print(f"\nsuite wall time: {wall:.1f} s")
    print(f"peak memory, all processes: {peak_pss / 2**30:.2f} GiB PSS, {peak_rss / 2**30:.2f} GiB RSS")
    sys.exit(pytest.returncode)


if __name__ == "__main__":
    main()
