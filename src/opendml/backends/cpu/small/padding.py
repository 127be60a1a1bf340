"""PADDING, PADDING1 and TILE in NumPy, as strided copies. PADDING: the input is copied into the output's interior
(the block at StartPadding), then dimension after dimension the padding positions are filled from the interior
positions ops/padding.py's `index_maps` names, one slice copy per run of positions whose sources step by +1 or -1 (a
mirrored or repeated band), over the dimensions filled before it and the interior of the later ones; CONSTANT fills
the value first instead. TILE: one broadcast assignment into the output seen as [Repeats[0], Sizes[0], Repeats[1],
...] (each dimension split by its stride). Every index lies inside InputTensor's Sizes, so no read leaves the bound
range, and NumPy copies each band at memory speed (no gather)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.padding import PaddingBase, PaddingMode, TileOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def _runs(indices: np.ndarray[Any, Any], start: int, size: int) -> list[tuple[slice, slice]]:
    """(target, source) slices along one dimension of the output: each run of padding positions (outside [start,
    start + size)) whose interior sources (start + index) step by +1 or -1."""
    runs: list[tuple[slice, slice]] = []
    positions = [p for p in range(len(indices)) if not start <= p < start + size]
    k = 0
    while k < len(positions):
        first, source = positions[k], start + int(indices[positions[k]])
        step, n = 1, 1
        if k + 1 < len(positions) and positions[k + 1] == first + 1:
            step = start + int(indices[first + 1]) - source
            if step not in (1, -1):
                step = 1
            while (k + n < len(positions) and positions[k + n] == first + n
                   and start + int(indices[first + n]) == source + step * n):
                n += 1
        stop = source + step * n
        runs.append((slice(first, first + n), slice(source, stop if stop >= 0 else None, step)))
        k += n
    return runs


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    if isinstance(desc, TileOperatorDesc):
        return _tile_kernel(desc)
    padding = cast(PaddingBase, desc)
    source, result = padding.input_tensor, padding.output_tensor
    dtype = source.data_type.numpy_dtype
    input_view, output_view = viewer(source), viewer(result)
    inside = tuple(slice(start, start + size) for start, size in zip(padding.starts, source.sizes, strict=True))
    constant = padding.mode is PaddingMode.CONSTANT
    value = np.asarray(padding.constant(), dtype=dtype)
    bands = [] if constant else [
        ((slice(None),) * axis + (target, *inside[axis + 1:]), (slice(None),) * axis + (band, *inside[axis + 1:]))
        for axis, (indices, start, size) in enumerate(zip(padding.index_maps(), padding.starts, source.sizes,
                                                          strict=True))
        for target, band in _runs(indices, start, size)]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(dtype))
        out = output_view(outputs[0].view(dtype))
        if constant:
            out[...] = value
        out[inside] = x
        for target, band in bands:
            out[target] = out[band]

    return kernel


def _tile_kernel(desc: TileOperatorDesc) -> Kernel:
    source, result = desc.input_tensor, desc.output_tensor
    dtype = source.data_type.numpy_dtype
    item = source.data_type.element_size
    input_view = viewer(source)
    split = tuple(value for repeat, size in zip(desc.repeats, source.sizes, strict=True) for value in (repeat, size))
    strides = tuple(value * item for size, stride in zip(source.sizes, result.element_strides, strict=True)
                    for value in (size * stride, stride))
    broadcast = tuple(value for size in source.sizes for value in (1, size))

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]).view(dtype))
        flat = outputs[0].view(dtype)
        np.ndarray(split, flat.dtype, flat, 0, strides)[...] = x.reshape(broadcast)

    return kernel
