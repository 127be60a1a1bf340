"""SCATTER_ELEMENTS and SCATTER_ND on small tensors: NumPy over the views of the scatter's transposed GATHER_ND1
(ops/scatter.py: batch, positions and coordinates in their own dimensions). Each tuple's coordinates are made valid
(a negative one of a signed type counts from the end once); `np.maximum.at` keeps, per selected output block, the
last outer position in row-major order that selects it (a tuple out of range selects nothing: its update is
skipped), and the output is the input with those blocks replaced, as the numba kernel's mark and copy make it. On a
debug device the first coordinate out of range is refused before anything is written (plans.gather_out_of_range).
Data move as unsigned integers of their width, so every bit pattern is kept."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.gather_nd1 import SIGNED_INDEX_TYPES
from ....ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from ...plans import gather_out_of_range
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    assert isinstance(desc, (ScatterElementsOperatorDesc, ScatterNdOperatorDesc))
    dual = desc.as_gather_nd1()
    target, indices, updates, source = dual.input_tensor, dual.indices_tensor, dual.output_tensor, dual.source
    assert source is not None
    rank, batch, tuple_size = target.dimension_count, dual.batch_dimension_count, dual.index_tuple_size
    out_lead = (0,) * (rank - dual.input_dimension_count)
    ix_lead = (0,) * (rank - dual.indices_dimension_count)
    outer_sizes = indices.sizes[len(ix_lead):-1]
    rest_count = dual.input_dimension_count - batch - tuple_size
    up_lead = (0,) * (rank - len(outer_sizes) - rest_count)
    cell_sizes = tuple(target.sizes[len(out_lead):len(out_lead) + batch + tuple_size])
    sizes = np.array(cell_sizes[batch:], np.int64)
    signed = indices.data_type in SIGNED_INDEX_TYPES
    bits = np.dtype(f"u{target.data_type.element_size}")
    positions = np.arange(prod(outer_sizes)).reshape(outer_sizes)
    # Each batch dimension's position, shaped to broadcast over the outer dimensions.
    batch_positions = [np.arange(outer_sizes[d]).reshape([-1 if e == d else 1 for e in range(len(outer_sizes))])
                       for d in range(batch)]
    index_view, out_view, in_view, up_view = viewer(indices), viewer(target), viewer(source), viewer(updates)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        index_flat = cast(FlatArray, inputs[1])
        tuples = index_view(index_flat)[ix_lead]
        if signed:
            coordinates = tuples.astype(np.int64)
            coordinates += sizes * (coordinates < 0)
            outside = (coordinates < 0) | (coordinates >= sizes)
        else:   # compared as unsigned: a UINT64 of 2^63 or more is too large, not negative
            outside = tuples >= sizes.astype(tuples.dtype)
            coordinates = np.where(outside, 0, tuples).astype(np.int64)
        if debug and outside.any():
            first = int(np.argmax(outside.reshape(-1)))
            raise gather_out_of_range(dual, first // tuple_size, first % tuple_size, lambda at: int(index_flat[at]))
        valid = ~outside.any(axis=-1)
        selection = (*(np.broadcast_to(p, outer_sizes) for p in batch_positions),
                     *(coordinates[..., k] for k in range(tuple_size)))
        cells = np.ravel_multi_index(tuple(part[valid] for part in selection), cell_sizes) if valid.any() else \
            np.zeros(0, np.int64)
        winner = np.full(prod(cell_sizes), -1, np.int64)
        np.maximum.at(winner, cells, positions[valid])
        out = out_view(outputs[0].view(bits))[out_lead]
        out[...] = in_view(cast(FlatArray, inputs[0]).view(bits))[out_lead]
        marked = np.flatnonzero(winner >= 0)
        if marked.size:
            blocks = up_view(cast(FlatArray, inputs[2]).view(bits))[up_lead]
            picked = blocks[np.unravel_index(winner[marked], outer_sizes)] if outer_sizes else blocks[np.newaxis]
            out[np.unravel_index(marked, cell_sizes)] = picked

    return kernel
