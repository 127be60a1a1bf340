"""REVERSE_SUBSEQUENCES on the GPU: one elementwise pass over the output (reverse_subsequences.wgsl).

Every output element reads its sequence's length through the lengths' strides, clamps it to the size along Axis and
copies the input element it names as raw bits. 8- and 16-bit outputs are written a whole word per invocation by the
elementwise `Output`, so no byte outside the output's elements changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ...ops.base import OperatorDesc
from ...ops.reverse_subsequences import ReverseSubsequencesOperatorDesc
from ...types import ExecutionFlags
from ..plans import merge_dimensions
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import raw_type


class ReverseSubsequencesKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: ReverseSubsequencesOperatorDesc) -> None:
        super().__init__(context, desc)
        source, lengths, output = desc.input_tensor, desc.sequence_lengths_tensor, desc.output_tensor
        params = Params(3)
        axis, sizes = desc.axis, output.sizes

        def block(part: slice, strides: Sequence[int]) -> int:
            merged, (merged_strides,) = merge_dimensions(sizes[part], strides[part])
            return params.add_tensor(merged, merged_strides) if merged else params.add_tensor([1], [0])

        x_strides, l_strides = source.element_strides, lengths.element_strides
        before, after = slice(0, axis), slice(axis + 1, None)
        blocks = {"X_BEFORE": block(before, x_strides), "X_AFTER": block(after, x_strides),
                  "L_BEFORE": block(before, l_strides), "L_AFTER": block(after, l_strides)}
        numbers = {"X_STRIDE": params.add_constant(x_strides[axis]), "SIZE": params.add_constant(sizes[axis]),
                   "AFTER_COUNT": params.add_constant(prod(sizes[axis + 1:]))}
        elementwise = ElementwiseSource([("x", source), ("lengths", lengths)], output, params, words=True)
        self.main = elementwise.compile(context, template("reverse_subsequences.wgsl", RAW=raw_type(output.data_type),
                                                          **blocks, **numbers))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source, lengths = inputs
        assert source is not None and lengths is not None
        self.main.record(recorder, [source, lengths, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags,
                   debug: bool) -> ReverseSubsequencesKernel:
    assert isinstance(desc, ReverseSubsequencesOperatorDesc)
    return ReverseSubsequencesKernel(context, desc)
