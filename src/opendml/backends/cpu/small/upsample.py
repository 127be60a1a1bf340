"""UPSAMPLE_2D on small tensors: NumPy fancy indexing along the last two dimensions. NEAREST_NEIGHBOR gathers rows
then columns (raw values, every bit kept); LINEAR gathers the two taps per axis (ops/upsample.taps) and blends them
in float32 in the order the page's formula states (ops/upsample.py), each output rounded once to FLOAT16."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.upsample import Upsample2dOperatorDesc, nearest, taps
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    upsample = cast(Upsample2dOperatorDesc, desc)
    source, result = upsample.input_tensor, upsample.output_tensor
    dtype = source.data_type.numpy_dtype
    height, width = source.sizes[-2:]
    out_height, out_width = result.sizes[-2:]
    scale = upsample.scale_size
    input_view, output_view = viewer(source), viewer(result)

    if not upsample.linear:
        rows, columns = nearest(out_height, scale.height), nearest(out_width, scale.width)

        def gather(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            x = input_view(cast(FlatArray, inputs[0]).view(dtype))
            output_view(outputs[0].view(dtype))[...] = x[..., rows, :][..., columns]

        return gather

    y0, y1, wy = taps(out_height, scale.height, height)
    x0, x1, wx = taps(out_width, scale.width, width)
    one = np.float32(1)
    wy, wx = wy[:, None], wx
    vy, vx = one - wy, one - wx

    def blend(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(dtype)).astype(np.float32)
        top, bottom = x[..., y0, :], x[..., y1, :]
        with np.errstate(all="ignore"):
            upper = top[..., x0] * vx + top[..., x1] * wx
            lower = bottom[..., x0] * vx + bottom[..., x1] * wx
            value = upper * vy + lower * wy
            output_view(outputs[0].view(dtype))[...] = value.astype(dtype)

    return blend
