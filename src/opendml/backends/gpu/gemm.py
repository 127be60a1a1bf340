"""GEMM on the GPU (issue 27): one tiled pass (gemm_tiled.wgsl) specialized to the descriptor, as issue 29's
dispatch model asks: M, N, K, the batch count, every stride, Alpha and Beta are WGSL constants (a transpose is only
strides, so TransA / TransB and any layout cost no copy), the pipeline is built at compile time and cached by its
source. A work-group computes a 16- to 128-row x 64-column output tile from TK-deep tiles of op(A) and op(B) in
workgroup memory (TK 32, or 16 with 8 rows per invocation), loaded 16 bytes at a time where a FLOAT32 row allows
(`vector_rows`); a product of fewer than DIRECT_ROWS rows runs the untiled pass (gemm_direct.wgsl) instead.

The pass computes op(A) @ op(B) over K in FLOAT32 (FLOAT16 widened exactly), summed in blocks of TK terms (each
block apart, then added to the running sum), and its epilogue applies Alpha, Beta * C (C broadcast through its
sizes of 1 and zero strides), the fused activation (rendered from its formula by `fused_activation`, as the
standalone activation is) and writes the output:
- a FLOAT32 output directly through its strides, one 32-bit word per element;
- a FLOAT16 output whose words each hold two neighbours along N of one row (or one element and bytes outside the
  tensor: N unit-strided, every other stride even) directly from the tiled pass, a whole word at a time;
- any other FLOAT16 output, or any output under a fused SOFTMAX / SOFTMAX1, through a FLOAT32 scratch buffer
  (row-major over the output's sizes): SOFTMAX's pass (gemm_softmax.wgsl, a work-group per softmax group) normalizes
  it in place, then an elementwise pass (elementwise.Output) rounds each value once to the output's type and writes
  it through the output's strides a whole 32-bit word per invocation.
Either way no two invocations write one word, so the bytes around a 16-bit element are never torn.
Batches: the output's leading dimensions, each input's own read through its strides (0 along a size of 1).
FLOAT64 needs float64 arithmetic, which WGSL lacks: refused at compile time.

`tiled_source` (the tiling's parameters and WGSL) is shared with CONVOLUTION (convolution.py), an implicit GEMM.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import UnsupportedError
from ...formula import parse
from ...ops.activation_softmax import ActivationSoftmax1OperatorDesc, ActivationSoftmaxOperatorDesc
from ...ops.base import OperatorDesc
from ...ops.elementwise import ElementWiseOperatorDesc
from ...ops.gemm import GemmOperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags, MatrixTransform
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .element_wise import _libraries, _Renderer, activation_function
from .elementwise import Params
from .kernel import ElementwiseSource, GpuKernel, Pass, compile_pass, template
from .wgsl import F16_BITS, params_binding

D = DataType
#: Columns of the output tile of one work-group (16 invocations x 4).
TILE_N = 64
#: The K step (terms per blocked sum) of a tile: deeper tiles mean fewer work-group barriers per product.
TILE_K = 32
#: Bytes of workgroup memory a tiling may take (WebGPU's guaranteed maxComputeWorkgroupStorageSize).
WORKGROUP_BYTES = 16384
#: Rows of the product (GEMM's M, CONVOLUTION's output channels per group) below which the untiled pass runs: a tile
#: of 16 rows would mostly idle (a matrix-vector product, a depthwise convolution).
DIRECT_ROWS = 8
#: Invocations of the softmax pass's work-group.
SOFTMAX_WIDTH = 256


def f32_literal(value: float) -> str:
    """A FLOAT32 value as an exact WGSL expression (its bits)."""
    return f"bitcast<f32>({int(np.array([value], np.float32).view(np.uint32)[0]):#010x}u)"


def check_float_types(desc: OperatorDesc) -> None:
    """FLOAT32 and FLOAT16 compute in FLOAT32; anything else (FLOAT64) is refused, naming the tensor."""
    for name, tensor in [*desc.input_slots(), *desc.output_slots()]:
        if tensor is not None and tensor.data_type not in (D.FLOAT32, D.FLOAT16):
            raise UnsupportedError(f"{desc.label}: {name}.DataType is {tensor.data_type.name}; the gpu backend "
                                   f"computes it in FLOAT32 for FLOAT32 and FLOAT16 tensors only (WGSL has no f64)")


def tensor_load(context: GpuContext, name: str, tensor: TensorDesc, slot: int, *, vector: bool = False) -> str:
    """The binding of input `name` and `fn load_<name>(e: u32) -> f32` (element e from the tensor's element 0, whose
    index in the bound range is `base_<name>`, set from P[slot] by `bases()`): FLOAT32 from its words, FLOAT16 as
    f16 where the adapter has shader-f16, else unpacked from its 16-bit half of a word. `vector` (FLOAT32 whose
    rows `vector_rows` allows): bound as 16-byte words instead, with `fn load4_<name>(e: u32) -> vec4<f32>`,
    elements e..e + 3 for an e that `vector_rows` makes a multiple of 4."""
    head = f"var<private> base_{name}: u32;\n"
    if vector:
        return head + (f"@group(0) @binding({slot}) var<storage, read_write> {name}: array<vec4<u32>>;\n"
                       f"fn load4_{name}(e: u32) -> vec4<f32> {{ return bitcast<vec4<f32>>({name}[(base_{name} + e) "
                       f">> 2u]); }}\n")
    if tensor.data_type is D.FLOAT16 and context.f16:
        return head + (f"@group(0) @binding({slot}) var<storage, read_write> {name}: array<f16>;\n"
                       f"fn load_{name}(e: u32) -> f32 {{ return f32({name}[base_{name} + e]); }}\n")
    head += f"@group(0) @binding({slot}) var<storage, read_write> {name}: array<u32>;\n"
    if tensor.data_type is D.FLOAT16:
        return head + (f"fn load_{name}(e: u32) -> f32 {{ let i = base_{name} + e; "
                       f"return unpack2x16float({name}[i >> 1u] >> ((i & 1u) * 16u)).x; }}\n")
    return head + f"fn load_{name}(e: u32) -> f32 {{ return bitcast<f32>({name}[base_{name} + e]); }}\n"


def vector_rows(tensor: TensorDesc, length: int, step: int, others: Sequence[int]) -> bool:
    """Whether a FLOAT32 tensor's rows of `length` elements (element stride `step`; `others`: the strides of the other
    dimensions it is walked along) can be read 16 aligned bytes at a time: contiguous, of a multiple of 4 elements,
    each starting at a multiple of 4 elements from the tensor's element 0 (itself 16-byte aligned: DML binding offsets
    are multiples of 16, `check_vector_bases`), within a range of whole 16-byte words."""
    return (tensor.data_type is D.FLOAT32 and step == 1 and length % 4 == 0 and all(s % 4 == 0 for s in others)
            and tensor.total_tensor_size_in_bytes % 16 == 0)


def check_vector_bases(vectors: Sequence[bool], bound: Sequence[Bound]) -> None:
    """The binding rules give every tensor a 16-byte aligned start; the vector loads rely on it."""
    for vector, tensor in zip(vectors, bound, strict=True):
        assert not vector or tensor.base % 4 == 0, tensor


def bases(names: Sequence[tuple[str, int]]) -> str:
    """Statements setting each `base_<name>` from P[slot]."""
    return "".join(f"    base_{name} = P[{slot}u];\n" for name, slot in names)


def decompose(index: str, sizes: Sequence[int], weights: Sequence[Sequence[int]], targets: Sequence[str],
              prefix: str) -> str:
    """Statements adding to each `targets[t]` the offset of row-major position `index` over `sizes` with the
    element strides `weights[t]` (constants: the compiler divides by multiplying). Sizes of 1 are skipped."""
    lines = [f"    var {prefix}_rest = {index};\n"]
    dims = [d for d, size in enumerate(sizes) if size > 1]
    for position, d in enumerate(reversed(dims)):
        last = position == len(dims) - 1
        coordinate = f"{prefix}_rest" if last else f"({prefix}_rest % {sizes[d]}u)"
        lines.append(f"    let {prefix}_{d} = {coordinate};\n")
        for target, strides in zip(targets, weights, strict=True):
            if strides[d]:
                lines.append(f"    {target} += {prefix}_{d} * {strides[d]}u;\n")
        if not last:
            lines.append(f"    {prefix}_rest = {prefix}_rest / {sizes[d]}u;\n")
    return "".join(lines)


def fused_activation(activation: OperatorDesc | None, params: Params) -> str:
    """WGSL `fn activation(v: f32) -> f32` of an element-wise fused activation (None: the identity), rendered from
    its formula: an ACTIVATION_* by element_wise.activation_function, a fused ELEMENT_WISE_CLIP from CLIP's formula
    (ops/elementwise.py's) with its Min and Max as FLOAT32 in `params`. The libraries it needs come with it."""
    if not isinstance(activation, ElementWiseOperatorDesc):
        return activation_function(activation, params)
    f32 = D.FLOAT32
    tree = parse(activation.formula_text(), {"x": f32, "Min": f32, "Max": f32}, f32)
    values = {name: float(np.float32(activation.field_value(name))) for name in ("Min", "Max")}
    renderer = _Renderer(activation.label, values, params, {"x": "v"})
    result = renderer.render(tree)
    return (f"{_libraries(renderer.uses | {'math'})}// {activation.label}: {activation.formula_text()}\n"
            f"fn activation(v: f32) -> f32 {{\n{''.join(renderer.lines)}    return {result};\n}}\n")


def softmax_axes(activation: OperatorDesc | None, rank: int) -> tuple[int, ...] | None:
    """The output dimensions a fused SOFTMAX / SOFTMAX1 normalizes over (None for other activations)."""
    if isinstance(activation, (ActivationSoftmaxOperatorDesc, ActivationSoftmax1OperatorDesc)):
        return activation.softmax_axes(rank)
    return None


@dataclass(frozen=True)
class Tiling:
    """The tiled product's shape: `batches` products of an M x K and a K x N matrix; `a_k_first` / `b_n_first`:
    whether tile loads walk A along K and B along N (the tensor's contiguous way), else along M and K; `a_vector` /
    `b_vector`: whether they load four elements along that way at once (a_vec4 / b_vec4: its length a multiple of
    4)."""

    batches: int
    m: int
    n: int
    k: int
    a_k_first: bool
    b_n_first: bool
    a_vector: bool = False
    b_vector: bool = False

    @property
    def rows(self) -> int:
        """Output rows per invocation (RM): 8 for a large M (fewer workgroup-memory reads per product: 1.2x on
        lavapipe at 512^3), 4, or fewer for a small M."""
        return 8 if self.m >= 128 else 4 if self.m > 32 else 2 if self.m > 16 else 1

    @property
    def depth(self) -> int:
        """The K step TK: TILE_K, or 16 where a TM x TK tile of A and a TK x 64 tile of B would not fit
        WORKGROUP_BYTES (8 rows per invocation)."""
        return TILE_K if 4 * TILE_K * (16 * self.rows + TILE_N) <= WORKGROUP_BYTES else 16

    @property
    def tiles(self) -> tuple[int, int]:
        return -(-self.m // (16 * self.rows)), -(-self.n // TILE_N)

    def groups(self) -> tuple[int, int]:
        tiles_m, tiles_n = self.tiles
        return group_counts(self.batches * tiles_m * tiles_n, 1)


#: The tiled pass's stores: each of an invocation's outputs by `store(m, n, value)`, or (`pairs`) two neighbours along
#: N at a time by `store_pair(m, n, value, next, has_next)` (a FLOAT16 output whose words hold such pairs).
_STORES = """    for (var i = 0u; i < {RM}u; i++) {{
        let m = m0 + ty * {RM}u + i;
        if (m >= {M}u) {{ break; }}
        for (var j = 0u; j < 4u; j++) {{
            let n = n0 + tx * 4u + j;
            if (n < {N}u) {{ store(m, n, acc[i][j]); }}
        }}
    }}"""
_PAIR_STORES = """    for (var i = 0u; i < {RM}u; i++) {{
        let m = m0 + ty * {RM}u + i;
        if (m >= {M}u) {{ break; }}
        for (var j = 0u; j < 4u; j += 2u) {{
            let n = n0 + tx * 4u + j;
            if (n < {N}u) {{ store_pair(m, n, acc[i][j], acc[i][j + 1u], n + 1u < {N}u); }}
        }}
    }}"""


def tiled_source(tiling: Tiling, pairs: bool = False) -> str:
    """gemm_tiled.wgsl for `tiling`; the operator adds start, a_value or a_vec4, b_value or b_vec4, and store (or
    store_pair: `pairs`)."""
    rows, depth = tiling.rows, tiling.depth
    tm = 16 * rows
    tiles_m, tiles_n = tiling.tiles
    check_a = "if (m0 + m < {M}u && k0 + k < {K}u) {{ v = %s(m0 + m, k0 + k); }}"
    check_b = "if (n0 + n < {N}u && k0 + k < {K}u) {{ v = %s(k0 + k, n0 + n); }}"
    if tiling.a_vector and tiling.a_k_first:      # a_vec4: four k of a row of A, spread over four rows of the tile
        index = f"let m = e / {depth // 4}u;\n    let k = (e % {depth // 4}u) * 4u;"
        store = "\n".join(f"tile_a[(k + {j}u) * {tm}u + m] = v[{j}];" for j in range(4))
        load_a = _tile_loads(tm * depth // 4, index, f"var v = vec4<f32>();\n{check_a % 'a_vec4'}\n{store}")
    elif tiling.a_vector:                         # a_vec4: four m of a column of A, side by side in the tile
        index = f"let k = e / {tm // 4}u;\n    let m = (e % {tm // 4}u) * 4u;"
        store = "\n".join(f"tile_a[k * {tm}u + m + {j}u] = v[{j}];" for j in range(4))
        load_a = _tile_loads(tm * depth // 4, index, f"var v = vec4<f32>();\n{check_a % 'a_vec4'}\n{store}")
    else:
        index = (f"let m = e / {depth}u;\n    let k = e % {depth}u;" if tiling.a_k_first else
                 f"let k = e / {tm}u;\n    let m = e % {tm}u;")
        load_a = _tile_loads(tm * depth, index, f"var v = 0.0;\n{check_a % 'a_value'}\ntile_a[k * {tm}u + m] = v;")
    if tiling.b_vector and tiling.b_n_first:      # b_vec4: four n of a row of B, one vec4 of the tile
        index = "let k = e / 16u;\n    let n = (e % 16u) * 4u;"
        load_b = _tile_loads(depth * 16, index,
                             f"var v = vec4<f32>();\n{check_b % 'b_vec4'}\ntile_b[k * 16u + n / 4u] = v;")
    elif tiling.b_vector:                         # b_vec4: four k of a column of B, over four rows of the tile
        index = f"let n = e / {depth // 4}u;\n    let k = (e % {depth // 4}u) * 4u;"
        store = "\n".join(f"tile_b[(k + {j}u) * 16u + n / 4u][n % 4u] = v[{j}];" for j in range(4))
        load_b = _tile_loads(depth * 16, index, f"var v = vec4<f32>();\n{check_b % 'b_vec4'}\n{store}")
    else:
        index = ("let k = e / 64u;\n    let n = e % 64u;" if tiling.b_n_first else
                 f"let n = e / {depth}u;\n    let k = e % {depth}u;")
        load_b = _tile_loads(depth * TILE_N, index,
                             f"var v = 0.0;\n{check_b % 'b_value'}\ntile_b[k * 16u + n / 4u][n % 4u] = v;")
    products = "".join(f"            part[{i}] += tile_a[a + {i}u] * b;\n" for i in range(rows))
    sums = "".join(f"        acc[{i}] += part[{i}];\n" for i in range(rows))
    # set explicitly: a `var` declared in a loop is not zeroed again on each iteration by every WGSL compiler
    zeros = "".join(f"        part[{i}] = vec4<f32>();\n" for i in range(rows))
    values = {"M": tiling.m, "N": tiling.n, "K": tiling.k}
    return template("gemm_tiled.wgsl", TILE_A=tm * depth, TILE_B=16 * depth, TK=depth,
                    TILES=tiling.batches * tiles_m * tiles_n, TILES_N=tiles_n, TILES_M=tiles_m, TM=tm, RM=rows,
                    LOAD_A=load_a.format(**values), LOAD_B=load_b.format(**values), PRODUCTS=products.rstrip("\n"),
                    EPILOGUE=(_PAIR_STORES if pairs else _STORES).format(RM=rows, **values),
                    SUMS=sums.rstrip("\n"), ZEROS=zeros.rstrip("\n"), **values)


def _tile_loads(count: int, index: str, body: str) -> str:
    """The loop by which the 256 invocations load `count` items of a tile: item e (`index` finds its place) by
    invocation e % 256; `body` loads and stores it (a template of M, N and K: its braces doubled)."""
    lines = [line.strip() for line in f"{index}\n{body}".split("\n")]
    depth = 12
    if count % 256:
        lines = [f"if (e < {count}u) {{{{", *("    " + line for line in lines), "}}"]
    inner = "\n".join(" " * depth + line for line in lines)
    return (f"        for (var r = 0u; r < {-(-count // 256)}u; r++) {{{{\n            let e = t + 256u * r;\n"
            f"{inner}\n        }}}}")


def direct_source(batches: int, m: int, n: int, k: int) -> str:
    """The untiled product over the same functions as `tiled_source` (a_value, b_value): an invocation per output
    element (n fastest, then m, then the batch), its K terms summed in blocks of 16 (gemm_direct.wgsl). For products
    of fewer than DIRECT_ROWS rows."""
    return template("gemm_direct.wgsl", WIDTH=WORKGROUP_SIZE, COUNT=batches * m * n, M=m, N=n, K=k)


class ScratchOutput:
    """The way out of a tiled pass whose results land in a FLOAT32 scratch buffer (row-major over the output's
    sizes): a fused SOFTMAX's pass over it in place (when `axes` is set), then the elementwise pass that rounds each
    value once to the output's type and writes it through the output's strides."""

    def __init__(self, kernel: GpuKernel, output: TensorDesc, axes: tuple[int, ...] | None) -> None:
        context = kernel.context
        count = output.element_count
        if 4 * count > context.max_binding_size:
            what = "a fused softmax's input" if axes is not None else f"this {output.data_type.name} output"
            raise UnsupportedError(f"{kernel.label}: OutputTensor has {count} elements; the gpu backend computes "
                                   f"{what} into a FLOAT32 scratch buffer first ({4 * count} bytes), over the "
                                   f"adapter's max-storage-buffer-binding-size ({context.max_binding_size} bytes)")
        self.buffer = kernel.scratch(4 * count)
        self.softmax: Pass | None = None
        if axes is not None:
            self.softmax = softmax_pass(context, output.sizes, axes)
        params = Params(2)
        source = ElementwiseSource([("s", TensorDesc(D.FLOAT32, (count,)))], output, params)
        body = f"fn value(o: u32) -> u32 {{ return to_raw_{output.data_type.name}(load_s(o)); }}\n"
        self.write = source.compile(context, body)

    def record(self, recorder: Recorder, output: Bound) -> None:
        if self.softmax is not None:
            self.softmax.record(recorder, [self.buffer])
        self.write.record(recorder, [self.buffer, output])


def softmax_pass(context: GpuContext, sizes: Sequence[int], axes: Sequence[int]) -> Pass:
    """SOFTMAX over `axes` of a FLOAT32 buffer row-major over `sizes`, in place: exp(x - max) / sum exp(x - max), a
    work-group per group of the other dimensions (gemm_softmax.wgsl)."""
    weights = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    kept = [d for d in range(len(sizes)) if d not in axes]
    groups = math.prod(sizes[d] for d in kept)
    count = math.prod(sizes[d] for d in axes)
    group_offset = decompose("g", [sizes[d] for d in kept], [[weights[d] for d in kept]], ["at"], "g")
    element_offset = decompose("j", [sizes[d] for d in axes], [[weights[d] for d in axes]], ["at"], "j")
    text = "".join([
        params_binding(1), _libraries({"math"}),
        "@group(0) @binding(0) var<storage, read_write> s: array<u32>;\n",
        f"fn group_offset(g: u32) -> u32 {{\n    var at = 0u;\n{group_offset}    return at;\n}}\n",
        f"fn element_offset(j: u32) -> u32 {{\n    var at = 0u;\n{element_offset}    return at;\n}}\n",
        template("gemm_softmax.wgsl", WIDTH=SOFTMAX_WIDTH, COUNT=count, GROUPS=groups)])
    return compile_pass(context, text, 1, Params(1), group_counts(groups, 1))


class GemmKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: GemmOperatorDesc) -> None:
        super().__init__(context, desc)
        check_float_types(desc)
        a, b, c, output = desc.a_tensor, desc.b_tensor, desc.c_tensor, desc.output_tensor
        batch_sizes, m, n, k = desc.matrix_sizes()
        trans_a = desc.trans_a is MatrixTransform.TRANSPOSE
        trans_b = desc.trans_b is MatrixTransform.TRANSPOSE
        activation = desc.fused_activation
        rank = len(output.sizes)
        axes = softmax_axes(activation, rank)
        s_am, s_ak = _matrix_strides(a, trans_a)
        s_bk, s_bn = _matrix_strides(b, trans_b)
        batch_strides = [_batch_strides(tensor, batch_sizes) for tensor in (a, b, c or output)]
        batches = math.prod(batch_sizes)
        tiling = None if m < DIRECT_ROWS else Tiling(
            batches, m, n, k, a_k_first=s_ak <= s_am, b_n_first=s_bn <= s_bk,
            a_vector=vector_rows(a, k, s_ak, [s_am, *batch_strides[0]]) if s_ak <= s_am else
            vector_rows(a, m, s_am, [s_ak, *batch_strides[0]]),
            b_vector=vector_rows(b, n, s_bn, [s_bk, *batch_strides[1]]) if s_bn <= s_bk else
            vector_rows(b, k, s_bk, [s_bn, *batch_strides[1]]))
        self.vectors = (False, False) if tiling is None else (tiling.a_vector, tiling.b_vector)

        s_om, s_on = output.element_strides[-2:]
        out_strides = _batch_strides(output, batch_sizes)
        # A FLOAT16 output whose 32-bit words each hold elements n, n + 1 of one row (n even), or one element and
        # bytes outside the tensor, is written by the tiled pass two elements at a time, each word by one invocation
        # (its base element is even: binding offsets are multiples of 16 bytes).
        pairs = (output.data_type is D.FLOAT16 and axes is None and tiling is not None and (n == 1 or s_on == 1)
                 and all(stride % 2 == 0 for stride in [s_om, *out_strides]))
        self.pairs = pairs
        direct = (output.data_type is D.FLOAT32 or pairs) and axes is None
        self.out = None if direct else ScratchOutput(self, output, axes)
        params = Params(4)
        tensors = [("a", a), ("b", b)] + ([("c", c)] if c is not None else [])
        slots = {"a": 0, "b": 1, "c": 2, "out": 3}
        parts = [params_binding(4)]
        parts += [tensor_load(context, name, tensor, slots[name], vector=vector)
                  for (name, tensor), vector in zip(tensors, [*self.vectors, False], strict=False)]
        if c is None:
            parts.append("@group(0) @binding(2) var<storage, read_write> c: array<u32>;\n")
        parts.append("var<private> base_out: u32;\n@group(0) @binding(3) var<storage, read_write> out: array<u32>;\n")
        offsets = ["a_batch", "b_batch", "c_batch", "o_batch"]
        parts.append("".join(f"var<private> {name}: u32;\n" for name in offsets))
        out_weights = [math.prod(output.sizes[-2:])] if batch_sizes else []
        for d in range(len(batch_sizes) - 1, 0, -1):
            out_weights.insert(0, out_weights[0] * batch_sizes[d])
        out_batch = out_strides if direct else out_weights
        parts.append(f"fn start(batch: u32) {{\n{bases([(name, slots[name]) for name, _ in tensors])}"
                     f"    base_out = P[3u];\n"
                     f"{decompose('batch', batch_sizes, [*batch_strides, out_batch], offsets, 'b')}}}\n")
        a_at, b_at = f"a_batch + m * {s_am}u + k * {s_ak}u", f"b_batch + k * {s_bk}u + n * {s_bn}u"
        parts.append(f"fn a_vec4(m: u32, k: u32) -> vec4<f32> {{ return load4_a({a_at}); }}\n" if self.vectors[0] else
                     f"fn a_value(m: u32, k: u32) -> f32 {{ return load_a({a_at}); }}\n")
        parts.append(f"fn b_vec4(k: u32, n: u32) -> vec4<f32> {{ return load4_b({b_at}); }}\n" if self.vectors[1] else
                     f"fn b_value(k: u32, n: u32) -> f32 {{ return load_b({b_at}); }}\n")
        parts.append(fused_activation(None if axes is not None else activation, params))
        value = "acc" if desc.alpha == 1.0 else f"acc * {f32_literal(desc.alpha)}"
        if c is not None:
            s_cm, s_cn = (0 if size == 1 else stride for size, stride in zip(c.sizes[-2:], c.element_strides[-2:],
                                                                            strict=True))
            term = f"load_c(c_batch + m * {s_cm}u + n * {s_cn}u)"
            value += f" + {term}" if desc.beta == 1.0 else f" + {f32_literal(desc.beta)} * {term}"
        if pairs:
            parts.append(F16_BITS + f"fn result(m: u32, n: u32, acc: f32) -> f32 {{ return activation({value}); }}\n"
                         f"fn store_pair(m: u32, n: u32, first: f32, second: f32, both: bool) {{\n"
                         f"    let at = (base_out + o_batch + m * {s_om}u + n) >> 1u;\n"
                         f"    var high = out[at] & 0xffff0000u;\n"
                         f"    if (both) {{ high = f16_bits(result(m, n + 1u, second)) << 16u; }}\n"
                         f"    out[at] = f16_bits(result(m, n, first)) | high;\n}}\n")
        else:
            target = f"base_out + o_batch + m * {s_om}u + n * {s_on}u" if direct else f"o_batch + m * {n}u + n"
            parts.append(f"fn store(m: u32, n: u32, acc: f32) {{ out[{target}] = bitcast<u32>(activation({value})); }}"
                         f"\n")
        if tiling is None:
            parts.append(direct_source(batches, m, n, k))
            work = group_counts(batches * m * n)
        else:
            parts.append(tiled_source(tiling, pairs))
            work = tiling.groups()
        self.main = compile_pass(context, "".join(parts), 4, params, work)
        self.dummy = self.scratch(16) if c is None else None

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        a, b, c = inputs
        assert a is not None and b is not None
        check_vector_bases(self.vectors, (a, b))
        assert not self.pairs or outputs[0].base % 2 == 0, outputs[0]
        target = outputs[0] if self.out is None else self.out.buffer
        self.main.record(recorder, [a, b, self.dummy if c is None else c, target])
        if self.out is not None:
            self.out.record(recorder, outputs[0])


def _matrix_strides(tensor: TensorDesc, transposed: bool) -> tuple[int, int]:
    """(row stride, column stride) of the logical matrix op(tensor): its last two dimensions, swapped if
    transposed; a size of 1 strides 0."""
    strides = [0 if size == 1 else stride for size, stride in zip(tensor.sizes[-2:], tensor.element_strides[-2:],
                                                                  strict=True)]
    return (strides[1], strides[0]) if transposed else (strides[0], strides[1])


def _batch_strides(tensor: TensorDesc, batch_sizes: Sequence[int]) -> list[int]:
    """The tensor's element strides along the output's batch dimensions (right-aligned; 0 where it has none or is
    broadcast, a size of 1)."""
    sizes, strides = tensor.sizes[:-2], tensor.element_strides[:-2]
    lead = len(batch_sizes) - len(sizes)
    return [0 if d < lead or sizes[d - lead] == 1 else strides[d - lead] for d in range(len(batch_sizes))]


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> GemmKernel:
    """FLOAT32 computation for FLOAT16 tensors whatever the flags say (ALLOW_HALF_PRECISION_COMPUTATION permits but
    does not require FLOAT16)."""
    assert isinstance(desc, GemmOperatorDesc)
    return GemmKernel(context, desc)
