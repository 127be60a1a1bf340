"""PADDING, PADDING1 and TILE in NumPy: per dimension the input index each output index reads (ops/padding.py's
`index_maps`), gathered in one open-mesh indexing of the input's strided view; CONSTANT's padding is the value, the
interior a strided copy. Every index lies inside InputTensor's Sizes, so no read leaves the bound range."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.padding import PaddingBase, PaddingMode
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    padding = cast(PaddingBase, desc)
    source, result = padding.input_tensor, padding.output_tensor
    dtype = source.data_type.numpy_dtype
    input_view, output_view = viewer(source), viewer(result)
    maps = padding.index_maps()
    if padding.mode is PaddingMode.CONSTANT:
        value = np.asarray(padding.constant(), dtype=dtype)
        inside = tuple(slice(start, start + size) for start, size in zip(padding.starts, source.sizes, strict=True))

        def constant_kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            x = input_view(cast(FlatArray, inputs[0]).view(dtype))
            out = output_view(outputs[0].view(dtype))
            out[...] = value
            out[inside] = x

        return constant_kernel
    mesh = np.ix_(*maps)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(dtype))
        output_view(outputs[0].view(dtype))[...] = x[mesh]

    return kernel
