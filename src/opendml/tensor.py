"""DML_BUFFER_TENSOR_DESC and DMLCalcBufferTensorSize."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .convert import UINT64_MAX, to_flags, to_uint, to_uint_list
from .errors import ValidationError
from .types import DataType, TensorFlags, to_data_type

MAX_DIMENSION_COUNT = 8          # DML_TENSOR_DIMENSION_COUNT_MAX1
MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides of a packed tensor (the last dimension fastest)."""
    strides = [1] * len(sizes)
    for index in range(len(sizes) - 2, -1, -1):
        strides[index] = strides[index + 1] * sizes[index + 1]
    return tuple(strides)


def index_of_last_element(sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """Element offset of the last logical element: dot(Sizes - 1, Strides), in exact integers."""
    effective = packed_strides(sizes) if strides is None else strides
    return sum((size - 1) * stride for size, stride in zip(sizes, effective, strict=True))


def calc_buffer_tensor_size(data_type: DataType | str | Any, sizes: Sequence[int],
                            strides: Sequence[int] | None = None) -> int:
    """DMLCalcBufferTensorSize: the minimum bytes a buffer must hold for the tensor, rounded up to 4.

    Packed: product of sizes times element size; strided: (index of the last element + 1) times element size.
    Computed exactly (DML's helper wraps the strided index in 32 bits; opendml refuses such tensors instead),
    in bits so that the 4-bit types work as in DirectMLX. Any size of 0 gives 0 bytes. Every argument is
    converted as TensorDesc converts it (sizes and strides: UINTs, one stride per size).
    """
    label = "calc_buffer_tensor_size"
    data_type = to_data_type(label, "DataType", data_type)
    sizes = to_uint_list(label, "Sizes", sizes)
    if strides is not None:
        strides = to_uint_list(label, "Strides", strides)
        _check_stride_count(label, sizes, strides)
    return _buffer_size(data_type.bits, sizes, strides)


def _check_stride_count(label: str, sizes: Sequence[int], strides: Sequence[int]) -> None:
    if len(strides) != len(sizes):  # one DimensionCount covers both arrays in DML
        raise ValidationError(f"{label}: Strides has {len(strides)} values; it must have one per dimension of "
                              f"Sizes ({len(sizes)})")


def _buffer_size(bits: int, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """calc_buffer_tensor_size on converted values."""
    if any(size == 0 for size in sizes):
        return 0
    if strides is None:
        element_count = math.prod(sizes)
    else:
        element_count = index_of_last_element(sizes, strides) + 1
    size_in_bytes = (element_count * bits + 7) // 8
    return (size_in_bytes + 3) & ~3


@dataclass(frozen=True)
class TensorDesc:
    """DML_BUFFER_TENSOR_DESC: a tensor's data type, logical sizes and element strides in a buffer.

    Strides are in elements; None means packed row-major. `total_tensor_size_in_bytes` defaults to
    calc_buffer_tensor_size. Like the C struct, any UINT values are accepted here; the rules are checked when
    an operator is created, so that the error can name the operator and field.

    >>> TensorDesc(DataType.FLOAT16, [1, 1, 3, 5]).total_tensor_size_in_bytes
    32
    """

    data_type: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    flags: TensorFlags = field(default=TensorFlags.NONE, kw_only=True)
    total_tensor_size_in_bytes: int = field(default=None, kw_only=True)  # type: ignore[assignment]
    guaranteed_base_offset_alignment: int = field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        label = "TensorDesc"
        set_field = object.__setattr__
        set_field(self, "data_type", to_data_type(label, "DataType", self.data_type))
        set_field(self, "sizes", to_uint_list(label, "Sizes", self.sizes))
        if self.strides is not None:
            set_field(self, "strides", to_uint_list(label, "Strides", self.strides))
            _check_stride_count(label, self.sizes, self.strides)
        set_field(self, "flags", to_flags(label, "Flags", self.flags, TensorFlags, "DML_TENSOR_FLAG_"))
        if self.total_tensor_size_in_bytes is None:
            set_field(self, "total_tensor_size_in_bytes", self.calc_size_in_bytes())
        else:
            set_field(self, "total_tensor_size_in_bytes",
                      to_uint(label, "TotalTensorSizeInBytes", self.total_tensor_size_in_bytes, limit=UINT64_MAX))
        set_field(self, "guaranteed_base_offset_alignment",
                  to_uint(label, "GuaranteedBaseOffsetAlignment", self.guaranteed_base_offset_alignment))

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)

    @property
    def element_strides(self) -> tuple[int, ...]:
        """The strides in effect: the given ones, or the packed ones."""
        return packed_strides(self.sizes) if self.strides is None else self.strides

    @property
    def element_count(self) -> int:
        """Number of logical elements (product of Sizes)."""
        return math.prod(self.sizes)

    def calc_size_in_bytes(self) -> int:
        return _buffer_size(self.data_type.bits, self.sizes, self.strides)

    @property
    def is_packed(self) -> bool:
        return self.strides is None or all(
            size == 1 or stride == packed
            for size, stride, packed in zip(self.sizes, self.strides, packed_strides(self.sizes), strict=False))
