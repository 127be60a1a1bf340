"""GATHER_ND1: the doc page's examples (copied by hand), every row of its support table, every rule as a bad-input
table with message regexes, the debug device's index check, and hypothesis properties through raw buffers against
``reference_gather_nd1``."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from reference import gather_nd1_output_sizes, reference_gather_nd1, reference_gather_nd1_vectorized
from strategies import (
    OUTPUT_STRIDE_KINDS,
    T,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    execute_between_sentinels,
    read_buffer,
    sentinel_bytes,
    strides_for,
    tensor_size_in_bytes,
)

import opendml as dml

F32 = dml.DataType.FLOAT32
PREFIX = r"DML_OPERATOR_GATHER_ND1: "




def compile_gather(input_tensor: dml.TensorDesc, indices_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc,
                   input_dimension_count: int, indices_dimension_count: int, batch_dimension_count: int,
                   level: str = "6_4", debug: bool = False) -> dml.CompiledOperator:
    device = dml.Device(feature_level=level, debug=debug)
    desc = dml.GatherNd1OperatorDesc(input_tensor, indices_tensor, output_tensor, input_dimension_count,
                                     indices_dimension_count, batch_dimension_count)
    return device.compile_operator(device.create_operator(desc))


# -- goldens ----------------------------------------------------------------------------------------------------------

def test_page_example_1_remaps_rows() -> None:
    compiled = compile_gather(T(F32, [2, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, 0, level="3_0")
    (output,) = compiled(np.array([[0, 1], [2, 3]], np.float32), np.array([[1], [0]], np.uint32))
    assert output.tolist() == [[2, 3], [0, 1]]


def test_page_example_2_batches() -> None:
    compiled = compile_gather(T(F32, [1, 3, 2, 2]), T("UINT32", [1, 3, 2, 2]), T(F32, [1, 1, 3, 2]), 3, 3, 1,
                              level="3_0")
    data = np.array([[[[0, 1], [2, 3]],
                      [[4, 5], [6, 7]],
                      [[8, 9], [10, 11]]]], np.float32)
    indices = np.array([[[[0, 0], [1, 1]],
                         [[1, 1], [0, 0]],
                         [[0, 1], [1, 0]]]], np.uint32)
    (output,) = compiled(data, indices)
    assert output.tolist() == [[[[0, 3],
                                  [7, 4],
                                  [9, 10]]]]


def test_page_size_example() -> None:
    # Input {3,4,5,6,7}, a {1,2} array of 3-coordinate tuples: the page states {1,1,2,6,7}, which DIGEST 2.5's rule
    # gives; the page's own formula (Input.Sizes[5-3 .. 5] = {5,6,7}) would not, and is refused.
    source, indices = T(F32, [3, 4, 5, 6, 7]), T("UINT32", [1, 1, 1, 2, 3])
    compiled = compile_gather(source, indices, T(F32, [1, 1, 2, 6, 7]), 5, 3, 0)
    data = np.arange(3 * 4 * 5 * 6 * 7, dtype=np.float32).reshape(3, 4, 5, 6, 7)
    (output,) = compiled(data, np.array([0, 0, 0, 2, 3, 4], np.uint32).reshape(1, 1, 1, 2, 3))
    block = np.arange(42, dtype=np.float32).reshape(6, 7)
    np.testing.assert_array_equal(output[0, 0, 0], block)                               # input[0, 0, 0]
    np.testing.assert_array_equal(output[0, 0, 1], block + ((2 * 4 + 3) * 5 + 4) * 42)  # input[2, 3, 4] at 2478
    with pytest.raises(dml.ValidationError, match=PREFIX + r"OutputTensor.Sizes is \[1, 1, 5, 6, 7\]; it must be "
                                                           r"\[1, 1, 2, 6, 7\]"):
        compile_gather(source, indices, T(F32, [1, 1, 5, 6, 7]), 5, 3, 0)


def test_gather_nd_version_0_example_with_no_batch() -> None:
    # DIGEST 2.5: GATHER_ND's example, Input {1,2,2,2} = 0..7, Indices {1,1,2,2} = [[0,1],[1,0]], I=3, J=2.
    compiled = compile_gather(T(F32, [1, 2, 2, 2]), T("UINT32", [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]), 3, 2, 0)
    (output,) = compiled(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2),
                         np.array([[0, 1], [1, 0]], np.uint32).reshape(1, 1, 2, 2))
    assert output.tolist() == [[[[2, 3], [4, 5]]]]


# -- negative and out-of-range coordinates ----------------------------------------------------------------------------

ROWS = np.array([[0, 1], [2, 3], [4, 5]], np.float32)


@pytest.mark.parametrize(("index_type", "values", "expected_rows"), [
    ("INT32", [-1, -3, -4, 3, 7], [2, 0, 0, 2, 2]),            # -1 -> 2, -3 -> 0; -4 and 3, 7 clamp
    ("INT64", [-(2**63), 2**63 - 1, -2, 1], [0, 2, 1, 1]),
    ("UINT32", [2**32 - 1, 3, 2, 0], [2, 2, 2, 0]),             # unsigned: no wrap, clamp to the last row
    ("UINT64", [2**64 - 1, 2**63, 2**63 - 1, 1], [2, 2, 2, 1]),
])
def test_negative_coordinates_wrap_once_and_the_rest_clamp(index_type: str, values: list[int],
                                                           expected_rows: list[int]) -> None:
    count = len(values)
    compiled = compile_gather(T(F32, [3, 2]), T(index_type, [count, 1]), T(F32, [count, 2]), 2, 2, 0)
    dtype = np.dtype(index_type.lower())
    (output,) = compiled(ROWS, np.array(values, dtype=dtype).reshape(count, 1))
    np.testing.assert_array_equal(output, ROWS[expected_rows])


@pytest.mark.parametrize(("index_type", "values", "position", "bad", "allowed"), [
    ("INT32", [1, -4, 9], r"\[1, 0\]", "-4", r"\[-3, 2\]"),
    ("INT64", [0, -3, 3], r"\[2, 0\]", "3", r"\[-3, 2\]"),
    ("UINT32", [2, 4294967295, 0], r"\[1, 0\]", "4294967295", r"\[0, 2\]"),
    ("UINT64", [2**63, 0, 0], r"\[0, 0\]", "9223372036854775808", r"\[0, 2\]"),
])
def test_debug_device_refuses_out_of_range_and_writes_nothing(index_type: str, values: list[int], position: str,
                                                             bad: str, allowed: str) -> None:
    count = len(values)
    descs = (T(F32, [3, 2]), T(index_type, [count, 1]), T(F32, [count, 2]), 2, 2, 0)
    indices = np.array(values, dtype=np.dtype(index_type.lower()))
    output = np.full(2 * count, 42.0, np.float32)
    debug = compile_gather(*descs, debug=True)  # type: ignore[arg-type]
    message = (PREFIX + rf"IndicesTensor{position} is {bad}, out of range: coordinate 0 of its tuple indexes "
               rf"InputTensor dimension 0 \(size 3\), so it must be in {allowed}")
    with pytest.raises(dml.BindingError, match=message):
        debug.execute([dml.Binding(ROWS.copy()), dml.Binding(indices)], [dml.Binding(output)])
    assert output.tolist() == [42.0] * (2 * count)
    release = compile_gather(*descs)  # type: ignore[arg-type]
    release.execute([dml.Binding(ROWS.copy()), dml.Binding(indices)], [dml.Binding(output)])
    assert not np.any(output == 42.0)


def test_debug_device_names_the_logical_position_of_a_strided_batched_tuple() -> None:
    # Indices {1, 2, 3, 2} (batch 2, three 2-tuples each) laid out transposed; the bad value is batch 1, tuple 2,
    # coordinate 1: 5 where the input's dimension 3 has size 2.
    sizes = (1, 2, 3, 2)
    strides = [12, 1, 2, 6]
    values = np.zeros(sizes, np.int64)
    values[0, 1, 2, 1] = 5
    values[0, 1, 2, 0] = -1
    buffer = build_buffer(values, tuple(strides))
    compiled = compile_gather(T(F32, [1, 2, 4, 2]), T("INT64", list(sizes), strides), T(F32, [1, 1, 2, 3]), 3, 3, 1,
                              debug=True)
    data = np.arange(16, dtype=np.float32)
    output = np.zeros(6, np.float32)
    with pytest.raises(dml.BindingError, match=PREFIX + r"IndicesTensor\[0, 1, 2, 1\] is 5, out of range: coordinate "
                                                        r"1 of its tuple indexes InputTensor dimension 3 \(size 2\)"):
        compiled.execute([dml.Binding(data), dml.Binding(buffer)], [dml.Binding(output)])
    assert output.tolist() == [0.0] * 6
    values[0, 1, 2, 1] = -2
    compiled.execute([dml.Binding(data), dml.Binding(build_buffer(values, tuple(strides)))], [dml.Binding(output)])
    # batch 0: input[0, 0, 0] = 0 thrice; batch 1: (0,0) -> 8, (0,0) -> 8, (-1,-2) = (3,0) -> 8 + 6 = 14
    assert output.tolist() == [0, 0, 0, 8, 8, 14]


# -- strides and bindings ---------------------------------------------------------------------------------------------

def test_zero_stride_input_and_strided_output_at_an_offset() -> None:
    # Input {4, 3} whose rows all read the same 3 values (stride 0 along dim 0); output {2, 3} transposed in a padded
    # buffer, bound at byte offset 32.
    compiled = compile_gather(T(F32, [4, 3], [0, 1]), T("INT32", [2, 1]), T(F32, [2, 3], [1, 4]), 2, 2, 0)
    output = np.full(8 + 12, 99.0, np.float32)
    compiled.execute([dml.Binding(np.array([7, 8, 9], np.float32)), dml.Binding(np.array([3, -4], np.int32))],
                     [dml.Binding(output, offset=32)])
    assert output.tolist() == [99] * 8 + [7, 7, 99, 99, 8, 8, 99, 99, 9, 9, 99, 99]


def test_inputs_unchanged_and_bad_bindings_write_nothing() -> None:
    compiled = compile_gather(T(F32, [3, 2]), T("INT32", [2, 1]), T(F32, [2, 2]), 2, 2, 0)
    data, indices = ROWS.copy(), np.array([2, 0], np.int32)
    output = np.full(4, 42.0, np.float32)
    with pytest.raises(dml.BindingError, match=PREFIX + r"IndicesTensor binding needs bytes \[0, 8\) but the buffer "
                                                        r"holds 4 bytes"):
        compiled.execute([dml.Binding(data), dml.Binding(indices[:1])], [dml.Binding(output)])
    with pytest.raises(dml.BindingError, match=PREFIX + r"3 input bindings given; the operator has 2 "
                                                        r"\(InputTensor, IndicesTensor\)"):
        compiled.execute([dml.Binding(data), None, dml.Binding(indices)], [dml.Binding(output)])  # type: ignore[list-item]
    assert output.tolist() == [42.0] * 4
    compiled.execute([dml.Binding(data), dml.Binding(indices)], [dml.Binding(output)])
    assert output.tolist() == [4, 5, 0, 1]
    np.testing.assert_array_equal(data, ROWS)
    assert indices.tolist() == [2, 0]


# -- the support table, row by row ------------------------------------------------------------------------------------

ELEVEN = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
INDEX_TYPES = ["INT64", "INT32", "UINT64", "UINT32"]
# Copied from the page: (level, ranks, input/output types, indices types); nothing below 3_0.
PAGE = [("4_1", (1, 8), ELEVEN, INDEX_TYPES), ("3_0", (1, 8), EIGHT, INDEX_TYPES)]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name != "UNKNOWN"]


def _support_desc(rank: int, data_type: str, index_type: str) -> dml.GatherNd1OperatorDesc:
    # Input [2]*rank, one 1-tuple (IndicesDimensionCount 1): output = input's sizes after the first, padded.
    return dml.GatherNd1OperatorDesc(T(data_type, [2] * rank), T(index_type, [1] * rank),
                                     T(data_type, [1] + [2] * (rank - 1)), rank, 1, 0)


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    rows = [row for row in PAGE if dml.FeatureLevel.parse(row[0]) <= level]
    for data_type, index_type, rank in itertools.product(ALL_TYPES, ALL_TYPES, (1, 2, 5, 8)):
        desc = _support_desc(rank, data_type, index_type)
        if not rows:
            with pytest.raises(dml.UnsupportedError, match=PREFIX[:-2] + r" needs feature level 3_0; the device is "
                                                                         rf"at {level}"):
                device.create_operator(desc)
            continue
        _, (low, high), data_types, index_types = max(rows, key=lambda row: dml.FeatureLevel.parse(row[0]))
        if data_type in data_types and index_type in index_types and low <= rank <= high:
            device.create_operator(desc)
        else:
            with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                device.create_operator(desc)


@pytest.mark.parametrize(("level", "data_type", "index_type", "field", "needed"), [
    ("3_0", "FLOAT64", "UINT32", "InputTensor.DataType FLOAT64", "4_1"),
    ("4_0", "INT64", "INT32", "InputTensor.DataType INT64", "4_1"),
    ("3_1", "UINT64", "INT64", "InputTensor.DataType UINT64", "4_1"),
    ("2_1", "FLOAT32", "UINT32", None, "3_0"),
    ("1_0", "FLOAT32", "INT64", None, "3_0"),
])
def test_below_its_level_names_the_lowest_level(level: str, data_type: str, index_type: str, field: str | None,
                                                needed: str) -> None:
    subject = "" if field is None else f": {field}"
    with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_GATHER_ND1{subject} needs feature level "
                                                   rf"{needed}; the device is at {level}"):
        dml.Device(feature_level=level).create_operator(_support_desc(3, data_type, index_type))
    dml.Device(feature_level=needed).create_operator(_support_desc(3, data_type, index_type))


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, input, indices, output, I, J, B, error, message regex)
    ("indices rank differs", T(F32, [3, 2]), T("UINT32", [2]), T(F32, [1, 2]), 2, 1, 0, dml.ValidationError,
     r"IndicesTensor.DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    ("output rank differs", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [1, 2, 2]), 2, 2, 0, dml.ValidationError,
     r"OutputTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(2\)"),
    ("output type differs", T(F32, [3, 2]), T("UINT32", [2, 1]), T("FLOAT16", [2, 2]), 2, 2, 0, dml.ValidationError,
     r"OutputTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    ("float indices", T(F32, [3, 2]), T(F32, [2, 1]), T(F32, [2, 2]), 2, 2, 0, dml.ValidationError,
     r"IndicesTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of INT64, INT32, UINT64, "
     r"UINT32"),
    ("16-bit indices", T(F32, [3, 2]), T("INT16", [2, 1]), T(F32, [2, 2]), 2, 2, 0, dml.ValidationError,
     r"IndicesTensor.DataType INT16 is not supported"),
    ("rank 9", T(F32, [1] * 9), T("UINT32", [1] * 9), T(F32, [1] * 9), 9, 9, 0, dml.ValidationError,
     r"InputTensor.DimensionCount is 9; it must be 1 to 8"),
    ("InputDimensionCount 0", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 0, 2, 0, dml.ValidationError,
     r"InputDimensionCount is 0; it must be in \[1, 2\] \(InputTensor.DimensionCount\)"),
    ("InputDimensionCount above the rank", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 3, 2, 0,
     dml.ValidationError, r"InputDimensionCount is 3; it must be in \[1, 2\]"),
    ("IndicesDimensionCount 0", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 0, 0, dml.ValidationError,
     r"IndicesDimensionCount is 0; it must be in \[1, 2\] \(IndicesTensor.DimensionCount\)"),
    ("IndicesDimensionCount above the rank", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 5, 0,
     dml.ValidationError, r"IndicesDimensionCount is 5; it must be in \[1, 2\]"),
    ("BatchDimensionCount = InputDimensionCount", T(F32, [1, 3, 2]), T("UINT32", [3, 2, 1]), T(F32, [1, 3, 2]), 1, 3, 1,
     dml.ValidationError, r"BatchDimensionCount is 1; it must be less than InputDimensionCount \(1\) and "
                          r"IndicesDimensionCount \(3\)"),
    ("BatchDimensionCount = IndicesDimensionCount", T(F32, [3, 2, 2]), T("UINT32", [1, 1, 3]), T(F32, [1, 1, 2]), 3, 1,
     1, dml.ValidationError, r"BatchDimensionCount is 1; it must be less than InputDimensionCount \(3\) and "
                             r"IndicesDimensionCount \(1\)"),
    ("tuple size 0", T(F32, [3, 2]), T("UINT32", [2, 0]), T(F32, [2, 2]), 2, 2, 0, dml.ValidationError,
     r"IndicesTensor.Sizes\[1\] is 0; every size must be at least 1"),
    ("tuple larger than the input", T(F32, [3, 2]), T("UINT32", [1, 3]), T(F32, [1, 1]), 2, 1, 0, dml.ValidationError,
     r"IndicesTensor.Sizes\[1\] \(the index tuple size\) is 3; it must be in \[1, 2\] \(InputDimensionCount - "
     r"BatchDimensionCount\)"),
    ("tuple reaches into the batch", T(F32, [1, 3, 2, 2]), T("UINT32", [1, 1, 3, 3]), T(F32, [1, 1, 1, 3]), 3, 2, 1,
     dml.ValidationError, r"IndicesTensor.Sizes\[3\] \(the index tuple size\) is 3; it must be in \[1, 2\]"),
    ("tuple larger than InputDimensionCount", T(F32, [1, 3, 2]), T("UINT32", [1, 1, 3]), T(F32, [1, 1, 1]), 2, 1, 0,
     dml.ValidationError, r"IndicesTensor.Sizes\[2\] \(the index tuple size\) is 3; it must be in \[1, 2\]"),
    ("irrelevant input dim not 1", T(F32, [2, 3, 2]), T("UINT32", [1, 2, 1]), T(F32, [1, 2, 2]), 2, 2, 0,
     dml.ValidationError, r"InputTensor.Sizes\[0\] is 2; with InputDimensionCount 2 its leading 1 dimension\(s\) are "
                          r"irrelevant and must be 1"),
    ("irrelevant indices dim not 1", T(F32, [1, 3, 2]), T("UINT32", [1, 2, 1]), T(F32, [1, 1, 2]), 2, 1, 0,
     dml.ValidationError, r"IndicesTensor.Sizes\[1\] is 2; with IndicesDimensionCount 1 its leading 2 dimension\(s\) "
                          r"are irrelevant and must be 1"),
    ("batch sizes differ", T(F32, [1, 3, 2, 2]), T("UINT32", [1, 4, 2, 2]), T(F32, [1, 1, 4, 2]), 3, 3, 1,
     dml.ValidationError, r"the batch sizes differ: with BatchDimensionCount 1 InputTensor's are \[3\] "
                          r"\(Sizes\[1:2\]\) and IndicesTensor's are \[4\] \(Sizes\[1:2\]\); they must be equal"),
    ("output needs more dims than the rank", T(F32, [3, 4, 5]), T("UINT32", [2, 2, 1]), T(F32, [2, 2, 4]), 3, 3, 0,
     dml.ValidationError, r"the output has 4 meaningful dimensions .*; OutputTensor.DimensionCount is 3"),
    ("wrong output sizes", T(F32, [3, 2]), T("UINT32", [4, 1]), T(F32, [2, 2]), 2, 2, 0, dml.ValidationError,
     r"OutputTensor.Sizes is \[2, 2\]; it must be \[4, 2\]"),
    ("the page's formula, ignoring the batch", T(F32, [1, 3, 2, 2]), T("UINT32", [1, 3, 2, 2]), T(F32, [1, 3, 2, 2]),
     3, 3, 1, dml.ValidationError, r"OutputTensor.Sizes is \[1, 3, 2, 2\]; it must be \[1, 1, 3, 2\]"),
    ("overlapping output", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2], [0, 1]), 2, 2, 0, dml.ValidationError,
     r"OutputTensor.Strides \[0, 1\] map two elements of Sizes \[2, 2\] onto the same memory"),
    ("indices total size too small", T(F32, [3, 2]), T("UINT32", [2, 1], total_tensor_size_in_bytes=4), T(F32, [2, 2]),
     2, 2, 0, dml.ValidationError, r"IndicesTensor.TotalTensorSizeInBytes is 4; it must be at least 8"),
    ("FLOAT64 below 4_1", T("FLOAT64", [3, 2]), T("UINT32", [2, 1]), T("FLOAT64", [2, 2]), 2, 2, 0,
     dml.UnsupportedError, r"InputTensor.DataType FLOAT64 needs feature level 4_1; the device is at 4_0"),
    ("below 3_0", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, 0, dml.UnsupportedError,
     r" needs feature level 3_0; the device is at 2_1"),
]
LEVEL_OF = {"FLOAT64 below 4_1": "4_0", "below 3_0": "2_1"}


@pytest.mark.parametrize(("case_id", "input_tensor", "indices_tensor", "output_tensor", "input_count", "indices_count",
                          "batch", "error", "message"), BAD_DESCRIPTORS, ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(case_id: str, input_tensor: dml.TensorDesc, indices_tensor: dml.TensorDesc,
                         output_tensor: dml.TensorDesc, input_count: int, indices_count: int, batch: int,
                         error: type[Exception], message: str) -> None:
    desc = dml.GatherNd1OperatorDesc(input_tensor, indices_tensor, output_tensor, input_count, indices_count, batch)
    prefix = PREFIX[:-2] if case_id == "below 3_0" else PREFIX
    with pytest.raises(error, match=prefix + message):
        dml.Device(feature_level=LEVEL_OF.get(case_id, "6_4")).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.GatherNd1OperatorDesc([3, 2], T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, 0),
     r"InputTensor is \[3, 2\]; it must be a TensorDesc$"),
    (lambda: dml.GatherNd1OperatorDesc(T(F32, [3, 2]), None, T(F32, [2, 2]), 2, 2, 0),
     r"IndicesTensor is None; it must be a TensorDesc$"),
    (lambda: dml.GatherNd1OperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), -1, 2, 0),
     r"InputDimensionCount is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: dml.GatherNd1OperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2.0, 0),
     r"IndicesDimensionCount is 2.0; it must be an integer"),
    (lambda: dml.GatherNd1OperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, True),
     r"BatchDimensionCount is True; it must be an integer"),
])
def test_bad_descriptor_fields(build: object, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()  # type: ignore[operator]


def test_expected_output_sizes_match_the_oracle_rule() -> None:
    desc = dml.GatherNd1OperatorDesc(T(F32, [3, 4, 5, 6, 7]), T("UINT32", [1, 1, 1, 2, 3]), T(F32, [1, 1, 2, 6, 7]),
                                     5, 3, 0)
    assert desc.expected_output_sizes() == (1, 1, 2, 6, 7)
    assert gather_nd1_output_sizes((3, 4, 5, 6, 7), (1, 1, 1, 2, 3), 5, 3, 0) == (1, 1, 2, 6, 7)
    assert desc.OPERATOR_TYPE == dml.OperatorType.GATHER_ND1 and desc.label == "DML_OPERATOR_GATHER_ND1"


# -- properties through raw buffers ----------------------------------------------------------------------------------

LEVELS = ("3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4")
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass(frozen=True)
class GatherCase:
    level: str
    data_type: str
    index_type: str
    input_dimension_count: int
    indices_dimension_count: int
    batch_dimension_count: int
    input_sizes: tuple[int, ...]
    indices_sizes: tuple[int, ...]
    input_strides: tuple[int, ...] | None
    indices_strides: tuple[int, ...] | None
    output_strides: tuple[int, ...] | None
    offsets: tuple[int, int, int]
    x: np.ndarray        # the logical input (bits as unsigned integers), consistent with its strides
    indices: np.ndarray  # the logical indices, consistent with their strides
    version: int = 1     # 0: GATHER_ND (no BatchDimensionCount field, batch 0)

    @property
    def output_sizes(self) -> tuple[int, ...]:
        return gather_nd1_output_sizes(self.input_sizes, self.indices_sizes, self.input_dimension_count,
                                       self.indices_dimension_count, self.batch_dimension_count)

    def descriptor(self) -> dml.GatherNd1OperatorDesc | dml.GatherNdOperatorDesc:
        def strides(value: tuple[int, ...] | None) -> list[int] | None:
            return None if value is None else list(value)

        tensors = (T(self.data_type, list(self.input_sizes), strides(self.input_strides)),
                   T(self.index_type, list(self.indices_sizes), strides(self.indices_strides)),
                   T(self.data_type, list(self.output_sizes), strides(self.output_strides)))
        if self.version == 0:
            return dml.GatherNdOperatorDesc(*tensors, self.input_dimension_count, self.indices_dimension_count)
        return dml.GatherNd1OperatorDesc(*tensors, self.input_dimension_count, self.indices_dimension_count,
                                         self.batch_dimension_count)


@st.composite
def coordinate_values(draw: st.DrawFn, size: int, index_type: str) -> int:
    info = np.iinfo(np.dtype(index_type.lower()))
    signed = info.min < 0
    kinds = ["in range", "in range", "out of range", "extreme"] + (["negative", "too negative"] if signed else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "in range":
        return draw(st.integers(0, size - 1))
    if kind == "negative":
        return draw(st.integers(-size, -1))
    if kind == "too negative":
        return draw(st.integers(int(info.min), -size - 1))
    if kind == "out of range":
        return draw(st.integers(size, size + 3))
    return draw(st.sampled_from([int(info.min), int(info.max), int(info.max) - 1]))


@st.composite
def gather_cases(draw: st.DrawFn, *, allow_out_of_range: bool = True, version: int = 1) -> GatherCase:
    """GATHER_ND1 cases, or with version 0 GATHER_ND's (its table: from 2_1, where it is exactly 4-D with UINT32
    indices; never the 64-bit data types; no batch dimensions)."""
    level = draw(st.sampled_from(LEVELS if version else ("2_1", *LEVELS)))
    at_2_1 = level == "2_1"
    data_types = ELEVEN if level >= "4_1" and version else EIGHT
    data_type = draw(st.sampled_from(data_types))
    index_type = "UINT32" if at_2_1 else draw(st.sampled_from(INDEX_TYPES))
    rank = 4 if at_2_1 else draw(st.integers(1, 8))
    input_count = draw(st.integers(1, rank))
    indices_count = draw(st.integers(1, rank))
    batch = draw(st.integers(0, min(input_count, indices_count) - 1)) if version else 0
    # The output's meaningful dims (J - 1 + I - B - K) must fit into the rank.
    tuple_size = draw(st.integers(max(1, indices_count - 1 + input_count - batch - rank), input_count - batch))
    budget = [256]  # input elements; the index positions share what the batch leaves

    def size(largest: int) -> int:
        drawn = draw(st.integers(1, max(1, min(largest, budget[0]))))
        budget[0] //= drawn
        return drawn

    batch_sizes = [size(3) for _ in range(batch)]
    positions_budget = budget[0]
    tuple_dims = [size(4) for _ in range(tuple_size)]
    rest = [size(3) for _ in range(input_count - batch - tuple_size)]
    budget[0] = max(1, positions_budget // 2)
    positions = [size(3) for _ in range(indices_count - 1 - batch)]
    input_sizes = (1,) * (rank - input_count) + tuple(batch_sizes + tuple_dims + rest)
    indices_sizes = (1,) * (rank - indices_count) + tuple(batch_sizes + positions + [tuple_size])
    input_strides = draw(strides_for(input_sizes))
    indices_strides = draw(strides_for(indices_sizes))
    output_sizes = gather_nd1_output_sizes(input_sizes, indices_sizes, input_count, indices_count, batch)
    output_strides = draw(strides_for(output_sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    offsets = (draw(byte_offsets()), draw(byte_offsets()), draw(byte_offsets()))

    width = BITS[dml.DataType[data_type].element_size]
    count = int(np.prod(input_sizes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))  # any bits: NaN payloads, infinities, extremes
    x = rng.integers(0, 256, count * np.dtype(width).itemsize, dtype=np.uint8).view(width).reshape(input_sizes)
    x = read_buffer(build_buffer(x, input_strides), width, input_sizes, input_strides)
    index_dtype = np.dtype(index_type.lower())
    values = np.empty(indices_sizes, dtype=index_dtype)
    for index in itertools.product(*(range(n) for n in indices_sizes)):
        size = tuple_dims[index[-1]]
        if allow_out_of_range:
            values[index] = draw(coordinate_values(size, index_type))
        else:
            low = -size if index_dtype.kind == "i" else 0
            values[index] = draw(st.integers(low, size - 1))
    values = read_buffer(build_buffer(values, indices_strides), index_dtype, indices_sizes, indices_strides)
    note(f"level={level} {data_type} {index_type} I={input_count} J={indices_count} B={batch} K={tuple_size} "
         f"input {input_sizes} {input_strides}, indices {indices_sizes} {indices_strides}, output {output_sizes} "
         f"{output_strides}, offsets {offsets}")
    return GatherCase(level, data_type, index_type, input_count, indices_count, batch, input_sizes, indices_sizes,
                      input_strides, indices_strides, output_strides, offsets, x, values, version)


@cache
def device_at(level: str, debug: bool) -> dml.Device:
    return dml.Device(feature_level=level, debug=debug)


def run_case(case: GatherCase, debug: bool) -> tuple[np.ndarray, np.ndarray, Exception | None, list[np.ndarray]]:
    """(output buffer after, output buffer before, the error raised or None, the input buffers before)."""
    device = device_at(case.level, debug)
    compiled = device.compile_operator(device.create_operator(case.descriptor()))
    width = case.x.dtype
    input_buffer = build_buffer(case.x, case.input_strides, byte_offset=case.offsets[0], tail_bytes=8, seed=1)
    indices_buffer = build_buffer(case.indices, case.indices_strides, byte_offset=case.offsets[1], tail_bytes=8,
                                  seed=2)
    output_bytes = case.offsets[2] + tensor_size_in_bytes(width.itemsize, case.output_sizes, case.output_strides) + 8
    output_buffer = sentinel_bytes(output_bytes, seed=3)
    before = output_buffer.copy()
    inputs_before = [input_buffer.copy(), indices_buffer.copy()]
    error: Exception | None = None
    try:
        compiled.execute([dml.Binding(input_buffer, offset=case.offsets[0]),
                          dml.Binding(indices_buffer, offset=case.offsets[1])],
                         [dml.Binding(output_buffer, offset=case.offsets[2])])
    except dml.BindingError as raised:
        error = raised
    np.testing.assert_array_equal(input_buffer, inputs_before[0])
    np.testing.assert_array_equal(indices_buffer, inputs_before[1])
    return output_buffer, before, error, inputs_before


@given(gather_cases())
def test_gather_matches_the_reference_through_raw_buffers(case: GatherCase) -> None:
    expected, _ = reference_gather_nd1(case.x, case.indices, case.input_dimension_count,
                                       case.indices_dimension_count, case.batch_dimension_count,
                                       signed=case.index_type.startswith("INT"))
    if case.index_type != "UINT64":  # the vectorized oracle, used for the large cases, agrees with the loop
        np.testing.assert_array_equal(reference_gather_nd1_vectorized(
            case.x, case.indices, case.input_dimension_count, case.indices_dimension_count,
            case.batch_dimension_count, signed=case.index_type.startswith("INT")), expected)
    output_buffer, before, error, _ = run_case(case, debug=False)
    assert error is None
    got = read_buffer(output_buffer, case.x.dtype, case.output_sizes, case.output_strides, byte_offset=case.offsets[2])
    np.testing.assert_array_equal(got, expected)  # bit for bit: the data travel as unsigned integers
    mask = addressed_byte_mask(output_buffer.size, case.x.dtype.itemsize, case.output_sizes, case.output_strides,
                               byte_offset=case.offsets[2])
    np.testing.assert_array_equal(output_buffer[~mask], before[~mask])  # nothing written between or past elements


@given(gather_cases())
def test_debug_device_refuses_the_first_out_of_range_coordinate(case: GatherCase) -> None:
    expected, bad = reference_gather_nd1(case.x, case.indices, case.input_dimension_count,
                                         case.indices_dimension_count, case.batch_dimension_count,
                                         signed=case.index_type.startswith("INT"))
    output_buffer, before, error, _ = run_case(case, debug=True)
    if not bad:
        assert error is None
        got = read_buffer(output_buffer, case.x.dtype, case.output_sizes, case.output_strides,
                          byte_offset=case.offsets[2])
        np.testing.assert_array_equal(got, expected)
        return
    position, value = bad[0]
    assert error is not None
    assert re.search(re.escape(f"IndicesTensor{list(position)} is {value}, out of range"), str(error)), str(error)
    np.testing.assert_array_equal(output_buffer, before)  # nothing written


# -- large outputs: the streaming, staged and threaded paths --------------------------------------------------------

LARGE = [
    # (id, input sizes, dtype, indices sizes, index dtype, I, J, B, output strides)
    ("rows, staged and threaded", (4096, 256), np.float32, (16384, 1), np.int32, 2, 2, 0, None),
    ("one-line rows, staged", (4096, 16), np.float32, (65536, 1), np.int64, 2, 2, 0, None),
    ("100-byte rows, staged across lines", (4096, 25), np.float32, (45000, 1), np.int64, 2, 2, 0, None),
    ("2 KiB rows, the largest staged", (1024, 512), np.float32, (2100, 1), np.int64, 2, 2, 0, None),
    ("2052-byte rows, streamed one by one", (1024, 513), np.float32, (2100, 1), np.int64, 2, 2, 0, None),
    ("long rows streamed one by one", (64, 1024), np.float64, (1024, 1), np.uint32, 2, 2, 0, None),
    ("batched elements, staged", (8, 64, 64), np.uint16, (8, 262144, 2), np.int64, 3, 3, 1, None),
    ("rows into a padded output", (4096, 64), np.float32, (16384, 1), np.int64, 2, 2, 0, (80, 1)),
    ("batched rows, transposed output", (4, 512, 32), np.int8, (4, 65536, 1), np.uint64, 3, 3, 1, (32, 128, 1)),
]


@pytest.mark.parametrize(("case_id", "input_sizes", "dtype", "indices_sizes", "index_dtype", "input_count",
                          "indices_count", "batch", "output_strides"), LARGE, ids=[case[0] for case in LARGE])
def test_large_gathers(case_id: str, input_sizes: tuple[int, ...], dtype: type, indices_sizes: tuple[int, ...],
                       index_dtype: type, input_count: int, indices_count: int, batch: int,
                       output_strides: tuple[int, ...] | None) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, int(np.prod(input_sizes)) * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)
    x = x.reshape(input_sizes)
    tuple_size = indices_sizes[-1]
    signed = np.dtype(index_dtype).kind == "i"
    columns = []
    for k in range(tuple_size):
        size = input_sizes[batch + k]
        low = -size - 2 if signed else 0
        columns.append(rng.integers(low, size + 2, indices_sizes[:-1]))
    indices = np.stack(columns, axis=-1).astype(index_dtype)
    expected = reference_gather_nd1_vectorized(x, indices, input_count, indices_count, batch, signed=signed)
    data_type = dml.DataType.parse(np.dtype(dtype))
    index_type = dml.DataType.parse(np.dtype(index_dtype))
    output_sizes = expected.shape
    strides_given = None if output_strides is None else list(output_strides)
    compiled = compile_gather(T(data_type, list(input_sizes)), T(index_type, list(indices_sizes)),
                              T(data_type, list(output_sizes), strides_given), input_count, indices_count, batch)
    output_desc = compiled.desc.output_slots()[0][1]
    output = np.full(output_desc.total_tensor_size_in_bytes + 64, 0xA5, np.uint8)
    compiled.execute([dml.Binding(x), dml.Binding(indices)], [dml.Binding(output, offset=16)])
    itemsize = np.dtype(dtype).itemsize
    strides = tuple(stride * itemsize for stride in output_desc.element_strides)
    got = np.lib.stride_tricks.as_strided(output[16:16 + output_desc.total_tensor_size_in_bytes].view(dtype),
                                          shape=output_sizes, strides=strides)
    np.testing.assert_array_equal(got, expected)
    assert output[:16].tolist() == [0xA5] * 16  # nothing before the binding's offset
    assert output[16 + output_desc.total_tensor_size_in_bytes:].tolist() == [0xA5] * 48  # nor past its end


#: (input, indices, BatchDimensionCount, the elements of each batch's input region read through first, or 0).
READ_THROUGH = [
    (T("FLOAT32", [16, 1024, 256]), T("INT64", [16, 262144, 2]), 1, 262144),   # the benchmark's element gather
    (T("FLOAT32", [16, 1024, 256]), T("INT64", [16, 4096, 1]), 1, 262144),     # rows read 4x the region's lines
    (T("UINT8", [3, 32, 48], [2100, 64, 1]), T("INT32", [3, 2048, 2]), 1, 31 * 64 + 47 + 1),  # padded rows
    (T("FLOAT32", [16, 1024, 256]), T("INT64", [16, 1024, 2]), 1, 0),          # 1024 lines of 16384: too few
    (T("FLOAT32", [16, 1024, 256]), T("INT64", [16, 4096, 2]), 1, 0),          # 4096 of 16384 (issue 28): too few
    (T("FLOAT32", [1048576, 64]), T("INT64", [1048576, 1]), 0, 0),             # 256 MiB: larger than the caches
    (T("FLOAT32", [8, 2048, 1024]), T("INT32", [8, 65536, 1]), 1, 0),          # 8 MiB per batch
]


@pytest.mark.parametrize(("input_desc", "indices_desc", "batch", "span"), READ_THROUGH)
def test_batches_read_their_input_region_through_only_when_small_and_read_often(
        input_desc: dml.TensorDesc, indices_desc: dml.TensorDesc, batch: int, span: int) -> None:
    """numba's kernel reads each batch's input region in order before gathering from it (cpu backend,
    gather_nd1._TOUCH_BYTES), from the batch's first element to its last reachable one, only where that pays."""
    from opendml.backends.cpu.gather_nd1 import _S_TOUCH, GatherKernel

    rank = input_desc.dimension_count
    output_sizes = gather_nd1_output_sizes(input_desc.sizes, indices_desc.sizes, rank, rank, batch)
    desc = dml.GatherNd1OperatorDesc(input_desc, indices_desc, T(input_desc.data_type, list(output_sizes)), rank,
                                     rank, batch)
    assert GatherKernel(desc)._settings[_S_TOUCH] == span


# -- narrow outputs, device memory, batches: every byte around the elements kept -------------------------------------

#: (input sizes, indices sizes, I, J, B, output strides): rows into padded, transposed and interleaved (no nesting
#: order) outputs, and batched 2-coordinate tuples into a padded transposed one.
NARROW_LAYOUTS = {
    "rows, padded": ((4, 6), (3, 1), 2, 2, 0, (8, 1)),
    "rows, transposed": ((4, 6), (3, 1), 2, 2, 0, (1, 3)),
    "rows, interleaved": ((4, 6), (2, 1), 2, 2, 0, (3, 2)),
    "batched pairs, padded transposed": ((2, 3, 4, 5), (1, 2, 3, 2), 4, 3, 1, (40, 1, 2, 7)),
}
NARROW_NUMPY = {"UINT8": np.uint8, "INT8": np.int8, "UINT16": np.uint16, "INT16": np.int16, "FLOAT16": np.float16,
                "FLOAT64": np.float64, "UINT64": np.uint64}


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize(("data_type", "index_type"), [("UINT8", "INT32"), ("INT8", "UINT64"), ("UINT16", "INT64"),
                                                       ("FLOAT16", "UINT32"), ("INT16", "INT32"),
                                                       ("FLOAT64", "INT64"), ("UINT64", "UINT32")])
def test_narrow_and_wide_outputs_keep_every_byte_around_their_elements(data_type: str, index_type: str,
                                                                       memory: str) -> None:
    """Outputs at padded, transposed and interleaved strides inside sentinel bytes, bound at 48 bytes (off the
    adapter's binding alignment on a gpu), the input (transposed) at 16 and the indices at 32, with coordinates in
    range, negative and out of range: every element right, every other byte as it was, the inputs unchanged."""
    device = dml.Device()
    dtype, index_dtype = np.dtype(NARROW_NUMPY[data_type]), np.dtype(index_type.lower())
    signed = index_dtype.kind == "i"
    for seed, (name, (input_sizes, index_sizes, input_count, indices_count, batch, strides)) in enumerate(
            NARROW_LAYOUTS.items()):
        rng = np.random.default_rng(seed)
        x = rng.integers(0, 256, int(np.prod(input_sizes)) * dtype.itemsize, dtype=np.uint8).view(dtype)
        x = x.reshape(input_sizes)
        input_strides = tuple(int(np.prod(input_sizes[:d])) for d in range(len(input_sizes)))  # column-major
        values = np.empty(index_sizes, index_dtype)
        for index in itertools.product(*(range(n) for n in index_sizes)):
            size = input_sizes[len(input_sizes) - input_count + batch + index[-1]]
            choices = [0, size - 1, size, size + 5, int(np.iinfo(index_dtype).max)] + ([-1, -size, -size - 1]
                                                                                      if signed else [])
            values[index] = choices[int(rng.integers(len(choices)))]
        output_sizes = gather_nd1_output_sizes(input_sizes, index_sizes, input_count, indices_count, batch)
        compiled = compile_gather(T(data_type, list(input_sizes), list(input_strides)),
                                  T(index_type, list(index_sizes)), T(data_type, list(output_sizes), list(strides)),
                                  input_count, indices_count, batch)
        input_bytes = build_buffer(x, input_strides, byte_offset=16, tail_bytes=4, seed=seed)
        index_bytes = build_buffer(values, None, byte_offset=32, tail_bytes=4, seed=seed + 1)
        got = execute_between_sentinels(device, compiled, [input_bytes, index_bytes], dtype.itemsize, output_sizes,
                                        strides, memory=memory, seed=seed + 2, label=name)
        expected, _ = reference_gather_nd1(x, values, input_count, indices_count, batch, signed=signed)
        got_elements = read_buffer(got, dtype, output_sizes, strides, byte_offset=48)
        assert np.array_equal(got_elements.view(f"u{dtype.itemsize}"), expected.view(f"u{dtype.itemsize}")), name


def test_debug_refusal_inside_a_batch_sees_indices_written_earlier_in_it() -> None:
    """In one batch, a SPLIT writes the indices [1, 7] into device memory, then a debug gather reads them: it
    refuses 7 (only 3 rows) by position, writing nothing; once the SPLIT writes [2, -3], the gather runs."""
    device = dml.Device(debug=True)
    split = device.compile_operator(device.create_operator(
        dml.SplitOperatorDesc(T("INT32", [2, 2]), [T("INT32", [2, 1]), T("INT32", [2, 1])], 1)))
    gather = device.compile_operator(device.create_operator(
        dml.GatherNd1OperatorDesc(T("UINT8", [3, 3]), T("INT32", [2, 1]), T("UINT8", [2, 3], [1, 5]), 2, 2, 0)))
    pairs = device.create_buffer(np.array([[1, 0], [7, 0]], np.int32))
    indices, spare = device.create_buffer(16), device.create_buffer(16)   # zeros: in range until the SPLIT runs
    rows = device.create_buffer(np.arange(10, 22, dtype=np.uint8))    # 3 x 3 used, padded to 12 bytes
    output = device.create_buffer(sentinel_bytes(32, seed=4))
    message = (PREFIX + r"IndicesTensor\[1, 0\] is 7, out of range: coordinate 0 of its tuple indexes InputTensor "
                        r"dimension 0 \(size 3\), so it must be in \[-3, 2\]")
    with pytest.raises(dml.BindingError, match=message), device.batch():
        split.execute([dml.Binding(pairs)], [dml.Binding(indices), dml.Binding(spare)])
        gather.execute([dml.Binding(rows), dml.Binding(indices)], [dml.Binding(output, 16)])
    assert output.read() == sentinel_bytes(32, seed=4).tobytes()
    pairs = device.create_buffer(np.array([[2, 0], [-3, 0]], np.int32))
    with device.batch():
        split.execute([dml.Binding(pairs)], [dml.Binding(indices), dml.Binding(spare)])
        gather.execute([dml.Binding(rows), dml.Binding(indices)], [dml.Binding(output, 16)])
    got = np.frombuffer(output.read(), np.uint8)
    filler = sentinel_bytes(32, seed=4)
    # output[i, j] at byte 16 + i + 5 j: row 2 = [16, 17, 18] and row 0 = [10, 11, 12]
    assert got[16:31].reshape(3, 5)[:, :2].T.tolist() == [[16, 17, 18], [10, 11, 12]]
    untouched = np.ones(32, bool)
    untouched[[16, 17, 21, 22, 26, 27]] = False
    assert np.array_equal(got[untouched], filler[untouched])


@pytest.mark.parametrize("both", [False, True], ids=["second coordinate", "both coordinates"])
def test_debug_device_names_the_first_of_many_out_of_range_coordinates(both: bool) -> None:
    """300000 pairs, every one from position 200001 on out of range somewhere: the message names position 200001
    (its second coordinate, or its first when both are out), whatever order the device checks them in."""
    count = 300000
    values = np.zeros((count, 2), np.int64)
    values[:, 0] = np.arange(count) % 7 - 7            # -7..-1: in range for size 7
    values[:, 1] = np.arange(count) % 3                # in range for size 3
    values[200001:, 0] = 7                             # out of range (size 7) from 200001 on ...
    values[200001, 0] = -8 if both else 6              # ... at 200001 itself only when `both`
    values[200001, 1] = 3                              # out of range (size 3)
    values[200002::5, 1] = -4
    descs = (T("INT16", [7, 3, 2]), T("INT64", [1, count, 2]), T("INT16", [1, count, 2]), 3, 2, 0)
    compiled = compile_gather(*descs, debug=True)  # type: ignore[arg-type]
    device = dml.Device()
    data = device.create_buffer(np.arange(42, dtype=np.int16))
    indices = device.create_buffer(values)
    output = device.create_buffer(sentinel_bytes(4 * count, seed=6))
    bad, coordinate, size, allowed = ("-8", 0, 7, r"\[-7, 6\]") if both else ("3", 1, 3, r"\[-3, 2\]")
    with pytest.raises(dml.BindingError, match=PREFIX + rf"IndicesTensor\[0, 200001, {coordinate}\] is {bad}, out of "
                                                        rf"range: coordinate {coordinate} of its tuple indexes "
                                                        rf"InputTensor dimension {coordinate} \(size {size}\), so it "
                                                        rf"must be in {allowed}"):
        compiled.execute([dml.Binding(data), dml.Binding(indices)], [dml.Binding(output)])
    assert output.read() == sentinel_bytes(4 * count, seed=6).tobytes()
