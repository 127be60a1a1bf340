"""The graph API of the copy operators (issue 28): `dml.cast` and `dml.slice` (DirectMLX's dml::Cast and dml::Slice),
on graph.py's machinery.

A module of its own because graph.py uses typing.cast (and the builtin slice) under those names.
"""

from __future__ import annotations

from collections.abc import Sequence

from .convert import to_enum, to_int, to_sequence, to_uint_list
from .errors import ValidationError
from .graph import Expression, _graph_of, _packed
from .ops.copy import CastOperatorDesc, Slice1OperatorDesc
from .ops.depth_space import DepthToSpace1OperatorDesc, SpaceToDepth1OperatorDesc, output_sizes
from .ops.reverse_subsequences import ReverseSubsequencesOperatorDesc
from .types import DataType, DepthSpaceOrder, to_data_type

__all__ = ["cast", "depth_to_space", "reverse_subsequences", "slice", "space_to_depth"]


def cast(x: Expression, data_type: DataType | str) -> Expression:
    """dml::Cast -> DML_OPERATOR_CAST: x converted to `data_type` (to a float: rounded once to nearest even; float to
    integer: truncated toward zero and saturated, NaN 0; integer to integer: wrapped; README Rulings). Output: x's
    sizes, packed.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); cast(g.input([2, 3], "FLOAT32"), "INT8").dtype
    <DataType.INT8: 5>
    """
    function = "dml.cast"
    graph = _graph_of(function, x=x)
    target = to_data_type(function, "data_type", data_type)
    desc = CastOperatorDesc(x.desc, _packed(target, x.sizes))
    return graph._add_operator(desc, [x])[0]


def slice(x: Expression, offsets: Sequence[int], sizes: Sequence[int],
          strides: Sequence[int] | None = None) -> Expression:
    """dml::Slice -> DML_OPERATOR_SLICE1: the window [offsets, offsets + sizes) of x along every dimension, every
    |strides|-th element of it (default 1), from the window's end where a stride is negative (reversed). Output sizes:
    1 + (sizes[i] - 1) // |strides[i]|.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); slice(g.input([4, 6], "FLOAT32"), [1, 0], [3, 6], [1, -2]).sizes
    (3, 3)
    """
    function = "dml.slice"
    graph = _graph_of(function, x=x)
    rank = len(x.sizes)
    window_offsets = to_uint_list(function, "offsets", offsets)
    window_sizes = to_uint_list(function, "sizes", sizes)
    steps = [1] * rank if strides is None else [
        to_int(function, f"strides[{i}]", value, low=-2**31, high=2**31 - 1)
        for i, value in enumerate(to_sequence(function, "strides", strides))]
    for name, values in (("offsets", window_offsets), ("sizes", window_sizes), ("strides", steps)):
        if len(values) != rank:
            raise ValidationError(f"{function}: {name} has {len(values)} values; it must have one per dimension of "
                                  f"x ({rank})")
    if any(step == 0 for step in steps):
        raise ValidationError(f"{function}: strides is {list(steps)}; a stride must not be 0")
    output = [1 + max(size - 1, 0) // abs(step) for size, step in zip(window_sizes, steps, strict=True)]
    desc = Slice1OperatorDesc(x.desc, _packed(x.dtype, output), rank, window_offsets, window_sizes, steps)
    return graph._add_operator(desc, [x])[0]


def space_to_depth(x: Expression, block_size: int,
                   order: DepthSpaceOrder | str = DepthSpaceOrder.DEPTH_COLUMN_ROW) -> Expression:
    """dml::SpaceToDepth -> DML_OPERATOR_SPACE_TO_DEPTH1: x's [N, C, H, W] blocks of block_size x block_size moved into
    depth, [N, C * block_size^2, H / block_size, W / block_size], in `order` (DML_DEPTH_SPACE_ORDER).

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); space_to_depth(g.input([1, 2, 4, 6], "FLOAT32"), 2).sizes
    (1, 8, 2, 3)
    """
    return _depth_space("dml.space_to_depth", SpaceToDepth1OperatorDesc, x, block_size, order)


def depth_to_space(x: Expression, block_size: int,
                   order: DepthSpaceOrder | str = DepthSpaceOrder.DEPTH_COLUMN_ROW) -> Expression:
    """dml::DepthToSpace -> DML_OPERATOR_DEPTH_TO_SPACE1: x's [N, C, H, W] depth moved into blocks of block_size x
    block_size, [N, C / block_size^2, H * block_size, W * block_size], in `order` (DML_DEPTH_SPACE_ORDER).

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); depth_to_space(g.input([1, 8, 2, 3], "FLOAT32"), 2).sizes
    (1, 2, 4, 6)
    """
    return _depth_space("dml.depth_to_space", DepthToSpace1OperatorDesc, x, block_size, order)


def _depth_space(function: str, desc_type: type[SpaceToDepth1OperatorDesc | DepthToSpace1OperatorDesc],
                 x: Expression, block_size: int, order: DepthSpaceOrder | str) -> Expression:
    graph = _graph_of(function, x=x)
    block = to_int(function, "block_size", block_size, low=1, high=2**32 - 1)
    chosen = to_enum(function, "order", order, DepthSpaceOrder, "DML_DEPTH_SPACE_ORDER_")
    if len(x.sizes) != 4:
        raise ValidationError(f"{function}: x has {len(x.sizes)} dimensions ({list(x.sizes)}); it must have 4")
    sizes = output_sizes(desc_type.TO_SPACE, tuple(x.sizes), block)
    if sizes is None:
        raise ValidationError(f"{function}: block_size is {block}; x's sizes {list(x.sizes)} must be divisible "
                              + ("along the channels by block_size^2" if desc_type.TO_SPACE else
                                 "along height and width by block_size"))
    desc = desc_type(x.desc, _packed(x.dtype, sizes), block, chosen)
    return graph._add_operator(desc, [x])[0]


def reverse_subsequences(x: Expression, sequence_lengths: Expression, axis: int) -> Expression:
    """dml::ReverseSubsequences -> DML_OPERATOR_REVERSE_SUBSEQUENCES: every sequence of x along `axis` (negative:
    from the end) reversed within its length (sequence_lengths: UINT32, x's sizes with 1 along axis; a length past
    the sequence's end counts as its size), the rest copied.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([3, 4], "FLOAT32")
    >>> reverse_subsequences(x, g.input([3, 1], "UINT32"), -1).sizes
    (3, 4)
    """
    function = "dml.reverse_subsequences"
    graph = _graph_of(function, x=x, sequence_lengths=sequence_lengths)
    rank = len(x.sizes)
    chosen = to_int(function, "axis", axis, low=-rank, high=rank - 1)
    desc = ReverseSubsequencesOperatorDesc(x.desc, sequence_lengths.desc, _packed(x.dtype, x.sizes), chosen % rank)
    return graph._add_operator(desc, [x, sequence_lengths])[0]
