"""DML_OPERATOR_SPLIT: splits the input along one axis into consecutive slices, one per output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..convert import to_sequence, to_uint
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
        object.__setattr__(self, "output_tensors", tensor_array(operator, "OutputTensors", self.output_tensors))
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))

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
        return slice_offsets(self.output_tensors, self.axis)

    def validate(self, level: FeatureLevel) -> None:
        check_slices(self, level, SUPPORT, "InputTensor", self.input_tensor, "OutputTensors", self.output_tensors,
                     self.axis)


def tensor_array(operator: str, field: str, value: object) -> tuple[TensorDesc, ...]:
    """A TensorDesc array field (SPLIT's OutputTensors, JOIN's InputTensors) as a tuple, or a ValidationError
    naming the field or its element."""
    items = to_sequence(operator, field, value, what="a list of TensorDesc")
    return tuple(require_tensor(operator, f"{field}[{index}]", tensor) for index, tensor in enumerate(items))


def slice_offsets(parts: Sequence[TensorDesc], axis: int) -> tuple[int, ...]:
    """Where each part's slice of the whole starts along Axis: the sizes of the parts before it."""
    starts, position = [], 0
    for part in parts:
        starts.append(position)
        position += part.sizes[axis]
    return tuple(starts)


def check_slices(desc: OperatorDesc, level: FeatureLevel, table: SupportTable, whole_name: str, whole: TensorDesc,
                 parts_name: str, parts: Sequence[TensorDesc], axis: int) -> None:
    """The rules SPLIT and JOIN share, with the roles of the whole tensor and of the array of parts (SPLIT: the
    input and its OutputTensors; JOIN: the output and its InputTensors): at least one part, the shared tensor
    rules, each part of the whole's rank and type, Axis in range, the support table (naming each part), every size
    but Axis's the whole's, and the parts' sizes along Axis adding up to the whole's."""
    operator = desc.label
    if not parts:
        raise ValidationError(f"{operator}: {parts_name[:-len('Tensors')]}Count is 0; it must be at least 1")
    desc.check_tensors()
    named = [(f"{parts_name}[{index}]", part) for index, part in enumerate(parts)]
    for name, part in named:
        check_same_rank(operator, name, part, whole_name, whole)
        check_same_data_type(operator, name, part, whole_name, whole)
    rank = whole.dimension_count
    if not axis < rank:
        raise ValidationError(f"{operator}: Axis is {axis}; it must be in [0, {rank - 1}] for {whole_name} "
                              f"of {rank} dimensions")
    check_support(per_element(table, parts_name, len(parts)), operator, level,
                  {**dict(desc.input_slots()), **dict(desc.output_slots())})
    for name, part in named:
        expected = [size if dim != axis else part.sizes[axis] for dim, size in enumerate(whole.sizes)]
        if list(part.sizes) != expected:
            raise ValidationError(f"{operator}: {name}.Sizes is {list(part.sizes)}; outside Axis {axis} it "
                                  f"must equal {whole_name}.Sizes {list(whole.sizes)}")
    total = sum(part.sizes[axis] for part in parts)
    if total != whole.sizes[axis]:
        addends = " + ".join(str(part.sizes[axis]) for part in parts) + " = " if len(parts) <= 16 else ""
        raise ValidationError(f"{operator}: the {parts_name}' sizes along Axis {axis} add up to {addends}{total}; "
                              f"they must add up to {whole_name}.Sizes[{axis}] ({whole.sizes[axis]})")

