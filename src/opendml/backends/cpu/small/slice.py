"""SLICE and SLICE1 in NumPy: the element-wise engine's NumPy kernel on the descriptor's re-strided view of
InputTensor (one strided assignment), at any size: what answers while numba's row-copy kernel (../slice.py) is
compiled in the background."""

from .element_wise import compile_kernel

__all__ = ["compile_kernel"]
