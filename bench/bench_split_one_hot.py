#!/usr/bin/env python
"""SPLIT, JOIN and ONE_HOT benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy
floor.

    python bench/bench_split_one_hot.py            # full run (about 2 minutes on 2 cores; 5 GiB of memory)
    python bench/bench_split_one_hot.py --quick    # fewer repeats
    python bench/bench_split_one_hot.py --repeat 31
    python bench/bench_split_one_hot.py --only JOIN   # the workloads whose label contains JOIN

Every implementation writes into caller-provided, preallocated outputs (`out=` / copy_ into preallocated tensors
in NumPy and PyTorch, an io_binding to preallocated OrtValues in ONNX Runtime, reused dml.Bindings in opendml).
Within a workload the implementations are timed interleaved (floor, opendml, NumPy, ... then again), so drift
hits all of them alike; the table shows each one's MEDIAN time divided by the floor's.

The floor is an np.copyto between two preallocated arrays of the workload's large tensor, as in
bench_reduce.py: for SPLIT the input (read once, written once: exactly SPLIT's traffic); for JOIN the output
(likewise: the inputs read once, the output written once); for ONE_HOT the output
(its bytes written once and as many read, which covers reading the indices, 1/256 of it). A stricter ONE_HOT
floor that moves only the bytes the operator must (a copy of (output + indices) / 2 bytes each way) is
reported below the table.

The peers (torch, onnx, onnxruntime: the `bench` extras) are optional; a missing one is shown as "-". Every
result is checked exactly (the operators only move bits) against NumPy's np.split / the joined array / a
vectorized one-hot.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import _harness as h
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, torch

import opendml as dml
from opendml.ops.join import JoinOperatorDesc

TARGET = 1.5  # ratio over the floor opendml should stay within
JOIN_TARGET = 1.0  # JOIN's (issue 14): at most the copy floor
STRICT_FLOOR = "strict floor"


# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    operator: str  # "SPLIT", "JOIN" or "ONE_HOT"
    shape: tuple[int, ...]  # SPLIT: the input; JOIN and ONE_HOT: the output
    axis: int
    parts: int = 4  # SPLIT and JOIN: equal parts
    depth: int = 256  # ONE_HOT
    target: float = TARGET

    @property
    def split_shapes(self) -> list[tuple[int, ...]]:
        """The parts' shapes: SPLIT's outputs, JOIN's inputs."""
        part = list(self.shape)
        part[self.axis] //= self.parts
        return [tuple(part)] * self.parts


WORKLOADS = (
    Workload("SPLIT [8,4096,512] in 4, axis 1", "SPLIT", (8, 4096, 512), 1),
    Workload("SPLIT [8,4096,512] in 4, axis 2", "SPLIT", (8, 4096, 512), 2),
    Workload("JOIN [8,4096,512] from 4, axis 1", "JOIN", (8, 4096, 512), 1, target=JOIN_TARGET),
    Workload("JOIN [8,4096,512] from 4, axis 2", "JOIN", (8, 4096, 512), 2, target=JOIN_TARGET),
    Workload("ONE_HOT 1M INT32 indices, depth 256", "ONE_HOT", (1 << 20, 256), 1),
)


def one_hot_indices(count: int, depth: int, rng: np.random.Generator) -> Array:
    """INT32 indices: 93% in [0, depth), 5% negative in [-depth, -1], 2% out of range (>= depth or < -depth)."""
    kind = rng.random(count)
    indices = rng.integers(0, depth, count)
    negative = kind < 0.05
    indices[negative] = rng.integers(-depth, 0, int(negative.sum()))
    outside = (kind >= 0.05) & (kind < 0.07)
    far = rng.integers(depth, 4 * depth, int(outside.sum()))
    indices[outside] = np.where(rng.random(far.size) < 0.5, far, -far - 1)
    return indices.astype(np.int32)


def one_hot_expected(indices: Array, depth: int, off: float, on: float) -> Array:
    positions = np.where(indices < 0, indices.astype(np.int64) + depth, indices.astype(np.int64))
    hot = (positions[:, None] == np.arange(depth)) & ((positions >= 0) & (positions < depth))[:, None]
    return np.where(hot, np.float32(on), np.float32(off))


# -- implementations ------------------------------------------------------------------------------------------

@dataclass
class Data:
    x: Array  # SPLIT: the input; JOIN: unused; ONE_HOT: the indices [count]
    values: Array  # ONE_HOT: [1, 2] = off, on
    expected: list[Array]
    parts: list[Array] = field(default_factory=list)  # JOIN: the inputs


def make_data(work: Workload, rng: np.random.Generator) -> Data:
    if work.operator == "SPLIT":
        x = rng.standard_normal(work.shape, dtype=np.float32)
        return Data(x, np.empty(0, np.float32), [np.ascontiguousarray(p) for p in np.split(x, work.parts, work.axis)])
    if work.operator == "JOIN":
        whole = rng.standard_normal(work.shape, dtype=np.float32)
        parts = [np.ascontiguousarray(p) for p in np.split(whole, work.parts, work.axis)]
        return Data(np.empty(0, np.float32), np.empty(0, np.float32), [whole], parts)
    indices = one_hot_indices(work.shape[0], work.depth, rng)
    values = np.array([[0.0, 1.0]], np.float32)
    return Data(indices, values, [one_hot_expected(indices, work.depth, 0.0, 1.0)])


def make_floor(work: Workload) -> Runner:
    return h.copy_floor(np.ones(work.shape, np.float32))


def make_strict_floor(work: Workload, data: Data) -> Runner:
    """ONE_HOT's own traffic only: (output + indices) bytes moved in all, half read, half written."""
    total = (int(np.prod(work.shape)) * 4 + data.x.nbytes) // 2
    return h.copy_floor(np.ones(total // 4, np.float32), STRICT_FLOOR)


def make_opendml(device: dml.Device, work: Workload, data: Data) -> Runner:
    f32 = dml.DataType.FLOAT32
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        desc: dml.OperatorDesc = dml.SplitOperatorDesc(
            dml.TensorDesc(f32, list(work.shape)), [dml.TensorDesc(f32, list(shape)) for shape in work.split_shapes],
            work.axis)
        inputs = [dml.Binding(data.x)]
    elif work.operator == "JOIN":
        outs = [np.empty(work.shape, np.float32)]
        desc = JoinOperatorDesc([dml.TensorDesc(f32, list(shape)) for shape in work.split_shapes],
                                dml.TensorDesc(f32, list(work.shape)), work.axis)
        inputs = [dml.Binding(part) for part in data.parts]
    else:
        outs = [np.empty(work.shape, np.float32)]
        count = work.shape[0]
        desc = dml.OneHotOperatorDesc(dml.TensorDesc(dml.DataType.INT32, [count, 1]), dml.TensorDesc(f32, [1, 2]),
                                      dml.TensorDesc(f32, list(work.shape)), work.axis)
        inputs = [dml.Binding(data.x), dml.Binding(data.values)]
    compiled = device.compile_operator(device.create_operator(desc))
    outputs = [dml.Binding(out) for out in outs]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), outs)


def make_numpy(work: Workload, data: Data) -> Runner:
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        x, parts, axis = data.x, work.parts, work.axis

        def run_split() -> None:
            for out, part in zip(outs, np.split(x, parts, axis), strict=True):
                np.copyto(out, part)

        return Runner(NUMPY, run_split, outs, note="np.copyto of each np.split view")
    if work.operator == "JOIN":
        joined = np.empty(work.shape, np.float32)
        return Runner(NUMPY, lambda: np.concatenate(data.parts, work.axis, out=joined), [joined],
                      note="np.concatenate(out=)")
    out = np.empty(work.shape, np.float32)
    indices, depth = data.x, work.depth
    off, on = data.values[0, 0], data.values[0, 1]

    def run_one_hot() -> None:
        positions = np.where(indices < 0, indices + depth, indices)
        valid = (positions >= 0) & (positions < depth)
        out.fill(off)
        np.put_along_axis(out, np.where(valid, positions, 0)[:, None], np.where(valid, on, off)[:, None], axis=1)

    return Runner(NUMPY, run_one_hot, [out], note="positions, fill, then np.put_along_axis into the reused output")


def make_torch(work: Workload, data: Data, threads: int, name: str) -> Runner:
    before = h.torch_threads(threads)
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        xt, outs_t = torch.from_numpy(data.x), [torch.from_numpy(out) for out in outs]
        sizes = [shape[work.axis] for shape in work.split_shapes]
        return Runner(name, lambda: torch.split_with_sizes_copy(xt, sizes, work.axis, out=outs_t), outs, before,
                      note="torch.split_with_sizes_copy(out=)")
    if work.operator == "JOIN":
        joined = np.empty(work.shape, np.float32)
        parts_t, joined_t = [torch.from_numpy(part) for part in data.parts], torch.from_numpy(joined)
        return Runner(name, lambda: torch.cat(parts_t, work.axis, out=joined_t), [joined], before,
                      note="torch.cat(out=)")
    out = np.empty(work.shape, np.float32)
    indices_t, out_t, depth = torch.from_numpy(data.x), torch.from_numpy(out), work.depth
    off, on = float(data.values[0, 0]), float(data.values[0, 1])

    def run_one_hot() -> None:
        positions = torch.where(indices_t < 0, indices_t + depth, indices_t)
        valid = (positions >= 0) & (positions < depth)
        spots = torch.where(valid, positions, 0).long().unsqueeze(1)
        hot = torch.where(valid, on, off).unsqueeze(1)
        out_t.fill_(off)
        out_t.scatter_(1, spots, hot)

    return Runner(name, run_one_hot, [out], before, note="positions, fill_, then scatter_ into the reused output")


def make_ort(work: Workload, data: Data) -> Runner:
    """A one-node ONNX model (opset 18), one intra-op thread, no spinning, io_binding to preallocated OrtValues over
    the caller's arrays (Split: four outputs; Concat: four inputs; OneHot: indices [count], depth 256, values [off,
    on], axis -1, which is ONE_HOT's rule: negative indices from the end, anything outside [-depth, depth) all
    off)."""
    helper, proto = onnx.helper, onnx.TensorProto
    if work.operator == "SPLIT":
        outs = [np.empty(shape, np.float32) for shape in work.split_shapes]
        names = [f"y{index}" for index in range(work.parts)]
        sizes = [shape[work.axis] for shape in work.split_shapes]
        node = helper.make_node("Split", ["x", "split"], names, axis=work.axis)
        graph = helper.make_graph(
            [node], "split", [helper.make_tensor_value_info("x", proto.FLOAT, list(work.shape))],
            [helper.make_tensor_value_info(name, proto.FLOAT, list(shape))
             for name, shape in zip(names, work.split_shapes, strict=True)],
            initializer=[helper.make_tensor("split", proto.INT64, [len(sizes)], sizes)])
        return h.ort_runner(graph, 18, 8, {"x": data.x}, dict(zip(names, outs, strict=True)))
    if work.operator == "JOIN":
        joined = np.empty(work.shape, np.float32)
        names = [f"x{index}" for index in range(work.parts)]
        graph = helper.make_graph(
            [helper.make_node("Concat", names, ["y"], axis=work.axis)], "concat",
            [helper.make_tensor_value_info(name, proto.FLOAT, list(shape))
             for name, shape in zip(names, work.split_shapes, strict=True)],
            [helper.make_tensor_value_info("y", proto.FLOAT, list(work.shape))])
        return h.ort_runner(graph, 18, 8, dict(zip(names, data.parts, strict=True)), {"y": joined})
    out = np.empty(work.shape, np.float32)
    count = work.shape[0]
    node = helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=-1)
    graph = helper.make_graph(
        [node], "one_hot", [helper.make_tensor_value_info("indices", proto.INT32, [count])],
        [helper.make_tensor_value_info("y", proto.FLOAT, list(work.shape))],
        initializer=[helper.make_tensor("depth", proto.INT32, [1], [work.depth]),
                     helper.make_tensor("values", proto.FLOAT, [2], data.values.ravel().tolist())])
    return h.ort_runner(graph, 18, 8, {"indices": data.x}, {"y": out})


# -- checks -----------------------------------------------------------------------------------------------------

def exact(results: list[Array], expected: list[Array]) -> bool:
    return len(results) == len(expected) and all(
        result.shape == want.shape and np.array_equal(result.view(np.uint32), want.view(np.uint32))
        for result, want in zip(results, expected, strict=True))


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    data = make_data(work, rng)

    def check_one(runner: Runner, mine: Runner, errors: dict[str, float]) -> str | None:
        """The operators only move bits: every result exactly the expected one."""
        return None if exact(runner.outs, data.expected) else f"{runner.name} differs from the expected result"

    def extras() -> list[Runner]:
        return [make_strict_floor(work, data)] if work.operator == "ONE_HOT" else []

    return h.measure(label=work.label, target=work.target, repeat=repeat,
                     opendml=lambda: make_opendml(device, work, data), floor=lambda: make_floor(work),
                     with_numpy=lambda: make_numpy(work, data),
                     with_torch=lambda threads, name: make_torch(work, data, threads, name),
                     with_ort=lambda: make_ort(work, data), check=check_one, extras=extras)


def strict_floor_note(outcome: Outcome) -> str | None:
    if STRICT_FLOOR not in outcome.medians:
        return None
    ratio = outcome.medians[OPENDML] / outcome.medians[STRICT_FLOOR]
    return (f"{outcome.label}: opendml {ratio:.2f}x the strict floor (a copy moving only the output's and the "
            f"indices' bytes)")


# -- dispatch overhead ----------------------------------------------------------------------------------------------

def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    f32 = dml.DataType.FLOAT32
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    halves = [np.empty((4, 4), np.float32) for _ in range(2)]
    split = device.compile_operator(device.create_operator(dml.SplitOperatorDesc(
        dml.TensorDesc(f32, [4, 8]), [dml.TensorDesc(f32, [4, 4])] * 2, 1)))
    split_in, split_out = [dml.Binding(x)], [dml.Binding(half) for half in halves]
    indices = np.arange(16, dtype=np.uint32).reshape(16, 1) % 5
    values = np.array([[0, 1]], np.float32)
    hot = np.empty((16, 4), np.float32)
    one_hot = device.compile_operator(device.create_operator(dml.OneHotOperatorDesc(
        dml.TensorDesc("UINT32", [16, 1]), dml.TensorDesc(f32, [1, 2]), dml.TensorDesc(f32, [16, 4]), 1)))
    hot_in, hot_out = [dml.Binding(indices), dml.Binding(values)], [dml.Binding(hot)]
    joined = np.empty((4, 8), np.float32)
    join = device.compile_operator(device.create_operator(JoinOperatorDesc(
        [dml.TensorDesc(f32, [4, 4])] * 2, dml.TensorDesc(f32, [4, 8]), 1)))
    join_in, join_out = [dml.Binding(half) for half in halves], [dml.Binding(joined)]
    results = {
        "SPLIT [4,8] in 2, reused Bindings": h.per_call_us(lambda: split.execute(split_in, split_out), count),
        "NumPy np.copyto x2": h.per_call_us(lambda: [np.copyto(half, part) for half, part
                                                   in zip(halves, np.split(x, 2, 1), strict=True)], count),
        "JOIN [4,8] from 2, reused Bindings": h.per_call_us(lambda: join.execute(join_in, join_out), count),
        "ONE_HOT 16 indices, depth 4, reused Bindings": h.per_call_us(lambda: one_hot.execute(hot_in, hot_out), count),
    }
    split.execute(split_in, split_out)
    join.execute(join_in, join_out)
    one_hot.execute(hot_in, hot_out)
    if not (np.array_equal(halves[1], x[:, 4:]) and np.array_equal(joined, x) and np.array_equal(
            hot, one_hot_expected(indices[:, 0].astype(np.int64), 4, 0.0, 1.0))):
        raise AssertionError("the tiny SPLIT / JOIN / ONE_HOT gave a wrong result")
    return results


SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20240503, full_repeat=15, quick_help="fewer repeats",
    targets_title=(f"Targets (opendml within {TARGET:.1f}x of the floor, {JOIN_TARGET:.1f}x for JOIN, and not slower "
                   f"than the fastest peer):"),
    count_met=True, require_correct=True, table_note=strict_floor_note,
    opendml_threads="numba kernels, 1 thread (non-temporal stores for outputs of 4 MiB and more)",
    ort_model="one-node opset-18 model", explain_threads=False, cpu_label="CPU time / wall time",
    checks_title="Checks (each result once, written into NaN-poisoned preallocated outputs, compared bit for bit):",
    check_summary=lambda outcome: (f"opendml first call (compile + run) {outcome.first_call_s * 1e3:.0f} ms; "
                                   f"{'all results exact' if not outcome.problems else 'MISMATCHES'}"),
    dispatch_title="Dispatch overhead (median of {count} calls):", dispatch=dispatch_overhead, dispatch_width=46,
    dispatch_target_us=None, only_option=True,
)


if __name__ == "__main__":
    sys.exit(h.run_suite(SUITE))
