#!/usr/bin/env python
"""SPLIT and ONE_HOT benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy floor.

    python bench/bench_split_one_hot.py            # full run (about 2 minutes on 2 cores; 5 GiB of memory)
    python bench/bench_split_one_hot.py --quick    # fewer repeats
    python bench/bench_split_one_hot.py --repeat 31

Every implementation writes into caller-provided, preallocated outputs (`out=` / copy_ into preallocated tensors
in NumPy and PyTorch, an io_binding to preallocated OrtValues in ONNX Runtime, reused dml.Bindings in opendml).
Within a workload the implementations are timed interleaved (floor, opendml, NumPy, ... then again), so drift
hits all of them alike; the table shows each one's MEDIAN time divided by the floor's.

The floor is an np.copyto between two preallocated arrays of the workload's large tensor, as in
bench_reduce.py: for SPLIT the input (read once, written once: exactly SPLIT's traffic); for ONE_HOT the output
(its bytes written once and as many read, which covers reading the indices, 1/256 of it). A stricter ONE_HOT
floor that moves only the bytes the operator must (a copy of (output + indices) / 2 bytes each way) is
reported below the table.

The peers (torch, onnx, onnxruntime: the `bench` extras) are optional; a missing one is shown as "-". Every
result is checked exactly (both operators only move bits) against NumPy's np.split / a vectorized one-hot.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import platform
import statistics
import sys
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
TARGET = 1.5  # ratio over the floor opendml should stay within


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    operator: str  # "SPLIT" or "ONE_HOT"
    shape: tuple[int, ...]  # SPLIT: the input; ONE_HOT: the output
    axis: int
    parts: int = 4  # SPLIT: equal parts
    depth: int = 256  # ONE_HOT

    @property
    def split_shapes(self) -> list[tuple[int, ...]]:
        part = list(self.shape)
        part[self.axis] //= self.parts
        return [tuple(part)] * self.parts


WORKLOADS = (
    Workload("SPLIT [8,4096,512] in 4, axis 1", "SPLIT", (8, 4096, 512), 1),
    Workload("SPLIT [8,4096,512] in 4, axis 2", "SPLIT", (8, 4096, 512), 2),
    Workload("ONE_HOT 1M INT32 indices, depth 256", "ONE_HOT", (1 << 20, 256), 1),
)


def one_hot_indices(count: int, depth: int, rng: np.random.Generator) -> Array:
    """INT32 indices: 93% in [0, depth), 5% negative in [-depth, -1], 2% out of range (>= depth or < -depth)."""
    kind = rng.random(count)
    indices = rng.integers(0, depth, count)
    negative = kind < 0.05
    indices[negative] = rng.integers(-depth, 0, int(negative.sum()))
    outside = (kind >= 0.05) & (kind < 0.07)
    far = rng.integers(depth, 4 * depth, int(outside.sum()))
    indices[outside] = np.where(rng.random(far.size) < 0.5, far, -far - 1)
    return indices.astype(np.int32)


def one_hot_expected(indices: Array, depth: int, off: float, on: float) -> Array:
    positions = np.where(indices < 0, indices.astype(np.int64) + depth, indices.astype(np.int64))
    hot = (positions[:, None] == np.arange(depth)) & ((positions >= 0) & (positions < depth))[:, None]
    return np.where(hot, np.float32(on), np.float32(off))


# -- implementations ------------------------------------------------------------------------------------------

def _nothing() -> None:
    return None


@dataclass
class Runner:
    """One implementation of one workload: `run` computes into `outs` (preallocated); `before` runs untimed."""

    name: str
    run: Callable[[], object]
    outs: list[Array]
    before: Callable[[], None] = _nothing
    note: str = ""
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)


@dataclass
class Data:
    x: Array  # SPLIT: the input; ONE_HOT: the indices [count]
    values: Array  # ONE_HOT: [1, 2] = off, on
    expected: list[Array]


def make_data(work: Workload, rng: np.random.Generator) -> Data:
    if work.operator == "SPLIT":
        x = rng.standard_normal(work.shape, dtype=np.float32)
        return Data(x, np.empty(0, np.float32), [np.ascontiguousarray(p) for p in np.split(x, work.parts, work.axis)])
    indices = one_hot_indices(work.shape[0], work.depth, rng)
    values = np.array([[0.0, 1.0]], np.float32)
    return Data(indices, values, [one_hot_expected(indices, work.depth, 0.0, 1.0)])


def make_floor(work: Workload) -> Runner:
    source = np.ones(work.shape, np.float32)
    target = np.empty_like(source)
    return Runner(FLOOR, lambda: np.copyto(target, source), [target])


def make_strict_floor(work: Workload, data: Data) -> Runner:
    """ONE_HOT's own traffic only: (output + indices) bytes moved in all, half read, half written."""
    total = (int(np.prod(work.shape)) * 4 + data.x.nbytes) // 2
    source = np.ones(total // 4, np.float32)
    target = np.empty_like(source)
    return Runner("strict floor", lambda: np.copyto(target, source), [target])


def make_opendml(device: dml.Device, work: Workload, data: Data) -> Runner:
    f32 = dml.DataType.FLOAT32
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        desc: dml.OperatorDesc = dml.SplitOperatorDesc(
            dml.TensorDesc(f32, list(work.shape)), [dml.TensorDesc(f32, list(shape)) for shape in work.split_shapes],
            work.axis)
        inputs = [dml.Binding(data.x)]
    else:
        outs = [np.empty(work.shape, np.float32)]
        count = work.shape[0]
        desc = dml.OneHotOperatorDesc(dml.TensorDesc(dml.DataType.INT32, [count, 1]), dml.TensorDesc(f32, [1, 2]),
                                      dml.TensorDesc(f32, list(work.shape)), work.axis)
        inputs = [dml.Binding(data.x), dml.Binding(data.values)]
    compiled = device.compile_operator(device.create_operator(desc))
    outputs = [dml.Binding(out) for out in outs]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), outs)


def make_numpy(work: Workload, data: Data) -> Runner:
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        x, parts, axis = data.x, work.parts, work.axis

        def run_split() -> None:
            for out, part in zip(outs, np.split(x, parts, axis), strict=True):
                np.copyto(out, part)

        return Runner(NUMPY, run_split, outs, note="np.copyto of each np.split view")
    out = np.empty(work.shape, np.float32)
    indices, depth = data.x, work.depth
    off, on = data.values[0, 0], data.values[0, 1]

    def run_one_hot() -> None:
        positions = np.where(indices < 0, indices + depth, indices)
        valid = (positions >= 0) & (positions < depth)
        out.fill(off)
        np.put_along_axis(out, np.where(valid, positions, 0)[:, None], np.where(valid, on, off)[:, None], axis=1)

    return Runner(NUMPY, run_one_hot, [out], note="positions, fill, then np.put_along_axis into the reused output")


def make_torch(work: Workload, data: Data, threads: int, name: str) -> Runner:
    def before() -> None:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        xt, outs_t = torch.from_numpy(data.x), [torch.from_numpy(out) for out in outs]
        sizes = [shape[work.axis] for shape in work.split_shapes]
        return Runner(name, lambda: torch.split_with_sizes_copy(xt, sizes, work.axis, out=outs_t), outs, before,
                      note="torch.split_with_sizes_copy(out=)")
    out = np.empty(work.shape, np.float32)
    indices_t, out_t, depth = torch.from_numpy(data.x), torch.from_numpy(out), work.depth
    off, on = float(data.values[0, 0]), float(data.values[0, 1])

    def run_one_hot() -> None:
        positions = torch.where(indices_t < 0, indices_t + depth, indices_t)
        valid = (positions >= 0) & (positions < depth)
        spots = torch.where(valid, positions, 0).long().unsqueeze(1)
        hot = torch.where(valid, on, off).unsqueeze(1)
        out_t.fill_(off)
        out_t.scatter_(1, spots, hot)

    return Runner(name, run_one_hot, [out], before, note="positions, fill_, then scatter_ into the reused output")


def _session(model: Any) -> Any:
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def make_ort(work: Workload, data: Data) -> Runner:
    """A one-node ONNX model (opset 18), one intra-op thread, no spinning, io_binding to preallocated OrtValues over
    the caller's arrays (Split: four outputs; OneHot: indices [count], depth 256, values [off, on], axis -1, which
    is ONE_HOT's rule: negative indices from the end, anything outside [-depth, depth) all off)."""
    helper, proto = onnx.helper, onnx.TensorProto
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        names = [f"y{index}" for index in range(work.parts)]
        sizes = [shape[work.axis] for shape in work.split_shapes]
        node = helper.make_node("Split", ["x", "split"], names, axis=work.axis)
        graph = helper.make_graph(
            [node], "split", [helper.make_tensor_value_info("x", proto.FLOAT, list(work.shape))],
            [helper.make_tensor_value_info(name, proto.FLOAT, list(shape))
             for name, shape in zip(names, work.split_shapes, strict=True)],
            initializer=[helper.make_tensor("split", proto.INT64, [len(sizes)], sizes)])
        inputs = {"x": data.x}
        bound = dict(zip(names, outs, strict=True))
    else:
        outs = [np.empty(work.shape, np.float32)]
        count = work.shape[0]
        node = helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=-1)
        graph = helper.make_graph(
            [node], "one_hot", [helper.make_tensor_value_info("indices", proto.INT32, [count])],
            [helper.make_tensor_value_info("y", proto.FLOAT, list(work.shape))],
            initializer=[helper.make_tensor("depth", proto.INT32, [1], [work.depth]),
                         helper.make_tensor("values", proto.FLOAT, [2], data.values.ravel().tolist())])
        inputs = {"indices": data.x}
        bound = {"y": outs[0]}
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    session = _session(model)
    binding = session.io_binding()
    keep = []  # the OrtValues wrap the arrays' memory: the closure keeps them alive
    for name, array in inputs.items():
        value = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_input(name, value)
        keep.append(value)
    for name, array in bound.items():
        value = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_output(name, value)
        keep.append(value)

    def run_bound(_keep: list[Any] = keep) -> None:
        session.run_with_iobinding(binding)

    return Runner(ORT, run_bound, outs)


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


def poison(array: Array) -> None:
    """Fills an output buffer with NaN, which no correct run leaves there, to show the run wrote into it."""
    array.fill(np.nan)


def exact(results: list[Array], expected: list[Array]) -> bool:
    return len(results) == len(expected) and all(
        result.shape == want.shape and np.array_equal(result.view(np.uint32), want.view(np.uint32))
        for result, want in zip(results, expected, strict=True))


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
    strict_floor_ratio: float | None = None


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    data = make_data(work, rng)
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []

    start = time.perf_counter()
    mine = make_opendml(device, work, data)
    mine.run()
    first_call_s = time.perf_counter() - start
    runners = [make_floor(work), mine]

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

    add(NUMPY, lambda: make_numpy(work, data), True)
    default_threads = torch.get_num_threads() if torch is not None else 0
    add(TORCH, lambda: make_torch(work, data, default_threads, TORCH), torch is not None)
    add(TORCH1, lambda: make_torch(work, data, 1, TORCH1), torch is not None)
    add(ORT, lambda: make_ort(work, data), ort is not None)
    strict = make_strict_floor(work, data) if work.operator == "ONE_HOT" else None
    if strict is not None:
        runners.append(strict)

    # Correctness, once: every implementation writes into NaN-poisoned outputs, compared bit for bit.
    for runner in runners[1:]:
        if runner is strict:
            continue
        runner.before()
        for out in runner.outs:
            poison(out)
        runner.run()
        if not exact(runner.outs, data.expected):
            problems.append(f"{runner.name} differs from the expected result")
        if runner.note:
            notes.append(f"{runner.name}: {runner.note}")

    for runner in runners:  # warm-up: caches, thread pools, page faults
        runner.before()
        runner.run()
    time_interleaved(runners, repeat)
    if torch is not None:
        torch.set_num_threads(default_threads)

    floor_s = statistics.median(runners[0].times)
    ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    cpu_per_wall: dict[str, float] = {}
    for runner in runners:
        cpu_per_wall[runner.name] = sum(runner.cpu_times) / sum(runner.times)
        if runner.name in ratios:
            ratios[runner.name] = statistics.median(runner.times) / floor_s
    outcome = Outcome(work, floor_s, ratios, missing, problems, notes, first_call_s, cpu_per_wall)
    if strict is not None:
        outcome.strict_floor_ratio = statistics.median(mine.times) / statistics.median(strict.times)
    return outcome


# -- dispatch overhead ----------------------------------------------------------------------------------------------

def per_call_us(call: Callable[[], object], count: int) -> float:
    for _ in range(min(count, 200)):
        call()
    samples = []
    clock = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for _ in range(count):
            begin = clock()
            call()
            samples.append(clock() - begin)
    finally:
        gc.enable()
    return statistics.median(samples) / 1000.0


def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    f32 = dml.DataType.FLOAT32
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    halves = [np.empty((4, 4), np.float32) for _ in range(2)]
    split = device.compile_operator(device.create_operator(dml.SplitOperatorDesc(
        dml.TensorDesc(f32, [4, 8]), [dml.TensorDesc(f32, [4, 4])] * 2, 1)))
    split_in, split_out = [dml.Binding(x)], [dml.Binding(half) for half in halves]
    indices = np.arange(16, dtype=np.uint32).reshape(16, 1) % 5
    values = np.array([[0, 1]], np.float32)
    hot = np.empty((16, 4), np.float32)
    one_hot = device.compile_operator(device.create_operator(dml.OneHotOperatorDesc(
        dml.TensorDesc("UINT32", [16, 1]), dml.TensorDesc(f32, [1, 2]), dml.TensorDesc(f32, [16, 4]), 1)))
    hot_in, hot_out = [dml.Binding(indices), dml.Binding(values)], [dml.Binding(hot)]
    results = {
        "SPLIT [4,8] in 2, reused Bindings": per_call_us(lambda: split.execute(split_in, split_out), count),
        "NumPy np.copyto x2": per_call_us(lambda: [np.copyto(half, part) for half, part
                                                   in zip(halves, np.split(x, 2, 1), strict=True)], count),
        "ONE_HOT 16 indices, depth 4, reused Bindings": per_call_us(lambda: one_hot.execute(hot_in, hot_out), count),
    }
    split.execute(split_in, split_out)
    one_hot.execute(hot_in, hot_out)
    if not (np.array_equal(halves[1], x[:, 4:]) and np.array_equal(hot, one_hot_expected(indices[:, 0].astype(
            np.int64), 4, 0.0, 1.0))):
        raise AssertionError("the tiny SPLIT / ONE_HOT gave a wrong result")
    return results


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


def verdict(outcome: Outcome) -> tuple[bool, str]:
    mine = outcome.ratios[OPENDML]
    assert mine is not None
    peers = {name: ratio for name, ratio in outcome.ratios.items()
             if name in PEERS and ratio is not None and not any(p.startswith(name + " ") for p in outcome.problems)}
    floor_ok = mine <= TARGET and not any(p.startswith(OPENDML + " ") for p in outcome.problems)
    text = (f"{outcome.work.label}: opendml {mine:.2f}x floor (target <= {TARGET:.1f}x) "
            f"{'MET' if floor_ok else 'MISSED'}")
    if peers:
        fastest = min(peers, key=lambda name: peers[name])
        peer_ok = mine <= peers[fastest]
        text += (f"; vs fastest peer {fastest} {peers[fastest]:.2f}x: {mine / peers[fastest]:.2f}x its time "
                 f"{'MET' if peer_ok else 'MISSED'}")
    else:
        peer_ok = True
        text += "; no peer to compare"
    return floor_ok and peer_ok, ("OK    " if floor_ok and peer_ok else "MISS  ") + text


def thread_summary(outcomes: list[Outcome]) -> list[str]:
    declared = {
        FLOOR: "np.copyto, 1 thread",
        OPENDML: "numba kernels, 1 thread (non-temporal stores for outputs of 4 MiB and more)",
        NUMPY: "1 thread",
        TORCH: f"torch.get_num_threads() = {torch.get_num_threads()} (default)" if torch is not None else "-",
        TORCH1: "torch.set_num_threads(1)" if torch is not None else "-",
        ORT: ("one-node opset-18 model, io_binding to preallocated OrtValues; intra_op_num_threads = 1, "
              "inter_op = 1, spinning off") if ort is not None else "-",
    }
    lines = []
    for name in (FLOOR, *COLUMNS):
        shares = [outcome.cpu_per_wall[name] for outcome in outcomes if name in outcome.cpu_per_wall]
        measured = (f"CPU time / wall time median {statistics.median(shares):.2f}, max {max(shares):.2f}"
                    if shares else "not run")
        lines.append(f"  {name:<13} {declared[name]}; {measured}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload")
    args = parser.parse_args()
    repeat = args.repeat if args.repeat is not None else (5 if args.quick else 15)
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
    rng = np.random.default_rng(20240503)

    outcomes = []
    for work in WORKLOADS:
        outcomes.append(bench_workload(device, work, repeat, rng))
        gc.collect()
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)

    print()
    print_table(outcomes)
    for outcome in outcomes:
        if outcome.strict_floor_ratio is not None:
            print(f"{outcome.work.label}: opendml {outcome.strict_floor_ratio:.2f}x the strict floor (a copy moving "
                  f"only the output's and the indices' bytes)")
    print()
    print(f"Targets (opendml within {TARGET:.1f}x of the floor, and not slower than the fastest peer):")
    all_met = True
    for outcome in outcomes:
        met, text = verdict(outcome)
        all_met &= met
        print("  " + text)
    print(f"  {'all targets met' if all_met else 'NOT all targets met'}")
    print()
    print("Threads:")
    for line in thread_summary(outcomes):
        print(line)
    print()
    print("Checks (each result once, written into NaN-poisoned preallocated outputs, compared bit for bit):")
    for outcome in outcomes:
        print(f"  {outcome.work.label}: opendml first call (compile + run) {outcome.first_call_s * 1e3:.0f} ms; "
              f"{'all results exact' if not outcome.problems else 'MISMATCHES'}")
        for problem in outcome.problems:
            print(f"    MISMATCH: {problem}")
        for name, why in outcome.missing.items():
            if why != "not installed":
                print(f"    {name}: {why}")
        for note in dict.fromkeys(outcome.notes):
            print(f"    {note}")

    print()
    print(f"Dispatch overhead (median of {dispatch_count} calls):")
    for name, micros in dispatch_overhead(device, dispatch_count).items():
        print(f"  {name:<46} {micros:8.2f} us")
    print()
    print(f"load average {os.getloadavg()[0]:.2f} at end; whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
