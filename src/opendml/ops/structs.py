"""DirectML's small structs and unions that operator descriptors hold as fields (DirectML.h).

- `ScaleBias` (DML_SCALE_BIAS): Scale and Bias, applied to an input before an element-wise operator's function,
  f(x * Scale + Bias). Both FLOAT: finite, within FLOAT32's range, stored rounded to FLOAT32 as DML holds them.
- `ScalarValue` (DML_SCALAR_UNION): one scalar whose type a sibling DataType field gives (CLIP1's Min and Max, typed
  by MinMaxDataType): a Python int for the integer types (exact, INT64 and UINT64 included), a float for the float
  types.
- `Size2D` (DML_SIZE_2D): Width and Height, both UINT (UPSAMPLE_2D's ScaleSize).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from ..convert import to_float, to_uint

__all__ = ["ScalarValue", "ScaleBias", "Size2D"]

#: A DML_SCALAR_UNION's value: an int for the integer data types, a float for the float ones (model/fields.py reads a
#: field of this type as a scalar union typed by the DataType field before it).
ScalarValue: TypeAlias = int | float


@dataclass(frozen=True)
class ScaleBias:
    """DML_SCALE_BIAS: f(x * scale + bias). Each a finite FLOAT, stored rounded to FLOAT32."""

    scale: float = 1.0
    bias: float = 0.0

    def __post_init__(self) -> None:
        for name, dml_name in (("scale", "Scale"), ("bias", "Bias")):
            value = to_float("DML_SCALE_BIAS", dml_name, getattr(self, name))
            object.__setattr__(self, name, float(np.float32(value)))


@dataclass(frozen=True)
class Size2D:
    """DML_SIZE_2D: a Width and a Height, both UINT."""

    width: int
    height: int

    def __post_init__(self) -> None:
        for name, dml_name in (("width", "Width"), ("height", "Height")):
            object.__setattr__(self, name, to_uint("DML_SIZE_2D", dml_name, getattr(self, name)))
