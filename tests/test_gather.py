"""GATHER and GATHER_ELEMENTS (ops/gather.py, issue 28) on every backend: GATHER_ND1's kernels over re-strided views.

The pages' examples copied by hand; both operators' support rows at their levels (and refused below them); every
data and index type against an independent reference (NumPy's take / take_along_axis on indices wrapped and clamped
by hand); negative indices from the end, out-of-range ones clamped, and refused by a debug device with the original
position and value before anything is written; strided inputs and outputs between sentinel bytes; the graph API,
Dask chunks and the JSON reader; bad descriptors with their messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_gather, reference_gather_elements
from strategies import build_buffer, execute_between_sentinels, read_buffer

import opendml as dml
from opendml.ops.gather import GATHER_ELEMENTS_SUPPORT, GATHER_SUPPORT

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, U32, I32, I64, U64 = DT.FLOAT32, DT.UINT32, DT.INT32, DT.INT64, DT.UINT64
G, GE = dml.GatherOperatorDesc, dml.GatherElementsOperatorDesc


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP, debug: bool = False) -> dml.Device:
    return dml.Device(feature_level=level, debug=debug)


def run(desc: Any, x: np.ndarray, indices: np.ndarray, *, level: dml.FeatureLevel = TOP, debug: bool = False
        ) -> np.ndarray:
    """The logical output of one dispatch, the output bound between sentinel bytes (checked unchanged)."""
    dev = device(level, debug)
    compiled = dev.compile_operator(dev.create_operator(desc))
    raws = [build_buffer(np.asarray(x, desc.input_tensor.data_type.numpy_dtype), desc.input_tensor.strides,
                         byte_offset=16),
            build_buffer(np.asarray(indices, desc.indices_tensor.data_type.numpy_dtype),
                         desc.indices_tensor.strides, byte_offset=32)]
    out = desc.output_tensor
    got = execute_between_sentinels(dev, compiled, raws, out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=1, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=48)


# -- the pages' examples --------------------------------------------------------------------------------------------

def test_gather_page_examples(backend: str) -> None:
    assert run(G(T(F32, [4]), T(U32, [5]), T(F32, [5]), 0, 1), [11, 12, 13, 14], [3, 1, 3, 0, 2]).tolist() == \
        [14, 12, 14, 11, 13]
    rows = np.array([[1, 2], [3, 4], [5, 6]])
    assert run(G(T(F32, [3, 2]), T(U32, [1, 4]), T(F32, [4, 2]), 0, 1), rows, [[0, 1, 1, 2]]).tolist() == \
        [[1, 2], [3, 4], [3, 4], [5, 6]]
    # Example 3 as its output says (IndexDimensions 1: README, Rulings): columns swapped.
    assert run(G(T(F32, [3, 2]), T(U32, [1, 2]), T(F32, [3, 2]), 1, 1), rows, [[1, 0]]).tolist() == \
        [[2, 1], [4, 3], [6, 5]]
    square = np.arange(1, 10).reshape(1, 3, 3)
    assert run(G(T(F32, [1, 3, 3]), T(U32, [1, 1, 2]), T(F32, [3, 1, 2]), 2, 2), square, [[[0, 2]]]).tolist() == \
        [[[1, 3]], [[4, 6]], [[7, 9]]]
    assert run(G(T(F32, [1, 3, 2]), T(U32, [1, 2, 2]), T(F32, [2, 2, 2]), 1, 2), rows.reshape(1, 3, 2),
               [[[0, 1], [1, 2]]]).tolist() == [[[1, 2], [3, 4]], [[3, 4], [5, 6]]]


def test_gather_elements_page_example(backend: str) -> None:
    x = np.arange(1, 10).reshape(3, 3)
    assert run(GE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [2, 3]), 0), x, [[1, 2, 0], [2, 0, 0]]).tolist() == \
        [[4, 8, 3], [7, 2, 3]]


# -- indices: from the end, clamped, refused by a debug device ------------------------------------------------------

def test_negative_and_out_of_range_indices(backend: str) -> None:
    x = np.arange(1, 10).reshape(3, 3)
    # -1 is the last, -3 the first; 7 and -9 are clamped to 2 and 0 (worked by hand).
    assert run(G(T(F32, [3, 3]), T(I64, [1, 4]), T(F32, [3, 4]), 1, 1), x, [[-1, -3, 7, -9]]).tolist() == \
        [[3, 1, 3, 1], [6, 4, 6, 4], [9, 7, 9, 7]]
    assert run(GE(T(F32, [3, 3]), T(I32, [1, 3]), T(F32, [1, 3]), 0), x, [[-1, 5, -4]]).tolist() == [[7, 8, 3]]
    # A UINT64 of 2^63 and more is too large (not negative): the last.
    assert run(GE(T(F32, [3, 3]), T(U64, [3, 1]), T(F32, [3, 1]), 1), x, [[2 ** 63], [1], [2 ** 64 - 1]]).tolist() \
        == [[3], [5], [9]]


def test_debug_device_refuses_out_of_range_indices(backend: str) -> None:
    x = np.arange(1, 10).reshape(3, 3)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_GATHER: IndicesTensor\[0, 2\] is 7, out of range: it "
                                               r"indexes InputTensor dimension 1 \(Axis, size 3\), so it must be in "
                                               r"\[-3, 2\]; the debug device refuses it .* nothing was written"):
        run(G(T(F32, [3, 3]), T(I64, [1, 3]), T(F32, [3, 3]), 1, 1), x, [[0, -1, 7]], debug=True)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_GATHER_ELEMENTS: IndicesTensor\[1, 0\] is 3, out of "
                                               r"range: it indexes InputTensor dimension 1 \(Axis, size 3\), so it "
                                               r"must be in \[0, 2\]"):
        run(GE(T(F32, [3, 3]), T(U32, [3, 1]), T(F32, [3, 1]), 1), x, [[0], [3], [1]], debug=True)
    # Index dimensions merged in the GATHER_ND1 view: the refusal still names the original position.
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_GATHER: IndicesTensor\[0, 1, 1\] is 9, out of range"):
        run(G(T(F32, [1, 4, 3]), T(U32, [1, 2, 3]), T(F32, [2, 3, 3]), 1, 2), np.arange(12).reshape(1, 4, 3),
            [[[0, 1, 2], [3, 9, 0]]], debug=True)
    # In range, the debug device gives the release device's result.
    assert run(G(T(F32, [3, 3]), T(I32, [1, 2]), T(F32, [3, 2]), 1, 1), x, [[-1, 0]], debug=True).tolist() == \
        [[3, 1], [6, 4], [9, 7]]


# -- every type against the reference, strides ----------------------------------------------------------------------

TYPES = [DT.FLOAT64, DT.FLOAT16, DT.INT64, DT.INT8, DT.UINT16, DT.UINT64]
INDEX_TYPES = [I64, I32, U64, U32]


def _data(data_type: dml.DataType, shape: Sequence[int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 100, size=tuple(shape)).astype(data_type.numpy_dtype)


def _indices(index_type: dml.DataType, shape: Sequence[int], size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    low = -size - 2 if index_type in (I32, I64) else 0
    return rng.integers(low, size + 2, size=tuple(shape)).astype(index_type.numpy_dtype)


#: (input sizes, Axis, the indices' meaningful sizes): IndexDimensions 0 to 2, Axis first, inner and last.
GATHER_CASES = [((1, 3, 4), 1, (3, 2)), ((5, 4), 0, (3,)), ((1, 6, 3), 2, ()), ((1, 2, 2, 3), 3, (3, 2)),
                ((2, 5), 1, (3,)), ((1, 4, 3), 1, (3, 2)), ((3, 4), 1, (2,)), ((4,), 0, ())]


@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_against_reference(case: int, backend: str) -> None:
    data_type, index_type = TYPES[case % len(TYPES)], INDEX_TYPES[case % 4]
    shape, axis, meaningful = GATHER_CASES[case]
    rank, count = len(shape), len(meaningful)
    ix_shape = [1] * (rank - count) + list(meaningful)
    x, ix = _data(data_type, shape, case), _indices(index_type, ix_shape, shape[axis], case)
    probe = G(T(data_type, shape), T(index_type, ix_shape), T(data_type, shape), axis, count)
    sizes = probe.expected_output_sizes()
    assert len(sizes) == rank
    got = run(G(T(data_type, shape), T(index_type, ix_shape), T(data_type, sizes), axis, count), x, ix)
    assert np.array_equal(got, reference_gather(x, ix, axis, count, sizes))


@pytest.mark.parametrize("case", range(8))
def test_gather_elements_against_reference(case: int, backend: str) -> None:
    data_type, index_type = TYPES[case % len(TYPES)], INDEX_TYPES[case % 4]
    shape = [(2, 3, 4), (5, 4), (7,), (3, 2, 2, 3)][case % 4]
    axis = case % len(shape)
    ix_shape = [4 if dim == axis else size for dim, size in enumerate(shape)]
    x, ix = _data(data_type, shape, case), _indices(index_type, ix_shape, shape[axis], case)
    got = run(GE(T(data_type, shape), T(index_type, ix_shape), T(data_type, ix_shape), axis), x, ix)
    assert np.array_equal(got, reference_gather_elements(x, ix, axis))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_hypothesis_gather_elements(data: st.DataObject, backend: str) -> None:
    """Random ranks, sizes, Axis, index types and values (negative and out of range) against the reference."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    axis = data.draw(st.integers(0, len(shape) - 1))
    index_type = data.draw(st.sampled_from(INDEX_TYPES))
    ix_shape = [data.draw(st.integers(1, 4)) if dim == axis else size for dim, size in enumerate(shape)]
    low = -6 if index_type in (I32, I64) else 0
    ix = np.array(data.draw(st.lists(st.integers(low, 6), min_size=int(np.prod(ix_shape)),
                                     max_size=int(np.prod(ix_shape))))).reshape(ix_shape)
    x = _data(DT.INT16, shape, 7)
    got = run(GE(T(DT.INT16, shape), T(index_type, ix_shape), T(DT.INT16, ix_shape), axis), x, ix)
    assert np.array_equal(got, reference_gather_elements(x, ix.astype(index_type.numpy_dtype), axis))


def test_strided_and_broadcast_tensors(backend: str) -> None:
    """A transposed input, zero-strided indices (one row repeated) and a padded output, between sentinels."""
    x = np.arange(12).reshape(3, 4)
    ix = np.array([[2, 0], [2, 0], [2, 0]])
    got = run(GE(T(F32, [3, 4], [1, 3]), T(U32, [3, 2], [0, 1]), T(F32, [3, 2], [5, 2]), 1), x, ix)
    assert got.tolist() == [[2, 0], [6, 4], [10, 8]]
    got = run(G(T(F32, [3, 4], [1, 3]), T(U32, [1, 2], [7, 0]), T(F32, [2, 4], [9, 1]), 0, 1), x, [[2, 2]])
    assert got.tolist() == [[8, 9, 10, 11], [8, 9, 10, 11]]


# -- support rows ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, cls", [(GATHER_SUPPORT, G), (GATHER_ELEMENTS_SUPPORT, GE)])
def test_support_rows(table: Any, cls: Any, backend: str) -> None:
    for entry in table:
        level = entry.level
        data_type = sorted(entry.tensors["InputTensor"].data_types, key=lambda t: t.value)[0]
        index_type = sorted(entry.tensors["IndicesTensor"].data_types, key=lambda t: t.value)[-1]
        rank = entry.tensors["InputTensor"].max_rank
        shape = [1] * (rank - 1) + [3]
        desc = cls(T(data_type, shape), T(index_type, shape), T(data_type, shape), rank - 1, *(
            [1] if cls is G else []))
        assert run(desc, np.array([5, 6, 7]).reshape(shape), np.array([2, 0, 1]).reshape(shape),
                   level=level).reshape(-1).tolist() == [7, 5, 6]
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_GATHER_ELEMENTS"):
        device(FL.LEVEL_2_0).create_operator(GE(T(F32, [1, 1, 1, 3]), T(U32, [1, 1, 1, 3]), T(F32, [1, 1, 1, 3]), 3))


# -- messages -------------------------------------------------------------------------------------------------------

def test_messages() -> None:
    dev = device()
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER: Axis is 2; it must be in \[0, 1\]"):
        dev.create_operator(G(T(F32, [3, 2]), T(U32, [1, 2]), T(F32, [3, 2]), 2, 1))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER: IndexDimensions is 3; it must be in "
                                                   r"\[0, 2\]"):
        dev.create_operator(G(T(F32, [3, 2]), T(U32, [1, 2]), T(F32, [3, 2]), 1, 3))
    with pytest.raises(dml.ValidationError, match=r"IndicesTensor.Sizes\[0\] is 2; with IndexDimensions 1 its "
                                                   r"leading 1 dimension\(s\) are irrelevant and must be 1"):
        dev.create_operator(G(T(F32, [3, 2]), T(U32, [2, 2]), T(F32, [3, 2]), 1, 1))
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.Sizes is \[3, 2\]; it must be \[3, 1, 2\] .*"
                                                   r"only leading 1s cropped"):   # the page's Example 3 as printed
        dev.create_operator(G(T(F32, [3, 2]), T(U32, [1, 2]), T(F32, [3, 2]), 1, 2))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER: OutputTensor.DataType is INT32; it must "
                                                   r"equal InputTensor.DataType \(FLOAT32\)"):
        dev.create_operator(G(T(F32, [3, 2]), T(U32, [1, 2]), T(I32, [3, 2]), 1, 1))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER_ELEMENTS: IndicesTensor.Sizes\[1\] is 2; it "
                                                   r"must equal InputTensor.Sizes\[1\] \(3\)"):
        dev.create_operator(GE(T(F32, [3, 3]), T(U32, [2, 2]), T(F32, [2, 2]), 0))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER_ELEMENTS: OutputTensor.Sizes is \[3, 3\]; "
                                                   r"it must equal IndicesTensor.Sizes \(\[2, 3\]\)"):
        dev.create_operator(GE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [3, 3]), 0))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER_ELEMENTS: IndicesTensor.DimensionCount is 1"):
        dev.create_operator(GE(T(F32, [3, 3]), T(U32, [3]), T(F32, [3]), 0))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER_ELEMENTS: Axis is -1"):
        GE(T(F32, [3]), T(U32, [3]), T(F32, [3]), -1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_GATHER: IndicesTensor is 5; it must be a "
                                                   r"TensorDesc"):
        G(T(F32, [3]), 5, T(F32, [3]), 0, 1)  # type: ignore[arg-type]
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_GATHER.*IndicesTensor.*INT32"):
        device(FL.LEVEL_2_1).create_operator(G(T(F32, [1, 1, 1, 3]), T(I32, [1, 1, 1, 2]), T(F32, [1, 1, 1, 2]),
                                               3, 1))


# -- graph, Dask, JSON ----------------------------------------------------------------------------------------------

def test_graph_functions(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([1, 3, 2], F32, name="x")
    i = g.input([1, 2, 2], U32, name="i")
    e = g.input([1, 3, 2], I64, name="e")
    outputs = [dml.gather(x, i, 1, 2), dml.gather_elements(x, e, 1)]
    assert [o.sizes for o in outputs] == [(2, 2, 2), (1, 3, 2)]
    data = np.arange(1, 7, dtype=np.float32).reshape(1, 3, 2)
    got = g.compile(outputs)({"x": data, "i": np.array([[[0, 1], [1, 2]]], np.uint32),
                              "e": np.array([[[2, 0], [-1, 1], [0, 0]]], np.int64)})
    assert np.asarray(got[0]).tolist() == [[[1, 2], [3, 4]], [[3, 4], [5, 6]]]
    assert np.asarray(got[1]).tolist() == [[[5, 2], [5, 4], [1, 2]]]


def test_dask_chunks(backend: str) -> None:
    """Chunked inputs and indices give the device's results (the gathered axis rechunked whole, blockwise over the
    rest), for a batch of rows, a leading axis, nested indices and GATHER_ELEMENTS."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([4, 5, 3], F32, name="x")
    y = g.input([1, 5, 3], F32, name="y")
    i = g.input([1, 1, 6], I64, name="i")
    n = g.input([1, 2, 3], U32, name="n")
    e = g.input([4, 2, 3], I32, name="e")
    outputs = [dml.gather(x, i, 1, 1), dml.gather(x, i, 0, 1), dml.gather(y, n, 1, 2), dml.gather_elements(x, e, 1)]
    assert [o.sizes for o in outputs] == [(4, 6, 3), (6, 5, 3), (2, 3, 3), (4, 2, 3)]
    compiled = g.compile(outputs)
    data = np.arange(60, dtype=np.float32).reshape(4, 5, 3)
    picks = np.array([[[4, -1, 0, 2, 9, 1]]], np.int64)
    nested = np.array([[[4, 0, 1], [3, 3, 2]]], np.uint32)
    elements = _indices(I32, [4, 2, 3], 5, 3)
    feeds = {"x": data, "y": data[:1], "i": picks, "n": nested, "e": elements}
    on_device = compiled(feeds)
    on_dask = compiled({"x": da.from_array(data, chunks=(3, 2, 2)), "y": da.from_array(data[:1], chunks=(1, 2, 2)),
                        "i": da.from_array(picks, chunks=(1, 1, 4)), "n": da.from_array(nested, chunks=(1, 1, 2)),
                        "e": da.from_array(elements, chunks=(3, 1, 2))})
    for one, chunked in zip(on_device, on_dask, strict=True):
        assert np.array_equal(np.asarray(one), chunked.compute())
    assert np.array_equal(np.asarray(on_device[0]), reference_gather(data, picks, 1, 1, [4, 6, 3]))
    assert np.array_equal(np.asarray(on_device[2]), reference_gather(data[:1], nested, 1, 2, [2, 3, 3]))
    assert np.array_equal(np.asarray(on_device[3]), reference_gather_elements(data, elements, 1))


def test_json_reader() -> None:
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_GATHER", {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [3, 2]}, "IndicesTensor": {"DataType": "UINT32",
                                                                                  "Sizes": [1, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 2]}, "Axis": 0, "IndexDimensions": 1})
    assert desc == G(T(F32, [3, 2]), T(U32, [1, 4]), T(F32, [4, 2]), 0, 1)
    desc = dml.OperatorDesc.from_dml("GATHER_ELEMENTS", {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [3, 3]}, "IndicesTensor": {"DataType": "UINT32",
                                                                                  "Sizes": [2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]}, "Axis": 0})
    assert desc == GE(T(F32, [3, 3]), T(U32, [2, 3]), T(F32, [2, 3]), 0)
