"""GEMM and CONVOLUTION of a compiled dml.Graph on Dask arrays (dask_graph's GEMM and CONVOLUTION lowerings).

GEMM is blockwise over the output's batch, M and N chunks (each block the GEMM kernel on its blocks of A, B and C);
a K cut into chunks gives a partial product per K chunk (FLOAT32 for FLOAT16 inputs, no Alpha, C or activation),
summed exactly, then Alpha, Beta * C and the fused activation once. CONVOLUTION is blockwise over the batch's chunks
and the spatial chunks, each block with its halo (`_halo`: the receptive field's reach) and its own paddings (the
array's at its true edges only); the channels, the filter and the bias are in one chunk.

Results are compared with the float64 references of tests/reference.py (exactly, where every value is a small integer
and so every sum is exact in any order; within the accumulation bound otherwise) and with the same compiled graph on
NumPy arrays (one machine, the cpu device). Graphs are built from the descriptors (`Graph._add_operator`), so that the
tests say which strides each input is read through. Dask's local threaded scheduler runs them in this process.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from reference import (
    assert_within_bounds,
    convolution_output_sizes,
    reference_convolution,
    reference_gemm,
    result_bounds,
)

import opendml as dml
from opendml.dask_graph import _halo

pytestmark = pytest.mark.xdist_group("dask")

T = dml.TensorDesc
EXAMPLES = max(6, settings.default.max_examples // 5)


@pytest.fixture(autouse=True)
def threaded_scheduler() -> Iterator[None]:
    """Dask's local threaded scheduler (a distributed Client made by another test module is not used here)."""
    with dask.config.set(scheduler="threads"):
        yield


def node(graph: dml.Graph, desc: dml.OperatorDesc, *inputs: dml.Expression | None) -> dml.Expression:
    return graph._add_operator(desc, list(inputs))[0]


def integers(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, high: int = 4) -> np.ndarray:
    """Small integers: every product and sum of a few hundred of them is exact in FLOAT16's accumulator (FLOAT32)."""
    return rng.integers(-high, high + 1, shape).astype(dtype)


def run(compiled: dml.CompiledGraph, arrays: dict[str, np.ndarray], chunks: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(the lazy Dask result, its computed value, the same graph on the NumPy arrays)."""
    (lazy,) = compiled({name: da.from_array(array, chunks=chunks[name]) if name in chunks else array
                        for name, array in arrays.items()})
    (expected,) = compiled(arrays)
    return lazy, lazy.compute(), expected


def same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """The same dtype, shape and bits, but for the sign of a zero: the cpu backend's two kernels differ there (the
    numba CONVOLUTION starts its sums at -0, the identity of addition, so an output no tap reaches is -0; the NumPy
    small kernel gives +0), and a Dask block may run the other kernel than the whole array (by its size, or while
    numba compiles in the background)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    with np.errstate(all="ignore"):
        assert (got + 0).tobytes() == (expected + 0).tobytes(), f"{got} != {expected}"     # -0 + 0 is +0


def chunks_of(draw: st.DrawFn, size: int) -> tuple[int, ...]:
    """A dimension whole or cut at one to three random places."""
    if size == 1 or draw(st.booleans()):
        return (size,)
    cuts = sorted(draw(st.sets(st.integers(1, size - 1), min_size=1, max_size=min(3, size - 1))))
    return tuple(high - low for low, high in itertools.pairwise([0, *cuts, size]))


# -- GEMM -------------------------------------------------------------------------------------------------------------

def broadcast(data_type: str, shape: tuple[int, ...], sizes: tuple[int, ...]) -> dml.TensorDesc:
    """A tensor of `sizes` reading a packed array of `shape` (the same rank), with stride 0 where the array has one
    element and the tensor more (GEMM broadcasts through zero strides)."""
    packed = T(data_type, shape).element_strides
    return T(data_type, sizes, [0 if have == 1 and want > 1 else stride
                                for have, want, stride in zip(shape, sizes, packed, strict=True)])


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, *, b_transposed_by_strides: bool = False,
         **fields: Any) -> tuple[dml.CompiledGraph, dict[str, np.ndarray]]:
    """A one-node graph of GEMM on inputs "a", "b" (and "c"), and its NumPy arrays. A, B and C broadcast to the
    output's sizes through zero strides where they have one element. With `b_transposed_by_strides`, the expression
    "b" holds B's transpose (last two dimensions swapped) and the node's BTensor reads it through swapped strides."""
    data_type = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}[a.dtype]
    value, _ = reference_gemm(a, b, c, trans_a=fields.get("trans_a", "NONE"), trans_b=fields.get("trans_b", "NONE"),
                              alpha=fields.get("alpha", 1.0), beta=fields.get("beta", 1.0))
    batch = value.shape[:-2]
    graph = dml.Graph(dml.Device())
    arrays = {"a": a, "b": b}
    b_tensor = broadcast(data_type, b.shape, (*batch, *b.shape[-2:]))
    if b_transposed_by_strides:
        arrays["b"] = np.ascontiguousarray(np.swapaxes(b, -1, -2))
        strides = list(broadcast(data_type, arrays["b"].shape, (*batch, *arrays["b"].shape[-2:])).element_strides)
        strides[-1], strides[-2] = strides[-2], strides[-1]
        b_tensor = T(data_type, b_tensor.sizes, strides)
    inputs: list[dml.Expression | None] = [graph.input(array.shape, data_type, name=name)
                                           for name, array in arrays.items()]
    c_tensor = None
    if c is not None:
        arrays["c"] = c
        inputs.append(graph.input(c.shape, data_type, name="c"))
        c_tensor = broadcast(data_type, c.shape, value.shape)
    else:
        inputs.append(None)
    desc = dml.GemmOperatorDesc(broadcast(data_type, a.shape, (*batch, *a.shape[-2:])), b_tensor, c_tensor,
                                T(data_type, value.shape), **fields)
    return graph.compile([node(graph, desc, *inputs)]), arrays


def test_gemm_blocks_over_batch_m_and_n_run_the_kernel_per_block() -> None:
    # [2, 5, 4] x [2, 4, 6] + C [2, 5, 6]: batch, M and N cut, K whole: every output block is the GEMM kernel on its
    # blocks, with no partial products; small integers, so the result is the exact product.
    rng = np.random.default_rng(27)
    a, b, c = integers(rng, (2, 5, 4), np.float32), integers(rng, (2, 4, 6), np.float32), \
        integers(rng, (2, 5, 6), np.float32)
    compiled, arrays = gemm(a, b, c, alpha=2.0, beta=-1.0)
    chunks = {"a": ((1, 1), (2, 3), 4), "b": ((1, 1), 4, (4, 2)), "c": ((1, 1), (2, 3), (4, 2))}
    lazy, got, expected = run(compiled, arrays, chunks)
    assert lazy.chunks == ((1, 1), (2, 3), (4, 2))
    assert not [name for name in lazy.dask.layers if "partial" in name]
    same_bits(got, expected)
    assert np.array_equal(got, 2 * a @ b - c)


@pytest.mark.parametrize("k_chunks", [(1, 1, 1), (2, 1), (1, 2)])
def test_gemm_float16_partials_are_summed_before_the_one_rounding(k_chunks: tuple[int, ...]) -> None:
    # [1, 3] x [3, 1] FLOAT16, 1 * 2048 + 1 * 1 + 1 * 1 = 2050 (a FLOAT16 value: its spacing at 2048 is 2). Partials
    # rounded to FLOAT16 one by one would give 2048 + 1 = 2049 -> 2048 (ties to even), + 1 -> 2048 again.
    a = np.ones((1, 3), np.float16)
    b = np.array([[2048], [1], [1]], np.float16)
    compiled, arrays = gemm(a, b, None)
    lazy, got, expected = run(compiled, arrays, {"a": (1, k_chunks), "b": (k_chunks, 1)})
    assert [name for name in lazy.dask.layers if "partial" in name]
    assert got.dtype == np.float16 and got.tolist() == [[2050.0]]
    same_bits(got, expected)


def test_gemm_alpha_beta_c_and_the_activation_come_after_the_whole_sum() -> None:
    # [1, 2] x [2, 1] with K cut in two: partial products 5 and -3. RELU(0.5 * (5 - 3) + 2 * 1) = 3; applying
    # Beta * C to each partial would give 5, the activation to each partial RELU(2.5 + 2) + RELU(-1.5) = 4.5.
    # The second row: RELU(0.5 * (-5 + 3) + 2 * -1) = RELU(-3) = 0, though its first partial alone is positive.
    a = np.array([[1, 1], [-1, -1]], np.float32)
    b = np.array([[5], [-3]], np.float32)
    c = np.array([[1], [-1]], np.float32)
    compiled, arrays = gemm(a, b, c, alpha=0.5, beta=2.0, fused_activation=dml.ActivationReluOperatorDesc())
    lazy, got, expected = run(compiled, arrays, {"a": (1, 1), "b": (1, 1), "c": (1, 1)})
    assert lazy.chunks == ((1, 1), (1,))
    assert got.tolist() == [[3.0], [0.0]]
    same_bits(got, expected)


@pytest.mark.parametrize("chunk_k", [False, True])
def test_gemm_transposes_strides_and_broadcasts_across_chunks(chunk_k: bool) -> None:
    # TransA (A held as [1, K, M]), B read through swapped strides (held as [3, N, K], read as [3, K, N]), A's batch
    # of 1 broadcast to B's 3 and C a [1, 1, N] row broadcast to [3, M, N], through zero strides; every dimension
    # cut. N is cut (1, 3) in B and (2, 2) in C: the output takes the finer cut (1, 1, 2).
    rng = np.random.default_rng(2027)
    a_held = integers(rng, (1, 6, 5), np.float32)      # op(A) = [1, 5, 6]
    b = integers(rng, (3, 6, 4), np.float32)
    c = integers(rng, (1, 1, 4), np.float32)
    compiled, arrays = gemm(a_held, b, c, b_transposed_by_strides=True, trans_a=dml.MatrixTransform.TRANSPOSE,
                            beta=3.0)
    k = (2, 4) if chunk_k else 6
    chunks = {"a": (1, k, (2, 3)), "b": ((2, 1), (1, 3), k), "c": (1, 1, (2, 2))}
    lazy, got, expected = run(compiled, arrays, chunks)
    assert lazy.chunks == ((2, 1), (2, 3), (1, 1, 2))
    assert bool([name for name in lazy.dask.layers if "partial" in name]) == chunk_k
    exact = np.swapaxes(a_held, -1, -2) @ b + 3 * c
    assert np.array_equal(got, exact)
    same_bits(got, expected)


@st.composite
def gemm_cases(draw: st.DrawFn) -> dict[str, Any]:
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    m, n, k = (draw(st.integers(1, 6)) for _ in range(3))
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    c_kind = draw(st.sampled_from(["none", "full", "row", "column", "scalar"]))
    activation = draw(st.sampled_from([None, "RELU", "SIGMOID", "LEAKY_RELU", "CLIP"]))
    return {"batch": batch, "m": m, "n": n, "k": k, "trans_a": trans_a, "trans_b": trans_b, "dtype": dtype,
            "c": c_kind, "alpha": draw(st.sampled_from([1.0, 0.5, -2.0])),
            "beta": draw(st.sampled_from([1.0, 0.0, 1.5])), "activation": activation}


FUSED = {None: None, "RELU": dml.ActivationReluOperatorDesc, "SIGMOID": dml.ActivationSigmoidOperatorDesc,
         "LEAKY_RELU": lambda: dml.ActivationLeakyReluOperatorDesc(alpha=0.125),
         "CLIP": lambda: dml.ElementWiseClipOperatorDesc(None, None, None, min=-0.25, max=0.5)}
PARAMETERS = {"LEAKY_RELU": (0.125,), "CLIP": (-0.25, 0.5)}


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_gemm_any_chunks_match_the_reference(data: st.DataObject) -> None:
    # Random floats, shapes, transposes, C broadcasts, Alpha, Beta and activations, every dimension cut at random:
    # within the float64 reference's bound for a FLOAT32 accumulator over K (FLOAT16 included), as one machine is.
    case = data.draw(gemm_cases())
    note(repr(case))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dtype, batch, m, n, k = case["dtype"], case["batch"], case["m"], case["n"], case["k"]
    a = rng.uniform(-1, 1, (*batch, k, m) if case["trans_a"] else (*batch, m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (*batch, n, k) if case["trans_b"] else (*batch, k, n)).astype(dtype)
    c_shape = {"none": None, "full": (*batch, m, n), "row": (*batch, 1, n), "column": (*batch, m, 1),
               "scalar": (*(1 for _ in batch), 1, 1)}[case["c"]]
    c = None if c_shape is None else rng.uniform(-1, 1, c_shape).astype(dtype)
    make = FUSED[case["activation"]]
    fields = {"trans_a": "TRANSPOSE" if case["trans_a"] else "NONE",
              "trans_b": "TRANSPOSE" if case["trans_b"] else "NONE", "alpha": case["alpha"], "beta": case["beta"],
              "fused_activation": None if make is None else make()}
    compiled, arrays = gemm(a, b, c, **fields)
    chunks = {name: tuple(chunks_of(data.draw, size) for size in array.shape) for name, array in arrays.items()}
    note(f"chunks={chunks}")
    _, got, expected = run(compiled, arrays, chunks)
    value, magnitude = reference_gemm(a, b, c, trans_a=fields["trans_a"], trans_b=fields["trans_b"],
                                      alpha=case["alpha"], beta=case["beta"])
    low, high = result_bounds(value, magnitude, k, dtype, accumulate_unit=2.0**-24,
                              activation=case["activation"], parameters=PARAMETERS.get(case["activation"], ()))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert_within_bounds(got, low, high, "Dask", value)
    assert_within_bounds(expected, low, high, "one machine", value)


@pytest.mark.parametrize(("softmax", "axes"), [
    (dml.ActivationSoftmaxOperatorDesc(), (2,)),
    (dml.ActivationSoftmax1OperatorDesc(axes=[1, 2]), (1, 2)),
])
def test_gemm_fused_softmax_sees_whole_rows(softmax: dml.OperatorDesc, axes: tuple[int, ...]) -> None:
    # A fused softmax normalizes over whole axes of the output (SOFTMAX: N; SOFTMAX1 here: M and N): those axes are
    # in one chunk however A and B are cut, K included (the softmax then runs once, on the exact sum).
    rng = np.random.default_rng(61)
    a = rng.uniform(-2, 2, (3, 4, 6)).astype(np.float32)
    b = rng.uniform(-2, 2, (3, 6, 5)).astype(np.float32)
    compiled, arrays = gemm(a, b, None, alpha=0.5, fused_activation=softmax)
    lazy, got, expected = run(compiled, arrays, {"a": ((1, 2), (1, 3), (2, 4)), "b": ((1, 2), (2, 4), (2, 3))})
    whole = {dim: (size,) for dim, size in enumerate(got.shape) if dim in axes}
    assert lazy.chunks == tuple(whole.get(dim, cut) for dim, cut in enumerate([(1, 2), (1, 3), (5,)]))
    value, magnitude = reference_gemm(a, b, None, alpha=0.5)
    low, high = result_bounds(value, magnitude, 6, np.float32, accumulate_unit=2.0**-24, activation="SOFTMAX",
                              axes=axes)
    assert_within_bounds(got, low, high, "Dask", value)
    assert np.allclose(got.astype(np.float64).sum(axis=axes), 1.0, rtol=1e-5)
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-7)


# -- CONVOLUTION ------------------------------------------------------------------------------------------------------

def convolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, **fields: Any
                ) -> tuple[dml.CompiledGraph, dict[str, np.ndarray], np.ndarray]:
    """A one-node graph of CONVOLUTION on inputs "x", "w" (and "bias"), its NumPy arrays, and the float64 reference
    (before any activation)."""
    data_type = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16"}[x.dtype]
    graph = dml.Graph(dml.Device())
    arrays = {"x": x, "w": w}
    inputs = [graph.input(x.shape, data_type, name="x"), graph.input(w.shape, data_type, name="w"), None]
    if bias is not None:
        arrays["bias"] = bias
        inputs[2] = graph.input(bias.shape, data_type, name="bias")
    spatial = {name: fields[name] for name in ("strides", "dilations", "start_padding", "end_padding",
                                               "output_padding") if name in fields}
    value, _ = reference_convolution(x, w, bias, mode=fields.get("mode", "CROSS_CORRELATION"),
                                     direction=fields.get("direction", "FORWARD"),
                                     group_count=fields.get("group_count", 1), **spatial)
    desc = dml.ConvolutionOperatorDesc(T(data_type, x.shape), T(data_type, w.shape),
                                       None if bias is None else T(data_type, bias.shape),
                                       T(data_type, value.shape), **fields)
    return graph.compile([node(graph, desc, *inputs)]), arrays, value


def test_convolution_chunked_batch_and_channels_run_the_kernel_per_batch_chunk() -> None:
    # [5, 4, 6, 6] by a 3x3 filter, batch cut (2, 3), channels cut (1, 3): the channels are rechunked to one chunk
    # (every output sums over all of its group's channels), the spatial dimensions stay whole: no halo.
    rng = np.random.default_rng(27)
    x, w, bias = integers(rng, (5, 4, 6, 6), np.float32), integers(rng, (2, 4, 3, 3), np.float32), \
        integers(rng, (1, 2, 1, 1), np.float32)
    compiled, arrays, value = convolution(x, w, bias, start_padding=(1, 1), end_padding=(1, 1))
    lazy, got, expected = run(compiled, arrays, {"x": ((2, 3), (1, 3), 6, 6), "w": ((1, 1), 4, 3, 3)})
    assert lazy.chunks == ((2, 3), (2,), (6,), (6,))
    assert not [name for name in lazy.dask.layers if "overlap" in name]
    assert np.array_equal(got, value)
    same_bits(got, expected)


def test_convolution_forward_spatial_chunks_share_halos() -> None:
    # [2, 3, 10, 11] by [4, 3, 3, 3], Strides (2, 1), Dilations (1, 2), StartPadding (1, 2), EndPadding (1, 0),
    # every dimension cut. Height: output (10 + 2 - 3) // 2 + 1 = 5; the input's cuts at 4 and 7 move to the
    # stride's grid, 3 * 2 - 1 = 5 and 4 * 2 - 1 = 7 (outputs 3 and 4), each chunk reading 3 - 2 = 1 row of the
    # next. Width: extent (3 - 1) * 2 + 1 = 5, output 11 + 2 - 5 + 1 = 9; stride 1 keeps the input's cuts where it
    # can, and each chunk reads 4 columns of the next: the cut at 3 would leave a first chunk of 3 < 4 and is
    # dropped, the cut at 6 stays (output 6 + 2 = 8).
    rng = np.random.default_rng(11)
    x, w, bias = integers(rng, (2, 3, 10, 11), np.float32), integers(rng, (4, 3, 3, 3), np.float32), \
        integers(rng, (1, 4, 1, 1), np.float32)
    compiled, arrays, value = convolution(x, w, bias, strides=(2, 1), dilations=(1, 2), start_padding=(1, 2),
                                          end_padding=(1, 0))
    chunks = {"x": ((1, 1), (2, 1), (4, 3, 3), (3, 3, 5)), "bias": (1, (3, 1), 1, 1)}
    lazy, got, expected = run(compiled, arrays, chunks)
    assert lazy.chunks == ((1, 1), (4,), (3, 1, 1), (8, 1))
    assert [name for name in lazy.dask.layers if "overlap" in name]
    assert np.array_equal(got, value)
    same_bits(got, expected)


def test_convolution_backward_spatial_chunks_share_halos() -> None:
    # Transposed: [1, 4, 7, 5] by [4, 3, 3, 2] (Cin 4, Cout/groups 3, GroupCount 2: Cout 6), Strides (2, 3),
    # StartPadding (1, 0), EndPadding (0, 1), OutputPadding (1, 2). Height: output 6 * 2 + 3 - 1 + 1 = 15; the input
    # keeps its cuts 3 and 4 (outputs 5 and 7), each chunk reading (3 - 1) // 2 = 1 row before it. Width: output
    # 4 * 3 + 2 - 1 + 2 = 15, cut 2 -> output 6, no halo (2 - 1 < 3).
    rng = np.random.default_rng(12)
    x, w = integers(rng, (1, 4, 7, 5), np.float32), integers(rng, (4, 3, 3, 2), np.float32)
    compiled, arrays, value = convolution(x, w, None, direction=dml.ConvolutionDirection.BACKWARD, strides=(2, 3),
                                          start_padding=(1, 0), end_padding=(0, 1), output_padding=(1, 2),
                                          group_count=2)
    lazy, got, expected = run(compiled, arrays, {"x": (1, (3, 1), (3, 1, 3), (2, 3))})
    assert lazy.chunks == ((1,), (6,), (5, 2, 8), (6, 9))
    assert np.array_equal(got, value)
    same_bits(got, expected)


def test_convolution_nhwc_through_strides_float16_with_fused_clip() -> None:
    # The input held NHWC ([2, 8, 9, 3]) and read as NCHW through strides [216, 1, 27, 3]; FLOAT16; a fused CLIP to
    # [-20, 30]; height and width cut. Height (kernel 3, stride 1, paddings 1): the cut at 3 stays, output 3 + 1 = 4;
    # width (kernel 2, stride 2, EndPadding 1: output 5): the cut at 4 is on the grid, output 2, no halo.
    rng = np.random.default_rng(13)
    held = integers(rng, (2, 8, 9, 3), np.float16)
    w = integers(rng, (5, 3, 3, 2), np.float16)
    graph = dml.Graph(dml.Device())
    x = graph.input(held.shape, "FLOAT16", name="x")
    filt = graph.input(w.shape, "FLOAT16", name="w")
    value, _ = reference_convolution(held.transpose(0, 3, 1, 2), w, None, strides=(1, 2), start_padding=(1, 0),
                                     end_padding=(1, 1))
    clip = dml.ElementWiseClipOperatorDesc(None, None, None, min=-20.0, max=30.0)
    desc = dml.ConvolutionOperatorDesc(T("FLOAT16", (2, 3, 8, 9), (216, 1, 27, 3)), T("FLOAT16", w.shape), None,
                                       T("FLOAT16", value.shape), strides=(1, 2), start_padding=(1, 0),
                                       end_padding=(1, 1), fused_activation=clip)
    compiled = graph.compile([node(graph, desc, x, filt, None)])
    lazy, got, expected = run(compiled, {"x": held, "w": w}, {"x": (1, (3, 5), (4, 5), 3)})
    assert lazy.chunks == ((1, 1), (5,), (4, 4), (2, 3))
    assert np.array_equal(got, np.clip(value, -20, 30).astype(np.float16))
    same_bits(got, expected)


@st.composite
def convolution_cases(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    backward = draw(st.booleans())
    groups = draw(st.sampled_from([1, 2]))
    case: dict[str, Any] = {"count": count, "backward": backward, "groups": groups,
                            "batch": draw(st.integers(1, 3)), "cig": draw(st.integers(1, 2)),
                            "cog": draw(st.integers(1, 2)), "mode": draw(st.sampled_from(["CROSS_CORRELATION",
                                                                                             "CONVOLUTION"])),
                            "bias": draw(st.booleans()), "spatial": []}
    for _ in range(count):
        kernel, stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
        extent = (kernel - 1) * dilation + 1
        start, end = draw(st.integers(0, extent - 1)), draw(st.integers(0, extent - 1))
        extra = draw(st.integers(0, max(stride, dilation) - 1)) if backward else 0
        size = draw(st.integers(1, 9 if count < 3 else 5))
        case["spatial"].append((size, kernel, stride, dilation, start, end, extra))
    return case


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_convolution_any_chunks_match_the_reference(data: st.DataObject) -> None:
    # 1-, 2- and 3-D, both directions and modes, strides, dilations, paddings, OutputPadding, groups and Bias, every
    # dimension cut at random: small integers, so the result is the exact reference and one machine's bits.
    case = data.draw(convolution_cases())
    note(repr(case))
    spatial = case["spatial"]
    sizes = [size for size, *_ in spatial]
    kernels = [kernel for _, kernel, *_ in spatial]
    groups = case["groups"]
    fields = {"mode": case["mode"], "direction": "BACKWARD" if case["backward"] else "FORWARD",
              "strides": tuple(s[2] for s in spatial), "dilations": tuple(s[3] for s in spatial),
              "start_padding": tuple(s[4] for s in spatial), "end_padding": tuple(s[5] for s in spatial),
              "output_padding": tuple(s[6] for s in spatial), "group_count": groups}
    cin, cout = case["cig"] * groups, case["cog"] * groups
    w_shape = (cin, case["cog"], *kernels) if case["backward"] else (cout, case["cig"], *kernels)
    out = convolution_output_sizes((case["batch"], cin, *sizes), w_shape, direction=fields["direction"],
                                   strides=fields["strides"], dilations=fields["dilations"],
                                   start_padding=fields["start_padding"], end_padding=fields["end_padding"],
                                   output_padding=fields["output_padding"], group_count=groups)
    assume(min(out) >= 1)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x, w = integers(rng, (case["batch"], cin, *sizes), np.float32), integers(rng, w_shape, np.float32)
    bias = integers(rng, (1, cout, *(1 for _ in sizes)), np.float32) if case["bias"] else None
    compiled, arrays, value = convolution(x, w, bias, **fields)
    chunks = {"x": tuple(chunks_of(data.draw, size) for size in x.shape)}
    note(f"chunks={chunks}")
    _, got, expected = run(compiled, arrays, chunks)
    assert np.array_equal(got, value)
    same_bits(got, expected)


# -- the graph API ----------------------------------------------------------------------------------------------------

def test_graph_api_gemm_and_convolution_on_dask_arrays() -> None:
    # dml.gemm: a [4, 6] matrix broadcast over b's batch of 3, b transposed by dml.transpose (folded into its strides),
    # a [5] row as c, a fused RELU; dml.convolution with a [Cout] bias and strides. Every input dimension cut, K
    # included; one Dask graph; exact small integers: the reference's values and one machine's bits.
    rng = np.random.default_rng(6)
    arrays = {"a": integers(rng, (4, 6), np.float32), "b": integers(rng, (3, 5, 6), np.float32),
              "row": integers(rng, (5,), np.float32), "x": integers(rng, (2, 2, 7, 6), np.float32),
              "w": integers(rng, (3, 2, 3, 3), np.float32), "bias": integers(rng, (3,), np.float32)}
    graph = dml.Graph(dml.Device())
    given = {name: graph.input(array.shape, "FLOAT32", name=name) for name, array in arrays.items()}
    product = dml.gemm(given["a"], dml.transpose(given["b"], [0, 2, 1]), given["row"], alpha=0.5,
                       fused_activation=dml.ActivationReluOperatorDesc())
    convolved = dml.convolution(given["x"], given["w"], given["bias"], strides=[2, 1], start_padding=[1, 1],
                                end_padding=[1, 1])
    compiled = graph.compile([product, convolved])
    chunks = {"a": ((1, 3), (2, 4)), "b": ((2, 1), (3, 2), (4, 2)), "row": ((2, 3),), "x": (1, 1, (3, 4), (2, 4)),
              "bias": ((1, 2),)}
    lazy = compiled({name: da.from_array(array, chunks=chunks[name]) if name in chunks else array
                     for name, array in arrays.items()})
    got = dask.compute(*lazy)
    expected = compiled(arrays)
    assert lazy[0].chunks == ((2, 1), (1, 3), (2, 1, 2))
    a, b = arrays["a"], arrays["b"]
    assert np.array_equal(got[0], np.maximum(0.5 * a @ np.swapaxes(b, 1, 2) + arrays["row"], 0))
    value, _ = reference_convolution(arrays["x"], arrays["w"], arrays["bias"].reshape(1, 3, 1, 1), strides=(2, 1),
                                     start_padding=(1, 1), end_padding=(1, 1))
    assert np.array_equal(got[1], value)
    for one, other in zip(got, expected, strict=True):
        same_bits(one, other)


# -- the spatial cut, checked against the reference alone -------------------------------------------------------------

@pytest.mark.parametrize(("arguments", "expected"), [
    # (length, chunks, kernel, stride, dilation, start, end, output padding, output, backward)
    ((10, (4, 3, 3), 3, 2, 1, 1, 1, 0, 5, False), ((5, 2, 3), (3, 1, 1), (0, 1))),
    # Kernel 5, stride 1: a halo of 4 after each chunk; the chunks of 2 are merged until each holds 4.
    ((10, (2, 2, 2, 2, 2), 5, 1, 1, 2, 2, 0, 10, False), ((4, 6), (6, 4), (0, 4))),
    # Transposed, kernel 3, stride 2: one element before each chunk; outputs at 3 * 2 - 1 and 4 * 2 - 1.
    ((7, (3, 1, 3), 3, 2, 1, 1, 0, 1, 15, True), ((3, 1, 3), (5, 2, 8), (1, 0))),
    # A 1x1 kernel of stride 3: no halo; the input's cut at 5 moves to 6 (output 2).
    ((9, (5, 4), 1, 3, 1, 0, 0, 0, 3, False), ((6, 3), (2, 1), (0, 0))),
])
def test_halo_cuts_worked_by_hand(arguments: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    halo = _halo(*arguments)
    assert (halo.input_chunks, halo.output_chunks, halo.depth) == expected


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_halo_blocks_tile_the_convolution(data: st.DataObject) -> None:
    # Along one spatial dimension, every block of the cut (its input chunk with its halos, its own paddings) gives,
    # by the float64 reference, exactly its slice of the whole convolution's output.
    backward = data.draw(st.booleans())
    length, kernel, stride, dilation = (data.draw(st.integers(1, high)) for high in (14, 4, 4, 3))
    extent = (kernel - 1) * dilation + 1
    start, end = data.draw(st.integers(0, extent - 1)), data.draw(st.integers(0, extent - 1))
    extra = data.draw(st.integers(0, stride - 1)) if backward else 0
    direction = "BACKWARD" if backward else "FORWARD"
    geometry = {"strides": [stride], "dilations": [dilation], "output_padding": [extra]}
    out = convolution_output_sizes([1, 1, length], [1, 1, kernel], direction=direction, start_padding=[start],
                                   end_padding=[end], group_count=1, **geometry)[2]
    assume(out >= 1)
    halo = _halo(length, chunks_of(data.draw, length), kernel, stride, dilation, start, end, extra, out, backward)
    assert sum(halo.input_chunks) == length and sum(halo.output_chunks) == out
    assert len(halo.input_chunks) == 1 or min(halo.input_chunks) >= max(halo.depth)
    rng = np.random.default_rng(length * 1000 + kernel)
    x, w = integers(rng, (1, 1, length), np.float64), integers(rng, (1, 1, kernel), np.float64)
    whole, _ = reference_convolution(x, w, None, direction=direction, start_padding=[start], end_padding=[end],
                                     **geometry)
    edges = np.cumsum([0, *halo.input_chunks])
    last = len(halo.input_chunks) - 1
    pieces = []
    for index in range(last + 1):
        low = edges[index] - (halo.depth[0] if index > 0 else 0)
        high = edges[index + 1] + (halo.depth[1] if index < last else 0)
        own_start, own_end, own_extra = halo.paddings(index)
        piece, _ = reference_convolution(x[..., low:high], w, None, direction=direction, strides=[stride],
                                         dilations=[dilation], start_padding=[own_start], end_padding=[own_end],
                                         output_padding=[own_extra])
        assert piece.shape[2] == halo.output_chunks[index]
        pieces.append(piece)
    assert np.array_equal(np.concatenate(pieces, axis=2), whole)
