"""ONE_HOT on the GPU: one elementwise pass over the output (one_hot.wgsl).

Every output element reads the index of its sequence through the indices' strides, finds the position it names
(index_tensors.wgsl: negative indices of signed types count from the end; anything else out of range names none)
and takes the raw bits of OnValue or OffValue. 8- and 16-bit outputs are written a whole word per invocation by
the elementwise `Output`, so no byte outside the output's elements changes.

Specialized, with Axis the output's last dimension of more than one element and a 32/64-bit output contiguous
along it, an invocation writes a run of consecutive elements of one sequence (runs.py): the index is read and
decoded once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ...ops.base import OperatorDesc
from ...ops.one_hot import OneHotOperatorDesc
from ...types import ExecutionFlags
from ..plans import merge_dimensions
from . import specialize
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .index_tensors import index_functions
from .kernel import ElementwiseSource, GpuKernel, template
from .runs import Run, RunSource, run_layout
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
        # Counts that only shape the walk: constants where the shader is specialized (specialize.render), which
        # also turns offset_of on the two blocks into functions of their sizes and strides as constants.
        after_count, depth = params.add_constant(prod(after_sizes)), params.add_constant(desc.depth)
        on = params.add_constant(desc.on_value_offset)
        run = run_layout(output, desc.depth) if specialize.ENABLED and prod(after_sizes) == 1 else Run(1, 1)
        inputs = [("ix", indices), ("values", values)]
        elementwise = (ElementwiseSource(inputs, output, params) if run.length == 1 else
                       RunSource(inputs, output, params, run))
        names = dict(BEFORE=before, AFTER=after, AFTER_COUNT=after_count, DEPTH=depth, ON=on, RUN=run.length,
                     STEP=run.step, RAW=raw_type(output.data_type),
                     WALK="offset_of" if specialize.ENABLED else "walk_offset")
        text = index_functions(indices.data_type) + template("one_hot.wgsl", **names)
        if run.length > 1:
            text += template("one_hot_run.wgsl", **names)
        self.main = elementwise.compile(context, text)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        indices, values = inputs
        assert indices is not None and values is not None
        self.main.record(recorder, [indices, values, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> OneHotKernel:
    assert isinstance(desc, OneHotOperatorDesc)
    return OneHotKernel(context, desc)
