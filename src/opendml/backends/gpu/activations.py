"""The fusable activations in WGSL: written once here, for every GPU kernel that applies one (MVN's fused
activation, and the standalone activation operators' elementwise pass, `compile_kernel`).

`activation_function(activation, params)` renders `fn activation(v: f32) -> f32` (FLOAT32 in, FLOAT32 out; FLOAT16
tensors compute in FLOAT32 too) and the elementary functions it needs. An activation's parameters are FLOAT fields:
they travel rounded to FLOAT32 in the dispatch's parameter buffer, so one pipeline serves every parameter value and
the shader is specialized only by which activation it applies. Each formula below is ops/activations.py's (the
ACTIVATIONS table), written so that NaN stays NaN (but through THRESHOLDED_RELU and SHRINK, whose comparisons
give 0) and no intermediate overflows where the result does not.

The elementary functions (activations.wgsl) are polynomial, with constants computed here; GELU's erfc polynomials
are the ones fitted by tools/fit_gelu.py, imported from the CPU backend, where they live.

A standalone activation is one elementwise pass (kernel.ElementwiseSource): output element o is
activation(input element o), the input read through its strides (dimensions merged where its layout allows; zero
strides broadcast) and the output written by elementwise.Output. One pipeline per activation and data type: the
parameters, the input's layout and the output's come first in the parameter buffer, at places that do not depend
on the shape. Integer tensors (RELU, SHRINK from FL 5_1) compute in i32 or u32: RELU is max(x, 0), SHRINK the
IntegerShrink plan of ops/activations.py (the one the CPU runs), whose every result lies in the type's range, so
32-bit wrapping arithmetic gives it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import numpy as np

from ...ops.activations import ACTIVATION_INFO, ActivationOperatorDesc, IntegerShrink
from ...ops.base import OperatorDesc
from ...types import ExecutionFlags, OperatorType
from .. import activation_constants
from ..plans import merge_dimensions
from .context import Bound, GpuContext, Recorder
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, template
from .wgsl import COMPUTE_TYPE

T = OperatorType


def f32_literal(value: float) -> str:
    """A WGSL expression that is exactly `value` rounded to FLOAT32 (its bits, so no decimal parsing is involved)."""
    bits = int(np.array([value], np.float32).view(np.uint32)[0])
    return f"bitcast<f32>({bits:#010x}u)"


def _constants() -> dict[str, str]:
    """The formulas' constants (backends/activation_constants.py, the cpu's too) as WGSL literals, by name."""
    values = {name: float(value) for name, value in activation_constants.SHARED.items()}
    values["SQRT2_MINUS_1"] = math.sqrt(2.0) - 1.0      # the logarithm's range reduction (u > sqrt 2 - 1)
    return {name: f32_literal(value) for name, value in values.items()}


#: Each activation's body, over `v` and its parameters `a`, `b` (struct order: Alpha/Beta, Alpha/Gamma, Steepness,
#: Bias/Threshold), as ops/activations.py states the formula.
BODIES: dict[OperatorType, str] = {
    T.ACTIVATION_IDENTITY: "return v;",
    T.ACTIVATION_LINEAR: "return a * v + b;",
    # 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below: subnormal results come out right.
    T.ACTIVATION_SIGMOID: "let e = act_exp(-abs(v));\n"
                          "    return select(1.0, e, v < 0.0) / (1.0 + e);",
    # max(0, min(a v + b, 1)); a NaN there (a = 0 times an infinite v) stays.
    T.ACTIVATION_HARD_SIGMOID: "let z = a * v + b;\n"
                               "    return act_keep_nan(z, select(select(z, 1.0, z > 1.0), 0.0, z < 0.0));",
    T.ACTIVATION_TANH: "return act_tanh(v);",
    T.ACTIVATION_SCALED_TANH: "return a * act_tanh(b * v);",
    T.ACTIVATION_RELU: "return act_keep_nan(v, select(0.0, v, v > 0.0));",
    T.ACTIVATION_LEAKY_RELU: "return act_keep_nan(v, select(a * v, v, v >= 0.0));",
    # As written, comparisons false for NaN: NaN gives 0 (THRESHOLDED_RELU and SHRINK).
    T.ACTIVATION_THRESHOLDED_RELU: "return select(0.0, v, v > a);",
    T.ACTIVATION_ELU: "return act_keep_nan(v, select(a * act_expm1(v), v, v >= 0.0));",
    # Alpha expm1(v / Alpha) is v (within half a unit) where |v / Alpha| < 2^-24: a huge Alpha's subnormal quotient
    # would be imprecise. Above 80 (a negative Alpha), sign(Alpha) e^(v / Alpha + ln|Alpha|): finite where the result
    # is (`c` is ln|Alpha|, see activation_function).
    T.ACTIVATION_CELU: "let q = v / a;\n"
                       "    let large = select(act_exp(q + c), -act_exp(q + c), a < 0.0);\n"
                       "    let negative = select(select(a * act_expm1(q), large, q > 80.0), v, "
                       "abs(q) < 5.9604644775390625e-8);\n"
                       "    return act_keep_nan(v, select(0.0, v, v > 0.0) + select(0.0, negative, negative < 0.0));",
    # Gamma * (Alpha * exp(x) - Alpha) as Gamma * (Alpha * expm1(x)): no cancellation near 0.
    T.ACTIVATION_SCALED_ELU: "return act_keep_nan(v, select(b * (a * act_expm1(v)), b * v, v > 0.0));",
    # ln(1 + e^(s v)) / s = (s > 0 ? max(v, 0) : min(v, 0)) + ln(1 + e^-|s v|) / s: no overflowing s v is divided
    # back. The linear part's zero has the result's sign (-0 for s < 0), so that a result that rounds to zero is
    # the exact one's signed zero.
    T.ACTIVATION_SOFTPLUS: "let z = a * v;\n"
                           "    let linear = select(select(bitcast<f32>(0x80000000u), v, v < 0.0), "
                           "select(0.0, v, v > 0.0), a > 0.0);\n"
                           "    return act_keep_nan(z, linear + act_log1p_unit(act_exp(-abs(z))) / a);",
    # Alpha ln(1 + e^(b v)) = (b v > 0 ? Alpha (b v) : 0) + Alpha ln(1 + e^-|b v|); where b v overflows from a finite
    # v, the linear part is (Alpha b) v (no infinity where the result is finite; Alpha (b v) where Alpha b would
    # underflow).
    T.ACTIVATION_PARAMETRIC_SOFTPLUS: "let z = b * v;\n"
                                      "    let linear = select(0.0, select(a * z, (a * b) * v, act_is_inf(z) && "
                                      "!act_is_inf(v)), z > 0.0);\n"
                                      "    return act_keep_nan(z, linear + a * act_log1p_unit(act_exp(-abs(z))));",
    T.ACTIVATION_SOFTSIGN: "return select(v / (1.0 + abs(v)), sign(v), act_is_inf(v));",
    T.ACTIVATION_SHRINK: "return select(select(0.0, v + a, v < -b), v - a, v > b);",
    T.ACTIVATION_GELU: "return act_gelu(v);",
}


def _check_bodies() -> None:
    """Every fusable activation has a body (a missing one is a bug in this module)."""
    assert set(BODIES) == set(ACTIVATION_INFO), set(ACTIVATION_INFO) ^ set(BODIES)


_check_bodies()


@cache
def _library(name: str) -> str:
    """The rendered elementary functions ("math") or GELU ("gelu")."""
    return template("activations.wgsl" if name == "math" else "activations_gelu.wgsl", **_constants())


def activation_function(activation: OperatorDesc | None, params: Params) -> str:
    """WGSL `fn activation(v: f32) -> f32` of `activation` (None: the identity), with the helpers it uses; its
    parameters (rounded to FLOAT32) are appended to `params`."""
    if activation is None:
        return "fn activation(v: f32) -> f32 { return v; }\n"
    assert isinstance(activation, ActivationOperatorDesc), activation
    values = [float(np.float32(value)) for value in activation.parameters().values()]
    parts = [_library("math")]
    if activation.OPERATOR_TYPE is T.ACTIVATION_GELU:
        parts.append(_library("gelu"))
    names = ["a", "b"][:len(values)]
    if activation.OPERATOR_TYPE is T.ACTIVATION_CELU:
        names.append("c")
        values.append(math.log(abs(values[0])))   # ln|Alpha|, computed once here
    loads = ""
    for name, value in zip(names, values, strict=True):
        loads += f"    let {name} = bitcast<f32>(P[{params.add_f32(value)}u]);\n"
    parts.append(f"// {activation.OPERATOR_TYPE.dml_name}: {activation.info().formula}\n"
                 f"fn activation(v: f32) -> f32 {{\n{loads}    {BODIES[activation.OPERATOR_TYPE]}\n}}\n")
    return "".join(parts)


# -- the standalone operators ---------------------------------------------------------------------------------------

class ActivationKernel(GpuKernel):
    """A standalone activation: one elementwise pass (activations_float.wgsl, or activations_relu.wgsl and
    activations_shrink.wgsl for integer tensors)."""

    def __init__(self, context: GpuContext, desc: ActivationOperatorDesc) -> None:
        super().__init__(context, desc)
        source, target = desc.input_tensor, desc.output_tensor
        assert source is not None and target is not None
        data_type = source.data_type
        params = Params(2)
        # What the activation needs first, then the input's layout: places that depend only on the activation.
        if data_type.is_float:
            function, name = activation_function(desc, params), "activations_float.wgsl"
        elif desc.OPERATOR_TYPE is T.ACTIVATION_RELU:
            function, name = "", "activations_relu.wgsl"
        else:
            values = list(desc.parameters().values())
            plan = IntegerShrink.of(values[0], values[1], data_type)
            function = f"const SHRINK = {params.add(*(word % 2**32 for word in plan.words()))}u;\n"
            name = "activations_shrink.wgsl"
        sizes, (strides,) = merge_dimensions(source.sizes, source.element_strides)
        layout = params.add_tensor(sizes, strides)
        elementwise = ElementwiseSource([("x", source)], target, params, computed=("x",))
        compute = COMPUTE_TYPE[data_type]
        text = template(name, IN=layout, TYPE=data_type.name, CT=compute,
                        WORD="bitcast<i32>" if compute == "i32" else "u32")
        self.main = elementwise.compile(context, function + text)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        self.main.record(recorder, [source, outputs[0]])


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ActivationKernel:
    """FLOAT32 computation whatever the flags say: ALLOW_HALF_PRECISION_COMPUTATION permits but does not require
    FLOAT16."""
    assert isinstance(desc, ActivationOperatorDesc)
    return ActivationKernel(context, desc)
