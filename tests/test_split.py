"""SPLIT: the doc page's examples and the DxDispatch split model (copied by hand), every row of the page's support
table, a bad-input table with message regexes, and hypothesis properties against ``reference_split``."""

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
from reference import reference_split
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

F32 = dml.DataType.FLOAT32
PREFIX = r"DML_OPERATOR_SPLIT: "




def compile_split(input_tensor: dml.TensorDesc, output_tensors: list[dml.TensorDesc], axis: int,
                  level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    return device.compile_operator(device.create_operator(dml.SplitOperatorDesc(input_tensor, output_tensors, axis)))


@contextlib.contextmanager
def streaming_forced() -> Iterator[None]:
    """Compiles with non-temporal stores for any size, so that small tests exercise the streamed path."""
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES = 0
    try:
        yield
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES = saved


# -- goldens ----------------------------------------------------------------------------------------------------------

# The page's shared input: Sizes {1, 1, 6, 2}, FLOAT32.
PAGE_INPUT = np.array([[[[1, 2],
                         [3, 4],
                         [5, 6],
                         [7, 8],
                         [9, 10],
                         [11, 12]]]], dtype=np.float32)


@pytest.mark.parametrize("level", ["1_0", "6_4"])
def test_page_example_1_axis_2(level: str) -> None:
    compiled = compile_split(T(F32, [1, 1, 6, 2]), [T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 1, 2]), T(F32, [1, 1, 3, 2])],
                             axis=2, level=level)
    first, second, third = compiled(PAGE_INPUT)
    assert first.tolist() == [[[[1, 2],
                                [3, 4]]]]
    assert second.tolist() == [[[[5, 6]]]]
    assert third.tolist() == [[[[7, 8],
                                [9, 10],
                                [11, 12]]]]
    assert first.dtype == second.dtype == third.dtype == np.float32


@pytest.mark.parametrize("level", ["1_0", "6_4"])
def test_page_example_2_axis_3(level: str) -> None:
    compiled = compile_split(T(F32, [1, 1, 6, 2]), [T(F32, [1, 1, 6, 1]), T(F32, [1, 1, 6, 1])], axis=3, level=level)
    odd, even = compiled(PAGE_INPUT)
    assert odd.tolist() == [[[[1],
                              [3],
                              [5],
                              [7],
                              [9],
                              [11]]]]
    assert even.tolist() == [[[[2],
                               [4],
                               [6],
                               [8],
                               [10],
                               [12]]]]


def test_dxdispatch_split_model() -> None:
    # dml_split.json: input 1..6 as [6] FLOAT32, Axis 0, three [2] outputs -> [1, 2], [3, 4], [5, 6];
    # through raw buffers, each output at its own offset.
    compiled = compile_split(T(F32, [6]), [T(F32, [2]), T(F32, [2]), T(F32, [2])], axis=0)
    source = bytearray(np.arange(1, 7, dtype=np.float32).tobytes())
    memory = bytearray(b"\xee" * 80)
    compiled.execute(inputs=[dml.Binding(source)],
                     outputs=[dml.Binding(memory, offset=0, size=8), dml.Binding(memory, offset=32, size=8),
                              dml.Binding(memory, offset=64, size=16)])
    values = np.frombuffer(memory, np.float32)
    assert values[[0, 1]].tolist() == [1, 2]
    assert values[[8, 9]].tolist() == [3, 4]
    assert values[[16, 17]].tolist() == [5, 6]
    assert memory[8:32] == b"\xee" * 24 and memory[40:64] == b"\xee" * 24 and memory[72:] == b"\xee" * 8


def test_one_output_is_a_copy() -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    (copy,) = compile_split(T("INT16", [2, 3, 4]), [T("INT16", [2, 3, 4])], axis=1)(x)
    np.testing.assert_array_equal(copy, x)


def test_strided_input_and_outputs() -> None:
    # The page's input transposed in memory (strides {1, 1, 1, 6}), a zero-stride broadcast along dim 1, and
    # outputs laid out with padding and transposed.
    memory = np.array([1, 3, 5, 7, 9, 11, 2, 4, 6, 8, 10, 12], np.float32)
    compiled = compile_split(T(F32, [1, 2, 6, 2], [0, 0, 1, 6]),
                             [T(F32, [1, 2, 6, 1], [0, 8, 1, 0]), T(F32, [1, 2, 6, 1], [0, 1, 2, 0])], axis=3)
    first = np.full(16, -1, np.float32)
    second = np.full(12, -1, np.float32)
    compiled.execute([dml.Binding(memory)], [dml.Binding(first), dml.Binding(second)])
    assert first.tolist() == [1, 3, 5, 7, 9, 11, -1, -1, 1, 3, 5, 7, 9, 11, -1, -1]
    assert second.tolist() == [2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12]


def test_float_bits_are_copied_exactly() -> None:
    bits = np.array([0x7FC00001, 0xFFC12345, 0x80000000, 0x00000001, 0x7F800000, 0x3F800000], np.uint32)
    halves = compile_split(T(F32, [6]), [T(F32, [3]), T(F32, [3])], axis=0)(bits.view(np.float32))
    assert np.concatenate(halves).view(np.uint32).tolist() == bits.tolist()


@pytest.mark.parametrize("offset", [0, 16, 32, 48])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_streamed_path_at_every_line_phase(offset: int, axis: int) -> None:
    # Non-temporal stores write whole 64-byte lines; odd run lengths and every alignment of the outputs against
    # the lines must still give exact results and leave the bytes around each output alone.
    x = np.arange(5 * 7 * 9, dtype=np.float32).reshape(5, 7, 9)
    parts = {0: [1, 3, 1], 1: [2, 4, 1], 2: [3, 5, 1]}[axis]
    outputs = []
    for part in parts:
        sizes = list(x.shape)
        sizes[axis] = part
        outputs.append(T(F32, sizes))
    with streaming_forced():
        compiled = compile_split(T(F32, list(x.shape)), outputs, axis)
    buffers = [np.full(offset // 4 + output.element_count + 20, -7, np.float32) for output in outputs]
    compiled.execute([dml.Binding(x)], [dml.Binding(buffer, offset=offset) for buffer in buffers])
    start = offset // 4
    for buffer, expected in zip(buffers, np.split(x, np.cumsum(parts)[:-1], axis=axis), strict=True):
        assert np.array_equal(buffer[start: start + expected.size].reshape(expected.shape), expected)
        assert (buffer[:start] == -7).all() and (buffer[start + expected.size:] == -7).all()


def test_large_split_uses_the_streamed_path_correctly() -> None:
    x = np.random.default_rng(5).standard_normal((3, 1000, 700)).astype(np.float32)  # 8.4 MB
    for axis in (1, 2):
        sizes = [x.shape[axis] // 4, x.shape[axis] // 2]
        sizes.append(x.shape[axis] - sum(sizes))
        outputs = []
        for part in sizes:
            shape = list(x.shape)
            shape[axis] = part
            outputs.append(T(F32, shape))
        compiled = compile_split(T(F32, list(x.shape)), outputs, axis)
        results = [np.empty(output.sizes, np.float32) for output in outputs]
        compiled.execute([dml.Binding(x)], [dml.Binding(result) for result in results])
        for result, expected in zip(results, np.split(x, np.cumsum(sizes)[:-1], axis=axis), strict=True):
            assert np.array_equal(result, expected)


# -- the support table, row by row as the page prints it ---------------------------------------------------------------

ELEVEN = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
SIX = ["FLOAT32", "FLOAT16", "INT32", "INT16", "UINT32", "UINT16"]
# (level, dimension counts, data types of InputTensor = OutputTensors)
PAGE_ROWS = [("4_1", (1, 8), ELEVEN), ("3_0", (1, 8), EIGHT), ("2_1", (4, 4), EIGHT), ("1_0", (4, 4), SIX)]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name != "UNKNOWN"]


def _row_at(level: dml.FeatureLevel) -> tuple[str, tuple[int, int], list[str]]:
    return max((row for row in PAGE_ROWS if dml.FeatureLevel.parse(row[0]) <= level),
               key=lambda row: dml.FeatureLevel.parse(row[0]))


def _two_way(data_type: str, rank: int) -> dml.SplitOperatorDesc:
    sizes = [2] * rank
    half = [1] + [2] * (rank - 1)
    return dml.SplitOperatorDesc(T(data_type, sizes), [T(data_type, half), T(data_type, half)], 0)


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    _, (low, high), types = _row_at(level)
    for data_type, rank in itertools.product(ALL_TYPES, (1, 2, 3, 4, 5, 8)):
        desc = _two_way(data_type, rank)
        if data_type in types and low <= rank <= high:
            device.create_operator(desc)
        else:
            with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                device.create_operator(desc)


@pytest.mark.parametrize(("level", "data_type", "rank", "needed", "subject"), [
    ("1_0", "INT8", 4, "2_1", "InputTensor.DataType INT8"),     # SPLIT has no 8-bit types at 1_0
    ("1_0", "UINT8", 4, "2_1", "InputTensor.DataType UINT8"),
    ("2_1", "FLOAT32", 3, "3_0", "InputTensor.DimensionCount 3"),
    ("2_1", "UINT16", 8, "3_0", "InputTensor.DimensionCount 8"),
    ("3_0", "INT64", 2, "4_1", "InputTensor.DataType INT64"),
    ("4_0", "FLOAT64", 4, "4_1", "InputTensor.DataType FLOAT64"),
    ("4_0", "UINT64", 1, "4_1", "InputTensor.DataType UINT64"),
])
def test_below_its_level_names_the_lowest_level(level: str, data_type: str, rank: int, needed: str,
                                                subject: str) -> None:
    with pytest.raises(dml.UnsupportedError, match=rf"{PREFIX}{subject} needs feature level {needed}; the device is "
                                                   rf"at {level}"):
        dml.Device(feature_level=level).create_operator(_two_way(data_type, rank))
    dml.Device(feature_level=needed).create_operator(_two_way(data_type, rank))


def test_types_no_level_accepts() -> None:
    with pytest.raises(dml.ValidationError, match=rf"{PREFIX}InputTensor.DataType UINT4 is not supported; at feature "
                                                  rf"level 6_4 it must be one of FLOAT64, FLOAT32"):
        dml.Device().create_operator(_two_way("UINT4", 2))


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, input, outputs, axis, level, error, message regex)
    ("sizes do not add up", T(F32, [1, 1, 6, 2]), [T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 3, 2])], 2, "6_4",
     dml.ValidationError, r"the OutputTensors' sizes along Axis 2 add up to 2 \+ 3 = 5; they must add up to "
                          r"InputTensor.Sizes\[2\] \(6\)"),
    ("sizes add up to more", T(F32, [6]), [T(F32, [4]), T(F32, [4])], 0, "6_4", dml.ValidationError,
     r"the OutputTensors' sizes along Axis 0 add up to 4 \+ 4 = 8; they must add up to InputTensor.Sizes\[0\] \(6\)"),
    ("OutputCount 0", T(F32, [6]), [], 0, "6_4", dml.ValidationError, r"OutputCount is 0; it must be at least 1"),
    ("an output of the wrong rank", T(F32, [2, 6]), [T(F32, [2, 3]), T(F32, [6])], 1, "6_4", dml.ValidationError,
     r"OutputTensors\[1\].DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    ("an output of the wrong type", T(F32, [2, 6]), [T(F32, [2, 3]), T("FLOAT16", [2, 3])], 1, "6_4",
     dml.ValidationError, r"OutputTensors\[1\].DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    ("a size outside Axis differs", T(F32, [2, 6]), [T(F32, [2, 3]), T(F32, [1, 3])], 1, "6_4", dml.ValidationError,
     r"OutputTensors\[1\].Sizes is \[1, 3\]; outside Axis 1 it must equal InputTensor.Sizes \[2, 6\]"),
    ("Axis out of range", T(F32, [2, 6]), [T(F32, [2, 6])], 2, "6_4", dml.ValidationError,
     r"Axis is 2; it must be in \[0, 1\] for InputTensor of 2 dimensions"),
    ("a zero-size output", T(F32, [2, 6]), [T(F32, [2, 6]), T(F32, [2, 0])], 1, "6_4", dml.ValidationError,
     r"OutputTensors\[1\].Sizes\[1\] is 0; every size must be at least 1"),
    ("overlapping output strides", T(F32, [2, 6]), [T(F32, [2, 3], [1, 1]), T(F32, [2, 3])], 1, "6_4",
     dml.ValidationError, r"OutputTensors\[0\].Strides \[1, 1\] map two elements of Sizes \[2, 3\] onto the same "
                          r"memory"),
    ("owned output", T(F32, [6]), [T(F32, [6], flags="OWNED_BY_DML")], 0, "6_4", dml.ValidationError,
     r"OutputTensors\[0\].Flags is OWNED_BY_DML; only input tensors may be owned by DML"),
    ("rank 9", T(F32, [1] * 9), [T(F32, [1] * 9)], 0, "6_4", dml.ValidationError,
     r"InputTensor.DimensionCount is 9; it must be 1 to 8"),
    ("8-bit at 1_0", T("INT8", [1, 1, 6, 2]), [T("INT8", [1, 1, 6, 2])], 2, "1_0", dml.UnsupportedError,
     r"InputTensor.DataType INT8 needs feature level 2_1; the device is at 1_0"),
    ("rank 2 at 2_1", T(F32, [6, 2]), [T(F32, [6, 2])], 0, "2_1", dml.UnsupportedError,
     r"InputTensor.DimensionCount 2 needs feature level 3_0; the device is at 2_1"),
    ("FLOAT64 at 4_0", T("FLOAT64", [6]), [T("FLOAT64", [6])], 0, "4_0", dml.UnsupportedError,
     r"InputTensor.DataType FLOAT64 needs feature level 4_1; the device is at 4_0"),
]


@pytest.mark.parametrize(("input_tensor", "output_tensors", "axis", "level", "error", "message"),
                         [case[1:] for case in BAD_DESCRIPTORS], ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(input_tensor: dml.TensorDesc, output_tensors: list[dml.TensorDesc], axis: int, level: str,
                         error: type[Exception], message: str) -> None:
    desc = dml.SplitOperatorDesc(input_tensor, output_tensors, axis)
    with pytest.raises(error, match=PREFIX + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.SplitOperatorDesc([6], [T(F32, [6])], 0), r"InputTensor is \[6\]; it must be a TensorDesc$"),
    (lambda: dml.SplitOperatorDesc(T(F32, [6]), T(F32, [6]), 0),
     r"OutputTensors is TensorDesc\(data_type=.*\(TensorDesc\); it must be a list of TensorDesc$"),
    (lambda: dml.SplitOperatorDesc(T(F32, [6]), [T(F32, [6]), None], 0),
     r"OutputTensors\[1\] is None; it must be a TensorDesc$"),
    (lambda: dml.SplitOperatorDesc(T(F32, [6]), [T(F32, [6])], -1),
     r"Axis is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: dml.SplitOperatorDesc(T(F32, [6]), [T(F32, [6])], 1.0), r"Axis is 1.0; it must be an integer"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()


def test_output_slots_name_each_output() -> None:
    desc = dml.SplitOperatorDesc(T(F32, [6]), [T(F32, [2]), T(F32, [4])], 0)
    assert [name for name, _ in desc.output_slots()] == ["OutputTensors[0]", "OutputTensors[1]"]
    assert desc.output_count == 2 and desc.offsets == (0, 2)
    assert desc.OPERATOR_TYPE is dml.OperatorType.SPLIT


def test_bad_bindings() -> None:
    compiled = compile_split(T(F32, [6]), [T(F32, [2]), T(F32, [4])], axis=0)
    source = np.arange(6, dtype=np.float32)
    with pytest.raises(dml.BindingError, match=r"1 output bindings given; the operator has 2 \(OutputTensors\[0\], "
                                               r"OutputTensors\[1\]\)"):
        compiled.execute([dml.Binding(source)], [dml.Binding(bytearray(8))])
    first, second = bytearray(b"\x01" * 8), bytearray(b"\x02" * 12)
    with pytest.raises(dml.BindingError, match=r"OutputTensors\[1\] binding needs bytes \[0, 16\) but the buffer "
                                               r"holds 12 bytes"):
        compiled.execute([dml.Binding(source)], [dml.Binding(first), dml.Binding(second)])
    assert first == b"\x01" * 8 and second == b"\x02" * 12      # nothing written
    shared = np.zeros(8, np.float32)
    with pytest.raises(dml.BindingError,
                       match=r"the bound ranges of OutputTensors\[0\] and OutputTensors\[1\] overlap"):
        compiled.execute([dml.Binding(source)], [dml.Binding(shared), dml.Binding(shared)])


# -- properties -------------------------------------------------------------------------------------------------------

LEVELS = ("1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4")
NUMPY_DTYPES = {name: np.dtype(name.lower()) for name in ELEVEN}


@dataclass(frozen=True)
class SplitCase:
    level: str
    data_type: str
    sizes: tuple[int, ...]
    axis: int
    parts: tuple[int, ...]
    input_strides: tuple[int, ...] | None
    output_strides: tuple[tuple[int, ...] | None, ...]
    x: np.ndarray

    def output_sizes(self, index: int) -> tuple[int, ...]:
        sizes = list(self.sizes)
        sizes[self.axis] = self.parts[index]
        return tuple(sizes)

    def descriptor(self) -> dml.SplitOperatorDesc:
        outputs = [T(self.data_type, list(self.output_sizes(index)), _list(strides))
                   for index, strides in enumerate(self.output_strides)]
        return dml.SplitOperatorDesc(T(self.data_type, list(self.sizes), _list(self.input_strides)), outputs,
                                     self.axis)


def _list(strides: tuple[int, ...] | None) -> list[int] | None:
    return None if strides is None else list(strides)


@st.composite
def split_cases(draw: st.DrawFn) -> SplitCase:
    level = draw(st.sampled_from(LEVELS))
    _, (low, high), types = _row_at(dml.FeatureLevel.parse(level))
    rank = draw(st.integers(low, high))
    data_type = draw(st.sampled_from(types))
    sizes = draw(shapes(rank, max_elements=600, max_side=24))
    axis = draw(st.integers(0, rank - 1))
    cuts = sorted(draw(st.sets(st.integers(1, sizes[axis] - 1), max_size=5)) if sizes[axis] > 1 else [])
    bounds = [0, *cuts, sizes[axis]]
    parts = tuple(end - start for start, end in itertools.pairwise(bounds))
    input_strides = draw(strides_for(sizes))
    output_strides = []
    for part in parts:
        out_sizes = list(sizes)
        out_sizes[axis] = part
        output_strides.append(draw(strides_for(out_sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)),
                                               allow_zero=False)))
    dtype = NUMPY_DTYPES[data_type]
    raw = draw(arrays(np.uint8, (*sizes, dtype.itemsize)))  # any bit pattern: NaN payloads, -0.0, subnormals
    x = np.ascontiguousarray(raw).view(dtype).reshape(sizes)
    x = read_buffer(build_buffer(x, input_strides), dtype, sizes, input_strides)  # equal along stride-0 dims
    note(f"level={level} {data_type} sizes={sizes} axis={axis} parts={parts} in_strides={input_strides} "
         f"out_strides={output_strides}")
    return SplitCase(level, data_type, tuple(sizes), axis, parts, input_strides, tuple(output_strides), x)


@cache
def _compiled(case_key: tuple[object, ...], streaming: bool) -> dml.CompiledOperator:
    level, desc = case_key[0], case_key[1]
    device = dml.Device(feature_level=str(level))
    with streaming_forced() if streaming else contextlib.nullcontext():
        return device.compile_operator(device.create_operator(desc))  # type: ignore[arg-type]


def compile_case(case: SplitCase, streaming: bool) -> dml.CompiledOperator:
    return _compiled((case.level, case.descriptor()), streaming)


def _same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    return got.shape == expected.shape and got.dtype == expected.dtype and np.array_equal(
        got.view(unsigned), expected.view(unsigned))


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@given(case=split_cases())
def test_split_matches_reference(case: SplitCase, streaming: bool) -> None:
    results = compile_case(case, streaming)(case.x)
    expected = reference_split(case.x, case.axis, case.parts)
    assert len(results) == len(expected)
    for index, (got, want) in enumerate(zip(results, expected, strict=True)):
        assert _same_bits(got, want), f"output {index} differs"


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(case=split_cases(), data=st.data())
def test_split_raw_buffers(case: SplitCase, streaming: bool, data: st.DataObject) -> None:
    dtype = NUMPY_DTYPES[case.data_type]
    in_offset = data.draw(byte_offsets(), "input offset")
    in_buf = build_buffer(case.x, case.input_strides, byte_offset=in_offset, tail_bytes=data.draw(st.integers(0, 20)))
    in_before = in_buf.copy()
    outputs = []
    for index, strides in enumerate(case.output_strides):
        offset = data.draw(byte_offsets(), f"output {index} offset")
        size = tensor_size_in_bytes(dtype.itemsize, case.output_sizes(index), strides)
        buffer = sentinel_bytes(offset + size + data.draw(st.integers(0, 20)), seed=index + 3)
        outputs.append((buffer, buffer.copy(), offset))
    compile_case(case, streaming).execute([dml.Binding(in_buf, offset=in_offset)],
                                          [dml.Binding(buffer, offset=offset) for buffer, _, offset in outputs])
    assert np.array_equal(in_buf, in_before), "the input buffer was modified"
    expected = reference_split(case.x, case.axis, case.parts)
    for index, ((buffer, before, offset), strides) in enumerate(zip(outputs, case.output_strides, strict=True)):
        sizes = case.output_sizes(index)
        written = addressed_byte_mask(len(buffer), dtype.itemsize, sizes, strides, byte_offset=offset)
        changed = np.flatnonzero((buffer != before) & ~written)
        assert changed.size == 0, f"output {index}: bytes outside its elements changed: {changed[:16].tolist()}"
        got = read_buffer(buffer, dtype, sizes, strides, byte_offset=offset)
        assert _same_bits(got, expected[index]), f"output {index} differs"
