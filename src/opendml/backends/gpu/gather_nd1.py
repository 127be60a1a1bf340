"""GATHER_ND1 on the GPU: one elementwise pass over the output (gather_nd1.wgsl), and on a debug device a check
pass over the indices first (gather_nd1_check.wgsl).

The descriptor's dimensions are split at compile time into three groups (as the CPU kernel does):

* outer: the batch and index-position dimensions (the indices' meaningful sizes but the tuple size), walked by
  the indices and, for batch dimensions only, the input;
* tuple: the K input dimensions the coordinates select (size, for wrapping and clamping, and input stride);
* rest: the input's trailing dimensions, copied whole for every tuple;

size-1 dimensions are dropped and neighbours contiguous in every tensor of their group merged, so that the
shader divides as little as it can. The output is row-major over (outer, rest), so its element o reads rest
element o % R of the tuple at outer position o / R. Coordinates are read as numbers (index_tensors.wgsl); out of
range ones are clamped. Values move as raw bits: every type is bit-exact. Specialized (specialize.ENABLED), the
shader's `value` is rendered here with every size, stride and count as a constant and the walks unrolled; the
generic path's (gather_nd1.wgsl) reads them from the parameter buffer.

Debug devices (DML's debug layer) refuse the first coordinate out of range, in row-major order, with its logical
position and value, before anything is recorded: `check` runs the check pass, reads back its one-word status
and raises the BindingError the CPU backend raises, with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.gather_nd1 import GatherNd1OperatorDesc
from ...types import ExecutionFlags
from ..plans import GatherPlan, gather_out_of_range, gather_plan
from . import specialize
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, NONE, Params
from .index_tensors import index_functions
from .kernel import ElementwiseSource, GpuKernel, Pass, compile_pass, template
from .runs import Run, RunSource, run_layout
from .wgsl import buffer, loads, params_binding, prelude, raw_type


def _add_outer_and_tuple(params: Params, plan: GatherPlan) -> tuple[int, int]:
    """The outer dimensions' layout block over the indices, and the tuple block (K, tuple stride, K x (size,
    input stride)); returns where each starts."""
    outer_ix = params.add_tensor(plan.outer_sizes, plan.outer_indices_strides)
    pairs = [value for pair in zip(plan.coordinate_sizes, plan.coordinate_strides, strict=True) for value in pair]
    tuple_block = params.add(len(plan.coordinate_sizes), plan.tuple_stride, *pairs)
    return outer_ix, tuple_block


def first_flagged(context: GpuContext, check_pass: Pass, indices: Bound, status: Any) -> int:
    """Runs a debug check pass over `indices` at once (it lowers `status`, a u32 scratch word, to the first flagged
    coordinate's position) and returns that position (NONE: none flagged)."""
    context.flush()  # indices written by dispatches recorded earlier in a batch must be there
    context.write(status, 0, np.array([NONE], np.uint32))
    recorder = Recorder(context)
    check_pass.record(recorder, [indices, status])
    recorder.submit()
    return int(np.frombuffer(context.read(status, 0, 4), np.uint32)[0])


class GatherKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: GatherNd1OperatorDesc, debug: bool) -> None:
        super().__init__(context, desc)
        self.gather_desc = desc
        source, indices, output = desc.input_tensor, desc.indices_tensor, desc.output_tensor
        plan = gather_plan(desc)
        self.plan = plan

        params = Params(3)
        outer_ix, tuple_block = _add_outer_and_tuple(params, plan)
        outer_in = params.add_tensor(plan.outer_sizes, plan.outer_input_strides)
        rest = params.add_tensor(plan.rest_sizes, plan.rest_input_strides)
        rest_count = params.add(prod(plan.rest_sizes))
        # A run of consecutive output elements per invocation (runs.py) where the rest's innermost elements are
        # consecutive in the input too: the tuple is read once per run.
        run = Run(1, 1)
        if specialize.ENABLED and plan.rest_input_strides[-1] == 1:
            run = run_layout(output, plan.rest_sizes[-1])
        inputs = [("x", source), ("ix", indices)]
        elementwise = (ElementwiseSource(inputs, output, params) if run.length == 1 else
                       RunSource(inputs, output, params, run))
        if specialize.ENABLED:
            body = specialized_value(plan, rest, raw_type(output.data_type), run)
        else:
            body = template("gather_nd1.wgsl", OUTER_IX=outer_ix, OUTER_IN=outer_in, REST=rest, REST_COUNT=rest_count,
                            TUPLE=tuple_block, RAW=raw_type(output.data_type))
        self.main = elementwise.compile(context, index_functions(indices.data_type) + body)

        self.debug = debug
        if debug:
            check_params = Params(2)
            outer_ix, tuple_block = _add_outer_and_tuple(check_params, plan)
            coordinate_count = prod(plan.outer_sizes) * len(plan.coordinate_sizes)
            count = check_params.add(coordinate_count)
            check_wgsl = "".join([
                prelude({indices.data_type}), params_binding(2), COMMON, buffer("ix", 0),
                loads("ix", indices.data_type, 0), index_functions(indices.data_type),
                template("gather_nd1_check.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE, COUNT=count, OUTER_IX=outer_ix,
                         TUPLE=tuple_block)])
            self.check_pass = compile_pass(context, check_wgsl, 2, check_params, group_counts(coordinate_count))
            self.status = self.scratch(4)

    def check(self, inputs: Sequence[Bound | None]) -> None:
        """On a debug device: the first coordinate out of range, found on the device, refused before anything is
        recorded (DECISIONS 21)."""
        if not self.debug:
            return
        indices = inputs[1]
        assert indices is not None
        first = first_flagged(self.context, self.check_pass, indices, self.status)
        if first != NONE:
            tuple_size = len(self.plan.coordinate_sizes)
            raise gather_out_of_range(self.gather_desc, first // tuple_size, first % tuple_size,
                                      lambda at: self._index_at(indices, at))

    def _index_at(self, indices: Bound, offset: int) -> int:
        """The indices' element at an element offset, read back from the device."""
        dtype = self.gather_desc.indices_tensor.data_type.numpy_dtype
        raw = self.context.read(indices.handle, indices.bind_offset + (indices.base + offset) * dtype.itemsize,
                                dtype.itemsize)
        return int(np.frombuffer(raw, dtype)[0])

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source, indices = inputs
        assert source is not None and indices is not None
        self.main.record(recorder, [source, indices, outputs[0]])


def specialized_value(plan: GatherPlan, rest: int, raw: str, run: Run) -> str:
    """gather_nd1.wgsl's `value` for one plan: the outer walk and the tuple unrolled with their sizes and strides
    as constants, the rest's offset through its layout block (`rest`, which specialize.render turns into constants
    too); with a run longer than 1, runs.py's `run` instead, which copies the run's elements from there (as far
    apart in the input as in the output)."""
    count = prod(plan.rest_sizes)
    head = f"fn value(o: u32) -> {raw} {{" if run.length == 1 else "fn run(o: u32, first: u32) {"
    lines = [head, f"    var source = offset_of({rest}u, o % {count}u);",
             f"    var rest = o / {count}u;", "    var at = 0u;"]
    outer = list(zip(plan.outer_sizes, plan.outer_indices_strides, plan.outer_input_strides, strict=True))
    for d, (size, ix_stride, in_stride) in reversed(list(enumerate(outer))):
        coordinate = "rest" if d == 0 else f"c{d}"
        if d > 0:
            lines += [f"    let c{d} = rest % {size}u;", f"    rest = rest / {size}u;"]
        if ix_stride:
            lines.append(f"    at += {coordinate} * {ix_stride}u;")
        if in_stride:
            lines.append(f"    source += {coordinate} * {in_stride}u;")
    for k, (size, stride) in enumerate(zip(plan.coordinate_sizes, plan.coordinate_strides, strict=True)):
        lines.append(f"    source += coordinate(index_words(at + {k * plan.tuple_stride}u), {size}u) * {stride}u;")
    if run.length == 1:
        lines.append("    return load_raw_x(source);")
    else:
        lines += [f"    for (var s = 0u; s < {run.length}u; s++) {{",
                  f"        store_raw_out(first + s * {run.step}u, load_raw_x(source + s * {run.step}u));", "    }"]
    lines += ["}", ""]
    return "\n".join(lines)


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> GatherKernel:
    assert isinstance(desc, GatherNd1OperatorDesc)
    return GatherKernel(context, desc, debug)
