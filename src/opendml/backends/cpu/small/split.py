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
from . import FlatArray, viewer


def slices_kernel(whole: TensorDesc, parts: Sequence[TensorDesc], axis: int, *, joining: bool) -> Kernel:
    """The copy between `whole` and its `parts` along `axis`: into the parts (SPLIT) or into the whole (JOIN)."""
    regions = [(slice(None),) * axis + (slice(offset, offset + part.sizes[axis]),)
               for offset, part in zip(slice_offsets(parts, axis), parts, strict=True)]
    whole_view, part_views = viewer(whole), [viewer(part) for part in parts]

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        whole_flat, part_flats = (outputs[0], inputs) if joining else (inputs[0], outputs)
        whole_array = whole_view(cast(FlatArray, whole_flat))
        for part_view, flat, region in zip(part_views, part_flats, regions, strict=True):
            if joining:
                whole_array[region] = part_view(cast(FlatArray, flat))
            else:
                part_view(cast(FlatArray, flat))[...] = whole_array[region]

    return kernel


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    split = cast(SplitOperatorDesc, desc)
    return slices_kernel(split.input_tensor, split.output_tensors, split.axis, joining=False)
