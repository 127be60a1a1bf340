"""ONE_HOT on small tensors: every sequence along Axis is OffValue, but OnValue at its index (a negative index of
a signed type counts from the end, DECISIONS 15; anything still outside [0, D) leaves the sequence off). OffValue is
the values tensor's logical element 0, OnValue its element at coordinate 1 of its highest-numbered dimension of size
> 1 (DECISIONS 16). Values move as unsigned integers of their width, so every bit pattern is kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.one_hot import OneHotOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    one_hot = cast(OneHotOperatorDesc, desc)
    indices, values, result, axis = one_hot.indices_tensor, one_hot.values_tensor, one_hot.output_tensor, one_hot.axis
    depth = result.sizes[axis]
    on_at = tuple(1 if d == max(d for d, size in enumerate(values.sizes) if size > 1) else 0
                  for d in range(values.dimension_count))
    bits = np.dtype(f"u{result.data_type.element_size}")
    off_at = (0,) * values.dimension_count
    along = np.arange(depth).reshape([depth if d == axis else 1 for d in range(result.dimension_count)])
    unsigned_depth = np.array(depth, indices.data_type.numpy_dtype) if indices.data_type.numpy_dtype.kind == "u" \
        else None
    index_view, values_view, output_view = viewer(indices), viewer(values), viewer(result)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        index = index_view(cast(FlatArray, inputs[0]))
        table = values_view(cast(FlatArray, inputs[1]).view(bits))
        if unsigned_depth is not None:  # compared as unsigned: a huge UINT64 index is out of range, not negative
            position = np.minimum(index, unsigned_depth).astype(np.int64)
        else:
            position = index.astype(np.int64)
            position += depth * (position < 0)
        output_view(outputs[0].view(bits))[...] = np.where(along == position, table[on_at], table[off_at])

    return kernel
