"""Shared pytest configuration.

Hypothesis profiles: ``ci`` (default; bounded run time) and ``slow`` (many more examples).  Select one with the
``HYPOTHESIS_PROFILE`` environment variable or pytest's ``--hypothesis-profile`` option.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import opendml.backends.cpu

# The suite runs numba's kernels where the size limits say so, never the cold start's NumPy kernels that hand over
# once a background process has compiled numba's (backends/cpu/background.py: when depends on time and on numba's
# cache), in this process and in the ones its tests start; test_small_kernels.py turns it on to test it.
os.environ["OPENDML_CPU_COLD_START"] = "0"
opendml.backends.cpu.COLD_START = False

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "slow",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TESTS = Path(__file__).parent

settings.register_profile(
    "ci", parent=settings.get_profile("ci"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
settings.register_profile(
    "slow", parent=settings.get_profile("slow"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Test modules whose tests run once per backend (their devices are made with the default backend).
EVERY_BACKEND = {
    "test_split", "test_one_hot", "test_gather_nd1", "test_mean_variance_normalization1", "test_reduce",
    "test_reduce_properties", "test_activations", "test_fuzz_data", "test_fuzz_memory", "test_graph",
    "test_concurrency", "test_gpu", "test_reduce_shapes", "test_join", "test_arg_min_max", "test_gather_nd",
    "test_mean_variance_normalization", "test_activation_standalone", "test_fuzz_descriptors", "test_bindings",
    "test_activation_accuracy", "test_outputs", "test_element_wise", "test_graph_element_wise", "test_gemm",
    "test_convolution", "test_graph_gemm_convolution", "test_generators", "test_slice_cast",
    "test_cumulative", "test_padding_tile", "test_depth_space", "test_reverse_subsequences", "test_upsample",
    "test_gather", "test_nonzero", "test_scatter", "test_top_k",
}

#: Of those, the modules whose operators also have the cpu backend's small-tensor kernels (backends/cpu/small), all
#: but test_gpu: they run a third time, `cpu-small`, with every descriptor on those kernels, while `cpu` runs every
#: descriptor on numba's, so that the two kinds of kernel pass the same tests.
SMALL_KERNELS_TOO = EVERY_BACKEND - {"test_gpu"}

#: Of those, the modules that also run on the gpu backend's generic shaders, `gpu-generic` (specialize.ENABLED False:
#: sizes and strides read from the parameter buffer, as `OPENDML_GPU_SPECIALIZE=0` gives), while `gpu` runs the
#: shaders specialized to each descriptor, so that both paths pass the same tests (issue 29); a subset, for CI's time.
GPU_GENERIC_TOO = {"test_element_wise", "test_split", "test_join", "test_gather_nd1", "test_one_hot", "test_reduce",
                   "test_mean_variance_normalization1", "test_padding_tile"}

#: Tests of other modules that also run on `gpu-generic`, (module, test): test_fuzz_memory's guard pages (fewer
#: examples there, for CI's time).
GPU_GENERIC_ALSO = {("test_fuzz_memory", "test_guarded_dispatches_in_a_subprocess")}


def gpu_adapter_missing() -> str | None:
    """Why the gpu backend cannot run here (None when it can)."""
    import opendml as dml

    if not dml.list_adapters():
        return ("no WebGPU adapter on this machine (install wgpu and a Vulkan driver, e.g. Debian's "
                "mesa-vulkan-drivers)")
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module in EVERY_BACKEND and "backend" in metafunc.fixturenames:
        names = ["cpu", "cpu-small", "gpu"] if module in SMALL_KERNELS_TOO else ["cpu", "gpu"]
        test = (module, metafunc.function.__name__)
        generic = module in GPU_GENERIC_TOO or test in GPU_GENERIC_ALSO
        names += ["gpu-generic"] if generic else []
        only = getattr(metafunc.function, "backends", None)   # a test that names its backends runs on those only
        metafunc.parametrize("backend", [name for name in names if only is None or name in only
                                         or (name == "gpu-generic" and "gpu" in only)], indirect=True)


@pytest.fixture
def backend_name(request: pytest.FixtureRequest, backend: str) -> str:
    """The name of this test's backend parameter: `cpu`, `cpu-small`, `gpu` or `gpu-generic` (`backend` itself is
    the device's backend, `cpu` for both cpu settings, `gpu` for both gpu ones)."""
    callspec = getattr(request.node, "callspec", None)
    name: str = callspec.params.get("backend", backend) if callspec is not None else backend
    return name


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend of this test's devices: each one after the other in the EVERY_BACKEND modules, the cpu one with
    numba's kernels (`cpu`) and with the NumPy small-tensor kernels (`cpu-small`); elsewhere the cpu backend as
    users get it (small tensors on the NumPy kernels)."""
    name: str = getattr(request, "param", "cpu")
    if name in ("gpu", "gpu-generic"):
        reason = gpu_adapter_missing()
        if reason is not None:
            pytest.skip(f"gpu backend: {reason}")
    import opendml.backends.cpu
    import opendml.device

    device_backend, limits = backend_settings(name)
    if hasattr(request, "param"):
        for limit, value in limits.items():
            monkeypatch.setattr(opendml.backends.cpu, limit, value)
    monkeypatch.setattr(opendml.device, "DEFAULT_BACKEND", device_backend)
    if not gpu_specialized(name):
        import opendml.backends.gpu.specialize

        monkeypatch.setattr(opendml.backends.gpu.specialize, "ENABLED", False)
    forget_cached_devices((name, hasattr(request, "param")))
    return device_backend


_CACHED_UNDER: list[object] = [None]


def forget_cached_devices(setting: object) -> None:
    """The test modules' cached helpers (functools.cache: devices, compiled operators) keep what they made under
    the backend setting of the test that first called them. When a test runs under another setting than the test
    before it in this process, every such cache is cleared, so that no test runs on another backend's devices or
    on kernels chosen under other size limits."""
    if _CACHED_UNDER[0] == setting:
        return
    _CACHED_UNDER[0] = setting
    for module in list(sys.modules.values()):
        if Path(getattr(module, "__file__", None) or "/").parent == TESTS:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def backend_settings(name: str) -> tuple[str, dict[str, int]]:
    """(the device backend, the cpu backend's size limits) that run a test backend's kernels: `cpu` puts every
    tensor on numba's kernels, `cpu-small` on the NumPy small-tensor kernels, `gpu` is the gpu backend. The fixture
    above and the guarded subprocesses of test_fuzz_memory both set them up from here."""
    value = 2**62 if name == "cpu-small" else 0
    limits = {"SMALL_TENSOR_ELEMENTS": value}
    return {"cpu-small": "cpu", "gpu-generic": "gpu"}.get(name, name), limits


def gpu_specialized(name: str) -> bool:
    """Whether a test backend compiles the gpu backend's shaders specialized to each descriptor: all but
    `gpu-generic` (specialize.ENABLED False)."""
    return name != "gpu-generic"
