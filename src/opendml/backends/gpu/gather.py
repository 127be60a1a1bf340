"""GATHER and GATHER_ELEMENTS on the GPU: GATHER_ND1's shaders (gather_nd1.wgsl, and gather_nd1_check.wgsl on a
debug device; 64-bit indices read as two words) for the equivalent descriptor over re-strided views of the same
memory (ops/gather.py)."""

from __future__ import annotations

from ...ops.base import OperatorDesc
from ...ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from ...types import ExecutionFlags
from . import gather_nd1
from .context import GpuContext


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool
                   ) -> gather_nd1.GatherKernel:
    assert isinstance(desc, (GatherOperatorDesc, GatherElementsOperatorDesc))
    return gather_nd1.compile_kernel(context, desc.as_gather_nd1(), flags, debug)
