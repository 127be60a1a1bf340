"""UPSAMPLE_2D (issue 28, ops/upsample.py), on every backend.

Goldens worked out by hand from the mapping README's Rulings state (output o reads the input at (o + 0.5) / scale -
0.5, clamped): DxDispatch's dml_upsample_2d.json (tests/test_cli.py runs it unchanged through the CLI), nearest and
linear with unequal scales, 5-D; every support-table row at its level and refused below it; FLOAT16 computed in
FLOAT32; strides; outputs between sentinel bytes; hypothesis against tests/reference.py's element-by-element
`reference_upsample_2d`; the JSON reader's ScaleSize object; the graph API and Dask; bad descriptors with their
messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_upsample_2d
from strategies import backends, build_buffer, execute_between_sentinels, read_buffer

import opendml as dml
from opendml.ops.upsample import SUPPORT

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, F16 = DT.FLOAT32, DT.FLOAT16
U = "DML_OPERATOR_UPSAMPLE_2D"
UP = dml.Upsample2dOperatorDesc


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def up(x: dml.TensorDesc, scale: tuple[int, int], mode: str = "LINEAR", out: dml.TensorDesc | None = None
       ) -> dml.Upsample2dOperatorDesc:
    width, height = scale
    sizes = [*x.sizes[:-2], x.sizes[-2] * height, x.sizes[-1] * width]
    return UP(x, out or T(x.data_type, sizes), scale, mode)


def run(desc: dml.Upsample2dOperatorDesc, x: np.ndarray, *, level: dml.FeatureLevel = TOP, seed: int = 0
        ) -> tuple[np.ndarray, np.ndarray]:
    """(the logical output, the logical input as bound) of one dispatch, the output between sentinel bytes."""
    dev = device(level)
    compiled = dev.compile_operator(dev.create_operator(desc))
    source, out = desc.input_tensor, desc.output_tensor
    raw = build_buffer(x, source.strides, byte_offset=16, seed=seed)
    logical = read_buffer(raw, x.dtype, source.sizes, source.strides, byte_offset=16)
    got = execute_between_sentinels(dev, compiled, [raw], out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=seed, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=32), logical


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def check(desc: dml.Upsample2dOperatorDesc, x: np.ndarray, got: np.ndarray) -> None:
    """The reference, bit for bit (any NaN for a NaN)."""
    want = reference_upsample_2d(x, desc.scale_size.height, desc.scale_size.width, desc.linear)
    both_nan = np.isnan(got) & np.isnan(want)
    assert np.array_equal(_bits(np.where(both_nan, 0, got)), _bits(np.where(both_nan, 0, want))), (desc, x, got, want)


X = np.array([[[[1, 2], [3, 4]]]], np.float32)


# -- goldens by hand ------------------------------------------------------------------------------------------------

def test_the_sample_linear_x2(backend: str) -> None:
    # taps at (o + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1) along both axes
    got, _ = run(up(T(F32, [1, 1, 2, 2]), (2, 2)), X)
    assert got[0, 0].tolist() == [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5],
                                  [3, 3.25, 3.75, 4]]


def test_nearest_repeats_each_element_scale_times(backend: str) -> None:
    got, _ = run(up(T(F32, [1, 1, 2, 2]), (3, 2), "NEAREST_NEIGHBOR"), X)
    assert got[0, 0].tolist() == [[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]


def test_linear_with_unequal_scales(backend: str) -> None:
    # width x3 over [0, 3]: t = -1/3 (0), 0, 1/3, 2/3, 1, 4/3 (1) -> 0, 0, 1, 2, 3, 3; height x1 is the identity
    x = np.array([[[[0, 3], [6, 9]]]], np.float32)
    got, _ = run(up(T(F32, [1, 1, 2, 2]), (3, 1)), x)
    assert got[0, 0].tolist() == [[0, 0, 1, 2, 3, 3], [6, 6, 7, 8, 9, 9]]


def test_five_dimensions_never_blend_depth(backend: str) -> None:
    x = np.array([[[[[1, 2], [3, 4]], [[10, 20], [30, 40]]]]], np.float32)   # [1, 1, 2, 2, 2]: two depth planes
    got, _ = run(up(T(F32, [1, 1, 2, 2, 2]), (2, 1)), x)
    assert got[0, 0].tolist() == [[[1, 1.25, 1.75, 2], [3, 3.25, 3.75, 4]],
                                  [[10, 12.5, 17.5, 20], [30, 32.5, 37.5, 40]]]
    got, _ = run(up(T(F32, [1, 1, 2, 2, 2]), (1, 2), "NEAREST_NEIGHBOR"), x)
    assert got[0, 0, 1].tolist() == [[10, 20], [10, 20], [30, 40], [30, 40]]


def test_float16_is_blended_in_float32_rounded_once(backend: str) -> None:
    # 2049 is not a FLOAT16 (its neighbours are 2048 and 2050): FLOAT16 arithmetic would round x * 0.75 first;
    # in FLOAT32, 2048 * 0.75 + 2052 * 0.25 = 2049 exactly, then rounded once to even: 2048.
    x = np.array([[[[2048, 2052]]]], np.float16)
    got, _ = run(up(T(F16, [1, 1, 1, 2]), (2, 1)), x)
    assert got[0, 0, 0].tolist() == [2048, 2048, 2052, 2052]
    x = np.array([[[[2048, 2056]]]], np.float16)   # 2048 * 0.75 + 2056 * 0.25 = 2050, a FLOAT16
    got, _ = run(up(T(F16, [1, 1, 1, 2]), (2, 1)), x)
    assert got[0, 0, 0].tolist() == [2048, 2050, 2054, 2056]


def test_nearest_moves_bits_exactly(backend: str) -> None:
    x = np.array([[[[np.nan, -0.0], [np.inf, 1e-45]]]], np.float32)
    got, _ = run(up(T(F32, [1, 1, 2, 2]), (2, 2), "NEAREST_NEIGHBOR"), x)
    assert np.array_equal(_bits(got[0, 0, ::2, ::2]), _bits(x[0, 0]))


def test_strided_input_and_output(backend: str) -> None:
    x = np.arange(2 * 3 * 2 * 3, dtype=np.float32).reshape(2, 3, 2, 3)
    source = T(F32, [2, 3, 2, 3], [1, 2, 6 * 4, 6])       # channels innermost-ish, padded rows
    out = T(F32, [2, 3, 4, 9], [200, 60, 15, 1])           # padded output rows and images
    for mode in ("LINEAR", "NEAREST_NEIGHBOR"):
        desc = up(source, (3, 2), mode, out)
        got, logical = run(desc, x)
        check(desc, logical, got)


# -- support rows ---------------------------------------------------------------------------------------------------

def test_the_table_is_the_page() -> None:
    assert [(r.level, {n: (t.min_rank, t.max_rank, t.data_types) for n, t in r.tensors.items()}) for r in SUPPORT] == [
        (FL.LEVEL_3_0, {"InputTensor": (4, 5, (F32, F16)), "OutputTensor": (4, 5, (F32, F16))}),
        (FL.LEVEL_1_0, {"InputTensor": (4, 4, (F32, F16)), "OutputTensor": (4, 4, (F32, F16))}),
    ]


@pytest.mark.parametrize(("level", "rank", "data_type"), [(FL.LEVEL_1_0, 4, F32), (FL.LEVEL_1_0, 4, F16),
                                                          (FL.LEVEL_3_0, 5, F32), (FL.LEVEL_3_0, 5, F16)])
def test_every_support_row_dispatches_at_its_level(level: FL, rank: int, data_type: DT, backend: str) -> None:
    sizes = [*[2, 1, 1, 2, 3][:rank - 2], 2, 3]
    desc = up(T(data_type, sizes), (2, 3))
    x = np.arange(np.prod(sizes)).reshape(sizes).astype(data_type.numpy_dtype)
    got, logical = run(desc, x, level=level)
    check(desc, logical, got)


def test_five_dimensions_are_refused_before_3_0() -> None:
    desc = up(T(F32, [1, 1, 1, 2, 2]), (2, 2))
    with pytest.raises(dml.UnsupportedError, match=rf"{U}.*InputTensor.*5.*LEVEL_3_0|{U}.*InputTensor.*5"):
        device(FL.LEVEL_2_1).create_operator(desc)
    device(FL.LEVEL_3_0).create_operator(desc)


@pytest.mark.parametrize("data_type", [DT.FLOAT64, DT.INT32, DT.UINT8, DT.INT64])
def test_types_off_the_table_are_refused(data_type: DT) -> None:
    with pytest.raises((dml.UnsupportedError, dml.ValidationError), match=rf"{U}.*InputTensor.*{data_type.name}"):
        device().create_operator(up(T(data_type, [1, 1, 2, 2]), (2, 2)))


@pytest.mark.parametrize("sizes", [[2, 2], [1, 2, 2], [1, 1, 1, 1, 2, 2]])
def test_ranks_off_the_table_are_refused(sizes: list[int]) -> None:
    with pytest.raises((dml.UnsupportedError, dml.ValidationError), match=rf"{U}.*InputTensor.*{len(sizes)}"):
        device().create_operator(up(T(F32, sizes), (2, 2)))


# -- the reference --------------------------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_hypothesis_against_the_reference(data: st.DataObject, backend: str) -> None:
    rank = data.draw(st.sampled_from([4, 5]))
    sizes = [data.draw(st.integers(1, 2)) for _ in range(rank - 2)] + [data.draw(st.integers(1, 4)),
                                                                       data.draw(st.integers(1, 4))]
    scale = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    data_type = data.draw(st.sampled_from([F32, F16]))
    mode = data.draw(st.sampled_from(["LINEAR", "NEAREST_NEIGHBOR"]))
    values = data.draw(st.lists(st.floats(-1e4, 1e4, width=16), min_size=int(np.prod(sizes)),
                                max_size=int(np.prod(sizes))))
    x = np.array(values, np.float64).reshape(sizes).astype(data_type.numpy_dtype)
    desc = up(T(data_type, sizes), scale, mode)
    got, logical = run(desc, x, seed=data.draw(st.integers(0, 9)))
    check(desc, logical, got)


# -- JSON, graph, Dask ----------------------------------------------------------------------------------------------

def test_from_dml_reads_scale_size_as_an_object() -> None:
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_UPSAMPLE_2D", {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT16", "Sizes": [1, 1, 8, 6]},
        "ScaleSize": {"Width": 2, "Height": 4}, "InterpolationMode": "DML_INTERPOLATION_MODE_LINEAR"})
    assert isinstance(desc, UP)
    assert desc.scale_size == dml.Size2D(2, 4) and desc.interpolation_mode is dml.InterpolationMode.LINEAR
    assert dml.InterpolationMode.NEAREST_NEIGHBOR == 0 and dml.InterpolationMode.LINEAR == 1
    assert dml.OperatorType.UPSAMPLE_2D == 66


@pytest.mark.parametrize(("scale_size", "message"), [
    ({"Width": 2}, r"ScaleSize.*Height"),
    ({"Width": 2, "Height": 2, "Depth": 1}, r"ScaleSize.*Depth"),
    ([2, 2], r"ScaleSize.*DML_SIZE_2D object"),
    ({"Width": -1, "Height": 2}, r"ScaleSize.Width"),
])
def test_from_dml_messages(scale_size: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=rf"{U}\.{message}"):
        dml.OperatorDesc.from_dml("DML_OPERATOR_UPSAMPLE_2D", {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]}, "ScaleSize": scale_size})


def test_graph_function(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([1, 1, 2, 2], F32, name="x")
    linear = dml.upsample_2d(x, (2, 2), "LINEAR")
    nearest = dml.upsample_2d(x, dml.Size2D(width=1, height=2))
    assert (linear.sizes, nearest.sizes) == ((1, 1, 4, 4), (1, 1, 4, 2))
    got = g.compile([linear, nearest])({"x": X})
    assert np.asarray(got[0])[0, 0, 1].tolist() == [1.5, 1.75, 2.25, 2.5]
    assert np.asarray(got[1])[0, 0].tolist() == [[1, 2], [1, 2], [3, 4], [3, 4]]


def test_graph_messages() -> None:
    g = dml.Graph(device())
    x = g.input([1, 1, 2, 2], F32)
    with pytest.raises(dml.ValidationError, match=r"dml.upsample_2d: interpolation_mode is 'CUBIC'"):
        dml.upsample_2d(x, (2, 2), "CUBIC")
    with pytest.raises(dml.ValidationError, match=rf"{U}: ScaleSize is 2; it must be a DML_SIZE_2D"):
        dml.upsample_2d(x, 2)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=rf"{U}: ScaleSize.Width is 0; it must be in \[1, 2147483647\]"):
        dml.upsample_2d(x, (0, 2))
    with pytest.raises(dml.ValidationError, match=r"dml.upsample_2d: x is \[1, 2\]; it must be a dml.Expression"):
        dml.upsample_2d([1, 2], (2, 2))  # type: ignore[arg-type]


@backends("cpu")
@pytest.mark.parametrize(("data_type", "mode"), [("FLOAT32", "LINEAR"), ("FLOAT16", "LINEAR"),
                                                 ("FLOAT32", "NEAREST_NEIGHBOR")])
def test_dask_blocks_of_batch_and_channel(data_type: str, mode: str, backend: str) -> None:
    """Chunks of 1 x 2 over batch and channel stay; height and width are rechunked to one chunk (every block is whole
    images), so every block gives the device's bits."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([2, 3, 3, 4], data_type, name="x")
    y = dml.upsample_2d(x, (3, 2), mode)
    compiled = g.compile([y])
    data = (np.random.default_rng(3).standard_normal([2, 3, 3, 4]) * 100).astype(DT[data_type].numpy_dtype)
    on_device = np.asarray(compiled({"x": data})[0])
    chunked = compiled({"x": da.from_array(data, chunks=(1, 2, 2, 3))})[0]
    assert chunked.chunks[:2] == ((1, 1), (2, 1))
    assert np.array_equal(_bits(on_device), _bits(chunked.compute()))


# -- messages -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("make", "message"), [
    (lambda: up(T(F32, [1, 1, 2, 2]), (2, 2), out=T(F32, [1, 1, 4, 5])),
     rf"{U}: OutputTensor.Sizes is \[1, 1, 4, 5\]; it must be \[1, 1, 4, 4\]"),
    (lambda: up(T(F32, [1, 1, 2, 2]), (2, 2), out=T(F16, [1, 1, 4, 4])), rf"{U}: OutputTensor.*FLOAT16.*FLOAT32"),
    (lambda: up(T(F32, [1, 1, 2, 2]), (2, 2), out=T(F32, [1, 1, 1, 4, 4])), rf"{U}: OutputTensor.*5.*4"),
    (lambda: UP(T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]), (1, 0)),
     rf"{U}: ScaleSize.Height is 0; it must be in \[1, 2147483647\] \(0 < ScaleSize.Height <= UINT_MAX / "
     rf"InputHeight, InputHeight = 2\)"),
    (lambda: UP(T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]), (2**31, 1)),
     rf"{U}: ScaleSize.Width is 2147483648; it must be in \[1, 2147483647\]"),
])
def test_bad_descriptors_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        device().create_operator(make())


@pytest.mark.parametrize(("make", "message"), [
    (lambda: UP(T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 4, 4]), (2, 2), "BICUBIC"), rf"{U}: InterpolationMode is "
     r"'BICUBIC'"),
    (lambda: UP(T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 4, 4]), "2x2"), rf"{U}: ScaleSize is '2x2'; it must be a "
     r"DML_SIZE_2D"),
    (lambda: UP(T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 4, 4]), (2, -1)), r"DML_SIZE_2D: Height is -1"),
    (lambda: UP(T(F32, [1, 1, 2, 2]), None, (2, 2)), rf"{U}: OutputTensor is None"),
])
def test_bad_fields_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        make()
