"""The activations on the gpu are their formulas rendered (issue 26: "a second hand-written copy of a formula is a
defect"): the standalone ACTIVATION_* operators run the element-wise engine's pass, and MEAN_VARIANCE_NORMALIZATION1's
fused activation is rendered from the same formula (element_wise.activation_function). Changing an activation's
formula in ops/activations.py's ACTIVATION_FORMULAS changes both, with no WGSL of its own to edit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml
from opendml.ops.activations import ACTIVATION_FORMULAS

F32 = dml.DataType.FLOAT32


@pytest.fixture(scope="module")
def device() -> Any:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    return dml.Device(backend="gpu")


def _leaky_relu(device: dml.Device, values: np.ndarray, fused: bool) -> np.ndarray:
    """LEAKY_RELU (Alpha 2.75) of `values`, standalone or as MVN1's fused activation (a zero input, no variance
    normalization: the output is activation(Bias))."""
    tensor = dml.TensorDesc(F32, [1, values.size])
    activation = dml.ActivationLeakyReluOperatorDesc(2.75)
    if fused:
        desc: dml.OperatorDesc = dml.MeanVarianceNormalization1OperatorDesc(tensor, None, tensor, tensor, [1], False,
                                                                             0.0, activation)
        arguments: tuple[Any, ...] = (np.zeros_like(values), None, values)
    else:
        desc = dml.ActivationLeakyReluOperatorDesc(2.75, input_tensor=tensor, output_tensor=tensor)
        arguments = (values,)
    (out,) = device.compile_operator(device.create_operator(desc))(*arguments)
    return np.asarray(out).reshape(-1)


@pytest.mark.parametrize("fused", [False, True], ids=["standalone", "fused"])
def test_gpu_activation_is_its_formula_rendered(device: dml.Device, fused: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.array([[-1.0, 0.0, 3.0, -4.0]], np.float32)
    # the real formula: x if x >= 0 else Alpha * x
    np.testing.assert_array_equal(_leaky_relu(device, values, fused), [-2.75, 0.0, 3.0, -11.0])
    monkeypatch.setitem(ACTIVATION_FORMULAS, dml.OperatorType.ACTIVATION_LEAKY_RELU, "Alpha * x + 1")
    # worked by hand: 2.75 * -1 + 1 = -1.75, 0 + 1 = 1, 8.25 + 1 = 9.25, -11 + 1 = -10
    np.testing.assert_array_equal(_leaky_relu(device, values, fused), [-1.75, 1.0, 9.25, -10.0])
