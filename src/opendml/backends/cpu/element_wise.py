"""The element-wise operators on the cpu backend. (Until the numba renderer lands, the NumPy rendering of
small/element_wise.py serves every size.)"""

from __future__ import annotations

from .small.element_wise import compile_kernel

__all__ = ["compile_kernel"]
