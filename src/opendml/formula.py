"""The element-wise formula language: each element-wise operator's formula is written once, as a small expression,
and rendered for every backend from the typed tree this module builds.

A formula is a Python expression (parsed with `ast`, never evaluated by Python) over the operator's input variables
(`x`; `a`, `b`; `c`, `a`, `b` for IF; `x`, `s`, `z` for the quantizers), its parameters (DML field names: `Min`,
`Max`, `Exponent`, ...), numeric literals and the PRIMITIVES below. `parse` checks it and gives every node a kind:

- F: the compute float: float32 where the tensors are FLOAT32 or FLOAT16 (FLOAT16 is widened exactly and the result
  rounded once on store), float64 where one is FLOAT64;
- I: an integer of a tensor's type (`Node.data_type`), computed exactly and wrapped to the output's width on store
  (so + - * wrap, and -MIN is MIN);
- B: a boolean, stored as 1 or 0.

A literal takes the kind of what it meets. Python's `/`, `%`, `**` and bit operators are not part of the language:
their meaning differs between integers and floats, so formulas name the primitive (`div`, `mod_trunc`, `pow`, ...).

`evaluate` is the NumPy rendering (the small-tensor path, Dask, and the reference for the other renderers): integers
compute in int64 (uint64 for UINT64), floats in the compute float, with transcendental primitives computed in float64
and rounded once (so they are within an ulp); the caller stores the result in the output's type (NumPy's
assignment: floats rounded once, integers wrapped, booleans 1 or 0).
"""

from __future__ import annotations

import ast
import functools
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .types import DataType

F, I, B = "F", "I", "B"  # noqa: E741 (the kinds, as the docs name them)
_ANY = "?"     # an untyped literal, until it meets a typed partner

#: Primitive -> (argument kinds, result kind). "T" is one kind shared by the arguments and the result (F or I),
#: "N" any kind (shared with the other "N"s).
PRIMITIVES: dict[str, tuple[tuple[str, ...], str]] = {
    "div": (("T", "T"), "T"), "mod_trunc": (("T", "T"), "T"), "mod_floor": (("T", "T"), "T"),
    "minimum": (("T", "T"), "T"), "maximum": (("T", "T"), "T"), "abs": (("T",), "T"), "sign": (("T",), "T"),
    "select": ((B, "N", "N"), "N"),
    **{name: ((F,), F) for name in (
        "floor", "ceil", "trunc", "round_even", "round_away", "sqrt", "exp", "log", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "expm1", "log1p", "sigmoid",
        "softplus", "gelu")},
    "atan2": ((F, F), F), "pow": ((F, F), F),
    "isnan": ((F,), B), "isinf": ((F,), B),
    "popcount": ((I,), I), "bit_and": ((I, I), I), "bit_or": ((I, I), I), "bit_xor": ((I, I), I),
    "bit_not": ((I,), I), "shl": ((I, I), I), "shr": ((I, I), I),
    "to_float": (("N",), F), "saturate": ((F,), I), "canonical_nan": ((), F), "ipow": ((I, I), I),
    "widen": ((I,), I),
}
_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_COMPARISONS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class FormulaError(Exception):
    """A formula that is not in the language (a bug in an operator's row, never a user's input)."""


@dataclass(frozen=True)
class Node:
    """A node of a typed formula tree.

    op: "name" (an input variable or parameter: `name`), "const" (`value`), "+", "-", "*", "neg", a comparison
    ("==", "!=", "<", "<=", ">", ">="), "and", "or", "not", or a PRIMITIVES name (a conditional expression is
    "select"). kind: F, I or B. data_type: the compute float (FLOAT32 or FLOAT64) of an F node, the integer type of
    an I node, None for B.
    """

    op: str
    args: tuple[Node, ...] = ()
    kind: str = _ANY
    data_type: DataType | None = None
    name: str = ""
    value: float | int = 0

    def walk(self) -> list[Node]:
        """Every node, children before their parent."""
        nodes: list[Node] = []
        for arg in self.args:
            nodes += arg.walk()
        return [*nodes, self]


def compute_float(data_types: Mapping[str, DataType]) -> DataType:
    """FLOAT64 where any tensor is FLOAT64, else FLOAT32."""
    return DataType.FLOAT64 if DataType.FLOAT64 in data_types.values() else DataType.FLOAT32


@functools.cache
def _syntax(text: str) -> ast.expr:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError as error:
        raise FormulaError(f"formula {text!r}: {error.msg}") from None


def parse(text: str, types: Mapping[str, DataType], output: DataType) -> Node:
    """The typed tree of `text`, whose names have the given data types (inputs: their tensors' types; FLOAT
    parameters: FLOAT32), for an output of type `output`."""
    float_type = compute_float({**types, "": output})
    kinds = {name: (F, float_type) if data_type.is_float else (I, data_type) for name, data_type in types.items()}
    tree = _Builder(text, kinds, float_type, output).build(_syntax(text))
    if tree.kind == _ANY:
        kind, data_type = (F, float_type) if output.is_float else (I, output)
        tree = _settle(tree, kind, data_type)
    return tree


class _Builder:
    def __init__(self, text: str, kinds: Mapping[str, tuple[str, DataType]], float_type: DataType,
                 output: DataType) -> None:
        self.text, self.kinds, self.float_type, self.output = text, kinds, float_type, output

    def fail(self, why: str) -> FormulaError:
        return FormulaError(f"formula {self.text!r}: {why}")

    def build(self, node: ast.expr) -> Node:
        if isinstance(node, ast.Name):
            if node.id not in self.kinds:
                raise self.fail(f"unknown name {node.id!r}")
            kind, data_type = self.kinds[node.id]
            return Node("name", kind=kind, data_type=data_type, name=node.id)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Node("const", value=typing.cast(float, node.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return self.same(_ARITHMETIC[type(node.op)], [self.build(node.left), self.build(node.right)], (F, I))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.same("neg", [self.build(node.operand)], (F, I))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Node("not", (self.boolean(self.build(node.operand)),), B)
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            values = [self.boolean(self.build(value)) for value in node.values]
            return functools.reduce(lambda left, right: Node(op, (left, right), B), values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
            pair = self.unify([self.build(node.left), self.build(node.comparators[0])], (F, I))
            return Node(_COMPARISONS[type(node.ops[0])], tuple(pair), B)
        if isinstance(node, ast.IfExp):
            return self.call("select", [node.test, node.body, node.orelse])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            return self.call(node.func.id, node.args)
        raise self.fail(f"{ast.unparse(node)!r} is not in the formula language")

    def boolean(self, node: Node) -> Node:
        if node.kind != B:
            raise self.fail("a condition must be a comparison or a boolean primitive")
        return node

    def unify(self, nodes: list[Node], allowed: tuple[str, ...]) -> list[Node]:
        typed = [node for node in nodes if node.kind != _ANY]
        if not typed:
            return nodes
        kind, data_type = typed[0].kind, typed[0].data_type
        if kind not in allowed:
            raise self.fail(f"a {kind} value where {'/'.join(allowed)} is needed")
        for node in typed:
            if (node.kind, node.data_type) != (kind, data_type):
                raise self.fail(f"mixes {kind} {data_type} with {node.kind} {node.data_type}")
        return [_settle(node, kind, data_type) if node.kind == _ANY else node for node in nodes]

    def same(self, op: str, args: list[Node], allowed: tuple[str, ...]) -> Node:
        args = self.unify(args, allowed)
        return Node(op, tuple(args), args[0].kind, args[0].data_type) if all(
            arg.kind != _ANY for arg in args) else Node(op, tuple(args))

    def call(self, name: str, raw: list[ast.expr]) -> Node:
        if name not in PRIMITIVES:
            raise self.fail(f"unknown primitive {name!r}")
        wanted, result = PRIMITIVES[name]
        if len(raw) != len(wanted):
            raise self.fail(f"{name} takes {len(wanted)} arguments")
        args = [self.build(arg) for arg in raw]
        if name == "select":
            value_args = self.unify(args[1:], (F, I, B))
            return self.same_as(name, [self.boolean(args[0]), *value_args], value_args)
        if wanted and wanted[0] == "T":
            return self.same(name, args, (F, I))
        if name == "to_float":   # an integer converted (nearest), a float as it is
            arg = _settle(args[0], F, self.float_type) if args[0].kind == _ANY else args[0]
            if arg.kind == B:
                raise self.fail("to_float takes an F or I argument")
            return Node(name, (arg,), F, self.float_type)
        settled = []
        for arg, kind in zip(args, wanted, strict=True):
            if arg.kind == _ANY:
                if kind == I:
                    raise self.fail(f"{name} needs a typed integer argument, not a bare literal")
                arg = _settle(arg, kind, self.float_type)
            elif arg.kind != kind:
                raise self.fail(f"{name} takes {kind} arguments, not {arg.kind}")
            settled.append(arg)
        if name in ("bit_and", "bit_or", "bit_xor") and settled[0].data_type != settled[1].data_type:
            raise self.fail(f"{name} mixes {settled[0].data_type} and {settled[1].data_type}")
        if name == "widen":   # the exact value as an INT64
            return Node(name, tuple(settled), I, DataType.INT64)
        if name == "saturate" and self.output.is_float:
            raise self.fail("saturate needs an integer output")
        data_type = {F: self.float_type, B: None,
                     I: self.output if name == "saturate" else settled[0].data_type if settled else None}[result]
        return Node(name, tuple(settled), result, data_type)

    def same_as(self, name: str, args: list[Node], values: list[Node]) -> Node:
        if values[0].kind == _ANY:
            return Node(name, tuple(args))
        return Node(name, tuple(args), values[0].kind, values[0].data_type)


def _settle(node: Node, kind: str, data_type: DataType | None) -> Node:
    """An untyped node (a literal, or an expression of literals) given its kind."""
    if node.kind != _ANY:
        return node
    if node.op == "const":
        if kind == I and not float(node.value).is_integer():
            raise FormulaError(f"the literal {node.value} is not an integer")
        return replace(node, kind=kind, data_type=data_type)
    args = tuple(_settle(arg, kind, data_type) if arg.kind == _ANY else arg for arg in node.args)
    return replace(node, args=args, kind=kind, data_type=data_type)


#: The coordinate leaves of a generator's formula (ops/generators.py): the output element's row-major linear `index`,
#: and its `row` and `col`, its coordinates along the output's last two dimensions; INT64 names, typed as such by the
#: generator (formula_types). Each reads as a strided view of 0, 1, 2, ... (`coordinate_strides`): a renderer binds
#: it as an INT64 input of those strides over such a sequence, or computes it from the loop's logical index.
COORDINATES = ("index", "row", "col")


def coordinate_strides(name: str, sizes: Sequence[int]) -> tuple[int, ...]:
    """The element strides through which coordinate `name` of an output of `sizes` reads the sequence 0, 1, 2, ...:
    row-major strides for `index`; 1 along the last dimension for `col` (the one before it for `row`), 0 elsewhere
    (a rank-1 output's row is 0)."""
    rank = len(sizes)
    if name == "index":
        strides, step = [0] * rank, 1
        for dim in reversed(range(rank)):
            strides[dim], step = step, step * sizes[dim]
        return tuple(strides)
    axis = rank - 1 if name == "col" else rank - 2
    return tuple(1 if dim == axis else 0 for dim in range(rank))


def coordinate_values(name: str, sizes: Sequence[int], origin: Sequence[int] | None = None,
                      whole: Sequence[int] | None = None) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Coordinate `name` (int64) of every element of a block of `sizes` whose first element is at `origin` in an
    output of sizes `whole` (default: the block is the whole output)."""
    strides = coordinate_strides(name, whole if whole is not None else sizes)
    start = origin if origin is not None else (0,) * len(sizes)
    result = np.zeros(tuple(sizes), np.int64)
    for dim, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        if stride:
            shape = [1] * len(sizes)
            shape[dim] = size
            result = result + (np.arange(size, dtype=np.int64) + start[dim]).reshape(shape) * stride
    return result


def substitute(tree: Node, name: str, value: Node) -> Node:
    """The tree with the variable `name` replaced by `value` (a fused activation applied to a formula's result)."""
    if tree.op == "name" and tree.name == name:
        return value
    return replace(tree, args=tuple(substitute(arg, name, value) for arg in tree.args))


# -- the NumPy rendering -------------------------------------------------------------------------------------------

def numpy_dtype(node: Node) -> np.dtype[Any]:
    """The NumPy dtype `evaluate` computes a node in."""
    if node.kind == B:
        return np.dtype(np.bool_)
    if node.kind == F:
        return np.dtype(np.float64 if node.data_type == DataType.FLOAT64 else np.float32)
    return np.dtype(np.uint64 if node.data_type == DataType.UINT64 else np.int64)


def load(array: np.ndarray[Any, Any], node_kind: str, data_type: DataType, float_type: DataType
         ) -> np.ndarray[Any, Any]:
    """A tensor's values in the dtype `evaluate` computes them in (FLOAT16 widened exactly; the array itself where it
    has that dtype already)."""
    if node_kind == F:
        return array.astype(np.float64 if float_type == DataType.FLOAT64 else np.float32, copy=False)
    return array.astype(np.uint64 if data_type == DataType.UINT64 else np.int64, copy=False)


_CANONICAL_NAN32 = np.array(0x7FC00000, dtype=np.uint32).view(np.float32)
_CANONICAL_NAN64 = np.array(0x7FF8000000000000, dtype=np.uint64).view(np.float64)


def _nan_of(dtype: np.dtype[Any]) -> Any:
    return _CANONICAL_NAN64 if dtype == np.float64 else _CANONICAL_NAN32


def _width(node: Node) -> int:
    assert node.data_type is not None
    return node.data_type.bits


def _int_div(a: Any, b: Any) -> Any:
    """Truncating division; b == 0 gives 0 and MIN / -1 wraps (NumPy's floor division, then corrected)."""
    zero = b == 0
    safe = np.where(zero, 1, b)
    if a.dtype == np.uint64 or np.asarray(b).dtype == np.uint64:
        return np.where(zero, 0, a // safe)
    minus_one = safe == -1
    safe = np.where(minus_one, 1, safe)
    quotient = a // safe
    remainder = a - quotient * safe
    quotient = quotient + ((remainder != 0) & ((a < 0) != (safe < 0)))
    return np.where(zero, 0, np.where(minus_one, -a, quotient))


def _int_mod_trunc(a: Any, b: Any) -> Any:
    return np.where(b == 0, 0, a - _int_div(a, b) * b)


def _int_mod_floor(a: Any, b: Any) -> Any:
    remainder = _int_mod_trunc(a, b)
    if a.dtype == np.uint64:
        return remainder
    return np.where((remainder != 0) & ((remainder < 0) != (b < 0)), remainder + b, remainder)


def _float_mod_floor(a: Any, b: Any) -> Any:
    """Python's %: fmod, plus b where the signs differ; a zero remainder takes b's sign."""
    remainder = np.fmod(a, b)
    remainder = np.where((remainder != 0) & ((remainder < 0) != (b < 0)), remainder + b, remainder)
    return np.where(remainder == 0, np.copysign(np.zeros_like(remainder), b), remainder)


def _extreme(pick: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    def function(a: Any, b: Any) -> Any:
        result = pick(a, b)
        if result.dtype.kind == "f":
            result = np.where(np.isnan(a) | np.isnan(b), _nan_of(result.dtype), result)
        return result
    return function


def _sign(x: Any) -> Any:
    return np.sign(x) if x.dtype.kind != "f" else np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype)


def _round_away(x: Any) -> Any:
    return np.where(np.isfinite(x), np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x), x) \
        if x.dtype == np.float64 else np.copysign(np.floor(np.abs(x.astype(np.float64)) + 0.5), x).astype(x.dtype)


def _wide(function: Callable[..., Any]) -> Callable[..., Any]:
    """A float function computed in float64 and rounded once to the argument's dtype. A function of one argument
    gives a NaN argument back as it is (sign and payload), as the numba and WGSL renderings do."""
    def wide(*args: Any) -> Any:
        dtype = args[0].dtype
        result = function(*(np.asarray(arg, dtype=np.float64) for arg in args)).astype(dtype)
        if len(args) == 1:
            result = np.where(np.isnan(args[0]), args[0], result)
        return result
    return wide


def _mask(node: Node) -> int:
    return (1 << _width(node)) - 1


def _popcount(value: Any, node: Node) -> Any:
    bits = (value.astype(np.uint64) if value.dtype != np.uint64 else value) & np.uint64(_mask(node))
    return np.bitwise_count(bits).astype(value.dtype)


def _shift(value: Any, count: Any, node: Node, left: bool) -> Any:
    width = _width(node)
    valid = (count >= 0) & (count < width)
    safe = np.where(valid, count, 0).astype(value.dtype)
    shifted = np.left_shift(value, safe) if left else np.right_shift(value, safe)
    return np.where(valid, shifted, 0).astype(value.dtype)


def _ipow(base: Any, exponent: Any) -> Any:
    """base ** exponent exactly (wrapping, as repeated multiplication in 64 bits); a negative exponent gives
    1 / base ** -exponent truncated: 1 for base 1, +-1 for base -1, 0 otherwise (and 0 for base 0)."""
    base, exponent = np.broadcast_arrays(np.asarray(base), np.asarray(exponent))
    result = np.ones(base.shape, dtype=base.dtype)
    power = base.copy()
    count = np.where(exponent > 0, exponent, 0).astype(np.uint64)
    for _ in range(64):
        if not count.any():
            break
        result = np.where(count & np.uint64(1), result * power, result)
        power = power * power
        count = count >> np.uint64(1)
    negative = exponent < 0
    if negative.any():
        odd = (np.abs(exponent.astype(np.int64)) % 2).astype(bool)
        inverse = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0)).astype(base.dtype) \
            if base.dtype != np.uint64 else np.where(base == 1, 1, 0).astype(base.dtype)
        result = np.where(negative, inverse, result)
    return result


def _saturate(value: Any, output: DataType) -> Any:
    """An integral float clamped to the output type's range (NaN 0); a float at or beyond 2^63 (2^64) is the
    64-bit maximum, not float64's rounding of it."""
    info = np.iinfo(output.numpy_dtype)
    wide = np.nan_to_num(value.astype(np.float64), nan=0.0)
    dtype = np.uint64 if output == DataType.UINT64 else np.int64
    top = float(info.max) + 1.0   # 2^bits or 2^(bits - 1): exact in float64
    inside = np.clip(wide, float(info.min), np.nextafter(top, 0.0) if info.bits == 64 else float(info.max))
    return np.where(wide >= top, np.asarray(info.max, dtype=dtype), inside.astype(dtype))


def _pow(x: Any, y: Any) -> Any:
    """C's pow in float64 over whole arrays: NumPy's shortcut for a scalar exponent of 0.5 (its sqrt) gives
    pow(-0, 0.5) = -0 and pow(-inf, 0.5) = NaN, where C gives +0 and +inf."""
    base, exponent = np.broadcast_arrays(x, y)
    return np.power(base, np.array(exponent))


_ERF = np.vectorize(math.erf, otypes=[np.float64])
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])

_FLOAT_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round_even": np.rint, "round_away": _round_away,
    "sqrt": _wide(np.sqrt), "exp": _wide(np.exp), "log": _wide(np.log), "sin": _wide(np.sin), "cos": _wide(np.cos),
    "tan": _wide(np.tan), "asin": _wide(np.arcsin), "acos": _wide(np.arccos), "atan": _wide(np.arctan),
    "sinh": _wide(np.sinh), "cosh": _wide(np.cosh), "tanh": _wide(np.tanh), "asinh": _wide(np.arcsinh),
    "acosh": _wide(np.arccosh), "atanh": _wide(np.arctanh), "atan2": _wide(np.arctan2), "pow": _wide(_pow),
    "erf": _wide(_ERF),
    "isnan": np.isnan, "isinf": np.isinf, "expm1": _wide(np.expm1), "log1p": _wide(np.log1p),
    "sigmoid": _wide(lambda x: np.exp(-np.logaddexp(0.0, -x))), "softplus": _wide(lambda x: np.logaddexp(0.0, x)),
    "gelu": _wide(lambda x: np.where(x == -np.inf, -0.0, 0.5 * x * _ERFC(-x / math.sqrt(2.0)))),
}


def evaluate(tree: Node, env: Mapping[str, Any], output: DataType) -> Any:
    """The formula over NumPy arrays (or scalars) in `env` (each already in `numpy_dtype`: see `load`); the
    result broadcasts the arrays' shapes. `output` is the output's type (saturate's range)."""
    function = numpy_function(tree, output)
    with np.errstate(all="ignore"):
        return function(env)


def numpy_function(tree: Node, output: DataType) -> Callable[[Mapping[str, Any]], Any]:
    """The NumPy rendering of `tree` as a function of `env` (call it under np.errstate(all="ignore")): the tree is
    walked once, here, into nested closures, so that a small tensor's dispatch pays for NumPy's calls only."""
    dtype = numpy_dtype(tree)
    op = tree.op
    if op == "name":
        name = tree.name

        def variable(env: Mapping[str, Any]) -> Any:
            value = env[name]
            return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)
        return variable
    if op in ("const", "canonical_nan"):
        constant = np.asarray(_nan_of(dtype) if op == "canonical_nan" else tree.value, dtype=dtype)
        return lambda env: constant
    arguments = [numpy_function(arg, output) for arg in tree.args]
    if op == "saturate":
        return lambda env: _saturate(arguments[0](env), output)
    if op in ("to_float", "widen"):
        return lambda env: arguments[0](env).astype(dtype)
    operation = _operation(tree, op)
    if len(arguments) == 1:
        (first,) = arguments
        return lambda env: np.asarray(operation(first(env))).astype(dtype, copy=False)
    if len(arguments) == 2:
        left, right = arguments
        return lambda env: np.asarray(operation(left(env), right(env))).astype(dtype, copy=False)
    return lambda env: np.asarray(operation(*(argument(env) for argument in arguments))).astype(dtype, copy=False)


_SIMPLE: dict[str, Callable[..., Any]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "neg": np.negative, "==": np.equal, "!=": np.not_equal,
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "and": np.logical_and,
    "or": np.logical_or, "not": np.logical_not, "select": np.where, "abs": np.abs,
    "minimum": _extreme(np.minimum), "maximum": _extreme(np.maximum), "sign": _sign,
    "bit_and": np.bitwise_and, "bit_or": np.bitwise_or, "bit_xor": np.bitwise_xor, "bit_not": np.invert,
}


def _operation(node: Node, op: str) -> Callable[..., Any]:
    """The NumPy function of one node's operation (integer or float semantics by its arguments' kind)."""
    integer = bool(node.args) and node.args[-1].kind == I
    if op in _SIMPLE:
        return _SIMPLE[op]
    if op == "div":
        return _int_div if integer else np.divide
    if op == "mod_trunc":
        return _int_mod_trunc if integer else np.fmod
    if op == "mod_floor":
        return _int_mod_floor if integer else _float_mod_floor
    if op == "ipow":
        return _ipow
    if op == "popcount":
        return lambda value: _popcount(value, node.args[0])
    if op in ("shl", "shr"):
        return lambda value, count: _shift(value, count, node.args[0], op == "shl")
    return _FLOAT_FUNCTIONS[op]
