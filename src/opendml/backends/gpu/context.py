"""The WebGPU side of the GPU backend: the adapter and device, device memory, pipelines and the recording of
dispatches.

One `GpuContext` per adapter, shared by every `dml.Device(backend="gpu")` that picks it: a wgpu device is costly to
create, and pipelines (keyed by their WGSL source) are built once per context. Every dispatch goes through a
`Recorder`: a command encoder with the bind groups and parameter buffers it needs. `execute` records and submits at
once; inside `GpuContext.batch()` (a compiled graph, a DxDispatch model) every execute records into one encoder,
which is submitted when the batch ends.
"""

from __future__ import annotations

import atexit
import math
import os
import shutil
import sys
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...convert import to_read_layout
from ...errors import UnsupportedError
from .. import DeviceMemory, bytes_to_write, host_array

#: What to install when no adapter is found, for messages.
INSTALL_HINT = ("install opendml's gpu extra (pip install 'opendml[gpu]', or pip install -e '.[gpu]' in a checkout of "
                "opendml; it brings wgpu) and a Vulkan, Metal or D3D12 driver (on Linux without a GPU: Debian's "
                "mesa-vulkan-drivers, lavapipe)")

#: Features requested when the adapter offers them.
WANTED_FEATURES = ("shader-int64", "shader-f16", "subgroup", "timestamp-query")

WORKGROUP_SIZE = 256
#: Entries kept for reuse, the least recently used dropped first: bind groups with their parameter buffers (a
#: dispatch made again on the same ranges and parameters) and kernels' dispatches (a compiled operator executed again
#: on the same device ranges: `GpuKernel`).
CACHE_SIZE = 4096
#: Work-groups per dimension of a dispatch (WebGPU's guaranteed minimum of maxComputeWorkgroupsPerDimension).
MAX_GROUPS_PER_DIMENSION = 65535


def import_wgpu() -> Any:
    """The wgpu module, imported once a runtime directory is set (`private_runtime_dir`)."""
    private_runtime_dir()
    try:
        import wgpu
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise UnsupportedError(f"Device: the gpu backend needs the wgpu package ({error}); {INSTALL_HINT}") from None
    return wgpu


def private_runtime_dir() -> None:
    """Sets XDG_RUNTIME_DIR to a private directory (0700, removed at exit) where it is unset or not an absolute path,
    on Linux and the BSDs, before wgpu creates its instance: Mesa's Vulkan drivers look for a Wayland display there
    and, without one, print "error: XDG_RUNTIME_DIR is invalid or not set in the environment." to stderr, once per
    adapter probed (4-6 lines on a headless machine). The driver's other messages are left alone."""
    if os.name != "posix" or sys.platform == "darwin" or os.environ.get("XDG_RUNTIME_DIR", "").startswith("/"):
        return
    folder = tempfile.mkdtemp(prefix="opendml-runtime-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["XDG_RUNTIME_DIR"] = folder


@dataclass(frozen=True)
class AdapterInfo:
    """One WebGPU adapter, as `dml.list_adapters()` reports it."""

    name: str
    vendor: str
    backend: str        # Vulkan, Metal, D3D12, OpenGL
    device_type: str    # DiscreteGPU, IntegratedGPU, CPU, ...

    def __str__(self) -> str:
        return f"{self.name} ({self.vendor or 'unknown vendor'}, {self.backend}, {self.device_type})"


def _info(adapter: Any) -> AdapterInfo:
    info = adapter.info
    return AdapterInfo(name=str(info.get("device", "")), vendor=str(info.get("vendor", "")),
                       backend=str(info.get("backend_type", "")), device_type=str(info.get("adapter_type", "")))


_adapters: list[Any] | None = None
_adapters_lock = threading.Lock()


def _compute_adapters() -> list[Any]:
    """Every adapter that can run compute shaders, the native ones first (the OpenGL fallback last)."""
    global _adapters
    with _adapters_lock:
        if _adapters is None:
            wgpu = import_wgpu()
            found = list(wgpu.gpu.enumerate_adapters_sync())
            _adapters = sorted(found, key=lambda adapter: _info(adapter).backend == "OpenGL")
        return list(_adapters)


def list_adapters() -> list[AdapterInfo]:
    """The WebGPU adapters of this machine (name, vendor, backend, device type); empty when there are none."""
    try:
        adapters = _compute_adapters()
    except UnsupportedError:
        return []
    return [_info(adapter) for adapter in adapters]


_contexts: dict[str | None, GpuContext] = {}
_contexts_lock = threading.Lock()


def get_context(adapter: str | None) -> GpuContext:
    """The shared context of the adapter that `adapter` selects: None picks the high-performance adapter, a string
    the first adapter whose name contains it (case-insensitive)."""
    with _contexts_lock:
        context = _contexts.get(adapter)
        if context is None:
            chosen = _pick(adapter)
            # Selectors that pick the same adapter share its context (one wgpu device per adapter), so that the
            # buffers of Device(backend="gpu") bind on Device(backend="gpu", adapter=its name) and pipelines are
            # built once.
            context = next((known for known in _contexts.values() if known.adapter is chosen), None)
            if context is None:
                context = GpuContext(chosen)
            _contexts[adapter] = context
        return context


def _pick(selector: str | None) -> Any:
    adapters = _compute_adapters()
    if not adapters:
        raise UnsupportedError(f"Device: backend 'gpu' found no GPU adapter on this machine; {INSTALL_HINT}")
    if selector is None:
        wgpu = import_wgpu()
        chosen = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if chosen is None or _info(chosen).backend == "OpenGL":
            return adapters[0]
        # The listed adapter that it is (request_adapter_sync returns a new object), so that contexts match it.
        return next((adapter for adapter in adapters if _info(adapter) == _info(chosen)), chosen)
    for adapter in adapters:
        if selector.lower() in _info(adapter).name.lower():
            return adapter
    names = "; ".join(str(_info(adapter)) for adapter in adapters)
    raise UnsupportedError(f"Device: no GPU adapter's name contains {selector!r}; the adapters are: {names}")


class GpuBuffer(DeviceMemory):
    """Device memory (a WebGPU storage buffer), as `Device.create_buffer` returns it on the gpu backend.

    `dml.Binding(buffer, offset, size)` binds a range of it; `read()` copies it back to the host.
    """

    def __init__(self, context: GpuContext, size: int, handle: Any) -> None:
        self.context = context
        self.size = size
        self.handle = handle

    def __repr__(self) -> str:
        return f"GpuBuffer({self.size} bytes on {self.context.adapter_info.name!r})"

    def __len__(self) -> int:
        return self.size

    def read(self, dtype: Any = None, shape: int | Sequence[int] | None = None) -> Any:
        """The buffer's bytes (`bytes`), or with a dtype, a new NumPy array of that dtype (and shape: an int or a
        list of ints, one of them -1 at most); the rules are convert.to_read_layout's, as HostBuffer.read."""
        layout = to_read_layout("GpuBuffer.read", dtype, shape, self.size)
        if layout is None:
            return self.context.read(self.handle, 0, self.size)
        numpy_dtype, dims = layout
        return host_array(self.context.read(self.handle, 0, math.prod(dims) * numpy_dtype.itemsize), *layout)

    def write(self, data: Any, offset: int = 0) -> None:
        """Copies host bytes (bytes-like, or an array of numbers in row-major order) into the buffer at `offset` (a
        multiple of 4); the rules are convert.to_write_bytes's, as HostBuffer.write."""
        raw, start = bytes_to_write("GpuBuffer.write", data, offset, self.size)
        self.context.write(self.handle, start, raw)


@dataclass(frozen=True)
class Bound:
    """A tensor's bound range on the device: WebGPU binds [bind_offset, bind_offset + bind_size) of `handle`, and
    the tensor's element 0 is element `base` of that range (DML's 16-byte offsets are finer than the adapter's
    binding alignment)."""

    handle: Any
    bind_offset: int
    bind_size: int
    base: int


class GpuContext:
    """A wgpu device on one adapter, with everything built for it."""

    def __init__(self, adapter: Any) -> None:
        wgpu = import_wgpu()
        self.wgpu = wgpu
        self.adapter = adapter
        self.adapter_info = _info(adapter)
        self.features = frozenset(feature for feature in WANTED_FEATURES if feature in adapter.features)
        # The adapter's own limits, not WebGPU's defaults: large tensors need its full binding size.
        self.limits = dict(adapter.limits)
        self.device = adapter.request_device_sync(required_features=sorted(self.features),
                                                  required_limits=self.limits)
        self.queue = self.device.queue
        self.offset_alignment = int(self.limits["min-storage-buffer-offset-alignment"])
        self.max_binding_size = int(self.limits["max-storage-buffer-binding-size"])
        self.max_buffer_size = int(self.limits["max-buffer-size"])
        self.max_storage_buffers = int(self.limits["max-storage-buffers-per-shader-stage"])
        # Tree reductions finish in registers over this many neighbouring invocations (0: all in workgroup memory;
        # see tree.py). `directives` open every shader: f16 for FLOAT16 inputs (wgsl.tensor_input), subgroups.
        self.subgroup_width, subgroup_directives = self._subgroups()
        self.directives = ("enable f16;\n" if self.f16 else "") + subgroup_directives
        self.lock = threading.RLock()
        self._pipelines: dict[tuple[str, int], Any] = {}
        self._layouts: dict[int, tuple[Any, Any]] = {}
        # The cache (`cached`, `remember`): each entry with the ids of the buffers it was made from. Its keys by the
        # id of each buffer they name, and the ids of buffers collected since: an entry is dropped once a buffer it
        # names is gone (the cache holds no buffer, so that dropped device buffers and a NumPy call's upload buffers
        # are freed), before that id can name another buffer.
        self._groups: OrderedDict[tuple[Any, ...], tuple[Any, tuple[int, ...]]] = OrderedDict()
        self._group_keys: dict[int, set[tuple[Any, ...]]] = {}
        self._collected: list[int] = []
        self._batch: threading.local = threading.local()
        self.usage = (wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
        self.native = native_calls(self.device, self.queue)

    def __repr__(self) -> str:
        return f"GpuContext({self.adapter_info})"

    @property
    def f16(self) -> bool:
        """Whether shaders may use f16 (the adapter's shader-f16): FLOAT16 inputs are then read as f16."""
        return "shader-f16" in self.features

    def _subgroups(self) -> tuple[int, str]:
        """(the adapter's smallest subgroup size, the directives its shaders need for subgroup operations), or
        (0, "") where it offers none. Some WGSL compilers want `enable subgroups;`, others refuse it: a probe
        decides."""
        if "subgroup" not in self.features:
            return 0, ""
        info = self.adapter.info
        # wgpu 0.32 spells the key "stackgroup_min_size".
        width = int(info.get("subgroup_min_size", info.get("stackgroup_min_size", 0)) or 0)
        if width < 2 or width > 128 or width & (width - 1):
            return 0, ""
        probe = ("@compute @workgroup_size(1)\nfn main(@builtin(subgroup_size) size: u32) "
                 "{ _ = subgroupShuffleDown(size, 1u); }\n")
        for directives in ("", "enable subgroups;\n"):
            try:
                self.device.create_shader_module(code=directives + probe)
            except self.wgpu.GPUError:
                continue
            return width, directives
        return 0, ""

    # -- memory -----------------------------------------------------------------------------------------------

    def allocate(self, size: int) -> Any:
        """A zero-filled storage buffer of at least `size` bytes (WebGPU sizes are multiples of 4). The cached
        entries of buffers collected since go first: their bind groups hold the device memory of those buffers."""
        padded = max(4, -(-size // 4) * 4)
        if padded > self.max_buffer_size:
            raise UnsupportedError(f"Device.create_buffer: {size} bytes exceed the adapter's max-buffer-size "
                                   f"({self.max_buffer_size} bytes)")
        with self.lock:
            self._drop_collected()
        return self.device.create_buffer(size=padded, usage=self.usage)

    def create_buffer(self, source: int | np.ndarray[Any, Any]) -> GpuBuffer:
        if isinstance(source, np.ndarray):
            data = np.ascontiguousarray(source).reshape(-1).view(np.uint8)
            handle = self.allocate(data.size)
            if data.size:
                self.write(handle, 0, data)
            return GpuBuffer(self, data.size, handle)
        return GpuBuffer(self, source, self.allocate(source))

    def write(self, handle: Any, offset: int, data: np.ndarray[Any, Any]) -> None:
        """Host bytes into a buffer; a length that is not a multiple of 4 keeps the buffer's bytes after it."""
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        whole = data.size - data.size % 4
        with self.lock:
            if whole:
                self.queue.write_buffer(handle, offset, data[:whole])
            if data.size % 4:
                tail = np.frombuffer(self.read(handle, offset + whole, 4), np.uint8).copy()
                tail[: data.size % 4] = data[whole:]
                self.queue.write_buffer(handle, offset + whole, tail)

    def read(self, handle: Any, offset: int, size: int) -> bytes:
        """Bytes [offset, offset + size) of a buffer, after everything submitted so far."""
        start = offset - offset % 4
        end = -(-(offset + size) // 4) * 4
        with self.lock:
            self.flush()
            data = bytes(self.queue.read_buffer(handle, start, end - start)) if end > start else b""
        return data[offset - start: offset - start + size]

    # -- pipelines ----------------------------------------------------------------------------------------------

    def layout(self, storage_count: int) -> tuple[Any, Any]:
        """(bind group layout, pipeline layout) of `storage_count` read-write storage buffers at bindings 0.. and a
        read-only parameter buffer after them. Every tensor binding is read-write, so that ranges of one buffer
        (a graph's arena) may be bound as inputs and outputs of the same dispatch."""
        cached = self._layouts.get(storage_count)
        if cached is None:
            wgpu = self.wgpu
            entries = [{"binding": index, "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": wgpu.BufferBindingType.storage}} for index in range(storage_count)]
            entries.append({"binding": storage_count, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": wgpu.BufferBindingType.read_only_storage}})
            group_layout = self.device.create_bind_group_layout(entries=entries)
            cached = (group_layout, self.device.create_pipeline_layout(bind_group_layouts=[group_layout]))
            self._layouts[storage_count] = cached
        return cached

    def pipeline(self, source: str, storage_count: int) -> Any:
        """The compute pipeline of a WGSL source (entry point `main`), built once per context."""
        key = (source, storage_count)
        with self.lock:
            pipeline = self._pipelines.get(key)
            if pipeline is None:
                module = self.device.create_shader_module(code=self.directives + source)
                pipeline = self.device.create_compute_pipeline(
                    layout=self.layout(storage_count)[1], compute={"module": module, "entry_point": "main"})
                self._pipelines[key] = pipeline
        return pipeline

    def bind_group(self, source: str, bindings: Sequence[Bound | Any], params: np.ndarray[Any, Any]
                   ) -> tuple[Any, Any]:
        """The bind group of a dispatch and its parameter buffer; the same ranges and parameters (a compiled
        operator dispatched again on the same bindings) reuse the ones made the first time."""
        params = np.array(params, dtype=np.uint32)
        ranges: list[tuple[Any, int, int]] = []
        for index, binding in enumerate(bindings):
            if isinstance(binding, Bound):
                params[index] = binding.base
                ranges.append((binding.handle, binding.bind_offset, binding.bind_size))
            else:
                ranges.append((binding, 0, binding.size))
        data = params.tobytes() if params.size else b"\0" * 4
        key = ("group", tuple((id(handle), offset, size) for handle, offset, size in ranges), data)
        with self.lock:
            cached: tuple[Any, Any] | None = self.cached(key)
            if cached is not None:
                return cached
            wgpu = self.wgpu
            params_buffer = self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.STORAGE)
            entries = [{"binding": index, "resource": {"buffer": handle, "offset": offset, "size": size}}
                       for index, (handle, offset, size) in enumerate(ranges)]
            entries.append({"binding": len(bindings), "resource": {"buffer": params_buffer, "offset": 0,
                                                                   "size": params_buffer.size}})
            group = self.device.create_bind_group(layout=self.layout(len(bindings))[0], entries=entries)
            self.remember(key, (group, params_buffer), [handle for handle, _, _ in ranges])
            return group, params_buffer

    def cached(self, key: tuple[Any, ...]) -> Any:
        """What `remember` cached under `key`, or None. Entries that name a buffer collected since are dropped
        first, so a key that names a buffer by id never finds what another buffer with that id left. Under the
        lock."""
        self._drop_collected()
        entry = self._groups.get(key)
        if entry is None:
            return None
        self._groups.move_to_end(key)
        return entry[0]

    def remember(self, key: tuple[Any, ...], value: Any, handles: Sequence[Any]) -> None:
        """Caches `value` (not None) under `key`, which names the buffers `handles` (wgpu buffers) by id; the entry
        is dropped once any of them is collected. The cache holds none of them. Under the lock."""
        self._drop_collected()     # so that no id below still names a collected buffer
        ids = tuple({id(handle): None for handle in handles})
        self._groups[key] = (value, ids)
        for handle in handles:
            keys = self._group_keys.get(id(handle))
            if keys is None:
                keys = self._group_keys[id(handle)] = set()
                # Runs when the buffer is collected (any thread, maybe under the lock): only records its id.
                weakref.finalize(handle, self._collected.append, id(handle))
            keys.add(key)
        if len(self._groups) > CACHE_SIZE:
            evicted, (_, evicted_ids) = self._groups.popitem(last=False)
            for handle_id in evicted_ids:
                self._group_keys.get(handle_id, set()).discard(evicted)

    def _drop_collected(self) -> None:
        """Drops the cached entries that name a buffer collected since the last call."""
        collected = self._collected
        while collected:
            for stale in self._group_keys.pop(collected.pop(), ()):
                self._groups.pop(stale, None)

    # -- recording ----------------------------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every dispatch recorded inside goes into one command encoder, submitted when the outermost batch ends."""
        with self.lock:
            outer = getattr(self._batch, "recorder", None)
            if outer is not None:
                yield
                return
            self._batch.recorder = Recorder(self)
            try:
                yield
            finally:
                # The batch's current recorder (a read inside the batch submitted the earlier ones: `flush`). It is
                # submitted even when the batch raised: the executes that returned take effect, as on the cpu.
                recorder: Recorder = self._batch.recorder
                self._batch.recorder = None
                recorder.submit()

    @contextmanager
    def capture(self) -> Iterator[list[Dispatch]]:
        """A batch whose dispatches are also listed in the list it yields, so that `run` can record them again
        (a compiled graph's nodes, whose bindings never change) without binding, planning or checking anything."""
        with self.lock, self.batch():
            outer = getattr(self._batch, "log", None)
            work: list[Dispatch] = []
            self._batch.log = work
            try:
                yield work
            finally:
                self._batch.log = outer
                if outer is not None:
                    outer.extend(work)

    def run(self, work: Sequence[Dispatch]) -> None:
        """Records dispatches made before (`make_dispatch`; captured ones, to replay them) into the current batch
        (listed where a capture is under way), or records and submits them on their own: where wgpu-native's calls
        are at hand, straight through them (`NativeCalls.run`), with no Recorder."""
        with self.lock:
            current: Recorder | None = getattr(self._batch, "recorder", None)
            if current is not None:
                current.record(work)
            elif self.native is not None:
                self.native.run(work)
            else:
                recorder = Recorder(self)
                recorder.replay(work)
                recorder.submit()

    def recorder(self) -> tuple[Recorder, bool]:
        """(the batch's recorder, False) inside a batch, else (a new recorder, True: the caller submits it)."""
        current: Recorder | None = getattr(self._batch, "recorder", None)
        if current is not None:
            return current, False
        return Recorder(self), True

    def flush(self) -> None:
        """Submits what the current batch has recorded so far (before a host read inside a batch)."""
        current: Recorder | None = getattr(self._batch, "recorder", None)
        if current is not None:
            current.submit()
            self._batch.recorder = Recorder(self)


def group_counts(count: int, per_group: int = WORKGROUP_SIZE) -> tuple[int, int]:
    """(x, y) work-group counts covering `count` invocations of `per_group` each; shaders number them
    x + y * num_workgroups.x."""
    groups = max(1, -(-count // per_group))
    if groups <= MAX_GROUPS_PER_DIMENSION:
        return groups, 1
    rows = -(-groups // MAX_GROUPS_PER_DIMENSION)
    return -(-groups // rows), rows


@dataclass(frozen=True)
class Dispatch:
    """One recorded dispatch: its pipeline, bind group (with the parameter buffer it binds) and work-group counts
    (x, y, z)."""

    pipeline: Any
    group: Any
    params_buffer: Any
    groups: tuple[int, ...]


def make_dispatch(context: GpuContext, source: str, bindings: Sequence[Bound | Any], params: np.ndarray[Any, Any],
                  groups: tuple[int, int] | tuple[int, int, int]) -> Dispatch:
    """One dispatch of `source` over `bindings` with `params` (as `Recorder.dispatch` takes them), made (its
    pipeline, bind group and parameter buffer) but not recorded."""
    return Dispatch(context.pipeline(source, len(bindings)), *context.bind_group(source, bindings, params),
                    (*groups, 1, 1)[:3])


class Recorder:
    """A command encoder and the small buffers its dispatches need; `submit` sends it to the queue."""

    def __init__(self, context: GpuContext) -> None:
        self.context = context
        native = self._native = context.native     # the calls this recording makes (None: wgpu's public API)
        # The command encoder: wgpu's object, or where _native is set wgpu-native's handle, which `encoder` wraps in
        # wgpu's object where something asks for one (the object then releases it; until then, this recording).
        self._encoder: Any = None
        self._handle: Any = None
        if native is None:
            self._encoder = context.device.create_command_encoder()
        else:
            self._handle = native.create_encoder(native.device, native.null)
        self._pass: Any = None          # the open compute pass (wgpu-native's handle where _native is set)
        self._pipeline: Any = None      # the current pass's pipeline
        self.keep: list[Any] = []     # buffers and bind groups that must live until submission

    @property
    def encoder(self) -> Any:
        """wgpu's command encoder of this recording (for commands the Recorder does not make itself)."""
        if self._encoder is None:
            assert self._native is not None and self._handle is not None, "the recording was submitted"
            self._encoder = self._native.wrap_encoder("", self._handle, self.context.device)
        return self._encoder

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)     # None once submitted (and in a StagedRecorder)
        if handle is not None and self._encoder is None and self._native is not None:
            self._native.release_encoder(handle)

    def dispatch(self, source: str, bindings: Sequence[Bound | Any], params: np.ndarray[Any, Any],
                 groups: tuple[int, int] | tuple[int, int, int]) -> None:
        """Records one dispatch of `source` over `bindings` (Bound ranges or whole scratch buffers, at bindings
        0..) with `params` (u32; each Bound's base element is written at params[index] first)."""
        self.record((make_dispatch(self.context, source, bindings, params, groups),))

    def record(self, work: Sequence[Dispatch]) -> None:
        """Records dispatches made for this recording (by `dispatch`, or all of a kernel's at once), listing them
        where a `capture` is under way."""
        self.replay(work)
        log: list[Dispatch] | None = getattr(self.context._batch, "log", None)
        if log is not None:
            log.extend(work)

    def replay(self, work: Sequence[Dispatch]) -> None:
        """Records dispatches made before (by `dispatch`) again."""
        native = self._native
        if native is None:
            if self._pass is None:
                self._pass = self.encoder.begin_compute_pass()
                self._pipeline = None
            compute = self._pass
            for step in work:
                if step.pipeline is not self._pipeline:     # a pass keeps its pipeline from one dispatch to the next
                    compute.set_pipeline(step.pipeline)
                    self._pipeline = step.pipeline
                compute.set_bind_group(0, step.group)
                compute.dispatch_workgroups(*step.groups)
            return
        if self._pass is None:
            self._pass = native.begin_pass(self._handle, native.null)
            self._pipeline = None
        self._pipeline = native.record(self._pass, work, self._pipeline)

    def copy(self, source: Any, source_offset: int, target: Any, target_offset: int, size: int) -> None:
        """A buffer-to-buffer copy (offsets and size multiples of 4)."""
        self.end_pass()
        if size:
            self.encoder.copy_buffer_to_buffer(source, source_offset, target, target_offset, size)

    def end_pass(self) -> None:
        compute, self._pass = self._pass, None
        if compute is None:
            return
        native = self._native
        if native is None:
            compute.end()
            return
        try:
            native.end_pass(compute)
        finally:
            native.release_pass(compute)

    def submit(self) -> None:
        self.end_pass()
        native = self._native
        if native is None:
            self.context.queue.submit([self.encoder.finish()])
        else:
            handle, self._handle = self._handle, None
            try:
                commands = native.finish(handle, native.null)
            finally:
                if self._encoder is None:
                    native.release_encoder(handle)
            try:
                native.submit(native.queue, 1, native.new("WGPUCommandBuffer[]", [commands]))
            finally:
                native.release_commands(commands)
        self.keep.clear()


class NativeCalls:
    """wgpu-native's C functions for the calls that every dispatch repeats (create a command encoder, begin a compute
    pass, set its pipeline and bind group, dispatch, end it, finish the encoder, submit), called through wgpu's own
    cffi library: wgpu's Python methods around them (a descriptor struct, a label, an error-capturing proxy, an
    object per call) cost more host time than the calls themselves. The per-dispatch calls go to the library
    directly; creating an encoder, ending a pass, finishing and submitting go through wgpu's error-capturing proxies
    (wgpu-core reports a pass's errors there), so an error still raises as it does through the public API. `run`, a
    whole submission in one call, captures the errors of all its calls at once instead."""

    def __init__(self, device: Any, queue: Any) -> None:
        from wgpu.backends.wgpu_native import _api, _helpers

        bare, checked, ffi = _api.lib, _api.libf, _api.ffi
        self.null = ffi.NULL
        self.new = ffi.new
        self.device = device._internal
        self.queue = queue._internal
        self.create_encoder = checked.wgpuDeviceCreateCommandEncoder
        self.wrap_encoder = _api.GPUCommandEncoder     # (label, handle, device): wgpu's object, which releases it
        self.release_encoder = bare.wgpuCommandEncoderRelease
        self.begin_pass = bare.wgpuCommandEncoderBeginComputePass
        self.set_pipeline = bare.wgpuComputePassEncoderSetPipeline
        self.set_bind_group = bare.wgpuComputePassEncoderSetBindGroup
        self.dispatch = bare.wgpuComputePassEncoderDispatchWorkgroups
        self.end_pass = checked.wgpuComputePassEncoderEnd
        self.release_pass = bare.wgpuComputePassEncoderRelease
        self.finish = checked.wgpuCommandEncoderFinish
        self.submit = checked.wgpuQueueSubmit
        self.release_commands = bare.wgpuCommandBufferRelease
        # For `run`: the unchecked calls, wgpu's error handler (wgpu-native's error callback hands every error to
        # the slot on top of its stack for this thread) and wgpu's error classes by wgpu-native's error type.
        self._bare = bare
        self._errors = _api.error_handler
        self._error_slot = _helpers.ErrorSlot
        self._error_types = _helpers.ERROR_TYPES
        self._gpu_error = _helpers.GPUError
        self._commands = ffi.new("WGPUCommandBuffer[1]")    # the submitted command buffer (run is under the lock)

    def record(self, compute: Any, work: Sequence[Dispatch], current: Any) -> Any:
        """Records `work` into the open compute pass `compute`, whose pipeline is `current` (None: not set), and
        returns its pipeline after them (a pass keeps its pipeline from one dispatch to the next)."""
        set_pipeline, set_bind_group, dispatch, null = self.set_pipeline, self.set_bind_group, self.dispatch, self.null
        for step in work:
            if step.pipeline is not current:
                current = step.pipeline
                set_pipeline(compute, current._internal)
            set_bind_group(compute, 0, step.group._internal, 0, null)
            dispatch(compute, *step.groups)
        return current

    def run(self, work: Sequence[Dispatch]) -> None:
        """Records `work` into a command encoder of its own and submits it, under the context's lock. The calls go
        to wgpu-native unchecked, under one error slot of wgpu's handler: an error in recording (wgpu-core reports a
        pass's errors when it ends, and an encoder's when it is finished) raises before anything is submitted, as
        wgpu's checked calls raise it, and nothing of the recording runs."""
        bare, null = self._bare, self.null
        slot = self._error_slot("opendml.run")
        stack = self._errors._get_proxy_stack()
        stack.append(slot)
        encoder = compute = commands = None
        try:
            encoder = bare.wgpuDeviceCreateCommandEncoder(self.device, null)
            compute = bare.wgpuCommandEncoderBeginComputePass(encoder, null)
            self.record(compute, work, None)
            bare.wgpuComputePassEncoderEnd(compute)
            if slot.message is None:
                commands = bare.wgpuCommandEncoderFinish(encoder, null)
                if slot.message is None:
                    self._commands[0] = commands
                    bare.wgpuQueueSubmit(self.queue, 1, self._commands)
        finally:
            if commands is not None:
                bare.wgpuCommandBufferRelease(commands)
            if compute is not None:
                bare.wgpuComputePassEncoderRelease(compute)
            if encoder is not None:
                bare.wgpuCommandEncoderRelease(encoder)
            if stack and stack[-1] is slot:
                stack.pop()
        if slot.message is not None:
            raise self._error_types.get(slot.type, self._gpu_error)(slot.message)


def native_calls(device: Any, queue: Any) -> NativeCalls | None:
    """The direct calls (`NativeCalls`), or None where wgpu's internals are not the ones they were written for (a
    wgpu without wgpu-native's cffi backend) or OPENDML_GPU_NATIVE=0: the Recorder then uses wgpu's public API."""
    if os.environ.get("OPENDML_GPU_NATIVE", "1") == "0":
        return None
    try:
        return NativeCalls(device, queue)
    except (ImportError, AttributeError):
        return None
