"""The 17 standalone ACTIVATION_* operators on the GPU: the element-wise engine's pass (element_wise.py), rendered
from each activation's formula (ops/activations.py: ACTIVATION_FORMULAS for float tensors; on integer tensors RELU
is maximum(x, 0) and SHRINK IntegerShrink's plan in INT64, exactly). A fused activation (MVN's) is rendered from the
same formula by element_wise.activation_function."""

from __future__ import annotations

from ...ops.activations import ActivationOperatorDesc
from ...ops.base import OperatorDesc
from ...types import ExecutionFlags
from . import element_wise
from .context import GpuContext


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool
                   ) -> element_wise.ElementWiseKernel:
    """FLOAT32 computation whatever the flags say: ALLOW_HALF_PRECISION_COMPUTATION permits but does not require
    FLOAT16."""
    assert isinstance(desc, ActivationOperatorDesc)
    return element_wise.compile_kernel(context, desc, flags, debug)
