"""SCATTER_ELEMENTS and SCATTER_ND on Dask arrays (dask_graph.py's lowering): the updates applied per output chunk,
each chunk by the node's own kernel on a descriptor of the chunks' sizes, so its repeated-index and out-of-range
rules are the device's.

* SCATTER_ELEMENTS: Axis in one chunk in all three arrays; the other dimensions keep the input's chunks, the
  indices and the updates chunked as the input (their sizes match it but along Axis).
* SCATTER_ND: the output's chunks split only its rest dimensions (those after the K a tuple indexes); every chunk
  sees all the indices and the updates of its rest chunk (the updates' trailing dimensions are the rest's).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import replace
from typing import Any

import numpy as np

from .errors import DmlError
from .ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc
from .tensor import TensorDesc

NDArray = np.ndarray[Any, Any]


def _chunk(desc: ScatterElementsOperatorDesc | ScatterNdOperatorDesc, context: Any, x: Any, indices: Any,
           updates: Any, block_id: tuple[int, ...]) -> NDArray:
    """One output chunk: the node's kernel on packed tensors of the chunks' sizes."""
    from .dask_graph import _in_chunk, _run

    arrays = [np.asarray(block) for block in (x, indices, updates)]
    tensors = [TensorDesc(tensor.data_type, array.shape) for tensor, array in zip(
        (desc.input_tensor, desc.indices_tensor, desc.updates_tensor), arrays, strict=True)]
    chunk = replace(desc, input_tensor=tensors[0], indices_tensor=tensors[1], updates_tensor=tensors[2],
                    output_tensor=tensors[0])
    try:
        return _run(chunk, context, arrays)[0]
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None


def lower_scatter(desc: ScatterElementsOperatorDesc | ScatterNdOperatorDesc, context: Any, x: Any, indices: Any,
                  updates: Any) -> Any:
    """The Dask array of `desc` applied to the Dask arrays `x`, `indices` and `updates`."""
    from .dask_graph import _meta, _token

    da: Any = importlib.import_module("dask.array")
    block_ids: Any = importlib.import_module("dask.layers").ArrayBlockIdDep
    rank = x.ndim
    dtype = x.dtype
    out_index = tuple(range(rank))
    task = functools.partial(_chunk, desc, context)
    if isinstance(desc, ScatterElementsOperatorDesc):
        axis = desc.axis
        x = x.rechunk({axis: -1})
        chunks = tuple((indices.shape[axis],) if dim == axis else x.chunks[dim] for dim in range(rank))
        return da.blockwise(task, out_index, x, out_index, indices.rechunk(chunks), out_index,
                            updates.rechunk(chunks), out_index, block_ids(x.chunks), out_index, dtype=dtype,
                            meta=_meta(rank, dtype), align_arrays=False, concatenate=True, token=_token(desc))
    rest = desc.input_dimension_count - indices.shape[-1]   # the output's last `rest` dimensions keep their chunks
    x = x.rechunk({dim: -1 for dim in range(rank - rest)})
    updates = updates.rechunk({dim: -1 if dim < rank - rest else x.chunks[dim] for dim in range(rank)})
    fresh = iter(range(rank, 3 * rank))
    updates_index = tuple(dim if dim >= rank - rest else next(fresh) for dim in range(rank))
    indices_index = tuple(next(fresh) for _ in range(rank))
    return da.blockwise(task, out_index, x, out_index, indices.rechunk(-1), indices_index, updates, updates_index,
                        block_ids(x.chunks), out_index, dtype=dtype, meta=_meta(rank, dtype), align_arrays=False,
                        concatenate=True, token=_token(desc))
