"""CAST, SLICE and SLICE1 on the element-wise engine (issue 28, the copy slice: ops/copy.py), on every backend.

SLICE and SLICE1 (the identity on a re-strided view of the input): the pages' examples copied by hand, every support
row, hypothesis against `reference_slice` (the pages' pseudocode in Python) over input and output layouts and
negative SLICE1 strides, between sentinel bytes; `dml.slice` and Dask slicing; the window's bounds refused with their
messages (no read outside the input). DxDispatch's dml_slice.json: tests/test_cli.py.

Golden values worked out by hand (the page has no example): float -> integer truncated toward zero and saturated,
NaN 0; integer -> integer wrapped; to a float rounded once to nearest even (README Rulings). Every support-table row
at its level (and refused below it); every type pair dispatched on cpu-small (a representative set on cpu and gpu,
which compile a kernel per pair) against the independent reference of tests/reference.py (`reference_cast`: exact
rationals, element by element); hypothesis over layouts and values; outputs between sentinel bytes; the graph API
(`dml.cast`) and Dask (blockwise); bad descriptors and calls with their messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_cast, reference_slice
from strategies import backends, run_one_input

import opendml as dml
from opendml.ops.copy import SUPPORT

SLICE, SLICE1 = dml.SliceOperatorDesc, dml.Slice1OperatorDesc
X44 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)   # the pages' input

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
CAST = dml.CastOperatorDesc
ALL_TYPES = tuple(SUPPORT[dml.OperatorType.CAST][-1].tensors["InputTensor"].data_types)
#: the pairs cpu and gpu compile (one kernel each): every kind of conversion, 8 to 64 bits
REPRESENTATIVE = ((DT.FLOAT32, DT.INT8), (DT.FLOAT32, DT.UINT64), (DT.FLOAT16, DT.INT32), (DT.INT32, DT.UINT8),
                  (DT.UINT64, DT.INT64), (DT.INT64, DT.FLOAT32), (DT.UINT8, DT.FLOAT16), (DT.FLOAT32, DT.FLOAT16),
                  (DT.FLOAT16, DT.FLOAT32), (DT.INT16, DT.UINT32))


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: Any, x: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(the logical output, the logical input as bound) of one dispatch, between sentinel bytes."""
    return run_one_input(device(), desc, x, seed=seed)


def cast(values: Sequence[Any], source: Any, target: Any) -> np.ndarray:
    x = np.array(values, dtype=dml.DataType[source].numpy_dtype if isinstance(source, str) else source.numpy_dtype)
    sizes = [1, 1, 1, x.size]
    got, _ = run(CAST(T(source, sizes), T(target, sizes)), x.reshape(sizes))
    return got.reshape(-1)


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def check(desc: Any, x: np.ndarray, got: np.ndarray) -> None:
    expected = reference_cast(x, np.dtype(desc.output_tensor.data_type.numpy_dtype))
    nan = np.isnan(expected) if expected.dtype.kind == "f" else np.zeros(expected.shape, bool)
    assert np.array_equal(np.isnan(got) if got.dtype.kind == "f" else nan, nan), (x, got, expected)
    assert np.array_equal(_bits(np.where(nan, 0, got)), _bits(np.where(nan, 0, expected))), (desc, x, got, expected)


def values_of(data_type: dml.DataType, count: int = 24, seed: int = 0) -> np.ndarray:
    """Edge values of the type (its extremes, 0, NaN and infinities, halves) and random ones."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(data_type.numpy_dtype)
    if dtype.kind == "f":
        edges = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 127.9, -128.9, 255.5, 65504.0, 65520.0, 3e9, -3e9, 1e19, -1e19,
                 math.nan, math.inf, -math.inf, 16777217.0, 0.1]
        with np.errstate(over="ignore"):
            rest = (rng.standard_normal(count) * 10.0 ** rng.integers(-3, 12, count)).astype(dtype)
            return np.concatenate([np.array(edges, dtype=np.float64).astype(dtype), rest])
    info = np.iinfo(dtype)
    edges = [0, 1, int(info.max), int(info.min), int(info.max) // 2 + 1, int(info.max) - 55]
    rest = rng.integers(int(info.min), int(info.max), count, dtype=dtype, endpoint=True)
    return np.concatenate([np.array(edges, dtype=dtype), rest])


# -- golden values worked out by hand ----------------------------------------------------------------------------------

def test_float_to_integer_truncates_and_saturates(backend: str) -> None:
    got = cast([1.5, -1.5, 2.9, -2.9, 300.0, -300.0, math.nan, math.inf, -math.inf, -0.5], "FLOAT32", "INT8")
    assert got.tolist() == [1, -1, 2, -2, 127, -128, 0, 127, -128, 0]
    got = cast([-1.5, -0.5, 255.9, 256.0, 1e10, math.nan], "FLOAT32", "UINT8")
    assert got.tolist() == [0, 0, 255, 255, 255, 0]
    # FLOAT32 3e9 is exactly 3000000000 (< 2^32): in UINT32's range; 2^32 saturates; INT32 saturates both
    assert cast([3e9, 4294967296.0], "FLOAT32", "UINT32").tolist() == [3000000000, 4294967295]
    assert cast([3e9, -3e9], "FLOAT32", "INT32").tolist() == [2147483647, -2147483648]
    assert cast([1e19, -1e19, 2.0**62], "FLOAT32", "INT64").tolist() == [2**63 - 1, -2**63, 2**62]
    assert cast([65504.0, -65504.0], "FLOAT16", "INT16").tolist() == [32767, -32768]


def test_integer_to_integer_wraps(backend: str) -> None:
    assert cast([300, -1, 128, -129], "INT32", "UINT8").tolist() == [44, 255, 128, 127]
    assert cast([300, -1, 128, -129], "INT32", "INT8").tolist() == [44, -1, -128, 127]
    assert cast([2**64 - 1, 2**63], "UINT64", "INT64").tolist() == [-1, -2**63]
    assert cast([-1, -2**31], "INT32", "UINT64").tolist() == [2**64 - 1, 2**64 - 2**31]
    assert cast([65535, 32768], "UINT16", "INT16").tolist() == [-1, -32768]


def test_to_float_rounds_once_to_nearest_even(backend: str) -> None:
    # 2^24 + 1 is a tie between 2^24 and 2^24 + 2: the even significand, 2^24; 2^24 + 3 -> 2^24 + 4
    assert cast([16777217, 16777219, -16777217], "INT32", "FLOAT32").tolist() == [16777216.0, 16777220.0, -16777216.0]
    assert cast([2**64 - 1], "UINT64", "FLOAT32").tolist() == [2.0**64]
    # FLOAT16: 65519 is below the tie 65520 between 65504 and 65536 (infinity): 65504; 65520 ties to even: inf;
    # spacing 2 from 2048: 2049 ties to 2048 (0x6800), 2051 between 2050 (0x6801) and 2052 (0x6802) to 2052
    got = cast([65519.0, 65520.0, -65520.0, 0.1, 2049.0, 2051.0, math.nan], "FLOAT32", "FLOAT16")
    assert _bits(got).tolist() == [0x7BFF, 0x7C00, 0xFC00, 0x2E66, 0x6800, 0x6802, _bits(got)[6]]
    assert math.isnan(float(got[6]))
    assert cast([255, 0], "UINT8", "FLOAT16").tolist() == [255.0, 0.0]
    assert _bits(cast([1.0, -0.0, math.inf], "FLOAT16", "FLOAT32")).tolist() == [0x3F800000, 0x80000000, 0x7F800000]


def test_float64_casts(backend: str) -> None:
    # FLOAT64 -> FLOAT64 moves the bits (NaN payload and -0 included), on the gpu too
    bits = np.array([0x7FF8000000000123, 0x8000000000000000, 0x3FB999999999999A], np.uint64)
    assert _bits(cast(bits.view(np.float64), "FLOAT64", "FLOAT64")).tolist() == bits.tolist()
    if backend == "gpu":   # README Rulings: no f64 arithmetic on the gpu, so no conversion to or from FLOAT64
        for source, target in (("FLOAT64", "FLOAT32"), ("INT64", "FLOAT64"), ("FLOAT64", "INT64"),
                               ("FLOAT16", "FLOAT64")):
            with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_CAST: FLOAT64 '(to_float|trunc)' needs "
                                                           r"float64 arithmetic, which the gpu backend does not have"):
                cast([1], source, target)
        return
    # 2^53 + 1 ties between 2^53 and 2^53 + 2: 2^53; 1e300 is past FLOAT32: infinity
    assert cast([2**53 + 1], "INT64", "FLOAT64").tolist() == [2.0**53]
    assert cast([1e300, -1e300, 0.1], "FLOAT64", "FLOAT32").tolist() == [math.inf, -math.inf, float(np.float32(0.1))]
    # rounded once: 2049 + 2^-20 is above the FLOAT16 tie 2049 (spacing 2): 2050 = 0x6801 (through FLOAT32 it would
    # round to 2049.0 first, then tie to even: 2048)
    assert _bits(cast([2049.0 + 2.0**-20], "FLOAT64", "FLOAT16")).tolist() == [0x6801]
    assert cast([1e19, -1e19, -2.5, math.nan], "FLOAT64", "INT64").tolist() == [2**63 - 1, -2**63, -2, 0]
    assert cast([0.5, -7.0], "FLOAT32", "FLOAT64").tolist() == [0.5, -7.0]


# -- every support row, every pair --------------------------------------------------------------------------------

@pytest.mark.parametrize("level, rank, types", [
    (FL.LEVEL_1_0, 4, (DT.FLOAT32, DT.FLOAT16, DT.INT16, DT.INT8, DT.UINT16, DT.UINT8)),
    (FL.LEVEL_3_0, 4, (DT.FLOAT32, DT.FLOAT16, DT.INT64, DT.INT32, DT.INT16, DT.INT8, DT.UINT64, DT.UINT32,
                       DT.UINT16, DT.UINT8)),
    (FL.LEVEL_3_1, 1, (DT.FLOAT32, DT.FLOAT16, DT.INT64, DT.INT32, DT.INT16, DT.INT8, DT.UINT64, DT.UINT32,
                       DT.UINT16, DT.UINT8)),
    (FL.LEVEL_4_1, 8, ALL_TYPES),
])
def test_support_rows(level: dml.FeatureLevel, rank: int, types: tuple[dml.DataType, ...]) -> None:
    """Every pair of the row's types at its level; a type or rank of a later row refused just below it."""
    sizes = [1] * (rank - 1) + [2]
    for source in types:
        for target in types:
            CAST(T(source, sizes), T(target, sizes)).validate(level)
    below = FL(max(candidate for candidate in FL if candidate < level)) if level > FL.LEVEL_1_0 else None
    if below is None:
        return
    table = SUPPORT[dml.OperatorType.CAST]
    missing = [data_type for data_type in types if not any(
        row.level <= below and data_type in row.tensors["InputTensor"].data_types for row in table)]
    subject = T(missing[0], sizes) if missing else T(DT.FLOAT32, sizes)
    with pytest.raises(dml.UnsupportedError, match=f"needs feature level {level}"):
        CAST(subject, T(DT.FLOAT32, sizes)).validate(below)


@backends("cpu-small")   # cpu and gpu compile a kernel per pair: they run the representative pairs
def test_every_pair_on_cpu_small(backend: str) -> None:
    for source in ALL_TYPES:
        x = values_of(source).reshape(1, 1, 1, -1)
        for target in ALL_TYPES:
            desc = CAST(T(source, x.shape), T(target, x.shape))
            got, logical = run(desc, x)
            check(desc, logical, got)


@pytest.mark.parametrize("source, target", REPRESENTATIVE)
def test_representative_pairs(backend: str, source: dml.DataType, target: dml.DataType) -> None:
    x = values_of(source, seed=1).reshape(1, 1, 2, -1)
    desc = CAST(T(source, x.shape), T(target, x.shape))
    got, logical = run(desc, x)
    check(desc, logical, got)


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_cast_matches_the_reference(backend: str, data: st.DataObject) -> None:
    """Any rank 1-4 layout (zero strides and gaps in the input, gaps in the output) of a representative pair."""
    source, target = data.draw(st.sampled_from(REPRESENTATIVE))
    rank = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    packed = [int(np.prod(sizes[d + 1:])) for d in range(rank)]
    gap, out_gap = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    in_strides = [data.draw(st.sampled_from([0, gap * p])) for p in packed]
    out_strides = [out_gap * p for p in packed]
    count = int(np.prod(sizes))
    pool = values_of(source, seed=data.draw(st.integers(0, 100)))
    x = np.resize(pool, count).reshape(sizes)
    desc = CAST(T(source, sizes, in_strides), T(target, sizes, out_strides))
    got, logical = run(desc, x, seed=data.draw(st.integers(0, 5)))
    check(desc, logical, got)


# -- graph API and Dask -----------------------------------------------------------------------------------------------

def test_graph_cast(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([2, 3], "FLOAT32", name="x")
    y = dml.cast(x, "INT8")
    assert y.sizes == (2, 3) and y.dtype == DT.INT8
    values = np.array([[1.5, -2.5, 300.0], [math.nan, -0.9, -300.0]], np.float32)
    (got,) = g.compile([y])({"x": values})
    assert np.asarray(got).tolist() == [[1, -2, 127], [0, 0, -128]]


def test_dask_cast_is_blockwise() -> None:
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([4, 6], "INT32", name="x")
    y = dml.cast(x, "UINT8")
    values = np.arange(-12, 12, dtype=np.int32).reshape(4, 6) * 25
    (got,) = g.compile([y])({"x": da.from_array(values, chunks=(2, 3))})
    assert got.chunks == ((2, 2), (3, 3))
    assert got.compute().tolist() == reference_cast(values, np.dtype(np.uint8)).tolist()


# -- messages ---------------------------------------------------------------------------------------------------------

def test_cast_messages() -> None:
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_CAST: InputTensor.Sizes is \[1, 1, 1, 2\]; it must "
                                                  r"equal OutputTensor.Sizes \[1, 1, 1, 3\]"):
        CAST(T(DT.FLOAT32, [1, 1, 1, 2]), T(DT.INT8, [1, 1, 1, 3])).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"InputTensor.DimensionCount is 3; it must equal "
                                                  r"OutputTensor.DimensionCount \(4\)"):
        CAST(T(DT.FLOAT32, [1, 1, 2]), T(DT.INT8, [1, 1, 1, 2])).validate(TOP)
    with pytest.raises(dml.UnsupportedError, match=r"OutputTensor.DataType FLOAT64 needs feature level 4_1"):
        CAST(T(DT.FLOAT32, [1, 1, 1, 2]), T(DT.FLOAT64, [1, 1, 1, 2])).validate(FL.LEVEL_3_1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_CAST: InputTensor is None; it must be a TensorDesc"):
        CAST(None, T(DT.INT8, [1, 1, 1, 3]))
    with pytest.raises(dml.ValidationError, match=r"dml.cast: data_type is 'FLOAT99'"):
        dml.cast(dml.Graph(device()).input([2], "FLOAT32"), "FLOAT99")


# -- SLICE and SLICE1 -------------------------------------------------------------------------------------------------

def test_slice_page_examples(backend: str) -> None:
    got, _ = run(SLICE(T(DT.FLOAT32, [1, 1, 4, 4]), T(DT.FLOAT32, [1, 1, 3, 2]), 4, [0, 0, 1, 2], [1, 1, 3, 2],
                       [1, 1, 1, 1]), X44)
    assert got.tolist() == [[[[7, 8], [11, 12], [15, 16]]]]
    got, _ = run(SLICE(T(DT.FLOAT32, [1, 1, 4, 4]), T(DT.FLOAT32, [1, 1, 2, 2]), 4, [0, 0, 1, 0], [1, 1, 2, 2],
                       [1, 1, 2, 3]), X44)
    assert got.tolist() == [[[[5, 8], [13, 16]]]]


def test_slice1_page_examples(backend: str) -> None:
    got, _ = run(SLICE1(T(DT.FLOAT32, [1, 1, 4, 4]), T(DT.FLOAT32, [1, 1, 2, 2]), 4, [0, 0, 0, 1], [1, 1, 4, 3],
                        [1, 1, 2, 2]), X44)
    assert got.tolist() == [[[[2, 4], [10, 12]]]]
    got, _ = run(SLICE1(T(DT.FLOAT32, [1, 1, 4, 4]), T(DT.FLOAT32, [1, 1, 2, 2]), 4, [0, 0, 0, 1], [1, 1, 4, 3],
                        [1, 1, -2, 2]), X44)
    assert got.tolist() == [[[[14, 16], [6, 8]]]]
    # every axis reversed, from a transposed input: input[c][r] = X44[r][c]; reversed rows and columns of it
    transposed = T(DT.FLOAT32, [1, 1, 4, 4], [16, 16, 1, 4])
    got, _ = run(SLICE1(transposed, T(DT.FLOAT32, [1, 1, 4, 4]), 4, [0, 0, 0, 0], [1, 1, 4, 4], [-1, -1, -1, -1]),
                 X44.transpose(0, 1, 3, 2).copy())
    assert got.tolist() == [[[[16, 12, 8, 4], [15, 11, 7, 3], [14, 10, 6, 2], [13, 9, 5, 1]]]]


def test_slice_64_bit_and_8_bit_types(backend: str) -> None:
    for data_type, values in ((DT.INT64, [2**62 + i for i in range(6)]), (DT.UINT8, [250, 1, 2, 3, 4, 255]),
                              (DT.FLOAT16, [0.5, -1, 2, 3, 4, 65504]), (DT.FLOAT64, [0.1, 2, 3, 4, 5, 6])):
        x = np.array(values, dtype=data_type.numpy_dtype).reshape(1, 1, 1, 6)
        got, _ = run(SLICE1(T(data_type, [1, 1, 1, 6]), T(data_type, [1, 1, 1, 3]), 4, [0, 0, 0, 0], [1, 1, 1, 6],
                            [1, 1, 1, -2]), x)
        assert got.reshape(-1).tolist() == [values[5], values[3], values[1]]


@pytest.mark.parametrize("cls, level, ranks, types", [
    (SLICE, FL.LEVEL_1_0, (4, 5), (DT.FLOAT32, DT.FLOAT16, DT.INT32, DT.INT16, DT.UINT32, DT.UINT16)),
    (SLICE, FL.LEVEL_2_1, (4, 5), (DT.INT8, DT.UINT8)),
    (SLICE, FL.LEVEL_3_0, (1, 8), (DT.FLOAT32, DT.INT8)),
    (SLICE, FL.LEVEL_4_1, (1, 8), (DT.FLOAT64, DT.INT64, DT.UINT64)),
    (SLICE1, FL.LEVEL_2_1, (4, 5), (DT.FLOAT32, DT.FLOAT16, DT.INT32, DT.INT16, DT.INT8, DT.UINT32, DT.UINT16,
                                    DT.UINT8)),
    (SLICE1, FL.LEVEL_3_0, (1, 8), (DT.FLOAT32, DT.UINT8)),
    (SLICE1, FL.LEVEL_4_1, (1, 8), (DT.FLOAT64, DT.INT64, DT.UINT64)),
])
def test_slice_support_rows(cls: Any, level: dml.FeatureLevel, ranks: tuple[int, int],
                            types: tuple[dml.DataType, ...]) -> None:
    """Each row's new types and ranks accepted at its level, refused (UnsupportedError) just below it."""
    below = max((candidate for candidate in FL if candidate < level), default=None)
    for rank in ranks:
        sizes = [1] * (rank - 1) + [3]
        for data_type in types:
            desc = cls(T(data_type, sizes), T(data_type, sizes), rank, [0] * rank, sizes, [1] * rank)
            desc.validate(level)
            if below is not None:
                with pytest.raises(dml.UnsupportedError, match=f"needs feature level {level}"):
                    desc.validate(below)
    if level == FL.LEVEL_3_0:   # ranks 1-3 and 6-8 from 3_0
        desc = cls(T(DT.FLOAT32, [3]), T(DT.FLOAT32, [3]), 1, [0], [3], [1])
        with pytest.raises(dml.UnsupportedError, match="needs feature level 3_0"):
            desc.validate(FL.LEVEL_2_1)


@st.composite
def slice_cases(draw: st.DrawFn) -> Any:
    cls = draw(st.sampled_from([SLICE, SLICE1]))
    rank = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    offsets, windows, strides = [], [], []
    for size in sizes:
        offsets.append(draw(st.integers(0, size - 1)))
        windows.append(draw(st.integers(1, size - offsets[-1])))
        strides.append(draw(st.integers(1, 3)) * (draw(st.sampled_from([1, -1])) if cls is SLICE1 else 1))
    out = [1 + (window - 1) // abs(stride) for window, stride in zip(windows, strides, strict=True)]
    if cls is SLICE1:   # any output size the window allows
        out = [draw(st.integers(1, most)) for most in out]
    else:
        windows = out
    packed = [int(np.prod(sizes[d + 1:])) for d in range(rank)]
    in_strides = data_strides = [p * draw(st.integers(1, 2)) for p in packed]
    if draw(st.booleans()) and rank >= 2:   # transposed: the last two dimensions swapped in memory
        data_strides = list(in_strides)
        data_strides[-1], data_strides[-2] = sizes[-2] * 1, 1
        data_strides[:-2] = [p * 2 for p in packed[:-2]]
    out_strides = [1] * rank   # each dimension steps over the ones inside it (with a gap or not): never overlapping
    for d in range(rank - 1, -1, -1):
        inner = 1 if d == rank - 1 else out_strides[d + 1] * out[d + 1]
        out_strides[d] = inner * draw(st.integers(1, 2))
    data_type = draw(st.sampled_from([DT.FLOAT32, DT.UINT8, DT.INT64, DT.FLOAT16]))
    desc = cls(T(data_type, sizes, data_strides), T(data_type, out, out_strides), rank, offsets, windows, strides)
    return desc, draw(st.integers(0, 10))


@settings(max_examples=15, deadline=None)
@given(case=slice_cases())
def test_slice_matches_the_reference(backend: str, case: Any) -> None:
    """Any window, stride (SLICE1: negative too) and layout of input and output, between sentinel bytes."""
    desc, seed = case
    desc.validate(TOP)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 200, desc.input_tensor.sizes).astype(desc.input_tensor.data_type.numpy_dtype)
    got, logical = run(desc, x, seed=seed)
    assert np.array_equal(_bits(got), _bits(reference_slice(logical, desc))), desc


def test_graph_and_dask_slice(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([4, 6], "INT32", name="x")
    y = dml.slice(x, [1, 0], [3, 6], [1, -2])   # rows 1-3, columns 5, 3, 1
    z = dml.slice(x, [0, 1], [4, 4], [3, 2])    # rows 0, 3; columns 1, 3
    assert y.sizes == (3, 3) and z.sizes == (2, 2)
    values = np.arange(24, dtype=np.int32).reshape(4, 6)
    want_y, want_z = [[11, 9, 7], [17, 15, 13], [23, 21, 19]], [[1, 3], [19, 21]]
    got_y, got_z = g.compile([y, z])({"x": values})
    assert np.asarray(got_y).tolist() == want_y and np.asarray(got_z).tolist() == want_z
    da = pytest.importorskip("dask.array")
    got_y, got_z = g.compile([y, z])({"x": da.from_array(values, chunks=(2, 4))})
    assert got_y.compute().tolist() == want_y and got_z.compute().tolist() == want_z


def test_slice_messages() -> None:
    x = T(DT.FLOAT32, [1, 1, 4, 4])
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SLICE: Offsets\[3\] \+ Strides\[3\] x "
                                                  r"\(Sizes\[3\] - 1\) is 4; it must be below "
                                                  r"InputTensor.Sizes\[3\] \(4\)"):
        SLICE(x, T(DT.FLOAT32, [1, 1, 1, 2]), 4, [0, 0, 0, 1], [1, 1, 1, 2], [1, 1, 1, 3]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SLICE: Sizes is \[1, 1, 1, 2\]; it must equal "
                                                  r"OutputTensor.Sizes \[1, 1, 1, 3\]"):
        SLICE(x, T(DT.FLOAT32, [1, 1, 1, 3]), 4, [0, 0, 0, 0], [1, 1, 1, 2], [1, 1, 1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"Strides\[3\] is 0; it must be at least 1"):
        SLICE(x, T(DT.FLOAT32, [1, 1, 1, 2]), 4, [0, 0, 0, 0], [1, 1, 1, 2], [1, 1, 1, 0]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SLICE1: InputWindowOffsets\[2\] \+ "
                                                  r"InputWindowSizes\[2\] is 5 \(window size 2\); the window must "
                                                  r"not be empty and must end within InputTensor.Sizes\[2\] \(4\)"):
        SLICE1(x, T(DT.FLOAT32, [1, 1, 1, 1]), 4, [0, 0, 3, 0], [1, 1, 2, 1], [1, 1, -1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"InputWindowStrides\[1\] is 0; it must not be 0"):
        SLICE1(x, T(DT.FLOAT32, [1, 1, 1, 1]), 4, [0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.Sizes\[3\] is 3; it must be 1 to 2 \(1 \+ "
                                                  r"\(InputWindowSizes\[3\] - 1\) / \|InputWindowStrides\[3\]\|\)"):
        SLICE1(x, T(DT.FLOAT32, [1, 1, 1, 3]), 4, [0, 0, 0, 0], [1, 1, 1, 4], [1, 1, 1, -3]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DimensionCount is 3; it must equal InputTensor.DimensionCount "
                                                  r"\(4\)"):
        SLICE1(x, T(DT.FLOAT32, [1, 1, 1, 1]), 3, [0, 0, 0], [1, 1, 1], [1, 1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"InputWindowOffsets has 3 values \(\[0, 0, 0\]\); it must "
                                                  r"have DimensionCount \(4\)"):
        SLICE1(x, T(DT.FLOAT32, [1, 1, 1, 1]), 4, [0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.DataType is INT32; it must equal "
                                                  r"InputTensor.DataType \(FLOAT32\)"):
        SLICE1(x, T(DT.INT32, [1, 1, 1, 1]), 4, [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SLICE: Strides\[1\] is -1"):
        SLICE(x, T(DT.FLOAT32, [1, 1, 1, 1]), 4, [0, 0, 0, 0], [1, 1, 1, 1], [1, -1, 1, 1])
    with pytest.raises(dml.ValidationError, match=r"dml.slice: strides is \[1, 0\]; a stride must not be 0"):
        dml.slice(dml.Graph(device()).input([2, 2], "FLOAT32"), [0, 0], [2, 2], [1, 0])
    with pytest.raises(dml.ValidationError, match=r"dml.slice: sizes has 1 values; it must have one per dimension"):
        dml.slice(dml.Graph(device()).input([2, 2], "FLOAT32"), [0, 0], [2], None)
