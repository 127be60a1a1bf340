"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions on the gpu: the engine's kernel (element_wise.py), which reads
InputTensor at the descriptor's `input_window` strides over its 6-D `input_view_sizes` (ops/depth_space.py)."""

from .element_wise import compile_kernel

__all__ = ["compile_kernel"]
