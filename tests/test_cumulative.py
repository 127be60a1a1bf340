"""The scans (issue 28): CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT (ops/cumulative.py), on every backend.

The pages' examples copied by hand; DxDispatch's dml_cumulative_product.json run unchanged through the CLI, its output
worked out by hand; every support-table row at its level (and refused below it or outside it); every type of the
newest row, both operators, both directions, inclusive and exclusive, against the independent reference of
tests/reference.py (`reference_cumulative`: the walk element by element in Python, each FLOAT32 step rounded as
DML's FLOAT32 tally rounds it, integers exact then wrapped); goldens that tell a sequential FLOAT32 tally from a
float64 or pairwise one and a FLOAT32 tally of FLOAT16 from a FLOAT16 one; integer wrap-around; strides and zero
strides; in-place execution; outputs between sentinel bytes; hypothesis over the drawer of tests/strategies.py; the
graph API and Dask chunks along the axis (a carried tally, bit for bit the device's); bad descriptors and calls with
their messages.
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
from reference import reference_cumulative
from strategies import backends, build_buffer, read_buffer, registered_descriptor, run_one_input
from test_elementwise_samples import EXAMPLES, _cli

import opendml as dml
from opendml.ops.cumulative import SUMMATION_SUPPORT, CumulativeOperatorDesc

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, F16 = DT.FLOAT32, DT.FLOAT16
SUM, PROD = dml.CumulativeSummationOperatorDesc, dml.CumulativeProductOperatorDesc
CLASSES = (SUM, PROD)

#: DxDispatch's scan sample (microsoft/DirectML DxDispatch/models/, copied unchanged) and what it prints.
SAMPLES = {
    # CUMULATIVE_PRODUCT of {2, 4, 8, 3} along its last axis, inclusive, increasing: 2, 2*4 = 8, 8*8 = 64,
    # 64*3 = 192.
    "dml_cumulative_product.json": ["Resource 'Out': 2, 8, 64, 192"],
}


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def run(desc: CumulativeOperatorDesc, x: np.ndarray, *, level: dml.FeatureLevel = TOP, seed: int = 0
        ) -> tuple[np.ndarray, np.ndarray]:
    """(the logical output, the logical input as bound) of one dispatch of `desc`, in host memory between sentinel
    bytes (execute_between_sentinels checks that nothing outside the output's elements changed)."""
    return run_one_input(device(level), desc, x, seed=seed)


def expected(desc: CumulativeOperatorDesc, x: np.ndarray) -> np.ndarray:
    """The reference's tally, each FLOAT32 step as DML's (FLOAT16 widened exactly), rounded once to the type."""
    tally = reference_cumulative(x, desc.axis, product=desc.is_product, decreasing=desc.decreasing,
                                 exclusive=desc.exclusive, accumulate=np.float32)
    with np.errstate(all="ignore"):
        return np.asarray(tally).astype(x.dtype)


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def check_cumulative(desc: CumulativeOperatorDesc, inputs: Sequence[np.ndarray | None], output: np.ndarray) -> None:
    """The oracle (also test_fuzz_descriptors.check_outputs'): the reference bit for bit (any NaN for a NaN)."""
    x = inputs[0]
    assert x is not None
    want = expected(desc, x)
    if output.dtype.kind == "f":
        both_nan = np.isnan(output) & np.isnan(want)
        assert np.array_equal(_bits(np.where(both_nan, 0, output)), _bits(np.where(both_nan, 0, want))), \
            (desc, x, output, want)
        return
    assert np.array_equal(_bits(output), _bits(want)), (desc, x, output, want)


def dispatch_and_check(desc: CumulativeOperatorDesc, x: np.ndarray, **kwargs: Any) -> np.ndarray:
    got, logical = run(desc, x, **kwargs)
    check_cumulative(desc, [logical], got)
    return got


# -- the pages' examples and the sample ---------------------------------------------------------------------------

X = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], np.float32)
X_TENSOR = T(F32, [1, 1, 3, 4])


def scan(cls: type[CumulativeOperatorDesc], axis: int, direction: str = "INCREASING", exclusive: bool = False,
         tensor: dml.TensorDesc = X_TENSOR, output: dml.TensorDesc | None = None) -> CumulativeOperatorDesc:
    return cls(tensor, output or T(tensor.data_type, tensor.sizes), axis, direction, exclusive)  # type: ignore[call-arg]


def test_summation_examples(backend: str) -> None:
    assert run(scan(SUM, 3), X)[0].tolist() == [[[[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]]]
    assert run(scan(SUM, 3, exclusive=True), X)[0].tolist() == [[[[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]]]
    assert run(scan(SUM, 3, "DECREASING"), X)[0].tolist() == [[[[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]]]
    assert run(scan(SUM, 2), X)[0].tolist() == [[[[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]]]


def test_product_examples(backend: str) -> None:
    assert run(scan(PROD, 3), X)[0].tolist() == [[[[2, 2, 6, 30], [3, 24, 168, 504], [9, 54, 108, 432]]]]
    assert run(scan(PROD, 3, exclusive=True), X)[0].tolist() == [[[[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]]]]
    assert run(scan(PROD, 3, "DECREASING"), X)[0].tolist() == [[[[30, 15, 15, 5], [504, 168, 21, 3],
                                                                  [432, 48, 8, 4]]]]
    assert run(scan(PROD, 2), X)[0].tolist() == [[[[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]]]]


def test_exclusive_and_decreasing_together(backend: str) -> None:
    """Along the height, from the bottom, each element's own value left out: the bottom row holds 0 (or 1); the
    middle row the bottom one; the top row the sum (product) of the two below it."""
    assert run(scan(SUM, 2, "DECREASING", True), X)[0].tolist() == [[[[12, 14, 9, 7], [9, 6, 2, 4], [0, 0, 0, 0]]]]
    assert run(scan(PROD, 2, "DECREASING", True), X)[0].tolist() == [[[[27, 48, 14, 12], [9, 6, 2, 4],
                                                                         [1, 1, 1, 1]]]]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_dispatch_and_validate(backend: str, name: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "dispatch", "--backend", backend, "--output-path", tmp_path, EXAMPLES / name)
    assert (status, out, err) == (0, SAMPLES[name], [])
    status, out, err = _cli(capsys, "validate", "--backend", backend, EXAMPLES / name)
    assert status == 0 and err == [] and "valid at feature level 6_4" in out[0]


def test_sample_is_directml_s_file_unchanged() -> None:
    """The copy is microsoft/DirectML's file byte for byte (1164 characters, LF line ends, its blank line of four
    spaces after $schema, no newline at the end)."""
    text = (EXAMPLES / "dml_cumulative_product.json").read_bytes()
    assert len(text) == 1164 and b"\r" not in text and b'"$schema": "./_schema.json",\n    \n' in text
    assert text.endswith(b"]\n}")


# -- the rules that decide the bits -----------------------------------------------------------------------------------

def test_float32_tally_is_sequential(backend: str) -> None:
    """1e8, then + 1 (1e8 + 1 rounds back to 1e8 in FLOAT32: its spacing there is 8), then - 1e8: 0. A float64 or
    pairwise tally would end at 1. From the other end: -1e8, -1e8 + 1 = -1e8, then 0 at element 0."""
    x = np.array([1e8, 1, -1e8], np.float32)
    assert run(scan(SUM, 0, tensor=T(F32, [3])), x)[0].tolist() == [1e8, 1e8, 0]
    assert run(scan(SUM, 0, "DECREASING", tensor=T(F32, [3])), x)[0].tolist() == [0, -1e8, -1e8]


def test_float16_accumulates_in_float32(backend: str) -> None:
    """2048, 1, 1 in FLOAT16: the FLOAT32 tallies 2048, 2049, 2050 round to 2048 (a tie, to the even 2048), 2048
    and 2050; a FLOAT16 tally would stay at 2048 (2048 + 1 rounds back to 2048 every time). Products: 3 * 683 =
    2049 (rounds to 2048 in FLOAT16) times 3 = 6147 in FLOAT32, which rounds to 6148; a FLOAT16 tally gives
    2048 * 3 = 6144."""
    tensor = T(F16, [3])
    assert run(scan(SUM, 0, tensor=tensor), np.array([2048, 1, 1], np.float16))[0].tolist() == [2048, 2048, 2050]
    assert run(scan(PROD, 0, tensor=tensor), np.array([3, 683, 3], np.float16))[0].tolist() == [3, 2048, 6148]


def test_the_tally_starts_as_the_first_element(backend: str) -> None:
    """A -0.0 first element stays -0.0 (0 + -0.0 would be +0.0) and -0.0 + -0.0 is -0.0; an exclusive scan's first
    output is +0.0 (the empty sum) or 1 (the empty product); ONNX's CumSum copies the first element likewise."""
    tensor = T(F32, [3])
    x = np.array([-0.0, -0.0, 2.0], np.float32)
    got, _ = run(scan(SUM, 0, tensor=tensor), x)
    assert got.tolist() == [0, 0, 2] and np.signbit(got).tolist() == [True, True, False]
    got, _ = run(scan(PROD, 0, tensor=tensor), x)   # -0.0, then -0.0 * -0.0 = +0.0, then +0.0 * 2
    assert got.tolist() == [0, 0, 0] and np.signbit(got).tolist() == [True, False, False]
    got, _ = run(scan(SUM, 0, "DECREASING", True, tensor=tensor), np.array([1.0, -0.0, -0.0], np.float32))
    assert got.tolist() == [0, 0, 0] and np.signbit(got).tolist() == [True, True, False]


def test_integers_wrap(backend: str) -> None:
    """Integer tallies wrap modulo 2^bits (two's complement for the signed types; README, Rulings)."""
    got, _ = run(scan(SUM, 0, tensor=T("INT32", [3])), np.array([2**31 - 1, 1, 1], np.int32))
    assert got.tolist() == [2**31 - 1, -(2**31), -(2**31) + 1]
    got, _ = run(scan(PROD, 0, tensor=T("UINT32", [3])), np.array([65536, 65536, 3], np.uint32))
    assert got.tolist() == [65536, 0, 0]
    got, _ = run(scan(PROD, 0, tensor=T("INT32", [3])), np.array([-65536, 32768, 3], np.int32))
    assert got.tolist() == [-65536, -(2**31), -(2**31)]   # -2^31 * 3 = -3 * 2^31 = -2^31 (mod 2^32)
    got, _ = run(scan(SUM, 0, "DECREASING", True, tensor=T("UINT64", [3])),
                 np.array([5, 2**64 - 1, 2**63], np.uint64))
    assert got.tolist() == [2**63 - 1, 2**63, 0]          # from the end: 0, 2^63, 2^63 + 2^64 - 1 = 2^63 - 1
    got, _ = run(scan(SUM, 0, tensor=T("INT64", [2])), np.array([2**63 - 1, 2], np.int64))
    assert got.tolist() == [2**63 - 1, -(2**63) + 1]


def test_strides_and_zero_strides(backend: str) -> None:
    """A broadcast input (stride 0 along the rows: every row the same) scanned down the rows and along them into a
    transposed, padded output."""
    row = np.array([[1, 2, 3, 4]], np.float32)
    source = T(F32, [3, 4], [0, 1])
    output = T(F32, [3, 4], [1, 4])
    got = dispatch_and_check(scan(SUM, 0, tensor=source, output=output), np.repeat(row, 3, axis=0))
    assert got.tolist() == [[1, 2, 3, 4], [2, 4, 6, 8], [3, 6, 9, 12]]
    got = dispatch_and_check(scan(PROD, 1, "DECREASING", True, tensor=source, output=T(F32, [3, 4], [6, 1])),
                             np.repeat(row, 3, axis=0))
    assert got.tolist() == [[24, 12, 4, 1]] * 3
    # a 5-D tensor with padded strides, scanned along a middle axis
    x = (np.arange(2 * 3 * 2 * 4 * 2) % 7 - 3).astype(np.int32).reshape(2, 3, 2, 4, 2)
    padded = T("INT32", x.shape, [100, 30, 12, 3, 1])
    dispatch_and_check(scan(SUM, 1, "DECREASING", tensor=padded, output=T("INT32", x.shape)), x)
    dispatch_and_check(scan(PROD, 3, exclusive=True, tensor=padded, output=T("INT32", x.shape, [1, 2, 6, 12, 48])), x)


@pytest.mark.parametrize("memory", ["host", "device"])
def test_in_place(memory: str, backend: str) -> None:
    """Both pages allow the output to alias the input: a FLOAT16 tensor of padded rows, scanned down its columns
    (then along its rows) in place; the padding keeps its bytes."""
    tensor = T(F16, [3, 5], [8, 1])
    x = np.linspace(-3, 3, 15).astype(np.float16).reshape(3, 5)
    data = build_buffer(x, (8, 1), tail_bytes=4)
    dev = device()
    for desc in (scan(SUM, 0, tensor=tensor, output=tensor), scan(PROD, 1, "DECREASING", True, tensor=tensor,
                                                                   output=tensor)):
        compiled = dev.compile_operator(dev.create_operator(desc))
        made = dev.create_buffer(data) if memory == "device" else data.copy()
        compiled.execute([dml.Binding(made)], [dml.Binding(made)])
        after = np.frombuffer(made.read(), np.uint8) if memory == "device" else made
        np.testing.assert_array_equal(read_buffer(after, np.float16, [3, 5], (8, 1)), expected(desc, x))
        gaps = np.ones(data.size, bool)
        gaps[np.add.outer(np.arange(3) * 16, np.arange(10)).reshape(-1)] = False
        np.testing.assert_array_equal(after[gaps], data[gaps])


# -- every support row ----------------------------------------------------------------------------------------------

#: Each page's table as the class lists it (OperatorDesc.support_tables), which test_the_tables_are_the_pages reads.
SUPPORT = {cls: cls.support_tables()[""] for cls in CLASSES}
SUPPORT_ROWS = [(cls, support_row.level, data_type, rank)
                for cls in CLASSES for support_row in SUPPORT[cls]
                for data_type in support_row.tensors["InputTensor"].data_types
                for rank in {support_row.tensors["InputTensor"].min_rank, support_row.tensors["InputTensor"].max_rank}]


def _sizes(rank: int) -> list[int]:
    return [1] * (rank - 2) + [2, 3] if rank >= 2 else [3]


def test_the_tables_are_the_pages() -> None:
    """The newest pages' rows: 5_0 adds INT64 and UINT64 (1 to 8 dimensions), 4_0 allows 1 to 8 dimensions, the
    first row (2_1 for the sum, 3_1 for the product) 4 dimensions of FLOAT32, FLOAT16, INT32, UINT32."""
    for table, first in ((SUPPORT[SUM], FL.LEVEL_2_1), (SUPPORT[PROD], FL.LEVEL_3_1)):
        assert [support_row.level for support_row in table] == [FL.LEVEL_5_0, FL.LEVEL_4_0, first]
        for support_row in table:
            for name in ("InputTensor", "OutputTensor"):
                tensor = support_row.tensors[name]
                wide = support_row.level == FL.LEVEL_5_0
                assert set(tensor.data_types) == {F32, F16, DT.INT32, DT.UINT32} | ({DT.INT64, DT.UINT64} if wide
                                                                                   else set())
                assert (tensor.min_rank, tensor.max_rank) == ((4, 4) if support_row.level == first else (1, 8))


def test_every_support_row_is_accepted_at_its_level() -> None:
    for cls, level, data_type, rank in SUPPORT_ROWS:
        sizes = _sizes(rank)
        dml.Device(feature_level=level).create_operator(scan(cls, rank - 1, tensor=T(data_type, sizes)))


def test_every_support_row_dispatches(backend: str) -> None:
    """One dispatch of each row's every type at the row's level, both operators."""
    seen: set[tuple[type, FL, DT]] = set()
    for cls, level, data_type, rank in SUPPORT_ROWS:
        if (cls, level, data_type) in seen or (backend == "gpu" and not dml.Device().backend.supports_data_type(
                data_type)):
            continue
        seen.add((cls, level, data_type))
        sizes = [1, 1, 2, 3] if rank == 4 else [2, 3]
        x = (np.arange(6) % 4 + 1).astype(data_type.numpy_dtype).reshape(sizes)
        dispatch_and_check(scan(cls, len(sizes) - 1, "DECREASING", tensor=T(data_type, sizes)), x, level=level)


def test_each_operator_is_refused_below_its_level() -> None:
    for cls, operator, first, below in ((SUM, "SUMMATION", "2_1", FL.LEVEL_2_0), (PROD, "PRODUCT", "3_1",
                                                                                   FL.LEVEL_3_0)):
        with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_CUMULATIVE_{operator} needs feature level "
                                                        rf"{first}; the device is at {below.name[6:]}"):
            dml.Device(feature_level=below).create_operator(scan(cls, 3))


@pytest.mark.parametrize(("cls", "data_type", "sizes", "level", "field", "later"), [
    (SUM, DT.INT64, [2, 3], FL.LEVEL_4_1, r"InputTensor.DataType INT64", "5_0"),
    (PROD, DT.UINT64, [2, 3], FL.LEVEL_4_1, r"InputTensor.DataType UINT64", "5_0"),
    (SUM, F32, [2, 3], FL.LEVEL_3_1, r"InputTensor.DimensionCount 2", "4_0"),
    (PROD, F16, [1, 1, 1, 2, 3], FL.LEVEL_3_1, r"InputTensor.DimensionCount 5", "4_0")])
def test_a_row_s_types_and_ranks_need_its_level(cls: type[CumulativeOperatorDesc], data_type: DT,
                                               sizes: list[int], level: FL, field: str, later: str) -> None:
    desc = scan(cls, 1, tensor=T(data_type, sizes))
    operator = cls.OPERATOR_TYPE.dml_name
    with pytest.raises(dml.UnsupportedError, match=rf"{operator}: {field} needs feature level {later}; the device "
                                                    rf"is at {level.name[6:]}"):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize("data_type", [DT.UINT16, DT.INT16, DT.INT8, DT.UINT8, DT.FLOAT64])
def test_types_off_the_tables_are_refused(data_type: DT) -> None:
    for cls in CLASSES:
        with pytest.raises(dml.ValidationError, match=rf"{cls.OPERATOR_TYPE.dml_name}: InputTensor.DataType "
                                                       rf"{data_type.name} is not supported; at feature level 6_4 it "
                                                       rf"must be one of FLOAT32, FLOAT16, INT64, INT32, UINT64, "
                                                       rf"UINT32"):
            device().create_operator(scan(cls, 1, tensor=T(data_type, [2, 3])))


# -- every type against the reference ---------------------------------------------------------------------------------

def _data(data_type: DT, sizes: Sequence[int], product: bool, seed: int = 0) -> np.ndarray:
    """Values that reach the interesting cases: negative and fractional floats (products of modest size), integers
    that wrap (sums near the type's limits, products of large factors)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(data_type.numpy_dtype)
    if dtype.kind == "f":
        values = rng.integers(-8, 9, sizes) / 4 if product else rng.standard_normal(sizes) * 100
        return np.asarray(values).astype(dtype)
    info = np.iinfo(dtype)
    if product:
        return rng.integers(max(int(info.min), -70000), 70000, sizes, dtype=np.int64).astype(dtype)
    return rng.integers(int(info.max) // 3, int(info.max), sizes, dtype=dtype, endpoint=True)


#: The types dispatched on cpu and gpu for every variant (a kernel compiles per type and option there); cpu-small
#: dispatches every type.
REPRESENTATIVE = {F32, F16, DT.INT32, DT.UINT64}


def test_every_type_against_the_reference(backend: str) -> None:
    sizes = [2, 3, 4]
    for data_type in SUMMATION_SUPPORT[0].tensors["InputTensor"].data_types:
        if backend != "cpu-small" and data_type not in REPRESENTATIVE:
            continue
        if not dml.Device().backend.supports_data_type(data_type):
            continue
        for cls in CLASSES:
            x = _data(data_type, sizes, cls is PROD)
            for axis in (0, 2):
                for direction in ("INCREASING", "DECREASING"):
                    for exclusive in (False, True):
                        dispatch_and_check(scan(cls, axis, direction, exclusive, tensor=T(data_type, sizes)), x)


def test_float_results_are_within_the_float32_error_of_the_float64_tally(backend: str) -> None:
    """The float64 reference (the tally's exact value, up to float64) bounds the FLOAT32 sums: each of the n steps
    rounds by at most half an ulp of the running tally, so |error| <= n 2^-24 sum |x|."""
    x = _data(F32, [3, 40], False, seed=3)
    got, _ = run(scan(SUM, 1, tensor=T(F32, [3, 40])), x)
    exact = reference_cumulative(x, 1, product=False, decreasing=False, exclusive=False)
    bound = 40 * 2.0**-24 * np.cumsum(np.abs(x.astype(np.float64)), axis=1)
    assert (np.abs(got - exact) <= bound).all()


# -- hypothesis -----------------------------------------------------------------------------------------------------

@st.composite
def cumulative_cases(draw: st.DrawFn, backend: str) -> tuple[CumulativeOperatorDesc, np.ndarray, int]:
    types = None if backend == "cpu-small" else REPRESENTATIVE
    desc = registered_descriptor(draw, CLASSES, [TOP, FL.LEVEL_4_0, FL.LEVEL_3_1], types)
    assert isinstance(desc, CumulativeOperatorDesc)
    seed = draw(st.integers(0, 2**16))
    x = _data(desc.input_tensor.data_type, desc.input_tensor.sizes, desc.is_product, seed)
    return desc, x, seed


def test_hypothesis_against_the_reference(backend: str) -> None:
    @settings(max_examples=30 if backend == "cpu-small" else 10, deadline=None, derandomize=True)
    @given(cumulative_cases(backend))
    def check(case: tuple[CumulativeOperatorDesc, np.ndarray, int]) -> None:
        desc, x, seed = case
        if not dml.Device().backend.supports_data_type(desc.input_tensor.data_type):
            return
        dispatch_and_check(desc, x, seed=seed)

    check()


# -- bad descriptors ------------------------------------------------------------------------------------------------

S = "DML_OPERATOR_CUMULATIVE_SUMMATION"
P = "DML_OPERATOR_CUMULATIVE_PRODUCT"
BAD = [
    (lambda: SUM(T(F32, [2, 3]), T(F32, [2, 3]), 2), rf"{S}: Axis is 2; it must be in \[0, 1\] for InputTensor of 2 "
                                                     r"dimensions"),
    (lambda: PROD(T(F32, [2, 3]), T(F32, [3, 2]), 1), rf"{P}: OutputTensor.Sizes is \[3, 2\]; it must equal "
                                                      r"InputTensor.Sizes \(\[2, 3\]\)"),
    (lambda: SUM(T(F32, [2, 3]), T(F16, [2, 3]), 1), rf"{S}: OutputTensor.DataType is FLOAT16; it must equal "
                                                     r"InputTensor.DataType \(FLOAT32\)"),
    (lambda: PROD(T(F32, [2, 3]), T(F32, [1, 2, 3]), 1), rf"{P}: OutputTensor.DimensionCount is 3; it must equal "
                                                         r"InputTensor.DimensionCount \(2\)"),
    (lambda: SUM(T(F32, [2] * 9), T(F32, [2] * 9), 1), rf"{S}: InputTensor.DimensionCount is 9; it must be 1 to 8"),
]
BAD_FIELDS = [
    (lambda: SUM(T(F32, [2, 3]), T(F32, [2, 3]), 1, "UP"), rf"{S}: AxisDirection is 'UP'; it must be one of "
                                                           r"INCREASING, DECREASING"),
    (lambda: SUM(T(F32, [2, 3]), T(F32, [2, 3]), 1, "INCREASING", 2), rf"{S}: HasExclusiveSum is 2; it must be a "
                                                                      r"BOOL \(True or False\)"),
    (lambda: PROD(T(F32, [2, 3]), T(F32, [2, 3]), 1, "INCREASING", "yes"), rf"{P}: HasExclusiveProduct is 'yes'; it "
                                                                           r"must be a BOOL"),
    (lambda: PROD(T(F32, [2, 3]), T(F32, [2, 3]), -1), rf"{P}: Axis is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: SUM([2, 3], T(F32, [2, 3]), 1), rf"{S}: InputTensor is \[2, 3\]; it must be a TensorDesc"),
    (lambda: PROD(T(F32, [2, 3]), None, 1), rf"{P}: OutputTensor is None; it must be a TensorDesc"),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_bad_descriptors_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        device().create_operator(make())


@pytest.mark.parametrize(("make", "message"), BAD_FIELDS)
def test_bad_fields_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        make()


def test_from_dml_reads_both_operators() -> None:
    tensor = {"DataType": "INT32", "Sizes": [2, 3]}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_CUMULATIVE_SUMMATION", {
        "InputTensor": tensor, "OutputTensor": tensor, "Axis": 0, "AxisDirection": "DECREASING",
        "HasExclusiveSum": True})
    assert desc == SUM(T("INT32", [2, 3]), T("INT32", [2, 3]), 0, "DECREASING", True)
    desc = dml.OperatorDesc.from_dml("CUMULATIVE_PRODUCT", {"InputTensor": tensor, "OutputTensor": tensor, "Axis": 1,
                                                            "AxisDirection": "DML_AXIS_DIRECTION_INCREASING",
                                                            "HasExclusiveProduct": False})
    assert desc == PROD(T("INT32", [2, 3]), T("INT32", [2, 3]), 1)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_CUMULATIVE_PRODUCT.*HasExclusiveSum"):
        dml.OperatorDesc.from_dml("CUMULATIVE_PRODUCT", {"InputTensor": tensor, "OutputTensor": tensor, "Axis": 1,
                                                         "AxisDirection": "INCREASING", "HasExclusiveSum": False})


# -- the graph API and Dask -----------------------------------------------------------------------------------------

def test_graph_functions(backend: str) -> None:
    g = dml.Graph(device())
    x = g.input([3, 4], F32, name="x")
    outputs = [dml.cumulative_summation(x, -1), dml.cumulative_summation(x, 0, "DECREASING", has_exclusive_sum=True),
               dml.cumulative_product(x, 1, axis_direction="DECREASING"),
               dml.cumulative_product(x, -2, has_exclusive_product=True)]
    assert [(o.sizes, o.dtype) for o in outputs] == [((3, 4), F32)] * 4
    data = X[0, 0]
    got = g.compile(outputs)({"x": data})
    assert np.asarray(got[0]).tolist() == [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]
    assert np.asarray(got[1]).tolist() == [[12, 14, 9, 7], [9, 6, 2, 4], [0, 0, 0, 0]]
    assert np.asarray(got[2]).tolist() == [[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]]
    assert np.asarray(got[3]).tolist() == [[1, 1, 1, 1], [2, 1, 3, 5], [6, 8, 21, 15]]


def test_graph_messages() -> None:
    g = dml.Graph(device())
    x = g.input([3, 4], F32)
    with pytest.raises(dml.ValidationError, match=r"dml.cumulative_summation: axis is -3; it must be an integer in "
                                                   r"\[-2, 1\] \(x has 2 dimensions"):
        dml.cumulative_summation(x, -3)
    with pytest.raises(dml.ValidationError, match=rf"{P}: Axis is 2; it must be in \[0, 1\]"):
        dml.cumulative_product(x, 2)
    with pytest.raises(dml.ValidationError, match=r"dml.cumulative_product: x is \[1, 2\]; it must be a "
                                                   r"dml.Expression"):
        dml.cumulative_product([1, 2], 0)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=rf"{S}: HasExclusiveSum is 'no'"):
        dml.cumulative_summation(x, 0, has_exclusive_sum="no")  # type: ignore[arg-type]


@backends("cpu")
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT32", "UINT64"])
def test_dask_chunks_along_the_axis_carry_the_tally(data_type: str, backend: str) -> None:
    """Chunks of 2 x 3 over a 5 x 7 input: each chunk along the axis starts from the tally carried out of the ones
    before it (in AxisDirection's order), so every variant gives the device's bits."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([5, 7], data_type, name="x")
    outputs = [function(x, axis, direction, exclusive)
               for function in (dml.cumulative_summation, dml.cumulative_product) for axis in (0, 1)
               for direction in ("INCREASING", "DECREASING") for exclusive in (False, True)]
    compiled = g.compile(outputs)
    data = _data(DT[data_type], [5, 7], False, seed=5)
    if data.dtype.kind == "f":
        data = (data / 50).astype(data.dtype)   # products of modest size
    on_device = compiled({"x": data})
    on_dask = compiled({"x": da.from_array(data, chunks=(2, 3))})
    for one, chunked in zip(on_device, on_dask, strict=True):
        assert np.array_equal(_bits(np.asarray(one)), _bits(chunked.compute()))
