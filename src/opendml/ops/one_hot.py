"""DML_OPERATOR_ONE_HOT: along one axis, every sequence of the output is OffValue except at the position its index
names, which is OnValue."""

from __future__ import annotations

from dataclasses import dataclass

from ..convert import to_uint
from ..errors import ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

_INDEX_TYPES = (I64, I32, U64, U32)
_ELEVEN = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)

#: The ONE_HOT page's support table.
SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), IndicesTensor=_INDEX_TYPES, ValuesTensor=_ELEVEN, OutputTensor=_ELEVEN),
    row(L.LEVEL_3_0, (1, 8), IndicesTensor=_INDEX_TYPES, ValuesTensor=_EIGHT, OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, IndicesTensor=(U32,), ValuesTensor=_EIGHT, OutputTensor=_EIGHT),
    row(L.LEVEL_2_0, 4, IndicesTensor=(U32,), ValuesTensor=(F32, F16), OutputTensor=(F32, F16)),
)


@dataclass(frozen=True)
class OneHotOperatorDesc(OperatorDesc):
    """DML_ONE_HOT_OPERATOR_DESC: IndicesTensor.Sizes = OutputTensor.Sizes with 1 at Axis; the output's size D
    along Axis is the depth. OffValue is the values tensor's element 0, OnValue its element 1 along its
    highest-numbered dimension of size > 1 (DECISIONS 16). A negative index of a signed type counts from the end;
    an index still outside [0, D) leaves its whole sequence at OffValue (DECISIONS 15).

    >>> indices = TensorDesc(DataType.UINT32, [3, 1])                   # [[0], [3], [2]]
    >>> values = TensorDesc(DataType.FLOAT32, [2])                      # [off, on]
    >>> OneHotOperatorDesc(indices, values, TensorDesc(DataType.FLOAT32, [3, 4]), axis=1)
    OneHotOperatorDesc(indices_tensor=TensorDesc(...), ...)
    """

    indices_tensor: TensorDesc
    values_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    OPERATOR_TYPE = OperatorType.ONE_HOT

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "IndicesTensor", self.indices_tensor)
        require_tensor(operator, "ValuesTensor", self.values_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("IndicesTensor", self.indices_tensor), ("ValuesTensor", self.values_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def depth(self) -> int:
        """D: the output's size along Axis, the length of every sequence."""
        return self.output_tensor.sizes[self.axis]

    @property
    def on_value_offset(self) -> int:
        """Element offset of OnValue in the values tensor: coordinate 1 along its highest-numbered dimension of
        size > 1, 0 elsewhere (OffValue is at offset 0)."""
        values = self.values_tensor
        dim = max(index for index, size in enumerate(values.sizes) if size > 1)
        return values.element_strides[dim]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        indices, values, result = self.indices_tensor, self.values_tensor, self.output_tensor
        rank = indices.dimension_count
        for name, tensor in (("ValuesTensor", values), ("OutputTensor", result)):
            check_same_rank(operator, name, tensor, "IndicesTensor", indices)
        check_same_data_type(operator, "OutputTensor", result, "ValuesTensor", values)
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for IndicesTensor "
                                  f"of {rank} dimensions")
        check_support(SUPPORT, operator, level,
                      {"IndicesTensor": indices, "ValuesTensor": values, "OutputTensor": result})
        if values.element_count < 2:
            raise ValidationError(f"{operator}: ValuesTensor has {values.element_count} element (Sizes "
                                  f"{list(values.sizes)}); it must have at least 2, OffValue and OnValue")
        expected = [1 if dim == self.axis else size for dim, size in enumerate(result.sizes)]
        if list(indices.sizes) != expected:
            raise ValidationError(f"{operator}: IndicesTensor.Sizes is {list(indices.sizes)}; with OutputTensor.Sizes "
                                  f"{list(result.sizes)} and Axis {self.axis} it must be {expected}")
