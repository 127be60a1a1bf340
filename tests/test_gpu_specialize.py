"""The gpu backend's shaders specialized to each descriptor (issue 29, backends/gpu/specialize.py), against the
generic path that reads every shape from the parameter buffer.

The layout helpers (offset_of, coord_of, size_of, stride_of, rank_of) are run on both paths over blocks that merge,
drop size-1 dimensions, broadcast and wrap negative strides, their results worked out here in Python; a specialized
pipeline is shared by operators of one descriptor and never by another; the element-wise engine's vec4 pass gives
way to its scalar pass where a binding's base is not a whole 16-byte word; 16-bit outputs with gaps keep every byte
around their elements. The goldens, properties and sentinel tests of the modules of each specialized family run on
both paths (conftest's `gpu-generic`, GPU_GENERIC_TOO), and test_fuzz_memory's guard pages too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing
from strategies import build_buffer, read_buffer, sentinel_bytes

import opendml as dml
from opendml.backends import DeviceRange
from opendml.backends.gpu import elementwise, specialize
from opendml.backends.gpu.context import Bound, group_counts
from opendml.backends.gpu.elementwise import COMMON, Params
from opendml.backends.gpu.kernel import compile_pass
from opendml.backends.gpu.wgsl import params_binding

pytestmark = pytest.mark.skipif(gpu_adapter_missing() is not None, reason=f"gpu backend: {gpu_adapter_missing()}")

T = dml.TensorDesc
F32 = dml.DataType.FLOAT32


@pytest.fixture(params=[True, False], ids=["specialized", "generic"])
def specialized(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    monkeypatch.setattr(specialize, "ENABLED", request.param)
    yield request.param


def gpu() -> dml.Device:
    return dml.Device(backend="gpu")


# -- the layout helpers ---------------------------------------------------------------------------------------------

#: (sizes, strides): contiguous (merges to one dimension), size-1 dimensions, a broadcast, a transposition, a
#: negative stride as its u32 (SLICE1's), rank 0 and rank 8.
BLOCKS = [([2, 3, 4], [12, 4, 1]), ([1, 3, 1, 2], [50, 7, 9, 1]), ([3, 4], [0, 1]), ([3, 4], [1, 3]),
          ([4, 2], [-2 & 0xFFFFFFFF, 1]), ([], []), ([1, 2, 1, 2, 1, 2, 1, 3], [99, 12, 5, 6, 7, 3, 8, 1])]


def expected_offset(sizes: Sequence[int], strides: Sequence[int], o: int) -> int:
    """offset_of by hand: the row-major coordinates of o (the outermost modulo its size) times the strides, u32."""
    offset = 0
    for size, stride in zip(reversed(sizes), reversed(strides), strict=True):
        offset += (o % size) * stride
        o //= size
    return offset % (1 << 32)


def expected_coordinate(sizes: Sequence[int], o: int, dim: int) -> int:
    for size in reversed(sizes[dim + 1:]):
        o //= size
    return o % sizes[dim] if dim < len(sizes) else 0


def run_layout_shader(sizes: Sequence[int], strides: Sequence[int], count: int) -> tuple[np.ndarray, str]:
    """Per logical index o < count: offset_of, coord_of of each dimension and of the one past the rank (a padded
    dimension of size 1; rank 8 has none: its last coordinate again); then rank_of and every size_of and stride_of
    with literal arguments."""
    device = gpu()
    context = device.create_buffer(4).context
    params = Params(1)
    block = params.add_tensor(sizes, strides)
    rank = len(sizes)
    width = rank + 2
    coordinates = "".join(f"    out[{width}u * o + {1 + d}u] = coord_of({block}u, o, {d}u);\n" for d in range(rank))
    queries = "".join(f"        out[{width * count + 1 + 2 * d}u] = size_of({block}u, {d}u);\n"
                      f"        out[{width * count + 2 + 2 * d}u] = stride_of({block}u, {d}u);\n" for d in range(8))
    source = (f"{params_binding(1)}{COMMON}@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
              f"@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n"
              f"    let o = gid.x;\n    if (o >= {count}u) {{ return; }}\n"
              f"    out[{width}u * o] = offset_of({block}u, o);\n{coordinates}"
              f"    out[{width}u * o + {rank + 1}u] = coord_of({block}u, o, {min(rank, 7)}u);\n"
              f"    if (o == 0u) {{\n        out[{width * count}u] = rank_of({block}u);\n{queries}    }}\n}}\n")
    words = width * count + 17
    step = compile_pass(context, source, 1, params, group_counts(count, 64))
    target = context.allocate(4 * words)
    recorder, own = context.recorder()
    step.record(recorder, [Bound(target, 0, 4 * words, 0)])
    if own:
        recorder.submit()
    return np.frombuffer(context.read(target, 0, 4 * words), np.uint32), step.wgsl


@pytest.mark.parametrize(("sizes", "strides"), BLOCKS)
def test_the_layout_helpers_on_both_paths(specialized: bool, sizes: list[int], strides: list[int]) -> None:
    count = int(np.prod(sizes)) + 3   # three indices past the last element: the outermost coordinate wraps
    got, source = run_layout_shader(sizes, strides, count)
    rank = len(sizes)
    width = rank + 2
    for o in range(count):
        row = got[width * o: width * (o + 1)].tolist()
        assert row[0] == expected_offset(sizes, strides, o), (o, row)
        assert row[1:] == [expected_coordinate(sizes, o, d) for d in [*range(rank), min(rank, 7)]], (o, row)
    padded_sizes = [*sizes, *[1] * (8 - rank)]
    padded_strides = [*strides, *[0] * (8 - rank)]
    tail = got[width * count:].tolist()
    assert tail == [rank, *[value for d in range(8) for value in (padded_sizes[d], padded_strides[d])]]
    # specialized: the helpers of the block (at word 1) are its own functions and literals; generic: P's
    assert ("offset_of(1u, o)" in source and "rank_of(1u)" in source) is not specialized
    assert ("fn offset_of_1(o: u32)" in source and "fn coord_of_1(o: u32, dim: u32)" in source) is specialized


def test_a_block_merges_its_contiguous_dimensions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(specialize, "ENABLED", True)
    assert specialize.merged([2, 3, 4], [12, 4, 1]) == [(24, 1)]
    assert specialize.merged([1, 3, 1, 2], [50, 7, 9, 1]) == [(3, 7), (2, 1)]
    assert specialize.merged([3, 4], [0, 0]) == [(12, 0)]
    assert specialize.merged([4, 2], [-2, -1]) == [(8, 0xFFFFFFFF)]   # -2 = -1 x 2, modulo 2^32
    params = Params(1)
    block = params.add_tensor([2, 3, 4], [12, 4, 1])
    count = params.add_constant(24)
    text = specialize.render(f"let a = offset_of({block}u, o); let b = P[{count}u]; let c = P[0u];", params)
    assert text.startswith("let a = offset_of_1(o); let b = 24u; let c = P[0u];")
    assert f"fn offset_of_{block}(o: u32) -> u32 {{\n    let q0 = o;\n    return (q0 % 24u);\n}}\n" in text
    monkeypatch.setattr(specialize, "ENABLED", False)
    assert specialize.render("offset_of(1u, o)", params) == "offset_of(1u, o)"


def test_a_source_is_cut_once_and_rendered_for_each_params(monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph's nodes of one kind share a source: render cuts it at its tokens once (specialize.template), then
    fills each node's literals; a block or word that is not a constant, and a run-time block, stay as written."""
    monkeypatch.setattr(specialize, "ENABLED", True)
    source = ("let r = rank_of(1u); let s = size_of(1u, 2u); let t = stride_of(1u, 9u); let u = size_of(1u, 9u);\n"
              "let a = coord_of(1u, o, 0u); let b = offset_of(1u, o); let c = offset_of(1u, i);\n"
              "let d = P[18u]; let e = P[0u]; let f = offset_of(b, o); let g = size_of(40u, 0u);\n")
    texts = []
    for sizes, strides in (([2, 3, 4], [12, 4, 1]), ([5, 1, 7], [1, 5, 5])):
        params = Params(1)
        assert params.add_tensor(sizes, strides) == 1 and params.add_constant(sizes[0] * 10) == 18
        texts.append(specialize.render(source, params))
    assert specialize.template(source) is specialize.template(source)   # cut once, cached
    assert texts[0].startswith("let r = 3u; let s = 4u; let t = 0u; let u = 1u;\n"
                               "let a = coord_of_1(o, 0u); let b = offset_of_1(o); let c = offset_of_1(i);\n"
                               "let d = 20u; let e = P[0u]; let f = offset_of(b, o); let g = size_of(40u, 0u);\n"
                               "fn coord_of_1(o: u32, dim: u32) -> u32 {\n")   # the functions in order of first use
    assert texts[0].endswith("fn offset_of_1(o: u32) -> u32 {\n    let q0 = o;\n    return (q0 % 24u);\n}\n")
    assert texts[1].startswith("let r = 3u; let s = 7u; let t = 0u; let u = 1u;\n")
    assert "let d = 50u;" in texts[1] and "return (q0 % 7u) * 5u + (q1 % 5u);" in texts[1]


# -- pipelines ------------------------------------------------------------------------------------------------------

def relu(desc: T) -> dml.ActivationReluOperatorDesc:
    return dml.ActivationReluOperatorDesc(input_tensor=desc, output_tensor=desc)


def kernel_of(device: dml.Device, desc: dml.OperatorDesc) -> Any:
    return device.compile_operator(device.create_operator(desc))._kernel


def test_an_operator_of_the_same_descriptor_reuses_the_pipeline(specialized: bool) -> None:
    device = gpu()
    context = device.create_buffer(4).context
    first = kernel_of(device, relu(T(F32, [6, 8])))
    built = len(context._pipelines)
    second = kernel_of(device, relu(T(F32, [6, 8])))
    assert first is not second and first.main.wgsl == second.main.wgsl
    assert len(context._pipelines) == built   # nothing built again
    assert context.pipeline(first.main.wgsl, 2) is context.pipeline(second.main.wgsl, 2)


@pytest.mark.parametrize(("first", "second"), [
    (T(F32, [4, 6]), T(F32, [2, 6])),                                  # sizes only
    (T(F32, [4, 6]), T(F32, [4, 6], strides=[1, 4])),                  # strides only
])
def test_a_specialized_pipeline_serves_only_its_descriptor(specialized: bool, first: T, second: T) -> None:
    """Two ADDs differing only in the output's sizes or strides: the specialized path builds a pipeline for each
    (the generic one shares one), and each gives its own right answer."""
    device = gpu()
    kernels, results = [], []
    for out in (first, second):
        sizes = list(out.sizes)
        n = sizes[0] * sizes[1]
        a = np.arange(n, dtype=np.float32) - 7.5
        b = np.arange(n, dtype=np.float32)[::-1] * 0.5
        plain = T(F32, sizes)
        desc = dml.ElementWiseAddOperatorDesc(a_tensor=plain, b_tensor=plain, output_tensor=out)
        compiled = device.compile_operator(device.create_operator(desc))
        kernels.append(compiled._kernel)
        strides = out.strides or [sizes[1], 1]
        target = build_buffer(np.zeros(sizes, np.float32), strides)
        compiled.execute([dml.Binding(a.reshape(sizes)), dml.Binding(b.reshape(sizes))], [dml.Binding(target)])
        results.append(read_buffer(target, np.float32, sizes, strides))
    assert (kernels[0].main.wgsl != kernels[1].main.wgsl) is specialized
    for (out, got) in zip((first, second), results, strict=True):
        # a + b by hand: a_i = i - 7.5, b_i = (n - 1 - i) / 2, so a_i + b_i = i / 2 + (n - 1) / 2 - 7.5
        n = got.size
        assert got.reshape(-1).tolist() == [i / 2 + (n - 1) / 2 - 7.5 for i in range(n)], out


# -- the element-wise engine's vec4 pass ----------------------------------------------------------------------------

def run_at_offset(kernel: Any, device: dml.Device, values: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """RELU of `values` read from and written to device buffers at byte `offset` (a kernel called directly: DML's
    16-byte rule stops a finer offset before it); returns (the result, the output buffer's bytes, 12 sentinel bytes
    after the tensor)."""
    size = values.nbytes
    source = device.create_buffer(np.concatenate([sentinel_bytes(offset, 1), values.view(np.uint8),
                                                  sentinel_bytes(12, 2)]))
    target = device.create_buffer(sentinel_bytes(offset + size + 12, 3))
    kernel([DeviceRange(source, offset, size)], [DeviceRange(target, offset, size)])
    data = np.frombuffer(target.read(), np.uint8)
    return data[offset: offset + size].view(values.dtype), data


@pytest.mark.parametrize(("data_type", "offset"), [("FLOAT32", 0), ("FLOAT32", 4), ("FLOAT32", 8), ("FLOAT32", 12),
                                                   ("FLOAT32", 16), ("FLOAT32", 20), ("FLOAT16", 0), ("FLOAT16", 4),
                                                   ("FLOAT16", 8), ("FLOAT16", 12), ("FLOAT16", 16)])
def test_the_vec4_pass_gives_way_where_a_base_is_not_a_whole_word(data_type: str, offset: int) -> None:
    device = gpu()
    kernel = kernel_of(device, relu(T(data_type, [8, 16])))
    assert kernel.main.slots == (0, 1) and kernel.main.scalar.built is None   # compiled: the word pass only
    numpy_type = np.float32 if data_type == "FLOAT32" else np.float16
    values = ((np.arange(128) - 64.25) * (-1.0) ** np.arange(128)).astype(numpy_type)
    got, data = run_at_offset(kernel, device, values, offset)
    element_size = values.itemsize
    base = offset % kernel.context.offset_alignment // element_size   # the tensor's first element in its range
    # RELU by hand: the positive values, 0 for the others
    assert got.tolist() == [v if v > 0 else 0.0 for v in values.tolist()]
    end = offset + 128 * element_size
    filler = sentinel_bytes(end + 12, 3)
    assert data[:offset].tolist() == filler[:offset].tolist() and data[end:].tolist() == filler[end:].tolist()
    assert (kernel.main.scalar.built is not None) is (base % (16 // element_size) != 0)


def test_the_vec4_pass_reads_broadcast_and_strided_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """ADD of A [2, 3, 8] with strides [1, 2, 6] and B broadcast along the last dimension into a contiguous
    output: the vec4 pass stores the output's words, loads A element by element and B once per word."""
    monkeypatch.setattr(specialize, "ENABLED", True)
    device = gpu()
    sizes = [2, 3, 8]
    a = np.arange(48, dtype=np.float32).reshape(sizes)
    b = np.array([[100.0, 200.0, 300.0], [400.0, 500.0, 600.0]], np.float32)
    desc = dml.ElementWiseAddOperatorDesc(a_tensor=T(F32, sizes, strides=[1, 2, 6]),
                                          b_tensor=T(F32, sizes, strides=[3, 1, 0]), output_tensor=T(F32, sizes))
    kernel = kernel_of(device, desc)
    assert kernel.main.slots == (2,)   # the output's words; A is read element by element, B once per word
    compiled = device.compile_operator(device.create_operator(desc))
    out = np.zeros(sizes, np.float32)
    compiled.execute([dml.Binding(a.reshape(-1)), dml.Binding(b.reshape(-1))], [dml.Binding(out)])
    # A's element (i, j, k) is at i + 2 j + 6 k, B's at 3 i + j
    expected = [[[float(i + 2 * j + 6 * k) + b[i, j] for k in range(8)] for j in range(3)] for i in range(2)]
    assert out.tolist() == expected


@pytest.mark.parametrize(("data_type", "count"), [("FLOAT32", 4 * 37), ("FLOAT16", 8 * 29), ("FLOAT32", 4 * 3)])
def test_several_words_an_invocation(monkeypatch: pytest.MonkeyPatch, data_type: str, count: int) -> None:
    """With MIN_INVOCATIONS lowered to 4, a pass of 37 (29) words gives each invocation 8 (7) of them, the last
    invocation fewer; 3 words, one each: every element written once, right."""
    monkeypatch.setattr(specialize, "ENABLED", True)
    monkeypatch.setattr(elementwise, "MIN_INVOCATIONS", 4)
    device = gpu()
    desc = relu(T(data_type, [count]))
    kernel = kernel_of(device, desc)
    words = count * (4 if data_type == "FLOAT32" else 2) // 16
    per = max(1, min(8, words // 4))
    assert kernel.main.groups == group_counts(-(-words // per))
    values = (np.arange(count) * (-1.0) ** np.arange(count) - 0.5).astype(np.float32 if data_type == "FLOAT32"
                                                                          else np.float16)
    compiled = device.compile_operator(device.create_operator(desc))
    got = np.full(count, 7.0, values.dtype)
    compiled.execute([dml.Binding(values)], [dml.Binding(got)])
    assert got.tolist() == [v if v > 0 else 0.0 for v in values.tolist()]


# -- 16-bit outputs -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strides", [[8, 1], [1, 4], [2, 3]], ids=["row-gaps", "columns", "interleaved"])
def test_16_bit_outputs_with_gaps_are_never_torn(specialized: bool, strides: list[int]) -> None:
    """A FLOAT16 output whose elements leave gaps (a row of 3 in 8, a transposition with gaps, strides that
    interleave and so take the element table): every element written, every other byte as it was."""
    device = gpu()
    sizes = [3, 3]
    out_desc = T(dml.DataType.FLOAT16, sizes, strides=strides)
    desc = dml.ElementWiseIdentityOperatorDesc(input_tensor=T(dml.DataType.FLOAT16, sizes), output_tensor=out_desc)
    compiled = device.compile_operator(device.create_operator(desc))
    values = np.array([[1.5, -2.0, 3.25], [65504.0, -0.0, 0.125], [7.0, 8.0, -9.5]], np.float16)
    target = build_buffer(np.zeros(sizes, np.float16), strides, tail_bytes=6, seed=5)
    before = target.copy()
    compiled.execute([dml.Binding(build_buffer(values, [3, 1]))], [dml.Binding(target)])
    assert read_buffer(target, np.float16, sizes, strides).tobytes() == values.tobytes()
    touched = np.zeros(target.size, bool)
    for i in range(3):
        for j in range(3):
            at = 2 * (i * strides[0] + j * strides[1])
            touched[at: at + 2] = True
    assert target[~touched].tolist() == before[~touched].tolist()


# -- PADDING and TILE, unrolled where specialized ---------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "numpy_mode"), [("CONSTANT", "constant"), ("EDGE", "edge"), ("REFLECTION", "reflect"),
                                                  ("SYMMETRIC", "symmetric"), ("WRAP", "wrap")])
def test_padding_on_both_paths(specialized: bool, mode: str, numpy_mode: str) -> None:
    """Every mode, with a padded, an unpadded and a wider-than-the-input dimension, against np.pad."""
    device = gpu()
    x = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    start, end = [0, 2, 5], [0, 1, 3]
    out = T(F32, [2, 6, 12])
    desc = dml.PaddingOperatorDesc(T(F32, [2, 3, 4]), out, dml.PaddingMode[mode], -0.5, 3, start, end)
    compiled = device.compile_operator(device.create_operator(desc))
    got = np.zeros([2, 6, 12], np.float32)
    compiled.execute([dml.Binding(x)], [dml.Binding(got)])
    extra = {"constant_values": -0.5} if mode == "CONSTANT" else {}
    assert got.tolist() == np.pad(x, list(zip(start, end, strict=True)), numpy_mode, **extra).tolist()


def test_tile_on_both_paths(specialized: bool) -> None:
    device = gpu()
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    desc = dml.TileOperatorDesc(T("INT32", [2, 3]), T("INT32", [4, 9]), 2, [2, 3])
    compiled = device.compile_operator(device.create_operator(desc))
    got = np.zeros([4, 9], np.int32)
    compiled.execute([dml.Binding(x)], [dml.Binding(got)])
    assert got.tolist() == np.tile(x, (2, 3)).tolist()
