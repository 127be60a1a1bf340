"""Plans from descriptors alone that more than one backend uses: the merging of dimensions and the gather's
dimension groups. Backends turn them into their own form (numba's int64 arrays, a GPU parameter buffer)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import BindingError
from ..ops.gather_nd1 import SIGNED_INDEX_TYPES, GatherNd1OperatorDesc


def merge_dimensions(sizes: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Drops size-1 dimensions and merges neighbours that are contiguous (outer stride = inner stride x inner
    size) in every stride list, keeping the row-major order of what remains. Never returns zero dimensions (one
    element is a contiguous run of 1)."""
    merged_sizes: list[int] = []
    merged_strides: list[list[int]] = [[] for _ in strides]
    for d, size in enumerate(sizes):
        if size == 1:
            continue
        if merged_sizes and all(s[d] * size == m[-1] for s, m in zip(strides, merged_strides, strict=True)):
            merged_sizes[-1] *= size
            for s, m in zip(strides, merged_strides, strict=True):
                m[-1] = s[d]
        else:
            merged_sizes.append(size)
            for s, m in zip(strides, merged_strides, strict=True):
                m.append(s[d])
    if not merged_sizes:
        return [1], [[1] for _ in strides]
    return merged_sizes, merged_strides


@dataclass(frozen=True)
class GatherPlan:
    """GATHER_ND1's dimensions in three groups, each merged where the layouts allow: the outer ones (the indices'
    leading dimensions, batch dimensions among them, which also step the input), the tuple's coordinates (which
    index input dimensions), and the rest (the input dimensions copied whole for each tuple)."""

    outer_sizes: list[int]
    outer_indices_strides: list[int]
    outer_output_strides: list[int]
    outer_input_strides: list[int]
    coordinate_sizes: list[int]
    coordinate_strides: list[int]
    tuple_stride: int           # the indices' stride between the coordinates of one tuple
    signed: bool                # negative coordinates count from the end (signed index types)
    rest_sizes: list[int]
    rest_input_strides: list[int]
    rest_output_strides: list[int]


def gather_plan(desc: GatherNd1OperatorDesc) -> GatherPlan:
    source, indices, result = desc.input_tensor, desc.indices_tensor, desc.output_tensor
    rank = source.dimension_count
    batch, tuple_size = desc.batch_dimension_count, desc.index_tuple_size
    in_sizes = source.sizes[rank - desc.input_dimension_count:]
    in_strides = source.element_strides[rank - desc.input_dimension_count:]
    ix_sizes = indices.sizes[rank - desc.indices_dimension_count:]
    ix_strides = indices.element_strides[rank - desc.indices_dimension_count:]
    outer_count = len(ix_sizes) - 1
    rest_count = len(in_sizes) - batch - tuple_size
    # The output's meaningful dims are the outer ones, then the rest; its leading ones have size 1.
    out_strides = result.element_strides[rank - outer_count - rest_count:]
    outer_in_strides = [in_strides[d] if d < batch else 0 for d in range(outer_count)]
    outer_sizes, (outer_ix, outer_out, outer_in) = merge_dimensions(
        ix_sizes[:-1], ix_strides[:-1], out_strides[:outer_count], outer_in_strides)
    rest_sizes, (rest_in, rest_out) = merge_dimensions(in_sizes[batch + tuple_size:], in_strides[batch + tuple_size:],
                                                       out_strides[outer_count:])
    return GatherPlan(outer_sizes, outer_ix, outer_out, outer_in, list(in_sizes[batch: batch + tuple_size]),
                      list(in_strides[batch: batch + tuple_size]), ix_strides[-1],
                      indices.data_type in SIGNED_INDEX_TYPES, rest_sizes, rest_in, rest_out)


def gather_out_of_range(desc: GatherNd1OperatorDesc, position: int, coordinate: int,
                        index_at: Callable[[int], int]) -> BindingError:
    """A debug device's refusal of coordinate `coordinate` of the tuple at row-major outer `position` (DECISIONS
    21); `index_at(offset)` reads the indices' element at an element offset, for the value."""
    tensor = desc.indices_tensor
    rank = tensor.dimension_count
    meaningful = tensor.sizes[rank - desc.indices_dimension_count:]
    outer: list[int] = []
    for size in reversed(meaningful[:-1]):  # unravel the row-major position over the outer dims
        outer.append(position % size)
        position //= size
    logical = [0] * (rank - desc.indices_dimension_count) + outer[::-1] + [coordinate]
    offset = sum(index * stride for index, stride in zip(logical, tensor.element_strides, strict=True))
    value = index_at(offset)
    input_dim = (rank - desc.input_dimension_count) + desc.batch_dimension_count + coordinate
    size = desc.input_tensor.sizes[input_dim]
    allowed = f"[{-size}, {size - 1}]" if tensor.data_type in SIGNED_INDEX_TYPES else f"[0, {size - 1}]"
    refusal = desc.index_refusal(logical, value, size, allowed)
    if refusal is not None:
        return refusal
    return BindingError(f"{desc.label}: IndicesTensor{logical} is {value}, out of range: coordinate {coordinate} "
                        f"of its tuple indexes InputTensor dimension {input_dim} (size {size}), so it must be in "
                        f"{allowed}; the debug device refuses it (a release device clamps it), and nothing was "
                        f"written")
