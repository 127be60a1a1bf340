"""JOIN on small tensors: SPLIT's slice copy the other way (small/split.py)."""

from __future__ import annotations

from typing import cast

from ....ops.base import OperatorDesc
from ....ops.join import JoinOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from .split import slices_kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    join = cast(JoinOperatorDesc, desc)
    return slices_kernel(join.output_tensor, join.input_tensors, join.axis, joining=True)
