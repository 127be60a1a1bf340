"""DML_OPERATOR_REDUCE: reduces the input over one or more axes with one of 12 functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_enum, to_uint_list
from ..errors import ValidationError
from ..support import F16, F32, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType, ReduceFunction
from .base import OperatorDesc, check_axes, check_same_data_type, check_same_rank, require_tensor

R = ReduceFunction
_ARG_INDEX_TYPES = (I64, I32, U64, U32)
_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_TEN = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_FLOATS = (F32, F16)
_SUM_TYPES_5_0 = (F32, F16, I64, I32, U64, U32)





_ARG_TABLE: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=_TEN, OutputTensor=_ARG_INDEX_TYPES),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, OutputTensor=_ARG_INDEX_TYPES),
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, OutputTensor=(U32,)),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=(U32,)),
)
_FLOAT_ONLY_TABLE: SupportTable = (
    row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=_FLOATS),
)
_NORM_TABLE: SupportTable = (
    row(L.LEVEL_5_0, (1, 8), InputTensor=_SUM_TYPES_5_0, OutputTensor=_SUM_TYPES_5_0),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=_FLOATS),
)
_MIN_MAX_TABLE: SupportTable = (
    row(L.LEVEL_5_0, (1, 8), InputTensor=_TEN, OutputTensor=_TEN),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensor=(F32, F16, I32, U32), OutputTensor=(F32, F16, I32, U32)),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=_FLOATS),
)
_SUM_TABLE: SupportTable = (
    row(L.LEVEL_5_0, (1, 8), InputTensor=_SUM_TYPES_5_0, OutputTensor=_SUM_TYPES_5_0),
    row(L.LEVEL_3_0, (1, 8), InputTensor=(F32, F16, I32, U32), OutputTensor=(F32, F16, I32, U32)),
    row(L.LEVEL_2_1, 4, InputTensor=(F32, F16, I32, U32), OutputTensor=(F32, F16, I32, U32)),
    row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, OutputTensor=_FLOATS),
)

#: The REDUCE page's support tables, per function.
SUPPORT: dict[ReduceFunction, SupportTable] = {
    R.ARGMAX: _ARG_TABLE, R.ARGMIN: _ARG_TABLE,
    R.AVERAGE: _FLOAT_ONLY_TABLE, R.L2: _FLOAT_ONLY_TABLE, R.LOG_SUM: _FLOAT_ONLY_TABLE,
    R.LOG_SUM_EXP: _FLOAT_ONLY_TABLE,
    R.L1: _NORM_TABLE, R.SUM_SQUARE: _NORM_TABLE,
    R.MIN: _MIN_MAX_TABLE, R.MAX: _MIN_MAX_TABLE,
    R.MULTIPLY: _SUM_TABLE, R.SUM: _SUM_TABLE,
}

_INDEX_LIMITS = {U32: 2**32 - 1, I32: 2**31 - 1, U64: 2**64 - 1, I64: 2**63 - 1}


@dataclass(frozen=True)
class ReduceOperatorDesc(OperatorDesc):
    """DML_REDUCE_OPERATOR_DESC: OutputTensor.Sizes = InputTensor.Sizes with 1 on every axis in Axes.

    >>> x = TensorDesc(DataType.FLOAT32, [3, 3])
    >>> ReduceOperatorDesc(ReduceFunction.SUM, x, TensorDesc(DataType.FLOAT32, [1, 3]), axes=[0])  # column sums
    ReduceOperatorDesc(function=<ReduceFunction.SUM: 10>, ...)
    """

    function: ReduceFunction
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: tuple[int, ...]

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.REDUCE

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        object.__setattr__(self, "function", to_enum(operator, "Function", self.function, ReduceFunction,
                                                      "DML_REDUCE_FUNCTION_"))
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axes", to_uint_list(operator, "Axes", self.axes))

    @property
    def label(self) -> str:
        return f"{self.OPERATOR_TYPE.dml_name} (Function {self.function.name})"

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, result = self.input_tensor, self.output_tensor
        check_axes(operator, self.axes, source.dimension_count, "InputTensor")
        check_support(SUPPORT[self.function], operator, level,
                      {"InputTensor": source, "OutputTensor": result})
        check_reduced_output(operator, source, result, self.axes)
        if self.function in (R.ARGMAX, R.ARGMIN):
            check_index_fits(operator, result, self.reduced_element_count)
        else:
            check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)

    @property
    def reduced_element_count(self) -> int:
        """N: the number of input elements reduced into each output element."""
        return reduced_element_count(self.input_tensor.sizes, self.axes)


def reduced_sizes(sizes: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The output sizes of a reduction: 1 on every reduced axis."""
    return tuple(1 if axis in axes else size for axis, size in enumerate(sizes))


def reduced_element_count(sizes: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """N: the number of input elements reduced into each output element."""
    count = 1
    for axis in axes:
        count *= sizes[axis]
    return count


def check_reduced_output(operator: str, source: TensorDesc, result: TensorDesc, axes: tuple[int, ...]) -> None:
    """OutputTensor has InputTensor's rank and sizes, with 1 on every axis in Axes (REDUCE, ARGMIN, ARGMAX)."""
    check_same_rank(operator, "OutputTensor", result, "InputTensor", source)
    expected = list(reduced_sizes(source.sizes, axes))
    if list(result.sizes) != expected:
        raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; with Axes "
                              f"{list(axes)} it must be {expected}")


def check_index_fits(operator: str, result: TensorDesc, count: int) -> None:
    """An index OutputTensor's type holds the largest index of a block of `count` elements, count - 1
    (DECISIONS 10; REDUCE's ARGMAX/ARGMIN, ARGMIN, ARGMAX)."""
    largest = count - 1
    if largest > _INDEX_LIMITS[result.data_type]:
        raise ValidationError(f"{operator}: OutputTensor.DataType {result.data_type.name} cannot hold the "
                              f"largest index {largest}; use a wider index type")
