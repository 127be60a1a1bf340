"""MEAN_VARIANCE_NORMALIZATION1 on the CPU: one fused numba kernel per normalized group.

Plan (compile time, descriptor only): size-1 dims are dropped; the kept dims (one group per coordinate) and the
normalized dims (Axes) are each sorted outermost-first and merged where all four tensors (Input, Scale, Bias,
Output) lay them out contiguously. Each side becomes a loop dim plus an offset table over the other dims: for the
normalized side the loop dim ("run") is the one with the smallest input stride, walked in blocks of at most
_BLOCK elements.

Kernel, per group:
- statistics: each block is read twice while it sits in L1, both times in FLOAT32 runs that join float64 totals:
  the deviations from its first element (an estimate of the mean), then the deviations from that estimate, summed
  and squared (sum and M2 fall back to float64 where FLOAT32 would overflow or underflow). Blocks merge with Chan
  et al.'s update. M2 is a sum of non-negative terms, and the mean of data like 1e4 + small noise is not lost;
- output: per block, ((x - mean_hi) - mean_lo) * rstd * Scale + Bias in FLOAT32 (the last multiply-add fused), the
  float64 mean carried as two FLOAT32 parts (groups whose deviations or rstd FLOAT32 cannot hold take a float64 path).
  No activation (and IDENTITY) is written by that loop; the other activations run over the block into a staging block,
  copied to the output. A group that fits in the caches is read from memory once (twice if larger), the output written
  once; outputs of at least STREAMING_THRESHOLD_BYTES with a contiguous run go through the staging block with
  non-temporal stores;
- overlap: while a block's output is computed, the same part of the next group's input is prefetched, and the
  activations' output is computed in chunks with the previous block's streamed lines written between them (two
  staging blocks), so that a thread's memory traffic does not wait for its arithmetic (measured on 2 threads:
  LN + GELU and IN + GELU 4-16% faster, the direct loops 3-13%).
FLOAT16 travels as uint16 bits, widened exactly on load and rounded once from the FLOAT32 result on store
(DECISIONS 17). Large tensors spread their groups over numba's threads.

The fused activation is element_wise.activation_module()'s `activate_store`: the activation's formula (ops/
activations.py's ACTIVATION_FORMULAS) rendered by the element-wise engine's numba renderer, as the standalone
activation operators are (one formula per activation, so the two can never disagree). The compute-bound loops ask
for 512-bit vectors where the machine has them (memory_kernels.prefer_wide_vectors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np
import numpy.typing as npt
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic

from ...ops.activations import ActivationOperatorDesc, activation_values
from ...ops.base import OperatorDesc
from ...ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from ...types import ExecutionFlags, OperatorType
from .. import FlatArray, Kernel
from . import memory_kernels
from .element_wise import activation_module
from .element_wise import load_element as _load
from .element_wise import store_element as _store
from .float16 import F16_TAG, NATIVE_TAG
from .memory_kernels import (
    LINE_BYTES,
    PARALLEL_LAUNCH,
    begin_stream,
    copy_bytes,
    drain_stream,
    fence,
    prefer_wide_vectors,
    prefetch,
    stream_copy,
    stream_lines,
)

#: The fused activation: element_wise's rendering of its formula (ops/activations.py's ACTIVATION_FORMULAS), the
#: one the standalone activation operators compile to. It is compiled on its own, without fastmath: LLVM may
#: inline it here, and its instructions keep their own (no) contraction.
_ACTIVATIONS = activation_module()
_activate_store = _ACTIVATIONS.activate_store
#: The generated module's name (which holds math.py's stamp): a closure variable of the kernels that call it, so that
#: it keys numba's cache of them. (The cache of this file's functions knows only this file, and their cached code
#: names the generated module they were compiled against.)
_STAMP: str = _ACTIVATIONS.__name__

# reassoc lets LLVM vectorize sums; contract allows FMA. Neither changes NaN or infinity behaviour.
_FASTMATH = {"reassoc", "contract"}
_ELEMENTWISE_FASTMATH = {"contract"}
_ZERO, _ONE, _INF = np.float32(0.0), np.float32(1.0), np.float32(np.inf)
#: Activation codes: DML_OPERATOR_TYPE values, 0 for none.
_NONE, _IDENTITY = 0, int(OperatorType.ACTIVATION_IDENTITY)

# _FASTMATH (reassoc, contract) lets LLVM vectorize the sums. The normalizing loops (_ELEMENTWISE_FASTMATH) vectorize
# without reassociation, and must not have it: it would fold ((x - mean_hi) - mean_lo) into x - mean and
# (d * rstd) * Scale into d * (rstd * Scale), which overflows.

#: Most elements per block of a run (a run is cut into equal blocks): a block is read twice for its statistics and
#: once more for the output while it stays in L1, and the FLOAT32 temporary holds one block. Equal blocks leave more
#: of L1 to the next group's prefetched input (IN + GELU, 3136-element groups: 3-8% faster paired than 2048 + 1088).
_BLOCK = 2048
#: FLOAT32 partial sums of deviations cover this many elements before joining a float64 total.
_SUB_BLOCK = 256
#: An activation's output is computed this many elements at a time, with prefetches and streamed lines between.
_CHUNK = 512
#: A block whose FLOAT32 sum of squared deviations falls outside [n * _SMALLEST_SAFE_M2, _LARGEST_SAFE_M2) has its
#: M2 recomputed in float64: FLOAT32 squares lose precision below 2^-100 and overflow near 2^128.
_SMALLEST_SAFE_M2 = 2.0**-100
_LARGEST_SAFE_M2 = 2.0**120
#: Groups whose M2 or rstd reach these take the float64 output path (see _run_groups).
_M2_LIMIT = 2.0**250
_RSTD_LIMIT = 2.0**126
#: Below this many elements a dispatch runs on one thread (starting the pool costs more than it saves).
_PARALLEL_MIN_ELEMENTS = 1 << 16

# Layout of the int64 `meta` array.
(_M_GROUP_TABLE, _M_K, _M_KX, _M_KY, _M_KS, _M_KB, _M_RUN_TABLE, _M_L, _M_LX, _M_LY, _M_LS, _M_LB, _M_N,
 _M_HAS_SCALE, _M_HAS_BIAS, _M_NORMALIZE, _M_ACTIVATION, _M_CHUNKS, _M_STREAM) = range(19)
_META_LEN = 19


# -- the kernel ---------------------------------------------------------------------------------------------------

def _fma_typer(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
    if not (a == b == c == types.float32):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        f32 = ir.FloatType()
        function = builder.module.declare_intrinsic("llvm.fma", [f32], ir.FunctionType(f32, [f32, f32, f32]))
        return builder.call(function, args)

    return types.float32(types.float32, types.float32, types.float32), codegen


# Typed Any: numba's stubs give an intrinsic its typer's call signature.
#: a * b + c in FLOAT32 rounded once (llvm.fma): the product never overflows on the way to a finite sum, with or
#: without FMA hardware (LLVM's `contract` only fuses where the target has it). Vectorizes as a plain multiply-add.
_fma: Any = intrinsic(_fma_typer)


@numba.njit(fastmath=_FASTMATH, cache=True, error_model="numpy")
def _block_statistics(x: Any, base: int, step: int, n: int, tag: Any) -> tuple[float, float]:
    """Sum and sum of squared deviations from the mean (M2) of one block, in two passes (the second finds the
    block in L1), both in FLOAT32 runs of _SUB_BLOCK elements that join float64 totals.

    The first pass estimates the mean from the deviations from the block's first element (exact where the values
    are close, as in 1e4 + small noise, where a plain FLOAT32 sum would drift by more than the noise). The second
    sums the deviations d = x - shift from that estimate rounded to FLOAT32, and their squares; the sum is then
    n shift + sum(d), as accurate as the deviations are, and M2 = sum(d^2) - sum(d)^2 / n. Where FLOAT32 could
    overflow or lose precision (sums beyond its range, deviations beyond about 1e19 or below about 1e-19), the
    block is summed again in float64 and its M2 computed around that mean.
    """
    prefer_wide_vectors()
    first = _load(x, base, tag)
    total = 0.0
    for start in range(0, n, _SUB_BLOCK):
        stop = min(start + _SUB_BLOCK, n)
        partial = _ZERO
        for i in range(start, stop):
            partial += _load(x, base + i * step, tag) - first
        total += np.float64(partial)
    shift = np.float32(np.float64(first) + total / n)
    sum_d = 0.0
    sum_d2 = 0.0
    for start in range(0, n, _SUB_BLOCK):
        stop = min(start + _SUB_BLOCK, n)
        partial = _ZERO
        partial_squares = _ZERO
        for i in range(start, stop):
            d = _load(x, base + i * step, tag) - shift
            partial += d
            partial_squares += d * d
        sum_d += np.float64(partial)
        sum_d2 += np.float64(partial_squares)
    m2 = sum_d2 - sum_d * (sum_d / n)
    # A sum that overflowed, or an infinity or NaN in the block, makes sum_d2 infinite or NaN: out of this range.
    if _SMALLEST_SAFE_M2 * n <= sum_d2 < _LARGEST_SAFE_M2:
        return np.float64(shift) * n + sum_d, max(m2, 0.0)
    total = 0.0
    for i in range(n):
        total += np.float64(_load(x, base + i * step, tag))
    mean = total / n
    m2 = 0.0
    for i in range(n):
        d64 = np.float64(_load(x, base + i * step, tag)) - mean
        m2 += d64 * d64
    return total, m2


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _normalize_block(x: Any, xb: int, lx: int, s: Any, sb: int, ls: int, b: Any, bb: int, lb: int, n: int,
                     mean_hi: Any, mean_lo: Any, rstd: Any, has_scale: bool, has_bias: bool, tmp: Any,
                     tag: Any) -> None:
    """tmp[i] = ((x_i - mean_hi) - mean_lo) * rstd * Scale_i + Bias_i in FLOAT32, the last multiply-add fused
    (rounded once: a product beyond FLOAT32's range does not make infinite a sum that is within it).

    The mean travels as two FLOAT32 parts: x_i - mean_hi is exact or nearly (the two are close), so the deviation
    keeps its own accuracy however large the mean (1e4 + small noise). Multiplying by rstd before Scale keeps an
    intermediate from overflowing where the result does not. Scale or Bias constant along the run is hoisted.
    """
    prefer_wide_vectors()
    scale_varies = has_scale and ls != 0
    bias_varies = has_bias and lb != 0
    a = _load(s, sb, tag) if has_scale else _ONE
    c = _load(b, bb, tag) if has_bias else _ZERO
    if scale_varies and bias_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            tmp[i] = _fma(d * rstd, _load(s, sb + i * ls, tag), _load(b, bb + i * lb, tag))
    elif scale_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            tmp[i] = _fma(d * rstd, _load(s, sb + i * ls, tag), c)
    elif bias_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            tmp[i] = _fma(d * rstd, a, _load(b, bb + i * lb, tag))
    elif has_scale:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            tmp[i] = _fma(d * rstd, a, c)
    else:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            tmp[i] = d * rstd + c


@numba.njit(fastmath=_ELEMENTWISE_FASTMATH, cache=True, error_model="numpy")
def _normalize_store(x: Any, xb: int, lx: int, s: Any, sb: int, ls: int, b: Any, bb: int, lb: int, n: int,
                     mean_hi: Any, mean_lo: Any, rstd: Any, has_scale: bool, has_bias: bool, y: Any,
                     yb: int, ly: int, tag: Any) -> None:
    """_normalize_block fused with the store, for no activation (and IDENTITY): one loop writes the output
    straight from the input."""
    scale_varies = has_scale and ls != 0
    bias_varies = has_bias and lb != 0
    a = _load(s, sb, tag) if has_scale else _ONE
    c = _load(b, bb, tag) if has_bias else _ZERO
    if scale_varies and bias_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            v = _fma(d * rstd, _load(s, sb + i * ls, tag), _load(b, bb + i * lb, tag))
            _store(y, yb + i * ly, v, tag)
    elif scale_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            v = _fma(d * rstd, _load(s, sb + i * ls, tag), c)
            _store(y, yb + i * ly, v, tag)
    elif bias_varies:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            v = _fma(d * rstd, a, _load(b, bb + i * lb, tag))
            _store(y, yb + i * ly, v, tag)
    elif has_scale:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            v = _fma(d * rstd, a, c)
            _store(y, yb + i * ly, v, tag)
    else:
        for i in range(n):
            d = (_load(x, xb + i * lx, tag) - mean_hi) - mean_lo
            v = d * rstd + c
            _store(y, yb + i * ly, v, tag)


@numba.njit(fastmath=_FASTMATH, cache=True, error_model="numpy")
def _normalize_block_float64(x: Any, xb: int, lx: int, s: Any, sb: int, ls: int, b: Any, bb: int, lb: int,
                             n: int, mean: float, rstd: float, has_scale: bool, has_bias: bool, tmp: Any,
                             tag: Any) -> None:
    """As _normalize_block, in float64, for the groups whose deviations or rstd FLOAT32 cannot hold (magnitudes
    near FLOAT32's limits, or Epsilon 0 with tiny data)."""
    for i in range(n):
        v = (np.float64(_load(x, xb + i * lx, tag)) - mean) * rstd
        if has_scale:
            v *= np.float64(_load(s, sb + i * ls, tag))
        if has_bias:
            v += np.float64(_load(b, bb + i * lb, tag))
        tmp[i] = np.float32(v)


def _run_groups_keyed(stamp: str) -> Any:
    """_run_groups with `stamp` (the activation module's name) as a closure variable: see _STAMP."""

    @numba.njit(fastmath=_FASTMATH, cache=True, error_model="numpy")
    def _run_groups(first: int, last: int, x: Any, s: Any, b: Any, y: Any, meta: Any, tab: Any, fparams: Any,
                    tag: Any) -> None:
        """Groups [first, last) of the plan (see the module docstring)."""
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        n_group_table = meta[_M_GROUP_TABLE]
        k_len, kx, ky, ks, kb = meta[_M_K], meta[_M_KX], meta[_M_KY], meta[_M_KS], meta[_M_KB]
        n_run_table = meta[_M_RUN_TABLE]
        run, lx, ly, ls, lb = meta[_M_L], meta[_M_LX], meta[_M_LY], meta[_M_LS], meta[_M_LB]
        count = meta[_M_N]
        has_scale, has_bias = meta[_M_HAS_SCALE] != 0, meta[_M_HAS_BIAS] != 0
        normalize, code = meta[_M_NORMALIZE] != 0, meta[_M_ACTIVATION]
        epsilon, p1, p2, p3 = fparams[0], np.float32(fparams[1]), np.float32(fparams[2]), np.float32(fparams[3])
        gx = tab[0:n_group_table]
        gy = tab[n_group_table:2 * n_group_table]
        gs = tab[2 * n_group_table:3 * n_group_table]
        gb = tab[3 * n_group_table:4 * n_group_table]
        r0 = 4 * n_group_table
        tx = tab[r0:r0 + n_run_table]
        ty = tab[r0 + n_run_table:r0 + 2 * n_run_table]
        ts = tab[r0 + 2 * n_run_table:r0 + 3 * n_run_table]
        tb = tab[r0 + 3 * n_run_table:r0 + 4 * n_run_table]
        pieces = (run + _BLOCK - 1) // _BLOCK
        block = (run + pieces - 1) // pieces  # equal blocks of at most _BLOCK
        tmp = np.empty(block, np.float32)
        # The activations compute into a staging block, in the output's type, which is then copied to the output. A
        # large output with a contiguous run is written from the staging block with non-temporal stores, which skip
        # reading the output's lines first (see memory_kernels); without an activation it is staged too.
        stream = meta[_M_STREAM] != 0
        staged = np.empty(2 * block, y.dtype)
        staged_address, y_address, item = staged.ctypes.data, y.ctypes.data, y.itemsize
        # No activation (and IDENTITY) write the output from the normalizing loop itself (a float64 group goes
        # through the staging block, with IDENTITY).
        direct = code in (_NONE, _IDENTITY)
        applied = _IDENTITY if code == _NONE else code
        # Computing keeps a thread's memory idle: the hardware prefetchers follow its loads, and stop at page
        # boundaries. So while a block's output is computed, the same part of the next group's input is prefetched
        # (its statistics then find it in cache; a contiguous run only): all at once before the direct loop, and
        # spread over an activation, whose output is computed _CHUNK elements at a time. After each chunk a share of
        # the previous block's output is streamed too: it waits in the other half of `staged` (`pending` whole lines
        # left, from `pending_src` to `pending_dst`).
        x_address, x_item = x.ctypes.data, x.itemsize
        prefetching = lx == 1
        pending, pending_src, pending_dst = 0, 0, 0
        parity = 0
        for g in range(first, last):
            row = g // k_len
            k = g - row * k_len
            bx, by = gx[row] + k * kx, gy[row] + k * ky
            bs, bb = gs[row] + k * ks, gb[row] + k * kb
            # Blocks merge with Chan et al.'s update, in float64: M2 is a sum of non-negative terms. The mean is the
            # total over the count (a running mean would turn one infinite block into NaN for the rest).
            seen = 0
            total_sum = 0.0
            m2 = 0.0
            for t in range(n_run_table):
                for start in range(0, run, block):
                    n = min(block, run - start)
                    block_sum, block_m2 = _block_statistics(x, bx + tx[t] + start * lx, lx, n, tag)
                    if seen == 0:
                        m2 = block_m2
                    else:
                        delta = block_sum / n - total_sum / seen
                        m2 += block_m2 + delta * delta * (seen * (n / (seen + n)))
                    total_sum += block_sum
                    seen += n
            mean = total_sum / count
            rstd = 1.0 / math.sqrt(m2 / count + epsilon) if normalize else 1.0
            # FLOAT32 holds every deviation when sqrt(M2) (which bounds them) is below 2^125, and rstd below 2^126.
            in_float32 = m2 < _M2_LIMIT and rstd < _RSTD_LIMIT
            mean_hi = np.float32(mean)
            mean_lo = np.float32(mean - np.float64(mean_hi)) if math.isfinite(mean) else _ZERO
            rstd32 = np.float32(rstd)
            ahead = prefetching and g + 1 < last
            next_x = 0
            if ahead:
                row_next = (g + 1) // k_len
                next_x = gx[row_next] + (g + 1 - row_next * k_len) * kx
            for t in range(n_run_table):
                for start in range(0, run, block):
                    n = min(block, run - start)
                    xb, sb, bb2 = bx + tx[t] + start * lx, bs + ts[t] + start * ls, bb + tb[t] + start * lb
                    yb = by + ty[t] + start * ly
                    first_byte = x_address + (next_x + tx[t] + start) * x_item
                    ahead_from = first_byte - first_byte % LINE_BYTES
                    ahead_lines = ((first_byte + n * x_item - 1) // LINE_BYTES - first_byte // LINE_BYTES + 1
                                   if ahead else 0)
                    if in_float32 and direct:
                        for line in range(ahead_lines):
                            prefetch(ahead_from + line * LINE_BYTES)
                        if not stream:
                            _normalize_store(x, xb, lx, s, sb, ls, b, bb2, lb, n, mean_hi, mean_lo, rstd32, has_scale,
                                             has_bias, y, yb, ly, tag)
                            continue
                        # Lines a float64 group left in the staging block go out before it is reused.
                        pending, pending_src, pending_dst = drain_stream(pending, pending_src, pending_dst, pending)
                        _normalize_store(x, xb, lx, s, sb, ls, b, bb2, lb, n, mean_hi, mean_lo, rstd32, has_scale,
                                         has_bias, staged, 0, 1, tag)
                        stream_copy(y_address + yb * item, staged_address, n * item)
                        continue
                    if in_float32:
                        _normalize_block(x, xb, lx, s, sb, ls, b, bb2, lb, n, mean_hi, mean_lo, rstd32, has_scale,
                                         has_bias, tmp, tag)
                    else:
                        _normalize_block_float64(x, xb, lx, s, sb, ls, b, bb2, lb, n, mean, rstd, has_scale,
                                                 has_bias, tmp, tag)
                    shift = parity * block
                    fetched = 0
                    chunks = (n + _CHUNK - 1) // _CHUNK
                    per_chunk = (pending + chunks - 1) // chunks  # the other half is out when this one is full
                    for c in range(chunks):
                        _activate_store(applied, p1, p2, p3, tmp, c * _CHUNK, min((c + 1) * _CHUNK, n), staged, shift,
                                        tag)
                        share = (c + 1) * ahead_lines // chunks
                        while fetched < share:
                            prefetch(ahead_from + fetched * LINE_BYTES)
                            fetched += 1
                        pending, pending_src, pending_dst = drain_stream(pending, pending_src, pending_dst, per_chunk)
                    if stream:
                        # This block's lines are streamed while the next block is computed (or at the end).
                        pending, pending_src, pending_dst = begin_stream(y_address + yb * item,
                                                                         staged_address + shift * item, n * item)
                        parity = 1 - parity
                    elif ly == 1:
                        copy_bytes(y_address + yb * item, staged_address + shift * item, n * item)
                    else:
                        for i in range(n):
                            y[yb + i * ly] = staged[shift + i]
        stream_lines(pending_dst, pending_src, pending)
        if stream:
            fence()  # this thread's non-temporal stores are visible before the kernel returns

    return _run_groups


_run_groups = _run_groups_keyed(_STAMP)


def _serial_kernel_keyed(stamp: str) -> Any:
    """_serial_kernel with `stamp` (the activation module's name) as a closure variable: see _STAMP."""

    @numba.njit(fastmath=_FASTMATH, cache=True, error_model="numpy")
    def _serial_kernel(x: Any, s: Any, b: Any, y: Any, meta: Any, tab: Any, fparams: Any, tag: Any) -> None:
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        _run_groups(0, meta[_M_GROUP_TABLE] * meta[_M_K], x, s, b, y, meta, tab, fparams, tag)

    return _serial_kernel


_serial_kernel = _serial_kernel_keyed(_STAMP)


def _parallel_kernel_keyed(stamp: str) -> Any:
    """_parallel_kernel with `stamp` (the activation module's name) as a closure variable: see _STAMP."""

    @numba.njit(fastmath=_FASTMATH, cache=True, parallel=True, error_model="numpy")
    def _parallel_kernel(x: Any, s: Any, b: Any, y: Any, meta: Any, tab: Any, fparams: Any, tag: Any) -> None:
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        groups = meta[_M_GROUP_TABLE] * meta[_M_K]
        chunks = meta[_M_CHUNKS]
        for chunk in numba.prange(chunks):
            _run_groups(chunk * groups // chunks, (chunk + 1) * groups // chunks, x, s, b, y, meta, tab, fparams, tag)

    return _parallel_kernel


_parallel_kernel = _parallel_kernel_keyed(_STAMP)


# -- planning -----------------------------------------------------------------------------------------------------

Dim = tuple[int, int, int, int, int]  # (size, input stride, output stride, scale stride, bias stride)


def _merge(dims: list[Dim]) -> list[Dim]:
    """Merges neighbours (outermost first) that are one dim in all four tensors."""
    merged: list[Dim] = []
    for dim in dims:
        if merged:
            outer = merged[-1]
            if all(outer_stride == stride * dim[0] for outer_stride, stride in zip(outer[1:], dim[1:], strict=True)):
                merged[-1] = (outer[0] * dim[0], *dim[1:])
                continue
        merged.append(dim)
    return merged


def _offsets(dims: Sequence[Dim], which: int) -> npt.NDArray[np.int64]:
    """Row-major table of sum(index_d * stride_d) over `dims`, for the stride at position `which`."""
    table = np.zeros(1, np.int64)
    for dim in dims:
        table = (table[:, None] + np.arange(dim[0], dtype=np.int64) * dim[which]).ravel()
    return table


class MvnPlan:
    """A compiled MVN: call with the flat input, scale (or None), bias (or None) and output views."""

    __slots__ = ("_dummy", "_fparams", "_kernel", "_meta", "_parallel", "_tab", "_tag", "_view")

    def __init__(self, desc: MeanVarianceNormalization1OperatorDesc) -> None:
        source = desc.input_tensor
        half = source.data_type.numpy_dtype == np.float16
        sizes, axes = source.sizes, set(desc.axes)

        def strides_of(tensor: Any) -> tuple[int, ...]:
            # A size-1 dim of Scale or Bias is broadcast: stride 0 along it.
            if tensor is None:
                return (0,) * len(sizes)
            return tuple(0 if size == 1 else stride for size, stride in zip(tensor.sizes, tensor.element_strides,
                                                                               strict=True))

        x_strides, y_strides = source.element_strides, desc.output_tensor.element_strides
        s_strides, b_strides = strides_of(desc.scale_tensor), strides_of(desc.bias_tensor)
        kept: list[Dim] = []
        normalized: list[Dim] = []
        for d, size in enumerate(sizes):
            if size > 1:
                dim = (size, x_strides[d], y_strides[d], s_strides[d], b_strides[d])
                (normalized if d in axes else kept).append(dim)
        kept = _merge(sorted(kept, key=lambda dim: (-dim[1], -dim[2])))
        normalized = _merge(sorted(normalized, key=lambda dim: (-dim[1], -dim[2])))
        kept = kept or [(1, 0, 0, 0, 0)]
        normalized = normalized or [(1, 0, 0, 0, 0)]
        # The run: the normalized dim with the smallest nonzero input stride (unit stride vectorizes).
        run_index = min(range(len(normalized)), key=lambda i: (normalized[i][1] == 0, normalized[i][1],
                                                               normalized[i][2]))
        run = normalized.pop(run_index)
        # The kept loop dim: the largest, which leaves the smallest offset table.
        loop_index = max(range(len(kept)), key=lambda i: kept[i][0])
        loop = kept.pop(loop_index)
        group_tables = [_offsets(kept, which) for which in (1, 2, 3, 4)]
        run_tables = [_offsets(normalized, which) for which in (1, 2, 3, 4)]
        groups = group_tables[0].size * loop[0]
        count = desc.normalized_element_count
        parallel = groups > 1 and source.element_count >= _PARALLEL_MIN_ELEMENTS
        chunks = min(groups, 4 * numba.get_num_threads()) if parallel else 1

        activation = desc.fused_activation
        code, values = _NONE, [0.0, 0.0, 0.0]
        if activation is not None:
            # The formula's values (FLOAT fields rounded to float32, as DML receives them), in its argument order.
            values = [*activation_values(cast(ActivationOperatorDesc, activation)).values(), 0.0, 0.0, 0.0][:3]
            code = int(activation.OPERATOR_TYPE)
        meta = np.zeros(_META_LEN, np.int64)
        meta[_M_GROUP_TABLE] = group_tables[0].size
        meta[_M_K], meta[_M_KX], meta[_M_KY], meta[_M_KS], meta[_M_KB] = loop
        meta[_M_RUN_TABLE] = run_tables[0].size
        meta[_M_L], meta[_M_LX], meta[_M_LY], meta[_M_LS], meta[_M_LB] = run
        meta[_M_N] = count
        meta[_M_HAS_SCALE] = desc.scale_tensor is not None
        meta[_M_HAS_BIAS] = desc.bias_tensor is not None
        meta[_M_NORMALIZE] = desc.normalize_variance
        meta[_M_ACTIVATION] = code
        meta[_M_CHUNKS] = chunks
        meta[_M_STREAM] = (memory_kernels.HAVE_STREAMING_STORES and run[2] == 1 and
                           desc.output_tensor.total_tensor_size_in_bytes >= memory_kernels.STREAMING_THRESHOLD_BYTES)
        self._meta = meta
        self._tab = np.concatenate([*group_tables, *run_tables])
        self._fparams = np.array([float(np.float32(desc.epsilon)), *values], np.float64)
        self._view = np.dtype(np.uint16) if half else np.dtype(np.float32)
        self._tag = F16_TAG if half else NATIVE_TAG
        self._dummy = np.zeros(1, self._view)   # bound for an absent Scale or Bias, never read
        self._parallel = parallel
        self._kernel = _parallel_kernel if parallel else _serial_kernel

    def __call__(self, x: FlatArray, scale: FlatArray | None, bias: FlatArray | None, y: FlatArray) -> None:
        view = self._view
        arguments = (x.view(view), self._dummy if scale is None else scale.view(view),
                     self._dummy if bias is None else bias.view(view), y.view(view), self._meta, self._tab,
                     self._fparams, self._tag)
        if self._parallel:
            with PARALLEL_LAUNCH:
                self._kernel(*arguments)
        else:
            self._kernel(*arguments)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """All descriptor work happens here; the kernel only binds views and runs. FLOAT32 computation is used
    whatever the flags say: ALLOW_HALF_PRECISION_COMPUTATION permits but does not require FLOAT16."""
    plan = MvnPlan(cast(MeanVarianceNormalization1OperatorDesc, desc))

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        plan(inputs[0], inputs[1], inputs[2], outputs[0])  # type: ignore[arg-type]

    return kernel
