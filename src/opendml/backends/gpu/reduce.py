"""REDUCE on the GPU: all 12 functions on every data type of the support tables, through any strides.

The plan (at compile time): size-1 axes are dropped and neighbouring axes that are contiguous in memory merged; the
kept axes give each output element o its base offset (layout block KEPT over the input's strides), the reduced
axes give the row-major index r of an element in its reduced block (innermost axis plus layout block OUTER; in
increasing axis order for ARGMAX/ARGMIN, whose result is that index; by decreasing stride otherwise, so that the
walk is as contiguous as the strides allow).

Each function is a *state* (reduce_<family>.wgsl: identity, add an element, combine two states, finish and convert)
and up to three passes that drive it:

- direct (reduce_direct.wgsl, one elementwise pass): one invocation per output folds its whole block in order.
  Short blocks, or enough outputs side by side in memory to fill the GPU.
- tree (reduce_tree.wgsl with reduce_fold_input.wgsl, pass 1): work-groups of 256 invocations, PARTS of them per
  output, each folding a strided share of one chunk of the block; a fixed binary tree (tree.py) combines the
  shares. When the block is long and the outputs few, the block is cut into CHUNKS chunks so that enough
  work-groups run (about TARGET_GROUPS); each chunk's partial state goes to scratch. With a single chunk and a
  32/64-bit output, pass 1 finishes and writes the output itself.
- pass 2, for several chunks: up to COMBINE_MAX_CHUNKS are combined in chunk order by the elementwise combine
  (reduce_combine.wgsl), which finishes, converts and writes through the elementwise Output (8/16-bit outputs a
  whole word per invocation). More chunks get a tree pass of their own over the states (reduce_fold_states.wgsl,
  several invocations per output), which writes the output (32/64-bit) or leaves each output's state
  for a final combine of one chunk (8/16-bit). An 8/16-bit output after a single-chunk pass 1 takes that combine
  too.

Specialized shaders (specialize.ENABLED, read at compile time; issue 29): the passes' counts, sizes and strides are
WGSL literals (`placeholders`; the layout blocks through specialize.render), so loops know their bounds and divide by
constants; a reduced block that is one run of equally spaced elements (OUTER empty) is walked by a plain loop
(reduce_walk_row.wgsl); the tree pass, one work-group per row of contiguous elements where the outputs are few
enough, reads its parameters (the input's base element, TwoSum's opaque 1.0) once per invocation; where lanes run
along the block (not OUTPUT_FAST), pass 1's invocations each play up to VIRTUAL_PARTS of an output's parts and
combine them as the tree's first levels would (reduce_tree_lanes.wgsl): the same order, a quarter of the work-groups
(on lavapipe each work-group's barriers cost more than its loads). Generic shaders
read them from P, one pipeline per types and function. Both walk every block in the same order.

Every combining order is fixed by the plan alone (no atomics; where subgroup shuffles are used, they combine the
tree's own pairs: see tree.py), so results are the same on every run and adapter. Accuracy: float sums are
compensated float32 (hi, lo) pairs, about as accurate as the CPU's float64 sums; MIN/MAX/ARGMIN/ARGMAX compare
integer keys of the raw bits and return the input's own bits (exact); integer SUM, MULTIPLY, L1 and SUM_SQUARE wrap
in the output's type; LOG_SUM_EXP is max-shifted, with its own exp and log (reduce_math.wgsl) so that the driver's
precision does not matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...ops.reduce import ReduceOperatorDesc
from ...types import DataType, ExecutionFlags, ReduceFunction
from . import specialize, tree, wgsl
from .context import WORKGROUP_SIZE, Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, Output, Params
from .kernel import GpuKernel, Pass, compile_pass, template

R = ReduceFunction
D = DataType

#: Blocks of at most this many elements are reduced by one invocation each (the direct pass).
DIRECT_MAX_BLOCK = 16
#: This many outputs side by side in memory fill a large GPU with one invocation each (the direct pass).
DIRECT_MIN_OUTPUTS = 1 << 17
#: Long blocks are cut into chunks until about this many work-groups run (8 per SM of a 132-SM GPU).
TARGET_GROUPS = 1024
#: ... but every invocation folds at least this many elements of its chunk.
MIN_PER_INVOCATION = 32
#: Where the reduced axis is the contiguous one, a work-group gives each output enough invocations for this many
#: elements each (up to all 256 invocations).
PER_PART = 4
#: Up to this many chunks per output are combined by the elementwise pass 2; more get a tree pass of their own.
COMBINE_MAX_CHUNKS = 16
#: Specialized, where the reduced axis is the contiguous one, each invocation of pass 1 plays up to this many of
#: its output's parts (reduce_tree_lanes.wgsl), so that a work-group serves as many times more outputs.
VIRTUAL_PARTS = 4
#: The largest reduced block the 32-bit counters of the shaders walk (with room for a work-group's stride).
MAX_BLOCK = 2**32 - 2 * WORKGROUP_SIZE

_FLOAT_SUMS = {R.SUM: "v", R.AVERAGE: "v", R.LOG_SUM: "v", R.L1: "abs(v)", R.L2: "v * v", R.SUM_SQUARE: "v * v"}
_ARG = (R.ARGMAX, R.ARGMIN)


# -- the plan ---------------------------------------------------------------------------------------------------------

def _merge(dims: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(size, stride) axes, outer first, with each axis merged into the one before it where the two address memory
    as one axis would (same row-major order, so a merged index is the same linear index)."""
    merged: list[tuple[int, int]] = []
    for size, stride in dims:
        if merged and merged[-1][1] == stride * size:
            merged[-1] = (merged[-1][0] * size, stride)
        else:
            merged.append((size, stride))
    return merged


@dataclass(frozen=True)
class ReducePlan:
    """What the shaders need from the descriptor: the kept axes (output order), the reduced block's innermost axis
    and the rest, and the two counts."""

    kept: list[tuple[int, int]]
    inner: tuple[int, int]
    outer: list[tuple[int, int]]
    outputs: int
    reduced: int

    @classmethod
    def of(cls, desc: ReduceOperatorDesc) -> ReducePlan:
        source = desc.input_tensor
        axes = set(desc.axes)
        dims = list(zip(source.sizes, source.element_strides, strict=True))
        kept = _merge([dim for index, dim in enumerate(dims) if index not in axes and dim[0] > 1]) or [(1, 0)]
        reduced = [dim for index, dim in enumerate(dims) if index in axes and dim[0] > 1]
        if desc.function not in _ARG:       # any order sums alike: walk the smallest stride innermost
            reduced.sort(key=lambda dim: -dim[1])
        merged = _merge(reduced) or [(1, 0)]
        return cls(kept, merged[-1], merged[:-1], desc.output_tensor.element_count, desc.reduced_element_count)


def placeholders(params: Params, values: dict[str, int]) -> dict[str, object]:
    """Each of `values` appended to `params`, and its placeholder for a template: a u32 expression, the read of its
    position in P on the generic path, its literal where specialized (specialize.ENABLED, read at compile time)."""
    start = params.add(*values.values())
    literal = specialize.ENABLED
    return {name: f"{value}u" if literal else f"P[{start + index}u]"
            for index, (name, value) in enumerate(values.items())}


# -- the states -------------------------------------------------------------------------------------------------------

def _raw_literal(data_type: DataType, bits: int) -> str:
    if data_type.element_size == 8:
        return f"vec2<u32>({bits & 0xFFFFFFFF:#x}u, {bits >> 32:#x}u)"
    return f"{bits:#x}u"


def _lowest_or_highest(data_type: DataType, highest: bool) -> str:
    """The raw bits of the value that every value of `data_type` beats or equals: -inf / +inf, or the integer
    limits."""
    dtype = data_type.numpy_dtype
    if data_type.is_float:
        value = np.array(np.inf if highest else -np.inf, dtype)
    else:
        info = np.iinfo(dtype)
        value = np.array(info.max if highest else info.min, dtype)
    bits = int(value.reshape(1).view(f"u{dtype.itemsize}")[0])
    return _raw_literal(data_type, bits)


def _quiet_nan(data_type: DataType) -> str:
    """The raw bits of the canonical quiet NaN (sign clear, quiet bit set, zero payload) that a NaN result of MIN
    and MAX is; integers have no NaN, so any value of their raw type does."""
    bits = {D.FLOAT32: 0x7FC00000, D.FLOAT16: 0x7E00}.get(data_type, 0)
    return _raw_literal(data_type, bits)


def _key_functions(data_type: DataType) -> str:
    """is_nan_raw, order_key (floats: -0 below +0) and value_key (floats: -0 equals +0) of raw values: integer
    keys that order as the values do, so comparisons are exact and never see a flushed subnormal."""
    raw = wgsl.raw_type(data_type)
    if data_type in (D.FLOAT32, D.FLOAT16):
        magnitude, infinity, sign = (0x7FFFFFFF, 0x7F800000, 0x80000000) if data_type is D.FLOAT32 else \
            (0x7FFF, 0x7C00, 0x8000)
        return (f"fn is_nan_raw(r: u32) -> bool {{ return (r & {magnitude:#x}u) > {infinity:#x}u; }}\n"
                f"fn order_key(r: u32) -> i32 {{ let m = i32(r & {magnitude:#x}u); "
                f"return select(m, -1 - m, r >= {sign:#x}u); }}\n"
                f"fn value_key(r: u32) -> i32 {{ let m = i32(r & {magnitude:#x}u); "
                f"return select(m, -m, r >= {sign:#x}u); }}\n")
    ct = wgsl.COMPUTE_TYPE[data_type]
    return (f"fn is_nan_raw(r: {raw}) -> bool {{ return false; }}\n"
            f"fn order_key(r: {raw}) -> {ct} {{ return from_raw_{data_type.name}(r); }}\n"
            f"fn value_key(r: {raw}) -> {ct} {{ return from_raw_{data_type.name}(r); }}\n")


@dataclass(frozen=True)
class StateSource:
    """A function's state in WGSL, and how it travels through scratch as `words` u32 words: `to_words` are
    expressions of the state `s`, `from_words` an expression of w0, w1, ..."""

    text: str
    to_words: tuple[str, ...]
    from_words: str

    @property
    def words(self) -> int:
        return len(self.to_words)

    def scratch_functions(self) -> str:
        """state_store(slot, s) and state_load(slot) over the `scratch` buffer."""
        count = self.words
        stores = "".join(f"    scratch[i + {k}u] = {word};\n" for k, word in enumerate(self.to_words))
        loads = "".join(f"    let w{k} = scratch[i + {k}u];\n" for k in range(count))
        return (f"fn state_store(slot: u32, s: State) {{\n    let i = slot * {count}u;\n{stores}}}\n"
                f"fn state_load(slot: u32) -> State {{\n    let i = slot * {count}u;\n{loads}"
                f"    return {self.from_words};\n}}\n")


def _raw_words(data_type: DataType, value: str) -> tuple[tuple[str, ...], str]:
    """(words of a raw value expression, the raw value from words starting at w0)."""
    if data_type.element_size == 8:
        return (f"{value}.x", f"{value}.y"), "vec2<u32>(w0, w1)"
    return (value,), "w0"


def state_source(function: ReduceFunction, source: DataType, result: DataType, reduced: str,
                 decreasing: bool = False) -> StateSource:
    """The state of `function` reducing `source` into `result`; `reduced` is the reduced element count N (a u32
    expression).
    `decreasing` (ARGMAX/ARGMIN): ties and NaNs go to the last index, as AxisDirection DECREASING has it."""
    out, raw_out = result.name, wgsl.raw_type(result)
    if function in _ARG:
        highest = function is R.ARGMIN
        index_raw = "vec2<u32>(i, 0u)" if result.element_size == 8 else "i"
        text = _key_functions(source) + template(
            "reduce_arg.wgsl", RAW_IN=wgsl.raw_type(source), RAW_OUT=raw_out,
            IDENTITY=_lowest_or_highest(source, highest), BETTER="<" if highest else ">",
            TIE="b.index + 1u > a.index + 1u" if decreasing else "b.index < a.index", INDEX_RAW=index_raw)
        words, raw_from = _raw_words(source, "s.raw")
        count = len(words)
        return StateSource(text, (*words, "s.index"), f"State({raw_from}, w{count})")
    if function in (R.MIN, R.MAX):
        highest = function is R.MIN
        text = _key_functions(source) + template(
            "reduce_extreme.wgsl", RAW_IN=wgsl.raw_type(source), IDENTITY=_lowest_or_highest(source, highest),
            BETTER="<" if highest else ">", QUIET_NAN=_quiet_nan(source))
        words, raw_from = _raw_words(source, "s")
        return StateSource(text, words, raw_from)
    if function is R.LOG_SUM_EXP:
        text = template("reduce_lse.wgsl", OUT=out, RAW_OUT=raw_out)
        return StateSource(text, ("bitcast<u32>(s.m)", "bitcast<u32>(s.hi)", "bitcast<u32>(s.lo)"),
                           "State(bitcast<f32>(w0), bitcast<f32>(w1), bitcast<f32>(w2))")
    if source.is_float and function in _FLOAT_SUMS:
        finish = {R.AVERAGE: f"csum_divide(s, f32({reduced}))", R.L2: "csum_sqrt(s)",
                  R.LOG_SUM: "csum_log(s)"}.get(function, "csum_value(s)")
        text = template("reduce_sum.wgsl", TERM=_FLOAT_SUMS[function], FINISH=finish, OUT=out, RAW_OUT=raw_out)
        return StateSource(text, ("bitcast<u32>(s.x)", "bitcast<u32>(s.y)"),
                           "vec2<f32>(bitcast<f32>(w0), bitcast<f32>(w1))")
    # One value of the computation type: float MULTIPLY, and the integer SUM, MULTIPLY, L1, SUM_SQUARE.
    ct = wgsl.COMPUTE_TYPE[source]
    multiply = function is R.MULTIPLY
    term = {R.L1: "v" if ct[0] in "uf" else "select(v, -v, v < State(0))", R.SUM_SQUARE: "v * v"}.get(function, "v")
    text = template("reduce_plain.wgsl", CT=ct, IDENTITY=f"{ct}({int(multiply)})", TERM=term,
                    COMBINE="a * b" if multiply else "a + b", OUT=out, RAW_OUT=raw_out)
    if ct == "f32":
        return StateSource(text, ("bitcast<u32>(s)",), "bitcast<f32>(w0)")
    words, raw_from = _raw_words(source, f"to_raw_{source.name}(s)")
    return StateSource(text, words, f"from_raw_{source.name}({raw_from})")


# -- the kernel -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One dispatch: its bindings by name ("x", "scratch", "out") and the compiled pass."""

    bindings: tuple[str, ...]
    work: Pass


class ReduceKernel(GpuKernel):
    """A REDUCE. ARGMIN and ARGMAX run theirs as the equivalent REDUCE `desc` with `decreasing` (their
    AxisDirection) and their own descriptor as `owner`, which names the operator and its tensors."""

    def __init__(self, context: GpuContext, desc: ReduceOperatorDesc, decreasing: bool = False,
                 owner: OperatorDesc | None = None) -> None:
        super().__init__(context, desc if owner is None else owner)
        self.decreasing = decreasing
        plan = ReducePlan.of(desc)
        if plan.reduced > MAX_BLOCK:
            raise UnsupportedError(f"{self.label}: each output element reduces {plan.reduced} input elements; the "
                                   f"gpu backend reduces at most {MAX_BLOCK} per output element")
        self.plan = plan
        self.function = desc.function
        self.source_type = desc.input_tensor.data_type
        self.result_type = desc.output_tensor.data_type
        self.packed = self.result_type.element_size < 4
        self.steps: list[Step] = []
        self._scratch: Any = None
        self._choose()

    # -- choosing the passes ------------------------------------------------------------------------------------------

    def _step(self, wgsl: str, bindings: tuple[str, ...], params: Params, groups: tuple[int, int]) -> Step:
        return Step(bindings, compile_pass(self.context, wgsl, len(bindings), params, groups))

    def _choose(self) -> None:
        plan = self.plan
        kept_stride, inner_stride = plan.kept[-1][1], plan.inner[1]
        # Neighbouring outputs are neighbours in memory and the reduced axis is not: lanes should run over outputs.
        output_fast = plan.outputs > 1 and 0 < kept_stride < inner_stride
        if plan.reduced <= DIRECT_MAX_BLOCK or (output_fast and plan.outputs >= DIRECT_MIN_OUTPUTS):
            self._direct()
            return
        if output_fast:
            per_group = min(WORKGROUP_SIZE, _power_of_two_at_least(plan.outputs))
            parts = WORKGROUP_SIZE // per_group
        else:
            # About PER_PART elements each: fewer tree levels for short blocks, more outputs per work-group.
            parts = _parts(plan.reduced)
            per_group = WORKGROUP_SIZE // parts
        output_groups = -(-plan.outputs // per_group)
        chunks = 1
        if output_groups < TARGET_GROUPS:
            chunks = max(1, min(-(-TARGET_GROUPS // output_groups), plan.reduced // (parts * MIN_PER_INVOCATION)))
        words = self._state(0).words
        limit = self.context.max_binding_size
        while chunks > 1 and chunks * plan.outputs * words * 4 > limit:
            chunks //= 2
        if chunks == 1 and self.packed and plan.outputs * words * 4 > limit:
            self._direct()      # no scratch can hold the states; one invocation per output needs none
            return
        chunk = -(-plan.reduced // chunks)
        chunks = -(-plan.reduced // chunk)
        self._scratch = self.scratch(chunks * plan.outputs * words * 4 if chunks > 1 or self.packed else 16)
        final = not self.packed
        virtual = min(VIRTUAL_PARTS, parts // 2) if specialize.ENABLED and not output_fast else 1
        if plan.outputs * parts < WORKGROUP_SIZE * virtual:
            virtual = 1     # too few outputs to fill the work-groups that many parts to an invocation would have
        if virtual > 1:     # the same parts, VIRTUAL_PARTS to an invocation: fewer work-groups
            output_groups = -(-plan.outputs // (WORKGROUP_SIZE * virtual // parts))
        if chunks == 1:
            self._tree("reduce_fold_input.wgsl", plan.reduced, parts, output_fast, output_groups, 1, plan.reduced,
                       final, virtual)
        else:
            self._tree("reduce_fold_input.wgsl", plan.reduced, parts, output_fast, output_groups, chunks, chunk,
                       False, virtual)
            if chunks <= COMBINE_MAX_CHUNKS:
                self._combine(chunks)
                return
            # Many chunks: a tree over their states too, one work-group per output (or several outputs per group),
            # which leaves each output's state in its chunk-0 slot (or the finished result in the output).
            parts = _parts(chunks)
            per_group = WORKGROUP_SIZE // parts
            self._tree("reduce_fold_states.wgsl", chunks, parts, False, -(-plan.outputs // per_group), 1, chunks,
                       final)
        if not final:
            self._combine(1)

    def _state(self, reduced: object) -> StateSource:
        return state_source(self.function, self.source_type, self.result_type, str(reduced), self.decreasing)

    def _header(self, params: Params, block: int = 0, chunks: int = 1, chunk: int = 0, parts: int = 1,
                output_fast: bool = False, final: bool = False, groups: int = 0) -> dict[str, object]:
        """The placeholders of every pass: the scalars as u32 expressions, the layout blocks KEPT and OUTER and
        the float 1.0 (ONE) as positions in P. Generic, each scalar is read from P at a position that depends only
        on the binding count, so the WGSL, and its pipeline, is shared by every descriptor with the same types and
        function; specialized (specialize.ENABLED, read here), the scalars are literals, so the compiler knows the
        loops' bounds and steps and divides by constants."""
        plan = self.plan
        places = placeholders(params, {
            "OUTPUTS": plan.outputs, "REDUCED": plan.reduced, "BLOCK": block, "INNER_SIZE": plan.inner[0],
            "INNER_STRIDE": plan.inner[1], "CHUNKS": chunks, "CHUNK": chunk, "PARTS": parts,
            "OUTPUT_FAST": int(output_fast), "FINAL": int(final), "GROUPS": groups})
        places["ONE"] = params.add_f32(1.0)
        places["KEPT"] = params.add_tensor([size for size, _ in plan.kept], [stride for _, stride in plan.kept])
        places["OUTER"] = params.add_tensor([size for size, _ in plan.outer], [stride for _, stride in plan.outer])
        return places

    def _walk(self, positions: dict[str, object]) -> str:
        """reduce_range: a specialized shader whose reduced block is one run of equally spaced elements walks it
        with a plain loop (reduce_walk_row.wgsl); others split the index into rows (reduce_walk.wgsl)."""
        if specialize.ENABLED and not self.plan.outer:
            return template("reduce_walk_row.wgsl", **positions)
        return template("reduce_walk.wgsl", **positions)

    def _input(self, hoisted: bool = False) -> str:
        """The input's binding and loads: MIN, MAX, ARGMIN and ARGMAX compare raw values; the others compute.
        `hoisted` (the tree pass): the loads add x_base, the private copy of the binding's base element P[0] that
        the entry point reads once, so that no element's load also loads a parameter."""
        text = wgsl.tensor_input("x", self.source_type, 0, computed=self.function not in (*_ARG, R.MIN, R.MAX),
                                 f16=self.context.f16)
        return text.replace("P[0u] + e", "x_base + e") if hoisted else text

    def _common(self, positions: dict[str, object], one_copy: bool = False) -> list[str]:
        """The data types' converters and the shared helpers, after the bindings; `one_copy`: opaque_one reads
        the private copy the tree pass's entry point makes."""
        source = "one_copy" if one_copy else f"bitcast<f32>(P[{positions['ONE']}u])"
        return [wgsl.prelude({self.source_type, self.result_type}), COMMON,
                template("reduce_math.wgsl", ONE_SOURCE=source)]

    def _direct(self) -> None:
        params = Params(2)
        positions = self._header(params)
        output = Output(self.output_descs[0], "out", 1, params)
        text = "".join([
            wgsl.params_binding(2), self._input(), output.declarations(),
            *self._common(positions), self._state(positions["REDUCED"]).text,
            self._walk(positions),
            template("reduce_direct.wgsl", RAW_OUT=wgsl.raw_type(self.result_type), **positions), output.main()])
        self.steps.append(self._step(text, ("x", "out"), params, output.groups()))

    def _tree(self, fold: str, block: int, parts: int, output_fast: bool, output_groups: int, chunks: int,
              chunk: int, final: bool, virtual: int = 1) -> None:
        """A work-group tree pass (reduce_tree.wgsl) folding `block` items per output with `fold` (the input's
        elements, or pass 1's states); with `virtual` > 1 (specialized, not `output_fast`), reduce_tree_lanes.wgsl,
        each invocation playing `virtual` of the `parts`."""
        bindings: tuple[str, ...] = ("x", "scratch") if self.packed else ("x", "scratch", "out")
        params = Params(len(bindings))
        total = output_groups * chunks
        positions = self._header(params, block, chunks, chunk, parts, output_fast, final, total)
        state = self._state(positions["REDUCED"])
        if self.packed:
            write = template("reduce_write_scratch.wgsl", **positions)
            declarations = ""
        else:
            write = template("reduce_write_final.wgsl", OUT=params.add_desc(self.output_descs[0]), **positions)
            declarations = wgsl.buffer("out", 2) + wgsl.stores("out", self.result_type, 2)
        text = "".join([
            wgsl.params_binding(len(bindings)), self._input(hoisted=True),
            wgsl.buffer("scratch", 1), declarations, *self._common(positions, one_copy=True), state.text,
            state.scratch_functions(),
            write, self._walk(positions), template(fold, **positions),
            tree.tree(self.context, "state_tree", "State", "state_combine", WORKGROUP_SIZE, state.to_words,
                      state.from_words),
            template("reduce_tree_lanes.wgsl", VIRTUAL=virtual, LANES=parts // virtual, **positions,
                     **tree.placeholders(self.context)) if virtual > 1 else
            template("reduce_tree.wgsl", **positions, **tree.placeholders(self.context))])
        self.steps.append(self._step(text, bindings, params, group_counts(total, 1)))

    def _combine(self, chunks: int) -> None:
        # The input is bound too, unread, so that the state's element loads (state_add) resolve.
        params = Params(3)
        positions = self._header(params, chunks=chunks)
        output = Output(self.output_descs[0], "out", 2, params)
        state = self._state(positions["REDUCED"])
        text = "".join([
            wgsl.params_binding(3), self._input(),
            wgsl.buffer("scratch", 1), output.declarations(), *self._common(positions), state.text,
            state.scratch_functions(),
            template("reduce_combine.wgsl", RAW_OUT=wgsl.raw_type(self.result_type), **positions), output.main()])
        self.steps.append(self._step(text, ("x", "scratch", "out"), params, output.groups()))

    # -- recording ----------------------------------------------------------------------------------------------------

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        source = inputs[0]
        assert source is not None
        named = {"x": source, "out": outputs[0], "scratch": self._scratch}
        for step in self.steps:
            step.work.record(recorder, [named[name] for name in step.bindings])


def _parts(count: int) -> int:
    """Invocations per output where they run along the folded sequence: about PER_PART items each, at most all."""
    return min(WORKGROUP_SIZE, _power_of_two_at_least(-(-count // PER_PART)))


def _power_of_two_at_least(value: int) -> int:
    return 1 << (value - 1).bit_length() if value > 1 else 1


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ReduceKernel:
    assert isinstance(desc, ReduceOperatorDesc)
    return ReduceKernel(context, desc)
