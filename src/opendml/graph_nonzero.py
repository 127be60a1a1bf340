"""dml.nonzero_coordinates: DirectMLX's dml::NonZeroCoordinates (ops/nonzero.py)."""

from __future__ import annotations

from typing import NamedTuple

from .graph import Expression, _graph_of, _packed
from .ops.nonzero import NonzeroCoordinatesOperatorDesc, coordinates_sizes
from .types import DataType

__all__ = ["NonzeroCoordinatesOutputs", "nonzero_coordinates"]


class NonzeroCoordinatesOutputs(NamedTuple):
    """DirectMLX's NonZeroCoordinatesOutputs: the count and the coordinates."""

    count: Expression   # type: ignore[assignment]  # DirectMLX's name (shadows tuple.count)
    coordinates: Expression


def nonzero_coordinates(x: Expression) -> NonzeroCoordinatesOutputs:
    """dml::NonZeroCoordinates -> DML_OPERATOR_NONZERO_COORDINATES: where `x`'s nonzero elements are (-0.0 is zero,
    NaN is not). Outputs, both UINT32: `count`, all sizes 1 (x's DimensionCount), the number of nonzero elements;
    `coordinates`, {1, .., 1, M, N} with M x's element count and N its DimensionCount, whose first `count` rows hold
    the coordinates in row-major order of `x` (the rows after them are not written: whatever the memory held).

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([1, 1, 2, 4], "FLOAT32")
    >>> [output.sizes for output in nonzero_coordinates(x)]
    [(1, 1, 1, 1), (1, 1, 8, 4)]
    """
    graph = _graph_of("dml.nonzero_coordinates", x=x)
    rank = len(x.sizes)
    sizes = coordinates_sizes(x.sizes) if rank >= 2 else list(x.sizes)
    desc = NonzeroCoordinatesOperatorDesc(x.desc, _packed(DataType.UINT32, [1] * rank),
                                          _packed(DataType.UINT32, sizes))
    count, coordinates = graph._add_operator(desc, [x])
    return NonzeroCoordinatesOutputs(count, coordinates)
