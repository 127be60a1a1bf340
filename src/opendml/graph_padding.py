"""The graph API of PADDING and TILE (issue 28): `dml.padding` and `dml.tile` (DirectMLX's dml::Padding and
dml::Tile), on graph.py's machinery."""

from __future__ import annotations

from collections.abc import Sequence

from .convert import to_enum, to_uint_list
from .errors import ValidationError
from .graph import Expression, _graph_of, _packed
from .ops.padding import Padding1OperatorDesc, PaddingMode, PaddingOperatorDesc, TileOperatorDesc

__all__ = ["padding", "tile"]


def padding(x: Expression, padding_mode: PaddingMode | str, padding_value: float, start_padding: Sequence[int],
            end_padding: Sequence[int]) -> Expression:
    """dml::Padding -> DML_OPERATOR_PADDING (DML_OPERATOR_PADDING1 where x's type is FLOAT64 or a 64-bit integer, so
    that the value stays exact): x inflated by start_padding/end_padding per dimension, the padding filled by
    `padding_mode` (CONSTANT: padding_value). Output sizes: x's + start_padding + end_padding.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); padding(g.input([2, 3], "FLOAT32"), "REFLECTION", 0.0, [1, 2], [0, 1]).sizes
    (3, 6)
    """
    function = "dml.padding"
    graph = _graph_of(function, x=x)
    mode = to_enum(function, "padding_mode", padding_mode, PaddingMode, "DML_PADDING_MODE_")
    starts = to_uint_list(function, "start_padding", start_padding)
    ends = to_uint_list(function, "end_padding", end_padding)
    rank = len(x.sizes)
    for name, values in (("start_padding", starts), ("end_padding", ends)):
        if len(values) != rank:
            raise ValidationError(f"{function}: {name} has {len(values)} values; it must have one per dimension of "
                                  f"x ({rank})")
    output = _packed(x.dtype, [size + start + end for size, start, end in zip(x.sizes, starts, ends, strict=True)])
    if x.dtype.element_size == 8:
        value = padding_value if x.dtype.is_float else int(padding_value)
        desc: PaddingOperatorDesc | Padding1OperatorDesc = Padding1OperatorDesc(
            x.desc, output, mode, x.dtype, value, rank, starts, ends)
    else:
        desc = PaddingOperatorDesc(x.desc, output, mode, padding_value, rank, starts, ends)
    return graph._add_operator(desc, [x])[0]


def tile(x: Expression, repeats: Sequence[int]) -> Expression:
    """dml::Tile -> DML_OPERATOR_TILE: x repeated `repeats[i]` times along each dimension i. Output sizes: x's
    times repeats.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); tile(g.input([2, 3], "FLOAT32"), [2, 3]).sizes
    (4, 9)
    """
    function = "dml.tile"
    graph = _graph_of(function, x=x)
    counts = to_uint_list(function, "repeats", repeats)
    if len(counts) != len(x.sizes):
        raise ValidationError(f"{function}: repeats has {len(counts)} values; it must have one per dimension of x "
                              f"({len(x.sizes)})")
    if 0 in counts:
        raise ValidationError(f"{function}: repeats is {list(counts)}; each must be at least 1")
    output = _packed(x.dtype, [size * count for size, count in zip(x.sizes, counts, strict=True)])
    desc = TileOperatorDesc(x.desc, output, len(counts), counts)
    return graph._add_operator(desc, [x])[0]
