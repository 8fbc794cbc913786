"""FLOPs: what PyTorch counts for a computation, and this machine's float32 matmul ceiling."""

import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode


def counted_flops(fn, *args, **kwargs):
    """The FLOPs torch.utils.flop_counter counts while `fn(*args, **kwargs)` runs.

    It counts matrix products (and fused attention): a multiply and an add are two FLOPs.
    """
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops()


def matmul_flops_per_second(size=2048, rounds=5):
    """FLOP/s of one float32 square matrix product: a practical ceiling for this CPU."""
    a, b = torch.randn(2, size, size)
    a @ b  # warm-up
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        a @ b
        seconds.append(time.perf_counter() - start)
    return 2 * size**3 / statistics.median(seconds)
