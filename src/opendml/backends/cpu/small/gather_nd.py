"""GATHER_ND on small tensors: GATHER_ND1's small kernel for the equivalent descriptor (small/gather_nd1.py)."""

from .gather_nd1 import compile_kernel

__all__ = ["compile_kernel"]
