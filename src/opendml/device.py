"""Device, Operator, CompiledOperator and Binding: DirectML's create / compile / initialize / bind / dispatch
lifecycle, over host memory and over the backend's device memory (`Device.create_buffer`)."""

from __future__ import annotations

import array
import mmap
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends import DeviceMemory, DeviceRange, FlatArray, get_backend
from .convert import (
    UINT64_MAX,
    describe,
    error_text,
    printable,
    to_bool,
    to_enum,
    to_flags,
    to_name,
    to_sequence,
    to_uint,
)
from .errors import BindingError, UnsupportedError, ValidationError
from .ops.base import OperatorDesc
from .tensor import MINIMUM_BUFFER_TENSOR_ALIGNMENT, TensorDesc
from .types import ExecutionFlags, FeatureLevel, TensorFlags, to_data_type

#: The backend of `Device(backend=None)`. The test suite sets it to run the same tests on every backend.
DEFAULT_BACKEND = "cpu"


def list_adapters() -> list[Any]:
    """The GPU adapters `Device(backend="gpu", adapter=...)` can pick (name, vendor, backend, device type); empty
    when wgpu or a driver is missing."""
    from .backends.gpu.context import list_adapters as adapters

    return adapters()


@dataclass(frozen=True)
class Binding:
    """DML_BUFFER_BINDING: a byte range of any buffer-protocol object (bytearray, memoryview, ndarray, mmap) or of
    the device's own memory (`Device.create_buffer`).

    `size` defaults to the tensor's TotalTensorSizeInBytes. Like a DML binding table, a Binding that is used
    again skips the checks it already passed: it keeps the validated view, which holds a buffer-protocol export
    (a bytearray, ndarray, mmap or array.array cannot be resized while it lives). Memory that can move under an
    export (a `__dlpack__` tensor, which `resize_` reallocates, or another object's buffer) is looked up again
    before every dispatch: where its address, size or dtype changed, the dispatch is refused (bind it again).
    """

    buffer: Any
    offset: int = 0
    size: int | None = None
    _views: dict[tuple[Any, ...], tuple[Any, int, int, int, tuple[int, int, Any] | None]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Offset and SizeInBytes are UINT64s (the buffer is checked when it is bound)."""
        object.__setattr__(self, "offset", to_uint("Binding", "offset", self.offset, limit=UINT64_MAX))
        if self.size is not None:
            object.__setattr__(self, "size", to_uint("Binding", "size", self.size, limit=UINT64_MAX))


class Device:
    """An opendml device: a feature level, a backend and, with debug=True, DML's debug-layer checks.

    >>> device = Device(feature_level="5_2")
    >>> device.check_feature_support(feature_levels=["4_1", "6_0"])
    <FeatureLevel.LEVEL_4_1: 16640>
    """

    def __init__(self, feature_level: FeatureLevel | str = FeatureLevel.LEVEL_6_4, backend: str | None = None,
                 debug: bool = False, adapter: str | None = None) -> None:
        label = "Device"
        self.feature_level = to_enum(label, "feature_level", feature_level, FeatureLevel, "DML_FEATURE_LEVEL_",
                                     member_prefix="LEVEL_")
        backend_name = DEFAULT_BACKEND if backend is None else to_name(label, "backend", backend)
        adapter_name = None if adapter is None else to_name(label, "adapter", adapter)
        self.debug = to_bool(label, "debug", debug)
        self.backend = get_backend(backend_name, adapter_name)

    def __repr__(self) -> str:
        return f"Device(feature_level={str(self.feature_level)!r}, backend={self.backend.name!r}, debug={self.debug})"

    def create_buffer(self, source: int | np.ndarray[Any, Any]) -> Any:
        """Memory of this device that `dml.Binding` takes: `create_buffer(size_in_bytes)` (zero-filled) or
        `create_buffer(array)` (a copy of its bytes). Host memory on the cpu backend, device memory on the gpu;
        either has `read()` (bytes) and `read(dtype, shape)` (a new array)."""
        label = "Device.create_buffer"
        if isinstance(source, np.ndarray):
            if source.dtype.hasobject:
                raise ValidationError(f"{label}: source is {describe(source)}; an array must hold numbers, not "
                                      f"Python objects (its bytes are copied)")
            return self.backend.create_buffer(source)
        try:
            size = to_uint(label, "source", source, limit=UINT64_MAX)
        except ValidationError:
            raise ValidationError(f"{label}: source is {describe(source)}; it must be a size in bytes (an integer in "
                                  f"[0, 2^64)) or a NumPy array") from None
        try:
            return self.backend.create_buffer(size)
        except (MemoryError, ValueError):  # NumPy's refusals of a host allocation this large
            raise UnsupportedError(f"{label}: {size} bytes could not be allocated in host memory") from None

    def batch(self) -> Any:
        """A context in which every dispatch is recorded into one submission (on the gpu backend; the cpu runs each
        at once). Reading device memory inside it submits what was recorded so far."""
        return self.backend.batch()

    def check_feature_support(self, *, data_type: object = None,
                              feature_levels: Sequence[FeatureLevel | str] | None = None) -> bool | FeatureLevel:
        """IDMLDevice::CheckFeatureSupport, one query at a time.

        data_type=...: DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, whether the backend supports that type.
        feature_levels=[...]: DML_FEATURE_FEATURE_LEVELS, the highest requested level this device supports.
        """
        if (data_type is None) == (feature_levels is None):
            raise ValidationError("CheckFeatureSupport: give exactly one of data_type or feature_levels")
        label = "CheckFeatureSupport"
        if data_type is not None:
            return self.backend.supports_data_type(to_data_type(label, "data_type", data_type))
        levels = to_sequence(label, "feature_levels", feature_levels, what="a list of feature levels")
        if not levels:
            raise ValidationError("CheckFeatureSupport: RequestedFeatureLevelCount is 0; request at least one level")
        requested = [to_enum(label, f"feature_levels[{index}]", level, FeatureLevel, "DML_FEATURE_LEVEL_",
                             member_prefix="LEVEL_") for index, level in enumerate(levels)]
        supported = [level for level in requested if level <= self.feature_level]
        if not supported:
            lowest = min(requested)
            raise UnsupportedError(f"CheckFeatureSupport: none of the requested feature levels is supported; the "
                                   f"lowest requested is {lowest}, the device is at {self.feature_level}")
        return max(supported)

    def create_operator(self, desc: OperatorDesc) -> Operator:
        """IDMLDevice::CreateOperator: checks every rule of the descriptor at this device's feature level."""
        if not isinstance(desc, OperatorDesc):
            raise ValidationError(f"CreateOperator: desc is {describe(desc)}; it must be an operator descriptor")
        desc.validate(self.feature_level)
        self.backend.check_operator(desc)
        for name, tensor in [*desc.input_slots(), *desc.output_slots()]:
            if tensor is not None and not self.backend.supports_data_type(tensor.data_type):
                raise UnsupportedError(f"{desc.label}: {name}.DataType {tensor.data_type.name} is not supported by "
                                       f"the {self.backend.name} backend")
        return Operator(self, desc)

    def compile_operator(self, operator: Operator, flags: ExecutionFlags | str = ExecutionFlags.NONE
                         ) -> CompiledOperator:
        """IDMLDevice::CompileOperator: plans the kernel once, for every dispatch to come."""
        if not isinstance(operator, Operator) or operator.device is not self:
            raise ValidationError("CompileOperator: the operator was not created by this device")
        return CompiledOperator(operator, to_flags("CompileOperator", "flags", flags, ExecutionFlags,
                                                   "DML_EXECUTION_FLAG_"))


class Operator:
    """IDMLOperator: a validated descriptor on a device."""

    def __init__(self, device: Device, desc: OperatorDesc) -> None:
        self.device = device
        self.desc = desc

    def __repr__(self) -> str:
        return f"Operator({self.desc.label})"


class CompiledOperator:
    """IDMLCompiledOperator: execute() binds raw buffers; calling it takes and returns logical arrays."""

    def __init__(self, operator: Operator, flags: ExecutionFlags) -> None:
        self.operator = operator
        self.desc = operator.desc
        self.flags = flags
        self._label = self.desc.label
        self._inputs = self.desc.input_slots()
        self._outputs = self.desc.output_slots()
        self._owned: dict[int, FlatArray | DeviceRange] = {}
        self._owned_slots = {index for index, (_, desc) in enumerate(self._inputs)
                             if desc is not None and desc.flags & TensorFlags.OWNED_BY_DML}
        self._in_place = self.desc.in_place_pairs()
        self._descs = {name: desc for name, desc in [*self._inputs, *self._outputs] if desc is not None}
        self._kernel = operator.device.backend.compile(self.desc, flags, operator.device.debug)
        self._again: _Again | None = None      # the last execute's bindings, run again without checking them anew

    def __repr__(self) -> str:
        return f"CompiledOperator({self._label}, flags={self.flags!r})"

    # -- DML's binding model -------------------------------------------------------------------------------

    def initialize(self, inputs: Sequence[Binding | None]) -> None:
        """IDMLOperatorInitializer: binds the data of OWNED_BY_DML inputs (and only those) once; it is copied,
        so the caller's buffers may change afterwards."""
        self._check_count("initializer input", inputs, self._inputs)
        self._again = None
        owned: dict[int, FlatArray | DeviceRange] = {}
        for index, ((name, desc), binding) in enumerate(zip(self._inputs, inputs, strict=True)):
            is_owned = desc is not None and bool(desc.flags & TensorFlags.OWNED_BY_DML)
            if not is_owned:
                if binding is not None:
                    raise BindingError(f"{self._label}: {name} is not OWNED_BY_DML; bind it at execution, "
                                       f"not at initialization")
                continue
            assert desc is not None
            if binding is None:
                raise BindingError(f"{self._label}: {name} is OWNED_BY_DML and must be bound at initialization")
            view = self._view(name, desc, binding, writable=False)[0]
            data = (np.frombuffer(view.memory.read(), np.uint8)[view.offset: view.offset + view.size]
                    if isinstance(view, DeviceRange) else view.view(np.uint8))
            # A copy in the device's own memory, made once: on a gpu, executes (and a batch of them) bind it in place.
            memory = self.operator.device.create_buffer(data)
            owned[index] = (DeviceRange(memory, 0, memory.size) if isinstance(memory, DeviceMemory)
                            else np.asarray(memory).view(desc.data_type.numpy_dtype))
        self._owned = owned
        prepare = getattr(self._kernel, "initialize", None)
        if prepare is not None:   # the kernel's optional hook: pre-pack the owned tensors once (backends/__init__.py)
            prepare(dict(owned))

    def execute(self, inputs: Sequence[Binding | None], outputs: Sequence[Binding]) -> None:
        """Binds the buffers, checks every rule (DECISIONS 4-6) before touching any memory, then dispatches. The
        same Binding objects again (in the same slots, none of them over memory that can move) passed every check
        before and still do: the last execute's call runs again (`_Again`)."""
        again = self._again
        if again is not None and again.matches(inputs, outputs):
            again.call()
            return
        input_views, output_views = self._execute(inputs, outputs)
        self._again = _Again.of(self, inputs, outputs, input_views, output_views)

    def _execute(self, inputs: Sequence[Binding | None], outputs: Sequence[Binding]) -> tuple[list[Any], list[Any]]:
        """execute() without keeping the call (the convenient form's, whose Bindings are new at every call); returns
        the views it bound."""
        self._check_count("input", inputs, self._inputs)
        self._check_count("output", outputs, self._outputs)
        input_views: list[Any] = []
        ranges: list[tuple[str, int, int, int, bool]] = []  # (field, memory, start, end, is_output)
        for index, ((name, desc), binding) in enumerate(zip(self._inputs, inputs, strict=True)):
            if desc is None:
                if binding is not None:
                    raise BindingError(f"{self._label}: {name} is absent from the descriptor; bind it as None")
                input_views.append(None)
            elif index in self._owned_slots:
                if binding is not None:
                    raise BindingError(f"{self._label}: {name} is OWNED_BY_DML; it is bound at initialization and "
                                       f"must be None at execution")
                if index not in self._owned:
                    raise BindingError(f"{self._label}: {name} is OWNED_BY_DML and was never initialized; call "
                                       f"initialize() first")
                input_views.append(self._owned[index])
            else:
                if binding is None:
                    raise BindingError(f"{self._label}: {name} is required; it is bound as None")
                view, space, start, end = self._view(name, desc, binding, writable=False)
                input_views.append(view)
                ranges.append((name, space, start, end, False))
        output_views: list[Any] = []
        for (name, desc), binding in zip(self._outputs, outputs, strict=True):
            if binding is None:
                raise BindingError(f"{self._label}: {name} is required; it is bound as None")
            view, space, start, end = self._view(name, desc, binding, writable=True)
            output_views.append(view)
            ranges.append((name, space, start, end, True))
        _check_overlaps(self._label, ranges, self._in_place, self._descs)
        self._kernel(input_views, output_views)
        return input_views, output_views

    def _check_count(self, kind: str, bindings: Sequence[Binding | None], slots: Sequence[tuple[str, Any]]) -> None:
        if type(bindings) not in (list, tuple):
            raise BindingError(f"{self._label}: the {kind} bindings must be a list, one entry per tensor "
                               f"({', '.join(name for name, _ in slots)})")
        if len(bindings) != len(slots):
            raise BindingError(f"{self._label}: {len(bindings)} {kind} bindings given; the operator has "
                               f"{len(slots)} ({', '.join(name for name, _ in slots)})")
        for (name, _), binding in zip(slots, bindings, strict=True):
            if binding is not None and type(binding) is not Binding:
                raise BindingError(f"{self._label}: the {kind} binding of {name} is a {type(binding).__name__}; it "
                                   f"must be a dml.Binding or None")

    def _view(self, name: str, desc: TensorDesc, binding: Binding, *, writable: bool
              ) -> tuple[Any, int, int, int]:
        """The bound range as a flat typed array (host memory) or a DeviceRange (the device's memory), the memory it
        lies in (0: the host's address space) and its start and end addresses; every binding rule first."""
        key = (desc.data_type, desc.total_tensor_size_in_bytes, desc.guaranteed_base_offset_alignment, writable)
        cached = binding._views.get(key)
        if cached is not None:
            if cached[4] is not None and _place(caller_memory(self._label, name, binding.buffer)[0]) != cached[4]:
                raise BindingError(f"{self._label}: {name} is bound to a {_kind(binding.buffer)} whose memory "
                                   f"moved or changed size or dtype since it was bound (e.g. a resize); bind it again")
            return cached[:4]
        label = self._label
        memory = binding.buffer
        place = None
        if isinstance(memory, DeviceMemory):
            if not self.operator.device.backend.owns(memory):
                raise BindingError(f"{label}: {name} is bound to {memory!r}, which is not memory of this device "
                                   f"({self.operator.device!r}); bind memory from this device's create_buffer")
            buffer_size = memory.size
        else:
            typed, movable = caller_memory(label, name, memory)
            if typed.dtype not in _RAW_BYTES and typed.dtype != desc.data_type.numpy_dtype:
                raise BindingError(f"{label}: {name} is bound to an array of {typed.dtype}; DataType "
                                   f"{desc.data_type.name} needs {desc.data_type.numpy_dtype} (bind untyped bytes, "
                                   f"e.g. a uint8 view, to reinterpret memory)")
            place = _place(typed) if movable else None
            whole = typed.reshape(-1).view(np.uint8)
            if writable and not whole.flags.writeable:
                raise BindingError(f"{label}: {name} is bound to a read-only buffer; an output buffer must be "
                                   f"writable")
            buffer_size = whole.size
        offset, total = binding.offset, desc.total_tensor_size_in_bytes
        size = total if binding.size is None else binding.size
        for what, value in (("offset", offset), ("size", size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise BindingError(f"{label}: {name} binding {what} is {value!r}; it must be a non-negative integer")
        alignment = max(MINIMUM_BUFFER_TENSOR_ALIGNMENT, desc.guaranteed_base_offset_alignment)
        if offset % alignment:
            raise BindingError(f"{label}: {name} binding offset is {offset}; it must be a multiple of {alignment}"
                               + (" (GuaranteedBaseOffsetAlignment)" if alignment > MINIMUM_BUFFER_TENSOR_ALIGNMENT
                                  else ""))
        if size < total:
            raise BindingError(f"{label}: {name} binding size is {size} bytes; it must be at least "
                               f"TotalTensorSizeInBytes ({total})")
        if offset + size > buffer_size:
            raise BindingError(f"{label}: {name} binding needs bytes [{offset}, {offset + size}) but the buffer "
                               f"holds {buffer_size} bytes")
        result: tuple[Any, int, int, int]
        if isinstance(memory, DeviceMemory):
            result = (DeviceRange(memory, offset, size), id(memory), offset, offset + size)
        else:
            dtype = desc.data_type.numpy_dtype
            view = whole[offset: offset + size - size % dtype.itemsize].view(dtype)
            start = whole.__array_interface__["data"][0] + offset
            result = (view, 0, start, start + size)
        binding._views[key] = (*result, place)
        return result

    # -- the convenient form ----------------------------------------------------------------------------------

    def __call__(self, *arrays: Any) -> tuple[np.ndarray[Any, Any], ...]:
        """Takes one logical array per input tensor (shape = Sizes, dtype = DataType), returns new arrays shaped like
        the output tensors. An optional input that the descriptor leaves absent is None, or left out when it comes
        after the last present one (`compiled(x)` for MVN without Scale and Bias). Strided tensors are laid out in
        fresh buffers at their strides, exactly as execute() would see them."""
        if len(arrays) > len(self._inputs):
            names = ", ".join(name + ("" if desc is not None else " (absent)") for name, desc in self._inputs)
            raise BindingError(f"{self._label}: {len(arrays)} arrays given; it takes at most {len(self._inputs)} "
                               f"({names})")
        bindings: list[Binding | None] = []
        owned: list[Binding | None] = []
        for index, (name, desc) in enumerate(self._inputs):
            given = index < len(arrays)
            array = arrays[index] if given else None
            if desc is None:
                if array is not None:
                    raise BindingError(f"{self._label}: {name} is absent from the descriptor; pass None for it or "
                                       f"leave it out")
                bindings.append(None)
                owned.append(None)
                continue
            if array is None:
                received = "None" if given else "not given"
                raise BindingError(f"{self._label}: {name} is {received}; the descriptor has {name}, so it needs an "
                                   f"array (only absent optional inputs may be None or left out)")
            binding = Binding(_layout(self._label, name, desc, array))
            if desc.flags & TensorFlags.OWNED_BY_DML:
                bindings.append(None)
                owned.append(binding)
            else:
                bindings.append(binding)
                owned.append(None)
        if any(binding is not None for binding in owned):
            self.initialize(owned)
        buffers = [np.zeros(desc.total_tensor_size_in_bytes, np.uint8) for _, desc in self._outputs]
        self._execute(bindings, [Binding(buffer) for buffer in buffers])
        return tuple(_logical(desc, buffer).copy() for (_, desc), buffer in zip(self._outputs, buffers, strict=True))


class _Again:
    """An execute's Bindings and the call that runs it again on the same views: the kernel's own (`again(inputs,
    outputs)`, an optional method: the gpu's records the dispatches made the first time) or the kernel called with the
    same views. Only where every bound memory is fixed (not memory that can move, which is looked up before every
    dispatch). The Bindings are held weakly, and the entry is dropped as soon as any of them is collected (a weak
    reference's callback, before its memory can go to another object), so nothing it holds outlives them, and while
    it lives their ids name them alone: `matches` compares ids."""

    __slots__ = ("call", "ids", "refs", "token")

    def __init__(self, ids: tuple[tuple[int, ...], tuple[int, ...]], refs: list[Any], call: Callable[[], None],
                 token: object) -> None:
        self.ids, self.refs, self.call, self.token = ids, refs, call, token

    @staticmethod
    def of(compiled: CompiledOperator, inputs: Sequence[Binding | None], outputs: Sequence[Binding],
           input_views: list[Any], output_views: list[Any]) -> _Again | None:
        bound = [binding for binding in (*inputs, *outputs) if binding is not None]
        if any(entry[4] is not None for binding in bound for entry in binding._views.values()):
            return None     # memory that can move: looked up again at every execute
        kernel = compiled._kernel
        again = getattr(kernel, "again", None)
        call = again(input_views, output_views) if again is not None else None
        if call is None:
            def call() -> None:
                kernel(input_views, output_views)
        owner, token = weakref.ref(compiled), object()     # (no reference cycle through the callbacks)

        def forget(_: Any) -> None:     # a Binding was collected: the entry goes (if it is still the current one)
            current = owner()
            entry = None if current is None else current._again
            if entry is not None and entry.token is token:
                current._again = None   # type: ignore[union-attr]

        return _Again((tuple(map(id, inputs)), tuple(map(id, outputs))),
                      [weakref.ref(binding, forget) for binding in bound], call, token)

    def matches(self, inputs: Sequence[Binding | None], outputs: Sequence[Binding]) -> bool:
        return (type(inputs) in _SEQUENCES and type(outputs) in _SEQUENCES
                and (tuple(map(id, inputs)), tuple(map(id, outputs))) == self.ids)


_SEQUENCES = (list, tuple)


def _check_overlaps(label: str, ranges: Sequence[tuple[str, int, int, int, bool]],
                    in_place: Sequence[tuple[str, str]] = (), descs: dict[str, TensorDesc] | None = None) -> None:
    """An output's bound range may not overlap any input's or another output's, except in place: an (input, output)
    pair of `in_place` may be bound to exactly the same range (the same memory, start and end) when the two tensors
    lay out their elements alike (the same Strides), so that each element is overwritten by its own result only."""
    for index, (name, space, start, end, is_output) in enumerate(ranges):
        for other_name, other_space, other_start, other_end, other_is_output in ranges[index + 1:]:
            if space != other_space:
                continue
            if (is_output or other_is_output) and start < other_end and other_start < end and start < end:
                pair = (other_name, name) if is_output else (name, other_name)
                if is_output == other_is_output or pair not in in_place:
                    raise BindingError(f"{label}: the bound ranges of {name} and {other_name} overlap; an output may "
                                       f"not share memory with another bound tensor")
                source, target = pair
                if (start, end) != (other_start, other_end):
                    raise BindingError(f"{label}: the bound ranges of {source} and {target} overlap without being the "
                                       f"same; in-place execution needs {target} bound to exactly {source}'s range "
                                       f"(the same offset and size)")
                assert descs is not None
                source_strides, target_strides = descs[source].element_strides, descs[target].element_strides
                if source_strides != target_strides:
                    raise BindingError(f"{label}: {source} and {target} are bound to the same range but their "
                                       f"Strides differ ({list(source_strides)} and {list(target_strides)}); in "
                                       f"place, each element must be overwritten by its own result")


def _strided(desc: TensorDesc, buffer: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    dtype = desc.data_type.numpy_dtype
    count = desc.total_tensor_size_in_bytes // dtype.itemsize
    flat = buffer[: count * dtype.itemsize].view(dtype)
    byte_strides = tuple(stride * dtype.itemsize for stride in desc.element_strides)
    return np.lib.stride_tricks.as_strided(flat, shape=desc.sizes, strides=byte_strides,
                                           writeable=buffer.flags.writeable)


def _logical(desc: TensorDesc, buffer: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The logical array a tensor's buffer holds, read through its strides."""
    return _strided(desc, buffer)


#: What `__call__` and graphs take as a logical array, for messages.
ARRAY_KINDS = "a NumPy array, a buffer-protocol object (memoryview) or an object with __dlpack__ or __array__"
#: Element types of untyped memory (bytes, bytearray, mmap, uint8 arrays, `create_buffer`'s HostBuffer): a binding
#: reinterprets its bytes as the tensor's DataType, as DML binds raw buffers. Any other array binds only the
#: tensor's own dtype.
_RAW_BYTES = (np.dtype(np.uint8), np.dtype("S1"))
#: Buffer-protocol objects whose memory cannot move or shrink while an export of it lives (their resize raises
#: BufferError), so a Binding's validated view pins it. Any other object is looked up again at every dispatch.
_PINNED = (np.ndarray, bytes, bytearray, memoryview, mmap.mmap, array.array)


def _attribute(label: str, name: str, value: Any, attribute: str) -> Any:
    """`value.attribute` or None, whatever a hostile `__getattr__` raises (a BindingError naming it)."""
    try:
        return getattr(value, attribute, None)
    except Exception as error:
        raise BindingError(f"{label}: {name} could not be read as an array (looking up its {attribute} raised "
                           f"{error_text(error)})") from None


def _buffer_array(value: Any, *, raw: bool = False) -> np.ndarray[Any, Any] | None:
    """`value`'s buffer (the buffer protocol) as an array with its format and shape, without a copy; with `raw`, as
    bytes where NumPy does not read its format. None where it has no buffer."""
    try:
        view = memoryview(value)
    except Exception:  # TypeError where there is none; anything from a third-party exporter
        return None
    try:
        return np.asarray(view)
    except Exception:
        pass
    if raw:
        try:
            return np.frombuffer(view, np.uint8)
        except Exception:
            return None
    return None


def caller_memory(label: str, name: str, memory: Any) -> tuple[np.ndarray[Any, Any], bool]:
    """A caller's host memory for a zero-copy binding: (a C-contiguous array over it, in its own dtype, whether that
    memory may move while the array lives). Buffer-protocol objects, then `__dlpack__` tensors (PyTorch's...); a
    BindingError for anything else, whatever the object's protocols raise."""
    array = memory if isinstance(memory, np.ndarray) else _buffer_array(memory, raw=True)
    if array is None:
        kind = _kind(memory)
        if _attribute(label, name, memory, "__dlpack__") is None:
            raise BindingError(f"{label}: {name} is bound to a {kind}, which is not a contiguous buffer (it has "
                               f"neither the buffer protocol nor __dlpack__)")
        try:
            array = np.from_dlpack(memory)
        except Exception as error:  # a third-party __dlpack__ or __dlpack_device__ may raise anything
            raise BindingError(f"{label}: {name} is bound to a {kind} whose __dlpack__ could not be bound "
                               f"({error_text(error)})") from None
    if not array.flags.c_contiguous:
        raise BindingError(f"{label}: {name} is bound to a {_kind(memory)}, which is not a contiguous buffer "
                           f"(strides {list(array.strides)}); bind contiguous memory")
    return array, not isinstance(memory, _PINNED)


def _kind(value: Any) -> str:
    """The type name of a caller's object for a message, as a terminal shows it (a class may be named anything)."""
    return printable(type(value).__name__)


def _place(array: np.ndarray[Any, Any]) -> tuple[int, int, Any]:
    """Where a caller's memory lies: (address, size in bytes, dtype and writability), compared at every dispatch."""
    return array.__array_interface__["data"][0], array.nbytes, (array.dtype, array.flags.writeable)


def zero_copy_array(label: str, name: str, value: Any) -> np.ndarray[Any, Any] | None:
    """`value` as a NumPy array over its own memory, the way NumPy takes it without a copy: an ndarray itself, a
    buffer-protocol object (with its shape and format), or a CPU tensor with `__dlpack__` (PyTorch, JAX, CuPy's
    host arrays...); None for anything else (lists included: their dtype is NumPy's guess, not the caller's), and
    a BindingError naming the input where a `__dlpack__` that exists fails and no `__array__` is there instead."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (str, list, tuple)) or value is None:
        return None
    array = _buffer_array(value)
    if array is not None or _attribute(label, name, value, "__dlpack__") is None:
        return array
    try:
        return np.from_dlpack(value)
    except Exception as error:  # e.g. a tensor on another device; __array__ may still copy it
        if _attribute(label, name, value, "__array__") is None:
            raise BindingError(f"{label}: {name} could not be read as an array (its __dlpack__ raised "
                               f"{error_text(error)})") from None
        return None


def logical_array(label: str, name: str, value: Any) -> np.ndarray[Any, Any]:
    """A logical input array: what `zero_copy_array` takes, or an object with `__array__` (which may copy: the
    array is only read), else a BindingError naming the input. Every protocol of a caller's object is called
    guarded: whatever it raises becomes that BindingError."""
    array = zero_copy_array(label, name, value)
    if array is None and not isinstance(value, (str, list, tuple)) and value is not None \
            and _attribute(label, name, value, "__array__") is not None:
        try:
            array = np.asarray(value)
        except Exception as error:  # a third-party __array__ may raise anything
            raise BindingError(f"{label}: {name} could not be read as an array ({error_text(error)})") from None
    if array is None:
        raise BindingError(f"{label}: {name} must be {ARRAY_KINDS}; got {type(value).__name__}")
    return array


def _layout(label: str, name: str, desc: TensorDesc, array: Any) -> np.ndarray[Any, Any]:
    """A fresh byte buffer holding `array` at the tensor's strides."""
    dtype = desc.data_type.numpy_dtype
    array = logical_array(label, name, array)
    if array.shape != desc.sizes:
        raise BindingError(f"{label}: {name} array has shape {list(array.shape)}; it must be Sizes "
                           f"{list(desc.sizes)}")
    if array.dtype != dtype:
        raise BindingError(f"{label}: {name} array has dtype {array.dtype}; DataType {desc.data_type.name} needs "
                           f"{dtype}")
    buffer = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
    target = _strided(desc, buffer)
    target[...] = array
    if not np.array_equal(target, array, equal_nan=desc.data_type.is_float):
        raise BindingError(f"{label}: {name} array differs along a dimension whose stride is 0; such a tensor "
                           f"holds one value along it")
    return buffer
