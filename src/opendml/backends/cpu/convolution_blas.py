"""NumPy's own BLAS (the OpenBLAS NumPy ships, scipy-openblas) called from numba: `gemm` is an intrinsic that calls
cblas_sgemm or cblas_dgemm through a function address passed at run time (so that numba's on-disk cache of the
kernels that call it stays valid across processes: the address changes, the code does not).

The convolution kernel calls it from numba's threads, one single-threaded GEMM per tile, with OpenBLAS held to one
thread for the duration (`one_blas_thread`): OpenBLAS's thread count is process-wide (its per-thread setter is
process-wide too in its pthreads build), so it is set around the kernel and restored after.
"""

from __future__ import annotations

import ctypes
import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numba
import numpy as np

ir: Any = importlib.import_module("llvmlite.ir")
_types: Any = numba.types
_intrinsic: Any = numba.extending.intrinsic


def _library() -> Any:
    """NumPy's OpenBLAS (its wheel bundles it in numpy.libs with 64-bit integers and `scipy_`-prefixed names)."""
    directory = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    candidates = sorted(directory.glob("libscipy_openblas64_*.so*"))
    if not candidates:
        return None
    return ctypes.CDLL(str(candidates[0]))


_LIB = _library()
#: cblas_sgemm's and cblas_dgemm's addresses (0 where NumPy's BLAS is not the one this module knows).
SGEMM = DGEMM = 0
_set_threads: Any = None
_get_threads: Any = None
if _LIB is not None:
    SGEMM = ctypes.cast(_LIB.scipy_cblas_sgemm64_, ctypes.c_void_p).value or 0
    DGEMM = ctypes.cast(_LIB.scipy_cblas_dgemm64_, ctypes.c_void_p).value or 0
    _set_threads = _LIB.scipy_openblas_set_num_threads64_
    _get_threads = _LIB.scipy_openblas_get_num_threads64_
    _get_threads.restype = ctypes.c_int

#: CBLAS's constants.
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

_THREADS_LOCK = threading.Lock()
_holders = 0
_saved = 1


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread while the block runs (nested and concurrent blocks share one saved count)."""
    global _holders, _saved
    if _set_threads is None:
        yield
        return
    with _THREADS_LOCK:
        if _holders == 0:
            _saved = int(_get_threads())
            if _saved != 1:
                _set_threads(1)
        _holders += 1
    try:
        yield
    finally:
        with _THREADS_LOCK:
            _holders -= 1
            if _holders == 0 and _saved != 1:
                _set_threads(_saved)


def _gemm_typer(typingctx: Any, fn: Any, trans_a: Any, trans_b: Any, m: Any, n: Any, k: Any, alpha: Any, a: Any,
                lda: Any, b: Any, ldb: Any, beta: Any, c: Any, ldc: Any) -> Any:
    if alpha not in (_types.float32, _types.float64) or beta != alpha:
        return None
    i64 = _types.int64
    signature = _types.void(i64, i64, i64, i64, i64, i64, alpha, i64, i64, i64, i64, alpha, i64, i64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        int32, int64 = ir.IntType(32), ir.IntType(64)
        real = ir.FloatType() if alpha == _types.float32 else ir.DoubleType()
        pointer = real.as_pointer()
        function_type = ir.FunctionType(ir.VoidType(), [int32, int32, int32, int64, int64, int64, real, pointer,
                                                        int64, pointer, int64, real, pointer, int64])
        function = builder.inttoptr(args[0], function_type.as_pointer())
        builder.call(function, [ir.Constant(int32, ROW_MAJOR), builder.trunc(args[1], int32),
                                builder.trunc(args[2], int32), args[3], args[4], args[5], args[6],
                                builder.inttoptr(args[7], pointer), args[8], builder.inttoptr(args[9], pointer),
                                args[10], args[11], builder.inttoptr(args[12], pointer), args[13]])
        return context.get_dummy_value()

    return signature, codegen


#: gemm(fn, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): row-major C = alpha op(A) op(B) +
#: beta C through cblas_?gemm at address fn (SGEMM for float32 alpha and beta, DGEMM for float64); a, b and c are
#: addresses (int64), trans_a and trans_b NO_TRANS or TRANS.
gemm: Any = _intrinsic(_gemm_typer)
