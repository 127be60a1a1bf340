"""PADDING, PADDING1 and TILE on the cpu: slice.py's row-copy kernel over the descriptor's per-dimension index maps
(ops/padding.py: the input index each output index reads, -1 where CONSTANT writes its value): each output row is
written once, its interior copied as one run and its padding gathered from the row (or set to the value); small
tensors (and rows too short to pay for the row tables) run the NumPy kernel (small/padding.py: strided band
copies)."""

from __future__ import annotations

from typing import cast

import numpy as np

from ...ops.base import OperatorDesc
from ...ops.padding import PaddingBase, PaddingMode
from ...types import ExecutionFlags
from .. import Kernel
from .slice import FILL, copy_kernel, is_small
from .small import padding as small_padding


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    padding = cast(PaddingBase, desc)
    kernel = None
    if not is_small(desc):
        strides = padding.input_tensor.element_strides
        maps = [np.where(m < 0, FILL, m * stride) for m, stride in zip(padding.index_maps(), strides, strict=True)]
        fill = padding.constant() if padding.mode is PaddingMode.CONSTANT else 0
        kernel = copy_kernel(maps, padding.output_tensor.element_strides, padding.output_tensor.data_type, fill)
    return kernel if kernel is not None else small_padding.compile_kernel(desc, flags, debug)
