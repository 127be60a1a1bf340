"""GEMM and CONVOLUTION descriptors (issue 27): the helper methods kernels use, every rule of both pages per feature
level, the fused activations they take, and the owned-weights hook. No kernel runs here (one test runs a cpu
element-wise operator for the hook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import convolution_output_sizes
from strategies import T

import opendml as dml
from opendml.ops.activation_softmax import ActivationSoftmax1OperatorDesc, ActivationSoftmaxOperatorDesc
from opendml.ops.convolution import ConvolutionOperatorDesc
from opendml.ops.gemm import GemmOperatorDesc
from opendml.types import ConvolutionDirection, ConvolutionMode, MatrixTransform

F32, F16, F64, I32 = dml.DataType.FLOAT32, dml.DataType.FLOAT16, dml.DataType.FLOAT64, dml.DataType.INT32
L = dml.FeatureLevel
CLIP = dml.ElementWiseClipOperatorDesc(None, None, None, 0.0, 6.0)  # type: ignore[arg-type]


def gemm(a: list[int], b: list[int], c: list[int] | None, out: list[int], data_type: dml.DataType = F32,
         **kwargs: Any) -> GemmOperatorDesc:
    return GemmOperatorDesc(T(data_type, a), T(data_type, b), None if c is None else T(data_type, c),
                            T(data_type, out), **kwargs)


def conv(x: list[int], w: list[int], bias: list[int] | None, out: list[int], data_type: dml.DataType = F32,
         **kwargs: Any) -> ConvolutionOperatorDesc:
    return ConvolutionOperatorDesc(T(data_type, x), T(data_type, w), None if bias is None else T(data_type, bias),
                                   T(data_type, out), **kwargs)


# -- the helpers kernels use (values worked out by hand) -------------------------------------------------------------

def test_gemm_matrix_sizes_after_the_transposes() -> None:
    assert gemm([2, 3, 4, 5], [2, 3, 5, 6], None, [2, 3, 4, 6]).matrix_sizes() == ((2, 3), 4, 6, 5)
    desc = gemm([5, 4], [6, 5], [4, 6], [4, 6], trans_a="TRANSPOSE", trans_b=MatrixTransform.TRANSPOSE)
    assert desc.matrix_sizes() == ((), 4, 6, 5)
    assert (desc.trans_a, desc.trans_b, desc.alpha, desc.beta) == (MatrixTransform.TRANSPOSE,) * 2 + (1.0, 1.0)
    desc.validate(L.LEVEL_4_0)


def test_convolution_defaults_and_forward_sizes() -> None:
    desc = conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2])
    assert (desc.mode, desc.direction, desc.group_count) == (ConvolutionMode.CROSS_CORRELATION,
                                                             ConvolutionDirection.FORWARD, 1)
    assert (desc.spatial_count, desc.strides, desc.dilations) == (2, (1, 1), (1, 1))
    assert desc.start_padding == desc.end_padding == desc.output_padding == (0, 0)
    assert desc.expected_output_sizes() == (1, 1, 2, 2) and desc.channels_per_group() == (1, 1)
    # [8, 3, 224, 224] 7x7 stride 2 padding 3: (224 + 6 - 7) // 2 + 1 = 112
    desc = conv([8, 3, 224, 224], [64, 3, 7, 7], [1, 64, 1, 1], [8, 64, 112, 112], strides=[2, 2],
                start_padding=[3, 3], end_padding=[3, 3])
    assert desc.expected_output_sizes() == (8, 64, 112, 112)
    desc.validate(L.LEVEL_1_0)
    # depthwise, dilation 2: window 5, (9 + 2 + 2 - 5) // 1 + 1 = 9
    desc = conv([1, 4, 9], [4, 1, 3], None, [1, 4, 9], group_count=4, dilations=[2], start_padding=[2],
                end_padding=[2])
    assert desc.expected_output_sizes() == (1, 4, 9) and desc.channels_per_group() == (1, 1)
    desc.validate(L.LEVEL_4_0)


def test_convolution_backward_sizes_and_channels() -> None:
    # ConvTranspose: filter {Cin 4, Cout/G 3, 2, 2}, G 2 -> Cout 6; (3 - 1) * 2 + 2 - 0 - 0 + 1 = 7
    desc = conv([1, 4, 3, 3], [4, 3, 2, 2], [1, 6, 1, 1], [1, 6, 7, 7], direction="BACKWARD", strides=[2, 2],
                output_padding=[1, 1], group_count=2)
    assert desc.expected_output_sizes() == (1, 6, 7, 7)
    assert desc.channels_per_group() == (2, 3) and desc.is_backward and not desc.flips_filter
    desc.validate(L.LEVEL_1_0)
    # 4x4 stride 2 padding 1: (8 - 1) * 2 + 4 - 2 = 16
    desc = conv([1, 2, 8, 8], [2, 5, 4, 4], None, [1, 5, 16, 16], mode="CONVOLUTION", direction="BACKWARD",
                strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1])
    assert desc.expected_output_sizes() == (1, 5, 16, 16) and desc.flips_filter
    desc.validate(L.LEVEL_1_0)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_convolution_sizes_agree_with_the_reference(data: st.DataObject) -> None:
    """expected_output_sizes and channels_per_group against tests/reference.py's independent formula, on drawn
    descriptors that validate() then accepts."""
    count = data.draw(st.integers(1, 3))
    backward = data.draw(st.booleans())
    groups, cig, cog = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    kernel = [data.draw(st.integers(1, 3)) for _ in range(count)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(count)]
    dilations = [data.draw(st.integers(1, 2)) for _ in range(count)]
    start = [data.draw(st.integers(0, 2)) for _ in range(count)]
    end = [data.draw(st.integers(0, 2)) for _ in range(count)]
    extra = [data.draw(st.integers(0, max(s, d) - 1)) if backward else 0
             for s, d in zip(strides, dilations, strict=True)]
    spatial = [data.draw(st.integers(1, 6)) for _ in range(count)]
    x = [data.draw(st.integers(1, 2)), groups * cig, *spatial]
    w = [groups * cig, cog, *kernel] if backward else [groups * cog, cig, *kernel]
    fields = {"strides": strides, "dilations": dilations, "start_padding": start, "end_padding": end,
              "output_padding": extra}
    expected = convolution_output_sizes(x, w, direction="BACKWARD" if backward else "FORWARD", group_count=groups,
                                        **fields)
    desc = conv(x, w, None, [max(size, 1) for size in expected], direction="BACKWARD" if backward else "FORWARD",
                group_count=groups, **fields)
    assert desc.expected_output_sizes() == tuple(expected)
    if min(expected) >= 1:
        desc.validate(L.LEVEL_4_0)
        assert desc.channels_per_group() == (cig, cog)
    else:
        with pytest.raises(V, match=C + r"(FilterTensor|StartPadding)"):
            desc.validate(L.LEVEL_4_0)


def test_fused_activations_that_are_allowed() -> None:
    for activation, level in ((dml.ActivationReluOperatorDesc(), L.LEVEL_1_0),
                              (dml.ActivationGeluOperatorDesc(), L.LEVEL_5_1),
                              (CLIP, L.LEVEL_6_0),
                              (ActivationSoftmaxOperatorDesc(), L.LEVEL_6_1),
                              (ActivationSoftmax1OperatorDesc(axes=[2, 3]), L.LEVEL_6_1)):
        gemm([1, 1, 2, 3], [1, 1, 3, 4], None, [1, 1, 2, 4], fused_activation=activation).validate(level)
    assert ActivationSoftmaxOperatorDesc().softmax_axes(4) == (3,)
    assert ActivationSoftmax1OperatorDesc(axes=[1, 3]).softmax_axes(4) == (1, 3)
    conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], fused_activation=CLIP).validate(L.LEVEL_6_0)


def test_a_c_broadcast_by_zero_strides_is_valid() -> None:
    c = T(F32, [2, 3], [0, 1])          # one row of 3 for both rows of the output
    GemmOperatorDesc(T(F32, [2, 4]), T(F32, [4, 3]), c, T(F32, [2, 3])).validate(L.LEVEL_4_0)


def test_the_descriptors_are_registered_and_read_from_dml_names() -> None:
    assert dml.OperatorDesc.registry[dml.OperatorType.GEMM] is GemmOperatorDesc
    assert dml.OperatorDesc.registry[dml.OperatorType.CONVOLUTION] is ConvolutionOperatorDesc
    assert (GemmOperatorDesc.KERNEL_MODULE, ConvolutionOperatorDesc.KERNEL_MODULE) == ("gemm", "convolution")
    assert dml.OperatorType.ACTIVATION_SOFTMAX not in dml.OperatorDesc.registry   # fused only
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_CONVOLUTION", {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "FilterTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "Mode": "DML_CONVOLUTION_MODE_CROSS_CORRELATION", "Direction": "DML_CONVOLUTION_DIRECTION_FORWARD",
        "DimensionCount": 2, "Strides": [1, 1], "Dilations": [1, 1], "StartPadding": [0, 0], "EndPadding": [0, 0],
        "OutputPadding": [0, 0], "GroupCount": 1})
    assert isinstance(desc, ConvolutionOperatorDesc) and desc.strides == (1, 1)


# -- every rule, with its message ------------------------------------------------------------------------------------

G = r"DML_OPERATOR_GEMM: "
C = r"DML_OPERATOR_CONVOLUTION: "
V, U = dml.ValidationError, dml.UnsupportedError
A4, B4, O4 = [1, 1, 2, 3], [1, 1, 3, 4], [1, 1, 2, 4]

BAD: list[tuple[str, Callable[[], dml.OperatorDesc], dml.FeatureLevel, type[Exception], str]] = [
    # GEMM: support table (types, ranks per level)
    ("gemm float64", lambda: gemm(A4, B4, None, O4, F64), L.LEVEL_6_4, V,
     G + r"ATensor.DataType FLOAT64 is not supported; at feature level 6_4 .*FLOAT32, FLOAT16"),
    ("gemm int32", lambda: gemm(A4, B4, None, O4, I32), L.LEVEL_6_4, V, G + r"ATensor.DataType INT32 is not supported"),
    ("gemm 2-d at 1_0", lambda: gemm([2, 3], [3, 4], None, [2, 4]), L.LEVEL_3_1, U,
     G + r"ATensor.DimensionCount 2 needs feature level 4_0; the device is at 3_1"),
    ("gemm 5-d", lambda: gemm([1, 1, 1, 2, 3], [1, 1, 1, 3, 4], None, [1, 1, 1, 2, 4]), L.LEVEL_6_4, V,
     G + r"ATensor.DimensionCount 5 is not supported; at feature level 6_4 .*2 to 4"),
    ("gemm mixed types", lambda: GemmOperatorDesc(T(F32, A4), T(F16, B4), None, T(F32, O4)), L.LEVEL_6_4, V,
     G + r"BTensor.DataType is FLOAT16; it must equal ATensor.DataType \(FLOAT32\)"),
    ("gemm mixed ranks", lambda: gemm(A4, [3, 4], None, O4), L.LEVEL_6_4, V,
     G + r"BTensor.DimensionCount is 2; it must equal ATensor.DimensionCount \(4\)"),
    # GEMM: sizes
    ("gemm K", lambda: gemm(A4, [1, 1, 2, 4], None, O4), L.LEVEL_6_4, V,
     G + r"BTensor.Sizes\[2\] is 2; it must equal ATensor.Sizes\[3\] \(3\), the K of both with TransA NONE and "
         r"TransB NONE$"),
    ("gemm K transposed", lambda: gemm(A4, B4, None, O4, trans_a="TRANSPOSE"), L.LEVEL_6_4, V,
     G + r"BTensor.Sizes\[2\] is 3; it must equal ATensor.Sizes\[2\] \(2\), the K of both with TransA TRANSPOSE"),
    ("gemm K of B transposed", lambda: gemm([2, 3], [4, 2], None, [2, 4], trans_b="TRANSPOSE"), L.LEVEL_6_4, V,
     G + r"BTensor.Sizes\[1\] is 2; it must equal ATensor.Sizes\[1\] \(3\), .* TransB TRANSPOSE$"),
    ("gemm output", lambda: gemm(A4, B4, None, [1, 1, 2, 5]), L.LEVEL_6_4, V,
     G + r"OutputTensor.Sizes is \[1, 1, 2, 5\]; it must be \[1, 1, 2, 4\] \(M 2 from ATensor with TransA NONE, "
         r"N 4 from BTensor"),
    ("gemm batch of a", lambda: gemm([1, 1, 2, 3], [2, 1, 3, 4], None, [2, 1, 2, 4]), L.LEVEL_6_4, V,
     G + r"ATensor.Sizes is \[1, 1, 2, 3\]; its leading \(batch\) sizes must equal OutputTensor's \[2, 1\] "
         r"\(broadcast a batch through zero strides\)"),
    ("gemm batch of b", lambda: gemm([2, 1, 2, 3], [1, 1, 3, 4], None, [2, 1, 2, 4]), L.LEVEL_6_4, V,
     G + r"BTensor.Sizes is \[1, 1, 3, 4\]; its leading \(batch\) sizes must equal OutputTensor's \[2, 1\]"),
    ("gemm c broadcast by sizes", lambda: gemm(A4, B4, [1, 1, 1, 4], O4), L.LEVEL_6_4, V,
     G + r"CTensor.Sizes is \[1, 1, 1, 4\]; it must equal OutputTensor.Sizes \[1, 1, 2, 4\] \(broadcast C through "
         r"zero strides\)"),
    ("gemm c type", lambda: GemmOperatorDesc(T(F32, A4), T(F32, B4), T(F16, O4), T(F32, O4)), L.LEVEL_6_4, V,
     G + r"CTensor.DataType is FLOAT16; it must equal ATensor.DataType \(FLOAT32\)"),
    # GEMM: fields and fused activations
    ("gemm trans", lambda: gemm(A4, B4, None, O4, trans_a="FLIP"), L.LEVEL_6_4, V,
     G + r"TransA is 'FLIP'; it must be one of .*TRANSPOSE"),
    ("gemm alpha", lambda: gemm(A4, B4, None, O4, alpha="x"), L.LEVEL_6_4, V, G + r"Alpha is 'x'"),
    ("gemm activation type", lambda: gemm(A4, B4, None, O4, fused_activation="RELU"), L.LEVEL_6_4, V,
     G + r"FusedActivation is 'RELU'; it must be an operator descriptor"),
    ("gemm clip below 6_0", lambda: gemm(A4, B4, None, O4, fused_activation=CLIP), L.LEVEL_5_2, U,
     G + r"FusedActivation \(DML_OPERATOR_ELEMENT_WISE_CLIP\) needs feature level 6_0; the device is at 5_2"),
    ("gemm softmax below 6_1", lambda: gemm(A4, B4, None, O4, fused_activation=ActivationSoftmaxOperatorDesc()),
     L.LEVEL_6_0, U, G + r"FusedActivation \(DML_OPERATOR_ACTIVATION_SOFTMAX\) needs feature level 6_1; the device "
                         r"is at 6_0"),
    ("gemm softmax1 below 6_1", lambda: gemm(A4, B4, None, O4,
                                             fused_activation=ActivationSoftmax1OperatorDesc(axes=[3])),
     L.LEVEL_5_0, U, G + r"FusedActivation \(DML_OPERATOR_ACTIVATION_SOFTMAX1\) needs feature level 6_1"),
    ("gemm softmax1 axis", lambda: gemm(A4, B4, None, O4, fused_activation=ActivationSoftmax1OperatorDesc(axes=[4])),
     L.LEVEL_6_4, V, G + r"FusedActivation.Axes\[0\] is 4; it must be in \[0, 3\] for OutputTensor of 4 dimensions"),
    ("gemm softmax1 no axes", lambda: gemm(A4, B4, None, O4, fused_activation=ActivationSoftmax1OperatorDesc()),
     L.LEVEL_6_4, V, G + r"FusedActivation.Axes is empty; it must name at least one axis of OutputTensor"),
    ("gemm softmax1 twice", lambda: gemm(A4, B4, None, O4,
                                         fused_activation=ActivationSoftmax1OperatorDesc(axes=[3, 3])),
     L.LEVEL_6_4, V, G + r"FusedActivation.Axes\[1\] is 3, which appears twice"),
    ("gemm softmax with tensors", lambda: gemm(A4, B4, None, O4, fused_activation=ActivationSoftmaxOperatorDesc(
        input_tensor=T(F32, O4), output_tensor=T(F32, O4))), L.LEVEL_6_4, V,
     G + r"FusedActivation.InputTensor is set; a fused activation's InputTensor and OutputTensor must be absent"),
    ("gemm gelu below 5_1", lambda: gemm(A4, B4, None, O4, fused_activation=dml.ActivationGeluOperatorDesc()),
     L.LEVEL_5_0, U, G + r"FusedActivation \(DML_OPERATOR_ACTIVATION_GELU\) needs feature level 5_1; the device is "
                         r"at 5_0"),
    ("gemm activation with tensors", lambda: gemm(A4, B4, None, O4, fused_activation=dml.ActivationReluOperatorDesc(
        input_tensor=T(F32, O4), output_tensor=T(F32, O4))), L.LEVEL_6_4, V,
     G + r"FusedActivation.InputTensor is set; a fused activation's InputTensor and OutputTensor must be absent"),
    ("gemm softplus steepness", lambda: gemm(A4, B4, None, O4,
                                             fused_activation=dml.ActivationSoftplusOperatorDesc(0.5)),
     L.LEVEL_6_3, U, G + r"FusedActivation.Steepness 0.5 needs feature level 6_4"),
    ("gemm not fusable", lambda: gemm(A4, B4, None, O4, fused_activation=dml.ElementWiseAddOperatorDesc(
        T(F32, O4), T(F32, O4), T(F32, O4))), L.LEVEL_6_4, V,
     G + r"FusedActivation is DML_OPERATOR_ELEMENT_WISE_ADD, which DML_OPERATOR_GEMM cannot fuse; it must be one of "
         r".*ACTIVATION_GELU, DML_OPERATOR_ELEMENT_WISE_CLIP \(from feature level 6_0\), "
         r"DML_OPERATOR_ACTIVATION_SOFTMAX or DML_OPERATOR_ACTIVATION_SOFTMAX1 \(from feature level 6_1\)"),
    ("gemm clip with scale bias", lambda: gemm(A4, B4, None, O4, fused_activation=dml.ElementWiseClipOperatorDesc(
        None, None, dml.ScaleBias(2.0, 0.0), 0.0, 1.0)), L.LEVEL_6_4, V,  # type: ignore[arg-type]
     G + r"FusedActivation.ScaleBias is set; a fused ELEMENT_WISE_CLIP takes no ScaleBias"),
    ("gemm output owned", lambda: GemmOperatorDesc(T(F32, A4), T(F32, B4), None,
                                                   T(F32, O4, flags=dml.TensorFlags.OWNED_BY_DML)), L.LEVEL_6_4, V,
     G + r"OutputTensor.Flags is OWNED_BY_DML"),
    # CONVOLUTION: support table
    ("conv float64", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], F64), L.LEVEL_6_4, V,
     C + r"InputTensor.DataType FLOAT64 is not supported; at feature level 6_4"),
    ("conv 1-d below 4_0", lambda: conv([1, 1, 3], [1, 1, 2], None, [1, 1, 2]), L.LEVEL_3_1, U,
     C + r"InputTensor.DimensionCount 3 needs feature level 4_0; the device is at 3_1"),
    ("conv 6-d", lambda: conv([1, 1, 2, 2, 2, 2], [1, 1, 1, 1, 1, 1], None, [1, 1, 2, 2, 2, 2]), L.LEVEL_6_4, V,
     C + r"InputTensor.DimensionCount 6 is not supported; at feature level 6_4 .*3 to 5"),
    ("conv mixed types", lambda: ConvolutionOperatorDesc(T(F32, [1, 1, 3, 3]), T(F16, [1, 1, 2, 2]), None,
                                                         T(F32, [1, 1, 2, 2])), L.LEVEL_6_4, V,
     C + r"FilterTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    ("conv bias rank", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1], [1, 1, 2, 2]), L.LEVEL_6_4, V,
     C + r"BiasTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(4\)"),
    # CONVOLUTION: DimensionCount and the arrays
    ("conv dimension count", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], dimension_count=3,
                                          strides=[1, 1, 1]), L.LEVEL_6_4, V,
     C + r"DimensionCount is 3; it must be 2 \(InputTensor.DimensionCount 4 - 2: the spatial dimensions\)"),
    ("conv huge dimension count", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2],
                                               dimension_count=2**32 - 1), L.LEVEL_6_4, V,
     C + r"DimensionCount is 4294967295; it must be 2"),
    ("conv strides length", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], strides=[1]),
     L.LEVEL_6_4, V, C + r"Strides has 1 items \[1\]; it must have DimensionCount \(2\)"),
    ("conv output padding length", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2],
                                                output_padding=[0, 0, 0]), L.LEVEL_6_4, V,
     C + r"OutputPadding has 3 items \[0, 0, 0\]; it must have DimensionCount \(2\)"),
    ("conv stride 0", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], strides=[1, 0]), L.LEVEL_6_4, V,
     C + r"Strides\[1\] is 0; it must be at least 1"),
    ("conv dilation 0", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], dilations=[0, 1]),
     L.LEVEL_6_4, V, C + r"Dilations\[0\] is 0; it must be at least 1"),
    ("conv negative padding", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], start_padding=[-1, 0]),
     L.LEVEL_6_4, V, C + r"StartPadding\[0\] is -1"),
    ("conv strides not a list", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], strides=2),
     L.LEVEL_6_4, V, C + r"Strides is 2; it must be a list of integers"),
    ("conv mode", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], mode=7), L.LEVEL_6_4, V,
     C + r"Mode is 7; it must be one of"),
    ("conv direction", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], direction="UP"), L.LEVEL_6_4, V,
     C + r"Direction is 'UP'; it must be one of"),
    # CONVOLUTION: groups and channels
    ("conv group 0", lambda: conv([1, 2, 3, 3], [2, 2, 2, 2], None, [1, 2, 2, 2], group_count=0), L.LEVEL_6_4, V,
     C + r"GroupCount is 0; it must be at least 1"),
    ("conv group divides input", lambda: conv([1, 3, 3, 3], [2, 1, 2, 2], None, [1, 2, 2, 2], group_count=2),
     L.LEVEL_6_4, V, C + r"GroupCount 2 does not divide InputTensor.Sizes\[1\] \(3 input channels\)"),
    ("conv group divides output", lambda: conv([1, 4, 3, 3], [3, 2, 2, 2], None, [1, 3, 2, 2], group_count=2),
     L.LEVEL_6_4, V, C + r"GroupCount 2 does not divide FilterTensor.Sizes\[0\] \(3 output channels\)"),
    ("conv filter channels", lambda: conv([1, 4, 3, 3], [2, 4, 2, 2], None, [1, 2, 2, 2], group_count=2),
     L.LEVEL_6_4, V, C + r"FilterTensor.Sizes\[1\] is 4; it must be 2 \(InputTensor.Sizes\[1\] 4 / GroupCount 2\), "
                         r"the filter being \{output channels"),
    ("conv backward filter", lambda: conv([1, 4, 3, 3], [2, 3, 2, 2], None, [1, 6, 4, 4], direction="BACKWARD",
                                          group_count=2), L.LEVEL_6_4, V,
     C + r"FilterTensor.Sizes\[0\] is 2; with Direction BACKWARD it must equal InputTensor.Sizes\[1\] \(4\), the "
         r"filter being \{input channels"),
    # CONVOLUTION: spatial sizes, paddings
    ("conv output sizes", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 3, 3]), L.LEVEL_6_4, V,
     C + r"OutputTensor.Sizes is \[1, 1, 3, 3\]; it must be \[1, 1, 2, 2\] \(N, FilterTensor.Sizes\[0\], then "
         r"\(in \+ StartPadding"),
    ("conv output channels", lambda: conv([1, 1, 3, 3], [2, 1, 2, 2], None, [1, 1, 2, 2]), L.LEVEL_6_4, V,
     C + r"OutputTensor.Sizes is \[1, 1, 2, 2\]; it must be \[1, 2, 2, 2\]"),
    ("conv backward output", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 7, 7], direction="BACKWARD",
                                          strides=[2, 2]), L.LEVEL_6_4, V,
     C + r"OutputTensor.Sizes is \[1, 1, 7, 7\]; it must be \[1, 1, 6, 6\] \(N, GroupCount \* FilterTensor.Sizes"
         r"\[1\], then \(in - 1\) \* Strides"),
    ("conv window too large", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 1, 1], dilations=[3, 1]),
     L.LEVEL_6_4, V, C + r"FilterTensor.Sizes\[2\] is 2, which with Dilations\[0\] 3 spans 4; it must fit the padded "
                         r"input, InputTensor.Sizes\[2\] 3 \+ StartPadding \+ EndPadding 0"),
    ("conv backward padding", lambda: conv([1, 1, 1, 1], [1, 1, 1, 1], None, [1, 1, 1, 1], direction="BACKWARD",
                                           start_padding=[1, 0]), L.LEVEL_6_4, V,
     C + r"StartPadding\[0\] is 1 and EndPadding\[0\] 0; with Direction BACKWARD their sum must be less than .* = 1 "
         r"on spatial axis 0"),
    ("conv output padding forward", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2],
                                                 output_padding=[1, 0], strides=[2, 1]), L.LEVEL_6_4, V,
     C + r"OutputPadding\[0\] is 1; with Direction FORWARD it must be 0"),
    ("conv output padding stride", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 7, 6],
                                                direction="BACKWARD", strides=[2, 2], output_padding=[2, 1]),
     L.LEVEL_6_4, V, C + r"OutputPadding\[0\] is 2; it must be less than Strides\[0\] \(2\) or Dilations\[0\] \(1\)"),
    ("conv bias sizes", lambda: conv([1, 1, 3, 3], [2, 1, 2, 2], [1, 1, 1, 1], [1, 2, 2, 2]), L.LEVEL_6_4, V,
     C + r"BiasTensor.Sizes is \[1, 1, 1, 1\]; it must be \[1, 2, 1, 1\] \(one value per output channel\)"),
    # CONVOLUTION: fused activations
    ("conv clip below 6_0", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2], fused_activation=CLIP),
     L.LEVEL_5_2, U, C + r"FusedActivation \(DML_OPERATOR_ELEMENT_WISE_CLIP\) needs feature level 6_0"),
    ("conv softmax", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2],
                                  fused_activation=ActivationSoftmaxOperatorDesc()), L.LEVEL_6_4, V,
     C + r"FusedActivation is DML_OPERATOR_ACTIVATION_SOFTMAX, which DML_OPERATOR_CONVOLUTION cannot fuse; it must "
         r"be one of .*ELEMENT_WISE_CLIP \(from feature level 6_0\)$"),
    ("conv celu alpha 0", lambda: conv([1, 1, 3, 3], [1, 1, 2, 2], None, [1, 1, 2, 2],
                                       fused_activation=dml.ActivationCeluOperatorDesc(0.0)), L.LEVEL_6_4, V,
     C + r"FusedActivation.Alpha is 0; it must be nonzero"),
    ("conv input tensor", lambda: ConvolutionOperatorDesc([1, 1, 3, 3], T(F32, [1, 1, 2, 2]), None,  # type: ignore
                                                          T(F32, [1, 1, 2, 2])), L.LEVEL_6_4, V,
     C + r"InputTensor is \[1, 1, 3, 3\]; it must be a TensorDesc"),
]


@pytest.mark.parametrize(("make", "level", "error", "message"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_bad_descriptors_are_refused_with_the_rule(make: Callable[[], dml.OperatorDesc], level: dml.FeatureLevel,
                                                   error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as caught:
        make().validate(level)
    # the JSON reader places a message at the field it starts with, splitting at the first "): " (model/descs.py)
    assert "): " not in str(caught.value)


def test_a_fused_clip_or_softmax_is_no_operator_of_its_own() -> None:
    with pytest.raises(V, match=r"DML_OPERATOR_ELEMENT_WISE_CLIP: InputTensor and OutputTensor are absent \(None\); "
                                r"only a FusedActivation \(of CONVOLUTION or GEMM\) leaves them out"):
        CLIP.validate(L.LEVEL_6_4)
    with pytest.raises(U, match=r"DML_OPERATOR_ACTIVATION_SOFTMAX1 is not implemented as a standalone operator; "
                                r"opendml implements it as GEMM's FusedActivation only \(feature level 6_1\)"):
        ActivationSoftmax1OperatorDesc(axes=[0], input_tensor=T(F32, [2]), output_tensor=T(F32, [2])).validate(
            L.LEVEL_6_4)
    with pytest.raises(V, match=r"DML_OPERATOR_ELEMENT_WISE_CLIP: OutputTensor is None; it must be a TensorDesc"):
        dml.ElementWiseClipOperatorDesc(T(F32, [2]), None, None, 0.0, 1.0)  # type: ignore[arg-type]


def test_the_support_tables_are_the_pages() -> None:
    gemm_rows = {row.level: row.tensors["ATensor"] for row in GemmOperatorDesc.support_tables()[""]}
    assert {level: (s.min_rank, s.max_rank, s.data_types) for level, s in gemm_rows.items()} == {
        L.LEVEL_1_0: (4, 4, (F32, F16)), L.LEVEL_4_0: (2, 4, (F32, F16))}
    conv_rows = {row.level: row.tensors["FilterTensor"] for row in ConvolutionOperatorDesc.support_tables()[""]}
    assert {level: (s.min_rank, s.max_rank, s.data_types) for level, s in conv_rows.items()} == {
        L.LEVEL_1_0: (4, 5, (F32, F16)), L.LEVEL_4_0: (3, 5, (F32, F16))}


# -- owned weights: the kernel's initialize hook ---------------------------------------------------------------------

def test_the_kernel_initialize_hook_sees_the_owned_copies_once(monkeypatch: pytest.MonkeyPatch) -> None:
    device = dml.Device(feature_level="6_4")
    seen: list[dict[int, Any]] = []
    calls: list[list[Any]] = []
    compile_kernel = device.backend.compile

    def compile_with_hook(desc: dml.OperatorDesc, flags: dml.ExecutionFlags, debug: bool) -> Any:
        inner = compile_kernel(desc, flags, debug)

        class Hooked:
            def __call__(self, inputs: list[Any], outputs: list[Any]) -> None:
                calls.append(list(inputs))
                inner(inputs, outputs)

            def initialize(self, owned: dict[int, Any]) -> None:
                seen.append(owned)

        return Hooked()

    monkeypatch.setattr(device.backend, "compile", compile_with_hook)
    owned = T(F32, [3], flags=dml.TensorFlags.OWNED_BY_DML)
    desc = dml.ElementWiseAddOperatorDesc(T(F32, [3]), owned, T(F32, [3]))
    compiled = device.compile_operator(device.create_operator(desc))
    weights = np.array([10, 20, 30], np.float32)
    compiled.initialize([None, dml.Binding(weights)])
    weights[:] = 0                                  # the hook and the kernel see the copy
    assert len(seen) == 1 and list(seen[0]) == [1]
    assert np.asarray(seen[0][1]).tolist() == [10, 20, 30]
    out = np.zeros(3, np.float32)
    compiled.execute([dml.Binding(np.array([1, 2, 3], np.float32)), None], [dml.Binding(out)])
    assert out.tolist() == [11, 22, 33]
    assert calls[0][1] is seen[0][1]                # the same view object at every later call
    assert len(seen) == 1


def test_the_background_kernel_forwards_the_hook_to_both_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    from opendml.backends.cpu import background

    class Stub:
        def __init__(self, name: str) -> None:
            self.name, self.owned = name, None

        def __call__(self, inputs: list[Any], outputs: list[Any]) -> None:
            outputs[0][:] = inputs[0]

        def initialize(self, owned: dict[int, Any]) -> None:
            self.owned = owned   # type: ignore[assignment]

    class Compiled:
        def submit(self, job: object) -> None: ...

        def state(self, job: object) -> str:
            return "compiled"

    monkeypatch.setattr(background, "COMPILER", Compiled())
    first, numba = Stub("numpy"), Stub("numba")
    desc = dml.ElementWiseIdentityOperatorDesc(T(F32, [2]), T(F32, [2]))
    kernel = background.BackgroundKernel(first, lambda: numba, "element_wise", desc, dml.ExecutionFlags.NONE, False)
    owned = {0: np.array([1, 2], np.float32)}
    kernel.initialize(owned)
    assert first.owned is owned and numba.owned is None
    out = np.zeros(2, np.float32)
    kernel([owned[0]], [out])                      # numba's kernel takes over and gets the owned copies first
    assert numba.owned is owned and out.tolist() == [1, 2]
