"""The DirectMLX way: build a graph of expressions whose output tensors are inferred, compile it once, dispatch it
many times.

DirectMLX users write `dml::Reduce(x, DML_REDUCE_FUNCTION_SUM, {0})`, never a struct. Here too: each operator
function infers its output tensors (DIGEST 5.1), builds the descriptor and checks it at once through the device's
`create_operator`, so a mistake raises at the line that made it, with the messages `create_operator` gives.
`Graph.compile` checks the graph as DML_GRAPH_DESC would, orders it, compiles every node and plans every buffer once.
Axes may be negative, as in NumPy (-1: the last): a function counts them from the end of its tensor's dimensions
and builds DML's descriptor, whose axes are UINTs as in DirectML. The element-wise functions (`dml.add`, ...,
`ELEMENT_WISE_FUNCTIONS`) and Python's operators on expressions are generated from ops/elementwise.py's rows;
`transpose`, `reshape` and `broadcast_to` are IDENTITY views that element-wise readers fold into their own strides.

    >>> import numpy as np, opendml as dml
    >>> g = dml.Graph(dml.Device())
    >>> x = g.input([3, 3], "FLOAT32", name="x")
    >>> column_sums = dml.reduce(x, "SUM", axes=[0])          # sizes (1, 3), FLOAT32
    >>> compiled = g.compile([column_sums])
    >>> compiled({"x": np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)})
    [array([[6., 6., 9.]], dtype=float32)]
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, cast

import numpy as np

from .backends import HOST_BUFFER_ALIGNMENT, DeviceMemory
from .convert import describe, to_enum, to_flags, to_float, to_int, to_name, to_sequence, to_uint, to_uint_list
from .device import Binding, CompiledOperator, Device, Operator, logical_array
from .errors import BindingError, UnsupportedError, ValidationError
from .layout import lay_out_input
from .layout import tensor_view as _tensor_view
from .ops.activations import (
    ActivationCeluOperatorDesc,
    ActivationEluOperatorDesc,
    ActivationGeluOperatorDesc,
    ActivationHardSigmoidOperatorDesc,
    ActivationIdentityOperatorDesc,
    ActivationLeakyReluOperatorDesc,
    ActivationLinearOperatorDesc,
    ActivationOperatorDesc,
    ActivationParametricSoftplusOperatorDesc,
    ActivationReluOperatorDesc,
    ActivationScaledEluOperatorDesc,
    ActivationScaledTanhOperatorDesc,
    ActivationShrinkOperatorDesc,
    ActivationSigmoidOperatorDesc,
    ActivationSoftplusOperatorDesc,
    ActivationSoftsignOperatorDesc,
    ActivationTanhOperatorDesc,
    ActivationThresholdedReluOperatorDesc,
    fusable_names,
)
from .ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from .ops.base import OperatorDesc, check_element_limit, check_tensor, logical_tensors, strides_overlap
from .ops.convolution import ConvolutionOperatorDesc
from .ops.cumulative import CumulativeProductOperatorDesc, CumulativeSummationOperatorDesc
from .ops.elementwise import (
    ACTIVATION,
    CLASSES,
    DATA_TYPE,
    ELEMENT_WISE,
    FLOAT,
    INFINITY,
    INFO,
    ROUNDING,
    SCALAR,
    SCALE_BIAS,
    ElementWiseInfo,
    ElementWiseOperatorDesc,
)
from .ops.elementwise import _snake as dml_field_name
from .ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from .ops.gather_nd1 import GatherNd1OperatorDesc
from .ops.gemm import GemmOperatorDesc
from .ops.generators import (
    DiagonalMatrix1OperatorDesc,
    DiagonalMatrixOperatorDesc,
    FillValueConstantOperatorDesc,
    FillValueSequenceOperatorDesc,
)
from .ops.join import JoinOperatorDesc
from .ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc
from .ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from .ops.one_hot import OneHotOperatorDesc
from .ops.reduce import ReduceOperatorDesc
from .ops.split import SplitOperatorDesc
from .ops.structs import ScaleBias
from .tensor import TensorDesc, packed_strides
from .types import (
    AxisDirection,
    ConvolutionDirection,
    ConvolutionMode,
    DataType,
    ExecutionFlags,
    MatrixTransform,
    OperatorType,
    ReduceFunction,
    TensorFlags,
    to_data_type,
)

__all__ = [
    "ELEMENT_WISE_FUNCTIONS", "CompiledGraph", "Expression", "FusedActivation", "Graph", "Operand", "PlannedBuffer",
    "activation_celu", "activation_elu", "activation_gelu", "activation_hard_sigmoid", "activation_identity",
    "activation_leaky_relu", "activation_linear", "activation_parametric_softplus", "activation_relu",
    "activation_scaled_elu", "activation_scaled_tanh", "activation_shrink", "activation_sigmoid", "activation_softplus",
    "activation_softsign", "activation_tanh", "activation_thresholded_relu", "arg_max", "arg_min", "broadcast_to",
    "convolution", "cumulative_product", "cumulative_summation", "diagonal_matrix", "diagonal_matrix1",
    "fill_value_constant", "fill_value_sequence", "gather_nd", "gemm", "join", "mean_variance_normalization", "one_hot",
    "reduce", "reshape", "split", "transpose",
]

NDArray = np.ndarray[Any, Any]

#: Byte alignment of every planned buffer: a cache line (where host memory from create_buffer starts), which also
#: meets DML's 16-byte binding rule.
BUFFER_ALIGNMENT = HOST_BUFFER_ALIGNMENT
#: From this size on, a C-contiguous input array of a packed input is bound where it lies instead of being copied
#: into the arena: a fresh Binding (checked once, about 25 us here) costs less than copying that many bytes.
ZERO_COPY_MIN_BYTES = 256 * 1024
#: Output ranges of a device arena closer than this are read back in one transfer (one copy and map, not two).
READ_GAP_BYTES = 64 * 1024


# -- the graph's nodes and expressions ------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Node:
    """One node: a graph input, a constant, or an operator whose inputs are expressions built before it.

    Frozen, and built only from expressions that already exist: that is what keeps a graph acyclic.
    """

    graph: Graph
    index: int                                  # creation order
    kind: str                                   # "input", "constant" or "operator"
    name: str
    inputs: tuple[Expression | None, ...] = ()  # operator: one per input slot, None for an absent optional one
    operator: Operator | None = None            # operator: the validated IDMLOperator
    data: NDArray | None = None                 # constant: its bytes, laid out as its TensorDesc says
    outputs: list[Expression] = field(default_factory=list, repr=False)


@dataclass(frozen=True, eq=False)
class Expression:
    """A tensor in a graph: a graph input, a constant, or an output of an operator (dml::Expression).

    `desc` is its TensorDesc (DirectMLX's GetOutputDesc()): operator outputs are packed, with
    DMLCalcBufferTensorSize bytes. Expressions are compared and hashed by identity.
    """

    node: _Node
    output_index: int
    desc: TensorDesc

    @property
    def graph(self) -> Graph:
        return self.node.graph

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.desc.sizes

    @property
    def dtype(self) -> DataType:
        return self.desc.data_type

    @property
    def name(self) -> str:
        """The input's or constant's name; for an operator output, the node and the DML output field."""
        node = self.node
        if node.kind != "operator":
            return node.name
        assert node.operator is not None
        field_name = node.operator.desc.output_slots()[self.output_index][0]
        return f"{node.name} {field_name}"

    @property
    def operator_desc(self) -> OperatorDesc | None:
        """The descriptor of the operator that computes this expression (None for inputs and constants)."""
        return None if self.node.operator is None else self.node.operator.desc

    def __repr__(self) -> str:
        return f"Expression({self.name!r}, {self.dtype.name}, sizes={list(self.sizes)})"

    # Python's operators build the element-wise nodes DirectMLX's do (a number is a constant of the other operand's
    # type); comparisons stay named functions (dml.equals, dml.less_than, ...), so expressions stay hashable.
    __array_ufunc__ = None      # NumPy scalars and arrays on the left defer to the reflected operators below

    def __add__(self, other: Operand) -> Expression:
        return _call("add", self, other)

    def __radd__(self, other: Operand) -> Expression:
        return _call("add", other, self)

    def __sub__(self, other: Operand) -> Expression:
        return _call("subtract", self, other)

    def __rsub__(self, other: Operand) -> Expression:
        return _call("subtract", other, self)

    def __mul__(self, other: Operand) -> Expression:
        return _call("multiply", self, other)

    def __rmul__(self, other: Operand) -> Expression:
        return _call("multiply", other, self)

    def __truediv__(self, other: Operand) -> Expression:
        return _call("divide", self, other)

    def __rtruediv__(self, other: Operand) -> Expression:
        return _call("divide", other, self)

    def __pow__(self, other: Operand) -> Expression:
        return _call("pow", self, other)

    def __rpow__(self, other: Operand) -> Expression:
        return _call("pow", other, self)

    def __mod__(self, other: Operand) -> Expression:
        return _call("modulus_truncate", self, other)

    def __rmod__(self, other: Operand) -> Expression:
        return _call("modulus_truncate", other, self)

    def __and__(self, other: Operand) -> Expression:
        return _call("bit_and", self, other)

    def __rand__(self, other: Operand) -> Expression:
        return _call("bit_and", other, self)

    def __or__(self, other: Operand) -> Expression:
        return _call("bit_or", self, other)

    def __ror__(self, other: Operand) -> Expression:
        return _call("bit_or", other, self)

    def __xor__(self, other: Operand) -> Expression:
        return _call("bit_xor", self, other)

    def __rxor__(self, other: Operand) -> Expression:
        return _call("bit_xor", other, self)

    def __lshift__(self, other: Operand) -> Expression:
        return _call("bit_shift_left", self, other)

    def __rlshift__(self, other: Operand) -> Expression:
        return _call("bit_shift_left", other, self)

    def __rshift__(self, other: Operand) -> Expression:
        return _call("bit_shift_right", self, other)

    def __rrshift__(self, other: Operand) -> Expression:
        return _call("bit_shift_right", other, self)

    def __neg__(self) -> Expression:
        return _negative(self)

    def __pos__(self) -> Expression:
        return _call("identity", self)

    def __abs__(self) -> Expression:
        return _call("abs", self)

    def __invert__(self) -> Expression:
        return _call("bit_not", self)


class Graph:
    """dml::Graph: the expressions built on one device. Inputs are keyed at dispatch by name or by expression.

    >>> g = Graph(Device())
    >>> x = g.input([2, 3], "FLOAT32", name="x")
    >>> reduce(x, "ARGMAX", axes=[1]).dtype              # ARGMAX/ARGMIN default to UINT32, as in DirectMLX
    <DataType.UINT32: 3>
    """

    def __init__(self, device: Device) -> None:
        if not isinstance(device, Device):
            raise ValidationError(f"Graph: device is a {type(device).__name__}; it must be a dml.Device")
        self.device = device
        self._nodes: list[_Node] = []
        self._inputs: list[Expression] = []
        self._names: set[str] = set()

    def __repr__(self) -> str:
        return f"Graph({self.device!r}, inputs={[expression.name for expression in self._inputs]}, " \
               f"nodes={len(self._nodes)})"

    @property
    def inputs(self) -> tuple[Expression, ...]:
        """The declared inputs, in the order of their graph input indices."""
        return tuple(self._inputs)

    def input(self, sizes: Sequence[int], dtype: object, *, name: str | None = None,
              strides: Sequence[int] | None = None) -> Expression:
        """dml::InputTensor: a graph input of these sizes, data type (DataType, name or NumPy dtype) and element
        strides (None: packed). Unnamed inputs are called input0, input1, ... by their graph input index."""
        label = "Graph.input"
        data_type = to_data_type(label, "dtype", dtype)
        size_tuple = to_uint_list(label, "sizes", sizes)
        stride_tuple = None if strides is None else to_uint_list(label, "strides", strides)
        name = self._claim_name(label, name, f"input{len(self._inputs)}")
        desc = TensorDesc(data_type, size_tuple, stride_tuple)
        with logical_tensors():      # the element limit: when a kernel first sees the tensor (CompiledGraph)
            self._check_tensor(label, name, desc)
        expression = self._add_node("input", name, lambda node: [Expression(node, 0, desc)])[0]
        self._inputs.append(expression)
        return expression

    def constant(self, array: NDArray, *, name: str | None = None) -> Expression:
        """A constant tensor: an OWNED_BY_DML input whose data is uploaded to each operator that reads it when the
        graph is compiled. The array's dtype gives the data type and its shape the sizes; its values are copied
        now, so changing the array later changes nothing."""
        label = "Graph.constant"
        if not isinstance(array, np.ndarray):
            raise ValidationError(f"{label}: array is {describe(array)}; it must be a NumPy array (its dtype gives "
                                  f"the DataType)")
        try:
            data_type = DataType.parse(array.dtype)
        except ValidationError:
            raise ValidationError(f"{label}: array has dtype {array.dtype}, which has no DML data type; use one of "
                                  f"float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, "
                                  f"uint8") from None
        if array.ndim == 0:
            raise ValidationError(f"{label}: array is 0-dimensional; a DML tensor has 1 to 8 dimensions (reshape it "
                                  f"to [1])")
        name = self._claim_name(label, name, f"constant{len(self._nodes)}")
        desc = TensorDesc(data_type, array.shape, flags=TensorFlags.OWNED_BY_DML)
        self._check_tensor(label, name, desc)
        data = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
        payload = np.ascontiguousarray(array, dtype=data_type.numpy_dtype).view(np.uint8).reshape(-1)
        data[: payload.size] = payload
        data.flags.writeable = False
        return self._add_node("constant", name, lambda node: [Expression(node, 0, desc)], data=data)[0]

    def compile(self, outputs: Expression | Sequence[Expression],
                flags: ExecutionFlags | str = ExecutionFlags.NONE) -> CompiledGraph:
        """IDMLDevice1::CompileGraph: checks the graph (a DAG; outputs computed by operators of this graph; every
        declared input used, else a warning naming it), orders the nodes, compiles each one with `flags`, and plans
        every buffer once."""
        return CompiledGraph(self, outputs, to_flags("Graph.compile", "flags", flags, ExecutionFlags,
                                                     "DML_EXECUTION_FLAG_"))

    # -- building ------------------------------------------------------------------------------------------------

    def _claim_name(self, label: str, name: str | None, default: str) -> str:
        if name is None:
            name = default
            while name in self._names:
                name += "_"
        else:
            name = to_name(label, "name", name)
        if name in self._names:
            raise ValidationError(f"{label}: name {name!r} is already used in this graph; names must be unique")
        self._names.add(name)
        return name

    def _check_tensor(self, label: str, name: str, desc: TensorDesc) -> None:
        check_tensor(label, name, desc, is_output=False)
        if not self.device.backend.supports_data_type(desc.data_type):
            raise UnsupportedError(f"{label}: {name}.DataType {desc.data_type.name} is not supported by the "
                                   f"{self.device.backend.name} backend")

    def _add_node(self, kind: str, name: str, make_outputs: Callable[[_Node], list[Expression]],
                  inputs: tuple[Expression | None, ...] = (), operator: Operator | None = None,
                  data: NDArray | None = None) -> list[Expression]:
        node = _Node(self, len(self._nodes), kind, name, inputs, operator, data)
        node.outputs.extend(make_outputs(node))
        self._nodes.append(node)
        return list(node.outputs)

    def _add_operator(self, desc: OperatorDesc, inputs: Sequence[Expression | None]) -> list[Expression]:
        """Checks the descriptor now (same rules and messages as create_operator; the element limit when a kernel
        first sees the tensors, in CompiledGraph) and adds its node."""
        with logical_tensors():
            operator = self.device.create_operator(desc)
        name = f"{desc.OPERATOR_TYPE.dml_name} #{len(self._nodes)}"
        return self._add_node("operator", name,
                              lambda node: [Expression(node, index, tensor)
                                            for index, (_, tensor) in enumerate(desc.output_slots())],
                              tuple(inputs), operator)


# -- operator functions (DirectMLX's signatures, DIGEST 5.1) ----------------------------------------------------

def _graph_of(function: str, optional: tuple[str, ...] = (), **arguments: Expression | None) -> Graph:
    """The one graph that every given expression belongs to (a None among `optional` is an absent tensor)."""
    graph: Graph | None = None
    first = ""
    for name, value in arguments.items():
        if value is None and name in optional:
            continue
        if not isinstance(value, Expression):
            raise ValidationError(f"{function}: {name} is {describe(value)}; it must be a dml.Expression")
        if graph is None:
            graph, first = value.graph, name
        elif value.graph is not graph:
            raise ValidationError(f"{function}: {name} belongs to another graph than {first}; the expressions of "
                                  f"one operator must come from the same dml.Graph")
    assert graph is not None
    return graph


def _as_index(value: object, limit: int) -> int | None:
    """`value` as an int if it is an integer in [0, limit), else None. Only such values are used to infer sizes;
    the descriptor refuses the rest, with its own message."""
    try:
        return to_int("", "", value, low=0, high=limit - 1)
    except ValidationError:
        return None


def _dml_axis(function: str, parameter: str, value: object, rank: int, tensor: str) -> Any:
    """A graph function's axis as DML's: a negative integer counts from the end, as in NumPy (-1 is axis rank - 1);
    one below -rank is refused here. Anything else is returned as given, for the descriptor to check with DML's rule
    and message (its axes are UINTs: negative axes are the graph API's)."""
    try:
        number = to_int("", "", value, low=-(1 << 63), high=-1)
    except ValidationError:
        return value                              # not a negative integer: the descriptor's to check
    if number < -rank:
        raise ValidationError(f"{function}: {parameter} is {number}; it must be an integer in [{-rank}, {rank - 1}] "
                              f"({tensor} has {rank} dimensions; a negative axis counts from the end)")
    return number + rank


def _dml_axes(function: str, operator: str, axes: object, rank: int, tensor: str) -> tuple[int, ...]:
    """A graph function's `axes` as DML's Axes (each through _dml_axis). An axis named twice because one of its
    names counts from the end (`[1, -1]` of 2 dimensions) is refused here; other repeats are the descriptor's."""
    items = to_sequence(operator, "Axes", axes, what="a list of integers")
    converted = [_dml_axis(function, f"axes[{index}]", item, rank, tensor) for index, item in enumerate(items)]
    # _dml_axis returns the very item unless it counted it from the end
    from_end = [index for index, (item, axis) in enumerate(zip(items, converted, strict=True)) if item is not axis]
    for index in from_end:
        axis = converted[index]
        twice = [other for other, item in enumerate(converted) if other != index and item == axis]
        if twice:
            raise ValidationError(f"{function}: axes {describe(axes)} name axis {axis} twice (axes[{index}] is "
                                  f"{items[index]}, which counts from the end of {tensor}'s {rank} dimensions); each "
                                  f"axis may appear once")
    return to_uint_list(operator, "Axes", converted)


def _packed(data_type: DataType, sizes: Iterable[int]) -> TensorDesc:
    """An operator output as DirectMLX's default tensor policy makes it: packed, DMLCalcBufferTensorSize bytes."""
    return TensorDesc(data_type, tuple(sizes))


def _reduced_sizes(sizes: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """DIGEST 5.1 Reduce: the input's sizes with every reduced axis set to 1."""
    return tuple(1 if dim in axes else size for dim, size in enumerate(sizes))


def _split_sizes(sizes: tuple[int, ...], axis: object, part: int) -> tuple[int, ...]:
    """DIGEST 5.1 Split: the input's sizes with [axis] replaced (left as is for an axis SPLIT refuses)."""
    dim_of_axis = _as_index(axis, len(sizes))
    if dim_of_axis is None:
        return sizes
    return tuple(part if dim == dim_of_axis else size for dim, size in enumerate(sizes))


def _one_hot_sizes(indices_sizes: tuple[int, ...], output_length: int, axis: object) -> tuple[int, ...]:
    """DIGEST 5.1 OneHot: the indices' sizes with [axis] = outputLength."""
    return _split_sizes(indices_sizes, axis, output_length)


def _gather_nd_sizes(input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], input_dimension_count: object,
                     indices_dimension_count: object, batch_dimension_count: object) -> tuple[int, ...]:
    """DIGEST 2.5 / 5.1 GatherND, as DirectMLX computes it: with R the rank, I, J, B the three counts and K the
    indices' last size, pad = R - (J + (I - B - K) - 1) and
    Output.Sizes = [1] * pad + Indices.Sizes[R-J : R-1] + Input.Sizes[R-(I-B-K) : R].

    Counts that GATHER_ND1 refuses leave the input's sizes, so that its own check names the problem.
    """
    rank = len(input_sizes)
    if len(indices_sizes) != rank:
        return input_sizes
    counts = [_as_index(count, rank + 1) for count in
              (input_dimension_count, indices_dimension_count, batch_dimension_count)]
    if None in counts:
        return input_sizes
    input_count, indices_count, batch = (int(count or 0) for count in counts)
    tuple_size = indices_sizes[-1]
    kept = input_count - batch - tuple_size          # trailing input dims each gathered block keeps
    pad = rank - (indices_count + kept - 1)
    if input_count < 1 or indices_count < 1 or batch >= min(input_count, indices_count) or kept < 0 or pad < 0:
        return input_sizes
    return (1,) * pad + indices_sizes[rank - indices_count: rank - 1] + input_sizes[rank - kept: rank]


def reduce(x: Expression, function: ReduceFunction | str, axes: Sequence[int] | None = None, *,
           output_dtype: object = None) -> Expression:
    """dml::Reduce -> DML_OPERATOR_REDUCE. No axes (None or []) = every axis; a negative axis counts from the end
    (-1: the last). Output sizes: the input's with 1 on every reduced axis; data type: the input's, except
    ARGMAX/ARGMIN which default to UINT32.

    >>> g = Graph(Device()); x = g.input([2, 3, 4], "FLOAT32")
    >>> reduce(x, "SUM", axes=[1]).sizes, reduce(x, "MAX").sizes
    ((2, 1, 4), (1, 1, 1))
    """
    graph = _graph_of("dml.reduce", x=x)
    operator = "DML_OPERATOR_REDUCE"
    function = to_enum(operator, "Function", function, ReduceFunction, "DML_REDUCE_FUNCTION_")
    everything = tuple(range(x.desc.dimension_count))
    axis_tuple = everything if axes is None else _dml_axes("dml.reduce", operator, axes, len(everything), "x") or \
        everything
    if output_dtype is not None:
        data_type = to_data_type("dml.reduce", "output_dtype", output_dtype)
    elif function in (ReduceFunction.ARGMAX, ReduceFunction.ARGMIN):
        data_type = DataType.UINT32
    else:
        data_type = x.dtype
    output = _packed(data_type, _reduced_sizes(x.sizes, axis_tuple))
    desc = ReduceOperatorDesc(function, x.desc, output, axis_tuple)
    return graph._add_operator(desc, [x])[0]


def split(x: Expression, axis: int, sizes: Sequence[int]) -> list[Expression]:
    """dml::Split -> DML_OPERATOR_SPLIT: one output per entry of `sizes`, each the input's sizes with [axis]
    replaced by that entry (they must add up to the input's size along axis; a negative axis counts from the end).

    >>> g = Graph(Device()); x = g.input([4, 6], "FLOAT32")
    >>> [part.sizes for part in split(x, 1, [2, 4])]
    [(4, 2), (4, 4)]
    """
    graph = _graph_of("dml.split", x=x)
    dml_axis = _dml_axis("dml.split", "axis", axis, len(x.sizes), "x")
    parts = to_uint_list("DML_OPERATOR_SPLIT", "sizes", sizes)
    outputs = [_packed(x.dtype, _split_sizes(x.sizes, dml_axis, part)) for part in parts]
    desc = SplitOperatorDesc(x.desc, tuple(outputs), dml_axis)
    return graph._add_operator(desc, [x])


def join(inputs: Sequence[Expression], axis: int) -> Expression:
    """dml::Join -> DML_OPERATOR_JOIN: the inputs concatenated along `axis` (SPLIT's inverse; a negative axis counts
    from the end). Output sizes: the first input's with [axis] the sum of the inputs' [axis]; data type: the first
    input's.

    >>> g = Graph(Device()); a = g.input([4, 2], "FLOAT32"); b = g.input([4, 3], "FLOAT32")
    >>> join([a, b], axis=1).sizes
    (4, 5)
    """
    label = "dml.join"
    allowed = "a non-empty list of dml.Expression"
    inputs = to_sequence(label, "inputs", inputs, what=allowed)
    if not inputs:
        raise ValidationError(f"{label}: inputs is []; it must be {allowed}")
    graph = _graph_of(label, (), **{f"inputs[{index}]": item for index, item in enumerate(inputs)})
    first = inputs[0]
    dml_axis = _dml_axis(label, "axis", axis, len(first.sizes), "inputs[0]")
    dim = _as_index(dml_axis, len(first.sizes))
    total = sum(item.sizes[dim] if dim is not None and len(item.sizes) > dim else 0 for item in inputs)
    sizes = first.sizes if dim is None else _split_sizes(first.sizes, dim, total)
    desc = JoinOperatorDesc(tuple(item.desc for item in inputs), _packed(first.dtype, sizes), dml_axis)
    return graph._add_operator(desc, list(inputs))[0]


def _arg_extreme(cls: type[ArgMinOperatorDesc | ArgMaxOperatorDesc], label: str, x: Expression,
                 axes: Sequence[int] | None, axis_direction: AxisDirection | str, output_dtype: object
                 ) -> Expression:
    graph = _graph_of(label, x=x)
    everything = tuple(range(x.desc.dimension_count))
    operator = cls.OPERATOR_TYPE.dml_name
    axis_tuple = everything if axes is None else _dml_axes(label, operator, axes, len(everything), "x") or everything
    direction = to_enum(operator, "AxisDirection", axis_direction, AxisDirection, "DML_AXIS_DIRECTION_")
    output = _packed(to_data_type(label, "output_dtype", output_dtype), _reduced_sizes(x.sizes, axis_tuple))
    desc = cls(x.desc, output, axis_tuple, direction)
    return graph._add_operator(desc, [x])[0]


def arg_max(x: Expression, axes: Sequence[int] | None = None, *,
            axis_direction: AxisDirection | str = AxisDirection.INCREASING, output_dtype: object = "UINT32"
            ) -> Expression:
    """DML_OPERATOR_ARGMAX: the index of the largest element of each reduced block (the first on ties, or the
    last with axis_direction="DECREASING"). No axes (None or []) = every axis; a negative axis counts from the end.
    Output sizes: the input's with 1 on every reduced axis; data type UINT32 unless `output_dtype` says otherwise
    (INT32, INT64, UINT64).

    >>> g = Graph(Device()); x = g.input([2, 3, 4], "FLOAT32")
    >>> arg_max(x, [2], axis_direction="DECREASING").sizes
    (2, 3, 1)
    """
    return _arg_extreme(ArgMaxOperatorDesc, "dml.arg_max", x, axes, axis_direction, output_dtype)


def arg_min(x: Expression, axes: Sequence[int] | None = None, *,
            axis_direction: AxisDirection | str = AxisDirection.INCREASING, output_dtype: object = "UINT32"
            ) -> Expression:
    """DML_OPERATOR_ARGMIN: as `arg_max`, for the smallest element."""
    return _arg_extreme(ArgMinOperatorDesc, "dml.arg_min", x, axes, axis_direction, output_dtype)


def one_hot(indices: Expression, values: Expression, output_length: int, axis: int) -> Expression:
    """dml::OneHot -> DML_OPERATOR_ONE_HOT. Output sizes: the indices' with [axis] = output_length (a negative axis
    counts from the end); data type: the values'. `values` holds OffValue at element 0 and OnValue next to it.

    >>> g = Graph(Device()); i = g.input([3, 1], "UINT32"); off_on = g.constant(np.array([[0, 1]], np.float32))
    >>> one_hot(i, off_on, 4, axis=1).sizes
    (3, 4)
    """
    graph = _graph_of("dml.one_hot", indices=indices, values=values)
    length = to_uint("DML_OPERATOR_ONE_HOT", "output_length (OutputTensor.Sizes[Axis])", output_length)
    dml_axis = _dml_axis("dml.one_hot", "axis", axis, len(indices.sizes), "indices")
    output = _packed(values.dtype, _one_hot_sizes(indices.sizes, length, dml_axis))
    desc = OneHotOperatorDesc(indices.desc, values.desc, output, dml_axis)
    return graph._add_operator(desc, [indices, values])[0]


def _cumulative(cls: type[CumulativeSummationOperatorDesc | CumulativeProductOperatorDesc], label: str,
                x: Expression, axis: int, axis_direction: AxisDirection | str, exclusive: bool) -> Expression:
    graph = _graph_of(label, x=x)
    dml_axis = _dml_axis(label, "axis", axis, len(x.sizes), "x")
    direction = to_enum(cls.OPERATOR_TYPE.dml_name, "AxisDirection", axis_direction, AxisDirection,
                        "DML_AXIS_DIRECTION_")
    desc = cls(x.desc, _packed(x.dtype, x.sizes), dml_axis, direction, exclusive)
    return graph._add_operator(desc, [x])[0]


def cumulative_summation(x: Expression, axis: int, axis_direction: AxisDirection | str = AxisDirection.INCREASING,
                         has_exclusive_sum: bool = False) -> Expression:
    """dml::CumulativeSummation -> DML_OPERATOR_CUMULATIVE_SUMMATION: the running sum along `axis` (a negative axis
    counts from the end), by descending index with axis_direction="DECREASING", each element's own value left out
    with has_exclusive_sum. Output: the input's sizes and data type.

    >>> g = Graph(Device()); x = g.input([3, 4], "FLOAT32")
    >>> cumulative_summation(x, -1, "DECREASING").sizes
    (3, 4)
    """
    return _cumulative(CumulativeSummationOperatorDesc, "dml.cumulative_summation", x, axis, axis_direction,
                       has_exclusive_sum)


def cumulative_product(x: Expression, axis: int, axis_direction: AxisDirection | str = AxisDirection.INCREASING,
                       has_exclusive_product: bool = False) -> Expression:
    """dml::CumulativeProduct -> DML_OPERATOR_CUMULATIVE_PRODUCT: as `cumulative_summation`, the running product."""
    return _cumulative(CumulativeProductOperatorDesc, "dml.cumulative_product", x, axis, axis_direction,
                       has_exclusive_product)


def _generator_graph(function: str, graph: object) -> Graph:
    if not isinstance(graph, Graph):
        raise ValidationError(f"{function}: graph is {describe(graph)}; it must be a dml.Graph (a generator has no "
                              f"input expression to take it from)")
    return graph


def _generated(function: str, sizes: object, data_type: object) -> TensorDesc:
    return _packed(to_data_type(function, "data_type", data_type), to_uint_list(function, "sizes", sizes))


def fill_value_constant(graph: Graph, sizes: Sequence[int], data_type: DataType | str, value: float) -> Expression:
    """dml::FillValueConstant -> DML_OPERATOR_FILL_VALUE_CONSTANT: a tensor of `sizes` and `data_type` whose every
    element is `value` (a DML_SCALAR_UNION of the type: exact).

    >>> g = Graph(Device()); fill_value_constant(g, [2, 3], "INT32", 7).sizes
    (2, 3)
    """
    function = "dml.fill_value_constant"
    output = _generated(function, sizes, data_type)
    desc = FillValueConstantOperatorDesc(output, output.data_type, value)
    return _generator_graph(function, graph)._add_operator(desc, [])[0]


def fill_value_sequence(graph: Graph, sizes: Sequence[int], data_type: DataType | str, value_start: float,
                        value_delta: float) -> Expression:
    """dml::FillValueSequence -> DML_OPERATOR_FILL_VALUE_SEQUENCE: element i (row-major) = value_start + value_delta
    * i, in `data_type` (ONNX's Range).

    >>> g = Graph(Device()); fill_value_sequence(g, [5], "FLOAT32", 0, 0.5).dtype
    <DataType.FLOAT32: 1>
    """
    function = "dml.fill_value_sequence"
    output = _generated(function, sizes, data_type)
    desc = FillValueSequenceOperatorDesc(output, output.data_type, value_start, value_delta)
    return _generator_graph(function, graph)._add_operator(desc, [])[0]


def diagonal_matrix(graph: Graph, sizes: Sequence[int], data_type: DataType | str = DataType.FLOAT32,
                    offset: int = 0, value: float = 1.0) -> Expression:
    """DML_OPERATOR_DIAGONAL_MATRIX (ONNX's EyeLike): `value` where column - row == offset, else 0, in every matrix
    of the last two dimensions (DML takes 4 dimensions).

    >>> g = Graph(Device()); diagonal_matrix(g, [1, 1, 3, 3]).sizes
    (1, 1, 3, 3)
    """
    function = "dml.diagonal_matrix"
    output = _generated(function, sizes, data_type)
    desc = DiagonalMatrixOperatorDesc(output, offset, value)
    return _generator_graph(function, graph)._add_operator(desc, [])[0]


def diagonal_matrix1(source: Expression | Graph, value: float, diagonal_fill_begin: int, diagonal_fill_end: int, *,
                     sizes: Sequence[int] | None = None, data_type: DataType | str | None = None) -> Expression:
    """DML_OPERATOR_DIAGONAL_MATRIX1 (ONNX's Trilu, WebNN's triangular): `value` where diagonal_fill_begin <=
    column - row < diagonal_fill_end (the band inverted where begin > end), else the source's element. `source` is
    the InputTensor (the output takes its sizes and type), or a Graph for none (0 outside the band; then `sizes` and
    `data_type` are required).

    >>> g = Graph(Device()); x = g.input([4, 5], "FLOAT32")
    >>> diagonal_matrix1(x, 0, -2**31, 0).sizes                 # the upper triangle of x, the rest 0
    (4, 5)
    """
    function = "dml.diagonal_matrix1"
    if isinstance(source, Graph):
        if sizes is None or data_type is None:
            raise ValidationError(f"{function}: sizes is {describe(sizes)} and data_type is {describe(data_type)}; "
                                  f"without an input expression both are required")
        output = _generated(function, sizes, data_type)
        desc = DiagonalMatrix1OperatorDesc(None, output, output.data_type, value, diagonal_fill_begin,
                                           diagonal_fill_end)
        return source._add_operator(desc, [None])[0]
    graph = _graph_of(function, source=source)
    if sizes is not None or data_type is not None:
        raise ValidationError(f"{function}: sizes and data_type are the source's; leave them None with an input "
                              f"expression")
    output = _packed(source.dtype, source.sizes)
    desc = DiagonalMatrix1OperatorDesc(source.desc, output, source.dtype, value,
                                       diagonal_fill_begin, diagonal_fill_end)
    return graph._add_operator(desc, [source])[0]


def mean_variance_normalization(x: Expression, scale: Expression | None = None, bias: Expression | None = None, *,
                                axes: Sequence[int] | None = None, cross_channel: bool | None = None,
                                normalize_variance: bool = True, epsilon: float = 1e-5,
                                fused_activation: FusedActivation | ActivationOperatorDesc | None = None
                                ) -> Expression:
    """dml::MeanVarianceNormalization. With `axes`: DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 (DirectMLX's form);
    with `cross_channel` instead: DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION (version 0, 4-D tensors: over
    {Height, Width}, or {Channel, Height, Width} when cross_channel is True). Give exactly one of the two; a
    negative axis counts from the end.
    Output: the input's sizes and data type. Scale and Bias are optional expressions of the input's rank (each
    size the input's or 1).

    >>> g = Graph(Device()); x = g.input([2, 8], "FLOAT32")
    >>> mean_variance_normalization(x, axes=[1], fused_activation=FusedActivation.relu()).sizes
    (2, 8)
    >>> y = g.input([1, 3, 4, 4], "FLOAT32")
    >>> mean_variance_normalization(y, cross_channel=True).operator_desc.OPERATOR_TYPE.name
    'MEAN_VARIANCE_NORMALIZATION'
    """
    label = "dml.mean_variance_normalization"
    graph = _graph_of(label, ("scale", "bias"), x=x, scale=scale, bias=bias)
    if (axes is None) == (cross_channel is None):
        raise ValidationError(f"{label}: give either axes (MEAN_VARIANCE_NORMALIZATION1) or cross_channel "
                              f"(MEAN_VARIANCE_NORMALIZATION), not {'both' if axes is not None else 'neither'}")
    activation = fused_activation.desc if isinstance(fused_activation, FusedActivation) else fused_activation
    scale_desc = None if scale is None else scale.desc
    bias_desc = None if bias is None else bias.desc
    output = _packed(x.dtype, x.sizes)
    desc: OperatorDesc
    if cross_channel is not None:
        desc = MeanVarianceNormalizationOperatorDesc(x.desc, scale_desc, bias_desc, output, cross_channel,
                                                     normalize_variance, epsilon, activation)
    else:
        operator = MeanVarianceNormalization1OperatorDesc.OPERATOR_TYPE.dml_name
        desc = MeanVarianceNormalization1OperatorDesc(x.desc, scale_desc, bias_desc, output,
                                                      _dml_axes(label, operator, axes, len(x.sizes), "x"),
                                                      normalize_variance, epsilon, activation)
    return graph._add_operator(desc, [x, scale, bias])[0]


def gather_nd(x: Expression, indices: Expression, input_dimension_count: int, indices_dimension_count: int,
              batch_dimension_count: int = 0) -> Expression:
    """dml::GatherND -> DML_OPERATOR_GATHER_ND1. Output data type: the input's; sizes: the indices' meaningful
    sizes but the last (the tuple size K), then the input's meaningful sizes after its first B + K, right-aligned
    with leading 1s.

    >>> g = Graph(Device()); x = g.input([3, 4, 5, 6, 7], "FLOAT32"); i = g.input([1, 1, 1, 2, 3], "UINT32")
    >>> gather_nd(x, i, 5, 3).sizes                    # {1,2} tuples of 3 coordinates, each picks a 6x7 block
    (1, 1, 2, 6, 7)
    """
    graph = _graph_of("dml.gather_nd", x=x, indices=indices)
    sizes = _gather_nd_sizes(x.sizes, indices.sizes, input_dimension_count, indices_dimension_count,
                             batch_dimension_count)
    desc = GatherNd1OperatorDesc(x.desc, indices.desc, _packed(x.dtype, sizes), input_dimension_count,
                                 indices_dimension_count, batch_dimension_count)
    return graph._add_operator(desc, [x, indices])[0]



def gather(x: Expression, indices: Expression, axis: int, index_dimensions: int) -> Expression:
    """dml::Gather -> DML_OPERATOR_GATHER: `output[...] = x[..., indices[...], ...]` along `axis`. Output data type:
    the input's; sizes: x's before `axis`, the indices' last `index_dimensions`, x's after `axis`, right-aligned
    into x's DimensionCount (leading 1s cropped).

    >>> g = Graph(Device()); x = g.input([1, 3, 2], "FLOAT32"); i = g.input([1, 2, 2], "UINT32")
    >>> gather(x, i, 1, 2).sizes
    (2, 2, 2)
    """
    graph = _graph_of("dml.gather", x=x, indices=indices)
    probe = GatherOperatorDesc(x.desc, indices.desc, x.desc, axis, index_dimensions)
    sizes = probe.expected_output_sizes() if probe.axis < len(x.sizes) and probe.index_dimensions <= len(
        indices.sizes) else list(x.sizes)
    desc = GatherOperatorDesc(x.desc, indices.desc, _packed(x.dtype, sizes), axis, index_dimensions)
    return graph._add_operator(desc, [x, indices])[0]


def gather_elements(x: Expression, indices: Expression, axis: int) -> Expression:
    """dml::GatherElements -> DML_OPERATOR_GATHER_ELEMENTS: `output[i] = x[i with i[axis] = indices[i]]`. Output
    data type: the input's; sizes: the indices'.

    >>> g = Graph(Device()); x = g.input([3, 3], "FLOAT32"); i = g.input([2, 3], "UINT32")
    >>> gather_elements(x, i, 0).sizes
    (2, 3)
    """
    graph = _graph_of("dml.gather_elements", x=x, indices=indices)
    desc = GatherElementsOperatorDesc(x.desc, indices.desc, _packed(x.dtype, indices.sizes), axis)
    return graph._add_operator(desc, [x, indices])[0]

# -- fused activations ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FusedActivation:
    """dml::FusedActivation: the activation an operator applies to its result, with DirectMLX's defaults.
    `desc` is the activation's descriptor in its fused form (no tensors), or None for FusedActivation.none().

    >>> FusedActivation.elu().desc
    ActivationEluOperatorDesc(input_tensor=None, output_tensor=None, alpha=1.0)
    """

    desc: ActivationOperatorDesc | None = None

    def __post_init__(self) -> None:
        if self.desc is not None and not isinstance(self.desc, ActivationOperatorDesc):
            raise ValidationError(f"FusedActivation: desc is {describe(self.desc)}; it must be an activation "
                                  f"descriptor (one of {fusable_names()}) or None")

    @staticmethod
    def none() -> FusedActivation:
        return FusedActivation()

    @staticmethod
    def elu(alpha: float = 1.0) -> FusedActivation:
        return FusedActivation(ActivationEluOperatorDesc(alpha))

    @staticmethod
    def hard_sigmoid(alpha: float = 0.2, beta: float = 0.5) -> FusedActivation:
        return FusedActivation(ActivationHardSigmoidOperatorDesc(alpha, beta))

    @staticmethod
    def identity() -> FusedActivation:
        return FusedActivation(ActivationIdentityOperatorDesc())

    @staticmethod
    def leaky_relu(alpha: float = 0.01) -> FusedActivation:
        return FusedActivation(ActivationLeakyReluOperatorDesc(alpha))

    @staticmethod
    def linear(alpha: float, beta: float) -> FusedActivation:
        return FusedActivation(ActivationLinearOperatorDesc(alpha, beta))

    @staticmethod
    def parametric_softplus(alpha: float, beta: float) -> FusedActivation:
        return FusedActivation(ActivationParametricSoftplusOperatorDesc(alpha, beta))

    @staticmethod
    def relu() -> FusedActivation:
        return FusedActivation(ActivationReluOperatorDesc())

    @staticmethod
    def scaled_elu(alpha: float = 1.67326319217681884765625, gamma: float = 1.05070102214813232421875
                   ) -> FusedActivation:
        return FusedActivation(ActivationScaledEluOperatorDesc(alpha, gamma))

    @staticmethod
    def scaled_tanh(alpha: float = 1.0, beta: float = 0.5) -> FusedActivation:
        return FusedActivation(ActivationScaledTanhOperatorDesc(alpha, beta))

    @staticmethod
    def sigmoid() -> FusedActivation:
        return FusedActivation(ActivationSigmoidOperatorDesc())

    @staticmethod
    def softplus(steepness: float = 1.0) -> FusedActivation:
        return FusedActivation(ActivationSoftplusOperatorDesc(steepness))

    @staticmethod
    def softsign() -> FusedActivation:
        return FusedActivation(ActivationSoftsignOperatorDesc())

    @staticmethod
    def tanh() -> FusedActivation:
        return FusedActivation(ActivationTanhOperatorDesc())

    @staticmethod
    def thresholded_relu(alpha: float = 1.0) -> FusedActivation:
        return FusedActivation(ActivationThresholdedReluOperatorDesc(alpha))

    @staticmethod
    def shrink(bias: float = 0.0, threshold: float = 0.5) -> FusedActivation:
        return FusedActivation(ActivationShrinkOperatorDesc(bias, threshold))

    @staticmethod
    def celu(alpha: float = 1.0) -> FusedActivation:
        return FusedActivation(ActivationCeluOperatorDesc(alpha))

    @staticmethod
    def gelu() -> FusedActivation:
        return FusedActivation(ActivationGeluOperatorDesc())


# -- standalone activations ------------------------------------------------------------------------------------

def _activation_function(cls: type[ActivationOperatorDesc]) -> Callable[..., Expression]:
    """dml::Activation<Name>(x, parameters...) for one activation class: the standalone operator on x, whose output
    has x's sizes and data type (packed). Parameters and their defaults are the class's own (one place)."""
    name = cls.OPERATOR_TYPE.name.lower()                       # e.g. activation_leaky_relu
    label = f"dml.{name}"
    constructor = inspect.signature(cls)
    signature = constructor.replace(
        parameters=[inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY, annotation="Expression"),
                    *(constructor.parameters[key] for key in cls.parameter_names())],
        return_annotation="Expression")

    def activation(*args: object, **kwargs: object) -> Expression:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ValidationError(f"{label}: {error}; its signature is {name}{signature}") from None
        x = cast(Expression, bound.arguments.pop("x"))
        graph = _graph_of(label, x=x)
        desc = cls(**bound.arguments, input_tensor=x.desc, output_tensor=_packed(x.dtype, x.sizes))
        return graph._add_operator(desc, [x])[0]

    activation.__signature__ = signature  # type: ignore[attr-defined]
    activation.__name__ = activation.__qualname__ = name
    activation.__doc__ = (f"dml::{cls.__name__[:-len('OperatorDesc')]} -> {cls.OPERATOR_TYPE.dml_name} as a "
                          f"standalone operator: f(x) = {cls.info().formula}, elementwise. Output: x's sizes and "
                          f"data type.")
    return activation


activation_celu = _activation_function(ActivationCeluOperatorDesc)
activation_elu = _activation_function(ActivationEluOperatorDesc)
activation_gelu = _activation_function(ActivationGeluOperatorDesc)
activation_hard_sigmoid = _activation_function(ActivationHardSigmoidOperatorDesc)
activation_identity = _activation_function(ActivationIdentityOperatorDesc)
activation_leaky_relu = _activation_function(ActivationLeakyReluOperatorDesc)
activation_linear = _activation_function(ActivationLinearOperatorDesc)
activation_parametric_softplus = _activation_function(ActivationParametricSoftplusOperatorDesc)
activation_relu = _activation_function(ActivationReluOperatorDesc)
activation_scaled_elu = _activation_function(ActivationScaledEluOperatorDesc)
activation_scaled_tanh = _activation_function(ActivationScaledTanhOperatorDesc)
activation_shrink = _activation_function(ActivationShrinkOperatorDesc)
activation_sigmoid = _activation_function(ActivationSigmoidOperatorDesc)
activation_softplus = _activation_function(ActivationSoftplusOperatorDesc)
activation_softsign = _activation_function(ActivationSoftsignOperatorDesc)
activation_tanh = _activation_function(ActivationTanhOperatorDesc)
activation_thresholded_relu = _activation_function(ActivationThresholdedReluOperatorDesc)


# -- element-wise operators (generated from ops/elementwise.py's rows) -------------------------------------------

#: What an element-wise function takes for a tensor: an expression, or a Python number (a constant of its
#: partner's data type).
Operand = Expression | int | float

#: DirectMLX's function names where they are not the DML name in snake case (IF: `if` is Python's keyword).
_DIRECTMLX_NAMES = {
    "LOGICAL_EQUALS": "equals", "LOGICAL_GREATER_THAN": "greater_than",
    "LOGICAL_GREATER_THAN_OR_EQUAL": "greater_than_or_equal", "LOGICAL_LESS_THAN": "less_than",
    "LOGICAL_LESS_THAN_OR_EQUAL": "less_than_or_equal", "IF": "if_",
}
_T = OperatorType


def _function_name(info: ElementWiseInfo) -> str:
    return _DIRECTMLX_NAMES.get(info.short_name, info.short_name.lower())


def _tensor_parameter(field_name: str) -> str:
    """A tensor field's parameter: InputTensor -> x (as the graph's other functions); ATensor -> a; ExponentTensor ->
    exponent; ZeroPointTensor -> zero_point."""
    return "x" if field_name == "InputTensor" else dml_field_name(field_name).removesuffix("_tensor")


def _output_group(info: ElementWiseInfo) -> tuple[str, ...]:
    return next((group for group in info.same_type if "OutputTensor" in group), ("OutputTensor",))


def _output_is_chosen(info: ElementWiseInfo) -> bool:
    """Whether the output's data type is the caller's (`output_dtype`): no input that is always present fixes it
    (LOGICAL_* comparisons, IS_NAN, IS_INFINITY, BIT_COUNT; QUANTIZE_LINEAR, whose ZeroPointTensor is optional)."""
    return not [name for name in _output_group(info) if name != "OutputTensor" and name not in info.optional]


def _element_wise_signature(info: ElementWiseInfo) -> inspect.Signature:
    """The tensors (positional or keyword; an optional one defaults to None), then the scalar fields without a
    default (positional or keyword), then the rest keyword-only with the descriptor's defaults (ScaleBias,
    FusedActivation: None; CLIP1's MinMaxDataType: None, the input's type), and `output_dtype` where the output's
    type is not an input's."""
    parameter = inspect.Parameter
    defaults = {item.name: item.default for item in fields(cast(Any, CLASSES[info.operator_type]))
                if item.default is not MISSING}
    tensors = [parameter(_tensor_parameter(name), parameter.POSITIONAL_OR_KEYWORD,
                         default=None if name in info.optional else parameter.empty,
                         annotation="Operand | None" if name in info.optional else "Operand")
               for name, _ in info.inputs]
    required: list[inspect.Parameter] = []
    keyword: list[inspect.Parameter] = []
    for name, kind in info.scalars:
        attribute = dml_field_name(name)
        annotation = _SCALAR_ANNOTATIONS[kind]
        if kind in (SCALE_BIAS, ACTIVATION, DATA_TYPE):
            keyword.append(parameter(attribute, parameter.KEYWORD_ONLY, default=None, annotation=annotation))
        elif attribute in defaults:
            keyword.append(parameter(attribute, parameter.KEYWORD_ONLY, default=defaults[attribute],
                                     annotation=annotation))
        else:
            required.append(parameter(attribute, parameter.POSITIONAL_OR_KEYWORD, annotation=annotation))
    if _output_is_chosen(info):
        keyword.append(parameter("output_dtype", parameter.KEYWORD_ONLY, default=None, annotation="object"))
    return inspect.Signature([*tensors, *required, *keyword], return_annotation="Expression")


_SCALAR_ANNOTATIONS = {FLOAT: "float", SCALAR: "int | float", DATA_TYPE: "DataType | str | None",
                       ROUNDING: "RoundingMode | str", INFINITY: "IsInfinityMode | str",
                       ACTIVATION: "FusedActivation | ActivationOperatorDesc | None", SCALE_BIAS: "ScaleBias | None"}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_, np.timedelta64, np.datetime64))


def _number_constant(graph: Graph, label: str, parameter: str, value: Any, data_type: DataType) -> Expression:
    """A Python number as a graph constant of `data_type` (sizes [1]; it broadcasts by zero strides): exact for an
    integer type, rounded to a float type (a finite number beyond its range is refused)."""
    what = f"a number operand is a constant of {data_type.name}, its partner's type"
    if data_type.is_float:
        number = to_float(label, parameter, value, finite=False, limit=None, what=f"number ({what})")
        with np.errstate(over="ignore"):
            array = np.array([number], data_type.numpy_dtype)
        if np.isinf(array[0]) and math.isfinite(number):
            raise ValidationError(f"{label}: {parameter} is {describe(value)}, beyond {data_type.name}'s range "
                                  f"({what})")
        return graph.constant(array)
    limits = np.iinfo(data_type.numpy_dtype)
    if isinstance(value, (float, np.floating)):   # an integral float is its integer
        number = to_float(label, parameter, value, finite=False, limit=None, what=f"number ({what})")
        value = int(number) if math.isfinite(number) and number.is_integer() else value
    refusal = ValidationError(f"{label}: {parameter} is {describe(value)}; it must be an integer in "
                              f"[{limits.min}, {limits.max}] ({what})")
    try:
        integer = to_int(label, parameter, value, low=int(limits.min), high=int(limits.max))
    except ValidationError:
        raise refusal from None
    return graph.constant(np.array([integer], data_type.numpy_dtype))


def _check_types(info: ElementWiseInfo, label: str, expressions: dict[str, Expression]) -> None:
    """The expressions of one `same_type` group share a data type (named by the function's parameters)."""
    for group in info.same_type:
        present = [name for name in group if name in expressions]
        for name in present[1:]:
            first, other = expressions[present[0]], expressions[name]
            if other.dtype != first.dtype:
                shared = ", ".join(group)
                raise ValidationError(f"{label}: {_tensor_parameter(present[0])} is {first.dtype.name} and "
                                      f"{_tensor_parameter(name)} is {other.dtype.name}; they must have the same "
                                      f"data type ({info.operator_type.dml_name}: {shared} share one)")


def _partner_type(info: ElementWiseInfo, field_name: str, expressions: dict[str, Expression]) -> DataType:
    """The data type a number in `field_name` takes: its `same_type` partner's, else the first expression's."""
    for group in info.same_type:
        if field_name in group:
            partner = next((expressions[name] for name in group if name in expressions), None)
            if partner is not None:
                return partner.dtype
    return next(iter(expressions.values())).dtype


def _broadcast_sizes(label: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcasting: the shapes aligned from their last dimension, each size equal to the others or 1."""
    rank = max(len(sizes) for sizes in shapes.values())
    result: list[int] = []
    for dim in range(-rank, 0):
        sizes = {sizes[dim] for sizes in shapes.values() if len(sizes) >= -dim} - {1}
        if len(sizes) > 1:
            listed = " and ".join(f"{name} {list(sizes)}" for name, sizes in shapes.items())
            raise ValidationError(f"{label}: the sizes of {listed} do not broadcast (NumPy's rules: aligned from the "
                                  f"last dimension, each size equal or 1)")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _view(desc: TensorDesc, sizes: Sequence[int], strides: Sequence[int] | None) -> TensorDesc:
    """Another view of the buffer `desc` describes: its data type, flags, size and alignment, other sizes and
    strides."""
    if strides is not None and tuple(strides) == packed_strides(sizes):
        strides = None
    return TensorDesc(desc.data_type, tuple(sizes), None if strides is None else tuple(strides), flags=desc.flags,
                      total_tensor_size_in_bytes=desc.total_tensor_size_in_bytes,
                      guaranteed_base_offset_alignment=desc.guaranteed_base_offset_alignment)


def _broadcast_desc(desc: TensorDesc, sizes: tuple[int, ...]) -> TensorDesc:
    """`desc` read with the output's rank and sizes, as DML requires: zero strides where it broadcasts."""
    if desc.sizes == sizes:
        return desc
    lead = len(sizes) - len(desc.sizes)
    strides = (0,) * lead + tuple(stride if size == target else 0 for size, stride, target
                                  in zip(desc.sizes, desc.element_strides, sizes[lead:], strict=True))
    return _view(desc, sizes, strides)


def _source(expression: Expression) -> tuple[Expression, TensorDesc]:
    """What an element-wise node reads for `expression`: an IDENTITY's output without ScaleBias (a transpose,
    reshape, broadcast_to or identity) is its input read through the IDENTITY's input strides, so the view is folded
    into the reader and no IDENTITY runs for it; any other expression is itself."""
    desc = expression.operator_desc
    if isinstance(desc, ElementWiseOperatorDesc) and desc.OPERATOR_TYPE == _T.ELEMENT_WISE_IDENTITY \
            and desc.field_value("ScaleBias") is None:
        source = expression.node.inputs[0]
        assert source is not None
        return source, desc.tensor("InputTensor")
    return expression, expression.desc


def _build_element_wise(info: ElementWiseInfo, label: str, arguments: dict[str, Any]) -> Expression:
    """The node of one element-wise operator from its function's bound arguments: types checked, numbers made
    constants, every tensor broadcast to the output's sizes by zero strides, the output's type inferred."""
    fields = [name for name, _ in info.inputs]
    operands = {name: arguments.pop(_tensor_parameter(name)) for name in fields}
    output_dtype = arguments.pop("output_dtype", None)
    for name, value in operands.items():
        if not (isinstance(value, Expression) or _is_number(value) or (value is None and name in info.optional)):
            allowed = "a dml.Expression, a number or None" if name in info.optional else "a dml.Expression or a number"
            raise ValidationError(f"{label}: {_tensor_parameter(name)} is {describe(value)}; it must be {allowed}")
    expressions = {name: value for name, value in operands.items() if isinstance(value, Expression)}
    if not expressions:
        raise ValidationError(f"{label}: {' and '.join(_tensor_parameter(name) for name in fields)} are numbers; "
                              f"at least one must be a dml.Expression (a number takes its partner's data type)")
    graph = _graph_of(label, (), **{_tensor_parameter(name): value for name, value in expressions.items()})
    _check_types(info, label, expressions)
    tensors: dict[str, Expression] = {
        name: value if isinstance(value, Expression) else
        _number_constant(graph, label, _tensor_parameter(name), value, _partner_type(info, name, expressions))
        for name, value in operands.items() if value is not None}
    sizes = _broadcast_sizes(label, {_tensor_parameter(name): value.sizes for name, value in tensors.items()})
    sources = {name: _source(value) for name, value in tensors.items()}
    partners = [tensors[name] for name in _output_group(info) if name in tensors]
    if output_dtype is not None:
        data_type = to_data_type(label, "output_dtype", output_dtype)
    else:
        data_type = partners[0].dtype if partners else info.output_type or DataType.UINT8
    first = tensors[fields[0]]
    scalars: dict[str, Any] = {}
    for name, kind in info.scalars:
        value = arguments.pop(dml_field_name(name))
        if kind == DATA_TYPE and value is None:
            value = first.dtype
        elif kind == ACTIVATION and isinstance(value, FusedActivation):
            value = value.desc
        scalars[dml_field_name(name)] = value
    tensor_descs = {dml_field_name(name): _broadcast_desc(sources[name][1], sizes) if name in sources else None
                    for name in fields}
    cls = cast(Any, CLASSES[info.operator_type])     # a generated dataclass: its fields are the row's
    desc = cls(**tensor_descs, output_tensor=_packed(data_type, sizes), **scalars)
    return graph._add_operator(desc, [sources[name][0] if name in sources else None for name in fields])[0]


def _bind(label: str, name: str, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
          ) -> dict[str, Any]:
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise ValidationError(f"{label}: {error}; its signature is {name}{signature}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def _element_wise_function(name: str, infos: tuple[ElementWiseInfo, ...],
                           choose: Callable[[dict[str, Any]], int] = lambda arguments: 0, signature_of: int = 0
                           ) -> Callable[..., Expression]:
    """The graph function `name` of the operators `infos` (the signature is infos[signature_of]'s; `choose` picks
    the operator by the arguments, as DirectMLX's overloads do: Add with a FusedActivation builds ADD1, Pow with a
    number for the exponent CONSTANT_POW)."""
    label = f"dml.{name}"
    signatures = [_element_wise_signature(info) for info in infos]
    signature = signatures[signature_of]

    def function(*args: Any, **kwargs: Any) -> Expression:
        arguments = _bind(label, name, signature, args, kwargs)
        chosen = choose(arguments)
        return _build_element_wise(infos[chosen], label, {key: value for key, value in arguments.items()
                                                          if key in signatures[chosen].parameters})

    function.__signature__ = signature  # type: ignore[attr-defined]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = "\n\n".join(_element_wise_doc(info) for info in infos)
    return function


def _element_wise_doc(info: ElementWiseInfo) -> str:
    cls = CLASSES[info.operator_type]
    group = [name for name in _output_group(info) if name != "OutputTensor"]
    if _output_is_chosen(info):
        default = _tensor_parameter(group[0]) + "'s if given, else " if group else ""
        output_type = f"output_dtype; by default {default}{(info.output_type or DataType.UINT8).name}"
    else:
        output_type = f"{_tensor_parameter(group[0])}'s"
    return (f"{info.operator_type.dml_name}: {(cls.__doc__ or '').split(': ', 1)[-1]} The tensors broadcast by "
            f"NumPy's rules (zero strides, no copy); a number becomes a constant of its partner's data type. Output: "
            f"the broadcast sizes, packed; data type {output_type}.")


def _add_or_add1(arguments: dict[str, Any]) -> int:
    return 0 if arguments["fused_activation"] is None else 1   # FusedActivation.none() is an ADD1 without one


def _pow_or_constant_pow(arguments: dict[str, Any]) -> int:
    x = arguments["x"]
    return 1 if _is_number(arguments["exponent"]) and isinstance(x, Expression) and x.dtype.is_float else 0


def _element_wise_functions() -> dict[str, Callable[..., Expression]]:
    functions = {_function_name(info): _element_wise_function(_function_name(info), (info,))
                 for info in ELEMENT_WISE}
    functions["add"] = _element_wise_function("add", (INFO[_T.ELEMENT_WISE_ADD], INFO[_T.ELEMENT_WISE_ADD1]),
                                              _add_or_add1, signature_of=1)
    functions["pow"] = _element_wise_function("pow", (INFO[_T.ELEMENT_WISE_POW], INFO[_T.ELEMENT_WISE_CONSTANT_POW]),
                                              _pow_or_constant_pow)
    return functions


#: dml.add, dml.multiply, ... one function per element-wise operator, named as DirectMLX names them (snake case;
#: the DML name where DirectMLX has none; `if_` for IF). Exported by opendml; kept out of this module's globals,
#: where `abs`, `max`, `min`, `pow` and `round` would hide Python's own.
ELEMENT_WISE_FUNCTIONS: dict[str, Callable[..., Expression]] = _element_wise_functions()


def _call(name: str, *args: Any, **kwargs: Any) -> Expression:
    return ELEMENT_WISE_FUNCTIONS[name](*args, **kwargs)


def _negative(x: Expression) -> Expression:
    """-x: NEGATE; on a float tensor below NEGATE's feature level (5_0), IDENTITY with ScaleBias (-1, -0), as
    Chromium's WebNN does, with a bias of -0 so that -(+0) is -0 as NEGATE gives it."""
    if x.dtype.is_float and x.graph.device.feature_level < INFO[_T.ELEMENT_WISE_NEGATE].level:
        return _call("identity", x, scale_bias=ScaleBias(-1.0, -0.0))
    return _call("negate", x)


# -- views: IDENTITY over strides -------------------------------------------------------------------------------

def _identity_view(graph: Graph, source: Expression, view: TensorDesc) -> Expression:
    """IDENTITY reading `source`'s buffer through `view`: a packed copy where it must run (a graph output, or read
    by a non-element-wise operator); element-wise readers fold it (`_source`)."""
    identity = cast(Any, CLASSES[_T.ELEMENT_WISE_IDENTITY])
    return graph._add_operator(identity(input_tensor=view, output_tensor=_packed(view.data_type, view.sizes)),
                               [source])[0]


def transpose(x: Expression, perm: Sequence[int] | None = None) -> Expression:
    """x with its dimensions permuted (`perm[i]` is the input dimension of output dimension i; None reverses them,
    as NumPy's; a negative one counts from the end): IDENTITY over permuted strides, folded into element-wise
    readers.

    >>> g = Graph(Device()); x = g.input([2, 3, 4], "FLOAT32")
    >>> transpose(x, [2, 0, 1]).sizes
    (4, 2, 3)
    """
    label = "dml.transpose"
    graph = _graph_of(label, x=x)
    rank = len(x.sizes)
    if perm is None:
        order = tuple(reversed(range(rank)))
    else:
        items = to_sequence(label, "perm", perm, what="a list of integers")
        order = tuple(to_int(label, f"perm[{index}]", item, low=-rank, high=rank - 1) % rank
                      for index, item in enumerate(items))
        if sorted(order) != list(range(rank)):
            raise ValidationError(f"{label}: perm is {describe(perm)}; it must name each of x's {rank} dimensions "
                                  f"once (a permutation of {list(range(rank))})")
    source, view = _source(x)
    strides = view.element_strides
    return _identity_view(graph, source, _view(view, [view.sizes[dim] for dim in order],
                                               [strides[dim] for dim in order]))


def reshape(x: Expression, sizes: Sequence[int]) -> Expression:
    """x's elements, in row-major order, with other sizes (one of them may be -1: inferred, as in NumPy): IDENTITY
    over the packed strides of the new sizes, folded into element-wise readers. An x that is not packed (a
    transposed view, a strided input) is copied once into a packed tensor first.

    >>> g = Graph(Device()); x = g.input([2, 3, 4], "FLOAT32")
    >>> reshape(x, [6, -1]).sizes
    (6, 4)
    """
    label = "dml.reshape"
    graph = _graph_of(label, x=x)
    items = to_sequence(label, "sizes", sizes, what="a list of integers")
    wanted = [_reshape_size(label, index, item) for index, item in enumerate(items)]
    known = math.prod(size for size in wanted if size != -1)
    count = x.desc.element_count
    if wanted.count(-1) > 1:
        raise ValidationError(f"{label}: sizes is {describe(sizes)}; at most one size may be -1 (inferred)")
    if -1 in wanted and known and count % known == 0:
        wanted[wanted.index(-1)] = count // known
    if -1 in wanted or math.prod(wanted) != count:
        raise ValidationError(f"{label}: sizes is {describe(sizes)}; x {list(x.sizes)} has {count} elements, and a "
                              f"reshape keeps every one")
    source, view = _source(x)
    if not view.is_packed:
        source, view = x, x.desc
        if not view.is_packed:
            source = _identity_view(graph, x, x.desc)
            view = source.desc
    return _identity_view(graph, source, _view(view, wanted, None))


def _reshape_size(label: str, index: int, item: object) -> int:
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool) and item == -1:
        return -1
    try:
        return to_uint(label, f"sizes[{index}]", item)
    except ValidationError:
        raise ValidationError(f"{label}: sizes[{index}] is {describe(item)}; it must be -1 (inferred) or an integer "
                              f"in [0, 2^32)") from None


def broadcast_to(x: Expression, sizes: Sequence[int]) -> Expression:
    """x broadcast to `sizes` by NumPy's rules (aligned from the last dimension; a size of 1 repeats): IDENTITY over
    zero strides, folded into element-wise readers.

    >>> g = Graph(Device()); x = g.input([3, 1], "FLOAT32")
    >>> broadcast_to(x, [2, 3, 4]).sizes
    (2, 3, 4)
    """
    label = "dml.broadcast_to"
    graph = _graph_of(label, x=x)
    target = to_uint_list(label, "sizes", sizes)
    rank = len(x.sizes)
    if len(target) < rank or any(size not in (1, wanted) for size, wanted in zip(x.sizes, target[-rank:],
                                                                                  strict=True)):
        raise ValidationError(f"{label}: x's sizes {list(x.sizes)} do not broadcast to {describe(list(target))} "
                              f"(NumPy's rules: aligned from the last dimension, each size equal or 1)")
    source, view = _source(x)
    return _identity_view(graph, source, _broadcast_desc(view, target))


# -- GEMM and CONVOLUTION: DirectMLX's dml::Gemm and dml::Convolution ----------------------------------------------

def _fused_desc(fused_activation: object) -> Any:
    """A fused_activation argument as the descriptor's FusedActivation: a dml.FusedActivation's desc; an operator
    descriptor (a fused ELEMENT_WISE_CLIP, ACTIVATION_SOFTMAX, ...) or anything else as given, for the operator to
    judge with its rules and messages."""
    return fused_activation.desc if isinstance(fused_activation, FusedActivation) else fused_activation


def gemm(a: Expression, b: Expression, c: Expression | None = None,
         trans_a: MatrixTransform | str = MatrixTransform.NONE, trans_b: MatrixTransform | str = MatrixTransform.NONE,
         alpha: float = 1.0, beta: float = 1.0,
         fused_activation: FusedActivation | OperatorDesc | None = None) -> Expression:
    """dml::Gemm -> DML_OPERATOR_GEMM: FusedActivation(alpha * op(a) x op(b) + beta * c), op = the matrix or its
    transpose over the last two dimensions (trans_a, trans_b: "NONE" or "TRANSPOSE"). Output: a's data type, sizes
    [batch..., M, N] with M and N from op(a) and op(b) (GemmOperatorDesc.matrix_sizes).

    Beyond DirectMLX, which needs every tensor of the output's sizes: the leading (batch) sizes of a and b broadcast
    by NumPy's rules (a missing or size-1 batch read through zero strides, as DML broadcasts), and c broadcasts to the
    output's sizes (a bias row [N] is c = [N]). A transpose, reshape or broadcast_to feeding a, b or c is folded into
    the strides GEMM reads (no IDENTITY runs for it). `fused_activation`: a dml.FusedActivation, or a fused
    descriptor (ElementWiseClipOperatorDesc(None, None, None, min, max), ActivationSoftmaxOperatorDesc(), ...).

    >>> g = Graph(Device()); a = g.input([2, 4, 3], "FLOAT32"); b = g.input([5, 3], "FLOAT32")
    >>> gemm(a, b, trans_b="TRANSPOSE").sizes                       # b^T is [3, 5], used by both batches
    (2, 4, 5)
    """
    label = "dml.gemm"
    graph = _graph_of(label, ("c",), a=a, b=b, c=c)
    (a_source, a_view), (b_source, b_view) = _source(a), _source(b)
    if min(len(a.sizes), len(b.sizes)) >= 2:    # else GEMM refuses the rank, with its message
        batch = _broadcast_sizes(label, {"a's batch": a.sizes[:-2], "b's batch": b.sizes[:-2]})
        a_view = _broadcast_desc(a_view, batch + a.sizes[-2:])
        b_view = _broadcast_desc(b_view, batch + b.sizes[-2:])
    activation = _fused_desc(fused_activation)
    gemm_desc: Any = GemmOperatorDesc      # it converts and checks the arguments as given (names, numbers, ...)
    sizes = a_view.sizes
    if min(len(a.sizes), len(b.sizes)) >= 2:    # M and N by the descriptor's own rule; the batch sizes a's (above)
        _, m, n, _ = gemm_desc(a_view, b_view, None, a_view, trans_a, trans_b, alpha, beta,
                               activation).matrix_sizes()
        sizes = (*a_view.sizes[:-2], m, n)
    c_source, c_view = (None, None) if c is None else _source(c)
    if c is not None and c_view is not None:
        if len(c.sizes) > len(sizes) or any(size not in (1, wanted) for size, wanted in
                                            zip(c.sizes, sizes[len(sizes) - len(c.sizes):], strict=True)):
            raise ValidationError(f"{label}: c's sizes {list(c.sizes)} do not broadcast to the output's "
                                  f"{list(sizes)} (NumPy's rules: aligned from the last dimension, each size equal "
                                  f"or 1)")
        c_view = _broadcast_desc(c_view, sizes)
    desc = gemm_desc(a_view, b_view, c_view, _packed(a.dtype, sizes), trans_a, trans_b, alpha, beta, activation)
    return graph._add_operator(desc, [a_source, b_source, c_source])[0]


def _convolution_sizes(probe: ConvolutionOperatorDesc) -> tuple[int, ...] | None:
    """The output sizes of `probe` (its OutputTensor a placeholder) by ConvolutionOperatorDesc.expected_output_sizes,
    or None where the descriptor refuses the rest first (ranks, array lengths, groups, a window larger than the
    input), with its own message."""
    source, kernel, count = probe.input_tensor.sizes, probe.filter_tensor.sizes, probe.spatial_count
    arrays = (probe.spatial_strides, probe.spatial_dilations, probe.spatial_start_padding, probe.spatial_end_padding,
              probe.spatial_output_padding)
    if len(source) < 3 or len(kernel) != len(source) or count != len(source) - 2 or probe.group_count < 1 or \
            any(len(items) != count for items in arrays):
        return None
    sizes = probe.expected_output_sizes()
    return sizes if min(sizes) >= 1 else None


def convolution(x: Expression, w: Expression, bias: Expression | None = None,
                mode: ConvolutionMode | str = ConvolutionMode.CROSS_CORRELATION,
                direction: ConvolutionDirection | str = ConvolutionDirection.FORWARD,
                strides: Sequence[int] | None = None, dilations: Sequence[int] | None = None,
                start_padding: Sequence[int] | None = None, end_padding: Sequence[int] | None = None,
                output_padding: Sequence[int] | None = None, group_count: int = 1,
                fused_activation: FusedActivation | OperatorDesc | None = None,
                output_sizes: Sequence[int] | None = None) -> Expression:
    """dml::Convolution -> DML_OPERATOR_CONVOLUTION of x {N, C, spatial...} with the filter w (FORWARD: {Cout,
    C / group_count, k...}; BACKWARD, the transposed convolution: {C, Cout / group_count, k...}), DirectMLX's
    defaults: CROSS_CORRELATION, FORWARD, strides and dilations 1, paddings 0 (None: one per spatial dimension),
    one group. Output: x's data type; sizes inferred by ConvolutionOperatorDesc.expected_output_sizes unless
    `output_sizes` gives them (DirectMLX's last parameter). `bias` is {1, Cout, 1...}, or [Cout] (read as that
    through strides). A transpose feeding x (NHWC data as NCHW) is folded into the strides the operator reads.

    >>> g = Graph(Device()); x = g.input([1, 3, 8, 8], "FLOAT32"); w = g.input([6, 3, 3, 3], "FLOAT32")
    >>> convolution(x, w, strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1]).sizes
    (1, 6, 4, 4)
    """
    label = "dml.convolution"
    graph = _graph_of(label, ("bias",), x=x, w=w, bias=bias)
    (x_source, x_view), (w_source, w_view) = _source(x), _source(w)
    activation = _fused_desc(fused_activation)
    arrays = (strides, dilations, start_padding, end_padding, output_padding)
    convolution_desc: Any = ConvolutionOperatorDesc    # it converts and checks the arguments as given
    probe = convolution_desc(x_view, w_view, None, x_view, mode, direction, None, *arrays, group_count, activation)
    if output_sizes is not None:
        sizes = to_uint_list(label, "output_sizes", output_sizes)
    else:
        sizes = _convolution_sizes(probe) or x.sizes
    bias_source, bias_view = (None, None) if bias is None else _source(bias)
    if bias_view is not None and bias_view.dimension_count == 1 and len(sizes) >= 2:
        spatial = (0,) * (len(sizes) - 2)        # [Cout] read as {1, Cout, 1...}
        bias_view = _view(bias_view, (1, bias_view.sizes[0], *(1 for _ in spatial)),
                          (0, bias_view.element_strides[0], *spatial))
    desc = convolution_desc(x_view, w_view, bias_view, _packed(x.dtype, sizes), probe.mode, probe.direction, None,
                            *arrays, group_count, activation)
    return graph._add_operator(desc, [x_source, w_source, bias_source])[0]


# -- compiling and dispatching ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedBuffer:
    """Where one tensor of a compiled graph lives in its arena, and for which steps it must stay intact.

    `first_step` is the node that writes it (-1: a graph input, written before step 0); `last_step` the last node
    that reads it (the step count for a graph output, read when the dispatch ends).
    """

    name: str
    kind: str            # "input", "intermediate" or "output"
    offset: int
    size: int
    first_step: int
    last_step: int

    def overlaps(self, other: PlannedBuffer) -> bool:
        """Whether the two are alive at one step and share a byte."""
        alive = self.first_step <= other.last_step and other.first_step <= self.last_step
        return alive and self.offset < other.offset + other.size and other.offset < self.offset + self.size


@dataclass
class _Step:
    node: _Node
    compiled: CompiledOperator
    inputs: list[Binding | None]
    outputs: list[Binding]


class CompiledGraph:
    """A compiled graph (IDMLCompiledOperator from CompileGraph): call it with {name or input expression: array};
    it returns one new array per output, in the order of `outputs`.

    Every buffer lives in one arena reused by every dispatch; tensors whose lifetimes do not overlap share memory
    (`buffer_plan`). One dispatch at a time: the arena is shared state.

    On a backend with device memory (the gpu) the arena is device memory (`Device.create_buffer`), allocated at
    compile time: a dispatch writes the inputs into it, records every node into one submission (`Device.batch`) and
    reads the outputs' ranges back once; intermediates never leave the device, and constants are uploaded when the
    graph is compiled. The first run records the nodes' dispatches as it goes; later runs replay them (the arena's
    bindings never change), without binding or checking each node again, except on a debug device, whose checks
    of the data run every time. On the cpu the arena is host memory, allocated by the first dispatch on NumPy
    arrays (a graph run only on Dask arrays never allocates it), and large packed inputs are bound where they lie.
    `run()` runs the nodes on the arena as it stands, for data written and read through `binding_of`'s ranges.

    A graph's tensors are logical: the element limit (DECISIONS 2) is checked where a kernel sees them whole, at the
    first dispatch on NumPy arrays on the cpu, and on every chunk on Dask arrays. (On the gpu a tensor must fit one
    storage buffer binding, at most 4 GiB, which its create_operator checks as the graph is built.)
    """

    def __init__(self, graph: Graph, outputs: Expression | Sequence[Expression], flags: ExecutionFlags) -> None:
        label = "Graph.compile"
        self.graph = graph
        self.flags = flags
        if isinstance(outputs, Expression):
            outputs = [outputs]
        if not isinstance(outputs, Sequence) or isinstance(outputs, (str, bytes, bytearray, memoryview)):
            raise ValidationError(f"{label}: outputs is a {type(outputs).__name__}; it must be a list of "
                                  f"dml.Expression")
        if not outputs:
            raise ValidationError(f"{label}: outputs is empty; a graph needs at least one output (OutputCount >= 1)")
        for index, output in enumerate(outputs):
            if not isinstance(output, Expression):
                raise ValidationError(f"{label}: outputs[{index}] is a {type(output).__name__}; it must be a "
                                      f"dml.Expression")
            if output.graph is not graph:
                raise ValidationError(f"{label}: outputs[{index}] ({output.name}) belongs to another graph; a graph "
                                      f"compiles only its own expressions")
            if output.node.kind != "operator":
                raise ValidationError(f"{label}: outputs[{index}] is the graph {output.node.kind} {output.name!r}; "
                                      f"a graph output must be computed by an operator (DML_GRAPH_DESC output edges "
                                      f"leave operator nodes)")
        self.outputs: tuple[Expression, ...] = tuple(outputs)
        order = _topological_order(label, graph, self.outputs)
        used_inputs = {id(expression) for node in order for expression in node.inputs
                       if expression is not None and expression.node.kind == "input"}
        self.inputs: tuple[Expression, ...] = tuple(expression for expression in graph.inputs
                                                    if id(expression) in used_inputs)
        #: Declared inputs no output depends on: a dispatch may leave them out (and what it gives is not read).
        self.unused_inputs: tuple[Expression, ...] = tuple(expression for expression in graph.inputs
                                                           if id(expression) not in used_inputs)
        for expression in self.unused_inputs:
            warnings.warn(f"{label}: input {expression.name!r} is not used by any output; dispatches may leave it "
                          f"out", UserWarning, stacklevel=3)
        self._plan_and_compile(order)

    def __repr__(self) -> str:
        return (f"CompiledGraph(inputs={[expression.name for expression in self.inputs]}, "
                f"outputs={[expression.name for expression in self.outputs]}, steps={len(self._nodes)}, "
                f"arena={self.arena_size} bytes)")

    # -- compile time -----------------------------------------------------------------------------------------

    def _plan_and_compile(self, order: list[_Node]) -> None:
        end = len(order)
        # Each tensor's lifetime: from the step that writes it to the last step that reads it.
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        values: dict[int, Expression] = {}
        for expression in self.inputs:
            first[id(expression)], last[id(expression)] = -1, -1
            values[id(expression)] = expression
        for step, node in enumerate(order):
            for expression in node.outputs:
                first[id(expression)] = last[id(expression)] = step
                values[id(expression)] = expression
            for source in node.inputs:
                if source is not None and source.node.kind != "constant":
                    last[id(source)] = step     # steps run in order: the latest reader comes last
        output_ids = {id(expression) for expression in self.outputs}
        for key in output_ids:
            last[key] = end
        planned: dict[int, PlannedBuffer] = {}
        for key in sorted(values, key=lambda key: (first[key], values[key].node.index, values[key].output_index)):
            expression = values[key]
            kind = ("input" if expression.node.kind == "input" else
                    "output" if key in output_ids else "intermediate")
            size = expression.desc.total_tensor_size_in_bytes
            alignment = max(BUFFER_ALIGNMENT, expression.desc.guaranteed_base_offset_alignment)
            offset = _first_fit([buffer for buffer in planned.values()
                                 if buffer.first_step <= last[key] and first[key] <= buffer.last_step],
                                size, alignment)
            planned[key] = PlannedBuffer(expression.name, kind, offset, size, first[key], last[key])
        self.buffer_plan: tuple[PlannedBuffer, ...] = tuple(planned.values())
        #: The arena's size in bytes.
        self.arena_size = max(buffer.offset + buffer.size for buffer in self.buffer_plan)
        self._planned = planned
        device = self.graph.device
        self._on_device = has_device_memory(device)

        self._nodes: list[tuple[_Node, CompiledOperator]] = []
        constants: dict[int, Binding] = {}     # on the device: one upload per constant, shared by its readers
        for node in order:
            assert node.operator is not None
            compiled = device.compile_operator(node.operator, self.flags)
            owned = [None if expression is None or expression.node.kind != "constant"
                     else self._constant_binding(expression, constants) for expression in node.inputs]
            if any(binding is not None for binding in owned):
                compiled.initialize(owned)       # copies the constants (OWNED_BY_DML) once, to the device's memory
            self._nodes.append((node, compiled))

        # Dispatch-time tables: which inputs exist and which must be checked where strides alias.
        declared = self.inputs + self.unused_inputs
        self._by_name = {expression.name: expression for expression in declared}
        self._declared_ids = {id(expression) for expression in declared}
        self._declared = ", ".join(repr(expression.name) for expression in self.graph.inputs[:len(declared)]) or "none"
        self._aliased_inputs = {id(expression) for expression in self.inputs
                                if strides_overlap(expression.sizes, expression.desc.element_strides)}
        self._arena: NDArray | DeviceMemory | None = None
        if self._on_device:
            self._allocate_arena()

    def _check_element_limits(self) -> None:
        """DECISIONS 2 on every tensor a kernel will see whole (deferred while the graph was built)."""
        for expression in self.inputs:
            check_element_limit("Graph.input", expression.name, expression.desc)
        for node, _ in self._nodes:
            assert node.operator is not None
            desc = node.operator.desc
            for name, tensor in (*desc.input_slots(), *desc.output_slots()):
                if tensor is not None:
                    check_element_limit(desc.label, name, tensor)

    @property
    def arena(self) -> NDArray | DeviceMemory:
        """The memory every planned buffer lives in (host memory is allocated on first use)."""
        return self._arena if self._arena is not None else self._allocate_arena()

    def _allocate_arena(self) -> NDArray | DeviceMemory:
        """The arena, and every binding, step and view into it."""
        if not self._on_device:
            self._check_element_limits()
        # The device's memory: on the gpu every tensor stays there (only inputs and outputs cross to the host); on
        # the cpu, host memory that starts on a cache line (offsets inside it are multiples of BUFFER_ALIGNMENT),
        # as a plain array, so that the outputs' copies are plain arrays too.
        memory = self.graph.device.create_buffer(self.arena_size)
        arena: NDArray | DeviceMemory = memory if self._on_device else np.asarray(memory)
        planned = self._planned
        self._bindings = {key: Binding(arena, buffer.offset, buffer.size) for key, buffer in planned.items()}
        self._steps: list[_Step] = []
        for node, compiled in self._nodes:
            inputs = [None if expression is None or expression.node.kind == "constant"
                      else self._bindings[id(expression)] for expression in node.inputs]
            outputs = [self._bindings[id(expression)] for expression in node.outputs]
            self._steps.append(_Step(node, compiled, inputs, outputs))
        self._run: list[tuple[Callable[[Sequence[Binding | None], Sequence[Binding]], None],
                              list[Binding | None], list[Binding]]] = [
            (step.compiled.execute, step.inputs, step.outputs) for step in self._steps]
        self._replay: list[Any] | None = None   # the nodes' device work, once the first run has captured it
        self._input_views: dict[int, NDArray] = {}
        self._output_views: list[NDArray] = []
        self._zero_copy_slots: dict[int, list[tuple[list[Binding | None], int]]] = {}
        self._arena = arena
        if self._on_device:
            self._plan_device_transfers()
            return arena
        host_arena = cast("NDArray", arena)
        self._input_views = {id(expression): _tensor_view(host_arena, planned[id(expression)].offset,
                                                          expression.desc, writable=True)
                             for expression in self.inputs}
        self._output_views = [_tensor_view(host_arena, planned[id(expression)].offset, expression.desc,
                                           writable=False) for expression in self.outputs]
        # Large packed inputs may be bound in place: the input lists (and slots) that read each of them.
        for expression in self.inputs:
            desc = expression.desc
            packed_bytes = desc.element_count * desc.data_type.element_size
            if desc.is_packed and packed_bytes == desc.total_tensor_size_in_bytes >= ZERO_COPY_MIN_BYTES:
                self._zero_copy_slots[id(expression)] = [
                    (step.inputs, slot) for step in self._steps for slot, source in enumerate(step.node.inputs)
                    if source is expression]
        return arena

    def _constant_binding(self, expression: Expression, constants: dict[int, Binding]) -> Binding:
        """The initializer binding of a constant: its host bytes on the cpu; on the device, one device buffer per
        constant (initialize keeps OWNED_BY_DML data that is bound to device memory on the device)."""
        data = expression.node.data
        assert data is not None
        if not self._on_device:
            return Binding(data)
        binding = constants.get(id(expression))
        if binding is None:
            binding = constants[id(expression)] = Binding(self.graph.device.create_buffer(data))
        return binding

    def _plan_device_transfers(self) -> None:
        """Where each input is written into the device arena and which ranges are read back for the outputs.

        Outputs are read in as few transfers as possible: ranges closer than READ_GAP_BYTES are read as one.
        """
        # (offset, desc, packed): a packed input's C-order bytes are the tensor's; others are laid out at their strides.
        self._input_placements = {id(expression): (self._planned[id(expression)].offset, expression.desc,
                                                   expression.desc.is_packed)
                                  for expression in self.inputs}
        spans: list[list[int]] = []
        for start, end in sorted({(self._planned[id(expression)].offset,
                                   self._planned[id(expression)].offset + self._planned[id(expression)].size)
                                  for expression in self.outputs}):
            if spans and start - spans[-1][1] <= READ_GAP_BYTES:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        self._read_spans = [(start, end) for start, end in spans]
        self._output_places: list[tuple[int, int, TensorDesc]] = []   # (span index, offset in the span, desc)
        for expression in self.outputs:
            offset = self._planned[id(expression)].offset
            index = next(index for index, (start, end) in enumerate(self._read_spans) if start <= offset < end)
            self._output_places.append((index, offset - self._read_spans[index][0], expression.desc))

    @property
    def steps(self) -> tuple[CompiledOperator, ...]:
        """The compiled operators, in the order a dispatch runs them."""
        return tuple(compiled for _, compiled in self._nodes)

    def binding_of(self, expression: Expression) -> Binding:
        """The Binding (arena range) planned for an input, intermediate or output of this compiled graph."""
        if self._arena is None:
            self._allocate_arena()
        binding = self._bindings.get(id(expression))
        if binding is None:
            raise ValidationError(f"CompiledGraph: {expression!r} has no buffer in this compiled graph (a constant, "
                                  f"or not needed by its outputs)")
        return binding

    def plan_of(self, expression: Expression) -> PlannedBuffer:
        """The PlannedBuffer of an input, intermediate or output of this compiled graph."""
        self.binding_of(expression)
        return self._planned[id(expression)]

    # -- dispatch ---------------------------------------------------------------------------------------------

    def __call__(self, inputs: Mapping[str | Expression, NDArray]) -> list[NDArray]:
        """Binds every input (by name or by expression), runs every node on the planned buffers and returns a
        new array per output. Every input is checked before anything runs.

        With any input a Dask array, returns one lazy Dask array per output instead (opendml.dask_graph)."""
        arrays = self._resolve(inputs)
        if not all(isinstance(array, np.ndarray) for array in arrays.values()):
            from .dask_graph import lower  # Dask is imported only where a Dask array is given

            return lower(self, arrays)
        if self._on_device:
            return self._dispatch_on_device(arrays)
        if self._arena is None:
            self._allocate_arena()
        in_place: list[tuple[list[tuple[list[Binding | None], int]], Binding]] = []
        try:
            for key, array in arrays.items():
                view = self._input_views.get(key)
                if view is None:
                    continue  # an unused input: checked, never read
                slots = self._zero_copy_slots.get(key)
                if slots is not None and array.flags.c_contiguous and array.flags.aligned:
                    in_place.append((slots, self._bindings[key]))
                    binding = Binding(array)
                    for input_bindings, slot in slots:
                        input_bindings[slot] = binding
                    continue
                lay_out_input(view, array, key in self._aliased_inputs, self._name_of(key))
            self._run_nodes()
        finally:
            # Back to the arena's bindings, so that no caller's array is held after the dispatch.
            for slots, arena_binding in in_place:
                for input_bindings, slot in slots:
                    input_bindings[slot] = arena_binding
        return [view.copy() for view in self._output_views]

    dispatch = __call__

    def _dispatch_on_device(self, arrays: dict[int, NDArray]) -> list[NDArray]:
        """The device arena: every input checked and laid out first, then written; every node recorded into one
        submission; the outputs' ranges read back once."""
        memory = cast("DeviceMemory", self.arena)
        writes: list[tuple[int, NDArray]] = []
        for key, array in arrays.items():
            placement = self._input_placements.get(key)
            if placement is None:
                continue  # an unused input: checked, never read
            offset, desc, packed = placement
            if packed:
                writes.append((offset, np.ascontiguousarray(array)))   # its C-order bytes are the tensor's
                continue
            staging = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
            lay_out_input(_tensor_view(staging, 0, desc, writable=True), array, key in self._aliased_inputs,
                          self._name_of(key))
            writes.append((offset, staging))
        for offset, data in writes:
            _write_range(memory, offset, data)
        self._run_nodes()
        chunks = [np.frombuffer(_read_range(memory, start, end - start), np.uint8)
                  for start, end in self._read_spans]
        return [_tensor_view(chunks[index], offset, desc, writable=False).copy()
                for index, offset, desc in self._output_places]

    def run(self) -> None:
        """Runs every node on the planned buffers as they stand: no input is written and no output read back.
        For data that lives in the arena: written and read through the ranges of `binding_of` (on the gpu, with
        `GpuBuffer.write` and `read`, or by executes of your own bound there)."""
        if self._arena is None:
            self._allocate_arena()
        self._run_nodes()

    def _run_nodes(self) -> None:
        """Every node, in order, into one submission on the gpu: executed (and there captured) the first time,
        replayed after that. A debug device captures nothing: its layer checks the data of every dispatch."""
        device = self.graph.device
        if self._replay is not None:
            device.backend.replay(self._replay)
            return
        with device.batch(), (nullcontext(None) if device.debug else device.backend.capture()) as work:
            for execute, input_bindings, output_bindings in self._run:
                execute(input_bindings, output_bindings)
        self._replay = work     # None on the cpu, which replays nothing

    def _name_of(self, key: int) -> str:
        return next(expression.name for expression in self.inputs if id(expression) == key)

    def _resolve(self, inputs: Mapping[str | Expression, NDArray]) -> dict[int, NDArray]:
        label = "CompiledGraph"
        if not isinstance(inputs, Mapping):
            raise BindingError(f"{label}: inputs is a {type(inputs).__name__}; it must be a dict of {{input name or "
                               f"Expression: array}}")
        declared = self._declared
        arrays: dict[int, NDArray] = {}
        for key, array in inputs.items():
            if isinstance(key, str):
                expression = self._by_name.get(key)
                if expression is None:
                    raise BindingError(f"{label}: {key!r} is not an input of this graph; its inputs are {declared}")
            elif isinstance(key, Expression):
                expression = key
                if expression.graph is not self.graph:
                    raise BindingError(f"{label}: {expression.name!r} is an expression of another graph; its inputs "
                                       f"are {declared}")
                if expression.node.kind != "input":
                    what = "a constant" if expression.node.kind == "constant" else "an operator's output"
                    raise BindingError(f"{label}: {expression.name!r} is not an input of this graph (it is "
                                       f"{what}); its inputs are {declared}")
                if id(expression) not in self._declared_ids:
                    raise BindingError(f"{label}: input {expression.name!r} was declared after the graph was "
                                       f"compiled; this compiled graph's inputs are {declared}")
            else:
                raise BindingError(f"{label}: key {key!r} is a {type(key).__name__}; keys must be input names or "
                                   f"input Expressions")
            name = expression.name
            if id(expression) in arrays:
                raise BindingError(f"{label}: input {name!r} is given twice (by name and by expression)")
            if not isinstance(array, np.ndarray):
                from .dask_graph import is_dask_array  # imports no Dask; a Dask array is checked, never computed

                array = array if is_dask_array(array) else logical_array(label, f"input {name!r}", array)
            dtype = expression.dtype.numpy_dtype
            if array.dtype != dtype:
                raise BindingError(f"{label}: input {name!r} has dtype {array.dtype}; it must be {dtype} (DataType "
                                   f"{expression.dtype.name})")
            if array.shape != expression.sizes:
                raise BindingError(f"{label}: input {name!r} has shape {list(array.shape)}; it must be "
                                   f"{list(expression.sizes)}")
            arrays[id(expression)] = array
        missing = [expression.name for expression in self.inputs if id(expression) not in arrays]
        if missing:
            raise BindingError(f"{label}: input {missing[0]!r} is missing" +
                               (f" (and {', '.join(repr(name) for name in missing[1:])})" if missing[1:] else ""))
        return arrays


def _topological_order(label: str, graph: Graph, outputs: Sequence[Expression]) -> list[_Node]:
    """The operator nodes the outputs depend on, each after every node it reads (depth-first post-order).

    Raises on a cycle, as CompileGraph does for a DML_GRAPH_DESC that is not a DAG (expressions are built only from
    earlier ones, so only a tampered graph has one), and on a node of another graph.
    """
    order: list[_Node] = []
    state: dict[int, int] = {}      # node id -> 1 while on the current path, 2 once ordered
    for output in outputs:
        if state.get(id(output.node)) == 2:
            continue
        stack: list[tuple[_Node, int]] = [(output.node, 0)]
        state[id(output.node)] = 1
        while stack:
            node, position = stack[-1]
            if position == len(node.inputs):
                stack.pop()
                state[id(node)] = 2
                if node.kind == "operator":
                    order.append(node)
                continue
            stack[-1] = (node, position + 1)
            expression = node.inputs[position]
            if expression is None:
                continue
            source = expression.node
            if source.graph is not graph:
                raise ValidationError(f"{label}: {node.name} reads {expression.name!r} of another graph")
            seen = state.get(id(source))
            if seen == 1:
                path = [item.name for item, _ in stack[[item for item, _ in stack].index(source):]]
                raise ValidationError(f"{label}: the graph has a cycle ({' -> '.join([*path, source.name])}); "
                                      f"DML_GRAPH_DESC must be a directed acyclic graph")
            if seen is None:
                state[id(source)] = 1
                stack.append((source, 0))
    return order


def _first_fit(live: Sequence[PlannedBuffer], size: int, alignment: int) -> int:
    """The lowest aligned offset where `size` bytes overlap none of the `live` buffers."""
    offset = 0
    for buffer in sorted(live, key=lambda buffer: buffer.offset):
        if offset + size <= buffer.offset:
            break
        offset = max(offset, math.ceil((buffer.offset + buffer.size) / alignment) * alignment)
    return offset


def has_device_memory(device: Device) -> bool:
    """Whether the device's memory (`create_buffer`) is device memory, not host memory (the gpu backend)."""
    return isinstance(device.create_buffer(0), DeviceMemory)


def _read_range(memory: DeviceMemory, offset: int, size: int) -> bytes:
    """Bytes [offset, offset + size) of device memory, copied back in one transfer."""
    from .backends.gpu.context import GpuBuffer

    if not isinstance(memory, GpuBuffer):
        raise TypeError(f"CompiledGraph: no way to read a range of {memory!r}")
    return memory.context.read(memory.handle, offset, size)


def _write_range(memory: DeviceMemory, offset: int, data: NDArray) -> None:
    """Host bytes into device memory at `offset` (a multiple of BUFFER_ALIGNMENT), queued before later work."""
    from .backends.gpu.context import GpuBuffer

    if not isinstance(memory, GpuBuffer):
        raise TypeError(f"CompiledGraph: no way to write into {memory!r}")
    memory.write(data, offset)
