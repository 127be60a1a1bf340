"""DML_OPERATOR_JOIN: concatenates the input tensors along one axis into the output (SPLIT's inverse)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ValidationError
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
    check_support,
    per_element,
    row,
)
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .split import uint_value

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
        inputs = self.input_tensors
        if isinstance(inputs, TensorDesc) or not isinstance(inputs, Sequence) or isinstance(inputs, str):
            raise ValidationError(f"{operator}: InputTensors is {type(inputs).__name__}; it must be a list of "
                                  f"TensorDesc")
        for index, tensor in enumerate(inputs):
            require_tensor(operator, f"InputTensors[{index}]", tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "input_tensors", tuple(inputs))
        object.__setattr__(self, "axis", uint_value(operator, "Axis", self.axis))

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
        starts, position = [], 0
        for tensor in self.input_tensors:
            starts.append(position)
            position += tensor.sizes[self.axis]
        return tuple(starts)

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        if not self.input_tensors:
            raise ValidationError(f"{operator}: InputCount is 0; it must be at least 1")
        self.check_tensors()
        target = self.output_tensor
        rank = target.dimension_count
        inputs = [(name, tensor) for name, tensor in self.input_slots() if tensor is not None]
        for name, tensor in inputs:
            check_same_rank(operator, name, tensor, "OutputTensor", target)
            check_same_data_type(operator, name, tensor, "OutputTensor", target)
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for OutputTensor "
                                  f"of {rank} dimensions")
        check_support(per_element(SUPPORT, "InputTensors", self.input_count), operator, level,
                      {**dict(inputs), "OutputTensor": target})
        axis = self.axis
        for name, tensor in inputs:
            expected = [size if dim != axis else tensor.sizes[axis] for dim, size in enumerate(target.sizes)]
            if list(tensor.sizes) != expected:
                raise ValidationError(f"{operator}: {name}.Sizes is {list(tensor.sizes)}; outside Axis {axis} it "
                                      f"must equal OutputTensor.Sizes {list(target.sizes)}")
        total = sum(tensor.sizes[axis] for tensor in self.input_tensors)
        if total != target.sizes[axis]:
            parts = " + ".join(str(tensor.sizes[axis]) for tensor in self.input_tensors)
            raise ValidationError(f"{operator}: the InputTensors' sizes along Axis {axis} add up to {parts} = "
                                  f"{total}; they must add up to OutputTensor.Sizes[{axis}] ({target.sizes[axis]})")
