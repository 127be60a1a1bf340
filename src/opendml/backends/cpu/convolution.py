"""CONVOLUTION on the CPU: forward and backward (transposed), 1 to 3 spatial dimensions, groups, as register-blocked
sums over a "wide grid" of the input (convolution_micro.py), in numba's threads.

The plan (compile time, descriptor only) turns every convolution into phases of stride-1 convolutions over a source
grid. A forward convolution of stride S splits the (padded) input into S^d phases, source[c, a, j] = input[c, j S +
a - Ps] (0 outside), and tap k (the filter's position, flipped in CONVOLUTION mode) reads phase a = k D mod S at
offset e = k D div S: output[o, q] = sum over taps and c of W_k[o, c] source[c, a_k, q + e_k]. A backward
convolution splits the output instead: output position q S + r (phase r) gathers the taps k with (r + Ps - k D)
divisible by S, from input position q + (r + Ps - k D) / S, so each output phase is a stride-1 convolution of the
input (padded in front by the largest negative offset). Within a phase, output position q is the flat index
p = (q_z G_y + q_y) G_x + q_x of the source grid (G: the grid's sizes) and tap k reads source element p + shift_k: a
tile of T consecutive p is, for each (tap, channel), one contiguous run of the source. The p that are not output
positions (q_x >= Q_x: the "wide" columns) are computed and dropped, (G_x - Q_x) / G_x more arithmetic: a few
percent for 3x3 kernels.

Per tile the kernel computes C[Cog, T] = Bias + sum over taps of W_k[Cog, Cig] @ source[Cig, T + shift_k] by one of
- MICRO: convolution_micro's kernel, 8 output channels x 32 positions in 16 vector registers, reading each
  (tap, channel) run straight from the source grid (no im2col copy, no packing);
  A FLOAT32 input that is itself a source grid (forward, stride 1, no padding, its spatial dimensions contiguous:
  1x1 filters) is read in place, IN_PLACE_SPLIT runs per pass (its rows are then streamed a few at a time), the
  columns past a tile's last whole block staged (MICRO reads a whole block); 1x1 256->64 on [8, 256, 56, 56], one
  thread: BLAS's sgemm per image 9.3 ms, MICRO in place 7.7;
- DIRECT: multiply-adds vectorized along T, where each group's matrices are tiny (depthwise).
Measured on one thread (2-core Xeon, AVX-512; thread CPU time, [8, 64, 56, 56] 3x3 64->64): OpenBLAS's sgemm per
tap 104 GFLOP/s, per tile after an im2col 75, MICRO 131 (PyTorch's oneDNN 151).
The epilogue then reads C while it is in cache and writes each output element once: the fused activation
(element_wise.activation_module()'s activate_store: the activations' formulas rendered once for every kernel) or the
fused ELEMENT_WISE_CLIP (its formula maximum(Min, minimum(x, Max)) with math.py's primitives), rounded to the output
type, through the output's strides (NHWC included).

Each thread builds the source of its (batch, group) in its own buffer, or the rows of it that its part of the tiles
reads (FLOAT16 widened exactly; any input strides), unless the input is read in place. The filter is packed into
per-phase blocks of 8 output channels (MICRO) or [Cog, taps x Cig] matrices (DIRECT) once per dispatch, or once at
`initialize` for a filter owned by DML.

Numerics: FLOAT32 accumulates in FLOAT32: each output's Cig x taps products are summed onto Bias, each rounded
once into its register's running sum (fused multiply-add); error within gamma_K =
K 2^-24 / (1 - K 2^-24) times the sum of the magnitudes (K = Cig x taps + 1); FLOAT16 is widened exactly,
accumulated the same way in FLOAT32 and rounded once on store (the page's types: FLOAT32 and FLOAT16).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numba
import numpy as np

from ...ops.activations import activation_values
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags, OperatorType
from .. import FlatArray, Kernel
from .convolution_micro import COLUMNS as MICRO_COLUMNS
from .convolution_micro import ROWS as MICRO_ROWS
from .convolution_micro import micro
from .element_wise import activation_module
from .element_wise import load_element as _load
from .element_wise import store_element as _store
from .float16 import F16_TAG, NATIVE_TAG
from .math import m_maximum, m_minimum
from .memory_kernels import PARALLEL_LAUNCH, prefer_wide_vectors

_ACTIVATIONS = activation_module()
_activate_store = _ACTIVATIONS.activate_store
#: The generated module's name (it holds math.py's stamp): a closure variable of the kernels that call it, so that it
#: keys numba's cache of them (as in mean_variance_normalization1.py).
_STAMP: str = _ACTIVATIONS.__name__

#: Ways to compute a tile (see the module docstring).
DIRECT, MICRO = 2, 3
#: MICRO over an input read in place sums this many (tap, channel) runs per pass over a tile: that many rows of the
#: input streamed at once (1x1 256->64 on [8, 256, 56, 56], one thread: all 256 at once 15.7 ms, 32 at a time 7.7).
IN_PLACE_SPLIT = 32
#: DIRECT where a group's Cog x Cig x taps is at most this (MICRO's blocks of 8 channels would be mostly padding).
DIRECT_MAX_PRODUCTS = 256
#: A tile's C[Cog, T] and its source rows stay within about this many bytes (T: a multiple of 16 in [128, 2048]).
TILE_BYTES = 1 << 20
#: A parallel dispatch cuts its (image, group, part) units into about this many chunks per thread, handed out one at
#: a time (numba's dynamic chunks).
WORK_PER_THREAD = 4
#: Below this many multiply-adds a dispatch runs on one thread.
PARALLEL_MIN_PRODUCTS = 1 << 20

#: Fused ELEMENT_WISE_CLIP's activation code (DML_OPERATOR_ELEMENT_WISE_CLIP); 0: no activation.
_NONE = 0
_CLIP = int(OperatorType.ELEMENT_WISE_CLIP)
_IDENTITY = int(OperatorType.ACTIVATION_IDENTITY)

# The int64 `geo` array's fields (3 consecutive entries for the spatial ones, z, y, x).
(N, GROUPS, CIG, COG, IN_N, IN_C) = range(6)
IN_STRIDE, IN_SIZE, SRC_STEP, SRC_LEAD, SRC_PHASES, GRID = 6, 9, 12, 15, 18, 21
(PLANE, SRC_CHANNEL, DIRECT_SOURCE, OUT_N, OUT_C) = range(24, 29)
OUT_STRIDE, OUT_STEP = 29, 32
(FILTER_G, FILTER_O, FILTER_C, BIAS_STRIDE, HAS_BIAS, METHOD, TILE, TILES, PARTS, CHUNKS, ACTIVATION, SOURCE_SIZE,
 PACKED_SIZE, MAX_SHIFT, LD, ACC_ROWS) = range(35, 51)
GEO_SIZE = 51
# Phase table columns: output phase r (3), its grid sizes Q (3), first tap, tap count, packed filter offset, first
# MICRO source offset, taps per source z-offset (MICRO sums one z-offset's taps at a time).
PH_R, PH_Q, PH_FIRST, PH_COUNT, PH_PACKED, PH_OFFSETS, PH_SPLIT = 0, 3, 6, 7, 8, 9, 10
# Tap table columns: source phase (flat), shift in the source grid (flat), the filter's spatial offset (elements).
TAP_PHASE, TAP_SHIFT, TAP_FILTER = 0, 1, 2


# -- planning -------------------------------------------------------------------------------------------------------

def _spatial3(values: Sequence[int], fill: int) -> list[int]:
    """A spatial array of 1 to 3 entries as 3 (z, y, x), leading entries filled."""
    return [fill] * (3 - len(values)) + list(values)


@dataclass
class ConvolutionPlan:
    """The descriptor's arithmetic laid out for the kernel (see the module docstring)."""

    geo: np.ndarray[Any, np.dtype[np.int64]]
    phases: np.ndarray[Any, np.dtype[np.int64]]
    taps: np.ndarray[Any, np.dtype[np.int64]]
    tiles: np.ndarray[Any, np.dtype[np.int64]]
    offsets: np.ndarray[Any, np.dtype[np.int64]]
    parallel: bool


def plan_convolution(desc: Any, threads: int) -> ConvolutionPlan:
    """The plan of a validated ConvolutionOperatorDesc."""
    x, w, y = desc.input_tensor, desc.filter_tensor, desc.output_tensor
    backward, flip = desc.is_backward, desc.flips_filter
    groups = desc.group_count
    cig, cog = desc.channels_per_group()
    s = _spatial3(desc.spatial_strides, 1)
    d = _spatial3(desc.spatial_dilations, 1)
    ps = _spatial3(desc.spatial_start_padding, 0)
    pe = _spatial3(desc.spatial_end_padding, 0)
    ksz = _spatial3(w.sizes[2:], 1)
    isz = _spatial3(x.sizes[2:], 1)
    osz = _spatial3(y.sizes[2:], 1)
    xs, ws, ys = x.element_strides, w.element_strides, y.element_strides
    x_spatial = _spatial3(xs[2:], 0)
    w_spatial = _spatial3(ws[2:], 0)
    y_spatial = _spatial3(ys[2:], 0)

    def filter_offset(k: Sequence[int]) -> int:
        return sum((ksz[i] - 1 - k[i] if flip else k[i]) * w_spatial[i] for i in range(3))

    phase_rows: list[list[int]] = []
    tap_rows: list[list[int]] = []
    if not backward:
        src_step, src_phases = s, s
        lead = ps
        reach = [(ksz[i] - 1) * d[i] // s[i] for i in range(3)]
        grid = [osz[i] + reach[i] for i in range(3)]
        output_phases: list[tuple[Sequence[int], list[int], list[tuple[tuple[int, ...], list[int], list[int]]]]]
        output_phases = [((0, 0, 0), osz, [(k, [(k[i] * d[i]) % s[i] for i in range(3)],
                                            [(k[i] * d[i]) // s[i] for i in range(3)])
                                           for k in itertools.product(*(range(n) for n in ksz))])]
        out_step = [1, 1, 1]
    else:
        src_step, src_phases = [1, 1, 1], [1, 1, 1]
        offsets = [[(r + ps[i] - k * d[i]) // s[i] for r in range(s[i]) for k in range(ksz[i])
                    if (r + ps[i] - k * d[i]) % s[i] == 0] for i in range(3)]
        lead = [max([0] + [-e for e in offsets[i]]) for i in range(3)]
        reach = [max([0] + [e + lead[i] for e in offsets[i]]) for i in range(3)]
        most = [-(-osz[i] // s[i]) for i in range(3)]
        grid = [max(most[i] + reach[i], isz[i] + lead[i]) for i in range(3)]
        output_phases = []
        for r in itertools.product(*(range(n) for n in s)):
            q = [max(0, -(-(osz[i] - r[i]) // s[i])) for i in range(3)]
            if 0 in q:
                continue
            phase_taps = []
            for k in itertools.product(*(range(n) for n in ksz)):
                if all((r[i] + ps[i] - k[i] * d[i]) % s[i] == 0 for i in range(3)):
                    phase_taps.append((k, [0, 0, 0], [(r[i] + ps[i] - k[i] * d[i]) // s[i] + lead[i]
                                                      for i in range(3)]))
            output_phases.append((r, q, phase_taps))
        out_step = s
    plane = grid[0] * grid[1] * grid[2]
    most_taps = max([len(phase_taps) for _, _, phase_taps in output_phases] + [1])
    in_place = (not backward and s == [1, 1, 1] and ps == [0, 0, 0] and pe == [0, 0, 0]
                and x.data_type != DataType.FLOAT16 and x_spatial[2] == 1
                and (isz[1] == 1 or x_spatial[1] == isz[2])
                and (isz[0] == 1 or x_spatial[0] == isz[1] * isz[2]))
    if cog * cig * most_taps <= DIRECT_MAX_PRODUCTS:
        method = DIRECT
    else:
        method = MICRO
    direct_source = in_place and method == MICRO
    src_channel = xs[1] if direct_source else src_phases[0] * src_phases[1] * src_phases[2] * plane
    blocks = -(-cog // MICRO_ROWS)
    acc_rows = blocks * MICRO_ROWS if method == MICRO else cog
    packed = 0
    runs: list[int] = []  # MICRO's offsets of the source runs, (tap, channel) by (tap, channel), phase by phase
    for phase_r, q, phase_taps in output_phases:
        planes = len({(e[0], a[0]) for _, a, e in phase_taps}) or 1  # taps come z-major (itertools.product)
        split = min(IN_PLACE_SPLIT, cig * len(phase_taps)) if direct_source else len(phase_taps) // planes * cig
        phase_rows.append([*phase_r, *q, len(tap_rows), len(phase_taps), packed, len(runs), split])
        packed += groups * acc_rows * cig * len(phase_taps)
        for k, a, e in phase_taps:
            tap_rows.append([(a[0] * src_phases[1] + a[1]) * src_phases[2] + a[2],
                             (e[0] * grid[1] + e[1]) * grid[2] + e[2], filter_offset(k)])
            runs += [c * src_channel + tap_rows[-1][TAP_PHASE] * plane + tap_rows[-1][TAP_SHIFT] for c in range(cig)]
    rows = cig  # the source rows a tile reads besides C
    tile = TILE_BYTES // (4 * max(acc_rows + rows, 1))
    tile = min(max(tile // MICRO_COLUMNS * MICRO_COLUMNS, 128), 2048)
    tile_rows = []
    for index, (_, q, _) in enumerate(output_phases):
        wide = ((q[0] - 1) * grid[1] + q[1] - 1) * grid[2] + q[2]
        tile_rows += [[index, p0, min(tile, wide - p0)] for p0 in range(0, wide, tile)]
    images = x.sizes[0]
    products = images * groups * cog * cig * most_taps * max(plane, 1)
    parallel = threads > 1 and products >= PARALLEL_MIN_PRODUCTS
    units = images * groups
    parts = max(1, min(len(tile_rows), -(-WORK_PER_THREAD * threads // units))) if parallel else 1
    chunks = min(units * parts, WORK_PER_THREAD * threads) if parallel else 1
    if backward:
        filter_strides = [cig * ws[0], ws[1], ws[0]]
    else:
        filter_strides = [cog * ws[0], ws[0], ws[1]]
    bias = desc.bias_tensor
    activation = desc.fused_activation
    geo = np.zeros(GEO_SIZE, np.int64)
    geo[[N, GROUPS, CIG, COG, IN_N, IN_C]] = [images, groups, cig, cog, xs[0], xs[1]]
    geo[IN_STRIDE:IN_STRIDE + 3] = x_spatial
    geo[IN_SIZE:IN_SIZE + 3] = isz
    geo[SRC_STEP:SRC_STEP + 3] = src_step
    geo[SRC_LEAD:SRC_LEAD + 3] = lead
    geo[SRC_PHASES:SRC_PHASES + 3] = src_phases
    geo[GRID:GRID + 3] = grid
    geo[[PLANE, SRC_CHANNEL, DIRECT_SOURCE, OUT_N, OUT_C]] = [plane, src_channel, direct_source, ys[0], ys[1]]
    geo[OUT_STRIDE:OUT_STRIDE + 3] = y_spatial
    geo[OUT_STEP:OUT_STEP + 3] = out_step
    geo[[FILTER_G, FILTER_O, FILTER_C]] = filter_strides
    geo[BIAS_STRIDE] = 0 if bias is None else bias.element_strides[1]
    geo[HAS_BIAS] = bias is not None
    geo[[METHOD, TILE, TILES, PARTS, CHUNKS]] = [method, tile, len(tile_rows), parts, chunks]
    geo[ACTIVATION] = _NONE if activation is None else int(activation.OPERATOR_TYPE)
    geo[SOURCE_SIZE] = 0 if direct_source else cig * src_phases[0] * src_phases[1] * src_phases[2] * plane
    geo[MAX_SHIFT] = max([row[TAP_SHIFT] for row in tap_rows] + [0])
    geo[PACKED_SIZE] = packed
    geo[LD] = -(-tile // MICRO_COLUMNS) * MICRO_COLUMNS
    geo[ACC_ROWS] = acc_rows
    return ConvolutionPlan(geo, np.array(phase_rows, np.int64).reshape(-1, 11),
                           np.array(tap_rows, np.int64).reshape(-1, 3), np.array(tile_rows, np.int64).reshape(-1, 3),
                           np.array([*runs, 0], np.int64), parallel)


# -- the kernel -----------------------------------------------------------------------------------------------------

@numba.njit(cache=True, error_model="numpy")
def _pack_filter(w: Any, packed: Any, geo: Any, phases: Any, taps: Any, tag: Any) -> None:
    """The filter's element for (g, o, c, tap t) in the compute type (FLOAT16 widened exactly), at packed[phase's
    offset + ((g Cog + o) taps + t) Cig + c], or for MICRO in blocks of MICRO_ROWS output channels (the last one
    filled with zeros), at packed[phase's offset + ((g blocks + o // R) taps Cig + t Cig + c) R + o % R]."""
    groups, cig, cog, rows = geo[GROUPS], geo[CIG], geo[COG], geo[ACC_ROWS]
    micro = geo[METHOD] == MICRO
    for ph in range(phases.shape[0]):
        first, count, offset = phases[ph, PH_FIRST], phases[ph, PH_COUNT], phases[ph, PH_PACKED]
        for g in range(groups):
            for o in range(rows):
                block, r = o // MICRO_ROWS, o % MICRO_ROWS
                for t in range(count):
                    spatial = taps[first + t, TAP_FILTER]
                    for c in range(cig):
                        value = packed.dtype.type(0)
                        if o < cog:
                            at = g * geo[FILTER_G] + o * geo[FILTER_O] + c * geo[FILTER_C] + spatial
                            value = _load(w, at, tag)
                        if micro:  # [g, block, t Cig + c, r]
                            packed[offset + ((g * (rows // MICRO_ROWS) + block) * count * cig + t * cig + c)
                                   * MICRO_ROWS + r] = value
                        else:  # [g, o, t Cig + c]
                            packed[offset + (g * rows + o) * count * cig + t * cig + c] = value


@numba.njit(cache=True, error_model="numpy")
def _build_source(x: Any, base: int, geo: Any, source: Any, first_row: int, last_row: int, tag: Any) -> None:
    """source[c, a, j] = x[base + c, j S + a - L] (0 outside the input) for the Cig channels of one group and image,
    its rows (z, y) of flat index first_row <= z G_y + y < last_row: the input's part copied (gathered where
    strided), the padding zeroed."""
    prefer_wide_vectors()
    gy, gx = geo[GRID + 1], geo[GRID + 2]
    sz, sy, sx = geo[SRC_STEP], geo[SRC_STEP + 1], geo[SRC_STEP + 2]
    lz, ly, lx = geo[SRC_LEAD], geo[SRC_LEAD + 1], geo[SRC_LEAD + 2]
    iz_size, iy_size, ix_size = geo[IN_SIZE], geo[IN_SIZE + 1], geo[IN_SIZE + 2]
    zero = source.dtype.type(0)
    at = 0
    for c in range(geo[CIG]):
        for az in range(geo[SRC_PHASES]):
            for ay in range(geo[SRC_PHASES + 1]):
                for ax in range(geo[SRC_PHASES + 2]):
                    lo = min(max(-((ax - lx) // sx), 0), gx)  # first j with j S + a - L >= 0
                    hi = min(max((ix_size - 1 + lx - ax) // sx + 1, lo), gx)
                    step = sx * geo[IN_STRIDE + 2]
                    jz = first_row // gy
                    jy = first_row - jz * gy
                    for flat in range(last_row - first_row):
                        iz = jz * sz + az - lz
                        iy = jy * sy + ay - ly
                        row = at + (first_row + flat) * gx
                        jy += 1
                        if jy == gy:
                            jy = 0
                            jz += 1
                        if iz < 0 or iz >= iz_size or iy < 0 or iy >= iy_size:
                            source[row:row + gx] = zero
                            continue
                        for j in range(lo):
                            source[row + j] = zero
                        start = base + c * geo[IN_C] + iz * geo[IN_STRIDE] + iy * geo[IN_STRIDE + 1] + \
                            (lo * sx + ax - lx) * geo[IN_STRIDE + 2]
                        if step == 1:
                            for j in range(hi - lo):
                                source[row + lo + j] = _load(x, start + j, tag)
                        else:
                            for j in range(hi - lo):
                                source[row + lo + j] = _load(x, start + j * step, tag)
                        for j in range(gx - hi):
                            source[row + hi + j] = zero
                    at += geo[PLANE]


@numba.njit(cache=True, error_model="numpy")
def _stage_tail(stage: Any, x: Any, base: int, offsets: Any, first: int, k: int, start: int, n: int) -> None:
    """stage[j MICRO_COLUMNS + i] = x[base + offsets[first + j] + start + i] for i < n, 0 up to MICRO_COLUMNS, j < k:
    the last columns of a tile, MICRO_COLUMNS wide, for MICRO over an input read in place."""
    zero = stage.dtype.type(0)
    for j in range(k):
        at = base + offsets[first + j] + start
        for i in range(n):
            stage[j * MICRO_COLUMNS + i] = x[at + i]
        for i in range(MICRO_COLUMNS - n):
            stage[j * MICRO_COLUMNS + n + i] = zero


@numba.njit(cache=True, error_model="numpy")
def _fill_bias(acc: Any, ld: int, geo: Any, b: Any, g: int, tag: Any) -> None:
    """Each row of the tile's C (acc[o ld + i], i < ld) set to its channel's Bias, which the sums then accumulate
    onto (no separate zeroing or Bias pass). Without Bias (and in MICRO's
    rows beyond Cog), -0: the identity of addition (x + -0 is x, -0 included)."""
    cog = geo[COG]
    for o in range(geo[ACC_ROWS]):
        bias = np.float32(-0.0)
        if geo[HAS_BIAS] != 0 and o < cog:
            bias = _load(b, (g * cog + o) * geo[BIAS_STRIDE], tag)
        acc[o * ld:(o + 1) * ld] = bias  # a slice: LLVM vectorized a loop over range(o ld, (o + 1) ld) 5x slower


@numba.njit(cache=True, error_model="numpy")
def _direct_tile(packed: Any, w_row: int, count: int, cig: int, cog: int, source: Any, s_base: int,
                 channel: int, taps: Any, first: int, plane: int, p0: int, n: int, acc: Any, ld: int) -> None:
    """acc[o ld + i] += sum over taps t and channels c of packed[w_row + (o taps + t) Cig + c] x
    source[s_base + c channel + phase_t plane + shift_t + p0 + i], for i < n (DIRECT): four (tap, channel) terms
    per pass over the row, so that a 3x3 depthwise row is read and written three times, not nine."""
    prefer_wide_vectors()
    terms = count * cig
    for o in range(cog):
        out = acc[o * ld:o * ld + n]
        for j in range(0, terms - 3, 4):
            w0, a0 = _term(packed, w_row + o * terms, j, cig, s_base, channel, taps, first, plane, p0)
            w1, a1 = _term(packed, w_row + o * terms, j + 1, cig, s_base, channel, taps, first, plane, p0)
            w2, a2 = _term(packed, w_row + o * terms, j + 2, cig, s_base, channel, taps, first, plane, p0)
            w3, a3 = _term(packed, w_row + o * terms, j + 3, cig, s_base, channel, taps, first, plane, p0)
            s0, s1, s2, s3 = source[a0:a0 + n], source[a1:a1 + n], source[a2:a2 + n], source[a3:a3 + n]
            for i in range(n):
                out[i] += ((w0 * s0[i] + w1 * s1[i]) + (w2 * s2[i] + w3 * s3[i]))
        for j in range(terms - terms % 4, terms):
            w0, a0 = _term(packed, w_row + o * terms, j, cig, s_base, channel, taps, first, plane, p0)
            s0 = source[a0:a0 + n]
            for i in range(n):
                out[i] += w0 * s0[i]


@numba.njit(cache=True, error_model="numpy", inline="always")
def _term(packed: Any, row: int, j: int, cig: int, s_base: int, channel: int, taps: Any, first: int, plane: int,
          p0: int) -> tuple[Any, int]:
    """The weight of term j = t Cig + c of a DIRECT row, and where its source run starts."""
    t = j // cig
    c = j - t * cig
    return packed[row + j], s_base + c * channel + taps[first + t, TAP_PHASE] * plane + taps[first + t, TAP_SHIFT] + p0


def _epilogue_keyed(stamp: str) -> Any:
    """_epilogue with `stamp` (the activation module's name) as a closure variable (see _STAMP)."""

    @numba.njit(cache=True, error_model="numpy")
    def _epilogue(acc: Any, n: int, p0: int, y: Any, y_base: int, geo: Any, phase: Any, g: int, fparams: Any,
                  segments: Any, activated: Any, tag: Any) -> None:
        ld = geo[LD]
        """The tile's C (acc[o ld + i], wide positions p0 + i of one output phase; Bias included), activated,
        rounded and stored at its output positions (the wide columns dropped). An activation runs over each
        channel's whole row into `activated` (one call per row; the wide columns' few values are computed and
        dropped), then the
        row's runs of output positions (`segments`: start in the row, length, output offset) are stored (CLIP on
        the way)."""
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        prefer_wide_vectors()
        gx, gy = geo[GRID + 2], geo[GRID + 1]
        qy_count, qx_count = phase[PH_Q + 1], phase[PH_Q + 2]
        code = geo[ACTIVATION]
        step = geo[OUT_STEP + 2] * geo[OUT_STRIDE + 2]
        p1, p2, p3 = np.float32(fparams[0]), np.float32(fparams[1]), np.float32(fparams[2])
        # The runs: rows of the source grid, cut at the tile's ends, less their wide columns and wide rows.
        qz = p0 // (gy * gx)
        qy = (p0 - qz * gy * gx) // gx
        qx = p0 - (qz * gy + qy) * gx
        count = 0
        p = p0
        while p < p0 + n:
            length = min(gx - qx, p0 + n - p)
            valid = max(min(qx_count - qx, length), 0) if qy < qy_count else 0
            if valid > 0:
                segments[count, 0] = p - p0
                segments[count, 1] = valid
                segments[count, 2] = (qz * geo[OUT_STEP] + phase[PH_R]) * geo[OUT_STRIDE] + \
                    (qy * geo[OUT_STEP + 1] + phase[PH_R + 1]) * geo[OUT_STRIDE + 1] + \
                    (qx * geo[OUT_STEP + 2] + phase[PH_R + 2]) * geo[OUT_STRIDE + 2]
                count += 1
            p += length
            qx += length
            if qx == gx:
                qx = 0
                qy += 1
                if qy == gy:
                    qy = 0
                    qz += 1
        for o in range(geo[COG]):
            row = acc[o * ld:o * ld + n]
            if code not in (_NONE, _IDENTITY, _CLIP):
                # into another buffer: in place, LLVM's overlap check sends the loop to its scalar version (6x slower)
                _activate_store(code, p1, p2, p3, row, 0, n, activated, 0, tag)
                row = activated[:n]
            base = y_base + (g * geo[COG] + o) * geo[OUT_C]
            for s in range(count):
                lo, length, at = segments[s, 0], segments[s, 1], base + segments[s, 2]
                if code == _CLIP:
                    for i in range(length):
                        _store(y, at + i * step, m_maximum(p1, m_minimum(row[lo + i], p2)), tag)
                elif step == 1:
                    for i in range(length):
                        _store(y, at + i, row[lo + i], tag)
                else:
                    for i in range(length):
                        _store(y, at + i * step, row[lo + i], tag)

    return _epilogue


_epilogue = _epilogue_keyed(_STAMP)


def _run_units_keyed(stamp: str) -> Any:
    """_run_units with `stamp` (the activation module's name) as a closure variable (see _STAMP)."""

    @numba.njit(cache=True, error_model="numpy")
    def _run_units(first: int, last: int, x: Any, packed: Any, b: Any, y: Any, geo: Any, phases: Any, taps: Any,
                   tiles: Any, offsets: Any, fparams: Any, tag: Any) -> None:
        """Work units [first, last): unit u is part u % PARTS of the tiles of (image, group) u // PARTS."""
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        cig, cog, groups, parts = geo[CIG], geo[COG], geo[GROUPS], geo[PARTS]
        tile, tile_count, method, plane = geo[TILE], geo[TILES], geo[METHOD], geo[PLANE]
        direct_source = geo[DIRECT_SOURCE] != 0
        ld = geo[LD]
        # MICRO reads up to MICRO_COLUMNS - 1 elements past a tile's last position (for results it drops): built
        # rows, or these zeros past the end (never garbage: a subnormal would only slow the arithmetic down)
        source = np.empty(geo[SOURCE_SIZE] + MICRO_COLUMNS, packed.dtype)
        source[geo[SOURCE_SIZE]:] = 0
        acc = np.empty(geo[ACC_ROWS] * ld, packed.dtype)
        segments = np.empty((tile + 2, 3), np.int64)
        stage = np.zeros(IN_PLACE_SPLIT * MICRO_COLUMNS, packed.dtype)
        stage_offsets = np.arange(IN_PLACE_SPLIT) * MICRO_COLUMNS
        activated = np.empty(tile, packed.dtype)
        item = packed.itemsize
        gx, rows = geo[GRID + 2], geo[GRID] * geo[GRID + 1]
        current = -1
        for unit in range(first, last):
            pair = unit // parts
            part = unit - pair * parts
            image = pair // groups
            g = pair - image * groups
            if not direct_source and (parts > 1 or pair != current):
                # the source rows the part's tiles read (all of them where the part is the whole unit)
                first_row, last_row = 0, rows
                if parts > 1:
                    first_row, last_row = rows, 0
                    for index in range(part * tile_count // parts, (part + 1) * tile_count // parts):
                        first_row = min(first_row, tiles[index, 1] // gx)
                        last = tiles[index, 1] + tiles[index, 2] + MICRO_COLUMNS - 1 + geo[MAX_SHIFT]
                        last_row = max(last_row, (last - 1) // gx + 1)
                    last_row = min(last_row, rows)
                _build_source(x, image * geo[IN_N] + g * cig * geo[IN_C], geo, source, first_row, last_row, tag)
            current = pair
            if direct_source:
                s_address = x.ctypes.data + (image * geo[IN_N] + g * cig * geo[IN_C]) * x.itemsize
            else:
                s_address = source.ctypes.data
            channel = geo[SRC_CHANNEL]
            for index in range(part * tile_count // parts, (part + 1) * tile_count // parts):
                ph, p0, n = tiles[index, 0], tiles[index, 1], tiles[index, 2]
                phase = phases[ph]
                first_tap, count = phase[PH_FIRST], phase[PH_COUNT]
                w_row = phase[PH_PACKED] + g * geo[ACC_ROWS] * count * cig
                _fill_bias(acc, ld, geo, b, g, tag)
                if count == 0:
                    pass
                elif method == MICRO:
                    w_address = packed.ctypes.data + w_row * item
                    o_address = offsets.ctypes.data + phase[PH_OFFSETS] * offsets.itemsize
                    # one source z-offset's taps at a time: a 3-D tile's source window is then one band of planes
                    # the input read in place: the columns past the last whole block of MICRO_COLUMNS are staged
                    # (MICRO would read past them, past the end of the input's last row)
                    split, terms = phase[PH_SPLIT], count * cig
                    whole = n - n % MICRO_COLUMNS if direct_source else n
                    for j in range(0, terms, split):
                        k = min(split, terms - j)
                        if whole < n:
                            _stage_tail(stage, x, image * geo[IN_N] + g * cig * geo[IN_C], offsets,
                                        phase[PH_OFFSETS] + j, k, p0 + whole, n - whole)
                        for block in range(geo[ACC_ROWS] // MICRO_ROWS):
                            w_block = w_address + (block * terms + j) * MICRO_ROWS * item
                            c_block = acc.ctypes.data + block * MICRO_ROWS * ld * item
                            for column in range(0, whole, MICRO_COLUMNS):
                                micro(c_block + column * item, ld, w_block, s_address + (p0 + column) * item,
                                      o_address + j * offsets.itemsize, k)
                            if whole < n:
                                micro(c_block + whole * item, ld, w_block, stage.ctypes.data,
                                      stage_offsets.ctypes.data, k)
                elif method == DIRECT:
                    _direct_tile(packed, w_row, count, cig, cog, source, 0, channel, taps, first_tap, plane, p0,
                                 n, acc, ld)
                _epilogue(acc, n, p0, y, image * geo[OUT_N], geo, phase, g, fparams, segments, activated, tag)

    return _run_units


_run_units = _run_units_keyed(_STAMP)


def _parallel_keyed(stamp: str) -> Any:
    """_parallel with `stamp` (the activation module's name) as a closure variable (see _STAMP)."""

    @numba.njit(cache=True, parallel=True, error_model="numpy")
    def _parallel(x: Any, packed: Any, b: Any, y: Any, geo: Any, phases: Any, taps: Any, tiles: Any, offsets: Any,
                  fparams: Any, tag: Any) -> None:
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        units = geo[N] * geo[GROUPS] * geo[PARTS]
        chunks = geo[CHUNKS]
        for chunk in numba.prange(chunks):
            _run_units(chunk * units // chunks, (chunk + 1) * units // chunks, x, packed, b, y, geo, phases, taps,
                       tiles, offsets, fparams, tag)

    return _parallel


_parallel = _parallel_keyed(_STAMP)


# -- the kernel object ----------------------------------------------------------------------------------------------

class ConvolutionKernel:
    """A compiled CONVOLUTION: call with (inputs, outputs) flat views; `initialize(owned)` packs an owned filter."""

    def __init__(self, desc: Any) -> None:
        self.plan = plan_convolution(desc, numba.get_num_threads())
        half = desc.output_tensor.data_type == DataType.FLOAT16
        self._view = np.dtype(np.uint16) if half else np.dtype(np.float32)
        self._tag = F16_TAG if half else NATIVE_TAG
        self._dummy = np.zeros(1, self._view)
        self._packed: np.ndarray[Any, Any] | None = None
        values = [0.0, 0.0, 0.0]
        activation = desc.fused_activation
        if activation is not None:
            if int(activation.OPERATOR_TYPE) == _CLIP:
                values = [float(np.float32(activation.min)), float(np.float32(activation.max)), 0.0]
            else:
                values = [*activation_values(activation).values(), 0.0, 0.0, 0.0][:3]
        self._fparams = np.array(values, np.float64)

    def pack(self, filter_view: FlatArray) -> np.ndarray[Any, Any]:
        """The filter packed into the plan's per-tap matrices."""
        plan = self.plan
        packed = np.empty(int(plan.geo[PACKED_SIZE]), np.float32)
        _pack_filter(filter_view.view(self._view), packed, plan.geo, plan.phases, plan.taps, self._tag)
        return packed

    def initialize(self, owned: dict[int, FlatArray]) -> None:
        """Packs the filter (input slot 1) once where it is owned by DML: bound at initialize, it never changes."""
        if 1 in owned:
            self._packed = self.pack(owned[1])

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        plan = self.plan
        view = self._view
        packed = self._packed if self._packed is not None else self.pack(cast(FlatArray, inputs[1]))
        bias = inputs[2]
        arguments = (cast(FlatArray, inputs[0]).view(view), packed,
                     self._dummy if bias is None else bias.view(view), outputs[0].view(view), plan.geo, plan.phases,
                     plan.taps, plan.tiles, plan.offsets, self._fparams, self._tag)
        if plan.parallel:
            with PARALLEL_LAUNCH:
                # one chunk at a time to whichever thread is free: on a shared machine a thread may get less of its
                # core (set here: inside the kernel, numba could not cache it)
                previous = numba.set_parallel_chunksize(1)
                try:
                    _parallel(*arguments)
                finally:
                    numba.set_parallel_chunksize(previous)
        else:
            units = int(plan.geo[N] * plan.geo[GROUPS] * plan.geo[PARTS])
            _run_units(0, units, *arguments)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """All descriptor work happens here (the plan); the kernel packs the filter (unless owned) and runs.
    ALLOW_HALF_PRECISION_COMPUTATION permits but does not require FLOAT16 arithmetic: FLOAT32 is used."""
    del flags, debug
    return ConvolutionKernel(desc)
