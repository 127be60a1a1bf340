"""The ELEMENT_WISE operators of a compiled dml.Graph on Dask arrays (dask_graph's element-wise lowering).

An element-wise node is blockwise over its output's chunks: an input broadcast by zero strides stays one chunk of
size 1 along the broadcast dimension, an input read through other strides (a transposed view, a reshape) is the
transposed or reshaped Dask array, and every block runs the operator's own kernel through a descriptor of the
block's sizes. Every result is compared bit for bit with the same compiled graph on NumPy arrays (one machine), and
with values worked out independently of opendml's kernels (Python integers, NumPy's IEEE float32 arithmetic).

Graphs are built from the descriptors themselves (`Graph._add_operator`, the node every graph API function adds), so
that the tests say exactly which strides each input is read through. Dask's local threaded scheduler runs them in
this process; one test runs on a distributed cluster (every descriptor crosses to a worker process).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster
from hypothesis import given, note, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import dask_graph

pytestmark = pytest.mark.xdist_group("dask")

T = dml.TensorDesc


@pytest.fixture(autouse=True)
def threaded_scheduler() -> Iterator[None]:
    """Dask's local threaded scheduler (a distributed Client made by another test module is not used here)."""
    with dask.config.set(scheduler="threads"):
        yield


def node(graph: dml.Graph, desc: dml.OperatorDesc, *inputs: dml.Expression | None) -> dml.Expression:
    """The node of an operator descriptor, its inputs read from these expressions."""
    return graph._add_operator(desc, list(inputs))[0]


def on_dask(array: np.ndarray, chunks: Any) -> Any:
    return da.from_array(array, chunks=chunks)


def same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), f"{got} != {expected}"


def run_both(compiled: dml.CompiledGraph, arrays: dict[str, np.ndarray], chunks: dict[str, Any]) -> tuple[Any, ...]:
    """The compiled graph's first output on Dask arrays (lazy), and on the same NumPy arrays (one machine), which
    the Dask result must equal bit for bit when computed."""
    (lazy,) = compiled({name: on_dask(array, chunks[name]) if name in chunks else array
                        for name, array in arrays.items()})
    (expected,) = compiled(arrays)
    got = lazy.compute()
    same_bits(got, expected)
    return lazy, got


def wrap(value: int, bits: int) -> int:
    """A Python integer wrapped to a signed integer of `bits` bits."""
    return (value + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)


# -- broadcasting and chunks ----------------------------------------------------------------------------------------

def test_row_vector_broadcasts_across_chunks_of_both_dimensions() -> None:
    # [7, 10] + [1, 10] read with strides [0, 1]: the row is chunked (5, 5) and the matrix (3, 4) x (4, 4, 2), so the
    # output takes the finer cut (4, 1, 3, 2) along the row; along dimension 0 the row stays one chunk of size 1.
    graph = dml.Graph(dml.Device())
    x = graph.input([7, 10], "FLOAT32", name="x")
    row = graph.input([1, 10], "FLOAT32", name="row")
    desc = dml.ElementWiseAddOperatorDesc(T("FLOAT32", [7, 10]), T("FLOAT32", [7, 10], [0, 1]), T("FLOAT32", [7, 10]))
    compiled = graph.compile([node(graph, desc, x, row)])
    values = np.arange(70, dtype=np.float32).reshape(7, 10) / 8
    offsets = (np.arange(10, dtype=np.float32) * 1000 + 0.25).reshape(1, 10)
    lazy, got = run_both(compiled, {"x": values, "row": offsets}, {"x": ((3, 4), (4, 4, 2)), "row": ((1,), (5, 5))})
    assert lazy.chunks == ((3, 4), (4, 1, 3, 2))
    same_bits(got, values + offsets)        # sums of multiples of 1/8 below 2^14: exact in FLOAT32
    # No task materializes the row along dimension 0: it enters every block as its (1, k) block.
    assert not [name for name in lazy.dask.layers if "broadcast" in name]


def test_a_column_and_a_row_broadcast_together_into_blocks() -> None:
    # MULTIPLY of a [6, 1] column read as [6, 5] (strides [1, 0]) by a [1, 5] row read as [6, 5] (strides [0, 1]):
    # no input is full in either dimension but each is in one, so the output is chunked as the column along 0 and
    # as the row along 1; every block is an outer product.
    graph = dml.Graph(dml.Device())
    column = graph.input([6, 1], "INT32", name="column")
    row = graph.input([1, 5], "INT32", name="row")
    desc = dml.ElementWiseMultiplyOperatorDesc(T("INT32", [6, 5], [1, 0]), T("INT32", [6, 5], [0, 1]),
                                               T("INT32", [6, 5]))
    compiled = graph.compile([node(graph, desc, column, row)])
    left = np.arange(1, 7, dtype=np.int32).reshape(6, 1)
    right = np.array([[-3, 0, 2, 7, 11]], np.int32)
    lazy, got = run_both(compiled, {"column": left, "row": right}, {"column": ((2, 4), (1,)), "row": ((1,), (2, 3))})
    assert lazy.chunks == ((2, 4), (2, 3))
    assert got.tolist() == [[i * j for j in (-3, 0, 2, 7, 11)] for i in range(1, 7)]


def test_inputs_chunked_differently_meet_on_the_finer_cut() -> None:
    # INT8 ADD wraps: 100 + 100 = 200 - 256 = -56, and -128 + -1 = 127, in every block whatever the cut.
    graph = dml.Graph(dml.Device())
    a = graph.input([6, 9], "INT8", name="a")
    b = graph.input([6, 9], "INT8", name="b")
    desc = dml.ElementWiseAddOperatorDesc(T("INT8", [6, 9]), T("INT8", [6, 9]), T("INT8", [6, 9]))
    compiled = graph.compile([node(graph, desc, a, b)])
    rng = np.random.default_rng(26)
    left = rng.integers(-128, 128, (6, 9), dtype=np.int8)
    right = rng.integers(-128, 128, (6, 9), dtype=np.int8)
    left[0, 0], right[0, 0], left[5, 8], right[5, 8] = 100, 100, -128, -1
    lazy, got = run_both(compiled, {"a": left, "b": right}, {"a": ((2, 4), (3, 6)), "b": ((3, 3), (5, 4))})
    assert lazy.chunks == ((2, 1, 3), (3, 2, 4))
    assert got[0, 0] == -56 and got[5, 8] == 127
    assert got.tolist() == [[wrap(int(p) + int(q), 8) for p, q in zip(r, s, strict=True)]
                            for r, s in zip(left, right, strict=True)]


def test_integer_multiply_wraps_across_chunks() -> None:
    graph = dml.Graph(dml.Device())
    a = graph.input([4, 4], "INT32", name="a")
    b = graph.input([1, 4], "INT32", name="b")
    desc = dml.ElementWiseMultiplyOperatorDesc(T("INT32", [4, 4]), T("INT32", [4, 4], [0, 1]), T("INT32", [4, 4]))
    compiled = graph.compile([node(graph, desc, a, b)])
    left = np.array([[2**30, -(2**31), 65536, 7], [3, -5, 2**31 - 1, 0], [1, 2, 3, 4], [-1, -1, -1, -1]], np.int32)
    right = np.array([[4, -1, 65536, -(2**31)]], np.int32)
    _, got = run_both(compiled, {"a": left, "b": right}, {"a": ((1, 3), (2, 2)), "b": ((1,), (1, 3))})
    assert got.tolist() == [[wrap(int(p) * int(q), 32) for p, q in zip(r, right[0], strict=True)] for r in left]
    assert got[0].tolist() == [0, -(2**31), 0, -(2**31)]        # 2^32 wraps to 0; -MIN is MIN; 7 * MIN = MIN


def test_an_input_broadcast_along_every_dimension_of_the_output() -> None:
    # IDENTITY as broadcast_to: a [1, 6] row read as [5, 6] (strides [0, 1]); no input is full along dimension 0,
    # so Dask chunks it as a new array (one chunk, here).
    graph = dml.Graph(dml.Device())
    row = graph.input([1, 6], "FLOAT16", name="row")
    desc = dml.ElementWiseIdentityOperatorDesc(T("FLOAT16", [5, 6], [0, 1]), T("FLOAT16", [5, 6]))
    compiled = graph.compile([node(graph, desc, row)])
    values = np.array([[0.5, -2, 65504, np.inf, -0.0, 1e-7]], np.float16)
    lazy, got = run_both(compiled, {"row": values}, {"row": ((1,), (4, 2))})
    assert lazy.chunks == ((5,), (4, 2))
    same_bits(got, np.repeat(values, 5, axis=0))


# -- inputs read through other strides ------------------------------------------------------------------------------

def test_a_transposed_input_is_the_transposed_dask_array() -> None:
    # SUBTRACT x^T - y: x is [4, 6], read as [6, 4] with strides [1, 6]; chunks of x (2, 2) x (3, 3) become the
    # output's (3, 3) x (2, 2), and y's (6,) x (1, 3) refine them.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    y = graph.input([6, 4], "FLOAT32", name="y")
    desc = dml.ElementWiseSubtractOperatorDesc(T("FLOAT32", [6, 4], [1, 6]), T("FLOAT32", [6, 4]),
                                               T("FLOAT32", [6, 4]))
    compiled = graph.compile([node(graph, desc, x, y)])
    left = np.arange(24, dtype=np.float32).reshape(4, 6)
    right = np.full((6, 4), 0.5, np.float32)
    lazy, got = run_both(compiled, {"x": left, "y": right}, {"x": ((2, 2), (3, 3)), "y": ((6,), (1, 3))})
    assert lazy.chunks == ((3, 3), (1, 1, 2))
    same_bits(got, left.T - right)
    assert not [name for name in lazy.dask.layers if name.startswith("opendml-read")]   # never in one chunk


def test_blocks_are_read_where_they_lie_through_their_own_strides(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every block's descriptor, as the kernel gets it: the transposed x's blocks are bound where they lie in x's
    # chunks (Dask's slices of the [4, 6] array: read through strides [1, 6], 9 elements from the first to the last),
    # and the row's blocks as one row with stride 0 along dimension 0: nothing is copied.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    row = graph.input([1, 4], "FLOAT32", name="row")
    desc = dml.ElementWiseAddOperatorDesc(T("FLOAT32", [6, 4], [1, 6]), T("FLOAT32", [6, 4], [0, 1]),
                                          T("FLOAT32", [6, 4]))
    compiled = graph.compile([node(graph, desc, x, row)])
    left = np.arange(24, dtype=np.float32).reshape(4, 6)
    right = np.array([[0.5, 1.5, 2.5, 3.5]], np.float32)
    seen: list[tuple[dml.OperatorDesc, list[Any]]] = []
    run = dask_graph._run

    def spy(block_desc: dml.OperatorDesc, context: Any, arrays: list[Any]) -> list[np.ndarray]:
        seen.append((block_desc, list(arrays)))
        return run(block_desc, context, arrays)

    monkeypatch.setattr(dask_graph, "_run", spy)
    run_both(compiled, {"x": left, "row": right}, {"x": ((2, 2), (3, 3)), "row": ((1,), (4,))})
    blocks = seen[:4]       # the Dask call's four blocks (then the one machine's whole tensor, not through _run)
    assert len(blocks) == 4 and len(seen) == 4
    for block_desc, (a, b) in blocks:
        assert isinstance(block_desc, dml.ElementWiseAddOperatorDesc)
        assert block_desc.a_tensor.sizes == (3, 2) and block_desc.a_tensor.strides == (1, 6)
        assert block_desc.b_tensor.sizes == (3, 2) and block_desc.b_tensor.strides == (0, 1)
        assert block_desc.output_tensor == T("FLOAT32", [3, 2])
        assert a.shape == (9,) and b.shape == (2,)


def test_chunks_with_negative_strides_are_bound_as_packed_copies() -> None:
    # Dask's reversed slices hand the tasks views with negative strides (which DML's strides cannot express): each
    # is copied packed, and the result is the reversed array's.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "INT16", name="x")
    row = graph.input([1, 6], "INT16", name="row")
    desc = dml.ElementWiseSubtractOperatorDesc(T("INT16", [4, 6]), T("INT16", [4, 6], [0, 1]), T("INT16", [4, 6]))
    compiled = graph.compile([node(graph, desc, x, row)])
    values = np.arange(24, dtype=np.int16).reshape(4, 6)
    offsets = np.array([[1, 2, 3, 4, 5, -32768]], np.int16)
    (lazy,) = compiled({"x": on_dask(values, (3, 4))[::-1, ::-1], "row": on_dask(offsets, (1, 5))[:, ::-1]})
    assert lazy.compute().tolist() == [[wrap(int(p) - int(q), 16) for p, q in zip(r, offsets[0, ::-1], strict=True)]
                                       for r in values[::-1, ::-1]]


def test_a_reshaped_and_a_strided_view_read_the_same_memory() -> None:
    # Both inputs read x's packed [4, 6] memory: as [3, 8] (packed: a reshape) and as [3, 8] through strides [1, 3]
    # (the reshape's transpose: element (i, j) at j * 3 + i), so the output is x reshaped to [3, 8] times itself
    # read column-major.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "INT16", name="x")
    desc = dml.ElementWiseAddOperatorDesc(T("INT16", [3, 8]), T("INT16", [3, 8], [1, 3]), T("INT16", [3, 8]))
    compiled = graph.compile([node(graph, desc, x, x)])
    values = np.arange(24, dtype=np.int16).reshape(4, 6) * 100
    _, got = run_both(compiled, {"x": values}, {"x": ((1, 3), (2, 4))})
    flat = values.reshape(-1).tolist()
    assert got.tolist() == [[flat[i * 8 + j] + flat[j * 3 + i] for j in range(8)] for i in range(3)]


def test_a_view_that_skips_memory_is_read_in_one_chunk() -> None:
    # [3, 2] through strides [6, 1]: the top-left corner of x's [4, 6] memory (neither a transpose nor a reshape).
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    desc = dml.ElementWiseAbsOperatorDesc(T("FLOAT32", [3, 2], [6, 1]), T("FLOAT32", [3, 2]))
    compiled = graph.compile([node(graph, desc, x)])
    values = -np.arange(24, dtype=np.float32).reshape(4, 6)
    lazy, got = run_both(compiled, {"x": values}, {"x": ((2, 2), (3, 3))})
    assert got.tolist() == [[0, 1], [6, 7], [12, 13]]
    assert [name for name in lazy.dask.layers if name.startswith("opendml-read")]


def test_an_input_whose_own_strides_broadcast_is_read_as_one_row() -> None:
    # A graph input [3, 4] with strides [0, 1] holds one row; ADD reads it as declared. Its Dask array (all rows
    # equal) enters every block as its first row, with stride 0; rows that differ are refused when computed, with the
    # message a NumPy input gets at the call.
    graph = dml.Graph(dml.Device())
    x = graph.input([3, 4], "INT32", name="x", strides=[0, 1])
    y = graph.input([3, 4], "INT32", name="y")
    desc = dml.ElementWiseAddOperatorDesc(T("INT32", [3, 4], [0, 1]), T("INT32", [3, 4]), T("INT32", [3, 4]))
    compiled = graph.compile([node(graph, desc, x, y)])
    same = np.array([[1, 2, 3, 4]] * 3, np.int32)
    counts = np.arange(12, dtype=np.int32).reshape(3, 4) * 10
    lazy, got = run_both(compiled, {"x": same, "y": counts}, {"x": ((1, 2), (2, 2)), "y": ((2, 1), (3, 1))})
    assert lazy.chunks == ((2, 1), (3, 1))      # x is checked in one chunk, so y's chunks are the output's
    assert got.tolist() == (same + counts).tolist()
    different = same.copy()
    different[2, 3] = 5
    with pytest.raises(dml.BindingError) as numpy_error:
        compiled({"x": different, "y": counts})
    (lazy,) = compiled({"x": on_dask(different, 2), "y": counts})
    with pytest.raises(dml.BindingError) as dask_error:
        lazy.compute()
    assert str(dask_error.value) == str(numpy_error.value)


def test_other_operators_read_strides_folded_into_them() -> None:
    # REDUCE MAX over axis 0 of x^T, its InputTensor reading x [3, 5] through strides [1, 5] (no IDENTITY node).
    graph = dml.Graph(dml.Device())
    x = graph.input([3, 5], "FLOAT32", name="x")
    desc = dml.ReduceOperatorDesc("MAX", T("FLOAT32", [5, 3], [1, 5]), T("FLOAT32", [1, 3]), [0])
    compiled = graph.compile([node(graph, desc, x)])
    values = np.array([[1, 9, 2, 8, 3], [-1, -2, -3, -4, -5], [0.5, 7, 0.25, 7.5, 6]], np.float32)
    _, got = run_both(compiled, {"x": values}, {"x": ((1, 2), (2, 3))})
    assert got.tolist() == [[9, -1, 7.5]]


# -- any broadcast, layout and chunks ------------------------------------------------------------------------------

#: (descriptor class, input type, output type, values) of the property's operators; values(rng, shape) -> array.
Values = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
_SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, 65504, 1 / 3], np.float32)


def _floats(dtype: Any) -> Values:
    def values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        drawn = rng.standard_normal(shape).astype(np.float32) * 100
        drawn.reshape(-1)[::3] = rng.choice(_SPECIAL, drawn.size)[::3]
        with np.errstate(over="ignore"):
            return drawn.astype(dtype)
    return values


def _integers(dtype: Any) -> Values:
    info = np.iinfo(dtype)
    return lambda rng, shape: rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)


PROPERTY_OPERATORS = [
    (dml.ElementWiseAddOperatorDesc, "FLOAT32", "FLOAT32", _floats(np.float32)),
    (dml.ElementWiseMultiplyOperatorDesc, "FLOAT16", "FLOAT16", _floats(np.float16)),
    (dml.ElementWiseSubtractOperatorDesc, "INT8", "INT8", _integers(np.int8)),
    (dml.ElementWiseDivideOperatorDesc, "INT32", "INT32", _integers(np.int32)),
    (dml.ElementWiseMaxOperatorDesc, "FLOAT32", "FLOAT32", _floats(np.float32)),
    (dml.ElementWiseLogicalLessThanOperatorDesc, "FLOAT32", "UINT8", _floats(np.float32)),
    (dml.ElementWiseBitXorOperatorDesc, "UINT64", "UINT64", _integers(np.uint64)),
]


@st.composite
def cut(draw: st.DrawFn, size: int) -> tuple[int, ...]:
    """One dimension's chunks: whole, or cut at up to two random places."""
    if size == 1 or draw(st.booleans()):
        return (size,)
    edges = [0, *sorted(draw(st.sets(st.integers(1, size - 1), min_size=1, max_size=2))), size]
    return tuple(high - low for low, high in itertools.pairwise(edges))


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_any_broadcast_layout_and_chunks_give_one_machines_bits(data: st.DataObject) -> None:
    # Two inputs, each broadcasting along any of the output's dimensions, held in memory in any dimension order (a
    # transposed view), each chunked in its own way.
    cls, input_type, output_type, values = data.draw(st.sampled_from(PROPERTY_OPERATORS))
    sizes = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3), label="sizes"))
    rank = len(sizes)
    graph = dml.Graph(dml.Device())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    tensors, expressions, arrays, chunks = [], [], {}, {}
    for name in ("a", "b"):
        broadcast = data.draw(st.lists(st.booleans(), min_size=rank, max_size=rank), label=f"{name} broadcasts")
        compact = [1 if flag else size for flag, size in zip(broadcast, sizes, strict=True)]
        order = data.draw(st.permutations(range(rank)), label=f"{name} memory order")
        held = [compact[dim] for dim in order]
        strides = dml.TensorDesc(input_type, held).element_strides
        tensors.append(T(input_type, sizes, [0 if broadcast[dim] and sizes[dim] > 1 else strides[order.index(dim)]
                                             for dim in range(rank)]))
        expressions.append(graph.input(held, input_type, name=name))
        arrays[name] = values(rng, tuple(held))
        chunks[name] = tuple(data.draw(cut(size)) for size in held)
    note(f"{cls.__name__} {input_type}: {tensors}, chunks {chunks}")
    compiled = graph.compile([node(graph, cls(*tensors, T(output_type, sizes)), *expressions)])
    run_both(compiled, arrays, chunks)


# -- types and operators --------------------------------------------------------------------------------------------

def test_float16_multiply_rounds_once_in_every_block() -> None:
    # FLOAT16 computes in FLOAT32 and rounds once: the product of two FLOAT16 values is exact in FLOAT32, so each
    # result is the product correctly rounded to FLOAT16 (65504 * 2 overflows to inf; a tiny product is subnormal).
    graph = dml.Graph(dml.Device())
    a = graph.input([5, 8], "FLOAT16", name="a")
    column = graph.input([5, 1], "FLOAT16", name="column")
    desc = dml.ElementWiseMultiplyOperatorDesc(T("FLOAT16", [5, 8]), T("FLOAT16", [5, 8], [1, 0]),
                                               T("FLOAT16", [5, 8]))
    compiled = graph.compile([node(graph, desc, a, column)])
    values = np.random.default_rng(5).standard_normal((5, 8)).astype(np.float16)
    values[0, 0], values[1, 1] = 65504, 2**-14
    scales = np.array([[2], [2**-10], [1 / 3], [-7], [np.nan]], np.float16)
    _, got = run_both(compiled, {"a": values, "column": scales}, {"a": ((2, 3), (3, 5)), "column": ((1, 4), (1,))})
    with np.errstate(over="ignore"):
        same_bits(got, (values.astype(np.float32) * scales.astype(np.float32)).astype(np.float16))
    assert got[0, 0] == np.inf and got[1, 1] == np.float16(2**-24)


def test_a_comparison_gives_uint8_across_chunks() -> None:
    # LOGICAL_GREATER_THAN of FLOAT32 against a broadcast column, to UINT8: 1 / 0, and NaN compares false.
    graph = dml.Graph(dml.Device())
    a = graph.input([4, 6], "FLOAT32", name="a")
    b = graph.input([4, 1], "FLOAT32", name="b")
    desc = dml.ElementWiseLogicalGreaterThanOperatorDesc(T("FLOAT32", [4, 6]), T("FLOAT32", [4, 6], [1, 0]),
                                                         T("UINT8", [4, 6]))
    compiled = graph.compile([node(graph, desc, a, b)])
    values = np.array([[0, 1, 2, 3, 4, 5], [-1, -0.0, 0.0, 1, np.nan, -np.inf], [np.inf, 3, 2, 1, 0, -1],
                       [np.nan] * 6], np.float32)
    bounds = np.array([[2.5], [-0.0], [np.nan], [0]], np.float32)
    _, got = run_both(compiled, {"a": values, "b": bounds}, {"a": ((3, 1), (4, 2)), "b": ((2, 2), (1,))})
    assert got.dtype == np.uint8
    assert got.tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 0, 0], [0] * 6, [0] * 6]


def test_if_selects_by_a_chunked_condition_with_a_broadcast_scalar() -> None:
    # IF: the condition chunked, ATensor full, BTensor a [1, 1] scalar read as [3, 7] (strides [0, 0]).
    graph = dml.Graph(dml.Device())
    c = graph.input([3, 7], "UINT8", name="c")
    a = graph.input([3, 7], "INT64", name="a")
    b = graph.input([1, 1], "INT64", name="b")
    desc = dml.ElementWiseIfOperatorDesc(T("UINT8", [3, 7]), T("INT64", [3, 7]), T("INT64", [3, 7], [0, 0]),
                                         T("INT64", [3, 7]))
    compiled = graph.compile([node(graph, desc, c, a, b)])
    condition = (np.arange(21).reshape(3, 7) % 3).astype(np.uint8) * 127      # 0, 127, 254, ...
    values = np.arange(21, dtype=np.int64).reshape(3, 7) + 2**40
    scalar = np.array([[-(2**63)]], np.int64)
    _, got = run_both(compiled, {"c": condition, "a": values, "b": scalar},
                      {"c": ((2, 1), (5, 2)), "a": ((1, 2), (3, 4))})
    assert got.tolist() == [[2**40 + 7 * i + j if (7 * i + j) % 3 else -(2**63) for j in range(7)] for i in range(3)]


@pytest.mark.parametrize("with_zero_point", [True, False])
def test_quantize_linear_per_channel_with_channels_cut_into_chunks(with_zero_point: bool) -> None:
    # QUANTIZE_LINEAR of [2, 3, 4] FLOAT32 with a scale and zero point per channel (dimension 1, read through
    # strides [0, 1, 0]): round half to even, plus the zero point, saturated to UINT8.
    graph = dml.Graph(dml.Device())
    x = graph.input([2, 3, 4], "FLOAT32", name="x")
    s = graph.input([1, 3, 1], "FLOAT32", name="s")
    z = graph.input([1, 3, 1], "UINT8", name="z") if with_zero_point else None
    per_channel = [0, 1, 0]
    desc = dml.ElementWiseQuantizeLinearOperatorDesc(
        T("FLOAT32", [2, 3, 4]), T("FLOAT32", [2, 3, 4], per_channel),
        T("UINT8", [2, 3, 4], per_channel) if with_zero_point else None, T("UINT8", [2, 3, 4]))
    compiled = graph.compile([node(graph, desc, x, s, z)])
    values = np.array([[[0.5, 1.5, 2.5, -0.5], [10, 11, 12, 13], [300, -300, 1e9, np.nan]],
                       [[3.5, 4.5, 5.5, 6.5], [-0.25, -0.75, 0.75, 0.25], [0, 1, 2, 3]]], np.float32)
    scales = np.array([[[1], [0.5], [2]]], np.float32)
    zeros = np.array([[[0], [100], [255]]], np.uint8)
    arrays = {"x": values, "s": scales, **({"z": zeros} if with_zero_point else {})}
    chunks = {"x": ((1, 1), (2, 1), (3, 1)), "s": ((1,), (1, 2), (1,)), "z": ((1,), (3,), (1,))}
    _, got = run_both(compiled, arrays, chunks)
    offset = zeros if with_zero_point else np.zeros_like(zeros)
    with np.errstate(invalid="ignore"):
        expected = np.clip(np.rint(values / scales) + offset, 0, 255)
    expected[np.isnan(expected)] = 0        # NaN saturates to 0
    assert got.tolist() == expected.astype(np.uint8).tolist()


def test_scale_bias_and_a_fused_activation_carry_into_every_block() -> None:
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 4], "FLOAT32", name="x")
    row = graph.input([1, 4], "FLOAT32", name="row")
    clip = dml.ElementWiseClipOperatorDesc(T("FLOAT32", [4, 4]), T("FLOAT32", [4, 4]), dml.ScaleBias(2.0, 1.0),
                                           -3.0, 5.0)
    clipped = node(graph, clip, x)
    add1 = dml.ElementWiseAdd1OperatorDesc(T("FLOAT32", [4, 4]), T("FLOAT32", [4, 4], [0, 1]), T("FLOAT32", [4, 4]),
                                           dml.ActivationReluOperatorDesc())
    compiled = graph.compile([node(graph, add1, clipped, row)])
    values = np.arange(16, dtype=np.float32).reshape(4, 4) - 6          # 2x + 1: -11 ... 19, clipped to [-3, 5]
    offsets = np.array([[-4, 0, 1, -10]], np.float32)
    _, got = run_both(compiled, {"x": values, "row": offsets}, {"x": ((3, 1), (2, 2)), "row": ((1,), (1, 3))})
    expected = np.maximum(np.clip(values * 2 + 1, -3, 5) + offsets, 0)
    same_bits(got, expected)


# -- through the graph API ------------------------------------------------------------------------------------------

def test_graph_api_expressions_on_dask_arrays() -> None:
    # The graph API's nodes (dml.add and Python's operators broadcasting by NumPy's rules, numbers as constants,
    # transpose and reshape folded into their readers, broadcast_to as a graph output, a comparison feeding IF,
    # QUANTIZE_LINEAR per channel): every output one machine's, bit for bit, and the hand-worked ones as worked.
    graph = dml.Graph(dml.Device())
    x = graph.input([4, 6], "FLOAT32", name="x")
    row = graph.input([6], "FLOAT32", name="row")
    counts = graph.input([2, 3, 2], "INT8", name="counts")
    signal = graph.input([2, 3, 2], "FLOAT32", name="signal")
    scale = graph.input([1, 3, 1], "FLOAT32", name="scale")
    outputs = [x * row + 1, dml.greater_than(dml.transpose(x), 10.0), dml.broadcast_to(row, [3, 6]),
               dml.reshape(x, [3, 8]) - dml.reshape(dml.transpose(x), [3, 8]), dml.if_(dml.less_than(x, row), x, -1.0),
               counts + 100, dml.quantize_linear(signal, scale, output_dtype="INT8"), -abs(x) ** 2]
    compiled = graph.compile(outputs)
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    arrays = {"x": values, "row": np.arange(6, dtype=np.float32) * 2,
              "counts": np.arange(-6, 6, dtype=np.int8).reshape(2, 3, 2) * 21,
              "signal": np.array([[[0.5, 1.5], [-3, 5], [100, -100]], [[2.5, -2.5], [255, 7], [-0.25, 60]]],
                                 np.float32),
              "scale": np.array([[[1], [2], [0.5]]], np.float32)}
    chunks = {"x": ((2, 2), (3, 3)), "row": ((4, 2),), "counts": ((1, 1), (2, 1), (1, 1)),
              "signal": ((2,), (1, 2), (1, 1)), "scale": ((1,), (1, 2), (1,))}
    lazy = compiled({name: on_dask(array, chunks[name]) for name, array in arrays.items()})
    got = dask.compute(*lazy)
    for value, expected in zip(got, compiled(arrays), strict=True):
        same_bits(value, expected)
    assert lazy[0].chunks == ((2, 2), (3, 1, 2)) and lazy[1].chunks == ((3, 3), (2, 2))
    assert got[0].tolist() == [[(6 * i + j) * 2 * j + 1 for j in range(6)] for i in range(4)]
    assert got[1].tolist() == [[int(6 * j + i > 10) for j in range(4)] for i in range(6)]
    assert got[2].tolist() == [[0, 2, 4, 6, 8, 10]] * 3
    assert got[4].tolist() == [[6 * i + j if 6 * i + j < 2 * j else -1 for j in range(6)] for i in range(4)]
    assert got[5].reshape(-1).tolist() == [wrap(21 * k + 100, 8) for k in range(-6, 6)]
    # x / scale rounded half to even, saturated to INT8: channel 0 by 1, channel 1 by 2, channel 2 by 0.5.
    assert got[6].tolist() == [[[0, 2], [-2, 2], [127, -128]], [[2, -2], [127, 4], [-0, 120]]]


def test_descriptors_that_differ_only_in_the_sign_of_a_zero_are_not_confused() -> None:
    # IDENTITY with ScaleBias (-1, -0) and (-1, +0) (dml's -x below NEGATE's level uses the first): equal as Python
    # values (-0.0 == 0.0, and they hash alike), yet +0 * -1 + -0 is -0 where + +0 gives +0. Each block's compiled
    # operator is its own descriptor's.
    graph = dml.Graph(dml.Device())
    x = graph.input([2, 4], "FLOAT32", name="x")
    compiled = graph.compile([dml.identity(x, scale_bias=dml.ScaleBias(-1.0, bias)) for bias in (-0.0, 0.0)])
    zeros = np.zeros((2, 4), np.float32)
    got = dask.compute(*compiled({"x": on_dask(zeros, ((1, 1), (2, 2)))}), scheduler="sync")
    for value, expected in zip(got, compiled({"x": zeros}), strict=True):
        same_bits(value, expected)
    assert np.signbit(got[0]).all() and not np.signbit(got[1]).any()


# -- on a cluster ---------------------------------------------------------------------------------------------------

def test_on_a_distributed_worker_process() -> None:
    # The generated descriptor classes cross to a worker process (pickled by name) and run there.
    graph = dml.Graph(dml.Device())
    a = graph.input([4, 5], "UINT16", name="a")
    b = graph.input([4, 1], "UINT16", name="b")
    desc = dml.ElementWiseBitShiftLeftOperatorDesc(T("UINT16", [4, 5]), T("UINT16", [4, 5], [1, 0]),
                                                   T("UINT16", [4, 5]))
    compiled = graph.compile([node(graph, desc, a, b)])
    values = np.full((4, 5), 0x8421, np.uint16)
    shifts = np.array([[0], [1], [15], [16]], np.uint16)
    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        (lazy,) = compiled({"a": on_dask(values, ((2, 2), (3, 2))), "b": on_dask(shifts, ((1, 3), (1,)))})
        got = client.compute(lazy).result()
    expected = [[(0x8421 << shift) & 0xFFFF if shift < 16 else 0] * 5 for shift in (0, 1, 15, 16)]
    assert got.tolist() == expected


# -- errors -----------------------------------------------------------------------------------------------------------

def test_a_chunk_past_the_element_limit_is_refused_before_any_task_runs() -> None:
    # 2^33 FLOAT32 elements are more than one DML tensor holds (DECISIONS 2); each chunk is a tensor of its own.
    graph = dml.Graph(dml.Device())
    x = graph.input([2**21, 4096], "FLOAT32", name="x")
    row = graph.input([1, 4096], "FLOAT32", name="row")
    sizes = [2**21, 4096]
    desc = dml.ElementWiseAddOperatorDesc(T("FLOAT32", sizes), T("FLOAT32", sizes, [0, 1]), T("FLOAT32", sizes))
    compiled = graph.compile([node(graph, desc, x, row)])
    offsets = np.arange(4096, dtype=np.float32).reshape(1, 4096)
    message = (r"^DML_OPERATOR_ELEMENT_WISE_ADD: ATensor's largest Dask chunk has its last element at index "
               r"8589934591; with Sizes \[2097152, 4096\] and Strides \[4096, 1\] it must be below 2\^32$")
    with pytest.raises(dml.ValidationError, match=message):
        compiled({"x": da.zeros((2**21, 4096), dtype=np.float32, chunks=-1), "row": offsets})
    # Chunked, it runs block by block; only the blocks a result needs are computed.
    rows = np.arange(3 * 4096, dtype=np.float32).reshape(3, 4096)
    huge = da.concatenate([on_dask(rows, ((1, 2), (4096,))),
                           da.zeros((2**21 - 3, 4096), dtype=np.float32, chunks=(2**18, 4096))])
    (total,) = compiled({"x": huge, "row": offsets})
    same_bits(total[:3].compute(), rows + offsets)


def test_a_view_past_its_expression_is_refused_at_the_call() -> None:
    # A [3, 4] tensor through strides [6, 1] ends at element 15 (64 bytes); x [2, 6] holds 48 bytes.
    graph = dml.Graph(dml.Device())
    x = graph.input([2, 6], "FLOAT32", name="x")
    desc = dml.ElementWiseIdentityOperatorDesc(T("FLOAT32", [3, 4], [6, 1]), T("FLOAT32", [3, 4]))
    compiled = graph.compile([node(graph, desc, x)])
    message = (r"^DML_OPERATOR_ELEMENT_WISE_IDENTITY: InputTensor \(Sizes \[3, 4\], Strides \[6, 1\]\) needs 64 "
               r"bytes; the expression it reads holds 48 \(Sizes \[2, 6\], Strides \[6, 1\]\)$")
    with pytest.raises(dml.BindingError, match=message):
        compiled({"x": on_dask(np.zeros((2, 6), np.float32), 3)})


def test_a_chunk_that_lies_about_its_dtype_is_refused_when_computed() -> None:
    graph = dml.Graph(dml.Device())
    a = graph.input([4, 4], "FLOAT32", name="a")
    desc = dml.ElementWiseExpOperatorDesc(T("FLOAT32", [4, 4]), T("FLOAT32", [4, 4]))
    compiled = graph.compile([node(graph, desc, a)])
    lying = on_dask(np.ones((4, 4)), 2).map_blocks(lambda block: block, dtype=np.float32)
    (lazy,) = compiled({"a": lying})
    message = (r"^CompiledGraph: input 'a': Dask chunk \[\d, \d\] has dtype float64; the Dask array declares float32 "
               r"\(DataType FLOAT32\)$")
    with pytest.raises(dml.BindingError, match=message):
        lazy.compute(scheduler="sync")
