#!/usr/bin/env python
"""MEAN_VARIANCE_NORMALIZATION1 benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a
memory-copy floor.

    python bench/bench_mvn.py            # full run (a few minutes on 2 cores)
    python bench/bench_mvn.py --quick    # fewer repeats
    python bench/bench_mvn.py --repeat 31 --no-startup

Workloads: layer-norm shape ([8192, 1024] over axis 1, Scale/Bias [1, 1024]) and instance-norm shape
([32, 64, 56, 56] over axes {2, 3}, Scale/Bias [1, 64, 1, 1]), each plain, with a fused RELU and with a fused
GELU; float32, and one float16 layer norm.

Every implementation writes into a caller-provided, preallocated output wherever it allows one (opendml: reused
dml.Bindings; NumPy: out= and preallocated scratch; ONNX Runtime: io_binding to preallocated OrtValues). PyTorch's
layer_norm / instance_norm have no out= form: they allocate their result, and the activation then runs in place
on it. Within a workload the implementations are timed interleaved (floor, opendml, NumPy, ... then again), so
drift hits all of them alike; the table shows each one's MEDIAN time divided by the floor's, the floor being an
np.copyto of the input into a same-size preallocated array (input read once, output written once).

The peers (torch, onnx, onnxruntime: the `bench` extras) are optional; a missing one is shown as "-". Each
result is checked once: opendml against a float64 reference, each peer against opendml.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
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

TARGET = 1.5          # opendml's ratio over the floor should stay within this
DISPATCH_TARGET_US = 15.0
EPSILON = 1e-5


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    side_shape: tuple[int, ...]       # Scale and Bias
    activation: str | None            # None, "RELU" or "GELU"
    dtype: type[np.generic] = np.float32

    @property
    def is_layer_norm(self) -> bool:
        return self.axes == (len(self.shape) - 1,)

    def make_inputs(self, rng: np.random.Generator) -> tuple[Array, Array, Array]:
        x = (rng.standard_normal(self.shape, dtype=np.float32) * 2 + 0.5).astype(self.dtype)
        scale = (rng.standard_normal(self.side_shape, dtype=np.float32) * 0.5 + 1).astype(self.dtype)
        bias = (rng.standard_normal(self.side_shape, dtype=np.float32) * 0.1).astype(self.dtype)
        return np.ascontiguousarray(x), np.ascontiguousarray(scale), np.ascontiguousarray(bias)


LN, LN_SIDE = (8192, 1024), (1, 1024)
IN, IN_SIDE = (32, 64, 56, 56), (1, 64, 1, 1)
WORKLOADS = (
    Workload("LN [8192,1024] axis 1", LN, (1,), LN_SIDE, None),
    Workload("LN [8192,1024] axis 1 + RELU", LN, (1,), LN_SIDE, "RELU"),
    Workload("LN [8192,1024] axis 1 + GELU", LN, (1,), LN_SIDE, "GELU"),
    Workload("IN [32,64,56,56] axes 2,3", IN, (2, 3), IN_SIDE, None),
    Workload("IN [32,64,56,56] axes 2,3 + RELU", IN, (2, 3), IN_SIDE, "RELU"),
    Workload("IN [32,64,56,56] axes 2,3 + GELU", IN, (2, 3), IN_SIDE, "GELU"),
    Workload("LN f16 [8192,1024] axis 1", LN, (1,), LN_SIDE, None, np.float16),
)

_ERF = np.frompyfunc(math.erf, 1, 1)


def reference(work: Workload, x: Array, scale: Array, bias: Array) -> Array:
    """The float64 answer: population variance, Epsilon inside the square root, then the activation."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=work.axes, keepdims=True)
    variance = np.square(x64 - mean).mean(axis=work.axes, keepdims=True)
    y = (x64 - mean) / np.sqrt(variance + float(np.float32(EPSILON))) * scale.astype(np.float64) + bias.astype(
        np.float64)
    if work.activation == "RELU":
        return np.asarray(np.maximum(y, 0.0))
    if work.activation == "GELU":
        return np.asarray(0.5 * y * (1.0 + _ERF(y / math.sqrt(2.0)).astype(np.float64)))
    return np.asarray(y)


# -- implementations ------------------------------------------------------------------------------------------

def _nothing() -> None:
    return None


@dataclass
class Runner:
    """One implementation of one workload: `run` computes; `result` returns what it computed (by default the
    preallocated `out`); `before` runs untimed."""

    name: str
    run: Callable[[], object]
    out: Array
    before: Callable[[], None] = _nothing
    note: str = ""
    result_of: Callable[[], Array] | None = None
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)

    def result(self) -> Array:
        return self.out if self.result_of is None else self.result_of()


def make_floor(x: Array) -> Runner:
    target = np.empty_like(x)
    return Runner(FLOOR, lambda: np.copyto(target, x), target)


_DML_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}
_ACTIVATIONS: dict[str | None, Callable[[], dml.OperatorDesc] | None] = {
    None: None, "RELU": dml.ActivationReluOperatorDesc, "GELU": dml.ActivationGeluOperatorDesc}


def make_opendml(device: dml.Device, work: Workload, x: Array, scale: Array, bias: Array) -> Runner:
    out = np.empty_like(x)
    data_type = dml.DataType[_DML_TYPES[x.dtype]]
    x_desc = dml.TensorDesc(data_type, work.shape)
    side_desc = dml.TensorDesc(data_type, work.side_shape)
    build = _ACTIVATIONS[work.activation]
    desc = dml.MeanVarianceNormalization1OperatorDesc(x_desc, side_desc, side_desc, x_desc, work.axes, True, EPSILON,
                                                      None if build is None else build())
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(scale), dml.Binding(bias)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), out)


def make_numpy(work: Workload, x: Array, scale: Array, bias: Array) -> Runner:
    """Idiomatic NumPy with preallocated scratch: mean, subtract, square, mean, rsqrt, multiply, add (and the
    activation); float16 data are computed in float32 and cast back."""
    if work.activation == "GELU":
        raise ValueError("NumPy has no vectorized erf")
    axes = work.axes
    wide = np.float32
    stats_shape = tuple(1 if axis in axes else size for axis, size in enumerate(work.shape))
    mean, variance = np.empty(stats_shape, wide), np.empty(stats_shape, wide)
    deviation, scratch = np.empty(work.shape, wide), np.empty(work.shape, wide)
    out = np.empty_like(x)
    scale32, bias32 = scale.astype(wide), bias.astype(wide)
    half = x.dtype == np.float16

    def run() -> None:
        source = x
        if half:
            np.copyto(scratch, x)
            source = scratch
        np.mean(source, axis=axes, keepdims=True, out=mean)
        np.subtract(source, mean, out=deviation)
        np.multiply(deviation, deviation, out=scratch)
        np.mean(scratch, axis=axes, keepdims=True, out=variance)
        np.add(variance, np.float32(EPSILON), out=variance)
        np.sqrt(variance, out=variance)
        np.divide(np.float32(1.0), variance, out=variance)
        np.multiply(deviation, variance, out=deviation)
        np.multiply(deviation, scale32, out=deviation)
        target = deviation if half else out
        np.add(deviation, bias32, out=target)
        if work.activation == "RELU":
            np.maximum(target, np.float32(0), out=target)
        if half:
            np.copyto(out, deviation, casting="same_kind")

    return Runner(NUMPY, run, out, note="mean, subtract, square, mean, rsqrt, multiply, add (preallocated scratch)")


def make_torch(work: Workload, x: Array, scale: Array, bias: Array, threads: int, name: str) -> Runner:
    xt = torch.from_numpy(x)
    holder: dict[str, Any] = {}
    if work.is_layer_norm:
        weight, shift = torch.from_numpy(scale.reshape(-1)), torch.from_numpy(bias.reshape(-1))
        normalized = (work.shape[-1],)

        def norm() -> Any:
            return torch.nn.functional.layer_norm(xt, normalized, weight, shift, EPSILON)
    else:
        weight, shift = torch.from_numpy(scale.reshape(-1)), torch.from_numpy(bias.reshape(-1))

        def norm() -> Any:
            return torch.nn.functional.instance_norm(xt, weight=weight, bias=shift, eps=EPSILON)

    if work.activation == "RELU":
        def run() -> None:
            holder["y"] = torch.relu_(norm())
    elif work.activation == "GELU":
        def run() -> None:
            holder["y"] = torch._C._nn.gelu_(norm())
    else:
        def run() -> None:
            holder["y"] = norm()

    def before() -> None:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    kind = "layer_norm" if work.is_layer_norm else "instance_norm"
    note = f"{kind} allocates its output (no out= form); the activation runs in place on it"
    return Runner(name, run, np.empty(0, x.dtype), before=before, note=note,
                  result_of=lambda: np.asarray(holder["y"].numpy()))


def make_ort(work: Workload, x: Array, scale: Array, bias: Array) -> Runner:
    """LayerNormalization (axis -1) or InstanceNormalization, then Relu or Gelu: an opset-20 model, one intra-op
    thread, no spinning, io_binding to preallocated OrtValues over the caller's arrays."""
    helper = onnx.helper
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    out = np.empty_like(x)
    channels = scale.size
    initializers = [helper.make_tensor("scale", elem, [channels], scale.reshape(-1).tolist()),
                    helper.make_tensor("bias", elem, [channels], bias.reshape(-1).tolist())]
    norm_out = "y" if work.activation is None else "normalized"
    if work.is_layer_norm:
        nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], [norm_out], axis=-1,
                                  epsilon=EPSILON)]
    else:
        nodes = [helper.make_node("InstanceNormalization", ["x", "scale", "bias"], [norm_out], epsilon=EPSILON)]
    if work.activation == "RELU":
        nodes.append(helper.make_node("Relu", [norm_out], ["y"]))
    elif work.activation == "GELU":
        nodes.append(helper.make_node("Gelu", [norm_out], ["y"]))
    graph = helper.make_graph(nodes, "mvn", [helper.make_tensor_value_info("x", elem, list(work.shape))],
                              [helper.make_tensor_value_info("y", elem, list(work.shape))], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
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


def max_error(ref: Array, result: Array) -> float:
    value = result.astype(np.float64)
    if value.shape != ref.shape or not np.all(np.isfinite(value)):
        return float("inf")
    return float(np.max(np.abs(value - ref)))


def check(work: Workload, ref: Array, result: Array) -> tuple[bool, float]:
    """Whether a result matches the float64 answer (within FLOAT32, or FLOAT16, accuracy), and its max error."""
    error = max_error(ref, result)
    tolerance = 1e-2 if work.dtype == np.float16 else 1e-4
    return error <= tolerance * max(1.0, float(np.max(np.abs(ref)))), error


def agrees(mine: Array, theirs: Array) -> bool:
    if mine.shape != theirs.shape:
        return False
    a, b = mine.astype(np.float64), theirs.astype(np.float64)
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-3 * max(1.0, float(np.max(np.abs(a))))))


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
    x, scale, bias = work.make_inputs(rng)
    ref = reference(work, x, scale, bias)
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []

    start = time.perf_counter()
    mine = make_opendml(device, work, x, scale, bias)
    mine.run()
    first_call_s = time.perf_counter() - start
    runners = [make_floor(x), mine]

    def add(name: str, build: Callable[[], Runner], available: bool) -> None:
        if not available:
            missing[name] = "not installed"
            return
        try:
            runner = build()
            runner.before()
            runner.run()
        except Exception as error:  # a peer without this operator or type: shown as n/a
            missing[name] = f"n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
            return
        runners.append(runner)

    add(NUMPY, lambda: make_numpy(work, x, scale, bias), True)
    default_threads = torch.get_num_threads() if torch is not None else 0
    add(TORCH, lambda: make_torch(work, x, scale, bias, default_threads, TORCH), torch is not None)
    add(TORCH1, lambda: make_torch(work, x, scale, bias, 1, TORCH1), torch is not None)
    add(ORT, lambda: make_ort(work, x, scale, bias), ort is not None)

    # Correctness, once: preallocated outputs are NaN-poisoned first (proving the run wrote them); opendml
    # against float64, peers against opendml.
    errors: dict[str, float] = {}
    for runner in runners[1:]:
        runner.before()
        runner.out.fill(np.nan)
        runner.run()
        if runner.name == OPENDML:
            ok, errors[OPENDML] = check(work, ref, runner.result())
            if not ok:
                problems.append(f"opendml differs from the float64 reference (max abs error {errors[OPENDML]:.3g})")
        else:
            errors[runner.name] = max_error(ref, runner.result())
            if not agrees(mine.result(), runner.result()):
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
    x = np.random.default_rng(1).standard_normal((1, 4, 4, 4), dtype=np.float32)
    out = np.empty_like(x)
    desc_x = dml.TensorDesc(dml.DataType.FLOAT32, x.shape)
    desc = dml.MeanVarianceNormalization1OperatorDesc(desc_x, None, None, desc_x, (2, 3), True, EPSILON,
                                                      dml.ActivationReluOperatorDesc())
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), None, None], [dml.Binding(out)]
    mean, variance = np.empty((1, 4, 1, 1), np.float32), np.empty((1, 4, 1, 1), np.float32)

    def numpy_mvn() -> None:
        np.mean(x, axis=(2, 3), keepdims=True, out=mean)
        np.var(x, axis=(2, 3), keepdims=True, out=variance)
        np.subtract(x, mean, out=out)
        np.divide(out, np.sqrt(variance + np.float32(EPSILON)), out=out)
        np.maximum(out, np.float32(0), out=out)

    results = {
        "opendml execute, reused Bindings": per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": per_call_us(
            lambda: compiled.execute([dml.Binding(x), None, None], [dml.Binding(out)]), count),
        "NumPy (mean, var, subtract, divide, maximum)": per_call_us(numpy_mvn, count),
    }
    if torch is not None:
        xt = torch.from_numpy(x)
        results["PyTorch instance_norm + relu_"] = per_call_us(
            lambda: torch.relu_(torch.nn.functional.instance_norm(xt, eps=EPSILON)), count)
    return results


_STARTUP_CHILD = textwrap.dedent("""
    import json, time
    start = time.perf_counter()
    import numpy as np
    import opendml as dml
    imported = time.perf_counter()
    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256) / 4096
    out = np.empty_like(x)
    device = dml.Device()
    t = dml.TensorDesc(dml.DataType.FLOAT32, [64, 256])
    desc = dml.MeanVarianceNormalization1OperatorDesc(t, None, None, t, [1], True, 1e-5)
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x), None, None], [dml.Binding(out)])
    done = time.perf_counter()
    assert abs(float(out[0].astype(np.float64).mean())) < 1e-4
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
    floor_ok = mine <= TARGET
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
    return ("OK    " if floor_ok and peer_ok else "MISS  ") + text


def thread_summary(outcomes: list[Outcome]) -> list[str]:
    lines = []
    numba_threads = numba.get_num_threads() if numba is not None else "n/a"
    declared = {
        FLOOR: "np.copyto, 1 thread",
        OPENDML: f"numba kernels; numba.get_num_threads() = {numba_threads} (large tensors use them all)",
        NUMPY: "1 thread",
        TORCH: f"torch.get_num_threads() = {torch.get_num_threads()} (default)" if torch is not None else "-",
        TORCH1: "torch.set_num_threads(1)" if torch is not None else "-",
        ORT: ("opset-20 model, io_binding to preallocated OrtValues; intra_op_num_threads = 1, inter_op = 1, "
              "spinning off") if ort is not None else "-",
    }
    for name in (FLOOR, *COLUMNS):
        shares = [outcome.cpu_per_wall[name] for outcome in outcomes if name in outcome.cpu_per_wall]
        measured = (f"process CPU/wall in timed calls median {statistics.median(shares):.2f}, max {max(shares):.2f}"
                    if shares else "not run")
        lines.append(f"  {name:<13} {declared[name]}; {measured}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload")
    parser.add_argument("--no-startup", action="store_true", help="skip the fresh-interpreter startup timing")
    parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text")
    args = parser.parse_args()
    repeat = args.repeat if args.repeat is not None else (5 if args.quick else 25)
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    dispatch_count = 3000 if args.quick else 20000
    workloads = [work for work in WORKLOADS if args.only is None or args.only in work.label]

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
    for work in workloads:
        outcomes.append(bench_workload(device, work, repeat, rng))
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)

    print()
    print_table(outcomes)
    print()
    print(f"Targets (opendml within {TARGET}x of the floor and not slower than the fastest peer):")
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
    print("Checks (each result once; preallocated outputs NaN-poisoned first; max abs error vs float64):")
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
    print(f"Dispatch overhead (MVN over axes 2,3 of a [1,4,4,4] float32 tensor + RELU; median of {dispatch_count} "
          f"calls):")
    for name, micros in dispatch_overhead(device, dispatch_count).items():
        mark = ""
        if name == "opendml execute, reused Bindings":
            mark = f"  (target < {DISPATCH_TARGET_US:.0f} us: {'MET' if micros < DISPATCH_TARGET_US else 'MISSED'})"
        print(f"  {name:<44} {micros:8.2f} us{mark}")

    if not args.no_startup:
        print()
        print("Startup (fresh `python -c` to the first result of a [64,256] MVN; wall time measured by the parent):")
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
