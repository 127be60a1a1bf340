"""NONZERO_COORDINATES on small tensors: NumPy's nonzero of the input's bits under `ops.nonzero.nonzero_mask`
(FLOAT16/FLOAT32: -0.0 is zero, NaN is not), which lists the elements in row-major order as the numba kernel does;
the first count rows of the coordinates get each element's last N coordinates, the rest are not written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ....ops.base import OperatorDesc
from ....ops.nonzero import NonzeroCoordinatesOperatorDesc, nonzero_mask
from ....tensor import TensorDesc
from ....types import DataType, ExecutionFlags
from ... import Kernel
from . import FlatArray, viewer


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    nonzero = cast(NonzeroCoordinatesOperatorDesc, desc)
    source, coordinates = nonzero.input_tensor, nonzero.output_coordinates_tensor
    bits = np.dtype(f"u{source.data_type.element_size}")
    mask = bits.type(nonzero_mask(source.data_type))
    input_view = viewer(source)
    rows = coordinates.sizes[-2]
    table = viewer(TensorDesc(DataType.UINT32, (rows, nonzero.columns), tuple(coordinates.element_strides[-2:])))
    first = source.dimension_count - nonzero.columns

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        found = np.nonzero(input_view(cast(FlatArray, inputs[0]).view(bits)) & mask)[first:]
        count = found[0].size
        table(outputs[1].view(np.uint32))[:count] = np.stack(found, axis=1)
        outputs[0].view(np.uint32)[0] = count

    return kernel
