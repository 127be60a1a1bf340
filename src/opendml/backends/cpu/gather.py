"""GATHER and GATHER_ELEMENTS on the CPU: GATHER_ND1's numba kernel for the equivalent descriptor over re-strided
views of the same memory (ops/gather.py): its plan merges the dimensions before Axis with the indices' into one
outer loop over output rows, and copies the dimensions after Axis as contiguous runs where they are; its clamping
and debug check of the indices are GATHER_ND1's, its refusal worded for the original operator."""

from __future__ import annotations

from ...ops.base import OperatorDesc
from ...ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from ...types import ExecutionFlags
from .. import Kernel
from . import gather_nd1


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    assert isinstance(desc, (GatherOperatorDesc, GatherElementsOperatorDesc))
    return gather_nd1.compile_kernel(desc.as_gather_nd1(), flags, debug)
