"""dml.top_k: DirectMLX's dml::TopK (ops/top_k.py)."""

from __future__ import annotations

from typing import NamedTuple

from .convert import to_enum
from .graph import Expression, _dml_axis, _graph_of, _packed
from .ops.top_k import TopK1OperatorDesc, TopKOperatorDesc, top_k_sizes
from .types import AxisDirection, DataType

__all__ = ["TopKOutputs", "top_k"]


class TopKOutputs(NamedTuple):
    """DirectMLX's TopKOutputs (its `value` and `index`): the selected values and their indices along the axis."""

    values: Expression
    indices: Expression


def top_k(x: Expression, axis: int, k: int, axis_direction: AxisDirection | str | None = None,
          index_data_type: DataType | str = DataType.UINT32) -> TopKOutputs:
    """dml::TopK -> DML_OPERATOR_TOP_K1 (DML_OPERATOR_TOP_K when no axis_direction is given: the K largest): the `k`
    largest elements of each sequence of `x` along `axis` (a negative axis counts from the end), largest first, or
    with axis_direction="INCREASING" the `k` smallest, smallest first; equal elements by ascending index. Outputs:
    `values` (x's data type) and `indices` (UINT32, or `index_data_type` UINT64 from feature level 5_0), both x's sizes
    with `k` along `axis`.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([3, 4], "FLOAT32")
    >>> [output.sizes for output in top_k(x, -1, 2, "INCREASING")]
    [(3, 2), (3, 2)]
    """
    label = "dml.top_k"
    graph = _graph_of(label, x=x)
    rank = len(x.sizes)
    index_type = to_enum(label, "index_data_type", index_data_type, DataType, "DML_TENSOR_DATA_TYPE_")
    probe = TopKOperatorDesc(x.desc, x.desc, x.desc, _dml_axis(label, "axis", axis, rank, "x"), k)  # checks the form
    sizes = top_k_sizes(x.sizes, probe.axis, probe.k) if probe.axis < rank else list(x.sizes)
    outputs = (_packed(x.dtype, sizes), _packed(index_type, sizes))
    desc: TopKOperatorDesc
    if axis_direction is None:
        desc = TopKOperatorDesc(x.desc, *outputs, probe.axis, probe.k)
    else:
        direction = to_enum(label, "axis_direction", axis_direction, AxisDirection, "DML_AXIS_DIRECTION_")
        desc = TopK1OperatorDesc(x.desc, *outputs, probe.axis, probe.k, direction)
    values, indices = graph._add_operator(desc, [x])
    return TopKOutputs(values, indices)
