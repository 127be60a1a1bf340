"""PADDING, PADDING1 and TILE on the cpu: the NumPy kernel (small/padding.py), a gather through per-dimension index
maps, at any size (a copy: NumPy's indexing moves the bytes as fast as a loop would)."""

from .small.padding import compile_kernel

__all__ = ["compile_kernel"]
