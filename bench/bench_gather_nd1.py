#!/usr/bin/env python
"""GATHER_ND1 benchmark: opendml against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy floor.

    python bench/bench_gather_nd1.py            # full run (2-3 minutes on 2 cores)
    python bench/bench_gather_nd1.py --quick    # fewer repeats (under a minute)
    python bench/bench_gather_nd1.py --repeat 31

The workloads are issue 3's: a row gather from a float32 [1048576, 64] table with [1048576, 1] INT64 indices; a
batched row gather from [16, 1024, 256] with [16, 4096, 1] indices and BatchDimensionCount 1; a batched element
gather from the same [16, 1024, 256] input with [16, 262144, 2] indices (each tuple picks one element of its
batch's 1024 x 256 matrix); issue 28's few-indices element gather, the same with [16, 4096, 2] indices (64K
elements from a 16 MiB input: each batch's tuples read about a quarter of its matrix's cache lines); and issue
14's GATHER_ND (version 0, no batch dimensions) on the row gather, which runs GATHER_ND1's kernel. Indices are
uniform over their dimension, so every implementation computes the same result (the peers have no per-coordinate
clamping).

The input and the indices, which every implementation reads, live in memory from `Device.create_buffer` (starting
on a cache line, as DML buffers do). Every implementation writes into a caller-provided, preallocated output
buffer (`out=` in NumPy and PyTorch, an io_binding to preallocated OrtValues in ONNX Runtime, a reused dml.Binding
in opendml). Within a workload the implementations are timed interleaved (floor, opendml, NumPy, ... then again),
so drift hits all of them alike; the table shows each one's MEDIAN time divided by the floor's. The floor is what
any gather must at least move: an np.copyto of the output's bytes into a preallocated array (read once, written
once) plus one read of the indices (np.max over them).

The peers: NumPy `np.take(..., out=, mode='clip')` on a computed linear row (or element) index, computed into a
preallocated int64 buffer inside the timed call; PyTorch `index_select(..., out=)` on the same computed index
(default threads and one thread); ONNX Runtime's GatherND with batch_dims. They are optional (the `bench`
extras); a missing one is shown as "-". Each result is checked once, bit for bit, against a NumPy fancy-indexing
reference, so that a fast wrong number cannot hide. Further sections: dispatch overhead of a tiny gather, and
the startup time of a fresh interpreter to its first gather with a cold and a warm numba cache.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import _harness as h
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, torch

import opendml as dml
from opendml.ops.gather_nd import GatherNdOperatorDesc

# -- workloads ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    label: str
    input_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    batch: int                      # BatchDimensionCount (InputDimensionCount = IndicesDimensionCount = rank)
    target: float                   # ratio over the floor opendml should stay within
    version: int = 1                # 1: GATHER_ND1; 0: GATHER_ND (batch must be 0)

    @property
    def tuple_size(self) -> int:
        return self.indices_shape[-1]

    @property
    def out_shape(self) -> tuple[int, ...]:
        """DIGEST 2.5: the indices' sizes but the last, then the input's after batch and tuple, padded with 1s."""
        sizes = self.indices_shape[:-1] + self.input_shape[self.batch + self.tuple_size:]
        return (1,) * (len(self.input_shape) - len(sizes)) + sizes

    def make_input(self, rng: np.random.Generator) -> Array:
        return rng.standard_normal(self.input_shape, dtype=np.float32)

    def make_indices(self, rng: np.random.Generator) -> Array:
        columns = [rng.integers(0, self.input_shape[self.batch + k], self.indices_shape[:-1], dtype=np.int64)
                   for k in range(self.tuple_size)]
        return np.ascontiguousarray(np.stack(columns, axis=-1))


WORKLOADS = (
    Workload("rows     [1M,64] by [1M,1]", (1048576, 64), (1048576, 1), 0, 1.3),
    Workload("GATHER_ND rows [1M,64] by [1M,1]", (1048576, 64), (1048576, 1), 0, 1.3, version=0),
    Workload("batched rows [16,1024,256] by [16,4096,1]", (16, 1024, 256), (16, 4096, 1), 1, 1.3),
    Workload("batched elements [16,1024,256] by [16,262144,2]", (16, 1024, 256), (16, 262144, 2), 1, 2.0),
    Workload("batched elements [16,1024,256] by [16,4096,2]", (16, 1024, 256), (16, 4096, 2), 1, 2.0),
)


def reference(work: Workload, x: Array, indices: Array) -> Array:
    """NumPy fancy indexing (indices are in range, so nothing to wrap or clamp)."""
    coordinates = tuple(indices[..., k] for k in range(work.tuple_size))
    if work.batch == 0:
        picked = x[coordinates]
    else:
        batch = np.arange(work.input_shape[0]).reshape((-1,) + (1,) * (indices.ndim - 2))
        picked = x[(batch, *coordinates)]
    return np.asarray(picked).reshape(work.out_shape)


def _linear_index_parts(work: Workload) -> tuple[list[int], int]:
    """(per tuple coordinate its multiplier in a flat index over the batch's sub-table, the batch's size): the
    linear row (or element) index is batch * batch_size + sum(coordinate_k * multiplier_k)."""
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    multipliers = []
    for k in range(work.tuple_size):
        multipliers.append(int(np.prod(work.input_shape[work.batch + k + 1: work.batch + work.tuple_size],
                                       dtype=np.int64)))
    batch_size = int(np.prod(work.input_shape[work.batch:], dtype=np.int64)) // rest
    return multipliers, batch_size


# -- implementations ------------------------------------------------------------------------------------------

def make_floor(work: Workload, indices: Array, rng: np.random.Generator) -> Runner:
    source = rng.standard_normal(work.out_shape, dtype=np.float32)
    target = np.empty_like(source)
    flat = indices.reshape(-1)

    def run() -> None:
        np.copyto(target, source)
        np.max(flat)

    return Runner(h.FLOOR, run, [target])


def make_opendml(device: dml.Device, work: Workload, x: Array, indices: Array) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    rank = len(work.input_shape)
    tensors = (dml.TensorDesc("FLOAT32", work.input_shape), dml.TensorDesc("INT64", work.indices_shape),
               dml.TensorDesc("FLOAT32", work.out_shape))
    desc: dml.OperatorDesc = (GatherNdOperatorDesc(*tensors, rank, rank) if work.version == 0
                              else dml.GatherNd1OperatorDesc(*tensors, rank, rank, work.batch))
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(indices)], [dml.Binding(out)]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), [out])


def make_numpy(work: Workload, x: Array, indices: Array) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    multipliers, batch_size = _linear_index_parts(work)
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    table = x.reshape(-1, rest) if rest > 1 else x.reshape(-1)
    target = out.reshape(-1, rest) if rest > 1 else out.reshape(-1)
    if work.batch == 0 and work.tuple_size == 1:
        rows = indices.reshape(-1)
        return Runner(NUMPY, lambda: np.take(table, rows, axis=0, out=target, mode="clip"), [out],
                      note="np.take(axis=0, out=, mode='clip') on the indices")
    linear = np.empty(work.indices_shape[:-1], np.int64)
    offsets = (np.arange(work.input_shape[0], dtype=np.int64) * batch_size).reshape(
        (-1,) + (1,) * (linear.ndim - 1))

    def run() -> None:
        np.multiply(indices[..., 0], multipliers[0], out=linear)
        for k in range(1, work.tuple_size):
            term = indices[..., k] if multipliers[k] == 1 else indices[..., k] * multipliers[k]
            np.add(linear, term, out=linear)
        np.add(linear, offsets, out=linear)
        np.take(table, linear.reshape(-1), axis=0, out=target, mode="clip")

    return Runner(NUMPY, run, [out], note="linear index (multiply, add into a preallocated int64 buffer), then "
                                        "np.take(out=, mode='clip')")


def make_torch(work: Workload, x: Array, indices: Array, threads: int, name: str) -> Runner:
    out = np.empty(work.out_shape, np.float32)
    multipliers, batch_size = _linear_index_parts(work)
    rest = int(np.prod(work.input_shape[work.batch + work.tuple_size:], dtype=np.int64))
    table = torch.from_numpy(x.reshape(-1, rest) if rest > 1 else x.reshape(-1))
    target = torch.from_numpy(out.reshape(-1, rest) if rest > 1 else out.reshape(-1))
    index = torch.from_numpy(indices)
    if work.batch == 0 and work.tuple_size == 1:
        rows = index.reshape(-1)
        call: Callable[[], object] = lambda: torch.index_select(table, 0, rows, out=target)  # noqa: E731
    else:
        linear = torch.empty(work.indices_shape[:-1], dtype=torch.int64)
        offsets = (torch.arange(work.input_shape[0], dtype=torch.int64) * batch_size).reshape(
            (-1,) + (1,) * (linear.dim() - 1))

        def call() -> None:
            torch.mul(index[..., 0], multipliers[0], out=linear)
            for k in range(1, work.tuple_size):
                linear.add_(index[..., k], alpha=multipliers[k])
            linear.add_(offsets)
            torch.index_select(table, 0, linear.reshape(-1), out=target)

    return Runner(name, call, [out], before=h.torch_threads(threads),
                  note="index_select(out=) on the (computed) linear index")


def make_ort(work: Workload, x: Array, indices: Array) -> Runner:
    """A one-node GatherND model (opset 13, batch_dims), one intra-op thread, no spinning, io_binding to
    preallocated OrtValues over the caller's arrays (the output bound as ONNX's unpadded shape)."""
    helper, tensor_proto = onnx.helper, onnx.TensorProto
    onnx_shape = work.indices_shape[:-1] + work.input_shape[work.batch + work.tuple_size:]
    out = np.empty(work.out_shape, np.float32)
    x_info = helper.make_tensor_value_info("x", tensor_proto.FLOAT, list(work.input_shape))
    i_info = helper.make_tensor_value_info("i", tensor_proto.INT64, list(work.indices_shape))
    y_info = helper.make_tensor_value_info("y", tensor_proto.FLOAT, list(onnx_shape))
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=work.batch)
    graph = helper.make_graph([node], "gather_nd", [x_info, i_info], [y_info])
    return h.ort_runner(graph, 13, 8, {"x": x, "i": indices}, {"y": out.reshape(onnx_shape)}, [out])


def aligned(device: dml.Device, array: Array) -> Array:
    """`array` copied into memory from device.create_buffer, which starts on a cache line as a DML buffer does
    (NumPy's own large arrays start 16 bytes past a page here, where each 256-byte row spans five lines)."""
    return np.asarray(device.create_buffer(array)).view(array.dtype).reshape(array.shape)


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    # Every implementation reads the same input and indices, in memory from create_buffer.
    x = aligned(device, work.make_input(rng))
    indices = aligned(device, work.make_indices(rng))
    ref = reference(work, x, indices)

    def check_one(runner: Runner, mine: Runner, errors: dict[str, float]) -> str | None:
        """Every result bit for bit the reference's."""
        if np.array_equal(runner.result(), ref):
            return None
        return f"{runner.name} differs from the NumPy fancy-indexing reference"

    return h.measure(label=work.label, target=work.target, repeat=repeat,
                   opendml=lambda: make_opendml(device, work, x, indices), floor=lambda: make_floor(work, indices, rng),
                   with_numpy=lambda: make_numpy(work, x, indices),
                   with_torch=lambda threads, name: make_torch(work, x, indices, threads, name),
                   with_ort=lambda: make_ort(work, x, indices), check=check_one)


# -- dispatch overhead and startup ------------------------------------------------------------------------------

def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    """A [16, 16] float32 table, 4 rows gathered by INT64 indices."""
    x = np.random.default_rng(1).standard_normal((16, 16), dtype=np.float32)
    rows = np.array([[3], [0], [15], [7]], np.int64)
    out = np.empty((4, 16), np.float32)
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", (16, 16)), dml.TensorDesc("INT64", (4, 1)),
                                     dml.TensorDesc("FLOAT32", (4, 16)), 2, 2, 0)
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)]
    flat = rows.reshape(-1)
    results = {
        "opendml execute, reused Bindings": h.per_call_us(lambda: compiled.execute(inputs, outputs), count),
        "opendml execute, fresh Bindings": h.per_call_us(
            lambda: compiled.execute([dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)]), count),
        "NumPy np.take(out=, mode='clip')": h.per_call_us(
            lambda: np.take(x, flat, axis=0, out=out, mode="clip"), count),
    }
    if not np.array_equal(out, x[flat]):
        raise AssertionError("the [16,16] gather gave a wrong result")
    if torch is not None:
        xt, it, ot = torch.from_numpy(x), torch.from_numpy(flat), torch.from_numpy(out)
        results["PyTorch index_select(out=)"] = h.per_call_us(lambda: torch.index_select(xt, 0, it, out=ot), count)
    return results


# The startup child, from its inputs to its first result.
STARTUP_RUN = """
    x = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
    rows = np.arange(255, -1, -1, dtype=np.int64).reshape(256, 1)
    out = np.empty((256, 64), np.float32)
    device = dml.Device()
    desc = dml.GatherNd1OperatorDesc(dml.TensorDesc("FLOAT32", [256, 64]), dml.TensorDesc("INT64", [256, 1]),
                                     dml.TensorDesc("FLOAT32", [256, 64]), 2, 2, 0)
    compiled = device.compile_operator(device.create_operator(desc))
    compiled.execute([dml.Binding(x), dml.Binding(rows)], [dml.Binding(out)])
"""

SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20240501, full_repeat=25,
    quick_help="fewer repeats (under a minute)",
    targets_title="Targets (issue 17: opendml within 1.3x of the floor, 2.0x for the element gather, and not slower "
                  "than the fastest peer):",
    floor_threads="np.copyto + np.max, 1 thread",
    opendml_threads=(f"numba kernel; outputs of 1 MiB or more are split over numba.get_num_threads() = "
                     f"{h.numba_threads()} threads (prange: random reads wait on memory latency, so a second thread "
                     f"keeps more in flight)"),
    ort_model="one-node opset-13 GatherND model",
    checks_title="Checks (each result once, written into a NaN-poisoned preallocated buffer, compared bit for bit):",
    check_summary=lambda outcome: (f"{'all equal' if not outcome.problems else 'MISMATCH'}; opendml first call "
                                   f"(compile + run) {outcome.first_call_s * 1e3:.0f} ms"),
    dispatch_title="Dispatch overhead (4 rows of a [16,16] float32 table; median of {count} calls):",
    dispatch=dispatch_overhead, dispatch_width=34, only_option=True,
    startup_of="a [256,64] row gather",
    startup_run=STARTUP_RUN, startup_check="assert np.array_equal(out, x[::-1])",
)


if __name__ == "__main__":
    sys.exit(h.run_suite(SUITE))
