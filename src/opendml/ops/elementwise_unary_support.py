"""The element-wise UNARY operators' doc-page data: tensor support, introducing level, in-place permission.

Plain data for the element-wise engine (issue 26), keyed by the DML name without its ELEMENT_WISE_ prefix
("IDENTITY", "CLIP1", "QUANTIZE_LINEAR"). Read from the DML_ELEMENT_WISE_*_OPERATOR_DESC pages:

- SUPPORT: each page's "Tensor support" table, one row per feature level the page lists (the row in force at a
  device's level is the highest one at or below it). Tensor names are DML field names.
- LEVEL: the level that introduced the operator (the page's "Availability").
- IN_PLACE: the operators whose page says "This operator supports in-place execution, meaning that OutputTensor is
  permitted to alias InputTensor during binding". IS_NAN, IS_INFINITY, BIT_COUNT, QUANTIZE_LINEAR and
  DEQUANTIZE_LINEAR pages do not say it.

The pages' other constraints (which tensors share DataType, DimensionCount and Sizes; optional tensors) are not
here: QUANTIZE_LINEAR's and DEQUANTIZE_LINEAR's ZeroPointTensor is "Optional input" from 6_2 only (a plain input
before); IS_NAN, IS_INFINITY, BIT_COUNT, QUANTIZE_LINEAR and DEQUANTIZE_LINEAR let the output's DataType differ from
the input's.
"""

from __future__ import annotations

from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportRow, SupportTable, row
from ..types import DataType, FeatureLevel

L = FeatureLevel

_FLOATS = (F32, F16)
_INTS_32 = (I32, I16, I8, U32, U16, U8)                       # the 8- to 32-bit integers
_NUMERIC_32 = (F32, F16, *_INTS_32)                           # FLOAT32, FLOAT16 and the 8- to 32-bit integers
_NUMERIC_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)  # the same with INT64 and UINT64
_ALL = (F64, *_NUMERIC_64)                                    # every type, FLOAT64 included (4_1 bit operators)
_UINTS_32 = (U32, U16, U8)


def _same(level: FeatureLevel, ranks: int | tuple[int, int], types: tuple[DataType, ...]) -> SupportRow:
    """A row whose InputTensor and OutputTensor take the same dimension counts and data types."""
    return row(level, ranks, InputTensor=types, OutputTensor=types)


def _float_only(first: FeatureLevel) -> SupportTable:
    """The FLOAT32/FLOAT16 operators' table: exactly 4 dimensions from `first`, 1 to 8 from 3_0."""
    return (_same(L.LEVEL_3_0, (1, 8), _FLOATS), _same(first, 4, _FLOATS))


def _quantize_row(level: FeatureLevel, ranks: int | tuple[int, int], inputs: tuple[DataType, ...],
                  scales: tuple[DataType, ...], quantized: tuple[DataType, ...]) -> SupportRow:
    return row(level, ranks, InputTensor=inputs, ScaleTensor=scales,
               ZeroPointTensor=quantized, OutputTensor=quantized)


def _dequantize_row(level: FeatureLevel, ranks: int | tuple[int, int], quantized: tuple[DataType, ...],
                    floats: tuple[DataType, ...]) -> SupportRow:
    return row(level, ranks, InputTensor=quantized, ScaleTensor=floats,
               ZeroPointTensor=quantized, OutputTensor=floats)


SUPPORT: dict[str, SupportTable] = {
    "IDENTITY": (_same(L.LEVEL_4_1, (1, 8), _ALL), _same(L.LEVEL_3_0, (1, 8), _NUMERIC_32),
                 _same(L.LEVEL_2_1, (4, 5), _NUMERIC_32), _same(L.LEVEL_1_0, (4, 5), _FLOATS)),
    "ABS": (_same(L.LEVEL_4_1, (1, 8), (F32, F16, I64, I32, I16, I8)),
            _same(L.LEVEL_3_0, (1, 8), (F32, F16, I32, I16, I8)),
            _same(L.LEVEL_2_1, 4, (F32, F16, I32, I16, I8)), _same(L.LEVEL_1_0, 4, _FLOATS)),
    **{name: _float_only(L.LEVEL_1_0)
       for name in ("ACOS", "ASIN", "ATAN", "CEIL", "COS", "EXP", "FLOOR", "LOG", "RECIP", "SIN", "SQRT", "TAN",
                    "CONSTANT_POW")},
    **{name: _float_only(L.LEVEL_2_0) for name in ("ERF", "SINH", "COSH", "TANH", "ASINH", "ACOSH", "ATANH")},
    "ROUND": _float_only(L.LEVEL_2_1),
    "CLIP": (_same(L.LEVEL_5_0, (1, 8), _NUMERIC_64), _same(L.LEVEL_3_0, (1, 8), _NUMERIC_32),
             _same(L.LEVEL_2_1, 4, _NUMERIC_32), _same(L.LEVEL_1_0, 4, _FLOATS)),
    "CLIP1": (_same(L.LEVEL_5_0, (1, 8), _NUMERIC_64),),
    "THRESHOLD": (_same(L.LEVEL_3_0, (1, 8), _NUMERIC_32), _same(L.LEVEL_2_1, 4, _NUMERIC_32),
                  _same(L.LEVEL_1_0, 4, _FLOATS)),
    "LOGICAL_NOT": (_same(L.LEVEL_3_0, (1, 8), (U32, U8)), _same(L.LEVEL_2_0, 4, (U32, U8)),
                    _same(L.LEVEL_1_0, 4, (U32,))),
    "SIGN": (_same(L.LEVEL_4_1, (1, 8), _NUMERIC_64), _same(L.LEVEL_3_0, (1, 8), _NUMERIC_32),
             _same(L.LEVEL_2_1, 4, _NUMERIC_32), _same(L.LEVEL_2_0, 4, _FLOATS)),
    "IS_NAN": (row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=(U32, U8)),
               row(L.LEVEL_2_0, 4, InputTensor=_FLOATS, OutputTensor=(U32, U8))),
    "IS_INFINITY": (row(L.LEVEL_3_0, (1, 8), InputTensor=_FLOATS, OutputTensor=(U8,)),
                    row(L.LEVEL_2_1, 4, InputTensor=_FLOATS, OutputTensor=(U8,))),
    "BIT_NOT": (_same(L.LEVEL_4_1, (1, 8), _ALL), _same(L.LEVEL_3_0, (1, 8), _UINTS_32)),
    "BIT_COUNT": (row(L.LEVEL_4_1, (1, 8), InputTensor=_ALL, OutputTensor=(U32, U8)),
                  row(L.LEVEL_3_0, (1, 8), InputTensor=_UINTS_32, OutputTensor=(U32, U8))),
    "NEGATE": (_same(L.LEVEL_5_0, (1, 8), (F32, F16, I64, I32, I16, I8)),),
    # 6_2 differs from 6_0 only in ZeroPointTensor's kind ("Optional input"); the rows list the same types.
    "QUANTIZE_LINEAR": (_quantize_row(L.LEVEL_6_2, (1, 8), (F32, F16, I32), _FLOATS, (I8, U8)),
                        _quantize_row(L.LEVEL_6_0, (1, 8), (F32, F16, I32), _FLOATS, (I8, U8)),
                        _quantize_row(L.LEVEL_3_0, (1, 8), (F32, I32), (F32,), (I8, U8)),
                        _quantize_row(L.LEVEL_2_1, 4, (F32, I32), (F32,), (I8, U8)),
                        _quantize_row(L.LEVEL_1_0, 4, (F32,), (F32,), (U8,))),
    "DEQUANTIZE_LINEAR": (_dequantize_row(L.LEVEL_6_2, (1, 8), _INTS_32, _FLOATS),
                          _dequantize_row(L.LEVEL_6_0, (1, 8), _INTS_32, _FLOATS),
                          _dequantize_row(L.LEVEL_3_0, (1, 8), _INTS_32, (F32,)),
                          _dequantize_row(L.LEVEL_2_1, 4, _INTS_32, (F32,)),
                          _dequantize_row(L.LEVEL_1_0, 4, (U8,), (F32,))),
}

#: The feature level that introduced each operator (its page's "Availability").
LEVEL: dict[str, FeatureLevel] = {
    **{name: L.LEVEL_1_0
       for name in ("IDENTITY", "ABS", "ACOS", "ASIN", "ATAN", "CEIL", "COS", "EXP", "FLOOR", "LOG", "RECIP", "SIN",
                    "SQRT", "TAN", "CLIP", "THRESHOLD", "CONSTANT_POW", "LOGICAL_NOT", "QUANTIZE_LINEAR",
                    "DEQUANTIZE_LINEAR")},
    **{name: L.LEVEL_2_0 for name in ("ERF", "SINH", "COSH", "TANH", "ASINH", "ACOSH", "ATANH", "SIGN", "IS_NAN")},
    **{name: L.LEVEL_2_1 for name in ("IS_INFINITY", "ROUND")},
    **{name: L.LEVEL_3_0 for name in ("BIT_NOT", "BIT_COUNT")},
    **{name: L.LEVEL_5_0 for name in ("CLIP1", "NEGATE")},
}

#: The operators whose page lets OutputTensor alias InputTensor.
IN_PLACE: frozenset[str] = frozenset(LEVEL) - {"IS_NAN", "IS_INFINITY", "BIT_COUNT", "QUANTIZE_LINEAR",
                                               "DEQUANTIZE_LINEAR"}
