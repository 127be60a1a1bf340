"""GATHER_ND1 (and GATHER_ND, its equivalent without batch dimensions) on small tensors: NumPy's advanced indexing
of the input by the batch positions and the index tuples' coordinates. A negative coordinate of a signed type counts
from the end once; one still out of range is clamped (DECISIONS 21), or, on a debug device, refused before anything
is written with the message the numba kernel gives (plans.gather_out_of_range). Data move as unsigned integers of
their width, so every bit pattern is kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.gather_nd import GatherNdOperatorDesc
from ....ops.gather_nd1 import SIGNED_INDEX_TYPES, GatherNd1OperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from ...plans import gather_out_of_range
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    gather = desc.as_gather_nd1() if isinstance(desc, GatherNdOperatorDesc) else cast(GatherNd1OperatorDesc, desc)
    source, indices, result = gather.input_tensor, gather.indices_tensor, gather.output_tensor
    rank, batch, tuple_size = source.dimension_count, gather.batch_dimension_count, gather.index_tuple_size
    input_lead = rank - gather.input_dimension_count
    indices_lead = rank - gather.indices_dimension_count
    outer_count = gather.indices_dimension_count - 1
    output_lead = rank - outer_count - (gather.input_dimension_count - batch - tuple_size)
    sizes = np.array(source.sizes[input_lead + batch: input_lead + batch + tuple_size], np.int64)
    limits = sizes - 1
    unsigned_limits = None if indices.data_type in SIGNED_INDEX_TYPES else limits.astype(indices.data_type.numpy_dtype)
    bits = np.dtype(f"u{source.data_type.element_size}")
    # Each batch dimension's position, shaped to broadcast over the outer (index position) dimensions.
    batch_positions = [np.arange(indices.sizes[indices_lead + d]).reshape(
        [-1 if e == d else 1 for e in range(outer_count)]) for d in range(batch)]
    rows = batch == 0 and tuple_size == 1
    index_view, data_view, output_view = viewer(indices), viewer(source), viewer(result)
    index_lead, data_lead, out_lead = (0,) * indices_lead, (0,) * input_lead, (0,) * output_lead

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        index_flat = cast(FlatArray, inputs[1])
        tuples = index_view(index_flat)[index_lead]
        if unsigned_limits is not None:
            # Compared as unsigned (a huge UINT64 coordinate is out of range, not negative), then clamped.
            if debug:
                outside = tuples > unsigned_limits
            coordinates = np.minimum(tuples, unsigned_limits).astype(np.int64)
        else:
            # A signed type: negative coordinates count from the end once. (A new int64 array, of sizes' type.)
            coordinates = tuples + sizes * (tuples < 0)
            if debug:
                outside = (coordinates < 0) | (coordinates > limits)
            if not rows:
                np.maximum(coordinates, 0, out=coordinates)
                np.minimum(coordinates, limits, out=coordinates)
        if debug and outside.any():
            first = int(np.argmax(outside.reshape(-1)))
            raise gather_out_of_range(gather, first // tuple_size, first % tuple_size,
                                      lambda at: int(index_flat[at]))
        data = data_view(cast(FlatArray, inputs[0]).view(bits))[data_lead]
        if rows:    # one coordinate, no batch: np.take clamps it (what is left negative becomes 0)
            output_view(outputs[0].view(bits))[out_lead] = np.take(data, coordinates[..., 0], axis=0, mode="clip")
            return
        selection = (*batch_positions, *(coordinates[..., j] for j in range(tuple_size)))
        output_view(outputs[0].view(bits))[out_lead] = data[selection]

    return kernel
