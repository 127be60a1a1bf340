"""Reads a DxDispatch JSON model into resources, operator descriptors and commands (DIGEST 4).

Every problem raises ModelError with the JSON path of the value at fault, e.g.
`dispatchables.sum.desc.Axes[0]: 5 is out of range ...`. Nothing here runs an operator.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DmlError
from ..ops.base import OperatorDesc
from ..tensor import TensorDesc
from ..types import DataType, ExecutionFlags, OperatorType, TensorFlags, parse_enum
from .fields import Field, Kind, fields_of


class ModelError(DmlError):
    """A model file breaks a rule; `path` is the JSON path of the value at fault."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


@dataclass
class Resource:
    name: str
    data_type: DataType
    data: np.ndarray[Any, np.dtype[np.uint8]]   # the whole buffer, sizeInBytes long


@dataclass
class Dispatchable:
    name: str
    desc: OperatorDesc
    execution_flags: ExecutionFlags
    initializer_bindings: dict[str, Any]        # bind point -> JSON binding (OWNED_BY_DML inputs)


@dataclass
class Command:
    path: str
    kind: str                                   # "dispatch", "print" or "writeFile"
    spec: dict[str, Any]


@dataclass
class Model:
    path: Path
    resources: dict[str, Resource] = field(default_factory=dict)
    dispatchables: dict[str, Dispatchable] = field(default_factory=dict)
    commands: list[Command] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    """What a model may ask for: memory (bytes, all resources together) and files outside its folder."""

    max_memory: int
    allow_outside_paths: bool = False


def default_max_memory() -> int:
    """A quarter of the machine's memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ModelError("", f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ModelError("", f"{path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelError("", f"{path} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
                         ) from None
    except RecursionError:
        raise ModelError("", f"{path} nests too deeply") from None


def read_model(path: Path, limits: Limits, *, collect: list[ModelError] | None = None) -> Model:
    """Parses a model file. With `collect`, problems in dispatchables are gathered there and reading goes on
    (for `opendml validate`); otherwise the first problem raises."""
    document = load_json(path)
    _expect(document, dict, "", "the model")
    unknown = set(document) - {"$schema", "resources", "dispatchables", "commands"}
    if unknown:
        raise ModelError(sorted(unknown)[0], "unknown top-level key; expected resources, dispatchables, commands")
    model = Model(path=path)
    resources = _require(document, "resources", "", dict)
    used = 0
    for name, spec in resources.items():
        resource = read_resource(f"resources.{name}", name, spec, path.parent, limits, limits.max_memory - used)
        used += resource.data.size
        model.resources[name] = resource
    for name, spec in _require(document, "dispatchables", "", dict).items():
        try:
            model.dispatchables[name] = read_dispatchable(f"dispatchables.{name}", name, spec)
        except ModelError as error:
            if collect is None:
                raise
            collect.append(error)
    for index, spec in enumerate(_require(document, "commands", "", list)):
        model.commands.append(read_command(f"commands[{index}]", spec, model))
    return model


# -- resources -----------------------------------------------------------------------------------------------------


def read_resource(path: str, name: str, spec: Any, folder: Path, limits: Limits, memory_left: int) -> Resource:
    _expect(spec, dict, path, "a resource")
    _no_unknown(spec, path, {"initialValuesDataType", "initialValues", "sizeInBytes", "initialValuesOffsetInBytes"})
    values_spec = _require(spec, "initialValues", path, (list, dict, str))
    type_spec = spec.get("initialValuesDataType")
    data_type = None if type_spec is None else _data_type(type_spec, f"{path}.initialValuesDataType")
    if data_type in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4):  # before any file is read as this type
        raise ModelError(f"{path}.initialValuesDataType", f"{data_type.name} resources are not supported")
    values: np.ndarray[Any, Any] | None
    if values_spec == "deferred":
        values = None
    elif isinstance(values_spec, str):
        raise ModelError(f"{path}.initialValues", f"{values_spec!r} is not an initializer; use an array, an object "
                         f"or \"deferred\"")
    elif isinstance(values_spec, dict) and "sourcePath" in values_spec:
        values = _read_file(f"{path}.initialValues", values_spec, folder, limits, data_type, memory_left)
        data_type = DataType.parse(values.dtype)
    else:
        if data_type is None:
            raise ModelError(f"{path}.initialValuesDataType", "is missing; it is required unless the values come "
                             "from a .npy file")
        values = _values(f"{path}.initialValues", values_spec, data_type, memory_left)
    if data_type is None:
        raise ModelError(f"{path}.initialValuesDataType", "is missing; a deferred resource needs a data type")
    if data_type in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4):
        raise ModelError(f"{path}.initialValuesDataType", f"{data_type.name} resources are not supported")
    offset = _uint(spec.get("initialValuesOffsetInBytes", 0), f"{path}.initialValuesOffsetInBytes", limit=2**64 - 1)
    data_bytes = 0 if values is None else values.nbytes
    needed = offset + data_bytes
    if "sizeInBytes" in spec:
        size = _uint(spec["sizeInBytes"], f"{path}.sizeInBytes", limit=2**64 - 1)
        if size < needed:
            raise ModelError(f"{path}.sizeInBytes", f"{size} is smaller than the initial data ({needed} bytes "
                             f"including the offset)")
    elif values is None:
        raise ModelError(f"{path}.sizeInBytes", "is missing; a deferred resource needs a size")
    else:
        size = (needed + 3) & ~3
    if size > memory_left:
        raise ModelError(f"{path}.sizeInBytes", f"{size} bytes would exceed the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory)")
    buffer = np.zeros(size, np.uint8)
    if values is not None:
        buffer[offset:offset + data_bytes] = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    return Resource(name, data_type, buffer)


def _values(path: str, spec: Any, data_type: DataType, memory_left: int) -> np.ndarray[Any, Any]:
    dtype = data_type.numpy_dtype
    if isinstance(spec, list):
        items = [_number(item, f"{path}[{index}]", data_type) for index, item in enumerate(spec)]
        return _to_dtype(items, dtype, path)
    _no_unknown(spec, path, {"valueCount", "value", "valueStart", "valueDelta"})
    count = _uint(_require(spec, "valueCount", path, int), f"{path}.valueCount")
    if count * dtype.itemsize > memory_left:
        raise ModelError(f"{path}.valueCount", f"{count} values would exceed the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory)")
    if "value" in spec:
        if "valueStart" in spec or "valueDelta" in spec:
            raise ModelError(path, "value and valueStart/valueDelta are mutually exclusive")
        value = _number(spec["value"], f"{path}.value", data_type)
        return _to_dtype([value], dtype, f"{path}.value").repeat(count)
    if "valueStart" in spec or "valueDelta" in spec:
        start = _number(_require(spec, "valueStart", path, (int, float, str)), f"{path}.valueStart", data_type)
        delta = _number(_require(spec, "valueDelta", path, (int, float, str)), f"{path}.valueDelta", data_type)
        if data_type.is_float:
            with np.errstate(over="ignore", invalid="ignore"):  # beyond the type's range: inf, as in a list
                sequence = np.float64(start) + np.arange(count, dtype=np.float64) * np.float64(delta)
                return sequence.astype(dtype)
        last = int(start) + (count - 1) * int(delta) if count else int(start)
        _to_dtype([int(start), last], dtype, path)  # range check of the ends
        return (np.arange(count, dtype=np.int64 if dtype.kind == "i" else np.uint64) * int(delta)
                + int(start)).astype(dtype)
    raise ModelError(path, "needs value, valueStart/valueDelta or sourcePath")


def _to_dtype(items: list[float | int], dtype: np.dtype[Any], path: str) -> np.ndarray[Any, Any]:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        for index, item in enumerate(items):
            if not isinstance(item, int) or not info.min <= item <= info.max:
                raise ModelError(f"{path}[{index}]" if len(items) > 1 else path,
                                 f"{item!r} does not fit {dtype} ({info.min} to {info.max})")
        return np.array(items, dtype=dtype)
    with np.errstate(over="ignore"):
        return np.array(items, dtype=np.float64).astype(dtype)


def _number(value: Any, path: str, data_type: DataType) -> float | int:
    if isinstance(value, str) and data_type.is_float:
        special = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "+inf": math.inf}
        if value.strip().lower() in special:
            return special[value.strip().lower()]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        allowed = "a number, \"nan\", \"inf\" or \"-inf\"" if data_type.is_float else "an integer"
        raise ModelError(path, f"{value!r} is not {allowed}")
    if not data_type.is_float and isinstance(value, float):
        if not value.is_integer():
            raise ModelError(path, f"{value!r} is not an integer, as {data_type.name} needs")
        return int(value)
    return value


def _read_file(path: str, spec: dict[str, Any], folder: Path, limits: Limits, data_type: DataType | None,
               memory_left: int) -> np.ndarray[Any, Any]:
    _no_unknown(spec, path, {"sourcePath"})
    source = _require(spec, "sourcePath", path, str)
    file_path = resolve_path(f"{path}.sourcePath", source, folder, limits)
    suffix = file_path.suffix.lower()
    try:
        size = file_path.stat().st_size
    except OSError as error:
        raise ModelError(f"{path}.sourcePath", f"cannot read {source}: {error.strerror or error}") from None
    if size > memory_left:
        raise ModelError(f"{path}.sourcePath", f"{source} is {size} bytes, over the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory; raise it with --max-memory)")
    try:
        if suffix == ".npy":
            _check_npy_header(f"{path}.sourcePath", source, file_path, size, memory_left)
            array: np.ndarray[Any, Any] = np.load(file_path, allow_pickle=False)
            if array.dtype.kind not in "iuf":
                raise ModelError(f"{path}.sourcePath", f"{source} holds {array.dtype} data; only numeric arrays load")
            array = array.astype(array.dtype.newbyteorder("="))
            file_type = DataType.parse(array.dtype)
            if data_type is not None and file_type != data_type:
                raise ModelError(f"{path}.sourcePath", f"{source} holds {file_type.name} data but "
                                 f"initialValuesDataType is {data_type.name}")
            return array.reshape(-1)
        if suffix in (".dat", ".bin"):
            if data_type is None:
                raise ModelError(path.rsplit(".", 1)[0] + ".initialValuesDataType",
                                 f"is missing; {source} is raw bytes and needs it")
            raw = np.fromfile(file_path, dtype=np.uint8)
            if raw.size % data_type.element_size:
                raise ModelError(f"{path}.sourcePath", f"{source} holds {raw.size} bytes, not a whole number of "
                                 f"{data_type.name} elements")
            return raw.view(data_type.numpy_dtype)
    except (ValueError, EOFError) as error:  # np.load refusing a pickled, malformed or truncated file
        raise ModelError(f"{path}.sourcePath", f"cannot load {source}: {error or 'the file is truncated'}") from None
    except OSError as error:
        raise ModelError(f"{path}.sourcePath", f"cannot read {source}: {error.strerror or error}") from None
    raise ModelError(f"{path}.sourcePath", f"{source}: only .npy, .dat and .bin files are supported")


def _check_npy_header(path: str, source: str, file_path: Path, file_size: int, memory_left: int) -> None:
    """Reads only the header of a .npy file: a numeric array whose data the file holds and the memory limit allows.

    np.load allocates what the header declares before it reads the data, so a 100-byte file declaring 10^10 elements
    would allocate 40 GB: this check comes first.
    """
    with open(file_path, "rb") as stream:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
        data_start = stream.tell()
    if dtype.hasobject:
        raise ModelError(path, f"cannot load {source}: it holds Python objects, which only unpickling could load "
                         f"(opendml never unpickles)")
    if dtype.kind not in "iuf":
        raise ModelError(path, f"{source} holds {dtype} data; only numeric arrays load")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > memory_left:
        raise ModelError(path, f"{source} declares {nbytes} bytes of data, over the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory; raise it with --max-memory)")
    if nbytes > file_size - data_start:
        raise ModelError(path, f"{source} declares {nbytes} bytes of data but holds {max(file_size - data_start, 0)}")


def resolve_path(path: str, name: str, folder: Path, limits: Limits) -> Path:
    """A file a model names: relative to the model's folder, and inside it unless explicitly allowed."""
    return resolve_inside(path, name, folder, limits.allow_outside_paths, "the model's folder")


def resolve_inside(path: str, name: str, folder: Path, allow_outside: bool, where: str) -> Path:
    """`name` resolved against `folder` (symbolic links followed); outside it only when allowed."""
    candidate = Path(name)
    try:
        resolved = (candidate if candidate.is_absolute() else folder / candidate).resolve()
    except (OSError, RuntimeError, ValueError) as error:  # a symbolic-link loop, a NUL in the name
        raise ModelError(path, f"{name!r} is not a usable path ({error})") from None
    if not allow_outside and not resolved.is_relative_to(folder.resolve()):
        raise ModelError(path, f"{name} is outside {where}; pass --allow-outside-paths to allow it")
    return resolved


# -- dispatchables ---------------------------------------------------------------------------------------------------


def read_dispatchable(path: str, name: str, spec: Any) -> Dispatchable:
    _expect(spec, dict, path, "a dispatchable")
    _no_unknown(spec, path, {"type", "desc", "Desc", "executionFlags", "bindings", "dmlCompileType"})
    type_name = _require(spec, "type", path, str)
    desc_type = operator_class(type_name, f"{path}.type")
    if "desc" in spec and "Desc" in spec:
        raise ModelError(path, "has both desc and Desc; give one")
    desc_key = "desc" if "desc" in spec else "Desc"
    desc = read_operator_desc(f"{path}.{desc_key}", desc_type, _require(spec, desc_key, path, dict))
    flags_spec = spec.get("executionFlags", "NONE")
    try:
        flags = ExecutionFlags.parse(flags_spec)
    except DmlError as error:
        raise ModelError(f"{path}.executionFlags", str(error)) from None
    compile_type = spec.get("dmlCompileType", "DmlCompileOp")
    if compile_type not in ("DmlCompileOp", "DmlCompileGraph"):
        raise ModelError(f"{path}.dmlCompileType", f"{compile_type!r} must be DmlCompileOp or DmlCompileGraph")
    bindings = spec.get("bindings", {})
    _expect(bindings, dict, f"{path}.bindings", "an object")
    return Dispatchable(name, desc, flags, bindings)


def operator_class(type_name: str, path: str) -> type[OperatorDesc]:
    try:
        operator_type = parse_enum(OperatorType, type_name, "DML_OPERATOR_")
    except DmlError:
        operator_type = None
    desc_type = OperatorDesc.registry.get(operator_type) if operator_type is not None else None
    if desc_type is None:
        implemented = ", ".join(sorted(kind.dml_name for kind in OperatorDesc.registry))
        raise ModelError(path, f"{type_name!r} is not an operator opendml implements ({implemented})")
    return desc_type


def read_operator_desc(path: str, desc_type: type[OperatorDesc], spec: dict[str, Any]) -> OperatorDesc:
    fields = fields_of(desc_type)
    known = {item.dml_name for item in fields} | {item.count_name for item in fields if item.count_name}
    _no_unknown(spec, path, known)
    kwargs: dict[str, Any] = {}
    for item in fields:
        item_path = f"{path}.{item.dml_name}"
        if item.dml_name not in spec:
            if item.optional:
                if not item.has_default:  # an optional tensor or operator left out of the JSON: DML's null
                    kwargs[item.python_name] = None
                continue
            raise ModelError(item_path, f"is missing; {desc_type.OPERATOR_TYPE.dml_name} requires it")
        kwargs[item.python_name] = _field_value(item, item_path, spec[item.dml_name])
        if item.count_name:
            count_path = f"{path}.{item.count_name}"
            count = _uint(_require(spec, item.count_name, path, int), count_path)
            if count != len(spec[item.dml_name]):
                raise ModelError(count_path, f"is {count} but {item.dml_name} has {len(spec[item.dml_name])} "
                                 f"entries")
    try:
        return desc_type(**kwargs)
    except DmlError as error:
        raise located(path, error) from None


def _field_value(item: Field, path: str, value: Any) -> Any:
    if item.kind in (Kind.TENSOR, Kind.OPTIONAL_TENSOR):
        return None if value is None else read_tensor_desc(path, value)
    if item.kind is Kind.TENSOR_ARRAY:
        _expect(value, list, path, "an array of tensor descs")
        return [read_tensor_desc(f"{path}[{index}]", entry) for index, entry in enumerate(value)]
    if item.kind is Kind.UINT_ARRAY:
        _expect(value, list, path, "an array of integers")
        return [_uint(entry, f"{path}[{index}]") for index, entry in enumerate(value)]
    if item.kind is Kind.UINT:
        return _uint(value, path)
    if item.kind is Kind.INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ModelError(path, f"{value!r} is not an integer")
        return value
    if item.kind is Kind.FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ModelError(path, f"{value!r} is not a number")
        return float(value)
    if item.kind is Kind.BOOL:
        if not isinstance(value, bool):
            raise ModelError(path, f"{value!r} is not true or false")
        return value
    if item.kind is Kind.ENUM:
        assert item.enum_type is not None
        prefix = "DML_" + "".join("_" + c if c.isupper() else c.upper() for c in item.enum_type.__name__).lstrip("_")
        try:
            return parse_enum(item.enum_type, value, prefix + "_")
        except DmlError as error:
            raise ModelError(path, str(error)) from None
    # Kind.OPERATOR: a nested operator (FusedActivation), inline {"Type": ..., fields} or {"Type": ..., "Desc": {}}
    if value is None:
        return None
    _expect(value, dict, path, "an operator desc object with Type")
    type_name = _require(value, "Type", path, str)
    nested_type = operator_class(type_name, f"{path}.Type")
    if "Desc" in value:
        _no_unknown(value, path, {"Type", "Desc"})
        return read_operator_desc(f"{path}.Desc", nested_type, _require(value, "Desc", path, dict))
    return read_operator_desc(path, nested_type, {key: entry for key, entry in value.items() if key != "Type"})


def read_tensor_desc(path: str, spec: Any) -> TensorDesc:
    _expect(spec, dict, path, "a tensor desc object")
    if "Desc" in spec:  # the wrapped form {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {...}}
        _no_unknown(spec, path, {"Type", "Desc"})
        _tensor_type(spec.get("Type", "BUFFER"), f"{path}.Type")
        return read_tensor_desc(f"{path}.Desc", spec["Desc"])
    _no_unknown(spec, path, {"Type", "DataType", "Flags", "DimensionCount", "Sizes", "Strides",
                             "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"})
    _tensor_type(spec.get("Type", "BUFFER"), f"{path}.Type")
    data_type = _data_type(_require(spec, "DataType", path, str), f"{path}.DataType")
    sizes = _require(spec, "Sizes", path, list)
    sizes = [_uint(size, f"{path}.Sizes[{index}]") for index, size in enumerate(sizes)]
    if "DimensionCount" in spec and _uint(spec["DimensionCount"], f"{path}.DimensionCount") != len(sizes):
        raise ModelError(f"{path}.DimensionCount", f"is {spec['DimensionCount']} but Sizes has {len(sizes)} values")
    strides = spec.get("Strides")
    if strides is not None:
        _expect(strides, list, f"{path}.Strides", "an array of integers")
        strides = [_uint(stride, f"{path}.Strides[{index}]") for index, stride in enumerate(strides)]
    try:
        flags = TensorFlags.parse(spec.get("Flags", "NONE"))
    except DmlError as error:
        raise ModelError(f"{path}.Flags", str(error)) from None
    total = spec.get("TotalTensorSizeInBytes", 0)
    total = _uint(total, f"{path}.TotalTensorSizeInBytes", limit=2**64 - 1) or None
    alignment = _uint(spec.get("GuaranteedBaseOffsetAlignment", 0), f"{path}.GuaranteedBaseOffsetAlignment")
    try:
        return TensorDesc(data_type, sizes, strides, flags=flags, total_tensor_size_in_bytes=total,  # type: ignore[arg-type]
                          guaranteed_base_offset_alignment=alignment)
    except DmlError as error:
        raise located(path, error) from None


def _tensor_type(value: Any, path: str) -> None:
    if value not in ("BUFFER", "DML_TENSOR_TYPE_BUFFER"):
        raise ModelError(path, f"{value!r} is not a tensor type opendml supports (BUFFER)")


# -- commands --------------------------------------------------------------------------------------------------------


def read_command(path: str, spec: Any, model: Model) -> Command:
    _expect(spec, dict, path, "a command")
    kind = _require(spec, "type", path, str)
    if kind == "dispatch":
        _no_unknown(spec, path, {"type", "dispatchable", "bindings", "threadGroupCount"})
        name = _require(spec, "dispatchable", path, str)
        if name not in model.dispatchables:
            raise ModelError(f"{path}.dispatchable", f"{name!r} is not a dispatchable of this model")
        _expect(spec.get("bindings", {}), dict, f"{path}.bindings", "an object")
    elif kind == "print":
        _no_unknown(spec, path, {"type", "resource", "verbose"})
        _resource_name(spec, path, model)
    elif kind == "writeFile":
        _no_unknown(spec, path, {"type", "resource", "targetPath", "dimensions"})
        _resource_name(spec, path, model)
        target = _require(spec, "targetPath", path, str)
        if Path(target).suffix.lower() not in (".npy", ".dat", ".bin"):
            raise ModelError(f"{path}.targetPath", f"{target}: only .npy, .dat and .bin files can be written")
        if "dimensions" in spec:
            _expect(spec["dimensions"], list, f"{path}.dimensions", "an array of integers")
            for index, size in enumerate(spec["dimensions"]):
                _uint(size, f"{path}.dimensions[{index}]")
    else:
        raise ModelError(f"{path}.type", f"{kind!r} is not a command; use dispatch, print or writeFile")
    return Command(path, kind, spec)


def _resource_name(spec: dict[str, Any], path: str, model: Model) -> str:
    name: str = _require(spec, "resource", path, str)
    if name not in model.resources:
        raise ModelError(f"{path}.resource", f"{name!r} is not a resource of this model")
    return name


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


def _data_type(value: Any, path: str) -> DataType:
    if not isinstance(value, str):
        raise ModelError(path, f"{value!r} is not a data type name")
    try:
        return parse_enum(DataType, value, "DML_TENSOR_DATA_TYPE_")
    except DmlError as error:
        raise ModelError(path, str(error)) from None


def _uint(value: Any, path: str, limit: int = 2**32 - 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise ModelError(path, f"{value!r} is not an integer in [0, {limit}]")
    return value


def _expect(value: Any, kind: type | tuple[type, ...], path: str, what: str) -> None:
    if not isinstance(value, kind):
        raise ModelError(path, f"must be {what}; got {type(value).__name__}")


def _require(spec: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...]) -> Any:
    where = f"{path}.{key}" if path else key
    if key not in spec:
        raise ModelError(where, "is missing")
    value = spec[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ModelError(where, f"must be {_json_kind(names)}; got {_json_kind(type(value).__name__)}")
    return value


def _json_kind(python_names: str) -> str:
    for python, json_name in (("dict", "an object"), ("list", "an array"), ("str", "a string"), ("int", "an integer"),
                              ("float", "a number"), ("bool", "a boolean"), ("NoneType", "null")):
        python_names = python_names.replace(python, json_name)
    return python_names


def _no_unknown(spec: Mapping[str, Any], path: str, known: set[str]) -> None:
    for key in spec:
        if key not in known:
            where = f"{path}.{key}" if path else key
            raise ModelError(where, f"unknown field; expected one of {', '.join(sorted(known))}")
