"""PADDING, PADDING1 and TILE on the GPU: one elementwise pass (padding.wgsl) whose `value(o)` maps the output
coordinates to the input's by the mode's formula and moves the element's raw bits (or the constant's), stored by the
elementwise `Output`, which writes an 8- or 16-bit output a whole word per invocation (no torn neighbours)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.padding import PaddingBase, PaddingMode
from ...types import ExecutionFlags
from . import specialize
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import raw_type


class PaddingKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: PaddingBase) -> None:
        super().__init__(context, desc)
        source, result = desc.input_tensor, desc.output_tensor
        params = Params(2)
        out_block = params.add_tensor(result.sizes, [0] * len(result.sizes))
        in_block = params.add_tensor(source.sizes, source.element_strides)
        start = params.add(*desc.starts)
        bits = np.asarray(desc.constant(), dtype=source.data_type.numpy_dtype).tobytes().ljust(8, b"\0")
        low, high = int.from_bytes(bits[:4], "little"), int.from_bytes(bits[4:], "little")
        constant = f"vec2<u32>({low}u, {high}u)" if source.data_type.element_size == 8 else f"{low}u"
        body = template("padding.wgsl", MODE=int(desc.mode), OUT=out_block, IN=in_block, START=start,
                        RAW=raw_type(source.data_type), CONSTANT=constant)
        if specialize.ENABLED:   # padding.wgsl's source_index and its value(o), unrolled with the shapes as literals
            body = body[:body.index("fn value(")] + _unrolled_value(desc, raw_type(source.data_type), constant)
        self.copy = ElementwiseSource([("x", source)], result, params, words=True).compile(context, body)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.copy.record(recorder, [source, outputs[0]])


def _unrolled_value(desc: PaddingBase, raw: str, constant: str) -> str:
    """padding.wgsl's value(o) for one descriptor: per dimension (innermost first) its coordinate c by a constant
    size, and the input index: c itself where the dimension is not padded, c modulo the input's size for TILE and
    WRAP without StartPadding, else source_index (the mode's formula) of c - start; only CONSTANT asks whether the
    element lies inside the input."""
    source, result = desc.input_tensor, desc.output_tensor
    constant_mode = desc.mode == PaddingMode.CONSTANT
    lines = [f"fn value(o: u32) -> {raw} {{\n    var rest = o;\n    var offset = 0u;\n    var inside = true;\n"]
    for d in range(result.dimension_count - 1, -1, -1):
        size, n, start = result.sizes[d], source.sizes[d], desc.starts[d]
        stride = source.element_strides[d] & 0xFFFFFFFF
        lines.append(f"    let c{d} = rest % {size}u;\n    rest = rest / {size}u;\n")
        if size == n and start == 0:
            index = f"c{d}"
        elif desc.mode == PaddingMode.WRAP and start == 0:
            index = f"(c{d} % {n}u)"
        else:
            lines.append(f"    let i{d} = source_index(i32(c{d}) - {start}, {n});\n")
            if constant_mode:
                lines.append(f"    inside = inside && i{d} >= 0 && i{d} < {n};\n")
            index = f"u32(max(i{d}, 0))"
        if stride and n > 1:
            lines.append(f"    offset += {index} * {stride}u;\n")
    lines.append(f"    if (!inside) {{ return {constant}; }}\n    return load_raw_x(offset);\n}}\n")
    return "".join(lines)


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> PaddingKernel:
    assert isinstance(desc, PaddingBase)
    return PaddingKernel(context, desc)
