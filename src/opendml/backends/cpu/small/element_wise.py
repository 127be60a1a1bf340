"""The element-wise operators on small tensors: each descriptor's formula tree rendered by NumPy (formula.evaluate)
over strided views of the bound ranges (zero strides broadcast, any other strides read in place).

Every input is read whole before the output is written, so in-place dispatches need no care. Floats compute in the
compute float (FLOAT16 widened exactly, the result rounded once), integers exactly in 64 bits and wrapped to the
output's width on store (formula.py); ScaleBias applies to the scaled inputs first, in the compute float.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ....formula import COORDINATES, F, I, compute_float, coordinate_values, load, numpy_function
from ....ops.base import OperatorDesc
from ....ops.elementwise import ElementWiseOperatorDesc
from ....types import ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    operator = cast(ElementWiseOperatorDesc, desc)
    tensors = operator.present_tensors()
    view_types = {name: operator.view_type(name) for name in tensors}
    output_type = view_types["OutputTensor"]
    tree = operator.formula_tree()
    formula = numpy_function(tree, output_type)
    parameters: dict[str, Any] = operator.formula_parameters()
    # a generator's coordinate leaves (formula.COORDINATES): the output element's index, row and col
    output_sizes = tensors["OutputTensor"].sizes
    parameters.update({node.name: coordinate_values(node.name, output_sizes) for node in tree.walk()
                       if node.op == "name" and node.name in COORDINATES})
    float_type = compute_float(view_types)
    views = {name: viewer(tensor) for name, tensor in tensors.items()}
    window = getattr(operator, "input_window", None)
    if window is not None:   # SLICE, SLICE1, the depth/space operators: InputTensor read through the window
        view_sizes = getattr(operator, "input_view_sizes", lambda: output_sizes)()   # ops/depth_space.py: 6-D
        views["InputTensor"] = _window_viewer(view_sizes, output_sizes, view_types["InputTensor"], *window())
    scale_bias, scaled = operator.scale_bias_value(), operator.scaled_inputs()
    inputs_of = [(name, variable) for name, variable in operator.INFO.inputs]
    output_dtype = output_type.numpy_dtype

    def read(name: str, flat: FlatArray) -> Any:
        data_type = view_types[name]
        value = load(views[name](flat.view(data_type.numpy_dtype)), F if data_type.is_float else I, data_type,
                     float_type)
        if name in scaled and scale_bias is not None:
            dtype = value.dtype.type
            value = value * dtype(scale_bias.scale) + dtype(scale_bias.bias)
        return value

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        env = dict(parameters)
        with np.errstate(all="ignore"):   # IEEE results (overflow to infinity, NaN) and wrapping integers
            for (name, variable), flat in zip(inputs_of, inputs, strict=True):
                if flat is not None:
                    env[variable] = read(name, flat)
            result = formula(env)
            target = views["OutputTensor"](outputs[0].view(output_dtype))
            target[...] = result   # broadcast, rounded (floats), wrapped (integers) or 1/0 (booleans) on the way

    return kernel


def _window_viewer(sizes: Sequence[int], shape: Sequence[int], data_type: Any, base: int,
                   strides: Sequence[int]) -> Any:
    """The view of a flat input that starts at element `base` and steps by the signed element `strides` along
    `sizes`, read as `shape` (the output's; a copy where the two differ) (NumPy refuses a view that would leave the
    flat array)."""
    size = data_type.element_size

    def view(flat: FlatArray) -> FlatArray:
        window = np.ndarray(tuple(sizes), flat.dtype, flat, base * size, tuple(stride * size for stride in strides))
        return window.reshape(tuple(shape))

    return view
