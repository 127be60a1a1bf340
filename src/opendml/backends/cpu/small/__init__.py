"""The CPU backend's small-tensor kernels: NumPy, no numba.

A dispatch of a few thousand elements is over in microseconds either way, but the first numba kernel a process
calls costs about 0.2 s to load from numba's cache (its typing and target contexts) and seconds to compile when the
cache is empty. So descriptors whose tensors all hold at most `SMALL_TENSOR_ELEMENTS` elements (see
`CpuBackend.compile`) get these kernels instead, for the operators whose semantics NumPy states directly: REDUCE,
ARGMIN/ARGMAX, SPLIT, JOIN, ONE_HOT, GATHER_ND and GATHER_ND1 (one module each, named as the numba ones). They
read and write the bound ranges through strided views of the descriptors' element strides, exactly the elements the
numba kernels address. The test suite runs every backend test through both kinds of kernel (tests/conftest.py:
`cpu` forces numba's, `cpu-small` these), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....tensor import TensorDesc

FlatArray = np.ndarray[Any, np.dtype[Any]]


def viewer(desc: TensorDesc) -> Callable[[FlatArray], FlatArray]:
    """The function that makes the logical array `desc` describes over a flat, typed view of its bound range (element
    0 at the start; the flat view's dtype may be the unsigned integer of the element's width), its byte strides
    worked out once: a dispatch makes each view in well under a microsecond. NumPy checks that the view stays
    inside the flat array, and keeps a read-only one read-only."""
    shape = desc.sizes
    strides = tuple(stride * desc.data_type.element_size for stride in desc.element_strides)

    def view(flat: FlatArray) -> FlatArray:
        return np.ndarray(shape, flat.dtype, flat, 0, strides)

    return view
