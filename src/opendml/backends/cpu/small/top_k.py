"""TOP_K and TOP_K1 on small tensors: each element's order key (ops/top_k.order_key, from its bits), a stable
argsort of the complemented keys along Axis (largest key first, equal keys in ascending index order), its first K
positions as the indices, and the input's bits taken along Axis at them as the values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.top_k import BITS, TopKOperatorDesc, order_key
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    top = cast(TopKOperatorDesc, desc)
    source, axis, k = top.input_tensor, top.axis, top.k
    bits = BITS[source.data_type.element_size]
    index_type = top.output_index_tensor.data_type.numpy_dtype
    input_view, value_view, index_view = (viewer(tensor) for tensor in (source, top.output_value_tensor,
                                                                         top.output_index_tensor))
    first_k = tuple(slice(0, k) if dim == axis else slice(None) for dim in range(source.dimension_count))

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(bits))
        keys = order_key(x, source.data_type, top.decreasing)
        best = np.argsort(~keys, axis=axis, kind="stable")[first_k]
        value_view(outputs[0].view(bits))[...] = np.take_along_axis(x, best, axis=axis)
        index_view(outputs[1].view(index_type))[...] = best

    return kernel
