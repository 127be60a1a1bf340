"""Outputs: a 64-bit output whose TotalTensorSizeInBytes is not a multiple of 8 runs on every backend, and a
dispatch that fails writes no output.

A 64-bit tensor's DMLCalcBufferTensorSize is a multiple of 8, but TotalTensorSizeInBytes need only be at least that
and a multiple of 4: with 4 bytes more, the bound range ends 4 bytes past the last element's end, bytes that no
element reaches and that must stay as they were (issue 30: the gpu read back the whole range into the caller's view
of its whole elements and raised NumPy's broadcast error, after writing the outputs before it).

The generic test covers every registered operator (`OperatorDesc.registry`), never a list kept here: for each type
among INT64, UINT64 and FLOAT64 that an output field of its support tables (the fields named Output...) lists at
some feature level, a valid descriptor with an output of that type is found with the operator's descriptor drawer
(strategies.draws_descriptors, as the differential fuzzer draws them; hypothesis `find`, derandomized, the smallest
one), every 64-bit output given TotalTensorSizeInBytes = DMLCalcBufferTensorSize + 4, and it is run between sentinel
bytes in host and in device memory and checked against the operator's oracle (test_fuzz_descriptors.check_outputs).
An operator registered later with such an output is covered with no new code here; one whose drawer finds no such
descriptor fails.

Failed dispatches: the same descriptors made to fail at the last step of a dispatch that can fail, on each backend's
side (the gpu: reading back its last host output, or making its last pass inside a batch; both: the binding of the
last output, and a debug device's refusal of an index), leave every output byte as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import fields, is_dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from strategies import addressed_byte_mask, build_buffer, descriptor_drawer, read_buffer, sentinel_bytes
from test_fuzz_descriptors import LEVELS, check_outputs
from test_fuzz_differential import draw_inputs

import opendml as dml
from opendml.support import describe

T = dml.TensorDesc
I64, U64, F32 = dml.DataType.INT64, dml.DataType.UINT64, dml.DataType.FLOAT32
WIDE_TYPES = (dml.DataType.INT64, dml.DataType.UINT64, dml.DataType.FLOAT64)
MEMORIES = ("host", "device")
#: Descriptors drawn per case (derandomized): hypothesis draws the simplest first (one element, one part).
DRAWS = 30
DRAW_SETTINGS = settings(max_examples=DRAWS, database=None, derandomize=True, deadline=None,
                         phases=[Phase.generate], suppress_health_check=list(HealthCheck))


# ---------------------------------------------------------------------------------------------------------------------
# The cases: every registered operator x every 64-bit type one of its output fields lists
# ---------------------------------------------------------------------------------------------------------------------


def own_tables(cls: type[dml.OperatorDesc]) -> list[Any]:
    """The operator's support tables (its own where its module lists one per operator, as the activations')."""
    tables = cls.support_tables()
    name = cls.OPERATOR_TYPE.name
    return [tables[name]] if name in tables else list(tables.values())


def wide_output_levels(cls: type[dml.OperatorDesc]) -> dict[dml.DataType, tuple[dml.FeatureLevel, ...]]:
    """Each 64-bit type that an output field lists, with the levels whose row in force lists it."""
    found: dict[dml.DataType, set[dml.FeatureLevel]] = {}
    for table in own_tables(cls):
        for level in LEVELS:
            row = describe(table, level)
            for field_name, support in (row or {}).items():
                if field_name.startswith("Output"):
                    for data_type in set(support.data_types) & set(WIDE_TYPES):
                        found.setdefault(data_type, set()).add(level)
    return {data_type: tuple(sorted(levels)) for data_type, levels in sorted(found.items())}


CASES = [(operator_type.name, data_type.name)
         for operator_type, cls in sorted(dml.OperatorDesc.registry.items(), key=lambda item: item[0].name)
         for data_type in wide_output_levels(cls)]


def awkward_total(tensor: dml.TensorDesc) -> int:
    """The smallest valid TotalTensorSizeInBytes that is not a multiple of 8: DMLCalcBufferTensorSize (a multiple of
    8 for a 64-bit tensor) rounded up to a multiple of 4, plus 4 where that is a multiple of 8."""
    total = -(-tensor.calc_size_in_bytes() // 4) * 4
    return total + 4 if total % 8 == 0 else total


def with_tensors(desc: dml.OperatorDesc, change: Callable[[dml.TensorDesc], dml.TensorDesc]) -> dml.OperatorDesc:
    """The descriptor with `change` applied to each of its tensors (in tuples too), fused operators' aside."""
    def changed(value: Any) -> Any:
        if isinstance(value, dml.TensorDesc):
            return change(value)
        if isinstance(value, tuple) and value and all(isinstance(item, dml.TensorDesc) for item in value):
            return tuple(change(item) for item in value)
        return value

    assert is_dataclass(desc)
    return replace(desc, **{f.name: changed(getattr(desc, f.name)) for f in fields(desc) if f.init})  # type: ignore


def with_awkward_outputs(desc: dml.OperatorDesc) -> dml.OperatorDesc:
    """The descriptor with every 64-bit output's TotalTensorSizeInBytes made `awkward_total`."""
    outputs = [tensor for _, tensor in desc.output_slots() if tensor.data_type in WIDE_TYPES]
    return with_tensors(desc, lambda tensor: replace(tensor, total_tensor_size_in_bytes=awkward_total(tensor))
                        if any(tensor is output for output in outputs) else tensor)


def retyped(desc: dml.OperatorDesc, data_type: dml.DataType) -> dml.OperatorDesc:
    """The descriptor with every tensor of its first output's type made `data_type` (its sizes and strides kept,
    its total recomputed), so that a drawn descriptor of any type becomes one of the type wanted: the operator's
    validation says whether it still holds."""
    source = desc.output_slots()[0][1].data_type
    result = with_tensors(desc, lambda tensor: replace(tensor, data_type=data_type, total_tensor_size_in_bytes=None)
                          if tensor.data_type == source else tensor)
    if hasattr(result, "value_data_type"):   # a generator's scalar unions follow its output's type (1: any type's)
        scalars = [name for name in ("value", "value_start", "value_delta") if hasattr(result, name)]
        result = replace(result, value_data_type=data_type, **dict.fromkeys(scalars, 1))  # type: ignore[type-var]
    return result


def richness(case: tuple[dml.FeatureLevel, dml.OperatorDesc]) -> tuple[int, int]:
    """(tensors, elements of the 64-bit outputs): a case is the richest descriptor drawn, so that SPLIT has several
    outputs, JOIN several inputs (several passes on the gpu), and outputs several elements."""
    desc = case[1]
    tensors = [tensor for _, tensor in [*desc.input_slots(), *desc.output_slots()] if tensor is not None]
    return len(tensors), sum(tensor.element_count for _, tensor in desc.output_slots()
                             if tensor.data_type in WIDE_TYPES)


#: (operator, type name) -> (level, descriptor): the descriptors depend on no backend, so they are found once per
#: process (a plain dict: conftest clears the modules' functools caches when the backend changes).
_FOUND: dict[tuple[str, str], tuple[dml.FeatureLevel, dml.OperatorDesc]] = {}


def awkward_case(operator: str, type_name: str) -> tuple[dml.FeatureLevel, dml.OperatorDesc]:
    """(level, the richest of DRAWS descriptors the operator's drawer draws (derandomized), retyped, that have an
    output of the type and that the cpu accepts at the level), its 64-bit outputs awkward."""
    key = (operator, type_name)
    if key not in _FOUND:
        cls = dml.OperatorDesc.registry[dml.OperatorType[operator]]
        data_type = dml.DataType[type_name]
        drawer = descriptor_drawer(cls)
        assert drawer is not None, f"{operator} has no descriptor drawer (strategies.draws_descriptors)"
        drawn = st.sampled_from(wide_output_levels(cls)[data_type]).flatmap(
            lambda level: st.tuples(st.just(level), drawer(cls, level).map(lambda desc: retyped(desc, data_type))))
        found: list[tuple[dml.FeatureLevel, dml.OperatorDesc]] = []

        @DRAW_SETTINGS
        @given(drawn)
        def collect(case: tuple[dml.FeatureLevel, dml.OperatorDesc]) -> None:
            level, desc = case
            if not any(tensor.data_type == data_type for _, tensor in desc.output_slots()):
                return
            try:
                accepting_device("cpu", level).create_operator(with_awkward_outputs(desc))
            except (dml.ValidationError, dml.UnsupportedError):
                return
            found.append(case)

        collect()
        assert found, f"{operator}: none of {DRAWS} descriptors drawn has a valid {type_name} output"
        level, desc = max(found, key=richness)
        _FOUND[key] = (level, with_awkward_outputs(desc))
    return _FOUND[key]


@cache
def accepting_device(backend: str, level: dml.FeatureLevel) -> dml.Device:
    return dml.Device(feature_level=level, backend=backend)


def test_every_case_has_an_awkward_64_bit_output() -> None:
    """The cases come from the registry and the support tables: the operators known to have 64-bit outputs are
    among them, and each found descriptor has an output of its type whose total is 4 bytes past a multiple of 8."""
    operators = {operator for operator, _ in CASES}
    assert {"SPLIT", "JOIN", "ARGMAX", "ARGMIN", "REDUCE", "ONE_HOT", "GATHER_ND1"} <= operators
    for operator, type_name in CASES:
        _, desc = awkward_case(operator, type_name)
        wide = [tensor for _, tensor in desc.output_slots() if tensor.data_type.name == type_name]
        assert wide and all(tensor.total_tensor_size_in_bytes % 8 == 4 for tensor in wide), (operator, desc)


# ---------------------------------------------------------------------------------------------------------------------
# Running a descriptor between sentinel bytes
# ---------------------------------------------------------------------------------------------------------------------


class Run:
    """A descriptor bound on `device` over fresh buffers in host or device memory: each input's data at its strides
    and each output's range (from byte 16, its TotalTensorSizeInBytes long) between sentinel bytes."""

    def __init__(self, device: dml.Device, desc: dml.OperatorDesc, inputs: Sequence[np.ndarray | None],
                 memory: str) -> None:
        self.desc, self.memory, self.device = desc, memory, device
        self.compiled = device.compile_operator(device.create_operator(desc))
        self.inputs: list[dml.Binding | None] = []
        for (_, tensor), array in zip(desc.input_slots(), inputs, strict=True):
            if tensor is None or array is None:
                self.inputs.append(None)
                continue
            raw = build_buffer(array, tensor.strides, byte_offset=16, tail_bytes=12, seed=5)
            self.inputs.append(dml.Binding(self._buffer(raw), offset=16))
        self.before = [sentinel_bytes(16 + tensor.total_tensor_size_in_bytes + 12, seed=index + 1)
                       for index, (_, tensor) in enumerate(desc.output_slots())]
        self.outputs = [dml.Binding(self._buffer(data), offset=16) for data in self.before]

    def _buffer(self, data: np.ndarray) -> Any:
        return self.device.create_buffer(data) if self.memory == "device" else data.copy()

    def execute(self, last_output_size: int | None = None) -> None:
        outputs = list(self.outputs)
        if last_output_size is not None:
            outputs[-1] = dml.Binding(outputs[-1].buffer, offset=16, size=last_output_size)
        self.compiled.execute(self.inputs, outputs)

    def after(self) -> list[np.ndarray]:
        """Each output buffer's bytes now."""
        return [np.frombuffer(binding.buffer.read(), np.uint8) if self.memory == "device" else binding.buffer
                for binding in self.outputs]

    def results(self) -> list[np.ndarray]:
        """The logical outputs, once no byte outside an output's elements has changed."""
        results = []
        for (name, tensor), before, after in zip(self.desc.output_slots(), self.before, self.after(), strict=True):
            itemsize = tensor.data_type.numpy_dtype.itemsize
            written = addressed_byte_mask(after.size, itemsize, tensor.sizes, tensor.strides, byte_offset=16)
            changed = np.flatnonzero((after != before) & ~written)
            assert changed.size == 0, f"{self.desc.label}: bytes outside {name}'s elements changed: {changed.tolist()}"
            results.append(read_buffer(after, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides,
                                       byte_offset=16))
        return results

    def assert_untouched(self) -> None:
        for (name, _), before, after in zip(self.desc.output_slots(), self.before, self.after(), strict=True):
            changed = np.flatnonzero(after != before)
            assert changed.size == 0, f"{self.desc.label}: {name} was written at bytes {changed[:16].tolist()}"


# ---------------------------------------------------------------------------------------------------------------------
# Goldens: the two descriptors
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("memory", MEMORIES)
def test_split_int64_into_an_output_of_20_bytes(memory: str) -> None:
    """Issue 30: SPLIT of INT64 [4] into [2] and [2], the second with TotalTensorSizeInBytes 20 (16 needed)."""
    x = np.array([7, -1, 2**40 + 3, -(2**62)], np.int64)
    desc = dml.SplitOperatorDesc(T(I64, [4]), (T(I64, [2]), T(I64, [2], total_tensor_size_in_bytes=20)), 0)
    run = Run(dml.Device(), desc, [x], memory)
    run.execute()
    first, second = run.results()
    assert first.tolist() == [7, -1]
    assert second.tolist() == [2**40 + 3, -(2**62)]


@pytest.mark.parametrize("memory", MEMORIES)
def test_argmax_into_a_uint64_output_of_12_bytes(memory: str) -> None:
    """Issue 30: ARGMAX of FLOAT32 [2, 3] along axis 1 into UINT64 [2, 1] with TotalTensorSizeInBytes 20 (16
    needed), and of [3] into UINT64 [1] with 12 (8 needed)."""
    desc = dml.ArgMaxOperatorDesc(T(F32, [2, 3]), T(U64, [2, 1], total_tensor_size_in_bytes=20), (1,))
    run = Run(dml.Device(), desc, [np.array([[1, 5, 2], [9, -3, 9]], np.float32)], memory)
    run.execute()
    assert run.results()[0].tolist() == [[1], [0]]
    desc = dml.ArgMaxOperatorDesc(T(F32, [3]), T(U64, [1], total_tensor_size_in_bytes=12), (0,))
    run = Run(dml.Device(), desc, [np.array([-2, -1, -1.5], np.float32)], memory)
    run.execute()
    assert run.results()[0].tolist() == [1]


# ---------------------------------------------------------------------------------------------------------------------
# Every registered operator with a 64-bit output
# ---------------------------------------------------------------------------------------------------------------------


def case_inputs(desc: dml.OperatorDesc, seed: int = 0) -> list[np.ndarray | None]:
    return draw_inputs(desc, np.random.default_rng(seed), "wide")


@pytest.mark.parametrize(("operator", "type_name"), CASES)
def test_awkward_64_bit_outputs_of_every_operator(operator: str, type_name: str) -> None:
    level, desc = awkward_case(operator, type_name)
    inputs = case_inputs(desc)
    for memory in MEMORIES:
        run = Run(dml.Device(feature_level=level), desc, inputs, memory)
        run.execute()
        check_outputs(desc, level, inputs, run.results())


# ---------------------------------------------------------------------------------------------------------------------
# A failed dispatch writes no output
# ---------------------------------------------------------------------------------------------------------------------


class InjectedFailure(Exception):
    """The failure a test makes a step of the dispatch raise."""


@contextmanager
def failing(owner: Any, name: str, monkeypatch: pytest.MonkeyPatch, at: int | None) -> Iterator[list[int]]:
    """Counts the calls of `owner.name` in the block (the list yielded holds the count) and makes the `at`-th raise
    InjectedFailure (none where `at` is None)."""
    original = getattr(owner, name)
    calls = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == at:
            raise InjectedFailure(f"{name} call {at}")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    try:
        yield calls
    finally:
        monkeypatch.setattr(owner, name, original)


def fail_last_call(make_run: Callable[[], Run], owner: Any, name: str, monkeypatch: pytest.MonkeyPatch,
                   batch: bool) -> None:
    """Runs the dispatch once counting the calls of `owner.name`, then on fresh buffers makes the last of them raise:
    no output may have been written (inside a batch: once the batch has ended and submitted what it holds)."""
    probe = make_run()
    with failing(owner, name, monkeypatch, None) as calls:
        probe.execute()
    assert calls[0] > 0, f"{name} was never called"
    run = make_run()
    with failing(owner, name, monkeypatch, calls[0]), pytest.raises(InjectedFailure), \
            run.device.batch() if batch else nullcontext():
        run.execute()
    run.assert_untouched()


def failure_case(operator: str) -> tuple[dml.FeatureLevel, dml.OperatorDesc]:
    """The operator's richest case."""
    return max((awkward_case(name, type_name) for name, type_name in CASES if name == operator), key=richness)


def test_failure_cases_with_several_parts() -> None:
    assert len(failure_case("SPLIT")[1].output_slots()) >= 2
    assert len(failure_case("JOIN")[1].input_slots()) >= 2


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("operator", sorted({operator for operator, _ in CASES}))
def test_a_dispatch_failing_at_its_last_step_writes_no_output(backend: str, operator: str, memory: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each backend's last steps that can fail. Both: the last output's binding (a size below its total), checked
    with every other rule before the kernel runs. The gpu: reading back the last host output (every host output is
    read back before any is copied into the caller's memory), and making the kernel's last pass inside a batch
    (every pass is made before any is recorded, else the batch would submit the ones before it). The cpu's kernels
    write the caller's memory themselves and raise nothing once they write (a debug device's checks come first:
    test_a_debug_refusal_writes_no_output)."""
    level, desc = failure_case(operator)
    inputs = case_inputs(desc)
    device = dml.Device(feature_level=level)

    def make_run() -> Run:
        return Run(device, desc, inputs, memory)

    run = make_run()
    last_name, last = desc.output_slots()[-1]
    total = last.total_tensor_size_in_bytes
    message = f"{desc.label}: {last_name} binding size is {total - 4} bytes; it must be at least TotalTensorSizeInBytes"
    with pytest.raises(dml.BindingError, match=re.escape(f"{message} ({total})")):
        run.execute(last_output_size=total - 4)
    run.assert_untouched()
    if backend == "gpu":
        from opendml.backends.gpu.context import GpuContext

        if memory == "host":
            fail_last_call(make_run, GpuContext, "read", monkeypatch, batch=False)
        else:
            fail_last_call(make_run, GpuContext, "bind_group", monkeypatch, batch=True)


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("type_name", ["INT64", "UINT64", "FLOAT64"])
def test_a_debug_refusal_writes_no_output(memory: str, type_name: str) -> None:
    """A debug device refuses GATHER_ND1 with an index out of range in the last tuple, before anything is written
    (every backend checks the indices first); the output is 64-bit with an awkward total."""
    data_type = dml.DataType[type_name]
    desc = dml.GatherNd1OperatorDesc(T(data_type, [1, 3]), T(dml.DataType.INT32, [2, 1]),
                                     T(data_type, [1, 2], total_tensor_size_in_bytes=20), 1, 2, 0)
    data = np.array([[4, 5, 6]]).astype(data_type.numpy_dtype)
    run = Run(dml.Device(debug=True), desc, [data, np.array([[0], [3]], np.int32)], memory)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_GATHER_ND1: "):
        run.execute()
    run.assert_untouched()
