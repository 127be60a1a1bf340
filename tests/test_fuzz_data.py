"""Data fuzzing: NaN, +-inf, subnormals, signed zeros and the extremes of every integer type, through every operator.

Each example takes a valid descriptor of one operator (any feature level, strides, types; fused activations for
MEAN_VARIANCE_NORMALIZATION1) and fills its inputs from pools of special values. The dispatch runs on raw buffers
(binding offsets, sentinel bytes around and between the elements), and:

- the outputs match the oracles (tests/reference*.py) under DECISIONS.md (NaN-propagating MIN/MAX, first-NaN
  ARGMAX, integer wrap-around, ONE_HOT's off value for out-of-range indices, GATHER_ND1's clamping, ...);
- every input buffer is bit-identical afterwards, and no output byte outside the output's elements changed;
- a dispatch that fails (a binding one byte short, a read-only output, an output overlapping an input, an
  out-of-range GATHER_ND1 index on a debug device) leaves every output buffer bit-identical.

Examples per operator: DATA_EXAMPLES (OPENDML_DATA_EXAMPLES; 5,000 with HYPOTHESIS_PROFILE=slow, 60 otherwise).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from strategies import addressed_byte_mask, build_buffer, read_buffer, sentinel_bytes
from test_fuzz_descriptors import BASES, check_outputs, consistent, valid_descriptor

import opendml as dml

SLOW = os.environ.get("HYPOTHESIS_PROFILE") == "slow"
DATA_EXAMPLES = int(os.environ.get("OPENDML_DATA_EXAMPLES", 5_000 if SLOW else 60))
DATA_SETTINGS = settings(max_examples=DATA_EXAMPLES, deadline=None, database=None,
                         suppress_health_check=list(HealthCheck))


def float_specials(dtype: np.dtype) -> list[float]:
    info = np.finfo(dtype)
    tiny, subnormal = float(info.smallest_normal), float(info.smallest_subnormal)
    return [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, subnormal, -subnormal, tiny - subnormal,
            -(tiny - subnormal), tiny, -tiny, float(info.max), -float(info.max), 1.0, -1.0, 0.5, 3.0]


def int_specials(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    values = {int(info.min), int(info.min) + 1, -1, 0, 1, 2, int(info.max) - 1, int(info.max)}
    return sorted(v for v in values if info.min <= v <= info.max)


def special_array(rng: np.random.Generator, dtype: np.dtype, sizes: Sequence[int], share: float) -> np.ndarray:
    """Ordinary small values with about `share` of the elements replaced by special ones."""
    shape = tuple(sizes)
    if dtype.kind == "f":
        base = rng.standard_normal(shape).astype(dtype)
        pool = np.array(float_specials(dtype), dtype=np.float64)
    else:
        info = np.iinfo(dtype)
        base = rng.integers(max(int(info.min), -4), min(int(info.max), 4), size=shape, endpoint=True).astype(dtype)
        pool = np.array(int_specials(dtype), dtype=object)
    mask = rng.random(shape) < share
    picks = rng.integers(0, len(pool), size=shape)
    with np.errstate(over="ignore", invalid="ignore"):
        special = np.array([pool[k] for k in picks.reshape(-1)], dtype=object).reshape(shape).astype(dtype) \
            if dtype.kind != "f" else pool[picks].astype(dtype)
    result = np.where(mask, special, base)
    result = result.astype(dtype)
    if dtype.kind == "f" and result.size and rng.integers(0, 3) == 0:   # a negative NaN with a payload too
        bits = result.reshape(-1).view(f"u{dtype.itemsize}")
        bits[rng.integers(0, result.size)] = NEGATIVE_NAN_BITS[dtype.itemsize]
    return result


NEGATIVE_NAN_BITS = {2: 0xFE01, 4: 0xFFC00001, 8: 0xFFF8000000000001}


def index_specials(rng: np.random.Generator, dtype: np.dtype, sizes: Sequence[int], bound: int) -> np.ndarray:
    """Indices at the edges: 0, bound - 1, bound, -1, -bound, -bound - 1 and the type's extremes."""
    info = np.iinfo(dtype)
    candidates = [0, 1, bound - 1, bound, bound + 1, -1, -bound, -bound - 1, int(info.min), int(info.max),
                  int(info.max) - 1]
    pool = [v for v in candidates if info.min <= v <= info.max]
    picks = rng.integers(0, len(pool), size=tuple(sizes))
    return np.array([pool[k] for k in picks.reshape(-1)], dtype=object).reshape(tuple(sizes)).astype(dtype)


def special_inputs(desc: dml.OperatorDesc, rng: np.random.Generator, share: float) -> list[np.ndarray | None]:
    arrays: list[np.ndarray | None] = []
    for name, tensor in desc.input_slots():
        if tensor is None:
            arrays.append(None)
            continue
        dtype = tensor.data_type.numpy_dtype
        if name == "IndicesTensor" and isinstance(desc, dml.OneHotOperatorDesc):
            x = index_specials(rng, dtype, tensor.sizes, desc.depth)
        elif name == "IndicesTensor" and isinstance(desc, dml.GatherNd1OperatorDesc):
            x = index_specials(rng, dtype, tensor.sizes, int(rng.choice(desc.input_tensor.sizes)))
        else:
            x = special_array(rng, dtype, tensor.sizes, share)
        arrays.append(consistent(x, tensor))
    return arrays


def _device(level: dml.FeatureLevel, debug: bool = False) -> dml.Device:
    return dml.Device(feature_level=level, debug=debug)


@pytest.mark.parametrize("operator", sorted(BASES))
@DATA_SETTINGS
@given(data=st.data())
def test_special_values(operator: str, data: st.DataObject) -> None:
    level, desc = data.draw(valid_descriptor(operator))
    seed = data.draw(st.integers(0, 2**32 - 1))
    share = data.draw(st.sampled_from((0.1, 0.5, 1.0)))
    note(f"level={level} desc={desc!r} seed={seed} share={share}")
    rng = np.random.default_rng(seed)
    device = _device(level)
    compiled = device.compile_operator(device.create_operator(desc))
    logical = special_inputs(desc, rng, share)

    # raw buffers: the data at its strides from a random aligned offset, sentinel bytes everywhere else
    input_bindings: list[dml.Binding | None] = []
    input_buffers: list[np.ndarray] = []
    for (_, tensor), array in zip(desc.input_slots(), logical, strict=True):
        if tensor is None or array is None:
            input_bindings.append(None)
            continue
        offset = 16 * int(rng.integers(0, 3))
        raw = build_buffer(array, tensor.strides, byte_offset=offset, seed=int(rng.integers(0, 100)))
        buffer = sentinel_bytes(offset + tensor.total_tensor_size_in_bytes + int(rng.integers(0, 24)), seed=3)
        buffer[:raw.size] = raw
        input_buffers.append(buffer)
        input_bindings.append(dml.Binding(buffer, offset=offset))
    inputs_before = [buffer.copy() for buffer in input_buffers]
    output_bindings, outputs_before = [], []
    for _, tensor in desc.output_slots():
        offset = 16 * int(rng.integers(0, 3))
        buffer = sentinel_bytes(offset + tensor.total_tensor_size_in_bytes + int(rng.integers(0, 24)), seed=11)
        outputs_before.append(buffer.copy())
        output_bindings.append(dml.Binding(buffer, offset=offset))

    # a failing dispatch first: its outputs must stay as they were
    _failing_dispatch(compiled, input_bindings, output_bindings, outputs_before)

    compiled.execute(input_bindings, output_bindings)
    for before, buffer in zip(inputs_before, input_buffers, strict=True):
        assert np.array_equal(before, buffer), "an input buffer changed"
    results = []
    for (_, tensor), binding, before in zip(desc.output_slots(), output_bindings, outputs_before, strict=True):
        buffer = binding.buffer
        element_size = tensor.data_type.numpy_dtype.itemsize
        written = addressed_byte_mask(buffer.size, element_size, tensor.sizes, tensor.strides,
                                      byte_offset=binding.offset)
        changed = np.flatnonzero((buffer != before) & ~written)
        assert changed.size == 0, f"bytes outside the output's elements changed: {changed[:8].tolist()}"
        results.append(read_buffer(buffer, tensor.data_type.numpy_dtype, tensor.sizes, tensor.strides,
                                   byte_offset=binding.offset))
    check_outputs(desc, level, logical, results)

    if isinstance(desc, dml.GatherNd1OperatorDesc):
        _gather_debug(level, desc, input_bindings, logical)


def _failing_dispatch(compiled: dml.CompiledOperator, inputs: list[dml.Binding | None],
                      outputs: list[dml.Binding], outputs_before: list[np.ndarray]) -> None:
    """Breaks the last binding in one of three ways; the dispatch must fail and change no output byte."""
    last = outputs[-1]
    buffer = last.buffer
    short = dml.Binding(buffer, offset=last.offset, size=compiled.desc.output_slots()[-1][1].total_tensor_size_in_bytes
                        - 1)
    readonly_array = buffer.copy()
    readonly_array.flags.writeable = False
    readonly = dml.Binding(readonly_array, offset=last.offset)
    for broken in (short, readonly):
        with pytest.raises(dml.BindingError):
            compiled.execute(inputs, [*outputs[:-1], broken])
        for binding, before in zip(outputs, outputs_before, strict=True):
            assert np.array_equal(binding.buffer, before), "a failed dispatch changed an output"
    first_input = next((binding for binding in inputs if binding is not None), None)
    if first_input is not None:
        overlapping = dml.Binding(first_input.buffer, offset=first_input.offset, size=first_input.buffer.size
                                  - first_input.offset)
        input_before = first_input.buffer.copy()
        with pytest.raises(dml.BindingError):
            compiled.execute(inputs, [*outputs[:-1], overlapping])
        assert np.array_equal(first_input.buffer, input_before), "an input changed in a failed dispatch"
        for binding, before in zip(outputs, outputs_before, strict=True):
            assert np.array_equal(binding.buffer, before), "a failed dispatch changed an output"


def _gather_debug(level: dml.FeatureLevel, desc: dml.GatherNd1OperatorDesc, inputs: list[dml.Binding | None],
                  logical: list[np.ndarray | None]) -> None:
    """On a debug device an out-of-range index fails the dispatch after validation, in the kernel: still, no output
    byte may change."""
    from reference import reference_gather_nd1

    data, indices = logical
    assert data is not None and indices is not None
    _, bad = reference_gather_nd1(data, indices, desc.input_dimension_count, desc.indices_dimension_count,
                                  desc.batch_dimension_count, signed=indices.dtype.kind == "i")
    device = _device(level, debug=True)
    compiled = device.compile_operator(device.create_operator(desc))
    tensor = desc.output_tensor
    buffer = sentinel_bytes(tensor.total_tensor_size_in_bytes, seed=5)
    before = buffer.copy()
    if bad:
        with pytest.raises(dml.BindingError, match="out of range"):
            compiled.execute(inputs, [dml.Binding(buffer)])
        assert np.array_equal(buffer, before), "a refused debug dispatch wrote its output"
    else:
        compiled.execute(inputs, [dml.Binding(buffer)])


# ---------------------------------------------------------------------------------------------------------------------
# The rulings, pinned (DECISIONS.md)
# ---------------------------------------------------------------------------------------------------------------------

F16, F32 = dml.DataType.FLOAT16, dml.DataType.FLOAT32
NAN, INF = math.nan, math.inf


def _reduce(function: str, x: np.ndarray, out_type: dml.DataType | None = None) -> np.ndarray:
    data_type = dml.DataType.parse(x.dtype)
    desc = dml.ReduceOperatorDesc(function, dml.TensorDesc(data_type, list(x.shape)),
                                  dml.TensorDesc(out_type or data_type, [1] * (x.ndim - 1) + [1]), [x.ndim - 1])
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc))(x)
    return out.reshape(-1)


@pytest.mark.parametrize(("function", "values", "dtype", "expected"), [
    ("MAX", [1.0, NAN, 3.0], np.float32, NAN),                  # 11: MIN/MAX propagate NaN
    ("MIN", [-INF, NAN, 3.0], np.float16, NAN),
    ("MAX", [-INF, -INF], np.float32, -INF),
    ("SUM", [INF, -INF], np.float32, NAN),
    ("SUM", [INF, 1.0], np.float16, INF),
    ("LOG_SUM", [-1.0, 0.5], np.float32, NAN),                  # 13: log of a negative sum
    ("LOG_SUM", [0.0, -0.0], np.float32, -INF),
    ("LOG_SUM_EXP", [INF, 1.0], np.float32, INF),
    ("LOG_SUM_EXP", [-INF, -INF], np.float32, -INF),
    ("LOG_SUM_EXP", [3.4e38, 3.4e38], np.float32, float(np.float32(3.4e38)) + math.log(2.0)),
    ("SUM", [1e-45, 1e-45], np.float32, 2.8e-45),                # subnormals are kept, not flushed
    ("SUM", [-0.0, -0.0], np.float32, -0.0),
    ("MULTIPLY", [INF, 0.0], np.float32, NAN),
])
def test_reduce_float_rulings(function: str, values: list[float], dtype: type, expected: float) -> None:
    got = float(_reduce(function, np.array([values], dtype))[0])
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(float(np.array(expected, dtype)), rel=1e-6, abs=0), (got, expected)
        if expected == 0:
            assert math.copysign(1, got) == math.copysign(1, expected), "the sign of zero was lost"


@pytest.mark.parametrize(("function", "values", "dtype", "expected"), [
    ("SUM", [2**31 - 1, 1], np.int32, -(2**31)),                 # 12: integers wrap
    ("SUM", [2**64 - 1, 2], np.uint64, 1),
    ("L1", [-(2**63)], np.int64, -(2**63)),                      # 12: L1 of the most negative value wraps to itself
    ("MULTIPLY", [2**32, 2**32], np.uint64, 0),
    ("SUM_SQUARE", [2**31 - 1], np.int32, 1),
    ("MIN", [-(2**63), 2**63 - 1], np.int64, -(2**63)),
    ("MAX", [0, 2**64 - 1], np.uint64, 2**64 - 1),
])
def test_reduce_integer_rulings(function: str, values: list[int], dtype: type, expected: int) -> None:
    assert int(_reduce(function, np.array([values], dtype))[0]) == expected


def test_argmax_first_nan_wins_and_ties_take_the_first() -> None:             # 10
    assert int(_reduce("ARGMAX", np.array([[1.0, NAN, 5.0, NAN]], np.float32), dml.DataType.UINT32)[0]) == 1
    assert int(_reduce("ARGMIN", np.array([[2.0, -INF, -INF]], np.float32), dml.DataType.INT64)[0]) == 1
    assert int(_reduce("ARGMAX", np.array([[-(2**63), 2**63 - 1, 2**63 - 1]], np.int64), dml.DataType.UINT32)[0]) == 1


def test_one_hot_out_of_range_indices_give_off_values() -> None:               # 15
    depth = 4
    indices = np.array([[0], [4], [-1], [-4], [-5], [2**31 - 1], [-(2**31)]], np.int32)
    desc = dml.OneHotOperatorDesc(dml.TensorDesc("INT32", [7, 1]), dml.TensorDesc(F32, [1, 2]),
                                  dml.TensorDesc(F32, [7, depth]), 1)
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc))(indices, np.array([[-0.0, NAN]], np.float32))
    on = np.isnan(out)
    assert on.tolist() == [[True, False, False, False], [False] * 4, [False, False, False, True],
                           [True, False, False, False], [False] * 4, [False] * 4, [False] * 4]
    assert all(math.copysign(1, v) < 0 for v in out[~on].reshape(-1)), "the off value -0.0 lost its sign"


def test_one_hot_huge_unsigned_indices_are_not_negative() -> None:             # 15
    indices = np.array([[2**64 - 1], [2**63], [3]], np.uint64)
    desc = dml.OneHotOperatorDesc(dml.TensorDesc("UINT64", [3, 1]), dml.TensorDesc(F32, [1, 2]),
                                  dml.TensorDesc(F32, [3, 4]), 1)
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc))(indices, np.array([[0, 1]], np.float32))
    assert out.tolist() == [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]


def test_gather_clamps_extreme_indices() -> None:                               # 21
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    indices = np.array([[-(2**63)], [2**63 - 1], [-1], [-5], [4]], np.int64)
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc(F32, [4, 3]), dml.TensorDesc("INT64", [5, 1]),
                                     dml.TensorDesc(F32, [5, 3]), 2, 2, 0)
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc))(data, indices)
    assert out[:, 0].tolist() == [0, 9, 9, 0, 9]


def test_split_and_gather_move_bits_unchanged() -> None:
    """NaN payloads, signed zeros and subnormals travel bit for bit through the data-movement operators."""
    bits = np.array([0x7FC00001, 0xFFC12345, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F800000], np.uint32)
    x = bits.view(np.float32).reshape(1, 6)
    desc = dml.SplitOperatorDesc(dml.TensorDesc(F32, [1, 6]), [dml.TensorDesc(F32, [1, 2]),
                                                               dml.TensorDesc(F32, [1, 4])], 1)
    device = dml.Device()
    left, right = device.compile_operator(device.create_operator(desc))(x)
    assert np.concatenate([left, right], axis=1).view(np.uint32).tolist() == [bits.tolist()]


def test_mvn_scale_near_float_max() -> None:
    # The gain is applied as (d * rstd) * Scale, never as d * (rstd * Scale), which would overflow.
    T = dml.TensorDesc
    desc = dml.MeanVarianceNormalization1OperatorDesc(T(F32, [1]), T(F32, [1]), T(F32, [1]), T(F32, [1]), [0], True,
                                                      1e-5)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    (out,) = compiled(np.array([2.0], np.float32), np.array([-3.4e38], np.float32), np.array([-1.0], np.float32))
    assert out.tolist() == [-1.0]   # (x - mean) is 0: Scale * 0 + Bias
    wide = dml.MeanVarianceNormalization1OperatorDesc(T(F32, [1, 2]), T(F32, [1, 1]), None, T(F32, [1, 2]), [1], True,
                                                      1e-5)
    compiled = device.compile_operator(device.create_operator(wide))
    (out,) = compiled(np.array([[0.0, 1e-3]], np.float32), np.array([[3e38]], np.float32), None)
    assert np.isfinite(out).all()   # about -+0.995 * 3e38
