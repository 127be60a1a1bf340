#!/usr/bin/env python
"""Refits the FLOAT32 polynomials of the CPU backend's GELU (backends/cpu/mean_variance_normalization1.py).

    python tools/fit_gelu.py        # about half a minute; prints the coefficients and their measured errors

GELU(x) = max(x, 0) - w 2^(y(w) - x^2 / (2 ln 2)) p(r) / S with a = min(|x|, 13.2), S = 2 sqrt(2),
w = a / (8 / S + a), so that y(w) = log2(S a erfc(a / sqrt 2) / (2 w)) + a^2 / (2 ln 2): a smooth function of w on
[0, 0.82]. It is fitted as a degree-8 polynomial in w, in FLOAT32 w as the kernel computes it, minimizing the
largest error weighted by 1 / (1 + a^2 / 2): the tests accept an error that grows with x^2 in the tail (an input
perturbation of 4 u moves GELU by about 4 u x^2 relative there). 2^r / S for |r| <= 1/2 is fitted as
1 / S + r P(r), P of degree 4, for relative error (the 1 / S spares the kernel a multiply).
Both are Lawson-iterated least squares (weights grow where the error is largest, approaching the minimax fit),
with the coefficients rounded to FLOAT32 one at a time from the highest, the lower ones refitted after each.
"""

from __future__ import annotations

import math

import numpy as np

U = 2.0**-24


def lawson(basis: np.ndarray, target: np.ndarray, weight: np.ndarray, rounds: int = 300) -> np.ndarray:
    emphasis = np.ones_like(target)
    coefficients = np.zeros(basis.shape[1])
    for _ in range(rounds):
        scaled = weight * emphasis
        coefficients = np.linalg.lstsq(basis * scaled[:, None], target * scaled, rcond=None)[0]
        error = np.abs(basis @ coefficients - target) * weight
        emphasis *= np.sqrt(error / error.max() + 1e-14)
        emphasis /= emphasis.max()
    return coefficients


def fit_rounded(variable: np.ndarray, target: np.ndarray, weight: np.ndarray, degree: int,
                first: tuple[float, ...] = ()) -> list[float]:
    """Coefficients c_k (k >= len(first)) of sum c_k v^k, the first ones given, each rounded to FLOAT32."""
    coefficients = [float(c) for c in first] + [0.0] * (degree + 1 - len(first))
    rest = target - sum(c * variable**k for k, c in enumerate(first))
    for top in range(degree, len(first) - 1, -1):
        basis = np.stack([variable**k for k in range(len(first), top + 1)], axis=1)
        c = float(np.float32(lawson(basis, rest, weight)[-1]))
        coefficients[top] = c
        rest = rest - c * variable**top
    return coefficients


def horner32(coefficients: list[float], variable: np.ndarray) -> np.ndarray:
    """The polynomial evaluated as the kernel does: FLOAT32 Horner steps, each a fused multiply-add."""
    v = variable.astype(np.float64)
    value = np.full(variable.shape, np.float32(coefficients[-1]))
    for c in reversed(coefficients[:-1]):
        value = (value.astype(np.float64) * v + float(np.float32(c))).astype(np.float32)
    return value.astype(np.float64)


def main() -> None:
    slope = 2.0 * math.sqrt(2.0)
    # 2^r / S = 1 / S + r P(r) on |r| <= 1/2, relative error.
    r = (np.cos(np.linspace(0.0, np.pi, 4001)) * 0.5).astype(np.float32).astype(np.float64)
    first = float(np.float32(1.0 / slope))
    p = fit_rounded(r, 2.0**r / slope, slope * 2.0**-r, 5, first=(first,))
    exp_error = np.max(np.abs((first + horner32(p[1:], r.astype(np.float32)) * r) * slope / 2.0**r - 1.0)) / U
    print("P0..P5 =", [float(np.float32(c)) for c in p],
          f"(relative error {exp_error:.2f} u, before the final rounding)")

    a32 = np.unique(np.linspace(0.0, 13.2, 60001).astype(np.float32))
    a = a32.astype(np.float64)
    offset = float(np.float32(8.0 / slope))
    w32 = (a / (a + offset).astype(np.float32).astype(np.float64)).astype(np.float32)
    w = w32.astype(np.float64)
    half_erfc = 0.5 * np.array([math.erfc(value / math.sqrt(2.0)) for value in a])
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(a > 0, np.log2(slope * a * half_erfc / w), math.log2(0.5 * offset * slope))
    y += a * a / (2.0 * math.log(2.0))
    weight = 1.0 / (1.0 + a * a / 2)
    coefficients = fit_rounded(w, y, weight, 8)
    error = np.abs(horner32(coefficients, w32) - y) * math.log(2.0) / U
    print("Y0..Y8 =", [float(np.float32(c)) for c in coefficients])
    print(f"  error of y (as relative error of the erfc factor, in u): {error[a < 1].max():.2f} for |x| < 1, "
          f"{error[a < 3].max():.2f} for |x| < 3, weighted max {np.max(error * weight):.2f}")


if __name__ == "__main__":
    main()
