"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions on the cpu: the identity on the descriptor's 6-D
`input_window` view of InputTensor (ops/depth_space.py), run by slice.py's row-copy kernel (OutputTensor's rows, each
gathered from the block's channel planes), or on small tensors by the engine's NumPy kernel (small/element_wise.py),
which copies the strided view in one assignment."""

from .slice import compile_kernel

__all__ = ["compile_kernel"]
