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
from . import FlatArray, tensor_view


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    one_hot = cast(OneHotOperatorDesc, desc)
    indices, values, result, axis = one_hot.indices_tensor, one_hot.values_tensor, one_hot.output_tensor, one_hot.axis
    depth = result.sizes[axis]
    on_at = tuple(1 if d == max(d for d, size in enumerate(values.sizes) if size > 1) else 0
                  for d in range(values.dimension_count))
    bits = np.dtype(f"u{result.data_type.element_size}")
    along = np.arange(depth).reshape([depth if d == axis else 1 for d in range(result.dimension_count)])

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        index = tensor_view(indices, cast(FlatArray, inputs[0]))
        table = tensor_view(values, cast(FlatArray, inputs[1]).view(bits))
        if index.dtype.kind == "u":  # compared as unsigned: a huge UINT64 index is out of range, not negative
            position = np.minimum(index, depth).astype(np.int64)
        else:
            position = index.astype(np.int64)
            position = np.where(position < 0, position + depth, position)
        out = tensor_view(result, outputs[0].view(bits))
        out[...] = np.where(along == position, table[on_at], table[(0,) * values.dimension_count])

    return kernel
