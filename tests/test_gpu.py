"""The GPU backend's core, and the device-memory model both backends share.

This module is in conftest's EVERY_BACKEND: each test runs once per backend (`[cpu-...]`, `[gpu-...]`), its devices
made with the default backend. Tests of the memory model (create_buffer, read, Binding over device memory, batches,
bad bindings, sentinel bytes, determinism, threads) run the same code on both, which is the point: code written for
one backend runs unchanged on the other. Where the two backends differ (adapters, WebGPU's limits and features, whose
buffer a device accepts), the two variants of one test check each backend's side of the same rule. SPLIT is the
operator throughout: it moves raw bits of every type, so every result is checked bit for bit.

The WebGPU details covered here: DML's binding offsets are multiples of 16 while WebGPU binds at multiples of the
adapter's min-storage-buffer-offset-alignment, so the shader takes the remainder as an element offset (checked for
every element size, at the adapter's own alignment and at 256, the common alignment of discrete GPUs); 8- and 16-bit
outputs are written whole 32-bit words at a time, so every byte around their elements must survive (sentinel
bytes); a tensor larger than one binding is refused by name of the limit; 64-bit integers need shader-int64.
"""

from __future__ import annotations

import gc
import re
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from strategies import addressed_byte_mask, build_buffer, read_buffer, sentinel_bytes, tensor_size_in_bytes
from test_concurrency import run_threads

import opendml as dml
from opendml.backends import DeviceMemory, HostBuffer

T = dml.TensorDesc
PREFIX = r"DML_OPERATOR_SPLIT: "
#: One type per element size (1, 2, 4 and 8 bytes), each moved bit for bit by SPLIT.
BY_SIZE = {1: "UINT8", 2: "FLOAT16", 4: "FLOAT32", 8: "FLOAT64"}
NUMPY = {"UINT8": np.uint8, "INT8": np.int8, "UINT16": np.uint16, "INT16": np.int16, "FLOAT16": np.float16,
         "FLOAT32": np.float32, "FLOAT64": np.float64, "INT64": np.int64, "UINT64": np.uint64}


def gpu_context(device: dml.Device) -> Any:
    """The GpuContext behind a gpu device."""
    return device.backend.context  # type: ignore[attr-defined]


def compile_split(device: dml.Device, input_tensor: dml.TensorDesc, output_tensors: list[dml.TensorDesc],
                  axis: int) -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(dml.SplitOperatorDesc(input_tensor, output_tensors, axis)))


def random_bits(shape: tuple[int, ...], type_name: str, seed: int) -> np.ndarray:
    """Any bit pattern of the type (NaN payloads, -0.0, subnormals): SPLIT must move them all exactly."""
    dtype = np.dtype(NUMPY[type_name])
    raw = np.random.default_rng(seed).integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    return got.shape == expected.shape and np.array_equal(got.view(unsigned), expected.view(unsigned))


def memory_of(device: dml.Device, kind: str, data: np.ndarray) -> Any:
    """`data`'s bytes as the device's memory (create_buffer: device memory on the gpu, host memory on the cpu) or as
    a plain NumPy array (host memory on either)."""
    return device.create_buffer(data) if kind == "device" else data.copy()


def bytes_of(memory: Any) -> np.ndarray:
    """The current bytes of memory made by `memory_of`."""
    if isinstance(memory, DeviceMemory | HostBuffer):
        return np.frombuffer(memory.read(), np.uint8)
    return np.asarray(memory).view(np.uint8).reshape(-1)


# -- adapters ---------------------------------------------------------------------------------------------------------

@contextmanager
def no_adapters(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This machine as one without any adapter: the adapter list empty, no context cached."""
    from opendml.backends.gpu import context

    monkeypatch.setattr(context, "_adapters", [])
    monkeypatch.setattr(context, "_contexts", {})
    yield


def test_list_adapters(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu: every adapter's fields, native adapters before OpenGL; cpu: a machine without adapters lists none and
    refuses a gpu device, naming what to install (simulated, so that this runs on any machine)."""
    if backend == "cpu":
        with no_adapters(monkeypatch):
            assert dml.list_adapters() == []
            with pytest.raises(dml.UnsupportedError,
                               match=r"^Device: backend 'gpu' found no GPU adapter on this machine; install opendml's "
                                     r"gpu extra \(pip install 'opendml\[gpu\]', or pip install -e '\.\[gpu\]' "
                                     r"in a checkout of opendml; it brings wgpu\) and a Vulkan, Metal or D3D12 driver "
                                     r"\(on Linux without a GPU: Debian's mesa-vulkan-drivers, lavapipe\)$"):
                dml.Device(backend="gpu")
            assert repr(dml.Device()).startswith("Device(") and dml.Device().backend.name == "cpu"
        return
    adapters = dml.list_adapters()
    assert adapters
    for info in adapters:
        for field in (info.name, info.vendor, info.backend, info.device_type):
            assert isinstance(field, str)
        assert info.name
        assert info.backend in ("Vulkan", "Metal", "D3D12", "OpenGL")
        assert info.device_type in ("DiscreteGPU", "IntegratedGPU", "VirtualGPU", "CPU", "Unknown")
        assert re.fullmatch(rf"{re.escape(info.name)} \(.+, {info.backend}, {info.device_type}\)", str(info))
    backends = [info.backend for info in adapters]
    assert backends == sorted(backends, key=lambda name: name == "OpenGL"), "OpenGL adapters come last"
    chosen = dml.Device(backend="gpu").backend.adapter  # type: ignore[attr-defined]
    assert chosen in adapters and chosen.backend != "OpenGL"


def test_adapter_selection(backend: str) -> None:
    """gpu: adapter=<part of a name> picks that adapter (case-insensitive), sharing its context with every device on
    it; an unknown name is refused with the list. cpu: an adapter is refused (it selects a GPU)."""
    if backend == "cpu":
        with pytest.raises(dml.UnsupportedError, match=r"^Device: adapter 'llvmpipe' was given for the cpu backend; "
                                                       r"adapters select a GPU \(backend='gpu'\)$"):
            dml.Device(backend="cpu", adapter="llvmpipe")
        with pytest.raises(dml.UnsupportedError, match=r"^Device: backend 'cuda' is not available; available: cpu, "
                                                       r"gpu$"):
            dml.Device(backend="cuda")
        return
    default = dml.Device(backend="gpu")
    for info in dml.list_adapters():
        if info.backend == "OpenGL":
            continue
        part = info.name[: max(3, len(info.name) // 2)]
        for selector in (info.name, part, part.upper(), part.lower()):
            device = dml.Device(backend="gpu", adapter=selector)
            chosen = device.backend.adapter  # type: ignore[attr-defined]
            assert selector.lower() in chosen.name.lower()
            if chosen == default.backend.adapter:  # type: ignore[attr-defined]
                # One context per adapter: memory of one device binds on the other.
                assert gpu_context(device) is gpu_context(default)
    names = "; ".join(re.escape(str(info)) for info in dml.list_adapters())
    with pytest.raises(dml.UnsupportedError, match=rf"^Device: no GPU adapter's name contains 'no such gpu'; the "
                                                   rf"adapters are: {names}$"):
        dml.Device(backend="gpu", adapter="no such gpu")
    with pytest.raises(dml.ValidationError, match=r"^Device: adapter is 0; it must be a non-empty string of at most "
                                                  r"1024 printable characters$"):
        dml.Device(backend="gpu", adapter=0)  # type: ignore[arg-type]


# -- device memory ----------------------------------------------------------------------------------------------------

def test_create_buffer_and_read(backend: str) -> None:
    device = dml.Device()
    zeros = device.create_buffer(10)
    expected_kind = DeviceMemory if backend == "gpu" else HostBuffer
    assert isinstance(zeros, expected_kind)
    assert len(zeros) == 10 and zeros.read() == b"\0" * 10
    assert device.create_buffer(0).read() == b""
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    buffer = device.create_buffer(values.T)  # a copy of the array's logical contents, row-major
    assert isinstance(buffer, expected_kind) and len(buffer) == 96
    assert buffer.read() == np.ascontiguousarray(values.T).tobytes()
    as_array = buffer.read(np.float32, (6, 4))
    assert as_array.dtype == np.float32 and np.array_equal(as_array, values.T)
    assert np.array_equal(buffer.read("int32"), values.T.reshape(-1).view(np.int32))
    as_float64 = np.ascontiguousarray(values.T).reshape(-1).view(np.float64)
    assert np.array_equal(buffer.read(np.float64, [2, 3]), as_float64[:6].reshape(2, 3))
    as_array[...] = 0  # a new array: the buffer keeps its bytes
    assert buffer.read(np.float32, (6, 4))[5, 3] == 23
    odd = device.create_buffer(np.arange(7, dtype=np.uint8))  # a size that is no multiple of 4
    assert len(odd) == 7 and odd.read() == bytes(range(7))
    if backend == "cpu":  # host memory starts on a cache line, large (mmap'd by malloc) or small
        made = [device.create_buffer(size) for size in (1, 10, 4096, 2**23)]
        made += [device.create_buffer(np.ones(size, np.uint8)) for size in (3, 2**23 + 5)]
        assert all(isinstance(memory, np.ndarray) and memory.ctypes.data % 64 == 0 for memory in made)
        assert [len(memory) for memory in made] == [1, 10, 4096, 2**23, 3, 2**23 + 5]
        assert all(memory.read() == b"\1" * len(memory) for memory in made[4:])
    label = "GpuBuffer" if backend == "gpu" else "HostBuffer"
    with pytest.raises(dml.BindingError, match=rf"^{label}\.read: shape \[5, 5\] of float32 needs 100 bytes; the "
                                               rf"buffer holds 96$"):
        buffer.read(np.float32, (5, 5))
    with pytest.raises(dml.BindingError, match=rf"^{label}\.read: give a dtype with a shape$"):
        buffer.read(None, (6, 4))
    with pytest.raises(dml.BindingError, match=rf"^{label}\.read: dtype 'no dtype' is not a NumPy dtype \(.+\)$"):
        buffer.read("no dtype")
    for bad, shown in ((-1, "-1"), (2.5, "2.5"), ("10", "'10'"), (True, "True"), (None, "None"),
                       (2**64, "18446744073709551616"), ([16], r"\[16\]")):
        with pytest.raises(dml.ValidationError, match=rf"^Device\.create_buffer: source is {shown}; it must be a size "
                                                      rf"in bytes \(an integer in \[0, 2\^64\)\) or a NumPy array$"):
            device.create_buffer(bad)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=r"^Device\.create_buffer: source is .*; an array must hold numbers, "
                                                  r"not Python objects"):
        device.create_buffer(np.array([None, 1]))


def test_create_buffer_past_the_adapters_buffer_limit(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu: a buffer larger than the adapter's max-buffer-size is refused, naming it (made small here); cpu: host
    memory has no such limit."""
    device = dml.Device()
    if backend == "cpu":
        assert len(device.create_buffer(4100)) == 4100
        return
    monkeypatch.setattr(gpu_context(device), "max_buffer_size", 4096)
    assert len(device.create_buffer(4096)) == 4096
    with pytest.raises(dml.UnsupportedError, match=r"^Device\.create_buffer: 4100 bytes exceed the adapter's "
                                                   r"max-buffer-size \(4096 bytes\)$"):
        device.create_buffer(4100)


def test_buffer_write(backend: str) -> None:
    """A buffer's write puts host bytes at an offset and refuses a range that does not fit or is unaligned, the
    same on both backends (GpuBuffer, HostBuffer)."""
    buffer = dml.Device().create_buffer(16)
    buffer.write(np.arange(2, dtype=np.int32), offset=4)
    assert np.array_equal(buffer.read(np.int32), [0, 0, 1, 0])
    buffer.write(b"\x07\x00\x00\x00", offset=12)
    assert np.array_equal(buffer.read(np.int32), [0, 0, 1, 7])
    kind = {"gpu": "GpuBuffer"}.get(backend, "HostBuffer")
    assert type(buffer).__name__ == kind
    for data, offset in ((np.zeros(4, np.int32), 4), (np.zeros(1, np.int32), 2), (np.zeros(1, np.int32), -4)):
        with pytest.raises(dml.BindingError, match=rf"^{kind}\.write: {data.nbytes} bytes at offset {offset} do "
                                                   rf"not fit a buffer of 16 bytes \(the offset must be a multiple "
                                                   rf"of 4\)$"):
            buffer.write(data, offset=offset)
    assert np.array_equal(buffer.read(np.int32), [0, 0, 1, 7])


def test_adapter_must_be_a_string(backend: str) -> None:
    with pytest.raises(dml.ValidationError, match=r"^Device: adapter is 3; it must be a non-empty string of at most "
                                                  r"1024 printable characters$"):
        dml.Device(adapter=3)  # type: ignore[arg-type]


def test_a_reduction_longer_than_the_gpu_counts_is_refused(backend: str) -> None:
    """A zero-stride input can hold 2^32 - 1 elements in 4 bytes: valid, and on the gpu refused at compile, naming
    the limit (its per-output counters are 32-bit); the cpu compiles it."""
    x = dml.TensorDesc("FLOAT32", [2**32 - 1], [0], total_tensor_size_in_bytes=4)
    desc = dml.ReduceOperatorDesc("MAX", x, dml.TensorDesc("FLOAT32", [1]), [0])
    device = dml.Device()
    operator = device.create_operator(desc)
    if backend == "cpu":
        device.compile_operator(operator)
        return
    with pytest.raises(dml.UnsupportedError, match=r"^DML_OPERATOR_REDUCE \(Function MAX\): each output element "
                                                   r"reduces 4294967295 input elements; the gpu backend reduces at "
                                                   r"most 4294966784 per output element$"):
        device.compile_operator(operator)


def split_with_device_memory(device: dml.Device) -> tuple[bytes, bytes, np.ndarray, np.ndarray]:
    """Code written once for any backend: SPLIT from device memory into two outputs of one device buffer."""
    x = np.arange(48, dtype=np.int32).reshape(6, 8)
    compiled = compile_split(device, T("INT32", [6, 8]), [T("INT32", [6, 3]), T("INT32", [6, 5])], 1)
    source = device.create_buffer(x)
    target = device.create_buffer(256)
    compiled.execute([dml.Binding(source)], [dml.Binding(target, 0, 72), dml.Binding(target, 128)])
    return source.read(), target.read(), target.read(np.int32, (6, 3)), np.frombuffer(target.read(), np.int32)[32:62]


def test_the_same_code_runs_on_both_backends(backend: str) -> None:
    source, target, first, rest = split_with_device_memory(dml.Device())
    x = np.arange(48, dtype=np.int32).reshape(6, 8)
    assert source == x.tobytes()
    assert np.array_equal(first, x[:, :3]) and np.array_equal(rest.reshape(6, 5), x[:, 3:])
    gap = np.frombuffer(target, np.uint8)
    assert not gap[72:128].any() and not gap[248:].any()
    if backend == "gpu":
        assert (source, target) == split_with_device_memory(dml.Device(backend="cpu"))[:2]


def test_owned_by_dml_input_initialized_from_device_memory(backend: str) -> None:
    device = dml.Device()
    x = random_bits((4, 6), "FLOAT16", seed=5)
    compiled = compile_split(device, T("FLOAT16", [4, 6], flags="OWNED_BY_DML"),
                             [T("FLOAT16", [4, 2]), T("FLOAT16", [4, 4])], 1)
    source = device.create_buffer(x)
    compiled.initialize([dml.Binding(source)])
    outputs = [device.create_buffer(16), device.create_buffer(32)]
    compiled.execute([None], [dml.Binding(output) for output in outputs])
    assert same_bits(outputs[0].read(np.float16, (4, 2)), x[:, :2])
    assert same_bits(outputs[1].read(np.float16, (4, 4)), x[:, 2:])


# -- binding offsets --------------------------------------------------------------------------------------------------

@contextmanager
def offset_alignment(device: dml.Device, alignment: int | None) -> Iterator[int]:
    """The binding alignment the backend works with: the adapter's own (None) or a coarser one (a multiple of the
    adapter's, so still valid), as discrete GPUs have; 1 on the cpu (any multiple of 16 is a host address)."""
    if device.backend.name != "gpu":
        yield 1
        return
    context = gpu_context(device)
    saved = context.offset_alignment
    if alignment is not None:
        assert alignment % saved == 0
        context.offset_alignment = alignment
    try:
        yield context.offset_alignment
    finally:
        context.offset_alignment = saved


@pytest.mark.parametrize("element_size", sorted(BY_SIZE))
def test_binding_offsets_inside_the_adapters_alignment(backend: str, element_size: int) -> None:
    """Inputs and outputs bound at every multiple of 16 below three alignment steps, those that are no multiple of
    the alignment included: on the gpu, WebGPU binds the aligned range below and the shader adds the remainder as
    an element offset."""
    type_name = BY_SIZE[element_size]
    dtype = NUMPY[type_name]
    device = dml.Device()
    sizes, axis = [3, 5], 1
    compiled = compile_split(device, T(type_name, sizes), [T(type_name, [3, 2]), T(type_name, [3, 3])], axis)
    x = random_bits((3, 5), type_name, seed=element_size)
    out_bytes = [tensor_size_in_bytes(element_size, [3, part], None) for part in (2, 3)]
    for requested in (None, 256) if backend == "gpu" else (None,):
        with offset_alignment(device, requested) as alignment:
            offsets = list(range(0, 3 * max(alignment, 16), 16))
            unaligned = [offset for offset in offsets if offset % alignment]
            assert unaligned or alignment <= 16
            for offset in offsets:
                # The input at `offset` in one buffer; both outputs in another, the second at the next offset after
                # the first, so that a shift by the wrong remainder shows in the neighbour's bytes too.
                source = device.create_buffer(build_buffer(x, None, byte_offset=offset, tail_bytes=40, seed=1))
                second = offset + -(-out_bytes[0] // 16) * 16 + 16
                filler = sentinel_bytes(second + out_bytes[1] + 40, seed=2)
                target = device.create_buffer(filler)
                compiled.execute([dml.Binding(source, offset)],
                                 [dml.Binding(target, offset), dml.Binding(target, second)])
                got = np.frombuffer(target.read(), np.uint8)
                first_mask = addressed_byte_mask(got.size, element_size, [3, 2], None, byte_offset=offset)
                second_mask = addressed_byte_mask(got.size, element_size, [3, 3], None, byte_offset=second)
                where = f"{type_name} at offset {offset} (alignment {alignment})"
                assert np.array_equal(got[~(first_mask | second_mask)], filler[~(first_mask | second_mask)]), where
                assert same_bits(read_buffer(got, dtype, [3, 2], None, byte_offset=offset), x[:, :2]), where
                assert same_bits(read_buffer(got, dtype, [3, 3], None, byte_offset=second), x[:, 2:]), where
                assert source.read() == build_buffer(x, None, byte_offset=offset, tail_bytes=40, seed=1).tobytes(), (
                    f"{where}: the input was modified")


# -- sentinel bytes around narrow outputs ---------------------------------------------------------------------------

#: (input sizes, axis, output part sizes along it, output strides per part): padded, transposed, padded and
#: transposed, and strides that interleave two dimensions (no nesting order: the shader's lookup-table path).
LAYOUTS = {
    "padded": ([4, 7], 1, [3, 4], [[5, 1], [7, 1]]),
    "transposed": ([5, 6], 0, [2, 3], [[1, 2], [1, 3]]),
    "padded-transposed": ([3, 4, 5], 2, [2, 3], [[1, 4, 15], [2, 7, 30]]),
    "interleaved": ([2, 6], 1, [3, 3], [[3, 2], [3, 2]]),
    "interleaved-gaps": ([2, 3, 4], 2, [2, 2], [[3, 2, 1001], [3, 2, 4099]]),
    "rank-1-gaps": ([9], 0, [4, 5], [[3], [2]]),
}


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize("type_name", ["UINT8", "INT8", "FLOAT16", "INT16"])
def test_narrow_outputs_keep_every_byte_around_their_elements(backend: str, type_name: str, memory: str) -> None:
    """8- and 16-bit outputs at padded, transposed and interleaved strides, inside buffers of sentinel bytes (at a
    16-byte offset, off the adapter's alignment where it is coarser): every element right, every other byte as it
    was. An output's words hold elements and gap bytes together, and its last word the padding after it; both
    outputs lie in one buffer."""
    device = dml.Device()
    dtype = np.dtype(NUMPY[type_name])
    size = dtype.itemsize
    for seed, (name, (sizes, axis, parts, strides)) in enumerate(LAYOUTS.items()):
        input_strides = [int(np.prod(sizes[:d])) for d in range(len(sizes))]  # column-major: read transposed
        x = random_bits(tuple(sizes), type_name, seed)
        outputs = []
        for part, part_strides in zip(parts, strides, strict=True):
            part_sizes = list(sizes)
            part_sizes[axis] = part
            outputs.append((part_sizes, part_strides))
        compiled = compile_split(device, T(type_name, sizes, input_strides),
                                 [T(type_name, part_sizes, part_strides) for part_sizes, part_strides in outputs], axis)
        source_bytes = build_buffer(x, tuple(input_strides), byte_offset=16, tail_bytes=6, seed=seed)
        source = memory_of(device, memory, source_bytes)
        # Both outputs in one buffer: the first at byte 16, the second right after it (at a multiple of 16).
        first_bytes = tensor_size_in_bytes(size, outputs[0][0], tuple(outputs[0][1]))
        offsets = [16, 16 + -(-first_bytes // 16) * 16]
        total = offsets[1] + tensor_size_in_bytes(size, outputs[1][0], tuple(outputs[1][1])) + 13
        filler = sentinel_bytes(total, seed=seed + 7)
        target = memory_of(device, memory, filler)
        compiled.execute([dml.Binding(source, 16)], [dml.Binding(target, offset) for offset in offsets])
        got = bytes_of(target)
        written = np.zeros(total, bool)
        start = 0
        for (part_sizes, part_strides), offset, part in zip(outputs, offsets, parts, strict=True):
            mask = addressed_byte_mask(total, size, part_sizes, tuple(part_strides), byte_offset=offset)
            written |= mask
            expected = np.take(x, range(start, start + part), axis=axis)
            assert same_bits(read_buffer(got, dtype, part_sizes, tuple(part_strides), byte_offset=offset), expected), (
                f"{name}: elements of the output at offset {offset}")
            start += part
        changed = np.flatnonzero((got != filler) & ~written)
        assert changed.size == 0, f"{name}: bytes outside the elements changed: {changed[:16].tolist()}"
        assert np.array_equal(bytes_of(source), source_bytes), f"{name}: the input was modified"


def test_interleaved_narrow_outputs_cost_their_elements_not_their_span(backend: str) -> None:
    """An 8- or 16-bit output whose strides interleave is written through a table of its elements in the parameter
    buffer: 12 elements spread over 80 MB take a 12-entry table (compiled, not dispatched: the dispatch would need
    the 80 MB), and the layouts above (nested ones) take none."""
    device = dml.Device()
    parts = [T("FLOAT16", [2, 3, 2], [3, 2, 40_000_000]), T("FLOAT16", [2, 3, 2])]
    compiled = compile_split(device, T("FLOAT16", [2, 3, 4]), parts, 2)
    if backend == "gpu":
        from opendml.backends.gpu.elementwise import Output

        passes = compiled._kernel.passes  # type: ignore[attr-defined]
        assert [Output.table_bytes(part) for part in parts] == [48, 0]
        assert len(passes[0].params) < 128 and len(passes[1].params) < 128


# -- bad bindings -----------------------------------------------------------------------------------------------------

def sentinel_outputs(device: dml.Device, sizes: list[int]) -> list[Any]:
    return [device.create_buffer(sentinel_bytes(size, seed=index)) for index, size in enumerate(sizes)]


def assert_untouched(buffers: list[Any], sizes: list[int]) -> None:
    for index, (buffer, size) in enumerate(zip(buffers, sizes, strict=True)):
        assert np.array_equal(bytes_of(buffer), sentinel_bytes(size, seed=index)), f"output {index} was written"


def test_memory_of_another_device_is_refused(backend: str) -> None:
    """gpu: a buffer of another wgpu device (as another adapter's would be); cpu: a GPU buffer bound on a cpu
    device. Refused before anything is written."""
    if dml.list_adapters() == []:
        pytest.skip("no WebGPU adapter: no GPU memory to bind")
    from opendml.backends.gpu.context import GpuContext

    device = dml.Device()
    if backend == "gpu":
        other = GpuContext(gpu_context(device).adapter)  # a second wgpu device: what another adapter is to this one
        foreign = other.create_buffer(np.arange(8, dtype=np.float32))
    else:
        foreign = dml.Device(backend="gpu").create_buffer(np.arange(8, dtype=np.float32))
    compiled = compile_split(device, T("FLOAT32", [8]), [T("FLOAT32", [4]), T("FLOAT32", [4])], 0)
    outputs = sentinel_outputs(device, [16, 16])
    message = (rf"^{PREFIX}{{name}} is bound to GpuBuffer\(32 bytes on '.+'\), which is not memory of this device "
               rf"\(Device\(feature_level='6_4', backend='{backend}', debug=False\)\); bind memory from this "
               rf"device's create_buffer$")
    with pytest.raises(dml.BindingError, match=message.format(name="InputTensor")):
        compiled.execute([dml.Binding(foreign)], [dml.Binding(output) for output in outputs])
    with pytest.raises(dml.BindingError, match=message.format(name=r"OutputTensors\[1\]")):
        compiled.execute([dml.Binding(device.create_buffer(32))], [dml.Binding(outputs[0]), dml.Binding(foreign)])
    assert_untouched(outputs, [16, 16])
    assert foreign.read() == np.arange(8, dtype=np.float32).tobytes()


def test_bad_bindings_of_device_memory_are_refused_before_anything_is_written(backend: str) -> None:
    device = dml.Device()
    compiled = compile_split(device, T("FLOAT16", [2, 8]), [T("FLOAT16", [2, 4]), T("FLOAT16", [2, 4])], 1)
    source = device.create_buffer(random_bits((2, 8), "FLOAT16", seed=3))
    sizes = [48, 40]
    outputs = sentinel_outputs(device, sizes)
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}OutputTensors\[1\] binding needs bytes \[32, 48\) but the "
                                               rf"buffer holds 40 bytes$"):
        compiled.execute([dml.Binding(source)], [dml.Binding(outputs[0], 16), dml.Binding(outputs[1], 32)])
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}InputTensor binding needs bytes \[16, 48\) but the buffer "
                                               rf"holds 32 bytes$"):
        compiled.execute([dml.Binding(source, 16)], [dml.Binding(outputs[0]), dml.Binding(outputs[1])])
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}OutputTensors\[0\] binding offset is 8; it must be a "
                                               rf"multiple of 16$"):
        compiled.execute([dml.Binding(source)], [dml.Binding(outputs[0], 8), dml.Binding(outputs[1])])
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}OutputTensors\[1\] binding size is 8 bytes; it must be at "
                                               rf"least TotalTensorSizeInBytes \(16\)$"):
        compiled.execute([dml.Binding(source)], [dml.Binding(outputs[0]), dml.Binding(outputs[1], 0, 8)])
    # Input and output ranges of one device buffer that overlap, and two outputs that do.
    shared = device.create_buffer(sentinel_bytes(64, seed=9))
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}the bound ranges of InputTensor and OutputTensors\[1\] "
                                               rf"overlap; an output may not share memory with another bound tensor$"):
        compiled.execute([dml.Binding(shared, 0)], [dml.Binding(outputs[0]), dml.Binding(shared, 16)])
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}the bound ranges of OutputTensors\[0\] and "
                                               rf"OutputTensors\[1\] overlap"):
        compiled.execute([dml.Binding(source)], [dml.Binding(shared, 32), dml.Binding(shared, 32, 16)])
    assert_untouched(outputs, sizes)
    assert shared.read() == sentinel_bytes(64, seed=9).tobytes()
    # Adjacent ranges of one buffer, and equal ranges of different buffers, do not overlap.
    compiled.execute([dml.Binding(shared, 0, 32)], [dml.Binding(shared, 32, 16), dml.Binding(outputs[1], 0, 16)])
    x = shared.read(np.float16, (2, 8))
    assert same_bits(shared.read(np.float16, (32,))[16:24].reshape(2, 4), x[:, :4])
    assert same_bits(outputs[1].read(np.float16, (2, 4)), x[:, 4:])


# -- WebGPU limits and features -------------------------------------------------------------------------------------

def test_a_tensor_larger_than_one_binding_is_refused(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu: refused at create_operator with the limit named (the limit made small here rather than allocating
    gigabytes), and a binding whose offset remainder takes it past the limit refused at execute; cpu: no such
    limit."""
    device = dml.Device()
    big = dml.SplitOperatorDesc(T("FLOAT32", [2, 512]), [T("FLOAT32", [1, 512]), T("FLOAT32", [1, 512])], 0)
    if backend == "cpu":
        device.create_operator(big)
        return
    context = gpu_context(device)
    monkeypatch.setattr(context, "max_binding_size", 2048)
    with pytest.raises(dml.UnsupportedError, match=rf"^{PREFIX}InputTensor\.TotalTensorSizeInBytes is 4096; the gpu "
                                                   rf"backend binds a tensor as one storage buffer range, at most the "
                                                   rf"adapter's max-storage-buffer-binding-size \(2048 bytes\)$"):
        device.create_operator(big)
    assert dml.Device(backend="cpu").create_operator(big)
    # Exactly the limit binds at an aligned offset; 16 bytes past an aligned offset it needs 16 more.
    fits = compile_split(device, T("FLOAT32", [512]), [T("FLOAT32", [256]), T("FLOAT32", [256])], 0)
    monkeypatch.setattr(context, "offset_alignment", 256)
    memory = device.create_buffer(np.arange(1024, dtype=np.float32))
    outputs = sentinel_outputs(device, [1024, 1024])
    with pytest.raises(dml.BindingError, match=rf"^{PREFIX}InputTensor needs a binding of 2064 bytes from offset 0; "
                                               rf"the adapter binds at most max-storage-buffer-binding-size \(2048 "
                                               rf"bytes\)$"):
        fits.execute([dml.Binding(memory, 16)], [dml.Binding(output) for output in outputs])
    assert_untouched(outputs, [1024, 1024])
    # An interleaved 8-bit output's element table (4 bytes an element) must fit a binding too.
    interleaved = dml.SplitOperatorDesc(T("UINT8", [2, 3, 400]), [T("UINT8", [2, 3, 200], [3, 2, 8])] * 2, 2)
    monkeypatch.setattr(context, "max_binding_size", 4096 + 4 * 1199)
    with pytest.raises(dml.UnsupportedError, match=rf"^{PREFIX}OutputTensors\[0\] is UINT8 with Strides \[3, 2, 8\] "
                                                   rf"that interleave its dimensions; the gpu backend writes such an "
                                                   rf"output through a table of its 1200 elements \(4800 bytes\), "
                                                   rf"over the adapter's max-storage-buffer-binding-size \(8892 "
                                                   rf"bytes\)$"):
        device.create_operator(interleaved)
    monkeypatch.setattr(context, "max_binding_size", 4096 + 4 * 1200)
    assert device.create_operator(interleaved)
    fits.execute([dml.Binding(memory, 256)], [dml.Binding(output) for output in outputs])
    assert np.array_equal(outputs[1].read(np.float32), np.arange(64 + 256, 64 + 512, dtype=np.float32))


@pytest.mark.parametrize("type_name", ["INT64", "UINT64"])
def test_64_bit_integers_need_shader_int64(backend: str, type_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """check_feature_support tells the truth, and create_operator agrees: with shader-int64 (or on the cpu) the type
    is supported and works; without it (the context's features patched) it is reported unsupported and refused."""
    device = dml.Device()
    desc = dml.SplitOperatorDesc(T(type_name, [4]), [T(type_name, [1]), T(type_name, [3])], 0)
    x = random_bits((4,), type_name, seed=11)
    if backend == "cpu" or "shader-int64" in gpu_context(device).features:
        assert device.check_feature_support(data_type=type_name) is True
        first, rest = device.compile_operator(device.create_operator(desc))(x)
        assert same_bits(first, x[:1]) and same_bits(rest, x[1:])
    if backend == "cpu":
        return
    context = gpu_context(device)
    monkeypatch.setattr(context, "features", context.features - {"shader-int64"})
    assert device.check_feature_support(data_type=type_name) is False
    for other in ("FLOAT64", "FLOAT32", "FLOAT16", "INT32", "UINT8"):
        assert device.check_feature_support(data_type=other) is True
    with pytest.raises(dml.UnsupportedError, match=rf"^{PREFIX}InputTensor\.DataType {type_name} is not supported by "
                                                   rf"the gpu backend$"):
        device.create_operator(desc)


# -- determinism, threads, batches ------------------------------------------------------------------------------------

def _determinism_cases() -> dict[str, tuple[dml.OperatorDesc, Callable[[np.random.Generator], list[np.ndarray]]]]:
    f32, f16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16

    def normal(shape: tuple[int, ...], dtype: Any) -> Callable[[np.random.Generator], list[np.ndarray]]:
        return lambda rng: [(rng.standard_normal(shape) * 100).astype(dtype)]

    return {
        "SPLIT": (dml.SplitOperatorDesc(T(f16, [64, 301], [1, 64]), [T(f16, [64, 100]), T(f16, [64, 201])], 1),
                  normal((64, 301), np.float16)),
        "REDUCE_SUM": (dml.ReduceOperatorDesc("SUM", T(f32, [16, 40000]), T(f32, [16, 1]), [1]),
                       normal((16, 40000), np.float32)),
        "MVN": (dml.MeanVarianceNormalization1OperatorDesc(T(f32, [4, 30000]), None, None, T(f32, [4, 30000]), [1],
                                                          True, 1e-5), normal((4, 30000), np.float32)),
    }


@pytest.mark.parametrize("name", ["SPLIT", "REDUCE_SUM", "MVN"])
def test_the_same_dispatch_twice_gives_identical_bytes(backend: str, name: str) -> None:
    """Run to run, into fresh buffers and into the same one: the same bytes (no float atomics, reductions in a fixed
    order)."""
    desc, make = _determinism_cases()[name]
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    arrays = iter(make(np.random.default_rng(4)))
    inputs = [None if tensor is None else device.create_buffer(next(arrays)) for _, tensor in desc.input_slots()]
    sizes = [tensor.total_tensor_size_in_bytes for _, tensor in desc.output_slots()]
    results = []
    reused = sentinel_outputs(device, sizes)
    for _ in range(2):
        fresh = sentinel_outputs(device, sizes)
        for outputs in (fresh, reused):
            compiled.execute([None if buffer is None else dml.Binding(buffer) for buffer in inputs],
                             [dml.Binding(buffer) for buffer in outputs])
            results.append([buffer.read() for buffer in outputs])
    assert all(result == results[0] for result in results)


THREADS = 6
ROUNDS = 4


def _run_threads(work: Callable[[int], Any]) -> list[Any]:
    return run_threads(work, THREADS)


@pytest.mark.parametrize("memory", ["device", "host"])
def test_concurrent_dispatches_from_several_threads(backend: str, memory: str) -> None:
    """One compiled SPLIT, dispatched from 6 threads at once, each on its own data and buffers (device memory, or
    host arrays uploaded and read back), several rounds, with batches on some threads: every result exact."""
    device = dml.Device()
    compiled = compile_split(device, T("UINT8", [64, 203]), [T("UINT8", [64, 100]), T("UINT8", [64, 103], [104, 1])],
                             1)
    out_sizes = [6400, 64 * 104]

    def work(index: int) -> list[bool]:
        checks = []
        for round_index in range(ROUNDS):
            x = random_bits((64, 203), "UINT8", seed=100 * index + round_index)
            source = memory_of(device, memory, x.reshape(-1).copy())
            outputs = [memory_of(device, memory, sentinel_bytes(size, seed=index)) for size in out_sizes]
            bindings = [dml.Binding(output) for output in outputs]
            if index % 2:
                with device.batch():
                    compiled.execute([dml.Binding(source)], bindings)
            else:
                compiled.execute([dml.Binding(source)], bindings)
            first, second = (bytes_of(output) for output in outputs)
            checks.append(np.array_equal(first.reshape(64, 100), x[:, :100]))
            checks.append(np.array_equal(second.reshape(64, 104)[:, :103], x[:, 100:]))
            checks.append(np.array_equal(second.reshape(64, 104)[:, 103],
                                         sentinel_bytes(out_sizes[1], seed=index).reshape(64, 104)[:, 103]))
        return checks

    for index, checks in enumerate(_run_threads(work)):
        assert all(checks), f"thread {index}: {checks}"


def test_a_batch_of_executes_then_one_read(backend: str) -> None:
    """Inside Device.batch() executes are recorded into one submission (on the gpu) in order: a later execute reads
    what an earlier one wrote; a read inside the batch sees what was recorded before it; one read after the batch
    sees everything. Host arrays may be bound inside a batch too."""
    device = dml.Device()
    halves = compile_split(device, T("INT32", [8, 16]), [T("INT32", [8, 8]), T("INT32", [8, 8])], 1)
    rows = compile_split(device, T("INT32", [8, 8]), [T("INT32", [2, 8])] * 4, 0)
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    source = device.create_buffer(x)
    middle = device.create_buffer(512)
    result = device.create_buffer(sentinel_bytes(1024, seed=1))
    host_out = np.zeros(256, np.uint8)
    with device.batch():
        halves.execute([dml.Binding(source)], [dml.Binding(middle, 0, 256), dml.Binding(middle, 256)])
        for part in range(2):  # each half into four row blocks of `result`, 16-byte gaps kept
            rows.execute([dml.Binding(middle, 256 * part, 256)],
                         [dml.Binding(result, 512 * part + 128 * block, 64) for block in range(4)])
        inside = middle.read(np.int32, (2, 8, 8))
        rows.execute([dml.Binding(x[:, :8].copy())], [dml.Binding(host_out, 64 * block, 64) for block in range(4)])
        halves.execute([dml.Binding(np.zeros((8, 16), np.int32))], [dml.Binding(middle, 0, 256),
                                                                     dml.Binding(middle, 256)])
    assert np.array_equal(inside[0], x[:, :8]) and np.array_equal(inside[1], x[:, 8:])
    assert not middle.read(np.int32).any()
    got = np.frombuffer(result.read(), np.uint8)
    filler = sentinel_bytes(1024, seed=1)
    for part in range(2):
        for block in range(4):
            start = 512 * part + 128 * block
            assert np.array_equal(got[start:start + 64].view(np.int32).reshape(2, 8),
                                  x[2 * block:2 * block + 2, 8 * part:8 * part + 8])
            assert np.array_equal(got[start + 64:start + 128], filler[start + 64:start + 128])
    assert np.array_equal(host_out.view(np.int32).reshape(8, 8), x[:, :8])


def test_a_compiled_operator_keeps_no_buffer_alive(backend: str) -> None:
    """Memory bound to a compiled operator is freed once the caller drops it (and its Bindings). On the gpu the
    context caches a bind group per set of bound ranges (an execute again on the same Bindings reuses it) but holds
    none of the buffers, so a dropped device buffer is freed, and so are the upload buffers of the NumPy-in,
    NumPy-out call (one call's worth of cached groups at most)."""
    device = dml.Device()
    on_gpu = backend == "gpu"
    groups: Callable[[], int] = (lambda: len(gpu_context(device)._groups)) if on_gpu else (lambda: 0)
    compiled = compile_split(device, T("FLOAT32", [64, 64]), [T("FLOAT32", [32, 64]), T("FLOAT32", [32, 64])], 0)
    x = np.arange(4096, dtype=np.float32).reshape(64, 64)
    compiled(x)
    cached = groups()
    for _ in range(5):
        first, second = compiled(x)
    assert groups() <= cached
    assert np.array_equal(first, x[:32]) and np.array_equal(second, x[32:])
    source = device.create_buffer(x)
    outputs = [device.create_buffer(8192), device.create_buffer(8192)]
    inputs, bindings = [dml.Binding(source)], [dml.Binding(output) for output in outputs]
    compiled.execute(inputs, bindings)
    cached = groups()
    compiled.execute(inputs, bindings)
    assert groups() == cached, "an execute on the same bindings makes no new bind group"
    assert np.array_equal(outputs[1].read(np.float32, (32, 64)), x[32:])
    memory = [memory.handle if on_gpu else memory for memory in (source, *outputs)]
    references = [weakref.ref(item) for item in memory]
    del source, outputs, inputs, bindings, memory
    gc.collect()
    assert all(reference() is None for reference in references), "a dropped buffer is still referenced"
    compiled(x)
    assert groups() <= cached


def test_a_batch_that_raises_keeps_the_executes_before_the_error(backend: str) -> None:
    """As on the cpu, where each execute runs at once: an execute refused inside a batch raises and writes nothing,
    the executes before it take effect, and the next batch starts afresh."""
    device = dml.Device()
    compiled = compile_split(device, T("INT32", [2, 8]), [T("INT32", [2, 4]), T("INT32", [2, 4])], 1)
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    source = device.create_buffer(x)
    done, refused = sentinel_outputs(device, [64, 64])
    message = rf"^{PREFIX}OutputTensors\[1\] binding needs bytes \[64, 96\) but the buffer holds 64 bytes$"
    with pytest.raises(dml.BindingError, match=message), device.batch():
        compiled.execute([dml.Binding(source)], [dml.Binding(done, 0, 32), dml.Binding(done, 32)])
        compiled.execute([dml.Binding(source)], [dml.Binding(refused, 0, 32), dml.Binding(refused, 64)])
    assert np.array_equal(done.read(np.int32, (4, 4)), np.concatenate([x[:, :4], x[:, 4:]]))
    assert refused.read() == sentinel_bytes(64, seed=1).tobytes()
    with device.batch():
        compiled.execute([dml.Binding(source)], [dml.Binding(refused, 0, 32), dml.Binding(refused, 32)])
    assert refused.read() == done.read()
