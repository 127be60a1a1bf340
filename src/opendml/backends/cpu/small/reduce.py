"""REDUCE, ARGMIN and ARGMAX on small tensors, in NumPy, by the rulings the numba kernels follow (README, Rulings):
integers wrap around in their own type, floats accumulate in FLOAT64 and are rounded once, MIN/MAX propagate NaN
(as the canonical quiet NaN) and order -0 below +0, LOG_SUM_EXP is max-shifted, ARGMIN/ARGMAX index row-major over
the reduced axes in increasing order with ties and NaN going to the first index (INCREASING) or the last
(DECREASING)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from ....ops.base import OperatorDesc
from ....ops.reduce import ReduceOperatorDesc
from ....types import ExecutionFlags, ReduceFunction
from ... import Kernel
from . import FlatArray, viewer

F = ReduceFunction


def _reduce(function: ReduceFunction, x: FlatArray, axes: tuple[int, ...], decreasing: bool) -> FlatArray:
    """The reduced values (keepdims), in FLOAT64 for floats, in the input's type for integers, int64 indices."""
    if function in (F.ARGMIN, F.ARGMAX):
        kept = [d for d in range(x.ndim) if d not in axes]
        blocks = np.transpose(x, kept + sorted(axes)).reshape([x.shape[d] for d in kept] + [-1])
        if decreasing:
            blocks = blocks[..., ::-1]
        # np.argmin/np.argmax return the first extreme, NaN counting as one (the first NaN), -0 and +0 tied.
        index = (np.argmin if function is F.ARGMIN else np.argmax)(blocks, axis=-1)
        if decreasing:
            index = blocks.shape[-1] - 1 - index
        return np.expand_dims(index.astype(np.int64), tuple(axes))
    # (ufunc.reduce rather than np.sum and the like: the same loops, without their Python wrappers.)
    if function in (F.MIN, F.MAX):
        extreme = (np.minimum if function is F.MIN else np.maximum).reduce(x, axis=axes, keepdims=True)
        if x.dtype.kind == "f" and (extreme == 0).any():
            # np.minimum/np.maximum may return either zero when -0 and +0 tie; IEEE's order -0 below +0.
            zero_sign = np.logical_or.reduce(np.signbit(x) & (x == 0), axis=axes, keepdims=True)
            if function is F.MAX:
                zero_sign = ~np.logical_or.reduce(~np.signbit(x) & (x == 0), axis=axes, keepdims=True)
            extreme = np.where(extreme == 0, np.where(zero_sign, -0.0, 0.0).astype(x.dtype), extreme)
        if x.dtype.kind == "f":  # a NaN result is the canonical quiet NaN, whichever NaN NumPy's loop propagated
            np.copyto(extreme, np.nan, where=np.isnan(extreme))
        return cast(FlatArray, extreme)
    if x.dtype.kind != "f":  # integers: SUM, MULTIPLY, L1, SUM_SQUARE, wrapping in their own type
        values = np.abs(x) if function is F.L1 else x * x if function is F.SUM_SQUARE else x
        combine = np.multiply if function is F.MULTIPLY else np.add
        return cast(FlatArray, combine.reduce(values, axis=axes, dtype=x.dtype, keepdims=True))
    wide = x.astype(np.float64)
    if function is F.LOG_SUM_EXP:
        peak = np.maximum.reduce(wide, axis=axes, keepdims=True)
        shift = np.where(np.isfinite(peak), peak, 0.0)  # an infinite peak (or NaN) gives what the math gives
        return cast(FlatArray, shift + np.log(np.add.reduce(np.exp(wide - shift), axis=axes, keepdims=True)))
    if function is F.MULTIPLY:
        return cast(FlatArray, np.multiply.reduce(wide, axis=axes, keepdims=True))
    values = np.abs(wide) if function is F.L1 else wide * wide if function in (F.SUM_SQUARE, F.L2) else wide
    total = np.add.reduce(values, axis=axes, keepdims=True, initial=-0.0)  # -0, IEEE's additive identity
    if function is F.AVERAGE:
        return cast(FlatArray, total / (x.size // total.size))
    if function is F.L2:
        return cast(FlatArray, np.sqrt(total))
    if function is F.LOG_SUM:
        return cast(FlatArray, np.log(total))
    return cast(FlatArray, total)


def reduce_kernel(desc: ReduceOperatorDesc, decreasing: bool = False) -> Kernel:
    source, result = desc.input_tensor, desc.output_tensor
    axes = tuple(sorted(desc.axes))
    function, dtype = desc.function, result.data_type.numpy_dtype
    input_view, output_view = viewer(source), viewer(result)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]))
        with np.errstate(all="ignore"):  # overflow, inf - inf, log 0: IEEE's results, as the numba kernels give
            output_view(outputs[0])[...] = _reduce(function, x, axes, decreasing).astype(dtype)

    return kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    if isinstance(desc, ArgMinOperatorDesc | ArgMaxOperatorDesc):
        return reduce_kernel(desc.reduce_equivalent(), desc.decreasing)
    return reduce_kernel(cast(ReduceOperatorDesc, desc))


