"""The standalone activations on small tensors: the element-wise engine's NumPy kernel (small/element_wise.py) of
each one's formula (ops/activations.py's ACTIVATION_FORMULAS), the formula numba's kernels are rendered from."""

from __future__ import annotations

from ....ops.base import OperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import element_wise


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    return element_wise.compile_kernel(desc, flags, debug)
