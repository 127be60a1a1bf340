"""The 17 standalone activation operators on the CPU, and the activations' tuned FLOAT32 functions.

The operators are the element-wise engine's numba kernel (element_wise.py) of each one's formula (ops/activations.py's
ACTIVATION_FORMULAS; RELU and SHRINK on integers exactly, in INT64). MEAN_VARIANCE_NORMALIZATION1's fused activation
is the same formula rendered by the same renderer (element_wise.activation_module), so that the fused and standalone
activations agree bit for bit by construction. FLOAT16 is widened exactly and the result rounded once from FLOAT32,
whatever the flags say (ALLOW_HALF_PRECISION_COMPUTATION permits but does not require FLOAT16).

`_sigmoid`, `_tanh` and `_gelu` below are the vectorizable FLOAT32 functions behind math.py's `m_sigmoid`, `m_tanh`
and `m_gelu` primitives (math.py compiles them with their contraction): FLOAT32 polynomial exp/erfc written here and
in math.py, because numba's math.exp/erf/log1p are scalar libm calls that LLVM cannot vectorize (measured: a loop of
math.erf was about ten times slower than the vectorized GELU here).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ...ops.base import OperatorDesc
from ...types import ExecutionFlags
from .. import Kernel
from .. import activation_constants as C
from .math import exp_f32 as _exp

# reassoc lets LLVM vectorize sums; contract allows FMA. Neither changes NaN or infinity behaviour.
_FASTMATH = {"reassoc", "contract"}
# Element-wise code must not reassociate: _gelu's rounding step must stay as written.
_ELEMENTWISE_FASTMATH = {"contract"}

F32 = np.float32
_ZERO, _ONE, _TWO = F32(0.0), F32(1.0), F32(2.0)
# The constants the gpu's WGSL formulas use too (backends/activation_constants.py), under this module's names.
_LOG2E, _LN2_HI, _LN2_LO = C.LOG2E, C.LN2_HI, C.LN2_LO
(_R2, _R3, _R4, _R5, _R6, _R7) = (C.R2, C.R3, C.R4, C.R5, C.R6, C.R7)
(_Y0, _Y1, _Y2, _Y3, _Y4, _Y5, _Y6, _Y7, _Y8) = (C.Y0, C.Y1, C.Y2, C.Y3, C.Y4, C.Y5, C.Y6, C.Y7, C.Y8)
(_P0, _P1, _P2, _P3, _P4, _P5) = (C.P0, C.P1, C.P2, C.P3, C.P4, C.P5)
_GELU_OFFSET, _GELU_HALF_LOG2E, _GELU_CLAMP = C.GELU_OFFSET, C.GELU_HALF_LOG2E, C.GELU_CLAMP
_TANH_SATURATION = F32(10.0)         # tanh(10) rounds to 1 in FLOAT32
#: 1.5 * 2^23 + 127: y + _EXP_SHIFTER rounds y (|y| < 2^22) to an integer k, and its low mantissa bits read k + 127.
_EXP_SHIFTER = F32(12582912.0 + 127.0)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """The standalone activation: the element-wise engine's kernel of its formula."""
    from . import element_wise
    return element_wise.compile_kernel(desc, flags, debug)


# -- vectorizable FLOAT32 elementary functions (exp, expm1 and log(1 + u) are math.py's) -----------------------------
# Every constant is a float32 global: a Python float literal would turn the arithmetic into float64.

@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def _sigmoid(z: Any) -> Any:
    """1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) for z < 0, with e = e^-|z| from _exp: subnormal results (z below
    -87.3) come out right, and a NaN argument is given back as it is."""
    e = _exp(-abs(z))
    return _nan_kept(z, (e if z < _ZERO else _ONE) / (_ONE + e))


@numba.njit(inline="always", fastmath=_ELEMENTWISE_FASTMATH, error_model="numpy")
def _tanh(z: Any) -> Any:
    """tanh z = e / (e + 2), e = expm1(2|z|), with z's sign; |z| beyond 10 gives 1 (tanh 10 rounds to 1).

    expm1(t) for 0 <= t <= 20 in one reduction: t = k ln2 + r (|r| <= ln2 / 2, k in [0, 29]), expm1(t) =
    2^k expm1(r) + (2^k - 1), one fused multiply-add, expm1(r) by its degree-7 Taylor polynomial (truncation below
    2^-26 relative). Below ln2 / 2, k is 0 and that is the polynomial alone: no cancellation near 0. k is rounded by
    adding _EXP_SHIFTER, whose low mantissa bits then read k + 127 (as in _gelu: no reassociation here). NaN stays
    NaN."""
    a = abs(z)
    a = _TANH_SATURATION if a > _TANH_SATURATION else a
    t = _TWO * a
    shifted = t * _LOG2E + _EXP_SHIFTER
    k = shifted - _EXP_SHIFTER
    r = (t - k * _LN2_HI) - k * _LN2_LO
    q = r * (_ONE + r * (_R2 + r * (_R3 + r * (_R4 + r * (_R5 + r * (_R6 + r * _R7))))))
    two_k = np.int32(np.float32(shifted).view(np.int32) << 23).view(np.float32)
    e = two_k * q + (two_k - _ONE)
    return _nan_kept(z, np.float32(math.copysign(e / (e + _TWO), z)))


@numba.njit(inline="always", fastmath=_ELEMENTWISE_FASTMATH, error_model="numpy")
def _gelu(x: Any) -> Any:
    """x Phi(x) = max(x, 0) - |x| erfc(|x| / sqrt 2) / 2: for x < 0 that is x Phi(x) straight from erfc (relative
    accuracy in the tail, subnormal results included), for x >= 0 x - x (1 - Phi(x)); NaN stays NaN.

    |x| erfc(|x| / sqrt 2) / 2 = w 2^z p(r) with z = y(w) - x^2 / (2 ln 2) = k + r (see _Y0). |x| is clamped to
    _GELU_CLAMP, where |GELU| is under half FLOAT32's smallest subnormal, so that x < 0 beyond it gives -0 (the
    exact result rounded) and x > 0 gives x. k (down to -152) is rounded by adding _EXP_SHIFTER and 2^k applied as
    two factors built in the exponent bits, the second last, so that a subnormal result is rounded once. That
    rounding needs the compiler to keep (z + C) - C as written: the loops that inline this must not allow
    reassociation."""
    a = abs(x)
    a = a if a < _GELU_CLAMP else _GELU_CLAMP  # NaN becomes a number here, and NaN again at the end
    w = a / (_GELU_OFFSET + a)
    z = _Y0 + w * (_Y1 + w * (_Y2 + w * (_Y3 + w * (_Y4 + w * (_Y5 + w * (_Y6 + w * (_Y7 + w * _Y8)))))))
    z = z - (_GELU_HALF_LOG2E * a) * a
    k = (z + _EXP_SHIFTER) - _EXP_SHIFTER
    r = z - k
    p = _P0 + r * (_P1 + r * (_P2 + r * (_P3 + r * (_P4 + r * _P5))))
    ki = np.int32(k)
    k1 = ki >> 1
    s1 = np.int32((k1 + 127) << 23).view(np.float32)
    s2 = np.int32((ki - k1 + 127) << 23).view(np.float32)
    tail = ((w * p) * s1) * s2
    return _nan_kept(x, -tail if x < _ZERO else x - tail)


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def _nan_kept(x: Any, result: Any) -> Any:
    """NaN in, NaN out, also where the formula's comparisons would pick a number."""
    return x if x != x else result
