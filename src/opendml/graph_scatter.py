"""dml.scatter_elements and dml.scatter_nd: DirectMLX's dml::ScatterElements and dml::ScatterND (ops/scatter.py)."""

from __future__ import annotations

from .graph import Expression, _graph_of, _packed
from .ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc

__all__ = ["scatter_elements", "scatter_nd"]


def scatter_elements(x: Expression, indices: Expression, updates: Expression, axis: int) -> Expression:
    """dml::ScatterElements -> DML_OPERATOR_SCATTER_ELEMENTS: x, with `output[i with i[axis] = indices[i]] =
    updates[i]` (an out-of-range index's update skipped; repeated indices: the last update in row-major order).
    Output data type and sizes: x's.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([3, 3], "FLOAT32")
    >>> scatter_elements(x, g.input([2, 3], "UINT32"), g.input([2, 3], "FLOAT32"), 0).sizes
    (3, 3)
    """
    graph = _graph_of("dml.scatter_elements", x=x, indices=indices, updates=updates)
    desc = ScatterElementsOperatorDesc(x.desc, indices.desc, updates.desc, _packed(x.dtype, x.sizes), axis)
    return graph._add_operator(desc, [x, indices, updates])[0]


def scatter_nd(x: Expression, indices: Expression, updates: Expression, input_dimension_count: int,
               indices_dimension_count: int) -> Expression:
    """dml::ScatterND -> DML_OPERATOR_SCATTER_ND: x, with `output[indices[j..., :], ...] = updates[j..., ...]` (the
    indices' last dimension holds each tuple's coordinates; an out-of-range tuple's update skipped; repeated tuples:
    the last update in row-major order). Output data type and sizes: x's.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([4, 3], "FLOAT32")
    >>> scatter_nd(x, g.input([2, 1], "INT64"), g.input([2, 3], "FLOAT32"), 2, 2).sizes
    (4, 3)
    """
    graph = _graph_of("dml.scatter_nd", x=x, indices=indices, updates=updates)
    desc = ScatterNdOperatorDesc(x.desc, indices.desc, updates.desc, _packed(x.dtype, x.sizes),
                                 input_dimension_count, indices_dimension_count)
    return graph._add_operator(desc, [x, indices, updates])[0]
