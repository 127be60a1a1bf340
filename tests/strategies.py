"""Hypothesis strategies and raw-buffer helpers shared by the property tests.

The stride and buffer arithmetic here is deliberately independent of the package's own code: element offsets are
computed with plain index arithmetic (``sum(index[d] * stride[d])``) over every logical index.

Strides are always in ELEMENTS; ``None`` means packed (row-major, last dimension fastest).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

import opendml as dml
from opendml.ops.activations import ActivationOperatorDesc
from opendml.ops.elementwise import ElementWiseOperatorDesc

Strides = tuple[int, ...] | None

STRIDE_KINDS: tuple[str, ...] = ("packed", "padded", "transposed", "zero", "mixed")
# Outputs must never alias two elements onto one location, so no zero strides there.
OUTPUT_STRIDE_KINDS: tuple[str, ...] = ("packed", "padded", "transposed", "mixed")

# Byte offsets of bindings are multiples of 16.
BINDING_ALIGNMENT = 16

# ---------------------------------------------------------------------------------------------------------------------
# Plain stride arithmetic
# ---------------------------------------------------------------------------------------------------------------------


def packed_strides(sizes: Sequence[int], order: Sequence[int] | None = None) -> tuple[int, ...]:
    """Packed strides laying the dimensions out in ``order`` (innermost first; default: last dimension innermost)."""
    rank = len(sizes)
    if order is None:
        order = list(reversed(range(rank)))
    strides = [0] * rank
    running = 1
    for d in order:
        strides[d] = running
        running *= sizes[d]
    return tuple(strides)


def effective_strides(sizes: Sequence[int], strides: Strides) -> tuple[int, ...]:
    return packed_strides(sizes) if strides is None else tuple(strides)


def logical_indices(sizes: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every logical index in row-major order."""
    return itertools.product(*(range(n) for n in sizes))


def element_offset(index: Sequence[int], strides: Sequence[int]) -> int:
    return sum(i * s for i, s in zip(index, strides, strict=True))


def element_offsets(sizes: Sequence[int], strides: Strides) -> np.ndarray:
    """Array of ``sizes`` holding each logical element's offset (in elements): ``sum(index[d] * stride[d])``."""
    s = effective_strides(sizes, strides)
    offsets = np.zeros(tuple(sizes), dtype=np.int64)
    for d, (n, stride) in enumerate(zip(sizes, s, strict=True)):
        axis_shape = [1] * len(sizes)
        axis_shape[d] = n
        offsets = offsets + (np.arange(n, dtype=np.int64) * stride).reshape(axis_shape)
    return offsets


def _byte_positions(offsets: np.ndarray, element_size: int, byte_offset: int) -> np.ndarray:
    """(elements, element_size) array of the byte addresses of each element, row-major."""
    return byte_offset + offsets.reshape(-1, 1) * element_size + np.arange(element_size, dtype=np.int64)


def extent_in_elements(sizes: Sequence[int], strides: Strides) -> int:
    """One past the largest element offset addressed (0 for an empty tensor)."""
    if any(n == 0 for n in sizes):
        return 0
    s = effective_strides(sizes, strides)
    return 1 + sum((n - 1) * st_ for n, st_ in zip(sizes, s, strict=True))


def tensor_size_in_bytes(element_size: int, sizes: Sequence[int], strides: Strides) -> int:
    """Bytes spanned by the tensor, rounded up to a multiple of 4 (DirectML's buffer tensor size)."""
    nbytes = extent_in_elements(sizes, strides) * element_size
    return (nbytes + 3) // 4 * 4


def is_non_overlapping(sizes: Sequence[int], strides: Strides) -> bool:
    """True when no two logical elements share an element offset."""
    offsets = element_offsets(sizes, strides).reshape(-1)
    return np.unique(offsets).size == offsets.size


# ---------------------------------------------------------------------------------------------------------------------
# Raw buffers
# ---------------------------------------------------------------------------------------------------------------------


def sentinel_bytes(nbytes: int, seed: int = 0) -> np.ndarray:
    """A non-uniform byte pattern, unrelated to any tensor data, used to fill gaps and untouched regions."""
    i = np.arange(nbytes, dtype=np.int64)
    return ((i * 151 + 89 + seed * 13) % 251).astype(np.uint8)


def build_buffer(
    x: np.ndarray,
    strides: Strides,
    *,
    byte_offset: int = 0,
    tail_bytes: int = 0,
    seed: int = 0,
) -> np.ndarray:
    """A raw uint8 buffer holding the logical array ``x`` at element ``strides`` from ``byte_offset``.

    The buffer spans ``byte_offset + tensor_size_in_bytes(...) + tail_bytes`` bytes; every byte not addressed by an
    element holds sentinel bytes.  With zero (or otherwise overlapping) strides the element written last in row-major
    order wins; read the logical array back with :func:`read_buffer` to get the tensor actually described.
    """
    esize = x.dtype.itemsize
    size = byte_offset + tensor_size_in_bytes(esize, x.shape, strides) + tail_bytes
    buf = sentinel_bytes(size, seed)
    if x.size == 0:
        return buf
    flat_offsets = element_offsets(x.shape, strides).reshape(-1)
    # Where elements share an offset, keep the one last in row-major order.
    unique_offsets, first_in_reversed = np.unique(flat_offsets[::-1], return_index=True)
    last = flat_offsets.size - 1 - first_in_reversed
    raw = np.ascontiguousarray(x).reshape(-1).view(np.uint8).reshape(-1, esize)
    buf[_byte_positions(unique_offsets, esize, byte_offset)] = raw[last]
    return buf


def read_buffer(
    buf: np.ndarray | bytes | bytearray,
    dtype: np.dtype | type,
    sizes: Sequence[int],
    strides: Strides,
    *,
    byte_offset: int = 0,
) -> np.ndarray:
    """Read the logical array of ``sizes`` at element ``strides`` from a raw buffer."""
    dt = np.dtype(dtype)
    data = np.frombuffer(bytes(buf), dtype=np.uint8)
    if any(n == 0 for n in sizes):
        return np.empty(tuple(sizes), dtype=dt)
    positions = _byte_positions(element_offsets(sizes, strides), dt.itemsize, byte_offset)
    return data[positions].copy().view(dt).reshape(tuple(sizes))


def addressed_byte_mask(
    nbytes: int, element_size: int, sizes: Sequence[int], strides: Strides, *, byte_offset: int = 0
) -> np.ndarray:
    """Boolean mask over a buffer of ``nbytes``: True for bytes belonging to some element of the tensor."""
    mask = np.zeros(nbytes, dtype=bool)
    if all(n > 0 for n in sizes):
        mask[_byte_positions(element_offsets(sizes, strides), element_size, byte_offset)] = True
    return mask


# ---------------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------------


@st.composite
def shapes(draw: st.DrawFn, rank: int, *, max_elements: int = 4096, max_side: int = 64) -> tuple[int, ...]:
    """Sizes of the given rank, each >= 1, with at most ``max_elements`` elements in all."""
    sizes = []
    budget = max_elements
    for _ in range(rank):
        n = draw(st.integers(1, max(1, min(max_side, budget))))
        sizes.append(n)
        budget //= n
    return tuple(draw(st.permutations(sizes)))


@st.composite
def strides_for(draw: st.DrawFn, sizes: Sequence[int], kind: str | None = None, *, allow_zero: bool = True) -> Strides:
    """Element strides of ``kind`` for ``sizes`` (drawn among the allowed kinds when ``kind`` is None).

    packed: None.  padded: row-major with gaps (inner stride and each outer stride larger than packed).
    transposed: packed along a random permutation of the dimensions.  zero: packed with stride 0 on some
    dimensions (broadcast).  mixed: permutation + padding + (when allowed) some zero strides.
    """
    rank = len(sizes)
    if kind is None:
        kind = draw(st.sampled_from(STRIDE_KINDS if allow_zero else OUTPUT_STRIDE_KINDS))
    if kind == "zero" and not allow_zero:
        raise ValueError("zero strides are not allowed here")
    if kind == "packed":
        return None
    order = list(reversed(range(rank)))
    if kind in ("transposed", "mixed"):
        order = draw(st.permutations(order))
    if kind in ("padded", "mixed"):
        strides = [0] * rank
        running = draw(st.integers(1, 3))
        for d in order:
            strides[d] = running
            running = running * sizes[d] + draw(st.integers(0, 5))
    else:
        strides = list(packed_strides(sizes, order))
    if kind == "zero" or (kind == "mixed" and allow_zero):
        min_zeros = 1 if kind == "zero" else 0
        zeroed = draw(st.sets(st.integers(0, rank - 1), min_size=min(min_zeros, rank), max_size=rank))
        for d in zeroed:
            strides[d] = 0
    return tuple(strides)


@st.composite
def tensor_descs(
    draw: st.DrawFn,
    data_type: dml.DataType,
    sizes: Sequence[int],
    kind: str | None = None,
    *,
    allow_zero: bool = True,
) -> dml.TensorDesc:
    """A valid ``opendml.TensorDesc`` of ``sizes`` with strides drawn by :func:`strides_for`."""

    strides = draw(strides_for(sizes, kind, allow_zero=allow_zero))
    return dml.TensorDesc(data_type, list(sizes), None if strides is None else list(strides))


def byte_offsets(max_blocks: int = 3) -> st.SearchStrategy[int]:
    """Binding byte offsets: multiples of 16."""
    return st.integers(0, max_blocks).map(lambda k: k * BINDING_ALIGNMENT)


def T(data_type: str | dml.DataType, sizes: list[int], strides: list[int] | None = None,
      **kwargs: object) -> dml.TensorDesc:
    """A TensorDesc in one short call, for the tables of bad descriptors."""
    return dml.TensorDesc(data_type, sizes, strides, **kwargs)  # type: ignore[arg-type]


def run_one_input(dev: Any, desc: Any, x: np.ndarray, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(the logical output, the logical input as bound) of one dispatch on `dev` of a descriptor with one InputTensor
    and one OutputTensor: `x` laid out by the input's strides 16 bytes into its buffer, the output between sentinel
    bytes (execute_between_sentinels checks that nothing outside its elements changed)."""
    compiled = dev.compile_operator(dev.create_operator(desc))
    tensor = desc.input_tensor
    raw = build_buffer(x, tensor.strides, byte_offset=16, seed=seed)
    logical = read_buffer(raw, x.dtype, tensor.sizes, tensor.strides, byte_offset=16)
    out = desc.output_tensor
    got = execute_between_sentinels(dev, compiled, [raw], out.data_type.element_size, out.sizes, out.strides,
                                    memory="host", seed=seed, label=desc.label)
    return read_buffer(got, out.data_type.numpy_dtype, out.sizes, out.strides, byte_offset=32), logical


def execute_between_sentinels(device: dml.Device, compiled: dml.CompiledOperator,
                              inputs: Sequence[np.ndarray | None], output_element_size: int,
                              output_sizes: Sequence[int], output_strides: Strides, *, memory: str, seed: int,
                              label: str) -> np.ndarray:
    """Binds each input's bytes (from build_buffer, its data at byte 16 x (1 + its position); None: an absent
    optional input, bound as None) and an output at byte 16 x (1 + the input count) of sentinel bytes, in device
    memory or host memory, executes, and checks that every input byte and every output byte outside the output's
    elements is as it was. Returns the output buffer's bytes."""
    output_offset = 16 * (len(inputs) + 1)
    total = output_offset + tensor_size_in_bytes(output_element_size, output_sizes, output_strides) + 11
    filler = sentinel_bytes(total, seed=seed)
    made = [None if data is None else device.create_buffer(data) if memory == "device" else data.copy()
            for data in (*inputs, filler)]
    compiled.execute([None if buffer is None else dml.Binding(buffer, 16 * (1 + index))
                      for index, buffer in enumerate(made[:-1])],
                     [dml.Binding(made[-1], output_offset)])
    got = [None if buffer is None else np.frombuffer(buffer.read(), np.uint8) if memory == "device" else buffer
           for buffer in made]
    for before, after in zip(inputs, got, strict=False):
        assert before is None or np.array_equal(before, after), f"{label}: an input changed"
    written = addressed_byte_mask(total, output_element_size, output_sizes, output_strides, byte_offset=output_offset)
    changed = np.flatnonzero((got[-1] != filler) & ~written)
    assert changed.size == 0, f"{label}: bytes outside the elements changed: {changed[:16].tolist()}"
    return got[-1]


# ---------------------------------------------------------------------------------------------------------------------
# Valid descriptors of every registered operator (the differential fuzzer, tests/test_fuzz_differential.py)
# ---------------------------------------------------------------------------------------------------------------------

#: (operator class, feature level) -> a strategy of descriptors of that class. A drawer may draw descriptors the
#: level refuses (a type or rank off its table): the fuzzer discards those, so they must be the exception.
DescriptorDrawer = Callable[[type[dml.OperatorDesc], dml.FeatureLevel], st.SearchStrategy[dml.OperatorDesc]]

#: The drawing hook of each operator class, by class; a class without one of its own uses its nearest base class's
#: (every standalone activation: ActivationOperatorDesc's). Whoever registers an operator registers its drawer here
#: (`draws_descriptors`): test_fuzz_differential fails for a registered operator without one.
DESCRIPTOR_DRAWERS: dict[type, DescriptorDrawer] = {}


def draws_descriptors(*classes: type) -> Callable[[DescriptorDrawer], DescriptorDrawer]:
    """Registers the decorated drawer for these operator classes (and their subclasses without one of their own)."""
    def register(drawer: DescriptorDrawer) -> DescriptorDrawer:
        for cls in classes:
            DESCRIPTOR_DRAWERS[cls] = drawer
        return drawer

    return register


def descriptor_drawer(cls: type[dml.OperatorDesc]) -> DescriptorDrawer | None:
    """The drawer for `cls`: its own, or its nearest registered base class's; None when there is none."""
    return next((DESCRIPTOR_DRAWERS[base] for base in cls.__mro__ if base in DESCRIPTOR_DRAWERS), None)


def registered_descriptor(draw: st.DrawFn, classes: Sequence[type[dml.OperatorDesc]],
                          levels: Sequence[dml.FeatureLevel], types: Any = None) -> Any:
    """A descriptor of one of `classes` at one of `levels`, drawn by its registered drawer, whose InputTensor's data
    type is among `types` (None: any)."""
    cls = draw(st.sampled_from(list(classes)))
    drawer = descriptor_drawer(cls)
    assert drawer is not None
    level = draw(st.sampled_from(list(levels)))
    return draw(drawer(cls, level).filter(lambda d: types is None or d.input_tensor.data_type in types))


def table_row(cls: type[dml.OperatorDesc], level: dml.FeatureLevel, title: str = "") -> Mapping[str, Any] | None:
    """The row of `cls`'s support table (the one titled `title` where it has several) in force at `level`."""
    from opendml.support import describe

    tables = cls.support_tables()
    table = tables.get(title) if title else next(iter(tables.values()), None)
    return None if table is None else describe(table, level)


def row_types(row: Mapping[str, Any] | None, name: str) -> tuple[dml.DataType, ...]:
    return tuple(row[name].data_types) if row is not None and name in row else (dml.DataType.FLOAT32,)


def row_ranks(row: Mapping[str, Any] | None, name: str) -> tuple[int, int]:
    return (row[name].min_rank, row[name].max_rank) if row is not None and name in row else (1, 4)


def small_sides(rank: int, max_side: int = 4, max_elements: int = 96) -> st.SearchStrategy[tuple[int, ...]]:
    return shapes(rank, max_elements=max_elements, max_side=max_side)


def input_desc(data_type: dml.DataType, sizes: Sequence[int]) -> st.SearchStrategy[dml.TensorDesc]:
    """An input tensor: any stride kind (zero strides included)."""
    return tensor_descs(data_type, sizes)


def output_desc(data_type: dml.DataType, sizes: Sequence[int]) -> st.SearchStrategy[dml.TensorDesc]:
    """An output tensor: packed, padded, transposed or mixed, never overlapping itself."""
    return tensor_descs(data_type, sizes, allow_zero=False)


@draws_descriptors(ActivationOperatorDesc)
@st.composite
def standalone_activation(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel
                          ) -> dml.OperatorDesc:
    """Any standalone activation, from its own support table and its parameter names: fair parameters (magnitudes
    1/8 to 4, either sign; Softplus's Steepness at least 1), a type and rank of the row in force."""
    row = table_row(cls, level, cls.OPERATOR_TYPE.name)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    parameters = []
    for name in cls.parameter_names():  # type: ignore[attr-defined]
        value = draw(st.floats(0.125, 4, width=32)) * draw(st.sampled_from((1.0, -1.0)))
        parameters.append(abs(value) + 1.0 if name == "steepness" else value)
    return cls(*parameters, input_tensor=draw(input_desc(data_type, sizes)),  # type: ignore[call-arg]
               output_tensor=draw(output_desc(data_type, sizes)))


@draws_descriptors(dml.ArgMinOperatorDesc, dml.ArgMaxOperatorDesc)
@st.composite
def arg_min_max(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    row = table_row(cls, level)
    low, high = row_ranks(row, "InputTensor")
    rank = draw(st.integers(low, min(high, 5)))
    sizes = draw(small_sides(rank, max_side=5))
    axes = draw(st.permutations(range(rank)))[: draw(st.integers(1, rank))]
    out_sizes = [1 if d in axes else n for d, n in enumerate(sizes)]
    x = draw(input_desc(draw(st.sampled_from(row_types(row, "InputTensor"))), sizes))
    y = draw(output_desc(draw(st.sampled_from(row_types(row, "OutputTensor"))), out_sizes))
    return cls(x, y, tuple(axes), draw(st.sampled_from(("INCREASING", "DECREASING"))))  # type: ignore[call-arg]


@draws_descriptors(dml.JoinOperatorDesc)
@st.composite
def join(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    row = table_row(cls, level)
    low, high = row_ranks(row, "InputTensors")
    rank = draw(st.integers(low, min(high, 5)))
    sizes = list(draw(small_sides(rank, max_elements=48)))
    axis = draw(st.integers(0, rank - 1))
    data_type = draw(st.sampled_from(row_types(row, "InputTensors")))
    parts = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    inputs = [draw(input_desc(data_type, [p if d == axis else n for d, n in enumerate(sizes)])) for p in parts]
    output = draw(output_desc(data_type, [sum(parts) if d == axis else n for d, n in enumerate(sizes)]))
    return cls(tuple(inputs), output, axis)  # type: ignore[call-arg]


@draws_descriptors(dml.GatherNdOperatorDesc)
@st.composite
def gather_nd(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """GATHER_ND (no batch dimensions): tuples of K coordinates into the input's first K meaningful dimensions."""
    from reference import gather_nd1_output_sizes

    row = table_row(cls, level)
    low, high = row_ranks(row, "InputTensor")
    rank = draw(st.integers(low, min(high, 5)))
    input_count = draw(st.integers(1, rank))
    tuple_size = draw(st.integers(1, input_count))
    indices_count = draw(st.integers(1, min(rank, rank + 1 - (input_count - tuple_size))))
    meaningful_input = list(draw(small_sides(input_count, max_elements=48)))
    free = list(draw(small_sides(indices_count - 1, max_side=3, max_elements=9)))
    input_sizes = [1] * (rank - input_count) + meaningful_input
    indices_sizes = [1] * (rank - indices_count) + free + [tuple_size]
    out_sizes = list(gather_nd1_output_sizes(tuple(input_sizes), tuple(indices_sizes), input_count, indices_count, 0))
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    index_type = draw(st.sampled_from(row_types(row, "IndicesTensor")))
    return cls(draw(input_desc(data_type, input_sizes)), draw(input_desc(index_type, indices_sizes)),  # type: ignore
               draw(output_desc(data_type, out_sizes)), input_count, indices_count)


@draws_descriptors(dml.MeanVarianceNormalizationOperatorDesc)
@st.composite
def mean_variance_normalization(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel
                                ) -> dml.OperatorDesc:
    """MEAN_VARIANCE_NORMALIZATION (4-D): Scale and Bias each present or not (the level refuses one alone below 5_2),
    each dimension the input's or 1; sometimes a fused activation."""
    from opendml.ops.activations import ACTIVATION_CLASSES

    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    sizes = draw(small_sides(4, max_side=4, max_elements=64))

    def side() -> dml.TensorDesc | None:
        if not draw(st.booleans()):
            return None
        return draw(input_desc(data_type, [n if draw(st.booleans()) else 1 for n in sizes]))

    activation = None
    if draw(st.booleans()):
        activation_cls = draw(st.sampled_from(tuple(ACTIVATION_CLASSES.values())))
        parameters = [draw(st.floats(0.25, 2, width=32)) + (1.0 if name == "steepness" else 0.0)
                      for name in activation_cls.parameter_names()]
        activation = activation_cls(*parameters)
    return cls(draw(input_desc(data_type, sizes)), side(), side(), draw(output_desc(data_type, sizes)),  # type: ignore
               draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from((1e-5, 1e-3, 1.0))), activation)


@draws_descriptors(ElementWiseOperatorDesc)
@st.composite
def element_wise(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any of the 62 ELEMENT_WISE operators, from its row (`INFO`): the types of the row in force (a `same_type`
    group shares one; QUANTIZE_LINEAR's ScaleTensor by its rule; POW's exponent the input's type below 3_0), a rank
    of the row, inputs at any strides, an optional zero point absent now and then from 6_2, and scalar fields drawn
    by kind: ScaleBias (float inputs) or None, FLOAT Min/Max/Exponent, CLIP1's MinMaxDataType and exact Min <= Max of
    the type, the enums, a parameterless or simple fused activation."""
    from opendml.ops.activations import ACTIVATION_CLASSES

    info = cls.INFO  # type: ignore[attr-defined]
    row = table_row(cls, level)
    fields = info.tensor_fields()
    def pick(options: Sequence[dml.DataType]) -> dml.DataType:
        """One of the types, a 64-bit one a quarter of the time where there is one (their rows are rarer)."""
        wide = [t for t in options if t.bits == 64]
        return draw(st.sampled_from(wide if wide and draw(st.integers(0, 3)) == 0 else list(options)))

    types: dict[str, dml.DataType] = {}
    for group in info.same_type:
        types.update(dict.fromkeys(group, pick([t for t in row_types(row, group[0])
                                               if all(t in row_types(row, field) for field in group)])))
    for field in fields:
        if field not in types:
            types[field] = pick(row_types(row, field))
    if info.short_name == "QUANTIZE_LINEAR":
        types["ScaleTensor"] = dml.DataType.FLOAT32 if types["InputTensor"] == dml.DataType.INT32 \
            else types["InputTensor"]
    if info.short_name == "POW" and level < dml.FeatureLevel.LEVEL_3_0:
        types["ExponentTensor"] = types["InputTensor"]
    low, high = row_ranks(row, fields[0])
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5))), max_elements=64))
    tensors: list[dml.TensorDesc | None] = []
    for field in fields:
        if field in info.optional and level >= dml.FeatureLevel.LEVEL_6_2 and draw(st.booleans()):
            tensors.append(None)
        elif field == "OutputTensor":
            tensors.append(draw(output_desc(types[field], sizes)))
        else:
            tensors.append(draw(input_desc(types[field], sizes)))
    first = types[fields[0]]
    scalars: list[Any] = []
    bounds = sorted(draw(st.floats(-4, 4, width=32)) for _ in range(2))
    if not first.is_float:
        type_info = np.iinfo(first.numpy_dtype)
        edges = sorted(draw(st.integers(int(type_info.min), int(type_info.max))) for _ in range(2))
    for name, kind in info.scalars:
        if kind == "SCALE_BIAS":
            scalars.append(dml.ScaleBias(draw(st.sampled_from((1.0, -0.5, 2.0, 0.1))),
                                         draw(st.sampled_from((0.0, 0.25, -1.0))))
                           if first.is_float and draw(st.booleans()) else None)
        elif kind == "FLOAT":
            scalars.append(draw(st.sampled_from((0.5, 2.0, 3.0, -1.0, 1.5))) if name == "Exponent"
                           else bounds[0] if name == "Min" else bounds[1])
        elif kind == "DATA_TYPE":
            scalars.append(first)
        elif kind == "SCALAR":
            if first.is_float:
                scalars.append(bounds[0] if name == "Min" else bounds[1])
            else:
                scalars.append(edges[0] if name == "Min" else edges[1])
        elif kind == "ROUNDING":
            scalars.append(draw(st.sampled_from(list(dml.RoundingMode))))
        elif kind == "INFINITY":
            scalars.append(draw(st.sampled_from(list(dml.IsInfinityMode))))
        elif kind == "ACTIVATION":
            activation = None
            if draw(st.booleans()):
                activation_cls = draw(st.sampled_from(tuple(ACTIVATION_CLASSES.values())))
                activation = activation_cls(*[draw(st.floats(0.25, 2, width=32)) + (1.0 if p == "steepness" else 0.0)
                                              for p in activation_cls.parameter_names()])
            scalars.append(activation)
    return cls(*tensors, *scalars)  # type: ignore[call-arg]


# -- GEMM and CONVOLUTION (issue 27) ----------------------------------------------------------------------------------

#: The descriptor classes once they exist (the drawers register for none before).
_GEMM = getattr(dml, "GemmOperatorDesc", None)
_CONVOLUTION = getattr(dml, "ConvolutionOperatorDesc", None)
_SOFTMAX = getattr(dml, "ActivationSoftmaxOperatorDesc", None)
_SOFTMAX1 = getattr(dml, "ActivationSoftmax1OperatorDesc", None)


def _FUSED_CLIP(low: float, high: float) -> dml.OperatorDesc:
    """ELEMENT_WISE_CLIP in its fused form: no tensors, no ScaleBias."""
    return dml.ElementWiseClipOperatorDesc(None, None, None, low, high)  # type: ignore[arg-type]


@st.composite
def fused_activations(draw: st.DrawFn, level: dml.FeatureLevel, *, gemm: bool = False, rank: int = 4
                      ) -> dml.OperatorDesc | None:
    """None half the time, else a fused-form activation the level has: one of the 17 activations (parameters 1/4 to
    2; Softplus's Steepness above 1), ELEMENT_WISE_CLIP from 6_0, and into GEMM (`gemm`) SOFTMAX or SOFTMAX1 (axes of
    a `rank`-dimension output) from 6_1."""
    from opendml.ops.activations import ACTIVATION_CLASSES

    if draw(st.booleans()):
        return None
    choices: list[Any] = [cls for cls in ACTIVATION_CLASSES.values() if cls.info().level <= level]
    if level >= dml.FeatureLevel.LEVEL_6_0 and _FUSED_CLIP is not None:
        choices.append("CLIP")
    if gemm and level >= dml.FeatureLevel.LEVEL_6_1 and _SOFTMAX is not None:
        choices += ["SOFTMAX", "SOFTMAX1"]
    choice = draw(st.sampled_from(choices))
    if choice == "CLIP":
        low, high = sorted(draw(st.floats(-3, 3, width=32)) for _ in range(2))
        return _FUSED_CLIP(low, high)
    if choice == "SOFTMAX":
        return _SOFTMAX()  # type: ignore[misc]
    if choice == "SOFTMAX1":
        axes = draw(st.permutations(range(rank)))[: draw(st.integers(1, rank))]
        return _SOFTMAX1(axes=tuple(axes))  # type: ignore[misc]
    return choice(*[draw(st.floats(0.25, 2, width=32)) + (1.0 if name == "steepness" else 0.0)  # type: ignore
                    for name in choice.parameter_names()])


def _gemm_drawer(cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> st.SearchStrategy[dml.OperatorDesc]:
    return gemm_descs(cls, level)


@st.composite
def gemm_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel, *, max_k: int = 24,
               max_side: int = 5) -> dml.OperatorDesc:
    """GEMM: a type and rank of the row in force, M and N 1 to `max_side`, K 1 to `max_k`, batch sizes 1 to 3 shared by
    every tensor (README: a broadcast batch is given by zero strides, which input_desc draws), TransA / TransB (a
    transpose folded into the strides by the transposed stride kind), C absent, full or broadcast within the matrix
    along M, N or both by zero strides (C has Output's sizes), Alpha and Beta among a few values (0 included), a
    fused activation now and then (CLIP from 6_0, SOFTMAX and SOFTMAX1 from 6_1)."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "ATensor")))
    low, high = row_ranks(row, "ATensor")
    rank = draw(st.integers(low, min(high, 4)))
    batch = [draw(st.integers(1, 3)) for _ in range(rank - 2)]
    m, n = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    k = draw(st.one_of(st.integers(1, 6), st.integers(1, max_k)))
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    a = draw(input_desc(data_type, [*batch, *((k, m) if trans_a else (m, k))]))
    b = draw(input_desc(data_type, [*batch, *((n, k) if trans_b else (k, n))]))
    c = None
    if draw(st.booleans()):
        sizes = [*batch, m, n]
        strides = list(effective_strides(sizes, draw(strides_for(sizes))))
        for d in draw(st.sampled_from([(), (rank - 2,), (rank - 1,), (rank - 2, rank - 1)])):
            strides[d] = 0
        c = dml.TensorDesc(data_type, sizes, strides)
    output = draw(output_desc(data_type, [*batch, m, n]))
    scalars = st.sampled_from([1.0, 0.5, -2.0, 0.0, 1.25])
    transform = dml.MatrixTransform  # type: ignore[attr-defined]
    return cls(a, b, c, output, transform.TRANSPOSE if trans_a else transform.NONE,  # type: ignore[call-arg]
               transform.TRANSPOSE if trans_b else transform.NONE, draw(scalars), draw(scalars),
               draw(fused_activations(level, gemm=True, rank=rank)))


@st.composite
def convolution_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel, *,
                      max_side: int = 5, max_channels: int = 3) -> dml.OperatorDesc:
    """CONVOLUTION: a type and rank of the row in force (1 to 3 spatial dimensions), both modes and directions, 1 to
    3 groups of 1 to `max_channels` channels each way (depthwise a quarter of the time: one input channel per
    group), batch 1 or 2, spatial sides 1 to `max_side`, filter sides 1 to 3, strides 1 to 3, dilations 1 or 2, each
    padding 0 to the filter's extent - 1 (at most 2), OutputPadding below the stride (BACKWARD only), an optional
    Bias, inputs at any strides (NHWC among them), a fused activation now and then; input sides large enough for an
    output."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    rank = draw(st.integers(max(low, 3), min(high, 5)))
    count = rank - 2
    backward = draw(st.booleans())
    groups = draw(st.integers(1, 3))
    depthwise = draw(st.integers(0, 3)) == 0
    cig = 1 if depthwise else draw(st.integers(1, max_channels))
    cog = draw(st.integers(1, max_channels))
    kernel = [draw(st.integers(1, 3)) for _ in range(count)]
    strides = [draw(st.integers(1, 3)) for _ in range(count)]
    dilations = [draw(st.integers(1, 2)) for _ in range(count)]
    extents = [(size - 1) * dilation + 1 for size, dilation in zip(kernel, dilations, strict=True)]
    start = [draw(st.integers(0, min(2, extent - 1))) for extent in extents]
    end = [draw(st.integers(0, min(2, extent - 1))) for extent in extents]
    extra = [draw(st.integers(0, stride - 1)) if backward else 0 for stride in strides]
    # the least input side whose output side is at least 1
    least = [max(1, 1 - ((extents[d] - 1 - start[d] - end[d] + extra[d]) // strides[d])) if backward
             else max(1, extents[d] - start[d] - end[d]) for d in range(count)]
    spatial = [draw(st.integers(n, max(n, max_side))) for n in least]
    batch = draw(st.integers(1, 2))
    input_sizes = [batch, groups * cig, *spatial]
    filter_sizes = [groups * cig, cog, *kernel] if backward else [groups * cog, cig, *kernel]
    if backward:
        out_spatial = [(s - 1) * st_ + e - a - b + p for s, st_, e, a, b, p
                       in zip(spatial, strides, extents, start, end, extra, strict=True)]
    else:
        out_spatial = [(s + a + b - e) // st_ + 1 for s, st_, e, a, b in zip(spatial, strides, extents, start, end,
                                                                               strict=True)]
    assert min(out_spatial) >= 1, (spatial, out_spatial)
    output_sizes = [batch, groups * cog, *out_spatial]
    bias = draw(input_desc(data_type, [1, groups * cog, *[1] * count])) if draw(st.booleans()) else None
    mode = dml.ConvolutionMode  # type: ignore[attr-defined]
    direction = dml.ConvolutionDirection  # type: ignore[attr-defined]
    return cls(draw(input_desc(data_type, input_sizes)), draw(input_desc(data_type, filter_sizes)),  # type: ignore
               bias, draw(output_desc(data_type, output_sizes)),
               draw(st.sampled_from([mode.CROSS_CORRELATION, mode.CONVOLUTION])),
               direction.BACKWARD if backward else direction.FORWARD, count, tuple(strides), tuple(dilations),
               tuple(start), tuple(end), tuple(extra), groups, draw(fused_activations(level)))


def logical_data(rng: np.random.Generator, desc: dml.TensorDesc | None) -> np.ndarray | None:
    """Normal data of the tensor's type, the same along its zero strides (what a buffer at its strides holds)."""
    if desc is None:
        return None
    dtype = desc.data_type.numpy_dtype
    x = rng.standard_normal(desc.sizes).astype(dtype)
    return read_buffer(build_buffer(x, desc.strides), dtype, desc.sizes, desc.strides)


def fused_activation_of(desc: dml.OperatorDesc) -> tuple[str | None, tuple[float, ...], tuple[int, ...]]:
    """(reference name, parameters, softmax axes) of the descriptor's fused activation (reference.result_bounds)."""
    activation = desc.fused_activation  # type: ignore[attr-defined]
    if activation is None:
        return None, (), ()
    name = activation.OPERATOR_TYPE.name
    if name == "ELEMENT_WISE_CLIP":
        return "CLIP", (float(activation.min), float(activation.max)), ()
    if name in ("ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX1"):
        return "SOFTMAX", (), tuple(activation.softmax_axes(desc.output_tensor.dimension_count))  # type: ignore
    return name.removeprefix("ACTIVATION_"), tuple(activation.parameters().values()), ()


def accumulate_unit(data_type: dml.DataType, flags: dml.ExecutionFlags) -> float:
    """The unit roundoff a GEMM or CONVOLUTION of this type may accumulate in: FLOAT32's for FLOAT32 and FLOAT16
    (FLOAT16's own under ALLOW_HALF_PRECISION_COMPUTATION), FLOAT64's for FLOAT64."""
    if data_type == dml.DataType.FLOAT64:
        return 2.0**-53
    if data_type == dml.DataType.FLOAT16 and flags & dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION:
        return 2.0**-11
    return 2.0**-24


def gemm_convolution_bounds(desc: dml.OperatorDesc, inputs: Sequence[np.ndarray | None],
                            flags: dml.ExecutionFlags = dml.ExecutionFlags.NONE
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(exact value before the activation, least, greatest, anything) per output element of a GEMM or CONVOLUTION
    descriptor on these logical inputs: the float64 reference within reference.result_bounds (K = the products each
    output sums), the bounds rounded to the output type (so beyond its range they are its infinities). `anything`
    marks the elements whose sum of |products| (GEMM's before Alpha too) is not finite or reaches half of FLOAT32's
    range (a NaN or infinite input, or an accumulation that may overflow and give inf - inf in any order), and a
    CONVOLUTION's output channels whose filter holds a non-finite value: any value is right there (for a fused
    SOFTMAX, in the whole group it normalizes)."""
    from reference import convolution_terms, reference_convolution, reference_gemm, result_bounds

    first, second, third = inputs
    assert first is not None and second is not None
    output = desc.output_tensor  # type: ignore[attr-defined]
    dtype = output.data_type.numpy_dtype
    if isinstance(desc, dml.GemmOperatorDesc):
        value, magnitude = reference_gemm(first, second, third, trans_a=desc.trans_a.name, trans_b=desc.trans_b.name,
                                          alpha=float(desc.alpha), beta=float(desc.beta))
        # A x B is formed before Alpha scales it: its own overflow (then Alpha 0 x inf = NaN) is open too
        magnitude = np.maximum(magnitude, reference_gemm(first, second, None, trans_a=desc.trans_a.name,
                                                         trans_b=desc.trans_b.name)[1])
        terms = desc.a_tensor.sizes[-2] if desc.trans_a.name == "TRANSPOSE" else desc.a_tensor.sizes[-1]
    else:
        assert isinstance(desc, dml.ConvolutionOperatorDesc)
        value, magnitude = reference_convolution(
            first, second, third, mode=desc.mode.name, direction=desc.direction.name, strides=desc.strides,
            dilations=desc.dilations, start_padding=desc.start_padding, end_padding=desc.end_padding,
            output_padding=desc.output_padding, group_count=desc.group_count)
        terms = convolution_terms(desc.filter_tensor.sizes, desc.direction.name, desc.group_count,
                                  desc.input_tensor.sizes[1])
    value, magnitude = (np.broadcast_to(array, output.sizes) for array in (value, magnitude))
    name, parameters, axes = fused_activation_of(desc)
    with np.errstate(all="ignore"):
        anything = ~(magnitude < float(np.finfo(np.float32).max) / 2)
        if isinstance(desc, dml.ConvolutionOperatorDesc):
            # A non-finite filter value may meet a padded zero (0 x inf = NaN) in a kernel that pads the input
            # (FORWARD's padding, BACKWARD's gather over a zero-stuffed input): its output channels are open.
            bad = ~np.isfinite(np.asarray(second, np.float64))
            per_channel = bad.reshape(bad.shape[0], bad.shape[1], -1).any(axis=2)
            channels = (per_channel.reshape(desc.group_count, -1, per_channel.shape[1]).any(axis=1).reshape(-1)
                        if desc.direction.name == "BACKWARD" else per_channel.any(axis=1))
            shape = (1, -1) + (1,) * (len(output.sizes) - 2)
            anything = anything | channels.reshape(shape)
        if name == "SOFTMAX":
            anything = np.broadcast_to(anything.any(axis=axes, keepdims=True), anything.shape)
        safe = np.where(anything, 0.0, value), np.where(anything, 0.0, magnitude)
        low, high = result_bounds(*safe, terms, dtype, accumulate_unit=accumulate_unit(output.data_type, flags),
                                  activation=name, parameters=parameters, axes=axes)
        low, high = (bound.astype(dtype).astype(np.float64) for bound in (low, high))
    return value, low, high, anything


def check_gemm_convolution(desc: dml.OperatorDesc, inputs: Sequence[np.ndarray | None], output: np.ndarray,
                           flags: dml.ExecutionFlags = dml.ExecutionFlags.NONE) -> None:
    """The logical output of a GEMM or CONVOLUTION dispatch against gemm_convolution_bounds (test_gemm,
    test_convolution, and test_fuzz_descriptors.check_outputs, the differential fuzzer's oracle)."""
    from reference import assert_within_bounds

    value, low, high, anything = gemm_convolution_bounds(desc, inputs, flags)
    assert output.shape == low.shape and output.dtype == desc.output_tensor.data_type.numpy_dtype  # type: ignore
    got = np.where(anything, low, output.astype(np.float64))
    assert_within_bounds(got, low, high, desc.label, exact=value)


def backends(*names: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Runs the decorated test on these backends only (conftest's `backend` parametrization reads the attribute)."""
    def mark(test: Callable[..., None]) -> Callable[..., None]:
        test.backends = names  # type: ignore[attr-defined]
        return test
    return mark


draws_descriptors(*[c for c in (_GEMM,) if c is not None])(_gemm_drawer)
draws_descriptors(*[c for c in (_CONVOLUTION,) if c is not None])(
    lambda cls, level: convolution_descs(cls, level))


# -- the generators (issue 28; ops/generators.py): FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX(1) --------

def generator_scalar(data_type: dml.DataType, infinite: bool = False) -> st.SearchStrategy[Any]:
    """A DML_SCALAR_UNION value of `data_type`: small integers and the type's extremes; floats the type holds."""
    if data_type.is_float:
        width = {dml.DataType.FLOAT16: 16, dml.DataType.FLOAT32: 32}.get(data_type, 64)
        return st.floats(-1000, 1000, width=width) | st.sampled_from(
            [0.5, -0.0] + ([float("inf"), -float("inf")] if infinite else []))
    info = np.iinfo(data_type.numpy_dtype)
    return st.integers(max(-9, int(info.min)), 9) | st.sampled_from([int(info.min), int(info.max)])


@draws_descriptors(dml.FillValueConstantOperatorDesc, dml.FillValueSequenceOperatorDesc,
                   dml.DiagonalMatrixOperatorDesc, dml.DiagonalMatrix1OperatorDesc)
@st.composite
def generator_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any generator of the row in force: a type and rank of its OutputTensor, an output of any layout (padded,
    transposed), the scalars of the type, diagonal offsets and bands around the matrix (and INT32's extremes)."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "OutputTensor")))
    low, high = row_ranks(row, "OutputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    output = draw(output_desc(data_type, sizes))
    bound = st.integers(-5, 5) | st.sampled_from([-2**31, 2**31 - 1])
    if cls is dml.FillValueConstantOperatorDesc:
        return cls(output, data_type, draw(generator_scalar(data_type, infinite=True)))  # type: ignore[call-arg]
    if cls is dml.FillValueSequenceOperatorDesc:
        return cls(output, data_type, draw(generator_scalar(data_type)),  # type: ignore[call-arg]
                   draw(generator_scalar(data_type)))
    if cls is dml.DiagonalMatrixOperatorDesc:
        return cls(output, draw(bound), draw(st.floats(-300, 300, width=32)))  # type: ignore[call-arg]
    source = draw(st.none() | input_desc(data_type, sizes))
    return cls(source, output, data_type, draw(generator_scalar(data_type, infinite=True)),  # type: ignore[call-arg]
               draw(bound), draw(bound))


# -- CAST (issue 28, the copy slice; ops/copy.py) ----------------------------------------------------------------------

@draws_descriptors(dml.CastOperatorDesc)
@st.composite
def cast_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any CAST of the row in force: a pair of its types, a rank, an input of any layout (zero strides included) and
    an output of any layout."""
    row = table_row(cls, level)
    source = draw(st.sampled_from(row_types(row, "InputTensor")))
    target = draw(st.sampled_from(row_types(row, "OutputTensor")))
    low, high = row_ranks(row, "OutputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    return cls(draw(input_desc(source, sizes)), draw(output_desc(target, sizes)))  # type: ignore[call-arg]


@draws_descriptors(dml.SliceOperatorDesc, dml.Slice1OperatorDesc)
@st.composite
def slice_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any SLICE or SLICE1 of the row in force: an input of any layout, a window inside it along every dimension
    (SLICE1: negative strides too), an output of any layout of the sizes the window gives."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    offsets, windows, strides = [], [], []
    for size in sizes:
        offset = draw(st.integers(0, size - 1))
        window = draw(st.integers(1, size - offset))
        offsets.append(offset)
        windows.append(window)
        strides.append(draw(st.integers(1, 3)) * (draw(st.sampled_from([1, -1])) if cls is dml.Slice1OperatorDesc
                                                  else 1))
    out = [1 + (window - 1) // abs(stride) for window, stride in zip(windows, strides, strict=True)]
    if cls is dml.SliceOperatorDesc:
        windows = out
    source = draw(input_desc(data_type, sizes))
    return cls(source, draw(output_desc(data_type, out)), len(sizes), offsets, windows, strides)  # type: ignore


@draws_descriptors(dml.CumulativeSummationOperatorDesc, dml.CumulativeProductOperatorDesc)
@st.composite
def cumulative_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """A scan of the row in force: a type and rank of its InputTensor, any axis and direction, inclusive or
    exclusive, an input of any layout (zero strides included) and an output of any layout."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    return cls(draw(input_desc(data_type, sizes)), draw(output_desc(data_type, sizes)),  # type: ignore[call-arg]
               draw(st.integers(0, len(sizes) - 1)), draw(st.sampled_from(["INCREASING", "DECREASING"])),
               draw(st.booleans()))


@draws_descriptors(dml.PaddingOperatorDesc, dml.Padding1OperatorDesc, dml.TileOperatorDesc)
@st.composite
def padding_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """PADDING, PADDING1 or TILE of the row in force: a mode its level allows, paddings up to 3 (wider than the input
    too), repeats of 1 to 3, an input of any layout (zero strides included) and an output of any layout."""
    from opendml.ops.padding import MODE_LEVELS, PaddingMode

    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5)))))
    source = draw(input_desc(data_type, sizes))
    most = 3 if len(sizes) <= 3 else 1
    if cls is dml.TileOperatorDesc:
        repeats = [draw(st.integers(1, most)) for _ in sizes]
        out = [size * repeat for size, repeat in zip(sizes, repeats, strict=True)]
        return cls(source, draw(output_desc(data_type, out)), len(sizes), repeats)  # type: ignore[call-arg]
    mode = draw(st.sampled_from([mode for mode in PaddingMode if MODE_LEVELS.get(mode, level) <= level]))
    start = [draw(st.integers(0, most)) for _ in sizes]
    end = [draw(st.integers(0, most)) for _ in sizes]
    out = [size + a + b for size, a, b in zip(sizes, start, end, strict=True)]
    target = draw(output_desc(data_type, out))
    if cls is dml.Padding1OperatorDesc:
        return cls(source, target, mode, data_type, 3, len(sizes), start, end)  # type: ignore[call-arg]
    return cls(source, target, mode, 3.0, len(sizes), start, end)  # type: ignore[call-arg]


@draws_descriptors(dml.SpaceToDepthOperatorDesc, dml.DepthToSpaceOperatorDesc, dml.SpaceToDepth1OperatorDesc,
                   dml.DepthToSpace1OperatorDesc)
@st.composite
def depth_space_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any of the four depth/space operators of the row in force: a block size of 1 to 3, either Order (the "1"
    versions), input and output of any layout of the page's sizes."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    b = draw(st.integers(1, 3))
    n, c, h, w = (draw(st.integers(1, 2)) for _ in range(4))
    depth, space = [n, c * b * b, h, w], [n, c, h * b, w * b]
    to_space = cls in (dml.DepthToSpaceOperatorDesc, dml.DepthToSpace1OperatorDesc)
    source, target = (depth, space) if to_space else (space, depth)
    extra = [draw(st.sampled_from(list(dml.DepthSpaceOrder)))] if hasattr(cls, "__dataclass_fields__") and \
        "order" in cls.__dataclass_fields__ else []
    return cls(draw(input_desc(data_type, source)), draw(output_desc(data_type, target)), b, *extra)  # type: ignore


@draws_descriptors(dml.ReverseSubsequencesOperatorDesc)
@st.composite
def reverse_subsequences_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc],
                               level: dml.FeatureLevel) -> dml.OperatorDesc:
    """Any REVERSE_SUBSEQUENCES of the row in force: any axis, input, lengths and output of any layout."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, high))))
    axis = draw(st.integers(0, len(sizes) - 1))
    counts = [1 if dim == axis else size for dim, size in enumerate(sizes)]
    return cls(draw(input_desc(data_type, sizes)), draw(input_desc(dml.DataType.UINT32, counts)),  # type: ignore
               draw(output_desc(data_type, sizes)), axis)


@draws_descriptors(dml.Upsample2dOperatorDesc)
@st.composite
def upsample_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """An upsample of the row in force: a type and rank of its InputTensor, scales 1 to 3, either mode, an input of
    any layout (zero strides included) and an output of any layout."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, high)), max_side=3, max_elements=24))
    width, height = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    out_sizes = (*sizes[:-2], sizes[-2] * height, sizes[-1] * width)
    return dml.Upsample2dOperatorDesc(draw(input_desc(data_type, sizes)), draw(output_desc(data_type, out_sizes)),
                                      (width, height), draw(st.sampled_from(["NEAREST_NEIGHBOR", "LINEAR"])))


@draws_descriptors(dml.NonzeroCoordinatesOperatorDesc)
@st.composite
def nonzero_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """A NONZERO_COORDINATES of the row in force: a type of its InputTensor, 4 or 5 dimensions (leading 1s now and
    then), an input of any layout (zero strides included), N from the effective rank to the DimensionCount, outputs
    of any layout."""
    from opendml.ops.nonzero import coordinates_sizes, effective_rank

    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    rank = draw(st.integers(4, 5))
    lead = draw(st.integers(0, rank))
    sizes = (1,) * lead + draw(small_sides(rank, max_elements=48))[lead:]
    columns = draw(st.integers(max(1, effective_rank(sizes)), rank))
    return cls(draw(input_desc(data_type, sizes)), draw(output_desc(dml.DataType.UINT32, [1] * rank)),  # type: ignore
               draw(output_desc(dml.DataType.UINT32, coordinates_sizes(sizes, columns))))


@draws_descriptors(dml.TopKOperatorDesc, dml.TopK1OperatorDesc)
@st.composite
def top_k_descs(draw: st.DrawFn, cls: type[dml.OperatorDesc], level: dml.FeatureLevel) -> dml.OperatorDesc:
    """A TOP_K (TOP_K1: either direction) of the row in force: a type and rank of its InputTensor, any axis, K from 1
    to the axis's size, an index type of the row, an input of any layout (zero strides included) and outputs of any
    layout."""
    row = table_row(cls, level)
    data_type = draw(st.sampled_from(row_types(row, "InputTensor")))
    low, high = row_ranks(row, "InputTensor")
    sizes = draw(small_sides(draw(st.integers(low, min(high, 5))), max_side=5))
    axis = draw(st.integers(0, len(sizes) - 1))
    k = draw(st.integers(1, sizes[axis]))
    out = [k if dim == axis else size for dim, size in enumerate(sizes)]
    index_type = draw(st.sampled_from(row_types(row, "OutputIndexTensor")))
    tensors = (draw(input_desc(data_type, sizes)), draw(output_desc(data_type, out)),
               draw(output_desc(index_type, out)))
    if cls is dml.TopKOperatorDesc:
        return dml.TopKOperatorDesc(*tensors, axis, k)
    return dml.TopK1OperatorDesc(*tensors, axis, k, draw(st.sampled_from(["INCREASING", "DECREASING"])))
