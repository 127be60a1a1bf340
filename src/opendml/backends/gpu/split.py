"""SPLIT on the GPU, and the slice copy it shares with JOIN: one elementwise pass per part (split.wgsl).

SPLIT copies the slice [offset_i, offset_i + size_i) along Axis of one whole tensor (its input) into part i (output
i); JOIN copies part i (input i) into that slice of the whole tensor (its output). A pass copies a block of the
part's sizes from one layout to another; the slice is reached by moving the whole tensor's bound base element by
offset_i x its stride along Axis, so the same pass serves both directions. JOIN's passes write disjoint slices of
one output: each 8- or 16-bit word they share is rewritten by the later pass, keeping the bytes the earlier one
wrote (the `Output` keeps the bytes outside its elements), and WebGPU orders the dispatches.

Specialized (specialize.ENABLED: the blocks' sizes and strides are constants), where the part's innermost
elements are consecutive in both layouts and the type has 32 or 64 bits, an invocation copies a run of them
(runs.py, split_run.wgsl).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...ops.base import OperatorDesc
from ...ops.split import SplitOperatorDesc
from ...tensor import TensorDesc
from ...types import ExecutionFlags
from . import specialize
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, Pass, template
from .runs import Run, RunSource, contiguous_run, run_layout
from .wgsl import raw_type


class SlicesKernel(GpuKernel):
    """The copy between `whole` and its consecutive slices `parts` along `axis`: SPLIT (whole = the input, parts =
    the outputs) or, with `joining`, JOIN (parts = the inputs, whole = the output)."""

    def __init__(self, context: GpuContext, desc: OperatorDesc, whole: TensorDesc, parts: Sequence[TensorDesc],
                 axis: int, *, joining: bool) -> None:
        super().__init__(context, desc)
        self.joining = joining
        self.passes: list[Pass] = []
        self.shifts: list[int] = []   # elements from the whole tensor's element 0 to each slice's
        offset = 0
        for part in parts:
            # The whole tensor seen through the part's sizes: its strides, from the slice's first element.
            in_whole = TensorDesc(whole.data_type, part.sizes, whole.element_strides)
            source, target = (part, in_whole) if joining else (in_whole, part)
            params = Params(2)
            block = params.add_tensor(part.sizes, source.element_strides)
            run = Run(1, 1)
            if specialize.ENABLED:
                run = run_layout(target, contiguous_run(part.sizes, source.element_strides))
            if run.length == 1:
                elementwise = ElementwiseSource([("x", source)], target, params)
                text = template("split.wgsl", IN=block, RAW=raw_type(whole.data_type))
            else:
                elementwise = RunSource([("x", source)], target, params, run)
                text = template("split_run.wgsl", IN=block, RUN=run.length, STEP=run.step)
            self.passes.append(elementwise.compile(context, text))
            self.shifts.append(offset * whole.element_strides[axis])
            offset += part.sizes[axis]

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        bound_inputs = [bound for bound in inputs if bound is not None]
        parts, whole = (bound_inputs, outputs[0]) if self.joining else (list(outputs), bound_inputs[0])
        for part_pass, part, shift in zip(self.passes, parts, self.shifts, strict=True):
            in_whole = replace(whole, base=whole.base + shift)
            part_pass.record(recorder, [part, in_whole] if self.joining else [in_whole, part])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> SlicesKernel:
    assert isinstance(desc, SplitOperatorDesc)
    return SlicesKernel(context, desc, desc.input_tensor, desc.output_tensors, desc.axis, joining=False)
