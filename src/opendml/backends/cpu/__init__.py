"""The CPU backend: NumPy and numba kernels, one module per operator.

Each operator module defines `compile_kernel(desc, flags, debug) -> Kernel`. Modules load on first use, so that
importing opendml does not import numba or compile anything.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import KERNEL_MODULES, DeviceMemory, HostBuffer, Kernel, host_buffer


class CpuBackend:
    name = "cpu"

    def supports_data_type(self, data_type: DataType) -> bool:
        # Every DML type with a NumPy dtype (DECISIONS 7); the packed 4-bit types are not used by these operators.
        return data_type not in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4)

    def check_operator(self, desc: OperatorDesc) -> None:
        """The CPU backend holds any valid descriptor."""

    def create_buffer(self, source: int | np.ndarray[Any, Any]) -> HostBuffer:
        return host_buffer(source)

    def owns(self, memory: DeviceMemory) -> bool:
        return False

    def batch(self) -> AbstractContextManager[None]:
        return nullcontext()

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
        module_name = KERNEL_MODULES.get(type(desc).__name__)
        if module_name is None:
            raise UnsupportedError(f"{desc.label} is not implemented by the cpu backend")
        module = importlib.import_module(f"{__name__}.{module_name}")
        kernel: Kernel = module.compile_kernel(desc, flags, debug)
        return kernel
