"""ONE_HOT on the GPU: one elementwise pass over the output (one_hot.wgsl).

Every output element reads the index of its sequence through the indices' strides, finds the position it names
(index_tensors.wgsl: negative indices of signed types count from the end; anything else out of range names none)
and takes the raw bits of OnValue or OffValue. 8- and 16-bit outputs are written a whole word per invocation by
the elementwise `Output`, so no byte outside the output's elements changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ...ops.base import OperatorDesc
from ...ops.one_hot import OneHotOperatorDesc
from ...types import ExecutionFlags
from ..plans import merge_dimensions
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .index_tensors import index_functions
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import raw_type


class OneHotKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: OneHotOperatorDesc) -> None:
        super().__init__(context, desc)
        indices, values, output = desc.indices_tensor, desc.values_tensor, desc.output_tensor
        params = Params(3)
        # The dimensions before and after Axis, each merged where the indices allow (the output's own layout is
        # the elementwise Output's business): fewer dimensions, fewer divisions per element.
        axis, sizes, strides = desc.axis, output.sizes, indices.element_strides
        before_sizes, (before_strides,) = merge_dimensions(sizes[:axis], strides[:axis])
        after_sizes, (after_strides,) = merge_dimensions(sizes[axis + 1:], strides[axis + 1:])
        before = params.add_tensor(before_sizes, before_strides)
        after = params.add_tensor(after_sizes, after_strides)
        after_count, depth = params.add(prod(after_sizes)), params.add(desc.depth)
        on = params.add(desc.on_value_offset)
        elementwise = ElementwiseSource([("ix", indices), ("values", values)], output, params)
        text = index_functions(indices.data_type) + template(
            "one_hot.wgsl", BEFORE=before, AFTER=after, AFTER_COUNT=after_count, DEPTH=depth, ON=on,
            RAW=raw_type(output.data_type))
        self.main = elementwise.compile(context, text)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        indices, values = inputs
        assert indices is not None and values is not None
        self.main.record(recorder, [indices, values, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> OneHotKernel:
    assert isinstance(desc, OneHotOperatorDesc)
    return OneHotKernel(context, desc)
