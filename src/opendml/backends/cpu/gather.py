"""GATHER and GATHER_ELEMENTS on the CPU.

In general, GATHER_ND1's numba kernel for the equivalent descriptor over re-strided views of the same memory
(ops/gather.py): its plan merges the dimensions before Axis with the indices' into one outer loop over output rows,
and copies the dimensions after Axis as contiguous runs where they are; its clamping and debug check of the indices
are GATHER_ND1's, its refusal worded for the original operator (a `debug=True` device always runs it).

Two layouts have kernels of their own, where every tensor is packed and the indices are read once per element
(GATHER_ND1 works out a tuple per output element there):

* GATHER along the last dimension that is not 1 (nothing after Axis): the indices, fixed once per dispatch with
  NumPy (a negative one of a signed type counts from the end once, then each is clamped into Axis: GATHER_ND1's
  rules) into unsigned column offsets (32-bit where Axis allows), then one numba loop per output row, rows over
  numba's threads, each row gathered from its input row (which stays in cache) straight into the output;
* GATHER_ELEMENTS with INT64 indices of the input's sizes but along Axis: one fused numba pass over the rows before
  Axis, each element's index fixed by the same rules where it is read (no array of fixed indices).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from ...tensor import TensorDesc, packed_strides
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from . import gather_nd1
from .memory_kernels import PARALLEL_LAUNCH
from .slice import chunks_for

#: The own kernels run where the rows before Axis are at least this many (they are what the threads share) and a
#: GATHER's indices at most _MOST_COLUMNS (its column offsets stay in cache).
_FEWEST_ROWS = 8
_MOST_COLUMNS = 1 << 16
#: GATHER_ELEMENTS outputs of at least this many bytes share their rows among numba's threads (random reads: a
#: second thread keeps more in flight).
_PARALLEL_BYTES = 1 << 20


def _packed(*tensors: TensorDesc) -> bool:
    return all(tensor.element_strides == packed_strides(tensor.sizes) for tensor in tensors)


def _fix_indices(raw: np.ndarray[Any, Any], size: int) -> np.ndarray[Any, Any]:
    """GATHER_ND1's rules on one coordinate: a negative index of a signed type counts from the end once, then every
    index is clamped into [0, size)."""
    fixed: np.ndarray[Any, Any]
    if raw.dtype.kind == "u":
        fixed = np.minimum(raw, size - 1).astype(np.int64)
        return fixed
    fixed = raw.astype(np.int64)
    fixed += np.where(fixed < 0, size, 0)
    np.clip(fixed, 0, size - 1, out=fixed)
    return fixed


def _gather_last(desc: GatherOperatorDesc) -> Kernel | None:
    source, indices, result = desc.input_tensor, desc.indices_tensor, desc.output_tensor
    axis = desc.axis
    pre, size, post = prod(source.sizes[:axis]), source.sizes[axis], prod(source.sizes[axis + 1:])
    count = indices.element_count
    if post != 1 or pre < _FEWEST_ROWS or count > _MOST_COLUMNS or result.element_count != pre * count or \
            not _packed(source, indices, result):
        return None
    bits = np.dtype(f"u{source.data_type.element_size}")
    index_type = indices.data_type.numpy_dtype
    offset_type = np.uint32 if size <= 1 << 32 else np.uint64
    chunks = chunks_for(pre, result.element_count * source.data_type.element_size)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        cols = _fix_indices(cast(FlatArray, inputs[1]).view(index_type)[:count], size).astype(offset_type)
        with PARALLEL_LAUNCH:
            _gather_last_rows(cast(FlatArray, inputs[0]).view(bits), cols, outputs[0].view(bits), pre, size, chunks)

    return kernel


def _gather_last_loops(x: Any, cols: Any, y: Any, pre: int, size: int, chunks: int) -> None:
    """y[p * count + c] = x[p * size + cols[c]] for every row p < pre and column c < count = cols.size (cols: fixed,
    unsigned offsets within a row; unsigned arithmetic throughout, so no index is wrapped from the end)."""
    count = cols.size
    for chunk in numba.prange(chunks):
        for p in range(chunk * pre // chunks, (chunk + 1) * pre // chunks):
            xb, yb = np.uint64(p * size), np.uint64(p * count)
            for c in range(count):
                y[yb + np.uint64(c)] = x[xb + cols[c]]


_gather_last_rows: Any = numba.njit(cache=True, parallel=True)(_gather_last_loops)


def _gather_elements_loops(x: Any, indices: Any, y: Any, pre: int, size: int, count: int, post: int, chunks: int
                           ) -> None:
    top = size - 1
    for chunk in numba.prange(chunks):
        for p in range(chunk * pre // chunks, (chunk + 1) * pre // chunks):
            xb, yb = p * size * post, p * count * post
            if post == 1:   # Axis innermost: one tight loop per row (read the index, fix it, load, store)
                for k in range(yb, yb + count):
                    i = indices[np.uint64(k)]
                    i = min(max(i + (size if i < 0 else 0), 0), top)
                    y[np.uint64(k)] = x[np.uint64(xb + i)]
                continue
            for k in range(count * post):
                q = k % post
                i = indices[yb + k]
                if i < 0:
                    i += size
                i = min(max(i, 0), size - 1)
                y[np.uint64(yb + k)] = x[np.uint64(xb + i * post + q)]


_gather_elements: Any = numba.njit(cache=True, parallel=True)(_gather_elements_loops)


def _gather_elements_kernel(desc: GatherElementsOperatorDesc) -> Kernel | None:
    source, indices, result = desc.input_tensor, desc.indices_tensor, desc.output_tensor
    axis = desc.axis
    pre, size, post = prod(source.sizes[:axis]), source.sizes[axis], prod(source.sizes[axis + 1:])
    count = indices.sizes[axis]
    same_elsewhere = all(a == b for d, (a, b) in enumerate(zip(source.sizes, indices.sizes, strict=True)) if d != axis)
    if indices.data_type is not DataType.INT64 or not same_elsewhere or pre < _FEWEST_ROWS or \
            result.sizes != indices.sizes or not _packed(source, indices, result):
        return None
    bits = np.dtype(f"u{source.data_type.element_size}")
    output_bytes = result.element_count * source.data_type.element_size
    chunks = min(pre, 4 * numba.get_num_threads()) if output_bytes >= _PARALLEL_BYTES else 1

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        with PARALLEL_LAUNCH:
            _gather_elements(cast(FlatArray, inputs[0]).view(bits), cast(FlatArray, inputs[1]).view(np.int64),
                             outputs[0].view(bits), pre, size, count, post, chunks)

    return kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    assert isinstance(desc, (GatherOperatorDesc, GatherElementsOperatorDesc))
    own = None
    if not debug:
        own = _gather_last(desc) if isinstance(desc, GatherOperatorDesc) else _gather_elements_kernel(desc)
    return own if own is not None else gather_nd1.compile_kernel(desc.as_gather_nd1(), flags, debug)
