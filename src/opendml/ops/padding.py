"""PADDING, PADDING1 and TILE (issue 28): each output element is one input element, or PADDING's constant.

Along every dimension an output coordinate c reads the input coordinate `source_index(mode, c - StartPadding, size)`
(`source_indices` for a whole dimension), where the unpadded coordinate i = c - StartPadding may lie outside
[0, size): CONSTANT writes the padding value there, EDGE clamps i, REFLECTION folds it over the edges without
repeating them (period 2 (size - 1)), SYMMETRIC repeats the edges (period 2 size), WRAP (6_4) takes it modulo size.
The pages allow padding wider than the input (folded again and again); a REFLECTION dimension of size 1 repeats its
one element (README Rulings). TILE is WRAP with no StartPadding: OutputTensor.Sizes = InputTensor.Sizes x Repeats.

Every backend maps coordinates with these formulas (the gpu's WGSL spells the same ones), and every read lies inside
InputTensor's Sizes. PADDING's FLOAT PaddingValue becomes the tensor's type as CAST converts (to a float: rounded to
nearest even; to an integer: truncated toward zero and saturated, NaN 0; the page: "10.6 will become 10");
PADDING1's is a DML_SCALAR_UNION of PaddingValueDataType, which must be OutputTensor's DataType (exact).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..convert import describe, to_enum, to_float, to_uint, to_uint_list
from ..errors import UnsupportedError, ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType, to_data_type
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .elementwise import scalar_value
from .structs import ScalarValue

L = FeatureLevel
_HALF = (F32, F16)
_32 = (F32, F16, I32, I16, I8, U32, U16, U8)
_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_ALL = (F64, *_64)

#: Each page's "Tensor support", one row per level.
SUPPORT: dict[OperatorType, SupportTable] = {
    OperatorType.PADDING: (row(L.LEVEL_5_0, (1, 8), InputTensor=_64, OutputTensor=_64),
                           row(L.LEVEL_3_1, (1, 8), InputTensor=_32, OutputTensor=_32),
                           row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),
                           row(L.LEVEL_1_0, 4, InputTensor=_HALF, OutputTensor=_HALF)),
    OperatorType.PADDING1: (row(L.LEVEL_5_0, (1, 8), InputTensor=_ALL, OutputTensor=_ALL),),
    OperatorType.TILE: (row(L.LEVEL_4_1, (1, 8), InputTensor=_64, OutputTensor=_64),
                        row(L.LEVEL_3_1, (1, 8), InputTensor=_32, OutputTensor=_32),
                        row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),
                        row(L.LEVEL_1_0, 4, InputTensor=_HALF, OutputTensor=_HALF)),
}


class PaddingMode(enum.IntEnum):
    """DML_PADDING_MODE."""

    CONSTANT = 0
    EDGE = 1
    REFLECTION = 2
    SYMMETRIC = 3
    WRAP = 4


#: The level each mode needs (SYMMETRIC: 3_0, WRAP: 6_4; the others came with PADDING).
MODE_LEVELS = {PaddingMode.SYMMETRIC: L.LEVEL_3_0, PaddingMode.WRAP: L.LEVEL_6_4}


def source_indices(mode: PaddingMode, start: int, output_size: int, size: int) -> np.ndarray[Any, Any]:
    """The input index each output index of one dimension reads (INT64; -1 where CONSTANT writes the value)."""
    i = np.arange(output_size, dtype=np.int64) - start
    if mode is PaddingMode.CONSTANT:
        return np.where((i >= 0) & (i < size), i, -1)
    if mode is PaddingMode.EDGE:
        return np.clip(i, 0, size - 1)
    if mode is PaddingMode.WRAP:
        return np.mod(i, size)
    period = 2 * size if mode is PaddingMode.SYMMETRIC else 2 * (size - 1)
    if period == 0:   # REFLECTION of one element: that element
        return np.zeros_like(i)
    m = np.mod(i, period)
    return np.where(m < size, m, period - m - (1 if mode is PaddingMode.SYMMETRIC else 0))


def convert_float(value: float, data_type: DataType) -> int | float:
    """PADDING's FLOAT PaddingValue in `data_type`: rounded to a float type; to an integer one truncated and
    saturated (NaN 0)."""
    if data_type.is_float:
        return float(np.asarray(value, dtype=data_type.numpy_dtype))
    if math.isnan(value):
        return 0
    info = np.iinfo(data_type.numpy_dtype)
    return int(min(max(math.trunc(value) if math.isfinite(value) else value, info.min), info.max))


class PaddingBase(OperatorDesc):
    """What PADDING, PADDING1 and TILE share: one input, one output of its type and rank, and per dimension the
    (mode, StartPadding) that `source_indices` maps output coordinates with (KERNEL_MODULE "padding")."""

    OPERATOR_TYPE: ClassVar[OperatorType]
    KERNEL_MODULE: ClassVar[str] = "padding"
    input_tensor: TensorDesc
    output_tensor: TensorDesc

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        return {"": SUPPORT[cls.OPERATOR_TYPE]}

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def mode(self) -> PaddingMode:
        return PaddingMode.WRAP

    @property
    def starts(self) -> tuple[int, ...]:
        return (0,) * self.input_tensor.dimension_count

    def constant(self) -> int | float:
        """The value CONSTANT writes, in OutputTensor's type."""
        return 0

    def index_maps(self) -> list[np.ndarray[Any, Any]]:
        """Per dimension, the input index of each output index (-1: the constant)."""
        return [source_indices(self.mode, start, out, size) for start, out, size in
                zip(self.starts, self.output_tensor.sizes, self.input_tensor.sizes, strict=True)]

    def _check_common(self, level: FeatureLevel) -> None:
        operator = self.label
        self.check_tensors()
        source, output = self.input_tensor, self.output_tensor
        check_same_rank(operator, "OutputTensor", output, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", output, "InputTensor", source)
        check_support(SUPPORT[self.OPERATOR_TYPE], operator, level, {"InputTensor": source, "OutputTensor": output})

    def _check_count(self, name: str, count: int, arrays: Sequence[tuple[str, Sequence[int]]]) -> None:
        operator, rank = self.label, self.input_tensor.dimension_count
        if count != rank:
            raise ValidationError(f"{operator}: {name} is {count}; it must equal InputTensor.DimensionCount ({rank})")
        for array_name, values in arrays:
            if len(values) != rank:
                raise ValidationError(f"{operator}: {array_name} has {len(values)} values ({describe(list(values))}); "
                                      f"it must have {name} ({rank})")


class PaddingCommon(PaddingBase):
    """PADDING and PADDING1: PaddingMode, DimensionCount, StartPadding and EndPadding."""

    padding_mode: PaddingMode
    dimension_count: int
    start_padding: Sequence[int]
    end_padding: Sequence[int]

    def _convert_common(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "padding_mode", to_enum(operator, "PaddingMode", self.padding_mode, PaddingMode,
                                                         "DML_PADDING_MODE_"))
        object.__setattr__(self, "dimension_count", to_uint(operator, "DimensionCount", self.dimension_count))
        object.__setattr__(self, "start_padding", to_uint_list(operator, "StartPadding", self.start_padding))
        object.__setattr__(self, "end_padding", to_uint_list(operator, "EndPadding", self.end_padding))

    @property
    def mode(self) -> PaddingMode:
        return self.padding_mode

    @property
    def starts(self) -> tuple[int, ...]:
        return tuple(self.start_padding)

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's table, the mode's level, the arrays' lengths and OutputTensor.Sizes[i]
        = InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i]."""
        operator = self.label
        self._check_common(level)
        needed = MODE_LEVELS.get(self.padding_mode)
        if needed is not None and level < needed:
            raise UnsupportedError(f"{operator}: PaddingMode is {self.padding_mode.name}; it needs feature level "
                                  f"{needed.name[6:]} (this device: {level.name[6:]}); below it: CONSTANT, EDGE, "
                                  f"REFLECTION" + (", SYMMETRIC" if level >= L.LEVEL_3_0 else ""))
        self._check_count("DimensionCount", self.dimension_count,
                          (("StartPadding", self.start_padding), ("EndPadding", self.end_padding)))
        source, output = self.input_tensor.sizes, self.output_tensor.sizes
        for i in range(len(source)):
            want = source[i] + self.start_padding[i] + self.end_padding[i]
            if output[i] != want:
                raise ValidationError(f"{operator}: OutputTensor.Sizes[{i}] is {output[i]}; it must be "
                                      f"InputTensor.Sizes[{i}] + StartPadding[{i}] + EndPadding[{i}] ({want})")


@dataclass(frozen=True)
class PaddingOperatorDesc(PaddingCommon):
    """DML_PADDING_OPERATOR_DESC (FL 1_0): InputTensor inflated by StartPadding/EndPadding, filled by PaddingMode
    (CONSTANT: PaddingValue, a FLOAT converted to the tensors' type)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.PADDING
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    padding_mode: PaddingMode
    padding_value: float = field(metadata={"finite": False})   # -inf or NaN pad as well (NaN is 0 in integers)
    dimension_count: int
    start_padding: Sequence[int]
    end_padding: Sequence[int]

    def __post_init__(self) -> None:
        self._convert_common()
        object.__setattr__(self, "padding_value", to_float(self.OPERATOR_TYPE.dml_name, "PaddingValue",
                                                           self.padding_value, finite=False))

    def constant(self) -> int | float:
        return convert_float(self.padding_value, self.output_tensor.data_type)


@dataclass(frozen=True)
class Padding1OperatorDesc(PaddingCommon):
    """DML_PADDING1_OPERATOR_DESC (FL 5_0): PADDING with PaddingValue a DML_SCALAR_UNION of PaddingValueDataType
    (OutputTensor's DataType), so that every type's value is exact."""

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.PADDING1
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    padding_mode: PaddingMode
    padding_value_data_type: DataType
    padding_value: ScalarValue = field(metadata={"kind": "SCALAR"})
    dimension_count: int
    start_padding: Sequence[int]
    end_padding: Sequence[int]

    def __post_init__(self) -> None:
        self._convert_common()
        operator = self.OPERATOR_TYPE.dml_name
        data_type = to_data_type(operator, "PaddingValueDataType", self.padding_value_data_type)
        object.__setattr__(self, "padding_value_data_type", data_type)
        object.__setattr__(self, "padding_value", scalar_value(operator, "PaddingValue", self.padding_value,
                                                               data_type))

    def validate(self, level: FeatureLevel) -> None:
        super().validate(level)
        if self.padding_value_data_type != self.output_tensor.data_type:
            raise ValidationError(f"{self.label}: PaddingValueDataType is {self.padding_value_data_type.name}; it "
                                  f"must equal OutputTensor.DataType ({self.output_tensor.data_type.name})")

    def constant(self) -> int | float:
        return self.padding_value


@dataclass(frozen=True)
class TileOperatorDesc(PaddingBase):
    """DML_TILE_OPERATOR_DESC (FL 1_0): OutputTensor[c] = InputTensor[c mod InputTensor.Sizes], OutputTensor.Sizes =
    InputTensor.Sizes x Repeats (each at least 1)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.TILE
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    repeats_count: int
    repeats: Sequence[int]

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "repeats_count", to_uint(operator, "RepeatsCount", self.repeats_count))
        object.__setattr__(self, "repeats", to_uint_list(operator, "Repeats", self.repeats))

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's table, RepeatsCount, Repeats at least 1 and OutputTensor.Sizes[i] =
        InputTensor.Sizes[i] x Repeats[i]."""
        operator = self.label
        self._check_common(level)
        self._check_count("RepeatsCount", self.repeats_count, (("Repeats", self.repeats),))
        for i, (size, repeat, out) in enumerate(zip(self.input_tensor.sizes, self.repeats, self.output_tensor.sizes,
                                                    strict=True)):
            if repeat < 1:
                raise ValidationError(f"{operator}: Repeats[{i}] is {repeat}; it must be at least 1")
            if out != size * repeat:
                raise ValidationError(f"{operator}: OutputTensor.Sizes[{i}] is {out}; it must be InputTensor.Sizes"
                                      f"[{i}] x Repeats[{i}] ({size * repeat})")


#: Operator type -> descriptor class.
CLASSES: dict[OperatorType, type[PaddingBase]] = {
    cls.OPERATOR_TYPE: cls for cls in (PaddingOperatorDesc, Padding1OperatorDesc, TileOperatorDesc)}
