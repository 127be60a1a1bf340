"""DML_OPERATOR_TOP_K and DML_OPERATOR_TOP_K1: the K largest (TOP_K1 with AxisDirection INCREASING: smallest)
elements of each sequence along Axis, their values in OutputValueTensor and their indices within the sequence in
OutputIndexTensor, sorted from the first selected to the last; equal values in ascending index order, whatever the
direction (both pages).

The order is a total order on each type (README, Rulings): integers by value; floats by value with -0.0 and +0.0
equal and every NaN equal to every other NaN and above +inf (as PyTorch's topk orders them: DECREASING selects NaNs
first, INCREASING last); equal elements by ascending index. `order_key` maps each element's bits to an integer
whose order is that order (larger first), so every kernel compares integers. A selected value is the input
element's own bits (a NaN's payload and a zero's sign kept).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..convert import to_enum, to_uint
from ..errors import ValidationError
from ..support import F16, F32, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import AxisDirection, DataType, FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_TEN = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)


def _rows(*rows: tuple[FeatureLevel, int | tuple[int, int], tuple[DataType, ...], tuple[DataType, ...]]
          ) -> SupportTable:
    return tuple(row(level, ranks, InputTensor=types, OutputValueTensor=types, OutputIndexTensor=indices)
                 for level, ranks, types, indices in rows)


#: TOP_K1's page's support tables (introduced at 2_1).
TOP_K1_SUPPORT: SupportTable = _rows(
    (L.LEVEL_5_0, (1, 8), _TEN, (U64, U32)),
    (L.LEVEL_3_1, (1, 8), _EIGHT, (U32,)),
    (L.LEVEL_2_1, 4, _EIGHT, (U32,)),
)
#: TOP_K's page's support tables (its Availability: introduced at 2_0, FLOAT32 and FLOAT16 there).
TOP_K_SUPPORT: SupportTable = (*TOP_K1_SUPPORT, *_rows((L.LEVEL_2_0, 4, (F32, F16), (U32,))))


@dataclass(frozen=True)
class TopKOperatorDesc(OperatorDesc):
    """DML_TOP_K_OPERATOR_DESC: the K largest elements of each sequence along Axis, largest first (equal ones by
    ascending index); both outputs have InputTensor's sizes with K along Axis.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 3, 4])
    >>> TopKOperatorDesc(x, TensorDesc(DataType.FLOAT32, [1, 1, 3, 2]), TensorDesc(DataType.UINT32, [1, 1, 3, 2]), 3, 2)
    TopKOperatorDesc(input_tensor=..., axis=3, k=2)
    """

    input_tensor: TensorDesc
    output_value_tensor: TensorDesc
    output_index_tensor: TensorDesc
    axis: int
    k: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.TOP_K
    SUPPORT: ClassVar[SupportTable] = TOP_K_SUPPORT
    KERNEL_MODULE: ClassVar[str] = "top_k"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputValueTensor", self.output_value_tensor)
        require_tensor(operator, "OutputIndexTensor", self.output_index_tensor)
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))
        object.__setattr__(self, "k", to_uint(operator, "K", self.k))

    @property
    def decreasing(self) -> bool:
        """Whether the largest elements are selected, largest first (TOP_K; TOP_K1 with DECREASING)."""
        return True

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputValueTensor", self.output_value_tensor), ("OutputIndexTensor", self.output_index_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, values, indices = self.input_tensor, self.output_value_tensor, self.output_index_tensor
        rank = source.dimension_count
        if not self.axis < rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] for InputTensor "
                                  f"of {rank} dimensions")
        check_same_rank(operator, "OutputValueTensor", values, "InputTensor", source)
        check_same_rank(operator, "OutputIndexTensor", indices, "InputTensor", source)
        check_same_data_type(operator, "OutputValueTensor", values, "InputTensor", source)
        check_support(self.SUPPORT, operator, level,
                      {"InputTensor": source, "OutputValueTensor": values, "OutputIndexTensor": indices})
        length = source.sizes[self.axis]
        if not 1 <= self.k <= length:
            raise ValidationError(f"{operator}: K is {self.k}; it must be in [1, {length}] (InputTensor.Sizes"
                                  f"[{self.axis}], the sequence length along Axis)")
        expected = top_k_sizes(source.sizes, self.axis, self.k)
        for name, tensor in (("OutputValueTensor", values), ("OutputIndexTensor", indices)):
            if list(tensor.sizes) != expected:
                raise ValidationError(f"{operator}: {name}.Sizes is {list(tensor.sizes)}; it must be InputTensor's "
                                      f"sizes with K along Axis {self.axis}: {expected}")


@dataclass(frozen=True)
class TopK1OperatorDesc(TopKOperatorDesc):
    """DML_TOP_K1_OPERATOR_DESC: TOP_K with AxisDirection: DECREASING selects the K largest, largest first (TOP_K),
    INCREASING the K smallest, smallest first; equal elements by ascending index either way.

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 3, 4])
    >>> y = TensorDesc(DataType.FLOAT32, [1, 1, 3, 3])
    >>> TopK1OperatorDesc(x, y, TensorDesc(DataType.UINT32, [1, 1, 3, 3]), 3, 3, "INCREASING")
    TopK1OperatorDesc(input_tensor=..., axis_direction=<AxisDirection.INCREASING: 0>)
    """

    axis_direction: AxisDirection = AxisDirection.DECREASING

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.TOP_K1
    SUPPORT: ClassVar[SupportTable] = TOP_K1_SUPPORT

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "axis_direction", to_enum(self.label, "AxisDirection", self.axis_direction,
                                                           AxisDirection, "DML_AXIS_DIRECTION_"))

    @property
    def decreasing(self) -> bool:
        return self.axis_direction is AxisDirection.DECREASING


def top_k_sizes(sizes: tuple[int, ...] | list[int], axis: int, k: int) -> list[int]:
    """Both outputs' sizes: InputTensor's with K along Axis."""
    return [k if dim == axis else size for dim, size in enumerate(sizes)]


#: The unsigned integer type of each element size: the bits every kernel reads.
BITS: dict[int, np.dtype[Any]] = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}


def order_key(bits: np.ndarray[Any, Any], data_type: DataType, decreasing: bool) -> np.ndarray[Any, Any]:
    """The int64 order keys of elements given as their bits (BITS[element size]): a larger key is selected first.
    Floats: the sign-magnitude bits folded into two's complement, -0.0 as +0.0, every NaN the largest key; signed
    integers their value; unsigned integers their value (UINT64 with its top bit flipped, so that the signed
    compare orders it). INCREASING takes the complement (~key), which reverses the order exactly (the NumPy small
    kernel's and the Dask tree's formula; the numba and WGSL kernels compute the same keys)."""
    size = data_type.element_size
    if data_type in (DataType.FLOAT32, DataType.FLOAT16):
        width = 8 * size
        magnitude = bits.astype(np.int64) & ((1 << (width - 1)) - 1)
        negative = (bits.astype(np.int64) >> (width - 1)) != 0
        key = np.where(negative, -magnitude, magnitude)
        infinity = 0x7F800000 if size == 4 else 0x7C00
        key = np.where(magnitude > infinity, np.int64(1 << 62), key)
    elif data_type is DataType.UINT64:
        key = (bits ^ np.uint64(1 << 63)).view(np.int64)
    elif data_type.name.startswith("INT"):
        key = bits.view(data_type.numpy_dtype).astype(np.int64)
    else:
        key = bits.astype(np.int64)
    return key if decreasing else ~key
