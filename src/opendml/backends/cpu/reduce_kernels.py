"""CPU kernels for DML_OPERATOR_REDUCE.

``make_reduce_plan`` does all descriptor work once (drop size-1 dims, merge
dims that are contiguous in memory, choose a kernel family, build offset
tables); the returned ``ReducePlan`` then costs one numba call per dispatch.

After simplification the tensor is described by

* kept dims: an offset table over all kept dims but one (``ob_in``/``ob_out``)
  and a loop over the remaining one (``lk`` elements, strides ``sk_in``/``sk_out``);
* reduced dims: an offset table over all reduced dims but one (``rtab``) and a
  loop over the remaining one (``lr`` elements, stride ``sr``).

Two kernel families walk that description:

* family A (the innermost memory dim is reduced): one scalar accumulator per
  output, reducing runs of ``lr`` elements;
* family B (the innermost memory dim is kept): per tile of ``lk`` outputs, a
  vector of accumulators updated by whole rows.

For ARGMAX/ARGMIN the reduced dims stay in increasing dimension order and the
loop dim is the last one, so the linear index of an element is ``j * lr + i``.
Their plans take a direction (ARGMIN/ARGMAX's AxisDirection): DECREASING walks
each block from its last element, so the first extreme met, the result, is the
last one in index order.

Dispatches of at least _PARALLEL_MIN_ELEMENTS run on all of numba's threads:
family A hands each thread whole outputs, family B whole tiles (cut smaller
when there are too few), so every output is reduced in the same order on any
thread count; a single output (all axes reduced) is cut into segments of a
fixed size, reduced on the threads and combined in order. Long runs are read
as four interleaved streams, short ones four runs at a time: one sequential
stream leaves a core waiting on memory latency.

Kernels are grouped by what their accumulator looks like (sums/products,
min/max, arg-min/max, log-sum-exp), each handling both families and all its
functions through an op code that is branched on outside the hot loops.
FLOAT16 data travel as their uint16 bits; the ``tag`` argument (a float32
scalar for FLOAT16, an int64 scalar otherwise) makes numba compile a distinct
FLOAT16 specialisation that decodes them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic, overload

from ...types import ReduceFunction
from .float16 import F16_TAG, NATIVE_TAG, half_to_float, is_f16
from .memory_kernels import PARALLEL_LAUNCH, prefer_wide_vectors

# Plain ints, which numba freezes into the kernels as constants.
(ARGMAX, ARGMIN, AVERAGE, L1, L2, LOG_SUM, LOG_SUM_EXP, MAX, MIN, MULTIPLY, SUM,
 SUM_SQUARE) = (int(function) for function in ReduceFunction)

_FLOAT_ONLY = frozenset({AVERAGE, L2, LOG_SUM, LOG_SUM_EXP})
_INDEX_DTYPES = frozenset(np.dtype(t) for t in (np.uint32, np.int32, np.uint64, np.int64))
_INPUT_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.float16, np.float32, np.float64,
        np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64,
    )
)

# reassoc lets LLVM vectorize reductions, contract allows FMA; both keep IEEE
# NaN/inf behaviour (nnan/ninf would not).
_FASTMATH = {"reassoc", "contract"}

# Layout of the ``meta`` int64 array handed to every kernel.
(_M_OP, _M_FAMILY, _M_NOUT, _M_LK, _M_SKIN, _M_SKOUT, _M_NRTAB, _M_LR, _M_SR, _M_COUNT, _M_IDX64, _M_TILE,
 _M_UNITS, _M_CHUNKS, _M_SEGMENT, _M_DECREASING) = range(16)
_META_LEN = 16
_FAMILY_A = 0
_FAMILY_B = 1

# Family B accumulates a tile of this many outputs at once (small enough that
# the accumulator vectors stay in L2 while the rows stream sequentially).
_TILE = 8192
# Family A splits long runs into chunks this size for the two-step (chunk
# max, then a scan of the cached chunk) ARGMAX/ARGMIN and LOG_SUM_EXP.
_CHUNK = 2048
# Dispatches reading at least this many elements run on all of numba's
# threads (below it, starting them costs more than they save).
_PARALLEL_MIN_ELEMENTS = 1 << 18
# Family B tiles are at least this many outputs when cut smaller for threads.
_MIN_TILE = 256
# A single output's runs are reduced on threads in segments of this many
# elements (a constant, so that the result is the same on any thread count).
_SEGMENT = 1 << 16
# FLOAT16 partial sums in FLOAT32 cover this many elements per stream.
_HALF_BLOCK = 512
# Runs of at least this many bytes are read as four interleaved streams
# (quarters); shorter ones four runs at a time.
_STREAMS_MIN_BYTES = 16384
# An inner loop shorter than this makes the other family preferable.
_SHORT_RUN = 16

# LOG_SUM_EXP clamps x - max at this value: exp(-700) ~ 1e-304 is invisible
# next to the max term's 1, and 2^k stays a normal float64 for the bit trick.
_EXP_FLOOR = -700.0
_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453
# Float32 variant: exp(-80) ~ 2e-35 is likewise invisible and 2^k stays
# normal; ln2 split so that k * _LN2_HI32 is exact for |k| < 2^8.
_EXP_FLOOR32 = -80.0
_LN2_HI32 = 0.693145751953125
_LN2_LO32 = 1.428606765330187e-06
_EXP_BLOCK = 256
# _run_find tests blocks of this many elements before scanning one.
_FIND_BLOCK = 32



# ---------------------------------------------------------------------------
# LLVM intrinsics numba does not expose.




def _binary_float_intrinsic(name: str) -> Any:
    def typer(typingctx: Any, a: Any, b: Any) -> Any:
        if not isinstance(a, types.Float) or a != b:
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            lt = args[0].type
            fn = builder.module.declare_intrinsic(name, [lt], ir.FunctionType(lt, [lt, lt]))
            return builder.call(fn, args)

        return a(a, b), codegen

    return intrinsic(typer)


# llvm.maximum/minimum propagate NaN (the MAX/MIN ruling) and, unlike a
# compare-and-select, LLVM vectorizes reductions over them without nnan.
_fmaximum = _binary_float_intrinsic("llvm.maximum")
_fminimum = _binary_float_intrinsic("llvm.minimum")


# ---------------------------------------------------------------------------
# Type-dispatched scalar helpers. The Python bodies are never run; numba
# picks the implementation from the overloads below.


def _load(x: Any, i: Any, tag: Any) -> Any:
    """Element i widened to the accumulator type (float64/int64/uint64)."""
    raise NotImplementedError


def _loadn(x: Any, i: Any, tag: Any) -> Any:
    """Element i in its comparison type (FLOAT16 decoded to float32)."""
    raise NotImplementedError


def _acc_zero(x: Any, tag: Any) -> Any:
    """Additive identity of the accumulator type (-0.0 for floats: exact)."""
    raise NotImplementedError


def _acc_one(x: Any, tag: Any) -> Any:
    raise NotImplementedError


def _acc_empty(x: Any, tag: Any, n: Any) -> Any:
    raise NotImplementedError


def _cmp_empty(x: Any, tag: Any, n: Any) -> Any:
    raise NotImplementedError


def _store(out: Any, i: Any, v: Any, tag: Any) -> None:
    raise NotImplementedError


def _isnan(v: Any) -> Any:
    raise NotImplementedError


def _quiet(v: Any) -> Any:
    """v, or the canonical quiet NaN of its type (sign clear, zero payload) where v is NaN: the MAX/MIN ruling."""
    raise NotImplementedError


def _vmax(a: Any, b: Any) -> Any:
    raise NotImplementedError


def _vmin(a: Any, b: Any) -> Any:
    raise NotImplementedError


def _absval(v: Any) -> Any:
    raise NotImplementedError


def _finish(acc: Any, op: Any, count: Any) -> Any:
    raise NotImplementedError


@numba.njit(inline="always")
def _load_half32(x: Any, i: Any, tag: Any) -> Any:
    """FLOAT16 element i as float32 (exact)."""
    return half_to_float(x[np.uint64(i)])


def _half_accum4(x: Any, s0: int, s1: int, s2: int, s3: int, n: int, st: int, op: int, tag: Any,
                 parts: Any) -> bool:
    """For FLOAT16 data and any op but MULTIPLY: _accum4_half into parts, and True; otherwise False. Other
    dtypes never compile _accum4_half (numba types both sides of a runtime branch)."""
    raise NotImplementedError


@overload(_half_accum4)
def _half_accum4_impl(x: Any, s0: Any, s1: Any, s2: Any, s3: Any, n: Any, st: Any, op: Any, tag: Any,
                      parts: Any) -> Any:
    if is_f16(x, tag):

        def half(x: Any, s0: Any, s1: Any, s2: Any, s3: Any, n: Any, st: Any, op: Any, tag: Any,
                 parts: Any) -> Any:
            if op == MULTIPLY:
                return False
            _accum4_half(x, s0, s1, s2, s3, n, st, op, tag, parts)
            return True

        return half

    def other(x: Any, s0: Any, s1: Any, s2: Any, s3: Any, n: Any, st: Any, op: Any, tag: Any, parts: Any) -> Any:
        return False

    return other



# numba requires each implementation's signature, annotations included, to
# equal its generator's; hence the nested defs rather than lambdas.


@overload(_load)
def _load_impl(x: Any, i: Any, tag: Any) -> Any:
    if is_f16(x, tag):

        def load_f16(x: Any, i: Any, tag: Any) -> Any:
            return np.float64(half_to_float(x[np.uint64(i)]))

        return load_f16
    wide = _acc_type(x, tag)

    def load(x: Any, i: Any, tag: Any) -> Any:
        # An unsigned index spares numba's negative-index wraparound check.
        return wide(x[np.uint64(i)])

    return load


@overload(_loadn)
def _loadn_impl(x: Any, i: Any, tag: Any) -> Any:
    if is_f16(x, tag):

        def loadn_f16(x: Any, i: Any, tag: Any) -> Any:
            return half_to_float(x[np.uint64(i)])

        return loadn_f16

    def loadn(x: Any, i: Any, tag: Any) -> Any:
        return x[np.uint64(i)]

    return loadn


def _acc_type(x: Any, tag: Any) -> Any:
    if is_f16(x, tag) or isinstance(x.dtype, types.Float):
        return np.float64
    return np.int64 if x.dtype in types.signed_domain else np.uint64


@overload(_acc_zero)
def _acc_zero_impl(x: Any, tag: Any) -> Any:
    zero = _acc_type(x, tag)(-0.0)

    def acc_zero(x: Any, tag: Any) -> Any:
        return zero

    return acc_zero


@overload(_acc_one)
def _acc_one_impl(x: Any, tag: Any) -> Any:
    one = _acc_type(x, tag)(1)

    def acc_one(x: Any, tag: Any) -> Any:
        return one

    return acc_one


@overload(_acc_empty)
def _acc_empty_impl(x: Any, tag: Any, n: Any) -> Any:
    dt = _acc_type(x, tag)

    def acc_empty(x: Any, tag: Any, n: Any) -> Any:
        return np.empty(n, dt)

    return acc_empty


@overload(_cmp_empty)
def _cmp_empty_impl(x: Any, tag: Any, n: Any) -> Any:
    dt = np.float32 if is_f16(x, tag) else np.dtype(str(x.dtype))

    def cmp_empty(x: Any, tag: Any, n: Any) -> Any:
        return np.empty(n, dt)

    return cmp_empty


@overload(_store)
def _store_impl(out: Any, i: Any, v: Any, tag: Any) -> Any:
    if isinstance(tag, types.Float) and out.dtype == types.uint16:

        def store_f16(out: Any, i: Any, v: Any, tag: Any) -> None:
            out[np.uint64(i)] = _f64_to_f16_bits(np.float64(v))

        return store_f16

    def store(out: Any, i: Any, v: Any, tag: Any) -> None:
        # Integer narrowing truncates: the modulo-2^bits wrap of the rulings.
        out[np.uint64(i)] = v

    return store


@overload(_isnan)
def _isnan_impl(v: Any) -> Any:
    is_float = isinstance(v, types.Float)

    def isnan(v: Any) -> Any:
        return is_float and v != v

    return isnan


@overload(_quiet)
def _quiet_impl(v: Any) -> Any:
    if isinstance(v, types.Float):
        # NaN's bits: 0x7ff8000000000000 as float64, 0x7fc00000 as float32 (FLOAT16 stores it as 0x7e00).
        canonical = np.float64(np.nan) if v.bitwidth == 64 else np.float32(np.nan)

        def quiet(v: Any) -> Any:
            return v if v == v else canonical

        return quiet

    def same(v: Any) -> Any:
        return v

    return same


@overload(_vmax)
def _vmax_impl(a: Any, b: Any) -> Any:
    if isinstance(a, types.Float):

        def fmax(a: Any, b: Any) -> Any:
            return _fmaximum(a, b)

        return fmax

    def imax(a: Any, b: Any) -> Any:
        return a if a > b else b

    return imax


@overload(_vmin)
def _vmin_impl(a: Any, b: Any) -> Any:
    if isinstance(a, types.Float):

        def fmin(a: Any, b: Any) -> Any:
            return _fminimum(a, b)

        return fmin

    def imin(a: Any, b: Any) -> Any:
        return a if a < b else b

    return imin


@overload(_absval)
def _absval_impl(v: Any) -> Any:
    unsigned = v in types.unsigned_domain

    def absval(v: Any) -> Any:
        # For int64 abs wraps: |INT64_MIN| stays INT64_MIN, as the rulings ask.
        return v if unsigned else abs(v)

    return absval


@overload(_finish)
def _finish_impl(acc: Any, op: Any, count: Any) -> Any:
    if isinstance(acc, types.Integer):

        def finish_int(acc: Any, op: Any, count: Any) -> Any:
            return acc

        return finish_int

    def finish(acc: Any, op: Any, count: Any) -> Any:
        if op == AVERAGE:
            return acc / count
        if op == L2:
            return np.sqrt(acc)
        if op == LOG_SUM:
            return np.log(acc)
        return acc

    return finish


@numba.njit(cache=True)
def _f64_to_f16_bits(v: float) -> Any:
    """float64 -> FLOAT16 bits with one round-to-nearest-even."""
    b = np.float64(v).view(np.int64)
    sign = np.int64(0x8000) if b < 0 else np.int64(0)
    a = b & 0x7FFFFFFFFFFFFFFF
    if a > 0x7FF0000000000000:  # NaN: keep the top payload bits, force quiet
        return np.uint16(sign | 0x7E00 | ((a >> 42) & 0x3FF))
    e = (a >> 52) - 1023
    if e >= 16:
        return np.uint16(sign | 0x7C00)
    # Significand with its implicit bit (wrong for float64 subnormals, which
    # are far below FLOAT16's range and end up as zero via the shift test).
    mant = (a & 0xFFFFFFFFFFFFF) | 0x10000000000000
    if e >= -14:
        h = ((e + 15) << 10) + ((mant >> 42) & 0x3FF)
        shift = np.int64(42)
    else:
        shift = 28 - e  # subnormal: units of 2^-24
        if shift >= 64:
            return np.uint16(sign)
        h = mant >> shift
    rem = mant & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    # A carry out of the mantissa correctly bumps the exponent (up to inf).
    if rem > half or (rem == half and (h & 1) == 1):
        h += 1
    return np.uint16(sign | h)


# ---------------------------------------------------------------------------
# Inner loops over one run of n elements starting at s0 with stride st. LLVM
# versions each loop on st == 1 (symbolic-stride speculation) and vectorizes
# that version, so one loop body serves contiguous and strided runs.


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_accum1(x: Any, s0: int, n: int, st: int, op: int, tag: Any) -> Any:
    """Sum of x, |x| or x^2 (by op), or product for MULTIPLY, over one run."""
    prefer_wide_vectors()
    if op == MULTIPLY:
        p = _acc_one(x, tag)
        for i in range(n):
            p *= _load(x, s0 + i * st, tag)
        return p
    s = _acc_zero(x, tag)
    if op == L1:
        for i in range(n):
            s += _absval(_load(x, s0 + i * st, tag))
    elif op in (L2, SUM_SQUARE):
        for i in range(n):
            v = _load(x, s0 + i * st, tag)
            s += v * v
    else:
        for i in range(n):
            s += _load(x, s0 + i * st, tag)
    return s


@numba.njit(cache=True, fastmath=_FASTMATH)
def _accum4(x: Any, s0: int, s1: int, s2: int, s3: int, n: int, st: int, op: int, tag: Any, parts: Any) -> None:
    """parts[r] = _run_accum1 over run r of four runs of n elements, read at once.

    Four sequential streams keep more loads in flight than one: measured, a
    [4096, 4096] SUM over rows ran at 0.66x of a copy's time instead of 0.93x
    on one thread. Each op has its own loop: LLVM neither unswitches a shared
    one nor vectorizes it.
    """
    prefer_wide_vectors()
    if _half_accum4(x, s0, s1, s2, s3, n, st, op, tag, parts):
        return
    if op == MULTIPLY:
        p0, p1, p2, p3 = _acc_one(x, tag), _acc_one(x, tag), _acc_one(x, tag), _acc_one(x, tag)
        for i in range(n):
            p0 *= _load(x, s0 + i * st, tag)
            p1 *= _load(x, s1 + i * st, tag)
            p2 *= _load(x, s2 + i * st, tag)
            p3 *= _load(x, s3 + i * st, tag)
        parts[0], parts[1], parts[2], parts[3] = p0, p1, p2, p3
        return
    a0, a1, a2, a3 = _acc_zero(x, tag), _acc_zero(x, tag), _acc_zero(x, tag), _acc_zero(x, tag)
    if op == L1:
        for i in range(n):
            a0 += _absval(_load(x, s0 + i * st, tag))
            a1 += _absval(_load(x, s1 + i * st, tag))
            a2 += _absval(_load(x, s2 + i * st, tag))
            a3 += _absval(_load(x, s3 + i * st, tag))
    elif op in (L2, SUM_SQUARE):
        for i in range(n):
            v0, v1 = _load(x, s0 + i * st, tag), _load(x, s1 + i * st, tag)
            v2, v3 = _load(x, s2 + i * st, tag), _load(x, s3 + i * st, tag)
            a0 += v0 * v0
            a1 += v1 * v1
            a2 += v2 * v2
            a3 += v3 * v3
    else:
        for i in range(n):
            a0 += _load(x, s0 + i * st, tag)
            a1 += _load(x, s1 + i * st, tag)
            a2 += _load(x, s2 + i * st, tag)
            a3 += _load(x, s3 + i * st, tag)
    parts[0], parts[1], parts[2], parts[3] = a0, a1, a2, a3


@numba.njit(cache=True, fastmath=_FASTMATH)
def _accum4_half(x: Any, s0: int, s1: int, s2: int, s3: int, n: int, st: int, op: int, tag: Any,
                 parts: Any) -> None:
    """_accum4 for FLOAT16 SUM, AVERAGE, L1, L2, SUM_SQUARE, LOG_SUM: FLOAT32 partial sums over blocks of
    _HALF_BLOCK elements (no FLOAT16 value or square can overflow them), added in float64. Converting each
    element to float64 made the loop compute-bound (measured 0.36 against 0.06 ns per element in L1)."""
    prefer_wide_vectors()
    t0, t1, t2, t3 = 0.0, 0.0, 0.0, 0.0
    for b0 in range(0, n, _HALF_BLOCK):
        b1 = min(b0 + _HALF_BLOCK, n)
        a0, a1, a2, a3 = np.float32(0.0), np.float32(0.0), np.float32(0.0), np.float32(0.0)
        if op == L1:
            for i in range(b0, b1):
                a0 += abs(_load_half32(x, s0 + i * st, tag))
                a1 += abs(_load_half32(x, s1 + i * st, tag))
                a2 += abs(_load_half32(x, s2 + i * st, tag))
                a3 += abs(_load_half32(x, s3 + i * st, tag))
        elif op in (L2, SUM_SQUARE):
            for i in range(b0, b1):
                v0, v1 = _load_half32(x, s0 + i * st, tag), _load_half32(x, s1 + i * st, tag)
                v2, v3 = _load_half32(x, s2 + i * st, tag), _load_half32(x, s3 + i * st, tag)
                a0 += v0 * v0
                a1 += v1 * v1
                a2 += v2 * v2
                a3 += v3 * v3
        else:
            for i in range(b0, b1):
                a0 += _load_half32(x, s0 + i * st, tag)
                a1 += _load_half32(x, s1 + i * st, tag)
                a2 += _load_half32(x, s2 + i * st, tag)
                a3 += _load_half32(x, s3 + i * st, tag)
        t0 += np.float64(a0)
        t1 += np.float64(a1)
        t2 += np.float64(a2)
        t3 += np.float64(a3)
    parts[0], parts[1], parts[2], parts[3] = t0, t1, t2, t3


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_accum(x: Any, s0: int, n: int, st: int, op: int, tag: Any) -> Any:
    """_run_accum1, a long run read as four interleaved quarters (see _accum4) and then its tail, combined as
    ((q0 + q1) + (q2 + q3)) + tail."""
    if n * x.itemsize < _STREAMS_MIN_BYTES:
        return _run_accum1(x, s0, n, st, op, tag)
    q = n // 4
    parts = _acc_empty(x, tag, 4)
    _accum4(x, s0, s0 + q * st, s0 + 2 * q * st, s0 + 3 * q * st, q, st, op, tag, parts)
    tail = _run_accum1(x, s0 + 4 * q * st, n - 4 * q, st, op, tag)
    if op == MULTIPLY:
        return ((parts[0] * parts[1]) * (parts[2] * parts[3])) * tail
    return ((parts[0] + parts[1]) + (parts[2] + parts[3])) + tail


@numba.njit(cache=True, fastmath=_FASTMATH)
def _row_accum(x: Any, s0: int, n: int, st: int, acc: Any, op: int, tag: Any) -> None:
    """acc[k] (+|*)= f(x[s0 + k*st]) for k < n."""
    prefer_wide_vectors()
    if op == MULTIPLY:
        for k in range(n):
            acc[k] *= _load(x, s0 + k * st, tag)
    elif op == L1:
        for k in range(n):
            acc[k] += _absval(_load(x, s0 + k * st, tag))
    elif op in (L2, SUM_SQUARE):
        for k in range(n):
            v = _load(x, s0 + k * st, tag)
            acc[k] += v * v
    else:
        for k in range(n):
            acc[k] += _load(x, s0 + k * st, tag)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _row_accum4(x: Any, s0: int, step: int, n: int, st: int, acc: Any, op: int, tag: Any) -> None:
    """_row_accum over the four rows at s0, s0 + step, s0 + 2 step, s0 + 3 step at once (four streams, see
    _accum4): acc[k] (+|*)= (f(r0) + f(r1)) + (f(r2) + f(r3))."""
    prefer_wide_vectors()
    s1, s2, s3 = s0 + step, s0 + 2 * step, s0 + 3 * step
    if op == MULTIPLY:
        for k in range(n):
            acc[k] *= (_load(x, s0 + k * st, tag) * _load(x, s1 + k * st, tag)) * (
                _load(x, s2 + k * st, tag) * _load(x, s3 + k * st, tag))
    elif op == L1:
        for k in range(n):
            acc[k] += (_absval(_load(x, s0 + k * st, tag)) + _absval(_load(x, s1 + k * st, tag))) + (
                _absval(_load(x, s2 + k * st, tag)) + _absval(_load(x, s3 + k * st, tag)))
    elif op in (L2, SUM_SQUARE):
        for k in range(n):
            v0, v1 = _load(x, s0 + k * st, tag), _load(x, s1 + k * st, tag)
            v2, v3 = _load(x, s2 + k * st, tag), _load(x, s3 + k * st, tag)
            acc[k] += (v0 * v0 + v1 * v1) + (v2 * v2 + v3 * v3)
    else:
        for k in range(n):
            acc[k] += (_load(x, s0 + k * st, tag) + _load(x, s1 + k * st, tag)) + (
                _load(x, s2 + k * st, tag) + _load(x, s3 + k * st, tag))


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_extreme(x: Any, s0: int, n: int, st: int, is_min: bool, tag: Any) -> Any:
    """Max (or min) of one run, NaN if the run holds a NaN. A long run is read as four interleaved quarters
    (four streams, see _accum4); max and min do not depend on the order."""
    prefer_wide_vectors()
    m = _loadn(x, s0, tag)
    q = n // 4 if n * x.itemsize >= _STREAMS_MIN_BYTES else 0
    s1, s2, s3 = s0 + q * st, s0 + 2 * q * st, s0 + 3 * q * st
    m1, m2, m3 = _loadn(x, s1, tag), _loadn(x, s2, tag), _loadn(x, s3, tag)
    if is_min:
        for i in range(q):
            m = _vmin(m, _loadn(x, s0 + i * st, tag))
            m1 = _vmin(m1, _loadn(x, s1 + i * st, tag))
            m2 = _vmin(m2, _loadn(x, s2 + i * st, tag))
            m3 = _vmin(m3, _loadn(x, s3 + i * st, tag))
        m = _vmin(_vmin(m, m1), _vmin(m2, m3))
        for i in range(4 * q, n):
            m = _vmin(m, _loadn(x, s0 + i * st, tag))
    else:
        for i in range(q):
            m = _vmax(m, _loadn(x, s0 + i * st, tag))
            m1 = _vmax(m1, _loadn(x, s1 + i * st, tag))
            m2 = _vmax(m2, _loadn(x, s2 + i * st, tag))
            m3 = _vmax(m3, _loadn(x, s3 + i * st, tag))
        m = _vmax(_vmax(m, m1), _vmax(m2, m3))
        for i in range(4 * q, n):
            m = _vmax(m, _loadn(x, s0 + i * st, tag))
    return m


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_find(x: Any, s0: int, n: int, st: int, target: Any, tag: Any) -> int:
    """Index of the first element equal to target (the first NaN if target is NaN).

    Counts matches per block in a vectorizable loop and scans only the block
    that has one.
    """
    prefer_wide_vectors()
    want_nan = _isnan(target)
    for b0 in range(0, n, _FIND_BLOCK):
        b1 = min(b0 + _FIND_BLOCK, n)
        hits = 0
        for i in range(b0, b1):
            v = _loadn(x, s0 + i * st, tag)
            hits += (v == target) | (want_nan & (v != v))
        if hits:
            for i in range(b0, b1):
                v = _loadn(x, s0 + i * st, tag)
                if v == target or (want_nan and v != v):
                    return i
    return n


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_find_last(x: Any, s0: int, n: int, st: int, target: Any, tag: Any) -> int:
    """Index of the last element equal to target (the last NaN if target is NaN): _run_find from the end."""
    prefer_wide_vectors()
    want_nan = _isnan(target)
    b1 = n
    while b1 > 0:
        b0 = max(b1 - _FIND_BLOCK, 0)
        hits = 0
        for i in range(b0, b1):
            v = _loadn(x, s0 + i * st, tag)
            hits += (v == target) | (want_nan & (v != v))
        if hits:
            for i in range(b1 - 1, b0 - 1, -1):
                v = _loadn(x, s0 + i * st, tag)
                if v == target or (want_nan and v != v):
                    return i
        b1 = b0
    return -1


@numba.njit(cache=True)
def _expneg(t: float) -> float:
    """Float64 exp(t) for t in [_EXP_FLOOR, 0], vectorizable.

    2^k via exponent bits times a degree-13 Taylor polynomial (~4e-18
    relative error on |r| <= ln2/2). A Cody-Waite split of ln2 is unnecessary
    here: the reduction error grows with |k| but multiplies exp(t) < 2^-k, so
    every term's absolute error stays below one ulp of the max term's 1.
    """
    k = np.floor(t * _LOG2E + 0.5)
    r = t - k * _LN2
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = np.int64((np.int64(k) + 1023) << 52).view(np.float64)
    return float(p * scale)


# Without reassoc so that the two-constant ln2 split survives; contract
# still fuses the polynomial into FMAs.
@numba.njit(cache=True, fastmath={"contract"})
def _expneg32(t: np.float32) -> np.float32:
    """Float32 exp(t) for t in [_EXP_FLOOR32, 0], ~8e-8 relative error.

    Twice the SIMD width of _expneg, for FLOAT32/FLOAT16 inputs.
    """
    k = np.floor(t * np.float32(_LOG2E) + np.float32(0.5))
    r = t - k * np.float32(_LN2_HI32)
    r = r - k * np.float32(_LN2_LO32)
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    # (k + 127) << 23 computed in float (exact: few significant bits).
    scale = np.int32(k * np.float32(8388608.0) + np.float32(1065353216.0)).view(np.float32)
    return np.float32(p * scale)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _run_expsum(x: Any, s0: int, n: int, st: int, m: float, tag: Any) -> float:
    """Sum of exp(x - m) over a run whose elements are all <= m (no NaN)."""
    prefer_wide_vectors()
    s = 0.0
    if x.itemsize == 8:
        for i in range(n):
            t = np.float64(_loadn(x, s0 + i * st, tag)) - m
            s += _expneg(t if t > _EXP_FLOOR else _EXP_FLOOR)
        return s
    # m is an input element, so exact in float32. Blocks of float32 partial
    # sums keep the vector width at 8 lanes; each block's sum (terms <= 1,
    # spread over the vectorizer's partial sums) is then added in float64.
    m32 = np.float32(m)
    floor32 = np.float32(_EXP_FLOOR32)
    for b0 in range(0, n, _EXP_BLOCK):
        bs = np.float32(0.0)
        for i in range(b0, min(b0 + _EXP_BLOCK, n)):
            t32 = _loadn(x, s0 + i * st, tag) - m32
            bs += _expneg32(t32 if t32 > floor32 else floor32)
        s += float(bs)
    return s


@numba.njit(cache=True)
def _store_index(out32: Any, pos: int, idx: int, idx64: bool) -> None:
    """Write an index into an int32 view of a 32- or 64-bit index tensor.

    One int32 view serves all four index dtypes (indices are non-negative),
    so each input dtype needs a single ARGMAX/ARGMIN specialisation. 64-bit
    elements are written as two little-endian halves.
    """
    if idx64:
        out32[2 * pos] = idx & 0xFFFFFFFF
        out32[2 * pos + 1] = idx >> 32
    else:
        out32[pos] = idx


# ---------------------------------------------------------------------------
# Kernels: one numba dispatch per plan call.


@numba.njit(cache=True, fastmath=_FASTMATH)
def _accum_kernel(x: Any, out: Any, meta: Any, tab: Any, tag: Any, u0: int, u1: int) -> None:
    """SUM, AVERAGE, L1, L2, LOG_SUM, SUM_SQUARE, MULTIPLY."""
    prefer_wide_vectors()
    op = meta[_M_OP]
    n_out = meta[_M_NOUT]
    lk = meta[_M_LK]
    sk_in = meta[_M_SKIN]
    sk_out = meta[_M_SKOUT]
    n_rtab = meta[_M_NRTAB]
    lr = meta[_M_LR]
    sr = meta[_M_SR]
    count = meta[_M_COUNT]
    ob_in = tab[:n_out]
    ob_out = tab[n_out : 2 * n_out]
    rtab = tab[2 * n_out : 2 * n_out + n_rtab]
    mul = op == MULTIPLY
    if meta[_M_FAMILY] == _FAMILY_A:
        # Short runs go four at a time, for the streams (see _accum4): four outputs' runs where each output has
        # one, else four runs of the same output.
        parts = _acc_empty(x, tag, 4)
        short = lr * x.itemsize < _STREAMS_MIN_BYTES
        first_unit = u0
        if short and n_rtab == 1:
            starts = np.empty(4, np.int64)
            targets = np.empty(4, np.int64)
            for u in range(u0, u1 - 3, 4):
                for r in range(4):
                    o = (u + r) // lk
                    k = u + r - o * lk
                    starts[r] = ob_in[o] + k * sk_in + rtab[0]
                    targets[r] = ob_out[o] + k * sk_out
                _accum4(x, starts[0], starts[1], starts[2], starts[3], lr, sr, op, tag, parts)
                for r in range(4):
                    _store(out, targets[r], _finish(parts[r], op, count), tag)
                first_unit = u + 4
        for u in range(first_unit, u1):
            o = u // lk
            k = u - o * lk
            base = ob_in[o] + k * sk_in
            acc = _run_accum(x, base + rtab[0], lr, sr, op, tag)
            first = 1
            if short:
                for j in range(1, n_rtab - 3, 4):
                    _accum4(x, base + rtab[j], base + rtab[j + 1], base + rtab[j + 2], base + rtab[j + 3], lr, sr,
                            op, tag, parts)
                    if mul:
                        acc *= (parts[0] * parts[1]) * (parts[2] * parts[3])
                    else:
                        acc += (parts[0] + parts[1]) + (parts[2] + parts[3])
                    first = j + 4
            for j in range(first, n_rtab):
                part = _run_accum(x, base + rtab[j], lr, sr, op, tag)
                acc = acc * part if mul else acc + part
            _store(out, ob_out[o] + k * sk_out, _finish(acc, op, count), tag)
        return
    tile = meta[_M_TILE]
    n_tiles = (lk + tile - 1) // tile
    accv = _acc_empty(x, tag, min(lk, tile))
    for u in range(u0, u1):
        o = u // n_tiles
        t0 = (u - o * n_tiles) * tile
        tl = min(tile, lk - t0)
        accv[:tl] = _acc_one(x, tag) if mul else _acc_zero(x, tag)
        base = ob_in[o] + t0 * sk_in
        for j in range(n_rtab):
            for i in range(0, lr - 3, 4):
                _row_accum4(x, base + rtab[j] + i * sr, sr, tl, sk_in, accv, op, tag)
            for i in range(lr - lr % 4, lr):
                _row_accum(x, base + rtab[j] + i * sr, tl, sk_in, accv, op, tag)
        obase = ob_out[o] + t0 * sk_out
        for k in range(tl):
            _store(out, obase + k * sk_out, _finish(accv[k], op, count), tag)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _extreme_kernel(x: Any, out: Any, meta: Any, tab: Any, tag: Any, u0: int, u1: int) -> None:
    """MAX, MIN (NaN-propagating: a NaN result is stored as the canonical quiet NaN, whichever NaN came first)."""
    prefer_wide_vectors()
    is_min = meta[_M_OP] == MIN
    n_out = meta[_M_NOUT]
    lk = meta[_M_LK]
    sk_in = meta[_M_SKIN]
    sk_out = meta[_M_SKOUT]
    n_rtab = meta[_M_NRTAB]
    lr = meta[_M_LR]
    sr = meta[_M_SR]
    ob_in = tab[:n_out]
    ob_out = tab[n_out : 2 * n_out]
    rtab = tab[2 * n_out : 2 * n_out + n_rtab]
    if meta[_M_FAMILY] == _FAMILY_A:
        for u in range(u0, u1):
            o = u // lk
            k = u - o * lk
            base = ob_in[o] + k * sk_in
            m = _run_extreme(x, base + rtab[0], lr, sr, is_min, tag)
            for j in range(1, n_rtab):
                part = _run_extreme(x, base + rtab[j], lr, sr, is_min, tag)
                m = _vmin(m, part) if is_min else _vmax(m, part)
            _store(out, ob_out[o] + k * sk_out, _quiet(m), tag)
        return
    tile = meta[_M_TILE]
    n_tiles = (lk + tile - 1) // tile
    accv = _cmp_empty(x, tag, min(lk, tile))
    for u in range(u0, u1):
        o = u // n_tiles
        t0 = (u - o * n_tiles) * tile
        tl = min(tile, lk - t0)
        base = ob_in[o] + t0 * sk_in
        for k in range(tl):
            accv[k] = _loadn(x, base + rtab[0] + k * sk_in, tag)
        for j in range(n_rtab):
            for i in range(lr):
                rb = base + rtab[j] + i * sr
                if is_min:
                    for k in range(tl):
                        accv[k] = _vmin(accv[k], _loadn(x, rb + k * sk_in, tag))
                else:
                    for k in range(tl):
                        accv[k] = _vmax(accv[k], _loadn(x, rb + k * sk_in, tag))
        obase = ob_out[o] + t0 * sk_out
        for k in range(tl):
            _store(out, obase + k * sk_out, _quiet(accv[k]), tag)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _arg_kernel(x: Any, out: Any, meta: Any, tab: Any, tag: Any, u0: int, u1: int) -> None:
    """ARGMAX, ARGMIN: the first extreme in walking order; the first NaN met beats all. The walk is the
    increasing linear order, or with meta[_M_DECREASING] the decreasing one (the last extreme, the last NaN)."""
    prefer_wide_vectors()
    is_min = meta[_M_OP] == ARGMIN
    decreasing = meta[_M_DECREASING] == 1
    idx64 = meta[_M_IDX64] == 1
    n_out = meta[_M_NOUT]
    lk = meta[_M_LK]
    sk_in = meta[_M_SKIN]
    sk_out = meta[_M_SKOUT]
    n_rtab = meta[_M_NRTAB]
    lr = meta[_M_LR]
    sr = meta[_M_SR]
    ob_in = tab[:n_out]
    ob_out = tab[n_out : 2 * n_out]
    rtab = tab[2 * n_out : 2 * n_out + n_rtab]
    # The walk's first element: run `first_j`, element `first_i`; runs and rows are then taken in walking order.
    first_j = n_rtab - 1 if decreasing else 0
    first_i = lr - 1 if decreasing else 0
    if meta[_M_FAMILY] == _FAMILY_A:
        n_chunks = (lr + _CHUNK - 1) // _CHUNK
        for u in range(u0, u1):
            o = u // lk
            k = u - o * lk
            base = ob_in[o] + k * sk_in
            best = _loadn(x, base + rtab[first_j] + first_i * sr, tag)
            best_i = first_j * lr + first_i
            # Chunk extreme first (vectorized), then locate it inside the
            # chunk, which is still in cache, only when it improves.
            for jw in range(n_rtab):
                j = n_rtab - 1 - jw if decreasing else jw
                rb = base + rtab[j]
                for cw in range(n_chunks):
                    c0 = (n_chunks - 1 - cw if decreasing else cw) * _CHUNK
                    cn = min(_CHUNK, lr - c0)
                    cb = rb + c0 * sr
                    cm = _run_extreme(x, cb, cn, sr, is_min, tag)
                    better = cm < best if is_min else cm > best
                    if better or _isnan(cm):
                        best = cm
                        if decreasing:
                            best_i = j * lr + c0 + _run_find_last(x, cb, cn, sr, cm, tag)
                        else:
                            best_i = j * lr + c0 + _run_find(x, cb, cn, sr, cm, tag)
                        if _isnan(cm):
                            break
                if _isnan(best):
                    break
            _store_index(out, ob_out[o] + k * sk_out, best_i, idx64)
        return
    tile = meta[_M_TILE]
    n_tiles = (lk + tile - 1) // tile
    bestv = _cmp_empty(x, tag, min(lk, tile))
    idxv = np.empty(min(lk, tile), np.int64)
    for u in range(u0, u1):
        o = u // n_tiles
        t0 = (u - o * n_tiles) * tile
        tl = min(tile, lk - t0)
        base = ob_in[o] + t0 * sk_in
        first = base + rtab[first_j] + first_i * sr
        for k in range(tl):
            bestv[k] = _loadn(x, first + k * sk_in, tag)
            idxv[k] = first_j * lr + first_i
        for jw in range(n_rtab):
            j = n_rtab - 1 - jw if decreasing else jw
            for iw in range(lr):
                i = lr - 1 - iw if decreasing else iw
                rb = base + rtab[j] + i * sr
                lin = j * lr + i
                for k in range(tl):
                    v = _loadn(x, rb + k * sk_in, tag)
                    b = bestv[k]
                    better = v < b if is_min else v > b
                    # Once best is NaN nothing replaces it: the first NaN met wins.
                    if better or (_isnan(v) and not _isnan(b)):
                        bestv[k] = v
                        idxv[k] = lin
        obase = ob_out[o] + t0 * sk_out
        for k in range(tl):
            _store_index(out, obase + k * sk_out, idxv[k], idx64)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _lse_kernel(x: Any, out: Any, meta: Any, tab: Any, tag: Any, u0: int, u1: int) -> None:
    """LOG_SUM_EXP = m + log(sum exp(x - m)) with m the running max."""
    prefer_wide_vectors()
    n_out = meta[_M_NOUT]
    lk = meta[_M_LK]
    sk_in = meta[_M_SKIN]
    sk_out = meta[_M_SKOUT]
    n_rtab = meta[_M_NRTAB]
    lr = meta[_M_LR]
    sr = meta[_M_SR]
    ob_in = tab[:n_out]
    ob_out = tab[n_out : 2 * n_out]
    rtab = tab[2 * n_out : 2 * n_out + n_rtab]
    hi = x.itemsize == 8
    floor32 = np.float32(_EXP_FLOOR32)
    if meta[_M_FAMILY] == _FAMILY_A:
        for u in range(u0, u1):
            o = u // lk
            k = u - o * lk
            base = ob_in[o] + k * sk_in
            # One pass over memory: per cached chunk take its max, rescale
            # the running sum if the max grew, then add the chunk's exps.
            m = -np.inf
            s = 0.0
            for j in range(n_rtab):
                rb = base + rtab[j]
                for c0 in range(0, lr, _CHUNK):
                    cn = min(_CHUNK, lr - c0)
                    cb = rb + c0 * sr
                    cm = np.float64(_run_extreme(x, cb, cn, sr, False, tag))
                    if cm > m:
                        if s != 0.0:
                            s *= math.exp(m - cm)
                        m = cm
                    elif cm != cm:
                        m = cm
                    if m != m:
                        break
                    # +inf decides the result (unless a NaN follows); a
                    # chunk of -inf adds nothing.
                    if m == np.inf or cm == -np.inf:
                        continue
                    s += _run_expsum(x, cb, cn, sr, m, tag)
                if m != m:
                    break
            r = m if (m != m or m == np.inf or m == -np.inf) else m + math.log(s)
            _store(out, ob_out[o] + k * sk_out, r, tag)
        return
    tile = meta[_M_TILE]
    n_tiles = (lk + tile - 1) // tile
    tmax = min(lk, tile)
    mv = np.empty(tmax, np.float64)
    sv = np.empty(tmax, np.float64)
    for u in range(u0, u1):
        o = u // n_tiles
        t0 = (u - o * n_tiles) * tile
        tl = min(tile, lk - t0)
        base = ob_in[o] + t0 * sk_in
        for k in range(tl):
            mv[k] = -np.inf
            sv[k] = 0.0
        for j in range(n_rtab):
            for i in range(lr):
                rb = base + rtab[j] + i * sr
                for k in range(tl):
                    mv[k] = _fmaximum(mv[k], np.float64(_loadn(x, rb + k * sk_in, tag)))
        # Non-finite maxima make t NaN or -inf below; the clamp keeps
        # such lanes harmless and the final step ignores their sums.
        for j in range(n_rtab):
            for i in range(lr):
                rb = base + rtab[j] + i * sr
                if hi:
                    for k in range(tl):
                        t = np.float64(_loadn(x, rb + k * sk_in, tag)) - mv[k]
                        sv[k] += _expneg(t if t > _EXP_FLOOR else _EXP_FLOOR)
                else:
                    for k in range(tl):
                        t32 = _loadn(x, rb + k * sk_in, tag) - np.float32(mv[k])
                        sv[k] += _expneg32(t32 if t32 > floor32 else floor32)
        obase = ob_out[o] + t0 * sk_out
        for k in range(tl):
            m = mv[k]
            r = m if (m != m or m == np.inf or m == -np.inf) else m + math.log(sv[k])
            _store(out, obase + k * sk_out, r, tag)


# ---------------------------------------------------------------------------
# Threads. Each output element is computed by one thread, in the same order as
# on one thread, so results do not depend on the thread count. A plan's work
# is meta[_M_UNITS] units (family A: one output element; family B: one tile of
# outputs) split into meta[_M_CHUNKS] chunks. One wrapper per kernel: numba
# caches neither closures nor functions that take a kernel as an argument
# (measured: such a wrapper compiled again in every process, 1.7 s).


@numba.njit(cache=True, parallel=True)
def _accum_threads(x: Any, out: Any, meta: Any, tab: Any, tag: Any) -> None:
    units, chunks = meta[_M_UNITS], meta[_M_CHUNKS]
    for c in numba.prange(chunks):
        _accum_kernel(x, out, meta, tab, tag, c * units // chunks, (c + 1) * units // chunks)


@numba.njit(cache=True, parallel=True)
def _extreme_threads(x: Any, out: Any, meta: Any, tab: Any, tag: Any) -> None:
    units, chunks = meta[_M_UNITS], meta[_M_CHUNKS]
    for c in numba.prange(chunks):
        _extreme_kernel(x, out, meta, tab, tag, c * units // chunks, (c + 1) * units // chunks)


@numba.njit(cache=True, parallel=True)
def _arg_threads(x: Any, out: Any, meta: Any, tab: Any, tag: Any) -> None:
    units, chunks = meta[_M_UNITS], meta[_M_CHUNKS]
    for c in numba.prange(chunks):
        _arg_kernel(x, out, meta, tab, tag, c * units // chunks, (c + 1) * units // chunks)


@numba.njit(cache=True, parallel=True)
def _lse_threads(x: Any, out: Any, meta: Any, tab: Any, tag: Any) -> None:
    units, chunks = meta[_M_UNITS], meta[_M_CHUNKS]
    for c in numba.prange(chunks):
        _lse_kernel(x, out, meta, tab, tag, c * units // chunks, (c + 1) * units // chunks)


@numba.njit(cache=True, fastmath=_FASTMATH, parallel=True)
def _split_threads(x: Any, out: Any, meta: Any, tab: Any, tag: Any) -> None:
    """One output element of a family-A plan (all axes reduced, say): the runs are cut into segments of
    meta[_M_SEGMENT] elements, reduced on all threads, and the partial results combined in segment order. The
    segments do not depend on the thread count, so neither does the result. Accumulating functions and MAX/MIN
    only. (The segment size travels in meta, not as a global: numba freezes globals into the cached code.)"""
    op = meta[_M_OP]
    n_rtab, lr, sr, segment = meta[_M_NRTAB], meta[_M_LR], meta[_M_SR], meta[_M_SEGMENT]
    base, target = tab[0], tab[1]
    rtab = tab[2 : 2 + n_rtab]
    per_run = (lr + segment - 1) // segment
    segments = n_rtab * per_run
    if op == MAX or op == MIN:  # noqa: SIM109 (two integer compares, as numba compiles them)
        extremes = _cmp_empty(x, tag, segments)
        for g in numba.prange(segments):
            j = g // per_run
            c0 = (g - j * per_run) * segment
            extremes[g] = _run_extreme(x, base + rtab[j] + c0 * sr, min(segment, lr - c0), sr, op == MIN, tag)
        m = extremes[0]
        for g in range(1, segments):
            m = _vmin(m, extremes[g]) if op == MIN else _vmax(m, extremes[g])
        _store(out, target, _quiet(m), tag)
        return
    partials = _acc_empty(x, tag, segments)
    for g in numba.prange(segments):
        j = g // per_run
        c0 = (g - j * per_run) * segment
        partials[g] = _run_accum(x, base + rtab[j] + c0 * sr, min(segment, lr - c0), sr, op, tag)
    acc = partials[0]
    for g in range(1, segments):
        if op == MULTIPLY:
            acc *= partials[g]
        else:
            acc += partials[g]
    _store(out, target, _finish(acc, op, meta[_M_COUNT]), tag)


# ---------------------------------------------------------------------------
# Planning.

_Kernel = Callable[..., None]
_THREADS: dict[_Kernel, _Kernel] = {
    _accum_kernel: _accum_threads, _extreme_kernel: _extreme_threads, _arg_kernel: _arg_threads,
    _lse_kernel: _lse_threads,
}
_KERNELS: dict[int, _Kernel] = {
    AVERAGE: _accum_kernel,
    L1: _accum_kernel,
    L2: _accum_kernel,
    LOG_SUM: _accum_kernel,
    MULTIPLY: _accum_kernel,
    SUM: _accum_kernel,
    SUM_SQUARE: _accum_kernel,
    MAX: _extreme_kernel,
    MIN: _extreme_kernel,
    ARGMAX: _arg_kernel,
    ARGMIN: _arg_kernel,
    LOG_SUM_EXP: _lse_kernel,
}


class ReducePlan:
    """A compiled REDUCE: call with (x, out) flat arrays, see module docstring."""

    __slots__ = ("_kernel", "_meta", "_out_view", "_tab", "_tag", "_threaded", "_units", "_x_view")

    def __init__(
        self,
        kernel: _Kernel,
        meta: npt.NDArray[np.int64],
        tab: npt.NDArray[np.int64],
        tag: np.float32 | np.int64,
        x_view: np.dtype[Any] | None,
        out_view: np.dtype[Any] | None,
        threaded: _Kernel | None = None,
    ) -> None:
        self._kernel = kernel
        self._meta = meta
        self._tab = tab
        self._tag = tag
        self._x_view = x_view
        self._out_view = out_view
        self._threaded = threaded
        self._units = int(meta[_M_UNITS])

    def __call__(self, x: np.ndarray[Any, Any], out: np.ndarray[Any, Any]) -> None:
        if self._x_view is not None:
            x = x.view(self._x_view)
        if self._out_view is not None:
            out = out.view(self._out_view)
        if self._threaded is not None:
            with PARALLEL_LAUNCH:
                self._threaded(x, out, self._meta, self._tab, self._tag)
        else:
            self._kernel(x, out, self._meta, self._tab, self._tag, 0, self._units)


#: Functions whose NumPy reduction of a contiguous run matches the rulings and beats a one-thread numba loop, used
#: below _PARALLEL_MIN_ELEMENTS: NumPy's SIMD argmax/argmin return the first extreme and the first NaN, and its
#: max/min propagate NaN. Larger dispatches take the numba kernels on all threads. (A DECREASING walk is not NumPy's:
#: its argmax of a reversed view copies the rows first, 3-4x slower than the numba kernel.)
_NUMPY_RUN_FUNCTIONS = frozenset({ARGMAX, ARGMIN, MAX, MIN})


class _NumpyRunPlan:
    """A REDUCE whose input is `rows` contiguous runs of `length` elements (rows `row_stride` apart), one output
    element per run, done with NumPy's vectorized reductions over a strided 2-D view."""

    __slots__ = ("_function", "_in_dtype", "_in_shape", "_in_strides", "_out_dtype", "_out_strides", "_rows")

    def __init__(self, function: int, input_dtype: np.dtype[Any], output_dtype: np.dtype[Any], rows: int,
                 row_stride: int, length: int, out_stride: int) -> None:
        self._function = function
        self._in_dtype, self._out_dtype = input_dtype, output_dtype
        self._rows = rows
        self._in_shape = (rows, length)
        self._in_strides = (row_stride * input_dtype.itemsize, input_dtype.itemsize)
        self._out_strides = (out_stride * output_dtype.itemsize,)

    def __call__(self, x: np.ndarray[Any, Any], out: np.ndarray[Any, Any]) -> None:
        # np.ndarray over a buffer checks that the view stays inside it.
        source = np.ndarray(self._in_shape, self._in_dtype, buffer=x, strides=self._in_strides)
        target = np.ndarray((self._rows,), self._out_dtype, buffer=out, strides=self._out_strides)
        function = self._function
        if function in (MAX, MIN):
            (np.max if function == MAX else np.min)(source, axis=1, out=target)
            if target.dtype.kind == "f":
                # Which NaN NumPy propagates depends on its SIMD loop: a NaN result is the canonical quiet NaN.
                np.copyto(target, np.nan, where=np.isnan(target))
        else:  # the index comes as intp; a per-call buffer keeps concurrent dispatches apart
            index = np.argmax(source, axis=1) if function == ARGMAX else np.argmin(source, axis=1)
            target[...] = index


def _offsets(sizes: list[int], strides: list[int]) -> npt.NDArray[np.int64]:
    """Row-major table of sum(i_d * stride_d) over the given dims."""
    off = np.zeros(1, np.int64)
    for size, stride in zip(sizes, strides, strict=True):
        off = (off[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
    return off


def _merge(dims: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Merge neighbours (outer first) whose strides say they form one dim.

    Each dim is (size, stride, ...more strides); all strides must agree.
    """
    merged: list[tuple[int, ...]] = []
    for d in dims:
        if merged:
            p = merged[-1]
            if all(ps == s * d[0] for ps, s in zip(p[1:], d[1:], strict=True)):
                merged[-1] = (p[0] * d[0], *d[1:])
                continue
        merged.append(d)
    return merged


def _check(function: int, input_dtype: np.dtype[Any], output_dtype: np.dtype[Any],
           input_sizes: tuple[int, ...], input_strides: tuple[int, ...],
           output_strides: tuple[int, ...], axes: tuple[int, ...], decreasing: bool) -> None:
    rank = len(input_sizes)
    if function not in _KERNELS:
        raise ValueError(f"unknown reduce function {function}")
    if decreasing and function not in (ARGMAX, ARGMIN):
        raise ValueError("only ARGMAX and ARGMIN walk in a direction")
    if input_dtype not in _INPUT_DTYPES:
        raise ValueError(f"unsupported input dtype {input_dtype}")
    if function in (ARGMAX, ARGMIN):
        if output_dtype not in _INDEX_DTYPES:
            raise ValueError(f"unsupported index dtype {output_dtype}")
    elif output_dtype != input_dtype and not (input_dtype.kind == "f" and output_dtype == np.float64):
        # float64 from a floating input: the accumulator unrounded (Dask's partials, dask_graph.py).
        raise ValueError("output dtype must equal input dtype (or be float64 for a floating input)")
    if function in _FLOAT_ONLY and input_dtype.kind != "f":
        raise ValueError("function needs a floating-point input")
    if not 1 <= rank <= 8 or len(input_strides) != rank or len(output_strides) != rank:
        raise ValueError("sizes and strides must have one rank in 1..8")
    if not axes or len(set(axes)) != len(axes) or not all(0 <= a < rank for a in axes):
        raise ValueError(f"bad axes {axes}")
    if min(input_sizes) < 1 or min(input_strides) < 0 or min(output_strides) < 0:
        raise ValueError("sizes must be >= 1 and strides >= 0")


def make_reduce_plan(function: int, input_dtype: np.dtype[Any], output_dtype: np.dtype[Any],
                     input_sizes: tuple[int, ...], input_strides: tuple[int, ...],
                     output_strides: tuple[int, ...], axes: tuple[int, ...],
                     decreasing: bool = False) -> ReducePlan | _NumpyRunPlan:
    """Plan a REDUCE of a strided tensor over ``axes`` (see module docstring). ``decreasing``: ARGMAX/ARGMIN
    walk each block from its end, so ties (and NaNs) go to the last index (AxisDirection DECREASING)."""
    input_dtype = np.dtype(input_dtype)
    output_dtype = np.dtype(output_dtype)
    _check(function, input_dtype, output_dtype, input_sizes, input_strides,
           output_strides, axes, decreasing)
    is_arg = function in (ARGMAX, ARGMIN)
    axis_set = set(axes)
    rank = len(input_sizes)
    # Size-1 dims address nothing. Reduced dims start in increasing dimension
    # order, the order ARGMAX/ARGMIN linearize in.
    kept: list[tuple[int, ...]] = [
        (input_sizes[d], input_strides[d], output_strides[d])
        for d in range(rank) if d not in axis_set and input_sizes[d] > 1
    ]
    red: list[tuple[int, ...]] = [
        (input_sizes[d], input_strides[d]) for d in range(rank)
        if d in axis_set and input_sizes[d] > 1
    ]
    count = math.prod(input_sizes[d] for d in axes)
    # Any order is fine for kept dims and (except for arg) reduced dims: sort
    # outermost = largest stride so that memory-contiguous dims merge.
    kept = _merge(sorted(kept, key=lambda d: (-d[1], -d[2])))
    red = _merge(red if is_arg else sorted(red, key=lambda d: -d[1]))
    if not red:
        red = [(1, 0)]
    if not kept:
        kept = [(1, 0, 0)]

    threads = numba.get_num_threads()
    large = math.prod(input_sizes) >= _PARALLEL_MIN_ELEMENTS
    parallel = threads > 1 and large
    # Segments decide the order of a single output's sum, so they are used whatever the thread count.
    splittable = large and function not in (ARGMAX, ARGMIN, LOG_SUM_EXP)
    if function in _NUMPY_RUN_FUNCTIONS and input_dtype != np.float16 and not decreasing and len(kept) == 1 \
            and len(red) == 1 and red[0][1] == 1 and not parallel and not (splittable and kept == [(1, 0, 0)]):
        (rows, row_stride, out_stride), (length, _) = kept[0], red[0]
        return _NumpyRunPlan(function, input_dtype, output_dtype, rows, row_stride, length, out_stride)

    # The loop dims: the kept dim with the smallest nonzero input stride, and
    # the reduced one likewise (for arg: the last one, see module docstring).
    def stride_key(d: tuple[int, ...]) -> tuple[bool, int]:
        return (d[1] == 0, d[1])

    k_loop = min(range(len(kept)), key=lambda i: stride_key(kept[i]))
    r_loop = len(red) - 1 if is_arg else min(range(len(red)), key=lambda i: stride_key(red[i]))
    kd = kept[k_loop]
    rd = red[r_loop]
    # Vectorize along the smaller stride; but a very short inner loop costs
    # more in per-run overhead than the other family's strided access does.
    family = _FAMILY_A if stride_key(rd) <= stride_key(kd) else _FAMILY_B
    inner_len = rd[0] if family == _FAMILY_A else kd[0]
    other_len = kd[0] if family == _FAMILY_A else rd[0]
    if inner_len < _SHORT_RUN and other_len > inner_len:
        family = _FAMILY_B if family == _FAMILY_A else _FAMILY_A

    kept_rest = kept[:k_loop] + kept[k_loop + 1 :]
    red_rest = red[:r_loop] + red[r_loop + 1 :]
    ob_in = _offsets([d[0] for d in kept_rest], [d[1] for d in kept_rest])
    ob_out = _offsets([d[0] for d in kept_rest], [d[2] for d in kept_rest])
    rtab = _offsets([d[0] for d in red_rest], [d[1] for d in red_rest])
    meta = np.zeros(_META_LEN, np.int64)
    meta[_M_OP] = function
    meta[_M_FAMILY] = family
    meta[_M_NOUT] = ob_in.size
    meta[_M_LK], meta[_M_SKIN], meta[_M_SKOUT] = kd
    meta[_M_NRTAB] = rtab.size
    meta[_M_LR], meta[_M_SR] = rd
    meta[_M_COUNT] = count
    meta[_M_IDX64] = output_dtype.itemsize == 8
    tab = np.concatenate([ob_in, ob_out, rtab])
    tile = _TILE
    if parallel and family == _FAMILY_B and ob_in.size * -(-kd[0] // tile) < 2 * threads:
        # Too few tiles to go round: cut the outputs into at least two per thread.
        tile = max(_MIN_TILE, -(-kd[0] // (2 * threads * 16)) * 16)
    units = ob_in.size * (kd[0] if family == _FAMILY_A else -(-kd[0] // tile))
    meta[_M_TILE] = tile
    meta[_M_UNITS] = units
    meta[_M_CHUNKS] = min(units, 4 * threads)
    meta[_M_SEGMENT] = _SEGMENT
    meta[_M_DECREASING] = int(decreasing)
    kernel = _KERNELS[function]
    threaded: _Kernel | None = None
    if parallel and units > 1:
        threaded = _THREADS[kernel]
    elif splittable and units == 1 and family == _FAMILY_A and rd[0] * rtab.size >= 2 * _SEGMENT:
        threaded = _split_threads

    # FLOAT16 travels as its bits; indices of all four dtypes go through an
    # int32 view (see _store_index).
    half = input_dtype == np.float16
    x_view: np.dtype[Any] | None = np.dtype(np.uint16) if half else None
    out_view = x_view if output_dtype == input_dtype else None
    if is_arg:
        out_view = np.dtype(np.int32)
        if output_dtype.itemsize == 8 and sys.byteorder != "little":
            raise NotImplementedError("64-bit index output assumes a little-endian host")
    tag = F16_TAG if half else NATIVE_TAG
    return ReducePlan(kernel, meta, tab, tag, x_view, out_view, threaded)
