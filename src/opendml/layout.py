"""A compiled graph's tensors in host memory: the view of a tensor placed in an arena, and an input laid out in it.

`graph.CompiledGraph` lays out NumPy inputs with these, and `dask_graph` a Dask input whose strides alias; they live
here so that `dask_graph` need not import `graph` (which hands Dask inputs over to it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import BindingError
from .tensor import TensorDesc

NDArray = np.ndarray[Any, Any]


def lay_out_input(view: NDArray, array: NDArray, aliased: bool, name: str) -> None:
    """Copies the input `name` into its tensor's view; where the view's strides alias (map two elements onto one),
    the input must read back as given."""
    np.copyto(view, array)
    if aliased and not np.array_equal(view, array, equal_nan=True):
        raise BindingError(f"CompiledGraph: input {name!r} differs where its strides map two elements onto one (a "
                           f"stride of 0 broadcasts one value)")


def tensor_view(arena: NDArray, offset: int, desc: TensorDesc, *, writable: bool) -> NDArray:
    """The logical array of a tensor placed at `offset` in the arena, addressed through its element strides."""
    dtype = desc.data_type.numpy_dtype
    size = desc.total_tensor_size_in_bytes
    flat = arena[offset: offset + size - size % dtype.itemsize].view(dtype)
    view: NDArray = np.lib.stride_tricks.as_strided(
        flat, shape=desc.sizes, strides=tuple(stride * dtype.itemsize for stride in desc.element_strides),
        writeable=writable)
    return view
