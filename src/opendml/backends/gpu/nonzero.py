"""NONZERO_COORDINATES on the GPU: three passes over the input's logical elements in row-major order, cut in blocks
of `CHUNK` elements, so the rows come in ascending element index on every run:

1. count (nonzero_count.wgsl): an invocation per block counts its nonzero elements into a scratch word;
2. prefix (nonzero_prefix.wgsl): one work group turns the counts into each block's first output row, in block
   order, and writes their total to OutputCountTensor;
3. write (nonzero_write.wgsl): an invocation per block writes its nonzero elements' last N coordinates from its first
   row on; rows past the count are not written.

An element is nonzero where its raw bits under `ops.nonzero.nonzero_mask` are (FLOAT16/FLOAT32: -0.0 is zero, NaN
is not). Both outputs are UINT32: each store is a whole word.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ops.base import OperatorDesc
from ...ops.nonzero import NonzeroCoordinatesOperatorDesc, nonzero_mask
from ...types import DataType, ExecutionFlags
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, Params
from .kernel import GpuKernel, compile_pass, template
from .wgsl import buffer, params_binding, prelude, stores, tensor_input

CHUNK = 64   # elements per block


class NonzeroKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: NonzeroCoordinatesOperatorDesc) -> None:
        super().__init__(context, desc)
        source, coordinates = desc.input_tensor, desc.output_coordinates_tensor
        data_type = source.data_type
        total = source.element_count
        blocks = -(-total // CHUNK)
        common = {"WORKGROUP_SIZE": WORKGROUP_SIZE, "CHUNK": CHUNK, "MASK": nonzero_mask(data_type)}
        x = tensor_input("x", data_type, 0, computed=False, f16=context.f16)

        params = Params(2)
        shape = {"X": params.add_desc(source), "BLOCKS": params.add(blocks), "TOTAL": params.add(total)}
        text = "".join([prelude({data_type}), params_binding(2), COMMON, x, buffer("s", 1),
                        template("nonzero_count.wgsl", **common, **shape)])
        self.count = compile_pass(context, text, 2, params, group_counts(blocks))

        params = Params(2)
        text = "".join([params_binding(2), COMMON, buffer("s", 0), buffer("n", 1), stores("n", DataType.UINT32, 1),
                        template("nonzero_prefix.wgsl", **common, BLOCKS=params.add(blocks))])
        self.prefix = compile_pass(context, text, 2, params, (1, 1))

        params = Params(3)
        shape = {"X": params.add_desc(source), "BLOCKS": params.add(blocks), "TOTAL": params.add(total),
                 "ROW": params.add(coordinates.element_strides[-2]),
                 "COLUMN": params.add(coordinates.element_strides[-1])}
        text = "".join([prelude({data_type}), params_binding(3), COMMON, x, buffer("s", 1), buffer("c", 2),
                        stores("c", DataType.UINT32, 2),
                        template("nonzero_write.wgsl", **common, **shape, COLUMNS=desc.columns,
                                 FIRST=source.dimension_count - desc.columns)])
        self.write = compile_pass(context, text, 3, params, group_counts(blocks))
        self.scratch_buffer = self.scratch(max(16, 4 * blocks))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.count.record(recorder, [source, self.scratch_buffer])
        self.prefix.record(recorder, [self.scratch_buffer, outputs[0]])
        self.write.record(recorder, [source, self.scratch_buffer, outputs[1]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> NonzeroKernel:
    assert isinstance(desc, NonzeroCoordinatesOperatorDesc)
    return NonzeroKernel(context, desc)
