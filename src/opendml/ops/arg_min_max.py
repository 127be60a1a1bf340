"""DML_OPERATOR_ARGMIN and DML_OPERATOR_ARGMAX: the index of the smallest (largest) element of each reduced block,
the first or the last one on ties as AxisDirection says.

Both pages describe the same fields, rules and support table; with AxisDirection INCREASING each operator is
REDUCE with function ARGMIN (ARGMAX), from feature level 3_0. The output rules (REDUCE's output sizes, an index
type that holds the largest index) are REDUCE's own checks, shared through ops/reduce.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_enum, to_uint_list
from ..support import F16, F32, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import AxisDirection, FeatureLevel, OperatorType, ReduceFunction
from .base import OperatorDesc, check_axes, require_tensor
from .reduce import ReduceOperatorDesc, check_index_fits, check_reduced_output, reduced_element_count

_INDEX_TYPES = (I64, I32, U64, U32)

#: Both pages' tensor support table (DML_ARGMIN_OPERATOR_DESC and DML_ARGMAX_OPERATOR_DESC list the same rows).
SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=(F32, F16, I64, I32, I16, I8, U64, U32, U16, U8), OutputTensor=_INDEX_TYPES),
    row(L.LEVEL_3_0, (1, 8), InputTensor=(F32, F16, I32, I16, I8, U32, U16, U8), OutputTensor=_INDEX_TYPES),
)


@dataclass(frozen=True)
class _ArgMinMaxOperatorDesc(OperatorDesc):
    """The fields and rules ARGMIN and ARGMAX share (DML_ARGMIN_OPERATOR_DESC, DML_ARGMAX_OPERATOR_DESC)."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: tuple[int, ...]
    axis_direction: AxisDirection = AxisDirection.INCREASING

    OPERATOR_TYPE: ClassVar[OperatorType]
    #: The REDUCE function this operator is with AxisDirection INCREASING.
    REDUCE_FUNCTION: ClassVar[ReduceFunction]

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axes", to_uint_list(operator, "Axes", self.axes))
        object.__setattr__(self, "axis_direction", to_enum(operator, "AxisDirection", self.axis_direction,
                                                           AxisDirection, "DML_AXIS_DIRECTION_"))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, result = self.input_tensor, self.output_tensor
        check_axes(operator, self.axes, source.dimension_count, "InputTensor")
        check_support(SUPPORT, operator, level, {"InputTensor": source, "OutputTensor": result})
        check_reduced_output(operator, source, result, self.axes)
        check_index_fits(operator, result, self.reduced_element_count)

    @property
    def reduced_element_count(self) -> int:
        """N: the number of input elements reduced into each output element."""
        return reduced_element_count(self.input_tensor.sizes, self.axes)

    @property
    def decreasing(self) -> bool:
        """Whether ties go to the last index (AxisDirection DECREASING)."""
        return self.axis_direction is AxisDirection.DECREASING

    def reduce_equivalent(self) -> ReduceOperatorDesc:
        """The REDUCE descriptor with the same result under AxisDirection INCREASING (both pages' remarks); the
        kernels run it with the direction as an option."""
        return ReduceOperatorDesc(self.REDUCE_FUNCTION, self.input_tensor, self.output_tensor, self.axes)


@dataclass(frozen=True)
class ArgMinOperatorDesc(_ArgMinMaxOperatorDesc):
    """DML_ARGMIN_OPERATOR_DESC: the index of the minimum of each block, row-major over the reduced axes in
    increasing dimension order; OutputTensor.Sizes = InputTensor.Sizes with 1 on every axis in Axes.

    >>> x = TensorDesc(DataType.FLOAT32, [5])
    >>> ArgMinOperatorDesc(x, TensorDesc(DataType.UINT32, [1]), [0], "DECREASING")   # {1,2,3,2,1} -> 4
    ArgMinOperatorDesc(input_tensor=..., axis_direction=<AxisDirection.DECREASING: 1>)
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.ARGMIN
    REDUCE_FUNCTION: ClassVar[ReduceFunction] = ReduceFunction.ARGMIN


@dataclass(frozen=True)
class ArgMaxOperatorDesc(_ArgMinMaxOperatorDesc):
    """DML_ARGMAX_OPERATOR_DESC: the index of the maximum of each block, row-major over the reduced axes in
    increasing dimension order; OutputTensor.Sizes = InputTensor.Sizes with 1 on every axis in Axes.

    >>> x = TensorDesc(DataType.FLOAT32, [5])
    >>> ArgMaxOperatorDesc(x, TensorDesc(DataType.UINT32, [1]), [0], "DECREASING")   # {3,2,1,2,3} -> 4
    ArgMaxOperatorDesc(input_tensor=..., axis_direction=<AxisDirection.DECREASING: 1>)
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.ARGMAX
    REDUCE_FUNCTION: ClassVar[ReduceFunction] = ReduceFunction.ARGMAX

