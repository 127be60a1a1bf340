"""The cpu backend's CONVOLUTION kernels (backends/cpu/convolution.py, numba; backends/cpu/small/convolution.py, NumPy):
each way the numba kernel computes a tile (MICRO, on a source grid or the input in place; DIRECT), its epilogue's paths
(Bias, activations, fused CLIP, output strides that are not unit, FLOAT16 rounding), an owned filter packed at
initialize, against tests/reference.py's float64 convolution (a loop over the
definition, not these kernels) within the accumulation bound of their sums. tests/test_convolution.py holds the
operator's goldens and properties on every backend."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from reference import accumulation_bound, convolution_terms, reference_convolution
from strategies import T, build_buffer, execute_between_sentinels, read_buffer

import opendml as dml
import opendml.backends.cpu
from opendml.backends.cpu import convolution as kernel_module

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
FORWARD, BACKWARD = dml.ConvolutionDirection.FORWARD, dml.ConvolutionDirection.BACKWARD
CROSS, FLIP = dml.ConvolutionMode.CROSS_CORRELATION, dml.ConvolutionMode.CONVOLUTION
MICRO, DIRECT = kernel_module.MICRO, kernel_module.DIRECT


def conv_desc(x: list[int], w: list[int], *, direction: dml.ConvolutionDirection = FORWARD,
              mode: dml.ConvolutionMode = CROSS, strides: list[int] | None = None, dilations: list[int] | None = None,
              start: list[int] | None = None, end: list[int] | None = None, extra: list[int] | None = None,
              groups: int = 1, bias: bool = True, activation: dml.OperatorDesc | None = None,
              data_type: dml.DataType = F32, x_strides: list[int] | None = None, y_strides: list[int] | None = None,
              filter_flags: dml.TensorFlags = dml.TensorFlags.NONE) -> dml.ConvolutionOperatorDesc:
    """A descriptor whose output sizes are the expected ones."""
    probe = dml.ConvolutionOperatorDesc(T(data_type, x), T(data_type, w), None, T(data_type, x), mode, direction,
                                        None, strides, dilations, start, end, extra, groups)
    out = list(probe.expected_output_sizes())
    count = len(x) - 2
    return dml.ConvolutionOperatorDesc(
        T(data_type, x, x_strides), T(data_type, w, flags=filter_flags),
        T(data_type, [1, out[1]] + [1] * count) if bias else None, T(data_type, out, y_strides), mode, direction,
        None, strides, dilations, start, end, extra, groups, activation)


def run(desc: dml.ConvolutionOperatorDesc, arrays: list[np.ndarray | None], small: bool,
        monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """The output of `desc` on numba's kernel (small False) or NumPy's (small True)."""
    monkeypatch.setattr(opendml.backends.cpu, "SMALL_TENSOR_ELEMENTS", 1 << 40 if small else 0)
    device = dml.Device(backend="cpu", feature_level="6_4")
    compiled = device.compile_operator(device.create_operator(desc))
    (out,) = compiled(*arrays)
    return out


def data(desc: dml.ConvolutionOperatorDesc, seed: int) -> list[np.ndarray | None]:
    """Input, filter and Bias (or None) of `desc`, uniform in [-1, 1), in the tensors' type."""
    rng = np.random.default_rng(seed)
    tensors = (desc.input_tensor, desc.filter_tensor, desc.bias_tensor)
    return [None if t is None else rng.uniform(-1, 1, t.sizes).astype(t.data_type.numpy_dtype) for t in tensors]


def expected(desc: dml.ConvolutionOperatorDesc, arrays: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """(the float64 reference before any activation, its FLOAT32 accumulation bound)."""
    x, w, b = arrays
    assert x is not None and w is not None
    value, magnitude = reference_convolution(
        x, w, b, mode=desc.mode.name, direction=desc.direction.name, strides=desc.strides,
        dilations=desc.dilations, start_padding=desc.start_padding, end_padding=desc.end_padding,
        output_padding=desc.output_padding, group_count=desc.group_count)
    terms = convolution_terms(desc.filter_tensor.sizes, desc.direction.name, desc.group_count,
                              desc.input_tensor.sizes[1])
    return value, accumulation_bound(magnitude, terms, 2.0 ** -24)


#: (id, descriptor arguments, the numba kernel's method, whether it reads the input in place)
CASES: list[tuple[str, dict[str, Any], int, bool]] = [
    ("micro_padded_strided_dilated", dict(x=[2, 40, 9, 8], w=[6, 40, 3, 2], strides=[2, 3], dilations=[2, 1],
                                          start=[1, 2], end=[0, 1]), MICRO, False),
    ("micro_in_place_1x1_staged_tail", dict(x=[2, 48, 5, 7], w=[8, 48, 1, 1], bias=False), MICRO, True),
    ("micro_in_place_1x1_groups_fused_relu", dict(x=[1, 64, 20, 20], w=[48, 32, 1, 1], groups=2,
                                                  activation=dml.ActivationReluOperatorDesc()), MICRO, True),
    ("micro_in_place_3x3_unpadded", dict(x=[2, 40, 9, 37], w=[16, 40, 3, 3]), MICRO, True),
    ("micro_in_place_3x3_convolution_mode_12_channels", dict(x=[1, 32, 6, 6], w=[12, 32, 3, 3], mode=FLIP), MICRO,
     True),
    ("micro_7x7_stride_2", dict(x=[2, 3, 15, 13], w=[16, 3, 7, 7], strides=[2, 2], start=[3, 3], end=[3, 2]),
     MICRO, False),
    ("micro_3d", dict(x=[1, 4, 5, 6, 7], w=[12, 4, 3, 3, 3], start=[1, 1, 1], end=[1, 1, 1]), MICRO, False),
    ("micro_1d_groups", dict(x=[2, 16, 11], w=[24, 8, 3], groups=2, strides=[2], start=[1], end=[1]), MICRO,
     False),
    ("micro_1x1_padded_rows", dict(x=[2, 24, 5, 6], w=[16, 24, 1, 1], x_strides=[840, 35, 7, 1]), MICRO, False),
    ("direct_depthwise", dict(x=[2, 8, 9, 8], w=[8, 1, 3, 3], groups=8, start=[1, 1], end=[1, 1]), DIRECT, False),
    ("direct_depthwise_multiplier_2", dict(x=[1, 4, 7, 6], w=[8, 1, 3, 3], groups=4, dilations=[2, 1]), DIRECT,
     False),
    ("backward_micro_4x4_stride_2", dict(x=[2, 40, 5, 6], w=[40, 6, 4, 4], direction=BACKWARD, strides=[2, 2],
                                         start=[1, 1], end=[1, 1], extra=[1, 0]), MICRO, False),
    ("backward_stride_3_phases_without_taps", dict(x=[2, 6, 5, 5], w=[6, 1, 1, 1], direction=BACKWARD,
                                                   strides=[3, 3], groups=2, extra=[2, 1]), DIRECT, False),
    ("backward_convolution_mode_padded", dict(x=[1, 8, 4, 5], w=[8, 16, 2, 3], direction=BACKWARD, mode=FLIP,
                                              strides=[2, 1], dilations=[1, 2], start=[1, 0], end=[0, 1]),
     MICRO, False),
    ("micro_one_image_in_parts", dict(x=[1, 40, 64, 64], w=[40, 40, 3, 3], start=[1, 1], end=[1, 1]), MICRO, False),
    ("backward_one_image_in_parts", dict(x=[1, 40, 40, 40], w=[40, 24, 4, 4], direction=BACKWARD, strides=[2, 2],
                                         start=[1, 1], end=[1, 1]), MICRO, False),
    ("nhwc_input_and_output", dict(x=[2, 40, 5, 6], w=[8, 40, 3, 3], start=[1, 1], end=[1, 1],
                                   x_strides=[1200, 1, 240, 40], y_strides=[240, 1, 48, 8]), MICRO, False),
]


@pytest.mark.parametrize("small", [False, True], ids=["numba", "numpy"])
@pytest.mark.parametrize(("name", "arguments", "method", "in_place"), CASES, ids=[case[0] for case in CASES])
def test_each_method_matches_the_reference(name: str, arguments: dict[str, Any], method: int, in_place: bool,
                                           small: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    desc = conv_desc(**arguments)
    plan = kernel_module.plan_convolution(desc, 2)
    assert (plan.geo[kernel_module.METHOD], bool(plan.geo[kernel_module.DIRECT_SOURCE])) == (method, in_place)
    # one image, split among two threads: each part builds the source rows its tiles read
    assert ("in_parts" in name) == (plan.geo[kernel_module.PARTS] > 1)
    arrays = data(desc, seed=len(name))
    value, bound = expected(desc, arrays)
    got = run(desc, arrays, small, monkeypatch)
    activation = desc.fused_activation
    assert np.all(np.abs(got - (value if activation is None else np.maximum(value, 0))) <= bound), name


@pytest.mark.parametrize("small", [False, True], ids=["numba", "numpy"])
@pytest.mark.parametrize("activation", [
    dml.ActivationReluOperatorDesc(), dml.ActivationSigmoidOperatorDesc(), dml.ActivationLeakyReluOperatorDesc(0.25),
    dml.ElementWiseClipOperatorDesc(None, None, None, -0.5, 0.75)], ids=["relu", "sigmoid", "leaky_relu", "clip"])
def test_the_fused_activation_applies_to_the_biased_sum(activation: dml.OperatorDesc, small: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fused = the activation's standalone operator on the unfused output (both round the FLOAT32 sum once), on a
    unit-stride output and on a backward one whose phases write every other element (the staged path)."""
    device = dml.Device(backend="cpu", feature_level="6_4")
    for arguments in (dict(x=[2, 40, 6, 5], w=[8, 40, 3, 3], start=[1, 1], end=[1, 1]),
                      dict(x=[1, 8, 4, 5], w=[8, 4, 3, 3], direction=BACKWARD, strides=[2, 2])):
        plain = conv_desc(**arguments)  # type: ignore[arg-type]
        fused = conv_desc(**arguments, activation=activation)  # type: ignore[arg-type]
        arrays = data(plain, seed=7)
        unfused = run(plain, arrays, small, monkeypatch)
        sizes = list(unfused.shape)
        if isinstance(activation, dml.ElementWiseClipOperatorDesc):
            standalone: dml.OperatorDesc = dml.ElementWiseClipOperatorDesc(T(F32, sizes), T(F32, sizes), None,
                                                                           activation.min, activation.max)
        else:
            standalone = dataclasses.replace(activation, input_tensor=T(F32, sizes), output_tensor=T(F32, sizes))
        (want,) = device.compile_operator(device.create_operator(standalone))(unfused)
        got = run(fused, arrays, small, monkeypatch)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("small", [False, True], ids=["numba", "numpy"])
def test_float16_is_accumulated_in_float32_and_rounded_once(small: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """FLOAT16 values are exact in FLOAT32: the result is the FLOAT32 accumulation (within its bound of the float64
    reference) rounded once, so it is within half a FLOAT16 ulp plus that bound."""
    for arguments in (dict(x=[2, 40, 6, 5], w=[8, 40, 3, 3], start=[1, 1], end=[1, 1]),
                      dict(x=[1, 6, 7, 6], w=[6, 1, 3, 3], groups=6), dict(x=[1, 3, 9, 9], w=[8, 3, 5, 5])):
        desc = conv_desc(**arguments, data_type=F16)  # type: ignore[arg-type]
        arrays = data(desc, seed=3)
        value, bound = expected(desc, arrays)
        got = run(desc, arrays, small, monkeypatch).astype(np.float64)
        half_ulp = np.spacing(np.abs(value).astype(np.float16)).astype(np.float64) / 2
        assert np.all(np.abs(got - value) <= half_ulp + bound)


def test_an_owned_filter_packed_at_initialize_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    arguments: dict[str, Any] = dict(x=[2, 40, 6, 5], w=[8, 40, 3, 3], start=[1, 1], end=[1, 1])
    plain = conv_desc(**arguments)
    owned = conv_desc(**arguments, filter_flags=dml.TensorFlags.OWNED_BY_DML)
    arrays = data(plain, seed=11)
    np.testing.assert_array_equal(run(owned, arrays, False, monkeypatch), run(plain, arrays, False, monkeypatch))


def test_strided_buffers_keep_the_sentinels_and_the_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Padded strides on every tensor: only the output's elements are written, no input changes."""
    monkeypatch.setattr(opendml.backends.cpu, "SMALL_TENSOR_ELEMENTS", 0)
    desc = conv_desc([2, 40, 5, 6], [8, 40, 3, 3], start=[1, 1], end=[1, 1], x_strides=[1400, 35, 7, 1],
                     y_strides=[400, 50, 10, 1])
    arrays = data(desc, seed=5)
    tensors = (desc.input_tensor, desc.filter_tensor, desc.bias_tensor)
    buffers = [build_buffer(array, tensor.strides, byte_offset=16 * (1 + i))
               for i, (array, tensor) in enumerate(zip(arrays, tensors, strict=True))
               if array is not None and tensor is not None]
    device = dml.Device(backend="cpu", feature_level="6_4")
    compiled = device.compile_operator(device.create_operator(desc))
    out = desc.output_tensor
    raw = execute_between_sentinels(device, compiled, buffers, 4, out.sizes, out.strides, memory="host", seed=3,
                                    label="CONVOLUTION")
    got = read_buffer(raw, np.float32, out.sizes, out.strides, byte_offset=16 * (len(buffers) + 1))
    value, bound = expected(desc, arrays)
    assert np.all(np.abs(got - value) <= bound)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("small", [False, True], ids=["numba", "numpy"])
def test_infinities_and_nan_follow_ieee_silently(small: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """inf x 0 is NaN, inf x 2 + 1 is inf, NaN propagates; no NumPy warning escapes the small kernel."""
    desc = conv_desc([1, 1, 2, 2], [2, 1, 1, 1])
    x = np.array([np.inf, 1, np.nan, -np.inf], np.float32).reshape(1, 1, 2, 2)
    w = np.array([0, 2], np.float32).reshape(2, 1, 1, 1)
    b = np.array([1, 1], np.float32).reshape(1, 2, 1, 1)
    got = run(desc, [x, w, b], small, monkeypatch)
    expected = [[[np.nan, 1], [np.nan, np.nan]], [[np.inf, 3], [np.nan, -np.inf]]]
    np.testing.assert_array_equal(got[0], np.array(expected, np.float32))
