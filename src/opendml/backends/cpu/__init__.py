"""The CPU backend: NumPy and numba kernels, one module per operator.

Each operator module defines `compile_kernel(desc, flags, debug) -> Kernel`. Modules load on first use, so that
importing opendml does not import numba or compile anything. Descriptors whose tensors are all small get the NumPy
kernels of `small/` where an operator has one: a first dispatch then neither loads nor compiles numba code.
"""

from __future__ import annotations

import importlib
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import DeviceMemory, HostBuffer, Kernel, host_buffer, kernel_module

#: Descriptors whose every tensor has at most this many elements run the NumPy kernels of `small/` (where the operator
#: has one). Tests set the limits to 0 (numba's kernels always) or to a huge value (the small ones always) to run both.
SMALL_TENSOR_ELEMENTS = 1024
#: The operators (their KERNEL_MODULES names) that have a small-tensor kernel in `small/`, and the limit of each.
SMALL_KERNEL_MODULES = dict.fromkeys(
    ("reduce", "arg_min_max", "split", "join", "one_hot", "gather_nd", "gather_nd1", "element_wise", "activations",
     "mean_variance_normalization", "mean_variance_normalization1", "gemm",
     "convolution", "cumulative", "gather", "scatter", "upsample", "nonzero", "top_k", "slice", "depth_space",
     "padding"), "SMALL_TENSOR_ELEMENTS")

#: A descriptor above the limits whose numba kernel this machine has not compiled yet runs the NumPy kernel of
#: `small/` (where the operator has one that runs at any size) while a background process compiles numba's, which
#: takes over once compiled (background.py). False: numba's kernel at once (compiled by the caller, if need be).
#: A limit of 0 also means numba's kernel at once for its operators. The environment variable OPENDML_CPU_COLD_START=0
#: turns it off in a new process (the test suite's subprocesses).
COLD_START = os.environ.get("OPENDML_CPU_COLD_START", "1") != "0"


def is_small(desc: OperatorDesc, module_name: str) -> bool:
    """Whether `desc` runs a small-tensor kernel: its operator has one and every tensor is within its limit."""
    limit_name = SMALL_KERNEL_MODULES.get(module_name)
    if limit_name is None:
        return False
    limit: int = globals()[limit_name]
    tensors = [tensor for _, tensor in desc.input_slots() + desc.output_slots() if tensor is not None]
    return all(tensor.element_count <= limit for tensor in tensors)


def starts_cold(desc: OperatorDesc, module_name: str) -> bool:
    """Whether `desc`, above the small-tensor limits, answers with its NumPy kernel while numba's compiles: with
    COLD_START, where its operator's limit is not 0."""
    limit_name = SMALL_KERNEL_MODULES.get(module_name)
    return COLD_START and limit_name is not None and globals()[limit_name] > 0


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

    def capture(self) -> AbstractContextManager[list[Any] | None]:
        """Kernels run as they are called: nothing is recorded, so nothing can be replayed."""
        return nullcontext(None)

    def replay(self, work: list[Any]) -> None:
        raise NotImplementedError("the cpu backend records no work to replay")

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
        module_name = kernel_module(desc)
        if module_name is None:
            raise UnsupportedError(f"{desc.label} is not implemented by the cpu backend")

        def load(package: str = __name__) -> Kernel:
            kernel: Kernel = importlib.import_module(f"{package}.{module_name}").compile_kernel(desc, flags, debug)
            return kernel

        if not is_small(desc, module_name):
            if not starts_cold(desc, module_name):
                return load()
            from .background import BackgroundKernel
            return BackgroundKernel(load(f"{__name__}.small"), load, module_name, desc, flags, debug)
        return load(f"{__name__}.small")
