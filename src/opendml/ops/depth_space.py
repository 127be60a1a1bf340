"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions on the element-wise engine (issue 28, the copy slice).

Each is a permutation of a 4-D tensor: the identity (formula `x`) on a re-strided 6-D view of InputTensor, exactly as
SLICE (ops/copy.py), so no kernel of its own. OutputTensor's 4-D Sizes split into six (`input_view_sizes`), in an
order whose row-major walk is OutputTensor's own, and each of the six steps InputTensor by a multiple of one of its
own element strides (`input_window`, base 0). With b = BlockSize (the pages' and DML_DEPTH_SPACE_ORDER's layouts):

- DEPTH_TO_SPACE: OutputTensor[n, c, h*b + i, w*b + j] = InputTensor[n, d, h, w] with d = (i*b + j)*C + c (DCR,
  DEPTH_COLUMN_ROW: depth [Batch, (BlockHeight, BlockWidth, Channels), Height, Width]) or d = c*b*b + i*b + j (CRD,
  COLUMN_ROW_DEPTH: [Batch, (Channels, BlockHeight, BlockWidth), Height, Width]); C = OutputTensor's channels.
- SPACE_TO_DEPTH: the inverse, OutputTensor[n, d, h, w] = InputTensor[n, c, h*b + i, w*b + j], d as above with C =
  InputTensor's channels.

DEPTH_TO_SPACE and SPACE_TO_DEPTH are the DCR order (their "1" versions' remarks say so). The pages' rules: both
tensors 4-D with the same DataType; OutputTensor.Sizes = {N, C / (b*b), H*b, W*b} (DEPTH_TO_SPACE) or {N, C*b*b, H/b,
W/b} (SPACE_TO_DEPTH). Validation asks BlockSize >= 1 and the divisions exact, so the view is a bijection onto
InputTensor's Sizes: every element read lies inside InputTensor, hence inside its bound memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_enum, to_uint
from ..errors import ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, DepthSpaceOrder, FeatureLevel, OperatorType
from .base import check_same_data_type, check_same_rank, require_tensor
from .generators import GeneratorInfo, GeneratorOperatorDesc

L = FeatureLevel
T = OperatorType

_16 = (F32, F16)
_32 = (F32, F16, I32, I16, I8, U32, U16, U8)
_ALL = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)

#: Each page's "Tensor support", one row per level (the "1" versions' pages list one row, FL 2_1).
SUPPORT: dict[OperatorType, SupportTable] = {
    T.SPACE_TO_DEPTH: (row(L.LEVEL_1_0, 4, InputTensor=_16, OutputTensor=_16),
                       row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),
                       row(L.LEVEL_5_0, 4, InputTensor=_ALL, OutputTensor=_ALL)),
    T.DEPTH_TO_SPACE: (row(L.LEVEL_1_0, 4, InputTensor=_16, OutputTensor=_16),
                       row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),
                       row(L.LEVEL_5_0, 4, InputTensor=_ALL, OutputTensor=_ALL)),
    T.SPACE_TO_DEPTH1: (row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),),
    T.DEPTH_TO_SPACE1: (row(L.LEVEL_2_1, 4, InputTensor=_32, OutputTensor=_32),),
}


@dataclass(frozen=True)
class DepthSpaceInfo(GeneratorInfo):
    """A depth/space operator's row: the identity on InputTensor, with this module's support table."""

    @property
    def support(self) -> SupportTable:
        return SUPPORT[self.operator_type]


INFO: dict[OperatorType, DepthSpaceInfo] = {
    kind: DepthSpaceInfo(kind, "x", (), (("InputTensor", "x"),)) for kind in SUPPORT}


def output_sizes(to_space: bool, sizes: tuple[int, ...], block_size: int) -> tuple[int, ...] | None:
    """OutputTensor's Sizes for an InputTensor of `sizes` (4-D), or None where the block does not divide it."""
    n, c, h, w = sizes
    square = block_size * block_size
    if to_space:
        return None if c % square else (n, c // square, h * block_size, w * block_size)
    return None if h % block_size or w % block_size else (n, c * square, h // block_size, w // block_size)


class DepthSpaceBase(GeneratorOperatorDesc):
    """The four operators: the identity on `input_window`'s 6-D view of InputTensor (KERNEL_MODULE "depth_space": the
    engine's kernels, reading InputTensor through that view)."""

    KERNEL_MODULE: ClassVar[str] = "depth_space"
    TO_SPACE: ClassVar[bool]
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "block_size", to_uint(operator, "BlockSize", self.block_size))
        if hasattr(self, "order"):
            object.__setattr__(self, "order", to_enum(operator, "Order", vars(self)["order"], DepthSpaceOrder,
                                                      "DML_DEPTH_SPACE_ORDER_"))

    @property
    def depth_order(self) -> DepthSpaceOrder:
        """Order (DEPTH_COLUMN_ROW for the versions without one)."""
        order: DepthSpaceOrder = getattr(self, "order", DepthSpaceOrder.DEPTH_COLUMN_ROW)
        return order

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table, BlockSize at least 1 and OutputTensor.Sizes the page's
        (every read inside the input: no stride reads outside its bound memory)."""
        operator = self.label
        self.check_tensors()
        source, output = self.input_tensor, self.output_tensor
        check_same_rank(operator, "OutputTensor", output, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", output, "InputTensor", source)
        check_support(self.INFO.support, operator, level, self.present_tensors())
        b = self.block_size
        if b < 1:
            raise ValidationError(f"{operator}: BlockSize is {b}; it must be at least 1")
        expected = output_sizes(self.TO_SPACE, source.sizes, b)
        if expected is None:
            what = (f"InputTensor.Sizes[1] ({source.sizes[1]}) must be a multiple of BlockSize x BlockSize ({b * b})"
                    if self.TO_SPACE else f"InputTensor.Sizes[2] and [3] ({source.sizes[2]}, {source.sizes[3]}) "
                                          f"must be multiples of BlockSize ({b})")
            raise ValidationError(f"{operator}: BlockSize is {b}; {what}")
        if tuple(output.sizes) != expected:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(output.sizes)}; it must be "
                                  f"{list(expected)} (InputTensor.Sizes {list(source.sizes)}, BlockSize {b})")

    def formula_types(self) -> dict[str, DataType]:
        return {"x": self.input_tensor.data_type}

    def input_view_sizes(self) -> tuple[int, ...]:
        """OutputTensor's Sizes split into six dimensions (row-major, so OutputTensor's own element order):
        DEPTH_TO_SPACE [N, C, H, b, W, b]; SPACE_TO_DEPTH [N, b, b, C, H, W] (DCR) or [N, C, b, b, H, W] (CRD)."""
        n, c, h, w = self.output_tensor.sizes
        b = self.block_size
        if self.TO_SPACE:
            return n, c, h // b, b, w // b, b
        channels = self.input_tensor.sizes[1]
        if self.depth_order is DepthSpaceOrder.DEPTH_COLUMN_ROW:
            return n, b, b, channels, h, w
        return n, channels, b, b, h, w

    def input_window(self) -> tuple[int, tuple[int, ...]]:
        """(0, InputTensor's element strides along `input_view_sizes`' six dimensions)."""
        sn, sc, sh, sw = self.input_tensor.element_strides
        b = self.block_size
        crd = self.depth_order is DepthSpaceOrder.COLUMN_ROW_DEPTH
        if self.TO_SPACE:   # (n, c, h, i, w, j) reads depth d = (i*b + j)*C + c (DCR) or c*b*b + i*b + j (CRD)
            channels = self.output_tensor.sizes[1]
            if crd:
                return 0, (sn, b * b * sc, sh, b * sc, sw, sc)
            return 0, (sn, sc, sh, b * channels * sc, sw, channels * sc)
        if crd:   # (n, c, i, j, h, w) reads InputTensor[n, c, h*b + i, w*b + j]
            return 0, (sn, sc, sh, sw, b * sh, b * sw)
        return 0, (sn, sh, sw, sc, b * sh, b * sw)   # (n, i, j, c, h, w)


@dataclass(frozen=True)
class SpaceToDepthOperatorDesc(DepthSpaceBase):
    """DML_SPACE_TO_DEPTH_OPERATOR_DESC (FL 1_0): blocks of BlockSize x BlockSize moved into depth (DCR order)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.SPACE_TO_DEPTH
    INFO: ClassVar[DepthSpaceInfo] = INFO[T.SPACE_TO_DEPTH]
    TO_SPACE: ClassVar[bool] = False
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int


@dataclass(frozen=True)
class DepthToSpaceOperatorDesc(DepthSpaceBase):
    """DML_DEPTH_TO_SPACE_OPERATOR_DESC (FL 1_0): depth moved into blocks of BlockSize x BlockSize (DCR order)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.DEPTH_TO_SPACE
    INFO: ClassVar[DepthSpaceInfo] = INFO[T.DEPTH_TO_SPACE]
    TO_SPACE: ClassVar[bool] = True
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int


@dataclass(frozen=True)
class SpaceToDepth1OperatorDesc(DepthSpaceBase):
    """DML_SPACE_TO_DEPTH1_OPERATOR_DESC (FL 2_1): SPACE_TO_DEPTH in either DML_DEPTH_SPACE_ORDER."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.SPACE_TO_DEPTH1
    INFO: ClassVar[DepthSpaceInfo] = INFO[T.SPACE_TO_DEPTH1]
    TO_SPACE: ClassVar[bool] = False
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int
    order: DepthSpaceOrder = DepthSpaceOrder.DEPTH_COLUMN_ROW


@dataclass(frozen=True)
class DepthToSpace1OperatorDesc(DepthSpaceBase):
    """DML_DEPTH_TO_SPACE1_OPERATOR_DESC (FL 2_1): DEPTH_TO_SPACE in either DML_DEPTH_SPACE_ORDER."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.DEPTH_TO_SPACE1
    INFO: ClassVar[DepthSpaceInfo] = INFO[T.DEPTH_TO_SPACE1]
    TO_SPACE: ClassVar[bool] = True
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int
    order: DepthSpaceOrder = DepthSpaceOrder.DEPTH_COLUMN_ROW


#: Operator type -> descriptor class.
CLASSES: dict[OperatorType, type[DepthSpaceBase]] = {cls.OPERATOR_TYPE: cls for cls in (
    SpaceToDepthOperatorDesc, DepthToSpaceOperatorDesc, SpaceToDepth1OperatorDesc, DepthToSpace1OperatorDesc)}
