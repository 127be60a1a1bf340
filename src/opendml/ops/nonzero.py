"""DML_OPERATOR_NONZERO_COORDINATES: the coordinates of the input's nonzero elements, in ascending element index
(row-major order of the input's logical elements), one row per element, and how many there are.

OutputCoordinatesTensor is {1, .., 1, M, N}: M rows, the input's element count (room for every element), each the
last N coordinates of one nonzero element (N from the input's effective rank, its DimensionCount without leading
1s, to its DimensionCount); OutputCountTensor (all sizes 1, UINT32) holds their number. Only the first count rows
are written: the rest are left as they were (the page: "undefined"; README, Rulings). Nonzero means `!= 0`: for
FLOAT32 and FLOAT16 both +0.0 and -0.0 are zero (the page) and NaN is nonzero, so every kernel tests the raw bits
with the sign bit masked off (`NONZERO_MASK`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ValidationError
from ..support import F16, F32, I8, I16, I32, U8, U16, U32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_rank, require_tensor

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)

#: The NONZERO_COORDINATES page's support table (introduced at 3_0).
SUPPORT: SupportTable = (
    row(L.LEVEL_3_0, (4, 5), InputTensor=_EIGHT, OutputCountTensor=(U32,), OutputCoordinatesTensor=(U32,)),
)

#: The bits that make an element nonzero: every bit but the sign for the float types (+0.0 and -0.0 are zero, NaN
#: is not), every bit for the integers.
NONZERO_MASK = {DataType.FLOAT32: 0x7FFFFFFF, DataType.FLOAT16: 0x7FFF}


def nonzero_mask(data_type: DataType) -> int:
    """The mask of `data_type`'s raw bits (an unsigned integer of its width) that is nonzero exactly where the
    element is."""
    return NONZERO_MASK.get(data_type, (1 << (8 * data_type.element_size)) - 1)


def effective_rank(sizes: tuple[int, ...] | list[int]) -> int:
    """The page's effective rank: the DimensionCount without the leading dimensions of size 1."""
    for dim, size in enumerate(sizes):
        if size != 1:
            return len(sizes) - dim
    return 0


def coordinates_sizes(input_sizes: tuple[int, ...] | list[int], columns: int | None = None) -> list[int]:
    """OutputCoordinatesTensor.Sizes for an input of these sizes: {1, .., 1, M, N} of the input's DimensionCount,
    N = `columns` (default: the DimensionCount, as DirectMLX's NonZeroCoordinates makes it)."""
    rank = len(input_sizes)
    return [1] * (rank - 2) + [math.prod(input_sizes), rank if columns is None else columns]


@dataclass(frozen=True)
class NonzeroCoordinatesOperatorDesc(OperatorDesc):
    """DML_NONZERO_COORDINATES_OPERATOR_DESC.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 2, 4])
    >>> NonzeroCoordinatesOperatorDesc(x, TensorDesc(DataType.UINT32, [1, 1, 1, 1]),
    ...                                TensorDesc(DataType.UINT32, [1, 1, 8, 3]))
    NonzeroCoordinatesOperatorDesc(input_tensor=..., output_coordinates_tensor=...)
    """

    input_tensor: TensorDesc
    output_count_tensor: TensorDesc
    output_coordinates_tensor: TensorDesc

    OPERATOR_TYPE = OperatorType.NONZERO_COORDINATES
    KERNEL_MODULE: ClassVar[str] = "nonzero"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputCountTensor", self.output_count_tensor)
        require_tensor(operator, "OutputCoordinatesTensor", self.output_coordinates_tensor)

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputCountTensor", self.output_count_tensor),
                ("OutputCoordinatesTensor", self.output_coordinates_tensor)]

    @property
    def columns(self) -> int:
        """N: the coordinates in each row (the input's last N dimensions')."""
        return self.output_coordinates_tensor.sizes[-1]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, count, coordinates = self.input_tensor, self.output_count_tensor, self.output_coordinates_tensor
        for name, tensor in (("OutputCountTensor", count), ("OutputCoordinatesTensor", coordinates)):
            check_same_rank(operator, name, tensor, "InputTensor", source)
        check_support(SUPPORT, operator, level, {"InputTensor": source, "OutputCountTensor": count,
                                                 "OutputCoordinatesTensor": coordinates})
        if any(size != 1 for size in count.sizes):
            raise ValidationError(f"{operator}: OutputCountTensor.Sizes is {list(count.sizes)}; it must be all 1 (a "
                                  f"scalar)")
        sizes = list(source.sizes)
        low, rank = max(1, effective_rank(sizes)), len(sizes)
        if list(coordinates.sizes[:-1]) != coordinates_sizes(sizes)[:-1] or not low <= self.columns <= rank:
            raise ValidationError(
                f"{operator}: OutputCoordinatesTensor.Sizes is {list(coordinates.sizes)}; with InputTensor.Sizes "
                f"{sizes} ({math.prod(sizes)} elements, effective rank {effective_rank(sizes)}) it must be "
                f"[{', '.join(map(str, coordinates_sizes(sizes)[:-1]))}, N] with N from {low} to {rank}")
