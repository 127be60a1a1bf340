"""The GPU backend: every operator as WGSL compute shaders on WebGPU (wgpu-native: Vulkan, Metal, D3D12).

Each operator module defines `compile_kernel(context, desc, flags, debug) -> GpuKernel`; its shaders are `.wgsl`
templates beside it. Modules load on first use.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import DeviceMemory, Kernel, kernel_module
from .context import AdapterInfo, GpuBuffer, GpuContext, get_context, list_adapters
from .elementwise import OTHER_PARAMETER_BYTES, Output
from .wgsl import needs_int64

__all__ = ["AdapterInfo", "GpuBackend", "list_adapters"]


class GpuBackend:
    name = "gpu"

    def __init__(self, adapter: str | None = None) -> None:
        if adapter is not None and not isinstance(adapter, str):
            raise UnsupportedError(f"Device: adapter is a {type(adapter).__name__}; it must be a string (part of "
                                   f"an adapter's name) or None")
        self.context: GpuContext = get_context(adapter)

    @property
    def adapter(self) -> AdapterInfo:
        return self.context.adapter_info

    def __repr__(self) -> str:
        return f"GpuBackend({self.adapter})"

    def supports_data_type(self, data_type: DataType) -> bool:
        if data_type in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4):
            return False
        # 64-bit integers are computed with WGSL's i64/u64; FLOAT64 is only ever moved, as two 32-bit words.
        return not needs_int64(data_type) or "shader-int64" in self.context.features

    def check_operator(self, desc: OperatorDesc) -> None:
        """Every tensor, and the element table of an 8- or 16-bit output whose strides interleave (it travels in the
        parameter buffer), must fit one storage binding of this adapter."""
        limit = self.context.max_binding_size
        for name, tensor in [*desc.input_slots(), *desc.output_slots()]:
            if tensor is not None and tensor.total_tensor_size_in_bytes > limit:
                raise UnsupportedError(f"{desc.label}: {name}.TotalTensorSizeInBytes is "
                                       f"{tensor.total_tensor_size_in_bytes}; the gpu backend binds a tensor as one "
                                       f"storage buffer range, at most the adapter's "
                                       f"max-storage-buffer-binding-size ({limit} bytes)")
        for name, tensor in desc.output_slots():
            table = Output.table_bytes(tensor)
            if table and table + OTHER_PARAMETER_BYTES > limit:
                raise UnsupportedError(f"{desc.label}: {name} is {tensor.data_type.name} with Strides "
                                       f"{list(tensor.strides or ())} that interleave its dimensions; the gpu backend "
                                       f"writes such an output through a table of its {tensor.element_count} "
                                       f"elements ({table} bytes), over the adapter's "
                                       f"max-storage-buffer-binding-size ({limit} bytes)")

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
        module_name = kernel_module(desc)
        if module_name is None:
            raise UnsupportedError(f"{desc.label} is not implemented by the gpu backend")
        module = importlib.import_module(f"{__name__}.{module_name}")
        kernel: Kernel = module.compile_kernel(self.context, desc, flags, debug)
        return kernel

    def create_buffer(self, source: int | np.ndarray[Any, Any]) -> GpuBuffer:
        return self.context.create_buffer(source)

    def owns(self, memory: DeviceMemory) -> bool:
        return isinstance(memory, GpuBuffer) and memory.context is self.context

    def batch(self) -> AbstractContextManager[None]:
        return self.context.batch()

    def capture(self) -> AbstractContextManager[list[Any] | None]:
        return self.context.capture()

    def replay(self, work: list[Any]) -> None:
        self.context.run(work)
