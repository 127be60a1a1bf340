"""Timing of the REDUCE CPU kernels against a memory-bandwidth floor.

The floor is ``np.copyto`` of the input's bytes; each workload prints
kernel time / floor time (targets: <= 1.5, LOG_SUM_EXP <= 2.5).
Run: PYTHONPATH=src python bench/_reduce_kernels_timing.py
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from opendml.backends.cpu import reduce_kernels as rk


def best_times(fns: list[Callable[[], object]], repeat: int = 25) -> list[float]:
    """Min time of each fn, runs interleaved so that background load hits all alike."""
    for fn in fns:
        fn()
    best = [math.inf] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * sizes[d + 1]
    return tuple(strides)


def workload(name: str, function: int, dtype: type, sizes: tuple[int, ...],
             axes: tuple[int, ...], out_dtype: type | None = None) -> None:
    rng = np.random.default_rng(0)
    x: np.ndarray[Any, Any] = rng.standard_normal(int(np.prod(sizes))).astype(dtype)
    if function == rk.MULTIPLY:
        x = (1.0 + x * 1e-4).astype(dtype)  # keep the products finite
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    odt = np.dtype(out_dtype or dtype)
    out = np.empty(int(np.prod(out_sizes)), odt)
    plan = rk.make_reduce_plan(function, np.dtype(dtype), odt, sizes,
                               contiguous_strides(sizes), contiguous_strides(out_sizes), axes)
    dst = np.empty_like(x)
    floor, kernel = best_times([lambda: np.copyto(dst, x), lambda: plan(x, out)])
    print(f"{name:<40s} {kernel * 1e3:8.3f} ms  floor {floor * 1e3:7.3f} ms  ratio {kernel / floor:5.2f}")


def dispatch_overhead() -> None:
    x = np.ones(256, np.float32)
    out = np.empty(16, np.float32)
    plan = rk.make_reduce_plan(rk.SUM, np.dtype(np.float32), np.dtype(np.float32),
                               (16, 16), (16, 1), (1, 1), (1,))
    (t,) = best_times([lambda: plan(x, out)], repeat=2000)
    print(f"{'SUM f32 [16,16] axis 1 (one call)':<40s} {t * 1e6:8.2f} us")


def main() -> None:
    big = (4096, 4096)
    workload("SUM f32 [4096,4096] axis 1", rk.SUM, np.float32, big, (1,))
    workload("SUM f32 [4096,4096] axis 0", rk.SUM, np.float32, big, (0,))
    workload("SUM f32 [64,256,1024] axes {0,2}", rk.SUM, np.float32, (64, 256, 1024), (0, 2))
    workload("ARGMAX f32 [4096,4096] axis 1", rk.ARGMAX, np.float32, big, (1,), np.uint32)
    workload("L2 f32 [4096,4096] axis 1", rk.L2, np.float32, big, (1,))
    workload("LOG_SUM_EXP f32 [4096,4096] axis 1", rk.LOG_SUM_EXP, np.float32, big, (1,))
    workload("MULTIPLY f32 [4096,4096] axis 1", rk.MULTIPLY, np.float32, big, (1,))
    workload("MAX f32 [256,256,256] all axes", rk.MAX, np.float32, (256, 256, 256), (0, 1, 2))
    workload("SUM f16 [4096,4096] axis 1", rk.SUM, np.float16, big, (1,))
    dispatch_overhead()


if __name__ == "__main__":
    main()
