"""Self-tests of the test oracles in ``tests/reference.py`` on hand-worked cases (no opendml involved)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import float_product, float_sum, reference_reduce, reference_reduce_unrounded, wrap_int

# ---------------------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------------------


def test_wrap_int() -> None:
    assert wrap_int(128, np.int8) == -128
    assert wrap_int(-129, np.int8) == 127
    assert wrap_int(256, np.uint8) == 0
    assert wrap_int(-1, np.uint32) == 2**32 - 1
    assert wrap_int(2**63, np.int64) == -(2**63)
    assert wrap_int(5, np.int16) == 5


def test_float_sum_is_exact_and_handles_specials() -> None:
    assert float_sum([1e16, 1.0, -1e16]) == 1.0
    assert math.isnan(float_sum([math.inf, -math.inf]))
    assert math.isnan(float_sum([1.0, math.nan]))
    assert float_sum([math.inf, 1.0]) == math.inf
    assert float_sum([-math.inf, 1.0]) == -math.inf


def test_float_product_without_intermediate_overflow() -> None:
    assert float_product([1e300, 1e300, 1e-300, 1e-300]) == pytest.approx(1.0, rel=1e-15)
    assert float_product([2.0, -3.0]) == -6.0
    assert float_product([1e300, 1e300]) == math.inf
    assert float_product([-1e300, 1e300]) == -math.inf
    assert math.isnan(float_product([0.0, math.inf]))
    assert float_product([-2.0, math.inf]) == -math.inf
    assert float_product([1e-300, 1e-300]) == 0.0


# ---------------------------------------------------------------------------------------------------------------------
# REDUCE
# ---------------------------------------------------------------------------------------------------------------------

DOC_INPUT = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32, np.int64])
def test_reduce_sum_doc_example(dtype: type) -> None:
    x = DOC_INPUT.astype(dtype)
    assert reference_reduce("SUM", x, [0], dtype).tolist() == [[6, 6, 9]]
    assert reference_reduce("SUM", x, [1], dtype).tolist() == [[6], [7], [8]]
    assert reference_reduce("SUM", x, [0, 1], dtype).tolist() == [[21]]
    assert reference_reduce("SUM", x, [1, 0], dtype).tolist() == [[21]]
    assert reference_reduce("SUM", x, [1], dtype).dtype == np.dtype(dtype)


def test_reduce_argmax_doc_example() -> None:
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    assert reference_reduce("ARGMAX", x, [0, 1], np.uint32).tolist() == [[7]]
    assert reference_reduce("ARGMAX", x, [1, 0], np.int64).tolist() == [[7]]
    assert reference_reduce("ARGMAX", x, [0], np.uint32).tolist() == [[1, 2, 1]]
    assert reference_reduce("ARGMIN", x, [1], np.uint32).tolist() == [[0], [1], [0]]
    assert reference_reduce("ARGMIN", x, [0, 1], np.uint32).tolist() == [[4]]


def test_reduce_arg_index_is_row_major_over_increasing_axes() -> None:
    # Reduce axes 0 and 2 of a (2, 3, 4) tensor; the sub-block index is i0 * 4 + i2 whatever the axes order.
    x = np.zeros((2, 3, 4), dtype=np.int32)
    x[1, 2, 3] = 9  # block (output index j=2): i0=1, i2=3 -> 7
    x[0, 1, 2] = 9  # block j=1: i0=0, i2=2 -> 2
    x[1, 0, 0] = 9  # block j=0: i0=1, i2=0 -> 4
    for axes in ([0, 2], [2, 0]):
        assert reference_reduce("ARGMAX", x, axes, np.uint32).reshape(-1).tolist() == [4, 2, 7]


def test_reduce_arg_ties_and_nan() -> None:
    x = np.array([3.0, 1.0, 3.0, 1.0], dtype=np.float32)
    assert reference_reduce("ARGMAX", x, [0], np.uint32).tolist() == [0]
    assert reference_reduce("ARGMIN", x, [0], np.uint32).tolist() == [1]
    y = np.array([1.0, np.inf, np.nan, -np.inf, np.nan], dtype=np.float32)
    assert reference_reduce("ARGMAX", y, [0], np.uint32).tolist() == [2]
    assert reference_reduce("ARGMIN", y, [0], np.uint32).tolist() == [2]
    z = np.array([-0.0, 0.0], dtype=np.float32)  # -0 == +0: a tie
    assert reference_reduce("ARGMAX", z, [0], np.uint32).tolist() == [0]


def test_reduce_integer_wraparound() -> None:
    assert reference_reduce("SUM", np.array([127, 1], dtype=np.int8), [0], np.int8).tolist() == [-128]
    assert reference_reduce("SUM", np.array([255, 2], dtype=np.uint8), [0], np.uint8).tolist() == [1]
    int32_min = np.iinfo(np.int32).min
    assert reference_reduce("L1", np.array([int32_min], dtype=np.int32), [0], np.int32).tolist() == [int32_min]
    assert reference_reduce("L1", np.array([-3, 4, -5], dtype=np.int32), [0], np.int32).tolist() == [12]
    x = np.array([2**31 - 1, 2], dtype=np.uint32)
    assert reference_reduce("L1", x, [0], np.uint32).tolist() == [(2**31 + 1)]
    assert reference_reduce("MULTIPLY", np.array([2**16, 2**16, 3], dtype=np.int32), [0], np.int32).tolist() == [0]
    assert reference_reduce("MULTIPLY", np.array([-(2**31), -1], dtype=np.int32), [0], np.int32).tolist() == [-(2**31)]
    assert reference_reduce("SUM_SQUARE", np.array([2**16, 1], dtype=np.int32), [0], np.int32).tolist() == [1]
    assert reference_reduce("SUM_SQUARE", np.array([3, -4], dtype=np.int64), [0], np.int64).tolist() == [25]
    big = np.array([2**63 - 1, 2**63 - 1], dtype=np.int64)
    assert reference_reduce("SUM", big, [0], np.int64).tolist() == [-2]
    u64 = np.array([2**64 - 1, 2], dtype=np.uint64)
    assert reference_reduce("SUM", u64, [0], np.uint64).tolist() == [1]
    assert reference_reduce("MAX", u64, [0], np.uint64).tolist() == [2**64 - 1]
    assert reference_reduce("MIN", np.array([-128, 127], dtype=np.int8), [0], np.int8).tolist() == [-128]


def test_reduce_float_functions() -> None:
    x = np.array([[3.0, -4.0], [1.0, 2.0]], dtype=np.float32)
    assert reference_reduce("AVERAGE", x, [1], np.float32).tolist() == [[-0.5], [1.5]]
    assert reference_reduce("L1", x, [1], np.float32).tolist() == [[7.0], [3.0]]
    assert reference_reduce("L2", x, [1], np.float32).tolist() == [[5.0], [np.float32(math.sqrt(5))]]
    assert reference_reduce("SUM_SQUARE", x, [0, 1], np.float32).tolist() == [[30.0]]
    assert reference_reduce("MULTIPLY", x, [0, 1], np.float32).tolist() == [[-24.0]]
    assert reference_reduce("MAX", x, [0], np.float32).tolist() == [[3.0, 2.0]]
    assert reference_reduce("MIN", x, [0], np.float32).tolist() == [[1.0, -4.0]]
    log_sum = reference_reduce("LOG_SUM", np.array([[1.0, 2.0], [0.0, 0.0], [1.0, -2.0]]), [1], np.float32)
    assert log_sum[0, 0] == np.float32(math.log(3.0))
    assert log_sum[1, 0] == -np.inf
    assert np.isnan(log_sum[2, 0])


def test_reduce_log_sum_exp_is_stable() -> None:
    x = np.array([1000.0, 1000.0], dtype=np.float32)
    assert reference_reduce("LOG_SUM_EXP", x, [0], np.float32)[0] == np.float32(1000.0 + math.log(2.0))
    y = np.array([-1000.0, -1000.0, -1000.0], dtype=np.float32)
    assert reference_reduce("LOG_SUM_EXP", y, [0], np.float32)[0] == np.float32(-1000.0 + math.log(3.0))
    specials = np.array(
        [
            [1.0, np.inf, -np.inf],  # +inf anywhere -> +inf
            [-np.inf, -np.inf, -np.inf],  # all -inf -> -inf
            [np.inf, np.nan, 0.0],  # NaN anywhere -> NaN
            [0.0, -np.inf, 0.0],  # -inf contributes nothing
        ],
        dtype=np.float32,
    )
    out = reference_reduce("LOG_SUM_EXP", specials, [1], np.float32).reshape(-1)
    assert out[0] == np.inf
    assert out[1] == -np.inf
    assert np.isnan(out[2])
    assert out[3] == np.float32(math.log(2.0))


def test_reduce_nan_and_inf_propagation() -> None:
    x = np.array([[1.0, np.nan], [np.inf, -np.inf], [np.inf, 1.0]], dtype=np.float32)
    assert np.isnan(reference_reduce("MAX", x, [1], np.float32)[0, 0])
    assert np.isnan(reference_reduce("MIN", x, [1], np.float32)[0, 0])
    assert np.isnan(reference_reduce("SUM", x, [1], np.float32)[1, 0])
    assert reference_reduce("SUM", x, [1], np.float32)[2, 0] == np.inf
    assert reference_reduce("L1", x, [1], np.float32)[1, 0] == np.inf
    assert reference_reduce("MAX", x, [1], np.float32)[1, 0] == np.inf
    assert reference_reduce("MIN", x, [1], np.float32)[1, 0] == -np.inf
    assert np.isnan(reference_reduce("LOG_SUM", x, [1], np.float32)[1, 0])
    assert np.isnan(reference_reduce("MULTIPLY", np.array([0.0, np.inf], dtype=np.float32), [0], np.float32)[0])


def test_reduce_float16_rounds_once() -> None:
    # 2048 + 1 + 1 in float16 accumulation would stay at 2048; the exact sum 2050 is representable.
    x = np.array([2048.0, 1.0, 1.0], dtype=np.float16)
    assert reference_reduce("SUM", x, [0], np.float16).tolist() == [2050.0]
    # Overflow on rounding to the output type gives inf.
    assert reference_reduce("SUM", np.array([65504.0, 65504.0], dtype=np.float16), [0], np.float16)[0] == np.inf


def test_reduce_output_shape_and_unrounded() -> None:
    x = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    assert reference_reduce("SUM", x, [3, 1], np.int32).shape == (2, 1, 4, 1)
    exact = reference_reduce_unrounded("SUM", x, [0, 1, 2, 3])
    assert exact.reshape(-1).tolist() == [sum(range(120))]
    np.testing.assert_array_equal(reference_reduce("SUM", x, [1, 3], np.int32), x.sum(axis=(1, 3), keepdims=True))
    np.testing.assert_array_equal(reference_reduce("MAX", x, [0, 2], np.int32), x.max(axis=(0, 2), keepdims=True))


@pytest.mark.parametrize("axes", [[0], [1], [2], [0, 2], [2, 1], [0, 1, 2]])
def test_reduce_matches_numpy_on_random_floats(axes: list[int]) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ax = tuple(axes)
    expect = {
        "SUM": x.astype(np.float64).sum(axis=ax, keepdims=True),
        "AVERAGE": x.astype(np.float64).mean(axis=ax, keepdims=True),
        "L1": np.abs(x.astype(np.float64)).sum(axis=ax, keepdims=True),
        "L2": np.sqrt((x.astype(np.float64) ** 2).sum(axis=ax, keepdims=True)),
        "SUM_SQUARE": (x.astype(np.float64) ** 2).sum(axis=ax, keepdims=True),
        "LOG_SUM_EXP": np.log(np.exp(x.astype(np.float64)).sum(axis=ax, keepdims=True)),
        "MULTIPLY": x.astype(np.float64).prod(axis=ax, keepdims=True),
    }
    for function, value in expect.items():
        np.testing.assert_allclose(reference_reduce_unrounded(function, x, axes), value, rtol=1e-12, atol=1e-12)
