"""The doc pages' tensor-support tables, as data, and the one helper that reads them.

A table is a tuple of rows, one per feature level where the page lists one. A row lists, per tensor (DML
field name), the allowed dimension counts and data types. The row in force at a device's level is the highest
row at or below it (feature levels are cumulative).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .errors import UnsupportedError, ValidationError
from .tensor import TensorDesc
from .types import DataType, FeatureLevel

F32, F16, F64 = DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64
U8, U16, U32, U64 = DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64
I8, I16, I32, I64 = DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64
L = FeatureLevel


@dataclass(frozen=True)
class TensorSupport:
    """Allowed dimension counts (inclusive range) and data types of one tensor."""

    min_rank: int
    max_rank: int
    data_types: tuple[DataType, ...]

    def ranks_text(self) -> str:
        if self.min_rank == self.max_rank:
            return f"exactly {self.min_rank}"
        return f"{self.min_rank} to {self.max_rank}"


@dataclass(frozen=True)
class SupportRow:
    level: FeatureLevel
    tensors: Mapping[str, TensorSupport]


def row(level: FeatureLevel, ranks: int | tuple[int, int], **tensors: tuple[DataType, ...]) -> SupportRow:
    """One table row: the same dimension counts for every tensor, data types per tensor field."""
    low, high = (ranks, ranks) if isinstance(ranks, int) else ranks
    return SupportRow(level, {name: TensorSupport(low, high, types) for name, types in tensors.items()})


SupportTable = tuple[SupportRow, ...]


def check_support(table: SupportTable, operator: str, level: FeatureLevel,
                  tensors: Mapping[str, TensorDesc | None]) -> None:
    """Raises unless every present tensor fits the row in force at `level`.

    UnsupportedError when a higher level's row would accept the tensors (naming the lowest such level),
    ValidationError when no level would.
    """
    rows = sorted(table, key=lambda support_row: support_row.level)
    if level < rows[0].level:
        raise UnsupportedError(f"{operator} needs feature level {rows[0].level}; the device is at {level}")
    current = max((support_row for support_row in rows if support_row.level <= level),
                  key=lambda support_row: support_row.level)
    problem = _first_problem(current, tensors)
    if problem is None:
        return
    subject, allowed = problem
    for higher in rows:
        if higher.level > level and _first_problem(higher, tensors) is None:
            raise UnsupportedError(f"{operator}: {subject} needs feature level {higher.level}; "
                                   f"the device is at {level}")
    raise ValidationError(f"{operator}: {subject} is not supported; at feature level {level} {allowed}")


def _first_problem(support_row: SupportRow, tensors: Mapping[str, TensorDesc | None]) -> tuple[str, str] | None:
    """(the tensor field and value that do not fit, what the row allows), or None when all fit."""
    present = [(name, desc) for name, desc in tensors.items() if desc is not None]
    for name, desc in present:  # data types first: a type no level accepts is the more telling problem
        support = support_row.tensors[name]
        if desc.data_type not in support.data_types:
            allowed = ", ".join(data_type.name for data_type in support.data_types)
            return f"{name}.DataType {desc.data_type.name}", f"it must be one of {allowed}"
    for name, desc in present:
        support = support_row.tensors[name]
        if not support.min_rank <= desc.dimension_count <= support.max_rank:
            return f"{name}.DimensionCount {desc.dimension_count}", f"it must be {support.ranks_text()}"
    return None


def describe(table: SupportTable, level: FeatureLevel) -> Mapping[str, TensorSupport] | None:
    """The row in force at `level` (None below the operator's first level), for listings."""
    rows = [support_row for support_row in table if support_row.level <= level]
    return max(rows, key=lambda support_row: support_row.level).tensors if rows else None


def per_element(table: SupportTable, array: str, count: int) -> SupportTable:
    """The table with the entry of the tensor array `array` repeated for each of its `count` elements, so that a
    message names the element (InputTensors[2]); the other entries stay as they are."""
    return tuple(
        replace(support_row, tensors={
            **{name: support for name, support in support_row.tensors.items() if name != array},
            **{f"{array}[{index}]": support_row.tensors[array] for index in range(count)},
        })
        for support_row in table)
