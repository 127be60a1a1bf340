"""The ELEMENT_WISE family on the GPU (issue 26): each descriptor's typed formula tree (ops/elementwise.py,
formula.py) rendered to a WGSL function `value(o)` over math.wgsl and int64.wgsl, in one elementwise pass
(kernel.ElementwiseSource's pieces: the inputs read through their strides, the output written by elementwise.Output,
8- and 16-bit outputs a word per invocation).

How the kinds are computed (formula.py's NumPy rendering is the reference):
- F: f32 (FLOAT16 widened exactly, the result rounded once on store); the primitives are math.wgsl's `m_*` (the
  activations' sigmoid, softplus and gelu: math_activations.wgsl's); ScaleBias is x * Scale + Bias in f32 before the
  formula.
- I: every integer, whatever its type, as a 64-bit two's complement pair (int64.wgsl), exactly as the reference
  computes in int64 (uint64 for UINT64): signed operations but for UINT64's, wrapped to the output's width on store.
  So an intermediate never wraps at 8, 16 or 32 bits (MEAN's sum, DEQUANTIZE's difference), and 64-bit tensors need
  no shader-int64.
- B: bool, stored as 1 or 0 in the output's type.
- FLOAT64 (IDENTITY, IF): WGSL has no f64; its values are only moved, as raw (low, high) words. Arithmetic on FLOAT64
  (IDENTITY with a ScaleBias) is refused at compile time (UnsupportedError).

Parameter values (Min, Max, ScaleBias, ...) travel in the parameter buffer (never WGSL constants, which a driver
could fold inexactly); every tensor's layout too on the generic path (one pipeline per formula and data types), as
constants where specialized (specialize.py), with the vec4 pass of ElementWiseKernel.

The 17 standalone ACTIVATION_* operators run this same pass (backends/gpu/activations.py delegates here: their
descriptors have the engine's interface, ops/activations.py), and `activation_function` renders a fused activation
from the same formula (ops/activations.py's `activation_tree`) for other gpu kernels (MEAN_VARIANCE_NORMALIZATION1's
output pass): the fused and the standalone activation are one formula, rendered alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from ...errors import UnsupportedError
from ...formula import COORDINATES, B, F, I, Node, coordinate_strides, parse
from ...ops.activations import ActivationOperatorDesc, activation_tree, activation_values
from ...ops.base import OperatorDesc
from ...ops.elementwise import ElementWiseOperatorDesc
from ...ops.generators import GeneratorOperatorDesc
from ...tensor import TensorDesc
from ...types import DataType, ExecutionFlags
from .. import activation_constants
from ..plans import merge_dimensions
from . import specialize
from .context import Bound, GpuContext, Recorder, group_counts
from .elementwise import COMMON, Output, Params, word_index, word_layout, word_main, word_of
from .kernel import GpuKernel, Pass, compile_pass, compile_words, template
from .wgsl import buffer, loads, params_binding, prelude, tensor_input

D = DataType
_HERE = Path(__file__).parent
MASK64 = (1 << 64) - 1

#: F primitives that are math.wgsl's m_<name>.
_MATH = {"floor", "ceil", "trunc", "round_even", "round_away", "sqrt", "exp", "log", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "expm1", "log1p", "atan2", "pow",
         "isnan", "isinf", "sign"}
#: The activations' primitives (math_activations.wgsl's m_<name>).
_ACTIVATION_PRIMITIVES = {"sigmoid", "softplus", "gelu"}
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")

#: A descriptor the engine renders: an element-wise operator, or a standalone activation (the same interface).
EngineDesc = ElementWiseOperatorDesc | ActivationOperatorDesc | GeneratorOperatorDesc


@cache
def _source(name: str) -> str:
    return (_HERE / name).read_text()


def f32_bits(value: float) -> int:
    return int(np.array([value], np.float32).view(np.uint32)[0])


@cache
def _activation_library() -> str:
    """math_activations.wgsl with GELU's constants (activation_constants.py's) as exact FLOAT32 bits."""
    return template("math_activations.wgsl", **{name: f"bitcast<f32>({f32_bits(float(value)):#010x}u)"
                                                 for name, value in activation_constants.SHARED.items()})


def _libraries(uses: set[str]) -> str:
    """The WGSL libraries a rendered formula uses, in dependency order."""
    return "".join([_source("math.wgsl") if uses & {"math", "activations", "int64"} else "",   # int64 uses it
                    _source("int64.wgsl") if "int64" in uses else "",
                    _activation_library() if "activations" in uses else ""])


class _Renderer:
    """Renders a typed tree to `let` statements, one per distinct node (`label`: the operator, for messages;
    `values`: {parameter name: value}, bound through `params`)."""

    def __init__(self, label: str, values: Mapping[str, float | int], params: Params, inputs: dict[str, str]) -> None:
        self.label = label
        self.params = params
        self.inputs = inputs                      # formula variable -> its WGSL value (already loaded)
        self.values = values
        self.lines: list[str] = []
        self.names: dict[Node, str] = {}
        self.uses: set[str] = set()               # "math", "int64", "activations"

    def fail(self, what: str) -> UnsupportedError:
        return UnsupportedError(f"{self.label}: {what}")

    def wgsl_type(self, node: Node) -> str:
        if node.kind == B:
            return "bool"
        if node.kind == F and node.data_type != D.FLOAT64:
            return "f32"
        return "vec2<u32>"

    def render(self, node: Node) -> str:
        known = self.names.get(node)
        if known is not None:
            return known
        if node.kind == F and node.data_type == D.FLOAT64 and node.op not in ("name", "select", "const"):
            raise self.fail(f"FLOAT64 {node.op!r} needs float64 arithmetic, which the gpu backend does not have "
                            f"(WGSL has no f64): on the gpu, FLOAT64 tensors are only moved (IDENTITY without "
                            f"ScaleBias, IF) or worked on as raw bits (BIT_*)")
        if node.kind == I:
            self.uses.add("int64")
        expression = self.expression(node, [self.render(arg) for arg in node.args])
        name = f"v{len(self.names)}"
        self.lines.append(f"    let {name}: {self.wgsl_type(node)} = {expression};\n")
        self.names[node] = name
        return name

    def literal(self, node: Node, value: float | int) -> str:
        if node.kind == F and node.data_type == D.FLOAT64:   # moved only: its raw (low, high) words
            bits = int(np.array([value], np.float64).view(np.uint64)[0])
            return f"vec2<u32>({bits & 0xFFFFFFFF:#x}u, {bits >> 32:#x}u)"
        if node.kind == F:
            return f"bitcast<f32>({f32_bits(float(value)):#010x}u)"
        bits = int(value) & MASK64
        return f"vec2<u32>({bits & 0xFFFFFFFF:#x}u, {bits >> 32:#x}u)"

    def parameter(self, node: Node) -> str:
        value = self.values[node.name]
        if node.kind == F and node.data_type == D.FLOAT64:   # moved only: its raw (low, high) words
            bits = int(np.array([value], np.float64).view(np.uint64)[0])
            at = self.params.add(bits & 0xFFFFFFFF, bits >> 32)
            return f"vec2<u32>(P[{at}u], P[{at + 1}u])"
        if node.kind == F:
            return f"bitcast<f32>(P[{self.params.add_f32(float(value))}u])"
        bits = int(value) & MASK64
        at = self.params.add(bits & 0xFFFFFFFF, bits >> 32)
        return f"vec2<u32>(P[{at}u], P[{at + 1}u])"

    def expression(self, node: Node, args: list[str]) -> str:
        op, kind = node.op, node.kind
        operand = node.args[0] if node.args else node
        integer = operand.kind == I
        prefix = "u64" if operand.data_type == D.UINT64 else "i64"
        if op == "name":
            return self.inputs[node.name] if node.name in self.inputs else self.parameter(node)
        if op == "const":
            return self.literal(node, node.value)
        if op == "canonical_nan":
            return "bitcast<f32>(0x7fc00000u)"
        if op in ("+", "-", "*"):
            if integer:
                return f"i64_{ {'+': 'add', '-': 'sub', '*': 'mul'}[op]}({args[0]}, {args[1]})"
            return f"({args[0]} {op} {args[1]})"
        if op == "neg":   # the sign bit flipped (never 0 - x, whose zero is +0)
            return f"i64_neg({args[0]})" if integer else f"bitcast<f32>(bitcast<u32>({args[0]}) ^ 0x80000000u)"
        if op in _COMPARE and not integer:
            # NaN told apart by its bits: a compiler may rewrite a comparison as the negation of its opposite
            self.uses.add("math")
            a, b = args
            if op == "!=":
                return f"(m_isnan({a}) || m_isnan({b}) || {a} != {b})"
            return f"(!m_isnan({a}) && !m_isnan({b}) && {a} {op} {b})"
        if op in _COMPARE:
            a, b = args
            return {"==": f"i64_eq({a}, {b})", "!=": f"!i64_eq({a}, {b})", "<": f"{prefix}_lt({a}, {b})",
                    "<=": f"{prefix}_le({a}, {b})", ">": f"{prefix}_lt({b}, {a})", ">=": f"{prefix}_le({b}, {a})"}[op]
        if op in ("and", "or"):
            return f"({args[0]} {'&&' if op == 'and' else '||'} {args[1]})"
        if op == "not":
            return f"!{args[0]}"
        if op == "select":
            return f"select({args[2]}, {args[1]}, {args[0]})"
        if integer:
            return self.integer(node, op, prefix, args)
        if kind == I:   # saturate: F -> the output's integer type
            return self.saturate(node, args[0])
        self.uses.add("math")
        if op == "to_float":
            return args[0]
        if op == "div":
            return f"({args[0]} / {args[1]})"
        if op in ("minimum", "maximum"):
            return f"m_{op}({args[0]}, {args[1]})"
        if op == "mod_trunc":
            return f"m_fmod({args[0]}, {args[1]})"
        if op == "mod_floor":
            return f"m_mod_floor({args[0]}, {args[1]})"
        if op == "abs":
            return f"bitcast<f32>(bitcast<u32>({args[0]}) & 0x7fffffffu)"
        if op in _ACTIVATION_PRIMITIVES:
            self.uses.add("activations")
            return f"m_{op}({args[0]})"
        if op in _MATH:
            return f"m_{op}({', '.join(args)})"
        raise self.fail(f"the gpu backend does not render the primitive {op!r}")   # pragma: no cover

    def integer(self, node: Node, op: str, prefix: str, args: list[str]) -> str:
        """An operation on I arguments (64-bit pairs)."""
        operand = node.args[0]
        assert operand.data_type is not None
        width = operand.data_type.bits
        if op == "to_float":
            self.uses.add("math")
            return f"{prefix}_to_f32({args[0]})"
        if op == "widen":   # every integer is already its exact value in a 64-bit pair
            return args[0]
        if op in ("div", "mod_trunc", "mod_floor"):
            if prefix == "u64":
                return f"u64_{'div' if op == 'div' else 'mod'}({args[0]}, {args[1]})"
            return f"i64_{ {'div': 'div_trunc', 'mod_trunc': 'mod_trunc', 'mod_floor': 'mod_floor'}[op]}" \
                   f"({args[0]}, {args[1]})"
        if op in ("minimum", "maximum"):
            return f"{prefix}_{op[:3]}({args[0]}, {args[1]})"
        if op == "abs":
            return args[0] if prefix == "u64" else f"i64_abs({args[0]})"
        if op == "sign":
            return f"{prefix}_sign({args[0]})"
        if op == "ipow":
            return f"{prefix}_pow({args[0]}, {args[1]})"
        if op in ("bit_and", "bit_or", "bit_xor"):
            return f"i64_{op[4:]}({args[0]}, {args[1]})"
        if op == "bit_not":
            return f"i64_not({args[0]})"
        if op == "popcount":
            if width == 64:
                return f"i64_popcount({args[0]})"
            return f"vec2<u32>(countOneBits({args[0]}.x & {(1 << width) - 1:#x}u), 0u)"
        if op in ("shl", "shr"):
            # a count outside [0, width) gives 0; inside it, the 64-bit shift of the (extended) value
            shift = "i64_shl" if op == "shl" else f"{'u64' if prefix == 'u64' else 'i64'}_shr"
            return (f"select(vec2<u32>(0u, 0u), {shift}({args[0]}, {args[1]}), "
                    f"{args[1]}.y == 0u && {args[1]}.x < {width}u)")
        raise self.fail(f"the gpu backend does not render the integer primitive {op!r}")   # pragma: no cover

    def saturate(self, node: Node, value: str) -> str:
        """saturate(v): truncated toward zero and clamped to the output type's range, NaN 0."""
        output = node.data_type
        assert output is not None
        if output == D.UINT64:
            return f"f32_to_u64_saturate({value})"
        wide = f"f32_to_i64_saturate({value})"
        if output == D.INT64:
            return wide
        info = np.iinfo(output.numpy_dtype)
        return f"i64_max(i64_min({wide}, {self.literal(node, int(info.max))}), {self.literal(node, int(info.min))})"


def _load(slot_name: str, view: DataType, kind: str, at: str) -> str:
    """The WGSL value of the input's element `at` (an element offset) as its formula kind."""
    if kind == F and view == D.FLOAT16:
        return f"load_{slot_name}({at})"
    return _from_raw(f"load_raw_{slot_name}({at})", view, kind)


def _from_raw(raw: str, view: DataType, kind: str) -> str:
    """The raw bits `raw` of an element of type `view` as its formula kind (FLOAT16's F: see _load)."""
    if kind == F and view == D.FLOAT32:
        return f"bitcast<f32>({raw})"
    if kind == F and view == D.FLOAT16:
        return f"from_raw_FLOAT16({raw})"
    if view.element_size == 8:
        return raw
    if view.is_float or view.name.startswith("U"):     # zero-extended (raw bits of a float too)
        return f"vec2<u32>({raw}, 0u)"
    shift = 32 - view.bits
    return (f"i64_from_i32(bitcast<i32>({raw} << {shift}u) >> {shift}u)" if shift else
            f"i64_from_i32(bitcast<i32>({raw}))")


def _store(result: Node, name: str, output: DataType) -> str:
    """The raw output word(s) of the formula's result `name`."""
    if result.kind == B:
        one = {D.FLOAT32: "0x3f800000u", D.FLOAT16: "0x3c00u"}.get(output, "1u")
        if output.element_size == 8:
            high = "0x3ff00000u" if output == D.FLOAT64 else "0u"
            return f"select(vec2<u32>(0u, 0u), vec2<u32>({'0u' if output == D.FLOAT64 else '1u'}, {high}), {name})"
        return f"select(0u, {one}, {name})"
    if result.kind == F and result.data_type != D.FLOAT64:
        return f"to_raw_{output.name}({name})"
    return name if output.element_size == 8 else f"{name}.x"


@dataclass(frozen=True)
class _Input:
    """One present input of the pass: its slot, DML field, formula variable, WGSL name, data type, the type it is
    read as, its formula kind, and its layout over the output's logical elements (sizes, u32 strides, first
    element)."""

    slot: int
    field: str
    variable: str
    name: str
    data_type: DataType
    view: DataType
    kind: str
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    base: int

    @property
    def value_type(self) -> str:
        return "f32" if self.kind == F and self.view != D.FLOAT64 else "vec2<u32>"


class ElementWiseKernel(GpuKernel):
    """One elementwise pass: output element o = the formula over each input's element o (read through its own
    strides: zero strides broadcast).

    The formula is `compute(o, inputs...)`, the inputs' values already loaded. The scalar pass (elementwise.Output's
    entry point, `value(o)` loading each input through its layout) handles every descriptor. Where specialized and
    the output is a 16- or 32-bit type whose innermost dimension, merged with its neighbours where every tensor is
    contiguous, is at stride 1 and a whole number of 16-byte words long (its other strides too), the vec4 pass
    moves whole words instead (4 or 8 elements): an invocation loads a word of each input of the output's element
    size with such a layout, one element of an input broadcast along the innermost dimension, or each element of
    any other, computes the word's elements and stores the word, several words an invocation on large tensors
    (elementwise.word_main). The word is the tensor's own bytes only, so 16-bit neighbours are never torn. A
    binding's base element is known only at execute: the WordPass takes the vec4 pass where every word-loaded
    tensor's base is a whole word (DML's 16-byte offsets give that), else the scalar pass (built then, once)."""

    def __init__(self, context: GpuContext, desc: EngineDesc) -> None:
        super().__init__(context, desc)
        tree = desc.formula_tree()
        tensors = desc.present_tensors()
        output = tensors["OutputTensor"]
        present = [(name, variable) for name, variable in desc.INFO.inputs if name in tensors]
        slots = len(present) + 1
        params = Params(slots)
        kinds = {node.name: node.kind for node in tree.walk() if node.op == "name"}
        scale_bias, scaled = desc.scale_bias_value(), desc.scaled_inputs()
        for name, _ in present:
            if desc.view_type(name) == D.FLOAT64 and scale_bias is not None and name in scaled:
                raise UnsupportedError(f"{desc.label}: ScaleBias on FLOAT64 {name} needs float64 arithmetic, which "
                                       f"the gpu backend does not have (WGSL has no f64): on the gpu, FLOAT64 "
                                       f"tensors are only moved or worked on as raw bits")
        inputs, out_layout = _layouts(desc, tensors, present, kinds)
        # compute(o, a_<variable>...): the formula over the loaded inputs (ScaleBias applied here)
        values: dict[str, str] = {}
        prologue = ""
        for tensor in inputs:
            value = f"a_{tensor.variable}"
            if tensor.field in scaled and scale_bias is not None:
                value = (f"({value} * bitcast<f32>(P[{params.add_f32(scale_bias.scale)}u]) + "
                         f"bitcast<f32>(P[{params.add_f32(scale_bias.bias)}u]))")
            prologue += f"    let in_{tensor.variable}: {tensor.value_type} = {value};\n"
            values[tensor.variable] = f"in_{tensor.variable}"
        for name in sorted({node.name for node in tree.walk() if node.op == "name" and node.name in COORDINATES}):
            # a generator's coordinate leaf: the offset of logical element o through formula.coordinate_strides
            coordinate_sizes, (coordinate,) = merge_dimensions(output.sizes, coordinate_strides(name, output.sizes))
            values[name] = f"vec2<u32>(offset_of({params.add_tensor(coordinate_sizes, coordinate)}u, o), 0u)"
        renderer = _Renderer(desc.label, desc.formula_parameters(), params, values)
        result = renderer.render(tree)
        output_view = desc.view_type("OutputTensor")
        raw = "vec2<u32>" if output_view.element_size == 8 else "u32"
        uses = renderer.uses | ({"int64"} if any(tensor.kind == I for tensor in inputs) else set())
        arguments = "".join(f", a_{tensor.variable}: {tensor.value_type}" for tensor in inputs)
        compute = (f"// {desc.OPERATOR_TYPE.dml_name}: {desc.formula_text()}\n"
                   f"fn compute(o: u32{arguments}) -> {raw} {{\n{prologue}{''.join(renderer.lines)}"
                   f"    return {_store(tree, result, output_view)};\n}}\n")
        types = {tensor.data_type for tensor in tensors.values() if tensor.data_type.element_size < 8}
        head = prelude(types) + params_binding(slots) + COMMON
        libraries = _libraries(uses)
        # the scalar pass
        blocks = [params.add_tensor(tensor.sizes, tensor.strides) for tensor in inputs]
        loaded = "".join(f", {_load(tensor.name, tensor.view, tensor.kind, _at(tensor, block, 'o'))}"
                         for tensor, block in zip(inputs, blocks, strict=True))
        target = Output(output, "out", len(present), params)
        declarations = "".join(_declaration(tensor, context.f16) for tensor in inputs)
        scalar = "".join([head, declarations, target.declarations(), libraries, compute,
                          f"fn value(o: u32) -> {raw} {{ return compute(o{loaded}); }}\n", target.main()])
        plan = _vector_plan(inputs, out_layout, output_view) if specialize.ENABLED else None
        if plan is None:
            self.main: Pass = compile_pass(context, scalar, slots, params, target.groups())
            return
        modes, per_word = plan
        out_block = params.add_tensor(*out_layout)
        declarations = ""
        loads, lanes = "", [[f"o + {lane}u"] for lane in range(per_word)]
        for tensor, block in zip(inputs, blocks, strict=True):
            mode = modes[tensor.slot]
            if mode == "vec4":
                declarations += (f"@group(0) @binding({tensor.slot}) var<storage, read_write> {tensor.name}: "
                                 f"array<vec4<u32>>;\n")
                at = word_index(tensor.slot, block, per_word)
                loads += f"        let w_{tensor.variable} = {tensor.name}[{at}];\n"
                for lane in range(per_word):
                    lanes[lane].append(_from_raw(_lane(f"w_{tensor.variable}", lane, per_word), tensor.view,
                                                 tensor.kind))
                continue
            declarations += _declaration(tensor, context.f16)
            if mode == "splat":
                loads += (f"        let s_{tensor.variable} = "
                          f"{_load(tensor.name, tensor.view, tensor.kind, _at(tensor, block, 'o'))};\n")
            for lane in range(per_word):
                lanes[lane].append(f"s_{tensor.variable}" if mode == "splat" else
                                   _load(tensor.name, tensor.view, tensor.kind, _at(tensor, block, f"o + {lane}u")))
        stored = word_of([f"compute({', '.join(arguments_of)})" for arguments_of in lanes], per_word)
        main, invocations = word_main(math.prod(out_layout[0]) // per_word, per_word,
                                      f"{loads}        out[{word_index(len(present), out_block, per_word)}] = "
                                      f"{stored};\n")
        vector = "".join([head, declarations, libraries, compute,
                          f"@group(0) @binding({len(present)}) var<storage, read_write> out: array<vec4<u32>>;\n",
                          main])
        words = [tensor.slot for tensor in inputs if modes[tensor.slot] == "vec4"] + [len(present)]
        self.main = compile_words(context, vector, scalar, slots, params, group_counts(invocations),
                                  target.groups(), words, per_word)

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        self.main.record(recorder, [*(bound for bound in inputs if bound is not None), outputs[0]])


def _layouts(desc: EngineDesc, tensors: Mapping[str, TensorDesc], present: Sequence[tuple[str, str]],
             kinds: Mapping[str, str]) -> tuple[list[_Input], tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each present input's layout over the output's logical elements, and the output's: dimensions merged where
    every tensor is contiguous (plans.merge_dimensions) when all have the output's sizes; a window's view (SLICE,
    SLICE1, the depth/space operators: ops' input_window) keeps its own sizes and signed strides as u32."""
    output = tensors["OutputTensor"]
    window = getattr(desc, "input_window", None)
    joint = window is None and all(tensors[name].sizes == output.sizes for name, _ in present)
    if joint:
        sizes, (out_strides, *strides) = merge_dimensions(
            output.sizes, output.element_strides, *[tensors[name].element_strides for name, _ in present])
        layouts = [(tuple(sizes), tuple(each), 0) for each in strides]
        out_layout = (tuple(sizes), tuple(out_strides))
    else:
        layouts = []
        for name, _ in present:
            if window is not None:   # the window's first element, signed strides: wrapping u32 arithmetic is exact,
                base, signed = window()   # as every offset read is inside the input
                view_sizes = getattr(desc, "input_view_sizes", lambda: output.sizes)()   # depth/space: 6-D
                layouts.append((tuple(view_sizes), tuple(stride & 0xFFFFFFFF for stride in signed), base))
            else:
                merged_sizes, (merged_strides,) = merge_dimensions(tensors[name].sizes, tensors[name].element_strides)
                layouts.append((tuple(merged_sizes), tuple(merged_strides), 0))
        out_sizes, (out_merged,) = merge_dimensions(output.sizes, output.element_strides)
        out_layout = (tuple(out_sizes), tuple(out_merged))
    return [_Input(slot, name, variable, f"t_{variable}", tensors[name].data_type, desc.view_type(name),
                   kinds.get(variable, I), *layout)
            for slot, ((name, variable), layout) in enumerate(zip(present, layouts, strict=True))], out_layout


def _vector_plan(inputs: Sequence[_Input], out_layout: tuple[tuple[int, ...], tuple[int, ...]],
                 output_view: DataType) -> tuple[dict[int, str], int] | None:
    """({input slot: 'vec4', 'splat' or 'lanes'}, the output's elements per 16-byte word) where the vec4 pass
    applies (see ElementWiseKernel), else None."""
    sizes, strides = out_layout
    per_word = word_layout(sizes, strides, output_view.element_size)
    if not per_word:
        return None
    modes = {}
    for tensor in inputs:
        if tensor.sizes != sizes:   # not merged with the output (a window: SLICE, depth/space): element by element
            modes[tensor.slot] = "lanes"
        elif tensor.strides[-1] == 0:
            modes[tensor.slot] = "splat"
        elif (tensor.view.element_size == output_view.element_size and tensor.strides[-1] == 1 and not tensor.base
              and all(s % per_word == 0 for s in tensor.strides[:-1])):
            modes[tensor.slot] = "vec4"
        else:
            modes[tensor.slot] = "lanes"
    return modes, per_word


def _declaration(tensor: _Input, f16: bool) -> str:
    """The binding of an input read element by element, with its loads (wgsl.tensor_input)."""
    if tensor.view.element_size == 8:
        return buffer(tensor.name, tensor.slot) + loads(tensor.name, D.FLOAT64, tensor.slot)
    return tensor_input(tensor.name, tensor.data_type, tensor.slot,
                        computed=tensor.kind == F and tensor.view == D.FLOAT16, f16=f16)


def _at(tensor: _Input, block: int, o: str) -> str:
    """The element offset of the input's logical element `o` through its layout block."""
    return f"({tensor.base}u + offset_of({block}u, {o}))" if tensor.base else f"offset_of({block}u, {o})"


def _lane(word: str, lane: int, per_word: int) -> str:
    """The raw bits of element `lane` of a vec4 word of `per_word` elements (4 or 8: 16-bit ones, the low first)."""
    component = f"{word}.{'xyzw'[lane * 4 // per_word]}"
    if per_word == 4:
        return component
    return f"({component} & 0xffffu)" if lane % 2 == 0 else f"({component} >> 16u)"


def activation_function(activation: OperatorDesc | None, params: Params) -> str:
    """WGSL `fn activation(v: f32) -> f32`: `activation` (None: the identity) applied to an f32 value, rendered from
    its formula (ops/activations.py's `activation_tree`, as the standalone operator and ADD1's FusedActivation are),
    preceded by the libraries it uses (math.wgsl, math_activations.wgsl). Its parameters (FLOAT32) are appended to
    `params`, so one pipeline serves every parameter value. The shader that calls it must not include math.wgsl
    itself."""
    if activation is None:
        return "fn activation(v: f32) -> f32 { return v; }\n"
    assert isinstance(activation, ActivationOperatorDesc), activation
    f32 = DataType.FLOAT32
    tree = activation_tree(activation, parse("x", {"x": f32}, f32), f32)
    renderer = _Renderer(activation.OPERATOR_TYPE.dml_name, activation_values(activation), params, {"x": "v"})
    result = renderer.render(tree)
    return (f"{_libraries(renderer.uses)}// {activation.OPERATOR_TYPE.dml_name}: {activation.info().formula}\n"
            f"fn activation(v: f32) -> f32 {{\n{''.join(renderer.lines)}    return {result};\n}}\n")


def compile_kernel(context: GpuContext, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> ElementWiseKernel:
    """FLOAT32 computation for FLOAT16 tensors whatever the flags say."""
    assert isinstance(desc, (ElementWiseOperatorDesc, ActivationOperatorDesc, GeneratorOperatorDesc)), desc
    return ElementWiseKernel(context, desc)
