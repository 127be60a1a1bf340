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

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _harness as h
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, torch

import opendml as dml
from opendml.ops.arg_min_max import ArgMaxOperatorDesc

TARGETS = {"LOG_SUM_EXP": 2.5}  # ratio over the floor opendml should stay within; 1.5 for every other function
DEFAULT_TARGET = 1.5


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    function: str  # a dml.ReduceFunction name
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    dtype: type[np.generic] = np.float32
    direction: str = "INCREASING"  # ARGMAX only: DECREASING runs DML_OPERATOR_ARGMAX (ties to the last index)

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
        if self.decreasing:  # quarters: most rows hold their maximum more than once, so the direction matters
            data = np.round(data * np.float32(4)) / np.float32(4)
        return np.ascontiguousarray(data.astype(self.dtype, copy=False))

    @property
    def decreasing(self) -> bool:
        return self.direction == "DECREASING"


WORKLOADS = (
    Workload("SUM   [4096,4096] axis 1", "SUM", (4096, 4096), (1,)),
    Workload("SUM   [4096,4096] axis 0", "SUM", (4096, 4096), (0,)),
    Workload("SUM   [64,256,1024] axes 0,2", "SUM", (64, 256, 1024), (0, 2)),
    Workload("ARGMAX [4096,4096] axis 1", "ARGMAX", (4096, 4096), (1,)),
    Workload("ARGMAX DECREASING [4096,4096] axis 1", "ARGMAX", (4096, 4096), (1,), direction="DECREASING"),
    Workload("L2    [4096,4096] axis 1", "L2", (4096, 4096), (1,)),
    Workload("LSE   [4096,4096] axis 1", "LOG_SUM_EXP", (4096, 4096), (1,)),
    Workload("PROD  [4096,4096] axis 1", "MULTIPLY", (4096, 4096), (1,)),
    Workload("MAX   [256,256,256] all axes", "MAX", (256, 256, 256), (0, 1, 2)),
    Workload("SUM   f16 [4096,4096] axis 1", "SUM", (4096, 4096), (1,), np.float16),
)


def reference(work: Workload, x: Array) -> Array:
    """The float64 answer (for ARGMAX: the row maxima, which the values at the returned indices must equal; with
    DECREASING the index of each row's last maximum itself)."""
    x64 = x.astype(np.float64)
    axes = work.axes
    if work.decreasing:
        return np.asarray(x.shape[-1] - 1 - np.argmax(x[..., ::-1], axis=-1, keepdims=True))
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

_DML_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16", np.dtype(np.uint32): "UINT32"}


def make_opendml(device: dml.Device, work: Workload, x: Array) -> Runner:
    out_dtype = np.dtype(np.uint32) if work.function == "ARGMAX" else x.dtype
    out = np.empty(work.out_shape, out_dtype)
    x_desc = dml.TensorDesc(dml.DataType[_DML_TYPES[x.dtype]], work.shape)
    y_desc = dml.TensorDesc(dml.DataType[_DML_TYPES[out_dtype]], work.out_shape)
    desc: dml.OperatorDesc = dml.ReduceOperatorDesc(dml.ReduceFunction[work.function], x_desc, y_desc, axes=work.axes)
    if work.decreasing:
        desc = ArgMaxOperatorDesc(x_desc, y_desc, work.axes, axis_direction="DECREASING")
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), [out])


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

        return Runner(NUMPY, run_f16, [half], note="np.sum(dtype=float32) then cast to float16")
    out: Array = np.empty(shape, x.dtype)
    if fn == "SUM":
        return Runner(NUMPY, lambda: np.sum(x, axis=axes, keepdims=True, out=out), [out])
    if fn == "MAX":
        return Runner(NUMPY, lambda: np.max(x, axis=axes, keepdims=True, out=out), [out])
    if fn == "MULTIPLY":
        return Runner(NUMPY, lambda: np.prod(x, axis=axes, keepdims=True, out=out), [out])
    if fn == "ARGMAX" and last:
        index: np.ndarray[Any, np.dtype[np.int64]] = np.empty(shape, np.int64)
        if work.decreasing:
            reversed_rows, top = x[..., ::-1], x.shape[-1] - 1

            def run_last() -> None:
                np.argmax(reversed_rows, axis=-1, keepdims=True, out=index)
                np.subtract(top, index, out=index)

            return Runner(NUMPY, run_last, [index], note="np.argmax of the reversed view, then n - 1 - index")
        return Runner(NUMPY, lambda: np.argmax(x, axis=-1, keepdims=True, out=index), [index])
    if fn == "L2" and last and x.ndim == 2:
        column = out[:, 0]

        def run_l2() -> None:
            np.einsum("ij,ij->i", x, x, out=column)
            np.sqrt(out, out=out)

        return Runner(NUMPY, run_l2, [out], note="einsum('ij,ij->i') then sqrt")
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

        return Runner(NUMPY, run_lse, [out], note="max, subtract, exp, sum, log, add (preallocated scratch)")
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
    elif fn == "ARGMAX" and work.decreasing:
        top = x.shape[dims[0]] - 1
        note = "torch.flip (a copy: no negative strides in PyTorch), argmax, then n - 1 - index"

        def call() -> None:
            torch.argmax(torch.flip(xt, dims), dim=dims[0], keepdim=True, out=ot)
            ot.neg_().add_(top)
    elif fn == "ARGMAX":
        call = lambda: torch.argmax(xt, dim=dims[0], keepdim=True, out=ot)  # noqa: E731
    elif fn == "L2":
        call = lambda: torch.linalg.vector_norm(xt, 2, dim=dims, keepdim=True, out=ot)  # noqa: E731
    elif fn == "LOG_SUM_EXP":
        call = lambda: torch.logsumexp(xt, dim=dims, keepdim=True, out=ot)  # noqa: E731
    else:
        raise ValueError(fn)
    return Runner(name, call, [out], before=h.torch_threads(threads), note=note)


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
        node = helper.make_node(op, ["x"], ["y"], axis=work.axes[0], keepdims=1,
                                select_last_index=int(work.decreasing))
    else:
        initializers.append(helper.make_tensor("axes", tensor_proto.INT64, [len(work.axes)], list(work.axes)))
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
    graph = helper.make_graph([node], "reduce", [x_info], [y_info], initializer=initializers)
    return h.ort_runner(graph, 18, 8, {"x": x}, {"y": out})


# -- checks -----------------------------------------------------------------------------------------------------

def check(work: Workload, x: Array, ref: Array, result: Array) -> tuple[bool, float]:
    """Whether a result matches (loose tolerance), and its largest absolute error against the float64 answer."""
    if result.shape != ref.shape:
        return False, float("inf")
    if work.decreasing:
        return bool(np.array_equal(result.astype(np.int64), ref)), 0.0
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
    if work.decreasing:  # the last maximum: one right index
        return bool(np.array_equal(mine.astype(np.int64), theirs.astype(np.int64)))
    if work.function == "ARGMAX":
        a = np.take_along_axis(x, mine.astype(np.int64), axis=-1)
        b = np.take_along_axis(x, np.clip(theirs.astype(np.int64), 0, x.shape[-1] - 1), axis=-1)
        return bool(np.array_equal(a, b))
    return h.agrees_loosely(mine, theirs)


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    x = work.make_input(rng)
    ref = reference(work, x)

    def check_one(runner: Runner, mine: Runner, errors: dict[str, float]) -> str | None:
        """opendml against the float64 reference, each peer against opendml."""
        ok, errors[runner.name] = check(work, x, ref, runner.result())
        if runner.name == OPENDML:
            return None if ok else f"opendml differs from the float64 reference (max abs error {errors[OPENDML]:.3g})"
        if agrees(work, x, mine.result(), runner.result()):
            return None
        return (f"{runner.name} differs from opendml (its max abs error vs float64 {errors[runner.name]:.3g}, "
                f"opendml's {errors[OPENDML]:.3g})")

    return h.measure(label=work.label, target=work.target, repeat=repeat, opendml=lambda: make_opendml(device, work, x),
                   floor=lambda: h.copy_floor(x), with_numpy=lambda: make_numpy(work, x),
                   with_torch=lambda threads, name: make_torch(work, x, threads, name),
                   with_ort=lambda: make_ort(work, x), check=check_one)


# -- dispatch overhead and startup ------------------------------------------------------------------------------

def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    out = np.empty((16, 1), np.float32)
    x_desc = dml.TensorDesc(dml.DataType.FLOAT32, (16, 16))
    y_desc = dml.TensorDesc(dml.DataType.FLOAT32, (16, 1))
    desc = dml.ReduceOperatorDesc(dml.ReduceFunction.SUM, x_desc, y_desc, axes=(1,))
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    results = {
        "opendml execute, reused Bindings": h.per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": h.per_call_us(
            lambda: compiled.execute([dml.Binding(x)], [dml.Binding(out)]), count),
        "NumPy np.sum(out=)": h.per_call_us(lambda: np.sum(x, axis=1, keepdims=True, out=out), count),
    }
    if not np.allclose(out[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5):
        raise AssertionError("the 16x16 SUM gave a wrong result")
    if torch is not None:
        xt, ot = torch.from_numpy(x), torch.from_numpy(out)
        results["PyTorch torch.sum(out=)"] = h.per_call_us(lambda: torch.sum(xt, dim=1, keepdim=True, out=ot), count)
    return results


# The startup child: from its inputs to its first result, then the check of that result.
STARTUP_RUN = """
    x = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) / 65536
    out = np.empty((256, 1), np.float32)
    device = dml.Device()
    desc = dml.ReduceOperatorDesc(dml.ReduceFunction.SUM, dml.TensorDesc(dml.DataType.FLOAT32, [256, 256]),
                                  dml.TensorDesc(dml.DataType.FLOAT32, [256, 1]), axes=[1])
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x)], [dml.Binding(out)])
"""
STARTUP_CHECK = "assert abs(float(out[0, 0]) - float(x[0].astype(np.float64).sum())) < 1e-3"

SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20240501, full_repeat=35,
    quick_help="fewer repeats (under a minute)",
    targets_title="Targets (opendml within 1.5x of the floor, 2.5x for LOG_SUM_EXP, and not slower than the fastest "
                  "peer):",
    opendml_threads=f"numba kernels; numba.get_num_threads() = {h.numba_threads()} (used only where a kernel is "
                    f"parallel)",
    numpy_threads="1 thread (NumPy reductions do not thread)", ort_model="one-node opset-18 model",
    checks_title="Checks (each result once, written into a NaN-poisoned preallocated buffer; max abs error vs "
                 "float64):",
    dispatch_title="Dispatch overhead (SUM over the last axis of a [16,16] float32 tensor; median of {count} calls):",
    dispatch=dispatch_overhead, dispatch_width=34, best_table=True, only_option=True,
    startup_of="a [256,256] SUM",
    startup_run=STARTUP_RUN, startup_check=STARTUP_CHECK,
    startup_steps="then Device() with its numba backend, compile, first execute",
)


if __name__ == "__main__":
    sys.exit(h.run_suite(SUITE))
