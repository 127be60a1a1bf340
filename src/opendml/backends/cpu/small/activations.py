"""The standalone activations on small tensors, with the formulas of backends/cpu/activations.py: its
`_activate_store` (FLOAT32 and FLOAT16) and `_integer_store` (RELU and SHRINK on integers, IntegerShrink's plan),
the very source numba compiles for large tensors, run by the Python interpreter (small/interpreted.py) over the
logical elements. FLOAT16 is widened exactly to FLOAT32 and the result rounded once, as DECISIONS 17 says. The
input is read whole before anything is written, so in-place dispatches need no care."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ....ops.activations import ActivationOperatorDesc, IntegerShrink
from ....ops.base import OperatorDesc
from ....types import ExecutionFlags, OperatorType
from ... import Kernel
from .. import activations as formulas
from ..float16 import NATIVE_TAG
from . import FlatArray, viewer
from .interpreted import interpreted
from .vectorized import Span, vectorized


def _load(x: FlatArray, i: int, tag: Any) -> Any:
    return x[i]


def _store(y: FlatArray, i: int, v: Any, tag: Any) -> None:
    y[i] = v


def _nothing() -> None:
    pass


def _load_span(x: FlatArray, i: Span, tag: Any) -> FlatArray:
    return x[i.slice]


def _store_span(y: FlatArray, i: Span, v: Any, tag: Any) -> None:
    y[i.slice] = v


def _vector_namespace() -> dict[str, Any]:
    # The same formulas over whole arrays (small/vectorized.py): one pass of NumPy operations per formula step.
    return vectorized(formulas, (("_load", _load_span), ("_store", _store_span), ("prefer_wide_vectors", _nothing)))


def _namespace() -> dict[str, Any]:
    # The loads and stores of the interpreted formulas see FLOAT32 arrays only (FLOAT16 is converted around them).
    return interpreted(formulas, (("_load", _load), ("_store", _store), ("prefer_wide_vectors", _nothing)))


def parameters(activation: ActivationOperatorDesc) -> tuple[np.float32, np.float32]:
    """The activation's two parameters (0 where it has fewer), rounded to FLOAT32 as DML receives FLOAT fields."""
    values = [*activation.parameters().values(), 0.0, 0.0]
    return np.float32(values[0]), np.float32(values[1])


#: Arrays of more elements than this run the formulas over the whole array in NumPy (small/vectorized.py; the same
#: FLOAT32 results), fewer per element in the interpreter (NumPy's per-call overhead costs more there).
VECTOR_ELEMENTS = 256


def activate(activation: ActivationOperatorDesc, values: FlatArray) -> FlatArray:
    """The FLOAT32 activation of FLOAT32 `values` (any shape), by the formulas numba compiles, run per element by
    the interpreter, or above VECTOR_ELEMENTS over the whole array by NumPy."""
    flat = np.ascontiguousarray(values, np.float32).reshape(-1)
    result = np.empty_like(flat)
    p1, p2 = parameters(activation)
    with np.errstate(all="ignore"):  # overflow to infinity and the like: the formulas' IEEE results
        formulas_run = _vector_namespace() if flat.size > VECTOR_ELEMENTS else _namespace()
        formulas_run["_activate_store"](int(activation.OPERATOR_TYPE), p1, p2, flat, 0, flat.size, result, 0,
                                        NATIVE_TAG)
    return result.reshape(np.shape(values))


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    activation = cast(ActivationOperatorDesc, desc)
    source, target = activation.input_tensor, activation.output_tensor
    assert source is not None and target is not None
    integer = not source.data_type.is_float
    plan = np.zeros(20, np.int64)
    if integer and activation.OPERATOR_TYPE is OperatorType.ACTIVATION_SHRINK:
        bias, threshold = parameters(activation)  # SHRINK's parameters in struct order
        plan[:] = IntegerShrink.of(float(bias), float(threshold), source.data_type).words()

    input_view, output_view, dtype = viewer(source), viewer(target), target.data_type.numpy_dtype

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        x = input_view(cast(FlatArray, inputs[0]))
        if integer:
            flat = x.reshape(-1)  # a copy where the strides need one; the result goes through its own array
            result = np.empty(flat.size, flat.dtype)
            _namespace()["_integer_store"](int(activation.OPERATOR_TYPE), plan, flat, 0, 1, result, 0, 1, flat.size)
        else:
            result = activate(activation, x.astype(np.float32))
        with np.errstate(over="ignore"):  # a FLOAT32 result beyond FLOAT16's range rounds to infinity
            output_view(outputs[0])[...] = result.reshape(x.shape).astype(dtype)

    return kernel
