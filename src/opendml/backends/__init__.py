"""Backends run validated operators. Each one answers: which data types it supports, which descriptors it can hold
(its own limits), how to turn a descriptor into a kernel, and what its memory is.

A kernel gets one view per tensor slot (None for an absent optional input): on the CPU a flat, typed NumPy view of
the bound range (element 0 = the binding's offset); on the GPU either such a host view (uploaded, dispatched and
read back) or a `DeviceRange` of device memory (dispatched in place). Kernels address elements through the
descriptor's element strides. A kernel may have an optional `initialize(owned)` method: CompiledOperator.initialize
calls it once, after copying the OWNED_BY_DML inputs, with {input slot index: view of the copy}; those same view
objects are then passed in those slots at every later call, so a kernel may pre-pack them there (GEMM's B, a
convolution's filter), as DirectML does with owned weights; results never depend on it. A kernel that wraps another
forwards the call. With debug=True a backend returns a kernel with DML's debug-layer checks of the
data (e.g. GATHER_ND1's indices), which raises before writing anything.

`create_buffer` gives the backend's memory: host memory (`HostBuffer`) on the CPU, a `DeviceMemory` on the GPU;
both have `read()`, and `dml.Binding` takes either, so code written for one backend runs on the other. `batch()`
groups the dispatches recorded inside it into one submission (a no-op on the CPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..convert import to_read_layout, to_write_bytes
from ..errors import UnsupportedError
from ..ops.base import OperatorDesc
from ..types import DataType, ExecutionFlags

FlatArray = np.ndarray[Any, np.dtype[Any]]


class DeviceMemory:
    """Base of a backend's device memory (not host-addressable): `size` in bytes, `read()` copies it back."""

    size: int

    def read(self, dtype: Any = None, shape: int | Sequence[int] | None = None) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class DeviceRange:
    """A validated binding of device memory: bytes [offset, offset + size) of `memory`."""

    memory: DeviceMemory
    offset: int
    size: int


View = FlatArray | DeviceRange
#: kernel(inputs, outputs): one view per tensor slot (None for an absent optional input).
Kernel = Callable[[Sequence[Any], Sequence[Any]], None]


class HostBuffer(np.ndarray[Any, np.dtype[np.uint8]]):
    """Host memory from `Device.create_buffer` on the CPU backend: a uint8 array with the device buffer's `read`."""

    def read(self, dtype: Any = None, shape: int | Sequence[int] | None = None) -> Any:
        """The bytes (`bytes`), or with a dtype, a new array of that dtype (and shape: an int or a list of ints,
        one of them -1 at most), as GpuBuffer.read (convert.to_read_layout has the rules)."""
        layout = to_read_layout("HostBuffer.read", dtype, shape, self.size)
        return self.tobytes() if layout is None else host_array(np.asarray(self), *layout)

    def write(self, data: Any, offset: int = 0) -> None:
        """Copies host bytes (bytes-like, or an array of numbers in row-major order) into the buffer at `offset` (a
        multiple of 4), as GpuBuffer.write does (convert.to_write_bytes has the rules)."""
        raw, start = bytes_to_write("HostBuffer.write", data, offset, self.size)
        np.asarray(self)[start: start + raw.size] = raw


def bytes_to_write(label: str, data: Any, offset: Any, size: int) -> tuple[np.ndarray[Any, np.dtype[np.uint8]], int]:
    """(the bytes of `data`, the offset) for a buffer's `write` at `offset`, checked to fit a buffer of `size`
    bytes; the same rules and messages on every backend."""
    return to_write_bytes(label, data, offset, size)


def host_array(data: bytes | np.ndarray[Any, Any], dtype: np.dtype[Any], shape: tuple[int, ...]
               ) -> np.ndarray[Any, Any]:
    """A new array of `dtype` and `shape` holding the first bytes of `data` (a layout from to_read_layout, which
    checked that they fit)."""
    raw = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.view(np.uint8).reshape(-1)
    count = math.prod(shape)
    result: np.ndarray[Any, Any] = raw[: count * dtype.itemsize].view(dtype).reshape(shape).copy()
    return result


#: Host memory from `create_buffer` starts on a cache line (a D3D12 buffer starts on 64 KiB). NumPy's large arrays
#: start 16 bytes past a page on glibc, where every 256-byte row of a table spans five cache lines instead of four
#: (a random row gather then moves a quarter more memory).
HOST_BUFFER_ALIGNMENT = 64


def host_buffer(source: int | np.ndarray[Any, Any]) -> HostBuffer:
    """Zeroed host memory of `source` bytes, or a copy of an array's bytes, starting on a cache line."""
    data = np.ascontiguousarray(source).reshape(-1).view(np.uint8) if isinstance(source, np.ndarray) else None
    size = int(source) if data is None else data.size
    raw = np.zeros(size + HOST_BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % HOST_BUFFER_ALIGNMENT
    result = raw[start: start + size].view(HostBuffer)
    if data is not None:
        result[...] = data
    return result


#: descriptor class name -> the kernel module of each backend (backends/<name>/<module>.py): one module per operator
KERNEL_MODULES = {
    "ReduceOperatorDesc": "reduce",
    "SplitOperatorDesc": "split",
    "OneHotOperatorDesc": "one_hot",
    "GatherNd1OperatorDesc": "gather_nd1",
    "MeanVarianceNormalization1OperatorDesc": "mean_variance_normalization1",
    "JoinOperatorDesc": "join",
    "ArgMinOperatorDesc": "arg_min_max",
    "ArgMaxOperatorDesc": "arg_min_max",
    "GatherNdOperatorDesc": "gather_nd",
    "MeanVarianceNormalizationOperatorDesc": "mean_variance_normalization",
    # the 17 standalone activations share one elementwise kernel module (the fused code)
    **{f"Activation{name}OperatorDesc": "activations" for name in (
        "Celu", "Elu", "Gelu", "HardSigmoid", "Identity", "LeakyRelu", "Linear", "ParametricSoftplus", "Relu",
        "ScaledElu", "ScaledTanh", "Shrink", "Sigmoid", "Softplus", "Softsign", "Tanh", "ThresholdedRelu")},
}


def kernel_module(desc: object) -> str | None:
    """The kernel module of a descriptor: its class's KERNEL_MODULE (a family's engine: every element-wise operator
    names "elementwise"), else KERNEL_MODULES' entry, else None (no kernel)."""
    module: str | None = getattr(type(desc), "KERNEL_MODULE", None)
    return module or KERNEL_MODULES.get(type(desc).__name__)


class Backend(Protocol):
    name: str

    def supports_data_type(self, data_type: DataType) -> bool: ...

    def check_operator(self, desc: OperatorDesc) -> None: ...

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel: ...

    def create_buffer(self, source: int | np.ndarray[Any, Any]) -> Any: ...

    def owns(self, memory: DeviceMemory) -> bool: ...

    def batch(self) -> AbstractContextManager[None]: ...

    def capture(self) -> AbstractContextManager[list[Any] | None]:
        """A batch whose device work is also listed, for `replay`; None where the backend has none to replay."""
        ...

    def replay(self, work: list[Any]) -> None:
        """Records the work that `capture` listed again, on the same bindings."""
        ...


def get_backend(name: str, adapter: str | None = None) -> Backend:
    backends = ("cpu", "gpu")
    if not isinstance(name, str) or name not in backends:
        raise UnsupportedError(f"Device: backend {name!r} is not available; available: {', '.join(backends)}")
    if name == "cpu":
        if adapter is not None:
            raise UnsupportedError(f"Device: adapter {adapter!r} was given for the cpu backend; adapters select a "
                                   f"GPU (backend='gpu')")
        from .cpu import CpuBackend  # imported here so that backends load only when asked for

        return CpuBackend()
    from .gpu import GpuBackend

    return GpuBackend(adapter)
