"""CONVOLUTION: goldens worked out by hand (the page, DML_CONVOLUTION_OPERATOR_DESC, has no worked example), every row
of its support table run against the float64 reference, and hypothesis properties through raw buffers (sentinel
bytes around and between the elements, inputs unchanged) against ``reference_convolution``: both modes and
directions, 1 to 3 spatial dimensions, strides, dilations, paddings, OutputPadding, groups (depthwise included),
Bias, fused activations, inputs at any strides (NHWC among them).

The error bound is GEMM's (tests/test_gemm.py) with K = the products each output sums at most, Cin / GroupCount x
the filter's spatial elements, and Bias in the place of Beta x C. The reference itself is checked here against a
scalar loop over the definition and, BACKWARD against FORWARD, by adjointness."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import reference_convolution
from strategies import (
    T,
    backends,
    build_buffer,
    check_gemm_convolution,
    convolution_descs,
    execute_between_sentinels,
    logical_data,
    read_buffer,
)

import opendml as dml

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
CONV = dml.ConvolutionOperatorDesc
MODE, DIRECTION = dml.ConvolutionMode, dml.ConvolutionDirection
CROSS, FLIP = MODE.CROSS_CORRELATION, MODE.CONVOLUTION
FORWARD, BACKWARD = DIRECTION.FORWARD, DIRECTION.BACKWARD
HALF = dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION
RELU = dml.ActivationReluOperatorDesc()


@cache
def device(level: str) -> dml.Device:
    return dml.Device(feature_level=level)


def compile_conv(desc: dml.OperatorDesc, level: str = "6_4", flags: dml.ExecutionFlags = dml.ExecutionFlags.NONE
                 ) -> dml.CompiledOperator:
    made = device(level)
    return made.compile_operator(made.create_operator(desc), flags)


def f32(values: object, shape: tuple[int, ...]) -> np.ndarray:
    return np.array(values, np.float32).reshape(shape)


# -- goldens (worked out by hand) -------------------------------------------------------------------------------------

IMAGE = f32(range(1, 10), (1, 1, 3, 3))            # [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
KERNEL = f32([1, 2, 3, 4], (1, 1, 2, 2))           # [[1, 2], [3, 4]]


@pytest.mark.parametrize(("mode", "expected"), [
    # out[y, x] = sum in[y + i, x + j] k[i, j]: 1 + 4 + 12 + 20, 2 + 6 + 15 + 24, 4 + 10 + 21 + 32, 5 + 12 + 24 + 36
    (CROSS, [[37, 47], [67, 77]]),
    # the filter flipped to [[4, 3], [2, 1]]: 4 + 6 + 8 + 5, 8 + 9 + 10 + 6, 16 + 15 + 14 + 8, 20 + 18 + 16 + 9
    (FLIP, [[23, 33], [53, 63]]),
], ids=["cross_correlation", "convolution"])
def test_2d_modes(mode: dml.ConvolutionMode, expected: list[list[float]]) -> None:
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), None, T(F32, [1, 1, 2, 2]), mode, FORWARD)
    (out,) = compile_conv(desc, "1_0")(IMAGE, KERNEL)
    assert out.reshape(2, 2).tolist() == expected


def test_bias_then_fused_relu() -> None:
    # [[37, 47], [67, 77]] + Bias -50 = [[-13, -3], [17, 27]], then RELU
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 1, 1]), T(F32, [1, 1, 2, 2]),
                fused_activation=RELU)
    (out,) = compile_conv(desc)(IMAGE, KERNEL, f32([-50], (1, 1, 1, 1)))
    assert out.reshape(2, 2).tolist() == [[0, 0], [17, 27]]


def test_fused_clip_from_level_6_0() -> None:
    # [[37, 47], [67, 77]] clipped to [40, 70]
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), None, T(F32, [1, 1, 2, 2]),
                fused_activation=dml.ElementWiseClipOperatorDesc(None, None, None, 40.0, 70.0))
    (out,) = compile_conv(desc, "6_0")(IMAGE, KERNEL)
    assert out.reshape(2, 2).tolist() == [[40, 47], [67, 70]]


def test_owned_filter_and_bias_give_the_same_bits() -> None:
    rng = np.random.default_rng(9)
    x, w, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((2, 4, 6, 5), (6, 2, 3, 3), (1, 6, 1, 1)))
    owned = dml.TensorFlags.OWNED_BY_DML

    def desc(flags: dml.TensorFlags) -> dml.ConvolutionOperatorDesc:
        return CONV(T(F32, [2, 4, 6, 5]), T(F32, [6, 2, 3, 3], flags=flags), T(F32, [1, 6, 1, 1], flags=flags),
                    T(F32, [2, 6, 6, 5]), start_padding=(1, 1), end_padding=(1, 1), group_count=2,
                    fused_activation=RELU)

    (expected,) = compile_conv(desc(dml.TensorFlags.NONE))(x, w, b)
    compiled = compile_conv(desc(owned))
    (first,) = compiled(x, w, b)
    out = np.zeros(expected.shape, np.float32)
    compiled.execute([dml.Binding(x), None, None], [dml.Binding(out)])
    assert first.tobytes() == expected.tobytes() and out.tobytes() == expected.tobytes()


def test_stride_2_and_padding_1() -> None:
    # Output (3 + 1 + 1 - 2) // 2 + 1 = 2 per side; out[y, x] reads rows 2y - 1 + i and columns 2x - 1 + j:
    # (0, 0): only in[0, 0] x k[1, 1] = 4; (0, 1): row 0, columns 1, 2: 2 x 3 + 3 x 4 = 18; (1, 0): rows 1, 2,
    # column 0: 4 x 2 + 7 x 4 = 36; (1, 1): rows 1, 2, columns 1, 2: 5 + 12 + 24 + 36 = 77.
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), None, T(F32, [1, 1, 2, 2]), strides=(2, 2),
                start_padding=(1, 1), end_padding=(1, 1))
    (out,) = compile_conv(desc)(IMAGE, KERNEL)
    assert out.reshape(2, 2).tolist() == [[4, 18], [36, 77]]


def test_1d_dilation_2() -> None:
    # out[y] = 2 in[y] + in[y + 2] over [1, 2, 3, 4, 5]: 2 + 3, 4 + 4, 6 + 5 (3-D tensors: level 4_0)
    desc = CONV(T(F32, [1, 1, 5]), T(F32, [1, 1, 2]), None, T(F32, [1, 1, 3]), dilations=(2,))
    (out,) = compile_conv(desc, "4_0")(f32([1, 2, 3, 4, 5], (1, 1, 5)), f32([2, 1], (1, 1, 2)))
    assert out.reshape(-1).tolist() == [5, 8, 11]


def test_groups_depthwise() -> None:
    # Two groups of one channel: [1, 2, 3] with [1, 1] -> [3, 5]; [10, 20, 30] with [1, -1] -> [-10, -10]
    desc = CONV(T(F32, [1, 2, 3]), T(F32, [2, 1, 2]), None, T(F32, [1, 2, 2]), group_count=2)
    (out,) = compile_conv(desc, "4_0")(f32([1, 2, 3, 10, 20, 30], (1, 2, 3)), f32([1, 1, 1, -1], (2, 1, 2)))
    assert out.reshape(2, 2).tolist() == [[3, 5], [-10, -10]]


def test_groups_of_two_channels() -> None:
    # 4 input channels (1 element each) in 2 groups; filter {2, 2, 1}: output 0 = 1 x 1 + 2 x 2 (channels 0, 1),
    # output 1 = 3 x 3 + 4 x 4 (channels 2, 3) = 5, 25
    desc = CONV(T(F32, [1, 4, 1]), T(F32, [2, 2, 1]), None, T(F32, [1, 2, 1]), group_count=2)
    (out,) = compile_conv(desc, "4_0")(f32([1, 2, 3, 4], (1, 4, 1)), f32([1, 2, 3, 4], (2, 2, 1)))
    assert out.reshape(-1).tolist() == [5, 25]


@pytest.mark.parametrize(("mode", "padding", "expected"), [
    # Input [1, 2, 3] scattered at stride 2 through [1, 10, 100]: y = 0 -> [0, 3), y = 1 -> [2, 5), y = 2 -> [4, 7)
    # plus OutputPadding 1: [1, 10, 100 + 2, 20, 200 + 3, 30, 300, 0] (nothing lands on the padded element)
    (CROSS, (0, 0, 1), [1, 10, 102, 20, 203, 30, 300, 0]),
    # StartPadding 1 and EndPadding 1 crop one element each end of the 7: [10, 102, 20, 203, 30]
    (CROSS, (1, 1, 0), [10, 102, 20, 203, 30]),
    # CONVOLUTION flips the filter to [100, 10, 1]: [100, 10, 1 + 200, 20, 2 + 300, 30, 3]
    (FLIP, (0, 0, 0), [100, 10, 201, 20, 302, 30, 3]),
], ids=["output_padding", "padding", "convolution_mode"])
def test_1d_backward_stride_2(mode: dml.ConvolutionMode, padding: tuple[int, int, int], expected: list[float]) -> None:
    start, end, extra = padding
    desc = CONV(T(F32, [1, 1, 3]), T(F32, [1, 1, 3]), None, T(F32, [1, 1, len(expected)]), mode, BACKWARD,
                strides=(2,), start_padding=(start,), end_padding=(end,), output_padding=(extra,))
    (out,) = compile_conv(desc, "4_0")(f32([1, 2, 3], (1, 1, 3)), f32([1, 10, 100], (1, 1, 3)))
    assert out.reshape(-1).tolist() == expected


def test_backward_filter_is_input_channels_by_output_channels() -> None:
    # BACKWARD's filter is {InputChannels, OutputChannels / Groups, k...} (ONNX ConvTranspose's W, as ORT binds it):
    # out[o] = sum_c in[c] w[c, o] = [1 x 1 + 2 x 3, 1 x 2 + 2 x 4] = [7, 10] (the other layout would give [5, 11])
    desc = CONV(T(F32, [1, 2, 1, 1]), T(F32, [2, 2, 1, 1]), None, T(F32, [1, 2, 1, 1]), CROSS, BACKWARD)
    (out,) = compile_conv(desc)(f32([1, 2], (1, 2, 1, 1)), f32([1, 2, 3, 4], (2, 2, 1, 1)))
    assert out.reshape(-1).tolist() == [7, 10]


def test_3d_at_level_1_0() -> None:
    # {1, 1, 2, 2, 2} = 1..8 against a {2, 2, 2} filter of ones: 36; Bias 0.5
    desc = CONV(T(F32, [1, 1, 2, 2, 2]), T(F32, [1, 1, 2, 2, 2]), T(F32, [1, 1, 1, 1, 1]), T(F32, [1, 1, 1, 1, 1]))
    (out,) = compile_conv(desc, "1_0")(f32(range(1, 9), (1, 1, 2, 2, 2)), np.ones((1, 1, 2, 2, 2), np.float32),
                                       f32([0.5], (1, 1, 1, 1, 1)))
    assert out.reshape(-1).tolist() == [36.5]


def test_nhwc_input_through_strides_on_raw_buffers() -> None:
    # Input {1, 2, 2, 2} stored NHWC (strides {8, 1, 4, 2}) as [1, 2, 3, 4, 5, 6, 7, 8]: channel 0 = [[1, 3], [5, 7]],
    # channel 1 = [[2, 4], [6, 8]]; a 1x1 filter [1, 10] gives channel 0 + 10 x channel 1 = [[21, 43], [65, 87]],
    # written at strides {4, 4, 1, 2} (transposed, NCWH) from byte 16 of a buffer of 7s.
    desc = CONV(T(F32, [1, 2, 2, 2], [8, 1, 4, 2]), T(F32, [1, 2, 1, 1]), None, T(F32, [1, 1, 2, 2], [4, 4, 1, 2]))
    data = np.arange(1, 9, dtype=np.float32)
    out = np.full(4 + 4, 7.0, np.float32)
    compile_conv(desc).execute([dml.Binding(data), dml.Binding(f32([1, 10], (1, 2, 1, 1))), None],
                               [dml.Binding(out, 16)])
    assert out.tolist() == [7, 7, 7, 7, 21, 65, 43, 87]
    assert data.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]


def test_float16_accumulates_in_float32() -> None:
    # [2048, 1, 1] . [1, 1, 1]: FLOAT16 holds 2050, but a running FLOAT16 sum gives 2048 (2049 rounds to even)
    desc = CONV(T(F16, [1, 1, 3]), T(F16, [1, 1, 3]), None, T(F16, [1, 1, 1]))
    (out,) = compile_conv(desc, "4_0")(np.array([[[2048, 1, 1]]], np.float16), np.ones((1, 1, 3), np.float16))
    assert out.reshape(-1).tolist() == [2050]


def test_a_nan_reaches_the_outputs_that_read_it() -> None:
    # [1, NaN, 3, 4] with [1, 1]: outputs 0 and 1 read the NaN, output 2 is 3 + 4
    desc = CONV(T(F32, [1, 1, 4]), T(F32, [1, 1, 2]), None, T(F32, [1, 1, 3]))
    (out,) = compile_conv(desc, "4_0")(f32([1, np.nan, 3, 4], (1, 1, 4)), f32([1, 1], (1, 1, 2)))
    assert np.isnan(out.reshape(-1)[:2]).all() and out.reshape(-1)[2] == 7


def test_padding_is_zeros_that_take_part_in_the_products() -> None:
    # README's ruling: padding adds zero inputs, so an infinite filter tap over padding gives 0 x inf = NaN.
    # A 3x3 image of ones, padded by 1, with [[inf, 1], [1, 1]]: the outputs of the first row and column have the
    # inf tap over padding (NaN), every other output has it over a one (inf).
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), None, T(F32, [1, 1, 4, 4]),
                start_padding=(1, 1), end_padding=(1, 1))
    (out,) = compile_conv(desc)(np.ones((1, 1, 3, 3), np.float32), f32([np.inf, 1, 1, 1], (1, 1, 2, 2)))
    grid = out.reshape(4, 4)
    assert np.isnan(grid[0]).all() and np.isnan(grid[:, 0]).all()
    assert (grid[1:, 1:] == np.inf).all()


def test_a_failed_call_writes_nothing() -> None:
    desc = CONV(T(F32, [1, 1, 3, 3]), T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 1, 1]), T(F32, [1, 1, 2, 2]))
    compiled = compile_conv(desc)
    out = np.full(4, 42.0, np.float32)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_CONVOLUTION: FilterTensor binding needs bytes "
                                               r"\[0, 16\) but the buffer holds 12 bytes"):
        compiled.execute([dml.Binding(IMAGE), dml.Binding(KERNEL.reshape(-1)[:3].copy()),
                          dml.Binding(f32([1], (1,)))], [dml.Binding(out)])
    assert out.tolist() == [42.0] * 4


# -- the page's support table, row by row -----------------------------------------------------------------------------

# Copied from the page: (level, dimension counts, data types), the same for the four tensors.
PAGE_ROWS = [("4_0", (3, 5), ["FLOAT32", "FLOAT16"]), ("1_0", (4, 5), ["FLOAT32", "FLOAT16"])]
ROW_CASES = [(level, data_type, rank, direction) for level, (low, high), types in PAGE_ROWS for data_type in types
             for rank in range(low, high + 1) for direction in ("FORWARD", "BACKWARD")]


@pytest.mark.parametrize(("level", "data_type", "rank", "direction"), ROW_CASES,
                         ids=[f"{lv}-{t}-{r}d-{d}" for lv, t, r, d in ROW_CASES])
def test_every_row_of_the_page(level: str, data_type: str, rank: int, direction: str) -> None:
    # 2 groups of 2 input and 3 output channels, sides 4, filter sides 2, stride 2, padding 1 before, a Bias
    count = rank - 2
    backward = direction == "BACKWARD"
    filter_sizes = [4, 3, *[2] * count] if backward else [6, 2, *[2] * count]
    side = (4 - 1) * 2 + 2 - 1 if backward else (4 + 1 - 2) // 2 + 1
    desc = CONV(T(data_type, [1, 4, *[4] * count]), T(data_type, filter_sizes), T(data_type, [1, 6, *[1] * count]),
                T(data_type, [1, 6, *[side] * count]), CROSS, DIRECTION[direction], strides=(2,) * count,
                start_padding=(1,) * count, group_count=2)
    check_case(ConvCase(level, desc, dml.ExecutionFlags.NONE, 11, "host"), raw=False)


# -- properties against the reference ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConvCase:
    level: str
    desc: dml.ConvolutionOperatorDesc
    flags: dml.ExecutionFlags
    seed: int
    memory: str


@st.composite
def conv_cases(draw: st.DrawFn, max_side: int = 5, max_channels: int = 3) -> ConvCase:
    level = draw(st.sampled_from([str(level) for level in dml.FeatureLevel]))
    desc = draw(convolution_descs(CONV, dml.FeatureLevel.parse(level), max_side=max_side,
                                  max_channels=max_channels))
    half = desc.input_tensor.data_type == F16 and draw(st.booleans())
    case = ConvCase(level, desc, HALF if half else dml.ExecutionFlags.NONE, draw(st.integers(0, 2**32 - 1)),
                    draw(st.sampled_from(["host", "device"])))
    note(repr(case))
    return case


def check_case(case: ConvCase, *, raw: bool = True) -> None:
    desc = case.desc
    rng = np.random.default_rng(case.seed)
    tensors = [desc.input_tensor, desc.filter_tensor, desc.bias_tensor]
    x, w, bias = (logical_data(rng, tensor) for tensor in tensors)
    assert x is not None and w is not None
    compiled = compile_conv(desc, case.level, case.flags)
    out_desc = desc.output_tensor
    dtype = out_desc.data_type.numpy_dtype
    if raw:
        buffers = [None if data is None or t is None else build_buffer(data, t.strides, byte_offset=16 * (1 + i))
                   for i, (data, t) in enumerate(zip((x, w, bias), tensors, strict=True))]
        raw_out = execute_between_sentinels(device(case.level), compiled, buffers, dtype.itemsize, out_desc.sizes,
                                            out_desc.strides, memory=case.memory, seed=case.seed % 89,
                                            label="CONVOLUTION")
        got = read_buffer(raw_out, dtype, out_desc.sizes, out_desc.strides, byte_offset=16 * (len(buffers) + 1))
    else:
        (got,) = compiled(x, w, bias)
    check_gemm_convolution(desc, (x, w, bias), got, case.flags)


#: Examples per backend: 15 and 4 under the ci profile (60 examples by default), a fifth and a fifteenth of the
#: profile's (200 and 66 under the slow one).
PROPERTY_EXAMPLES = max(15, settings.default.max_examples // 5)
LARGE_EXAMPLES = max(4, settings.default.max_examples // 15)


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(case=conv_cases())
def test_convolution_matches_reference_on_raw_buffers(case: ConvCase) -> None:
    check_case(case)


@settings(max_examples=LARGE_EXAMPLES, deadline=None)
@given(case=conv_cases(max_side=12, max_channels=40))
def test_channels_enough_for_the_tiled_paths(case: ConvCase) -> None:
    # up to 40 channels per group and sides of 12: the cpu's per-tap GEMMs (32 channels a group and more), im2col and
    # micro-kernel paths beside the direct one, the gpu's tiled pass (8 output channels a group and more)
    check_case(case, raw=False)


# -- the reference's own evidence -------------------------------------------------------------------------------------

def scalar_forward(x: np.ndarray, w: np.ndarray, strides: tuple[int, ...], dilations: tuple[int, ...],
                   start: tuple[int, ...], end: tuple[int, ...], groups: int, flip: bool) -> np.ndarray:
    """The page's FORWARD definition, one output element and one product at a time."""
    count = x.ndim - 2
    cig, cog = x.shape[1] // groups, w.shape[0] // groups
    sides = [(x.shape[2 + d] + start[d] + end[d] - (w.shape[2 + d] - 1) * dilations[d] - 1) // strides[d] + 1
             for d in range(count)]
    out = np.zeros((x.shape[0], w.shape[0], *sides))
    for n, o, *y in itertools.product(*(range(s) for s in out.shape)):
        g = o // cog
        total = 0.0
        for c in range(cig):
            for tap in itertools.product(*(range(k) for k in w.shape[2:])):
                at = [y[d] * strides[d] - start[d] + tap[d] * dilations[d] for d in range(count)]
                if all(0 <= at[d] < x.shape[2 + d] for d in range(count)):
                    k = tuple(w.shape[2 + d] - 1 - tap[d] for d in range(count)) if flip else tap
                    total += float(x[(n, g * cig + c, *at)]) * float(w[(o, c, *k)])
        out[(n, o, *y)] = total
    return out


@backends("cpu")
@pytest.mark.parametrize("flip", [False, True])
def test_reference_forward_is_the_scalar_definition(flip: bool) -> None:
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 2, 3, 2))
    value, _ = reference_convolution(x, w, None, mode="CONVOLUTION" if flip else "CROSS_CORRELATION",
                                     strides=(2, 1), dilations=(1, 2), start_padding=(1, 0), end_padding=(2, 1),
                                     group_count=2)
    np.testing.assert_allclose(value, scalar_forward(x, w, (2, 1), (1, 2), (1, 0), (2, 1), 2, flip), atol=1e-12)


@backends("cpu")
@pytest.mark.parametrize("mode", ["CROSS_CORRELATION", "CONVOLUTION"])
def test_reference_backward_is_the_adjoint_of_forward(mode: str) -> None:
    # <forward(x, w), y> = <x, backward(y, w)>: the transposed convolution is the forward one's adjoint, with the
    # same filter array read as {InputChannels, OutputChannels / Groups, k...} and OutputPadding making up the
    # input side the forward strides dropped.
    rng = np.random.default_rng(6)
    strides, dilations, start, end, groups = (2, 3), (1, 2), (1, 0), (0, 2), 2
    x, w = rng.standard_normal((2, 4, 7, 8)), rng.standard_normal((6, 2, 3, 2))
    forward, _ = reference_convolution(x, w, None, mode=mode, strides=strides, dilations=dilations,
                                       start_padding=start, end_padding=end, group_count=groups)
    y = rng.standard_normal(forward.shape)
    extra = tuple((x.shape[2 + d] + start[d] + end[d] - (w.shape[2 + d] - 1) * dilations[d] - 1) % strides[d]
                  for d in range(2))
    backward, _ = reference_convolution(y, w, None, mode=mode, direction="BACKWARD", strides=strides,
                                        dilations=dilations, start_padding=start, end_padding=end,
                                        output_padding=extra, group_count=groups)
    assert backward.shape == x.shape
    assert np.isclose(float((forward * y).sum()), float((x * backward).sum()), rtol=1e-12)
