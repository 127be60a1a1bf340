"""TOP_K and TOP_K1 on the GPU: three passes.

The ranks (top_k.wgsl) run one invocation per input element, which counts the elements of its sequence that come
before it in the order (ops/top_k.py: larger order key, or an equal key at a lower index) and, when that rank is
below K, writes its index to its own word of a scratch buffer (packed, OutputIndexTensor's sizes): the ranks of a
sequence are a permutation, so no two invocations write one word and the result does not depend on scheduling.
Two elementwise passes then write the outputs through the elementwise `Output` (an 8- or 16-bit output a whole word
per invocation, so no byte outside the output's elements changes): the values as the selected input elements' own
bits, the indices from the scratch (a UINT64 index as its low word and a zero high word).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ...ops.base import OperatorDesc
from ...ops.top_k import TopKOperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, Params
from .kernel import ElementwiseSource, GpuKernel, compile_pass, template
from .wgsl import buffer, loads, params_binding, prelude, raw_type, stores

D = DataType

#: The order key of each type's raw bits, as an unsigned integer (a vec2<u32> (low, high) for 64-bit types) whose
#: unsigned order is ops/top_k.order_key's: floats as 2^(bits-1) +- magnitude (-0.0 = +0.0), NaN the largest;
#: signed integers with the sign bit flipped.
_KEYS = {
    D.FLOAT32: "let a = r & 0x7fffffffu; if (a > 0x7f800000u) { return 0xffffffffu; } "
               "return select(0x80000000u + a, 0x80000000u - a, (r & 0x80000000u) != 0u);",
    D.FLOAT16: "let a = r & 0x7fffu; if (a > 0x7c00u) { return 0xffffffffu; } "
               "return select(0x8000u + a, 0x8000u - a, (r & 0x8000u) != 0u);",
    D.INT32: "return r ^ 0x80000000u;", D.INT16: "return r ^ 0x8000u;", D.INT8: "return r ^ 0x80u;",
    D.UINT32: "return r;", D.UINT16: "return r;", D.UINT8: "return r;",
    D.INT64: "return vec2<u32>(r.x, r.y ^ 0x80000000u);", D.UINT64: "return r;",
}


def _order_functions(data_type: DataType, decreasing: bool) -> str:
    """`order_key(raw)` (complemented with INCREASING) and `before(a, b)`: whether key a comes first."""
    raw = raw_type(data_type)
    complement = "" if decreasing else "~"
    wide = data_type.element_size == 8
    compare = "a.y > b.y || (a.y == b.y && a.x > b.x)" if wide else "a > b"
    return (f"fn natural_key(r: {raw}) -> {raw} {{ {_KEYS[data_type]} }}\n"
            f"fn order_key(r: {raw}) -> {raw} {{ return {complement}natural_key(r); }}\n"
            f"fn before(a: {raw}, b: {raw}) -> bool {{ return {compare}; }}\n")


def _packed_strides(sizes: Sequence[int]) -> list[int]:
    strides = [1] * len(sizes)
    for dim in range(len(sizes) - 2, -1, -1):
        strides[dim] = strides[dim + 1] * sizes[dim + 1]
    return strides


class TopKKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: TopKOperatorDesc) -> None:
        super().__init__(context, desc)
        source, axis = desc.input_tensor, desc.axis
        data_type = source.data_type
        out_sizes = list(desc.output_value_tensor.sizes)
        packed = _packed_strides(out_sizes)
        along = [0 if dim == axis else stride for dim, stride in enumerate(source.element_strides)]
        scratch_along = [0 if dim == axis else stride for dim, stride in enumerate(packed)]
        # the ranks: bindings x, s, P (x read as raw bits: a 64-bit type as FLOAT64's raw-only loads)
        params = Params(2)
        x_lines = params.add_tensor(source.sizes, along)
        s_lines = params.add_tensor(source.sizes, scratch_along)
        body = template("top_k.wgsl", WORKGROUP_SIZE=WORKGROUP_SIZE, COUNT=params.add(source.element_count),
                        LENGTH=params.add(source.sizes[axis]), K=params.add(desc.k),
                        INNER=params.add(prod(source.sizes[axis + 1:])), X_LINES=x_lines, S_LINES=s_lines,
                        X_STEP=params.add(source.element_strides[axis]), S_STEP=params.add(packed[axis]))
        raw_only = D.FLOAT64 if data_type.element_size == 8 else data_type
        text = "".join([prelude({raw_only} - {D.FLOAT64}), params_binding(2), COMMON, buffer("x", 0),
                        loads("x", raw_only, 0), buffer("s", 1), stores("s", D.UINT32, 1),
                        _order_functions(data_type, desc.decreasing), body])
        self.ranks = compile_pass(context, text, 2, params, group_counts(source.element_count))
        self.scratch_buffer = self.scratch(max(16, 4 * prod(out_sizes)))
        scratch = TensorDesc(D.UINT32, tuple(out_sizes))
        # the values: the input's bits at each selected index
        value_params = Params(3)
        s_block = value_params.add_tensor(out_sizes, packed)
        x_block = value_params.add_tensor(out_sizes, along)
        x_step = value_params.add(source.element_strides[axis])
        values = ElementwiseSource([("x", TensorDesc(raw_only, source.sizes)), ("s", scratch)],
                                   desc.output_value_tensor, value_params)
        self.values = values.compile(context, (
            f"fn value(o: u32) -> {raw_type(data_type)} {{\n"
            f"    return load_raw_x(offset_of({x_block}u, o) + load_raw_s(offset_of({s_block}u, o)) * P[{x_step}u]);\n"
            f"}}\n"))
        # the indices
        index_params = Params(2)
        block = index_params.add_tensor(out_sizes, packed)
        wide = desc.output_index_tensor.data_type.element_size == 8
        indices = ElementwiseSource([("s", scratch)], desc.output_index_tensor, index_params)
        read = f"load_raw_s(offset_of({block}u, o))"
        self.indices = indices.compile(context, (
            f"fn value(o: u32) -> {'vec2<u32>' if wide else 'u32'} {{ "
            f"return {f'vec2<u32>({read}, 0u)' if wide else read}; }}\n"))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.ranks.record(recorder, [source, self.scratch_buffer])
        self.values.record(recorder, [source, self.scratch_buffer, outputs[0]])
        self.indices.record(recorder, [self.scratch_buffer, outputs[1]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> TopKKernel:
    assert isinstance(desc, TopKOperatorDesc)
    return TopKKernel(context, desc)
