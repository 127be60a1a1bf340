"""JOIN: the doc page's examples and DxDispatch's dml_join.json (expected values worked out by hand, run through the
Python API and the command line), every row of the page's support table, a bad-input table with message regexes,
bytes around narrow outputs, and hypothesis properties against ``reference_join``."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import reference_join
from strategies import (
    OUTPUT_STRIDE_KINDS,
    T,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    execute_between_sentinels,
    packed_strides,
    read_buffer,
    sentinel_bytes,
    shapes,
    strides_for,
    tensor_size_in_bytes,
)

import opendml as dml
from opendml.backends.cpu import memory_kernels
from opendml.model.reader import Limits, ModelError, default_max_memory, read_model
from opendml.model.runner import RunOptions, run
from opendml.ops.join import SUPPORT, JoinOperatorDesc

F32 = dml.DataType.FLOAT32
PREFIX = r"DML_OPERATOR_JOIN: "
MODEL = Path(__file__).resolve().parent.parent / "examples" / "models" / "dml_join.json"


def compile_join(input_tensors: list[dml.TensorDesc], output_tensor: dml.TensorDesc, axis: int,
                 level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    return device.compile_operator(device.create_operator(JoinOperatorDesc(input_tensors, output_tensor, axis)))


@contextlib.contextmanager
def streaming_forced() -> Iterator[None]:
    """Compiles with non-temporal stores for any size (cpu backend), so that small tests exercise the streamed
    path."""
    saved = memory_kernels.STREAMING_THRESHOLD_BYTES
    memory_kernels.STREAMING_THRESHOLD_BYTES = 0
    try:
        yield
    finally:
        memory_kernels.STREAMING_THRESHOLD_BYTES = saved


def test_public_name_and_registration() -> None:
    assert dml.JoinOperatorDesc is JoinOperatorDesc
    assert dml.OperatorDesc.registry[dml.OperatorType.JOIN] is JoinOperatorDesc
    assert JoinOperatorDesc.OPERATOR_TYPE.dml_name == "DML_OPERATOR_JOIN"
    desc = JoinOperatorDesc([T(F32, [2]), T(F32, [4])], T(F32, [6]), 0)
    assert [name for name, _ in desc.input_slots()] == ["InputTensors[0]", "InputTensors[1]"]
    assert [name for name, _ in desc.output_slots()] == ["OutputTensor"]
    assert desc.input_count == 2 and desc.offsets == (0, 2)
    assert JoinOperatorDesc.support_tables() == {"": SUPPORT}


# -- goldens ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("level", ["1_0", "6_4"])
def test_page_example_1_one_possible_axis(level: str) -> None:
    compiled = compile_join([T(F32, [1, 1, 2, 3]), T(F32, [1, 1, 2, 4])], T(F32, [1, 1, 2, 7]), axis=3, level=level)
    (joined,) = compiled(np.array([[[[1, 2, 3],
                                     [4, 5, 6]]]], np.float32),
                         np.array([[[[7, 8, 9, 10],
                                     [11, 12, 13, 14]]]], np.float32))
    assert joined.dtype == np.float32
    assert joined.tolist() == [[[[1, 2, 3, 7, 8, 9, 10],
                                 [4, 5, 6, 11, 12, 13, 14]]]]


# Example 2's three inputs, Sizes {1, 1, 2, 2} each.
PAGE_INPUTS = [np.array([[[[1, 2],
                           [3, 4]]]], np.float32),
               np.array([[[[5, 6],
                           [7, 8]]]], np.float32),
               np.array([[[[9, 10],
                           [11, 12]]]], np.float32)]
PAGE_OUTPUTS = {
    1: ([1, 3, 2, 2], [[[[1, 2],
                         [3, 4]],
                        [[5, 6],
                         [7, 8]],
                        [[9, 10],
                         [11, 12]]]]),
    2: ([1, 1, 6, 2], [[[[1, 2],
                         [3, 4],
                         [5, 6],
                         [7, 8],
                         [9, 10],
                         [11, 12]]]]),
    3: ([1, 1, 2, 6], [[[[1, 2, 5, 6, 9, 10],
                         [3, 4, 7, 8, 11, 12]]]]),
}


@pytest.mark.parametrize("level", ["1_0", "6_4"])
@pytest.mark.parametrize("axis", [1, 2, 3])
def test_page_example_2_any_axis(axis: int, level: str) -> None:
    sizes, expected = PAGE_OUTPUTS[axis]
    compiled = compile_join([T(F32, [1, 1, 2, 2])] * 3, T(F32, sizes), axis=axis, level=level)
    (joined,) = compiled(*PAGE_INPUTS)
    assert joined.tolist() == expected


# dml_join.json (DxDispatch): A = 1..10, B = 100, 115, 130; the inputs are A's elements 0-2, B's first 2 (the
# whole resource is bound, 12 bytes for an 8-byte tensor) and A's elements 4-8; joined along axis 0 into Out [10].
DXDISPATCH_OUTPUT = ["Resource 'Out': 1, 2, 3, 100, 115, 5, 6, 7, 8, 9"]


def test_dxdispatch_model_through_the_python_api() -> None:
    model = read_model(MODEL, Limits(default_max_memory()))
    lines: list[str] = []
    run(model, dml.Device(), RunOptions(), lines.append)
    assert lines == DXDISPATCH_OUTPUT


def test_dxdispatch_model_through_the_command_line(backend: str) -> None:
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "dispatch", "--backend", backend, str(MODEL)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == DXDISPATCH_OUTPUT
    assert [line for line in result.stderr.splitlines() if "XDG_RUNTIME_DIR" not in line] == []


def test_input_count_must_match_the_json_array(tmp_path: Path) -> None:
    document = json.loads(MODEL.read_text())
    document["dispatchables"]["join"]["desc"]["InputCount"] = 2
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ModelError, match=r"dispatchables\.join\.desc\.InputCount: is 2 but InputTensors has 3 "
                                         r"entries"):
        read_model(path, Limits(default_max_memory()))


def test_one_input_is_a_copy() -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    (copy,) = compile_join([T("INT16", [2, 3, 4])], T("INT16", [2, 3, 4]), axis=1)(x)
    np.testing.assert_array_equal(copy, x)


def test_strided_inputs_and_output() -> None:
    # Input 0 {2, 3} transposed in memory (strides {1, 2}); input 1 {2, 1} a zero-stride broadcast of one value;
    # the output {2, 4} padded (row stride 5): [[1, 3, 5, 9], [2, 4, 6, 9]], then the gap element after each row.
    first = np.array([1, 2, 3, 4, 5, 6], np.float32)
    second = np.array([9], np.float32)
    compiled = compile_join([T(F32, [2, 3], [1, 2]), T(F32, [2, 1], [0, 0])], T(F32, [2, 4], [5, 1]), axis=1)
    out = np.full(10, -1, np.float32)
    compiled.execute([dml.Binding(first), dml.Binding(second)], [dml.Binding(out)])
    assert out.tolist() == [1, 3, 5, 9, -1, 2, 4, 6, 9, -1]


def test_float_bits_are_copied_exactly() -> None:
    bits = np.array([0x7FC00001, 0xFFC12345, 0x80000000, 0x00000001, 0x7F800000, 0x3F800000], np.uint32)
    compiled = compile_join([T(F32, [2]), T(F32, [4])], T(F32, [6]), axis=0)
    (joined,) = compiled(bits[:2].view(np.float32), bits[2:].view(np.float32))
    assert joined.view(np.uint32).tolist() == bits.tolist()


@pytest.mark.parametrize("offset", [0, 16, 32, 48])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_streamed_path_at_every_line_phase(offset: int, axis: int) -> None:
    # Non-temporal stores write whole 64-byte lines; the output at every alignment against the lines and odd run
    # lengths must still give exact results and leave the bytes around the output alone.
    x = np.arange(5 * 7 * 9, dtype=np.float32).reshape(5, 7, 9)
    parts = {0: [1, 3, 1], 1: [2, 4, 1], 2: [3, 5, 1]}[axis]
    pieces = [np.ascontiguousarray(piece) for piece in np.split(x, np.cumsum(parts)[:-1], axis=axis)]
    with streaming_forced():
        compiled = compile_join([T(F32, list(piece.shape)) for piece in pieces], T(F32, list(x.shape)), axis)
    buffer = np.full(offset // 4 + x.size + 20, -7, np.float32)
    compiled.execute([dml.Binding(piece) for piece in pieces], [dml.Binding(buffer, offset=offset)])
    start = offset // 4
    assert np.array_equal(buffer[start: start + x.size].reshape(x.shape), x)
    assert (buffer[:start] == -7).all() and (buffer[start + x.size:] == -7).all()


def test_large_join_uses_the_streamed_path_correctly() -> None:
    x = np.random.default_rng(5).standard_normal((3, 1000, 700)).astype(np.float32)  # 8.4 MB
    for axis in (1, 2):
        sizes = [x.shape[axis] // 4, x.shape[axis] // 2]
        sizes.append(x.shape[axis] - sum(sizes))
        pieces = [np.ascontiguousarray(piece) for piece in np.split(x, np.cumsum(sizes)[:-1], axis=axis)]
        compiled = compile_join([T(F32, list(piece.shape)) for piece in pieces], T(F32, list(x.shape)), axis)
        out = np.empty(x.shape, np.float32)
        compiled.execute([dml.Binding(piece) for piece in pieces], [dml.Binding(out)])
        assert np.array_equal(out, x)


# -- the support table, row by row as the page prints it ---------------------------------------------------------------

ELEVEN = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
SIX = ["FLOAT32", "FLOAT16", "INT32", "INT16", "UINT32", "UINT16"]
# (level, dimension counts, data types of InputTensors = OutputTensor)
PAGE_ROWS = [("4_1", (1, 8), ELEVEN), ("3_0", (4, 5), EIGHT), ("2_1", (4, 4), EIGHT), ("1_0", (4, 4), SIX)]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name != "UNKNOWN"]


def _row_at(level: dml.FeatureLevel) -> tuple[str, tuple[int, int], list[str]]:
    return max((row for row in PAGE_ROWS if dml.FeatureLevel.parse(row[0]) <= level),
               key=lambda row: dml.FeatureLevel.parse(row[0]))


def _two_way(data_type: str, rank: int) -> JoinOperatorDesc:
    half = [1] + [2] * (rank - 1)
    return JoinOperatorDesc([T(data_type, half), T(data_type, half)], T(data_type, [2] * rank), 0)


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    _, (low, high), types = _row_at(level)
    for data_type, rank in itertools.product(ALL_TYPES, (1, 2, 3, 4, 5, 6, 8)):
        desc = _two_way(data_type, rank)
        if data_type in types and low <= rank <= high:
            device.create_operator(desc)
        else:
            with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                device.create_operator(desc)


@pytest.mark.parametrize(("level", "data_type", "rank", "needed", "subject"), [
    ("1_0", "INT8", 4, "2_1", "InputTensors[0].DataType INT8"),     # JOIN has no 8-bit types at 1_0
    ("2_0", "UINT8", 4, "2_1", "InputTensors[0].DataType UINT8"),
    ("2_1", "FLOAT32", 5, "3_0", "InputTensors[0].DimensionCount 5"),
    ("3_0", "FLOAT32", 3, "4_1", "InputTensors[0].DimensionCount 3"),   # 3_0 allows 4 to 5 only
    ("4_0", "UINT16", 6, "4_1", "InputTensors[0].DimensionCount 6"),
    ("4_0", "INT32", 1, "4_1", "InputTensors[0].DimensionCount 1"),
    ("3_1", "INT64", 4, "4_1", "InputTensors[0].DataType INT64"),
    ("4_0", "FLOAT64", 4, "4_1", "InputTensors[0].DataType FLOAT64"),
    ("4_0", "UINT64", 5, "4_1", "InputTensors[0].DataType UINT64"),
])
def test_below_its_level_names_the_lowest_level(level: str, data_type: str, rank: int, needed: str,
                                                subject: str) -> None:
    with pytest.raises(dml.UnsupportedError, match=rf"{PREFIX}{re.escape(subject)} needs feature level {needed}; the "
                                                   rf"device is at {level}"):
        dml.Device(feature_level=level).create_operator(_two_way(data_type, rank))
    dml.Device(feature_level=needed).create_operator(_two_way(data_type, rank))


def test_types_no_level_accepts() -> None:
    with pytest.raises(dml.ValidationError, match=rf"{PREFIX}InputTensors\[0\].DataType UINT4 is not supported; at "
                                                  rf"feature level 6_4 it must be one of FLOAT64, FLOAT32"):
        dml.Device().create_operator(_two_way("UINT4", 2))


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, inputs, output, axis, level, error, message regex)
    ("sizes do not add up", [T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 3, 2])], T(F32, [1, 1, 6, 2]), 2, "6_4",
     dml.ValidationError, r"the InputTensors' sizes along Axis 2 add up to 2 \+ 3 = 5; they must add up to "
                          r"OutputTensor.Sizes\[2\] \(6\)"),
    ("sizes add up to more", [T(F32, [4]), T(F32, [4])], T(F32, [6]), 0, "6_4", dml.ValidationError,
     r"the InputTensors' sizes along Axis 0 add up to 4 \+ 4 = 8; they must add up to OutputTensor.Sizes\[0\] \(6\)"),
    ("InputCount 0", [], T(F32, [6]), 0, "6_4", dml.ValidationError, r"InputCount is 0; it must be at least 1"),
    ("inputs of different ranks", [T(F32, [2, 3]), T(F32, [6])], T(F32, [2, 6]), 1, "6_4", dml.ValidationError,
     r"InputTensors\[1\].DimensionCount is 1; it must equal OutputTensor.DimensionCount \(2\)"),
    ("the output of another rank", [T(F32, [2, 3]), T(F32, [2, 3])], T(F32, [1, 2, 6]), 1, "6_4",
     dml.ValidationError, r"InputTensors\[0\].DimensionCount is 2; it must equal OutputTensor.DimensionCount \(3\)"),
    ("inputs of different types", [T(F32, [2, 3]), T("FLOAT16", [2, 3])], T(F32, [2, 6]), 1, "6_4",
     dml.ValidationError, r"InputTensors\[1\].DataType is FLOAT16; it must equal OutputTensor.DataType \(FLOAT32\)"),
    ("the output of another type", [T("INT32", [2, 3]), T("INT32", [2, 3])], T("UINT32", [2, 6]), 1, "6_4",
     dml.ValidationError, r"InputTensors\[0\].DataType is INT32; it must equal OutputTensor.DataType \(UINT32\)"),
    ("a size off the axis differs", [T(F32, [2, 3]), T(F32, [1, 3])], T(F32, [2, 6]), 1, "6_4",
     dml.ValidationError, r"InputTensors\[1\].Sizes is \[1, 3\]; outside Axis 1 it must equal OutputTensor.Sizes "
                          r"\[2, 6\]"),
    ("the output differs off the axis", [T(F32, [2, 3]), T(F32, [2, 3])], T(F32, [3, 6]), 1, "6_4",
     dml.ValidationError, r"InputTensors\[0\].Sizes is \[2, 3\]; outside Axis 1 it must equal OutputTensor.Sizes "
                          r"\[3, 6\]"),
    ("Axis out of range", [T(F32, [2, 6])], T(F32, [2, 6]), 2, "6_4", dml.ValidationError,
     r"Axis is 2; it must be in \[0, 1\] for OutputTensor of 2 dimensions"),
    ("a zero-size input", [T(F32, [2, 6]), T(F32, [2, 0])], T(F32, [2, 6]), 1, "6_4", dml.ValidationError,
     r"InputTensors\[1\].Sizes\[1\] is 0; every size must be at least 1"),
    ("overlapping output strides", [T(F32, [2, 3]), T(F32, [2, 3])], T(F32, [2, 6], [1, 1]), 1, "6_4",
     dml.ValidationError, r"OutputTensor.Strides \[1, 1\] map two elements of Sizes \[2, 6\] onto the same memory"),
    ("owned output", [T(F32, [6])], T(F32, [6], flags="OWNED_BY_DML"), 0, "6_4", dml.ValidationError,
     r"OutputTensor.Flags is OWNED_BY_DML; only input tensors may be owned by DML"),
    ("rank 9", [T(F32, [1] * 9)], T(F32, [1] * 9), 0, "6_4", dml.ValidationError,
     r"InputTensors\[0\].DimensionCount is 9; it must be 1 to 8"),
    ("TotalTensorSizeInBytes too small", [T(F32, [6], total_tensor_size_in_bytes=20)], T(F32, [6]), 0, "6_4",
     dml.ValidationError, r"InputTensors\[0\].TotalTensorSizeInBytes is 20; it must be at least 24"),
    ("8-bit at 1_0", [T("INT8", [1, 1, 6, 2])], T("INT8", [1, 1, 6, 2]), 2, "1_0", dml.UnsupportedError,
     r"InputTensors\[0\].DataType INT8 needs feature level 2_1; the device is at 1_0"),
    ("rank 2 at 3_0", [T(F32, [6, 2])], T(F32, [6, 2]), 0, "3_0", dml.UnsupportedError,
     r"InputTensors\[0\].DimensionCount 2 needs feature level 4_1; the device is at 3_0"),
    ("rank 5 at 2_1", [T(F32, [1, 1, 1, 6, 2])], T(F32, [1, 1, 1, 6, 2]), 0, "2_1", dml.UnsupportedError,
     r"InputTensors\[0\].DimensionCount 5 needs feature level 3_0; the device is at 2_1"),
    ("FLOAT64 at 4_0", [T("FLOAT64", [1, 1, 1, 6])], T("FLOAT64", [1, 1, 1, 6]), 3, "4_0", dml.UnsupportedError,
     r"InputTensors\[0\].DataType FLOAT64 needs feature level 4_1; the device is at 4_0"),
]


@pytest.mark.parametrize(("input_tensors", "output_tensor", "axis", "level", "error", "message"),
                         [case[1:] for case in BAD_DESCRIPTORS], ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(input_tensors: list[dml.TensorDesc], output_tensor: dml.TensorDesc, axis: int, level: str,
                         error: type[Exception], message: str) -> None:
    desc = JoinOperatorDesc(input_tensors, output_tensor, axis)
    with pytest.raises(error, match=PREFIX + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: JoinOperatorDesc(T(F32, [6]), T(F32, [6]), 0),
     r"InputTensors is TensorDesc\(data_type=.*\(TensorDesc\); it must be a list of TensorDesc$"),
    (lambda: JoinOperatorDesc("x", T(F32, [6]), 0), r"InputTensors is 'x'; it must be a list of TensorDesc$"),
    (lambda: JoinOperatorDesc([T(F32, [6]), None], T(F32, [6]), 0),
     r"InputTensors\[1\] is None; it must be a TensorDesc$"),
    (lambda: JoinOperatorDesc([T(F32, [6])], [6], 0), r"OutputTensor is \[6\]; it must be a TensorDesc$"),
    (lambda: JoinOperatorDesc([T(F32, [6])], T(F32, [6]), -1), r"Axis is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: JoinOperatorDesc([T(F32, [6])], T(F32, [6]), 1.0), r"Axis is 1.0; it must be an integer"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=PREFIX + message):
        build()


def test_bad_bindings() -> None:
    compiled = compile_join([T(F32, [2]), T(F32, [4])], T(F32, [6]), axis=0)
    first, second = np.arange(2, dtype=np.float32), np.arange(4, dtype=np.float32)
    with pytest.raises(dml.BindingError, match=r"1 input bindings given; the operator has 2 \(InputTensors\[0\], "
                                               r"InputTensors\[1\]\)"):
        compiled.execute([dml.Binding(first)], [dml.Binding(bytearray(24))])
    small = bytearray(b"\x02" * 20)
    with pytest.raises(dml.BindingError, match=r"OutputTensor binding needs bytes \[0, 24\) but the buffer holds 20 "
                                               r"bytes"):
        compiled.execute([dml.Binding(first), dml.Binding(second)], [dml.Binding(small)])
    assert small == b"\x02" * 20      # nothing written
    shared = np.zeros(16, np.float32)
    with pytest.raises(dml.BindingError, match=r"the bound ranges of InputTensors\[1\] and OutputTensor overlap"):
        compiled.execute([dml.Binding(first), dml.Binding(shared, offset=32)], [dml.Binding(shared, offset=16)])
    assert not shared.any()
    # Inputs may share memory (dml_join.json binds one resource twice): both read the same bytes.
    out = np.ones(6, np.float32)
    compiled.execute([dml.Binding(shared), dml.Binding(shared)], [dml.Binding(out)])
    assert not out.any()


# -- narrow and wide outputs between sentinels ------------------------------------------------------------------------

#: (output sizes, axis, output strides, the inputs' sizes along the axis): packed (8/16-bit words shared by two
#: inputs), padded, transposed, padded and transposed, interleaved (no nesting order), rank 1 with gaps.
NARROW_LAYOUTS = {
    "packed": ([3, 7], 1, None, [2, 1, 4]),
    "padded": ([4, 5], 1, [7, 1], [1, 3, 1]),
    "transposed": ([3, 6], 0, [1, 3], [1, 2]),
    "padded-transposed": ([2, 3, 5], 1, [1, 12, 2], [2, 1]),
    "interleaved": ([2, 6], 1, [3, 2], [1, 4, 1]),
    "rank-1-gaps": ([7], 0, [3], [3, 1, 3]),
}
NARROW_NUMPY = {"UINT8": np.uint8, "INT8": np.int8, "UINT16": np.uint16, "FLOAT16": np.float16,
                "FLOAT64": np.float64, "INT64": np.int64}


def _input_strides(sizes: list[int], kind: int) -> tuple[int, ...] | None:
    """The inputs take turns: packed, transposed (first dimension innermost), padded, broadcast along dim 0."""
    if kind % 4 == 0:
        return None
    if kind % 4 == 1:
        return packed_strides(sizes, list(range(len(sizes))))
    if kind % 4 == 2:
        strides, running = [0] * len(sizes), 1
        for dim in reversed(range(len(sizes))):
            strides[dim] = running
            running = running * sizes[dim] + 1
        return tuple(strides)
    return (0, *packed_strides(sizes)[1:])


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize("data_type", list(NARROW_NUMPY))
def test_narrow_and_wide_outputs_keep_every_byte_around_their_elements(data_type: str, memory: str) -> None:
    """Outputs packed, padded, transposed and interleaved inside sentinel bytes, bound at an offset off the adapter's
    binding alignment on a gpu, the inputs (packed, transposed, padded, broadcast) at 16, 32, ...: every element
    right, every other byte as it was, the inputs unchanged."""
    device = dml.Device()
    dtype = np.dtype(NARROW_NUMPY[data_type])
    for seed, (name, (sizes, axis, strides, parts)) in enumerate(NARROW_LAYOUTS.items()):
        pieces, buffers, descs = [], [], []
        for index, part in enumerate(parts):
            piece_sizes = [part if dim == axis else size for dim, size in enumerate(sizes)]
            piece_strides = _input_strides(piece_sizes, index + seed)
            raw = np.arange(np.prod(piece_sizes) * dtype.itemsize, dtype=np.int64) * 37 + 11 * index + seed
            piece = raw.astype(np.uint8).view(dtype).reshape(piece_sizes)
            buffer = build_buffer(piece, piece_strides, byte_offset=16 * (1 + index), tail_bytes=4, seed=seed + index)
            pieces.append(read_buffer(buffer, dtype, piece_sizes, piece_strides, byte_offset=16 * (1 + index)))
            buffers.append(buffer)
            descs.append(T(data_type, piece_sizes, None if piece_strides is None else list(piece_strides)))
        desc = JoinOperatorDesc(descs, T(data_type, sizes, strides), axis)
        compiled = device.compile_operator(device.create_operator(desc))
        output_strides = None if strides is None else tuple(strides)
        got = execute_between_sentinels(device, compiled, buffers, dtype.itemsize, sizes, output_strides,
                                        memory=memory, seed=seed + 7, label=name)
        expected = reference_join(pieces, axis)
        assert _same_bits(read_buffer(got, dtype, sizes, output_strides, byte_offset=16 * (len(parts) + 1)),
                          expected), name


# -- properties -------------------------------------------------------------------------------------------------------

LEVELS = ("1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4")
NUMPY_DTYPES = {name: np.dtype(name.lower()) for name in ELEVEN}


@dataclass(frozen=True)
class JoinCase:
    level: str
    data_type: str
    sizes: tuple[int, ...]   # the output's
    axis: int
    parts: tuple[int, ...]
    input_strides: tuple[tuple[int, ...] | None, ...]
    output_strides: tuple[int, ...] | None
    xs: tuple[np.ndarray, ...]

    def input_sizes(self, index: int) -> tuple[int, ...]:
        sizes = list(self.sizes)
        sizes[self.axis] = self.parts[index]
        return tuple(sizes)

    def descriptor(self) -> JoinOperatorDesc:
        inputs = [T(self.data_type, list(self.input_sizes(index)), _list(strides))
                  for index, strides in enumerate(self.input_strides)]
        return JoinOperatorDesc(inputs, T(self.data_type, list(self.sizes), _list(self.output_strides)), self.axis)


def _list(strides: tuple[int, ...] | None) -> list[int] | None:
    return None if strides is None else list(strides)


@st.composite
def join_cases(draw: st.DrawFn) -> JoinCase:
    level = draw(st.sampled_from(LEVELS))
    _, (low, high), types = _row_at(dml.FeatureLevel.parse(level))
    rank = draw(st.integers(low, high))
    data_type = draw(st.sampled_from(types))
    sizes = draw(shapes(rank, max_elements=600, max_side=24))
    axis = draw(st.integers(0, rank - 1))
    cuts = sorted(draw(st.sets(st.integers(1, sizes[axis] - 1), max_size=5)) if sizes[axis] > 1 else [])
    bounds = [0, *cuts, sizes[axis]]
    parts = tuple(end - start for start, end in itertools.pairwise(bounds))
    dtype = NUMPY_DTYPES[data_type]
    input_strides, xs = [], []
    for part in parts:
        part_sizes = list(sizes)
        part_sizes[axis] = part
        strides = draw(strides_for(part_sizes))   # any kind, zero strides (broadcast) included
        raw = draw(arrays(np.uint8, (*part_sizes, dtype.itemsize)))  # any bit pattern: NaN payloads, -0.0, ...
        x = np.ascontiguousarray(raw).view(dtype).reshape(part_sizes)
        input_strides.append(strides)
        xs.append(read_buffer(build_buffer(x, strides), dtype, part_sizes, strides))  # equal along stride-0 dims
    output_strides = draw(strides_for(sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    note(f"level={level} {data_type} sizes={sizes} axis={axis} parts={parts} in_strides={input_strides} "
         f"out_strides={output_strides}")
    return JoinCase(level, data_type, tuple(sizes), axis, parts, tuple(input_strides), output_strides, tuple(xs))


@cache
def _compiled(backend: str, level: str, desc: JoinOperatorDesc, streaming: bool) -> dml.CompiledOperator:
    device = dml.Device(feature_level=level, backend=backend)
    with streaming_forced() if streaming else contextlib.nullcontext():
        return device.compile_operator(device.create_operator(desc))


def _same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    return got.shape == expected.shape and got.dtype == expected.dtype and np.array_equal(
        got.view(unsigned), expected.view(unsigned))


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@settings(max_examples=30)
@given(case=join_cases())
def test_join_matches_reference(case: JoinCase, streaming: bool, backend: str) -> None:
    (got,) = _compiled(backend, case.level, case.descriptor(), streaming)(*case.xs)
    assert _same_bits(got, reference_join(case.xs, case.axis))


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
@settings(max_examples=20)
@given(case=join_cases(), data=st.data())
def test_join_raw_buffers(case: JoinCase, streaming: bool, backend: str, data: st.DataObject) -> None:
    dtype = NUMPY_DTYPES[case.data_type]
    inputs = []
    for index, (x, strides) in enumerate(zip(case.xs, case.input_strides, strict=True)):
        offset = data.draw(byte_offsets(), f"input {index} offset")
        buffer = build_buffer(x, strides, byte_offset=offset, tail_bytes=data.draw(st.integers(0, 20)), seed=index)
        inputs.append((buffer, buffer.copy(), offset))
    offset = data.draw(byte_offsets(), "output offset")
    size = tensor_size_in_bytes(dtype.itemsize, case.sizes, case.output_strides)
    output = sentinel_bytes(offset + size + data.draw(st.integers(0, 20)), seed=3)
    before = output.copy()
    _compiled(backend, case.level, case.descriptor(), streaming).execute(
        [dml.Binding(buffer, offset=at) for buffer, _, at in inputs], [dml.Binding(output, offset=offset)])
    for index, (buffer, copy, _) in enumerate(inputs):
        assert np.array_equal(buffer, copy), f"input {index} was modified"
    written = addressed_byte_mask(len(output), dtype.itemsize, case.sizes, case.output_strides, byte_offset=offset)
    changed = np.flatnonzero((output != before) & ~written)
    assert changed.size == 0, f"bytes outside the output's elements changed: {changed[:16].tolist()}"
    got = read_buffer(output, dtype, case.sizes, case.output_strides, byte_offset=offset)
    assert _same_bits(got, reference_join(case.xs, case.axis))
