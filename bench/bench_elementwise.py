#!/usr/bin/env python
"""Element-wise benchmark (issue 26): opendml's ELEMENT_WISE_* engine against NumPy, PyTorch and ONNX Runtime, as
ratios over a memory-copy floor that moves the same bytes (--backend gpu: the gpu backend, as bench_gpu.py times it).

    python bench/bench_elementwise.py              # full run (about 2 minutes on 2 cores; under 2 GiB of memory)
    python bench/bench_elementwise.py --quick      # 5 rounds per workload
    python bench/bench_elementwise.py --only CLIP1 --repeat 31
    python bench/bench_elementwise.py --backend gpu --smoke   # the gpu backend at 1/64 size, 3 rounds (lavapipe)

Workloads (64 MiB per full-size tensor): ADD and MULTIPLY of two FLOAT32 [4096, 4096] tensors; ADD of a [4096]
row broadcast by zero strides (BTensor Strides [0, 1]); MULTIPLY of two FLOAT16 [8192, 4096]; EXP, ERF, POW (a
tensor of exponents) and ROUND (halves to nearest even) of FLOAT32 [4096, 4096]; CLIP1 to [-5, 5] of INT8
[16384, 4096] (Min/Max in INT8); LOGICAL_GREATER_THAN of two FLOAT32 [4096, 4096] into UINT8; QUANTIZE_LINEAR of
FLOAT32 [64, 256, 1024] into UINT8 per channel (scale and zero point of axis 1, broadcast by strides [0, 1, 0]);
IDENTITY transposing a FLOAT32 [4096, 4096] (InputTensor Strides [1, 4096]); and the activations the engine serves,
SIGMOID, TANH and GELU, on FLOAT32 [4096, 4096]. Then the dispatch time of a compiled 1024-element FLOAT32 ADD.

The floor of a workload is an np.copyto of (bytes read + bytes written) / 2 bytes between two preallocated arrays:
it moves exactly the operator's traffic (a broadcast input counts the bytes it stores). Every implementation
writes into caller-provided, preallocated outputs (reused dml.Bindings in opendml; out= and preallocated scratch
in NumPy; out= / copy_ in PyTorch, with its default threads and with one; an io_binding to preallocated OrtValues
of a one-node opset-20 model in ONNX Runtime, one intra-op thread). The implementations of a workload are timed
interleaved, round after round, so drift hits all of them alike; the table shows each one's MEDIAN time over the
floor's, and the targets section opendml's time over the fastest peer's. NumPy has no erf (SciPy is not a
dependency): its ERF and GELU use Abramowitz and Stegun's erf 7.1.26 (absolute error below 1.5e-7).

Targets: the memory-bound workloads within 1.2x of the floor, the transpose within 1.5x, the transcendentals (EXP,
ERF, POW) within 1.5x, the activations within 1.2x (bench_activations.py's); every workload ahead of the fastest
peer; the 1024-element ADD's execute with reused Bindings under 15 us.

Checks, once per implementation into poisoned outputs: opendml bit for bit where the result is exact (ADD,
MULTIPLY, ROUND, CLIP1, LOGICAL_GREATER_THAN, QUANTIZE_LINEAR with round(x / scale) in FLOAT32, IDENTITY), EXP,
ERF and POW within 4 FLOAT32 ulps of float64, the activations as bench_activations.py checks them; every peer
against the same reference, loosely (1e-3; QUANTIZE_LINEAR within 1). A workload whose operator opendml does not
implement yet is timed for its peers, with opendml shown as "-" and the reason in the checks. The cpu backend's cold
start is off (opendml.backends.cpu.COLD_START): every timed call runs numba's kernel, its first call compiling it
where numba's cache does not hold it yet.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import _harness as h
import bench_activations
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, ort, torch

import opendml as dml
from opendml.backends import cpu

MEMORY, TRANSPOSE, TRANSCENDENTAL, ACTIVATION = 1.2, 1.5, 1.5, 1.2  # targets: ratio over the floor
TRANSCENDENTAL_ULPS = 4.0   # EXP, ERF and POW: FLOAT32 ulps of the float64 result (ENGINE.md)
SAMPLE = 200_000            # ERF and GELU are checked on this many positions drawn at random (math.erf is slow)
OPSET, IR_VERSION = 20, 9   # ONNX Runtime's one-node models
DISPATCH_ELEMENTS = 1024

# A descriptor class or enum opendml does not have yet, or a kernel it cannot compile yet: opendml's column is "-".
NOT_YET = (AttributeError, ModuleNotFoundError, NotImplementedError, dml.UnsupportedError)

TensorOf = Callable[[Array], Any]   # a NumPy array -> a PyTorch tensor (on the CPU over its memory, or on CUDA)


# -- what a workload is -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Expected:
    """The answer opendml's and the peers' outputs are checked against."""

    values: Array               # at `picks`: float64 (ulps > 0 or absolute) or the output's own dtype (bit for bit)
    picks: Array | None = None  # flat positions of the output checked; None: all of them
    ulps: float = 0.0           # opendml within this many ulps of the output type; 0: bit for bit
    absolute: float = 0.0       # or (when > 0) within this absolute error times max(1, max |values|)
    peer_atol: float | None = None  # peers within this absolute difference; None: h.agrees_loosely (1e-3)


@dataclass
class Spec:
    """One workload at its size: opendml's descriptor (built when called: the engine may lack it), its inputs in
    slot order (a broadcast input: the elements it stores), its output, the reference and each peer."""

    desc: Callable[[], dml.OperatorDesc]
    inputs: list[Array]
    out_shape: tuple[int, ...]
    out_dtype: Any
    expected: Expected
    numpy: Callable[[], Runner]
    torch: Callable[[TensorOf, Any], Callable[[], object]]   # (tensor_of, the output tensor) -> the call
    onnx_op: str
    onnx_inputs: dict[str, Array]
    onnx_attributes: dict[str, Any] = field(default_factory=dict)
    onnx_bool_output: bool = False    # the ONNX operator gives BOOL: bound over the UINT8 output's bytes

    @property
    def moved(self) -> int:
        """Bytes read (each input's stored elements once) plus bytes written."""
        return sum(array.nbytes for array in self.inputs) + self.new_out(0).itemsize * math.prod(self.out_shape)

    def new_out(self, count: int | None = None) -> Array:
        return np.empty(self.out_shape if count is None else (count,), self.out_dtype)


@dataclass(frozen=True)
class Workload:
    label: str
    build: Callable[[np.random.Generator, int], Spec]   # (rng, divisor of the leading dimension) -> its Spec
    target: float


def tensor(data_type: str, sizes: tuple[int, ...], strides: tuple[int, ...] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(getattr(dml.DataType, data_type), sizes, strides)


def element_wise(name: str, **fields: Any) -> Callable[[], dml.OperatorDesc]:
    """ELEMENT_WISE_<name>'s descriptor from `fields` (DML's field names in snake_case), built when called."""
    camel = "".join(part.capitalize() for part in name.split("_"))
    return lambda: getattr(dml, f"ElementWise{camel}OperatorDesc")(**fields)


def numpy_peer(shape: tuple[int, ...], dtype: Any, call: Callable[[Array], Callable[[], object]],
               note: str) -> Callable[[], Runner]:
    """NumPy's Runner: `call(out)` computes into a preallocated output."""
    def build() -> Runner:
        out = np.empty(shape, dtype)
        return Runner(NUMPY, call(out), [out], note=note)
    return build


# Abramowitz and Stegun 7.1.26 (bench_activations.py's constants): erf(z) = 1 - (a1 t + ... + a5 t^5) e^-z^2,
# t = 1 / (1 + p z), z >= 0; erf(-z) = -erf(z).
def numpy_erf(x: Array, out: Array) -> Callable[[], object]:
    t, z = np.empty_like(x), np.empty_like(x)
    one, p = np.float32(1.0), np.float32(bench_activations._AS_P)
    a1, a2, a3, a4, a5 = (np.float32(a) for a in bench_activations._AS_A)

    def run() -> None:
        np.abs(x, out=z)
        np.multiply(z, p, out=t)
        np.add(t, one, out=t)
        np.divide(one, t, out=t)
        np.multiply(t, a5, out=out)
        for a in (a4, a3, a2, a1):
            np.add(out, a, out=out)
            np.multiply(out, t, out=out)
        np.multiply(z, z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        np.multiply(out, z, out=out)
        np.subtract(one, out, out=out)
        np.copysign(out, x, out=out)
    return run


def math_erf(x: Array) -> Array:
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)), dtype=np.float64)


def sample(rng: np.random.Generator, count: int) -> Array:
    return np.unique(rng.integers(0, count, SAMPLE))


def rows(shape: tuple[int, ...], divisor: int) -> tuple[int, ...]:
    return (max(1, shape[0] // divisor), *shape[1:])


# -- the workloads ----------------------------------------------------------------------------------------------

F32 = (4096, 4096)   # 64 MiB of FLOAT32
Build = Callable[[np.random.Generator, int], Spec]


def binary(name: str, function: Any, dtype: Any, shape: tuple[int, ...]) -> Build:
    """ADD or MULTIPLY of two packed tensors; the reference is the float64 result rounded once (exact)."""
    def build(rng: np.random.Generator, divisor: int) -> Spec:
        sizes = rows(shape, divisor)
        a, b = (rng.standard_normal(sizes, dtype=np.float32).astype(dtype) for _ in range(2))
        expected = function(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
        desc = tensor("FLOAT32" if dtype == np.float32 else "FLOAT16", sizes)
        torch_name = {"ADD": "add", "MULTIPLY": "mul"}[name]

        def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
            ta, tb, run = T(a), T(b), getattr(torch, torch_name)
            return lambda: run(ta, tb, out=out)

        return Spec(element_wise(name, a_tensor=desc, b_tensor=desc, output_tensor=desc), [a, b], sizes, dtype,
                    Expected(expected),
                    numpy_peer(sizes, dtype, lambda out: lambda: function(a, b, out=out),
                               f"np.{function.__name__}(out=)"),
                    torch_call, {"ADD": "Add", "MULTIPLY": "Mul"}[name], {"a": a, "b": b})
    return build


def add_row(rng: np.random.Generator, divisor: int) -> Spec:
    """ADD of a row to every row of a [4096, 4096]: BTensor Sizes [4096, 4096], Strides [0, 1] over 4096 floats."""
    sizes = rows(F32, divisor)
    a = rng.standard_normal(sizes, dtype=np.float32)
    row = rng.standard_normal((1, sizes[1]), dtype=np.float32)
    expected = (a.astype(np.float64) + row.astype(np.float64)).astype(np.float32)
    full = tensor("FLOAT32", sizes)

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        ta, tr = T(a), T(row)
        return lambda: torch.add(ta, tr, out=out)

    return Spec(element_wise("ADD", a_tensor=full, b_tensor=tensor("FLOAT32", sizes, (0, 1)), output_tensor=full),
                [a, row], sizes, np.float32, Expected(expected),
                numpy_peer(sizes, np.float32, lambda out: lambda: np.add(a, row, out=out),
                           "np.add(out=), broadcasting the row"),
                torch_call, "Add", {"a": a, "b": row})


def unary(name: str, make_input: Callable[[np.random.Generator, tuple[int, ...]], Array],
          reference: Callable[[Array], Array], numpy_call: Callable[[Array, Array], Callable[[], object]],
          numpy_note: str, torch_name: str, onnx_op: str, sampled: bool = False, ulps: float = 0.0,
          **fields: Any) -> Build:
    """A unary operator on FLOAT32 [4096, 4096]. `reference` gives the float64 result (ulps > 0) or the exact
    FLOAT32 one, of the whole input or (`sampled`) of the positions drawn."""
    def build(rng: np.random.Generator, divisor: int) -> Spec:
        sizes = rows(F32, divisor)
        x = make_input(rng, sizes)
        picks = sample(rng, x.size) if sampled else None
        values = reference(x.reshape(-1)[picks] if picks is not None else x)
        desc = tensor("FLOAT32", sizes)

        def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
            tx, run = T(x), getattr(torch, torch_name)
            return lambda: run(tx, out=out)

        return Spec(element_wise(name, input_tensor=desc, output_tensor=desc, **fields), [x], sizes, np.float32,
                    Expected(values, picks, ulps), numpy_peer(sizes, np.float32, lambda out: numpy_call(x, out),
                                                              numpy_note),
                    torch_call, onnx_op, {"x": x})
    return build


def normal(scale: float) -> Callable[[np.random.Generator, tuple[int, ...]], Array]:
    return lambda rng, sizes: rng.standard_normal(sizes, dtype=np.float32) * np.float32(scale)


def round_input(rng: np.random.Generator, sizes: tuple[int, ...]) -> Array:
    """Normal values times 100, every fourth a multiple of 0.5 (ties to break, about half of them)."""
    x = normal(100.0)(rng, sizes)
    flat = x.reshape(-1)
    flat[::4] = np.round(flat[::4] * 2) / 2
    return x


def power(rng: np.random.Generator, divisor: int) -> Spec:
    """POW of a tensor by a tensor of exponents: bases in [0.25, 4), exponents in [-4, 4)."""
    sizes = rows(F32, divisor)
    base = rng.uniform(0.25, 4.0, sizes).astype(np.float32)
    exponent = rng.uniform(-4.0, 4.0, sizes).astype(np.float32)
    values = np.power(base.astype(np.float64), exponent.astype(np.float64))
    desc = tensor("FLOAT32", sizes)

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        tb, te = T(base), T(exponent)
        return lambda: torch.pow(tb, te, out=out)

    return Spec(element_wise("POW", input_tensor=desc, exponent_tensor=desc, output_tensor=desc), [base, exponent],
                sizes, np.float32, Expected(values, ulps=TRANSCENDENTAL_ULPS),
                numpy_peer(sizes, np.float32, lambda out: lambda: np.power(base, exponent, out=out), "np.power(out=)"),
                torch_call, "Pow", {"x": base, "y": exponent})


def clip1_int8(rng: np.random.Generator, divisor: int) -> Spec:
    """CLIP1 of INT8 to [-5, 5], its Min and Max INT8 (DML_SCALAR_UNION)."""
    sizes = rows((16384, 4096), divisor)
    x = rng.integers(-128, 128, sizes, dtype=np.int8)
    expected = np.clip(x.astype(np.int64), -5, 5).astype(np.int8)
    desc = tensor("INT8", sizes)
    low, high = np.int8(-5), np.int8(5)

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        tx = T(x)
        return lambda: torch.clamp(tx, -5, 5, out=out)

    return Spec(element_wise("CLIP1", input_tensor=desc, output_tensor=desc, scale_bias=None,
                             min_max_data_type=dml.DataType.INT8, min=-5, max=5),
                [x], sizes, np.int8, Expected(expected),
                numpy_peer(sizes, np.int8, lambda out: lambda: np.clip(x, low, high, out=out), "np.clip(out=)"),
                torch_call, "Clip", {"x": x, "min": np.array(low), "max": np.array(high)})


def greater(rng: np.random.Generator, divisor: int) -> Spec:
    """LOGICAL_GREATER_THAN of two FLOAT32 into UINT8 (every eighth pair equal)."""
    sizes = rows(F32, divisor)
    a, b = (rng.standard_normal(sizes, dtype=np.float32) for _ in range(2))
    b.reshape(-1)[::8] = a.reshape(-1)[::8]
    expected = (a.astype(np.float64) > b.astype(np.float64)).astype(np.uint8)
    desc = tensor("FLOAT32", sizes)

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        ta, tb, flags = T(a), T(b), out.view(torch.bool)
        return lambda: torch.gt(ta, tb, out=flags)

    return Spec(element_wise("LOGICAL_GREATER_THAN", a_tensor=desc, b_tensor=desc,
                             output_tensor=tensor("UINT8", sizes)),
                [a, b], sizes, np.uint8, Expected(expected),
                numpy_peer(sizes, np.uint8, lambda out: lambda: np.greater(a, b, out=out.view(np.bool_)),
                           "np.greater(out=) into a bool view of the UINT8 output"),
                torch_call, "Greater", {"a": a, "b": b}, onnx_bool_output=True)


def quantize(rng: np.random.Generator, divisor: int) -> Spec:
    """QUANTIZE_LINEAR of FLOAT32 [64, 256, 1024] into UINT8, a scale and a zero point per channel (axis 1)."""
    sizes = rows((64, 256, 1024), divisor)
    channels = sizes[1]
    x = normal(3.0)(rng, sizes)
    scale = rng.uniform(0.01, 0.05, channels).astype(np.float32)
    zero = rng.integers(100, 156, channels, dtype=np.uint8)
    scale3, zero3 = scale.reshape(1, channels, 1), zero.reshape(1, channels, 1)
    # saturate(round_even(x / scale) + zero_point), x / scale in FLOAT32 (the compute float)
    expected = np.clip(np.rint(x / scale3).astype(np.float64) + zero3, 0, 255).astype(np.uint8)
    per_channel = (0, 1, 0)
    desc = element_wise("QUANTIZE_LINEAR", input_tensor=tensor("FLOAT32", sizes),
                        scale_tensor=tensor("FLOAT32", sizes, per_channel),
                        zero_point_tensor=tensor("UINT8", sizes, per_channel), output_tensor=tensor("UINT8", sizes))

    def numpy_call(out: Array) -> Callable[[], object]:
        work, zero_f = np.empty_like(x), zero3.astype(np.float32)

        def run() -> None:
            np.divide(x, scale3, out=work)
            np.rint(work, out=work)
            np.add(work, zero_f, out=work)
            np.clip(work, 0, 255, out=work)
            np.copyto(out, work, casting="unsafe")
        return run

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        # the same steps with out= (2.5x faster here than torch.quantize_per_channel(...).int_repr(), deprecated)
        tx, ts, tz = T(x), T(scale3), T(zero3.astype(np.float32))
        work = torch.empty_like(tx)

        def run() -> None:
            torch.div(tx, ts, out=work)
            work.round_()
            work.add_(tz)
            work.clamp_(0, 255)
            out.copy_(work)
        return run

    return Spec(desc, [x, scale, zero], sizes, np.uint8, Expected(expected, peer_atol=1.0),
                numpy_peer(sizes, np.uint8, numpy_call, "divide, rint, add, clip in a FLOAT32 scratch, then a cast "
                           "(PyTorch: the same with out= and in-place steps)"),
                torch_call, "QuantizeLinear", {"x": x, "scale": scale, "zero": zero}, {"axis": 1})


def transpose(rng: np.random.Generator, divisor: int) -> Spec:
    """IDENTITY of a packed [C, R] read through Sizes [R, C], Strides [1, R]: its transpose, into a packed output."""
    stored = rng.standard_normal((F32[0], F32[1] // divisor), dtype=np.float32)
    sizes = (stored.shape[1], stored.shape[0])
    expected = np.ascontiguousarray(stored.T)

    def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
        view = T(stored).t()
        return lambda: out.copy_(view)

    return Spec(element_wise("IDENTITY", input_tensor=tensor("FLOAT32", sizes, (1, sizes[0])),
                             output_tensor=tensor("FLOAT32", sizes)),
                [stored], sizes, np.float32, Expected(expected),
                numpy_peer(sizes, np.float32, lambda out: lambda: np.copyto(out, stored.T), "np.copyto(out, x.T)"),
                torch_call, "Transpose", {"x": stored}, {"perm": [1, 0]})


def activation(name: str) -> Build:
    """SIGMOID, TANH or GELU (DML_ACTIVATION_*) with bench_activations.py's inputs, NumPy peer and reference."""
    def build(rng: np.random.Generator, divisor: int) -> Spec:
        sizes = rows(F32, divisor)
        x = normal(3.0)(rng, sizes)
        picks = sample(rng, x.size) if name == "GELU" else None
        values = bench_activations.reference(name, x.reshape(-1)[picks] if picks is not None else x)
        desc = tensor("FLOAT32", sizes)

        def torch_call(T: TensorOf, out: Any) -> Callable[[], object]:
            tx = T(x)
            run = torch._C._nn.gelu if name == "GELU" else getattr(torch, name.lower())
            return lambda: run(tx, out=out)

        return Spec(lambda: getattr(dml, f"Activation{name.capitalize()}OperatorDesc")(input_tensor=desc,
                                                                                       output_tensor=desc),
                    [x], sizes, np.float32, Expected(values, picks, absolute=2.5e-7),
                    lambda: bench_activations.make_numpy(bench_activations.Workload(name, name), x),
                    torch_call, name.capitalize(), {"x": x})
    return build


WORKLOADS = (
    Workload("ADD f32 [4096,4096] + [4096,4096]", binary("ADD", np.add, np.float32, F32), MEMORY),
    Workload("MULTIPLY f32 [4096,4096] * [4096,4096]", binary("MULTIPLY", np.multiply, np.float32, F32), MEMORY),
    Workload("ADD f32 [4096,4096] + row, strides 0,1", add_row, MEMORY),
    Workload("MULTIPLY f16 [8192,4096] * [8192,4096]", binary("MULTIPLY", np.multiply, np.float16, (8192, 4096)),
             MEMORY),
    Workload("EXP f32 [4096,4096]", unary("EXP", normal(4.0), lambda x: np.exp(x.astype(np.float64)),
                                          lambda x, out: lambda: np.exp(x, out=out), "np.exp(out=)", "exp", "Exp",
                                          ulps=TRANSCENDENTAL_ULPS), TRANSCENDENTAL),
    Workload("ERF f32 [4096,4096]", unary("ERF", normal(2.0), math_erf, numpy_erf,
                                          "erf by Abramowitz and Stegun 7.1.26 (preallocated scratch)", "erf", "Erf",
                                          sampled=True, ulps=TRANSCENDENTAL_ULPS), TRANSCENDENTAL),
    Workload("POW f32 [4096,4096] ^ [4096,4096]", power, TRANSCENDENTAL),
    Workload("ROUND f32 [4096,4096] halves to even", unary("ROUND", round_input, np.rint,
                                                           lambda x, out: lambda: np.rint(x, out=out), "np.rint(out=)",
                                                           "round", "Round",
                                                           rounding_mode=dml.RoundingMode.HALVES_TO_NEAREST_EVEN),
             MEMORY),
    Workload("CLIP1 i8 [16384,4096] to [-5,5]", clip1_int8, MEMORY),
    Workload("LOGICAL_GREATER_THAN f32 [4096,4096] -> u8", greater, MEMORY),
    Workload("QUANTIZE_LINEAR f32 [64,256,1024] -> u8 per channel", quantize, MEMORY),
    Workload("IDENTITY f32 [4096,4096] transposed", transpose, TRANSPOSE),
    Workload("SIGMOID f32 [4096,4096]", activation("SIGMOID"), ACTIVATION),
    Workload("TANH f32 [4096,4096]", activation("TANH"), ACTIVATION),
    Workload("GELU f32 [4096,4096]", activation("GELU"), ACTIVATION),
)


# -- checks -----------------------------------------------------------------------------------------------------

def compare(got: Array, expected: Expected, strict: bool) -> tuple[float, str | None]:
    """(max abs error, a problem or None) of an output against the reference: opendml's bound where `strict`,
    a peer's otherwise."""
    values = got.reshape(-1)[expected.picks] if expected.picks is not None else got
    reference = expected.values
    if values.shape != reference.shape:
        return math.inf, f"gave shape {values.shape}, expected {reference.shape}"
    wide, exact = values.astype(np.float64), reference.astype(np.float64)
    difference = np.where(np.isnan(wide) & ~np.isnan(exact), math.inf, np.abs(wide - exact))
    error = float(np.max(difference)) if difference.size else 0.0
    scale = max(1.0, float(np.max(np.abs(exact))) if exact.size else 1.0)
    if not strict:
        ok = error <= expected.peer_atol if expected.peer_atol is not None else h.agrees_loosely(exact, wide)
        return error, None if ok else f"differs from the reference (max abs error {error:.3g})"
    if expected.ulps > 0:
        ulp = np.spacing(np.abs(reference).astype(got.dtype)).astype(np.float64)
        worst = float(np.max(difference / ulp)) if difference.size else 0.0
        ok = worst <= expected.ulps
        return error, None if ok else f"is {worst:.3g} ulps from the float64 result (at most {expected.ulps:g})"
    if expected.absolute > 0:
        ok = error <= expected.absolute * scale
        return error, None if ok else f"differs from the float64 result by {error:.3g} (at most " \
                                      f"{expected.absolute:g} x {scale:.3g})"
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    differ = int(np.count_nonzero(values.view(unsigned) != reference.astype(got.dtype).view(unsigned)))
    return error, None if differ == 0 else f"differs from the exact result in {differ} elements (max abs error " \
                                           f"{error:.3g})"


def check_summary(outcome: Outcome) -> str:
    errors = ", ".join(f"{name} {error:.2g}" for name, error in outcome.errors.items())
    first = ("opendml not run" if math.isnan(outcome.first_call_s) else
             f"opendml first call (compile + run) {outcome.first_call_s * 1e3:.0f} ms")
    return f"max abs errors {errors}; {first}"


# -- the cpu backend ---------------------------------------------------------------------------------------------

def compiled_of(device: dml.Device, spec: Spec) -> Any:
    """opendml's compiled operator, run once (the engine may not serve it yet: h.Unavailable)."""
    try:
        compiled = device.compile_operator(device.create_operator(spec.desc()))
    except NOT_YET as error:
        raise h.Unavailable(f"{type(error).__name__}: {str(error).splitlines()[0][:140] if str(error) else ''}") \
            from error
    return compiled


def make_opendml(device: dml.Device, spec: Spec) -> Runner:
    compiled = compiled_of(device, spec)
    out = spec.new_out()
    inputs, outputs = [dml.Binding(array) for array in spec.inputs], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), [out])


def make_torch(spec: Spec, threads: int, name: str) -> Runner:
    out = spec.new_out()
    return Runner(name, spec.torch(torch.from_numpy, torch.from_numpy(out)), [out], before=h.torch_threads(threads))


def make_ort(spec: Spec) -> Runner:
    helper = onnx.helper
    out = spec.new_out()
    bound = out.view(np.bool_) if spec.onnx_bool_output else out

    def info(name: str, array: Array) -> Any:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    node = helper.make_node(spec.onnx_op, list(spec.onnx_inputs), ["result"], **spec.onnx_attributes)
    graph = helper.make_graph([node], spec.onnx_op.lower(), [info(name, array) for name, array in
                                                             spec.onnx_inputs.items()], [info("result", bound)])
    return h.ort_runner(graph, OPSET, IR_VERSION, dict(spec.onnx_inputs), {"result": bound}, outs=[out])


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    spec = work.build(rng, 1)
    floor_bytes = spec.moved // 2

    def check(runner: Runner, mine: Any, errors: dict[str, float]) -> str | None:
        errors[runner.name], problem = compare(runner.result(), spec.expected, strict=runner.name == OPENDML)
        return None if problem is None else f"{runner.name} {problem}"

    return h.measure(label=work.label, target=work.target, repeat=repeat, opendml=lambda: make_opendml(device, spec),
                     floor=lambda: h.copy_floor(np.ones(floor_bytes, np.uint8)), with_numpy=spec.numpy,
                     with_torch=lambda threads, name: make_torch(spec, threads, name),
                     with_ort=lambda: make_ort(spec), check=check)


def dispatch_spec() -> Spec:
    return binary("ADD", np.add, np.float32, (DISPATCH_ELEMENTS,))(np.random.default_rng(7), 1)


def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    spec = dispatch_spec()
    a, b = spec.inputs
    results: dict[str, float] = {}
    try:
        compiled = compiled_of(device, spec)
    except h.Unavailable as error:
        results[f"opendml execute: n/a ({error})"] = math.nan
    else:
        out = spec.new_out()
        inputs, outputs = [dml.Binding(a), dml.Binding(b)], [dml.Binding(out)]
        results["opendml execute, reused Bindings"] = h.per_call_us(lambda: compiled.execute(inputs, outputs), count)
        if compare(out, spec.expected, strict=True)[1] is not None:
            raise AssertionError("opendml's 1024-element ADD gave a wrong result")
        results["opendml execute, fresh Bindings"] = h.per_call_us(
            lambda: compiled.execute([dml.Binding(a), dml.Binding(b)], [dml.Binding(out)]), count)
    mine = np.empty_like(a)
    results["NumPy np.add(out=)"] = h.per_call_us(lambda: np.add(a, b, out=mine), count)
    if torch is not None:
        run = make_torch(spec, torch.get_num_threads(), h.TORCH).run
        results["PyTorch torch.add(out=)"] = h.per_call_us(run, count)
    if ort is not None:
        results["ONNX Runtime run_with_iobinding (1 thread)"] = h.per_call_us(make_ort(spec).run, count)
    return results


SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20261127, full_repeat=15,
    quick_help="5 rounds per workload", only_option=True, count_met=True, best_table=True,
    targets_title=(f"Targets (opendml's median over the floor's: memory-bound {MEMORY}x, the transpose {TRANSPOSE}x, "
                   f"EXP/ERF/POW {TRANSCENDENTAL}x, activations {ACTIVATION}x; and its time at most the fastest "
                   f"correct peer's):"),
    opendml_threads=f"numba kernels; numba.get_num_threads() = {h.numba_threads()}",
    ort_model="one-node opset-20 model",
    checks_title=("Checks (each result once, into poisoned outputs; opendml against the exact or float64 result, "
                  "the peers loosely; max abs error against it):"),
    dispatch_title=f"Dispatch overhead (ADD of two {DISPATCH_ELEMENTS}-element FLOAT32 tensors; median of "
                   "{count} calls):",
    dispatch=dispatch_overhead, dispatch_width=44, check_summary=check_summary,
)


# -- the gpu backend ---------------------------------------------------------------------------------------------

def gpu_main(argv: list[str]) -> int:
    """The workloads on the gpu backend, timed as bench_gpu.py times its own (GPU timestamps, device buffers, a
    device-to-device copy of (read + written) / 2 bytes as the floor, PyTorch CUDA where available)."""
    import bench_gpu as g

    parser = argparse.ArgumentParser(description="The element-wise workloads on the gpu backend (bench_gpu.py's "
                                                 "method).")
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="gpu")
    parser.add_argument("--smoke", action="store_true", help="1/64 of each tensor, 3 rounds (lavapipe)")
    parser.add_argument("--quick", action="store_true", help="5 rounds per workload")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload (default 11)")
    parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text")
    parser.add_argument("--adapter", default=None, help="part of the adapter's name")
    parser.add_argument("--torch-device", choices=("cuda", "cpu"), default="cuda", help="where PyTorch runs")
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (3 if args.smoke else 5 if args.quick else 11)
    divisor = 64 if args.smoke else 1

    began = time.perf_counter()
    device = dml.Device(backend="gpu", adapter=args.adapter)
    context = device.backend.context  # type: ignore[attr-defined]
    clock = g.GpuClock(device)
    where = g.torch_device(args.torch_device)
    print(f"opendml {dml.__version__} | Python {platform.python_version()} | NumPy {np.__version__} | wgpu "
          f"{context.wgpu.__version__} | torch {torch.__version__ if torch is not None else '-'}")
    print(f"adapter: {context.adapter_info}; timing: {clock.method}")
    print(f"{repeat} interleaved rounds; tensors 1/{divisor} of full size; {os.cpu_count()} CPUs, "
          f"{platform.machine()}" + (" (a smoke run: the targets say nothing here)" if divisor > 1 else ""))
    print()
    rng = np.random.default_rng(SUITE.seed)
    table: list[Any] = []
    for work in WORKLOADS:
        if args.only is not None and args.only not in work.label:
            continue
        spec = work.build(rng, divisor)
        label = work.label + ("" if divisor == 1 else f", leading size / {divisor}")
        try:
            desc = spec.desc()
        except NOT_YET as error:
            row = g.Row(label, spec.moved, work.target)
            row.notes.append(f"skipped: opendml has no descriptor for it yet ({type(error).__name__}: {error})")
        else:
            torch_dtype = None if torch is None else torch.from_numpy(spec.new_out(0)).dtype

            def torch_call(module: Any, at: str, spec: Spec = spec, dtype: Any = torch_dtype) -> Callable[[], object]:
                out = module.empty(spec.out_shape, dtype=dtype, device=at)
                return spec.torch(lambda array: module.from_numpy(array).to(at), out)

            def check(outputs: list[Array], expected: Expected = spec.expected) -> str | None:
                return compare(outputs[0], expected, strict=True)[1]

            floor = spec.moved // 2
            case = g.Case(label, desc, list(spec.inputs), spec.moved, floor - floor % 4, work.target, check,
                          torch_call)
            row = g.bench_case(device, clock, case, repeat, where)
        table.append(row)
        del spec
        gc.collect()
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)
    g.print_table(table, "PyTorch CUDA" if where != "cpu" else "PyTorch (cpu!)")
    notes = [f"  {row.label}: {note}" for row in table for note in row.notes]
    if notes:
        print()
        print("Notes:")
        print("\n".join(notes))
    print()
    spec = dispatch_spec()
    try:
        compiled = device.compile_operator(device.create_operator(spec.desc()))
    except NOT_YET as error:
        print(f"Dispatch: opendml n/a ({type(error).__name__}: {error})")
    else:
        inputs = [dml.Binding(device.create_buffer(array)) for array in spec.inputs]
        outputs = [dml.Binding(device.create_buffer(spec.new_out().nbytes))]
        count = 300 if args.smoke else 5000
        micros = h.per_call_us(lambda: compiled.execute(inputs, outputs), count)
        g.wait_idle(context)
        met = "MET" if micros < g.DISPATCH_TARGET_US else "MISSED"
        print(f"Dispatch: a compiled {DISPATCH_ELEMENTS}-element ADD on device buffers, reused Bindings: "
              f"{micros:.1f} us host time per call, median of {count} (target on an H100 < "
              f"{g.DISPATCH_TARGET_US:.0f} us: {met})")
    print()
    print(f"whole run {time.perf_counter() - began:.0f} s")
    return 0


def main() -> int:
    """--backend gpu runs gpu_main; otherwise the harness's run on the cpu backend (its own options)."""
    chooser = argparse.ArgumentParser(add_help=False)
    chooser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    chosen, rest = chooser.parse_known_args()
    if chosen.backend == "gpu":
        return gpu_main(sys.argv[1:])
    sys.argv[1:] = rest
    cpu.COLD_START = False   # numba's kernels from the first call (compiled by this process where not cached)
    return h.run_suite(SUITE)


if __name__ == "__main__":
    sys.exit(main())
