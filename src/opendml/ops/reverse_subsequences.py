"""DML_OPERATOR_REVERSE_SUBSEQUENCES: every sequence along Axis reversed within its length, the rest copied.

The page's rules: InputTensor, SequenceLengthsTensor and OutputTensor have the same DimensionCount; InputTensor and
OutputTensor the same DataType and Sizes; SequenceLengthsTensor InputTensor's Sizes but 1 along Axis (one UINT32
length per sequence); Axis below DimensionCount. OutputTensor[.., k, ..] = InputTensor[.., L - 1 - k, ..] for k < L,
InputTensor[.., k, ..] otherwise, L the sequence's length clamped to the size along Axis (the page: a longer length
"behaves as if the value were clamped to the maximum"; 0 and 1 copy the sequence). Elements are moved as raw bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_uint
from ..errors import ValidationError
from ..support import F16, F32, I8, I16, I32, U8, U16, U32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)

#: The page's "Tensor support", one row per level.
SUPPORT: SupportTable = (
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, SequenceLengthsTensor=(U32,), OutputTensor=_EIGHT),
    row(L.LEVEL_3_0, (4, 5), InputTensor=_EIGHT, SequenceLengthsTensor=(U32,), OutputTensor=_EIGHT),
)


@dataclass(frozen=True)
class ReverseSubsequencesOperatorDesc(OperatorDesc):
    """DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC (FL 2_1): each sequence along Axis reversed within its length."""

    input_tensor: TensorDesc
    sequence_lengths_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.REVERSE_SUBSEQUENCES
    KERNEL_MODULE: ClassVar[str] = "reverse_subsequences"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "SequenceLengthsTensor", self.sequence_lengths_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("SequenceLengthsTensor", self.sequence_lengths_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table and its constraints (module docstring)."""
        operator = self.label
        self.check_tensors()
        source, lengths, result = self.input_tensor, self.sequence_lengths_tensor, self.output_tensor
        rank = source.dimension_count
        check_same_rank(operator, "OutputTensor", result, "InputTensor", source)
        check_same_rank(operator, "SequenceLengthsTensor", lengths, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)
        check_support(SUPPORT, operator, level, {"InputTensor": source, "SequenceLengthsTensor": lengths,
                                                 "OutputTensor": result})
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for InputTensor "
                                  f"of {rank} dimensions")
        if list(result.sizes) != list(source.sizes):
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must equal "
                                  f"InputTensor.Sizes ({list(source.sizes)})")
        expected = [1 if dim == self.axis else size for dim, size in enumerate(source.sizes)]
        if list(lengths.sizes) != expected:
            raise ValidationError(f"{operator}: SequenceLengthsTensor.Sizes is {list(lengths.sizes)}; it must be "
                                  f"{expected} (InputTensor.Sizes with 1 along Axis {self.axis})")
