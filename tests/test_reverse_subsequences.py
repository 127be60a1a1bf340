"""REVERSE_SUBSEQUENCES (issue 28: ops/reverse_subsequences.py), on every backend.

The page's two examples copied by hand; lengths of 0, 1, the size and past it (clamped, as the page says); every
support row at its level (refused below it); 16- and 8-bit types between sentinel bytes (the gpu's word-owning
store); hypothesis against `reference_reverse_subsequences` (tests/reference.py, element by element) over axes,
lengths and input/output layouts; `dml.reverse_subsequences` (DirectMLX's name) and Dask; JSON's from_dml; bad
descriptors and calls with their messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_reverse_subsequences
from strategies import build_buffer, execute_between_sentinels, read_buffer

import opendml as dml

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
REVERSE = dml.ReverseSubsequencesOperatorDesc
X = [[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]]]


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: Any, x: np.ndarray, lengths: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the logical output, the logical input and lengths as bound) of one dispatch, between sentinel bytes."""
    dev = device()
    compiled = dev.compile_operator(dev.create_operator(desc))
    source, counts = desc.input_tensor, desc.sequence_lengths_tensor
    raw_x = build_buffer(x, source.strides, byte_offset=16, seed=seed)
    raw_lengths = build_buffer(lengths, counts.strides, byte_offset=32, seed=seed + 1)
    logical_x = read_buffer(raw_x, x.dtype, source.sizes, source.strides, byte_offset=16)
    logical_lengths = read_buffer(raw_lengths, lengths.dtype, counts.sizes, counts.strides, byte_offset=32)
    out = desc.output_tensor
    got = execute_between_sentinels(dev, compiled, [raw_x, raw_lengths], out.data_type.element_size, out.sizes,
                                    out.strides, memory="host", seed=seed, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=48), logical_x, \
        logical_lengths


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def test_page_examples(backend: str) -> None:
    x = np.array(X, np.float32)
    got, _, _ = run(REVERSE(T(DT.FLOAT32, [1, 1, 3, 4]), T(DT.UINT32, [1, 1, 3, 1]), T(DT.FLOAT32, [1, 1, 3, 4]), 3),
                    x, np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1))
    assert got.tolist() == [[[[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]]]]
    got, _, _ = run(REVERSE(T(DT.FLOAT32, [1, 1, 3, 4]), T(DT.UINT32, [1, 1, 1, 4]), T(DT.FLOAT32, [1, 1, 3, 4]), 2),
                    x, np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4))
    assert got.tolist() == [[[[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]]]


def test_lengths_past_the_end_are_clamped_and_small_types(backend: str) -> None:
    """Lengths 0, 1, 4 (the size), 5 and 2^32 - 1 (clamped to 4) on 8- and 16-bit types (whole words on the gpu)."""
    for data_type in (DT.UINT8, DT.FLOAT16, DT.INT16, DT.INT8):
        x = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20]],
                     data_type.numpy_dtype).reshape(1, 1, 5, 4)
        lengths = np.array([0, 1, 4, 5, 2**32 - 1], np.uint32).reshape(1, 1, 5, 1)
        desc = REVERSE(T(data_type, [1, 1, 5, 4]), T(DT.UINT32, [1, 1, 5, 1]), T(data_type, [1, 1, 5, 4]), 3)
        got, _, _ = run(desc, x, lengths)
        assert got.reshape(5, 4).tolist() == [[1, 2, 3, 4], [5, 6, 7, 8], [12, 11, 10, 9], [16, 15, 14, 13],
                                              [20, 19, 18, 17]], data_type


_EIGHT = (DT.FLOAT32, DT.FLOAT16, DT.INT32, DT.INT16, DT.INT8, DT.UINT32, DT.UINT16, DT.UINT8)


@pytest.mark.parametrize("level, rank", [(FL.LEVEL_2_1, 4), (FL.LEVEL_3_0, 5)])
def test_support_rows(level: dml.FeatureLevel, rank: int) -> None:
    """4-D at 2_1 with the eight types, 5-D from 3_0; UINT32 lengths only; nothing below 2_1."""
    sizes, counts = [1] * (rank - 1) + [3], [1] * rank
    below = max(candidate for candidate in FL if candidate < level)
    for data_type in _EIGHT:
        desc = REVERSE(T(data_type, sizes), T(DT.UINT32, counts), T(data_type, sizes), rank - 1)
        desc.validate(level)
        with pytest.raises(dml.UnsupportedError, match=f"needs feature level {level}"):
            desc.validate(below)
    with pytest.raises(dml.ValidationError, match=r"SequenceLengthsTensor.DataType INT32 is not supported"):
        REVERSE(T(DT.FLOAT32, sizes), T(DT.INT32, counts), T(DT.FLOAT32, sizes), rank - 1).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"InputTensor.DataType FLOAT64 is not supported"):
        REVERSE(T(DT.FLOAT64, sizes), T(DT.UINT32, counts), T(DT.FLOAT64, sizes), rank - 1).validate(TOP)


@st.composite
def cases(draw: st.DrawFn) -> Any:
    rank = draw(st.integers(4, 5))
    sizes = [draw(st.integers(1, 4)) for _ in range(rank)]
    axis = draw(st.integers(0, rank - 1))
    counts = [1 if dim == axis else size for dim, size in enumerate(sizes)]

    def layout(shape: list[int]) -> list[int]:
        order = draw(st.permutations(range(rank)))
        strides, step = [0] * rank, draw(st.integers(1, 2))
        for dim in reversed(order):
            strides[dim] = step
            step *= shape[dim]
        return strides

    data_type = draw(st.sampled_from([DT.FLOAT32, DT.UINT8, DT.FLOAT16, DT.INT32]))
    desc = REVERSE(T(data_type, sizes, layout(sizes)), T(DT.UINT32, counts, layout(counts)),
                   T(data_type, sizes, layout(sizes)), axis)
    return desc, draw(st.integers(0, 10))


@settings(max_examples=15, deadline=None)
@given(case=cases())
def test_matches_the_reference(backend: str, case: Any) -> None:
    """Any axis, lengths (0 to past the end) and layouts, between sentinel bytes."""
    desc, seed = case
    desc.validate(TOP)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 200, desc.input_tensor.sizes).astype(desc.input_tensor.data_type.numpy_dtype)
    lengths = rng.integers(0, desc.input_tensor.sizes[desc.axis] + 2, desc.sequence_lengths_tensor.sizes
                           ).astype(np.uint32)
    got, logical, counts = run(desc, x, lengths, seed=seed)
    want = reference_reverse_subsequences(logical, counts, desc.axis)
    assert np.array_equal(_bits(got), _bits(want)), desc


def test_graph_and_dask(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([1, 1, 3, 4], "FLOAT32", name="x")
    lengths = g.input([1, 1, 1, 4], "UINT32", name="lengths")
    y = dml.reverse_subsequences(x, lengths, -2)
    values = {"x": np.array(X, np.float32), "lengths": np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4)}
    want = [[[[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]]]
    (got,) = g.compile([y])(values)
    assert np.asarray(got).tolist() == want
    da = pytest.importorskip("dask.array")
    (got,) = g.compile([y])({"x": da.from_array(values["x"], chunks=(1, 1, 2, 3)),
                             "lengths": da.from_array(values["lengths"], chunks=(1, 1, 1, 2))})
    assert got.compute().tolist() == want


def test_from_dml() -> None:
    tensor, lengths = {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 4]}, {"DataType": "UINT32", "Sizes": [1, 1, 3, 1]}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_REVERSE_SUBSEQUENCES", {
        "InputTensor": tensor, "SequenceLengthsTensor": lengths, "OutputTensor": tensor, "Axis": 3})
    assert desc == REVERSE(T(DT.FLOAT32, [1, 1, 3, 4]), T(DT.UINT32, [1, 1, 3, 1]), T(DT.FLOAT32, [1, 1, 3, 4]), 3)


def test_messages() -> None:
    f, u = DT.FLOAT32, DT.UINT32
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_REVERSE_SUBSEQUENCES: SequenceLengthsTensor.Sizes is "
                                                  r"\[1, 1, 3, 4\]; it must be \[1, 1, 3, 1\] \(InputTensor.Sizes "
                                                  r"with 1 along Axis 3\)"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 1, 3, 4]), T(f, [1, 1, 3, 4]), 3).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"Axis is 4; it must be in \[0, 3\] for InputTensor of 4 "
                                                  r"dimensions"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 1, 3, 1]), T(f, [1, 1, 3, 4]), 4).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.Sizes is \[1, 1, 4, 3\]; it must equal "
                                                  r"InputTensor.Sizes \(\[1, 1, 3, 4\]\)"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 1, 3, 1]), T(f, [1, 1, 4, 3]), 3).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"OutputTensor.DataType is INT32; it must equal "
                                                  r"InputTensor.DataType \(FLOAT32\)"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 1, 3, 1]), T(DT.INT32, [1, 1, 3, 4]), 3).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"SequenceLengthsTensor.DimensionCount is 3; it must equal "
                                                  r"InputTensor.DimensionCount \(4\)"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 3, 1]), T(f, [1, 1, 3, 4]), 3).validate(TOP)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_REVERSE_SUBSEQUENCES: Axis is -1"):
        REVERSE(T(f, [1, 1, 3, 4]), T(u, [1, 1, 3, 1]), T(f, [1, 1, 3, 4]), -1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_REVERSE_SUBSEQUENCES: SequenceLengthsTensor is None"):
        REVERSE(T(f, [1, 1, 3, 4]), None, T(f, [1, 1, 3, 4]), 3)
    g = dml.Graph(device())
    with pytest.raises(dml.ValidationError, match=r"dml.reverse_subsequences: axis is 4"):
        dml.reverse_subsequences(g.input([1, 1, 3, 4], "FLOAT32"), g.input([1, 1, 3, 1], "UINT32"), 4)
