"""A compiled dml.Graph on Dask arrays, computed on a distributed.LocalCluster of two worker processes.

Every result is compared with the same compiled graph on NumPy inputs: bit for bit where the CPU backend is exact
(SPLIT, JOIN, ONE_HOT, the gathers, MIN, MAX, ARGMIN, ARGMAX, the standalone activations, integers), and for the
floating reductions and normalizations with the very checkers the CPU backend's own tests hold it to
(`check_reduce_result`, `check_mvn_result`: the exact float64 reference, within the documented bounds).

All tests share one cluster (the session fixture `client`); under `-n` one worker runs them all (pyproject's
addopts: `--dist loadfile`, each test file on one worker; they are also one xdist group, for `--dist loadgroup`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import reference_arg_min_max
from test_mean_variance_normalization1 import ACTIVATION_CLASSES, MvnCase, activation_choices, mvn_cases
from test_mean_variance_normalization1 import check_result as check_mvn_result
from test_reduce_properties import NUMPY_DTYPES, ReduceCase, ReduceLayout, check_reduce_result, reduce_cases

import opendml as dml
from opendml.ops.mean_variance_normalization import CROSS_CHANNEL_AXES

pytestmark = [
    pytest.mark.xdist_group("dask"),
    # The LocalCluster's scheduler runs on a thread of this process and draws from the `random` module (choosing
    # workers) while hypothesis draws an example, which hypothesis reports as a strategy using `random`.
    pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies"),
]

#: Examples per property: half the profile's (30 in CI: every example is a computation on the cluster).
EXAMPLES = max(10, settings.default.max_examples // 2)
REDUCE_FUNCTIONS = [function.name for function in dml.ReduceFunction]
EXACT_REDUCTIONS = {"MIN", "MAX", "ARGMIN", "ARGMAX"}


@pytest.fixture(scope="session")
def client() -> Iterator[Client]:
    """Two worker processes of one thread each, started once for the module's tests and closed at the end."""
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as dask_client:
        yield dask_client


def scheduler_task_count(client: Client) -> int:
    return int(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))


def wait_until_idle(client: Client, timeout: float = 10.0) -> None:
    """Every task released by the scheduler (nothing left running or held)."""
    deadline = time.monotonic() + timeout
    while scheduler_task_count(client) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scheduler_task_count(client) == 0, "tasks are left on the scheduler"


# -- strategies -------------------------------------------------------------------------------------------------------

@st.composite
def chunkings(draw: st.DrawFn, shape: tuple[int, ...], budget: int = 48) -> tuple[tuple[int, ...], ...]:
    """Chunks for each dimension: whole, one-element chunks, or cut at random places (irregular), with at most
    `budget` chunks in all."""
    result: list[tuple[int, ...]] = []
    count = 1
    for size in shape:
        kind = draw(st.sampled_from(["whole", "cut", "ones"]))
        parts: tuple[int, ...] = (size,)
        if kind == "ones" and size > 1:
            parts = (1,) * size
        elif kind == "cut" and size > 1:
            cuts = sorted(draw(st.sets(st.integers(1, size - 1), min_size=1, max_size=min(3, size - 1))))
            edges = [0, *cuts, size]
            parts = tuple(high - low for low, high in itertools.pairwise(edges))
        if count * len(parts) > budget:
            parts = (size,)
        count *= len(parts)
        result.append(parts)
    return tuple(result)


def on_dask(array: np.ndarray, chunks: tuple[tuple[int, ...], ...]) -> Any:
    return da.from_array(array, chunks=chunks)


def assert_same(got: np.ndarray, expected: np.ndarray) -> None:
    """The same dtype, shape and values (NaN where NaN; -0 and +0 alike, as MIN/MAX may pick either)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    assert np.array_equal(got, expected, equal_nan=got.dtype.kind == "f"), (got, expected)


# -- REDUCE, ARGMIN, ARGMAX --------------------------------------------------------------------------------------------

@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_reduce_matches_one_machine(client: Client, data: st.DataObject) -> None:
    # Every function, data type, rank and feature level of the CPU tests' cases (specials and extremes included),
    # chunked at random: the partials and the tree combine give what one machine gives.
    case = data.draw(reduce_cases(data.draw(st.sampled_from(REDUCE_FUNCTIONS))))
    layout = case.layout
    chunks = data.draw(chunkings(layout.sizes))
    note(f"chunks={chunks}")
    graph = dml.Graph(dml.Device(layout.level))
    x = graph.input(layout.sizes, layout.input_type, name="x")
    compiled = graph.compile([dml.reduce(x, layout.function, layout.axes, output_dtype=layout.output_type)])
    (result,) = compiled({"x": on_dask(case.x, chunks)})
    assert result.chunks == tuple((1,) if dim in layout.axes else dims for dim, dims in enumerate(chunks))
    got = result.compute()
    (expected,) = compiled({"x": case.x})
    if layout.function in EXACT_REDUCTIONS or got.dtype.kind != "f":
        assert_same(got, expected)
    else:
        assert got.dtype == expected.dtype
        check_reduce_result(case, got)


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_arg_min_max_directions_ties_and_nan_across_chunks(client: Client, data: st.DataObject) -> None:
    # Few distinct values (many ties), NaN and signed zeros, with the extremes in several chunks: the first (last)
    # extreme and NaN of the whole block, with both AxisDirections.
    rank = data.draw(st.integers(1, 4))
    sizes = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    dtype = data.draw(st.sampled_from([np.float32, np.float16, np.int8, np.uint16]))
    pool = [-0.0, 0.0, 1.0, -1.0, np.nan] if np.dtype(dtype).kind == "f" else [0, 1, 3]
    x = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(sizes)),
                                    max_size=int(np.prod(sizes))))).astype(dtype).reshape(sizes)
    axes = data.draw(st.permutations(range(rank)))[: data.draw(st.integers(1, rank))]
    direction = data.draw(st.sampled_from(["INCREASING", "DECREASING"]))
    want_max = data.draw(st.booleans())
    index_type = data.draw(st.sampled_from(["UINT32", "INT64"]))
    chunks = data.draw(chunkings(sizes))
    note(f"sizes={sizes} axes={axes} chunks={chunks}")
    graph = dml.Graph(dml.Device())
    source = graph.input(sizes, dtype, name="x")
    extreme = dml.arg_max if want_max else dml.arg_min
    compiled = graph.compile([extreme(source, axes, axis_direction=direction, output_dtype=index_type)])
    (got,) = dask.compute(*compiled({"x": on_dask(x, chunks)}))
    (expected,) = compiled({"x": x})
    assert_same(got, expected)
    assert_same(got, reference_arg_min_max(x, axes, NUMPY_DTYPES[index_type], want_max=want_max,
                                           decreasing=direction == "DECREASING"))


def test_float16_keeps_float32_accumulation_across_chunks(client: Client) -> None:
    # 4100 ones in two chunks: FLOAT16 partials would stop at 2048 each (4096 in all); FLOAT32 ones give 4100.
    graph = dml.Graph(dml.Device())
    x = graph.input([4100], "FLOAT16", name="x")
    compiled = graph.compile([dml.reduce(x, "SUM"), dml.reduce(x, "AVERAGE")])
    total, average = dask.compute(*compiled({"x": da.ones(4100, dtype=np.float16, chunks=2050)}))
    assert total.tolist() == [4100.0] and average.tolist() == [1.0]


def test_float32_partials_that_overflow_or_underflow_are_redone_in_float64(client: Client) -> None:
    # A chunk's sum in FLOAT32 would overflow (1e20 squared; 1e20 * 1e20) or underflow (1e-20 * 1e-20) where one
    # machine's float64 accumulation does not: the partials are float64, and the result is one machine's.
    graph = dml.Graph(dml.Device())
    x = graph.input([4], "FLOAT32", name="x")
    functions = ["L2", "MULTIPLY", "AVERAGE", "SUM", "LOG_SUM"]
    compiled = graph.compile([dml.reduce(x, function) for function in functions])
    values = np.array([1e20, 1e20, 1e-20, 1e-20], np.float32)
    got = dask.compute(*compiled({"x": on_dask(values, ((2, 2),))}))
    expected = compiled({"x": values})
    for function, result, reference in zip(functions, got, expected, strict=True):
        assert np.isfinite(result).all(), function
        np.testing.assert_allclose(result, reference, rtol=1e-6, err_msg=function)
    big = np.full(4, 3e38, np.float32)
    average, = dask.compute(*graph.compile([dml.reduce(x, "AVERAGE")])({"x": on_dask(big, ((1, 1, 1, 1),))}))
    assert average.tolist() == [np.float32(3e38)]


#: Four FLOAT32 values in two chunks of two, per function, and the result worked out by hand: the first chunk's sum
#: lies halfway between two FLOAT32 values (1 + 2^-24, 2 (1 + 2^-11) + 2^-24, 10 + ln 2 rounds away by more), so
#: a partial rounded to FLOAT32 there loses what the other chunk then cannot make up.
TINY, SMALL = 2.0**-24, 2.0**-12
PARTIAL_ROUNDING_CASES = [
    ("SUM", [1, TINY, TINY, TINY], 1 + 2**-22),                  # 1 + 1.5 ulp: a tie, to even
    ("AVERAGE", [1, TINY, TINY, TINY], 0.25 + 2**-24),           # 0.25 + 1.5 ulp: a tie, to even
    ("L1", [-1, -TINY, TINY, -TINY], 1 + 2**-22),
    ("SUM_SQUARE", [1, SMALL, SMALL, SMALL], 1 + 2**-22),
    ("L2", [1, SMALL, SMALL, SMALL], 1 + 2**-23),                # sqrt(1 + 1.5 ulp) = 1 + 0.75 ulp
    ("LOG_SUM", [1, TINY, TINY, TINY], math.log1p(3 * TINY)),
    ("MULTIPLY", [1 + SMALL] * 4, 1 + 2**-10 + 3 * 2**-23),     # 1 + 4s + 6s^2 + 4s^3 + s^4, s = 2^-12
    ("LOG_SUM_EXP", [10, 10, 10, 10], 10 + math.log(4)),
]


@pytest.mark.parametrize(("function", "values", "exact"), PARTIAL_ROUNDING_CASES,
                         ids=[case[0] for case in PARTIAL_ROUNDING_CASES])
def test_float32_partials_are_not_rounded_before_the_end(client: Client, function: str, values: list[float],
                                                         exact: float) -> None:
    # One machine accumulates in float64 and rounds once; so does every chunk's partial and their combine.
    graph = dml.Graph(dml.Device())
    x = graph.input([4], "FLOAT32", name="x")
    compiled = graph.compile([dml.reduce(x, function)])
    data = np.array(values, np.float32)
    assert data.astype(np.float64).tolist() == values       # the values are FLOAT32 values
    (got,) = dask.compute(*compiled({"x": on_dask(data, ((2, 2),))}))
    assert got.tolist() == [np.float32(exact)] == compiled({"x": data})[0].tolist()


@pytest.mark.parametrize("chunk_count", [2, 8])
def test_chunked_float32_reductions_equal_one_machine(client: Client, chunk_count: int) -> None:
    # README's promise: one machine's result but for rare last-place ties (none in these 32 columns; with each
    # chunk's partial rounded to FLOAT32 first, about a third of them differed).
    data = np.random.default_rng(31).standard_normal((4096, 32)).astype(np.float32)
    functions = ["SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM_EXP"]
    graph = dml.Graph(dml.Device())
    x = graph.input([4096, 32], "FLOAT32", name="x")
    compiled = graph.compile([dml.reduce(x, function, [0]) for function in functions])
    got = dask.compute(*compiled({"x": on_dask(data, ((4096 // chunk_count,) * chunk_count, (32,)))}))
    for function, result, expected in zip(functions, got, compiled({"x": data}), strict=True):
        assert result.dtype == expected.dtype and np.array_equal(result, expected), \
            f"{function}: columns {np.flatnonzero(result != expected).tolist()} differ"


def test_integer_reductions_wrap_exactly_across_chunks(client: Client) -> None:
    graph = dml.Graph(dml.Device())
    x = graph.input([6, 5], "INT32", name="x")
    compiled = graph.compile([dml.reduce(x, function, [0]) for function in ("SUM", "MULTIPLY", "L1", "SUM_SQUARE")])
    values = np.array([[2**31 - 1, -2**31, 7, 3, 46341]] * 6, np.int32)
    got = dask.compute(*compiled({"x": on_dask(values, ((1, 2, 3), (5,)))}))
    for result, expected in zip(got, compiled({"x": values}), strict=True):
        assert_same(result, expected)


# -- MEAN_VARIANCE_NORMALIZATION1 and MEAN_VARIANCE_NORMALIZATION ---------------------------------------------------

@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_normalization_matches_one_machine(client: Client, data: st.DataObject) -> None:
    # The CPU tests' MVN cases (levels, ranks, Scale and Bias broadcast or not, Epsilon 0, every fused activation,
    # offset, huge, tiny and special values), chunked at random, Scale and Bias chunked on their own; a 4-D case
    # runs as version 0 (CrossChannel) too. Whether the chunks cut the normalized axes or not, the results stay
    # within the CPU backend's bounds.
    case = data.draw(mvn_cases())
    version_0 = len(case.sizes) == 4 and data.draw(st.booleans())
    cross_channel = data.draw(st.booleans())
    if version_0:
        case = dataclasses.replace(case, axes=CROSS_CHANNEL_AXES[cross_channel])
    chunks = data.draw(chunkings(case.sizes))
    side_chunks = [None if sizes is None else data.draw(chunkings(sizes)) for sizes in (case.scale_sizes,
                                                                                         case.bias_sizes)]
    note(f"version 0: {version_0}, chunks={chunks}, Scale and Bias chunks={side_chunks}")
    graph = dml.Graph(dml.Device(case.level))
    x = graph.input(case.sizes, case.type_name, name="x")
    arrays: dict[str, np.ndarray] = {"x": case.x}
    dask_arrays: dict[str, Any] = {"x": on_dask(case.x, chunks)}
    sides: list[dml.Expression | None] = []
    for name, sizes, values, side in (("scale", case.scale_sizes, case.scale, side_chunks[0]),
                                      ("bias", case.bias_sizes, case.bias, side_chunks[1])):
        if sizes is None or values is None or side is None:
            sides.append(None)
            continue
        sides.append(graph.input(sizes, case.type_name, name=name))
        arrays[name], dask_arrays[name] = values, on_dask(values, side)
    options: dict[str, Any] = {"cross_channel": cross_channel} if version_0 else {"axes": case.axes}
    output = dml.mean_variance_normalization(x, sides[0], sides[1], normalize_variance=case.normalize,
                                             epsilon=case.epsilon,
                                             fused_activation=case.descriptor().fused_activation, **options)
    compiled = graph.compile([output])
    (result,) = compiled(dask_arrays)
    assert result.chunks == chunks
    got = result.compute()
    assert got.dtype == compiled(arrays)[0].dtype
    check_mvn_result(case, got)


def test_offset_data_keeps_its_accuracy_across_chunks(client: Client) -> None:
    # 1e4 + small noise, the normalized axis cut into uneven chunks: the parallel update keeps the mean and the
    # variance (a FLOAT32 mean would move every deviation by ~5% of the noise).
    rng = np.random.default_rng(7)
    x = (1e4 + rng.standard_normal((3, 3000)) * 1e-2).astype(np.float32)
    graph = dml.Graph(dml.Device())
    source = graph.input([3, 3000], "FLOAT32", name="x")
    compiled = graph.compile([dml.mean_variance_normalization(source, axes=[1], epsilon=0.0)])
    (got,) = dask.compute(*compiled({"x": on_dask(x, ((2, 1), (1, 999, 1500, 500)))}))
    x64 = x.astype(np.float64)
    exact = (x64 - x64.mean(axis=1, keepdims=True)) / x64.std(axis=1, keepdims=True)
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.astype(np.float64).var(axis=1), 1.0, rtol=1e-4)


# -- random graphs of 1-3 nodes -------------------------------------------------------------------------------------

@dataclasses.dataclass
class RandomGraph:
    """A graph drawn node by node, with its inputs, the Dask chunkings, and what to check of each output."""

    graph: dml.Graph
    arrays: dict[str, np.ndarray]
    chunks: dict[str, tuple[tuple[int, ...], ...]]
    outputs: list[dml.Expression]
    #: per output: None (bit-exact) or a checker of the Dask result given the NumPy results of every output
    checks: list[Callable[[np.ndarray, list[np.ndarray]], None] | None]


#: The input types a first node of each kind takes (any of FLOAT32, FLOAT16, INT32, UINT8 where not listed).
FIRST_NODE_TYPES = {"one_hot": ["UINT32", "INT32"], "integer_reduce": ["UINT32", "INT32"],
                    "float_reduce": ["FLOAT32", "FLOAT16"], "normalization": ["FLOAT32", "FLOAT16"]}
NODE_KINDS = ["split", "join", "activation", "min_max", "arg", "gather", "one_hot", "integer_reduce", "float_reduce",
              "normalization"]
FLOAT_REDUCTIONS = ["SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP", "MULTIPLY"]
INDEX_TYPES = {"UINT32", "INT32", "UINT64", "INT64"}


def _axes(draw: st.DrawFn, rank: int) -> tuple[int, ...]:
    return tuple(draw(st.permutations(range(rank)))[: draw(st.integers(1, rank))])


@st.composite
def random_graphs(draw: st.DrawFn, first: str) -> RandomGraph:
    """A chain of 1-3 nodes starting with a node of kind `first`, on an input of a type that kind takes."""
    rank = draw(st.integers(1, 4))
    sizes = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    if first == "one_hot":
        sizes = tuple(1 if dim == rank - 1 else size for dim, size in enumerate(sizes))
    type_name = draw(st.sampled_from(FIRST_NODE_TYPES.get(first, ["FLOAT32", "FLOAT16", "INT32", "UINT8"])))
    dtype = np.dtype(dml.DataType[type_name].numpy_dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype.kind == "f":
        values = np.round(rng.standard_normal(sizes) * 2, 1).astype(dtype)     # ties, among ordinary values
    else:
        values = rng.integers(-9 if dtype.kind == "i" else 0, 10, sizes).astype(dtype)
    graph = dml.Graph(dml.Device())
    current = graph.input(sizes, type_name, name="x")
    built = RandomGraph(graph, {"x": values}, {"x": draw(chunkings(sizes))}, [], [])

    def add(expression: dml.Expression, check: Callable[[np.ndarray, list[np.ndarray]], None] | None = None) -> None:
        built.outputs.append(expression)
        built.checks.append(check)

    def value_of(expression: dml.Expression) -> Callable[[list[np.ndarray]], np.ndarray]:
        """The NumPy value of an expression: the input itself, or (added as an output) its result."""
        if expression.node.kind == "input":
            return lambda results: built.arrays["x"]
        add(expression)
        position = len(built.outputs) - 1
        return lambda results: results[position]

    for step in range(draw(st.integers(1, 3))):
        kind = current.dtype.name
        floats = kind in ("FLOAT32", "FLOAT16")
        choices = ["split", "join", "activation", "min_max", "arg", "gather"]
        if any(size == 1 for size in current.sizes) and kind in INDEX_TYPES:
            choices.append("one_hot")
        if kind in ("INT32", "UINT32"):
            choices.append("integer_reduce")
        if floats:
            choices += ["float_reduce", "normalization"]
        choice = first if step == 0 else draw(st.sampled_from(choices))
        note(f"node {step}: {choice} on {current!r}")
        rank = len(current.sizes)
        if choice == "split":
            axis = draw(st.integers(0, rank - 1))
            size = current.sizes[axis]
            cuts = sorted(draw(st.sets(st.integers(1, size - 1), max_size=2))) if size > 1 else []
            edges = [0, *cuts, size]
            parts = dml.split(current, axis, [high - low for low, high in itertools.pairwise(edges)])
            for part in parts:
                add(part)
            current = draw(st.sampled_from(parts))
        elif choice == "join":
            current = dml.join([current, current], draw(st.integers(0, rank - 1)))
            add(current)
        elif choice == "activation":
            if floats:
                activation = draw(activation_choices("6_4")) or ("RELU", ())
            else:
                activation = ("RELU", ()) if kind == "INT32" else ("SHRINK", (1.0, 2.0))
            name, parameters = activation
            current = getattr(dml, f"activation_{name.lower()}")(current, *parameters)
            add(current)
        elif choice == "min_max":
            current = dml.reduce(current, draw(st.sampled_from(["MIN", "MAX"])), _axes(draw, rank))
            add(current)
        elif choice == "arg":
            extreme = dml.arg_max if draw(st.booleans()) else dml.arg_min
            current = extreme(current, _axes(draw, rank),
                              axis_direction=draw(st.sampled_from(["INCREASING", "DECREASING"])))
            add(current)
        elif choice == "integer_reduce":
            current = dml.reduce(current, draw(st.sampled_from(["SUM", "MULTIPLY", "L1", "SUM_SQUARE"])),
                                 _axes(draw, rank))
            add(current)
        elif choice == "one_hot":
            axis = draw(st.sampled_from([dim for dim, size in enumerate(current.sizes) if size == 1]))
            off_on = graph.constant(np.array([-1.5, 2.5], np.float32).reshape((1,) * (rank - 1) + (2,)))
            current = dml.one_hot(current, off_on, draw(st.integers(1, 4)), axis)
            add(current)
        elif choice == "gather":
            # GATHER_ND1 on the current tensor, with indices from a second (Dask or NumPy) input chunked at random.
            batch = draw(st.integers(0, min(1, rank - 1)))
            tuple_size = draw(st.integers(1, rank - batch))
            indices_count = draw(st.integers(batch + 1, min(rank, batch + tuple_size + 1)))
            other = tuple(draw(st.lists(st.integers(1, 3), min_size=indices_count - 1 - batch,
                                        max_size=indices_count - 1 - batch)))
            indices_sizes = (1,) * (rank - indices_count) + current.sizes[:batch] + other + (tuple_size,)
            limits = np.array(current.sizes[batch: batch + tuple_size])
            indices = rng.integers(-limits - 1, limits + 1, indices_sizes).astype(np.int32)  # some out of range
            name = f"indices{step}"
            built.arrays[name], built.chunks[name] = indices, draw(chunkings(indices_sizes))
            index_input = graph.input(indices_sizes, "INT32", name=name)
            current = dml.gather_nd(current, index_input, rank, indices_count, batch)
            add(current)
        elif choice == "float_reduce":
            function = draw(st.sampled_from(FLOAT_REDUCTIONS))
            axes = _axes(draw, rank)
            source, source_value = current, value_of(current)
            current = dml.reduce(current, function, axes)

            def check_reduction(got: np.ndarray, results: list[np.ndarray], function: str = function,
                                axes: tuple[int, ...] = axes, source: dml.Expression = source,
                                source_value: Callable[[list[np.ndarray]], np.ndarray] = source_value) -> None:
                layout = ReduceLayout("6_4", function, source.dtype.name, source.dtype.name, source.sizes, axes,
                                      None, None)
                check_reduce_result(ReduceCase(layout, "graph", source_value(results)), got)

            add(current, check_reduction)
            break
        else:  # normalization: version 1, or version 0 on a 4-D tensor
            axes = _axes(draw, rank)
            cross_channel = draw(st.booleans()) if rank == 4 and draw(st.booleans()) else None
            if cross_channel is not None:
                axes = CROSS_CHANNEL_AXES[cross_channel]
            scale_sizes = tuple(size if draw(st.booleans()) else 1 for size in current.sizes)
            scale = rng.standard_normal(scale_sizes).astype(current.dtype.numpy_dtype)
            activation = draw(activation_choices("6_4"))
            fused = None if activation is None else getattr(dml, ACTIVATION_CLASSES[activation[0]])(*activation[1])
            normalize, epsilon = draw(st.booleans()), float(np.float32(draw(st.sampled_from([1e-5, 1.0]))))
            source, source_value = current, value_of(current)
            options: dict[str, Any] = {"axes": axes} if cross_channel is None else {"cross_channel": cross_channel}
            current = dml.mean_variance_normalization(current, graph.constant(scale), None,
                                                      normalize_variance=normalize, epsilon=epsilon,
                                                      fused_activation=fused, **options)

            def check_normalization(got: np.ndarray, results: list[np.ndarray], axes: tuple[int, ...] = axes,
                                    source: dml.Expression = source, scale: np.ndarray = scale,
                                    source_value: Callable[[list[np.ndarray]], np.ndarray] = source_value,
                                    normalize: bool = normalize, epsilon: float = epsilon,
                                    activation: tuple[str, tuple[float, ...]] | None = activation) -> None:
                case = MvnCase("6_4", source.dtype.name, source.sizes, axes, scale.shape, None, (None,) * 4,
                               normalize, epsilon, activation, "graph", source_value(results), scale, None)
                check_mvn_result(case, got)

            add(current, check_normalization)
            break
    return built


@pytest.mark.parametrize("first", NODE_KINDS)
@settings(max_examples=max(4, EXAMPLES // 5))
@given(data=st.data(), as_numpy=st.booleans())
def test_random_graphs_match_one_machine(client: Client, first: str, data: st.DataObject, as_numpy: bool) -> None:
    # Chains of 1-3 nodes, starting with each kind of node, whose outputs also feed the next node: one Dask graph,
    # computed once, gives every output of the same graph on NumPy inputs. The indices of a gather are a NumPy
    # array beside the Dask one, or Dask.
    case = data.draw(random_graphs(first))
    compiled = case.graph.compile(case.outputs)
    inputs = {name: array if name.startswith("indices") and as_numpy else on_dask(array, case.chunks[name])
              for name, array in case.arrays.items()}
    results = compiled(inputs)
    got = dask.compute(*results)
    expected = compiled(case.arrays)
    for output, check, value, reference in zip(case.outputs, case.checks, got, expected, strict=True):
        note(f"checking {output!r}")
        assert value.shape == output.sizes and value.dtype == output.dtype.numpy_dtype
        if check is None:
            assert_same(value, reference)
        else:
            check(value, expected)


def test_every_operator_and_activation_lowers(client: Client) -> None:
    # One graph with every kind of node the graph API builds, each output fed onward where it can be: the lowering
    # knows them all, and the whole graph is one Dask graph.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    outputs = [getattr(dml, f"activation_{name.lower()}")(x, *parameters)
               for name, parameters in [("LINEAR", (2.0, 1.0)), ("PARAMETRIC_SOFTPLUS", (1.5, 0.5))]]
    outputs += [getattr(dml, f"activation_{name.lower()}")(x) for name in ACTIVATION_CLASSES
                if name not in ("LINEAR", "PARAMETRIC_SOFTPLUS")]
    left, right = dml.split(outputs[-1], 1, [2, 4])
    joined = dml.join([right, left], 1)
    index = dml.arg_max(joined, [1])
    hot = dml.one_hot(index, graph.constant(np.array([[0, 7]], np.int16)), 6, 1)
    table = dml.gather_nd(joined, graph.constant(np.array([[3], [0]], np.uint32)), 2, 2)
    normalized = dml.mean_variance_normalization(table, axes=[1])      # its axis is cut into chunks
    log_sum_exp = dml.reduce(normalized, "LOG_SUM_EXP", [0, 1])
    outputs += [left, right, joined, index, hot, table, normalized, log_sum_exp]
    compiled = graph.compile(outputs)
    values = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    results = compiled({"x": on_dask(values, ((1, 3), (2, 2, 2)))})
    # ONE_HOT reads ARGMAX's tasks, which read JOIN's: one graph, no intermediate result.
    position = {id(output): place for place, output in enumerate(outputs)}
    index_keys = set(dict(results[position[id(index)]].__dask_graph__()))
    assert index_keys and index_keys <= set(dict(results[position[id(hot)]].__dask_graph__()))
    got = dask.compute(*results)
    expected = compiled({"x": values})
    for value, reference in zip(got[:-2], expected[:-2], strict=True):
        assert_same(value, reference)
    for value, reference in zip(got[-2:], expected[-2:], strict=True):
        np.testing.assert_allclose(value, reference, rtol=1e-5, atol=1e-6)


# -- laziness, chunks, inputs ---------------------------------------------------------------------------------------

def _poisoned(shape: tuple[int, ...], dtype: Any, chunks: Any) -> Any:
    """A Dask array whose every chunk raises when computed: calling a compiled graph on it must compute nothing."""
    def explode(block: np.ndarray) -> np.ndarray:
        raise AssertionError("an input chunk was computed")

    meta = np.empty((0,) * len(shape), dtype)
    return da.zeros(shape, dtype=dtype, chunks=chunks).map_blocks(explode, dtype=dtype, meta=meta)


def test_a_call_builds_one_lazy_graph_and_computes_nothing(client: Client) -> None:
    wait_until_idle(client)     # what earlier tests computed is released
    graph = dml.Graph(dml.Device())
    x = graph.input([8, 6], "FLOAT32", name="x")
    total = dml.reduce(x, "SUM", [0])
    normalized = dml.mean_variance_normalization(x, axes=[0])
    scaled = dml.activation_relu(normalized)
    compiled = graph.compile([total, normalized, scaled])
    results = compiled({"x": _poisoned((8, 6), np.float32, (3, 2))})
    assert [result.shape for result in results] == [(1, 6), (8, 6), (8, 6)]
    assert [result.dtype for result in results] == [np.float32] * 3
    assert results[0].chunks == ((1,), (2, 2, 2)) and results[2].chunks == ((3, 3, 2), (2, 2, 2))
    # The activation reads the normalization's own tasks: one graph, no intermediate result.
    assert set(dict(results[1].__dask_graph__())) <= set(dict(results[2].__dask_graph__()))
    assert scheduler_task_count(client) == 0
    with pytest.raises(AssertionError, match="an input chunk was computed"):
        dask.compute(*results)
    wait_until_idle(client)


def test_numpy_and_dask_inputs_together(client: Client) -> None:
    graph = dml.Graph(dml.Device())
    table = graph.input([5, 3], "INT64", name="table")
    rows = graph.input([4, 1], "UINT32", name="rows")
    compiled = graph.compile([dml.gather_nd(table, rows, 2, 2)])
    values = np.arange(15, dtype=np.int64).reshape(5, 3)
    indices = np.array([[4], [0], [9], [2]], np.uint32)      # 9 is clamped to 4 on a release device
    (result,) = compiled({"table": values, "rows": on_dask(indices, ((1, 3), (1,)))})
    assert result.chunks == ((1, 3), (3,))
    assert_same(result.compute(), compiled({"table": values, "rows": indices})[0])


def test_batched_gather_with_chunked_batch_and_kept_dimensions(client: Client) -> None:
    # GATHER_ND1 with a batch dimension chunked differently in the input and the indices, and the dimension after the
    # gathered one chunked: the indices follow the input's batch chunks, the kept dimension keeps its chunks.
    graph = dml.Graph(dml.Device())
    table = graph.input([3, 5, 4], "FLOAT16", name="table")
    rows = graph.input([3, 4, 1], "INT64", name="rows")
    compiled = graph.compile([dml.gather_nd(table, rows, 3, 3, 1)])
    values = np.arange(60, dtype=np.float16).reshape(3, 5, 4)
    indices = np.array([[[4], [-1], [0], [2]], [[1], [1], [-5], [3]], [[0], [9], [2], [-9]]], np.int64)
    (result,) = compiled({"table": on_dask(values, ((1, 2), (2, 3), (1, 3))),
                          "rows": on_dask(indices, ((2, 1), (1, 3), (1,)))})
    assert result.chunks == ((1, 2), (1, 3), (1, 3))
    assert_same(result.compute(), compiled({"table": values, "rows": indices})[0])


# -- bad input ----------------------------------------------------------------------------------------------------

def _same_message(compiled: dml.CompiledGraph, numpy_inputs: dict[str, Any], dask_inputs: dict[str, Any]) -> str:
    """The BindingError of a Dask call, which must be the NumPy call's, raised before any task is submitted."""
    with pytest.raises(dml.BindingError) as numpy_error:
        compiled(numpy_inputs)
    with pytest.raises(dml.BindingError) as dask_error:
        compiled(dask_inputs)
    assert str(dask_error.value) == str(numpy_error.value)
    return str(dask_error.value)


def test_wrong_dtype_shape_or_missing_input_is_refused_before_any_task_runs(client: Client) -> None:
    wait_until_idle(client)
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 3], "FLOAT32", name="x")
    y = graph.input([4, 1], "FLOAT32", name="y")
    compiled = graph.compile([dml.reduce(dml.join([x, y], 1), "MAX", [1])])
    good_y = _poisoned((4, 1), np.float32, 2)
    message = _same_message(compiled, {"x": np.zeros((4, 3), np.float64), "y": np.zeros((4, 1), np.float32)},
                            {"x": _poisoned((4, 3), np.float64, 2), "y": good_y})
    assert message == "CompiledGraph: input 'x' has dtype float64; it must be float32 (DataType FLOAT32)"
    message = _same_message(compiled, {"x": np.zeros((3, 4), np.float32), "y": np.zeros((4, 1), np.float32)},
                            {"x": _poisoned((3, 4), np.float32, 2), "y": good_y})
    assert message == "CompiledGraph: input 'x' has shape [3, 4]; it must be [4, 3]"
    message = _same_message(compiled, {"y": np.zeros((4, 1), np.float32)}, {"y": good_y})
    assert message == "CompiledGraph: input 'x' is missing"
    message = _same_message(compiled, {"x": np.zeros((4, 3), np.float32), "z": np.zeros(1, np.float32)},
                            {"x": _poisoned((4, 3), np.float32, 2), "z": good_y})
    assert re.fullmatch(r"CompiledGraph: 'z' is not an input of this graph; its inputs are 'x', 'y'", message)
    with pytest.raises(dml.BindingError, match=r"input 'x' has shape \[nan, 3\]; it must be \[4, 3\]"):
        compiled({"x": _poisoned((4, 3), np.float32, 2)[_poisoned((4, 3), np.float32, 2)[:, 0] > 0], "y": good_y})
    assert scheduler_task_count(client) == 0


def test_a_worker_that_raises_reaches_the_caller_as_opendml_error(client: Client) -> None:
    # A debug device refuses an out-of-range GATHER_ND1 index; the worker that meets it raises, and the caller gets
    # the BindingError, naming the operator, the position in the chunk and where the chunk starts; the other tasks
    # are released.
    graph = dml.Graph(dml.Device(debug=True))
    table = graph.input([5, 3], "FLOAT32", name="table")
    rows = graph.input([6, 1], "INT32", name="rows")
    compiled = graph.compile([dml.activation_relu(dml.gather_nd(table, rows, 2, 2))])
    indices = np.array([[0], [1], [2], [3], [7], [4]], np.int32)
    (result,) = compiled({"table": on_dask(np.ones((5, 3), np.float32), ((2, 3), (3,))),
                          "rows": on_dask(indices, ((3, 3), (1,)))})
    expected = (r"DML_OPERATOR_GATHER_ND1: IndicesTensor\[1, 0\] is 7, out of range: coordinate 0 of its tuple "
                r"indexes InputTensor dimension 0 \(size 5\), so it must be in \[-5, 4\]; the debug device refuses "
                r"it \(a release device clamps it\), and nothing was written \[Dask: in the chunk of IndicesTensor "
                r"that starts at \[3, 0\]\]")
    with pytest.raises(dml.BindingError, match=expected):
        result.compute()
    wait_until_idle(client)


def test_a_chunk_that_lies_about_its_dtype_reaches_the_caller_as_binding_error(client: Client) -> None:
    # A map_blocks given the wrong dtype= (FLOAT32 declared, float64 computed): the worker that holds the chunk
    # refuses it before any kernel reads it, and the caller gets the BindingError (test_fuzz_dask: every kind of lie).
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    compiled = graph.compile([dml.activation_relu(x), dml.arg_max(x, [0])])
    lying = on_dask(np.ones((4, 6)), ((2, 2), (3, 3))).map_blocks(lambda block: block, dtype=np.float32)
    message = (r"^CompiledGraph: input 'x': Dask chunk \[\d, \d\] has dtype float64; the Dask array declares float32 "
               r"\(DataType FLOAT32\)$")
    with pytest.raises(dml.BindingError, match=message):
        dask.compute(*compiled({"x": lying}))
    wait_until_idle(client)


def test_an_input_that_breaks_its_aliasing_strides_is_refused_on_the_worker(client: Client) -> None:
    # A graph input with a stride of 0 holds one value along that dimension; a Dask array that differs there is
    # refused when computed, with the message a NumPy input gets at the call.
    graph = dml.Graph(dml.Device())
    x = graph.input([3, 2], "FLOAT32", name="x", strides=[0, 1])
    compiled = graph.compile([dml.reduce(x, "SUM", [0])])
    same = np.array([[1, 2]] * 3, np.float32)
    (total,) = compiled({"x": on_dask(same, ((1, 2), (2,)))})
    assert_same(total.compute(), compiled({"x": same})[0])
    different = np.array([[1, 2], [1, 2], [1, 3]], np.float32)
    with pytest.raises(dml.BindingError) as numpy_error:
        compiled({"x": different})
    (total,) = compiled({"x": on_dask(different, ((1, 2), (2,)))})
    with pytest.raises(dml.BindingError) as dask_error:
        total.compute()
    assert str(dask_error.value) == str(numpy_error.value)
    wait_until_idle(client)


def test_a_fused_activation_beyond_float16_gives_infinities_without_a_warning() -> None:
    # Chunks cutting the normalized axis: mean 1, deviations -1, 1, variance 1, Epsilon 0 -> -1, 1, -1, 1; LINEAR
    # with Alpha 1e5 gives -1e5, 1e5 in FLOAT32, beyond FLOAT16's 65504: -inf, inf once rounded, and NumPy's
    # "overflow encountered in cast" stays inside. Computed in this process (scheduler "sync") so that a
    # RuntimeWarning would reach the filter.
    graph = dml.Graph(dml.Device())
    x = graph.input([1, 4], "FLOAT16", name="x")
    linear = dml.FusedActivation.linear(1e5, 0.0)
    compiled = graph.compile([dml.mean_variance_normalization(x, axes=[1], epsilon=0.0, fused_activation=linear)])
    (normalized,) = compiled({"x": on_dask(np.array([[0, 2, 0, 2]], np.float16), ((1,), (2, 2)))})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = normalized.compute(scheduler="sync")
    assert_same(got, np.array([[-np.inf, np.inf, -np.inf, np.inf]], np.float16))


def test_a_graph_past_the_element_limit_runs_chunk_by_chunk(client: Client) -> None:
    # 2^33 FLOAT32 elements (32 GiB) are more than one DML tensor holds (DECISIONS 2), but every chunk is a tensor of
    # its own (README, Rulings). Only the chunks a result needs are computed: the first rows, whole normalized groups.
    graph = dml.Graph(dml.Device())
    x = graph.input([2**21, 4096], "FLOAT32", name="x")
    compiled = graph.compile([dml.mean_variance_normalization(x, axes=[1], fused_activation=dml.FusedActivation.relu()),
                              dml.reduce(x, "MAX", [0])])
    rows = np.random.default_rng(16).standard_normal((3, 4096)).astype(np.float32)
    huge = da.concatenate([on_dask(rows, ((1, 2), (4096,))),
                           da.zeros((2**21 - 3, 4096), dtype=np.float32, chunks=(2**18, 4096))])
    normalized, maxima = compiled({"x": huge})
    assert normalized.shape == (2**21, 4096) and maxima.shape == (1, 4096)
    small = dml.Graph(dml.Device())
    y = small.input([3, 4096], "FLOAT32", name="y")
    (expected,) = small.compile([dml.mean_variance_normalization(y, axes=[1],
                                                                 fused_activation=dml.FusedActivation.relu())])(
        {"y": rows})
    assert_same(normalized[:3].compute(), expected)
    wait_until_idle(client)
    # A chunk of 2^33 elements is one tensor past the limit: refused at the call, before any task runs.
    message = (r"DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1: InputTensor's largest Dask chunk has its last element at "
               r"index 8589934591; with Sizes \[2097152, 4096\] and Strides \[4096, 1\] it must be below 2\^32")
    with pytest.raises(dml.ValidationError, match=message):
        compiled({"x": da.zeros((2**21, 4096), dtype=np.float32, chunks=-1)})
    # GATHER_ND1 puts the gathered dimension in one chunk (README): here, a chunk of 2^33 elements.
    rows = graph.input([8, 1], "INT64", name="rows")
    gathered = graph.compile([dml.gather_nd(x, rows, 2, 2)])
    message = (r"DML_OPERATOR_GATHER_ND1: InputTensor's largest Dask chunk has its last element at index 8589934591;"
               r" with Sizes \[2097152, 4096\]")
    with pytest.raises(dml.ValidationError, match=message):
        gathered({"x": da.zeros((2**21, 4096), dtype=np.float32, chunks=(2**18, 4096)),
                  "rows": np.zeros((8, 1), np.int64)})
    assert scheduler_task_count(client) == 0


def test_opendml_imports_dask_only_when_given_a_dask_array() -> None:
    script = ("import sys, numpy as np, opendml as dml\n"
              "g = dml.Graph(dml.Device()); x = g.input([2], 'FLOAT32', name='x')\n"
              "print(g.compile([dml.reduce(x, 'SUM')])({'x': np.ones(2, np.float32)})[0][0])\n"
              "assert not [name for name in sys.modules if name.split('.')[0] in ('dask', 'distributed')]")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.0"
