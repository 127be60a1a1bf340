"""CONVOLUTION on the GPU (issue 27): an implicit GEMM on GEMM's tiling (gemm.py's tiled_source), no im2col buffer.

For each group g (the product's batch), out(m, n) = sum_k a(m, k) b(k, n) with
- m: the output channel g Cog + m (M = Cog, the output channels per group);
- n: the output position (batch item, then the spatial coordinates, row-major: N = Batch x prod(output spatial));
- k: the input channel g Cig + c and the filter tap (c, then the taps row-major: K = Cig x prod(filter spatial));
- a(m, k): the filter's element: FORWARD filter[g Cog + m, c, tap], BACKWARD (transposed) filter[g Cig + c, m, tap];
  mode CONVOLUTION flips the taps (the filter read from its far end);
- b(k, n): the input element the tap links to output position z, 0 outside the input: FORWARD input position
  z S - Ps + tap D; BACKWARD, the input position y with y S - Ps + tap D = z (none when z + Ps - tap D is not a
  multiple of S), as reference.py's gathered and scattered forms say.
The epilogue adds Bias[g Cog + m] and applies the fused activation (gemm.fused_activation), then writes as GEMM's
does: a FLOAT32 output directly through its strides; a FLOAT16 output whose last spatial axis is unit-strided and
even-sized (every other stride even) two neighbours (one 32-bit word) at a time by the tiled pass; any other FLOAT16
output through gemm.ScratchOutput's rounding pass. Sizes, strides (any input, filter and output strides: NHWC is
strides), paddings and dilations are WGSL constants. With fewer than DIRECT_ROWS output channels per group
(depthwise), the untiled pass (gemm.direct_source) runs instead of the 16-row tiles. FLOAT32 accumulation as GEMM's
(blocks of the tile depth); FLOAT16 widened exactly; FLOAT64 refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...ops.base import OperatorDesc
from ...ops.convolution import ConvolutionOperatorDesc
from ...types import DataType, ExecutionFlags
from .context import Bound, GpuContext, Recorder, group_counts
from .elementwise import Params
from .gemm import (
    DIRECT_ROWS,
    ScratchOutput,
    Tiling,
    bases,
    check_float_types,
    check_vector_bases,
    decompose,
    direct_source,
    fused_activation,
    tensor_load,
    tiled_source,
    vector_rows,
)
from .kernel import GpuKernel, compile_pass
from .wgsl import F16_BITS, params_binding

D = DataType


def _row_major(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether `strides` lay `sizes` out row-major and packed (sizes of 1 may have any stride)."""
    return all(size == 1 or stride == math.prod(sizes[d + 1:]) for d, (size, stride) in
               enumerate(zip(sizes, strides, strict=True)))


def _u32(value: int) -> int:
    """A possibly negative offset step as the u32 it wraps to (offsets are sums that end up in range)."""
    return value % (1 << 32)


class ConvolutionKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: ConvolutionOperatorDesc) -> None:
        super().__init__(context, desc)
        check_float_types(desc)
        x, w, bias, output = desc.input_tensor, desc.filter_tensor, desc.bias_tensor, desc.output_tensor
        backward, flip, groups = desc.is_backward, desc.flips_filter, desc.group_count
        cig, cog = desc.channels_per_group()
        strides, dilations, padding = desc.spatial_strides, desc.spatial_dilations, desc.spatial_start_padding
        count = desc.spatial_count
        batch = x.sizes[0]
        in_sp, out_sp, taps = x.sizes[2:], output.sizes[2:], w.sizes[2:]
        sx, sw, so = x.element_strides, w.element_strides, output.element_strides
        m, n, k = cog, batch * math.prod(out_sp), cig * math.prod(taps)

        # a(m, k): the filter; k = (c, taps row-major), a tap's filter index flipped in mode CONVOLUTION
        tap_strides = [_u32(-s if flip else s) for s in sw[2:]]
        flip_origin = sum((size - 1) * s for size, s in zip(taps, sw[2:], strict=True)) if flip else 0
        c_stride, m_stride = (sw[0], sw[1]) if backward else (sw[1], sw[0])
        w_channel = sw[0] * (cig if backward else cog)     # where a group's filters start
        tiling = None if cog < DIRECT_ROWS else Tiling(
            groups, m, n, k, a_k_first=c_stride <= m_stride, b_n_first=sx[-1] <= sx[1],
            a_vector=not flip and c_stride <= m_stride and _row_major([cig, *taps], [c_stride, *sw[2:]])
            and vector_rows(w, k, 1, [m_stride, w_channel]))
        self.vectors = (False, tiling is not None and tiling.a_vector)

        # A FLOAT16 output is written by the tiled pass two neighbours at a time where each 32-bit word holds
        # elements x, x + 1 (x even) of one row: the last spatial axis even-sized and unit-strided, every other
        # stride even (an invocation's 4 positions n then start at an even x of one row).
        pairs = (output.data_type is D.FLOAT16 and tiling is not None and out_sp[-1] % 2 == 0 and so[-1] == 1
                 and all(stride % 2 == 0 for size, stride in zip(output.sizes[:-1], so[:-1], strict=True)
                         if size > 1))
        self.pairs = pairs
        direct = output.data_type is D.FLOAT32 or pairs
        self.out = None if direct else ScratchOutput(self, output, None)
        params = Params(4)
        slots = {"x": 0, "w": 1, "bias": 2, "out": 3}
        tensors = [("x", x), ("w", w)] + ([("bias", bias)] if bias is not None else [])
        parts = [params_binding(4)]
        parts += [tensor_load(context, name, tensor, slots[name], vector=name == "w" and self.vectors[1])
                  for name, tensor in tensors]
        if bias is None:
            parts.append("@group(0) @binding(2) var<storage, read_write> bias: array<u32>;\n")
        parts.append("var<private> base_out: u32;\n@group(0) @binding(3) var<storage, read_write> out: array<u32>;\n"
                     "var<private> x_group: u32;\nvar<private> w_group: u32;\nvar<private> o_group: u32;\n"
                     "var<private> bias_group: u32;\n")
        # per group: where its channels start in each tensor
        o_channel = so[1] if direct else math.prod(out_sp)
        bias_stride = 0 if bias is None else bias.element_strides[1]
        parts.append(f"fn start(g: u32) {{\n{bases([(name, slots[name]) for name, _ in tensors])}"
                     f"    base_out = P[3u];\n    x_group = g * {cig * sx[1]}u;\n    w_group = g * {w_channel}u;\n"
                     f"    o_group = g * {cog * o_channel}u;\n    bias_group = g * {cog * bias_stride}u;\n}}\n")
        row = f"w_group + m * {m_stride}u"
        if self.vectors[1]:     # k is the offset within a filter's packed row
            parts.append(f"fn a_vec4(m: u32, k: u32) -> vec4<f32> {{ return load4_w({row} + k); }}\n")
        else:
            parts.append(f"fn a_value(m: u32, k: u32) -> f32 {{\n    var at = {row} + {flip_origin}u;\n"
                         f"{decompose('k', [cig, *taps], [[c_stride, *tap_strides]], ['at'], 'k')}"
                         f"    return load_w(at);\n}}\n")
        parts.append(self._b_value(cig, taps, batch, in_sp, out_sp, sx, strides, dilations, padding, backward))
        parts.append(fused_activation(desc.fused_activation, params))
        value = "acc" if bias is None else f"acc + load_bias(bias_group + m * {bias_stride}u)"
        # n = (batch item, output position row-major): its offset in the output
        out_weights = list(so[:1]) + list(so[2:]) if direct else [output.element_count // batch] + [
            math.prod(out_sp[d + 1:]) for d in range(count)]
        m_weight = so[1] if direct else math.prod(out_sp)
        offset = (f"    var at = base_out + o_group + m * {m_weight}u;\n"
                  f"{decompose('n', [batch, *out_sp], [out_weights], ['at'], 'n')}")
        if pairs:
            parts.append(F16_BITS + f"fn result(m: u32, acc: f32) -> f32 {{ return activation({value}); }}\n"
                         f"fn store_pair(m: u32, n: u32, first: f32, second: f32, both: bool) {{\n{offset}"
                         f"    out[at >> 1u] = f16_bits(result(m, first)) | (f16_bits(result(m, second)) << 16u);"
                         f"\n}}\n")
        parts.append(f"fn store(m: u32, n: u32, acc: f32) {{\n{offset}"
                     f"    out[at] = bitcast<u32>(activation({value}));\n}}\n")
        if tiling is None:
            parts.append(direct_source(groups, m, n, k))
            work = group_counts(groups * m * n)
        else:
            parts.append(tiled_source(tiling, pairs))
            work = tiling.groups()
        self.main = compile_pass(context, "".join(parts), 4, params, work)
        self.dummy = self.scratch(16) if bias is None else None

    @staticmethod
    def _b_value(cig: int, taps: Sequence[int], batch: int, in_sp: Sequence[int], out_sp: Sequence[int],
                 sx: Sequence[int], strides: Sequence[int], dilations: Sequence[int], padding: Sequence[int],
                 backward: bool) -> str:
        """fn b_value(k, n): the input element that tap k links to output position n, 0 outside the input."""
        count = len(in_sp)
        lines = ["fn b_value(k: u32, n: u32) -> f32 {\n", "    var at = x_group;\n",
                 decompose("k", [cig, *taps], [[sx[1]] + [0] * count], ["at"], "k"),
                 decompose("n", [batch, *out_sp], [[sx[0]] + [0] * count], ["at"], "n")]
        for d in range(count):
            tap = f"k_{d + 1}" if taps[d] > 1 else "0u"
            z = f"n_{d + 1}" if out_sp[d] > 1 else "0u"
            if backward:
                # the input position y with y S - Ps + tap D = z
                lines.append(f"    let q{d} = i32({z}) + {padding[d]} - i32({tap}) * {dilations[d]};\n")
                if strides[d] > 1:
                    lines.append(f"    if (q{d} < 0 || q{d} % {strides[d]} != 0) {{ return 0.0; }}\n"
                                 f"    let y{d} = q{d} / {strides[d]};\n")
                else:
                    lines.append(f"    let y{d} = q{d};\n")
            else:
                lines.append(f"    let y{d} = i32({z}) * {strides[d]} - {padding[d]} + i32({tap}) * {dilations[d]};\n")
            lines.append(f"    if (y{d} < 0 || y{d} >= {in_sp[d]}) {{ return 0.0; }}\n"
                         f"    at += u32(y{d}) * {sx[2 + d]}u;\n")
        lines.append("    return load_x(at);\n}\n")
        return "".join(lines)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source, weights, bias = inputs
        assert source is not None and weights is not None
        check_vector_bases(self.vectors, (source, weights))
        assert not self.pairs or outputs[0].base % 2 == 0, outputs[0]
        target = outputs[0] if self.out is None else self.out.buffer
        self.main.record(recorder, [source, weights, self.dummy if bias is None else bias, target])
        if self.out is not None:
            self.out.record(recorder, outputs[0])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ConvolutionKernel:
    """FLOAT32 computation for FLOAT16 tensors whatever the flags say."""
    assert isinstance(desc, ConvolutionOperatorDesc)
    return ConvolutionKernel(context, desc)
