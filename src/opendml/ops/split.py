"""DML_OPERATOR_SPLIT: splits the input along one axis into consecutive slices, one per output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import SupportsIndex

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

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)

#: The SPLIT page's support table. "OutputTensors" stands for every element of the array.
SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=(F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8),
        OutputTensors=(F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, OutputTensors=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, OutputTensors=_EIGHT),
    row(L.LEVEL_1_0, 4, InputTensor=(F32, F16, I32, I16, U32, U16), OutputTensors=(F32, F16, I32, I16, U32, U16)),
)


@dataclass(frozen=True)
class SplitOperatorDesc(OperatorDesc):
    """DML_SPLIT_OPERATOR_DESC: output i is the input's slice [offset_i, offset_i + OutputTensors[i].Sizes[Axis])
    along Axis (offset_i: the sizes of the outputs before it); every other size equals the input's.

    >>> x = TensorDesc(DataType.FLOAT32, [6])
    >>> SplitOperatorDesc(x, [TensorDesc(DataType.FLOAT32, [2])] * 3, axis=0)  # 1..6 -> [1, 2], [3, 4], [5, 6]
    SplitOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    input_tensor: TensorDesc
    output_tensors: tuple[TensorDesc, ...]
    axis: int

    OPERATOR_TYPE = OperatorType.SPLIT

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        outputs = self.output_tensors
        if isinstance(outputs, TensorDesc) or not isinstance(outputs, Sequence) or isinstance(outputs, str):
            raise ValidationError(f"{operator}: OutputTensors is {type(outputs).__name__}; it must be a list of "
                                  f"TensorDesc")
        for index, output in enumerate(outputs):
            require_tensor(operator, f"OutputTensors[{index}]", output)
        object.__setattr__(self, "output_tensors", tuple(outputs))
        object.__setattr__(self, "axis", uint_value(operator, "Axis", self.axis))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [(f"OutputTensors[{index}]", output) for index, output in enumerate(self.output_tensors)]

    @property
    def output_count(self) -> int:
        """OutputCount."""
        return len(self.output_tensors)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each output's slice starts along Axis."""
        starts, position = [], 0
        for output in self.output_tensors:
            starts.append(position)
            position += output.sizes[self.axis]
        return tuple(starts)

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        if not self.output_tensors:
            raise ValidationError(f"{operator}: OutputCount is 0; it must be at least 1")
        self.check_tensors()
        source = self.input_tensor
        rank = source.dimension_count
        for name, output in self.output_slots():
            check_same_rank(operator, name, output, "InputTensor", source)
            check_same_data_type(operator, name, output, "InputTensor", source)
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for InputTensor "
                                  f"of {rank} dimensions")
        check_support(per_element(SUPPORT, "OutputTensors", self.output_count), operator, level,
                      {"InputTensor": source, **dict(self.output_slots())})
        axis = self.axis
        for name, output in self.output_slots():
            expected = [size if dim != axis else output.sizes[axis] for dim, size in enumerate(source.sizes)]
            if list(output.sizes) != expected:
                raise ValidationError(f"{operator}: {name}.Sizes is {list(output.sizes)}; outside Axis {axis} it "
                                      f"must equal InputTensor.Sizes {list(source.sizes)}")
        total = sum(output.sizes[axis] for output in self.output_tensors)
        if total != source.sizes[axis]:
            parts = " + ".join(str(output.sizes[axis]) for output in self.output_tensors)
            raise ValidationError(f"{operator}: the OutputTensors' sizes along Axis {axis} add up to {parts} = "
                                  f"{total}; they must add up to InputTensor.Sizes[{axis}] ({source.sizes[axis]})")


def uint_value(operator: str, field: str, value: object) -> int:
    """A UINT field as an int, or a ValidationError naming the field."""
    if isinstance(value, bool) or not isinstance(value, SupportsIndex) or not 0 <= int(value) < 2**32:
        raise ValidationError(f"{operator}: {field} is {value!r}; it must be an integer in [0, 2^32)")
    return int(value)
