"""ARGMIN and ARGMAX on the GPU: REDUCE's passes over the equivalent REDUCE descriptor, with the ARG state's tie
rule set by the operator's AxisDirection (reduce.py, reduce_arg.wgsl)."""

from __future__ import annotations

from ...ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from ...ops.base import OperatorDesc
from ...types import ExecutionFlags
from .context import GpuContext
from .reduce import ReduceKernel


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ReduceKernel:
    assert isinstance(desc, (ArgMinOperatorDesc, ArgMaxOperatorDesc))
    return ReduceKernel(context, desc.reduce_equivalent(), desc.decreasing, owner=desc)
