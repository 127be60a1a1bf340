"""CAST on the element-wise engine (issue 28, the copy slice): a unary row whose output type differs from its input's.

CAST's formula is the identity written in the engine's primitives for the pair of types (`cast_formula`), so every
backend's element_wise kernel renders it and the conversion rules are the engine's store (formula.py):
- float -> float: the value rounded once to the output type (nearest, ties to even; past its range: infinity; NaN
  stays NaN); FLOAT16 and FLOAT32 widen exactly;
- integer -> float: the nearest float of the output type (`to_float`);
- float -> integer: truncated toward zero, then saturated to the output type's range, NaN -> 0 (README Rulings: the
  page is silent);
- integer -> integer: the value wrapped to the output type's width (two's complement, as C and ONNX's Cast; README
  Rulings).

The page's rules: InputTensor and OutputTensor have the same DimensionCount and Sizes; each has a type of its own,
any the row in force lists (SUPPORT below: the page's "Tensor support", one row per level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType
from .base import check_same_rank
from .generators import GeneratorInfo, GeneratorOperatorDesc

L = FeatureLevel
T = OperatorType

_SMALL = (F32, F16, I16, I8, U16, U8)
_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_ALL = (F64, *_64)

#: DML_CAST_OPERATOR_DESC's "Tensor support", one row per level the page lists.
SUPPORT: dict[OperatorType, SupportTable] = {
    T.CAST: (row(L.LEVEL_1_0, 4, InputTensor=_SMALL, OutputTensor=_SMALL),
             row(L.LEVEL_3_0, 4, InputTensor=_64, OutputTensor=_64),
             row(L.LEVEL_3_1, (1, 8), InputTensor=_64, OutputTensor=_64),
             row(L.LEVEL_4_1, (1, 8), InputTensor=_ALL, OutputTensor=_ALL)),
}


def cast_formula(source: DataType, target: DataType) -> str:
    """The identity from `source` to `target` in the engine's primitives (the module docstring's rules)."""
    if source.is_float and not target.is_float:
        return "saturate(trunc(x))"
    if target.is_float and not source.is_float:
        return "to_float(x)"
    if source != target and DataType.FLOAT64 in (source, target):
        return "to_float(x)"   # FLOAT64 to or from a narrower float: a conversion (the gpu, without f64, refuses it)
    return "x"


@dataclass(frozen=True)
class CopyInfo(GeneratorInfo):
    """A copy operator's row: a GeneratorInfo whose support table is this module's."""

    @property
    def support(self) -> SupportTable:
        return SUPPORT[self.operator_type]


def _cast(desc: Any) -> str:
    return cast_formula(desc.input_tensor.data_type, desc.output_tensor.data_type)


INFO: dict[OperatorType, CopyInfo] = {
    T.CAST: CopyInfo(T.CAST, _cast, (), (("InputTensor", "x"),)),
}


@dataclass(frozen=True)
class CastOperatorDesc(GeneratorOperatorDesc):
    """DML_CAST_OPERATOR_DESC (FL 1_0): OutputTensor = InputTensor converted to OutputTensor's DataType."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.CAST
    INFO: ClassVar[CopyInfo] = INFO[T.CAST]
    input_tensor: TensorDesc
    output_tensor: TensorDesc

    def __post_init__(self) -> None:
        if self.input_tensor is None:   # required, unlike a generator's optional InputTensor
            raise ValidationError(f"{self.OPERATOR_TYPE.dml_name}: InputTensor is None; it must be a TensorDesc")
        super().__post_init__()

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table at `level`, same DimensionCount and Sizes."""
        operator = self.label
        self.check_tensors()
        check_same_rank(operator, "InputTensor", self.input_tensor, "OutputTensor", self.output_tensor)
        if self.input_tensor.sizes != self.output_tensor.sizes:
            raise ValidationError(f"{operator}: InputTensor.Sizes is {list(self.input_tensor.sizes)}; it must equal "
                                  f"OutputTensor.Sizes {list(self.output_tensor.sizes)}")
        check_support(self.INFO.support, operator, level, self.present_tensors())

    def formula_types(self) -> dict[str, DataType]:
        return {"x": self.input_tensor.data_type}


#: Operator type -> descriptor class.
CLASSES: dict[OperatorType, type[GeneratorOperatorDesc]] = {cls.OPERATOR_TYPE: cls for cls in (CastOperatorDesc,)}
