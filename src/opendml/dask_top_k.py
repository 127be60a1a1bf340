"""TOP_K and TOP_K1 on Dask arrays (dask_graph.py's lowering): a tree of per-chunk top-k along Axis.

Each chunk along Axis runs the node's kernel (its operator, K' = min(K, the chunk's length)) on
the device; its candidates travel as one int64 block, the selected values' bits then their global indices (the
chunk's start added), 2 K' long along Axis. Neighbouring candidate blocks are joined in Axis order and selected
again by the kernel, whose ties go to the earlier position: candidates are in ascending global index order among
equal keys (each block's own are, and the blocks are joined in order), so every selection breaks ties by global
index, as one dispatch over the whole sequence does; values are moved as bits. The result is the device's, bit for
bit. The other dimensions keep their chunks.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np

from .ops.top_k import BITS, TopK1OperatorDesc, TopKOperatorDesc
from .tensor import TensorDesc
from .types import DataType


def _select(desc: TopKOperatorDesc, run: Any, values: Any, indices: Any) -> Any:
    """The packed candidates (value bits, then indices, as int64 along Axis) of the top min(K, n) of `values`, the
    global index of each of its elements in `indices`."""
    axis, data_type = desc.axis, desc.input_tensor.data_type
    k = min(desc.k, values.shape[axis])
    sizes = [k if dim == axis else size for dim, size in enumerate(values.shape)]
    tensors = (TensorDesc(data_type, tuple(values.shape)), TensorDesc(data_type, tuple(sizes)),
               TensorDesc(DataType.UINT32, tuple(sizes)))
    node = (TopK1OperatorDesc(*tensors, axis, k, desc.axis_direction) if isinstance(desc, TopK1OperatorDesc)
            else TopKOperatorDesc(*tensors, axis, k))   # the node's own operator: TOP_K1 may be above the level
    chosen, positions = run(node, [np.ascontiguousarray(values)])
    bits = BITS[data_type.element_size]
    return np.concatenate([chosen.view(bits).astype(np.uint64).view(np.int64),
                           np.take_along_axis(indices, positions.astype(np.int64), axis=axis)], axis=axis)


def _unpack(desc: TopKOperatorDesc, packed: Any) -> tuple[Any, Any]:
    """(values, global indices) of packed candidates."""
    half = packed.shape[desc.axis] // 2
    values, indices = np.split(packed, [half], axis=desc.axis)
    bits = BITS[desc.input_tensor.data_type.element_size]
    return values.view(np.uint64).astype(bits).view(desc.input_tensor.data_type.numpy_dtype), indices


def _chunk(desc: TopKOperatorDesc, run: Any, start: int, block: Any) -> Any:
    """The packed candidates of a chunk that starts at `start` along Axis."""
    block = np.asarray(block)
    shape = [1] * block.ndim
    shape[desc.axis] = block.shape[desc.axis]
    indices = np.broadcast_to((start + np.arange(block.shape[desc.axis], dtype=np.int64)).reshape(shape), block.shape)
    return _select(desc, run, block, indices)


def _combine(desc: TopKOperatorDesc, run: Any, *blocks: Any) -> Any:
    """The packed candidates of joined candidate blocks (in Axis order)."""
    parts = [_unpack(desc, np.asarray(block)) for block in blocks]
    values = np.concatenate([part[0] for part in parts], axis=desc.axis)
    indices = np.concatenate([part[1] for part in parts], axis=desc.axis)
    return _select(desc, run, values, indices)


def lower_top_k(desc: TopKOperatorDesc, run: Any, x: Any, key: Any) -> list[Any]:
    """[values, indices] of `desc` on the Dask array `x`; `run(desc, arrays)` runs a descriptor on the device (the
    graph's context), `key(name, *parts)` names a Dask array."""
    da: Any = importlib.import_module("dask.array")
    axis, k = desc.axis, desc.k
    meta = np.empty((0,) * x.ndim, np.int64)

    def candidate_chunks(lengths: Any) -> tuple[Any, ...]:
        return tuple((2 * min(k, sum(lengths)),) if dim == axis else x.chunks[dim] for dim in range(x.ndim))

    pieces = [x.blocks[tuple(index if dim == axis else slice(None) for dim in range(x.ndim))]
              for index in range(len(x.chunks[axis]))]
    lengths = [[length] for length in x.chunks[axis]]
    starts = np.cumsum((0, *x.chunks[axis]))
    level = [da.map_blocks(functools.partial(_chunk, desc, run, int(start)), piece, dtype=np.int64, meta=meta,
                           chunks=candidate_chunks(length), name=key("opendml-top-k-chunk", desc, start, piece))
             for piece, length, start in zip(pieces, lengths, starts, strict=False)]
    combine = functools.partial(_combine, desc, run)
    while len(level) > 1:   # pairs joined in Axis order, level by level
        joined, joined_lengths = [], []
        for first in range(0, len(level), 2):
            group, group_lengths = level[first:first + 2], lengths[first:first + 2]
            if len(group) == 1:
                joined.append(group[0])
                joined_lengths.append(group_lengths[0])
                continue
            merged = [length for part in group_lengths for length in part]
            joined.append(da.map_blocks(combine, *group, dtype=np.int64, meta=meta,
                                        chunks=candidate_chunks(merged), name=key("opendml-top-k-combine", desc,
                                                                                  *group)))
            joined_lengths.append(merged)
        level, lengths = joined, joined_lengths
    packed = level[0]
    out_chunks = tuple((k,) if dim == axis else x.chunks[dim] for dim in range(x.ndim))
    value_dtype = desc.output_value_tensor.data_type.numpy_dtype
    index_dtype = desc.output_index_tensor.data_type.numpy_dtype
    values = da.map_blocks(lambda block: _unpack(desc, block)[0], packed, dtype=value_dtype, chunks=out_chunks,
                           meta=np.empty((0,) * x.ndim, value_dtype), name=key("opendml-top-k-values", desc, packed))
    indices = da.map_blocks(lambda block: _unpack(desc, block)[1].astype(index_dtype), packed, dtype=index_dtype,
                            chunks=out_chunks, meta=np.empty((0,) * x.ndim, index_dtype),
                            name=key("opendml-top-k-indices", desc, packed))
    return [values, indices]
