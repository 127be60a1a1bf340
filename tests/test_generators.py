"""The generators (issue 28): FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX and DIAGONAL_MATRIX1, rows of
the element-wise engine whose formulas read the output element's coordinates (ops/generators.py), on every backend.

The pages' examples copied by hand; DxDispatch's dml_fill_value_sequence.json run unchanged through the CLI, its
output worked out by hand; every support-table row at its level (and refused below it or outside it); a dispatch of
every type on cpu-small (a representative set on cpu and gpu, which compile a kernel per type) against the
independent reference of tests/reference.py (`reference_generator`: the pages' pseudocode element by element, in
Python); hypothesis over the drawer of tests/strategies.py (any layout of the output, zero strides in InputTensor);
outputs between sentinel bytes; the graph API and Dask chunks (each block generates at its coordinate offset); bad
descriptors and calls with their messages.

Comparisons: bit for bit, but for FILL_VALUE_SEQUENCE's float elements (start + delta * i computed in FLOAT32:
within `sequence_bounds` of the float64 value).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_generator, sequence_bounds
from strategies import build_buffer, descriptor_drawer, execute_between_sentinels, read_buffer, table_row
from test_elementwise_samples import EXAMPLES, _cli

import opendml as dml
from opendml.ops.generators import CLASSES, SUPPORT, GeneratorOperatorDesc

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32 = DT.FLOAT32
FVC, FVS = dml.FillValueConstantOperatorDesc, dml.FillValueSequenceOperatorDesc
DM, DM1 = dml.DiagonalMatrixOperatorDesc, dml.DiagonalMatrix1OperatorDesc
INT32_MIN = -(2**31)

#: DxDispatch's generator sample (microsoft/DirectML DxDispatch/models/, copied unchanged) and what it prints.
SAMPLES = {
    # FILL_VALUE_SEQUENCE, FLOAT32 {1, 1, 1, 5}: ValueStart 3.2 (FLOAT32: 13421773 * 2^-22 = 3.2000000477), ValueDelta
    # 1.5 (exact): element i = 3.2 + 1.5 i -> 3.2, 4.7, 6.2, 7.7, 9.2. Each FLOAT32 sum is within half an ulp
    # (< 1e-6) of those, so DxDispatch's %g (6 significant digits) prints them exactly so.
    "dml_fill_value_sequence.json": ["Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2"],
}


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: GeneratorOperatorDesc, x: np.ndarray | None = None, *, level: dml.FeatureLevel = TOP,
        seed: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """(the logical output, the logical input as bound) of one dispatch of `desc`, in host memory between sentinel
    bytes (execute_between_sentinels checks that nothing outside the output's elements changed)."""
    dev = device(level)
    compiled = dev.compile_operator(dev.create_operator(desc))
    inputs: list[np.ndarray | None] = []
    logical = None
    for position, (_, tensor) in enumerate(desc.input_slots()):
        if tensor is None:
            inputs.append(None)
            continue
        assert x is not None
        offset = 16 * (1 + position)
        raw = build_buffer(x, tensor.strides, byte_offset=offset, seed=seed)
        logical = read_buffer(raw, x.dtype, tensor.sizes, tensor.strides, byte_offset=offset)
        inputs.append(raw)
    out = desc.output_tensor
    raw = execute_between_sentinels(dev, compiled, inputs, out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=seed, label=desc.label)
    result = read_buffer(raw, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=16 * (len(inputs) + 1))
    return result, logical


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def check_generator(desc: GeneratorOperatorDesc, inputs: Sequence[np.ndarray | None], output: np.ndarray) -> None:
    """The oracle (also test_fuzz_descriptors.check_outputs'): the reference, bit for bit, or within sequence_bounds
    for a float FILL_VALUE_SEQUENCE."""
    expected = reference_generator(desc, inputs[0] if inputs else None)
    if isinstance(desc, FVS) and desc.output_tensor.data_type.is_float:
        low, high = sequence_bounds(desc)
        value = output.astype(np.float64)
        assert ((low <= value) & (value <= high)).all(), (desc, output, low, high)
        return
    assert np.array_equal(_bits(output), _bits(expected)), (desc, output, expected)


def dispatch_and_check(desc: GeneratorOperatorDesc, x: np.ndarray | None = None, **kwargs: Any) -> np.ndarray:
    got, logical = run(desc, x, **kwargs)
    check_generator(desc, [logical] if desc.input_slots() else [], got)
    return got


# -- the pages' examples and the sample ---------------------------------------------------------------------------

def test_fill_value_constant_example(backend: str) -> None:
    got, _ = run(FVC(T(F32, [1, 1, 2, 4]), F32, 13.0))
    assert got.tolist() == [[[[13.0] * 4, [13.0] * 4]]]


def test_fill_value_sequence_examples(backend: str) -> None:
    got, _ = run(FVS(T(F32, [1, 1, 1, 3]), F32, 3, 2))
    assert got.tolist() == [[[[3.0, 5.0, 7.0]]]]
    # the page's ValueDelta -2 for UINT8: the union's UInt8 member holds 254 (-2 wraps to it: 10, 8, 6, 4)
    got, _ = run(FVS(T("UINT8", [1, 1, 2, 2]), "UINT8", 10, 254))
    assert got.tolist() == [[[[10, 8], [6, 4]]]]


def test_a_float16_sequence_past_its_range_is_infinite(backend: str) -> None:
    # 690 i for i < 96 in FLOAT16: 95 x 690 = 65550 is past 65520 (halfway from 65504, the largest finite, to 2^16),
    # so it rounds to inf; 94 x 690 = 64860 rounds to 64864 (a multiple of FLOAT16's spacing 32 there)
    out = dispatch_and_check(FVS(dml.TensorDesc(DT.FLOAT16, [1, 96]), DT.FLOAT16, 0.0, 690.0)).reshape(-1)
    assert out[95] == np.inf and out[94] == 64864


def test_fill_value_sequence_wraps_integers(backend: str) -> None:
    """INT8 from 125 by 1: 125, 126, 127, then -128, -127 (the sum wraps in the type's width); UINT64 from 2^64 - 2
    by 1: 2^64 - 2, 2^64 - 1, 0, 1."""
    got, _ = run(FVS(T("INT8", [5]), "INT8", 125, 1))
    assert got.tolist() == [125, 126, 127, -128, -127]
    got, _ = run(FVS(T("UINT64", [4]), "UINT64", 2**64 - 2, 1))
    assert got.tolist() == [2**64 - 2, 2**64 - 1, 0, 1]


def test_fill_value_sequence_is_row_major_whatever_the_layout(backend: str) -> None:
    """Element i of the logical (row-major) order, written through transposed strides: [[0, 1, 2], [3, 4, 5]]."""
    got, _ = run(FVS(T("INT32", [2, 3], [1, 2]), "INT32", 0, 1))
    assert got.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_diagonal_matrix_examples(backend: str) -> None:
    got, _ = run(DM(T(F32, [1, 1, 3, 3]), 0, 1.0))
    assert got.tolist() == [[[[1, 0, 0], [0, 1, 0], [0, 0, 1]]]]
    got, _ = run(DM(T(F32, [1, 1, 3, 3]), 1, 1.0))
    assert got.tolist() == [[[[0, 1, 0], [0, 0, 1], [0, 0, 0]]]]
    got, _ = run(DM(T(F32, [1, 1, 3, 2]), -1, 1.0))
    assert got.tolist() == [[[[0, 0], [1, 0], [0, 1]]]]
    got, _ = run(DM(T(F32, [1, 1, 3, 2]), -3, 1.0))
    assert got.tolist() == [[[[0, 0], [0, 0], [0, 0]]]]


def test_diagonal_matrix_truncates_value_on_integers(backend: str) -> None:
    """"10.6 will become 10"; -3.7 on UINT8 truncates to -3 and saturates to 0; every batch matrix alike."""
    got, _ = run(DM(T("INT32", [2, 1, 2, 2]), 0, 10.6))
    assert got.tolist() == [[[[10, 0], [0, 10]]], [[[10, 0], [0, 10]]]]
    got, _ = run(DM(T("UINT8", [1, 1, 2, 2]), 0, -3.7))
    assert got.tolist() == [[[[0, 0], [0, 0]]]]


X45 = np.array([[4, 7, 3, 7, 9], [1, 2, 8, 6, 9], [9, 4, 1, 8, 7], [4, 3, 4, 2, 4]], np.float32)


def test_diagonal_matrix1_examples(backend: str) -> None:
    # "Default identity matrix": the page shows ones with Value 7; ones come from Value 1
    got, _ = run(DM1(None, T(F32, [4, 5]), F32, 1, 0, 1), None)
    assert got.tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0]]
    got, _ = run(DM1(None, T(F32, [4, 5]), F32, 7, 0, 3), None)
    assert got.tolist() == [[7, 7, 7, 0, 0], [0, 7, 7, 7, 0], [0, 0, 7, 7, 7], [0, 0, 0, 7, 7]]
    # keep the strictly upper triangle
    got, _ = run(DM1(T(F32, [4, 5]), T(F32, [4, 5]), F32, 0, INT32_MIN, 1), X45)
    assert got.tolist() == [[0, 7, 3, 7, 9], [0, 0, 8, 6, 9], [0, 0, 0, 8, 7], [0, 0, 0, 0, 4]]
    # keep the diagonal only (the band inverted)
    got, _ = run(DM1(T(F32, [4, 5]), T(F32, [4, 5]), F32, 0, 1, 0), X45)
    assert got.tolist() == [[4, 0, 0, 0, 0], [0, 2, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 2, 0]]


def test_diagonal_matrix1_moves_float64_and_64_bit_integers_exactly(backend: str) -> None:
    """FLOAT64 values only move (the gpu has no f64 arithmetic): Value 2^60 + 1 as INT64, 0.1 as FLOAT64."""
    x = np.arange(6, dtype=np.float64).reshape(2, 3) + 0.25
    got, _ = run(DM1(T("FLOAT64", [2, 3]), T("FLOAT64", [2, 3]), "FLOAT64", 0.1, 0, 1), x)
    assert got.tolist() == [[0.1, 1.25, 2.25], [3.25, 0.1, 5.25]]
    got, _ = run(DM1(None, T("INT64", [2, 3]), "INT64", 2**60 + 1, -1, 0), None)
    assert got.tolist() == [[0, 0, 0], [2**60 + 1, 0, 0]]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_dispatch_and_validate(backend: str, name: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "dispatch", "--backend", backend, "--output-path", tmp_path, EXAMPLES / name)
    assert (status, out, err) == (0, SAMPLES[name], [])
    status, out, err = _cli(capsys, "validate", "--backend", backend, EXAMPLES / name)
    assert status == 0 and err == [] and "valid at feature level 6_4" in out[0]


def test_sample_is_directml_s_file_unchanged() -> None:
    """The copy is microsoft/DirectML's file byte for byte (851 characters, LF line ends, its blank line of four
    spaces after $schema)."""
    text = (EXAMPLES / "dml_fill_value_sequence.json").read_bytes()
    assert len(text) == 851 and b"\r" not in text and b'"$schema": "./_schema.json",\n    \n' in text


# -- every support row ----------------------------------------------------------------------------------------------

def _example(cls: type[GeneratorOperatorDesc], data_type: DT, sizes: Sequence[int], with_input: bool = True
             ) -> tuple[GeneratorOperatorDesc, np.ndarray | None]:
    """A descriptor whose values reach the edges of its type: the integer maximum, a wrapping sequence, a truncated
    diagonal value, an inverted band over an input."""
    output = T(data_type, sizes)
    dtype = np.dtype(data_type.numpy_dtype)
    if data_type.is_float:
        top: Any = float(np.finfo(dtype).max) if dtype.itemsize < 8 else 1e300
        start, delta = -2.5, 0.75
    else:
        info = np.iinfo(dtype)
        top, start, delta = int(info.max), int(info.max) - 3, 2
    if cls is FVC:
        return FVC(output, data_type, top), None
    if cls is FVS:
        return FVS(output, data_type, start, delta), None
    if cls is DM:
        return DM(output, 1, 10.6), None
    count = int(np.prod(sizes))
    x = (np.arange(count) * 7 % 23).astype(dtype).reshape(sizes) if with_input else None
    return DM1(T(data_type, sizes) if with_input else None, output, data_type, top, 1, -1), x


SUPPORT_ROWS = [(cls, support_row.level, data_type, ranks)
                for cls in CLASSES.values() for support_row in SUPPORT[cls.OPERATOR_TYPE]
                for data_type in support_row.tensors["OutputTensor"].data_types
                for ranks in {support_row.tensors["OutputTensor"].min_rank,
                              support_row.tensors["OutputTensor"].max_rank}]


def _sizes(rank: int) -> list[int]:
    return [1] * (rank - 2) + [2, 3] if rank >= 2 else [3]


def test_every_support_row_is_accepted_at_its_level() -> None:
    for cls, level, data_type, rank in SUPPORT_ROWS:
        desc, _ = _example(cls, data_type, _sizes(rank))
        dml.Device(feature_level=level).create_operator(desc)


def test_each_operator_is_refused_below_its_level() -> None:
    for cls in CLASSES.values():
        table = SUPPORT[cls.OPERATOR_TYPE]
        first = min(support_row.level for support_row in table)
        below = max(level for level in FL if level < first)
        desc, _ = _example(cls, F32, _sizes(4 if cls is not DM1 else 2))
        with pytest.raises(dml.UnsupportedError, match=rf"{cls.OPERATOR_TYPE.dml_name} needs feature level "
                                                        rf"{first}; the device is at {below}"):
            dml.Device(feature_level=below).create_operator(desc)


@pytest.mark.parametrize(("cls", "data_type", "level", "later"), [
    (FVC, DT.FLOAT64, FL.LEVEL_4_0, "4_1"), (FVS, DT.INT64, FL.LEVEL_4_1, "5_0"), (DM, DT.INT32, FL.LEVEL_2_0, "2_1"),
    (DM, DT.UINT64, FL.LEVEL_5_0, "5_1")])
def test_a_type_of_a_later_row_is_unsupported_before_it(cls: type[GeneratorOperatorDesc], data_type: DT,
                                                        level: dml.FeatureLevel, later: str) -> None:
    desc, _ = _example(cls, data_type, [1, 1, 2, 3])
    with pytest.raises(dml.UnsupportedError, match=rf"OutputTensor.*{data_type.name}.*{later}"):
        dml.Device(feature_level=level).create_operator(desc)


def test_ranks_outside_the_rows_are_refused() -> None:
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_DIAGONAL_MATRIX: OutputTensor.*2.*4_0"):
        dml.Device(feature_level="3_1").create_operator(DM(T(F32, [2, 3]), 0, 1.0))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DIAGONAL_MATRIX: OutputTensor.*DimensionCount.*5"):
        device().create_operator(DM(T(F32, [1, 1, 1, 2, 3]), 0, 1.0))
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DIAGONAL_MATRIX1: .*DimensionCount.*5"):
        device().create_operator(DM1(None, T(F32, [1, 1, 1, 2, 3]), F32, 1, 0, 1))
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_FILL_VALUE_CONSTANT: OutputTensor.*4_0"):
        dml.Device(feature_level="3_1").create_operator(FVC(T(F32, [2, 3]), F32, 1.0))


#: The types dispatched on cpu and gpu (a kernel compiles per type there); cpu-small dispatches every type.
REPRESENTATIVE = {DT.FLOAT32, DT.FLOAT16, DT.UINT8, DT.INT64, DT.FLOAT64}


def test_every_type_against_the_reference(backend_name: str) -> None:
    for cls in CLASSES.values():
        (top,) = [row for row in SUPPORT[cls.OPERATOR_TYPE] if row.level == max(r.level for r in SUPPORT[
            cls.OPERATOR_TYPE])]
        for data_type in top.tensors["OutputTensor"].data_types:
            if backend_name != "cpu-small" and data_type not in REPRESENTATIVE:
                continue
            for with_input in (True, False) if cls is DM1 else (True,):
                desc, x = _example(cls, data_type, [1, 2, 3, 4], with_input)
                dispatch_and_check(desc, x)


# -- hypothesis -----------------------------------------------------------------------------------------------------

@st.composite
def generator_cases(draw: st.DrawFn, backend: str) -> tuple[GeneratorOperatorDesc, np.ndarray | None, int]:
    cls = draw(st.sampled_from(sorted(CLASSES.values(), key=lambda c: c.__name__)))
    drawer = descriptor_drawer(cls)
    assert drawer is not None
    desc = draw(drawer(cls, TOP))
    assert isinstance(desc, GeneratorOperatorDesc)
    if backend != "cpu-small" and desc.output_tensor.data_type not in REPRESENTATIVE:
        desc = draw(drawer(cls, TOP).filter(lambda d: d.output_tensor.data_type in REPRESENTATIVE))
    x = None
    if desc.input_slots() and desc.input_slots()[0][1] is not None:
        sizes = desc.output_tensor.sizes
        dtype = np.dtype(desc.output_tensor.data_type.numpy_dtype)
        x = (np.arange(int(np.prod(sizes))) * 5 % 17).astype(dtype).reshape(sizes)
    return desc, x, draw(st.integers(0, 2**16))


def test_hypothesis_against_the_reference(backend_name: str) -> None:
    @settings(max_examples=30 if backend_name == "cpu-small" else 8, deadline=None, derandomize=True)
    @given(generator_cases(backend_name))
    def check(case: tuple[GeneratorOperatorDesc, np.ndarray | None, int]) -> None:
        desc, x, seed = case
        dispatch_and_check(desc, x, seed=seed)

    check()


# -- the graph API and Dask -----------------------------------------------------------------------------------------

def _graph(x_sizes: Sequence[int] = (4, 5)) -> tuple[dml.Graph, list[dml.Expression]]:
    g = dml.Graph(device())
    x = g.input(list(x_sizes), F32, name="x")
    return g, [
        dml.fill_value_constant(g, [2, 3], "INT16", -7),
        dml.fill_value_sequence(g, [3, 4], "INT32", 100, -9),
        dml.diagonal_matrix(g, [2, 1, 3, 4], offset=-1, value=2.5),
        dml.diagonal_matrix1(x, 0, INT32_MIN, 1),
        dml.diagonal_matrix1(g, 3, 1, 0, sizes=[3, 4], data_type="UINT8"),
    ]


def _expected_graph_outputs() -> list[np.ndarray]:
    """Worked out by hand from each page's pseudocode."""
    sequence = np.array([[100, 91, 82, 73], [64, 55, 46, 37], [28, 19, 10, 1]], np.int32)   # 100 - 9 i
    diagonal = np.array([[0, 0, 0, 0], [2.5, 0, 0, 0], [0, 2.5, 0, 0]], np.float32)        # col - row == -1
    upper = np.array([[0, 7, 3, 7, 9], [0, 0, 8, 6, 9], [0, 0, 0, 8, 7], [0, 0, 0, 0, 4]], np.float32)
    band = np.array([[0, 3, 3, 3], [3, 0, 3, 3], [3, 3, 0, 3]], np.uint8)   # inverted [1, 0): col - row != 0
    return [np.full((2, 3), -7, np.int16), sequence, np.stack([diagonal[None]] * 2), upper, band]


def test_graph_functions(backend: str) -> None:
    g, outputs = _graph()
    assert [o.sizes for o in outputs] == [(2, 3), (3, 4), (2, 1, 3, 4), (4, 5), (3, 4)]
    results = g.compile(outputs)({"x": X45})
    for got, want in zip(results, _expected_graph_outputs(), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)


def test_dask_blocks_generate_at_their_coordinates() -> None:
    """Chunks of 2 x 2 (and Dask's own for the generators without an input): every block's index, row and col are
    the whole output's, so the chunked result is the NumPy one."""
    da = pytest.importorskip("dask.array")
    g, outputs = _graph()
    compiled = g.compile(outputs)
    results = compiled({"x": da.from_array(X45, chunks=(2, 2))})
    for got, want in zip(results, _expected_graph_outputs(), strict=True):
        assert np.array_equal(got.compute(), want)
    big = dml.Graph(device())
    sequence = dml.fill_value_sequence(big, [3, 70000], "INT64", 5, 3)
    column = dml.diagonal_matrix1(big.input([300, 400], F32, name="y"), 1, 0, 1)
    y = da.from_array(np.zeros((300, 400), np.float32), chunks=(64, 96))
    got_sequence, got_column = big.compile([sequence, column])({"y": y})
    assert got_sequence.numblocks != (1, 1) or got_sequence.chunks
    assert np.array_equal(got_sequence.compute(), 5 + 3 * np.arange(210000, dtype=np.int64).reshape(3, 70000))
    assert np.array_equal(got_column.compute(), np.eye(300, 400, dtype=np.float32))


def test_graph_function_errors() -> None:
    g, _ = _graph()
    with pytest.raises(dml.ValidationError, match=r"dml.fill_value_constant: graph is 'g'; it must be a dml.Graph"):
        dml.fill_value_constant("g", [2], F32, 1.0)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=r"dml.fill_value_sequence: data_type .*'FLOAT99'"):
        dml.fill_value_sequence(g, [2], "FLOAT99", 0, 1)
    with pytest.raises(dml.ValidationError, match=r"dml.diagonal_matrix1: sizes is None and data_type is None; "
                                                  r"without an input expression both are required"):
        dml.diagonal_matrix1(g, 1, 0, 1)
    with pytest.raises(dml.ValidationError, match=r"dml.diagonal_matrix1: sizes and data_type are the source's"):
        dml.diagonal_matrix1(g.inputs[0], 1, 0, 1, sizes=[4, 5])
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_FILL_VALUE_CONSTANT: Value is 300; it must be an "
                                                  r"integer of UINT8 \(from 0 to 255\)"):
        dml.fill_value_constant(g, [2], "UINT8", 300)


# -- bad descriptors ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: FVC(T(F32, [2]), "INT32", 1), dml.ValidationError,
     r"DML_OPERATOR_FILL_VALUE_CONSTANT: ValueDataType is INT32; it must equal OutputTensor.DataType \(FLOAT32\)"),
    (lambda: FVS(T("UINT8", [4]), "UINT8", 10, -2), dml.ValidationError,
     r"DML_OPERATOR_FILL_VALUE_SEQUENCE: ValueDelta is -2; it must be an integer of UINT8 \(from 0 to 255\)"),
    (lambda: FVC(T(F32, [2]), F32, float("nan")), dml.ValidationError,
     r"DML_OPERATOR_FILL_VALUE_CONSTANT: Value is nan; it must be a number of FLOAT32"),
    (lambda: FVS(T("FLOAT16", [2]), "FLOAT16", 70000.0, 1.0), dml.ValidationError,
     r"DML_OPERATOR_FILL_VALUE_SEQUENCE: ValueStart .*70000"),
    (lambda: FVC(None, F32, 1.0), dml.ValidationError,  # type: ignore[arg-type]
     r"DML_OPERATOR_FILL_VALUE_CONSTANT: OutputTensor is None"),
    (lambda: DM(T(F32, [1, 1, 2, 2]), 2**31, 1.0), dml.ValidationError,
     r"DML_OPERATOR_DIAGONAL_MATRIX: Offset is 2147483648; it must be an integer in \[-2\^31, 2\^31\)"),
    (lambda: DM(T(F32, [1, 1, 2, 2]), 0, float("inf")), dml.ValidationError,
     r"DML_OPERATOR_DIAGONAL_MATRIX: Value is inf"),
    (lambda: DM1(T(F32, [2, 3]), T(F32, [3, 2]), F32, 1, 0, 1), dml.ValidationError,
     r"DML_OPERATOR_DIAGONAL_MATRIX1: InputTensor.Sizes is \[2, 3\]; it must equal OutputTensor.Sizes \[3, 2\]"),
    (lambda: DM1(T("INT32", [2, 3]), T(F32, [2, 3]), F32, 1, 0, 1), dml.ValidationError,
     r"DML_OPERATOR_DIAGONAL_MATRIX1: InputTensor.*INT32.*OutputTensor.*FLOAT32"),
    (lambda: DM1(None, T(F32, [2, 3]), F32, 1, 0, "1"), dml.ValidationError,
     r"DML_OPERATOR_DIAGONAL_MATRIX1: DiagonalFillEnd is '1'"),
    (lambda: DM1(T(F32, [2, 3]), T(F32, [2, 3]), F32, 1, 0, 1), dml.UnsupportedError,
     r"DML_OPERATOR_DIAGONAL_MATRIX1 needs feature level 5_1; the device is at 5_0"),
])
def test_bad_descriptors(make: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        dml.Device(feature_level="5_0").create_operator(make())


def test_json_fields() -> None:
    """OperatorDesc.from_dml: Offset and the fill bounds are signed INTs; the scalars are unions of ValueDataType."""
    desc = dml.OperatorDesc.from_dml("DIAGONAL_MATRIX", {
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]}, "Offset": -1, "Value": 2})
    assert desc == DM(T(F32, [1, 1, 2, 2]), -1, 2.0)
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_DIAGONAL_MATRIX1", {
        "OutputTensor": {"DataType": "INT64", "Sizes": [2, 2]}, "ValueDataType": "INT64", "Value": {"Int64": -5},
        "DiagonalFillBegin": -2147483648, "DiagonalFillEnd": 1})
    assert desc == DM1(None, T("INT64", [2, 2]), "INT64", -5, INT32_MIN, 1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_DIAGONAL_MATRIX.Offset"):
        dml.OperatorDesc.from_dml("DIAGONAL_MATRIX", {
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]}, "Offset": 2**31, "Value": 2})


def test_the_drawer_covers_every_row() -> None:
    """Every table row in force at some level is drawable (strategies.generator_descs reads the tables)."""
    for cls in CLASSES.values():
        for level in FL:
            assert (table_row(cls, level) is None) == (level < cls.info().level)
