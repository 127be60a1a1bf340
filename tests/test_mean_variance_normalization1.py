"""MEAN_VARIANCE_NORMALIZATION1: goldens worked out by hand, every row of the page's support table, the bad-input
table with message regexes, the binding model, and hypothesis properties against ``reference_mvn``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import (
    ACTIVATION_PARAMETERS,
    activation_turns,
    apply_activation,
    reference_normalized,
    reference_statistics,
)
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

import opendml as dml
from opendml.backends.cpu import memory_kernels

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
MVN = dml.MeanVarianceNormalization1OperatorDesc
LEVELS = [str(level) for level in dml.FeatureLevel]




def compile_mvn(desc: dml.OperatorDesc, level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    return device.compile_operator(device.create_operator(desc))


# -- goldens (the page has no numeric example: each worked out by hand) ---------------------------------------------

X_2X2 = np.array([[[[1, 2], [3, 4]]]], np.float32)
# Over axes {2, 3}: mean = (1 + 2 + 3 + 4) / 4 = 2.5; deviations -1.5, -0.5, 0.5, 1.5;
# variance = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25. With Epsilon 2.75: sqrt(1.25 + 2.75) = 2, so the normalized
# values are the deviations / 2 = -0.75, -0.25, 0.25, 0.75 (all exact in FLOAT32).
NORMALIZED = [-0.75, -0.25, 0.25, 0.75]


def _golden(x: np.ndarray, axes: list[int], normalize: bool, epsilon: float,
            activation: dml.OperatorDesc | None = None, level: str = "6_4",
            scale: np.ndarray | None = None, bias: np.ndarray | None = None,
            data_type: dml.DataType = F32) -> np.ndarray:
    dtype = data_type.numpy_dtype
    desc = MVN(T(data_type, list(x.shape)), None if scale is None else T(data_type, list(scale.shape)),
               None if bias is None else T(data_type, list(bias.shape)), T(data_type, list(x.shape)), axes,
               normalize, epsilon, activation)
    (out,) = compile_mvn(desc, level)(x.astype(dtype), None if scale is None else scale.astype(dtype),
                                      None if bias is None else bias.astype(dtype))
    assert out.dtype == dtype and out.shape == x.shape
    return out


def test_golden_normalize_variance_true() -> None:
    out = _golden(X_2X2, [2, 3], True, 2.75)
    np.testing.assert_array_equal(out.ravel(), NORMALIZED)


def test_golden_normalize_variance_false() -> None:
    # Without the division: the deviations -1.5, -0.5, 0.5, 1.5 (Epsilon plays no part).
    out = _golden(X_2X2, [2, 3], False, 2.75)
    np.testing.assert_array_equal(out.ravel(), [-1.5, -0.5, 0.5, 1.5])


def test_golden_recommended_epsilon() -> None:
    # Epsilon 1e-5: (x - 2.5) / sqrt(1.25001) = deviations * 0.894423613..., e.g. 1.5 * 0.8944236 = 1.3416355.
    out = _golden(X_2X2, [2, 3], True, 1e-5)
    np.testing.assert_allclose(out.ravel(), [-1.3416355, -0.44721183, 0.44721183, 1.3416355], rtol=2e-7)


X_CHANNELS = np.array([[[[0, 2]], [[4, 6]]]], np.float32)   # [1, 2, 1, 2]: channel 0 = {0, 2}, channel 1 = {4, 6}


def test_golden_axes_2_3_is_cross_channel_false() -> None:
    # Per channel: means 1 and 5, deviations -1, 1, variance 1; Epsilon 3: sqrt(4) = 2 -> -0.5, 0.5 in each.
    out = _golden(X_CHANNELS, [2, 3], True, 3.0)
    np.testing.assert_array_equal(out.ravel(), [-0.5, 0.5, -0.5, 0.5])


def test_golden_axes_1_2_3_is_cross_channel_true() -> None:
    # All four: mean (0 + 2 + 4 + 6) / 4 = 3, deviations -3, -1, 1, 3, variance (9 + 1 + 1 + 9) / 4 = 5;
    # Epsilon 4: sqrt(9) = 3 -> -1, -1/3, 1/3, 1.
    out = _golden(X_CHANNELS, [1, 2, 3], True, 4.0)
    np.testing.assert_allclose(out.ravel(), [-1, -1 / 3, 1 / 3, 1], rtol=1e-7)


def test_golden_axes_order_does_not_matter() -> None:
    np.testing.assert_array_equal(_golden(X_CHANNELS, [3, 1, 2], True, 4.0), _golden(X_CHANNELS, [1, 2, 3], True, 4.0))


def test_golden_scale_and_bias_broadcast() -> None:
    # Normalized per channel (as above): [[-0.5, 0.5], [-0.5, 0.5]]. Scale [1, 2, 1, 1] = {2, 4} per channel;
    # Bias [1, 1, 1, 2] = {10, 20} along the width (a broadcast channel: feature level 4_0 and up).
    # channel 0: 2 * -0.5 + 10 = 9, 2 * 0.5 + 20 = 21; channel 1: 4 * -0.5 + 10 = 8, 4 * 0.5 + 20 = 22.
    scale = np.array([2, 4], np.float32).reshape(1, 2, 1, 1)
    bias = np.array([10, 20], np.float32).reshape(1, 1, 1, 2)
    out = _golden(X_CHANNELS, [2, 3], True, 3.0, scale=scale, bias=bias, level="4_0")
    np.testing.assert_array_equal(out.ravel(), [9, 21, 8, 22])


def test_golden_per_channel_scale_and_bias_at_2_1() -> None:
    # Scale {2, 4} and Bias {10, 20} per channel: 2 * -0.5 + 10 = 9, 2 * 0.5 + 10 = 11, 4 * -0.5 + 20 = 18,
    # 4 * 0.5 + 20 = 22.
    scale = np.array([2, 4], np.float32).reshape(1, 2, 1, 1)
    bias = np.array([10, 20], np.float32).reshape(1, 2, 1, 1)
    out = _golden(X_CHANNELS, [2, 3], True, 3.0, scale=scale, bias=bias, level="2_1")
    np.testing.assert_array_equal(out.ravel(), [9, 11, 18, 22])


def test_golden_scale_alone_and_bias_alone_from_5_2() -> None:
    # Absent Bias acts as 0, absent Scale as 1: Scale {2, 4}: -1, 1, -2, 2; Bias {10, 20}: 9.5, 10.5, 19.5, 20.5.
    scale = np.array([2, 4], np.float32).reshape(1, 2, 1, 1)
    bias = np.array([10, 20], np.float32).reshape(1, 2, 1, 1)
    np.testing.assert_array_equal(_golden(X_CHANNELS, [2, 3], True, 3.0, scale=scale, level="5_2").ravel(),
                                  [-1, 1, -2, 2])
    np.testing.assert_array_equal(_golden(X_CHANNELS, [2, 3], True, 3.0, bias=bias, level="5_2").ravel(),
                                  [9.5, 10.5, 19.5, 20.5])


def test_golden_mean_of_1e4_plus_noise_is_kept() -> None:
    # x = 10000 + {0, 1, 2, 3} * 2^-10 (FLOAT32's spacing at 1e4): mean = 10000 + 1.5 * 2^-10, deviations
    # {-1.5, -0.5, 0.5, 1.5} * 2^-10, variance 1.25 * 2^-20; Epsilon 0: deviations / (sqrt(1.25) * 2^-10) =
    # {-1.5, -0.5, 0.5, 1.5} / 1.118034 = -1.3416408, -0.4472136, 0.4472136, 1.3416408. A one-pass
    # E[x^2] - E[x]^2 in FLOAT32 has nothing left of the variance here.
    x = (np.float32(10000) + np.arange(4, dtype=np.float32) * np.float32(2**-10)).reshape(1, 1, 2, 2)
    out = _golden(x, [2, 3], True, 0.0)
    np.testing.assert_allclose(out.ravel(), [-1.3416408, -0.4472136, 0.4472136, 1.3416408], rtol=3e-7)


def test_golden_float16() -> None:
    # The same [[1, 2], [3, 4]] in FLOAT16, computed in FLOAT32: -0.75, -0.25, 0.25, 0.75 are exact in FLOAT16.
    out = _golden(X_2X2, [2, 3], True, 2.75, data_type=F16)
    np.testing.assert_array_equal(out.ravel(), np.array(NORMALIZED, np.float16))


def test_golden_constant_input_gives_bias() -> None:
    # A constant group has deviations 0: 0 / sqrt(0 + 1e-5) * Scale + Bias = Bias.
    bias = np.array([7, -3], np.float32).reshape(1, 2, 1, 1)
    scale = np.ones((1, 2, 1, 1), np.float32)
    out = _golden(np.full((1, 2, 2, 2), 5, np.float32), [2, 3], True, 1e-5, scale=scale, bias=bias)
    np.testing.assert_array_equal(out.ravel(), [7, 7, 7, 7, -3, -3, -3, -3])


def test_golden_scale_times_normalized_beyond_float32_with_bias_bringing_it_back() -> None:
    # Found by the differential fuzzer (the gpu gave inf). x = {-1.3098432, 2.1061113} (FLOAT32: -1.30984318256...,
    # 2.10611128807...), mean 0.39813405275... (exact in FLOAT32), NormalizeVariance FALSE: deviations
    # -1.70797723531..., +1.70797723531... Element 0: -1.707977... x -3.4028235e38 = 5.8119450e38, beyond FLOAT32's
    # 3.4028235e38, + Bias -3.4028235e38 = 2.40912155e38, which FLOAT32 holds: normalized x Scale + Bias is one
    # fused multiply-add, rounded once. Element 1: 1.707977 x 0.23629585 = 0.40358793, + Bias -3.4028235e38 is
    # -3.4028235e38 (FLOAT32's largest magnitude).
    x = np.array([-1.3098432, 2.1061113], np.float32).reshape(2, 1, 1, 1)
    scale = np.array([-3.4028235e38, 0.23629585], np.float32).reshape(2, 1, 1, 1)
    bias = np.full((1, 1, 1, 1), -3.4028235e38, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _golden(x, [0], False, 1e-5, scale=scale, bias=bias)
    np.testing.assert_allclose(out.ravel(), [2.4091215e38, -3.4028235e38], rtol=1.2e-7)


def test_golden_epsilon_zero_on_constant_input_is_nan() -> None:
    # 0 / sqrt(0 + 0) is 0/0: NaN, as IEEE arithmetic gives it (DECISIONS: no ruling hides it).
    out = _golden(np.full((1, 1, 2, 2), 5, np.float32), [2, 3], True, 0.0)
    assert np.isnan(out).all()


def test_golden_negative_epsilon() -> None:
    # The rules accept any finite Epsilon; it is added inside the square root. X_2X2's variance is 1.25:
    # Epsilon -0.25: sqrt(1.25 - 0.25) = 1, so the deviations -1.5, -0.5, 0.5, 1.5 come out as they are;
    # Epsilon -1.25: sqrt(0) = 0, deviation / 0 = -inf, -inf, inf, inf;
    # Epsilon -10: the square root of -8.75 is NaN, and so is every output.
    np.testing.assert_array_equal(_golden(X_2X2, [2, 3], True, -0.25).ravel(), [-1.5, -0.5, 0.5, 1.5])
    np.testing.assert_array_equal(_golden(X_2X2, [2, 3], True, -1.25).ravel(), [-np.inf, -np.inf, np.inf, np.inf])
    assert np.isnan(_golden(X_2X2, [2, 3], True, -10.0)).all()
    # One element: deviation 0, variance 0; 0 / sqrt(-1) is NaN, not the Bias.
    (out,) = compile_mvn(MVN(T(F32, [1]), None, T(F32, [1]), T(F32, [1]), [0], True, -1.0))(
        np.array([5], np.float32), None, np.array([7], np.float32))
    assert np.isnan(out).all()


# Each activation on the normalized values -0.75, -0.25, 0.25, 0.75 (above), worked out with the formulas of
# DIGEST 2.4; e^0.25 = 1.2840254167, e^0.75 = 2.1170000166, e^-0.25 = 0.7788007831, e^-0.75 = 0.4723665527.
ACTIVATION_GOLDENS: list[tuple[dml.OperatorDesc, list[float]]] = [
    (dml.ActivationIdentityOperatorDesc(), [-0.75, -0.25, 0.25, 0.75]),
    # max(0, x)
    (dml.ActivationReluOperatorDesc(), [0, 0, 0.25, 0.75]),
    # 2x + 1: -1.5 + 1, -0.5 + 1, 0.5 + 1, 1.5 + 1
    (dml.ActivationLinearOperatorDesc(alpha=2.0, beta=1.0), [-0.5, 0.5, 1.5, 2.5]),
    # 1 / (1 + e^-x): 1 / 3.1170000166 = 0.3208213008, 1 / 2.2840254167 = 0.4378234991, and 1 minus those
    (dml.ActivationSigmoidOperatorDesc(), [0.3208213008, 0.4378234991, 0.5621765009, 0.6791786992]),
    # max(0, min(x + 0.5, 1)): -0.25 -> 0, 0.25, 0.75, 1.25 -> 1
    (dml.ActivationHardSigmoidOperatorDesc(alpha=1.0, beta=0.5), [0, 0.25, 0.75, 1]),
    # defaults 0.2x + 0.5: 0.35, 0.45, 0.55, 0.65
    (dml.ActivationHardSigmoidOperatorDesc(), [0.35, 0.45, 0.55, 0.65]),
    # tanh 0.25 = (1.2840254167^2 - 1) / (1.2840254167^2 + 1) = 0.6487212707 / 2.6487212707 = 0.2449186624;
    # tanh 0.75 = (2.1170000166^2 - 1) / (... + 1) = 3.4816890703 / 5.4816890703 = 0.6351489524
    (dml.ActivationTanhOperatorDesc(), [-0.6351489524, -0.2449186624, 0.2449186624, 0.6351489524]),
    # 2 tanh(x)
    (dml.ActivationScaledTanhOperatorDesc(alpha=2.0, beta=1.0), [-1.2702979048, -0.4898373248, 0.4898373248,
                                                                  1.2702979048]),
    # x >= 0 ? x : 0.1x
    (dml.ActivationLeakyReluOperatorDesc(alpha=0.1), [-0.075, -0.025, 0.25, 0.75]),
    # x > 0.5 ? x : 0
    (dml.ActivationThresholdedReluOperatorDesc(alpha=0.5), [0, 0, 0, 0.75]),
    # x >= 0 ? x : 2 (e^x - 1): 2 (0.4723665527 - 1) = -1.0552668946, 2 (0.7788007831 - 1) = -0.4423984339
    (dml.ActivationEluOperatorDesc(alpha=2.0), [-1.0552668946, -0.4423984339, 0.25, 0.75]),
    # max(0, x) + min(0, 2 (e^(x/2) - 1)): e^-0.375 = 0.6872892788 -> -0.6254214424, e^-0.125 = 0.8824969026
    # -> -0.2350061948
    (dml.ActivationCeluOperatorDesc(alpha=2.0), [-0.6254214424, -0.2350061948, 0.25, 0.75]),
    # x > 0 ? 3x : 3 (2 e^x - 2) = 6 (e^x - 1): 6 * -0.5276334473 = -3.1658006838, 6 * -0.2211992169 = -1.3271953015
    (dml.ActivationScaledEluOperatorDesc(alpha=2.0, gamma=3.0), [-3.1658006838, -1.3271953015, 0.75, 2.25]),
    # ln(1 + e^2x) / 2: e^-1.5 = 0.2231301601 -> ln 1.2231301601 = 0.2014132780 -> 0.1007066390;
    # e^-0.5 = 0.6065306597 -> 0.4740769842 -> 0.2370384921; e^0.5 -> 0.9740769842 -> 0.4870384921;
    # e^1.5 = 4.4816890703 -> 1.7014132780 -> 0.8507066390
    (dml.ActivationSoftplusOperatorDesc(steepness=2.0), [0.1007066390, 0.2370384921, 0.4870384921, 0.8507066390]),
    # 2 ln(1 + e^x): ln 1.4723665527 = 0.3868710061, ln 1.7788007831 = 0.5759394199, ln 2.2840254167 =
    # 0.8259394199, ln 3.1170000166 = 1.1368710061; doubled
    (dml.ActivationParametricSoftplusOperatorDesc(alpha=2.0, beta=1.0), [0.7737420122, 1.1518788398, 1.6518788398,
                                                                          2.2737420122]),
    # x / (1 + |x|): -0.75 / 1.75, -0.25 / 1.25, ...
    (dml.ActivationSoftsignOperatorDesc(), [-0.4285714286, -0.2, 0.2, 0.4285714286]),
    # |x| <= 0.5 -> 0; -0.75 + 0.1, 0.75 - 0.1
    (dml.ActivationShrinkOperatorDesc(bias=0.1, threshold=0.5), [-0.65, 0, 0, 0.65]),
    # 0.5 x (1 + erf(x / sqrt 2)) = x Phi(x): Phi(0.75) = 0.7733726476, Phi(0.25) = 0.5987063257,
    # Phi(-0.25) = 0.4012936743, Phi(-0.75) = 0.2266273524 -> -0.1699705143, -0.1003234186, 0.1496765814, 0.5800294857
    (dml.ActivationGeluOperatorDesc(), [-0.1699705143, -0.1003234186, 0.1496765814, 0.5800294857]),
]


@pytest.mark.parametrize(("activation", "expected"), ACTIVATION_GOLDENS,
                         ids=[f"{type(a).__name__}-{i}" for i, (a, _) in enumerate(ACTIVATION_GOLDENS)])
@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
def test_golden_fused_activation(activation: dml.OperatorDesc, expected: list[float], data_type: dml.DataType
                                 ) -> None:
    out = _golden(X_2X2, [2, 3], True, 2.75, activation, data_type=data_type)
    if data_type == F32:
        np.testing.assert_allclose(out.ravel(), expected, rtol=4e-7, atol=1e-7)
    else:  # computed in FLOAT32, rounded once to FLOAT16 (half a unit in the last place: 2^-11 relative)
        np.testing.assert_allclose(out.ravel().astype(np.float64), expected, rtol=2**-11, atol=2**-25)


def test_every_activation_has_a_golden() -> None:
    covered = {type(activation).__name__ for activation, _ in ACTIVATION_GOLDENS}
    assert len(covered) == 17


# -- the page's support table, row by row ----------------------------------------------------------------------------

ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name not in ("UNKNOWN", "UINT4", "INT4")]
# Copied from the page: (level, ranks, data types), the same for all four tensors.
PAGE_ROWS = [("3_1", (1, 8), ["FLOAT32", "FLOAT16"]), ("2_1", (4, 4), ["FLOAT32", "FLOAT16"])]


@pytest.mark.parametrize("level", LEVELS)
def test_every_row_of_the_page(level: str) -> None:
    device = dml.Device(feature_level=level)
    rows = [row for row in PAGE_ROWS if dml.FeatureLevel.parse(row[0]) <= dml.FeatureLevel.parse(level)]
    for data_type in ALL_TYPES:
        for rank in (1, 2, 3, 4, 5, 8):
            sizes = [2] * rank
            tensor = T(data_type, sizes)
            desc = MVN(tensor, tensor, tensor, tensor, [rank - 1], True, 1e-5)
            if not rows:
                with pytest.raises(dml.UnsupportedError, match=r"needs feature level 2_1"):
                    device.create_operator(desc)
                continue
            _, (low, high), types = max(rows, key=lambda row: dml.FeatureLevel.parse(row[0]))
            if data_type in types and low <= rank <= high:
                device.create_operator(desc)
            else:
                with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                    device.create_operator(desc)


# -- bad descriptors ---------------------------------------------------------------------------------------------

X4 = T(F32, [2, 3, 4, 5])
C3 = T(F32, [1, 3, 1, 1])
PREFIX = r"DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: "
RELU = dml.ActivationReluOperatorDesc()


@dataclass(frozen=True)
class Bad:
    name: str
    build: Callable[[], dml.OperatorDesc]
    level: str
    error: type[Exception]
    message: str


def mvn(x: dml.TensorDesc = X4, scale: dml.TensorDesc | None = C3, bias: dml.TensorDesc | None = C3,
        y: dml.TensorDesc | None = None, axes: list[int] | None = None, activation: dml.OperatorDesc | None = None,
        ) -> Callable[[], dml.OperatorDesc]:
    return lambda: MVN(x, scale, bias, x if y is None else y, [2, 3] if axes is None else axes, True, 1e-5,
                       activation)


BAD_DESCRIPTORS = [
    Bad("Scale without Bias below 5_2", mvn(bias=None), "5_1", dml.UnsupportedError,
        r"ScaleTensor without BiasTensor needs feature level 5_2; the device is at 5_1"),
    Bad("Bias without Scale below 5_2", mvn(scale=None), "4_0", dml.UnsupportedError,
        r"BiasTensor without ScaleTensor needs feature level 5_2; the device is at 4_0"),
    Bad("Scale size neither the input's nor 1", mvn(scale=T(F32, [1, 3, 2, 1])), "6_4", dml.ValidationError,
        r"ScaleTensor.Sizes\[2\] is 2; it must be 4 \(InputTensor.Sizes\[2\]\) or 1"),
    Bad("Bias size neither the input's nor 1", mvn(bias=T(F32, [1, 3, 1, 7])), "6_4", dml.ValidationError,
        r"BiasTensor.Sizes\[3\] is 7; it must be 5 \(InputTensor.Sizes\[3\]\) or 1"),
    Bad("broadcast channel below 4_0", mvn(scale=T(F32, [1, 1, 1, 1])), "3_1", dml.UnsupportedError,
        r"ScaleTensor.Sizes\[1\] 1 \(broadcast over the channel dimension\) needs feature level 4_0; the device "
        r"is at 3_1"),
    Bad("mismatched Scale type", mvn(scale=T(F16, [1, 3, 1, 1])), "6_4", dml.ValidationError,
        r"ScaleTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    Bad("mismatched Output type", mvn(y=T(F16, [2, 3, 4, 5])), "6_4", dml.ValidationError,
        r"OutputTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    Bad("mismatched Bias rank", mvn(bias=T(F32, [3, 1, 1])), "6_4", dml.ValidationError,
        r"BiasTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(4\)"),
    Bad("mismatched Output rank", mvn(y=T(F32, [2, 3, 20])), "6_4", dml.ValidationError,
        r"OutputTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(4\)"),
    Bad("Output sizes differ", mvn(y=T(F32, [2, 3, 5, 4])), "6_4", dml.ValidationError,
        r"OutputTensor.Sizes is \[2, 3, 5, 4\]; it must equal InputTensor.Sizes \[2, 3, 4, 5\]"),
    Bad("empty axes", mvn(axes=[]), "6_4", dml.ValidationError,
        r"Axes is empty; it must name at least one axis of InputTensor"),
    Bad("duplicate axes", mvn(axes=[2, 3, 2]), "6_4", dml.ValidationError,
        r"Axes\[2\] is 2, which appears twice; axes must be unique"),
    Bad("axis out of range", mvn(axes=[4]), "6_4", dml.ValidationError,
        r"Axes\[0\] is 4; it must be in \[0, 3\] for InputTensor of 4 dimensions"),
    Bad("INT32 input", mvn(x=T("INT32", [2, 3, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.DataType INT32 is not supported; at feature level 6_4 it must be one of FLOAT32, FLOAT16"),
    Bad("FLOAT64 input", mvn(x=T("FLOAT64", [2, 3, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.DataType FLOAT64 is not supported"),
    Bad("rank 5 at 2_1", mvn(x=T(F32, [2, 3, 4, 5, 6]), scale=None, bias=None), "2_1", dml.UnsupportedError,
        r"InputTensor.DimensionCount 5 needs feature level 3_1; the device is at 2_1"),
    Bad("rank 3 at 3_0", mvn(x=T(F32, [3, 4, 5]), scale=None, bias=None, axes=[1, 2]), "3_0",
        dml.UnsupportedError, r"InputTensor.DimensionCount 3 needs feature level 3_1; the device is at 3_0"),
    Bad("operator below 2_1", mvn(), "2_0", dml.UnsupportedError,
        r"DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 needs feature level 2_1; the device is at 2_0"),
    Bad("a non-activation as FusedActivation",
        mvn(activation=dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), [0])), "6_4", dml.ValidationError,
        r"FusedActivation is DML_OPERATOR_REDUCE \(Function SUM\); it must be one of "
        r"DML_OPERATOR_ACTIVATION_LINEAR, .*DML_OPERATOR_ACTIVATION_GELU"),
    Bad("GELU at 5_0", mvn(activation=dml.ActivationGeluOperatorDesc()), "5_0", dml.UnsupportedError,
        r"FusedActivation \(DML_OPERATOR_ACTIVATION_GELU\) needs feature level 5_1; the device is at 5_0"),
    Bad("CELU at 2_1", mvn(activation=dml.ActivationCeluOperatorDesc()), "2_1", dml.UnsupportedError,
        r"FusedActivation \(DML_OPERATOR_ACTIVATION_CELU\) needs feature level 3_0; the device is at 2_1"),
    Bad("SOFTPLUS Steepness 0.5 at 6_3", mvn(activation=dml.ActivationSoftplusOperatorDesc(0.5)), "6_3",
        dml.UnsupportedError, r"FusedActivation.Steepness 0.5 needs feature level 6_4 \(below it Steepness must be "
                              r"at least 1\); the device is at 6_3"),
    Bad("SOFTPLUS Steepness 0", mvn(activation=dml.ActivationSoftplusOperatorDesc(0.0)), "6_4",
        dml.ValidationError, r"FusedActivation.Steepness is 0; it must be nonzero"),
    Bad("CELU Alpha 0", mvn(activation=dml.ActivationCeluOperatorDesc(0.0)), "6_4", dml.ValidationError,
        r"FusedActivation.Alpha is 0; it must be nonzero"),
    Bad("an activation with its InputTensor set",
        mvn(activation=dml.ActivationReluOperatorDesc(input_tensor=X4)), "6_4", dml.ValidationError,
        r"FusedActivation.InputTensor is set; a fused activation's InputTensor and OutputTensor must be absent"),
    Bad("an activation with its OutputTensor set",
        mvn(activation=dml.ActivationSigmoidOperatorDesc(output_tensor=X4)), "6_4", dml.ValidationError,
        r"FusedActivation.OutputTensor is set; a fused activation's InputTensor and OutputTensor must be absent"),
    Bad("overlapping output strides", mvn(y=T(F32, [2, 3, 4, 5], [0, 20, 5, 1])), "6_4", dml.ValidationError,
        r"OutputTensor.Strides \[0, 20, 5, 1\] map two elements"),
    Bad("a zero size", mvn(x=T(F32, [2, 0, 4, 5]), scale=None, bias=None), "6_4", dml.ValidationError,
        r"InputTensor.Sizes\[1\] is 0; every size must be at least 1"),
    Bad("Scale total size too small", mvn(scale=T(F32, [1, 3, 1, 1], total_tensor_size_in_bytes=8)), "6_4",
        dml.ValidationError, r"ScaleTensor.TotalTensorSizeInBytes is 8; it must be at least 12"),
]


@pytest.mark.parametrize("case", BAD_DESCRIPTORS, ids=[case.name for case in BAD_DESCRIPTORS])
def test_bad_descriptors(case: Bad) -> None:
    message = case.message if case.message.startswith("DML_OPERATOR") else PREFIX + case.message
    with pytest.raises(case.error, match=message):
        dml.Device(feature_level=case.level).create_operator(case.build())


def test_the_same_descriptors_pass_where_the_rules_allow() -> None:
    # Every UnsupportedError above names a level; at that level the descriptor is accepted.
    for case in BAD_DESCRIPTORS:
        if case.error is dml.UnsupportedError and "needs feature level" in case.message:
            needed = case.message.split("needs feature level ")[1][:3]
            dml.Device(feature_level=needed).create_operator(case.build())


@pytest.mark.parametrize(("build", "message"), [
    (lambda: MVN([2, 2], None, None, X4, [0], True, 1e-5), r"InputTensor is \[2, 2\]; it must be a TensorDesc$"),
    (lambda: MVN(X4, "scale", None, X4, [0], True, 1e-5), r"ScaleTensor is 'scale'; it must be a TensorDesc$"),
    (lambda: MVN(X4, None, None, X4, [-1], True, 1e-5), r"Axes\[0\] is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: MVN(X4, None, None, X4, [0], "yes", 1e-5), r"NormalizeVariance is 'yes'; it must be a BOOL"),
    (lambda: MVN(X4, None, None, X4, [0], True, math.nan), r"Epsilon is nan; it must be a finite FLOAT"),
    (lambda: MVN(X4, None, None, X4, [0], True, 1e39), r"Epsilon is 1e\+39; it must be a finite FLOAT"),
    (lambda: MVN(X4, None, None, X4, [0], True, "1e-5"), r"Epsilon is '1e-5'; it must be a number"),
    (lambda: MVN(X4, None, None, X4, [0], True, 1e-5, "RELU"), r"FusedActivation is 'RELU'; it must be an operator "
                                                                r"descriptor"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()


def test_descriptor_normalizes_fields() -> None:
    desc = MVN(X4, None, None, X4, np.array([3, 2]), 1, np.float32(0.5))
    assert desc.axes == (3, 2) and desc.normalize_variance is True and desc.epsilon == 0.5
    assert desc.normalized_element_count == 20
    assert [name for name, _ in desc.input_slots()] == ["InputTensor", "ScaleTensor", "BiasTensor"]
    assert [name for name, _ in desc.output_slots()] == ["OutputTensor"]


def test_json_field_table_reads_an_mvn_model() -> None:
    # The DML field names map onto the Python ones (the JSON reader uses the dataclass fields).
    from opendml.model.fields import Kind, fields_of
    from opendml.ops.mean_variance_normalization1 import FIELDS

    table = {item.dml_name: item for item in fields_of(MVN)}
    assert {name: item.python_name for name, item in table.items()} == FIELDS
    assert table["ScaleTensor"].kind is Kind.OPTIONAL_TENSOR and table["FusedActivation"].kind is Kind.OPERATOR
    assert table["Axes"].count_name == "AxisCount" and table["Epsilon"].kind is Kind.FLOAT
    assert table["NormalizeVariance"].kind is Kind.BOOL


# -- the binding model -------------------------------------------------------------------------------------------

def test_absent_scale_and_bias_are_bound_as_none() -> None:
    x = T(F32, [1, 1, 2, 2])
    compiled = compile_mvn(MVN(x, None, None, x, [2, 3], True, 2.75))
    output = np.zeros(4, np.float32)
    compiled.execute([dml.Binding(X_2X2.copy()), None, None], [dml.Binding(output)])
    assert output.tolist() == NORMALIZED
    with pytest.raises(dml.BindingError, match="ScaleTensor is absent from the descriptor; bind it as None"):
        compiled.execute([dml.Binding(X_2X2.copy()), dml.Binding(np.ones(4, np.float32)), None],
                         [dml.Binding(output)])


def test_call_may_leave_out_trailing_absent_inputs() -> None:
    x = T(F32, [1, 1, 2, 2])
    compiled = compile_mvn(MVN(x, None, None, x, [2, 3], True, 2.75))
    for arguments in ((), (None,), (None, None)):                # compiled(x), compiled(x, None), ...
        (output,) = compiled(X_2X2, *arguments)
        assert output.ravel().tolist() == NORMALIZED
    with pytest.raises(dml.BindingError, match=PREFIX + r"ScaleTensor is absent from the descriptor; pass None "
                                                        r"for it or leave it out$"):
        compiled(X_2X2, X_2X2)
    with pytest.raises(dml.BindingError, match=PREFIX + r"4 arrays given; it takes at most 3 \(InputTensor, "
                                                        r"ScaleTensor \(absent\), BiasTensor \(absent\)\)$"):
        compiled(X_2X2, None, None, None)
    with pytest.raises(dml.BindingError, match=PREFIX + r"InputTensor is not given; the descriptor has InputTensor, "
                                                        r"so it needs an array \(only absent optional inputs may be "
                                                        r"None or left out\)$"):
        compiled()


def test_call_refuses_none_or_nothing_for_a_present_input() -> None:
    x = T(F32, [1, 1, 2, 2])
    bias = T(F32, [1, 1, 1, 1])
    compiled = compile_mvn(MVN(x, None, bias, x, [2, 3], True, 2.75))
    (output,) = compiled(X_2X2, None, np.full((1, 1, 1, 1), 1.0, np.float32))
    assert output.ravel().tolist() == [value + 1.0 for value in NORMALIZED]
    for arguments, received in (((), "not given"), ((None,), "not given"), ((None, None), "None")):
        with pytest.raises(dml.BindingError, match=PREFIX + f"BiasTensor is {received}; the descriptor has "
                                                            f"BiasTensor, so it needs an array"):
            compiled(X_2X2, *arguments)
    with pytest.raises(dml.BindingError, match=PREFIX + "InputTensor is None; the descriptor has InputTensor"):
        compiled(None, None, np.ones((1, 1, 1, 1), np.float32))


def test_strided_tensors_at_offsets_and_untouched_gaps() -> None:
    # Input transposed inside a padded buffer, Scale broadcast by a zero stride, output every other element at
    # byte offset 32; the gaps keep their bytes.
    x = T(F32, [1, 1, 2, 2], [0, 0, 1, 3])          # element (h, w) at h + 3w
    scale = T(F32, [1, 1, 2, 2], [0, 0, 0, 0])      # one value, seen everywhere
    bias = T(F32, [1, 1, 1, 1])
    y = T(F32, [1, 1, 2, 2], [8, 8, 4, 2])
    compiled = compile_mvn(MVN(x, scale, bias, y, [2, 3], True, 2.75))
    memory = np.full(6, -9.0, np.float32)
    memory[[0, 3, 1, 4]] = [1, 2, 3, 4]             # (0,0)=1 (0,1)=2 (1,0)=3 (1,1)=4
    output = np.full(8 + 8, 99.0, np.float32)
    compiled.execute([dml.Binding(memory), dml.Binding(np.array([2], np.float32)),
                      dml.Binding(np.array([1], np.float32))], [dml.Binding(output, offset=32)])
    # 2 * {-0.75, -0.25, 0.25, 0.75} + 1 = -0.5, 0.5, 1.5, 2.5 at (0,0) (0,1) (1,0) (1,1) -> offsets 0, 2, 4, 6
    assert output.tolist() == [99] * 8 + [-0.5, 99, 0.5, 99, 1.5, 99, 2.5, 99]


def test_inputs_unchanged_and_failed_dispatch_leaves_outputs() -> None:
    x = T(F32, [1, 1, 2, 2])
    compiled = compile_mvn(MVN(x, x, x, x, [2, 3], True, 2.75))
    source, scale, bias = X_2X2.copy(), np.full(4, 2, np.float32), np.full(4, 1, np.float32)
    output = np.full(4, 42.0, np.float32)
    compiled.execute([dml.Binding(source), dml.Binding(scale), dml.Binding(bias)], [dml.Binding(output)])
    np.testing.assert_array_equal(source, X_2X2)
    assert scale.tolist() == [2] * 4 and bias.tolist() == [1] * 4
    assert output.tolist() == [-0.5, 0.5, 1.5, 2.5]
    untouched = np.full(4, 42.0, np.float32)
    with pytest.raises(dml.BindingError):   # the output overlaps the input
        compiled.execute([dml.Binding(untouched), dml.Binding(scale), dml.Binding(bias)], [dml.Binding(untouched)])
    assert untouched.tolist() == [42.0] * 4


def test_large_tensor_runs_threaded_and_matches_the_reference() -> None:
    # Big enough for the multi-threaded path (and for several blocks per group).
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 5000, 20)) * 3 + 1e4).astype(np.float32)
    scale = rng.standard_normal((1, 5000, 1)).astype(np.float32)
    desc = MVN(T(F32, [3, 5000, 20]), T(F32, [1, 5000, 1]), None, T(F32, [3, 5000, 20]), [1, 2], True, 1e-5,
               dml.ActivationGeluOperatorDesc())
    (out,) = compile_mvn(desc)(x, scale, None)
    expected = apply_activation("GELU", (), reference_normalized(x, scale, None, [1, 2], True, float(np.float32(1e-5))))
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


# -- hypothesis properties ------------------------------------------------------------------------------------------

U32 = 2.0**-24
NUMPY_DTYPES = {"FLOAT32": np.dtype(np.float32), "FLOAT16": np.dtype(np.float16)}
# Activation -> (level introduced, parameter strategy). Written out here, independently of the package's table.
ACTIVATION_LEVELS = {name: "1_0" for name in ACTIVATION_PARAMETERS} | {"CELU": "3_0", "SHRINK": "2_0", "GELU": "5_1"}
ACTIVATION_CLASSES = {
    "LINEAR": "ActivationLinearOperatorDesc", "SIGMOID": "ActivationSigmoidOperatorDesc",
    "HARD_SIGMOID": "ActivationHardSigmoidOperatorDesc", "TANH": "ActivationTanhOperatorDesc",
    "SCALED_TANH": "ActivationScaledTanhOperatorDesc", "RELU": "ActivationReluOperatorDesc",
    "LEAKY_RELU": "ActivationLeakyReluOperatorDesc", "THRESHOLDED_RELU": "ActivationThresholdedReluOperatorDesc",
    "ELU": "ActivationEluOperatorDesc", "CELU": "ActivationCeluOperatorDesc",
    "SCALED_ELU": "ActivationScaledEluOperatorDesc", "SOFTPLUS": "ActivationSoftplusOperatorDesc",
    "PARAMETRIC_SOFTPLUS": "ActivationParametricSoftplusOperatorDesc", "SOFTSIGN": "ActivationSoftsignOperatorDesc",
    "IDENTITY": "ActivationIdentityOperatorDesc", "SHRINK": "ActivationShrinkOperatorDesc",
    "GELU": "ActivationGeluOperatorDesc",
}


def _at_least(level: str, minimum: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


def _float32(value: float) -> float:
    return float(np.float32(value))


@st.composite
def activation_choices(draw: st.DrawFn, level: str) -> tuple[str, tuple[float, ...]] | None:
    """None or (name, parameters rounded to FLOAT32), valid at `level`."""
    names = [name for name in ACTIVATION_PARAMETERS if _at_least(level, ACTIVATION_LEVELS[name])]
    name = draw(st.one_of(st.none(), st.sampled_from(names)))
    if name is None:
        return None
    parameter = st.floats(-4.0, 4.0, width=32)
    values: list[float] = []
    for parameter_name in ACTIVATION_PARAMETERS[name]:
        if name == "SOFTPLUS":
            low = 1.0 if not _at_least(level, "6_4") else 0.125
            magnitude = draw(st.floats(low, 8.0, width=32))
            sign = -1.0 if _at_least(level, "6_4") and draw(st.booleans()) else 1.0
            values.append(sign * magnitude)
        elif name == "CELU":
            values.append(draw(st.floats(0.125, 4.0, width=32)) * draw(st.sampled_from([1.0, -1.0])))
        elif name == "SHRINK" and parameter_name == "Threshold":
            values.append(draw(st.floats(0.0, 2.0, width=32)))
        else:
            values.append(draw(parameter))
    return name, tuple(_float32(v) for v in values)


@st.composite
def values_for(draw: st.DrawFn, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[str, np.ndarray]:
    """(kind, data): ordinary, an offset with small noise (1e4 + noise), huge, tiny, constant, ties, specials."""
    f16 = dtype == np.float16
    kind = draw(st.sampled_from(["ordinary", "offset", "huge", "tiny", "constant", "ties", "specials"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    count = int(np.prod(shape))
    if kind == "ordinary":
        data = rng.standard_normal(count) * draw(st.sampled_from([1e-3, 1.0, 30.0]))
    elif kind == "offset":  # a large mean and small deviations: 1e4 + noise (FLOAT16: 1000 + noise)
        data = (1000.0 if f16 else 1e4) + rng.standard_normal(count) * (1.0 if f16 else 1e-2)
    elif kind == "huge":
        top = 6e4 if f16 else 3e38
        data = rng.uniform(-1, 1, count) * top * draw(st.sampled_from([1.0, 1e-3]))
    elif kind == "tiny":
        bottom = 6e-8 if f16 else 1e-42
        data = rng.integers(-40, 40, count) * bottom * draw(st.sampled_from([1.0, 1e3]))
    elif kind == "constant":
        data = np.full(count, draw(st.sampled_from([0.0, 1.0, -3.5, 1e4 if not f16 else 1e3])))
    elif kind == "ties":
        data = rng.choice(np.array([-1.0, 0.5, 2.0]), count)
    else:
        data = rng.standard_normal(count)
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, count - 1))] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    with np.errstate(over="ignore"):
        return kind, data.astype(dtype).reshape(shape)


@dataclass(frozen=True)
class MvnCase:
    level: str
    type_name: str
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    scale_sizes: tuple[int, ...] | None
    bias_sizes: tuple[int, ...] | None
    strides: tuple[tuple[int, ...] | None, ...]      # input, scale, bias, output
    normalize: bool
    epsilon: float
    activation: tuple[str, tuple[float, ...]] | None
    kind: str
    x: np.ndarray
    scale: np.ndarray | None
    bias: np.ndarray | None

    def descriptor(self) -> dml.MeanVarianceNormalization1OperatorDesc:
        data_type = dml.DataType[self.type_name]

        def desc(sizes: tuple[int, ...] | None, strides: tuple[int, ...] | None) -> dml.TensorDesc | None:
            return None if sizes is None else T(data_type, list(sizes), None if strides is None else list(strides))

        activation = None
        if self.activation is not None:
            name, parameters = self.activation
            activation = getattr(dml, ACTIVATION_CLASSES[name])(*parameters)
        tensor = desc(self.sizes, self.strides[0])
        output = desc(self.sizes, self.strides[3])
        assert tensor is not None and output is not None
        return MVN(tensor, desc(self.scale_sizes, self.strides[1]), desc(self.bias_sizes, self.strides[2]), output,
                   list(self.axes), self.normalize, self.epsilon, activation)


def _consistent(x: np.ndarray, strides: tuple[int, ...] | None) -> np.ndarray:
    """The logical array a buffer at these strides holds (equal along stride-0 dimensions)."""
    return read_buffer(build_buffer(x, strides), x.dtype, x.shape, strides)


@st.composite
def mvn_cases(draw: st.DrawFn) -> MvnCase:
    level = draw(st.sampled_from(LEVELS[LEVELS.index("2_1"):]))
    rank = draw(st.integers(1, 8)) if _at_least(level, "3_1") else 4
    type_name = draw(st.sampled_from(["FLOAT32", "FLOAT16"]))
    dtype = NUMPY_DTYPES[type_name]
    sizes = draw(shapes(rank, max_elements=2048, max_side=48))
    axes = tuple(draw(st.permutations(range(rank)))[: draw(st.integers(1, rank))])
    presence = draw(st.sampled_from(["both", "neither", "scale", "bias"] if _at_least(level, "5_2")
                                    else ["both", "neither"]))

    def side_sizes() -> tuple[int, ...]:
        result = []
        for dim, size in enumerate(sizes):
            must_match = dim == 1 and rank > 1 and not _at_least(level, "4_0")
            result.append(size if must_match or not draw(st.booleans()) else 1)
        return tuple(result)

    scale_sizes = side_sizes() if presence in ("both", "scale") else None
    bias_sizes = side_sizes() if presence in ("both", "bias") else None
    strides = (draw(strides_for(sizes)),
               None if scale_sizes is None else draw(strides_for(scale_sizes)),
               None if bias_sizes is None else draw(strides_for(bias_sizes)),
               draw(strides_for(sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False)))
    kind, x = draw(values_for(dtype, sizes))
    x = _consistent(x, strides[0])
    side = st.sampled_from([1.0, -1.0, 0.0, 0.5, 3.0, -2.25, 1e-3])

    def side_values(sizes_: tuple[int, ...] | None, side_strides: tuple[int, ...] | None) -> np.ndarray | None:
        if sizes_ is None:
            return None
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = (rng.standard_normal(sizes_) * draw(side)).astype(dtype)
        return _consistent(values, side_strides)

    scale = side_values(scale_sizes, strides[1])
    bias = side_values(bias_sizes, strides[2])
    normalize = draw(st.booleans())
    epsilon = _float32(draw(st.sampled_from([1e-5, 1e-3, 1.0, 0.0, 1e-30])))
    activation = draw(activation_choices(level))
    note(f"level={level} {type_name} sizes={sizes} axes={axes} scale={scale_sizes} bias={bias_sizes} "
         f"strides={strides} normalize={normalize} epsilon={epsilon} activation={activation} kind={kind}")
    return MvnCase(level, type_name, sizes, axes, scale_sizes, bias_sizes, strides, normalize, epsilon, activation,
                   kind, x, scale, bias)


@cache
def _device(level: str) -> dml.Device:
    return dml.Device(feature_level=level)


def compile_case(case: MvnCase) -> dml.CompiledOperator:
    device = _device(case.level)
    return device.compile_operator(device.create_operator(case.descriptor()))


def allowed_bounds(case: MvnCase) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, must_be_nan, anything) per output element: the accuracy the kernel promises.

    The kernel computes in FLOAT32 (float64 statistics), so its normalized value y may differ from the exact one by
    a few units of FLOAT32 rounding of each term: 16 u (u = 2^-24) of |Scale| * rstd * (|x - mean| + the mean
    absolute deviation) (rounding of x - mean and of the statistics) and of |Bias|, plus FLOAT32's absolute
    resolution 2^-149 carried through rstd and Scale. The activation is then evaluated in FLOAT32: its result is
    allowed to be what the exact function gives anywhere on [y - delta, y + delta], within 16 u relative plus the
    smallest normal FLOAT32 (subnormal results may flush). The bounds are rounded (monotonically) to the output type.
    Where Scale is infinite and x - mean is within that promised error of 0, the sign of the product (or whether it
    is 0 * inf = NaN) is not settled by the promise: any value, NaN included, is allowed there (`anything`). A kernel
    with float64 statistics (the cpu) settles it; one with compensated FLOAT32 statistics (the gpu) may not.
    """
    dtype = NUMPY_DTYPES[case.type_name]
    x64 = case.x.astype(np.float64)
    y = reference_normalized(case.x, case.scale, case.bias, case.axes, case.normalize, case.epsilon)
    mean, variance = reference_statistics(case.x, case.axes)
    with np.errstate(all="ignore"):
        rstd = 1.0 / np.sqrt(variance + case.epsilon) if case.normalize else np.ones_like(variance)
        deviation = np.abs(x64 - mean)
        spread = deviation.mean(axis=tuple(case.axes), keepdims=True)
        scale = np.ones(1) if case.scale is None else np.abs(case.scale.astype(np.float64))
        bias = np.zeros(1) if case.bias is None else np.abs(case.bias.astype(np.float64))
        gain = scale * rstd
        delta = 16 * U32 * (gain * (deviation + spread) + bias) + 4 * 2.0**-149 * gain + 2.0**-140
        delta = np.broadcast_to(delta, y.shape)
        anything = np.broadcast_to(~np.isfinite(scale) & (deviation <= 16 * U32 * (deviation + spread)), y.shape)
    name, parameters = case.activation if case.activation is not None else (None, ())
    with np.errstate(all="ignore"):
        ends = (y - delta, y + delta)
        values = [apply_activation(name, parameters, ends[0]), apply_activation(name, parameters, y),
                  apply_activation(name, parameters, ends[1])]
        for turn in activation_turns(name, parameters):   # a turn inside the interval (ELU with Alpha < 0, GELU)
            inside = (ends[0] < turn) & (turn < ends[1])
            if inside.any():
                values.append(np.where(inside, apply_activation(name, parameters, np.array([turn]))[0], values[1]))
        candidates = np.stack(values)
    must_be_nan = np.isnan(candidates[1])
    with np.errstate(all="ignore"):
        finite_y = np.isfinite(y) & np.isfinite(delta)
        with warnings.catch_warnings():  # an all-NaN column is a NaN expected
            warnings.simplefilter("ignore", RuntimeWarning)
            low = np.where(finite_y, np.nanmin(candidates, axis=0), candidates[1])
            high = np.where(finite_y, np.nanmax(candidates, axis=0), candidates[1])
        tolerance = 16 * U32 * np.maximum(np.abs(low), np.abs(high)) + 2.0**-126
        tolerance = np.where(np.isfinite(tolerance), tolerance, 0.0)
        return (np.asarray((low - tolerance).astype(dtype), np.float64),
                np.asarray((high + tolerance).astype(dtype), np.float64), must_be_nan & ~anything, anything)


def check_result(case: MvnCase, got: np.ndarray) -> None:
    assert got.shape == case.sizes and got.dtype == NUMPY_DTYPES[case.type_name]
    low, high, must_be_nan, anything = allowed_bounds(case)
    value = got.astype(np.float64)
    nan_ok = (np.isnan(value) == must_be_nan) | anything
    with np.errstate(invalid="ignore"):
        in_bounds = must_be_nan | anything | ((low <= value) & (value <= high))
    # Where the normalized value itself lies beyond FLOAT32's range, FLOAT32 computation holds it as +-inf: the
    # activation of that infinity (NaN included, e.g. Alpha 0 times inf) is as right as the exact result.
    y = reference_normalized(case.x, case.scale, case.bias, case.axes, case.normalize, case.epsilon)
    with np.errstate(all="ignore"):
        overflowed = np.isfinite(y) & (np.abs(y) >= float(np.finfo(np.float32).max))
        name, parameters = case.activation if case.activation is not None else (None, ())
        of_infinity = apply_activation(name, parameters, np.where(overflowed, np.sign(y) * np.inf, 0.0)).astype(
            NUMPY_DTYPES[case.type_name]).astype(np.float64)
        as_infinity = overflowed & ((value == of_infinity) | (np.isnan(value) & np.isnan(of_infinity)))
    bad = np.argwhere(~((nan_ok & in_bounds) | as_infinity))
    if bad.size:
        index = tuple(bad[0])
        raise AssertionError(f"{len(bad)} of {got.size} outputs out of bounds; first at {index}: got {got[index]!r}, "
                             f"allowed [{low[index]!r}, {high[index]!r}] (nan expected: {must_be_nan[index]}), "
                             f"normalized value {y[index]!r}")


def test_checker_rejects_a_float32_mean_of_offset_data() -> None:
    # 1e4 + noise: a mean rounded to FLOAT32 shifts every deviation by up to half a unit at 1e4 (2^-11 ~ 5e-4),
    # ~5% of the noise; the bounds must not accept that.
    rng = np.random.default_rng(0)
    x = (1e4 + rng.standard_normal((1, 64)) * 1e-2).astype(np.float32)
    case = MvnCase("6_4", "FLOAT32", (1, 64), (1,), None, None, (None, None, None, None), True, 0.0, None, "offset",
                   x, None, None)
    mean32 = np.float32(x.astype(np.float64).mean())
    bad = ((x - mean32) / np.float32(x.astype(np.float64).std())).astype(np.float32)
    good = reference_normalized(x, None, None, (1,), True, 0.0).astype(np.float32)
    check_result(case, good)
    with pytest.raises(AssertionError):
        check_result(case, bad)


@given(case=mvn_cases())
def test_mvn_matches_reference(case: MvnCase) -> None:
    scale = case.scale if case.scale_sizes is not None else None
    bias = case.bias if case.bias_sizes is not None else None
    (got,) = compile_case(case)(case.x, scale, bias)
    check_result(case, got)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(case=mvn_cases(), data=st.data())
def test_mvn_raw_buffers(case: MvnCase, data: st.DataObject) -> None:
    check_raw_buffers(case, data)


@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(case=mvn_cases(), data=st.data())
def test_mvn_raw_buffers_with_streaming_stores(case: MvnCase, data: st.DataObject) -> None:
    # Large outputs with a contiguous run are written through a staging block with non-temporal stores; a zero
    # threshold sends every such output that way, heads and tails of unaligned rows included.
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES = 0
    try:
        check_raw_buffers(case, data)
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES = saved


@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("activation", [None, ("RELU", ()), ("GELU", ())])
def test_streamed_output_pipeline(type_name: str, activation: tuple[str, tuple[float, ...]] | None) -> None:
    # The streamed output of one block is written while the next is computed, and the next group's input is
    # prefetched meanwhile: 24 groups of 5000 elements (three blocks each, several chunks), threaded (several groups
    # per thread), written at an unaligned offset (partial lines at both ends), Epsilon 0 so that the constant
    # groups take the float64 path between FLOAT32 ones (for no activation and RELU that switches between writing
    # directly and staging, with lines still pending). Every element checked, no byte outside written.
    rng = np.random.default_rng(11)
    dtype = NUMPY_DTYPES[type_name]
    x = (rng.standard_normal((24, 5000)) * 3 + 5).astype(dtype)
    x[[3, 4, 10, 23]] = dtype.type(2.5)
    side = (rng.standard_normal((1, 5000)) * 0.5 + 1).astype(dtype)
    case = MvnCase("6_4", type_name, (24, 5000), (1,), (1, 5000), (1, 5000), (None, None, None, None), True, 0.0,
                   activation, "pipeline", x, side, side)
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES = 0
    try:
        compiled = compile_case(case)
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES = saved
    out_offset = 80  # 16 bytes into a line where the buffer starts on one; rows of 5000 end inside lines anyway
    out_buffer = sentinel_bytes(out_offset + x.nbytes + 70, seed=3)
    before = out_buffer.copy()
    compiled.execute([dml.Binding(x), dml.Binding(side), dml.Binding(side)],
                     [dml.Binding(out_buffer, offset=out_offset)])
    outside = np.ones(len(out_buffer), bool)
    outside[out_offset:out_offset + x.nbytes] = False
    assert np.array_equal(out_buffer[outside], before[outside]), "bytes outside the output were written"
    got = out_buffer[out_offset:out_offset + x.nbytes].view(dtype).reshape(x.shape)
    assert np.isnan(got[[3, 4, 10, 23]]).all()  # 0 * inf, and every activation keeps NaN
    check_result(case, got)


def check_raw_buffers(case: MvnCase, data: st.DataObject) -> None:
    """Runs the case on raw buffers at drawn byte offsets: inputs unchanged, no byte outside the output's
    elements written, and the result within the reference's bounds."""
    dtype = NUMPY_DTYPES[case.type_name]
    size = dtype.itemsize
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
    out_size = tensor_size_in_bytes(size, case.sizes, case.strides[3])
    out_buffer = sentinel_bytes(out_offset + out_size + data.draw(st.integers(0, 20)), seed=7)
    before = out_buffer.copy()
    compile_case(case).execute(inputs, [dml.Binding(out_buffer, offset=out_offset)])
    for buffer, original in buffers:
        assert np.array_equal(buffer, original), "an input buffer was modified"
    written = addressed_byte_mask(len(out_buffer), size, case.sizes, case.strides[3], byte_offset=out_offset)
    changed = np.flatnonzero((out_buffer != before) & ~written)
    assert changed.size == 0, f"bytes outside the output's elements were modified: {changed[:16].tolist()}"
    check_result(case, read_buffer(out_buffer, dtype, case.sizes, case.strides[3], byte_offset=out_offset))


@pytest.mark.parametrize(("normalize", "epsilon"), [(True, 0.0), (True, 1e-5), (False, 0.0)])
def test_large_groups_merged_from_chunks(normalize: bool, epsilon: float) -> None:
    # Groups of 300000 elements: their statistics are taken in many parts (several GPU work-groups, merged in a
    # second pass; several blocks on the CPU), which must merge right for each kind of data: 1e4 + small noise (a
    # mean rounded to FLOAT32 would be off by ~5% of the noise), magnitudes near FLOAT32's largest in one half and
    # 1e30 times smaller in the other (parts of very different scales), subnormal data, a constant row (Epsilon 0:
    # 0 / 0 = NaN; else Bias, here 0), a constant row near 1e30 (Epsilon 1e-5 is then far below the values' own
    # precision, and rstd must stay finite), a row with one +inf (mean +inf, variance NaN) and ordinary data.
    rng = np.random.default_rng(13)
    n = 300_000
    x = np.empty((8, n), np.float32)
    x[0] = 1e4 + rng.standard_normal(n) * 1e-2
    x[1] = rng.uniform(-1, 1, n) * 3e38
    x[1, n // 2:] *= np.float32(1e-30)
    x[2] = rng.integers(-40, 40, n) * 1e-42
    x[3] = 2.5
    x[4] = 1e30
    x[5] = rng.standard_normal(n)
    x[5, 123_457] = np.inf
    x[6] = rng.standard_normal(n) * 30 + 5
    x[7] = -1e4 + rng.standard_normal(n) * 1e-2
    case = MvnCase("6_4", "FLOAT32", (8, n), (1,), None, None, (None, None, None, None), normalize,
                   _float32(epsilon), None, "large", x, None, None)
    (got,) = compile_case(case)(x, None, None)
    check_result(case, got)
    assert np.isnan(got[3]).all() == (normalize and epsilon == 0.0)
    assert np.isnan(got[4]).all() == (normalize and epsilon == 0.0)
    if not normalize:
        assert np.isneginf(np.delete(got[5], 123_457)).all() and np.isnan(got[5, 123_457])


def test_large_groups_float16_with_gelu_scale_and_bias() -> None:
    # FLOAT16 through the chunked statistics, per-element Scale and Bias (a broadcast row) and GELU, the output
    # rounded once, at an odd element offset in a buffer whose other bytes must not change.
    rng = np.random.default_rng(17)
    n = 300_000
    x = (1000 + rng.standard_normal((2, n)) * 1.0).astype(np.float16)
    x[1] = (rng.standard_normal(n) * 3 - 1).astype(np.float16)
    scale = (rng.standard_normal((1, n)) * 0.5 + 1).astype(np.float16)
    bias = (rng.standard_normal((1, n)) * 0.25).astype(np.float16)
    case = MvnCase("6_4", "FLOAT16", (2, n), (1,), (1, n), (1, n), (None, None, None, None), True,
                   _float32(1e-5), ("GELU", ()), "large", x, scale, bias)
    offset = 48  # a multiple of 16 bytes, as DML requires, but not of the adapter's binding alignment
    out_buffer = sentinel_bytes(offset + x.nbytes + 6, seed=5)
    before = out_buffer.copy()
    compile_case(case).execute([dml.Binding(x), dml.Binding(scale), dml.Binding(bias)],
                               [dml.Binding(out_buffer, offset=offset)])
    outside = np.ones(len(out_buffer), bool)
    outside[offset:offset + x.nbytes] = False
    assert np.array_equal(out_buffer[outside], before[outside]), "bytes outside the output were written"
    check_result(case, out_buffer[offset:offset + x.nbytes].view(np.float16).reshape(x.shape))


@settings(max_examples=30)
@given(data=st.data())
def test_variance_of_offset_data(data: st.DataObject) -> None:
    # Data like 1e4 + small noise over the last axis of [rows, N]: the normalized output has mean 0 and variance
    # N * var / (N * var + N * eps)... i.e. with Epsilon 0 the output's own variance is 1, which a lost mean
    # (or a negative variance) would break.
    n = data.draw(st.integers(2, 3000))
    offset = data.draw(st.sampled_from([1e4, -1e4, 3e5, 1e6]))
    noise = data.draw(st.sampled_from([1e-2, 1e-1, 1.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = (offset + rng.standard_normal((3, n)) * noise).astype(np.float32)
    desc = MVN(T(F32, [3, n]), None, None, T(F32, [3, n]), [1], True, 0.0)
    (out,) = compile_mvn(desc)(x, None, None)
    exact = reference_normalized(x, None, None, [1], True, 0.0)
    constant_rows = np.ptp(x, axis=1) == 0
    out64 = out.astype(np.float64)[~constant_rows]
    np.testing.assert_allclose(out64, exact[~constant_rows], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out64.var(axis=1), 1.0, rtol=1e-4)


def test_json_model_desc_with_a_fused_activation() -> None:
    # A DxDispatch-style desc, DML spelling throughout, read by the generic JSON reader.
    from opendml.model.reader import read_operator_desc

    spec = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "ScaleTensor": None, "BiasTensor": None,   # absent optional tensors (JSON null)
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "AxisCount": 2, "Axes": [2, 3], "NormalizeVariance": True, "Epsilon": 2.75,
        "FusedActivation": {"Type": "DML_OPERATOR_ACTIVATION_LEAKY_RELU", "Alpha": 0.1},
    }
    desc = read_operator_desc("desc", MVN, spec)
    assert isinstance(desc, MVN) and desc.scale_tensor is None
    assert desc.fused_activation == dml.ActivationLeakyReluOperatorDesc(alpha=0.1)
    (out,) = compile_mvn(desc)(X_2X2, None, None)
    # LEAKY_RELU(0.1) of -0.75, -0.25, 0.25, 0.75
    np.testing.assert_allclose(out.ravel(), [-0.075, -0.025, 0.25, 0.75], rtol=1e-7)


# -- the gpu's fused row pass (issue 29): statistics and output in one dispatch where it applies ------------------

ROW_PATH_CASES = [
    # (sizes, axes, input strides, type, fused where specialized)
    ((3, 1000), (1,), None, "FLOAT32", True),            # rows not a multiple of the work-group: partial slots
    ((5, 1), (1,), None, "FLOAT32", True),               # one-element rows
    ((2, 1, 3, 7), (2, 3), None, "FLOAT32", True),       # a size-1 kept dimension between kept ones
    ((300, 6), (1,), (1, 300), "FLOAT32", True),         # rows of strided elements, still the trailing axis
    ((6, 300), (0,), None, "FLOAT32", False),            # Axes not trailing: statistics, then the output pass
    ((3, 1000), (1,), None, "FLOAT16", False),           # a 16-bit output: the word-owning output pass
    ((2, 5000), (1,), None, "FLOAT32", False),           # groups cut into chunks, merged in a second pass
]


@pytest.mark.parametrize(("sizes", "axes", "strides", "type_name", "fused"), ROW_PATH_CASES)
def test_row_path_edges(sizes: tuple[int, ...], axes: tuple[int, ...], strides: tuple[int, ...] | None,
                        type_name: str, fused: bool, backend_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Scale per element of a row (broadcast over the groups) and Bias one value; the input read through its strides
    # at an offset, the output between sentinel bytes. On the gpu, with specialized and with generic shaders: the
    # fused row pass is taken exactly where it applies (specialized, one chunk per group, FLOAT32, Axes trailing),
    # the statistics pass then the output pass elsewhere.
    import opendml.backends.gpu.specialize as specialize

    rng = np.random.default_rng(29)
    dtype = np.dtype(type_name.lower())
    x = (rng.standard_normal(sizes) * 3 + 2).astype(dtype)
    side = tuple(size if axis in axes else 1 for axis, size in enumerate(sizes))
    scale = (rng.standard_normal(side) + 1).astype(dtype)
    bias = np.full((1,) * len(sizes), 0.5, dtype)
    case = MvnCase("6_4", type_name, sizes, axes, side, bias.shape, (strides, None, None, None), True,
                   _float32(1e-5), None, "row path", x, scale, bias)
    source = build_buffer(x, strides, byte_offset=16)
    for specialized in {"gpu": [True, False], "gpu-generic": [False]}.get(backend_name, [specialize.ENABLED]):
        monkeypatch.setattr(specialize, "ENABLED", specialized)
        compiled = compile_case(case)
        out_buffer = sentinel_bytes(16 + x.nbytes + 8, seed=7)
        before = out_buffer.copy()
        compiled.execute([dml.Binding(source, offset=16), dml.Binding(build_buffer(scale, None)),
                          dml.Binding(build_buffer(bias, None))], [dml.Binding(out_buffer, offset=16)])
        outside = np.ones(len(out_buffer), bool)
        outside[16:16 + x.nbytes] = False
        assert np.array_equal(out_buffer[outside], before[outside]), "bytes outside the output were written"
        check_result(case, read_buffer(out_buffer, dtype, sizes, None, byte_offset=16))
        if backend_name.startswith("gpu"):
            kernel = compiled._kernel   # type: ignore[attr-defined]
            assert (kernel.output is None) == (fused and specialized), specialized
