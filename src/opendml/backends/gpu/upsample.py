"""UPSAMPLE_2D on the GPU: one elementwise pass (upsample.wgsl) over the output, each invocation one output element
(a word of them for 16-bit outputs: the elementwise `Output` never tears neighbouring bytes). NEAREST_NEIGHBOR moves
the input element's raw bits; LINEAR blends the two taps per axis in f32 (FLOAT16 widened exactly, rounded once)
in the order ops/upsample.py states, with the indices and weights ops/upsample.py works out, passed as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.upsample import Upsample2dOperatorDesc, nearest, taps
from ...types import ExecutionFlags
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import raw_type

_NEAREST = "    return load_raw_x(top + left);\n"
_LINEAR = """    let bottom = base + P[row + 1u] * P[{XR}u];
    let right = P[column + 1u] * P[{XC}u];
    let wy = bitcast<f32>(P[row + 2u]);
    let wx = bitcast<f32>(P[column + 2u]);
    let upper = load_x(top + left) * (1.0 - wx) + load_x(top + right) * wx;
    let lower = load_x(bottom + left) * (1.0 - wx) + load_x(bottom + right) * wx;
    return to_raw_{T}(upper * (1.0 - wy) + lower * wy);
"""


def _table(first: np.ndarray, second: np.ndarray, weight: np.ndarray) -> list[int]:
    """(first, second, weight bits) per output coordinate, as u32 words."""
    words = np.stack([first.astype(np.uint32), second.astype(np.uint32), weight.astype(np.float32).view(np.uint32)])
    return [int(word) for word in words.T.ravel()]


class Upsample2dKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: Upsample2dOperatorDesc) -> None:
        super().__init__(context, desc)
        source, result = desc.input_tensor, desc.output_tensor
        scale = desc.scale_size
        height, width = source.sizes[-2:]
        out_height, out_width = result.sizes[-2:]
        if desc.linear:
            rows = taps(out_height, scale.height, height)
            columns = taps(out_width, scale.width, width)
        else:
            zero_h, zero_w = np.zeros(out_height, np.float32), np.zeros(out_width, np.float32)
            near_h, near_w = nearest(out_height, scale.height), nearest(out_width, scale.width)
            rows, columns = (near_h, near_h, zero_h), (near_w, near_w, zero_w)
        params = Params(2)
        images = params.add_tensor(source.sizes[:-2], source.element_strides[:-2])
        row_table, column_table = params.add(*_table(*rows)), params.add(*_table(*columns))
        oh, ow = params.add_constant(out_height), params.add_constant(out_width)
        xr, xc = params.add_constant(source.element_strides[-2]), params.add_constant(source.element_strides[-1])
        body = _LINEAR if desc.linear else _NEAREST
        body = body.replace("{XR}", str(xr)).replace("{XC}", str(xc)).replace("{T}", source.data_type.name)
        elementwise = ElementwiseSource([("x", source)], result, params,
                                        computed=("x",) if desc.linear else (), words=True)
        self.upsample = elementwise.compile(context, template(
            "upsample.wgsl", RAW=raw_type(source.data_type), OW=ow, OH=oh, IMAGES=images, ROWS=row_table,
            COLUMNS=column_table, XR=xr, XC=xc, BODY=body))

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.upsample.record(recorder, [source, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Upsample2dKernel:
    assert isinstance(desc, Upsample2dOperatorDesc)
    return Upsample2dKernel(context, desc)
