"""ONE_HOT on the CPU.

The compiled plan sees the output as sequences along Axis (depth D, stride ``step``): the other dimensions of
size > 1 are sorted by output stride and merged where both the output and the indices allow, the innermost one
becomes a loop of ``count`` sequences (strides ``output_stride`` / ``index_stride``), and the rest become offset
tables. Two loop orders cover every layout at memory speed:

* rows (Axis is the innermost of the two in memory): each sequence is written once, OffValue then the OnValue;
  a contiguous output of at least STREAMING_THRESHOLD_BYTES with rows of >= 256 bytes is instead filled with
  OffValue by non-temporal stores, then the OnValues are written (one cache line per sequence);
* columns (a sequence's elements lie further apart than consecutive sequences): per block of sequences, the
  positions are computed once, then each of the D slices of the block is written in one sweep.

Data move as unsigned integers of the element's width (the bits of OffValue and OnValue, whatever the type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numba.extending
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.one_hot import OneHotOperatorDesc
from ...types import ExecutionFlags
from .. import FlatArray, Kernel
from . import memory_kernels
from .memory_kernels import fence, njit_cached, stream_fill, types

_BLOCK = 512  # sequences per block in column order: their positions stay in L1
# Streamed fill, then the OnValues: worth it when a row spans several cache lines (each OnValue store reads back
# one line).
_STREAMED_MIN_ROW_BYTES = 256


def _position(index: Any, depth: int) -> int:
    """Where the OnValue goes, or -1 for none (numba picks the implementation from the index type below)."""
    raise NotImplementedError


def _position_impl(index: Any, depth: Any) -> Any:
    signed = bool(getattr(index, "signed", False))
    if isinstance(index, types.Integer) and not signed and getattr(index, "bitwidth", 0) == 64:
        def unsigned64(index: Any, depth: Any) -> Any:
            # Compared as unsigned: a huge UINT64 index is out of range, not a negative one.
            if index < np.uint64(depth):
                return np.int64(index)
            return np.int64(-1)

        return unsigned64

    def exact(index: Any, depth: Any) -> Any:
        # INT32, UINT32 and INT64 convert to int64 exactly. Negative values exist only for signed types, which
        # the support table admits only from 3_0, where they count from the end (DECISIONS 15).
        value = np.int64(index)
        if signed and value < 0:
            value += depth
        if value < 0 or value >= depth:
            return np.int64(-1)
        return value

    return exact


_overload: Any = numba.extending.overload
_overload(_position)(_position_impl)


def _rows_loops(indices: Any, output: Any, index_bases: Any, output_bases: Any, count: int, index_stride: int,
                output_stride: int, depth: int, step: int, off: Any, on: Any) -> None:
    for table in range(index_bases.size):
        index_base, output_base = index_bases[table], output_bases[table]
        for sequence in range(count):
            position = _position(indices[index_base + sequence * index_stride], depth)
            base = output_base + sequence * output_stride
            if step == 1:
                for element in range(base, base + depth):
                    output[element] = off
            else:
                for element in range(depth):
                    output[base + element * step] = off
            if position >= 0:
                output[base + position * step] = on


def _streamed_rows_loops(indices: Any, output: Any, index_bases: Any, output_bases: Any, count: int, index_stride: int,
                         depth: int, pattern: Any, on: Any) -> None:
    """Rows of a packed run of count x depth elements per table entry: a streamed OffValue fill, then the
    OnValues."""
    address = output.ctypes.data
    size = output.itemsize
    for table in range(index_bases.size):
        stream_fill(address + output_bases[table] * size, count * depth * size, pattern.ctypes.data)
    fence()
    for table in range(index_bases.size):
        index_base, output_base = index_bases[table], output_bases[table]
        for sequence in range(count):
            position = _position(indices[index_base + sequence * index_stride], depth)
            if position >= 0:
                output[output_base + sequence * depth + position] = on


def _columns_loops(indices: Any, output: Any, index_bases: Any, output_bases: Any, count: int, index_stride: int,
                   output_stride: int, depth: int, step: int, off: Any, on: Any) -> None:
    positions = np.empty(min(count, _BLOCK), np.int64)
    for table in range(index_bases.size):
        index_base, output_base = index_bases[table], output_bases[table]
        for first in range(0, count, _BLOCK):
            size = min(_BLOCK, count - first)
            for sequence in range(size):
                positions[sequence] = _position(indices[index_base + (first + sequence) * index_stride], depth)
            for element in range(depth):
                base = output_base + element * step + first * output_stride
                if output_stride == 1:
                    for sequence in range(size):
                        output[base + sequence] = on if positions[sequence] == element else off
                else:
                    for sequence in range(size):
                        output[base + sequence * output_stride] = on if positions[sequence] == element else off


_rows: Any = njit_cached(_rows_loops)
_streamed_rows: Any = njit_cached(_streamed_rows_loops)
_columns: Any = njit_cached(_columns_loops)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    one_hot = cast(OneHotOperatorDesc, desc)
    indices, result, axis = one_hot.indices_tensor, one_hot.output_tensor, one_hot.axis
    depth, step = one_hot.depth, result.element_strides[axis]
    itemsize = result.data_type.element_size
    bits = np.dtype(f"u{itemsize}")
    on_offset = one_hot.on_value_offset

    # The dimensions besides Axis, outermost (largest output stride) first, merged where both tensors allow.
    dims = sorted(((size, out_stride, in_stride) for dim, (size, out_stride, in_stride)
                   in enumerate(zip(result.sizes, result.element_strides, indices.element_strides, strict=True))
                   if dim != axis and size > 1), key=lambda dim: -dim[1])
    merged: list[tuple[int, int, int]] = []
    for size, out_stride, in_stride in dims:
        if merged:
            outer_size, outer_out, outer_in = merged[-1]
            if outer_out == size * out_stride and outer_in == size * in_stride:
                merged[-1] = (outer_size * size, out_stride, in_stride)
                continue
        merged.append((size, out_stride, in_stride))
    count, output_stride, index_stride = merged.pop() if merged else (1, 0, 0)
    output_bases = np.zeros(1, np.int64)
    index_bases = np.zeros(1, np.int64)
    for size, out_stride, in_stride in merged:
        output_bases = (output_bases[:, None] + np.arange(size, dtype=np.int64) * out_stride).ravel()
        index_bases = (index_bases[:, None] + np.arange(size, dtype=np.int64) * in_stride).ravel()

    if depth == 1:
        step = 1
    if count == 1 or step < output_stride:
        contiguous = step == 1 and output_stride == depth
        total = result.element_count * itemsize
        if (contiguous and memory_kernels.HAVE_STREAMING_STORES and total >= memory_kernels.STREAMING_THRESHOLD_BYTES
                and depth * itemsize >= _STREAMED_MIN_ROW_BYTES):
            return _streamed_kernel(index_bases, output_bases, count, index_stride, depth, bits, on_offset)

        def rows(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            values = cast(FlatArray, inputs[1]).view(bits)
            _rows(inputs[0], outputs[0].view(bits), index_bases, output_bases, count, index_stride, output_stride,
                  depth, step, values[0], values[on_offset])

        return rows

    def columns(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        values = cast(FlatArray, inputs[1]).view(bits)
        _columns(inputs[0], outputs[0].view(bits), index_bases, output_bases, count, index_stride, output_stride,
                 depth, step, values[0], values[on_offset])

    return columns


def _streamed_kernel(index_bases: FlatArray, output_bases: FlatArray, count: int, index_stride: int, depth: int,
                     bits: np.dtype[Any], on_offset: int) -> Kernel:
    itemsize = bits.itemsize
    repeats = 128 // itemsize

    def streamed(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        values = cast(FlatArray, inputs[1]).view(bits)
        output = outputs[0].view(bits)
        # byte a of the output gets pattern[a % 64]: OffValue's bytes in phase with the output's elements
        phase = output.ctypes.data % itemsize
        pattern = np.roll(np.full(repeats, values[0], bits).view(np.uint8), phase)
        _streamed_rows(inputs[0], output, index_bases, output_bases, count, index_stride, depth, pattern,
                       values[on_offset])

    return streamed

