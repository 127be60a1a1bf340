"""Runs a model's commands in order: dispatch (bind resources, execute), print, writeFile (DIGEST 4.4)."""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..convert import UINT64_MAX, describe
from ..device import Binding, CompiledOperator, Device
from ..errors import DmlError
from ..graph import has_device_memory
from ..types import TensorFlags
from .document import child_path
from .errors import FollowOnError
from .reader import Command, Model, ModelError, Resource, located, resolve_inside
from .values import json_integer, json_uint


@dataclass(frozen=True)
class RunOptions:
    iterations: int = 1
    warmup: int = 0
    print_commands: bool = False
    output_path: Path | None = None
    allow_outside_paths: bool = False   # writeFile targets outside output_path (default: the current folder)


#: A model's memory: resource name -> the buffer its bindings address (the resource's host array on the cpu backend,
#: device memory from `Device.create_buffer` on the gpu).
Memory = dict[str, Any]


def allocate(model: Model, device: Device) -> Memory:
    """Every resource in the device's memory: on the cpu backend the resources' own host arrays (no copy); on a
    device with its own memory, a device buffer per resource, uploaded once (DxDispatch's "allocate resources")."""
    if not has_device_memory(device):
        return {name: resource.data for name, resource in model.resources.items()}
    return {name: device.create_buffer(resource.data) for name, resource in model.resources.items()}


def compile_all(model: Model, device: Device, *, collect: list[DmlError] | None = None,
                memory: Memory | None = None) -> dict[str, CompiledOperator]:
    """Creates, compiles and initializes every dispatchable (DxDispatch does this before any command). Initializer
    bindings address `memory` (default: the resources' host arrays)."""
    compiled: dict[str, CompiledOperator] = {}
    for name, dispatchable in model.dispatchables.items():
        path = child_path("dispatchables", name)
        try:
            operator = device.create_operator(dispatchable.desc)
            compiled[name] = device.compile_operator(operator, dispatchable.execution_flags)
            owned = _owned_bindings(path, compiled[name], dispatchable.initializer_bindings, model, memory)
            if any(binding is not None for binding in owned):
                compiled[name].initialize(owned)
        except ModelError as error:
            if collect is None:
                raise
            if not isinstance(error, FollowOnError):
                collect.append(error)
        except DmlError as error:
            if collect is None:
                raise located(f"{path}.desc", error) from None
            collect.append(located(f"{path}.desc", error))
    return compiled


def _owned_bindings(path: str, compiled: CompiledOperator, spec: dict[str, Any], model: Model,
                    memory: Memory | None) -> list[Binding | None]:
    """The initializer's bindings: one per input slot, a resource for each OWNED_BY_DML input."""
    owned_names = {name for name, tensor in compiled.desc.input_slots()
                   if tensor is not None and tensor.flags & TensorFlags.OWNED_BY_DML}
    for bind_point in spec:
        if bind_point not in owned_names:
            raise ModelError(child_path(f"{path}.bindings", bind_point), "only OWNED_BY_DML input tensors are bound at "
                             "initialization")
    result: list[Binding | None] = []
    for name, _ in compiled.desc.input_slots():
        if name in owned_names:
            if name not in spec:
                raise ModelError(f"{path}.bindings", f"{name} is OWNED_BY_DML; bind it here")
            result.append(resource_binding(f"{path}.bindings.{name}", spec[name], model, memory))
        else:
            result.append(None)
    return result


def run(model: Model, device: Device, options: RunOptions, write: Callable[[str], None]) -> None:
    """Runs the commands in order. On a device with its own memory the resources live there: the dispatches between
    two reads (print, writeFile) are recorded into one submission, and only what is printed or written is read
    back."""
    if not has_device_memory(device):
        compiled = compile_all(model, device)
        for command in model.commands:
            if options.print_commands:
                write(f"{command.path}: {command.kind} {_command_subject(command)}")
            if command.kind == "dispatch":
                _dispatch(command, model, compiled[command.spec["dispatchable"]], options, write)
            elif command.kind == "print":
                resource = model.resources[command.spec["resource"]]
                write(f"Resource '{resource.name}': {format_values(resource.data, resource)}")
            else:
                _write_file(command, model, options)
        return
    memory = allocate(model, device)
    compiled = compile_all(model, device, memory=memory)
    with ExitStack() as batch:      # open while dispatches are being recorded into one submission
        recording = False
        for command in model.commands:
            if options.print_commands:
                write(f"{command.path}: {command.kind} {_command_subject(command)}")
            if command.kind == "dispatch":
                timed = options.iterations > 1 or options.warmup > 0
                if timed and recording:     # timed dispatches are submitted one by one: end the batch first
                    batch.close()
                    recording = False
                if not timed and not recording:
                    batch.enter_context(device.batch())
                    recording = True
                _dispatch(command, model, compiled[command.spec["dispatchable"]], options, write, memory, device)
                continue
            if recording:
                batch.close()           # submits what was recorded; the read below waits for it
                recording = False
            resource = model.resources[command.spec["resource"]]
            data = np.frombuffer(memory[resource.name].read(), np.uint8)
            if command.kind == "print":
                write(f"Resource '{resource.name}': {format_values(data, resource)}")
            else:
                _write_file(command, model, options, data)


def _command_subject(command: Command) -> str:
    return str(command.spec.get("dispatchable") or command.spec.get("resource"))


def _dispatch(command: Command, model: Model, compiled: CompiledOperator, options: RunOptions,
              write: Callable[[str], None], memory: Memory | None = None, device: Device | None = None) -> None:
    """Binds and executes one dispatch command (with `memory`, over the device's buffers). Timed on a device with
    memory of its own, each iteration is submitted and waited for (a 4-byte read of a buffer of its own)."""
    path = command.path
    spec = command.spec.get("bindings", {})
    desc = compiled.desc
    groups = _slot_groups([name for name, _ in desc.input_slots()] + [name for name, _ in desc.output_slots()])
    for bind_point in spec:
        if bind_point not in groups:
            raise ModelError(child_path(f"{path}.bindings", bind_point), f"is not a bind point of {desc.label}; "
                             f"bind points: {', '.join(groups)}")
    inputs: list[Binding | None] = []
    for name, tensor in desc.input_slots():
        if tensor is None or tensor.flags & TensorFlags.OWNED_BY_DML:
            inputs.append(None)
        else:
            inputs.append(_slot_binding(path, name, spec, model, memory))
    outputs = [_slot_binding(path, name, spec, model, memory) for name, _ in desc.output_slots()]
    for unused in set(spec) - {_group_of(name) for name, tensor in desc.input_slots() if tensor is not None} - {
            _group_of(name) for name, _ in desc.output_slots()}:
        raise ModelError(child_path(f"{path}.bindings", unused), f"{desc.label} has no {unused} in its desc (it is "
                         f"absent)")
    timed = options.iterations > 1 or options.warmup > 0
    fence = device.create_buffer(4) if device is not None and timed else None
    try:
        for _ in range(options.warmup):
            compiled.execute(inputs, outputs)
        if fence is not None:
            fence.read()
        times = []
        for _ in range(max(options.iterations, 1)):
            start = time.perf_counter()
            compiled.execute(inputs, outputs)
            if fence is not None:
                fence.read()        # reads after everything submitted so far: the dispatch has finished
            times.append(time.perf_counter() - start)
    except DmlError as error:
        raise located(f"{path}.bindings", error) from None
    if options.iterations > 1 or options.warmup:
        milliseconds = [t * 1e3 for t in times]
        write(f"Dispatch '{command.spec['dispatchable']}': {len(times)} iterations, min {min(milliseconds):.4f} ms, "
              f"median {statistics.median(milliseconds):.4f} ms, max {max(milliseconds):.4f} ms")


def _group_of(slot: str) -> str:
    """OutputTensors[1] -> OutputTensors."""
    return slot.split("[", 1)[0]


def _slot_groups(slots: list[str]) -> list[str]:
    return list(dict.fromkeys(_group_of(slot) for slot in slots))


def _slot_binding(path: str, slot: str, spec: dict[str, Any], model: Model, memory: Memory | None = None
                  ) -> Binding:
    group = _group_of(slot)
    if group not in spec:
        raise ModelError(f"{path}.bindings", f"{group} is not bound; it is required")
    value = spec[group]
    where = f"{path}.bindings.{group}"
    if "[" in slot:
        index = int(slot[len(group) + 1:-1])
        if not isinstance(value, list):
            value = [value]
        if index >= len(value):
            raise ModelError(where, f"has {len(value)} bindings; the desc has more {group}")
        value, where = value[index], f"{where}[{index}]"
    elif isinstance(value, list):
        if len(value) != 1:
            raise ModelError(where, f"has {len(value)} bindings; {group} takes one")
        value, where = value[0], f"{where}[0]"
    return resource_binding(where, value, model, memory)


#: The keys of a binding object (DxDispatch's BufferBindingSource); only name, the element offset, count and size
#: matter to a DML operator, the others are checked as DxDispatch reads them.
BINDING_KEYS = frozenset({"name", "elementOffset", "elementCount", "elementSizeInBytes", "elementStride", "format",
                          "counter", "counterOffsetBytes", "shape"})


def resource_binding(path: str, value: Any, model: Model, memory: Memory | None = None) -> Binding:
    """A resource name or {"name", "elementOffset", "elementCount", ...} as a Binding over the resource (over its
    buffer in `memory` when given)."""
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ModelError(path, "must be a resource name or an object with a name")
    for key in value:
        if key not in BINDING_KEYS:
            raise ModelError(child_path(path, key), f"unknown field; expected one of {', '.join(sorted(BINDING_KEYS))}")
    resource = model.resources.get(value["name"])
    if value["name"] in model.refused_resources:
        raise FollowOnError(path, f"{describe(value['name'])} was refused")
    if resource is None:
        raise ModelError(f"{path}.name" if len(value) > 1 else path,
                         f"{describe(value['name'])} is not a resource of this model")
    numbers = {key: json_uint(value[key], f"{path}.{key}", UINT64_MAX) for key in
               ("elementOffset", "elementCount", "elementSizeInBytes", "elementStride", "counterOffsetBytes")
               if key in value}
    for key in ("format", "counter"):
        if key in value and not isinstance(value[key], str):
            raise ModelError(f"{path}.{key}", f"{describe(value[key])}; it must be a string")
    if "shape" in value:
        shape = value["shape"]
        if not isinstance(shape, list):
            raise ModelError(f"{path}.shape", f"{describe(shape)}; it must be an array of integers")
        for index, size in enumerate(shape):
            json_integer(size, f"{path}.shape[{index}]", -2**63, 2**63 - 1, "INT64")
    # DxDispatch: an element size of 0 (the default) is the resource's element size.
    element_size = numbers.get("elementSizeInBytes", numbers.get("elementStride", 0)) or resource.data_type.element_size
    offset = numbers.get("elementOffset", 0)
    byte_offset = offset * element_size
    if byte_offset > resource.data.size:
        raise ModelError(f"{path}.elementOffset", f"{offset} is past the end of {describe(resource.name)} "
                         f"({resource.data.size} bytes)")
    count = numbers.get("elementCount")
    size = None if count is None else count * element_size
    return Binding(resource.data if memory is None else memory[resource.name], offset=byte_offset, size=size)


def format_values(data: np.ndarray[Any, Any], resource: Resource) -> str:
    """A resource as DxDispatch prints it: the elements it declares (`Resource.element_count`, without the padding
    of its buffer to 4 bytes) of its buffer `data`, as a flat list of its data type's values."""
    dtype = resource.data_type.numpy_dtype
    values = data[: resource.element_count * dtype.itemsize].view(dtype)
    if resource.data_type.is_float:
        return ", ".join(f"{float(value):g}" for value in values)
    return ", ".join(str(int(value)) for value in values)


def _write_file(command: Command, model: Model, options: RunOptions,
                data: np.ndarray[Any, np.dtype[np.uint8]] | None = None) -> None:
    """Writes a resource (its bytes `data` when read back from the device, else its host array)."""
    resource = model.resources[command.spec["resource"]]
    folder = Path.cwd() if options.output_path is None else options.output_path
    where = "the current folder" if options.output_path is None else "--output-path"
    target = resolve_inside(f"{command.path}.targetPath", command.spec["targetPath"], folder,
                            options.allow_outside_paths, where)
    dtype = resource.data_type.numpy_dtype
    data = resource.data if data is None else data
    values = data[: data.size - data.size % dtype.itemsize].view(dtype)
    if "dimensions" in command.spec:
        dimensions = [int(size) for size in command.spec["dimensions"]]
        count = math.prod(dimensions)  # exact: np.prod would wrap around 2^64 and pass a wrong shape to reshape
        if count != values.size:
            shown = count if count.bit_length() <= 128 else describe(count)   # a long list's product is huge
            raise ModelError(f"{command.path}.dimensions", f"{describe(dimensions)} hold {shown} elements; "
                             f"{describe(resource.name)} has {values.size}")
        values = values.reshape(dimensions)
    write_atomically(command.path, target, values)


def write_atomically(path: str, target: Path, values: np.ndarray[Any, Any]) -> None:
    """Writes to a temporary file beside the target, then renames: the target is whole, old or new. The file gets
    the permissions a newly created file gets (0666 less the umask), not mkstemp's private 0600."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as stream:
                if hasattr(os, "fchmod"):
                    os.fchmod(handle, 0o666 & ~_umask())
                if target.suffix.lower() == ".npy":
                    np.save(stream, values, allow_pickle=False)
                else:
                    stream.write(np.ascontiguousarray(values).tobytes())
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise ModelError(f"{path}.targetPath", f"cannot write {target}: {error.strerror or error}") from None


def _umask() -> int:
    """The process's umask (reading it means setting it: it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
