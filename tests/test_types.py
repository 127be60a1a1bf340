"""The enums carry DML's numeric values (DIGEST 1.2-1.5) and parse DML's names."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml


def test_data_type_values_sizes_and_dtypes() -> None:
    expected = {  # name: (value, bytes, numpy dtype), from DirectML.h's enum order
        "FLOAT32": (1, 4, np.float32),
        "FLOAT16": (2, 2, np.float16),
        "UINT32": (3, 4, np.uint32),
        "UINT16": (4, 2, np.uint16),
        "UINT8": (5, 1, np.uint8),
        "INT32": (6, 4, np.int32),
        "INT16": (7, 2, np.int16),
        "INT8": (8, 1, np.int8),
        "FLOAT64": (9, 8, np.float64),
        "UINT64": (10, 8, np.uint64),
        "INT64": (11, 8, np.int64),
    }
    for name, (value, size, dtype) in expected.items():
        data_type = dml.DataType[name]
        assert data_type == value
        assert data_type.element_size == size
        assert data_type.numpy_dtype == np.dtype(dtype)
    assert (dml.DataType.UNKNOWN, dml.DataType.UINT4, dml.DataType.INT4) == (0, 12, 13)
    assert dml.DataType.UINT4.bits == 4


@pytest.mark.parametrize(
    "value",
    [dml.DataType.FLOAT16, 2, np.float16, np.dtype("float16"), "FLOAT16", "float16", "DML_TENSOR_DATA_TYPE_FLOAT16"],
)
def test_data_type_parse(value: object) -> None:
    assert dml.DataType.parse(value) is dml.DataType.FLOAT16


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("FLOAT128", r"^DataType is 'FLOAT128' \(neither a DML data type nor a NumPy dtype\); it must be a "
                     r"DataType: one of UNKNOWN, FLOAT32, .*, INT4 \(DML_TENSOR_DATA_TYPE_\*, or 0 to 13\), or a NumPy "
                     r"dtype that has one$"),
        (14, r"^DataType is 14; it must be a DataType: one of UNKNOWN, .* \(DML_TENSOR_DATA_TYPE_\*, or 0 to 13\)"),
        (np.complex64, r"^DataType is <class 'numpy.complex64'> \(NumPy dtype complex64 has no DML data type\); it "
                       r"must be a DataType"),
        (object(), r"^DataType is <object object at .*>; it must be a DataType"),
        (None, r"^DataType is None; it must be a DataType"),       # NumPy's float64 for None is no default here
        (np.dtype(">f4"), r"^DataType is dtype\('>f4'\) \(NumPy dtype >f4 has no DML data type\)"),
        (True, r"^DataType is True; it must be a DataType"),
        (dml.FeatureLevel.LEVEL_1_0, r"^DataType is <FeatureLevel.LEVEL_1_0: 4096>; it must be a DataType"),
    ],
)
def test_data_type_parse_errors(value: object, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        dml.DataType.parse(value)


def test_data_type_without_numpy_dtype() -> None:
    with pytest.raises(dml.ValidationError, match="DataType UINT4 has no NumPy dtype"):
        _ = dml.DataType.UINT4.numpy_dtype


def test_feature_levels_are_ordered_with_dml_values() -> None:
    names = ["1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4"]
    levels = [dml.FeatureLevel.parse(name) for name in names]
    assert levels == sorted(levels)
    assert [str(level) for level in levels] == names
    for name, level in zip(names, levels, strict=True):
        major, minor = name.split("_")
        assert level == int(major) * 0x1000 + int(minor) * 0x100
    assert dml.FeatureLevel.parse("5.2") is dml.FeatureLevel.LEVEL_5_2
    assert dml.FeatureLevel.parse("DML_FEATURE_LEVEL_5_2") is dml.FeatureLevel.LEVEL_5_2
    assert dml.FeatureLevel.parse(0x5200) is dml.FeatureLevel.LEVEL_5_2


@pytest.mark.parametrize("value", ["7_0", "5", 0x5300, None])
def test_feature_level_parse_errors(value: object) -> None:
    with pytest.raises(dml.ValidationError, match=r"^FeatureLevel is .*; it must be one of 1_0, 2_0, .*, 6_4 "
                                                  r"\(DML_FEATURE_LEVEL_\*, or their values\)$"):
        dml.FeatureLevel.parse(value)


def test_flags_and_functions() -> None:
    assert (dml.TensorFlags.NONE, dml.TensorFlags.OWNED_BY_DML) == (0, 1)
    assert [int(flag) for flag in dml.ExecutionFlags] == [1, 2, 4]  # NONE (0) is not listed as a member bit
    assert (
        dml.ExecutionFlags.parse(["ALLOW_HALF_PRECISION_COMPUTATION", "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE"])
        == dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION | dml.ExecutionFlags.DESCRIPTORS_VOLATILE
    )
    assert dml.TensorFlags.parse("DML_TENSOR_FLAG_OWNED_BY_DML") is dml.TensorFlags.OWNED_BY_DML
    with pytest.raises(dml.ValidationError, match=r"^ExecutionFlags is 8 \(0x8 has bits that are not ExecutionFlags\); "
                                                  r"it must be one of NONE, .* \(DML_EXECUTION_FLAG_\*\), an integer "
                                                  r"of those bits \(0x7\), or a list of them$"):
        dml.ExecutionFlags.parse(8)
    functions = [
        "ARGMAX",
        "ARGMIN",
        "AVERAGE",
        "L1",
        "L2",
        "LOG_SUM",
        "LOG_SUM_EXP",
        "MAX",
        "MIN",
        "MULTIPLY",
        "SUM",
        "SUM_SQUARE",
    ]
    assert [function.name for function in dml.ReduceFunction] == functions
    assert [int(function) for function in dml.ReduceFunction] == list(range(12))
    assert dml.ReduceFunction.parse("DML_REDUCE_FUNCTION_SUM") is dml.ReduceFunction.SUM
    with pytest.raises(dml.ValidationError, match=r"^ReduceFunction is 'MEAN'; it must be one of ARGMAX, ARGMIN, "):
        dml.ReduceFunction.parse("MEAN")


def test_operator_types() -> None:
    expected = {
        "REDUCE": 55,
        "SPLIT": 62,
        "ONE_HOT": 95,
        "MEAN_VARIANCE_NORMALIZATION1": 115,
        "GATHER_ND1": 140,
        "ARGMIN": 137,
        "ARGMAX": 138,
        "ACTIVATION_ELU": 35,
        "ACTIVATION_CELU": 128,
        "ACTIVATION_GELU": 157,
    }
    for name, value in expected.items():
        assert dml.OperatorType[name] == value
    assert dml.OperatorType.parse("DML_OPERATOR_REDUCE").dml_name == "DML_OPERATOR_REDUCE"
