"""DirectML's enums, with DML's numeric values (DirectML.h)."""

from __future__ import annotations

import enum
from typing import Any, TypeVar

import numpy as np

from .convert import to_dtype_enum, to_enum, to_flags
from .errors import ValidationError

EnumT = TypeVar("EnumT", bound=enum.Enum)


class DataType(enum.IntEnum):
    """DML_TENSOR_DATA_TYPE."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @property
    def bits(self) -> int:
        """Bits per element (0 for UNKNOWN)."""
        return _BITS[self]

    @property
    def element_size(self) -> int:
        """Bytes per element; 0 for UNKNOWN and the packed 4-bit types, as DMLCalcBufferTensorSize has it."""
        return self.bits // 8

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype with the same layout. UNKNOWN, UINT4 and INT4 have none."""
        dtype = _NUMPY.get(self)
        if dtype is None:
            raise ValidationError(f"DataType {self.name} has no NumPy dtype")
        return dtype

    @property
    def is_float(self) -> bool:
        return self in (DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64)

    @classmethod
    def parse(cls, value: object) -> DataType:
        """Accepts a DataType, its value, a NumPy dtype (or a str or type NumPy reads as one), "FLOAT16" or
        "DML_TENSOR_DATA_TYPE_FLOAT16" (to_data_type)."""
        return to_data_type("DataType", "", value)


_BITS = {
    DataType.UNKNOWN: 0, DataType.FLOAT32: 32, DataType.FLOAT16: 16, DataType.UINT32: 32, DataType.UINT16: 16,
    DataType.UINT8: 8, DataType.INT32: 32, DataType.INT16: 16, DataType.INT8: 8, DataType.FLOAT64: 64,
    DataType.UINT64: 64, DataType.INT64: 64, DataType.UINT4: 4, DataType.INT4: 4,
}
_NUMPY: dict[DataType, np.dtype[Any]] = {
    data_type: np.dtype(data_type.name.lower())
    for data_type in DataType
    if data_type not in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4)
}


def to_data_type(label: str, field: str, value: object) -> DataType:
    """A DataType field from a member, its value (0 to 13), its name (FLOAT16 or DML_TENSOR_DATA_TYPE_FLOAT16) or a
    NumPy dtype with a DML data type (np.float16, "float16", "f2", np.dtype("<f2")); never None, which NumPy reads
    as float64 (convert.to_dtype_enum)."""
    return to_dtype_enum(label, field, value, DataType, "DML_TENSOR_DATA_TYPE_", _NUMPY)


class FeatureLevel(enum.IntEnum):
    """DML_FEATURE_LEVEL (0xMm00); ordered, each level includes everything below it."""

    LEVEL_1_0 = 0x1000
    LEVEL_2_0 = 0x2000
    LEVEL_2_1 = 0x2100
    LEVEL_3_0 = 0x3000
    LEVEL_3_1 = 0x3100
    LEVEL_4_0 = 0x4000
    LEVEL_4_1 = 0x4100
    LEVEL_5_0 = 0x5000
    LEVEL_5_1 = 0x5100
    LEVEL_5_2 = 0x5200
    LEVEL_6_0 = 0x6000
    LEVEL_6_1 = 0x6100
    LEVEL_6_2 = 0x6200
    LEVEL_6_3 = 0x6300
    LEVEL_6_4 = 0x6400

    def __str__(self) -> str:
        return self.name[len("LEVEL_"):]

    @classmethod
    def parse(cls, value: object) -> FeatureLevel:
        """Accepts a FeatureLevel, its value, "5_2", "5.2", "LEVEL_5_2" or "DML_FEATURE_LEVEL_5_2"."""
        return to_enum("FeatureLevel", "", value, cls, "DML_FEATURE_LEVEL_", member_prefix="LEVEL_")


class TensorFlags(enum.IntFlag):
    """DML_TENSOR_FLAGS."""

    NONE = 0x0
    OWNED_BY_DML = 0x1

    @classmethod
    def parse(cls, value: object) -> TensorFlags:
        return to_flags("TensorFlags", "", value, cls, "DML_TENSOR_FLAG_")


class ExecutionFlags(enum.IntFlag):
    """DML_EXECUTION_FLAGS."""

    NONE = 0x0
    ALLOW_HALF_PRECISION_COMPUTATION = 0x1
    DISABLE_META_COMMANDS = 0x2
    DESCRIPTORS_VOLATILE = 0x4

    @classmethod
    def parse(cls, value: object) -> ExecutionFlags:
        return to_flags("ExecutionFlags", "", value, cls, "DML_EXECUTION_FLAG_")


class ReduceFunction(enum.IntEnum):
    """DML_REDUCE_FUNCTION."""

    ARGMAX = 0
    ARGMIN = 1
    AVERAGE = 2
    L1 = 3
    L2 = 4
    LOG_SUM = 5
    LOG_SUM_EXP = 6
    MAX = 7
    MIN = 8
    MULTIPLY = 9
    SUM = 10
    SUM_SQUARE = 11

    @classmethod
    def parse(cls, value: object) -> ReduceFunction:
        """A ReduceFunction, its value, "SUM" or "DML_REDUCE_FUNCTION_SUM"."""
        return parse_enum(cls, value, "DML_REDUCE_FUNCTION_")


class AxisDirection(enum.IntEnum):
    """DML_AXIS_DIRECTION: the order in which an operator walks an axis. ARGMIN and ARGMAX return the index of
    the first extreme they meet: the lowest index on ties when INCREASING, the highest when DECREASING."""

    INCREASING = 0
    DECREASING = 1

    @classmethod
    def parse(cls, value: object) -> AxisDirection:
        """An AxisDirection, its value, "DECREASING" or "DML_AXIS_DIRECTION_DECREASING"."""
        return parse_enum(cls, value, "DML_AXIS_DIRECTION_")


class InterpolationMode(enum.IntEnum):
    """DML_INTERPOLATION_MODE (UPSAMPLE_2D): the input element nearest to each output element's centre, or the
    weighted average of the two nearest along each upsampled dimension."""

    NEAREST_NEIGHBOR = 0
    LINEAR = 1

    @classmethod
    def parse(cls, value: object) -> InterpolationMode:
        return parse_enum(cls, value, "DML_INTERPOLATION_MODE_")


class RoundingMode(enum.IntEnum):
    """DML_ROUNDING_MODE (ELEMENT_WISE_ROUND)."""

    HALVES_TO_NEAREST_EVEN = 0
    TOWARD_ZERO = 1
    TOWARD_INFINITY = 2

    @classmethod
    def parse(cls, value: object) -> RoundingMode:
        return parse_enum(cls, value, "DML_ROUNDING_MODE_")


class IsInfinityMode(enum.IntEnum):
    """DML_IS_INFINITY_MODE (ELEMENT_WISE_IS_INFINITY)."""

    EITHER = 0
    POSITIVE = 1
    NEGATIVE = 2

    @classmethod
    def parse(cls, value: object) -> IsInfinityMode:
        return parse_enum(cls, value, "DML_IS_INFINITY_MODE_")


class MatrixTransform(enum.IntEnum):
    """DML_MATRIX_TRANSFORM (GEMM's TransA and TransB)."""

    NONE = 0
    TRANSPOSE = 1

    @classmethod
    def parse(cls, value: object) -> MatrixTransform:
        return parse_enum(cls, value, "DML_MATRIX_TRANSFORM_")


class ConvolutionMode(enum.IntEnum):
    """DML_CONVOLUTION_MODE: CONVOLUTION flips the filter's spatial axes; CROSS_CORRELATION does not."""

    CONVOLUTION = 0
    CROSS_CORRELATION = 1

    @classmethod
    def parse(cls, value: object) -> ConvolutionMode:
        return parse_enum(cls, value, "DML_CONVOLUTION_MODE_")


class ConvolutionDirection(enum.IntEnum):
    """DML_CONVOLUTION_DIRECTION: BACKWARD is the transposed convolution."""

    FORWARD = 0
    BACKWARD = 1

    @classmethod
    def parse(cls, value: object) -> ConvolutionDirection:
        return parse_enum(cls, value, "DML_CONVOLUTION_DIRECTION_")


class DepthSpaceOrder(enum.IntEnum):
    """DML_DEPTH_SPACE_ORDER (DEPTH_TO_SPACE1, SPACE_TO_DEPTH1): the depth dimension's layout, [Batch, (BlockHeight,
    BlockWidth, Channels), Height, Width] (DEPTH_COLUMN_ROW) or [Batch, (Channels, BlockHeight, BlockWidth), Height,
    Width] (COLUMN_ROW_DEPTH)."""

    DEPTH_COLUMN_ROW = 0
    COLUMN_ROW_DEPTH = 1

    @classmethod
    def parse(cls, value: object) -> DepthSpaceOrder:
        return parse_enum(cls, value, "DML_DEPTH_SPACE_ORDER_")


def parse_enum(enum_type: type[EnumT], value: object, prefix: str) -> EnumT:
    """A member of an IntEnum from a member, its value or its (short or DML-prefixed) name (convert.to_enum)."""
    return to_enum(enum_type.__name__, "", value, enum_type, prefix)


class OperatorType(enum.IntEnum):
    """DML_OPERATOR_TYPE values of the operators opendml knows (DIGEST 1.5)."""

    ELEMENT_WISE_IDENTITY = 1
    ELEMENT_WISE_ABS = 2
    ELEMENT_WISE_ACOS = 3
    ELEMENT_WISE_ADD = 4
    ELEMENT_WISE_ASIN = 5
    ELEMENT_WISE_ATAN = 6
    ELEMENT_WISE_CEIL = 7
    ELEMENT_WISE_CLIP = 8
    ELEMENT_WISE_COS = 9
    ELEMENT_WISE_DIVIDE = 10
    ELEMENT_WISE_EXP = 11
    ELEMENT_WISE_FLOOR = 12
    ELEMENT_WISE_LOG = 13
    ELEMENT_WISE_LOGICAL_AND = 14
    ELEMENT_WISE_LOGICAL_EQUALS = 15
    ELEMENT_WISE_LOGICAL_GREATER_THAN = 16
    ELEMENT_WISE_LOGICAL_LESS_THAN = 17
    ELEMENT_WISE_LOGICAL_NOT = 18
    ELEMENT_WISE_LOGICAL_OR = 19
    ELEMENT_WISE_LOGICAL_XOR = 20
    ELEMENT_WISE_MAX = 21
    ELEMENT_WISE_MEAN = 22
    ELEMENT_WISE_MIN = 23
    ELEMENT_WISE_MULTIPLY = 24
    ELEMENT_WISE_POW = 25
    ELEMENT_WISE_CONSTANT_POW = 26
    ELEMENT_WISE_RECIP = 27
    ELEMENT_WISE_SIN = 28
    ELEMENT_WISE_SQRT = 29
    ELEMENT_WISE_SUBTRACT = 30
    ELEMENT_WISE_TAN = 31
    ELEMENT_WISE_THRESHOLD = 32
    ELEMENT_WISE_QUANTIZE_LINEAR = 33
    ELEMENT_WISE_DEQUANTIZE_LINEAR = 34
    ACTIVATION_ELU = 35
    ACTIVATION_HARDMAX = 36
    ACTIVATION_HARD_SIGMOID = 37
    ACTIVATION_IDENTITY = 38
    ACTIVATION_LEAKY_RELU = 39
    ACTIVATION_LINEAR = 40
    ACTIVATION_LOG_SOFTMAX = 41
    ACTIVATION_PARAMETERIZED_RELU = 42
    ACTIVATION_PARAMETRIC_SOFTPLUS = 43
    ACTIVATION_RELU = 44
    ACTIVATION_SCALED_ELU = 45
    ACTIVATION_SCALED_TANH = 46
    ACTIVATION_SIGMOID = 47
    ACTIVATION_SOFTMAX = 48
    ACTIVATION_SOFTPLUS = 49
    ACTIVATION_SOFTSIGN = 50
    ACTIVATION_TANH = 51
    ACTIVATION_THRESHOLDED_RELU = 52
    CONVOLUTION = 53
    GEMM = 54
    REDUCE = 55
    SLICE = 60
    CAST = 61
    SPLIT = 62
    JOIN = 63
    PADDING = 64
    UPSAMPLE_2D = 66
    GATHER = 67
    TILE = 70
    TOP_K = 71
    SPACE_TO_DEPTH = 68
    DEPTH_TO_SPACE = 69
    MEAN_VARIANCE_NORMALIZATION = 73
    ELEMENT_WISE_SIGN = 79
    ELEMENT_WISE_IS_NAN = 80
    ELEMENT_WISE_ERF = 81
    ELEMENT_WISE_SINH = 82
    ELEMENT_WISE_COSH = 83
    ELEMENT_WISE_TANH = 84
    ELEMENT_WISE_ASINH = 85
    ELEMENT_WISE_ACOSH = 86
    ELEMENT_WISE_ATANH = 87
    ELEMENT_WISE_IF = 88
    ELEMENT_WISE_ADD1 = 89
    ACTIVATION_SHRINK = 90
    DIAGONAL_MATRIX = 93
    SCATTER_ELEMENTS = 94
    SCATTER = 94        # DML's alias of SCATTER_ELEMENTS (the same member)
    ONE_HOT = 95
    ELEMENT_WISE_BIT_SHIFT_LEFT = 97
    ELEMENT_WISE_BIT_SHIFT_RIGHT = 98
    ELEMENT_WISE_ROUND = 99
    ELEMENT_WISE_IS_INFINITY = 100
    ELEMENT_WISE_MODULUS_TRUNCATE = 101
    ELEMENT_WISE_MODULUS_FLOOR = 102
    FILL_VALUE_CONSTANT = 103
    FILL_VALUE_SEQUENCE = 104
    CUMULATIVE_SUMMATION = 105
    GATHER_ELEMENTS = 107
    REVERSE_SUBSEQUENCES = 106
    GATHER_ND = 108
    SCATTER_ND = 109
    SLICE1 = 111
    TOP_K1 = 112
    DEPTH_TO_SPACE1 = 113
    SPACE_TO_DEPTH1 = 114
    MEAN_VARIANCE_NORMALIZATION1 = 115
    ELEMENT_WISE_BIT_AND = 121
    ELEMENT_WISE_BIT_OR = 122
    ELEMENT_WISE_BIT_XOR = 123
    ELEMENT_WISE_BIT_NOT = 124
    ELEMENT_WISE_BIT_COUNT = 125
    ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL = 126
    ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL = 127
    ACTIVATION_CELU = 128
    NONZERO_COORDINATES = 133
    ARGMIN = 137
    ARGMAX = 138
    GATHER_ND1 = 140
    ELEMENT_WISE_ATAN_YX = 141
    ELEMENT_WISE_DIFFERENCE_SQUARE = 143
    CUMULATIVE_PRODUCT = 145
    ELEMENT_WISE_CLIP1 = 153
    PADDING1 = 155
    ELEMENT_WISE_NEGATE = 156
    ACTIVATION_GELU = 157
    ACTIVATION_SOFTMAX1 = 158
    DIAGONAL_MATRIX1 = 163
    ACTIVATION_SWISH = 167
    ACTIVATION_HARD_SWISH = 168
    MEAN_VARIANCE_NORMALIZATION2 = 171

    @property
    def dml_name(self) -> str:
        return "DML_OPERATOR_" + self.name

    @classmethod
    def parse(cls, value: object) -> OperatorType:
        """An OperatorType, its value, "REDUCE" or "DML_OPERATOR_REDUCE"."""
        return parse_enum(cls, value, "DML_OPERATOR_")
