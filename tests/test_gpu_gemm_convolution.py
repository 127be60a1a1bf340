"""GEMM and CONVOLUTION on the gpu backend's own terms (backends/gpu/gemm.py, convolution.py): the tiled pass at its
edges (M, N and K that are not multiples of the 16- to 128-row, 64-column, 16-deep tiles; each rows-per-invocation
setting), every stride folded into the specialized shader (transposes, zero-stride batches and C, gaps), FLOAT16
outputs whose elements share 32-bit words with each other and with bytes outside the tensor (sentinels), the
untiled pass (depthwise), the implicit GEMM's transposed convolution, fused SOFTMAX's row pass, fused CLIP, pipeline
reuse, and FLOAT64 refused by the kernel. Results are checked against tests/reference.py's float64 references within
the bound of test_gemm.py (it scales with K)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing
from reference import assert_within_bounds, reference_convolution, reference_gemm, result_bounds
from strategies import T, build_buffer, execute_between_sentinels, fused_activation_of, read_buffer

import opendml as dml

F32, F16, F64 = dml.DataType.FLOAT32, dml.DataType.FLOAT16, dml.DataType.FLOAT64
NONE, TRANSPOSE = dml.MatrixTransform.NONE, dml.MatrixTransform.TRANSPOSE
GEMM, CONV = dml.GemmOperatorDesc, dml.ConvolutionOperatorDesc
FORWARD, BACKWARD = dml.ConvolutionDirection.FORWARD, dml.ConvolutionDirection.BACKWARD
FLIP = dml.ConvolutionMode.CONVOLUTION


@pytest.fixture(scope="module")
def device() -> dml.Device:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    return dml.Device(backend="gpu")


def run(device: dml.Device, desc: Any, arrays: list[np.ndarray | None], memory: str = "device") -> np.ndarray:
    """Executes `desc` on raw buffers holding `arrays` at their descriptors' strides, the output between sentinel
    bytes (checked untouched, inputs unchanged); returns the logical output."""
    compiled = device.compile_operator(device.create_operator(desc))
    tensors = [tensor for _, tensor in desc.input_slots()]
    buffers = [None if x is None else build_buffer(x, tensor.strides, byte_offset=16 * (1 + index))
               for index, (x, tensor) in enumerate(zip(arrays, tensors, strict=True))]
    out = desc.output_tensor
    dtype = out.data_type.numpy_dtype
    data = execute_between_sentinels(device, compiled, buffers, dtype.itemsize, out.sizes, out.strides,
                                     memory=memory, seed=7, label=desc.label)
    return read_buffer(data, dtype, out.sizes, out.strides, byte_offset=16 * (len(buffers) + 1))


def data(rng: np.random.Generator, tensor: dml.TensorDesc | None) -> np.ndarray | None:
    """Normal values of the tensor's type, equal along its zero strides (what one buffer holds there)."""
    if tensor is None:
        return None
    x = rng.standard_normal(tensor.sizes).astype(tensor.data_type.numpy_dtype)
    return read_buffer(build_buffer(x, tensor.strides), x.dtype, tensor.sizes, tensor.strides)


def check(got: np.ndarray, desc: Any, value: np.ndarray, magnitude: np.ndarray, terms: int) -> None:
    name, parameters, axes = fused_activation_of(desc)
    low, high = result_bounds(np.broadcast_to(value, got.shape), np.broadcast_to(magnitude, got.shape), terms,
                              got.dtype, accumulate_unit=2.0**-24, activation=name, parameters=parameters, axes=axes)
    assert_within_bounds(got, low, high, desc.label, exact=np.broadcast_to(value, got.shape))


def check_gemm(device: dml.Device, desc: GEMM, memory: str = "device", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b, c = (data(rng, tensor) for tensor in (desc.a_tensor, desc.b_tensor, desc.c_tensor))
    got = run(device, desc, [a, b, c], memory)
    value, magnitude = reference_gemm(a, b, c, trans_a=desc.trans_a.name, trans_b=desc.trans_b.name,
                                      alpha=desc.alpha, beta=desc.beta)
    check(got, desc, value, magnitude, desc.matrix_sizes()[3])
    return got


# -- GEMM ------------------------------------------------------------------------------------------------------------

# (M, N, K): one element (the untiled pass); partial tiles of 1, 2, 4 and 8 rows per invocation; K below, at and past
# one 16- or 32-deep tile.
TILE_EDGES = [(1, 1, 1), (15, 63, 17), (17, 65, 16), (33, 64, 31), (130, 7, 40), (128, 129, 3)]


@pytest.mark.parametrize(("m", "n", "k"), TILE_EDGES, ids=[f"{m}x{n}x{k}" for m, n, k in TILE_EDGES])
@pytest.mark.parametrize("transposes", [(NONE, NONE), (TRANSPOSE, TRANSPOSE)], ids=["NN", "TT"])
def test_gemm_tile_edges(device: dml.Device, m: int, n: int, k: int, transposes: tuple[Any, Any]) -> None:
    trans_a, trans_b = transposes
    a = T(F32, [k, m] if trans_a is TRANSPOSE else [m, k])
    b = T(F32, [n, k] if trans_b is TRANSPOSE else [k, n])
    check_gemm(device, GEMM(a, b, T(F32, [m, n]), T(F32, [m, n]), trans_a, trans_b, alpha=0.75, beta=-1.5))


@pytest.mark.parametrize(("data_type", "memory", "shader_f16"), [
    (F32, "device", True), (F32, "host", True), (F16, "device", True), (F16, "host", True), (F16, "device", False)],
    ids=["FLOAT32-device", "FLOAT32-host", "FLOAT16-device", "FLOAT16-host", "FLOAT16-words"])
@pytest.mark.parametrize("m", [5, 37], ids=["untiled", "tiled"])
def test_gemm_strides_batches_and_words(device: dml.Device, data_type: dml.DataType, memory: str, shader_f16: bool,
                                        m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored {K, M} read as op(A) by TransA and then transposed back by its strides; B's rows padded, its batch
    shared (stride 0); C broadcast over the batch and the rows by zero strides; the output's rows 2N + 1 elements
    apart with its elements 2 apart, so that each FLOAT16 element shares its word with a byte outside the tensor,
    and the odd rows start in a word's upper half. FLOAT16 inputs are read as f16 where the adapter has shader-f16,
    else from the halves of 32-bit words (`shader_f16` False: as on an adapter without it). M 5 runs the untiled pass,
    M 37 the tiled one."""
    if not shader_f16:
        context = device.backend.context  # type: ignore[attr-defined]
        monkeypatch.setattr(type(context), "f16", property(lambda self: False))
    n, k = 19, 21
    a = T(data_type, [2, 3, k, m], [3 * k * m, k * m, 1, k])          # element (k, m) at m * K + k
    b = T(data_type, [2, 3, k, n], [0, (n + 3) * k, n + 3, 1])
    c = T(data_type, [2, 3, m, n], [0, 0, 0, 1])
    out = T(data_type, [2, 3, m, n], [3 * m * (2 * n + 1), m * (2 * n + 1), 2 * n + 1, 2])
    check_gemm(device, GEMM(a, b, c, out, TRANSPOSE, NONE, alpha=2.0, beta=0.5), memory)


def test_gemm_float16_neighbours_in_one_word(device: dml.Device) -> None:
    """A packed FLOAT16 output of odd N: neighbouring elements, and rows, share words."""
    check_gemm(device, GEMM(T(F16, [7, 9]), T(F16, [9, 13]), None, T(F16, [7, 13])), "host")


# FLOAT16 outputs the tiled pass writes a word (two neighbours along N) at a time: odd N with a 2-element gap after
# each row (the last word holds an element and a gap), even N packed, N = 1 (each word an element and a gap).
PAIR_LAYOUTS = {"odd-N-gaps": ([2, 20, 13], [20 * 14 + 2, 14, 1]), "even-N": ([20, 16], None),
                "one-column": ([20, 1], [2, 1])}


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize("layout", list(PAIR_LAYOUTS))
def test_gemm_float16_pairs_written_a_word_at_a_time(device: dml.Device, layout: str, memory: str) -> None:
    sizes, strides = PAIR_LAYOUTS[layout]
    *batch, m, n = sizes
    desc = GEMM(T(F16, [*batch, m, 9]), T(F16, [*batch, 9, n]), T(F16, sizes), T(F16, sizes, strides), beta=-1.0,
                fused_activation=dml.ActivationLeakyReluOperatorDesc(0.5))
    check_gemm(device, desc, memory)


@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("activation", [
    dml.ActivationSoftmaxOperatorDesc(), dml.ActivationSoftmax1OperatorDesc(axes=[0, 2]),
    dml.ActivationSoftmax1OperatorDesc(axes=[1, 2])], ids=["SOFTMAX", "SOFTMAX1-0-2", "SOFTMAX1-1-2"])
def test_gemm_fused_softmax(device: dml.Device, data_type: dml.DataType, activation: dml.OperatorDesc) -> None:
    """The row pass over the scratch buffer: one group per coordinate outside the axes, however they lie."""
    out = T(data_type, [3, 6, 70], [1, 3 * 71, 3])                     # strided: batch innermost
    check_gemm(device, GEMM(T(data_type, [3, 6, 10]), T(data_type, [3, 10, 70]), T(data_type, [3, 6, 70]), out,
                            alpha=0.5, fused_activation=activation))


def test_gemm_fused_softmax_golden(device: dml.Device) -> None:
    # op(A) op(B) = [[0, ln 3], [ln 2, ln 2]] (B the identity); softmax of each row: [1, 3] / 4 and [1/2, 1/2]
    a = np.array([[0.0, np.log(3.0)], [np.log(2.0), np.log(2.0)]], np.float32)
    desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), None, T(F32, [2, 2]),
                fused_activation=dml.ActivationSoftmaxOperatorDesc())
    (got,) = device.compile_operator(device.create_operator(desc))(a, np.eye(2, dtype=np.float32))
    np.testing.assert_allclose(got, [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)


def test_gemm_fused_clip_and_elu_golden(device: dml.Device) -> None:
    # 2 x [[1, -2], [3, 4]] x I = [[2, -4], [6, 8]]; CLIP to [-1, 5]: [[2, -1], [5, 5]]; ELU (Alpha 1) of -4:
    # e^-4 - 1
    a = np.array([[1, -2], [3, 4]], np.float32)
    identity = np.eye(2, dtype=np.float32)
    clip = dml.ElementWiseClipOperatorDesc(None, None, None, min=-1.0, max=5.0)
    for activation, expected in ((clip, [[2, -1], [5, 5]]),
                                 (dml.ActivationEluOperatorDesc(1.0), [[2, np.expm1(-4.0)], [6, 8]])):
        desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), None, T(F32, [2, 2]), alpha=2.0, fused_activation=activation)
        (got,) = device.compile_operator(device.create_operator(desc))(a, identity)
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_pipeline_per_descriptor_built_once(device: dml.Device) -> None:
    """Sizes are constants of the shader: a second operator of the same descriptor reuses its pipelines, one of
    other sizes gets its own."""
    context = device.backend.context  # type: ignore[attr-defined]
    desc = GEMM(T(F32, [3, 5]), T(F32, [5, 4]), None, T(F32, [3, 4]))
    device.compile_operator(device.create_operator(desc))
    built = len(context._pipelines)
    device.compile_operator(device.create_operator(desc))
    assert len(context._pipelines) == built
    device.compile_operator(device.create_operator(GEMM(T(F32, [3, 6]), T(F32, [6, 4]), None, T(F32, [3, 4]))))
    assert len(context._pipelines) == built + 1


def test_float64_is_refused_by_the_gpu_kernels(device: dml.Device) -> None:
    """The pages allow FLOAT32 and FLOAT16 only; a descriptor that skipped validation still gets opendml's error."""
    desc = GEMM(T(F64, [2, 2]), T(F64, [2, 2]), None, T(F64, [2, 2]))
    with pytest.raises(dml.UnsupportedError, match=r"GEMM: ATensor.DataType is FLOAT64; the gpu backend computes"):
        device.backend.compile(desc, dml.ExecutionFlags.NONE, False)
    conv = CONV(T(F64, [1, 1, 3]), T(F64, [1, 1, 2]), None, T(F64, [1, 1, 2]))
    with pytest.raises(dml.UnsupportedError, match=r"CONVOLUTION: InputTensor.DataType is FLOAT64"):
        device.backend.compile(conv, dml.ExecutionFlags.NONE, False)


# -- CONVOLUTION -----------------------------------------------------------------------------------------------------

def nhwc(data_type: dml.DataType, sizes: list[int]) -> dml.TensorDesc:
    """{N, C, spatial...} stored channels-last."""
    _, c, *spatial = sizes
    strides = [0] * len(sizes)
    step = c
    for d in range(len(spatial) - 1, -1, -1):
        strides[2 + d] = step
        step *= spatial[d]
    strides[0], strides[1] = step, 1
    return T(data_type, sizes, strides)


CONVOLUTIONS: dict[str, dict[str, Any]] = {
    # the tiled implicit GEMM: 24 output channels (2 rows per invocation), partial tiles, padding, dilation, stride
    "tiled-2d": dict(x=[2, 5, 9, 11], w=[24, 5, 3, 2], strides=[2, 1], dilations=[1, 2], start_padding=[1, 0],
                     end_padding=[1, 2], bias=True),
    # input channels-last through its strides, groups, mode CONVOLUTION, fused CLIP
    "nhwc-groups-flip": dict(x=[1, 6, 7, 8], w=[18, 2, 3, 3], group_count=3, mode=FLIP, start_padding=[1, 1],
                             end_padding=[1, 1], nhwc=True,
                             activation=dml.ElementWiseClipOperatorDesc(None, None, None, min=-2.0, max=3.0)),
    # depthwise: the untiled pass
    "depthwise": dict(x=[2, 4, 6, 5], w=[4, 1, 3, 3], group_count=4, start_padding=[1, 1], end_padding=[1, 1],
                      bias=True, activation=dml.ActivationReluOperatorDesc()),
    # transposed, stride 2 with OutputPadding, on the tiled pass; and flipped and grouped on the untiled one
    "backward-tiled": dict(x=[1, 6, 4, 5], w=[6, 16, 4, 3], direction=BACKWARD, strides=[2, 2], start_padding=[1, 0],
                           end_padding=[0, 1], output_padding=[1, 1], bias=True),
    "backward-depthwise": dict(x=[2, 4, 3, 4], w=[4, 1, 3, 2], direction=BACKWARD, group_count=4, mode=FLIP,
                               strides=[2, 3], dilations=[2, 1], output_padding=[1, 0]),
    "1d": dict(x=[3, 4, 20], w=[9, 4, 5], strides=[3], start_padding=[2], end_padding=[1]),
    # an even last output side: a FLOAT16 output written two neighbours (a 32-bit word) at a time by the tiled pass
    "even-width": dict(x=[2, 3, 5, 8], w=[16, 3, 3, 3], start_padding=[1, 1], end_padding=[1, 1], bias=True,
                       activation=dml.ActivationEluOperatorDesc(0.5)),
    "3d": dict(x=[1, 3, 5, 4, 6], w=[8, 3, 2, 3, 2], start_padding=[1, 1, 0], end_padding=[0, 1, 1], bias=True),
}


@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", list(CONVOLUTIONS))
def test_convolution_paths(device: dml.Device, name: str, data_type: dml.DataType) -> None:
    case = dict(CONVOLUTIONS[name])
    x_sizes, w_sizes = case.pop("x"), case.pop("w")
    x = nhwc(data_type, x_sizes) if case.pop("nhwc", False) else T(data_type, x_sizes)
    w = T(data_type, w_sizes)
    probe = CONV(x, w, None, T(data_type, x_sizes), **{key: value for key, value in case.items()
                                                        if key not in ("bias", "activation")})
    out_sizes = list(probe.expected_output_sizes())
    bias = T(data_type, [1, out_sizes[1]] + [1] * (len(out_sizes) - 2)) if case.pop("bias", False) else None
    activation = case.pop("activation", None)
    desc = CONV(x, w, bias, T(data_type, out_sizes), fused_activation=activation, **case)
    rng = np.random.default_rng(3)
    arrays = [data(rng, tensor) for tensor in (x, w, bias)]
    got = run(device, desc, arrays, "device" if data_type is F32 else "host")
    value, magnitude = reference_convolution(*arrays, mode=desc.mode.name, direction=desc.direction.name,
                                             strides=desc.strides, dilations=desc.dilations,
                                             start_padding=desc.start_padding, end_padding=desc.end_padding,
                                             output_padding=desc.output_padding, group_count=desc.group_count)
    cig, _ = desc.channels_per_group()
    check(got, desc, value, magnitude, cig * int(np.prod(w_sizes[2:])))


def test_a_scratch_buffer_past_one_binding_is_refused(device: dml.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FLOAT16 output the product cannot write a word at a time (its rows 3 elements apart: odd) goes through a
    FLOAT32 scratch buffer twice its size: past the adapter's binding limit, compile refuses it with opendml's error
    (the tensors themselves fit)."""
    context = device.backend.context  # type: ignore[attr-defined]
    monkeypatch.setattr(context, "max_binding_size", 1000)
    desc = GEMM(T(F16, [100, 2]), T(F16, [2, 3]), None, T(F16, [100, 3]))     # 300 elements: 600 bytes, scratch 1200
    with pytest.raises(dml.UnsupportedError, match=r"GEMM: OutputTensor has 300 elements; the gpu backend computes "
                                                   r"this FLOAT16 output into a FLOAT32 scratch buffer first \(1200 "
                                                   r"bytes\), over the adapter's max-storage-buffer-binding-size "
                                                   r"\(1000 bytes\)"):
        device.compile_operator(device.create_operator(desc))
