"""The fusable activations: DML_ACTIVATION_*_OPERATOR_DESC, one descriptor class each.

An activation is given to a fusing operator (MEAN_VARIANCE_NORMALIZATION1's FusedActivation) with its InputTensor
and OutputTensor absent; that operator's own tensors carry the data. As in DML, the same structs also describe the
standalone activation operators: then both tensors are set (keyword-only here, since they are never positional in
a fused activation)::

    >>> ActivationLeakyReluOperatorDesc(alpha=0.1)                               # fused: no tensors
    >>> ActivationLeakyReluOperatorDesc(0.1, input_tensor=x, output_tensor=y)    # standalone

What is data here: ACTIVATIONS (per operator: the feature level that introduced it, its parameters in struct order
with DML's names, the function it computes, whether its page allows in-place execution), SUPPORT (each page's
"Tensor support" tables, per feature level) and PARAMETER_RULES (the parameter values a level refuses). FIELDS maps
DML's field names to the Python ones, for readers of DML-spelled models.

A standalone activation follows its page: InputTensor and OutputTensor have the same DataType, DimensionCount and
Sizes; the data types and dimension counts of the row in force at the device's level (RELU takes INT32, INT16 and
INT8 from 5_1, SHRINK the 8- to 32-bit integers from 5_1; the others FLOAT32 and FLOAT16 only); any input strides,
zero included (a broadcast input). Every page but GELU's says "This operator supports in-place execution, meaning
that the output tensor is permitted to alias InputTensor during binding": `in_place_pairs` says so to the Device.
Integer tensors compute exactly in integers (`IntegerShrink` for SHRINK, whose parameters are FLOATs).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import ClassVar

import numpy as np

from ..convert import to_float
from ..errors import UnsupportedError, ValidationError
from ..formula import Node, parse, substitute
from ..support import F16, F32, I8, I16, I32, U8, U16, U32, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

L = FeatureLevel
T = OperatorType

#: DML field name -> Python field name, for every field an activation struct may have.
FIELDS: dict[str, str] = {
    "InputTensor": "input_tensor", "OutputTensor": "output_tensor", "Alpha": "alpha", "Beta": "beta",
    "Gamma": "gamma", "Steepness": "steepness", "Bias": "bias", "Threshold": "threshold",
}
_DML_NAMES = {python: dml for dml, python in FIELDS.items()}


@dataclass(frozen=True)
class ActivationInfo:
    """One row of the activation table (DIGEST 2.4)."""

    operator_type: OperatorType
    level: FeatureLevel                 # the feature level that introduced it
    parameters: tuple[str, ...]         # DML field names, in struct order
    formula: str
    in_place: bool = True               # the page: "the output tensor is permitted to alias InputTensor"
    #: (DML field, formula variable) of the standalone operator's input, as the element-wise engine reads it.
    inputs: tuple[tuple[str, str], ...] = (("InputTensor", "x"),)


#: Every activation MEAN_VARIANCE_NORMALIZATION1 may fuse (DIGEST 2.4, DECISIONS 19).
ACTIVATIONS: tuple[ActivationInfo, ...] = (
    ActivationInfo(T.ACTIVATION_LINEAR, L.LEVEL_1_0, ("Alpha", "Beta"), "Alpha * x + Beta"),
    ActivationInfo(T.ACTIVATION_SIGMOID, L.LEVEL_1_0, (), "1 / (1 + exp(-x))"),
    ActivationInfo(T.ACTIVATION_HARD_SIGMOID, L.LEVEL_1_0, ("Alpha", "Beta"), "max(0, min(Alpha * x + Beta, 1))"),
    ActivationInfo(T.ACTIVATION_TANH, L.LEVEL_1_0, (), "tanh(x)"),
    ActivationInfo(T.ACTIVATION_SCALED_TANH, L.LEVEL_1_0, ("Alpha", "Beta"), "Alpha * tanh(Beta * x)"),
    ActivationInfo(T.ACTIVATION_RELU, L.LEVEL_1_0, (), "max(0, x)"),
    ActivationInfo(T.ACTIVATION_LEAKY_RELU, L.LEVEL_1_0, ("Alpha",), "x if x >= 0 else Alpha * x"),
    ActivationInfo(T.ACTIVATION_THRESHOLDED_RELU, L.LEVEL_1_0, ("Alpha",), "x if x > Alpha else 0"),
    ActivationInfo(T.ACTIVATION_ELU, L.LEVEL_1_0, ("Alpha",), "x if x >= 0 else Alpha * (exp(x) - 1)"),
    ActivationInfo(T.ACTIVATION_CELU, L.LEVEL_3_0, ("Alpha",), "max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))"),
    ActivationInfo(T.ACTIVATION_SCALED_ELU, L.LEVEL_1_0, ("Alpha", "Gamma"),
                   "Gamma * x if x > 0 else Gamma * (Alpha * exp(x) - Alpha)"),
    ActivationInfo(T.ACTIVATION_SOFTPLUS, L.LEVEL_1_0, ("Steepness",), "ln(1 + exp(Steepness * x)) / Steepness"),
    ActivationInfo(T.ACTIVATION_PARAMETRIC_SOFTPLUS, L.LEVEL_1_0, ("Alpha", "Beta"), "Alpha * ln(1 + exp(Beta * x))"),
    ActivationInfo(T.ACTIVATION_SOFTSIGN, L.LEVEL_1_0, (), "x / (1 + |x|)"),
    ActivationInfo(T.ACTIVATION_IDENTITY, L.LEVEL_1_0, (), "x"),
    ActivationInfo(T.ACTIVATION_SHRINK, L.LEVEL_2_0, ("Bias", "Threshold"),
                   "x - Bias if x > Threshold; x + Bias if x < -Threshold; else 0"),
    # GELU's page, alone among the 17, does not allow in-place execution.
    ActivationInfo(T.ACTIVATION_GELU, L.LEVEL_5_1, (), "0.5 * x * (1 + erf(x / sqrt(2)))", in_place=False),
)
ACTIVATION_INFO: dict[OperatorType, ActivationInfo] = {info.operator_type: info for info in ACTIVATIONS}

_FLOATS = (F32, F16)
#: The rows most of the pages share (FLOAT32 and FLOAT16): exactly 4 dimensions at 1_0, 4 to 5 from 2_0, 1 to 8
#: from 3_0.
_SHARED_ROWS: SupportTable = (
    row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_2_0, (4, 5), InputTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=_FLOATS),
)
_RELU_TYPES = (F32, F16, I32, I16, I8)
_SHRINK_TYPES = (F32, F16, I32, I16, I8, U32, U16, U8)

#: Each page's "Tensor support" tables, by activation (the standalone operators; a fused activation has no tensors).
SUPPORT: dict[OperatorType, SupportTable] = {
    **{info.operator_type: _SHARED_ROWS for info in ACTIVATIONS},
    T.ACTIVATION_RELU: (row(L.LEVEL_5_1, (1, 8), InputTensor=_RELU_TYPES, OutputTensor=_RELU_TYPES), *_SHARED_ROWS),
    T.ACTIVATION_CELU: (row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=_FLOATS),),
    T.ACTIVATION_SHRINK: (row(L.LEVEL_5_1, (1, 8), InputTensor=_SHRINK_TYPES, OutputTensor=_SHRINK_TYPES),
                          *_SHARED_ROWS[:2]),
    T.ACTIVATION_GELU: (row(L.LEVEL_5_1, (1, 8), InputTensor=_FLOATS, OutputTensor=_FLOATS),),
}


@dataclass(frozen=True)
class ParameterRule:
    """A parameter value an activation refuses: below `minimum` (when set) or zero (when `nonzero`).

    `lifted_at`: the feature level from which the rule no longer applies (None: it applies at every level).
    """

    operator_type: OperatorType
    parameter: str                      # DML field name
    minimum: float | None = None
    nonzero: bool = False
    lifted_at: FeatureLevel | None = None

    def allows(self, value: float) -> bool:
        if self.minimum is not None and value < self.minimum:
            return False
        return not (self.nonzero and value == 0.0)

    def requirement(self) -> str:
        return f"at least {self.minimum:g}" if self.minimum is not None else "nonzero"


#: Parameter rules by feature level. SOFTPLUS: "Steepness cannot be less than 1" until FL 6_4 [W:flh]. Two
#: divisions by a parameter are refused at every level, since the formula has no value there: SOFTPLUS divides
#: by Steepness, CELU by Alpha (opendml's ruling; DML's pages say nothing).
PARAMETER_RULES: tuple[ParameterRule, ...] = (
    ParameterRule(T.ACTIVATION_SOFTPLUS, "Steepness", minimum=1.0, lifted_at=L.LEVEL_6_4),
    ParameterRule(T.ACTIVATION_SOFTPLUS, "Steepness", nonzero=True),
    ParameterRule(T.ACTIVATION_CELU, "Alpha", nonzero=True),
)


@dataclass(frozen=True)
class ActivationOperatorDesc(OperatorDesc):
    """Base of the DML_ACTIVATION_*_OPERATOR_DESC classes: parameters first (positional, DML's order), then the
    keyword-only InputTensor and OutputTensor, which a fused activation leaves as None."""

    input_tensor: TensorDesc | None = field(default=None, kw_only=True)
    output_tensor: TensorDesc | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        for name in ("input_tensor", "output_tensor"):
            value = getattr(self, name)
            if value is not None:
                require_tensor(operator, _DML_NAMES[name], value)
        for name in self.parameter_names():
            object.__setattr__(self, name, to_float(operator, _DML_NAMES[name], getattr(self, name)))

    # -- the table's view of this class ---------------------------------------------------------------------------

    @classmethod
    def info(cls) -> ActivationInfo:
        return ACTIVATION_INFO[cls.OPERATOR_TYPE]

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        """This activation's own page's table (SUPPORT holds all 17)."""
        return {"": SUPPORT[cls.OPERATOR_TYPE]}

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The Python names of the FLOAT parameters, in struct order."""
        return tuple(FIELDS[name] for name in ACTIVATION_INFO[cls.OPERATOR_TYPE].parameters)

    def parameters(self) -> dict[str, float]:
        """{DML name: value} of the parameters, in struct order."""
        return {_DML_NAMES[name]: float(getattr(self, name)) for name in self.parameter_names()}

    @property
    def is_fused_form(self) -> bool:
        """Whether both tensors are absent, as a FusedActivation must have them."""
        return self.input_tensor is None and self.output_tensor is None

    # -- rules --------------------------------------------------------------------------------------------------

    def check_fusable(self, operator: str, level: FeatureLevel, field_name: str = "FusedActivation") -> None:
        """The rules of a fused activation inside `operator`: no tensors, its level, its parameter rules."""
        here = f"{field_name} ({self.OPERATOR_TYPE.dml_name})"
        for name in ("input_tensor", "output_tensor"):
            if getattr(self, name) is not None:
                raise ValidationError(f"{operator}: {field_name}.{_DML_NAMES[name]} is set; a fused activation's "
                                      f"InputTensor and OutputTensor must be absent (None), since the fusing "
                                      f"operator's tensors carry the data")
        self.check_level_and_parameters(operator, level, here, f"{field_name}.")

    def check_level_and_parameters(self, operator: str, level: FeatureLevel, subject: str, prefix: str) -> None:
        introduced = self.info().level
        if level < introduced:
            raise UnsupportedError(f"{operator}: {subject} needs feature level {introduced}; the device is at {level}")
        values = self.parameters()
        for rule in PARAMETER_RULES:
            if rule.operator_type is not self.OPERATOR_TYPE:
                continue
            value = values[rule.parameter]
            if (rule.lifted_at is not None and level >= rule.lifted_at) or rule.allows(value):
                continue
            if rule.lifted_at is not None:
                raise UnsupportedError(f"{operator}: {prefix}{rule.parameter} {value:g} needs feature level "
                                       f"{rule.lifted_at} (below it {rule.parameter} must be {rule.requirement()}); "
                                       f"the device is at {level}")
            raise ValidationError(f"{operator}: {prefix}{rule.parameter} is {value:g}; it must be "
                                  f"{rule.requirement()}")

    # -- standalone use (OperatorDesc) --------------------------------------------------------------------------

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [] if self.output_tensor is None else [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        """As a standalone operator: both tensors, the shared tensor rules, the level and the parameter rules, the
        page's tensor constraints (the same DataType, DimensionCount and Sizes) and its support table."""
        operator = self.label
        for name in ("input_tensor", "output_tensor"):
            if getattr(self, name) is None:
                raise ValidationError(f"{operator}: {_DML_NAMES[name]} is absent; a standalone activation needs "
                                      f"both InputTensor and OutputTensor (only a FusedActivation leaves them out)")
        source, target = self.input_tensor, self.output_tensor
        assert source is not None and target is not None
        self.check_tensors()
        self.check_level_and_parameters(operator, level, operator, "")
        check_same_data_type(operator, "OutputTensor", target, "InputTensor", source)
        check_same_rank(operator, "OutputTensor", target, "InputTensor", source)
        if target.sizes != source.sizes:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(target.sizes)}; it must equal "
                                  f"InputTensor.Sizes {list(source.sizes)}")
        check_support(SUPPORT[self.OPERATOR_TYPE], operator, level, {"InputTensor": source, "OutputTensor": target})

    def in_place_pairs(self) -> tuple[tuple[str, str], ...]:
        """OutputTensor may be bound to exactly InputTensor's range where the page allows in-place execution."""
        return (("InputTensor", "OutputTensor"),) if self.info().in_place else ()

    # -- the standalone operator on the element-wise engine (the interface ops/elementwise.py's classes share) ----

    @property
    def INFO(self) -> ActivationInfo:
        return self.info()

    def present_tensors(self) -> dict[str, TensorDesc]:
        assert self.input_tensor is not None and self.output_tensor is not None
        return {"InputTensor": self.input_tensor, "OutputTensor": self.output_tensor}

    def view_type(self, dml_name: str) -> DataType:
        return self.present_tensors()[dml_name].data_type

    def scale_bias_value(self) -> None:
        return None

    def scaled_inputs(self) -> tuple[str, ...]:
        return ()

    def variables(self) -> dict[str, str]:
        return {"x": "InputTensor"}

    def _integer_shrink(self) -> bool:
        assert self.input_tensor is not None
        return self.OPERATOR_TYPE is T.ACTIVATION_SHRINK and not self.input_tensor.data_type.is_float

    def _integer(self) -> bool:
        assert self.input_tensor is not None
        return not self.input_tensor.data_type.is_float

    def formula_text(self) -> str:
        if self._integer():
            return _INTEGER_SHRINK if self._integer_shrink() else _INTEGER_RELU
        return ACTIVATION_FORMULAS[self.OPERATOR_TYPE]

    def formula_parameters(self) -> dict[str, float | int]:
        """{formula name: value}: the FLOAT parameters rounded to FLOAT32; integer SHRINK's IntegerShrink plan."""
        if self._integer_shrink():
            assert self.input_tensor is not None
            values = self.parameters()
            words = IntegerShrink.of(values["Bias"], values["Threshold"], self.input_tensor.data_type).words()
            return {f"Q{index}": word for index, word in enumerate(words)}
        return dict(activation_values(self))

    def formula_tree(self) -> Node:
        """The activation's formula typed for its tensors (integer SHRINK: IntegerShrink's plan in INT64)."""
        assert self.output_tensor is not None
        data_type = self.output_tensor.data_type
        if self._integer():
            types = {"x": data_type, **{f"Q{index}": DataType.INT64 for index in range(20)}}
            return parse(self.formula_text(), types, data_type)
        return activation_tree(self, parse("x", {"x": data_type}, data_type), data_type)


# -- the 17 classes -------------------------------------------------------------------------------------------------
# Defaults are DIGEST 2.4's "typical defaults" (SCALED_ELU: DirectMLX's exact float values); LINEAR and
# PARAMETRIC_SOFTPLUS have none.


@dataclass(frozen=True)
class ActivationLinearOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_LINEAR_OPERATOR_DESC (FL 1_0): f(x) = Alpha * x + Beta.

    >>> ActivationLinearOperatorDesc(alpha=2.0, beta=1.0)      # 3 -> 7
    """

    alpha: float
    beta: float
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_LINEAR


@dataclass(frozen=True)
class ActivationSigmoidOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SIGMOID_OPERATOR_DESC (FL 1_0): f(x) = 1 / (1 + exp(-x)).

    >>> ActivationSigmoidOperatorDesc()                       # 0 -> 0.5
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SIGMOID


@dataclass(frozen=True)
class ActivationHardSigmoidOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC (FL 1_0): f(x) = max(0, min(Alpha * x + Beta, 1)).

    >>> ActivationHardSigmoidOperatorDesc()                   # Alpha 0.2, Beta 0.5: 1 -> 0.7
    """

    alpha: float = 0.2
    beta: float = 0.5
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_HARD_SIGMOID


@dataclass(frozen=True)
class ActivationTanhOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_TANH_OPERATOR_DESC (FL 1_0): f(x) = tanh(x).

    >>> ActivationTanhOperatorDesc()                          # 0 -> 0
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_TANH


@dataclass(frozen=True)
class ActivationScaledTanhOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SCALED_TANH_OPERATOR_DESC (FL 1_0): f(x) = Alpha * tanh(Beta * x).

    >>> ActivationScaledTanhOperatorDesc(alpha=2.0, beta=1.0)  # large x -> 2
    """

    alpha: float = 1.0
    beta: float = 0.5
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SCALED_TANH


@dataclass(frozen=True)
class ActivationReluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_RELU_OPERATOR_DESC (FL 1_0): f(x) = max(0, x).

    >>> ActivationReluOperatorDesc()                          # -1 -> 0, 2 -> 2
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_RELU


@dataclass(frozen=True)
class ActivationLeakyReluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_LEAKY_RELU_OPERATOR_DESC (FL 1_0): f(x) = x if x >= 0 else Alpha * x.

    >>> ActivationLeakyReluOperatorDesc(alpha=0.1)            # -2 -> -0.2
    """

    alpha: float = 0.01
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_LEAKY_RELU


@dataclass(frozen=True)
class ActivationThresholdedReluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_THRESHOLDED_RELU_OPERATOR_DESC (FL 1_0): f(x) = x if x > Alpha else 0.

    >>> ActivationThresholdedReluOperatorDesc()               # Alpha 1: 1 -> 0, 1.5 -> 1.5
    """

    alpha: float = 1.0
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_THRESHOLDED_RELU


@dataclass(frozen=True)
class ActivationEluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_ELU_OPERATOR_DESC (FL 1_0): f(x) = x if x >= 0 else Alpha * (exp(x) - 1).

    >>> ActivationEluOperatorDesc()                           # very negative x -> -1
    """

    alpha: float = 1.0
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_ELU


@dataclass(frozen=True)
class ActivationCeluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_CELU_OPERATOR_DESC (FL 3_0): f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1)).
    Alpha must not be 0.

    >>> ActivationCeluOperatorDesc(alpha=2.0)                 # very negative x -> -2
    """

    alpha: float = 1.0
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_CELU


@dataclass(frozen=True)
class ActivationScaledEluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SCALED_ELU_OPERATOR_DESC (FL 1_0): f(x) = Gamma * x if x > 0 else Gamma * (Alpha * exp(x) -
    Alpha); the defaults are SELU's constants as DirectMLX writes them.

    >>> ActivationScaledEluOperatorDesc()                     # 1 -> 1.0507...
    """

    alpha: float = 1.67326319217681884765625
    gamma: float = 1.05070102214813232421875
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SCALED_ELU


@dataclass(frozen=True)
class ActivationSoftplusOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SOFTPLUS_OPERATOR_DESC (FL 1_0): f(x) = ln(1 + exp(Steepness * x)) / Steepness.
    Steepness must be at least 1 below FL 6_4, and never 0.

    >>> ActivationSoftplusOperatorDesc()                      # 0 -> ln 2
    """

    steepness: float = 1.0
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SOFTPLUS


@dataclass(frozen=True)
class ActivationParametricSoftplusOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_PARAMETRIC_SOFTPLUS_OPERATOR_DESC (FL 1_0): f(x) = Alpha * ln(1 + exp(Beta * x)).

    >>> ActivationParametricSoftplusOperatorDesc(alpha=2.0, beta=1.0)   # 0 -> 2 ln 2
    """

    alpha: float
    beta: float
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_PARAMETRIC_SOFTPLUS


@dataclass(frozen=True)
class ActivationSoftsignOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SOFTSIGN_OPERATOR_DESC (FL 1_0): f(x) = x / (1 + |x|).

    >>> ActivationSoftsignOperatorDesc()                      # 1 -> 0.5
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SOFTSIGN


@dataclass(frozen=True)
class ActivationIdentityOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_IDENTITY_OPERATOR_DESC (FL 1_0): f(x) = x.

    >>> ActivationIdentityOperatorDesc()
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_IDENTITY


@dataclass(frozen=True)
class ActivationShrinkOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_SHRINK_OPERATOR_DESC (FL 2_0): f(x) = x - Bias if x > Threshold, x + Bias if x < -Threshold,
    else 0.

    >>> ActivationShrinkOperatorDesc()                        # Bias 0, Threshold 0.5: 0.4 -> 0, 0.6 -> 0.6
    """

    bias: float = 0.0
    threshold: float = 0.5
    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_SHRINK


@dataclass(frozen=True)
class ActivationGeluOperatorDesc(ActivationOperatorDesc):
    """DML_ACTIVATION_GELU_OPERATOR_DESC (FL 5_1): f(x) = 0.5 * x * (1 + erf(x / sqrt(2))) (the exact form, not
    the tanh approximation).

    >>> ActivationGeluOperatorDesc()                          # 1 -> 0.8413...
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = T.ACTIVATION_GELU


#: Operator type -> descriptor class, for every fusable activation.
ACTIVATION_CLASSES: dict[OperatorType, type[ActivationOperatorDesc]] = {
    cls.OPERATOR_TYPE: cls for cls in (
        ActivationLinearOperatorDesc, ActivationSigmoidOperatorDesc, ActivationHardSigmoidOperatorDesc,
        ActivationTanhOperatorDesc, ActivationScaledTanhOperatorDesc, ActivationReluOperatorDesc,
        ActivationLeakyReluOperatorDesc, ActivationThresholdedReluOperatorDesc, ActivationEluOperatorDesc,
        ActivationCeluOperatorDesc, ActivationScaledEluOperatorDesc, ActivationSoftplusOperatorDesc,
        ActivationParametricSoftplusOperatorDesc, ActivationSoftsignOperatorDesc, ActivationIdentityOperatorDesc,
        ActivationShrinkOperatorDesc, ActivationGeluOperatorDesc,
    )
}


def _check_tables() -> None:
    """The classes and the table must agree (fields in struct order); a mismatch is a bug in this module."""
    assert set(ACTIVATION_CLASSES) == set(ACTIVATION_INFO) == set(SUPPORT)
    for operator_type, cls in ACTIVATION_CLASSES.items():
        names = tuple(item.name for item in fields(cls) if item.name not in ("input_tensor", "output_tensor"))
        assert names == cls.parameter_names(), (operator_type, names)
        # a page's first table row is the level that introduced the operator
        assert min(support_row.level for support_row in SUPPORT[operator_type]) == ACTIVATION_INFO[operator_type].level


_check_tables()


def fusable_names() -> str:
    """The DML names of the fusable activations, for messages."""
    return ", ".join(info.operator_type.dml_name for info in ACTIVATIONS)


def make_activation(operator_type: OperatorType | str, dml_fields: Mapping[str, object] | None = None
                    ) -> ActivationOperatorDesc:
    """An activation from its DML operator name (or the short one, "ELU") and DML-named fields, e.g.
    make_activation("DML_OPERATOR_ACTIVATION_ELU", {"Alpha": 0.5})."""
    if isinstance(operator_type, str) and operator_type.strip().upper() in {
            info.operator_type.name[len("ACTIVATION_"):] for info in ACTIVATIONS}:
        operator_type = "ACTIVATION_" + operator_type.strip().upper()   # the short name, e.g. "ELU"
    kind = OperatorType.parse(operator_type)
    cls = ACTIVATION_CLASSES.get(kind)
    if cls is None:
        raise ValidationError(f"{kind.dml_name} is not a fusable activation; the fusable ones are {fusable_names()}")
    kwargs: dict[str, object] = {}
    allowed = ("InputTensor", "OutputTensor", *cls.info().parameters)
    for name, value in (dml_fields or {}).items():
        if name not in allowed:
            raise ValidationError(f"{kind.dml_name}: {name} is not one of its fields ({', '.join(allowed)})")
        kwargs[FIELDS[name]] = value
    return cls(**kwargs)  # type: ignore[arg-type]


#: The activations' formulas (float tensors), in the same language: a fused activation is its formula with `x`
#: replaced by the fusing operator's formula; the standalone activations are rendered from them too.
ACTIVATION_FORMULAS: dict[OperatorType, str] = {
    T.ACTIVATION_LINEAR: "Alpha * x + Beta",
    T.ACTIVATION_SIGMOID: "sigmoid(x)",
    # NaN stays NaN (Alpha x's), also where the clamp's comparisons would pick a bound
    T.ACTIVATION_HARD_SIGMOID: "Alpha * x if isnan(Alpha * x) else "
                               "select(Alpha * x + Beta < 1, Alpha * x + Beta, 1) if "
                               "select(Alpha * x + Beta < 1, Alpha * x + Beta, 1) > 0 else 0",
    T.ACTIVATION_TANH: "tanh(x)",
    T.ACTIVATION_SCALED_TANH: "Alpha * tanh(Beta * x)",
    T.ACTIVATION_RELU: "x if x > 0 or isnan(x) else 0",
    T.ACTIVATION_LEAKY_RELU: "x if x >= 0 else Alpha * x",
    T.ACTIVATION_THRESHOLDED_RELU: "x if x > Alpha else 0",   # NaN > Alpha is false: NaN gives 0
    T.ACTIVATION_ELU: "x if x >= 0 else Alpha * expm1(x)",
    # q = x / Alpha; Alpha expm1(q) is x where |q| < 2^-24, and +-e^(q + log|Alpha|) where q > 80 (no overflow of
    # e^q on the way to a finite result)
    T.ACTIVATION_CELU: "x if isnan(x) else select(x > 0, x, 0) + select(_celu_negative < 0, _celu_negative, 0)",
    T.ACTIVATION_SCALED_ELU: "Gamma * x if x > 0 else Gamma * (Alpha * expm1(x))",
    # linear part plus the log1p of e^-|Steepness x|: no overflow, and -0 where a negative result underflows
    T.ACTIVATION_SOFTPLUS: "x if isnan(x) else (select(x > 0, x, 0) if Steepness > 0 else select(x < 0, x, -0.0))"
                           " + div(log1p(exp(-abs(Steepness * x))), Steepness)",
    T.ACTIVATION_PARAMETRIC_SOFTPLUS: "Beta * x if isnan(Beta * x) else "
                                      "select(Beta * x > 0, select(isinf(Beta * x) and not isinf(x), "
                                      "Alpha * Beta * x, Alpha * (Beta * x)), 0)"
                                      " + Alpha * log1p(exp(-abs(Beta * x)))",
    T.ACTIVATION_SOFTSIGN: "sign(x) if isinf(x) else div(x, 1 + abs(x))",
    T.ACTIVATION_IDENTITY: "x",
    T.ACTIVATION_SHRINK: "x - Bias if x > Threshold else (x + Bias if x < -Threshold else 0)",  # NaN gives 0
    T.ACTIVATION_GELU: "gelu(x)",
}
_CELU_NEGATIVE = ("x if abs(div(x, Alpha)) < 5.9604644775390625e-08 else "
                  "(select(Alpha > 0, exp(div(x, Alpha) + LogAlpha), -exp(div(x, Alpha) + LogAlpha)) "
                  "if div(x, Alpha) > 80 else Alpha * expm1(div(x, Alpha)))")
ACTIVATION_FORMULAS[T.ACTIVATION_CELU] = ACTIVATION_FORMULAS[T.ACTIVATION_CELU].replace(
    "_celu_negative", f"({_CELU_NEGATIVE})")


def activation_values(activation: ActivationOperatorDesc) -> dict[str, float]:
    """{formula name: value} of an activation's formula: its FLOAT parameters rounded to FLOAT32, and CELU's
    log|Alpha| (computed once, as DML receives Alpha)."""
    values = {name: float(np.float32(value)) for name, value in activation.parameters().items()}
    if activation.OPERATOR_TYPE is T.ACTIVATION_CELU:
        values["LogAlpha"] = float(np.float32(math.log(abs(values["Alpha"]))))
    return values


#: RELU on an integer tensor (from 5_1).
_INTEGER_RELU = "maximum(x, 0)"
_V = "widen(x)"
#: SHRINK on an integer tensor: IntegerShrink's plan (its 20 words as Q0..Q19), exactly, in INT64.
_INTEGER_SHRINK = (
    f"select(Q0 <= {_V} and {_V} <= Q1,"
    f" select(Q4 <= {_V} and {_V} <= Q5, minimum(maximum({_V}, Q6), Q7) - Q8, minimum(maximum({_V}, Q9), Q10) - Q11),"
    f" select(Q2 <= {_V} and {_V} <= Q3,"
    f" select(Q12 <= {_V} and {_V} <= Q13, minimum(maximum({_V}, Q14), Q15) - Q16,"
    f" minimum(maximum({_V}, Q17), Q18) - Q19), 0))")


def activation_tree(activation: ActivationOperatorDesc, x: Node, data_type: DataType, prefix: str = "") -> Node:
    """The activation's typed formula for a float `data_type`, applied to `x` (a tree of kind F, or the input
    variable), its parameters named `prefix + name` (their values: `activation_values`)."""
    text = ACTIVATION_FORMULAS[activation.OPERATOR_TYPE]
    names = tuple(activation_values(activation))
    if prefix and names:
        text = re.sub(r"\b(" + "|".join(names) + r")\b", lambda match: prefix + match.group(1), text)
    types = {"x": data_type, **{prefix + name: DataType.FLOAT32 for name in names}}
    return substitute(parse(text, types, data_type), "x", x)


# -- SHRINK on integer tensors --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IntegerPiece:
    """x -> clamp(x - k) to the type's range, for each x of the type, taking `inside` where low <= x <= high and
    `outside` elsewhere. A shift is (low, high, k): clamp(x, low, high) - k, whose value always lies in the type's
    range, so that a kernel computes it exactly in the type's own width (wrapping arithmetic, k modulo 2^32)."""

    low: int
    high: int
    inside: tuple[int, int, int]
    outside: tuple[int, int, int]


@dataclass(frozen=True)
class IntegerShrink:
    """SHRINK on an integer type, in integers only (both backends evaluate exactly this):

        y = minus(x) if above[0] <= x <= above[1] else (plus(x) if below[0] <= x <= below[1] else 0)

    `above` is x > Threshold and `below` x < -Threshold (a range with low > high is empty); `minus` is x - Bias and
    `plus` x + Bias, each truncated toward zero (as ONNX's Shrink converts to the type) and saturated to the type's
    range. Threshold and Bias are FLOATs used exactly (rounded to FLOAT first, as DML receives them)."""

    above: tuple[int, int]
    below: tuple[int, int]
    minus: IntegerPiece
    plus: IntegerPiece

    @classmethod
    def of(cls, bias: float, threshold: float, data_type: DataType) -> IntegerShrink:
        info = np.iinfo(data_type.numpy_dtype)
        lo, hi = int(info.min), int(info.max)
        bias, threshold = float(np.float32(bias)), float(np.float32(threshold))

        def at_least(a: int) -> tuple[int, int]:
            return (max(a, lo), hi) if a <= hi else (hi, lo)

        def at_most(b: int) -> tuple[int, int]:
            return (lo, min(b, hi)) if b >= lo else (hi, lo)

        def shift(k: int) -> tuple[int, int, int]:
            """clamp(x - k) as clamp(x, low, high) - k; where every x saturates, a constant (k = 0)."""
            if lo + k > hi:
                return lo, lo, 0
            if hi + k < lo:
                return hi, hi, 0
            return max(lo + k, lo), min(hi + k, hi), k

        def piece(start: int, inside: int, outside: int) -> IntegerPiece:
            return IntegerPiece(*at_least(start), shift(inside), shift(outside))

        ceil_b, floor_b = math.ceil(bias), math.floor(bias)
        # x integer: trunc(x - B) = x - ceil(B) where x >= ceil(B) (the difference is >= 0), else x - floor(B);
        # trunc(x + B) = x + floor(B) where x >= -floor(B), else x + ceil(B).
        return cls(above=at_least(math.floor(threshold) + 1), below=at_most(math.ceil(-threshold) - 1),
                   minus=piece(ceil_b, ceil_b, floor_b), plus=piece(-floor_b, -floor_b, -ceil_b))

    def words(self) -> tuple[int, ...]:
        """The 20 integers in a fixed order (above, below, then each piece: low, high, inside, outside), for
        kernels' parameter arrays."""
        values: list[int] = [*self.above, *self.below]
        for piece in (self.minus, self.plus):
            values += [piece.low, piece.high, *piece.inside, *piece.outside]
        return tuple(values)
