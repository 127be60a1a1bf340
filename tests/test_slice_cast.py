"""CAST on the element-wise engine (issue 28, the copy slice: ops/copy.py), on every backend.

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
from reference import reference_cast
from strategies import backends, build_buffer, execute_between_sentinels, read_buffer

import opendml as dml
from opendml.ops.copy import SUPPORT

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
    dev = device()
    compiled = dev.compile_operator(dev.create_operator(desc))
    tensor = desc.input_tensor
    raw = build_buffer(x, tensor.strides, byte_offset=16, seed=seed)
    logical = read_buffer(raw, x.dtype, tensor.sizes, tensor.strides, byte_offset=16)
    out = desc.output_tensor
    got = execute_between_sentinels(dev, compiled, [raw], out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=seed, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=32), logical


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
