"""MEAN_VARIANCE_NORMALIZATION1 on small tensors: the statistics in NumPy, in FLOAT64 and two passes (the mean, then
the mean of the squared deviations, DECISIONS 17), (x - mean) / sqrt(variance + Epsilon) x Scale + Bias (absent:
1 and 0; size-1 dimensions broadcast), rounded to FLOAT32, then the fused activation by the formulas numba
compiles for large tensors (small/activations.py), and the result rounded once to the output's type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.activations import ActivationOperatorDesc
from ....ops.base import OperatorDesc
from ....ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, tensor_view
from .activations import activate


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    mvn = cast(MeanVarianceNormalization1OperatorDesc, desc)
    axes = tuple(mvn.axes)
    epsilon = float(np.float32(mvn.epsilon))  # a FLOAT field, used as DML receives it
    activation = cast(ActivationOperatorDesc | None, mvn.fused_activation)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = tensor_view(mvn.input_tensor, cast(FlatArray, inputs[0])).astype(np.float64)
        with np.errstate(all="ignore"):  # infinities and NaN give IEEE's results, as in the numba kernel
            deviation = x - x.mean(axis=axes, keepdims=True)
            if mvn.normalize_variance:
                deviation = deviation / np.sqrt(np.mean(deviation * deviation, axis=axes, keepdims=True) + epsilon)
            if mvn.scale_tensor is not None:
                deviation = deviation * tensor_view(mvn.scale_tensor, cast(FlatArray, inputs[1]))
            if mvn.bias_tensor is not None:
                deviation = deviation + tensor_view(mvn.bias_tensor, cast(FlatArray, inputs[2]))
            result = deviation.astype(np.float32)
            if activation is not None:
                result = activate(activation, result)
            tensor_view(mvn.output_tensor, outputs[0])[...] = result.astype(mvn.output_tensor.data_type.numpy_dtype)

    return kernel
