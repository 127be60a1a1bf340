"""DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION: version 0 of MEAN_VARIANCE_NORMALIZATION1 (FL 1_0), with CrossChannel
instead of Axes.

    Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias)    (NormalizeVariance TRUE)
    Output = FusedActivation(Scale * (Input - Mean) + Bias)                              (NormalizeVariance FALSE)

Every tensor is { BatchCount, ChannelCount, Height, Width }: exactly 4 dimensions at every level (its page's one
table). Mean and the population Variance (DECISIONS 17) are taken over {Height, Width} for each batch and channel
(CrossChannel FALSE), or over {ChannelCount, Height, Width} for each batch (TRUE): MVN1 with Axes {2, 3} or
{1, 2, 3} (DIGEST 2.4), which is how the kernels run it. Scale and Bias may be 1 in any dimension at every level
(unlike MVN1 below 4_0); below 5_2 both or neither are given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_bool
from ..support import F16, F32, L, SupportTable, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc
from .mean_variance_normalization1 import (
    MeanVarianceNormalization1OperatorDesc,
    ScaleBiasRule,
    check_normalization,
    init_normalization_fields,
)

_FLOATS = (F32, F16)

#: The page's support table: one row, from the operator's level (1_0) on.
SUPPORT: SupportTable = (
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, ScaleTensor=_FLOATS, BiasTensor=_FLOATS, OutputTensor=_FLOATS),
)

#: Scale/Bias rules, as the page states them: any dimension may be 1; either alone from 5_2.
SCALE_BIAS_RULES: tuple[ScaleBiasRule, ...] = (
    ScaleBiasRule(L.LEVEL_5_2, channel_must_match=False, either_may_be_absent=True),
    ScaleBiasRule(L.LEVEL_1_0, channel_must_match=False, either_may_be_absent=False),
)

#: The axes each CrossChannel value normalizes over, of the 4-D { BatchCount, ChannelCount, Height, Width }.
CROSS_CHANNEL_AXES: dict[bool, tuple[int, ...]] = {False: (2, 3), True: (1, 2, 3)}


@dataclass(frozen=True)
class MeanVarianceNormalizationOperatorDesc(OperatorDesc):
    """DML_MEAN_VARIANCE_NORMALIZATION_OPERATOR_DESC: OutputTensor.Sizes = InputTensor.Sizes, all four tensors
    4-D; Scale and Bias (optional) each size the input's or 1.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 2, 1, 2])     # channels {0, 2} and {4, 6}
    >>> MeanVarianceNormalizationOperatorDesc(x, None, None, x, cross_channel=False, normalize_variance=True,
    ...                                       epsilon=3.0)  # each channel on its own: [-0.5, 0.5], [-0.5, 0.5]
    """

    input_tensor: TensorDesc
    scale_tensor: TensorDesc | None
    bias_tensor: TensorDesc | None
    output_tensor: TensorDesc
    cross_channel: bool
    normalize_variance: bool
    epsilon: float
    fused_activation: OperatorDesc | None = None

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.MEAN_VARIANCE_NORMALIZATION

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        init_normalization_fields(self, operator)
        object.__setattr__(self, "cross_channel", to_bool(operator, "CrossChannel", self.cross_channel))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("ScaleTensor", self.scale_tensor),
                ("BiasTensor", self.bias_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def axes(self) -> tuple[int, ...]:
        """The axes the statistics are taken over: {2, 3}, or {1, 2, 3} with CrossChannel."""
        return CROSS_CHANNEL_AXES[self.cross_channel]

    def validate(self, level: FeatureLevel) -> None:
        self.check_tensors()
        check_normalization(self, self.label, level, SUPPORT, SCALE_BIAS_RULES)

    def as_mean_variance_normalization1(self) -> MeanVarianceNormalization1OperatorDesc:
        """The MEAN_VARIANCE_NORMALIZATION1 descriptor with the axes CrossChannel stands for, which computes this
        one, for the kernels; it keeps this operator's name in what its kernels say."""
        return _MvnAsMvn1(self.input_tensor, self.scale_tensor, self.bias_tensor, self.output_tensor, self.axes,
                          self.normalize_variance, self.epsilon, self.fused_activation)


class _MvnAsMvn1(MeanVarianceNormalization1OperatorDesc):
    """MEAN_VARIANCE_NORMALIZATION run as MEAN_VARIANCE_NORMALIZATION1: MVN1's fields, MVN's label. Not
    registered: it defines no OPERATOR_TYPE of its own, so readers of DML names never see it."""

    @property
    def label(self) -> str:
        return MeanVarianceNormalizationOperatorDesc.OPERATOR_TYPE.dml_name
