"""CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT on the CPU.

The dimensions besides Axis are merged where both tensors allow (plans.merge_dimensions); the innermost becomes a
run of `count` lines (strides `x_stride` / `y_stride`), the others offset tables. The work is split in tasks of
_CHUNK lines of one table entry, run in parallel. Each line is tallied in order along Axis (from its last element
with AxisDirection DECREASING: a negative step), one element after the other, so the result does not depend on
the split. The tally starts as the line's first element itself (a -0.0 stays -0.0). One loop order: a task holds
one tally per line of its lines, and updates them together at each position along Axis, in a loop with no test
inside (a contiguous run of lines is one LLVM vectorizes). Tasks are of _CHUNK lines where Axis is further apart in
memory than neighbouring lines (a scan over axis 0: the tallies stay in L1), else (Axis innermost) of _GROUP lines,
whose tallies do not wait on each other's adds as a single line's would.

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

_CHUNK = 1024  # lines per task in rows order: the tallies stay in L1
_GROUP = 4     # lines per task in lines order: four tallies that do not wait on each other's adds (more lines a
               # whole row apart would share one L1 set: rows of 4 KiB multiples map to the same set)


@numba.njit(inline="always")
def _tally(a: Any, b: Any, product: bool) -> Any:
    return a * b if product else a + b


def _four_lines(x: Any, y: Any, xs: int, ys: int, x_stride: int, y_stride: int, length: int, x_step: int,
                y_step: int, identity: Any, product: bool, exclusive: bool, tag: Any) -> None:
    """Four lines tallied side by side, the tallies in registers (integers widen there: a wrapping sum or product
    stored modulo the type's width is the same as one wrapped every step)."""
    t0 = load_element(x, xs, tag)
    t1 = load_element(x, xs + x_stride, tag)
    t2 = load_element(x, xs + 2 * x_stride, tag)
    t3 = load_element(x, xs + 3 * x_stride, tag)
    if exclusive:
        for line in range(4):
            store_element(y, ys + line * y_stride, identity, tag)
    else:
        store_element(y, ys, t0, tag)
        store_element(y, ys + y_stride, t1, tag)
        store_element(y, ys + 2 * y_stride, t2, tag)
        store_element(y, ys + 3 * y_stride, t3, tag)
    for step in range(1, length):
        a = xs + step * x_step
        b = ys + step * y_step
        v0 = load_element(x, a, tag)
        v1 = load_element(x, a + x_stride, tag)
        v2 = load_element(x, a + 2 * x_stride, tag)
        v3 = load_element(x, a + 3 * x_stride, tag)
        if exclusive:
            store_element(y, b, t0, tag)
            store_element(y, b + y_stride, t1, tag)
            store_element(y, b + 2 * y_stride, t2, tag)
            store_element(y, b + 3 * y_stride, t3, tag)
        t0 = _tally(t0, v0, product)
        t1 = _tally(t1, v1, product)
        t2 = _tally(t2, v2, product)
        t3 = _tally(t3, v3, product)
        if not exclusive:
            store_element(y, b, t0, tag)
            store_element(y, b + y_stride, t1, tag)
            store_element(y, b + 2 * y_stride, t2, tag)
            store_element(y, b + 3 * y_stride, t3, tag)


_four: Any = numba.njit(inline="always")(_four_lines)


def _scan_loops(x: Any, y: Any, x_bases: Any, y_bases: Any, count: int, x_stride: int, y_stride: int, length: int,
                x_step: int, y_step: int, identity: Any, product: bool, exclusive: bool, group: int, tag: Any
                ) -> None:
    chunks = (count + group - 1) // group
    for task in numba.prange(x_bases.size * chunks):
        table = task // chunks
        first = (task % chunks) * group
        size = min(group, count - first)
        x0 = x_bases[table] + first * x_stride
        y0 = y_bases[table] + first * y_stride
        if size == 4 and group == 4:
            _four(x, y, x0, y0, x_stride, y_stride, length, x_step, y_step, identity, product, exclusive, tag)
            continue
        tally = np.full(size, identity)
        for line in range(size):   # the first element of each line is its tally
            tally[line] = load_element(x, x0 + line * x_stride, tag)
            if exclusive:
                store_element(y, y0 + line * y_stride, identity, tag)
            else:
                store_element(y, y0 + line * y_stride, tally[line], tag)
        for step in range(1, length):
            xs = x0 + step * x_step
            ys = y0 + step * y_step
            # four copies of one loop, so that no test is left inside it (the contiguous ones vectorize)
            if exclusive and product:
                for line in range(size):
                    value = load_element(x, xs + line * x_stride, tag)
                    store_element(y, ys + line * y_stride, tally[line], tag)
                    tally[line] = tally[line] * value
            elif exclusive:
                for line in range(size):
                    value = load_element(x, xs + line * x_stride, tag)
                    store_element(y, ys + line * y_stride, tally[line], tag)
                    tally[line] = tally[line] + value
            elif product:
                for line in range(size):
                    tally[line] = tally[line] * load_element(x, xs + line * x_stride, tag)
                    store_element(y, ys + line * y_stride, tally[line], tag)
            elif x_stride == 1 and y_stride == 1:   # unit strides spelled out, so that LLVM vectorizes the sum
                for line in range(size):
                    tally[line] = tally[line] + load_element(x, xs + line, tag)
                    store_element(y, ys + line, tally[line], tag)
            else:
                for line in range(size):
                    tally[line] = tally[line] + load_element(x, xs + line * x_stride, tag)
                    store_element(y, ys + line * y_stride, tally[line], tag)


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
    group = _CHUNK if count > 1 and abs(y_step) > y_stride else _GROUP
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
                  exclusive, group, tag)

    return kernel
