#!/usr/bin/env python
"""GATHER_ND1 benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy floor.

    python bench/bench_gather_nd1.py            # full run (2-3 minutes on 2 cores)
    python bench/bench_gather_nd1.py --quick    # fewer repeats (under a minute)
    python bench/bench_gather_nd1.py --repeat 31

The workloads are issue 3's: a row gather from a float32 [1048576, 64] table with [1048576, 1] INT64 indices; a
batched row gather from [16, 1024, 256] with [16, 4096, 1] indices and BatchDimensionCount 1; a batched element
gather from the same [16, 1024, 256] input with [16, 262144, 2] indices (each tuple picks one element of its
batch's 1024 x 256 matrix). Indices are uniform over their dimension, so every implementation computes the same
result (the peers have no per-coordinate clamping).

Every implementation writes into a caller-provided, preallocated output buffer (`out=` in NumPy and PyTorch, an
io_binding to preallocated OrtValues in ONNX Runtime, a reused dml.Binding in opendml). Within a workload the
implementations are timed interleaved (floor, opendml, NumPy, ... then again), so drift hits all of them alike;
the table shows each one's MEDIAN time divided by the floor's. The floor is what any gather must at least move:
an np.copyto of the output's bytes into a preallocated array (read once, written once) plus one read of the
indices (np.max over them).

The peers: NumPy `np.take(..., out=, mode='clip')` on a computed linear row (or element) index, computed into a
preallocated int64 buffer inside the timed call; PyTorch `index_select(..., out=)` on the same computed index
(default threads and one thread); ONNX Runtime's GatherND with batch_dims. They are optional (the `bench`
extras); a missing one is shown as "-". Each result is checked once, bit for bit, against a NumPy fancy-indexing
reference, so that a fast wrong number cannot hide. Further sections: dispatch overhead of a tiny gather, and
the startup time of a fresh interpreter to its first gather with a cold and a warm numba cache.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import opendml as dml


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


torch: Any = _optional("torch")
onnx: Any = _optional("onnx")
ort: Any = _optional("onnxruntime") if onnx is not None else None
numba: Any = _optional("numba")

Array = np.ndarray[Any, Any]

FLOOR, OPENDML, NUMPY, TORCH, TORCH1, ORT = "floor", "opendml", "NumPy", "PyTorch", "PyTorch 1T", "ONNX Runtime"
PEERS = (NUMPY, TORCH, TORCH1, ORT)
COLUMNS = (OPENDML, *PEERS)

DISPATCH_TARGET_US = 15.0


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    input_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    batch: int                      # BatchDimensionCount (InputDimensionCount = IndicesDimensionCount = rank)
    target: float                   # ratio over the floor opendml should stay within

    @property
    def tuple_size(self) -> int:
        return self.indices_shape[-1]

    @property
    def out_shape(self) -> tuple[int, ...]:
        """DIGEST 2.5: the indices' sizes but the last, then the input's after batch and tuple, padded with 1s."""
        sizes = self.indices_shape[:-1] + self.input_shape[self.batch + self.tuple_size:]
        return (1,) * (len(self.input_shape) - len(sizes)) + sizes

    def make_input(self, rng: np.random.Generator) -> Array:
        return rng.standard_normal(self.input_shape, dtype=np.float32)

    def make_indices(self, rng: np.random.Generator) -> Array:
        columns = [rng.integers(0, self.input_shape[self.batch + k], self.indices_shape[:-1], dtype=np.int64)
                   for k in range(self.tuple_size)]
        return np.ascontiguousarray(np.stack(columns, axis=-1))


WORKLOADS = (
    Workload("rows     [1M,64] by [1M,1]", (1048576, 64), (1048576, 1), 0, 1.5),
    Workload("batched rows [16,1024,256] by [16,4096,1]", (16, 1024, 256), (16, 4096, 1), 1, 1.5),
    Workload("batched elements [16,1024,256] by [16,262144,2]", (16, 1024, 256), (16, 262144, 2), 1, 2.5),
)


def reference(work: Workload, x: Array, indices: Array) -> Array:
    """NumPy fancy indexing (indices are in range, so nothing to wrap or clamp)."""
    coordinates = tuple(indices[..., k] for k in range(work.tuple_size))
    if work.batch == 0:
        picked = x[coordinates]
    else:
        batch = np.arange(work.input_shape[0]).reshape((-1,) + (1,) * (indices.ndim - 2))
        picked = x[(batch, *coordinates)]
    return np.asarray(picked).reshape(work.out_shape)


def _linear_index_parts(work: Workload) -> tuple[list[int], int]:
    """(per tuple coordinate its multiplier in a flat index over the batch's sub-table, the batch's size): the
    linear row (or element) index is batch * batch_size + sum(coordinate_k * multiplier_k)."""
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    multipliers = []
    for k in range(work.tuple_size):
        multipliers.append(int(np.prod(work.input_shape[work.batch + k + 1: work.batch + work.tuple_size],
                                       dtype=np.int64)))
    batch_size = int(np.prod(work.input_shape[work.batch:], dtype=np.int64)) // rest
    return multipliers, batch_size


# -- implementations ------------------------------------------------------------------------------------------

def _nothing() -> None:
    return None


@dataclass
class Runner:
    """One implementation of one workload: `run` computes into `out` (preallocated); `before` runs untimed."""

    name: str
    run: Callable[[], object]
    out: Array
    before: Callable[[], None] = _nothing
    note: str = ""
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)


def make_floor(work: Workload, indices: Array, rng: np.random.Generator) -> Runner:
    source = rng.standard_normal(work.out_shape, dtype=np.float32)
    target = np.empty_like(source)
    flat = indices.reshape(-1)

    def run() -> None:
        np.copyto(target, source)
        np.max(flat)

    return Runner(FLOOR, run, target)


def make_opendml(device: dml.Device, work: Workload, x: Array, indices: Array) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    rank = len(work.input_shape)
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", work.input_shape),
                                     dml.TensorDesc("INT64", work.indices_shape),
                                     dml.TensorDesc("FLOAT32", work.out_shape), rank, rank, work.batch)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(indices)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), out)


def make_numpy(work: Workload, x: Array, indices: Array) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    multipliers, batch_size = _linear_index_parts(work)
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    table = x.reshape(-1, rest) if rest > 1 else x.reshape(-1)
    target = out.reshape(-1, rest) if rest > 1 else out.reshape(-1)
    if work.batch == 0 and work.tuple_size == 1:
        rows = indices.reshape(-1)
        return Runner(NUMPY, lambda: np.take(table, rows, axis=0, out=target, mode="clip"), out,
                      note="np.take(axis=0, out=, mode='clip') on the indices")
    linear = np.empty(work.indices_shape[:-1], np.int64)
    offsets = (np.arange(work.input_shape[0], dtype=np.int64) * batch_size).reshape(
        (-1,) + (1,) * (linear.ndim - 1))

    def run() -> None:
        np.multiply(indices[..., 0], multipliers[0], out=linear)
        for k in range(1, work.tuple_size):
            term = indices[..., k] if multipliers[k] == 1 else indices[..., k] * multipliers[k]
            np.add(linear, term, out=linear)
        np.add(linear, offsets, out=linear)
        np.take(table, linear.reshape(-1), axis=0, out=target, mode="clip")

    return Runner(NUMPY, run, out, note="linear index (multiply, add into a preallocated int64 buffer), then "
                                        "np.take(out=, mode='clip')")


def make_torch(work: Workload, x: Array, indices: Array, threads: int, name: str) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    multipliers, batch_size = _linear_index_parts(work)
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    table = torch.from_numpy(x.reshape(-1, rest) if rest > 1 else x.reshape(-1))
    target = torch.from_numpy(out.reshape(-1, rest) if rest > 1 else out.reshape(-1))
    index = torch.from_numpy(indices)
    if work.batch == 0 and work.tuple_size == 1:
        rows = index.reshape(-1)
        call: Callable[[], object] = lambda: torch.index_select(table, 0, rows, out=target)  # noqa: E731
    else:
        linear = torch.empty(work.indices_shape[:-1], dtype=torch.int64)
        offsets = (torch.arange(work.input_shape[0], dtype=torch.int64) * batch_size).reshape(
            (-1,) + (1,) * (linear.dim() - 1))

        def call() -> None:
            torch.mul(index[..., 0], multipliers[0], out=linear)
            for k in range(1, work.tuple_size):
                linear.add_(index[..., k], alpha=multipliers[k])
            linear.add_(offsets)
            torch.index_select(table, 0, linear.reshape(-1), out=target)

    def before() -> None:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    return Runner(name, call, out, before=before, note="index_select(out=) on the (computed) linear index")


def make_ort(work: Workload, x: Array, indices: Array) -> Runner:
    """A one-node GatherND model (opset 13, batch_dims), one intra-op thread, no spinning, io_binding to
    preallocated OrtValues over the caller's arrays (the output bound as ONNX's unpadded shape)."""
    helper, tensor_proto = onnx.helper, onnx.TensorProto
    onnx_shape = work.indices_shape[:-1] + work.input_shape[work.batch + work.tuple_size:]
    out = np.empty(work.out_shape, np.float32)
    x_info = helper.make_tensor_value_info("x", tensor_proto.FLOAT, list(work.input_shape))
    i_info = helper.make_tensor_value_info("i", tensor_proto.INT64, list(work.indices_shape))
    y_info = helper.make_tensor_value_info("y", tensor_proto.FLOAT, list(onnx_shape))
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=work.batch)
    graph = helper.make_graph([node], "gather_nd", [x_info, i_info], [y_info])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    x_value = ort.OrtValue.ortvalue_from_numpy(x)
    i_value = ort.OrtValue.ortvalue_from_numpy(indices)
    y_value = ort.OrtValue.ortvalue_from_numpy(out.reshape(onnx_shape))
    binding.bind_ortvalue_input("x", x_value)
    binding.bind_ortvalue_input("i", i_value)
    binding.bind_ortvalue_output("y", y_value)
    keep = (x_value, i_value, y_value)  # the OrtValues wrap the arrays' memory: the closure keeps them alive

    def run_bound(_keep: tuple[Any, ...] = keep) -> None:
        session.run_with_iobinding(binding)

    return Runner(ORT, run_bound, out)


# -- timing -----------------------------------------------------------------------------------------------------

def time_interleaved(runners: list[Runner], repeat: int) -> None:
    """Each round runs every implementation once, in order; median over rounds. gc is off while timing."""
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for runner in runners:
                runner.before()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                runner.run()
                wall1, cpu1 = time.perf_counter(), time.process_time()
                runner.times.append(wall1 - wall0)
                runner.cpu_times.append(cpu1 - cpu0)
    finally:
        gc.enable()


def median(values: list[float]) -> float:
    return statistics.median(values)


def poison(array: Array) -> None:
    """Fills an output buffer with NaN, which no correct run leaves there, to show the run wrote into it."""
    array.fill(np.nan)


@dataclass
class Outcome:
    work: Workload
    floor_s: float
    ratios: dict[str, float | None]
    missing: dict[str, str]
    problems: list[str]
    notes: list[str]
    first_call_s: float
    cpu_per_wall: dict[str, float]


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    x = work.make_input(rng)
    indices = work.make_indices(rng)
    ref = reference(work, x, indices)
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []

    start = time.perf_counter()
    mine = make_opendml(device, work, x, indices)
    mine.run()
    first_call_s = time.perf_counter() - start
    runners = [make_floor(work, indices, rng), mine]

    def add(name: str, build: Callable[[], Runner], available: bool) -> None:
        if not available:
            missing[name] = "not installed"
            return
        try:
            runner = build()
            runner.run()
        except Exception as error:  # a peer without this operator or type: shown as n/a
            missing[name] = f"n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
            return
        runners.append(runner)

    add(NUMPY, lambda: make_numpy(work, x, indices), True)
    default_threads = torch.get_num_threads() if torch is not None else 0
    add(TORCH, lambda: make_torch(work, x, indices, default_threads, TORCH), torch is not None)
    add(TORCH1, lambda: make_torch(work, x, indices, 1, TORCH1), torch is not None)
    add(ORT, lambda: make_ort(work, x, indices), ort is not None)

    # Correctness, once: every implementation writes into a NaN-poisoned buffer and must equal the reference.
    for runner in runners[1:]:
        runner.before()
        poison(runner.out)
        runner.run()
        if not np.array_equal(runner.out, ref):
            problems.append(f"{runner.name} differs from the NumPy fancy-indexing reference")
        if runner.note:
            notes.append(f"{runner.name}: {runner.note}")

    for runner in runners:  # warm-up: caches, thread pools, page faults
        runner.before()
        runner.run()
    time_interleaved(runners, repeat)
    if torch is not None:
        torch.set_num_threads(default_threads)

    floor_s = median(runners[0].times)
    ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    cpu_per_wall: dict[str, float] = {}
    for runner in runners[1:]:
        ratios[runner.name] = median(runner.times) / floor_s
        cpu_per_wall[runner.name] = sum(runner.cpu_times) / sum(runner.times)
    cpu_per_wall[FLOOR] = sum(runners[0].cpu_times) / sum(runners[0].times)
    return Outcome(work, floor_s, ratios, missing, problems, notes, first_call_s, cpu_per_wall)


# -- dispatch overhead and startup ------------------------------------------------------------------------------

def per_call_us(call: Callable[[], object], count: int) -> float:
    for _ in range(min(count, 200)):
        call()
    samples = []
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for _ in range(count):
            start = clock()
            call()
            samples.append(clock() - start)
    finally:
        gc.enable()
    return statistics.median(samples) / 1000.0


def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    """A [16, 16] float32 table, 4 rows gathered by INT64 indices."""
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    rows = np.array([[3], [0], [15], [7]], np.int64)
    out = np.empty((4, 16), np.float32)
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", (16, 16)), dml.TensorDesc("INT64", (4, 1)),
                                     dml.TensorDesc("FLOAT32", (4, 16)), 2, 2, 0)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)]
    flat = rows.reshape(-1)
    results = {
        "opendml execute, reused Bindings": per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": per_call_us(
            lambda: compiled.execute([dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)]), count),
        "NumPy np.take(out=, mode='clip')": per_call_us(
            lambda: np.take(x, flat, axis=0, out=out, mode="clip"), count),
    }
    if not np.array_equal(out, x[flat]):
        raise AssertionError("the [16,16] gather gave a wrong result")
    if torch is not None:
        xt, it, ot = torch.from_numpy(x), torch.from_numpy(flat), torch.from_numpy(out)
        results["PyTorch index_select(out=)"] = per_call_us(lambda: torch.index_select(xt, 0, it, out=ot), count)
    return results


_STARTUP_CHILD = textwrap.dedent("""
    import json, time
    start = time.perf_counter()
    import numpy as np
    import opendml as dml
    imported = time.perf_counter()
    x = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
    rows = np.arange(255, -1, -1, dtype=np.int64).reshape(256, 1)
    out = np.empty((256, 64), np.float32)
    device = dml.Device()
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", [256, 64]), dml.TensorDesc("INT64", [256, 1]),
                                     dml.TensorDesc("FLOAT32", [256, 64]), 2, 2, 0)
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)])
    done = time.perf_counter()
    assert np.array_equal(out, x[::-1])
    print(json.dumps({"import_s": imported - start, "first_result_s": done - imported}))
""")


def startup(cache_dir: str) -> dict[str, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", _STARTUP_CHILD], env=env, capture_output=True, text=True,
                           check=False)
    total = time.perf_counter() - start
    if child.returncode != 0:
        raise RuntimeError(f"the startup child failed:\n{child.stderr[-2000:]}")
    parts: dict[str, float] = json.loads(child.stdout.strip().splitlines()[-1])
    parts["total_s"] = total
    return parts


# -- report -----------------------------------------------------------------------------------------------------

def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def print_table(outcomes: list[Outcome]) -> None:
    label_width = max(len("workload"), *(len(outcome.work.label) for outcome in outcomes))
    headers = ["workload".ljust(label_width), "floor ms", *COLUMNS]
    widths = [len(header) for header in headers]
    rows = []
    for outcome in outcomes:
        cells = [outcome.work.label.ljust(label_width), f"{outcome.floor_s * 1e3:.2f}"]
        for name in COLUMNS:
            cell = fmt_ratio(outcome.ratios[name])
            if any(problem.startswith(name + " ") for problem in outcome.problems):
                cell += "!"
            cells.append(cell)
        rows.append(cells)
        widths = [max(width, len(cell)) for width, cell in zip(widths, cells, strict=True)]

    def line(cells: list[str]) -> str:
        return " | ".join([cells[0].ljust(widths[0]), *(cell.rjust(width)
                                                        for cell, width in zip(cells[1:], widths[1:], strict=True))])

    print(line(headers))
    print("-+-".join("-" * width for width in widths))
    for cells in rows:
        print(line(cells))
    print("(ratios: median time / median floor time; lower is better; '!' = result mismatch, see checks; "
          "'-' = peer not installed or without this operator)")


def verdict(outcome: Outcome) -> str:
    mine = outcome.ratios[OPENDML]
    assert mine is not None
    peers = {name: ratio for name, ratio in outcome.ratios.items()
             if name in PEERS and ratio is not None and not any(p.startswith(name + " ") for p in outcome.problems)}
    floor_ok = mine <= outcome.work.target
    text = (f"{outcome.work.label}: opendml {mine:.2f}x floor (target <= {outcome.work.target:.1f}x) "
            f"{'MET' if floor_ok else 'MISSED'}")
    if peers:
        fastest = min(peers, key=lambda name: peers[name])
        peer_ok = mine <= peers[fastest]
        text += (f"; vs fastest peer {fastest} {peers[fastest]:.2f}x: {mine / peers[fastest]:.2f}x its time "
                 f"{'MET' if peer_ok else 'MISSED'}")
    else:
        peer_ok = True
        text += "; no peer to compare"
    return ("OK    " if floor_ok and peer_ok else "MISS  ") + text


def thread_summary(outcomes: list[Outcome]) -> list[str]:
    lines = []
    numba_threads = numba.get_num_threads() if numba is not None else "n/a"
    declared = {
        FLOOR: "np.copyto + np.max, 1 thread",
        OPENDML: (f"numba kernel; outputs of 1 MiB or more are split over numba.get_num_threads() = {numba_threads} "
                  f"threads (prange: random reads wait on memory latency, so a second thread keeps more in flight)"),
        NUMPY: "1 thread",
        TORCH: f"torch.get_num_threads() = {torch.get_num_threads()} (default)" if torch is not None else "-",
        TORCH1: "torch.set_num_threads(1)" if torch is not None else "-",
        ORT: ("one-node opset-13 GatherND model, io_binding to preallocated OrtValues; intra_op_num_threads = 1, "
              "inter_op = 1, spinning off") if ort is not None else "-",
    }
    for name in (FLOOR, *COLUMNS):
        shares = [outcome.cpu_per_wall[name] for outcome in outcomes if name in outcome.cpu_per_wall]
        measured = (f"process CPU/wall in timed calls median {statistics.median(shares):.2f}, max {max(shares):.2f}"
                    if shares else "not run")
        lines.append(f"  {name:<13} {declared[name]}; {measured}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (under a minute)")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload")
    parser.add_argument("--no-startup", action="store_true", help="skip the fresh-interpreter startup timing")
    args = parser.parse_args()
    repeat = args.repeat if args.repeat is not None else (5 if args.quick else 25)
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    dispatch_count = 3000 if args.quick else 20000

    began = time.perf_counter()
    print(f"opendml {dml.__version__} | Python {platform.python_version()} | NumPy {np.__version__} | "
          f"numba {numba.__version__ if numba is not None else '-'} | "
          f"torch {torch.__version__ if torch is not None else '-'} | "
          f"onnxruntime {ort.__version__ if ort is not None else '-'}")
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{repeat} interleaved rounds per workload")
    if os.getloadavg()[0] > 0.5:
        print("WARNING: the machine is busy (load average above 0.5); timings are noisy")
    device = dml.Device()
    rng = np.random.default_rng(20240501)

    outcomes = []
    for work in WORKLOADS:
        outcomes.append(bench_workload(device, work, repeat, rng))
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)

    print()
    print_table(outcomes)
    print()
    print("Targets (opendml within 1.5x of the floor, 2.5x for the element gather, and not slower than the fastest "
          "peer):")
    for outcome in outcomes:
        print("  " + verdict(outcome))
    print()
    print("Threads:")
    print("  (process CPU/wall above 1 means more than one thread was busy; below 1, the process waited)")
    for line in thread_summary(outcomes):
        print(line)
    print()
    print("Checks (each result once, written into a NaN-poisoned preallocated buffer, compared bit for bit):")
    for outcome in outcomes:
        print(f"  {outcome.work.label}: {'all equal' if not outcome.problems else 'MISMATCH'}; opendml first call "
              f"(compile + run) {outcome.first_call_s * 1e3:.0f} ms")
        for problem in outcome.problems:
            print(f"    MISMATCH: {problem}")
        for name, why in outcome.missing.items():
            if why != "not installed":
                print(f"    {name}: {why}")
        for note in dict.fromkeys(outcome.notes):
            print(f"    {note}")

    print()
    print(f"Dispatch overhead (4 rows of a [16,16] float32 table; median of {dispatch_count} calls):")
    for name, micros in dispatch_overhead(device, dispatch_count).items():
        mark = ""
        if name == "opendml execute, reused Bindings":
            mark = f"  (target < {DISPATCH_TARGET_US:.0f} us: {'MET' if micros < DISPATCH_TARGET_US else 'MISSED'})"
        print(f"  {name:<34} {micros:8.2f} us{mark}")

    if not args.no_startup:
        print()
        print("Startup (fresh `python -c` to the first result of a [256,64] row gather; wall time measured by the "
              "parent):")
        with tempfile.TemporaryDirectory(prefix="opendml-numba-cache-") as cache_dir:
            for kind in ("cold numba cache", "warm numba cache"):
                parts = startup(cache_dir)
                print(f"  {kind}: {parts['total_s']:.2f} s total (import numpy + opendml {parts['import_s']:.2f} s, "
                      f"then Device/compile/first execute {parts['first_result_s']:.2f} s)")

    print()
    print(f"load average {os.getloadavg()[0]:.2f} at end; whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
