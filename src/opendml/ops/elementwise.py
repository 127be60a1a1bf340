"""The ELEMENT_WISE family: 62 operators, each a row of data, all validated and computed by one engine.

A row (`ElementWiseInfo`) holds what makes an operator itself: its DML type, its tensor fields (with the formula
variable each input binds), its scalar fields, which tensors share a data type, and its formula in the language of
formula.py (one formula, or one per value of an enum field, as ROUND's RoundingMode). The descriptor classes are
generated from the rows (`ElementWiseAddOperatorDesc`, ...; fields in DirectML.h's struct order, snake case), and
their support tables are each page's "Tensor support" table (elementwise_unary_support.py,
elementwise_binary_support.py). Backends never see an operator by name: they ask a descriptor for its typed formula
tree (`formula_tree`) and its parameters, and render it.

The family's rules (each page's "Tensor constraints", and opendml's rulings where the pages say nothing):
- every tensor has the output's DimensionCount and Sizes: an input broadcasts by its strides (zero strides), never
  by smaller sizes, as in DML;
- the tensors of a `same_type` group share one DataType;
- ScaleBias, where the struct has it, applies to float inputs only (x * Scale + Bias, before the function);
- CLIP1's MinMaxDataType is the tensor's type, and Min and Max are values of that type, exactly;
- ADD1's FusedActivation follows the fused-activation rules (no tensors, its level, its parameters);
- CLIP with both tensors None is the fused form CONVOLUTION and GEMM take (ops/fused_activation.py), never an
  operator of its own.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..convert import describe, to_enum, to_float
from ..errors import UnsupportedError, ValidationError
from ..formula import Node, parse, substitute
from ..support import SupportTable, check_support
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, IsInfinityMode, OperatorType, RoundingMode, to_data_type
from . import elementwise_binary_support as _binary
from . import elementwise_unary_support as _unary
from .activations import ActivationOperatorDesc, activation_tree, activation_values
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .structs import ScalarValue, ScaleBias

T = OperatorType
L = FeatureLevel

# Scalar field kinds of the rows: FLOAT (a DML FLOAT), SCALAR (a DML_SCALAR_UNION of the type in MinMaxDataType),
# the enums, and the fused activation.
FLOAT, SCALAR, DATA_TYPE, ROUNDING, INFINITY, ACTIVATION, SCALE_BIAS = (
    "FLOAT", "SCALAR", "DATA_TYPE", "ROUNDING", "INFINITY", "ACTIVATION", "SCALE_BIAS")
_PYTHON_TYPES: dict[str, Any] = {
    FLOAT: float, SCALAR: ScalarValue, DATA_TYPE: DataType, ROUNDING: RoundingMode, INFINITY: IsInfinityMode,
    ACTIVATION: ActivationOperatorDesc | None, SCALE_BIAS: ScaleBias | None,
}


@dataclass(frozen=True)
class ElementWiseInfo:
    """One operator of the family.

    inputs: (DML field, formula variable) per input tensor, in struct order; the struct's OutputTensor follows
    them (IF and the quantizers included). scalars: (DML field, kind) after OutputTensor, in struct order.
    formula: the formula, or a function of the descriptor that picks it (an enum field: ROUND, IS_INFINITY; the
    tensors' types: POW). same_type: groups of tensor fields that share one DataType. output_type: the output's
    type where it is not a `same_type` partner's (the graph API's inference), or None. optional: input fields
    that may be None from optional_level on (the formula sees 0). bits: the operator works on the raw bits of
    float tensors (their `view_type` is the unsigned integer of their width). check: the page's remaining type
    rule, if any.
    """

    operator_type: OperatorType
    inputs: tuple[tuple[str, str], ...]
    formula: str | Callable[[Any], str]
    scalars: tuple[tuple[str, str], ...] = ()
    same_type: tuple[tuple[str, ...], ...] = ()
    output_type: DataType | None = None
    optional: tuple[str, ...] = ()
    optional_level: FeatureLevel = FeatureLevel.LEVEL_1_0
    bits: bool = False
    check: Callable[[Any], None] | None = None

    @property
    def short_name(self) -> str:
        return self.operator_type.name.removeprefix("ELEMENT_WISE_")

    @property
    def support(self) -> SupportTable:
        return _SUPPORT[self.short_name]

    @property
    def level(self) -> FeatureLevel:
        return min(support_row.level for support_row in self.support)

    @property
    def in_place(self) -> tuple[str, ...]:
        """The input fields the page allows OutputTensor to alias."""
        return _IN_PLACE.get(self.short_name, ())

    @property
    def parameters(self) -> tuple[str, ...]:
        """The scalar fields a formula names (FLOAT and SCALAR ones)."""
        return tuple(name for name, kind in self.scalars if kind in (FLOAT, SCALAR))

    def tensor_fields(self) -> tuple[str, ...]:
        return (*(name for name, _ in self.inputs), "OutputTensor")


_SUPPORT: dict[str, SupportTable] = {**_unary.SUPPORT, **_binary.SUPPORT}
_IN_PLACE: dict[str, tuple[str, ...]] = {
    **{name: ("InputTensor",) for name in _unary.IN_PLACE}, **_binary.IN_PLACE}

_X = (("InputTensor", "x"),)
_AB = (("ATensor", "a"), ("BTensor", "b"))
_SB = (("ScaleBias", SCALE_BIAS),)
_SAME_X = (("InputTensor", "OutputTensor"),)
_SAME_AB = (("ATensor", "BTensor", "OutputTensor"),)
_INPUTS_AB = (("ATensor", "BTensor"),)


def _unary_row(name: str, formula: str, scale_bias: bool = True, output_type: DataType | None = None
               ) -> ElementWiseInfo:
    return ElementWiseInfo(OperatorType["ELEMENT_WISE_" + name], _X, formula, _SB if scale_bias else (),
                           () if output_type else _SAME_X, output_type)


def _binary_row(name: str, formula: str, same: bool = True, output_type: DataType | None = None
                ) -> ElementWiseInfo:
    return ElementWiseInfo(OperatorType["ELEMENT_WISE_" + name], _AB, formula, (), _SAME_AB if same else _INPUTS_AB,
                           output_type)


_FUNCTIONS = {
    "IDENTITY": "x", "ABS": "abs(x)", "ACOS": "acos(x)", "ASIN": "asin(x)", "ATAN": "atan(x)", "CEIL": "ceil(x)",
    "COS": "cos(x)", "EXP": "exp(x)", "FLOOR": "floor(x)", "LOG": "log(x)", "RECIP": "div(1, x)", "SIN": "sin(x)",
    "SQRT": "sqrt(x)", "TAN": "tan(x)", "ERF": "erf(x)", "SINH": "sinh(x)", "COSH": "cosh(x)", "TANH": "tanh(x)",
    "ASINH": "asinh(x)", "ACOSH": "acosh(x)", "ATANH": "atanh(x)",
}
_U8 = DataType.UINT8

def _pow_formula(desc: Any) -> str:
    """POW by its tensors' kinds: floats through pow (the exponent converted), integers exactly (ipow), an integer
    base with a float exponent through pow and then truncated into the base's type."""
    base, exponent = desc.input_tensor.data_type.is_float, desc.exponent_tensor.data_type.is_float
    if base:
        return "pow(x, to_float(e))"
    return "saturate(trunc(pow(to_float(x), e)))" if exponent else "ipow(x, e)"


def _pow_exponent(desc: Any) -> None:
    """POW: "Until DML_FEATURE_LEVEL_3_0, ExponentTensor must match the type of InputTensor" (checked in
    `validate`, which knows the level)."""


def _quantize_scale(desc: Any) -> None:
    """QUANTIZE_LINEAR: "If InputTensor is INT32, then ScaleTensor must be FLOAT32. Otherwise, ScaleTensor must have
    the same DataType as InputTensor."
    """
    source, scale = desc.input_tensor.data_type, desc.scale_tensor.data_type
    wanted = DataType.FLOAT32 if source == DataType.INT32 else source
    if scale != wanted:
        raise ValidationError(f"{desc.label}: ScaleTensor.DataType is {scale.name}; it must be {wanted.name} "
                              f"for InputTensor.DataType {source.name}")


#: Every operator of the family.
ELEMENT_WISE: tuple[ElementWiseInfo, ...] = (
    *(_unary_row(name, formula) for name, formula in _FUNCTIONS.items()),
    ElementWiseInfo(T.ELEMENT_WISE_CLIP, _X, "maximum(Min, minimum(x, Max))",
                    (*_SB, ("Min", FLOAT), ("Max", FLOAT)), _SAME_X),
    ElementWiseInfo(T.ELEMENT_WISE_CLIP1, _X, "maximum(Min, minimum(x, Max))",
                    (*_SB, ("MinMaxDataType", DATA_TYPE), ("Min", SCALAR), ("Max", SCALAR)), _SAME_X),
    ElementWiseInfo(T.ELEMENT_WISE_THRESHOLD, _X, "maximum(x, Min)", (*_SB, ("Min", FLOAT)), _SAME_X),
    ElementWiseInfo(T.ELEMENT_WISE_CONSTANT_POW, _X, "pow(x, Exponent)", (*_SB, ("Exponent", FLOAT)), _SAME_X),
    _unary_row("LOGICAL_NOT", "x == 0", scale_bias=False),
    _unary_row("SIGN", "sign(x)", scale_bias=False),
    _unary_row("IS_NAN", "isnan(x)", scale_bias=False, output_type=_U8),
    ElementWiseInfo(T.ELEMENT_WISE_IS_INFINITY, _X, lambda desc: {
        IsInfinityMode.EITHER: "isinf(x)", IsInfinityMode.POSITIVE: "isinf(x) and x > 0",
        IsInfinityMode.NEGATIVE: "isinf(x) and x < 0"}[desc.infinity_mode], (("InfinityMode", INFINITY),),
        output_type=_U8),
    ElementWiseInfo(T.ELEMENT_WISE_ROUND, _X, lambda desc: {
        RoundingMode.HALVES_TO_NEAREST_EVEN: "round_even(x)", RoundingMode.TOWARD_ZERO: "trunc(x)",
        RoundingMode.TOWARD_INFINITY: "round_away(x)"}[desc.rounding_mode], (("RoundingMode", ROUNDING),), _SAME_X),
    ElementWiseInfo(T.ELEMENT_WISE_BIT_NOT, _X, "bit_not(x)", (), _SAME_X, bits=True),
    ElementWiseInfo(T.ELEMENT_WISE_BIT_COUNT, _X, "popcount(x)", (), (), _U8, bits=True),
    _unary_row("NEGATE", "-x", scale_bias=False),
    ElementWiseInfo(T.ELEMENT_WISE_QUANTIZE_LINEAR,
                    (("InputTensor", "x"), ("ScaleTensor", "s"), ("ZeroPointTensor", "z")),
                    "saturate(round_even(div(to_float(x), s)) + to_float(z))", (),
                    (("ZeroPointTensor", "OutputTensor"),), optional=("ZeroPointTensor",), optional_level=L.LEVEL_6_2,
                    check=_quantize_scale),
    ElementWiseInfo(T.ELEMENT_WISE_DEQUANTIZE_LINEAR,
                    (("InputTensor", "x"), ("ScaleTensor", "s"), ("ZeroPointTensor", "z")),
                    "to_float(x - z) * s", (), (("InputTensor", "ZeroPointTensor"), ("ScaleTensor", "OutputTensor")),
                    optional=("ZeroPointTensor",), optional_level=L.LEVEL_6_2),
    _binary_row("ADD", "a + b"),
    ElementWiseInfo(T.ELEMENT_WISE_ADD1, _AB, "a + b", (("FusedActivation", ACTIVATION),), _SAME_AB),
    _binary_row("SUBTRACT", "a - b"),
    _binary_row("MULTIPLY", "a * b"),
    _binary_row("DIVIDE", "div(a, b)"),
    ElementWiseInfo(T.ELEMENT_WISE_POW, (("InputTensor", "x"), ("ExponentTensor", "e")), _pow_formula, _SB,
                    (("InputTensor", "OutputTensor"),), check=_pow_exponent),
    _binary_row("MAX", "maximum(a, b)"),
    _binary_row("MIN", "minimum(a, b)"),
    _binary_row("MEAN", "div(a + b, 2)"),
    _binary_row("LOGICAL_AND", "a != 0 and b != 0"),
    _binary_row("LOGICAL_OR", "a != 0 or b != 0"),
    _binary_row("LOGICAL_XOR", "(a != 0 and b == 0) or (a == 0 and b != 0)"),
    _binary_row("LOGICAL_EQUALS", "a == b", same=False, output_type=_U8),
    _binary_row("LOGICAL_GREATER_THAN", "a > b", same=False, output_type=_U8),
    _binary_row("LOGICAL_GREATER_THAN_OR_EQUAL", "a >= b", same=False, output_type=_U8),
    _binary_row("LOGICAL_LESS_THAN", "a < b", same=False, output_type=_U8),
    _binary_row("LOGICAL_LESS_THAN_OR_EQUAL", "a <= b", same=False, output_type=_U8),
    *(ElementWiseInfo(OperatorType["ELEMENT_WISE_BIT_" + name], _AB, f"bit_{name.lower()}(a, b)", (), _SAME_AB,
                      bits=True)
      for name in ("AND", "OR", "XOR")),
    _binary_row("BIT_SHIFT_LEFT", "shl(a, b)"),
    _binary_row("BIT_SHIFT_RIGHT", "shr(a, b)"),
    _binary_row("MODULUS_TRUNCATE", "mod_trunc(a, b)"),
    _binary_row("MODULUS_FLOOR", "mod_floor(a, b)"),
    _binary_row("ATAN_YX", "atan2(a, b)"),
    _binary_row("DIFFERENCE_SQUARE", "(a - b) * (a - b)"),
    ElementWiseInfo(T.ELEMENT_WISE_IF, (("ConditionTensor", "c"), *_AB), "select(c != 0, a, b)", (),
                    (("ATensor", "BTensor", "OutputTensor"),)),
)
INFO: dict[OperatorType, ElementWiseInfo] = {info.operator_type: info for info in ELEMENT_WISE}

#: Formula names of parameters that FusedActivation's parameters take inside ADD1's formula.
_ACTIVATION_PREFIX = "FusedActivation_"

def _snake(name: str) -> str:
    """ATensor -> a_tensor; MinMaxDataType -> min_max_data_type; ScaleBias -> scale_bias."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _camel(short_name: str) -> str:
    return "".join(part.capitalize() for part in short_name.split("_"))


class ElementWiseOperatorDesc(OperatorDesc):
    """Base of the generated DML_ELEMENT_WISE_*_OPERATOR_DESC classes (frozen dataclasses; see the module doc)."""

    INFO: ClassVar[ElementWiseInfo]
    #: The family's one kernel module on every backend (backends/<name>/element_wise.py).
    KERNEL_MODULE: ClassVar[str] = "element_wise"

    @classmethod
    def info(cls) -> ElementWiseInfo:
        return cls.INFO

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        return {"": cls.INFO.support}

    def field_value(self, dml_name: str) -> Any:
        return getattr(self, _snake(dml_name))

    def tensor(self, dml_name: str) -> TensorDesc:
        value: TensorDesc = self.field_value(dml_name)
        return value

    def present_tensors(self) -> dict[str, TensorDesc]:
        """{DML field: tensor} of every tensor that is set, inputs first, OutputTensor last."""
        return {name: self.tensor(name) for name in self.INFO.tensor_fields() if self.field_value(name) is not None}

    def view_type(self, dml_name: str) -> DataType:
        """The type a kernel reads or writes the tensor as: its DataType, except for the bitwise operators on float
        tensors, which work on the raw bits (the unsigned integer of the same width)."""
        data_type = self.tensor(dml_name).data_type
        if self.INFO.bits and data_type.is_float:
            return _BITS_OF[data_type]
        return data_type

    # -- OperatorDesc ------------------------------------------------------------------------------------------------

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [(name, self.field_value(name)) for name, _ in self.INFO.inputs]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.tensor("OutputTensor"))]

    def in_place_pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, "OutputTensor") for name in self.INFO.in_place)

    @property
    def is_fused_form(self) -> bool:
        """Whether this is ELEMENT_WISE_CLIP as a FusedActivation of CONVOLUTION or GEMM: both tensors None."""
        return self.OPERATOR_TYPE is T.ELEMENT_WISE_CLIP and all(
            self.field_value(name) is None for name in self.INFO.tensor_fields())

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table at `level`, the family's rules (module doc)."""
        operator, info = self.label, self.INFO
        if self.is_fused_form:
            raise ValidationError(f"{operator}: InputTensor and OutputTensor are absent (None); only a "
                                  f"FusedActivation (of CONVOLUTION or GEMM) leaves them out")
        self.check_tensors()
        tensors = self.present_tensors()
        output = tensors["OutputTensor"]
        for name, tensor in tensors.items():
            if name == "OutputTensor":
                continue
            check_same_rank(operator, name, tensor, "OutputTensor", output)
            if tensor.sizes != output.sizes:
                raise ValidationError(f"{operator}: {name}.Sizes is {list(tensor.sizes)}; it must equal "
                                      f"OutputTensor.Sizes {list(output.sizes)} (an input broadcasts by zero "
                                      f"strides, not by smaller sizes)")
        for group in info.same_type:
            present = [name for name in group if name in tensors]
            for name in present[1:]:
                check_same_data_type(operator, name, tensors[name], present[0], tensors[present[0]])
        check_support(info.support, operator, level, tensors)
        for name in info.optional:
            since = info.optional_level
            if name not in tensors and level < since:
                raise UnsupportedError(f"{operator}: {name} absent (None) needs feature level {since}; the "
                                       f"device is at {level}")
        if info.operator_type == T.ELEMENT_WISE_POW and level < FeatureLevel.LEVEL_3_0:
            source, exponent = tensors["InputTensor"].data_type, tensors["ExponentTensor"].data_type
            if exponent != source:
                raise UnsupportedError(f"{operator}: ExponentTensor.DataType {exponent.name} differs from "
                                       f"InputTensor.DataType ({source.name}), which needs feature level 3_0; the "
                                       f"device is at {level}")
        if info.check is not None:
            info.check(self)
        self._check_scalars(level)

    def _check_scalars(self, level: FeatureLevel) -> None:
        operator = self.label
        first_input = self.tensor(self.INFO.inputs[0][0])
        for name, kind in self.INFO.scalars:
            value = self.field_value(name)
            if kind == SCALE_BIAS and value is not None and not first_input.data_type.is_float:
                raise ValidationError(f"{operator}: ScaleBias is set for {self.INFO.inputs[0][0]}.DataType "
                                      f"{first_input.data_type.name}; ScaleBias applies to float tensors only "
                                      f"(leave it None)")
            if kind == ACTIVATION and value is not None:
                value.check_fusable(operator, level)
            if kind == DATA_TYPE and value != first_input.data_type:
                raise ValidationError(f"{operator}: {name} is {value.name}; it must equal "
                                      f"InputTensor.DataType ({first_input.data_type.name})")

    # -- what backends render ----------------------------------------------------------------------------------------

    def formula_text(self) -> str:
        """The formula in force."""
        formula = self.INFO.formula
        return formula if isinstance(formula, str) else formula(self)

    def _integer_input(self) -> DataType | None:
        data_type = self.view_type(self.INFO.inputs[0][0])
        return None if data_type.is_float else data_type

    def formula_parameters(self) -> dict[str, float | int]:
        """{formula name: value} of the scalar parameters, FusedActivation's included. FLOATs are rounded to FLOAT32
        as DML receives them; on an integer tensor (CLIP, THRESHOLD) a FLOAT is truncated toward zero and saturated
        to the tensor's type, as CLIP's page says; SCALAR values are exact."""
        values: dict[str, float | int] = {}
        integer = self._integer_input()
        for name, kind in self.INFO.scalars:
            value = self.field_value(name)
            if kind == FLOAT and integer is not None:
                info = np.iinfo(integer.numpy_dtype)
                values[name] = int(min(max(int(float(np.float32(value))), int(info.min)), int(info.max)))
            elif kind == FLOAT:
                values[name] = float(np.float32(value))
            elif kind == SCALAR:
                values[name] = value
            elif kind == ACTIVATION and value is not None:
                for parameter, number in activation_values(value).items():
                    values[_ACTIVATION_PREFIX + parameter] = number
        return values

    def scale_bias_value(self) -> ScaleBias | None:
        """ScaleBias, applied by the kernels to the float inputs (x * Scale + Bias in the compute float) before the
        formula. POW's applies to InputTensor only."""
        return self.field_value("ScaleBias") if any(kind == SCALE_BIAS for _, kind in self.INFO.scalars) else None

    def scaled_inputs(self) -> tuple[str, ...]:
        """The input fields ScaleBias applies to (none when it is None)."""
        if self.scale_bias_value() is None:
            return ()
        return (self.INFO.inputs[0][0],)

    def formula_types(self) -> dict[str, DataType]:
        """The data type of every name the formula may use: inputs as their `view_type` (an absent optional input
        as the output's type: it reads 0), FLOAT parameters as FLOAT32 (as the tensor's integer type on an integer
        tensor), SCALAR ones as the tensor's type."""
        types = {variable: self.view_type(name) if self.field_value(name) is not None else self._partner_type(name)
                 for name, variable in self.INFO.inputs}
        integer = self._integer_input()
        for name, kind in self.INFO.scalars:
            if kind == FLOAT:
                types[name] = integer or DataType.FLOAT32
            elif kind == SCALAR:
                types[name] = self.view_type(self.INFO.inputs[0][0])
        return types

    def _partner_type(self, name: str) -> DataType:
        """An absent optional input's type: its `same_type` group's (DEQUANTIZE's zero point: InputTensor's)."""
        group = next(group for group in self.INFO.same_type if name in group)
        return next(self.view_type(member) for member in group if self.field_value(member) is not None)

    def formula_tree(self) -> Node:
        """The typed tree of the formula in force, for this descriptor's data types, with an absent optional input
        replaced by 0 and ADD1's FusedActivation applied to the result (its parameters named
        FusedActivation_<DML name>)."""
        output = self.view_type("OutputTensor")
        tree = parse(self.formula_text(), self.formula_types(), output)
        for name, variable in self.INFO.inputs:
            if self.field_value(name) is None:
                tree = substitute(tree, variable, parse("0", {}, self._partner_type(name)))
        activation = next((self.field_value(name) for name, kind in self.INFO.scalars if kind == ACTIVATION), None)
        if activation is not None:
            tree = activation_tree(activation, tree, output, _ACTIVATION_PREFIX)
        return tree

    def variables(self) -> dict[str, str]:
        """{formula variable: DML field} of the inputs that are set."""
        return {variable: name for name, variable in self.INFO.inputs if self.field_value(name) is not None}


_BITS_OF = {DataType.FLOAT16: DataType.UINT16, DataType.FLOAT32: DataType.UINT32, DataType.FLOAT64: DataType.UINT64}


def _coerce_fields(desc: ElementWiseOperatorDesc) -> None:
    """Checks and normalizes the constructor's values (each field's kind), naming the field on a bad value."""
    operator = desc.OPERATOR_TYPE.dml_name
    for name in desc.INFO.tensor_fields():
        if not (name in desc.INFO.optional and desc.field_value(name) is None) and not desc.is_fused_form:
            require_tensor(operator, name, desc.field_value(name))
    for name, kind in desc.INFO.scalars:
        attribute, value = _snake(name), desc.field_value(name)
        if kind == FLOAT:
            value = to_float(operator, name, value)
        elif kind == DATA_TYPE:
            value = to_data_type(operator, name, value)
        elif kind == ROUNDING:
            value = to_enum(operator, name, value, RoundingMode, "DML_ROUNDING_MODE_")
        elif kind == INFINITY:
            value = to_enum(operator, name, value, IsInfinityMode, "DML_IS_INFINITY_MODE_")
        elif kind == SCALE_BIAS and value is not None and not isinstance(value, ScaleBias):
            raise ValidationError(f"{operator}: ScaleBias is {describe(value)}; it must be a ScaleBias or None")
        elif kind == ACTIVATION and value is not None and not isinstance(value, ActivationOperatorDesc):
            raise ValidationError(f"{operator}: {name} is {describe(value)}; it must be an activation descriptor "
                                  f"(DML_ACTIVATION_*) or None")
        object.__setattr__(desc, attribute, value)
    scalars = [name for name, kind in desc.INFO.scalars if kind == SCALAR]
    if scalars:
        data_type: DataType = desc.field_value("MinMaxDataType")
        for name in scalars:
            object.__setattr__(desc, _snake(name), scalar_value(operator, name, desc.field_value(name), data_type))


def scalar_value(operator: str, field_name: str, value: object, data_type: DataType) -> float | int:
    """A DML_SCALAR_UNION member of `data_type`, exactly: an int in the integer type's range, or a float that the
    float type represents (FLOAT16's and FLOAT32's range; the value itself is rounded to the type)."""
    if data_type.is_float:
        limit = {DataType.FLOAT16: 65504.0, DataType.FLOAT32: float(np.finfo(np.float32).max)}.get(data_type)
        number = to_float(operator, field_name, value, finite=False, limit=limit, what=data_type.name)
        if math.isnan(number):
            raise ValidationError(f"{operator}: {field_name} is nan; it must be a number of {data_type.name} "
                                  f"(infinities are allowed: no bound)")
        return float(np.asarray(number, dtype=data_type.numpy_dtype))
    info = np.iinfo(data_type.numpy_dtype)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not info.min <= int(value) <= info.max:
        raise ValidationError(f"{operator}: {field_name} is {describe(value)}; it must be an integer of "
                              f"{data_type.name} (from {info.min} to {info.max})")
    return int(value)


def _make_class(info: ElementWiseInfo) -> type[ElementWiseOperatorDesc]:
    """The descriptor class of one row: tensor fields (inputs, then OutputTensor), then the scalar fields, in struct
    order; the optional ones (ScaleBias, FusedActivation) default to None and the enums to their first member,
    where no field without a default follows them."""
    defaults = {SCALE_BIAS: None, ACTIVATION: None, ROUNDING: RoundingMode.HALVES_TO_NEAREST_EVEN,
                INFINITY: IsInfinityMode.EITHER}
    specs: list[Any] = [(_snake(name), TensorDesc | None if name in info.optional else TensorDesc)
                        for name in info.tensor_fields()]
    for index, (name, kind) in enumerate(info.scalars):
        hint = _PYTHON_TYPES[kind]
        # a default only where every later field has one (CLIP's ScaleBias, before Min and Max, has none)
        if kind in defaults and all(later in defaults for _, later in info.scalars[index:]):
            specs.append((_snake(name), hint, field(default=defaults[kind], metadata={"kind": kind})))
        else:
            specs.append((_snake(name), hint, field(metadata={"kind": kind})))
    name = f"ElementWise{_camel(info.short_name)}OperatorDesc"
    cls = dataclasses.make_dataclass(
        name, specs, bases=(ElementWiseOperatorDesc,), frozen=True,
        namespace={"OPERATOR_TYPE": info.operator_type, "INFO": info, "__post_init__": _coerce_fields,
                   "__module__": __name__,
                   "__doc__": f"DML_{info.operator_type.name}_OPERATOR_DESC (FL {info.level}): {_doc(info)}."})
    return typing.cast(type[ElementWiseOperatorDesc], cls)


def _doc(info: ElementWiseInfo) -> str:
    formula = info.formula
    return f"OutputTensor = {formula}" if isinstance(formula, str) else (formula.__doc__ or "").split("\n")[0]


#: Operator type -> generated descriptor class; each is also a module attribute by its class name.
CLASSES: dict[OperatorType, type[ElementWiseOperatorDesc]] = {info.operator_type: _make_class(info)
                                                              for info in ELEMENT_WISE}
globals().update({cls.__name__: cls for cls in CLASSES.values()})
__all__ = ["CLASSES", "ELEMENT_WISE", "INFO", "ElementWiseInfo", "ElementWiseOperatorDesc", "ScaleBias",
           *(cls.__name__ for cls in CLASSES.values())]
