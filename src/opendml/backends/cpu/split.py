"""SPLIT on the CPU, and the slice copy it shares with JOIN.

SPLIT and JOIN move the same bytes in opposite directions: SPLIT copies the slice [offset_i, offset_i + size_i)
along Axis of one whole tensor (its input) into part i (output i); JOIN copies part i (input i) into that slice of
the whole tensor (its output). `slices_kernel` compiles either direction.

Packed tensors (the common case) are one pass over the whole tensor: viewed as [outer, row] with row = Sizes[Axis] x
(product of the sizes after Axis), part i is the run of ``chunk_i`` bytes at ``start_i`` of every row. The kernel
copies runs, row after row and part after part, so that the whole tensor is read (SPLIT) or written (JOIN) once in
order and every part likewise. Targets larger than the caches are written with non-temporal stores
(memory_kernels), their rows shared among numba's threads. Any other layout (padded, transposed, broadcast) takes
NumPy's strided copy between views of the bound buffers, which is correct for all strides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.split import SplitOperatorDesc
from ...tensor import TensorDesc
from ...types import ExecutionFlags
from .. import FlatArray, Kernel
from . import memory_kernels
from .memory_kernels import PARALLEL_LAUNCH, copy_bytes, fence, njit_cached, stream_line


def _copy_runs_plain(sources: Any, source_steps: Any, targets: Any, target_steps: Any, chunks: Any, lanes: Any,
                     outer: int) -> None:
    """For each of `outer` rows and each part i: chunks[i] bytes from sources[i] + row x source_steps[i] to
    targets[i] + row x target_steps[i]. Plain stores (`lanes` is unused here; see _copy_runs_streaming)."""
    for index in range(outer):
        for part in range(targets.size):
            copy_bytes(targets[part] + index * target_steps[part], sources[part] + index * source_steps[part],
                       chunks[part])


def _copy_runs_streaming(sources: Any, source_steps: Any, targets: Any, target_steps: Any, chunks: Any, lanes: Any,
                         outer: int) -> None:
    """_copy_runs_plain writing every whole 64-byte target line with one non-temporal store.

    The runs written to one lane (a target tensor: lanes[i] names part i's) follow one another in memory in the
    order they are copied, but need not start or end on a line boundary, so a line that two runs share is assembled
    in that lane's 64 bytes of a stage and stored once complete. The lines a lane shares with memory outside it
    (its first and last, when unaligned) get plain stores of its bytes only.
    """
    count = targets.size
    lane_count = 0
    for part in range(count):
        lane_count = max(lane_count, lanes[part] + 1)
    stage = np.empty(lane_count * 64, np.uint8)
    stage_base = stage.ctypes.data
    # staged[l]: bytes of lane l's current line already assembled in its stage; -1 while that line began before
    # the lane's memory (its bytes are then stored directly). ends[l]: where lane l's last run ended.
    staged = np.zeros(lane_count, np.int64)
    ends = np.zeros(lane_count, np.int64)
    for part in range(count - 1, -1, -1):   # a lane starts where its first part's first run does
        staged[lanes[part]] = -1 if targets[part] & 63 else 0
    for index in range(outer):
        for part in range(count):
            lane = lanes[part]
            left = chunks[part]
            target = targets[part] + index * target_steps[part]
            origin = sources[part] + index * source_steps[part]
            line = stage_base + lane * 64
            into = target & 63
            if into:
                take = min(64 - into, left)
                if staged[lane] < 0:
                    copy_bytes(target, origin, take)
                    if into + take == 64:
                        staged[lane] = 0
                else:
                    copy_bytes(line + into, origin, take)
                    if into + take == 64:
                        stream_line(target - into, line)
                        staged[lane] = 0
                    else:
                        staged[lane] = into + take
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
                staged[lane] = left
            ends[lane] = target + left
    fence()
    for lane in range(lane_count):
        if staged[lane] > 0:
            copy_bytes(ends[lane] - staged[lane], stage_base + lane * 64, staged[lane])


_copy_runs: Any = njit_cached(_copy_runs_plain)
_copy_runs_streamed: Any = njit_cached(_copy_runs_streaming)


@numba.njit(cache=True, parallel=True)
def _copy_runs_threads(sources: Any, source_steps: Any, targets: Any, target_steps: Any, chunks: Any, lanes: Any,
                       outer: int, parts: int) -> None:
    """_copy_runs_streamed over `parts` ranges of rows, one per thread. Each range starts and ends its lanes' runs
    like a whole dispatch does: a line it shares with the neighbouring range gets plain stores of its own bytes
    only, so the two never write the same byte."""
    for part in numba.prange(parts):
        begin, end = part * outer // parts, (part + 1) * outer // parts
        _copy_runs_streamed(sources + begin * source_steps, source_steps, targets + begin * target_steps,
                            target_steps, chunks, lanes, end - begin)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    split = cast(SplitOperatorDesc, desc)
    return slices_kernel(split.input_tensor, split.output_tensors, split.axis, joining=False)


def slices_kernel(whole: TensorDesc, parts: Sequence[TensorDesc], axis: int, *, joining: bool) -> Kernel:
    """The copy between `whole` and its consecutive slices `parts` along `axis`: SPLIT (whole = the input, parts =
    the outputs) or, with `joining`, JOIN (parts = the inputs, whole = the output)."""
    itemsize = whole.data_type.element_size
    if whole.is_packed and all(part.is_packed for part in parts):
        return _packed_kernel(whole.sizes, [part.sizes[axis] for part in parts], axis, itemsize, joining)
    return _strided_kernel(whole, parts, axis, joining)


def _packed_kernel(sizes: Sequence[int], parts: Sequence[int], axis: int, itemsize: int, joining: bool) -> Kernel:
    inner = math.prod(sizes[axis + 1:]) * itemsize
    outer = math.prod(sizes[:axis])
    if len(parts) == 1:  # a plain copy: one run
        chunks = np.array([outer * sizes[axis] * inner], np.int64)
        outer = 1
    else:
        chunks = np.array([part * inner for part in parts], np.int64)
    starts = np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(np.int64)
    row = int(chunks.sum())
    rows = np.full(chunks.size, row, np.int64)
    if joining:   # parts read in turn, the whole written in order: one lane
        lanes = np.zeros(chunks.size, np.int64)
        source_steps, target_steps = chunks, rows
    else:         # the whole read in order, each part written in order: a lane per part
        lanes = np.arange(chunks.size, dtype=np.int64)
        source_steps, target_steps = rows, chunks

    def addresses(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> tuple[Any, Any]:
        """(sources, targets): where each part's first run is read from and written to."""
        if joining:
            return (np.array([cast(FlatArray, view).ctypes.data for view in inputs], np.int64),
                    outputs[0].ctypes.data + starts)
        return (cast(FlatArray, inputs[0]).ctypes.data + starts,
                np.array([view.ctypes.data for view in outputs], np.int64))

    if memory_kernels.HAVE_STREAMING_STORES and row * outer >= memory_kernels.STREAMING_THRESHOLD_BYTES:
        # Large copies run on every thread: two keep more reads and writes in flight than one.
        threads = min(outer, numba.get_num_threads())

        def streamed(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            sources, targets = addresses(inputs, outputs)
            if threads > 1:
                with PARALLEL_LAUNCH:
                    _copy_runs_threads(sources, source_steps, targets, target_steps, chunks, lanes, outer, threads)
            else:
                _copy_runs_streamed(sources, source_steps, targets, target_steps, chunks, lanes, outer)

        return streamed

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        sources, targets = addresses(inputs, outputs)
        _copy_runs(sources, source_steps, targets, target_steps, chunks, lanes, outer)

    return kernel


def _strided_kernel(whole: TensorDesc, parts: Sequence[TensorDesc], axis: int, joining: bool) -> Kernel:
    itemsize = whole.data_type.element_size
    whole_strides = tuple(stride * itemsize for stride in whole.element_strides)
    step = whole.element_strides[axis] * itemsize
    dtype = whole.data_type.numpy_dtype
    plans, offset = [], 0
    for part in parts:   # (shape, byte offset of the part's slice in the whole, the part's byte strides)
        plans.append((part.sizes, offset * step, tuple(stride * itemsize for stride in part.element_strides)))
        offset += part.sizes[axis]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        views = cast(Sequence[FlatArray], inputs if joining else outputs)
        whole_view = outputs[0] if joining else cast(FlatArray, inputs[0])
        for (shape, start, strides), view in zip(plans, views, strict=True):
            in_whole = np.ndarray(shape, dtype, buffer=whole_view, offset=start, strides=whole_strides)
            in_part = np.ndarray(shape, dtype, buffer=view, strides=strides)
            if joining:
                np.copyto(in_whole, in_part)
            else:
                np.copyto(in_part, in_whole)

    return kernel
