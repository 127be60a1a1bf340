"""The enums carry DML's numeric values (DIGEST 1.2-1.5) and parse DML's names."""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

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


# -- names are matched exactly, as DML spells them (DxDispatch compares with strcmp) -------------------------------

NEAR_MISSES = [  # (parse, value, the message's pattern after "<label> is ")
    (dml.AxisDirection.parse, "DECREASING\n", r"'DECREASING\\n' \(names are matched exactly as DML spells them: "
                                              r"'DECREASING'\); it must be one of INCREASING, DECREASING "
                                              r"\(DML_AXIS_DIRECTION_\*, or 0 and 1\)$"),
    (dml.AxisDirection.parse, " DECREASING", r"' DECREASING' \(names are matched exactly as DML spells them: "
                                             r"'DECREASING'\); it must be one of INCREASING, DECREASING"),
    (dml.AxisDirection.parse, "DML_AXIS_DIRECTION_DECREASING\t",
     r"'DML_AXIS_DIRECTION_DECREASING\\t' \(names are matched exactly as DML spells them: "
     r"'DML_AXIS_DIRECTION_DECREASING'\); it must be one of INCREASING, DECREASING"),
    (dml.AxisDirection.parse, "decreasing", r"'decreasing' \(names are matched exactly as DML spells them: "
                                            r"'DECREASING'\); it must be one of INCREASING, DECREASING"),
    (dml.ReduceFunction.parse, "sum", r"'sum' \(names are matched exactly as DML spells them: 'SUM'\); it must be "
                                      r"one of ARGMAX, ARGMIN, .*, SUM_SQUARE \(DML_REDUCE_FUNCTION_\*, or 0 to 11\)$"),
    (dml.ReduceFunction.parse, "\nSUM", r"'\\nSUM' \(names are matched exactly as DML spells them: 'SUM'\)"),
    (dml.OperatorType.parse, "DML_OPERATOR_REDUCE ", r"'DML_OPERATOR_REDUCE ' \(names are matched exactly as DML "
                                                     r"spells them: 'DML_OPERATOR_REDUCE'\); it must be one of "),
    (dml.FeatureLevel.parse, "5_2\n", r"'5_2\\n' \(names are matched exactly as DML spells them: '5_2'\); it must "
                                      r"be one of 1_0, 2_0, .*, 6_4 \(DML_FEATURE_LEVEL_\*, or their values\)$"),
    (dml.FeatureLevel.parse, "level_5_2", r"'level_5_2' \(names are matched exactly as DML spells them: "
                                          r"'LEVEL_5_2'\); it must be one of 1_0"),
    (dml.DataType.parse, " FLOAT16", r"' FLOAT16' \(names are matched exactly as DML spells them: 'FLOAT16'\); it "
                                     r"must be a DataType: one of UNKNOWN, FLOAT32, .*, INT4 "
                                     r"\(DML_TENSOR_DATA_TYPE_\*, or 0 to 13\), or a NumPy dtype that has one$"),
    (dml.DataType.parse, "dml_tensor_data_type_float16", r"'dml_tensor_data_type_float16' \(names are matched "
                                                         r"exactly as DML spells them: "
                                                         r"'DML_TENSOR_DATA_TYPE_FLOAT16'\)"),
    (dml.TensorFlags.parse, "OWNED_BY_DML\r\n", r"'OWNED_BY_DML\\r\\n' \(names are matched exactly as DML spells "
                                                r"them: 'OWNED_BY_DML'\); it must be one of NONE, OWNED_BY_DML "
                                                r"\(DML_TENSOR_FLAG_\*\), an integer of those bits"),
    (dml.ExecutionFlags.parse, ["NONE", "disable_meta_commands"],
     r"'disable_meta_commands' \(names are matched exactly as DML spells them: 'DISABLE_META_COMMANDS'\)"),
]


@pytest.mark.parametrize(("parse", "value", "message"), NEAR_MISSES,
                         ids=[f"{parse.__self__.__name__}-{value!r}" for parse, value, _ in NEAR_MISSES])
def test_names_with_whitespace_or_another_case_are_refused(parse: Any, value: object, message: str) -> None:
    """Whitespace around a name and names in another case are refused, as DxDispatch's JSON parsers refuse them
    (strcmp against DML's spelling); the message shows the value's repr (so the whitespace shows), the name it
    nearly is and every name allowed."""
    label = parse.__self__.__name__
    field = r": \[1\]" if isinstance(value, list) else ""
    with pytest.raises(dml.ValidationError, match=rf"^{label}{field} is {message}"):
        parse(value)


def test_names_with_whitespace_are_refused_in_descriptors_and_graphs() -> None:
    """The descriptors' and graph functions' enum fields take the same exact names, naming the operator and field."""
    x = dml.TensorDesc(dml.DataType.FLOAT32, [2, 3])
    y = dml.TensorDesc(dml.DataType.UINT32, [2, 1])
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ARGMAX: AxisDirection is 'DECREASING\\n' \(names "
                                                  r"are matched exactly as DML spells them: 'DECREASING'\); it must "
                                                  r"be one of INCREASING, DECREASING"):
        dml.ArgMaxOperatorDesc(x, y, [1], "DECREASING\n")
    assert dml.ArgMaxOperatorDesc(x, y, [1], "DECREASING").axis_direction is dml.AxisDirection.DECREASING
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_REDUCE: Function is ' SUM' \(names are matched "
                                                  r"exactly as DML spells them: 'SUM'\)"):
        dml.ReduceOperatorDesc(" SUM", x, dml.TensorDesc(dml.DataType.FLOAT32, [2, 1]), [1])
    with pytest.raises(dml.ValidationError, match=r"^TensorDesc: DataType is 'FLOAT32 ' \(names are matched exactly"):
        dml.TensorDesc("FLOAT32 ", [2, 3])
    with pytest.raises(dml.ValidationError, match=r"^Device: feature_level is '6_4 ' \(names are matched exactly"):
        dml.Device(feature_level="6_4 ")
    graph = dml.Graph(dml.Device())
    z = graph.input([2, 3], "FLOAT32")
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ARGMIN: AxisDirection is 'DML_AXIS_DIRECTION_"
                                                  r"DECREASING\\t' \(names are matched exactly"):
        dml.arg_min(z, [1], axis_direction="DML_AXIS_DIRECTION_DECREASING\t")
    with pytest.raises(dml.ValidationError, match=r"^Graph.input: dtype is 'FLOAT32\\n' \(names are matched exactly"):
        graph.input([2], "FLOAT32\n")


def test_exact_names_still_parse() -> None:
    """Both of DML's spellings, FeatureLevel's short forms, and NumPy's own dtype names (which NumPy matches
    exactly too: "float16", "f2")."""
    assert dml.AxisDirection.parse("DECREASING") is dml.AxisDirection.parse("DML_AXIS_DIRECTION_DECREASING")
    assert dml.FeatureLevel.parse("LEVEL_5_2") is dml.FeatureLevel.parse("5.2") is dml.FeatureLevel.LEVEL_5_2
    assert dml.DataType.parse("f2") is dml.DataType.parse("float16") is dml.DataType.FLOAT16
    assert dml.TensorFlags.parse(["NONE", "DML_TENSOR_FLAG_OWNED_BY_DML"]) is dml.TensorFlags.OWNED_BY_DML
    with pytest.raises(dml.ValidationError, match=r"^ReduceFunction is 'SUMS'; it must be one of ARGMAX"):
        dml.ReduceFunction.parse("SUMS")     # no near name: no hint


@pytest.mark.parametrize(("field", "value", "shown"), [
    ("AxisDirection", "DECREASING\n", r"'DECREASING\\n'"),
    ("AxisDirection", " DECREASING", r"' DECREASING'"),
    ("AxisDirection", "DML_AXIS_DIRECTION_DECREASING\t", r"'DML_AXIS_DIRECTION_DECREASING\\t'"),
    ("AxisDirection", "decreasing", r"'decreasing'"),
    ("InputTensor.DataType", "FLOAT32 ", r"'FLOAT32 '"),
    ("InputTensor.DataType", "float32", r"'float32'"),   # NumPy's names are not DxDispatch's
    ("InputTensor.Flags", " NONE", r"' NONE'"),
])
def test_json_models_take_exact_names(field: str, value: str, shown: str, tmp_path: Path) -> None:
    """A DxDispatch model is read as DxDispatch reads it: a name with whitespace around it, or in another case, is
    refused at its JSON path, with the value's repr and the names allowed."""
    from opendml.model.reader import Limits, ModelError, read_model

    desc: dict[str, Any] = {"InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 3], "Flags": "NONE"},
                            "OutputTensor": {"DataType": "UINT32", "Sizes": [1, 1]},
                            "AxisCount": 1, "Axes": [1], "AxisDirection": "DECREASING"}
    model = {"resources": {}, "dispatchables": {"argmax": {"type": "DML_OPERATOR_ARGMAX", "desc": desc}},
             "commands": []}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    read_model(path, Limits(1 << 20))                        # the exact names are read
    *parents, key = field.split(".")
    target = desc
    for parent in parents:
        target = target[parent]
    target[key] = value
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError, match=rf"^dispatchables\.argmax\.desc\.{re.escape(field)}: .*{shown} \(names are "
                                         rf"matched exactly as DML spells them: '{value.strip().upper()}'\); it must "
                                         rf"be .*one of "):
        read_model(path, Limits(1 << 20))


# -- the error classes ---------------------------------------------------------------------------------------------

ERRORS = [dml.DmlError, dml.ValidationError, dml.UnsupportedError, dml.BindingError]


@pytest.mark.parametrize("error_type", ERRORS, ids=[error_type.__name__ for error_type in ERRORS])
def test_errors_show_and_pickle_as_opendml_classes(error_type: type[dml.DmlError]) -> None:
    """The errors are shown as README writes them (`opendml.ValidationError: ...`, not opendml.errors's), and
    pickle round-trips them (Dask sends a worker's error to the client that way)."""
    error = error_type("DML_OPERATOR_REDUCE (Function SUM): OutputTensor.Sizes is [3, 3]")
    name = f"opendml.{error_type.__name__}"
    assert traceback.format_exception_only(error) == [f"{name}: {error}\n"]
    assert repr(type(error)) == f"<class '{name}'>"
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is error_type and back.args == error.args


def test_a_traceback_names_the_opendml_class() -> None:
    """What a user sees: the last line of an uncaught error's traceback."""
    code = "import opendml as dml; dml.ReduceFunction.parse('MEAN')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stderr.splitlines()[-1].startswith("opendml.ValidationError: ReduceFunction is 'MEAN'; it must be ")
