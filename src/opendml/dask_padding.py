"""PADDING, PADDING1 and TILE on Dask arrays (dask_graph.py's lowering): CONSTANT as dask.array.pad with the value in
the tensors' type; the other modes and TILE as one integer-array index per axis, the input index of each output
index (ops/padding.py's `index_maps`), so the chunks take exactly the elements the devices read."""

from __future__ import annotations

from typing import Any

import numpy as np

from .ops.padding import Padding1OperatorDesc, PaddingBase, PaddingMode, PaddingOperatorDesc


def lower_padding(desc: PaddingBase, x: Any) -> Any:
    """The Dask array of `desc` applied to the Dask array `x`."""
    if desc.mode is PaddingMode.CONSTANT:
        import dask.array as da

        assert isinstance(desc, (PaddingOperatorDesc, Padding1OperatorDesc))
        widths = tuple(zip(desc.start_padding, desc.end_padding, strict=True))
        value = np.asarray(desc.constant(), dtype=desc.output_tensor.data_type.numpy_dtype)
        return da.pad(x, widths, mode="constant", constant_values=value)
    result = x
    for axis, indices in enumerate(desc.index_maps()):
        if not np.array_equal(indices, np.arange(x.shape[axis])):
            result = result[(slice(None),) * axis + (indices,)]
    return result
