"""Tests of opendml.backends.cpu.reduce_kernels against a naive float64 reference."""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opendml.backends.cpu import reduce_kernels as rk

FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                              np.uint8, np.uint16, np.uint32, np.uint64)]
INDEX_DTYPES = [np.dtype(t) for t in (np.uint32, np.int32, np.uint64, np.int64)]
ALL_FUNCTIONS = list(range(12))
FLOAT_ONLY = {rk.AVERAGE, rk.L2, rk.LOG_SUM, rk.LOG_SUM_EXP}
SENTINEL_BYTE = 0x5A
#: The canonical quiet NaN (sign clear, quiet bit set, zero payload) that a NaN result of MAX/MIN is.
QUIET_NAN_BITS = {np.dtype(np.float16): 0x7E00, np.dtype(np.float32): 0x7FC00000,
                  np.dtype(np.float64): 0x7FF8000000000000}
#: A negative quiet NaN with a payload bit that survives the conversion to FLOAT32 and FLOAT16 (0xffc80000, 0xfe40).
NEGATIVE_PAYLOAD_NAN = float(np.array(0xFFF9000000000000, np.uint64).view(np.float64))
MAX_ELEMENTS = 600

# (sizes, input strides, output strides, axes)
Layout = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]
# (function, input dtype, output dtype, layout, seed, with special values)
Case = tuple[int, np.dtype[Any], np.dtype[Any], Layout, int, bool]


# ---------------------------------------------------------------------------
# Naive reference: gathers each reduced group in linear order and reduces it
# with Python/float64 arithmetic.


def wrap(value: int, dtype: np.dtype[Any]) -> int:
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def reduce_group(function: int, g: npt.NDArray[Any], out_dtype: np.dtype[Any]) -> Any:
    """Reference result of one group (1-D, linear order) as a Python scalar."""
    if g.dtype.kind in "iu":
        v = [int(a) for a in g]
        if function in (rk.ARGMAX, rk.ARGMIN):
            best = max(v) if function == rk.ARGMAX else min(v)
            return v.index(best)
        if function == rk.MAX:
            return max(v)
        if function == rk.MIN:
            return min(v)
        if function == rk.SUM:
            return wrap(sum(v), out_dtype)
        if function == rk.L1:
            return wrap(sum(abs(a) for a in v), out_dtype)
        if function == rk.SUM_SQUARE:
            return wrap(sum(a * a for a in v), out_dtype)
        if function == rk.MULTIPLY:
            return wrap(math.prod(v), out_dtype)
        raise AssertionError(function)
    f = [float(a) for a in g]
    nan_at = [i for i, a in enumerate(f) if math.isnan(a)]
    if function in (rk.ARGMAX, rk.ARGMIN):
        if nan_at:
            return nan_at[0]
        extreme = max(f) if function == rk.ARGMAX else min(f)
        return f.index(extreme)
    if function in (rk.MAX, rk.MIN, rk.LOG_SUM_EXP) and nan_at:
        return math.nan
    if function == rk.MAX:
        return max(f)
    if function == rk.MIN:
        return min(f)
    if function == rk.LOG_SUM_EXP:
        m = max(f)
        if math.isinf(m):
            return m
        return m + math.log(math.fsum(math.exp(a - m) for a in f))
    with np.errstate(all="ignore"):
        if function == rk.MULTIPLY:
            return float(np.prod(np.array(f, np.float64)))
        terms = np.array(f, np.float64)
        if function == rk.L1:
            terms = np.abs(terms)
        elif function in (rk.L2, rk.SUM_SQUARE):
            terms = terms * terms
        total = math.fsum(terms) if np.isfinite(terms).all() else float(np.sum(terms))
        if function == rk.AVERAGE:
            return total / len(f)
        if function == rk.L2:
            return math.sqrt(total)
        if function == rk.LOG_SUM:
            return float(np.log(np.float64(total)))
    return total


def tolerance(function: int, g: npt.NDArray[Any], ref: float, out_dtype: np.dtype[Any]) -> float:
    """Allowed |kernel - reference| for a float result."""
    if function in (rk.MAX, rk.MIN):
        return 0.0
    eps_out = float(np.finfo(out_dtype).eps)
    f = np.abs(g.astype(np.float64))
    n = len(f)
    rounding = 2 * eps_out * abs(ref) + float(np.finfo(out_dtype).smallest_subnormal)
    with np.errstate(all="ignore"):
        if function == rk.LOG_SUM_EXP:
            return rounding + (1e-13 if out_dtype == np.float64 else 2e-6 * (1 + float(np.max(f))))
        if function == rk.MULTIPLY:
            return rounding + 4 * n * 2.0**-52 * abs(ref)
        scale = float(np.sum(f * f)) if function in (rk.L2, rk.SUM_SQUARE) else float(np.sum(f))
        acc_err = 4 * n * 2.0**-52 * scale
        if function == rk.AVERAGE:
            return rounding + acc_err / n
        if function == rk.L2:
            return rounding + acc_err / max(abs(ref), 1e-300)
        if function == rk.LOG_SUM:
            return rounding + acc_err / max(abs(math.exp(ref)) if ref < 700 else 1.0, 1e-300)
    return rounding + acc_err


def element_offsets(sizes: tuple[int, ...], strides: tuple[int, ...]) -> npt.NDArray[np.int64]:
    idx = np.indices(sizes, dtype=np.int64)
    return np.tensordot(np.array(strides, np.int64), idx, axes=1)


def run_and_check(function: int, in_dtype: np.dtype[Any], out_dtype: np.dtype[Any],
                  layout: Layout, x: npt.NDArray[Any], out_len: int) -> None:
    sizes, in_strides, out_strides, axes = layout
    plan = rk.make_reduce_plan(function, in_dtype, out_dtype, sizes, in_strides,
                               out_strides, axes)
    out = np.frombuffer(bytes([SENTINEL_BYTE]) * (out_len * out_dtype.itemsize),
                        out_dtype).copy()
    x_before = x.copy()
    plan(x, out)
    assert np.array_equal(x.view(np.uint8), x_before.view(np.uint8)), "kernel wrote its input"

    in_off = element_offsets(sizes, in_strides)
    red = sorted(axes)
    kept = [d for d in range(len(sizes)) if d not in red]
    data = np.moveaxis(x[in_off], red, list(range(len(sizes) - len(red), len(sizes))))
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    out_off = element_offsets(out_sizes, out_strides)
    written = np.zeros(out_len, bool)
    for kidx in np.ndindex(*[sizes[d] for d in kept]):
        g = data[kidx].reshape(-1)
        full = [0] * len(sizes)
        for d, i in zip(kept, kidx, strict=True):
            full[d] = i
        pos = int(out_off[tuple(full)])
        written[pos] = True
        ref = reduce_group(function, g, out_dtype)
        got = out[pos]
        where = f"function {function} {in_dtype}->{out_dtype} layout {layout} group {kidx}: {g!r}"
        if out_dtype.kind in "iu":
            assert int(got) == ref, f"{where}: got {got}, want {ref}"
        elif math.isnan(ref):
            assert math.isnan(float(got)), f"{where}: got {got}, want NaN"
            if function in (rk.MAX, rk.MIN):  # the canonical quiet NaN, whichever NaNs the group holds
                bits = out[pos : pos + 1].view(f"u{out_dtype.itemsize}")[0]
                assert bits == QUIET_NAN_BITS[out_dtype], f"{where}: got NaN bits {int(bits):#x}"
        else:
            with np.errstate(over="ignore"):
                want = float(out_dtype.type(ref))
            if math.isinf(want) or math.isinf(float(got)):
                assert float(got) == want, f"{where}: got {got}, want {want}"
            else:
                tol = tolerance(function, g, ref, out_dtype)
                assert abs(float(got) - ref) <= tol + abs(want - ref), (
                    f"{where}: got {got!r}, want {ref!r} (tol {tol})")
    untouched = out.view(np.uint8).reshape(out_len, out_dtype.itemsize)[~written]
    assert (untouched == SENTINEL_BYTE).all(), "kernel wrote outside its outputs"


# ---------------------------------------------------------------------------
# Data and layout generation.


def make_strides(sizes: tuple[int, ...], order: list[int], pads: list[int],
                 zero: set[int]) -> tuple[int, ...]:
    """Strides laying dims out innermost-first in `order`, padding each by pads[d]."""
    strides = [0] * len(sizes)
    step = 1
    for d in order:
        strides[d] = 0 if d in zero else step
        step = step * sizes[d] + pads[d]
    return tuple(strides)


def buffer_len(sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    return 1 + sum((s - 1) * t for s, t in zip(sizes, strides, strict=True))


def make_values(rng: np.random.Generator, function: int, dtype: np.dtype[Any], n: int,
                specials: bool) -> npt.NDArray[Any]:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if rng.random() < 0.5:  # small values make ties and exact arithmetic
            return rng.integers(max(info.min, -3), 4, n, dtype=dtype, endpoint=True)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if function == rk.MULTIPLY:
        v = rng.uniform(0.5, 1.5, n) * rng.choice([-1.0, 1.0], n)
    elif function == rk.LOG_SUM:
        v = rng.uniform(0.0, 4.0, n)
    elif rng.random() < 0.3:
        v = rng.integers(-3, 4, n).astype(np.float64)  # ties, zeros
    else:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4)
    if specials:
        for value in (math.nan, NEGATIVE_PAYLOAD_NAN, math.inf, -math.inf, -0.0):
            mask = rng.random(n) < 0.03
            v[mask] = value
    values: npt.NDArray[Any] = v.astype(dtype)
    return values


@st.composite
def cases(draw: st.DrawFn) -> Case:
    function = draw(st.sampled_from(ALL_FUNCTIONS))
    in_dtype = draw(st.sampled_from(FLOATS if function in FLOAT_ONLY else FLOATS + INTS))
    if function in (rk.ARGMAX, rk.ARGMIN):
        out_dtype = draw(st.sampled_from(INDEX_DTYPES))
    else:
        out_dtype = in_dtype
    rank = draw(st.integers(1, 5))
    size_list = draw(st.lists(st.sampled_from([1, 1, 2, 3, 4, 5, 7, 17, 40]),
                              min_size=rank, max_size=rank))
    while math.prod(size_list) > MAX_ELEMENTS:  # keep the Python reference quick
        big = size_list.index(max(size_list))
        size_list[big] = (size_list[big] + 1) // 2
    sizes = tuple(size_list)
    axes = tuple(draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                               unique=True)))
    in_order = draw(st.permutations(range(rank)))
    in_pads = draw(st.lists(st.sampled_from([0, 0, 0, 1, 3]), min_size=rank, max_size=rank))
    zero = set(draw(st.lists(st.integers(0, rank - 1), max_size=2)))
    in_strides = make_strides(sizes, list(in_order), in_pads, zero)
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    out_order = draw(st.permutations(range(rank)))
    out_pads = draw(st.lists(st.sampled_from([0, 0, 2]), min_size=rank, max_size=rank))
    out_strides = make_strides(out_sizes, list(out_order), out_pads, set())
    seed = draw(st.integers(0, 2**32 - 1))
    specials = draw(st.booleans())
    return function, in_dtype, out_dtype, (sizes, in_strides, out_strides, axes), seed, specials


def check_case(function: int, in_dtype: np.dtype[Any], out_dtype: np.dtype[Any],
               layout: Layout, seed: int, specials: bool = False) -> None:
    sizes, in_strides, out_strides, axes = layout
    rng = np.random.default_rng(seed)
    n_in = buffer_len(sizes, in_strides) + int(rng.integers(0, 3))
    x = make_values(rng, function, in_dtype, n_in, specials)
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    n_out = buffer_len(out_sizes, out_strides) + int(rng.integers(0, 3))
    run_and_check(function, in_dtype, out_dtype, layout, x, n_out)


def contiguous(sizes: tuple[int, ...]) -> tuple[int, ...]:
    return make_strides(sizes, list(range(len(sizes) - 1, -1, -1)), [0] * len(sizes), set())


def simple_layout(sizes: tuple[int, ...], axes: tuple[int, ...]) -> Layout:
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    return sizes, contiguous(sizes), contiguous(out_sizes), axes


def reduce_array(function: int, a: npt.ArrayLike, axes: tuple[int, ...],
                 out_dtype: Any = None) -> npt.NDArray[Any]:
    """Run the kernel on a contiguous array; returns the keepdims-shaped result."""
    arr = np.ascontiguousarray(a)
    sizes = arr.shape
    odt = np.dtype(out_dtype or arr.dtype)
    _, in_strides, out_strides, _ = simple_layout(sizes, axes)
    plan = rk.make_reduce_plan(function, arr.dtype, odt, sizes, in_strides, out_strides, axes)
    out_sizes = tuple(1 if d in axes else s for d, s in enumerate(sizes))
    out = np.empty(math.prod(out_sizes), odt)
    plan(arr.reshape(-1), out)
    result: npt.NDArray[Any] = out.reshape(out_sizes)
    return result


# ---------------------------------------------------------------------------
# Rulings, one by one.


def test_argmax_linearizes_over_increasing_axes() -> None:
    a = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)
    assert reduce_array(rk.ARGMAX, a, (0, 1), np.uint32).item() == 7
    assert reduce_array(rk.ARGMAX, a, (1, 0), np.int64).item() == 7
    # A transposed memory layout must not change the linear order.
    t = np.ascontiguousarray(a.T).reshape(-1)
    plan = rk.make_reduce_plan(rk.ARGMAX, np.dtype(np.float32), np.dtype(np.int32),
                               (3, 3), (1, 3), (1, 1), (1, 0))
    out = np.empty(1, np.int32)
    plan(t, out)
    assert out[0] == 7


def test_argmax_argmin_ties_and_nan() -> None:
    a = np.array([1.0, 5.0, 5.0, -2.0, -2.0], np.float32)
    assert reduce_array(rk.ARGMAX, a, (0,), np.int32).item() == 1
    assert reduce_array(rk.ARGMIN, a, (0,), np.int32).item() == 3
    b = np.array([1.0, np.nan, 9.0, np.nan, -9.0], np.float64)
    assert reduce_array(rk.ARGMAX, b, (0,), np.uint64).item() == 1
    assert reduce_array(rk.ARGMIN, b, (0,), np.uint64).item() == 1
    c = np.array([-np.inf, -np.inf], np.float16)
    assert reduce_array(rk.ARGMAX, c, (0,), np.uint32).item() == 0


def test_max_min_propagate_nan() -> None:
    a = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf]], np.float32)
    assert np.isnan(reduce_array(rk.MAX, a, (1,))[0, 0])
    assert reduce_array(rk.MAX, a, (1,))[1, 0] == np.inf
    assert reduce_array(rk.MIN, a, (1,))[1, 0] == -np.inf
    assert np.isnan(reduce_array(rk.MIN, a, (0, 1)).item())


@pytest.mark.parametrize("threads", [False, True], ids=["one thread", "threads"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_max_min_nan_is_the_canonical_quiet_nan(dtype: np.dtype[Any], threads: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Rows of NaNs of both signs, with a payload, signaling: every path (NumPy's runs, both numba families, on the
    # threads too, and one output in segments) stores the canonical quiet NaN; a row without NaN keeps its extreme.
    if threads:  # as the `threaded` fixture below
        monkeypatch.setattr(rk, "_PARALLEL_MIN_ELEMENTS", 0)
        monkeypatch.setattr(rk, "_MIN_TILE", 16)
        monkeypatch.setattr(rk, "_SEGMENT", 64)
    bits = {np.dtype(np.float16): (0x7E00, 0xFE00, 0xFE45, 0x7C01, 0x3C00),
            np.dtype(np.float32): (0x7FC00000, 0xFFC00000, 0xFFC12345, 0x7F800001, 0x3F800000),
            np.dtype(np.float64): (0x7FF8000000000000, 0xFFF8000000000000, 0xFFF8000000012345, 0x7FF0000000000001,
                                   0x3FF0000000000000)}[dtype]
    quiet, negative, payload, signaling, one = bits
    raw = np.array([[one, negative, quiet], [payload, one, one], [one, signaling, negative], [one, one, one]],
                   f"u{dtype.itemsize}")
    x = np.ascontiguousarray(np.tile(raw, (1, 700))).view(dtype)   # runs long enough for four streams
    want = [QUIET_NAN_BITS[dtype]] * 3 + [int(one)]
    for function in (rk.MAX, rk.MIN):
        for data, axes, expected in ((x, (1,), want), (x.T.copy(), (0,), want),
                                     (x, (0, 1), [QUIET_NAN_BITS[dtype]])):
            got = reduce_array(function, data, axes).reshape(-1).view(f"u{dtype.itemsize}")
            assert [hex(b) for b in got.tolist()] == [hex(b) for b in expected], (function, axes)


def test_integer_wraparound() -> None:
    assert reduce_array(rk.SUM, np.array([100, 100], np.int8), (0,)).item() == -56
    assert reduce_array(rk.L1, np.array([-128], np.int8), (0,)).item() == -128
    assert reduce_array(rk.L1, np.array([-128, 1], np.int8), (0,)).item() == -127
    assert reduce_array(rk.SUM_SQUARE, np.array([16, 1], np.int8), (0,)).item() == 1
    assert reduce_array(rk.MULTIPLY, np.array([2**32, 2**32], np.uint64), (0,)).item() == 0
    big = np.array([np.iinfo(np.int64).max, 1], np.int64)
    assert reduce_array(rk.SUM, big, (0,)).item() == np.iinfo(np.int64).min
    u = np.array([200, 100], np.uint8)
    assert reduce_array(rk.L1, u, (0,)).item() == reduce_array(rk.SUM, u, (0,)).item() == 44


def test_float16_accumulates_wide_and_rounds_once() -> None:
    # Summed in float16 this would stick at 2048; the exact 2050 is representable.
    a = np.array([2048.0, 1.0, 1.0], np.float16)
    assert reduce_array(rk.SUM, a, (0,)).item() == 2050.0
    # Rounds once, to nearest even, from the wide sum: 2049 is a tie -> 2048.
    assert reduce_array(rk.SUM, np.array([2048.0, 0.5, 0.5], np.float16), (0,)).item() == 2048.0
    assert reduce_array(rk.SUM, np.array([65504.0, 16.0], np.float16), (0,)).item() == np.inf
    # Subnormal results.
    tiny = np.array([2.0**-24, 2.0**-24, 2.0**-24], np.float16)
    assert reduce_array(rk.SUM, tiny, (0,)).item() == 3 * 2.0**-24


def test_float16_encoding_corner_cases() -> None:
    values = np.array([0.0, -0.0, 1.0, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 2.0**-14,
                       2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 3 * 2.0**-26, 1e-30, np.nan,
                       np.inf, -np.inf, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1e-310])
    for v in values:
        got = np.uint16(rk._f64_to_f16_bits(v)).view(np.float16)
        with np.errstate(over="ignore"):
            want = np.float16(v)
        assert (np.isnan(got) and np.isnan(want)) or (
            got == want and np.signbit(got) == np.signbit(want)), (v, got, want)


def test_log_sum_and_log_sum_exp_special_values() -> None:
    assert reduce_array(rk.LOG_SUM, np.array([0.0, 0.0], np.float32), (0,)).item() == -np.inf
    assert np.isnan(reduce_array(rk.LOG_SUM, np.array([1.0, -3.0], np.float64), (0,)).item())
    rows = np.array([[1.0, np.inf, 0.0], [-np.inf, -np.inf, -np.inf],
                     [np.nan, 1.0, 2.0], [np.inf, np.nan, 1.0], [-np.inf, 0.0, -np.inf],
                     [1000.0, 1000.0, -1000.0]], np.float32)
    got = reduce_array(rk.LOG_SUM_EXP, rows, (1,)).reshape(-1)
    assert got[0] == np.inf and got[1] == -np.inf
    assert np.isnan(got[2]) and np.isnan(got[3])
    assert got[4] == 0.0
    assert got[5] == np.float32(1000.0 + math.log(2.0))


def test_sums_of_negative_zeros_keep_the_sign() -> None:
    got = reduce_array(rk.SUM, np.array([-0.0, -0.0], np.float32), (0,)).item()
    assert got == 0.0 and math.copysign(1.0, got) == -1.0


def test_rank_8_and_broadcast_strides() -> None:
    sizes = (2, 1, 3, 2, 1, 2, 3, 2)
    for function in ALL_FUNCTIONS:
        dtype = np.dtype(np.float32)
        odt = np.dtype(np.int64) if function in (rk.ARGMAX, rk.ARGMIN) else dtype
        check_case(function, dtype, odt, simple_layout(sizes, (0, 2, 5, 7)), seed=function)
        # Every input stride zero: one element broadcast everywhere.
        layout = (sizes, (0,) * 8, contiguous(tuple(1 if d in (1, 3) else s
                                                     for d, s in enumerate(sizes))), (1, 3))
        check_case(function, dtype, odt, layout, seed=function)


@pytest.mark.parametrize("function", [rk.SUM, rk.MAX, rk.ARGMIN, rk.LOG_SUM_EXP])
def test_read_only_input(function: int) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = a.reshape(-1).copy()
    x.flags.writeable = False
    odt = np.dtype(np.int32) if function == rk.ARGMIN else np.dtype(np.float32)
    for layout in (simple_layout((3, 4), (1,)), simple_layout((3, 4), (0,))):
        run_and_check(function, np.dtype(np.float32), odt, layout, x, 4)


def test_rejects_invalid_descriptors() -> None:
    f32 = np.dtype(np.float32)
    with pytest.raises(ValueError):
        rk.make_reduce_plan(12, f32, f32, (2,), (1,), (1,), (0,))
    with pytest.raises(ValueError):
        rk.make_reduce_plan(rk.L2, np.dtype(np.int32), np.dtype(np.int32), (2,), (1,), (1,), (0,))
    with pytest.raises(ValueError):
        rk.make_reduce_plan(rk.ARGMAX, f32, f32, (2,), (1,), (1,), (0,))
    with pytest.raises(ValueError):
        rk.make_reduce_plan(rk.SUM, f32, f32, (2, 2), (2, 1), (1, 1), (0, 0))


# ---------------------------------------------------------------------------
# Both kernel families, runs longer than the internal chunk/tile/block sizes,
# every function and dtype.

FAMILY_LAYOUTS = [
    simple_layout((3, 2500), (1,)),            # family A, long contiguous runs
    simple_layout((2500, 3), (0,)),            # family B, contiguous rows
    simple_layout((5, 40, 33), (0, 2)),        # A with an offset table
    simple_layout((40, 2), (1,)),              # short runs: switched to B
    simple_layout((2, 40), (0,)),              # short rows: switched to A
    ((6, 9000), (1, 6), (1, 1), (1,)),         # transposed: strided runs
    ((2, 9000, 2), (1, 4, 2), (2, 1, 1), (1,)),  # padded/transposed, long strided runs
    simple_layout((9, 700), (1,)),             # A, short runs four outputs at a time, and a remainder
    simple_layout((9, 5, 60), (0, 2)),         # A, nine short runs per output: four at a time, and one
    simple_layout((2, 4501), (1,)),            # A, long runs read as quarters, and a tail
]


@pytest.mark.parametrize("layout", FAMILY_LAYOUTS, ids=lambda lay: f"{lay[0]}-{lay[3]}")
@pytest.mark.parametrize("function", ALL_FUNCTIONS)
def test_families_float(function: int, layout: Layout) -> None:
    for dtype in FLOATS:
        odt = np.dtype(np.uint32) if function in (rk.ARGMAX, rk.ARGMIN) else dtype
        check_case(function, dtype, odt, layout, seed=function, specials=False)
        check_case(function, dtype, odt, layout, seed=function + 100, specials=True)


@pytest.mark.parametrize("layout", FAMILY_LAYOUTS[:5] + FAMILY_LAYOUTS[7:], ids=lambda lay: f"{lay[0]}-{lay[3]}")
@pytest.mark.parametrize("function", sorted(set(ALL_FUNCTIONS) - FLOAT_ONLY))
def test_families_int(function: int, layout: Layout) -> None:
    for dtype in INTS:
        odt = np.dtype(np.int64) if function in (rk.ARGMAX, rk.ARGMIN) else dtype
        check_case(function, dtype, odt, layout, seed=function)


# ---------------------------------------------------------------------------
# Threads: every dispatch of these layouts goes to numba's threads.

THREADED_LAYOUTS = [
    *FAMILY_LAYOUTS,
    simple_layout((7, 300), (0, 1)),           # one output: its runs cut into segments
    simple_layout((3, 40, 50), (0, 1, 2)),     # one output over an offset table, in segments
    simple_layout((600, 40), (0,)),            # B, forty outputs cut into tiles
]


@pytest.fixture
def threaded(monkeypatch: pytest.MonkeyPatch) -> bool:
    """Plans made under it use the threads for any size: family B tiles of >= 16 outputs, segments of 64."""
    monkeypatch.setattr(rk, "_PARALLEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(rk, "_MIN_TILE", 16)
    monkeypatch.setattr(rk, "_SEGMENT", 64)
    return numba.get_num_threads() > 1


@pytest.mark.parametrize("layout", THREADED_LAYOUTS, ids=lambda lay: f"{lay[0]}-{lay[3]}")
@pytest.mark.parametrize("function", ALL_FUNCTIONS)
def test_threaded_plans(function: int, layout: Layout, threaded: bool) -> None:
    sizes, in_strides, out_strides, axes = layout
    for dtype in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int32)):
        if dtype.kind == "i" and function in FLOAT_ONLY:
            continue
        odt = np.dtype(np.int64) if function in (rk.ARGMAX, rk.ARGMIN) else dtype
        plan = rk.make_reduce_plan(function, dtype, odt, sizes, in_strides, out_strides, axes)
        one_output = math.prod(size for d, size in enumerate(sizes) if d not in axes) == 1
        if threaded and isinstance(plan, rk.ReducePlan):  # contiguous ARGMAX/MAX runs go to NumPy instead
            # A single ARGMAX/ARGMIN/LOG_SUM_EXP output is not cut into segments.
            single = one_output and function in (rk.ARGMAX, rk.ARGMIN, rk.LOG_SUM_EXP)
            assert (plan._threaded is None) == single
        check_case(function, dtype, odt, layout, seed=function, specials=dtype.kind == "f")


@pytest.mark.parametrize("function", [rk.SUM, rk.L2, rk.MULTIPLY, rk.MAX, rk.ARGMIN, rk.LOG_SUM_EXP])
def test_threads_do_not_change_results(function: int, threaded: bool) -> None:
    # Each output is reduced in the same order whatever the thread count, when the plan is made and when it runs:
    # bit-identical results on one or all threads, a single output's segments included.
    rng = np.random.default_rng(3)
    for layout in (simple_layout((37, 5000), (1,)), simple_layout((300, 700), (0,)), simple_layout((9, 5, 60), (0, 2)),
                   simple_layout((30, 700), (0, 1))):
        sizes, in_strides, out_strides, axes = layout
        # float64 data: a different order of operations shows in the last bits.
        x = rng.standard_normal(math.prod(sizes)) * (1e-3 if function == rk.MULTIPLY else 1) + 1
        odt = np.dtype(np.int64) if function == rk.ARGMIN else x.dtype
        results = []
        for count in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(count)
            try:
                plan = rk.make_reduce_plan(function, x.dtype, odt, sizes, in_strides, out_strides, axes)
                out = np.empty(math.prod(1 if d in axes else s for d, s in enumerate(sizes)), odt)
                plan(x, out)
            finally:
                numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
            results.append(out)
        assert results[0].tobytes() == results[1].tobytes(), layout


def test_argmax_nan_after_larger_chunk_maximum() -> None:
    # The NaN sits in a later chunk than the finite maximum.
    a = np.zeros(3 * rk._CHUNK + 5, np.float32)
    a[7] = 100.0
    a[2 * rk._CHUNK + 3] = np.nan
    assert reduce_array(rk.ARGMAX, a, (0,), np.int32).item() == 2 * rk._CHUNK + 3
    assert reduce_array(rk.ARGMIN, a, (0,), np.int32).item() == 2 * rk._CHUNK + 3
    a[2 * rk._CHUNK + 3] = 100.0
    assert reduce_array(rk.ARGMAX, a, (0,), np.int32).item() == 7


def test_log_sum_exp_growing_maximum_across_chunks() -> None:
    rng = np.random.default_rng(5)
    a = np.sort(rng.standard_normal(4 * rk._CHUNK))[None, :] * 30.0
    a = np.concatenate([a, a[:, ::-1]]).astype(np.float64)
    ref = np.logaddexp.reduce(a, axis=1)
    got = reduce_array(rk.LOG_SUM_EXP, a, (1,)).reshape(-1)
    np.testing.assert_allclose(got, ref, rtol=1e-14)


# ---------------------------------------------------------------------------
# Random descriptors.


# Five times the active Hypothesis profile's examples: the space is large
# and each example is cheap once the kernels are compiled.
@settings(max_examples=5 * settings().max_examples)
@given(cases())
def test_random_descriptors(case: Case) -> None:
    function, in_dtype, out_dtype, layout, seed, specials = case
    check_case(function, in_dtype, out_dtype, layout, seed, specials)
