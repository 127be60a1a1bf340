"""The 17 activations as standalone operators (DML_ACTIVATION_*_OPERATOR_DESC with InputTensor and OutputTensor):
goldens worked out by hand from each page's formula, every row of each page's support table, a bad-input table with
message regexes, in-place execution where the page allows it, the fused and standalone paths agreeing bit for bit,
and hypothesis properties through raw buffers against tests/reference.py (every activation, FLOAT32, FLOAT16 and
the integer types the tables allow; ranks, strides with zero-stride broadcast inputs, NaN and infinities)."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import ACTIVATION_PARAMETERS, apply_activation, reference_activation_integer
from strategies import (
    OUTPUT_STRIDE_KINDS,
    T,
    build_buffer,
    execute_between_sentinels,
    read_buffer,
    shapes,
    strides_for,
)

import opendml as dml
from opendml.backends.cpu import memory_kernels
from opendml.ops.activations import ActivationOperatorDesc

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
NAMES = list(ACTIVATION_PARAMETERS)
CLASSES: dict[str, type[dml.OperatorDesc]] = {
    "LINEAR": dml.ActivationLinearOperatorDesc, "SIGMOID": dml.ActivationSigmoidOperatorDesc,
    "HARD_SIGMOID": dml.ActivationHardSigmoidOperatorDesc, "TANH": dml.ActivationTanhOperatorDesc,
    "SCALED_TANH": dml.ActivationScaledTanhOperatorDesc, "RELU": dml.ActivationReluOperatorDesc,
    "LEAKY_RELU": dml.ActivationLeakyReluOperatorDesc, "THRESHOLDED_RELU": dml.ActivationThresholdedReluOperatorDesc,
    "ELU": dml.ActivationEluOperatorDesc, "CELU": dml.ActivationCeluOperatorDesc,
    "SCALED_ELU": dml.ActivationScaledEluOperatorDesc, "SOFTPLUS": dml.ActivationSoftplusOperatorDesc,
    "PARAMETRIC_SOFTPLUS": dml.ActivationParametricSoftplusOperatorDesc,
    "SOFTSIGN": dml.ActivationSoftsignOperatorDesc, "IDENTITY": dml.ActivationIdentityOperatorDesc,
    "SHRINK": dml.ActivationShrinkOperatorDesc, "GELU": dml.ActivationGeluOperatorDesc,
}

# Each page's "Tensor support" tables, copied by hand: (level, dimension counts, data types), the same for
# InputTensor and OutputTensor; and the level in its "Availability" section.
FLOATS = ["FLOAT32", "FLOAT16"]
SHARED_ROWS = [("3_0", (1, 8), FLOATS), ("2_0", (4, 5), FLOATS), ("1_0", (4, 4), FLOATS)]
PAGE_TABLES: dict[str, list[tuple[str, tuple[int, int], list[str]]]] = {
    **{name: SHARED_ROWS for name in NAMES},
    "RELU": [("5_1", (1, 8), [*FLOATS, "INT32", "INT16", "INT8"]), *SHARED_ROWS],
    "CELU": [("3_0", (1, 8), FLOATS)],
    "SHRINK": [("5_1", (1, 8), [*FLOATS, "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]),
               ("3_0", (1, 8), FLOATS), ("2_0", (4, 5), FLOATS)],
    "GELU": [("5_1", (1, 8), FLOATS)],
}
INTRODUCED = {name: "1_0" for name in NAMES} | {"CELU": "3_0", "SHRINK": "2_0", "GELU": "5_1"}
# Every page but GELU's: "This operator supports in-place execution, meaning that the output tensor is permitted
# to alias InputTensor during binding."
IN_PLACE = {name for name in NAMES if name != "GELU"}
LEVELS = [level.name[len("LEVEL_"):] for level in dml.FeatureLevel]
U = 2.0**-24


def _at_least(level: str, minimum: str) -> bool:
    return dml.FeatureLevel.parse(level) >= dml.FeatureLevel.parse(minimum)


@cache
def device(backend: str, level: str = "6_4") -> dml.Device:
    return dml.Device(feature_level=level, backend=backend)


def activation(name: str, *parameters: float, tensor: dml.TensorDesc | None = None,
               output: dml.TensorDesc | None = None) -> dml.OperatorDesc:
    """The standalone activation over `tensor` (output: `output`, or the same desc)."""
    return CLASSES[name](*parameters, input_tensor=tensor, output_tensor=output or tensor)  # type: ignore[call-arg]


def compile_standalone(backend: str, desc: dml.OperatorDesc, level: str = "6_4") -> dml.CompiledOperator:
    dev = device(backend, level)
    return dev.compile_operator(dev.create_operator(desc))


# -- goldens ----------------------------------------------------------------------------------------------------------

X = [-2.0, -1.0, 0.0, 1.0, 2.0]
# Worked out with each page's formula. e^-2 = 0.1353352832, e^-1 = 0.3678794412, e = 2.7182818285,
# e^2 = 7.3890560989, e^-0.5 = 0.6065306597; tanh 0.5 = 0.4621171573, tanh 1 = 0.7615941560,
# tanh 2 = 0.9640275801; Phi(1) = 0.8413447461, Phi(2) = 0.9772498681.
GOLDENS: list[tuple[str, tuple[float, ...], list[float]]] = [
    # Alpha x + Beta with Alpha 2, Beta 1 (no defaults)
    ("LINEAR", (2.0, 1.0), [-3, -1, 1, 3, 5]),
    # 1 / (1 + e^-x): 1 / 8.3890560989, 1 / 3.7182818285, 1 / 2, and 1 minus the first two
    ("SIGMOID", (), [0.1192029220, 0.2689414214, 0.5, 0.7310585786, 0.8807970780]),
    # defaults Alpha 0.2, Beta 0.5: max(0, min(0.2 x + 0.5, 1))
    ("HARD_SIGMOID", (), [0.1, 0.3, 0.5, 0.7, 0.9]),
    # Alpha 1, Beta 2: 2x + 1 clamped to [0, 1]
    ("HARD_SIGMOID", (1.0, 2.0), [0, 1, 1, 1, 1]),
    # (1 - e^-2x) / (1 + e^-2x)
    ("TANH", (), [-0.9640275801, -0.7615941560, 0, 0.7615941560, 0.9640275801]),
    # defaults Alpha 1, Beta 0.5: tanh(x / 2)
    ("SCALED_TANH", (), [-0.7615941560, -0.4621171573, 0, 0.4621171573, 0.7615941560]),
    ("RELU", (), [0, 0, 0, 1, 2]),
    # default Alpha 0.01
    ("LEAKY_RELU", (), [-0.02, -0.01, 0, 1, 2]),
    # default Alpha 1: x > 1 keeps x (1 itself is not above the threshold)
    ("THRESHOLDED_RELU", (), [0, 0, 0, 0, 2]),
    # default Alpha 1: e^x - 1 below 0
    ("ELU", (), [-0.8646647168, -0.6321205588, 0, 1, 2]),
    # Alpha 0.5: 0.5 (e^x - 1)
    ("ELU", (0.5,), [-0.4323323584, -0.3160602794, 0, 1, 2]),
    # default Alpha 1: max(0, x) + min(0, e^x - 1)
    ("CELU", (), [-0.8646647168, -0.6321205588, 0, 1, 2]),
    # Alpha 2: 2 (e^(x/2) - 1) = 2 (e^-1 - 1), 2 (e^-0.5 - 1)
    ("CELU", (2.0,), [-1.2642411177, -0.7869386806, 0, 1, 2]),
    # defaults Alpha 1.6732632423543772, Gamma 1.0507009873554805: Gamma x above 0, else Gamma Alpha (e^x - 1),
    # Gamma Alpha = 1.7580993408473766
    ("SCALED_ELU", (), [-1.5201664685, -1.1113307378, 0, 1.0507009874, 2.1014019747]),
    # default Steepness 1: ln(1 + e^x) = ln 1.1353352832, ln 1.3678794412, ln 2, ln 3.7182818285, ln 8.3890560989
    ("SOFTPLUS", (), [0.1269280110, 0.3132616875, 0.6931471806, 1.3132616875, 2.1269280110]),
    # Steepness 2: ln(1 + e^2x) / 2 = ln 1.0183156389 / 2, ln 1.1353352832 / 2, ln 2 / 2, ln 8.3890560989 / 2,
    # ln 55.5981500331 / 2
    ("SOFTPLUS", (2.0,), [0.0090749639, 0.0634640055, 0.3465735903, 1.0634640055, 2.0090749639]),
    # Alpha 2, Beta 1: 2 ln(1 + e^x)
    ("PARAMETRIC_SOFTPLUS", (2.0, 1.0), [0.2538560220, 0.6265233750, 1.3862943611, 2.6265233750, 4.2538560220]),
    # x / (1 + |x|)
    ("SOFTSIGN", (), [-2 / 3, -0.5, 0, 0.5, 2 / 3]),
    ("IDENTITY", (), X),
    # defaults Bias 0, Threshold 0.5: |x| > 0.5 keeps x
    ("SHRINK", (), X),
    # Bias 0.5, Threshold 1: 2 - 0.5 and -2 + 0.5; |x| <= 1 gives 0
    ("SHRINK", (0.5, 1.0), [-1.5, 0, 0, 0, 1.5]),
    # 0.5 x (1 + erf(x / sqrt 2)) = x Phi(x): -2 (1 - 0.9772498681), -(1 - 0.8413447461), 0, 0.8413447461, 2 Phi(2)
    ("GELU", (), [-0.0455002639, -0.1586552539, 0, 0.8413447461, 1.9544997361]),
]


@pytest.mark.parametrize(("name", "parameters", "expected"), GOLDENS,
                         ids=[f"{name}-{index}" for index, (name, _, _) in enumerate(GOLDENS)])
@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
def test_golden(name: str, parameters: tuple[float, ...], expected: list[float], data_type: dml.DataType,
                backend: str) -> None:
    tensor = T(data_type, [5])
    (out,) = compile_standalone(backend, activation(name, *parameters, tensor=tensor))(
        np.array(X, data_type.numpy_dtype))
    assert out.dtype == data_type.numpy_dtype
    if data_type == F32:
        np.testing.assert_allclose(out.astype(np.float64), expected, rtol=4e-7, atol=1e-7)
    else:  # computed in FLOAT32, rounded once to FLOAT16 (half a unit in the last place: 2^-11 relative)
        np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2**-11, atol=2**-25)


def test_every_activation_has_a_golden() -> None:
    assert {name for name, _, _ in GOLDENS} == set(NAMES)


# Tails, signs of zero and NaN, worked out by hand; each expected value is exact and compared bit for bit once
# rounded to the tensor's type.
EDGE_GOLDENS: list[tuple[str, tuple[float, ...], list[float], list[float]]] = [
    # x Phi(x): -20 Phi(-20) = -5.5e-88, -100 Phi(-100) = -3.7e-2174, ... all round to -0; GELU(-inf) is -0 (its
    # limit from below); 20 Phi(20) = 20 (1 - 2.8e-89) rounds to 20.
    ("GELU", (), [-20.0, -100.0, -65504.0, -math.inf, 20.0, math.inf], [-0.0, -0.0, -0.0, -0.0, 20.0, math.inf]),
    # -14 Phi(-14) = -phi(14) (1 - 1/14^2 + 3/14^4 - ...) (Mills' ratio), phi(14) = e^-98 / sqrt(2 pi) =
    # 2.7488e-43 / 2.5066 = 1.0966e-43: -1.0911e-43 = -77.86 FLOAT32 subnormal units (2^-149): -78 * 2^-149, a
    # subnormal (FLOAT16: -0)
    ("GELU", (), [-14.0], [-78 * 2.0**-149]),
    # "x if x > Alpha else 0": NaN > Alpha is false, so 0 (Alpha 1 and Alpha -1)
    ("THRESHOLDED_RELU", (), [math.nan, -math.nan], [0.0, 0.0]),
    ("THRESHOLDED_RELU", (-1.0,), [math.nan], [0.0]),
    # x - Bias if x > Threshold, x + Bias if x < -Threshold, else 0: neither comparison holds for NaN
    ("SHRINK", (), [math.nan, -math.nan], [0.0, 0.0]),
    ("SHRINK", (0.25, 1.0), [math.nan], [0.0]),
    # e^-100 / (1 + e^-100) = 3.720076e-44 = 26.55 * 2^-149: 27 * 2^-149 in FLOAT32, 0 in FLOAT16;
    # e^-88.75 / (1 + e^-88.75) = 2.859991e-39 = 2040958.08 * 2^-149 (a subnormal): 2040958 * 2^-149
    ("SIGMOID", (), [-100.0, -88.75], [27 * 2.0**-149, 2040958 * 2.0**-149]),
    # ln(1 + e^(-2 * 60)) / -2 = -e^-120 / 2 = -3.8e-53: -0 (the result is negative)
    ("SOFTPLUS", (-2.0,), [60.0, -60.0], [-0.0, -60.0]),
    # tanh(-0) = -0; tanh(-+2^-150) = -+2^-150 (1 - 2^-300 / 3) rounds to -+0 (a tie would go to even, too)
    ("TANH", (), [-0.0, 0.0], [-0.0, 0.0]),
    ("SCALED_TANH", (1.0, 0.5), [-0.0, -(2.0**-149), 2.0**-149], [-0.0, -0.0, 0.0]),
]


@pytest.mark.parametrize(("name", "parameters", "x", "expected"), EDGE_GOLDENS,
                         ids=[f"{case[0]}-{index}" for index, case in enumerate(EDGE_GOLDENS)])
@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("fused", [False, True], ids=["standalone", "fused"])
def test_edge_golden(name: str, parameters: tuple[float, ...], x: list[float], expected: list[float],
                     data_type: dml.DataType, fused: bool, backend: str) -> None:
    dtype = data_type.numpy_dtype
    if fused:   # 0 + Bias is +0 for a Bias of -0 (in the tensor's type): those cases are the standalone's only
        pairs = [(v, e) for v, e in zip(x, expected, strict=True)
                 if not np.signbit(dtype.type(v)) or dtype.type(v) != 0]
        x, expected = [v for v, _ in pairs], [e for _, e in pairs]
    values = np.array(x, np.float64).astype(dtype)
    if fused:   # MVN1 with a zero input: Output = activation(0 + Bias)
        tensor = T(data_type, [1, len(x)])
        desc = dml.MeanVarianceNormalization1OperatorDesc(tensor, None, tensor, tensor, [1], False, 0.0,
                                                          CLASSES[name](*parameters))
        (out,) = compile_standalone(backend, desc)(np.zeros((1, len(x)), dtype), None, values.reshape(1, -1))
    else:
        (out,) = compile_standalone(backend, activation(name, *parameters, tensor=T(data_type, [len(x)])))(values)
    bits = f"u{dtype.itemsize}"
    want = np.array(expected, np.float64).astype(dtype)
    assert out.reshape(-1).view(bits).tolist() == want.view(bits).tolist(), (out.reshape(-1).tolist(),
                                                                            want.tolist())


@pytest.mark.parametrize("type_name", ["INT8", "INT16", "INT32"])
def test_golden_relu_on_integers_from_5_1(type_name: str, backend: str) -> None:
    dtype = dml.DataType[type_name].numpy_dtype
    low, high = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    tensor = T(type_name, [5])
    (out,) = compile_standalone(backend, activation("RELU", tensor=tensor), "5_1")(
        np.array([low, -1, 0, 1, high], dtype))
    assert out.dtype == dtype and out.tolist() == [0, 0, 0, 1, high]


# SHRINK on integers: x - Bias and x + Bias truncated toward zero and saturated to the type's range.
INTEGER_SHRINK_GOLDENS = [
    # Bias 1.5, Threshold 1.5 (ONNX's soft_shrink example on integers): -128 + 1.5 = -126.5 -> -126, -3 + 1.5 -> -1,
    # -2 + 1.5 = -0.5 -> 0, |x| <= 1.5 -> 0, 2 - 1.5 -> 0, 3 - 1.5 -> 1, 127 - 1.5 = 125.5 -> 125
    ("INT8", (1.5, 1.5), [-128, -3, -2, -1, 0, 1, 2, 3, 127], [-126, -1, 0, 0, 0, 0, 0, 1, 125]),
    # Bias -10, Threshold 0.5: x > 0.5 gives x + 10, saturated at 255; nothing is below -0.5
    ("UINT8", (-10.0, 0.5), [0, 1, 100, 245, 246, 255], [0, 11, 110, 255, 255, 255]),
    # Bias 100000, Threshold 0: INT16 saturates at both ends; 0 stays 0
    ("INT16", (100000.0, 0.0), [-32768, -1, 0, 1, 32767], [32767, 32767, 0, -32768, -32768]),
    # Bias 0.25, Threshold -1 (every x > -1 takes x - 0.25): 0 - 0.25 -> 0, 1 - 0.25 -> 0, 0 -> 0
    ("UINT32", (0.25, -1.0), [0, 1, 2, 4294967295], [0, 0, 1, 4294967294]),
    # Bias -2^31 (exact in FLOAT), Threshold 1e10: only x < -1e10 would shift, and no INT32 is
    ("INT32", (-2147483648.0, 1e10), [-2147483648, 0, 2147483647], [0, 0, 0]),
    # Bias 3e9, Threshold 0.5: -2^31 + 3e9 = 852516352; -1 + 3e9 and 1 - 3e9 saturate; 2^31 - 1 - 3e9 = -852516353
    ("INT32", (3e9, 0.5), [-2147483648, -1, 0, 1, 2147483647], [852516352, 2147483647, 0, -2147483648,
                                                                  -852516353]),
    ("UINT16", (0.5, 0.5), [0, 1, 2, 65535], [0, 0, 1, 65534]),
]


@pytest.mark.parametrize(("type_name", "parameters", "x", "expected"), INTEGER_SHRINK_GOLDENS,
                         ids=[f"{case[0]}-{index}" for index, case in enumerate(INTEGER_SHRINK_GOLDENS)])
def test_golden_shrink_on_integers(type_name: str, parameters: tuple[float, float], x: list[int],
                                   expected: list[int], backend: str) -> None:
    dtype = dml.DataType[type_name].numpy_dtype
    tensor = T(type_name, [len(x)])
    (out,) = compile_standalone(backend, activation("SHRINK", *parameters, tensor=tensor), "5_1")(
        np.array(x, dtype))
    assert out.tolist() == expected
    assert reference_activation_integer("SHRINK", parameters, np.array(x, dtype)).tolist() == expected


def test_broadcast_input_and_transposed_output(backend: str) -> None:
    # A [3] vector broadcast over 4 rows by a zero stride, written to a transposed, padded output.
    tensor = T(F32, [4, 3], [0, 1])
    output = T(F32, [4, 3], [1, 5])
    compiled = compile_standalone(backend, activation("LEAKY_RELU", 0.5, tensor=tensor, output=output))
    buffer = np.full(16, 7.0, np.float32)
    buffer[:3] = [-2, 0, 4]
    out = np.full(16, -9.0, np.float32)
    compiled.execute([dml.Binding(buffer)], [dml.Binding(out)])
    assert out.tolist() == [-1, -1, -1, -1, -9, 0, 0, 0, 0, -9, 4, 4, 4, 4, -9, -9]


# -- every row of each page's support table ---------------------------------------------------------------------------

ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name not in ("UNKNOWN", "UINT4", "INT4")]
TABLE_LEVELS = ["1_0", "2_0", "2_1", "3_0", "5_0", "5_1", "6_4"]


@pytest.mark.parametrize("name", NAMES)
def test_every_row_of_the_page(name: str, backend: str) -> None:
    for level in TABLE_LEVELS:
        dev = device(backend, level)
        rows = [row for row in PAGE_TABLES[name] if _at_least(level, row[0])]
        allowed = max(rows, key=lambda row: dml.FeatureLevel.parse(row[0])) if rows else None
        for type_name in ALL_TYPES:
            if not dev.check_feature_support(data_type=type_name):
                continue
            for rank in (1, 3, 4, 5, 8):
                tensor = T(type_name, [2] * rank)
                ok = allowed is not None and type_name in allowed[2] and allowed[1][0] <= rank <= allowed[1][1]
                desc = activation(name, *((1.0,) * len(ACTIVATION_PARAMETERS[name])), tensor=tensor)
                if ok:
                    dev.create_operator(desc)
                else:
                    with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                        dev.create_operator(desc)


def test_support_tables_are_listed_per_activation() -> None:
    for name, cls in CLASSES.items():
        tables = cls.support_tables()
        assert list(tables) == [""]
        levels = sorted(str(row.level) for row in tables[""])
        assert levels == sorted(level for level, _, _ in PAGE_TABLES[name]), name


# -- bad descriptors ------------------------------------------------------------------------------------------------

def _bad_cases() -> list[tuple[str, Callable[[], dml.OperatorDesc], str, type[Exception], str]]:
    x4 = T(F32, [1, 2, 3, 4])
    cases: list[tuple[str, Callable[[], dml.OperatorDesc], str, type[Exception], str]] = [
        ("input absent", lambda: dml.ActivationReluOperatorDesc(output_tensor=x4), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_RELU: InputTensor is absent; a standalone activation needs both InputTensor and "
         r"OutputTensor"),
        ("output absent", lambda: dml.ActivationTanhOperatorDesc(input_tensor=x4), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_TANH: OutputTensor is absent"),
        ("data types differ", lambda: activation("SIGMOID", tensor=x4, output=T(F16, [1, 2, 3, 4])), "6_4",
         dml.ValidationError, r"DML_OPERATOR_ACTIVATION_SIGMOID: OutputTensor.DataType is FLOAT16; it must equal "
                              r"InputTensor.DataType \(FLOAT32\)"),
        ("ranks differ", lambda: activation("ELU", tensor=x4, output=T(F32, [2, 3, 4])), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_ELU: OutputTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount "
         r"\(4\)"),
        ("sizes differ", lambda: activation("SOFTSIGN", tensor=x4, output=T(F32, [1, 2, 4, 3])), "6_4",
         dml.ValidationError, r"DML_OPERATOR_ACTIVATION_SOFTSIGN: OutputTensor.Sizes is \[1, 2, 4, 3\]; it must "
                              r"equal InputTensor.Sizes \[1, 2, 3, 4\]"),
        ("integer type of no level", lambda: activation("LEAKY_RELU", tensor=T("INT32", [4])), "6_4",
         dml.ValidationError, r"DML_OPERATOR_ACTIVATION_LEAKY_RELU: InputTensor.DataType INT32 is not supported; at "
                              r"feature level 6_4 it must be one of FLOAT32, FLOAT16"),
        ("RELU's unsigned types", lambda: activation("RELU", tensor=T("UINT8", [4])), "6_4", dml.ValidationError,
         r"InputTensor.DataType UINT8 is not supported; at feature level 6_4 it must be one of FLOAT32, FLOAT16, "
         r"INT32, INT16, INT8"),
        ("FLOAT64", lambda: activation("GELU", tensor=T("FLOAT64", [4])), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_GELU: InputTensor.DataType FLOAT64 is not supported"),
        ("RELU INT32 below 5_1", lambda: activation("RELU", tensor=T("INT32", [4])), "5_0", dml.UnsupportedError,
         r"DML_OPERATOR_ACTIVATION_RELU: InputTensor.DataType INT32 needs feature level 5_1; the device is at 5_0"),
        ("SHRINK UINT16 below 5_1", lambda: activation("SHRINK", tensor=T("UINT16", [4])), "3_0",
         dml.UnsupportedError, r"DML_OPERATOR_ACTIVATION_SHRINK: InputTensor.DataType UINT16 needs feature level "
                               r"5_1; the device is at 3_0"),
        ("3 dimensions at 2_0", lambda: activation("SIGMOID", tensor=T(F32, [2, 3, 4])), "2_0",
         dml.UnsupportedError, r"DML_OPERATOR_ACTIVATION_SIGMOID: InputTensor.DimensionCount 3 needs feature level "
                               r"3_0; the device is at 2_0"),
        ("5 dimensions at 1_0", lambda: activation("TANH", tensor=T(F32, [1, 1, 2, 3, 4])), "1_0",
         dml.UnsupportedError, r"InputTensor.DimensionCount 5 needs feature level 2_0; the device is at 1_0"),
        ("9 dimensions", lambda: activation("RELU", tensor=T(F32, [1] * 9)), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_RELU: InputTensor.DimensionCount is 9; it must be 1 to 8"),
        ("SHRINK's 4 dimensions at 2_0 only", lambda: activation("SHRINK", tensor=T(F32, [2, 3])), "2_1",
         dml.UnsupportedError, r"DML_OPERATOR_ACTIVATION_SHRINK: InputTensor.DimensionCount 2 needs feature level "
                               r"3_0; the device is at 2_1"),
        ("GELU at 5_0", lambda: activation("GELU", tensor=x4), "5_0", dml.UnsupportedError,
         r"DML_OPERATOR_ACTIVATION_GELU needs feature level 5_1; the device is at 5_0"),
        ("CELU at 2_0", lambda: activation("CELU", tensor=x4), "2_0", dml.UnsupportedError,
         r"DML_OPERATOR_ACTIVATION_CELU needs feature level 3_0; the device is at 2_0"),
        ("SHRINK at 1_0", lambda: activation("SHRINK", tensor=x4), "1_0", dml.UnsupportedError,
         r"DML_OPERATOR_ACTIVATION_SHRINK needs feature level 2_0; the device is at 1_0"),
        ("Steepness below 1 before 6_4", lambda: activation("SOFTPLUS", 0.5, tensor=x4), "6_3",
         dml.UnsupportedError, r"DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness 0.5 needs feature level 6_4 \(below it "
                               r"Steepness must be at least 1\); the device is at 6_3"),
        ("Steepness 0", lambda: activation("SOFTPLUS", 0.0, tensor=x4), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness is 0; it must be nonzero"),
        ("CELU's Alpha 0", lambda: activation("CELU", 0.0, tensor=x4), "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_CELU: Alpha is 0; it must be nonzero"),
        ("overlapping output strides", lambda: activation("RELU", tensor=T(F32, [2, 2]), output=T(F32, [2, 2],
                                                                                                   [0, 1])),
         "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_RELU: OutputTensor.Strides \[0, 1\] map two elements of Sizes \[2, 2\] onto the "
         r"same memory"),
        ("TotalTensorSizeInBytes too small", lambda: activation("RELU", tensor=T(F32, [4],
                                                                                 total_tensor_size_in_bytes=8)),
         "6_4", dml.ValidationError,
         r"DML_OPERATOR_ACTIVATION_RELU: InputTensor.TotalTensorSizeInBytes is 8; it must be at least 16"),
    ]
    return cases


BAD = _bad_cases()


@pytest.mark.parametrize(("case_id", "build", "level", "error", "message"), BAD, ids=[case[0] for case in BAD])
def test_bad_descriptors(case_id: str, build: Callable[[], dml.OperatorDesc], level: str, error: type[Exception],
                         message: str, backend: str) -> None:
    with pytest.raises(error, match=message):
        device(backend, level).create_operator(build())


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.ActivationLinearOperatorDesc(math.inf, 0.0, input_tensor=T(F32, [4]), output_tensor=T(F32, [4])),
     r"DML_OPERATOR_ACTIVATION_LINEAR: Alpha is inf; it must be a finite FLOAT"),
    (lambda: dml.ActivationShrinkOperatorDesc(0.0, math.nan, input_tensor=T(F32, [4]), output_tensor=T(F32, [4])),
     r"DML_OPERATOR_ACTIVATION_SHRINK: Threshold is nan; it must be a finite FLOAT"),
    (lambda: dml.ActivationReluOperatorDesc(input_tensor=T(F32, [4]), output_tensor=np.zeros(4)),
     r"DML_OPERATOR_ACTIVATION_RELU: OutputTensor is \[0.0, 0.0, 0.0, 0.0\] \(1-d ndarray of float64\); it must "
     r"be a TensorDesc$"),
])
def test_bad_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        build()


def test_the_same_descriptors_pass_where_the_rules_allow(backend: str) -> None:
    x4 = T(F32, [1, 2, 3, 4])
    for level, desc in [("5_1", activation("RELU", tensor=T("INT8", [4]))),
                        ("5_1", activation("SHRINK", tensor=T("UINT32", [4]))),
                        ("5_1", activation("GELU", tensor=x4)), ("3_0", activation("CELU", tensor=x4)),
                        ("2_0", activation("SHRINK", tensor=x4)),
                        ("2_0", activation("SIGMOID", tensor=T(F32, [1] * 5))),
                        ("1_0", activation("TANH", tensor=x4)), ("6_4", activation("SOFTPLUS", -0.5, tensor=x4)),
                        ("6_3", activation("SOFTPLUS", 1.0, tensor=x4)), ("6_4", activation("CELU", -2.0, tensor=x4)),
                        ("6_4", activation("RELU", tensor=T(F32, [2, 2], [0, 0]), output=T(F32, [2, 2])))]:
        device(backend, level).create_operator(desc)


# -- in place -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("memory", ["host", "device"])
def test_in_place_where_the_page_allows_it(name: str, memory: str, backend: str) -> None:
    tensor = T(F16, [3, 5], [8, 1])   # padded rows: the gaps must keep their bytes
    compiled = compile_standalone(backend, activation(name, *((0.75,) * len(ACTIVATION_PARAMETERS[name])),
                                                      tensor=tensor))
    x = np.linspace(-3, 3, 15).astype(np.float16).reshape(3, 5)
    data = build_buffer(x, (8, 1), tail_bytes=4)
    (expected,) = compiled(x)
    made = device(backend).create_buffer(data) if memory == "device" else data.copy()
    if name not in IN_PLACE:
        with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_ACTIVATION_GELU: the bound ranges of InputTensor "
                                                   r"and OutputTensor overlap; an output may not share memory"):
            compiled.execute([dml.Binding(made)], [dml.Binding(made)])
        return
    compiled.execute([dml.Binding(made)], [dml.Binding(made)])
    after = np.frombuffer(made.read(), np.uint8) if memory == "device" else made
    got = read_buffer(after, np.float16, [3, 5], (8, 1))
    np.testing.assert_array_equal(got, expected)
    gaps = np.ones(data.size, bool)
    gaps[np.add.outer(np.arange(3) * 16, np.arange(10)).reshape(-1)] = False
    np.testing.assert_array_equal(after[gaps], data[gaps])


def test_in_place_needs_the_same_range_and_strides(backend: str) -> None:
    tensor = T(F32, [8])
    compiled = compile_standalone(backend, activation("RELU", tensor=tensor))
    data = np.zeros(16, np.float32)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_ACTIVATION_RELU: the bound ranges of InputTensor and "
                                               r"OutputTensor overlap without being the same; in-place execution "
                                               r"needs OutputTensor bound to exactly InputTensor's range"):
        compiled.execute([dml.Binding(data)], [dml.Binding(data, offset=16)])
    transposed = compile_standalone(backend, activation("RELU", tensor=T(F32, [2, 4], [1, 2]),
                                                        output=T(F32, [2, 4])))
    with pytest.raises(dml.BindingError, match=r"InputTensor and OutputTensor are bound to the same range but their "
                                               r"Strides differ \(\[1, 2\] and \[4, 1\]\)"):
        transposed.execute([dml.Binding(data)], [dml.Binding(data)])
    assert not data.any()  # a refused call writes nothing


# -- the fused and standalone paths agree ------------------------------------------------------------------------

SWEEP = np.concatenate([np.linspace(-12, 12, 481), [1e-30, -1e-30, 88.7, -88.7, 1e4, -1e4, 3e38, -3e38, math.inf,
                                                     -math.inf, math.nan]])
SWEEP_PARAMETERS = {
    "LINEAR": (1.5, -0.25), "HARD_SIGMOID": (0.2, 0.5), "SCALED_TANH": (1.7159, 0.6667), "LEAKY_RELU": (0.01,),
    "THRESHOLDED_RELU": (1.0,), "ELU": (1.0,), "CELU": (0.5,), "SCALED_ELU": (1.6732632, 1.050701),
    "SOFTPLUS": (2.0,), "PARAMETRIC_SOFTPLUS": (0.5, 3.0), "SHRINK": (0.25, 0.5),
}


@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", NAMES)
def test_fused_and_standalone_agree_bit_for_bit(name: str, data_type: dml.DataType, backend: str) -> None:
    """MVN1 with a zero input, NormalizeVariance FALSE and the values as Bias outputs activation(Bias): the fused
    activation on the same FLOAT32 values as the standalone one (no -0, which 0 + Bias makes +0)."""
    dtype = data_type.numpy_dtype
    with np.errstate(over="ignore"):
        values = SWEEP.astype(dtype).reshape(1, -1)
    values[values == 0] = 0  # -1e-30 is -0 in FLOAT16
    parameters = SWEEP_PARAMETERS.get(name, ())
    fused = activation(name, *parameters)
    tensor = T(data_type, [1, values.size])
    mvn = dml.MeanVarianceNormalization1OperatorDesc(tensor, None, tensor, tensor, [1], False, 0.0, fused)
    dev = device(backend)
    (through_mvn,) = dev.compile_operator(dev.create_operator(mvn))(np.zeros_like(values), None, values)
    (standalone,) = compile_standalone(backend, activation(name, *parameters, tensor=tensor))(values)
    nan = np.isnan(standalone)
    np.testing.assert_array_equal(nan, np.isnan(through_mvn))
    bits = f"u{dtype.itemsize}"  # equal values and equal signs of zero; NaN payloads aside
    np.testing.assert_array_equal(standalone.view(bits)[~nan], through_mvn.view(bits)[~nan])


# -- properties: every activation through raw buffers, against the oracle ----------------------------------------

def _float32(value: float) -> float:
    return float(np.float32(value))


@st.composite
def parameters_for(draw: st.DrawFn, name: str, level: str, integer: bool) -> tuple[float, ...] | None:
    """None (the class's defaults, where it has them) or parameters valid at `level`, rounded to FLOAT."""
    names = ACTIVATION_PARAMETERS[name]
    if name not in ("LINEAR", "PARAMETRIC_SOFTPLUS") and draw(st.booleans()):
        return None
    finite = st.floats(-4.0, 4.0, width=32, allow_subnormal=False)
    values: list[float] = []
    for parameter in names:
        if name == "SOFTPLUS":
            low = 0.125 if _at_least(level, "6_4") else 1.0
            sign = -1.0 if _at_least(level, "6_4") and draw(st.booleans()) else 1.0
            values.append(sign * draw(st.floats(low, 8.0, width=32)))
        elif name == "CELU":
            values.append(draw(st.floats(0.125, 4.0, width=32)) * draw(st.sampled_from([1.0, -1.0])))
        elif integer:  # SHRINK on integers: ties at .5, large and huge values
            values.append(draw(st.one_of(st.integers(-300, 300).map(lambda v: v / 2),
                                         st.sampled_from([0.25, -0.75, 1e5, -1e5, 3e9, -3e9, 1e20]))))
        elif parameter == "Threshold":
            values.append(draw(st.floats(-1.0, 2.0, width=32, allow_subnormal=False)))
        else:
            values.append(draw(finite))
    return tuple(_float32(value) for value in values)


@st.composite
def float_values(draw: st.DrawFn, dtype: np.dtype, count: int) -> np.ndarray:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["ordinary", "wide", "tiny", "specials"]))
    f16 = dtype == np.float16
    if kind == "ordinary":
        data = rng.standard_normal(count) * draw(st.sampled_from([1e-3, 1.0, 8.0, 30.0]))
    elif kind == "wide":
        data = rng.uniform(-1, 1, count) * (6e4 if f16 else 3e38) * draw(st.sampled_from([1.0, 1e-3, 1e-30]))
    elif kind == "tiny":
        data = rng.integers(-40, 40, count) * (6e-8 if f16 else 1e-42)
    else:
        data = rng.standard_normal(count) * 4
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, count - 1))] = draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0]))
    with np.errstate(over="ignore"):
        return data.astype(dtype)


def allowed(name: str, parameters: tuple[float, ...], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, must_be_nan) per element: the exact function anywhere within 8 u of x (u = 2^-24), within 16 u
    relative plus FLOAT32's smallest normal (subnormal results may flush), the bounds rounded to x's type."""
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        candidates = np.stack([apply_activation(name, parameters, v * (1 - 8 * U)),
                               apply_activation(name, parameters, v),
                               apply_activation(name, parameters, v * (1 + 8 * U))])
        exact = candidates[1]
        with warnings.catch_warnings():  # an all-NaN column is a NaN expected
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.nanmin(candidates, axis=0), np.nanmax(candidates, axis=0)
        tolerance = 16 * U * np.maximum(np.abs(low), np.abs(high)) + 2.0**-126
        tolerance = np.where(np.isfinite(tolerance), tolerance, 0.0)
        return ((low - tolerance).astype(x.dtype).astype(np.float64),
                (high + tolerance).astype(x.dtype).astype(np.float64), np.isnan(exact))


def _levels_for(name: str) -> list[str]:
    return [level for level in ("1_0", "2_0", "3_0", "5_1", "6_3", "6_4") if _at_least(level, INTRODUCED[name])]


@st.composite
def cases(draw: st.DrawFn, name: str) -> tuple[str, str, tuple[int, ...], tuple[int, ...] | None,
                                                  tuple[int, ...] | None, tuple[float, ...] | None, np.ndarray, str,
                                                  bool]:
    level = draw(st.sampled_from(_levels_for(name)))
    row = max((row for row in PAGE_TABLES[name] if _at_least(level, row[0])),
              key=lambda row: dml.FeatureLevel.parse(row[0]))
    type_name = draw(st.sampled_from(row[2]))
    rank = draw(st.integers(*row[1]))
    sizes = draw(shapes(rank, max_elements=96, max_side=12))
    input_strides = draw(strides_for(sizes, allow_zero=True))
    output_strides = draw(strides_for(sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    data_type = dml.DataType[type_name]
    integer = not data_type.is_float
    parameters = draw(parameters_for(name, level, integer))
    dtype = data_type.numpy_dtype
    count = int(np.prod(sizes))
    if integer:
        info = np.iinfo(dtype)
        edges = st.sampled_from([int(info.min), int(info.max), 0, -1 if info.min < 0 else 1])
        values = np.array(draw(st.lists(st.one_of(st.integers(int(info.min), int(info.max)), edges),
                                        min_size=count, max_size=count)), dtype)
    else:
        values = draw(float_values(dtype, count))
    # The tensor an input with zero strides describes (build_buffer keeps one value along each broadcast dimension).
    x = read_buffer(build_buffer(values.reshape(sizes), input_strides), dtype, sizes, input_strides)
    memory = draw(st.sampled_from(["host", "device"]))
    streamed = draw(st.sampled_from([False, False, True]))
    note(f"{name} level={level} {type_name} sizes={sizes} strides in={input_strides} out={output_strides} "
         f"parameters={parameters} memory={memory} streamed={streamed}")
    return level, type_name, sizes, input_strides, output_strides, parameters, x, memory, streamed


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=12)
@given(data=st.data())
def test_matches_the_oracle_through_raw_buffers(name: str, data: st.DataObject, backend: str) -> None:
    level, type_name, sizes, input_strides, output_strides, parameters, x, memory, streamed = data.draw(cases(name))
    data_type = dml.DataType[type_name]
    dtype = data_type.numpy_dtype

    def desc(strides: tuple[int, ...] | None) -> dml.TensorDesc:
        return T(data_type, list(sizes), None if strides is None else list(strides))

    cls = CLASSES[name]
    built = (cls(input_tensor=desc(input_strides), output_tensor=desc(output_strides)) if parameters is None else  # type: ignore[call-arg]
             cls(*parameters, input_tensor=desc(input_strides), output_tensor=desc(output_strides)))  # type: ignore[call-arg]
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES = 0 if streamed else saved  # small tensors take the streamed path too
    try:
        compiled = compile_standalone(backend, built, level)
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES = saved
    raw = execute_between_sentinels(device(backend, level), compiled,
                                    [build_buffer(x, input_strides, byte_offset=16)], dtype.itemsize, sizes,
                                    output_strides, memory=memory, seed=5, label=name)
    check_standalone(built, x, read_buffer(raw, dtype, sizes, output_strides, byte_offset=32))


def check_standalone(desc: dml.OperatorDesc, x: np.ndarray, got: np.ndarray) -> None:
    """A standalone activation's logical output against the oracle: exactly for integer tensors, within `allowed`
    for FLOAT32 and FLOAT16 (also used by test_fuzz_descriptors.py)."""
    assert isinstance(desc, ActivationOperatorDesc) and got.shape == x.shape and got.dtype == x.dtype
    name = desc.OPERATOR_TYPE.name[len("ACTIVATION_"):]
    used = tuple(_float32(value) for value in desc.parameters().values())
    if x.dtype.kind != "f":
        np.testing.assert_array_equal(got, reference_activation_integer(name, used, x))
        return
    low, high, must_be_nan = allowed(name, used, x)
    value = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.where(must_be_nan, np.isnan(value), (low <= value) & (value <= high))
    bad = np.argwhere(~ok)
    if bad.size:
        index = tuple(bad[0])
        raise AssertionError(f"{name}: {len(bad)} of {x.size} outputs out of bounds; first at {index}: "
                             f"f({x[index]!r}) = {got[index]!r}, allowed [{low[index]!r}, {high[index]!r}]")


# -- large tensors: the threaded, streamed and strided paths ---------------------------------------------------------

@pytest.mark.parametrize(("name", "type_name", "sizes", "input_strides", "output_strides"), [
    ("GELU", "FLOAT32", (1 << 20,), None, None),                      # 4 MiB on threads, plain stores
    ("LEAKY_RELU", "FLOAT32", (1 << 20,), None, None),                # 4 MiB on threads, non-temporal stores
    ("SIGMOID", "FLOAT16", (512, 1027), None, None),                  # odd rows of FLOAT16, threads
    ("TANH", "FLOAT32", (256, 1024), (1, 256), None),                 # transposed input, gathered
    ("SOFTPLUS", "FLOAT32", (1024, 300), (0, 1), (1, 1024)),          # broadcast input, transposed output
    ("SHRINK", "INT16", (300, 700), None, (704, 1)),                  # integers into padded rows
])
def test_large_tensors(name: str, type_name: str, sizes: tuple[int, ...], input_strides: tuple[int, ...] | None,
                       output_strides: tuple[int, ...] | None, backend: str) -> None:
    data_type = dml.DataType[type_name]
    dtype = data_type.numpy_dtype
    rng = np.random.default_rng(11)
    if data_type.is_float:
        values = (rng.standard_normal(int(np.prod(sizes))) * 6).astype(dtype).reshape(sizes)
    else:
        values = rng.integers(-32768, 32768, sizes).astype(dtype)
    x = read_buffer(build_buffer(values, input_strides), dtype, sizes, input_strides)
    parameters = (2.5, 100.0) if name == "SHRINK" else ()
    built = activation(name, *parameters, tensor=T(data_type, list(sizes), None if input_strides is None
                                                   else list(input_strides)),
                       output=T(data_type, list(sizes), None if output_strides is None else list(output_strides)))
    compiled = compile_standalone(backend, built)
    raw = execute_between_sentinels(device(backend), compiled, [build_buffer(x, input_strides, byte_offset=16)],
                                    dtype.itemsize, sizes, output_strides, memory="host", seed=9, label=name)
    got = read_buffer(raw, dtype, sizes, output_strides, byte_offset=32)
    if not data_type.is_float:
        np.testing.assert_array_equal(got, reference_activation_integer(name, parameters, x))
        return
    # The float64 oracle loops in Python: 4000 elements drawn at random, the first and the last.
    flat_x, flat_got = x.reshape(-1), got.reshape(-1)
    picks = np.unique(np.concatenate([[0, flat_x.size - 1], rng.integers(0, flat_x.size, 4000)]))
    used = tuple(_float32(value) for value in built.parameters().values())  # type: ignore[attr-defined]
    low, high, must_be_nan = allowed(name, used, flat_x[picks])
    value = flat_got[picks].astype(np.float64)
    assert not must_be_nan.any() and np.all((low <= value) & (value <= high))
    assert np.all(np.isfinite(flat_got))


# -- models ---------------------------------------------------------------------------------------------------------

def test_dxdispatch_model_runs_a_standalone_activation_in_place(tmp_path: Path, backend: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from opendml.cli import main

    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]}
    model = {
        "resources": {"data": {"initialValuesDataType": "FLOAT32",
                               "initialValues": {"valueCount": 6, "valueStart": -3, "valueDelta": 1}}},
        "dispatchables": {"leaky": {"type": "DML_OPERATOR_ACTIVATION_LEAKY_RELU",
                                    "desc": {"InputTensor": tensor, "OutputTensor": tensor, "Alpha": 0.5}}},
        "commands": [{"type": "dispatch", "dispatchable": "leaky",
                      "bindings": {"InputTensor": "data", "OutputTensor": "data"}},
                     {"type": "print", "resource": "data"}],
    }
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(model))
    assert main(["dispatch", str(path), "--backend", backend]) == 0
    # -3..2 with Alpha 0.5 below 0
    assert capsys.readouterr().out.splitlines() == ["Resource 'data': -1.5, -1, -0.5, 0, 1, 2"]
