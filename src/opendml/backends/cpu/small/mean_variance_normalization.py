"""MEAN_VARIANCE_NORMALIZATION (version 0) on small tensors: version 1's small kernel for the equivalent descriptor
(the axes CrossChannel stands for)."""

from __future__ import annotations

from typing import cast

from ....ops.base import OperatorDesc
from ....ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import mean_variance_normalization1


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    equivalent = cast(MeanVarianceNormalizationOperatorDesc, desc).as_mean_variance_normalization1()
    return mean_variance_normalization1.compile_kernel(equivalent, flags, debug)
