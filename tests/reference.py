"""Naive reference implementations of operator semantics, used as test oracles.

Everything here is written independently of the ``opendml`` package (never import it here) and as plainly as
possible: Python loops, exact Python integers for integer data, float64 / correctly rounded sums for floating
point data.  Speed is irrelevant; the inputs used by the tests are small.

Organization: shared helpers first, then one section per operator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

# ---------------------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------------------


def is_float_dtype(dtype: np.dtype | type) -> bool:
    """True for floating point numpy dtypes."""
    return np.dtype(dtype).kind == "f"


def wrap_int(value: int, dtype: np.dtype | type) -> int:
    """Reduce the exact integer ``value`` modulo 2**bits into the range of integer ``dtype`` (two's complement)."""
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    value &= (1 << bits) - 1
    if dt.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def float_sum(values: Sequence[float]) -> float:
    """The correctly rounded float64 value of the exact sum of ``values`` (IEEE rules for NaN / infinities)."""
    if any(math.isnan(v) for v in values):
        return math.nan
    has_pos_inf = any(v == math.inf for v in values)
    has_neg_inf = any(v == -math.inf for v in values)
    if has_pos_inf and has_neg_inf:
        return math.nan
    if has_pos_inf:
        return math.inf
    if has_neg_inf:
        return -math.inf
    return math.fsum(values)


def float_product(values: Sequence[float]) -> float:
    """The float64 value of the product of ``values`` without intermediate overflow or underflow.

    The mantissas and exponents are tracked separately, so the only errors are the float64 roundings of the
    mantissa products (relative error below N * 2**-53) and the final conversion.
    """
    if any(math.isnan(v) for v in values):
        return math.nan
    has_inf = any(math.isinf(v) for v in values)
    has_zero = any(v == 0.0 for v in values)
    if has_inf and has_zero:
        return math.nan
    negative = sum(1 for v in values if math.copysign(1.0, v) < 0) % 2 == 1
    sign = -1.0 if negative else 1.0
    if has_inf:
        return sign * math.inf
    if has_zero:
        return sign * 0.0
    mantissa, exponent = 1.0, 0
    for v in values:
        m, e = math.frexp(abs(v))
        mantissa, e2 = math.frexp(mantissa * m)
        exponent += e + e2
    try:
        return sign * math.ldexp(mantissa, exponent)
    except OverflowError:
        return sign * math.inf


def to_python_scalars(x: np.ndarray) -> list[int] | list[float]:
    """The elements of ``x`` (row-major) as exact Python ints (integer dtypes) or Python floats (float dtypes)."""
    if is_float_dtype(x.dtype):
        return [float(v) for v in x.reshape(-1)]
    return [int(v) for v in x.reshape(-1)]


# ---------------------------------------------------------------------------------------------------------------------
# REDUCE
# ---------------------------------------------------------------------------------------------------------------------

REDUCE_FUNCTIONS: tuple[str, ...] = (
    "ARGMAX",
    "ARGMIN",
    "AVERAGE",
    "L1",
    "L2",
    "LOG_SUM",
    "LOG_SUM_EXP",
    "MAX",
    "MIN",
    "MULTIPLY",
    "SUM",
    "SUM_SQUARE",
)

# Functions defined on integer data (the others are float only).
REDUCE_INTEGER_FUNCTIONS: frozenset[str] = frozenset(
    {"ARGMAX", "ARGMIN", "L1", "MAX", "MIN", "MULTIPLY", "SUM", "SUM_SQUARE"}
)


def _normalize_function(function: object) -> str:
    name = getattr(function, "name", function)
    if not isinstance(name, str) or name.upper() not in REDUCE_FUNCTIONS:
        raise ValueError(f"unknown reduce function {function!r}")
    return name.upper()


def _normalize_axes(rank: int, axes: Sequence[int]) -> tuple[int, ...]:
    axes = tuple(int(a) for a in axes)
    if not axes:
        raise ValueError("at least one axis is required")
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate axes {axes}")
    if any(a < 0 or a >= rank for a in axes):
        raise ValueError(f"axes {axes} out of range for rank {rank}")
    return tuple(sorted(axes))


def reduce_output_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """Same rank as the input; size 1 on every reduced axis."""
    reduced = _normalize_axes(len(shape), axes)
    return tuple(1 if d in reduced else int(n) for d, n in enumerate(shape))


def reduce_blocks(x: np.ndarray, axes: Sequence[int]) -> Iterator[tuple[tuple[int, ...], list[int] | list[float]]]:
    """Yield ``(output_index, block)`` for every output element.

    ``block`` lists the reduced sub-block's elements linearized row-major over the reduced axes taken in INCREASING
    dimension order (whatever the order given in ``axes``): this is the order ARGMAX / ARGMIN indices refer to.
    """
    reduced = _normalize_axes(x.ndim, axes)
    out_shape = reduce_output_shape(x.shape, reduced)
    reduced_ranges = [range(x.shape[a]) for a in reduced]
    for out_index in itertools.product(*(range(n) for n in out_shape)):
        block_indices = []
        for inner in itertools.product(*reduced_ranges):  # last reduced axis varies fastest
            full = list(out_index)
            for axis, i in zip(reduced, inner, strict=True):
                full[axis] = i
            block_indices.append(tuple(full))
        block = to_python_scalars(np.array([x[i] for i in block_indices], dtype=x.dtype))
        yield out_index, block


def _arg_extreme(block: Sequence[float] | Sequence[int], *, want_max: bool) -> int:
    """First index of the maximum (minimum); a NaN counts as the extreme, so the first NaN wins."""
    for i, v in enumerate(block):
        if isinstance(v, float) and math.isnan(v):
            return i
    best = 0
    for i, v in enumerate(block):
        if (v > block[best]) if want_max else (v < block[best]):
            best = i
    return best


def reduce_block_float(function: str, block: Sequence[float]) -> float:
    """Value of one reduction of floats, computed exactly or in float64 (no rounding to the output type yet)."""
    n = len(block)
    if function == "SUM":
        return float_sum(block)
    if function == "AVERAGE":
        return float_sum(block) / n
    if function == "L1":
        return float_sum([abs(v) for v in block])
    if function == "SUM_SQUARE":
        return float_sum([v * v for v in block])
    if function == "L2":
        return math.sqrt(float_sum([v * v for v in block]))
    if function == "LOG_SUM":
        s = float_sum(block)
        if math.isnan(s) or s < 0:
            return math.nan
        if s == 0:
            return -math.inf
        return math.log(s)
    if function == "LOG_SUM_EXP":
        if any(math.isnan(v) for v in block):
            return math.nan
        m = max(block)
        if m == math.inf:
            return math.inf
        if m == -math.inf:
            return -math.inf
        return m + math.log(float_sum([math.exp(v - m) for v in block]))
    if function == "MAX":
        return math.nan if any(math.isnan(v) for v in block) else max(block)
    if function == "MIN":
        return math.nan if any(math.isnan(v) for v in block) else min(block)
    if function == "MULTIPLY":
        return float_product(block)
    if function == "ARGMAX":
        return float(_arg_extreme(block, want_max=True))
    if function == "ARGMIN":
        return float(_arg_extreme(block, want_max=False))
    raise AssertionError(function)


def reduce_block_int(function: str, block: Sequence[int]) -> int:
    """Exact (unwrapped) integer value of one reduction of integers; the caller wraps it to the output type."""
    if function == "SUM":
        return sum(block)
    if function == "L1":
        return sum(abs(v) for v in block)
    if function == "SUM_SQUARE":
        return sum(v * v for v in block)
    if function == "MULTIPLY":
        return math.prod(block)
    if function == "MAX":
        return max(block)
    if function == "MIN":
        return min(block)
    if function == "ARGMAX":
        return _arg_extreme(block, want_max=True)
    if function == "ARGMIN":
        return _arg_extreme(block, want_max=False)
    raise ValueError(f"REDUCE {function} is not defined on integer data")


def reference_reduce_unrounded(function: object, x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """REDUCE before conversion to the output type.

    Returns a float64 array for float input (exact or float64-accurate values) and an object array of exact,
    unwrapped Python ints for integer input.  ARGMAX / ARGMIN give the index (as float64 / int respectively).
    """
    function = _normalize_function(function)
    x = np.asarray(x)
    out_shape = reduce_output_shape(x.shape, axes)
    if is_float_dtype(x.dtype):
        out = np.empty(out_shape, dtype=np.float64)
        for out_index, block in reduce_blocks(x, axes):
            out[out_index] = reduce_block_float(function, block)
    else:
        out = np.empty(out_shape, dtype=object)
        for out_index, block in reduce_blocks(x, axes):
            out[out_index] = reduce_block_int(function, block)
    return out


def reference_reduce(function: object, x: np.ndarray, axes: Sequence[int], output_dtype: np.dtype | type) -> np.ndarray:
    """REDUCE of the logical input ``x`` over ``axes`` (any order), converted to ``output_dtype``.

    Integer results wrap modulo 2**bits; float results are rounded once (round to nearest even) to the output type.
    """
    out_dtype = np.dtype(output_dtype)
    exact = reference_reduce_unrounded(function, x, axes)
    if is_float_dtype(out_dtype):
        with np.errstate(over="ignore", invalid="ignore"):
            return exact.astype(np.float64).astype(out_dtype)
    out = np.empty(exact.shape, dtype=out_dtype)
    for index in itertools.product(*(range(n) for n in exact.shape)):
        value = exact[index]
        if isinstance(value, float):  # an ARGMAX / ARGMIN index computed from float input
            value = int(value)
        out[index] = wrap_int(value, out_dtype)
    return out
