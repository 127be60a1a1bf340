"""The cpu backend's numba renderer of the element-wise engine (backends/cpu/element_wise.py), where
tests/test_element_wise.py's table does not look: what the generated source depends on (one compiled kernel per
formula and data types, whatever the shapes, strides and parameter values) and that it never types a float
literal as Python's float (which would widen float32 arithmetic to float64). Rendering only: nothing compiles."""

from __future__ import annotations

import re

from element_wise_cases import example

import opendml as dml
from opendml.backends.cpu import element_wise
from opendml.ops.elementwise import CLASSES

DT = dml.DataType


def clip(data_type: dml.DataType, sizes: list[int], strides: list[int] | None, low: float, high: float) -> object:
    return dml.ElementWiseClipOperatorDesc(input_tensor=dml.TensorDesc(data_type, sizes, strides=strides),
                                           output_tensor=dml.TensorDesc(data_type, sizes), scale_bias=None, min=low,
                                           max=high)


def test_one_module_serves_every_shape_stride_and_parameter() -> None:
    first, _, parameters = element_wise.render(clip(DT.FLOAT32, [2, 3], None, -1.0, 1.0))
    second, _, _ = element_wise.render(clip(DT.FLOAT32, [5, 7, 2], [0, 2, 1], 0.0, 6.0))
    assert first == second
    assert parameters == ["Max", "Min"]


def test_data_types_and_scale_bias_presence_change_the_module() -> None:
    plain = element_wise.render(clip(DT.FLOAT32, [4], None, 0.0, 1.0))[0]
    half = element_wise.render(clip(DT.FLOAT16, [4], None, 0.0, 1.0))[0]
    scaled = element_wise.render(dml.ElementWiseClipOperatorDesc(
        input_tensor=dml.TensorDesc(DT.FLOAT32, [4]), output_tensor=dml.TensorDesc(DT.FLOAT32, [4]),
        scale_bias=dml.ScaleBias(2.0, 0.5), min=0.0, max=1.0))[0]
    assert len({plain, half, scaled}) == 3
    assert "half_to_float" in half and "float_to_half" in half
    assert "p__scale" in scaled and "2.0" not in scaled  # ScaleBias's values are arguments, not constants


def test_every_operator_renders_without_python_float_literals() -> None:
    """In the formula loop every number is a typed module constant (`_K0 = np.float32(0.5)`) or an argument."""
    for cls in CLASSES.values():
        source = element_wise.render(example(cls))[0]
        loop = source[source.index("def compute("):source.index("def run_blocks(")]
        assert not re.search(r"(?<![\w.])\d+\.\d*|(?<![\w.])\d+e", loop), (cls.__name__, loop)
        for line in source.splitlines():
            if line.startswith("_K"):
                assert re.fullmatch(r"_K\d+ = np\.(float32|float64|int64|uint64|u?int(8|16|32))\(.+\)", line), line


def test_an_integer_clip_computes_in_its_own_type() -> None:
    """CLIP1 on INT8 (a minimum and maximum of INT8 values: exact in INT8) loads, bounds and compares in int8, so the
    loop works on vectors of 8-bit lanes; a wrapping ADD of INT8 still computes in int64."""
    def tensor(data_type: dml.DataType) -> dml.TensorDesc:
        return dml.TensorDesc(data_type, [4])

    clip1 = dml.ElementWiseClip1OperatorDesc(input_tensor=tensor(DT.INT8), output_tensor=tensor(DT.INT8),
                                             scale_bias=None, min_max_data_type=DT.INT8, min=-5, max=5)
    loop = element_wise.render(clip1)[0].split("def compute(")[1].split("def run_blocks(")[0]
    assert "v_x = np.int8(a0[i])" in loop and "np.int8(p_Min)" in loop and "int64" not in loop
    add = dml.ElementWiseAddOperatorDesc(a_tensor=tensor(DT.INT8), b_tensor=tensor(DT.INT8),
                                         output_tensor=tensor(DT.INT8))
    loop = element_wise.render(add)[0].split("def compute(")[1].split("def run_blocks(")[0]
    assert "v_a = np.int64(a0[i])" in loop


def test_a_streamed_output_is_exact_in_place_and_broadcast() -> None:
    """An output of at least memory_kernels.STREAMING_THRESHOLD_BYTES is computed block by block into a staging
    block and streamed (non-temporal stores): an ADD of a row broadcast by zero strides into its own A (in place,
    [1024, 1025] FLOAT32: runs not a multiple of a cache line) equals NumPy's float32 sum element for element."""
    import numpy as np

    from opendml.backends.cpu.memory_kernels import STREAMING_THRESHOLD_BYTES

    sizes = [1024, 1025]
    assert sizes[0] * sizes[1] * 4 >= STREAMING_THRESHOLD_BYTES
    desc = dml.ElementWiseAddOperatorDesc(a_tensor=dml.TensorDesc(DT.FLOAT32, sizes),
                                          b_tensor=dml.TensorDesc(DT.FLOAT32, sizes, strides=[0, 1]),
                                          output_tensor=dml.TensorDesc(DT.FLOAT32, sizes))
    kernel = element_wise.compile_kernel(desc, dml.ExecutionFlags(0), False)
    a = np.arange(sizes[0] * sizes[1], dtype=np.float32) * np.float32(0.25)
    row = np.linspace(-3.0, 3.0, sizes[1], dtype=np.float32)
    expected = (a.reshape(sizes) + row).ravel()
    kernel([a, row], [a])
    assert np.array_equal(a, expected)
