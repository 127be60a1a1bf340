"""JOIN on the GPU: SPLIT's slice copy run backwards (backends/gpu/split.py, split.wgsl), one pass per input, each
writing its slice of the output along Axis."""

from __future__ import annotations

from ...ops.base import OperatorDesc
from ...ops.join import JoinOperatorDesc
from ...types import ExecutionFlags
from .context import GpuContext
from .split import SlicesKernel


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> SlicesKernel:
    assert isinstance(desc, JoinOperatorDesc)
    return SlicesKernel(context, desc, desc.output_tensor, desc.input_tensors, desc.axis, joining=True)
