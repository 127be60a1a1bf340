#!/usr/bin/env python
"""Refits the FLOAT32 polynomials of the CPU's vectorizable erf (backends/cpu/math.py, ERF_A* and ERF_B*).

    python tools/fit_erf.py        # a few seconds; prints the coefficients and their measured errors

erf(a), a = |x|, in two pieces, each a polynomial in FLOAT32 evaluated by fused Horner steps (fit_gelu's helpers:
Lawson-iterated least squares, coefficients rounded to FLOAT32 one at a time from the highest):
- a < 0.875: erf(a) = a + a A(a^2), A of degree 5 fitted for the absolute error of erf(a) / a - 1 (the leading
  term a is exact, so the result is rounded about once);
- 0.875 <= a <= 4: erf(a) = 1 - exp(B(a) - a^2), B of degree 6 fitted to ln erfc(a) + a^2 (a smooth, slowly varying
  function) weighted by erfc(a): what matters is erfc's absolute error against erf's unit (2^-24 on [0.5, 1)).
  erfc(4) is under 2^-25, so that erf(a) rounds to 1 from there on.
"""

from __future__ import annotations

import math

import numpy as np
from fit_gelu import U, fit_rounded, horner32

SPLIT = 0.875
CLAMP = 4.0


def main() -> None:
    a32 = np.unique(np.linspace(0.0, SPLIT, 40001).astype(np.float32))[1:]
    a = a32.astype(np.float64)
    exact = np.array([math.erf(v) for v in a])
    t32 = a32 * a32
    coefficients = fit_rounded(t32.astype(np.float64), exact / a - 1.0, np.ones_like(a), 5)
    error = np.abs(a * horner32(coefficients, t32) + a - exact) / np.spacing(exact.astype(np.float32))
    print("ERF_A =", [float(np.float32(c)) for c in coefficients], f"(error before rounding {error.max():.2f} ulp)")

    a32 = np.unique(np.linspace(SPLIT, CLAMP, 60001).astype(np.float32))
    a = a32.astype(np.float64)
    erfc = np.array([math.erfc(v) for v in a])
    coefficients = fit_rounded(a, np.log(erfc) + a * a, erfc, 6)
    approximation = 1.0 - np.exp(horner32(coefficients, a32) - (a32 * a32).astype(np.float64))
    error = np.abs(approximation - (1.0 - erfc)) / U
    print("ERF_B =", [float(np.float32(c)) for c in coefficients],
          f"(error before exp and rounding {error.max():.2f} u)")


if __name__ == "__main__":
    main()
