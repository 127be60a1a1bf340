"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions on the cpu: the engine's NumPy kernel (small/element_wise.py),
which reads InputTensor through the descriptor's 6-D `input_window` view (ops/depth_space.py; NumPy checks it lies
inside the bound range) and copies it into the output view in one strided assignment."""

from .small.element_wise import compile_kernel

__all__ = ["compile_kernel"]
