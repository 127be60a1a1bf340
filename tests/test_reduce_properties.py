"""Hypothesis property tests of REDUCE through the public API, against ``reference.reference_reduce``.

Every function x every supported data type x ranks 1-8 x random axes (any order) x random input strides (packed,
padded, transposed, zero, mixed) x packed or strided outputs x feature levels (only descriptors valid at the drawn
level, per the support table below, which is written out here independently of the package's own table).

Integer results, MIN, MAX, ARGMIN / ARGMAX and the positions of NaN / infinities must match exactly.  Other float
results are checked against an interval derived from the accuracy the project promises: accumulation in at least
FLOAT32 (FLOAT16 rounded once at the end), sums at least as accurate as pairwise summation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import REDUCE_FUNCTIONS, reference_reduce, reference_reduce_unrounded
from strategies import (
    OUTPUT_STRIDE_KINDS,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    read_buffer,
    sentinel_bytes,
    shapes,
    strides_for,
    tensor_size_in_bytes,
)

import opendml as dml

# ---------------------------------------------------------------------------------------------------------------------
# The support table (rows apply from their level up; the highest row at or below the device's level is in force)
# ---------------------------------------------------------------------------------------------------------------------

LEVELS: tuple[str, ...] = (
    "1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4",
)  # fmt: skip

NUMPY_DTYPES: dict[str, np.dtype] = {
    "FLOAT32": np.dtype(np.float32),
    "FLOAT16": np.dtype(np.float16),
    "INT64": np.dtype(np.int64),
    "INT32": np.dtype(np.int32),
    "INT16": np.dtype(np.int16),
    "INT8": np.dtype(np.int8),
    "UINT64": np.dtype(np.uint64),
    "UINT32": np.dtype(np.uint32),
    "UINT16": np.dtype(np.uint16),
    "UINT8": np.dtype(np.uint8),
}

ANY_RANK = tuple(range(1, 9))
RANK_4 = (4,)
FLOATS = ("FLOAT32", "FLOAT16")
INTS_8_TO_64 = ("INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8")
INTS_8_TO_32 = ("INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8")
INTS_32_64 = ("INT64", "INT32", "UINT64", "UINT32")
ARG_OUTPUTS = ("INT64", "INT32", "UINT64", "UINT32")


@dataclass(frozen=True)
class SupportRow:
    level: str
    ranks: tuple[int, ...]
    input_types: tuple[str, ...]
    output_types: tuple[str, ...] | None  # None: the output type is the input type


_ARG_ROWS = (
    SupportRow("4_1", ANY_RANK, FLOATS + INTS_8_TO_64, ARG_OUTPUTS),
    SupportRow("3_0", ANY_RANK, FLOATS + INTS_8_TO_32, ARG_OUTPUTS),
    SupportRow("2_1", RANK_4, FLOATS + INTS_8_TO_32, ("UINT32",)),
    SupportRow("1_0", RANK_4, FLOATS, ("UINT32",)),
)
_FLOAT_ONLY_ROWS = (
    SupportRow("3_0", ANY_RANK, FLOATS, None),
    SupportRow("1_0", RANK_4, FLOATS, None),
)
_L1_ROWS = (
    SupportRow("5_0", ANY_RANK, FLOATS + INTS_32_64, None),
    SupportRow("3_0", ANY_RANK, FLOATS, None),
    SupportRow("1_0", RANK_4, FLOATS, None),
)
_MIN_MAX_ROWS = (
    SupportRow("5_0", ANY_RANK, FLOATS + INTS_8_TO_64, None),
    SupportRow("3_0", ANY_RANK, FLOATS + INTS_8_TO_32, None),
    SupportRow("2_1", RANK_4, (*FLOATS, "INT32", "UINT32"), None),
    SupportRow("1_0", RANK_4, FLOATS, None),
)
_SUM_ROWS = (
    SupportRow("5_0", ANY_RANK, FLOATS + INTS_32_64, None),
    SupportRow("3_0", ANY_RANK, (*FLOATS, "INT32", "UINT32"), None),
    SupportRow("2_1", RANK_4, (*FLOATS, "INT32", "UINT32"), None),
    SupportRow("1_0", RANK_4, FLOATS, None),
)
SUPPORT: dict[str, tuple[SupportRow, ...]] = {
    "ARGMAX": _ARG_ROWS,
    "ARGMIN": _ARG_ROWS,
    "AVERAGE": _FLOAT_ONLY_ROWS,
    "L2": _FLOAT_ONLY_ROWS,
    "LOG_SUM": _FLOAT_ONLY_ROWS,
    "LOG_SUM_EXP": _FLOAT_ONLY_ROWS,
    "L1": _L1_ROWS,
    "SUM_SQUARE": _L1_ROWS,
    "MIN": _MIN_MAX_ROWS,
    "MAX": _MIN_MAX_ROWS,
    "MULTIPLY": _SUM_ROWS,
    "SUM": _SUM_ROWS,
}


def support_row(function: str, level: str) -> SupportRow:
    rows = [r for r in SUPPORT[function] if LEVELS.index(r.level) <= LEVELS.index(level)]
    return max(rows, key=lambda r: LEVELS.index(r.level))


def test_support_table_covers_every_function() -> None:
    assert set(SUPPORT) == set(REDUCE_FUNCTIONS)
    for function in REDUCE_FUNCTIONS:
        assert support_row(function, "1_0").ranks == RANK_4
        assert support_row(function, "6_4").ranks == ANY_RANK


# ---------------------------------------------------------------------------------------------------------------------
# Value strategies
# ---------------------------------------------------------------------------------------------------------------------

EXACT_FLOAT = frozenset({"MIN", "MAX", "ARGMIN", "ARGMAX"})
SUM_FAMILY = frozenset({"SUM", "AVERAGE", "L1", "SUM_SQUARE", "L2", "LOG_SUM"})


def _float_bounds(function: str, dtype: np.dtype) -> tuple[float, float]:
    """Range of 'ordinary' float values per function: wide enough to be interesting, narrow enough that FLOAT32
    accumulation of up to 4096 of them does not overflow (FLOAT16 outputs may still round to inf)."""
    f16 = dtype == np.float16
    if function in EXACT_FLOAT:
        finfo = np.finfo(dtype)
        return float(finfo.min), float(finfo.max)
    if function in ("SUM", "AVERAGE", "L1"):
        return (-2048.0, 2048.0) if f16 else (-1e6, 1e6)
    if function in ("SUM_SQUARE", "L2"):
        return (-256.0, 256.0) if f16 else (-1e4, 1e4)
    if function == "LOG_SUM":
        return (0.0, 2048.0) if f16 else (0.0, 1e6)
    if function == "LOG_SUM_EXP":
        return -100.0, 100.0
    raise AssertionError(function)


def _ordinary_floats(function: str, dtype: np.dtype) -> st.SearchStrategy[float]:
    width = dtype.itemsize * 8
    if function == "MULTIPLY":  # magnitudes near 1 keep products of thousands of factors in range
        magnitude = st.floats(0.5, 2.0, width=width)
        return st.one_of(magnitude, magnitude.map(lambda v: -v), st.just(0.0))
    low, high = _float_bounds(function, dtype)
    return st.floats(low, high, width=width, allow_subnormal=False)


def _float_specials(function: str, dtype: np.dtype) -> list[float]:
    finfo = np.finfo(dtype)
    specials = [math.nan, math.inf, -math.inf]
    if function == "LOG_SUM":
        specials += [-1.0, -2048.0]
    if function == "LOG_SUM_EXP":
        specials += [float(finfo.max), float(-finfo.max), -1000.0 if dtype == np.float32 else -60000.0]
    return specials


def _float_extremes(dtype: np.dtype) -> list[float]:
    finfo = np.finfo(dtype)
    big, tiny = float(finfo.max), float(finfo.smallest_normal)
    return [big, -big, tiny, -tiny, 0.0, -0.0, 1.0, -1.0]


def _int_extremes(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    candidates = [info.min, info.min + 1, -1, 0, 1, 2, info.max - 1, info.max]
    return sorted({v for v in candidates if info.min <= v <= info.max})


@st.composite
def _with_inserted(draw: st.DrawFn, base: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """``base`` with a few elements replaced by values drawn from ``values``."""
    x = base.copy()
    flat = x.reshape(-1)
    count = draw(st.integers(1, min(4, flat.size)))
    for _ in range(count):
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(values))
    return x


@st.composite
def reduce_values(draw: st.DrawFn, function: str, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[str, np.ndarray]:
    """(value kind, logical input array) for REDUCE ``function`` on ``dtype``.

    Kinds: ordinary values; ties (a pool of 1-3 repeated values); extremes (integer limits, which wrap around, or
    float limits); specials (NaN / +-inf, and negatives for LOG_SUM), floats only.
    """
    is_float = dtype.kind == "f"
    kind = draw(
        st.sampled_from(("ordinary", "ties", "extremes", "specials") if is_float else ("ordinary", "ties", "extremes"))
    )
    if is_float:
        ordinary = _ordinary_floats(function, dtype)
        fill = st.sampled_from([1.0, -1.0]) if function == "MULTIPLY" else None
    else:
        info = np.iinfo(dtype)
        ordinary = st.integers(int(info.min), int(info.max))
        fill = None
    if kind == "ties":
        pool = draw(st.lists(ordinary, min_size=1, max_size=3))
        return kind, draw(arrays(dtype, shape, elements=st.sampled_from(pool)))
    if kind == "extremes" and not is_float:
        return kind, draw(arrays(dtype, shape, elements=st.sampled_from(_int_extremes(dtype))))
    base = draw(arrays(dtype, shape, elements=ordinary, fill=fill))
    if kind == "extremes":
        return kind, draw(_with_inserted(base, _float_extremes(dtype)))
    if kind == "specials":
        return kind, draw(_with_inserted(base, _float_specials(function, dtype)))
    return kind, base


# ---------------------------------------------------------------------------------------------------------------------
# Drawing a whole case
# ---------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReduceLayout:
    """Everything that goes into the operator descriptor (hashable, so compiled operators can be cached)."""

    level: str
    function: str
    input_type: str
    output_type: str
    sizes: tuple[int, ...]
    axes: tuple[int, ...]  # in the order given to the descriptor
    input_strides: tuple[int, ...] | None
    output_strides: tuple[int, ...] | None

    @property
    def output_sizes(self) -> tuple[int, ...]:
        return tuple(1 if d in self.axes else n for d, n in enumerate(self.sizes))

    def descriptor(self) -> dml.ReduceOperatorDesc:
        in_desc = dml.TensorDesc(dml.DataType[self.input_type], list(self.sizes), _list(self.input_strides))
        out_desc = dml.TensorDesc(dml.DataType[self.output_type], list(self.output_sizes), _list(self.output_strides))
        return dml.ReduceOperatorDesc(dml.ReduceFunction[self.function], in_desc, out_desc, list(self.axes))


@dataclass(frozen=True)
class ReduceCase:
    layout: ReduceLayout
    value_kind: str
    x: np.ndarray  # the logical input, consistent with the input strides (equal along stride-0 dimensions)


def _list(strides: tuple[int, ...] | None) -> list[int] | None:
    return None if strides is None else list(strides)


@st.composite
def reduce_cases(draw: st.DrawFn, function: str) -> ReduceCase:
    level = draw(st.sampled_from(LEVELS))
    row = support_row(function, level)
    rank = draw(st.sampled_from(row.ranks))
    input_type = draw(st.sampled_from(row.input_types))
    output_type = input_type if row.output_types is None else draw(st.sampled_from(row.output_types))
    sizes = draw(shapes(rank, max_elements=4096, max_side=4096))
    axis_order = draw(st.permutations(range(rank)))
    axes = tuple(axis_order[: draw(st.integers(1, rank))])
    input_strides = draw(strides_for(sizes))
    output_sizes = tuple(1 if d in axes else n for d, n in enumerate(sizes))
    output_strides = draw(strides_for(output_sizes, draw(st.sampled_from(OUTPUT_STRIDE_KINDS)), allow_zero=False))
    layout = ReduceLayout(level, function, input_type, output_type, sizes, axes, input_strides, output_strides)
    dtype = NUMPY_DTYPES[input_type]
    value_kind, x = draw(reduce_values(function, dtype, sizes))
    # Make the logical input consistent with its strides (a stride-0 dimension holds one value along it).
    x = read_buffer(build_buffer(x, input_strides), dtype, sizes, input_strides)
    note(f"{layout} value kind={value_kind}")
    return ReduceCase(layout, value_kind, x)


@cache
def device_at(level: str) -> dml.Device:
    return dml.Device(feature_level=level)


@cache
def compiled(layout: ReduceLayout) -> dml.CompiledOperator:
    device = device_at(layout.level)
    return device.compile_operator(device.create_operator(layout.descriptor()))


def test_cached_devices_belong_to_the_backend_under_test(backend: str) -> None:
    # The cached helpers outlive a test: conftest clears them when the next test runs under another backend, so
    # that this module's [gpu] tests do not reuse the device its [cpu] tests made (nor [cpu-small] cpu's kernels).
    assert device_at("6_4").backend.name == backend


# ---------------------------------------------------------------------------------------------------------------------
# Checking results
# ---------------------------------------------------------------------------------------------------------------------

UNIT_ROUNDOFF = 2.0**-24  # unit roundoff of FLOAT32, the accumulation type
TINY32 = 2.0**-126  # smallest normal FLOAT32: covers underflow (and flushed denormals) of one operation


def gamma(k: int) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of k chained FLOAT32 roundings."""
    return k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def _round(value: float, dtype: np.dtype) -> float:
    """``value`` rounded to nearest (ties to even) in ``dtype``; rounding is monotonic, so an accumulator anywhere in
    [lo, hi] rounds to a result in [_round(lo), _round(hi)]."""
    with np.errstate(over="ignore"):
        return float(dtype.type(value))


@dataclass(frozen=True)
class Allowed:
    """What one output element may be: an exact non-finite value, a closed interval (before rounding to the output
    type), and whether any non-finite value is acceptable too (possible FLOAT32 overflow or underflow inside)."""

    lo: float
    hi: float
    also_nan: bool = False
    also_nonfinite: bool = False
    anything: bool = False

    def accepts(self, got: float, dtype: np.dtype) -> bool:
        if self.anything:
            return True
        if math.isnan(got):
            return self.also_nan or self.also_nonfinite or (math.isnan(self.lo) and math.isnan(self.hi))
        if math.isinf(got) and self.also_nonfinite:
            return True
        if math.isnan(self.lo):
            return False
        return _round(self.lo, dtype) <= got <= _round(self.hi, dtype)


def _exact(value: float) -> Allowed:
    return Allowed(value, value)


def allowed_float_result(function: str, block: np.ndarray, exact: float) -> Allowed:
    """The acceptable result of one float reduction of ``block`` (float64 values) whose exact value is ``exact``."""
    n = block.size
    k = math.ceil(math.log2(n)) if n > 1 else 0  # depth of pairwise summation
    finite = block[np.isfinite(block)]
    abs_sum = float(np.sum(np.abs(finite)))
    sq_sum = float(np.sum(finite * finite))
    fmax = float(np.finfo(np.float32).max)
    # A sum whose terms reach FLOAT32's range may overflow inside (some order of) FLOAT32 accumulation.  Products
    # are handled below; LOG_SUM_EXP is stable, so it never overflows inside.
    overflow_possible = function in SUM_FAMILY and (sq_sum if function in ("SUM_SQUARE", "L2") else abs_sum) >= fmax / 2
    if function == "MULTIPLY":
        nonzero = np.abs(finite[finite != 0])
        log2_big = float(np.sum(np.log2(np.maximum(nonzero, 1.0))))
        log2_small = float(np.sum(np.log2(np.minimum(nonzero, 1.0))))
        if log2_big > 120 or log2_small < -120:  # some evaluation order may overflow / underflow in FLOAT32
            return Allowed(exact, exact, anything=True)
    if function == "LOG_SUM" and finite.size == n and abs_sum > 0:
        s, e = float(np.sum(finite)), gamma(k) * abs_sum
        if s + e < 0:  # the computed sum is negative whatever the order
            return _exact(math.nan)
        if s - e <= 0:  # the computed sum's sign is not determined: NaN, -inf or the log of a small sum
            hi = math.log(s + e) if s + e > 0 else -math.inf
            return Allowed(-math.inf, hi + 4 * UNIT_ROUNDOFF * abs(hi), also_nan=True, also_nonfinite=overflow_possible)
        lo, hi = math.log(s - e), math.log(s + e)
        return Allowed(
            lo - 4 * UNIT_ROUNDOFF * abs(lo), hi + 4 * UNIT_ROUNDOFF * abs(hi), also_nonfinite=overflow_possible
        )
    if not math.isfinite(exact):
        return Allowed(exact, exact, also_nonfinite=overflow_possible)
    if function in ("SUM", "L1"):
        err = gamma(k) * abs_sum
    elif function == "AVERAGE":
        err = gamma(k + 2) * abs_sum / n
    elif function == "SUM_SQUARE":
        err = gamma(k + 1) * sq_sum + n * TINY32
    elif function == "L2":
        err = gamma(k + 2) * exact + math.sqrt(n * TINY32)
    elif function == "LOG_SUM_EXP":
        max_abs = float(np.max(np.abs(finite)))
        err = (6 * k + 16) * UNIT_ROUNDOFF * (1 + max_abs) + 2 * UNIT_ROUNDOFF * abs(exact)
    elif function == "MULTIPLY":
        err = gamma(max(n - 1, 0)) * abs(exact)
    else:
        raise AssertionError(function)
    return Allowed(exact - err, exact + err, also_nonfinite=overflow_possible)


def _blocks_float64(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Array of shape (output elements, N): each row the reduced sub-block of one output element, as float64."""
    reduced = sorted(axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    moved = np.transpose(x.astype(np.float64), kept + reduced)
    n = int(np.prod([x.shape[d] for d in reduced]))
    return moved.reshape(-1, n)


def check_reduce_result(case: ReduceCase, got: np.ndarray) -> None:
    layout = case.layout
    out_dtype = NUMPY_DTYPES[layout.output_type]
    assert got.shape == layout.output_sizes, (got.shape, layout.output_sizes)
    assert got.dtype == out_dtype, (got.dtype, out_dtype)
    ref = reference_reduce(layout.function, case.x, layout.axes, out_dtype)
    if out_dtype.kind != "f" or layout.function in EXACT_FLOAT:
        same = (got == ref) | (np.isnan(got) & np.isnan(ref)) if out_dtype.kind == "f" else got == ref
        if not same.all():
            bad = np.argwhere(~same)
            i = tuple(int(v) for v in bad[0])
            raise AssertionError(f"{len(bad)} mismatches; first at {i}: got {got[i]!r}, expected {ref[i]!r}")
        return
    exact = reference_reduce_unrounded(layout.function, case.x, layout.axes).reshape(-1)
    blocks = _blocks_float64(case.x, layout.axes)
    flat_got = got.reshape(-1)
    failures = []
    for j in range(exact.size):
        allowed = allowed_float_result(layout.function, blocks[j], float(exact[j]))
        if not allowed.accepts(float(flat_got[j]), out_dtype):
            failures.append((j, float(flat_got[j]), float(exact[j]), allowed))
    if failures:
        j, value, expect, allowed = failures[0]
        raise AssertionError(
            f"{len(failures)} of {exact.size} outputs out of bounds; first (flat index {j}): got {value!r}, exact "
            f"{expect!r}, allowed [{_round(allowed.lo, out_dtype)!r}, {_round(allowed.hi, out_dtype)!r}] "
            f"{allowed}; block starts {blocks[j][:8].tolist()}"
        )


# ---------------------------------------------------------------------------------------------------------------------
# Tests of the checking machinery (so that a test which cannot fail would be noticed)
# ---------------------------------------------------------------------------------------------------------------------


def test_float_checker_rejects_float16_accumulation() -> None:
    block = np.array([2048.0, 1.0, 1.0])
    allowed = allowed_float_result("SUM", block, 2050.0)
    assert allowed.accepts(2050.0, np.dtype(np.float16))
    assert not allowed.accepts(2048.0, np.dtype(np.float16))  # what float16 accumulation would give


def test_float_checker_rejects_sequential_float32_error_beyond_pairwise() -> None:
    # 1 + 2**-24 * 2**20 small terms: a recursive float32 sum loses all of them; pairwise keeps them.
    block = np.concatenate([[1.0], np.full(2**12 - 1, 2.0**-24)])
    exact = float(np.sum(block))
    allowed = allowed_float_result("SUM", block, exact)
    sequential = np.float32(1.0)
    for v in block[1:]:
        sequential = np.float32(sequential + np.float32(v))
    assert allowed.accepts(float(np.float32(exact)), np.dtype(np.float32))
    assert not allowed.accepts(float(sequential), np.dtype(np.float32))


def test_float_checker_nonfinite_and_log_sum() -> None:
    f32 = np.dtype(np.float32)
    assert not _exact(math.inf).accepts(math.nan, f32)
    assert _exact(math.nan).accepts(math.nan, f32)
    assert not _exact(math.nan).accepts(1.0, f32)
    assert not allowed_float_result("SUM", np.array([1.0, math.inf]), math.inf).accepts(1.0, f32)
    log_sum = allowed_float_result("LOG_SUM", np.array([1.0, 2.0]), math.log(3.0))
    assert log_sum.accepts(float(np.float32(math.log(3.0))), f32)
    assert not log_sum.accepts(float(np.float32(math.log(3.0 + 1e-5))), f32)
    assert not log_sum.accepts(math.nan, f32)
    unstable = allowed_float_result("LOG_SUM_EXP", np.array([100.0, 100.0]), 100.0 + math.log(2.0))
    assert not unstable.accepts(math.inf, f32)
    assert not unstable.accepts(100.0, f32)


def test_float_checker_products_and_overflow() -> None:
    f32 = np.dtype(np.float32)
    product = allowed_float_result("MULTIPLY", np.full(10, 2.0), 1024.0)
    assert product.accepts(1024.0, f32)
    assert not product.accepts(1025.0, f32)
    assert not product.accepts(math.inf, f32)
    # 2**200 * 2**-200: FLOAT32 partial products overflow in some orders, so nothing is asserted.
    assert allowed_float_result("MULTIPLY", np.array([2.0**100, 2.0**100, 2.0**-100, 2.0**-100]), 1.0).anything
    big = float(np.finfo(np.float32).max)
    cancelling = allowed_float_result("SUM", np.array([big, big, -big, -big]), 0.0)
    assert cancelling.accepts(math.inf, f32) and cancelling.accepts(math.nan, f32)
    assert not allowed_float_result("SUM", np.array([1.0, 2.0]), 3.0).accepts(math.inf, f32)
    stable = allowed_float_result("LOG_SUM_EXP", np.array([big, big]), big + math.log(2.0))
    assert stable.accepts(big, f32)
    assert not stable.accepts(math.nan, f32)


# ---------------------------------------------------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", REDUCE_FUNCTIONS)
@given(data=st.data())
def test_reduce_logical_matches_reference(function: str, data: st.DataObject) -> None:
    case = data.draw(reduce_cases(function))
    (got,) = compiled(case.layout)(case.x)
    check_reduce_result(case, got)


RAW_EXAMPLES = max(10, settings.default.max_examples // 2)


@pytest.mark.parametrize("function", REDUCE_FUNCTIONS)
@settings(max_examples=RAW_EXAMPLES)
@given(data=st.data())
def test_reduce_raw_buffers(function: str, data: st.DataObject) -> None:
    case = data.draw(reduce_cases(function))
    layout = case.layout
    in_type, out_type = NUMPY_DTYPES[layout.input_type], NUMPY_DTYPES[layout.output_type]
    in_size = tensor_size_in_bytes(in_type.itemsize, layout.sizes, layout.input_strides)
    out_size = tensor_size_in_bytes(out_type.itemsize, layout.output_sizes, layout.output_strides)
    in_data_type, out_data_type = dml.DataType[layout.input_type], dml.DataType[layout.output_type]
    assert dml.calc_buffer_tensor_size(in_data_type, layout.sizes, _list(layout.input_strides)) == in_size
    assert dml.calc_buffer_tensor_size(out_data_type, layout.output_sizes, _list(layout.output_strides)) == out_size

    in_offset, out_offset = data.draw(byte_offsets(), "input offset"), data.draw(byte_offsets(), "output offset")
    in_buf = build_buffer(case.x, layout.input_strides, byte_offset=in_offset, tail_bytes=data.draw(st.integers(0, 20)))
    in_before = in_buf.copy()
    out_buf = sentinel_bytes(out_offset + out_size + data.draw(st.integers(0, 20)), seed=7)
    out_before = out_buf.copy()

    compiled(layout).execute(
        inputs=[dml.Binding(in_buf, offset=in_offset)], outputs=[dml.Binding(out_buf, offset=out_offset)]
    )

    assert np.array_equal(in_buf, in_before), "the input buffer was modified"
    written = addressed_byte_mask(
        len(out_buf), out_type.itemsize, layout.output_sizes, layout.output_strides, byte_offset=out_offset
    )
    changed = np.flatnonzero((out_buf != out_before) & ~written)
    assert changed.size == 0, f"bytes not addressed by any output element were modified: {changed[:16].tolist()}"
    got = read_buffer(out_buf, out_type, layout.output_sizes, layout.output_strides, byte_offset=out_offset)
    check_reduce_result(case, got)
