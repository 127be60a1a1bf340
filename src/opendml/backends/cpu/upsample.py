"""UPSAMPLE_2D on the CPU: numba kernels, parallel over output rows.

The dimensions before height and width are walked through offset tables (one entry per image: batch, channel and
depth). NEAREST_NEIGHBOR is a copy: each output element is the raw bits of the input element at (o_y //
ScaleSize.Height, o_x // ScaleSize.Width), so every value (NaN payloads too) is copied exactly, by slice.py's row-copy
kernel (rows of output rows, each gathered from its input row) or, where its rows would be too short, the gather of
columns below (a task per output row). LINEAR reads the two taps per axis that ops/upsample.taps gives (indices and
float32 weights, worked out once per descriptor) and blends them in float32 in the order ops/upsample.py states
(FLOAT16 widened exactly and each output rounded once: element_wise.load_element / store_element), the same
arithmetic as the NumPy kernel's: a task is a band of _BAND output rows of one image, whose input rows are first
blended along the width once each (the `upper` and `lower` of every output row of the band), then blended along the
height row after row (a loop LLVM vectorizes). Any strides; the input is never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...ops.upsample import Upsample2dOperatorDesc, nearest, taps
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from .element_wise import load_element, store_element
from .float16 import F16_TAG, NATIVE_TAG
from .memory_kernels import PARALLEL_LAUNCH
from .slice import copy_kernel


def _gather_rows(x: Any, y: Any, x_bases: Any, y_bases: Any, rows: Any, columns: Any, out_height: int,
                 x_row: int, x_column: int, y_row: int, y_column: int) -> None:
    out_width = columns.size
    for task in numba.prange(x_bases.size * out_height):
        image, oy = task // out_height, task % out_height
        xs = x_bases[image] + rows[oy] * x_row
        ys = y_bases[image] + oy * y_row
        for ox in range(out_width):
            y[ys + ox * y_column] = x[xs + columns[ox] * x_column]


#: Output rows per LINEAR task: the input rows they read are blended along the width once, into a band in cache.
_BAND = 16


def _blend_rows(x: Any, y: Any, x_bases: Any, y_bases: Any, y0: Any, y1: Any, wy: Any, x0: Any, x1: Any, wx: Any,
                x_row: int, x_column: int, y_row: int, y_column: int, tag: Any) -> None:
    out_height, out_width = wy.size, wx.size
    bands = (out_height + _BAND - 1) // _BAND
    one = np.float32(1)
    for task in numba.prange(x_bases.size * bands):
        image, band = task // bands, task % bands
        first, last = band * _BAND, min(out_height, (band + 1) * _BAND)
        top_row = y0[first]
        across = np.empty((y1[last - 1] - top_row + 1, out_width), np.float32)
        for row in range(across.shape[0]):   # each input row the band reads, blended along the width once
            xs = x_bases[image] + (top_row + row) * x_row
            for ox in range(out_width):
                weight_x = wx[ox]
                across[row, ox] = (load_element(x, xs + x0[ox] * x_column, tag) * (one - weight_x)
                                   + load_element(x, xs + x1[ox] * x_column, tag) * weight_x)
        for oy in range(first, last):
            upper, lower = across[y0[oy] - top_row], across[y1[oy] - top_row]
            weight_y = wy[oy]
            keep_y = one - weight_y
            ys = y_bases[image] + oy * y_row
            for ox in range(out_width):
                store_element(y, ys + ox * y_column, upper[ox] * keep_y + lower[ox] * weight_y, tag)


_gather: Any = numba.njit(cache=True, parallel=True)(_gather_rows)
_blend: Any = numba.njit(cache=True, parallel=True, fastmath=False)(_blend_rows)


def _bases(desc: TensorDesc) -> np.ndarray:
    """The element offset of each image (every position of the dimensions before height and width, row-major)."""
    bases = np.zeros(1, np.int64)
    for size, stride in zip(desc.sizes[:-2], desc.element_strides[:-2], strict=True):
        bases = (bases[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
    return bases


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    upsample = cast(Upsample2dOperatorDesc, desc)
    source, result = upsample.input_tensor, upsample.output_tensor
    scale = upsample.scale_size
    height, width = source.sizes[-2:]
    out_height, out_width = result.sizes[-2:]
    x_bases, y_bases = _bases(source), _bases(result)
    x_row, x_column = source.element_strides[-2:]
    y_row, y_column = result.element_strides[-2:]
    half = source.data_type is DataType.FLOAT16
    bits = np.dtype(np.uint16) if half else source.data_type.numpy_dtype

    if not upsample.linear:
        rows, columns = nearest(out_height, scale.height), nearest(out_width, scale.width)
        maps = [np.arange(size, dtype=np.int64) * stride for size, stride in
                zip(source.sizes[:-2], source.element_strides[:-2], strict=True)]
        copy = copy_kernel([*maps, rows.astype(np.int64) * x_row, columns.astype(np.int64) * x_column],
                           result.element_strides, source.data_type)
        if copy is not None:
            return copy

        def gather(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
            with PARALLEL_LAUNCH:
                _gather(cast(FlatArray, inputs[0]).view(bits), outputs[0].view(bits), x_bases, y_bases, rows,
                        columns, out_height, x_row, x_column, y_row, y_column)

        return gather

    y0, y1, wy = taps(out_height, scale.height, height)
    x0, x1, wx = taps(out_width, scale.width, width)
    tag = F16_TAG if half else NATIVE_TAG

    def blend(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        with PARALLEL_LAUNCH:
            _blend(cast(FlatArray, inputs[0]).view(bits), outputs[0].view(bits), x_bases, y_bases, y0, y1, wy, x0,
                   x1, wx, x_row, x_column, y_row, y_column, tag)

    return blend
