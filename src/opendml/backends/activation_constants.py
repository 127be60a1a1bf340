"""The FLOAT32 constants of the activation formulas, shared by both backends: the numba formulas
(cpu/activations.py) use them as they are, and the WGSL ones (gpu/math_activations.wgsl) as bit-exact literals. NumPy
only, so that the gpu backend does not load numba."""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32

LOG2E = F32(1.4426950408889634)
LN2_HI = F32(0.693359375)           # ln 2 = LN2_HI + LN2_LO; k * LN2_HI is exact for |k| < 2^15
LN2_LO = F32(-2.12194440e-4)
LN2 = F32(0.6931471805599453)
EXP_LOW = F32(-104.0)               # exp below this is under half the smallest FLOAT32 subnormal
EXP_HIGH = F32(88.8)                # exp above 88.73 overflows FLOAT32

# Reciprocal factorials for the Taylor polynomials.
(R2, R3, R4, R5, R6, R7, R8) = (F32(1.0 / math.factorial(n)) for n in range(2, 9))
# 1 / (2n + 1) for the atanh series of the logarithm.
(O3, O5, O7, O9, O11) = (F32(1.0 / n) for n in (3, 5, 7, 9, 11))

# GELU: x Phi(x) = max(x, 0) - w 2^(y(w) - x^2 / (2 ln 2)) p(r) / S, S = 2 sqrt(2), a = min(|x|, 14.5),
# w = a / (8 / S + a); y(w) = log2(S a erfc(a / sqrt 2) / (2 w)) + a^2 / (2 ln 2) as a degree-8 polynomial in w, and
# 2^r / S for |r| <= 1/2 as P0 + r (P1 + ... + r P5). Both fitted for opendml by tools/fit_gelu.py (weighted minimax,
# FLOAT32 coefficients): the exponential's relative error is 2 u, y's 2.1 u for |x| < 1, growing in the tail as the
# tests' tolerance does (u = 2^-24). y was fitted for |x| <= 13.2; from there to 14.5 the results are subnormal, and
# within README's bound (tests/test_activation_accuracy.py).
(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8) = (F32(c) for c in (
    2.0, -1.813122272491455, -0.4373633563518524, 0.2312205731868744, 0.29176726937294006, 0.019958103075623512,
    0.09025117754936218, -0.4234226942062378, 0.21595090627670288))
(P0, P1, P2, P3, P4, P5) = (F32(c) for c in (
    0.3535533845424652, 0.24506446719169617, 0.08493155986070633, 0.019624825567007065, 0.0034190204460173845,
    0.00046886946074664593))
GELU_OFFSET = F32(8.0 / (2.0 * math.sqrt(2.0)))
GELU_HALF_LOG2E = F32(0.5 / math.log(2.0))
#: |x| beyond this gives |GELU(x)| under half the smallest FLOAT32 subnormal (GELU(-14.5) is about -1.2e-46), so
#: -0 for x < 0; GELU(-13.2) is about -5.8e-39, a subnormal.
GELU_CLAMP = F32(14.5)

#: The names the WGSL templates use, with their values.
SHARED = {name: value for name, value in globals().items() if isinstance(value, np.floating)}
