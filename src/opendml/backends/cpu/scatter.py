"""SCATTER_ELEMENTS and SCATTER_ND on the CPU: numba's mark, then copy (backends/scatter_plan.py), or, for batches
with small blocks, each batch directly.

The mark walks the updates' outer positions in row-major order, one thread, and stores in `winner[cell]` the
updates' element offset of the last position whose tuple selects the cell (-1: none; a tuple with a coordinate out
of range is skipped). The copy then writes each cell of the output once, its rest elements from the winner's update
or, unmarked, from the input, split over numba's threads for outputs of 1 MiB or more (cells are disjoint). Contiguous
rest runs of at least a cache line are memcpy'd (with non-temporal stores where the output is larger than the
caches: no line of it is read first), and runs of unmarked packed rows are copied from the input as one memcpy, so a
scatter of a few rows costs about a copy; the winners' update rows are prefetched ahead.

Where the scatter has batch dimensions (SCATTER_ELEMENTS' axes other than Axis) whose output blocks are small
(_DIRECT_BLOCK_BYTES), each batch is written directly instead: its block copied from the input, then its updates
written over it in row-major order (the block still in cache), batches split over the threads. Either way the last
update in row-major order wins. Data travel as unsigned integers of their width: every bit pattern is kept.

A `Device(debug=True)` compiles `debug_kernel`, which checks every coordinate first (GATHER_ND1's check on the
same outer positions) and raises, writing nothing, on the first one out of range, naming its IndicesTensor position
and value (ops/scatter.ScatterAsGatherNd1.index_refusal).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from math import prod
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import gather_out_of_range
from ..scatter_plan import scatter_plan
from .gather_nd1 import _at, _copy_rest, _first_out_of_range
from .memory_kernels import (
    LINE_BYTES,
    PARALLEL_LAUNCH,
    STREAMING_THRESHOLD_BYTES,
    copy_bytes,
    fence,
    prefetch,
    stream_copy,
)

# Outputs of at least this many bytes are copied by every numba thread.
_PARALLEL_BYTES = 1 << 20
# How far ahead (in bytes of rows) the row copy prefetches the winners' update rows (random reads wait on memory).
_PREFETCH_BYTES = 4096
# Batches whose output block is at most this large are written directly: the block copied, then its updates.
_DIRECT_BLOCK_BYTES = 256 << 10

# The layout of `settings`: group lengths, then flags; `layout` holds the plan's arrays one after another.
_S_OUTER, _S_TUPLE, _S_CELLS, _S_REST, _S_TUPLE_STRIDE, _S_SIGNED, _S_STREAM = range(7)


@numba.njit(cache=True)
def _walk(indices: Any, updates: Any, out: Any, layout: Any, settings: Any, winner: Any, start: int, stop: int,
          direct: bool) -> None:
    """The outer positions [start, stop) in row-major order: each valid tuple's cell gets the updates' offset of its
    position in `winner` (the mark: the last one stays), or, `direct` (one coordinate per tuple, one element per
    cell: SCATTER_ELEMENTS), its update written into the output at once (later positions overwrite earlier ones)."""
    n, k_count = settings[_S_OUTER], settings[_S_TUPLE]
    outer_sizes, outer_ix = layout[0:n], layout[n:2 * n]
    outer_up, outer_cell, outer_out = layout[2 * n:3 * n], layout[3 * n:4 * n], layout[4 * n:5 * n]
    at = 5 * n
    coordinate_sizes, coordinate_cells = layout[at:at + k_count], layout[at + k_count:at + 2 * k_count]
    coordinate_outs = layout[at + 2 * k_count:at + 3 * k_count]
    tuple_stride, signed = settings[_S_TUPLE_STRIDE], settings[_S_SIGNED] != 0
    last = n - 1
    positions, step_ix, step_up, step_cell = outer_sizes[last], outer_ix[last], outer_up[last], outer_cell[last]
    step_out = outer_out[last]
    position = start
    while position < stop:
        block, first = position // positions, position % positions
        count = min(positions - first, stop - position)
        position += count
        rest, base_ix, base_up, base_cell, base_out = block, 0, 0, 0, 0
        for d in range(last - 1, -1, -1):
            c = rest % outer_sizes[d]
            rest //= outer_sizes[d]
            base_ix += c * outer_ix[d]
            base_up += c * outer_up[d]
            base_cell += c * outer_cell[d]
            base_out += c * outer_out[d]
        if direct:
            size, stride = coordinate_sizes[0], coordinate_outs[0]
            for p in range(first, first + count):
                v = np.int64(indices[_at(base_ix + p * step_ix)])
                if signed and v < 0:
                    v += size
                if 0 <= v < size:   # unsigned 64-bit values of 2^63 and more arrive negative: too large
                    out[_at(base_out + p * step_out + v * stride)] = updates[_at(base_up + p * step_up)]
            continue
        for p in range(first, first + count):
            at = base_ix + p * step_ix
            cell = base_cell + p * step_cell
            valid = True
            for k in range(k_count):
                v = np.int64(indices[at + k * tuple_stride])
                size = coordinate_sizes[k]
                if signed and v < 0:
                    v += size
                if v < 0 or v >= size:   # unsigned 64-bit values of 2^63 and more arrive negative: too large
                    valid = False
                    break
                cell += v * coordinate_cells[k]
            if valid:
                winner[cell] = base_up + p * step_up


@numba.njit(cache=True)
def _copy_range(data: Any, updates: Any, out: Any, winner: Any, layout: Any, settings: Any, start: int,
                stop: int) -> None:
    """Writes the cells [start, stop) (row-major) of the output: each from its winner's update, else the input. An
    empty `winner` (single elements only): every cell from the input."""
    at = 5 * settings[_S_OUTER] + 3 * settings[_S_TUPLE]
    m, r = settings[_S_CELLS], settings[_S_REST]
    cell_sizes, cell_out, cell_in = layout[at:at + m], layout[at + m:at + 2 * m], layout[at + 2 * m:at + 3 * m]
    at += 3 * m
    rest_sizes, rest_out = layout[at:at + r], layout[at + r:at + 2 * r]
    rest_in, rest_up = layout[at + 2 * r:at + 3 * r], layout[at + 3 * r:at + 4 * r]
    counter = np.zeros(r, np.int64)
    last = m - 1
    row, step_out, step_in = cell_sizes[last], cell_out[last], cell_in[last]
    run = rest_sizes[0]
    contiguous = r == 1 and rest_out[0] == 1 and rest_in[0] == 1 and rest_up[0] == 1
    item = data.itemsize
    whole_rows = contiguous and run * item >= LINE_BYTES
    packed = whole_rows and step_out == run and step_in == run   # unmarked neighbours: one memcpy
    stream = settings[_S_STREAM] != 0
    ahead = max(1, min(64, _PREFETCH_BYTES // max(1, run * data.itemsize)))
    lines = -(-run * data.itemsize // LINE_BYTES)
    fetched = start   # the update rows of the marked cells before this one are prefetched
    single = r == 1 and run == 1
    data_address, up_address = np.int64(data.ctypes.data), np.int64(updates.ctypes.data)
    out_address = np.int64(out.ctypes.data)
    cell = start
    while cell < stop:
        block, first = cell // row, cell % row
        count = min(row - first, stop - cell)
        rest, base_out, base_in = block, 0, 0
        for d in range(last - 1, -1, -1):
            c = rest % cell_sizes[d]
            rest //= cell_sizes[d]
            base_out += c * cell_out[d]
            base_in += c * cell_in[d]
        if single and winner.size == 0:
            if step_out == 1 and step_in == 1:
                copy_bytes(out_address + (base_out + first) * item, data_address + (base_in + first) * item,
                           count * item)
            else:
                for j in range(first, first + count):
                    out[base_out + j * step_out] = data[base_in + j * step_in]
        elif single:
            for j in range(first, first + count):
                w = winner[cell + j - first]
                if w >= 0:
                    out[base_out + j * step_out] = updates[w]
                else:
                    out[base_out + j * step_out] = data[base_in + j * step_in]
        elif whole_rows:
            j = first
            while j < first + count:
                limit = min(cell + j - first + ahead, stop)
                while fetched < limit:
                    marked = winner[fetched]
                    if marked >= 0:
                        for line in range(lines):
                            prefetch(up_address + marked * item + line * LINE_BYTES)
                    fetched += 1
                w = winner[cell + j - first]
                end, source = j + 1, up_address + w * item
                if w < 0:
                    source = data_address + (base_in + j * step_in) * item
                    if packed:
                        while end < first + count and winner[cell + end - first] < 0:
                            end += 1
                if stream:
                    stream_copy(out_address + (base_out + j * step_out) * item, source, (end - j) * run * item)
                else:
                    copy_bytes(out_address + (base_out + j * step_out) * item, source, (end - j) * run * item)
                j = end
        else:
            for j in range(first, first + count):
                w = winner[cell + j - first]
                if w >= 0:
                    _copy_rest(updates, w, out, base_out + j * step_out, rest_sizes, rest_up, rest_out, counter)
                else:
                    _copy_rest(data, base_in + j * step_in, out, base_out + j * step_out, rest_sizes, rest_in,
                               rest_out, counter)
        cell += count
    if stream:
        fence()  # this thread's non-temporal stores are visible before the call returns


@numba.njit(cache=True, parallel=True)
def _copy_parallel(data: Any, updates: Any, out: Any, winner: Any, layout: Any, settings: Any, total: int,
                   parts: int) -> None:
    for part in numba.prange(parts):
        _copy_range(data, updates, out, winner, layout, settings, total * part // parts, total * (part + 1) // parts)


@numba.njit(cache=True)
def _direct_range(data: Any, indices: Any, updates: Any, out: Any, layout: Any, settings: Any, batches: int,
                  start: int, stop: int) -> None:
    """The batches [start, stop), one after the other: the batch's cells copied from the input, then its updates
    written over them in row-major order (the block stays in cache between the two)."""
    n, k_count = settings[_S_OUTER], settings[_S_TUPLE]
    cells, positions = 1, 1
    at = 5 * n + 3 * k_count
    for d in range(settings[_S_CELLS]):
        cells *= int(layout[at + d])
    for d in range(n):
        positions *= int(layout[d])
    cells //= batches
    positions //= batches
    unmarked = np.empty(0, np.int64)   # every cell copied from the input
    for batch in range(start, stop):
        _copy_range(data, updates, out, unmarked, layout, settings, batch * cells, (batch + 1) * cells)
        _walk(indices, updates, out, layout, settings, unmarked, batch * positions, (batch + 1) * positions, True)


@numba.njit(cache=True, parallel=True)
def _direct_parallel(data: Any, indices: Any, updates: Any, out: Any, layout: Any, settings: Any, batches: int,
                     parts: int) -> None:
    for part in numba.prange(parts):
        _direct_range(data, indices, updates, out, layout, settings, batches, batches * part // parts,
                      batches * (part + 1) // parts)


def _i64(values: Sequence[int]) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.asarray(values, dtype=np.int64)


class ScatterKernel:
    """kernel(inputs, outputs) for the backend; `debug_kernel` adds DML's debug-layer check of the indices."""

    def __init__(self, desc: ScatterElementsOperatorDesc | ScatterNdOperatorDesc) -> None:
        self.desc = desc
        self.dual = desc.as_gather_nd1()
        plan = self.plan = scatter_plan(desc)
        self._layout = np.concatenate([_i64(values) for values in (
            plan.outer_sizes, plan.outer_indices_strides, plan.outer_updates_strides, plan.outer_cell_strides,
            plan.outer_output_strides, plan.coordinate_sizes, plan.coordinate_cell_strides,
            plan.coordinate_output_strides, plan.cell_sizes, plan.cell_output_strides,
            plan.cell_input_strides, plan.rest_sizes, plan.rest_output_strides, plan.rest_input_strides,
            plan.rest_updates_strides)])
        item = desc.input_tensor.data_type.element_size
        # Batches (SCATTER_ELEMENTS' other axes) with small blocks go direct (see _direct_range); otherwise the marks.
        self._batches = prod(size for size, cell in zip(plan.outer_sizes, plan.outer_cell_strides, strict=True)
                             if cell != 0)
        self._direct = self._batches >= 2 and plan.rest_count == 1 and len(plan.coordinate_sizes) == 1 and \
            plan.cells // self._batches * item <= _DIRECT_BLOCK_BYTES
        # Outputs larger than the caches are written with non-temporal stores (whole rows in order), unless direct.
        stream = desc.output_tensor.total_tensor_size_in_bytes >= STREAMING_THRESHOLD_BYTES and not self._direct
        self._settings = _i64([len(plan.outer_sizes), len(plan.coordinate_sizes), len(plan.cell_sizes),
                               len(plan.rest_sizes), plan.tuple_stride, plan.signed, stream])
        self._bits = np.dtype(f"u{item}")
        threads = numba.get_num_threads()
        units = self._batches if self._direct else plan.cells
        self._parts = threads if threads > 1 and desc.output_tensor.element_count * item >= _PARALLEL_BYTES \
            and units >= 2 * threads else 1
        # UINT64 indices travel as int64 (numba would mix uint64 and int64 into float64); a negative one is huge.
        self._index_view = np.dtype(np.int64) if desc.indices_tensor.data_type == DataType.UINT64 else None
        # The marks, allocated once: a fresh array this large would get fresh pages (faults) on every call. A call
        # that finds them in use by another thread allocates its own.
        self._winner = np.empty(0 if self._direct else plan.cells, np.int64)
        self._winner_lock = threading.Lock()

    def _index_array(self, indices: FlatArray) -> FlatArray:
        return indices if self._index_view is None else indices.view(self._index_view)

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        data, indices, updates = (cast(FlatArray, array) for array in inputs)
        bits, layout, settings = self._bits, self._layout, self._settings
        source, index, values, out = data.view(bits), self._index_array(indices), updates.view(bits), \
            outputs[0].view(bits)
        if self._direct:
            if self._parts > 1:
                with PARALLEL_LAUNCH:
                    _direct_parallel(source, index, values, out, layout, settings, self._batches, self._parts)
            else:
                _direct_range(source, index, values, out, layout, settings, self._batches, 0, self._batches)
            return
        own = self._winner_lock.acquire(blocking=False)
        try:
            winner = self._winner if own else np.empty(self.plan.cells, np.int64)
            winner.fill(-1)
            _walk(index, values, out, layout, settings, winner, 0, self.plan.positions, False)
            if self._parts > 1:
                with PARALLEL_LAUNCH:
                    _copy_parallel(source, values, out, winner, layout, settings, self.plan.cells, self._parts)
            else:
                _copy_range(source, values, out, winner, layout, settings, 0, self.plan.cells)
        finally:
            if own:
                self._winner_lock.release()

    def debug_kernel(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        """Checks every coordinate before anything is written, then scatters."""
        plan = self.plan
        indices = cast(FlatArray, inputs[1])
        position, coordinate = _first_out_of_range(
            self._index_array(indices), _i64(plan.outer_sizes), _i64(plan.outer_indices_strides),
            _i64(plan.coordinate_sizes), plan.tuple_stride, plan.signed)
        if position >= 0:
            raise gather_out_of_range(self.dual, int(position), int(coordinate), lambda at: int(indices[at]))
        self(inputs, outputs)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    assert isinstance(desc, (ScatterElementsOperatorDesc, ScatterNdOperatorDesc))
    kernel = ScatterKernel(desc)
    return kernel.debug_kernel if debug else kernel
