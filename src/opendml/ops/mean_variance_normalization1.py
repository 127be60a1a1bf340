"""DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: normalizes the input over Axes, then Scale, Bias and an optional
fused activation.

    Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias)    (NormalizeVariance TRUE)
    Output = FusedActivation(Scale * (Input - Mean) + Bias)                              (NormalizeVariance FALSE)

Mean and the population Variance are taken over Axes, separately for every coordinate of the other axes
(DECISIONS 17). Absent Scale acts as 1, absent Bias as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from ..convert import describe, to_bool, to_float, to_uint_list
from ..errors import UnsupportedError, ValidationError
from ..support import F16, F32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .activations import ActivationOperatorDesc, fusable_names
from .base import OperatorDesc, check_axes, check_same_data_type, check_same_rank, require_tensor

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
        init_normalization_fields(self, operator)
        object.__setattr__(self, "axes", to_uint_list(operator, "Axes", self.axes))

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
        check_axes(operator, self.axes, self.input_tensor.dimension_count, "InputTensor")
        check_normalization(self, operator, level, SUPPORT, SCALE_BIAS_RULES)


class NormalizationFields(Protocol):
    """The fields MEAN_VARIANCE_NORMALIZATION and MEAN_VARIANCE_NORMALIZATION1 share, by the same names."""

    @property
    def input_tensor(self) -> TensorDesc: ...
    @property
    def scale_tensor(self) -> TensorDesc | None: ...
    @property
    def bias_tensor(self) -> TensorDesc | None: ...
    @property
    def output_tensor(self) -> TensorDesc: ...
    @property
    def normalize_variance(self) -> bool: ...
    @property
    def epsilon(self) -> float: ...
    @property
    def fused_activation(self) -> OperatorDesc | None: ...

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]: ...

    def output_slots(self) -> list[tuple[str, TensorDesc]]: ...


def init_normalization_fields(desc: NormalizationFields, operator: str) -> None:
    """The shared part of both descriptors' __post_init__: tensor types, NormalizeVariance and Epsilon normalized
    (a frozen dataclass's fields are set through object.__setattr__), FusedActivation's type."""
    require_tensor(operator, "InputTensor", desc.input_tensor)
    require_tensor(operator, "OutputTensor", desc.output_tensor)
    for name, value in (("ScaleTensor", desc.scale_tensor), ("BiasTensor", desc.bias_tensor)):
        if value is not None:
            require_tensor(operator, name, value)
    object.__setattr__(desc, "normalize_variance", to_bool(operator, "NormalizeVariance", desc.normalize_variance))
    object.__setattr__(desc, "epsilon", to_float(operator, "Epsilon", desc.epsilon))
    if desc.fused_activation is not None and not isinstance(desc.fused_activation, OperatorDesc):
        raise ValidationError(f"{operator}: FusedActivation is {describe(desc.fused_activation)}; it must be an "
                              f"operator descriptor (one of {fusable_names()}) or None")


def check_normalization(desc: NormalizationFields, operator: str, level: FeatureLevel, support: SupportTable,
                        rules: tuple[ScaleBiasRule, ...]) -> None:
    """The rules both versions share, after the per-tensor checks (and MVN1's Axes): the page's support table,
    one DataType and DimensionCount for all four tensors, the output's sizes, the page's Scale/Bias `rules`, and
    the fused activation."""
    source = desc.input_tensor
    tensors = {name: tensor for name, tensor in (*desc.input_slots(), *desc.output_slots())}
    check_support(support, operator, level, tensors)
    for name, tensor in tensors.items():
        if tensor is None or name == "InputTensor":
            continue
        check_same_data_type(operator, name, tensor, "InputTensor", source)
        check_same_rank(operator, name, tensor, "InputTensor", source)
    if desc.output_tensor.sizes != source.sizes:
        raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(desc.output_tensor.sizes)}; it must "
                              f"equal InputTensor.Sizes {list(source.sizes)}")
    _check_scale_bias(desc, operator, level, rules)
    activation = desc.fused_activation
    if activation is None:
        return
    if not isinstance(activation, ActivationOperatorDesc):
        raise ValidationError(f"{operator}: FusedActivation is {activation.label}; it must be one of "
                              f"{fusable_names()}")
    activation.check_fusable(operator, level)


def _check_scale_bias(desc: NormalizationFields, operator: str, level: FeatureLevel,
                      rules: tuple[ScaleBiasRule, ...]) -> None:
    """Raises for the first Scale/Bias rule broken at `level`: UnsupportedError when a higher level's rule
    accepts the tensors (naming the lowest such level), ValidationError when none does."""
    ordered = sorted(rules, key=lambda rule: rule.level)
    current = max((rule for rule in ordered if rule.level <= level), key=lambda rule: rule.level)
    problem = _scale_bias_problem(desc, current)
    if problem is None:
        return
    for higher in ordered:
        if higher.level > level and _scale_bias_problem(desc, higher) is None:
            raise UnsupportedError(f"{operator}: {problem[0]} needs feature level {higher.level}; the device is "
                                   f"at {level}")
    raise ValidationError(f"{operator}: {problem[1]}")


def _scale_bias_problem(desc: NormalizationFields, rule: ScaleBiasRule) -> tuple[str, str] | None:
    """(the subject, the whole complaint) of the first Scale/Bias problem under `rule`, or None."""
    scale, bias = desc.scale_tensor, desc.bias_tensor
    if (scale is None) != (bias is None) and not rule.either_may_be_absent:
        given, missing = ("ScaleTensor", "BiasTensor") if bias is None else ("BiasTensor", "ScaleTensor")
        subject = f"{given} without {missing}"
        return subject, f"{subject}: below feature level 5_2 both or neither must be given"
    sizes = desc.input_tensor.sizes
    for name, tensor in (("ScaleTensor", scale), ("BiasTensor", bias)):
        if tensor is None:
            continue
        for dim, (size, input_size) in enumerate(zip(tensor.sizes, sizes, strict=True)):
            if size not in (input_size, 1):
                return (f"{name}.Sizes[{dim}] {size}",
                        f"{name}.Sizes[{dim}] is {size}; it must be {input_size} (InputTensor.Sizes[{dim}]) or 1")
        # The page's channel rule names dimension 1 ({Batch, Channel, Height, Width}); a rank-1 tensor has no
        # channel dimension.
        if rule.channel_must_match and len(sizes) > 1 and tensor.sizes[1] != sizes[1]:
            subject = f"{name}.Sizes[1] 1 (broadcast over the channel dimension)"
            return subject, (f"{name}.Sizes[1] is 1; below feature level 4_0 it must equal InputTensor.Sizes[1] "
                             f"({sizes[1]})")
    return None
