"""REDUCE on the CPU: the compiled plan comes from reduce_kernels; this adapts it to the backend interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ...ops.base import OperatorDesc
from ...ops.reduce import ReduceOperatorDesc
from ...types import ExecutionFlags
from .. import FlatArray, Kernel
from .reduce_kernels import make_reduce_plan


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    return reduce_kernel(cast(ReduceOperatorDesc, desc))


def reduce_kernel(reduce_desc: ReduceOperatorDesc, decreasing: bool = False) -> Kernel:
    """The kernel of a REDUCE; `decreasing` (ARGMAX/ARGMIN only) gives ties and NaNs to the last index, as
    ARGMIN/ARGMAX's AxisDirection DECREASING does."""
    source, result = reduce_desc.input_tensor, reduce_desc.output_tensor
    plan = make_reduce_plan(int(reduce_desc.function), source.data_type.numpy_dtype, result.data_type.numpy_dtype,
                            source.sizes, source.element_strides, result.element_strides, reduce_desc.axes,
                            decreasing)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        plan(inputs[0], outputs[0])  # type: ignore[arg-type]

    return kernel
