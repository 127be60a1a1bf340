"""DML_OPERATOR_GEMM: Output = FusedActivation(Alpha * op(A) x op(B) + Beta * C), batched over the leading
dimensions.

op(X) is X or its transpose over the last two dimensions (TransA, TransB). The page's rules, per feature level:
- A, B, C and Output have one DataType (FLOAT32 or FLOAT16) and one DimensionCount: exactly 4 at 1_0, 2 to 4 from
  4_0 (the dimensions are { [BatchCount], [ChannelCount], rows, columns });
- op(A) is [..., M, K], op(B) [..., K, N] (the same K), Output [..., M, N];
- the leading (batch) sizes of A and B are Output's: every tensor names the same { BatchCount, ChannelCount }
  (opendml's ruling: a batch broadcasts through zero strides, as in DML, never through a size of 1);
- "CTensor and OutputTensor must have the same Sizes": C broadcasts through its strides (a zero stride) only;
- absent C acts as 0 and Beta is then ignored; FusedActivation: ops/fused_activation.py (GEMM also fuses
  ELEMENT_WISE_CLIP from 6_0, SOFTMAX and SOFTMAX1 from 6_1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import describe, to_enum, to_float
from ..errors import ValidationError
from ..support import F16, F32, L, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import FeatureLevel, MatrixTransform, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .fused_activation import check_fused_activation

_FLOATS = (F32, F16)

#: The page's support tables.
SUPPORT: SupportTable = (
    row(L.LEVEL_4_0, (2, 4), ATensor=_FLOATS, BTensor=_FLOATS, CTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_1_0, 4, ATensor=_FLOATS, BTensor=_FLOATS, CTensor=_FLOATS, OutputTensor=_FLOATS),
)

#: DML field name -> Python field name.
FIELDS: dict[str, str] = {
    "ATensor": "a_tensor", "BTensor": "b_tensor", "CTensor": "c_tensor", "OutputTensor": "output_tensor",
    "TransA": "trans_a", "TransB": "trans_b", "Alpha": "alpha", "Beta": "beta", "FusedActivation": "fused_activation",
}


@dataclass(frozen=True)
class GemmOperatorDesc(OperatorDesc):
    """DML_GEMM_OPERATOR_DESC: Output = FusedActivation(Alpha * op(A) x op(B) + Beta * C).

    >>> a = TensorDesc(DataType.FLOAT32, [1, 1, 2, 3])
    >>> b = TensorDesc(DataType.FLOAT32, [1, 1, 3, 4])
    >>> GemmOperatorDesc(a, b, None, TensorDesc(DataType.FLOAT32, [1, 1, 2, 4]))
    """

    a_tensor: TensorDesc
    b_tensor: TensorDesc
    c_tensor: TensorDesc | None
    output_tensor: TensorDesc
    trans_a: MatrixTransform = MatrixTransform.NONE
    trans_b: MatrixTransform = MatrixTransform.NONE
    alpha: float = 1.0
    beta: float = 1.0
    fused_activation: OperatorDesc | None = None

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.GEMM
    KERNEL_MODULE: ClassVar[str] = "gemm"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "ATensor", self.a_tensor)
        require_tensor(operator, "BTensor", self.b_tensor)
        if self.c_tensor is not None:
            require_tensor(operator, "CTensor", self.c_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        for name, field in (("TransA", "trans_a"), ("TransB", "trans_b")):
            object.__setattr__(self, field, to_enum(operator, name, getattr(self, field), MatrixTransform,
                                                    "DML_MATRIX_TRANSFORM_"))
        object.__setattr__(self, "alpha", to_float(operator, "Alpha", self.alpha))
        object.__setattr__(self, "beta", to_float(operator, "Beta", self.beta))
        check_fused_activation_type(operator, self.fused_activation)

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("ATensor", self.a_tensor), ("BTensor", self.b_tensor), ("CTensor", self.c_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def matrix_sizes(self) -> tuple[tuple[int, ...], int, int, int]:
        """(batch sizes, M, N, K): the batch sizes are OutputTensor's leading sizes (A, B and C broadcast to them), M
        and K op(A)'s last two sizes, N op(B)'s last. Meaningful once validate() has passed."""
        a, b = self.a_tensor.sizes, self.b_tensor.sizes
        m, k = (a[-1], a[-2]) if self.trans_a is MatrixTransform.TRANSPOSE else (a[-2], a[-1])
        n = b[-2] if self.trans_b is MatrixTransform.TRANSPOSE else b[-1]
        return tuple(self.output_tensor.sizes[:-2]), m, n, k

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the support table at `level`, one DataType and DimensionCount, K's agreement,
        the batch and C sizes, the output's sizes and the fused activation (module doc)."""
        operator = self.label
        self.check_tensors()
        tensors = dict((*self.input_slots(), *self.output_slots()))
        check_support(SUPPORT, operator, level, tensors)
        for name, tensor in tensors.items():
            if tensor is not None and name != "ATensor":
                check_same_data_type(operator, name, tensor, "ATensor", self.a_tensor)
                check_same_rank(operator, name, tensor, "ATensor", self.a_tensor)
        batch, m, n, _ = self.matrix_sizes()
        a_k, a_k_dim = self._k_of("A")
        b_k, b_k_dim = self._k_of("B")
        if a_k != b_k:
            raise ValidationError(f"{operator}: BTensor.Sizes[{b_k_dim}] is {b_k}; it must equal "
                                  f"ATensor.Sizes[{a_k_dim}] ({a_k}), the K of both with TransA {self.trans_a.name} "
                                  f"and TransB {self.trans_b.name}")
        expected = [*batch, m, n]
        for name, tensor in (("ATensor", self.a_tensor), ("BTensor", self.b_tensor)):
            if list(tensor.sizes[:-2]) != list(batch):
                raise ValidationError(f"{operator}: {name}.Sizes is {list(tensor.sizes)}; its leading (batch) sizes "
                                      f"must equal OutputTensor's {list(batch)} (broadcast a batch through zero "
                                      f"strides)")
        output = list(self.output_tensor.sizes)
        if output[-2:] != [m, n]:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {output}; it must be {expected} (M {m} from "
                                  f"ATensor with TransA {self.trans_a.name}, N {n} from BTensor with TransB "
                                  f"{self.trans_b.name})")
        if self.c_tensor is not None and list(self.c_tensor.sizes) != output:
            raise ValidationError(f"{operator}: CTensor.Sizes is {list(self.c_tensor.sizes)}; it must equal "
                                  f"OutputTensor.Sizes {output} (broadcast C through zero strides)")
        check_fused_activation(operator, self.fused_activation, level, softmax=True, output_rank=len(output))

    def _k_of(self, which: str) -> tuple[int, int]:
        """(K as A or B gives it, the dimension holding it)."""
        tensor, transform = (self.a_tensor, self.trans_a) if which == "A" else (self.b_tensor, self.trans_b)
        rank = tensor.dimension_count
        transposed = transform is MatrixTransform.TRANSPOSE
        dim = (rank - 2 if transposed else rank - 1) if which == "A" else (rank - 1 if transposed else rank - 2)
        return tensor.sizes[dim], dim


def check_fused_activation_type(operator: str, activation: object) -> None:
    """FusedActivation is an operator descriptor or None (what it may be is checked by validate, at a level)."""
    if activation is not None and not isinstance(activation, OperatorDesc):
        raise ValidationError(f"{operator}: FusedActivation is {describe(activation)}; it must be an operator "
                              f"descriptor (a fusable DML_ACTIVATION_* or ELEMENT_WISE_CLIP) or None")
