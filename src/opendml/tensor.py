"""DML_BUFFER_TENSOR_DESC and DMLCalcBufferTensorSize."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import ValidationError
from .types import DataType, TensorFlags

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
MAX_DIMENSION_COUNT = 8          # DML_TENSOR_DIMENSION_COUNT_MAX1
MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT


def _uint_tuple(values: object, what: str, limit: int) -> tuple[int, ...]:
    """A tuple of Python ints in [0, limit], as a C array of UINT can hold."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValidationError(f"TensorDesc.{what}: {values!r} is not a sequence of integers")
    result = []
    for value in values:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise ValidationError(f"TensorDesc.{what}: {value!r} is not an integer")
        number = int(value)
        if not 0 <= number <= limit:
            raise ValidationError(f"TensorDesc.{what}: {number} is outside the range of a UINT (0 to {limit})")
        result.append(number)
    return tuple(result)


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
    in bits so that the 4-bit types work as in DirectMLX. Any size of 0 gives 0 bytes.
    """
    bits = DataType.parse(data_type).bits
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
        set_field = object.__setattr__
        set_field(self, "data_type", DataType.parse(self.data_type))
        set_field(self, "sizes", _uint_tuple(self.sizes, "Sizes", UINT32_MAX))
        if self.strides is not None:
            set_field(self, "strides", _uint_tuple(self.strides, "Strides", UINT32_MAX))
            if len(self.strides) != len(self.sizes):  # one DimensionCount covers both arrays in DML
                raise ValidationError(f"TensorDesc.Strides has {len(self.strides)} values; it must have one per "
                                      f"dimension of Sizes ({len(self.sizes)})")
        set_field(self, "flags", TensorFlags.parse(self.flags))
        if self.total_tensor_size_in_bytes is None:
            set_field(self, "total_tensor_size_in_bytes", self.calc_size_in_bytes())
        else:
            (total,) = _uint_tuple([self.total_tensor_size_in_bytes], "TotalTensorSizeInBytes", UINT64_MAX)
            set_field(self, "total_tensor_size_in_bytes", total)
        (alignment,) = _uint_tuple([self.guaranteed_base_offset_alignment], "GuaranteedBaseOffsetAlignment",
                                   UINT32_MAX)
        set_field(self, "guaranteed_base_offset_alignment", alignment)

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
        return calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)

    @property
    def is_packed(self) -> bool:
        return self.strides is None or all(
            size == 1 or stride == packed
            for size, stride, packed in zip(self.sizes, self.strides, packed_strides(self.sizes), strict=False))
