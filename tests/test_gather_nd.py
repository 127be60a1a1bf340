"""GATHER_ND (version 0 of GATHER_ND1: no batch dimensions): the doc page's examples (copied by hand), every row of
its support tables, every rule as a bad-input table with message regexes, the debug device's index check, and
hypothesis properties through raw buffers against ``reference_gather_nd1`` with BatchDimensionCount 0."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_gather_nd1
from strategies import (
    T,
    addressed_byte_mask,
    build_buffer,
    execute_between_sentinels,
    read_buffer,
)
from test_gather_nd1 import GatherCase, gather_cases, run_case

import opendml as dml
from opendml.ops.gather_nd import GatherNdOperatorDesc

F32 = dml.DataType.FLOAT32
PREFIX = r"DML_OPERATOR_GATHER_ND: "


def compile_gather(input_tensor: dml.TensorDesc, indices_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc,
                   input_dimension_count: int, indices_dimension_count: int, level: str = "6_4",
                   debug: bool = False) -> dml.CompiledOperator:
    device = dml.Device(feature_level=level, debug=debug)
    desc = GatherNdOperatorDesc(input_tensor, indices_tensor, output_tensor, input_dimension_count,
                                indices_dimension_count)
    return device.compile_operator(device.create_operator(desc))


# -- goldens (the page's examples) ------------------------------------------------------------------------------------

def test_page_example_1_remaps_rows() -> None:
    # Input {2,2} = [[0,1],[2,3]], Indices {2,1} = [[1],[0]] (UINT32), both counts 2:
    # output[y, x] = input[indices[y], x]
    compiled = compile_gather(T(F32, [2, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, level="3_0")
    (output,) = compiled(np.array([[0, 1], [2, 3]], np.float32), np.array([[1], [0]], np.uint32))
    assert output.tolist() == [[2, 3], [0, 1]]


def test_page_example_1_as_4d_at_2_1() -> None:
    # The same remapping in the 4-D tensors the 2_1 row requires: the leading two dims are irrelevant 1s.
    compiled = compile_gather(T(F32, [1, 1, 2, 2]), T("UINT32", [1, 1, 2, 1]), T(F32, [1, 1, 2, 2]), 2, 2,
                              level="2_1")
    (output,) = compiled(np.array([0, 1, 2, 3], np.float32).reshape(1, 1, 2, 2),
                         np.array([1, 0], np.uint32).reshape(1, 1, 2, 1))
    assert output.tolist() == [[[[2, 3], [0, 1]]]]


def test_page_example_2_remaps_2d_coordinates_at_2_1() -> None:
    # Input {1,2,2,2} = [[[0,1],[2,3]],[[4,5],[6,7]]], InputDimensionCount 3; Indices {1,1,2,2} = [[0,1],[1,0]],
    # IndicesDimensionCount 2: output[y, x] = input[indices[y, 0], indices[y, 1], x] = [[2,3],[4,5]].
    compiled = compile_gather(T(F32, [1, 2, 2, 2]), T("UINT32", [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]), 3, 2,
                              level="2_1")
    (output,) = compiled(np.array([[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]], np.float32),
                         np.array([[[[0, 1], [1, 0]]]], np.uint32))
    assert output.tolist() == [[[[2, 3], [4, 5]]]]


def test_page_size_example() -> None:
    # Input {3,4,5,6,7}, InputDimensionCount 5; Indices {1,1,1,2,3}, IndicesDimensionCount 3 (a {1,2} array of
    # 3-coordinate tuples): the page states OutputTensor.Sizes {1,1,2,6,7}. Its formula (Input.Sizes[5-3 .. 5] =
    # {5,6,7} after the indices' {1,2}) would give {1,2,5,6,7}, contradicting it (DIGEST 2.5): refused.
    source, indices = T(F32, [3, 4, 5, 6, 7]), T("UINT32", [1, 1, 1, 2, 3])
    compiled = compile_gather(source, indices, T(F32, [1, 1, 2, 6, 7]), 5, 3)
    data = np.arange(3 * 4 * 5 * 6 * 7, dtype=np.float32).reshape(3, 4, 5, 6, 7)
    (output,) = compiled(data, np.array([0, 0, 0, 2, 3, 4], np.uint32).reshape(1, 1, 1, 2, 3))
    block = np.arange(42, dtype=np.float32).reshape(6, 7)
    np.testing.assert_array_equal(output[0, 0, 0], block)                               # input[0, 0, 0]
    np.testing.assert_array_equal(output[0, 0, 1], block + ((2 * 4 + 3) * 5 + 4) * 42)  # input[2, 3, 4] at 2478
    with pytest.raises(dml.ValidationError, match=PREFIX + r"OutputTensor.Sizes is \[1, 2, 5, 6, 7\]; it must be "
                                                           r"\[1, 1, 2, 6, 7\]"):
        compile_gather(source, indices, T(F32, [1, 2, 5, 6, 7]), 5, 3)


# -- negative and out-of-range coordinates ----------------------------------------------------------------------------

ROWS = np.array([[0, 1], [2, 3], [4, 5]], np.float32)


@pytest.mark.parametrize(("index_type", "values", "expected_rows"), [
    ("INT32", [-1, -3, -4, 3, 7], [2, 0, 0, 2, 2]),            # -1 -> 2, -3 -> 0; -4 and 3, 7 clamp
    ("UINT64", [2**64 - 1, 2**63, 1], [2, 2, 1]),               # unsigned: no wrap, clamp to the last row
])
def test_negative_coordinates_wrap_once_and_the_rest_clamp(index_type: str, values: list[int],
                                                           expected_rows: list[int]) -> None:
    count = len(values)
    compiled = compile_gather(T(F32, [3, 2]), T(index_type, [count, 1]), T(F32, [count, 2]), 2, 2, level="3_0")
    (output,) = compiled(ROWS, np.array(values, dtype=np.dtype(index_type.lower())).reshape(count, 1))
    np.testing.assert_array_equal(output, ROWS[expected_rows])


@pytest.mark.parametrize(("index_type", "values", "position", "bad", "allowed"), [
    ("INT32", [1, -4, 9], r"\[1, 0\]", "-4", r"\[-3, 2\]"),
    ("UINT32", [2, 0, 3], r"\[2, 0\]", "3", r"\[0, 2\]"),
])
def test_debug_device_refuses_out_of_range_and_writes_nothing(index_type: str, values: list[int], position: str,
                                                             bad: str, allowed: str) -> None:
    count = len(values)
    descs = (T(F32, [3, 2]), T(index_type, [count, 1]), T(F32, [count, 2]), 2, 2)
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


# -- strides and bindings ---------------------------------------------------------------------------------------------

def test_zero_stride_input_and_transposed_output_at_an_offset() -> None:
    # Input {4, 3} whose rows all read the same 3 values (stride 0 along dim 0); output {2, 3} transposed in a padded
    # buffer, bound at byte offset 32.
    compiled = compile_gather(T(F32, [4, 3], [0, 1]), T("INT32", [2, 1]), T(F32, [2, 3], [1, 4]), 2, 2)
    output = np.full(8 + 12, 99.0, np.float32)
    compiled.execute([dml.Binding(np.array([7, 8, 9], np.float32)), dml.Binding(np.array([3, -4], np.int32))],
                     [dml.Binding(output, offset=32)])
    assert output.tolist() == [99] * 8 + [7, 7, 99, 99, 8, 8, 99, 99, 9, 9, 99, 99]


def test_inputs_unchanged_and_bad_bindings_write_nothing() -> None:
    compiled = compile_gather(T(F32, [3, 2]), T("INT32", [2, 1]), T(F32, [2, 2]), 2, 2)
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


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize(("data_type", "index_type"), [("UINT8", "INT64"), ("FLOAT16", "UINT32")])
def test_narrow_outputs_keep_every_byte_around_their_elements(data_type: str, index_type: str, memory: str) -> None:
    """8- and 16-bit rows gathered into a transposed output inside sentinel bytes (bound at 48), the input
    transposed at 16, the indices at 32, coordinates in range, negative and out of range."""
    device = dml.Device()
    dtype, index_dtype = np.dtype(data_type.lower()), np.dtype(index_type.lower())
    x = np.arange(24, dtype=np.uint8).view(np.uint8).astype(dtype).reshape(4, 6)
    values = np.array([[3], [-1 if index_dtype.kind == "i" else 0], [9], [1]], index_dtype)
    strides = (1, 4)                                       # output {4, 6} transposed
    compiled = compile_gather(T(data_type, [4, 6], [1, 4]), T(index_type, [4, 1]), T(data_type, [4, 6],
                              list(strides)), 2, 2)
    input_bytes = build_buffer(x, (1, 4), byte_offset=16, tail_bytes=4, seed=1)
    index_bytes = build_buffer(values, None, byte_offset=32, tail_bytes=4, seed=2)
    got = execute_between_sentinels(device, compiled, [input_bytes, index_bytes], dtype.itemsize, (4, 6), strides,
                                    memory=memory, seed=3, label=data_type)
    expected = x[[3, 3 if index_dtype.kind == "i" else 0, 3, 1]]
    np.testing.assert_array_equal(read_buffer(got, dtype, (4, 6), strides, byte_offset=48), expected)


# -- the support tables, row by row -----------------------------------------------------------------------------------

EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
INDEX_TYPES = ["INT64", "INT32", "UINT64", "UINT32"]
# Copied from the page: (level, ranks, input/output types, indices types); nothing below 2_1, no 64-bit data.
PAGE = [("3_0", (1, 8), EIGHT, INDEX_TYPES), ("2_1", (4, 4), EIGHT, ["UINT32"])]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name not in ("UNKNOWN", "UINT4", "INT4")]


def _support_desc(rank: int, data_type: str, index_type: str) -> GatherNdOperatorDesc:
    # Input [2]*rank, one 1-tuple (IndicesDimensionCount 1): output = input's sizes after the first, padded.
    return GatherNdOperatorDesc(T(data_type, [2] * rank), T(index_type, [1] * rank),
                                T(data_type, [1] + [2] * (rank - 1)), rank, 1)


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    rows = [row for row in PAGE if dml.FeatureLevel.parse(row[0]) <= level]
    for data_type, index_type, rank in itertools.product(ALL_TYPES, [*INDEX_TYPES, "INT16", "FLOAT32"], (1, 3, 4, 8)):
        desc = _support_desc(rank, data_type, index_type)
        if not rows:
            with pytest.raises(dml.UnsupportedError, match=PREFIX[:-2] + r" needs feature level 2_1; the device is "
                                                                         rf"at {level}"):
                device.create_operator(desc)
            continue
        _, (low, high), data_types, index_types = max(rows, key=lambda row: dml.FeatureLevel.parse(row[0]))
        if data_type in data_types and index_type in index_types and low <= rank <= high:
            device.create_operator(desc)
        else:
            with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                device.create_operator(desc)


@pytest.mark.parametrize(("level", "rank", "index_type", "subject", "needed"), [
    ("2_1", 4, "INT32", ": IndicesTensor.DataType INT32", "3_0"),
    ("2_1", 4, "UINT64", ": IndicesTensor.DataType UINT64", "3_0"),
    ("2_1", 3, "UINT32", ": InputTensor.DimensionCount 3", "3_0"),
    ("2_1", 8, "UINT32", ": InputTensor.DimensionCount 8", "3_0"),
    ("2_0", 4, "UINT32", "", "2_1"),
    ("1_0", 4, "UINT32", "", "2_1"),
])
def test_below_its_level_names_the_lowest_level(level: str, rank: int, index_type: str, subject: str,
                                                needed: str) -> None:
    with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_GATHER_ND{subject} needs feature level "
                                                   rf"{needed}; the device is at {level}"):
        dml.Device(feature_level=level).create_operator(_support_desc(rank, "FLOAT32", index_type))
    dml.Device(feature_level=needed).create_operator(_support_desc(rank, "FLOAT32", index_type))


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, input, indices, output, I, J, level, error, message regex)
    ("indices rank differs", T(F32, [3, 2]), T("UINT32", [2]), T(F32, [1, 2]), 2, 1, "6_4", dml.ValidationError,
     r"IndicesTensor.DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    ("output rank differs", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [1, 2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"OutputTensor.DimensionCount is 3; it must equal InputTensor.DimensionCount \(2\)"),
    ("output type differs", T(F32, [3, 2]), T("UINT32", [2, 1]), T("FLOAT16", [2, 2]), 2, 2, "6_4",
     dml.ValidationError, r"OutputTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    ("float indices", T(F32, [3, 2]), T(F32, [2, 1]), T(F32, [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"IndicesTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of INT64, INT32, UINT64, "
     r"UINT32"),
    ("16-bit indices", T(F32, [3, 2]), T("INT16", [2, 1]), T(F32, [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"IndicesTensor.DataType INT16 is not supported"),
    ("FLOAT64 data at any level", T("FLOAT64", [3, 2]), T("UINT32", [2, 1]), T("FLOAT64", [2, 2]), 2, 2, "6_4",
     dml.ValidationError, r"InputTensor.DataType FLOAT64 is not supported; at feature level 6_4 it must be one of "
                          r"FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8"),
    ("INT64 data", T("INT64", [3, 2]), T("UINT32", [2, 1]), T("INT64", [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"InputTensor.DataType INT64 is not supported"),
    ("UINT64 data", T("UINT64", [3, 2]), T("INT64", [2, 1]), T("UINT64", [2, 2]), 2, 2, "4_1", dml.ValidationError,
     r"InputTensor.DataType UINT64 is not supported; at feature level 4_1"),
    ("signed indices at 2_1", T(F32, [1, 1, 3, 2]), T("INT32", [1, 1, 2, 1]), T(F32, [1, 1, 2, 2]), 2, 2, "2_1",
     dml.UnsupportedError, r"IndicesTensor.DataType INT32 needs feature level 3_0; the device is at 2_1"),
    ("rank 2 at 2_1", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, "2_1", dml.UnsupportedError,
     r"InputTensor.DimensionCount 2 needs feature level 3_0; the device is at 2_1"),
    ("rank 9", T(F32, [1] * 9), T("UINT32", [1] * 9), T(F32, [1] * 9), 9, 9, "6_4", dml.ValidationError,
     r"InputTensor.DimensionCount is 9; it must be 1 to 8"),
    ("InputDimensionCount 0", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 0, 2, "6_4", dml.ValidationError,
     r"InputDimensionCount is 0; it must be in \[1, 2\] \(InputTensor.DimensionCount\)"),
    ("InputDimensionCount above the rank", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 3, 2, "6_4",
     dml.ValidationError, r"InputDimensionCount is 3; it must be in \[1, 2\]"),
    ("IndicesDimensionCount 0", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 0, "6_4", dml.ValidationError,
     r"IndicesDimensionCount is 0; it must be in \[1, 2\] \(IndicesTensor.DimensionCount\)"),
    ("IndicesDimensionCount above the rank", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 5, "6_4",
     dml.ValidationError, r"IndicesDimensionCount is 5; it must be in \[1, 2\]"),
    ("tuple size 0", T(F32, [3, 2]), T("UINT32", [2, 0]), T(F32, [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"IndicesTensor.Sizes\[1\] is 0; every size must be at least 1"),
    ("tuple longer than the input rank", T(F32, [3, 2]), T("UINT32", [1, 3]), T(F32, [1, 1]), 2, 1, "6_4",
     dml.ValidationError, r"IndicesTensor.Sizes\[1\] \(the index tuple size\) is 3; it must be in \[1, 2\] "
                          r"\(InputDimensionCount\)"),
    ("tuple longer than the input rank at 2_1", T(F32, [1, 1, 3, 2]), T("UINT32", [1, 1, 1, 5]), T(F32, [1, 1, 1, 1]),
     4, 2, "2_1", dml.ValidationError, r"IndicesTensor.Sizes\[3\] \(the index tuple size\) is 5; it must be in "
                                       r"\[1, 4\] \(InputDimensionCount\)"),
    ("tuple longer than InputDimensionCount", T(F32, [1, 3, 2]), T("UINT32", [1, 1, 3]), T(F32, [1, 1, 1]), 2, 1,
     "6_4", dml.ValidationError, r"IndicesTensor.Sizes\[2\] \(the index tuple size\) is 3; it must be in \[1, 2\] "
                                 r"\(InputDimensionCount\)"),
    ("irrelevant input dim not 1", T(F32, [2, 3, 2]), T("UINT32", [1, 2, 1]), T(F32, [1, 2, 2]), 2, 2, "6_4",
     dml.ValidationError, r"InputTensor.Sizes\[0\] is 2; with InputDimensionCount 2 its leading 1 dimension\(s\) are "
                          r"irrelevant and must be 1"),
    ("irrelevant indices dim not 1", T(F32, [1, 3, 2]), T("UINT32", [1, 2, 1]), T(F32, [1, 1, 2]), 2, 1, "6_4",
     dml.ValidationError, r"IndicesTensor.Sizes\[1\] is 2; with IndicesDimensionCount 1 its leading 2 dimension\(s\) "
                          r"are irrelevant and must be 1"),
    ("output needs more dims than the rank", T(F32, [3, 4, 5]), T("UINT32", [2, 2, 1]), T(F32, [2, 2, 4]), 3, 3,
     "6_4", dml.ValidationError, r"the output has 4 meaningful dimensions \(IndicesDimensionCount - 1 \+ "
                                 r"InputDimensionCount - tuple size 1\); OutputTensor.DimensionCount is 3"),
    ("wrong output sizes", T(F32, [3, 2]), T("UINT32", [4, 1]), T(F32, [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"OutputTensor.Sizes is \[2, 2\]; it must be \[4, 2\] \(the indices' sizes but the tuple size, then the input's "
     r"sizes after the tuple dimensions, right-aligned with leading 1s\)"),
    ("wrong output sizes at 2_1", T(F32, [1, 2, 2, 2]), T("UINT32", [1, 1, 2, 2]), T(F32, [1, 2, 2, 2]), 3, 2, "2_1",
     dml.ValidationError, r"OutputTensor.Sizes is \[1, 2, 2, 2\]; it must be \[1, 1, 2, 2\]"),
    ("overlapping output", T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2], [0, 1]), 2, 2, "6_4",
     dml.ValidationError, r"OutputTensor.Strides \[0, 1\] map two elements of Sizes \[2, 2\] onto the same memory"),
    ("indices total size too small", T(F32, [3, 2]), T("UINT32", [2, 1], total_tensor_size_in_bytes=4),
     T(F32, [2, 2]), 2, 2, "6_4", dml.ValidationError,
     r"IndicesTensor.TotalTensorSizeInBytes is 4; it must be at least 8"),
    ("below 2_1", T(F32, [1, 1, 3, 2]), T("UINT32", [1, 1, 2, 1]), T(F32, [1, 1, 2, 2]), 2, 2, "2_0",
     dml.UnsupportedError, r"^DML_OPERATOR_GATHER_ND needs feature level 2_1; the device is at 2_0"),
]


@pytest.mark.parametrize(("case_id", "input_tensor", "indices_tensor", "output_tensor", "input_count", "indices_count",
                          "level", "error", "message"), BAD_DESCRIPTORS, ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(case_id: str, input_tensor: dml.TensorDesc, indices_tensor: dml.TensorDesc,
                         output_tensor: dml.TensorDesc, input_count: int, indices_count: int, level: str,
                         error: type[Exception], message: str) -> None:
    desc = GatherNdOperatorDesc(input_tensor, indices_tensor, output_tensor, input_count, indices_count)
    with pytest.raises(error, match=message if message.startswith("^") else PREFIX + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: GatherNdOperatorDesc([3, 2], T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2),
     r"InputTensor is \[3, 2\]; it must be a TensorDesc$"),
    (lambda: GatherNdOperatorDesc(T(F32, [3, 2]), None, T(F32, [2, 2]), 2, 2),
     r"IndicesTensor is None; it must be a TensorDesc$"),
    (lambda: GatherNdOperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), "out", 2, 2),
     r"OutputTensor is 'out'; it must be a TensorDesc$"),
    (lambda: GatherNdOperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), -1, 2),
     r"InputDimensionCount is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: GatherNdOperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2.0),
     r"IndicesDimensionCount is 2.0; it must be an integer"),
    (lambda: GatherNdOperatorDesc(T(F32, [3, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), True, 2),
     r"InputDimensionCount is True; it must be an integer"),
])
def test_bad_descriptor_fields(build: object, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()  # type: ignore[operator]


def test_descriptor_registration_and_json_fields() -> None:
    from opendml.model.fields import fields_of
    from opendml.model.reader import read_operator_desc

    assert dml.OperatorDesc.registry[dml.OperatorType.GATHER_ND] is GatherNdOperatorDesc
    assert dml.OperatorDesc.registry[dml.OperatorType.GATHER_ND1] is dml.GatherNd1OperatorDesc
    assert [item.dml_name for item in fields_of(GatherNdOperatorDesc)] == [
        "InputTensor", "IndicesTensor", "OutputTensor", "InputDimensionCount", "IndicesDimensionCount"]
    spec = {"InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
            "IndicesTensor": {"DataType": "UINT32", "Sizes": [2, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
            "InputDimensionCount": 2, "IndicesDimensionCount": 2}
    desc = read_operator_desc("desc", GatherNdOperatorDesc, spec)
    assert desc == GatherNdOperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2)
    assert desc.label == "DML_OPERATOR_GATHER_ND" and desc.expected_output_sizes() == (2, 2)
    equivalent = desc.as_gather_nd1()
    assert isinstance(equivalent, dml.GatherNd1OperatorDesc) and equivalent.batch_dimension_count == 0
    assert equivalent.label == "DML_OPERATOR_GATHER_ND"   # the kernels' messages name the operator that was created


# -- properties through raw buffers ----------------------------------------------------------------------------------

@settings(max_examples=25)
@given(gather_cases(version=0), st.booleans())
def test_gather_matches_the_reference_through_raw_buffers(case: GatherCase, debug: bool) -> None:
    """GATHER_ND1's cases with no batch, drawn from GATHER_ND's table. Release devices: every element the oracle's
    (batch 0), bit for bit; no byte outside the output's elements written; inputs unchanged (checked by _run).
    Debug devices: the first out-of-range coordinate refused by its position, nothing written."""
    expected, bad = reference_gather_nd1(case.x, case.indices, case.input_dimension_count,
                                         case.indices_dimension_count, 0, signed=case.index_type.startswith("INT"))
    output_buffer, before, error, _ = run_case(case, debug)
    if debug and bad:
        position, value = bad[0]
        assert error is not None
        assert re.search(PREFIX + re.escape(f"IndicesTensor{list(position)} is {value}, out of range"), str(error))
        np.testing.assert_array_equal(output_buffer, before)
        return
    assert error is None
    got = read_buffer(output_buffer, case.x.dtype, case.output_sizes, case.output_strides, byte_offset=case.offsets[2])
    np.testing.assert_array_equal(got, expected)  # bit for bit: the data travel as unsigned integers
    mask = addressed_byte_mask(output_buffer.size, case.x.dtype.itemsize, case.output_sizes, case.output_strides,
                               byte_offset=case.offsets[2])
    np.testing.assert_array_equal(output_buffer[~mask], before[~mask])
