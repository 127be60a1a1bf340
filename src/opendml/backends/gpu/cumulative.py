"""CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT on the GPU: two passes.

The tally (cumulative.wgsl) runs one invocation per line along Axis, in order, and writes each output element's raw
bits to a scratch buffer (a word per element, two for the 64-bit types, packed row-major); the copy (split.wgsl)
moves them into the output through the elementwise `Output`, which writes an 8- or 16-bit (FLOAT16) output a whole
word per invocation, so that no two invocations write one word and no byte outside the output's elements changes.
The tally pass reads the whole input before the copy writes anything, so the output may alias the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ...ops.base import OperatorDesc
from ...ops.cumulative import CumulativeOperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, Params
from .kernel import ElementwiseSource, GpuKernel, compile_pass, template
from .wgsl import COMPUTE_TYPE, params_binding, prelude, raw_type, stores, tensor_input


def _row_major(sizes: Sequence[int]) -> list[int]:
    strides = [1] * len(sizes)
    for dim in range(len(sizes) - 2, -1, -1):
        strides[dim] = strides[dim + 1] * sizes[dim + 1]
    return strides


class CumulativeKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: CumulativeOperatorDesc) -> None:
        super().__init__(context, desc)
        source, result, axis = desc.input_tensor, desc.output_tensor, desc.axis
        data_type = source.data_type
        wide = data_type.element_size == 8
        packed = _row_major(source.sizes)
        lines = [1 if dim == axis else size for dim, size in enumerate(source.sizes)]
        line_count = prod(lines)
        # the tally pass: bindings x, s, P
        params = Params(2)
        x_lines = params.add_tensor(lines, source.element_strides)
        s_lines = params.add_tensor(lines, packed)
        count_at = params.add_constant(line_count)
        length = params.add_constant(source.sizes[axis])
        x_step, s_step = params.add_constant(source.element_strides[axis]), params.add_constant(packed[axis])
        body = template("cumulative.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE, LINES=count_at, LENGTH=length,
                        X_LINES=x_lines, S_LINES=s_lines, X_STEP=x_step, S_STEP=s_step, CT=COMPUTE_TYPE[data_type],
                        IDENTITY=desc.IDENTITY, DECREASING=str(desc.decreasing).lower(),
                        OP="*" if desc.is_product else "+", T=data_type.name,
                        STORED="before" if desc.exclusive else "tally")
        scratch_type = DataType.UINT64 if wide else DataType.UINT32
        text = "".join([prelude({data_type}), params_binding(2), COMMON,
                        tensor_input("x", data_type, 0, computed=True, f16=context.f16),
                        "@group(0) @binding(1) var<storage, read_write> s: array<u32>;\n",
                        stores("s", scratch_type, 1), body])
        self.tally = compile_pass(context, text, 2, params, group_counts(line_count))
        self.scratch_buffer = self.scratch(max(16, 4 * (2 if wide else 1) * source.element_count))
        # the copy pass: the scratch (as raw words of the output's width) into the output
        copy_params = Params(2)
        block = copy_params.add_tensor(source.sizes, packed)
        elementwise = ElementwiseSource([("x", TensorDesc(scratch_type, source.sizes))], result, copy_params,
                                        words=True)
        self.copy = elementwise.compile(context, template("split.wgsl", IN=block, RAW=raw_type(data_type)))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.tally.record(recorder, [source, self.scratch_buffer])
        self.copy.record(recorder, [self.scratch_buffer, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> CumulativeKernel:
    assert isinstance(desc, CumulativeOperatorDesc)
    return CumulativeKernel(context, desc)
