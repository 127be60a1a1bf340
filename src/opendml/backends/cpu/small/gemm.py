"""GEMM on small tensors (and wherever NumPy's OpenBLAS is not found): NumPy only.

op(A) and op(B) are strided views (a transpose is a swap of the last two axes), widened to FLOAT32 (FLOAT16
exactly), broadcast over the batch and multiplied matrix by matrix with np.matmul (BLAS: FLOAT32 accumulated in
FLOAT32 by blocks); then Alpha, + Beta x C (broadcast by its strides), the fused activation (its formula, ops/
activations.py's ACTIVATION_FORMULAS, rendered by formula.evaluate as small/element_wise.py renders the standalone
ones; CLIP as max(Min, min(x, Max)); SOFTMAX / SOFTMAX1 in float64 over their axes) and one rounding to the output's
type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ....formula import evaluate, parse
from ....ops.activation_softmax import _FusedSoftmax
from ....ops.activations import ActivationOperatorDesc, activation_tree, activation_values
from ....ops.base import OperatorDesc
from ....types import DataType, ExecutionFlags, MatrixTransform, OperatorType
from ... import Kernel
from . import FlatArray, viewer


def softmax(values: np.ndarray[Any, Any], axes: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """exp(x - max) / sum exp(x - max) over `axes`, in float64 (a NaN anywhere in a group makes the group NaN)."""
    x = np.asarray(values, np.float64)
    with np.errstate(all="ignore"):
        shifted = np.exp(x - np.max(x, axis=axes, keepdims=True))
        return np.asarray(shifted / np.sum(shifted, axis=axes, keepdims=True))


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    gemm = cast(Any, desc)
    batch, m, n, _ = gemm.matrix_sizes()
    views = [viewer(tensor) for tensor in (gemm.a_tensor, gemm.b_tensor)]
    c_view = None if gemm.c_tensor is None else viewer(gemm.c_tensor)
    output_view = viewer(gemm.output_tensor)
    transposes = (gemm.trans_a is MatrixTransform.TRANSPOSE, gemm.trans_b is MatrixTransform.TRANSPOSE)
    compute = np.float32   # FLOAT16 widened exactly; FLOAT32 and FLOAT16 are GEMM's only types
    alpha, beta = np.float32(gemm.alpha), np.float32(gemm.beta)  # FLOAT fields, as DML has them
    dtype = gemm.output_tensor.data_type.numpy_dtype
    activation = gemm.fused_activation
    f32 = DataType.FLOAT32
    tree, values = None, {}
    if isinstance(activation, ActivationOperatorDesc):
        tree = activation_tree(activation, parse("x", {"x": f32}, f32), f32)
        values = activation_values(activation)
    clip = None
    if activation is not None and activation.OPERATOR_TYPE is OperatorType.ELEMENT_WISE_CLIP:
        clip = (np.float32(cast(Any, activation).field_value("Min")),
                np.float32(cast(Any, activation).field_value("Max")))
    axes = tuple(activation.softmax_axes(len(batch) + 2)) if isinstance(activation, _FusedSoftmax) else None

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        operands = []
        for view, transposed, flat in zip(views, transposes, inputs, strict=False):
            matrix = view(cast(FlatArray, flat))
            matrix = np.swapaxes(matrix, -1, -2) if transposed else matrix
            matrix = np.broadcast_to(matrix, (*batch, *matrix.shape[-2:]))
            operands.append(matrix.astype(compute, copy=False))
        result = np.empty((*batch, m, n), compute)
        with np.errstate(all="ignore"):  # infinities and NaN give IEEE's results, as in the numba kernel
            for index in np.ndindex(*batch):
                np.matmul(operands[0][index], operands[1][index], out=result[index])
            if alpha != 1:
                result *= alpha
            if c_view is not None:
                result += beta * c_view(cast(FlatArray, inputs[2])).astype(compute)
            if tree is not None:
                result = evaluate(tree, {**values, "x": result}, f32)
            elif clip is not None:
                result = np.maximum(clip[0], np.minimum(result, clip[1]))
            elif axes is not None:
                result = softmax(result, axes)
            output_view(outputs[0])[...] = result.astype(dtype)

    return kernel
