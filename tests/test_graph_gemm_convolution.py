"""The graph API of GEMM and CONVOLUTION (issue 27): `dml.gemm` and `dml.convolution` with DirectMLX's names and
defaults, inferred output sizes (the descriptors' own helpers), NumPy-style batch and C broadcasting through zero
strides, transposes folded into the strides the operator reads, and the messages of bad calls.

Every golden value is worked out by hand in the comments (small integers: exact in FLOAT32 on every backend).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import opendml as dml

NDArray = np.ndarray[Any, Any]
E = inspect.Parameter.empty


def graph(level: str = "6_4") -> dml.Graph:
    return dml.Graph(dml.Device(feature_level=level))


def f32(values: Any) -> NDArray:
    return np.array(values, np.float32)


def run(output: dml.Expression, inputs: dict[str, NDArray]) -> NDArray:
    (result,) = output.graph.compile([output])(inputs)
    return result


def step_types(output: dml.Expression) -> list[str]:
    """The operators the compiled graph runs, in order."""
    return [step.operator.desc.OPERATOR_TYPE.name for step in output.graph.compile([output]).steps]


# -- signatures: DirectMLX's names and defaults -----------------------------------------------------------------------

def test_signatures_have_directmlx_defaults() -> None:
    gemm = {name: item.default for name, item in inspect.signature(dml.gemm).parameters.items()}
    assert gemm == {"a": E, "b": E, "c": None, "trans_a": dml.MatrixTransform.NONE, "trans_b": dml.MatrixTransform.NONE,
                    "alpha": 1.0, "beta": 1.0, "fused_activation": None}
    convolution = {name: item.default for name, item in inspect.signature(dml.convolution).parameters.items()}
    assert convolution == {
        "x": E, "w": E, "bias": None, "mode": dml.ConvolutionMode.CROSS_CORRELATION,
        "direction": dml.ConvolutionDirection.FORWARD, "strides": None, "dilations": None, "start_padding": None,
        "end_padding": None, "output_padding": None, "group_count": 1, "fused_activation": None, "output_sizes": None}
    assert {"gemm", "convolution"} <= set(dml.__all__)


def test_defaults_fill_the_descriptor_as_directmlx_does() -> None:
    g = graph()
    x, w = g.input([1, 2, 5, 5], "FLOAT32"), g.input([3, 2, 3, 3], "FLOAT32")
    desc = dml.convolution(x, w).operator_desc
    assert isinstance(desc, dml.ConvolutionOperatorDesc)
    assert (desc.mode, desc.direction, desc.dimension_count, desc.group_count, desc.bias_tensor,
            desc.fused_activation) == (dml.ConvolutionMode.CROSS_CORRELATION, dml.ConvolutionDirection.FORWARD, 2, 1,
                                       None, None)
    assert (desc.strides, desc.dilations, desc.start_padding, desc.end_padding, desc.output_padding) == (
        (1, 1), (1, 1), (0, 0), (0, 0), (0, 0))
    a, b = g.input([2, 3], "FLOAT16"), g.input([3, 4], "FLOAT16")
    product = dml.gemm(a, b)
    gemm = product.operator_desc
    assert isinstance(gemm, dml.GemmOperatorDesc) and product.dtype is dml.DataType.FLOAT16    # a's data type
    assert (gemm.c_tensor, gemm.trans_a, gemm.trans_b, gemm.alpha, gemm.beta, gemm.fused_activation) == (
        None, dml.MatrixTransform.NONE, dml.MatrixTransform.NONE, 1.0, 1.0, None)


# -- GEMM: inferred sizes ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "trans_a", "trans_b", "expected"), [
    ([2, 3], [3, 4], "NONE", "NONE", (2, 4)),                  # [M, K] x [K, N]
    ([3, 2], [3, 4], "TRANSPOSE", "NONE", (2, 4)),             # op(a) = a^T: M is a's last size
    ([2, 3], [4, 3], "NONE", "TRANSPOSE", (2, 4)),             # op(b) = b^T: N is b's second-to-last size
    ([3, 2], [4, 3], "TRANSPOSE", "TRANSPOSE", (2, 4)),
    ([3, 1], [1, 3], "NONE", "NONE", (3, 3)),                  # dml_gemm.json: K = 1
    ([1, 1, 32, 32], [1, 1, 32, 32], "NONE", "NONE", (1, 1, 32, 32)),
    ([2, 5, 2, 3], [2, 5, 3, 4], "NONE", "NONE", (2, 5, 2, 4)),
    ([2, 5, 2, 3], [3, 4], "NONE", "NONE", (2, 5, 2, 4)),      # b's missing batch broadcast
    ([1, 2, 3], [6, 3, 4], "NONE", "NONE", (6, 2, 4)),         # a's batch of 1 broadcast
    ([7, 1, 2, 3], [5, 3, 4], "NONE", "NONE", (7, 5, 2, 4)),   # both broadcast, NumPy's matmul rule
])
def test_gemm_infers_the_output_sizes(a: list[int], b: list[int], trans_a: str, trans_b: str,
                                      expected: tuple[int, ...]) -> None:
    g = graph()
    output = dml.gemm(g.input(a, "FLOAT32"), g.input(b, "FLOAT32"), trans_a=trans_a, trans_b=trans_b)
    assert output.sizes == expected and output.dtype is dml.DataType.FLOAT32
    desc = output.operator_desc
    assert isinstance(desc, dml.GemmOperatorDesc) and desc.output_tensor.sizes == expected


def test_a_broadcast_batch_and_c_are_zero_strides() -> None:
    g = graph()
    a, b, c = g.input([2, 3, 4], "FLOAT32"), g.input([4, 5], "FLOAT32"), g.input([5], "FLOAT32")
    desc = dml.gemm(a, b, c).operator_desc
    assert isinstance(desc, dml.GemmOperatorDesc) and desc.c_tensor is not None
    assert (desc.b_tensor.sizes, desc.b_tensor.element_strides) == ((2, 4, 5), (0, 5, 1))
    assert (desc.c_tensor.sizes, desc.c_tensor.element_strides) == ((2, 3, 5), (0, 0, 1))
    assert desc.a_tensor.sizes == (2, 3, 4) and desc.a_tensor.strides is None


# -- GEMM: values -----------------------------------------------------------------------------------------------------

A = f32([[1, 2], [3, 4]])
B = f32([[5, 6], [7, 8]])


@pytest.mark.parametrize(("arguments", "c", "expected"), [
    # A x B = [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]] = [[19, 22], [43, 50]]
    ({}, None, [[19, 22], [43, 50]]),
    # Alpha 2, Beta 3, C ones: 2*19 + 3 = 41, 2*22 + 3 = 47, 2*43 + 3 = 89, 2*50 + 3 = 103
    ({"alpha": 2.0, "beta": 3.0}, [[1, 1], [1, 1]], [[41, 47], [89, 103]]),
    # Without C, Beta is ignored
    ({"beta": 100.0}, None, [[19, 22], [43, 50]]),
    # A^T = [[1, 3], [2, 4]]: A^T x B = [[1*5 + 3*7, 1*6 + 3*8], [2*5 + 4*7, 2*6 + 4*8]] = [[26, 30], [38, 44]]
    ({"trans_a": "TRANSPOSE"}, None, [[26, 30], [38, 44]]),
    # B^T = [[5, 7], [6, 8]]: A x B^T = [[1*5 + 2*6, 1*7 + 2*8], [3*5 + 4*6, 3*7 + 4*8]] = [[17, 23], [39, 53]]
    ({"trans_b": "DML_MATRIX_TRANSFORM_TRANSPOSE"}, None, [[17, 23], [39, 53]]),
    # C a bias row [10, 20], broadcast over the rows: [[19 + 10, 22 + 20], [43 + 10, 50 + 20]]
    ({}, [10, 20], [[29, 42], [53, 70]]),
    # -(A x B) + C with C = [[20, 20], [50, 50]] = [[1, -2], [7, 0]], then RELU
    ({"alpha": -1.0, "fused_activation": dml.FusedActivation.relu()}, [[20, 20], [50, 50]], [[1, 0], [7, 0]]),
    # a fused ELEMENT_WISE_CLIP (from 6_0) to [20, 45]: 19 -> 20, 22, 43, 50 -> 45
    ({"fused_activation": dml.ElementWiseClipOperatorDesc(None, None, None, 20.0, 45.0)}, None, [[20, 22], [43, 45]]),
])
def test_gemm_values(arguments: dict[str, Any], c: list[Any] | None, expected: list[list[float]]) -> None:
    g = graph()
    a, b = g.input([2, 2], "FLOAT32", name="a"), g.input([2, 2], "FLOAT32", name="b")
    inputs = {"a": A, "b": B}
    c_input = None
    if c is not None:
        c_input = g.input(np.shape(c), "FLOAT32", name="c")
        inputs["c"] = f32(c)
    np.testing.assert_array_equal(run(dml.gemm(a, b, c_input, **arguments), inputs), f32(expected))


def test_a_batch_broadcast_reads_one_matrix_for_every_batch() -> None:
    # a [2, 2, 2] = (A, 2A) times B [2, 2]: (A x B, 2 A x B) = ([[19, 22], [43, 50]], [[38, 44], [86, 100]])
    g = graph()
    a, b = g.input([2, 2, 2], "FLOAT32", name="a"), g.input([2, 2], "FLOAT32", name="b")
    result = run(dml.gemm(a, b), {"a": np.stack([A, 2 * A]), "b": B})
    np.testing.assert_array_equal(result, f32([[[19, 22], [43, 50]], [[38, 44], [86, 100]]]))


# -- GEMM: transposes folded ------------------------------------------------------------------------------------------

def test_a_transpose_feeding_gemm_is_folded_into_its_strides() -> None:
    # transpose(a) x b = A^T x B = [[26, 30], [38, 44]] (as TransA above), with no IDENTITY run for the transpose
    g = graph()
    a, b = g.input([2, 2], "FLOAT32", name="a"), g.input([2, 2], "FLOAT32", name="b")
    output = dml.gemm(dml.transpose(a), b)
    assert step_types(output) == ["GEMM"]
    desc = output.operator_desc
    assert isinstance(desc, dml.GemmOperatorDesc) and desc.a_tensor.element_strides == (1, 2)
    np.testing.assert_array_equal(run(output, {"a": A, "b": B}), f32([[26, 30], [38, 44]]))
    # folded twice: transpose(b) with TransB TRANSPOSE reads b itself: A x B = [[19, 22], [43, 50]]
    output = dml.gemm(a, dml.transpose(b), trans_b="TRANSPOSE")
    assert step_types(output) == ["GEMM"]
    np.testing.assert_array_equal(run(output, {"a": A, "b": B}), f32([[19, 22], [43, 50]]))


def test_a_batched_transpose_is_folded_too() -> None:
    # b given as [N, K] per batch, transposed over its last two axes: (A x B, A x B) as [2, 2, 2]
    g = graph()
    a, b = g.input([2, 2, 2], "FLOAT32", name="a"), g.input([2, 2, 2], "FLOAT32", name="b")
    output = dml.gemm(a, dml.transpose(b, [0, 2, 1]))
    assert step_types(output) == ["GEMM"]
    result = run(output, {"a": np.stack([A, A]), "b": np.stack([B.T, B.T])})
    np.testing.assert_array_equal(result, f32([[[19, 22], [43, 50]]] * 2))


def test_constant_weights_are_owned_and_read_through_their_views() -> None:
    # Graph constants are OWNED_BY_DML (bound once, at initialization, where a kernel may pre-pack them): b a
    # transposed constant, c a constant bias row. A x B^T = [[17, 23], [39, 53]] (above); A x B + [10, 20] =
    # [[29, 42], [53, 70]]
    g = graph()
    a, b = g.input([2, 2], "FLOAT32", name="a"), g.constant(B)
    transposed, biased = dml.gemm(a, dml.transpose(b)), dml.gemm(a, b, g.constant(f32([10, 20])))
    for output in (transposed, biased):
        desc = output.operator_desc
        assert isinstance(desc, dml.GemmOperatorDesc) and desc.b_tensor.flags & dml.TensorFlags.OWNED_BY_DML
    compiled = g.compile([transposed, biased])
    assert [step.operator.desc.OPERATOR_TYPE.name for step in compiled.steps] == ["GEMM", "GEMM"]
    for _ in range(2):                                  # compiled once, dispatched twice
        first, second = compiled({"a": A})
        np.testing.assert_array_equal(first, f32([[17, 23], [39, 53]]))
        np.testing.assert_array_equal(second, f32([[29, 42], [53, 70]]))


# -- CONVOLUTION: inferred sizes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("x", "w", "arguments", "expected"), [
    ([1, 1, 3, 3], [1, 1, 2, 2], {}, (1, 1, 2, 2)),                      # dml_convolution_2d.json: 3 - 2 + 1
    ([1, 1, 3, 3, 3], [1, 1, 2, 2, 2], {}, (1, 1, 2, 2, 2)),             # dml_convolution_3d.json
    ([2, 3, 10], [4, 3, 4], {"strides": [3]}, (2, 4, 3)),                # 1-D: (10 - 4) // 3 + 1 = 3
    # (8 + 1 + 1 - 3) // 2 + 1 = 7 // 2 + 1 = 4
    ([1, 3, 8, 8], [6, 3, 3, 3], {"strides": [2, 2], "start_padding": [1, 1], "end_padding": [1, 1]}, (1, 6, 4, 4)),
    # dilated 3-tap filter spans (3 - 1) * 2 + 1 = 5: 7 - 5 + 1 = 3; the other axis 7 - 3 + 1 = 5
    ([1, 1, 7, 7], [1, 1, 3, 3], {"dilations": [2, 1]}, (1, 1, 3, 5)),
    ([2, 4, 5, 5], [8, 2, 3, 3], {"group_count": 2}, (2, 8, 3, 3)),      # 2 groups of 2 input channels
    ([1, 4, 5, 5], [4, 1, 3, 3], {"group_count": 4, "start_padding": [1, 1], "end_padding": [1, 1]},
     (1, 4, 5, 5)),                                                      # depthwise, "same" padding
    # BACKWARD: (in - 1) * S + (k - 1) * D + 1 - Ps - Pe + Po; output channels GroupCount * w.Sizes[1]
    ([1, 2, 3, 3], [2, 3, 3, 3], {"direction": "BACKWARD", "strides": [2, 2]}, (1, 3, 7, 7)),  # 2 * 2 + 3 = 7
    ([1, 2, 3, 3], [2, 3, 3, 3], {"direction": "BACKWARD", "strides": [2, 2], "output_padding": [1, 0]},
     (1, 3, 8, 7)),
    ([1, 2, 4, 4], [2, 1, 4, 4], {"direction": "BACKWARD", "strides": [2, 2], "start_padding": [1, 1],
                                  "end_padding": [1, 1]}, (1, 1, 8, 8)),   # 3 * 2 + 4 - 2 = 8
    ([1, 4, 3, 3], [4, 1, 2, 2], {"direction": "BACKWARD", "group_count": 2}, (1, 2, 4, 4)),  # 2 * 1 channels
    ([1, 1, 3, 3], [1, 1, 2, 2], {"output_sizes": [1, 1, 2, 2]}, (1, 1, 2, 2)),  # DirectMLX's outputSizes
])
def test_convolution_infers_the_output_sizes(x: list[int], w: list[int], arguments: dict[str, Any],
                                             expected: tuple[int, ...]) -> None:
    g = graph()
    output = dml.convolution(g.input(x, "FLOAT32"), g.input(w, "FLOAT32"), **arguments)
    assert output.sizes == expected and output.dtype is dml.DataType.FLOAT32


# -- CONVOLUTION: values -----------------------------------------------------------------------------------------------

X_3X3 = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)     # rows 1 2 3 / 4 5 6 / 7 8 9


@pytest.mark.parametrize(("x", "w", "bias", "arguments", "expected"), [
    # dml_convolution_2d.json: 0.5 * each 2x2 window's sum: 0.5 * (1+2+4+5), (2+3+5+6), (4+5+7+8), (5+6+8+9)
    (X_3X3, np.full((1, 1, 2, 2), 0.5), None, {}, [[[[6, 8], [12, 14]]]]),
    # ones 3x3, padding 1, stride 2: windows centred on (0, 0), (0, 2), (2, 0), (2, 2) of the zero-padded input:
    # 1+2+4+5 = 12, 2+3+5+6 = 16, 4+5+7+8 = 24, 5+6+8+9 = 28
    (X_3X3, np.ones((1, 1, 3, 3)), None, {"strides": [2, 2], "start_padding": [1, 1], "end_padding": [1, 1]},
     [[[[12, 16], [24, 28]]]]),
    # 1-D, x = 1 2 3 4, w = 1 10: CROSS_CORRELATION 1 + 20, 2 + 30, 3 + 40
    ([[[1, 2, 3, 4]]], [[[1, 10]]], None, {}, [[[21, 32, 43]]]),
    # CONVOLUTION flips the filter to 10 1: 10 + 2, 20 + 3, 30 + 4
    ([[[1, 2, 3, 4]]], [[[1, 10]]], None, {"mode": "CONVOLUTION"}, [[[12, 23, 34]]]),
    # dilation 2: taps x[i] and x[i + 2]: 1 + 30, 2 + 40
    ([[[1, 2, 3, 4]]], [[[1, 10]]], None, {"dilations": [2]}, [[[31, 42]]]),
    # 2 output channels of x = 1 2 3: filters (1, -1) -> -1, -1 and (-1, 1) -> 1, 1; Bias [0.5, 0.5] (a [Cout]
    # vector) -> -0.5, -0.5 and 1.5, 1.5; RELU -> 0, 0 and 1.5, 1.5
    ([[[1, 2, 3]]], [[[1, -1]], [[-1, 1]]], [0.5, 0.5], {"fused_activation": dml.FusedActivation.relu()},
     [[[0, 0], [1.5, 1.5]]]),
    # the same Bias as DML's {1, Cout, 1}, no activation
    ([[[1, 2, 3]]], [[[1, -1]], [[-1, 1]]], [[[0.5], [0.5]]], {}, [[[-0.5, -0.5], [1.5, 1.5]]]),
    # depthwise (2 groups of 1 channel): channel 0 = 1 2 3 with (1, 1) -> 3, 5; channel 1 = 4 5 6 with (2, 0) -> 8, 10
    ([[[1, 2, 3], [4, 5, 6]]], [[[1, 1]], [[2, 0]]], None, {"group_count": 2}, [[[3, 5], [8, 10]]]),
    # BACKWARD, stride 2: x = 1 2 scattered through w = 1 10 100 -> 1 10 100 0 0 + 0 0 2 20 200 = 1 10 102 20 200
    ([[[1, 2]]], [[[1, 10, 100]]], None, {"direction": "BACKWARD", "strides": [2]}, [[[1, 10, 102, 20, 200]]]),
    # ... OutputPadding 1 adds a trailing element, where nothing lands: 0
    ([[[1, 2]]], [[[1, 10, 100]]], None, {"direction": "BACKWARD", "strides": [2], "output_padding": [1]},
     [[[1, 10, 102, 20, 200, 0]]]),
])
def test_convolution_values(x: Any, w: Any, bias: Any, arguments: dict[str, Any], expected: Any) -> None:
    g = graph()
    inputs = {"x": f32(x), "w": f32(w)}
    x_input, w_input = g.input(np.shape(x), "FLOAT32", name="x"), g.input(np.shape(w), "FLOAT32", name="w")
    bias_input = None
    if bias is not None:
        bias_input = g.input(np.shape(bias), "FLOAT32", name="bias")
        inputs["bias"] = f32(bias)
    output = dml.convolution(x_input, w_input, bias_input, **arguments)
    np.testing.assert_array_equal(run(output, inputs), f32(expected))


def test_nhwc_data_is_read_through_strides() -> None:
    # The 3x3 input 1..9 held NHWC [1, 3, 3, 1], transposed to NCHW: the sample's 6, 8, 12, 14, with no IDENTITY run
    g = graph()
    x, w = g.input([1, 3, 3, 1], "FLOAT32", name="x"), g.constant(np.full((1, 1, 2, 2), 0.5, np.float32))
    output = dml.convolution(dml.transpose(x, [0, 3, 1, 2]), w)
    assert step_types(output) == ["CONVOLUTION"]
    desc = output.operator_desc
    assert isinstance(desc, dml.ConvolutionOperatorDesc) and desc.input_tensor.element_strides == (9, 1, 3, 1)
    np.testing.assert_array_equal(run(output, {"x": X_3X3.reshape(1, 3, 3, 1)}), f32([[[[6, 8], [12, 14]]]]))


# -- bad calls ---------------------------------------------------------------------------------------------------------

def _gemm_call(a: list[int], b: list[int], c: list[int] | None = None, level: str = "6_4",
               **arguments: Any) -> None:
    g = graph(level)
    dml.gemm(g.input(a, "FLOAT32"), g.input(b, "FLOAT32"), None if c is None else g.input(c, "FLOAT32"),
             **arguments)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: _gemm_call([3], [3, 4]), dml.ValidationError,
     r"^DML_OPERATOR_GEMM: ATensor.DimensionCount 1 is not supported; at feature level 6_4 it must be 2 to 4$"),
    (lambda: _gemm_call([2, 3], [3, 4], level="3_1"), dml.UnsupportedError,
     r"^DML_OPERATOR_GEMM: ATensor.DimensionCount 2 needs feature level 4_0; the device is at 3_1$"),
    (lambda: _gemm_call([1, 1, 1, 2, 3], [1, 1, 1, 3, 4]), dml.ValidationError,
     r"ATensor.DimensionCount 5 is not supported; at feature level 6_4 it must be 2 to 4$"),
    (lambda: _gemm_call([2, 3], [4, 5]), dml.ValidationError,
     r"^DML_OPERATOR_GEMM: BTensor.Sizes\[0\] is 4; it must equal ATensor.Sizes\[1\] \(3\), the K of both with "
     r"TransA NONE and TransB NONE$"),
    (lambda: _gemm_call([2, 3], [4, 3], trans_a="TRANSPOSE"), dml.ValidationError,
     r"BTensor.Sizes\[0\] is 4; it must equal ATensor.Sizes\[0\] \(2\), the K of both with TransA TRANSPOSE and "
     r"TransB NONE$"),
    (lambda: _gemm_call([2, 2, 3], [3, 3, 4]), dml.ValidationError,
     r"^dml.gemm: the sizes of a's batch \[2\] and b's batch \[3\] do not broadcast"),
    (lambda: _gemm_call([2, 3], [3, 4], [3]), dml.ValidationError,
     r"^dml.gemm: c's sizes \[3\] do not broadcast to the output's \[2, 4\]"),
    (lambda: _gemm_call([2, 3], [3, 4], [1, 2, 4]), dml.ValidationError,
     r"^dml.gemm: c's sizes \[1, 2, 4\] do not broadcast to the output's \[2, 4\]"),
    (lambda: _gemm_call([2, 3], [3, 4], trans_a="SIDEWAYS"), dml.ValidationError,
     r"^DML_OPERATOR_GEMM: TransA is 'SIDEWAYS'; it must be one of NONE, TRANSPOSE"),
    (lambda: _gemm_call([2, 3], [3, 4], alpha="two"), dml.ValidationError,
     r"^DML_OPERATOR_GEMM: Alpha is 'two'; it must be a number"),
    (lambda: _gemm_call([2, 3], [3, 4], fused_activation="relu"), dml.ValidationError,
     r"^DML_OPERATOR_GEMM: FusedActivation is 'relu'; it must be an operator descriptor"),
    (lambda: _gemm_call([2, 3], [3, 4], level="6_0", fused_activation=dml.ActivationSoftmaxOperatorDesc()),
     dml.UnsupportedError, r"^DML_OPERATOR_GEMM: FusedActivation \(DML_OPERATOR_ACTIVATION_SOFTMAX\) needs feature "
     r"level 6_1; the device is at 6_0$"),
    (lambda: _gemm_call([2, 3], [3, 4], level="5_1",
                        fused_activation=dml.ElementWiseClipOperatorDesc(None, None, None, 0.0, 6.0)),
     dml.UnsupportedError, r"FusedActivation \(DML_OPERATOR_ELEMENT_WISE_CLIP\) needs feature level 6_0"),
    (lambda: dml.gemm(graph().input([2, 3], "FLOAT32"), 3), dml.ValidationError,
     r"^dml.gemm: b is 3; it must be a dml.Expression$"),
    (lambda: dml.gemm(graph().input([2, 3], "FLOAT32"), graph().input([3, 4], "FLOAT32")), dml.ValidationError,
     r"^dml.gemm: b belongs to another graph than a"),
])
def test_bad_gemm_calls(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def _convolution_call(x: list[int], w: list[int], bias: list[int] | None = None, **arguments: Any) -> None:
    g = graph()
    dml.convolution(g.input(x, "FLOAT32"), g.input(w, "FLOAT32"), None if bias is None else g.input(bias, "FLOAT32"),
                    **arguments)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: _convolution_call([3, 5], [3, 5]),
     r"^DML_OPERATOR_CONVOLUTION: InputTensor.DimensionCount 2 is not supported; at feature level 6_4 it must be 3 "
     r"to 5$"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3]),
     r"^DML_OPERATOR_CONVOLUTION: FilterTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(4\)"),
    (lambda: _convolution_call([1, 3, 5, 5], [6, 1, 3, 3], group_count=2),
     r"^DML_OPERATOR_CONVOLUTION: GroupCount 2 does not divide InputTensor.Sizes\[1\] \(3 input channels\)"),
    (lambda: _convolution_call([1, 4, 5, 5], [6, 1, 3, 3], group_count=4),
     r"^DML_OPERATOR_CONVOLUTION: GroupCount 4 does not divide FilterTensor.Sizes\[0\] \(6 output channels\)"),
    (lambda: _convolution_call([1, 4, 5, 5], [6, 4, 3, 3], group_count=2),
     r"^DML_OPERATOR_CONVOLUTION: FilterTensor.Sizes\[1\] is 4; it must be 2 \(InputTensor.Sizes\[1\] 4 / "
     r"GroupCount 2\)"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], group_count=0),
     r"^DML_OPERATOR_CONVOLUTION: GroupCount is 0; it must be at least 1$"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], strides=[2]),
     r"^DML_OPERATOR_CONVOLUTION: Strides has 1 items \[2\]; it must have DimensionCount \(2\)$"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], strides=[0, 1]),
     r"^DML_OPERATOR_CONVOLUTION: Strides\[0\] is 0; it must be at least 1$"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], dilations=[3, 3]),
     r"^DML_OPERATOR_CONVOLUTION: FilterTensor.Sizes\[2\] is 3, which with Dilations\[0\] 3 spans 7; it must fit "
     r"the padded input, InputTensor.Sizes\[2\] 5 \+ StartPadding \+ EndPadding 0$"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], output_padding=[1, 1]),
     r"^DML_OPERATOR_CONVOLUTION: OutputPadding\[0\] is 1; with Direction FORWARD it must be 0"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], [1, 3, 1, 1]),
     r"^DML_OPERATOR_CONVOLUTION: BiasTensor.Sizes is \[1, 3, 1, 1\]; it must be \[1, 2, 1, 1\]"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], [3]),
     r"^DML_OPERATOR_CONVOLUTION: BiasTensor.Sizes is \[1, 3, 1, 1\]; it must be \[1, 2, 1, 1\]"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], output_sizes=[1, 2, 4, 4]),
     r"^DML_OPERATOR_CONVOLUTION: OutputTensor.Sizes is \[1, 2, 4, 4\]; it must be \[1, 2, 3, 3\]"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], mode="SIDEWAYS"),
     r"^DML_OPERATOR_CONVOLUTION: Mode is 'SIDEWAYS'; it must be one of CONVOLUTION, CROSS_CORRELATION"),
    (lambda: _convolution_call([1, 3, 5, 5], [2, 3, 3, 3], fused_activation=dml.ActivationSoftmaxOperatorDesc()),
     r"^DML_OPERATOR_CONVOLUTION: FusedActivation is DML_OPERATOR_ACTIVATION_SOFTMAX, which "
     r"DML_OPERATOR_CONVOLUTION cannot fuse"),
    (lambda: dml.convolution(graph().input([1, 1, 3, 3], "FLOAT32"), None), r"^dml.convolution: w is None; it must "
     r"be a dml.Expression$"),
])
def test_bad_convolution_calls(call: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        call()
