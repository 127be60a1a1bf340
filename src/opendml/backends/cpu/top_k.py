"""TOP_K and TOP_K1 on the CPU: one pass over each sequence with a sorted buffer of the K best so far.

The dimensions besides Axis are merged where the three tensors allow (plans.merge_dimensions); the innermost becomes
a run of `count` sequences, the others offset tables, and tasks of _CHUNK sequences run in parallel, each with its
own buffer. A sequence is walked by ascending index: each element's order key (ops/top_k.order_key: integers,
floats with -0.0 = +0.0 and NaN above +inf; its complement with AxisDirection INCREASING) is compared with the K-th
best key so far and, only when strictly larger, inserted into the buffer in order (an equal key stays behind the
earlier index, so ties end in ascending index order). The first K elements fill the buffer. Keys are computed only
where the values may win: blocks of _BLOCK elements are screened first by a vectorized count of the values that
compare above the K-th value so far (below, with INCREASING) or unordered (NaN), in the element's own type (IEEE's
-0.0 = +0.0 is the order's), then element by element likewise. Then the buffer's indices are written (as 32-bit
words: one kernel per input type), and each selected element's own bits as its value (FLOAT16 as its bits: exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ...ops.base import OperatorDesc
from ...ops.top_k import TopKOperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import merge_dimensions
from .element_wise import load_element
from .float16 import F16_TAG, NATIVE_TAG
from .memory_kernels import PARALLEL_LAUNCH

_CHUNK = 64  # sequences per task
_BLOCK = 32  # elements screened by value against the K-th one at a time, before any key is computed


def order_key(x: Any, i: Any, tag: Any) -> Any:
    """The order key of element i of x (ops/top_k.order_key's order, in an integer of the element's width: int32
    for the types of 32 bits or fewer, int64 for the 64-bit ones, so that a block of keys fills a vector). Numba's
    body: below."""
    raise NotImplementedError


@overload(order_key, inline="always")
def _order_key_impl(x: Any, i: Any, tag: Any) -> Any:
    if isinstance(tag, types.Float):   # x holds a float's bits as a signed integer of its width
        width = x.dtype.bitwidth
        mask = np.int32((1 << (width - 1)) - 1)
        infinity = np.int32(0x7F800000 if width == 32 else 0x7C00)

        def float_key(x: Any, i: Any, tag: Any) -> Any:
            bits = np.int32(x[np.uint64(i)])
            magnitude = bits & mask
            nan = (infinity - magnitude) >> np.int32(31)        # ~0 for a NaN, else 0
            sign = (bits >> np.int32(31)) & ~nan                # ~0 for a negative number (not a NaN), else 0
            magnitude = (magnitude & ~nan) | (nan & (infinity + np.int32(1)))  # every NaN one above infinity
            return (magnitude ^ sign) - sign                    # -magnitude for a negative number: -0.0 = +0.0

        return float_key
    if x.dtype == types.uint64:

        def unsigned64_key(x: Any, i: Any, tag: Any) -> Any:
            return np.int64(x[np.uint64(i)] ^ np.uint64(1 << 63))

        return unsigned64_key
    if x.dtype == types.int64:

        def signed64_key(x: Any, i: Any, tag: Any) -> Any:
            return np.int64(x[np.uint64(i)])

        return signed64_key
    if x.dtype == types.uint32:

        def unsigned32_key(x: Any, i: Any, tag: Any) -> Any:
            return np.int32(x[np.uint64(i)] ^ np.uint32(1 << 31))

        return unsigned32_key

    def narrow_key(x: Any, i: Any, tag: Any) -> Any:
        return np.int32(x[np.uint64(i)])

    return narrow_key


@numba.njit(inline="always")
def _insert(keys: Any, best: Any, at: int, key: Any, j: int) -> None:
    """Puts (key, j) into the sorted buffer at `at` or before it: behind every key at least as large."""
    while at > 0 and keys[at - 1] < key:
        keys[at] = keys[at - 1]
        best[at] = best[at - 1]
        at -= 1
    keys[at] = key
    best[at] = j


@numba.njit(inline="always")
def _beating(xv: Any, x0: int, start: int, stop: int, x_step: int, threshold: Any, tag: Any,
             decreasing: bool) -> int:
    """How many of elements start .. stop - 1 may beat `threshold` (the K-th value so far), compared as values (a
    vectorized count where the sequence is contiguous): larger (smaller with INCREASING) or unordered (NaN).
    IEEE comparison holds -0.0 and +0.0 equal, as the order does; a NaN counts either way (order_key decides)."""
    hits = 0
    if x_step == 1 and decreasing:
        for t in range(start, stop):
            if not load_element(xv, x0 + t, tag) <= threshold:
                hits += 1
    elif x_step == 1:
        for t in range(start, stop):
            if not load_element(xv, x0 + t, tag) >= threshold:
                hits += 1
    elif decreasing:
        for t in range(start, stop):
            if not load_element(xv, x0 + t * x_step, tag) <= threshold:
                hits += 1
    else:
        for t in range(start, stop):
            if not load_element(xv, x0 + t * x_step, tag) >= threshold:
                hits += 1
    return hits


def _top_k_loops(x: Any, xv: Any, values: Any, indices: Any, x_table: Any, v_table: Any, i_table: Any, count: int,
                 x_run: int, v_run: int, i_run: int, length: int, x_step: int, v_step: int, i_step: int, k: int,
                 flip: Any, tag: Any, value_tag: Any, decreasing: bool, index_words: int) -> None:
    chunks = (count + _CHUNK - 1) // _CHUNK
    for task in numba.prange(x_table.size * chunks):
        table = task // chunks
        first = (task % chunks) * _CHUNK
        keys = np.full(k, flip)   # order_key's type
        best = np.empty(k, np.int64)
        for line in range(first, min(first + _CHUNK, count)):
            x0 = x_table[table] + line * x_run
            for j in range(k):                       # the first K elements fill the buffer
                _insert(keys, best, j, order_key(x, x0 + j * x_step, tag) ^ flip, j)
            j = k
            while j < length:
                # a block of _BLOCK elements is looked at element by element only when some of its values may beat
                # the K-th so far, and an element's key is computed only when its value may
                end = min(j + _BLOCK, length)
                threshold = load_element(xv, x0 + best[k - 1] * x_step, value_tag)
                if _beating(xv, x0, j, end, x_step, threshold, value_tag, decreasing):
                    for t in range(j, end):
                        value = load_element(xv, x0 + t * x_step, value_tag)
                        if not (value <= threshold if decreasing else value >= threshold):
                            key = order_key(x, x0 + t * x_step, tag) ^ flip
                            if key > keys[k - 1]:
                                _insert(keys, best, k - 1, key, t)
                                threshold = load_element(xv, x0 + best[k - 1] * x_step, value_tag)
                j = end
            v0 = v_table[table] + line * v_run
            i0 = i_table[table] + line * i_run
            for r in range(k):
                values[np.uint64(v0 + r * v_step)] = x[np.uint64(x0 + best[r] * x_step)]
                at = (i0 + r * i_step) * index_words     # a UINT64 index: its low word, then a zero high word
                indices[np.uint64(at)] = best[r]
                if index_words == 2:
                    indices[np.uint64(at + 1)] = 0


_top_k: Any = numba.njit(cache=True, parallel=True)(_top_k_loops)


def line_tables(sizes: Sequence[int], axis: int, *strides: Sequence[int]) -> tuple[int, list[int], list[Any]]:
    """The sequences of a tensor walk along `axis`: (count, runs, tables): the dimensions besides `axis`, merged
    where every layout allows, as a run of `count` sequences (each layout's stride `runs[t]`) repeated at the
    offsets of `tables[t]` (int64 arrays, one entry per position of the outer dimensions)."""
    others = [dim for dim in range(len(sizes)) if dim != axis]
    merged, merged_strides = merge_dimensions([sizes[d] for d in others], *([s[d] for d in others] for s in strides))
    tables = []
    for layout in merged_strides:
        table = np.zeros(1, np.int64)
        for size, stride in zip(merged[:-1], layout[:-1], strict=True):
            table = (table[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
        tables.append(table)
    return merged[-1], [layout[-1] for layout in merged_strides], tables


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    top = cast(TopKOperatorDesc, desc)
    source, values, indices, axis = top.input_tensor, top.output_value_tensor, top.output_index_tensor, top.axis
    count, (x_run, v_run, i_run), (x_table, v_table, i_table) = line_tables(
        source.sizes, axis, source.element_strides, values.element_strides, indices.element_strides)
    length, k, decreasing = source.sizes[axis], top.k, top.decreasing
    x_step, v_step, i_step = (tensor.element_strides[axis] for tensor in (source, values, indices))
    data_type = source.data_type
    floating = data_type in (DataType.FLOAT32, DataType.FLOAT16)
    # floats as signed integers of their width (order_key reads the sign and magnitude bits)
    bits = np.dtype(f"i{data_type.element_size}") if floating else np.dtype(data_type.numpy_dtype)
    tag = F16_TAG if floating else NATIVE_TAG
    # keys are complemented (x ^ ~0) with INCREASING, in order_key's type
    flip = (np.int64 if data_type.element_size == 8 else np.int32)(0 if decreasing else -1)
    index_words = indices.data_type.element_size // 4   # indices are written as 32-bit words (one kernel per type)
    # the values the blocks are screened with: floats as float32 (FLOAT16 bits widened exactly), integers natively
    value_bits = np.dtype(np.uint16) if data_type is DataType.FLOAT16 else data_type.numpy_dtype
    value_tag = F16_TAG if data_type is DataType.FLOAT16 else NATIVE_TAG

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = cast(FlatArray, inputs[0]).view(bits)
        with PARALLEL_LAUNCH:
            _top_k(x, x.view(value_bits), outputs[0].view(bits), outputs[1].view(np.uint32), x_table, v_table,
                   i_table, count, x_run, v_run, i_run, length, x_step, v_step, i_step, k, flip, tag, value_tag,
                   decreasing, index_words)

    return kernel
