"""DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: normalizes the input over Axes, then Scale, Bias and an optional
fused activation.

    Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias)    (NormalizeVariance TRUE)
    Output = FusedActivation(Scale * (Input - Mean) + Bias)                              (NormalizeVariance FALSE)

Mean and the population Variance are taken over Axes, separately for every coordinate of the other axes
(DECISIONS 17). Absent Scale acts as 1, absent Bias as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import UnsupportedError, ValidationError
from ..support import F16, F32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .activations import ActivationOperatorDesc, float_field, fusable_names
from .base import OperatorDesc, check_axes, check_same_data_type, check_same_rank, require_tensor, uint_list

_FLOATS = (F32, F16)

#: The page's support tables.
SUPPORT: SupportTable = (
    row(L.LEVEL_3_1, (1, 8), InputTensor=_FLOATS, ScaleTensor=_FLOATS, BiasTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_2_1, 4, InputTensor=_FLOATS, ScaleTensor=_FLOATS, BiasTensor=_FLOATS, OutputTensor=_FLOATS),
)


@dataclass(frozen=True)
class ScaleBiasRule:
    """What ScaleTensor and BiasTensor may be from `level` on (the page's field descriptions, DECISIONS 18)."""

    level: FeatureLevel
    channel_must_match: bool     # Sizes[1] must equal the input's (other sizes: the input's or 1)
    either_may_be_absent: bool   # one of the two may be given without the other


#: Scale/Bias rules, as the page states them per feature level.
SCALE_BIAS_RULES: tuple[ScaleBiasRule, ...] = (
    ScaleBiasRule(L.LEVEL_5_2, channel_must_match=False, either_may_be_absent=True),
    ScaleBiasRule(L.LEVEL_4_0, channel_must_match=False, either_may_be_absent=False),
    ScaleBiasRule(L.LEVEL_2_1, channel_must_match=True, either_may_be_absent=False),
)

#: DML field name -> Python field name (AxisCount is len(axes)).
FIELDS: dict[str, str] = {
    "InputTensor": "input_tensor", "ScaleTensor": "scale_tensor", "BiasTensor": "bias_tensor",
    "OutputTensor": "output_tensor", "Axes": "axes", "NormalizeVariance": "normalize_variance",
    "Epsilon": "epsilon", "FusedActivation": "fused_activation",
}


@dataclass(frozen=True)
class MeanVarianceNormalization1OperatorDesc(OperatorDesc):
    """DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC: OutputTensor.Sizes = InputTensor.Sizes; Scale and Bias
    (optional) have the input's rank, each size the input's or 1.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 2, 2])          # [[1, 2], [3, 4]] -> about [[-1.34, -0.45], ...]
    >>> MeanVarianceNormalization1OperatorDesc(x, None, None, x, axes=[2, 3], normalize_variance=True,
    ...                                        epsilon=1e-5, fused_activation=ActivationReluOperatorDesc())
    """

    input_tensor: TensorDesc
    scale_tensor: TensorDesc | None
    bias_tensor: TensorDesc | None
    output_tensor: TensorDesc
    axes: tuple[int, ...]
    normalize_variance: bool
    epsilon: float
    fused_activation: OperatorDesc | None = None

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.MEAN_VARIANCE_NORMALIZATION1

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        for name, value in (("ScaleTensor", self.scale_tensor), ("BiasTensor", self.bias_tensor)):
            if value is not None:
                require_tensor(operator, name, value)
        object.__setattr__(self, "axes", uint_list(operator, "Axes", self.axes))
        flag = self.normalize_variance
        if not isinstance(flag, bool) and not (isinstance(flag, int) and flag in (0, 1)):
            raise ValidationError(f"{operator}: NormalizeVariance is {flag!r}; it must be a BOOL (True or False)")
        object.__setattr__(self, "normalize_variance", bool(flag))
        object.__setattr__(self, "epsilon", float_field(operator, "Epsilon", self.epsilon))
        if self.fused_activation is not None and not isinstance(self.fused_activation, OperatorDesc):
            raise ValidationError(f"{operator}: FusedActivation is {type(self.fused_activation).__name__}; it must "
                                  f"be an operator descriptor (one of {fusable_names()}) or None")

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("ScaleTensor", self.scale_tensor),
                ("BiasTensor", self.bias_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def normalized_element_count(self) -> int:
        """N: the number of input elements each mean and variance is taken over."""
        count = 1
        for axis in self.axes:
            count *= self.input_tensor.sizes[axis]
        return count

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source = self.input_tensor
        check_axes(operator, self.axes, source.dimension_count, "InputTensor")
        tensors = {name: desc for name, desc in (*self.input_slots(), *self.output_slots())}
        check_support(SUPPORT, operator, level, tensors)
        for name, desc in tensors.items():
            if desc is None or name == "InputTensor":
                continue
            check_same_data_type(operator, name, desc, "InputTensor", source)
            check_same_rank(operator, name, desc, "InputTensor", source)
        if self.output_tensor.sizes != source.sizes:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(self.output_tensor.sizes)}; it must "
                                  f"equal InputTensor.Sizes {list(source.sizes)}")
        self._check_scale_bias(operator, level)
        self._check_fused_activation(operator, level)

    def _check_scale_bias(self, operator: str, level: FeatureLevel) -> None:
        """Raises for the first Scale/Bias rule broken at `level`: UnsupportedError when a higher level's rule
        accepts the tensors (naming the lowest such level), ValidationError when none does."""
        rules = sorted(SCALE_BIAS_RULES, key=lambda rule: rule.level)
        current = max((rule for rule in rules if rule.level <= level), key=lambda rule: rule.level)
        problem = self._scale_bias_problem(current)
        if problem is None:
            return
        for higher in rules:
            if higher.level > level and self._scale_bias_problem(higher) is None:
                raise UnsupportedError(f"{operator}: {problem[0]} needs feature level {higher.level}; the device is "
                                       f"at {level}")
        raise ValidationError(f"{operator}: {problem[1]}")

    def _scale_bias_problem(self, rule: ScaleBiasRule) -> tuple[str, str] | None:
        """(the subject, the whole complaint) of the first Scale/Bias problem under `rule`, or None."""
        scale, bias = self.scale_tensor, self.bias_tensor
        if (scale is None) != (bias is None) and not rule.either_may_be_absent:
            given, missing = ("ScaleTensor", "BiasTensor") if bias is None else ("BiasTensor", "ScaleTensor")
            subject = f"{given} without {missing}"
            return subject, f"{subject}: below feature level 5_2 both or neither must be given"
        sizes = self.input_tensor.sizes
        for name, desc in (("ScaleTensor", scale), ("BiasTensor", bias)):
            if desc is None:
                continue
            for dim, (size, input_size) in enumerate(zip(desc.sizes, sizes, strict=True)):
                if size not in (input_size, 1):
                    return (f"{name}.Sizes[{dim}] {size}",
                            f"{name}.Sizes[{dim}] is {size}; it must be {input_size} (InputTensor.Sizes[{dim}]) or 1")
            # The page's channel rule names dimension 1 ({Batch, Channel, Height, Width}); a rank-1 tensor has no
            # channel dimension.
            if rule.channel_must_match and len(sizes) > 1 and desc.sizes[1] != sizes[1]:
                subject = f"{name}.Sizes[1] 1 (broadcast over the channel dimension)"
                return subject, (f"{name}.Sizes[1] is 1; below feature level 4_0 it must equal InputTensor.Sizes[1] "
                                 f"({sizes[1]})")
        return None

    def _check_fused_activation(self, operator: str, level: FeatureLevel) -> None:
        activation = self.fused_activation
        if activation is None:
            return
        if not isinstance(activation, ActivationOperatorDesc):
            raise ValidationError(f"{operator}: FusedActivation is {activation.label}; it must be one of "
                                  f"{fusable_names()}")
        activation.check_fusable(operator, level)
