"""MEAN_VARIANCE_NORMALIZATION (version 0: CrossChannel instead of Axes): goldens worked out by hand (the page has
no numeric example), the page's support table at every level, the bad-input table with message regexes, and
hypothesis properties through raw buffers against ``reference_normalized`` over the axes CrossChannel stands for
({2, 3}, or {1, 2, 3}), with MEAN_VARIANCE_NORMALIZATION1's accuracy bounds (``check_result``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from strategies import (
    OUTPUT_STRIDE_KINDS,
    T,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    read_buffer,
    sentinel_bytes,
    shapes,
    strides_for,
    tensor_size_in_bytes,
)
from test_mean_variance_normalization1 import (
    ACTIVATION_CLASSES,
    NUMPY_DTYPES,
    MvnCase,
    activation_choices,
    check_result,
    values_for,
)

import opendml as dml
from opendml.ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
MVN = MeanVarianceNormalizationOperatorDesc
LEVELS = [str(level) for level in dml.FeatureLevel]
PREFIX = r"DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION: "


def compile_mvn(desc: dml.OperatorDesc, level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    return device.compile_operator(device.create_operator(desc))


# -- goldens (worked out by hand) ----------------------------------------------------------------------------------

X_CHANNELS = np.array([[[[0, 2]], [[4, 6]]]], np.float32)   # [1, 2, 1, 2]: channel 0 = {0, 2}, channel 1 = {4, 6}


def _golden(x: np.ndarray, cross_channel: bool, normalize: bool, epsilon: float,
            activation: dml.OperatorDesc | None = None, level: str = "6_4", scale: np.ndarray | None = None,
            bias: np.ndarray | None = None, data_type: dml.DataType = F32) -> np.ndarray:
    dtype = data_type.numpy_dtype
    desc = MVN(T(data_type, list(x.shape)), None if scale is None else T(data_type, list(scale.shape)),
               None if bias is None else T(data_type, list(bias.shape)), T(data_type, list(x.shape)), cross_channel,
               normalize, epsilon, activation)
    (out,) = compile_mvn(desc, level)(x.astype(dtype), None if scale is None else scale.astype(dtype),
                                      None if bias is None else bias.astype(dtype))
    assert out.dtype == dtype and out.shape == x.shape
    return out


def test_golden_cross_channel_false_normalizes_each_channel() -> None:
    # Over {Height, Width}, per channel: means 1 and 5, deviations -1, 1, variance 1; Epsilon 3: sqrt(4) = 2.
    out = _golden(X_CHANNELS, False, True, 3.0, level="1_0")
    np.testing.assert_array_equal(out.ravel(), [-0.5, 0.5, -0.5, 0.5])


def test_golden_cross_channel_true_normalizes_channels_together() -> None:
    # Over {ChannelCount, Height, Width}: mean (0 + 2 + 4 + 6) / 4 = 3, deviations -3, -1, 1, 3, variance
    # (9 + 1 + 1 + 9) / 4 = 5; Epsilon 4: sqrt(9) = 3 -> -1, -1/3, 1/3, 1.
    out = _golden(X_CHANNELS, True, True, 4.0, level="1_0")
    np.testing.assert_allclose(out.ravel(), [-1, -1 / 3, 1 / 3, 1], rtol=1e-7)


def test_golden_normalize_variance_false() -> None:
    # Without the division: the deviations; per channel -1, 1, -1, 1; across channels -3, -1, 1, 3.
    np.testing.assert_array_equal(_golden(X_CHANNELS, False, False, 3.0).ravel(), [-1, 1, -1, 1])
    np.testing.assert_array_equal(_golden(X_CHANNELS, True, False, 3.0).ravel(), [-3, -1, 1, 3])


def test_golden_batches_are_independent_with_cross_channel() -> None:
    # Batch 0 as above; batch 1 = {16, 14, 12, 10}: its own mean 13, deviations 3, 1, -1, -3, variance 5;
    # Epsilon 4: 1, 1/3, -1/3, -1 (a mean over both batches, 8, would give other values).
    x = np.array([[[[0, 2]], [[4, 6]]], [[[16, 14]], [[12, 10]]]], np.float32)   # [2, 2, 1, 2]
    out = _golden(x, True, True, 4.0)
    np.testing.assert_allclose(out.reshape(2, 4), [[-1, -1 / 3, 1 / 3, 1], [1, 1 / 3, -1 / 3, -1]], rtol=1e-7)


def test_golden_scale_and_bias_broadcast_in_any_dimension_at_1_0() -> None:
    # The page lets any dimension of Scale and Bias be 1 (MVN1 needs 4_0 for a broadcast channel).
    # Normalized per channel: [[-0.5, 0.5], [-0.5, 0.5]]. Scale [1, 2, 1, 1] = {2, 4} per channel; Bias
    # [1, 1, 1, 2] = {10, 20} along the width: channel 0: 2 * -0.5 + 10 = 9, 2 * 0.5 + 20 = 21; channel 1:
    # 4 * -0.5 + 10 = 8, 4 * 0.5 + 20 = 22.
    scale = np.array([2, 4], np.float32).reshape(1, 2, 1, 1)
    bias = np.array([10, 20], np.float32).reshape(1, 1, 1, 2)
    out = _golden(X_CHANNELS, False, True, 3.0, scale=scale, bias=bias, level="1_0")
    np.testing.assert_array_equal(out.ravel(), [9, 21, 8, 22])


def test_golden_scale_alone_and_bias_alone_from_5_2() -> None:
    # Absent Bias acts as 0, absent Scale as 1: Scale {2, 4} per channel: -1, 1, -2, 2; Bias {10, 20} per channel:
    # 9.5, 10.5, 19.5, 20.5.
    scale = np.array([2, 4], np.float32).reshape(1, 2, 1, 1)
    bias = np.array([10, 20], np.float32).reshape(1, 2, 1, 1)
    np.testing.assert_array_equal(_golden(X_CHANNELS, False, True, 3.0, scale=scale, level="5_2").ravel(),
                                  [-1, 1, -2, 2])
    np.testing.assert_array_equal(_golden(X_CHANNELS, False, True, 3.0, bias=bias, level="5_2").ravel(),
                                  [9.5, 10.5, 19.5, 20.5])


def test_golden_float16() -> None:
    # Across channels, Epsilon 4: -1, -1/3, 1/3, 1 computed in FLOAT32 and rounded once: 1/3 -> 0.333251953125.
    out = _golden(X_CHANNELS, True, True, 4.0, data_type=F16)
    np.testing.assert_array_equal(out.ravel(), np.array([-1, -1 / 3, 1 / 3, 1], np.float16))


@pytest.mark.parametrize(("activation", "level", "expected"), [
    # max(0, x) of -1, -1/3, 1/3, 1
    (dml.ActivationReluOperatorDesc(), "1_0", [0, 0, 1 / 3, 1]),
    # 2x + 1
    (dml.ActivationLinearOperatorDesc(alpha=2.0, beta=1.0), "1_0", [-1, 1 / 3, 5 / 3, 3]),
    # |x| <= 0.5 -> 0; -1 + 0.25, 1 - 0.25
    (dml.ActivationShrinkOperatorDesc(bias=0.25, threshold=0.5), "2_0", [-0.75, 0, 0, 0.75]),
    # x Phi(x): Phi(1) = 0.8413447461, Phi(1/3) = 0.6305586598 -> -0.1586552539, -0.1231471134 (= -(1/3) *
    # 0.3694413402), 0.2101862199, 0.8413447461
    (dml.ActivationGeluOperatorDesc(), "5_1", [-0.1586552539, -0.1231471134, 0.2101862199, 0.8413447461]),
], ids=["RELU", "LINEAR", "SHRINK", "GELU"])
def test_golden_fused_activation(activation: dml.OperatorDesc, level: str, expected: list[float]) -> None:
    out = _golden(X_CHANNELS, True, True, 4.0, activation, level=level)
    np.testing.assert_allclose(out.ravel(), expected, rtol=4e-7, atol=1e-7)


def test_golden_constant_input_gives_bias_and_epsilon_zero_gives_nan() -> None:
    # A constant group has deviations 0: 0 / sqrt(0 + 1e-5) * Scale + Bias = Bias; with Epsilon 0 it is 0 / 0.
    bias = np.array([7, -3], np.float32).reshape(1, 2, 1, 1)
    scale = np.ones((1, 2, 1, 1), np.float32)
    x = np.full((1, 2, 2, 2), 5, np.float32)
    out = _golden(x, False, True, 1e-5, scale=scale, bias=bias)
    np.testing.assert_array_equal(out.ravel(), [7, 7, 7, 7, -3, -3, -3, -3])
    assert np.isnan(_golden(x, True, True, 0.0)).all()


# -- the page's support table, at every level ------------------------------------------------------------------------

ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name not in ("UNKNOWN", "UINT4", "INT4")]
# Copied from the page: one table, from the operator's level 1_0: exactly 4 dimensions, FLOAT32 and FLOAT16.
PAGE_TYPES = ["FLOAT32", "FLOAT16"]


@pytest.mark.parametrize("level", LEVELS)
def test_every_row_of_the_page(level: str) -> None:
    device = dml.Device(feature_level=level)
    for data_type in ALL_TYPES:
        for rank in (1, 2, 3, 4, 5, 8):
            tensor = T(data_type, [2] * rank)
            desc = MVN(tensor, tensor, tensor, tensor, rank % 2 == 0, True, 1e-5)
            if data_type in PAGE_TYPES and rank == 4:
                device.create_operator(desc)
            elif data_type in PAGE_TYPES:
                with pytest.raises(dml.ValidationError, match=rf"InputTensor.DimensionCount {rank} is not supported; "
                                                              rf"at feature level {level} it must be exactly 4"):
                    device.create_operator(desc)
            else:
                with pytest.raises(dml.ValidationError, match=rf"InputTensor.DataType {data_type} is not supported; "
                                                              rf"at feature level {level} it must be one of FLOAT32, "
                                                              rf"FLOAT16"):
                    device.create_operator(desc)


# -- bad descriptors ---------------------------------------------------------------------------------------------

X4 = T(F32, [2, 3, 4, 5])
C3 = T(F32, [1, 3, 1, 1])


@dataclass(frozen=True)
class Bad:
    name: str
    build: Callable[[], dml.OperatorDesc]
    level: str
    error: type[Exception]
    message: str


def mvn(x: dml.TensorDesc = X4, scale: dml.TensorDesc | None = C3, bias: dml.TensorDesc | None = C3,
        y: dml.TensorDesc | None = None, cross_channel: bool = True, activation: dml.OperatorDesc | None = None,
        ) -> Callable[[], dml.OperatorDesc]:
    return lambda: MVN(x, scale, bias, x if y is None else y, cross_channel, True, 1e-5, activation)


BAD_DESCRIPTORS = [
    Bad("CrossChannel with a 3-D input", mvn(x=T(F32, [3, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.DimensionCount 3 is not supported; at feature level 6_4 it must be exactly 4"),
    Bad("CrossChannel FALSE with a 5-D input", mvn(x=T(F32, [2, 3, 4, 5, 6]), scale=None, bias=None,
                                                   cross_channel=False), "6_4", dml.ValidationError,
        r"InputTensor.DimensionCount 5 is not supported; at feature level 6_4 it must be exactly 4"),
    Bad("a 2-D input at 1_0", mvn(x=T(F32, [4, 5]), scale=None, bias=None), "1_0", dml.ValidationError,
        r"InputTensor.DimensionCount 2 is not supported; at feature level 1_0 it must be exactly 4"),
    Bad("a 3-D Scale", mvn(scale=T(F32, [3, 1, 1])), "6_4", dml.ValidationError,
        r"ScaleTensor.DimensionCount 3 is not supported; at feature level 6_4 it must be exactly 4"),
    Bad("a 5-D Output", mvn(y=T(F32, [2, 3, 4, 5, 1])), "6_4", dml.ValidationError,
        r"OutputTensor.DimensionCount 5 is not supported"),
    Bad("INT32 input", mvn(x=T("INT32", [2, 3, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.DataType INT32 is not supported; at feature level 6_4 it must be one of FLOAT32, FLOAT16"),
    Bad("FLOAT64 input", mvn(x=T("FLOAT64", [2, 3, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.DataType FLOAT64 is not supported"),
    Bad("mismatched Scale type", mvn(scale=T(F16, [1, 3, 1, 1])), "6_4", dml.ValidationError,
        r"ScaleTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    Bad("mismatched Bias type", mvn(bias=T(F16, [1, 3, 1, 1])), "1_0", dml.ValidationError,
        r"BiasTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    Bad("mismatched Output type", mvn(y=T(F16, [2, 3, 4, 5])), "6_4", dml.ValidationError,
        r"OutputTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    Bad("Output sizes differ", mvn(y=T(F32, [2, 3, 5, 4])), "6_4", dml.ValidationError,
        r"OutputTensor.Sizes is \[2, 3, 5, 4\]; it must equal InputTensor.Sizes \[2, 3, 4, 5\]"),
    Bad("Scale without Bias below 5_2", mvn(bias=None), "5_1", dml.UnsupportedError,
        r"ScaleTensor without BiasTensor needs feature level 5_2; the device is at 5_1"),
    Bad("Bias without Scale below 5_2", mvn(scale=None), "1_0", dml.UnsupportedError,
        r"BiasTensor without ScaleTensor needs feature level 5_2; the device is at 1_0"),
    Bad("Scale size neither the input's nor 1", mvn(scale=T(F32, [1, 3, 2, 1])), "6_4", dml.ValidationError,
        r"ScaleTensor.Sizes\[2\] is 2; it must be 4 \(InputTensor.Sizes\[2\]\) or 1"),
    Bad("Bias size neither the input's nor 1", mvn(bias=T(F32, [1, 3, 1, 7])), "1_0", dml.ValidationError,
        r"BiasTensor.Sizes\[3\] is 7; it must be 5 \(InputTensor.Sizes\[3\]\) or 1"),
    Bad("a non-activation as FusedActivation",
        mvn(activation=dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), [0])), "6_4", dml.ValidationError,
        r"FusedActivation is DML_OPERATOR_REDUCE \(Function SUM\); it must be one of "
        r"DML_OPERATOR_ACTIVATION_LINEAR, .*DML_OPERATOR_ACTIVATION_GELU"),
    Bad("SHRINK at 1_0", mvn(activation=dml.ActivationShrinkOperatorDesc()), "1_0", dml.UnsupportedError,
        r"FusedActivation \(DML_OPERATOR_ACTIVATION_SHRINK\) needs feature level 2_0; the device is at 1_0"),
    Bad("CELU at 2_1", mvn(activation=dml.ActivationCeluOperatorDesc()), "2_1", dml.UnsupportedError,
        r"FusedActivation \(DML_OPERATOR_ACTIVATION_CELU\) needs feature level 3_0; the device is at 2_1"),
    Bad("GELU at 5_0", mvn(activation=dml.ActivationGeluOperatorDesc()), "5_0", dml.UnsupportedError,
        r"FusedActivation \(DML_OPERATOR_ACTIVATION_GELU\) needs feature level 5_1; the device is at 5_0"),
    Bad("SOFTPLUS Steepness 0.5 at 6_3", mvn(activation=dml.ActivationSoftplusOperatorDesc(0.5)), "6_3",
        dml.UnsupportedError, r"FusedActivation.Steepness 0.5 needs feature level 6_4 \(below it Steepness must be "
                              r"at least 1\); the device is at 6_3"),
    Bad("CELU Alpha 0", mvn(activation=dml.ActivationCeluOperatorDesc(0.0)), "6_4", dml.ValidationError,
        r"FusedActivation.Alpha is 0; it must be nonzero"),
    Bad("an activation with its InputTensor set",
        mvn(activation=dml.ActivationReluOperatorDesc(input_tensor=X4)), "6_4", dml.ValidationError,
        r"FusedActivation.InputTensor is set; a fused activation's InputTensor and OutputTensor must be absent"),
    Bad("overlapping output strides", mvn(y=T(F32, [2, 3, 4, 5], [0, 20, 5, 1])), "6_4", dml.ValidationError,
        r"OutputTensor.Strides \[0, 20, 5, 1\] map two elements"),
    Bad("a zero size", mvn(x=T(F32, [2, 0, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.Sizes\[1\] is 0; every size must be at least 1"),
    Bad("Scale total size too small", mvn(scale=T(F32, [1, 3, 1, 1], total_tensor_size_in_bytes=8)), "6_4",
        dml.ValidationError, r"ScaleTensor.TotalTensorSizeInBytes is 8; it must be at least 12"),
]


@pytest.mark.parametrize("case", BAD_DESCRIPTORS, ids=[case.name for case in BAD_DESCRIPTORS])
def test_bad_descriptors(case: Bad) -> None:
    with pytest.raises(case.error, match=PREFIX + case.message):
        dml.Device(feature_level=case.level).create_operator(case.build())


def test_the_same_descriptors_pass_where_the_rules_allow() -> None:
    # Every UnsupportedError above names a level; at that level the descriptor is accepted.
    for case in BAD_DESCRIPTORS:
        if case.error is dml.UnsupportedError:
            needed = case.message.split("needs feature level ")[1][:3]
            dml.Device(feature_level=needed).create_operator(case.build())
    # A Scale broadcast over the channel at 1_0 (MVN1 refuses it below 4_0).
    dml.Device(feature_level="1_0").create_operator(mvn(scale=T(F32, [1, 1, 1, 1]), bias=T(F32, [2, 1, 4, 1]))())


@pytest.mark.parametrize(("build", "message"), [
    (lambda: MVN([2, 2], None, None, X4, True, True, 1e-5), r"InputTensor is \[2, 2\]; it must be a TensorDesc$"),
    (lambda: MVN(X4, "scale", None, X4, True, True, 1e-5), r"ScaleTensor is 'scale'; it must be a TensorDesc$"),
    (lambda: MVN(X4, None, None, None, True, True, 1e-5), r"OutputTensor is None; it must be a TensorDesc$"),
    (lambda: MVN(X4, None, None, X4, "yes", True, 1e-5), r"CrossChannel is 'yes'; it must be a BOOL"),
    (lambda: MVN(X4, None, None, X4, 2, True, 1e-5), r"CrossChannel is 2; it must be a BOOL"),
    (lambda: MVN(X4, None, None, X4, True, None, 1e-5), r"NormalizeVariance is None; it must be a BOOL"),
    (lambda: MVN(X4, None, None, X4, True, True, math.nan), r"Epsilon is nan; it must be a finite FLOAT"),
    (lambda: MVN(X4, None, None, X4, True, True, "1e-5"), r"Epsilon is '1e-5'; it must be a number"),
    (lambda: MVN(X4, None, None, X4, True, True, 1e-5, "RELU"), r"FusedActivation is 'RELU'; it must be an operator "
                                                                 r"descriptor"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()


def test_descriptor_fields_registration_and_json() -> None:
    from opendml.model.fields import Kind, fields_of
    from opendml.model.reader import read_operator_desc

    desc = MVN(X4, None, None, X4, 1, 0, np.float32(0.5))
    assert desc.cross_channel is True and desc.normalize_variance is False and desc.epsilon == 0.5
    assert desc.axes == (1, 2, 3) and MVN(X4, None, None, X4, False, True, 1e-5).axes == (2, 3)
    assert dml.OperatorDesc.registry[dml.OperatorType.MEAN_VARIANCE_NORMALIZATION] is MVN
    equivalent = desc.as_mean_variance_normalization1()
    assert isinstance(equivalent, dml.MeanVarianceNormalization1OperatorDesc) and equivalent.axes == (1, 2, 3)
    assert equivalent.label == desc.label == "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION"
    table = {item.dml_name: item for item in fields_of(MVN)}
    assert list(table) == ["InputTensor", "ScaleTensor", "BiasTensor", "OutputTensor", "CrossChannel",
                           "NormalizeVariance", "Epsilon", "FusedActivation"]
    assert table["CrossChannel"].kind is Kind.BOOL and table["FusedActivation"].kind is Kind.OPERATOR
    spec = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 1, 2]},
        "ScaleTensor": None, "BiasTensor": None,
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 1, 2]},
        "CrossChannel": True, "NormalizeVariance": True, "Epsilon": 4.0,
        "FusedActivation": {"Type": "DML_OPERATOR_ACTIVATION_RELU"},
    }
    read = read_operator_desc("desc", MVN, spec)
    assert isinstance(read, MVN) and read.cross_channel and read.fused_activation == dml.ActivationReluOperatorDesc()
    (out,) = compile_mvn(read, "1_0")(X_CHANNELS, None, None)
    np.testing.assert_allclose(out.ravel(), [0, 0, 1 / 3, 1], rtol=1e-7)


def test_absent_scale_and_bias_are_bound_as_none() -> None:
    x = T(F32, [1, 2, 1, 2])
    compiled = compile_mvn(MVN(x, None, None, x, False, True, 3.0))
    output = np.zeros(4, np.float32)
    compiled.execute([dml.Binding(X_CHANNELS.copy()), None, None], [dml.Binding(output)])
    assert output.tolist() == [-0.5, 0.5, -0.5, 0.5]
    with pytest.raises(dml.BindingError, match=PREFIX + "ScaleTensor is absent from the descriptor; bind it as None"):
        compiled.execute([dml.Binding(X_CHANNELS.copy()), dml.Binding(np.ones(4, np.float32)), None],
                         [dml.Binding(output)])


# -- hypothesis properties ------------------------------------------------------------------------------------------

def _at_least(level: str, minimum: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


@st.composite
def mvn_cases(draw: st.DrawFn) -> MvnCase:
    """An MVN1 case (for MVN1's accuracy bounds) whose axes are {2, 3} or {1, 2, 3}: what CrossChannel stands for."""
    level = draw(st.sampled_from(LEVELS))
    type_name = draw(st.sampled_from(["FLOAT32", "FLOAT16"]))
    dtype = NUMPY_DTYPES[type_name]
    sizes = draw(shapes(4, max_elements=2048, max_side=24))
    cross_channel = draw(st.booleans())
    axes = (1, 2, 3) if cross_channel else (2, 3)
    presence = draw(st.sampled_from(["both", "neither", "scale", "bias"] if _at_least(level, "5_2")
                                    else ["both", "neither"]))

    def side_sizes() -> tuple[int, ...]:  # any dimension the input's or 1, at every level
        return tuple(1 if draw(st.booleans()) else size for size in sizes)

    scale_sizes = side_sizes() if presence in ("both", "scale") else None
    bias_sizes = side_sizes() if presence in ("both", "bias") else None
    strides = (draw(strides_for(sizes)),
               None if scale_sizes is None else draw(strides_for(scale_sizes)),
               None if bias_sizes is None else draw(strides_for(bias_sizes)),
               draw(strides_for(sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False)))
    kind, x = draw(values_for(dtype, sizes))
    x = read_buffer(build_buffer(x, strides[0]), dtype, sizes, strides[0])

    def side_values(side: tuple[int, ...] | None, side_strides: tuple[int, ...] | None) -> np.ndarray | None:
        if side is None:
            return None
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = (rng.standard_normal(side) * draw(st.sampled_from([1.0, -1.0, 0.0, 0.5, 3.0, 1e-3]))).astype(dtype)
        return read_buffer(build_buffer(values, side_strides), dtype, side, side_strides)

    scale = side_values(scale_sizes, strides[1])
    bias = side_values(bias_sizes, strides[2])
    normalize = draw(st.booleans())
    epsilon = float(np.float32(draw(st.sampled_from([1e-5, 1e-3, 1.0, 0.0]))))
    activation = draw(activation_choices(level))
    note(f"level={level} {type_name} sizes={sizes} cross_channel={cross_channel} scale={scale_sizes} "
         f"bias={bias_sizes} strides={strides} normalize={normalize} epsilon={epsilon} activation={activation} "
         f"kind={kind}")
    return MvnCase(level, type_name, sizes, axes, scale_sizes, bias_sizes, strides, normalize, epsilon, activation,
                   kind, x, scale, bias)


def descriptor(case: MvnCase) -> MeanVarianceNormalizationOperatorDesc:
    data_type = dml.DataType[case.type_name]

    def desc(sizes: tuple[int, ...] | None, strides: tuple[int, ...] | None) -> dml.TensorDesc | None:
        return None if sizes is None else T(data_type, list(sizes), None if strides is None else list(strides))

    activation = None
    if case.activation is not None:
        name, parameters = case.activation
        activation = getattr(dml, ACTIVATION_CLASSES[name])(*parameters)
    tensor, output = desc(case.sizes, case.strides[0]), desc(case.sizes, case.strides[3])
    assert tensor is not None and output is not None
    return MVN(tensor, desc(case.scale_sizes, case.strides[1]), desc(case.bias_sizes, case.strides[2]), output,
               case.axes == (1, 2, 3), case.normalize, case.epsilon, activation)


@cache
def _device(level: str) -> dml.Device:
    return dml.Device(feature_level=level)


@settings(max_examples=25)
@given(case=mvn_cases(), data=st.data())
def test_mvn_matches_reference_through_raw_buffers(case: MvnCase, data: st.DataObject) -> None:
    """Raw buffers at drawn offsets: inputs unchanged, no byte outside the output's elements written, and every
    element within MVN1's accuracy bounds around the float64 reference over the derived axes."""
    device = _device(case.level)
    compiled = device.compile_operator(device.create_operator(descriptor(case)))
    dtype = NUMPY_DTYPES[case.type_name]
    inputs: list[dml.Binding | None] = []
    buffers: list[tuple[np.ndarray, np.ndarray]] = []
    for array, strides in ((case.x, case.strides[0]), (case.scale, case.strides[1]), (case.bias, case.strides[2])):
        if array is None:
            inputs.append(None)
            continue
        offset = data.draw(byte_offsets())
        buffer = build_buffer(array, strides, byte_offset=offset, tail_bytes=data.draw(st.integers(0, 20)))
        buffers.append((buffer, buffer.copy()))
        inputs.append(dml.Binding(buffer, offset=offset))
    out_offset = data.draw(byte_offsets())
    out_size = tensor_size_in_bytes(dtype.itemsize, case.sizes, case.strides[3])
    out_buffer = sentinel_bytes(out_offset + out_size + data.draw(st.integers(0, 20)), seed=7)
    before = out_buffer.copy()
    compiled.execute(inputs, [dml.Binding(out_buffer, offset=out_offset)])
    for buffer, original in buffers:
        assert np.array_equal(buffer, original), "an input buffer was modified"
    written = addressed_byte_mask(len(out_buffer), dtype.itemsize, case.sizes, case.strides[3],
                                  byte_offset=out_offset)
    changed = np.flatnonzero((out_buffer != before) & ~written)
    assert changed.size == 0, f"bytes outside the output's elements were modified: {changed[:16].tolist()}"
    check_result(case, read_buffer(out_buffer, dtype, case.sizes, case.strides[3], byte_offset=out_offset))
