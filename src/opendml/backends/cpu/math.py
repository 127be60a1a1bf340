"""The numba math library of the element-wise engine's cpu kernels (issue 26): one function `m_<primitive>` per
primitive of the formula language (ENGINE.md's table), for the kernels that the numba renderer writes. Each is typed
by the arguments numba sees: float32 (the compute float of FLOAT32 and FLOAT16 tensors), float64 (FLOAT64 tensors)
and, where the primitive has integer semantics, every integer type int8..int64, uint8..uint64, computed in the
argument's own type (an integer result has the type of the first argument). Arguments of a binary primitive share
one type: a float32 mixed with a float64 is a typing error (so a formula can never widen to float64 by accident);
an integer second argument is converted to the first one's type. The primitives that need the output type take a
value of that type as `like`: `m_saturate(v, np.int8(0))`, `m_to_float(i, np.float32(0))`,
`m_canonical_nan(np.float32(0))`.

Every function is inlined into its caller by LLVM (the float ones' implementations are marked alwaysinline) and
compiles to branch-free code: the vectorizable ones (exp, expm1, log, log1p, erf, pow, tanh, sigmoid, softplus,
gelu, the roundings, sqrt, abs, minimum, maximum, sign, isnan, isinf, div) have no call left that LLVM cannot turn
into vector code, so that an element-wise loop over them runs at memory speed. Divisions go through LLVM's own
instructions (`fdiv`, `sdiv`, ...), never numba's `/` or `//`, so that neither the caller's error model nor Python's
floor semantics reach them. The float32 polynomials keep their fused multiply-adds in kernels compiled without
fastmath (`_contracted`). tanh, sigmoid and gelu are the activations' tuned formulas (cpu/activations.py); the other
float32 transcendental functions (sin, cos, tan, the inverse ones, sinh, cosh, atan2) call libm's float32 functions
(accurate, scalar).

Accuracy, measured by tests/test_cpu_math.py against float64 results rounded to float32 over every exponent,
subnormals and C99's special values: within 4 ulp (most within 1 or 2); floor, ceil, trunc, the roundings, sqrt,
abs, sign, div, the moduli, minimum and maximum are exact. The float32 polynomials:
- exp (`exp_f32`): x = k ln2 + r, degree-7 Taylor polynomial of e^r, times 2^k in two exponent-built factors
  (subnormal and near-overflow results rounded once);
- log (`log_f32`): x = 2^e m, m in [sqrt(1/2), sqrt 2), log(1 + f) = f - f^2 / 2 + f^3 P(f) with Cephes' logf
  polynomial, e ln2 added in two parts;
- erf (`erf_f32`): |x| < 0.875: x + x A(x^2); up to 4: 1 - exp(B(|x|) - x^2), erf rounding to 1 beyond (A and B
  fitted by tools/fit_erf.py);
- pow (`pow_f32`): 2^(y log2 |x|) computed in float64 (log2 from the atanh series, 2^r by its Taylor polynomial),
  rounded once to float32, with C99's special cases and the sign of negative bases raised to odd integers.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

from .. import activation_constants as C

F32 = np.float32
F64 = np.float64
_unliteral: Any = types.unliteral
# The polynomials' own fastmath: contraction into FMA only (a caller's flags apply where they are inlined; the
# engine's loops must not reassociate, as the activations' may not).
_FASTMATH = {"contract"}

# -- float32 constants: globals of type float32, so that no Python float widens a float32 computation -------------
_ZERO, _ONE, _TWO, _HALF = F32(0.0), F32(1.0), F32(2.0), F32(0.5)
_INF = F32(np.inf)
_SQRT2 = F32(1.4142135623730951)
_LOG2E, _LN2_HI, _LN2_LO, _LN2, _EXP_LOW, _EXP_HIGH = (C.LOG2E, C.LN2_HI, C.LN2_LO, C.LN2, C.EXP_LOW, C.EXP_HIGH)
(_R2, _R3, _R4, _R5, _R6, _R7, _R8) = (C.R2, C.R3, C.R4, C.R5, C.R6, C.R7, C.R8)
(_O3, _O5, _O7, _O9, _O11) = (C.O3, C.O5, C.O7, C.O9, C.O11)

#: float32's smallest normal number, and 2^23 that scales a subnormal into the normal range.
_MIN_NORMAL = F32(2.0**-126)
_TWO23 = F32(2.0**23)
_MANTISSA32, _ONE_BITS32 = np.int32(0x007FFFFF), np.int32(0x3F800000)
#: Cephes' logf: log(1 + f) = f - f^2 / 2 + f^3 P(f) for m = 1 + f in [sqrt(1/2), sqrt 2).
(_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8) = (F32(c) for c in (
    3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1, -1.2420140846e-1,
    1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2))
#: erf: below _ERF_SPLIT, erf(a) = a + a A(a^2); from there to _ERF_CLAMP, 1 - exp(B(a) - a^2) (tools/fit_erf.py).
_ERF_SPLIT, _ERF_CLAMP = F32(0.875), F32(4.0)
(_A0, _A1, _A2, _A3, _A4, _A5) = (F32(c) for c in (
    0.12837915122509003, -0.376125305891037, 0.11282244324684143, -0.02678397111594677, 0.005021334625780582,
    -0.0006148254033178091))
(_B0, _B1, _B2, _B3, _B4, _B5, _B6) = (F32(c) for c in (
    -0.00014420469233300537, -1.1278893947601318, 0.36317935585975647, -0.10425020754337311, 0.02238103188574314,
    -0.003081996226683259, 0.00019990139116998762))

# pow's float64 part: log2 m = t (2 / ln 2) (1 + t^2 / 3 + ... + t^12 / 13), t = (m - 1) / (m + 1), |t| <= 0.172
# (truncation under 2^-40 relative); 2^r for |r| <= 1/2 by the Taylor polynomial of e^(r ln 2) to degree 9
# (under 2^-37); y log2 |x| is clamped to [-160, 130], beyond float32's range either way.
_D_ONE, _D_HALF = F64(1.0), F64(0.5)
_D_SQRT2 = F64(math.sqrt(2.0))
_D_MANTISSA, _D_ONE_BITS = np.int64(0x000FFFFFFFFFFFFF), np.int64(0x3FF0000000000000)
(_G1, _G3, _G5, _G7, _G9, _G11, _G13) = (F64(2.0 / math.log(2.0) / n) for n in (1, 3, 5, 7, 9, 11, 13))
(_E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9) = (F64(math.log(2.0)**n / math.factorial(n)) for n in range(1, 10))
_D_LOW, _D_HIGH = F64(-160.0), F64(130.0)
(_X1, _X2, _X3, _X4, _X5, _X6, _X7) = (F32(math.log(2.0)**n / math.factorial(n)) for n in range(1, 8))
_D_INF = F64(np.inf)


def _overload(function: Any) -> Callable[[Callable[..., Any]], Any]:
    """numba's overload; the implementations' parameters are those of the typing function without its annotations
    (not strict). Each implementation compiles on its own and LLVM inlines it (numba's own IR inlining of these
    small branch-free functions gains nothing, and warns about the conditional expressions' merged variables)."""
    return overload(function, strict=False, jit_options={"error_model": "numpy"})


# -- LLVM instructions and intrinsics, typed as their operands ------------------------------------------------------

def _float_intrinsic(name: str, arity: int) -> Any:
    """llvm.<name>.f32 / .f64 on `arity` arguments of one float type, as a numba intrinsic."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        kind = args[0].type
        suffix = "f32" if isinstance(kind, ir.FloatType) else "f64"
        function = builder.module.declare_intrinsic(f"llvm.{name}.{suffix}",
                                                    fnty=ir.FunctionType(kind, [kind] * arity))
        return builder.call(function, list(args))

    def unary(typingctx: Any, x: Any) -> Any:
        return (x(x), codegen) if isinstance(x, types.Float) else None

    def binary(typingctx: Any, x: Any, y: Any) -> Any:
        return (x(x, y), codegen) if isinstance(x, types.Float) and x == y else None

    typer = unary if arity == 1 else binary
    typer.__name__ = typer.__qualname__ = f"llvm_{name}"
    return intrinsic(typer)


def _instruction(name: str, kind: Any) -> Any:
    """The LLVM instruction `name` (an IRBuilder method: fdiv, frem, sdiv, udiv, srem, urem, shl, ashr, lshr) on two
    arguments of one numba type of class `kind` (types.Float or types.Integer)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return getattr(builder, name)(args[0], args[1])

    def typer(typingctx: Any, x: Any, y: Any) -> Any:
        if isinstance(x, kind) and not isinstance(x, types.Literal) and x == y:
            return x(x, y), codegen
        return None

    typer.__name__ = typer.__qualname__ = f"llvm_{name}"
    return intrinsic(typer)


def _ctpop_typer(typingctx: Any, x: Any) -> Any:
    if not isinstance(x, types.Integer) or isinstance(x, types.Literal):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return x(x), codegen


_fdiv, _frem = _instruction("fdiv", types.Float), _instruction("frem", types.Float)
_sdiv, _udiv = _instruction("sdiv", types.Integer), _instruction("udiv", types.Integer)
_srem, _urem = _instruction("srem", types.Integer), _instruction("urem", types.Integer)
_shl, _ashr, _lshr = (_instruction(name, types.Integer) for name in ("shl", "ashr", "lshr"))
_ctpop: Any = intrinsic(_ctpop_typer)
_round_away, _sqrt = _float_intrinsic("round", 1), _float_intrinsic("sqrt", 1)
_copysign = _float_intrinsic("copysign", 2)


# -- vectorizable float32 elementary functions (the activations use exp_f32, expm1_f32 and log1p_unit_f32 too) -------

@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def exp_f32(v: Any) -> Any:
    """exp(v): v = k ln2 + r, |r| <= ln2 / 2, degree-7 Taylor polynomial (relative error < 1e-8), times 2^k as two
    factors 2^(k//2) and 2^(k - k//2) built in the exponent bits, so that subnormal results and results near
    FLOAT32's maximum come out right."""
    c = v if v > _EXP_LOW else _EXP_LOW
    c = c if c < _EXP_HIGH else _EXP_HIGH
    k = np.floor(c * _LOG2E + _HALF)
    r = (c - k * _LN2_HI) - k * _LN2_LO
    p = _ONE + r * (_ONE + r * (_R2 + r * (_R3 + r * (_R4 + r * (_R5 + r * (_R6 + r * _R7))))))
    ki = np.int32(k)
    k1 = ki >> 1
    k2 = ki - k1
    s1 = np.int32((k1 + 127) << 23).view(np.float32)
    s2 = np.int32((k2 + 127) << 23).view(np.float32)
    result = (p * s1) * s2
    result = _ZERO if v < _EXP_LOW else result
    return v if v != v else result


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def expm1_f32(v: Any) -> Any:
    """exp(v) - 1 without cancellation near 0: degree-8 Taylor polynomial for |v| < 0.5."""
    small = v * (_ONE + v * (_R2 + v * (_R3 + v * (_R4 + v * (_R5 + v * (_R6 + v * (_R7 + v * _R8)))))))
    large = exp_f32(v) - _ONE
    return small if abs(v) < _HALF else large


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def log1p_unit_f32(u: Any) -> Any:
    """log(1 + u) for 0 <= u <= 1: w = 1 + u = 2^e m, log m = 2 atanh((m - 1) / (m + 1)) (series to s^11), and
    the factor u / (w - 1) that restores what rounding 1 + u lost."""
    w = _ONE + u
    big = w > _SQRT2
    m = w * _HALF if big else w
    s = (m - _ONE) / (m + _ONE)
    s2 = s * s
    series = _ONE + s2 * (_O3 + s2 * (_O5 + s2 * (_O7 + s2 * (_O9 + s2 * _O11))))
    log_w = _TWO * s * series + (_LN2 if big else _ZERO)
    d = w - _ONE
    return u if d == _ZERO else log_w * (u / d)


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def log_f32(x: Any) -> Any:
    """log(x): x = 2^e m (a subnormal x scaled by 2^23 first), m in [sqrt(1/2), sqrt 2), f = m - 1 (exact),
    log m = f - f^2 / 2 + f^3 P(f) (Cephes' logf), e ln2 added as e LN2_LO + e LN2_HI (exact product) last.
    log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN."""
    tiny = x < _MIN_NORMAL
    bits = np.float32(x * _TWO23 if tiny else x).view(np.int32)  # numba views only a conversion's result
    m = np.int32((bits & _MANTISSA32) | _ONE_BITS32).view(np.float32)
    big = m > _SQRT2
    m = m * _HALF if big else m
    bias = 150 if tiny else 127
    bias = bias - 1 if big else bias
    fe = np.float32((bits >> 23) - bias)
    f = m - _ONE
    z = f * f
    p = _L0 + f * (_L1 + f * (_L2 + f * (_L3 + f * (_L4 + f * (_L5 + f * (_L6 + f * (_L7 + f * _L8)))))))
    y = (f * z) * p + fe * _LN2_LO
    y = y - _HALF * z
    r = (f + y) + fe * _LN2_HI
    r = -_INF if x == _ZERO else r
    r = np.float32(np.nan) if x < _ZERO else r
    return r if x < _INF else x


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def log1p_f32(x: Any) -> Any:
    """log(1 + x) = log(w) x / (w - 1), w = 1 + x rounded: the factor restores what the rounding lost (x where
    w - 1 is 0)."""
    w = _ONE + x
    d = w - _ONE
    r = log_f32(w) * _fdiv(x, d)
    r = x if d == _ZERO else r
    return x if x == _INF else r


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def _exp_normal(q: Any) -> Any:
    """exp(q) for -87 <= q <= 88 (a normal result): exp_f32's reduction and polynomial, one scale factor, no
    clamps."""
    k = np.rint(q * _LOG2E)
    r = (q - k * _LN2_HI) - k * _LN2_LO
    p = _ONE + r * (_ONE + r * (_R2 + r * (_R3 + r * (_R4 + r * (_R5 + r * (_R6 + r * _R7))))))
    return p * np.int32((np.int32(k) + 127) << 23).view(np.float32)


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def erf_f32(x: Any) -> Any:
    """erf(x): a = |x|; a < 0.875: a + a A(a^2); else 1 - exp(B(a) - a^2) with a clamped to 4 (erf rounds to 1
    from about 3.84 on); x's sign last. Both pieces are computed and one selected (no branch)."""
    a = abs(x)
    t = a * a
    small = a + a * (_A0 + t * (_A1 + t * (_A2 + t * (_A3 + t * (_A4 + t * _A5)))))
    c = a if a < _ERF_CLAMP else _ERF_CLAMP
    q = (_B0 + c * (_B1 + c * (_B2 + c * (_B3 + c * (_B4 + c * (_B5 + c * _B6)))))) - c * c
    large = _ONE - _exp_normal(q)
    r = _copysign(small if a < _ERF_SPLIT else large, x)
    return x if x != x else r


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def pow_f32(x: Any, y: Any) -> Any:
    """x^y as C99's powf: 2^(y log2 |x|), the logarithm and the product in float64 (relative error about 2^-40),
    2^r (|r| <= 1/2) by its float32 Taylor polynomial times 2^k in two exponent-built factors (within 2 ulp, a
    subnormal result rounded once); negated for a negative x (or -0) and an odd integer y; 1 where y is +-0, x is
    1, or x is -1 and y infinite (even for NaN); NaN for a NaN, or a finite x < 0 with a finite non-integer y.

    |x| = 2^e m is split in float32 (a subnormal scaled by 2^23 first), m in [sqrt(1/2), sqrt 2); log2 m =
    t (2 / ln 2) (1 + t^2 / 3 + ...), t = (m - 1) / (m + 1) from a float32 division refined by a float64 Newton
    step: the float64 work is what the precision needs, no more (it runs at half float32's vector width)."""
    a = abs(x)
    tiny = a < _MIN_NORMAL
    bits = np.float32(a * _TWO23 if tiny else a).view(np.int32)
    m32 = np.int32((bits & _MANTISSA32) | _ONE_BITS32).view(np.float32)
    big = m32 > _SQRT2
    m32 = m32 * _HALF if big else m32
    bias = 150 if tiny else 127
    bias = bias - 1 if big else bias
    e = np.float64(np.int32((bits >> 23) - bias))
    inv = np.float64(_fdiv(_ONE, m32 + _ONE))
    m = np.float64(m32)
    num, den = m - _D_ONE, m + _D_ONE
    t0 = num * inv
    t = t0 + inv * (num - t0 * den)  # relative error about 2^-46
    t2 = t * t
    lg = t * (_G1 + t2 * (_G3 + t2 * (_G5 + t2 * (_G7 + t2 * (_G9 + t2 * (_G11 + t2 * _G13)))))) + e
    lg = -_D_INF if a == _ZERO else lg
    lg = _D_INF if a == _INF else lg
    z = np.float64(y) * lg
    z = z if z > _D_LOW else _D_LOW
    z = z if z < _D_HIGH else _D_HIGH
    k = np.rint(z)
    r = np.float32(z - k)
    p = _ONE + r * (_X1 + r * (_X2 + r * (_X3 + r * (_X4 + r * (_X5 + r * (_X6 + r * _X7))))))
    ki = np.int32(k)
    k1 = ki >> 1
    s1 = np.int32((k1 + 127) << 23).view(np.float32)
    s2 = np.int32((ki - k1 + 127) << 23).view(np.float32)
    result = (p * s1) * s2
    integral = np.floor(y) == y
    half = y * _HALF
    odd = integral & (np.floor(half) != half)
    result = _copysign(result, x) if odd else result
    invalid = (x != x) | (y != y) | ((x < _ZERO) & (x > -_INF) & (not integral))
    result = np.float32(np.nan) if invalid else result
    one = (y == _ZERO) | (x == _ONE) | ((x == -_ONE) & (abs(y) == _INF))
    return _ONE if one else result


# -- the primitives -----------------------------------------------------------------------------------------------

def _float(x: Any) -> Any:
    """The NumPy scalar type of a float32 or float64 numba type, else None."""
    if x == types.float32:
        return np.float32
    if x == types.float64:
        return np.float64
    return None


def _integer(x: Any) -> Any:
    """The NumPy scalar type of an integer numba type (a literal as its plain type), else None."""
    if isinstance(x, types.Integer):
        return as_dtype(_unliteral(x)).type
    return None


def _signed(x: Any) -> bool:
    """Whether the integer numba type x is signed."""
    return bool(_unliteral(x).signed)


def _unary_float(stub: Any, f32: Any, f64: Any) -> None:
    """Registers stub(x) as f32(x) for a float32 x and f64(x) for a float64 x."""

    def typer(x: Any) -> Any:
        return _unary_choice(x, f32, f64)

    _overload(stub)(typer)


def _binary_float(stub: Any, f32: Any, f64: Any) -> None:
    """Registers stub(a, b) as f32(a, b) for float32 arguments and f64(a, b) for float64 ones."""

    def typer(a: Any, b: Any) -> Any:
        if not (a == b and a in (types.float32, types.float64)):
            return None
        function = f32 if a == types.float32 else f64

        def call(a: Any, b: Any) -> Any:
            _always_inline()
            return function(a, b)

        return call

    _overload(stub)(typer)


def _stub(name: str, doc: str) -> Any:
    """A primitive: a Python function that only numba code can call (its bodies are the overloads registered for
    it)."""

    def primitive(*args: Any) -> Any:
        raise NotImplementedError(f"{name} is a numba primitive: call it from jitted code")

    primitive.__name__ = primitive.__qualname__ = name
    primitive.__doc__ = doc
    return primitive


# Float-only transcendental functions: float32 from the polynomials above or libm's float32 functions, float64 from
# libm's double ones.
m_sqrt = _stub("m_sqrt", "sqrt(x), correctly rounded (llvm.sqrt).")
m_exp = _stub("m_exp", "e^x.")
m_expm1 = _stub("m_expm1", "e^x - 1.")
m_log = _stub("m_log", "ln x.")
m_log1p = _stub("m_log1p", "ln(1 + x).")
m_erf = _stub("m_erf", "erf(x).")
m_sin = _stub("m_sin", "sin x.")
m_cos = _stub("m_cos", "cos x.")
m_tan = _stub("m_tan", "tan x.")
m_asin = _stub("m_asin", "asin x.")
m_acos = _stub("m_acos", "acos x.")
m_atan = _stub("m_atan", "atan x.")
m_sinh = _stub("m_sinh", "sinh x.")
m_cosh = _stub("m_cosh", "cosh x.")
m_tanh = _stub("m_tanh", "tanh x.")
m_asinh = _stub("m_asinh", "asinh x.")
m_acosh = _stub("m_acosh", "acosh x.")
m_atanh = _stub("m_atanh", "atanh x.")
m_atan2 = _stub("m_atan2", "atan2(y, x), C99.")
m_pow = _stub("m_pow", "x^y, C99's pow.")



def _always_inline_typer(typingctx: Any) -> Any:
    """Marks the function that calls it alwaysinline for LLVM (see _contracted)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        attributes = builder.function.attributes
        if isinstance(attributes, set):
            set.add(attributes, "alwaysinline")
        return context.get_dummy_value()

    return types.void(), codegen


_always_inline: Any = intrinsic(_always_inline_typer)


def _unary_choice(x: Any, f32: Any, f64: Any) -> Any:
    """The implementation of a unary float primitive: f32(x) for a float32 x, f64(x) for a float64 one, inlined
    wherever it is called (alwaysinline for LLVM)."""
    if x not in (types.float32, types.float64):
        return None
    function = f32 if x == types.float32 else f64

    def call(x: Any) -> Any:
        _always_inline()
        return function(x)

    return call


def _contracted(function: Any, arity: int) -> Any:
    """`function` (a float32 polynomial above) compiled on its own with FMA contraction and inlined by LLVM wherever
    it is called: its fused multiply-adds stay, whatever the fastmath flags of the kernel that calls it (the
    element-wise kernels have none, so that their formulas' arithmetic rounds as NumPy's does)."""
    if arity == 1:
        def unary(x: Any) -> Any:
            _always_inline()
            return function(x)

        return numba.njit(fastmath=_FASTMATH, error_model="numpy")(unary)

    def binary(x: Any, y: Any) -> Any:
        _always_inline()
        return function(x, y)

    return numba.njit(fastmath=_FASTMATH, error_model="numpy")(binary)


for _stub_function, _f32, _f64 in (
        (m_sqrt, _sqrt, _sqrt), (m_exp, _contracted(exp_f32, 1), math.exp),
        (m_expm1, _contracted(expm1_f32, 1), math.expm1), (m_log, _contracted(log_f32, 1), math.log),
        (m_log1p, _contracted(log1p_f32, 1), math.log1p), (m_erf, _contracted(erf_f32, 1), math.erf),
        (m_sin, math.sin, math.sin), (m_cos, math.cos, math.cos), (m_tan, math.tan, math.tan),
        (m_asin, math.asin, math.asin), (m_acos, math.acos, math.acos), (m_atan, math.atan, math.atan),
        (m_sinh, math.sinh, math.sinh), (m_cosh, math.cosh, math.cosh),
        (m_asinh, math.asinh, math.asinh), (m_acosh, math.acosh, math.acosh), (m_atanh, math.atanh, math.atanh)):
    _unary_float(_stub_function, _f32, _f64)
_binary_float(m_atan2, math.atan2, math.atan2)
_binary_float(m_pow, _contracted(pow_f32, 2), math.pow)


def m_floor(x: Any) -> Any:
    """floor(x) (llvm.floor)."""
    raise NotImplementedError


def m_ceil(x: Any) -> Any:
    """ceil(x) (llvm.ceil)."""
    raise NotImplementedError


def m_trunc(x: Any) -> Any:
    """x rounded toward zero (llvm.trunc)."""
    raise NotImplementedError


def m_round_even(x: Any) -> Any:
    """x rounded to the nearest integer, halves to even (llvm.rint in the default rounding mode)."""
    raise NotImplementedError


def m_round_away(x: Any) -> Any:
    """x rounded to the nearest integer, halves away from zero (llvm.round)."""
    raise NotImplementedError


_unary_float(m_floor, np.floor, np.floor)
_unary_float(m_ceil, np.ceil, np.ceil)
_unary_float(m_trunc, np.trunc, np.trunc)
_unary_float(m_round_even, np.rint, np.rint)
_unary_float(m_round_away, _round_away, _round_away)


def m_isnan(x: Any) -> Any:
    """Whether x is NaN (a boolean)."""
    raise NotImplementedError


@_overload(m_isnan)
def _m_isnan(x: Any) -> Any:
    if _float(x) is not None:
        return lambda x: x != x
    return None


def m_isinf(x: Any) -> Any:
    """Whether x is +-infinity (a boolean)."""
    raise NotImplementedError


@_overload(m_isinf)
def _m_isinf(x: Any) -> Any:
    kind = _float(x)
    if kind is None:
        return None
    inf = kind(np.inf)
    return lambda x: abs(x) == inf


def m_canonical_nan(like: Any) -> Any:
    """The canonical quiet NaN (0x7fc00000, 0x7ff8000000000000) of like's float type."""
    raise NotImplementedError


@_overload(m_canonical_nan)
def _m_canonical_nan(like: Any) -> Any:
    kind = _float(like)
    if kind is None:
        return None
    nan = kind(np.nan)
    return lambda like: nan


def m_select(c: Any, p: Any, q: Any) -> Any:
    """p where the boolean c holds, else q (both computed: no branch)."""
    raise NotImplementedError


@_overload(m_select)
def _m_select(c: Any, p: Any, q: Any) -> Any:
    return lambda c, p, q: p if c else q


def m_div(a: Any, b: Any) -> Any:
    """Floats: IEEE a / b. Integers: the quotient truncated toward zero; b == 0 gives 0, MIN / -1 gives MIN."""
    raise NotImplementedError


@_overload(m_div)
def _m_div(a: Any, b: Any) -> Any:
    if _float(a) is not None and a == b:
        return lambda a, b: _fdiv(a, b)
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    zero, one = kind(0), kind(1)
    if not _signed(a):
        def unsigned_div(a: Any, b: Any) -> Any:
            x, d = kind(a), kind(b)
            q = _udiv(x, one if d == zero else d)
            return zero if d == zero else q

        return unsigned_div
    minus_one = kind(-1)

    def signed_div(a: Any, b: Any) -> Any:
        x, d = kind(a), kind(b)
        q = _sdiv(x, one if (d == zero) | (d == minus_one) else d)
        q = kind(zero - x) if d == minus_one else q
        return zero if d == zero else q

    return signed_div


def m_mod_trunc(a: Any, b: Any) -> Any:
    """Floats: C's fmod(a, b) (the sign of a; exact). Integers: a - trunc(a / b) b; b == 0 gives 0."""
    raise NotImplementedError


def m_mod_floor(a: Any, b: Any) -> Any:
    """a - floor(a / b) b with b's sign, as Python's %: floats fmod(a, b), plus b where the signs differ and the
    remainder is not 0 (a zero remainder takes b's sign); integers likewise exactly, b == 0 giving 0."""
    raise NotImplementedError


def _remainder(a: Any, b: Any, floor: bool) -> Any:
    """The implementation of m_mod_trunc (floor False) and m_mod_floor (floor True) for a and b's types."""
    kind = _float(a)
    if kind is not None and a == b:
        zero = kind(0.0)
        if not floor:
            return lambda a, b: _frem(a, b)

        def float_floor(a: Any, b: Any) -> Any:
            r = _frem(a, b)
            r = r + b if (r != zero) & ((r < zero) != (b < zero)) else r
            return _copysign(zero, b) if r == zero else r

        return float_floor
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    zero, one = kind(0), kind(1)
    if not _signed(a):
        def unsigned_remainder(a: Any, b: Any) -> Any:
            x, d = kind(a), kind(b)
            r = _urem(x, one if d == zero else d)
            return zero if d == zero else r

        return unsigned_remainder
    minus_one = kind(-1)

    def signed_remainder(a: Any, b: Any) -> Any:
        x, d = kind(a), kind(b)
        bad = (d == zero) | (d == minus_one)  # x % -1 is 0, and MIN srem -1 would trap
        r = _srem(x, one if bad else d)
        r = zero if bad else r
        if floor:
            r = kind(r + d) if (r != zero) & ((r < zero) != (d < zero)) else r
        return r

    return signed_remainder


_overload(m_mod_trunc)(lambda a, b: _remainder(a, b, False))
_overload(m_mod_floor)(lambda a, b: _remainder(a, b, True))


def m_minimum(a: Any, b: Any) -> Any:
    """The smaller of a and b; for floats the canonical quiet NaN if either is NaN (-0 and +0 unordered)."""
    raise NotImplementedError


def m_maximum(a: Any, b: Any) -> Any:
    """The larger of a and b; for floats the canonical quiet NaN if either is NaN (-0 and +0 unordered)."""
    raise NotImplementedError


def _extremum(a: Any, b: Any, smaller: bool) -> Any:
    kind = _float(a)
    if kind is not None and a == b:
        nan = kind(np.nan)
        if smaller:
            def float_minimum(a: Any, b: Any) -> Any:
                r = a if a < b else b
                return nan if (a != a) | (b != b) else r

            return float_minimum

        def float_maximum(a: Any, b: Any) -> Any:
            r = a if a > b else b
            return nan if (a != a) | (b != b) else r

        return float_maximum
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    if smaller:
        def integer_minimum(a: Any, b: Any) -> Any:
            x, y = kind(a), kind(b)
            return x if x < y else y

        return integer_minimum

    def integer_maximum(a: Any, b: Any) -> Any:
        x, y = kind(a), kind(b)
        return x if x > y else y

    return integer_maximum


_overload(m_minimum)(lambda a, b: _extremum(a, b, True))
_overload(m_maximum)(lambda a, b: _extremum(a, b, False))


def m_abs(x: Any) -> Any:
    """|x|; for a signed integer abs(MIN) = MIN (wraps)."""
    raise NotImplementedError


@_overload(m_abs)
def _m_abs(x: Any) -> Any:
    if _float(x) is not None:
        return lambda x: abs(x)
    kind = _integer(x)
    if kind is None:
        return None
    zero = kind(0)
    if not _signed(x):
        return lambda x: kind(x)
    return lambda x: kind(zero - x) if x < zero else kind(x)


def m_sign(x: Any) -> Any:
    """-1, 0 or 1 in x's type (0 for -0 and NaN too, as DML's page says)."""
    raise NotImplementedError


@_overload(m_sign)
def _m_sign(x: Any) -> Any:
    kind = _float(x) or _integer(x)
    if kind is None:
        return None
    zero, one = kind(0), kind(1)
    if _integer(x) is not None and not _signed(x):
        return lambda x: one if x > zero else zero
    minus_one = kind(-1)

    def sign(x: Any) -> Any:
        s = one if x > zero else zero
        return minus_one if x < zero else s

    return sign


# -- integer bits --------------------------------------------------------------------------------------------------

def m_popcount(x: Any) -> Any:
    """The number of bits set in x, in x's own width and type."""
    raise NotImplementedError


@_overload(m_popcount)
def _m_popcount(x: Any) -> Any:
    kind = _integer(x)
    if kind is None:
        return None
    return lambda x: _ctpop(kind(x))


def m_bit_not(x: Any) -> Any:
    """~x in x's type."""
    raise NotImplementedError


@_overload(m_bit_not)
def _m_bit_not(x: Any) -> Any:
    kind = _integer(x)
    if kind is None:
        return None
    return lambda x: kind(~kind(x))


def m_bit_and(a: Any, b: Any) -> Any:
    """a & b in a's type."""
    raise NotImplementedError


def m_bit_or(a: Any, b: Any) -> Any:
    """a | b in a's type."""
    raise NotImplementedError


def m_bit_xor(a: Any, b: Any) -> Any:
    """a ^ b in a's type."""
    raise NotImplementedError


@_overload(m_bit_and)
def _m_bit_and(a: Any, b: Any) -> Any:
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    return lambda a, b: kind(kind(a) & kind(b))


@_overload(m_bit_or)
def _m_bit_or(a: Any, b: Any) -> Any:
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    return lambda a, b: kind(kind(a) | kind(b))


@_overload(m_bit_xor)
def _m_bit_xor(a: Any, b: Any) -> Any:
    kind = _integer(a)
    if kind is None or _integer(b) is None:
        return None
    return lambda a, b: kind(kind(a) ^ kind(b))


def m_shl(a: Any, b: Any) -> Any:
    """a shifted left by b bits in a's type; 0 where b is negative or at least a's width."""
    raise NotImplementedError


def m_shr(a: Any, b: Any) -> Any:
    """a shifted right by b bits in a's type (arithmetic for a signed a, logical for an unsigned one); 0 where b is
    negative or at least a's width."""
    raise NotImplementedError


def _shift(a: Any, b: Any, left: bool) -> Any:
    kind, count_kind = _integer(a), _integer(b)
    if kind is None or count_kind is None:
        return None
    zero = kind(0)
    no_count, width = count_kind(0), count_kind(np.dtype(kind).itemsize * 8)
    shift = _shl if left else (_ashr if _signed(a) else _lshr)

    def shift_by(a: Any, b: Any) -> Any:
        valid = (b >= no_count) & (b < width)
        r = shift(kind(a), kind(b) if valid else zero)
        return r if valid else zero

    return shift_by


_overload(m_shl)(lambda a, b: _shift(a, b, True))
_overload(m_shr)(lambda a, b: _shift(a, b, False))


# -- conversions -----------------------------------------------------------------------------------------------------

def m_to_float(i: Any, like: Any) -> Any:
    """The integer i as like's float type, rounded to nearest."""
    raise NotImplementedError


@_overload(m_to_float)
def _m_to_float(i: Any, like: Any) -> Any:
    kind = _float(like)
    if kind is None or _integer(i) is None:
        return None
    return lambda i, like: kind(i)


def m_saturate(v: Any, like: Any) -> Any:
    """The float v (already integral) as like's integer type, clamped to its range; NaN gives 0."""
    raise NotImplementedError


@_overload(m_saturate)
def _m_saturate(v: Any, like: Any) -> Any:
    float_kind, kind = _float(v), _integer(like)
    if float_kind is None or kind is None:
        return None
    limits = np.iinfo(kind)
    # Both bounds are exact in float32: the minimum is 0 or -2^(n-1), the maximum plus one 2^n or 2^(n-1).
    low, high = float_kind(int(limits.min)), float_kind(int(limits.max) + 1)
    smallest, largest, zero = kind(limits.min), kind(limits.max), float_kind(0.0)

    def saturate(v: Any, like: Any) -> Any:
        r = kind(v if (v >= low) & (v < high) else zero)  # converts in-range values only: NaN gives 0
        r = largest if v >= high else r
        return smallest if v < low else r

    return saturate


def m_ipow(a: Any, b: Any) -> Any:
    """a ** b exactly, wrapped to a's type (repeated squaring); a negative b gives 1 / a ** -b truncated: 1 for
    a == 1, +-1 for a == -1 (by b's parity), else 0."""
    raise NotImplementedError


@_overload(m_ipow)
def _m_ipow(a: Any, b: Any) -> Any:
    kind, count_kind = _integer(a), _integer(b)
    if kind is None or count_kind is None:
        return None
    zero, one, count_zero, count_one = kind(0), kind(1), count_kind(0), count_kind(1)
    signed = _signed(a)
    minus_one = kind(-1) if signed else one

    def ipow(a: Any, b: Any) -> Any:
        base, result = kind(a), one
        count = np.uint64(b) if b > count_zero else np.uint64(0)
        while count != np.uint64(0):
            result = kind(result * base) if count & np.uint64(1) else result
            base = kind(base * base)
            count = count >> np.uint64(1)
        if b < count_zero:
            odd = (b & count_one) != count_zero
            result = one if kind(a) == one else (
                (minus_one if odd else one) if signed and kind(a) == minus_one else zero)
        return result

    return ipow


# -- the activations' functions (the cpu activations' tuned float32 formulas) ------------------------------------------

def m_sigmoid(x: Any) -> Any:
    """1 / (1 + e^-x)."""
    raise NotImplementedError


def m_gelu(x: Any) -> Any:
    """x Phi(x)."""
    raise NotImplementedError


def m_softplus(x: Any) -> Any:
    """ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|); NaN stays NaN."""
    raise NotImplementedError


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def softplus_f32(x: Any) -> Any:
    linear = x if x > _ZERO else _ZERO
    r = linear + log1p_unit_f32(exp_f32(-abs(x)))
    return x if x != x else r


_contracted_softplus = _contracted(softplus_f32, 1)


@numba.njit(inline="always", error_model="numpy")
def _sigmoid_f64(x: Any) -> Any:
    e = math.exp(-abs(x))
    return (e if x < F64(0.0) else F64(1.0)) / (F64(1.0) + e)


@numba.njit(inline="always", error_model="numpy")
def _gelu_f64(x: Any) -> Any:
    return F64(0.5) * x * math.erfc(-x * F64(math.sqrt(0.5))) if x != -_D_INF else F64(-0.0)


@numba.njit(inline="always", error_model="numpy")
def _softplus_f64(x: Any) -> Any:
    return (x if x > F64(0.0) else F64(0.0)) + math.log1p(math.exp(-abs(x)))


@functools.cache
def _activation(name: str) -> Any:
    """The activations' float32 formula `name` (cpu/activations.py, which imports this module: so imported when
    first typed), compiled with their contraction (as their kernels compile them)."""
    return _contracted(getattr(importlib.import_module(f"{__package__}.activations"), name), 1)


@_overload(m_tanh)
def _m_tanh(x: Any) -> Any:
    return _unary_choice(x, _activation("_tanh"), math.tanh)  # vectorizable, unlike libm's tanhf


@_overload(m_sigmoid)
def _m_sigmoid(x: Any) -> Any:
    return _unary_choice(x, _activation("_sigmoid"), _sigmoid_f64)


@_overload(m_gelu)
def _m_gelu(x: Any) -> Any:
    return _unary_choice(x, _activation("_gelu"), _gelu_f64)


@_overload(m_softplus)
def _m_softplus(x: Any) -> Any:
    return _unary_choice(x, _contracted_softplus, _softplus_f64)


