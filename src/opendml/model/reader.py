"""Reads a DxDispatch JSON model into resources, operator descriptors and commands (DIGEST 4).

Every problem raises ModelError with the JSON path of the value at fault, e.g.
`dispatchables.sum.desc.Axes[0]: 5; it must be in [0, 3] ...`. Nothing here runs an operator. Numbers are converted
exactly for their field or refused (values.py), only regular files are read (files.py), and the keys each kind of
object may hold are the tables below, which the JSON fuzzer (tests/test_fuzz_json.py) reads too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..convert import UINT64_MAX, describe
from ..errors import DmlError
from ..ops.base import OperatorDesc
from ..types import DataType, ExecutionFlags
from . import descs
from .descs import TENSOR_KEYS, WRAPPED_KEYS, located, read_tensor_desc
from .descs import expect as _expect
from .descs import no_unknown as _no_unknown
from .descs import read_data_type as _data_type
from .descs import require as _require
from .document import child_path, load_json
from .errors import FollowOnError, ModelError
from .files import open_regular_file
from .values import constant_values, json_bool, json_uint, list_values, sequence_values

__all__ = ["TENSOR_KEYS", "WRAPPED_KEYS", "Command", "Dispatchable", "Limits", "Model", "ModelError", "Resource",
           "load_json", "located", "operator_class", "read_model", "read_operator_desc", "read_tensor_desc"]

#: The keys each kind of JSON object may hold (DIGEST 4); any other key is refused as an unknown field.
TOP_LEVEL_KEYS = frozenset({"$schema", "resources", "dispatchables", "commands"})
RESOURCE_KEYS = frozenset({"initialValuesDataType", "initialValues", "sizeInBytes", "initialValuesOffsetInBytes"})
CONSTANT_KEYS = frozenset({"valueCount", "value"})                       # initialValues: {"valueCount", "value"}
SEQUENCE_KEYS = frozenset({"valueCount", "valueStart", "valueDelta"})    # ... or a sequence
FILE_KEYS = frozenset({"sourcePath"})                                    # ... or a file
DISPATCHABLE_KEYS = frozenset({"type", "desc", "Desc", "executionFlags", "bindings", "dmlCompileType"})
# TENSOR_KEYS and WRAPPED_KEYS (a tensor desc; {"Type": ..., "Desc": {...}}): descs.py, which reads descriptors.
COMMAND_KEYS = {
    "dispatch": frozenset({"type", "dispatchable", "bindings", "threadGroupCount"}),
    "print": frozenset({"type", "resource", "verbose"}),
    "writeFile": frozenset({"type", "resource", "targetPath", "dimensions"}),
}
#: DxDispatch's dispatchable types that are not DirectML operators (it compares them in any case): what each runs.
OTHER_DISPATCHABLE_TYPES = {"hlsl": "an HLSL compute shader", "onnx": "an ONNX model (ONNX Runtime)",
                            "dmlserializedgraph": "a serialized DirectML graph"}
#: Data types no resource may have: no NumPy dtype holds their elements.
UNSUPPORTED_RESOURCE_TYPES = (DataType.UNKNOWN, DataType.UINT4, DataType.INT4)
#: The NumPy dtype (native byte order) of every data type a resource may have, to its data type: what .npy files load.
DATA_TYPES_OF_DTYPES = {data_type.numpy_dtype: data_type for data_type in DataType
                        if data_type not in UNSUPPORTED_RESOURCE_TYPES}


@dataclass
class Resource:
    name: str
    data_type: DataType
    data: np.ndarray[Any, np.dtype[np.uint8]]   # the whole buffer, sizeInBytes long
    #: The bytes the model declares: sizeInBytes, else the offset and the initial values without the buffer's
    #: rounding up to 4 bytes (what `print` shows, as DxDispatch trims that padding). Default: the whole buffer.
    declared_bytes: int | None = None

    @property
    def element_count(self) -> int:
        """The resource's elements of its data type, as the model declares them (`declared_bytes`)."""
        size = self.data.size if self.declared_bytes is None else self.declared_bytes
        return size // self.data_type.element_size


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
    #: The names of the resources and dispatchables refused while reading (only when problems are collected, for
    #: `opendml validate`): what names them fails too, which follows from the error already reported.
    refused_resources: set[str] = field(default_factory=set)
    refused_dispatchables: set[str] = field(default_factory=set)


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


def read_model(path: Path, limits: Limits, *, collect: list[DmlError] | None = None) -> Model:
    """Parses a model file. With `collect`, every problem in a resource, a dispatchable or a command is gathered
    there in the order a run meets them (so the first is the one a run reports) and reading goes on (for
    `opendml validate`); what names a refused resource or dispatchable is not checked again (FollowOnError).
    Otherwise the first problem raises."""
    document = load_json(path)
    _expect(document, dict, "", "the model")
    _no_unknown(document, "", TOP_LEVEL_KEYS)
    model = Model(path=path)
    resources = _require(document, "resources", "", dict)
    dispatchables = _require(document, "dispatchables", "", dict)
    commands = _require(document, "commands", "", list)
    problems = _Problems(collect)
    # A type opendml does not run (an HLSL shader, an ONNX model) is said first: the rest of such a model (its
    # resources' types, the dispatchable's fields) is DxDispatch's, for that type.
    for name, spec in dispatchables.items():
        with problems.refusing(model.refused_dispatchables, name):
            _runnable(child_path("dispatchables", name), spec)
    used = 0
    for name, spec in resources.items():
        with problems.refusing(model.refused_resources, name):
            resource = read_resource(child_path("resources", name), name, spec, path.parent, limits,
                                     limits.max_memory - used)
            used += resource.data.size
            model.resources[name] = resource
    for name, spec in dispatchables.items():
        if name not in model.refused_dispatchables:
            with problems.refusing(model.refused_dispatchables, name):
                model.dispatchables[name] = read_dispatchable(child_path("dispatchables", name), name, spec)
    for index, spec in enumerate(commands):
        with problems.refusing():
            model.commands.append(read_command(f"commands[{index}]", spec, model))
    return model


class _Problems:
    """Where read_model's problems go: raised (`collect` None), or gathered in `collect` but for follow-on ones."""

    def __init__(self, collect: list[DmlError] | None) -> None:
        self.collect = collect

    @contextmanager
    def refusing(self, refused: set[str] | None = None, name: str = "") -> Iterator[None]:
        """Reads something; a problem is raised or gathered, and its `name` added to `refused`."""
        try:
            yield
        except ModelError as error:
            if self.collect is None:
                raise
            if not isinstance(error, FollowOnError):
                self.collect.append(error)
            if refused is not None:
                refused.add(name)


# -- resources -----------------------------------------------------------------------------------------------------


def read_resource(path: str, name: str, spec: Any, folder: Path, limits: Limits, memory_left: int) -> Resource:
    _expect(spec, dict, path, "a resource")
    _no_unknown(spec, path, RESOURCE_KEYS)
    values_spec = _require(spec, "initialValues", path, (list, dict, str))
    type_spec = spec.get("initialValuesDataType")
    data_type = None if type_spec is None else _data_type(type_spec, f"{path}.initialValuesDataType")
    if data_type in UNSUPPORTED_RESOURCE_TYPES:  # before any file is read as this type
        raise ModelError(f"{path}.initialValuesDataType", f"{data_type.name} resources are not supported")
    values: np.ndarray[Any, Any] | None
    if values_spec == "deferred":
        values = None
    elif isinstance(values_spec, str):
        raise ModelError(f"{path}.initialValues", f"{describe(values_spec)} is not an initializer; use an array, an "
                         f"object or \"deferred\"")
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
    if data_type in UNSUPPORTED_RESOURCE_TYPES:
        raise ModelError(f"{path}.initialValuesDataType", f"{data_type.name} resources are not supported")
    offset = json_uint(spec.get("initialValuesOffsetInBytes", 0), f"{path}.initialValuesOffsetInBytes", UINT64_MAX)
    data_bytes = 0 if values is None else values.nbytes
    needed = offset + data_bytes
    if "sizeInBytes" in spec:
        size = json_uint(spec["sizeInBytes"], f"{path}.sizeInBytes", UINT64_MAX)
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
    return Resource(name, data_type, buffer, size if "sizeInBytes" in spec else needed)


def _values(path: str, spec: Any, data_type: DataType, memory_left: int) -> np.ndarray[Any, Any]:
    """An array, constant or sequence initializer as an array of the data type (values.py)."""
    if isinstance(spec, list):
        return list_values(path, spec, data_type)
    _no_unknown(spec, path, CONSTANT_KEYS | SEQUENCE_KEYS)
    count = json_uint(_require(spec, "valueCount", path, int), f"{path}.valueCount")
    if count * data_type.element_size > memory_left:
        raise ModelError(f"{path}.valueCount", f"{count} values would exceed the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory)")
    if "value" in spec:
        if "valueStart" in spec or "valueDelta" in spec:
            raise ModelError(path, "value and valueStart/valueDelta are mutually exclusive")
        return constant_values(f"{path}.value", spec["value"], count, data_type)
    if "valueStart" in spec or "valueDelta" in spec:
        start = _require(spec, "valueStart", path, (int, float, str))
        delta = _require(spec, "valueDelta", path, (int, float, str))
        return sequence_values(path, start, delta, count, data_type)
    raise ModelError(path, "needs value, valueStart/valueDelta or sourcePath")


def _read_file(path: str, spec: dict[str, Any], folder: Path, limits: Limits, data_type: DataType | None,
               memory_left: int) -> np.ndarray[Any, Any]:
    """The values of a .npy (typed) or .dat/.bin (raw bytes of `data_type`) file, which must be a regular file."""
    _no_unknown(spec, path, FILE_KEYS)
    source = _require(spec, "sourcePath", path, str)
    where = f"{path}.sourcePath"
    shown = describe(source)
    file_path = resolve_path(where, source, folder, limits)
    suffix = Path(source).suffix.lower()   # the name's, as written: a link's target may have another
    if suffix not in (".npy", ".dat", ".bin"):
        raise ModelError(where, f"{shown}: only .npy, .dat and .bin files are supported")
    if suffix != ".npy" and data_type is None:
        raise ModelError(path.rsplit(".", 1)[0] + ".initialValuesDataType",
                         f"is missing; {shown} is raw bytes and needs it")
    stream, size = open_regular_file(file_path, where, shown)
    with stream:
        if size > memory_left:
            raise ModelError(where, f"{shown} is {size} bytes, over the memory limit "
                             f"({max(memory_left, 0)} bytes left of --max-memory; raise it with --max-memory)")
        try:
            if suffix == ".npy":
                return _read_npy(where, shown, stream, size, data_type, memory_left)
            assert data_type is not None
            raw = np.fromfile(stream, dtype=np.uint8, count=size)   # no more than was checked, should it grow
        except (ValueError, EOFError) as error:  # a malformed or truncated .npy file
            raise ModelError(where, f"cannot load {shown}: {error or 'the file is truncated'}") from None
        except OSError as error:
            raise ModelError(where, f"cannot read {shown}: {error.strerror or error}") from None
    if raw.size % data_type.element_size:
        raise ModelError(where, f"{shown} holds {raw.size} bytes, not a whole number of {data_type.name} elements")
    return raw.view(data_type.numpy_dtype)


def _read_npy(where: str, shown: str, stream: BinaryIO, file_size: int, data_type: DataType | None,
              memory_left: int) -> np.ndarray[Any, Any]:
    """A .npy file's numeric array, flat and in native byte order; never unpickled.

    The header is checked before the data is read: np.lib.format allocates what the header declares, so a 100-byte
    file declaring 10^10 elements would allocate 40 GB.
    """
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise ModelError(where, f"cannot load {shown}: .npy format version {version[0]}.{version[1]} is unknown")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran_order, dtype = read_header(stream)
    data_start = stream.tell()
    if dtype.hasobject:
        raise ModelError(where, f"cannot load {shown}: it holds Python objects, which only unpickling could load "
                         f"(opendml never unpickles)")
    if dtype.kind not in "iuf" or dtype.newbyteorder("=") not in DATA_TYPES_OF_DTYPES:
        raise ModelError(where, f"{shown} holds {dtype} data; only arrays of a DML data type's numbers load")
    if any(size < 0 for size in shape):
        raise ModelError(where, f"cannot load {shown}: its header declares the shape {shape}")
    file_type = DATA_TYPES_OF_DTYPES[dtype.newbyteorder("=")]
    if data_type is not None and file_type != data_type:
        raise ModelError(where, f"{shown} holds {file_type.name} data but initialValuesDataType is {data_type.name}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > memory_left:
        raise ModelError(where, f"{shown} declares {nbytes} bytes of data, over the memory limit "
                         f"({max(memory_left, 0)} bytes left of --max-memory; raise it with --max-memory)")
    if nbytes > file_size - data_start:
        raise ModelError(where, f"{shown} declares {nbytes} bytes of data but holds {max(file_size - data_start, 0)}")
    data = np.fromfile(stream, dtype=dtype, count=math.prod(shape))
    array = data.reshape(shape, order="F" if fortran_order else "C")   # ValueError if the file was cut short
    return array.astype(array.dtype.newbyteorder("=")).reshape(-1)


def resolve_path(path: str, name: str, folder: Path, limits: Limits) -> Path:
    """A file a model names: relative to the model's folder, and inside it unless explicitly allowed."""
    return resolve_inside(path, name, folder, limits.allow_outside_paths, "the model's folder")


def resolve_inside(path: str, name: str, folder: Path, allow_outside: bool, where: str) -> Path:
    """`name` resolved against `folder` (symbolic links followed); outside it only when allowed."""
    candidate = Path(name)
    try:
        resolved = (candidate if candidate.is_absolute() else folder / candidate).resolve()
    except (OSError, RuntimeError, ValueError) as error:  # a symbolic-link loop, a NUL in the name
        raise ModelError(path, f"{describe(name)} is not a usable path ({error})") from None
    if not allow_outside and not resolved.is_relative_to(folder.resolve()):
        raise ModelError(path, f"{describe(name)} is outside {where}; pass --allow-outside-paths to allow it")
    return resolved


# -- dispatchables ---------------------------------------------------------------------------------------------------


def _runnable(path: str, spec: Any) -> None:
    """Refuses a dispatchable of a type DxDispatch runs but opendml does not (HLSL, ONNX, serialized graphs)."""
    type_name = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(type_name, str) and type_name.lower() in OTHER_DISPATCHABLE_TYPES:
        what = OTHER_DISPATCHABLE_TYPES[type_name.lower()]
        raise ModelError(f"{path}.type", f"{describe(type_name)} dispatchables ({what}) are not supported; opendml "
                         f"runs DirectML operators (a type such as DML_OPERATOR_REDUCE; `opendml ops` lists them)")


def read_dispatchable(path: str, name: str, spec: Any) -> Dispatchable:
    _expect(spec, dict, path, "a dispatchable")
    _runnable(path, spec)
    _no_unknown(spec, path, DISPATCHABLE_KEYS)
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
        raise ModelError(f"{path}.dmlCompileType", f"{describe(compile_type)}; it must be DmlCompileOp or "
                         f"DmlCompileGraph")
    bindings = spec.get("bindings", {})
    _expect(bindings, dict, f"{path}.bindings", "an object")
    return Dispatchable(name, desc, flags, bindings)


def operator_class(type_name: str, path: str) -> type[OperatorDesc]:
    """The registered descriptor class of an operator's name (DML_OPERATOR_REDUCE or REDUCE) (descs.py)."""
    return descs.operator_class(OperatorDesc.registry, type_name, path)  # type: ignore[no-any-return]


def read_operator_desc(path: str, desc_type: type[OperatorDesc], spec: dict[str, Any]) -> OperatorDesc:
    """A dispatchable's descriptor from its JSON "desc" (descs.py: the path OperatorDesc.from_dml takes too)."""
    return descs.read_operator_desc(path, desc_type, spec)  # type: ignore[no-any-return]


# -- commands --------------------------------------------------------------------------------------------------------


def read_command(path: str, spec: Any, model: Model) -> Command:
    _expect(spec, dict, path, "a command")
    kind = _require(spec, "type", path, str)
    if kind not in COMMAND_KEYS:
        raise ModelError(f"{path}.type", f"{describe(kind)} is not a command; use dispatch, print or writeFile")
    _no_unknown(spec, path, COMMAND_KEYS[kind])
    if kind == "dispatch":
        name = _require(spec, "dispatchable", path, str)
        if name in model.refused_dispatchables:
            raise FollowOnError(f"{path}.dispatchable", f"{describe(name)} was refused")
        if name not in model.dispatchables:
            raise ModelError(f"{path}.dispatchable", f"{describe(name)} is not a dispatchable of this model")
        _expect(spec.get("bindings", {}), dict, f"{path}.bindings", "an object")
        if "threadGroupCount" in spec:   # HLSL dispatchables only: checked as DxDispatch reads it, then unused
            counts = spec["threadGroupCount"]
            _expect(counts, list, f"{path}.threadGroupCount", "an array of 3 integers")
            if len(counts) != 3:
                raise ModelError(f"{path}.threadGroupCount", f"has {len(counts)} values; it must have 3")
            for index, count in enumerate(counts):
                json_uint(count, f"{path}.threadGroupCount[{index}]")
    elif kind == "print":
        _resource_name(spec, path, model)
        if "verbose" in spec:
            json_bool(spec["verbose"], f"{path}.verbose")
    else:
        _resource_name(spec, path, model)
        target = _require(spec, "targetPath", path, str)
        if Path(target).suffix.lower() not in (".npy", ".dat", ".bin"):
            raise ModelError(f"{path}.targetPath", f"{describe(target)}: only .npy, .dat and .bin files can be "
                             f"written")
        if "dimensions" in spec:
            _expect(spec["dimensions"], list, f"{path}.dimensions", "an array of integers")
            for index, size in enumerate(spec["dimensions"]):
                json_uint(size, f"{path}.dimensions[{index}]")
    return Command(path, kind, spec)


def _resource_name(spec: dict[str, Any], path: str, model: Model) -> str:
    name: str = _require(spec, "resource", path, str)
    if name in model.refused_resources:
        raise FollowOnError(f"{path}.resource", f"{describe(name)} was refused")
    if name not in model.resources:
        raise ModelError(f"{path}.resource", f"{describe(name)} is not a resource of this model")
    return name
