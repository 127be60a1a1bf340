"""DML_OPERATOR_UPSAMPLE_2D: the input image scaled up by whole factors along its last two dimensions (height and
width), each output element the input element nearest its centre (NEAREST_NEIGHBOR) or the weighted average of the
two nearest input elements along height and the two nearest along width (LINEAR, bilinear: never across batch,
channel or depth).

The page says the output sizes are { N, C, [D,] InputHeight * ScaleSize.Height, InputWidth * ScaleSize.Width } and
that NEAREST_NEIGHBOR "chooses the input element nearest to the corresponding pixel center"; it gives no example and
no coordinate formula. opendml maps output coordinate o along a dimension of input size n and scale s to the input
coordinate t = (o + 0.5) / s - 0.5 (pixel centres aligned, "half-pixel"), clamped to [0, n - 1] (README, Rulings):
NEAREST_NEIGHBOR reads floor((o + 0.5) / s) = o // s, LINEAR reads floor(t) and floor(t) + 1 (the last index at the
edge) weighted 1 - frac(t) and frac(t). `taps` states that one formula; every kernel takes its indices and weights
from the same integer arithmetic. LINEAR computes in FLOAT32 (FLOAT16 widened exactly, each output rounded once):
((x00 * (1 - wx) + x01 * wx) * (1 - wy) + (x10 * (1 - wx) + x11 * wx) * wy, in that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..convert import describe, to_enum
from ..errors import ValidationError
from ..support import F16, F32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, InterpolationMode, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .structs import Size2D

UINT32_MAX = 2**32 - 1

#: The page's support tables: 4-D from 1_0, 4-D or 5-D from 3_0; FLOAT32 and FLOAT16 only.
SUPPORT: SupportTable = (
    row(L.LEVEL_3_0, (4, 5), InputTensor=(F32, F16), OutputTensor=(F32, F16)),
    row(L.LEVEL_1_0, 4, InputTensor=(F32, F16), OutputTensor=(F32, F16)),
)


def taps(output_size: int, scale: int, input_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Along one dimension: for each output coordinate o, LINEAR's two input indices and the second one's weight
    (float32), from t = (o + 0.5) / scale - 0.5 = (2o + 1 - scale) / (2 scale) clamped to [0, input_size - 1]: the
    index floor(t) exactly in integers, the weight (2o + 1 - scale - 2 scale floor(t)) / (2 scale) rounded once to
    float32 (0 where t was clamped)."""
    o = np.arange(output_size, dtype=np.int64)
    numerator = 2 * o + 1 - scale
    denominator = 2 * scale
    first = np.floor_divide(numerator, denominator)
    remainder = numerator - first * denominator
    clamped = (numerator < 0) | (first >= input_size - 1)
    first = np.clip(first, 0, input_size - 1)
    second = np.minimum(first + 1, input_size - 1)
    weight = np.where(clamped, np.float32(0), np.float32(remainder) / np.float32(denominator)).astype(np.float32)
    return first, second, weight


def nearest(output_size: int, scale: int) -> np.ndarray:
    """NEAREST_NEIGHBOR's input index of each output coordinate: floor((o + 0.5) / scale) = o // scale."""
    return np.arange(output_size, dtype=np.int64) // scale


@dataclass(frozen=True)
class Upsample2dOperatorDesc(OperatorDesc):
    """DML_UPSAMPLE_2D_OPERATOR_DESC: OutputTensor = InputTensor scaled up by ScaleSize along its last two dimensions.
    `scale_size` is a Size2D or a (width, height) pair.

    >>> Upsample2dOperatorDesc(TensorDesc("FLOAT32", [1, 1, 2, 2]), TensorDesc("FLOAT32", [1, 1, 4, 6]), (3, 2),
    ...                        "LINEAR").scale_size
    Size2D(width=3, height=2)
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    scale_size: Size2D
    interpolation_mode: InterpolationMode = InterpolationMode.NEAREST_NEIGHBOR

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.UPSAMPLE_2D
    KERNEL_MODULE: ClassVar[str] = "upsample"

    def __post_init__(self) -> None:
        operator = self.label
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        scale = self.scale_size
        if isinstance(scale, (tuple, list)) and len(scale) == 2:
            scale = Size2D(*scale)
        if not isinstance(scale, Size2D):
            raise ValidationError(f"{operator}: ScaleSize is {describe(self.scale_size)}; it must be a DML_SIZE_2D "
                                  f"(opendml.Size2D(width, height) or a (width, height) pair)")
        object.__setattr__(self, "scale_size", scale)
        object.__setattr__(self, "interpolation_mode", to_enum(operator, "InterpolationMode", self.interpolation_mode,
                                                               InterpolationMode, "DML_INTERPOLATION_MODE_"))

    @property
    def linear(self) -> bool:
        return self.interpolation_mode is InterpolationMode.LINEAR

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        source, result = self.input_tensor, self.output_tensor
        height, width = ([1, *source.sizes])[-2:]   # a 1-D input: the support table refuses it below
        for field, scale, size, name in (("Height", self.scale_size.height, height, "InputHeight"),
                                         ("Width", self.scale_size.width, width, "InputWidth")):
            if not 0 < scale <= UINT32_MAX // max(size, 1):
                raise ValidationError(f"{operator}: ScaleSize.{field} is {scale}; it must be in [1, "
                                      f"{UINT32_MAX // max(size, 1)}] (0 < ScaleSize.{field} <= UINT_MAX / {name}, "
                                      f"{name} = {size})")
        self.check_tensors()
        check_same_rank(operator, "OutputTensor", result, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)
        check_support(SUPPORT, operator, level, {"InputTensor": source, "OutputTensor": result})
        expected = [*source.sizes[:-2], height * self.scale_size.height, width * self.scale_size.width]
        if list(result.sizes) != expected:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must be {expected} "
                                  f"(InputTensor.Sizes with height times ScaleSize.Height and width times "
                                  f"ScaleSize.Width)")
