"""dml.upsample_2d: DirectMLX's dml::Upsample2D (ops/upsample.py)."""

from __future__ import annotations

from typing import cast

from .convert import to_enum
from .graph import Expression, _graph_of, _packed
from .ops.structs import Size2D
from .ops.upsample import Upsample2dOperatorDesc
from .types import InterpolationMode

__all__ = ["upsample_2d"]


def upsample_2d(x: Expression, scale_size: Size2D | tuple[int, int],
                interpolation_mode: InterpolationMode | str = InterpolationMode.NEAREST_NEIGHBOR) -> Expression:
    """dml::Upsample2D -> DML_OPERATOR_UPSAMPLE_2D: `x` (4-D, or 5-D from feature level 3_0) scaled up along its last
    two dimensions by `scale_size` (a Size2D or a (width, height) pair), NEAREST_NEIGHBOR or LINEAR. Output: the
    input's sizes with height and width multiplied, the input's data type.

    >>> from opendml import Device, Graph
    >>> g = Graph(Device()); x = g.input([1, 1, 2, 3], "FLOAT32")
    >>> upsample_2d(x, (2, 3), "LINEAR").sizes
    (1, 1, 6, 6)
    """
    graph = _graph_of("dml.upsample_2d", x=x)
    label = "dml.upsample_2d"
    mode = to_enum(label, "interpolation_mode", interpolation_mode, InterpolationMode, "DML_INTERPOLATION_MODE_")
    probe = Upsample2dOperatorDesc(x.desc, x.desc, cast(Size2D, scale_size), mode)   # checks scale_size's form
    scale = probe.scale_size
    sizes = (*x.sizes[:-2], x.sizes[-2] * scale.height, x.sizes[-1] * scale.width) if len(x.sizes) >= 2 else x.sizes
    desc = Upsample2dOperatorDesc(x.desc, _packed(x.dtype, sizes), scale, mode)
    return graph._add_operator(desc, [x])[0]
