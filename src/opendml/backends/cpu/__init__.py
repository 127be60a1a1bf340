"""The CPU backend: NumPy and numba kernels, one module per operator.

Each operator module defines `compile_kernel(desc, flags, debug) -> Kernel`. Modules load on first use, so that
importing opendml does not import numba or compile anything. Descriptors whose tensors are all small get the NumPy
kernels of `small/` where an operator has one: a first dispatch then neither loads nor compiles numba code.
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

#: Descriptors whose every tensor has at most this many elements run the NumPy kernels of `small/` (where the operator
#: has one). Tests set the limits to 0 (numba's kernels always) or to a huge value (the small ones always) to run both.
SMALL_TENSOR_ELEMENTS = 1024
#: The same for the activations and MEAN_VARIANCE_NORMALIZATION(1), whose small kernels run the activation formulas
#: in the interpreter (a few microseconds per element; numba's kernels take nanoseconds once loaded).
INTERPRETED_TENSOR_ELEMENTS = 128
#: The operators (their KERNEL_MODULES names) that have a small-tensor kernel in `small/`, and the limit of each.
SMALL_KERNEL_MODULES = {
    **dict.fromkeys(("reduce", "arg_min_max", "split", "join", "one_hot", "gather_nd", "gather_nd1"),
                    "SMALL_TENSOR_ELEMENTS"),
    **dict.fromkeys(("activations", "mean_variance_normalization", "mean_variance_normalization1"),
                    "INTERPRETED_TENSOR_ELEMENTS"),
}


def is_small(desc: OperatorDesc, module_name: str) -> bool:
    """Whether `desc` runs a small-tensor kernel: its operator has one and every tensor is within its limit."""
    limit_name = SMALL_KERNEL_MODULES.get(module_name)
    if limit_name is None:
        return False
    limit: int = globals()[limit_name]
    tensors = [tensor for _, tensor in desc.input_slots() + desc.output_slots() if tensor is not None]
    return all(tensor.element_count <= limit for tensor in tensors)


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
        package = __name__
        if is_small(desc, module_name):
            package = f"{__name__}.small"
        module = importlib.import_module(f"{package}.{module_name}")
        kernel: Kernel = module.compile_kernel(desc, flags, debug)
        return kernel
