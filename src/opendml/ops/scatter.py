"""DML_OPERATOR_SCATTER_ELEMENTS (alias DML_OPERATOR_SCATTER) and DML_OPERATOR_SCATTER_ND: the input copied to the
output, then elements (or whole sub-blocks) of the output overwritten by the updates at positions the indices name.

Each scatter is the transpose of a GATHER_ND1 over views of the same memory: the gather that would read
`updates[position] = output[tuple]` (input: OutputTensor, indices: IndicesTensor, output: UpdatesTensor).
`as_gather_nd1` gives that descriptor (ScatterAsGatherNd1); every backend plans a scatter from it
(backends/scatter_plan.py: batch, index positions, the tuple's coordinates, the rest written whole) and refuses its
indices on a debug device with GATHER_ND1's check, worded for the scatter:

* SCATTER_ND: GATHER_ND1 with no batch dimensions, as it is (the page's UpdatesTensor.Sizes are GATHER_ND1's output
  sizes for the same counts).
* SCATTER_ELEMENTS: GATHER_ND1 with Axis moved last in all three tensors (strides permuted), every other dimension a
  batch dimension and one coordinate per tuple (as GATHER_ELEMENTS runs, ops/gather.py).

Index rules (README, Rulings): a negative index of a signed type counts from the end once (the pages, from 3_0); an
update whose index is still out of range is skipped (nothing outside the output is written), and a `debug=True`
device refuses it before anything is written, naming its IndicesTensor position and value. Repeated indices: the
last update in the row-major order of UpdatesTensor wins, on every backend and every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import to_uint
from ..errors import BindingError, ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .gather import _dims, _groups, _view
from .gather_nd1 import GatherNd1OperatorDesc, gather_output_sizes

_INDEX_TYPES = (I64, I32, U64, U32)
_TWO = (F32, F16)
_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_ELEVEN = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)


def _rows(first: FeatureLevel) -> SupportTable:
    """The pages' rows from 2_1 on (both pages list the same ones), and SCATTER's 1_0 row where `first` is 1_0."""
    rows = [row(L.LEVEL_4_1, (1, 8), InputTensor=_ELEVEN, IndicesTensor=_INDEX_TYPES, UpdatesTensor=_ELEVEN,
                OutputTensor=_ELEVEN),
            row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, IndicesTensor=_INDEX_TYPES, UpdatesTensor=_EIGHT,
                OutputTensor=_EIGHT),
            row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, IndicesTensor=(U32,), UpdatesTensor=_EIGHT, OutputTensor=_EIGHT)]
    if first == L.LEVEL_1_0:
        rows.append(row(L.LEVEL_1_0, 4, InputTensor=_TWO, IndicesTensor=(U32,), UpdatesTensor=_TWO,
                        OutputTensor=_TWO))
    return tuple(rows)


#: The SCATTER (SCATTER_ELEMENTS) page's support tables (the operator starts at 1_0).
SCATTER_ELEMENTS_SUPPORT: SupportTable = _rows(L.LEVEL_1_0)
#: The SCATTER_ND page's support tables (the operator starts at 2_1).
SCATTER_ND_SUPPORT: SupportTable = _rows(L.LEVEL_2_1)
#: Per operator, by its DML name (OperatorDesc.support_tables lists them).
SUPPORT: dict[str, SupportTable] = {"SCATTER_ELEMENTS": SCATTER_ELEMENTS_SUPPORT, "SCATTER_ND": SCATTER_ND_SUPPORT}

_FIELDS = {"InputTensor": "input_tensor", "IndicesTensor": "indices_tensor", "UpdatesTensor": "updates_tensor",
           "OutputTensor": "output_tensor"}


@dataclass(frozen=True)
class _Scatter(OperatorDesc):
    """What SCATTER_ELEMENTS and SCATTER_ND share: the four tensors and their slots, the support table, one rank,
    one data type, and OutputTensor.Sizes = InputTensor.Sizes."""

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    updates_tensor: TensorDesc
    output_tensor: TensorDesc

    KERNEL_MODULE: ClassVar[str] = "scatter"

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        return {"": SUPPORT[cls.OPERATOR_TYPE.name]}

    def __post_init__(self) -> None:
        for name, field in _FIELDS.items():
            require_tensor(self.OPERATOR_TYPE.dml_name, name, getattr(self, field))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("IndicesTensor", self.indices_tensor),
                ("UpdatesTensor", self.updates_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        self.check_tensors()
        operator, source = self.label, self.input_tensor
        check_support(SUPPORT[self.OPERATOR_TYPE.name], operator, level,
                      {name: getattr(self, field) for name, field in _FIELDS.items()})
        for name in ("IndicesTensor", "UpdatesTensor", "OutputTensor"):
            check_same_rank(operator, name, getattr(self, _FIELDS[name]), "InputTensor", source)
        for name in ("UpdatesTensor", "OutputTensor"):
            check_same_data_type(operator, name, getattr(self, _FIELDS[name]), "InputTensor", source)
        if list(self.output_tensor.sizes) != list(source.sizes):
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(self.output_tensor.sizes)}; it must "
                                  f"equal InputTensor.Sizes ({list(source.sizes)})")


@dataclass(frozen=True)
class ScatterElementsOperatorDesc(_Scatter):
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC (= DML_SCATTER_OPERATOR_DESC): `output = input`, then
    `output[i with i[Axis] = indices[i]] = updates[i]` for every position i of IndicesTensor.

    IndicesTensor.Sizes match InputTensor.Sizes but along Axis; UpdatesTensor.Sizes are IndicesTensor.Sizes;
    OutputTensor has InputTensor's Sizes and DataType.

    >>> x = TensorDesc(DataType.FLOAT32, [5])                                     # [0, 1, 2, 3, 4]
    >>> ix, up = TensorDesc(DataType.UINT32, [4]), TensorDesc(DataType.FLOAT32, [4])  # [3, 1, 3, 0], [5, 6, 7, 8]
    >>> ScatterElementsOperatorDesc(x, ix, up, TensorDesc(DataType.FLOAT32, [5]), 0)  # -> [8, 6, 2, 7, 4]
    ScatterElementsOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    axis: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.SCATTER_ELEMENTS

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "axis", to_uint(self.OPERATOR_TYPE.dml_name, "Axis", self.axis))

    def validate(self, level: FeatureLevel) -> None:
        super().validate(level)
        operator, source, indices = self.label, self.input_tensor, self.indices_tensor
        rank = source.dimension_count
        if self.axis >= rank:
            raise ValidationError(f"{operator}: Axis is {self.axis}; it must be in [0, {rank - 1}] "
                                  f"(OutputTensor.DimensionCount is {rank})")
        for dim, (size, own) in enumerate(zip(indices.sizes, source.sizes, strict=True)):
            if dim != self.axis and size != own:
                raise ValidationError(f"{operator}: IndicesTensor.Sizes[{dim}] is {size}; it must equal "
                                      f"InputTensor.Sizes[{dim}] ({own}): the sizes match but along Axis "
                                      f"({self.axis})")
        if list(self.updates_tensor.sizes) != list(indices.sizes):
            raise ValidationError(f"{operator}: UpdatesTensor.Sizes is {list(self.updates_tensor.sizes)}; it must "
                                  f"equal IndicesTensor.Sizes ({list(indices.sizes)})")

    def as_gather_nd1(self) -> ScatterAsGatherNd1:
        """The GATHER_ND1 over views of OutputTensor, IndicesTensor and UpdatesTensor whose reads are this scatter's
        writes (the module's docstring): Axis moved last, the other dimensions batch dimensions."""
        source, target, indices, updates = self.input_tensor, self.output_tensor, self.indices_tensor, \
            self.updates_tensor
        axis, sizes = self.axis, indices.sizes
        in_strides, out_strides = source.element_strides, target.element_strides
        ix_strides, up_strides = indices.element_strides, updates.element_strides
        others = _groups([dim for dim in range(target.dimension_count) if dim != axis], sizes,
                         (in_strides, out_strides, ix_strides, up_strides))
        along = (target.sizes[axis], out_strides[axis])
        views = ([*_dims(others, sizes, out_strides), along],
                 [*_dims(others, sizes, ix_strides), (sizes[axis], ix_strides[axis]), (1, 0)],
                 [*_dims(others, sizes, up_strides), (sizes[axis], up_strides[axis])],
                 [*_dims(others, sizes, in_strides), (target.sizes[axis], in_strides[axis])])
        rank = max(len(dims) for dims in views)
        padded = [[(1, 0)] * (rank - len(dims)) + dims for dims in views]
        viewed = [_view(tensor, [size for size, _ in dims], [stride for _, stride in dims])
                  for tensor, dims in zip((target, indices, updates, source), padded, strict=True)]
        positions = (*((g, group) for g, group in enumerate(others)), (len(others), (axis,)))
        return ScatterAsGatherNd1(viewed[0], viewed[1], viewed[2], len(views[0]), len(views[1]), len(others),
                                  original=self.OPERATOR_TYPE, source=viewed[3], axis=axis, positions=positions,
                                  real_sizes=tuple(sizes))


@dataclass(frozen=True)
class ScatterNdOperatorDesc(_Scatter):
    """DML_SCATTER_ND_OPERATOR_DESC: `output = input`, then `output[indices[j..., :], ...] = updates[j..., ...]`.

    With R the common DimensionCount, I = InputDimensionCount, J = IndicesDimensionCount and K =
    IndicesTensor.Sizes[R-1] (coordinates per tuple), the meaningful sizes are `in = InputTensor.Sizes[R-I:]` and
    `ix = IndicesTensor.Sizes[R-J:]`, and UpdatesTensor.Sizes = `ix[:-1] + in[K:]`, right-aligned into R dimensions
    with leading 1s (GATHER_ND1's output sizes for the same counts).

    >>> x = TensorDesc(DataType.FLOAT32, [1, 8])                                  # [1, 2, 3, 4, 5, 6, 7, 8]
    >>> ix, up = TensorDesc(DataType.UINT32, [4, 1]), TensorDesc(DataType.FLOAT32, [1, 4])  # [[4], [3], [1], [7]]
    >>> ScatterNdOperatorDesc(x, ix, up, TensorDesc(DataType.FLOAT32, [1, 8]), 1, 2)  # -> [1, 11, 3, 10, 9, 6, 7, 12]
    ScatterNdOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    input_dimension_count: int
    indices_dimension_count: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.SCATTER_ND

    def __post_init__(self) -> None:
        super().__post_init__()
        operator = self.OPERATOR_TYPE.dml_name
        for name, field in (("InputDimensionCount", "input_dimension_count"),
                            ("IndicesDimensionCount", "indices_dimension_count")):
            object.__setattr__(self, field, to_uint(operator, name, getattr(self, field)))

    def validate(self, level: FeatureLevel) -> None:
        super().validate(level)
        operator, source, indices = self.label, self.input_tensor, self.indices_tensor
        rank = source.dimension_count
        counts = (("InputDimensionCount", self.input_dimension_count, "InputTensor", source),
                  ("IndicesDimensionCount", self.indices_dimension_count, "IndicesTensor", indices))
        for name, count, tensor_name, _ in counts:
            if not 1 <= count <= rank:
                raise ValidationError(f"{operator}: {name} is {count}; it must be in [1, {rank}] "
                                      f"({tensor_name}.DimensionCount)")
        for name, count, tensor_name, tensor in counts:
            for dim in range(rank - count):
                if tensor.sizes[dim] != 1:
                    raise ValidationError(f"{operator}: {tensor_name}.Sizes[{dim}] is {tensor.sizes[dim]}; with "
                                          f"{name} {count} its leading {rank - count} dimension(s) are irrelevant "
                                          f"and must be 1")
        tuple_size = indices.sizes[-1]
        if not 1 <= tuple_size <= self.input_dimension_count:
            raise ValidationError(f"{operator}: IndicesTensor.Sizes[{rank - 1}] (the index tuple size) is "
                                  f"{tuple_size}; it must be in [1, {self.input_dimension_count}] "
                                  f"(InputDimensionCount)")
        expected = list(self.expected_updates_sizes())
        if list(self.updates_tensor.sizes) != expected:
            raise ValidationError(f"{operator}: UpdatesTensor.Sizes is {list(self.updates_tensor.sizes)}; it must "
                                  f"be {expected} (IndicesTensor's meaningful sizes but the last, then "
                                  f"InputTensor's meaningful sizes after the first {tuple_size}, right-aligned with "
                                  f"leading 1s)")

    def expected_updates_sizes(self) -> tuple[int, ...]:
        """`ix[:-1] + in[K:]`, right-aligned into the common DimensionCount with leading 1s (longer where it does
        not fit, which no UpdatesTensor matches). Meaningful once the counts are in range."""
        return gather_output_sizes(self.input_tensor, self.indices_tensor, self.input_dimension_count,
                                   self.indices_dimension_count, 0)

    def as_gather_nd1(self) -> ScatterAsGatherNd1:
        """The GATHER_ND1 over OutputTensor, IndicesTensor and UpdatesTensor as they are, without batch dimensions,
        whose reads are this scatter's writes (the module's docstring)."""
        return ScatterAsGatherNd1(self.output_tensor, self.indices_tensor, self.updates_tensor,
                                  self.input_dimension_count, self.indices_dimension_count, 0,
                                  original=self.OPERATOR_TYPE, source=self.input_tensor,
                                  real_sizes=tuple(self.indices_tensor.sizes))


@dataclass(frozen=True)
class ScatterAsGatherNd1(GatherNd1OperatorDesc):
    """A scatter's transposed GATHER_ND1 (input: the scatter's OutputTensor view, output: its UpdatesTensor view),
    the original operator's name, `source` (its InputTensor, seen with the same view as OutputTensor), Axis (-1:
    SCATTER_ND), and for SCATTER_ELEMENTS `positions` ((the view's
    indices dimension, the original IndicesTensor dimensions merged into it) pairs) and the original
    IndicesTensor.Sizes, so that a debug
    device's refusal names the original position. Never validated or dispatched as a gather: backends read its plan
    (backends/plans.gather_plan). Not registered: it defines no OPERATOR_TYPE of its own."""

    original: OperatorType = OperatorType.SCATTER_ND
    source: TensorDesc | None = None      # the scatter's InputTensor, seen as the OutputTensor view is
    axis: int = -1
    positions: tuple[tuple[int, tuple[int, ...]], ...] = ()
    real_sizes: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.original.dml_name

    def index_refusal(self, logical: list[int], value: int, size: int, allowed: str) -> BindingError | None:
        if self.axis < 0:   # SCATTER_ND: the original indices, their position as it is
            position = list(logical)
            dim = self.input_tensor.dimension_count - self.input_dimension_count + logical[-1]
            target = f"coordinate {logical[-1]} of its tuple indexes OutputTensor dimension {dim} (size {size})"
        else:
            position = [0] * len(self.real_sizes)
            start = self.indices_tensor.dimension_count - self.indices_dimension_count
            for view_dim, dims in self.positions:
                coordinate = logical[start + view_dim]
                for dim in reversed(dims):
                    position[dim] = coordinate % self.real_sizes[dim]
                    coordinate //= self.real_sizes[dim]
            target = f"it indexes OutputTensor dimension {self.axis} (Axis, size {size})"
        return BindingError(f"{self.label}: IndicesTensor{position} is {value}, out of range: {target}, so it must "
                            f"be in {allowed}; the debug device refuses it (a release device skips its update), and "
                            f"nothing was written")


#: Either scatter.
ScatterDesc = ScatterElementsOperatorDesc | ScatterNdOperatorDesc
