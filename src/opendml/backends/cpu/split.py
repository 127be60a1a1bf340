"""SPLIT on the CPU.

Packed input and packed outputs (the common case) are one pass over the input: viewed as [outer, row] with
row = Sizes[Axis] x (product of the sizes after Axis), output i is the run of ``chunk_i`` bytes at ``start_i`` in
every row, so the kernel copies, row after row, each output's run to the end of what that output holds so far. The
input is read once in order and every output written once in order; outputs larger than the caches are written
with non-temporal stores (memory_kernels), their rows shared among numba's threads. Any other layout (padded,
transposed, broadcast input) takes NumPy's strided copy between views of the bound buffers, which is correct for
all strides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.split import SplitOperatorDesc
from ...types import ExecutionFlags
from .. import FlatArray, Kernel
from . import memory_kernels
from .memory_kernels import PARALLEL_LAUNCH, copy_bytes, fence, njit_cached, stream_line


def _split_rows_plain(source: int, targets: Any, chunks: Any, starts: Any, outer: int, row: int) -> None:
    """For each of `outer` rows of `row` bytes at `source`: output i gets bytes [starts[i], starts[i] + chunks[i])
    appended at targets[i]. Plain stores."""
    for index in range(outer):
        base = source + index * row
        for part in range(targets.size):
            chunk = chunks[part]
            copy_bytes(targets[part] + index * chunk, base + starts[part], chunk)


def _split_rows_streaming(source: int, targets: Any, chunks: Any, starts: Any, outer: int, row: int) -> None:
    """_split_rows writing every whole 64-byte line of each output with one non-temporal store.

    An output's runs follow one another in memory but need not start or end on a line boundary, so a line that
    two runs share is assembled in that output's 64 bytes of a stage and stored once complete. The lines an
    output shares with memory outside it (its first and last, when unaligned) get plain stores of its bytes only.
    """
    count = targets.size
    stage = np.empty(count * 64, np.uint8)
    stage_base = stage.ctypes.data
    # staged[i]: bytes of output i's current line already assembled in its stage; -1 while that line began
    # before the output (its bytes are then stored directly)
    staged = np.zeros(count, np.int64)
    for part in range(count):
        if targets[part] & 63:
            staged[part] = -1
    for index in range(outer):
        base = source + index * row
        for part in range(count):
            left = chunks[part]
            target = targets[part] + index * left
            origin = base + starts[part]
            line = stage_base + part * 64
            into = target & 63
            if into:
                take = min(64 - into, left)
                if staged[part] < 0:
                    copy_bytes(target, origin, take)
                    if into + take == 64:
                        staged[part] = 0
                else:
                    copy_bytes(line + into, origin, take)
                    if into + take == 64:
                        stream_line(target - into, line)
                        staged[part] = 0
                    else:
                        staged[part] = into + take
                target += take
                origin += take
                left -= take
            while left >= 64:
                stream_line(target, origin)
                target += 64
                origin += 64
                left -= 64
            if left:
                copy_bytes(line, origin, left)
                staged[part] = left
    fence()
    for part in range(count):
        if staged[part] > 0:
            end = targets[part] + outer * chunks[part]
            copy_bytes(end - staged[part], stage_base + part * 64, staged[part])


_split_rows: Any = njit_cached(_split_rows_plain)
_split_rows_streamed: Any = njit_cached(_split_rows_streaming)


@numba.njit(cache=True, parallel=True)
def _split_rows_threads(source: int, targets: Any, chunks: Any, starts: Any, outer: int, row: int,
                        parts: int) -> None:
    """_split_rows_streamed over `parts` ranges of rows, one per thread. Each range starts and ends its outputs'
    runs like a whole dispatch does: a line it shares with the neighbouring range gets plain stores of its own
    bytes only, so the two never write the same byte."""
    for part in numba.prange(parts):
        begin, end = part * outer // parts, (part + 1) * outer // parts
        _split_rows_streamed(source + begin * row, targets + begin * chunks, chunks, starts, end - begin, row)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    split = cast(SplitOperatorDesc, desc)
    source, outputs, axis = split.input_tensor, split.output_tensors, split.axis
    itemsize = source.data_type.element_size
    if source.is_packed and all(output.is_packed for output in outputs):
        return _packed_kernel(source.sizes, [output.sizes[axis] for output in outputs], axis, itemsize)
    return _strided_kernel(split, itemsize)


def _packed_kernel(sizes: Sequence[int], parts: Sequence[int], axis: int, itemsize: int) -> Kernel:
    inner = math.prod(sizes[axis + 1:]) * itemsize
    outer = math.prod(sizes[:axis])
    if len(parts) == 1:  # a plain copy: one run
        chunks = np.array([outer * sizes[axis] * inner], np.int64)
        outer = 1
    else:
        chunks = np.array([part * inner for part in parts], np.int64)
    starts = np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(np.int64)
    row = int(chunks.sum())
    if memory_kernels.HAVE_STREAMING_STORES and row * outer >= memory_kernels.STREAMING_THRESHOLD_BYTES:
        # Large copies run on every thread: two keep more reads and writes in flight than one.
        threads = min(outer, numba.get_num_threads())

        def streamed(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            flat = cast(FlatArray, inputs[0])
            targets = np.array([output.ctypes.data for output in outputs], np.int64)
            if threads > 1:
                with PARALLEL_LAUNCH:
                    _split_rows_threads(flat.ctypes.data, targets, chunks, starts, outer, row, threads)
            else:
                _split_rows_streamed(flat.ctypes.data, targets, chunks, starts, outer, row)

        return streamed

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        flat = cast(FlatArray, inputs[0])
        targets = np.array([output.ctypes.data for output in outputs], np.int64)
        _split_rows(flat.ctypes.data, targets, chunks, starts, outer, row)

    return kernel


def _strided_kernel(split: SplitOperatorDesc, itemsize: int) -> Kernel:
    source = split.input_tensor
    source_strides = tuple(stride * itemsize for stride in source.element_strides)
    step = source.element_strides[split.axis] * itemsize
    dtype = source.data_type.numpy_dtype
    plans = [(output.sizes, offset * step, tuple(stride * itemsize for stride in output.element_strides))
             for output, offset in zip(split.output_tensors, split.offsets, strict=True)]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        flat = cast(FlatArray, inputs[0])
        for (shape, start, strides), target in zip(plans, outputs, strict=True):
            part = np.ndarray(shape, dtype, buffer=flat, offset=start, strides=source_strides)
            np.copyto(np.ndarray(shape, dtype, buffer=target, strides=strides), part)

    return kernel
