"""The element-wise binary and ternary operators' doc-page data (issue 26): support tables, levels, in-place rules.

Plain data copied from each DML_ELEMENT_WISE_*_OPERATOR_DESC page (learn.microsoft.com, the MicrosoftDocs/sdk-api
sources): SUPPORT holds each page's "Tensor support" tables, one row per feature level the page lists (highest
first); LEVEL the feature level that introduced the operator ("Availability"); IN_PLACE the input fields the page
lets OutputTensor alias during binding (empty where the page says nothing about in-place execution: the
LOGICAL_EQUALS/GREATER_THAN/LESS_THAN family and IF). Keys are the DML names without DML_OPERATOR_ELEMENT_WISE_.

Where a page differs from what one might expect, the data follows the page:
- LOGICAL_AND/OR/XOR take and give UINT32 and UINT8 only; the comparisons take any listed type but give
  UINT32 or UINT8 (UINT32 only at 1_0).
- IF's 2_0 row lists FLOAT16 only for ATensor, BTensor and OutputTensor (FLOAT32 arrives at 3_0); ConditionTensor
  is UINT8 at every level.
- POW's ExponentTensor may differ in type from InputTensor from 3_0 on ("until 3_0 must match").
- ATAN_YX and DIFFERENCE_SQUARE pages give one table with no level heading: their introducing level, 3_1.
- LOGICAL_LESS_THAN_OR_EQUAL's page states both 1_0 and 3_0 as its level; its tables (like
  GREATER_THAN_OR_EQUAL's) start at 3_0, which is the level kept here.
"""

from __future__ import annotations

from ..support import (
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    SupportRow,
    SupportTable,
    row,
)
from ..types import DataType, FeatureLevel

L = FeatureLevel

_FLOATS = (F32, F16)
_F_I32 = (F32, F16, I32, U32)
_F_I32_I64 = (F32, F16, I64, I32, U64, U32)
_F_ALL_INT = (F32, F16, I32, I16, I8, U32, U16, U8)
_F_ALL_INT_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_EVERY = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_UINTS = (U32, U16, U8)
_UINTS_64 = (U64, U32, U16, U8)
_BOOL_OUT = (U32, U8)


def _abo(level: FeatureLevel, ranks: int | tuple[int, int], types: tuple[DataType, ...]) -> SupportRow:
    """A row where ATensor, BTensor and OutputTensor share dimension counts and data types."""
    return row(level, ranks, ATensor=types, BTensor=types, OutputTensor=types)


def _compare(level: FeatureLevel, ranks: int | tuple[int, int], inputs: tuple[DataType, ...],
             output: tuple[DataType, ...] = _BOOL_OUT) -> SupportRow:
    """A comparison's row: ATensor and BTensor of `inputs`, OutputTensor of `output`."""
    return row(level, ranks, ATensor=inputs, BTensor=inputs, OutputTensor=output)


_ADD_LIKE: SupportTable = (  # ADD, MULTIPLY
    _abo(L.LEVEL_5_1, (1, 8), _F_ALL_INT_64),
    _abo(L.LEVEL_4_1, (1, 8), _F_I32_I64),
    _abo(L.LEVEL_3_0, (1, 8), _F_I32),
    _abo(L.LEVEL_2_1, (4, 5), _F_I32),
    _abo(L.LEVEL_1_0, (4, 5), _FLOATS),
)
_MAX_MIN: SupportTable = (
    _abo(L.LEVEL_5_0, (1, 8), _F_ALL_INT_64),
    _abo(L.LEVEL_3_0, (1, 8), _F_ALL_INT),
    _abo(L.LEVEL_2_1, 4, _F_ALL_INT),
    _abo(L.LEVEL_1_0, 4, _FLOATS),
)
_LOGICAL: SupportTable = (  # AND, OR, XOR
    _abo(L.LEVEL_3_0, (1, 8), _BOOL_OUT),
    _abo(L.LEVEL_2_0, 4, _BOOL_OUT),
    _abo(L.LEVEL_1_0, 4, (U32,)),
)
_COMPARE: SupportTable = (  # EQUALS, GREATER_THAN, LESS_THAN
    _compare(L.LEVEL_4_1, (1, 8), _F_ALL_INT_64),
    _compare(L.LEVEL_3_0, (1, 8), _F_ALL_INT),
    _compare(L.LEVEL_2_1, 4, _F_ALL_INT),
    _compare(L.LEVEL_2_0, 4, _FLOATS),
    _compare(L.LEVEL_1_0, 4, _FLOATS, (U32,)),
)
_COMPARE_OR_EQUAL: SupportTable = (  # GREATER_THAN_OR_EQUAL, LESS_THAN_OR_EQUAL
    _compare(L.LEVEL_4_1, (1, 8), _F_ALL_INT_64),
    _compare(L.LEVEL_3_0, (1, 8), _F_ALL_INT),
)
_BITWISE: SupportTable = (  # BIT_AND, BIT_OR, BIT_XOR
    _abo(L.LEVEL_4_1, (1, 8), _EVERY),
    _abo(L.LEVEL_3_0, (1, 8), _UINTS),
)
_SHIFT: SupportTable = (  # BIT_SHIFT_LEFT, BIT_SHIFT_RIGHT
    _abo(L.LEVEL_4_1, (1, 8), _UINTS_64),
    _abo(L.LEVEL_3_0, (1, 8), _UINTS),
    _abo(L.LEVEL_2_1, 4, _UINTS),
)
_MODULUS: SupportTable = (  # MODULUS_TRUNCATE, MODULUS_FLOOR
    _abo(L.LEVEL_6_0, (1, 8), _F_ALL_INT_64),
    _abo(L.LEVEL_3_0, (1, 8), _F_ALL_INT),
    _abo(L.LEVEL_2_1, 4, _F_ALL_INT),
)

#: Each page's "Tensor support" tables, highest level first.
SUPPORT: dict[str, SupportTable] = {
    "ADD": _ADD_LIKE,
    "ADD1": (
        _abo(L.LEVEL_3_0, (1, 8), _FLOATS),
        _abo(L.LEVEL_2_0, (4, 5), _FLOATS),
    ),
    "SUBTRACT": (
        _abo(L.LEVEL_5_1, (1, 8), _F_ALL_INT_64),
        _abo(L.LEVEL_4_1, (1, 8), _F_I32_I64),
        _abo(L.LEVEL_3_0, (1, 8), _F_I32),
        _abo(L.LEVEL_2_1, 4, _F_I32),
        _abo(L.LEVEL_1_0, 4, _FLOATS),
    ),
    "MULTIPLY": _ADD_LIKE,
    "DIVIDE": (
        _abo(L.LEVEL_6_0, (1, 8), _F_ALL_INT_64),
        _abo(L.LEVEL_5_1, (1, 8), _F_ALL_INT),
        _abo(L.LEVEL_3_0, (1, 8), _F_I32),
        _abo(L.LEVEL_2_1, 4, _F_I32),
        _abo(L.LEVEL_1_0, 4, _FLOATS),
    ),
    "POW": (
        row(L.LEVEL_3_0, (1, 8), InputTensor=_F_ALL_INT, ExponentTensor=_F_ALL_INT, OutputTensor=_F_ALL_INT),
        row(L.LEVEL_1_0, 4, InputTensor=_FLOATS, ExponentTensor=_FLOATS, OutputTensor=_FLOATS),
    ),
    "MAX": _MAX_MIN,
    "MIN": _MAX_MIN,
    "MEAN": (
        _abo(L.LEVEL_3_0, (1, 8), _F_I32),
        _abo(L.LEVEL_2_1, 4, _F_I32),
        _abo(L.LEVEL_1_0, 4, _FLOATS),
    ),
    "LOGICAL_AND": _LOGICAL,
    "LOGICAL_OR": _LOGICAL,
    "LOGICAL_XOR": _LOGICAL,
    "LOGICAL_EQUALS": _COMPARE,
    "LOGICAL_GREATER_THAN": _COMPARE,
    "LOGICAL_GREATER_THAN_OR_EQUAL": _COMPARE_OR_EQUAL,
    "LOGICAL_LESS_THAN": _COMPARE,
    "LOGICAL_LESS_THAN_OR_EQUAL": _COMPARE_OR_EQUAL,
    "BIT_AND": _BITWISE,
    "BIT_OR": _BITWISE,
    "BIT_XOR": _BITWISE,
    "BIT_SHIFT_LEFT": _SHIFT,
    "BIT_SHIFT_RIGHT": _SHIFT,
    "MODULUS_TRUNCATE": _MODULUS,
    "MODULUS_FLOOR": _MODULUS,
    "ATAN_YX": (_abo(L.LEVEL_3_1, (1, 8), _FLOATS),),
    "DIFFERENCE_SQUARE": (_abo(L.LEVEL_3_1, (1, 8), _F_I32),),
    "IF": (
        row(L.LEVEL_5_0, (1, 8), ConditionTensor=(U8,), ATensor=_EVERY, BTensor=_EVERY, OutputTensor=_EVERY),
        row(L.LEVEL_3_0, (1, 8), ConditionTensor=(U8,), ATensor=_F_ALL_INT, BTensor=_F_ALL_INT,
            OutputTensor=_F_ALL_INT),
        row(L.LEVEL_2_0, 4, ConditionTensor=(U8,), ATensor=(F16,), BTensor=(F16,), OutputTensor=(F16,)),
    ),
}

#: The feature level that introduced each operator (the page's "Availability").
LEVEL: dict[str, FeatureLevel] = {
    "ADD": L.LEVEL_1_0, "ADD1": L.LEVEL_2_0, "SUBTRACT": L.LEVEL_1_0, "MULTIPLY": L.LEVEL_1_0,
    "DIVIDE": L.LEVEL_1_0, "POW": L.LEVEL_1_0, "MAX": L.LEVEL_1_0, "MIN": L.LEVEL_1_0, "MEAN": L.LEVEL_1_0,
    "LOGICAL_AND": L.LEVEL_1_0, "LOGICAL_OR": L.LEVEL_1_0, "LOGICAL_XOR": L.LEVEL_1_0,
    "LOGICAL_EQUALS": L.LEVEL_1_0, "LOGICAL_GREATER_THAN": L.LEVEL_1_0, "LOGICAL_GREATER_THAN_OR_EQUAL": L.LEVEL_3_0,
    "LOGICAL_LESS_THAN": L.LEVEL_1_0, "LOGICAL_LESS_THAN_OR_EQUAL": L.LEVEL_3_0,
    "BIT_AND": L.LEVEL_3_0, "BIT_OR": L.LEVEL_3_0, "BIT_XOR": L.LEVEL_3_0,
    "BIT_SHIFT_LEFT": L.LEVEL_2_1, "BIT_SHIFT_RIGHT": L.LEVEL_2_1,
    "MODULUS_TRUNCATE": L.LEVEL_2_1, "MODULUS_FLOOR": L.LEVEL_2_1,
    "ATAN_YX": L.LEVEL_3_1, "DIFFERENCE_SQUARE": L.LEVEL_3_1, "IF": L.LEVEL_2_0,
}

_AB = ("ATensor", "BTensor")

#: The input fields each page lets OutputTensor alias during binding (empty: the page does not allow in-place).
IN_PLACE: dict[str, tuple[str, ...]] = {
    **{name: _AB for name in (
        "ADD", "ADD1", "SUBTRACT", "MULTIPLY", "DIVIDE", "MAX", "MIN", "MEAN",
        "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "BIT_AND", "BIT_OR", "BIT_XOR",
        "BIT_SHIFT_LEFT", "BIT_SHIFT_RIGHT", "MODULUS_TRUNCATE", "MODULUS_FLOOR", "ATAN_YX", "DIFFERENCE_SQUARE")},
    "POW": ("InputTensor",),
    **{name: () for name in (
        "LOGICAL_EQUALS", "LOGICAL_GREATER_THAN", "LOGICAL_GREATER_THAN_OR_EQUAL",
        "LOGICAL_LESS_THAN", "LOGICAL_LESS_THAN_OR_EQUAL", "IF")},
}
