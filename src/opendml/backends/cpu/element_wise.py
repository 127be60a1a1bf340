"""The element-wise operators on the cpu backend: each descriptor's formula tree (formula.py) rendered to the source
of a numba kernel, over the math library of math.py (`m_<primitive>`).

The rendering follows formula.py's NumPy one (`evaluate`, the semantics): floats compute in the compute float
(float32 for FLOAT32 and FLOAT16 tensors, FLOAT16 widened exactly, the result rounded once on store; float64 for
FLOAT64), integers in int64 (uint64 for UINT64) wrapped to the output's width on store, booleans stored as 1 or 0;
ScaleBias applies to the scaled inputs first, in the compute float. The kernels have no fastmath: the formulas'
arithmetic rounds as NumPy's does (math.py's polynomials keep their own fused multiply-adds).

One generated module per formula source (the formula with its data types and which parameters it reads: parameter
values, sizes and strides are run-time arguments), written into a cache directory beside numba's and imported from
there, so that numba's on-disk cache serves it in later processes (and to the cold start's background compiler,
background.py, which compiles the same file).

The plan (compile time, descriptor only), as the activations' standalone kernel: size-1 dimensions dropped and
neighbours contiguous in every tensor merged (plans.merge_dimensions); the run is the dimension with the smallest
output stride, walked in blocks of at most _BLOCK elements; the largest other dimension is a loop dimension and the
rest an offset table. Per block, an input with a unit stride in the run is read where it lies, any other (zero
strides: broadcast; transposed; padded) is first gathered into a contiguous block; the formula loop then reads and
writes contiguous memory, so that LLVM vectorizes it, straight into the output where its run is contiguous, else
into a staging block scattered through the output's strides. Each element is read before its output element is
written, so an input may alias the output exactly (in place). Large tensors share their blocks among numba's
threads.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core import imputils
from numba.extending import overload

from ...formula import COORDINATES, B, F, I, Node, compute_float, coordinate_strides, parse
from ...ops.activations import ACTIVATION_CLASSES, activation_tree, activation_values
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import FlatArray, Kernel
from ..plans import merge_dimensions
from .background import marker_directory
from .float16 import float_to_half, half_to_float, is_f16
from .memory_kernels import HAVE_STREAMING_STORES, PARALLEL_LAUNCH, STREAMING_THRESHOLD_BYTES

#: Most elements per block of the run: the gathered inputs and the staged output of a block stay in L1.
_BLOCK = 2048
#: Below this many elements a dispatch runs on one thread.
_PARALLEL_MIN_ELEMENTS = 1 << 16
#: Blocks per thread that a parallel dispatch cuts its work into.
_CHUNKS_PER_THREAD = 4

_types: Any = numba.types
_intrinsic: Any = numba.extending.intrinsic
_impl_ret_borrowed: Any = imputils.impl_ret_borrowed


def _writable_typer(typingctx: Any, array: Any) -> Any:
    """The same array typed as writable: the kernels only read their inputs, and a read-only input's blocks then
    share one type with the gathered (writable) ones."""
    if not isinstance(array, _types.Array):
        return None
    result = array.copy(readonly=False)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return _impl_ret_borrowed(context, builder, result, args[0])

    return result(array), codegen


writable: Any = _intrinsic(_writable_typer)


def load_element(x: Any, i: Any, tag: Any) -> Any:
    """Element i of x as float32 (FLOAT16 bits, with the FLOAT16 tag, decoded exactly). Numba's body: below."""
    raise NotImplementedError


def store_element(y: Any, i: Any, v: Any, tag: Any) -> None:
    """Stores the float32 v at i (as FLOAT16 bits, rounded once, with the FLOAT16 tag). Numba's body: below."""
    raise NotImplementedError


@overload(load_element, inline="always")
def _load_element_impl(x: Any, i: Any, tag: Any) -> Any:
    if is_f16(x, tag):

        def load_f16(x: Any, i: Any, tag: Any) -> Any:
            return half_to_float(x[np.uint64(i)])

        return load_f16

    def load(x: Any, i: Any, tag: Any) -> Any:
        return x[np.uint64(i)]  # an unsigned index spares numba's negative-index wraparound

    return load


@overload(store_element, inline="always")
def _store_element_impl(y: Any, i: Any, v: Any, tag: Any) -> Any:
    if is_f16(y, tag):

        def store_f16(y: Any, i: Any, v: Any, tag: Any) -> None:
            y[np.uint64(i)] = float_to_half(v)

        return store_f16

    def store(y: Any, i: Any, v: Any, tag: Any) -> None:
        y[np.uint64(i)] = v

    return store


@numba.njit(inline="always", error_model="numpy")
def f32_round_to_odd(v: Any) -> Any:
    """A float64 narrowed to float32 rounding to odd (inexact: the odd one of the two neighbours), so that float_to_half
    of it rounds the float64 once to FLOAT16 (CAST FLOAT64 -> FLOAT16; float32 carries 13 more bits than FLOAT16)."""
    f = np.float32(v)
    if np.float64(f) != v and f == f and abs(f) != np.inf and int(math.frexp(f)[0] * 16777216.0) % 2 == 0:
        f = np.nextafter(f, np.float32(np.inf) if np.float64(f) < v else np.float32(-np.inf))
    return f


def _numpy_name(data_type: DataType) -> str:
    return f"np.{np.dtype(data_type.numpy_dtype).name}"


def _compute_name(node: Node) -> str:
    """The NumPy scalar type numba computes a node in (formula.numpy_dtype)."""
    if node.kind == F:
        return "np.float64" if node.data_type == DataType.FLOAT64 else "np.float32"
    if node.kind == I:
        return "np.uint64" if node.data_type == DataType.UINT64 else "np.int64"
    return "np.bool_"


_OPERATORS = {"+": "+", "-": "-", "*": "*", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
              "and": "&", "or": "|"}
#: Primitives rendered as the math library's function of the same arguments.
_DIRECT = {"div", "mod_trunc", "mod_floor", "minimum", "maximum", "abs", "sign", "floor", "ceil", "trunc",
           "round_even", "round_away", "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
           "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "expm1", "log1p", "sigmoid", "softplus", "gelu", "atan2",
           "pow", "isnan", "isinf", "bit_and", "bit_or", "bit_xor", "bit_not", "ipow", "select"}


class _Renderer:
    """A formula tree as a numba expression; constants become typed module globals."""

    def __init__(self, variables: dict[str, str], output: DataType, narrow: str | None = None) -> None:
        self.variables, self.output, self.narrow = variables, output, narrow
        self.constants: list[str] = []
        self.parameters: dict[str, str] = {}   # formula name -> its argument's NumPy type

    def constant(self, type_name: str, value: Any) -> str:
        line = f"{type_name}({value!r})"
        if line not in self.constants:
            self.constants.append(line)
        return f"_K{self.constants.index(line)}"

    def render(self, node: Node) -> str:
        op, args = node.op, [self.render(arg) for arg in node.args]
        if op == "name":
            if node.name in self.variables:
                return f"v_{node.name}"
            self.parameters[node.name] = _compute_name(node)
            return f"{self.narrow}(p_{node.name})" if self.narrow else f"p_{node.name}"
        if op == "const":
            value = float(node.value) if node.kind == F else int(node.value)
            return self.constant(self.narrow or _compute_name(node), value)
        if op in _OPERATORS:
            return f"({args[0]} {_OPERATORS[op]} {args[1]})"
        if op == "not":
            return f"(not {args[0]})"
        if op == "neg":
            if node.data_type == DataType.UINT64:
                return f"({self.constant('np.uint64', 0)} - {args[0]})"
            return f"(-{args[0]})"
        if op in _DIRECT:
            return f"m.m_{op}({', '.join(args)})"
        if op == "canonical_nan":
            return f"m.m_canonical_nan({self.constant(_compute_name(node), 0.0)})"
        if op == "to_float":
            return args[0] if node.args[0].kind == F else f"{_compute_name(node)}({args[0]})"
        if op == "widen":
            return f"np.int64({args[0]})"
        if op == "saturate":
            like = self.constant(_numpy_name(self.output), 0)
            return f"{_compute_name(node)}(m.m_saturate({args[0]}, {like}))"
        source = node.args[0]
        assert source.data_type is not None
        if op == "popcount":  # the bits of the value in its own type
            return f"{_compute_name(node)}(m.m_popcount({_numpy_name(source.data_type)}({args[0]})))"
        if op in ("shl", "shr"):  # counts beyond the tensor type's width give 0 (the value is computed in 64 bits)
            count_type = _compute_name(node.args[1])
            valid = f"(({args[1]} >= {self.constant(count_type, 0)}) & " \
                    f"({args[1]} < {self.constant(count_type, source.data_type.bits)}))"
            return f"m.m_select({valid}, m.m_{op}({args[0]}, {args[1]}), {self.constant(_compute_name(node), 0)})"
        raise NotImplementedError(f"the cpu element-wise renderer has no rendering of {op!r}")


#: Integer primitives whose result is one of their arguments: a tree of only these over values of one type is exact
#: in that type.
_CLOSED = {"name", "const", "minimum", "maximum"}


def _narrow_type(tree: Node, output: DataType) -> str | None:
    """The NumPy type to compute an integer formula in where it is exact there: every node a name, a literal of the
    output's range, or a minimum/maximum, all of the output's 8-, 16- or 32-bit type (CLIP1). The loop then works
    on vectors of the tensor's own width, not int64's."""
    if np.dtype(output.numpy_dtype).kind not in "iu" or output.bits > 32:
        return None
    info = np.iinfo(output.numpy_dtype)
    for node in tree.walk():
        if node.kind != I or node.op not in _CLOSED or node.data_type != output:
            return None
        if node.op == "const" and not info.min <= int(node.value) <= info.max:
            return None
    return _numpy_name(output)


def _load(view: DataType, node_kind: str, float_type: DataType) -> str:
    """The expression that loads element `{}` of a block of a tensor viewed as `view`, in its computing type."""
    if node_kind == F:
        wide = "np.float64" if float_type == DataType.FLOAT64 else "np.float32"
        if view == DataType.FLOAT16:
            return f"{wide}(half_to_float({{}}))"
        return f"{wide}({{}})"
    return "np.uint64({})" if view == DataType.UINT64 else "np.int64({})"


def _store(result_kind: str, output: DataType, result_type: DataType | None = None) -> str:
    """The expression that turns the formula's result `r` into the output's raw element."""
    value = "(1 if r else 0)" if result_kind == B else "r"
    if output == DataType.FLOAT16 and result_kind == F and result_type == DataType.FLOAT64:
        return f"float_to_half(f32_round_to_odd({value}))"   # rounded once (CAST FLOAT64 -> FLOAT16)
    if output == DataType.FLOAT16:
        return f"float_to_half(np.float32({value}))"
    return f"{_numpy_name(output)}({value})"


_TEMPLATE = """\"\"\"Generated by opendml/backends/cpu/element_wise.py: {summary}\"\"\"
# {stamp}
import numba
import numpy as np

from opendml.backends.cpu import math as m
from opendml.backends.cpu.element_wise import f32_round_to_odd, writable
from opendml.backends.cpu.float16 import float_to_half, half_to_float
from opendml.backends.cpu.memory_kernels import fence, prefer_wide_vectors, stream_copy

{constants}


@numba.njit(inline="always", error_model="numpy")
def compute({compute_parameters}):
    for i in range(n):
{loads}
        r = {expression}
        o[i] = {store}


@numba.njit(cache=True, error_model="numpy")
def run_blocks({run_parameters}):
    prefer_wide_vectors()
    table, k_len, run, pieces, rows = meta[0], meta[1], meta[2], meta[3], meta[7]
    groups = (k_len + rows - 1) // rows
    block = (run + pieces - 1) // pieces
    staged = np.empty(block, out.dtype)
    stream = meta[meta.size - 1] != 0
    out_address, staged_address, item = out.ctypes.data, staged.ctypes.data, out.itemsize
{allocate}
    for unit in range(first, last):
        r = unit // pieces
        start = (unit - r * pieces) * block
        n = min(block, run - start)
        t = r // groups
        k0 = (r - t * groups) * rows
        count = min(rows, k_len - k0)
{gather}
        for row in range(count):
{select}
            base = tab[t] + (k0 + row) * meta[4] + start * meta[5]
            o = out[base:base + n] if meta[5] == 1 and not stream else staged[:n]
            compute({compute_arguments})
            if stream:
                stream_copy(out_address + base * item, staged_address, n * item)
            elif meta[5] != 1:
                for q in range(n):
                    out[base + q * meta[5]] = staged[q]
    if stream:
        fence()  # this thread's non-temporal stores are visible before it returns


@numba.njit(cache=True, parallel=True, error_model="numpy")
def parallel({kernel_parameters}):
    units = meta[0] * ((meta[1] + meta[7] - 1) // meta[7]) * meta[3]
    chunks = meta[6]
    for chunk in numba.prange(chunks):
        run_blocks({parallel_arguments})
"""

# A strided input's tile (`count` rows of the loop dimension, `n` elements of the run) is gathered row by row
# along the loop dimension: a transposed input is then read in its own contiguous order. (Indices are unsigned:
# they are never negative, and numba then skips its wraparound of negative ones.)
_GATHER = """        base{j} = tab[{table} + t] + k0 * meta[{kx}] + start * meta[{lx}]
        if meta[{lx}] != 1 and count == 1:
            for q in range(n):
                g{j}[q] = x{j}[np.uint64(base{j} + q * meta[{lx}])]
        elif meta[{lx}] != 1:
            for q in range(n):
                at = base{j} + q * meta[{lx}]
                for row in range(count):
                    g{j}[row * block + q] = x{j}[np.uint64(at + row * meta[{kx}])]"""
# A generator's coordinate (formula.COORDINATES) is the offset its strides give in the sequence 0, 1, 2, ...: the
# block's element i is c + i * d, worked out instead of read.
_COMPUTED = """            c{j} = tab[{table} + t] + (k0 + row) * meta[{kx}] + start * meta[{lx}]
            d{j} = meta[{lx}]"""
_SELECT = """            if meta[{lx}] == 1:
                a{j} = x{j}[base{j} + row * meta[{kx}]:base{j} + row * meta[{kx}] + n]
            else:
                a{j} = g{j}[row * block:row * block + n]"""

#: meta's layout: table size, loop length, run length, pieces, the output's loop and run strides, chunks, rows per
#: tile, then each input's loop and run strides, and last whether the output streams (non-temporal stores of each
#: block computed into the staging block: a large output's lines are then not read before they are written).
_META_FIXED = 8
#: Rows of the loop dimension per tile where an input's run is strided (a transposed input reads 16 consecutive
#: elements of each line it touches); the tile's run is then _BLOCK / _ROWS elements.
_ROWS = 16


_HERE = Path(__file__).resolve().parent
#: The sources the generated modules compile from, as numba stamps them (modification time and size): numba's cache
#: of a generated module knows only the module's own file, so a changed math library must change its name
#: (activations.py holds the tuned functions of math.py's m_sigmoid, m_tanh and m_gelu).
_STAMP = repr(sorted((name, (_HERE / name).stat().st_mtime_ns, (_HERE / name).stat().st_size)
                     for name in ("math.py", "float16.py", "element_wise.py", "activations.py")))


#: The parameter names of ScaleBias's values (not formula names: those are DML field names).
_SCALE, _BIAS = "_scale", "_bias"


def render(desc: Any) -> tuple[str, list[str], list[str]]:
    """The generated module's source for `desc`, its input fields in argument order, and the formula's parameter
    names in argument order."""
    tree = desc.formula_tree()
    tensors = desc.present_tensors()
    view_types = {name: desc.view_type(name) for name in tensors}
    float_type = compute_float(view_types)
    output = view_types["OutputTensor"]
    fields = [name for name, _ in desc.INFO.inputs if name in tensors]
    variables = {variable: name for name, variable in desc.INFO.inputs if name in tensors}
    # a generator's coordinate leaves: INT64 values of their own, through formula.coordinate_strides (computed)
    coordinates = sorted({node.name for node in tree.walk() if node.op == "name" and node.name in COORDINATES})
    fields += coordinates
    variables.update({name: name for name in coordinates})
    view_types.update(dict.fromkeys(coordinates, DataType.INT64))
    narrow = _narrow_type(tree, output)
    renderer = _Renderer(variables, output, narrow)
    expression = renderer.render(tree)
    scaled, scale_bias = desc.scaled_inputs(), desc.scale_bias_value()
    kinds = {node.name: node.kind for node in tree.walk() if node.op == "name"}
    loads = []
    for variable, name in variables.items():
        if variable not in kinds:
            continue
        j = fields.index(name)
        load = f"{narrow}({{}})" if narrow else _load(view_types[name], kinds[variable], float_type)
        value = load.format(f"c{j} + i * d{j}" if name in coordinates else f"a{j}[i]")
        if name in scaled and scale_bias is not None:  # its values are run-time arguments, as parameters are
            wide = "np.float64" if float_type == DataType.FLOAT64 else "np.float32"
            renderer.parameters.update({_SCALE: wide, _BIAS: wide})
            value = f"{value} * p_{_SCALE} + p_{_BIAS}"
        loads.append(f"        v_{variable} = {value}")
    parameters = [f"p_{name}" for name in sorted(renderer.parameters)]
    count = len(fields)
    read = [j for j in range(count) if fields[j] not in coordinates]   # the tensors; coordinates are computed
    computed = [j for j in range(count) if fields[j] in coordinates]
    blocks = [f"a{j}" for j in read] + [name for j in computed for name in (f"c{j}", f"d{j}")]
    inputs = [f"i{j}" for j in read]
    kernel_parameters = ["out", *inputs, "meta", "tab", *parameters]
    summary = f"{desc.OPERATOR_TYPE.name}, {', '.join(f'{n} {t.name}' for n, t in view_types.items())}"
    source = _TEMPLATE.format(
        summary=summary, stamp=_STAMP,
        constants="\n".join(f"_K{n} = {line}" for n, line in enumerate(renderer.constants)),
        compute_parameters=", ".join(["n", "o", *blocks, *parameters]),
        loads="\n".join(loads) or "        pass", expression=expression,
        store=_store(tree.kind, output, tree.data_type),
        run_parameters=", ".join(["first", "last", *kernel_parameters]),
        allocate="\n".join([f"    x{j} = writable(i{j})" for j in read] +
                           [f"    g{j} = np.empty(rows * block, x{j}.dtype)" for j in read]),
        gather="\n".join(_GATHER.format(j=j, table=f"{j + 1} * table", kx=_META_FIXED + 2 * j,
                                        lx=_META_FIXED + 2 * j + 1) for j in read) or "        pass",
        select="\n".join([_SELECT.format(j=j, kx=_META_FIXED + 2 * j, lx=_META_FIXED + 2 * j + 1) for j in read] +
                         [_COMPUTED.format(j=j, table=f"{j + 1} * table", kx=_META_FIXED + 2 * j,
                                           lx=_META_FIXED + 2 * j + 1) for j in computed]) or "            pass",
        compute_arguments=", ".join(["n", "o", *blocks, *parameters]),
        kernel_parameters=", ".join(kernel_parameters),
        parallel_arguments=", ".join(["chunk * units // chunks", "(chunk + 1) * units // chunks",
                                      *kernel_parameters]))
    return source, fields, [name.removeprefix("p_") for name in parameters]


_ACTIVATION_TEMPLATE = """\"\"\"Generated by opendml/backends/cpu/element_wise.py: the activations' FLOAT32
formulas (ops/activations.py's ACTIVATION_FORMULAS), one loop per activation, for kernels that apply a fused one.\"\"\"
# {stamp}
import numba
import numpy as np

from opendml.backends.cpu import math as m
from opendml.backends.cpu.element_wise import load_element, store_element

{constants}


@numba.njit(fastmath=False, cache=True, error_model="numpy")
def activate_store(code, p1, p2, p3, tmp, lo, hi, out, shift, tag):
    \"\"\"out[shift + i] = activation(tmp[i]) for lo <= i < hi, in FLOAT32 (FLOAT16 bits with the FLOAT16 tag);
    code is the activation's DML_OPERATOR_TYPE, p1, p2, p3 its formula's values in activation_values' order.
    fastmath=False stated: numba would otherwise compile it with the fastmath flags of the kernel that first calls
    it (a caller's flags are inherited where a callee sets none), which would contract its arithmetic.\"\"\"
{branches}
"""
_ACTIVATION_BRANCH = """    {keyword} code == {code}:  # {name}
{bind}        for i in range(lo, hi):
            v_x = load_element(tmp, i, tag)
            r = {expression}
            store_element(out, shift + i, r, tag)"""


def render_activations() -> str:
    """The source of the module of `activate_store(code, p1, p2, p3, tmp, lo, hi, out, shift, tag)`: every
    activation's formula (its FLOAT32 tree, as the standalone operator's) rendered as the kernels render it."""
    renderer = _Renderer({"x": "InputTensor"}, DataType.FLOAT32)
    branches: list[str] = []
    for operator_type, cls in ACTIVATION_CLASSES.items():
        defaults: dict[str, Any] = dict.fromkeys(cls.parameter_names(), 1.0)
        activation = cls(**defaults)  # the values are run-time arguments: any will do
        tree = activation_tree(activation, parse("x", {"x": DataType.FLOAT32}, DataType.FLOAT32), DataType.FLOAT32)
        expression = renderer.render(tree)
        names = list(activation_values(activation))
        assert len(names) <= 3
        bind = "".join(f"        p_{name} = p{j + 1}\n" for j, name in enumerate(names))
        branches.append(_ACTIVATION_BRANCH.format(keyword="elif" if branches else "if", code=int(operator_type),
                                                  name=operator_type.name, bind=bind, expression=expression))
    return _ACTIVATION_TEMPLATE.format(
        stamp=_STAMP, constants="\n".join(f"_K{n} = {line}" for n, line in enumerate(renderer.constants)),
        branches="\n".join(branches))


def activation_module() -> Any:
    """The generated module of render_activations() (its name holds the math library's stamp, as every generated
    module's does)."""
    return _module(render_activations())


def source_directory() -> Path:
    """Where the generated modules live: beside numba's cache and the cold start's markers (background.py)."""
    return marker_directory().parent / "opendml-element-wise"


def _module(source: str) -> Any:
    """The generated module of `source`, written once into source_directory() (atomically: several processes may
    write the same file) and imported from there."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    name = f"opendml_element_wise_{digest}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    directory = source_directory()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        temporary = directory / f".{name}.{os.getpid()}.tmp"
        temporary.write_text(source)
        os.replace(temporary, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _scalar_type(node: Node) -> Any:
    """The NumPy scalar type of a formula name's run-time argument (formula.numpy_dtype)."""
    if node.kind == F:
        return np.float64 if node.data_type == DataType.FLOAT64 else np.float32
    return np.uint64 if node.data_type == DataType.UINT64 else np.int64


def _offsets(dims: Sequence[tuple[int, Sequence[int]]], which: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Row-major table of sum(index_d * stride_d) over `dims` for tensor `which`."""
    table = np.zeros(1, np.int64)
    for size, strides in dims:
        table = (table[:, None] + np.arange(size, dtype=np.int64) * strides[which]).ravel()
    return table


#: Primitives whose arithmetic, not memory, sets a loop's speed: their outputs are written with plain stores
#: (measured on [4096, 4096] FLOAT32, 2 threads: EXP 11.0 ms streamed through the staging block, 5.2 ms plain;
#: IDENTITY 3.5 ms streamed, 4.1 ms plain).
_ARITHMETIC_BOUND = frozenset({
    "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "pow", "expm1", "log1p", "sigmoid", "softplus", "gelu", "sqrt", "ipow"})


def compile_kernel(desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel:
    """All descriptor work happens here (rendering, the plan); the kernel only binds views and runs."""
    operator: Any = desc
    source, fields, parameter_names = render(operator)
    module = _module(source)
    tensors = operator.present_tensors()
    order = ["OutputTensor", *fields]
    target = tensors["OutputTensor"]
    sizes, strides = merge_dimensions(target.sizes, *[coordinate_strides(name, target.sizes) if name in COORDINATES
                                                      else tensors[name].element_strides for name in order])
    dims = [(size, [s[d] for s in strides]) for d, size in enumerate(sizes)]
    run = dims.pop(min(range(len(dims)), key=lambda d: (dims[d][1][0], d)))
    loop = dims.pop(max(range(len(dims)), key=lambda d: dims[d][0])) if dims else (1, [0] * len(order))
    tables = [_offsets(dims, which) for which in range(len(order))]
    rows = _ROWS if loop[0] > 1 and any(stride not in (0, 1) for stride in run[1][1:]) else 1
    pieces = -(-run[0] // (_BLOCK // rows))
    units = tables[0].size * -(-loop[0] // rows) * pieces
    parallel = units > 1 and target.element_count >= _PARALLEL_MIN_ELEMENTS
    chunks = min(units, _CHUNKS_PER_THREAD * numba.get_num_threads()) if parallel else 1
    nodes = operator.formula_tree().walk()
    memory_bound = not any(node.op in _ARITHMETIC_BOUND for node in nodes)
    stream = HAVE_STREAMING_STORES and memory_bound and run[1][0] == 1 and \
        target.element_count * target.data_type.bits // 8 >= STREAMING_THRESHOLD_BYTES
    meta = np.array([tables[0].size, loop[0], run[0], pieces, loop[1][0], run[1][0], chunks, rows] +
                    [value for j in range(1, len(order)) for value in (loop[1][j], run[1][j])] +
                    [int(stream)], np.int64)
    tab = np.concatenate(tables)
    values: dict[str, Any] = dict(operator.formula_parameters())
    tree_types = {node.name: _scalar_type(node) for node in nodes if node.op == "name"}
    scale_bias = operator.scale_bias_value()
    if scale_bias is not None:
        float_type = np.float64 if compute_float({name: operator.view_type(name) for name in tensors}) == \
            DataType.FLOAT64 else np.float32
        values.update({_SCALE: scale_bias.scale, _BIAS: scale_bias.bias})
        tree_types.update({_SCALE: float_type, _BIAS: float_type})
    arguments = [tree_types[name](values[name]) for name in parameter_names]
    views = [np.dtype(np.int64 if name in COORDINATES else operator.view_type(name).numpy_dtype) for name in order]
    views = [np.dtype(np.uint16) if view == np.float16 else view for view in views]
    slots = [name for name, _ in operator.INFO.inputs]
    positions = [slots.index(name) for name in fields if name not in COORDINATES]
    run_blocks, parallel_blocks = module.run_blocks, module.parallel

    def kernel(inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        flats = [outputs[0].view(views[0])]
        flats += [inputs[position].view(views[j + 1]) for j, position in enumerate(positions)]  # type: ignore[union-attr]
        if parallel:
            with PARALLEL_LAUNCH:
                parallel_blocks(*flats, meta, tab, *arguments)
        else:
            run_blocks(0, units, *flats, meta, tab, *arguments)

    return kernel
