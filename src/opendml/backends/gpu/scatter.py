"""SCATTER_ELEMENTS and SCATTER_ND on the GPU: three passes over the plan of backends/scatter_plan.py.

* clear (scatter_clear.wgsl): a scratch word per cell (the output's blocks that a tuple selects) set to 0;
* mark (scatter_mark.wgsl): one invocation per outer position t (batch, then index positions) raises its selected
  cell's word to t + 1 with atomicMax, so each cell ends with its last position in row-major order whatever order
  the invocations run in (a tuple out of range marks nothing: its update is skipped);
* copy (scatter.wgsl): an elementwise pass over the output's view (cells, then the rest) that takes each element
  from the update of its cell's mark, or from the input, through the elementwise `Output`, which writes an 8- or
  16-bit output a whole word per invocation: no two invocations write one word, no byte outside the output's
  elements changes, and every run gives the same bits.

A debug device first runs GATHER_ND1's check pass (gather_nd1_check.wgsl) on the scatter's transposed GATHER_ND1
(ops/scatter.py) and refuses the first coordinate out of range before anything is recorded, with the message the
CPU backend gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags
from ..plans import gather_out_of_range, gather_plan
from ..scatter_plan import scatter_plan
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, NONE, Params
from .gather_nd1 import _add_outer_and_tuple, first_flagged
from .index_tensors import index_functions
from .kernel import ElementwiseSource, GpuKernel, compile_pass, template
from .wgsl import buffer, loads, params_binding, prelude, raw_type


class ScatterKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: ScatterElementsOperatorDesc | ScatterNdOperatorDesc,
                 debug: bool) -> None:
        super().__init__(context, desc)
        dual = self.dual = desc.as_gather_nd1()
        plan = scatter_plan(desc)
        indices, data_type = desc.indices_tensor, desc.output_tensor.data_type
        cells = plan.cells
        self.marks = self.scratch(max(16, 4 * cells))

        clear_params = Params(1)
        count = clear_params.add(cells)
        clear_wgsl = "".join([params_binding(1), COMMON, template("scatter_clear.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE,
                                                                   COUNT=count)])
        self.clear = compile_pass(context, clear_wgsl, 1, clear_params, group_counts(cells))

        mark_params = Params(2)
        outer_ix = mark_params.add_tensor(plan.outer_sizes, plan.outer_indices_strides)
        outer_cell = mark_params.add_tensor(plan.outer_sizes, plan.outer_cell_strides)
        pairs = [value for pair in zip(plan.coordinate_sizes, plan.coordinate_cell_strides, strict=True)
                 for value in pair]
        tuple_block = mark_params.add(len(plan.coordinate_sizes), plan.tuple_stride, *pairs)
        count = mark_params.add(plan.positions)
        mark_wgsl = "".join([
            prelude({indices.data_type}), params_binding(2), COMMON, buffer("ix", 0), loads("ix", indices.data_type, 0),
            index_functions(indices.data_type),
            template("scatter_mark.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE, COUNT=count, OUTER_IX=outer_ix,
                     OUTER_CELL=outer_cell, TUPLE=tuple_block)])
        self.mark = compile_pass(context, mark_wgsl, 2, mark_params, group_counts(plan.positions))

        params = Params(4)
        outer_up = params.add_tensor(plan.outer_sizes, plan.outer_updates_strides)
        cell_in = params.add_tensor(plan.cell_sizes, plan.cell_input_strides)
        rest_up = params.add_tensor(plan.rest_sizes, plan.rest_updates_strides)
        rest_in = params.add_tensor(plan.rest_sizes, plan.rest_input_strides)
        rest_count = params.add(plan.rest_count)
        elementwise = ElementwiseSource([("x", desc.input_tensor), ("u", desc.updates_tensor),
                                         ("w", TensorDesc(DataType.UINT32, (cells,)))], dual.input_tensor, params)
        self.copy = elementwise.compile(context, template(
            "scatter.wgsl", OUTER_UP=outer_up, CELL_IN=cell_in, REST_UP=rest_up, REST_IN=rest_in,
            REST_COUNT=rest_count, RAW=raw_type(data_type)))

        self.debug = debug
        if debug:
            gather = gather_plan(dual)
            check_params = Params(2)
            outer_ix, tuple_block = _add_outer_and_tuple(check_params, gather)
            coordinates = len(gather.coordinate_sizes) * plan.positions
            count = check_params.add(coordinates)
            check_wgsl = "".join([
                prelude({indices.data_type}), params_binding(2), COMMON, buffer("ix", 0),
                loads("ix", indices.data_type, 0), index_functions(indices.data_type),
                template("gather_nd1_check.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE, COUNT=count, OUTER_IX=outer_ix,
                         TUPLE=tuple_block)])
            self.check_pass = compile_pass(context, check_wgsl, 2, check_params, group_counts(coordinates))
            self.status = self.scratch(4)
            self.tuple_size = len(gather.coordinate_sizes)

    def check(self, inputs: Sequence[Bound | None]) -> None:
        """On a debug device: the first coordinate out of range, found on the device, refused before anything is
        recorded."""
        if not self.debug:
            return
        indices = inputs[1]
        assert indices is not None
        first = first_flagged(self.context, self.check_pass, indices, self.status)
        if first != NONE:
            dtype = self.dual.indices_tensor.data_type.numpy_dtype

            def index_at(offset: int) -> int:
                raw = self.context.read(indices.handle, indices.bind_offset + (indices.base + offset) * dtype.itemsize,
                                        dtype.itemsize)
                return int(np.frombuffer(raw, dtype)[0])

            raise gather_out_of_range(self.dual, first // self.tuple_size, first % self.tuple_size, index_at)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source, indices, updates = inputs
        assert source is not None and indices is not None and updates is not None
        self.clear.record(recorder, [self.marks])
        self.mark.record(recorder, [indices, self.marks])
        self.copy.record(recorder, [source, updates, self.marks, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ScatterKernel:
    assert isinstance(desc, (ScatterElementsOperatorDesc, ScatterNdOperatorDesc))
    return ScatterKernel(context, desc, debug)
