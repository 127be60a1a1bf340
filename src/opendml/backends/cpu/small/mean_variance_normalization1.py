"""MEAN_VARIANCE_NORMALIZATION1 on small tensors: the statistics in NumPy, in FLOAT64 and two passes (the mean, then
the mean of the squared deviations, DECISIONS 17), (x - mean) / sqrt(variance + Epsilon) x Scale + Bias (absent:
1 and 0; size-1 dimensions broadcast), rounded to FLOAT32, then the fused activation's formula (ops/activations.py's
ACTIVATION_FORMULAS, rendered by NumPy: formula.evaluate, as small/element_wise.py renders the standalone ones), and
the result rounded once to the output's type."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np

from ....formula import evaluate, parse
from ....ops.activations import ActivationOperatorDesc, activation_tree, activation_values
from ....ops.base import OperatorDesc
from ....ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from ....types import DataType, ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    mvn = cast(MeanVarianceNormalization1OperatorDesc, desc)
    axes = tuple(mvn.axes)
    epsilon = float(np.float32(mvn.epsilon))  # a FLOAT field, used as DML receives it
    activation = cast(ActivationOperatorDesc | None, mvn.fused_activation)
    input_view, output_view = viewer(mvn.input_tensor), viewer(mvn.output_tensor)
    scale_view = None if mvn.scale_tensor is None else viewer(mvn.scale_tensor)
    bias_view = None if mvn.bias_tensor is None else viewer(mvn.bias_tensor)
    count = math.prod(mvn.input_tensor.sizes[axis] for axis in axes)
    dtype = mvn.output_tensor.data_type.numpy_dtype
    f32 = DataType.FLOAT32
    tree = None if activation is None else activation_tree(activation, parse("x", {"x": f32}, f32), f32)
    values = {} if activation is None else activation_values(activation)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0])).astype(np.float64)
        with np.errstate(all="ignore"):  # infinities and NaN give IEEE's results, as in the numba kernel
            deviation = x - np.add.reduce(x, axis=axes, keepdims=True) / count
            if mvn.normalize_variance:
                variance = np.add.reduce(deviation * deviation, axis=axes, keepdims=True) / count
                deviation /= np.sqrt(variance + epsilon)
            if scale_view is not None:
                deviation *= scale_view(cast(FlatArray, inputs[1]))
            if bias_view is not None:
                deviation += bias_view(cast(FlatArray, inputs[2]))
            result = deviation.astype(np.float32)
            if tree is not None:
                result = evaluate(tree, {**values, "x": result}, f32)
            output_view(outputs[0])[...] = result.astype(dtype)

    return kernel
