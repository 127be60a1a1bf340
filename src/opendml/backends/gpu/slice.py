"""SLICE and SLICE1 on the gpu: the engine's kernel (element_wise.py), which reads InputTensor at the descriptor's
`input_window` (its first element plus the signed strides, in wrapping u32 arithmetic: exact, as every offset read
lies inside the input)."""

from .element_wise import compile_kernel

__all__ = ["compile_kernel"]
