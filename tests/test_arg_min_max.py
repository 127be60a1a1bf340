"""ARGMIN and ARGMAX: both pages' examples (copied by hand) in both directions, a DxDispatch-style model, every row of
the pages' support table, every rule as a bad-input table with message regexes, kernel paths with planted ties and
NaNs, and hypothesis properties against ``reference_arg_min_max``."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import arg_extreme_directed, reference_arg_min_max
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
from opendml import ArgMaxOperatorDesc, ArgMinOperatorDesc, AxisDirection

F32 = dml.DataType.FLOAT32
ArgDesc = type[ArgMinOperatorDesc] | type[ArgMaxOperatorDesc]
OPERATORS: dict[str, ArgDesc] = {"ARGMIN": ArgMinOperatorDesc, "ARGMAX": ArgMaxOperatorDesc}
DIRECTIONS = ("INCREASING", "DECREASING")


def compile_arg(operator: str, input_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc, axes: list[int],
                direction: str = "INCREASING", level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    desc = OPERATORS[operator](input_tensor, output_tensor, axes, direction)
    return device.compile_operator(device.create_operator(desc))


# -- goldens ----------------------------------------------------------------------------------------------------------

# Both pages' shared input: Sizes {3, 3}, FLOAT32.
PAGE_INPUT = np.array([[1, 2, 3],
                       [3, 0, 4],
                       [2, 5, 2]], dtype=np.float32)

PAGE_EXAMPLES = [
    # (operator, axes, output sizes, the page's output with AxisDirection INCREASING)
    ("ARGMAX", [0], [1, 3], [[1, 2, 1]]),          # Example 1: argmax({1,3,2}), ({2,0,5}), ({3,4,2})
    ("ARGMAX", [1], [3, 1], [[2], [2], [1]]),      # Example 2: argmax({1,2,3}), ({3,0,4}), ({2,5,2})
    ("ARGMAX", [0, 1], [1, 1], [[7]]),             # Example 3: the whole tensor
    ("ARGMIN", [0], [1, 3], [[0, 1, 2]]),
    ("ARGMIN", [1], [3, 1], [[0], [1], [0]]),
    ("ARGMIN", [0, 1], [1, 1], [[4]]),
]


@pytest.mark.parametrize(("operator", "axes", "output_sizes", "expected"), PAGE_EXAMPLES)
@pytest.mark.parametrize("output_type", ["UINT32", "INT64"])
def test_page_examples(operator: str, axes: list[int], output_sizes: list[int], expected: list[list[int]],
                       output_type: str) -> None:
    compiled = compile_arg(operator, T(F32, [3, 3]), T(output_type, output_sizes), axes, "INCREASING", level="3_0")
    (output,) = compiled(PAGE_INPUT)
    assert output.dtype == np.dtype(output_type.lower())
    assert output.tolist() == expected


# The same input with AxisDirection DECREASING, worked out by hand: only ARGMIN's last row {2, 5, 2} has a tie, so
# only it changes (the last 2, index 2); ARGMAX's extremes are all unique.
DECREASING_EXAMPLES = [
    ("ARGMAX", [0], [1, 3], [[1, 2, 1]]),
    ("ARGMAX", [1], [3, 1], [[2], [2], [1]]),
    ("ARGMAX", [0, 1], [1, 1], [[7]]),
    ("ARGMIN", [0], [1, 3], [[0, 1, 2]]),
    ("ARGMIN", [1], [3, 1], [[0], [1], [2]]),
    ("ARGMIN", [0, 1], [1, 1], [[4]]),
]


@pytest.mark.parametrize(("operator", "axes", "output_sizes", "expected"), DECREASING_EXAMPLES)
def test_page_input_decreasing(operator: str, axes: list[int], output_sizes: list[int],
                               expected: list[list[int]]) -> None:
    compiled = compile_arg(operator, T(F32, [3, 3]), T("UINT32", output_sizes), axes, "DECREASING")
    assert compiled(PAGE_INPUT)[0].tolist() == expected


@pytest.mark.parametrize(("operator", "values", "direction", "expected"), [
    ("ARGMAX", [3, 2, 1, 2, 3], "INCREASING", 0),   # the ARGMAX page: argmax({3,2,1,2,3}) = 0 ...
    ("ARGMAX", [3, 2, 1, 2, 3], "DECREASING", 4),   # ... and 4
    ("ARGMIN", [1, 2, 3, 2, 1], "INCREASING", 0),   # the ARGMIN page: argmin({1,2,3,2,1}) = 0 ...
    ("ARGMIN", [1, 2, 3, 2, 1], "DECREASING", 4),   # ... and 4
])
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT8", "UINT16"])
def test_page_axis_direction_examples(operator: str, values: list[int], direction: str, expected: int,
                                      data_type: str) -> None:
    compiled = compile_arg(operator, T(data_type, [5]), T("UINT32", [1]), [0], direction)
    assert compiled(np.array(values, np.dtype(data_type.lower())))[0].tolist() == [expected]


def test_increasing_is_reduce_argmax_and_argmin() -> None:
    # Both pages' remark: with INCREASING the operator is REDUCE with function ARGMAX (ARGMIN).
    device = dml.Device(feature_level="3_0")
    x = np.array([[4, 1, 4, 1], [7, 7, 0, 0], [2, 9, 9, 2]], np.float32)
    first_on_ties = {"ARGMAX": [[0], [0], [1]], "ARGMIN": [[1], [2], [0]]}     # worked out by hand
    for operator, desc_type in OPERATORS.items():
        mine = device.compile_operator(device.create_operator(desc_type(T(F32, [3, 4]), T("UINT32", [3, 1]), [1])))
        reduce = device.compile_operator(device.create_operator(
            dml.ReduceOperatorDesc(operator, T(F32, [3, 4]), T("UINT32", [3, 1]), [1])))
        assert mine(x)[0].tolist() == reduce(x)[0].tolist() == first_on_ties[operator]


# -- DxDispatch's model format ----------------------------------------------------------------------------------------

def _model(direction: str) -> dict[str, object]:
    return {
        "resources": {
            "input": {"initialValuesDataType": "FLOAT32",
                      "initialValues": [1, 2, 3, 3, 0, 4, 2, 5, 2]},
            "output": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 3, "value": 0}},
        },
        "dispatchables": {
            "argmin": {
                "type": "DML_OPERATOR_ARGMIN",
                "desc": {
                    "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
                    "OutputTensor": {"DataType": "UINT32", "Sizes": [1, 1, 3, 1]},
                    "AxisCount": 1, "Axes": [3], "AxisDirection": direction,
                },
            },
        },
        "commands": [{"type": "dispatch", "dispatchable": "argmin",
                      "bindings": {"InputTensor": "input", "OutputTensor": "output"}},
                     {"type": "print", "resource": "output"}],
    }


@pytest.mark.parametrize(("direction", "expected"), [
    ("DML_AXIS_DIRECTION_INCREASING", "0, 1, 0"),
    ("DML_AXIS_DIRECTION_DECREASING", "0, 1, 2"),    # the page's rows, the tie in {2, 5, 2} to the last
])
def test_dxdispatch_model(direction: str, expected: str, backend: str, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    from opendml.cli import main

    path = tmp_path / "argmin.json"
    path.write_text(json.dumps(_model(direction)))
    assert main(["dispatch", "--backend", backend, str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"Resource 'output': {expected}"]


def test_json_field_reads_as_the_enum() -> None:
    from opendml.model.fields import Kind, fields_of
    from opendml.model.reader import ModelError, read_operator_desc

    table = {item.dml_name: item for item in fields_of(ArgMaxOperatorDesc)}
    assert list(table) == ["InputTensor", "OutputTensor", "Axes", "AxisDirection"]
    assert table["AxisDirection"].kind is Kind.ENUM and table["AxisDirection"].enum_type is AxisDirection
    assert table["Axes"].count_name == "AxisCount"
    spec = {"InputTensor": {"DataType": "FLOAT32", "Sizes": [5]}, "OutputTensor": {"DataType": "UINT32", "Sizes": [1]},
            "AxisCount": 1, "Axes": [0]}
    assert read_operator_desc("d", ArgMaxOperatorDesc, spec).axis_direction is AxisDirection.INCREASING
    for value in ("DML_AXIS_DIRECTION_DECREASING", "DECREASING", 1):
        desc = read_operator_desc("d", ArgMaxOperatorDesc, {**spec, "AxisDirection": value})
        assert desc.axis_direction is AxisDirection.DECREASING
    with pytest.raises(ModelError, match=r"d.AxisDirection: .*'DML_AXIS_DIRECTION_UP'.*INCREASING, DECREASING"):
        read_operator_desc("d", ArgMaxOperatorDesc, {**spec, "AxisDirection": "DML_AXIS_DIRECTION_UP"})


def test_descriptor_fields_and_enum() -> None:
    desc = ArgMinOperatorDesc(T(F32, [2, 3]), T("INT64", [2, 1]), np.array([1]), "DML_AXIS_DIRECTION_DECREASING")
    assert desc.axes == (1,) and desc.axis_direction is AxisDirection.DECREASING and desc.decreasing
    assert desc.label == "DML_OPERATOR_ARGMIN" and desc.reduced_element_count == 3
    assert [name for name, _ in desc.input_slots()] == ["InputTensor"]
    assert [name for name, _ in desc.output_slots()] == ["OutputTensor"]
    assert ArgMaxOperatorDesc(T(F32, [2]), T("UINT32", [1]), [0]).axis_direction is AxisDirection.INCREASING
    assert [(m.name, m.value) for m in AxisDirection] == [("INCREASING", 0), ("DECREASING", 1)]
    assert AxisDirection.parse("DECREASING") is AxisDirection.DECREASING   # exactly as DML spells it: test_types
    assert dml.OperatorType.ARGMIN.value == 137 and dml.OperatorType.ARGMAX.value == 138
    assert ArgMaxOperatorDesc.support_tables().keys() == {""}


# -- the support table ------------------------------------------------------------------------------------------------

INDEX_TYPES = ("INT64", "INT32", "UINT64", "UINT32")
PAGE = [  # both pages: (level, input types, output types), ranks 1 to 8 in each row
    ("4_1", ("FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"),
     INDEX_TYPES),
    ("3_0", ("FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"), INDEX_TYPES),
]
ALL_TYPES = [data_type.name for data_type in dml.DataType if data_type.name != "UNKNOWN"]


@pytest.mark.parametrize("level", list(dml.FeatureLevel), ids=str)
def test_every_row_of_the_page(level: dml.FeatureLevel) -> None:
    device = dml.Device(feature_level=level)
    rows = [row for row in PAGE if dml.FeatureLevel.parse(row[0]) <= level]
    for operator, desc_type in OPERATORS.items():
        for data_type, index_type, rank in itertools.product(ALL_TYPES, ALL_TYPES, (1, 5, 8)):
            desc = desc_type(T(data_type, [2] * rank), T(index_type, [2] * (rank - 1) + [1]), [rank - 1])
            if not rows:
                with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_{operator} needs feature level 3_0; "
                                                               rf"the device is at {level}"):
                    device.create_operator(desc)
                continue
            _, data_types, index_types = max(rows, key=lambda row: dml.FeatureLevel.parse(row[0]))
            if data_type in data_types and index_type in index_types:
                device.create_operator(desc)
            else:
                with pytest.raises((dml.ValidationError, dml.UnsupportedError)):
                    device.create_operator(desc)


# -- bad descriptors --------------------------------------------------------------------------------------------------

BAD_DESCRIPTORS = [
    # (id, operator, input, output, axes, level, error, message regex after "DML_OPERATOR_<operator>")
    ("ARGMAX at 2_1", "ARGMAX", T(F32, [1, 1, 3, 3]), T("UINT32", [1, 1, 1, 3]), [2], "2_1", dml.UnsupportedError,
     r" needs feature level 3_0; the device is at 2_1"),
    ("ARGMIN at 1_0", "ARGMIN", T(F32, [3, 3]), T("UINT32", [1, 3]), [0], "1_0", dml.UnsupportedError,
     r" needs feature level 3_0; the device is at 1_0"),
    ("INT64 input below 4_1", "ARGMAX", T("INT64", [3, 3]), T("UINT32", [1, 3]), [0], "4_0", dml.UnsupportedError,
     r": InputTensor.DataType INT64 needs feature level 4_1; the device is at 4_0"),
    ("UINT64 input below 4_1", "ARGMIN", T("UINT64", [3, 3]), T("INT64", [1, 3]), [0], "3_0", dml.UnsupportedError,
     r": InputTensor.DataType UINT64 needs feature level 4_1; the device is at 3_0"),
    ("FLOAT64 input", "ARGMAX", T("FLOAT64", [3, 3]), T("UINT32", [1, 3]), [0], "6_4", dml.ValidationError,
     r": InputTensor.DataType FLOAT64 is not supported; at feature level 6_4 it must be one of FLOAT32, FLOAT16, "
     r"INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8"),
    ("FLOAT64 input at 3_0", "ARGMIN", T("FLOAT64", [3, 3]), T("UINT32", [1, 3]), [0], "3_0", dml.ValidationError,
     r": InputTensor.DataType FLOAT64 is not supported; at feature level 3_0 it must be one of FLOAT32, FLOAT16, "
     r"INT32, INT16, INT8, UINT32, UINT16, UINT8"),
    ("UINT4 input", "ARGMAX", T("UINT4", [3, 4]), T("UINT32", [1, 4]), [0], "6_4", dml.ValidationError,
     r": InputTensor.DataType UINT4 is not supported"),
    ("FLOAT32 output", "ARGMAX", T(F32, [3, 3]), T(F32, [1, 3]), [0], "6_4", dml.ValidationError,
     r": OutputTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of INT64, INT32, UINT64, "
     r"UINT32"),
    ("INT16 output", "ARGMIN", T(F32, [3, 3]), T("INT16", [1, 3]), [0], "6_4", dml.ValidationError,
     r": OutputTensor.DataType INT16 is not supported"),
    ("UINT8 output", "ARGMAX", T("UINT8", [3, 3]), T("UINT8", [1, 3]), [0], "6_4", dml.ValidationError,
     r": OutputTensor.DataType UINT8 is not supported"),
    ("INT32 index too small", "ARGMAX", T("INT8", [2**16, 2**15 + 1], [0, 0]), T("INT32", [1, 1]), [0, 1], "6_4",
     dml.ValidationError, r": OutputTensor.DataType INT32 cannot hold the largest index 2147549183; use a wider "
                          r"index type"),
    ("UINT32 index too small", "ARGMIN", T(F32, [3, 2**16, 2**16 + 1], [1, 0, 0]), T("UINT32", [3, 1, 1]), [1, 2],
     "3_0", dml.ValidationError, r": OutputTensor.DataType UINT32 cannot hold the largest index 4295032831"),
    ("wrong output sizes", "ARGMAX", T(F32, [3, 3]), T("UINT32", [3, 3]), [0], "6_4", dml.ValidationError,
     r": OutputTensor.Sizes is \[3, 3\]; with Axes \[0\] it must be \[1, 3\]"),
    ("wrong output sizes, two axes", "ARGMIN", T(F32, [2, 3, 4]), T("UINT32", [1, 3, 4]), [2, 0], "6_4",
     dml.ValidationError, r": OutputTensor.Sizes is \[1, 3, 4\]; with Axes \[2, 0\] it must be \[1, 3, 1\]"),
    ("wrong output rank", "ARGMAX", T(F32, [3, 3]), T("UINT32", [3]), [1], "6_4", dml.ValidationError,
     r": OutputTensor.DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    ("axis out of range", "ARGMAX", T(F32, [3, 3]), T("UINT32", [1, 3]), [2], "6_4", dml.ValidationError,
     r": Axes\[0\] is 2; it must be in \[0, 1\] for InputTensor of 2 dimensions"),
    ("duplicate axes", "ARGMIN", T(F32, [3, 3]), T("UINT32", [1, 3]), [0, 0], "6_4", dml.ValidationError,
     r": Axes\[1\] is 0, which appears twice; axes must be unique"),
    ("empty axes", "ARGMAX", T(F32, [3, 3]), T("UINT32", [3, 3]), [], "6_4", dml.ValidationError,
     r": Axes is empty; it must name at least one axis of InputTensor"),
    ("rank 9", "ARGMAX", T(F32, [1] * 9), T("UINT32", [1] * 9), [0], "6_4", dml.ValidationError,
     r": InputTensor.DimensionCount is 9; it must be 1 to 8"),
    ("a zero size", "ARGMIN", T(F32, [3, 0]), T("UINT32", [1, 0]), [0], "6_4", dml.ValidationError,
     r": InputTensor.Sizes\[1\] is 0; every size must be at least 1"),
    ("overlapping output strides", "ARGMAX", T(F32, [3, 3]), T("UINT32", [3, 1], [0, 1]), [1], "6_4",
     dml.ValidationError, r": OutputTensor.Strides \[0, 1\] map two elements of Sizes \[3, 1\] onto the same memory"),
    ("owned output", "ARGMIN", T(F32, [3, 3]), T("UINT32", [1, 3], flags="OWNED_BY_DML"), [0], "6_4",
     dml.ValidationError, r": OutputTensor.Flags is OWNED_BY_DML; only input tensors may be owned by DML"),
    ("total size too small", "ARGMAX", T(F32, [3, 3], total_tensor_size_in_bytes=32), T("UINT32", [1, 3]), [0], "6_4",
     dml.ValidationError, r": InputTensor.TotalTensorSizeInBytes is 32; it must be at least 36"),
]


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize(("operator", "input_tensor", "output_tensor", "axes", "level", "error", "message"),
                         [case[1:] for case in BAD_DESCRIPTORS], ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(operator: str, input_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc, axes: list[int],
                         level: str, error: type[Exception], message: str, direction: str) -> None:
    desc = OPERATORS[operator](input_tensor, output_tensor, axes, direction)
    with pytest.raises(error, match=rf"^DML_OPERATOR_{operator}" + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: ArgMaxOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], "SIDEWAYS"),
     r"DML_OPERATOR_ARGMAX: AxisDirection is 'SIDEWAYS'; it must be one of INCREASING, DECREASING"),
    (lambda: ArgMinOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], "DML_AXIS_DIRECTION_UP"),
     r"DML_OPERATOR_ARGMIN: AxisDirection is 'DML_AXIS_DIRECTION_UP'; it must be one of INCREASING, DECREASING"),
    (lambda: ArgMaxOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], 2),
     r"DML_OPERATOR_ARGMAX: AxisDirection is 2; it must be one of INCREASING, DECREASING \(DML_AXIS_DIRECTION_\*, "
     r"or 0 and 1\)"),
    (lambda: ArgMaxOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], True),
     r"DML_OPERATOR_ARGMAX: AxisDirection is True; it must be one of"),
    (lambda: ArgMinOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], None),  # type: ignore[arg-type]
     r"DML_OPERATOR_ARGMIN: AxisDirection is None; it must be one of"),
    (lambda: ArgMaxOperatorDesc(T(F32, [3]), T("UINT32", [1]), [0], dml.ReduceFunction.ARGMAX),
     r"DML_OPERATOR_ARGMAX: AxisDirection is <ReduceFunction.ARGMAX: 0>; it must be one of"),
    (lambda: ArgMaxOperatorDesc([3, 3], T("UINT32", [1]), [0]),  # type: ignore[arg-type]
     r"DML_OPERATOR_ARGMAX: InputTensor is \[3, 3\]; it must be a TensorDesc$"),
    (lambda: ArgMinOperatorDesc(T(F32, [3]), "UINT32", [0]),  # type: ignore[arg-type]
     r"DML_OPERATOR_ARGMIN: OutputTensor is 'UINT32'; it must be a TensorDesc$"),
    (lambda: ArgMinOperatorDesc(T(F32, [3]), T("UINT32", [1]), [-1]),
     r"DML_OPERATOR_ARGMIN: Axes\[0\] is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: ArgMaxOperatorDesc(T(F32, [3]), T("UINT32", [1]), 0),  # type: ignore[arg-type]
     r"DML_OPERATOR_ARGMAX: Axes is 0; it must be a list of integers"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        build()


# -- the binding model ------------------------------------------------------------------------------------------------

def test_zero_stride_block_is_all_ties() -> None:
    # A broadcast input (stride 0 along the reduced axis) holds one value n times: the first or the last index.
    for direction, expected in (("INCREASING", [0, 0, 0]), ("DECREASING", [5, 5, 5])):
        compiled = compile_arg("ARGMAX", T(F32, [6, 3], [0, 1]), T("UINT64", [1, 3]), [0], direction)
        output = np.zeros(3, np.uint64)
        compiled.execute([dml.Binding(np.array([1, 2, 3], np.float32))], [dml.Binding(output)])
        assert output.tolist() == expected


def test_strided_input_and_output_at_offsets() -> None:
    # The page's input transposed inside a padded buffer (strides {1, 4}); INT64 outputs every other element at 32.
    compiled = compile_arg("ARGMIN", T(F32, [3, 3], [1, 4]), T("INT64", [3, 1], [2, 1]), [1], "DECREASING")
    memory = np.full(12, -1.0, np.float32)
    memory[[0, 4, 8]] = [1, 2, 3]
    memory[[1, 5, 9]] = [3, 0, 4]
    memory[[2, 6, 10]] = [2, 5, 2]
    output = np.full(4 + 5, 99, np.int64)
    compiled.execute(inputs=[dml.Binding(memory)], outputs=[dml.Binding(output, offset=32)])
    assert output.tolist() == [99] * 4 + [0, 99, 1, 99, 2]


def test_inputs_unchanged_and_a_refused_call_writes_nothing() -> None:
    compiled = compile_arg("ARGMAX", T(F32, [3, 3]), T("UINT32", [3, 1]), [1], "DECREASING")
    source = PAGE_INPUT.copy()
    output = np.full(3, 42, np.uint32)
    compiled.execute([dml.Binding(source)], [dml.Binding(output)])
    np.testing.assert_array_equal(source, PAGE_INPUT)
    assert output.tolist() == [2, 2, 1]
    untouched = np.full(8, 42, np.uint32)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_ARGMAX: OutputTensor binding offset is 8; it must be "
                                               r"a multiple of 16"):
        compiled.execute([dml.Binding(source)], [dml.Binding(untouched, offset=8)])
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_ARGMAX: InputTensor binding needs bytes \[0, 36\) but "
                                               r"the buffer holds 32 bytes"):
        compiled.execute([dml.Binding(bytearray(32))], [dml.Binding(untouched)])
    assert untouched.tolist() == [42] * 8


def test_owned_by_dml_input() -> None:
    owned = T(F32, [3, 3], flags=dml.TensorFlags.OWNED_BY_DML)
    compiled = compile_arg("ARGMIN", owned, T("UINT32", [3, 1]), [1], "DECREASING")
    data = PAGE_INPUT.copy()
    compiled.initialize([dml.Binding(data)])
    data[:] = 0                               # the initializer copied the data
    output = np.zeros(3, np.uint32)
    compiled.execute([None], [dml.Binding(output)])
    assert output.tolist() == [0, 1, 2]


def test_a_block_longer_than_the_gpus_counters(backend: str) -> None:
    # 2^32 + 2^16 elements per output (a broadcast input): the gpu's 32-bit counters cannot walk the block, which
    # compile_operator says naming the operator; the cpu's counters are 64-bit.
    desc = ArgMaxOperatorDesc(T("INT8", [2**16, 2**16 + 1], [0, 0]), T("INT64", [1, 1]), [0, 1], "DECREASING")
    device = dml.Device()
    operator = device.create_operator(desc)
    if backend == "gpu":
        with pytest.raises(dml.UnsupportedError, match=r"^DML_OPERATOR_ARGMAX: each output element reduces "
                                                       r"4295032832 input elements; the gpu backend reduces at most"):
            device.compile_operator(operator)
    else:
        device.compile_operator(operator)


# -- kernel paths, with planted ties and NaNs -------------------------------------------------------------------------

def vectorized_oracle(x: np.ndarray, axes: tuple[int, ...], want_max: bool, decreasing: bool) -> np.ndarray:
    """reference_arg_min_max in whole-array NumPy, for the larger cases: blocks as rows (reduced axes in increasing
    order, row-major), NaN as the extreme, the first or last hit of a row."""
    reduced = sorted(axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    rows = np.transpose(x, kept + reduced).reshape(-1, int(np.prod([x.shape[d] for d in reduced])))
    walk = rows[:, ::-1] if decreasing else rows
    nan = np.isnan(walk) if walk.dtype.kind == "f" else np.zeros(walk.shape, bool)
    extreme = (np.max if want_max else np.min)(np.where(nan, np.zeros((), walk.dtype), walk), axis=1, keepdims=True)
    hits = np.where(nan.any(axis=1, keepdims=True), nan, walk == extreme)
    first = hits.argmax(axis=1)
    index = walk.shape[1] - 1 - first if decreasing else first
    return index.reshape([1 if d in reduced else n for d, n in enumerate(x.shape)])


@pytest.mark.parametrize(("sizes", "axes"), [((7,), (0,)), ((3, 500), (1,)), ((2, 70000), (1,)), ((600, 5), (0,))])
@pytest.mark.parametrize(("data_type", "output_type"), [("FLOAT32", "UINT32"), ("INT8", "INT64"),
                                                        ("UINT16", "UINT64"), ("INT32", "INT32")])
def test_blocks_of_a_value_nothing_beats(sizes: tuple[int, ...], axes: tuple[int, ...], data_type: str,
                                         output_type: str) -> None:
    """Every element the lowest value of its type (ARGMAX) or the highest (ARGMIN): each block is one tie, at the
    value a reduction starts from, so the result is the block's first or last index (short blocks, long ones in
    chunks, and many outputs side by side)."""
    dtype = np.dtype(data_type.lower())
    n = int(np.prod([sizes[d] for d in axes]))
    output_sizes = [1 if d in axes else size for d, size in enumerate(sizes)]
    for operator, direction in itertools.product(OPERATORS, DIRECTIONS):
        want_max = operator == "ARGMAX"
        if dtype.kind == "f":
            value = -np.inf if want_max else np.inf
        else:
            value = np.iinfo(dtype).min if want_max else np.iinfo(dtype).max
        compiled = compile_arg(operator, T(data_type, list(sizes)), T(output_type, output_sizes), list(axes),
                               direction)
        (output,) = compiled(np.full(sizes, value, dtype))
        assert set(output.reshape(-1).tolist()) == {n - 1 if direction == "DECREASING" else 0}, (operator, direction)


def test_vectorized_oracle_agrees_with_the_reference() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, (4, 5, 6)).astype(np.float32)
    x[1, 2, 3] = x[3, 0, 0] = x[3, 4, 5] = np.nan
    for axes, want_max, decreasing in itertools.product([(1,), (0, 2), (2, 1, 0)], (False, True), (False, True)):
        expected = reference_arg_min_max(x, axes, np.int64, want_max=want_max, decreasing=decreasing)
        assert np.array_equal(vectorized_oracle(x, axes, want_max, decreasing), expected)


LARGE_CASES = {
    # id: (sizes, axes, input strides or None); the CPU's plans: NumPy rows (INCREASING), one or several chunks per
    # run (family A), tiles of outputs (family B), runs on threads (2^18 elements and up), runs in a table (reduced
    # axes apart); the GPU's: one invocation per output, work-group trees, chunks combined in a second pass
    "rows of 40": ((50, 40), (1,), None),
    "long rows, chunked": ((3, 5000), (1,), None),
    "columns": ((300, 700), (0,), None),
    "axes apart": ((6, 40, 300), (0, 2), None),
    "threaded rows": ((64, 4200), (1,), None),
    "threaded columns": ((4200, 64), (0,), None),
    "transposed": ((40, 3000), (1,), (1, 40)),
    "one output": ((70, 3000), (0, 1), None),
}


@pytest.mark.parametrize("case_id", list(LARGE_CASES))
@pytest.mark.parametrize(("data_type", "output_type"), [("FLOAT32", "UINT32"), ("FLOAT16", "INT64"),
                                                        ("INT8", "INT32")])
def test_large_blocks_with_ties_and_nans(case_id: str, data_type: str, output_type: str, backend: str) -> None:
    sizes, axes, strides = LARGE_CASES[case_id]
    dtype = np.dtype(data_type.lower())
    rng = np.random.default_rng(len(case_id))
    x = rng.integers(0, 5, sizes).astype(dtype)     # five values: ties everywhere, extremes repeated
    if dtype.kind == "f":
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 1 + flat.size // 20000)] = np.nan
    data = build_buffer(x, strides)
    device = dml.Device()
    for operator, direction in itertools.product(OPERATORS, DIRECTIONS):
        output_sizes = [1 if d in axes else n for d, n in enumerate(sizes)]
        desc = OPERATORS[operator](T(data_type, list(sizes), None if strides is None else list(strides)),
                                   T(output_type, output_sizes), list(axes), direction)
        compiled = device.compile_operator(device.create_operator(desc))
        output = np.full(output_sizes, 7777, np.dtype(output_type.lower()))
        compiled.execute([dml.Binding(data)], [dml.Binding(output)])
        expected = vectorized_oracle(x, axes, operator == "ARGMAX", direction == "DECREASING")
        mismatches = np.argwhere(output != expected)
        assert mismatches.size == 0, (operator, direction, mismatches[:3].tolist(), output[tuple(mismatches[0])],
                                      expected[tuple(mismatches[0])])


# -- properties -------------------------------------------------------------------------------------------------------

LEVELS = ("3_0", "3_1", "4_0", "4_1", "5_0", "5_2", "6_0", "6_4")
NUMPY = {name: np.dtype(name.lower()) for name in PAGE[0][1]}


def _row(level: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return PAGE[0] if dml.FeatureLevel.parse(level) >= dml.FeatureLevel.parse("4_1") else PAGE[1]


@dataclass(frozen=True)
class ArgLayout:
    """Everything that goes into the descriptor (hashable: compiled operators are cached by it)."""

    level: str
    operator: str
    direction: str
    input_type: str
    output_type: str
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    input_strides: tuple[int, ...] | None
    output_strides: tuple[int, ...] | None

    @property
    def output_sizes(self) -> tuple[int, ...]:
        return tuple(1 if d in self.axes else n for d, n in enumerate(self.sizes))

    def descriptor(self) -> ArgMinOperatorDesc | ArgMaxOperatorDesc:
        strides = None if self.input_strides is None else list(self.input_strides)
        out_strides = None if self.output_strides is None else list(self.output_strides)
        return OPERATORS[self.operator](T(self.input_type, list(self.sizes), strides),
                                        T(self.output_type, list(self.output_sizes), out_strides), list(self.axes),
                                        self.direction)


@st.composite
def _values(draw: st.DrawFn, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Ordinary values, a pool of 1-3 values (ties), the type's limits, one limit everywhere (every block a tie at
    the value no element can beat), or (floats) NaN, infinities and signed zeros among them."""
    if dtype.kind == "f":
        finite = st.floats(width=dtype.itemsize * 8, allow_nan=False, allow_infinity=False)
        limits = [np.nan, np.inf, -np.inf]
        kind = draw(st.sampled_from(("ordinary", "ties", "specials", "constant")))
        if kind == "ordinary":
            return draw(arrays(dtype, shape, elements=finite))
        pool = draw(st.lists(finite, min_size=1, max_size=3))
        if kind == "specials":
            pool += draw(st.lists(st.sampled_from([*limits, 0.0, -0.0]), min_size=1, max_size=3))
    else:
        info = np.iinfo(dtype)
        ordinary = st.integers(int(info.min), int(info.max))
        limits = [int(info.min), int(info.max)]
        kind = draw(st.sampled_from(("ordinary", "ties", "extremes", "constant")))
        if kind == "ordinary":
            return draw(arrays(dtype, shape, elements=ordinary))
        pool = draw(st.lists(ordinary, min_size=1, max_size=3)) if kind == "ties" else limits
    if kind == "constant":
        pool = [draw(st.sampled_from(limits))]
    return draw(arrays(dtype, shape, elements=st.sampled_from(pool)))


@st.composite
def arg_cases(draw: st.DrawFn) -> tuple[ArgLayout, np.ndarray]:
    level = draw(st.sampled_from(LEVELS))
    _, input_types, output_types = _row(level)
    rank = draw(st.integers(1, 8))
    sizes = draw(shapes(rank, max_elements=2048, max_side=2048))
    order = draw(st.permutations(range(rank)))
    axes = tuple(order[: draw(st.integers(1, rank))])
    input_strides = draw(strides_for(sizes))
    output_sizes = tuple(1 if d in axes else n for d, n in enumerate(sizes))
    output_strides = draw(strides_for(output_sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    layout = ArgLayout(level, draw(st.sampled_from(tuple(OPERATORS))), draw(st.sampled_from(DIRECTIONS)),
                       draw(st.sampled_from(input_types)), draw(st.sampled_from(output_types)), sizes, axes,
                       input_strides, output_strides)
    dtype = NUMPY[layout.input_type]
    x = draw(_values(dtype, sizes))
    # The logical input its strides describe (a stride-0 dimension holds one value along it).
    x = read_buffer(build_buffer(x, input_strides), dtype, sizes, input_strides)
    note(f"{layout}")
    return layout, x


@cache
def _compiled(layout: ArgLayout, backend: str) -> tuple[dml.Device, dml.CompiledOperator]:
    device = dml.Device(feature_level=layout.level, backend=backend)
    return device, device.compile_operator(device.create_operator(layout.descriptor()))


def _expected(layout: ArgLayout, x: np.ndarray) -> np.ndarray:
    return reference_arg_min_max(x, layout.axes, np.dtype(layout.output_type.lower()),
                                 want_max=layout.operator == "ARGMAX", decreasing=layout.direction == "DECREASING")


@settings(max_examples=40)
@given(case=arg_cases())
def test_matches_the_reference(case: tuple[ArgLayout, np.ndarray], backend: str) -> None:
    layout, x = case
    _, compiled = _compiled(layout, backend)
    (got,) = compiled(x)
    expected = _expected(layout, x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected), (got.reshape(-1)[:16].tolist(), expected.reshape(-1)[:16].tolist())


@settings(max_examples=25)
@given(case=arg_cases(), memory=st.sampled_from(["device", "host"]))
def test_raw_buffers_between_sentinels(case: tuple[ArgLayout, np.ndarray], memory: str, backend: str) -> None:
    layout, x = case
    device, compiled = _compiled(layout, backend)
    output_dtype = np.dtype(layout.output_type.lower())
    data = build_buffer(x, layout.input_strides, byte_offset=16, tail_bytes=4)
    got = execute_between_sentinels(device, compiled, [data], output_dtype.itemsize, layout.output_sizes,
                                    layout.output_strides, memory=memory, seed=3, label=str(layout))
    elements = read_buffer(got, output_dtype, layout.output_sizes, layout.output_strides, byte_offset=32)
    assert np.array_equal(elements, _expected(layout, x))


def test_reference_directions() -> None:
    # The oracle's own rule, on the pages' examples and on NaNs.
    assert arg_extreme_directed([3, 2, 1, 2, 3], want_max=True, decreasing=False) == 0
    assert arg_extreme_directed([3, 2, 1, 2, 3], want_max=True, decreasing=True) == 4
    assert arg_extreme_directed([1.0, 2.0, 3.0, 2.0, 1.0], want_max=False, decreasing=True) == 4
    assert arg_extreme_directed([1.0, np.nan, 3.0, np.nan, 1.0], want_max=False, decreasing=False) == 1
    assert arg_extreme_directed([1.0, np.nan, 3.0, np.nan, 1.0], want_max=True, decreasing=True) == 3
    assert arg_extreme_directed([0.0, -0.0, -0.0], want_max=True, decreasing=True) == 2
