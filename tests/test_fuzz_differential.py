"""Differential fuzzing: every registered operator, the same descriptor and data on every backend.

The operators come from the registry (`OperatorDesc.registry`), never from a list kept here: each one's descriptors
are drawn by the hook registered for its class in tests/strategies.py (`draws_descriptors`; the fuzz modules that
own a strategy register it there), and an operator registered without one FAILS
`test_every_registered_operator_has_a_drawing_hook` and its own case here (never a skip).

Each example draws a feature level at which the operator has a support row, a descriptor the level accepts (types
and ranks of that row; strides packed, padded, transposed, zero on inputs, mixed) and data: ordinary, the whole range
of the type, special values (NaN with payloads, infinities, signed zeros, subnormals, the integer extremes), or a
few distinct values (ties); indices around their bounds with the type's extremes. It runs on

- `cpu` (numba's kernels), `cpu-small` (the NumPy small-tensor kernels) and `gpu` (lavapipe), each on raw buffers
  (binding offsets, sentinel bytes around and between the elements; host or device memory, drawn), checking that
  every input byte is as it was and no output byte outside the output's elements changed;
- Dask: the descriptor as a node of a `dml.Graph` (its inputs at the descriptor's strides), given every input as a
  Dask array cut into random chunks, computed with the synchronous scheduler.

and compares: bit for bit across the backends where README says results are exact (SPLIT, JOIN, ONE_HOT, the
gathers, MIN, MAX (a NaN result is the canonical quiet NaN), ARGMIN, ARGMAX, integer outputs; on Dask, the
standalone activations too); every floating result within the bounds of the operator's oracle
(`test_fuzz_descriptors.check_outputs`, the checkers of the property tests); an operator without an oracle there is
compared across the backends within FLOAT16/FLOAT32 tolerances.

What the graph cannot express: its operator nodes' outputs are always packed, so the Dask run gets the descriptor
with its outputs packed (the results are compared as logical arrays). The node is added the way every operator
function of the graph API adds one (`Graph._add_operator`: the same checks and lowering), since the public functions
take their arguments, not a descriptor, and some descriptors have none (`dml.gather_nd` builds GATHER_ND1, never
GATHER_ND). A GPU without shader-int64 refuses 64-bit integers: that backend is then left out of the example, and
counted ("gpu: refused"; lavapipe has it).

Examples per operator: DIFFERENTIAL_EXAMPLES (OPENDML_DIFFERENTIAL_EXAMPLES; 1,000 with HYPOTHESIS_PROFILE=slow,
20 otherwise); 4 per element-wise operator otherwise (OPENDML_DIFFERENTIAL_ELEMENT_WISE_EXAMPLES).
Set OPENDML_DIFFERENTIAL_REPORT=path to have the cases run per operator written there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from conftest import backend_settings, gpu_adapter_missing
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from strategies import addressed_byte_mask, build_buffer, descriptor_drawer, read_buffer, sentinel_bytes
from test_fuzz_data import special_array
from test_fuzz_descriptors import LEVELS, ORACLE_CLASSES, check_outputs, consistent, random_values, written_outputs

import opendml as dml
import opendml.backends.cpu
from opendml.ops.activations import ActivationOperatorDesc
from opendml.ops.elementwise import ElementWiseOperatorDesc
from opendml.support import describe

SLOW = os.environ.get("HYPOTHESIS_PROFILE") == "slow"
DIFFERENTIAL_EXAMPLES = int(os.environ.get("OPENDML_DIFFERENTIAL_EXAMPLES", 1_000 if SLOW else 20))
DIFFERENTIAL_SETTINGS = settings(max_examples=DIFFERENTIAL_EXAMPLES, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck))
#: The 62 element-wise operators: each example's data types are a new numba kernel on the cpu (about 0.6-1 s to
#: compile with a cold cache), so the default run draws fewer per operator (tests/test_element_wise.py runs every
#: support row); the slow profile draws as many as for the others.
ELEMENT_WISE_EXAMPLES = int(os.environ.get("OPENDML_DIFFERENTIAL_ELEMENT_WISE_EXAMPLES",
                                           DIFFERENTIAL_EXAMPLES if SLOW else 4))

OPERATORS: dict[str, type[dml.OperatorDesc]] = {
    operator_type.name: cls for operator_type, cls in sorted(dml.OperatorDesc.registry.items(),
                                                             key=lambda item: item[0].name)}
BACKENDS = ("cpu", "cpu-small", "gpu")
#: README: the results that are the same bits on every backend.
EXACT_OPERATORS = {"SPLIT", "JOIN", "ONE_HOT", "GATHER_ND", "GATHER_ND1", "ARGMIN", "ARGMAX"}
EXACT_REDUCTIONS = {"MIN", "MAX", "ARGMIN", "ARGMAX"}

#: Cases run per operator: {operator: {"cpu": n, ..., "compared": n, "dask": n, "gpu: refused": n}}.
COUNTS: dict[str, dict[str, int]] = {}


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    path = os.environ.get("OPENDML_DIFFERENTIAL_REPORT")
    if path:
        with open(path, "w") as file:
            json.dump(COUNTS, file, indent=1, sort_keys=True)


def _count(operator: str, what: str) -> None:
    counts = COUNTS.setdefault(operator, {})
    counts[what] = counts.get(what, 0) + 1


# ---------------------------------------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def kernels_of(backend: str) -> Iterator[str]:
    """The cpu backend's size limits that put it on `backend`'s kernels (conftest.backend_settings), for the block;
    yields the device backend's name."""
    device_backend, limits = backend_settings(backend)
    before = {name: getattr(opendml.backends.cpu, name) for name in limits}
    try:
        for name, value in limits.items():
            setattr(opendml.backends.cpu, name, value)
        yield device_backend
    finally:
        for name, value in before.items():
            setattr(opendml.backends.cpu, name, value)


@cache
def device(device_backend: str, level: dml.FeatureLevel) -> dml.Device:
    return dml.Device(feature_level=level, backend=device_backend)


@cache
def gpu_missing() -> str | None:
    return gpu_adapter_missing()


def levels_for(cls: type[dml.OperatorDesc]) -> tuple[dml.FeatureLevel, ...]:
    """The levels at which the operator has a support row (its own table where the module lists one per operator)."""
    tables = cls.support_tables()
    own = [tables[cls.OPERATOR_TYPE.name]] if cls.OPERATOR_TYPE.name in tables else list(tables.values())
    return tuple(level for level in LEVELS if any(describe(table, level) is not None for table in own)) or LEVELS


# ---------------------------------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------------------------------

DATA_KINDS = ("ordinary", "wide", "specials", "ties")


def tied_values(rng: np.random.Generator, dtype: np.dtype, sizes: Sequence[int]) -> np.ndarray:
    """A few distinct values, so that extremes tie (signed zeros and NaN among the floating ones)."""
    pool = [-0.0, 0.0, 1.0, -1.0, 2.0, np.nan] if dtype.kind == "f" else [0, 1, 2, int(np.iinfo(dtype).max)]
    return np.array(pool, dtype=np.float64 if dtype.kind == "f" else object)[
        rng.integers(0, len(pool), size=tuple(sizes))].astype(dtype)


def index_data(rng: np.random.Generator, dtype: np.dtype, sizes: Sequence[int], bound: int) -> np.ndarray:
    """Indices in [-bound - 1, bound + 1] (those the type holds), a few of them the type's extremes."""
    info = np.iinfo(dtype)
    pool = sorted({v for v in (*range(-bound - 1, bound + 2), int(info.min), int(info.max))
                   if info.min <= v <= info.max})
    weights = np.array([1.0 if abs(v) <= bound + 1 else 0.2 for v in pool])
    picks = rng.choice(len(pool), size=tuple(sizes), p=weights / weights.sum())
    return np.array(pool, dtype=object)[picks].astype(dtype)


def draw_inputs(desc: dml.OperatorDesc, rng: np.random.Generator, kind: str) -> list[np.ndarray | None]:
    """One consistent logical array per input slot (None for an absent one)."""
    tensors = [t for _, t in [*desc.input_slots(), *desc.output_slots()] if t is not None]
    bound = max(max(t.sizes) for t in tensors)
    arrays: list[np.ndarray | None] = []
    for name, tensor in desc.input_slots():
        if tensor is None:
            arrays.append(None)
            continue
        dtype = tensor.data_type.numpy_dtype
        if name == "IndicesTensor":
            x = index_data(rng, dtype, tensor.sizes, bound)
        elif kind == "specials":
            x = special_array(rng, dtype, tensor.sizes, float(rng.choice([0.1, 0.5, 1.0])))
        elif kind == "ties":
            x = tied_values(rng, dtype, tensor.sizes)
        else:
            x = random_values(rng, dtype, tensor.sizes, kind)
        arrays.append(consistent(x, tensor))
    return arrays


# ---------------------------------------------------------------------------------------------------------------------
# Running one descriptor
# ---------------------------------------------------------------------------------------------------------------------


def run_on_raw_buffers(backend: str, level: dml.FeatureLevel, desc: dml.OperatorDesc,
                       inputs: Sequence[np.ndarray | None], rng: np.random.Generator, memory: str
                       ) -> list[np.ndarray]:
    """Compiles and executes `desc` on `backend` over raw buffers: the data at their strides from a random aligned
    offset, sentinel bytes everywhere else. Checks the inputs and the bytes around the outputs; returns the logical
    outputs."""
    with kernels_of(backend) as device_backend:
        dev = device(device_backend, level)
        compiled = dev.compile_operator(dev.create_operator(desc))
        made: list[Any] = []
        input_bindings: list[dml.Binding | None] = []
        inputs_before: list[np.ndarray] = []
        for (_, tensor), array in zip(desc.input_slots(), inputs, strict=True):
            if tensor is None or array is None:
                input_bindings.append(None)
                continue
            offset = 16 * int(rng.integers(0, 3))
            raw = build_buffer(array, tensor.strides, byte_offset=offset, seed=int(rng.integers(0, 100)))
            data = sentinel_bytes(offset + tensor.total_tensor_size_in_bytes + int(rng.integers(0, 24)), seed=3)
            data[:raw.size] = raw
            inputs_before.append(data.copy())
            buffer = dev.create_buffer(data) if memory == "device" else data
            made.append(buffer)
            input_bindings.append(dml.Binding(buffer, offset=offset))
        output_bindings, outputs_before = [], []
        for _, tensor in desc.output_slots():
            offset = 16 * int(rng.integers(0, 3))
            data = sentinel_bytes(offset + tensor.total_tensor_size_in_bytes + int(rng.integers(0, 24)), seed=11)
            outputs_before.append(data.copy())
            output_bindings.append(dml.Binding(dev.create_buffer(data) if memory == "device" else data,
                                               offset=offset))
        compiled.execute(input_bindings, output_bindings)
    for before, buffer in zip(inputs_before, made, strict=True):
        after = np.frombuffer(buffer.read(), np.uint8) if memory == "device" else buffer
        assert np.array_equal(before, after), f"{backend}: an input buffer changed"
    results = []
    for (name, tensor), binding, before in zip(desc.output_slots(), output_bindings, outputs_before, strict=True):
        after = np.frombuffer(binding.buffer.read(), np.uint8) if memory == "device" else binding.buffer
        written = addressed_byte_mask(after.size, tensor.data_type.numpy_dtype.itemsize, tensor.sizes, tensor.strides,
                                      byte_offset=binding.offset)
        changed = np.flatnonzero((after != before) & ~written)
        assert changed.size == 0, f"{backend}: bytes outside {name}'s elements changed: {changed[:8].tolist()}"
        results.append(read_buffer(after, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides,
                                   byte_offset=binding.offset))
    return results


def with_packed_outputs(desc: dml.OperatorDesc) -> dml.OperatorDesc:
    """The descriptor with every output tensor packed (what a graph's operator nodes produce)."""
    outputs = [tensor for _, tensor in desc.output_slots()]

    def packed(value: Any) -> Any:
        if isinstance(value, dml.TensorDesc) and any(value is output for output in outputs):
            return dml.TensorDesc(value.data_type, list(value.sizes))
        if isinstance(value, tuple) and value and all(isinstance(item, dml.TensorDesc) for item in value):
            return tuple(packed(item) for item in value)
        return value

    assert dataclasses.is_dataclass(desc)
    return dataclasses.replace(desc, **{f.name: packed(getattr(desc, f.name)) for f in dataclasses.fields(desc)
                                        if f.init})  # type: ignore[misc]


@st.composite
def chunkings(draw: st.DrawFn, shape: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Chunks along each dimension: whole, or cut at up to two drawn places."""
    result = []
    for size in shape:
        cuts = sorted(draw(st.sets(st.integers(1, size - 1), max_size=min(2, size - 1)))) if size > 1 else []
        edges = [0, *cuts, size]
        result.append(tuple(high - low for low, high in itertools.pairwise(edges)))
    return tuple(result)


def run_on_dask(level: dml.FeatureLevel, desc: dml.OperatorDesc, inputs: Sequence[np.ndarray | None],
                chunks: Sequence[tuple[tuple[int, ...], ...] | None]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The descriptor as the one operator node of a graph whose inputs are its inputs (at their strides): (its
    results on Dask arrays of those chunks, its results on the NumPy arrays), on the cpu backend as users get it."""
    import dask
    import dask.array as da

    graph = dml.Graph(device("cpu", level))
    expressions: list[Any] = []
    for index, (_, tensor) in enumerate(desc.input_slots()):
        expressions.append(None if tensor is None else graph.input(
            tensor.sizes, tensor.data_type, name=f"in{index}",
            strides=None if tensor.strides is None else list(tensor.strides)))
    outputs = graph._add_operator(with_packed_outputs(desc), expressions)
    compiled = graph.compile(outputs)
    given = {f"in{index}": array for index, array in enumerate(inputs) if array is not None}
    lazy = compiled({name: da.from_array(array, chunks=chunks[int(name[2:])])
                     for name, array in given.items()})
    on_dask = [np.asarray(result) for result in dask.compute(*lazy, scheduler="synchronous")]
    return on_dask, list(compiled(given))


# ---------------------------------------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------------------------------------


def exact(desc: dml.OperatorDesc, output: np.ndarray) -> bool:
    """README: the results every backend gives bit for bit."""
    if output.dtype.kind != "f" or desc.OPERATOR_TYPE.name in EXACT_OPERATORS:
        return True
    return isinstance(desc, dml.ReduceOperatorDesc) and desc.function.name in EXACT_REDUCTIONS


def assert_same_bits(what: str, got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape, (what, got.dtype, got.shape, expected.shape)
    if got.tobytes() != expected.tobytes():
        bits, baseline = got.view(f"u{got.dtype.itemsize}"), expected.view(f"u{got.dtype.itemsize}")
        bad = np.argwhere(bits != baseline)
        first = tuple(int(i) for i in bad[0])
        raise AssertionError(f"{what}: {got[first].item()} (bits {int(bits[first]):#x}) where the baseline has "
                             f"{expected[first].item()} (bits {int(baseline[first]):#x}) at {list(first)} "
                             f"({len(bad)} elements differ)")


def assert_close(what: str, got: np.ndarray, expected: np.ndarray) -> None:
    """For an operator without an oracle: NaN where the baseline has NaN, else within FLOAT16/FLOAT32 tolerances."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, what
    rtol = 1e-2 if got.dtype == np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol,
                               equal_nan=True, err_msg=what)


def compare(desc: dml.OperatorDesc, level: dml.FeatureLevel, inputs: Sequence[np.ndarray | None],
            results: dict[str, list[np.ndarray]], baseline: str) -> None:
    oracle = isinstance(desc, ORACLE_CLASSES)
    results = {backend: written_outputs(desc, outputs) for backend, outputs in results.items()}
    for backend, outputs in results.items():
        if oracle:
            check_outputs(desc, level, inputs, outputs)
        for index, (got, expected) in enumerate(zip(outputs, results[baseline], strict=True)):
            what = f"{desc.label} output {index} on {backend} against {baseline}"
            if exact(desc, got):
                assert_same_bits(what, got, expected)
            elif not oracle:
                assert_close(what, got, expected)


# ---------------------------------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------------------------------


def test_every_registered_operator_has_a_drawing_hook() -> None:
    """Whoever registers an operator registers how to draw its descriptors (strategies.draws_descriptors)."""
    missing = sorted(name for name, cls in OPERATORS.items() if descriptor_drawer(cls) is None)
    assert not missing, (f"no descriptor drawer for {missing}: register one with strategies.draws_descriptors so "
                         f"that the differential fuzzer covers them")


def test_a_class_without_a_drawer_is_reported() -> None:
    class Unregistered(dml.OperatorDesc):  # not registered: defines no OPERATOR_TYPE
        pass

    assert descriptor_drawer(Unregistered) is None
    assert descriptor_drawer(OPERATORS["ACTIVATION_GELU"]) is not None


@st.composite
def differential_case(draw: st.DrawFn, operator: str) -> tuple[dml.FeatureLevel, dml.OperatorDesc]:
    cls = OPERATORS[operator]
    drawer = descriptor_drawer(cls)
    assert drawer is not None, f"{operator} has no descriptor drawer (strategies.draws_descriptors)"
    level = draw(st.sampled_from(levels_for(cls)))
    desc = draw(drawer(cls, level))
    try:
        device("cpu", level).create_operator(desc)
    except (dml.ValidationError, dml.UnsupportedError) as error:
        note(f"refused: {error}")
        assume(False)
    return level, desc


@pytest.mark.parametrize("operator", [name for name, cls in OPERATORS.items()
                                      if not issubclass(cls, ElementWiseOperatorDesc)])
@DIFFERENTIAL_SETTINGS
@given(data=st.data())
def test_backends_agree(operator: str, data: st.DataObject) -> None:
    backends_agree(operator, data)


@pytest.mark.parametrize("operator", [name for name, cls in OPERATORS.items()
                                      if issubclass(cls, ElementWiseOperatorDesc)])
@settings(DIFFERENTIAL_SETTINGS, max_examples=ELEMENT_WISE_EXAMPLES)
@given(data=st.data())
def test_element_wise_backends_agree(operator: str, data: st.DataObject) -> None:
    backends_agree(operator, data)


def backends_agree(operator: str, data: st.DataObject) -> None:
    """One drawn descriptor of `operator` on every backend and on Dask, against the oracle and each other."""
    level, desc = data.draw(differential_case(operator))
    seed = data.draw(st.integers(0, 2**32 - 1))
    kind = data.draw(st.sampled_from(DATA_KINDS))
    memory = data.draw(st.sampled_from(("host", "device")))
    note(f"level={level} desc={desc!r} seed={seed} data={kind} memory={memory}")
    rng = np.random.default_rng(seed)
    inputs = draw_inputs(desc, rng, kind)

    results: dict[str, list[np.ndarray]] = {}
    for backend in BACKENDS:
        if backend == "gpu" and gpu_missing() is not None:
            _count(operator, "gpu: no adapter")
            continue
        try:
            results[backend] = run_on_raw_buffers(backend, level, desc, inputs, rng, memory)
            _count(operator, backend)
        except dml.UnsupportedError as error:   # a GPU without shader-int64, say
            assert backend == "gpu", f"{backend} refused what the cpu accepted: {error}"
            note(f"{backend}: {error}")
            _count(operator, f"{backend}: refused")
    compare(desc, level, inputs, results, "cpu-small")
    _count(operator, "compared")

    chunks = [None if array is None else data.draw(chunkings(array.shape)) for array in inputs]
    note(f"chunks={chunks}")
    on_dask, on_numpy = run_on_dask(level, desc, inputs, chunks)
    _count(operator, "dask")
    compare(desc, level, inputs, {"dask": on_dask, "graph": on_numpy}, "graph")
    if isinstance(desc, ActivationOperatorDesc):   # README: Dask's activations are one machine's, bit for bit
        for index, (got, expected) in enumerate(zip(on_dask, on_numpy, strict=True)):
            assert_same_bits(f"{desc.label} output {index} on Dask against one machine", got, expected)


def test_a_one_bit_difference_is_found() -> None:
    """The comparison itself: a SPLIT result one bit off (a NaN payload) fails, by the oracle and against the
    baseline."""
    x = dml.TensorDesc("FLOAT32", [1, 2])
    desc = dml.SplitOperatorDesc(x, (dml.TensorDesc("FLOAT32", [1, 1]), dml.TensorDesc("FLOAT32", [1, 1])), 1)
    data = np.array([[np.nan, 1.0]], np.float32)
    left, right = data[:, :1].copy(), data[:, 1:].copy()
    other = left.copy()
    other.view(np.uint32)[0, 0] ^= 1
    with pytest.raises(AssertionError, match="SPLIT output 0"):
        compare(desc, dml.FeatureLevel.LEVEL_6_4, [data], {"cpu-small": [left, right], "gpu": [other, right]},
                "cpu-small")
    with pytest.raises(AssertionError, match=r"SPLIT output 0 on gpu against cpu-small: nan \(bits 0x7fc00001\) "
                                             r"where the baseline has nan \(bits 0x7fc00000\) at \[0, 0\]"):
        assert_same_bits("SPLIT output 0 on gpu against cpu-small", other, left)
