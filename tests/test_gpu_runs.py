"""Runs of consecutive output elements per invocation (backends/gpu/runs.py, issue 29): where a specialized shader's
32/64-bit output is contiguous along its innermost elements, SPLIT/JOIN, ONE_HOT and GATHER_ND1 write several per
invocation. The run lengths by hand, and each kernel on the run path (specialized) and the per-element path
(generic) against hand goldens, in strided outputs between sentinel bytes that must stay as they were."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing
from strategies import build_buffer, read_buffer

import opendml as dml
from opendml.backends.gpu import specialize
from opendml.backends.gpu.runs import Run, contiguous_run, run_layout

T = dml.TensorDesc
needs_gpu = pytest.mark.skipif(gpu_adapter_missing() is not None, reason=f"gpu backend: {gpu_adapter_missing()}")


@pytest.mark.parametrize(("sizes", "strides", "span"), [
    ([2, 3, 4], [12, 4, 1], 24),        # all contiguous
    ([2, 3, 4], [24, 8, 1], 4),         # rows of 4 with a gap after each
    ([2, 3, 4], [12, 4, 2], 1),         # innermost stride 2: nothing consecutive
    ([4, 1, 8], [8, 99, 1], 32),        # a size-1 dimension's stride says nothing
    ([3, 4], [1, 3], 1),                # transposed
])
def test_the_contiguous_run_of_a_layout(sizes: list[int], strides: list[int], span: int) -> None:
    assert contiguous_run(sizes, strides) == span


@pytest.mark.parametrize(("desc", "inner", "length", "step"), [
    (T("FLOAT32", [2, 8]), (), 4, 4),                  # a block of 16 elements: 4 invocations' runs interleaved
    (T("FLOAT32", [64, 64]), (64,), 4, 16),            # the largest block, 64 elements of one row
    (T("FLOAT32", [3, 6]), (6,), 2, 1),                # a run never crosses a row of 6
    (T("FLOAT32", [3, 6]), (3,), 1, 1),
    (T("UINT64", [2, 8], [10, 1]), (8,), 4, 2),        # rows of 8 with gaps between them
    (T("FLOAT32", [2, 8], [16, 2]), (8,), 1, 1),       # innermost stride 2
    (T("FLOAT16", [2, 8]), (8,), 1, 1),                # 16-bit outputs keep the word-owning Output
    (T("INT8", [2, 8]), (8,), 1, 1),
])
def test_the_run_an_invocation_writes(desc: T, inner: tuple[int, ...], length: int, step: int) -> None:
    assert run_layout(desc, *inner) == Run(length, step)


@pytest.fixture(params=[True, False], ids=["specialized", "generic"])
def specialized(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    monkeypatch.setattr(specialize, "ENABLED", request.param)
    yield request.param


def run_into(desc: dml.OperatorDesc, inputs: list[np.ndarray], out: T, dtype: Any) -> tuple[np.ndarray, Any, Any]:
    """(the logical output read from a sentinel-filled buffer laid out by out's strides, the buffer, the kernel)."""
    device = dml.Device(backend="gpu")
    compiled = device.compile_operator(device.create_operator(desc))
    target = build_buffer(np.zeros(out.sizes, dtype), out.strides, tail_bytes=8, seed=5)
    compiled.execute([dml.Binding(array) for array in inputs], [dml.Binding(target)])
    logical = read_buffer(target, dtype, out.sizes, out.strides)
    # Every byte outside the output's elements is still the sentinel it was.
    assert np.array_equal(build_buffer(logical, out.strides, tail_bytes=8, seed=5), target)
    return logical, target, compiled._kernel


@needs_gpu
def test_one_hot_writes_runs_of_a_sequence(specialized: bool) -> None:
    out = T("FLOAT32", [3, 8], [10, 1])
    desc = dml.OneHotOperatorDesc(T("INT32", [3, 1]), T("FLOAT32", [1, 2]), out, 1)
    indices = np.array([[-1], [9], [2]], np.int32)     # from the end: position 7; out of range: none; 2
    got, _, kernel = run_into(desc, [indices, np.array([[0.5, 2.0]], np.float32)], out, np.float32)
    off, on = 0.5, 2.0
    assert got.tolist() == [[off] * 7 + [on], [off] * 8, [off, off, on] + [off] * 5]
    assert ("fn run(" in kernel.main.wgsl) is specialized


@needs_gpu
def test_gather_nd1_copies_runs_of_a_row(specialized: bool) -> None:
    table = (np.uint64(1) << np.uint64(40)) + np.arange(16, dtype=np.uint64).reshape(4, 4)
    out = T("UINT64", [3, 4], [6, 1])
    desc = dml.GatherNd1OperatorDesc(T("UINT64", [4, 4]), T("INT64", [3, 1]), out, 2, 2, 0)
    indices = np.array([[3], [-4], [7]], np.int64)     # 3; from the end: 0; out of range: clamped to 3
    got, _, kernel = run_into(desc, [table, indices], out, np.uint64)
    base = 1 << 40
    assert got.tolist() == [[base + 12 + k for k in range(4)], [base + k for k in range(4)],
                            [base + 12 + k for k in range(4)]]
    assert ("fn run(" in kernel.main.wgsl) is specialized


@needs_gpu
def test_split_and_join_copy_runs_of_their_slices(specialized: bool) -> None:
    whole = np.arange(24, dtype=np.float32).reshape(2, 12) - 5.25
    parts = [T("FLOAT32", [2, 4]), T("FLOAT32", [2, 8], [9, 1])]
    device = dml.Device(backend="gpu")
    split = device.compile_operator(device.create_operator(dml.SplitOperatorDesc(T("FLOAT32", [2, 12]), parts, 1)))
    targets = [build_buffer(np.zeros(part.sizes, np.float32), part.strides, seed=k) for k, part in enumerate(parts)]
    split.execute([dml.Binding(whole)], [dml.Binding(target) for target in targets])
    # Each part's elements, and the sentinel in the gap between the second part's rows as it was.
    for k, (part, expected) in enumerate(zip(parts, (whole[:, :4], whole[:, 4:]), strict=True)):
        assert np.array_equal(targets[k], build_buffer(np.ascontiguousarray(expected), part.strides, seed=k)), k
    assert all(("fn run(" in step.wgsl) is specialized for step in split._kernel.passes)

    out = T("FLOAT32", [2, 12], [14, 1])
    join = dml.JoinOperatorDesc([T("FLOAT32", [2, 4]), T("FLOAT32", [2, 8])], out, 1)
    got, _, kernel = run_into(join, [np.ascontiguousarray(whole[:, :4]), np.ascontiguousarray(whole[:, 4:])], out,
                              np.float32)
    assert got.tolist() == whole.tolist()
    assert all(("fn run(" in step.wgsl) is specialized for step in kernel.passes)
