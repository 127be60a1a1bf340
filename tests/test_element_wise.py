"""The ELEMENT_WISE family (issue 26), table-driven: every operator x every data-type combination of its page's support
table against the independent element-wise reference of tests/reference.py, on small tensors whose values cover the
edge cases (NaN, infinities, signed zeros, subnormals, the largest finite values, INT_MIN, zero divisors, shift
counts at and beyond the width); each lower row's level boundary (a descriptor the row introduces is accepted at its
level and refused one level below, by an UnsupportedError naming the level); the pages' examples
(tests/elementwise_examples_*.py) and hand-worked goldens of the rulings; hypothesis over shapes and strides (zero
strides, padding, transposition) for a representative operator of each kind; bad descriptors with message regexes;
sentinel bytes around strided 8/16-bit outputs; in-place execution where the page allows it.

Comparisons: integer and boolean outputs exactly; float outputs bit for bit (any NaN for NaN; MIN, MAX and the
clamps give the canonical quiet NaN and may give either zero), the transcendentals (and POW, ATAN_YX, a fused
activation) within 4 FLOAT32 ulps of the float64 reference, or 1 FLOAT16 ulp of the reference rounded once.

Compile time: the full table (`test_table`, 577 descriptors) runs on `cpu-small` only (the NumPy rendering: nothing
to compile; the whole module takes ~3 s there on one core). On `cpu` every distinct (operator, data types) compiles a
numba kernel and on `gpu` a WGSL pipeline, so there `test_table_representative` runs one combination per operator and
kind of data (float, 8-32-bit integer, 64-bit integer) and a few variants: 122 descriptors (REPRESENTATIVE), and the
hypothesis test draws its types among those. Measured (2026-11-27, 2 shared cores): on `cpu` the 122 compile in 74 s
with numba's cache cold (~0.6 s each: the full table would add ~6 minutes) and run in 1.8 s warm; the module's 398 `cpu`
tests take ~20 s after that, its 400 `gpu` tests (lavapipe) 7 s, its 1478 `cpu-small` tests 3-4 s.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest
from elementwise_examples_binary import EXAMPLES as BINARY_EXAMPLES
from elementwise_examples_unary import EXAMPLES as UNARY_EXAMPLES
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import ELEMENT_WISE_BITWISE, reference_element_wise
from strategies import (
    T,
    build_buffer,
    execute_between_sentinels,
    read_buffer,
    shapes,
    strides_for,
)

import opendml as dml
from opendml.ops.elementwise import CLASSES, ElementWiseOperatorDesc

DT = dml.DataType
FL = dml.FeatureLevel
LEVELS = list(FL)
TOP = FL.LEVEL_6_4
BY_NAME: dict[str, type[ElementWiseOperatorDesc]] = {
    cls.OPERATOR_TYPE.name.removeprefix("ELEMENT_WISE_"): cls for cls in CLASSES.values()}

# The operators whose float results are compared within ulps of the float64 reference (the others bit for bit).
APPROXIMATE = {"ACOS", "ASIN", "ATAN", "COS", "EXP", "LOG", "SIN", "SQRT", "TAN", "ERF", "SINH", "COSH", "TANH",
               "ASINH", "ACOSH", "ATANH", "CONSTANT_POW", "POW", "ATAN_YX"}
ULPS = {np.dtype(np.float32): 4, np.dtype(np.float16): 1, np.dtype(np.float64): 0}
# The operators built on minimum/maximum: a NaN result is the canonical quiet NaN, and -0 / +0 may be either.
CLAMPS = {"MIN", "MAX", "CLIP", "CLIP1", "THRESHOLD"}
# The fused activations whose one rounding the reference reproduces exactly (LINEAR's Alpha x + Beta rounds twice).
PIECEWISE_LINEAR = (dml.ActivationReluOperatorDesc, dml.ActivationLeakyReluOperatorDesc)
CANONICAL_NAN = {np.dtype(np.float32): 0x7FC00000, np.dtype(np.float16): 0x7E00,
                 np.dtype(np.float64): 0x7FF8000000000000}


def _at(level: str) -> dml.FeatureLevel:
    return dml.FeatureLevel.parse(level)


@cache
def device(backend: str, level: dml.FeatureLevel = TOP) -> dml.Device:
    return dml.Device(feature_level=level, backend=backend)


def backends(*names: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Runs the decorated test on these backends only (conftest's `backend` parametrization reads the attribute)."""
    def mark(test: Callable[..., None]) -> Callable[..., None]:
        test.backends = names  # type: ignore[attr-defined]
        return test
    return mark


# -- building descriptors -------------------------------------------------------------------------------------------

def default_scalars(name: str, data_type: dml.DataType) -> dict[str, Any]:
    """Scalar fields (snake case) for a table case: Min -1.5 / Max 2.5 (CLIP; CLIP1 in the tensor's type), THRESHOLD's
    Min 1.5, CONSTANT_POW's Exponent 3, ScaleBias absent."""
    if name == "CLIP":
        return {"scale_bias": None, "min": -1.5, "max": 2.5}
    if name == "CLIP1":
        if data_type.is_float:
            low, high = -1.5, 2.5
        else:
            low, high = (-3, 100) if np.iinfo(data_type.numpy_dtype).min < 0 else (2, 100)
        return {"scale_bias": None, "min_max_data_type": data_type, "min": low, "max": high}
    if name == "THRESHOLD":
        return {"scale_bias": None, "min": 1.5}
    if name == "CONSTANT_POW":
        return {"scale_bias": None, "exponent": 3.0}
    return {}


def make(name: str, types: dict[str, dml.DataType], sizes: Sequence[int],
         strides: dict[str, Sequence[int] | None] | None = None, absent: Sequence[str] = (),
         **scalars: Any) -> ElementWiseOperatorDesc:
    """The operator's descriptor: each tensor field (DML name) of `types` over `sizes` (at `strides`, packed where
    not given); the fields in `absent` left None."""
    cls = BY_NAME[name]
    strides = strides or {}
    kwargs: dict[str, Any] = {}
    for field in cls.INFO.tensor_fields():
        if field in absent:
            kwargs[_snake(field)] = None
            continue
        given = strides.get(field)
        kwargs[_snake(field)] = T(types[field], list(sizes), None if given is None else list(given))
    first = types[cls.INFO.inputs[0][0]]
    kwargs.update({**default_scalars(name, first), **scalars})
    return cls(**kwargs)


def _snake(field: str) -> str:
    return {"ATensor": "a_tensor", "BTensor": "b_tensor"}.get(field) or "".join(
        ("_" + c.lower()) if c.isupper() and i else c.lower() for i, c in enumerate(field))


def reference_fields(desc: ElementWiseOperatorDesc) -> dict[str, object]:
    """The descriptor's scalar fields as plain data for tests/reference.py (DML names; enums by member name)."""
    fields: dict[str, object] = {}
    for field, _ in desc.INFO.scalars:
        value = getattr(desc, _snake(field))
        if field == "ScaleBias":
            value = None if value is None else (value.scale, value.bias)
        elif field == "FusedActivation":
            value = None if value is None else (value.OPERATOR_TYPE.name.removeprefix("ACTIVATION_"),
                                                tuple(value.parameters().values()))
        elif field in ("RoundingMode", "InfinityMode", "MinMaxDataType"):
            value = value.name
        fields[field] = value
    return fields


def expected_of(desc: ElementWiseOperatorDesc, arrays: Sequence[np.ndarray | None]) -> np.ndarray:
    name = desc.OPERATOR_TYPE.name.removeprefix("ELEMENT_WISE_")
    inputs = {variable: array for (_, variable), array in zip(desc.INFO.inputs, arrays, strict=True)}
    return reference_element_wise(name, inputs, desc.output_tensor.data_type.numpy_dtype, reference_fields(desc))


# -- comparing -------------------------------------------------------------------------------------------------------

def _ordinal(values: np.ndarray) -> np.ndarray:
    """Float bits mapped to integers in the floats' order (-0 and +0 both 0): ulp distances are differences."""
    bits = values.view(f"u{values.dtype.itemsize}").astype(np.int64)
    sign = np.int64(1) << (values.dtype.itemsize * 8 - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def assert_matches(name: str, got: np.ndarray, expected: np.ndarray, what: str, *, ulps: int | None = None,
                   inputs: Sequence[np.ndarray | None] = ()) -> None:
    """`got` against the reference: exactly, or within the operator's ulps (see the module doc)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, (what, got.dtype, got.shape, expected.shape)
    if got.dtype.kind != "f" or name in ELEMENT_WISE_BITWISE:
        bits = f"u{got.dtype.itemsize}"
        bad = got.reshape(-1).view(bits) != expected.reshape(-1).view(bits)
        if name == "POW" and inputs and inputs[0] is not None and inputs[0].dtype.kind != "f" and \
                inputs[1] is not None and inputs[1].dtype.kind == "f":
            # an integer base with a float exponent: pow (within ulps) truncated: one unit either way
            bad = np.abs(got.reshape(-1).astype(object) - expected.reshape(-1).astype(object)) > 1
        _report(bad, got, expected, what, inputs)
        return
    flat, want = got.reshape(-1), expected.reshape(-1)
    nan_got, nan_want = np.isnan(flat), np.isnan(want)
    bad = nan_got != nan_want
    if name in CLAMPS:
        bits = flat.view(f"u{flat.dtype.itemsize}")
        bad |= nan_want & (bits != CANONICAL_NAN[flat.dtype])
    both = ~nan_got & ~nan_want
    if ulps is None:
        ulps = ULPS[got.dtype] if name in APPROXIMATE else 0
    if ulps:
        bad |= both & (np.abs(_ordinal(flat) - _ordinal(want)) > ulps)
        bad |= both & (np.isinf(flat) != np.isinf(want)) & (np.abs(_ordinal(flat) - _ordinal(want)) > 1)
    elif name in CLAMPS:
        bad |= both & (flat != want)
    else:
        bits = f"u{flat.dtype.itemsize}"
        bad |= both & (flat.view(bits) != want.view(bits))
    _report(bad, got, expected, what, inputs)


def check_element_wise(desc: ElementWiseOperatorDesc, inputs: Sequence[np.ndarray | None], got: np.ndarray) -> None:
    """Any element-wise dispatch's logical output against the reference (the oracle of test_fuzz_descriptors'
    check_outputs, so of the differential fuzzer and test_outputs): as the table compares it; ADD1's fused
    activation (but RELU and LEAKY_RELU, rounded once as the reference) by the standalone activations' oracle on
    the FLOAT32 sum for FLOAT32, within 1 FLOAT16 ulp for FLOAT16."""
    name = desc.OPERATOR_TYPE.name.removeprefix("ELEMENT_WISE_")
    activation = getattr(desc, "fused_activation", None)
    if activation is not None and not isinstance(activation, PIECEWISE_LINEAR):
        a, b = inputs
        assert a is not None and b is not None
        if got.dtype == np.float32:
            from test_activation_standalone import check_standalone

            with np.errstate(all="ignore"):
                check_standalone(activation, a.astype(np.float32) + b.astype(np.float32), got)
            return
        assert_matches(name, got, expected_of(desc, inputs), desc.label, ulps=ULPS[got.dtype], inputs=inputs)
        return
    assert_matches(name, got, expected_of(desc, inputs), desc.label, inputs=inputs)


def _report(bad: np.ndarray, got: np.ndarray, expected: np.ndarray, what: str,
            inputs: Sequence[np.ndarray | None]) -> None:
    if not bad.any():
        return
    rows = []
    for index in np.flatnonzero(bad)[:6]:
        values = [None if x is None else x.reshape(-1)[index].item() for x in inputs]
        rows.append(f"inputs {values}: got {got.reshape(-1)[index].item()!r}, expected "
                    f"{expected.reshape(-1)[index].item()!r}")
    raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements differ:\n  " + "\n  ".join(rows))


# -- values covering the edge cases ----------------------------------------------------------------------------------

def float_pool(dtype: np.dtype, short: bool) -> np.ndarray:
    """Edge values of a float type, ending with a negative NaN with a payload (a result of MIN, MAX or a clamp must
    still be the canonical NaN)."""
    info = np.finfo(dtype)
    sub, tiny, top = float(info.smallest_subnormal), float(info.tiny), float(info.max)
    values = [math.nan, math.inf, -math.inf, 0.0, -0.0, sub, -top, top, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -1e-3,
              1e30] if short else [
        math.nan, math.inf, -math.inf, 0.0, -0.0, sub, -sub, tiny, -tiny, top, -top, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5,
        -2.5, 0.25, -0.75, 0.999, 3.0, -7.25, 10.0, 88.5, -100.0, 1e4, 1e30, 1e-5, 3.14159265, 1.5707964]
    with np.errstate(over="ignore"):   # 1e30 is infinity in FLOAT16
        array = np.array([*values, math.nan], np.float64).astype(dtype)
    bits = array.view(f"u{dtype.itemsize}")
    bits[-1] = CANONICAL_NAN[np.dtype(dtype)] | (1 << (dtype.itemsize * 8 - 1)) | 0x13
    return array


def int_pool(dtype: np.dtype, short: bool) -> np.ndarray:
    info = np.iinfo(dtype)
    width = dtype.itemsize * 8
    low, high = int(info.min), int(info.max)
    values = [0, 1, -1, 2, -3, 7, low, high, low + 1, width - 1, width, width + 1, 100] if short else [
        0, 1, -1, 2, -2, 3, 5, -7, low, low + 1, high, high - 1, width - 1, width, width + 1, 100, -100, 127, 128,
        255, 256, 2**31 - 1, -(2**31), 2**40 + 3]
    return np.array(sorted({v for v in values if low <= v <= high}, key=values.index), dtype=object).astype(dtype)


def pool(data_type: dml.DataType, short: bool) -> np.ndarray:
    dtype = data_type.numpy_dtype
    return float_pool(dtype, short) if data_type.is_float else int_pool(dtype, short)


SCALES = [1.0, 0.5, 2.0, 0.1, -1.5, 1e-3, 3.0]


def case_values(name: str, types: dict[str, dml.DataType]) -> list[np.ndarray | None]:
    """One 1-d array per input field (in the struct's order): every combination of the pools (a grid)."""
    cls = BY_NAME[name]
    fields = [field for field, _ in cls.INFO.inputs]
    short = len(fields) > 1
    pools: list[np.ndarray] = []
    for field in fields:
        dtype = types[field].numpy_dtype
        if field == "ScaleTensor":
            pools.append(np.array(SCALES, dtype))
        elif field == "ConditionTensor":
            pools.append(np.array([0, 1, 2, 255], dtype))
        elif field == "ZeroPointTensor":
            info = np.iinfo(dtype)
            pools.append(np.array(sorted({0, 1, 100, int(info.min), int(info.max), max(int(info.min), -3)}),
                                  dtype=object).astype(dtype))
        else:
            pools.append(pool(types[field], short))
    grid = np.array(list(itertools.product(*(range(p.size) for p in pools))), np.int64).reshape(-1, len(pools))
    return [p[grid[:, i]] for i, p in enumerate(pools)]


# -- the cases of each table -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    types: tuple[tuple[str, dml.DataType], ...]   # (tensor field, data type), inputs first
    level: dml.FeatureLevel                       # the row whose combination this is
    rank: int
    absent: tuple[str, ...] = ()                  # optional inputs left None
    scalars: tuple[tuple[str, Any], ...] = ()     # scalar fields (snake case) other than default_scalars'

    @property
    def id(self) -> str:
        distinct = list(dict.fromkeys(data_type.name for _, data_type in self.types))
        types = "-".join(distinct) if len(distinct) == 1 else ",".join(t.name for _, t in self.types)
        return f"{self.name}-{types}" + "".join(f"-no{field}" for field in self.absent) + "".join(
            f"-{_scalar_id(value)}" for _, value in self.scalars)


def _scalar_id(value: Any) -> str:
    if isinstance(value, dml.ScaleBias):
        return f"ScaleBias({value.scale:g},{value.bias:g})"
    if isinstance(value, dml.OperatorDesc):
        return value.OPERATOR_TYPE.name
    return str(getattr(value, "name", value))


def combinations(name: str, row: Any, level: dml.FeatureLevel) -> list[tuple[tuple[str, dml.DataType], ...]]:
    """Every assignment of the row's types to the tensors that the page's constraints allow: a `same_type` group
    shares one type, QUANTIZE_LINEAR's ScaleTensor is FLOAT32 for an INT32 input and the input's type otherwise,
    POW's exponent has the input's type below 3_0."""
    info = BY_NAME[name].INFO
    fields = list(info.tensor_fields())
    groups = [list(group) for group in info.same_type]
    grouped = {field for group in groups for field in group}
    units = groups + [[field] for field in fields if field not in grouped]
    result = []
    for choice in itertools.product(*(row[unit[0]].data_types for unit in units)):
        types = {field: data_type for unit, data_type in zip(units, choice, strict=True) for field in unit}
        if any(types[field] not in row[field].data_types for field in fields):
            continue
        if name == "QUANTIZE_LINEAR" and types["ScaleTensor"] != (
                DT.FLOAT32 if types["InputTensor"] == DT.INT32 else types["InputTensor"]):
            continue
        if name == "POW" and level < FL.LEVEL_3_0 and types["ExponentTensor"] != types["InputTensor"]:
            continue
        result.append(tuple((field, types[field]) for field in fields))
    return result


def _rows(name: str) -> list[Any]:
    return sorted(BY_NAME[name].INFO.support, key=lambda row: row.level)


def table_cases() -> list[Case]:
    """Every combination of the highest row, at its level, in a tensor of the row's smallest rank."""
    cases = []
    for name in BY_NAME:
        top = _rows(name)[-1]
        rank = next(iter(top.tensors.values())).min_rank
        cases += [Case(name, types, top.level, rank) for types in combinations(name, top.tensors, top.level)]
        for field in BY_NAME[name].INFO.optional:   # the quantizers without a zero point: 0
            cases += [Case(name, types, top.level, rank, (field,))
                      for types in combinations(name, top.tensors, top.level)]
        floats = [types for types in combinations(name, top.tensors, top.level) if types[0][1].is_float]
        for scalars in VARIANTS.get(name, []) + [(("scale_bias", SCALE_BIAS),)] * any(
                kind == "SCALE_BIAS" for _, kind in BY_NAME[name].INFO.scalars):
            cases += [Case(name, types, top.level, rank, (), scalars) for types in floats]
    return cases


SCALE_BIAS = dml.ScaleBias(-0.5, 0.25)   # x * -0.5 is exact (but for the smallest subnormals), + 0.25 rounds once
#: The enum fields' other values and fused activations, each a case of every float combination.
VARIANTS: dict[str, list[tuple[tuple[str, Any], ...]]] = {
    "ROUND": [(("rounding_mode", mode),) for mode in ("TOWARD_ZERO", "TOWARD_INFINITY")],
    "IS_INFINITY": [(("infinity_mode", mode),) for mode in ("POSITIVE", "NEGATIVE")],
    "ADD1": [(("fused_activation", activation),) for activation in (
        dml.ActivationReluOperatorDesc(), dml.ActivationSigmoidOperatorDesc(),
        dml.ActivationLeakyReluOperatorDesc(0.25), dml.ActivationLinearOperatorDesc(-2.0, 0.5))],
}


def boundary_cases() -> list[Case]:
    """Per row, the combinations (and the smallest dimension count) it introduces: new against the row below (all of
    them for the lowest row)."""
    cases = []
    for name in BY_NAME:
        below: Any = None
        for row in _rows(name):
            ranks = next(iter(row.tensors.values()))
            old = set(combinations(name, below.tensors, below.level)) if below is not None else set()
            new = [types for types in combinations(name, row.tensors, row.level) if types not in old]
            old_ranks = next(iter(below.tensors.values())) if below is not None else None
            rank = ranks.min_rank if old_ranks is None or ranks.min_rank < old_ranks.min_rank else \
                max(ranks.min_rank, old_ranks.min_rank)
            cases += [Case(name, types, row.level, rank) for types in new]
            if name.endswith("QUANTIZE_LINEAR") and row.level == FL.LEVEL_6_2:
                # the 6_2 rows' ZeroPointTensor is an "Optional input" (a plain input below)
                cases.append(Case(name, combinations(name, row.tensors, row.level)[0], row.level, rank,
                                  ("ZeroPointTensor",)))
            if old_ranks is not None and ranks.min_rank < old_ranks.min_rank:
                # the row's new dimension counts, with a combination both rows accept
                shared = [types for types in combinations(name, row.tensors, row.level) if types in old]
                cases.append(Case(name, shared[0], row.level, ranks.min_rank))
            below = row
    return cases


TABLE = table_cases()
BOUNDARIES = boundary_cases()


def _representative() -> list[Case]:
    """Per operator, the first combination of each kind of its highest row: float, 8-32-bit integer, 64-bit."""
    chosen: dict[tuple[str, str], Case] = {}
    for case in TABLE:
        first = case.types[0][1]
        kind = "float" if first.is_float else "wide" if first.bits == 64 else "integer"
        if case.scalars:   # one case with other scalar fields, for a few operators only
            if case.name not in ("EXP", "CLIP", "POW", "ROUND", "ADD1"):
                continue
            kind += "-variant"
        chosen.setdefault((case.name, kind), case)
    return list(chosen.values())


REPRESENTATIVE = _representative()


def run_case(case: Case, backend: str, level: dml.FeatureLevel = TOP) -> None:
    types = dict(case.types)
    arrays = [None if field in case.absent else x for (field, _), x in
              zip(BY_NAME[case.name].INFO.inputs, case_values(case.name, types), strict=True)]
    size = arrays[0].size if arrays[0] is not None else 1
    scalars = dict(case.scalars)
    desc = make(case.name, types, [1] * (case.rank - 1) + [size], absent=case.absent, **scalars)
    dev = device(backend, level)
    shaped = [None if x is None else x.reshape(desc.output_tensor.sizes) for x in arrays]
    (got,) = dev.compile_operator(dev.create_operator(desc))(*shaped)
    # a fused activation other than the piecewise-linear ones: within the transcendentals' ulps
    activation = scalars.get("fused_activation")
    ulps = ULPS[got.dtype] if activation is not None and not isinstance(activation, PIECEWISE_LINEAR) else None
    assert_matches(case.name, got, expected_of(desc, shaped), f"{case.id} on {backend}", ulps=ulps, inputs=shaped)


@backends("cpu-small")
@pytest.mark.parametrize("case", TABLE, ids=[case.id for case in TABLE])
def test_table(case: Case, backend: str) -> None:
    """Every combination of the highest row against the reference (the edge values of each type, in a grid)."""
    run_case(case, backend)


@backends("cpu", "gpu")
@pytest.mark.parametrize("case", REPRESENTATIVE, ids=[case.id for case in REPRESENTATIVE])
def test_table_representative(case: Case, backend: str) -> None:
    run_case(case, backend)


def _just_below(level: dml.FeatureLevel) -> dml.FeatureLevel:
    return LEVELS[LEVELS.index(level) - 1]


@backends("cpu-small")
@pytest.mark.parametrize("case", BOUNDARIES, ids=[f"{case.id}-{case.level}-rank{case.rank}" for case in BOUNDARIES])
def test_level_boundary(case: Case, backend: str) -> None:
    """A combination a row introduces is accepted at the row's level and refused one level below, naming it."""
    types = dict(case.types)
    desc = make(case.name, types, [2] * case.rank, absent=case.absent)
    device(backend, case.level).create_operator(desc)
    if case.level == LEVELS[0]:
        return
    below = _just_below(case.level)
    with pytest.raises(dml.UnsupportedError, match=rf"DML_OPERATOR_ELEMENT_WISE_{case.name}\b.* needs feature level "
                                                   rf"{case.level}; the device is at {below}"):
        device(backend, below).create_operator(desc)


def test_every_operator_and_row_is_covered() -> None:
    assert len(BY_NAME) == 62
    assert {case.name for case in TABLE} == set(BY_NAME)
    assert {(case.name, case.level) for case in BOUNDARIES} == {(name, row.level) for name in BY_NAME
                                                                for row in _rows(name)}
    assert {case.name for case in REPRESENTATIVE} == set(BY_NAME)


# -- goldens: the pages' examples and the rulings, worked out by hand ------------------------------------------------

EXAMPLES = [*UNARY_EXAMPLES, *BINARY_EXAMPLES]


def _example_case(example: dict[str, Any]) -> tuple[ElementWiseOperatorDesc, list[np.ndarray | None], np.ndarray]:
    name = str(example["operator"])
    out_type, sizes, values = example["output"]
    inputs: dict[str, tuple[str, Any, Any]] = example["inputs"]
    types = {field: DT[type_name] for field, (type_name, _, _) in inputs.items()} | {"OutputTensor": DT[out_type]}
    scalars = {_snake(field): value for field, value in dict(example["fields"]).items()}
    desc = make(name, types, list(sizes), **scalars)
    arrays: list[np.ndarray | None] = [
        np.array(inputs[field][2], DT[inputs[field][0]].numpy_dtype).reshape(sizes) for field, _ in desc.INFO.inputs]
    return desc, arrays, np.array(values, DT[out_type].numpy_dtype).reshape(sizes)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e['operator']}-{i}" for i, e in enumerate(EXAMPLES)])
def test_page_examples(example: dict[str, Any], backend: str) -> None:
    desc, arrays, expected = _example_case(example)
    dev = device(backend)
    (got,) = dev.compile_operator(dev.create_operator(desc))(*arrays)
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


NAN, INF = math.nan, math.inf
I32_MIN, I64_MIN = -(2**31), -(2**63)
# (operator, {tensor field: type} (one type: every tensor), inputs in the struct's order, scalar fields, expected).
# Each expected value is worked out by hand from the page's formula and README's rulings.
GOLDENS: list[tuple[str, str | dict[str, str], list[list[Any]], dict[str, Any], list[Any]]] = [
    # truncating division; by zero 0; INT_MIN / -1 wraps to INT_MIN
    ("DIVIDE", "INT32", [[7, -7, 7, -7, I32_MIN, 5, 0], [2, 2, -2, -2, -1, 0, 0]], {}, [3, -3, -3, 3, I32_MIN, 0, 0]),
    ("DIVIDE", "UINT8", [[255, 7, 0], [2, 0, 0]], {}, [127, 0, 0]),
    ("DIVIDE", "FLOAT32", [[1.0, -1.0, 0.0, 1.0], [0.0, 0.0, 0.0, -0.0]], {}, [INF, -INF, NAN, -INF]),
    # C's % (the dividend's sign) and Python's % (the divisor's sign); by zero 0; INT_MIN % -1 is 0
    ("MODULUS_TRUNCATE", "INT32", [[7, -7, 7, -7, I32_MIN, 5], [3, 3, -3, -3, -1, 0]], {}, [1, -1, 1, -1, 0, 0]),
    ("MODULUS_FLOOR", "INT32", [[7, -7, 7, -7, I32_MIN, 5], [3, 3, -3, -3, -1, 0]], {}, [1, 2, -2, -1, 0, 0]),
    ("MODULUS_FLOOR", "FLOAT32", [[7.5, -7.5, 7.5, -7.5], [2.0, 2.0, -2.0, -2.0]], {}, [1.5, 0.5, -0.5, -1.5]),
    # a zero remainder takes the divisor's sign, as Python's % (-4.0 % 2.0 == 0.0, 4.0 % -2.0 == -0.0)
    ("MODULUS_FLOOR", "FLOAT32", [[-4.0, 4.0, -0.0, 0.0], [2.0, -2.0, 3.0, -3.0]], {}, [0.0, -0.0, 0.0, -0.0]),
    ("MODULUS_TRUNCATE", "FLOAT32", [[7.5, -7.5, 1.0], [2.0, 2.0, 0.0]], {}, [1.5, -1.5, NAN]),
    # wrapping + - *: 127 + 1, -128 - 1 (as -128 + -1), 100 + 100 = 200 - 256; 300 * 300 = 90000 - 65536;
    # 65535^2 = 4294836225 = 65535 * 65536 + 1
    ("ADD", "INT8", [[127, -128, 100], [1, -1, 100]], {}, [-128, 127, -56]),
    ("SUBTRACT", "UINT32", [[0, 5], [1, 7]], {}, [4294967295, 4294967294]),
    ("MULTIPLY", "UINT16", [[300, 65535], [300, 65535]], {}, [24464, 1]),
    ("NEGATE", "INT8", [[-128, 127, 0]], {}, [-128, -127, 0]),
    ("NEGATE", "FLOAT32", [[0.0, -0.0, INF]], {}, [-0.0, 0.0, -INF]),
    ("ABS", "INT32", [[I32_MIN, -5, 5]], {}, [I32_MIN, 5, 5]),
    # (a + b) / 2 exactly, truncated: 2^31 - 1 twice does not overflow; -3 / 2 = -1
    ("MEAN", "INT32", [[2147483647, -3, 3], [2147483647, 0, 0]], {}, [2147483647, -1, 1]),
    ("DIFFERENCE_SQUARE", "UINT32", [[0, 5], [1, 3]], {}, [1, 4]),   # (0 - 1)^2 = (2^32 - 1)^2 wraps to 1
    ("DIFFERENCE_SQUARE", "INT32", [[65536, -3], [0, 4]], {}, [0, 49]),   # 2^32 wraps to 0
    # shifts: by the width or more give 0
    ("BIT_SHIFT_LEFT", "UINT8", [[1, 1, 1, 255, 3], [7, 8, 9, 1, 0]], {}, [128, 0, 0, 254, 3]),
    ("BIT_SHIFT_RIGHT", "UINT32", [[2**31] * 4, [31, 32, 33, 0]], {}, [1, 0, 0, 2**31]),
    ("BIT_SHIFT_LEFT", "UINT64", [[1, 1, 3], [63, 64, 63]], {}, [2**63, 0, 2**63]),   # 3 << 63: bit 64 lost
    # the raw bits of floats: -1.5 = 0xBFC00000, inf = 0x7F800000, and = 0x3F800000 = 1.0; x ^ -0.0 flips the sign
    ("BIT_AND", "FLOAT32", [[-1.5], [INF]], {}, [1.0]),
    ("BIT_XOR", "FLOAT32", [[2.5, -0.0], [-0.0, -0.0]], {}, [-2.5, 0.0]),
    # 1.0 = 0x3F800000 (7 bits), -0.0 (1 bit), NaN 0x7FC00000 (9 bits); INT8 -1 = 0xFF (8 bits)
    ("BIT_COUNT", {"InputTensor": "FLOAT32", "OutputTensor": "UINT8"}, [[1.0, -0.0, NAN]], {}, [7, 1, 9]),
    ("BIT_COUNT", {"InputTensor": "INT8", "OutputTensor": "UINT32"}, [[-1, -128, 0]], {}, [8, 1, 0]),
    ("BIT_NOT", "INT16", [[0, -1, 32767]], {}, [-1, 0, -32768]),
    # QUANTIZE_LINEAR: round(x / s) halves to even, + zero point, saturated; NaN gives 0
    ("QUANTIZE_LINEAR", {"InputTensor": "FLOAT32", "ScaleTensor": "FLOAT32", "ZeroPointTensor": "UINT8",
                         "OutputTensor": "UINT8"},
     [[0.5, 1.5, 2.5, -0.5, 254.5, 300.0, -3.0, NAN], [1.0] * 8, [0] * 8], {}, [0, 2, 2, 0, 254, 255, 0, 0]),
    # 5 / 2 = 2.5 -> 2, 3 / 2 = 1.5 -> 2, -150 + 10 and 500 + 10 saturate
    ("QUANTIZE_LINEAR", {"InputTensor": "FLOAT32", "ScaleTensor": "FLOAT32", "ZeroPointTensor": "INT8",
                         "OutputTensor": "INT8"},
     [[5.0, 3.0, -300.0, 1000.0], [2.0] * 4, [10] * 4], {}, [12, 12, -128, 127]),
    # INT32 input, FLOAT32 scale: 7 / 2 = 3.5 -> 4, -7 / 2 -> -4, + (-128)
    ("QUANTIZE_LINEAR", {"InputTensor": "INT32", "ScaleTensor": "FLOAT32", "ZeroPointTensor": "INT8",
                         "OutputTensor": "INT8"}, [[7, -7], [2.0, 2.0], [-128, -128]], {}, [-124, -128]),
    # (x - z) * s with x - z exact: 0 - 255 = -255
    ("DEQUANTIZE_LINEAR", {"InputTensor": "UINT8", "ScaleTensor": "FLOAT32", "ZeroPointTensor": "UINT8",
                           "OutputTensor": "FLOAT32"}, [[0, 255, 10], [1.0, 0.5, 3.0], [255, 0, 10]], {},
     [-255.0, 127.5, 0.0]),
    # NaN propagates through MIN, MAX, CLIP and THRESHOLD
    ("MAX", "FLOAT32", [[NAN, 1.0, -INF], [1.0, NAN, 3.0]], {}, [NAN, NAN, 3.0]),
    ("MIN", "FLOAT16", [[NAN, 1.0, -INF], [1.0, NAN, 3.0]], {}, [NAN, NAN, -INF]),
    ("CLIP", "FLOAT32", [[NAN, 5.0, -5.0, 0.5]], {"min": -1.0, "max": 1.0}, [NAN, 1.0, -1.0, 0.5]),
    # CLIP on an integer tensor: Min -1.9 and Max 2.9 truncated toward zero to -1 and 2
    ("CLIP", "INT8", [[-128, 127, 0, 2, -1]], {"min": -1.9, "max": 2.9}, [-1, 2, 0, 2, -1]),
    ("CLIP", "FLOAT32", [[0.0, 9.0]], {"min": 3.0, "max": 1.0}, [3.0, 3.0]),   # Min > Max: max(Min, min(x, Max))
    # CLIP1's Min and Max exact in the tensor's type (64-bit integers beyond FLOAT's precision)
    ("CLIP1", "UINT64", [[0, 2**64 - 1, 2**63 + 5]], {"min": 2**63, "max": 2**64 - 2},
     [2**63, 2**64 - 2, 2**63 + 5]),
    ("CLIP1", "INT64", [[2**63 - 1, I64_MIN, 2**62 + 1]], {"min": I64_MIN + 1, "max": 2**62},
     [2**62, I64_MIN + 1, 2**62]),
    ("THRESHOLD", "INT32", [[-5, 1, 7]], {"min": 1.9}, [1, 1, 7]),
    ("THRESHOLD", "FLOAT32", [[NAN, -1.0, 2.0]], {"min": 0.0}, [NAN, 0.0, 2.0]),
    # comparisons with NaN are false; -0 == +0
    ("LOGICAL_EQUALS", {"ATensor": "FLOAT32", "BTensor": "FLOAT32", "OutputTensor": "UINT8"},
     [[NAN, 1.0, 0.0], [NAN, 1.0, -0.0]], {}, [0, 1, 1]),
    ("LOGICAL_LESS_THAN_OR_EQUAL", {"ATensor": "FLOAT16", "BTensor": "FLOAT16", "OutputTensor": "UINT32"},
     [[NAN, 1.0, -INF], [1.0, NAN, -INF]], {}, [0, 0, 1]),
    ("LOGICAL_GREATER_THAN", {"ATensor": "UINT64", "BTensor": "UINT64", "OutputTensor": "UINT8"},
     [[2**64 - 1, 0], [2**63, 1]], {}, [1, 0]),
    ("LOGICAL_XOR", "UINT32", [[0, 5, 5, 0], [0, 0, 7, 9]], {}, [0, 1, 0, 1]),
    ("LOGICAL_NOT", "UINT8", [[0, 1, 255]], {}, [1, 0, 0]),
    # SIGN: NaN gives 0 (the live page's "0, otherwise"), -0 gives 0
    ("SIGN", "FLOAT32", [[NAN, -0.0, 0.0, -3.0, 2.0, -INF]], {}, [0.0, 0.0, 0.0, -1.0, 1.0, -1.0]),
    ("SIGN", "INT8", [[-128, 0, 5]], {}, [-1, 0, 1]),
    ("SIGN", "UINT8", [[0, 200]], {}, [0, 1]),
    ("IS_INFINITY", {"InputTensor": "FLOAT32", "OutputTensor": "UINT8"}, [[INF, -INF, NAN, 1.0]],
     {"infinity_mode": "POSITIVE"}, [1, 0, 0, 0]),
    ("IS_INFINITY", {"InputTensor": "FLOAT16", "OutputTensor": "UINT8"}, [[INF, -INF, NAN, 1.0]],
     {"infinity_mode": "NEGATIVE"}, [0, 1, 0, 0]),
    ("IS_NAN", {"InputTensor": "FLOAT16", "OutputTensor": "UINT32"}, [[NAN, INF, 0.0]], {}, [1, 0, 0]),
    # POW on integers, exactly: 2^31 wraps to INT_MIN, 2^32 to 0; negative exponents: 1 / x^-e truncated
    ("POW", "INT32", [[2, 2, -2, 1, -1, -1, 3, 0, 2], [10, 31, 3, -5, -5, -4, -1, -1, 32]], {},
     [1024, I32_MIN, -8, 1, -1, 1, 0, 0, 0]),
    # C99's pow: (-8)^3, a negative base with a non-integral exponent, poles of +-0, (-inf)^0.5, 1^NaN, NaN^0
    ("POW", "FLOAT32", [[-8.0, -8.0, 0.0, -0.0, -INF, 1.0, NAN], [3.0, 0.5, -1.0, -1.0, 0.5, NAN, 0.0]], {},
     [-512.0, NAN, INF, -INF, INF, 1.0, 1.0]),
    ("RECIP", "FLOAT16", [[0.0, -0.0, 2.0]], {}, [INF, -INF, 0.5]),
    # ScaleBias before the function: 1 * 2 + 0.5, -0.25 * 2 + 0.5 = 0, 65504 * 2 + 0.5 rounds to FLOAT16's inf
    ("IDENTITY", "FLOAT16", [[1.0, -0.25, 65504.0]], {"scale_bias": dml.ScaleBias(2.0, 0.5)}, [2.5, 0.0, INF]),
    # ROUND's modes on the halves of FLOAT16
    ("ROUND", "FLOAT16", [[0.5, 1.5, -2.5, -0.25]], {"rounding_mode": "TOWARD_INFINITY"}, [1.0, 2.0, -3.0, -0.0]),
    # ADD1's fused RELU applies to the sum
    ("ADD1", "FLOAT32", [[1.0, -3.0], [1.0, 1.0]], {"fused_activation": dml.ActivationReluOperatorDesc()},
     [2.0, 0.0]),
    ("IF", {"ConditionTensor": "UINT8", "ATensor": "INT64", "BTensor": "INT64", "OutputTensor": "INT64"},
     [[0, 7, 255], [I64_MIN, 2**63 - 1, 5], [1, 2, 3]], {}, [1, 2**63 - 1, 5]),
]


def _golden(case: tuple[str, str | dict[str, str], list[list[Any]], dict[str, Any], list[Any]]
            ) -> tuple[ElementWiseOperatorDesc, list[np.ndarray | None], np.ndarray]:
    name, type_names, values, scalars, expected = case
    cls = BY_NAME[name]
    types = {field: DT[type_names if isinstance(type_names, str) else type_names[field]]
             for field in cls.INFO.tensor_fields()}
    desc = make(name, types, [len(expected)], **scalars)
    arrays: list[np.ndarray | None] = []
    for (field, _), column in zip(cls.INFO.inputs, values, strict=True):
        dtype = types[field].numpy_dtype
        arrays.append(np.array(column, np.float64 if dtype.kind == "f" else object).astype(dtype))
    out = types["OutputTensor"].numpy_dtype
    with np.errstate(over="ignore"):
        want = np.array(expected, np.float64 if out.kind == "f" else object).astype(out)
    return desc, arrays, want


GOLDEN_IDS = [f"{case[0]}-{index}" for index, case in enumerate(GOLDENS)]


@pytest.mark.parametrize("case", GOLDENS, ids=GOLDEN_IDS)
def test_golden(case: Any, backend: str) -> None:
    desc, arrays, want = _golden(case)
    dev = device(backend)
    (got,) = dev.compile_operator(dev.create_operator(desc))(*arrays)
    assert_matches(case[0], got, want, f"{case[0]} on {backend}", ulps=0, inputs=arrays)


@backends("cpu-small")
@pytest.mark.parametrize("case", GOLDENS, ids=GOLDEN_IDS)
def test_the_reference_gives_the_goldens(case: Any) -> None:
    """The reference itself against the hand-worked values (and the pages' examples below)."""
    desc, arrays, want = _golden(case)
    assert_matches(case[0], expected_of(desc, arrays), want, f"the reference's {case[0]}", ulps=0, inputs=arrays)


@backends("cpu-small")
def test_the_reference_gives_the_page_examples() -> None:
    for example in EXAMPLES:
        desc, arrays, want = _example_case(example)
        assert expected_of(desc, arrays).tolist() == want.tolist(), example["operator"]


# -- hypothesis: shapes and strides ----------------------------------------------------------------------------------

#: A representative operator of each kind: unary float, binary float, integer, comparison, IF, quantize (and CLIP1's
#: exact 64-bit values).
KINDS = {"unary float": "EXP", "binary float": "ATAN_YX", "integer": "MODULUS_FLOOR", "shift": "BIT_SHIFT_LEFT",
         "comparison": "LOGICAL_GREATER_THAN", "IF": "IF", "quantize": "QUANTIZE_LINEAR", "clip": "CLIP1",
         "add": "ADD"}


@st.composite
def strided_case(draw: st.DrawFn, name: str, cases: Sequence[Case]
                 ) -> tuple[ElementWiseOperatorDesc, list[np.ndarray], dict[str, Any]]:
    case = draw(st.sampled_from([c for c in cases if c.name == name and not c.absent and not c.scalars]))
    types = dict(case.types)
    sizes = draw(shapes(draw(st.integers(1, 4)), max_elements=48, max_side=5))
    strides = {field: draw(strides_for(sizes)) for field, _ in BY_NAME[name].INFO.inputs}
    strides["OutputTensor"] = draw(strides_for(sizes, allow_zero=False))
    desc = make(name, types, sizes, strides)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = []
    for field, column in zip((f for f, _ in desc.INFO.inputs), case_values(name, types), strict=True):
        assert column is not None
        x = column[rng.integers(0, column.size, size=sizes)]
        # the logical array the strided buffer holds (equal along zero strides)
        arrays.append(read_buffer(build_buffer(x, strides[field]), x.dtype, sizes, strides[field]))
    return desc, arrays, strides


@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_shapes_and_strides(kind: str, data: st.DataObject, backend: str, backend_name: str) -> None:
    """Any input strides (zero, padded, transposed) and output strides, in raw buffers between sentinel bytes: the
    reference's values, no byte outside the output's elements changed, no input byte changed. (On cpu and gpu the
    types are the representative ones, so no new kernel is compiled.)"""
    name = KINDS[kind]
    desc, arrays, strides = data.draw(strided_case(name, TABLE if backend_name == "cpu-small" else REPRESENTATIVE))
    memory = data.draw(st.sampled_from(["host", "device"]))
    note(f"{desc!r} memory={memory}")
    dev = device(backend)
    compiled = dev.compile_operator(dev.create_operator(desc))
    buffers = [build_buffer(x, strides[field], byte_offset=16 * (1 + index), seed=index)
               for index, ((field, _), x) in enumerate(zip(desc.INFO.inputs, arrays, strict=True))]
    out = desc.output_tensor
    raw = execute_between_sentinels(dev, compiled, buffers, out.data_type.numpy_dtype.itemsize, out.sizes,
                                    strides["OutputTensor"], memory=memory, seed=5, label=desc.label)
    got = read_buffer(raw, out.data_type.numpy_dtype, out.sizes, strides["OutputTensor"],
                      byte_offset=16 * (len(buffers) + 1))
    assert_matches(name, got, expected_of(desc, list(arrays)), f"{desc.label} on {backend}", inputs=arrays)


# -- bad descriptors -------------------------------------------------------------------------------------------------

def _bad_cases() -> list[tuple[str, Callable[[], dml.OperatorDesc], str, type[Exception], str]]:
    f23, f4 = T("FLOAT32", [2, 3]), T("FLOAT32", [1, 1, 1, 4])

    def i(type_name: str, sizes: Sequence[int] = (2,)) -> dml.TensorDesc:
        return T(type_name, list(sizes))

    ew = "DML_OPERATOR_ELEMENT_WISE_"
    return [
        ("smaller input sizes (no implicit broadcasting)",
         lambda: dml.ElementWiseAddOperatorDesc(f23, T("FLOAT32", [1, 3]), f23), "6_4", dml.ValidationError,
         rf"{ew}ADD: BTensor.Sizes is \[1, 3\]; it must equal OutputTensor.Sizes \[2, 3\] \(an input broadcasts by "
         r"zero strides, not by smaller sizes\)"),
        ("smaller input rank", lambda: dml.ElementWiseMultiplyOperatorDesc(T("FLOAT32", [3]), f23, f23), "6_4",
         dml.ValidationError, rf"{ew}MULTIPLY: ATensor.DimensionCount is 1; it must equal "
                              r"OutputTensor.DimensionCount \(2\)"),
        ("output sizes differ", lambda: dml.ElementWiseExpOperatorDesc(f23, T("FLOAT32", [3, 2])), "6_4",
         dml.ValidationError, rf"{ew}EXP: InputTensor.Sizes is \[2, 3\]; it must equal OutputTensor.Sizes \[3, 2\]"),
        ("same_type inputs differ", lambda: dml.ElementWiseAddOperatorDesc(f23, T("FLOAT16", [2, 3]), f23), "6_4",
         dml.ValidationError, rf"{ew}ADD: BTensor.DataType is FLOAT16; it must equal ATensor.DataType \(FLOAT32\)"),
        ("same_type output differs", lambda: dml.ElementWiseSubtractOperatorDesc(f23, f23, T("FLOAT16", [2, 3])),
         "6_4", dml.ValidationError, rf"{ew}SUBTRACT: OutputTensor.DataType is FLOAT16; it must equal "
                                     r"ATensor.DataType \(FLOAT32\)"),
        ("comparison inputs differ", lambda: dml.ElementWiseLogicalLessThanOperatorDesc(
            i("INT32"), i("UINT32"), i("UINT8")), "6_4", dml.ValidationError,
         rf"{ew}LOGICAL_LESS_THAN: BTensor.DataType is UINT32; it must equal ATensor.DataType \(INT32\)"),
        ("logical output type", lambda: dml.ElementWiseLogicalAndOperatorDesc(i("UINT8"), i("UINT8"), i("UINT32")),
         "6_4", dml.ValidationError, rf"{ew}LOGICAL_AND: OutputTensor.DataType is UINT32; it must equal "
                                     r"ATensor.DataType \(UINT8\)"),
        ("comparison to FLOAT32", lambda: dml.ElementWiseLogicalEqualsOperatorDesc(f23, f23, f23), "6_4",
         dml.ValidationError, rf"{ew}LOGICAL_EQUALS: OutputTensor.DataType FLOAT32 is not supported; at feature "
                              r"level 6_4 it must be one of UINT32, UINT8"),
        ("FLOAT64 transcendental", lambda: dml.ElementWiseExpOperatorDesc(i("FLOAT64"), i("FLOAT64")), "6_4",
         dml.ValidationError, rf"{ew}EXP: InputTensor.DataType FLOAT64 is not supported; at feature level 6_4 it "
                              r"must be one of FLOAT32, FLOAT16"),
        ("signed shift", lambda: dml.ElementWiseBitShiftLeftOperatorDesc(i("INT32"), i("INT32"), i("INT32")), "6_4",
         dml.ValidationError, rf"{ew}BIT_SHIFT_LEFT: ATensor.DataType INT32 is not supported; at feature level 6_4 "
                              r"it must be one of UINT64, UINT32, UINT16, UINT8"),
        ("IS_INFINITY to UINT32", lambda: dml.ElementWiseIsInfinityOperatorDesc(i("FLOAT32"), i("UINT32")), "6_4",
         dml.ValidationError, rf"{ew}IS_INFINITY: OutputTensor.DataType UINT32 is not supported; at feature level "
                              r"6_4 it must be one of UINT8"),
        ("IF's float condition", lambda: dml.ElementWiseIfOperatorDesc(i("FLOAT32"), i("FLOAT32"), i("FLOAT32"),
                                                                        i("FLOAT32")), "6_4", dml.ValidationError,
         rf"{ew}IF: ConditionTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of UINT8"),
        ("INT8 ADD below 5_1", lambda: dml.ElementWiseAddOperatorDesc(i("INT8"), i("INT8"), i("INT8")), "5_0",
         dml.UnsupportedError, rf"{ew}ADD: ATensor.DataType INT8 needs feature level 5_1; the device is at 5_0"),
        ("INT64 DIVIDE below 6_0", lambda: dml.ElementWiseDivideOperatorDesc(i("INT64"), i("INT64"), i("INT64")),
         "5_1", dml.UnsupportedError, rf"{ew}DIVIDE: ATensor.DataType INT64 needs feature level 6_0; the device is "
                                      r"at 5_1"),
        ("2 dimensions at 2_1", lambda: dml.ElementWiseAddOperatorDesc(f23, f23, f23), "2_1", dml.UnsupportedError,
         rf"{ew}ADD: ATensor.DimensionCount 2 needs feature level 3_0; the device is at 2_1"),
        ("9 dimensions", lambda: dml.ElementWiseAddOperatorDesc(*[T("FLOAT32", [1] * 9)] * 3), "6_4",
         dml.ValidationError, rf"{ew}ADD: ATensor.DimensionCount is 9; it must be 1 to 8"),
        ("CLIP1 below 5_0", lambda: dml.ElementWiseClip1OperatorDesc(i("INT8"), i("INT8"), None, "INT8", -1, 2),
         "4_1", dml.UnsupportedError, rf"{ew}CLIP1 needs feature level 5_0; the device is at 4_1"),
        ("ScaleBias on an integer tensor", lambda: dml.ElementWiseIdentityOperatorDesc(
            i("INT32"), i("INT32"), dml.ScaleBias(2.0, 1.0)), "6_4", dml.ValidationError,
         rf"{ew}IDENTITY: ScaleBias is set for InputTensor.DataType INT32; ScaleBias applies to float tensors only"),
        ("ScaleBias on an integer CLIP", lambda: dml.ElementWiseClipOperatorDesc(
            i("UINT8"), i("UINT8"), dml.ScaleBias(), 0.0, 1.0), "6_4", dml.ValidationError,
         rf"{ew}CLIP: ScaleBias is set for InputTensor.DataType UINT8"),
        ("CLIP1 MinMaxDataType mismatch", lambda: dml.ElementWiseClip1OperatorDesc(
            i("INT8"), i("INT8"), None, "FLOAT32", 1.0, 2.0), "6_4", dml.ValidationError,
         rf"{ew}CLIP1: MinMaxDataType is FLOAT32; it must equal InputTensor.DataType \(INT8\)"),
        ("CLIP1 Min below INT8", lambda: dml.ElementWiseClip1OperatorDesc(i("INT8"), i("INT8"), None, "INT8", -129, 2),
         "6_4", dml.ValidationError, rf"{ew}CLIP1: Min is -129; it must be an integer of INT8 \(from -128 to 127\)"),
        ("CLIP1 Max beyond UINT64", lambda: dml.ElementWiseClip1OperatorDesc(
            i("UINT64"), i("UINT64"), None, "UINT64", 0, 2**64), "6_4", dml.ValidationError,
         rf"{ew}CLIP1: Max is 18446744073709551616; it must be an integer of UINT64 \(from 0 to "
         r"18446744073709551615\)"),
        ("CLIP1 fraction for INT32", lambda: dml.ElementWiseClip1OperatorDesc(
            i("INT32"), i("INT32"), None, "INT32", 0.5, 2), "6_4", dml.ValidationError,
         rf"{ew}CLIP1: Min is 0.5; it must be an integer of INT32"),
        ("CLIP1 Max beyond FLOAT16", lambda: dml.ElementWiseClip1OperatorDesc(
            i("FLOAT16"), i("FLOAT16"), None, "FLOAT16", 0, 70000.0), "6_4", dml.ValidationError,
         rf"{ew}CLIP1: Max is 70000.0; it must be a FLOAT16 \(magnitude at most 65504\)"),
        ("CLIP1's NaN Max", lambda: dml.ElementWiseClip1OperatorDesc(
            i("FLOAT32"), i("FLOAT32"), None, "FLOAT32", 0.0, math.nan), "6_4", dml.ValidationError,
         rf"{ew}CLIP1: Max is nan; it must be"),
        ("CLIP's infinite Min", lambda: dml.ElementWiseClipOperatorDesc(f23, f23, None, math.inf, 1.0), "6_4",
         dml.ValidationError, rf"{ew}CLIP: Min is inf; it must be a finite FLOAT"),
        ("FusedActivation with tensors", lambda: dml.ElementWiseAdd1OperatorDesc(
            i("FLOAT32"), i("FLOAT32"), i("FLOAT32"),
            dml.ActivationReluOperatorDesc(input_tensor=i("FLOAT32"), output_tensor=i("FLOAT32"))), "6_4",
         dml.ValidationError, rf"{ew}ADD1: FusedActivation.InputTensor is set; a fused activation's InputTensor and "
                              r"OutputTensor must be absent"),
        ("FusedActivation GELU below 5_1", lambda: dml.ElementWiseAdd1OperatorDesc(
            f4, f4, f4, dml.ActivationGeluOperatorDesc()), "5_0", dml.UnsupportedError,
         rf"{ew}ADD1: FusedActivation \(DML_OPERATOR_ACTIVATION_GELU\) needs feature level 5_1; the device is at 5_0"),
        ("FusedActivation not an activation", lambda: dml.ElementWiseAdd1OperatorDesc(f23, f23, f23, 5),  # type: ignore
         "6_4", dml.ValidationError, rf"{ew}ADD1: FusedActivation is 5; it must be an activation descriptor"),
        ("QUANTIZE INT32 with a FLOAT16 scale", lambda: dml.ElementWiseQuantizeLinearOperatorDesc(
            i("INT32"), i("FLOAT16"), i("INT8"), i("INT8")), "6_4", dml.ValidationError,
         rf"{ew}QUANTIZE_LINEAR: ScaleTensor.DataType is FLOAT16; it must be FLOAT32 for InputTensor.DataType INT32"),
        ("QUANTIZE FLOAT16 with a FLOAT32 scale", lambda: dml.ElementWiseQuantizeLinearOperatorDesc(
            i("FLOAT16"), i("FLOAT32"), i("UINT8"), i("UINT8")), "6_4", dml.ValidationError,
         rf"{ew}QUANTIZE_LINEAR: ScaleTensor.DataType is FLOAT32; it must be FLOAT16 for InputTensor.DataType "
         r"FLOAT16"),
        ("QUANTIZE zero point type", lambda: dml.ElementWiseQuantizeLinearOperatorDesc(
            i("FLOAT32"), i("FLOAT32"), i("UINT8"), i("INT8")), "6_4", dml.ValidationError,
         rf"{ew}QUANTIZE_LINEAR: OutputTensor.DataType is INT8; it must equal ZeroPointTensor.DataType \(UINT8\)"),
        ("DEQUANTIZE zero point type", lambda: dml.ElementWiseDequantizeLinearOperatorDesc(
            i("INT8"), i("FLOAT32"), i("UINT8"), i("FLOAT32")), "6_4", dml.ValidationError,
         rf"{ew}DEQUANTIZE_LINEAR: ZeroPointTensor.DataType is UINT8; it must equal InputTensor.DataType \(INT8\)"),
        ("POW exponent type below 3_0", lambda: dml.ElementWisePowOperatorDesc(f4, T("FLOAT16", [1, 1, 1, 4]), f4),
         "2_1", dml.UnsupportedError, rf"{ew}POW: ExponentTensor.DataType FLOAT16 .*needs feature level 3_0; the "
                                      r"device is at 2_1"),
        ("bad RoundingMode", lambda: dml.ElementWiseRoundOperatorDesc(f23, f23, 7), "6_4", dml.ValidationError,
         rf"{ew}ROUND: RoundingMode is 7; it must be one of HALVES_TO_NEAREST_EVEN, TOWARD_ZERO, TOWARD_INFINITY"),
        ("bad InfinityMode", lambda: dml.ElementWiseIsInfinityOperatorDesc(f23, T("UINT8", [2, 3]), 9), "6_4",
         dml.ValidationError, rf"{ew}IS_INFINITY: InfinityMode is 9; it must be one of EITHER, POSITIVE, NEGATIVE"),
        ("ScaleBias not a struct", lambda: dml.ElementWiseExpOperatorDesc(f23, f23, (1.0, 2.0)),  # type: ignore
         "6_4", dml.ValidationError, rf"{ew}EXP: ScaleBias is \(1.0, 2.0\); it must be a ScaleBias or None"),
        ("input absent", lambda: dml.ElementWiseAddOperatorDesc(f23, None, f23), "6_4",  # type: ignore[arg-type]
         dml.ValidationError, rf"{ew}ADD: BTensor is None; it must be a TensorDesc"),
        ("overlapping output", lambda: dml.ElementWiseAddOperatorDesc(f23, f23, T("FLOAT32", [2, 3], [0, 1])), "6_4",
         dml.ValidationError, rf"{ew}ADD: OutputTensor.Strides \[0, 1\] map two elements of Sizes \[2, 3\] onto the "
                              r"same memory"),
    ]


BAD = _bad_cases()


@backends("cpu-small")
@pytest.mark.parametrize(("case_id", "build", "level", "error", "message"), BAD, ids=[case[0] for case in BAD])
def test_bad_descriptors(case_id: str, build: Callable[[], dml.OperatorDesc], level: str, error: type[Exception],
                         message: str, backend: str) -> None:
    with pytest.raises(error, match=message):
        device(backend, _at(level)).create_operator(build())


# -- sentinel bytes around strided 8/16-bit outputs ------------------------------------------------------------------

NARROW = [("LOGICAL_GREATER_THAN", {"ATensor": "FLOAT32", "BTensor": "FLOAT32", "OutputTensor": "UINT8"}),
          ("IS_NAN", {"InputTensor": "FLOAT16", "OutputTensor": "UINT8"}),
          ("BIT_COUNT", {"InputTensor": "UINT32", "OutputTensor": "UINT8"}),
          ("ADD", "INT8"), ("ADD", "UINT16"), ("EXP", "FLOAT16"), ("CLIP1", "INT16"), ("BIT_NOT", "FLOAT16"),
          ("IF", {"ConditionTensor": "UINT8", "ATensor": "UINT8", "BTensor": "UINT8", "OutputTensor": "UINT8"}),
          ("QUANTIZE_LINEAR", {"InputTensor": "FLOAT32", "ScaleTensor": "FLOAT32", "ZeroPointTensor": "INT8",
                               "OutputTensor": "INT8"})]


@pytest.mark.parametrize(("name", "type_names"), NARROW, ids=[f"{name}-{i}" for i, (name, _) in enumerate(NARROW)])
@pytest.mark.parametrize("memory", ["host", "device"])
def test_narrow_outputs_keep_their_neighbours(name: str, type_names: str | dict[str, str], memory: str,
                                              backend: str) -> None:
    """A [3, 5] output at strides [11, 2] (a gap after every element, odd rows): every byte between the elements
    keeps its sentinel; an input broadcast by a zero stride, another transposed."""
    cls = BY_NAME[name]
    types = {field: DT[type_names if isinstance(type_names, str) else type_names[field]]
             for field in cls.INFO.tensor_fields()}
    sizes = [3, 5]
    input_strides: list[Sequence[int] | None] = [[0, 1], [1, 3], None][:len(cls.INFO.inputs)]
    strides = {field: s for (field, _), s in zip(cls.INFO.inputs, input_strides, strict=True)}
    strides["OutputTensor"] = [11, 2]
    desc = make(name, types, sizes, strides)
    rng = np.random.default_rng(7)
    arrays = []
    for column, s in zip(case_values(name, types), input_strides, strict=True):
        assert column is not None
        x = column[rng.integers(0, column.size, size=sizes)]
        arrays.append(read_buffer(build_buffer(x, s), x.dtype, sizes, s))
    buffers = [build_buffer(x, s, byte_offset=16 * (1 + index), seed=index)
               for index, (x, s) in enumerate(zip(arrays, input_strides, strict=True))]
    dev = device(backend)
    compiled = dev.compile_operator(dev.create_operator(desc))
    out = desc.output_tensor
    raw = execute_between_sentinels(dev, compiled, buffers, out.data_type.numpy_dtype.itemsize, sizes, (11, 2),
                                    memory=memory, seed=3, label=desc.label)
    got = read_buffer(raw, out.data_type.numpy_dtype, sizes, (11, 2), byte_offset=16 * (len(buffers) + 1))
    assert_matches(name, got, expected_of(desc, arrays), f"{desc.label} on {backend}", inputs=arrays)


# -- in place --------------------------------------------------------------------------------------------------------

def _in_place_cases() -> list[tuple[Case, str]]:
    """Per operator, its first table combination with each input whose elements are at least as wide as the
    output's (so that the output fits in the input's range)."""
    cases = []
    for name in BY_NAME:
        case = next(c for c in TABLE if c.name == name)
        types = dict(case.types)
        cases += [(case, field) for field, _ in BY_NAME[name].INFO.inputs
                  if types[field].numpy_dtype.itemsize >= types["OutputTensor"].numpy_dtype.itemsize]
    return cases


IN_PLACE_CASES = _in_place_cases()


@pytest.mark.parametrize(("case", "field"), IN_PLACE_CASES, ids=[f"{c.id}-{f}" for c, f in IN_PLACE_CASES])
@pytest.mark.parametrize("memory", ["host", "device"])
def test_in_place(case: Case, field: str, memory: str, backend: str) -> None:
    """OutputTensor bound to exactly the memory of an input (padded rows: [3, 5] at strides [8, 1]): the reference's
    result, the same bits as out of place, and the gaps unchanged where the page allows it (`in_place_pairs`); a
    BindingError naming the operator and both tensors, and nothing written, where it does not."""
    types = dict(case.types)
    cls = BY_NAME[case.name]
    allowed = field in cls.INFO.in_place
    strides = {field: (8, 1), "OutputTensor": (8, 1)}
    desc = make(case.name, types, [3, 5], strides)
    rng = np.random.default_rng(11)
    arrays = [column[rng.integers(0, column.size, size=(3, 5))] for column in case_values(case.name, types)
              if column is not None]
    dev = device(backend)
    compiled = dev.compile_operator(dev.create_operator(desc))
    assert (field, "OutputTensor") in desc.in_place_pairs() or not allowed
    (expected,) = compiled(*arrays)
    shared_index = [name for name, _ in cls.INFO.inputs].index(field)
    data = build_buffer(arrays[shared_index], (8, 1), tail_bytes=8)
    raw = [data if index == shared_index else build_buffer(x, None) for index, x in enumerate(arrays)]
    made: list[Any] = [dev.create_buffer(r) for r in raw] if memory == "device" else [r.copy() for r in raw]

    def read_back() -> np.ndarray:
        shared = made[shared_index]
        return np.frombuffer(shared.read(), np.uint8) if memory == "device" else shared

    bindings = [dml.Binding(buffer) for buffer in made]
    if not allowed:
        with pytest.raises(dml.BindingError, match=rf"{desc.label}: the bound ranges of {field} and OutputTensor "
                                                   r"overlap"):
            compiled.execute(bindings, [dml.Binding(made[shared_index])])
        assert np.array_equal(read_back(), data)
        return
    compiled.execute(bindings, [dml.Binding(made[shared_index])])
    after = read_back()
    dtype = types["OutputTensor"].numpy_dtype
    got = read_buffer(after, dtype, [3, 5], (8, 1))
    what = f"{desc.label} in place over {field} on {backend}"
    assert_matches(case.name, got, expected_of(desc, arrays), what, inputs=arrays)
    assert_matches(case.name, got, expected, what + " against out of place", ulps=0, inputs=arrays)
    element = dtype.itemsize
    gaps = np.ones(after.size, bool)
    gaps[(np.add.outer(np.arange(3) * 8, np.arange(5)).reshape(-1, 1) * element + np.arange(element)).reshape(-1)] = \
        False
    np.testing.assert_array_equal(after[gaps], data[gaps])


def test_in_place_pairs_follow_the_pages() -> None:
    """The pages' in-place sentences: every operator but IS_NAN, IS_INFINITY, BIT_COUNT, the quantizers, the five
    comparisons and IF lets OutputTensor alias its inputs; POW only InputTensor."""
    refused = {"IS_NAN", "IS_INFINITY", "BIT_COUNT", "QUANTIZE_LINEAR", "DEQUANTIZE_LINEAR", "LOGICAL_EQUALS",
               "LOGICAL_GREATER_THAN", "LOGICAL_GREATER_THAN_OR_EQUAL", "LOGICAL_LESS_THAN",
               "LOGICAL_LESS_THAN_OR_EQUAL", "IF"}
    for name, cls in BY_NAME.items():
        inputs = [field for field, _ in cls.INFO.inputs]
        want = () if name in refused else ("InputTensor",) if name == "POW" else tuple(inputs)
        assert cls.INFO.in_place == want, name
