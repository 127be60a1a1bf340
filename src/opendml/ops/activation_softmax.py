"""DML_ACTIVATION_SOFTMAX_OPERATOR_DESC and DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC, as GEMM's FusedActivation.

From FL 6_1 GEMM fuses either softmax (the fused-activation pages; DIGEST 2.4): given with InputTensor and
OutputTensor absent, it normalizes GEMM's result, before it is stored, as

    f(x)[i] = exp(x[i] - max(x)) / sum_j exp(x[j] - max(x))

over one set of axes of the OutputTensor, separately for every coordinate of the other axes: SOFTMAX over the last
axis (the N of [..., M, N]: each row of every matrix), SOFTMAX1 over its Axes (indices of OutputTensor's dimensions,
unique, at least one). opendml implements them fused only: as standalone operators they are not registered
(`OperatorDesc.from_dml` and the JSON reader refuse them by name), and a device refuses them (UnsupportedError).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..convert import to_uint_list
from ..errors import UnsupportedError
from ..tensor import TensorDesc
from ..types import FeatureLevel, OperatorType
from .base import OperatorDesc, check_axes, require_tensor

#: The level from which GEMM fuses SOFTMAX and SOFTMAX1.
FUSED_SOFTMAX_LEVEL = FeatureLevel.LEVEL_6_1


@dataclass(frozen=True)
class _FusedSoftmax(OperatorDesc):
    """What the two softmax descriptors share: the keyword-only tensors a fused activation leaves absent."""

    input_tensor: TensorDesc | None = field(default=None, kw_only=True)
    output_tensor: TensorDesc | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        for name, value in (("InputTensor", self.input_tensor), ("OutputTensor", self.output_tensor)):
            if value is not None:
                require_tensor(self.label, name, value)

    @property
    def is_fused_form(self) -> bool:
        return self.input_tensor is None and self.output_tensor is None

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [] if self.output_tensor is None else [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        raise UnsupportedError(f"{self.label} is not implemented as a standalone operator; opendml implements it "
                               f"as GEMM's FusedActivation only (feature level {FUSED_SOFTMAX_LEVEL})")

    def softmax_axes(self, rank: int) -> tuple[int, ...]:
        """The axes of a rank-`rank` output that the softmax normalizes over."""
        raise NotImplementedError

    def check_fused_axes(self, operator: str, rank: int) -> None:
        """The rules of the fused form's axes, for an OutputTensor of `rank` dimensions."""


@dataclass(frozen=True)
class ActivationSoftmaxOperatorDesc(_FusedSoftmax):
    """DML_ACTIVATION_SOFTMAX_OPERATOR_DESC: softmax over the last axis. Fused into GEMM (FL 6_1): each row of the
    result, f(x)[m, n] = exp(x[m, n] - max_n x[m, :]) / sum_n' exp(x[m, n'] - max_n x[m, :]).

    >>> GemmOperatorDesc(a, b, None, out, fused_activation=ActivationSoftmaxOperatorDesc())
    """

    def softmax_axes(self, rank: int) -> tuple[int, ...]:
        return (rank - 1,)


@dataclass(frozen=True)
class ActivationSoftmax1OperatorDesc(_FusedSoftmax):
    """DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC: softmax over Axes (AxisCount is len(axes)). Fused into GEMM (FL
    6_1): the axes index GEMM's OutputTensor dimensions.

    >>> GemmOperatorDesc(a, b, None, out, fused_activation=ActivationSoftmax1OperatorDesc(axes=[2, 3]))
    """

    axes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "axes", to_uint_list(self.label, "Axes", self.axes))

    def softmax_axes(self, rank: int) -> tuple[int, ...]:
        return tuple(self.axes)

    def check_fused_axes(self, operator: str, rank: int) -> None:
        check_axes(operator, self.axes, rank, "OutputTensor", "FusedActivation.Axes")


# Set after the classes: not in OperatorDesc.registry (standalone SOFTMAX and SOFTMAX1 are not implemented).
ActivationSoftmaxOperatorDesc.OPERATOR_TYPE = OperatorType.ACTIVATION_SOFTMAX
ActivationSoftmax1OperatorDesc.OPERATOR_TYPE = OperatorType.ACTIVATION_SOFTMAX1

#: The fused-only descriptors by operator type, for readers of a nested FusedActivation by its DML name (also
#: `OperatorDesc.fused_only`, which model/descs.py reads without importing this module).
FUSED_ONLY_CLASSES: dict[OperatorType, type[OperatorDesc]] = {
    OperatorType.ACTIVATION_SOFTMAX: ActivationSoftmaxOperatorDesc,
    OperatorType.ACTIVATION_SOFTMAX1: ActivationSoftmax1OperatorDesc,
}
OperatorDesc.fused_only.update(FUSED_ONLY_CLASSES)
