#!/usr/bin/env python
"""GPU benchmark: opendml's gpu backend on the CPU benchmarks' workloads, against a device copy and PyTorch CUDA.

    python bench/bench_gpu.py                 # full size: every workload moves at least 256 MiB
    python bench/bench_gpu.py --smoke         # 2 MiB workloads, 3 rounds: a check that everything runs (lavapipe)
    python bench/bench_gpu.py --scale 0.25 --only REDUCE --repeat 21
    python bench/bench_gpu.py --only REDUCE --no-subgroups    # every tree level in workgroup memory, to compare

The workloads are those of bench_reduce.py, bench_split_one_hot.py, bench_gather_nd1.py and bench_mvn.py (their
shapes, data and float64 references), each grown (or, with --scale, shrunk) along its leading dimensions by powers
of two until the operator must move at least 256 MiB (times --scale): the bytes it reads plus the bytes it writes,
the "moved" column. Then two compute-bound workloads from bench_gemm_conv.py (issue 27): GEMM [4096,4096] x
[4096,4096] and ResNet-50's 3x3 64->64 CONVOLUTION on [8,64,56,56] with Bias and a fused RELU (--scale shrinks the
GEMM's sides by its square root and the CONV's batch, then image); their floor says nothing, their target is half
PyTorch CUDA's throughput with TF32 off, and their GFLOP/s are printed. Inputs and outputs live in device memory
(`Device.create_buffer`), bound by reused Bindings, so a timed execute records and submits without host transfers.

Times are GPU times: a timestamp query written at the boundaries of empty compute passes recorded just before and
just after the timed work, in one submission (wgpu's 'timestamp-query'; without it, the host's time of a submit
and a wait, which the output then says). The floor is a device-to-device copy (copy_buffer_to_buffer) of the
workload's large tensor, as in the CPU benchmarks: the input for REDUCE, SPLIT and MVN, the output for ONE_HOT,
the output plus half the indices for GATHER_ND1 (so that the indices are read once). Its time is taken the same
way. PyTorch (when torch.cuda.is_available(), else "n/a") runs the same computation on CUDA into preallocated
outputs where it allows, timed with CUDA events. Each implementation's time is the median of interleaved rounds
(floor, opendml, PyTorch, then again).

Targets on an H100: reductions, SPLIT, ONE_HOT and GATHER_ND1 rows within 1.3x of the floor (the element gather,
whose reads are scattered, 2.5x), MVN 1.5x, none slower than PyTorch CUDA; a compiled operator's execute from
Python under 50 us and a ten-node graph's dispatch under 200 us (host time per call). On other adapters (lavapipe,
a CPU) the table is printed the same way, as a smoke run; its targets say nothing there.

opendml's result is checked once per workload against the CPU benchmarks' float64 references (bit for bit where
the operator only moves data); a workload whose operator the gpu backend does not implement yet, or whose tensors
exceed the adapter's binding limit, is skipped with a note.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import _harness as h
import bench_gather_nd1
import bench_gemm_conv
import bench_mvn
import bench_reduce
import bench_split_one_hot
import numpy as np
from _harness import Array, torch

import opendml as dml
from opendml.ops.arg_min_max import ArgMaxOperatorDesc
from opendml.ops.join import JoinOperatorDesc

MIB = 1 << 20
FULL_BYTES = 256 * MIB
SMOKE_SCALE = 1 / 128
REDUCE_TARGET, MOVE_TARGET, ELEMENT_GATHER_TARGET, MVN_TARGET = 1.3, 1.3, 2.5, 1.5
DISPATCH_TARGET_US, GRAPH_TARGET_US = 50.0, 200.0

#: The timed call of PyTorch: (torch, its device) -> a call computing into preallocated outputs.
TorchCall = Callable[[Any, str], Callable[[], object]]


@dataclass
class Case:
    """One workload at its benchmark size."""

    label: str
    desc: dml.OperatorDesc
    inputs: list[Array | None]          # one per input slot, None for an absent optional input
    moved: int                          # bytes the operator must read plus the bytes it must write
    floor_bytes: int                    # bytes the floor copies
    target: float
    check: Callable[[list[Array]], str | None]   # opendml's outputs (logical arrays) -> a problem, or None
    torch_call: TorchCall
    torch_note: str = ""
    flops: float = 0.0          # a compute-bound workload's (GEMM, CONVOLUTION): its GFLOP/s are printed
    torch_factor: float = 1.0   # the most opendml's time may be over PyTorch CUDA's


# -- sizes --------------------------------------------------------------------------------------------------------

def fitted(shape: Sequence[int], dims: Sequence[int], moved: Callable[[tuple[int, ...]], int], target: int,
           keep: Callable[[tuple[int, ...]], bool] = lambda shape: True) -> tuple[int, ...]:
    """`shape` with dims[0] doubled until the workload moves at least `target` bytes, then each of `dims` in turn
    halved while it still does (and `keep` holds): the smallest such shape, by powers of two."""
    sizes = list(shape)
    while moved(tuple(sizes)) < target:
        sizes[dims[0]] *= 2
    for dim in dims:
        while sizes[dim] % 2 == 0:
            trial = list(sizes)
            trial[dim] //= 2
            if moved(tuple(trial)) < target or not keep(tuple(trial)):
                break
            sizes = trial
    return tuple(sizes)


def nbytes(shape: Sequence[int], dtype: Any) -> int:
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def dims_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(size) for size in shape) + "]"


# -- checks -------------------------------------------------------------------------------------------------------

def close(got: Array, expected: Array, tolerance: float) -> str | None:
    """None when `got` matches the float64 reference within `tolerance` (relative, and absolute over its scale)."""
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    reference = expected.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(reference))) if reference.size else 1.0)
    values = got.astype(np.float64)
    if np.allclose(values, reference, rtol=tolerance, atol=tolerance * scale, equal_nan=True):
        return None
    return f"max abs error {float(np.nanmax(np.abs(values - reference))):.3g} (tolerance {tolerance:g} x {scale:.3g})"


def exact(got: Array, expected: Array) -> str | None:
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    differ = int(np.count_nonzero(got.view(unsigned) != np.ascontiguousarray(expected).view(unsigned)))
    return None if differ == 0 else f"{differ} elements differ"


def tolerance_of(dtype: Any) -> float:
    return 1e-2 if np.dtype(dtype) == np.float16 else 1e-3


# -- workloads ----------------------------------------------------------------------------------------------------

_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}


def reduce_cases(target: int, rng: np.random.Generator) -> list[Callable[[], Case]]:
    def build(base: bench_reduce.Workload) -> Case:
        itemsize = np.dtype(base.dtype).itemsize

        def moved(shape: tuple[int, ...]) -> int:
            out = [1 if axis in base.axes else size for axis, size in enumerate(shape)]
            return nbytes(shape, base.dtype) + nbytes(out, np.uint32 if base.function == "ARGMAX" else base.dtype)

        shape = fitted(base.shape, range(len(base.shape)), moved, target)
        axes = ("axis " if len(base.axes) == 1 else "axes ") + ",".join(str(axis) for axis in base.axes)
        name = {"LOG_SUM_EXP": "LSE", "MULTIPLY": "PROD"}.get(base.function, base.function)
        name += " DECREASING" if base.decreasing else ""
        type_text = "f16 " if itemsize == 2 else ""
        label = f"REDUCE {name} {type_text}{dims_text(shape)} {axes}"
        work = dataclasses.replace(base, label=label, shape=shape)
        x = work.make_input(rng)
        x_desc = dml.TensorDesc(_TYPES[x.dtype], work.shape)
        y_desc = dml.TensorDesc("UINT32" if work.function == "ARGMAX" else _TYPES[x.dtype], work.out_shape)
        desc: dml.OperatorDesc = dml.ReduceOperatorDesc(work.function, x_desc, y_desc, work.axes)
        if work.decreasing:     # DML_OPERATOR_ARGMAX: ties to the last index
            desc = ArgMaxOperatorDesc(x_desc, y_desc, work.axes, axis_direction="DECREASING")
        expected = bench_reduce.reference(work, x)

        def check(outputs: list[Array]) -> str | None:
            got = outputs[0]
            if work.decreasing:     # the reference is the last maximum's index itself
                return None if np.array_equal(got, expected) else "ARGMAX DECREASING: not each row's last maximum"
            if work.function == "ARGMAX":
                picked = np.take_along_axis(x, got.astype(np.int64), axis=work.axes[0]).astype(np.float64)
                return None if np.array_equal(picked, expected) else "ARGMAX returned a position that is no maximum"
            return close(got, expected, tolerance_of(x.dtype))

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tx = torch.from_numpy(x).to(where)
            dims = list(work.axes)
            if work.function == "ARGMAX":
                index = torch.empty(work.out_shape, dtype=torch.int64, device=where)
                if work.decreasing:
                    top = x.shape[dims[0]] - 1

                    def last() -> None:
                        torch.argmax(torch.flip(tx, dims), dim=dims[0], keepdim=True, out=index)
                        index.neg_().add_(top)
                    return last
                return lambda: torch.argmax(tx, dim=dims[0], keepdim=True, out=index)
            out = torch.empty(work.out_shape, dtype=tx.dtype, device=where)
            if work.function == "SUM":
                return lambda: torch.sum(tx, dim=dims, keepdim=True, out=out)
            if work.function == "L2":
                return lambda: torch.linalg.vector_norm(tx, 2, dim=dims, keepdim=True, out=out)
            if work.function == "LOG_SUM_EXP":
                return lambda: torch.logsumexp(tx, dim=dims, keepdim=True, out=out)
            if work.function == "MULTIPLY":
                return lambda: torch.prod(tx, dim=dims[0], keepdim=True, out=out)
            if work.function == "MAX":
                return lambda: torch.amax(tx, dim=dims, keepdim=True, out=out)
            raise ValueError(work.function)

        return Case(label, desc, [x], moved(shape), x.nbytes, REDUCE_TARGET, check, torch_call)

    return [lambda base=base: build(base) for base in bench_reduce.WORKLOADS]  # type: ignore[misc]


def split_one_hot_cases(target: int, rng: np.random.Generator) -> list[Callable[[], Case]]:
    def slices(base: bench_split_one_hot.Workload, verb: str
               ) -> tuple[bench_split_one_hot.Workload, int, Array, list[Array]]:
        """SPLIT's and JOIN's workload grown to the target (every part at least 16 wide along the axis), the bytes
        it moves (the whole tensor read and written once), the whole tensor and its parts."""
        def moved(shape: tuple[int, ...]) -> int:
            return 2 * nbytes(shape, np.float32)

        shape = fitted(base.shape, range(len(base.shape)), moved, target,
                       keep=lambda shape: shape[base.axis] >= 16 * base.parts)
        work = dataclasses.replace(base, shape=shape, label=f"{base.operator} {dims_text(shape)} {verb} "
                                                            f"{base.parts}, axis {base.axis}")
        whole = rng.standard_normal(shape, dtype=np.float32)
        parts = [np.ascontiguousarray(part) for part in np.split(whole, work.parts, work.axis)]
        return work, moved(shape), whole, parts

    def split(base: bench_split_one_hot.Workload) -> Case:
        work, moved, x, parts = slices(base, "in")
        desc = dml.SplitOperatorDesc(dml.TensorDesc("FLOAT32", work.shape),
                                     [dml.TensorDesc("FLOAT32", part.shape) for part in parts], work.axis)

        def check(outputs: list[Array]) -> str | None:
            problems = [exact(got, part) for got, part in zip(outputs, parts, strict=True)]
            return next((problem for problem in problems if problem is not None), None)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tx = torch.from_numpy(x).to(where)
            outs = [torch.empty(part.shape, dtype=tx.dtype, device=where) for part in parts]
            size = parts[0].shape[work.axis]

            def run() -> None:
                for out, view in zip(outs, torch.split(tx, size, dim=work.axis), strict=True):
                    out.copy_(view)

            return run

        return Case(work.label, desc, [x], moved, x.nbytes, MOVE_TARGET, check, torch_call,
                    "copy_ of each torch.split view")

    def join(base: bench_split_one_hot.Workload) -> Case:
        work, moved, joined, parts = slices(base, "from")
        desc = JoinOperatorDesc([dml.TensorDesc("FLOAT32", part.shape) for part in parts],
                                dml.TensorDesc("FLOAT32", work.shape), work.axis)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tparts = [torch.from_numpy(part).to(where) for part in parts]
            out = torch.empty(work.shape, dtype=torch.float32, device=where)
            return lambda: torch.cat(tparts, dim=work.axis, out=out)

        return Case(work.label, desc, parts, moved, joined.nbytes, MOVE_TARGET,
                    lambda outputs: exact(outputs[0], joined), torch_call)

    def one_hot(base: bench_split_one_hot.Workload) -> Case:
        depth = base.depth

        def moved(shape: tuple[int, ...]) -> int:
            return nbytes(shape, np.float32) + shape[0] * 4

        shape = fitted(base.shape, [0], moved, target)
        work = dataclasses.replace(base, label=f"ONE_HOT {shape[0]} INT32 indices, depth {depth}", shape=shape)
        count = shape[0]
        indices = bench_split_one_hot.one_hot_indices(count, depth, rng)
        values = np.array([[0.0, 1.0]], np.float32)
        desc = dml.OneHotOperatorDesc(dml.TensorDesc("INT32", [count, 1]), dml.TensorDesc("FLOAT32", [1, 2]),
                                      dml.TensorDesc("FLOAT32", list(shape)), work.axis)
        expected = bench_split_one_hot.one_hot_expected(indices, depth, 0.0, 1.0)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            positions = np.where(indices < 0, indices.astype(np.int64) + depth, indices.astype(np.int64))
            valid = (positions >= 0) & (positions < depth)
            index = torch.from_numpy(np.where(valid, positions, 0).reshape(count, 1)).to(where)
            out = torch.empty(shape, dtype=torch.float32, device=where)
            return lambda: out.fill_(0.0).scatter_(1, index, 1.0)

        return Case(work.label, desc, [indices.reshape(count, 1), values], moved(shape), nbytes(shape, np.float32),
                    MOVE_TARGET, lambda outputs: exact(outputs[0], expected), torch_call,
                    "fill_ then scatter_ of the in-range positions (int64)")

    builders = {"SPLIT": split, "JOIN": join, "ONE_HOT": one_hot}
    return [lambda base=base: builders[base.operator](base)  # type: ignore[misc]
            for base in bench_split_one_hot.WORKLOADS]


def gather_cases(target: int, rng: np.random.Generator) -> list[Callable[[], Case]]:
    def build(base: bench_gather_nd1.Workload) -> Case:
        # A vector of the free sizes: rows (no batch: input rows and index count grow together) or, batched, the
        # batch count, then the index count per batch.
        def shapes(spec: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
            if base.batch == 0:
                return (spec[0], *base.input_shape[1:]), (spec[0], *base.indices_shape[1:])
            return (spec[0], *base.input_shape[1:]), (spec[0], spec[1], *base.indices_shape[2:])

        def moved(spec: tuple[int, ...]) -> int:
            work = dataclasses.replace(base, input_shape=shapes(spec)[0], indices_shape=shapes(spec)[1])
            out = nbytes(work.out_shape, np.float32)
            return 2 * out + nbytes(work.indices_shape, np.int64)  # the gathered reads, the writes, the indices

        start = (base.input_shape[0],) if base.batch == 0 else (base.input_shape[0], base.indices_shape[1])
        spec = fitted(start, range(len(start)), moved, target)
        input_shape, indices_shape = shapes(spec)
        kind = base.label.split(" [")[0].strip()
        work = dataclasses.replace(base, label=f"GATHER_ND1 {kind} {dims_text(input_shape)} by "
                                               f"{dims_text(indices_shape)}",
                                   input_shape=input_shape, indices_shape=indices_shape)
        x = work.make_input(rng)
        indices = work.make_indices(rng)
        rank = len(work.input_shape)
        desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", work.input_shape),
                                         dml.TensorDesc("INT64", work.indices_shape),
                                         dml.TensorDesc("FLOAT32", work.out_shape), rank, rank, work.batch)
        expected = bench_gather_nd1.reference(work, x, indices)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tx = torch.from_numpy(x).to(where)
            index = torch.from_numpy(indices).to(where)
            out = torch.empty(work.out_shape, dtype=torch.float32, device=where)
            if work.batch == 0 and work.tuple_size == 1:
                rows, flat = out.view(index.shape[0], -1), index.view(-1)
                table = tx.view(tx.shape[0], -1)
                return lambda: torch.index_select(table, 0, flat, out=rows)
            if work.batch == 1 and work.tuple_size == 1:
                batches, count = work.indices_shape[0], work.indices_shape[1]
                table = tx.view(batches, tx.shape[1], -1)
                expanded = index.view(batches, count, 1).expand(batches, count, table.shape[2])
                target_view = out.view(batches, count, -1)
                return lambda: torch.gather(table, 1, expanded, out=target_view)
            if work.batch == 1 and work.tuple_size == 2:
                batches, columns = work.input_shape[0], work.input_shape[2]
                table = tx.view(batches, -1)
                target_view = out.view(batches, -1)
                return lambda: torch.gather(table, 1, index[..., 0] * columns + index[..., 1], out=target_view)
            raise ValueError(work.label)

        floor = nbytes(work.out_shape, np.float32) + indices.nbytes // 2
        target_ratio = ELEMENT_GATHER_TARGET if work.tuple_size > 1 else MOVE_TARGET
        return Case(work.label, desc, [x, indices], moved(spec), floor - floor % 4, target_ratio,
                    lambda outputs: exact(outputs[0], expected), torch_call,
                    "index_select (rows), gather (batched rows; an element gather: on a computed linear index)")

    return [lambda base=base: build(base) for base in bench_gather_nd1.WORKLOADS]  # type: ignore[misc]


def mvn_cases(target: int, rng: np.random.Generator) -> list[Callable[[], Case]]:
    def build(base: bench_mvn.Workload) -> Case:
        def moved(shape: tuple[int, ...]) -> int:
            return 2 * nbytes(shape, base.dtype)

        shape = fitted(base.shape, [0], moved, target)
        form = "LN" if base.is_layer_norm else "IN"
        type_text = "f16 " if np.dtype(base.dtype) == np.float16 else ""
        axes = ("axis " if len(base.axes) == 1 else "axes ") + ",".join(str(axis) for axis in base.axes)
        activation = f" + {base.activation}" if base.activation else ""
        work = dataclasses.replace(base, label=f"MVN {form} {type_text}{dims_text(shape)} {axes}{activation}",
                                   shape=shape)
        x, scale, bias = work.make_inputs(rng)
        data_type = _TYPES[x.dtype]
        x_desc, side_desc = dml.TensorDesc(data_type, work.shape), dml.TensorDesc(data_type, work.side_shape)
        fused = {None: None, "RELU": dml.ActivationReluOperatorDesc, "GELU": dml.ActivationGeluOperatorDesc}[
            work.activation]
        desc = dml.MeanVarianceNormalization1OperatorDesc(x_desc, side_desc, side_desc, x_desc, work.axes, True,
                                                          bench_mvn.EPSILON, None if fused is None else fused())
        # The normalized sets are independent along axis 0: the reference of the first few is enough.
        rows = min(shape[0], 16)
        expected = bench_mvn.reference(dataclasses.replace(work, shape=(rows, *shape[1:])), x[:rows], scale, bias)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            functional = torch.nn.functional
            tx, ts, tb = (torch.from_numpy(array).to(where) for array in (x, scale, bias))

            def normalized() -> Any:
                if work.is_layer_norm:
                    return functional.layer_norm(tx, (shape[-1],), ts.reshape(-1), tb.reshape(-1),
                                                 bench_mvn.EPSILON)
                return functional.instance_norm(tx, weight=ts.reshape(-1), bias=tb.reshape(-1),
                                                eps=bench_mvn.EPSILON)

            if work.activation == "RELU":
                return lambda: normalized().relu_()
            if work.activation == "GELU":
                return lambda: functional.gelu(normalized())
            return normalized

        return Case(work.label, desc, [x, scale, bias], moved(shape), x.nbytes, MVN_TARGET,
                    lambda outputs: close(outputs[0][:rows], expected, tolerance_of(x.dtype)), torch_call,
                    "layer_norm / instance_norm, then the activation (no out= form: they allocate)")

    return [lambda base=base: build(base) for base in bench_mvn.WORKLOADS]  # type: ignore[misc]


def gemm_conv_cases(scale: float, rng: np.random.Generator) -> list[Callable[[], Case]]:
    """Issue 27's GPU workloads, with bench_gemm_conv.py's descriptors, data and float64 references: GEMM
    [4096,4096] x [4096,4096] and ResNet-50's 3x3 64->64 CONVOLUTION on [8,64,56,56] (Bias and a fused RELU), shrunk
    by --scale (the GEMM's sides by its square root, to a power of two; the CONV's batch, then its image sides).
    They are compute-bound: the floor (a copy of the output) says nothing, and the target is half PyTorch CUDA's
    throughput with TF32 off."""
    side = 4096 if scale >= 1 else max(16, 2 ** int(math.log2(4096 * math.sqrt(scale))))
    batch = max(1, round(8 * scale))
    image = 56 if 8 * scale >= 1 else max(4, int(56 * math.sqrt(8 * scale)))

    def case(label: str, spec: bench_gemm_conv.Spec, torch_call: TorchCall, note: str) -> Case:
        values, where = spec.reference()
        tolerance = bench_gemm_conv.OPENDML_TOLERANCE[np.dtype(spec.out_dtype)]
        out_bytes = nbytes(spec.out_shape, spec.out_dtype)
        moved = sum(array.nbytes for array in spec.inputs if array is not None) + out_bytes
        return Case(f"{label} ({spec.flops / 1e9:.3g} GFLOP)", spec.desc(), list(spec.inputs), moved, out_bytes,
                    math.inf, lambda outputs: bench_gemm_conv.compare(outputs[0].reshape(spec.out_shape), values, where,
                                                                          tolerance)[1],
                    torch_call, note, flops=spec.flops, torch_factor=2.0)

    def no_tf32(torch: Any) -> None:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def gemm() -> Case:
        spec = bench_gemm_conv.gemm(side, side, side)(rng, False)
        a, b = spec.inputs[0], spec.inputs[1]

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            no_tf32(torch)
            ta, tb = torch.from_numpy(a).to(where), torch.from_numpy(b).to(where)
            out = torch.empty(spec.out_shape, dtype=torch.float32, device=where)
            return lambda: torch.matmul(ta, tb, out=out)

        return case(f"GEMM f32 {dims_text(a.shape)} x {dims_text(b.shape)}", spec, torch_call, "matmul(out=), TF32 off")

    def convolution() -> Case:
        spec = bench_gemm_conv.conv(batch, 64, 64, (image, image), 3, pad=1, owned_weights=False)(rng, False)
        x, w, bias = (array for array in spec.inputs if array is not None)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            no_tf32(torch)
            tx, tw, tb = (torch.from_numpy(array).to(where) for array in (x, w, bias))
            out = torch.empty(spec.out_shape, dtype=torch.float32, device=where)
            conv2d = torch.nn.functional.conv2d
            return lambda: torch.clamp_min(conv2d(tx, tw, tb, padding=1), 0, out=out)

        return case(f"CONVOLUTION 3x3 64->64 {dims_text(x.shape)} pad 1 +bias+RELU", spec, torch_call,
                    "conv2d (cuDNN, TF32 off), then clamp_min(out=)")

    return [gemm, convolution]


# -- timing -------------------------------------------------------------------------------------------------------

def _timestamp_period_ns(queue: Any) -> tuple[float, str]:
    """Nanoseconds per timestamp tick (wgpu-native resolves raw ticks), and how it was found."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib

        return float(lib.wgpuQueueGetTimestampPeriod(queue._internal)), "wgpuQueueGetTimestampPeriod"
    except Exception as error:  # an older or other wgpu backend
        return 1.0, f"assumed 1 ns per tick ({type(error).__name__})"


def wait_idle(context: Any) -> None:
    """Returns once the GPU has finished everything submitted so far (a read waits for it)."""
    with context.lock:
        marker = getattr(context, "_bench_marker", None)
        if marker is None:
            marker = context._bench_marker = context.allocate(4)
    context.read(marker, 0, 4)


class GpuClock:
    """Times recorded GPU work: timestamps at the boundaries of empty compute passes around it, in the same
    submission (or, without 'timestamp-query', the host's time of the submit and a wait)."""

    def __init__(self, device: dml.Device) -> None:
        context = device.backend.context  # type: ignore[attr-defined]
        self.context = context
        self.on_gpu = "timestamp-query" in context.features
        if self.on_gpu:
            wgpu = context.wgpu
            self.queries = context.device.create_query_set(type="timestamp", count=2)
            self.resolved = context.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
            self.period_ns, self.period_source = _timestamp_period_ns(context.queue)

    @property
    def method(self) -> str:
        if self.on_gpu:
            return (f"GPU timestamp queries at compute-pass boundaries ({self.period_ns:g} ns per tick, "
                    f"{self.period_source})")
        return ("HOST timing of a submit and a wait: the adapter lacks 'timestamp-query' (times include the "
                "submission and the wait)")

    def _mark(self, index: int) -> None:
        recorder = self.context.recorder()[0]   # the batch's
        recorder.end_pass()
        where = "beginning_of_pass_write_index" if index == 0 else "end_of_pass_write_index"
        recorder.encoder.begin_compute_pass(timestamp_writes={"query_set": self.queries, where: index}).end()

    def time(self, record: Callable[[], object]) -> float:
        """Seconds the GPU spent on what `record` records (executes, copies), recorded into one batch."""
        context = self.context
        if not self.on_gpu:
            start = time.perf_counter()
            with context.batch():
                record()
            wait_idle(context)
            return time.perf_counter() - start
        with context.batch():
            self._mark(0)
            record()
            self._mark(1)
            context.recorder()[0].encoder.resolve_query_set(self.queries, 0, 2, self.resolved, 0)
        start, end = (int(value) for value in np.frombuffer(context.queue.read_buffer(self.resolved), np.uint64))
        return (end - start) * self.period_ns * 1e-9

    def copy(self, source: Any, target: Any, size: int) -> Callable[[], None]:
        """The floor's recording: a device-to-device copy of `size` bytes."""
        return lambda: self.context.recorder()[0].copy(source.handle, 0, target.handle, 0, size)


def torch_device(requested: str) -> str | None:
    """The PyTorch device the peer runs on: CUDA when available (or cpu when asked, to try the peer's code)."""
    if torch is None:
        return None
    if requested == "cpu":
        return "cpu"
    return "cuda" if torch.cuda.is_available() else None


def torch_time(call: Callable[[], object], where: str) -> float:
    if where == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) * 1e-3
    begin = time.perf_counter()
    call()
    return time.perf_counter() - begin


# -- one workload ---------------------------------------------------------------------------------------------------

@dataclass
class Row:
    label: str
    moved: int
    target: float
    mine_s: float | None = None
    floor_s: float | None = None
    torch_s: float | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    torch_note: str = ""
    flops: float = 0.0
    torch_factor: float = 1.0


def skipped_reason(error: BaseException) -> str | None:
    """Why a workload cannot run on this backend or adapter (a kernel not written yet, a tensor too big for one
    binding), or None for a real error."""
    text = str(error)
    if isinstance(error, ModuleNotFoundError) and "opendml.backends.gpu." in text:
        return f"no gpu kernel yet ({text})"
    if isinstance(error, dml.UnsupportedError):
        return text
    return None


def bench_case(device: dml.Device, clock: GpuClock, case: Case, repeat: int, torch_where: str | None) -> Row:
    row = Row(case.label, case.moved, case.target, flops=case.flops, torch_factor=case.torch_factor)
    try:
        compiled = device.compile_operator(device.create_operator(case.desc))
    except (dml.UnsupportedError, ModuleNotFoundError) as error:
        reason = skipped_reason(error)
        if reason is None:
            raise
        row.notes.append(f"skipped: {reason}")
        return row
    inputs = [None if array is None else device.create_buffer(array) for array in case.inputs]
    output_descs = [tensor for _, tensor in case.desc.output_slots()]
    outputs = [device.create_buffer(tensor.total_tensor_size_in_bytes) for tensor in output_descs]
    in_bindings = [None if memory is None else dml.Binding(memory) for memory in inputs]
    out_bindings = [dml.Binding(memory) for memory in outputs]

    def mine() -> None:
        compiled.execute(in_bindings, out_bindings)

    mine()
    results = [memory.read(tensor.data_type.numpy_dtype, tensor.sizes) for memory, tensor in
               zip(outputs, output_descs, strict=True)]
    problem = case.check(results)
    if problem is not None:
        row.notes.append(f"MISMATCH: opendml's result: {problem}")
    del results
    source, target = device.create_buffer(case.floor_bytes), device.create_buffer(case.floor_bytes)
    floor = clock.copy(source, target, case.floor_bytes)

    torch_call: Callable[[], object] | None = None
    if torch_where is not None:
        try:
            torch_call = case.torch_call(torch, torch_where)
            torch_call()
            row.torch_note = case.torch_note
        except Exception as error:  # a peer without this operator or type: n/a
            row.notes.append(f"PyTorch n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})")
            torch_call = None

    times: dict[str, list[float]] = {"floor": [], "mine": [], "torch": []}
    clock.time(floor)  # warm-up
    clock.time(mine)
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            times["floor"].append(clock.time(floor))
            times["mine"].append(clock.time(mine))
            if torch_call is not None:
                times["torch"].append(torch_time(torch_call, torch_where or "cpu"))
    finally:
        gc.enable()
    row.floor_s = statistics.median(times["floor"])
    row.mine_s = statistics.median(times["mine"])
    row.torch_s = statistics.median(times["torch"]) if times["torch"] else None
    return row


# -- dispatch overhead ----------------------------------------------------------------------------------------------

def dispatch_overheads(device: dml.Device, count: int) -> list[tuple[str, float | None, float | None, str]]:
    """(what, host microseconds per call or None, target or None, note)."""
    lines: list[tuple[str, float | None, float | None, str]] = []
    context = device.backend.context  # type: ignore[attr-defined]

    def operator_line(label: str, desc: dml.OperatorDesc, arrays: list[Array]) -> None:
        try:
            compiled = device.compile_operator(device.create_operator(desc))
        except (dml.UnsupportedError, ModuleNotFoundError) as error:
            reason = skipped_reason(error)
            if reason is None:
                raise
            lines.append((label, None, DISPATCH_TARGET_US, f"skipped: {reason}"))
            return
        inputs = [dml.Binding(device.create_buffer(array)) for array in arrays]
        outputs = [dml.Binding(device.create_buffer(tensor.total_tensor_size_in_bytes))
                   for _, tensor in desc.output_slots()]
        micros = h.per_call_us(lambda: compiled.execute(inputs, outputs), count)
        wait_idle(context)
        lines.append((label, micros, DISPATCH_TARGET_US, ""))

    f32 = dml.DataType.FLOAT32
    operator_line("execute, SPLIT [4,8] into 2, device buffers, reused Bindings",
                  dml.SplitOperatorDesc(dml.TensorDesc(f32, [4, 8]), [dml.TensorDesc(f32, [4, 4])] * 2, 1),
                  [np.ones((4, 8), np.float32)])
    operator_line("execute, REDUCE SUM [16,16] axis 1, device buffers, reused Bindings",
                  dml.ReduceOperatorDesc("SUM", dml.TensorDesc(f32, [16, 16]), dml.TensorDesc(f32, [16, 1]), [1]),
                  [np.ones((16, 16), np.float32)])

    # A ten-node graph: a chain of ten SPLITs, each halving the last axis of the one before.
    graph = dml.Graph(device)
    x = graph.input([4, 1024], "FLOAT32", name="x")
    steps: list[tuple[dml.Expression, list[dml.Expression]]] = []
    current = x
    for _ in range(10):
        halves = dml.split(current, 1, [current.sizes[1] // 2] * 2)
        steps.append((current, halves))
        current = halves[0]
    compiled_graph = graph.compile([current])
    array = np.arange(4096, dtype=np.float32).reshape(4, 1024)
    assert np.array_equal(compiled_graph({"x": array})[0], array[:, :1])
    plan = [(compiled, [compiled_graph.binding_of(source)], [compiled_graph.binding_of(half) for half in halves])
            for compiled, (source, halves) in zip(compiled_graph.steps, steps, strict=True)]

    def graph_dispatch() -> None:
        with device.batch():
            for compiled, inputs, outputs in plan:
                compiled.execute(inputs, outputs)

    graph_count = max(50, count // 10)
    compiled_graph.run()    # the first run captures the nodes' dispatches; later runs replay them
    micros = h.per_call_us(compiled_graph.run, graph_count)
    wait_idle(context)
    lines.append(("ten-node graph (10 SPLITs) dispatch: CompiledGraph.run() on its device buffers", micros,
                  GRAPH_TARGET_US, ""))
    micros = h.per_call_us(graph_dispatch, graph_count)
    wait_idle(context)
    lines.append(("the same ten nodes as ten executes in one Device.batch() on the graph's buffers", micros, None,
                  ""))
    micros = h.per_call_us(lambda: compiled_graph({"x": array}), graph_count)
    lines.append(("ten-node graph call, NumPy in and out (upload, one submission, read-back and wait)", micros, None,
                  ""))
    return lines


# -- report -------------------------------------------------------------------------------------------------------

def size_text(count: int) -> str:
    return f"{count / MIB:.1f} MiB" if count >= MIB else f"{count / 1024:.1f} KiB"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f} ms"


def print_table(rows: list[Row], torch_label: str) -> None:
    headers = ["workload", "bytes moved", "opendml GPU", "floor", "ratio", torch_label, "target"]
    cells = []
    for row in rows:
        ratio = None if row.mine_s is None or not row.floor_s else row.mine_s / row.floor_s
        if row.mine_s is None:
            mine, verdict = "skipped", "-"
        else:
            assert ratio is not None
            mine = ms(row.mine_s)
            met = ratio <= row.target and (row.torch_s is None or row.mine_s <= row.torch_factor * row.torch_s)
            verdict = (f"<= {row.torch_factor:g}x PyTorch " if math.isinf(row.target) else
                       f"<= {row.target:.1f}x ") + ("MET" if met else "MISSED")
            if any(note.startswith("MISMATCH") for note in row.notes):
                mine += "!"
        torch_cell = "n/a" if row.torch_s is None else ms(row.torch_s)
        cells.append([row.label, size_text(row.moved), mine, ms(row.floor_s),
                      "-" if ratio is None else f"{ratio:.2f}x", torch_cell, verdict])
    widths = [max(len(header), *(len(line[index]) for line in cells)) for index, header in enumerate(headers)]

    def line(values: list[str]) -> str:
        return " | ".join([values[0].ljust(widths[0]), *(value.rjust(width) for value, width in
                                                         zip(values[1:], widths[1:], strict=True))])

    print(line(headers))
    print("-+-".join("-" * width for width in widths))
    for values in cells:
        print(line(values))
    print("(times: medians over the rounds; ratio: opendml / floor; target: opendml's ratio on an H100, and not "
          "slower than PyTorch CUDA; '!' = opendml's result mismatched, see the notes)")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help=f"workloads of {FULL_BYTES * SMOKE_SCALE / MIB:g} MiB, 3 rounds, fewer dispatch calls: "
                             f"a check that everything runs (lavapipe)")
    parser.add_argument("--scale", type=float, default=None,
                        help="the bytes each workload moves, as a fraction of 256 MiB (default 1, or 1/128 with "
                             "--smoke)")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload (default 11, 3 with "
                                                                 "--smoke)")
    parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text")
    parser.add_argument("--adapter", default=None, help="part of the adapter's name (default: the high-performance "
                                                        "adapter)")
    parser.add_argument("--no-subgroups", action="store_true",
                        help="run every level of the reductions' trees in workgroup memory, not the lowest ones in "
                             "registers with subgroup shuffles where the adapter offers them (to compare the two)")
    parser.add_argument("--torch-device", choices=("cuda", "cpu"), default="cuda",
                        help="where PyTorch runs: cuda when available (else n/a); cpu only to try the peer's code "
                             "on a machine without CUDA (its times are then no CUDA times)")
    args = parser.parse_args()
    args.scale = args.scale if args.scale is not None else (SMOKE_SCALE if args.smoke else 1.0)
    args.repeat = args.repeat if args.repeat is not None else (3 if args.smoke else 11)
    if args.scale <= 0 or args.repeat < 1:
        parser.error("--scale must be positive and --repeat at least 1")
    args.dispatch_count = 300 if args.smoke else 5000
    return args


def main() -> int:
    args = parse_args()
    began = time.perf_counter()
    device = dml.Device(backend="gpu", adapter=args.adapter)
    context = device.backend.context  # type: ignore[attr-defined]
    if args.no_subgroups:
        context.subgroup_width = 0
    clock = GpuClock(device)
    where = torch_device(args.torch_device)
    torch_label = "PyTorch CUDA" if where != "cpu" else "PyTorch (cpu!)"
    print(f"opendml {dml.__version__} | Python {platform.python_version()} | NumPy {np.__version__} | wgpu "
          f"{context.wgpu.__version__} | torch {torch.__version__ if torch is not None else '-'}")
    print(f"adapter: {context.adapter_info}; features: {', '.join(sorted(context.features)) or 'none'}; "
          f"max-storage-buffer-binding-size {context.max_binding_size} bytes")
    print(f"timing: {clock.method}")
    print("reduction trees: " + (f"levels less than {context.subgroup_width} invocations apart in registers "
                                 f"(subgroup shuffles)" if context.subgroup_width else "all in workgroup memory"))
    if where is None:
        print("PyTorch CUDA: n/a (" + ("torch is not installed" if torch is None else
                                       "torch.cuda.is_available() is False") + ")")
    elif where == "cuda":
        print(f"PyTorch CUDA: {torch.cuda.get_device_name(0)}, timed with CUDA events")
    else:
        print("PyTorch on the CPU (--torch-device cpu): its column is no CUDA time")
    target = max(4096, int(FULL_BYTES * args.scale))
    print(f"workloads moving at least {size_text(target)} each; {args.repeat} interleaved rounds; "
          f"{os.cpu_count()} CPUs, {platform.machine()}")
    if args.scale < 1:
        print("(scaled down: a smoke run; the targets are for full-size workloads on an H100)")
    print()

    rng = np.random.default_rng(13)
    builders = [*reduce_cases(target, rng), *split_one_hot_cases(target, rng), *gather_cases(target, rng),
                *mvn_cases(target, rng), *gemm_conv_cases(args.scale, rng)]
    rows: list[Row] = []
    for build in builders:
        case = build()
        if args.only is not None and args.only not in case.label:
            continue
        rows.append(bench_case(device, clock, case, args.repeat, where))
        del case
        gc.collect()
        print(f"  done: {rows[-1].label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)

    print_table(rows, torch_label)
    notes = [(row.label, note) for row in rows for note in row.notes]
    if notes:
        print()
        print("Notes:")
        for label, note in notes:
            print(f"  {label}: {note}")
    throughput = [row for row in rows if row.flops and row.mine_s is not None]
    if throughput:
        print()
        print("Throughput of the compute-bound workloads (target: at least 1/2 of PyTorch CUDA's, TF32 off):")
        for row in throughput:
            assert row.mine_s is not None
            theirs = "n/a" if row.torch_s is None else f"{row.flops / row.torch_s / 1e9:.1f} GFLOP/s"
            print(f"  {row.label}: opendml {row.flops / row.mine_s / 1e9:.1f} GFLOP/s, PyTorch CUDA {theirs}")
    peers = {f"{row.label.split()[0]}: {row.torch_note}": None for row in rows if row.torch_note}
    if peers:
        print()
        print("PyTorch runs (where it differs from a plain call into preallocated outputs):")
        for text in peers:
            print(f"  {text}")
    print()
    print(f"Dispatch from Python (host time per call, median of {args.dispatch_count}; targets on an H100):")
    for label, micros, goal, note in dispatch_overheads(device, args.dispatch_count):
        value = "skipped" if micros is None else f"{micros:9.1f} us"
        mark = "" if goal is None or micros is None else (f"  (target < {goal:.0f} us: "
                                                          f"{'MET' if micros < goal else 'MISSED'})")
        print(f"  {label:<95} {value}{mark}{'  ' + note if note else ''}")
    print()
    print(f"whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
