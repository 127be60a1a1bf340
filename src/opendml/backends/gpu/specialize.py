"""Whether the gpu backend builds its shaders for each descriptor (issue 29).

Specialized (the default): `compile_operator` knows the descriptor, so a shader is built for its sizes and strides as
WGSL constants (dimensions contiguous in every tensor merged first), and its pipeline is cached by that source.
Generic: the shapes travel in the parameter buffer `P` and one pipeline serves every shape, the path a descriptor
too irregular to specialize usefully keeps.

`ENABLED` is read when an operator is compiled; set `OPENDML_GPU_SPECIALIZE=0` in the environment (or assign
`ENABLED = False` before compiling) to force the generic path, as the tests do to keep both paths correct.
"""

from __future__ import annotations

import os

#: Build shaders specialized to each descriptor (read at compile time).
ENABLED: bool = os.environ.get("OPENDML_GPU_SPECIALIZE", "1") != "0"
