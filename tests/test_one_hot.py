"""ONE_HOT: the doc page's four examples (copied by hand), every row of the page's support table, a bad-input table
with message regexes, and hypothesis properties against ``reference_one_hot``."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import off_and_on, reference_one_hot
from strategies import (
    OUTPUT_STRIDE_KINDS,
    T,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    execute_between_sentinels,
    read_buffer,
    sentinel_bytes,
    shapes,
    strides_for,
    tensor_size_in_bytes,
)

import opendml as dml
from opendml.backends.cpu import memory_kernels
from opendml.backends.cpu import one_hot as one_hot_kernels

F32 = dml.DataType.FLOAT32
PREFIX = r"DML_OPERATOR_ONE_HOT: "




def compile_one_hot(indices: dml.TensorDesc, values: dml.TensorDesc, output: dml.TensorDesc, axis: int,
                    level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    return device.compile_operator(device.create_operator(dml.OneHotOperatorDesc(indices, values, output, axis)))


@contextlib.contextmanager
def streaming_forced() -> Iterator[None]:
    """Compiles the streamed fill (non-temporal stores) for any output size and row length."""
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES, one_hot_kernels._STREAMED_MIN_ROW_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES, one_hot_kernels._STREAMED_MIN_ROW_BYTES = 0, 0
    try:
        yield
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES, one_hot_kernels._STREAMED_MIN_ROW_BYTES = saved


# -- goldens: the page's four examples ---------------------------------------------------------------------------------

def test_page_example_1() -> None:
    compiled = compile_one_hot(T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), axis=3,
                               level="2_0")
    indices = np.array([[[[0],
                          [3],
                          [2]]]], np.uint32)
    (output,) = compiled(indices, np.array([[[[0, 1]]]], np.float32))
    assert output.dtype == np.float32
    assert output.tolist() == [[[[1, 0, 0, 0],   # the one-hot encoding is formed across the rows
                                 [0, 0, 0, 1],
                                 [0, 0, 1, 0]]]]


def test_page_example_2_another_axis() -> None:
    compiled = compile_one_hot(T("UINT32", [1, 1, 1, 4]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), axis=2,
                               level="2_0")
    (output,) = compiled(np.array([[[[0, 2, 1, 0]]]], np.uint32), np.array([[[[0, 1]]]], np.float32))
    assert output.tolist() == [[[[1, 0, 0, 1],   # the one-hot encoding is formed across the columns
                                 [0, 0, 1, 0],
                                 [0, 1, 0, 0]]]]


def test_page_example_3_other_on_off_values() -> None:
    compiled = compile_one_hot(T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 3, 1]), T(F32, [1, 1, 3, 4]), axis=3,
                               level="2_0")
    values = np.array([[[[4],     # off value
                         [2],     # on value
                         [9]]]], np.float32)   # unused
    (output,) = compiled(np.array([[[[0], [3], [2]]]], np.uint32), values)
    assert output.tolist() == [[[[2, 4, 4, 4],
                                 [4, 4, 4, 2],
                                 [4, 4, 2, 4]]]]


def test_page_example_4_negative_and_out_of_range_indices() -> None:
    compiled = compile_one_hot(T("INT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), axis=3,
                               level="3_0")
    indices = np.array([[[[-3],
                          [100],
                          [3]]]], np.int32)
    (output,) = compiled(indices, np.array([[[[0, 1]]]], np.float32))
    assert output.tolist() == [[[[0, 1, 0, 0],   # negative indices count from the end
                                 [0, 0, 0, 0],   # out-of-bounds indices are ignored; all elements are OffValue
                                 [0, 0, 0, 1]]]]


def test_page_examples_3_and_4_combined() -> None:
    # The values tensor {1,1,3,1} = [4, 2, 9] (off 4, on 2) with the indices [-3, 100, 3], depth 4.
    compiled = compile_one_hot(T("INT32", [1, 1, 3, 1]), T(F32, [1, 1, 3, 1]), T(F32, [1, 1, 3, 4]), axis=3)
    (output,) = compiled(np.array([[[[-3], [100], [3]]]], np.int32), np.array([[[[4], [2], [9]]]], np.float32))
    assert output.tolist() == [[[[4, 2, 4, 4],
                                 [4, 4, 4, 4],
                                 [4, 4, 4, 2]]]]


# -- the rules DECISIONS 15 and 16 settle ------------------------------------------------------------------------------

@pytest.mark.parametrize(("index_type", "indices", "expected_positions"), [
    ("INT32", [0, 3, 4, -1, -4, -5, 2**31 - 1, -2**31], [0, 3, None, 3, 0, None, None, None]),
    ("INT64", [4, -4, -5, 2**63 - 1, -2**63], [None, 0, None, None, None]),
    ("UINT32", [3, 4, 2**32 - 1, 2**31], [3, None, None, None]),
    ("UINT64", [0, 3, 4, 2**64 - 1, 2**63, 2**64 - 4], [0, 3, None, None, None, None]),
])
def test_index_ranges(index_type: str, indices: list[int], expected_positions: list[int | None]) -> None:
    # i == D, i < -D and huge unsigned values (which must not wrap to negative ones) leave the sequence off.
    count = len(indices)
    compiled = compile_one_hot(T(index_type, [count, 1]), T("INT8", [1, 2]), T("INT8", [count, 4]), axis=1)
    (output,) = compiled(np.array(indices, dtype=index_type.lower()).reshape(count, 1), np.array([[7, -9]], np.int8))
    for row, position in zip(output.tolist(), expected_positions, strict=True):
        assert row == [-9 if column == position else 7 for column in range(4)]


@pytest.mark.parametrize(("sizes", "strides", "memory", "off", "on"), [
    ([2, 3], None, [5, 6, 7, 8, 9, 10], 5, 6),         # highest dim of size > 1 is dim 1: element (0, 1)
    ([3, 1], None, [5, 6, 7], 5, 6),                    # dim 0: element (1, 0)
    ([3, 1], [4, 1], [5, 0, 0, 0, 6, 0, 0, 0, 7], 5, 6),  # strides honored: element (1, 0) lies at offset 4
    ([2, 2], [1, 2], [5, 6, 7, 8], 5, 7),               # transposed: element (0, 1) lies at offset 2
    ([2, 2], [1, 0], [5, 6], 5, 5),                     # stride 0 along dim 1: OnValue is OffValue
])
def test_values_tensor_positions(sizes: list[int], strides: list[int] | None, memory: list[int], off: int,
                                 on: int) -> None:
    compiled = compile_one_hot(T("UINT32", [2, 1]), T("UINT16", sizes, strides), T("UINT16", [2, 3]), axis=1)
    output = np.zeros(6, np.uint16)
    compiled.execute([dml.Binding(np.array([2, 0], np.uint32)), dml.Binding(np.array([*memory, 0], np.uint16))],
                     [dml.Binding(output)])
    assert output.tolist() == [off, off, on, on, off, off]


def test_broadcast_indices_and_padded_output() -> None:
    # One index for all three sequences (stride 0), output columns 2 apart, 1 element of padding per row.
    compiled = compile_one_hot(T("UINT32", [3, 1], [0, 0]), T("FLOAT16", [1, 2]), T("FLOAT16", [3, 2], [5, 2]),
                               axis=1)
    output = np.full(15, 99, np.float16)
    compiled.execute([dml.Binding(np.array([1], np.uint32)), dml.Binding(np.array([0.5, -2.0], np.float16))],
                     [dml.Binding(output)])
    assert output.tolist() == [0.5, 99, -2, 99, 99, 0.5, 99, -2, 99, 99, 0.5, 99, -2, 99, 99]


def test_depth_one() -> None:
    compiled = compile_one_hot(T("INT64", [4, 1]), T(F32, [2, 1]), T(F32, [4, 1]), axis=1)
    (output,) = compiled(np.array([[0], [-1], [1], [-2]], np.int64), np.array([[3], [8]], np.float32))
    assert output.ravel().tolist() == [8, 8, 3, 3]


def test_value_bits_are_copied_exactly() -> None:
    values = np.array([[0x7FC00001, 0xFFA00002]], np.uint32).view(np.float32)   # two NaNs with payloads
    compiled = compile_one_hot(T("UINT32", [2, 1]), T(F32, [1, 2]), T(F32, [2, 3]), axis=1)
    (output,) = compiled(np.array([[1], [5]], np.uint32), values)
    assert output.view(np.uint32).tolist() == [[0x7FC00001, 0xFFA00002, 0x7FC00001], [0x7FC00001] * 3]


@pytest.mark.parametrize("offset", [0, 16, 32, 48])
@pytest.mark.parametrize("depth", [1, 5, 16, 33])
def test_streamed_fill_at_every_line_phase(offset: int, depth: int) -> None:
    rows = 37
    indices = (np.arange(rows, dtype=np.int32) * 7 % (depth + 3) - 1).reshape(rows, 1)
    with streaming_forced():
        compiled = compile_one_hot(T("INT32", [rows, 1]), T("UINT16", [1, 2]), T("UINT16", [rows, depth]), axis=1)
    values = np.array([[0x1234, 0xABCD]], np.uint16)
    memory = np.full(offset // 2 + rows * depth + 40, 0x5555, np.uint16)
    compiled.execute([dml.Binding(indices), dml.Binding(values)], [dml.Binding(memory, offset=offset)])
    start = offset // 2
    expected = reference_one_hot(indices, values, depth, 1)
    assert np.array_equal(memory[start: start + rows * depth].reshape(rows, depth), expected)
    assert (memory[:start] == 0x5555).all() and (memory[start + rows * depth + 1:] == 0x5555).all()


def test_large_output_uses_the_streamed_path_correctly() -> None:
    rng = np.random.default_rng(9)
    indices = rng.integers(-300, 300, (2, 20000, 1)).astype(np.int64)
    values = np.array([[[1.5, -0.25]]], np.float32)
    compiled = compile_one_hot(T("INT64", [2, 20000, 1]), T(F32, [1, 1, 2]), T(F32, [2, 20000, 256]), axis=2)
    output = np.full((2, 20000, 256), np.nan, np.float32)
    compiled.execute([dml.Binding(indices), dml.Binding(values)], [dml.Binding(output)])
    positions = np.where(indices < 0, indices + 256, indices)
    valid = (positions >= 0) & (positions < 256)
    expected = np.where(valid & (np.arange(256) == positions), np.float32(-0.25), np.float32(1.5))
    assert np.array_equal(output, expected)


# -- the support table, row by row as the page prints it ---------------------------------------------------------------

INDEX_TYPES = ["INT64", "INT32", "UINT64", "UINT32"]
ELEVEN = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
# (level, dimension counts, IndicesTensor types, ValuesTensor = OutputTensor types)
PAGE_ROWS = [
    ("4_1", (1, 8), INDEX_TYPES, ELEVEN),
    ("3_0", (1, 8), INDEX_TYPES, EIGHT),
    ("2_1", (4, 4), ["UINT32"], EIGHT),
    ("2_0", (4, 4), ["UINT32"], ["FLOAT32", "FLOAT16"]),
]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name != "UNKNOWN"]


def _row_at(level: dml.FeatureLevel) -> tuple[str, tuple[int, int], list[str], list[str]] | None:
    rows = [row for row in PAGE_ROWS if dml.FeatureLevel.parse(row[0]) <= level]
    return max(rows, key=lambda row: dml.FeatureLevel.parse(row[0])) if rows else None


def _desc(index_type: str, value_type: str, rank: int) -> dml.OneHotOperatorDesc:
    """Depth 4 along the last axis: indices [2, ..., 2, 1], values [1, ..., 1, 2], output [2, ..., 2, 4]."""
    return dml.OneHotOperatorDesc(T(index_type, [2] * (rank - 1) + [1]), T(value_type, [1] * (rank - 1) + [2]),
                                  T(value_type, [2] * (rank - 1) + [4]), rank - 1)


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    row = _row_at(level)
    for index_type, value_type, rank in itertools.product(ALL_TYPES, ALL_TYPES, (1, 2, 3, 4, 5, 8)):
        desc = _desc(index_type, value_type, rank)
        if row is not None and index_type in row[2] and value_type in row[3] and row[1][0] <= rank <= row[1][1]:
            device.create_operator(desc)
        else:
            with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                device.create_operator(desc)


@pytest.mark.parametrize(("level", "index_type", "value_type", "rank", "needed", "subject"), [
    ("1_0", "UINT32", "FLOAT32", 4, "2_0", None),                             # ONE_HOT starts at 2_0
    ("2_1", "INT32", "FLOAT32", 4, "3_0", "IndicesTensor.DataType INT32"),    # only UINT32 indices below 3_0
    ("2_1", "UINT64", "FLOAT32", 4, "3_0", "IndicesTensor.DataType UINT64"),
    ("2_1", "UINT32", "FLOAT32", 3, "3_0", "IndicesTensor.DimensionCount 3"),  # exactly 4 dimensions below 3_0
    ("2_0", "UINT32", "FLOAT16", 5, "3_0", "IndicesTensor.DimensionCount 5"),
    ("2_0", "UINT32", "INT8", 4, "2_1", "ValuesTensor.DataType INT8"),
    ("3_0", "UINT32", "FLOAT64", 2, "4_1", "ValuesTensor.DataType FLOAT64"),
    ("4_0", "INT64", "UINT64", 8, "4_1", "ValuesTensor.DataType UINT64"),
])
def test_below_its_level_names_the_lowest_level(level: str, index_type: str, value_type: str, rank: int,
                                                needed: str, subject: str | None) -> None:
    message = (rf"DML_OPERATOR_ONE_HOT needs feature level {needed}; the device is at {level}" if subject is None
               else rf"{PREFIX}{subject} needs feature level {needed}; the device is at {level}")
    with pytest.raises(dml.UnsupportedError, match=message):
        dml.Device(feature_level=level).create_operator(_desc(index_type, value_type, rank))
    dml.Device(feature_level=needed).create_operator(_desc(index_type, value_type, rank))


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, indices, values, output, axis, level, error, message regex)
    ("indices not of size 1 along Axis", T("UINT32", [1, 1, 3, 4]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), 3,
     "6_4", dml.ValidationError, r"IndicesTensor.Sizes is \[1, 1, 3, 4\]; with OutputTensor.Sizes \[1, 1, 3, 4\] and "
                                 r"Axis 3 it must be \[1, 1, 3, 1\]"),
    ("indices differ outside Axis", T("UINT32", [2, 1, 4, 4]), T(F32, [1, 1, 1, 2]), T(F32, [2, 3, 4, 5]), 1, "6_4",
     dml.ValidationError, r"IndicesTensor.Sizes is \[2, 1, 4, 4\]; with OutputTensor.Sizes \[2, 3, 4, 5\] and Axis 1 "
                          r"it must be \[2, 1, 4, 5\]"),
    ("output rank differs", T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]), T(F32, [1, 3, 4]), 3, "6_4",
     dml.ValidationError, r"OutputTensor.DimensionCount is 3; it must equal IndicesTensor.DimensionCount \(4\)"),
    ("values rank differs", T("UINT32", [3, 1]), T(F32, [2]), T(F32, [3, 4]), 1, "6_4", dml.ValidationError,
     r"ValuesTensor.DimensionCount is 1; it must equal IndicesTensor.DimensionCount \(2\)"),
    ("values tensor of 1 element", T("UINT32", [3, 1]), T(F32, [1, 1]), T(F32, [3, 4]), 1, "6_4", dml.ValidationError,
     r"ValuesTensor has 1 element \(Sizes \[1, 1\]\); it must have at least 2, OffValue and OnValue"),
    ("output type differs from values", T("UINT32", [3, 1]), T(F32, [1, 2]), T("FLOAT16", [3, 4]), 1, "6_4",
     dml.ValidationError, r"OutputTensor.DataType is FLOAT16; it must equal ValuesTensor.DataType \(FLOAT32\)"),
    ("Axis out of range", T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 2, "6_4", dml.ValidationError,
     r"Axis is 2; it must be in \[0, 1\] for IndicesTensor of 2 dimensions"),
    ("float indices", T(F32, [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 1, "6_4", dml.ValidationError,
     r"IndicesTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of INT64, INT32, UINT64, "
     r"UINT32"),
    ("16-bit indices", T("INT16", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 1, "6_4", dml.ValidationError,
     r"IndicesTensor.DataType INT16 is not supported"),
    ("overlapping output strides", T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4], [1, 1]), 1, "6_4",
     dml.ValidationError, r"OutputTensor.Strides \[1, 1\] map two elements of Sizes \[3, 4\] onto the same memory"),
    ("a zero size", T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 0]), 1, "6_4", dml.ValidationError,
     r"OutputTensor.Sizes\[1\] is 0; every size must be at least 1"),
    ("below 2_0", T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), 3, "1_0",
     dml.UnsupportedError, r"DML_OPERATOR_ONE_HOT needs feature level 2_0; the device is at 1_0"),
    ("INT32 indices below 3_0", T("INT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 4]), 3, "2_1",
     dml.UnsupportedError, r"IndicesTensor.DataType INT32 needs feature level 3_0; the device is at 2_1"),
    ("rank 2 below 3_0", T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 1, "2_1", dml.UnsupportedError,
     r"IndicesTensor.DimensionCount 2 needs feature level 3_0; the device is at 2_1"),
]


@pytest.mark.parametrize(("indices", "values", "output", "axis", "level", "error", "message"),
                         [case[1:] for case in BAD_DESCRIPTORS], ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(indices: dml.TensorDesc, values: dml.TensorDesc, output: dml.TensorDesc, axis: int,
                         level: str, error: type[Exception], message: str) -> None:
    desc = dml.OneHotOperatorDesc(indices, values, output, axis)
    with pytest.raises(error, match=message if message.startswith("DML_") else PREFIX + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.OneHotOperatorDesc([3, 1], T(F32, [1, 2]), T(F32, [3, 4]), 1),
     r"IndicesTensor is \[3, 1\]; it must be a TensorDesc$"),
    (lambda: dml.OneHotOperatorDesc(T("UINT32", [3, 1]), None, T(F32, [3, 4]), 1),
     r"ValuesTensor is None; it must be a TensorDesc$"),
    (lambda: dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), -1),
     r"Axis is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), True),
     r"Axis is True; it must be an integer"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()


def test_slots_and_properties() -> None:
    desc = dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [1, 3], [0, 5]), T(F32, [3, 4]), 1)
    assert [name for name, _ in desc.input_slots()] == ["IndicesTensor", "ValuesTensor"]
    assert [name for name, _ in desc.output_slots()] == ["OutputTensor"]
    assert desc.depth == 4 and desc.on_value_offset == 5
    assert desc.OPERATOR_TYPE is dml.OperatorType.ONE_HOT


def test_owned_values_tensor() -> None:
    owned = T(F32, [1, 2], flags="OWNED_BY_DML")
    compiled = compile_one_hot(T("UINT32", [2, 1]), owned, T(F32, [2, 3]), axis=1)
    values = np.array([[0, 1]], np.float32)
    compiled.initialize([None, dml.Binding(values)])
    values[:] = 5                                      # the initializer copied the values
    output = np.empty(6, np.float32)
    compiled.execute([dml.Binding(np.array([2, 0], np.uint32)), None], [dml.Binding(output)])
    assert output.tolist() == [0, 0, 1, 1, 0, 0]


def test_failed_dispatch_leaves_the_output() -> None:
    compiled = compile_one_hot(T("UINT32", [2, 1]), T(F32, [1, 2]), T(F32, [2, 3]), axis=1)
    output = np.full(6, 42, np.float32)
    with pytest.raises(dml.BindingError, match=r"ValuesTensor binding needs bytes \[0, 8\) but the buffer holds 4 "
                                               r"bytes"):
        compiled.execute([dml.Binding(np.array([2, 0], np.uint32)), dml.Binding(bytearray(4))], [dml.Binding(output)])
    assert output.tolist() == [42] * 6


# -- properties -------------------------------------------------------------------------------------------------------

LEVELS = ("2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4")


@dataclass(frozen=True)
class OneHotCase:
    level: str
    index_type: str
    value_type: str
    output_sizes: tuple[int, ...]
    axis: int
    values_sizes: tuple[int, ...]
    index_strides: tuple[int, ...] | None
    values_strides: tuple[int, ...] | None
    output_strides: tuple[int, ...] | None
    indices: np.ndarray
    values: np.ndarray

    @property
    def index_sizes(self) -> tuple[int, ...]:
        return tuple(1 if dim == self.axis else size for dim, size in enumerate(self.output_sizes))

    def descriptor(self) -> dml.OneHotOperatorDesc:
        return dml.OneHotOperatorDesc(T(self.index_type, list(self.index_sizes), _list(self.index_strides)),
                                      T(self.value_type, list(self.values_sizes), _list(self.values_strides)),
                                      T(self.value_type, list(self.output_sizes), _list(self.output_strides)),
                                      self.axis)


def _list(strides: tuple[int, ...] | None) -> list[int] | None:
    return None if strides is None else list(strides)


def _index_values(dtype: np.dtype, depth: int) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    edges = [0, depth - 1, depth, depth + 1, info.max, info.max - 1, 2**31 - 1, 2**31]
    if dtype.kind == "i":
        edges += [-1, -depth, -depth - 1, -depth + 1, info.min, info.min + 1]
    else:
        edges += [2**32 - 1, info.max - depth]
    edges = [value for value in edges if info.min <= value <= info.max]
    in_range = st.integers(-depth if dtype.kind == "i" else 0, depth - 1)
    return st.one_of(in_range, in_range, st.sampled_from(edges), st.integers(int(info.min), int(info.max)))


@st.composite
def one_hot_cases(draw: st.DrawFn) -> OneHotCase:
    level = draw(st.sampled_from(LEVELS))
    row = _row_at(dml.FeatureLevel.parse(level))
    assert row is not None
    _, (low, high), index_types, value_types = row
    rank = draw(st.integers(low, high))
    index_type, value_type = draw(st.sampled_from(index_types)), draw(st.sampled_from(value_types))
    axis = draw(st.integers(0, rank - 1))
    others = list(draw(shapes(rank, max_elements=200, max_side=12)))
    depth = draw(st.one_of(st.integers(1, 6), st.integers(1, 80)))
    others[axis] = depth
    output_sizes = tuple(others)
    values_sizes = tuple(draw(shapes(rank, max_elements=12, max_side=3)))
    if np.prod(values_sizes) < 2:
        dim = draw(st.integers(0, rank - 1))
        values_sizes = tuple(2 if d == dim else size for d, size in enumerate(values_sizes))
    index_sizes = tuple(1 if dim == axis else size for dim, size in enumerate(output_sizes))
    index_strides = draw(strides_for(index_sizes))
    values_strides = draw(strides_for(values_sizes))
    output_strides = draw(strides_for(output_sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    index_dtype, value_dtype = np.dtype(index_type.lower()), np.dtype(value_type.lower())
    indices = np.array(draw(st.lists(_index_values(index_dtype, depth), min_size=int(np.prod(index_sizes)),
                                     max_size=int(np.prod(index_sizes)))), dtype=index_dtype).reshape(index_sizes)
    raw = draw(arrays(np.uint8, (*values_sizes, value_dtype.itemsize)))   # any bits: NaN payloads, -0.0
    values = np.ascontiguousarray(raw).view(value_dtype).reshape(values_sizes)
    # consistent with the strides: equal along stride-0 dimensions
    indices = read_buffer(build_buffer(indices, index_strides), index_dtype, index_sizes, index_strides)
    values = read_buffer(build_buffer(values, values_strides), value_dtype, values_sizes, values_strides)
    note(f"level={level} {index_type}->{value_type} out={output_sizes} axis={axis} values={values_sizes} "
         f"strides idx={index_strides} val={values_strides} out={output_strides}")
    return OneHotCase(level, index_type, value_type, output_sizes, axis, values_sizes, index_strides, values_strides,
                      output_strides, indices, values)


@cache
def _compiled(level: str, desc: dml.OneHotOperatorDesc, streaming: bool) -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    with streaming_forced() if streaming else contextlib.nullcontext():
        return device.compile_operator(device.create_operator(desc))


def _same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    return got.shape == expected.shape and got.dtype == expected.dtype and np.array_equal(
        got.view(unsigned), expected.view(unsigned))


def test_reference_reads_the_values_as_the_page_says() -> None:
    assert off_and_on(np.array([[[[4], [2], [9]]]], np.float32)) == (4, 2)
    assert off_and_on(np.array([[1, 2], [3, 4]], np.int8)) == (1, 2)
    assert off_and_on(np.array([[1], [3]], np.int8)) == (1, 3)
    expected = [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]
    assert reference_one_hot(np.array([[-3], [100], [3]], np.int32), np.array([[0, 1]], np.float32), 4, 1).tolist() \
        == expected
    assert reference_one_hot(np.array([[2**64 - 1]], np.uint64), np.array([[0, 1]], np.float32), 4, 1).tolist() \
        == [[0, 0, 0, 0]]


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@given(case=one_hot_cases())
def test_one_hot_matches_reference(case: OneHotCase, streaming: bool) -> None:
    (got,) = _compiled(case.level, case.descriptor(), streaming)(case.indices, case.values)
    expected = reference_one_hot(case.indices, case.values, case.output_sizes[case.axis], case.axis)
    assert _same_bits(got, expected)


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(case=one_hot_cases(), data=st.data())
def test_one_hot_raw_buffers(case: OneHotCase, streaming: bool, data: st.DataObject) -> None:
    index_offset, values_offset, output_offset = (data.draw(byte_offsets(), name)
                                                  for name in ("indices offset", "values offset", "output offset"))
    index_buffer = build_buffer(case.indices, case.index_strides, byte_offset=index_offset,
                                tail_bytes=data.draw(st.integers(0, 20)))
    values_buffer = build_buffer(case.values, case.values_strides, byte_offset=values_offset, seed=1)
    inputs_before = index_buffer.copy(), values_buffer.copy()
    dtype = case.values.dtype
    size = tensor_size_in_bytes(dtype.itemsize, case.output_sizes, case.output_strides)
    output = sentinel_bytes(output_offset + size + data.draw(st.integers(0, 20)), seed=5)
    before = output.copy()
    _compiled(case.level, case.descriptor(), streaming).execute(
        [dml.Binding(index_buffer, offset=index_offset), dml.Binding(values_buffer, offset=values_offset)],
        [dml.Binding(output, offset=output_offset)])
    assert np.array_equal(index_buffer, inputs_before[0]) and np.array_equal(values_buffer, inputs_before[1])
    written = addressed_byte_mask(len(output), dtype.itemsize, case.output_sizes, case.output_strides,
                                  byte_offset=output_offset)
    changed = np.flatnonzero((output != before) & ~written)
    assert changed.size == 0, f"bytes outside the output's elements changed: {changed[:16].tolist()}"
    got = read_buffer(output, dtype, case.output_sizes, case.output_strides, byte_offset=output_offset)
    assert _same_bits(got, reference_one_hot(case.indices, case.values, case.output_sizes[case.axis], case.axis))


# -- narrow outputs, device memory, binding offsets: every byte around the elements kept ------------------------------

#: (output sizes, axis, output strides): padded, transposed, padded and transposed, interleaved (no nesting order),
#: rank 1 with gaps.
NARROW_LAYOUTS = {
    "padded": ([4, 5], 1, [7, 1]),
    "transposed": ([3, 6], 0, [1, 3]),
    "padded-transposed": ([2, 3, 5], 1, [1, 12, 2]),
    "interleaved": ([2, 6], 1, [3, 2]),
    "rank-1-gaps": ([7], 0, [3]),
}
NARROW_NUMPY = {"UINT8": np.uint8, "INT8": np.int8, "UINT16": np.uint16, "INT16": np.int16, "FLOAT16": np.float16,
                "FLOAT64": np.float64, "INT64": np.int64}


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize(("value_type", "index_type"), [("UINT8", "INT32"), ("INT8", "UINT64"), ("UINT16", "INT64"),
                                                        ("FLOAT16", "UINT32"), ("INT16", "INT32"),
                                                        ("FLOAT64", "INT64")])
def test_narrow_and_wide_outputs_keep_every_byte_around_their_elements(value_type: str, index_type: str,
                                                                       memory: str) -> None:
    """Outputs at padded, transposed and interleaved strides inside sentinel bytes, bound at 48 bytes (off the
    adapter's binding alignment on a gpu), the indices (transposed) and the values (a column, strided) at 16 and
    32: every element right, every other byte as it was, the inputs unchanged."""
    device = dml.Device()
    dtype, index_dtype = np.dtype(NARROW_NUMPY[value_type]), np.dtype(index_type.lower())
    pair = np.array([0x5A, 0xA5], np.uint8).astype(dtype) if dtype.kind != "f" else np.array([-0.0, 1.5], dtype)
    for seed, (name, (sizes, axis, strides)) in enumerate(NARROW_LAYOUTS.items()):
        # A column of 2 (a row of 2 at rank 1); OnValue lies 3 elements after OffValue.
        rank = len(sizes)
        values_sizes = [1] * (rank - 2) + [2, 1] if rank > 1 else [2]
        values_strides = tuple([0] * (rank - 2) + [3, 1] if rank > 1 else [3])
        values = pair.reshape(values_sizes)
        depth = sizes[axis]
        index_sizes = tuple(1 if dim == axis else size for dim, size in enumerate(sizes))
        count = int(np.prod(index_sizes))
        # Every kind of index: in range, negative (signed types), == depth, huge.
        candidates = [0, depth - 1, depth, -1, -depth, -depth - 1, int(np.iinfo(index_dtype).max), 1]
        usable = [value for value in candidates if np.iinfo(index_dtype).min <= value]
        indices = np.array([usable[(seed + k) % len(usable)] for k in range(count)], index_dtype).reshape(index_sizes)
        index_strides = tuple(int(np.prod(index_sizes[:d])) for d in range(len(index_sizes)))  # column-major
        desc = dml.OneHotOperatorDesc(T(index_type, list(index_sizes), list(index_strides)),
                                      T(value_type, values_sizes, list(values_strides)),
                                      T(value_type, sizes, strides), axis)
        compiled = device.compile_operator(device.create_operator(desc))
        index_bytes = build_buffer(indices, index_strides, byte_offset=16, tail_bytes=4, seed=seed)
        values_bytes = build_buffer(values, values_strides, byte_offset=32, tail_bytes=4, seed=seed + 1)
        got = execute_between_sentinels(device, compiled, [index_bytes, values_bytes], dtype.itemsize, sizes,
                                        tuple(strides), memory=memory, seed=seed + 2, label=name)
        expected = reference_one_hot(indices, values, depth, axis)
        assert _same_bits(read_buffer(got, dtype, sizes, tuple(strides), byte_offset=48), expected), name


def test_one_hot_by_hand_through_device_memory_at_offsets() -> None:
    """Hand values: INT64 indices [[-1], [2], [-4], [3]] (depth 3, values [off 7, on -1] as INT16), the indices at
    byte 16 and the values at byte 32 of device buffers, the output transposed at byte 16 of a third."""
    device = dml.Device()
    desc = dml.OneHotOperatorDesc(T("INT64", [4, 1]), T("INT16", [1, 2]), T("INT16", [4, 3], [1, 4]), 1)
    compiled = device.compile_operator(device.create_operator(desc))
    indices = device.create_buffer(np.array([0, 0, -1, 2, -4, 3], np.int64))
    values = device.create_buffer(np.array([9] * 16 + [7, -1], np.int16))
    output = device.create_buffer(np.full(8 + 12, 0x55AA, np.uint16))
    compiled.execute([dml.Binding(indices, 16), dml.Binding(values, 32)], [dml.Binding(output, 16)])
    got = output.read(np.int16)
    assert got[:8].view(np.uint16).tolist() == [0x55AA] * 8
    assert got[8:].reshape(3, 4).T.tolist() == [[7, 7, -1], [7, 7, -1], [7, 7, 7], [7, 7, 7]]
