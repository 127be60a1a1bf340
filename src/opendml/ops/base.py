"""What every operator descriptor shares: tensor slots in binding order, and the shared rule checks.

Every check raises ValidationError with one vocabulary: the operator, the DML field name, the value received
and what is allowed.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ..convert import describe
from ..errors import ValidationError
from ..model.descs import operator_class, read_operator_desc
from ..model.errors import ModelError
from ..support import SupportTable
from ..tensor import MAX_DIMENSION_COUNT, TensorDesc, index_of_last_element
from ..types import FeatureLevel, OperatorType, TensorFlags

# Exact overlap checks enumerate element offsets; past this many elements only the sufficient check runs.
_OVERLAP_ENUMERATION_LIMIT = 1 << 24
#: DECISIONS 2: the index of a tensor's last element must be below this (DML indexes elements with UINT).
ELEMENT_INDEX_LIMIT = 2**32
# Set while a Graph describes its logical tensors (`logical_tensors`): the element limit is then checked later,
# on the tensors a kernel sees (README, Rulings: "Graphs on Dask").
_LOGICAL = contextvars.ContextVar("opendml_logical_tensors", default=False)


@contextlib.contextmanager
def logical_tensors() -> Iterator[None]:
    """Within this block, `check_tensor` checks every rule but the element limit (DECISIONS 2): a graph's tensors
    are logical until a kernel runs on them whole (one machine: `check_element_limit` when the graph first runs
    there) or chunk by chunk (Dask: every chunk's descriptor is checked in full)."""
    token = _LOGICAL.set(True)
    try:
        yield
    finally:
        _LOGICAL.reset(token)


class OperatorDesc(ABC):
    """Base of the operator descriptors (DML_*_OPERATOR_DESC).

    Every concrete subclass registers itself by its OPERATOR_TYPE, so that readers of DML names (the JSON
    model runner, `opendml ops`) find it without a list kept by hand.
    """

    OPERATOR_TYPE: ClassVar[OperatorType]
    registry: ClassVar[dict[OperatorType, type[OperatorDesc]]] = {}
    #: The descriptors that exist only as a FusedActivation (GEMM's SOFTMAX and SOFTMAX1: ops/activation_softmax.py),
    #: for readers of a nested operator by its DML name; not operators of their own, so not in `registry`.
    fused_only: ClassVar[dict[OperatorType, type[OperatorDesc]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "OPERATOR_TYPE" in cls.__dict__:
            OperatorDesc.registry[cls.OPERATOR_TYPE] = cls

    @classmethod
    def from_dml(cls, operator_type: OperatorType | str, fields: Mapping[str, Any]) -> OperatorDesc:
        """The descriptor of any registered operator from its DML-named fields, as a DxDispatch dispatchable's "desc"
        holds them: `OperatorDesc.from_dml("DML_OPERATOR_ELEMENT_WISE_ADD1", {"ATensor": {"DataType": "FLOAT32",
        "Sizes": [3]}, ..., "FusedActivation": {"Type": "ACTIVATION_ELU", "Alpha": 0.5}})`. `operator_type` is an
        OperatorType or its name (DML_OPERATOR_REDUCE or REDUCE). The JSON model reader takes the same path
        (model/descs.py), with the same rules and messages, each rooted at the operator's DML name
        ("DML_OPERATOR_REDUCE.Axes[0]: ..."); a problem raises ValidationError. Called on a subclass, the operator
        must be of that class."""
        label = f"{cls.__name__}.from_dml"
        try:
            if isinstance(operator_type, OperatorType) and operator_type in OperatorDesc.registry:
                desc_type = OperatorDesc.registry[operator_type]
            elif isinstance(operator_type, str):
                desc_type = operator_class(OperatorDesc.registry, operator_type, f"{label}: operator_type")
            else:
                raise ModelError(f"{label}: operator_type", f"{describe(operator_type)}; it must be an operator "
                                 f"opendml implements: an OperatorType or its name (DML_OPERATOR_REDUCE or REDUCE)")
            if not issubclass(desc_type, cls):
                raise ModelError(f"{label}: operator_type", f"{desc_type.OPERATOR_TYPE.dml_name} is not a "
                                 f"{cls.__name__}; call OperatorDesc.from_dml for any operator")
            path = desc_type.OPERATOR_TYPE.dml_name
            if not isinstance(fields, Mapping):
                raise ModelError(path, f"fields are {describe(fields)}; they must be a dict of DML field names")
            desc: OperatorDesc = read_operator_desc(path, desc_type, dict(fields))
        except ModelError as error:
            raise ValidationError(str(error)) from None
        return desc

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        """The page's support tables, by title ("" when the operator has one): the class's own SUPPORT (where a
        module holds several pages' operators), else its module's SUPPORT, either one table or a mapping of tables
        (per function, per activation, ...)."""
        own = getattr(cls, "SUPPORT", None)
        if own is not None:
            return {"": own}
        tables = getattr(sys.modules[cls.__module__], "SUPPORT", None)
        if tables is None:
            return {}
        if isinstance(tables, dict):
            return {getattr(key, "name", str(key)): table for key, table in tables.items()}
        return {"": tables}

    @property
    def label(self) -> str:
        """How messages name this operator, e.g. "DML_OPERATOR_REDUCE (Function SUM)"."""
        return self.OPERATOR_TYPE.dml_name

    @abstractmethod
    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        """(DML field name, tensor or None if absent) for each input, in binding order."""

    @abstractmethod
    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        """(DML field name, tensor) for each output, in binding order."""

    @abstractmethod
    def validate(self, level: FeatureLevel) -> None:
        """Raises ValidationError or UnsupportedError on the first broken rule at this feature level."""

    def in_place_pairs(self) -> tuple[tuple[str, str], ...]:
        """(input field, output field) pairs that may be bound to the same memory: the operators whose page "supports
        in-place execution, meaning that the output tensor is permitted to alias InputTensor during binding". None
        by default."""
        return ()

    def check_tensors(self) -> None:
        """The rules every tensor of every operator follows (DECISIONS 1-4)."""
        for name, desc in self.input_slots():
            if desc is not None:
                check_tensor(self.label, name, desc, is_output=False)
        for name, output in self.output_slots():
            check_tensor(self.label, name, output, is_output=True)


def check_tensor(operator: str, name: str, desc: TensorDesc, *, is_output: bool) -> None:
    rank = desc.dimension_count
    if not 1 <= rank <= MAX_DIMENSION_COUNT:
        raise ValidationError(f"{operator}: {name}.DimensionCount is {rank}; it must be 1 to {MAX_DIMENSION_COUNT}")
    for index, size in enumerate(desc.sizes):
        if size == 0:
            raise ValidationError(f"{operator}: {name}.Sizes[{index}] is 0; every size must be at least 1")
    if not _LOGICAL.get():
        check_element_limit(operator, name, desc)
    minimum = desc.calc_size_in_bytes()
    total = desc.total_tensor_size_in_bytes
    if total < minimum:
        raise ValidationError(f"{operator}: {name}.TotalTensorSizeInBytes is {total}; it must be at least "
                              f"{minimum} (DMLCalcBufferTensorSize)")
    if total % 4:
        raise ValidationError(f"{operator}: {name}.TotalTensorSizeInBytes is {total}; it must be a multiple of 4")
    alignment = desc.guaranteed_base_offset_alignment
    element_size = max(desc.data_type.element_size, 1)
    if alignment and (alignment & (alignment - 1) or alignment < element_size):
        raise ValidationError(f"{operator}: {name}.GuaranteedBaseOffsetAlignment is {alignment}; it must be 0 or a "
                              f"power of two of at least the element size ({element_size})")
    if is_output and desc.flags & TensorFlags.OWNED_BY_DML:
        raise ValidationError(f"{operator}: {name}.Flags is OWNED_BY_DML; only input tensors may be owned by DML")
    if is_output and strides_overlap(desc.sizes, desc.element_strides):
        raise ValidationError(f"{operator}: {name}.Strides {list(desc.element_strides)} map two elements of Sizes "
                              f"{list(desc.sizes)} onto the same memory; an output's elements must not overlap")


def check_element_limit(operator: str, name: str, desc: TensorDesc) -> None:
    """DECISIONS 2: a kernel indexes the tensor's elements with 32-bit unsigned integers."""
    last = index_of_last_element(desc.sizes, desc.strides)
    if last >= ELEMENT_INDEX_LIMIT:
        raise ValidationError(f"{operator}: {name} has its last element at index {last}; with Sizes "
                              f"{list(desc.sizes)} and Strides {list(desc.element_strides)} it must be below 2^32")


def check_same_rank(operator: str, name: str, tensor: TensorDesc, reference_name: str, reference: TensorDesc
                    ) -> None:
    """`name` has the DimensionCount of `reference_name`."""
    if tensor.dimension_count != reference.dimension_count:
        raise ValidationError(f"{operator}: {name}.DimensionCount is {tensor.dimension_count}; it must equal "
                              f"{reference_name}.DimensionCount ({reference.dimension_count})")


def check_same_data_type(operator: str, name: str, tensor: TensorDesc, reference_name: str, reference: TensorDesc
                         ) -> None:
    """`name` has the DataType of `reference_name`."""
    if tensor.data_type != reference.data_type:
        raise ValidationError(f"{operator}: {name}.DataType is {tensor.data_type.name}; it must equal "
                              f"{reference_name}.DataType ({reference.data_type.name})")


def strides_overlap(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two different logical elements share one memory element.

    Sufficient test first: sorted by stride, each dimension steps past everything the smaller ones reach.
    When that fails, the offsets are enumerated (tensors up to 2^24 elements); larger ones are refused.
    """
    dims = sorted((stride, size) for size, stride in zip(sizes, strides, strict=True) if size > 1)
    reach = 0
    for stride, size in dims:
        if stride <= reach:
            break
        reach += (size - 1) * stride
    else:
        return False
    if any(stride == 0 for stride, _ in dims):
        return True
    count = math.prod(size for _, size in dims)
    if count > _OVERLAP_ENUMERATION_LIMIT:
        return True
    offsets = np.zeros(1, dtype=np.int64)
    for stride, size in dims:
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
    return bool(np.unique(offsets).size != count)


def check_axes(operator: str, axes: Sequence[int], rank: int, tensor: str, field: str = "Axes") -> None:
    """Axes: non-empty, unique, each in [0, rank) (DECISIONS 9)."""
    if not axes:
        raise ValidationError(f"{operator}: {field} is empty; it must name at least one axis of {tensor}")
    seen: set[int] = set()
    for index, axis in enumerate(axes):
        if not 0 <= axis < rank:
            raise ValidationError(f"{operator}: {field}[{index}] is {axis}; it must be in [0, {rank - 1}] for "
                                  f"{tensor} of {rank} dimensions")
        if axis in seen:
            raise ValidationError(f"{operator}: {field}[{index}] is {axis}, which appears twice; axes must be unique")
        seen.add(axis)


def require_tensor(operator: str, field: str, value: object) -> TensorDesc:
    """A tensor field: a TensorDesc, or a ValidationError naming the field and what it received."""
    if not isinstance(value, TensorDesc):
        raise ValidationError(f"{operator}: {field} is {describe(value)}; it must be a TensorDesc")
    return value
