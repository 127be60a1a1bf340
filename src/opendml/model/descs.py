"""Operator and tensor descriptors from DML-named fields, in DxDispatch's JSON form: the one path that both the
model reader (a dispatchable's "desc") and `OperatorDesc.from_dml` take.

A descriptor's fields are read by kind (fields.py): tensor descs as DxDispatch writes them ({"DataType": "FLOAT32",
"Sizes": [...], "Strides": ..., "Flags": ...}, or wrapped {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {...}}), enums
by DML's names, numbers exact for their type (values.py), nested operator descs ({"Type": "ACTIVATION_ELU",
"Alpha": 0.5}), DML_SCALE_BIAS ({"Scale": 2, "Bias": 10}) and DML_SCALAR_UNION values (a number, or an object naming
the union's member: {"Int64": -3}, {"UInt16": 15360} for a FLOAT16's bits, as DxDispatch's ParseDmlScalarUnion reads
them). Every problem raises ModelError with the path of the value at fault.

This module imports no operator: the descriptor classes it reads are handed to it (their registry, shared by every
OperatorDesc, finds a nested operator), so that ops/base.py can build `from_dml` on it.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from ..convert import UINT64_MAX, describe
from ..errors import DmlError
from ..ops.structs import ScaleBias, Size2D
from ..tensor import TensorDesc
from ..types import DataType, OperatorType, TensorFlags, parse_enum
from .document import child_path
from .errors import ModelError
from .fields import Field, Kind, fields_of
from .values import float_values, json_bool, json_integer, json_real, json_uint

#: The keys a tensor desc may hold, and a wrapped tensor desc or nested operator desc: {"Type": ..., "Desc": {...}}.
TENSOR_KEYS = frozenset({"Type", "DataType", "Flags", "DimensionCount", "Sizes", "Strides", "TotalTensorSizeInBytes",
                         "GuaranteedBaseOffsetAlignment"})
WRAPPED_KEYS = frozenset({"Type", "Desc"})
SCALE_BIAS_KEYS = frozenset({"Scale", "Bias"})
SIZE_2D_KEYS = frozenset({"Width", "Height"})
#: DML_SCALAR_UNION's member that holds a value of each data type (a FLOAT16 is held as its bits, in UInt16).
SCALAR_MEMBERS = {
    DataType.FLOAT16: "UInt16", DataType.FLOAT32: "Float32", DataType.FLOAT64: "Float64", DataType.UINT8: "UInt8",
    DataType.UINT16: "UInt16", DataType.UINT32: "UInt32", DataType.UINT64: "UInt64", DataType.INT8: "Int8",
    DataType.INT16: "Int16", DataType.INT32: "Int32", DataType.INT64: "Int64",
}

#: DML's prefix of an enum's names where it is not DML_ and the enum's name in capitals (RoundingMode:
#: DML_ROUNDING_MODE_).
ENUM_PREFIXES: dict[type[Any], str] = {DataType: "DML_TENSOR_DATA_TYPE_"}

DescClass = Any   # an OperatorDesc subclass (ops/base.py imports this module, so it is not named here)


def operator_class(registry: Mapping[OperatorType, DescClass], type_name: str, path: str,
                   fused_only: Mapping[OperatorType, DescClass] | None = None) -> DescClass:
    """The registered descriptor class of an operator's name (DML_OPERATOR_REDUCE or REDUCE); with `fused_only`, also
    the classes that exist only as a FusedActivation (GEMM's SOFTMAX and SOFTMAX1)."""
    try:
        operator_type = parse_enum(OperatorType, type_name, "DML_OPERATOR_")
    except DmlError:
        operator_type = None
    desc_type = registry.get(operator_type) if operator_type is not None else None
    if desc_type is None and fused_only is not None and operator_type is not None:
        desc_type = fused_only.get(operator_type)
    if desc_type is None:
        names = sorted(kind.dml_name for kind in registry)
        raise ModelError(path, f"{describe(type_name)} is not an operator opendml implements{_guess(type_name, names)}"
                         f" (`opendml ops` lists the {len(names)} it does)")
    return desc_type


def _guess(name: str, names: list[str]) -> str:
    """"; did you mean X?" for the operators whose names are closest to `name` (each name compared without its
    DML_OPERATOR_ prefix, and an activation's without ACTIVATION_ too, as `name` is written), or nothing."""
    if len(name) > 100:        # no operator's name is that long; difflib's time grows with it
        return ""
    aliases: dict[str, str] = {}
    for full in names:
        short = full.removeprefix("DML_OPERATOR_")
        aliases.setdefault(short, full)
        aliases.setdefault(short.removeprefix("ACTIVATION_"), full)
    written = name.strip().upper().removeprefix("DML_OPERATOR_")
    close = difflib.get_close_matches(written, aliases, n=6, cutoff=0.6)
    found = list(dict.fromkeys(aliases[alias] for alias in close))[:3]
    return f"; did you mean {' or '.join(found)}?" if found else ""


def read_operator_desc(path: str, desc_type: DescClass, spec: dict[str, Any], *, fused: bool = False) -> Any:
    """A descriptor of `desc_type` from its DML-named fields (`spec`); `path` names `spec` in messages. `fused`: a
    nested FusedActivation, whose tensors are absent (None), as DxDispatch reads it (the fusing operator's tensors
    carry the data); one given anyway is read, for the descriptor's rules to judge."""
    fields = fields_of(desc_type)
    known = {item.dml_name for item in fields} | {item.count_name for item in fields if item.count_name}
    no_unknown(spec, path, known)
    kwargs: dict[str, Any] = {}
    for item in fields:
        item_path = f"{path}.{item.dml_name}"
        if item.dml_name not in spec:
            if item.optional or (fused and item.kind is Kind.TENSOR):
                if not item.has_default:  # an optional tensor or operator left out of the JSON: DML's null
                    kwargs[item.python_name] = None
                continue
            raise ModelError(item_path, f"is missing; {desc_type.OPERATOR_TYPE.dml_name} requires it")
        kwargs[item.python_name] = _field_value(desc_type, item, item_path, spec[item.dml_name], kwargs)
        if item.count_name:
            count_path = f"{path}.{item.count_name}"
            count = json_uint(require(spec, item.count_name, path, int), count_path)
            if count != len(spec[item.dml_name]):
                raise ModelError(count_path, f"is {count} but {item.dml_name} has {len(spec[item.dml_name])} "
                                 f"entries")
    try:
        return desc_type(**kwargs)
    except DmlError as error:
        raise located(path, error) from None


def _signed(desc_type: DescClass, name: str) -> bool:
    """Whether the dataclass field `name` is marked a signed DML INT (metadata kind "INT")."""
    return any(item.name == name and item.metadata.get("kind") == "INT"
               for item in dataclasses.fields(cast(Any, desc_type)))


def _field_value(desc_type: DescClass, item: Field, path: str, value: Any, read: Mapping[str, Any]) -> Any:
    """A desc field's JSON value, converted for the field's kind (fields.py); the descriptor checks the rest. `read`
    holds the fields read before it (a scalar union's data type)."""
    if item.kind in (Kind.TENSOR, Kind.OPTIONAL_TENSOR):
        return None if value is None else read_tensor_desc(path, value)
    if item.kind is Kind.TENSOR_ARRAY:
        expect(value, list, path, "an array of tensor descs")
        return [read_tensor_desc(f"{path}[{index}]", entry) for index, entry in enumerate(value)]
    if item.kind is Kind.UINT_ARRAY:
        expect(value, list, path, "an array of integers")
        if _signed(desc_type, item.python_name):   # a DML INT array (SLICE1's InputWindowStrides)
            return [json_integer(entry, f"{path}[{index}]", -2**31, 2**31 - 1, "INT") for index, entry in
                    enumerate(value)]
        return [json_uint(entry, f"{path}[{index}]") for index, entry in enumerate(value)]
    if item.kind is Kind.UINT:
        return json_uint(value, path)
    if item.kind is Kind.INT:
        return json_integer(value, path, -2**31, 2**31 - 1, "INT")
    if item.kind is Kind.FLOAT:
        return json_real(value, path)
    if item.kind is Kind.BOOL:
        return json_bool(value, path)
    if item.kind is Kind.ENUM:
        assert item.enum_type is not None
        prefix = ENUM_PREFIXES.get(item.enum_type) or "DML_" + "".join(
            "_" + c if c.isupper() else c.upper() for c in item.enum_type.__name__).lstrip("_") + "_"
        try:
            return parse_enum(item.enum_type, value, prefix)
        except DmlError as error:
            raise ModelError(path, str(error)) from None
    if item.kind is Kind.SCALE_BIAS:
        return None if value is None else read_scale_bias(path, value)
    if item.kind is Kind.SIZE_2D:
        return read_size_2d(path, value)
    if item.kind is Kind.SCALAR:
        assert item.type_field is not None
        type_field = next(field for field in fields_of(desc_type) if field.dml_name == item.type_field)
        return read_scalar(path, value, read[type_field.python_name], item.type_field)
    # Kind.OPERATOR: a nested operator (FusedActivation), inline {"Type": ..., fields} or {"Type": ..., "Desc": {}}
    if value is None:
        return None
    expect(value, dict, path, "an operator desc object with Type")
    type_name = require(value, "Type", path, str)
    nested_type = operator_class(desc_type.registry, type_name, f"{path}.Type",
                                 getattr(desc_type, "fused_only", None))
    if "Desc" in value:
        no_unknown(value, path, WRAPPED_KEYS)
        return read_operator_desc(f"{path}.Desc", nested_type, require(value, "Desc", path, dict), fused=True)
    return read_operator_desc(path, nested_type, {key: entry for key, entry in value.items() if key != "Type"},
                              fused=True)


def read_scale_bias(path: str, value: Any) -> ScaleBias:
    """DML_SCALE_BIAS: {"Scale": ..., "Bias": ...}, both FLOAT and both required, as DxDispatch reads it."""
    expect(value, dict, path, 'a DML_SCALE_BIAS object {"Scale": ..., "Bias": ...}')
    no_unknown(value, path, SCALE_BIAS_KEYS)
    scale = json_real(require(value, "Scale", path, object), f"{path}.Scale")
    bias = json_real(require(value, "Bias", path, object), f"{path}.Bias")
    try:
        return ScaleBias(scale, bias)
    except DmlError as error:
        raise located(path, error) from None


def read_size_2d(path: str, value: Any) -> Size2D:
    """DML_SIZE_2D: {"Width": ..., "Height": ...}, both UINT and both required (UPSAMPLE_2D's ScaleSize)."""
    expect(value, dict, path, 'a DML_SIZE_2D object {"Width": ..., "Height": ...}')
    no_unknown(value, path, SIZE_2D_KEYS)
    width = json_uint(require(value, "Width", path, object), f"{path}.Width")
    height = json_uint(require(value, "Height", path, object), f"{path}.Height")
    return Size2D(width, height)


def read_scalar(path: str, value: Any, data_type: DataType, type_field: str) -> int | float:
    """A DML_SCALAR_UNION of `data_type` (the value of the field `type_field`): a JSON number, or an object naming
    the union's member for the type ({"Int64": -3}; a FLOAT16 as its bits, {"UInt16": 15360}). An int for the
    integer types, exact (INT64 and UINT64 included); a float rounded to the float types, never beyond their range."""
    member = SCALAR_MEMBERS.get(data_type)
    if member is None:
        raise ModelError(path, f"{type_field} is {data_type.name}, which no DML_SCALAR_UNION member holds; it must "
                         f"be one of {', '.join(type_.name for type_ in SCALAR_MEMBERS)}")
    if isinstance(value, dict):
        no_unknown(value, path, frozenset({member}))
        inner_path = child_path(path, member)
        inner = require(value, member, path, object)
        if data_type is DataType.FLOAT16:
            bits = json_integer(inner, inner_path, 0, 2**16 - 1, "UINT16: a FLOAT16's bits")
            return float(np.array(bits, np.uint16).view(np.float16))
        return _scalar_number(inner_path, inner, data_type)
    if isinstance(value, (list, bool)) or value is None:
        raise ModelError(path, f"{describe(value)}; it must be a number or an object {{{member!r}: ...}} (a "
                         f"DML_SCALAR_UNION of {type_field} {data_type.name})")
    return _scalar_number(path, value, data_type)


def _scalar_number(path: str, value: Any, data_type: DataType) -> int | float:
    if data_type.is_float:
        real = json_real(value, path, data_type.name)
        narrowed = float_values(np.array([real]), data_type, lambda index: (path, describe(value)))
        return float(narrowed[0])
    info = np.iinfo(data_type.numpy_dtype)
    return json_integer(value, path, int(info.min), int(info.max), data_type.name)


def read_tensor_desc(path: str, spec: Any) -> TensorDesc:
    expect(spec, dict, path, "a tensor desc object")
    if "Desc" in spec:  # the wrapped form {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {...}}
        no_unknown(spec, path, WRAPPED_KEYS)
        _tensor_type(spec.get("Type", "BUFFER"), f"{path}.Type")
        return read_tensor_desc(f"{path}.Desc", spec["Desc"])
    no_unknown(spec, path, TENSOR_KEYS)
    _tensor_type(spec.get("Type", "BUFFER"), f"{path}.Type")
    data_type = read_data_type(require(spec, "DataType", path, str), f"{path}.DataType")
    sizes = require(spec, "Sizes", path, list)
    sizes = [json_uint(size, f"{path}.Sizes[{index}]") for index, size in enumerate(sizes)]
    if "DimensionCount" in spec and json_uint(spec["DimensionCount"], f"{path}.DimensionCount") != len(sizes):
        raise ModelError(f"{path}.DimensionCount", f"is {spec['DimensionCount']} but Sizes has {len(sizes)} values")
    strides = spec.get("Strides")
    if strides is not None:
        expect(strides, list, f"{path}.Strides", "an array of integers")
        strides = [json_uint(stride, f"{path}.Strides[{index}]") for index, stride in enumerate(strides)]
    try:
        flags = TensorFlags.parse(spec.get("Flags", "NONE"))
    except DmlError as error:
        raise ModelError(f"{path}.Flags", str(error)) from None
    total = spec.get("TotalTensorSizeInBytes", 0)
    total = json_uint(total, f"{path}.TotalTensorSizeInBytes", UINT64_MAX) or None
    alignment = json_uint(spec.get("GuaranteedBaseOffsetAlignment", 0), f"{path}.GuaranteedBaseOffsetAlignment")
    try:
        return TensorDesc(data_type, sizes, strides, flags=flags, total_tensor_size_in_bytes=total,  # type: ignore[arg-type]
                          guaranteed_base_offset_alignment=alignment)
    except DmlError as error:
        raise located(path, error) from None


def _tensor_type(value: Any, path: str) -> None:
    if value not in ("BUFFER", "DML_TENSOR_TYPE_BUFFER"):
        raise ModelError(path, f"{describe(value)} is not a tensor type opendml supports (BUFFER)")


# -- small checks ------------------------------------------------------------------------------------------------------


def located(path: str, error: DmlError) -> ModelError:
    """A descriptor error placed at its JSON path: "OP (Function X): Axes[0] is 5; ..." -> path.Axes[0]."""
    message = str(error)
    _, separator, rest = message.partition("): ") if "): " in message else message.partition(": ")
    text = rest if separator else message
    first, _, remainder = text.partition(" ")
    if first[:1].isupper() and all(part[:1].isupper() for part in first.replace("]", "").split(".") if part):
        field_path = first.replace("TensorDesc.", "")
        return ModelError(f"{path}.{field_path}", remainder.removeprefix("is "))
    return ModelError(path, text)


def read_data_type(value: Any, path: str) -> DataType:
    """A data type's DML name (FLOAT32 or DML_TENSOR_DATA_TYPE_FLOAT32); NumPy's names are not DxDispatch's."""
    if not isinstance(value, str):
        raise ModelError(path, f"{describe(value)}; it must be a data type name, e.g. FLOAT32")
    try:
        return parse_enum(DataType, value, "DML_TENSOR_DATA_TYPE_")
    except DmlError as error:
        raise ModelError(path, str(error)) from None


def expect(value: Any, kind: type | tuple[type, ...], path: str, what: str) -> None:
    if not isinstance(value, kind):
        raise ModelError(path, f"must be {what}; got {json_kind(type(value).__name__)}")


def require(spec: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...]) -> Any:
    where = child_path(path, key)
    if key not in spec:
        raise ModelError(where, "is missing")
    value = spec[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ModelError(where, f"must be {json_kind(names)}; got {json_kind(type(value).__name__)}")
    return value


def json_kind(python_names: str) -> str:
    for python, json_name in (("dict", "an object"), ("list", "an array"), ("str", "a string"), ("int", "an integer"),
                              ("float", "a number"), ("bool", "a boolean"), ("NoneType", "null")):
        python_names = python_names.replace(python, json_name)
    return python_names


def no_unknown(spec: Mapping[str, Any], path: str, known: frozenset[str] | set[str]) -> None:
    for key in spec:
        if key not in known:
            raise ModelError(child_path(path, key), f"unknown field; expected one of {', '.join(sorted(known))}")
