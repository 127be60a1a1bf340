"""DML_OPERATOR_GATHER_ND: gathers whole sub-blocks of the input at coordinate tuples read from the indices.

Version 0 of GATHER_ND1 (FL 2_1): the same struct without BatchDimensionCount, so exactly GATHER_ND1 with no batch
dimensions (DIGEST 2.5), with its own page's support tables: exactly 4 dimensions and UINT32 indices at 2_1, 1 to
8 dimensions and 32/64-bit indices from 3_0, and never the 64-bit data types (its page has no 4_1 row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_uint
from ..support import F16, F32, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, require_tensor
from .gather_nd1 import GatherNd1OperatorDesc, check_gather, gather_output_sizes

_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)

#: The GATHER_ND page's support tables (the operator starts at 2_1).
SUPPORT: SupportTable = (
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, IndicesTensor=(I64, I32, U64, U32), OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, IndicesTensor=(U32,), OutputTensor=_EIGHT),
)


@dataclass(frozen=True)
class GatherNdOperatorDesc(OperatorDesc):
    """DML_GATHER_ND_OPERATOR_DESC: `output[...] = input[indices[...]]`.

    With R the common DimensionCount, `in = InputTensor.Sizes[R-InputDimensionCount:]`, `ix =
    IndicesTensor.Sizes[R-IndicesDimensionCount:]` and K = ix[-1] coordinates per tuple (1 <= K <=
    InputDimensionCount), OutputTensor.Sizes = `ix[:-1] + in[K:]`, right-aligned into R dimensions with leading 1s
    (the page's example; its formula contradicts it, as GATHER_ND1's does: DIGEST 2.5). Signed coordinates count
    from the end once; coordinates still out of range are clamped, or refused on a debug device (DECISIONS 21).

    >>> table = TensorDesc(DataType.FLOAT32, [2, 2])                       # [[0, 1], [2, 3]]
    >>> rows = TensorDesc(DataType.UINT32, [2, 1])                         # [[1], [0]]
    >>> GatherNdOperatorDesc(table, rows, TensorDesc(DataType.FLOAT32, [2, 2]), 2, 2)  # -> [[2, 3], [0, 1]]
    GatherNdOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    input_dimension_count: int
    indices_dimension_count: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.GATHER_ND

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "IndicesTensor", self.indices_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        for name, field in (("InputDimensionCount", "input_dimension_count"),
                            ("IndicesDimensionCount", "indices_dimension_count")):
            object.__setattr__(self, field, to_uint(operator, name, getattr(self, field)))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("IndicesTensor", self.indices_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        self.check_tensors()
        check_gather(self.label, level, SUPPORT, self.input_tensor, self.indices_tensor, self.output_tensor,
                     self.input_dimension_count, self.indices_dimension_count, None)

    def expected_output_sizes(self) -> tuple[int, ...]:
        """`ix[:-1] + in[K:]`, right-aligned with leading 1s (meaningful once the counts are in range)."""
        return gather_output_sizes(self.input_tensor, self.indices_tensor, self.input_dimension_count,
                                   self.indices_dimension_count, 0)

    def as_gather_nd1(self) -> GatherNd1OperatorDesc:
        """The GATHER_ND1 descriptor with BatchDimensionCount 0 that computes this one, for the kernels; it keeps
        this operator's name in what its kernels say (a debug device's refusal of an index)."""
        return _GatherNdAsGatherNd1(self.input_tensor, self.indices_tensor, self.output_tensor,
                                    self.input_dimension_count, self.indices_dimension_count, 0)


class _GatherNdAsGatherNd1(GatherNd1OperatorDesc):
    """GATHER_ND run as GATHER_ND1 (no batch): GATHER_ND1's fields, GATHER_ND's label. Not registered: it defines
    no OPERATOR_TYPE of its own, so readers of DML names never see it."""

    @property
    def label(self) -> str:
        return GatherNdOperatorDesc.OPERATOR_TYPE.dml_name
