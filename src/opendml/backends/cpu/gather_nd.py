"""GATHER_ND on the CPU: GATHER_ND1's kernel with no batch dimensions (the same plan, copies, clamping and debug
check of the indices), compiled for the equivalent GATHER_ND1 descriptor."""

from __future__ import annotations

from typing import cast

from ...ops.base import OperatorDesc
from ...ops.gather_nd import GatherNdOperatorDesc
from ...types import ExecutionFlags
from .. import Kernel
from . import gather_nd1


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    return gather_nd1.compile_kernel(cast(GatherNdOperatorDesc, desc).as_gather_nd1(), flags, debug)
