"""SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions on the element-wise engine (issue 28: ops/depth_space.py), on
every backend.

The identity on a re-strided 6-D view of the input: the pages' examples copied by hand (both orders), 64/16/8-bit
types, every support row at its level (refused below it), hypothesis against `reference_depth_space`
(tests/reference.py: DML_DEPTH_SPACE_ORDER's layouts element by element) over block sizes, orders and input/output
layouts between sentinel bytes; `dml.space_to_depth` / `dml.depth_to_space` (DirectMLX's names) and Dask; JSON's
OperatorDesc.from_dml with the Order enum; bad descriptors and calls with their messages (no read outside the input).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_depth_space
from strategies import run_one_input

import opendml as dml

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
S2D, D2S = dml.SpaceToDepthOperatorDesc, dml.DepthToSpaceOperatorDesc
S2D1, D2S1 = dml.SpaceToDepth1OperatorDesc, dml.DepthToSpace1OperatorDesc
DCR, CRD = dml.DepthSpaceOrder.DEPTH_COLUMN_ROW, dml.DepthSpaceOrder.COLUMN_ROW_DEPTH

# The pages' examples, copied by hand: the depth side {1, 8, 2, 3} and the space side {1, 2, 4, 6} in either order.
DEPTH = [[[[0, 1, 2], [3, 4, 5]], [[9, 10, 11], [12, 13, 14]], [[18, 19, 20], [21, 22, 23]],
          [[27, 28, 29], [30, 31, 32]], [[36, 37, 38], [39, 40, 41]], [[45, 46, 47], [48, 49, 50]],
          [[54, 55, 56], [57, 58, 59]], [[63, 64, 65], [66, 67, 68]]]]
SPACE_DCR = [[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
              [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]]]
SPACE_CRD = [[[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
              [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65], [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]]]
DEPTH_SIZES, SPACE_SIZES = [1, 8, 2, 3], [1, 2, 4, 6]


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: Any, x: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(the logical output, the logical input as bound) of one dispatch, between sentinel bytes."""
    return run_one_input(device(), desc, x, seed=seed)


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


# -- the pages' examples ----------------------------------------------------------------------------------------------

def test_page_examples(backend: str) -> None:
    depth = np.array(DEPTH, np.uint32)
    space = {DCR: np.array(SPACE_DCR, np.uint32), CRD: np.array(SPACE_CRD, np.uint32)}
    u = DT.UINT32
    got, _ = run(S2D(T(u, SPACE_SIZES), T(u, DEPTH_SIZES), 2), space[DCR])
    assert got.tolist() == DEPTH
    got, _ = run(D2S(T(u, DEPTH_SIZES), T(u, SPACE_SIZES), 2), depth)
    assert got.tolist() == SPACE_DCR
    for order, want in ((DCR, SPACE_DCR), (CRD, SPACE_CRD)):
        got, _ = run(S2D1(T(u, SPACE_SIZES), T(u, DEPTH_SIZES), 2, order), space[order])
        assert got.tolist() == DEPTH, order
        got, _ = run(D2S1(T(u, DEPTH_SIZES), T(u, SPACE_SIZES), 2, order), depth)
        assert got.tolist() == want, order


def test_strided_input_and_output(backend: str) -> None:
    """The page's DEPTH_TO_SPACE1 (CRD) from a depth side laid out channels-last, into a padded output."""
    depth = np.array(DEPTH, np.float32)
    desc = D2S1(T(DT.FLOAT32, DEPTH_SIZES, [48, 1, 24, 8]), T(DT.FLOAT32, SPACE_SIZES, [64, 32, 7, 1]), 2, CRD)
    got, _ = run(desc, depth)
    assert got.tolist() == SPACE_CRD


def test_64_16_and_8_bit_types(backend: str) -> None:
    """Block size 1 is the identity; block size 2 on [1, 4, 1, 1] -> [1, 1, 2, 2] reads depth 0, 1, 2, 3 row-major."""
    for data_type, values in ((DT.INT64, [2**62 + 1, -5, 7, -(2**63)]), (DT.UINT8, [250, 1, 2, 255]),
                              (DT.FLOAT16, [0.5, -1, 65504, -0.0]), (DT.FLOAT64, [0.1, 2e300, -3, 4]),
                              (DT.UINT64, [2**64 - 1, 0, 1, 2**63])):
        x = np.array(values, dtype=data_type.numpy_dtype).reshape(1, 4, 1, 1)
        got, _ = run(D2S(T(data_type, [1, 4, 1, 1]), T(data_type, [1, 1, 2, 2]), 2), x)
        assert _bits(got).reshape(-1).tolist() == _bits(x).reshape(-1).tolist(), data_type
        got, _ = run(S2D(T(data_type, [1, 1, 2, 2]), T(data_type, [1, 4, 1, 1]), 2), x.reshape(1, 1, 2, 2))
        assert _bits(got).reshape(-1).tolist() == _bits(x).reshape(-1).tolist(), data_type
        got, _ = run(S2D(T(data_type, [1, 4, 1, 1]), T(data_type, [1, 4, 1, 1]), 1), x)
        assert _bits(got).tolist() == _bits(x).tolist()


# -- support rows -----------------------------------------------------------------------------------------------------

_8 = (DT.FLOAT32, DT.FLOAT16, DT.INT32, DT.INT16, DT.INT8, DT.UINT32, DT.UINT16, DT.UINT8)


@pytest.mark.parametrize("cls, level, types", [
    (S2D, FL.LEVEL_1_0, (DT.FLOAT32, DT.FLOAT16)), (S2D, FL.LEVEL_2_1, (DT.INT32, DT.INT16, DT.INT8, DT.UINT32,
                                                                         DT.UINT16, DT.UINT8)),
    (S2D, FL.LEVEL_5_0, (DT.FLOAT64, DT.INT64, DT.UINT64)),
    (D2S, FL.LEVEL_1_0, (DT.FLOAT32, DT.FLOAT16)), (D2S, FL.LEVEL_2_1, (DT.INT32, DT.INT8, DT.UINT16)),
    (D2S, FL.LEVEL_5_0, (DT.FLOAT64, DT.INT64, DT.UINT64)),
    (S2D1, FL.LEVEL_2_1, _8), (D2S1, FL.LEVEL_2_1, _8),
])
def test_support_rows(cls: Any, level: dml.FeatureLevel, types: tuple[dml.DataType, ...]) -> None:
    """Each row's new types accepted at its level, refused (UnsupportedError) just below it; 4-D only."""
    below = max((candidate for candidate in FL if candidate < level), default=None)
    depth, space = [1, 4, 1, 1], [1, 1, 2, 2]
    source, target = (depth, space) if cls in (D2S, D2S1) else (space, depth)
    for data_type in types:
        desc = cls(T(data_type, source), T(data_type, target), 2)
        desc.validate(level)
        if below is not None:
            with pytest.raises(dml.UnsupportedError, match=f"needs feature level {level}"):
                desc.validate(below)
    if cls in (S2D1, D2S1):   # the "1" versions' page lists FL 2_1 only: FLOAT64 is not in it
        with pytest.raises(dml.ValidationError, match=r"InputTensor\.DataType FLOAT64 is not supported"):
            cls(T(DT.FLOAT64, source), T(DT.FLOAT64, target), 2).validate(TOP)
    with pytest.raises(dml.ValidationError, match="DimensionCount 5 is not supported; at feature level 6_4 it must "
                                                  "be exactly 4"):
        cls(T(DT.FLOAT32, [1, *source]), T(DT.FLOAT32, [1, *target]), 2).validate(TOP)


# -- hypothesis against the reference ---------------------------------------------------------------------------------

@st.composite
def cases(draw: st.DrawFn) -> Any:
    cls = draw(st.sampled_from([S2D, D2S, S2D1, D2S1]))
    b = draw(st.integers(1, 3))
    n, c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3))
    depth, space = [n, c * b * b, h, w], [n, c, h * b, w * b]
    source, target = (depth, space) if cls in (D2S, D2S1) else (space, depth)

    def layout(sizes: list[int]) -> list[int]:
        order = draw(st.permutations(range(4)))   # any dimension order in memory, with a gap
        strides, step = [0] * 4, draw(st.integers(1, 2))
        for dim in reversed(order):
            strides[dim] = step
            step *= sizes[dim]
        return strides

    wide = [DT.INT64] if cls in (S2D, D2S) else []   # the "1" versions' page has no 64-bit row
    data_type = draw(st.sampled_from([DT.FLOAT32, DT.UINT8, DT.FLOAT16, DT.INT32, *wide]))
    extra = (draw(st.sampled_from([DCR, CRD])),) if cls in (S2D1, D2S1) else ()
    desc = cls(T(data_type, source, layout(source)), T(data_type, target, layout(target)), b, *extra)
    return desc, draw(st.integers(0, 10))


@settings(max_examples=15, deadline=None)
@given(case=cases())
def test_matches_the_reference(backend: str, case: Any) -> None:
    """Any block size, order and layout of input and output, between sentinel bytes."""
    desc, seed = case
    desc.validate(TOP)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 200, desc.input_tensor.sizes).astype(desc.input_tensor.data_type.numpy_dtype)
    got, logical = run(desc, x, seed=seed)
    assert np.array_equal(_bits(got), _bits(reference_depth_space(logical, desc))), desc


# -- graph, Dask, JSON ------------------------------------------------------------------------------------------------

def test_graph_and_dask(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input(SPACE_SIZES, "UINT32", name="x")
    depth = dml.space_to_depth(x, 2, CRD)
    back = dml.depth_to_space(depth, 2, "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH")
    plain = dml.depth_to_space(dml.space_to_depth(x, 2), 2)
    assert depth.sizes == tuple(DEPTH_SIZES) and back.sizes == tuple(SPACE_SIZES)
    values = np.array(SPACE_CRD, np.uint32)
    got = g.compile([depth, back, plain])({"x": values})
    assert [np.asarray(a).tolist() for a in got] == [DEPTH, SPACE_CRD, SPACE_CRD]
    da = pytest.importorskip("dask.array")
    got = g.compile([depth, back, plain])({"x": da.from_array(values, chunks=(1, 1, 3, 4))})
    assert [a.compute().tolist() for a in got] == [DEPTH, SPACE_CRD, SPACE_CRD]
    assert got[0].chunks[1] == (8,)


def test_from_dml_reads_the_order() -> None:
    space, depth = {"DataType": "FLOAT32", "Sizes": SPACE_SIZES}, {"DataType": "FLOAT32", "Sizes": DEPTH_SIZES}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_SPACE_TO_DEPTH1", {
        "InputTensor": space, "OutputTensor": depth, "BlockSize": 2, "Order": "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH"})
    assert desc == S2D1(T(DT.FLOAT32, SPACE_SIZES), T(DT.FLOAT32, DEPTH_SIZES), 2, CRD)
    desc = dml.OperatorDesc.from_dml("DEPTH_TO_SPACE", {"InputTensor": depth, "OutputTensor": space, "BlockSize": 2})
    assert desc == D2S(T(DT.FLOAT32, DEPTH_SIZES), T(DT.FLOAT32, SPACE_SIZES), 2)
    with pytest.raises(dml.DmlError, match=r"Order"):
        dml.OperatorDesc.from_dml("DEPTH_TO_SPACE1", {"InputTensor": depth, "OutputTensor": space, "BlockSize": 2,
                                                      "Order": "DCR"})


# -- messages ---------------------------------------------------------------------------------------------------------

def test_messages() -> None:
    f = DT.FLOAT32
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DEPTH_TO_SPACE: OutputTensor.Sizes is \[1, 2, 4, 5\]; "
                                                  r"it must be \[1, 2, 4, 6\] \(InputTensor.Sizes \[1, 8, 2, 3\], "
                                                  r"BlockSize 2\)"):
        D2S(T(f, DEPTH_SIZES), T(f, [1, 2, 4, 5]), 2).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DEPTH_TO_SPACE1: BlockSize is 3; "
                                                  r"InputTensor.Sizes\[1\] \(8\) must be a multiple of BlockSize x "
                                                  r"BlockSize \(9\)"):
        D2S1(T(f, DEPTH_SIZES), T(f, SPACE_SIZES), 3).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SPACE_TO_DEPTH: BlockSize is 4; "
                                                  r"InputTensor.Sizes\[2\] and \[3\] \(4, 6\) must be multiples of "
                                                  r"BlockSize \(4\)"):
        S2D(T(f, SPACE_SIZES), T(f, DEPTH_SIZES), 4).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SPACE_TO_DEPTH1: BlockSize is 0; it must be at "
                                                  r"least 1"):
        S2D1(T(f, SPACE_SIZES), T(f, SPACE_SIZES), 0).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.DataType is INT32; it must equal "
                                                  r"InputTensor.DataType \(FLOAT32\)"):
        S2D(T(f, SPACE_SIZES), T(DT.INT32, DEPTH_SIZES), 2).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SPACE_TO_DEPTH1: Order is 'DCR'"):
        S2D1(T(f, SPACE_SIZES), T(f, DEPTH_SIZES), 2, "DCR")
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DEPTH_TO_SPACE: BlockSize is -1"):
        D2S(T(f, DEPTH_SIZES), T(f, SPACE_SIZES), -1)
    g = dml.Graph(device())
    with pytest.raises(dml.ValidationError, match=r"dml.depth_to_space: block_size is 3; x's sizes \[1, 8, 2, 3\] "
                                                  r"must be divisible along the channels by block_size\^2"):
        dml.depth_to_space(g.input(DEPTH_SIZES, "FLOAT32"), 3)
    with pytest.raises(dml.ValidationError, match=r"dml.space_to_depth: x has 3 dimensions \(\[2, 4, 6\]\); it must "
                                                  r"have 4"):
        dml.space_to_depth(g.input([2, 4, 6], "FLOAT32"), 2)
    with pytest.raises(dml.ValidationError, match=r"dml.space_to_depth: block_size is 0"):
        dml.space_to_depth(g.input(SPACE_SIZES, "FLOAT32"), 0)
    with pytest.raises(dml.ValidationError, match=r"dml.space_to_depth: order is 'DCR'"):
        dml.space_to_depth(g.input(SPACE_SIZES, "FLOAT32"), 2, "DCR")
