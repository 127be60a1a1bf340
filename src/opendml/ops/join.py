"""DML_OPERATOR_JOIN: concatenates the input tensors along one axis into the output (SPLIT's inverse)."""

from __future__ import annotations

from dataclasses import dataclass

from ..convert import to_uint
from ..support import (
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    L,
    SupportTable,
    row,
)
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, require_tensor
from .split import check_slices, slice_offsets, tensor_array

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_ELEVEN = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)

#: The JOIN page's support table. "InputTensors" stands for every element of the array.
SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensors=_ELEVEN, OutputTensor=_ELEVEN),
    row(L.LEVEL_3_0, (4, 5), InputTensors=_EIGHT, OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensors=_EIGHT, OutputTensor=_EIGHT),
    row(L.LEVEL_1_0, 4, InputTensors=(F32, F16, I32, I16, U32, U16), OutputTensor=(F32, F16, I32, I16, U32, U16)),
)


@dataclass(frozen=True)
class JoinOperatorDesc(OperatorDesc):
    """DML_JOIN_OPERATOR_DESC: input i fills the output's slice [offset_i, offset_i + InputTensors[i].Sizes[Axis])
    along Axis (offset_i: the sizes of the inputs before it); every other size equals the output's.

    >>> parts = [TensorDesc(DataType.FLOAT32, [3]), TensorDesc(DataType.FLOAT32, [2])]
    >>> JoinOperatorDesc(parts, TensorDesc(DataType.FLOAT32, [5]), axis=0)  # [1, 2, 3], [4, 5] -> [1, 2, 3, 4, 5]
    JoinOperatorDesc(input_tensors=(TensorDesc(...), ...), ...)
    """

    input_tensors: tuple[TensorDesc, ...]
    output_tensor: TensorDesc
    axis: int

    OPERATOR_TYPE = OperatorType.JOIN

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        object.__setattr__(self, "input_tensors", tensor_array(operator, "InputTensors", self.input_tensors))
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [(f"InputTensors[{index}]", tensor) for index, tensor in enumerate(self.input_tensors)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def input_count(self) -> int:
        """InputCount."""
        return len(self.input_tensors)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each input's slice of the output starts along Axis."""
        return slice_offsets(self.input_tensors, self.axis)

    def validate(self, level: FeatureLevel) -> None:
        check_slices(self, level, SUPPORT, "OutputTensor", self.output_tensor, "InputTensors", self.input_tensors,
                     self.axis)
