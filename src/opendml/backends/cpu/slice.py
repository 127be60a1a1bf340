"""SLICE and SLICE1 on the cpu: the engine's NumPy kernel (small/element_wise.py), which reads InputTensor through the
descriptor's `input_window` (a strided NumPy view, negative strides included, that NumPy checks lies inside the bound
range) and copies it into the output view in one strided assignment."""

from .small.element_wise import compile_kernel

__all__ = ["compile_kernel"]
