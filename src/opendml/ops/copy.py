"""CAST, SLICE and SLICE1 on the element-wise engine (issue 28, the copy slice).

CAST is a unary row whose output type differs from its input's. SLICE and SLICE1 are the identity (formula `x`) on a
re-strided view of InputTensor (`input_window`: the window's first element and its signed element strides, folded into
InputTensor's own strides; a negative SLICE1 stride starts the window at its end), so no kernel of their own: their
validation proves that every element the view reads lies inside InputTensor's Sizes, hence inside its bound memory.

CAST's formula is the identity written in the engine's primitives for the pair of types (`cast_formula`), so every
backend's element_wise kernel renders it and the conversion rules are the engine's store (formula.py):
- float -> float: the value rounded once to the output type (nearest, ties to even; past its range: infinity; NaN
  stays NaN); FLOAT16 and FLOAT32 widen exactly;
- integer -> float: the nearest float of the output type (`to_float`);
- float -> integer: truncated toward zero, then saturated to the output type's range, NaN -> 0 (README Rulings: the
  page is silent);
- integer -> integer: the value wrapped to the output type's width (two's complement, as C and ONNX's Cast; README
  Rulings).

CAST's page: InputTensor and OutputTensor have the same DimensionCount and Sizes; each has a type of its own, any the
row in force lists (SUPPORT below: each page's "Tensor support", one row per level). SLICE's and SLICE1's pages:
InputTensor and OutputTensor have the same DataType and DimensionCount, which is DimensionCount; SLICE: OutputTensor[c]
= InputTensor[Offsets + Strides * c], Sizes equal to OutputTensor.Sizes, Strides at least 1, every read inside the
input; SLICE1: the window [InputWindowOffsets, + InputWindowSizes) inside InputTensor.Sizes, not empty, strides not 0
(negative: copied from the window's end), 1 <= OutputTensor.Sizes[i] <= 1 + (InputWindowSizes[i] - 1) / |stride|.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..convert import describe, to_int, to_sequence, to_uint, to_uint_list
from ..errors import ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType
from .base import check_same_data_type, check_same_rank, require_tensor
from .generators import GeneratorInfo, GeneratorOperatorDesc

L = FeatureLevel
T = OperatorType

_SMALL = (F32, F16, I16, I8, U16, U8)
_SLICE_10 = (F32, F16, I32, I16, U32, U16)
_32 = (F32, F16, I32, I16, I8, U32, U16, U8)
_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_ALL = (F64, *_64)

#: DML_CAST_OPERATOR_DESC's "Tensor support", one row per level the page lists.
SUPPORT: dict[OperatorType, SupportTable] = {
    T.CAST: (row(L.LEVEL_1_0, 4, InputTensor=_SMALL, OutputTensor=_SMALL),
             row(L.LEVEL_3_0, 4, InputTensor=_64, OutputTensor=_64),
             row(L.LEVEL_3_1, (1, 8), InputTensor=_64, OutputTensor=_64),
             row(L.LEVEL_4_1, (1, 8), InputTensor=_ALL, OutputTensor=_ALL)),
    T.SLICE: (row(L.LEVEL_1_0, (4, 5), InputTensor=_SLICE_10, OutputTensor=_SLICE_10),
              row(L.LEVEL_2_1, (4, 5), InputTensor=_32, OutputTensor=_32),
              row(L.LEVEL_3_0, (1, 8), InputTensor=_32, OutputTensor=_32),
              row(L.LEVEL_4_1, (1, 8), InputTensor=_ALL, OutputTensor=_ALL)),
    T.SLICE1: (row(L.LEVEL_2_1, (4, 5), InputTensor=_32, OutputTensor=_32),
               row(L.LEVEL_3_0, (1, 8), InputTensor=_32, OutputTensor=_32),
               row(L.LEVEL_4_1, (1, 8), InputTensor=_ALL, OutputTensor=_ALL)),
}


def cast_formula(source: DataType, target: DataType) -> str:
    """The identity from `source` to `target` in the engine's primitives (the module docstring's rules)."""
    if source.is_float and not target.is_float:
        return "saturate(trunc(x))"
    if target.is_float and not source.is_float:
        return "to_float(x)"
    if source != target and DataType.FLOAT64 in (source, target):
        return "to_float(x)"   # FLOAT64 to or from a narrower float: a conversion (the gpu, without f64, refuses it)
    return "x"


@dataclass(frozen=True)
class CopyInfo(GeneratorInfo):
    """A copy operator's row: a GeneratorInfo whose support table is this module's."""

    @property
    def support(self) -> SupportTable:
        return SUPPORT[self.operator_type]


def _cast(desc: Any) -> str:
    return cast_formula(desc.input_tensor.data_type, desc.output_tensor.data_type)


INFO: dict[OperatorType, CopyInfo] = {
    T.CAST: CopyInfo(T.CAST, _cast, (), (("InputTensor", "x"),)),
    T.SLICE: CopyInfo(T.SLICE, "x", (), (("InputTensor", "x"),)),
    T.SLICE1: CopyInfo(T.SLICE1, "x", (), (("InputTensor", "x"),)),
}


@dataclass(frozen=True)
class CastOperatorDesc(GeneratorOperatorDesc):
    """DML_CAST_OPERATOR_DESC (FL 1_0): OutputTensor = InputTensor converted to OutputTensor's DataType."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.CAST
    INFO: ClassVar[CopyInfo] = INFO[T.CAST]
    input_tensor: TensorDesc
    output_tensor: TensorDesc

    def __post_init__(self) -> None:
        if self.input_tensor is None:   # required, unlike a generator's optional InputTensor
            raise ValidationError(f"{self.OPERATOR_TYPE.dml_name}: InputTensor is None; it must be a TensorDesc")
        super().__post_init__()

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table at `level`, same DimensionCount and Sizes."""
        operator = self.label
        self.check_tensors()
        check_same_rank(operator, "InputTensor", self.input_tensor, "OutputTensor", self.output_tensor)
        if self.input_tensor.sizes != self.output_tensor.sizes:
            raise ValidationError(f"{operator}: InputTensor.Sizes is {list(self.input_tensor.sizes)}; it must equal "
                                  f"OutputTensor.Sizes {list(self.output_tensor.sizes)}")
        check_support(self.INFO.support, operator, level, self.present_tensors())

    def formula_types(self) -> dict[str, DataType]:
        return {"x": self.input_tensor.data_type}


_INT = {"kind": "INT"}   # a DML INT array (signed; SLICE1's InputWindowStrides)


class SliceBase(GeneratorOperatorDesc):
    """SLICE and SLICE1: the identity on `input_window`'s view of InputTensor (KERNEL_MODULE "slice": the engine's
    kernels, reading InputTensor through that view)."""

    KERNEL_MODULE: ClassVar[str] = "slice"
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    dimension_count: int

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "dimension_count", to_uint(operator, "DimensionCount", self.dimension_count))
        offsets, sizes, strides = self._window_fields()
        for name in (offsets, sizes):
            object.__setattr__(self, _snake(name), to_uint_list(operator, name, getattr(self, _snake(name))))
        values = getattr(self, _snake(strides))
        if self.OPERATOR_TYPE is T.SLICE:
            object.__setattr__(self, _snake(strides), to_uint_list(operator, strides, values))
        else:
            items = to_sequence(operator, strides, values)
            signed = [to_int(operator, f"{strides}[{i}]", value, low=-2**31, high=2**31 - 1)
                      for i, value in enumerate(items)]
            object.__setattr__(self, _snake(strides), tuple(signed))

    def _window_fields(self) -> tuple[str, str, str]:
        return ("Offsets", "Sizes", "Strides") if self.OPERATOR_TYPE is T.SLICE else \
            ("InputWindowOffsets", "InputWindowSizes", "InputWindowStrides")

    def _window(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        offsets, sizes, strides = self._window_fields()
        return getattr(self, _snake(offsets)), getattr(self, _snake(sizes)), getattr(self, _snake(strides))

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table, DimensionCount and the arrays' lengths, and the window
        inside InputTensor.Sizes (every read inside the input: no stride reads outside its bound memory)."""
        operator = self.label
        self.check_tensors()
        source, output = self.input_tensor, self.output_tensor
        check_same_rank(operator, "OutputTensor", output, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", output, "InputTensor", source)
        check_support(self.INFO.support, operator, level, self.present_tensors())
        rank = source.dimension_count
        if self.dimension_count != rank:
            raise ValidationError(f"{operator}: DimensionCount is {self.dimension_count}; it must equal "
                                  f"InputTensor.DimensionCount ({rank})")
        names = self._window_fields()
        for name, values in zip(names, self._window(), strict=True):
            if len(values) != rank:
                raise ValidationError(f"{operator}: {name} has {len(values)} values ({describe(list(values))}); it "
                                      f"must have DimensionCount ({rank})")
        offsets, sizes, strides = self._window()
        for i in range(rank):
            extent = source.sizes[i]
            if self.OPERATOR_TYPE is T.SLICE:
                if sizes[i] != output.sizes[i]:
                    raise ValidationError(f"{operator}: Sizes is {list(sizes)}; it must equal OutputTensor.Sizes "
                                          f"{list(output.sizes)}")
                if strides[i] < 1:
                    raise ValidationError(f"{operator}: Strides[{i}] is {strides[i]}; it must be at least 1")
                last = offsets[i] + strides[i] * (sizes[i] - 1)
                if last >= extent:
                    raise ValidationError(f"{operator}: Offsets[{i}] + Strides[{i}] x (Sizes[{i}] - 1) is {last}; it "
                                          f"must be below InputTensor.Sizes[{i}] ({extent}): every read inside the "
                                          f"input")
                continue
            if strides[i] == 0:
                raise ValidationError(f"{operator}: InputWindowStrides[{i}] is 0; it must not be 0")
            if sizes[i] < 1 or offsets[i] + sizes[i] > extent:
                raise ValidationError(f"{operator}: InputWindowOffsets[{i}] + InputWindowSizes[{i}] is "
                                      f"{offsets[i] + sizes[i]} (window size {sizes[i]}); the window must not be empty "
                                      f"and must end within InputTensor.Sizes[{i}] ({extent})")
            most = 1 + (sizes[i] - 1) // abs(strides[i])
            if not 1 <= output.sizes[i] <= most:
                raise ValidationError(f"{operator}: OutputTensor.Sizes[{i}] is {output.sizes[i]}; it must be 1 to "
                                      f"{most} (1 + (InputWindowSizes[{i}] - 1) / |InputWindowStrides[{i}]|)")

    def formula_types(self) -> dict[str, DataType]:
        return {"x": self.input_tensor.data_type}

    def start(self) -> tuple[int, ...]:
        """The input coordinates of OutputTensor's first element (SLICE1: a negative stride starts at the window's
        end)."""
        offsets, sizes, strides = self._window()
        return tuple(offset + (size - 1 if stride < 0 else 0) for offset, size, stride in zip(offsets, sizes, strides,
                                                                                               strict=True))

    def input_window(self) -> tuple[int, tuple[int, ...]]:
        """(the element offset of the first element read, the signed element strides along OutputTensor's
        dimensions): InputTensor read as OutputTensor's sizes, Offsets and Strides folded into its own strides."""
        own = self.input_tensor.element_strides
        _, _, strides = self._window()
        base = sum(coordinate * stride for coordinate, stride in zip(self.start(), own, strict=True))
        return base, tuple(step * stride for step, stride in zip(strides, own, strict=True))


@dataclass(frozen=True)
class SliceOperatorDesc(SliceBase):
    """DML_SLICE_OPERATOR_DESC (FL 1_0): OutputTensor[c] = InputTensor[Offsets + Strides * c]."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.SLICE
    INFO: ClassVar[CopyInfo] = INFO[T.SLICE]
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    dimension_count: int
    offsets: Sequence[int]
    sizes: Sequence[int]
    strides: Sequence[int]


@dataclass(frozen=True)
class Slice1OperatorDesc(SliceBase):
    """DML_SLICE1_OPERATOR_DESC (FL 2_1): OutputTensor[c] = InputTensor[start + InputWindowStrides * c], start the
    window's beginning (its end along a negative stride)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.SLICE1
    INFO: ClassVar[CopyInfo] = INFO[T.SLICE1]
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    dimension_count: int
    input_window_offsets: Sequence[int]
    input_window_sizes: Sequence[int]
    input_window_strides: Sequence[int] = field(metadata=_INT)


def _snake(name: str) -> str:
    """InputWindowOffsets -> input_window_offsets."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


#: Operator type -> descriptor class.
CLASSES: dict[OperatorType, type[GeneratorOperatorDesc]] = {
    cls.OPERATOR_TYPE: cls for cls in (CastOperatorDesc, SliceOperatorDesc, Slice1OperatorDesc)}
