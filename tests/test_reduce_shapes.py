"""REDUCE on shapes the property tests (at most 4096 elements) do not reach: reduced blocks long enough that the
GPU cuts them into chunks and combines the chunks' partial results in a second pass, many outputs with tiny blocks,
FLOAT16 sums, integer wrap-around in long blocks, and ARGMAX / ARGMIN ties and NaNs wherever chunks may begin.

The expected values come from tests/reference.py or are computed here by hand (NumPy in float64, Python integers),
never from the package. Runs on every backend (conftest.EVERY_BACKEND); on the gpu backend a few tests also check
that the shape takes the pass structure it is meant to reach.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from reference import reference_reduce, reference_reduce_unrounded, wrap_int
from strategies import build_buffer, read_buffer, sentinel_bytes, tensor_size_in_bytes

import opendml as dml

LONG = 300_000          # long enough for the gpu backend's two-pass path, short enough for lavapipe
RNG_SEED = 13


def compile_reduce(function: str, input_type: str, sizes: list[int], axes: list[int], output_type: str | None = None,
                   strides: list[int] | None = None) -> dml.CompiledOperator:
    output_sizes = [1 if axis in axes else size for axis, size in enumerate(sizes)]
    desc = dml.ReduceOperatorDesc(function, dml.TensorDesc(input_type, sizes, strides),
                                  dml.TensorDesc(output_type or input_type, output_sizes), axes)
    device = dml.Device()
    return device.compile_operator(device.create_operator(desc))


def run(function: str, x: np.ndarray, axes: list[int], input_type: str, output_type: str | None = None) -> np.ndarray:
    (result,) = compile_reduce(function, input_type, list(x.shape), axes, output_type)(x)
    return np.asarray(result)


def gpu_passes(compiled: dml.CompiledOperator) -> int | None:
    """How many dispatches the gpu backend's plan makes (None on another backend): an implementation detail, checked
    so that these tests keep reaching the paths they were written for."""
    steps = getattr(compiled._kernel, "steps", None)
    return None if steps is None else len(steps)


def assert_within_ulps(got: np.ndarray, exact: np.ndarray, dtype: Any, ulps: float, absolute: float = 0.0) -> None:
    """got (of `dtype`) within `ulps` units in the last place (of `dtype`, at the exact value) of the exact values,
    or within `absolute` of them."""
    exact = np.asarray(exact, np.float64)
    rounded = exact.astype(dtype)
    spacing = np.spacing(np.abs(rounded)).astype(np.float64)
    error = np.abs(got.astype(np.float64) - exact)
    assert np.all((error <= ulps * spacing) | (error <= absolute)), \
        (got.ravel()[:4], exact.ravel()[:4], float(np.max(error / spacing)))


# -- long blocks: chunks and a second pass ------------------------------------------------------------------------

@pytest.mark.parametrize("function", ["SUM", "AVERAGE", "L1", "SUM_SQUARE", "L2", "LOG_SUM", "LOG_SUM_EXP"])
def test_long_block_float32(function: str, backend: str) -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.uniform(0.0, 2.0, LONG).astype(np.float32)
    x[::1000] = 1e4                     # a few large terms among many small ones: a plain float32 sum drifts
    compiled = compile_reduce(function, "FLOAT32", [LONG], [0])
    (got,) = compiled(x)
    if backend == "gpu":
        assert gpu_passes(compiled) == 2
    exact = reference_reduce_unrounded(function, x, [0])
    assert_within_ulps(got, exact, np.float32, 1.0 if function in ("SUM", "L1", "SUM_SQUARE") else 2.0)


@pytest.mark.parametrize(("sizes", "axes", "dispatches"), [
    # (sizes, axes, gpu dispatches for a FLOAT32 output / for a FLOAT16 output)
    ([LONG], [0], (2, 3)),              # many chunks: pass 1, a tree over the chunks' states (, the 16-bit write)
    ([24, 16384], [1], (2, 2)),         # a few chunks: pass 1, the elementwise combine
    ([300, 1000], [0], (2, 2)),         # outputs side by side, a few chunks
    ([1000, 300], [1], (1, 2)),         # one chunk: pass 1 writes the output (, the 16-bit write)
    ([30_000, 5], [1], (1, 1)),         # tiny blocks: one invocation per output
])
@pytest.mark.parametrize("input_type", ["FLOAT32", "FLOAT16"])
def test_pass_structures(sizes: list[int], axes: list[int], dispatches: tuple[int, int], input_type: str,
                         backend: str) -> None:
    dtype = np.dtype(input_type.lower())
    x = np.random.default_rng(RNG_SEED).uniform(0.0, 0.25, sizes).astype(dtype)
    compiled = compile_reduce("SUM", input_type, sizes, axes)
    (got,) = compiled(x)
    if backend == "gpu":
        assert gpu_passes(compiled) == dispatches[input_type == "FLOAT16"]
    assert_within_ulps(got, reference_reduce_unrounded("SUM", x, axes), dtype, 1.0)


def test_long_block_float32_sum_is_compensated() -> None:
    # 1 + 300000 * 2^-26: every term is below half an ulp of 1, so a float32 accumulator that holds the 1 never moves.
    x = np.full(LONG, 2.0**-26, np.float32)
    x[0] = 1.0
    got = run("SUM", x, [0], "FLOAT32")
    assert got.tolist() == [np.float32(1.0 + LONG * 2.0**-26)]


@pytest.mark.parametrize("function", ["SUM", "AVERAGE", "L2", "LOG_SUM_EXP"])
def test_long_block_float16(function: str) -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.uniform(0.0, 0.25, LONG).astype(np.float16)    # the sum (~37500) is still a FLOAT16 number
    got = run(function, x, [0], "FLOAT16")
    assert got.dtype == np.float16
    assert_within_ulps(got, reference_reduce_unrounded(function, x, [0]), np.float16, 1.0)


@pytest.mark.parametrize(("sizes", "axes", "strides"), [
    ([LONG // 4, 4], [0], None),                    # few outputs side by side in memory: lanes run over outputs
    ([4, LONG // 4], [1], [1, 4]),                  # the same memory read transposed: lanes run along the block
    ([3, 500, 200], [1, 2], [1, 600, 3]),           # two reduced axes, interleaved with the kept one
    ([LONG // 4, 4], [0, 1], [4, 1]),               # everything into one output
])
@pytest.mark.parametrize("function", ["SUM", "ARGMIN"])
def test_long_block_strided(function: str, sizes: list[int], axes: list[int], strides: list[int] | None) -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal(sizes).astype(np.float32)
    x.reshape(-1)[rng.integers(0, x.size, 50)] = -5.0        # ties of the minimum, spread over the chunks
    output_type = "UINT32" if function == "ARGMIN" else "FLOAT32"
    compiled = compile_reduce(function, "FLOAT32", sizes, axes, output_type, strides)
    output_sizes = [1 if axis in axes else size for axis, size in enumerate(sizes)]
    source = build_buffer(x, None if strides is None else tuple(strides), byte_offset=16)
    target = sentinel_bytes(16 + 4 * math.prod(output_sizes), seed=3)
    compiled.execute([dml.Binding(source, offset=16)], [dml.Binding(target, offset=16)])
    got = read_buffer(target, np.dtype(output_type.lower()), tuple(output_sizes), None, byte_offset=16)
    expected = reference_reduce(function, x, axes, np.dtype(output_type.lower()))
    if function == "SUM":
        assert_within_ulps(got, reference_reduce_unrounded(function, x, axes), np.float32, 1.0)
    else:
        np.testing.assert_array_equal(got, expected)


def test_long_block_is_deterministic() -> None:
    rng = np.random.default_rng(RNG_SEED)
    x = (rng.standard_normal(LONG) * 1e3).astype(np.float32)
    compiled = compile_reduce("SUM", "FLOAT32", [LONG], [0])
    first = compiled(x)[0].tobytes()
    assert all(compiled(x)[0].tobytes() == first for _ in range(3))


# -- ARGMAX / ARGMIN: ties and NaN wherever a chunk may begin or end ----------------------------------------------

@pytest.mark.parametrize("output_type", ["UINT32", "INT64"])
def test_arg_ties_across_chunks(output_type: str, backend: str) -> None:
    x = np.zeros(LONG, np.float32)
    # The maximum at many places, straddling every multiple of a power of two and of the chunk sizes a plan might
    # pick; the first (2047) must win.
    places = sorted({p + d for p in range(2048, LONG, 2048) for d in (-1, 0)} | {LONG - 1})
    x[places] = 7.0
    x[:2047] = -0.0                     # -0 equals +0: no tie-break on the sign
    compiled = compile_reduce("ARGMAX", "FLOAT32", [LONG], [0], output_type)
    (got,) = compiled(x)
    if backend == "gpu":
        assert gpu_passes(compiled) == 2
    assert got.tolist() == [2047]
    y = -x
    assert run("ARGMIN", y, [0], "FLOAT32", output_type).tolist() == [2047]
    # All equal: the first index.
    assert run("ARGMIN", np.full(LONG, 3.0, np.float32), [0], "FLOAT32", output_type).tolist() == [0]


@pytest.mark.parametrize("function", ["ARGMAX", "ARGMIN"])
def test_arg_first_nan_wins_across_chunks(function: str) -> None:
    x = np.linspace(-1.0, 1.0, LONG).astype(np.float32)
    x[[LONG - 2, 200_001, 150_000, 99_999]] = np.nan
    x[5] = np.inf if function == "ARGMAX" else -np.inf
    assert run(function, x, [0], "FLOAT32", "UINT32").tolist() == [99_999]
    half = x.astype(np.float16)
    assert run(function, half, [0], "FLOAT16", "UINT64").tolist() == [99_999]


@pytest.mark.parametrize("input_type", ["INT8", "UINT16", "INT64", "UINT64"])
def test_arg_and_extremes_of_integers_in_long_blocks(input_type: str) -> None:
    dtype = np.dtype(input_type.lower())
    info = np.iinfo(dtype)
    rng = np.random.default_rng(RNG_SEED)
    x = rng.integers(int(info.min) + 1, int(info.max), LONG, dtype=dtype, endpoint=False)
    x[[70_000, 70_001, 250_000]] = info.max
    x[[123_456, 123_457, 299_999]] = info.min
    assert run("ARGMAX", x, [0], input_type, "UINT32").tolist() == [70_000]
    assert run("ARGMIN", x, [0], input_type, "INT32").tolist() == [123_456]
    assert run("MAX", x, [0], input_type).tolist() == [info.max]
    assert run("MIN", x, [0], input_type).tolist() == [info.min]


def test_max_min_propagate_nan_in_long_blocks() -> None:
    x = np.linspace(-1.0, 1.0, LONG).astype(np.float32)
    x[LONG - 7] = np.nan
    assert np.isnan(run("MAX", x, [0], "FLOAT32")).all()
    assert np.isnan(run("MIN", x.astype(np.float16), [0], "FLOAT16")).all()
    x[LONG - 7] = 0.5
    assert run("MAX", x, [0], "FLOAT32").tolist() == [1.0]
    assert run("MIN", x.astype(np.float16), [0], "FLOAT16").tolist() == [-1.0]


def test_log_sum_exp_specials_in_long_blocks() -> None:
    x = np.linspace(-50.0, 50.0, LONG).astype(np.float32)
    x[[10, 200_000]] = -np.inf
    exact = 50.0 + math.log(np.sum(np.exp(x.astype(np.float64) - 50.0)))
    assert_within_ulps(run("LOG_SUM_EXP", x, [0], "FLOAT32"), np.array([exact]), np.float32, 2.0)
    x[250_000] = np.inf
    assert run("LOG_SUM_EXP", x, [0], "FLOAT32").tolist() == [np.inf]
    x[3] = np.nan
    assert np.isnan(run("LOG_SUM_EXP", x, [0], "FLOAT32")).all()
    assert run("LOG_SUM_EXP", np.full(LONG, -np.inf, np.float32), [0], "FLOAT32").tolist() == [-np.inf]


# -- integer wrap-around ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("input_type", ["INT32", "UINT32", "INT64", "UINT64"])
@pytest.mark.parametrize("function", ["SUM", "L1", "SUM_SQUARE", "MULTIPLY"])
def test_integer_wrap_around_in_long_blocks(function: str, input_type: str) -> None:
    dtype = np.dtype(input_type.lower())
    info = np.iinfo(dtype)
    rng = np.random.default_rng(RNG_SEED)
    size = LONG // 3                      # still a few chunks on the gpu, and a shorter Python reference
    if function == "MULTIPLY":            # odd factors: the product modulo 2^bits never becomes 0
        x = (rng.integers(0, 1 << 20, size, dtype=np.int64) * 2 + 1).astype(dtype)
        x[::7] = -1 if dtype.kind == "i" else info.max
    else:
        x = rng.integers(int(info.min), int(info.max), size, dtype=dtype, endpoint=True)
    x[5] = info.min if function != "MULTIPLY" else x[5]
    values = [int(v) for v in x]
    if function == "MULTIPLY":
        exact = 1
        for value in values:            # modulo 2^64 on the way: the exact product would have millions of bits
            exact = exact * value % 2**64
    else:
        exact = {"SUM": sum(values), "L1": sum(abs(v) for v in values),
                 "SUM_SQUARE": sum(v * v for v in values)}[function]
    assert run(function, x, [0], input_type).tolist() == [wrap_int(exact, dtype)]


def test_integer_wrap_around_many_outputs() -> None:
    x = np.full((4096, 40), 2**31 - 1, np.int32)
    x[:, 0] = np.arange(4096)
    got = run("SUM", x, [1], "INT32")
    expected = [wrap_int(i + 39 * (2**31 - 1), np.int32) for i in range(4096)]
    assert got.ravel().tolist() == expected


# -- many outputs, tiny blocks ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("input_type", "function"), [
    ("FLOAT32", "SUM"), ("FLOAT32", "L2"), ("FLOAT16", "AVERAGE"), ("FLOAT16", "MAX"), ("INT8", "MIN"),
    ("UINT16", "ARGMAX"), ("INT64", "SUM"), ("FLOAT32", "LOG_SUM_EXP"),
])
@pytest.mark.parametrize("axis", [0, 1])
def test_many_outputs_tiny_blocks(input_type: str, function: str, axis: int) -> None:
    dtype = np.dtype(input_type.lower())
    rng = np.random.default_rng(RNG_SEED)
    sizes = [20_001, 3] if axis == 1 else [3, 20_001]
    if dtype.kind == "f":
        x = rng.uniform(-8.0, 8.0, sizes).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(int(info.min), int(info.max), sizes, dtype=dtype, endpoint=True)
    output_type = "UINT32" if function == "ARGMAX" else input_type
    got = run(function, x, [axis], input_type, output_type)
    expected = reference_reduce(function, x, [axis], np.dtype(output_type.lower()))
    if function in ("SUM", "L2", "AVERAGE", "LOG_SUM_EXP") and dtype.kind == "f":
        # LOG_SUM_EXP = max + log(sum): its error is absolute, a few float32 roundings of the largest input (8).
        absolute = 16 * 2.0**-24 * 9 if function == "LOG_SUM_EXP" else 0.0
        assert_within_ulps(got, reference_reduce_unrounded(function, x, [axis]), dtype, 2.0, absolute)
    else:
        np.testing.assert_array_equal(got, expected)


def test_many_outputs_tiny_blocks_narrow_outputs_keep_their_neighbours() -> None:
    # 8-bit outputs, every other byte: the bytes between them must survive.
    sizes, axes = [30_001, 2], [1]
    x = np.random.default_rng(RNG_SEED).integers(-128, 128, sizes, dtype=np.int8)
    desc = dml.ReduceOperatorDesc("MAX", dml.TensorDesc("INT8", sizes), dml.TensorDesc("INT8", [30_001, 1], [2, 1]),
                                  axes)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    size = tensor_size_in_bytes(1, (30_001, 1), (2, 1))
    size += -size % 4
    target = sentinel_bytes(size, seed=5)
    before = target.copy()
    source = np.zeros(-(-x.size // 4) * 4, np.int8)      # TotalTensorSizeInBytes is a multiple of 4
    source[: x.size] = x.reshape(-1)
    compiled.execute([dml.Binding(source)], [dml.Binding(target)])
    assert np.array_equal(target[1::2], before[1::2])
    assert target[0::2].view(np.int8)[:30_001].tolist() == x.max(axis=1).tolist()


# -- the gpu's specialized walk of a row (issue 29) ---------------------------------------------------------------

ROW_WALK_CASES = [
    # (sizes, axes, input strides, whether the block is one run of equally spaced elements)
    ([7, 1000], [1], None, True),               # rows not a multiple of the work-group
    ([5, 1], [1], None, True),                  # one-element rows
    ([1000, 3], [0], None, True),               # strided rows: columns, INNER_STRIDE 3
    ([40, 3], [0], [1, 40], True),              # a transposed layout read along its contiguous axis
    ([4, 6, 50], [0, 2], None, False),          # two reduced axes that do not merge: split into rows
]


@pytest.mark.parametrize(("sizes", "axes", "strides", "row"), ROW_WALK_CASES)
@pytest.mark.parametrize("function", ["SUM", "ARGMAX"])
def test_row_walk_edges(sizes: list[int], axes: list[int], strides: list[int] | None, row: bool, function: str,
                        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # On the gpu with specialized and with generic shaders: the plain walk of one run (reduce_walk_row.wgsl) is
    # taken exactly where the block is one and shaders are specialized; the results are the reference's.
    import opendml.backends.gpu.specialize as specialize

    rng = np.random.default_rng(RNG_SEED)
    x = rng.standard_normal(sizes).astype(np.float32)
    x.reshape(-1)[rng.integers(0, x.size, 5)] = 4.0        # ties of the maximum
    output_type = "UINT32" if function == "ARGMAX" else "FLOAT32"
    output_sizes = [1 if axis in axes else size for axis, size in enumerate(sizes)]
    source = build_buffer(x, None if strides is None else tuple(strides), byte_offset=16)
    for specialized in [True, False] if backend == "gpu" else [specialize.ENABLED]:
        monkeypatch.setattr(specialize, "ENABLED", specialized)
        compiled = compile_reduce(function, "FLOAT32", sizes, axes, output_type, strides)
        target = sentinel_bytes(16 + 4 * math.prod(output_sizes), seed=3)
        compiled.execute([dml.Binding(source, offset=16)], [dml.Binding(target, offset=16)])
        got = read_buffer(target, np.dtype(output_type.lower()), tuple(output_sizes), None, byte_offset=16)
        if function == "SUM":
            assert_within_ulps(got, reference_reduce_unrounded(function, x, axes), np.float32, 1.0)
        else:
            np.testing.assert_array_equal(got, reference_reduce(function, x, axes, np.uint32))
        if backend == "gpu":
            sources = [step.work.wgsl for step in compiled._kernel.steps]   # type: ignore[attr-defined]
            assert any("one run of INNER_STRIDE-spaced" in text for text in sources) == (row and specialized)
