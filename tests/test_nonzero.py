"""NONZERO_COORDINATES (issue 28, ops/nonzero.py), on every backend.

The page's example and its ordering example copied by hand; NaN (any sign and payload) nonzero and -0.0 zero in both
float types (README, Rulings); the page's one support row (3_0, 4 or 5 dimensions, eight input types, UINT32
outputs) and its refusals; inputs with strides and zero strides, outputs with strides, every output between sentinel
bytes, the rows past the count left as they were; every type against the independent reference of
tests/reference.py (`reference_nonzero`: the elements walked one by one in Python); an input of many blocks (the
kernels' count, prefix and write across blocks); hypothesis over the drawer of tests/strategies.py; bad descriptors
and calls with their messages; the JSON reader; the graph API (dml.nonzero_coordinates, DirectMLX's
NonZeroCoordinates) and Dask chunks in every dimension.
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
from reference import reference_nonzero
from strategies import (
    addressed_byte_mask,
    backends,
    build_buffer,
    read_buffer,
    registered_descriptor,
    sentinel_bytes,
)
from test_elementwise_samples import _cli

import opendml as dml
from opendml.ops.nonzero import SUPPORT

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, F16, U32 = DT.FLOAT32, DT.FLOAT16, DT.UINT32
NZ = dml.NonzeroCoordinatesOperatorDesc
OP = "DML_OPERATOR_NONZERO_COORDINATES"


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


def nonzero(source: dml.TensorDesc, columns: int | None = None, coordinates_strides: Sequence[int] | None = None
            ) -> dml.NonzeroCoordinatesOperatorDesc:
    rank = source.dimension_count
    count = int(np.prod(source.sizes))
    sizes = [1] * (rank - 2) + [count, rank if columns is None else columns]
    return NZ(source, T(U32, [1] * rank), T(U32, sizes, coordinates_strides))


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: dml.NonzeroCoordinatesOperatorDesc, x: np.ndarray, *, level: dml.FeatureLevel = TOP, seed: int = 0
        ) -> tuple[int, np.ndarray, np.ndarray]:
    """(the count, the coordinates' first count rows, the logical input as bound) of one dispatch in host memory:
    the input laid out by its strides 16 bytes into its buffer, each output 16 bytes into a buffer of sentinel bytes.
    Checks that the input is unchanged and that no output byte changed but the count's and those of the first count
    rows' elements (the rows past the count are left as they were)."""
    dev = device(level)
    compiled = dev.compile_operator(dev.create_operator(desc))
    source, count_tensor, table = desc.input_tensor, desc.output_count_tensor, desc.output_coordinates_tensor
    raw = build_buffer(x, source.strides, byte_offset=16, seed=seed)
    before = raw.copy()
    logical = read_buffer(raw, x.dtype, source.sizes, source.strides, byte_offset=16)
    fillers = [sentinel_bytes(16 + tensor.total_tensor_size_in_bytes + 12, seed=seed + index)
               for index, tensor in enumerate((count_tensor, table))]
    outputs = [filler.copy() for filler in fillers]
    compiled.execute([dml.Binding(raw, 16)], [dml.Binding(output, 16) for output in outputs])
    assert np.array_equal(raw, before), "the input changed"
    count = int(outputs[0][16:20].view(np.uint32)[0])
    rows = [1] * (table.dimension_count - 2) + [count, desc.columns]
    for output, filler, tensor, sizes in ((outputs[0], fillers[0], count_tensor, count_tensor.sizes),
                                          (outputs[1], fillers[1], table, rows)):
        written = addressed_byte_mask(output.size, 4, sizes, tensor.strides, byte_offset=16)
        assert not np.flatnonzero((output != filler) & ~written).size, "bytes outside the written elements changed"
    got = read_buffer(outputs[1], np.uint32, table.sizes, table.strides, byte_offset=16)
    return count, got.reshape(-1, desc.columns)[:count], logical


def check_nonzero(desc: dml.NonzeroCoordinatesOperatorDesc, x: np.ndarray, **kwargs: Any) -> tuple[int, np.ndarray]:
    """One dispatch against the reference (the oracle of test_fuzz_descriptors too)."""
    count, rows, logical = run(desc, x, **kwargs)
    want = reference_nonzero(logical, desc.columns)
    assert count == len(want) and np.array_equal(rows, want), (desc, logical, count, rows, want)
    return count, rows


# -- the page's examples ---------------------------------------------------------------------------------------------

def test_the_page_s_example(backend: str) -> None:
    """{1,1,2,4} FLOAT32 with -0.0 among its zeros, coordinates {1,1,8,3}: 4 rows of its last 3 coordinates."""
    x = np.array([[[[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]]]], np.float32)
    count, rows, _ = run(nonzero(T(F32, [1, 1, 2, 4]), 3), x)
    assert count == 4
    assert rows.tolist() == [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]


def test_coordinates_come_in_ascending_element_index(backend: str) -> None:
    """The page: nonzero values at {1,0}, {1,2} and {0,5} are written [[0,5], [1,0], [1,2]] (N = 2 of 4)."""
    x = np.zeros((1, 1, 2, 6), np.int32)
    x[0, 0, 1, 0], x[0, 0, 1, 2], x[0, 0, 0, 5] = 7, -1, 3
    count, rows, _ = run(nonzero(T("INT32", [1, 1, 2, 6]), 2), x)
    assert (count, rows.tolist()) == (3, [[0, 5], [1, 0], [1, 2]])
    count, rows, _ = run(nonzero(T("INT32", [1, 1, 2, 6])), x)        # N = 4: the leading 0s too
    assert (count, rows.tolist()) == (3, [[0, 0, 0, 5], [0, 0, 1, 0], [0, 0, 1, 2]])


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_nan_is_nonzero_and_negative_zero_is_zero(data_type: str, backend: str) -> None:
    """NaN != 0 (a quiet NaN, a negative one, one with a payload); -0.0 == 0 (the page); the smallest subnormal and
    infinity are nonzero."""
    dtype = np.dtype(np.float32 if data_type == "FLOAT32" else np.float16)
    bits = np.dtype(f"u{dtype.itemsize}")
    sign = bits.type(1 << (8 * dtype.itemsize - 1))
    x = np.zeros(8, dtype)
    x[1] = np.nan
    x[2] = -0.0
    x[3] = -np.nan
    x[4] = np.array(1, bits).view(dtype)                         # the smallest subnormal
    x[5] = np.array(np.array(np.nan, dtype).view(bits) | 1, bits).view(dtype)   # a payload
    x[6] = np.inf
    x[7] = np.array(sign, bits).view(dtype)                      # -0.0 again, as bits
    count, rows, _ = run(nonzero(T(data_type, [1, 1, 1, 8]), 1), x.reshape(1, 1, 1, 8))
    assert (count, rows.ravel().tolist()) == (5, [1, 3, 4, 5, 6])


def test_all_zero_and_all_nonzero(backend: str) -> None:
    """No nonzero element: count 0, no coordinate written; every element nonzero: every row, N = 1 from a {1,1,1,3}
    input (effective rank 1) and a {1,1,1,1} input (effective rank 0, N at least 1)."""
    count, rows, _ = run(nonzero(T("UINT8", [1, 1, 2, 3])), np.zeros((1, 1, 2, 3), np.uint8))
    assert (count, rows.shape) == (0, (0, 4))
    count, rows, _ = run(nonzero(T("INT8", [1, 1, 1, 3]), 1), np.array([[[[-128, 1, 127]]]], np.int8))
    assert (count, rows.ravel().tolist()) == (3, [0, 1, 2])
    count, rows, _ = run(nonzero(T("UINT16", [1, 1, 1, 1]), 1), np.array([[[[65535]]]], np.uint16))
    assert (count, rows.tolist()) == (1, [[0]])


def test_strides_zero_strides_and_strided_coordinates(backend: str) -> None:
    """A broadcast input (stride 0 along dimension 1: both planes the same), read transposed (strides reversed), into
    coordinates with padded, transposed strides (columns far apart, rows adjacent)."""
    plane = np.array([[0, 5, 0], [6, 0, 0]], np.int16)
    x = np.broadcast_to(plane, (1, 2, 2, 3)).copy()
    source = T("INT16", [1, 2, 2, 3], [0, 0, 1, 2])
    count, rows = check_nonzero(nonzero(source, 3, [1, 1, 1, 16]), x)
    assert (count, rows.tolist()) == (4, [[0, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]])
    x5 = (np.arange(3 * 2 * 3 * 2) % 3 == 0).astype(np.float32).reshape(1, 3, 2, 3, 2)
    check_nonzero(nonzero(T(F32, x5.shape, [100, 1, 40, 3, 13]), 4, [1, 1, 1, 4, 1]), x5)


def test_an_input_of_many_blocks(backend: str) -> None:
    """30000 elements: the numba kernel's blocks of whole rows and the gpu's blocks of 64 elements (469 blocks, so
    each prefix invocation scans two) each count, offset and write their part in order."""
    rng = np.random.default_rng(4)
    x = (rng.random((1, 2, 150, 100)) < 0.4).astype(np.uint8) * rng.integers(1, 255, (1, 2, 150, 100)).astype(
        np.uint8)
    count, _ = check_nonzero(nonzero(T("UINT8", x.shape), 3), x)
    assert count == int(np.count_nonzero(x))


# -- the support table -----------------------------------------------------------------------------------------------

EIGHT = [F32, F16, DT.INT32, DT.INT16, DT.INT8, U32, DT.UINT16, DT.UINT8]


def test_the_table_is_the_page_s() -> None:
    (only,) = SUPPORT
    assert only.level == FL.LEVEL_3_0
    assert list(only.tensors["InputTensor"].data_types) == EIGHT
    for name in ("InputTensor", "OutputCountTensor", "OutputCoordinatesTensor"):
        assert (only.tensors[name].min_rank, only.tensors[name].max_rank) == (4, 5)
    assert only.tensors["OutputCountTensor"].data_types == only.tensors["OutputCoordinatesTensor"].data_types == (U32,)


def _values(data_type: DT, sizes: Sequence[int], seed: int = 0) -> np.ndarray:
    """About half zeros; the floats with -0.0 and NaN among them."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(data_type.numpy_dtype)
    values = rng.integers(-3, 4, sizes) * (rng.random(sizes) < 0.5)
    if dtype.kind == "u":
        values = np.abs(values)
    x = values.astype(dtype)
    if dtype.kind == "f":
        x[rng.random(sizes) < 0.1] = -0.0
        x[rng.random(sizes) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("rank", [4, 5])
def test_every_type_of_the_row_against_the_reference(rank: int, backend: str) -> None:
    """Each type at 3_0 (cpu: FLOAT32, FLOAT16 and one integer width of each kernel signature; the rest on
    cpu-small and gpu, where a type costs no compilation)."""
    sizes = [1, 2, 3, 4] if rank == 4 else [1, 2, 1, 3, 2]
    for data_type in EIGHT:
        if backend == "cpu" and dml.Device().backend.name == "cpu" and data_type in (DT.INT16, DT.INT32, U32) and \
                not _small():
            continue
        check_nonzero(nonzero(T(data_type, sizes), rank - 1), _values(data_type, sizes), level=FL.LEVEL_3_0)


def _small() -> bool:
    import opendml.backends.cpu as cpu

    return cpu.SMALL_TENSOR_ELEMENTS > 0


def test_refused_below_its_level() -> None:
    with pytest.raises(dml.UnsupportedError, match=rf"{OP} needs feature level 3_0; the device is at 2_1"):
        device(FL.LEVEL_2_1).create_operator(nonzero(T(F32, [1, 1, 2, 4])))


@pytest.mark.parametrize("data_type", ["FLOAT64", "INT64", "UINT64"])
def test_types_off_the_table_are_refused(data_type: str) -> None:
    with pytest.raises(dml.ValidationError, match=rf"{OP}: InputTensor.DataType {data_type} is not supported; at "
                                                   r"feature level 6_4 it must be one of FLOAT32, FLOAT16, INT32, "
                                                   r"INT16, INT8, UINT32, UINT16, UINT8"):
        device().create_operator(nonzero(T(data_type, [1, 1, 2, 4])))


@pytest.mark.parametrize("sizes", [[2, 4], [1, 2, 4], [1, 1, 1, 1, 2, 4]])
def test_ranks_off_the_table_are_refused(sizes: list[int]) -> None:
    with pytest.raises(dml.ValidationError, match=rf"{OP}: InputTensor.DimensionCount {len(sizes)} is not "
                                                   r"supported; at feature level 6_4 it must be 4 to 5"):
        device().create_operator(nonzero(T(F32, sizes), 2))


# -- hypothesis ------------------------------------------------------------------------------------------------------

@st.composite
def nonzero_cases(draw: st.DrawFn, backend: str) -> tuple[dml.NonzeroCoordinatesOperatorDesc, np.ndarray, int]:
    types = None if backend == "gpu" or _small() else {F32, F16, DT.UINT8}
    desc = registered_descriptor(draw, [NZ], [TOP], types)
    assert isinstance(desc, NZ)
    seed = draw(st.integers(0, 2**16))
    return desc, _values(desc.input_tensor.data_type, desc.input_tensor.sizes, seed), seed


def test_hypothesis_against_the_reference(backend: str) -> None:
    @settings(max_examples=15, deadline=None, derandomize=True)
    @given(nonzero_cases(backend))
    def check(case: tuple[dml.NonzeroCoordinatesOperatorDesc, np.ndarray, int]) -> None:
        desc, x, seed = case
        check_nonzero(desc, x, seed=seed)

    check()


# -- bad descriptors -------------------------------------------------------------------------------------------------

X = T(F32, [1, 1, 2, 4])
BAD = [
    (lambda: NZ(X, T(U32, [1, 1, 1, 2]), T(U32, [1, 1, 8, 2])),
     rf"{OP}: OutputCountTensor.Sizes is \[1, 1, 1, 2\]; it must be all 1 \(a scalar\)"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 8, 1])),
     rf"{OP}: OutputCoordinatesTensor.Sizes is \[1, 1, 8, 1\]; with InputTensor.Sizes \[1, 1, 2, 4\] \(8 elements, "
     r"effective rank 2\) it must be \[1, 1, 8, N\] with N from 2 to 4"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 8, 5])), rf"{OP}: OutputCoordinatesTensor.Sizes is \[1, 1, 8, "
                                                                 r"5\]; .* with N from 2 to 4"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 7, 2])), rf"{OP}: OutputCoordinatesTensor.Sizes is \[1, 1, 7, "
                                                                 r"2\]; .* it must be \[1, 1, 8, N\]"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 2, 4, 2])), rf"{OP}: OutputCoordinatesTensor.Sizes is \[1, 2, 4, "
                                                                 r"2\]"),
    (lambda: NZ(T(F32, [1, 1, 1, 1, 1]), T(U32, [1, 1, 1, 1, 1]), T(U32, [1, 1, 1, 1, 1])), None),
    (lambda: NZ(X, T(U32, [1, 1, 1]), T(U32, [1, 8, 2])), rf"{OP}: OutputCountTensor.DimensionCount is 3; it must "
                                                           r"equal InputTensor.DimensionCount \(4\)"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 1, 8, 2])), rf"{OP}: OutputCoordinatesTensor.DimensionCount "
                                                                    r"is 5; it must equal InputTensor.DimensionCount"),
    (lambda: NZ(X, T("INT32", [1, 1, 1, 1]), T(U32, [1, 1, 8, 2])), rf"{OP}: OutputCountTensor.DataType INT32 is "
                                                                     r"not supported; at feature level 6_4 it must be "
                                                                     r"one of UINT32"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T("INT64", [1, 1, 8, 2])), rf"{OP}: OutputCoordinatesTensor.DataType INT64 "
                                                                     r"is not supported"),
    (lambda: NZ(X, T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 8, 2], [1, 1, 1, 0])), rf"{OP}: OutputCoordinatesTensor."
                                                                               r"Strides \[1, 1, 1, 0\] map two"),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_bad_descriptors_are_refused_with_their_message(make: Any, message: str | None) -> None:
    if message is None:   # the effective rank 0 of an input of one element: N = 1 is accepted
        device().create_operator(make())
        return
    with pytest.raises(dml.ValidationError, match=message):
        device().create_operator(make())


@pytest.mark.parametrize(("field", "arguments"), [
    ("InputTensor", ([1, 1, 2, 4], T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 8, 2]))),
    ("OutputCountTensor", (X, None, T(U32, [1, 1, 8, 2]))),
    ("OutputCoordinatesTensor", (X, T(U32, [1, 1, 1, 1]), "coordinates"))])
def test_fields_must_be_tensors(field: str, arguments: tuple[Any, ...]) -> None:
    with pytest.raises(dml.ValidationError, match=rf"{OP}: {field} is .*; it must be a TensorDesc"):
        NZ(*arguments)


def test_the_outputs_may_not_overlap() -> None:
    compiled = device().compile_operator(device().create_operator(nonzero(X, 2)))
    memory = np.zeros(256, np.uint8)
    with pytest.raises(dml.BindingError, match=r"OutputCoordinatesTensor.*overlap"):
        compiled.execute([dml.Binding(np.zeros(32, np.uint8))], [dml.Binding(memory, 0), dml.Binding(memory, 0)])


def test_from_dml() -> None:
    u32 = {"DataType": "UINT32", "Sizes": [1, 1, 1, 1]}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_NONZERO_COORDINATES", {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [1, 1, 2, 4]}, "OutputCountTensor": u32,
        "OutputCoordinatesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 8, 3]}})
    assert desc == NZ(T(F16, [1, 1, 2, 4]), T(U32, [1, 1, 1, 1]), T(U32, [1, 1, 8, 3]))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_NONZERO_COORDINATES.*OutputTensor"):
        dml.OperatorDesc.from_dml("NONZERO_COORDINATES", {"InputTensor": u32, "OutputTensor": u32})


MODEL = {
    "resources": {
        "X": {"initialValuesDataType": "FLOAT32", "initialValues": [1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2]},
        "Count": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 1, "value": 9}},
        "Coordinates": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 16, "value": 7}},
    },
    "dispatchables": {"nonzero": {"type": "DML_OPERATOR_NONZERO_COORDINATES", "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 4]},
        "OutputCountTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 1]},
        "OutputCoordinatesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 8, 2]}}}},
    "commands": [
        {"type": "dispatch", "dispatchable": "nonzero",
         "bindings": {"InputTensor": "X", "OutputCountTensor": "Count", "OutputCoordinatesTensor": "Coordinates"}},
        {"type": "print", "resource": "Count"}, {"type": "print", "resource": "Coordinates"}],
}


def test_a_json_model_through_the_cli(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page's example as a DxDispatch model (N = 2): count 4, rows (0,0), (0,3), (1,1), (1,3); the 4 rows past
    the count keep the resource's initial 7s (never written)."""
    model = tmp_path / "nonzero.json"
    model.write_text(json.dumps(MODEL))
    status, out, err = _cli(capsys, "dispatch", "--backend", backend, model)
    assert (status, err) == (0, [])
    assert out == ["Resource 'Count': 4", "Resource 'Coordinates': 0, 0, 0, 3, 1, 1, 1, 3, 7, 7, 7, 7, 7, 7, 7, 7"]


# -- the graph API and Dask ------------------------------------------------------------------------------------------

def test_graph_function(backend: str) -> None:
    """DirectMLX's NonZeroCoordinates: count {1,1,1,1}, coordinates {1,1,8,4} (N = the DimensionCount), both UINT32;
    the page's example's rows."""
    g = dml.Graph(device())
    x = g.input([1, 1, 2, 4], F32, name="x")
    count, coordinates = dml.nonzero_coordinates(x)
    assert (count.sizes, coordinates.sizes, count.dtype, coordinates.dtype) == ((1, 1, 1, 1), (1, 1, 8, 4), U32, U32)
    got = g.compile([count, coordinates])({"x": np.array([[[[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]]]],
                                                          np.float32)})
    assert np.asarray(got[0]).tolist() == [[[[4]]]]
    assert np.asarray(got[1]).reshape(8, 4)[:4].tolist() == [[0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 1, 1], [0, 0, 1, 3]]


def test_graph_messages() -> None:
    g = dml.Graph(device())
    with pytest.raises(dml.ValidationError, match=r"dml.nonzero_coordinates: x is \[1, 2\]; it must be a "
                                                   r"dml.Expression"):
        dml.nonzero_coordinates([1, 2])  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=rf"{OP}: InputTensor.DimensionCount 2 is not supported"):
        dml.nonzero_coordinates(g.input([2, 3], F32))
    with pytest.raises(dml.ValidationError, match=rf"{OP}: InputTensor.DataType INT64 is not supported"):
        dml.nonzero_coordinates(g.input([1, 1, 2, 3], "INT64"))


@backends("cpu")
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8"])
def test_dask_chunks_in_every_dimension(data_type: str, backend: str) -> None:
    """Chunks cut every dimension of a {1,3,5,7} input: the count is the device's, a 1-element array; the
    coordinates' first count rows the device's, in row-major order of the whole input; the rest 0."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([1, 3, 5, 7], data_type, name="x")
    compiled = g.compile(list(dml.nonzero_coordinates(x)))
    data = _values(DT[data_type], [1, 3, 5, 7], seed=6)
    count, coordinates = (np.asarray(output) for output in compiled({"x": data}))
    chunked_count, chunked = (output.compute() for output in compiled({"x": da.from_array(data, chunks=(1, 2, 2, 3))}))
    want = reference_nonzero(data, 4)
    assert chunked_count.shape == (1, 1, 1, 1) and int(chunked_count.ravel()[0]) == int(count.ravel()[0]) == len(want)
    assert np.array_equal(chunked.reshape(-1, 4)[: len(want)], want)
    assert np.array_equal(coordinates.reshape(-1, 4)[: len(want)], want)
    assert not chunked.reshape(-1, 4)[len(want):].any()
