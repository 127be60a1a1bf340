"""SCATTER_ELEMENTS and SCATTER_ND's plan, from the descriptor alone, for every backend: mark, then copy.

A scatter's transposed GATHER_ND1 (ops/scatter.py) splits the tensors' dimensions into

* batch: dimensions the indices, the updates, the output and the input share (SCATTER_ELEMENTS' other axes);
* positions: the index tuples' positions (the indices' meaningful dimensions but the last, after the batch ones);
* coordinates: the K output dimensions a tuple's coordinates select;
* rest: the output's trailing dimensions, written whole from each update.

The output is `cells` (batch then coordinate dimensions, row-major) of `rest_count` elements each. The mark walks
the updates' outer positions (batch, then positions) in row-major order and records, per cell, the last position
whose tuple selects it (a tuple with a coordinate out of range selects none: its update is skipped); the copy then
writes every cell once, from the update of its marked position, or from the input where none is marked. So repeated
indices give the last update in UpdatesTensor's row-major order on every backend (a later position of the same
batch is a larger outer position: the GPU marks with an atomic maximum), and no byte is written twice.

Size-1 dimensions are dropped and neighbours contiguous in every stride list of their group merged; coordinates
are never merged (each has its own index).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ops.gather_nd1 import SIGNED_INDEX_TYPES
from ..ops.scatter import ScatterAsGatherNd1, ScatterDesc
from .plans import merge_dimensions


def _row_major(sizes: list[int]) -> list[int]:
    strides = [1] * len(sizes)
    for dim in range(len(sizes) - 2, -1, -1):
        strides[dim] = strides[dim + 1] * sizes[dim + 1]
    return strides


@dataclass(frozen=True)
class ScatterPlan:
    """The groups' sizes and element strides (see the module's docstring); cell strides are the dense row-major
    strides of the cells (batch, then coordinates)."""

    outer_sizes: list[int]              # batch, then positions
    outer_indices_strides: list[int]
    outer_updates_strides: list[int]
    outer_cell_strides: list[int]       # 0 for positions
    outer_output_strides: list[int]     # 0 for positions
    coordinate_sizes: list[int]
    coordinate_cell_strides: list[int]
    coordinate_output_strides: list[int]
    tuple_stride: int                   # the indices' stride between the coordinates of one tuple
    signed: bool                        # negative coordinates count from the end (signed index types)
    cell_sizes: list[int]               # batch, then coordinates
    cell_output_strides: list[int]
    cell_input_strides: list[int]
    rest_sizes: list[int]
    rest_output_strides: list[int]
    rest_input_strides: list[int]
    rest_updates_strides: list[int]

    @property
    def cells(self) -> int:
        return prod(self.cell_sizes)

    @property
    def rest_count(self) -> int:
        return prod(self.rest_sizes)

    @property
    def positions(self) -> int:
        """The outer positions: every tuple of every batch."""
        return prod(self.outer_sizes)


def scatter_plan(desc: ScatterDesc) -> ScatterPlan:
    dual: ScatterAsGatherNd1 = desc.as_gather_nd1()
    target, indices, updates = dual.input_tensor, dual.indices_tensor, dual.output_tensor
    assert dual.source is not None
    rank, batch, tuple_size = target.dimension_count, dual.batch_dimension_count, dual.index_tuple_size
    lead = rank - dual.input_dimension_count
    out_strides, in_strides = target.element_strides[lead:], dual.source.element_strides[lead:]
    sizes = target.sizes[lead:]
    ix_sizes = indices.sizes[rank - dual.indices_dimension_count:]
    ix_strides = indices.element_strides[rank - dual.indices_dimension_count:]
    outer_count = len(ix_sizes) - 1
    rest_count = len(sizes) - batch - tuple_size
    up_strides = updates.element_strides[rank - outer_count - rest_count:]
    cell_sizes = list(sizes[:batch + tuple_size])
    dense = _row_major(cell_sizes)
    outer_cells = [dense[d] if d < batch else 0 for d in range(outer_count)]
    outer_outs = [out_strides[d] if d < batch else 0 for d in range(outer_count)]
    outer_sizes, (outer_ix, outer_up, outer_cell, outer_out) = merge_dimensions(
        ix_sizes[:-1], ix_strides[:-1], up_strides[:outer_count], outer_cells, outer_outs)
    merged_cells, (cell_out, cell_in) = merge_dimensions(cell_sizes, out_strides[:batch + tuple_size],
                                                         in_strides[:batch + tuple_size])
    rest_sizes, (rest_out, rest_in, rest_up) = merge_dimensions(
        sizes[batch + tuple_size:], out_strides[batch + tuple_size:], in_strides[batch + tuple_size:],
        up_strides[outer_count:])
    return ScatterPlan(outer_sizes, outer_ix, outer_up, outer_cell, outer_out, cell_sizes[batch:], dense[batch:],
                       list(out_strides[batch:batch + tuple_size]), ix_strides[-1],
                       indices.data_type in SIGNED_INDEX_TYPES, merged_cells, cell_out, cell_in, rest_sizes, rest_out,
                       rest_in, rest_up)
