"""SCATTER_ELEMENTS (alias SCATTER) and SCATTER_ND (ops/scatter.py, issue 28) on every backend.

The pages' examples copied by hand; repeated indices (the last update in row-major order wins), negative indices
from the end, out-of-range ones skipped, and refused by a debug device with the original position and value before
anything is written; every support row at its level (and refused below it); data and index types against the
independent reference (tests/reference.py) with strided and zero-strided tensors between sentinel bytes; the graph
API, Dask chunks and the JSON reader; bad descriptors with their messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_scatter_elements, reference_scatter_nd
from strategies import build_buffer, execute_between_sentinels, read_buffer, strides_for
from test_elementwise_samples import _cli

import opendml as dml
from opendml.ops.scatter import SCATTER_ELEMENTS_SUPPORT, SCATTER_ND_SUPPORT

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, F16, U32, I32, I64, U64 = DT.FLOAT32, DT.FLOAT16, DT.UINT32, DT.INT32, DT.INT64, DT.UINT64
SE, SND = dml.ScatterElementsOperatorDesc, dml.ScatterNdOperatorDesc


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP, debug: bool = False) -> dml.Device:
    return dml.Device(feature_level=level, debug=debug)


def run(desc: Any, x: Any, indices: Any, updates: Any, *, level: dml.FeatureLevel = TOP, debug: bool = False,
        bound: list[np.ndarray] | None = None) -> np.ndarray:
    """The logical output of one dispatch, the output bound between sentinel bytes (checked unchanged); `bound`
    receives the logical inputs as bound (a zero stride keeps one of the elements it folds)."""
    dev = device(level, debug)
    compiled = dev.compile_operator(dev.create_operator(desc))
    tensors = (desc.input_tensor, desc.indices_tensor, desc.updates_tensor)
    raws = [build_buffer(np.asarray(data, tensor.data_type.numpy_dtype), tensor.strides, byte_offset=16 * (1 + i))
            for i, (data, tensor) in enumerate(zip((x, indices, updates), tensors, strict=True))]
    if bound is not None:
        bound += [read_buffer(raw, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides, byte_offset=16 * (1 + i))
                  for i, (raw, tensor) in enumerate(zip(raws, tensors, strict=True))]
    out = desc.output_tensor
    got = execute_between_sentinels(dev, compiled, raws, out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=1, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=64)


# -- the pages' examples --------------------------------------------------------------------------------------------

def test_scatter_page_examples(backend: str) -> None:
    # Example 1: indices 3 and 3 again: the later update (7) wins, as the page's output says.
    assert run(SE(T(F32, [5]), T(U32, [4]), T(F32, [4]), T(F32, [5]), 0), [0, 1, 2, 3, 4], [3, 1, 3, 0],
               [5, 6, 7, 8]).tolist() == [8, 6, 2, 7, 4]
    # Example 2 (the page says InputTensor {2,3} but shows, and outputs, a 3 x 3 input).
    assert run(SE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [2, 3]), T(F32, [3, 3]), 0), np.zeros((3, 3)),
               [[1, 0, 2], [0, 2, 1]], [[10, 11, 12], [20, 21, 22]]).tolist() == \
        [[20, 11, 0], [10, 0, 22], [0, 21, 12]]


def test_scatter_nd_page_example(backend: str) -> None:
    # The page's tensors with their leading 1s (README, Rulings: one DimensionCount; its indices are UINT32).
    assert run(SND(T(F32, [1, 8]), T(U32, [4, 1]), T(F32, [1, 4]), T(F32, [1, 8]), 1, 2), [[1, 2, 3, 4, 5, 6, 7, 8]],
               [[4], [3], [1], [7]], [[9, 10, 11, 12]]).tolist() == [[1, 11, 3, 10, 9, 6, 7, 12]]


def test_scatter_nd_rows_and_tuples(backend: str) -> None:
    table = np.arange(12).reshape(4, 3)
    # Rows: tuple [2] twice (the later, [40, 41, 42], wins), -1 is the last row, 4 is out of range: skipped.
    assert run(SND(T(F32, [4, 3]), T(I64, [4, 1]), T(F32, [4, 3]), T(F32, [4, 3]), 2, 2), table,
               [[2], [-1], [4], [2]], [[20, 21, 22], [30, 31, 32], [99, 99, 99], [40, 41, 42]]).tolist() == \
        [[0, 1, 2], [3, 4, 5], [40, 41, 42], [30, 31, 32]]
    # Two-coordinate tuples: elements (0, 2) and (3, -3) = (3, 0); (1, 3) is out of range along dimension 1.
    assert run(SND(T(DT.INT16, [4, 3]), T(I32, [3, 2]), T(DT.INT16, [1, 3]), T(DT.INT16, [4, 3]), 2, 2), table,
               [[0, 2], [3, -3], [1, 3]], [[-5, -6, -7]]).tolist() == \
        [[0, 1, -5], [3, 4, 5], [6, 7, 8], [-6, 10, 11]]


# -- indices: from the end, skipped, repeated, refused by a debug device -------------------------------------------

def test_negative_out_of_range_and_repeated_indices(backend: str) -> None:
    x = np.arange(1, 10).reshape(3, 3)
    # Axis 1: row 0 writes columns -1 = 2 then 2 again (the later, 20, wins); row 1's 3 and -4 are skipped; row 2
    # writes column 0.
    assert run(SE(T(F32, [3, 3]), T(I64, [3, 2]), T(F32, [3, 2]), T(F32, [3, 3]), 1), x,
               [[-1, 2], [3, -4], [0, -3]], [[10, 20], [30, 40], [50, 60]]).tolist() == \
        [[1, 2, 20], [4, 5, 6], [60, 8, 9]]
    # A UINT64 of 2^63 and more is too large (skipped), not negative.
    assert run(SE(T(DT.UINT8, [3]), T(U64, [3]), T(DT.UINT8, [3]), T(DT.UINT8, [3]), 0), [1, 2, 3],
               [2 ** 63, 1, 2 ** 64 - 1], [7, 8, 9]).tolist() == [1, 8, 3]


def test_repeated_indices_give_the_last_update_on_every_run(backend: str) -> None:
    # 64 updates into 4 elements of an 8-bit output: neighbours share 32-bit words; the last of each wins.
    indices = np.arange(64) % 4
    updates = np.arange(64)
    desc = SE(T(DT.UINT8, [4]), T(U32, [64]), T(DT.UINT8, [64]), T(DT.UINT8, [4]), 0)
    for _ in range(3):
        assert run(desc, [200, 201, 202, 203], indices, updates).tolist() == [60, 61, 62, 63]


def test_debug_device_refuses_out_of_range_indices(backend: str) -> None:
    x = np.arange(1, 10).reshape(3, 3)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_SCATTER_ELEMENTS: IndicesTensor\[2, 1\] is 3, out of "
                                               r"range: it indexes OutputTensor dimension 1 \(Axis, size 3\), so it "
                                               r"must be in \[-3, 2\]; the debug device refuses it \(a release device "
                                               r"skips its update\), and nothing was written"):
        run(SE(T(F32, [3, 3]), T(I32, [3, 2]), T(F32, [3, 2]), T(F32, [3, 3]), 1), x,
            [[0, -1], [1, 2], [-3, 3]], np.zeros((3, 2)), debug=True)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_SCATTER_ND: IndicesTensor\[1, 1\] is 4, out of range: "
                                               r"coordinate 1 of its tuple indexes OutputTensor dimension 1 \(size "
                                               r"3\), so it must be in \[0, 2\]"):
        run(SND(T(F32, [4, 3]), T(U32, [2, 2]), T(F32, [1, 2]), T(F32, [4, 3]), 2, 2), np.zeros((4, 3)),
            [[0, 0], [3, 4]], [[5, 6]], debug=True)
    # Merged dimensions in the plan: the refusal still names the original position.
    with pytest.raises(dml.BindingError, match=r"SCATTER_ELEMENTS: IndicesTensor\[1, 0, 2\] is 5, out of range"):
        run(SE(T(F32, [2, 3, 4]), T(U32, [2, 1, 4]), T(F32, [2, 1, 4]), T(F32, [2, 3, 4]), 1), np.zeros((2, 3, 4)),
            [[[0, 1, 2, 0]], [[1, 1, 5, 0]]], np.ones((2, 1, 4)), debug=True)
    # In range, the debug device gives the release device's result.
    assert run(SE(T(F32, [3, 3]), T(I32, [1, 3]), T(F32, [1, 3]), T(F32, [3, 3]), 0), x, [[-1, 0, 1]],
               [[70, 80, 90]], debug=True).tolist() == [[1, 80, 3], [4, 5, 90], [70, 8, 9]]


def test_a_refused_dispatch_writes_nothing(backend: str) -> None:
    dev = device(debug=True)
    desc = SND(T(F32, [4, 2]), T(I64, [2, 1]), T(F32, [2, 2]), T(F32, [4, 2]), 2, 2)
    compiled = dev.compile_operator(dev.create_operator(desc))
    out = np.full((4, 2), 7, np.float32)
    with pytest.raises(dml.BindingError, match=r"IndicesTensor\[1, 0\] is -5, out of range"):
        compiled.execute([dml.Binding(np.zeros((4, 2), np.float32)), dml.Binding(np.array([[1], [-5]])),
                          dml.Binding(np.ones((2, 2), np.float32))], [dml.Binding(out)])
    assert (out == 7).all()


# -- every type against the reference, strides ----------------------------------------------------------------------

TYPES = [DT.FLOAT64, DT.FLOAT16, DT.INT64, DT.INT8, DT.UINT16, DT.UINT64, F32, DT.UINT8]
INDEX_TYPES = [I64, I32, U64, U32]


def _data(data_type: dml.DataType, shape: Sequence[int], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 100, size=tuple(shape)).astype(data_type.numpy_dtype)


def _indices(index_type: dml.DataType, shape: Sequence[int], size: int, seed: int) -> np.ndarray:
    low = -size - 2 if index_type in (I32, I64) else 0
    return np.random.default_rng(seed + 1).integers(low, size + 2, size=tuple(shape)).astype(index_type.numpy_dtype)


def _strided(sizes: Sequence[int], kind: int) -> list[int] | None:
    """Packed (0), transposed (1: the first two dimensions swapped, packed), or padded rows (2)."""
    if kind == 0 or len(sizes) < 2:
        return None
    strides = [1] * len(sizes)
    order = [1, 0, *range(2, len(sizes))] if kind == 1 else list(range(len(sizes)))
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= sizes[dim] + (1 if kind == 2 and dim == order[-1] else 0)
    return strides


#: (input sizes, Axis, the indices' size along Axis).
ELEMENTS_CASES = [((6,), 0, 9), ((3, 4), 1, 5), ((4, 3), 0, 2), ((2, 3, 4), 2, 3), ((1, 5, 2), 1, 7),
                  ((2, 2, 3, 2), 0, 3), ((3, 2), 1, 1), ((3, 3, 2), 0, 4)]


@pytest.mark.parametrize("case", range(len(ELEMENTS_CASES)))
def test_scatter_elements_against_reference(case: int, backend: str) -> None:
    data_type, index_type = TYPES[case % len(TYPES)], INDEX_TYPES[case % 4]
    shape, axis, along = ELEMENTS_CASES[case]
    ix_shape = [along if dim == axis else size for dim, size in enumerate(shape)]
    x, updates = _data(data_type, shape, case), _data(data_type, ix_shape, case + 50)
    indices = _indices(index_type, ix_shape, shape[axis], case)
    kind = case % 3
    desc = SE(T(data_type, shape, _strided(shape, kind)), T(index_type, ix_shape, _strided(ix_shape, 2 - kind)),
              T(data_type, ix_shape, _strided(ix_shape, (kind + 1) % 3)), T(data_type, shape, _strided(shape, 1)),
              axis)
    expected, _ = reference_scatter_elements(x, indices, updates, axis)
    assert run(desc, x, indices, updates).tobytes() == expected.tobytes()


#: (input sizes, InputDimensionCount, the indices' meaningful sizes): K from 1 to I.
ND_CASES = [((6, 4), 2, (5, 1)), ((1, 4, 3), 2, (2, 2)), ((3, 2, 4), 3, (2, 1, 2)), ((2, 3, 2), 3, (4, 3)),
            ((1, 1, 5), 1, (1, 3, 1)), ((4, 2, 2), 3, (3, 2)), ((1, 5, 3), 2, (4, 2)), ((2, 4), 2, (1,))]


@pytest.mark.parametrize("case", range(len(ND_CASES)))
def test_scatter_nd_against_reference(case: int, backend: str) -> None:
    data_type, index_type = TYPES[(case + 3) % len(TYPES)], INDEX_TYPES[(case + 1) % 4]
    shape, input_count, meaningful = ND_CASES[case]
    rank = len(shape)
    ix_shape = [1] * (rank - len(meaningful)) + list(meaningful)
    count = meaningful[-1]
    blocks = [*meaningful[:-1], *shape[rank - input_count + count:]]
    up_shape = [1] * (rank - len(blocks)) + blocks
    x, updates = _data(data_type, shape, case), _data(data_type, up_shape, case + 50)
    size = max(shape[rank - input_count: rank - input_count + count])
    indices = _indices(index_type, ix_shape, size, case)
    kind = case % 3
    desc = SND(T(data_type, shape, _strided(shape, kind)), T(index_type, ix_shape, _strided(ix_shape, 2 - kind)),
               T(data_type, up_shape, _strided(up_shape, (kind + 1) % 3)), T(data_type, shape, _strided(shape, 2)),
               input_count, len(meaningful))
    expected, _ = reference_scatter_nd(x, indices, updates, input_count, len(meaningful))
    assert run(desc, x, indices, updates).tobytes() == expected.tobytes()


def test_large_output_rows(backend: str) -> None:
    """An output above the cpu kernel's streaming threshold (4 MiB: non-temporal stores, runs of unmarked rows as one
    copy), bound at an offset between sentinels; a repeated row, a row from the end, one out of range."""
    rows = 16400
    x = np.arange(rows * 64, dtype=np.float32).reshape(rows, 64)
    indices = np.array([[5], [rows - 1], [-2], [rows], [5], [8000]])
    updates = -np.arange(6 * 64, dtype=np.float32).reshape(6, 64) - 1
    expected = x.copy()
    for index, update in zip(indices[:, 0], updates, strict=True):
        if -rows <= index < rows:
            expected[index] = update
    desc = SND(T(F32, [rows, 64]), T(I64, [6, 1]), T(F32, [6, 64]), T(F32, [rows, 64]), 2, 2)
    assert np.array_equal(run(desc, x, indices, updates), expected)


def test_large_output_elements(backend: str) -> None:
    """SCATTER_ELEMENTS into an output of 1 MiB or more (the cpu kernel's batches split over threads, each row copied
    then updated in order); repeated, negative and out-of-range indices. The expected rows from each index's last
    occurrence (np.unique over the reversed row)."""
    rows, columns, count = 256, 1100, 1500
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1000, (rows, columns)).astype(np.float32)
    indices = rng.integers(-columns - 50, columns + 50, (rows, count))
    updates = -rng.integers(1, 1000, (rows, count)).astype(np.float32)
    expected = x.copy()
    for row in range(rows):
        positions = np.where(indices[row] < 0, indices[row] + columns, indices[row])
        valid = np.flatnonzero((positions >= 0) & (positions < columns))
        found, last = np.unique(positions[valid][::-1], return_index=True)
        expected[row, found] = updates[row, valid[::-1][last]]
    desc = SE(T(F32, [rows, columns]), T(I64, [rows, count]), T(F32, [rows, count]), T(F32, [rows, columns]), 1)
    assert np.array_equal(run(desc, x, indices, updates), expected)


def test_zero_strides(backend: str) -> None:
    # The input one row broadcast (stride 0), the indices one column per row broadcast, the updates one element.
    desc = SE(T(F32, [4, 3], [0, 1]), T(I32, [2, 3], [1, 0]), T(F32, [2, 3], [0, 0]), T(F32, [4, 3]), 0)
    got = run(desc, [[1, 2, 3]] * 4, [[3, 3, 3], [-4, -4, -4]], np.full((2, 3), 9))
    assert got.tolist() == [[9, 9, 9], [1, 2, 3], [1, 2, 3], [9, 9, 9]]


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_hypothesis_scatter_elements(data: st.DataObject, backend: str) -> None:
    """Random ranks, sizes, Axis, strides (zero ones too), index types and values (negative, out of range, repeated)
    against the reference."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    axis = data.draw(st.integers(0, len(shape) - 1))
    index_type = data.draw(st.sampled_from(INDEX_TYPES))
    ix_shape = [data.draw(st.integers(1, 5)) if dim == axis else size for dim, size in enumerate(shape)]
    count = int(np.prod(ix_shape))
    low = -6 if index_type in (I32, I64) else 0
    ix = np.array(data.draw(st.lists(st.integers(low, 6), min_size=count, max_size=count)))
    ix = ix.astype(index_type.numpy_dtype).reshape(ix_shape)
    x, updates = _data(DT.INT16, shape, 7), _data(DT.INT16, ix_shape, 8) + 100
    desc = SE(T(DT.INT16, shape, data.draw(strides_for(shape))),
              T(index_type, ix_shape, data.draw(strides_for(ix_shape))), T(DT.INT16, ix_shape, data.draw(strides_for(
                  ix_shape))),
              T(DT.INT16, shape, data.draw(strides_for(shape, allow_zero=False))), axis)
    bound: list[np.ndarray] = []
    got = run(desc, x, ix, updates, bound=bound)
    assert np.array_equal(got, reference_scatter_elements(*bound, axis)[0])


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_hypothesis_scatter_nd(data: st.DataObject, backend: str) -> None:
    """Random meaningful sizes, tuple sizes, strides (zero ones too) and coordinates (negative, out of range,
    repeated) against the reference."""
    table = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    count = data.draw(st.integers(1, len(table)))
    positions = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=3 - len(table[count:])))
    rank = max(len(table), len(positions) + 1, len(positions) + len(table) - count)
    shape = [1] * (rank - len(table)) + table
    ix_shape = [1] * (rank - len(positions) - 1) + positions + [count]
    blocks = positions + table[count:]
    up_shape = [1] * (rank - len(blocks)) + blocks
    index_type = data.draw(st.sampled_from(INDEX_TYPES))
    low = -5 if index_type in (I32, I64) else 0
    ix = np.array(data.draw(st.lists(st.integers(low, 5), min_size=int(np.prod(ix_shape)),
                                     max_size=int(np.prod(ix_shape)))))
    ix = ix.astype(index_type.numpy_dtype).reshape(ix_shape)
    x, updates = _data(DT.UINT8, shape, 3), _data(DT.UINT8, up_shape, 4) + 100
    desc = SND(T(DT.UINT8, shape, data.draw(strides_for(shape))), T(index_type, ix_shape, data.draw(strides_for(
        ix_shape))), T(DT.UINT8, up_shape, data.draw(strides_for(up_shape))),
        T(DT.UINT8, shape, data.draw(strides_for(shape, allow_zero=False))), len(table), len(positions) + 1)
    bound: list[np.ndarray] = []
    got = run(desc, x, ix, updates, bound=bound)
    assert np.array_equal(got, reference_scatter_nd(*bound, len(table), len(positions) + 1)[0])


# -- support rows ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, cls", [(SCATTER_ELEMENTS_SUPPORT, SE), (SCATTER_ND_SUPPORT, SND)])
def test_support_rows(table: Any, cls: Any, backend: str) -> None:
    """Each row's types and largest rank at its level: the last index of [5, 6, 7] twice, the first skipped."""
    for entry in table:
        level = entry.level
        data_type = sorted(entry.tensors["InputTensor"].data_types, key=lambda t: t.value)[0]
        index_type = sorted(entry.tensors["IndicesTensor"].data_types, key=lambda t: t.value)[-1]
        rank = entry.tensors["InputTensor"].max_rank
        shape = [1] * (rank - 1) + [3]
        if cls is SE:
            desc = SE(T(data_type, shape), T(index_type, shape), T(data_type, shape), T(data_type, shape), rank - 1)
            indices = np.array([2, 9, 2]).reshape(shape)
        else:
            ix_shape = [1] * (rank - 2) + [3, 1]
            desc = SND(T(data_type, shape), T(index_type, ix_shape), T(data_type, shape), T(data_type, shape), 1, 2)
            indices = np.array([2, 9, 2]).reshape(ix_shape)
        got = run(desc, np.array([5, 6, 7]).reshape(shape), indices, np.array([1, 2, 3]).reshape(shape), level=level)
        assert got.reshape(-1).tolist() == [5, 6, 3]
    shape = [1, 1, 1, 3]
    if cls is SND:   # the operator starts at 2_1
        with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_SCATTER_ND needs feature level 2_1; the "
                                                       r"device is at 2_0"):
            device(FL.LEVEL_2_0).create_operator(SND(T(F32, shape), T(U32, [1, 1, 3, 1]), T(F32, shape),
                                                     T(F32, shape), 1, 2))
    else:   # SCATTER's 1_0 row: FLOAT32 and FLOAT16 only
        with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_SCATTER_ELEMENTS: InputTensor.DataType INT32 "
                                                       r"needs feature level 2_1; the device is at 2_0"):
            device(FL.LEVEL_2_0).create_operator(SE(T(I32, shape), T(U32, shape), T(I32, shape), T(I32, shape), 3))
    with pytest.raises(dml.UnsupportedError, match=r"IndicesTensor.DataType INT64 needs feature level 3_0"):
        device(FL.LEVEL_2_1).create_operator(SE(T(F32, shape), T(I64, shape), T(F32, shape), T(F32, shape), 3))


# -- messages -------------------------------------------------------------------------------------------------------

MESSAGES = [
    (lambda: SE(T(F32, [3, 2]), T(U32, [3, 2]), T(F32, [3, 2]), T(F32, [3, 2]), 2),
     r"DML_OPERATOR_SCATTER_ELEMENTS: Axis is 2; it must be in \[0, 1\]"),
    (lambda: SE(T(F32, [3, 3]), T(U32, [2, 2]), T(F32, [2, 2]), T(F32, [3, 3]), 0),
     r"IndicesTensor.Sizes\[1\] is 2; it must equal InputTensor.Sizes\[1\] \(3\)"),
    (lambda: SE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [3, 3]), T(F32, [3, 3]), 0),
     r"UpdatesTensor.Sizes is \[3, 3\]; it must equal IndicesTensor.Sizes \(\[2, 3\]\)"),
    (lambda: SE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [2, 3]), T(F32, [2, 3]), 0),
     r"DML_OPERATOR_SCATTER_ELEMENTS: OutputTensor.Sizes is \[2, 3\]; it must equal InputTensor.Sizes \(\[3, 3\]\)"),
    (lambda: SE(T(F32, [3]), T(U32, [3]), T(F16, [3]), T(F32, [3]), 0),
     r"UpdatesTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    (lambda: SE(T(F32, [3]), T(U32, [3]), T(F32, [3]), T(I32, [3]), 0),
     r"OutputTensor.DataType is INT32; it must equal InputTensor.DataType \(FLOAT32\)"),
    (lambda: SE(T(F32, [3, 1]), T(U32, [3]), T(F32, [3]), T(F32, [3, 1]), 0),
     r"IndicesTensor.DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    (lambda: SE(T(F32, [3]), T(F32, [3]), T(F32, [3]), T(F32, [3]), 0),
     r"SCATTER_ELEMENTS: IndicesTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 1]), T(F32, [2, 3]), T(F32, [4, 3]), 3, 2),
     r"DML_OPERATOR_SCATTER_ND: InputDimensionCount is 3; it must be in \[1, 2\] \(InputTensor.DimensionCount\)"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 1]), T(F32, [2, 3]), T(F32, [4, 3]), 2, 0),
     r"IndicesDimensionCount is 0; it must be in \[1, 2\]"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 1]), T(F32, [2, 3]), T(F32, [4, 3]), 1, 2),
     r"InputTensor.Sizes\[0\] is 4; with InputDimensionCount 1 its leading 1 dimension\(s\) are irrelevant"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 3]), T(F32, [1, 2]), T(F32, [4, 3]), 2, 2),
     r"IndicesTensor.Sizes\[1\] \(the index tuple size\) is 3; it must be in \[1, 2\] \(InputDimensionCount\)"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 1]), T(F32, [2, 4]), T(F32, [4, 3]), 2, 2),
     r"UpdatesTensor.Sizes is \[2, 4\]; it must be \[2, 3\] \(IndicesTensor's meaningful sizes but the last"),
    (lambda: SND(T(F32, [4, 3]), T(U32, [2, 1]), T(F32, [2, 3]), T(F32, [4, 4]), 2, 2),
     r"DML_OPERATOR_SCATTER_ND: OutputTensor.Sizes is \[4, 4\]; it must equal InputTensor.Sizes"),
]


@pytest.mark.parametrize("case", range(len(MESSAGES)))
def test_messages(case: int) -> None:
    make, message = MESSAGES[case]
    with pytest.raises(dml.ValidationError, match=message):
        device().create_operator(make())


def test_field_messages() -> None:
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SCATTER_ELEMENTS: Axis is -1"):
        SE(T(F32, [3]), T(U32, [3]), T(F32, [3]), T(F32, [3]), -1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SCATTER_ND: UpdatesTensor is None; it must be a "
                                                   r"TensorDesc"):
        SND(T(F32, [3]), T(U32, [1]), None, T(F32, [3]), 1, 1)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_SCATTER_ND: IndicesDimensionCount is 'x'"):
        SND(T(F32, [3]), T(U32, [1]), T(F32, [1]), T(F32, [3]), 1, "x")  # type: ignore[arg-type]


# -- graph, Dask, JSON ----------------------------------------------------------------------------------------------

def _graph_case(g: dml.Graph) -> tuple[list[dml.Expression], dict[str, np.ndarray]]:
    x = g.input([4, 5, 3], F32, name="x")
    e = g.input([4, 2, 3], I32, name="e")
    u = g.input([4, 2, 3], F32, name="u")
    r = g.input([1, 3, 1], I64, name="r")
    b = g.input([3, 5, 3], F32, name="b")
    outputs = [dml.scatter_elements(x, e, u, 1), dml.scatter_nd(x, r, b, 3, 2)]
    data = np.arange(60, dtype=np.float32).reshape(4, 5, 3)
    feeds = {"x": data, "e": _indices(I32, [4, 2, 3], 5, 3), "u": -_data(F32, [4, 2, 3], 1) - 1,
             "r": np.array([[[2], [-1], [2]]]), "b": -np.arange(45, dtype=np.float32).reshape(3, 5, 3) - 100}
    return outputs, feeds


def test_graph_functions(backend: str) -> None:
    g = dml.Graph(device())
    outputs, feeds = _graph_case(g)
    assert [o.sizes for o in outputs] == [(4, 5, 3), (4, 5, 3)]
    got = g.compile(outputs)(feeds)
    assert np.array_equal(np.asarray(got[0]), reference_scatter_elements(feeds["x"], feeds["e"], feeds["u"], 1)[0])
    assert np.array_equal(np.asarray(got[1]), reference_scatter_nd(feeds["x"], feeds["r"], feeds["b"], 3, 2)[0])
    assert dml.ScatterOperatorDesc is dml.ScatterElementsOperatorDesc


def test_dask_chunks(backend: str) -> None:
    """Chunked arrays give the device's results: updates applied per output chunk."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    outputs, feeds = _graph_case(g)
    compiled = g.compile(outputs)
    on_device = compiled(feeds)
    chunks = {"x": (3, 2, 2), "e": (3, 1, 2), "u": (1, 2, 2), "r": (1, 2, 1), "b": (2, 3, 2)}
    on_dask = compiled({name: da.from_array(array, chunks=chunks[name]) for name, array in feeds.items()})
    for one, chunked in zip(on_device, on_dask, strict=True):
        assert np.array_equal(np.asarray(one), chunked.compute())


def test_json_reader() -> None:
    fields = {"InputTensor": {"DataType": "FLOAT32", "Sizes": [5]}, "IndicesTensor": {"DataType": "UINT32",
                                                                                     "Sizes": [4]},
              "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": [4]},
              "OutputTensor": {"DataType": "FLOAT32", "Sizes": [5]}, "Axis": 0}
    expected = SE(T(F32, [5]), T(U32, [4]), T(F32, [4]), T(F32, [5]), 0)
    assert dml.OperatorDesc.from_dml("DML_OPERATOR_SCATTER", fields) == expected     # DML's alias
    assert dml.OperatorDesc.from_dml("DML_OPERATOR_SCATTER_ELEMENTS", fields) == expected
    desc = dml.OperatorDesc.from_dml("SCATTER_ND", {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 8]}, "IndicesTensor": {"DataType": "UINT32",
                                                                                  "Sizes": [4, 1]},
        "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": [1, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 8]}, "InputDimensionCount": 1,
        "IndicesDimensionCount": 2})
    assert desc == SND(T(F32, [1, 8]), T(U32, [4, 1]), T(F32, [1, 4]), T(F32, [1, 8]), 1, 2)


MODEL = {
    "resources": {
        "X": {"initialValuesDataType": "FLOAT32", "initialValues": [0, 1, 2, 3, 4]},
        "I": {"initialValuesDataType": "UINT32", "initialValues": [3, 1, 3, 0]},
        "U": {"initialValuesDataType": "FLOAT32", "initialValues": [5, 6, 7, 8]},
        "Y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 5, "value": 0}},
        "T": {"initialValuesDataType": "INT32", "initialValues": [1, 2, 3, 4, 5, 6, 7, 8]},
        "R": {"initialValuesDataType": "INT64", "initialValues": [4, 3, 1, -1]},
        "V": {"initialValuesDataType": "INT32", "initialValues": [9, 10, 11, 12]},
        "Z": {"initialValuesDataType": "INT32", "initialValues": {"valueCount": 8, "value": 0}},
    },
    "dispatchables": {
        "scatter": {"type": "DML_OPERATOR_SCATTER", "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [5]}, "IndicesTensor": {"DataType": "UINT32", "Sizes": [4]},
            "UpdatesTensor": {"DataType": "FLOAT32", "Sizes": [4]}, "OutputTensor": {"DataType": "FLOAT32",
                                                                                    "Sizes": [5]}, "Axis": 0}},
        "scatter_nd": {"type": "DML_OPERATOR_SCATTER_ND", "desc": {
            "InputTensor": {"DataType": "INT32", "Sizes": [1, 8]}, "IndicesTensor": {"DataType": "INT64",
                                                                                    "Sizes": [4, 1]},
            "UpdatesTensor": {"DataType": "INT32", "Sizes": [1, 4]}, "OutputTensor": {"DataType": "INT32",
                                                                                     "Sizes": [1, 8]},
            "InputDimensionCount": 1, "IndicesDimensionCount": 2}},
    },
    "commands": [
        {"type": "dispatch", "dispatchable": "scatter",
         "bindings": {"InputTensor": "X", "IndicesTensor": "I", "UpdatesTensor": "U", "OutputTensor": "Y"}},
        {"type": "dispatch", "dispatchable": "scatter_nd",
         "bindings": {"InputTensor": "T", "IndicesTensor": "R", "UpdatesTensor": "V", "OutputTensor": "Z"}},
        {"type": "print", "resource": "Y"}, {"type": "print", "resource": "Z"}],
}


def test_a_json_model_through_the_cli(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SCATTER (DML's alias) with its page's Example 1, and SCATTER_ND with its page's example (INT64 indices, the
    last one -1: the last element) as a DxDispatch model."""
    model = tmp_path / "scatter.json"
    model.write_text(json.dumps(MODEL))
    status, out, err = _cli(capsys, "dispatch", "--backend", backend, model)
    assert (status, err) == (0, [])
    assert out == ["Resource 'Y': 8, 6, 2, 7, 4", "Resource 'Z': 1, 11, 3, 10, 9, 6, 7, 12"]
