"""SPLIT on the GPU: one elementwise pass per output, reading the input through its strides (split.wgsl)."""

from __future__ import annotations

from collections.abc import Sequence

from ...ops.base import OperatorDesc
from ...ops.split import SplitOperatorDesc
from ...types import ExecutionFlags
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, Pass, template
from .wgsl import raw_type


class SplitKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: SplitOperatorDesc) -> None:
        super().__init__(context, desc)
        source = desc.input_tensor
        self.passes: list[Pass] = []
        for output, offset in zip(desc.output_tensors, desc.offsets, strict=True):
            params = Params(2)
            # The input seen through the output's sizes: same strides, shifted along Axis.
            block = params.add_tensor(output.sizes, source.element_strides)
            shift = params.add(offset * source.element_strides[desc.axis])
            elementwise = ElementwiseSource([("x", source)], output, params)
            text = template("split.wgsl", IN=block, AXIS_SHIFT=shift, RAW=raw_type(output.data_type))
            self.passes.append(elementwise.compile(context, text))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        for output_pass, target in zip(self.passes, outputs, strict=True):
            output_pass.record(recorder, [source, target])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> SplitKernel:
    assert isinstance(desc, SplitOperatorDesc)
    return SplitKernel(context, desc)
