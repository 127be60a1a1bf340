#!/usr/bin/env python
"""GPU benchmark: opendml's gpu backend on the CPU benchmarks' workloads, against a device copy and PyTorch CUDA.

    python bench/bench_gpu.py                 # full size: every workload moves at least 256 MiB
    python bench/bench_gpu.py --smoke         # 2 MiB workloads, 3 rounds: a check that everything runs (lavapipe)
    python bench/bench_gpu.py --scale 0.25 --only REDUCE --repeat 21
    python bench/bench_gpu.py --only REDUCE --no-subgroups    # every tree level in workgroup memory, to compare
    python bench/bench_gpu.py --scale 0.125 --host-clock      # issue 29's table at its sizes, timed its way

The workloads are those of bench_reduce.py, bench_split_one_hot.py, bench_gather_nd1.py and bench_mvn.py (their
shapes, data and float64 references), each grown (or, with --scale, shrunk) along its leading dimensions by powers
of two until the operator must move at least 256 MiB (times --scale): the bytes it reads plus the bytes it writes,
the "moved" column. Then two compute-bound workloads from bench_gemm_conv.py (issue 27): GEMM [4096,4096] x
[4096,4096] and ResNet-50's 3x3 64->64 CONVOLUTION on [8,64,56,56] with Bias and a fused RELU (--scale shrinks the
GEMM's sides by its square root and the CONV's batch, then image); their floor says nothing, their target is half
PyTorch CUDA's throughput with TF32 off, and their GFLOP/s are printed. Inputs and outputs live in device memory
(`Device.create_buffer`), bound by reused Bindings, so a timed execute records and submits without host transfers.
Last, issue 29's workloads (ACTIVATION_RELU and _SIGMOID, SPLIT, JOIN, REDUCE SUM, ARGMAX, MVN1, GATHER_ND1 rows,
ONE_HOT; exactly the issue's sizes, 32 MiB FLOAT32 tensors, at --scale 0.125) and one workload for each family
specialized beside them (ELEMENT_WISE_ADD, a SLICE window); those that coincide with one above are not run twice.

Each workload also runs its minimal shader (issue 29's method): a small WGSL kernel written in this file for that
one shape, doing the same job on the same bytes (one invocation per output element with the sizes as constants,
or one work-group per row with a workgroup-memory tree; nothing clever), on its own copies of the inputs, its
result checked like opendml's and its time taken the same way. The "minimal" column is its time, "/minimal"
opendml's over it, and the geometric mean of those ratios is printed under the table (issue 29's target on
lavapipe: every workload within 1.5x of its minimal shader, the geometric mean within 1.2x).

Times are GPU times: a timestamp query written at the boundaries of empty compute passes recorded just before and
just after the timed work, in one submission (wgpu's 'timestamp-query'; without it, or with --host-clock, the host's
clock around the recording, its submission and a 4-byte read that waits for it, median of 5 rounds by default: issue
29's method, which the output then says). The floor is a device-to-device copy (copy_buffer_to_buffer) of the
workload's large tensor, as in the CPU benchmarks: the input for REDUCE, SPLIT and MVN, the output for ONE_HOT, the
output plus half the indices for GATHER_ND1 (so that the indices are read once). Its time is taken the same way.
PyTorch (when torch.cuda.is_available(), else "n/a") runs the same computation on CUDA into preallocated outputs
where it allows, timed with CUDA events. Each implementation's time is the median of interleaved rounds (floor,
opendml, the minimal shader, PyTorch, then again).

Targets on an H100: reductions, SPLIT, ONE_HOT and GATHER_ND1 rows within 1.3x of the floor (the element gather,
whose reads are scattered, 2.5x), MVN 1.5x, none slower than PyTorch CUDA; a compiled operator's execute from
Python under 50 us and a ten-node graph's dispatch under 200 us (host time per call: each dispatch line gives the
wall time of a call made once the device has finished all earlier work, 'idle', which the target is read against;
the calling thread's CPU time of calls made back to back; and their wall time, which on lavapipe, where the device
is the CPU, is the device's time per call). On other adapters (lavapipe, a CPU) the table is printed the same way,
as a smoke run; its copy-floor targets say nothing there.

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
MINIMAL_TARGET, MINIMAL_GEOMEAN_TARGET = 1.5, 1.2   # issue 29: opendml over its minimal shader (lavapipe)

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
    minimal: Minimal | None = None  # the minimal shader of this shape (see "minimal shaders" below)


# -- sizes --------------------------------------------------------------------------------------------------------

def fitted(shape: Sequence[int], dims: Sequence[int], moved: Callable[[tuple[int, ...]], int], target: int | None,
           keep: Callable[[tuple[int, ...]], bool] = lambda shape: True) -> tuple[int, ...]:
    """`shape` with dims[0] doubled until the workload moves at least `target` bytes, then each of `dims` in turn
    halved while it still does (and `keep` holds): the smallest such shape, by powers of two. A target of None
    keeps `shape` as it is (issue 29's workloads, at their own sizes)."""
    sizes = list(shape)
    if target is None:
        return tuple(sizes)
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


def count_text(count: int) -> str:
    return f"{count // MIB}M" if count % MIB == 0 else str(count)


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


def reduce_cases(target: int | None, rng: np.random.Generator,
                 workloads: Sequence[bench_reduce.Workload] = bench_reduce.WORKLOADS
                 ) -> list[Callable[[], Case]]:
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

        function = "ARGMAX DECREASING" if work.decreasing else work.function
        return Case(label, desc, [x], moved(shape), x.nbytes, REDUCE_TARGET, check, torch_call,
                    minimal=minimal_reduce(function, work.shape, work.axes, x.dtype))

    return [lambda base=base: build(base) for base in workloads]  # type: ignore[misc]


def split_one_hot_cases(target: int | None, rng: np.random.Generator,
                        workloads: Sequence[bench_split_one_hot.Workload] = bench_split_one_hot.WORKLOADS
                        ) -> list[Callable[[], Case]]:
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
                    "copy_ of each torch.split view", minimal=minimal_parts(work.shape, work.axis, work.parts, False))

    def join(base: bench_split_one_hot.Workload) -> Case:
        work, moved, joined, parts = slices(base, "from")
        desc = JoinOperatorDesc([dml.TensorDesc("FLOAT32", part.shape) for part in parts],
                                dml.TensorDesc("FLOAT32", work.shape), work.axis)

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tparts = [torch.from_numpy(part).to(where) for part in parts]
            out = torch.empty(work.shape, dtype=torch.float32, device=where)
            return lambda: torch.cat(tparts, dim=work.axis, out=out)

        return Case(work.label, desc, parts, moved, joined.nbytes, MOVE_TARGET,
                    lambda outputs: exact(outputs[0], joined), torch_call,
                    minimal=minimal_parts(work.shape, work.axis, work.parts, True))

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
                    "fill_ then scatter_ of the in-range positions (int64)", minimal=minimal_one_hot(count, depth))

    builders = {"SPLIT": split, "JOIN": join, "ONE_HOT": one_hot}
    return [lambda base=base: builders[base.operator](base)  # type: ignore[misc]
            for base in workloads]


def gather_cases(target: int | None, rng: np.random.Generator,
                 workloads: Sequence[bench_gather_nd1.Workload] = bench_gather_nd1.WORKLOADS
                 ) -> list[Callable[[], Case]]:
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
        # Batched: the index count grows (and shrinks) first, the batch only after, so that the table stays within
        # a binding where the indices are few (a gather of a few rows from each of many batches).
        spec = fitted(start, range(len(start))[::-1], moved, target)
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
                    "index_select (rows), gather (batched rows; an element gather: on a computed linear index)",
                    minimal=minimal_gather(work.input_shape, work.indices_shape, work.batch))

    return [lambda base=base: build(base) for base in workloads]  # type: ignore[misc]


def minimal_mvn_of(work: bench_mvn.Workload) -> Minimal:
    """The minimal MVN1 of a bench_mvn workload (its axes trailing; Scale and Bias per column or per channel)."""
    length = math.prod(work.shape[axis] for axis in work.axes)
    side = "k" if work.side_shape[-1] == work.shape[-1] else f"g % {work.shape[1]}u"
    return minimal_mvn(math.prod(work.shape) // length, length, side, work.activation, bench_mvn.EPSILON, work.dtype)


def mvn_cases(target: int | None, rng: np.random.Generator,
              workloads: Sequence[bench_mvn.Workload] = bench_mvn.WORKLOADS
              ) -> list[Callable[[], Case]]:
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
                    "layer_norm / instance_norm, then the activation (no out= form: they allocate)",
                    minimal=minimal_mvn_of(work))

    return [lambda base=base: build(base) for base in workloads]  # type: ignore[misc]


def issue_cases(scale: float, rng: np.random.Generator) -> list[Callable[[], Case]]:
    """Issue 29's table at its own sizes with --scale 0.125 (32 MiB FLOAT32 tensors: [2048,4096], 8M elements, a
    [131072,64] table, ...), their leading dimension scaled with --scale; and a workload for each family the
    specialization covers beside them: an element-wise binary operator (ELEMENT_WISE_ADD) and a data-movement one
    (SLICE, a window of columns)."""
    def lead(size: int) -> int:
        return max(1, int(size * scale * 8))

    rows, width = lead(2048), 4096
    shape = (rows, width)
    f32 = "FLOAT32"

    def unary(name: str, desc_type: Any, expected: Callable[[Array], Array], wgsl: str,
              torch_op: Callable[[Any, Any, Any], object]) -> Callable[[], Case]:
        def build() -> Case:
            x = rng.standard_normal(shape, dtype=np.float32)
            desc = desc_type(input_tensor=dml.TensorDesc(f32, shape), output_tensor=dml.TensorDesc(f32, shape))
            reference = expected(x.astype(np.float64))

            def torch_call(torch: Any, where: str) -> Callable[[], object]:
                tx = torch.from_numpy(x).to(where)
                out = torch.empty(shape, dtype=tx.dtype, device=where)
                return lambda: torch_op(torch, tx, out)

            return Case(f"{name} {dims_text(shape)} ({count_text(x.size)} elements)", desc, [x], 2 * x.nbytes, x.nbytes,
                        MOVE_TARGET, lambda outputs: close(outputs[0], reference, 1e-5), torch_call,
                        minimal=minimal_map(x.size, wgsl))
        return build

    def add() -> Case:
        a, b = (rng.standard_normal(shape, dtype=np.float32) for _ in range(2))
        tensor = dml.TensorDesc(f32, shape)
        desc = dml.ElementWiseAddOperatorDesc(tensor, tensor, tensor)
        expected = a + b

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            ta, tb = torch.from_numpy(a).to(where), torch.from_numpy(b).to(where)
            out = torch.empty(shape, dtype=ta.dtype, device=where)
            return lambda: torch.add(ta, tb, out=out)

        return Case(f"ELEMENT_WISE_ADD {dims_text(shape)} + {dims_text(shape)}", desc, [a, b], 3 * a.nbytes,
                    a.nbytes, MVN_TARGET, lambda outputs: exact(outputs[0], expected), torch_call,
                    minimal=minimal_map(a.size, "a + b", arity=2))

    def window() -> Case:
        x = rng.standard_normal(shape, dtype=np.float32)
        start, size = width // 4, width // 2
        expected = np.ascontiguousarray(x[:, start:start + size])
        desc = dml.SliceOperatorDesc(dml.TensorDesc(f32, shape), dml.TensorDesc(f32, expected.shape), 2,
                                     [0, start], list(expected.shape), [1, 1])

        def torch_call(torch: Any, where: str) -> Callable[[], object]:
            tx = torch.from_numpy(x).to(where)
            out = torch.empty(expected.shape, dtype=tx.dtype, device=where)
            return lambda: out.copy_(tx[:, start:start + size])

        body = f"    y[i] = x[(i / {size}u) * {width}u + {start}u + i % {size}u];"
        minimal = Minimal((per_element(expected.size, [("x", "u32", False), ("y", "u32", True)], body, (0, 1)),))
        return Case(f"SLICE {dims_text(shape)} columns {start}:{start + size}", desc, [x], 2 * expected.nbytes,
                    expected.nbytes, MOVE_TARGET, lambda outputs: exact(outputs[0], expected), torch_call,
                    "copy_ of the sliced view", minimal=minimal)

    relu = unary("ACTIVATION_RELU", dml.ActivationReluOperatorDesc, lambda x: np.maximum(x, 0.0), "max(a, 0.0)",
                 lambda torch, tx, out: torch.clamp_min(tx, 0, out=out))
    sigmoid = unary("ACTIVATION_SIGMOID", dml.ActivationSigmoidOperatorDesc, lambda x: 1.0 / (1.0 + np.exp(-x)),
                    "1.0 / (1.0 + exp(-a))", lambda torch, tx, out: torch.sigmoid(tx, out=out))
    table = lead(131072)
    movement = [bench_split_one_hot.Workload("", "SPLIT", shape, 1, parts=2),
                bench_split_one_hot.Workload("", "JOIN", shape, 1, parts=2),
                bench_split_one_hot.Workload("", "ONE_HOT", (table, 64), 1, depth=64)]
    reductions = [bench_reduce.Workload("", "SUM", shape, (1,)), bench_reduce.Workload("", "SUM", shape, (0,)),
                  bench_reduce.Workload("", "ARGMAX", shape, (1,))]
    return [relu, sigmoid, add, window, *split_one_hot_cases(None, rng, movement),
            *reduce_cases(None, rng, reductions),
            *mvn_cases(None, rng, [bench_mvn.Workload("", shape, (1,), (1, width), None)]),
            *gather_cases(None, rng, [bench_gather_nd1.Workload("rows", (table, 64), (table, 1), 0, MOVE_TARGET)])]


def gemm_conv_cases(scale: float, rng: np.random.Generator) -> list[Callable[[], Case]]:
    """Issue 27's GPU workloads, with bench_gemm_conv.py's descriptors, data and float64 references: GEMM
    [4096,4096] x [4096,4096] and ResNet-50's 3x3 64->64 CONVOLUTION on [8,64,56,56] (Bias and a fused RELU), shrunk
    by --scale (the GEMM's sides by its square root, to a power of two; the CONV's batch, then its image sides).
    They are compute-bound: the floor (a copy of the output) says nothing, and the target is half PyTorch CUDA's
    throughput with TF32 off."""
    side = 4096 if scale >= 1 else max(16, 2 ** int(math.log2(4096 * math.sqrt(scale))))
    batch = max(1, round(8 * scale))
    image = 56 if 8 * scale >= 1 else max(4, int(56 * math.sqrt(8 * scale)))

    def case(label: str, spec: bench_gemm_conv.Spec, torch_call: TorchCall, note: str, minimal: Minimal) -> Case:
        values, where = spec.reference()
        tolerance = bench_gemm_conv.OPENDML_TOLERANCE[np.dtype(spec.out_dtype)]
        out_bytes = nbytes(spec.out_shape, spec.out_dtype)
        moved = sum(array.nbytes for array in spec.inputs if array is not None) + out_bytes
        return Case(f"{label} ({spec.flops / 1e9:.3g} GFLOP)", spec.desc(), list(spec.inputs), moved, out_bytes,
                    math.inf, lambda outputs: bench_gemm_conv.compare(outputs[0].reshape(spec.out_shape), values, where,
                                                                          tolerance)[1],
                    torch_call, note, flops=spec.flops, torch_factor=2.0, minimal=minimal)

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

        return case(f"GEMM f32 {dims_text(a.shape)} x {dims_text(b.shape)}", spec, torch_call, "matmul(out=), TF32 off",
                    minimal_gemm(a.shape[0], b.shape[1], a.shape[1]))

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
                    "conv2d (cuDNN, TF32 off), then clamp_min(out=)",
                    minimal_conv(x.shape[0], x.shape[1], w.shape[0], x.shape[2], x.shape[3], w.shape[2], 1))

    return [gemm, convolution]


# -- minimal shaders ------------------------------------------------------------------------------------------------
#
# For each workload a small WGSL kernel written for that one shape, doing the same job on the same bytes: one
# invocation per output element with the sizes as constants, or one work-group per output (row) with a
# workgroup-memory tree; nothing clever (no vec4, no several elements per invocation, no subgroups). Its time, taken
# the same way as opendml's, is the "minimal" column: what a plain specialized shader costs on this adapter.

WG = 256    # invocations per work-group of every minimal shader
MAX_GROUPS = 65535


@dataclass(frozen=True)
class Pass:
    """One dispatch of a minimal shader: its WGSL, the buffers it binds at 0.. (indices into the workload's present
    inputs, then its outputs, then the minimal's scratch buffers) and its work-group counts."""

    wgsl: str
    buffers: tuple[int, ...]
    groups: tuple[int, int]


@dataclass(frozen=True)
class Minimal:
    passes: tuple[Pass, ...]
    scratch: tuple[int, ...] = ()      # bytes of each scratch buffer (after the outputs)


def grid(count: int) -> tuple[int, int]:
    """Work-group counts (x, y) covering `count` work-groups; shaders number them wid.x + wid.y * x."""
    count = max(1, count)
    if count <= MAX_GROUPS:
        return count, 1
    rows = -(-count // MAX_GROUPS)
    return -(-count // rows), rows


def storage(specs: Sequence[tuple[str, str, bool]]) -> str:
    """Bindings 0..: (name, element type, written)."""
    return "\n".join(f"@group(0) @binding({index}) var<storage, {'read_write' if written else 'read'}> {name}: "
                     f"array<{element}>;" for index, (name, element, written) in enumerate(specs))


def per_element(count: int, specs: Sequence[tuple[str, str, bool]], body: str, buffers: Sequence[int],
                prelude: str = "") -> Pass:
    """One invocation per element i < count."""
    groups = grid(-(-count // WG))
    wgsl = f"""{storage(specs)}
{prelude}
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let i = (wid.y * {groups[0]}u + wid.x) * {WG}u + lid;
    if (i >= {count}u) {{ return; }}
{body}
}}
"""
    return Pass(wgsl, tuple(buffers), groups)


def per_group(count: int, specs: Sequence[tuple[str, str, bool]], body: str, buffers: Sequence[int],
              shared: str = "var<workgroup> t: array<f32, 256>;", prelude: str = "") -> Pass:
    """One work-group per output g < count, its invocations numbered lid."""
    groups = grid(count)
    wgsl = f"""{storage(specs)}
{shared}
{prelude}
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    let g = wid.y * {groups[0]}u + wid.x;
    if (g >= {count}u) {{ return; }}
{body}
}}
"""
    return Pass(wgsl, tuple(buffers), groups)


def tree(combine: str, table: str = "t") -> str:
    """A workgroup-memory tree over `table` (whose [lid] each invocation has written): `combine` updates a = {table}[
    lid] from b = {table}[lid + step], leaving the result in {table}[0]."""
    return f"""    workgroupBarrier();
    for (var step = {WG // 2}u; step > 0u; step = step >> 1u) {{
        if (lid < step) {{
            {combine}
        }}
        workgroupBarrier();
    }}
"""


# A reduction's (initial value, accumulate acc with v, combine a with b into a, final value of acc).
REDUCTIONS: dict[str, tuple[str, str, str, str]] = {
    "SUM": ("0.0", "acc = acc + v;", "t[lid] = t[lid] + t[lid + step];", "acc"),
    "L2": ("0.0", "acc = acc + v * v;", "t[lid] = t[lid] + t[lid + step];", "sqrt(acc)"),
    "MULTIPLY": ("1.0", "acc = acc * v;", "t[lid] = t[lid] * t[lid + step];", "acc"),
    "MAX": ("bitcast<f32>(0xff800000u)", "acc = max(acc, v);", "t[lid] = max(t[lid], t[lid + step]);", "acc"),
}


def reduce_rows(function: str, rows: int, length: int, index: str, buffers: Sequence[int], source: str = "x",
                element: str = "f32", combine_only: bool = False) -> Pass:
    """One work-group per output g: the reduction of x[index(g, k)] over k < length (index: a WGSL expression of g
    and k). `combine_only`: the values are partial results (accumulated with the combine step)."""
    specs = [("x", "f32", False), ("y", "f32", True)]
    if function == "LOG_SUM_EXP":
        body = f"""    var m = bitcast<f32>(0xff800000u);
    for (var k = lid; k < {length}u; k = k + {WG}u) {{ m = max(m, x[{index}]); }}
    t[lid] = m;
{tree("t[lid] = max(t[lid], t[lid + step]);")}
    let peak = t[0];
    workgroupBarrier();
    var s = 0.0;
    for (var k = lid; k < {length}u; k = k + {WG}u) {{ s = s + exp(x[{index}] - peak); }}
    t[lid] = s;
{tree("t[lid] = t[lid] + t[lid + step];")}
    if (lid == 0u) {{ y[g] = peak + log(t[0]); }}"""
        return per_group(rows, specs, body, buffers)
    if function in ("ARGMAX", "ARGMAX DECREASING"):
        later = function.endswith("DECREASING")     # ties to the last index
        better = "v >= best" if later else "v > best"
        pick = "<" if not later else ">"
        body = f"""    var best = bitcast<f32>(0xff800000u);
    var at = 0u;
    for (var k = lid; k < {length}u; k = k + {WG}u) {{
        let v = x[{index}];
        if ({better} || k == lid) {{ best = v; at = k; }}
    }}
    t[lid] = best;
    w[lid] = at;
{tree(f"if (t[lid + step] > t[lid] || (t[lid + step] == t[lid] && w[lid + step] {pick} w[lid])) "
      "{ t[lid] = t[lid + step]; w[lid] = w[lid + step]; }")}
    if (lid == 0u) {{ y[g] = w[0]; }}"""
        return per_group(rows, [("x", "f32", False), ("y", "u32", True)], body, buffers,
                         shared="var<workgroup> t: array<f32, 256>;\nvar<workgroup> w: array<u32, 256>;")
    initial, accumulate, combine, final = REDUCTIONS[function]
    if combine_only:
        accumulate = {"SUM": "acc = acc + v;", "L2": "acc = acc + v;"}.get(function, accumulate)
        final = "acc"
    body = f"""    var acc = {initial};
    for (var k = lid; k < {length}u; k = k + {WG}u) {{
        let v = {source}[{index}];
        {accumulate}
    }}
    t[lid] = acc;
{tree(combine)}
    if (lid == 0u) {{ acc = t[0]; y[g] = {final}; }}"""
    return per_group(rows, specs, body, buffers)


def minimal_reduce(function: str, shape: Sequence[int], axes: Sequence[int], dtype: Any) -> Minimal:
    """A reduction of a contiguous tensor: trailing axes one work-group per output row; leading axes one invocation
    per output column walking the rows; all axes two passes (chunks into scratch, then one work-group); axes
    around a kept one a work-group per output, the reduced index split by constants."""
    count = math.prod(shape)
    kept = [size for axis, size in enumerate(shape) if axis not in axes]
    outputs = math.prod(kept)
    length = count // outputs
    trailing = list(axes) == list(range(len(shape) - len(axes), len(shape)))
    leading = list(axes) == list(range(len(axes)))
    if np.dtype(dtype) == np.float16:
        assert function == "SUM" and trailing and length % 2 == 0, (function, shape, axes)
        words = length // 2
        pairs = -(-outputs // 2)
        body = f"""    var acc = vec2<f32>(0.0, 0.0);
    for (var k = lid; k < {words}u; k = k + {WG}u) {{
        let a = unpack2x16float(x[2u * g * {words}u + k]);
        acc.x = acc.x + a.x + a.y;
        if (2u * g + 1u < {outputs}u) {{
            let b = unpack2x16float(x[(2u * g + 1u) * {words}u + k]);
            acc.y = acc.y + b.x + b.y;
        }}
    }}
    t[lid] = acc;
{tree("t[lid] = t[lid] + t[lid + step];")}
    if (lid == 0u) {{ y[g] = pack2x16float(t[0]); }}"""
        return Minimal((per_group(pairs, [("x", "u32", False), ("y", "u32", True)], body, (0, 1),
                                  shared="var<workgroup> t: array<vec2<f32>, 256>;"),))
    if outputs == 1 and function in ("SUM", "MAX", "MULTIPLY") and length >= 1 << 16:
        chunks = 1024
        while length % chunks:
            chunks //= 2
        first = reduce_rows(function, chunks, length // chunks, f"g * {length // chunks}u + k", (0, 2))
        second = reduce_rows(function, 1, chunks, "g * 0u + k", (2, 1), combine_only=True)
        return Minimal((first, second), scratch=(chunks * 4,))
    if trailing:
        return Minimal((reduce_rows(function, outputs, length, f"g * {length}u + k", (0, 1)),))
    if leading and function in REDUCTIONS:
        initial, accumulate, _, final = REDUCTIONS[function]
        body = f"""    var acc = {initial};
    for (var r = 0u; r < {length}u; r = r + 1u) {{
        let v = x[r * {outputs}u + i];
        {accumulate}
    }}
    y[i] = {final};"""
        return Minimal((per_element(outputs, [("x", "f32", False), ("y", "f32", True)], body, (0, 1)),))
    # One kept run between reduced ones: [before, kept, after] with the first and last reduced.
    assert len(kept) == 1, (shape, axes)
    position = next(axis for axis in range(len(shape)) if axis not in axes)
    after = math.prod(shape[position + 1:])
    index = f"(k / {after}u) * {outputs * after}u + g * {after}u + k % {after}u"
    return Minimal((reduce_rows(function, outputs, length, index, (0, 1)),))


def minimal_map(count: int, expression: str, arity: int = 1, prelude: str = "") -> Minimal:
    """y[i] = expression of a (and b): an element-wise FLOAT32 operator on contiguous tensors."""
    names = ["a", "b"][:arity]
    specs = [*((name, "f32", False) for name in names), ("y", "f32", True)]
    body = "".join(f"    let {name} = {name}[i];\n" for name in names) + f"    y[i] = {expression};"
    return Minimal((per_element(count, specs, body, range(arity + 1), prelude),))


def minimal_parts(shape: Sequence[int], axis: int, parts: int, joining: bool) -> Minimal:
    """SPLIT (the whole tensor into `parts` equal parts along `axis`) or JOIN (the parts into the whole): one pass per
    part, one invocation per element of the part, its bits copied as u32."""
    outer, size, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    width = size // parts * inner
    passes = []
    for part in range(parts):
        whole = f"(i / {width}u) * {size * inner}u + {part * width}u + i % {width}u"
        if joining:
            passes.append(per_element(outer * width, [("x", "u32", False), ("y", "u32", True)],
                                      f"    y[{whole}] = x[i];", (part, parts)))
        else:
            passes.append(per_element(outer * width, [("x", "u32", False), ("y", "u32", True)],
                                      f"    y[i] = x[{whole}];", (0, 1 + part)))
    return Minimal(tuple(passes))


def minimal_one_hot(count: int, depth: int) -> Minimal:
    body = f"""    var k = idx[i / {depth}u];
    if (k < 0) {{ k = k + {depth}; }}
    y[i] = select(values[0], values[1], k >= 0 && u32(k) == i % {depth}u);"""
    return Minimal((per_element(count * depth, [("idx", "i32", False), ("values", "u32", False), ("y", "u32", True)],
                                body, (0, 1, 2)),))


def minimal_gather(input_shape: Sequence[int], indices_shape: Sequence[int], batch: int) -> Minimal:
    """GATHER_ND1 over contiguous tensors with INT64 indices (their low words; negative ones from the end): one
    invocation per output element."""
    tuple_size = indices_shape[-1]
    batches = math.prod(input_shape[:batch])
    per_batch = math.prod(indices_shape[batch:-1])
    tail = math.prod(input_shape[batch + tuple_size:])
    batch_stride = math.prod(input_shape[batch:])
    lines = [f"    let j = i / {tail}u;", f"    var at = (j / {per_batch}u) * {batch_stride}u + i % {tail}u;"]
    for k in range(tuple_size):
        size = input_shape[batch + k]
        stride = math.prod(input_shape[batch + k + 1:])
        lines += [f"    var k{k} = i32(idx[2u * (j * {tuple_size}u + {k}u)]);",
                  f"    if (k{k} < 0) {{ k{k} = k{k} + {size}; }}",
                  f"    at = at + u32(k{k}) * {stride}u;"]
    lines.append("    y[i] = x[at];")
    count = batches * per_batch * tail
    return Minimal((per_element(count, [("x", "u32", False), ("idx", "u32", False), ("y", "u32", True)],
                                "\n".join(lines), (0, 1, 2)),))


ERF = """fn erf(x: f32) -> f32 {   // Abramowitz and Stegun 7.1.26 (error below 1.5e-7)
    let z = abs(x);
    let t = 1.0 / (1.0 + 0.3275911 * z);
    let p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return sign(x) * (1.0 - p * exp(-z * z));
}"""
ACTIVATIONS = {None: "v", "RELU": "max(v, 0.0)", "GELU": "0.5 * v * (1.0 + erf(v * 0.70710678))"}


def minimal_mvn(rows: int, length: int, side: str, activation: str | None, epsilon: float, dtype: Any) -> Minimal:
    """MVN1 with Scale and Bias over trailing axes: one work-group per row of `length` contiguous elements (two
    trees: the mean, then the variance), then the normalized row written; `side`: the Scale/Bias index (a WGSL
    expression of the row g and the column k)."""
    if np.dtype(dtype) == np.float16:
        words = length // 2
        body = f"""    let base = g * {words}u;
    var s = 0.0;
    for (var k = lid; k < {words}u; k = k + {WG}u) {{ let v = unpack2x16float(x[base + k]); s = s + v.x + v.y; }}
    t[lid] = s;
{tree("t[lid] = t[lid] + t[lid + step];")}
    let mean = t[0] / {length}.0;
    workgroupBarrier();
    var q = 0.0;
    for (var k = lid; k < {words}u; k = k + {WG}u) {{
        let d = unpack2x16float(x[base + k]) - vec2<f32>(mean);
        q = q + d.x * d.x + d.y * d.y;
    }}
    t[lid] = q;
{tree("t[lid] = t[lid] + t[lid + step];")}
    let inv = inverseSqrt(t[0] / {length}.0 + {epsilon!r});
    for (var k = lid; k < {words}u; k = k + {WG}u) {{
        let v = (unpack2x16float(x[base + k]) - vec2<f32>(mean)) * inv * unpack2x16float(scale[k])
                + unpack2x16float(bias[k]);
        y[base + k] = pack2x16float({ACTIVATIONS[activation]});
    }}"""
        assert side == "k" and activation is None
        element = "u32"
    else:
        body = f"""    let base = g * {length}u;
    var s = 0.0;
    for (var k = lid; k < {length}u; k = k + {WG}u) {{ s = s + x[base + k]; }}
    t[lid] = s;
{tree("t[lid] = t[lid] + t[lid + step];")}
    let mean = t[0] / {length}.0;
    workgroupBarrier();
    var q = 0.0;
    for (var k = lid; k < {length}u; k = k + {WG}u) {{ let d = x[base + k] - mean; q = q + d * d; }}
    t[lid] = q;
{tree("t[lid] = t[lid] + t[lid + step];")}
    let inv = inverseSqrt(t[0] / {length}.0 + {epsilon!r});
    for (var k = lid; k < {length}u; k = k + {WG}u) {{
        let v = (x[base + k] - mean) * inv * scale[{side}] + bias[{side}];
        y[base + k] = {ACTIVATIONS[activation]};
    }}"""
        element = "f32"
    specs = [("x", element, False), ("scale", element, False), ("bias", element, False), ("y", element, True)]
    return Minimal((per_group(rows, specs, body, (0, 1, 2, 3), prelude=ERF if activation == "GELU" else ""),))


def minimal_gemm(m: int, n: int, k: int) -> Minimal:
    """C = A B, one invocation per output element walking K."""
    body = f"""    let r = i / {n}u;
    let c = i % {n}u;
    var acc = 0.0;
    for (var q = 0u; q < {k}u; q = q + 1u) {{ acc = acc + a[r * {k}u + q] * b[q * {n}u + c]; }}
    y[i] = acc;"""
    return Minimal((per_element(m * n, [("a", "f32", False), ("b", "f32", False), ("y", "f32", True)], body,
                                (0, 1, 2)),))


def minimal_conv(batch: int, channels: int, out_channels: int, height: int, width: int, kernel: int, pad: int
                 ) -> Minimal:
    """A stride-1 2-D convolution with Bias and RELU, one invocation per output element walking channels and taps."""
    out_h, out_w = height + 2 * pad - kernel + 1, width + 2 * pad - kernel + 1
    body = f"""    let ox = i % {out_w}u;
    let oy = (i / {out_w}u) % {out_h}u;
    let o = (i / {out_w * out_h}u) % {out_channels}u;
    let n = i / {out_w * out_h * out_channels}u;
    var acc = bias[o];
    for (var c = 0u; c < {channels}u; c = c + 1u) {{
        for (var ky = 0u; ky < {kernel}u; ky = ky + 1u) {{
            let iy = i32(oy + ky) - {pad};
            if (iy < 0 || iy >= {height}) {{ continue; }}
            for (var kx = 0u; kx < {kernel}u; kx = kx + 1u) {{
                let ix = i32(ox + kx) - {pad};
                if (ix < 0 || ix >= {width}) {{ continue; }}
                acc = acc + x[((n * {channels}u + c) * {height}u + u32(iy)) * {width}u + u32(ix)]
                          * w[((o * {channels}u + c) * {kernel}u + ky) * {kernel}u + kx];
            }}
        }}
    }}
    y[i] = max(acc, 0.0);"""
    count = batch * out_channels * out_h * out_w
    return Minimal((per_element(count, [("x", "f32", False), ("w", "f32", False), ("bias", "f32", False),
                                        ("y", "f32", True)], body, (0, 1, 2, 3)),))


class MinimalRun:
    """A minimal shader's pipelines and bind groups over its own device buffers (the workload's inputs uploaded
    again, outputs and scratch of its own); `record` records its passes into the current batch."""

    def __init__(self, device: dml.Device, minimal: Minimal, inputs: Sequence[Array | None],
                 output_sizes: Sequence[int]) -> None:
        context = device.backend.context  # type: ignore[attr-defined]
        wgpu = context.wgpu
        self.context = context
        self.outputs = [device.create_buffer(max(4, -(-size // 4) * 4)) for size in output_sizes]
        buffers = [device.create_buffer(np.ascontiguousarray(array)) for array in inputs if array is not None]
        buffers += self.outputs + [device.create_buffer(size) for size in minimal.scratch]
        self.keep = buffers
        self.steps = []
        for step in minimal.passes:
            module = context.device.create_shader_module(code=step.wgsl)
            pipeline = context.device.create_compute_pipeline(layout=wgpu.AutoLayoutMode.auto,
                                                              compute={"module": module, "entry_point": "main"})
            entries = [{"binding": index, "resource": {"buffer": buffers[which].handle, "offset": 0,
                                                       "size": buffers[which].handle.size}}
                       for index, which in enumerate(step.buffers)]
            group = context.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
            self.steps.append((pipeline, group, step.groups))

    def record(self) -> None:
        recorder = self.context.recorder()[0]   # the batch's
        recorder.end_pass()
        compute = recorder.encoder.begin_compute_pass()
        for pipeline, group, groups in self.steps:
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, group)
            compute.dispatch_workgroups(*groups)
        compute.end()

    def __call__(self) -> None:
        with self.context.batch():
            self.record()


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

    def __init__(self, device: dml.Device, host: bool = False) -> None:
        context = device.backend.context  # type: ignore[attr-defined]
        self.context = context
        self.on_gpu = "timestamp-query" in context.features and not host
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
        why = ("--host-clock" if "timestamp-query" in self.context.features else
               "the adapter lacks 'timestamp-query'")
        return (f"HOST clock around the recording, its submission and a 4-byte read that waits for it ({why}; times "
                f"include the submission and the wait)")

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
    minimal_s: float | None = None
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

    minimal: MinimalRun | None = None
    if case.minimal is not None:
        minimal = MinimalRun(device, case.minimal, case.inputs,
                             [tensor.total_tensor_size_in_bytes for tensor in output_descs])
        minimal()
        results = [memory.read(tensor.data_type.numpy_dtype, tensor.sizes) for memory, tensor in
                   zip(minimal.outputs, output_descs, strict=True)]
        problem = case.check(results)
        if problem is not None:
            row.notes.append(f"MISMATCH: the minimal shader's result: {problem}")
        del results

    torch_call: Callable[[], object] | None = None
    if torch_where is not None:
        try:
            torch_call = case.torch_call(torch, torch_where)
            torch_call()
            row.torch_note = case.torch_note
        except Exception as error:  # a peer without this operator or type: n/a
            row.notes.append(f"PyTorch n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})")
            torch_call = None

    times: dict[str, list[float]] = {"floor": [], "mine": [], "minimal": [], "torch": []}
    clock.time(floor)  # warm-up
    clock.time(mine)
    if minimal is not None:
        clock.time(minimal.record)
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            times["floor"].append(clock.time(floor))
            times["mine"].append(clock.time(mine))
            if minimal is not None:
                times["minimal"].append(clock.time(minimal.record))
            if torch_call is not None:
                times["torch"].append(torch_time(torch_call, torch_where or "cpu"))
    finally:
        gc.enable()
    row.floor_s = statistics.median(times["floor"])
    row.mine_s = statistics.median(times["mine"])
    row.torch_s = statistics.median(times["torch"]) if times["torch"] else None
    row.minimal_s = statistics.median(times["minimal"]) if times["minimal"] else None
    return row


# -- dispatch overhead ----------------------------------------------------------------------------------------------

def dispatch_overheads(device: dml.Device, count: int
                       ) -> list[tuple[str, tuple[float, float, float] | None, float | None, str]]:
    """(what, (idle wall, back-to-back CPU, back-to-back wall) microseconds per call or None, target or None, note);
    `idle` from a fifth of `count` calls, each made once the device has finished all earlier work."""
    lines: list[tuple[str, tuple[float, float, float] | None, float | None, str]] = []
    context = device.backend.context  # type: ignore[attr-defined]

    def times(call: Callable[[], object], calls: int) -> tuple[float, float, float]:
        wall, cpu = h.call_times_us(call, calls)
        idle = h.call_times_us(call, max(1, calls // 5), lambda: wait_idle(context))[0]
        wait_idle(context)
        return idle, cpu, wall

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
        lines.append((label, times(lambda: compiled.execute(inputs, outputs), count), DISPATCH_TARGET_US, ""))

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
    lines.append(("ten-node graph (10 SPLITs) dispatch: CompiledGraph.run() on its device buffers",
                  times(compiled_graph.run, graph_count), GRAPH_TARGET_US, ""))
    lines.append(("the same ten nodes as ten executes in one Device.batch() on the graph's buffers",
                  times(graph_dispatch, graph_count), None, ""))
    lines.append(("ten-node graph call, NumPy in and out (upload, one submission, read-back and wait)",
                  times(lambda: compiled_graph({"x": array}), graph_count), None, ""))
    return lines


# -- report -------------------------------------------------------------------------------------------------------

def size_text(count: int) -> str:
    return f"{count / MIB:.1f} MiB" if count >= MIB else f"{count / 1024:.1f} KiB"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f} ms"


def print_table(rows: list[Row], torch_label: str) -> None:
    headers = ["workload", "bytes moved", "opendml GPU", "floor", "ratio", "minimal", "/minimal", torch_label,
               "target"]
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
        over_minimal = minimal_ratio(row)
        cells.append([row.label, size_text(row.moved), mine, ms(row.floor_s),
                      "-" if ratio is None else f"{ratio:.2f}x", ms(row.minimal_s),
                      "-" if over_minimal is None else f"{over_minimal:.2f}x", torch_cell, verdict])
    widths = [max([len(header), *(len(line[index]) for line in cells)]) for index, header in enumerate(headers)]

    def line(values: list[str]) -> str:
        return " | ".join([values[0].ljust(widths[0]), *(value.rjust(width) for value, width in
                                                         zip(values[1:], widths[1:], strict=True))])

    print(line(headers))
    print("-+-".join("-" * width for width in widths))
    for values in cells:
        print(line(values))
    print("(times: medians over the rounds; ratio: opendml / floor; minimal: the workload's minimal shader (one "
          "invocation per output element or one work-group per row, sizes as constants), /minimal: opendml / "
          "minimal; target: opendml's ratio on an H100, and not slower than PyTorch CUDA; '!' = opendml's result "
          "mismatched, see the notes)")
    ratios = [ratio for ratio in map(minimal_ratio, rows) if ratio is not None]
    if ratios:
        within = sum(ratio <= MINIMAL_TARGET for ratio in ratios)
        geomean = math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
        print(f"opendml / minimal shader: geometric mean {geomean:.2f}x over {len(ratios)} workloads (target <= "
              f"{MINIMAL_GEOMEAN_TARGET:g}x: {'MET' if geomean <= MINIMAL_GEOMEAN_TARGET else 'MISSED'}); "
              f"{within} of {len(ratios)} within {MINIMAL_TARGET:g}x; worst {max(ratios):.2f}x")


def minimal_ratio(row: Row) -> float | None:
    """opendml's time over its minimal shader's."""
    if row.mine_s is None or not row.minimal_s:
        return None
    return row.mine_s / row.minimal_s


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help=f"workloads of {FULL_BYTES * SMOKE_SCALE / MIB:g} MiB, 3 rounds, fewer dispatch calls: "
                             f"a check that everything runs (lavapipe)")
    parser.add_argument("--scale", type=float, default=None,
                        help="the bytes each workload moves, as a fraction of 256 MiB (default 1, or 1/128 with "
                             "--smoke)")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload (default 11, 5 with the "
                                                                 "host clock, 3 with --smoke)")
    parser.add_argument("--host-clock", action="store_true",
                        help="time on the host (the recording, its submission and a 4-byte read that waits for it) "
                             "even where the adapter has timestamp queries: issue 29's method on lavapipe")
    parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text (or "
                                                     "one of several, separated by '|')")
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
    if args.scale <= 0 or (args.repeat is not None and args.repeat < 1):
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
    clock = GpuClock(device, args.host_clock)
    if args.repeat is None:     # issue 29's median of 5 where the host's clock times
        args.repeat = 3 if args.smoke else 11 if clock.on_gpu else 5
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
                *mvn_cases(target, rng), *gemm_conv_cases(args.scale, rng), *issue_cases(args.scale, rng)]
    rows: list[Row] = []
    for build in builders:
        case = build()
        wanted = args.only is None or any(part in case.label for part in args.only.split("|"))
        if not wanted or any(row.label == case.label for row in rows):
            continue    # (issue 29's workloads at --scale 0.125 include some of the others)
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
    print(f"Dispatch from Python (host time per call in us, median of {args.dispatch_count} back to back and a fifth "
          f"of that from idle: idle wall / back-to-back CPU / back-to-back wall; the target is read against idle):")
    for label, micros, goal, note in dispatch_overheads(device, args.dispatch_count):
        value = "skipped" if micros is None else "  ".join(f"{part:7.1f}" for part in micros)
        mark = "" if goal is None or micros is None else (f"  (target < {goal:.0f} us: "
                                                          f"{'MET' if micros[0] < goal else 'MISSED'})")
        print(f"  {label:<86} {value}{mark}{'  ' + note if note else ''}")
    print()
    print(f"whole run {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
