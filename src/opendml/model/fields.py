"""The field table of every operator descriptor: DML's C field names <-> Python's, with each field's kind.

Derived from the descriptor dataclasses themselves (names in snake case become DML's CamelCase; the type hints
give the kind), so that a new operator needs no entry here. The only irregular names are DML's array counts.
A field hinted `ScalarValue` (int | float) is a DML_SCALAR_UNION whose data type is the DataType field before it in
the struct (CLIP1: MinMaxDataType, then Min and Max); `ScaleBias` is DML_SCALE_BIAS, `Size2D`
DML_SIZE_2D.

No operator is imported here (ops/base.py builds `OperatorDesc.from_dml` on this package): a hint is an operator
desc when it is a class that shares the descriptor's registry, which every OperatorDesc does.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any

from ..ops.structs import ScaleBias, Size2D
from ..tensor import TensorDesc
from ..types import DataType

#: DML's count field for an array field whose count name is not simply the singular form. CONVOLUTION's five arrays
#: share one count, DimensionCount, itself a field of the struct (read before them; each array must have that many).
COUNT_FIELDS = {"Axes": "AxisCount", "OutputTensors": "OutputCount", "InputTensors": "InputCount",
                "Repeats": "RepeatsCount",
                **dict.fromkeys(("Strides", "Dilations", "StartPadding", "EndPadding", "OutputPadding", "Offsets",
                                 "Sizes", "InputWindowOffsets", "InputWindowSizes", "InputWindowStrides"),
                                "DimensionCount")}


class Kind(enum.Enum):
    TENSOR = "tensor"
    OPTIONAL_TENSOR = "optional tensor"
    TENSOR_ARRAY = "tensor array"
    UINT = "UINT"
    INT = "INT"
    UINT_ARRAY = "UINT array"
    FLOAT = "FLOAT"
    BOOL = "BOOL"
    ENUM = "enum"
    OPERATOR = "operator desc"
    SCALE_BIAS = "DML_SCALE_BIAS"
    SCALAR = "DML_SCALAR_UNION"
    SIZE_2D = "DML_SIZE_2D"


@dataclass(frozen=True)
class Field:
    python_name: str
    dml_name: str
    kind: Kind
    optional: bool = False
    enum_type: type[enum.Enum] | None = None
    count_name: str | None = None  # the DML count field of an array
    has_default: bool = False      # the Python constructor may omit it
    type_field: str | None = None  # a scalar union's: the DML name of the DataType field that gives its type

    def describe(self) -> str:
        kind = self.enum_type.__name__ if self.enum_type is not None else self.kind.value
        text = f"{self.dml_name}: {kind}"
        if self.count_name:
            text += f" (with {self.count_name})"
        if self.type_field:
            text += f" (of type {self.type_field})"
        return text + (" (optional)" if self.optional else "")


def dml_name(python_name: str) -> str:
    """input_tensor -> InputTensor; axes -> Axes."""
    return "".join(part[:1].upper() + part[1:] for part in python_name.split("_"))


@functools.cache
def fields_of(desc_type: Any) -> tuple[Field, ...]:
    """The fields of an OperatorDesc subclass, in struct order."""
    hints = typing.get_type_hints(desc_type)
    result: list[Field] = []
    for item in dataclasses.fields(desc_type):
        if not item.init:
            continue
        name = dml_name(item.name)
        kind, optional, enum_type = _kind(hints[item.name], desc_type)
        if kind is Kind.UINT and item.metadata.get("kind") == "INT":   # a signed DML INT (DIAGONAL_MATRIX's Offset)
            kind = Kind.INT
        count = COUNT_FIELDS.get(name, name[:-1] + "Count") if kind in (Kind.TENSOR_ARRAY, Kind.UINT_ARRAY) else None
        type_field = None
        if kind is Kind.SCALAR:
            typed_by = [field for field in result if field.enum_type is DataType]
            if not typed_by:
                raise TypeError(f"{desc_type.__name__}.{item.name}: a scalar union needs a DataType field before it")
            type_field = typed_by[-1].dml_name
        has_default = item.default is not dataclasses.MISSING or item.default_factory is not dataclasses.MISSING
        result.append(Field(item.name, name, kind, optional or has_default, enum_type, count, has_default, type_field))
    return tuple(result)


def _kind(hint: Any, desc_type: Any) -> tuple[Kind, bool, type[enum.Enum] | None]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        optional = len(members) < len(typing.get_args(hint))
        if set(members) == {int, float}:
            return Kind.SCALAR, optional, None
        kind, _, enum_type = _kind(members[0], desc_type)
        return (Kind.OPTIONAL_TENSOR if kind is Kind.TENSOR else kind), True, enum_type
    if origin is tuple or origin in (list, typing.Sequence) or str(origin) == "<class 'collections.abc.Sequence'>":
        (element, *_) = typing.get_args(hint)
        return (Kind.TENSOR_ARRAY if element is TensorDesc else Kind.UINT_ARRAY), False, None
    if isinstance(hint, type):
        if issubclass(hint, TensorDesc):
            return Kind.TENSOR, False, None
        if getattr(hint, "registry", None) is getattr(desc_type, "registry", ()):   # an OperatorDesc
            return Kind.OPERATOR, False, None
        if issubclass(hint, ScaleBias):
            return Kind.SCALE_BIAS, False, None
        if issubclass(hint, Size2D):
            return Kind.SIZE_2D, False, None
        if issubclass(hint, enum.Enum):
            return Kind.ENUM, False, hint
        if issubclass(hint, bool):
            return Kind.BOOL, False, None
        if issubclass(hint, int):
            return Kind.UINT, False, None
        if issubclass(hint, float):
            return Kind.FLOAT, False, None
    raise TypeError(f"no JSON field kind for the type hint {hint!r}")
