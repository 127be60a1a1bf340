"""GATHER and GATHER_ELEMENTS on small tensors: GATHER_ND1's NumPy kernel (small/gather_nd1.py: np.take, or
advanced indexing, on clamped indices) for the equivalent descriptor over re-strided views (ops/gather.py)."""

from __future__ import annotations

from ....ops.base import OperatorDesc
from ....ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import gather_nd1


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    assert isinstance(desc, (GatherOperatorDesc, GatherElementsOperatorDesc))
    return gather_nd1.compile_kernel(desc.as_gather_nd1(), flags, debug)
