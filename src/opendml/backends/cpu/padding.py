"""PADDING, PADDING1 and TILE on the cpu: the NumPy kernel (small/padding.py), strided band copies at memory speed,
at any size."""

from .small.padding import compile_kernel

__all__ = ["compile_kernel"]
