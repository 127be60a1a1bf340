"""Naive reference implementations of operator semantics, used as test oracles.

Everything here is written independently of the ``opendml`` package (never import it here) and as plainly as
possible: Python loops, exact Python integers for integer data, float64 / correctly rounded sums for floating
point data.  Speed is irrelevant; the inputs used by the tests are small.

Organization: shared helpers first, then one section per operator.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence

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


# ---------------------------------------------------------------------------------------------------------------------
# SPLIT and ONE_HOT
# ---------------------------------------------------------------------------------------------------------------------
# Naive reference implementations of SPLIT and ONE_HOT, the oracles of their property tests.
#
# Independent of the ``opendml`` package (never import it here) and as plain as possible: a Python loop over every
# logical index, element by element, with the rules as the doc pages and DECISIONS.md 14-16 state them. Index
# values are read as exact Python integers, so huge UINT64 values are never mistaken for negative ones.


def _every_index(shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
    return itertools.product(*(range(size) for size in shape))


def reference_split(x: np.ndarray, axis: int, sizes: Sequence[int]) -> list[np.ndarray]:
    """Output i holds the input elements whose coordinate along ``axis`` lies in [start_i, start_i + sizes[i]),
    start_i being the sum of the sizes before it (DECISIONS 14)."""
    outputs = []
    start = 0
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        output = np.empty(shape, x.dtype)
        for index in _every_index(shape):
            source = list(index)
            source[axis] += start
            output[index] = x[tuple(source)]
        outputs.append(output)
        start += size
    if start != x.shape[axis]:
        raise ValueError(f"the sizes {list(sizes)} do not add up to {x.shape[axis]}")
    return outputs


def off_and_on(values: np.ndarray) -> tuple[np.generic, np.generic]:
    """OffValue: the element at coordinate 0 everywhere. OnValue: coordinate 1 along the highest-numbered
    dimension whose size is > 1, 0 elsewhere (DECISIONS 16)."""
    rank = values.ndim
    dims = [dim for dim, size in enumerate(values.shape) if size > 1]
    if not dims:
        raise ValueError("the values tensor needs at least 2 elements")
    on_index = [0] * rank
    on_index[dims[-1]] = 1
    return values[(0,) * rank], values[tuple(on_index)]


def reference_one_hot(indices: np.ndarray, values: np.ndarray, depth: int, axis: int) -> np.ndarray:
    """Each sequence along ``axis`` (``depth`` long) is OffValue except at its index's position, OnValue.

    A negative index of a signed index type counts from the end (index + depth); an index still outside
    [0, depth) leaves the whole sequence at OffValue (DECISIONS 15). Signed index types exist from feature level
    3_0, where negative indices are supported, so the type alone decides."""
    if indices.shape[axis] != 1:
        raise ValueError("the indices must have size 1 along the axis")
    off, on = off_and_on(values)
    signed = indices.dtype.kind == "i"
    shape = list(indices.shape)
    shape[axis] = depth
    output = np.empty(shape, values.dtype)
    for index in _every_index(shape):
        at = list(index)
        at[axis] = 0
        raw = int(indices[tuple(at)])
        position = raw + depth if signed and raw < 0 else raw
        output[index] = on if 0 <= position < depth and index[axis] == position else off
    return output


# ---------------------------------------------------------------------------------------------------------------------
# GATHER_ND1
# ---------------------------------------------------------------------------------------------------------------------
# A naive GATHER_ND1 oracle, written from DIGEST 2.5 and DECISIONS 20-21 without the package's code.
#
# One Python loop over the index positions; each tuple's coordinates are read as Python integers (so UINT64 values
# of 2^63 and more stay what they are), wrapped once if negative and signed, and clamped; the gathered sub-block is
# NumPy's basic indexing of the meaningful input.


def gather_nd1_output_sizes(input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], input_dimension_count: int,
                            indices_dimension_count: int, batch_dimension_count: int) -> tuple[int, ...]:
    """The indices' meaningful sizes without the tuple size, then the input's meaningful sizes after the batch and
    tuple dimensions, padded on the left with 1s to the common rank."""
    rank = len(input_sizes)
    meaningful_input = input_sizes[rank - input_dimension_count:]
    meaningful_indices = indices_sizes[rank - indices_dimension_count:]
    tuple_size = meaningful_indices[-1]
    sizes = meaningful_indices[:-1] + meaningful_input[batch_dimension_count + tuple_size:]
    return (1,) * (rank - len(sizes)) + sizes


def reference_gather_nd1(x: np.ndarray, indices: np.ndarray, input_dimension_count: int,
                         indices_dimension_count: int, batch_dimension_count: int, *, signed: bool
                         ) -> tuple[np.ndarray, list[tuple[tuple[int, ...], int]]]:
    """(the logical output, every out-of-range coordinate as (its logical index in the indices tensor, value)).

    The out-of-range list is in row-major order over the index positions, then coordinate order within a tuple.
    """
    rank = x.ndim
    data = x.reshape(x.shape[rank - input_dimension_count:])
    tuples = indices.reshape(indices.shape[rank - indices_dimension_count:])
    batch = batch_dimension_count
    tuple_size = tuples.shape[-1]
    rest_shape = data.shape[batch + tuple_size:]
    result = np.empty(tuples.shape[:-1] + rest_shape, dtype=x.dtype)
    bad: list[tuple[tuple[int, ...], int]] = []
    leading = (0,) * (rank - indices_dimension_count)
    for position in itertools.product(*(range(n) for n in tuples.shape[:-1])):
        coordinates = []
        for k in range(tuple_size):
            value = int(tuples[(*position, k)])
            size = data.shape[batch + k]
            coordinate = value + size if signed and value < 0 else value
            if not 0 <= coordinate < size:
                bad.append((leading + position + (k,), value))
                coordinate = min(max(coordinate, 0), size - 1)
            coordinates.append(coordinate)
        result[position] = data[tuple(position[:batch]) + tuple(coordinates)]
    output_sizes = gather_nd1_output_sizes(x.shape, indices.shape, input_dimension_count, indices_dimension_count,
                                           batch_dimension_count)
    return result.reshape(output_sizes), bad


def reference_gather_nd1_vectorized(x: np.ndarray, indices: np.ndarray, input_dimension_count: int,
                                    indices_dimension_count: int, batch_dimension_count: int, *, signed: bool
                                    ) -> np.ndarray:
    """The same rule as reference_gather_nd1 with NumPy fancy indexing, for inputs too large for a Python loop.

    UINT64 values of 2^63 and more would not survive int64 arithmetic: callers use them only with the loop."""
    rank = x.ndim
    data = x.reshape(x.shape[rank - input_dimension_count:])
    tuples = indices.reshape(indices.shape[rank - indices_dimension_count:]).astype(np.int64)
    batch = batch_dimension_count
    coordinates = []
    for k in range(tuples.shape[-1]):
        size = data.shape[batch + k]
        value = tuples[..., k]
        if signed:
            value = np.where(value < 0, value + size, value)
        coordinates.append(np.clip(value, 0, size - 1))
    batch_grid = np.indices(tuples.shape[:batch], sparse=True) if batch else ()
    batch_index = tuple(axis.reshape(axis.shape + (1,) * (tuples.ndim - 1 - batch)) for axis in batch_grid)
    result = data[batch_index + tuple(coordinates)]
    output_sizes = gather_nd1_output_sizes(x.shape, indices.shape, input_dimension_count, indices_dimension_count,
                                           batch_dimension_count)
    return np.asarray(result).reshape(output_sizes)


# ---------------------------------------------------------------------------------------------------------------------
# MEAN_VARIANCE_NORMALIZATION1 and the fusable activations
# ---------------------------------------------------------------------------------------------------------------------
# Naive float64 reference of MEAN_VARIANCE_NORMALIZATION1 and its fusable activations: the test oracle.
#
# Independent of the ``opendml`` package (never import it here) and written as plainly as possible: NumPy float64
# for the statistics, Python's ``math`` module element by element for the activations. Speed is irrelevant.
#
# Conventions the project rules on (DECISIONS 17, 19 and the kernel's documented behaviour):
# - population variance (divide by N); Epsilon inside the square root; absent Scale = 1, absent Bias = 0;
# - Epsilon and the activation parameters are FLOAT: the caller passes them rounded to float32;
# - every activation maps NaN to NaN but THRESHOLDED_RELU and SHRINK, whose formulas (comparisons, false for NaN)
#   give 0; each gives its limit at +-infinity where the formula would compute inf * 0 or inf / inf
#   (GELU(-inf) = -0, SOFTSIGN(+-inf) = +-1, TANH(+-inf) = +-1).


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
        return -0.0
    if 0 < abs(x) < 1e-30:
        # x / 2 + x^2 / sqrt(2 pi) + ...: just above x / 2, which float64 cannot tell from x / 2 (for the smallest
        # FLOAT32 subnormal, x / 2 would be a tie that rounds to 0 where GELU(x) rounds to x).
        return math.nextafter(0.5 * x, math.inf)
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
    values = np.array(values, np.float64, order="C")  # reshape(-1) below must be a view of `out`, never a copy
    if name is None:
        return values.copy()
    function = _scalar_activation(name, [float(v) for v in parameters])
    out = np.empty_like(values)
    flat_in, flat_out = values.reshape(-1), out.reshape(-1)
    nan_gives_nan = name not in ("THRESHOLDED_RELU", "SHRINK")
    for index, value in enumerate(flat_in.tolist()):
        flat_out[index] = math.nan if math.isnan(value) and nan_gives_nan else function(value)
    return out


def activation_turns(name: str | None, parameters: Sequence[float]) -> list[float]:
    """Points where the activation may turn or jump (kinks at 0 and at its parameters, either side of each, and
    GELU's minimum near -0.7518): over an interval, its least and greatest values are at the interval's ends or at
    these points clipped into it."""
    if name is None:
        return []
    points = [0.0, -0.7517915240375, *(sign * float(v) for v in parameters for sign in (1.0, -1.0))]
    return sorted({float(edge) for point in points if math.isfinite(point)
                   for edge in (point, np.nextafter(point, -math.inf), np.nextafter(point, math.inf))})


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


# ---------------------------------------------------------------------------------------------------------------------
# ARGMIN and ARGMAX (with AxisDirection)
# ---------------------------------------------------------------------------------------------------------------------
# The index of the extreme of each reduced block, row-major over the reduced axes in increasing dimension order (the
# order ``reduce_blocks`` lists a block in). A NaN counts as the extreme. Among equal extremes (-0.0 equals 0.0), or
# among NaNs, INCREASING takes the first index and DECREASING the last.


def arg_extreme_directed(block: Sequence[float] | Sequence[int], *, want_max: bool, decreasing: bool) -> int:
    """Index of the extreme of ``block``: the first one, or with ``decreasing`` the last one."""
    nans = [i for i, v in enumerate(block) if isinstance(v, float) and math.isnan(v)]
    if nans:
        return nans[-1] if decreasing else nans[0]
    extreme = max(block) if want_max else min(block)
    hits = [i for i, v in enumerate(block) if v == extreme]
    return hits[-1] if decreasing else hits[0]


def reference_arg_min_max(x: np.ndarray, axes: Sequence[int], output_dtype: np.dtype | type, *, want_max: bool,
                          decreasing: bool) -> np.ndarray:
    """ARGMAX (``want_max``) or ARGMIN of the logical input ``x`` over ``axes`` (any order), in ``output_dtype``."""
    x = np.asarray(x)
    out = np.empty(reduce_output_shape(x.shape, axes), dtype=np.dtype(output_dtype))
    for out_index, block in reduce_blocks(x, axes):
        out[out_index] = arg_extreme_directed(block, want_max=want_max, decreasing=decreasing)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# JOIN
# ---------------------------------------------------------------------------------------------------------------------


def reference_join(inputs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    """Input i's element at coordinates c lands at c shifted along ``axis`` by the sizes of the inputs before it
    (the JOIN page's rule, SPLIT's inverse); every other size is shared. One element at a time."""
    if not inputs:
        raise ValueError("JOIN needs at least one input")
    shape = list(inputs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    output = np.empty(shape, inputs[0].dtype)
    start = 0
    for x in inputs:
        if x.dtype != output.dtype or [size for dim, size in enumerate(x.shape) if dim != axis] != [
                size for dim, size in enumerate(shape) if dim != axis]:
            raise ValueError(f"an input of shape {x.shape} and {x.dtype} does not join into {shape} along {axis}")
        for index in _every_index(x.shape):
            target = list(index)
            target[axis] += start
            output[tuple(target)] = x[index]
        start += x.shape[axis]
    return output


# ---------------------------------------------------------------------------------------------------------------------
# Standalone activations on integer tensors (RELU: INT32/INT16/INT8 from FL 5_1; SHRINK: the 8- to 32-bit integers)
# ---------------------------------------------------------------------------------------------------------------------
# Conventions the project rules on: exact integer arithmetic; SHRINK's x - Bias and x + Bias are truncated toward zero
# (as ONNX's Shrink converts its result to the type) and saturated to the type's range; Bias and Threshold are FLOAT
# (the caller passes them rounded to float32) and compared with x exactly, as rationals.


def _truncated_ratio(numerator: int, denominator: int) -> int:
    """numerator / denominator (denominator > 0) truncated toward zero, exactly."""
    quotient = abs(numerator) // denominator
    return quotient if numerator >= 0 else -quotient


def reference_activation_integer(name: str, parameters: Sequence[float], x: np.ndarray) -> np.ndarray:
    """RELU or SHRINK applied to an integer array element by element, exactly, saturated to its dtype's range."""
    info = np.iinfo(x.dtype)
    low, high = int(info.min), int(info.max)
    if name == "RELU":
        def function(v: int) -> int:
            return max(v, 0)
    elif name == "SHRINK":
        bias_n, bias_d = float(parameters[0]).as_integer_ratio()
        threshold_n, threshold_d = float(parameters[1]).as_integer_ratio()

        def function(v: int) -> int:
            if v * threshold_d > threshold_n:
                return _truncated_ratio(v * bias_d - bias_n, bias_d)
            if v * threshold_d < -threshold_n:
                return _truncated_ratio(v * bias_d + bias_n, bias_d)
            return 0
    else:
        raise ValueError(f"{name} has no integer form")
    values = [min(max(function(int(v)), low), high) for v in np.asarray(x).reshape(-1).tolist()]
    return np.array(values, dtype=x.dtype).reshape(np.shape(x))


# ---------------------------------------------------------------------------------------------------------------------
# ELEMENT_WISE
# ---------------------------------------------------------------------------------------------------------------------
# The 62 element-wise operators, element by element, written from the DML pages and the README's rulings without the
# package's formula language (never import opendml here): exact Python ints for integer tensors (wrapped to the
# output's type on store: + - * wrap, truncating division, division and modulus by zero give 0, INT_MIN / -1 wraps,
# shifts by the width or more give 0), Python / NumPy float64 for floats. The compute float is FLOAT32 for FLOAT32
# and FLOAT16 tensors (the FLOAT16 values are widened exactly, the result rounded once to FLOAT16): where an operator
# is a chain of IEEE operations (MEAN, DIFFERENCE_SQUARE, ScaleBias, the quantizers) each step is rounded to the
# compute float (`rnd`), since float64 rounded once to FLOAT32 is the correctly rounded FLOAT32 result of one + - * /
# (53 >= 2 * 24 + 2); transcendentals are computed once in float64 (the caller compares within ulps).
# NaN: MIN, MAX, CLIP, CLIP1 and THRESHOLD propagate it; comparisons with NaN are false; SIGN(NaN) = 0; QUANTIZE of
# NaN saturates to 0.


class ElementWiseContext:
    """What an element function needs besides its values: the compute float's rounding, the input and output
    dtypes, and the operator's scalar fields (DML names)."""

    def __init__(self, compute: type, inputs: dict[str, np.dtype], output: np.dtype,
                 fields: dict[str, object]) -> None:
        self.compute, self.inputs, self.output, self.fields = compute, inputs, output, fields

    def rnd(self, value: float) -> float:
        """`value` rounded to the compute float."""
        return float(self.compute(value))

    def width(self, variable: str) -> int:
        return self.inputs[variable].itemsize * 8


def _f64(function: Callable[..., object]) -> Callable[..., float]:
    """A NumPy float64 function as a function of Python floats (IEEE specials, no exceptions)."""
    def call(*values: float) -> float:
        with np.errstate(all="ignore"):
            return float(function(*(np.float64(v) for v in values)))  # type: ignore[arg-type]
    return call


_fdiv = _f64(np.divide)
_fmod = _f64(np.fmod)
_ffloor = _f64(np.floor)


def _fpow(x: float, y: float) -> float:
    """C99's pow (Python's math.pow, with its domain and range errors turned into C99's results; NumPy's power
    computes pow(-inf, 0.5) as sqrt(-inf) = NaN)."""
    odd = y.is_integer() and abs(y) < 2.0**53 and int(y) % 2 == 1
    try:
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if x < 0 and odd else math.inf
    except ValueError:
        if x == 0 and y < 0:   # a pole: +-inf for an odd exponent (the zero's sign), +inf otherwise
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def trunc_div(a: int, b: int) -> int:
    """Integer division truncating toward zero; 0 for b == 0 (the caller wraps MIN / -1)."""
    if b == 0:
        return 0
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def round_half_even(x: float) -> float:
    """The nearest integer, halves to the even one; the sign of zero kept; inf and NaN unchanged."""
    if not math.isfinite(x):
        return x
    return math.copysign(float(round(x)), x)   # Python's round() rounds halves to even, exactly


def round_half_away(x: float) -> float:
    """The nearest integer, halves away from zero."""
    if not math.isfinite(x):
        return x
    magnitude = abs(x)
    whole = math.floor(magnitude)
    return math.copysign(float(whole + 1 if magnitude - whole >= 0.5 else whole), x)


def _extreme(pick: Callable[[float, float], float]) -> Callable[[float, float], float]:
    def function(a: float, b: float) -> float:
        if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
            return math.nan
        return pick(a, b)
    return function


_max, _min = _extreme(max), _extreme(min)


def _clip(ctx: ElementWiseContext, x: float) -> float:
    low, high = ctx.fields["Min"], ctx.fields["Max"]
    if isinstance(x, int):   # CLIP's FLOAT Min / Max on an integer tensor: truncated toward zero, saturated
        info = np.iinfo(ctx.output)
        low, high = (max(int(info.min), min(int(info.max), int(float(np.float32(v))))) for v in (low, high))
    elif ctx.compute is not np.float64:
        low, high = ctx.rnd(float(low)), ctx.rnd(float(high))   # type: ignore[arg-type]
    return _max(low, _min(x, high))  # type: ignore[arg-type]


def _clip1(ctx: ElementWiseContext, x: float) -> float:
    low, high = ctx.fields["Min"], ctx.fields["Max"]   # exact in the tensor's type (the caller's values)
    return _max(low, _min(x, high))  # type: ignore[arg-type]


def _threshold(ctx: ElementWiseContext, x: float) -> float:
    low = ctx.fields["Min"]
    if isinstance(x, int):
        info = np.iinfo(ctx.output)
        low = max(int(info.min), min(int(info.max), int(float(np.float32(low)))))  # type: ignore[arg-type]
    else:
        low = ctx.rnd(float(low))  # type: ignore[arg-type]
    return _max(x, low)  # type: ignore[arg-type]


def _sign(ctx: ElementWiseContext, x: float) -> float:
    if isinstance(x, float) and math.isnan(x):
        return 0.0
    return (x > 0) - (x < 0) if isinstance(x, int) else float((x > 0) - (x < 0))


def _is_infinity(ctx: ElementWiseContext, x: float) -> bool:
    mode = ctx.fields.get("InfinityMode", "EITHER")
    return math.isinf(x) and (mode == "EITHER" or (mode == "POSITIVE") == (x > 0))


def _round(ctx: ElementWiseContext, x: float) -> float:
    mode = ctx.fields.get("RoundingMode", "HALVES_TO_NEAREST_EVEN")
    if mode == "TOWARD_ZERO":
        return x if not math.isfinite(x) else math.copysign(float(math.trunc(x)), x)
    return round_half_away(x) if mode == "TOWARD_INFINITY" else round_half_even(x)


def _saturate(value: float, dtype: np.dtype) -> int:
    """An integral float clamped to the integer type's range; NaN gives 0."""
    info = np.iinfo(dtype)
    if math.isnan(value):
        return 0
    if value <= info.min:
        return int(info.min)
    if value >= info.max:
        return int(info.max)
    return int(value)


def _quantize(ctx: ElementWiseContext, x: float, s: float, z: int = 0) -> int:
    """clamp(round(input / scale) + zero_point, Min, Max), halves to even, in the compute float."""
    quotient = ctx.rnd(_fdiv(ctx.rnd(float(x)), s))
    return _saturate(ctx.rnd(round_half_even(quotient) + float(z)), ctx.output)


def _dequantize(ctx: ElementWiseContext, x: int, s: float, z: int = 0) -> float:
    """(input - zero_point) * scale: the difference exact, then converted to the compute float."""
    return ctx.rnd(ctx.rnd(float(x - z)) * s)


def _pow(ctx: ElementWiseContext, x: float, e: float) -> float:
    """pow by the tensors' kinds: a float base with any exponent (an integer exponent converted to the compute
    float); an integer base with a float exponent: pow in the compute float, truncated and saturated; integers:
    exactly, wrapped (a negative exponent: 1 / x^-e truncated: 1 for x = 1, +-1 for x = -1, 0 otherwise)."""
    if isinstance(x, float):
        return _fpow(x, ctx.rnd(float(e)))
    if isinstance(e, float):
        result = ctx.rnd(_fpow(ctx.rnd(float(x)), e))
        return _saturate(float(math.trunc(result)) if math.isfinite(result) else result, ctx.output)
    if e >= 0:
        return pow(x, e, 1 << 64)
    if x == 1:
        return 1
    if x == -1:
        return -1 if e % 2 else 1
    return 0


def _mod_floor(ctx: ElementWiseContext, a: float, b: float) -> float:
    if isinstance(a, int):
        return 0 if b == 0 else a % b   # Python's modulus: the divisor's sign
    remainder = _fmod(a, b)
    if remainder == 0:   # Python's %: a zero remainder takes the divisor's sign
        return math.copysign(0.0, b)
    if (remainder < 0) != (b < 0):
        remainder = ctx.rnd(remainder + b)
    return remainder


def _mod_trunc(ctx: ElementWiseContext, a: float, b: float) -> float:
    if isinstance(a, int):
        return a - trunc_div(a, b) * b if b != 0 else 0
    return _fmod(a, b)


def _shift(ctx: ElementWiseContext, a: int, b: int, left: bool) -> int:
    width = ctx.width("a")
    if not 0 <= b < width:
        return 0
    return a << b if left else a >> b


def _arith(float_op: Callable[[float, float], float], int_op: Callable[[int, int], int]
           ) -> Callable[[ElementWiseContext, float, float], float]:
    def function(ctx: ElementWiseContext, a: float, b: float) -> float:
        if isinstance(a, int):
            return int_op(a, b)  # type: ignore[arg-type]
        return ctx.rnd(float_op(a, b))
    return function


def _add_activation(ctx: ElementWiseContext, a: float, b: float) -> float:
    total = ctx.rnd(a + b)
    activation = ctx.fields.get("FusedActivation")
    if activation is None:
        return total
    name, parameters = activation  # type: ignore[misc]
    return float(apply_activation(name, parameters, np.array([total]))[0])


def _mean(ctx: ElementWiseContext, a: float, b: float) -> float:
    if isinstance(a, int):
        return trunc_div(a + b, 2)
    return ctx.rnd(ctx.rnd(a + b) / 2)


def _bits(function: Callable[[int, int], int]) -> Callable[[ElementWiseContext, int, int], int]:
    return lambda ctx, a, b: function(a, b)


_UNARY_FLOAT = {
    "ACOS": np.arccos, "ASIN": np.arcsin, "ATAN": np.arctan, "COS": np.cos, "EXP": np.exp, "LOG": np.log,
    "SIN": np.sin, "SQRT": np.sqrt, "TAN": np.tan, "SINH": np.sinh, "COSH": np.cosh, "TANH": np.tanh,
    "ASINH": np.arcsinh, "ACOSH": np.arccosh, "ATANH": np.arctanh, "CEIL": np.ceil, "FLOOR": np.floor,
}

def _unary_float(function: Callable[..., object]) -> Callable[[ElementWiseContext, float], float]:
    wide = _f64(function)
    return lambda ctx, x: wide(x)


#: Operator (DML name without ELEMENT_WISE_) -> its element function (context, then the values in the struct's
#: order of input tensors: x; a, b; x, e for POW; c, a, b for IF; x, s, z for the quantizers). Float values come
#: in as Python floats (ScaleBias already applied), integers as Python ints; the result is a float (rounded by the
#: caller to the output's type), an int (wrapped by the caller) or a bool (1 or 0).
ELEMENT_WISE_REFERENCE: dict[str, Callable[..., object]] = {
    "IDENTITY": lambda ctx, x: x,
    "ABS": lambda ctx, x: abs(x),
    **{name: _unary_float(function) for name, function in _UNARY_FLOAT.items()},
    "RECIP": lambda ctx, x: _fdiv(1.0, x),
    "ERF": lambda ctx, x: math.erf(x),
    "CLIP": _clip,
    "CLIP1": _clip1,
    "THRESHOLD": _threshold,
    "CONSTANT_POW": lambda ctx, x: _fpow(x, ctx.rnd(float(ctx.fields["Exponent"]))),  # type: ignore[arg-type]
    "LOGICAL_NOT": lambda ctx, x: x == 0,
    "SIGN": _sign,
    "IS_NAN": lambda ctx, x: math.isnan(x),
    "IS_INFINITY": _is_infinity,
    "ROUND": _round,
    "BIT_NOT": lambda ctx, x: ~x,
    "BIT_COUNT": lambda ctx, x: bin(x & ((1 << ctx.width("x")) - 1)).count("1"),   # the bits of x's own width
    "NEGATE": lambda ctx, x: -x,
    "QUANTIZE_LINEAR": _quantize,
    "DEQUANTIZE_LINEAR": _dequantize,
    "ADD": _arith(lambda a, b: a + b, lambda a, b: a + b),
    "ADD1": lambda ctx, a, b: a + b if isinstance(a, int) else _add_activation(ctx, a, b),
    "SUBTRACT": _arith(lambda a, b: a - b, lambda a, b: a - b),
    "MULTIPLY": _arith(lambda a, b: a * b, lambda a, b: a * b),
    "DIVIDE": _arith(_fdiv, trunc_div),
    "POW": _pow,
    "MAX": lambda ctx, a, b: _max(a, b),
    "MIN": lambda ctx, a, b: _min(a, b),
    "MEAN": _mean,
    "LOGICAL_AND": lambda ctx, a, b: a != 0 and b != 0,
    "LOGICAL_OR": lambda ctx, a, b: a != 0 or b != 0,
    "LOGICAL_XOR": lambda ctx, a, b: (a != 0) != (b != 0),
    "LOGICAL_EQUALS": lambda ctx, a, b: a == b,
    "LOGICAL_GREATER_THAN": lambda ctx, a, b: a > b,
    "LOGICAL_GREATER_THAN_OR_EQUAL": lambda ctx, a, b: a >= b,
    "LOGICAL_LESS_THAN": lambda ctx, a, b: a < b,
    "LOGICAL_LESS_THAN_OR_EQUAL": lambda ctx, a, b: a <= b,
    "BIT_AND": _bits(lambda a, b: a & b),
    "BIT_OR": _bits(lambda a, b: a | b),
    "BIT_XOR": _bits(lambda a, b: a ^ b),
    "BIT_SHIFT_LEFT": lambda ctx, a, b: _shift(ctx, a, b, True),
    "BIT_SHIFT_RIGHT": lambda ctx, a, b: _shift(ctx, a, b, False),
    "MODULUS_TRUNCATE": _mod_trunc,
    "MODULUS_FLOOR": _mod_floor,
    "ATAN_YX": lambda ctx, a, b: _f64(np.arctan2)(a, b),
    "DIFFERENCE_SQUARE": lambda ctx, a, b: (a - b) * (a - b) if isinstance(a, int) else ctx.rnd(
        ctx.rnd(a - b) * ctx.rnd(a - b)),
    "IF": lambda ctx, c, a, b: a if c != 0 else b,
}

#: The operators that work on the raw bits of float tensors (the pages' "native encoding").
ELEMENT_WISE_BITWISE = frozenset({"BIT_NOT", "BIT_COUNT", "BIT_AND", "BIT_OR", "BIT_XOR"})
#: The variables ScaleBias applies to (float tensors only).
_SCALED = {"POW": "x"}


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def reference_element_wise(operator: str, inputs: dict[str, np.ndarray | None], output_dtype: np.dtype | type,
                           fields: dict[str, object] | None = None) -> np.ndarray:
    """The operator over logical arrays of one shape: `inputs` {formula variable (x; a, b; x, e; c, a, b; x, s, z):
    array or None (an absent zero point: 0)}; `fields` the scalar fields by DML name (Min, Max, Exponent,
    RoundingMode / InfinityMode as the enum member's name, ScaleBias as (scale, bias) or None, FusedActivation as
    (activation name, parameters) or None). Returns the expected output in `output_dtype`: floats rounded once from
    the compute float, integers wrapped, booleans 1 or 0."""
    fields = dict(fields or {})
    output = np.dtype(output_dtype)
    present = {name: array for name, array in inputs.items() if array is not None}
    bitwise = operator in ELEMENT_WISE_BITWISE
    if bitwise:   # the raw bits, as unsigned integers of the tensor's width
        present = {name: array.view(_unsigned(array.dtype)) if is_float_dtype(array.dtype) else array
                   for name, array in present.items()}
        if is_float_dtype(output):
            output = _unsigned(output)
    dtypes = {name: array.dtype for name, array in present.items()}
    compute = np.float64 if any(dtype == np.float64 for dtype in (*dtypes.values(), output)) else np.float32
    ctx = ElementWiseContext(compute, dtypes, output, fields)
    function = ELEMENT_WISE_REFERENCE[operator]
    scale_bias = fields.get("ScaleBias")
    scaled = _SCALED.get(operator, "x")
    shape = next(iter(present.values())).shape
    flat = {name: to_python_scalars(array) for name, array in present.items()}
    names = list(inputs)
    results: list[object] = []
    with np.errstate(all="ignore"):
        for index in range(int(np.prod(shape))):
            values = []
            for name in names:
                value = flat[name][index] if name in flat else 0
                if name == scaled and scale_bias is not None and isinstance(value, float):
                    scale, bias = scale_bias  # type: ignore[misc]
                    value = ctx.rnd(ctx.rnd(value * float(np.float32(scale))) + float(np.float32(bias)))
                values.append(value)
            results.append(function(ctx, *values))
    return _store(results, output, compute).reshape(shape).view(
        np.dtype(output_dtype)) if bitwise else _store(results, output, compute).reshape(shape)


def _store(results: list[object], output: np.dtype, compute: type) -> np.ndarray:
    """The results in the output's type: floats rounded to the compute float, then once to FLOAT16 where the output
    is; integers (and booleans) wrapped."""
    if is_float_dtype(output):
        with np.errstate(all="ignore"):
            wide = np.array([float(value) for value in results], np.float64)  # type: ignore[arg-type]
            return wide.astype(compute).astype(output)
    return np.array([wrap_int(int(value), output) for value in results],  # type: ignore[call-overload]
                    dtype=object).astype(output)


# ---------------------------------------------------------------------------------------------------------------------
# GEMM and CONVOLUTION
# ---------------------------------------------------------------------------------------------------------------------
# Float64 references written from the pages' definitions (never from a kernel): GEMM as an einsum over the logical
# matrices, CONVOLUTION as a direct loop over the filter's taps, gathering (FORWARD) or scattering (BACKWARD, the
# transposed convolution) one tap at a time. Each returns (value, magnitude): the exact result before any fused
# activation, and the same sum taken over absolute values, which the error bound scales with.
#
# Conventions (issue 27, notes/GEMMCONV.md):
# - GEMM: Alpha * op(A) @ op(B) + Beta * C, the batch dimensions broadcast NumPy-style; without C, Beta is ignored.
# - CONVOLUTION FORWARD, CROSS_CORRELATION: out[n, g*Cog + o, y] = sum_{c < Cig, k} in[n, g*Cig + c, y*S - Ps + k*D]
#   * filter[g*Cog + o, c, k], reads outside the input being 0. BACKWARD (ONNX's ConvTranspose, what ORT maps onto
#   it with CROSS_CORRELATION): filter {InputChannels, OutputChannels / Groups, k...}, and every input element is
#   scattered: out[n, g*Cog + o, y*S - Ps + k*D] += in[n, g*Cig + c, y] * filter[g*Cig + c, o, k], writes outside the
#   output dropped (OutputPadding's trailing elements take what lands there, else 0). Mode CONVOLUTION flips the
#   filter's spatial axes in both directions (the page's "mode interactions" table, seen from these formulas).
#   Bias {1, Cout, 1...} is added per output channel.


def _flag(value: object, true_name: str) -> bool:
    """An enum member (by its name), a string or a bool: whether it is `true_name`."""
    name = getattr(value, "name", value)
    return name == true_name if isinstance(name, str) else bool(name)


def reference_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, *, trans_a: object = False,
                   trans_b: object = False, alpha: float = 1.0, beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(Alpha * op(A) @ op(B) + Beta * C, |Alpha| * |op(A)| @ |op(B)| + |Beta * C|) in float64, unrounded, before
    any fused activation. op transposes the last two dimensions where `trans_a` / `trans_b` is TRANSPOSE (or True);
    the leading dimensions broadcast NumPy-style, and C broadcasts to the result."""
    op_a = np.asarray(a, np.float64)
    op_b = np.asarray(b, np.float64)
    if _flag(trans_a, "TRANSPOSE"):
        op_a = np.swapaxes(op_a, -1, -2)
    if _flag(trans_b, "TRANSPOSE"):
        op_b = np.swapaxes(op_b, -1, -2)
    with np.errstate(all="ignore"):
        value = alpha * np.einsum("...mk,...kn->...mn", op_a, op_b)
        magnitude = abs(alpha) * np.einsum("...mk,...kn->...mn", np.abs(op_a), np.abs(op_b))
        if c is not None:
            scaled = beta * np.asarray(c, np.float64)
            value = value + scaled
            magnitude = magnitude + np.abs(scaled)
    return np.asarray(value), np.asarray(magnitude)


def convolution_output_sizes(input_sizes: Sequence[int], filter_sizes: Sequence[int], *, direction: object,
                             strides: Sequence[int], dilations: Sequence[int], start_padding: Sequence[int],
                             end_padding: Sequence[int], output_padding: Sequence[int], group_count: int
                             ) -> tuple[int, ...]:
    """The output's sizes: {N, Cout, spatial...}. FORWARD: (in + Ps + Pe - ((k - 1) * D + 1)) // S + 1 and Cout =
    FilterBatchCount; BACKWARD: (in - 1) * S + (k - 1) * D + 1 - Ps - Pe + OutputPadding and Cout = Groups *
    FilterChannelCount."""
    backward = _flag(direction, "BACKWARD")
    spatial = []
    for d, size in enumerate(input_sizes[2:]):
        extent = (filter_sizes[2 + d] - 1) * dilations[d] + 1
        if backward:
            spatial.append((size - 1) * strides[d] + extent - start_padding[d] - end_padding[d] + output_padding[d])
        else:
            spatial.append((size + start_padding[d] + end_padding[d] - extent) // strides[d] + 1)
    channels = group_count * filter_sizes[1] if backward else filter_sizes[0]
    return (input_sizes[0], channels, *spatial)


def reference_convolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, *, mode: object = "CROSS_CORRELATION",
                          direction: object = "FORWARD", strides: Sequence[int] | None = None,
                          dilations: Sequence[int] | None = None, start_padding: Sequence[int] | None = None,
                          end_padding: Sequence[int] | None = None, output_padding: Sequence[int] | None = None,
                          group_count: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(the convolution plus Bias, the same over absolute values) in float64, before any fused activation, of the
    logical input `x` {N, Cin, spatial...} and filter `w` (FORWARD: {Cout, Cin / Groups, k...}; BACKWARD: {Cin,
    Cout / Groups, k...}); the arrays of spatial fields default to DML's (strides and dilations 1, paddings 0)."""
    x64 = np.asarray(x, np.float64)
    w64 = np.asarray(w, np.float64)
    count = x64.ndim - 2
    strides = tuple(strides or (1,) * count)
    dilations = tuple(dilations or (1,) * count)
    start = tuple(start_padding or (0,) * count)
    end = tuple(end_padding or (0,) * count)
    extra = tuple(output_padding or (0,) * count)
    backward = _flag(direction, "BACKWARD")
    if _flag(mode, "CONVOLUTION"):
        w64 = w64[(slice(None), slice(None), *(slice(None, None, -1),) * count)]
    out_sizes = convolution_output_sizes(x64.shape, w64.shape, direction=direction, strides=strides,
                                         dilations=dilations, start_padding=start, end_padding=end,
                                         output_padding=extra, group_count=group_count)
    value = np.zeros(out_sizes)
    magnitude = np.zeros(out_sizes)
    cig = x64.shape[1] // group_count
    cog = out_sizes[1] // group_count
    # Along each spatial dimension, a tap k links input position y*S - Ps + k*D to output position y (FORWARD) or
    # input position y to output position y*S - Ps + k*D (BACKWARD); `near` ranges over y, `far` is the other end.
    near_sizes = x64.shape[2:] if backward else out_sizes[2:]
    far_sizes = out_sizes[2:] if backward else x64.shape[2:]
    with np.errstate(all="ignore"):
        for tap in itertools.product(*(range(k) for k in w64.shape[2:])):
            near, far = [], []
            for d in range(count):
                positions = np.arange(near_sizes[d]) * strides[d] - start[d] + tap[d] * dilations[d]
                inside = (positions >= 0) & (positions < far_sizes[d])
                near.append(np.flatnonzero(inside))
                far.append(positions[inside])
            if any(len(p) == 0 for p in near):
                continue
            source = np.ix_(*(near if backward else far))
            target = np.ix_(*(far if backward else near))
            for g in range(group_count):
                xs = x64[(slice(None), slice(g * cig, (g + 1) * cig), *source)]
                if backward:
                    taps = w64[(slice(g * cig, (g + 1) * cig), slice(None), *tap)]       # {Cig, Cog}
                    pattern = "nc...,co->no..."
                else:
                    taps = w64[(slice(g * cog, (g + 1) * cog), slice(None), *tap)]       # {Cog, Cig}
                    pattern = "nc...,oc->no..."
                where = (slice(None), slice(g * cog, (g + 1) * cog), *target)
                value[where] += np.einsum(pattern, xs, taps)
                magnitude[where] += np.einsum(pattern, np.abs(xs), np.abs(taps))
        if bias is not None:
            b64 = np.asarray(bias, np.float64).reshape((1, out_sizes[1]) + (1,) * count)
            value = value + b64
            magnitude = magnitude + np.abs(b64)
    return value, magnitude


def convolution_terms(filter_sizes: Sequence[int], direction: object, group_count: int,
                      input_channels: int) -> int:
    """How many products each convolution output sums at most (the K of its error bound): Cig * prod(k)."""
    del direction  # a transposed convolution's output gathers at most as many taps as a forward one's
    return input_channels // group_count * int(np.prod(filter_sizes[2:]))


def accumulation_bound(magnitude: np.ndarray, terms: int, unit: float) -> np.ndarray:
    """The error bound of a sum of `terms` products accumulated in a float of unit roundoff `unit` (2^-24 FLOAT32,
    2^-53 FLOAT64, 2^-11 FLOAT16 under ALLOW_HALF_PRECISION_COMPUTATION), scaled by Alpha, plus Beta * C (or Bias):
    |computed - exact| <= 2 * (terms + 4) * unit * magnitude, magnitude being the same sum over absolute values
    (Higham's gamma_K for any summation order, blocked or pairwise; the 4 covers the roundings of the product by
    Alpha, of Beta * C and of the two additions; the factor 2 keeps clear of gamma's first-order approximation)."""
    return 2.0 * (terms + 4) * unit * np.asarray(magnitude, np.float64)


def reference_softmax(values: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """exp(x - max) / sum exp(x - max) over `axes`, in float64."""
    v = np.asarray(values, np.float64)
    axes_tuple = tuple(axes)
    with np.errstate(all="ignore"):
        shifted = np.exp(v - v.max(axis=axes_tuple, keepdims=True))
        return np.asarray(shifted / shifted.sum(axis=axes_tuple, keepdims=True))


def fused_activation_bounds(name: str | None, parameters: Sequence[float], y: np.ndarray, delta: np.ndarray,
                            axes: Sequence[int] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(least, greatest) the fused activation `name` (an ACTIVATION_PARAMETERS key, "CLIP" with parameters (Min,
    Max), "SOFTMAX" over `axes`, or None) takes over [y - delta, y + delta], element by element, in float64.

    Element-wise ones: the least and greatest of the function at both ends and at its turning points inside
    (`activation_turns`). SOFTMAX: moving each input by at most delta moves each output's log by at most twice the
    largest delta over the axes."""
    y = np.asarray(y, np.float64)
    delta = np.broadcast_to(np.asarray(delta, np.float64), y.shape)
    with np.errstate(all="ignore"):
        if name == "SOFTMAX":
            centre = reference_softmax(y, axes)
            spread = np.exp(2.0 * delta.max(axis=tuple(axes), keepdims=True))
            return centre / spread, np.minimum(centre * spread, 1.0)
        if name == "CLIP":
            low, high = float(parameters[0]), float(parameters[1])
            return np.clip(y - delta, low, high), np.clip(y + delta, low, high)
        ends = (y - delta, y + delta)
        values = [apply_activation(name, parameters, ends[0]), apply_activation(name, parameters, y),
                  apply_activation(name, parameters, ends[1])]
        for turn in activation_turns(name, parameters):
            inside = (ends[0] < turn) & (turn < ends[1])
            if inside.any():
                values.append(np.where(inside, apply_activation(name, parameters, np.array([turn]))[0], values[1]))
        stacked = np.stack(values)
        return stacked.min(axis=0), stacked.max(axis=0)


def result_bounds(value: np.ndarray, magnitude: np.ndarray, terms: int, output_dtype: np.dtype | type, *,
                  accumulate_unit: float, activation: str | None = None, parameters: Sequence[float] = (),
                  axes: Sequence[int] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(least, greatest) float64 values each output of a GEMM or CONVOLUTION may hold: the exact `value` within
    accumulation_bound(magnitude, terms, accumulate_unit), through the fused activation over that interval, then
    16 units of the compute type's roundoff for the activation's own evaluation, one unit of the output type
    (its rounding) and the output type's smallest normal (subnormals may flush)."""
    out = np.finfo(np.dtype(output_dtype))
    compute_unit = max(accumulate_unit, 2.0**-53 if out.bits == 64 else 2.0**-24)
    delta = accumulation_bound(magnitude, terms, accumulate_unit)
    low, high = fused_activation_bounds(activation, parameters, value, delta, axes)
    with np.errstate(all="ignore"):
        size = np.maximum(np.abs(low), np.abs(high))
        slack = (16 * compute_unit + float(out.eps)) * size + float(out.smallest_normal)
    return low - slack, high + slack


def assert_within_bounds(got: np.ndarray, low: np.ndarray, high: np.ndarray, label: str,
                         exact: np.ndarray | None = None) -> None:
    """Every element of `got` (any float type) within [low, high]; the message names the first one outside."""
    value = np.asarray(got, np.float64)
    inside = (low <= value) & (value <= high)
    if not inside.all():
        bad = np.argwhere(~inside)
        index = tuple(int(i) for i in bad[0])
        reference = "" if exact is None else f", exact value before rounding {exact[index]!r}"
        raise AssertionError(f"{label}: {len(bad)} of {value.size} outputs out of bounds; first at {list(index)}: "
                             f"got {value[index]!r}, allowed [{low[index]!r}, {high[index]!r}]{reference}")


# -- generators (issue 28: FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX, DIAGONAL_MATRIX1) ---------------

def reference_generator(desc: object, x: np.ndarray | None = None) -> np.ndarray:
    """The pages' pseudocode element by element in Python (independent of opendml's formulas): integers exactly, then
    wrapped to the type's width; floats in float64, rounded once on store (FILL_VALUE_SEQUENCE's float elements:
    compare within `sequence_bounds`). `x` is DIAGONAL_MATRIX1's logical InputTensor, if any."""
    out = desc.output_tensor
    dtype = np.dtype(out.data_type.numpy_dtype)
    sizes = tuple(out.sizes)
    name = desc.OPERATOR_TYPE.name
    integer = dtype.kind in "iu"
    bits = dtype.itemsize * 8

    def wrap(value: int) -> int:
        value %= 2**bits
        return value - 2**bits if dtype.kind == "i" and value >= 2 ** (bits - 1) else value

    result = np.zeros(sizes, dtype)
    for linear, coordinate in enumerate(np.ndindex(*sizes)):
        row = coordinate[-2] if len(sizes) >= 2 else 0
        col = coordinate[-1]
        value: object
        if name == "FILL_VALUE_CONSTANT":
            value = desc.value
        elif name == "FILL_VALUE_SEQUENCE":
            value = wrap(desc.value_start + desc.value_delta * linear) if integer else \
                float(desc.value_start) + float(desc.value_delta) * linear
        elif name == "DIAGONAL_MATRIX":
            fill = float(np.float32(desc.value))
            if integer:   # "10.6 will become 10": truncated, and clamped to the type
                info = np.iinfo(dtype)
                fill = min(max(math.trunc(fill), int(info.min)), int(info.max))
            value = fill if col - row == desc.offset else 0
        else:   # DIAGONAL_MATRIX1's pseudocode, its three-way exclusive or as written
            top_x = col - row
            begin, end = desc.diagonal_fill_begin, desc.diagonal_fill_end
            use = (end >= begin) ^ (top_x >= begin) ^ (top_x < end)
            value = desc.value if use else (x[coordinate] if x is not None else 0)
        with np.errstate(over="ignore"):   # a float sequence past its type's range stores infinity
            result[coordinate] = value
    return result


def sequence_bounds(desc: object) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) value a float FILL_VALUE_SEQUENCE element may hold, against start + delta * i (float64): the
    FLOAT32 product and sum round twice (2^-24 of each operand's magnitude, i exact below 2^24), then the output type
    rounds once more (one unit of it; past its largest finite value, to infinity)."""
    out = desc.output_tensor
    count = int(np.prod(out.sizes))
    index = np.arange(count, dtype=np.float64).reshape(out.sizes)
    start, delta = float(desc.value_start), float(desc.value_delta)
    exact = start + delta * index
    compute = 2.0**-24 * (abs(start) + 2 * np.abs(delta * index))
    dtype = np.dtype(out.data_type.numpy_dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = ((exact - compute).astype(dtype), (exact + compute).astype(dtype))
        unit_low = np.where(np.isfinite(low), np.spacing(np.abs(low)), 0).astype(np.float64)
        unit_high = np.where(np.isfinite(high), np.spacing(np.abs(high)), 0).astype(np.float64)
    return low.astype(np.float64) - unit_low, high.astype(np.float64) + unit_high


# -- CAST (issue 28, the copy slice) -----------------------------------------------------------------------------------

def _nearest_float(value: object, dtype: np.dtype) -> float:
    """`value` rounded once to the float type `dtype` (nearest, ties to the even significand; past the largest
    finite value by half an ulp or more: infinity), by exact rational comparison with its neighbours."""
    from fractions import Fraction

    info = np.finfo(dtype)
    largest = Fraction(float(info.max))
    below = np.nextafter(dtype.type(info.max), dtype.type(0))
    top = largest + (largest - Fraction(float(below))) / 2   # the ulp at the largest value is the one below it
    if abs(value) >= top:
        return math.copysign(math.inf, value)
    guess = dtype.type(float(value))   # within an ulp or two of the answer
    with np.errstate(over="ignore"):
        candidates = {guess, np.nextafter(guess, dtype.type(math.inf)), np.nextafter(guess, dtype.type(-math.inf))}
    finite = [c for c in candidates if math.isfinite(float(c))]

    def key(c: object) -> tuple[object, int]:
        return abs(Fraction(float(c)) - value), int(np.array(c, dtype).view(f"u{dtype.itemsize}")) & 1

    return float(min(finite, key=key))


def reference_cast(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """CAST element by element in Python (independent of opendml's formulas): to a float, the exact value rounded once
    (`_nearest_float`; NaN stays NaN, infinities stay); float -> integer truncated toward zero and clamped to the
    type (NaN 0); integer -> integer wrapped to the type's width."""
    from fractions import Fraction

    target = np.dtype(target)
    result = np.zeros(x.shape, target)
    for index in np.ndindex(*x.shape):
        value = x[index].item()
        if target.kind == "f":
            if isinstance(value, float) and (not math.isfinite(value) or value == 0):
                result[index] = value   # NaN, infinities and signed zeros as they are
            else:
                result[index] = _nearest_float(Fraction(value), target)
            continue
        info = np.iinfo(target)
        if isinstance(value, float):
            result[index] = 0 if math.isnan(value) else int(info.max) if value >= int(info.max) + 1 else \
                int(info.min) if value <= int(info.min) - 1 else math.trunc(value)
            continue
        bits = target.itemsize * 8
        value %= 2**bits
        result[index] = value - 2**bits if target.kind == "i" and value >= 2 ** (bits - 1) else value
    return result


def reference_slice(x: np.ndarray, desc: object) -> np.ndarray:
    """SLICE and SLICE1 as their pages' pseudocode, element by element: OutputTensor[c] = InputTensor[start + strides *
    c], start = the offsets (SLICE1: plus InputWindowSizes - 1 along a negative stride); an index outside x raises."""
    if desc.OPERATOR_TYPE.name == "SLICE":
        offsets, strides = list(desc.offsets), list(desc.strides)
    else:
        offsets = [offset + (size - 1 if stride < 0 else 0) for offset, size, stride in
                   zip(desc.input_window_offsets, desc.input_window_sizes, desc.input_window_strides, strict=True)]
        strides = list(desc.input_window_strides)
    sizes = tuple(desc.output_tensor.sizes)
    result = np.zeros(sizes, x.dtype)
    for coordinate in np.ndindex(*sizes):
        source = tuple(offset + stride * c for offset, stride, c in zip(offsets, strides, coordinate, strict=True))
        assert all(0 <= s < n for s, n in zip(source, x.shape, strict=True)), (source, x.shape)
        result[coordinate] = x[source]
    return result


# -- CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT (issue 28, the scans) -------------------------------------------------

def reference_cumulative(x: np.ndarray, axis: int, *, product: bool, decreasing: bool, exclusive: bool,
                         accumulate: type | None = None) -> np.ndarray:
    """The pages' running tally, element by element in Python: each line along `axis` walked from its first element
    (its last when `decreasing`), the output at each element the tally after it (before it when `exclusive`: 0, or 1
    for a product, at the first element). Integers: exact Python integers, wrapped to the type's width (two's
    complement) at each output. Floats: each step in `accumulate` (np.float64 by default, the value a FLOAT32 tally
    approximates; np.float32 models DML's FLOAT32 tally step for step), returned in that type (the caller rounds).
    The first inclusive tally is the first element itself (a -0.0 stays -0.0; README, Rulings)."""
    dtype = x.dtype
    integer = dtype.kind in "iu"
    moved = np.moveaxis(x, axis, -1)
    result = np.empty(moved.shape, object if integer else (accumulate or np.float64))
    for index in np.ndindex(*moved.shape[:-1]):
        line = moved[index]
        length = line.shape[0]
        with np.errstate(all="ignore"):
            _tally_line(result, index, line, length, product, decreasing, exclusive, integer, accumulate)
    if integer:
        bits = 8 * dtype.itemsize
        wrap = np.vectorize(lambda v: (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
                            if dtype.kind == "i" else v % (1 << bits), otypes=[object])
        result = np.array(wrap(result).tolist(), dtype=dtype).reshape(moved.shape) if result.size else \
            np.zeros(moved.shape, dtype)
    return np.moveaxis(result, -1, axis)


def _tally_line(result: np.ndarray, index: tuple[int, ...], line: np.ndarray, length: int, product: bool,
                decreasing: bool, exclusive: bool, integer: bool, accumulate: type | None) -> None:
    """reference_cumulative's walk of one line."""
    tally: object = 1 if product else 0
    if not integer:
        tally = (accumulate or np.float64)(tally)
    for k in (range(length - 1, -1, -1) if decreasing else range(length)):
        value = int(line[k]) if integer else (accumulate or np.float64)(line[k])
        before = tally
        first = k == (length - 1 if decreasing else 0)
        tally = value if first else tally * value if product else tally + value  # type: ignore[operator]
        result[(*index, k)] = before if exclusive else tally


# -- SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions (issue 28) ------------------------------------------------

def reference_depth_space(x: np.ndarray, desc: object) -> np.ndarray:
    """The four operators element by element from DML_DEPTH_SPACE_ORDER's layouts: the depth index d of block row i,
    block column j and channel c is (i*b + j)*C + c (DEPTH_COLUMN_ROW, the versions without Order) or c*b*b + i*b + j
    (COLUMN_ROW_DEPTH), C the space side's channels; space[n, c, h*b + i, w*b + j] = depth[n, d, h, w]."""
    b = desc.block_size
    crd = getattr(desc, "order", 0) == 1
    to_space = "DEPTH_TO_SPACE" in desc.OPERATOR_TYPE.name
    space_shape = desc.output_tensor.sizes if to_space else x.shape
    result = np.zeros(tuple(desc.output_tensor.sizes), x.dtype)
    channels = space_shape[1]
    for n, c, y, z in np.ndindex(*space_shape):
        h, i, w, j = y // b, y % b, z // b, z % b
        d = c * b * b + i * b + j if crd else (i * b + j) * channels + c
        if to_space:
            result[n, c, y, z] = x[n, d, h, w]
        else:
            result[n, d, h, w] = x[n, c, y, z]
    return result


# -- PADDING, PADDING1 and TILE (issue 28) ---------------------------------------------------------------------------

def reference_padding(x: np.ndarray, mode: str, start: Sequence[int], end: Sequence[int], value: object = 0
                      ) -> np.ndarray:
    """NumPy's np.pad, each DML mode by its NumPy name (REFLECTION: reflect, WRAP: wrap, ...), the constant in x's
    type; NumPy folds padding wider than the input again and again, as the pages' examples do. A REFLECTION
    dimension of size 1 repeats its element (np.pad's answer; README Rulings)."""
    widths = list(zip(start, end, strict=True))
    if mode == "CONSTANT":
        return np.pad(x, widths, mode="constant", constant_values=np.asarray(value, x.dtype))
    names = {"EDGE": "edge", "REFLECTION": "reflect", "SYMMETRIC": "symmetric", "WRAP": "wrap"}
    return np.pad(x, widths, mode=names[mode])  # type: ignore[call-overload]


def reference_tile(x: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    """np.tile: x repeated along each dimension."""
    return np.tile(x, tuple(repeats))


# -- REVERSE_SUBSEQUENCES (issue 28) ---------------------------------------------------------------------------------

def reference_reverse_subsequences(x: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    """The page element by element: output[.., k, ..] = x[.., L - 1 - k, ..] for k < L, x[.., k, ..] otherwise, L the
    sequence's length (lengths at the same coordinates, 0 along axis) clamped to x's size along axis."""
    result = np.zeros_like(x)
    size = x.shape[axis]
    for coordinate in np.ndindex(*x.shape):
        k = coordinate[axis]
        length = min(int(lengths[(*coordinate[:axis], 0, *coordinate[axis + 1:])]), size)
        source = length - 1 - k if k < length else k
        result[coordinate] = x[(*coordinate[:axis], source, *coordinate[axis + 1:])]
    return result


def reference_upsample_2d(x: np.ndarray, scale_height: int, scale_width: int, linear: bool) -> np.ndarray:
    """UPSAMPLE_2D element by element in Python: output (o_y, o_x) maps to the input coordinate (o + 0.5) / scale - 0.5
    along each of the last two dimensions (in float64), clamped to [0, size - 1]; NEAREST_NEIGHBOR reads
    floor((o + 0.5) / scale), LINEAR blends floor(t) and the next index (the last at the edge) with the weight frac(t)
    rounded to float32, in float32: (x00 (1 - wx) + x01 wx) (1 - wy) + (x10 (1 - wx) + x11 wx) wy."""
    *lead, height, width = x.shape
    out = np.empty((*lead, height * scale_height, width * scale_width), x.dtype)

    def source(o: int, scale: int, size: int) -> tuple[int, int, np.float32]:
        t = min(max((o + 0.5) / scale - 0.5, 0.0), size - 1.0)
        first = math.floor(t)
        return first, min(first + 1, size - 1), np.float32(t - first)

    one = np.float32(1)
    for index in np.ndindex(*lead):
        image = x[index]
        for oy in range(height * scale_height):
            for ox in range(width * scale_width):
                if not linear:
                    out[(*index, oy, ox)] = image[int((oy + 0.5) / scale_height), int((ox + 0.5) / scale_width)]
                    continue
                y0, y1, wy = source(oy, scale_height, height)
                x0, x1, wx = source(ox, scale_width, width)
                a, b, c, d = (np.float32(image[i, j]) for i, j in ((y0, x0), (y0, x1), (y1, x0), (y1, x1)))
                with np.errstate(all="ignore"):
                    value = (a * (one - wx) + b * wx) * (one - wy) + (c * (one - wx) + d * wx) * wy
                    out[(*index, oy, ox)] = np.float32(value).astype(x.dtype)
    return out


# -- GATHER and GATHER_ELEMENTS (ops/gather.py) ------------------------------------------------------------------------

def reference_gather_index(indices: np.ndarray, size: int) -> tuple[np.ndarray, bool]:
    """The index rule worked element by element in Python: a negative index counts from the end of a dimension of
    `size` once, one still out of range is clamped. Also whether any was out of range (what a debug device
    refuses). Unsigned 64-bit values are compared as the integers they are."""
    fixed, bad = [], False
    for value in indices.reshape(-1).tolist():
        index = int(value) + size if int(value) < 0 else int(value)
        bad = bad or not 0 <= index < size
        fixed.append(min(max(index, 0), size - 1))
    return np.array(fixed, np.int64).reshape(indices.shape), bad


def reference_gather(x: np.ndarray, indices: np.ndarray, axis: int, index_dimensions: int,
                     sizes: Sequence[int]) -> np.ndarray:
    """GATHER: x's slices along `axis` at the indices' last `index_dimensions` dimensions, reshaped to the output's
    `sizes` (np.take on indices made valid by hand)."""
    meaningful = indices.reshape(indices.shape[indices.ndim - index_dimensions:])
    return np.take(x, reference_gather_index(meaningful, x.shape[axis])[0], axis=axis).reshape(tuple(sizes))


def reference_gather_elements(x: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """GATHER_ELEMENTS: np.take_along_axis on indices made valid by hand."""
    return np.take_along_axis(x, reference_gather_index(indices, x.shape[axis])[0], axis=axis)


# -- NONZERO_COORDINATES (ops/nonzero.py) ---------------------------------------------------------------------------

def reference_nonzero(x: np.ndarray, columns: int) -> np.ndarray:
    """The coordinates (their last `columns`) of x's nonzero elements, walked one by one in row-major order in
    Python: an element is nonzero where `value != 0` as Python compares the number (NaN is nonzero, -0.0 is zero).
    One row per nonzero element (count x columns, int64); the count is the row count."""
    rows = [index[x.ndim - columns:] for index in itertools.product(*(range(size) for size in x.shape))
            if x[index].item() != 0]
    return np.array(rows, np.int64).reshape(len(rows), columns)


# -- SCATTER_ELEMENTS and SCATTER_ND (ops/scatter.py) -----------------------------------------------------------------

def _scatter_position(value: int, size: int, signed: bool) -> int | None:
    """An index made a position along a dimension of `size`: a negative one of a signed type counts from the end
    once; None where it is still out of range (its update is skipped)."""
    index = int(value)
    if signed and index < 0:
        index += size
    return index if 0 <= index < size else None


def reference_scatter_elements(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int
                               ) -> tuple[np.ndarray, bool]:
    """SCATTER_ELEMENTS element by element in Python, the updates in row-major order (a later one overwrites an
    earlier one), an update whose index is out of range skipped; also whether any was (what a debug device
    refuses)."""
    out, bad = x.copy(), False
    signed = indices.dtype.kind == "i"
    for position in np.ndindex(*indices.shape):
        index = _scatter_position(indices[position], x.shape[axis], signed)
        if index is None:
            bad = True
            continue
        target = list(position)
        target[axis] = index
        out[tuple(target)] = updates[position]
    return out, bad


def reference_scatter_nd(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, input_dimension_count: int,
                         indices_dimension_count: int) -> tuple[np.ndarray, bool]:
    """SCATTER_ND tuple by tuple in Python over the meaningful sizes (the leading ones dropped), in row-major order,
    a tuple with a coordinate out of range skipped; also whether any was."""
    rank = x.ndim
    table = x.reshape(x.shape[rank - input_dimension_count:]).copy()
    tuples = indices.reshape(indices.shape[rank - indices_dimension_count:])
    count = tuples.shape[-1]
    blocks = updates.reshape(tuples.shape[:-1] + table.shape[count:])
    signed, bad = indices.dtype.kind == "i", False
    for position in np.ndindex(*tuples.shape[:-1]):
        coordinates = [_scatter_position(tuples[(*position, k)], table.shape[k], signed) for k in range(count)]
        if any(coordinate is None for coordinate in coordinates):
            bad = True
            continue
        table[tuple(coordinates)] = blocks[position]
    return table.reshape(x.shape), bad


def reference_top_k(x: np.ndarray, axis: int, k: int, *, decreasing: bool) -> tuple[np.ndarray, np.ndarray]:
    """TOP_K / TOP_K1 sequence by sequence in Python: each sequence's positions sorted by (NaN or not, value,
    position) with Python's own comparisons of float64 (-0.0 == 0.0) or exact integers: DECREASING the NaNs first,
    then the largest values, INCREASING the smallest first and the NaNs last; equal values by ascending position.
    (values, int64 indices): the first k positions, and the elements there (as they are: a NaN's bits kept)."""
    moved = np.moveaxis(x, axis, -1)
    values = np.empty((*moved.shape[:-1], k), x.dtype)
    indices = np.empty((*moved.shape[:-1], k), np.int64)
    for position in np.ndindex(*moved.shape[:-1]):
        sequence = moved[position]
        numbers = [float(v) if x.dtype.kind == "f" else int(v) for v in sequence]

        def order(i: int, numbers: list[float] | list[int] = numbers) -> tuple[int, float, int]:
            number = numbers[i]
            nan = number != number
            if decreasing:
                return (0 if nan else 1, 0 if nan else -number, i)
            return (1 if nan else 0, 0 if nan else number, i)

        chosen = sorted(range(len(numbers)), key=order)[:k]
        indices[position] = chosen
        values[position] = sequence[chosen]
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)
