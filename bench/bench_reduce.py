#!/usr/bin/env python
"""REDUCE benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy floor.

    python bench/bench_reduce.py            # full run (2-3 minutes on 2 cores)
    python bench/bench_reduce.py --quick    # fewer repeats (under a minute)
    python bench/bench_reduce.py --repeat 31

Every implementation writes into a caller-provided, preallocated output buffer wherever it allows one
(`out=` in NumPy and PyTorch, an io_binding to preallocated OrtValues in ONNX Runtime, a reused dml.Binding in
opendml). Within a workload the implementations are timed interleaved (floor, opendml, NumPy, ... then again),
so drift hits all of them alike; the table shows each one's MEDIAN time divided by the floor's, the floor being
an np.copyto of the input into a same-size preallocated array (input read once, output written once).

The peers (torch, onnx, onnxruntime: the `bench` extras) are optional; a missing one is shown as "-".
Each peer's result is checked once against opendml's, and opendml's against a float64 reference, so that a
fast wrong number cannot hide. Further sections: dispatch overhead of a tiny operator, and the startup time of
a fresh interpreter to its first SUM result with a cold and a warm numba cache.
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

TARGETS = {"LOG_SUM_EXP": 2.5}  # ratio over the floor opendml should stay within; 1.5 for every other function
DEFAULT_TARGET = 1.5
DISPATCH_TARGET_US = 15.0


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    function: str  # a dml.ReduceFunction name
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    dtype: type[np.generic] = np.float32

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(1 if axis in self.axes else size for axis, size in enumerate(self.shape))

    @property
    def target(self) -> float:
        return TARGETS.get(self.function, DEFAULT_TARGET)

    def make_input(self, rng: np.random.Generator) -> Array:
        data = rng.standard_normal(self.shape, dtype=np.float32)
        if self.function == "MULTIPLY":  # values near 1, so that the product of 4096 of them stays finite
            data *= np.float32(1e-4)
            data += np.float32(1.0)
        return np.ascontiguousarray(data.astype(self.dtype, copy=False))


WORKLOADS = (
    Workload("SUM   [4096,4096] axis 1", "SUM", (4096, 4096), (1,)),
    Workload("SUM   [4096,4096] axis 0", "SUM", (4096, 4096), (0,)),
    Workload("SUM   [64,256,1024] axes 0,2", "SUM", (64, 256, 1024), (0, 2)),
    Workload("ARGMAX [4096,4096] axis 1", "ARGMAX", (4096, 4096), (1,)),
    Workload("L2    [4096,4096] axis 1", "L2", (4096, 4096), (1,)),
    Workload("LSE   [4096,4096] axis 1", "LOG_SUM_EXP", (4096, 4096), (1,)),
    Workload("PROD  [4096,4096] axis 1", "MULTIPLY", (4096, 4096), (1,)),
    Workload("MAX   [256,256,256] all axes", "MAX", (256, 256, 256), (0, 1, 2)),
    Workload("SUM   f16 [4096,4096] axis 1", "SUM", (4096, 4096), (1,), np.float16),
)


def reference(work: Workload, x: Array) -> Array:
    """The float64 answer (for ARGMAX: the row maxima, which the values at the returned indices must equal)."""
    x64 = x.astype(np.float64)
    axes = work.axes
    if work.function == "SUM":
        return np.asarray(x64.sum(axis=axes, keepdims=True))
    if work.function in ("MAX", "ARGMAX"):
        return np.asarray(x64.max(axis=axes, keepdims=True))
    if work.function == "L2":
        return np.asarray(np.sqrt(np.square(x64).sum(axis=axes, keepdims=True)))
    if work.function == "LOG_SUM_EXP":
        peak = x64.max(axis=axes, keepdims=True)
        return np.asarray(np.log(np.exp(x64 - peak).sum(axis=axes, keepdims=True)) + peak)
    if work.function == "MULTIPLY":
        return np.asarray(x64.prod(axis=axes, keepdims=True))
    raise ValueError(work.function)


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

    def result(self) -> Array:
        return self.out


def make_floor(x: Array) -> Runner:
    target = np.empty_like(x)
    return Runner(FLOOR, lambda: np.copyto(target, x), target)


_DML_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16", np.dtype(np.uint32): "UINT32"}


def make_opendml(device: dml.Device, work: Workload, x: Array) -> Runner:
    out_dtype = np.dtype(np.uint32) if work.function == "ARGMAX" else x.dtype
    out = np.empty(work.out_shape, out_dtype)
    x_desc = dml.TensorDesc(dml.DataType[_DML_TYPES[x.dtype]], work.shape)
    y_desc = dml.TensorDesc(dml.DataType[_DML_TYPES[out_dtype]], work.out_shape)
    desc = dml.ReduceOperatorDesc(dml.ReduceFunction[work.function], x_desc, y_desc, axes=work.axes)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), out)


def make_numpy(work: Workload, x: Array) -> Runner:
    axes, shape = work.axes, work.out_shape
    last = work.axes == (x.ndim - 1,)
    fn = work.function
    if fn == "SUM" and x.dtype == np.float16:
        wide = np.empty(shape, np.float32)
        half: Array = np.empty(shape, np.float16)

        def run_f16() -> None:
            np.sum(x, axis=axes, dtype=np.float32, keepdims=True, out=wide)
            np.copyto(half, wide, casting="same_kind")

        return Runner(NUMPY, run_f16, half, note="np.sum(dtype=float32) then cast to float16")
    out: Array = np.empty(shape, x.dtype)
    if fn == "SUM":
        return Runner(NUMPY, lambda: np.sum(x, axis=axes, keepdims=True, out=out), out)
    if fn == "MAX":
        return Runner(NUMPY, lambda: np.max(x, axis=axes, keepdims=True, out=out), out)
    if fn == "MULTIPLY":
        return Runner(NUMPY, lambda: np.prod(x, axis=axes, keepdims=True, out=out), out)
    if fn == "ARGMAX" and last:
        index: np.ndarray[Any, np.dtype[np.int64]] = np.empty(shape, np.int64)
        return Runner(NUMPY, lambda: np.argmax(x, axis=-1, keepdims=True, out=index), index)
    if fn == "L2" and last and x.ndim == 2:
        column = out[:, 0]

        def run_l2() -> None:
            np.einsum("ij,ij->i", x, x, out=column)
            np.sqrt(out, out=out)

        return Runner(NUMPY, run_l2, out, note="einsum('ij,ij->i') then sqrt")
    if fn == "LOG_SUM_EXP":
        peak = np.empty(shape, x.dtype)
        scratch = np.empty_like(x)

        def run_lse() -> None:
            np.max(x, axis=axes, keepdims=True, out=peak)
            np.subtract(x, peak, out=scratch)
            np.exp(scratch, out=scratch)
            np.sum(scratch, axis=axes, keepdims=True, out=out)
            np.log(out, out=out)
            np.add(out, peak, out=out)

        return Runner(NUMPY, run_lse, out, note="max, subtract, exp, sum, log, add (preallocated scratch)")
    raise ValueError(f"no NumPy form for {work.label}")


def make_torch(work: Workload, x: Array, threads: int, name: str) -> Runner:
    fn, dims = work.function, list(work.axes)
    out = np.empty(work.out_shape, np.int64 if fn == "ARGMAX" else x.dtype)
    xt, ot = torch.from_numpy(x), torch.from_numpy(out)
    note = ""
    if fn == "SUM":
        if x.dtype == np.float16:
            note = "plain half sum (CPU kernel accumulates in float32 internally)"
        call: Callable[[], object] = lambda: torch.sum(xt, dim=dims, keepdim=True, out=ot)  # noqa: E731
    elif fn == "MAX":
        call = lambda: torch.amax(xt, dim=dims, keepdim=True, out=ot)  # noqa: E731
    elif fn == "MULTIPLY":
        call = lambda: torch.prod(xt, dim=dims[0], keepdim=True, out=ot)  # noqa: E731
    elif fn == "ARGMAX":
        call = lambda: torch.argmax(xt, dim=dims[0], keepdim=True, out=ot)  # noqa: E731
    elif fn == "L2":
        call = lambda: torch.linalg.vector_norm(xt, 2, dim=dims, keepdim=True, out=ot)  # noqa: E731
    elif fn == "LOG_SUM_EXP":
        call = lambda: torch.logsumexp(xt, dim=dims, keepdim=True, out=ot)  # noqa: E731
    else:
        raise ValueError(fn)

    def before() -> None:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    return Runner(name, call, out, before=before, note=note)


_ONNX_OPS = {"SUM": "ReduceSum", "MAX": "ReduceMax", "ARGMAX": "ArgMax", "L2": "ReduceL2",
             "LOG_SUM_EXP": "ReduceLogSumExp", "MULTIPLY": "ReduceProd"}


def make_ort(work: Workload, x: Array) -> Runner:
    """A one-node ONNX model (opset 18, keepdims=1), one intra-op thread, no spinning, io_binding to
    preallocated OrtValues over the caller's arrays."""
    helper, tensor_proto = onnx.helper, onnx.TensorProto
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    op = _ONNX_OPS[work.function]
    out = np.empty(work.out_shape, np.int64 if op == "ArgMax" else x.dtype)
    x_info = helper.make_tensor_value_info("x", elem, list(work.shape))
    y_info = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(out.dtype), list(work.out_shape))
    initializers = []
    if op == "ArgMax":
        node = helper.make_node(op, ["x"], ["y"], axis=work.axes[0], keepdims=1)
    else:
        initializers.append(helper.make_tensor("axes", tensor_proto.INT64, [len(work.axes)], list(work.axes)))
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
    graph = helper.make_graph([node], "reduce", [x_info], [y_info], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
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
    y_value = ort.OrtValue.ortvalue_from_numpy(out)
    binding.bind_ortvalue_input("x", x_value)
    binding.bind_ortvalue_output("y", y_value)
    keep = (x_value, y_value)  # the OrtValues wrap the arrays' memory: the closure keeps them alive

    def run_bound(_keep: tuple[Any, Any] = keep) -> None:
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


def check(work: Workload, x: Array, ref: Array, result: Array) -> tuple[bool, float]:
    """Whether a result matches (loose tolerance), and its largest absolute error against the float64 answer."""
    if result.shape != ref.shape:
        return False, float("inf")
    if work.function == "ARGMAX":
        index = result.astype(np.int64)
        if index.min() < 0 or index.max() >= x.shape[-1]:
            return False, float("inf")
        picked = np.take_along_axis(x, index, axis=-1).astype(np.float64)
        error = float(np.max(np.abs(picked - ref)))
        return error == 0.0, error
    value = result.astype(np.float64)
    error = float(np.max(np.abs(value - ref))) if np.all(np.isfinite(value)) else float("inf")
    scale = max(1.0, float(np.max(np.abs(ref))))
    return bool(np.allclose(value, ref, rtol=1e-3, atol=1e-3 * scale)), error


def agrees(work: Workload, x: Array, mine: Array, theirs: Array) -> bool:
    """Whether a peer's result matches opendml's (loose tolerance; for ARGMAX the values at the indices)."""
    if mine.shape != theirs.shape:
        return False
    if work.function == "ARGMAX":
        a = np.take_along_axis(x, mine.astype(np.int64), axis=-1)
        b = np.take_along_axis(x, np.clip(theirs.astype(np.int64), 0, x.shape[-1] - 1), axis=-1)
        return bool(np.array_equal(a, b))
    a, b = mine.astype(np.float64), theirs.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-3 * scale))


def poison(array: Array) -> None:
    """Fills an output buffer with a value no correct run leaves there, to show the run wrote into it."""
    if array.dtype.kind == "f":
        array.fill(np.nan)
    else:
        array.fill(np.iinfo(array.dtype).max)


@dataclass
class Outcome:
    work: Workload
    floor_s: float
    ratios: dict[str, float | None]
    floor_best_s: float
    best_ratios: dict[str, float | None]
    missing: dict[str, str]
    problems: list[str]
    errors: dict[str, float]
    notes: list[str]
    first_call_s: float
    cpu_per_wall: dict[str, float]


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    x = work.make_input(rng)
    ref = reference(work, x)
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []

    start = time.perf_counter()
    mine = make_opendml(device, work, x)
    mine.run()
    first_call_s = time.perf_counter() - start
    runners = [make_floor(x), mine]

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

    add(NUMPY, lambda: make_numpy(work, x), True)
    default_threads = torch.get_num_threads() if torch is not None else 0
    add(TORCH, lambda: make_torch(work, x, default_threads, TORCH), torch is not None)
    add(TORCH1, lambda: make_torch(work, x, 1, TORCH1), torch is not None)
    add(ORT, lambda: make_ort(work, x), ort is not None)

    # Correctness, once: every implementation writes into a poisoned buffer; opendml against float64, peers
    # against opendml.
    errors: dict[str, float] = {}
    for runner in runners[1:]:
        runner.before()
        poison(runner.out)
        runner.run()
        ok, errors[runner.name] = check(work, x, ref, runner.result())
        if runner.name == OPENDML:
            if not ok:
                problems.append(f"opendml differs from the float64 reference (max abs error {errors[OPENDML]:.3g})")
        elif not agrees(work, x, mine.result(), runner.result()):
            problems.append(f"{runner.name} differs from opendml (its max abs error vs float64 "
                            f"{errors[runner.name]:.3g}, opendml's {errors[OPENDML]:.3g})")
        if runner.note:
            notes.append(f"{runner.name}: {runner.note}")

    for runner in runners:  # warm-up: caches, thread pools, page faults
        runner.before()
        runner.run()
    time_interleaved(runners, repeat)
    if torch is not None:
        torch.set_num_threads(default_threads)

    floor_s, floor_best_s = median(runners[0].times), min(runners[0].times)
    ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    best_ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    cpu_per_wall: dict[str, float] = {}
    for runner in runners[1:]:
        ratios[runner.name] = median(runner.times) / floor_s
        best_ratios[runner.name] = min(runner.times) / floor_best_s
        cpu_per_wall[runner.name] = sum(runner.cpu_times) / sum(runner.times)
    cpu_per_wall[FLOOR] = sum(runners[0].cpu_times) / sum(runners[0].times)
    return Outcome(work, floor_s, ratios, floor_best_s, best_ratios, missing, problems, errors, notes, first_call_s,
                   cpu_per_wall)


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
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    out = np.empty((16, 1), np.float32)
    x_desc = dml.TensorDesc(dml.DataType.FLOAT32, (16, 16))
    y_desc = dml.TensorDesc(dml.DataType.FLOAT32, (16, 1))
    desc = dml.ReduceOperatorDesc(dml.ReduceFunction.SUM, x_desc, y_desc, axes=(1,))
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    results = {
        "opendml execute, reused Bindings": per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": per_call_us(
            lambda: compiled.execute([dml.Binding(x)], [dml.Binding(out)]), count),
        "NumPy np.sum(out=)": per_call_us(lambda: np.sum(x, axis=1, keepdims=True, out=out), count),
    }
    if not np.allclose(out[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5):
        raise AssertionError("the 16x16 SUM gave a wrong result")
    if torch is not None:
        xt, ot = torch.from_numpy(x), torch.from_numpy(out)
        results["PyTorch torch.sum(out=)"] = per_call_us(lambda: torch.sum(xt, dim=1, keepdim=True, out=ot), count)
    return results


_STARTUP_CHILD = textwrap.dedent("""
    import json, time
    start = time.perf_counter()
    import numpy as np
    import opendml as dml
    imported = time.perf_counter()
    x = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) / 65536
    out = np.empty((256, 1), np.float32)
    device = dml.Device()
    desc = dml.ReduceOperatorDesc(dml.ReduceFunction.SUM, dml.TensorDesc(dml.DataType.FLOAT32, [256, 256]),
                                  dml.TensorDesc(dml.DataType.FLOAT32, [256, 1]), axes=[1])
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x)], [dml.Binding(out)])
    done = time.perf_counter()
    assert abs(float(out[0, 0]) - float(x[0].astype(np.float64).sum())) < 1e-3
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


def print_table(outcomes: list[Outcome], best: bool = False) -> None:
    label_width = max(len("workload"), *(len(outcome.work.label) for outcome in outcomes))
    headers = ["workload".ljust(label_width), "floor ms", *COLUMNS]
    widths = [len(header) for header in headers]
    rows = []
    for outcome in outcomes:
        floor_s, ratios = (outcome.floor_best_s, outcome.best_ratios) if best else (outcome.floor_s, outcome.ratios)
        cells = [outcome.work.label.ljust(label_width), f"{floor_s * 1e3:.2f}"]
        for name in COLUMNS:
            cell = fmt_ratio(ratios[name])
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
    if best:
        print("(fastest of the rounds over the floor's fastest: less sensitive to other load on the machine)")
    else:
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
        FLOOR: "np.copyto, 1 thread",
        OPENDML: f"numba kernels; numba.get_num_threads() = {numba_threads} (used only where a kernel is parallel)",
        NUMPY: "1 thread (NumPy reductions do not thread)",
        TORCH: f"torch.get_num_threads() = {torch.get_num_threads()} (default)" if torch is not None else "-",
        TORCH1: "torch.set_num_threads(1)" if torch is not None else "-",
        ORT: ("one-node opset-18 model, io_binding to preallocated OrtValues; intra_op_num_threads = 1, "
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
    repeat = args.repeat if args.repeat is not None else (5 if args.quick else 35)
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
    print("Targets (opendml within 1.5x of the floor, 2.5x for LOG_SUM_EXP, and not slower than the fastest peer):")
    for outcome in outcomes:
        print("  " + verdict(outcome))
    print()
    print("The same rounds, best time of each over the floor's best:")
    print_table(outcomes, best=True)
    print()
    print("Threads:")
    print("  (process CPU/wall above 1 means more than one thread was busy; below 1, the process waited)")
    for line in thread_summary(outcomes):
        print(line)
    print()
    print("Checks (each result once, written into a NaN-poisoned preallocated buffer; max abs error vs float64):")
    for outcome in outcomes:
        errors = ", ".join(f"{name} {error:.2g}" for name, error in outcome.errors.items())
        print(f"  {outcome.work.label}: {errors}; opendml first call (compile + run) "
              f"{outcome.first_call_s * 1e3:.0f} ms")
        for problem in outcome.problems:
            print(f"    MISMATCH: {problem}")
        for name, why in outcome.missing.items():
            if why != "not installed":
                print(f"    {name}: {why}")
        for note in dict.fromkeys(outcome.notes):
            print(f"    {note}")

    print()
    print(f"Dispatch overhead (SUM over the last axis of a [16,16] float32 tensor; median of {dispatch_count} calls):")
    for name, micros in dispatch_overhead(device, dispatch_count).items():
        mark = ""
        if name == "opendml execute, reused Bindings":
            mark = f"  (target < {DISPATCH_TARGET_US:.0f} us: {'MET' if micros < DISPATCH_TARGET_US else 'MISSED'})"
        print(f"  {name:<34} {micros:8.2f} us{mark}")

    if not args.no_startup:
        print()
        print("Startup (fresh `python -c` to the first result of a [256,256] SUM; wall time measured by the parent):")
        with tempfile.TemporaryDirectory(prefix="opendml-numba-cache-") as cache_dir:
            for kind in ("cold numba cache", "warm numba cache"):
                parts = startup(cache_dir)
                print(f"  {kind}: {parts['total_s']:.2f} s total (import numpy + opendml {parts['import_s']:.2f} s, "
                      f"then Device() with its numba backend, compile, first execute {parts['first_result_s']:.2f} s)")

    print()
    print(f"load average {os.getloadavg()[0]:.2f} at end; whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
