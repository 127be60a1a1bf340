"""Concurrency: one compiled operator of each kind, dispatched from 8 threads at once on different buffers, gives
exactly the results of serial dispatch.

Each thread owns its input and output buffers (different data per thread); all threads start together (a barrier)
and dispatch several rounds, through `execute` on raw bindings and through the convenience call. The tensors are
large enough that the kernels' threaded paths (GATHER_ND1, MEAN_VARIANCE_NORMALIZATION1) and streaming paths run.
Serial results are computed first, one dispatch at a time, and compared bit for bit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendml as dml

THREADS = 8
ROUNDS = 3
T = dml.TensorDesc
F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16


def _interpreted_operators(batch: int, side: int, length: int, columns: int) -> dict[str, dml.OperatorDesc]:
    """The operators whose small-tensor kernels interpret activation formulas, with tensors of these sizes."""
    return {
        "MEAN_VARIANCE_NORMALIZATION1": dml.MeanVarianceNormalization1OperatorDesc(
            T(F32, [batch, 16, side, side]), T(F32, [1, 16, 1, 1]), T(F32, [1, 16, 1, 1]),
            T(F32, [batch, 16, side, side]), [2, 3], True, 1e-5, dml.ActivationGeluOperatorDesc()),
        "MEAN_VARIANCE_NORMALIZATION1_F16": dml.MeanVarianceNormalization1OperatorDesc(
            T(F16, [4, 3, length]), None, None, T(F16, [4, 3, length]), [2], False, 0.0,
            dml.ActivationLeakyReluOperatorDesc(0.1)),
        "ACTIVATION_GELU_F16": dml.ActivationGeluOperatorDesc(input_tensor=T(F16, [64, columns]),
                                                              output_tensor=T(F16, [64, columns])),
    }


def _operators() -> dict[str, dml.OperatorDesc]:
    return {
        "REDUCE_SUM": dml.ReduceOperatorDesc("SUM", T(F32, [64, 4096]), T(F32, [64, 1]), [1]),
        "REDUCE_ARGMAX_STRIDED": dml.ReduceOperatorDesc("ARGMAX", T(F16, [96, 300], [1, 96]),
                                                        T(dml.DataType.UINT32, [1, 300]), [0]),
        "REDUCE_LOG_SUM_EXP": dml.ReduceOperatorDesc("LOG_SUM_EXP", T(F32, [8, 64, 64]), T(F32, [8, 1, 1]), [1, 2]),
        "SPLIT": dml.SplitOperatorDesc(T(F32, [64, 9000]), [T(F32, [64, 3000]), T(F32, [64, 6000])], 1),
        "ONE_HOT": dml.OneHotOperatorDesc(T(dml.DataType.INT32, [4096, 1]), T(F32, [1, 2]), T(F32, [4096, 300]), 1),
        "GATHER_ND1": dml.GatherNd1OperatorDesc(T(F32, [2048, 256]), T(dml.DataType.INT64, [2048, 1]),
                                                T(F32, [2048, 256]), 2, 2, 0),
        "JOIN": dml.JoinOperatorDesc([T(F32, [64, 3000]), T(F32, [64, 6000])], T(F32, [64, 9000]), 1),
        "ARGMIN_DECREASING": dml.ArgMinOperatorDesc(T(dml.DataType.INT8, [300, 96], [1, 300]),
                                                    T(dml.DataType.UINT32, [1, 96]), [0], "DECREASING"),
        "GATHER_ND": dml.GatherNdOperatorDesc(T(F32, [2048, 256]), T(dml.DataType.INT64, [2048, 1]),
                                              T(F32, [2048, 256]), 2, 2),
        "MEAN_VARIANCE_NORMALIZATION": dml.MeanVarianceNormalizationOperatorDesc(
            T(F32, [8, 16, 64, 64]), None, None, T(F32, [8, 16, 64, 64]), False, True, 1e-5),
        **_interpreted_operators(batch=8, side=64, length=5000, columns=9000),
    }


OPERATORS = _operators()
#: Smaller tensors for the operators whose small-tensor kernels interpret activation formulas (microseconds per
#: element): the `cpu-small` runs force those kernels on every size (conftest.py), where the threads' thousands of
#: elements each still show whether dispatches interfere.
INTERPRETED_OPERATORS = _interpreted_operators(batch=2, side=8, length=200, columns=40)


def operator_for(name: str) -> dml.OperatorDesc:
    """The operator `name`, with smaller tensors where the cpu backend's interpreted kernels run every size."""
    import opendml.backends.cpu as cpu

    interpreting = cpu.SMALL_TENSOR_ELEMENTS >= 2**32
    return INTERPRETED_OPERATORS[name] if interpreting and name in INTERPRETED_OPERATORS else OPERATORS[name]


def _inputs(desc: dml.OperatorDesc, seed: int) -> list[np.ndarray | None]:
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray | None] = []
    for name, tensor in desc.input_slots():
        if tensor is None:
            arrays.append(None)
            continue
        dtype = tensor.data_type.numpy_dtype
        if name == "IndicesTensor" and isinstance(desc, dml.OneHotOperatorDesc):
            x = rng.integers(-desc.depth - 2, desc.depth + 2, tensor.sizes).astype(dtype)
        elif name == "IndicesTensor" and isinstance(desc, (dml.GatherNd1OperatorDesc, dml.GatherNdOperatorDesc)):
            x = rng.integers(-3000, 3000, tensor.sizes).astype(dtype)
        elif dtype.kind == "f":
            x = (rng.standard_normal(tensor.sizes) * 4).astype(dtype)
        else:
            x = rng.integers(-100, 100, tensor.sizes).astype(dtype)
        arrays.append(x)
    return arrays


def _layout(tensor: dml.TensorDesc, array: np.ndarray) -> np.ndarray:
    """A raw buffer holding `array` at the tensor's strides."""
    buffer = np.zeros(tensor.total_tensor_size_in_bytes, np.uint8)
    dtype = tensor.data_type.numpy_dtype
    view = np.lib.stride_tricks.as_strided(buffer.view(dtype), shape=tensor.sizes,
                                           strides=[s * dtype.itemsize for s in tensor.element_strides])
    view[...] = array
    return buffer


def _run_threads(work: Callable[[int], Any]) -> list[Any]:
    return run_threads(work, THREADS)


def run_threads(work: Callable[[int], Any], count: int) -> list[Any]:
    """work(0) ... work(count - 1) on as many threads, started together; their results, or the first error."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def body(index: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[index] = work(index)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=body, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not any(thread.is_alive() for thread in threads), "a dispatch thread hung"
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_eight_threads_equal_serial_dispatch(name: str) -> None:
    desc = operator_for(name)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    inputs = [_inputs(desc, seed) for seed in range(THREADS)]
    serial = [[output.tobytes() for output in compiled(*arrays)] for arrays in inputs]
    assert len({tuple(result) for result in serial}) > 1, "the threads' data must differ"

    def raw_dispatch(index: int) -> list[list[bytes]]:
        rounds = []
        in_bindings = [None if tensor is None or array is None else dml.Binding(_layout(tensor, array))
                       for (_, tensor), array in zip(desc.input_slots(), inputs[index], strict=True)]
        for _ in range(ROUNDS):
            buffers = [np.full(tensor.total_tensor_size_in_bytes, 0xEE, np.uint8) for _, tensor in desc.output_slots()]
            compiled.execute(in_bindings, [dml.Binding(buffer) for buffer in buffers])
            rounds.append([buffer.tobytes() for buffer in buffers])
            rounds.append([output.tobytes() for output in compiled(*inputs[index])])
        return rounds

    for index, rounds in enumerate(_run_threads(raw_dispatch)):
        for round_result in rounds:
            assert round_result == serial[index], f"thread {index} got a result that differs from serial dispatch"


def test_threads_share_one_binding_of_an_input() -> None:
    """Bindings cache their checked views: eight threads reusing one input Binding (a DML binding table bound once)
    and writing their own outputs see the same result."""
    desc = OPERATORS["SPLIT"]
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    (x,) = _inputs(desc, 1)
    assert x is not None
    shared = dml.Binding(_layout(desc.input_tensor, x))
    expected = [output.tobytes() for output in compiled(x)]

    def work(index: int) -> list[bytes]:
        buffers = [np.zeros(tensor.total_tensor_size_in_bytes, np.uint8) for _, tensor in desc.output_slots()]
        for _ in range(ROUNDS):
            compiled.execute([shared], [dml.Binding(buffer) for buffer in buffers])
        return [buffer.tobytes() for buffer in buffers]

    assert all(result == expected for result in _run_threads(work))


_WORKQUEUE_PROBE = """
import threading, numpy as np, opendml as dml
T = dml.TensorDesc
device = dml.Device()
desc = dml.GatherNd1OperatorDesc(T("FLOAT32", [2048, 256]), T("INT64", [2048, 1]), T("FLOAT32", [2048, 256]), 2, 2, 0)
compiled = device.compile_operator(device.create_operator(desc))
x, i = np.ones((2048, 256), np.float32), np.zeros((2048, 1), np.int64)
threads = [threading.Thread(target=lambda: [compiled(x, i) for _ in range(3)]) for _ in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
print("ok")
"""


def test_threads_on_the_workqueue_threading_layer() -> None:
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _WORKQUEUE_PROBE], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NUMBA_THREADING_LAYER": "workqueue"})
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr[-2000:]


def test_threads_executing_again_on_their_own_bindings(backend: str) -> None:
    """One compiled operator, 8 threads, each executing it again and again on its own reused Bindings with new data
    in its input each round: the kept call of one thread's Bindings (CompiledOperator._Again) never runs another's,
    however their executes interleave."""
    device = dml.Device()
    tensor = T(F32, [64])
    compiled = device.compile_operator(device.create_operator(dml.ElementWiseAddOperatorDesc(tensor, tensor, tensor)))

    def work(index: int) -> None:
        first, second, target = (device.create_buffer(256) for _ in range(3))
        inputs, outputs = [dml.Binding(first), dml.Binding(second)], [dml.Binding(target)]
        second.write(np.full(64, index, np.float32))
        for round_index in range(40):
            data = np.arange(64, dtype=np.float32) * (round_index + 1)
            first.write(data)
            compiled.execute(inputs, outputs)
            assert np.array_equal(target.read(np.float32), data + index), f"thread {index}, round {round_index}"

    run_threads(work, THREADS)
