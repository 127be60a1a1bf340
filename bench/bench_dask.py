#!/usr/bin/env python
"""A compiled dml.Graph on Dask arrays (issue 16): opendml's chunk kernels against Dask's own NumPy path, on a
distributed.LocalCluster of this machine.

    pip install -e '.[dask]'
    python bench/bench_dask.py                      # 32 GiB generated lazily, workers limited to 3 GiB each
    python bench/bench_dask.py --gib 8 --repeat 1   # a shorter run
    python bench/bench_dask.py --smoke              # 1 GiB, to see that it all works

Workloads, on float32 [rows, 4096] in chunks of --chunk-mib MiB (whole rows): SUM over axis 0, ARGMAX over axis 0,
and a layer norm (MEAN_VARIANCE_NORMALIZATION1 over axis 1, Epsilon 1e-5). Peers on the same cluster: Dask's
`x.sum(axis=0)` and `x.argmax(axis=0)`, and a NumPy-written layer norm with `map_blocks`.

1. Larger than memory: the array (--gib, 32 GiB by default: more than this machine's memory) is generated lazily,
   chunk by chunk, on the workers (a per-worker random chunk plus a per-chunk constant, one write of the chunk), and
   streamed: each workload is computed twice per implementation (A B B A; best time, highest peak). Its 2^33
   elements are more than one DML tensor holds (DECISIONS 2); a graph's tensors are logical and every chunk is a
   tensor of its own (README, Rulings), and nothing allocates the whole array. The workers' memory is limited
   (--worker-gib, 3 GiB each). The layer norm's output goes to a sink that keeps one element per chunk (the whole
   output chunk is computed, then dropped), the same for both. The floor is the generation and the sink alone,
   timed before each workload. Each worker's peak resident memory during the workload is sampled (every 20 ms).
2. An array that fits (--fit-gib, 2 GiB), persisted on the workers: opendml on Dask, Dask's NumPy path, and
   single-machine opendml on a NumPy array of the same shape: the same compiled graph (a new output array per
   call), and its operator's execute into a preallocated output, numba's threads on every core; best of --repeat.

Workers: --workers processes of one thread each, numba limited to one thread in each (Dask's parallelism is the
workers); the single-machine run uses all of numba's threads. Throughput is input GB/s (10^9 bytes).
Targets (issue 16): at least the throughput of Dask's NumPy path on each workload, worker memory bounded, and within
1.5x of single-machine opendml's throughput on the array that fits.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import opendml as dml

COLUMNS = 4096
EPSILON = 1e-5
Array = np.ndarray[Any, Any]


# -- on the workers ------------------------------------------------------------------------------------------------

def generate(rows: int, seed: int, block_id: tuple[int, ...] = (0, 0)) -> Array:
    """One chunk of the lazily generated array: this worker's random chunk plus a constant of the chunk (a fresh
    array, written once)."""
    from distributed import get_worker

    worker = get_worker()
    base: Array | None = getattr(worker, "_bench_base", None)
    if base is None or base.shape[0] < rows:
        base = np.random.default_rng(seed).standard_normal((rows, COLUMNS), dtype=np.float32)
        worker._bench_base = base  # type: ignore[attr-defined]
    return np.add(base[:rows], np.float32((block_id[0] % 97) * 0.01))


def corner(block: Array) -> Array:
    """The sink: a copy of one element of a computed chunk (a view would keep the whole chunk alive)."""
    return block[:1, :1].copy()


def numpy_layer_norm(block: Array) -> Array:
    """Layer norm written in NumPy (float32, two passes), as a Dask user would with map_blocks."""
    mean = block.mean(axis=1, keepdims=True)
    centered = block - mean
    variance = np.mean(np.square(centered), axis=1, keepdims=True)
    centered /= np.sqrt(variance + np.float32(EPSILON))
    return centered


def start_sampler(dask_worker: Any) -> None:
    """Samples this worker process's resident memory every 20 ms until stop_sampler."""
    import psutil

    process = psutil.Process()
    state = {"peak": process.memory_info().rss, "running": True}

    def sample() -> None:
        while state["running"]:
            state["peak"] = max(state["peak"], process.memory_info().rss)
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    dask_worker._bench_sampler = (state, thread)
    thread.start()


def stop_sampler(dask_worker: Any) -> int:
    state, thread = dask_worker._bench_sampler
    state["running"] = False
    thread.join()
    return int(state["peak"])


# -- the run -------------------------------------------------------------------------------------------------------

def graph_for(kind: str, rows: int) -> dml.CompiledGraph:
    graph = dml.Graph(dml.Device())
    x = graph.input([rows, COLUMNS], "FLOAT32", name="x")
    if kind == "SUM axis 0":
        output = dml.reduce(x, "SUM", [0])
    elif kind == "ARGMAX axis 0":
        output = dml.arg_max(x, [0])
    else:
        output = dml.mean_variance_normalization(x, axes=[1], epsilon=EPSILON)
    return graph.compile([output])


def opendml_on_dask(kind: str, x: Any) -> Any:
    result = graph_for(kind, x.shape[0])({"x": x})[0]
    return result.map_blocks(corner, chunks=tuple((1,) * len(c) for c in result.chunks)) if kind == "layer norm" \
        else result


def numpy_on_dask(kind: str, x: Any) -> Any:
    if kind == "SUM axis 0":
        return x.sum(axis=0)
    if kind == "ARGMAX axis 0":
        return x.argmax(axis=0)
    normalized = x.map_blocks(numpy_layer_norm, dtype=np.float32)
    return normalized.map_blocks(corner, chunks=tuple((1,) * len(c) for c in normalized.chunks))


def timed(compute: Callable[[], Any]) -> float:
    start = time.perf_counter()
    compute()
    return time.perf_counter() - start


def machine() -> str:
    model = "unknown CPU"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next(line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} cores, {memory:.1f} GiB, {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=32.0, help="size of the lazily generated array (GiB)")
    parser.add_argument("--worker-gib", type=float, default=3.0, help="memory limit of each worker (GiB)")
    parser.add_argument("--fit-gib", type=float, default=2.0, help="size of the array that fits (GiB)")
    parser.add_argument("--chunk-mib", type=float, default=128.0, help="chunk size (MiB, whole rows)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=3, help="runs per implementation on the array that fits")
    parser.add_argument("--smoke", action="store_true", help="1 GiB and 0.25 GiB, one repeat")
    args = parser.parse_args()
    if args.smoke:
        args.gib, args.fit_gib, args.repeat = 1.0, 0.25, 1

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    chunk_rows = max(1, int(args.chunk_mib * 2**20 // (4 * COLUMNS)))
    kinds = ["SUM axis 0", "ARGMAX axis 0", "layer norm"]
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
    print(f"dask {dask.__version__}, numpy {np.__version__}; {args.workers} workers x 1 thread, chunks "
          f"[{chunk_rows}, {COLUMNS}] float32 ({chunk_rows * COLUMNS * 4 / 2**20:.0f} MiB)\n")
    worker_memory = int(args.worker_gib * 2**30)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit=worker_memory, env={"NUMBA_NUM_THREADS": "1"},
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:

        def lazy(gib: float) -> Any:
            rows = int(gib * 2**30 // (4 * COLUMNS))
            rows = max(chunk_rows, rows // chunk_rows * chunk_rows)
            chunks = ((chunk_rows,) * (rows // chunk_rows), (COLUMNS,))
            return da.map_blocks(generate, chunk_rows, 16, dtype=np.float32, chunks=chunks,
                                 meta=np.empty((0, 0), np.float32))

        # Warm up: every kernel and peer once on a small array (numba loads or compiles the kernels on each worker).
        small = lazy(args.chunk_mib * args.workers / 1024)
        for kind in kinds:
            dask.compute(opendml_on_dask(kind, small), numpy_on_dask(kind, small))

        # 1. Larger than memory, streamed (--gib 0 skips it).
        if args.gib > 0:
            x = lazy(args.gib)
            gb = x.nbytes / 1e9
            print(f"1. {x.nbytes / 2**30:.1f} GiB [{x.shape[0]}, {COLUMNS}] generated lazily, {x.numblocks[0]} chunks")
            sink = x.map_blocks(corner, chunks=((1,) * x.numblocks[0], (1,)))
            print(f"   {'workload':<15}{'opendml GB/s':>14}{'Dask NumPy GB/s':>17}{'ratio':>8}{'floor GB/s':>12}"
                  f"{'peak worker MiB (opendml / NumPy)':>36}")
            for kind in kinds:
                floor = timed(sink.compute)     # generation and sink only, timed next to each workload
                seconds = {opendml_on_dask: math.inf, numpy_on_dask: math.inf}
                peak = {opendml_on_dask: 0.0, numpy_on_dask: 0.0}
                # Twice each, in the order A B B A (drift hits both alike); the best time, the highest peak.
                for build in (opendml_on_dask, numpy_on_dask, numpy_on_dask, opendml_on_dask):
                    client.run(start_sampler)
                    seconds[build] = min(seconds[build], timed(build(kind, x).compute))
                    peak[build] = max(peak[build], max(client.run(stop_sampler).values()) / 2**20)
                speeds = [gb / seconds[opendml_on_dask], gb / seconds[numpy_on_dask]]
                peaks = [peak[opendml_on_dask], peak[numpy_on_dask]]
                print(f"   {kind:<15}{speeds[0]:>14.2f}{speeds[1]:>17.2f}{speeds[0] / speeds[1]:>8.2f}"
                      f"{gb / floor:>12.2f}{peaks[0]:>23.0f} / {peaks[1]:.0f}")

        # 2. An array that fits, persisted on the workers, against single-machine opendml.
        fit = lazy(args.fit_gib).persist()
        wait(fit)
        gb = fit.nbytes / 1e9
        local = np.random.default_rng(1).standard_normal(fit.shape, dtype=np.float32)
        print(f"\n2. {fit.nbytes / 2**30:.2f} GiB [{fit.shape[0]}, {COLUMNS}] in memory (persisted on the workers; a "
              f"NumPy array for one machine); best of {args.repeat}")
        print(f"   {'workload':<15}{'opendml on Dask':>16}{'Dask NumPy':>12}{'1 machine: graph':>18}{'execute':>12}"
              f"{'Dask / graph':>14}")
        for kind in kinds:
            ours, theirs = opendml_on_dask(kind, fit), numpy_on_dask(kind, fit)
            # One machine: the same compiled graph on the NumPy array (a new output array per call), and its
            # operator's execute into a preallocated output (no allocation at all).
            graph = graph_for(kind, fit.shape[0])
            graph({"x": local})                                    # warm-up: numba loads the kernel
            compiled = graph.steps[0]
            output = np.empty(compiled.desc.output_slots()[0][1].total_tensor_size_in_bytes, np.uint8)
            inputs = [dml.Binding(local)] + [None] * (len(compiled.desc.input_slots()) - 1)
            runs: list[Callable[[], Any]] = [
                ours.compute, theirs.compute, lambda: graph({"x": local}),  # noqa: B023
                lambda: compiled.execute(inputs, [dml.Binding(output)])]  # noqa: B023
            times = [[timed(run) for run in runs] for _ in range(args.repeat)]   # interleaved, round by round
            on_dask, numpy, one_graph, one_execute = (min(column) for column in zip(*times, strict=True))
            print(f"   {kind:<15}{gb / on_dask:>11.2f} GB/s{gb / numpy:>7.2f} GB/s{gb / one_graph:>13.2f} GB/s"
                  f"{gb / one_execute:>7.2f} GB/s{on_dask / one_graph:>13.2f}x")
        # The results agree (on the persisted array).
        for kind in kinds[:2]:
            ours, theirs = dask.compute(opendml_on_dask(kind, fit), numpy_on_dask(kind, fit))
            if kind.startswith("ARGMAX"):
                assert np.array_equal(ours.reshape(-1), theirs), kind
            else:
                np.testing.assert_allclose(ours.reshape(-1), theirs, rtol=1e-3, atol=1e-2)
        print(f"\nload average at the end {os.getloadavg()[0]:.2f} (2 cores: above ~2 means other work shared them)")


if __name__ == "__main__":
    main()
