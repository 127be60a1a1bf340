"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions in NumPy: the element-wise engine's NumPy kernel on the
descriptor's 6-D view of InputTensor (one strided assignment), at any size: what answers while numba's row-copy
kernel (../depth_space.py) is compiled in the background."""

from .element_wise import compile_kernel

__all__ = ["compile_kernel"]
