"""The DirectMLX-style graph builder: every doc page's examples rebuilt through the graph API (numbers copied by hand),
shape inference tables (DIGEST 5.1), a multi-node graph against the same chain run operator by operator, the buffer
plan (reuse across dispatches, shared memory for tensors whose lifetimes do not overlap), and bad graphs and
dispatches with message regexes."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.backends import DeviceMemory
from opendml.graph import CompiledGraph, PlannedBuffer

F32 = dml.DataType.FLOAT32
NDArray = np.ndarray[Any, Any]


def graph(level: str = "6_4") -> dml.Graph:
    return dml.Graph(dml.Device(feature_level=level))


def run(outputs: list[dml.Expression], inputs: dict[Any, NDArray]) -> list[NDArray]:
    return outputs[0].graph.compile(outputs)(inputs)


# -- goldens: REDUCE ----------------------------------------------------------------------------------------------

REDUCE_PAGE_INPUT = np.array([[1, 2, 3],
                              [3, 0, 4],
                              [2, 4, 2]], np.float32)


@pytest.mark.parametrize(("axes", "expected"), [
    ([0], [[6, 6, 9]]),          # Example 1: sum({1,3,2}), sum({2,0,4}), sum({3,4,2})
    ([1], [[6], [7], [8]]),      # Example 2: sum({1,2,3}), sum({3,0,4}), sum({2,4,2})
    ([0, 1], [[21]]),            # Example 3 (the page's comment lists a 5 by mistake; 21 is right)
    (None, [[21]]),              # DirectMLX: no axes = every axis
])
def test_reduce_page_examples(axes: list[int] | None, expected: list[list[float]]) -> None:
    g = graph()
    x = g.input([3, 3], "FLOAT32", name="x")
    (output,) = run([dml.reduce(x, "SUM", axes)], {"x": REDUCE_PAGE_INPUT})
    assert output.dtype == np.float32
    np.testing.assert_array_equal(output, np.array(expected, np.float32))


def test_argmax_page_example() -> None:
    # DML_ARGMAX_OPERATOR_DESC's example: the maximum 5 sits at row 2, column 1 -> 2 * 3 + 1 = 7 (UINT32).
    g = graph()
    x = g.input([3, 3], np.float32)
    (output,) = run([dml.reduce(x, dml.ReduceFunction.ARGMAX)], {x: np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]],
                                                                              np.float32)})
    assert output.dtype == np.uint32
    assert output.tolist() == [[7]]


def test_dxdispatch_reduce_model_at_level_1_0() -> None:
    # dml_reduce.json: 1..9 as {1,1,3,3}, SUM over axis 3 -> 6, 15, 24 (4-D, as feature level 1_0 requires).
    g = graph("1_0")
    x = g.input([1, 1, 3, 3], "FLOAT32", name="input")
    (output,) = run([dml.reduce(x, "DML_REDUCE_FUNCTION_SUM", [3])],
                    {"input": np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)})
    assert output.reshape(-1).tolist() == [6, 15, 24]


# -- goldens: SPLIT -----------------------------------------------------------------------------------------------

SPLIT_PAGE_INPUT = np.array([[[[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12]]]], np.float32)


def test_split_page_example_1_axis_2() -> None:
    g = graph()
    x = g.input([1, 1, 6, 2], "FLOAT32", name="x")
    outputs = run(dml.split(x, 2, [2, 1, 3]), {"x": SPLIT_PAGE_INPUT})
    assert [output.tolist() for output in outputs] == [
        [[[[1, 2], [3, 4]]]],
        [[[[5, 6]]]],
        [[[[7, 8], [9, 10], [11, 12]]]],
    ]


def test_split_page_example_2_axis_3() -> None:
    g = graph()
    x = g.input([1, 1, 6, 2], "FLOAT32", name="x")
    first, second = run(dml.split(x, 3, [1, 1]), {"x": SPLIT_PAGE_INPUT})
    assert first.shape == second.shape == (1, 1, 6, 1)
    assert first.reshape(-1).tolist() == [1, 3, 5, 7, 9, 11]
    assert second.reshape(-1).tolist() == [2, 4, 6, 8, 10, 12]


def test_dxdispatch_split_model() -> None:
    # dml_split.json: A = 1..6 split along axis 0 into three {2} outputs.
    g = graph()
    a = g.input([6], "FLOAT32", name="A")
    outputs = run(dml.split(a, 0, [2, 2, 2]), {"A": np.arange(1, 7, dtype=np.float32)})
    assert [output.tolist() for output in outputs] == [[1, 2], [3, 4], [5, 6]]


# -- goldens: ONE_HOT ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("indices", "index_type", "values", "axis", "expected"), [
    # Example 1: one-hot across the rows.
    ([[[[0], [3], [2]]]], "UINT32", [[[[0, 1]]]], 3,
     [[[[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]]]),
    # Example 2: another axis.
    ([[[[0, 2, 1, 0]]]], "UINT32", [[[[0, 1]]]], 2,
     [[[[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]]]]),
    # Example 3: other on/off values (off 4, on 2, 9 unused).
    ([[[[0], [3], [2]]]], "UINT32", [[[[4], [2], [9]]]], 3,
     [[[[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]]]]),
    # Example 4: negative and out-of-range indices.
    ([[[[-3], [100], [3]]]], "INT32", [[[[0, 1]]]], 3,
     [[[[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]]]),
])
def test_one_hot_page_examples(indices: list[Any], index_type: str, values: list[Any], axis: int,
                               expected: list[Any]) -> None:
    g = graph()
    index_array = np.array(indices, dml.DataType.parse(index_type).numpy_dtype)
    i = g.input(index_array.shape, index_type, name="indices")
    v = g.constant(np.array(values, np.float32), name="values")       # OWNED_BY_DML, uploaded at compile time
    (output,) = run([dml.one_hot(i, v, output_length=(3 if axis == 2 else 4), axis=axis)], {"indices": index_array})
    assert output.dtype == np.float32
    assert output.tolist() == expected


def test_one_hot_values_as_an_input() -> None:
    g = graph()
    i = g.input([1, 1, 3, 1], "UINT32", name="indices")
    v = g.input([1, 1, 1, 2], "FLOAT32", name="values")
    (output,) = run([dml.one_hot(i, v, 4, 3)], {"indices": np.array([0, 3, 2], np.uint32).reshape(1, 1, 3, 1),
                                                "values": np.array([0, 1], np.float32).reshape(1, 1, 1, 2)})
    assert output.tolist() == [[[[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]]]


# -- goldens: MEAN_VARIANCE_NORMALIZATION1 -----------------------------------------------------------------------
# The page gives the formula and no numbers: Output = FusedActivation(Scale * (Input - Mean) / sqrt(Variance +
# Epsilon) + Bias). For {1, 2, 3, 4} the mean is 2.5 and the population variance (1.5² + 0.5² + 0.5² + 1.5²) / 4 =
# 1.25, worked out by hand below.

MVN_INPUT = np.array([[[[1, 2], [3, 4]]]], np.float32)
MVN_DEVIATIONS = np.array([[[[-1.5, -0.5], [0.5, 1.5]]]])


def test_mvn_normalizes_over_axes() -> None:
    g = graph()
    x = g.input([1, 1, 2, 2], "FLOAT32", name="x")
    (output,) = run([dml.mean_variance_normalization(x, axes=[2, 3])], {"x": MVN_INPUT})
    np.testing.assert_allclose(output, MVN_DEVIATIONS / math.sqrt(1.25 + 1e-5), rtol=1e-6)


def test_mvn_with_scale_bias_constants_and_fused_relu() -> None:
    g = graph()
    x = g.input([1, 1, 2, 2], "FLOAT32", name="x")
    scale = g.constant(np.array([[[[2.0]]]], np.float32), name="scale")
    bias = g.constant(np.array([[[[0.5, -3.0]]]], np.float32), name="bias")    # broadcast over rows (FL >= 4_0)
    y = dml.mean_variance_normalization(x, scale, bias, axes=[2, 3], epsilon=0.0,
                                        fused_activation=dml.FusedActivation.relu())
    (output,) = run([y], {"x": MVN_INPUT})
    expected = np.maximum(2.0 * MVN_DEVIATIONS / math.sqrt(1.25) + np.array([0.5, -3.0]), 0.0)
    np.testing.assert_allclose(output, expected, rtol=1e-6, atol=1e-7)


def test_mvn_without_variance_and_with_fused_elu() -> None:
    g = graph()
    x = g.input([1, 1, 2, 2], "FLOAT32", name="x")
    y = dml.mean_variance_normalization(x, axes=[2, 3], normalize_variance=False,
                                        fused_activation=dml.FusedActivation.elu(alpha=0.5))
    (output,) = run([y], {"x": MVN_INPUT})
    expected = np.where(MVN_DEVIATIONS >= 0, MVN_DEVIATIONS, 0.5 * (np.exp(MVN_DEVIATIONS) - 1))
    np.testing.assert_allclose(output, expected, rtol=1e-6)


# -- goldens: GATHER_ND1 ------------------------------------------------------------------------------------------

def test_gather_nd_page_example_1() -> None:
    g = graph("3_0")
    x = g.input([2, 2], "FLOAT32", name="x")
    i = g.input([2, 1], "UINT32", name="i")
    (output,) = run([dml.gather_nd(x, i, 2, 2, 0)], {"x": np.array([[0, 1], [2, 3]], np.float32),
                                                     "i": np.array([[1], [0]], np.uint32)})
    assert output.tolist() == [[2, 3], [0, 1]]


def test_gather_nd_page_example_2_batches() -> None:
    g = graph("3_0")
    x = g.input([1, 3, 2, 2], "FLOAT32", name="x")
    indices = g.constant(np.array([[[[0, 0], [1, 1]],
                                    [[1, 1], [0, 0]],
                                    [[0, 1], [1, 0]]]], np.uint32))
    y = dml.gather_nd(x, indices, input_dimension_count=3, indices_dimension_count=3, batch_dimension_count=1)
    assert y.sizes == (1, 1, 3, 2)
    (output,) = run([y], {"x": np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)})
    assert output.tolist() == [[[[0, 3], [7, 4], [9, 10]]]]


def test_gather_nd_v0_page_example() -> None:
    # DML_GATHER_ND_OPERATOR_DESC (= GATHER_ND1 with BatchDimensionCount 0): Input {1,2,2,2} = 0..7,
    # Indices {1,1,2,2} = [[0,1],[1,0]], InputDimensionCount 3, IndicesDimensionCount 2 -> [[2,3],[4,5]].
    g = graph()
    x = g.input([1, 2, 2, 2], "FLOAT32", name="x")
    i = g.input([1, 1, 2, 2], "UINT32", name="i")
    (output,) = run([dml.gather_nd(x, i, 3, 2)], {"x": np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2),
                                                  "i": np.array([[0, 1], [1, 0]], np.uint32).reshape(1, 1, 2, 2)})
    assert output.shape == (1, 1, 2, 2)
    assert output.reshape(2, 2).tolist() == [[2, 3], [4, 5]]


# -- goldens: the siblings (JOIN, ARGMIN/ARGMAX, MVN version 0, the standalone activations) ---------------------

def test_join_concatenates_along_the_axis() -> None:
    g = graph()
    a = g.input([2, 1], "INT32", name="a")
    b = g.input([2, 2], "INT32", name="b")
    joined = dml.join([a, b], axis=1)
    assert (joined.sizes, joined.dtype) == ((2, 3), dml.DataType.INT32)
    (output,) = run([joined], {"a": np.array([[1], [4]], np.int32), "b": np.array([[2, 3], [5, 6]], np.int32)})
    assert output.tolist() == [[1, 2, 3], [4, 5, 6]]


def test_split_then_join_gives_the_input_back() -> None:
    g = graph()
    x = g.input([2, 5], "FLOAT16", name="x")
    parts = dml.split(x, 1, [2, 1, 2])
    (output,) = run([dml.join(parts[::-1], axis=1)], {"x": np.arange(10, dtype=np.float16).reshape(2, 5)})
    assert output.tolist() == [[3, 4, 2, 0, 1], [8, 9, 7, 5, 6]]


@pytest.mark.parametrize(("function", "direction", "expected"), [
    # DIGEST 2.2 / the ARGMAX and ARGMIN pages: argmax({3,2,1,2,3}) = 0 increasing, 4 decreasing.
    (dml.arg_max, "INCREASING", 0), (dml.arg_max, "DECREASING", 4),
    (dml.arg_min, "INCREASING", 2), (dml.arg_min, dml.AxisDirection.DECREASING, 2),
])
def test_arg_max_and_arg_min_tie_directions(function: Callable[..., dml.Expression], direction: Any,
                                            expected: int) -> None:
    g = graph()
    x = g.input([5], "FLOAT32", name="x")
    y = function(x, axis_direction=direction)
    assert (y.sizes, y.dtype) == ((1,), dml.DataType.UINT32)
    (output,) = run([y], {"x": np.array([3, 2, 1, 2, 3], np.float32)})
    assert output.tolist() == [expected]


def test_arg_max_page_example_over_both_axes_as_int64() -> None:
    g = graph()
    x = g.input([3, 3], "FLOAT32", name="x")
    y = dml.arg_max(x, [0, 1], output_dtype="INT64")
    assert y.operator_desc == dml.ArgMaxOperatorDesc(x.desc, dml.TensorDesc("INT64", [1, 1]), [0, 1])
    (output,) = run([y], {"x": np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)})
    assert output.tolist() == [[7]]


def test_mvn_cross_channel_form_is_version_0() -> None:
    g = graph()
    x = g.input([1, 2, 1, 2], "FLOAT32", name="x")
    per_channel = dml.mean_variance_normalization(x, cross_channel=False, epsilon=0.0)
    across = dml.mean_variance_normalization(x, cross_channel=True, normalize_variance=False)
    assert type(per_channel.operator_desc) is dml.MeanVarianceNormalizationOperatorDesc
    first, second = run([per_channel, across], {"x": np.array([0, 2, 4, 6], np.float32).reshape(1, 2, 1, 2)})
    assert first.ravel().tolist() == [-1, 1, -1, 1]        # each channel {0, 2}, {4, 6}: mean 1 / 5, deviation 1
    assert second.ravel().tolist() == [-3, -1, 1, 3]       # mean 3 over both channels, not divided


#: Each standalone activation at one point, worked out by hand from its page's formula (defaults where it has any).
ACTIVATION_POINTS: list[tuple[Callable[..., dml.Expression], tuple[float, ...], float, float]] = [
    (dml.activation_celu, (), -1.0, math.exp(-1) - 1),
    (dml.activation_elu, (0.5,), -2.0, 0.5 * (math.exp(-2) - 1)),
    (dml.activation_gelu, (), 1.0, 0.5 * (1 + math.erf(1 / math.sqrt(2)))),
    (dml.activation_hard_sigmoid, (), 1.0, 0.7),
    (dml.activation_identity, (), -3.5, -3.5),
    (dml.activation_leaky_relu, (), -2.0, -0.02),
    (dml.activation_linear, (2.0, 1.0), 3.0, 7.0),
    (dml.activation_parametric_softplus, (2.0, 1.0), 0.0, 2 * math.log(2)),
    (dml.activation_relu, (), -1.0, 0.0),
    (dml.activation_scaled_elu, (), 1.0, 1.05070102214813232421875),
    (dml.activation_scaled_tanh, (2.0, 1.0), 1.0, 2 * math.tanh(1)),
    (dml.activation_shrink, (), 0.4, 0.0),
    (dml.activation_sigmoid, (), 0.0, 0.5),
    (dml.activation_softplus, (), 0.0, math.log(2)),
    (dml.activation_softsign, (), 1.0, 0.5),
    (dml.activation_tanh, (), 0.5, math.tanh(0.5)),
    (dml.activation_thresholded_relu, (), 1.0, 0.0),
]


@pytest.mark.parametrize(("function", "parameters", "x", "expected"), ACTIVATION_POINTS,
                         ids=[function.__name__ for function, *_ in ACTIVATION_POINTS])
def test_standalone_activation_functions(function: Callable[..., dml.Expression], parameters: tuple[float, ...],
                                         x: float, expected: float) -> None:
    g = graph()
    source = g.input([2, 3], "FLOAT32", name="x")
    y = function(source, *parameters)
    assert (y.sizes, y.dtype) == ((2, 3), dml.DataType.FLOAT32)
    assert y.operator_desc is not None and y.operator_desc.OPERATOR_TYPE.name == function.__name__.upper()
    (output,) = run([y], {"x": np.full((2, 3), x, np.float32)})
    np.testing.assert_allclose(output, np.full((2, 3), expected), rtol=2e-6, atol=1e-7)


def test_standalone_activation_defaults_are_directmlx_fused_ones() -> None:
    factories = {name: getattr(dml.FusedActivation, name) for name in dir(dml.FusedActivation)
                 if not name.startswith("_") and name != "none" and name != "desc"}
    assert len(factories) == 17
    g = graph()
    x = g.input([4], "FLOAT32")
    for name, factory in factories.items():
        function = getattr(dml, f"activation_{name}")
        arguments = (1.5, 0.25) if name in ("linear", "parametric_softplus") else ()
        desc = function(x, *arguments).operator_desc
        fused = factory(*arguments).desc
        assert dataclasses.replace(desc, input_tensor=None, output_tensor=None) == fused, name


# -- shape inference tables (DIGEST 5.1; operand sizes and types -> output sizes and type) -------------------------

@pytest.mark.parametrize(("sizes", "dtype", "function", "axes", "output_dtype", "expected_sizes", "expected_type"), [
    ([3, 3], "FLOAT32", "SUM", [0], None, (1, 3), "FLOAT32"),
    ([3, 3], "FLOAT32", "SUM", [1], None, (3, 1), "FLOAT32"),
    ([3, 3], "FLOAT32", "SUM", None, None, (1, 1), "FLOAT32"),             # no axes: all axes
    ([5], "INT32", "MAX", [], None, (1,), "INT32"),                        # empty axes: all axes
    ([2, 5], "INT32", "MIN", np.array([], np.uint32), None, (1, 1), "INT32"),
    ([2, 5], "UINT32", "MULTIPLY", np.array([1]), None, (2, 1), "UINT32"),
    ([2, 3, 4, 5], "FLOAT16", "AVERAGE", [3, 1], None, (2, 1, 4, 1), "FLOAT16"),
    ([2, 3, 4, 5], "FLOAT32", "ARGMAX", [1, 3], None, (2, 1, 4, 1), "UINT32"),   # ARGMAX defaults to UINT32
    ([2, 3, 4, 5], "INT8", "ARGMIN", [0], None, (1, 3, 4, 5), "UINT32"),
    ([2, 3, 4, 5], "FLOAT16", "ARGMIN", [0], "INT64", (1, 3, 4, 5), "INT64"),
    ([2, 3, 4, 5], "FLOAT16", "ARGMAX", [0], np.int32, (1, 3, 4, 5), "INT32"),
    ([7, 1, 2, 1, 3, 1, 1, 2], "UINT64", "SUM_SQUARE", [0, 7], None, (1, 1, 2, 1, 3, 1, 1, 1), "UINT64"),
    ([4, 6], "INT64", "MIN", [0, 1], None, (1, 1), "INT64"),
])
def test_reduce_shape_inference(sizes: list[int], dtype: str, function: str, axes: list[int] | None,
                                output_dtype: object, expected_sizes: tuple[int, ...], expected_type: str) -> None:
    g = graph()
    y = dml.reduce(g.input(sizes, dtype), function, axes, output_dtype=output_dtype)
    assert (y.sizes, y.dtype) == (expected_sizes, dml.DataType[expected_type])
    assert isinstance(y.operator_desc, dml.ReduceOperatorDesc)
    assert y.desc == dml.TensorDesc(expected_type, expected_sizes)       # packed, DMLCalcBufferTensorSize bytes


@pytest.mark.parametrize(("sizes", "dtype", "axis", "parts", "expected"), [
    ([1, 1, 6, 2], "FLOAT32", 2, [2, 1, 3], [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)]),
    ([1, 1, 6, 2], "FLOAT32", 3, [1, 1], [(1, 1, 6, 1), (1, 1, 6, 1)]),
    ([6], "INT8", 0, [6], [(6,)]),                                          # one output: a copy
    ([4, 6], "FLOAT64", 1, [1, 1, 4], [(4, 1), (4, 1), (4, 4)]),
    ([2, 1, 1, 1, 1, 1, 1, 9], "UINT16", 7, [3, 6], [(2, 1, 1, 1, 1, 1, 1, 3), (2, 1, 1, 1, 1, 1, 1, 6)]),
])
def test_split_shape_inference(sizes: list[int], dtype: str, axis: int, parts: list[int],
                               expected: list[tuple[int, ...]]) -> None:
    g = graph()
    outputs = dml.split(g.input(sizes, dtype), axis, parts)
    assert [output.sizes for output in outputs] == expected
    assert {output.dtype for output in outputs} == {dml.DataType[dtype]}
    assert [output.output_index for output in outputs] == list(range(len(parts)))


@pytest.mark.parametrize(("indices", "values", "length", "axis", "expected_sizes", "expected_type"), [
    (([1, 1, 3, 1], "UINT32"), ([1, 1, 1, 2], "FLOAT32"), 4, 3, (1, 1, 3, 4), "FLOAT32"),
    (([1, 1, 1, 4], "UINT32"), ([1, 1, 1, 2], "FLOAT32"), 3, 2, (1, 1, 3, 4), "FLOAT32"),
    (([2, 1, 4, 5], "INT64"), ([1, 1, 1, 2], "FLOAT16"), 3, 1, (2, 3, 4, 5), "FLOAT16"),
    (([3, 1], "INT32"), ([1, 2], "INT8"), 10, 1, (3, 10), "INT8"),
    (([1], "UINT64"), ([2], "UINT64"), 7, 0, (7,), "UINT64"),
])
def test_one_hot_shape_inference(indices: tuple[list[int], str], values: tuple[list[int], str], length: int,
                                 axis: int, expected_sizes: tuple[int, ...], expected_type: str) -> None:
    g = graph()
    y = dml.one_hot(g.input(*indices), g.input(*values), length, axis)
    assert (y.sizes, y.dtype) == (expected_sizes, dml.DataType[expected_type])


@pytest.mark.parametrize(("sizes", "dtype", "axes"), [
    ([1, 1, 2, 2], "FLOAT32", [2, 3]),
    ([2, 3, 4], "FLOAT16", [1, 2]),
    ([8], "FLOAT32", [0]),
    ([2, 1, 1, 1, 1, 1, 3, 4], "FLOAT32", [0, 6, 7]),
])
def test_mvn_shape_inference(sizes: list[int], dtype: str, axes: list[int]) -> None:
    g = graph()
    y = dml.mean_variance_normalization(g.input(sizes, dtype), axes=axes)
    assert (y.sizes, y.dtype) == (tuple(sizes), dml.DataType[dtype])


@pytest.mark.parametrize(("input_", "indices", "counts", "expected_sizes"), [
    (([2, 2], "FLOAT32"), [2, 1], (2, 2, 0), (2, 2)),                            # page example 1
    (([1, 3, 2, 2], "FLOAT32"), [1, 3, 2, 2], (3, 3, 1), (1, 1, 3, 2)),           # page example 2
    (([1, 2, 2, 2], "INT16"), [1, 1, 2, 2], (3, 2, 0), (1, 1, 2, 2)),             # GATHER_ND page
    (([3, 4, 5, 6, 7], "FLOAT32"), [1, 1, 1, 2, 3], (5, 3, 0), (1, 1, 2, 6, 7)),  # the page's size example
    (([2, 3, 4], "UINT8"), [2, 5, 1], (3, 3, 1), (2, 5, 4)),                      # a batch, 1-coordinate tuples
    (([1, 4, 5], "FLOAT64"), [1, 1, 2], (2, 2, 0), (1, 1, 1)),                    # full tuples: single elements
    (([4, 5], "FLOAT16"), [3, 2], (2, 2, 0), (1, 3)),
])
def test_gather_nd_shape_inference(input_: tuple[list[int], str], indices: list[int], counts: tuple[int, int, int],
                                   expected_sizes: tuple[int, ...]) -> None:
    g = graph()
    y = dml.gather_nd(g.input(*input_), g.input(indices, "INT32"), *counts)
    assert (y.sizes, y.dtype) == (expected_sizes, dml.DataType[input_[1]])


# -- a multi-node graph against the same chain, operator by operator -----------------------------------------------

def op(device: dml.Device, desc: dml.OperatorDesc) -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def chain_by_operators(device: dml.Device, x: NDArray) -> list[NDArray]:
    """split along 1 into {4,2} and {4,4}; SUM of the first, MAX and ARGMAX of the second; ONE_HOT of the argmax."""
    T = dml.TensorDesc
    left, right = op(device, dml.SplitOperatorDesc(T(F32, [4, 6]), [T(F32, [4, 2]), T(F32, [4, 4])], 1))(x)
    (sums,) = op(device, dml.ReduceOperatorDesc("SUM", T(F32, [4, 2]), T(F32, [4, 1]), [1]))(left)
    (maxima,) = op(device, dml.ReduceOperatorDesc("MAX", T(F32, [4, 4]), T(F32, [4, 1]), [1]))(right)
    (where,) = op(device, dml.ReduceOperatorDesc("ARGMAX", T(F32, [4, 4]), T("UINT32", [4, 1]), [1]))(right)
    (hot,) = op(device, dml.OneHotOperatorDesc(T("UINT32", [4, 1]), T(F32, [1, 2]), T(F32, [4, 4]), 1))(
        where, np.array([[0, 1]], np.float32))
    return [sums, maxima, hot]


def build_chain(g: dml.Graph) -> tuple[dml.Expression, list[dml.Expression], list[dml.Expression]]:
    x = g.input([4, 6], "FLOAT32", name="x")
    left, right = dml.split(x, 1, [2, 4])
    sums = dml.reduce(left, "SUM", [1])
    maxima = dml.reduce(right, "MAX", [1])
    where = dml.reduce(right, "ARGMAX", [1])
    hot = dml.one_hot(where, g.constant(np.array([[0, 1]], np.float32), name="off_on"), 4, 1)
    return x, [left, right, where], [sums, maxima, hot]


def test_multi_node_graph_matches_the_chain_and_reuses_its_buffers(backend: str) -> None:
    device = dml.Device()
    g = dml.Graph(device)
    x, intermediates, outputs = build_chain(g)
    compiled = g.compile(outputs)
    assert [step.desc.OPERATOR_TYPE.name for step in compiled.steps] == ["SPLIT", "REDUCE", "REDUCE", "REDUCE",
                                                                         "ONE_HOT"]
    arena = compiled.arena
    address = compiled.arena.ctypes.data if backend == "cpu" else None
    if backend == "gpu":
        assert isinstance(arena, DeviceMemory)                  # intermediates stay in device memory
    bindings = {id(expression): compiled.binding_of(expression) for expression in [x, *intermediates, *outputs]}
    rng = np.random.default_rng(6)
    previous: list[NDArray] | None = None
    previous_sums = np.zeros(0, np.float32)
    for _ in range(4):
        data = rng.standard_normal((4, 6)).astype(np.float32)
        kept = data.copy()
        results = compiled({"x": data})
        expected = chain_by_operators(device, data)
        for result, reference in zip(results, expected, strict=True):
            np.testing.assert_array_equal(result, reference)
        np.testing.assert_array_equal(results[0][:, 0], data[:, :2].sum(axis=1, dtype=np.float32))
        np.testing.assert_array_equal(results[1][:, 0], data[:, 2:].max(axis=1))
        np.testing.assert_array_equal(results[2].argmax(axis=1), data[:, 2:].argmax(axis=1))
        np.testing.assert_array_equal(data, kept)                    # inputs are never modified
        # Planned once: the same arena, the same bindings, dispatch after dispatch.
        assert compiled.arena is arena
        if backend == "cpu":
            assert compiled.arena.ctypes.data == address
        assert all(compiled.binding_of(expression) is bindings[id(expression)]
                   for expression in [x, *intermediates, *outputs])
        # Results are fresh arrays: the next dispatch does not change them.
        if previous is not None:
            # Host arrays of their own (on the gpu the arena is device memory: nothing can share it).
            assert all(isinstance(result, np.ndarray) and result.flags.owndata for result in previous)
            if backend == "cpu":
                assert all(not np.shares_memory(result, arena) for result in previous)
            np.testing.assert_array_equal(previous[0], previous_sums)
        previous, previous_sums = results, results[0].copy()


def test_tensors_past_the_element_limit_wait_for_a_kernel_that_sees_them_whole(backend: str) -> None:
    # README, Rulings (graphs on Dask): a graph's tensors are logical; DECISIONS 2's limit applies where a kernel
    # sees a tensor whole (the first NumPy dispatch on the cpu) and to every Dask chunk.
    limit = r" it must be below 2\^32"
    g = dml.Graph(dml.Device())
    x = g.input([2**21, 4096], "FLOAT32", name="x")                 # 2^33 elements, 32 GiB
    if backend == "gpu":      # a gpu tensor is one storage buffer binding (at most 4 GiB), checked as it is built
        with pytest.raises(dml.UnsupportedError, match=r"InputTensor.TotalTensorSizeInBytes is 34359738368; the gpu "
                                                        r"backend binds a tensor as one storage buffer range"):
            dml.reduce(x, "SUM", [0])
        return
    total = dml.reduce(x, "SUM", [0])
    g_hot = dml.Graph(dml.Device())
    indices = g_hot.input([2**20, 1], "UINT32", name="indices")
    hot = dml.one_hot(indices, g_hot.constant(np.array([[0, 1]], np.float32)), 2**13, 1)  # a 2^33-element output
    too_big_input = (r"Graph.input: x has its last element at index 8589934591; with Sizes \[2097152, 4096\] and "
                     r"Strides \[4096, 1\]" + limit)
    too_big_output = r"DML_OPERATOR_ONE_HOT: OutputTensor has its last element at index 8589934591;.*" + limit
    # The cpu plans a 32 GiB (and a 64 GiB) arena and allocates none of it: more than this machine holds.
    compiled = g.compile([total])
    compiled_hot = g_hot.compile([hot])
    assert compiled.arena_size >= 2**35 and compiled_hot.arena_size >= 2**35
    ones = np.broadcast_to(np.float32(1), (2**21, 4096))           # a NumPy array of that shape, in 4 bytes
    for _ in range(2):
        with pytest.raises(dml.ValidationError, match=too_big_input):
            compiled({"x": ones})
        with pytest.raises(dml.ValidationError, match=too_big_output):
            compiled_hot({"indices": np.zeros((2**20, 1), np.uint32)})
        with pytest.raises(dml.ValidationError, match=too_big_input):
            compiled.binding_of(x)
    # A descriptor on its own, and a constant (its data is here), keep the limit where they are made.
    with pytest.raises(dml.ValidationError,
                       match=r"DML_OPERATOR_REDUCE \(Function SUM\): InputTensor has its last element.*" + limit):
        dml.Device().create_operator(dml.ReduceOperatorDesc("SUM", x.desc, total.desc, [0]))


def test_one_submission_per_dispatch_on_the_gpu(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # On the gpu the arena is device memory: a dispatch writes each input once, records every node into one
    # submission and reads the outputs back in one transfer (they lie within READ_GAP_BYTES of each other); the
    # constant (off_on) was uploaded when the graph was compiled. On the cpu the arena is host memory.
    g = graph()
    x, _, outputs = build_chain(g)
    compiled = g.compile(outputs)
    data = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::-1].copy()
    expected = compiled({x: data}) if backend == "cpu" else chain_by_operators(dml.Device(backend="cpu"), data)
    if backend == "cpu":
        assert type(compiled.arena) is np.ndarray
    else:
        from opendml.backends.gpu.context import GpuContext, Recorder

        assert isinstance(compiled.arena, DeviceMemory)
        calls: list[str] = []

        def counted(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
            def call(self: Any, *args: Any) -> Any:
                calls.append(name)
                return original(self, *args)
            return call

        for owner, name in ((GpuContext, "write"), (GpuContext, "read"), (Recorder, "submit")):
            monkeypatch.setattr(owner, name, counted(name, getattr(owner, name)))
        results = compiled({x: data})
        assert calls == ["write", "submit", "read"]
        for result, reference in zip(results, expected, strict=True):
            np.testing.assert_array_equal(result, reference)
    assert expected[0].reshape(-1).tolist() == [9, 21, 33, 45]


def write_arena(compiled: CompiledGraph, expression: dml.Expression, array: NDArray) -> None:
    """A packed tensor's data into its range of the arena (device or host memory)."""
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    offset = compiled.binding_of(expression).offset
    arena = compiled.arena
    if isinstance(arena, DeviceMemory):
        arena.write(data, offset)  # type: ignore[attr-defined]
    else:
        arena[offset: offset + data.size] = data


def read_arena(compiled: CompiledGraph, expression: dml.Expression) -> NDArray:
    """A packed tensor's current data in the arena."""
    desc = expression.desc
    offset = compiled.binding_of(expression).offset
    arena = compiled.arena
    raw = np.frombuffer(arena.read(), np.uint8) if isinstance(arena, DeviceMemory) else arena
    dtype = desc.data_type.numpy_dtype
    return raw[offset: offset + desc.total_tensor_size_in_bytes].view(dtype).reshape(desc.sizes).copy()


def test_run_works_on_the_arena_as_it_stands(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """run() runs every node on the planned buffers without writing inputs or reading outputs. On the gpu the first
    run records the nodes' dispatches and later runs replay them (no execute, no binding): each replay reads the
    arena's current data."""
    g = graph()
    x, _, outputs = build_chain(g)
    compiled = g.compile(outputs)
    cpu = dml.Device(backend="cpu")
    rng = np.random.default_rng(5)
    datasets = [rng.permutation(24).astype(np.float32).reshape(4, 6) for _ in range(4)]
    references = [chain_by_operators(cpu, data) for data in datasets]

    def check_a_run(index: int) -> None:
        write_arena(compiled, x, datasets[index])
        compiled.run()
        for output, expected in zip(outputs, references[index], strict=True):
            np.testing.assert_array_equal(read_arena(compiled, output), expected)

    check_a_run(0)
    if backend == "cpu":
        assert compiled._replay is None
        check_a_run(1)
        return
    # One dispatch per node but the REDUCEs' and SPLIT's (two passes each: SPLIT's two parts, ...), all captured.
    assert compiled._replay is not None and len(compiled._replay) >= len(compiled.steps)

    from opendml.backends.gpu.context import Recorder

    def no_dispatch(*args: Any) -> None:
        raise AssertionError("a replayed graph bound and recorded a kernel again")

    monkeypatch.setattr(Recorder, "dispatch", no_dispatch)   # every kernel's record() goes through it
    check_a_run(1)
    check_a_run(2)
    for result, expected in zip(compiled({x: datasets[3]}), references[3], strict=True):
        np.testing.assert_array_equal(result, expected)


def test_a_debug_device_checks_the_data_of_every_run(backend: str) -> None:
    """A graph on a debug device checks GATHER_ND1's coordinates at every dispatch (on the gpu, nothing is
    replayed there), so that the second bad call is refused as the first was."""
    g = dml.Graph(dml.Device(debug=True))
    x = g.input([3, 2], "FLOAT32", name="x")
    i = g.input([2, 1], "INT32", name="i")
    compiled = g.compile([dml.gather_nd(x, i, 2, 2, 0)])
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert compiled({"x": rows, "i": np.array([[2], [0]], np.int32)})[0].tolist() == [[4, 5], [0, 1]]
    bad = np.array([[1], [3]], np.int32)
    message = r"IndicesTensor\[1, 0\] is 3, out of range"
    for _ in range(2):
        with pytest.raises(dml.BindingError, match=message):
            compiled({"x": rows, "i": bad})
    assert compiled({"x": rows, "i": np.array([[1], [-1]], np.int32)})[0].tolist() == [[2, 3], [4, 5]]


def test_outputs_follow_the_order_asked_and_may_repeat() -> None:
    g = graph()
    x, _, (sums, maxima, hot) = build_chain(g)
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    results = g.compile([hot, sums, hot, maxima])({x: data})
    assert [result.shape for result in results] == [(4, 4), (4, 1), (4, 4), (4, 1)]
    np.testing.assert_array_equal(results[0], results[2])
    assert results[1].reshape(-1).tolist() == [1, 13, 25, 37]


def test_an_output_that_other_nodes_also_read() -> None:
    g = graph()
    x = g.input([2, 4], "FLOAT32", name="x")
    normalized = dml.mean_variance_normalization(x, axes=[1], epsilon=0.0)
    total = dml.reduce(normalized, "SUM_SQUARE", [1])
    data = np.array([[1, 2, 3, 4], [0, 0, 1, 1]], np.float32)
    out_normalized, out_total = g.compile([normalized, total])({"x": data})
    centered = data - data.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(out_normalized, centered / centered.std(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(out_total.reshape(-1), [4, 4], rtol=1e-5)         # N * variance / variance


def test_intermediates_with_disjoint_lifetimes_share_memory() -> None:
    # x -> m -> a -> b -> total: each tensor dies at the step that reads it, so a can live where x was and b
    # where m was; a tensor never shares memory with one alive at the same step.
    g = graph()
    x = g.input([4, 8], "FLOAT32", name="x")
    m = dml.mean_variance_normalization(x, axes=[1], normalize_variance=False)
    a = dml.mean_variance_normalization(m, axes=[1], normalize_variance=False)
    b = dml.mean_variance_normalization(a, axes=[1], fused_activation=dml.FusedActivation.relu())
    total = dml.reduce(b, "SUM", [1])
    compiled = g.compile([total])
    plan = {name: compiled.plan_of(expression) for name, expression in
            {"x": x, "m": m, "a": a, "b": b, "total": total}.items()}
    assert [plan[name].kind for name in plan] == ["input", "intermediate", "intermediate", "intermediate", "output"]
    assert (plan["a"].offset, plan["b"].offset) == (plan["x"].offset, plan["m"].offset)
    assert all(not first.overlaps(second) for first, second in itertools.combinations(compiled.buffer_plan, 2))
    assert all(buffer.offset % 64 == 0 for buffer in compiled.buffer_plan)
    assert compiled.arena.size < sum(buffer.size for buffer in compiled.buffer_plan)
    rng = np.random.default_rng(1)
    for _ in range(3):
        data = rng.standard_normal((4, 8)).astype(np.float32)
        (result,) = compiled({"x": data})
        centered = data.astype(np.float64) - data.mean(axis=1, keepdims=True)
        normalized = centered / np.sqrt(centered.var(axis=1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(result[:, 0], np.maximum(normalized, 0).sum(axis=1), rtol=1e-4, atol=1e-5)


def test_planned_buffer_overlap_rule() -> None:
    early = PlannedBuffer("early", "intermediate", 0, 128, 0, 1)
    assert early.overlaps(PlannedBuffer("same step", "intermediate", 64, 64, 1, 2))    # read and written at 1
    assert not early.overlaps(PlannedBuffer("later", "intermediate", 0, 128, 2, 3))
    assert not early.overlaps(PlannedBuffer("beside", "intermediate", 128, 64, 0, 3))


def test_unread_split_output_still_gets_a_buffer() -> None:
    g = graph()
    x = g.input([6], "FLOAT32", name="x")
    first, _unused = dml.split(x, 0, [2, 4])
    (result,) = g.compile([dml.reduce(first, "SUM")])({"x": np.arange(6, dtype=np.float32)})
    assert result.tolist() == [1]


def test_strided_inputs_are_laid_out_at_their_strides() -> None:
    g = graph()
    transposed = g.input([3, 3], "FLOAT32", name="t", strides=[1, 3])
    broadcast = g.input([3, 3], "FLOAT32", name="b", strides=[0, 1])      # one row, read three times
    compiled = g.compile([dml.reduce(transposed, "SUM", [0]), dml.reduce(broadcast, "SUM", [0])])
    column_sums, tripled = compiled({"t": REDUCE_PAGE_INPUT, "b": np.tile(np.float32([1, 2, 3]), (3, 1))})
    assert column_sums.tolist() == [[6, 6, 9]]
    assert tripled.tolist() == [[3, 6, 9]]
    with pytest.raises(dml.BindingError, match=r"input 'b' differs where its strides map two elements onto one"):
        compiled({"t": REDUCE_PAGE_INPUT, "b": REDUCE_PAGE_INPUT})


def test_large_inputs_bound_in_place_or_copied(backend: str) -> None:
    # From ZERO_COPY_MIN_BYTES on, a C-contiguous array is bound where it lies; any other array is copied in. On the
    # gpu every input is copied into the device arena (host memory is not the device's).
    g = graph()
    x = g.input([256, 512], "FLOAT32", name="x")                # 512 KiB
    sums = dml.reduce(x, "SUM", [1])
    halves = dml.split(x, 0, [128, 128])
    compiled = g.compile([sums, dml.reduce(halves[1], "MAX", [0])])
    rng = np.random.default_rng(3)
    wide = rng.standard_normal((256, 1024)).astype(np.float32)
    read_only = np.ascontiguousarray(wide[:, :512])
    read_only.flags.writeable = False
    plan = compiled.plan_of(x)
    start, end = plan.offset + 8192, plan.offset + plan.size                 # past what later tensors reuse of x
    for data, in_place in ((np.ascontiguousarray(wide[:, 512:]), True), (wide[:, ::2], False),
                           (np.asfortranarray(wide[:, :512]), False), (read_only, True)):
        if backend == "cpu":
            tail = compiled.arena[start:end]
            tail[...] = 0xAB
        else:
            in_place = False
            compiled.arena.write(np.full(end - start, 0xAB, np.uint8), start)
        total, maxima = compiled({"x": data})
        if backend == "gpu":
            tail = np.frombuffer(compiled.arena.read(), np.uint8)[start:end]
            # The tail holds the input's own bytes, as written into the device arena.
            np.testing.assert_array_equal(tail, np.ascontiguousarray(data).view(np.uint8).reshape(-1)[8192:])
        assert bool((tail == 0xAB).all()) is in_place
        np.testing.assert_allclose(total[:, 0], data.sum(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(maxima[0], data[128:].max(axis=0))
    # After a dispatch the operators read the arena again: no caller's array is held.
    held = np.ascontiguousarray(wide[:, 512:])
    reference = weakref.ref(held)
    compiled({"x": held})
    del held
    assert reference() is None
    assert compiled.steps[0].desc.OPERATOR_TYPE is dml.OperatorType.REDUCE


def test_constants_are_copied_when_made() -> None:
    g = graph()
    i = g.input([2, 1], "UINT32", name="i")
    off_on = np.array([[0, 1]], np.float32)
    v = g.constant(off_on)
    off_on[:] = 7                                   # too late: the constant holds [0, 1]
    (result,) = g.compile([dml.one_hot(i, v, 3, 1)])({"i": np.array([[2], [0]], np.uint32)})
    assert result.tolist() == [[0, 0, 1], [1, 0, 0]]
    assert v.desc.flags == dml.TensorFlags.OWNED_BY_DML
    assert v.name == "constant1"


def test_a_non_contiguous_constant_read_by_two_nodes() -> None:
    g = graph()
    table = g.constant(np.arange(6, dtype=np.float32).reshape(2, 3).T)        # Fortran order: [[0,3],[1,4],[2,5]]
    rows = g.input([2, 1], "INT32", name="rows")
    picked = dml.gather_nd(table, rows, 2, 2)
    total = dml.reduce(table, "SUM", [0])
    picked_out, total_out = g.compile([picked, total])({"rows": np.array([[2], [-3]], np.int32)})
    assert picked_out.tolist() == [[2, 5], [0, 3]]             # -3 counts from the end: row 0
    assert total_out.tolist() == [[3, 12]]


def test_mvn_scale_and_bias_as_inputs() -> None:
    g = graph()
    x = g.input([2, 2], "FLOAT32", name="x")
    scale, bias = g.input([1, 2], "FLOAT32", name="scale"), g.input([2, 1], "FLOAT32", name="bias")
    y = dml.mean_variance_normalization(x, scale, bias, axes=[0], epsilon=0.0)
    (output,) = g.compile([y])({"x": np.array([[1, 10], [3, 30]], np.float32),
                                "scale": np.array([[1, 2]], np.float32), "bias": np.array([[0], [100]], np.float32)})
    # Each column's deviations are -1 and +1 standard deviations.
    np.testing.assert_allclose(output, [[-1, -2], [101, 102]], rtol=1e-6)


def test_names_enum_values_and_flags() -> None:
    g = graph()
    x = g.input([2, 3], np.float16, name="x")
    assert x.dtype is dml.DataType.FLOAT16 and x.graph is g and x.operator_desc is None
    y = dml.reduce(x, "DML_REDUCE_FUNCTION_ARGMIN", [1], output_dtype="DML_TENSOR_DATA_TYPE_INT64")
    z = dml.reduce(x, 11, [0])                                      # 11 = SUM_SQUARE
    assert (y.dtype, z.operator_desc.function) == (dml.DataType.INT64, dml.ReduceFunction.SUM_SQUARE)  # type: ignore[union-attr]
    assert repr(y) == "Expression('DML_OPERATOR_REDUCE #1 OutputTensor', INT64, sizes=[2, 1])"
    for flags in ("ALLOW_HALF_PRECISION_COMPUTATION", ["DML_EXECUTION_FLAG_DISABLE_META_COMMANDS"],
                  dml.ExecutionFlags.NONE):
        compiled = g.compile([y, z], flags=flags)
        assert {step.flags for step in compiled.steps} == {dml.ExecutionFlags.parse(flags)}
        argmin, squares = compiled({"x": np.array([[3, 1, 2], [0, 5, -1]], np.float16)})
        assert argmin.reshape(-1).tolist() == [1, 2]
        assert squares.reshape(-1).tolist() == [9, 26, 5]


def test_unnamed_inputs_are_named_by_index() -> None:
    g = graph()
    first, second = g.input([2], "FLOAT32"), g.input([2], "FLOAT32")
    assert (first.name, second.name) == ("input0", "input1")
    assert g.inputs == (first, second)


# -- FusedActivation ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("factory", "arguments", "operator_type", "parameters"), [
    (dml.FusedActivation.elu, {}, "ELU", {"Alpha": 1.0}),
    (dml.FusedActivation.hard_sigmoid, {}, "HARD_SIGMOID", {"Alpha": 0.2, "Beta": 0.5}),
    (dml.FusedActivation.identity, {}, "IDENTITY", {}),
    (dml.FusedActivation.leaky_relu, {}, "LEAKY_RELU", {"Alpha": 0.01}),
    (dml.FusedActivation.linear, {"alpha": 2.0, "beta": -1.0}, "LINEAR", {"Alpha": 2.0, "Beta": -1.0}),
    (dml.FusedActivation.parametric_softplus, {"alpha": 3.0, "beta": 0.5}, "PARAMETRIC_SOFTPLUS",
     {"Alpha": 3.0, "Beta": 0.5}),
    (dml.FusedActivation.relu, {}, "RELU", {}),
    (dml.FusedActivation.scaled_elu, {}, "SCALED_ELU",
     {"Alpha": 1.67326319217681884765625, "Gamma": 1.05070102214813232421875}),
    (dml.FusedActivation.scaled_tanh, {}, "SCALED_TANH", {"Alpha": 1.0, "Beta": 0.5}),
    (dml.FusedActivation.sigmoid, {}, "SIGMOID", {}),
    (dml.FusedActivation.softplus, {}, "SOFTPLUS", {"Steepness": 1.0}),
    (dml.FusedActivation.softsign, {}, "SOFTSIGN", {}),
    (dml.FusedActivation.tanh, {}, "TANH", {}),
    (dml.FusedActivation.thresholded_relu, {}, "THRESHOLDED_RELU", {"Alpha": 1.0}),
    (dml.FusedActivation.shrink, {}, "SHRINK", {"Bias": 0.0, "Threshold": 0.5}),
    (dml.FusedActivation.celu, {}, "CELU", {"Alpha": 1.0}),
    (dml.FusedActivation.gelu, {}, "GELU", {}),
    (dml.FusedActivation.elu, {"alpha": 0.25}, "ELU", {"Alpha": 0.25}),
])
def test_fused_activation_factories_have_directmlx_defaults(factory: Callable[..., dml.FusedActivation],
                                                            arguments: dict[str, float], operator_type: str,
                                                            parameters: dict[str, float]) -> None:
    activation = factory(**arguments)
    assert activation.desc is not None and activation.desc.is_fused_form
    assert activation.desc.OPERATOR_TYPE is dml.OperatorType["ACTIVATION_" + operator_type]
    assert activation.desc.parameters() == parameters
    g = graph()
    y = dml.mean_variance_normalization(g.input([1, 4], "FLOAT32"), axes=[1], fused_activation=activation)
    assert y.operator_desc.fused_activation is activation.desc                    # type: ignore[union-attr]


def test_fused_activation_none_and_a_bare_descriptor() -> None:
    assert dml.FusedActivation.none().desc is None
    g = graph()
    x = g.input([1, 4], "FLOAT32")
    plain = dml.mean_variance_normalization(x, axes=[1], fused_activation=dml.FusedActivation.none())
    assert plain.operator_desc.fused_activation is None                           # type: ignore[union-attr]
    relu = dml.ActivationReluOperatorDesc()
    assert dml.mean_variance_normalization(x, axes=[1], fused_activation=relu).operator_desc.fused_activation is relu  # type: ignore[union-attr]


def test_fused_activation_checked_at_the_devices_level() -> None:
    g = graph("5_0")
    x = g.input([1, 4], "FLOAT32")
    with pytest.raises(dml.UnsupportedError, match=r"FusedActivation \(DML_OPERATOR_ACTIVATION_GELU\) needs feature "
                                                   r"level 5_1; the device is at 5_0"):
        dml.mean_variance_normalization(x, axes=[1], fused_activation=dml.FusedActivation.gelu())
    with pytest.raises(dml.UnsupportedError, match=r"Steepness 0.5 needs feature level 6_4"):
        dml.mean_variance_normalization(x, axes=[1], fused_activation=dml.FusedActivation.softplus(0.5))


# -- each function checks its descriptor at once, with create_operator's messages -------------------------------

T = dml.TensorDesc


@pytest.mark.parametrize(("build", "desc"), [
    (lambda g: dml.reduce(g.input([3, 3], "FLOAT32"), "SUM", [2]),
     dml.ReduceOperatorDesc("SUM", T(F32, [3, 3]), T(F32, [3, 3]), [2])),
    (lambda g: dml.reduce(g.input([3, 3], "FLOAT32"), "SUM", [0, 0]),
     dml.ReduceOperatorDesc("SUM", T(F32, [3, 3]), T(F32, [1, 3]), [0, 0])),
    (lambda g: dml.reduce(g.input([3, 3], "INT8"), "SUM", [0]),
     dml.ReduceOperatorDesc("SUM", T("INT8", [3, 3]), T("INT8", [1, 3]), [0])),
    (lambda g: dml.reduce(g.input([3, 3], "FLOAT32"), "MAX", [0], output_dtype="INT32"),
     dml.ReduceOperatorDesc("MAX", T(F32, [3, 3]), T("INT32", [1, 3]), [0])),
    (lambda g: dml.reduce(g.input([300], "FLOAT32"), "ARGMAX", output_dtype="INT8"),
     dml.ReduceOperatorDesc("ARGMAX", T(F32, [300]), T("INT8", [1]), [0])),
    (lambda g: dml.split(g.input([1, 1, 6, 2], "FLOAT32"), 2, [2, 2, 3]),
     dml.SplitOperatorDesc(T(F32, [1, 1, 6, 2]), [T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 3, 2])],
                           2)),
    (lambda g: dml.split(g.input([6, 2], "FLOAT32"), 2, [6]),
     dml.SplitOperatorDesc(T(F32, [6, 2]), [T(F32, [6, 2])], 2)),
    (lambda g: dml.split(g.input([6], "FLOAT32"), 0, []),
     dml.SplitOperatorDesc(T(F32, [6]), [], 0)),
    (lambda g: dml.split(g.input([6], "FLOAT32"), 0, [6, 0]),
     dml.SplitOperatorDesc(T(F32, [6]), [T(F32, [6]), T(F32, [0])], 0)),
    (lambda g: dml.one_hot(g.input([3, 1], "FLOAT32"), g.input([1, 2], "FLOAT32"), 4, 1),
     dml.OneHotOperatorDesc(T(F32, [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 1)),
    (lambda g: dml.one_hot(g.input([3, 2], "UINT32"), g.input([1, 2], "FLOAT32"), 4, 1),
     dml.OneHotOperatorDesc(T("UINT32", [3, 2]), T(F32, [1, 2]), T(F32, [3, 4]), 1)),
    (lambda g: dml.one_hot(g.input([3, 1], "UINT32"), g.input([1, 1], "FLOAT32"), 4, 1),
     dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [1, 1]), T(F32, [3, 4]), 1)),
    (lambda g: dml.one_hot(g.input([3, 1], "UINT32"), g.input([2], "FLOAT32"), 4, 1),
     dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [2]), T(F32, [3, 4]), 1)),
    (lambda g: dml.one_hot(g.input([3, 1], "UINT32"), g.input([1, 2], "FLOAT32"), 4, 2),
     dml.OneHotOperatorDesc(T("UINT32", [3, 1]), T(F32, [1, 2]), T(F32, [3, 1]), 2)),
    (lambda g: dml.mean_variance_normalization(g.input([2, 3], "FLOAT32"), g.input([2, 3], "FLOAT16"), axes=[1]),
     dml.MeanVarianceNormalization1OperatorDesc(T(F32, [2, 3]), T("FLOAT16", [2, 3]), None, T(F32, [2, 3]), [1],
                                                True, 1e-5)),
    (lambda g: dml.mean_variance_normalization(g.input([2, 3], "FLOAT32"), axes=[]),
     dml.MeanVarianceNormalization1OperatorDesc(T(F32, [2, 3]), None, None, T(F32, [2, 3]), [], True, 1e-5)),
    (lambda g: dml.mean_variance_normalization(g.input([2, 3], "INT32"), axes=[1]),
     dml.MeanVarianceNormalization1OperatorDesc(T("INT32", [2, 3]), None, None, T("INT32", [2, 3]), [1], True,
                                                1e-5)),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1], "UINT32"), 2, 2, 2),
     dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 2, 2, 2)),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 3], "UINT32"), 2, 2, 0),
     dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 3]), T(F32, [2, 2]), 2, 2, 0)),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1, 1], "UINT32"), 2, 2, 0),
     dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1, 1]), T(F32, [2, 2]), 2, 2, 0)),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1], "UINT32"), 3, 2, 0),
     dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T("UINT32", [2, 1]), T(F32, [2, 2]), 3, 2, 0)),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1], "FLOAT32"), 2, 2, 0),
     dml.GatherNd1OperatorDesc(T(F32, [2, 2]), T(F32, [2, 1]), T(F32, [2, 2]), 2, 2, 0)),
])
def test_functions_raise_what_create_operator_raises(build: Callable[[dml.Graph], object],
                                                     desc: dml.OperatorDesc) -> None:
    device = dml.Device()
    with pytest.raises(dml.DmlError) as expected:
        device.create_operator(desc)
    g = dml.Graph(device)
    with pytest.raises(type(expected.value), match=f"^{re.escape(str(expected.value))}$"):
        build(g)


@pytest.mark.parametrize(("level", "build", "error", "message"), [
    ("2_1", lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1], "UINT32"), 2, 2),
     dml.UnsupportedError, r"^DML_OPERATOR_GATHER_ND1 needs feature level 3_0; the device is at 2_1$"),
    ("2_0", lambda g: dml.mean_variance_normalization(g.input([1, 1, 2, 2], "FLOAT32"), axes=[2, 3]),
     dml.UnsupportedError, r"^DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 needs feature level 2_1"),
    ("2_1", lambda g: dml.reduce(g.input([3, 3], "FLOAT32"), "SUM", [0]),
     dml.UnsupportedError, r"InputTensor.DimensionCount 2 needs feature level 3_0; the device is at 2_1"),
    ("4_0", lambda g: dml.split(g.input([6], "FLOAT64"), 0, [3, 3]),
     dml.UnsupportedError, r"InputTensor.DataType FLOAT64 needs feature level 4_1; the device is at 4_0"),
    ("3_0", lambda g: dml.mean_variance_normalization(g.input([2, 3], "FLOAT32"), axes=[1]),
     dml.UnsupportedError, r"needs feature level 3_1; the device is at 3_0"),
])
def test_feature_level_checked_when_built(level: str, build: Callable[[dml.Graph], object], error: type[Exception],
                                          message: str) -> None:
    with pytest.raises(error, match=message):
        build(graph(level))


@pytest.mark.parametrize(("build", "message"), [
    (lambda g: dml.reduce(g.input([3], "FLOAT32"), "SUMM"),
     r"^DML_OPERATOR_REDUCE: Function is 'SUMM'; it must be one of ARGMAX, .*"),
    (lambda g: dml.reduce(g.input([3], "FLOAT32"), "SUM", [1.0]),
     r"^DML_OPERATOR_REDUCE: Axes\[0\] is 1.0; it must be an integer in \[0, 2\^32\)$"),
    (lambda g: dml.reduce(g.input([3], "FLOAT32"), "SUM", output_dtype="FLOAT8"),
     r"^dml.reduce: output_dtype is 'FLOAT8' \(neither a DML data type nor a NumPy dtype\); it must be a DataType"),
    (lambda g: dml.split(g.input([6], "FLOAT32"), 0, [3, -3]),
     r"^DML_OPERATOR_SPLIT: sizes\[1\] is -3; it must be an integer in \[0, 2\^32\)$"),
    (lambda g: dml.split(g.input([6], "FLOAT32"), True, [6]),
     r"^DML_OPERATOR_SPLIT: Axis is True; it must be an integer in \[0, 2\^32\)$"),
    (lambda g: dml.one_hot(g.input([3, 1], "UINT32"), g.input([1, 2], "FLOAT32"), 2.5, 1),
     r"^DML_OPERATOR_ONE_HOT: output_length \(OutputTensor.Sizes\[Axis\]\) is 2.5; it must be an integer"),
    (lambda g: dml.gather_nd(g.input([2, 2], "FLOAT32"), g.input([2, 1], "UINT32"), 2, 2, -1),
     r"^DML_OPERATOR_GATHER_ND1: BatchDimensionCount is -1; it must be an integer in \[0, 2\^32\)$"),
    (lambda g: dml.mean_variance_normalization(g.input([2, 3], "FLOAT32"), axes=[1], epsilon=float("nan")),
     r"^DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: Epsilon is nan; it must be a finite FLOAT"),
    (lambda g: dml.reduce("x", "SUM"), r"^dml.reduce: x is 'x'; it must be a dml.Expression$"),   # type: ignore[arg-type]
    (lambda g: dml.split(None, 0, [1]), r"^dml.split: x is None; it must be a dml.Expression$"),  # type: ignore[arg-type]
    (lambda g: dml.one_hot(g.input([3, 1], "UINT32"), None, 4, 1),  # type: ignore[arg-type]
     r"^dml.one_hot: values is None; it must be a dml.Expression$"),
    (lambda g: dml.join([], 0), r"^dml.join: inputs is \[\]; it must be a non-empty list of dml.Expression$"),
    (lambda g: dml.join(g.input([3], "FLOAT32"), 0),  # type: ignore[arg-type]
     r"^dml.join: inputs is Expression\(.*\); it must be a non-empty list of dml.Expression$"),
    (lambda g: dml.join([g.input([3], "FLOAT32"), 3], 0),  # type: ignore[list-item]
     r"^dml.join: inputs\[1\] is 3; it must be a dml.Expression$"),
    (lambda g: dml.arg_max(g.input([3], "FLOAT32"), axis_direction="SIDEWAYS"),
     r"^DML_OPERATOR_ARGMAX: AxisDirection is 'SIDEWAYS'; it must be one of INCREASING, DECREASING"),
    (lambda g: dml.activation_linear(g.input([3], "FLOAT32"), 1.0),
     r"^dml.activation_linear: missing a required argument: 'beta'; its signature is activation_linear\(x: "),
    (lambda g: dml.activation_relu(g.input([3], "FLOAT32"), 0.5),
     r"^dml.activation_relu: too many positional arguments; its signature is activation_relu\(x: "),
    (lambda g: dml.activation_elu(g.input([3], "FLOAT32"), beta=2.0),
     r"^dml.activation_elu: got an unexpected keyword argument 'beta'"),
    (lambda g: dml.activation_tanh(np.zeros(3)),
     r"^dml.activation_tanh: x is \[0.0, 0.0, 0.0\] \(1-d ndarray of float64\); it must be a dml.Expression$"),
    (lambda g: dml.mean_variance_normalization(g.input([1, 1, 2, 2], "FLOAT32")),
     r"^dml.mean_variance_normalization: give either axes \(MEAN_VARIANCE_NORMALIZATION1\) or cross_channel "
     r"\(MEAN_VARIANCE_NORMALIZATION\), not neither$"),
    (lambda g: dml.mean_variance_normalization(g.input([1, 1, 2, 2], "FLOAT32"), axes=[2, 3], cross_channel=True),
     r"not both$"),
])
def test_bad_arguments(build: Callable[[dml.Graph], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        build(graph())


# -- negative axes ------------------------------------------------------------------------------------------------

def _off_on(x: dml.Expression) -> dml.Expression:
    return x.graph.constant(np.array([[[0, 1]]], np.float32))


# (build with Python's negative axes, build with DML's axes), on inputs of rank 3 ([2, 3, 4]) unless said otherwise.
NEGATIVE_AXES: dict[str, tuple[Callable[[dml.Expression], Any], Callable[[dml.Expression], Any]]] = {
    "reduce": (lambda x: dml.reduce(x, "SUM", axes=[-1, 0]), lambda x: dml.reduce(x, "SUM", axes=[2, 0])),
    "reduce -3": (lambda x: dml.reduce(x, "MAX", [-3]), lambda x: dml.reduce(x, "MAX", [0])),
    "arg_max": (lambda x: dml.arg_max(x, [-2]), lambda x: dml.arg_max(x, [1])),
    "arg_min": (lambda x: dml.arg_min(x, axes=[-1, -2], axis_direction="DECREASING"),
                lambda x: dml.arg_min(x, axes=[2, 1], axis_direction="DECREASING")),
    "split": (lambda x: dml.split(x, -1, [1, 3]), lambda x: dml.split(x, 2, [1, 3])),
    "join": (lambda x: dml.join([x, x], axis=-2), lambda x: dml.join([x, x], axis=1)),
    "one_hot": (lambda x: dml.one_hot(dml.reduce(x, "ARGMAX", [-1]), _off_on(x), 5, axis=-1),
                lambda x: dml.one_hot(dml.reduce(x, "ARGMAX", [2]), _off_on(x), 5, axis=2)),
    "mean_variance_normalization": (lambda x: dml.mean_variance_normalization(x, axes=[-1, -3]),
                                    lambda x: dml.mean_variance_normalization(x, axes=[2, 0])),
}


def _descs(built: Any) -> list[dml.OperatorDesc | None]:
    return [part.operator_desc for part in (built if isinstance(built, list) else [built])]


@pytest.mark.parametrize("case", NEGATIVE_AXES)
def test_negative_axes_count_from_the_end(case: str) -> None:
    """The graph functions take Python's negative axes (-1: the last) and build DML's descriptor with the axis
    counted from the start, the same descriptor as the positive axis builds."""
    negative, positive = NEGATIVE_AXES[case]
    g = graph()
    x = g.input([2, 3, 4], "FLOAT32", name="x")
    assert _descs(negative(x)) == _descs(positive(x))


def test_negative_axes_compute_what_they_name() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    rows = dml.reduce(x, "SUM", axes=[-1])
    left, right = dml.split(x, -1, [1, 2])
    data = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    outputs = g.compile([rows, left, right, dml.join([right, left], -1)])({"x": data})
    expected = [[[6], [15]], [[1], [4]], [[2, 3], [5, 6]], [[2, 3, 1], [5, 6, 4]]]   # worked out by hand
    assert [output.tolist() for output in outputs] == expected


@pytest.mark.parametrize(("build", "message"), [
    (lambda x: dml.reduce(x, "SUM", [0, -3]),
     r"^dml.reduce: axes\[1\] is -3; it must be an integer in \[-2, 1\] \(x has 2 dimensions; a negative axis "
     r"counts from the end\)$"),
    (lambda x: dml.arg_max(x, [-5]), r"^dml.arg_max: axes\[0\] is -5; it must be an integer in \[-2, 1\] \(x has 2 "),
    (lambda x: dml.arg_min(x, np.array([-3])), r"^dml.arg_min: axes\[0\] is -3; it must be an integer in \[-2, 1\]"),
    (lambda x: dml.split(x, -3, [3]), r"^dml.split: axis is -3; it must be an integer in \[-2, 1\] \(x has 2 "
                                      r"dimensions; a negative axis counts from the end\)$"),
    (lambda x: dml.join([x], np.int8(-3)), r"^dml.join: axis is -3; it must be an integer in \[-2, 1\] "
                                           r"\(inputs\[0\] has 2 dimensions; a negative axis counts from the end\)$"),
    (lambda x: dml.one_hot(x, x.graph.constant(np.array([0, 1], np.float32)), 4, -2**40),
     r"^dml.one_hot: axis is -1099511627776; it must be an integer in \[-2, 1\] \(indices has 2 dimensions; "),
    (lambda x: dml.mean_variance_normalization(x, axes=[-1, -9]),
     r"^dml.mean_variance_normalization: axes\[1\] is -9; it must be an integer in \[-2, 1\] \(x has 2 "),
    (lambda x: dml.reduce(x, "SUM", [1, -1]),
     r"^dml.reduce: axes \[1, -1\] name axis 1 twice \(axes\[1\] is -1, which counts from the end of x's 2 "
     r"dimensions\); each axis may appear once$"),
    (lambda x: dml.arg_max(x, (-2, 0)),
     r"^dml.arg_max: axes \(-2, 0\) name axis 0 twice \(axes\[0\] is -2, which counts from the end of x's 2 "),
    (lambda x: dml.mean_variance_normalization(x, axes=[-1, -1]),
     r"^dml.mean_variance_normalization: axes \[-1, -1\] name axis 1 twice \(axes\[0\] is -1, which counts"),
])
def test_negative_axes_out_of_range_or_repeated(build: Callable[[dml.Expression], object], message: str) -> None:
    """A negative axis below -rank, and one that names an axis named already, are refused naming the function, the
    parameter, the value and the range allowed. (Other wrong axes get the descriptor's own message, as before.)"""
    x = graph().input([3, 3], "FLOAT32", name="x")
    with pytest.raises(dml.ValidationError, match=message):
        build(x)


def test_descriptors_keep_dmls_unsigned_axes() -> None:
    """Negative axes are the graph API's; the descriptors take DML's UINT axes, as DirectML does."""
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_REDUCE: Axes\[0\] is -1; it must be an integer in "
                                                  r"\[0, 2\^32\)$"):
        dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), [-1])


# -- bad graphs ---------------------------------------------------------------------------------------------------

def test_a_cycle_cannot_be_built() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    first = dml.mean_variance_normalization(x, axes=[1])
    second = dml.mean_variance_normalization(first, axes=[1])
    # Expressions and nodes are frozen, and operator functions take only expressions that already exist: an edge
    # back to a later node cannot be made.
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.node.inputs = (second, None, None)     # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.node = second.node                      # type: ignore[misc]
    # Forced past the API, compile refuses it, as CompileGraph refuses a DML_GRAPH_DESC that is not a DAG.
    object.__setattr__(first.node, "inputs", (second, None, None))
    with pytest.raises(dml.ValidationError, match=r"^Graph.compile: the graph has a cycle \(DML_OPERATOR_MEAN_VARIANCE_"
                                                  r"NORMALIZATION1 #2 -> DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 #1 "
                                                  r"-> DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 #2\); DML_GRAPH_DESC "
                                                  r"must be a directed acyclic graph$"):
        g.compile([second])


def test_expressions_from_two_graphs() -> None:
    device = dml.Device()
    one, other = dml.Graph(device), dml.Graph(device)
    indices = one.input([3, 1], "UINT32", name="i")
    values = other.input([1, 2], "FLOAT32", name="v")
    with pytest.raises(dml.ValidationError, match=r"^dml.one_hot: values belongs to another graph than indices; the "
                                                  r"expressions of one operator must come from the same dml.Graph$"):
        dml.one_hot(indices, values, 4, 1)
    x = one.input([2, 3], "FLOAT32", name="x")
    with pytest.raises(dml.ValidationError, match=r"^dml.mean_variance_normalization: bias belongs to another graph"):
        dml.mean_variance_normalization(x, None, other.constant(np.zeros((1, 3), np.float32)), axes=[1])
    foreign = dml.reduce(values, "SUM")
    with pytest.raises(dml.ValidationError, match=r"^Graph.compile: outputs\[1\] \(DML_OPERATOR_REDUCE #\d+ "
                                                  r"OutputTensor\) belongs to another graph"):
        one.compile([dml.reduce(x, "SUM"), foreign])
    compiled = other.compile([foreign])
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: 'x' is an expression of another graph; its inputs "
                                               r"are 'v'$"):
        compiled({x: np.zeros((2, 3), np.float32)})


def test_unused_declared_input_compiles_with_a_warning() -> None:
    g = graph()
    x = g.input([3], "FLOAT32", name="x")
    unused = g.input([2], "FLOAT32", name="unused")
    total = dml.reduce(x, "SUM")
    with pytest.warns(UserWarning, match=r"^Graph.compile: input 'unused' is not used by any output; dispatches may "
                                         r"leave it out$"):
        compiled = g.compile([total])
    assert compiled.inputs == (x,) and compiled.unused_inputs == (unused,)
    data = np.array([1, 2, 3], np.float32)
    assert compiled({"x": data})[0].tolist() == [6]
    assert compiled({"x": data, "unused": np.zeros(2, np.float32)})[0].tolist() == [6]   # given: checked, not read
    with pytest.raises(dml.BindingError, match=r"input 'unused' has dtype float64"):
        compiled({"x": data, "unused": np.zeros(2)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        every_input_used = dml.Graph(dml.Device())
        every_input_used.compile([dml.reduce(every_input_used.input([1], "FLOAT32"), "SUM")])


def test_outputs_must_be_computed_by_operators_of_this_graph() -> None:
    g = graph()
    x = g.input([3], "FLOAT32", name="x")
    c = g.constant(np.ones(3, np.float32), name="ones")
    total = dml.reduce(x, "SUM")
    for outputs, message in [
        ([x], r"^Graph.compile: outputs\[0\] is the graph input 'x'; a graph output must be computed by an operator"),
        ([total, c], r"^Graph.compile: outputs\[1\] is the graph constant 'ones'"),
        ([], r"^Graph.compile: outputs is empty; a graph needs at least one output"),
        ([total, "x"], r"^Graph.compile: outputs\[1\] is a str; it must be a dml.Expression$"),
        ("x", r"^Graph.compile: outputs is a str; it must be a list of dml.Expression$"),
    ]:
        with pytest.raises(dml.ValidationError, match=message):
            g.compile(outputs)  # type: ignore[arg-type]
    assert g.compile(total)({"x": np.ones(3, np.float32)})[0].tolist() == [3]     # one expression: one output
    with pytest.raises(dml.ValidationError, match=r"^Graph.compile: flags is 'FAST'; it must be one of NONE, "):
        g.compile([total], flags="FAST")


def compiled_pair() -> tuple[CompiledGraph, dml.Expression, dml.Expression, dml.Expression]:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    i = g.input([2, 1], "UINT32", name="i")
    hot = dml.one_hot(i, g.constant(np.array([[0, 1]], np.float32)), 3, 1)
    return g.compile([dml.reduce(x, "SUM", [1]), hot]), x, i, hot


GOOD_X = np.zeros((2, 3), np.float32)
GOOD_I = np.zeros((2, 1), np.uint32)


@pytest.mark.parametrize(("inputs", "message"), [
    ({"x": GOOD_X}, r"^CompiledGraph: input 'i' is missing$"),
    ({}, r"^CompiledGraph: input 'x' is missing \(and 'i'\)$"),
    ({"x": GOOD_X, "i": GOOD_I, "y": GOOD_X}, r"^CompiledGraph: 'y' is not an input of this graph; its inputs are "
                                              r"'x', 'i'$"),
    ({"X": GOOD_X, "i": GOOD_I}, r"^CompiledGraph: 'X' is not an input of this graph"),
    ({"x": GOOD_X.astype(np.float64), "i": GOOD_I},
     r"^CompiledGraph: input 'x' has dtype float64; it must be float32 \(DataType FLOAT32\)$"),
    ({"x": GOOD_X, "i": GOOD_I.astype(np.int32)},
     r"^CompiledGraph: input 'i' has dtype int32; it must be uint32 \(DataType UINT32\)$"),
    ({"x": GOOD_X.T, "i": GOOD_I}, r"^CompiledGraph: input 'x' has shape \[3, 2\]; it must be \[2, 3\]$"),
    ({"x": GOOD_X.tolist(), "i": GOOD_I},
     r"^CompiledGraph: input 'x' must be a NumPy array, a buffer-protocol object \(memoryview\) or an object with "
     r"__dlpack__ or __array__; got list$"),
    ({0: GOOD_X}, r"^CompiledGraph: key 0 is a int; keys must be input names or input Expressions$"),
])
def test_bad_dispatch_inputs(inputs: dict[Any, Any], message: str) -> None:
    compiled, *_ = compiled_pair()
    with pytest.raises(dml.BindingError, match=message):
        compiled(inputs)


def test_bad_dispatch_keys_by_expression() -> None:
    compiled, x, i, hot = compiled_pair()
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: input 'x' is given twice \(by name and by "
                                               r"expression\)$"):
        compiled({"x": GOOD_X, x: GOOD_X, i: GOOD_I})
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: 'DML_OPERATOR_ONE_HOT #3 OutputTensor' is not an "
                                               r"input of this graph \(it is an operator's output\)"):
        compiled({x: GOOD_X, i: GOOD_I, hot: np.zeros((2, 3), np.float32)})
    late = x.graph.input([1], "FLOAT32", name="late")
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: input 'late' was declared after the graph was "
                                               r"compiled; this compiled graph's inputs are 'x', 'i'$"):
        compiled({x: GOOD_X, i: GOOD_I, late: np.zeros(1, np.float32)})
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: 'late' is not an input of this graph"):
        compiled({x: GOOD_X, i: GOOD_I, "late": np.zeros(1, np.float32)})
    with pytest.raises(dml.BindingError, match=r"^CompiledGraph: inputs is a list; it must be a dict"):
        compiled([GOOD_X, GOOD_I])  # type: ignore[arg-type]
    sums, hot_out = compiled({x: np.ones((2, 3), np.float32), i: np.array([[2], [0]], np.uint32)})
    assert sums.reshape(-1).tolist() == [3, 3] and hot_out.tolist() == [[0, 0, 1], [1, 0, 0]]


@pytest.mark.parametrize(("array", "error", "message"), [
    (np.array([True, False]), dml.ValidationError, r"^Graph.constant: array has dtype bool, which has no DML data "
                                                   r"type"),
    (np.array([1 + 2j]), dml.ValidationError, r"^Graph.constant: array has dtype complex128, which has no DML data"),
    (np.array(["a"]), dml.ValidationError, r"^Graph.constant: array has dtype <U1, which has no DML data type"),
    (np.float32(1.0), dml.ValidationError, r"^Graph.constant: array is np.float32\(1.0\); it must be a NumPy array"),
    ([0.0, 1.0], dml.ValidationError, r"^Graph.constant: array is \[0.0, 1.0\]; it must be a NumPy array \(its dtype "
                                      r"gives the DataType\)$"),
    (np.array(1.0, np.float32), dml.ValidationError, r"^Graph.constant: array is 0-dimensional"),
    (np.zeros((0, 2), np.float32), dml.ValidationError, r"^Graph.constant: constant0.Sizes\[0\] is 0; every size "
                                                        r"must be at least 1$"),
    (np.zeros((1,) * 9, np.float32), dml.ValidationError, r"^Graph.constant: constant0.DimensionCount is 9; it must "
                                                          r"be 1 to 8$"),
])
def test_constants_of_the_wrong_type(array: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        graph().constant(array)


def test_constant_of_the_wrong_type_for_its_operator() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: ScaleTensor.DataType "
                                                  r"FLOAT64 is not supported; at feature level 6_4 it must be one of "
                                                  r"FLOAT32, FLOAT16$"):
        dml.mean_variance_normalization(x, g.constant(np.ones((1, 3))), axes=[1])
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_ONE_HOT: IndicesTensor.DataType FLOAT32 is not "
                                                  r"supported"):
        dml.one_hot(g.constant(np.zeros((2, 1), np.float32)), g.input([1, 2], "FLOAT32"), 3, 1)
    with pytest.raises(dml.ValidationError, match=r"^DML_OPERATOR_GATHER_ND1: IndicesTensor.DataType UINT8 is not "
                                                  r"supported; at feature level 6_4 it must be one of INT64, INT32, "
                                                  r"UINT64, UINT32$"):
        dml.gather_nd(x, g.constant(np.zeros((2, 1), np.uint8)), 2, 2)


@pytest.mark.parametrize(("arguments", "error", "message"), [
    (([0, 2], "FLOAT32"), dml.ValidationError, r"^Graph.input: input0.Sizes\[0\] is 0; every size must be at least 1$"),
    (([2], "UINT4"), dml.UnsupportedError, r"^Graph.input: input0.DataType UINT4 is not supported by the BACKEND "
                                           r"backend$"),
    (([2], "BOOL"), dml.ValidationError, r"DataType"),
    (([2, 2], "FLOAT32", {"strides": [1]}), dml.ValidationError, r"Strides has 1 values; it must have one per "
                                                                 r"dimension of Sizes \(2\)"),
    (([2], "FLOAT32", {"name": ""}), dml.ValidationError,
     r"^Graph.input: name is ''; it must be a non-empty string of at most 1024 printable characters$"),
    (([2], "FLOAT32", {"name": "x\x1b[2J"}), dml.ValidationError,
     r"^Graph.input: name is 'x\\x1b\[2J' \(character 1 is '\\x1b'\); it must be a non-empty string of at most 1024 "
     r"printable characters$"),
    ((5, "FLOAT32"), dml.ValidationError, r"^Graph.input: sizes is 5; it must be a list of integers$"),
    (([2], None), dml.ValidationError, r"^Graph.input: dtype is None; it must be a DataType"),
])
def test_bad_inputs(arguments: tuple[Any, ...], error: type[Exception], message: str, backend: str) -> None:
    *positional, keywords = arguments if isinstance(arguments[-1], dict) else (*arguments, {})
    with pytest.raises(error, match=message.replace("BACKEND", backend)):
        graph().input(*positional, **keywords)


def test_names_are_unique() -> None:
    g = graph()
    g.input([2], "FLOAT32", name="x")
    with pytest.raises(dml.ValidationError, match=r"^Graph.constant: name 'x' is already used in this graph; names "
                                                  r"must be unique$"):
        g.constant(np.zeros(2, np.float32), name="x")
    with pytest.raises(dml.ValidationError, match=r"^Graph: device is a str; it must be a dml.Device$"):
        dml.Graph("cpu")  # type: ignore[arg-type]
