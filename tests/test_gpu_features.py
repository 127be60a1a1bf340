"""The GPU backend's use of what the adapter offers: subgroups in the work-group trees (backends/gpu/tree.py),
shader-f16 for FLOAT16 inputs (wgsl.tensor_input), neither of which may change a result, and its own limits.

The trees must combine the same pairs in the same order whether a level runs in workgroup memory or in registers,
and whatever the subgroup size, so that results never depend on the adapter. Checked here on the adapter at hand
(lavapipe in CI), at three subgroup widths: 0 (every level in workgroup memory), the adapter's own subgroup size
(the levels below it in registers), and twice that (the subgroups fail the check, so the first invocation of each
segment replays those levels from workgroup memory):
- a probe shader over a combine that is neither commutative nor associative, against a NumPy replay of the tree,
  counting the combines that each segment's first invocation makes (which tells which path it took);
- REDUCE and MEAN_VARIANCE_NORMALIZATION1, whose every tree pass must give the same bits at every width.

FLOAT16 inputs that a shader computes with load as f16 values (array<f16> bindings) where the adapter has
shader-f16, and are unpacked from 32-bit words where it has not: every FLOAT16 bit pattern must give the same
results both ways.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml
from opendml.backends.gpu import specialize

T = dml.TensorDesc
WORKGROUP = 256


def gpu_context() -> Any:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    return dml.Device(backend="gpu").backend.context  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def context() -> Any:
    """The adapter's context, where it offers subgroups."""
    found = gpu_context()
    if not found.subgroup_width:
        pytest.skip(f"the adapter {found.adapter_info.name!r} offers no subgroup operations")
    return found


@pytest.fixture(scope="module")
def subgroup_size(context: Any) -> int:
    """The subgroup size the adapter runs a 256-wide compute shader with (lavapipe: 8 with AVX2)."""
    source = ("@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
              "@group(0) @binding(1) var<storage, read> P: array<u32>;\n"
              "@compute @workgroup_size(256)\nfn main(@builtin(local_invocation_index) t: u32, "
              "@builtin(subgroup_size) size: u32) { out[t] = size; }\n")
    sizes = dispatch(context, source, np.zeros(WORKGROUP, np.uint32), np.zeros(2, np.uint32))
    assert len(set(sizes.tolist())) == 1, sizes
    return int(sizes[0])


def dispatch(context: Any, source: str, data: np.ndarray, params: np.ndarray) -> np.ndarray:
    """One work-group of `source` over a buffer holding `data` (u32) and parameters `params`; the buffer after."""
    from opendml.backends.gpu.context import Recorder

    buffer = context.create_buffer(data)
    recorder = Recorder(context)
    recorder.dispatch(source, [buffer.handle], params, (1, 1))
    recorder.submit()
    return buffer.read(np.uint32)


@pytest.fixture
def width(request: pytest.FixtureRequest, context: Any, subgroup_size: int, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[int]:
    """The context's subgroup width set to 0, to the adapter's subgroup size, or to twice that."""
    value = {"memory": 0, "subgroup": subgroup_size, "too wide": 2 * subgroup_size}[request.param]
    monkeypatch.setattr(context, "subgroup_width", value)
    yield value


# -- the tree itself --------------------------------------------------------------------------------------------------

#: fn mix(a, b): neither commutative nor associative, so any other pair or order gives other bits; each call is
#: counted for the invocation that makes it.
PROBE = """
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read> P: array<u32>;
var<private> me: u32;

fn mix(a: u32, b: u32) -> u32 {
    data[512u + me] += 1u;
    return (a * 0x9e3779b1u) ^ (b + 0x7f4a7c15u) ^ (a >> 7u);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lane: u32{SUBGROUP_PARAMETERS}) {
    me = lane;
    let parts = P[0];
    let step = P[1];    // 1: a segment's parts are neighbours; else each part is `step` invocations from the next
    var part = lane % parts;
    var slot = lane / parts;
    if (step != 1u) {
        part = lane / step;
        slot = lane % step;
    }
    let result = probe_tree(data[lane], slot * parts, part, parts, step, lane, {SUBGROUP});
    data[256u + lane] = result;
}
"""


def mix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (a * np.uint32(0x9E3779B1)) ^ (b + np.uint32(0x7F4A7C15)) ^ (a >> np.uint32(7))


def replay(values: np.ndarray) -> np.uint32:
    """The fixed tree over one segment's values: entry p combines entry p + half, half = n/2, n/4, ..., 1."""
    entries = values.copy()
    half = len(entries) // 2
    while half:
        entries[:half] = mix(entries[:half], entries[half: 2 * half])
        half //= 2
    return entries[0]


@pytest.mark.parametrize("broadcast", [False, True], ids=["part 0", "broadcast"])
@pytest.mark.parametrize("layout", ["neighbours", "strided"])
@pytest.mark.parametrize("parts", [1, 2, 4, 8, 16, 32, 64, 256])
@pytest.mark.parametrize("width", ["memory", "subgroup", "too wide"], indirect=True)
def test_the_tree_combines_the_same_pairs_in_the_same_order(context: Any, subgroup_size: int, width: int,
                                                            parts: int, layout: str, broadcast: bool) -> None:
    from opendml.backends.gpu import tree

    step = 1 if layout == "neighbours" else WORKGROUP // parts
    probe = PROBE
    for key, value in tree.placeholders(context).items():
        probe = probe.replace("{" + key + "}", value)
    source = tree.tree(context, "probe_tree", "u32", "mix", WORKGROUP, ("s",), "w0", broadcast=broadcast) + probe
    assert ("subgroupShuffleDown" in source) == bool(width)
    values = np.random.default_rng(parts).integers(0, 2**32, WORKGROUP, dtype=np.uint64).astype(np.uint32)
    data = np.concatenate([values, np.zeros(2 * WORKGROUP, np.uint32)])
    after = dispatch(context, source, data, np.array([parts, step], np.uint32))
    results, calls = after[WORKGROUP: 2 * WORKGROUP], after[2 * WORKGROUP:]
    lanes = np.arange(WORKGROUP)
    part = lanes % parts if step == 1 else lanes // step
    slot = lanes // parts if step == 1 else lanes % step
    levels = parts.bit_length() - 1
    # The levels left to registers: those whose pairs are less than `width` invocations apart.
    half = parts // 2
    while half * step > width // 2:
        half //= 2
    replayed = 0 if width <= subgroup_size else max(2 * half - 1, 0)
    for s in range(WORKGROUP // parts):
        mine = slot == s
        expected = replay(values[mine][np.argsort(part[mine])])
        first = np.flatnonzero(mine & (part == 0))[0]
        assert results[first] == expected, (s, results[first], expected)
        if broadcast or not width:
            assert np.all(results[mine] == expected)
        # Part 0 combines once per level; where the subgroups failed the check it replays the register levels too.
        assert calls[first] == levels + replayed, (calls[first], levels, replayed)


# -- the operators' trees ---------------------------------------------------------------------------------------------

def _reduce(function: str, data_type: str, shape: list[int], axes: list[int], strides: list[int] | None = None
            ) -> dml.OperatorDesc:
    out_shape = [1 if axis in axes else size for axis, size in enumerate(shape)]
    out_type = "UINT32" if function.startswith("ARG") else data_type
    return dml.ReduceOperatorDesc(function, T(data_type, shape, strides), T(out_type, out_shape), axes)


#: Every kind of tree pass: PARTS along the contiguous axis (output_fast off) or across outputs (on), one chunk or
#: several, the tree over many chunks' states, 8/16-bit outputs' final combine; MVN with one chunk per group and
#: chunked groups (the merge pass).
CASES = {
    "SUM rows": _reduce("SUM", "FLOAT32", [37, 1000], [1]),
    "SUM columns": _reduce("SUM", "FLOAT32", [1000, 37], [0]),
    "SUM long": _reduce("SUM", "FLOAT32", [3, 300000], [1]),
    "L2 everything": _reduce("L2", "FLOAT16", [50, 4000], [0, 1]),
    "AVERAGE transposed": _reduce("AVERAGE", "FLOAT32", [300, 200], [0], [1, 300]),
    "LOG_SUM_EXP": _reduce("LOG_SUM_EXP", "FLOAT32", [9, 5000], [1]),
    "MULTIPLY INT32": _reduce("MULTIPLY", "INT32", [20, 700], [1]),
    "MIN": _reduce("MIN", "FLOAT32", [5, 70000], [1]),
    "ARGMAX ties": _reduce("ARGMAX", "INT16", [6, 20000], [1]),
    "ARGMIN columns": _reduce("ARGMIN", "UINT8", [3000, 24], [0]),
    "MVN": dml.MeanVarianceNormalization1OperatorDesc(T("FLOAT32", [33, 900]), None, None, T("FLOAT32", [33, 900]),
                                                      [1], True, 1e-5),
    "MVN merged chunks": dml.MeanVarianceNormalization1OperatorDesc(T("FLOAT32", [2, 3, 40000]), None, None,
                                                                    T("FLOAT32", [2, 3, 40000]), [0, 2], True, 1e-5),
}


def _inputs(desc: dml.OperatorDesc) -> list[np.ndarray | None]:
    rng = np.random.default_rng(7)
    arrays: list[np.ndarray | None] = []
    for _, tensor in desc.input_slots():
        if tensor is None:
            arrays.append(None)
            continue
        dtype = tensor.data_type.numpy_dtype
        if dtype.kind == "f":
            values = (rng.standard_normal(tensor.sizes) * 50 + 1e3).astype(dtype)
        else:
            values = rng.integers(0, 5, tensor.sizes).astype(dtype)   # many ties for ARGMAX and ARGMIN
        arrays.append(values)
    return arrays


@pytest.mark.parametrize("name", list(CASES))
def test_every_tree_pass_gives_the_same_bits_at_every_subgroup_width(context: Any, subgroup_size: int, name: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    desc = CASES[name]
    arrays = _inputs(desc)
    device = dml.Device(backend="gpu")
    results = []
    for value in (0, subgroup_size, 2 * subgroup_size):
        monkeypatch.setattr(context, "subgroup_width", value)
        compiled = device.compile_operator(device.create_operator(desc))
        outputs = compiled(*arrays)
        results.append([np.asarray(output).tobytes() for output in outputs])
    assert results[1] == results[0]
    assert results[2] == results[0]


# -- which adapters get subgroup trees --------------------------------------------------------------------------------

class _Compiler:
    """A wgpu device's shader compiler that takes a module only if its directives are `accepted`."""

    def __init__(self, accepted: tuple[str, ...], error: type[Exception]) -> None:
        self.accepted = accepted
        self.error = error
        self.tried: list[str] = []

    def create_shader_module(self, code: str) -> None:
        self.tried.append(code)
        directives = "enable subgroups;\n" if code.startswith("enable subgroups;") else ""
        if directives not in self.accepted:
            raise self.error("invalid")


@pytest.mark.parametrize(("features", "info", "accepted", "expected"), [
    ({"subgroup"}, {"subgroup_min_size": 32}, ("",), (32, "")),
    ({"subgroup"}, {"stackgroup_min_size": 4}, ("",), (4, "")),           # wgpu 0.32's spelling
    ({"subgroup"}, {"subgroup_min_size": 8}, ("enable subgroups;\n",), (8, "enable subgroups;\n")),
    ({"subgroup"}, {"subgroup_min_size": 8}, (), (0, "")),                 # the compiler takes neither
    (set(), {"subgroup_min_size": 32}, ("",), (0, "")),                    # the adapter offers no subgroups
    ({"subgroup"}, {}, ("",), (0, "")),                                    # nor says how wide they are
    ({"subgroup"}, {"subgroup_min_size": 24}, ("",), (0, "")),
    ({"subgroup"}, {"subgroup_min_size": 256}, ("",), (0, "")),
])
def test_subgroup_trees_only_where_the_adapter_and_its_compiler_have_them(
        features: set[str], info: dict[str, int], accepted: tuple[str, ...], expected: tuple[int, str]) -> None:
    from types import SimpleNamespace

    from opendml.backends.gpu.context import GpuContext

    class Error(Exception):
        pass

    compiler = _Compiler(accepted, Error)
    fake = SimpleNamespace(features=frozenset(features), adapter=SimpleNamespace(info=info), device=compiler,
                           wgpu=SimpleNamespace(GPUError=Error))
    assert GpuContext._subgroups(fake) == expected  # type: ignore[arg-type]
    if expected[0]:
        assert "subgroupShuffleDown" in compiler.tried[-1]


# -- which adapter ----------------------------------------------------------------------------------------------------

def _adapter(name: str, backend: str = "Vulkan", kind: str = "DiscreteGPU") -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(info={"device": name, "vendor": "v", "backend_type": backend, "adapter_type": kind})


@pytest.mark.parametrize(("preferred", "selector", "expected"), [
    ("Discrete B", None, "Discrete B"),       # the high-performance one, as listed (a new object from wgpu)
    (None, None, "Integrated A"),             # wgpu prefers none: the first listed
    ("GL C", None, "Integrated A"),           # nor the OpenGL fallback
    ("Discrete B", "integrated", "Integrated A"),
    ("Discrete B", "B", "Discrete B"),        # the first whose name contains it, in any case
    (None, "C", "Discrete B"),                # "Discrete B" contains a "c" before "GL C" does
])
def test_an_adapter_is_picked_by_performance_or_by_name(monkeypatch: pytest.MonkeyPatch, preferred: str | None,
                                                        selector: str | None, expected: str) -> None:
    from opendml.backends.gpu import context

    listed = [_adapter("Integrated A", kind="IntegratedGPU"), _adapter("Discrete B"), _adapter("GL C", "OpenGL")]
    monkeypatch.setattr(context, "_adapters", listed)
    wgpu = context.import_wgpu()
    asked: list[str] = []

    def request_adapter_sync(*, power_preference: str) -> Any:
        asked.append(power_preference)
        return None if preferred is None else _adapter(preferred, "OpenGL" if "GL" in preferred else "Vulkan")

    monkeypatch.setattr(wgpu.gpu, "request_adapter_sync", request_adapter_sync)
    chosen = context._pick(selector)
    assert chosen.info["device"] == expected and chosen in listed
    assert asked == ([] if selector else ["high-performance"])


# -- the adapter's limits ---------------------------------------------------------------------------------------------

def test_the_device_is_asked_for_the_adapters_own_limits() -> None:
    """WebGPU gives a device its default limits (128 MiB bindings, 256 MiB buffers) unless it asks for more: the
    context asks for every limit the adapter has, and its binding checks use those."""
    from opendml.backends.gpu.context import GpuContext

    real = gpu_context().adapter
    asked: dict[str, Any] = {}

    class Adapter:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def request_device_sync(self, **options: Any) -> Any:
            asked.update(options)
            return real.request_device_sync(**options)

    context = GpuContext(Adapter())
    assert asked["required_limits"] == dict(real.limits)
    for key in ("max-storage-buffer-binding-size", "max-buffer-size", "max-storage-buffers-per-shader-stage",
                "min-storage-buffer-offset-alignment", "max-compute-workgroups-per-dimension"):
        assert context.device.limits[key] == real.limits[key], key
    assert (context.max_binding_size, context.max_buffer_size, context.offset_alignment) == (
        real.limits["max-storage-buffer-binding-size"], real.limits["max-buffer-size"],
        real.limits["min-storage-buffer-offset-alignment"])


# -- FLOAT16 through shader-f16 ----------------------------------------------------------------------------------------

def _every_float16() -> np.ndarray:
    """All 65536 FLOAT16 bit patterns (subnormals, infinities, NaN payloads), as a [256, 256] array."""
    return np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)


#: Operators that compute with FLOAT16 inputs, through padded or transposed strides too.
F16_CASES = {
    "IDENTITY": (dml.ActivationIdentityOperatorDesc(input_tensor=T("FLOAT16", [256, 256]),
                                                     output_tensor=T("FLOAT16", [256, 256])),
                 lambda: [_every_float16()]),
    "SIGMOID transposed": (dml.ActivationSigmoidOperatorDesc(input_tensor=T("FLOAT16", [256, 256], [1, 256]),
                                                            output_tensor=T("FLOAT16", [256, 256])),
                           lambda: [_every_float16()]),
    "REDUCE SUM padded": (dml.ReduceOperatorDesc("SUM", T("FLOAT16", [256, 250], [256, 1]), T("FLOAT16", [256, 1]),
                                                 [1]), lambda: [_every_float16()[:, :250]]),
    "REDUCE L2 columns": (dml.ReduceOperatorDesc("L2", T("FLOAT16", [256, 256]), T("FLOAT16", [1, 256]), [0]),
                          lambda: [_every_float16()]),
    "MVN with Scale and Bias": (
        dml.MeanVarianceNormalization1OperatorDesc(T("FLOAT16", [256, 256]), T("FLOAT16", [1, 256]),
                                                   T("FLOAT16", [1, 256]), T("FLOAT16", [256, 256]), [1], True, 1e-3),
        lambda: [_every_float16(), _every_float16()[7:8], _every_float16()[200:201]]),
}


def shaders(compiled: dml.CompiledOperator) -> list[str]:
    """The WGSL of every pass of a compiled gpu operator."""
    from opendml.backends.gpu.kernel import Pass

    found: list[str] = []

    def visit(value: Any) -> None:
        if isinstance(value, Pass):
            found.append(value.wgsl)
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)
        elif hasattr(value, "work"):        # reduce.Step
            visit(value.work)

    for value in vars(compiled._kernel).values():  # type: ignore[attr-defined]
        visit(value)
    assert found
    return found


@pytest.mark.parametrize("name", list(F16_CASES))
def test_float16_inputs_give_the_same_bits_with_and_without_shader_f16(name: str, monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    context = gpu_context()
    if "shader-f16" not in context.features:
        pytest.skip(f"the adapter {context.adapter_info.name!r} has no shader-f16")
    desc, make = F16_CASES[name]
    device = dml.Device(backend="gpu")
    arrays = make()
    results = []
    for features in (context.features, context.features - {"shader-f16"}):
        monkeypatch.setattr(context, "features", features)
        compiled = device.compile_operator(device.create_operator(desc))
        # The passes that read the FLOAT16 input element by element bind it as array<f16> exactly where shader-f16
        # is on; the specialized word pass (a contiguous IDENTITY) reads it two elements a 32-bit word either way.
        whole_words = name == "IDENTITY" and specialize.ENABLED
        assert any("array<f16>" in source for source in shaders(compiled)) == (
            "shader-f16" in features and not whole_words)
        results.append([np.asarray(output) for output in compiled(*arrays)])
    for with_f16, without in zip(*results, strict=True):
        # The same bits, but for the payloads of NaNs that arithmetic made (which nothing specifies).
        nan = np.isnan(with_f16)
        assert np.array_equal(nan, np.isnan(without))
        assert np.array_equal(with_f16[~nan].view(np.uint16 if with_f16.dtype == np.float16 else np.uint32),
                              without[~nan].view(np.uint16 if without.dtype == np.float16 else np.uint32))


def test_float16_loads_are_exact_for_every_bit_pattern() -> None:
    """IDENTITY moves each FLOAT16 value through f32 and back (round to nearest even, exact here): every pattern
    but the NaNs comes back as it was, and NaNs stay NaNs of the same sign."""
    gpu_context()
    device = dml.Device(backend="gpu")
    desc = F16_CASES["IDENTITY"][0]
    values = _every_float16()
    (got,) = device.compile_operator(device.create_operator(desc))(values)
    nan = np.isnan(values)
    assert np.array_equal(got.view(np.uint16)[~nan], values.view(np.uint16)[~nan])
    assert np.all(np.isnan(got[nan]))
    assert np.array_equal(np.signbit(got[nan]), np.signbit(values[nan]))
