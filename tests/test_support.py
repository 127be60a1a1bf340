"""REDUCE's support tables, row by row as the page prints them, through create_operator."""

from __future__ import annotations

import itertools

import pytest

import opendml as dml

D = dml.DataType
LEVELS = list(dml.FeatureLevel)
TEN = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
SIX = ["FLOAT32", "FLOAT16", "INT64", "INT32", "UINT64", "UINT32"]
FOUR = ["FLOAT32", "FLOAT16", "INT32", "UINT32"]
FLOATS = ["FLOAT32", "FLOAT16"]

# Copied from the REDUCE page: (functions, [(level, ranks, input types, output types or None = same as input)]).
PAGE = [
    (["ARGMIN", "ARGMAX"], [("4_1", (1, 8), TEN, ["INT64", "INT32", "UINT64", "UINT32"]),
                            ("3_0", (1, 8), EIGHT, ["INT64", "INT32", "UINT64", "UINT32"]),
                            ("2_1", (4, 4), EIGHT, ["UINT32"]),
                            ("1_0", (4, 4), FLOATS, ["UINT32"])]),
    (["AVERAGE", "L2", "LOG_SUM", "LOG_SUM_EXP"], [("3_0", (1, 8), FLOATS, None), ("1_0", (4, 4), FLOATS, None)]),
    (["L1", "SUM_SQUARE"], [("5_0", (1, 8), SIX, None), ("3_0", (1, 8), FLOATS, None), ("1_0", (4, 4), FLOATS, None)]),
    (["MIN", "MAX"], [("5_0", (1, 8), TEN, None), ("3_0", (1, 8), EIGHT, None), ("2_1", (4, 4), FOUR, None),
                      ("1_0", (4, 4), FLOATS, None)]),
    (["MULTIPLY", "SUM"], [("5_0", (1, 8), SIX, None), ("3_0", (1, 8), FOUR, None), ("2_1", (4, 4), FOUR, None),
                           ("1_0", (4, 4), FLOATS, None)]),
]
ALL_TYPES = [data_type.name for data_type in D if data_type.name not in ("UNKNOWN",)]


def _row_at(rows: list[tuple[str, tuple[int, int], list[str], list[str] | None]], level: dml.FeatureLevel
            ) -> tuple[str, tuple[int, int], list[str], list[str] | None]:
    applicable = [row for row in rows if dml.FeatureLevel.parse(row[0]) <= level]
    return max(applicable, key=lambda row: dml.FeatureLevel.parse(row[0]))


def _desc(function: str, rank: int, input_type: str, output_type: str) -> dml.ReduceOperatorDesc:
    sizes = [2] * rank
    out_sizes = [1] + [2] * (rank - 1)
    return dml.ReduceOperatorDesc(function, dml.TensorDesc(input_type, sizes), dml.TensorDesc(output_type, out_sizes),
                                  [0])


@pytest.mark.parametrize(("functions", "rows"), PAGE, ids=[group[0][0] for group in PAGE])
def test_every_row_of_the_page(functions: list[str], rows: list[tuple[str, tuple[int, int], list[str],
                                                                        list[str] | None]]) -> None:
    for function, level in itertools.product(functions, LEVELS):
        device = dml.Device(feature_level=level)
        _, (low, high), input_types, output_types = _row_at(rows, level)
        for input_type in ALL_TYPES:
            candidates = output_types if output_types is not None else [input_type]
            for output_type, rank in itertools.product(candidates, (1, 3, 4, 5, 8)):
                desc = _desc(function, rank, input_type, output_type)
                accepted = input_type in input_types and low <= rank <= high
                if accepted:
                    device.create_operator(desc)
                else:
                    with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                        device.create_operator(desc)


@pytest.mark.parametrize(("function", "level", "input_type", "output_type", "rank", "needed"), [
    ("SUM", "4_1", "INT64", "INT64", 4, "5_0"),
    ("SUM", "2_0", "INT32", "INT32", 4, "2_1"),
    ("SUM", "2_1", "FLOAT32", "FLOAT32", 3, "3_0"),
    ("ARGMAX", "3_0", "INT64", "UINT32", 2, "4_1"),
    ("ARGMAX", "2_1", "FLOAT32", "INT64", 4, "3_0"),
    ("MAX", "4_1", "UINT64", "UINT64", 2, "5_0"),
    ("L1", "4_1", "INT32", "INT32", 2, "5_0"),
])
def test_below_its_level_names_the_lowest_level(function: str, level: str, input_type: str, output_type: str,
                                                rank: int, needed: str) -> None:
    with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_REDUCE \(Function {function}\): .* needs feature "
                                                   rf"level {needed}; the device is at {level}"):
        dml.Device(feature_level=level).create_operator(_desc(function, rank, input_type, output_type))
    dml.Device(feature_level=needed).create_operator(_desc(function, rank, input_type, output_type))


def test_check_feature_support() -> None:
    device = dml.Device(feature_level="5_2")
    assert device.check_feature_support(data_type="FLOAT64") is True
    assert device.check_feature_support(data_type=D.INT4) is False
    assert device.check_feature_support(feature_levels=["4_1", "6_0", "5_2"]) is dml.FeatureLevel.LEVEL_5_2
    assert device.check_feature_support(feature_levels=["1_0"]) is dml.FeatureLevel.LEVEL_1_0
    with pytest.raises(dml.UnsupportedError, match="none of the requested feature levels is supported; the lowest "
                                                   "requested is 6_0, the device is at 5_2"):
        device.check_feature_support(feature_levels=["6_0", "6_4"])
    with pytest.raises(dml.ValidationError, match="give exactly one of data_type or feature_levels"):
        device.check_feature_support()
    with pytest.raises(dml.ValidationError, match="RequestedFeatureLevelCount is 0"):
        device.check_feature_support(feature_levels=[])


def test_device_arguments() -> None:
    assert dml.Device().feature_level is dml.FeatureLevel.LEVEL_6_4
    assert dml.Device(dml.FeatureLevel.LEVEL_3_1).feature_level is dml.FeatureLevel.LEVEL_3_1
    with pytest.raises(dml.UnsupportedError, match="Device: backend 'webgpu' is not available; available: cpu"):
        dml.Device(backend="webgpu")
    with pytest.raises(dml.ValidationError, match=r"^Device: feature_level is '7_0'; it must be one of 1_0, 2_0, "):
        dml.Device(feature_level="7_0")
