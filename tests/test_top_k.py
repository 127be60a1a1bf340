"""TOP_K and TOP_K1 (issue 28, ops/top_k.py), on every backend.

The pages' examples copied by hand; goldens by hand for the order README rules (ties by ascending index in both
directions, NaN above +inf: first when DECREASING, last when INCREASING, -0.0 equal to +0.0 with each selected
value's own bits, FLOAT16 compared exactly, 64-bit integers past 2^53 and UINT64 past 2^63); every support-table
row at its level (and refused below it or outside it); every type of the newest row against the independent
reference of tests/reference.py (`reference_top_k`: Python's sort of each sequence); strides and zero strides; both
outputs between sentinel bytes; hypothesis over the drawer of tests/strategies.py; the graph API; Dask's tree of
per-chunk top-k against the device; bad descriptors and calls with their messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import reference_top_k
from strategies import (
    addressed_byte_mask,
    backends,
    build_buffer,
    read_buffer,
    registered_descriptor,
    sentinel_bytes,
    tensor_size_in_bytes,
)
from test_elementwise_samples import _cli

import opendml as dml
from opendml.ops.top_k import TOP_K1_SUPPORT, TopKOperatorDesc

DT = dml.DataType
FL = dml.FeatureLevel
TOP = FL.LEVEL_6_4
F32, F16, U32, U64 = DT.FLOAT32, DT.FLOAT16, DT.UINT32, DT.UINT64
TOP_K, TOP_K1 = dml.TopKOperatorDesc, dml.TopK1OperatorDesc
NAN = float("nan")


def T(data_type: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides)


@cache
def device(level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level)


def top(x: dml.TensorDesc, axis: int, k: int, direction: str | None = None, index_type: DT = U32,
        values: dml.TensorDesc | None = None, indices: dml.TensorDesc | None = None) -> TopKOperatorDesc:
    """TOP_K (no direction) or TOP_K1 over `x`, packed outputs unless given."""
    sizes = [k if dim == axis else size for dim, size in enumerate(x.sizes)]
    outputs = (values or T(x.data_type, sizes), indices or T(index_type, sizes))
    return TOP_K(x, *outputs, axis, k) if direction is None else TOP_K1(x, *outputs, axis, k, direction)


def run(desc: TopKOperatorDesc, x: np.ndarray, *, level: dml.FeatureLevel = TOP, seed: int = 0
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, indices, the logical input as bound) of one dispatch: `x` laid out by the input's strides 16 bytes
    into its buffer, each output 16 bytes into its own buffer of sentinel bytes; every byte outside the outputs'
    elements (and every input byte) must be as it was."""
    dev = device(level)
    compiled = dev.compile_operator(dev.create_operator(desc))
    source = desc.input_tensor
    raw = build_buffer(x, source.strides, byte_offset=16, seed=seed)
    logical = read_buffer(raw, x.dtype, source.sizes, source.strides, byte_offset=16)
    outputs = [desc.output_value_tensor, desc.output_index_tensor]
    fillers = [sentinel_bytes(16 + tensor_size_in_bytes(t.data_type.element_size, t.sizes, t.strides) + 11,
                              seed=seed + n) for n, t in enumerate(outputs)]
    made = [raw.copy(), *(filler.copy() for filler in fillers)]
    compiled.execute([dml.Binding(made[0], 16)], [dml.Binding(made[1], 16), dml.Binding(made[2], 16)])
    assert np.array_equal(made[0], raw), f"{desc.label}: the input changed"
    got = []
    for tensor, filler, after in zip(outputs, fillers, made[1:], strict=True):
        written = addressed_byte_mask(filler.size, tensor.data_type.element_size, tensor.sizes, tensor.strides,
                                      byte_offset=16)
        changed = np.flatnonzero((after != filler) & ~written)
        assert changed.size == 0, f"{desc.label}: bytes outside the elements changed: {changed[:16].tolist()}"
        got.append(read_buffer(after, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides, byte_offset=16))
    return got[0], got[1], logical


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def check_top_k(desc: TopKOperatorDesc, inputs: Sequence[np.ndarray | None], outputs: Sequence[np.ndarray]) -> None:
    """The oracle (also test_fuzz_descriptors.check_outputs'): the reference's indices, and its values bit for bit
    (the selected elements' own bits)."""
    x = inputs[0]
    assert x is not None
    values, indices = reference_top_k(x, desc.axis, desc.k, decreasing=desc.decreasing)
    assert np.array_equal(outputs[1].astype(np.int64), indices), (desc, x, outputs[1], indices)
    assert np.array_equal(_bits(outputs[0]), _bits(values)), (desc, x, outputs[0], values)


def dispatch_and_check(desc: TopKOperatorDesc, x: np.ndarray, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    values, indices, logical = run(desc, x, **kwargs)
    check_top_k(desc, [logical], [values, indices])
    return values, indices


# -- the pages' examples --------------------------------------------------------------------------------------------

X = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
TIED = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)
X_TENSOR = T(F32, [1, 1, 3, 4])


def _lists(result: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[list[Any], list[Any]]:
    return result[0].tolist(), result[1].tolist()


@pytest.mark.parametrize("direction", [None, "DECREASING"])
def test_the_pages_examples(direction: str | None, backend: str) -> None:
    """TOP_K's examples 1 to 3, and TOP_K1's with AxisDirection DECREASING (the same)."""
    assert _lists(run(top(X_TENSOR, 3, 2, direction), X)) == ([[[[11, 10], [9, 8], [7, 6]]]],
                                                               [[[[3, 2], [2, 3], [3, 2]]]])
    assert _lists(run(top(X_TENSOR, 2, 2, direction), X)) == ([[[[4, 5, 10, 11], [3, 2, 9, 8]]]],
                                                               [[[[2, 2, 0, 0], [1, 1, 1, 1]]]])
    assert _lists(run(top(X_TENSOR, 3, 3, direction), TIED)) == ([[[[3, 2, 2], [5, 5, 4], [6, 6, 6]]]],
                                                                  [[[[3, 1, 2], [2, 3, 1], [0, 1, 2]]]])


def test_the_increasing_example(backend: str) -> None:
    """TOP_K1's example 4: the smallest, smallest first, ties by ascending index."""
    assert _lists(run(top(X_TENSOR, 3, 3, "INCREASING"), TIED)) == ([[[[1, 2, 2], [3, 4, 5], [6, 6, 6]]]],
                                                                     [[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]])


# -- the order (README, Rulings) ----------------------------------------------------------------------------------

def test_nan_ranks_above_infinity_and_zeros_tie(backend: str) -> None:
    """[1, NaN, -0.0, inf, 0.0, NaN, -inf]: DECREASING takes the NaNs first (index 1, then 5), then inf, 1, and the
    zeros tied (-0.0 at 2 before 0.0 at 4, each with its own sign); INCREASING takes -inf, the zeros (2 then 4), 1,
    inf, and the NaNs last."""
    x = np.array([1, NAN, -0.0, np.inf, 0.0, -NAN, -np.inf], np.float32)
    tensor = T(F32, [7])
    values, indices, _ = run(top(tensor, 0, 7, "DECREASING"), x)
    assert indices.tolist() == [1, 5, 3, 0, 2, 4, 6]
    assert _bits(values).tolist() == _bits(x[[1, 5, 3, 0, 2, 4, 6]]).tolist()   # NaN payloads and signs kept
    assert np.signbit(values[4:6]).tolist() == [True, False]
    values, indices, _ = run(top(tensor, 0, 7, "INCREASING"), x)
    assert indices.tolist() == [6, 2, 4, 0, 3, 1, 5]
    assert _bits(values).tolist() == _bits(x[[6, 2, 4, 0, 3, 1, 5]]).tolist()
    values, indices, _ = run(top(tensor, 0, 2, "INCREASING"), x)
    assert indices.tolist() == [6, 2] and values[1] == 0 and np.signbit(values[1])
    values, indices, _ = run(top(tensor, 0, 1), x)                  # TOP_K: the first NaN
    assert indices.tolist() == [1] and np.isnan(values[0])


def test_float16_is_compared_exactly(backend: str) -> None:
    """FLOAT16 neighbours one ulp apart (2049 is not a FLOAT16: 2048 and 2050 are; 1 and 1 + 2^-10), a subnormal
    (2^-24) against +0.0, and a NaN: each in its own place, the values' bits unchanged."""
    x = np.array([2048, 1, 1 + 2**-10, 2050, 2**-24, 0, NAN, -2**-24], np.float16)
    values, indices, _ = run(top(T(F16, [8]), 0, 8, "DECREASING"), x)
    assert indices.tolist() == [6, 3, 0, 2, 1, 4, 5, 7]
    assert _bits(values).tolist() == _bits(x[[6, 3, 0, 2, 1, 4, 5, 7]]).tolist()
    values, indices, _ = run(top(T(F16, [8]), 0, 3, "INCREASING"), x)
    assert indices.tolist() == [7, 5, 4]


def test_integers_past_float_precision(backend: str) -> None:
    """INT64 2^53 and 2^53 + 1 (one float64), UINT64 2^63 and 2^64 - 1 above 2^63 - 1 (no sign confusion),
    INT8's -128 the smallest; ties by index."""
    if not dml.Device().backend.supports_data_type(DT.INT64):
        return
    x = np.array([2**53, -5, 2**53 + 1, 2**53, -(2**63)], np.int64)
    values, indices, _ = run(top(T(DT.INT64, [5]), 0, 5, "DECREASING", U64), x)
    assert indices.tolist() == [2, 0, 3, 1, 4] and values.tolist() == [2**53 + 1, 2**53, 2**53, -5, -(2**63)]
    x = np.array([2**63, 2**63 - 1, 2**64 - 1, 0], np.uint64)
    values, indices, _ = run(top(T(U64, [4]), 0, 2), x)
    assert indices.tolist() == [2, 0] and values.tolist() == [2**64 - 1, 2**63]
    values, indices, _ = run(top(T(DT.INT8, [4]), 0, 2, "INCREASING"), np.array([5, -128, 127, -128], np.int8))
    assert indices.tolist() == [1, 3] and values.tolist() == [-128, -128]


def test_strides_and_zero_strides(backend: str) -> None:
    """A broadcast input (stride 0 along the axis: every element of a sequence the same, so the first K indices),
    a transposed input selected along its rows and columns into padded and transposed outputs."""
    row = np.array([[3], [1], [2]], np.float32)
    source = T(F32, [3, 5], [1, 0])
    values, indices = dispatch_and_check(top(source, 1, 3, "INCREASING"), np.repeat(row, 5, axis=1))
    assert indices.tolist() == [[0, 1, 2]] * 3 and values.tolist() == [[3] * 3, [1] * 3, [2] * 3]
    x = (np.arange(4 * 6) * 7 % 11).astype(np.int8).reshape(4, 6)
    transposed = T(DT.INT8, [4, 6], [1, 4])
    dispatch_and_check(top(transposed, 0, 3, "DECREASING", values=T(DT.INT8, [3, 6], [1, 5]),
                           indices=T(U32, [3, 6], [7, 1])), x)
    dispatch_and_check(top(transposed, 1, 4, values=T(DT.INT8, [4, 4], [5, 1])), x)
    x5 = (np.arange(2 * 3 * 2 * 4 * 2) % 5).astype(np.float16).reshape(2, 3, 2, 4, 2)
    dispatch_and_check(top(T(F16, x5.shape, [100, 30, 12, 3, 1]), 3, 2, "INCREASING"), x5)


# -- every support row ----------------------------------------------------------------------------------------------

#: Each page's table as the class lists it (OperatorDesc.support_tables), which test_the_tables_are_the_pages reads.
SUPPORT = {cls: cls.support_tables()[""] for cls in (TOP_K, TOP_K1)}
SUPPORT_ROWS = [(cls, support_row.level, data_type, index_type, rank)
                for cls in (TOP_K, TOP_K1) for support_row in SUPPORT[cls]
                for data_type in support_row.tensors["InputTensor"].data_types
                for index_type in support_row.tensors["OutputIndexTensor"].data_types
                for rank in {support_row.tensors["InputTensor"].min_rank, support_row.tensors["InputTensor"].max_rank}]
EIGHT = {F32, F16, DT.INT32, DT.INT16, DT.INT8, U32, DT.UINT16, DT.UINT8}


def _sizes(rank: int) -> list[int]:
    return [1] * (rank - 2) + [2, 3] if rank >= 2 else [3]


def test_the_tables_are_the_pages() -> None:
    """Both pages: 5_0 adds INT64 and UINT64 values and UINT64 indices (1 to 8 dimensions), 3_1 allows 1 to 8
    dimensions, 2_1 four dimensions of the eight narrower types; TOP_K alone has a 2_0 row (its Availability),
    FLOAT32 and FLOAT16."""
    for cls, levels in ((TOP_K, [FL.LEVEL_5_0, FL.LEVEL_3_1, FL.LEVEL_2_1, FL.LEVEL_2_0]),
                        (TOP_K1, [FL.LEVEL_5_0, FL.LEVEL_3_1, FL.LEVEL_2_1])):
        table = SUPPORT[cls]
        assert [support_row.level for support_row in table] == levels
        for support_row in table:
            wide = support_row.level == FL.LEVEL_5_0
            types = {F32, F16} if support_row.level == FL.LEVEL_2_0 else EIGHT | ({DT.INT64, U64} if wide else set())
            for name in ("InputTensor", "OutputValueTensor", "OutputIndexTensor"):
                tensor = support_row.tensors[name]
                assert set(tensor.data_types) == ({U32, U64} if wide else {U32}) if name == "OutputIndexTensor" \
                    else types
                low = support_row.level >= FL.LEVEL_3_1
                assert (tensor.min_rank, tensor.max_rank) == ((1, 8) if low else (4, 4))


def test_every_support_row_is_accepted_at_its_level() -> None:
    for cls, level, data_type, index_type, rank in SUPPORT_ROWS:
        direction = None if cls is TOP_K else "INCREASING"
        dml.Device(feature_level=level).create_operator(top(T(data_type, _sizes(rank)), rank - 1, 2, direction,
                                                            index_type))


def test_every_support_row_dispatches(backend: str, backend_name: str) -> None:
    """One dispatch of each row's every type at the row's level, both operators (numba's kernel, which compiles per
    input type, the representative types; the other backends every type)."""
    seen: set[tuple[type, FL, DT, DT]] = set()
    for cls, level, data_type, index_type, rank in SUPPORT_ROWS:
        key = (cls, level, data_type, index_type)
        if key in seen or not dml.Device().backend.supports_data_type(data_type) or (
                backend_name == "cpu" and data_type not in REPRESENTATIVE):
            continue
        seen.add(key)
        sizes = [1, 1, 2, 3] if rank == 4 else [2, 3]
        x = (np.arange(6) * 5 % 4).astype(data_type.numpy_dtype).reshape(sizes)
        direction = None if cls is TOP_K else "INCREASING"
        dispatch_and_check(top(T(data_type, sizes), len(sizes) - 1, 2, direction, index_type), x, level=level)


def test_each_operator_is_refused_below_its_level() -> None:
    for cls, first, below in ((TOP_K, "2_0", FL.LEVEL_1_0), (TOP_K1, "2_1", FL.LEVEL_2_0)):
        desc = top(X_TENSOR, 3, 2, None if cls is TOP_K else "DECREASING")
        with pytest.raises(dml.UnsupportedError, match=rf"{cls.OPERATOR_TYPE.dml_name} needs feature level "
                                                        rf"{first}; the device is at {below.name[6:]}"):
            dml.Device(feature_level=below).create_operator(desc)


@pytest.mark.parametrize(("direction", "data_type", "index_type", "sizes", "level", "field", "later"), [
    (None, DT.INT32, U32, [1, 1, 2, 3], FL.LEVEL_2_0, r"InputTensor.DataType INT32", "2_1"),
    ("DECREASING", DT.INT64, U32, [2, 3], FL.LEVEL_4_1, r"InputTensor.DataType INT64", "5_0"),
    (None, F32, U64, [2, 3], FL.LEVEL_4_1, r"OutputIndexTensor.DataType UINT64", "5_0"),
    ("INCREASING", F16, U32, [2, 3], FL.LEVEL_3_0, r"InputTensor.DimensionCount 2", "3_1"),
    (None, F16, U32, [1, 1, 1, 2, 3], FL.LEVEL_2_1, r"InputTensor.DimensionCount 5", "3_1")])
def test_a_row_s_types_and_ranks_need_its_level(direction: str | None, data_type: DT, index_type: DT,
                                               sizes: list[int], level: FL, field: str, later: str) -> None:
    desc = top(T(data_type, sizes), len(sizes) - 1, 2, direction, index_type)
    with pytest.raises(dml.UnsupportedError, match=rf"{desc.label}: {field} needs feature level {later}; the device "
                                                    rf"is at {level.name[6:]}"):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("data_type", "index_type", "field", "allowed"), [
    (DT.FLOAT64, U32, "InputTensor.DataType FLOAT64", "FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, "
                                                      "UINT16, UINT8"),
    (F32, DT.INT32, "OutputIndexTensor.DataType INT32", "UINT64, UINT32")])
def test_types_off_the_tables_are_refused(data_type: DT, index_type: DT, field: str, allowed: str) -> None:
    for direction in (None, "INCREASING"):
        desc = top(T(data_type, [2, 3]), 1, 2, direction, index_type)
        with pytest.raises(dml.ValidationError, match=rf"{desc.label}: {field} is not supported; at feature level "
                                                       rf"6_4 it must be one of {allowed}"):
            device().create_operator(desc)


# -- every type against the reference ---------------------------------------------------------------------------------

def _data(data_type: DT, sizes: Sequence[int], seed: int = 0) -> np.ndarray:
    """Values with many ties (a few distinct values), the type's extremes, and for floats NaN, infinities and both
    zeros."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(data_type.numpy_dtype)
    if dtype.kind == "f":
        pool = np.array([NAN, -NAN, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 3, 2**-14], dtype)
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2], dtype)
    return rng.choice(pool, size=tuple(sizes))


#: The types dispatched on cpu and gpu (a kernel compiles per type there); cpu-small dispatches every type.
REPRESENTATIVE = {F32, F16, DT.INT8, DT.UINT64}


def test_every_type_against_the_reference(backend: str, backend_name: str) -> None:
    sizes = [3, 2, 5]
    for data_type in TOP_K1_SUPPORT[0].tensors["InputTensor"].data_types:
        if (backend_name != "cpu-small" and data_type not in REPRESENTATIVE) or \
                not dml.Device().backend.supports_data_type(data_type):
            continue
        x = _data(data_type, sizes)
        for axis, k in ((0, 2), (2, 5), (2, 1)):
            for direction in ("INCREASING", "DECREASING"):
                dispatch_and_check(top(T(data_type, sizes), axis, k, direction, U64 if axis else U32), x)


def test_long_sequences_against_the_reference(backend: str) -> None:
    """Sequences of 300 (the numba kernel screens blocks of them by value against the K-th so far: blocks with and
    without a winner, NaN, infinities, both zeros and ties in the screen, ascending runs that insert at every
    element), contiguous and strided along the axis, both directions."""
    rng = np.random.default_rng(7)
    for data_type in (F32, F16, DT.INT8, DT.UINT64):
        if not dml.Device().backend.supports_data_type(data_type):
            continue
        x = _data(data_type, [3, 300], seed=3)
        x[1] = np.sort(x[1])                                  # ascending: NaNs last
        if x.dtype.kind != "f":
            x[2] = rng.permutation(300).astype(x.dtype)         # distinct values (INT8 wraps: ties again)
        for k, direction in ((5, "DECREASING"), (40, "INCREASING"), (1, None)):
            dispatch_and_check(top(T(data_type, [3, 300]), 1, k, direction), x)
            dispatch_and_check(top(T(data_type, [300, 3], [1, 300]), 0, k, direction), np.ascontiguousarray(x.T))


# -- hypothesis -----------------------------------------------------------------------------------------------------

@st.composite
def top_k_cases(draw: st.DrawFn, backend_name: str) -> tuple[TopKOperatorDesc, np.ndarray, int]:
    types = None if backend_name == "cpu-small" else REPRESENTATIVE
    desc = registered_descriptor(draw, [TOP_K, TOP_K1], [TOP, FL.LEVEL_3_1, FL.LEVEL_2_1], types)
    assert isinstance(desc, TopKOperatorDesc)
    seed = draw(st.integers(0, 2**16))
    return desc, _data(desc.input_tensor.data_type, desc.input_tensor.sizes, seed), seed


def test_hypothesis_against_the_reference(backend: str, backend_name: str) -> None:
    @settings(max_examples=25 if backend_name == "cpu-small" else 10, deadline=None, derandomize=True)
    @given(top_k_cases(backend_name))
    def check(case: tuple[TopKOperatorDesc, np.ndarray, int]) -> None:
        desc, x, seed = case
        if not dml.Device().backend.supports_data_type(desc.input_tensor.data_type):
            return
        dispatch_and_check(desc, x, seed=seed)

    check()


# -- bad descriptors ------------------------------------------------------------------------------------------------

K = "DML_OPERATOR_TOP_K"
K1 = "DML_OPERATOR_TOP_K1"
X23 = T(F32, [2, 3])
BAD = [
    (lambda: top(X23, 2, 1), rf"{K}: Axis is 2; it must be in \[0, 1\] for InputTensor of 2 dimensions"),
    (lambda: TOP_K(X23, T(F32, [2, 0 + 2]), T(U32, [2, 2]), 1, 0), rf"{K}: K is 0; it must be in \[1, 3\] "
                                                                   r"\(InputTensor.Sizes\[1\], the sequence length"),
    (lambda: TOP_K1(X23, T(F32, [2, 4]), T(U32, [2, 4]), 1, 4, "INCREASING"), rf"{K1}: K is 4; it must be in "
                                                                              r"\[1, 3\]"),
    (lambda: TOP_K(X23, T(F32, [2, 3]), T(U32, [2, 2]), 1, 2), rf"{K}: OutputValueTensor.Sizes is \[2, 3\]; it must "
                                                               r"be InputTensor's sizes with K along Axis 1: \[2, 2\]"),
    (lambda: TOP_K1(X23, T(F32, [2, 2]), T(U32, [1, 2]), 1, 2), rf"{K1}: OutputIndexTensor.Sizes is \[1, 2\]; it "
                                                                r"must be InputTensor's sizes with K along Axis 1"),
    (lambda: TOP_K(X23, T(F16, [2, 2]), T(U32, [2, 2]), 1, 2), rf"{K}: OutputValueTensor.DataType is FLOAT16; it "
                                                               r"must equal InputTensor.DataType \(FLOAT32\)"),
    (lambda: TOP_K(X23, T(F32, [1, 2, 2]), T(U32, [2, 2]), 1, 2), rf"{K}: OutputValueTensor.DimensionCount is 3; it "
                                                                  r"must equal InputTensor.DimensionCount \(2\)"),
    (lambda: TOP_K1(X23, T(F32, [2, 2]), T(U32, [2]), 1, 2), rf"{K1}: OutputIndexTensor.DimensionCount is 1; it "
                                                             r"must equal InputTensor.DimensionCount \(2\)"),
    (lambda: top(T(F32, [2] * 9), 1, 1), rf"{K}: InputTensor.DimensionCount is 9; it must be 1 to 8"),
]
BAD_FIELDS = [
    (lambda: top(X23, 1, 2, "UP"), rf"{K1}: AxisDirection is 'UP'; it must be one of INCREASING, DECREASING"),
    (lambda: TOP_K(X23, X23, X23, -1, 2), rf"{K}: Axis is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: TOP_K(X23, X23, X23, 1, 2.5), rf"{K}: K is 2.5; it must be an integer in \[0, 2\^32\)"),
    (lambda: TOP_K1([2, 3], X23, X23, 1, 2), rf"{K1}: InputTensor is \[2, 3\]; it must be a TensorDesc"),
    (lambda: TOP_K(X23, None, X23, 1, 2), rf"{K}: OutputValueTensor is None; it must be a TensorDesc"),
    (lambda: TOP_K1(X23, X23, "x", 1, 2), rf"{K1}: OutputIndexTensor is 'x'; it must be a TensorDesc"),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_bad_descriptors_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        device().create_operator(make())


@pytest.mark.parametrize(("make", "message"), BAD_FIELDS)
def test_bad_fields_are_refused_with_their_message(make: Any, message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        make()


def test_the_outputs_may_not_overlap_the_input() -> None:
    """Neither page allows in-place execution: an output bound over the input is refused."""
    dev = device()
    desc = top(T(F32, [4]), 0, 4)
    compiled = dev.compile_operator(dev.create_operator(desc))
    memory = np.zeros(64, np.uint8)
    with pytest.raises(dml.BindingError, match="OutputValueTensor"):
        compiled.execute([dml.Binding(memory)], [dml.Binding(memory), dml.Binding(memory, 32)])


def test_from_dml_reads_both_operators() -> None:
    tensor = {"DataType": "INT32", "Sizes": [2, 3]}
    out = {"DataType": "INT32", "Sizes": [2, 2]}
    index = {"DataType": "UINT32", "Sizes": [2, 2]}
    desc = dml.OperatorDesc.from_dml("DML_OPERATOR_TOP_K", {
        "InputTensor": tensor, "OutputValueTensor": out, "OutputIndexTensor": index, "Axis": 1, "K": 2})
    assert desc == TOP_K(T("INT32", [2, 3]), T("INT32", [2, 2]), T(U32, [2, 2]), 1, 2)
    desc = dml.OperatorDesc.from_dml("TOP_K1", {
        "InputTensor": tensor, "OutputValueTensor": out, "OutputIndexTensor": index, "Axis": 1, "K": 2,
        "AxisDirection": "DML_AXIS_DIRECTION_INCREASING"})
    assert desc == TOP_K1(T("INT32", [2, 3]), T("INT32", [2, 2]), T(U32, [2, 2]), 1, 2, "INCREASING")
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_TOP_K.*AxisDirection"):
        dml.OperatorDesc.from_dml("TOP_K", {"InputTensor": tensor, "OutputValueTensor": out,
                                            "OutputIndexTensor": index, "Axis": 1, "K": 2, "AxisDirection": 0})
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_TOP_K1.K"):
        dml.OperatorDesc.from_dml("TOP_K1", {"InputTensor": tensor, "OutputValueTensor": out,
                                             "OutputIndexTensor": index, "Axis": 1, "AxisDirection": 0})


# -- the graph API and Dask -----------------------------------------------------------------------------------------

def test_graph_function(backend: str) -> None:
    """dml.top_k: TOP_K without a direction, TOP_K1 with one; output sizes inferred (K along the axis), the values
    in x's type, the indices UINT32 or UINT64."""
    g = dml.Graph(device())
    x = g.input([3, 4], F32, name="x")
    largest = dml.top_k(x, -1, 2)
    smallest = dml.top_k(x, 0, 2, "INCREASING", index_data_type="UINT64")
    assert isinstance(largest, dml.TopKOutputs)
    assert [(o.sizes, o.dtype) for o in (*largest, *smallest)] == [((3, 2), F32), ((3, 2), U32), ((2, 4), F32),
                                                                    ((2, 4), U64)]
    got = g.compile([*largest, smallest.values, smallest.indices])({"x": X[0, 0]})
    assert [np.asarray(o).tolist() for o in got] == [
        [[11, 10], [9, 8], [7, 6]], [[3, 2], [2, 3], [3, 2]], [[0, 1, 6, 7], [3, 2, 9, 8]], [[0, 0, 2, 2],
                                                                                            [1, 1, 1, 1]]]
    assert [type(o.node.operator.desc) for o in (largest.indices, smallest.indices)] == [TOP_K, TOP_K1]  # type: ignore


def test_graph_messages() -> None:
    g = dml.Graph(device())
    x = g.input([3, 4], F32)
    with pytest.raises(dml.ValidationError, match=r"dml.top_k: axis is -3; it must be an integer in \[-2, 1\] "
                                                   r"\(x has 2 dimensions"):
        dml.top_k(x, -3, 1)
    with pytest.raises(dml.ValidationError, match=rf"{K}: Axis is 2; it must be in \[0, 1\]"):
        dml.top_k(x, 2, 1)
    with pytest.raises(dml.ValidationError, match=rf"{K1}: K is 5; it must be in \[1, 4\]"):
        dml.top_k(x, 1, 5, "DECREASING")
    with pytest.raises(dml.ValidationError, match=rf"{K}: K is 'two'; it must be an integer"):
        dml.top_k(x, 1, "two")  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=r"dml.top_k: axis_direction is 'UP'; it must be one of "
                                                   r"INCREASING, DECREASING"):
        dml.top_k(x, 1, 1, "UP")
    with pytest.raises(dml.ValidationError, match=r"dml.top_k: x is \[1, 2\]; it must be a dml.Expression"):
        dml.top_k([1, 2], 0, 1)  # type: ignore[arg-type]
    with pytest.raises(dml.ValidationError, match=rf"{K}: OutputIndexTensor.DataType INT32 is not supported"):
        dml.top_k(x, 1, 1, index_data_type="INT32")


@backends("cpu")
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT8", "UINT64"])
def test_dask_tree_of_chunks_is_the_device_s(data_type: str, backend: str) -> None:
    """Chunks of 2 x 3 over a 5 x 7 input with ties, NaN and both zeros: each chunk's top-k along the axis, then the
    candidates joined and selected again, give the device's values and indices bit for bit, both directions, K
    from 1 to the axis's size."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device())
    x = g.input([5, 7], data_type, name="x")
    outputs = [output for axis, k in ((0, 1), (0, 5), (1, 3), (1, 7)) for direction in (None, "INCREASING")
               for output in dml.top_k(x, axis, k, direction)]
    compiled = g.compile(outputs)
    data = _data(DT[data_type], [5, 7], seed=5)
    on_device = compiled({"x": data})
    on_dask = compiled({"x": da.from_array(data, chunks=(2, 3))})
    for one, chunked in zip(on_device, on_dask, strict=True):
        assert np.array_equal(_bits(np.asarray(one)), _bits(chunked.compute()))


@backends("cpu")
def test_dask_tree_runs_the_node_s_own_operator(backend: str) -> None:
    """On a device at 2_0, where TOP_K1 does not exist yet, a TOP_K node's chunks run TOP_K (the differential
    fuzzer's find: they ran TOP_K1 and were refused)."""
    da = pytest.importorskip("dask.array")
    g = dml.Graph(device(FL.LEVEL_2_0))
    x = g.input([1, 1, 3, 7], F32, name="x")
    compiled = g.compile(list(dml.top_k(x, 3, 2)))
    data = _data(F32, [1, 1, 3, 7], seed=2)
    on_dask = compiled({"x": da.from_array(data, chunks=(1, 1, 2, 3))})
    for one, chunked in zip(compiled({"x": data}), on_dask, strict=True):
        assert np.array_equal(_bits(np.asarray(one)), _bits(chunked.compute()))


def test_a_json_model_through_the_cli(backend: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A DxDispatch model with a TOP_K1 dispatchable (INCREASING, K = 3 of {3, 1, 4, 1, 5}): the two smallest are
    the 1s at 1 and 3 (ties by index), then 3 at 0."""
    import json

    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 5]}
    model = {
        "resources": {"A": {"initialValuesDataType": "FLOAT32", "initialValues": [3, 1, 4, 1, 5]},
                      "V": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 0}},
                      "I": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 3, "value": 0}}},
        "dispatchables": {"top": {"type": "DML_OPERATOR_TOP_K1", "desc": {
            "InputTensor": tensor, "OutputValueTensor": {**tensor, "Sizes": [1, 1, 1, 3]},
            "OutputIndexTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 3]}, "Axis": 3, "K": 3,
            "AxisDirection": "DML_AXIS_DIRECTION_INCREASING"}}},
        "commands": [{"type": "dispatch", "dispatchable": "top",
                      "bindings": {"InputTensor": "A", "OutputValueTensor": "V", "OutputIndexTensor": "I"}},
                     {"type": "print", "resource": "V"}, {"type": "print", "resource": "I"}]}
    path = tmp_path / "top_k.json"
    path.write_text(json.dumps(model))
    status, out, err = _cli(capsys, "dispatch", "--backend", backend, path)
    assert (status, out, err) == (0, ["Resource 'V': 1, 1, 3", "Resource 'I': 1, 3, 0"], [])
