"""The WGSL libraries of the element-wise engine (issue 26), run on the adapter at hand (lavapipe in CI), function by
function, in a compute shader of their own.

math.wgsl: every `m_<primitive>` over about 100k float32 bit patterns (both signs, every exponent, random mantissas
and each binade's first, second and last, so subnormals, zeros, infinities and NaNs too), plus arguments near
multiples of pi/2 (sin, cos, tan) up to float32's largest, and for the binary functions a sample of pairs, every pair
of special values and pow's hard region (x near 1, |y| up to 20000; integral y). Each result is compared with the
float64 result (NumPy, math.erf) rounded to float32, in units in the last place: the distance between the two
float32 values in the order of their bits, +-inf one step beyond the largest finite value. NaN must meet NaN. The
approximations must be within 4 ulp (ENGINE.md's bound; measured on lavapipe: 1 ulp, 2 for atan2 and pow on other
samples), the exact ones (roundings, fmod, mod_floor, minimum/maximum, sign, isnan/isinf) exact (sign(NaN) is 0, as
DML's SIGN page says; minimum and maximum of two zeros give the second, as NumPy's do).

int64.wgsl: 64-bit integers as (low, high) words against Python's integers, over every pair of edge values (0, +-1,
MIN, MAX, the 32-bit boundaries) and random pairs of every magnitude; the conversions to and from float32; and the
32-bit helpers (division rules, shifts at widths 8, 16 and 32).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml
from opendml.backends.gpu.context import Recorder, group_counts

GPU = Path(dml.__file__).parent / "backends" / "gpu"
MATH = (GPU / "math.wgsl").read_text()
INT64 = MATH + (GPU / "int64.wgsl").read_text()   # int64.wgsl uses math.wgsl's m_mul_wide
MASK64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def context() -> Any:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    return dml.Device(backend="gpu").backend.context  # type: ignore[attr-defined]


#: How a shader reads an argument of each kind from the data buffer's words, and how many words it takes.
LOADS = {"f32": ("bitcast<f32>(D[{at}])", 1), "u32": ("D[{at}]", 1), "i32": ("bitcast<i32>(D[{at}])", 1),
         "v2": ("vec2<u32>(D[{at}], D[{at} + 1u])", 2)}
#: How a result of each kind is written back as words.
STORES = {"f32": ("D[o] = bitcast<u32>(r);", 1), "u32": ("D[o] = r;", 1), "i32": ("D[o] = bitcast<u32>(r);", 1),
          "bool": ("D[o] = u32(r);", 1), "v2": ("D[o] = r.x; D[o + 1u] = r.y;", 2)}


def run(context: Any, library: str, call: str, result: str, args: Sequence[tuple[str, np.ndarray]]) -> np.ndarray:
    """`call` (over x, y, z: the arguments, of the kinds given) for every element of the arguments' arrays (words,
    one row per element), in one dispatch; the results as words (one row per element)."""
    count = len(args[0][1])
    lines, words, at = [], [], 0
    for name, (kind, data) in zip("xyz", args, strict=False):
        load, width = LOADS[kind]
        lines.append(f"    let {name} = {load.format(at=f'{at}u + {width}u * i')};")
        words.append(np.asarray(data, np.uint32).reshape(count, width).reshape(-1))
        at += count * width
    store, width = STORES[result]
    source = (f"@group(0) @binding(0) var<storage, read_write> D: array<u32>;\n"
              f"@group(0) @binding(1) var<storage, read> P: array<u32>;\n{library}\n"
              f"@compute @workgroup_size(256)\n"
              f"fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n"
              f"    let i = gid.x + gid.y * groups.x * 256u;\n"
              f"    if (i >= {count}u) {{ return; }}\n" + "\n".join(lines) + "\n"
              f"    let r = {call};\n    let o = {at}u + {width}u * i;\n    {store}\n}}\n")
    data = np.concatenate([*words, np.zeros(count * width, np.uint32)])
    buffer = context.create_buffer(data)
    recorder = Recorder(context)
    recorder.dispatch(source, [buffer.handle], np.zeros(2, np.uint32), group_counts(count))
    recorder.submit()
    return buffer.read(np.uint32)[at:].reshape(count, width)


# -- float32 ------------------------------------------------------------------------------------------------------

def float_sample(per_binade: int, seed: int) -> np.ndarray:
    """Both signs x every exponent x (the binade's first, second and last mantissa, and random ones)."""
    rng = np.random.default_rng(seed)
    mantissas = rng.integers(0, 1 << 23, (2, 256, per_binade), dtype=np.uint32)
    mantissas[..., :3] = [0, 1, (1 << 23) - 1]
    signs = np.arange(2, dtype=np.uint32)[:, None, None] << 31
    exponents = np.arange(256, dtype=np.uint32)[None, :, None] << 23
    return (signs | exponents | mantissas).reshape(-1).view(np.float32)


def machin_pi(bits: int) -> int:
    """pi * 2^bits, rounded down (Machin's formula in integers)."""
    def arctan_inverse(x: int) -> int:
        total = term = (1 << (bits + 16)) // x
        k, sign = 1, -1
        while term:
            term //= x * x
            total += sign * (term // (2 * k + 1))
            sign, k = -sign, k + 1
        return total
    return (4 * (4 * arctan_inverse(5) - arctan_inverse(239))) >> 16


def near_half_pi_multiples(count: int, seed: int) -> np.ndarray:
    """float32 values nearest to k pi/2 for k drawn over every binade up to float32's largest (where the reduction
    cancels most)."""
    rng = np.random.default_rng(seed)
    half_pi = machin_pi(300) >> 1
    values = []
    for exponent in rng.integers(0, 128, count):
        k = int(rng.integers(1 << 20, 1 << 21)) << max(int(exponent) - 20, 0) >> max(20 - int(exponent), 0)
        k = max(k, 1)
        target = k * half_pi                                     # k pi/2 2^300
        lead = target.bit_length() - 24
        mantissa = (target + (1 << (lead - 1))) >> lead          # 24 bits (25 where it rounds up to a power of 2)
        value = math.ldexp(mantissa, lead - 300)
        if value < 3.4e38:
            values.append(value)
    return np.array(values, np.float32)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-45,
                     -1e-45, 3.4028235e38, -3.4028235e38, 1.1754944e-38, 0.3, -2.5, 1e30, 88.72, -103.9, 89.4],
                    np.float32)


def order_key(values: np.ndarray) -> np.ndarray:
    bits = values.view(np.uint32).astype(np.int64)
    return np.where(bits >= 1 << 31, -(bits & 0x7FFFFFFF), bits)


def ulp_distance(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Steps between float32 values in bit order (-0 and +0 apart by one); 0 where both are NaN, inf where one is."""
    distance = np.abs(order_key(got) - order_key(expected)).astype(np.float64)
    got_nan, expected_nan = np.isnan(got), np.isnan(expected)
    distance[got_nan & expected_nan] = 0
    distance[got_nan ^ expected_nan] = np.inf
    return distance


def round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


ERF = np.frompyfunc(math.erf, 1, 1)

#: name -> (float64 reference, ulp bound).
UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int]] = {
    "sqrt": (np.sqrt, 4), "exp": (np.exp, 4), "log": (np.log, 4), "sin": (np.sin, 4), "cos": (np.cos, 4),
    "tan": (np.tan, 4), "asin": (np.arcsin, 4), "acos": (np.arccos, 4), "atan": (np.arctan, 4),
    "sinh": (np.sinh, 4), "cosh": (np.cosh, 4), "tanh": (np.tanh, 4), "asinh": (np.arcsinh, 4),
    "acosh": (np.arccosh, 4), "atanh": (np.arctanh, 4), "erf": (lambda x: ERF(x).astype(np.float64), 4),
    "expm1": (np.expm1, 4), "log1p": (np.log1p, 4),
    "floor": (np.floor, 0), "ceil": (np.ceil, 0), "trunc": (np.trunc, 0), "round_even": (np.rint, 0),
    "round_away": (round_away, 0), "sign": (lambda x: np.where((x == 0) | np.isnan(x), 0.0, np.sign(x)), 0),
}


def check_floats(got: np.ndarray, expected: np.ndarray, bound: int, inputs: Sequence[np.ndarray]) -> None:
    distance = ulp_distance(got, expected)
    worst = int(np.argmax(distance))
    assert distance[worst] <= bound, (f"{distance[worst]} ulp at {[value[worst] for value in inputs]}: got "
                                      f"{got[worst]!r}, expected {expected[worst]!r}")


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(context: Any, name: str) -> None:
    x = np.concatenate([float_sample(192, seed=1), SPECIALS])
    if name in ("sin", "cos", "tan"):
        x = np.concatenate([x, near_half_pi_multiples(2000, seed=2)])
    reference, bound = UNARY[name]
    got = run(context, MATH, f"m_{name}(x)", "f32", [("f32", x.view(np.uint32))]).view(np.float32)[:, 0]
    with np.errstate(all="ignore"):
        expected = reference(x.astype(np.float64)).astype(np.float32)
    check_floats(got, expected, bound, [x])


@pytest.mark.parametrize("name", ["isnan", "isinf"])
def test_classification(context: Any, name: str) -> None:
    x = np.concatenate([float_sample(32, seed=3), SPECIALS])
    got = run(context, MATH, f"m_{name}(x)", "bool", [("f32", x.view(np.uint32))])[:, 0]
    np.testing.assert_array_equal(got, getattr(np, name)(x).astype(np.uint32))


def mod_floor_float32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's float % in float32: fmod (exact), plus b where the signs differ (one float32 addition); a zero
    result has b's sign."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    r = np.fmod(a, b)
    r = np.where((r != 0) & (np.signbit(r) != np.signbit(b)), r + b, r)
    return np.where(r == 0, np.copysign(np.float32(0), b), r)


def nan_propagating(function: Callable[[np.ndarray, np.ndarray], np.ndarray]
                    ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, function(a, b))


BINARY: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], int]] = {
    "atan2": (np.arctan2, 4), "pow": (np.power, 4), "fmod": (np.fmod, 0), "mod_floor": (mod_floor_float32, 0),
    "minimum": (nan_propagating(np.minimum), 0), "maximum": (nan_propagating(np.maximum), 0),
}


def float_pairs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = float_sample(96, seed=seed)
    special_x, special_y = (grid.reshape(-1) for grid in np.meshgrid(SPECIALS, SPECIALS))
    near_one = (1 + rng.uniform(-0.01, 0.01, 10000)).astype(np.float32)
    integral_x = float_sample(8, seed=seed + 1)
    close = rng.uniform(-1e3, 1e3, 10000).astype(np.float32)
    return (np.concatenate([x, special_x, near_one, integral_x, close]),
            np.concatenate([rng.permutation(x), special_y, rng.uniform(-20000, 20000, 10000).astype(np.float32),
                            rng.integers(-200, 200, integral_x.size).astype(np.float32), close[::-1] / 7]))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(context: Any, name: str) -> None:
    x, y = float_pairs(seed=4)
    reference, bound = BINARY[name]
    got = run(context, MATH, f"m_{name}(x, y)", "f32", [("f32", x.view(np.uint32)), ("f32", y.view(np.uint32))]
              ).view(np.float32)[:, 0]
    with np.errstate(all="ignore"):
        expected = reference(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    if name in ("minimum", "maximum"):
        assert (got.view(np.uint32)[np.isnan(got)] == 0x7FC00000).all()      # the canonical quiet NaN
        assert np.array_equal(got.view(np.uint32)[got == 0], expected.view(np.uint32)[got == 0])  # NumPy's zero
    check_floats(got, expected, bound, [x, y])


def test_special_values(context: Any) -> None:
    """C99's values where the sample's comparison with NumPy could not tell: signed zeros and exact results."""
    inf, pi = math.inf, math.pi
    cases = [("m_sqrt(x)", -0.0, 0.0, -0.0), ("m_sin(x)", -0.0, 0.0, -0.0), ("m_tan(x)", -0.0, 0.0, -0.0),
             ("m_tanh(x)", -0.0, 0.0, -0.0), ("m_log(x)", -0.0, 0.0, -inf), ("m_atanh(x)", -1.0, 0.0, -inf),
             ("m_atan2(x, y)", 0.0, -0.0, pi), ("m_atan2(x, y)", -0.0, -1.0, -pi),
             ("m_atan2(x, y)", inf, -inf, 3 * pi / 4), ("m_pow(x, y)", -0.0, -3.0, -inf),
             ("m_pow(x, y)", -0.0, -2.0, inf), ("m_pow(x, y)", math.nan, 0.0, 1.0), ("m_pow(x, y)", 1.0, math.nan, 1.0),
             ("m_pow(x, y)", -1.0, inf, 1.0), ("m_pow(x, y)", -inf, 3.0, -inf), ("m_pow(x, y)", -8.0, 1 / 3, math.nan),
             ("m_fmod(x, y)", -0.0, 5.0, -0.0), ("m_mod_floor(x, y)", 3.0, -3.0, -0.0),
             ("m_mod_floor(x, y)", -1.0, inf, inf), ("m_sign(x)", -0.0, 0.0, 0.0), ("m_round_even(x)", -0.5, 0.0, -0.0),
             ("m_round_away(x)", -2.5, 0.0, -3.0), ("m_floor(x)", -1e-45, 0.0, -1.0), ("m_ceil(x)", 1e-45, 0.0, 1.0),
             # e^-100 = 26.55 x 2^-149; 2 / sqrt(pi) x 2^-149 rounds to 2^-149.
             ("m_exp(x)", -100.0, 0.0, math.ldexp(27, -149)), ("m_erf(x)", 1e-45, 0.0, math.ldexp(1, -149))]
    for call, a, b, expected in cases:
        got = run(context, MATH, call, "f32", [("f32", np.array([a], np.float32).view(np.uint32)),
                                               ("f32", np.array([b], np.float32).view(np.uint32))]).view(np.float32)
        want = np.array([expected], np.float32)
        assert ulp_distance(got[:, 0], want)[0] == 0, (call, a, b, got[0, 0], want[0])


# -- int64.wgsl -------------------------------------------------------------------------------------------------------

def as_words(values: Sequence[int]) -> np.ndarray:
    return np.array([[v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF] for v in values], np.uint32)


def from_words(words: np.ndarray, signed: bool) -> list[int]:
    values = [int(low) | (int(high) << 32) for low, high in words]
    return [v - (1 << 64) if signed and v >= 1 << 63 else v for v in values]


def signed(v: int) -> int:
    v &= MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


EDGES = [0, 1, -1, 2, -2, 3, 7, -7, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, (1 << 32) + 1, -(1 << 32),
         (1 << 63) - 1, -(1 << 63), -(1 << 63) + 1, 63, 64, 65, 31, 32, 33, 1 << 62, -(1 << 62)]


def int64_pairs(seed: int) -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(seed)
    a = [x for x in EDGES for _ in EDGES]
    b = [y for _ in EDGES for y in EDGES]
    for _ in range(3000):
        bits_a, bits_b = (int(v) for v in rng.integers(1, 65, 2))
        a.append(signed(int(rng.integers(0, 1 << 62)) * 4 + int(rng.integers(0, 4)) >> (64 - bits_a)))
        b.append(signed(int(rng.integers(0, 1 << 62)) * 4 + int(rng.integers(0, 4)) >> (64 - bits_b)) or 1)
        if rng.random() < 0.5:
            a[-1], b[-1] = -a[-1], -b[-1]
    return [signed(v) for v in a], [signed(v) for v in b]


def trunc_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a - trunc_div(a, b) * b


def nearest_f32(v: int) -> float:
    """The float32 nearest to an integer (ties to even), exactly."""
    m = abs(v)
    shift = max(m.bit_length() - 24, 0)
    q, rest = divmod(m, 1 << shift)
    if shift and (rest > 1 << (shift - 1) or (rest == 1 << (shift - 1) and q & 1)):
        q += 1
    return math.copysign(float(q << shift), v)


def u(v: int) -> int:
    return v & MASK64


#: name -> (signed operands?, the Python result (wrapped to 64 bits by the comparison)).
INT64_BINARY: dict[str, tuple[bool, Callable[[int, int], int]]] = {
    "i64_add": (True, lambda a, b: a + b), "i64_sub": (True, lambda a, b: a - b),
    "i64_mul": (True, lambda a, b: a * b), "i64_div_trunc": (True, trunc_div), "i64_mod_trunc": (True, trunc_mod),
    "i64_mod_floor": (True, lambda a, b: 0 if b == 0 else a % b),
    "u64_div": (False, lambda a, b: 0 if b == 0 else a // b), "u64_mod": (False, lambda a, b: 0 if b == 0 else a % b),
    "i64_and": (True, lambda a, b: a & b), "i64_or": (True, lambda a, b: a | b), "i64_xor": (True, lambda a, b: a ^ b),
    "i64_min": (True, min), "i64_max": (True, max), "u64_min": (False, min), "u64_max": (False, max),
    "i64_pow": (True, lambda a, b: pow(a, b, 1 << 64) if b >= 0 else {1: 1, -1: (-1) ** (b % 2)}.get(a, 0)),
    "u64_pow": (False, lambda a, b: pow(a, b, 1 << 64)),
    "i64_shl": (False, lambda a, b: a << b if b < 64 else 0),
    "u64_shr": (False, lambda a, b: a >> b if b < 64 else 0),
    "i64_shr": (True, lambda a, b: a >> b if 0 <= b < 64 else 0),
}
INT64_COMPARISONS: dict[str, tuple[bool, Callable[[int, int], bool]]] = {
    "i64_eq": (True, lambda a, b: a == b), "i64_lt": (True, lambda a, b: a < b), "i64_le": (True, lambda a, b: a <= b),
    "u64_lt": (False, lambda a, b: a < b), "u64_le": (False, lambda a, b: a <= b),
}
INT64_UNARY: dict[str, tuple[bool, Callable[[int], int]]] = {
    "i64_neg": (True, lambda a: -a), "i64_abs": (True, abs), "i64_not": (True, lambda a: ~a),
    "i64_popcount": (False, lambda a: bin(a).count("1")), "i64_sign": (True, lambda a: (a > 0) - (a < 0)),
    "u64_sign": (False, lambda a: int(a != 0)),
}


def shift_counts(b: list[int]) -> list[int]:
    """Counts for the shifts: the pairs' b, mostly reduced below 70 so that every count below 64 is met."""
    return [v if i % 4 == 0 else abs(v) % 70 for i, v in enumerate(b)]


@pytest.mark.parametrize("name", list(INT64_BINARY))
def test_int64_binary(context: Any, name: str) -> None:
    a, b = int64_pairs(seed=5)
    if "sh" in name:
        b = shift_counts(b)
    is_signed, reference = INT64_BINARY[name]
    if not is_signed:
        a, b = [u(v) for v in a], [u(v) for v in b]
    got = run(context, INT64, f"{name}(x, y)", "v2", [("v2", as_words(a)), ("v2", as_words(b))])
    expected = [u(reference(x, y)) for x, y in zip(a, b, strict=True)]
    wrong = [(x, y, g, e) for x, y, g, e in zip(a, b, from_words(got, False), expected, strict=True) if g != e]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("name", list(INT64_COMPARISONS))
def test_int64_comparisons(context: Any, name: str) -> None:
    a, b = int64_pairs(seed=6)
    b = [x if i % 3 == 0 else y for i, (x, y) in enumerate(zip(a, b, strict=True))]     # equal pairs too
    is_signed, reference = INT64_COMPARISONS[name]
    if not is_signed:
        a, b = [u(v) for v in a], [u(v) for v in b]
    got = run(context, INT64, f"{name}(x, y)", "bool", [("v2", as_words(a)), ("v2", as_words(b))])[:, 0]
    assert got.tolist() == [int(reference(x, y)) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("name", list(INT64_UNARY))
def test_int64_unary(context: Any, name: str) -> None:
    a, _ = int64_pairs(seed=7)
    is_signed, reference = INT64_UNARY[name]
    if not is_signed:
        a = [u(v) for v in a]
    got = run(context, INT64, f"{name}(x)", "v2", [("v2", as_words(a))])
    assert from_words(got, False) == [u(reference(x)) for x in a]


def test_int64_to_float(context: Any) -> None:
    a, b = int64_pairs(seed=8)
    halfway = [(1 << 40) + (1 << 16), (1 << 40) + (3 << 16), (1 << 63) - 1, (1 << 24) + 1, (1 << 24) + 3]
    values = a + b + halfway + [-v for v in halfway]
    for name, operands in (("i64_to_f32", values), ("u64_to_f32", [u(v) for v in values])):
        got = run(context, INT64, f"{name}(x)", "f32", [("v2", as_words(operands))]).view(np.float32)[:, 0]
        expected = np.array([nearest_f32(v) for v in operands], np.float32)
        assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist(), name


def test_float_to_int64_saturate(context: Any) -> None:
    x = np.concatenate([float_sample(16, seed=9), SPECIALS,
                        np.array([2.0**63, -2.0**63, 2.0**64, 2.0**63 * 0.9999999, -0.9, 0.9], np.float32)])
    for name, low, high in (("f32_to_i64_saturate", -(1 << 63), (1 << 63) - 1), ("f32_to_u64_saturate", 0, MASK64)):
        got = from_words(run(context, INT64, f"{name}(x)", "v2", [("f32", x.view(np.uint32))]), signed=low < 0)
        expected = [0 if math.isnan(v) else min(max(int(v) if math.isfinite(v) else int(math.copysign(1 << 70, v)),
                                                     low), high) for v in x.tolist()]
        assert got == expected, name


def test_int32_helpers(context: Any) -> None:
    rng = np.random.default_rng(10)
    edges = [0, 1, -1, 2, -2, 7, -7, 127, -128, 255, 32767, -32768, 65535, 2**31 - 1, -2**31, 31, 32, 33, 8, 16]
    a = [x for x in edges for _ in edges] + rng.integers(-2**31, 2**31, 2000).tolist()
    b = ([y for _ in edges for y in edges] + rng.integers(-40, 40, 1000).tolist()
         + rng.integers(-2**31, 2**31, 1000).tolist())

    def call(expression: str, result: str, x: list[int], y: list[int], kind: str = "i32") -> list[int]:
        words = [np.array(v, np.int64).astype(np.uint32) for v in (x, y)]
        got = run(context, INT64, expression, result, [(kind, words[0]), (kind, words[1])])[:, 0]
        return [int(v) - (1 << 32) if result == "i32" and v >= 1 << 31 else int(v) for v in got]

    def wrap32(v: int) -> int:
        return signed(v) if -(1 << 31) <= v < 1 << 31 else (v + (1 << 31)) % (1 << 32) - (1 << 31)

    assert call("i32_div(x, y)", "i32", a, b) == [wrap32(trunc_div(x, y)) for x, y in zip(a, b, strict=True)]
    assert call("i32_mod(x, y)", "i32", a, b) == [trunc_mod(x, y) for x, y in zip(a, b, strict=True)]
    assert call("i32_mod_floor(x, y)", "i32", a, b) == [0 if y == 0 else x % y for x, y in zip(a, b, strict=True)]
    ua, ub = [x & 0xFFFFFFFF for x in a], [y & 0xFFFFFFFF for y in b]
    assert call("u32_div(x, y)", "u32", ua, ub, "u32") == [0 if y == 0 else x // y for x, y in zip(ua, ub, strict=True)]
    assert call("u32_mod(x, y)", "u32", ua, ub, "u32") == [0 if y == 0 else x % y for x, y in zip(ua, ub, strict=True)]
    for width in (8, 16, 32):
        low, span = -(1 << (width - 1)), 1 << width
        sa = [(x - low) % span + low for x in a]                  # values of the signed type (sign-extended)
        counts = [y % 40 if i % 3 else y for i, y in enumerate(b)]
        shl = call(f"i32_shl(x, y, {width}u)", "i32", sa, counts)
        assert [(v - low) % span + low for v in shl] == [
            0 if not 0 <= n < width else ((x << n) - low) % span + low for x, n in zip(sa, counts, strict=True)]
        assert call(f"i32_shr(x, y, {width}u)", "i32", sa, counts) == [
            0 if not 0 <= n < width else x >> n for x, n in zip(sa, counts, strict=True)]
        ua_w, un = [x % span for x in a], [n & 0xFFFFFFFF for n in counts]
        assert [v % span for v in call(f"u32_shl(x, y, {width}u)", "u32", ua_w, un, "u32")] == [
            0 if n >= width else (x << n) % span for x, n in zip(ua_w, un, strict=True)]
        assert call(f"u32_shr(x, y, {width}u)", "u32", ua_w, un, "u32") == [
            0 if n >= width else x >> n for x, n in zip(ua_w, un, strict=True)]
        assert call(f"u32_popcount(x, {width}u)", "u32", ua, ub, "u32") == [bin(x % span).count("1") for x in ua]


# -- the element-wise engine's use of them ----------------------------------------------------------------------------

def test_float64_arithmetic_is_refused(context: Any) -> None:
    """WGSL has no f64: FLOAT64 is moved (IDENTITY, here bit for bit, subnormals and NaN payloads included), and
    float64 arithmetic (IDENTITY's ScaleBias) is refused by name."""
    device = dml.Device(backend="gpu")
    tensor = dml.TensorDesc("FLOAT64", [4])
    values = np.array([1.5, -np.inf, 1e-310, 0.0]).view(np.uint64)
    values[3] = 0x7FF0000000000123                                   # a signaling NaN's payload
    identity = device.compile_operator(device.create_operator(dml.ElementWiseIdentityOperatorDesc(tensor, tensor)))
    (got,) = identity(values.view(np.float64))
    assert got.view(np.uint64).tolist() == values.tolist()
    scaled = dml.ElementWiseIdentityOperatorDesc(tensor, tensor, scale_bias=dml.ScaleBias(2.0, 1.0))
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_ELEMENT_WISE_IDENTITY: ScaleBias on FLOAT64 "
                                                   r"InputTensor needs float64 arithmetic, which the gpu backend "
                                                   r"does not have"):
        device.compile_operator(device.create_operator(scaled))
