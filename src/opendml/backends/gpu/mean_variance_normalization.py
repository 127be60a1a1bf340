"""MEAN_VARIANCE_NORMALIZATION on the GPU: MEAN_VARIANCE_NORMALIZATION1's shaders over the axes CrossChannel stands
for ({2, 3}, or {1, 2, 3}), compiled for the equivalent MVN1 descriptor."""

from __future__ import annotations

from ...ops.base import OperatorDesc
from ...ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc
from ...types import ExecutionFlags
from . import mean_variance_normalization1
from .context import GpuContext


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool
                   ) -> mean_variance_normalization1.MvnKernel:
    assert isinstance(desc, MeanVarianceNormalizationOperatorDesc)
    return mean_variance_normalization1.compile_kernel(context, desc.as_mean_variance_normalization1(), flags, debug)
