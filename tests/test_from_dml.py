"""`OperatorDesc.from_dml` (issue 26): any registered operator's descriptor from DML-named fields in DxDispatch's JSON
form, through the one path the JSON model reader takes (model/descs.py), with the reader's messages; and the field
kinds the element-wise descriptors add: DML_SCALE_BIAS, DML_SCALAR_UNION (typed by the DataType field before it,
exact in its type) and optional nested operator descs. Golden values are worked out by hand."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.model import descs
from opendml.model.errors import ModelError
from opendml.model.fields import Kind, fields_of
from opendml.model.reader import read_operator_desc
from opendml.ops.activations import ActivationOperatorDesc
from opendml.ops.base import OperatorDesc
from opendml.ops.structs import ScalarValue, ScaleBias
from opendml.tensor import TensorDesc
from opendml.types import DataType, FeatureLevel, IsInfinityMode, OperatorType, RoundingMode

F32 = DataType.FLOAT32


def tensor(sizes: list[int], data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


ELU = {"InputTensor": tensor([3]), "OutputTensor": tensor([3]), "Alpha": 0.5}
REDUCE = {"Function": "DML_REDUCE_FUNCTION_SUM", "InputTensor": tensor([2, 3]), "OutputTensor": tensor([1, 3]),
          "AxisCount": 1, "Axes": [0]}
MVN1 = {"InputTensor": tensor([1, 1, 2, 2]), "ScaleTensor": None, "OutputTensor": tensor([1, 1, 2, 2]),
        "AxisCount": 2, "Axes": [2, 3], "NormalizeVariance": True, "Epsilon": 0.5,
        "FusedActivation": {"Type": "ACTIVATION_LEAKY_RELU", "Alpha": 0.25}}
JOIN = {"InputCount": 2, "InputTensors": [tensor([3]), {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": tensor([2])}],
        "OutputTensor": tensor([5]), "Axis": 0}
ARGMAX = {"InputTensor": tensor([4]), "OutputTensor": tensor([1], "UINT32"), "AxisCount": 1, "Axes": [0],
          "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}


# -- from_dml on the existing operators ------------------------------------------------------------------------------

def test_from_dml_builds_what_the_constructors_build() -> None:
    x3, x23, x4 = TensorDesc(F32, [3]), TensorDesc(F32, [2, 3]), TensorDesc(F32, [1, 1, 2, 2])
    assert dml.OperatorDesc.from_dml("DML_OPERATOR_ACTIVATION_ELU", ELU) == dml.ActivationEluOperatorDesc(
        0.5, input_tensor=x3, output_tensor=x3)
    assert dml.OperatorDesc.from_dml(OperatorType.REDUCE, REDUCE) == dml.ReduceOperatorDesc(
        dml.ReduceFunction.SUM, x23, TensorDesc(F32, [1, 3]), [0])
    assert dml.OperatorDesc.from_dml("MEAN_VARIANCE_NORMALIZATION1", MVN1) == \
        dml.MeanVarianceNormalization1OperatorDesc(x4, None, None, x4, [2, 3], True, 0.5,
                                                   dml.ActivationLeakyReluOperatorDesc(alpha=0.25))
    assert dml.OperatorDesc.from_dml("JOIN", JOIN) == dml.JoinOperatorDesc(
        [x3, TensorDesc(F32, [2])], TensorDesc(F32, [5]), 0)
    argmax = dml.OperatorDesc.from_dml("DML_OPERATOR_ARGMAX", ARGMAX)
    assert isinstance(argmax, dml.ArgMaxOperatorDesc) and argmax.axis_direction is dml.AxisDirection.DECREASING
    # a subclass builds its own operators
    assert isinstance(dml.ReduceOperatorDesc.from_dml("REDUCE", REDUCE), dml.ReduceOperatorDesc)


def test_a_fused_activation_may_be_wrapped_null_or_absent() -> None:
    wrapped = {**MVN1, "FusedActivation": {"Type": "DML_OPERATOR_ACTIVATION_LEAKY_RELU", "Desc": {"Alpha": 0.25}}}
    assert dml.OperatorDesc.from_dml("MEAN_VARIANCE_NORMALIZATION1", wrapped) == \
        dml.OperatorDesc.from_dml("MEAN_VARIANCE_NORMALIZATION1", MVN1)
    for spec in ({**MVN1, "FusedActivation": None}, {key: value for key, value in MVN1.items()
                                                     if key != "FusedActivation"}):
        desc = dml.OperatorDesc.from_dml("MEAN_VARIANCE_NORMALIZATION1", spec)
        assert isinstance(desc, dml.MeanVarianceNormalization1OperatorDesc) and desc.fused_activation is None


def test_from_dml_and_the_json_reader_share_one_path() -> None:
    """The same fields give equal descriptors, and the same problems the same messages, but for the root of the
    path (the reader's "dispatchables.x.desc", from_dml's operator name)."""
    cases = [
        ("ACTIVATION_ELU", ELU),
        ("REDUCE", REDUCE),
        ("JOIN", JOIN),
        ("ACTIVATION_ELU", {**ELU, "Alpha": "1.5"}),                          # a string for a FLOAT
        ("ACTIVATION_ELU", {**ELU, "Beta": 1}),                               # an unknown field
        ("REDUCE", {**REDUCE, "Function": "sum"}),                            # an enum's name in another case
        ("REDUCE", {**REDUCE, "AxisCount": 2}),                               # a count that disagrees
        ("ACTIVATION_ELU", {**ELU, "Alpha": 1e39}),                           # the descriptor's own check
        ("REDUCE", {key: value for key, value in REDUCE.items() if key != "Function"}),   # a missing field
        ("JOIN", {**JOIN, "InputTensors": [tensor([3]), tensor([2], "FLOAT")]}),
        ("MEAN_VARIANCE_NORMALIZATION1", {**MVN1, "FusedActivation": {"Type": "ACTIVATION_SIGMOD"}}),
    ]
    for index, (name, spec) in enumerate(cases):
        desc_type = OperatorDesc.registry[OperatorType[name]]
        try:
            expected: object = read_operator_desc("dispatchables.x.desc", desc_type, spec)
        except ModelError as error:
            expected = str(error).replace("dispatchables.x.desc", f"DML_OPERATOR_{name}", 1)
        try:
            got: object = dml.OperatorDesc.from_dml(name, spec)
        except dml.ValidationError as error:
            got = str(error)
        assert got == expected, name
        assert isinstance(got, OperatorDesc) == (index < 3)


@pytest.mark.parametrize(("operator", "spec", "message"), [
    ("ACTIVATION_ELU", {**ELU, "Alpha": "1.5"},
     r"^DML_OPERATOR_ACTIVATION_ELU\.Alpha: '1\.5'; it must be a number, \"nan\", \"inf\" or \"-inf\" \(FLOAT\)$"),
    ("ACTIVATION_ELU", {**ELU, "Alpha": 1e39},
     r"^DML_OPERATOR_ACTIVATION_ELU\.Alpha: 1e\+39; it must be a finite FLOAT \(magnitude at most 3\.40282e\+38\)$"),
    ("ACTIVATION_ELU", {**ELU, "Beta": 1},
     r"^DML_OPERATOR_ACTIVATION_ELU\.Beta: unknown field; expected one of Alpha, InputTensor, OutputTensor$"),
    ("REDUCE", {key: value for key, value in REDUCE.items() if key != "OutputTensor"},
     r"^DML_OPERATOR_REDUCE\.OutputTensor: is missing; DML_OPERATOR_REDUCE requires it$"),
    ("ACTIVATION_ELU", {**ELU, "InputTensor": tensor([3], "FLOAT")},
     r"^DML_OPERATOR_ACTIVATION_ELU\.InputTensor\.DataType: DataType is 'FLOAT'; it must be one of UNKNOWN, FLOAT32"),
    ("ACTIVATION_ELU", {**ELU, "InputTensor": {"DataType": "FLOAT32", "Sizes": [2**32]}},
     r"^DML_OPERATOR_ACTIVATION_ELU\.InputTensor\.Sizes\[0\]: 4294967296; it must be an integer in \[0, 2\^32\)$"),
    ("REDUCE", {**REDUCE, "Function": "DML_REDUCE_FUNCTION_TOTAL"},
     r"^DML_OPERATOR_REDUCE\.Function: ReduceFunction is 'DML_REDUCE_FUNCTION_TOTAL'; it must be one of ARGMAX"),
])
def test_bad_fields_give_the_readers_messages(operator: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        dml.OperatorDesc.from_dml(operator, spec)


def test_from_dml_names_a_bad_operator_type_or_fields() -> None:
    with pytest.raises(dml.ValidationError, match=r"^OperatorDesc\.from_dml: operator_type: 'DML_OPERATOR_ELU' is not "
                                                  r"an operator opendml implements; did you mean "
                                                  r"DML_OPERATOR_ACTIVATION_ELU"):
        dml.OperatorDesc.from_dml("DML_OPERATOR_ELU", ELU)
    with pytest.raises(dml.ValidationError, match=r"^OperatorDesc\.from_dml: operator_type: 35; it must be an "
                                                  r"operator opendml implements: an OperatorType or its name"):
        dml.OperatorDesc.from_dml(35, ELU)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=r"^ReduceOperatorDesc\.from_dml: operator_type: "
                                                  r"DML_OPERATOR_ACTIVATION_ELU is not a ReduceOperatorDesc"):
        dml.ReduceOperatorDesc.from_dml("ACTIVATION_ELU", ELU)
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ACTIVATION_ELU: fields are \[\]; they must be a "
                                                  r"dict of DML field names$"):
        dml.OperatorDesc.from_dml("ACTIVATION_ELU", [])  # type: ignore[arg-type]


# -- the new field kinds, on a descriptor made for the test (never registered) ---------------------------------------

@dataclass(frozen=True)
class Kinds(OperatorDesc):
    """Every kind the element-wise descriptors add, in a DML-like struct order."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    min_max_data_type: DataType
    min: ScalarValue
    max: ScalarValue
    rounding_mode: RoundingMode = RoundingMode.HALVES_TO_NEAREST_EVEN
    infinity_mode: IsInfinityMode = IsInfinityMode.EITHER
    scale_bias: ScaleBias | None = None
    fused_activation: ActivationOperatorDesc | None = None

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        pass


Kinds.OPERATOR_TYPE = OperatorType.ELEMENT_WISE_CLIP1   # set after the class: the registry does not list it
BASE = {"InputTensor": tensor([2]), "OutputTensor": tensor([2]), "MinMaxDataType": "FLOAT32", "Min": -1, "Max": 1}


def read(**fields: Any) -> Kinds:
    desc = descs.read_operator_desc("d", Kinds, {**BASE, **fields})
    assert isinstance(desc, Kinds)
    return desc


def refused(message: str, **fields: Any) -> None:
    with pytest.raises(ModelError, match=message):
        read(**fields)


def test_the_kinds_of_the_new_fields() -> None:
    assert Kinds not in OperatorDesc.registry.values()
    table = {item.dml_name: item for item in fields_of(Kinds)}
    assert [table[name].kind for name in ("Min", "Max", "ScaleBias", "FusedActivation", "RoundingMode")] == [
        Kind.SCALAR, Kind.SCALAR, Kind.SCALE_BIAS, Kind.OPERATOR, Kind.ENUM]
    assert table["Min"].type_field == "MinMaxDataType" and not table["Min"].optional
    assert table["ScaleBias"].optional and table["FusedActivation"].optional
    assert table["Max"].describe() == "Max: DML_SCALAR_UNION (of type MinMaxDataType)"
    assert table["ScaleBias"].describe() == "ScaleBias: DML_SCALE_BIAS (optional)"


def test_a_scale_bias_is_read_as_dxdispatch_writes_it() -> None:
    assert read().scale_bias is None
    assert read(ScaleBias=None).scale_bias is None
    assert read(ScaleBias={"Scale": 2, "Bias": 10}).scale_bias == ScaleBias(2.0, 10.0)
    assert read(ScaleBias={"Scale": 0.1, "Bias": -0.5}).scale_bias == ScaleBias(float(np.float32(0.1)), -0.5)
    refused(r"^d\.ScaleBias\.Bias: is missing$", ScaleBias={"Scale": 2})
    refused(r"^d\.ScaleBias\.Shift: unknown field; expected one of Bias, Scale$", ScaleBias={"Scale": 2, "Bias": 1,
                                                                                             "Shift": 0})
    refused(r'^d\.ScaleBias: must be a DML_SCALE_BIAS object \{"Scale": \.\.\., "Bias": \.\.\.\}; got an array$',
            ScaleBias=[2, 10])
    refused(r"^d\.ScaleBias\.Scale: inf; it must be a finite FLOAT \(magnitude at most 3\.40282e\+38\)$",
            ScaleBias={"Scale": "inf", "Bias": 0})
    refused(r"^d\.ScaleBias\.Bias: 1e\+39; it must be a finite FLOAT", ScaleBias={"Scale": 1, "Bias": 1e39})
    refused(r"^d\.ScaleBias\.Scale: True; it must be a number", ScaleBias={"Scale": True, "Bias": 0})


def test_scale_bias_holds_finite_float32_values() -> None:
    assert ScaleBias() == ScaleBias(1.0, 0.0)
    assert ScaleBias(1 / 3).scale == float(np.float32(1 / 3)) != 1 / 3
    with pytest.raises(dml.ValidationError, match=r"^DML_SCALE_BIAS: Scale is nan; it must be a finite FLOAT"):
        ScaleBias(float("nan"))
    with pytest.raises(dml.ValidationError, match=r"^DML_SCALE_BIAS: Bias is '1'; it must be a number \(FLOAT\)$"):
        ScaleBias(1.0, "1")  # type: ignore[arg-type]


@pytest.mark.parametrize(("data_type", "value", "expected"), [
    ("INT64", 2**63 - 1, 2**63 - 1),            # exact: no float64 round trip (which gives 2^63)
    ("INT64", -2**63, -2**63),
    ("UINT64", 2**64 - 1, 2**64 - 1),
    ("UINT64", {"UInt64": 2**53 + 1}, 2**53 + 1),
    ("INT8", -128, -128),
    ("INT32", {"Int32": -7}, -7),
    ("UINT8", 255, 255),
    ("FLOAT32", 0.1, float(np.float32(0.1))),   # rounded to the type
    ("FLOAT32", {"Float32": 2.5}, 2.5),
    ("FLOAT32", "-inf", float("-inf")),
    ("FLOAT64", 0.1, 0.1),
    ("FLOAT64", {"Float64": 1e300}, 1e300),
    ("FLOAT16", 2049, 2048.0),                  # FLOAT16 has 11 significant bits: 2049 is a tie, to even 2048
    ("FLOAT16", 2, 2.0),
    ("FLOAT16", {"UInt16": 0x3C00}, 1.0),       # the union holds a FLOAT16 as its bits (DxDispatch: UInt16)
    ("FLOAT16", {"UInt16": 0xC500}, -5.0),
])
def test_a_scalar_union_is_exact_in_its_type(data_type: str, value: Any, expected: int | float) -> None:
    desc = read(MinMaxDataType=data_type, Min=value)
    assert desc.min_max_data_type is DataType[data_type]
    assert desc.min == expected and type(desc.min) is type(expected)


@pytest.mark.parametrize(("data_type", "value", "message"), [
    ("INT64", 2**63, r"^d\.Min: 9223372036854775808; it must be an integer in \[-2\^63, 2\^63\) \(INT64\)$"),
    ("UINT8", -1, r"^d\.Min: -1; it must be an integer in \[0, 255\] \(UINT8\)$"),
    ("INT32", 1.0, r"^d\.Min: 1\.0; it must be an integer in \[-2\^31, 2\^31\) \(INT32\)$"),
    ("INT8", "1", r"^d\.Min: '1'; it must be an integer in \[-128, 127\] \(INT8\)$"),
    ("INT8", True, r"^d\.Min: True; it must be a number or an object \{'Int8': \.\.\.\} \(a DML_SCALAR_UNION of "
                   r"MinMaxDataType INT8\)$"),
    ("INT8", None, r"^d\.Min: None; it must be a number or an object"),
    ("FLOAT16", 65520, r"^d\.Min: 65520 is beyond FLOAT16's range; it must be a number of magnitude at most 65504"),
    ("FLOAT32", 1e39, r"^d\.Min: 1e\+39 is beyond FLOAT32's range"),
    ("FLOAT32", {"Float64": 1.0}, r"^d\.Min\.Float64: unknown field; expected one of Float32$"),
    ("FLOAT32", {}, r"^d\.Min\.Float32: is missing$"),
    ("FLOAT16", {"UInt16": 65536}, r"^d\.Min\.UInt16: 65536; it must be an integer in \[0, 2\^16\) \(UINT16: a "
                                   r"FLOAT16's bits\)$"),
    ("INT4", 1, r"^d\.Min: MinMaxDataType is INT4, which no DML_SCALAR_UNION member holds; it must be one of FLOAT16, "
                r"FLOAT32, FLOAT64, UINT8"),
])
def test_a_bad_scalar_union_is_refused_at_its_path(data_type: str, value: Any, message: str) -> None:
    refused(message, MinMaxDataType=data_type, Min=value)


def test_a_scalar_union_follows_the_data_type_read_before_it() -> None:
    spec = {key: value for key, value in BASE.items() if key != "MinMaxDataType"}
    with pytest.raises(ModelError, match=r"^d\.MinMaxDataType: is missing; DML_OPERATOR_ELEMENT_WISE_CLIP1 requires "
                                         r"it$"):
        descs.read_operator_desc("d", Kinds, spec)
    desc = read(MinMaxDataType="DML_TENSOR_DATA_TYPE_UINT64", Min=0, Max=2**64 - 1)
    assert (desc.min, desc.max) == (0, 2**64 - 1)


def test_the_new_enums_and_an_optional_operator_desc() -> None:
    assert [member.value for member in RoundingMode] == [0, 1, 2]        # DirectML.h's DML_ROUNDING_MODE
    assert [member.value for member in IsInfinityMode] == [0, 1, 2]      # ... and DML_IS_INFINITY_MODE
    desc = read(RoundingMode="DML_ROUNDING_MODE_TOWARD_ZERO", InfinityMode="NEGATIVE")
    assert desc.rounding_mode is RoundingMode.TOWARD_ZERO and desc.infinity_mode is IsInfinityMode.NEGATIVE
    assert read().rounding_mode is RoundingMode.HALVES_TO_NEAREST_EVEN and read().infinity_mode is IsInfinityMode.EITHER
    refused(r"^d\.RoundingMode: RoundingMode is 'DML_ROUNDING_MODE_UP'; it must be one of HALVES_TO_NEAREST_EVEN, "
            r"TOWARD_ZERO, TOWARD_INFINITY \(DML_ROUNDING_MODE_\*, or 0 to 2\)$", RoundingMode="DML_ROUNDING_MODE_UP")
    assert read().fused_activation is None and read(FusedActivation=None).fused_activation is None
    fused = read(FusedActivation={"Type": "ACTIVATION_ELU", "Alpha": 0.5}).fused_activation
    assert fused == dml.ActivationEluOperatorDesc(alpha=0.5)
    refused(r"^d\.FusedActivation: must be an operator desc object with Type; got an array$", FusedActivation=[])


# -- the element-wise descriptors (ops/elementwise.py) through the same path ------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"


def test_the_dxdispatch_samples_descs_build_through_from_dml() -> None:
    """Every dispatchable of DxDispatch's seven element-wise samples: from_dml gives the reader's descriptor."""
    names = ["dml_element_wise_add.json", "dml_element_wise_add1.json", "dml_element_wise_add_npy.json",
             "dml_element_wise_clip.json", "dml_element_wise_identity.json", "dml_owned_tensors.json",
             "dml_scalar_union_fp16.json"]
    built = {}
    for name in names:
        for key, spec in json.loads((SAMPLES / name).read_text())["dispatchables"].items():
            desc_type = OperatorDesc.registry[OperatorType.parse(spec["type"])]
            desc = dml.OperatorDesc.from_dml(spec["type"], spec["desc"])
            assert desc == read_operator_desc("desc", desc_type, spec["desc"])
            built[name, key] = desc
    identity = built["dml_element_wise_identity.json", "identity"]
    assert identity.scale_bias == ScaleBias(2.0, 10.0)                    # {"Scale": 2, "Bias": 10}
    clip1 = built["dml_scalar_union_fp16.json", "clip"]
    assert (clip1.min_max_data_type, clip1.min, clip1.max) == (DataType.FLOAT16, 2.0, 4.0)
    add1 = built["dml_element_wise_add1.json", "add"]
    assert add1.fused_activation == dml.ActivationEluOperatorDesc(alpha=0.5)   # {"Type": "ACTIVATION_ELU", ...}
    clip = built["dml_element_wise_clip.json", "clip"]
    assert (clip.min, clip.max, clip.scale_bias) == (-2.5, 2.5, None)


def element_wise(name: str, data_type: str = "FLOAT32", **fields: Any) -> Any:
    return dml.OperatorDesc.from_dml(name, {"InputTensor": tensor([2], data_type),
                                            "OutputTensor": tensor([2], data_type), **fields})


def test_element_wise_fields_by_dml_name() -> None:
    clip1 = element_wise("DML_OPERATOR_ELEMENT_WISE_CLIP1", "INT64", MinMaxDataType="INT64", Min=-2**63,
                         Max={"Int64": 2**63 - 1})
    assert (clip1.min, clip1.max) == (-2**63, 2**63 - 1) and type(clip1.min) is int
    clip1 = element_wise("ELEMENT_WISE_CLIP1", "UINT64", MinMaxDataType="UINT64", Min=2**53 + 1, Max=2**64 - 1)
    assert (clip1.min, clip1.max) == (2**53 + 1, 2**64 - 1)
    assert element_wise("ELEMENT_WISE_ROUND", RoundingMode="DML_ROUNDING_MODE_TOWARD_INFINITY").rounding_mode is \
        RoundingMode.TOWARD_INFINITY
    assert element_wise("ELEMENT_WISE_ROUND").rounding_mode is RoundingMode.HALVES_TO_NEAREST_EVEN
    is_inf = dml.OperatorDesc.from_dml("ELEMENT_WISE_IS_INFINITY", {
        "InputTensor": tensor([2]), "OutputTensor": tensor([2], "UINT8"), "InfinityMode": "POSITIVE"})
    assert is_inf.infinity_mode is IsInfinityMode.POSITIVE
    add1 = dml.OperatorDesc.from_dml("ELEMENT_WISE_ADD1", {"ATensor": tensor([2]), "BTensor": tensor([2]),
                                                           "OutputTensor": tensor([2]), "FusedActivation": None})
    assert add1.fused_activation is None
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ELEMENT_WISE_CLIP1\.Min: -129; it must be an "
                                                  r"integer in \[-128, 127\] \(INT8\)$"):
        element_wise("ELEMENT_WISE_CLIP1", "INT8", MinMaxDataType="INT8", Min=-129, Max=1)
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ELEMENT_WISE_IDENTITY\.ScaleBias\.Bias: is "
                                                  r"missing$"):
        element_wise("ELEMENT_WISE_IDENTITY", ScaleBias={"Scale": 2})
