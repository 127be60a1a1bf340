"""SPLIT and JOIN on small tensors: part i is the slice [offset_i, offset_i + size_i) along Axis of the whole
tensor (ops/split.py's slice_offsets), copied from the whole into the part (SPLIT) or back (JOIN)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ....ops.base import OperatorDesc
from ....ops.split import SplitOperatorDesc, slice_offsets
from ....tensor import TensorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, tensor_view


def slices_kernel(whole: TensorDesc, parts: Sequence[TensorDesc], axis: int, *, joining: bool) -> Kernel:
    """The copy between `whole` and its `parts` along `axis`: into the parts (SPLIT) or into the whole (JOIN)."""
    slices = [(offset, part.sizes[axis]) for offset, part in zip(slice_offsets(parts, axis), parts, strict=True)]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        whole_flat, part_flats = (outputs[0], inputs) if joining else (inputs[0], outputs)
        whole_view = tensor_view(whole, cast(FlatArray, whole_flat))
        for part, flat, (offset, size) in zip(parts, part_flats, slices, strict=True):
            part_view = tensor_view(part, cast(FlatArray, flat))
            region = whole_view[(slice(None),) * axis + (slice(offset, offset + size),)]
            if joining:
                region[...] = part_view
            else:
                part_view[...] = region

    return kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    split = cast(SplitOperatorDesc, desc)
    return slices_kernel(split.input_tensor, split.output_tensors, split.axis, joining=False)
