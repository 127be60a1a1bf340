"""GATHER_ND1 on the CPU: one numba pass over the index tuples, copying each gathered sub-block.

All descriptor work happens in `compile_kernel`: the tensors' dimensions are split into three groups,

* outer: the batch and index-position dimensions (the indices' meaningful sizes but the tuple size), walked by
  the indices, the output and (batch dimensions only) the input;
* tuple: the K input dimensions the coordinates select, each with its size (for wrapping and clamping) and
  input stride;
* rest: the input's trailing dimensions, copied whole for every tuple (input and output strides);

size-1 dimensions are dropped and neighbours that are contiguous in every tensor of their group are merged, so
a packed row gather is one outer loop over rows and one contiguous run per row. Data travel as unsigned
integers of their width: a gather only moves bits (NaN payloads included), and four widths need four
specialisations instead of eleven.

A dispatch walks the outer positions in chunks: first the chunk's source offsets (a sequential pass over its tuples,
vectorized: arrays are indexed unsigned (_at) and each coordinate's offset is a 32 x 32 -> 64-bit product; the [16,
1024, 256] by [16, 262144, 2] element gather went from 11.1 to 8.3 ms on 2 threads), then the copies, prefetching
rows a few positions ahead (random reads wait on memory latency). Outputs larger than the caches are written with
non-temporal stores (memory_kernels), through small staging buffers when the chunk's output is one contiguous range:
rows fill one stage while the other is streamed out a few lines per row, so that the random reads and the writes
overlap (measured: the [1M, 64] row gather went from 1.65x to 1.5x of a copy). Outputs of 1 MiB or more are split
over numba's threads, since a second thread keeps more random reads in flight. Where one batch's tuples read its
input region often (each line _TOUCH_READS times on average) and the region is small (_TOUCH_BYTES), the region is
read through in order first (touch_lines), so that its lines arrive at streaming speed instead of one random miss at
a time (the element gather: 13.6 -> 11.1 ms); a few tuples read their lines directly (issue 28's [16, 4096, 2]
element gather: 0.77 -> 0.24 ms).

Out-of-range coordinates are clamped (DECISIONS 21); `GatherKernel.debug_kernel` is the variant a
`Device(debug=True)` compiles, which checks every tuple first and raises, writing nothing, on the first one out of
range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numba
import numpy as np
import numpy.typing as npt

from ...ops.base import OperatorDesc
from ...ops.gather_nd1 import GatherNd1OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import gather_out_of_range, gather_plan
from .memory_kernels import (
    LINE_BYTES,
    PARALLEL_LAUNCH,
    STREAMING_THRESHOLD_BYTES,
    begin_stream,
    copy_bytes,
    drain_stream,
    fence,
    prefetch,
    stream_copy,
    stream_lines,
    touch_lines,
)

Int64Array = npt.NDArray[np.int64]

# A gather moves bits: every data type travels as the unsigned integer of its width.
_BITS_DTYPE: dict[int, np.dtype[Any]] = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}

# Tuples per chunk: their source offsets are computed in one pass, then their sub-blocks copied.
_CHUNK = 1024
# Bytes of rows per stage (see _gather_range): two stages stay in L1 with the rows being read.
_STAGE_BYTES = 8 << 10
# How far ahead (in bytes of rows) the row copy prefetches, and at most how many lines of each row.
_PREFETCH_BYTES = 4096
_PREFETCH_LINES = 16
# Outputs of at least this many bytes are gathered by every numba thread.
_PARALLEL_BYTES = 1 << 20
# The input region one batch's tuples read is read through first (touch_lines) when it is at most this large and
# its tuples read at least _TOUCH_READS times as many lines as it has: then random first reads of its lines would
# each wait on memory, and the region read in order (into L2) serves the rest of its reads. Measured: 16 batches of
# 1 MiB, 262144 elements gathered from each, 9.6 -> 6.5 ms. With fewer reads the read-through costs more than it
# saves: 4096 elements from each (a quarter of the lines) went from 0.77 to 0.24 ms without it (NumPy 0.33 ms), and
# at 2 reads a line (32768 elements) both take 1.8-1.9 ms (busy 2-core Xeon, 480 MiB L3, interleaved medians).
_TOUCH_BYTES = 4 << 20
_TOUCH_READS = 2


def _i64(values: Sequence[int]) -> Int64Array:
    return np.asarray(values, dtype=np.int64)


@dataclass(frozen=True)
class GatherPlan:
    """The gather's dimension groups (backends/plans.py), as int64 arrays for numba."""

    outer_sizes: Int64Array
    outer_indices_strides: Int64Array
    outer_output_strides: Int64Array
    outer_input_strides: Int64Array
    coordinate_sizes: Int64Array
    coordinate_strides: Int64Array
    tuple_stride: int           # the indices' stride between the coordinates of one tuple
    signed: bool                # negative coordinates count from the end (signed index types)
    rest_sizes: Int64Array
    rest_input_strides: Int64Array
    rest_output_strides: Int64Array


def make_plan(desc: GatherNd1OperatorDesc) -> GatherPlan:
    """The shared plan (backends/plans.py) as numba's arrays."""
    plan = gather_plan(desc)
    return GatherPlan(
        _i64(plan.outer_sizes), _i64(plan.outer_indices_strides), _i64(plan.outer_output_strides),
        _i64(plan.outer_input_strides), _i64(plan.coordinate_sizes), _i64(plan.coordinate_strides),
        plan.tuple_stride, plan.signed, _i64(plan.rest_sizes), _i64(plan.rest_input_strides),
        _i64(plan.rest_output_strides))


# ---------------------------------------------------------------------------------------------------------------
# numba kernels


@numba.njit(cache=True, inline="always")
def _copy_rest(data: Any, source: int, out: Any, target: int, rest_sizes: Any, rest_in: Any, rest_out: Any,
               rest_counter: Any) -> None:
    """Copies one gathered sub-block: rest dims walked row-major, the last one as the inner loop."""
    last = rest_sizes.size - 1
    run, step_in, step_out = rest_sizes[last], rest_in[last], rest_out[last]
    if last == 0:
        if step_in == 1 and step_out == 1:
            for r in range(run):
                out[target + r] = data[source + r]
        else:
            for r in range(run):
                out[target + r * step_out] = data[source + r * step_in]
        return
    for d in range(last):
        rest_counter[d] = 0
    while True:
        offset_in, offset_out = source, target
        for d in range(last):
            offset_in += rest_counter[d] * rest_in[d]
            offset_out += rest_counter[d] * rest_out[d]
        for r in range(run):
            out[offset_out + r * step_out] = data[offset_in + r * step_in]
        d = last - 1
        while d >= 0:
            rest_counter[d] += 1
            if rest_counter[d] < rest_sizes[d]:
                break
            rest_counter[d] = 0
            d -= 1
        if d < 0:
            return


@numba.njit(cache=True, inline="always")
def _prefetch_row(address: int, nbytes: int, lines: int) -> None:
    """Prefetches the `lines` first lines of a row and its last one (a row that starts inside a line ends in
    one line more than its length in lines)."""
    for line in range(lines):
        prefetch(address + line * LINE_BYTES)
    prefetch(address + nbytes - 1)


@numba.njit(cache=True, inline="always")
def _valid(value: Any, size: Any, signed: bool) -> Any:
    """One coordinate made valid: a negative one of a signed type counts from the end once; whatever is still
    out of range is clamped to the nearest valid coordinate (DECISIONS 21). Written as selects, not branches."""
    v: Any = np.int64(value)
    if signed:
        v = v + size if v < 0 else v  # from the end, once
        v = 0 if v < 0 else v
        return size - 1 if v >= size else v
    # A negative value here is a UINT64 of 2^63 or more viewed as int64: too large, like v >= size.
    return size - 1 if v < 0 or v >= size else v


@numba.njit(cache=True, inline="always")
def _at(position: int) -> Any:
    """An array index that numba takes as unsigned: a signed one gets numba's wraparound of negative indices,
    which kept LLVM from vectorizing the source passes where numba compiles them on their own. The process that
    compiled the kernel ran that scalar copy (the element gather on one thread: 19 ms), while processes that
    loaded it from the cache happened to link the caller's own vectorized copy (12.7 ms); now every process runs
    vectorized code (12.4 ms). Positions here are never negative."""
    return np.uint64(position)


@numba.njit(cache=True, inline="always")
def _offset(value: Any, size: Any, stride: Any, signed: bool) -> Any:
    """The input offset one coordinate contributes: its valid value (below its dimension's size) times the
    dimension's stride. Both are below 2^32 (DML sizes and strides are UINT), so the product is taken as 32 x 32
    -> 64 bits, exact, which vectorizes as one instruction (vpmuludq) where a 64-bit multiply takes several
    (measured: 4M pairs from L1, 4.2 -> 2.7 ms)."""
    return np.int64(np.uint64(np.uint32(_valid(value, size, signed))) * np.uint64(np.uint32(stride)))


@numba.njit(cache=True)
def _single_sources(indices: Any, at_ix: int, count: int, size: int, stride: int, signed: bool, base_in: int,
                    step_in: int, sources: Any) -> None:
    """_tuple_sources for 1-coordinate tuples that follow one another."""
    for j in range(count):
        sources[_at(j)] = base_in + j * step_in + _offset(indices[_at(at_ix + j)], size, stride, signed)


@numba.njit(cache=True)
def _pair_sources(indices: Any, at_ix: int, count: int, size0: int, size1: int, stride0: int, stride1: int,
                  signed: bool, base_in: int, step_in: int, sources: Any) -> None:
    """_tuple_sources for packed 2-coordinate tuples (constant strides: de-interleaving vector loads)."""
    for j in range(count):
        sources[_at(j)] = (base_in + j * step_in + _offset(indices[_at(at_ix + 2 * j)], size0, stride0, signed)
                           + _offset(indices[_at(at_ix + 2 * j + 1)], size1, stride1, signed))


@numba.njit(cache=True)
def _tuple_sources(indices: Any, at_ix: int, step_ix: int, count: int, coordinate_sizes: Any,
                   coordinate_strides: Any, tuple_stride: int, signed: bool, base_in: int, step_in: int,
                   sources: Any) -> None:
    """sources[j] = the input offset of the sub-block that the tuple of position j selects (j < count).

    Packed 1- and 2-coordinate tuples get loops with constant strides (contiguous or de-interleaved vector
    loads); any other layout goes coordinate by coordinate, each a strided pass LLVM can still vectorize."""
    tuple_size = coordinate_sizes.size
    if tuple_size == 1 and step_ix == 1:
        _single_sources(indices, at_ix, count, coordinate_sizes[0], coordinate_strides[0], signed, base_in, step_in,
                        sources)
        return
    if tuple_size == 2 and step_ix == 2 and tuple_stride == 1:
        _pair_sources(indices, at_ix, count, coordinate_sizes[0], coordinate_sizes[1], coordinate_strides[0],
                      coordinate_strides[1], signed, base_in, step_in, sources)
        return
    for j in range(count):
        sources[_at(j)] = base_in + j * step_in
    for k in range(tuple_size):
        size, stride, at = coordinate_sizes[k], coordinate_strides[k], at_ix + k * tuple_stride
        for j in range(count):
            sources[_at(j)] += _offset(indices[_at(at + j * step_ix)], size, stride, signed)


# The layout of GatherKernel's `settings` array; its `layout` array holds the GatherPlan arrays one after another
# (outer sizes and strides, coordinate sizes and strides, rest sizes and strides). Two arrays instead of twenty
# arguments: numba checks every argument's type at each call.
(_S_OUTER, _S_TUPLE, _S_REST, _S_TUPLE_STRIDE, _S_SIGNED, _S_STAGED, _S_STREAM_ROWS, _S_STAGE_ROWS, _S_AHEAD,
 _S_LINES, _S_TOUCH) = range(11)


@numba.njit(cache=True)
def _gather_range(data: Any, indices: Any, out: Any, layout: Any, settings: Any, start: int, stop: int) -> None:
    """Gathers the tuples at row-major outer positions [start, stop), chunk by chunk: the chunk's source offsets
    first (_tuple_sources), then its sub-blocks.

    `staged` (large outputs whose chunks are each one contiguous range): single elements are gathered into a
    stage that stays in cache, then streamed out with non-temporal stores; rows go `stage_rows` at a time into
    one of two stages, and while one stage fills, the other's whole output lines are streamed out a few per row
    gathered, so that the writes overlap the reads (each waits on memory otherwise). `stream_rows` (large
    outputs of long rows): each row is streamed out directly. Rows of at least a cache line are copied with
    memcpy while the `lines` first lines and the last line of the row `ahead` positions later are prefetched."""
    n_outer, n_tuple, n_rest = settings[_S_OUTER], settings[_S_TUPLE], settings[_S_REST]
    outer_sizes, outer_ix = layout[0:n_outer], layout[n_outer:2 * n_outer]
    outer_out, outer_in = layout[2 * n_outer:3 * n_outer], layout[3 * n_outer:4 * n_outer]
    at = 4 * n_outer
    coordinate_sizes, coordinate_strides = layout[at:at + n_tuple], layout[at + n_tuple:at + 2 * n_tuple]
    at += 2 * n_tuple
    rest_sizes, rest_in, rest_out = layout[at:at + n_rest], layout[at + n_rest:at + 2 * n_rest], layout[
        at + 2 * n_rest:at + 3 * n_rest]
    tuple_stride, signed = settings[_S_TUPLE_STRIDE], settings[_S_SIGNED] != 0
    chunk, staged, stream_rows = _CHUNK, settings[_S_STAGED] != 0, settings[_S_STREAM_ROWS] != 0
    stage_rows, ahead, lines = settings[_S_STAGE_ROWS], settings[_S_AHEAD], settings[_S_LINES]
    touch, touched = settings[_S_TOUCH], -1
    last = outer_sizes.size - 1
    positions, step_ix, step_out, step_in = outer_sizes[last], outer_ix[last], outer_out[last], outer_in[last]
    rest_counter = np.zeros(rest_sizes.size, np.int64)
    sources = np.empty(chunk, np.int64)
    run = rest_sizes[0]
    single = rest_sizes.size == 1 and run == 1
    contiguous_run = rest_sizes.size == 1 and rest_in[0] == 1 and rest_out[0] == 1
    item = data.itemsize
    run_bytes = run * item
    rows_staged = staged and not single
    stage = np.empty((2 * stage_rows * run + LINE_BYTES if rows_staged else chunk) if staged else 1, data.dtype)
    # Raw addresses as signed integers: numba turns uint64 + int64 into float64.
    data_address, out_address = np.int64(data.ctypes.data), np.int64(out.ctypes.data)
    stage_address = np.int64(stage.ctypes.data)
    if rows_staged:  # whole lines of the stage are read into whole lines of the output
        stage_address += (LINE_BYTES - stage_address % LINE_BYTES) % LINE_BYTES
    # Staged rows: the whole output lines of the last filled stage not yet streamed out, and where they go.
    pending, pending_from, pending_to = 0, 0, 0
    parity = 0
    position = start
    while position < stop:
        block, first = position // positions, position % positions
        base_ix, base_out, base_in = 0, 0, 0
        for d in range(last - 1, -1, -1):  # unravel the block over the outer dims but the last
            coordinate = block % outer_sizes[d]
            block //= outer_sizes[d]
            base_ix += coordinate * outer_ix[d]
            base_out += coordinate * outer_out[d]
            base_in += coordinate * outer_in[d]
        if touch > 0 and base_in != touched:  # a new region of the input: read it through first
            touch_lines(data, base_in, base_in + touch)
            touched = base_in
        count = min(chunk, positions - first, stop - position)
        position += count
        _tuple_sources(indices, base_ix + first * step_ix, step_ix, count, coordinate_sizes, coordinate_strides,
                       tuple_stride, signed, base_in + first * step_in, step_in, sources)
        target = base_out + first * step_out
        if single:
            # Offsets are never negative: the exits only keep LLVM from vectorizing these loops into gather
            # instructions, which measured slower here than scalar loads.
            if staged:
                for j in range(count):
                    source = sources[j]
                    if source < 0:
                        break
                    stage[j] = data[source]
                stream_copy(out_address + target * item, stage_address, count * item)
            else:
                for j in range(count):
                    source = sources[j]
                    if source < 0:
                        break
                    out[target + j * step_out] = data[source]
        elif rows_staged:
            for first_row in range(0, count, stage_rows):
                end_row = min(first_row + stage_rows, count)
                into = stage_address + parity * stage_rows * run_bytes
                parity ^= 1
                per_row = -(-pending // (end_row - first_row))  # the other stage is out when this one is full
                for j in range(first_row, end_row):
                    if j + ahead < count:
                        _prefetch_row(data_address + sources[j + ahead] * item, run_bytes, lines)
                    copy_bytes(into + (j - first_row) * run_bytes, data_address + sources[j] * item, run_bytes)
                    pending, pending_from, pending_to = drain_stream(pending, pending_from, pending_to, per_row)
                pending, pending_from, pending_to = begin_stream(out_address + (target + first_row * run) * item,
                                                                 into, (end_row - first_row) * run_bytes)
        elif contiguous_run and run_bytes >= LINE_BYTES:
            into, step = out_address + target * item, step_out * item
            for j in range(count):
                if j + ahead < count:
                    _prefetch_row(data_address + sources[j + ahead] * item, run_bytes, lines)
                if stream_rows:
                    stream_copy(into + j * step, data_address + sources[j] * item, run_bytes)
                else:
                    copy_bytes(into + j * step, data_address + sources[j] * item, run_bytes)
        elif contiguous_run:
            for j in range(count):
                at_out, at_in = target + j * step_out, sources[j]
                for r in range(run):
                    out[at_out + r] = data[at_in + r]
        else:
            for j in range(count):
                _copy_rest(data, sources[j], out, target + j * step_out, rest_sizes, rest_in, rest_out, rest_counter)
    stream_lines(pending_to, pending_from, pending)
    if staged or stream_rows:
        fence()  # this thread's non-temporal stores are visible before the call returns


@numba.njit(cache=True, parallel=True)
def _gather_parallel(data: Any, indices: Any, out: Any, layout: Any, settings: Any, total: int, parts: int) -> None:
    """_gather_range over `parts` equal shares of the `total` outer positions, one per thread; the shares write
    disjoint outputs (validation refuses outputs whose elements overlap)."""
    for part in numba.prange(parts):
        _gather_range(data, indices, out, layout, settings, total * part // parts, total * (part + 1) // parts)


@numba.njit(cache=True)
def _first_out_of_range(indices: Any, outer_sizes: Any, outer_ix: Any, coordinate_sizes: Any, tuple_stride: int,
                        signed: bool) -> tuple[int, int]:
    """(row-major position over the outer dims, coordinate) of the first coordinate out of range, or (-1, -1).

    Unsigned UINT64 values arrive viewed as int64: a negative one is out of range."""
    last = outer_sizes.size - 1
    positions, step_ix = outer_sizes[last], outer_ix[last]
    blocks = 1
    for d in range(last):
        blocks *= outer_sizes[d]
    counter = np.zeros(max(last, 1), np.int64)
    tuple_size = coordinate_sizes.size
    for block in range(blocks):
        base_ix = 0
        for d in range(last):
            base_ix += counter[d] * outer_ix[d]
        for p in range(positions):
            at_ix = base_ix + p * step_ix
            for k in range(tuple_size):
                v = np.int64(indices[at_ix + k * tuple_stride])
                size = coordinate_sizes[k]
                if (v < -size if signed else v < 0) or v >= size:
                    return block * positions + p, k
        d = last - 1
        while d >= 0:
            counter[d] += 1
            if counter[d] < outer_sizes[d]:
                break
            counter[d] = 0
            d -= 1
    return -1, -1


# ---------------------------------------------------------------------------------------------------------------
# The backend interface


class GatherKernel:
    """kernel(inputs, outputs) for the backend; `debug_kernel` adds DML's debug-layer check of the indices."""

    def __init__(self, desc: GatherNd1OperatorDesc) -> None:
        self.desc = desc
        self.plan = make_plan(desc)
        item = desc.input_tensor.data_type.element_size
        self._bits = _BITS_DTYPE[item]
        plan = self.plan
        contiguous_run = plan.rest_sizes.size == 1 and plan.rest_input_strides[0] == 1 \
            and plan.rest_output_strides[0] == 1
        run_bytes = int(plan.rest_sizes[0]) * item if contiguous_run else item
        stream = desc.output_tensor.total_tensor_size_in_bytes >= STREAMING_THRESHOLD_BYTES
        # Staging pays when the positions of a chunk fill one contiguous output range and rows are short.
        staged = bool(stream and contiguous_run and plan.outer_output_strides[-1] == plan.rest_sizes[0]
                      and run_bytes * 4 <= _STAGE_BYTES)
        stream_rows = bool(stream and contiguous_run and not staged and run_bytes >= 2048)
        self._layout = np.concatenate([plan.outer_sizes, plan.outer_indices_strides, plan.outer_output_strides,
                                       plan.outer_input_strides, plan.coordinate_sizes, plan.coordinate_strides,
                                       plan.rest_sizes, plan.rest_input_strides, plan.rest_output_strides])
        stage_rows = max(1, _STAGE_BYTES // run_bytes)
        ahead = min(64, max(1, _PREFETCH_BYTES // run_bytes))
        lines = min(_PREFETCH_LINES, -(-run_bytes // LINE_BYTES))
        self._settings = np.array([
            plan.outer_sizes.size, plan.coordinate_sizes.size, plan.rest_sizes.size, plan.tuple_stride, plan.signed,
            staged, stream_rows, stage_rows, ahead, lines, self._touch_span()], np.int64)
        self._positions = int(np.prod(plan.outer_sizes))
        # Random reads wait on memory latency, so a second thread (more reads in flight) pays for large gathers.
        threads = numba.get_num_threads()
        self._parts = threads if threads > 1 and desc.output_tensor.element_count * item >= _PARALLEL_BYTES \
            and self._positions >= 2 * threads else 1
        # UINT64 indices travel as int64 (numba would mix uint64 and int64 into float64); GatherPlan.signed tells
        # the kernel that their negatives are huge values.
        self._index_view = np.dtype(np.int64) if desc.indices_tensor.data_type == DataType.UINT64 else None

    def _touch_span(self) -> int:
        """The elements of the input region that one batch's tuples read, if it is read through first (see
        _TOUCH_BYTES), else 0. The region runs from the batch's first element to its last reachable one."""
        plan, item = self.plan, self.desc.input_tensor.data_type.element_size
        span = 1 + int(np.dot(plan.coordinate_sizes - 1, plan.coordinate_strides)) \
            + int(np.dot(plan.rest_sizes - 1, plan.rest_input_strides))
        tuples = int(np.prod(plan.outer_sizes[plan.outer_input_strides == 0]))
        region_lines = -(-span * item // LINE_BYTES)
        read_lines = tuples * -(-int(np.prod(plan.rest_sizes)) * item // LINE_BYTES)
        return span if span * item <= _TOUCH_BYTES and read_lines >= _TOUCH_READS * region_lines else 0

    def _index_array(self, indices: FlatArray) -> FlatArray:
        return indices if self._index_view is None else indices.view(self._index_view)

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        data, indices = cast(FlatArray, inputs[0]), cast(FlatArray, inputs[1])
        bits = self._bits
        if self._parts > 1:
            with PARALLEL_LAUNCH:
                _gather_parallel(data.view(bits), self._index_array(indices), outputs[0].view(bits), self._layout,
                                 self._settings, self._positions, self._parts)
        else:
            _gather_range(data.view(bits), self._index_array(indices), outputs[0].view(bits), self._layout,
                          self._settings, 0, self._positions)

    def debug_kernel(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        """Checks every coordinate before anything is written (DECISIONS 21), then gathers."""
        plan = self.plan
        indices = cast(FlatArray, inputs[1])
        position, coordinate = _first_out_of_range(self._index_array(indices), plan.outer_sizes,
                                                    plan.outer_indices_strides, plan.coordinate_sizes,
                                                    plan.tuple_stride, plan.signed)
        if position >= 0:
            raise gather_out_of_range(self.desc, int(position), int(coordinate), lambda at: int(indices[at]))
        self(inputs, outputs)



def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    kernel = GatherKernel(cast(GatherNd1OperatorDesc, desc))
    return kernel.debug_kernel if debug else kernel
