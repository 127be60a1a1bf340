"""DML_OPERATOR_GATHER and DML_OPERATOR_GATHER_ELEMENTS: elements of the input picked along Axis by the indices.

Both are GATHER_ND1 over a re-strided view of the same memory (no copy): `as_gather_nd1` gives the equivalent
descriptor, which every backend's GATHER_ND1 kernels run (clamping, the debug device's check and the 64-bit index
reads included), so the index rules are GATHER_ND1's (README, Rulings): a negative index of a signed type counts
from the end of Axis once, one still out of range is clamped, and a `debug=True` device refuses it, naming its
position in IndicesTensor and its value, before anything is written.

* GATHER: `output[pre, j..., post] = input[pre, indices[j...], post]` is GATHER_ND1 with the dimensions before
  Axis as batch dimensions (the indices broadcast over them with stride 0) and one coordinate per tuple (a
  trailing size-1 dimension of stride 0).
* GATHER_ELEMENTS: `output[i] = input[i with i[Axis] = indices[i]]` is GATHER_ND1 with Axis moved last in all three
  tensors (strides permuted) and every other dimension a batch dimension.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import prod
from typing import ClassVar

from ..convert import to_uint
from ..errors import BindingError, UnsupportedError, ValidationError
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, L, SupportTable, check_support, row
from ..tensor import MAX_DIMENSION_COUNT, TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .gather_nd1 import GatherNd1OperatorDesc

_INDEX_TYPES = (I64, I32, U64, U32)
_TWO = (F32, F16)
_EIGHT = (F32, F16, I32, I16, I8, U32, U16, U8)
_ELEVEN = (F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)

#: The GATHER page's support tables (the operator starts at 1_0).
GATHER_SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=_ELEVEN, IndicesTensor=_INDEX_TYPES, OutputTensor=_ELEVEN),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, IndicesTensor=_INDEX_TYPES, OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, IndicesTensor=(U32,), OutputTensor=_EIGHT),
    row(L.LEVEL_1_0, 4, InputTensor=_TWO, IndicesTensor=(U32,), OutputTensor=_TWO),
)
#: The GATHER_ELEMENTS page's support tables (the operator starts at 2_1).
GATHER_ELEMENTS_SUPPORT: SupportTable = (
    row(L.LEVEL_4_1, (1, 8), InputTensor=_ELEVEN, IndicesTensor=_INDEX_TYPES, OutputTensor=_ELEVEN),
    row(L.LEVEL_3_0, (1, 8), InputTensor=_EIGHT, IndicesTensor=_INDEX_TYPES, OutputTensor=_EIGHT),
    row(L.LEVEL_2_1, 4, InputTensor=_EIGHT, IndicesTensor=(U32,), OutputTensor=_EIGHT),
)
#: Per operator, by its DML name (OperatorDesc.support_tables lists them).
SUPPORT: dict[str, SupportTable] = {"GATHER": GATHER_SUPPORT, "GATHER_ELEMENTS": GATHER_ELEMENTS_SUPPORT}


def _view(tensor: TensorDesc, sizes: list[int], strides: list[int]) -> TensorDesc:
    """The same memory as `tensor`, seen with other sizes and strides (the same bytes bound)."""
    return TensorDesc(tensor.data_type, tuple(sizes), tuple(strides),
                      total_tensor_size_in_bytes=tensor.total_tensor_size_in_bytes)


def _check_axis(operator: str, axis: int, rank: int) -> None:
    if axis >= rank:
        raise ValidationError(f"{operator}: Axis is {axis}; it must be in [0, {rank - 1}] (InputTensor.DimensionCount "
                              f"is {rank})")


def gather_output_sizes(source: TensorDesc, indices: TensorDesc, axis: int, index_dimensions: int
                        ) -> list[int]:
    """The page's `{input[0..Axis], indices' last IndexDimensions sizes, input[Axis+1..]}`, every dimension of it
    (InputTensor.DimensionCount + IndexDimensions - 1): right-aligned into the output's DimensionCount, the leading
    ones beyond it must be 1 (cropped) and missing ones are 1."""
    rank = source.dimension_count
    meaningful = list(indices.sizes[rank - index_dimensions:]) if index_dimensions else []
    return [*source.sizes[:axis], *meaningful, *source.sizes[axis + 1:]]


@dataclass(frozen=True)
class _AlongAxis(OperatorDesc):
    """What GATHER and GATHER_ELEMENTS share: InputTensor, IndicesTensor, OutputTensor and Axis, their slots, the
    support table, one rank and the input's type, and Axis in range."""

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    KERNEL_MODULE: ClassVar[str] = "gather"

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        return {"": SUPPORT[cls.OPERATOR_TYPE.name]}

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        for name in ("InputTensor", "IndicesTensor", "OutputTensor"):
            require_tensor(operator, name, getattr(self, _FIELDS[name]))
        object.__setattr__(self, "axis", to_uint(operator, "Axis", self.axis))

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("IndicesTensor", self.indices_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        self.check_tensors()
        operator, source, indices, result = self.label, self.input_tensor, self.indices_tensor, self.output_tensor
        check_support(SUPPORT[self.OPERATOR_TYPE.name], operator, level,
                      {"InputTensor": source, "IndicesTensor": indices, "OutputTensor": result})
        for name, tensor in (("IndicesTensor", indices), ("OutputTensor", result)):
            check_same_rank(operator, name, tensor, "InputTensor", source)
        check_same_data_type(operator, "OutputTensor", result, "InputTensor", source)
        _check_axis(operator, self.axis, source.dimension_count)


@dataclass(frozen=True)
class GatherOperatorDesc(_AlongAxis):
    """DML_GATHER_OPERATOR_DESC: `output[...] = input[..., indices[...], ...]` along Axis.

    OutputTensor.Sizes = `{InputTensor.Sizes[0..Axis], IndicesTensor's last IndexDimensions sizes,
    InputTensor.Sizes[Axis+1..]}`, right-aligned into the common DimensionCount: leading 1s cropped, missing ones 1.

    >>> table = TensorDesc(DataType.FLOAT32, [4])                               # [11, 12, 13, 14]
    >>> picks = TensorDesc(DataType.UINT32, [5])                                # [3, 1, 3, 0, 2]
    >>> GatherOperatorDesc(table, picks, TensorDesc(DataType.FLOAT32, [5]), 0, 1)  # -> [14, 12, 14, 11, 13]
    GatherOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    index_dimensions: int

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.GATHER

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "index_dimensions", to_uint(self.OPERATOR_TYPE.dml_name, "IndexDimensions",
                                                             self.index_dimensions))

    def validate(self, level: FeatureLevel) -> None:
        super().validate(level)
        operator, source, indices, result = self.label, self.input_tensor, self.indices_tensor, self.output_tensor
        rank = source.dimension_count
        if self.index_dimensions > rank:
            raise ValidationError(f"{operator}: IndexDimensions is {self.index_dimensions}; it must be in [0, "
                                  f"{rank}] (IndicesTensor.DimensionCount)")
        for dim in range(rank - self.index_dimensions):
            if indices.sizes[dim] != 1:
                raise ValidationError(f"{operator}: IndicesTensor.Sizes[{dim}] is {indices.sizes[dim]}; with "
                                      f"IndexDimensions {self.index_dimensions} its leading "
                                      f"{rank - self.index_dimensions} dimension(s) are irrelevant and must be 1")
        expected = self.expected_output_sizes()
        if list(result.sizes) != expected:
            full = gather_output_sizes(source, indices, self.axis, self.index_dimensions)
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must be {expected} "
                                  f"(InputTensor.Sizes before Axis, IndicesTensor's last IndexDimensions sizes, "
                                  f"InputTensor.Sizes after Axis: {full}, right-aligned into {rank} dimensions, "
                                  f"only leading 1s cropped)")

    def expected_output_sizes(self) -> list[int]:
        """The page's sizes right-aligned into the DimensionCount; where a cropped leading size is not 1, the full
        list (which no DimensionCount-sized output matches)."""
        rank = self.input_tensor.dimension_count
        full = gather_output_sizes(self.input_tensor, self.indices_tensor, self.axis, self.index_dimensions)
        if len(full) > rank:
            if any(size != 1 for size in full[:len(full) - rank]):
                return full
            return full[len(full) - rank:]
        return [1] * (rank - len(full)) + full

    def as_gather_nd1(self) -> GatherNd1OperatorDesc:
        """The GATHER_ND1 descriptor over the same memory that computes this one (the module's docstring)."""
        source, indices, result = self.input_tensor, self.indices_tensor, self.output_tensor
        rank, axis, count = source.dimension_count, self.axis, self.index_dimensions
        full = gather_output_sizes(source, indices, axis, count)
        shift = len(full) - rank      # full's position f is the output's dimension f - shift (cropped: size 1)
        out_strides = [result.element_strides[f - shift] if f >= shift else 0 for f in range(len(full))]
        in_sizes, in_strides, lead = source.sizes, source.element_strides, rank - count
        ix_sizes, ix_strides = indices.sizes[lead:], indices.element_strides[lead:]
        post_out = [out_strides[d + count - 1] if d > axis else 0 for d in range(rank)]
        pre = _groups(range(axis), in_sizes, (in_strides, out_strides))
        post = _groups(range(axis + 1, rank), in_sizes, (in_strides, post_out))
        ix = _groups(range(count), ix_sizes, (ix_strides, out_strides[axis:]))
        pre_in = _dims(pre, in_sizes, in_strides)
        views = ([*pre_in, (in_sizes[axis], in_strides[axis]), *_dims(post, in_sizes, in_strides)],
                 [*((size, 0) for size, _ in pre_in), *_dims(ix, ix_sizes, ix_strides), (1, 0)],
                 [*_dims(pre, in_sizes, out_strides), *_dims(ix, ix_sizes, out_strides[axis:]),
                  *_dims(post, in_sizes, post_out)])
        positions = tuple((len(pre) + g, tuple(lead + k for k in group)) for g, group in enumerate(ix))
        return _as_gather_nd1(self, views, len(pre), positions)


@dataclass(frozen=True)
class GatherElementsOperatorDesc(_AlongAxis):
    """DML_GATHER_ELEMENTS_OPERATOR_DESC: `output[i, j, k] = input[i, indices[i, j, k], k]` (Axis 1).

    IndicesTensor.Sizes match InputTensor.Sizes but along Axis; OutputTensor.Sizes are IndicesTensor.Sizes.

    >>> table = TensorDesc(DataType.FLOAT32, [3, 3])                          # [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    >>> picks = TensorDesc(DataType.UINT32, [2, 3])                           # [[1, 2, 0], [2, 0, 0]]
    >>> GatherElementsOperatorDesc(table, picks, TensorDesc(DataType.FLOAT32, [2, 3]), 0)  # [[4, 8, 3], [7, 2, 3]]
    GatherElementsOperatorDesc(input_tensor=TensorDesc(...), ...)
    """

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.GATHER_ELEMENTS

    def validate(self, level: FeatureLevel) -> None:
        super().validate(level)
        source, indices, result = self.input_tensor, self.indices_tensor, self.output_tensor
        operator = self.label
        for dim, (size, own) in enumerate(zip(indices.sizes, source.sizes, strict=True)):
            if dim != self.axis and size != own:
                raise ValidationError(f"{operator}: IndicesTensor.Sizes[{dim}] is {size}; it must equal "
                                      f"InputTensor.Sizes[{dim}] ({own}): the sizes match but along Axis "
                                      f"({self.axis})")
        if list(result.sizes) != list(indices.sizes):
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(result.sizes)}; it must equal "
                                  f"IndicesTensor.Sizes ({list(indices.sizes)})")

    def as_gather_nd1(self) -> GatherNd1OperatorDesc:
        """The GATHER_ND1 descriptor over the same memory that computes this one (the module's docstring)."""
        source, indices, result = self.input_tensor, self.indices_tensor, self.output_tensor
        axis, sizes = self.axis, indices.sizes
        in_strides, ix_strides, out_strides = source.element_strides, indices.element_strides, result.element_strides
        others = _groups([dim for dim in range(source.dimension_count) if dim != axis], sizes,
                         (in_strides, ix_strides, out_strides))
        views = ([*_dims(others, sizes, in_strides), (source.sizes[axis], in_strides[axis])],
                 [*_dims(others, sizes, ix_strides), (sizes[axis], ix_strides[axis]), (1, 0)],
                 [*_dims(others, sizes, out_strides), (sizes[axis], out_strides[axis])])
        positions = (*((g, group) for g, group in enumerate(others)), (len(others), (axis,)))
        return _as_gather_nd1(self, views, len(others), positions)


def _groups(dims: Iterable[int], sizes: Sequence[int], strides: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """`dims` in order, size-1 ones dropped, neighbours merged into one group where contiguous in every stride list
    (the outer stride is the inner one times the inner size): the views' dimensions, so that they stay within 8."""
    groups: list[list[int]] = []
    for dim in dims:
        if sizes[dim] == 1:
            continue
        if groups and all(stride[groups[-1][-1]] == stride[dim] * sizes[dim] for stride in strides):
            groups[-1].append(dim)
        else:
            groups.append([dim])
    return [tuple(group) for group in groups]


def _dims(groups: Sequence[tuple[int, ...]], sizes: Sequence[int], strides: Sequence[int]) -> list[tuple[int, int]]:
    """(size, stride) of each group: the product of its sizes, its innermost stride."""
    return [(prod(sizes[dim] for dim in group), strides[group[-1]]) for group in groups]


def _as_gather_nd1(desc: GatherOperatorDesc | GatherElementsOperatorDesc,
                   views: tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]], batch: int,
                   positions: tuple[tuple[int, tuple[int, ...]], ...]) -> GatherAsGatherNd1:
    """GatherAsGatherNd1 over the (size, stride) dimensions of the input, indices and output views, right-aligned
    into their common DimensionCount with leading 1s."""
    tensors = (desc.input_tensor, desc.indices_tensor, desc.output_tensor)
    rank = max(len(dims) for dims in views)
    if rank > MAX_DIMENSION_COUNT:
        raise UnsupportedError(f"{desc.label}: these tensors' layouts need GATHER_ND1 over {rank} dimensions (Axis "
                               f"{desc.axis}, strides that do not merge); at most {MAX_DIMENSION_COUNT} are supported")
    padded = [[(1, 0)] * (rank - len(dims)) + dims for dims in views]
    source, indices, result = (_view(tensor, [size for size, _ in dims], [stride for _, stride in dims])
                               for tensor, dims in zip(tensors, padded, strict=True))
    return GatherAsGatherNd1(source, indices, result, len(views[0]), len(views[1]), batch,
                             original=desc.OPERATOR_TYPE, axis=desc.axis, positions=positions,
                             real_sizes=tuple(desc.indices_tensor.sizes))


_FIELDS = {"InputTensor": "input_tensor", "IndicesTensor": "indices_tensor", "OutputTensor": "output_tensor"}


@dataclass(frozen=True)
class GatherAsGatherNd1(GatherNd1OperatorDesc):
    """GATHER or GATHER_ELEMENTS run as GATHER_ND1: GATHER_ND1's fields over re-strided views, the original
    operator's name and Axis, `positions` ((the view's index dimension, the original IndicesTensor dimensions
    merged into it) pairs) and the original IndicesTensor.Sizes, so that a debug device's refusal names the original
    position. Not registered: it defines no OPERATOR_TYPE of its own."""

    KERNEL_MODULE: ClassVar[str] = "gather_nd1"   # Dask dispatches it per chunk as it is

    original: OperatorType = OperatorType.GATHER
    axis: int = 0
    positions: tuple[tuple[int, tuple[int, ...]], ...] = ()
    real_sizes: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.original.dml_name

    def validate(self, level: FeatureLevel) -> None:
        """GATHER_ND1's rules for the view, at a level that has every type: the original descriptor was validated
        at the device's level (Dask validates each chunk's view, and the original operator may predate GATHER_ND1)."""
        super().validate(max(level, FeatureLevel.LEVEL_4_1))

    def index_refusal(self, logical: list[int], value: int, size: int, allowed: str) -> BindingError | None:
        position = [0] * len(self.real_sizes)
        start = self.indices_tensor.dimension_count - self.indices_dimension_count
        for view_dim, dims in self.positions:
            coordinate = logical[start + view_dim]
            for dim in reversed(dims):
                position[dim] = coordinate % self.real_sizes[dim]
                coordinate //= self.real_sizes[dim]
        return BindingError(f"{self.label}: IndicesTensor{position} is {value}, out of range: it indexes InputTensor "
                            f"dimension {self.axis} (Axis, size {size}), so it must be in {allowed}; the debug "
                            f"device refuses it (a release device clamps it), and nothing was written")
