"""The cpu backend's choice between its small-tensor kernels (backends/cpu/small) and numba's, and the hand-over
from an interpreted small kernel to numba's. (That both kinds of kernel give the same results is what every
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
    (sigmoid([8, 16]), True),                                                                 # 128 elements
    (sigmoid([129]), False),
])
def test_every_tensor_within_the_limit_picks_the_small_kernel(desc: dml.OperatorDesc, small: bool) -> None:
    module = kernel_module(compiled_kernel(desc))
    assert module.startswith("opendml.backends.cpu.small.") is small, module


@pytest.mark.parametrize("budget_calls", [0, 1, 3])
def test_an_interpreted_kernel_hands_over_to_numba_after_its_budget(monkeypatch: pytest.MonkeyPatch,
                                                                     budget_calls: int) -> None:
    monkeypatch.setattr(cpu, "INTERPRETED_ELEMENT_BUDGET", budget_calls * 128 + 127)   # calls of 128 elements
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(sigmoid([8, 16])))
    tiered = compiled._kernel
    assert isinstance(tiered, cpu.TieredKernel)
    x = np.linspace(-30, 30, 128, dtype=np.float32).reshape(8, 16)
    expected = 1 / (1 + np.exp(-x.astype(np.float64)))
    for call in range(budget_calls + 2):
        (y,) = compiled(x)
        on_numba = call >= budget_calls
        assert (tiered.kernel is not None) is on_numba, call
        np.testing.assert_allclose(y, expected, rtol=2e-6, atol=1e-30)
    assert kernel_module(tiered.kernel).startswith("opendml.backends.cpu.activations")


def test_only_kernels_that_interpret_formulas_hand_over() -> None:
    sizes = [2, 4, 4]
    plain = dml.MeanVarianceNormalization1OperatorDesc(T(F32, sizes), None, None, T(F32, sizes), [2], True, 1e-5)
    fused = dml.MeanVarianceNormalization1OperatorDesc(T(F32, sizes), None, None, T(F32, sizes), [2], True, 1e-5,
                                                       fused_activation=dml.ActivationGeluOperatorDesc())
    assert not isinstance(compiled_kernel(plain), cpu.TieredKernel)       # NumPy only: microseconds already
    tiered = compiled_kernel(fused)
    assert isinstance(tiered, cpu.TieredKernel) and tiered.calls_left == cpu.INTERPRETED_ELEMENT_BUDGET // 32
    reduce = dml.ReduceOperatorDesc("ARGMAX", T(F32, [4, 4]), T("UINT32", [4, 1]), [1])
    assert not isinstance(compiled_kernel(reduce), cpu.TieredKernel)


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
