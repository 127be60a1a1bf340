"""The cpu backend's own kernels for the copy operators' common layouts (backends/cpu/slice.py's row-copy kernel,
gather.py's GATHER along the last axis and GATHER_ELEMENTS): the layouts that take them, and the ones that fall back
(rows too short for the row tables), against goldens worked out with NumPy indexing of the indices fixed by hand
(a negative index of a signed type counts from the end once, then every index is clamped)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu


@pytest.fixture(autouse=True)
def numba_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu, "SMALL_TENSOR_ELEMENTS", 0)


def run(desc: Any, *inputs: np.ndarray, out_shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    out = np.full(out_shape, 99, dtype)
    compiled.execute([dml.Binding(array) for array in inputs], [dml.Binding(out)])
    return out


def tensor(data_type: str, sizes: tuple[int, ...]) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes)


X = np.arange(40, dtype=np.float32).reshape(8, 5)


@pytest.mark.parametrize(("index_type", "values", "fixed"), [
    ("INT64", [4, -1, 7, -9, 0, 2], [4, 4, 4, 0, 0, 2]),
    ("INT32", [-5, -6, 5, 1], [0, 0, 4, 1]),
    ("UINT32", [2**32 - 1, 0, 3], [4, 0, 3]),
    ("UINT64", [2**64 - 1, 2**63, 1], [4, 4, 1]),
])
def test_gather_along_the_last_axis_fixes_each_index_once(index_type: str, values: list[int], fixed: list[int]
                                                          ) -> None:
    indices = np.array([values], dtype=dml.DataType[index_type].numpy_dtype)
    desc = dml.GatherOperatorDesc(tensor("FLOAT32", (8, 5)), tensor(index_type, indices.shape),
                                  tensor("FLOAT32", (8, len(values))), 1, 1)
    assert run(desc, X, indices, out_shape=(8, len(values))).tolist() == X[:, fixed].tolist()


def test_gather_elements_along_the_last_axis_and_a_middle_one() -> None:
    indices = np.array([[4, -1, 9], [-5, -6, 0]] * 4, dtype=np.int64)   # fixed: [4, 4, 4], [0, 0, 0]
    desc = dml.GatherElementsOperatorDesc(tensor("FLOAT32", (8, 5)), tensor("INT64", (8, 3)),
                                          tensor("FLOAT32", (8, 3)), 1)
    expected = [[5 * row + 4] * 3 if row % 2 == 0 else [5 * row] * 3 for row in range(8)]
    assert run(desc, X, indices, out_shape=(8, 3)).tolist() == expected
    cube = np.arange(8 * 4 * 3, dtype=np.float32).reshape(8, 4, 3)
    picks = np.array([[[3, -1, 0], [-4, 7, 2]]] * 8, dtype=np.int64)   # fixed: [3, 3, 0], [0, 3, 2]
    desc = dml.GatherElementsOperatorDesc(tensor("FLOAT32", (8, 4, 3)), tensor("INT64", (8, 2, 3)),
                                          tensor("FLOAT32", (8, 2, 3)), 1)
    fixed = np.array([[[3, 3, 0], [0, 3, 2]]] * 8)
    assert run(desc, cube, picks, out_shape=(8, 2, 3)).tolist() == np.take_along_axis(cube, fixed, 1).tolist()


def test_gathers_with_rows_shared_among_threads() -> None:
    """Outputs of 1 MiB and more split their rows over numba's threads; each row still fixes every index."""
    x = np.arange(64 * 4096, dtype=np.int64).reshape(64, 4096) % 251   # 2 MiB, every row different
    x = x + np.arange(64, dtype=np.int64)[:, None] * 1000
    picks = np.array([[4095, -1, 5000, -4096, -5000, 7] * 683], dtype=np.int32)[:, :4096]
    fixed = np.array([[4095, 4095, 4095, 0, 0, 7] * 683])[:, :4096]
    desc = dml.GatherOperatorDesc(tensor("INT64", (64, 4096)), tensor("INT32", picks.shape),
                                  tensor("INT64", (64, 4096)), 1, 1)
    assert np.array_equal(run(desc, x, picks, out_shape=(64, 4096), dtype=np.int64), x[:, fixed[0]])
    elements = np.tile(np.array([[-1, 4096, 2, -4097]], dtype=np.int64), (64, 1024))   # fixed: [4095, 4095, 2, 0]
    desc = dml.GatherElementsOperatorDesc(tensor("INT64", (64, 4096)), tensor("INT64", (64, 4096)),
                                          tensor("INT64", (64, 4096)), 1)
    expected = np.take_along_axis(x, np.tile(np.array([[4095, 4095, 2, 0]]), (64, 1024)), 1)
    assert np.array_equal(run(desc, x, elements, out_shape=(64, 4096), dtype=np.int64), expected)


def test_padding_with_short_rows_falls_back_to_the_numpy_kernel() -> None:
    x = np.arange(5000 * 2, dtype=np.int16).reshape(5000, 2)
    desc = dml.PaddingOperatorDesc(tensor("INT16", (5000, 2)), tensor("INT16", (5000, 5)), "CONSTANT", -3.0, 2,
                                   (0, 1), (0, 2))
    out = run(desc, x, out_shape=(5000, 5), dtype=np.int16)
    assert out[:, 0].tolist() == [-3] * 5000 and out[:, 3:].tolist() == [[-3, -3]] * 5000
    assert out[:, 1:3].tolist() == x.tolist()


def test_a_reversed_strided_window_of_wide_rows_through_the_row_copy() -> None:
    x = np.arange(6 * 40, dtype=np.uint8).reshape(6, 40)
    desc = dml.Slice1OperatorDesc(tensor("UINT8", (6, 40)), tensor("UINT8", (3, 20)), 2, (1, 0), (5, 40), (2, -2))
    # rows 1, 3, 5; columns 39, 37, ..., 1 (the whole width read from its end by steps of 2)
    expected = [[40 * row + column for column in range(39, 0, -2)] for row in (1, 3, 5)]
    assert run(desc, x, out_shape=(3, 20), dtype=np.uint8).tolist() == expected
