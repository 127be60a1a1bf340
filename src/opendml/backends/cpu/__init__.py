"""The CPU backend: NumPy and numba kernels, one module per operator.

Each operator module defines `compile_kernel(desc, flags, debug) -> Kernel`. Modules load on first use, so that
importing opendml does not import numba or compile anything. Descriptors whose tensors are all small get the NumPy
kernels of `small/` where an operator has one: a first dispatch then neither loads nor compiles numba code. The
kernels whose activation formulas run in the interpreter (microseconds per element) hand over to numba's kernel
once an operator has used them enough (`TieredKernel`), so that its later dispatches take numba's microseconds.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import DeviceMemory, FlatArray, HostBuffer, Kernel, host_buffer, kernel_module

#: Descriptors whose every tensor has at most this many elements run the NumPy kernels of `small/` (where the operator
#: has one). Tests set the limits to 0 (numba's kernels always) or to a huge value (the small ones always) to run both.
SMALL_TENSOR_ELEMENTS = 1024
#: The same for the activations and MEAN_VARIANCE_NORMALIZATION(1), whose small kernels run the activation formulas
#: in the interpreter (a few microseconds per element; numba's kernels take nanoseconds once loaded).
INTERPRETED_TENSOR_ELEMENTS = 128
#: The operators (their KERNEL_MODULES names) that have a small-tensor kernel in `small/`, and the limit of each.
SMALL_KERNEL_MODULES = {
    **dict.fromkeys(("reduce", "arg_min_max", "split", "join", "one_hot", "gather_nd", "gather_nd1", "element_wise"),
                    "SMALL_TENSOR_ELEMENTS"),
    **dict.fromkeys(("activations", "mean_variance_normalization", "mean_variance_normalization1"),
                    "INTERPRETED_TENSOR_ELEMENTS"),
}

#: A descriptor above the limits whose numba kernel this machine has not compiled yet runs the NumPy kernel of
#: `small/` (where the operator has one that runs at any size) while a background process compiles numba's, which
#: takes over once compiled (background.py). False: numba's kernel at once (compiled by the caller, if need be).
#: A limit of 0 also means numba's kernel at once for its operators. The environment variable OPENDML_CPU_COLD_START=0
#: turns it off in a new process (the test suite's subprocesses).
COLD_START = os.environ.get("OPENDML_CPU_COLD_START", "1") != "0"

#: An operator on an interpreted small kernel runs it until the activation formulas have run on this many elements
#: in all (tens to hundreds of milliseconds of interpreting, less than loading numba's kernels warm); its next
#: dispatch loads numba's kernel, which runs every later one. Counted in dispatches, not time, so that the same
#: dispatches run the same kernel in every run (float results may differ between the two in the last place).
INTERPRETED_ELEMENT_BUDGET = 2**14


def interpreted_elements(desc: OperatorDesc, module_name: str) -> int:
    """The elements a dispatch of `desc` runs the activation formulas on in the interpreter, where it runs them
    there: a standalone activation's, and MVN's with a fused activation (0 for any other kernel)."""
    if SMALL_KERNEL_MODULES.get(module_name) != "INTERPRETED_TENSOR_ELEMENTS":
        return 0
    if module_name != "activations" and getattr(desc, "fused_activation", None) is None:
        return 0
    return max(tensor.element_count for _, tensor in desc.output_slots())


class TieredKernel:
    """An interpreted small kernel for the first `calls` dispatches, then numba's kernel (`load`, on the next)."""

    def __init__(self, first: Kernel, calls: int, load: Callable[[], Kernel]) -> None:
        self.first, self.calls_left, self.load = first, calls, load
        self.kernel: Kernel | None = None

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        kernel = self.kernel
        if kernel is None:
            if self.calls_left > 0:
                self.calls_left -= 1
                self.first(inputs, outputs)
                return
            kernel = self.kernel = self.load()
        kernel(inputs, outputs)


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
    COLD_START, where its operator's limit is not 0, except the integer activations (RELU and SHRINK on integers:
    their small kernel runs per element in the interpreter, far too slow at large sizes; the floating formulas run
    over whole arrays there, small/vectorized.py)."""
    limit_name = SMALL_KERNEL_MODULES.get(module_name)
    source = getattr(desc, "input_tensor", None)
    integer = module_name == "activations" and source is not None and not source.data_type.is_float
    return COLD_START and limit_name is not None and globals()[limit_name] > 0 and not integer


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
        small = load(f"{__name__}.small")
        elements = interpreted_elements(desc, module_name)
        return TieredKernel(small, INTERPRETED_ELEMENT_BUDGET // elements, load) if elements else small
