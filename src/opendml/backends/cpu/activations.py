"""The 17 activations on the CPU: their FLOAT32 formulas in numba, written once, for every kernel that applies one
(MEAN_VARIANCE_NORMALIZATION1's fused activation imports them from here), and the standalone activation operators'
elementwise kernel (`compile_kernel`).

The formulas (`_activate_store`) work on FLOAT32 values: FLOAT16 tensors travel as uint16 bits, widened exactly on
load and rounded once from the FLOAT32 result on store (DECISIONS 17). The transcendental ones use FLOAT32 polynomial
exp/log/erfc written here and in math.py: numba's math.exp/erf/log1p are scalar libm calls that LLVM cannot
vectorize (measured: a loop of math.erf was about ten times slower than the vectorized GELU here). Every activation
keeps NaN as NaN but THRESHOLDED_RELU and SHRINK, whose formulas' comparisons (false for NaN) give 0 (README, Rulings).
The compute-bound loops ask for 512-bit vectors where the machine has them (memory_kernels.prefer_wide_vectors).

The standalone kernel (compile time, descriptor only): size-1 dimensions are dropped and neighbours that are one run
in both tensors merged; the run is the dimension with the smallest output stride, walked in blocks of at most
_BLOCK elements, and every other dimension becomes a loop dimension plus an offset table (as in MVN1's plan).
Per block: a contiguous input is read by the formula where it lies (a strided or broadcast one is first gathered
into a FLOAT32 block), and `_activate_store` writes the output straight into a contiguous output, or into a staging
block scattered through the output's strides. Outputs of at least STREAMING_THRESHOLD_BYTES with a contiguous run
are written with non-temporal stores (no read-for-ownership of the output's lines): each block is computed in
chunks into one half of a staging area while the previous block's lines stream out of the other half and the next
block's input is prefetched, so that memory traffic and arithmetic overlap (as MVN1 does). Large tensors share
their blocks among numba's threads; every element is computed the same way on any number of threads.

Integer tensors (RELU's INT32/INT16/INT8, SHRINK's 8- to 32-bit integers, from FL 5_1) are computed exactly in
integers, in int64: RELU is max(x, 0), SHRINK ops/activations.py's IntegerShrink (the same plan the gpu runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ...ops.activations import ActivationOperatorDesc, IntegerShrink
from ...ops.base import OperatorDesc
from ...types import ExecutionFlags, OperatorType
from .. import FlatArray, Kernel
from .. import activation_constants as C
from ..plans import merge_dimensions
from . import memory_kernels
from .float16 import F16_TAG, NATIVE_TAG, float_to_half, half_to_float, is_f16
from .math import exp_f32 as _exp
from .math import expm1_f32 as _expm1
from .math import log1p_unit_f32 as _log1p_unit
from .memory_kernels import PARALLEL_LAUNCH, begin_stream, drain_stream, fence, prefer_wide_vectors, stream_lines

# reassoc lets LLVM vectorize sums; contract allows FMA. Neither changes NaN or infinity behaviour.
_FASTMATH = {"reassoc", "contract"}
# Elementwise loops vectorize without reassociation, and must not have it: _gelu's rounding step must stay as written
# (and MVN's normalizing loops would be folded into forms that overflow).
_ELEMENTWISE_FASTMATH = {"contract"}

# Activation codes: DML_OPERATOR_TYPE values, 0 for none.
_NONE = 0
_LINEAR, _SIGMOID, _HARD_SIGMOID, _TANH, _SCALED_TANH, _RELU, _LEAKY_RELU, _THRESHOLDED_RELU, _ELU, _CELU = (
    int(OperatorType["ACTIVATION_" + name]) for name in (
        "LINEAR", "SIGMOID", "HARD_SIGMOID", "TANH", "SCALED_TANH", "RELU", "LEAKY_RELU", "THRESHOLDED_RELU", "ELU",
        "CELU"))
_SCALED_ELU, _SOFTPLUS, _PARAMETRIC_SOFTPLUS, _SOFTSIGN, _IDENTITY, _SHRINK, _GELU = (
    int(OperatorType["ACTIVATION_" + name]) for name in (
        "SCALED_ELU", "SOFTPLUS", "PARAMETRIC_SOFTPLUS", "SOFTSIGN", "IDENTITY", "SHRINK", "GELU"))


F32 = np.float32
_ZERO, _ONE, _TWO, _HALF = F32(0.0), F32(1.0), F32(2.0), F32(0.5)
_INF = F32(np.inf)
_NEGATIVE_ZERO = F32(-0.0)
# The constants the gpu's WGSL formulas use too (backends/activation_constants.py), under this module's names.
_LOG2E, _LN2_HI, _LN2_LO = C.LOG2E, C.LN2_HI, C.LN2_LO
(_R2, _R3, _R4, _R5, _R6, _R7) = (C.R2, C.R3, C.R4, C.R5, C.R6, C.R7)
(_Y0, _Y1, _Y2, _Y3, _Y4, _Y5, _Y6, _Y7, _Y8) = (C.Y0, C.Y1, C.Y2, C.Y3, C.Y4, C.Y5, C.Y6, C.Y7, C.Y8)
(_P0, _P1, _P2, _P3, _P4, _P5) = (C.P0, C.P1, C.P2, C.P3, C.P4, C.P5)
_GELU_OFFSET, _GELU_HALF_LOG2E, _GELU_CLAMP = C.GELU_OFFSET, C.GELU_HALF_LOG2E, C.GELU_CLAMP
_TANH_SATURATION = F32(10.0)         # tanh(10) rounds to 1 in FLOAT32
_CELU_LINEAR = F32(2.0**-24)         # below this, expm1(q) = q (1 + q / 2 + ...) rounds to q
_CELU_LARGE = F32(80.0)              # above this, expm1(q) = e^q to FLOAT32's precision
#: 1.5 * 2^23 + 127: y + _EXP_SHIFTER rounds y (|y| < 2^22) to an integer k, and its low mantissa bits read k + 127.
_EXP_SHIFTER = F32(12582912.0 + 127.0)


def _load(x: Any, i: Any, tag: Any) -> Any:
    """Element i as float32 (FLOAT16 bits decoded exactly). The body is numba's, from the overload below."""
    raise NotImplementedError


def _store(y: Any, i: Any, v: Any, tag: Any) -> None:
    """Stores the float32 v at i (as FLOAT16 bits, rounded once, for a FLOAT16 tensor)."""
    raise NotImplementedError


@overload(_load, inline="always")
def _load_impl(x: Any, i: Any, tag: Any) -> Any:
    if is_f16(x, tag):

        def load_f16(x: Any, i: Any, tag: Any) -> Any:
            return half_to_float(x[np.uint64(i)])

        return load_f16

    def load(x: Any, i: Any, tag: Any) -> Any:
        # An unsigned index spares numba's negative-index wraparound.
        return x[np.uint64(i)]

    return load


@overload(_store, inline="always")
def _store_impl(y: Any, i: Any, v: Any, tag: Any) -> Any:
    if is_f16(y, tag):

        def store_f16(y: Any, i: Any, v: Any, tag: Any) -> None:
            y[np.uint64(i)] = float_to_half(v)

        return store_f16

    def store(y: Any, i: Any, v: Any, tag: Any) -> None:
        y[np.uint64(i)] = v

    return store


# -- vectorizable FLOAT32 elementary functions (exp, expm1 and log(1 + u) are math.py's) -----------------------------
# Every constant is a float32 global: a Python float literal would turn the arithmetic into float64.

@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def _sigmoid(z: Any) -> Any:
    """1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) for z < 0, with e = e^-|z| from _exp: subnormal results (z below
    -87.3) come out right, and NaN stays NaN."""
    e = _exp(-abs(z))
    return (e if z < _ZERO else _ONE) / (_ONE + e)


@numba.njit(inline="always", fastmath=_ELEMENTWISE_FASTMATH, error_model="numpy")
def _tanh(z: Any) -> Any:
    """tanh z = e / (e + 2), e = expm1(2|z|), with z's sign; |z| beyond 10 gives 1 (tanh 10 rounds to 1).

    expm1(t) for 0 <= t <= 20 in one reduction: t = k ln2 + r (|r| <= ln2 / 2, k in [0, 29]), expm1(t) =
    2^k expm1(r) + (2^k - 1), one fused multiply-add, expm1(r) by its degree-7 Taylor polynomial (truncation below
    2^-26 relative). Below ln2 / 2, k is 0 and that is the polynomial alone: no cancellation near 0. k is rounded by
    adding _EXP_SHIFTER, whose low mantissa bits then read k + 127 (as in _gelu: no reassociation here). NaN stays
    NaN."""
    a = abs(z)
    a = _TANH_SATURATION if a > _TANH_SATURATION else a
    t = _TWO * a
    shifted = t * _LOG2E + _EXP_SHIFTER
    k = shifted - _EXP_SHIFTER
    r = (t - k * _LN2_HI) - k * _LN2_LO
    q = r * (_ONE + r * (_R2 + r * (_R3 + r * (_R4 + r * (_R5 + r * (_R6 + r * _R7))))))
    two_k = np.int32(np.float32(shifted).view(np.int32) << 23).view(np.float32)
    e = two_k * q + (two_k - _ONE)
    return _nan_kept(z, np.float32(math.copysign(e / (e + _TWO), z)))


@numba.njit(inline="always", fastmath=_ELEMENTWISE_FASTMATH, error_model="numpy")
def _gelu(x: Any) -> Any:
    """x Phi(x) = max(x, 0) - |x| erfc(|x| / sqrt 2) / 2: for x < 0 that is x Phi(x) straight from erfc (relative
    accuracy in the tail, subnormal results included), for x >= 0 x - x (1 - Phi(x)); NaN stays NaN.

    |x| erfc(|x| / sqrt 2) / 2 = w 2^z p(r) with z = y(w) - x^2 / (2 ln 2) = k + r (see _Y0). |x| is clamped to
    _GELU_CLAMP, where |GELU| is under half FLOAT32's smallest subnormal, so that x < 0 beyond it gives -0 (the
    exact result rounded) and x > 0 gives x. k (down to -152) is rounded by adding _EXP_SHIFTER and 2^k applied as
    two factors built in the exponent bits, the second last, so that a subnormal result is rounded once. That
    rounding needs the compiler to keep (z + C) - C as written: the loops that inline this must not allow
    reassociation."""
    a = abs(x)
    a = a if a < _GELU_CLAMP else _GELU_CLAMP  # NaN becomes a number here, and NaN again at the end
    w = a / (_GELU_OFFSET + a)
    z = _Y0 + w * (_Y1 + w * (_Y2 + w * (_Y3 + w * (_Y4 + w * (_Y5 + w * (_Y6 + w * (_Y7 + w * _Y8)))))))
    z = z - (_GELU_HALF_LOG2E * a) * a
    k = (z + _EXP_SHIFTER) - _EXP_SHIFTER
    r = z - k
    p = _P0 + r * (_P1 + r * (_P2 + r * (_P3 + r * (_P4 + r * _P5))))
    ki = np.int32(k)
    k1 = ki >> 1
    s1 = np.int32((k1 + 127) << 23).view(np.float32)
    s2 = np.int32((ki - k1 + 127) << 23).view(np.float32)
    tail = ((w * p) * s1) * s2
    return _nan_kept(x, -tail if x < _ZERO else x - tail)


@numba.njit(inline="always", fastmath=_FASTMATH, error_model="numpy")
def _nan_kept(x: Any, result: Any) -> Any:
    """NaN in, NaN out, also where the formula's comparisons would pick a number."""
    return x if x != x else result


# -- the activation loops: one loop per activation, each writing the output -------------------------------------------

@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _activate_store(code: int, p1: Any, p2: Any, tmp: Any, lo: int, hi: int, out: Any, shift: int,
                    tag: Any) -> None:
    """out[shift + i] = activation(tmp[i]) for lo <= i < hi, in FLOAT32 (stored in the output's type). The branch
    is taken once per call; every loop is branch-free and contiguous so that LLVM vectorizes it at full width
    (measured: the GELU loop ran 1.2x faster storing to a unit-stride staging block than to y[base + i * step]).
    tmp is read with _load, which indexes unsigned: with a signed index that numba cannot prove non-negative (lo
    is not a constant) it wraps negative indices, and LLVM turned the loads into gathers (measured: 2x slower).
    Each value goes through a variable before _store: numba 0.68 silently dropped the store when a conditional
    expression was passed straight to the inlined overload. No reassociation here: nothing is summed, and _gelu's
    rounding step must stay as written."""
    prefer_wide_vectors()
    if code == _NONE or code == _IDENTITY:  # noqa: SIM109 (two integer compares, as numba compiles them)
        for i in range(lo, hi):
            w = _load(tmp, i, tag)
            _store(out, shift + i, w, tag)
    elif code == _RELU:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = _nan_kept(v, v if v > _ZERO else _ZERO)
            _store(out, shift + i, w, tag)
    elif code == _LINEAR:
        for i in range(lo, hi):
            w = p1 * _load(tmp, i, tag) + p2
            _store(out, shift + i, w, tag)
    elif code == _SIGMOID:
        for i in range(lo, hi):
            w = _sigmoid(_load(tmp, i, tag))
            _store(out, shift + i, w, tag)
    elif code == _HARD_SIGMOID:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            r = p1 * v + p2
            r = r if r < _ONE else _ONE
            r = r if r > _ZERO else _ZERO
            w = _nan_kept(p1 * v, r)
            _store(out, shift + i, w, tag)
    elif code == _TANH:
        for i in range(lo, hi):
            w = _tanh(_load(tmp, i, tag))
            _store(out, shift + i, w, tag)
    elif code == _SCALED_TANH:
        for i in range(lo, hi):
            w = p1 * _tanh(p2 * _load(tmp, i, tag))
            _store(out, shift + i, w, tag)
    elif code == _LEAKY_RELU:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = v if v >= _ZERO else p1 * v
            _store(out, shift + i, w, tag)
    elif code == _THRESHOLDED_RELU:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = v if v > p1 else _ZERO  # as written: NaN > Alpha is false, so NaN gives 0
            _store(out, shift + i, w, tag)
    elif code == _ELU:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = v if v >= _ZERO else p1 * _expm1(v)
            _store(out, shift + i, w, tag)
    elif code == _CELU:
        # Alpha expm1(x / Alpha) is x (within half a unit) where |x / Alpha| < 2^-24: taken as x there, so that a
        # huge Alpha, whose quotient would be subnormal and imprecise, loses nothing. Where x / Alpha > 80 (a
        # negative Alpha), it is sign(Alpha) e^(x / Alpha + ln|Alpha|): finite where the result is, though
        # e^(x / Alpha) alone may overflow.
        log_alpha = np.float32(math.log(abs(p1)))
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            q = v / p1
            large = np.float32(math.copysign(_exp(q + log_alpha), p1))
            negative = v if abs(q) < _CELU_LINEAR else (large if q > _CELU_LARGE else p1 * _expm1(q))
            r = (v if v > _ZERO else _ZERO) + (negative if negative < _ZERO else _ZERO)
            w = _nan_kept(v, r)
            _store(out, shift + i, w, tag)
    elif code == _SCALED_ELU:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = p2 * v if v > _ZERO else p2 * (p1 * _expm1(v))
            _store(out, shift + i, w, tag)
    elif code == _SOFTPLUS:
        # ln(1 + e^(s x)) / s = (s > 0 ? max(x, 0) : min(x, 0)) + ln(1 + e^-|s x|) / s: no s x that overflows
        # is ever divided back.
        # The linear part's zero has the result's sign (-0 for a negative Steepness), so that a result that
        # rounds to zero is the exact one's signed zero.
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            linear = (v if v > _ZERO else _ZERO) if p1 > _ZERO else (v if v < _ZERO else _NEGATIVE_ZERO)
            w = _nan_kept(v, linear + _log1p_unit(_exp(-abs(p1 * v))) / p1)
            _store(out, shift + i, w, tag)
    elif code == _PARAMETRIC_SOFTPLUS:
        # Alpha ln(1 + e^(b x)) = (b x > 0 ? Alpha (b x) : 0) + Alpha ln(1 + e^-|b x|); where b x overflows from a
        # finite x, its linear part is (Alpha b) x, so that the result is not infinite where it is not (and
        # Alpha (b x) where Alpha b would underflow).
        alpha_beta = p1 * p2
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            z = p2 * v
            overflowed = abs(z) == _INF and abs(v) < _INF
            linear = (alpha_beta * v if overflowed else p1 * z) if z > _ZERO else _ZERO
            w = _nan_kept(z, linear + p1 * _log1p_unit(_exp(-abs(z))))
            _store(out, shift + i, w, tag)
    elif code == _SOFTSIGN:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            r = v / (_ONE + abs(v))
            w = np.float32(math.copysign(_ONE, v)) if abs(v) == _INF else r
            _store(out, shift + i, w, tag)
    elif code == _SHRINK:
        for i in range(lo, hi):
            v = _load(tmp, i, tag)
            w = v - p1 if v > p2 else (v + p1 if v < -p2 else _ZERO)  # as written: NaN gives 0
            _store(out, shift + i, w, tag)
    elif code == _GELU:
        for i in range(lo, hi):
            w = _gelu(_load(tmp, i, tag))
            _store(out, shift + i, w, tag)


# -- the standalone operators -----------------------------------------------------------------------------------

#: Most elements per block of the run: the gathered input and the staged output of a block stay in L1.
_BLOCK = 2048
#: Below this many elements a dispatch runs on one thread (starting the pool costs more than it saves).
_PARALLEL_MIN_ELEMENTS = 1 << 16
#: Blocks per thread that a parallel dispatch cuts its work into (even shares when blocks differ in cost).
_CHUNKS_PER_THREAD = 4
#: A streamed block's output is computed this many elements at a time, with streamed lines between.
_CHUNK = 512

#: The activations whose formula is a few operations per element: their speed is their memory traffic, so large
#: outputs are written with non-temporal stores (measured on 64 MiB FLOAT32, 2 threads: 0.52-0.55x the copy floor
#: against 0.59-0.71x with plain stores). The transcendental ones are bound by their arithmetic and write with plain
#: stores, which measured 3-6% faster for them than staging and streaming (the copy out of the staging block costs
#: more than the read-for-ownership of the output's lines, which the arithmetic hides).
_MEMORY_BOUND = frozenset({_IDENTITY, _RELU, _LINEAR, _LEAKY_RELU, _THRESHOLDED_RELU, _HARD_SIGMOID, _SHRINK,
                           _SOFTSIGN})

# Layout of the int64 `meta` array of a standalone plan.
(_S_TABLE, _S_K, _S_KX, _S_KY, _S_L, _S_LX, _S_LY, _S_PIECES, _S_CODE, _S_STREAM, _S_CHUNKS) = range(11)
_S_META_LEN = 11


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _integer_store(code: int, q: Any, x: Any, xb: int, lx: int, y: Any, yb: int, ly: int, n: int) -> None:
    """y[yb + i ly] = activation(x[xb + i lx]) for i < n, exactly in integers (int64): RELU max(x, 0), SHRINK the
    IntegerShrink plan in `q` (its words, see ops/activations.py)."""
    if code == _RELU:
        for i in range(n):
            v = x[np.uint64(xb + i * lx)]
            y[np.uint64(yb + i * ly)] = v if v > 0 else 0
        return
    for i in range(n):
        v = np.int64(x[np.uint64(xb + i * lx)])
        w = np.int64(0)
        if q[0] <= v <= q[1]:
            w = (min(max(v, q[6]), q[7]) - q[8]) if q[4] <= v <= q[5] else (min(max(v, q[9]), q[10]) - q[11])
        elif q[2] <= v <= q[3]:
            w = (min(max(v, q[14]), q[15]) - q[16]) if q[12] <= v <= q[13] else (min(max(v, q[17]), q[18]) - q[19])
        y[np.uint64(yb + i * ly)] = w


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _gather(x: Any, xb: int, lx: int, n: int, tmp: Any, tag: Any) -> None:
    """tmp[i] = x[xb + i lx] as FLOAT32, for a strided or broadcast run."""
    for i in range(n):
        tmp[i] = _load(x, xb + i * lx, tag)


def _store_block(code: Any, p1: Any, p2: Any, q: Any, x: Any, xb: Any, lx: Any, y: Any, yb: Any, ly: Any, n: Any,
                 tmp: Any, staged: Any, tag: Any) -> None:
    """y[yb + i ly] = activation(x[xb + i lx]) for i < n. The body is numba's, from the overload below: the integer
    computation for integer tensors, the FLOAT32 formulas for FLOAT32 and FLOAT16 (uint16 bits with the FLOAT16 tag).
    """
    raise NotImplementedError


@overload(_store_block)
def _store_block_impl(code: Any, p1: Any, p2: Any, q: Any, x: Any, xb: Any, lx: Any, y: Any, yb: Any, ly: Any,
                      n: Any, tmp: Any, staged: Any, tag: Any) -> Any:
    if isinstance(x.dtype, types.Integer) and not is_f16(x, tag):

        def integer_block(code: Any, p1: Any, p2: Any, q: Any, x: Any, xb: Any, lx: Any, y: Any, yb: Any, ly: Any,
                          n: Any, tmp: Any, staged: Any, tag: Any) -> None:
            _integer_store(code, q, x, xb, lx, y, yb, ly, n)

        return integer_block

    def float_block(code: Any, p1: Any, p2: Any, q: Any, x: Any, xb: Any, lx: Any, y: Any, yb: Any, ly: Any, n: Any,
                    tmp: Any, staged: Any, tag: Any) -> None:
        # A contiguous input is read by the formula where it lies (FLOAT16 bits too); another is gathered first.
        if lx != 1:
            _gather(x, xb, lx, n, tmp, tag)
        if ly == 1:
            if lx == 1:
                _activate_store(code, p1, p2, x, xb, xb + n, y, yb - xb, tag)
            else:
                _activate_store(code, p1, p2, tmp, 0, n, y, yb, tag)
            return
        if lx == 1:
            _activate_store(code, p1, p2, x, xb, xb + n, staged, -xb, tag)
        else:
            _activate_store(code, p1, p2, tmp, 0, n, staged, 0, tag)
        for i in range(n):
            y[yb + i * ly] = staged[i]

    return float_block


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _run_blocks(first: int, last: int, x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any, q: Any,
                tag: Any) -> None:
    """Blocks [first, last) of the plan: block b is piece b % pieces of row b // pieces."""
    table, k_len, kx, ky = meta[_S_TABLE], meta[_S_K], meta[_S_KX], meta[_S_KY]
    run, lx, ly = meta[_S_L], meta[_S_LX], meta[_S_LY]
    pieces, code = meta[_S_PIECES], meta[_S_CODE]
    tx, ty = tab[0:table], tab[table:2 * table]
    block = (run + pieces - 1) // pieces
    tmp = np.empty(block, np.float32)
    staged = np.empty(block, y.dtype)
    for b in range(first, last):
        r = b // pieces
        start = (b - r * pieces) * block
        t = r // k_len
        k = r - t * k_len
        _store_block(code, p1, p2, q, x, tx[t] + k * kx + start * lx, lx, y, ty[t] + k * ky + start * ly, ly,
                     min(block, run - start), tmp, staged, tag)


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _run_streamed_blocks(first: int, last: int, x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any,
                         tag: Any) -> None:
    """_run_blocks for a FLOAT32 or FLOAT16 output written with non-temporal stores (a contiguous run): each block
    is computed _CHUNK elements at a time into one half of a staging area, and between chunks a share of the
    previous block's whole lines is streamed out (memory_kernels.drain_stream), so that the thread's stores go on
    while it computes. (Prefetching the next block's input as well made no difference here: the hardware
    prefetchers follow these sequential reads.)"""
    table, k_len, kx, ky = meta[_S_TABLE], meta[_S_K], meta[_S_KX], meta[_S_KY]
    run, lx, ly = meta[_S_L], meta[_S_LX], meta[_S_LY]
    pieces, code = meta[_S_PIECES], meta[_S_CODE]
    tx, ty = tab[0:table], tab[table:2 * table]
    block = (run + pieces - 1) // pieces
    tmp = np.empty(block, np.float32)
    staged = np.empty(2 * block, y.dtype)
    staged_address, y_address, item = staged.ctypes.data, y.ctypes.data, y.itemsize
    pending, pending_src, pending_dst = 0, 0, 0
    parity = 0
    for b in range(first, last):
        r = b // pieces
        start = (b - r * pieces) * block
        n = min(block, run - start)
        t = r // k_len
        xb = tx[t] + (r - t * k_len) * kx + start * lx
        yb = ty[t] + (r - t * k_len) * ky + start * ly
        if lx != 1:
            _gather(x, xb, lx, n, tmp, tag)
        shift = parity * block
        chunks = (n + _CHUNK - 1) // _CHUNK
        per_chunk = (pending + chunks - 1) // chunks  # the other half is out before this one is full
        for c in range(chunks):
            lo, hi = c * _CHUNK, min((c + 1) * _CHUNK, n)
            if lx == 1:
                _activate_store(code, p1, p2, x, xb + lo, xb + hi, staged, shift - xb, tag)
            else:
                _activate_store(code, p1, p2, tmp, lo, hi, staged, shift, tag)
            pending, pending_src, pending_dst = drain_stream(pending, pending_src, pending_dst, per_chunk)
        pending, pending_src, pending_dst = begin_stream(y_address + yb * item, staged_address + shift * item,
                                                         n * item)
        parity = 1 - parity
    stream_lines(pending_dst, pending_src, pending)
    fence()  # this thread's non-temporal stores are visible before the kernel returns


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _serial(x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any, q: Any, tag: Any) -> None:
    _run_blocks(0, meta[_S_TABLE] * meta[_S_K] * meta[_S_PIECES], x, y, meta, tab, p1, p2, q, tag)


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, parallel=True, error_model="numpy")
def _parallel(x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any, q: Any, tag: Any) -> None:
    blocks = meta[_S_TABLE] * meta[_S_K] * meta[_S_PIECES]
    chunks = meta[_S_CHUNKS]
    for chunk in numba.prange(chunks):
        _run_blocks(chunk * blocks // chunks, (chunk + 1) * blocks // chunks, x, y, meta, tab, p1, p2, q, tag)


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _serial_streamed(x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any, q: Any, tag: Any) -> None:
    _run_streamed_blocks(0, meta[_S_TABLE] * meta[_S_K] * meta[_S_PIECES], x, y, meta, tab, p1, p2, tag)


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, parallel=True, error_model="numpy")
def _parallel_streamed(x: Any, y: Any, meta: Any, tab: Any, p1: Any, p2: Any, q: Any, tag: Any) -> None:
    blocks = meta[_S_TABLE] * meta[_S_K] * meta[_S_PIECES]
    chunks = meta[_S_CHUNKS]
    for chunk in numba.prange(chunks):
        _run_streamed_blocks(chunk * blocks // chunks, (chunk + 1) * blocks // chunks, x, y, meta, tab, p1, p2, tag)


def _offsets(dims: Sequence[tuple[int, int, int]], which: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Row-major table of sum(index_d * stride_d) over `dims` (size, input stride, output stride)."""
    table = np.zeros(1, np.int64)
    for dim in dims:
        table = (table[:, None] + np.arange(dim[0], dtype=np.int64) * dim[which]).ravel()
    return table


class ActivationPlan:
    """A compiled standalone activation: call with the flat input and output views."""

    __slots__ = ("_arguments", "_kernel", "_parallel", "_view")

    def __init__(self, desc: ActivationOperatorDesc) -> None:
        source, target = desc.input_tensor, desc.output_tensor
        assert source is not None and target is not None
        data_type = source.data_type
        sizes, (x_strides, y_strides) = merge_dimensions(source.sizes, source.element_strides,
                                                         target.element_strides)
        dims = [(size, sx, sy) for size, sx, sy in zip(sizes, x_strides, y_strides, strict=True)]
        # The run: the smallest output stride (a contiguous output streams), then the smallest input stride.
        run = dims.pop(min(range(len(dims)), key=lambda d: (dims[d][2], dims[d][1])))
        loop = dims.pop(max(range(len(dims)), key=lambda d: dims[d][0])) if dims else (1, 0, 0)
        tables = [_offsets(dims, which) for which in (1, 2)]
        pieces = -(-run[0] // _BLOCK)
        blocks = tables[0].size * loop[0] * pieces
        parallel = blocks > 1 and source.element_count >= _PARALLEL_MIN_ELEMENTS
        chunks = min(blocks, _CHUNKS_PER_THREAD * numba.get_num_threads()) if parallel else 1
        code = int(desc.OPERATOR_TYPE)
        meta = np.zeros(_S_META_LEN, np.int64)
        meta[_S_TABLE] = tables[0].size
        meta[_S_K], meta[_S_KX], meta[_S_KY] = loop
        meta[_S_L], meta[_S_LX], meta[_S_LY] = run
        meta[_S_PIECES], meta[_S_CODE], meta[_S_CHUNKS] = pieces, code, chunks
        meta[_S_STREAM] = (memory_kernels.HAVE_STREAMING_STORES and run[2] == 1 and data_type.is_float and
                           code in _MEMORY_BOUND and
                           target.total_tensor_size_in_bytes >= memory_kernels.STREAMING_THRESHOLD_BYTES)
        # Parameters are FLOAT fields: the formulas use them rounded to FLOAT32, as DML receives them.
        values = [float(np.float32(value)) for value in desc.parameters().values()] + [0.0, 0.0]
        integer_plan = np.zeros(20, np.int64)
        if not data_type.is_float and code == _SHRINK:
            integer_plan[:] = IntegerShrink.of(values[0], values[1], data_type).words()
        half = data_type.numpy_dtype == np.float16
        self._view = np.dtype(np.uint16) if half else data_type.numpy_dtype
        self._arguments = (meta, np.concatenate(tables), np.float32(values[0]), np.float32(values[1]), integer_plan,
                           F16_TAG if half else NATIVE_TAG)
        self._parallel = parallel
        if meta[_S_STREAM]:
            self._kernel = _parallel_streamed if parallel else _serial_streamed
        else:
            self._kernel = _parallel if parallel else _serial

    def __call__(self, x: FlatArray, y: FlatArray) -> None:
        if self._parallel:
            with PARALLEL_LAUNCH:
                self._kernel(x.view(self._view), y.view(self._view), *self._arguments)
        else:
            self._kernel(x.view(self._view), y.view(self._view), *self._arguments)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """All descriptor work happens here; the kernel only binds views and runs. FLOAT32 computation whatever the
    flags say: ALLOW_HALF_PRECISION_COMPUTATION permits but does not require FLOAT16."""
    plan = ActivationPlan(cast(ActivationOperatorDesc, desc))

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        plan(cast(FlatArray, inputs[0]), outputs[0])

    return kernel
