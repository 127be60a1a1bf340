#!/usr/bin/env python
"""MEAN_VARIANCE_NORMALIZATION1 benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a
memory-copy floor.

    python bench/bench_mvn.py            # full run (a few minutes on 2 cores)
    python bench/bench_mvn.py --quick    # fewer repeats
    python bench/bench_mvn.py --repeat 31 --no-startup

Workloads: layer-norm shape ([8192, 1024] over axis 1, Scale/Bias [1, 1024]) and instance-norm shape
([32, 64, 56, 56] over axes {2, 3}, Scale/Bias [1, 64, 1, 1]), each plain, with a fused RELU and with a fused
GELU; float32, and one float16 layer norm; and issue 14's MEAN_VARIANCE_NORMALIZATION (version 0) with CrossChannel
FALSE on the instance-norm shape, which runs MVN1's kernel over axes {2, 3}.

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

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import _harness as h
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, torch

import opendml as dml
from opendml.ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc

TARGET = 1.5          # opendml's ratio over the floor should stay within this
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
    version: int = 1                  # 1: MVN1 over `axes`; 0: MVN with CrossChannel (axes {1,2,3}) or not ({2,3})

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
    Workload("MVN v0 IN [32,64,56,56] CrossChannel FALSE", IN, (2, 3), IN_SIDE, None, version=0),
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

_DML_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}
_ACTIVATIONS: dict[str | None, Callable[[], dml.OperatorDesc] | None] = {
    None: None, "RELU": dml.ActivationReluOperatorDesc, "GELU": dml.ActivationGeluOperatorDesc}


def make_opendml(device: dml.Device, work: Workload, x: Array, scale: Array, bias: Array) -> Runner:
    out = np.empty_like(x)
    data_type = dml.DataType[_DML_TYPES[x.dtype]]
    x_desc = dml.TensorDesc(data_type, work.shape)
    side_desc = dml.TensorDesc(data_type, work.side_shape)
    build = _ACTIVATIONS[work.activation]
    activation = None if build is None else build()
    desc: dml.OperatorDesc
    if work.version == 0:
        assert work.axes in ((2, 3), (1, 2, 3))
        desc = MeanVarianceNormalizationOperatorDesc(x_desc, side_desc, side_desc, x_desc, work.axes == (1, 2, 3),
                                                     True, EPSILON, activation)
    else:
        desc = dml.MeanVarianceNormalization1OperatorDesc(x_desc, side_desc, side_desc, x_desc, work.axes, True,
                                                          EPSILON, activation)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(scale), dml.Binding(bias)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), [out])


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

    return Runner(NUMPY, run, [out], note="mean, subtract, square, mean, rsqrt, multiply, add (preallocated scratch)")


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

    kind = "layer_norm" if work.is_layer_norm else "instance_norm"
    note = f"{kind} allocates its output (no out= form); the activation runs in place on it"
    return Runner(name, run, [], before=h.torch_threads(threads), note=note,
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
    return h.ort_runner(graph, 20, 9, {"x": x}, {"y": out})


# -- checks -----------------------------------------------------------------------------------------------------

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


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    x, scale, bias = work.make_inputs(rng)
    ref = reference(work, x, scale, bias)

    def check_one(runner: Runner, mine: Runner, errors: dict[str, float]) -> str | None:
        """opendml against the float64 reference, each peer against opendml."""
        if runner.name == OPENDML:
            ok, errors[OPENDML] = check(work, ref, runner.result())
            return None if ok else f"opendml differs from the float64 reference (max abs error {errors[OPENDML]:.3g})"
        errors[runner.name] = max_error(ref, runner.result())
        if h.agrees_loosely(mine.result(), runner.result()):
            return None
        return (f"{runner.name} differs from opendml (its max abs error vs float64 {errors[runner.name]:.3g}, "
                f"opendml's {errors[OPENDML]:.3g})")

    return h.measure(label=work.label, target=TARGET, repeat=repeat,
                   opendml=lambda: make_opendml(device, work, x, scale, bias), floor=lambda: h.copy_floor(x),
                   with_numpy=lambda: make_numpy(work, x, scale, bias),
                   with_torch=lambda threads, name: make_torch(work, x, scale, bias, threads, name),
                   with_ort=lambda: make_ort(work, x, scale, bias), check=check_one)


# -- dispatch overhead and startup ------------------------------------------------------------------------------

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
        "opendml execute, reused Bindings": h.per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": h.per_call_us(
            lambda: compiled.execute([dml.Binding(x), None, None], [dml.Binding(out)]), count),
        "NumPy (mean, var, subtract, divide, maximum)": h.per_call_us(numpy_mvn, count),
    }
    if torch is not None:
        xt = torch.from_numpy(x)
        results["PyTorch instance_norm + relu_"] = h.per_call_us(
            lambda: torch.relu_(torch.nn.functional.instance_norm(xt, eps=EPSILON)), count)
    return results


# The startup child, from its inputs to its first result.
STARTUP_RUN = """
    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256) / 4096
    out = np.empty_like(x)
    device = dml.Device()
    t = dml.TensorDesc(dml.DataType.FLOAT32, [64, 256])
    desc = dml.MeanVarianceNormalization1OperatorDesc(t, None, None, t, [1], True, 1e-5)
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x), None, None], [dml.Binding(out)])
"""

SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20240501, full_repeat=25, quick_help="fewer repeats",
    only_option=True, targets_title=f"Targets (opendml within {TARGET}x of the floor and not slower than the fastest "
                                    f"peer):",
    best_table=True, opendml_threads=f"numba kernels; numba.get_num_threads() = {h.numba_threads()} (large tensors "
                                     f"use them all)",
    ort_model="opset-20 model",
    checks_title="Checks (each result once; preallocated outputs NaN-poisoned first; max abs error vs float64):",
    dispatch_title="Dispatch overhead (MVN over axes 2,3 of a [1,4,4,4] float32 tensor + RELU; median of {count} "
                   "calls):",
    dispatch=dispatch_overhead, dispatch_width=44,
    startup_of="a [64,256] MVN",
    startup_run=STARTUP_RUN, startup_check="assert abs(float(out[0].astype(np.float64).mean())) < 1e-4",
)


if __name__ == "__main__":
    sys.exit(h.run_suite(SUITE))
