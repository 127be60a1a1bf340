"""Byte-level copy, fill and prefetch primitives for the CPU kernels, in numba (SPLIT and ONE_HOT are made of them;
GATHER_ND1 and MEAN_VARIANCE_NORMALIZATION1 stream their outputs and prefetch their inputs with them).

SPLIT and ONE_HOT only move bytes, so their speed is the memory bandwidth. A plain store to memory first reads the
cache line it writes (read-for-ownership): an output written with plain stores costs twice its size in traffic,
while a large memcpy (the benchmarks' floor) uses non-temporal stores that skip that read. For outputs larger than
the caches, ``stream_copy`` and ``stream_fill`` write whole 64-byte lines with non-temporal stores (x86-64 only;
elsewhere they are plain copies and fills). Small outputs use plain stores, which keep the result in cache.
``touch_lines`` reads a small range through in order, so that random reads into it then hit the caches (GATHER_ND1's
batches).

Everything here works on raw addresses (``array.ctypes.data``); the callers guarantee the ranges are inside
their arrays, which the operator's validation and the binding checks make sure of.
"""

from __future__ import annotations

import importlib
import platform
import threading
from typing import Any

import numba
import numba.core.cgutils
import numba.extending

# Numba, its intrinsics and llvmlite are typed Any here on purpose: numba's own typing checks the kernels, and mypy
# reads this module the same whether or not the installed numba ships type information.
ir: Any = importlib.import_module("llvmlite.ir")
types: Any = numba.types
cgutils: Any = numba.core.cgutils
intrinsic: Any = numba.extending.intrinsic
njit_cached: Any = numba.njit(cache=True)

#: Whether non-temporal 64-byte stores (and the sfence that orders them) are available.
HAVE_STREAMING_STORES = platform.machine().lower() in ("x86_64", "amd64")

#: Outputs of at least this many bytes are written with non-temporal stores: about where a plain store's
#: read-for-ownership starts to cost more than keeping the output in cache saves.
STREAMING_THRESHOLD_BYTES = 4 << 20

#: Bytes per cache line, the unit of the non-temporal stores and of prefetch.
LINE_BYTES = 64
_LINE = LINE_BYTES

#: Held while a `parallel=True` kernel runs. numba's fallback threading layer (workqueue, used where neither
#: OpenMP nor TBB is installed) aborts the process when two threads launch parallel kernels at once; such a
#: kernel already uses every core, so taking turns costs nothing.
PARALLEL_LAUNCH = threading.Lock()


def _memcpy_typer(typingctx: Any, dst: Any, src: Any, nbytes: Any) -> Any:
    """llvm.memcpy(dst, src, nbytes) between raw addresses (non-overlapping ranges)."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        byte_ptr = ir.IntType(8).as_pointer()
        target = builder.inttoptr(args[0], byte_ptr)
        source = builder.inttoptr(args[1], byte_ptr)
        cgutils.raw_memcpy(builder, target, source, args[2], 1)
        return context.get_dummy_value()

    return sig, codegen


_memcpy: Any = intrinsic(_memcpy_typer)


def _stream_line_typer(typingctx: Any, dst: Any, src: Any) -> Any:
    """Copies 64 bytes from src (any alignment) to dst (64-byte aligned) with a non-temporal store."""
    sig = types.void(types.intp, types.intp)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        line = ir.VectorType(ir.IntType(64), 8)
        source = builder.inttoptr(args[1], line.as_pointer())
        target = builder.inttoptr(args[0], line.as_pointer())
        value = builder.load(source, align=1)
        store = builder.store(value, target, align=_LINE)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.IntType(32)(1)]))
        return context.get_dummy_value()

    return sig, codegen


stream_line: Any = intrinsic(_stream_line_typer)


def _prefetch_typer(typingctx: Any, address: Any) -> Any:
    """Asks for the cache line at a raw address (llvm.prefetch: read, into all cache levels); never faults."""
    sig = types.void(types.intp)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        byte_ptr, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        name = "llvm.prefetch.p0"
        function = builder.module.globals.get(name) or ir.Function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), name)
        builder.call(function, [builder.inttoptr(args[0], byte_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


prefetch: Any = intrinsic(_prefetch_typer)


def _keep_typer(typingctx: Any, value: Any) -> Any:
    """Makes LLVM compute `value` although nothing uses it (an empty asm statement with side effects reads it; no
    instruction is emitted)."""
    sig = types.void(value)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        builder.asm(ir.FunctionType(ir.VoidType(), [args[0].type]), "", "r", [args[0]], side_effect=True)
        return context.get_dummy_value()

    return sig, codegen


keep: Any = intrinsic(_keep_typer)


@numba.njit(cache=True, inline="always")
def touch_lines(data: Any, start: int, stop: int) -> None:
    """Reads one element of each cache line of data[start:stop] in order (and the last element), so that the
    hardware prefetchers bring the range into cache at streaming speed before random reads need it; prefetch
    instructions measured no gain here, loads do. `data` holds unsigned integers."""
    step = max(1, LINE_BYTES // data.itemsize)
    seen = data[stop - 1]
    for at in range(start, stop, step):
        seen |= data[at]
    keep(seen)


def _sfence_typer(typingctx: Any) -> Any:
    """Orders the non-temporal stores before every later store (x86 sfence)."""
    sig = types.void()

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        if HAVE_STREAMING_STORES:
            fence = builder.module.declare_intrinsic("llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(fence, [])
        return context.get_dummy_value()

    return sig, codegen


_sfence: Any = intrinsic(_sfence_typer)


#: LLVM picks 256-bit vectors on AVX-512 machines unless a function asks for more; measured here (Xeon, AVX-512),
#: the GELU loop ran 1.6x faster with 512-bit vectors. Ignored where the machine has no 512-bit vectors.
_WIDE_VECTORS = '"prefer-vector-width"="512"'


def _prefer_wide_vectors_typer(typingctx: Any) -> Any:
    """Marks the function that calls it "prefer-vector-width"="512", so that its loops vectorize at the widest
    width the machine has. llvmlite checks function attributes against a list of flag names that has no
    key-value form, so the attribute is added to its set directly; an llvmlite that stores attributes some other
    way leaves the function as it is (same results, LLVM's default width)."""
    sig = types.void()

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        attributes = builder.function.attributes
        if isinstance(attributes, set):
            set.add(attributes, _WIDE_VECTORS)
        return context.get_dummy_value()

    return sig, codegen


#: Call first thing in a kernel whose loops are compute-bound (see _prefer_wide_vectors_typer).
prefer_wide_vectors: Any = intrinsic(_prefer_wide_vectors_typer)


def _copy_bytes(dst: int, src: int, nbytes: int) -> None:
    """memcpy with plain stores."""
    if nbytes > 0:
        _memcpy(dst, src, nbytes)


def _stream_copy(dst: int, src: int, nbytes: int) -> None:
    """memcpy whose whole 64-byte destination lines are written with non-temporal stores; call ``fence`` after
    the last one."""
    lines, src_at, dst_at = begin_stream(dst, src, nbytes)
    stream_lines(dst_at, src_at, lines)


def _stream_lines(dst: int, src: int, lines: int) -> None:
    """Copies ``lines`` whole 64-byte lines from src (any alignment) to dst (64-byte aligned) with non-temporal
    stores."""
    for line in range(lines):
        stream_line(dst + line * _LINE, src + line * _LINE)


def _drain_stream(pending: int, src: int, dst: int, lines: int) -> tuple[int, int, int]:
    """Streams up to ``lines`` of the ``pending`` whole lines left of a deferred ``stream_copy`` (as
    ``begin_stream`` returned them, or as this returned them last); returns what is then left: (pending, src,
    dst)."""
    count = min(lines, pending)
    stream_lines(dst, src, count)
    return pending - count, src + count * _LINE, dst + count * _LINE


def _begin_stream(dst: int, src: int, nbytes: int) -> tuple[int, int, int]:
    """The start of a deferred ``stream_copy``: copies the partial 64-byte lines at both ends of the destination
    with plain stores and returns (lines, src_at, dst_at): the caller streams ``lines`` whole lines from
    ``src_at`` to ``dst_at`` with ``stream_lines``, or a few at a time with ``drain_stream``, whenever it likes,
    then calls ``fence``."""
    if nbytes <= 0:
        return 0, src, dst
    head = (_LINE - (dst & (_LINE - 1))) & (_LINE - 1)
    if head >= nbytes or not HAVE_STREAMING_STORES:
        _memcpy(dst, src, nbytes)
        return 0, src, dst
    if head:
        _memcpy(dst, src, head)
    lines = (nbytes - head) // _LINE
    tail = head + lines * _LINE
    if tail < nbytes:
        _memcpy(dst + tail, src + tail, nbytes - tail)
    return lines, src + head, dst + head


def _stream_fill(dst: int, nbytes: int, pattern: int) -> None:
    """Fills [dst, dst + nbytes) with a pattern that repeats every 64 bytes, in phase with the addresses:
    byte ``a`` gets ``pattern[a % 64]`` (``pattern`` is the address of 128 bytes, the 64-byte pattern twice, so
    that an unaligned start can copy from the middle). Whole lines use non-temporal stores; call ``fence``."""
    if nbytes <= 0:
        return
    phase = dst & (_LINE - 1)
    head = (_LINE - phase) & (_LINE - 1)
    if head >= nbytes or not HAVE_STREAMING_STORES:
        position = 0
        while position < nbytes:
            offset = (dst + position) & (_LINE - 1)
            count = min(_LINE - offset, nbytes - position)
            _memcpy(dst + position, pattern + offset, count)
            position += count
        return
    if head:
        _memcpy(dst, pattern + phase, head)
    lines = (nbytes - head) // _LINE
    position = head
    for _ in range(lines):
        stream_line(dst + position, pattern)
        position += _LINE
    if position < nbytes:
        _memcpy(dst + position, pattern, nbytes - position)


def _fence() -> None:
    """Makes the non-temporal stores before it visible before any later store."""
    _sfence()


copy_bytes: Any = njit_cached(_copy_bytes)
stream_lines: Any = numba.njit(cache=True, inline="always")(_stream_lines)
begin_stream: Any = njit_cached(_begin_stream)
drain_stream: Any = numba.njit(cache=True, inline="always")(_drain_stream)
stream_copy: Any = njit_cached(_stream_copy)
stream_fill: Any = njit_cached(_stream_fill)
fence: Any = njit_cached(_fence)
