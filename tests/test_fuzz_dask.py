"""Wrong-kind values on Dask: inputs whose chunks disagree with what their Dask array declares.

Dask trusts what it is told: a `map_blocks` given the wrong `dtype=` (or a function that returns the wrong shape, a
list, a scalar, a masked array, another library's array) makes an array that declares one thing and computes another.
Every kind of lie, in one chunk of one input, times a set of graph operators: each must raise opendml's BindingError at
`compute()`, naming the input, the chunk and both dtypes or shapes (or what the chunk is), and produce no output; the
call itself, which computes nothing, succeeds. The computations run on Dask's synchronous scheduler (no cluster: each
case computes a few small chunks).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest

import opendml as dml


class DeviceArray:
    """A stand-in for another library's array (a CuPy array): shape and dtype, but NumPy may not convert it."""

    def __init__(self, block: np.ndarray) -> None:
        self.shape, self.dtype, self.ndim = block.shape, block.dtype, block.ndim

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


@dataclass(frozen=True)
class Lie:
    """A chunk that disagrees with its Dask array, and the end of the message that refuses it, from the input's
    declared dtype and the chunk's shape."""

    name: str
    make: Callable[[np.ndarray], Any]
    message: Callable[[np.dtype[Any], list[int]], str]


def _dtype_lie(dtype: Any) -> Lie:
    return Lie(f"dtype-{np.dtype(dtype).name}", lambda block: block.astype(dtype),
               lambda declared, shape: f"has dtype {np.dtype(dtype)}; the Dask array declares {declared} (DataType "
                                       f"{'FLOAT32' if declared == np.float32 else 'INT32'})")


def _shape_lie(name: str, make: Callable[[np.ndarray], np.ndarray], lied: Callable[[list[int]], list[int]]) -> Lie:
    return Lie(name, make, lambda declared, shape: f"has shape {lied(shape)}; the Dask array's chunks say {shape}")


def _not_an_array(name: str, make: Callable[[np.ndarray], Any], kind: Callable[[np.dtype[Any]], str]) -> Lie:
    return Lie(name, make, lambda declared, shape: f"is {kind(declared)}; it must be a NumPy array (not a masked one) "
                                                   f"of dtype {declared} and shape {shape}, as the Dask array declares")


LIES = [
    _dtype_lie(np.float64), _dtype_lie(np.float16), _dtype_lie(np.int8),
    _shape_lie("fewer-rows", lambda block: block[:-1], lambda shape: [shape[0] - 1, shape[1]]),
    _shape_lie("more-columns", lambda block: np.concatenate([block, block[:, :1]], axis=1),
               lambda shape: [shape[0], shape[1] + 1]),
    _shape_lie("more-dims", lambda block: block[None], lambda shape: [1, *shape]),
    _shape_lie("fewer-dims", lambda block: block.reshape(-1), lambda shape: [shape[0] * shape[1]]),
    _not_an_array("list", lambda block: block.tolist(), lambda declared: "a builtins.list"),
    _not_an_array("python-scalar", lambda block: block.flat[0].item(),
                  lambda declared: f"a builtins.{'float' if declared.kind == 'f' else 'int'}"),
    _not_an_array("numpy-scalar", lambda block: block.flat[0],
                  lambda declared: f"a numpy.{declared} of dtype {declared}"),
    _not_an_array("masked", lambda block: np.ma.masked_array(block, mask=block == block.flat[0]),
                  lambda declared: f"a numpy.ma.MaskedArray of dtype {declared}"),
    _not_an_array("device-array", DeviceArray,
                  lambda declared: f"a {DeviceArray.__module__}.DeviceArray of dtype {declared}"),
]


def _input(graph: dml.Graph, name: str) -> dml.Expression:
    (expression,) = [expression for expression in graph.inputs if expression.name == name]
    return expression


@dataclass(frozen=True)
class Case:
    """A graph whose input x (FLOAT32, or INT32 for indices: values 0-3) is given with a lie in its last chunk, and
    the honest inputs it has besides."""

    name: str
    build: Callable[[dml.Graph, dml.Expression], list[dml.Expression]]
    chunks: tuple[tuple[int, ...], ...] = ((3, 3), (4, 4))
    type_name: str = "FLOAT32"
    others: tuple[tuple[str, Any], ...] = ()


TABLE = np.arange(16, dtype=np.float32).reshape(4, 4)
CASES = [
    Case("activation", lambda g, x: [dml.activation_relu(x)]),
    Case("reduce-chunked-axis", lambda g, x: [dml.reduce(x, "SUM", [0])]),
    Case("reduce-all-axes", lambda g, x: [dml.reduce(x, "LOG_SUM_EXP", [0, 1])]),
    Case("arg-max", lambda g, x: [dml.arg_max(x, [0])]),
    Case("split", lambda g, x: dml.split(x, 1, [3, 5])),
    Case("join", lambda g, x: [dml.join([x, _input(g, "y")], 0)],
         others=(("y", da.ones((2, 8), dtype=np.float32, chunks=(1, 8))),)),
    Case("mvn", lambda g, x: [dml.mean_variance_normalization(x, axes=[0])]),
    Case("gather-nd-input", lambda g, x: [dml.gather_nd(x, _input(g, "rows"), 2, 2)],
         others=(("rows", np.array([[5], [0], [2]], np.int32)),)),
    Case("gather-nd-indices", lambda g, x: [dml.gather_nd(_input(g, "table"), x, 2, 2)], ((3, 3), (1, 1)), "INT32",
         (("table", da.from_array(TABLE, chunks=2)),)),
    Case("one-hot", lambda g, x: [dml.one_hot(x, g.constant(np.array([[0, 1]], np.float32)), 4, 1)], ((3, 3), (1,)),
         "INT32"),
]


def _lying(array: Any, lie: Lie) -> Any:
    """`array` with its last chunk replaced by the lie, still declaring the array's dtype and chunks."""
    last = tuple(count - 1 for count in array.numblocks)

    def chunk(block: np.ndarray, block_id: tuple[int, ...] = ()) -> Any:
        return lie.make(block) if block_id == last else block

    return array.map_blocks(chunk, dtype=array.dtype, meta=np.empty((0, 0), array.dtype))


@pytest.mark.parametrize("lie", LIES, ids=[lie.name for lie in LIES])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_chunk_that_lies_is_refused_at_compute(case: Case, lie: Lie) -> None:
    graph = dml.Graph(dml.Device())
    shape = [sum(sizes) for sizes in case.chunks]
    x = graph.input(shape, case.type_name, name="x")
    for name, value in case.others:
        graph.input(list(value.shape), value.dtype, name=name)
    compiled = graph.compile(case.build(graph, x))
    dtype = np.dtype(np.float32 if case.type_name == "FLOAT32" else np.int32)
    honest = (np.arange(np.prod(shape)).reshape(shape) % 4).astype(dtype)      # valid indices, too
    others = dict(case.others)
    results = compiled({"x": _lying(da.from_array(honest, chunks=case.chunks), lie), **others})   # computes nothing
    chunk = [len(sizes) - 1 for sizes in case.chunks]
    message = f"CompiledGraph: input 'x': Dask chunk {chunk} {lie.message(dtype, [sizes[-1] for sizes in case.chunks])}"
    with pytest.raises(dml.BindingError, match=f"^{re.escape(message)}$"):
        dask.compute(*results, scheduler="synchronous")
    # Honest chunks compute, as one machine does.
    got = dask.compute(*compiled({"x": da.from_array(honest, chunks=case.chunks), **others}), scheduler="synchronous")
    expected = compiled({"x": honest, **{name: np.asarray(value) for name, value in others.items()}})
    for value, reference in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, reference, rtol=1e-6)


class Tagged(np.ndarray):
    """An ndarray subclass with nothing hidden (as np.memmap): its values are all it holds."""


def test_an_ndarray_subclass_that_holds_its_values_is_accepted() -> None:
    values = np.arange(48, dtype=np.float32).reshape(6, 8)
    graph = dml.Graph(dml.Device())
    x = graph.input([6, 8], "FLOAT32", name="x")
    compiled = graph.compile([dml.reduce(x, "MAX", [0])])
    array = da.from_array(values, chunks=(3, 4)).map_blocks(lambda block: block.view(Tagged), dtype=np.float32)
    assert type(array.blocks[1, 1].compute(scheduler="synchronous")) is Tagged
    (got,) = dask.compute(*compiled({"x": array}), scheduler="synchronous")
    assert got.tolist() == [[40, 41, 42, 43, 44, 45, 46, 47]]
