"""DML_OPERATOR_CUMULATIVE_SUMMATION and DML_OPERATOR_CUMULATIVE_PRODUCT: the running sum (product) of the input's
elements along one axis, walked by ascending or descending index as AxisDirection says; with HasExclusiveSum
(HasExclusiveProduct) each output element holds the tally of the elements before it (the first holds 0, or 1), not
including its own.

Both pages describe the same fields and rules (the product's InputTensor text, copied from BATCH_NORMALIZATION's,
aside). The tally is taken in order along the axis, one element after the other, so every backend gives the same
bits: FLOAT32 and FLOAT16 accumulate in FLOAT32 (FLOAT16 inputs widened exactly, each output rounded once to
FLOAT16), integers in their own type, wrapping modulo 2^bits as DML's integer arithmetic does (README, Rulings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_bool, to_enum, to_uint
from ..errors import ValidationError
from ..support import F16, F32, I32, I64, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import AxisDirection, FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

_SIX = (F32, F16, I64, I32, U64, U32)
_FOUR = (F32, F16, I32, U32)

#: The CUMULATIVE_SUMMATION page's support tables (the newest page: INT32 where an older one listed UINT16).
SUMMATION_SUPPORT: SupportTable = (
    row(L.LEVEL_5_0, (1, 8), InputTensor=_SIX, OutputTensor=_SIX),
    row(L.LEVEL_4_0, (1, 8), InputTensor=_FOUR, OutputTensor=_FOUR),
    row(L.LEVEL_2_1, 4, InputTensor=_FOUR, OutputTensor=_FOUR),
)
#: The CUMULATIVE_PRODUCT page's support tables (introduced at 3_1).
PRODUCT_SUPPORT: SupportTable = (
    row(L.LEVEL_5_0, (1, 8), InputTensor=_SIX, OutputTensor=_SIX),
    row(L.LEVEL_4_0, (1, 8), InputTensor=_FOUR, OutputTensor=_FOUR),
    row(L.LEVEL_3_1, 4, InputTensor=_FOUR, OutputTensor=_FOUR),
)


@dataclass(frozen=True)
class CumulativeOperatorDesc(OperatorDesc):
    """The fields and rules CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT share; `exclusive` is HasExclusiveSum or
    HasExclusiveProduct."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int
    axis_direction: AxisDirection = AxisDirection.INCREASING

    OPERATOR_TYPE: ClassVar[OperatorType]
    #: The DML name of the exclusive flag, and the tally's start (the identity of the operation).
    EXCLUSIVE_FIELD: ClassVar[str]
    IDENTITY: ClassVar[int]
    SUPPORT: ClassVar[SupportTable]
    KERNEL_MODULE: ClassVar[str] = "cumulative"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))
        object.__setattr__(self, "axis_direction", to_enum(operator, "AxisDirection", self.axis_direction,
                                                           AxisDirection, "DML_AXIS_DIRECTION_"))

    @property
    def exclusive(self) -> bool:
        """HasExclusiveSum / HasExclusiveProduct."""
        raise NotImplementedError

    @property
    def decreasing(self) -> bool:
        """Whether the tally walks the axis by descending index (AxisDirection DECREASING)."""
        return self.axis_direction is AxisDirection.DECREASING

    @property
    def is_product(self) -> bool:
        return self.OPERATOR_TYPE is OperatorType.CUMULATIVE_PRODUCT

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def in_place_pairs(self) -> tuple[tuple[str, str], ...]:
        """Both pages: "the output tensor is permitted to alias InputTensor during binding"."""
        return (("InputTensor", "OutputTensor"),)

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, result = self.input_tensor, self.output_tensor
        rank = source.dimension_count
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for InputTensor "
                                  f"of {rank} dimensions")
        check_same_rank(operator, "OutputTensor", result, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)
        check_support(self.SUPPORT, operator, level, {"InputTensor": source, "OutputTensor": result})
        if list(result.sizes) != list(source.sizes):
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must equal "
                                  f"InputTensor.Sizes ({list(source.sizes)})")


@dataclass(frozen=True)
class CumulativeSummationOperatorDesc(CumulativeOperatorDesc):
    """DML_CUMULATIVE_SUMMATION_OPERATOR_DESC: output[.., i, ..] = the sum of input[.., j, ..] for j before i along
    Axis (in AxisDirection's order), i included unless HasExclusiveSum.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 3, 4])
    >>> CumulativeSummationOperatorDesc(x, x, 3, "INCREASING", has_exclusive_sum=True)
    CumulativeSummationOperatorDesc(input_tensor=..., has_exclusive_sum=True)
    """

    has_exclusive_sum: bool = False

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.CUMULATIVE_SUMMATION
    EXCLUSIVE_FIELD: ClassVar[str] = "HasExclusiveSum"
    IDENTITY: ClassVar[int] = 0
    SUPPORT: ClassVar[SupportTable] = SUMMATION_SUPPORT

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "has_exclusive_sum", to_bool(self.label, "HasExclusiveSum", self.has_exclusive_sum))

    @property
    def exclusive(self) -> bool:
        return self.has_exclusive_sum


@dataclass(frozen=True)
class CumulativeProductOperatorDesc(CumulativeOperatorDesc):
    """DML_CUMULATIVE_PRODUCT_OPERATOR_DESC: output[.., i, ..] = the product of input[.., j, ..] for j before i
    along Axis (in AxisDirection's order), i included unless HasExclusiveProduct.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 1, 4])
    >>> CumulativeProductOperatorDesc(x, x, 3)
    CumulativeProductOperatorDesc(input_tensor=..., has_exclusive_product=False)
    """

    has_exclusive_product: bool = False

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.CUMULATIVE_PRODUCT
    EXCLUSIVE_FIELD: ClassVar[str] = "HasExclusiveProduct"
    IDENTITY: ClassVar[int] = 1
    SUPPORT: ClassVar[SupportTable] = PRODUCT_SUPPORT

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "has_exclusive_product",
                           to_bool(self.label, "HasExclusiveProduct", self.has_exclusive_product))

    @property
    def exclusive(self) -> bool:
        return self.has_exclusive_product
