"""SLICE and SLICE1 on the cpu, and the row-copy kernel the other copy operators share (DEPTH_TO_SPACE and
SPACE_TO_DEPTH, PADDING and TILE, UPSAMPLE_2D NEAREST_NEIGHBOR).

Every output element of these operators is one input element (or a constant), so each is a copy described per
output dimension by a map: the input element offset each output index along it contributes (`FILL`: the constant).
The output's last dimension is the row; the others are flattened into an offset table of rows (input and output).
Within a row the columns read `x[row + cols[c]]`; each run of at least _MIN_RUN columns whose sources step evenly (a
window's stride, a reversed axis, PADDING's interior, each copy of TILE's row) is copied as one loop that LLVM
vectorizes (a memory copy where both step by one); the other columns are gathered one by one from the row, which the
caches hold, or set to the constant. Rows are shared among numba's threads for outputs of 1 MiB or more; outputs
larger than the caches build blocks of output-consecutive rows in a 16 KiB buffer and write them with non-temporal
stores (no read of the output's lines first). The depth/space operators' 6-D view becomes one map per output
dimension, so a row is a whole output row. Elements travel as the unsigned integer of their width, so values (NaN
payloads too) are copied exactly; one numba signature per element width.

Every offset in the maps comes from the descriptor's validated window or index maps, all inside InputTensor's Sizes,
so no read leaves the bound range. Descriptors whose every tensor is within the small-tensor limit
(cpu.SMALL_TENSOR_ELEMENTS), and layouts whose rows would be shorter than _SHORT_ROW elements (a huge row table),
run the NumPy kernel (small/element_wise.py for SLICE and SLICE1: a strided view copied in one assignment).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import merge_dimensions
from .memory_kernels import HAVE_STREAMING_STORES, PARALLEL_LAUNCH, STREAMING_THRESHOLD_BYTES, fence, stream_copy
from .small import element_wise as small_element_wise

#: A map entry (and a row table entry) that means "the constant", not an input offset.
FILL = np.iinfo(np.int64).min
#: Large layouts whose rows are shorter than this run the NumPy kernel (the row tables would be as large as the data).
_SHORT_ROW = 16
#: Outputs of at least this many bytes share their rows among numba's threads.
_PARALLEL_BYTES = 1 << 20
#: Row blocks per thread a parallel copy cuts its rows into.
_CHUNKS_PER_THREAD = 4
#: Bytes of output rows a large copy builds in cache before it streams them out.
_STAGE_BYTES = 16 << 10

Map = np.ndarray[Any, np.dtype[np.int64]]


#: Evenly stepping runs at least this long are copied as runs; shorter stretches are gathered element by element.
_MIN_RUN = 8


@numba.njit(inline="always")
def _row(x: Any, xb: int, y: Any, yb: int, y_col: int, cols: Any, segments: Any, fill: Any, gather_only: bool
         ) -> None:
    """One output row at y[yb], its element c at y[yb + c * y_col]: from the input row at x[xb] (FILL: the constant),
    segment by segment: (start, stop, step) a run of columns stepping evenly through the input, or (start, stop,
    FILL) columns gathered one by one (or set to the constant)."""
    if xb == FILL:
        for c in range(cols.size):
            y[np.uint64(yb + c * y_col)] = fill
        return
    for s in range(segments.shape[0]):
        a, b, step = segments[s, 0], segments[s, 1], segments[s, 2]
        if step == FILL:
            if gather_only:   # no constant and a contiguous output row: a plain loop
                for c in range(a, b):
                    y[np.uint64(yb + c)] = x[np.uint64(xb + cols[c])]
            else:
                for c in range(a, b):
                    if cols[c] == FILL:
                        y[np.uint64(yb + c * y_col)] = fill
                    else:
                        y[np.uint64(yb + c * y_col)] = x[np.uint64(xb + cols[c])]
            continue
        n = b - a
        xs, ys = xb + cols[a], yb + a * y_col
        if y_col == 1 and step == 1:   # plain loops, not slice assignments: their set-up costs a short run much
            for c in range(n):
                y[np.uint64(ys + c)] = x[np.uint64(xs + c)]
        elif y_col == 1 and step == -1:
            for c in range(n):
                y[np.uint64(ys + c)] = x[np.uint64(xs - c)]
        elif y_col == 1 and step == 0:
            value = x[np.uint64(xs)]
            for c in range(n):
                y[np.uint64(ys + c)] = value
        else:
            for c in range(n):
                y[np.uint64(ys + c * y_col)] = x[np.uint64(xs + c * step)]


def _copy_rows_loops(x: Any, y: Any, x_rows: Any, y_rows: Any, cols: Any, segments: Any, y_col: int, fill: Any,
                     stage_rows: int, chunks: int) -> None:
    gather_only = y_col == 1
    for c in range(cols.size):
        if cols[c] == FILL:
            gather_only = False
    rows, width = x_rows.size, cols.size
    y_address, item = y.ctypes.data, y.itemsize
    for chunk in numba.prange(chunks):
        first, last = chunk * rows // chunks, (chunk + 1) * rows // chunks
        if stage_rows <= 1:
            for r in range(first, last):
                _row(x, x_rows[r], y, y_rows[r], y_col, cols, segments, fill, gather_only)
            continue
        # outputs larger than the caches: blocks of rows consecutive in the output built in a small buffer, then
        # written with non-temporal stores (no read of the output's lines first)
        stage = np.empty(stage_rows * width, y.dtype)
        stage_address = stage.ctypes.data
        r = first
        while r < last:
            count = 1
            while count < stage_rows and r + count < last and y_rows[r + count] == y_rows[r] + count * width:
                count += 1
            for k in range(count):
                _row(x, x_rows[r + k], stage, k * width, 1, cols, segments, fill, gather_only)
            stream_copy(y_address + y_rows[r] * item, stage_address, count * width * item)
            r += count
        fence()


_copy_rows: Any = numba.njit(cache=True, parallel=True)(_copy_rows_loops)


def segments_of(cols: Map) -> np.ndarray[Any, np.dtype[np.int64]]:
    """A row's columns cut into segments [start, stop, step]: each run of at least _MIN_RUN columns whose sources
    (none FILL) step evenly, and between them stretches to gather one by one (step FILL)."""
    width = cols.size
    values = [int(value) for value in cols]
    run = [1] * width   # run[i]: how many columns from i on step evenly (by values[i + 1] - values[i])
    for i in range(width - 2, -1, -1):
        if values[i] != FILL and values[i + 1] != FILL:
            step = values[i + 1] - values[i]
            follows = run[i + 1] > 1 and values[i + 2] - values[i + 1] == step
            run[i] = run[i + 1] + 1 if follows else 2
    segments: list[list[int]] = []
    i = 0
    while i < width:
        if run[i] >= _MIN_RUN:
            segments.append([i, i + run[i], values[i + 1] - values[i]])
            i += run[i]
        else:
            if segments and segments[-1][2] == FILL:
                segments[-1][1] = i + 1
            else:
                segments.append([i, i + 1, FILL])
            i += 1
    return np.array(segments, np.int64).reshape(-1, 3)


def copy_kernel(maps: Sequence[Map], y_strides: Sequence[int], data_type: DataType, fill: int | float = 0,
                base: int = 0) -> Kernel | None:
    """The kernel that writes output[o] = x[base + sum_d maps[d][o_d]] (the constant `fill`, in the output's type,
    where any map gives FILL) through the output's element `y_strides`; None where the rows would be too short for
    the row tables to pay (the caller runs its NumPy kernel)."""
    kept = [(m, s) for m, s in zip(maps, y_strides, strict=True) if m.size != 1]
    whole_fill = any(m.size == 1 and int(m[0]) == FILL for m in maps)
    base += sum(int(m[0]) for m in maps if m.size == 1 and int(m[0]) != FILL)
    if not kept:
        kept = [(np.zeros(1, np.int64), 1)]
    *outer, (cols, y_col) = kept
    rows = prod(m.size for m, _ in outer)
    if cols.size < _SHORT_ROW and rows > 4096:
        return None
    x_rows = np.full(1, FILL if whole_fill else base, np.int64)
    y_rows = np.zeros(1, np.int64)
    for m, s in outer:
        filled = (x_rows[:, None] == FILL) | (m[None, :] == FILL)
        x_rows = np.where(filled, FILL, x_rows[:, None] + m[None, :]).ravel()
        y_rows = (y_rows[:, None] + np.arange(m.size, dtype=np.int64) * s).ravel()
    segments = segments_of(cols)
    row_bytes = cols.size * data_type.element_size
    stage_rows = max(1, _STAGE_BYTES // row_bytes) if HAVE_STREAMING_STORES and y_col == 1 and \
        rows * row_bytes >= STREAMING_THRESHOLD_BYTES and row_bytes <= _STAGE_BYTES else 1
    chunks = chunks_for(rows, rows * row_bytes)
    bits = np.dtype(f"u{data_type.element_size}")
    value = np.asarray(fill, data_type.numpy_dtype).reshape(1).view(bits)[0]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        with PARALLEL_LAUNCH:
            _copy_rows(cast(FlatArray, inputs[0]).view(bits), outputs[0].view(bits), x_rows, y_rows, cols, segments,
                       y_col, value, stage_rows, chunks)

    return kernel


def chunks_for(rows: int, output_bytes: int) -> int:
    """How many parts a copy of `rows` rows cuts them into: one below _PARALLEL_BYTES of output, else a few per
    numba thread."""
    return min(rows, _CHUNKS_PER_THREAD * numba.get_num_threads()) if output_bytes >= _PARALLEL_BYTES else 1


def gather_rows(x: FlatArray, y: FlatArray, x_rows: Map, y_rows: Map, cols: Map) -> None:
    """y[y_rows[r] + c] = x[x_rows[r] + cols[c]] for every row r and column c (x and y: unsigned views of one
    width; every offset inside them), each row's columns gathered one by one."""
    chunks = chunks_for(x_rows.size, x_rows.size * cols.size * y.itemsize)
    with PARALLEL_LAUNCH:
        _copy_rows(x, y, x_rows, y_rows, cols, np.array([[0, cols.size, FILL]], np.int64), 1, y.dtype.type(0), 1,
                   chunks)


def is_small(desc: OperatorDesc) -> bool:
    """Whether every tensor of `desc` is within the cpu backend's small-tensor limit (read at compile time)."""
    from .. import cpu  # the limit tests change at run time
    return all(tensor.element_count <= cpu.SMALL_TENSOR_ELEMENTS for _, tensor in
               desc.input_slots() + desc.output_slots() if tensor is not None)


def window_kernel(desc: Any) -> Kernel | None:
    """The copy kernel of an operator that is the identity on `input_window`'s view of InputTensor (SLICE, SLICE1,
    the depth/space operators: OutputTensor's dimensions split as `input_view_sizes`), dimensions merged where both
    layouts allow."""
    output = desc.output_tensor
    base, strides = desc.input_window()
    view_sizes = tuple(getattr(desc, "input_view_sizes", lambda: output.sizes)())
    if view_sizes == tuple(output.sizes):
        sizes, (x_merged, y_merged) = merge_dimensions(view_sizes, strides, output.element_strides)
        maps = [np.arange(size, dtype=np.int64) * stride for size, stride in zip(sizes, x_merged, strict=True)]
        return copy_kernel(maps, y_merged, output.data_type, base=base)
    # a view of more dimensions (the depth/space operators): per output dimension, the offsets of its parts
    maps, k = [], 0
    for size in output.sizes:
        offsets, covered = np.zeros(1, np.int64), 1
        while covered < size:   # view_sizes refines the output's sizes row-major (parts of 1 add nothing)
            offsets = (offsets[:, None] + np.arange(view_sizes[k], dtype=np.int64) * strides[k]).ravel()
            covered *= view_sizes[k]
            k += 1
        maps.append(offsets)
    return copy_kernel(maps, output.element_strides, output.data_type, base=base)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    kernel = None if is_small(desc) else window_kernel(desc)
    return kernel if kernel is not None else small_element_wise.compile_kernel(desc, flags, debug)
