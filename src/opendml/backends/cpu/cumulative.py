"""CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT on the CPU.

The dimensions besides Axis are merged where both tensors allow (plans.merge_dimensions); the innermost becomes a
run of `count` lines (strides `x_stride` / `y_stride`), the others offset tables. The work is split in tasks of
_CHUNK lines of one table entry, run in parallel. Each line is tallied in order along Axis (from its last element
with AxisDirection DECREASING: a negative step), one element after the other, so the result does not depend on
the split. The tally starts as the line's first element itself (a -0.0 stays -0.0). Two loop orders:

* rows (Axis is further apart in memory than neighbouring lines, e.g. a scan over axis 0): one tally per line of
  the task, the task's elements at one position along Axis updated together, a contiguous run when the lines are
  (a loop LLVM vectorizes);
* lines (Axis is the innermost): each line's tally is walked to its end before the next line.

Each element is read before its output is written, so the output may alias the input (in-place execution). FLOAT16
travels as its bits and accumulates in float32 (element_wise.load_element / store_element: widened exactly, each
output rounded once); FLOAT32 accumulates in float32; integers in their own type, stored back each step, wrapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.cumulative import CumulativeOperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import merge_dimensions
from .element_wise import load_element, store_element
from .float16 import F16_TAG, NATIVE_TAG
from .memory_kernels import PARALLEL_LAUNCH

_CHUNK = 1024  # lines per task: a rows-order task's tallies stay in L1


def _scan_loops(x: Any, y: Any, x_bases: Any, y_bases: Any, count: int, x_stride: int, y_stride: int, length: int,
                x_step: int, y_step: int, identity: Any, product: bool, exclusive: bool, rows: bool, tag: Any
                ) -> None:
    chunks = (count + _CHUNK - 1) // _CHUNK
    for task in numba.prange(x_bases.size * chunks):
        table = task // chunks
        first = (task % chunks) * _CHUNK
        size = min(_CHUNK, count - first)
        x0 = x_bases[table] + first * x_stride
        y0 = y_bases[table] + first * y_stride
        if rows:
            tally = np.full(size, identity)
            for step in range(length):
                xs = x0 + step * x_step
                ys = y0 + step * y_step
                for line in range(size):
                    value = load_element(x, xs + line * x_stride, tag)
                    if exclusive:
                        store_element(y, ys + line * y_stride, tally[line], tag)
                    if step == 0:
                        tally[line] = value
                    elif product:
                        tally[line] = tally[line] * value
                    else:
                        tally[line] = tally[line] + value
                    if not exclusive:
                        store_element(y, ys + line * y_stride, tally[line], tag)
        else:
            one = np.full(1, identity)
            for line in range(size):
                one[0] = identity
                xs = x0 + line * x_stride
                ys = y0 + line * y_stride
                for step in range(length):
                    value = load_element(x, xs + step * x_step, tag)
                    if exclusive:
                        store_element(y, ys + step * y_step, one[0], tag)
                    if step == 0:
                        one[0] = value
                    elif product:
                        one[0] = one[0] * value
                    else:
                        one[0] = one[0] + value
                    if not exclusive:
                        store_element(y, ys + step * y_step, one[0], tag)


_scan: Any = numba.njit(cache=True, parallel=True)(_scan_loops)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    scan = cast(CumulativeOperatorDesc, desc)
    source, result, axis = scan.input_tensor, scan.output_tensor, scan.axis
    length = source.sizes[axis]
    x_step, y_step = source.element_strides[axis], result.element_strides[axis]
    x_start = y_start = 0
    if scan.decreasing:   # walk from the last element: a negative step
        x_start, y_start = (length - 1) * x_step, (length - 1) * y_step
        x_step, y_step = -x_step, -y_step
    others = [dim for dim in range(source.dimension_count) if dim != axis]
    sizes, (x_strides, y_strides) = merge_dimensions([source.sizes[d] for d in others],
                                                     [source.element_strides[d] for d in others],
                                                     [result.element_strides[d] for d in others])
    count, x_stride, y_stride = sizes[-1], x_strides[-1], y_strides[-1]
    x_bases = np.full(1, x_start, np.int64)
    y_bases = np.full(1, y_start, np.int64)
    for size, x_outer, y_outer in zip(sizes[:-1], x_strides[:-1], y_strides[:-1], strict=True):
        x_bases = (x_bases[:, None] + np.arange(size, dtype=np.int64) * x_outer).ravel()
        y_bases = (y_bases[:, None] + np.arange(size, dtype=np.int64) * y_outer).ravel()
    rows = count > 1 and abs(y_step) > y_stride
    data_type = source.data_type
    half = data_type is DataType.FLOAT16
    accumulator = np.dtype(np.float32) if half else data_type.numpy_dtype
    identity = accumulator.type(scan.IDENTITY)
    tag = F16_TAG if half else NATIVE_TAG
    bits = np.dtype(np.uint16) if half else data_type.numpy_dtype
    product, exclusive = scan.is_product, scan.exclusive

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = cast(FlatArray, inputs[0]).view(bits)
        y = outputs[0].view(bits)
        with PARALLEL_LAUNCH:
            _scan(x, y, x_bases, y_bases, count, x_stride, y_stride, length, x_step, y_step, identity, product,
                  exclusive, rows, tag)

    return kernel
