"""Memory fuzzing: adversarial bindings and descriptors against small buffers, and dispatches between guard pages.

1. Bindings (in-process): one compiled operator of each kind, bound to random buffers (too small, read-only,
   non-contiguous, not buffers at all), offsets (at and past the end, unaligned, negative, 2^64, not integers), sizes
   (one byte short, 2^64, negative) and binding lists of the wrong length or type. The dispatch either runs, exactly
   when an independent model of the binding rules (DECISIONS 5) says every binding is valid, or raises BindingError
   (ValidationError) before the kernel is entered, with every buffer bit-identical.
2. Descriptors: strides reaching one element past TotalTensorSizeInBytes, sizes whose product overflows 64 bits,
   last elements at 2^32: refused by create_operator, so no binding can ever be checked against a wrong size.
3. Guard pages (a subprocess, so that a fault fails the test instead of killing pytest; one per backend, each on
   its own kernels: numba's for every tensor, the small-tensor kernels, the gpu's specialized shaders and, with half
   the examples, its generic ones): every tensor of a valid descriptor lies in an mmap region flanked by
   PROT_NONE pages, touching one of them; inputs are made read-only (PROT_READ)
   after their data is written. Any read or write outside the bound ranges, and any write to an input,
   faults (SIGSEGV). The outputs must match the oracles; adversarial bindings against the same regions must raise.
   On numba's kernels, gathers that read their batch's input region through first run with the input ending at its
   guard page.

Examples: MEMORY_EXAMPLES per operator (OPENDML_MEMORY_EXAMPLES; 20,000 bindings / 2,000 guarded dispatches with
HYPOTHESIS_PROFILE=slow; 100 / 25 otherwise).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_fuzz_descriptors import (
    BASES,
    check_outputs,
    gather_out_of_range,
    logical_inputs,
    valid_descriptor,
)

import opendml as dml

SLOW = os.environ.get("HYPOTHESIS_PROFILE") == "slow"
MEMORY_EXAMPLES = int(os.environ.get("OPENDML_MEMORY_EXAMPLES", 20_000 if SLOW else 100))
GUARDED_EXAMPLES = int(os.environ.get("OPENDML_GUARDED_EXAMPLES", 2_000 if SLOW else 25))
#: The gpu backend's generic shaders (`gpu-generic`) run the guarded dispatches with this many times fewer examples,
#: for CI's time (the specialized ones, `gpu`, run them all).
GENERIC_FEWER = 2
ALIGNMENT = 16

# ---------------------------------------------------------------------------------------------------------------------
# One compiled operator of each kind, strided where the operator allows it
# ---------------------------------------------------------------------------------------------------------------------

F32, U32, I64 = dml.DataType.FLOAT32, dml.DataType.UINT32, dml.DataType.INT64
U8 = dml.DataType.UINT8


def _operators() -> dict[str, dml.OperatorDesc]:
    T = dml.TensorDesc
    return {
        "REDUCE": dml.ReduceOperatorDesc("SUM", T(F32, [3, 4], [8, 2]), T(F32, [3, 1]), [1]),
        "SPLIT": dml.SplitOperatorDesc(T(F32, [2, 5]), [T(F32, [2, 2]), T(F32, [2, 3], [4, 1])], 1),
        "ONE_HOT": dml.OneHotOperatorDesc(T(U32, [3, 1]), T(F32, [1, 2]), T(F32, [3, 4]), 1),
        "GATHER_ND1": dml.GatherNd1OperatorDesc(T(F32, [3, 2]), T(I64, [2, 1]), T(F32, [2, 2]), 2, 2, 0),
        "MEAN_VARIANCE_NORMALIZATION1": dml.MeanVarianceNormalization1OperatorDesc(
            T(F32, [1, 2, 3]), T(F32, [1, 2, 1]), None, T(F32, [1, 2, 3], [12, 6, 2]), [2], True, 1e-5,
            dml.ActivationEluOperatorDesc(0.5)),
        "JOIN": dml.JoinOperatorDesc([T(F32, [2, 2]), T(F32, [2, 3], [4, 1])], T(F32, [2, 5], [8, 1]), 1),
        "ARGMAX": dml.ArgMaxOperatorDesc(T(F32, [3, 4], [8, 2]), T(U32, [3, 1]), [1], "DECREASING"),
        "GATHER_ND": dml.GatherNdOperatorDesc(T(F32, [3, 2]), T(U32, [2, 1]), T(F32, [2, 2]), 2, 2),
        "GATHER": dml.GatherOperatorDesc(T(F32, [3, 2], [1, 4]), T(I64, [1, 3]), T(F32, [3, 3], [8, 2]), 1, 1),
        "GATHER_ELEMENTS": dml.GatherElementsOperatorDesc(T(F32, [3, 2]), T(U32, [3, 4], [0, 1]), T(F32, [3, 4]), 1),
        "SCATTER_ELEMENTS": dml.ScatterElementsOperatorDesc(T(F32, [3, 4], [1, 4]), T(I64, [2, 4], [0, 1]),
                                                            T(F32, [2, 4]), T(F32, [3, 4], [5, 1]), 0),
        "SCATTER_ND": dml.ScatterNdOperatorDesc(T(U8, [4, 3]), T("INT32", [2, 1], [2, 1]), T(U8, [2, 3]),
                                                T(U8, [4, 3], [4, 1]), 2, 2),
        "NONZERO_COORDINATES": dml.NonzeroCoordinatesOperatorDesc(T(F32, [1, 2, 1, 3], [0, 1, 8, 2]), T(U32, [1] * 4),
                                                                  T(U32, [1, 1, 6, 3], [1, 1, 1, 8])),
        "TOP_K1": dml.TopK1OperatorDesc(T(F32, [3, 5], [1, 4]), T(F32, [3, 2], [1, 3]), T(U32, [3, 2], [3, 1]), 1, 2,
                                        "INCREASING"),
        "MEAN_VARIANCE_NORMALIZATION": dml.MeanVarianceNormalizationOperatorDesc(
            T(F32, [1, 2, 1, 3]), None, T(F32, [1, 2, 1, 1]), T(F32, [1, 2, 1, 3], [12, 6, 6, 2]), True, True, 1e-5),
        "ACTIVATION_SCALED_TANH": dml.ActivationScaledTanhOperatorDesc(
            input_tensor=T(F32, [3, 4], [0, 1]), output_tensor=T(F32, [3, 4], [8, 2])),
    }


OPERATORS = _operators()


@cache
def compiled_operator(name: str, debug: bool = False) -> dml.CompiledOperator:
    device = dml.Device(debug=debug)
    return device.compile_operator(device.create_operator(OPERATORS[name]))


# ---------------------------------------------------------------------------------------------------------------------
# Adversarial bindings, and the independent model of the binding rules
# ---------------------------------------------------------------------------------------------------------------------

OFFSETS = st.one_of(st.integers(0, 8).map(lambda k: k * ALIGNMENT), st.integers(0, 200),
                    st.sampled_from((-16, -1, 2**63, 2**64, 2**64 - 16, 1.5, True, None, "0", 16.0)))
SIZES = st.one_of(st.none(), st.integers(0, 200), st.sampled_from((-1, 2**63, 2**64, 1.0, False, "64")))


@st.composite
def adversarial_buffer(draw: st.DrawFn, total: int) -> Any:
    kind = draw(st.sampled_from(("ndarray", "ndarray", "bytearray", "bytes", "memoryview", "strided", "2d", "float64",
                                 "readonly", "list", "int", "none", "str", "empty")))
    length = draw(st.one_of(st.integers(0, total + 64), st.sampled_from((total - 1, total, total + 15, total + 16))))
    length = max(length, 0)
    fill = draw(st.integers(0, 255))
    if kind == "ndarray":
        return np.full(length, fill, np.uint8)
    if kind == "bytearray":
        return bytearray([fill]) * length
    if kind == "bytes":
        return bytes([fill]) * length
    if kind == "memoryview":
        return memoryview(bytearray([fill]) * length)
    if kind == "strided":
        return np.full(2 * length, fill, np.uint8)[::2]
    if kind == "2d":
        return np.full((2, max(length // 2, 1)), fill, np.uint8)
    if kind == "float64":
        return np.full(max(length // 8, 1), fill, np.float64)
    if kind == "readonly":
        array = np.full(length, fill, np.uint8)
        array.flags.writeable = False
        return array
    return {"list": [0] * 8, "int": 1234, "none": None, "str": "x" * 64, "empty": np.zeros(0, np.uint8)}[kind]


def _contiguous_bytes(buffer: Any) -> np.ndarray | None:
    try:
        return np.frombuffer(buffer, np.uint8)
    except (TypeError, ValueError, BufferError):
        return None


def binding_valid(binding: Any, desc: dml.TensorDesc, *, output: bool) -> tuple[bool, tuple[int, int] | None]:
    """DECISIONS 5, written out again: (valid, (start address, end address))."""
    if type(binding) is not dml.Binding:
        return False, None
    whole = _contiguous_bytes(binding.buffer)
    if whole is None or (output and not whole.flags.writeable):
        return False, None
    offset, size = binding.offset, binding.size
    if size is None:
        size = desc.total_tensor_size_in_bytes
    for value in (offset, size):
        if type(value) is not int or value < 0:
            return False, None
    alignment = max(ALIGNMENT, desc.guaranteed_base_offset_alignment)
    if offset % alignment or size < desc.total_tensor_size_in_bytes or offset + size > whole.size:
        return False, None
    start = whole.__array_interface__["data"][0] + offset
    return True, (start, start + size)


def bindings_valid(compiled: dml.CompiledOperator, inputs: Any, outputs: Any) -> bool:
    desc = compiled.desc
    slots_in, slots_out = desc.input_slots(), desc.output_slots()
    if type(inputs) not in (list, tuple) or type(outputs) not in (list, tuple):
        return False
    if len(inputs) != len(slots_in) or len(outputs) != len(slots_out):
        return False
    ranges = []
    for (_, tensor), binding in zip(slots_in, inputs, strict=True):
        if tensor is None:
            if binding is not None:
                return False
            continue
        valid, extent = binding_valid(binding, tensor, output=False)
        if not valid:
            return False
        assert extent is not None
        ranges.append((extent, False))
    for (_, tensor), binding in zip(slots_out, outputs, strict=True):
        valid, extent = binding_valid(binding, tensor, output=True)
        if not valid:
            return False
        assert extent is not None
        ranges.append((extent, True))
    for index, ((start, end), is_output) in enumerate(ranges):
        for (other_start, other_end), other_output in ranges[index + 1:]:
            if (is_output or other_output) and start < other_end and other_start < end and start < end:
                return False
    return True


def _is_uint64(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**64


@st.composite
def adversarial_bindings(draw: st.DrawFn, compiled: dml.CompiledOperator) -> tuple[Any, Any]:
    desc = compiled.desc

    def one(tensor: dml.TensorDesc | None) -> Any:
        if tensor is None:
            return draw(st.sampled_from((None, None, None, dml.Binding(bytearray(64)))))
        choice = draw(st.integers(0, 9))
        if choice == 0:
            return draw(st.sampled_from((None, (bytearray(64), 0), bytearray(64), "buffer")))
        total = tensor.total_tensor_size_in_bytes
        buffer = draw(adversarial_buffer(total))
        offset, size = draw(OFFSETS), draw(SIZES)
        try:
            return dml.Binding(buffer, offset=offset, size=size)
        except dml.ValidationError:
            # DML_BUFFER_BINDING's Offset and SizeInBytes are UINT64s: a value no UINT64 holds is refused when the
            # Binding is made (and only such a value), so the dispatch gets no Binding in that slot.
            assert not (_is_uint64(offset) and (size is None or _is_uint64(size)))
            return "a refused Binding"

    inputs: Any = [one(tensor) for _, tensor in desc.input_slots()]
    outputs: Any = [one(tensor) for _, tensor in desc.output_slots()]
    shape = draw(st.integers(0, 9))
    if shape == 0:
        inputs = inputs[:-1] if draw(st.booleans()) else [*inputs, None]
    elif shape == 1:
        outputs = tuple(outputs) if draw(st.booleans()) else outputs[1:]
    elif shape == 2 and outputs and inputs and isinstance(inputs[0], dml.Binding):
        outputs[0] = inputs[0]   # the output aliases the input
    return inputs, outputs


def _snapshot(bindings: Sequence[Any]) -> list[bytes | None]:
    result: list[bytes | None] = []
    for binding in bindings:
        data = _contiguous_bytes(binding.buffer) if isinstance(binding, dml.Binding) else None
        result.append(None if data is None else data.tobytes())
    return result


class KernelSpy:
    """Wraps a compiled operator's kernel to see whether a dispatch reached it."""

    def __init__(self, compiled: dml.CompiledOperator) -> None:
        self.compiled, self.calls = compiled, 0
        self.kernel: Callable[..., None] = compiled._kernel

    def __enter__(self) -> KernelSpy:
        def spy(inputs: Any, outputs: Any) -> None:
            self.calls += 1
            self.kernel(inputs, outputs)

        self.compiled._kernel = spy
        return self

    def __exit__(self, *exc: object) -> None:
        self.compiled._kernel = self.kernel


MEMORY_SETTINGS = settings(max_examples=MEMORY_EXAMPLES, deadline=None, database=None,
                           suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("operator", sorted(OPERATORS))
@MEMORY_SETTINGS
@given(data=st.data())
def test_adversarial_bindings(operator: str, data: st.DataObject) -> None:
    compiled = compiled_operator(operator)
    inputs, outputs = data.draw(adversarial_bindings(compiled))
    expected_valid = bindings_valid(compiled, inputs, outputs)
    note(f"valid by the model: {expected_valid}")
    all_bindings = [*(inputs if isinstance(inputs, (list, tuple)) else []),
                    *(outputs if isinstance(outputs, (list, tuple)) else [])]
    before = _snapshot(all_bindings)
    input_count = len(inputs) if isinstance(inputs, (list, tuple)) else 0
    with KernelSpy(compiled) as spy:
        try:
            compiled.execute(inputs, outputs)
        except (dml.BindingError, dml.ValidationError) as error:
            note(f"refused: {error}")
            assert not expected_valid, f"refused a valid dispatch: {error}"
            assert spy.calls == 0, "the kernel ran before the binding error"
            assert _snapshot(all_bindings) == before, "a refused dispatch changed a buffer"
            return
    assert expected_valid, "a dispatch ran with bindings the rules refuse"
    assert spy.calls == 1
    after = _snapshot(all_bindings)
    assert after[:input_count] == before[:input_count], "an input buffer changed"


def test_binding_model_agrees_on_plain_cases() -> None:
    compiled = compiled_operator("ONE_HOT")
    good = ([dml.Binding(np.zeros(16, np.uint8)), dml.Binding(np.zeros(16, np.uint8))],
            [dml.Binding(np.zeros(48, np.uint8))])
    assert bindings_valid(compiled, *good)
    compiled.execute(*good)
    short = ([dml.Binding(np.zeros(11, np.uint8)), dml.Binding(np.zeros(8, np.uint8))],
             [dml.Binding(np.zeros(48, np.uint8))])
    assert not bindings_valid(compiled, *short)
    with pytest.raises(dml.BindingError, match="holds 11 bytes"):
        compiled.execute(*short)


# ---------------------------------------------------------------------------------------------------------------------
# Descriptors that would reach past their own size
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "message"), [
    # a stride that reaches one element past TotalTensorSizeInBytes
    (lambda: dml.TensorDesc(F32, [2, 3], [4, 1], total_tensor_size_in_bytes=24), "at least 28"),
    (lambda: dml.TensorDesc(F32, [4], [2], total_tensor_size_in_bytes=24), "at least 28"),
    (lambda: dml.TensorDesc(dml.DataType.UINT8, [5], total_tensor_size_in_bytes=4), "at least 8"),
    # sizes whose product (or last index) overflows 64 bits
    (lambda: dml.TensorDesc(F32, [2**32 - 1] * 3), "below 2\\^32"),
    (lambda: dml.TensorDesc(F32, [2**32 - 1] * 8, [2**32 - 1] * 8), "below 2\\^32"),
    (lambda: dml.TensorDesc(F32, [2, 2**31 + 1], [2**31, 1]), "below 2\\^32"),
    (lambda: dml.TensorDesc(F32, [3, 2**32 - 1], [1, 1]), "at index 4294967296"),
])
def test_descriptors_reaching_past_their_size_are_refused(build: Callable[[], dml.TensorDesc], message: str) -> None:
    tensor = build()
    desc = dml.SplitOperatorDesc(tensor, [dml.TensorDesc(tensor.data_type, tensor.sizes)], tensor.dimension_count - 1)
    with pytest.raises(dml.ValidationError, match=message):
        dml.Device().create_operator(desc)


@settings(max_examples=MEMORY_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(sizes=st.lists(st.one_of(st.integers(1, 8), st.sampled_from((2**16, 2**31, 2**32 - 1))), min_size=1,
                      max_size=8),
       data=st.data())
def test_accepted_tensors_fit_their_size(sizes: list[int], data: st.DataObject) -> None:
    """Whatever the sizes and strides, an accepted tensor's last element lies inside TotalTensorSizeInBytes."""
    strides = data.draw(st.lists(st.one_of(st.integers(0, 8), st.sampled_from((2**16, 2**31, 2**32 - 1))),
                                 min_size=len(sizes), max_size=len(sizes)))
    data_type = data.draw(st.sampled_from((F32, dml.DataType.UINT8, dml.DataType.FLOAT64, dml.DataType.FLOAT16)))
    total = data.draw(st.one_of(st.none(), st.integers(0, 2**40).map(lambda v: v * 4)))
    try:
        tensor = dml.TensorDesc(data_type, sizes, strides, total_tensor_size_in_bytes=total)
        dml.Device().create_operator(dml.SplitOperatorDesc(tensor, [dml.TensorDesc(data_type, sizes)], 0))
    except dml.ValidationError:
        return
    except dml.UnsupportedError as error:   # valid, but beyond what the gpu backend binds at once
        assert re.search(r"TotalTensorSizeInBytes is \d+; .*max-storage-buffer-binding-size \(\d+ bytes\)",
                         str(error)), error
    last = sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    assert last < 2**32
    assert (last + 1) * data_type.element_size <= tensor.total_tensor_size_in_bytes


# ---------------------------------------------------------------------------------------------------------------------
# Guard pages
# ---------------------------------------------------------------------------------------------------------------------

PAGE = mmap.PAGESIZE
PROT_NONE = 0   # <sys/mman.h>; the mmap module names PROT_READ and PROT_WRITE only
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def _protect(address: int, length: int, protection: int) -> None:
    if _libc.mprotect(address, length, protection) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")


class GuardedRegion:
    """`nbytes` usable bytes between two PROT_NONE pages; the bytes touch the page after them (at_end) or the page
    before them. `freeze()` makes the usable pages read-only."""

    def __init__(self, nbytes: int, *, at_end: bool) -> None:
        pages = max(1, -(-nbytes // PAGE))
        self.map = mmap.mmap(-1, (pages + 2) * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self._anchor = ctypes.c_char.from_buffer(self.map)   # keeps the mapping (and its address) alive
        self.base = ctypes.addressof(self._anchor)
        self.pages = pages
        _protect(self.base, PAGE, PROT_NONE)
        _protect(self.base + (pages + 1) * PAGE, PAGE, PROT_NONE)
        start = PAGE + (pages * PAGE - nbytes if at_end else 0)
        self.array = np.frombuffer(self.map, np.uint8, count=nbytes, offset=start)

    def freeze(self) -> None:
        _protect(self.base + PAGE, self.pages * PAGE, mmap.PROT_READ)


def _place(data: np.ndarray, tensor: dml.TensorDesc, offset: int, at_end: bool) -> tuple[GuardedRegion, dml.Binding]:
    """A guarded region holding a tensor's buffer bytes from `offset`; it ends exactly where the tensor's
    TotalTensorSizeInBytes does."""
    region = GuardedRegion(offset + tensor.total_tensor_size_in_bytes, at_end=at_end)
    region.array[:] = 0xA5
    region.array[offset:offset + data.size] = data
    return region, dml.Binding(region.array, offset=offset)


def _raw(desc: dml.TensorDesc, logical: np.ndarray) -> np.ndarray:
    """The tensor's buffer bytes (TotalTensorSizeInBytes) holding `logical` at its strides, gaps 0xA5."""
    from strategies import build_buffer

    raw = build_buffer(logical, desc.strides, tail_bytes=0)
    result = np.full(desc.total_tensor_size_in_bytes, 0xA5, np.uint8)
    result[:raw.size] = raw
    return result


def guarded_dispatch(level: dml.FeatureLevel, desc: dml.OperatorDesc, seed: int, layout: int) -> None:
    """Dispatches `desc` with every tensor between guard pages (inputs read-only), then checks the outputs; then
    tries bindings that reach one byte into the guard page, which must be refused."""
    from strategies import read_buffer

    device = dml.Device(feature_level=level)
    compiled = device.compile_operator(device.create_operator(desc))
    rng = np.random.default_rng(seed)
    logical = logical_inputs(desc, rng)
    if isinstance(desc, (dml.GatherNd1OperatorDesc, dml.GatherOperatorDesc, dml.GatherElementsOperatorDesc,
                         dml.ScatterElementsOperatorDesc, dml.ScatterNdOperatorDesc)):
        assert not device.debug or not gather_out_of_range(desc, logical)
    regions, inputs = [], []
    for index, ((_, tensor), array) in enumerate(zip(desc.input_slots(), logical, strict=True)):
        if tensor is None or array is None:
            inputs.append(None)
            continue
        offset = ALIGNMENT * ((layout >> index) % 3)
        region, binding = _place(_raw(tensor, array), tensor, offset, at_end=bool((layout >> (index + 3)) & 1))
        region.freeze()
        regions.append(region)
        inputs.append(binding)
    outputs = []
    for index, (_, tensor) in enumerate(desc.output_slots()):
        offset = ALIGNMENT * ((layout >> (index + 6)) % 2)
        region, binding = _place(np.zeros(0, np.uint8), tensor, offset, at_end=bool((layout >> (index + 8)) & 1))
        regions.append(region)
        outputs.append(binding)
    compiled.execute(inputs, outputs)
    results = [read_buffer(binding.buffer, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides,
                           byte_offset=binding.offset) for (_, tensor), binding in zip(desc.output_slots(), outputs,
                                                                                         strict=True)]
    check_outputs(desc, level, logical, results)
    # The same regions, bound one byte (or one alignment step) too far: refused before any access.
    for position, binding in enumerate(outputs):
        for shifted in (dml.Binding(binding.buffer, offset=binding.offset + ALIGNMENT),
                        dml.Binding(binding.buffer, offset=binding.offset, size=binding.buffer.size - binding.offset
                                    + 1),
                        dml.Binding(binding.buffer, offset=binding.buffer.size)):
            bad = list(outputs)
            bad[position] = shifted
            with pytest.raises(dml.BindingError):
                compiled.execute(inputs, bad)


@st.composite
def guarded_case(draw: st.DrawFn, operator: str) -> tuple[dml.FeatureLevel, dml.OperatorDesc, int, int]:
    level, desc = draw(valid_descriptor(operator))
    return level, desc, draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 1023))


#: (input, indices, output, BatchDimensionCount) of gathers whose numba kernel reads each batch's input region
#: through before its random reads (gather_nd1._TOUCH_BYTES): packed, padded and transposed inputs, batched and not.
READ_THROUGH_GATHERS = [
    (dml.TensorDesc("FLOAT32", [4, 64, 64]), dml.TensorDesc("INT64", [4, 4096, 2]),
     dml.TensorDesc("FLOAT32", [1, 4, 4096]), 1),
    (dml.TensorDesc("UINT8", [3, 32, 48], [2100, 64, 1]), dml.TensorDesc("INT32", [3, 2048, 2]),
     dml.TensorDesc("UINT8", [1, 3, 2048]), 1),
    (dml.TensorDesc("INT16", [2, 40, 30], [1200, 1, 40]), dml.TensorDesc("UINT32", [2, 3000, 1]),
     dml.TensorDesc("INT16", [2, 3000, 30]), 1),
    (dml.TensorDesc("FLOAT64", [256, 8]), dml.TensorDesc("UINT64", [8192, 1]), dml.TensorDesc("FLOAT64", [8192, 8]),
     0),
]


def use_backend(backend: str) -> None:
    """What conftest's `backend` fixture does, in the subprocess: `cpu` runs numba's kernels on every tensor,
    `cpu-small` the small-tensor kernels, `gpu` the gpu backend's shaders specialized to each descriptor,
    `gpu-generic` its generic ones (as OPENDML_GPU_SPECIALIZE=0 gives)."""
    from conftest import backend_settings, gpu_specialized

    import opendml.backends.cpu
    import opendml.device

    device_backend, limits = backend_settings(backend)
    for limit, value in limits.items():
        setattr(opendml.backends.cpu, limit, value)
    opendml.device.DEFAULT_BACKEND = device_backend
    if not gpu_specialized(backend):
        import opendml.backends.gpu.specialize

        opendml.backends.gpu.specialize.ENABLED = False


def run_guarded(examples: int, backend: str) -> None:
    """The subprocess's work: GUARDED_EXAMPLES valid dispatches of each operator between guard pages, on the
    backend's kernels; on numba's, also the gathers that read their input regions through, each input ending at a
    guard page."""
    use_backend(backend)
    if backend == "cpu":
        from opendml.backends.cpu.gather_nd1 import _S_TOUCH

        for input_desc, indices_desc, output_desc, batch in READ_THROUGH_GATHERS:
            rank = input_desc.dimension_count
            desc = dml.GatherNd1OperatorDesc(input_desc, indices_desc, output_desc, rank, rank, batch)
            device = dml.Device()
            kernel = device.compile_operator(device.create_operator(desc))._kernel
            assert kernel._settings[_S_TOUCH] > 0, desc
            print(f"guarded read-through {desc!r}", flush=True)
            for layout in (0b1000, 0b1001, 0b1010):  # the input ends at its guard page, bound at 0, 16 and 32
                guarded_dispatch(device.feature_level, desc, layout, layout)
    for operator in sorted(BASES):
        print(f"guarded {operator}", flush=True)

        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(case=guarded_case(operator))
        def run(case: tuple[dml.FeatureLevel, dml.OperatorDesc, int, int]) -> None:
            level, desc, seed, layout = case
            print(f"  {level} layout={layout} seed={seed} {desc!r}", flush=True)
            guarded_dispatch(level, desc, seed, layout)

        run()
    print("done", flush=True)


def test_guard_pages_fault_on_stray_access() -> None:
    """The harness itself: reading just past a guarded region, or writing a frozen one, kills the process."""
    probe = (
        "import sys; sys.path.insert(0, {tests!r}); import test_fuzz_memory as m, numpy as np\n"
        "r = m.GuardedRegion(100, at_end={at_end}); r.array[:] = 1\n"
        "print('ok', flush=True)\n"
        "{access}\n"
    )
    tests = str(Path(__file__).parent)
    for at_end, access in ((True, "np.frombuffer(r.map, np.uint8)[m.PAGE + m.PAGE].copy()"),
                           (False, "np.frombuffer(r.map, np.uint8)[m.PAGE - 1].copy()"),
                           (True, "r.freeze(); r.array[0] = 2")):
        result = subprocess.run([sys.executable, "-c", probe.format(tests=tests, at_end=at_end, access=access)],
                                capture_output=True, text=True, timeout=120)
        assert result.stdout == "ok\n" and result.returncode == -11, (access, result)


def test_guarded_dispatches_in_a_subprocess(backend: str, request: pytest.FixtureRequest) -> None:
    name = request.node.callspec.params["backend"]   # cpu, cpu-small, gpu or gpu-generic, as the fixture sets them up
    examples = GUARDED_EXAMPLES if name != "gpu-generic" else max(1, GUARDED_EXAMPLES // GENERIC_FEWER)
    result = subprocess.run([sys.executable, __file__, "guarded", str(examples), name], capture_output=True,
                            text=True, timeout=1800, cwd=Path(__file__).parent.parent)
    tail = "\n".join(result.stdout.splitlines()[-6:])
    assert result.returncode == 0, f"exit status {result.returncode} (-11: a stray access faulted) after:\n{tail}\n" \
                                   f"{result.stderr[-3000:]}"
    assert result.stdout.endswith("done\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["guarded"]:
        run_guarded(int(sys.argv[2]), sys.argv[3])
