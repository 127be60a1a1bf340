"""Naive float64 reference of MEAN_VARIANCE_NORMALIZATION1 and its fusable activations: the test oracle.

Independent of the ``opendml`` package (never import it here) and written as plainly as possible: NumPy float64
for the statistics, Python's ``math`` module element by element for the activations. Speed is irrelevant.

Conventions the project rules on (DECISIONS 17, 19 and the kernel's documented behaviour):
- population variance (divide by N); Epsilon inside the square root; absent Scale = 1, absent Bias = 0;
- Epsilon and the activation parameters are FLOAT: the caller passes them rounded to float32;
- every activation maps NaN to NaN, and gives its limit at +-infinity where the formula would compute inf * 0
  or inf / inf (GELU(-inf) = 0, SOFTSIGN(+-inf) = +-1, TANH(+-inf) = +-1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

#: The 17 activations, by DML name without the DML_OPERATOR_ACTIVATION_ prefix, with their parameter names.
ACTIVATION_PARAMETERS: dict[str, tuple[str, ...]] = {
    "LINEAR": ("Alpha", "Beta"),
    "SIGMOID": (),
    "HARD_SIGMOID": ("Alpha", "Beta"),
    "TANH": (),
    "SCALED_TANH": ("Alpha", "Beta"),
    "RELU": (),
    "LEAKY_RELU": ("Alpha",),
    "THRESHOLDED_RELU": ("Alpha",),
    "ELU": ("Alpha",),
    "CELU": ("Alpha",),
    "SCALED_ELU": ("Alpha", "Gamma"),
    "SOFTPLUS": ("Steepness",),
    "PARAMETRIC_SOFTPLUS": ("Alpha", "Beta"),
    "SOFTSIGN": (),
    "IDENTITY": (),
    "SHRINK": ("Bias", "Threshold"),
    "GELU": (),
}


def _softplus(z: float) -> float:
    """ln(1 + e^z) without overflow."""
    if z > 0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _expm1(v: float) -> float:
    try:
        return math.expm1(v)
    except OverflowError:
        return math.inf


def _gelu(x: float) -> float:
    if x == -math.inf:
        return 0.0
    # 0.5 * x * (1 + erf(x / sqrt 2)) == 0.5 * x * erfc(-x / sqrt 2); erfc keeps the negative tail accurate.
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def _softsign(x: float) -> float:
    if math.isinf(x):
        return math.copysign(1.0, x)
    return x / (1.0 + abs(x))


def _celu(x: float, alpha: float) -> float:
    return max(0.0, x) + min(0.0, alpha * _expm1(x / alpha))


def _hard_sigmoid(z: float) -> float:
    """max(0, min(z, 1)) with NaN kept (Python's min/max would drop it, e.g. Alpha 0 times an infinite x)."""
    return z if math.isnan(z) else max(0.0, min(z, 1.0))


def _shrink(x: float, bias: float, threshold: float) -> float:
    if x > threshold:
        return x - bias
    if x < -threshold:
        return x + bias
    return 0.0


def _scalar_activation(name: str, p: Sequence[float]) -> Callable[[float], float]:
    """The activation as a Python function of one float64 (NaN handled by the caller)."""
    table: dict[str, Callable[[float], float]] = {
        "LINEAR": lambda x: p[0] * x + p[1],
        "SIGMOID": lambda x: 1.0 / (1.0 + _exp(-x)),
        "HARD_SIGMOID": lambda x: _hard_sigmoid(p[0] * x + p[1]),
        "TANH": math.tanh,
        "SCALED_TANH": lambda x: p[0] * math.tanh(p[1] * x),
        "RELU": lambda x: max(0.0, x),
        "LEAKY_RELU": lambda x: x if x >= 0 else p[0] * x,
        "THRESHOLDED_RELU": lambda x: x if x > p[0] else 0.0,
        "ELU": lambda x: x if x >= 0 else p[0] * _expm1(x),
        "CELU": lambda x: _celu(x, p[0]),
        "SCALED_ELU": lambda x: p[1] * x if x > 0 else p[1] * (p[0] * _expm1(x)),  # = Alpha * exp(x) - Alpha
        "SOFTPLUS": lambda x: _softplus(p[0] * x) / p[0],
        "PARAMETRIC_SOFTPLUS": lambda x: p[0] * _softplus(p[1] * x),
        "SOFTSIGN": _softsign,
        "IDENTITY": lambda x: x,
        "SHRINK": lambda x: _shrink(x, p[0], p[1]),
        "GELU": _gelu,
    }
    return table[name]


def apply_activation(name: str | None, parameters: Sequence[float], values: np.ndarray) -> np.ndarray:
    """The activation applied element by element in float64 (None: no activation)."""
    values = np.asarray(values, np.float64)
    if name is None:
        return values.copy()
    function = _scalar_activation(name, [float(v) for v in parameters])
    out = np.empty_like(values)
    flat_in, flat_out = values.reshape(-1), out.reshape(-1)
    for index, value in enumerate(flat_in.tolist()):
        flat_out[index] = math.nan if math.isnan(value) else function(value)
    return out


def reference_statistics(x: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(mean, population variance) over ``axes`` in float64, keepdims; two passes."""
    x64 = np.asarray(x, np.float64)
    axes_tuple = tuple(axes)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = x64.mean(axis=axes_tuple, keepdims=True)
        variance = np.square(x64 - mean).mean(axis=axes_tuple, keepdims=True)
    return mean, variance


def reference_normalized(x: np.ndarray, scale: np.ndarray | None, bias: np.ndarray | None, axes: Sequence[int],
                         normalize_variance: bool, epsilon: float) -> np.ndarray:
    """Scale * (x - mean) / sqrt(variance + epsilon) + Bias (without the division when normalize_variance is
    False), in float64, before any activation. Scale and Bias broadcast NumPy-style (size-1 dimensions)."""
    x64 = np.asarray(x, np.float64)
    mean, variance = reference_statistics(x64, axes)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        y = x64 - mean
        if normalize_variance:
            y = y / np.sqrt(variance + epsilon)
        if scale is not None:
            y = y * np.asarray(scale, np.float64)
        if bias is not None:
            y = y + np.asarray(bias, np.float64)
    return np.asarray(y)


def reference_mvn(x: np.ndarray, scale: np.ndarray | None, bias: np.ndarray | None, axes: Sequence[int],
                  normalize_variance: bool, epsilon: float, activation: str | None = None,
                  parameters: Sequence[float] = ()) -> np.ndarray:
    """The whole operator in float64, unrounded."""
    y = reference_normalized(x, scale, bias, axes, normalize_variance, epsilon)
    return apply_activation(activation, parameters, y)
