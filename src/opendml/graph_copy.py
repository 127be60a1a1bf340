"""The graph API of the copy operators (issue 28): `dml.cast` (DirectMLX's dml::Cast), on graph.py's machinery.

A module of its own because graph.py uses typing.cast under that name.
"""

from __future__ import annotations

from .graph import Expression, _graph_of, _packed
from .ops.copy import CastOperatorDesc
from .types import DataType, to_data_type

__all__ = ["cast"]


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
