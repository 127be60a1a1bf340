"""DML_OPERATOR_GATHER_ND1: gathers whole sub-blocks of the input at coordinate tuples read from the indices."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_uint
from ..errors import BindingError, ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor

_INDEX_TYPES = (I64, I32, U64, U32)
_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_ELEVEN = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)

#: The GATHER_ND1 page's support table (the operator starts at 3_0).
SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=_ELEVEN, IndicesTensor=_INDEX_TYPES, OutputTensor=_ELEVEN),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, IndicesTensor=_INDEX_TYPES, OutputTensor=_EIGHT),
)

#: Index types whose negative values count from the end of their dimension (the page, from 3_0).
SIGNED_INDEX_TYPES = frozenset({I32, I64})


@dataclass(frozen=True)
class GatherNd1OperatorDesc(OperatorDesc):
    """DML_GATHER_ND1_OPERATOR_DESC: `output[batch, ...] = input[batch, indices[batch, ..., :], ...]`.

    With R the common DimensionCount, I = InputDimensionCount, J = IndicesDimensionCount, B =
    BatchDimensionCount and K = IndicesTensor.Sizes[R-1] (coordinates per tuple), the meaningful sizes are
    `in = InputTensor.Sizes[R-I:]` and `ix = IndicesTensor.Sizes[R-J:]`, and
    OutputTensor.Sizes = `ix[:-1] + in[B+K:]`, right-aligned into R dimensions with leading 1s (DIGEST 2.5: the
    page's own formula contradicts its examples). Signed coordinates count from the end once; coordinates still
    out of range are clamped to the nearest valid one, or refused on a debug device (DECISIONS 20-21).

    >>> table = TensorDesc(DataType.FLOAT32, [2, 2])                       # [[0, 1], [2, 3]]
    >>> rows = TensorDesc(DataType.UINT32, [2, 1])                         # [[1], [0]]
    >>> GatherNd1OperatorDesc(table, rows, TensorDesc(DataType.FLOAT32, [2, 2]), 2, 2, 0)  # -> [[2, 3], [0, 1]]
    GatherNd1OperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    input_dimension_count: int
    indices_dimension_count: int
    batch_dimension_count: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.GATHER_ND1

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "IndicesTensor", self.indices_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        for name, field in (("InputDimensionCount", "input_dimension_count"),
                            ("IndicesDimensionCount", "indices_dimension_count"),
                            ("BatchDimensionCount", "batch_dimension_count")):
            object.__setattr__(self, field, to_uint(operator, name, getattr(self, field)))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("IndicesTensor", self.indices_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    @property
    def index_tuple_size(self) -> int:
        """K: the coordinates per index tuple, the indices tensor's last size."""
        return self.indices_tensor.sizes[-1]

    def index_refusal(self, logical: list[int], value: int, size: int, allowed: str) -> BindingError | None:
        """A debug device's refusal of IndicesTensor`logical` (`value`, for an input dimension of `size`), worded
        for the operator this descriptor computes (GATHER and GATHER_ELEMENTS run as GATHER_ND1: ops/gather.py), or
        None for GATHER_ND1's own (plans.gather_out_of_range)."""
        return None

    def validate(self, level: FeatureLevel) -> None:
        self.check_tensors()
        check_gather(self.label, level, SUPPORT, self.input_tensor, self.indices_tensor, self.output_tensor,
                     self.input_dimension_count, self.indices_dimension_count, self.batch_dimension_count)

    def expected_output_sizes(self) -> tuple[int, ...]:
        """DIGEST 2.5: `ix[:-1] + in[B+K:]`, right-aligned into the common DimensionCount with leading 1s.

        Meaningful only once the dimension counts are in range (validate() checks them first).
        """
        return gather_output_sizes(self.input_tensor, self.indices_tensor, self.input_dimension_count,
                                   self.indices_dimension_count, self.batch_dimension_count)


def gather_output_sizes(source: TensorDesc, indices: TensorDesc, input_count: int, indices_count: int,
                        batch: int) -> tuple[int, ...]:
    """DIGEST 2.5: `ix[:-1] + in[B+K:]` (ix, in: the meaningful sizes; K: the indices' last size), right-aligned
    into the common DimensionCount with leading 1s. GATHER_ND is the rule with B = 0."""
    rank = source.dimension_count
    meaningful_input = source.sizes[rank - input_count:]
    meaningful_indices = indices.sizes[rank - indices_count:]
    sizes = (*meaningful_indices[:-1], *meaningful_input[batch + indices.sizes[-1]:])
    return (1,) * (rank - len(sizes)) + sizes


def check_gather(operator: str, level: FeatureLevel, support: SupportTable, source: TensorDesc, indices: TensorDesc,
                 result: TensorDesc, input_count: int, indices_count: int, batch: int | None) -> None:
    """The rules GATHER_ND and GATHER_ND1 share, after the per-tensor checks: the page's support table, then
    ranks, types, dimension counts, tuple size and output sizes. `batch` is BatchDimensionCount, or None for
    GATHER_ND (no batch dimensions: the rules with 0, worded without the field)."""
    check_support(support, operator, level, {"InputTensor": source, "IndicesTensor": indices, "OutputTensor": result})
    rank = source.dimension_count
    for name, tensor in (("IndicesTensor", indices), ("OutputTensor", result)):
        check_same_rank(operator, name, tensor, "InputTensor", source)
    check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)
    for name, count, tensor_name in (("InputDimensionCount", input_count, "InputTensor"),
                                     ("IndicesDimensionCount", indices_count, "IndicesTensor")):
        if not 1 <= count <= rank:
            raise ValidationError(f"{operator}: {name} is {count}; it must be in [1, {rank}] "
                                  f"({tensor_name}.DimensionCount)")
    if batch is not None and batch >= min(input_count, indices_count):
        raise ValidationError(f"{operator}: BatchDimensionCount is {batch}; it must be less than "
                              f"InputDimensionCount ({input_count}) and IndicesDimensionCount ({indices_count})")
    for name, count, tensor in (("InputTensor", input_count, source), ("IndicesTensor", indices_count, indices)):
        field = "InputDimensionCount" if name == "InputTensor" else "IndicesDimensionCount"
        for dim in range(rank - count):
            if tensor.sizes[dim] != 1:
                raise ValidationError(f"{operator}: {name}.Sizes[{dim}] is {tensor.sizes[dim]}; with {field} "
                                      f"{count} its leading {rank - count} dimension(s) are irrelevant and must "
                                      f"be 1")
    batch_count = batch or 0
    tuple_size, most = indices.sizes[-1], input_count - batch_count
    if not 1 <= tuple_size <= most:
        bound = "InputDimensionCount" if batch is None else "InputDimensionCount - BatchDimensionCount"
        raise ValidationError(f"{operator}: IndicesTensor.Sizes[{rank - 1}] (the index tuple size) is "
                              f"{tuple_size}; it must be in [1, {most}] ({bound})")
    if batch is not None:
        input_batch = list(source.sizes[rank - input_count: rank - input_count + batch])
        indices_batch = list(indices.sizes[rank - indices_count: rank - indices_count + batch])
        if input_batch != indices_batch:
            raise ValidationError(f"{operator}: the batch sizes differ: with BatchDimensionCount {batch} "
                                  f"InputTensor's are {input_batch} (Sizes[{rank - input_count}:"
                                  f"{rank - input_count + batch}]) and IndicesTensor's are {indices_batch} "
                                  f"(Sizes[{rank - indices_count}:{rank - indices_count + batch}]); they must be equal")
    meaningful = indices_count - 1 + input_count - batch_count - tuple_size
    if meaningful > rank:
        terms = "InputDimensionCount" if batch is None else "InputDimensionCount - BatchDimensionCount"
        raise ValidationError(f"{operator}: the output has {meaningful} meaningful dimensions "
                              f"(IndicesDimensionCount - 1 + {terms} - tuple size {tuple_size}); "
                              f"OutputTensor.DimensionCount is {rank}")
    expected = list(gather_output_sizes(source, indices, input_count, indices_count, batch_count))
    if list(result.sizes) != expected:
        extra = "tuple dimensions" if batch is None else "batch and tuple dimensions"
        raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must be {expected} "
                              f"(the indices' sizes but the tuple size, then the input's sizes after the {extra}, "
                              f"right-aligned with leading 1s)")

