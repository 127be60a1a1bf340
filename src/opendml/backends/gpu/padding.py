"""PADDING, PADDING1 and TILE on the GPU: one elementwise pass (padding.wgsl) whose `value(o)` maps the output
coordinates to the input's by the mode's formula and moves the element's raw bits (or the constant's), stored by the
elementwise `Output`, which writes an 8- or 16-bit output a whole word per invocation (no torn neighbours)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.padding import PaddingBase
from ...types import ExecutionFlags
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import raw_type


class PaddingKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: PaddingBase) -> None:
        super().__init__(context, desc)
        source, result = desc.input_tensor, desc.output_tensor
        params = Params(2)
        out_block = params.add_tensor(result.sizes, [0] * len(result.sizes))
        in_block = params.add_tensor(source.sizes, source.element_strides)
        start = params.add(*desc.starts)
        bits = np.asarray(desc.constant(), dtype=source.data_type.numpy_dtype).tobytes().ljust(8, b"\0")
        low, high = int.from_bytes(bits[:4], "little"), int.from_bytes(bits[4:], "little")
        constant = f"vec2<u32>({low}u, {high}u)" if source.data_type.element_size == 8 else f"{low}u"
        body = template("padding.wgsl", MODE=int(desc.mode), OUT=out_block, IN=in_block, START=start,
                        RAW=raw_type(source.data_type), CONSTANT=constant)
        self.copy = ElementwiseSource([("x", source)], result, params, words=True).compile(context, body)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.copy.record(recorder, [source, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> PaddingKernel:
    assert isinstance(desc, PaddingBase)
    return PaddingKernel(context, desc)
