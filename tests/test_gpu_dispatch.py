"""The gpu backend's dispatch path (issue 29): pipelines cached by their source, and the dispatches an execute on
device ranges makes (bind groups, parameter buffers) cached per compiled operator and ranges, so that an execute
again on the same ranges records them without binding or making anything. The caches must never change a result:
each set of ranges gets its own entry, an entry goes with the buffers it names (a buffer made later under the same
id never finds it), and replay, batches and the debug layer's checks behave as before. Timings are in
bench/bench_gpu_dispatch.py, never here.

Every test runs on the gpu backend only (skipped where no adapter exists); shapes are tiny.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml
from opendml.backends.gpu.context import Dispatch, Recorder

T = dml.TensorDesc
F32 = dml.DataType.FLOAT32
#: ACTIVATION_RELU of these sixteen values is [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7].
VALUES = np.arange(-8, 8, dtype=np.float32)
RELU = [0.0] * 9 + [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


@pytest.fixture
def device() -> dml.Device:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    return dml.Device(backend="gpu")


@pytest.fixture(params=["native", "public"])
def recording(request: pytest.FixtureRequest, device: dml.Device, monkeypatch: pytest.MonkeyPatch) -> dml.Device:
    """A gpu device whose recordings use wgpu-native's calls directly (context.NativeCalls, wgpu as installed here
    has them) or wgpu's public API (as where its internals differ, or OPENDML_GPU_NATIVE=0)."""
    context = context_of(device)
    if request.param == "native":
        assert context.native is not None, "no wgpu cffi calls: dispatches go through its Python methods"
    else:
        monkeypatch.setattr(context, "native", None)
    return device


def context_of(device: dml.Device) -> Any:
    return device.backend.context  # type: ignore[attr-defined]


def relu(device: dml.Device, sizes: list[int]) -> dml.CompiledOperator:
    desc = dml.ActivationReluOperatorDesc(input_tensor=T(F32, sizes), output_tensor=T(F32, sizes))
    return device.compile_operator(device.create_operator(desc))


def captured(device: dml.Device, compiled: dml.CompiledOperator, inputs: list[dml.Binding],
             outputs: list[dml.Binding]) -> list[Any]:
    """The dispatches one execute records."""
    with context_of(device).capture() as work:
        compiled.execute(inputs, outputs)
    return list(work)


# -- pipelines --------------------------------------------------------------------------------------------------------

def test_a_second_operator_with_the_same_descriptor_reuses_the_pipeline(device: dml.Device) -> None:
    """Compiling the same descriptor again builds no pipeline: its dispatch uses the first operator's."""
    context = context_of(device)
    builds = [0]
    original = context.pipeline.__func__

    def counting(self: Any, source: str, storage_count: int) -> Any:
        if (source, storage_count) not in self._pipelines:
            builds[0] += 1
        return original(self, source, storage_count)

    context.pipeline = counting.__get__(context)
    try:
        first = relu(device, [3, 41])     # a shape no other test compiles
        built = builds[0]
        second = relu(device, [3, 41])
        assert builds[0] == built
    finally:
        del context.pipeline
    assert built >= 1
    source = device.create_buffer(np.zeros(123, np.float32))
    one, two = device.create_buffer(492), device.create_buffer(492)
    (a,) = captured(device, first, [dml.Binding(source)], [dml.Binding(one)])
    (b,) = captured(device, second, [dml.Binding(source)], [dml.Binding(two)])
    assert a.pipeline is b.pipeline


# -- dispatches cached per operator and ranges ------------------------------------------------------------------------

def test_one_operator_on_many_buffers_and_offsets_gives_each_its_own_result(recording: dml.Device) -> None:
    """The same compiled operator executed again and again on ranges of two input and two output buffers, at offsets
    above and below the adapter's binding alignment (the rest travels as each binding's base element): each output
    gets its own input's result every round, the bytes around it are kept."""
    device = recording
    compiled = relu(device, [16])
    sources = [device.create_buffer(np.concatenate([VALUES * scale, -VALUES * scale])) for scale in (1, 2)]
    targets = [device.create_buffer(160) for _ in range(2)]
    runs = [  # ((input buffer, byte offset), (output buffer, byte offset))
        ((0, 0), (0, 0)),       # RELU
        ((0, 16), (0, 96)),     # relu of [-4, ..., 7, 8, 7, 6, 5]
        ((0, 64), (1, 16)),     # relu of [8, 7, ..., -7]
        ((1, 0), (1, 96)),      # RELU times 2
    ]
    expected = [
        RELU + [-1.0] * 8 + [0.0] * 5 + [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 7.0, 6.0, 5.0],
        [-1.0] * 4 + [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0] + [0.0] * 8 + [-1.0] * 4
        + [0.0] * 9 + [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0],
    ]
    for round_ in range(3):
        for target in targets:
            target.write(np.full(40, -1.0, np.float32))
        for (source, source_at), (target, target_at) in runs[round_:] + runs[:round_]:
            compiled.execute([dml.Binding(sources[source], source_at, 64)],
                             [dml.Binding(targets[target], target_at, 64)])
        assert [target.read(np.float32).tolist() for target in targets] == expected, round_


def test_an_entry_goes_with_a_buffer_it_names(device: dml.Device) -> None:
    """The cache names buffers by id and holds none: once a buffer it names is collected, its entries are gone
    (at the latest when the next buffer is allocated, so that their bind groups free its device memory), and a
    buffer made later under the same id finds nothing."""
    context = context_of(device)
    kept, dropped = context.allocate(16), context.allocate(16)
    key = ("test", id(kept), id(dropped))
    with context.lock:
        context.remember(key, "entry", [kept, dropped])
        assert context.cached(key) == "entry"
    reference = weakref.ref(dropped)
    del dropped
    gc.collect()
    assert reference() is None, "the cache keeps the buffer alive"
    context.allocate(16)    # drops the entry, whose bind group would hold the device memory, before allocating
    assert key not in context._groups
    with context.lock:
        assert context.cached(key) is None
    assert kept is not None


def test_new_buffers_where_dropped_ones_were_get_their_own_results(device: dml.Device) -> None:
    """Round after round, new input and output buffers are made, executed on, read and dropped, so that ids come
    back (a stale entry would bind the dropped buffers, which its bind group keeps alive on the device, and leave
    the new output zero): every round's output is its own input's, and the cache keeps no entry of a dropped
    buffer."""
    compiled = relu(device, [16])
    context = context_of(device)
    seen: list[int] = []
    for scale in range(1, 17):
        source = device.create_buffer(VALUES * scale)
        target = device.create_buffer(64)
        compiled.execute([dml.Binding(source)], [dml.Binding(target)])
        assert target.read(np.float32).tolist() == [0.0] * 9 + [scale * value for value in range(1, 8)], scale
        seen += [id(source.handle), id(target.handle)]
        del source, target
    assert len(set(seen)) < len(seen), "no id came back: the test shows nothing"
    compiled.execute([dml.Binding(device.create_buffer(64))], [dml.Binding(device.create_buffer(64))])
    named = {handle for _, handles in context._groups.values() for handle in handles}
    assert len(named & set(seen)) <= 2    # the last execute's buffers may sit where the last round's were


def test_the_debug_layer_checks_the_data_of_every_execute(device: dml.Device) -> None:
    """A debug device's GATHER_ND1 executed again on the same ranges (its dispatches cached) still checks the
    indices it finds there: once an index is out of range it refuses, writing nothing."""
    debug = dml.Device(backend="gpu", debug=True)
    desc = dml.GatherNd1OperatorDesc(T(F32, [3, 2]), T("INT32", [2, 1]), T(F32, [2, 2]), 2, 2, 0)
    gather = debug.compile_operator(debug.create_operator(desc))
    rows = debug.create_buffer(np.arange(6, dtype=np.float32))
    indices = debug.create_buffer(np.array([2, 0], np.int32))
    output = debug.create_buffer(16)
    for _ in range(2):
        gather.execute([dml.Binding(rows), dml.Binding(indices)], [dml.Binding(output)])
        assert output.read(np.float32).tolist() == [4.0, 5.0, 0.0, 1.0]
    indices.write(np.array([1, 3], np.int32))
    output.write(np.full(4, -1.0, np.float32))
    message = (r"DML_OPERATOR_GATHER_ND1: IndicesTensor\[1, 0\] is 3, out of range: coordinate 0 of its tuple "
               r"indexes InputTensor dimension 0 \(size 3\), so it must be in \[-3, 2\]")
    with pytest.raises(dml.BindingError, match=message):
        gather.execute([dml.Binding(rows), dml.Binding(indices)], [dml.Binding(output)])
    assert output.read(np.float32).tolist() == [-1.0] * 4


# -- batches, capture and replay --------------------------------------------------------------------------------------

def test_cached_executes_in_a_batch_run_in_order(recording: dml.Device) -> None:
    """Two operators chained through device memory in one batch, again and again on the same ranges with new input
    data each time: the second reads what the first wrote in that batch."""
    device = recording
    relu_op = relu(device, [4])
    add_desc = dml.ElementWiseAddOperatorDesc(T(F32, [4]), T(F32, [4]), T(F32, [4]))
    add = device.compile_operator(device.create_operator(add_desc))
    x, middle, out = device.create_buffer(16), device.create_buffer(16), device.create_buffer(16)
    for data, expected in [([-2.0, -1.0, 0.0, 3.0], [-2.0, -1.0, 0.0, 6.0]),
                           ([5.0, -5.0, 1.0, -1.0], [10.0, -5.0, 2.0, -1.0]),
                           ([0.5, 0.0, -0.5, 2.0], [1.0, 0.0, -0.5, 4.0])]:
        x.write(np.array(data, np.float32))
        with device.batch():
            relu_op.execute([dml.Binding(x)], [dml.Binding(middle)])
            add.execute([dml.Binding(middle), dml.Binding(x)], [dml.Binding(out)])
        assert out.read(np.float32).tolist() == expected


def test_a_compiled_graph_replays_with_new_inputs(recording: dml.Device) -> None:
    """relu(x) + x: the first call captures the nodes' dispatches, later calls replay them on new data."""
    device = recording
    graph = dml.Graph(device)
    x = graph.input([4], "FLOAT32", name="x")
    compiled = graph.compile([dml.activation_relu(x) + x])
    for data, expected in [([-2.0, -1.0, 0.0, 3.0], [-2.0, -1.0, 0.0, 6.0]),
                           ([5.0, -5.0, 1.0, -1.0], [10.0, -5.0, 2.0, -1.0]),
                           ([-2.0, -1.0, 0.0, 3.0], [-2.0, -1.0, 0.0, 6.0])]:
        (got,) = compiled({"x": np.array(data, np.float32)})
        assert got.tolist() == expected


def test_an_invalid_dispatch_raises_at_submission(recording: dml.Device) -> None:
    """wgpu-core reports a pass's errors when the encoder is finished: recorded through either path, a dispatch of
    more work-groups than a dimension allows raises wgpu's validation error there, and the device runs on."""
    device = recording
    context = context_of(device)
    compiled = relu(device, [16])
    source, target = device.create_buffer(VALUES), device.create_buffer(64)
    (step,) = captured(device, compiled, [dml.Binding(source)], [dml.Binding(target)])
    too_many = Dispatch(step.pipeline, step.group, step.params_buffer, (70000, 1, 1))
    with context.lock, pytest.raises(context.wgpu.GPUValidationError, match=r"must be less or equal to 65535"):
        recorder = Recorder(context)
        recorder.replay([too_many])
        recorder.submit()
    # A submission of its own (as an execute outside a batch makes it: NativeCalls.run, or a Recorder), twice: the
    # error raises before anything is submitted, so the output keeps its bytes.
    target.write(np.full(16, 5, np.float32))
    for _ in range(2):
        with pytest.raises(context.wgpu.GPUValidationError, match=r"must be less or equal to 65535"):
            context.run([too_many])
    assert target.read(np.float32).tolist() == [5.0] * 16
    target.write(np.zeros(16, np.float32))
    compiled.execute([dml.Binding(source)], [dml.Binding(target)])
    assert target.read(np.float32).tolist() == RELU


def test_wgpu_commands_between_dispatches_keep_their_order(recording: dml.Device) -> None:
    """A batch's recorder hands out wgpu's command encoder (`Recorder.encoder`, as bench_gpu.py's clock and copies
    use it) between dispatches: relu into one buffer, a copy of it into another, its negation from there, all in
    one submission, run in that order."""
    device = recording
    context = context_of(device)
    compiled = relu(device, [16])
    negate = device.compile_operator(device.create_operator(dml.ElementWiseIdentityOperatorDesc(
        T(F32, [16]), T(F32, [16]), dml.ScaleBias(-1.0, 0.0))))
    source, middle, copied, negated = (device.create_buffer(64) for _ in range(4))
    source.write(VALUES)
    with device.batch():
        compiled.execute([dml.Binding(source)], [dml.Binding(middle)])
        context.recorder()[0].copy(middle.handle, 0, copied.handle, 0, 64)
        negate.execute([dml.Binding(copied)], [dml.Binding(negated)])
    assert copied.read(np.float32).tolist() == RELU
    assert negated.read(np.float32).tolist() == [-value for value in RELU]
