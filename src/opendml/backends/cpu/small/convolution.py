"""CONVOLUTION in NumPy (small tensors, and the cold start's kernel at any size): tap by tap, one batched matmul per
filter position over all groups, accumulated in FLOAT32 (FLOAT16 widened exactly; NumPy's BLAS blocks each matmul).

FORWARD gathers: the input is zero-padded by StartPadding/EndPadding, and tap k reads the strided window starting at
k D (the filter's positions flipped in CONVOLUTION mode): output[n, g, o, q] += W_k[g, o, c] x input[n, g, c, q S + k D
- Ps]. BACKWARD scatters the same products (filter {Cin, Cout / G, k...}): each tap's [G, Cog, Cig] @ input adds
into the strided window at k D of an output grid that starts Ps before the output, whose part inside the output is
kept. Then + Bias, the fused activation (its formula rendered by NumPy, formula.evaluate, as the standalone
activations' small kernels do; a fused ELEMENT_WISE_CLIP by its own formula), rounded once to the output's type.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ....formula import Node, evaluate, parse
from ....ops.activations import ActivationOperatorDesc, activation_tree, activation_values
from ....ops.base import OperatorDesc
from ....types import DataType, ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer

_F32 = DataType.FLOAT32
#: An index of a NumPy array (slices, Ellipsis and integers).
Index = tuple[Any, ...]


def _activation(activation: OperatorDesc | None) -> tuple[Node | None, dict[str, float]]:
    """The fused activation's FLOAT32 formula over `x` and its parameters' values (None: no activation)."""
    if activation is None:
        return None, {}
    if isinstance(activation, ActivationOperatorDesc):
        return activation_tree(activation, parse("x", {"x": _F32}, _F32), _F32), activation_values(activation)
    clip: Any = activation  # the fused ELEMENT_WISE_CLIP: its standalone formula, Min and Max as DML receives them
    tree = parse(clip.INFO.formula, {"x": _F32, "Min": _F32, "Max": _F32}, _F32)
    return tree, {"Min": float(np.float32(clip.min)), "Max": float(np.float32(clip.max))}


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    conv: Any = desc
    x_desc, w_desc, b_desc, y_desc = conv.input_tensor, conv.filter_tensor, conv.bias_tensor, conv.output_tensor
    dtype = np.dtype(y_desc.data_type.numpy_dtype)
    x_view, w_view, y_view = viewer(x_desc), viewer(w_desc), viewer(y_desc)
    b_view = None if b_desc is None else viewer(b_desc)
    count = conv.spatial_count
    strides, dilations = conv.spatial_strides, conv.spatial_dilations
    start, end = conv.spatial_start_padding, conv.spatial_end_padding
    groups, backward = conv.group_count, conv.is_backward
    cig, cog = conv.channels_per_group()
    kernel_sizes = w_desc.sizes[2:]
    images, in_sizes, out_sizes = x_desc.sizes[0], x_desc.sizes[2:], y_desc.sizes[2:]
    flip: Index = (slice(None), slice(None), *(slice(None, None, -1),) * count) if conv.flips_filter else (...,)
    tree, values = _activation(conv.fused_activation)

    def window(tap: Sequence[int], sizes: Sequence[int]) -> Index:
        """[..., the strided positions k D + i S, i < sizes, of one tap along every spatial dimension]."""
        return (..., *(slice(k * d, k * d + (n - 1) * s + 1, s)
                       for k, d, s, n in zip(tap, dilations, strides, sizes, strict=True)))

    def inside(starts: Sequence[int], sizes: Sequence[int]) -> Index:
        """[..., starts[i] to starts[i] + sizes[i] along every spatial dimension]."""
        return (..., *(slice(p, p + n) for p, n in zip(starts, sizes, strict=True)))

    def tap_index(tap: Sequence[int]) -> Index:
        return (..., *tap)

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        with np.errstate(all="ignore"):  # infinities and NaN give IEEE's results, as in the numba kernel
            compute(inputs, outputs)

    def compute(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = x_view(cast(FlatArray, inputs[0]).view(dtype)).astype(np.float32)
        w = w_view(cast(FlatArray, inputs[1]).view(dtype)).astype(np.float32)[flip]
        x = x.reshape(images, groups, cig, *in_sizes)
        if backward:
            # {Cin, Cog, k...} -> per tap [G, Cog, Cig]
            taps = w.reshape(groups, cig, cog, *kernel_sizes).swapaxes(1, 2)
            grid = [max((n - 1) * s + (k - 1) * d + 1, p + o) for n, s, k, d, p, o in
                    zip(in_sizes, strides, kernel_sizes, dilations, start, out_sizes, strict=True)]
            result = np.zeros((images, groups, cog, *grid), np.float32)
            flat = x.reshape(images, groups, cig, -1)
            for tap in itertools.product(*(range(k) for k in kernel_sizes)):
                product = np.matmul(taps[tap_index(tap)], flat).reshape(images, groups, cog, *in_sizes)
                result[window(tap, in_sizes)] += product
            result = result[inside(start, out_sizes)]
        else:
            taps = w.reshape(groups, cog, cig, *kernel_sizes)
            padded = np.zeros((images, groups, cig, *(p + n + q for p, n, q in zip(start, in_sizes, end,
                                                                                      strict=True))), np.float32)
            padded[inside(start, in_sizes)] = x
            result = np.zeros((images, groups, cog, *out_sizes), np.float32)
            flat_result = result.reshape(images, groups, cog, -1)
            for tap in itertools.product(*(range(k) for k in kernel_sizes)):
                gathered = padded[window(tap, out_sizes)].reshape(images, groups, cig, -1)
                flat_result += np.matmul(taps[tap_index(tap)], gathered)
        result = result.reshape(images, groups * cog, *out_sizes)
        if b_view is not None:
            result = result + b_view(cast(FlatArray, inputs[2]).view(dtype)).astype(np.float32)
        if tree is not None:
            result = evaluate(tree, {**values, "x": result}, _F32)
        y_view(outputs[0].view(dtype))[...] = result.astype(dtype)

    return kernel
