"""PADDING, PADDING1 and TILE (issue 28; ops/padding.py), on every backend.

The pages' examples copied by hand (PADDING1's four modes on its 4 x 4 input, TILE's {1, 1, 3, 3}); hand goldens for
WRAP, padding wider than the input, a REFLECTION dimension of one element and PADDING's FLOAT value in integer
types; every support-table row at its level (and refused below it); the modes' levels; every type against the
independent reference of tests/reference.py (np.pad, np.tile) between sentinel bytes, with strided and zero-strided
inputs; hypothesis; the graph API, Dask and the JSON reader; bad descriptors with their messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_padding, reference_tile
from strategies import backends, build_buffer, execute_between_sentinels, read_buffer

import opendml as dml
from opendml.ops.padding import SUPPORT, PaddingBase

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32 = DT.FLOAT32
PAD, PAD1, TILE = dml.PaddingOperatorDesc, dml.Padding1OperatorDesc, dml.TileOperatorDesc
_DEVICES: dict[tuple[str, FL], dml.Device] = {}


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


def device(backend: str, level: FL = TOP) -> dml.Device:
    key = (backend, level)
    if key not in _DEVICES:
        _DEVICES[key] = dml.Device(feature_level=level)
    return _DEVICES[key]


def run(backend: str, desc: PaddingBase, x: np.ndarray, level: FL = TOP, seed: int = 0) -> np.ndarray:
    """The logical output of one dispatch of `desc` on x (bound with InputTensor's strides), between sentinels."""
    dev = device(backend, level)
    compiled = dev.compile_operator(dev.create_operator(desc))
    source, out = desc.input_tensor, desc.output_tensor
    raw = build_buffer(x, source.strides, byte_offset=16, seed=seed)
    got = execute_between_sentinels(dev, compiled, [raw], out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=seed, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=32)


def pad(data_type: Any, sizes: Sequence[int], mode: str, start: Sequence[int], end: Sequence[int],
        value: float = 0.0, *, one: bool = False, strides: Sequence[int] | None = None) -> PaddingBase:
    out = [s + a + b for s, a, b in zip(sizes, start, end, strict=True)]
    if one:
        return PAD1(T(data_type, sizes, strides), T(data_type, out), mode, data_type, value, len(sizes), start, end)
    return PAD(T(data_type, sizes, strides), T(data_type, out), mode, value, len(sizes), start, end)


#: The pages' 4 x 4 input (PADDING's and PADDING1's examples) and their outputs, StartPadding {0, 0, 1, 2} and
#: EndPadding {0, 0, 3, 4}, copied by hand.
X = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]], np.float32).reshape(1, 1, 4, 4)
PAGE = {
    "CONSTANT": [[9, 9, 9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 1, 2, 3, 4, 9, 9, 9, 9], [9, 9, 5, 6, 7, 8, 9, 9, 9, 9],
                 [9, 9, 1, 2, 3, 4, 9, 9, 9, 9], [9, 9, 5, 6, 7, 8, 9, 9, 9, 9], [9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
                 [9, 9, 9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 9, 9, 9, 9, 9, 9, 9, 9]],
    "EDGE": [[1, 1, 1, 2, 3, 4, 4, 4, 4, 4], [1, 1, 1, 2, 3, 4, 4, 4, 4, 4], [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
             [1, 1, 1, 2, 3, 4, 4, 4, 4, 4], [5, 5, 5, 6, 7, 8, 8, 8, 8, 8], [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
             [5, 5, 5, 6, 7, 8, 8, 8, 8, 8], [5, 5, 5, 6, 7, 8, 8, 8, 8, 8]],
    "REFLECTION": [[7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2], [7, 6, 5, 6, 7, 8, 7, 6, 5, 6],
                   [3, 2, 1, 2, 3, 4, 3, 2, 1, 2], [7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2],
                   [7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2]],
    "SYMMETRIC": [[2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
                  [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
                  [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]],
}


@pytest.mark.parametrize("one", [False, True], ids=["PADDING", "PADDING1"])
@pytest.mark.parametrize("mode", list(PAGE))
def test_page_examples(mode: str, one: bool, backend: str) -> None:
    desc = pad(F32, [1, 1, 4, 4], mode, [0, 0, 1, 2], [0, 0, 3, 4], 9.0, one=one)
    assert run(backend, desc, X)[0, 0].tolist() == PAGE[mode]


def test_tile_page_example(backend: str) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32).reshape(1, 1, 2, 3)
    desc = TILE(T(F32, [1, 1, 2, 3]), T(F32, [1, 1, 6, 9]), 4, [1, 1, 3, 3])
    assert run(backend, desc, x)[0, 0].tolist() == [[1, 2, 3, 1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6, 4, 5, 6]] * 3


@pytest.mark.parametrize(("mode", "start", "end", "want"), [
    # [1, 2, 3] read at -2 .. 5 modulo 3: 2, 3 | 1, 2, 3 | 1, 2, 3, 1
    ("WRAP", 2, 4, [2, 3, 1, 2, 3, 1, 2, 3, 1]),
    # -4 .. 5 folded with period 4 (no edge repeated): 1 2 3 2 | 1 2 3 | 2 1 2 3
    ("REFLECTION", 4, 4, [1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3]),
    # period 6 (edges repeated): -4 -> 3, -3 -> 3, -2 -> 2, -1 -> 1 | ... | 3 -> 3, 4 -> 2, 5 -> 1, 6 -> 1
    ("SYMMETRIC", 4, 4, [3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1]),
    ("EDGE", 2, 1, [1, 1, 1, 2, 3, 3]),
])
def test_padding_wider_than_the_input_and_wrap(mode: str, start: int, end: int, want: list[int],
                                                backend: str) -> None:
    desc = pad(DT.INT32, [3], mode, [start], [end], one=True)
    assert run(backend, desc, np.array([1, 2, 3], np.int32)).tolist() == want


def test_reflection_of_one_element_repeats_it(backend: str) -> None:
    desc = pad(DT.UINT8, [1, 2], "REFLECTION", [2, 0], [1, 1], one=True)
    assert run(backend, desc, np.array([[5, 6]], np.uint8)).tolist() == [[5, 6, 5]] * 4


@pytest.mark.parametrize(("data_type", "value", "want"), [
    ("INT32", 10.6, 10), ("INT32", -10.6, -10), ("INT8", 300.0, 127), ("UINT8", -3.0, 0), ("INT16", float("nan"), 0),
    ("FLOAT16", 0.1, 0.0999755859375), ("UINT32", 1e12, 4294967295),
])
def test_padding_value_converts_to_the_type(data_type: str, value: float, want: float, backend: str) -> None:
    """PADDING's FLOAT: "10.6 will become 10" (the page); saturated, NaN 0 (README Rulings); FLOAT16 rounded."""
    desc = pad(data_type, [2], "CONSTANT", [1], [0], value)
    got = run(backend, desc, np.array([1, 2], DT[data_type].numpy_dtype))
    assert got.tolist() == [want, 1, 2]


@pytest.mark.parametrize(("data_type", "value"), [("INT64", -2**63), ("UINT64", 2**64 - 1), ("FLOAT64", -0.25),
                                                  ("INT8", -128), ("FLOAT16", 65504.0)])
def test_padding1_value_is_exact(data_type: str, value: float, backend: str) -> None:
    dtype = DT[data_type].numpy_dtype
    desc = pad(data_type, [1, 1], "CONSTANT", [0, 1], [1, 0], value, one=True)
    got = run(backend, desc, np.array([[3]], dtype))
    assert got.tolist() == [[value, 3], [value, value]]


def _rows() -> list[tuple[str, Any, int, Any]]:
    out = []
    for operator, table in SUPPORT.items():
        for support in table:
            tensor = support.tensors["InputTensor"]
            for data_type in tensor.data_types:
                out.append((operator.name, support.level, tensor.max_rank, data_type))
            out.append((operator.name, support.level, tensor.min_rank, tensor.data_types[-1]))
    return out


def _desc(operator: str, rank: int, data_type: Any) -> PaddingBase:
    sizes = [1] * (rank - 1) + [2]
    if operator == "TILE":
        return TILE(T(data_type, sizes), T(data_type, [*sizes[:-1], 4]), rank, [1] * (rank - 1) + [2])
    return pad(data_type, sizes, "EDGE", [0] * (rank - 1) + [1], [0] * rank, one=operator == "PADDING1")


@pytest.mark.parametrize(("operator", "level", "rank", "data_type"), _rows())
def test_every_support_row(operator: str, level: FL, rank: int, data_type: Any, backend_name: str) -> None:
    """Each row's types and dimension counts at its level run (on cpu-small: a few rows suffice elsewhere)."""
    desc = _desc(operator, rank, data_type)
    dml.Device(feature_level=level).create_operator(desc)
    if backend_name == "cpu-small" or data_type in (DT.FLOAT64, DT.UINT16):
        x = np.array([1, 2], data_type.numpy_dtype).reshape(desc.input_tensor.sizes)
        want = [1, 2, 1, 2] if operator == "TILE" else [1, 1, 2]
        assert run(backend_name.replace("-small", ""), desc, x, level).reshape(-1).tolist() == want


def test_support_rows_refused_below_their_level() -> None:
    with pytest.raises(dml.UnsupportedError, match=r"PADDING: InputTensor.DataType INT32 needs feature level 2_1; "
                                                   r"the device is at 1_0"):
        dml.Device(feature_level=FL.LEVEL_1_0).create_operator(_desc("PADDING", 4, DT.INT32))
    with pytest.raises(dml.UnsupportedError, match=r"TILE: .*3_1"):
        dml.Device(feature_level=FL.LEVEL_3_0).create_operator(_desc("TILE", 3, F32))
    with pytest.raises(dml.UnsupportedError, match=r"TILE: InputTensor.DataType INT64 needs feature level 4_1"):
        dml.Device(feature_level=FL.LEVEL_4_0).create_operator(_desc("TILE", 2, DT.INT64))
    with pytest.raises(dml.UnsupportedError, match=r"PADDING1.*5_0"):
        dml.Device(feature_level=FL.LEVEL_4_1).create_operator(_desc("PADDING1", 2, F32))


def test_modes_need_their_levels() -> None:
    with pytest.raises(dml.UnsupportedError, match=r"PADDING: PaddingMode is SYMMETRIC; it needs feature level 3_0 "
                                                  r"\(this device: 2_1\); below it: CONSTANT, EDGE, REFLECTION$"):
        dml.Device(feature_level=FL.LEVEL_2_1).create_operator(pad(F32, [1, 1, 2, 2], "SYMMETRIC", [0] * 4, [0] * 4))
    with pytest.raises(dml.UnsupportedError, match=r"PADDING1: PaddingMode is WRAP; it needs feature level 6_4 "
                                                  r"\(this device: 6_3\); below it: CONSTANT, EDGE, REFLECTION, "
                                                  r"SYMMETRIC"):
        dml.Device(feature_level=FL.LEVEL_6_3).create_operator(pad(F32, [2], "WRAP", [1], [0], one=True))
    dml.Device(feature_level=FL.LEVEL_3_0).create_operator(pad(F32, [1, 1, 2, 2], "SYMMETRIC", [0] * 4, [0] * 4))


TYPES = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8", "FLOAT64"]


def _data(data_type: str, sizes: Sequence[int], seed: int) -> np.ndarray:
    dtype = np.dtype(DT[data_type].numpy_dtype)
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        return rng.standard_normal(sizes).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, sizes, dtype=dtype, endpoint=True)


@pytest.mark.parametrize(("mode", "data_type"), [
    (mode, data_type) for mode in ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP", "TILE")
    for data_type in TYPES if (mode, data_type) != ("TILE", "FLOAT64")])   # TILE's pages list no FLOAT64
def test_every_type_against_the_reference(mode: str, data_type: str, backend: str) -> None:
    """A [2, 3, 2] input bound with strides [1, 4, 12] (a transposed layout, 16-bit and 8-bit outputs among odd
    sizes) against np.pad / np.tile, the output between sentinels."""
    x = _data(data_type, [2, 3, 2], seed=len(mode))
    strides = [1, 4, 12]
    if mode == "TILE":
        desc: PaddingBase = TILE(T(data_type, [2, 3, 2], strides), T(data_type, [4, 3, 6]), 3, [2, 1, 3])
        want = reference_tile(x, [2, 1, 3])
    else:
        value = -7 if data_type != "FLOAT64" and not data_type.startswith("U") else 7
        desc = pad(data_type, [2, 3, 2], mode, [1, 0, 3], [2, 4, 1], value, one=True, strides=strides)
        want = reference_padding(x, mode, [1, 0, 3], [2, 4, 1], value)
    got = run(backend, desc, x)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def test_zero_strides_broadcast_the_input(backend: str) -> None:
    desc = pad(DT.INT16, [3, 2], "SYMMETRIC", [1, 1], [0, 2], one=True, strides=[0, 1])
    x = np.array([[4, 5]] * 3, np.int16)
    assert run(backend, desc, x).tolist() == [[4, 4, 5, 5, 4]] * 4


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_hypothesis_against_the_reference(data: st.DataObject, backend: str) -> None:
    rank = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    data_type = data.draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "UINT16", "INT64"]))
    mode = data.draw(st.sampled_from(["CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP", "TILE"]))
    x = _data(data_type, sizes, seed=data.draw(st.integers(0, 99)))
    if mode == "TILE":
        repeats = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        tiled = [s * r for s, r in zip(sizes, repeats, strict=True)]
        desc: PaddingBase = TILE(T(data_type, sizes), T(data_type, tiled), rank, repeats)
        want = reference_tile(x, repeats)
    else:
        start = data.draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank))
        end = data.draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank))
        desc = pad(data_type, sizes, mode, start, end, 3, one=True)
        want = reference_padding(x, mode, start, end, 3)
    assert run(backend, desc, x).tobytes() == np.ascontiguousarray(want).tobytes()


def test_graph_functions(backend: str) -> None:
    g = dml.Graph(device(backend))
    x = g.input([2, 3], F32, name="x")
    y = g.input([2], "INT64", name="y")
    outputs = [dml.padding(x, "REFLECTION", 0.0, [1, 2], [0, 1]), dml.padding(x, "CONSTANT", 2.5, [0, 1], [1, 0]),
               dml.tile(x, [2, 1]), dml.padding(y, "CONSTANT", -5, [1], [1])]
    assert [o.sizes for o in outputs] == [(3, 6), (3, 4), (4, 3), (4,)]
    assert isinstance(outputs[3].operator_desc, PAD1) and isinstance(outputs[0].operator_desc, PAD)
    data = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    got = g.compile(outputs)({"x": data, "y": np.array([7, 8], np.int64)})
    assert np.asarray(got[0]).tolist() == [[6, 5, 4, 5, 6, 5], [3, 2, 1, 2, 3, 2], [6, 5, 4, 5, 6, 5]]
    assert np.asarray(got[1]).tolist() == [[2.5, 1, 2, 3], [2.5, 4, 5, 6], [2.5, 2.5, 2.5, 2.5]]
    assert np.asarray(got[2]).tolist() == [[1, 2, 3], [4, 5, 6], [1, 2, 3], [4, 5, 6]]
    assert np.asarray(got[3]).tolist() == [-5, 7, 8, -5]


def test_graph_messages() -> None:
    g = dml.Graph(dml.Device())
    x = g.input([2, 3], F32)
    with pytest.raises(dml.ValidationError, match=r"dml.padding: start_padding has 1 values; it must have one per "
                                                   r"dimension of x \(2\)"):
        dml.padding(x, "EDGE", 0.0, [1], [1, 1])
    with pytest.raises(dml.ValidationError, match=r"dml.padding: padding_mode is 'MIRROR'"):
        dml.padding(x, "MIRROR", 0.0, [1, 1], [1, 1])
    with pytest.raises(dml.ValidationError, match=r"dml.tile: repeats has 3 values; it must have one per dimension "
                                                   r"of x \(2\)"):
        dml.tile(x, [1, 2, 3])
    with pytest.raises(dml.ValidationError, match=r"dml.tile: repeats is \[1, 0\]; each must be at least 1"):
        dml.tile(x, [1, 0])


@backends("cpu")
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8", "UINT64"])
def test_dask_chunks_give_the_device_bits(data_type: str, backend: str) -> None:
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device(backend))
    x = g.input([5, 7], data_type, name="x")
    outputs = [dml.padding(x, mode, 3, [2, 9], [6, 1]) for mode in ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC",
                                                                    "WRAP")] + [dml.tile(x, [3, 2])]
    compiled = g.compile(outputs)
    data = _data(data_type, [5, 7], seed=3)
    on_device = compiled({"x": data})
    on_dask = compiled({"x": da.from_array(data, chunks=(2, 3))})
    for one, chunked in zip(on_device, on_dask, strict=True):
        assert np.asarray(chunked.compute()).tobytes() == np.asarray(one).tobytes()


def test_from_dml_reads_the_three_operators() -> None:
    tensor = {"DataType": "INT32", "Sizes": [2, 2]}
    out = {"DataType": "INT32", "Sizes": [3, 5]}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_PADDING", {
        "InputTensor": tensor, "OutputTensor": out, "PaddingMode": "DML_PADDING_MODE_SYMMETRIC", "PaddingValue": 1.5,
        "DimensionCount": 2, "StartPadding": [1, 2], "EndPadding": [0, 1]})
    assert isinstance(desc, PAD) and desc.padding_mode is dml.PaddingMode.SYMMETRIC and desc.start_padding == (1, 2)
    desc = dml.OperatorDesc.from_dml("PADDING1", {
        "InputTensor": tensor, "OutputTensor": out, "PaddingMode": "CONSTANT", "PaddingValueDataType": "INT32",
        "PaddingValue": {"Int32": -4}, "DimensionCount": 2, "StartPadding": [1, 2], "EndPadding": [0, 1]})
    assert isinstance(desc, PAD1) and desc.padding_value == -4
    desc = dml.OperatorDesc.from_dml("TILE", {"InputTensor": tensor, "OutputTensor": {"DataType": "INT32",
                                                                                      "Sizes": [4, 2]},
                                              "RepeatsCount": 2, "Repeats": [2, 1]})
    assert isinstance(desc, TILE) and desc.repeats == (2, 1) and desc.repeats_count == 2


@pytest.mark.parametrize(("make", "message"), [
    (lambda: PAD(T(F32, [2, 2]), T(F32, [3, 3]), "EDGE", 0.0, 2, [1, 1], [0, 1]),
     r"PADDING: OutputTensor.Sizes\[1\] is 3; it must be InputTensor.Sizes\[1\] \+ StartPadding\[1\] \+ "
     r"EndPadding\[1\] \(4\)"),
    (lambda: PAD(T(F32, [2, 2]), T(F32, [3, 3]), "EDGE", 0.0, 1, [1], [0]),
     r"PADDING: DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    (lambda: PAD(T(F32, [2, 2]), T(F32, [3, 3]), "EDGE", 0.0, 2, [1], [0, 1]),
     r"PADDING: StartPadding has 1 values \(\[1\]\); it must have DimensionCount \(2\)"),
    (lambda: PAD(T(F32, [2, 2]), T(DT.INT32, [2, 2]), "EDGE", 0.0, 2, [0, 0], [0, 0]),
     r"PADDING: .*DataType"),
    (lambda: PAD1(T(F32, [2]), T(F32, [2]), "EDGE", "INT32", 0, 1, [0], [0]),
     r"PADDING1: PaddingValueDataType is INT32; it must equal OutputTensor.DataType \(FLOAT32\)"),
    (lambda: TILE(T(F32, [2]), T(F32, [5]), 1, [2]),
     r"TILE: OutputTensor.Sizes\[0\] is 5; it must be InputTensor.Sizes\[0\] x Repeats\[0\] \(4\)"),
    (lambda: TILE(T(F32, [2]), T(F32, [2]), 1, [0]), r"TILE: Repeats\[0\] is 0; it must be at least 1"),
    (lambda: TILE(T(F32, [2]), T(F32, [2]), 2, [1]),
     r"TILE: RepeatsCount is 2; it must equal InputTensor.DimensionCount \(1\)"),
])
def test_bad_descriptors(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        dml.Device().create_operator(make())


def test_bad_fields_at_construction() -> None:
    with pytest.raises(dml.ValidationError, match=r"PADDING1: PaddingValue is 300; it must be an integer of INT8 "
                                                   r"\(from -128 to 127\)"):
        PAD1(T(DT.INT8, [2]), T(DT.INT8, [2]), "CONSTANT", "INT8", 300, 1, [0], [0])
    with pytest.raises(dml.ValidationError, match=r"PADDING: PaddingMode is 'MIRROR'"):
        PAD(T(F32, [2]), T(F32, [2]), "MIRROR", 0.0, 1, [0], [0])
    with pytest.raises(dml.ValidationError, match=r"TILE: Repeats"):
        TILE(T(F32, [2]), T(F32, [2]), 1, [-1])
