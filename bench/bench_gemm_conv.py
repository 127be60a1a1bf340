#!/usr/bin/env python
"""GEMM and CONVOLUTION benchmark (issue 27): opendml's cpu backend against NumPy, PyTorch and ONNX Runtime, in time,
GFLOP/s and ratio to the fastest peer (--gpu: the gpu backend's GFLOP/s beside the cpu backend's).

    python bench/bench_gemm_conv.py              # full run, 11 rounds (a few minutes on 2 cores; under 3 GiB)
    python bench/bench_gemm_conv.py --quick      # a subset, 5 rounds (about 2 minutes)
    python bench/bench_gemm_conv.py --only CONV --repeat 21
    python bench/bench_gemm_conv.py --gpu        # then a [512]^3 GEMM and a [1,64,56,56] 3x3 CONV on both backends
    python bench/bench_gemm_conv.py --threads 1  # every implementation on one thread (set before NumPy loads)
    python bench/bench_gemm_conv.py --smoke      # tiny shapes, 1 round: a check that everything runs (the tests)

Workloads (FLOAT32 unless said; GFLOP counts 2 per multiply-add): GEMM [2048,2048] x [2048,2048] plain, with B
transposed (TransB, B stored [N,K]), with a full C and Alpha 0.5, Beta 2, and with a bias row (C [1,N] broadcast by
strides [0,1]) and a fused RELU; batched [32,256,256] x [32,256,256]; FLOAT16 [2048,2048] x [2048,2048].
Convolutions from ResNet-50, each with a Bias and a fused RELU (the inference form, batch norm folded into the bias):
3x3 64->64 on [8,64,56,56] padding 1, 1x1 256->64 on [8,256,56,56], 7x7 stride 2 padding 3 3->64 on
[8,3,224,224], depthwise 3x3 (128 groups) on [8,128,56,56] padding 1; a 3-D 3x3x3 32->32 on [2,32,16,56,56] padding
1; a transposed (BACKWARD) 4x4 stride 2 padding 1 64->32 on [8,64,28,28] (output [8,32,56,56]).

Every implementation computes into caller-provided, preallocated outputs where it allows: reused dml.Bindings in
opendml (GEMM tensors 4-D, [1,1,M,K]); out= in NumPy (matmul; the bias, Alpha/Beta and RELU as further in-place
passes; FLOAT16 through preallocated FLOAT32 copies, NumPy having no half GEMM; the 1x1 convolution as a matmul; no
other convolution: NumPy has none) and in PyTorch (matmul, addmm, bmm; its convolutions allocate their result, the
RELU is then a clamp_min into the output); ONNX Runtime runs a small opset-20 model (MatMul or Gemm; Conv or
ConvTranspose; a Relu node after it, which its graph optimizer fuses where it can) through an io_binding to
OrtValues over the caller's arrays, with its default graph optimizations; the convolutions' weights and bias are
initializers (how it runs a model, pre-packing them), the GEMMs' operands inputs. Every implementation runs on
--threads threads (default: every core): PyTorch's intra-op pool, ONNX Runtime's intra-op pool (spinning off, so
that an idle pool does not slow the next implementation), numba's pool (opendml) and OpenBLAS's (NumPy, and
opendml's GEMM where it calls BLAS; set through OPENBLAS_NUM_THREADS before NumPy loads). PyTorch on the CPU has no
TF32 (the setting is CUDA's). The implementations of a workload are timed interleaved, round after round, so drift
hits them alike; each is reported as its MEDIAN time, its GFLOP/s at that time, and that time over the fastest
peer's.

Checks, once per implementation into NaN-poisoned outputs, before any timing: every result against a float64
reference computed here by NumPy (the first rows of a GEMM, the first image of a convolution: im2col products and a
scatter for the transposed one), within 1e-4 of the reference's largest magnitude for opendml's FLOAT32 (5e-3 for
FLOAT16) and 1e-3 for the peers; and every peer against opendml's whole output (1e-3). A mismatch is marked '!' and
printed in full; a workload whose operator opendml does not implement yet is timed for its peers, opendml shown as
"-" with the reason.

Targets (issue 27): a GEMM within 1.1x of the fastest peer's time; a convolution within 1.25x of the fastest peer's
and ahead of ONNX Runtime; the fused bias + RELU for free: opendml's fused operator within 1.05x of its plain one (no
C or Bias, no activation; a further opendml runner, timed interleaved with the others).

The machine is shared: the load average is printed at the start and at the end; the numbers of a busy machine are
noisy (compare ratios of one run, not absolute times across runs).
"""

from __future__ import annotations

import os
import sys


def _threads_from_argv(argv: list[str]) -> int:
    """--threads N (or --threads=N) read before NumPy loads: OpenBLAS sizes its pool when it is loaded."""
    for index, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--threads=") else (
            argv[index + 1] if arg == "--threads" and index + 1 < len(argv) else None)
        if value is not None and value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


THREADS = _threads_from_argv(sys.argv[1:])
os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)
os.environ.setdefault("NUMBA_NUM_THREADS", str(THREADS))
# An OpenMP pool that spins after a call (libgomp's default) takes the cores from whichever implementation runs next
# (NumPy's batched matmul was 100x slower right after PyTorch's): every pool sleeps when idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402  (the thread counts above must be set before NumPy, numba and torch load)
import gc  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import _harness as h  # noqa: E402
import numpy as np  # noqa: E402
from _harness import NUMPY, OPENDML, ORT, TORCH, Array, Runner, numba, onnx, ort, torch  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import opendml as dml  # noqa: E402
from opendml.backends import cpu  # noqa: E402

GEMM_TARGET, CONV_TARGET, FUSED_TARGET = 1.1, 1.25, 1.05
OPSET, IR_VERSION = 20, 9
SEED = 20261127
REFERENCE_ROWS = 64          # a GEMM's float64 reference: its first rows (of every batch)
OPENDML_TOLERANCE = {np.dtype(np.float32): 1e-4, np.dtype(np.float16): 5e-3}   # times max |reference|
PEER_TOLERANCE = {np.dtype(np.float32): 1e-3, np.dtype(np.float16): 5e-3}
PLAIN = "opendml plain"      # the extra runner of the fused column

# A descriptor class opendml does not have yet, or a kernel it cannot compile yet: opendml's column is "-".
NOT_YET = (AttributeError, ModuleNotFoundError, NotImplementedError, dml.UnsupportedError)
PEER_NAMES = (NUMPY, TORCH, ORT)
COLUMNS = (OPENDML, *PEER_NAMES)


# -- what a workload is -----------------------------------------------------------------------------------------

@dataclass
class Spec:
    """One workload at its size: opendml's descriptor and inputs (slot order; None for an absent C or Bias), the
    plain operator of the fused column, the float64 reference of part of the output, and each peer."""

    flops: float
    desc: Callable[[], dml.OperatorDesc]
    inputs: list[Array | None]
    out_shape: tuple[int, ...]
    out_dtype: Any
    reference: Callable[[], tuple[Array, tuple[slice, ...]]]   # () -> (float64 values, where they are in the output)
    numpy: Callable[[Array], Callable[[], object]] | None       # (output) -> the call; None: NumPy has no such op
    torch: Callable[[Any], Callable[[], object]]                # (output tensor over the output) -> the call
    onnx: Callable[[], tuple[list[Any], dict[str, Array], dict[str, Array]]]   # -> (nodes, inputs, initializers)
    plain: tuple[Callable[[], dml.OperatorDesc], list[Array | None]] | None = None   # the fused column's operator
    owned: tuple[int, ...] = ()   # input slots that are OWNED_BY_DML (the weights, bound once at initialize)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Workload:
    label: str
    family: str                                  # "GEMM" or "CONV": its target
    build: Callable[[np.random.Generator, bool], Spec]   # (rng, smoke) -> its Spec
    quick: bool = False                          # in the --quick subset


def uniform(rng: np.random.Generator, shape: Sequence[int], dtype: Any = np.float32) -> Array:
    return rng.uniform(-1.0, 1.0, tuple(shape)).astype(dtype)


def dims(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(size) for size in shape) + "]"


def data_type(dtype: Any) -> str:
    return {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}[np.dtype(dtype)]


def relu() -> Any:
    return dml.ActivationReluOperatorDesc()


def onnx_node(op: str, inputs: list[str], output: str, **attributes: Any) -> Any:
    return onnx.helper.make_node(op, inputs, [output], **attributes)


# -- GEMM -------------------------------------------------------------------------------------------------------

def gemm(m: int, n: int, k: int, *, batch: int = 0, trans_b: bool = False, with_c: bool = False,
         alpha: float = 1.0, beta: float = 1.0, bias_relu: bool = False, dtype: Any = np.float32) -> Callable[
             [np.random.Generator, bool], Spec]:
    """Output = f(alpha A B + beta C): A [batch?, M, K], B [batch?, K, N] (or [N, K] with trans_b), C [M, N]
    (`with_c`) or a bias row [N] broadcast by strides [0, 1] with a fused RELU (`bias_relu`)."""

    def build(rng: np.random.Generator, smoke: bool) -> Spec:
        mm, nn, kk = (max(8, size // 32) for size in (m, n, k)) if smoke else (m, n, k)
        bb = min(batch, 4) if smoke else batch
        lead = (bb,) if bb else ()
        a = uniform(rng, (*lead, mm, kk), dtype)
        b = uniform(rng, (*lead, nn, kk) if trans_b else (*lead, kk, nn), dtype)
        c = uniform(rng, (mm, nn), dtype) if with_c else uniform(rng, (nn,), dtype) if bias_relu else None
        out_shape = (*lead, mm, nn)
        type_name = data_type(dtype)

        def four(sizes: Sequence[int]) -> tuple[int, ...]:
            return (1,) * (4 - len(sizes)) + tuple(sizes)

        def desc_of(fused: bool) -> dml.OperatorDesc:
            c_desc = None
            if fused and with_c:
                c_desc = dml.TensorDesc(type_name, four((mm, nn)))
            elif fused and bias_relu:
                c_desc = dml.TensorDesc(type_name, four((mm, nn)), (0, 0, 0, 1))
            return dml.GemmOperatorDesc(
                dml.TensorDesc(type_name, four(a.shape)), dml.TensorDesc(type_name, four(b.shape)), c_desc,
                dml.TensorDesc(type_name, four(out_shape)),
                trans_b=dml.MatrixTransform.TRANSPOSE if trans_b else dml.MatrixTransform.NONE,
                alpha=alpha if fused else 1.0, beta=beta if fused and c is not None else 1.0,
                fused_activation=relu() if fused and bias_relu else None)

        def reference() -> tuple[Array, tuple[slice, ...]]:
            rows = slice(0, min(REFERENCE_ROWS, mm))
            a64, b64 = a[..., rows, :].astype(np.float64), b.astype(np.float64)
            values = alpha * np.matmul(a64, np.swapaxes(b64, -1, -2) if trans_b else b64)
            if c is not None:
                values = values + beta * (c[rows] if with_c else c).astype(np.float64)
            if bias_relu:
                values = np.maximum(values, 0.0)
            return values, (*(slice(None),) * len(lead), rows)

        def numpy_call(out: Array) -> Callable[[], object]:
            if dtype == np.float16:  # NumPy has no half GEMM (its float16 matmul is a scalar loop): via FLOAT32
                a32, b32, o32 = np.empty(a.shape, np.float32), np.empty(b.shape, np.float32), np.empty(out.shape,
                                                                                                      np.float32)

                def half() -> None:
                    np.copyto(a32, a)
                    np.copyto(b32, b)
                    np.matmul(a32, b32, out=o32)
                    np.copyto(out, o32, casting="same_kind")
                return half
            bb_ = np.swapaxes(b, -1, -2) if trans_b else b
            scratch = np.empty(out.shape, dtype) if with_c else None
            scaled_alpha, scaled_beta = np.asarray(alpha, dtype), np.asarray(beta, dtype)

            def run() -> None:
                np.matmul(a, bb_, out=out)
                if with_c:
                    assert scratch is not None
                    np.multiply(out, scaled_alpha, out=out)
                    np.multiply(c, scaled_beta, out=scratch)
                    np.add(out, scratch, out=out)
                elif bias_relu:
                    np.add(out, c, out=out)
                    np.maximum(out, 0, out=out)
            return run

        def torch_call(out: Any) -> Callable[[], object]:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            tb = tb.transpose(-1, -2) if trans_b else tb
            if with_c:
                tc = torch.from_numpy(c)
                return lambda: torch.addmm(tc, ta, tb, beta=beta, alpha=alpha, out=out)
            if bias_relu:
                tc = torch.from_numpy(c)

                def biased() -> None:
                    torch.addmm(tc, ta, tb, out=out)
                    out.relu_()
                return biased
            if lead:
                return lambda: torch.bmm(ta, tb, out=out)
            return lambda: torch.matmul(ta, tb, out=out)

        def onnx_graph() -> tuple[list[Any], dict[str, Array], dict[str, Array]]:
            inputs: dict[str, Array] = {"A": a, "B": b}
            if lead or not (trans_b or c is not None):
                return [onnx_node("MatMul", ["A", "B"], "Y")], inputs, {}
            attributes: dict[str, Any] = {"transB": int(trans_b)}
            if c is not None:
                inputs["C"] = c
                attributes.update(alpha=alpha, beta=beta)
            nodes = [onnx_node("Gemm", list(inputs), "G" if bias_relu else "Y", **attributes)]
            if bias_relu:
                nodes.append(onnx_node("Relu", ["G"], "Y"))
            return nodes, inputs, {}

        flops = 2.0 * max(1, bb) * mm * nn * kk
        plain = (lambda: desc_of(False), [a, b, None]) if bias_relu else None
        notes = []
        if dtype == np.float16:
            notes.append("NumPy: FLOAT16 copied to preallocated FLOAT32, np.matmul, rounded into the output")
        return Spec(flops, lambda: desc_of(True), [a, b, c], out_shape, dtype, reference, numpy_call, torch_call,
                    onnx_graph, plain=plain, notes=notes)
    return build


# -- CONVOLUTION ------------------------------------------------------------------------------------------------

def conv_reference(x: Array, w: Array, bias: Array, strides: Sequence[int], pads: Sequence[int], groups: int,
                   transposed: bool) -> Array:
    """The float64 convolution (cross-correlation) of `x` [N, C, *S] by `w` plus `bias`, then RELU. Forward: w
    [Co, C/g, *K], im2col windows and a tensordot per group. Transposed: w [C, Co/g, *K], each input element's
    product scattered to its window of the (stride-spread) output, which is then cropped by `pads`."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    spatial = len(strides)
    kernel = w.shape[2:]
    axes = tuple(range(2, 2 + spatial))
    if not transposed:
        padded = np.pad(x, [(0, 0), (0, 0), *((p, p) for p in pads)])
        windows = sliding_window_view(padded, kernel, axis=axes)[(slice(None), slice(None),
                                                                  *(slice(None, None, s) for s in strides))]
        cig, cog = x.shape[1] // groups, w.shape[0] // groups
        parts = []
        for g in range(groups):   # [N, cig, *O, *K] . [cog, cig, *K] -> [N, *O, cog]
            part = np.tensordot(windows[:, g * cig:(g + 1) * cig], w[g * cog:(g + 1) * cog],
                                axes=([1, *range(2 + spatial, 2 + 2 * spatial)], [1, *range(2, 2 + spatial)]))
            parts.append(np.moveaxis(part, -1, 1))
        out = np.concatenate(parts, axis=1)
    else:
        cig, cog = x.shape[1] // groups, w.shape[1]
        full = [(size - 1) * s + k for size, s, k in zip(x.shape[2:], strides, kernel, strict=True)]
        out = np.zeros((x.shape[0], cog * groups, *full))
        for g in range(groups):
            xg, wg = x[:, g * cig:(g + 1) * cig], w[g * cig:(g + 1) * cig]
            for position in itertools.product(*(range(k) for k in kernel)):
                product = np.tensordot(xg, wg[(slice(None), slice(None), *position)], axes=([1], [0]))
                where = tuple(slice(p, p + (size - 1) * s + 1, s) for p, size, s in
                              zip(position, x.shape[2:], strides, strict=True))
                out[(slice(None), slice(g * cog, (g + 1) * cog), *where)] += np.moveaxis(product, -1, 1)
        out = out[(slice(None), slice(None), *(slice(p, size - p) for p, size in zip(pads, full, strict=True)))]
    out += bias.astype(np.float64).reshape(1, -1, *(1,) * spatial)
    return np.maximum(out, 0.0)


def conv(batch: int, channels: int, out_channels: int, spatial: tuple[int, ...], kernel: int, *, stride: int = 1,
         pad: int = 0, groups: int = 1, transposed: bool = False, owned_weights: bool = True) -> Callable[
             [np.random.Generator, bool], Spec]:
    """A convolution with a Bias and a fused RELU: x [N, C, *S]; forward filter [Co, C/g, *K], transposed
    (BACKWARD) filter [C, Co/g, *K] (ONNX ConvTranspose's layout, which DirectML's BACKWARD takes as it is). The
    filter and the bias are OWNED_BY_DML unless `owned_weights` is false."""

    def build(rng: np.random.Generator, smoke: bool) -> Spec:
        n = 1 if smoke else batch
        sizes = tuple(max(kernel if not transposed else 2, size // 8) for size in spatial) if smoke else spatial
        nd = len(sizes)
        x = uniform(rng, (n, channels, *sizes))
        fan_in = (channels // groups) * kernel ** nd
        w_shape = ((channels, out_channels // groups) if transposed else (out_channels, channels // groups))
        w = (uniform(rng, (*w_shape, *(kernel,) * nd)) / np.float32(math.sqrt(fan_in))).astype(np.float32)
        bias = uniform(rng, (out_channels,))
        if transposed:
            out_sizes = tuple((size - 1) * stride - 2 * pad + kernel for size in sizes)
        else:
            out_sizes = tuple((size + 2 * pad - kernel) // stride + 1 for size in sizes)
        out_shape = (n, out_channels, *out_sizes)
        macs = (n * channels * math.prod(sizes) * (out_channels // groups) * kernel ** nd if transposed else
                n * out_channels * math.prod(out_sizes) * (channels // groups) * kernel ** nd)
        f32 = "FLOAT32"

        owned = dml.TensorFlags.OWNED_BY_DML if owned_weights else dml.TensorFlags.NONE

        def desc_of(fused: bool) -> dml.OperatorDesc:
            return dml.ConvolutionOperatorDesc(
                dml.TensorDesc(f32, x.shape), dml.TensorDesc(f32, w.shape, flags=owned),
                dml.TensorDesc(f32, (1, out_channels, *(1,) * nd), flags=owned) if fused else None,
                dml.TensorDesc(f32, out_shape),
                mode=dml.ConvolutionMode.CROSS_CORRELATION,
                direction=dml.ConvolutionDirection.BACKWARD if transposed else dml.ConvolutionDirection.FORWARD,
                dimension_count=nd, strides=(stride,) * nd, dilations=(1,) * nd, start_padding=(pad,) * nd,
                end_padding=(pad,) * nd, output_padding=(0,) * nd, group_count=groups,
                fused_activation=relu() if fused else None)

        def reference() -> tuple[Array, tuple[slice, ...]]:
            return conv_reference(x[:1], w, bias, (stride,) * nd, (pad,) * nd, groups, transposed), (slice(0, 1),)

        numpy_call = None
        if kernel == 1 and stride == 1 and pad == 0 and groups == 1 and not transposed:
            w2 = w.reshape(out_channels, channels)
            column = bias.reshape(out_channels, 1)

            def numpy_call(out: Array) -> Callable[[], object]:
                xs, os_ = x.reshape(n, channels, -1), out.reshape(n, out_channels, -1)

                def pointwise() -> None:
                    np.matmul(w2, xs, out=os_)
                    np.add(os_, column, out=os_)
                    np.maximum(os_, 0, out=os_)
                return pointwise

        def torch_call(out: Any) -> Callable[[], object]:
            functional = torch.nn.functional
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
            if transposed:
                op = {1: functional.conv_transpose1d, 2: functional.conv_transpose2d,
                      3: functional.conv_transpose3d}[nd]
            else:
                op = {1: functional.conv1d, 2: functional.conv2d, 3: functional.conv3d}[nd]
            return lambda: torch.clamp_min(op(tx, tw, tb, stride=stride, padding=pad, groups=groups), 0, out=out)

        def onnx_graph() -> tuple[list[Any], dict[str, Array], dict[str, Array]]:
            attributes = {"strides": [stride] * nd, "pads": [pad] * (2 * nd), "group": groups,
                          "kernel_shape": [kernel] * nd}
            nodes = [onnx_node("ConvTranspose" if transposed else "Conv", ["X", "W", "B"], "Z", **attributes),
                     onnx_node("Relu", ["Z"], "Y")]
            return nodes, {"X": x}, {"W": w, "B": bias}

        plain = (lambda: desc_of(False), [x, w, None])
        notes = ["PyTorch: its convolution allocates the result; the RELU is a clamp_min into the output"]
        return Spec(2.0 * macs, lambda: desc_of(True), [x, w, bias], out_shape, np.float32, reference, numpy_call,
                    torch_call, onnx_graph, plain=plain, notes=notes,
                    owned=(1, 2) if owned_weights else ())
    return build


WORKLOADS = (
    Workload("GEMM f32 [2048,2048] x [2048,2048]", "GEMM", gemm(2048, 2048, 2048), quick=True),
    Workload("GEMM f32 TransB [2048,2048] x [2048,2048]^T", "GEMM", gemm(2048, 2048, 2048, trans_b=True)),
    Workload("GEMM f32 + C, alpha 0.5, beta 2", "GEMM", gemm(2048, 2048, 2048, with_c=True, alpha=0.5, beta=2.0)),
    Workload("GEMM f32 + bias row + RELU (fused)", "GEMM", gemm(2048, 2048, 2048, bias_relu=True), quick=True),
    Workload("GEMM f32 batched [32,256,256] x [32,256,256]", "GEMM", gemm(256, 256, 256, batch=32), quick=True),
    Workload("GEMM f16 [2048,2048] x [2048,2048]", "GEMM", gemm(2048, 2048, 2048, dtype=np.float16)),
    Workload("CONV 3x3 64->64 [8,64,56,56] pad 1 +bias+RELU", "CONV", conv(8, 64, 64, (56, 56), 3, pad=1),
             quick=True),
    Workload("CONV 1x1 256->64 [8,256,56,56] +bias+RELU", "CONV", conv(8, 256, 64, (56, 56), 1), quick=True),
    Workload("CONV 7x7/2 3->64 [8,3,224,224] pad 3 +bias+RELU", "CONV", conv(8, 3, 64, (224, 224), 7, stride=2,
                                                                                  pad=3)),
    Workload("CONV depthwise 3x3 [8,128,56,56] pad 1 +bias+RELU", "CONV",
             conv(8, 128, 128, (56, 56), 3, pad=1, groups=128), quick=True),
    Workload("CONV 3-D 3x3x3 32->32 [2,32,16,56,56] pad 1 +bias+RELU", "CONV",
             conv(2, 32, 32, (16, 56, 56), 3, pad=1)),
    Workload("CONV transposed 4x4/2 64->32 [8,64,28,28] pad 1 +bias+RELU", "CONV",
             conv(8, 64, 32, (28, 28), 4, stride=2, pad=1, transposed=True), quick=True),
)


# -- implementations --------------------------------------------------------------------------------------------

def opendml_runner(device: dml.Device, name: str, desc: Callable[[], dml.OperatorDesc], inputs: list[Array | None],
                   out: Array, owned: tuple[int, ...] = ()) -> Runner:
    """opendml's compiled operator over reused Bindings (h.Unavailable where it has no such operator yet); the
    `owned` input slots (OWNED_BY_DML in the descriptor, where present) are bound once, at initialize."""
    try:
        compiled = device.compile_operator(device.create_operator(desc()))
    except NOT_YET as error:
        raise h.Unavailable(f"{type(error).__name__}: {str(error).splitlines()[0][:140] if str(error) else ''}") \
            from error
    owned = tuple(slot for slot in owned if inputs[slot] is not None)
    if owned:
        compiled.initialize([dml.Binding(array) if slot in owned and array is not None else None
                             for slot, array in enumerate(inputs)])
    bound_in = [None if array is None or slot in owned else dml.Binding(array) for slot, array in enumerate(inputs)]
    bound_out = [dml.Binding(out)]
    return Runner(name, lambda: compiled.execute(bound_in, bound_out), [out])


def ort_runner(spec: Spec, threads: int) -> Runner:
    """ONNX Runtime on the workload's small model: `threads` intra-op threads, spinning off, default graph
    optimizations, an io_binding of the inputs and the output to OrtValues over the caller's arrays."""
    helper = onnx.helper
    nodes, inputs, initializers = spec.onnx()
    out = np.empty(spec.out_shape, spec.out_dtype)

    def info(name: str, array: Array) -> Any:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    graph = helper.make_graph(nodes, "bench", [info(name, array) for name, array in inputs.items()],
                              [info("Y", out)],
                              [onnx.numpy_helper.from_array(array, name) for name, array in initializers.items()])
    return h.ort_runner(graph, OPSET, IR_VERSION, inputs, {"Y": out}, threads=threads)


# -- one workload -----------------------------------------------------------------------------------------------

@dataclass
class Result:
    label: str
    family: str
    flops: float
    medians: dict[str, float]            # by runner name (PLAIN included)
    bests: dict[str, float]              # the fastest round of each
    missing: dict[str, str]
    problems: list[str]
    errors: dict[str, float]             # max abs error against the reference, by name
    notes: list[str]
    first_call_s: float
    cpu_per_wall: dict[str, float]

    def flagged(self, name: str) -> bool:
        return any(problem.startswith(name + " ") for problem in self.problems)

    def fastest_peer(self) -> tuple[str, float] | None:
        peers = {name: self.medians[name] for name in PEER_NAMES if name in self.medians and not self.flagged(name)}
        if not peers:
            return None
        name = min(peers, key=lambda key: peers[key])
        return name, peers[name]


def compare(got: Array, values: Array, where: tuple[slice, ...], tolerance: float) -> tuple[float, str | None]:
    """(max abs error, a problem or None) of an output's checked part against the float64 reference."""
    part = got[where].astype(np.float64)
    if part.shape != values.shape:
        return math.inf, f"gave shape {part.shape}, expected {values.shape}"
    difference = np.where(np.isnan(part), math.inf, np.abs(part - values))
    error = float(np.max(difference)) if difference.size else 0.0
    scale = max(1.0, float(np.max(np.abs(values))) if values.size else 1.0)
    if error <= tolerance * scale:
        return error, None
    return error, f"differs from the float64 reference by {error:.3g} (at most {tolerance:g} x {scale:.3g})"


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator, smoke: bool,
                   threads: int) -> Result:
    spec = work.build(rng, smoke)
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes = list(spec.notes)

    def new_out() -> Array:
        return np.empty(spec.out_shape, spec.out_dtype)

    start = time.perf_counter()
    mine: Runner | None
    try:
        mine = opendml_runner(device, OPENDML, spec.desc, spec.inputs, new_out(), spec.owned)
        mine.run()
    except h.Unavailable as error:
        mine, missing[OPENDML] = None, f"n/a ({error})"
    except Exception as error:   # a defect, not a missing operator: reported as a mismatch, the peers still timed
        mine, missing[OPENDML] = None, "failed"
        problems.append(f"{OPENDML} raised {type(error).__name__}: {str(error).splitlines()[0][:140]}")
    first_call_s = time.perf_counter() - start if mine is not None else math.nan
    runners = [] if mine is None else [mine]

    def add(name: str, build: Callable[[], Runner] | None, available: bool, why: str = "not installed") -> None:
        if build is None or not available:
            missing[name] = why if build is not None else "n/a (no such operation)"
            return
        try:
            runner = build()
            runner.before()
            runner.run()
        except Exception as error:  # a peer without this operator or type: shown as n/a
            missing[name] = f"n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
            return
        runners.append(runner)

    numpy_call = spec.numpy

    def numpy_runner() -> Runner:
        assert numpy_call is not None
        out = new_out()
        return Runner(NUMPY, numpy_call(out), [out])

    def torch_runner() -> Runner:
        out = new_out()
        return Runner(TORCH, spec.torch(torch.from_numpy(out)), [out],
                      before=h.torch_threads(threads))

    add(NUMPY, numpy_runner if numpy_call is not None else None, True)
    add(TORCH, torch_runner, torch is not None)
    add(ORT, lambda: ort_runner(spec, threads), ort is not None)
    if spec.plain is not None and mine is not None:
        plain_desc, plain_inputs = spec.plain
        try:
            plain = opendml_runner(device, PLAIN, plain_desc, plain_inputs, new_out(), spec.owned)
            plain.run()
            runners.append(plain)
        except h.Unavailable as error:
            missing[PLAIN] = f"n/a ({error})"
        except Exception as error:
            problems.append(f"{PLAIN} raised {type(error).__name__}: {str(error).splitlines()[0][:140]}")

    # Correctness, once, before any timing: every implementation writes into poisoned outputs.
    values, where = spec.reference()
    errors: dict[str, float] = {}
    for runner in runners:
        runner.before()
        for out in runner.outs:
            h.poison(out)
        runner.run()
        got = runner.result()
        if runner.name == PLAIN:
            if np.isnan(got).any():
                problems.append(f"{PLAIN} left NaN in its output")
            continue
        tolerance = (OPENDML_TOLERANCE if runner.name == OPENDML else PEER_TOLERANCE)[np.dtype(spec.out_dtype)]
        errors[runner.name], problem = compare(got, values, where, tolerance)
        if problem is not None:
            problems.append(f"{runner.name} {problem}")
        elif mine is not None and runner is not mine:
            tolerance = PEER_TOLERANCE[np.dtype(spec.out_dtype)]
            scale = max(1.0, float(np.max(np.abs(values))))
            if not np.allclose(got.astype(np.float64), mine.result().astype(np.float64), rtol=tolerance,
                               atol=tolerance * scale):
                difference = float(np.max(np.abs(got.astype(np.float64) - mine.result().astype(np.float64))))
                problems.append(f"{runner.name} differs from opendml's whole output by {difference:.3g}")
    del values

    for runner in runners:  # warm-up: caches, thread pools, page faults
        runner.before()
        runner.run()
    h.time_interleaved(runners, repeat)
    medians = {runner.name: h.median(runner.times) for runner in runners}
    bests = {runner.name: min(runner.times) for runner in runners}
    cpu_per_wall = {runner.name: sum(runner.cpu_times) / sum(runner.times) for runner in runners}
    return Result(work.label, work.family, spec.flops, medians, bests, missing, problems, errors, notes, first_call_s,
                  cpu_per_wall)


# -- report -----------------------------------------------------------------------------------------------------

def cell(result: Result, name: str) -> str:
    """'<ms> <GFLOP/s> <ratio to the fastest peer>' of one implementation, or '-'."""
    seconds = result.medians.get(name)
    if seconds is None:
        return "-!" if result.flagged(name) else "-"
    fastest = result.fastest_peer()
    ratio = f" {seconds / fastest[1]:5.2f}x" if fastest is not None else "      -"
    return f"{seconds * 1e3:8.2f} {result.flops / seconds / 1e9:6.1f}{ratio}" + ("!" if result.flagged(name) else "")


def fused_cell(result: Result) -> str:
    """opendml's fused operator's median over its plain one's, or '' where the workload has no plain twin."""
    if OPENDML not in result.medians or PLAIN not in result.medians:
        return ""
    ratio = result.medians[OPENDML] / result.medians[PLAIN]
    return f"{ratio:.2f}x {'MET' if ratio <= FUSED_TARGET else 'MISSED'}"


def print_table(results: list[Result]) -> None:
    width = max(len("workload"), *(len(result.label) for result in results))
    headers = ["workload".ljust(width), "GFLOP", *COLUMNS, "target", f"fused/plain (<= {FUSED_TARGET}x)"]
    rows = [[result.label.ljust(width), f"{result.flops / 1e9:.2f}", *(cell(result, name) for name in COLUMNS),
             f"<= {GEMM_TARGET}x" if result.family == "GEMM" else f"<= {CONV_TARGET}x, < ORT",
             fused_cell(result)] for result in results]
    widths = [max(len(header), *(len(row[index]) for row in rows)) for index, header in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return " | ".join([cells[0].ljust(widths[0]), *(text.rjust(size) for text, size in
                                                        zip(cells[1:], widths[1:], strict=True))])

    print(line(headers))
    print("-+-".join("-" * size for size in widths))
    for row in rows:
        print(line(row))
    print("(each cell: median ms, GFLOP/s, time over the fastest correct peer's; '!' = result mismatch, see the "
          "checks; '-' = not installed, no such operation, or not implemented yet; target: opendml's time over the "
          "fastest peer's, and for a CONV over ONNX Runtime's; fused/plain: opendml with the C or Bias and the RELU "
          "over opendml without them)")


def verdicts(result: Result) -> tuple[bool, str]:
    """Whether opendml met its targets on the workload, and the line that says so."""
    mine = result.medians.get(OPENDML)
    if mine is None:
        return False, f"MISS  {result.label}: opendml {result.missing.get(OPENDML, 'not run')}"
    parts, met = [], not result.flagged(OPENDML)
    if result.flagged(OPENDML):
        parts.append("opendml's result MISMATCHED")
    target = GEMM_TARGET if result.family == "GEMM" else CONV_TARGET

    def against(other: str, what: str, limit: float, strict: bool = False) -> None:
        """opendml's median over `other`'s against `limit`, with the same ratio of their fastest rounds."""
        nonlocal met
        ratio = mine / result.medians[other]
        ok = ratio < limit if strict else ratio <= limit
        met &= ok
        best = result.bests[OPENDML] / result.bests[other]
        parts.append(f"{ratio:.2f}x {what} (target {'<' if strict else '<='} {limit:g}x; fastest rounds {best:.2f}x) "
                     f"{'MET' if ok else 'MISSED'}")

    fastest = result.fastest_peer()
    if fastest is not None:
        against(fastest[0], f"the fastest peer ({fastest[0]})", target)
    else:
        parts.append("no peer to compare")
    if result.family == "CONV" and ORT in result.medians and not result.flagged(ORT):
        against(ORT, "ONNX Runtime", 1.0, strict=True)
    if PLAIN in result.medians:
        against(PLAIN, "fused/plain", FUSED_TARGET)
    return met, ("OK    " if met else "MISS  ") + f"{result.label}: " + "; ".join(parts)


def print_report(results: list[Result], threads: int) -> None:
    print_table(results)
    print()
    print(f"Targets (opendml's median: GEMM within {GEMM_TARGET}x of the fastest peer's; CONV within {CONV_TARGET}x "
          f"and ahead of ONNX Runtime; fused bias + RELU within {FUSED_TARGET}x of opendml's plain operator):")
    all_met = True
    for result in results:
        met, text = verdicts(result)
        all_met &= met
        print("  " + text)
    print(f"  {'all targets met' if all_met else 'NOT all targets met'}")
    print()
    print(f"Threads (each implementation asked for {threads}; process CPU time / wall time in the timed calls, "
          f"median over the workloads):")
    declared = {
        OPENDML: f"numba.get_num_threads() = {numba.get_num_threads() if numba is not None else '-'}, "
                 f"OPENBLAS_NUM_THREADS = {os.environ.get('OPENBLAS_NUM_THREADS')}",
        PLAIN: "as opendml",
        NUMPY: f"OpenBLAS, OPENBLAS_NUM_THREADS = {os.environ.get('OPENBLAS_NUM_THREADS')}",
        TORCH: f"torch.set_num_threads({threads})" if torch is not None else "-",
        ORT: f"intra_op_num_threads = {threads}, spinning off" if ort is not None else "-",
    }
    for name, text in declared.items():
        shares = [result.cpu_per_wall[name] for result in results if name in result.cpu_per_wall]
        measured = f"CPU/wall {sorted(shares)[len(shares) // 2]:.2f}" if shares else "not run"
        print(f"  {name:<13} {text}; {measured}")
    print()
    print("Checks (each result once, into NaN-poisoned outputs, against the float64 reference: max abs error; every "
          "peer also against opendml's whole output):")
    for result in results:
        errors = ", ".join(f"{name} {error:.2g}" for name, error in result.errors.items())
        first = ("opendml not run" if math.isnan(result.first_call_s) else
                 f"opendml first call (compile + run) {result.first_call_s * 1e3:.0f} ms")
        print(f"  {result.label}: {errors or 'nothing checked'}; {first}")
        for problem in result.problems:
            print(f"    MISMATCH: {problem}")
        for name, why in result.missing.items():
            if why != "not installed":
                print(f"    {name}: {why}")
        for note in result.notes:
            print(f"    {note}")


# -- the gpu column ---------------------------------------------------------------------------------------------

GPU_WORKLOADS = (
    ("GEMM f32 [512,512] x [512,512]", gemm(512, 512, 512)),
    ("CONV 3x3 64->64 [1,64,56,56] pad 1 +bias+RELU", conv(1, 64, 64, (56, 56), 3, pad=1)),
)


def gpu_recording(device: dml.Device, spec: Spec) -> tuple[Callable[[], None], Any]:
    """The workload compiled on the gpu backend over device buffers (its weights initialized once where owned):
    (the execute to record, the output buffer)."""
    compiled = device.compile_operator(device.create_operator(spec.desc()))
    buffers = [None if array is None else device.create_buffer(array) for array in spec.inputs]
    if spec.owned:
        compiled.initialize([dml.Binding(memory) if slot in spec.owned and memory is not None else None
                             for slot, memory in enumerate(buffers)])
    output = device.create_buffer(math.prod(spec.out_shape) * np.dtype(spec.out_dtype).itemsize)
    bound_in = [None if memory is None or slot in spec.owned else dml.Binding(memory)
                for slot, memory in enumerate(buffers)]
    bound_out = [dml.Binding(output)]
    return lambda: compiled.execute(bound_in, bound_out), output


def gpu_column(cpu_device: dml.Device, repeat: int, smoke: bool) -> None:
    """A smaller GEMM and convolution on the cpu and the gpu backend, interleaved: median ms and GFLOP/s of each
    (the gpu timed as bench_gpu.py times it: GPU timestamps around the dispatch, device buffers, reused Bindings)."""
    print("GPU column (opendml's gpu backend beside its cpu backend; on lavapipe the 'GPU' is this CPU):")
    try:
        import bench_gpu as g

        device = dml.Device(backend="gpu")
    except Exception as error:
        print(f"  gpu backend n/a ({type(error).__name__}: {str(error).splitlines()[0][:140] if str(error) else ''})")
        return
    context = device.backend.context  # type: ignore[attr-defined]
    clock = g.GpuClock(device)
    print(f"  adapter: {context.adapter_info}; timing: {clock.method}")
    rng = np.random.default_rng(SEED + 1)
    for label, build in GPU_WORKLOADS:
        spec = build(rng, smoke)
        values, where = spec.reference()
        tolerance = OPENDML_TOLERANCE[np.dtype(spec.out_dtype)]
        timed: dict[str, tuple[Callable[[], float], Array]] = {}   # backend -> (one timed run, its checked output)
        missing = []
        try:
            runner = opendml_runner(cpu_device, "cpu", spec.desc, spec.inputs,
                                    np.empty(spec.out_shape, spec.out_dtype), spec.owned)
            runner.run()
        except h.Unavailable as error:
            missing.append(f"cpu n/a ({error})")
        except Exception as error:
            missing.append(f"cpu MISMATCH: raised {type(error).__name__}: {str(error).splitlines()[0][:100]}")
        else:
            def on_cpu(run: Callable[[], object] = runner.run) -> float:
                began = time.perf_counter()
                run()
                return time.perf_counter() - began

            timed["cpu"] = (on_cpu, runner.outs[0])
        try:
            record, output = gpu_recording(device, spec)
            record()
            timed["gpu"] = (lambda record=record: clock.time(record), output.read(spec.out_dtype, spec.out_shape))
        except NOT_YET as error:
            missing.append(f"gpu n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})")
        except Exception as error:
            missing.append(f"gpu MISMATCH: raised {type(error).__name__}: {str(error).splitlines()[0][:100]}")
        times: dict[str, list[float]] = {name: [] for name in timed}
        for run_once, _ in timed.values():   # warm-up
            run_once()
        for _ in range(repeat):
            for name, (run_once, _) in timed.items():
                times[name].append(run_once())
        cells = []
        for name, (_, got) in timed.items():
            error, problem = compare(got, values, where, tolerance)
            seconds = h.median(times[name])
            cells.append(f"{name} {seconds * 1e3:.2f} ms {spec.flops / seconds / 1e9:.1f} GFLOP/s"
                         + (f" MISMATCH: {problem}" if problem else f" (max abs error {error:.2g})"))
        print(f"  {label}: " + "; ".join(cells + missing))


# -- main -------------------------------------------------------------------------------------------------------

def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a subset of the workloads, 5 rounds (about 2 minutes)")
    parser.add_argument("--smoke", action="store_true", help="every workload at a tiny size, 1 round (a check that "
                                                             "everything runs and agrees; its times say nothing)")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload (default 11, --quick 5)")
    parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text")
    parser.add_argument("--gpu", action="store_true", help="then the gpu column: a smaller GEMM and CONV on the gpu "
                                                           "backend beside the cpu backend")
    parser.add_argument("--threads", type=int, default=THREADS, help="threads of every implementation (default: "
                                                                     "every core)")
    args = parser.parse_args()
    args.repeat = args.repeat if args.repeat is not None else (1 if args.smoke else 5 if args.quick else 11)
    if args.repeat < 1 or args.threads < 1:
        parser.error("--repeat and --threads must be at least 1")
    return args


def main() -> int:
    args = parse_args()
    cpu.COLD_START = False   # numba's kernels from the first call (compiled by this process where not cached)
    if numba is not None:
        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    if torch is not None:
        torch.set_num_threads(args.threads)
    began = time.perf_counter()
    print(f"opendml {dml.__version__} | Python {platform.python_version()} | NumPy {np.__version__} | "
          f"numba {numba.__version__ if numba is not None else '-'} | "
          f"torch {torch.__version__ if torch is not None else '-'} | "
          f"onnxruntime {ort.__version__ if ort is not None else '-'}")
    print(f"{platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, {args.threads} threads per "
          f"implementation, load average {os.getloadavg()[0]:.2f} at start; {args.repeat} interleaved rounds per "
          f"workload" + (" (smoke: tiny shapes, the times say nothing)" if args.smoke else ""))
    if os.getloadavg()[0] > 0.5:
        print("WARNING: the machine is busy (load average above 0.5); timings are noisy")
    device = dml.Device()
    rng = np.random.default_rng(SEED)
    chosen = [work for work in WORKLOADS if (not args.quick or work.quick)
              and (args.only is None or args.only in work.label)]
    results = []
    for work in chosen:
        results.append(bench_workload(device, work, args.repeat, rng, args.smoke, args.threads))
        gc.collect()   # the workload's arrays go before the next one allocates its own
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)
    if results:
        print()
        print_report(results, args.threads)
    if args.gpu:
        print()
        gpu_column(device, args.repeat, args.smoke)
    print()
    print(f"load average {os.getloadavg()[0]:.2f} at end; whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
