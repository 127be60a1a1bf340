#!/usr/bin/env python
"""Standalone activation benchmark (GELU, SIGMOID, TANH): opendml against NumPy, PyTorch and ONNX Runtime, as ratios
over a memory-copy floor.

    python bench/bench_activations.py            # full run (about 20 s on 2 cores; under 1 GiB of memory)
    python bench/bench_activations.py --quick    # fewer repeats
    python bench/bench_activations.py --only GELU

Workloads: each activation on a 64 MiB FLOAT32 tensor ([4096, 4096], packed), standalone
(DML_ACTIVATION_*_OPERATOR_DESC with InputTensor and OutputTensor), out of place into a preallocated output.

Every implementation writes into a caller-provided, preallocated output: reused dml.Bindings in opendml; out= (and
preallocated scratch) in NumPy; out= in PyTorch; an io_binding to preallocated OrtValues in ONNX Runtime (one-node
opset-20 models: Gelu, Sigmoid, Tanh). NumPy has no erf (SciPy is not a dependency): its GELU is x Phi(x) with
Abramowitz and Stegun's erf 7.1.26 (absolute error below 1.5e-7) written in NumPy ufuncs. Within a workload the
implementations are timed interleaved (floor, opendml, NumPy, ... then again), so drift hits all of them alike; the
table shows each one's MEDIAN time divided by the floor's, the floor being an np.copyto of the input into a
same-size preallocated array (input read once, output written once: exactly an elementwise operator's traffic).

The peers (torch, onnx, onnxruntime: the `bench` extras) are optional; a missing one is shown as "-". Each result
is checked once: opendml against a float64 reference on 200,000 elements drawn at random (the whole tensor for
SIGMOID and TANH), each peer against opendml.
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

TARGET = 1.2          # opendml's ratio over the floor should stay within this (issue 14)
SHAPE = (4096, 4096)  # 64 MiB of FLOAT32
SAMPLE = 200_000


@dataclass(frozen=True)
class Workload:
    label: str
    name: str  # GELU, SIGMOID or TANH


WORKLOADS = (
    Workload("GELU [4096,4096] f32 (64 MiB)", "GELU"),
    Workload("SIGMOID [4096,4096] f32 (64 MiB)", "SIGMOID"),
    Workload("TANH [4096,4096] f32 (64 MiB)", "TANH"),
)

_CLASSES: dict[str, Callable[..., dml.OperatorDesc]] = {
    "GELU": dml.ActivationGeluOperatorDesc, "SIGMOID": dml.ActivationSigmoidOperatorDesc,
    "TANH": dml.ActivationTanhOperatorDesc}


def reference(name: str, x: Array) -> Array:
    """The float64 answer."""
    x64 = x.astype(np.float64)
    if name == "SIGMOID":
        return np.asarray(1.0 / (1.0 + np.exp(-x64)))
    if name == "TANH":
        return np.asarray(np.tanh(x64))
    erf = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)).astype(np.float64)))


# -- implementations ------------------------------------------------------------------------------------------

def make_opendml(device: dml.Device, work: Workload, x: Array) -> Runner:
    out = np.empty_like(x)
    tensor = dml.TensorDesc(dml.DataType.FLOAT32, x.shape)
    desc = _CLASSES[work.name](input_tensor=tensor, output_tensor=tensor)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), [out])


# Abramowitz and Stegun 7.1.26: erf(z) = 1 - (a1 t + ... + a5 t^5) e^-z^2, t = 1 / (1 + p z), z >= 0.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def make_numpy(work: Workload, x: Array) -> Runner:
    out = np.empty_like(x)
    one, half = np.float32(1.0), np.float32(0.5)
    if work.name == "TANH":
        return Runner(NUMPY, lambda: np.tanh(x, out=out), [out], note="np.tanh(out=)")
    if work.name == "SIGMOID":
        def sigmoid() -> None:
            np.negative(x, out=out)
            np.exp(out, out=out)
            np.add(out, one, out=out)
            np.divide(one, out, out=out)

        return Runner(NUMPY, sigmoid, [out], note="1 / (1 + exp(-x)) in place in the output")
    z, t, poly = (np.empty_like(x) for _ in range(3))
    a1, a2, a3, a4, a5 = (np.float32(a) for a in _AS_A)

    def gelu() -> None:
        np.abs(x, out=z)
        np.multiply(z, np.float32(1.0 / math.sqrt(2.0)), out=z)           # |x| / sqrt 2
        np.multiply(z, np.float32(_AS_P), out=t)
        np.add(t, one, out=t)
        np.divide(one, t, out=t)                                          # t = 1 / (1 + p z)
        np.multiply(t, a5, out=poly)
        for a in (a4, a3, a2, a1):
            np.add(poly, a, out=poly)
            np.multiply(poly, t, out=poly)
        np.multiply(z, z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        np.multiply(poly, z, out=poly)                                    # erfc(|x| / sqrt 2)
        np.subtract(one, poly, out=poly)                                  # erf(|x| / sqrt 2)
        np.copysign(poly, x, out=poly)                                    # erf(x / sqrt 2)
        np.add(poly, one, out=poly)
        np.multiply(poly, x, out=poly)
        np.multiply(poly, half, out=out)

    return Runner(NUMPY, gelu, [out], note="x Phi(x), erf by Abramowitz and Stegun 7.1.26 (preallocated scratch)")


def make_torch(work: Workload, x: Array, threads: int, name: str) -> Runner:
    xt = torch.from_numpy(x)
    out = np.empty_like(x)
    yt = torch.from_numpy(out)
    if work.name == "TANH":
        def run() -> Any:
            return torch.tanh(xt, out=yt)
    elif work.name == "SIGMOID":
        def run() -> Any:
            return torch.sigmoid(xt, out=yt)
    else:
        def run() -> Any:
            return torch._C._nn.gelu(xt, out=yt)   # torch.nn.functional.gelu, with out=
    return Runner(name, run, [out], before=h.torch_threads(threads))


def make_ort(work: Workload, x: Array) -> Runner:
    helper = onnx.helper
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    out = np.empty_like(x)
    op = {"GELU": "Gelu", "SIGMOID": "Sigmoid", "TANH": "Tanh"}[work.name]
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], work.name.lower(),
                              [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, list(x.shape))])
    return h.ort_runner(graph, 20, 9, {"x": x}, {"y": out})


# -- checks -----------------------------------------------------------------------------------------------------

def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    x = (rng.standard_normal(SHAPE, dtype=np.float32) * 3).astype(np.float32)
    flat = x.reshape(-1)
    picks = (np.arange(flat.size) if work.name != "GELU"
             else np.unique(rng.integers(0, flat.size, SAMPLE)))
    ref = reference(work.name, flat[picks])

    def max_error(result: Array) -> float:
        value = result.reshape(-1)[picks].astype(np.float64)
        return float(np.max(np.abs(value - ref))) if np.all(np.isfinite(value)) else math.inf

    def check_one(runner: Runner, mine: Runner, errors: dict[str, float]) -> str | None:
        """opendml against the float64 reference (4 FLOAT32 ulps of 1 at most), each peer against opendml."""
        errors[runner.name] = max_error(runner.result())
        if runner.name == OPENDML:
            ok = errors[OPENDML] <= 2.5e-7 * max(1.0, float(np.max(np.abs(ref))))
            return None if ok else f"opendml differs from the float64 reference (max abs error {errors[OPENDML]:.3g})"
        if h.agrees_loosely(mine.result(), runner.result()):
            return None
        return (f"{runner.name} differs from opendml (its max abs error vs float64 {errors[runner.name]:.3g}, "
                f"opendml's {errors[OPENDML]:.3g})")

    return h.measure(label=work.label, target=TARGET, repeat=repeat, opendml=lambda: make_opendml(device, work, x),
                     floor=lambda: h.copy_floor(x), with_numpy=lambda: make_numpy(work, x),
                     with_torch=lambda threads, name: make_torch(work, x, threads, name),
                     with_ort=lambda: make_ort(work, x), check=check_one)


# -- dispatch overhead ----------------------------------------------------------------------------------------------

def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    out = np.empty_like(x)
    tensor = dml.TensorDesc(dml.DataType.FLOAT32, [4, 8])
    compiled = device.compile_operator(device.create_operator(dml.ActivationSigmoidOperatorDesc(
        input_tensor=tensor, output_tensor=tensor)))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    one = np.float32(1.0)

    def numpy_sigmoid() -> None:
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(out, one, out=out)
        np.divide(one, out, out=out)

    results = {
        "opendml execute, reused Bindings": h.per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": h.per_call_us(
            lambda: compiled.execute([dml.Binding(x)], [dml.Binding(out)]), count),
        "NumPy 1 / (1 + exp(-x)), out=": h.per_call_us(numpy_sigmoid, count),
    }
    if torch is not None:
        xt, yt = torch.from_numpy(x), torch.from_numpy(out)
        results["PyTorch torch.sigmoid(out=)"] = h.per_call_us(lambda: torch.sigmoid(xt, out=yt), count)
    return results


SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20240514, full_repeat=25, quick_help="fewer repeats",
    only_option=True, count_met=True,
    targets_title=f"Targets (opendml within {TARGET}x of the floor and faster than the fastest peer):",
    best_table=True, opendml_threads=f"numba kernels; numba.get_num_threads() = {h.numba_threads()} (large tensors "
                                     f"use them all; non-temporal stores for outputs of 4 MiB and more)",
    ort_model="one-node opset-20 model",
    checks_title="Checks (each result once; preallocated outputs NaN-poisoned first; max abs error vs float64):",
    dispatch_title="Dispatch overhead (SIGMOID of a [4,8] float32 tensor; median of {count} calls):",
    dispatch=dispatch_overhead, dispatch_width=40,
)


if __name__ == "__main__":
    sys.exit(h.run_suite(SUITE))
