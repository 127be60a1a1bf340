"""The numba math library of the element-wise engine (backends/cpu/math.py), each primitive compiled in a small
loop: float32 over every exponent (random mantissas, both signs), subnormals, C99's special values and each
function's own hard cases, against NumPy's float64 results rounded to float32, in units in the last place; float64
against NumPy's float64; the integer primitives against Python's integers on edge and random values of every
integer type. The error of a result is the distance between it and the reference in representable floats (so that
a subnormal result counts in the subnormals' spacing); NaN must give NaN, and the functions called exact must give
the reference's bits (the sign of zero included).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from numba.extending import overload

from opendml.backends.cpu import math as cm

RNG = np.random.default_rng(2026)
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 2.0**-149, -(2.0**-149),
            2.0**-126, -(2.0**-126), float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max)]


def exact_type(value: Any, like: Any) -> Any:
    """value, provided it has like's type exactly: a primitive that returns another type does not compile."""
    raise NotImplementedError


@overload(exact_type, inline="always", strict=False)
def _exact_type(value: Any, like: Any) -> Any:
    if value != like:
        return None
    return lambda value, like: value


def float32_inputs() -> np.ndarray:
    """Every exponent with both signs and 180 random mantissas each (subnormals included), every representable value
    within a few units of the integers and halves to 8, the specials: about 100k values."""
    exponents = np.repeat(np.arange(255, dtype=np.uint32), 360)
    mantissas = RNG.integers(0, 1 << 23, exponents.size, dtype=np.uint32)
    signs = np.tile(np.array([0, 1], np.uint32), exponents.size // 2) << 31
    swept = (signs | (exponents << 23) | mantissas).view(np.float32)
    halves = np.arange(-16, 17, dtype=np.float32) * np.float32(0.5)
    near = (halves.view(np.int32)[:, None] + np.arange(-3, 4, dtype=np.int32)).ravel().view(np.float32)
    return np.concatenate([swept, near, np.array(SPECIALS, np.float32)])


X32 = float32_inputs()


def ordered(values: np.ndarray) -> np.ndarray:
    """float32 values as integers in the same order, consecutive floats consecutive (+0 and -0 both 0)."""
    bits = values.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in float32 steps; 0 where both are NaN, 2^40 where only one is."""
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    distance = np.abs(ordered(np.where(nan_got, 0, got)) - ordered(np.where(nan_want, 0, want)))
    return np.where(nan_got | nan_want, np.where(nan_got & nan_want, 0, 1 << 40), distance)


def rounded(reference: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        return reference.astype(np.float32)


#: math.py's modification time and size: numba's cache of a loop knows only this file, but a closure's cache entry
#: is keyed by its free variables too, so the loops below hold this and recompile when the library changes.
MATH_STAMP = hash((Path(cm.__file__).stat().st_mtime_ns, Path(cm.__file__).stat().st_size))


def unary_loop(primitive: Callable[..., Any]) -> Any:
    """out[i] = primitive(x[i]), the result's type checked to be the input's."""
    stamp = MATH_STAMP

    @numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
    def loop(x: Any, out: Any) -> None:
        for i in range(x.size + 0 * stamp):
            out[i] = exact_type(primitive(x[i]), x[0])

    return loop


def binary_loop(primitive: Callable[..., Any]) -> Any:
    """out[i] = primitive(a[i], b[i]), the result's type checked to be a's."""
    stamp = MATH_STAMP

    @numba.njit(cache=True, error_model="numpy", fastmath={"contract"})
    def loop(a: Any, b: Any, out: Any) -> None:
        for i in range(a.size + 0 * stamp):
            out[i] = exact_type(primitive(a[i], b[i]), a[0])

    return loop


def erf64(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x.tolist()])


def round_away64(x: np.ndarray) -> np.ndarray:
    return np.trunc(x + np.copysign(0.5, x))  # exact for float32 x in float64


def sign64(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0))  # NaN: 0


#: Unary F primitives: (name, float64 reference, ulp bound for float32; 0: the reference's bits exactly).
UNARY = [
    ("exp", np.exp, 4), ("expm1", np.expm1, 4), ("log", np.log, 4), ("log1p", np.log1p, 4), ("erf", erf64, 4),
    ("sqrt", np.sqrt, 0), ("sin", np.sin, 4), ("cos", np.cos, 4), ("tan", np.tan, 4), ("asin", np.arcsin, 4),
    ("acos", np.arccos, 4), ("atan", np.arctan, 4), ("sinh", np.sinh, 4), ("cosh", np.cosh, 4),
    ("tanh", np.tanh, 4), ("asinh", np.arcsinh, 4), ("acosh", np.arccosh, 4), ("atanh", np.arctanh, 4),
    ("floor", np.floor, 0), ("ceil", np.ceil, 0), ("trunc", np.trunc, 0), ("round_even", np.rint, 0),
    ("round_away", round_away64, 0), ("abs", np.abs, 0), ("sign", sign64, 0),
]
UNARY_LOOPS = {name: unary_loop(getattr(cm, "m_" + name)) for name, _, _ in UNARY}


def evaluate(name: str, *inputs: np.ndarray) -> np.ndarray:
    out = np.empty_like(inputs[0])
    (UNARY_LOOPS if len(inputs) == 1 else BINARY_LOOPS)[name](*inputs, out)
    return out


@pytest.mark.parametrize(("name", "reference", "bound"), UNARY, ids=[row[0] for row in UNARY])
def test_unary_float32_within_bound(name: str, reference: Callable[..., Any], bound: int) -> None:
    with np.errstate(all="ignore"):
        want = rounded(reference(X32.astype(np.float64)))
    got = evaluate(name, X32)
    errors = ulp_errors(got, want)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, f"{name}({X32[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"
    if bound == 0:
        finite = ~np.isnan(want)
        assert np.array_equal(got[finite].view(np.int32), want[finite].view(np.int32))


def pow_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Bases from the sweep with exponents from it, small integers and halves, and bases a few units from 1 with
    large exponents (y log x near the overflow and underflow thresholds), plus every special pair."""
    n = X32.size
    x = np.concatenate([X32, X32, RNG.permutation(X32)])
    y = np.concatenate([RNG.permutation(X32), RNG.integers(-12, 13, n).astype(np.float32) * np.float32(0.5),
                        RNG.uniform(-40, 40, n).astype(np.float32)])
    near_one = (1.0 + RNG.integers(-2000, 2000, 20000) * 2.0**-24).astype(np.float32)
    logarithm = np.log(near_one.astype(np.float64))
    large = RNG.uniform(-150, 150, 20000) / np.where(logarithm == 0, 1.0, logarithm)
    special = np.array([*SPECIALS, 3.0, -3.0, 0.25, -0.25, 1.5, -1.5], np.float32)
    sx, sy = np.meshgrid(special, special)
    return (np.concatenate([x, near_one, sx.ravel()]).astype(np.float32),
            np.concatenate([y, large.astype(np.float32), sy.ravel()]).astype(np.float32))


def minimum64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(a, b)


def maximum64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(a, b)


#: Binary F primitives: (name, reference on float64 (rounded to float32) or on float32 as given, bound).
BINARY = [
    ("div", np.divide, 0), ("mod_trunc", np.fmod, 0), ("mod_floor", np.remainder, 0), ("minimum", minimum64, 0),
    ("maximum", maximum64, 0), ("atan2", np.arctan2, 4), ("pow", np.power, 4),
]
BINARY_LOOPS = {name: binary_loop(getattr(cm, "m_" + name)) for name, _, _ in BINARY}
#: The moduli's references run in float32: NumPy computes them exactly there (fmodf, and Python's adjustment).
FLOAT32_REFERENCE = {"mod_trunc", "mod_floor"}


@pytest.mark.parametrize(("name", "reference", "bound"), BINARY, ids=[row[0] for row in BINARY])
def test_binary_float32_within_bound(name: str, reference: Callable[..., Any], bound: int) -> None:
    a, b = pow_pairs() if name == "pow" else (np.concatenate([X32, X32]), np.concatenate([RNG.permutation(X32),
                                                                                           RNG.permutation(X32)]))
    with np.errstate(all="ignore"):
        want = reference(a, b) if name in FLOAT32_REFERENCE else rounded(reference(a.astype(np.float64),
                                                                                   b.astype(np.float64)))
    got = evaluate(name, a, b)
    errors = ulp_errors(got, want)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, f"{name}({a[worst]!r}, {b[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"
    if bound == 0:
        finite = ~np.isnan(want)
        assert np.array_equal(got[finite].view(np.int32), want[finite].view(np.int32))


def test_float32_special_values() -> None:
    """C99's cases worked out by hand: pow's, the NaN of minimum and maximum (canonical), sign of -0, erf's ends."""
    nan, inf = np.nan, np.inf
    cases = {
        "pow": [((-8.0, 1.0 / 3.0), nan), ((-2.0, 3.0), -8.0), ((-2.0, -3.0), -0.125), ((-0.0, 3.0), -0.0),
                ((-0.0, -3.0), -inf), ((-0.0, -2.0), inf), ((-0.0, 0.5), 0.0), ((nan, 0.0), 1.0), ((1.0, nan), 1.0),
                ((-1.0, inf), 1.0), ((-1.0, -inf), 1.0), ((0.5, -inf), inf), ((2.0, -inf), 0.0),
                ((-inf, 3.0), -inf), ((-inf, -3.0), -0.0), ((-inf, 0.5), inf), ((-inf, -0.5), 0.0),
                ((2.0, 128.0), inf), ((2.0, -149.0), 2.0**-149), ((2.0, -150.0), 0.0), ((4.0, 0.5), 2.0),
                ((-1.0, 0.5), nan), ((nan, 1.0), nan), ((2.0, nan), nan), ((16777216.0, -1.0), 2.0**-24)],
        "minimum": [((nan, 1.0), nan), ((1.0, -nan), nan), ((2.0, -3.0), -3.0)],
        "maximum": [((nan, 1.0), nan), ((1.0, -nan), nan), ((2.0, -3.0), 2.0)],
        "mod_floor": [((-1.0, 3.0), 2.0), ((1.0, -3.0), -2.0), ((-3.0, 3.0), 0.0), ((3.0, -3.0), -0.0),
                      ((-1.0, inf), inf), ((1.0, 0.0), nan), ((5.5, 2.0), 1.5)],
        "mod_trunc": [((-1.0, 3.0), -1.0), ((-3.0, 3.0), -0.0), ((1.0, 0.0), nan), ((-5.5, 2.0), -1.5)],
        "div": [((1.0, 0.0), inf), ((-1.0, 0.0), -inf), ((0.0, 0.0), nan)],
    }
    for name, rows in cases.items():
        a = np.array([row[0][0] for row in rows], np.float32)
        b = np.array([row[0][1] for row in rows], np.float32)
        want = np.array([row[1] for row in rows], np.float32)
        got = evaluate(name, a, b)
        for i, row in enumerate(rows):
            assert (np.isnan(got[i]) and np.isnan(want[i])) or got[i].tobytes() == want[i].tobytes(), (name, row)
        if name in ("minimum", "maximum"):
            assert got[:2].view(np.uint32).tolist() == [0x7FC00000, 0x7FC00000]
    unary = {"sign": [(-0.0, 0.0), (-3.0, -1.0), (2.0**-149, 1.0), (-inf, -1.0), (nan, 0.0)],
             "erf": [(4.0, 1.0), (-inf, -1.0), (-0.0, -0.0), (2.0**-149, 2.0**-149), (3.8, 0.99999994)],
             "round_even": [(2.5, 2.0), (-0.5, -0.0), (3.5, 4.0)], "round_away": [(2.5, 3.0), (-0.5, -1.0)],
             "log": [(0.0, -inf), (-0.0, -inf), (-1.0, nan), (inf, inf), (2.0**-149, -103.27893)],
             "exp": [(-inf, 0.0), (inf, inf), (88.8, inf), (-103.0, 1.8e-45)]}
    for name, pairs in unary.items():
        x = np.array([pair[0] for pair in pairs], np.float32)
        want = np.array([pair[1] for pair in pairs], np.float32)
        got = evaluate(name, x)
        for i, pair in enumerate(pairs):
            assert (np.isnan(got[i]) and np.isnan(want[i])) or got[i].tobytes() == want[i].tobytes(), (name, pair)


def test_float32_predicates_and_conversions() -> None:
    @numba.njit(error_model="numpy")
    def predicates(x: Any, nan: Any, inf: Any, canonical: Any) -> None:
        for i in range(x.size):
            nan[i] = cm.m_isnan(x[i])
            inf[i] = cm.m_isinf(x[i])
            canonical[i] = exact_type(cm.m_canonical_nan(x[0]), x[0])

    nan, inf = np.empty(X32.size, np.bool_), np.empty(X32.size, np.bool_)
    canonical = np.empty_like(X32)
    predicates(X32, nan, inf, canonical)
    assert np.array_equal(nan, np.isnan(X32)) and np.array_equal(inf, np.isinf(X32))
    assert set(canonical.view(np.uint32).tolist()) == {0x7FC00000}
    canonical64 = np.empty(2, np.float64)
    predicates(np.zeros(2), nan[:2], inf[:2], canonical64)
    assert set(canonical64.view(np.uint64).tolist()) == {0x7FF8000000000000}




def test_float64_against_numpy() -> None:
    """float64 arguments take float64 code: within 4 ulp of NumPy's float64 (exact where float32's is)."""
    x = np.concatenate([X32.astype(np.float64) * (1.0 + RNG.uniform(0, 2.0**-30, X32.size)), [1e300, -1e-310]])
    x = x[::7]
    for name, reference, _ in UNARY:
        with np.errstate(all="ignore"):
            want = reference(x)
        got = np.empty_like(x)
        UNARY_LOOPS[name](x, got)
        assert np.allclose(got, want, rtol=4 * 2.0**-52, atol=0, equal_nan=True), name
    b = RNG.permutation(x)
    for name, reference, _ in BINARY:
        with np.errstate(all="ignore"):
            want = reference(x, b)
        got = np.empty_like(x)
        BINARY_LOOPS[name](x, b, got)
        assert np.allclose(got, want, rtol=4 * 2.0**-52, atol=0, equal_nan=True), name


def test_mixed_float_types_do_not_compile() -> None:
    """A float32 argument beside a float64 one is a typing error, never a silent float64 computation."""
    loop = binary_loop(cm.m_pow)
    with pytest.raises(numba.core.errors.TypingError, match="m_pow"):
        loop(np.ones(2, np.float32), np.ones(2, np.float64), np.ones(2, np.float32))


# -- integers ----------------------------------------------------------------------------------------------------------

INTEGER_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
INTEGER_BINARY = ["div", "mod_trunc", "mod_floor", "minimum", "maximum", "shl", "shr", "bit_and", "bit_or",
                  "bit_xor"]
INTEGER_UNARY = ["abs", "sign", "popcount", "bit_not"]
INTEGER_ROWS = [*INTEGER_BINARY, *INTEGER_UNARY, "ipow"]


@numba.njit(error_model="numpy")  # not cached: numba's cache would not see math.py change
def integer_kernel(a: Any, b: Any, out: Any, f32: Any, f64: Any) -> None:
    """Every integer primitive of (a[i], b[i]) (unary ones of a[i]), one row each, in INTEGER_ROWS order; to_float
    of a[i] in f32 and f64."""
    like = a[0]
    for i in range(a.size):
        x, y = a[i], b[i]
        out[0, i] = exact_type(cm.m_div(x, y), like)
        out[1, i] = exact_type(cm.m_mod_trunc(x, y), like)
        out[2, i] = exact_type(cm.m_mod_floor(x, y), like)
        out[3, i] = exact_type(cm.m_minimum(x, y), like)
        out[4, i] = exact_type(cm.m_maximum(x, y), like)
        out[5, i] = exact_type(cm.m_shl(x, y), like)
        out[6, i] = exact_type(cm.m_shr(x, y), like)
        out[7, i] = exact_type(cm.m_bit_and(x, y), like)
        out[8, i] = exact_type(cm.m_bit_or(x, y), like)
        out[9, i] = exact_type(cm.m_bit_xor(x, y), like)
        out[10, i] = exact_type(cm.m_abs(x), like)
        out[11, i] = exact_type(cm.m_sign(x), like)
        out[12, i] = exact_type(cm.m_popcount(x), like)
        out[13, i] = exact_type(cm.m_bit_not(x), like)
        out[14, i] = exact_type(cm.m_ipow(x, y), like)
        f32[i] = exact_type(cm.m_to_float(x, f32[0]), f32[0])
        f64[i] = exact_type(cm.m_to_float(x, f64[0]), f64[0])


def wrap(value: int, kind: Any) -> int:
    info = np.iinfo(kind)
    span = 1 << info.bits
    return (value - int(info.min)) % span + int(info.min)


def truncated(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def to_float(value: int, bits: int) -> float:
    """value rounded to the nearest float with `bits` significant bits, ties to even, exactly."""
    magnitude = abs(value)
    shift = magnitude.bit_length() - bits
    if shift > 0:
        quotient, remainder = divmod(magnitude, 1 << shift)
        half = 1 << (shift - 1)
        if remainder > half or (remainder == half and quotient & 1):
            quotient += 1
        magnitude = quotient << shift
    return float(magnitude) if value >= 0 else -float(magnitude)


def integer_reference(name: str, a: int, b: int, kind: Any) -> int:
    width = np.iinfo(kind).bits
    if name in ("div", "mod_trunc", "mod_floor") and b == 0:
        return 0
    result = {
        "div": lambda: truncated(a, b) if b else 0,
        "mod_trunc": lambda: a - truncated(a, b) * b if b else 0,
        "mod_floor": lambda: a % b if b else 0,
        "minimum": lambda: min(a, b), "maximum": lambda: max(a, b),
        "shl": lambda: a << b if 0 <= b < width else 0, "shr": lambda: a >> b if 0 <= b < width else 0,
        "bit_and": lambda: a & b, "bit_or": lambda: a | b, "bit_xor": lambda: a ^ b,
        "abs": lambda: abs(a), "sign": lambda: (a > 0) - (a < 0),
        "popcount": lambda: bin(a & ((1 << width) - 1)).count("1"), "bit_not": lambda: ~a,
        "ipow": lambda: pow(a, b, 1 << width) if b >= 0 else (1 if a == 1 else (-1) ** (b & 1) if a == -1 else 0),
    }[name]()
    return wrap(result, kind)


def integer_values(kind: Any) -> list[int]:
    info = np.iinfo(kind)
    low, high, width = int(info.min), int(info.max), info.bits
    edges = {0, 1, 2, 3, 7, width - 1, width, width + 1, 64, 65, high, high - 1, low, low + 1, 1 << (width - 2),
             (1 << (width - 2)) + 1}
    if low < 0:
        edges |= {-1, -2, -3, -7, -width, low + 1 + (1 << (width - 2))}
    edges = {value for value in edges if low <= value <= high}
    return sorted(edges) + [int(v) for v in RNG.integers(low, high, 60, dtype=kind, endpoint=True)]


@pytest.mark.parametrize("kind", INTEGER_TYPES, ids=[k.__name__ for k in INTEGER_TYPES])
def test_integer_primitives(kind: Any) -> None:
    values = integer_values(kind)
    pairs = [(x, y) for x in values for y in values]
    a = np.array([x for x, _ in pairs], kind)
    b = np.array([y for _, y in pairs], kind)
    out = np.zeros((len(INTEGER_ROWS), a.size), kind)
    f32, f64 = np.zeros(a.size, np.float32), np.zeros(a.size, np.float64)
    integer_kernel(a, b, out, f32, f64)
    for row, name in enumerate(INTEGER_ROWS):
        for column, (x, y) in enumerate(pairs):
            assert int(out[row, column]) == integer_reference(name, x, y, kind), (name, x, y)
    for column, (x, _) in enumerate(pairs):
        assert float(f32[column]) == to_float(x, 24) and float(f64[column]) == to_float(x, 53), x


@numba.njit(error_model="numpy")  # not cached, as integer_kernel
def saturate_kernel(v: Any, i8: Any, i16: Any, i32: Any, i64: Any, u8: Any, u16: Any, u32: Any, u64: Any) -> None:
    for i in range(v.size):
        i8[i] = exact_type(cm.m_saturate(v[i], i8[0]), i8[0])
        i16[i] = exact_type(cm.m_saturate(v[i], i16[0]), i16[0])
        i32[i] = exact_type(cm.m_saturate(v[i], i32[0]), i32[0])
        i64[i] = exact_type(cm.m_saturate(v[i], i64[0]), i64[0])
        u8[i] = exact_type(cm.m_saturate(v[i], u8[0]), u8[0])
        u16[i] = exact_type(cm.m_saturate(v[i], u16[0]), u16[0])
        u32[i] = exact_type(cm.m_saturate(v[i], u32[0]), u32[0])
        u64[i] = exact_type(cm.m_saturate(v[i], u64[0]), u64[0])


@pytest.mark.parametrize("float_kind", [np.float32, np.float64])
def test_saturate(float_kind: Any) -> None:
    """Integral floats clamped to every integer type, at and beyond each range's ends; NaN gives 0."""
    ends = [float(value) for kind in INTEGER_TYPES for value in (np.iinfo(kind).min, np.iinfo(kind).max)]
    values = [0.0, -0.0, 1.0, -1.0, 255.0, 256.0, -129.0, np.inf, -np.inf, np.nan, 1e30, -1e30,
              2.0**63 - 2.0**40, -(2.0**63) + 2.0**40, 2.0**64 - 2.0**40, 2.0**31 - 128.0, 2.0**32 - 256.0]
    v = np.array(ends + [e + d for e in ends for d in (-1.0, 1.0)] + values, float_kind)
    v = np.concatenate([v, np.floor(RNG.uniform(-3e9, 3e9, 200)).astype(float_kind)])
    outs = [np.zeros(v.size, kind) for kind in INTEGER_TYPES]
    saturate_kernel(v, *outs)
    for kind, out in zip(INTEGER_TYPES, outs, strict=True):
        info = np.iinfo(kind)
        want = [0 if math.isnan(x) else min(max(int(x) if math.isfinite(x) else (1 << 70 if x > 0 else -(1 << 70)),
                                                 int(info.min)), int(info.max)) for x in v.tolist()]
        assert [int(value) for value in out] == want, kind


# -- vectorization: the loops that must run at memory speed -----------------------------------------------------------

VECTORIZED = ["exp", "log", "erf", "tanh", "round_even", "abs", "pow", "minimum", "maximum"]


@pytest.mark.parametrize("name", VECTORIZED)
def test_float32_loop_vectorizes(name: str) -> None:
    """The float32 loop of each speed-critical primitive compiles to vector code with no call left in it but LLVM's
    vector intrinsics (a scalar libm call would keep it at a fraction of memory speed)."""
    primitive = getattr(cm, "m_" + name)
    if name in ("pow", "minimum", "maximum"):
        @numba.njit(error_model="numpy", fastmath={"contract"})
        def loop2(a: Any, b: Any, out: Any) -> None:
            for i in range(a.size):
                out[i] = primitive(a[i], b[i])

        x = np.ones(8, np.float32)
        loop2(x, x, x)
        llvm = loop2.inspect_llvm(loop2.signatures[0])
    else:
        @numba.njit(error_model="numpy", fastmath={"contract"})
        def loop1(a: Any, out: Any) -> None:
            for i in range(a.size):
                out[i] = primitive(a[i])

        x = np.ones(8, np.float32)
        loop1(x, x)
        llvm = loop1.inspect_llvm(loop1.signatures[0])
    body = next(chunk for chunk in llvm.split("\ndefine ")[1:] if chunk.split("(")[0].find("cpython") < 0)
    assert re.search(r"<(4|8|16) x float>", body), name
    called = set(re.findall(r"call [^@]*@([\w.$]+)\(", body))
    scalar = {c for c in called if not c.startswith(("llvm.", "NRT_", "Py", "numba_"))}
    assert scalar == set(), (name, scalar)
