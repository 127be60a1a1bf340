"""ARGMIN and ARGMAX on the CPU: REDUCE's ARGMIN/ARGMAX plan of the equivalent REDUCE descriptor, walking each
block in the operator's AxisDirection (reduce_kernels)."""

from __future__ import annotations

from typing import cast

from ...ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from ...ops.base import OperatorDesc
from ...types import ExecutionFlags
from .. import Kernel
from .reduce import reduce_kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    arg_desc = cast(ArgMinOperatorDesc | ArgMaxOperatorDesc, desc)
    return reduce_kernel(arg_desc.reduce_equivalent(), arg_desc.decreasing)
