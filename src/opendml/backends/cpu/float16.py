"""FLOAT16 on the CPU: FLOAT16 tensors travel as their uint16 bits, converted with LLVM's half-precision
conversions (vcvtph2ps / vcvtps2ph where the machine has F16C; both vectorize). One place for every kernel that
reads or writes FLOAT16 (REDUCE, MEAN_VARIANCE_NORMALIZATION1, the activations)."""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic


def _half_to_float_typer(typingctx: Any, bits: Any) -> Any:
    if bits != types.uint16:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


def _float_to_half_typer(typingctx: Any, value: Any) -> Any:
    if value != types.float32:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


# Typed Any: numba's stubs give an intrinsic its typer's call signature.
#: FLOAT16 bits (uint16) -> float32, exact.
half_to_float: Any = intrinsic(_half_to_float_typer)
#: float32 -> FLOAT16 bits, rounded to nearest even (overflow to infinity, NaN kept).
float_to_half: Any = intrinsic(_float_to_half_typer)


#: The `tag` argument kernels take: F16_TAG where a uint16 array holds FLOAT16 bits, NATIVE_TAG otherwise (numba
#: compiles one specialization per tag type).
F16_TAG = np.float32(0.0)
NATIVE_TAG = np.int64(0)


def is_f16(array: Any, tag: Any) -> bool:
    """At typing time: whether `array` holds FLOAT16 bits (uint16 data with a float `tag`; a UINT16 tensor has an
    integer tag)."""
    return isinstance(tag, types.Float) and array.dtype == types.uint16
