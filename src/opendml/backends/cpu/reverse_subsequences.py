"""REVERSE_SUBSEQUENCES on the cpu (and on small tensors, the same kernel): NumPy's take_along_axis over the logical
views, with every sequence's source index along Axis (L - 1 - k below its clamped length L, k beyond); elements move
as unsigned integers of their width, so every bit pattern is kept. The input is read whole before the output is
written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.reverse_subsequences import ReverseSubsequencesOperatorDesc
from ...types import ExecutionFlags
from .. import Kernel
from .small import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    reverse = cast(ReverseSubsequencesOperatorDesc, desc)
    source, lengths, result, axis = (reverse.input_tensor, reverse.sequence_lengths_tensor, reverse.output_tensor,
                                     reverse.axis)
    size = source.sizes[axis]
    bits = np.dtype(f"u{source.data_type.element_size}")
    along = np.arange(size, dtype=np.int64).reshape([size if dim == axis else 1 for dim in range(len(source.sizes))])
    source_view, lengths_view, output_view = viewer(source), viewer(lengths), viewer(result)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = source_view(cast(FlatArray, inputs[0]).view(bits))
        length = np.minimum(lengths_view(cast(FlatArray, inputs[1]).view(np.uint32)).astype(np.int64), size)
        index = np.broadcast_to(np.where(along < length, length - 1 - along, along), x.shape)
        output_view(outputs[0].view(bits))[...] = np.take_along_axis(x, index, axis)

    return kernel
