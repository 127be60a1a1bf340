"""NONZERO_COORDINATES on the CPU: three steps over the input's logical elements in row-major order, cut in blocks
of whole rows (the rows of the innermost dimension, `_BLOCK` elements or more each):

1. count: each block counts its nonzero elements (in parallel);
2. prefix: the counts become each block's first output row (in order), their total the count output;
3. write: each block writes the coordinates of its nonzero elements from its first row on (in parallel).

So the rows come in ascending element index whatever the split, and only the first count rows are written. The
input is read as the unsigned integers of its width, any strides (zero ones included), an element being nonzero
where its bits under `ops.nonzero.nonzero_mask` are (FLOAT16/FLOAT32: -0.0 is zero, NaN is not). A row's N
coordinates are its element's last N, written through the coordinates tensor's strides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.nonzero import NonzeroCoordinatesOperatorDesc, nonzero_mask
from ...types import ExecutionFlags
from .. import FlatArray, Kernel
from .memory_kernels import PARALLEL_LAUNCH

_BLOCK = 1 << 14   # elements per block, at least: a block's count outweighs its start's divisions


def _row_start_python(row: int, sizes: Any, strides: Any, coordinate: Any) -> int:
    """The element offset of the first element of row `row` (of the innermost dimension), its coordinates (but
    the innermost) left in `coordinate`."""
    offset = 0
    rest = row
    for dim in range(sizes.size - 2, -1, -1):
        coordinate[dim] = rest % sizes[dim]
        rest //= sizes[dim]
        offset += coordinate[dim] * strides[dim]
    return offset


_row_start: Any = numba.njit(cache=True, inline="always")(_row_start_python)


def _count_loops(x: Any, sizes: Any, strides: Any, mask: Any, rows_per_block: int, counts: Any) -> None:
    rank = sizes.size
    rows = 1
    for dim in range(rank - 1):
        rows *= sizes[dim]
    inner, step = sizes[rank - 1], strides[rank - 1]
    for block in numba.prange(counts.size):
        coordinate = np.zeros(rank, np.int64)
        found = 0
        for row in range(block * rows_per_block, min(rows, (block + 1) * rows_per_block)):
            offset = _row_start(row, sizes, strides, coordinate)
            for j in range(inner):
                if x[offset + j * step] & mask:
                    found += 1
        counts[block] = found


def _write_loops(x: Any, sizes: Any, strides: Any, mask: Any, rows_per_block: int, firsts: Any, y: Any,
                 row_stride: int, column_stride: int, columns: int) -> None:
    rank = sizes.size
    rows = 1
    for dim in range(rank - 1):
        rows *= sizes[dim]
    inner, step = sizes[rank - 1], strides[rank - 1]
    for block in numba.prange(firsts.size):
        coordinate = np.zeros(rank, np.int64)
        at = firsts[block]
        for row in range(block * rows_per_block, min(rows, (block + 1) * rows_per_block)):
            offset = _row_start(row, sizes, strides, coordinate)
            for j in range(inner):
                if x[offset + j * step] & mask:
                    coordinate[rank - 1] = j
                    base = at * row_stride
                    for k in range(columns):
                        y[base + k * column_stride] = coordinate[rank - columns + k]
                    at += 1


_count: Any = numba.njit(cache=True, parallel=True)(_count_loops)
_write: Any = numba.njit(cache=True, parallel=True)(_write_loops)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    nonzero = cast(NonzeroCoordinatesOperatorDesc, desc)
    source, coordinates = nonzero.input_tensor, nonzero.output_coordinates_tensor
    bits = np.dtype(f"u{source.data_type.element_size}")
    mask = bits.type(nonzero_mask(source.data_type))
    sizes = np.array(source.sizes, np.int64)
    strides = np.array(source.element_strides, np.int64)
    inner = source.sizes[-1]
    rows = source.element_count // inner
    rows_per_block = max(1, -(-_BLOCK // inner))
    blocks = -(-rows // rows_per_block)
    row_stride, column_stride = coordinates.element_strides[-2], coordinates.element_strides[-1]
    columns = nonzero.columns

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = cast(FlatArray, inputs[0]).view(bits)
        counts = np.empty(blocks, np.int64)
        with PARALLEL_LAUNCH:
            _count(x, sizes, strides, mask, rows_per_block, counts)
            firsts = np.cumsum(counts) - counts
            _write(x, sizes, strides, mask, rows_per_block, firsts, outputs[1].view(np.uint32), row_stride,
                   column_stride, columns)
        outputs[0].view(np.uint32)[0] = counts.sum()

    return kernel
