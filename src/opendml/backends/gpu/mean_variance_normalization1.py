"""MEAN_VARIANCE_NORMALIZATION1 on the GPU: statistics per group, then one elementwise pass.

Plan (compile time, descriptor only): the input's dimensions split into the kept ones (one group per coordinate)
and the normalized ones (Axes); size-1 dimensions are dropped and neighbours that are one run of memory merged, so
that the statistics pass computes few offsets (none for a contiguous group).

Passes (generic shaders: the shapes in P, one pipeline per data type and activation; specialized ones, with
specialize.ENABLED at compile time (issue 29), have the counts, sizes and strides as WGSL literals):
1. statistics (mean_variance_normalization1_statistics.wgsl): a segment of invocations per group, or per chunk of
   a large group (at most CHUNK_CAPACITY elements; a large group is cut into enough chunks to give a large GPU
   work, so its statistics take several work-groups). Each chunk is read once into registers, and its mean (two
   FLOAT32 parts) and sum of squared deviations M2 are taken in FLOAT32 on values scaled by a power of two (exact,
   on the bits), around a shift near the mean: data like 1e4 + small noise keep their variance, data near 3e38
   do not overflow and subnormal data do not vanish. Tree reductions in a fixed order (tree.py).
2. merge (only for chunked groups; ..._merge.wgsl): the chunks' records combined with Chan et al.'s update.
3. output (..._output.wgsl over elementwise.Output): ((x 2^-e - mean_hi) - mean_lo) * rstd * Scale + Bias with
   the group's record (rstd that of the scaled values; without NormalizeVariance, 1 and the product brought back by
   2^e before Bias), the fused activation (rendered from its formula by element_wise.activation_function, as the
   standalone activation is), rounded once to the output's type. Input, Scale and
   Bias are read through their strides (zero along broadcast dimensions); the dimensions of all the tensors are
   merged where they allow, and an element's coordinates are found once for all of them.
The fused row pass (specialized shaders only, where every group is one chunk, the tensors FLOAT32 and Axes the
trailing dimensions: the layer and instance norms): pass 1 also normalizes the elements each invocation holds in
registers, once the group's record is written, and writes them (..._row.wgsl): one dispatch, one read of the input.

As on the CPU: Epsilon 0 on a constant group gives 0 * inf = NaN; NaN or infinite inputs make their group's mean
what the float64 sum gives (NaN, or the infinity) and its variance NaN; FLOAT16 computes in FLOAT32.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...ops.base import OperatorDesc
from ...ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from ...tensor import MAX_DIMENSION_COUNT, TensorDesc
from ...types import DataType, ExecutionFlags
from . import specialize, tree
from .context import Bound, GpuContext, Recorder, group_counts
from .element_wise import activation_function
from .elementwise import COMMON, Params
from .kernel import ElementwiseSource, GpuKernel, Pass, compile_pass, template
from .reduce import placeholders
from .wgsl import params_binding, prelude, tensor_input

#: Invocations per work-group of the statistics passes.
WIDTH = 256
#: Elements each invocation holds in registers in the statistics pass.
SLOTS = 16
#: Most elements of one chunk (a segment of WIDTH invocations, SLOTS each).
CHUNK_CAPACITY = WIDTH * SLOTS
#: Smallest chunk a large group is cut into to make more work-groups.
MIN_CHUNK = 1024
#: Work-groups the statistics pass aims for, to fill a large GPU (an H100 has 132 multiprocessors).
FILL_WORKGROUPS = 1024
#: Words of a group's final record and of a chunk's record in the statistics buffer.
FINAL_WORDS = 4
RECORD_WORDS = 6

Dim = tuple[int, ...]   # (size, then one element stride per tensor that walks it)


def _merged(dims: Sequence[Dim], tensors: int = 1) -> list[Dim]:
    """Dimensions in order, size-1 ones dropped and neighbours that are one run in every tensor merged (the
    row-major numbering of the elements is unchanged); a single (1, 0, ...) when none is left (`tensors`: strides
    per dimension)."""
    merged: list[Dim] = []
    for dim in dims:
        size, strides = dim[0], dim[1:]
        if size == 1:
            continue
        if merged and all(outer == stride * size for outer, stride in zip(merged[-1][1:], strides, strict=True)):
            merged[-1] = (merged[-1][0] * size, *strides)
        else:
            merged.append(dim)
    return merged or [(1,) + (0,) * tensors]


def _add_dims(params: Params, dims: Sequence[Dim]) -> int:
    return params.add_tensor([size for size, _ in dims], [stride for _, stride in dims])


def _next_power_of_two(value: int) -> int:
    return 1 << max(0, (value - 1).bit_length())


class MvnKernel(GpuKernel):
    def __init__(self, context: GpuContext, desc: MeanVarianceNormalization1OperatorDesc) -> None:
        super().__init__(context, desc)
        source = desc.input_tensor
        sizes, strides, axes = source.sizes, source.element_strides, set(desc.axes)
        kept = _merged([(size, stride) for d, (size, stride) in enumerate(zip(sizes, strides, strict=True))
                        if d not in axes])
        normalized = _merged([(size, stride) for d, (size, stride) in enumerate(zip(sizes, strides, strict=True))
                              if d in axes])
        groups = math.prod(dim[0] for dim in kept)
        count = desc.normalized_element_count

        # Work: one chunk per group where it fits (small groups share a work-group), else enough chunks of a large
        # group to fill the GPU.
        if count <= CHUNK_CAPACITY:
            chunks, chunk = 1, count
            lanes = min(WIDTH, _next_power_of_two(-(-count // SLOTS)))
        else:
            lanes = WIDTH
            chunks = max(-(-count // CHUNK_CAPACITY), min(-(-count // MIN_CHUNK), -(-FILL_WORKGROUPS // groups)))
            chunk = -(-count // chunks)
            chunks = -(-count // chunk)
        self.chunks = chunks
        # The statistics buffer: the groups' final records, then (chunked groups) the chunks' records.
        records = FINAL_WORDS * groups
        self.stats = self.scratch(4 * (records + (RECORD_WORDS * groups * chunks if chunks > 1 else 0)))
        self.dummy = self.scratch(16)   # bound for an absent Scale or Bias, never read
        common = {"N": count, "CHUNKS": chunks, "RECORDS": records, "FINAL": 0,
                  "NORMALIZE": int(desc.normalize_variance)}

        # 1. statistics (with the fused row pass: and the output)
        self.fused = _fused(desc, chunks)
        bindings = 5 if self.fused else 2
        params = Params(bindings)
        at: dict[str, object] = {"KEPT": _add_dims(params, kept), "NORM": _add_dims(params, normalized)}
        at |= placeholders(params, {**common, "LANES": lanes, "ITEMS": groups * chunks, "CHUNK": chunk})
        at["EPS"] = params.add_f32(desc.epsilon)
        data_type = source.data_type
        subgroup = tree.placeholders(context)
        parts = [prelude({data_type}), params_binding(bindings), COMMON]
        row = entry = ""
        if not self.fused:
            parts.append(tensor_input("x", data_type, 0, computed=True, f16=context.f16))
        else:
            parts += [template("mean_variance_normalization1_row_bindings.wgsl"), *self._normalize(desc, params)]
            entry = "    x_base = P[0u];\n    s_base = P[1u];\n    b_base = P[2u];\n    out_base = P[4u];\n"
            # The kept dimensions lead (their group weight is not 0); none merged with a normalized one.
            dims = self._dims(desc)
            rows = [dim for dim in dims if dim[3]]
            row = template("mean_variance_normalization1_row.wgsl", **at,
                           KEPT_COORDINATES=_coordinates(params, rows, {"y_row": 2, "s_row": 4, "b_row": 5}, 8,
                                                         "group_rest"),
                           COORDINATES=_coordinates(params, dims[len(rows):], {"y_at": 2, "s_at": 4, "b_at": 5}, 16))
        text = "".join([*parts, template("mean_variance_normalization1_scaling.wgsl"),
                        template("mean_variance_normalization1_finish.wgsl", **at),
                        tree.tree(context, "top_tree", "vec3<u32>", "top_combine", WIDTH, ("s",), "w0", broadcast=True),
                        tree.tree(context, "sum_tree", "vec2<f32>", "add_sums", WIDTH, ("bitcast<vec2<u32>>(s)",),
                                  "bitcast<vec2<f32>>(w0)", broadcast=True),
                        template("mean_variance_normalization1_statistics.wgsl", SLOTS=SLOTS, WIDTH=WIDTH, **at,
                                 STATS_BINDING=bindings - 2 if self.fused else 1, ROW_ENTRY=entry, ROW=row,
                                 **subgroup)])
        self.statistics = compile_pass(context, text, bindings, params,
                                       group_counts(groups * chunks, WIDTH // lanes))

        # 2. the merge of chunked groups' records
        self.merge: Pass | None = None
        if chunks > 1:
            params = Params(1)
            merge_lanes = min(WIDTH, _next_power_of_two(chunks))
            at = placeholders(params, {**common, "LANES": merge_lanes, "GROUPS": groups})
            at["EPS"] = params.add_f32(desc.epsilon)
            text = "".join([params_binding(1), template("mean_variance_normalization1_scaling.wgsl"),
                            template("mean_variance_normalization1_finish.wgsl", **at), self._max_or_tree(),
                            tree.tree(context, "sum_tree", "f32", "add", WIDTH, ("bitcast<u32>(s)",),
                                      "bitcast<f32>(w0)", broadcast=True),
                            template("mean_variance_normalization1_merge.wgsl", WIDTH=WIDTH, **at, **subgroup)])
            self.merge = compile_pass(context, text, 1, params, group_counts(groups, WIDTH // merge_lanes))

        self.output: Pass | None = None if self.fused else self._output_pass(desc, common)

    def _max_or_tree(self) -> str:
        """The tree of both statistics passes' first step: a maximum and the non-finite flags (fn max_or)."""
        return tree.tree(self.context, "max_or_tree", "vec2<u32>", "max_or", WIDTH, ("s",), "w0", broadcast=True)

    @staticmethod
    def _dims(desc: MeanVarianceNormalization1OperatorDesc) -> list[Dim]:
        """Every tensor's dimensions merged where all of them allow: (size, then the strides of Input, Output, the
        group index, Scale and Bias)."""
        source, target = desc.input_tensor, desc.output_tensor
        sizes, axes = source.sizes, set(desc.axes)
        weights = [0] * len(sizes)   # each kept dimension's row-major weight among the kept ones: o's group
        weight = 1
        for d in range(len(sizes) - 1, -1, -1):
            if d not in axes:
                weights[d] = weight
                weight *= sizes[d]
        columns: list[Sequence[int]] = [source.element_strides, target.element_strides, weights]
        for side in (desc.scale_tensor, desc.bias_tensor):
            # A size-1 dimension of Scale or Bias is broadcast: stride 0 along it.
            columns.append((0,) * len(sizes) if side is None else tuple(
                0 if size == 1 else stride for size, stride in zip(side.sizes, side.element_strides, strict=True)))
        return _merged([(size, *(column[d] for column in columns)) for d, size in enumerate(sizes)], len(columns))

    @staticmethod
    def _normalize(desc: MeanVarianceNormalization1OperatorDesc, params: Params) -> list[str]:
        """fn normalize (the output's formula) and the fused activation it applies."""
        at = placeholders(params, {"HAS_SCALE": int(desc.scale_tensor is not None),
                                   "HAS_BIAS": int(desc.bias_tensor is not None)})
        return [activation_function(desc.fused_activation, params),
                template("mean_variance_normalization1_output.wgsl", **at)]

    def _output_pass(self, desc: MeanVarianceNormalization1OperatorDesc, common: dict[str, int]) -> Pass:
        """The elementwise pass, over one layout with a stride per tensor (_dims; the output is written through an
        equivalent descriptor)."""
        source, target = desc.input_tensor, desc.output_tensor
        dims = self._dims(desc)
        params = Params(5)
        at: dict[str, object] = {"COORDINATES": _coordinates(params, dims, {"x": 1, "g": 3, "s": 4, "b": 5})}
        at |= placeholders(params, {"FINAL": common["FINAL"]})
        body = "".join(self._normalize(desc, params))
        merged_target = TensorDesc(target.data_type, tuple(dim[0] for dim in dims), tuple(dim[2] for dim in dims),
                                   total_tensor_size_in_bytes=target.total_tensor_size_in_bytes)
        # The statistics buffer is bound like an input tensor of UINT32 words (its loads are what the pass needs).
        stats_words = TensorDesc(DataType.UINT32, (1,))
        elementwise = ElementwiseSource([("x", source), ("s", desc.scale_tensor or source),
                                         ("b", desc.bias_tensor or source), ("stats", stats_words)], merged_target,
                                        params, computed=("x", "s", "b"))
        output = template("mean_variance_normalization1_value.wgsl", TYPE=target.data_type.name, **at)
        return elementwise.compile(self.context, template("mean_variance_normalization1_scaling.wgsl") + body + output)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source, scale, bias = inputs
        assert source is not None
        sides = [self.dummy if scale is None else scale, self.dummy if bias is None else bias]
        if self.output is None:
            self.statistics.record(recorder, [source, *sides, self.stats, outputs[0]])
            return
        self.statistics.record(recorder, [source, self.stats])
        if self.merge is not None:
            self.merge.record(recorder, [self.stats])
        self.output.record(recorder, [source, *sides, self.stats, outputs[0]])


def _fused(desc: MeanVarianceNormalization1OperatorDesc, chunks: int) -> bool:
    """Whether the statistics pass writes the output too (the fused row pass, specialized shaders only): every
    group one chunk, FLOAT32 tensors (an invocation may write any element of the output), and Axes the trailing
    dimensions of those longer than 1, so that element j of group g is logical element g N + j."""
    sizes, axes = desc.input_tensor.sizes, set(desc.axes)
    long = [d for d, size in enumerate(sizes) if size > 1]
    kept = [d for d in long if d not in axes]
    normalized = [d for d in long if d in axes]
    tensors = [desc.input_tensor, desc.output_tensor, desc.scale_tensor, desc.bias_tensor]
    return (specialize.ENABLED and chunks == 1
            and all(tensor is None or tensor.data_type is DataType.FLOAT32 for tensor in tensors)
            and max(kept, default=-1) < min(normalized, default=len(sizes)))


def _coordinates(params: Params, dims: Sequence[Dim], tensors: dict[str, int], indent: int = 4,
                 rest: str = "rest") -> str:
    """A walk of the coordinates of variable `rest` over the merged dimensions `dims` (size, then the strides of
    Input, Output, the group index, Scale and Bias), adding each coordinate times the stride of column
    `tensors[name]` to variable `name`. Specialized (specialize.ENABLED), unrolled with the sizes and strides as
    literals; generic, a loop over a block of P: the rank, MAX_DIMENSION_COUNT sizes, then as many strides for each
    of the tensors."""
    if specialize.ENABLED:
        space = " " * indent
        lines = []
        for k, dim in enumerate(reversed(dims)):
            lines.append(f"{space}let {rest}{k} = {rest} % {dim[0]}u;\n{space}{rest} = {rest} / {dim[0]}u;\n")
            lines += [f"{space}{name} += {rest}{k} * {dim[column]}u;\n" for name, column in tensors.items()
                      if dim[column]]
        return "".join(lines)
    pad = [0] * (MAX_DIMENSION_COUNT - len(dims))
    at = params.add(len(dims), *(dim[0] for dim in dims), *([1] * len(pad)),
                    *(value for column in tensors.values() for value in [*(dim[column] for dim in dims), *pad]))
    adds = "".join(f"        {name} += c * P[k + {index + 1}u * {MAX_DIMENSION_COUNT}u];\n"
                   for index, name in enumerate(tensors))
    return (f"    for (var d = i32(P[{at}u]) - 1; d >= 0; d--) {{\n        let k = {at}u + 1u + u32(d);\n"
            f"        let size = P[k];\n        let next = rest / size;\n        let c = rest - next * size;\n"
            f"        rest = next;\n{adds}    }}\n")


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> MvnKernel:
    """FLOAT32 computation whatever the flags say: ALLOW_HALF_PRECISION_COMPUTATION permits but does not require
    FLOAT16."""
    assert isinstance(desc, MeanVarianceNormalization1OperatorDesc)
    return MvnKernel(context, desc)
