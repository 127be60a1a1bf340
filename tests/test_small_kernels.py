"""The cpu backend's choice between its small-tensor kernels (backends/cpu/small) and numba's, and the cold start's
hand-over from NumPy to numba. (That both kinds of kernel give the same results is what every
backend test checks, once per kind: `cpu` and `cpu-small` in conftest.py.)"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import opendml as dml
import opendml.backends.cpu as cpu

T = dml.TensorDesc
F32 = "FLOAT32"


def kernel_module(kernel: Any) -> str:
    """The module a compiled operator's kernel comes from (a small kernel is a closure of its module)."""
    kernel = getattr(kernel, "kernel", None) or getattr(kernel, "first", kernel)
    function = getattr(kernel, "__func__", kernel)
    return str(getattr(function, "__module__", type(kernel).__module__))


def compiled_kernel(desc: dml.OperatorDesc) -> Any:
    device = dml.Device()
    return device.compile_operator(device.create_operator(desc))._kernel


def sigmoid(sizes: list[int]) -> dml.OperatorDesc:
    return dml.ActivationSigmoidOperatorDesc(input_tensor=T(F32, sizes), output_tensor=T(F32, sizes))


@pytest.mark.parametrize(("desc", "small"), [
    (dml.ReduceOperatorDesc("SUM", T(F32, [32, 32]), T(F32, [1, 32]), [0]), True),           # 1024 elements
    (dml.ReduceOperatorDesc("SUM", T(F32, [33, 32]), T(F32, [1, 32]), [0]), False),
    (dml.GatherNd1OperatorDesc(T(F32, [16, 16]), T("INT64", [4, 1]), T(F32, [4, 16]), 2, 2, 0), True),
    (dml.GatherNd1OperatorDesc(T(F32, [16, 16]), T("INT64", [65, 1]), T(F32, [65, 16]), 2, 2, 0), False),
    (sigmoid([32, 32]), True),                                                                # 1024 elements
    (sigmoid([1025]), False),
])
def test_every_tensor_within_the_limit_picks_the_small_kernel(desc: dml.OperatorDesc, small: bool) -> None:
    module = kernel_module(compiled_kernel(desc))
    assert module.startswith("opendml.backends.cpu.small.") is small, module


def test_the_activations_small_kernels_are_the_element_wise_engines() -> None:
    # The activations and MVN's fused activation render their formulas with NumPy (formula.evaluate), as every
    # element-wise operator does: no interpreted numba source, so the same limit and no hand-over.
    relu = dml.ActivationReluOperatorDesc(input_tensor=T("INT8", [32, 32]), output_tensor=T("INT8", [32, 32]))
    assert kernel_module(compiled_kernel(relu)).startswith("opendml.backends.cpu.small.element_wise")
    assert not hasattr(cpu, "TieredKernel") and not hasattr(cpu, "INTERPRETED_TENSOR_ELEMENTS")


def test_a_first_small_dispatch_imports_no_numba() -> None:
    script = ("import sys, numpy as np, opendml as dml\n"
              "T = dml.TensorDesc\n"
              "d = dml.Device()\n"
              "op = d.compile_operator(d.create_operator(dml.ReduceOperatorDesc('SUM', T('FLOAT32', [3, 3]), "
              "T('FLOAT32', [1, 3]), [0])))\n"
              "print(op(np.arange(9, dtype=np.float32).reshape(3, 3))[0].tolist())\n"
              "assert 'numba' not in sys.modules, 'numba was imported'")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[[9.0, 12.0, 15.0]]"


# -- the cold start: NumPy answers while another process compiles numba's kernel (backends/cpu/background.py) -----

SUM_33 = dml.ReduceOperatorDesc("SUM", T(F32, [33, 32]), T(F32, [33, 1]), [1])   # above the small limit


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """The cold start on, markers in an empty directory (nothing compiled yet), a fresh queue of jobs, and a
    background process that only marks its jobs compiled (numba's kernel is then compiled where it is loaded, in this
    process, so no test waits for a second process to compile)."""
    from opendml.backends.cpu import background
    monkeypatch.setattr(cpu, "COLD_START", True)
    monkeypatch.setattr(background, "marker_directory", lambda: tmp_path / "markers")
    compiler = background.Compiler()
    compiler.command = (sys.executable, "-c", "import pickle, sys\n"
                        "for job in pickle.loads(sys.stdin.buffer.read()):\n"
                        "    job.marker.parent.mkdir(parents=True, exist_ok=True); job.marker.touch()")
    monkeypatch.setattr(background, "COMPILER", compiler)
    return background


def rows_of(count: int) -> Any:
    return np.linspace(-3, 5, count * 32, dtype=np.float32).reshape(count, 32)


@pytest.mark.parametrize(("desc", "cold_start"), [
    (SUM_33, True),
    (dml.ArgMaxOperatorDesc(T(F32, [33, 32]), T("UINT32", [33, 1]), [1]), True),
    (sigmoid([4096]), True),
    (dml.ActivationReluOperatorDesc(input_tensor=T("INT32", [4096]), output_tensor=T("INT32", [4096])), True),
    (dml.ReduceOperatorDesc("SUM", T(F32, [32, 32]), T(F32, [1, 32]), [0]), False),  # small: NumPy for good
    # the row-copy kernel's operators (backends/cpu/slice.py), whose numba kernel takes seconds to compile
    (dml.SliceOperatorDesc(T(F32, [64, 64]), T(F32, [32, 64]), 2, [0, 0], [32, 64], [2, 1]), True),
    (dml.DepthToSpaceOperatorDesc(T(F32, [1, 64, 8, 8]), T(F32, [1, 16, 16, 16]), 2), True),
    (dml.PaddingOperatorDesc(T(F32, [32, 32]), T(F32, [34, 34]), "REFLECTION", 0.0, 2, [1, 1], [1, 1]), True),
])
def test_a_descriptor_above_the_limits_starts_on_numpy(cold: Any, desc: dml.OperatorDesc, cold_start: bool) -> None:
    assert isinstance(compiled_kernel(desc), cold.BackgroundKernel) is cold_start


def test_the_limits_and_the_switch_keep_their_meaning(cold: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu, "SMALL_TENSOR_ELEMENTS", 0)            # conftest's `cpu`: numba's kernels always
    assert kernel_module(compiled_kernel(SUM_33)).startswith("opendml.backends.cpu.reduce")
    monkeypatch.setattr(cpu, "SMALL_TENSOR_ELEMENTS", 2**62)        # `cpu-small`: the NumPy kernels always
    assert kernel_module(compiled_kernel(SUM_33)).startswith("opendml.backends.cpu.small.")
    monkeypatch.setattr(cpu, "SMALL_TENSOR_ELEMENTS", 1024)
    monkeypatch.setattr(cpu, "COLD_START", False)
    assert kernel_module(compiled_kernel(SUM_33)).startswith("opendml.backends.cpu.reduce")


def test_numpy_answers_until_the_background_compile_is_done_then_numba(cold: Any) -> None:
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(SUM_33))
    kernel = compiled._kernel
    x = rows_of(33)
    expected = x.astype(np.float64).sum(axis=1, keepdims=True)
    (before,) = compiled(x)
    assert kernel.kernel is None and kernel.job is not None and not kernel.job.marker.exists()
    cold.COMPILER.wait()                                   # the background process has finished: the next dispatch
    (after,) = compiled(x)                                 # loads numba's kernel and runs it
    assert kernel.kernel is not None and kernel_module(kernel.kernel).startswith("opendml.backends.cpu.reduce")
    np.testing.assert_allclose(before, expected, rtol=1e-6)
    np.testing.assert_allclose(after, expected, rtol=1e-6)
    # A later process finds the marker: numba's kernel from its first dispatch, and no background process.
    fresh = device.compile_operator(device.create_operator(SUM_33))
    compiled_again = fresh._kernel
    fresh(x)
    assert compiled_again.kernel is not None and cold.COMPILER.process is None and not cold.COMPILER.queued


def test_a_failed_background_compile_leaves_numpy_answering(cold: Any) -> None:
    cold.COMPILER.command = (sys.executable, "-c", "raise SystemExit(3)")
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(SUM_33))
    x = rows_of(33)
    expected = x.astype(np.float64).sum(axis=1, keepdims=True)
    for _ in range(3):
        (y,) = compiled(x)
        cold.COMPILER.wait()
        np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert compiled._kernel.kernel is None and compiled._kernel.job.marker in cold.COMPILER.failed


def test_a_job_compiles_numbas_kernel_and_marks_it(cold: Any) -> None:
    # What the background process does with each job (background.main), here in this process.
    job = cold.Job("reduce", SUM_33, dml.ExecutionFlags.NONE, False, [("<f4", 33 * 32, False)], [("<f4", 33, True)])
    assert not job.marker.exists()
    job.run()
    assert job.marker.exists()
    assert cold.Job("reduce", SUM_33, dml.ExecutionFlags.NONE, True, [("<f4", 33 * 32, False)],
                    [("<f4", 33, True)]).marker != job.marker             # debug kernels are another job


def test_a_fused_gelu_agrees_before_and_after_the_hand_over(cold: Any) -> None:
    # Above SMALL_TENSOR_ELEMENTS: GELU's formula in NumPy (formula.evaluate), then in numba's kernel. Golden:
    # x Phi(x) of the normalized rows, worked out in float64 (Phi through math.erf).
    import math
    sizes = [32, 64]
    desc = dml.MeanVarianceNormalization1OperatorDesc(T(F32, sizes), None, None, T(F32, sizes), [1], True, 1e-5,
                                                      fused_activation=dml.ActivationGeluOperatorDesc())
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    x = np.linspace(-4, 9, 32 * 64, dtype=np.float32).reshape(sizes) ** 2 % 7
    wide = x.astype(np.float64)
    z = (wide - wide.mean(1, keepdims=True)) / np.sqrt(wide.var(1, keepdims=True) + np.float32(1e-5))
    expected = z * (1 + np.vectorize(math.erf)(z / math.sqrt(2))) / 2
    (before,) = compiled(x)
    assert compiled._kernel.kernel is None
    cold.COMPILER.wait()
    (after,) = compiled(x)
    assert compiled._kernel.kernel is not None
    np.testing.assert_allclose(before, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(before, after, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(("setting", "on"), [("0", False), ("1", True), (None, True)])
def test_the_environment_turns_the_cold_start_off_in_a_new_process(setting: str | None, on: bool) -> None:
    import os
    environment = {name: value for name, value in os.environ.items() if name != "OPENDML_CPU_COLD_START"}
    if setting is not None:
        environment["OPENDML_CPU_COLD_START"] = setting
    result = subprocess.run([sys.executable, "-c", "import opendml.backends.cpu as cpu; print(cpu.COLD_START)"],
                            capture_output=True, text=True, timeout=120, check=False, env=environment)
    assert result.stdout.strip() == str(on), result.stderr


def test_a_background_process_that_cannot_start_leaves_numpy_answering(cold: Any, tmp_path: Any) -> None:
    cold.COMPILER.command = (str(tmp_path / "no-such-python"), "-c", "")
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(SUM_33))
    x = rows_of(33)
    for _ in range(2):
        (y,) = compiled(x)
        np.testing.assert_allclose(y, x.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-6)
    assert compiled._kernel.kernel is None and compiled._kernel.job.marker in cold.COMPILER.failed
