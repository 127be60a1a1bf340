"""JSON and command-line fuzzing: hostile values in every field of a model and in every option of the command.

A template model is made for every registered operator (from a valid descriptor, written with every key the reader
knows: every tensor key, every initializer form, every binding key, every command), so that each JSON field of every
operator, resource, initializer, dispatchable and command kind is a place to put a hostile value. The places are
enumerated from the documents themselves, and `test_templates_cover_every_key` checks that they hold every key of
the reader's tables (model/reader.py, model/runner.py) and every field of every operator (model/fields.py): a key
added there without a place here fails it. Each example puts one hostile value (huge and negative integers, integers
of 4301 and 100,000 digits, 1e400, -0.0, 1e-400, floats where integers belong, NaN, strings with control characters
and lone surrogates, null, arrays and objects, nesting 100 and 100,000 deep, a FIFO, a directory and a socket as
sourcePath) at one place, renames a key to a hostile name, or renames a resource or dispatchable everywhere (so that
the hostile name is printed), and runs `opendml.cli.main` in-process. Then:

- the command exits 0, or exits 2 with exactly one line on stderr (`error: ...`); nothing else escapes `main`;
- every character written is printable and encodable (names are escaped), and no run hangs (an alarm fails it).

The command line's options are fuzzed alike: every option of every subcommand, enumerated from the parser, and the
positional arguments, with hostile text (inf, nan, -1, 0, 5000-digit numbers, control characters, lone
surrogates...): exit 0 or 2, one line.

Examples: JSON_EXAMPLES hostile values (OPENDML_JSON_EXAMPLES; 20,000 with HYPOTHESIS_PROFILE=slow, 200 otherwise),
a quarter as many hostile keys and names. The options table runs whole every time.
"""

from __future__ import annotations

import copy
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import element_wise_cases
import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_cli import run_cli

import opendml as dml
from opendml.cli import build_parser, printable
from opendml.model import reader, runner
from opendml.model.fields import Kind, fields_of
from opendml.ops.activations import ActivationOperatorDesc
from opendml.ops.elementwise import ElementWiseOperatorDesc

SLOW = os.environ.get("HYPOTHESIS_PROFILE") == "slow"
JSON_EXAMPLES = int(os.environ.get("OPENDML_JSON_EXAMPLES", 20_000 if SLOW else 200))
#: Seconds one run may take before it counts as hung (a FIFO opened for reading blocks forever).
HANG_SECONDS = 60

F32 = dml.DataType.FLOAT32


def T(data_type: Any, sizes: list[int], **kwargs: Any) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, **kwargs)


# ---------------------------------------------------------------------------------------------------------------------
# One valid descriptor per operator
# ---------------------------------------------------------------------------------------------------------------------


def example_desc(desc_type: type[dml.OperatorDesc]) -> dml.OperatorDesc:
    """A small valid descriptor of the operator (each one is dispatched unmutated by test_templates_run)."""
    x4 = T(F32, [1, 2, 1, 2])
    linear = dml.ActivationLinearOperatorDesc(alpha=2.0, beta=0.5)
    examples: dict[type[dml.OperatorDesc], Any] = {
        dml.ReduceOperatorDesc: lambda: dml.ReduceOperatorDesc("SUM", T(F32, [2, 3]), T(F32, [1, 3]), [0]),
        dml.SplitOperatorDesc: lambda: dml.SplitOperatorDesc(T(F32, [4]), [T(F32, [1]), T(F32, [3])], 0),
        dml.JoinOperatorDesc: lambda: dml.JoinOperatorDesc([T(F32, [1]), T(F32, [3])], T(F32, [4]), 0),
        dml.OneHotOperatorDesc: lambda: dml.OneHotOperatorDesc(T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 1, 2]),
                                                               T(F32, [1, 1, 3, 4]), 3),
        dml.GatherNdOperatorDesc: lambda: dml.GatherNdOperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1]),
                                                                   T(F32, [2, 2]), 2, 2),
        dml.GatherNd1OperatorDesc: lambda: dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1]),
                                                                     T(F32, [2, 2]), 2, 2, 0),
        dml.MeanVarianceNormalization1OperatorDesc: lambda: dml.MeanVarianceNormalization1OperatorDesc(
            x4, T(F32, [1, 2, 1, 2]), T(F32, [1, 2, 1, 2]), x4, [2, 3], True, 1e-5, linear),
        dml.MeanVarianceNormalizationOperatorDesc: lambda: dml.MeanVarianceNormalizationOperatorDesc(
            x4, T(F32, [1, 2, 1, 1]), T(F32, [1, 2, 1, 1]), x4, False, True, 1e-5, linear),
        dml.ArgMinOperatorDesc: lambda: dml.ArgMinOperatorDesc(T(F32, [2, 3]), T("UINT32", [2, 1]), [1],
                                                               "DECREASING"),
        dml.ArgMaxOperatorDesc: lambda: dml.ArgMaxOperatorDesc(T(F32, [2, 3]), T("UINT32", [2, 1]), [1],
                                                               "INCREASING"),
        dml.GemmOperatorDesc: lambda: dml.GemmOperatorDesc(T(F32, [3, 2]), T(F32, [3, 2]), T(F32, [2, 2]),
                                                           T(F32, [2, 2]), "TRANSPOSE", "NONE", 0.5, 2.0, linear),
        dml.ConvolutionOperatorDesc: lambda: dml.ConvolutionOperatorDesc(
            T(F32, [1, 2, 3]), T(F32, [2, 1, 2]), T(F32, [1, 2, 1]), T(F32, [1, 2, 2]), "CONVOLUTION", "FORWARD", 1,
            [2], [1], [1], [0], [0], 2, linear),
        dml.FillValueConstantOperatorDesc: lambda: dml.FillValueConstantOperatorDesc(T(F32, [2, 2]), F32, 1.5),
        dml.FillValueSequenceOperatorDesc: lambda: dml.FillValueSequenceOperatorDesc(T("INT32", [4]), "INT32", -3, 2),
        dml.DiagonalMatrixOperatorDesc: lambda: dml.DiagonalMatrixOperatorDesc(T(F32, [1, 1, 2, 3]), -1, 2.0),
        dml.DiagonalMatrix1OperatorDesc: lambda: dml.DiagonalMatrix1OperatorDesc(
            T(F32, [2, 3]), T(F32, [2, 3]), F32, 0.5, 0, 2),
        dml.CastOperatorDesc: lambda: dml.CastOperatorDesc(T(F32, [1, 1, 2, 3]), T("INT8", [1, 1, 2, 3])),
        dml.SliceOperatorDesc: lambda: dml.SliceOperatorDesc(T(F32, [1, 1, 4, 4]), T(F32, [1, 1, 2, 2]), 4,
                                                             [0, 0, 1, 0], [1, 1, 2, 2], [1, 1, 2, 3]),
        dml.Slice1OperatorDesc: lambda: dml.Slice1OperatorDesc(T(F32, [1, 1, 4, 4]), T(F32, [1, 1, 2, 2]), 4,
                                                               [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2]),
        dml.CumulativeSummationOperatorDesc: lambda: dml.CumulativeSummationOperatorDesc(
            T(F32, [2, 3]), T(F32, [2, 3]), 1, "DECREASING", True),
        dml.CumulativeProductOperatorDesc: lambda: dml.CumulativeProductOperatorDesc(
            T("INT32", [2, 3]), T("INT32", [2, 3]), 0, "INCREASING", False),
        dml.PaddingOperatorDesc: lambda: dml.PaddingOperatorDesc(T(F32, [2, 3]), T(F32, [3, 6]), "REFLECTION", 1.5, 2,
                                                                 [1, 2], [0, 1]),
        dml.Padding1OperatorDesc: lambda: dml.Padding1OperatorDesc(
            T("INT64", [2]), T("INT64", [5]), "CONSTANT", "INT64", -7, 1, [1], [2]),
        dml.TileOperatorDesc: lambda: dml.TileOperatorDesc(T(F32, [2, 3]), T(F32, [4, 3]), 2, [2, 1]),
        dml.Upsample2dOperatorDesc: lambda: dml.Upsample2dOperatorDesc(T(F32, [1, 1, 2, 3]), T(F32, [1, 1, 6, 6]),
                                                                       (2, 3), "LINEAR"),
        dml.SpaceToDepthOperatorDesc: lambda: dml.SpaceToDepthOperatorDesc(T(F32, [1, 1, 2, 4]), T(F32, [1, 4, 1, 2]),
                                                                           2),
        dml.DepthToSpaceOperatorDesc: lambda: dml.DepthToSpaceOperatorDesc(T(F32, [1, 4, 1, 2]), T(F32, [1, 1, 2, 4]),
                                                                           2),
        dml.SpaceToDepth1OperatorDesc: lambda: dml.SpaceToDepth1OperatorDesc(
            T(F32, [1, 1, 2, 4]), T(F32, [1, 4, 1, 2]), 2, "COLUMN_ROW_DEPTH"),
        dml.DepthToSpace1OperatorDesc: lambda: dml.DepthToSpace1OperatorDesc(
            T(F32, [1, 4, 1, 2]), T(F32, [1, 1, 2, 4]), 2, "COLUMN_ROW_DEPTH"),
        dml.ReverseSubsequencesOperatorDesc: lambda: dml.ReverseSubsequencesOperatorDesc(
            T(F32, [1, 1, 3, 4]), T("UINT32", [1, 1, 3, 1]), T(F32, [1, 1, 3, 4]), 3),
        dml.GatherOperatorDesc: lambda: dml.GatherOperatorDesc(T(F32, [1, 3, 2]), T("INT64", [1, 2, 2]),
                                                               T(F32, [2, 2, 2]), 1, 2),
        dml.GatherElementsOperatorDesc: lambda: dml.GatherElementsOperatorDesc(
            T(F32, [3, 3]), T("UINT32", [2, 3]), T(F32, [2, 3]), 0),
        dml.ScatterElementsOperatorDesc: lambda: dml.ScatterElementsOperatorDesc(
            T(F32, [3, 3]), T("INT32", [2, 3]), T(F32, [2, 3]), T(F32, [3, 3]), 0),
        dml.ScatterNdOperatorDesc: lambda: dml.ScatterNdOperatorDesc(
            T(F32, [1, 4, 3]), T("INT64", [1, 2, 1]), T(F32, [1, 2, 3]), T(F32, [1, 4, 3]), 2, 2),
        dml.NonzeroCoordinatesOperatorDesc: lambda: dml.NonzeroCoordinatesOperatorDesc(
            T(F32, [1, 1, 2, 4]), T("UINT32", [1, 1, 1, 1]), T("UINT32", [1, 1, 8, 3])),
        dml.TopKOperatorDesc: lambda: dml.TopKOperatorDesc(T(F32, [2, 3]), T(F32, [2, 2]), T("UINT32", [2, 2]), 1, 2),
        dml.TopK1OperatorDesc: lambda: dml.TopK1OperatorDesc(T("INT8", [3, 2]), T("INT8", [1, 2]), T("UINT64", [1, 2]),
                                                             0, 1, "INCREASING"),
    }
    if desc_type in examples:
        return examples[desc_type]()   # type: ignore[no-any-return]
    if issubclass(desc_type, ElementWiseOperatorDesc):
        return element_wise_cases.example(desc_type)
    assert issubclass(desc_type, ActivationOperatorDesc), f"no example descriptor of {desc_type.__name__}"
    parameters = {name: 0.5 for name in desc_type.parameter_names()}
    x = T(F32, [2, 2])
    return desc_type(**parameters, input_tensor=x, output_tensor=x)


# ---------------------------------------------------------------------------------------------------------------------
# Template models: one per operator, every key the reader knows in it
# ---------------------------------------------------------------------------------------------------------------------


def tensor_json(tensor: dml.TensorDesc, wrapped: bool) -> dict[str, Any]:
    desc = {"Type": "BUFFER", "DataType": tensor.data_type.name, "Flags": ["NONE"] if not tensor.flags else
            tensor.flags.name, "DimensionCount": len(tensor.sizes), "Sizes": list(tensor.sizes),
            "Strides": list(tensor.strides) if tensor.strides is not None else _packed(tensor.sizes),
            "TotalTensorSizeInBytes": tensor.total_tensor_size_in_bytes,
            "GuaranteedBaseOffsetAlignment": tensor.guaranteed_base_offset_alignment}
    return {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": desc} if wrapped else desc


def _packed(sizes: tuple[int, ...]) -> list[int]:
    strides = [1] * len(sizes)
    for index in range(len(sizes) - 2, -1, -1):
        strides[index] = strides[index + 1] * sizes[index + 1]
    return strides


def desc_json(desc: dml.OperatorDesc, wrapped: bool) -> dict[str, Any]:
    """A descriptor as DxDispatch's JSON, with DML's field names (fields.py) and every count field."""
    result: dict[str, Any] = {}
    for item in fields_of(type(desc)):
        value = getattr(desc, item.python_name)
        if value is None:
            continue
        if item.kind in (Kind.TENSOR, Kind.OPTIONAL_TENSOR):
            result[item.dml_name] = tensor_json(value, wrapped)
        elif item.kind is Kind.TENSOR_ARRAY:
            result[item.dml_name] = [tensor_json(tensor, wrapped) for tensor in value]
        elif item.kind is Kind.UINT_ARRAY:
            result[item.dml_name] = list(value)
        elif item.kind is Kind.ENUM:
            result[item.dml_name] = value.name
        elif item.kind is Kind.SCALE_BIAS:
            result[item.dml_name] = {"Scale": value.scale, "Bias": value.bias}
        elif item.kind is Kind.SIZE_2D:
            result[item.dml_name] = {"Width": value.width, "Height": value.height}
        elif item.kind is Kind.OPERATOR:
            inner = desc_json(value, wrapped)
            name = value.OPERATOR_TYPE.dml_name
            result[item.dml_name] = {"Type": name, "Desc": inner} if wrapped else {"Type": name, **inner}
        else:
            result[item.dml_name] = value
        if item.count_name:
            result[item.count_name] = len(value)
    return result


def template(desc: dml.OperatorDesc, variant: int) -> dict[str, Any]:
    """A model that dispatches `desc` once, prints its outputs and writes one; `variant` alternates the spellings
    (desc/Desc, wrapped and inline tensor and operator descs, binding strings and objects)."""
    wrapped = variant % 2 == 1
    resources: dict[str, Any] = {}
    bindings: dict[str, Any] = {}
    outputs = []
    for index, (slot, tensor) in enumerate([*desc.input_slots(), *desc.output_slots()]):
        if tensor is None:
            continue
        name = f"r{index}"
        count = -(-tensor.total_tensor_size_in_bytes // tensor.data_type.element_size)
        is_output = index >= len(desc.input_slots())
        resources[name] = ({"initialValuesDataType": tensor.data_type.name, "initialValues": "deferred",
                            "sizeInBytes": tensor.total_tensor_size_in_bytes} if is_output else
                           {"initialValuesDataType": tensor.data_type.name,
                            "initialValues": {"valueCount": count, "value": 0}})
        if is_output:
            outputs.append(name)
        group = slot.split("[", 1)[0]
        binding: Any = name
        if not bindings:   # the first binding as an object with every key DxDispatch reads
            element = tensor.data_type.element_size
            binding = {"name": name, "elementOffset": 0, "elementCount": count, "elementSizeInBytes": element,
                       "elementStride": element, "format": "UNKNOWN", "counter": name, "counterOffsetBytes": 0,
                       "shape": [count]}
        if "[" in slot:
            bindings.setdefault(group, []).append(binding)
        else:
            bindings[group] = binding
    resources.update({
        "values": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2.5, "nan", "-inf"], "sizeInBytes": 20,
                   "initialValuesOffsetInBytes": 4},
        "sequence": {"initialValuesDataType": "UINT8", "initialValues": {"valueCount": 5, "valueStart": 10,
                                                                         "valueDelta": -1}},
        "floats": {"initialValuesDataType": "FLOAT16", "initialValues": {"valueCount": 3, "valueStart": 0.5,
                                                                         "valueDelta": 0.25}},
        "npy": {"initialValues": {"sourcePath": "data.npy"}},
        "raw": {"initialValuesDataType": "INT32", "initialValues": {"sourcePath": "data.bin"}},
    })
    desc_key = "Desc" if wrapped else "desc"
    return {
        "$schema": "opendml fuzzing",
        "resources": resources,
        "dispatchables": {"op": {"type": desc.OPERATOR_TYPE.dml_name if wrapped else desc.OPERATOR_TYPE.name,
                                 desc_key: desc_json(desc, wrapped), "executionFlags": ["NONE"],
                                 "bindings": {}, "dmlCompileType": "DmlCompileOp"}},
        "commands": [
            {"type": "dispatch", "dispatchable": "op", "bindings": bindings, "threadGroupCount": [1, 1, 1]},
            *({"type": "print", "resource": name, "verbose": False} for name in [*outputs, "values", "sequence"]),
            {"type": "writeFile", "resource": "sequence", "targetPath": "out.npy", "dimensions": [2, 4]},
        ],
    }


def owned_template() -> dict[str, Any]:
    """An OWNED_BY_DML input bound at initialization (the dispatchable's own bindings)."""
    document = template(dml.ReduceOperatorDesc("SUM", T(F32, [2, 3], flags="OWNED_BY_DML"), T(F32, [1, 3]), [0]), 0)
    document["dispatchables"]["op"]["bindings"] = {"InputTensor": "r0"}
    del document["commands"][0]["bindings"]["InputTensor"]
    document["commands"][0]["bindings"]["OutputTensor"] = "r1"
    return document


TEMPLATES: dict[str, dict[str, Any]] = {
    **{f"{operator_type.name}/{variant}": template(example_desc(desc_type), variant)
       for operator_type, desc_type in sorted(dml.OperatorDesc.registry.items()) for variant in (0, 1)},
    "owned": owned_template(),
}


def places(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a document: the root, each key's value, each array item."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from places(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from places(value, (*prefix, index))


PLACES: list[tuple[str, tuple[Any, ...]]] = [(name, place) for name, document in TEMPLATES.items()
                                             for place in places(document)]
KEY_PLACES = [(name, place) for name, place in PLACES if place and isinstance(place[-1], str)]

# ---------------------------------------------------------------------------------------------------------------------
# Hostile values, as JSON text (so that integers of any length and nesting of any depth can be written)
# ---------------------------------------------------------------------------------------------------------------------

HOSTILE_STRINGS = ["", " ", "x", "nan", "inf", "-inf", "+inf", "NaN", "Infinity", "1", "0x10", "-0", "deferred",
                   "FLOAT32", "UINT4", "UNKNOWN", "DML_TENSOR_DATA_TYPE_FLOAT16", "OWNED_BY_DML", "SUM", "NONE",
                   "BUFFER", "DmlCompileGraph", "DML_OPERATOR_REDUCE", "ACTIVATION_RELU", "r0", "r1", "op",
                   "dispatch", "print", "\x1b[2J\x1b[H", "a\nb", "\r", "\x00", "\x7f", "\x9b31m", "\u202e", "\u2028",
                   "\ud800", "\udfff\ud800", "\udcff", "\U0001f600", "x" * 100_000, "fifo.npy", "dir.npy",
                   "socket.bin", "missing.npy", "data.npy", "data.bin", "../secret.npy", "/etc/passwd.npy",
                   "out.npy", "../out.npy", "/tmp/opendml-fuzz-escape.npy"]

_INTEGERS = ["0", "-0", "1", "-1", "2", "3", "4", "255", "256", "-128", "-129", "65535", "65536", "2147483647",
             "2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
             "-9223372036854775809", "18446744073709551615", "18446744073709551616", "-18446744073709551617",
             "1" + "0" * 308, "1" + "0" * 309, "-" + "1" * 311, "1" * 4300, "1" * 4301, "-" + "9" * 5000,
             "7" * 100_000]
_FLOATS = ["0.0", "-0.0", "0.5", "-0.5", "1.0", "2.0", "1e3", "1E+2", "1.5e-7", "1e-400", "-1e-400", "1e308",
           "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "1e400", "-1e400", "3.4028234e38", "3.5e38",
           "65504.0", "65520.0", "1e39", "6e-8", "1.0000000000000001", "123456789012345678901234567890.0",
           "4294967296.0", "1e99999999999", "-1e-99999999999", "0." + "0" * 5000 + "1", "1" * 400 + ".5"]
_OTHERS = ["NaN", "Infinity", "-Infinity", "null", "true", "false", "[]", "{}", "[0]", "[[0]]", "[1, 2, 3]",
           "[null]", '["NONE"]', '["OWNED_BY_DML", "OWNED_BY_DML"]', "[0.5]", "[-1]", "[4294967296]",
           '{"a": 1}', '{"Type": "ACTIVATION_RELU"}', '{"Type": "REDUCE", "Desc": {}}', '{"name": "r0"}',
           '{"valueCount": 3, "value": 1}', '{"sourcePath": "fifo.npy"}', "[" + ", ".join(["0"] * 100_000) + "]",
           "[" + ", ".join(["1e400"] * 3) + "]", "[" + ", ".join(['"\\u001b[2J"'] * 3) + "]"]


def nested(depth: int, kind: str) -> str:
    return ('{"a": ' * depth + "0" + "}" * depth) if kind == "object" else ("[" * depth + "0" + "]" * depth)


_NESTING = [nested(depth, kind) for depth in (10, 63, 64, 65, 100, 990, 5000, 100_000) for kind in ("array", "object")]

HOSTILE: list[str] = [*_INTEGERS, *_FLOATS, *_OTHERS, *_NESTING, *(json.dumps(text) for text in HOSTILE_STRINGS)]
#: Hostile names for keys (resources, dispatchables, bind points, fields).
HOSTILE_KEYS = [text for text in HOSTILE_STRINGS if len(text) < 1000] + ["x" * 300, "resources", "OutputTensors[0]"]

_MARK = "\x00HOSTILE\x00"


def model_text(document: Any, place: tuple[Any, ...], value: str | None, key: str | None = None) -> str:
    """The document's JSON with `value` (JSON text) at `place`, or with the key at `place` renamed to `key`."""
    document = copy.deepcopy(document)
    if not place:
        return value if value is not None else json.dumps(document)
    parent = document
    for step in place[:-1]:
        parent = parent[step]
    if key is not None:
        parent[key] = parent.pop(place[-1])
        return json.dumps(document)
    parent[place[-1]] = _MARK
    return json.dumps(document).replace(json.dumps(_MARK), value or "null")


# ---------------------------------------------------------------------------------------------------------------------
# Running the command in-process
# ---------------------------------------------------------------------------------------------------------------------


def run_main(arguments: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of opendml.cli.main, failing a run that hangs (test_cli.run_cli)."""
    return run_cli(*arguments, seconds=HANG_SECONDS)


def check_answer(status: int, stdout: str, stderr: str, *, lines: int | None = 1) -> None:
    """Exit 0 with nothing on stderr, or exit 2 with `lines` lines on stderr, each `error: ...`; everything written
    printable and encodable."""
    assert status in (0, 2), (status, stderr[:2000])
    for text in (stdout, stderr):
        text.encode("utf-8")    # no lone surrogate reached the output
        assert all(line.isprintable() for line in text.splitlines()), f"unescaped output: {text[:2000]!r}"
    if status == 0:
        assert stderr == "", stderr[:2000]
        return
    assert stderr.startswith("error: ") and stderr.endswith("\n"), stderr[:2000]
    if lines is not None:
        assert stderr.count("\n") == lines, f"more than {lines} line(s) on stderr: {stderr[:2000]!r}"
    assert "Traceback" not in stderr


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The models' folder: data files, a FIFO, a directory and a socket named like data files; out/ for writeFile."""
    root = tmp_path_factory.mktemp("fuzz_json")
    np.save(root / "data.npy", np.arange(4, dtype=np.float32))
    np.arange(4, dtype=np.int32).tofile(root / "data.bin")
    os.mkfifo(root / "fifo.npy")
    (root / "dir.npy").mkdir()
    (root / "out").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "socket.bin"))
    yield root
    server.close()


def fuzz_one(folder: Path, text: str, command: str = "dispatch") -> tuple[int, str, str]:
    path = folder / "model.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    arguments = [command, str(path), "--max-memory", "64M"]
    if command == "dispatch":
        arguments += ["--output-path", str(folder / "out")]
    status, stdout, stderr = run_main(arguments)
    check_answer(status, stdout, stderr, lines=1 if command == "dispatch" else None)
    assert not Path("/tmp/opendml-fuzz-escape.npy").exists()
    if command == "validate" and status == 2:     # validate's first problem is the one a run stops at
        dispatched = run_main(["dispatch", *arguments[1:], "--output-path", str(folder / "out")])
        assert dispatched[::2] == (2, stderr.splitlines(keepends=True)[0]), (dispatched, stderr[:2000])
    return status, stdout, stderr


# ---------------------------------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------------------------------


def test_templates_cover_every_key() -> None:
    """Every key of the reader's tables and every field (and count) of every operator has a place in a template."""
    keys = {place[-1] for _, place in KEY_PLACES}
    tables = [reader.TOP_LEVEL_KEYS, reader.RESOURCE_KEYS, reader.CONSTANT_KEYS, reader.SEQUENCE_KEYS,
              reader.FILE_KEYS, reader.DISPATCHABLE_KEYS, reader.TENSOR_KEYS, reader.WRAPPED_KEYS,
              *reader.COMMAND_KEYS.values(), runner.BINDING_KEYS]
    for table in tables:
        assert table <= keys, sorted(table - keys)
    for operator_type, desc_type in dml.OperatorDesc.registry.items():
        desc = TEMPLATES[f"{operator_type.name}/0"]["dispatchables"]["op"]["desc"]
        for item in fields_of(desc_type):
            assert item.dml_name in desc, (operator_type.name, item.dml_name)
            assert item.count_name is None or item.count_name in desc, (operator_type.name, item.count_name)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_run(folder: Path, name: str) -> None:
    """Unmutated, every template is a valid model that runs: the places are reached."""
    status, stdout, stderr = fuzz_one(folder, json.dumps(TEMPLATES[name]))
    assert status == 0, stderr
    assert "Resource 'sequence': 10, 9, 8, 7, 6" in stdout
    assert np.load(folder / "out" / "out.npy").tolist() == [[10, 9, 8, 7], [6, 0, 0, 0]]


JSON_SETTINGS = settings(max_examples=JSON_EXAMPLES, deadline=None, database=None,
                         suppress_health_check=list(HealthCheck))


@JSON_SETTINGS
@given(place=st.sampled_from(PLACES), value=st.sampled_from(HOSTILE), validate=st.integers(0, 9))
def test_fuzz_json_values(folder: Path, place: tuple[str, tuple[Any, ...]], value: str, validate: int) -> None:
    name, where = place
    note(f"{name} at {where}: {value[:200]}")
    fuzz_one(folder, model_text(TEMPLATES[name], where, value), "validate" if validate == 0 else "dispatch")


@settings(JSON_SETTINGS, max_examples=max(50, JSON_EXAMPLES // 4))
@given(place=st.sampled_from(KEY_PLACES), key=st.sampled_from(HOSTILE_KEYS))
def test_fuzz_json_keys(folder: Path, place: tuple[str, tuple[Any, ...]], key: str) -> None:
    name, where = place
    note(f"{name}: {where} renamed {key[:100]!r}")
    fuzz_one(folder, model_text(TEMPLATES[name], where, None, key))


def renamed(document: Any, old: str, new: str) -> Any:
    """The document with the resource or dispatchable `old` named `new` everywhere (its key and every reference)."""
    if isinstance(document, dict):
        return {(new if key == old else key): renamed(value, old, new) for key, value in document.items()}
    if isinstance(document, list):
        return [renamed(value, old, new) for value in document]
    return new if document == old else document


#: (template, a resource or dispatchable name in it).
NAMES = [(name, resource) for name, document in TEMPLATES.items()
         for resource in [*document["resources"], *document["dispatchables"]]]


@settings(JSON_SETTINGS, max_examples=max(50, JSON_EXAMPLES // 4))
@given(name=st.sampled_from(NAMES), new=st.sampled_from(HOSTILE_KEYS))
def test_fuzz_json_names(folder: Path, name: tuple[str, str], new: str) -> None:
    """A resource or dispatchable renamed to a hostile name everywhere: the model still runs (or is refused in one
    line), and the name reaches print and --print-commands escaped."""
    template_name, old = name
    document = renamed(TEMPLATES[template_name], old, new)
    if new in TEMPLATES[template_name]["resources"] or new in TEMPLATES[template_name]["dispatchables"]:
        return   # a name the model already has: a different model, not a renamed one
    note(f"{template_name}: {old} renamed {new[:100]!r}")
    path = folder / "model.json"
    path.write_text(json.dumps(document), encoding="utf-8", errors="surrogatepass")
    status, stdout, stderr = run_main(["dispatch", str(path), "--print-commands", "--output-path",
                                       str(folder / "out")])
    check_answer(status, stdout, stderr)
    if status == 0 and any(command == {"type": "print", "resource": new, "verbose": False}
                           for command in document["commands"]):
        assert printable(f"Resource '{new}': ") in stdout


# -- the command line ---------------------------------------------------------------------------------------------

HOSTILE_ARGUMENTS = ["", " ", "0", "-0", "1", "2", "-1", "1.5", "1e3", "1e400", "-1e400", "inf", "-inf", "nan",
                     "Infinity", "1_000", "\u0663", "0x10", "4G", "1.5G", "512M", "1T", "99999999999999999999999T",
                     "0.1", "1e-30", "9" * 5000, "4294967295", "4294967296", "x" * 10_000, "\x1b[2J", "a\nb",
                     "\u202e", "\udcff", "\ud800", "cpu", "gpu", "5_2", "DML_FEATURE_LEVEL_5_2", "9_9", "REDUCE",
                     "--", "-", "/dev/null", "fifo.npy", "scratch"]


def _options() -> list[tuple[str, str]]:
    """(subcommand, option) for every option of every subcommand that takes a value, from the parser itself."""
    parser = build_parser()
    result = []
    for action in parser._actions:   # the subcommands
        for command, subparser in (getattr(action, "choices", None) or {}).items():
            if not isinstance(subparser, type(parser)):
                continue
            for option in subparser._actions:
                if option.option_strings and option.nargs != 0:
                    result.append((command, option.option_strings[0]))
    return result


OPTIONS = _options()


def test_every_option_is_fuzzed() -> None:
    assert {"--max-memory", "--feature-level", "-i", "-w", "--backend", "-a", "--output-path"} <= {
        option for _, option in OPTIONS}


def _argument(folder: Path, argument: str) -> str:
    """A hostile argument; "fifo.npy" and "scratch" name the FIFO and a folder in the models' folder."""
    return str(folder / argument) if argument in ("fifo.npy", "scratch") else argument


@pytest.mark.parametrize(("command", "option"), OPTIONS)
def test_fuzz_options(folder: Path, command: str, option: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hostile argument to the option: exit 0 or 2, one line (validate: one per problem), no traceback, no
    hang. (Run in a scratch folder: --output-path's hostile values are relative folders that writeFile creates.)"""
    (folder / "scratch").mkdir(exist_ok=True)
    monkeypatch.chdir(folder / "scratch")
    model = folder / "options.json"
    model.write_text(json.dumps(TEMPLATES["REDUCE/0"]))
    for argument in (_argument(folder, text) for text in HOSTILE_ARGUMENTS):
        positional = [] if command == "ops" else [str(model)]
        extra = ["--output-path", str(folder / "out")] if command == "dispatch" and option != "--output-path" else []
        arguments = [command, option, argument, *positional, *extra]
        if option in ("-i", "-w") and argument.isdecimal() and len(argument) < 20 and 100 < int(argument) < 2**32:
            # A valid count asks for that many dispatches (up to 2^32 - 1): parsed, not run.
            parsed = build_parser().parse_args(arguments)
            assert int(argument) in (parsed.dispatch_iterations, parsed.warmup_samples)
            continue
        try:
            check_answer(*run_main(arguments), lines=None if command == "validate" else 1)   # validate: every problem
        except AssertionError as error:
            raise AssertionError(f"{command} {option} {argument[:100]!r}: {error}") from None


@pytest.mark.parametrize("argument", HOSTILE_ARGUMENTS)
def test_fuzz_positional_arguments(folder: Path, argument: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model path and the operator name."""
    (folder / "scratch").mkdir(exist_ok=True)
    monkeypatch.chdir(folder / "scratch")
    argument = _argument(folder, argument)
    for arguments in (["dispatch", argument], ["validate", argument], ["ops", argument],
                      ["dispatch", str(folder / "data.npy"), argument]):
        check_answer(*run_main(arguments))
