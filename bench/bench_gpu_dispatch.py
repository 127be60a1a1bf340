#!/usr/bin/env python
"""GPU dispatch overhead (issue 29): host time of a compiled operator's execute on device buffers, of a captured
ten-node graph's replay, and the compile time of two 100-node graphs (a chain of five kinds of node, one shape;
100 nodes of 100 shapes, a pipeline each).

    python bench/bench_gpu_dispatch.py                 # 5000 calls per line, median
    python bench/bench_gpu_dispatch.py --count 500 --profile    # and cProfile's top entries of each line

Host time is the time of one call from Python (record and submit, no wait for the device), the median of `--count`
calls after warm-up, gc off, rounds of each line interleaved (`--rounds`, the median of their medians), three ways:
'idle', the wall time of a call made once the device has finished all earlier work (what one call costs the
caller); 'cpu', the calling thread's CPU time of calls made back to back; 'wall', their wall time. On lavapipe the
device is the CPU: its threads run the dispatches on the same cores, and back to back a submission waits until the
one before it has run, so 'wall' there is the device's time per call, not the host's. Inputs and outputs live in
device memory (`Device.create_buffer`), bound by reused Bindings. The two floor lines record and submit the RELU
line's dispatch (pipeline and bind group made beforehand) through wgpu's public API alone, as a hand-written wgpu
program would, and through wgpu-native's C calls alone, as opendml makes them: what is left is wgpu and the driver.
Targets (issue 29): execute under 50 us, a ten-node graph's replay under 200 us; a 100-node graph compiles in
seconds.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import _harness as h
import numpy as np

import opendml as dml

EXECUTE_TARGET_US, REPLAY_TARGET_US = 50.0, 200.0


def wait_idle(device: dml.Device) -> None:
    """Returns once the device has finished everything submitted so far (a read waits for it)."""
    marker = getattr(device, "_bench_marker", None)
    if marker is None:
        marker = device._bench_marker = device.create_buffer(4)  # type: ignore[attr-defined]
    marker.read()


def execute_call(device: dml.Device, desc: dml.OperatorDesc, arrays: list[Any]) -> Callable[[], object]:
    compiled = device.compile_operator(device.create_operator(desc))
    inputs = [dml.Binding(device.create_buffer(array)) for array in arrays]
    outputs = [dml.Binding(device.create_buffer(tensor.total_tensor_size_in_bytes))
               for _, tensor in desc.output_slots()]
    return lambda: compiled.execute(inputs, outputs)


def chain_graph(device: dml.Device, nodes: int, sizes: list[int]) -> tuple[dml.Graph, dml.Expression]:
    """A chain of `nodes` element-wise and activation nodes on one input (none fused away: each is one operator)."""
    graph = dml.Graph(device)
    x = graph.input(sizes, "FLOAT32", name="x")
    current = x
    steps = (dml.activation_relu, dml.abs, dml.exp, dml.activation_sigmoid, dml.identity)
    for index in range(nodes):
        current = steps[index % len(steps)](current)
    return graph, current


def lines(device: dml.Device) -> dict[str, Callable[[], object]]:
    f32 = dml.DataType.FLOAT32
    calls = {
        "execute ACTIVATION_RELU [64]": execute_call(
            device, dml.ActivationReluOperatorDesc(input_tensor=dml.TensorDesc(f32, [64]),
                                                    output_tensor=dml.TensorDesc(f32, [64])),
            [np.ones(64, np.float32)]),
        "execute ELEMENT_WISE_ADD [4,16]": execute_call(
            device, dml.ElementWiseAddOperatorDesc(dml.TensorDesc(f32, [4, 16]), dml.TensorDesc(f32, [4, 16]),
                                                   dml.TensorDesc(f32, [4, 16])),
            [np.ones((4, 16), np.float32)] * 2),
        "execute SPLIT [4,8] into 2": execute_call(
            device, dml.SplitOperatorDesc(dml.TensorDesc(f32, [4, 8]), [dml.TensorDesc(f32, [4, 4])] * 2, 1),
            [np.ones((4, 8), np.float32)]),
        "execute REDUCE SUM [16,16] axis 1": execute_call(
            device, dml.ReduceOperatorDesc("SUM", dml.TensorDesc(f32, [16, 16]), dml.TensorDesc(f32, [16, 1]), [1]),
            [np.ones((16, 16), np.float32)]),
    }
    graph, output = chain_graph(device, 10, [4, 64])
    compiled = graph.compile([output])
    compiled({"x": np.ones((4, 64), np.float32)})     # the first run captures; later runs replay
    calls["ten-node graph replay: CompiledGraph.run()"] = compiled.run
    return calls


def distinct_graph(device: dml.Device, nodes: int) -> tuple[dml.Graph, list[dml.Expression]]:
    """`nodes` ACTIVATION_RELU nodes on inputs of `nodes` different shapes: a pipeline each where shaders are
    specialized to the descriptor."""
    graph = dml.Graph(device)
    return graph, [dml.activation_relu(graph.input([3, 1000 + index], "FLOAT32", name=f"x{index}"))
                   for index in range(nodes)]


def compile_times(device: dml.Device, nodes: int) -> list[tuple[str, float, int]]:
    """(graph, seconds to build and compile it, pipelines built) for a chain of `nodes` nodes (shapes new to this
    process) and for `nodes` nodes of different shapes."""
    context = device.backend.context  # type: ignore[attr-defined]
    def chain() -> tuple[dml.Graph, list[dml.Expression]]:
        graph, output = chain_graph(device, nodes, [3, 77])
        return graph, [output]

    lines = []
    for label, make in [(f"chain of {nodes} element-wise/activation nodes, [3, 77]", chain),
                        (f"{nodes} ACTIVATION_RELU nodes of {nodes} shapes", lambda: distinct_graph(device, nodes))]:
        before = len(context._pipelines)
        start = time.perf_counter()
        graph, outputs = make()
        graph.compile(outputs)
        lines.append((label, time.perf_counter() - start, len(context._pipelines) - before))
    return lines


def floor_call(device: dml.Device, call: Callable[[], object]) -> Callable[[], object]:
    """The same dispatch as `call` makes (one), recorded and submitted through wgpu's public API alone: a pipeline
    and bind group made beforehand, a command encoder, a compute pass, finish and submit per call."""
    context = device.backend.context  # type: ignore[attr-defined]
    with context.capture() as work:
        call()
    (step,) = work

    def floor() -> None:
        encoder = context.device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(step.pipeline)
        compute.set_bind_group(0, step.group)
        compute.dispatch_workgroups(*step.groups)
        compute.end()
        context.queue.submit([encoder.finish()])
    return floor


def native_floor_call(device: dml.Device, call: Callable[[], object]) -> Callable[[], object] | None:
    """The same dispatch as `call` makes, recorded and submitted by wgpu-native's C calls alone, as opendml's
    execute makes them (`NativeCalls.run`): what an execute costs beyond its own Python. None without them."""
    context = device.backend.context  # type: ignore[attr-defined]
    if context.native is None:
        return None
    with context.capture() as work:
        call()
    run, steps = context.native.run, list(work)
    return lambda: run(steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=5000, help="calls per line and round (default 5000)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--nodes", type=int, default=100, help="nodes of the compile-time graph (default 100)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top entries of each line")
    args = parser.parse_args(argv)
    device = dml.Device(backend="gpu")
    print(f"adapter: {device.backend.adapter}")  # type: ignore[attr-defined]
    for label, seconds, built in compile_times(device, args.nodes):
        print(f"{label}: built and compiled in {seconds:.2f} s, {built} pipelines built")
    calls = lines(device)
    relu = calls["execute ACTIVATION_RELU [64]"]
    calls["floor: the RELU dispatch through wgpu's API alone"] = floor_call(device, relu)
    native = native_floor_call(device, relu)
    if native is not None:
        calls["floor: the RELU dispatch, wgpu-native's calls alone"] = native
    results: dict[str, list[tuple[float, float, float]]] = {label: [] for label in calls}
    for _ in range(args.rounds):
        for label, call in calls.items():
            wall, cpu = h.call_times_us(call, args.count)
            idle = h.call_times_us(call, max(1, args.count // 5), lambda: wait_idle(device))[0]
            results[label].append((wall, cpu, idle))
            wait_idle(device)
    print(f"host time per call in us, median of {args.count} calls ({max(1, args.count // 5)} from idle), median of "
          f"{args.rounds} interleaved rounds: 'idle', the wall time of a call made once the device has finished "
          f"all earlier work; 'cpu', the calling thread's CPU time of back-to-back calls; 'wall', their wall time, "
          f"which on lavapipe holds the device's own time (each round's in brackets):")
    for label, samples in results.items():
        goal = REPLAY_TARGET_US if "graph" in label else EXECUTE_TARGET_US
        target = "" if "floor" in label else f"target {goal:.0f}; "
        idle, cpu, wall = (statistics.median(sample[index] for sample in samples) for index in (2, 1, 0))
        rounds = ", ".join(f"{sample[0]:.1f}" for sample in samples)
        print(f"  {label:52} idle {idle:7.1f}  cpu {cpu:7.1f}  wall {wall:7.1f}  ({target}[{rounds}])")
    if args.profile:
        for label, call in calls.items():
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(args.count):
                call()
            profile.disable()
            wait_idle(device)
            print(f"\n== {label}: cProfile over {args.count} calls")
            pstats.Stats(profile).sort_stats("tottime").print_stats(18)
    return 0


if __name__ == "__main__":
    sys.exit(main())
