"""CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT on small tensors: NumPy's add.accumulate (multiply.accumulate) along
Axis, which tallies each line in order, one element after the other, as the numba kernel does. FLOAT16 and FLOAT32
accumulate in float32 (FLOAT16 widened exactly, each output rounded once), integers in their own type, wrapping.
AxisDirection DECREASING tallies the flipped line; an exclusive tally is the inclusive one shifted by one element,
the identity (0 or 1) first. The input is read whole before the output is written, so they may alias."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.cumulative import CumulativeOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    scan = cast(CumulativeOperatorDesc, desc)
    source, result, axis = scan.input_tensor, scan.output_tensor, scan.axis
    dtype = source.data_type.numpy_dtype
    accumulator = np.dtype(np.float32) if dtype.kind == "f" else dtype
    ufunc = np.multiply if scan.is_product else np.add
    length = source.sizes[axis]
    along = [slice(None)] * source.dimension_count
    shifted_to, shifted_from, first = list(along), list(along), list(along)
    shifted_to[axis], shifted_from[axis], first[axis] = slice(1, None), slice(0, length - 1), slice(0, 1)
    input_view, output_view = viewer(source), viewer(result)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(dtype)).astype(accumulator)
        if scan.decreasing:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            tally = ufunc.accumulate(x, axis=axis, dtype=accumulator)
        if scan.exclusive:
            tally[tuple(shifted_to)] = tally[tuple(shifted_from)].copy()
            tally[tuple(first)] = scan.IDENTITY
        if scan.decreasing:
            tally = np.flip(tally, axis)
        with np.errstate(all="ignore"):
            output_view(outputs[0].view(dtype))[...] = tally.astype(dtype)

    return kernel
