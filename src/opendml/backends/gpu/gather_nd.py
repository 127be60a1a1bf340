"""GATHER_ND on the GPU: GATHER_ND1's shaders with no batch dimensions (the same elementwise pass, clamping and
debug check pass over the indices), compiled for the equivalent GATHER_ND1 descriptor."""

from __future__ import annotations

from ...ops.base import OperatorDesc
from ...ops.gather_nd import GatherNdOperatorDesc
from ...types import ExecutionFlags
from . import gather_nd1
from .context import GpuContext


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool
                   ) -> gather_nd1.GatherKernel:
    assert isinstance(desc, GatherNdOperatorDesc)
    return gather_nd1.compile_kernel(context, desc.as_gather_nd1(), flags, debug)
