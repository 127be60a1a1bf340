"""GEMM on the CPU: NumPy's BLAS for the products, a numba epilogue for Beta x C and the fused activation.

Output = FusedActivation(Alpha x op(A) x op(B) + Beta x C) runs as, per matrix of the batch and per row panel of it:

1. op(A) and op(B) reach BLAS where they lie when each has a unit stride in one of its two dimensions and a leading
   dimension that covers the other (a transpose folded into the strides is BLAS's trans flag: no copy). Anything
   else (FLOAT16; zero, overlapping or doubly strided layouts) is packed into a contiguous FLOAT32 block first: B
   once per matrix (not again when consecutive batch elements share it; an OWNED_BY_DML B shared by the batch once,
   at initialize), A per row panel.
2. BLAS (sgemm) computes Alpha x op(A) x op(B) for a panel of at most _PANEL_ELEMENTS output elements (this
   machine's last-level cache holds it), straight into the output where it is FLOAT32 with a unit
   column stride, else into a FLOAT32 staging panel. An output with a unit row stride instead runs as the
   transposed product (Output^T = op(B)^T x op(A)^T), unless a row-wise SOFTMAX is fused.
3. The epilogue then walks the panel while it is in cache, row by row: + Beta x C (C read through its own strides,
   broadcast by zero strides), the fused activation (element_wise.activation_module()'s `activate_store`, the
   formulas the standalone activations compile to; CLIP and SOFTMAX / SOFTMAX1 along the rows here), one rounding to
   the output's type, stored through the output's strides. Without C, activation or conversion it is skipped.

Accumulation is BLAS's: FLOAT32 (FLOAT16 widened exactly, rounded once on store) in FLOAT32 by blocks of K. The
BLAS is NumPy's own (convolution_blas.py: the OpenBLAS its wheels bundle, called from numba through its address), so
a process keeps one BLAS thread pool and the same speed as np.matmul. Large matrices use BLAS's threads; batches of
small ones (where BLAS's threading costs more than it gains) run one matrix per numba thread with BLAS held to one
thread for the call. Where NumPy's OpenBLAS is not found, compile_kernel returns the NumPy kernel of small/gemm.py.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any, cast

import numba
import numpy as np

from ...ops.activation_softmax import _FusedSoftmax
from ...ops.activations import ActivationOperatorDesc, activation_values
from ...ops.base import OperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags, MatrixTransform, OperatorType
from .. import FlatArray, Kernel
from .convolution_blas import NO_TRANS, SGEMM, TRANS, one_blas_thread
from .convolution_blas import gemm as blas_gemm
from .element_wise import activation_module
from .element_wise import load_element as _load
from .float16 import F16_TAG, NATIVE_TAG
from .math import exp_f32
from .memory_kernels import PARALLEL_LAUNCH
from .small import viewer
from .small.gemm import softmax

#: Most output elements per panel: a panel (16 MiB of FLOAT32) is still in the last-level cache when the epilogue
#: walks it. Smaller panels cost a repacking of B inside BLAS each (2048^3 FLOAT32, Intel, 2 cores: one panel
#: 51.8 ms plain and 53.1 with RELU; 1024-row panels 55.0, 512-row panels 57.3).
_PANEL_ELEMENTS = 1 << 22
#: Matrices of at most this many multiply-adds (M x N x K) in a batch of at least two run one per numba thread,
#: BLAS on one thread each; larger ones one at a time through BLAS's threads. Intel, 2 cores, quiet machine, FLOAT32
#: batches, one per numba thread against BLAS's threads: [2048, 32, 32] 0.70 against 1.26 ms, [512, 64, 64] 1.2
#: against 2.0 ms, [128, 128, 128] 7.8 against 4.1 ms, [32, 256, 256] 11.0 against 5.2 ms.
_SMALL_PRODUCT = 1 << 19

#: A batch run one matrix per thread is cut into this many shares per thread, taken as threads come free (a thread
#: held up by another process then delays less than a whole half of the batch).
_SHARES_PER_THREAD = 4

#: numba's index of the thread running a prange iteration (typed Any: numba re-exports it without declaring it).
_thread_id: Any = numba.np.ufunc.parallel.get_thread_id

_ACTIVATIONS = activation_module()
_activate_store = _ACTIVATIONS.activate_store
#: The generated module's name: a closure variable of the kernels that call it, so that it keys numba's cache of
#: them (as in mean_variance_normalization1.py).
_STAMP: str = _ACTIVATIONS.__name__

_NO_TRANS, _TRANS = NO_TRANS, TRANS
#: Epilogue codes beside the activations' DML_OPERATOR_TYPE values: none, CLIP, a row's SOFTMAX (or SOFTMAX1).
_NONE, _IDENTITY = 0, int(OperatorType.ACTIVATION_IDENTITY)
_CLIP, _SOFTMAX = -1, -2


# -- the kernels ------------------------------------------------------------------------------------------------------

# Layout of the int64 `meta` array.
(_M_SGEMM, _M_BATCH, _M_M, _M_N, _M_K, _M_PANEL, _M_A_RS, _M_A_CS, _M_A_PACK, _M_A_TRANS, _M_A_LD, _M_B_RS, _M_B_CS,
 _M_B_PACK, _M_B_TRANS, _M_B_LD, _M_C_RS, _M_C_CS, _M_HAS_C, _M_Y_RS, _M_Y_CS, _M_Y_LD, _M_DIRECT, _M_CODE,
 _M_CHUNKS, _M_B_READY, _META_LEN) = range(27)


@numba.njit(inline="always")
def _pack(x: Any, base: int, rs: int, cs: int, rows: int, cols: int, out: Any, tag: Any) -> None:
    """out[r * cols + j] = x[base + r * rs + j * cs], widened to out's type, read in x's faster order."""
    if cs <= rs or rows == 1:
        for r in range(rows):
            for j in range(cols):
                out[r * cols + j] = _load(x, base + r * rs + j * cs, tag)
    else:
        for j in range(cols):
            for r in range(rows):
                out[r * cols + j] = _load(x, base + r * rs + j * cs, tag)


@numba.njit(inline="always", error_model="numpy")
def _row_special(code: int, buf: Any, cols: int, p1: Any, p2: Any) -> None:
    """CLIP (p1, p2 = Min, Max) or SOFTMAX over buf[:cols], in place."""
    if code == _CLIP:  # max(Min, min(x, Max)): Min above Max gives Min; NaN stays NaN
        for j in range(cols):
            v = buf[j]
            v = p2 if v > p2 else v
            buf[j] = p1 if v < p1 else v
        return
    top = buf[0]
    for j in range(1, cols):
        top = buf[j] if buf[j] > top or top != top else top   # a NaN anywhere makes the row NaN
    total = np.float32(0.0)
    for j in range(cols):
        e = exp_f32(np.float32(buf[j] - top))
        buf[j] = e
        total += e
    scale = np.float32(1.0) / total
    for j in range(cols):
        buf[j] = buf[j] * scale


@numba.njit(inline="always", error_model="numpy")
def _epilogue(t: Any, t0: int, ldt: int, rows: int, cols: int, y: Any, y0: int, y_rs: int, y_cs: int, c: Any,
              c0: int, c_rs: int, c_cs: int, has_c: bool, beta: Any, code: int, p1: Any, p2: Any, p3: Any,
              buf: Any, stage: Any, tag: Any, direct: bool) -> None:
    """Rows [0, rows) of the panel t (row r at t0 + r * ldt, FLOAT32, Alpha already applied): + Beta x C, the
    fused activation, stored to y (row r at y0 + r * y_rs, column stride y_cs) in y's type."""
    for r in range(rows):
        tr, yr = t0 + r * ldt, y0 + r * y_rs
        if direct and not has_c and code > 0:
            # in place in the FLOAT32 output: each element is read before it is written
            _activate_store(code, p1, p2, p3, t, tr, tr + cols, y, yr - tr, tag)
            continue
        for j in range(cols):
            buf[j] = t[tr + j]
        if has_c:
            cr = c0 + r * c_rs
            for j in range(cols):
                buf[j] = buf[j] + beta * _load(c, cr + j * c_cs, tag)
        applied = code
        if code < 0:
            _row_special(code, buf, cols, p1, p2)
            applied = _IDENTITY
        elif code == _NONE:
            applied = _IDENTITY
        if y_cs == 1:
            _activate_store(applied, p1, p2, p3, buf, 0, cols, y, yr, tag)
        else:
            _activate_store(applied, p1, p2, p3, buf, 0, cols, stage, 0, tag)
            for j in range(cols):
                y[yr + j * y_cs] = stage[j]


@numba.njit(cache=True)
def _pack_matrix(x: Any, base: int, rs: int, cs: int, rows: int, cols: int, out: Any, tag: Any) -> None:
    """_pack, for a B packed once at initialize."""
    _pack(x, base, rs, cs, rows, cols, out, tag)


def _run_keyed(stamp: str) -> Any:
    """_run with `stamp` (the activation module's name) as a closure variable: see _STAMP."""

    @numba.njit(cache=True, error_model="numpy")
    def run(first: int, last: int, a: Any, b: Any, c: Any, y: Any, pa: Any, pb: Any, pt: Any, buf: Any,
            stage: Any, meta: Any, tab: Any, fp: Any, alpha: Any, beta: Any, tag: Any) -> None:
        """Batch elements [first, last) (see the module docstring); pa, pb, pt, buf and stage are this call's own
        scratch (packed A panel, packed B, staged output panel, FLOAT32 row, output-typed row)."""
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        address, batches = meta[_M_SGEMM], meta[_M_BATCH]
        m, n, k, panel = meta[_M_M], meta[_M_N], meta[_M_K], meta[_M_PANEL]
        a_rs, a_cs, a_pack, a_trans, a_ld = meta[_M_A_RS], meta[_M_A_CS], meta[_M_A_PACK] != 0, meta[_M_A_TRANS], \
            meta[_M_A_LD]
        b_rs, b_cs, b_pack, b_trans, b_ld = meta[_M_B_RS], meta[_M_B_CS], meta[_M_B_PACK] != 0, meta[_M_B_TRANS], \
            meta[_M_B_LD]
        c_rs, c_cs, has_c = meta[_M_C_RS], meta[_M_C_CS], meta[_M_HAS_C] != 0
        y_rs, y_cs, y_ld, direct, code = meta[_M_Y_RS], meta[_M_Y_CS], meta[_M_Y_LD], meta[_M_DIRECT] != 0, \
            meta[_M_CODE]
        zero = alpha - alpha
        p1, p2, p3 = np.float32(fp[0]), np.float32(fp[1]), np.float32(fp[2])
        epilogue_needed = has_c or not direct or (code != _NONE and code != _IDENTITY)
        size = pt.itemsize
        packed_b = tab[batches + first] if meta[_M_B_READY] != 0 else -1   # pb already holds that B
        for e in range(first, last):
            oa, ob, oc, oy = tab[e], tab[batches + e], tab[2 * batches + e], tab[3 * batches + e]
            if b_pack:
                if ob != packed_b:
                    _pack(b, ob, b_rs, b_cs, k, n, pb, tag)
                    packed_b = ob
                b_address, b_t, ldb = np.int64(pb.ctypes.data), _NO_TRANS, n
            else:
                b_address, b_t, ldb = np.int64(b.ctypes.data) + ob * size, b_trans, b_ld
            for r0 in range(0, m, panel):
                rows = min(panel, m - r0)
                if a_pack:
                    _pack(a, oa + r0 * a_rs, a_rs, a_cs, rows, k, pa, tag)
                    a_address, a_t, lda = np.int64(pa.ctypes.data), _NO_TRANS, k
                else:
                    a_address, a_t, lda = np.int64(a.ctypes.data) + (oa + r0 * a_rs) * size, a_trans, a_ld
                if direct:
                    t0 = oy + r0 * y_rs
                    blas_gemm(address, a_t, b_t, rows, n, k, alpha, a_address, lda, b_address, ldb, zero,
                               np.int64(y.ctypes.data) + t0 * size, y_ld)
                    if epilogue_needed:
                        _epilogue(y, t0, y_rs, rows, n, y, t0, y_rs, y_cs, c, oc + r0 * c_rs, c_rs, c_cs, has_c, beta,
                                 code, p1, p2, p3, buf, stage, tag, True)
                else:
                    blas_gemm(address, a_t, b_t, rows, n, k, alpha, a_address, lda, b_address, ldb, zero,
                               np.int64(pt.ctypes.data), n)
                    _epilogue(pt, 0, n, rows, n, y, oy + r0 * y_rs, y_rs, y_cs, c, oc + r0 * c_rs, c_rs, c_cs, has_c,
                             beta, code, p1, p2, p3, buf, stage, tag, False)

    return run


_run = _run_keyed(_STAMP)


def _parallel_keyed(stamp: str) -> Any:
    """_parallel with `stamp` (the activation module's name) as a closure variable: see _STAMP."""

    @numba.njit(parallel=True, cache=True, error_model="numpy")
    def parallel(a: Any, b: Any, c: Any, y: Any, pa: Any, pb: Any, pt: Any, buf: Any, stage: Any, meta: Any,
                 tab: Any, fp: Any, alpha: Any, beta: Any, tag: Any) -> None:
        """run() over the batch in meta[_M_CHUNKS] equal shares, taken by the threads one at a time (the caller sets
        numba's chunk size to 1), each thread with its own scratch row."""
        chunks, batches = meta[_M_CHUNKS], meta[_M_BATCH]
        if stamp == "":  # never true: it makes `stamp` part of numba's cache key of this function
            return
        for chunk in numba.prange(chunks):
            w = _thread_id()
            _run(chunk * batches // chunks, (chunk + 1) * batches // chunks, a, b, c, y, pa[w], pb[w], pt[w], buf[w],
                 stage[w], meta, tab, fp, alpha, beta, tag)

    return parallel


_parallel = _parallel_keyed(_STAMP)


# -- the plan ---------------------------------------------------------------------------------------------------------

def _blas_layout(rows: int, cols: int, rs: int, cs: int) -> tuple[int, int] | None:
    """(trans flag, leading dimension) under which a row-major BLAS reads the [rows, cols] matrix at element strides
    (rs, cs) where it lies, or None when it must be packed."""
    if (cols == 1 or cs == 1) and (rows == 1 or rs >= max(1, cols)):
        return _NO_TRANS, rs if rows > 1 else max(1, cols)
    if (rows == 1 or rs == 1) and (cols == 1 or cs >= max(1, rows)):
        return _TRANS, cs if cols > 1 else max(1, rows)
    return None


def _batch_offsets(tensor: TensorDesc, batch: tuple[int, ...]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Element offset of each batch element's matrix (row-major over `batch`), a size-1 (or missing leading)
    dimension of `tensor` broadcast."""
    rank = len(batch)
    sizes, strides = tensor.sizes[:-2], tensor.element_strides[:-2]
    own = [(1, 0)] * (rank - len(sizes)) + list(zip(sizes, strides, strict=True))
    table = np.zeros(1, np.int64)
    for d, size in enumerate(batch):
        stride = own[d][1] if own[d][0] == size else 0
        table = (table[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
    return table


def _matrix_strides(tensor: TensorDesc, transposed: bool) -> tuple[int, int]:
    """(row, column) element strides of the logical matrix (the last two dimensions, swapped when `transposed`); a
    dimension of size 1 gets stride 0 (a broadcast C row or column)."""
    sizes, strides = tensor.sizes[-2:], tensor.element_strides[-2:]
    rs, cs = (strides[0] if sizes[0] > 1 else 0), (strides[1] if sizes[1] > 1 else 0)
    return (cs, rs) if transposed else (rs, cs)


def _fused(activation: OperatorDesc | None, sizes: Sequence[int]) -> tuple[int, list[float]]:
    """(epilogue code, its three float parameters) of a fused activation whose effect stays within a row."""
    if activation is None:
        return _NONE, [0.0, 0.0, 0.0]
    kind = activation.OPERATOR_TYPE
    if isinstance(activation, ActivationOperatorDesc):
        return int(kind), [*activation_values(activation).values(), 0.0, 0.0, 0.0][:3]
    if kind is OperatorType.ELEMENT_WISE_CLIP:
        clip = cast(Any, activation)
        return _CLIP, [float(np.float32(clip.field_value("Min"))), float(np.float32(clip.field_value("Max"))), 0.0]
    assert isinstance(activation, _FusedSoftmax) and row_softmax(activation, sizes)
    return _SOFTMAX, [0.0, 0.0, 0.0]


def row_softmax(activation: _FusedSoftmax, sizes: Sequence[int]) -> bool:
    """Whether a fused SOFTMAX / SOFTMAX1 normalizes each row of the output on its own: its axes, less those of size 1,
    are the last one (or none, in rows of one element)."""
    axes = {axis for axis in activation.softmax_axes(len(sizes)) if sizes[axis] > 1}
    return axes == {len(sizes) - 1} or (not axes and sizes[-1] == 1)


class GemmPlan:
    """Everything a dispatch needs, worked out from the descriptor once. `output` and `activation` replace the
    descriptor's (the staged SOFTMAX1 of compile_kernel)."""

    def __init__(self, desc: Any, output: TensorDesc, activation: OperatorDesc | None) -> None:
        batch, m, n, k = desc.matrix_sizes()
        a, b, c, y = desc.a_tensor, desc.b_tensor, desc.c_tensor, output
        half = a.data_type == DataType.FLOAT16
        code, values = _fused(activation, y.sizes)
        a_rs, a_cs = _matrix_strides(a, desc.trans_a is MatrixTransform.TRANSPOSE)
        b_rs, b_cs = _matrix_strides(b, desc.trans_b is MatrixTransform.TRANSPOSE)
        c_rs, c_cs = _matrix_strides(c, False) if c is not None else (0, 0)
        y_rs, y_cs = _matrix_strides(y, False)
        offsets = [_batch_offsets(a, batch), _batch_offsets(b, batch),
                   _batch_offsets(c, batch) if c is not None else np.zeros(math.prod(batch), np.int64),
                   _batch_offsets(y, batch)]
        row_major = _blas_layout(m, n, y_rs, y_cs)
        column_major = _blas_layout(n, m, y_cs, y_rs)
        # Output^T = op(B)^T x op(A)^T where only the transpose of the output suits BLAS (not for a row's softmax)
        self.swapped = code != _SOFTMAX and not half and (row_major is None or row_major[0] == _TRANS) and \
            column_major is not None and column_major[0] == _NO_TRANS
        if self.swapped:
            m, n = n, m
            (a_rs, a_cs), (b_rs, b_cs) = (b_cs, b_rs), (a_cs, a_rs)
            c_rs, c_cs, y_rs, y_cs = c_cs, c_rs, y_cs, y_rs
            offsets[0], offsets[1] = offsets[1], offsets[0]
            row_major = column_major
        a_layout = None if half else _blas_layout(m, k, a_rs, a_cs)   # FLOAT16 operands are widened into blocks
        b_layout = None if half else _blas_layout(k, n, b_rs, b_cs)
        direct = not half and y.data_type == a.data_type and row_major is not None and row_major[0] == _NO_TRANS
        batches = len(offsets[3])
        threads = numba.get_num_threads()
        parallel = batches > 1 and m * n * k <= _SMALL_PRODUCT and max(m * n, m * k, k * n) <= _PANEL_ELEMENTS // 16 \
            and threads > 1  # (each thread's scratch then at most a sixteenth of a panel per matrix)
        chunks = min(batches, _SHARES_PER_THREAD * threads) if parallel else 1
        panel = m if parallel else max(1, min(m, _PANEL_ELEMENTS // n))
        meta = np.zeros(_META_LEN, np.int64)
        meta[_M_SGEMM] = SGEMM
        meta[_M_BATCH], meta[_M_M], meta[_M_N], meta[_M_K], meta[_M_PANEL] = batches, m, n, k, panel
        meta[_M_A_RS], meta[_M_A_CS], meta[_M_A_PACK] = a_rs, a_cs, a_layout is None
        meta[_M_A_TRANS], meta[_M_A_LD] = a_layout or (_NO_TRANS, k)
        meta[_M_B_RS], meta[_M_B_CS], meta[_M_B_PACK] = b_rs, b_cs, b_layout is None
        meta[_M_B_TRANS], meta[_M_B_LD] = b_layout or (_NO_TRANS, n)
        meta[_M_C_RS], meta[_M_C_CS], meta[_M_HAS_C] = c_rs, c_cs, c is not None
        meta[_M_Y_RS], meta[_M_Y_CS], meta[_M_DIRECT], meta[_M_CODE] = y_rs, y_cs, direct, code
        meta[_M_Y_LD] = row_major[1] if direct and row_major is not None else n
        meta[_M_CHUNKS] = chunks
        self.meta, self.tab = meta, np.concatenate(offsets)
        self.fp = np.array(values, np.float64)
        self.real = np.dtype(np.float32)
        self.alpha, self.beta = np.float32(desc.alpha), np.float32(desc.beta)   # FLOAT fields, as DML has them
        self.views = (np.dtype(np.uint16) if half else self.real,
                      np.dtype(np.uint16) if y.data_type == DataType.FLOAT16 else np.dtype(y.data_type.numpy_dtype))
        self.tag = F16_TAG if half else NATIVE_TAG
        self.parallel, self.chunks = parallel, chunks
        self.scratch_sizes = (panel * k if a_layout is None else 1, k * n if b_layout is None else 1,
                              panel * n if not direct else 1, n, n)
        self._scratch: list[tuple[np.ndarray[Any, Any], ...]] = []
        self._lock = threading.Lock()
        # an OWNED_BY_DML B that needs packing, packed once by initialize (B's slot: A's where the roles swapped)
        self._b_slot = 0 if self.swapped else 1
        self._b_source: FlatArray | None = None
        self._b_packed: np.ndarray[Any, Any] | None = None
        self._meta_ready = meta.copy()
        self._meta_ready[_M_B_READY] = 1

    def initialize(self, owned: dict[int, FlatArray]) -> None:
        """Packs an owned B once, where every batch element shares it (results are the same either way)."""
        source = owned.get(self._b_slot)
        b_offsets = self.tab[self.meta[_M_BATCH]:2 * self.meta[_M_BATCH]]
        if source is None or not self.meta[_M_B_PACK] or (b_offsets != b_offsets[0]).any():
            return
        k, n = int(self.meta[_M_K]), int(self.meta[_M_N])
        packed = np.empty(k * n, self.real)
        _pack_matrix(source.view(self.views[0]), int(b_offsets[0]), int(self.meta[_M_B_RS]), int(self.meta[_M_B_CS]),
                     k, n, packed, self.tag)
        self._b_source, self._b_packed = source, packed

    def _take_scratch(self, threads: int) -> tuple[np.ndarray[Any, Any], ...]:
        """Scratch blocks reused between dispatches (a fresh large allocation gets fresh pages each time), one set
        per thread of a batch run (at least `threads`, numba's count now); a concurrent dispatch of the same kernel
        makes its own."""
        with self._lock:
            if self._scratch and self._scratch[-1][0].shape[0] >= threads:
                return self._scratch.pop()
        shape = (threads,) if self.parallel else ()
        pa, pb, pt, buf, stage = self.scratch_sizes
        return (np.empty((*shape, pa), self.real), np.empty((*shape, pb), self.real),
                np.empty((*shape, pt), self.real), np.empty((*shape, buf), self.real),
                np.empty((*shape, stage), self.views[1]))

    def __call__(self, a: FlatArray, b: FlatArray, c: FlatArray | None, y: FlatArray) -> None:
        view, y_view = self.views
        first, second = (b.view(view), a.view(view)) if self.swapped else (a.view(view), b.view(view))
        c_view = first[:1] if c is None else c.view(view)  # an absent C is never read
        arguments = (first, second, c_view, y.view(y_view))
        scratch = self._take_scratch(numba.get_num_threads() if self.parallel else 0)
        meta, buffers = self.meta, scratch
        if self._b_packed is not None and (b if self._b_slot == 1 else a) is self._b_source:
            meta = self._meta_ready  # the owned B, packed at initialize: every thread reads the one copy
            packed = self._b_packed
            rows = scratch[1].shape[:-1]
            buffers = (scratch[0], np.lib.stride_tricks.as_strided(packed, (*rows, packed.size),
                                                                   (0,) * len(rows) + (packed.itemsize,)),
                       *scratch[2:])
        try:
            if self.parallel:
                with PARALLEL_LAUNCH, one_blas_thread():
                    chunk_size = numba.set_parallel_chunksize(1)   # shares handed out as threads come free
                    try:
                        _parallel(*arguments, *buffers, meta, self.tab, self.fp, self.alpha, self.beta, self.tag)
                    finally:
                        numba.set_parallel_chunksize(chunk_size)
            else:
                _run(0, int(meta[_M_BATCH]), *arguments, *buffers, meta, self.tab, self.fp, self.alpha, self.beta,
                     self.tag)
        finally:
            with self._lock:
                self._scratch.append(scratch)


class _PlanKernel:
    """A plan as a kernel, with the owned-weights hook (backends/__init__.py)."""

    def __init__(self, plan: GemmPlan) -> None:
        self.plan = plan

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        self.plan(cast(FlatArray, inputs[0]), cast(FlatArray, inputs[1]), inputs[2], outputs[0])

    def initialize(self, owned: dict[int, FlatArray]) -> None:
        self.plan.initialize(owned)


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """All descriptor work happens here; the kernel only binds views and runs. FLOAT16 computes in FLOAT32 whatever
    the flags say (ALLOW_HALF_PRECISION_COMPUTATION permits half precision, it does not require it)."""
    gemm = cast(Any, desc)
    activation = gemm.fused_activation
    if not SGEMM:
        from .small.gemm import compile_kernel as numpy_kernel
        return numpy_kernel(desc, flags, debug)
    output = gemm.output_tensor
    if not isinstance(activation, _FusedSoftmax) or row_softmax(activation, output.sizes):
        return _PlanKernel(GemmPlan(gemm, output, activation))
    # A SOFTMAX1 across rows: the result staged whole in FLOAT32, then normalized over its axes in float64 (as the
    # NumPy kernel does) and rounded once into the output.
    staged_desc = TensorDesc(DataType.FLOAT32, output.sizes)
    staged_plan = GemmPlan(gemm, staged_desc, None)
    axes = tuple(activation.softmax_axes(len(output.sizes)))
    output_view = viewer(output)
    dtype = output.data_type.numpy_dtype

    def staged_kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        staged = np.empty(output.sizes, np.float32)
        staged_plan(cast(FlatArray, inputs[0]), cast(FlatArray, inputs[1]), inputs[2], staged.reshape(-1))
        output_view(outputs[0])[...] = softmax(staged, axes).astype(dtype)

    return staged_kernel
