"""ARGMIN and ARGMAX on small tensors: REDUCE's small kernel in the operator's AxisDirection (small/reduce.py)."""

from .reduce import compile_kernel

__all__ = ["compile_kernel"]
