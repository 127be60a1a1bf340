"""NONZERO_COORDINATES on Dask arrays (dask_graph.py's lowering): the input rechunked so that only its first
dimension of size > 1 keeps its chunks (the dimensions after it whole), so that the chunks, in order, hold the
elements in row-major order; each chunk's coordinates by the node's own kernel, shifted by the chunk's start along
that dimension; the count their total (a 1-element array of the count tensor's sizes) and the coordinates the
chunks' rows concatenated into the fixed-size output, whose rows past the count hold 0."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from .ops.nonzero import NonzeroCoordinatesOperatorDesc, coordinates_sizes, effective_rank
from .tensor import TensorDesc
from .types import DataType

NDArray = np.ndarray[Any, Any]


def _chunk_rows(desc: NonzeroCoordinatesOperatorDesc, context: Any, block: Any, start: int, lead: int) -> NDArray:
    """The coordinates of one chunk's nonzero elements (count x N), by the node's kernel on the chunk, its first
    column's dimension `lead` shifted by the chunk's `start` along it."""
    from .dask_graph import _run

    block = np.asarray(block)
    rank, columns = block.ndim, desc.columns
    data_type = desc.input_tensor.data_type
    chunk = NonzeroCoordinatesOperatorDesc(TensorDesc(data_type, block.shape), TensorDesc(DataType.UINT32, (1,) * rank),
                                           TensorDesc(DataType.UINT32, tuple(coordinates_sizes(block.shape, columns))))
    count, coordinates = _run(chunk, context, [block])
    rows = coordinates.reshape(-1, columns)[: int(count.reshape(-1)[0])].copy()
    rows[:, lead - (rank - columns)] += np.uint32(start)
    return rows


def _count(shape: tuple[int, ...], *pieces: NDArray) -> NDArray:
    return np.full(shape, sum(piece.shape[0] for piece in pieces), np.uint32)


def _assemble(shape: tuple[int, ...], *pieces: NDArray) -> NDArray:
    rows = np.zeros((math.prod(shape[:-1]), shape[-1]), np.uint32)
    found = np.concatenate(pieces) if pieces else rows[:0]
    rows[: found.shape[0]] = found
    return rows.reshape(shape)


def lower_nonzero(desc: NonzeroCoordinatesOperatorDesc, context: Any, x: Any) -> list[Any]:
    """The Dask arrays of the count and the coordinates of `desc` applied to the Dask array `x`."""
    da: Any = importlib.import_module("dask.array")
    delayed: Any = importlib.import_module("dask").delayed
    rank = x.ndim
    lead = rank - max(1, effective_rank(x.shape))
    x = x.rechunk({dim: -1 for dim in range(rank) if dim != lead})
    starts = np.cumsum((0, *x.chunks[lead]))
    blocks = x.to_delayed().reshape(-1)
    chunk_rows = delayed(_chunk_rows, pure=True)
    pieces = [chunk_rows(desc, context, block, int(start), lead) for block, start in zip(blocks, starts, strict=False)]
    count_shape = tuple(desc.output_count_tensor.sizes)
    shape = tuple(desc.output_coordinates_tensor.sizes)
    count = da.from_delayed(delayed(_count, pure=True)(count_shape, *pieces), count_shape, np.uint32)
    coordinates = da.from_delayed(delayed(_assemble, pure=True)(shape, *pieces), shape, np.uint32)
    return [count, coordinates]
