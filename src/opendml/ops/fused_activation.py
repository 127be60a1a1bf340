"""The FusedActivation rules of GEMM and CONVOLUTION (the fused-activation page and the feature level history).

A FusedActivation is given with its InputTensor and OutputTensor absent (None); the fusing operator's tensors carry
the data, and the activation applies to each result before it is stored (after Beta * C, or after Bias). It may be:
- one of the 17 fusable DML_ACTIVATION_* descriptors (ActivationOperatorDesc), from the level that introduced it
  (GELU 5_1, CELU 3_0, SHRINK 2_0, the others 1_0), with its parameter rules (SOFTPLUS's Steepness...);
- ELEMENT_WISE_CLIP (ElementWiseClipOperatorDesc with both tensors None and no ScaleBias), from FL 6_0, into
  CONVOLUTION and GEMM only: f(x) = max(Min, min(x, Max)), the standalone CLIP's formula (Min above Max
  gives Min);
- ACTIVATION_SOFTMAX (the last axis) or ACTIVATION_SOFTMAX1 (its Axes of OutputTensor), from FL 6_1, into GEMM
  only (ops/activation_softmax.py).
"""

from __future__ import annotations

from ..errors import UnsupportedError, ValidationError
from ..types import FeatureLevel, OperatorType
from .activation_softmax import FUSED_SOFTMAX_LEVEL, _FusedSoftmax
from .activations import ActivationOperatorDesc, fusable_names
from .base import OperatorDesc

#: The level from which CONVOLUTION and GEMM fuse ELEMENT_WISE_CLIP.
FUSED_CLIP_LEVEL = FeatureLevel.LEVEL_6_0


def allowed_names(softmax: bool) -> str:
    """The DML names a FusedActivation of CONVOLUTION (softmax False) or GEMM (True) may have, for messages."""
    names = f"{fusable_names()}, DML_OPERATOR_ELEMENT_WISE_CLIP (from feature level {FUSED_CLIP_LEVEL})"
    if softmax:
        names += (f", DML_OPERATOR_ACTIVATION_SOFTMAX or DML_OPERATOR_ACTIVATION_SOFTMAX1 (from feature level "
                  f"{FUSED_SOFTMAX_LEVEL})")
    return names


def is_fused_clip(activation: object) -> bool:
    """Whether `activation` is an ELEMENT_WISE_CLIP descriptor (fused or not)."""
    return isinstance(activation, OperatorDesc) and getattr(activation, "OPERATOR_TYPE", None) is \
        OperatorType.ELEMENT_WISE_CLIP


def check_fused_activation(operator: str, activation: OperatorDesc | None, level: FeatureLevel, *, softmax: bool,
                           output_rank: int) -> None:
    """Raises unless `activation` may be the FusedActivation of `operator` at `level` (module doc). `softmax`: the
    fusing operator is GEMM (SOFTMAX and SOFTMAX1 allowed); `output_rank`: its OutputTensor's DimensionCount."""
    if activation is None:
        return
    if isinstance(activation, ActivationOperatorDesc):
        activation.check_fusable(operator, level)
        return
    if is_fused_clip(activation):
        _check_absent_tensors(operator, activation)
        if getattr(activation, "scale_bias", None) is not None:
            raise ValidationError(f"{operator}: FusedActivation.ScaleBias is set; a fused ELEMENT_WISE_CLIP takes "
                                  f"no ScaleBias (leave it None)")
        if level < FUSED_CLIP_LEVEL:
            raise UnsupportedError(f"{operator}: FusedActivation (DML_OPERATOR_ELEMENT_WISE_CLIP) needs feature "
                                   f"level {FUSED_CLIP_LEVEL}; the device is at {level}")
        return
    if isinstance(activation, _FusedSoftmax) and softmax:
        _check_absent_tensors(operator, activation)
        if level < FUSED_SOFTMAX_LEVEL:
            raise UnsupportedError(f"{operator}: FusedActivation ({activation.label}) needs feature level "
                                   f"{FUSED_SOFTMAX_LEVEL}; the device is at {level}")
        activation.check_fused_axes(operator, output_rank)
        return
    raise ValidationError(f"{operator}: FusedActivation is {activation.label}, which {operator} cannot fuse; it "
                          f"must be one of {allowed_names(softmax)}")


def _check_absent_tensors(operator: str, activation: OperatorDesc) -> None:
    for name, field in (("InputTensor", "input_tensor"), ("OutputTensor", "output_tensor")):
        if getattr(activation, field, None) is not None:
            raise ValidationError(f"{operator}: FusedActivation.{name} is set; a fused activation's InputTensor "
                                  f"and OutputTensor must be absent (None), since the fusing operator's tensors carry "
                                  f"the data")
