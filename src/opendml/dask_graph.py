"""A compiled `dml.Graph` on Dask arrays: every node lowered to Dask tasks whose chunks run opendml's own kernels.

`CompiledGraph.__call__` hands over to `lower` when an input is a Dask array (after checking every input's name,
dtype and shape, as for NumPy inputs). The result is one lazy Dask array per graph output, and the whole graph is
one Dask graph: nothing is computed until the caller computes it (under a `distributed.Client`, on its workers).
Dask is imported here only, and only then; `pip install "opendml[dask]"` installs it.

Every chunk runs on a worker's CPU device at the graph device's feature level and debug setting, with the graph's
execution flags: the node's own operator, described for the chunk's shape, compiled once per process and shape
(`_compiled`). How each node is lowered:

- The 17 standalone activations: the operator on every chunk (`map_blocks`).
- The 62 ELEMENT_WISE operators, generically (nothing per operator): blockwise over the output's chunks. Each input
  is what its tensor reads of its expression's memory (`_read_through`): a transpose where its strides are the
  expression's in another order, a reshape where both are dense, else read in one chunk; along a dimension it
  broadcasts (stride 0) it is one chunk of size 1, so every output block sees the matching block of the other inputs
  and the broadcast value, bound with stride 0 in the block's own descriptor (`_element_wise_chunk`). The output is
  chunked as its inputs (the finer where they differ). Element by element, the blocks give one machine's bits.
- Any other node whose input tensor reads its expression through other strides (folded into the operator) gets the
  logical array it reads (`_logical`).
- SPLIT: slices of the input; JOIN: `concatenate`. Nothing is copied until computed.
- ONE_HOT: the operator on every chunk of the indices, with the values in one chunk; the output's chunks are the
  indices', with the whole depth along Axis.
- GATHER_ND1 and GATHER_ND: the operator on every chunk of the indices (chunked freely, but for the tuple dimension,
  which is small), against the input with its gathered dimensions (those the index tuples address) in one chunk:
  they are rechunked automatically. The indices' batch dimensions follow the input's chunks, and the input's
  dimensions after the gathered ones keep theirs, so each output chunk reads one chunk of the input.
- GEMM: blockwise over the output's batch, M and N chunks, each block the GEMM kernel on its blocks of A, B and C
  (bound where they lie: a transpose folded into strides, a broadcast through zero strides). Where K is cut, a partial
  product per K chunk by the GEMM kernel (FLOAT16 widened to FLOAT32; Alpha 1, no C, no activation), the partials
  summed in float64, then Alpha * sum + Beta * C in float64, the fused activation by the GEMM kernel itself (FLOAT32:
  C the value, A and B zeros) and one rounding to the data type (`_gemm_finish`). A fused SOFTMAX/SOFTMAX1 keeps the
  axes it normalizes over in one chunk.
- CONVOLUTION: blockwise over the batch's chunks and the spatial chunks; the channels, the filter and the bias in one
  chunk. A spatial dimension is cut so that each output belongs to exactly one block (`_halo`: FORWARD moves the
  input's cuts onto the stride's grid, y * S - StartPadding; BACKWARD keeps them), each block reads its halo from its
  neighbour (Dask's `overlap`, the halo exchange `map_overlap` runs: the filter and bias cannot join map_overlap's
  arrays, which must broadcast together), and runs the kernel with its own paddings: the array's StartPadding in its
  first block, its EndPadding and OutputPadding in its last, and between blocks those that end each block's output
  where the next one's begins. Chunks smaller than the halo are merged.
- REDUCE, ARGMIN, ARGMAX: where the chunks hold whole reduced blocks, the operator on every chunk. Otherwise a
  partial per chunk, by the operator's kernel, combined in a tree (`dask.array.reduction`) by the REDUCE kernels over
  the partials: MIN/MAX by themselves; SUM, L1, SUM_SQUARE, AVERAGE, L2 and LOG_SUM as sums (AVERAGE, L2 and
  LOG_SUM finish after the combine); MULTIPLY as products; LOG_SUM_EXP by LOG_SUM_EXP over the chunks' results
  (each max-shifted); ARGMIN/ARGMAX carry (value, index in the whole reduced block), and the combine runs the
  ARGMIN/ARGMAX kernel over the candidates in index order, so its tie and NaN rules, in either AxisDirection, hold
  across chunks. Integer partials wrap in the data type, exactly as one machine's; floating partials are the REDUCE
  kernel's float64 accumulator over the chunk, stored unrounded (a float64 output), so that, as on one machine,
  nothing is rounded before the one rounding to the data type at the end.
- MEAN_VARIANCE_NORMALIZATION1 and MEAN_VARIANCE_NORMALIZATION: where the chunks hold whole normalized groups, the
  operator on every chunk (with Scale and Bias chunked alike). Otherwise each chunk's count, sum and sum of squared
  deviations from its own mean (float64), combined in a tree with Chan et al.'s parallel update; then one pass per
  chunk normalizes, scales and biases in float64 and runs the fused activation as the standalone activation operator
  (FLOAT32, the precision of the fused kernel) before rounding once to the data type.
- Every chunk of a Dask input is checked when computed, before anything reads it: a NumPy array (not a masked
  one) of the dtype and shape its Dask array declares, else a BindingError naming the input, the chunk and both
  (Dask itself checks neither: a `map_blocks` given the wrong `dtype=` declares one type and computes another).
- Graph constants are single-chunk Dask arrays; NumPy inputs given beside Dask ones are wrapped with `from_array`.
  A graph input whose strides map two elements onto one (a stride of 0) is checked on a worker, in one chunk, as a
  NumPy input is checked at the call.

An opendml error raised on a worker (a debug device refusing a GATHER_ND1 index, an input that differs where its
strides alias) reaches the caller as that error, naming the operator and the Dask chunk.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

import numpy as np

from .device import Binding, CompiledOperator, Device, Operator
from .errors import BindingError, DmlError, UnsupportedError
from .layout import lay_out_input, tensor_view
from .ops.activation_softmax import _FusedSoftmax
from .ops.activations import ActivationOperatorDesc
from .ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from .ops.base import OperatorDesc, check_element_limit, strides_overlap
from .ops.convolution import ConvolutionOperatorDesc
from .ops.copy import CastOperatorDesc, SliceBase
from .ops.cumulative import CumulativeOperatorDesc
from .ops.depth_space import DepthSpaceBase, output_sizes
from .ops.elementwise import ElementWiseOperatorDesc
from .ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc
from .ops.gather_nd import GatherNdOperatorDesc
from .ops.gather_nd1 import GatherNd1OperatorDesc, gather_output_sizes
from .ops.gemm import GemmOperatorDesc
from .ops.generators import GeneratorOperatorDesc, block_values
from .ops.join import JoinOperatorDesc
from .ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc
from .ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from .ops.nonzero import NonzeroCoordinatesOperatorDesc
from .ops.one_hot import OneHotOperatorDesc
from .ops.padding import PaddingBase
from .ops.reduce import ReduceOperatorDesc, reduced_sizes
from .ops.reverse_subsequences import ReverseSubsequencesOperatorDesc
from .ops.split import SplitOperatorDesc
from .ops.upsample import Upsample2dOperatorDesc
from .tensor import TensorDesc, packed_strides
from .types import ConvolutionDirection, DataType, ExecutionFlags, FeatureLevel, MatrixTransform, ReduceFunction

__all__ = ["is_dask_array", "lower"]

NDArray = np.ndarray[Any, Any]
#: A Dask array (typed loosely: Dask is an optional dependency).
DaskArray = Any

R = ReduceFunction
#: The REDUCE function each chunk computes for a function, and the one that combines the chunks' partials.
_CHUNK_FUNCTION = {R.AVERAGE: R.SUM, R.L2: R.SUM_SQUARE, R.LOG_SUM: R.SUM}
_COMBINE_FUNCTION = {R.L1: R.SUM, R.SUM_SQUARE: R.SUM, R.AVERAGE: R.SUM, R.L2: R.SUM, R.LOG_SUM: R.SUM}
#: What the functions that finish after the combine do with the combined float64 sum and the block's count N (as the
#: REDUCE kernels finish them, in float64 before the one rounding).
_FINISH: dict[ReduceFunction, Callable[[NDArray, int], NDArray]] = {
    R.AVERAGE: lambda total, count: total / count,
    R.L2: lambda total, count: np.sqrt(total),
    R.LOG_SUM: lambda total, count: np.log(total),
}
#: Per chunk statistics of a normalization (float64) and what the combine leaves for the normalizing pass.
_STATISTICS = np.dtype([("count", np.float64), ("total", np.float64), ("m2", np.float64)])
_NORMALIZER = np.dtype([("mean", np.float64), ("rstd", np.float64)])


def _dask_array() -> Any:
    """dask.array, imported here on first use (typed loosely: Dask is an optional dependency)."""
    return importlib.import_module("dask.array")


def is_dask_array(value: object) -> bool:
    """Whether `value` is a Dask array. Imports nothing (a Dask array exists only where Dask is imported), so that
    `CompiledGraph` can look for Dask inputs without importing Dask."""
    array_type = getattr(sys.modules.get("dask.array"), "Array", None)
    return isinstance(array_type, type) and isinstance(value, array_type)


# -- on the workers: compiled operators and their dispatch ----------------------------------------------------------

@dataclass(frozen=True)
class _Context:
    """How a graph's chunks run: on a CPU device at the graph device's feature level and debug setting, compiled with
    the graph's execution flags."""

    level: FeatureLevel
    debug: bool
    flags: ExecutionFlags


@functools.lru_cache(maxsize=16)
def _device(level: FeatureLevel, debug: bool) -> Device:
    return Device(level, backend="cpu", debug=debug)


def _compiled(desc: OperatorDesc, context: _Context) -> CompiledOperator:
    """The compiled operator of a chunk's descriptor, once per process. Cached by the descriptor's repr too: frozen
    descriptors are hashable, but -0.0 == 0.0 (and hashes alike), so a ScaleBias or parameter of -0 would otherwise
    find the operator compiled for +0."""
    return _compiled_exactly(repr(desc), desc, context)


@functools.lru_cache(maxsize=512)
def _compiled_exactly(key: str, desc: OperatorDesc, context: _Context) -> CompiledOperator:
    device = _device(context.level, context.debug)
    return device.compile_operator(device.create_operator(desc), context.flags)


def _packed(data_type: DataType, sizes: Sequence[int]) -> TensorDesc:
    return TensorDesc(data_type, tuple(int(size) for size in sizes))


def _binding(array: NDArray, desc: TensorDesc) -> Binding:
    """A chunk bound where it lies when its memory holds the tensor (C-contiguous, TotalTensorSizeInBytes long),
    else a packed copy padded to TotalTensorSizeInBytes (a multiple of 4 bytes)."""
    array = np.asarray(array)
    if array.flags.c_contiguous and array.flags.aligned and array.nbytes >= desc.total_tensor_size_in_bytes:
        return Binding(array)
    buffer = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
    buffer[: array.nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return Binding(buffer)


def _run(desc: OperatorDesc, context: _Context, arrays: Sequence[NDArray | None]) -> list[NDArray]:
    """Runs the operator on logical arrays (one per input slot, None for an absent one) and returns its outputs."""
    inputs = [None if array is None or tensor is None else _binding(array, tensor)
              for (_, tensor), array in zip(desc.input_slots(), arrays, strict=True)]
    outputs: list[NDArray] = []
    bindings: list[Binding] = []
    for _, tensor in desc.output_slots():
        dtype = tensor.data_type.numpy_dtype
        buffer = np.empty(tensor.total_tensor_size_in_bytes, np.uint8)
        outputs.append(buffer[: tensor.element_count * dtype.itemsize].view(dtype).reshape(tensor.sizes))
        bindings.append(Binding(buffer))
    _compiled(desc, context).execute(inputs, bindings)
    return outputs


def _for_chunk(desc: OperatorDesc, shapes: Sequence[tuple[int, ...] | None]) -> OperatorDesc:
    """The node's descriptor for one chunk: packed input tensors of the chunks' shapes (one per input slot, None for
    an absent one), the output tensors inferred as the graph infers them."""
    tensors = [None if shape is None or tensor is None else _packed(tensor.data_type, shape)
               for (_, tensor), shape in zip(desc.input_slots(), shapes, strict=True)]
    x = tensors[0]
    assert x is not None
    if isinstance(desc, (ReduceOperatorDesc, ArgMinOperatorDesc, ArgMaxOperatorDesc)):
        output = _packed(desc.output_tensor.data_type, reduced_sizes(x.sizes, desc.axes))
        return replace(desc, input_tensor=x, output_tensor=output)
    if isinstance(desc, ActivationOperatorDesc):
        return replace(desc, input_tensor=x, output_tensor=_packed(x.data_type, x.sizes))
    if isinstance(desc, CastOperatorDesc):
        return replace(desc, input_tensor=x, output_tensor=_packed(desc.output_tensor.data_type, x.sizes))
    if isinstance(desc, (MeanVarianceNormalization1OperatorDesc, MeanVarianceNormalizationOperatorDesc)):
        return replace(desc, input_tensor=x, scale_tensor=tensors[1], bias_tensor=tensors[2],
                       output_tensor=_packed(x.data_type, x.sizes))
    if isinstance(desc, OneHotOperatorDesc):
        values = tensors[1]
        assert values is not None
        sizes = tuple(desc.depth if dim == desc.axis else size for dim, size in enumerate(x.sizes))
        return replace(desc, indices_tensor=x, values_tensor=values, output_tensor=_packed(values.data_type, sizes))
    if isinstance(desc, (GatherNd1OperatorDesc, GatherNdOperatorDesc)):
        indices = tensors[1]
        assert indices is not None
        batch = desc.batch_dimension_count if isinstance(desc, GatherNd1OperatorDesc) else 0
        sizes = gather_output_sizes(x, indices, desc.input_dimension_count, desc.indices_dimension_count, batch)
        return replace(desc, input_tensor=x, indices_tensor=indices, output_tensor=_packed(x.data_type, sizes))
    raise UnsupportedError(f"{desc.label} has no Dask lowering")


def _in_chunk(error: DmlError, where: str) -> DmlError:
    """The same error, saying which Dask chunk raised it."""
    return type(error)(f"{error} [Dask: {where}]")


def _chunk_output(desc: OperatorDesc, context: _Context, present: tuple[bool, ...], blocks: Sequence[Any]
                  ) -> NDArray:
    """The node's own operator on one chunk of each of its present inputs (`present`: one flag per input slot)."""
    arrays = iter(blocks)
    inputs: list[NDArray | None] = [np.asarray(next(arrays)) if given else None for given in present]
    return _run(_for_chunk(desc, [None if array is None else array.shape for array in inputs]), context, inputs)[0]


def _node_chunk(desc: OperatorDesc, context: _Context, present: tuple[bool, ...], *blocks: Any,
                block_id: tuple[int, ...] = ()) -> NDArray:
    """`_chunk_output` as a task: an opendml error says which output chunk raised it."""
    try:
        return _chunk_output(desc, context, present, blocks)
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None


# -- REDUCE, ARGMIN, ARGMAX ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Reduction:
    """A reduction whose reduced axes are cut into chunks: what every partial, combine and finish step needs."""

    desc: ReduceOperatorDesc | ArgMinOperatorDesc | ArgMaxOperatorDesc
    context: _Context
    starts: tuple[tuple[int, ...], ...]     # where each chunk starts, per reduced axis (in `axes` order)

    @property
    def function(self) -> ReduceFunction:
        desc = self.desc
        return desc.function if isinstance(desc, ReduceOperatorDesc) else desc.REDUCE_FUNCTION

    @property
    def decreasing(self) -> bool:
        return not isinstance(self.desc, ReduceOperatorDesc) and self.desc.decreasing

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(sorted(self.desc.axes))

    @property
    def is_arg(self) -> bool:
        return self.function in (R.ARGMAX, R.ARGMIN)

    @property
    def partial_dtype(self) -> np.dtype[Any]:
        """(value, index in the block) for ARGMIN/ARGMAX; the data type for MIN, MAX and integers; else float64."""
        source = self.desc.input_tensor.data_type.numpy_dtype
        if self.is_arg:
            return np.dtype([("value", source), ("index", np.int64)])
        if self.function in (R.MIN, R.MAX) or source.kind != "f":
            return source
        return np.dtype(np.float64)


@functools.lru_cache(maxsize=256)
def _reduce_plan(function: ReduceFunction, input_dtype: str, output_dtype: str, sizes: tuple[int, ...],
                 axes: tuple[int, ...], decreasing: bool = False) -> Callable[[NDArray, NDArray], None]:
    """The REDUCE kernels' plan for a packed array: the combine steps run the operator's own kernels over partials,
    in the partials' data type (float64 included, which no REDUCE descriptor takes)."""
    from .backends.cpu.reduce_kernels import make_reduce_plan

    output_sizes = reduced_sizes(sizes, axes)
    return make_reduce_plan(int(function), np.dtype(input_dtype), np.dtype(output_dtype), sizes,
                            packed_strides(sizes), packed_strides(output_sizes), axes, decreasing)


def _kernel_reduce(function: ReduceFunction, array: NDArray, axes: tuple[int, ...], output_dtype: Any = None,
                   decreasing: bool = False) -> NDArray:
    """REDUCE by the kernel's plan over a packed copy of `array` (keepdims)."""
    array = np.ascontiguousarray(array)
    dtype = np.dtype(output_dtype or array.dtype)
    output = np.empty(reduced_sizes(array.shape, axes), dtype)
    _reduce_plan(function, array.dtype.str, dtype.str, array.shape, axes, decreasing)(array.reshape(-1),
                                                                                      output.reshape(-1))
    return output


def _reduce_partial(reduction: _Reduction, block: Any, block_id: tuple[int, ...] = ()) -> NDArray:
    """One chunk's partial (keepdims), by the operator's kernel on the chunk."""
    block = np.asarray(block)
    desc, context, function, axes = reduction.desc, reduction.context, reduction.function, reduction.axes
    try:
        if reduction.is_arg:
            local = _run(_for_chunk(desc, [block.shape]), context, [block])[0].astype(np.intp)
            return _arg_partial(reduction, block, local, block_id)
        if function in (R.MIN, R.MAX) or block.dtype.kind != "f":
            return _run(_for_chunk(desc, [block.shape]), context, [block])[0]
    except DmlError as error:
        raise _in_chunk(error, f"input chunk {list(block_id)}") from None
    # Floating partials: the chunk's function by the REDUCE kernel, its float64 accumulator stored unrounded, so that
    # nothing is rounded before the one rounding at the end, as on one machine.
    return _kernel_reduce(_CHUNK_FUNCTION.get(function, function), block, axes, np.float64)


def _arg_partial(reduction: _Reduction, block: NDArray, local: NDArray, block_id: tuple[int, ...]) -> NDArray:
    """(the chunk's extreme, its index in the whole reduced block) from the index within the chunk."""
    axes = reduction.axes
    source = reduction.desc.input_tensor.sizes
    coordinates = np.unravel_index(local, tuple(block.shape[axis] for axis in axes))
    picks: list[NDArray] = []
    for dim, size in enumerate(block.shape):
        if dim in axes:
            picks.append(coordinates[axes.index(dim)])
        else:
            picks.append(np.arange(size).reshape([-1 if other == dim else 1 for other in range(block.ndim)]))
    partial = np.empty(local.shape, reduction.partial_dtype)
    partial["value"] = block[tuple(picks)]
    whole = [coordinates[position] + reduction.starts[position][block_id[axis]]
             for position, axis in enumerate(axes)]
    partial["index"] = np.ravel_multi_index(whole, tuple(source[axis] for axis in axes))
    return partial


def _reduce_combine(reduction: _Reduction, partials: NDArray, axis: Any = None, keepdims: bool = True,
                    **_: Any) -> NDArray:
    """The partials of neighbouring chunks (concatenated along the reduced axes) combined into one (keepdims)."""
    axes = reduction.axes
    if not reduction.is_arg:
        return _kernel_reduce(_COMBINE_FUNCTION.get(reduction.function, reduction.function), partials, axes)
    # The candidates in the order of their index in the block, so that the kernel's first (last) extreme and first
    # (last) NaN in walking order are the block's.
    kept = partials.ndim - len(axes)
    moved = np.moveaxis(partials, axes, tuple(range(kept, partials.ndim)))
    candidates = moved.reshape((*moved.shape[:kept], -1))
    candidates = np.take_along_axis(candidates, np.argsort(candidates["index"], axis=-1, kind="stable"), axis=-1)
    position = _kernel_reduce(reduction.function, candidates["value"], (kept,), np.int64, reduction.decreasing)
    chosen = np.take_along_axis(candidates, position, axis=-1)
    return chosen.reshape(reduced_sizes(partials.shape, axes))


def _reduce_aggregate(reduction: _Reduction, partials: NDArray, axis: Any = None, keepdims: bool = True,
                      **_: Any) -> NDArray:
    """The last combine, then the finish (AVERAGE, L2, LOG_SUM) and the one rounding to the output's data type."""
    combined = _reduce_combine(reduction, partials)
    output_dtype = reduction.desc.output_tensor.data_type.numpy_dtype
    if reduction.is_arg:
        return combined["index"].astype(output_dtype)
    finish = _FINISH.get(reduction.function)
    with np.errstate(all="ignore"):
        if finish is not None:
            combined = finish(combined, reduction.desc.reduced_element_count)
        return combined.astype(output_dtype)


def _identity(output_dtype: np.dtype[Any], partials: NDArray, axis: Any = None, keepdims: bool = True,
              computing_meta: bool = False, **_: Any) -> NDArray:
    """The chunk step of `dask.array.reduction` over partials that are already made. When Dask asks for its result's
    type (computing_meta), an empty array of the reduction's output type: partials are records Dask cannot cast."""
    return np.empty((0,) * partials.ndim, output_dtype) if computing_meta else partials


def _lower_reduce(desc: ReduceOperatorDesc | ArgMinOperatorDesc | ArgMaxOperatorDesc, context: _Context,
                  x: DaskArray) -> DaskArray:
    da = _dask_array()

    axes = tuple(sorted(desc.axes))
    output_dtype = desc.output_tensor.data_type.numpy_dtype
    reduced_chunks = tuple(((1,) * len(chunks)) if dim in axes else chunks for dim, chunks in enumerate(x.chunks))
    name = _token(desc)
    if all(x.numblocks[axis] == 1 for axis in axes):
        # Every chunk holds whole reduced blocks: the operator itself, chunk by chunk.
        task = functools.partial(_node_chunk, desc, context, (True,))
        return x.map_blocks(task, chunks=reduced_chunks, dtype=output_dtype, meta=_meta(x.ndim, output_dtype),
                            name=_key(name, task, x))
    starts = tuple(tuple(np.cumsum((0, *x.chunks[axis][:-1])).tolist()) for axis in axes)
    reduction = _Reduction(desc, context, starts)
    task = functools.partial(_reduce_partial, reduction)
    partials = x.map_blocks(task, chunks=reduced_chunks, dtype=reduction.partial_dtype,
                            meta=_meta(x.ndim, reduction.partial_dtype), name=_key(f"{name}-partial", task, x))
    return da.reduction(partials, chunk=functools.partial(_identity, output_dtype),
                        combine=functools.partial(_reduce_combine, reduction),
                        aggregate=functools.partial(_reduce_aggregate, reduction), axis=axes, keepdims=True,
                        dtype=output_dtype, meta=_meta(x.ndim, output_dtype), concatenate=True, name=name)


# -- MEAN_VARIANCE_NORMALIZATION1 and MEAN_VARIANCE_NORMALIZATION ---------------------------------------------------

def _statistics_partial(axes: tuple[int, ...], block: Any) -> NDArray:
    """A chunk's count, sum and sum of squared deviations from its own mean (M2), per group, in float64."""
    values = np.asarray(block, np.float64)
    partial = np.empty(reduced_sizes(values.shape, axes), _STATISTICS)
    count = math.prod(values.shape[axis] for axis in axes)
    with np.errstate(all="ignore"):
        total = values.sum(axis=axes, keepdims=True)
        deviations = values - total / count
        np.square(deviations, out=deviations)
        partial["m2"] = deviations.sum(axis=axes, keepdims=True)
    partial["count"], partial["total"] = count, total
    return partial


def _statistics_combine(partials: NDArray, axis: Any = None, keepdims: bool = True, **_: Any) -> NDArray:
    """Chan et al.'s parallel update of k partials at once: M2 = sum(M2_i + n_i (mean_i - mean)^2), the mean being
    the total over the count (as the kernel keeps it, so that one infinite chunk does not turn the rest into NaN)."""
    axes = tuple(axis)
    combined = np.empty(reduced_sizes(partials.shape, axes), _STATISTICS)
    with np.errstate(all="ignore"):
        count = partials["count"].sum(axis=axes, keepdims=True)
        total = partials["total"].sum(axis=axes, keepdims=True)
        spread = partials["count"] * np.square(partials["total"] / partials["count"] - total / count)
        combined["m2"] = (partials["m2"] + spread).sum(axis=axes, keepdims=True)
    combined["count"], combined["total"] = count, total
    return combined


def _statistics_aggregate(normalize: bool, epsilon: float, partials: NDArray, axis: Any = None,
                          keepdims: bool = True, **_: Any) -> NDArray:
    """Each group's mean and 1 / sqrt(variance + Epsilon) (1 without NormalizeVariance), as the kernel takes them:
    the population variance, Epsilon as the FLOAT it is."""
    combined = _statistics_combine(partials, axis)
    normalizer = np.empty(combined.shape, _NORMALIZER)
    with np.errstate(all="ignore"):
        normalizer["mean"] = combined["total"] / combined["count"]
        normalizer["rstd"] = 1.0 / np.sqrt(combined["m2"] / combined["count"] + epsilon) if normalize else 1.0
    return normalizer


def _normalize_chunk(desc: MeanVarianceNormalization1OperatorDesc | MeanVarianceNormalizationOperatorDesc,
                     context: _Context, present: tuple[bool, bool], block: Any, normalizer: Any, *sides: Any,
                     block_id: tuple[int, ...] = ()) -> NDArray:
    """One chunk normalized with its groups' combined statistics, scaled, biased (float64), then the fused
    activation by the standalone activation operator in FLOAT32, and one rounding to the data type."""
    block = np.asarray(block)
    given = iter(sides)
    scale, bias = (np.asarray(next(given)) if flag else None for flag in present)
    with np.errstate(all="ignore"):
        normalized = (block.astype(np.float64) - normalizer["mean"]) * normalizer["rstd"]
        if scale is not None:
            normalized = normalized * scale
        if bias is not None:
            normalized = normalized + bias
        activation = desc.fused_activation
        if activation is None:
            return np.asarray(normalized, block.dtype)
        normalized = normalized.astype(np.float32)
    tensor = _packed(DataType.FLOAT32, block.shape)
    try:
        activated = _run(replace(cast(ActivationOperatorDesc, activation), input_tensor=tensor, output_tensor=tensor),
                         context, [normalized])[0]
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None
    with np.errstate(over="ignore"):  # FLOAT32 beyond FLOAT16's range rounds to infinity, as on one machine
        return activated.astype(block.dtype)


def _lower_normalization(desc: MeanVarianceNormalization1OperatorDesc | MeanVarianceNormalizationOperatorDesc,
                         context: _Context, x: DaskArray, scale: DaskArray | None, bias: DaskArray | None
                         ) -> DaskArray:
    da = _dask_array()

    axes = tuple(sorted(desc.axes))
    dtype = x.dtype
    # Scale and Bias chunked as the input wherever they are not broadcast (size 1).
    sides = [side.rechunk({dim: x.chunks[dim] for dim in range(x.ndim) if side.shape[dim] == x.shape[dim]})
             for side in (scale, bias) if side is not None]
    present = (scale is not None, bias is not None)
    name = _token(desc)
    if all(x.numblocks[axis] == 1 for axis in axes):
        # Every chunk holds whole groups: the operator itself, chunk by chunk.
        task = functools.partial(_node_chunk, desc, context, (True, *present))
        return da.map_blocks(task, x, *sides, dtype=dtype, meta=_meta(x.ndim, dtype), name=_key(name, task, x, *sides))
    reduced_chunks = tuple(((1,) * len(chunks)) if dim in axes else chunks for dim, chunks in enumerate(x.chunks))
    partials = x.map_blocks(functools.partial(_statistics_partial, axes), chunks=reduced_chunks, dtype=_STATISTICS,
                            meta=_meta(x.ndim, _STATISTICS), name=_key(f"{name}-statistics", axes, x))
    epsilon = float(np.float32(desc.epsilon))      # a FLOAT field, as the kernels take it
    normalizer = da.reduction(partials, chunk=functools.partial(_identity, _NORMALIZER), combine=_statistics_combine,
                              aggregate=functools.partial(_statistics_aggregate, desc.normalize_variance, epsilon),
                              axis=axes, keepdims=True, dtype=_NORMALIZER, meta=_meta(x.ndim, _NORMALIZER),
                              concatenate=True, name=f"{name}-combine")
    task = functools.partial(_normalize_chunk, desc, context, present)
    return da.map_blocks(task, x, normalizer, *sides, dtype=dtype, meta=_meta(x.ndim, dtype),
                         name=_key(name, task, x, normalizer, *sides))


# -- ONE_HOT, GATHER_ND1, GATHER_ND -------------------------------------------------------------------------------

def _lower_one_hot(desc: OneHotOperatorDesc, context: _Context, indices: DaskArray, values: DaskArray
                   ) -> DaskArray:
    da = _dask_array()
    block_ids = importlib.import_module("dask.layers").ArrayBlockIdDep

    rank = indices.ndim
    dtype = desc.output_tensor.data_type.numpy_dtype
    chunks = tuple((desc.depth,) if dim == desc.axis else chunks for dim, chunks in enumerate(indices.chunks))
    order = tuple(range(rank))
    return da.blockwise(functools.partial(_node_chunk, desc, context, (True, True)), order, indices, order,
                        values.rechunk(-1), tuple(range(rank, 2 * rank)), block_ids(chunks), order,
                        adjust_chunks={desc.axis: desc.depth}, dtype=dtype, meta=_meta(rank, dtype),
                        align_arrays=False, concatenate=True, token=_token(desc))


def _gather_chunk(desc: GatherNd1OperatorDesc | GatherNdOperatorDesc, context: _Context,
                  locate: Callable[[tuple[int, ...]], list[int]], block: Any, indices: Any,
                  block_id: tuple[int, ...]) -> NDArray:
    try:
        return _chunk_output(desc, context, (True, True), (block, indices))
    except DmlError as error:
        raise _in_chunk(error, f"in the chunk of IndicesTensor that starts at {locate(block_id)}") from None


@dataclass(frozen=True)
class _IndicesChunkStart:
    """Where the chunk of the indices that an output chunk reads starts: output dims -> indices dims."""

    dims: tuple[tuple[int, int], ...]                 # (output dim, indices dim)
    starts: tuple[tuple[int, ...], ...]               # chunk starts of each of those output dims
    rank: int

    def __call__(self, block_id: tuple[int, ...]) -> list[int]:
        start = [0] * self.rank
        for (output_dim, indices_dim), starts in zip(self.dims, self.starts, strict=True):
            start[indices_dim] = starts[block_id[output_dim]]
        return start


def _lower_gather(desc: GatherNd1OperatorDesc | GatherNdOperatorDesc, context: _Context, x: DaskArray,
                  indices: DaskArray) -> DaskArray:
    """GATHER_ND1 (GATHER_ND: no batch dimensions) per chunk of the indices; the input's gathered dimensions (and its
    leading ones, which are 1) in one chunk."""
    da = _dask_array()
    block_ids = importlib.import_module("dask.layers").ArrayBlockIdDep

    rank = x.ndim
    input_count, indices_count = desc.input_dimension_count, desc.indices_dimension_count
    batch = desc.batch_dimension_count if isinstance(desc, GatherNd1OperatorDesc) else 0
    tuple_size = indices.shape[-1]
    input_batch = list(range(rank - input_count, rank - input_count + batch))
    rest = list(range(rank - input_count + batch + tuple_size, rank))
    indices_batch = list(range(rank - indices_count, rank - indices_count + batch))
    indices_other = list(range(rank - indices_count + batch, rank - 1))
    pad = rank - (indices_count - 1 + len(rest))
    # Output dims: pad (1s), the batch dims, the indices' other dims, the input's rest.
    out_batch = list(range(pad, pad + batch))
    out_other = list(range(pad + batch, pad + indices_count - 1))
    out_rest = list(range(pad + indices_count - 1, rank))
    x = x.rechunk({dim: -1 for dim in range(rank) if dim not in input_batch and dim not in rest})
    indices = indices.rechunk({rank - 1: -1, **{dim: x.chunks[source] for dim, source in
                                                zip(indices_batch, input_batch, strict=True)}})
    _check_largest_chunk(desc, "InputTensor", x)    # as rechunked: the chunks the kernel sees
    fresh = iter(range(rank, 3 * rank))
    x_index = [next(fresh) for _ in range(rank)]
    indices_index = [next(fresh) for _ in range(rank)]
    chunks: list[tuple[int, ...]] = [(1,)] * rank
    for out_dim, input_dim, indices_dim in zip(out_batch, input_batch, indices_batch, strict=True):
        x_index[input_dim] = indices_index[indices_dim] = out_dim
        chunks[out_dim] = x.chunks[input_dim]
    for out_dim, indices_dim in zip(out_other, indices_other, strict=True):
        indices_index[indices_dim] = out_dim
        chunks[out_dim] = indices.chunks[indices_dim]
    for out_dim, input_dim in zip(out_rest, rest, strict=True):
        x_index[input_dim] = out_dim
        chunks[out_dim] = x.chunks[input_dim]
    mapped = [*zip(out_batch, indices_batch, strict=True), *zip(out_other, indices_other, strict=True)]
    locate = _IndicesChunkStart(tuple(mapped), tuple(tuple(np.cumsum((0, *chunks[out_dim][:-1])).tolist())
                                                       for out_dim, _ in mapped), rank)
    dtype = x.dtype
    out_index = tuple(range(rank))
    return da.blockwise(functools.partial(_gather_chunk, desc, context, locate), out_index, x, tuple(x_index),
                        indices, tuple(indices_index), block_ids(tuple(chunks)), out_index,
                        new_axes={dim: 1 for dim in range(pad)}, dtype=dtype, meta=_meta(rank, dtype),
                        align_arrays=False, concatenate=True, token=_token(desc))


def _lower_gather_axis(desc: GatherOperatorDesc | GatherElementsOperatorDesc, context: _Context, x: DaskArray,
                       indices: DaskArray) -> DaskArray:
    """GATHER and GATHER_ELEMENTS as the GATHER_ND1 their kernels run (ops/gather.py): the same views of the Dask
    arrays (leading 1s, the indices broadcast over GATHER's batch dimensions, GATHER_ELEMENTS' Axis moved last),
    GATHER_ND1's lowering (the gathered axis in one chunk, blockwise over the rest), then the output's own view."""
    da = _dask_array()
    rank, axis = x.ndim, desc.axis
    packed = replace(desc, input_tensor=_packed(desc.input_tensor.data_type, x.shape),
                     indices_tensor=_packed(desc.indices_tensor.data_type, indices.shape),
                     output_tensor=_packed(desc.output_tensor.data_type, desc.output_tensor.sizes))
    nd1 = packed.as_gather_nd1()
    if isinstance(desc, GatherOperatorDesc):
        count = desc.index_dimensions
        view = nd1.indices_tensor.sizes    # leading 1s, the batch dimensions (broadcast), the index ones, 1
        index_count = nd1.indices_dimension_count - 1 - nd1.batch_dimension_count
        index_sizes = tuple(view[len(view) - 1 - index_count:-1])
        meaningful = indices.reshape(indices.shape[rank - count:])
        shaped = meaningful.reshape((1,) * (len(view) - 1 - index_count) + index_sizes + (1,))
        out = _lower_gather(nd1, context, x.reshape(nd1.input_tensor.sizes), da.broadcast_to(shaped, view))
        return out.reshape(desc.output_tensor.sizes)
    order = [dim for dim in range(rank) if dim != axis] + [axis]
    out = _lower_gather(nd1, context, x.transpose(order).reshape(nd1.input_tensor.sizes),
                        indices.transpose(order).reshape(nd1.indices_tensor.sizes))
    out = out.reshape(tuple(indices.shape[dim] for dim in order))
    return out.transpose([order.index(dim) for dim in range(rank)])


# -- GEMM and CONVOLUTION ---------------------------------------------------------------------------------------------

def _bound(data_type: DataType, block: Any) -> tuple[TensorDesc, NDArray]:
    """A block bound where it lies, through its own strides (a transposed view, a zero-strided broadcast)."""
    block = np.asarray(block)
    return _block_binding(data_type, block, tuple(block.shape))


def _whole_axes(activation: OperatorDesc | None, rank: int) -> tuple[int, ...]:
    """The output dimensions a fused activation needs whole in one block: a softmax's axes (SOFTMAX's last, SOFTMAX1's
    Axes); none for the element-wise ones."""
    return activation.softmax_axes(rank) if isinstance(activation, _FusedSoftmax) else ()


def _gemm_chunk(desc: GemmOperatorDesc, context: _Context, partial: bool, *blocks: Any) -> NDArray:
    """GEMM on one block of A and B (and C): the node's operator for the block's sizes. A partial (one chunk of K):
    FLOAT16 widened to FLOAT32, Alpha 1, no C, no activation, its sum kept in FLOAT32 (the accumulator of both types),
    with a leading dimension of 1 for the K chunk it is."""
    block_id: tuple[int, ...] = blocks[-1]
    data_type = desc.output_tensor.data_type
    a, b = np.asarray(blocks[0]), np.asarray(blocks[1])
    c = np.asarray(blocks[2]) if len(blocks) > 3 else None
    if partial and data_type == DataType.FLOAT16:
        data_type, a, b = DataType.FLOAT32, a.astype(np.float32), b.astype(np.float32)
    (a_tensor, a_memory), (b_tensor, b_memory) = _bound(data_type, a), _bound(data_type, b)
    c_tensor, c_memory = _bound(data_type, c) if c is not None else (None, None)
    transposed_a = desc.trans_a is MatrixTransform.TRANSPOSE
    transposed_b = desc.trans_b is MatrixTransform.TRANSPOSE
    sizes = (*a.shape[:-2], a.shape[-1 if transposed_a else -2], b.shape[-2 if transposed_b else -1])
    output = _packed(data_type, sizes)
    chunk = replace(desc, a_tensor=a_tensor, b_tensor=b_tensor, c_tensor=c_tensor, output_tensor=output)
    if partial:
        chunk = replace(chunk, alpha=1.0, beta=0.0, fused_activation=None)
    try:
        result = _run(chunk, context, [a_memory, b_memory, c_memory])[0]
    except DmlError as error:
        raise _in_chunk(error, f"{'partial product' if partial else 'output chunk'} {list(block_id)}") from None
    return result[None] if partial else result


def _gemm_finish(desc: GemmOperatorDesc, context: _Context, *blocks: Any) -> NDArray:
    """One output block from the float64 sum of its K chunks' partials: Alpha * sum + Beta * C in float64, then the
    fused activation by the GEMM kernel itself (FLOAT32, the compute type of both data types: C the value, A and B
    zeros, K 1) and one rounding to the data type; without an activation, the one rounding of the float64 value."""
    block_id: tuple[int, ...] = blocks[-1]
    total = np.asarray(blocks[0], np.float64)
    dtype = desc.output_tensor.data_type.numpy_dtype
    with np.errstate(all="ignore"):
        value = np.float64(desc.alpha) * total
        if len(blocks) > 2:
            value = value + np.float64(desc.beta) * np.asarray(blocks[1], np.float64)
        if desc.fused_activation is None:
            return value.astype(dtype)
        value = value.astype(np.float32)
    wide = DataType.FLOAT32
    zeros = np.zeros(1, np.float32)
    batch = value.shape[:-2]
    m, n = value.shape[-2:]
    broadcast = (0,) * len(batch)
    finish = replace(desc, a_tensor=TensorDesc(wide, (*batch, m, 1), (*broadcast, 0, 0)),
                     b_tensor=TensorDesc(wide, (*batch, 1, n), (*broadcast, 0, 0)), c_tensor=_packed(wide, value.shape),
                     output_tensor=_packed(wide, value.shape), trans_a=MatrixTransform.NONE,
                     trans_b=MatrixTransform.NONE, alpha=1.0, beta=1.0)
    try:
        activated = _run(finish, context, [zeros, zeros, value])[0]
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None
    with np.errstate(over="ignore"):  # FLOAT32 beyond FLOAT16's range rounds to infinity, as on one machine
        return activated.astype(dtype)


def _lower_gemm(desc: GemmOperatorDesc, context: _Context, a: DaskArray, b: DaskArray, c: DaskArray | None
                ) -> DaskArray:
    """GEMM blockwise over the output's batch, M and N chunks; over chunks of K, a partial product per K chunk, summed
    exactly (float64) and finished by `_gemm_finish`."""
    da = _dask_array()
    core = importlib.import_module("dask.array.core")
    block_ids = importlib.import_module("dask.layers").ArrayBlockIdDep

    output = desc.output_tensor
    rank = output.dimension_count
    batch, m, n, k = tuple(range(rank - 2)), rank - 2, rank - 1, rank    # Dask's index labels
    _, _, _, depth = desc.matrix_sizes()
    operands = [(a, (*batch, k, m) if desc.trans_a is MatrixTransform.TRANSPOSE else (*batch, m, k)),
                (b, (*batch, n, k) if desc.trans_b is MatrixTransform.TRANSPOSE else (*batch, k, n))]
    if c is not None:
        operands.append((c, (*batch, m, n)))
    sizes = {**dict(enumerate(output.sizes)), k: depth}
    whole = _whole_axes(desc.fused_activation, rank)
    cuts: dict[int, tuple[int, ...]] = {}
    for label, size in sizes.items():
        chunkings = [array.chunks[index.index(label)] for array, index in operands if label in index]
        cuts[label] = (size,) if label in whole else core.common_blockdim(chunkings)
    operands = [(array.rechunk({dim: cuts[label] for dim, label in enumerate(index)}), index)
                for array, index in operands]
    arguments = [part for operand in operands for part in operand]
    out_index = tuple(range(rank))
    chunks = tuple(cuts[label] for label in out_index)
    dtype = output.data_type.numpy_dtype
    if len(cuts[k]) == 1:
        result = da.blockwise(functools.partial(_gemm_chunk, desc, context, False), out_index, *arguments,
                              block_ids(chunks), out_index, adjust_chunks=dict(enumerate(chunks)), dtype=dtype,
                              meta=_meta(rank, dtype), align_arrays=False, concatenate=True, token=_token(desc))
        _check_chunk_limits(desc, [array for array, _ in operands] + [None] * (c is None), [result])
        return result
    partial_index = (k, *out_index)
    partial_chunks = ((1,) * len(cuts[k]), *chunks)
    partial_dtype = np.dtype(np.float32)
    partials = da.blockwise(functools.partial(_gemm_chunk, desc, context, True), partial_index, *arguments[:4],
                            block_ids(partial_chunks), partial_index,
                            adjust_chunks=dict(zip(partial_index, partial_chunks, strict=True)), dtype=partial_dtype,
                            meta=_meta(rank + 1, partial_dtype), align_arrays=False, concatenate=True,
                            token=f"{_token(desc)}-partial")
    total = partials.sum(axis=0, dtype=np.float64)
    finish = [total, out_index, *arguments[4:]]
    result = da.blockwise(functools.partial(_gemm_finish, desc, context), out_index, *finish, block_ids(chunks),
                          out_index, adjust_chunks=dict(enumerate(chunks)), dtype=dtype, meta=_meta(rank, dtype),
                          align_arrays=False, concatenate=True, token=_token(desc))
    _check_chunk_limits(desc, [array for array, _ in operands] + [None] * (c is None), [result])
    return result


@dataclass(frozen=True)
class _Halo:
    """How a CONVOLUTION cuts one spatial dimension: the input's chunks and the output's (block i of one makes block i
    of the other), the halo every input chunk takes from its neighbours (before, after), and the paddings of each
    block's own descriptor: the array's StartPadding in the first block, its EndPadding and OutputPadding in the last,
    and between blocks what makes each block's output exactly its own outputs."""

    input_chunks: tuple[int, ...]
    output_chunks: tuple[int, ...]
    depth: tuple[int, int]
    start: tuple[int, int]                 # StartPadding of the first block, of every other one
    end: tuple[tuple[int, int], ...]       # (EndPadding, OutputPadding) of every block but the last, of the last

    def paddings(self, index: int) -> tuple[int, int, int]:
        """(StartPadding, EndPadding, OutputPadding) of block `index`."""
        end, extra = self.end[1] if index == len(self.output_chunks) - 1 else self.end[0]
        return self.start[0] if index == 0 else self.start[1], end, extra


def _halo(length: int, chunks: tuple[int, ...], kernel: int, stride: int, dilation: int, start: int, end: int,
          extra: int, out: int, backward: bool) -> _Halo:
    """The cut of one spatial dimension, as close to the input's chunks as the convolution allows.

    FORWARD: output y reads the input from y*S - Ps to y*S - Ps + (k-1)*D, so input chunk boundaries fall on y*S - Ps
    (the output's boundaries y, at the input's boundaries rounded to a multiple of the stride: each output belongs to
    exactly one block), and a chunk takes (k-1)*D + 1 - S more elements after it. BACKWARD (transposed): input x
    lands on x*S - Ps + k*D, so the input keeps its boundaries c, the output's fall on c*S - Ps, and a chunk takes
    (k-1)*D // S elements before it; each block crops (EndPadding) or extends (OutputPadding) its output to end where
    the next block's starts. Boundaries are dropped until every chunk holds at least its halo and every block at
    least one input and one output element."""
    extent = (kernel - 1) * dilation + 1
    edges = np.cumsum(chunks)[:-1].tolist()
    if backward:
        depth = ((kernel - 1) * dilation // stride, 0)
        inner = (depth[0] * stride, (max(0, extent - stride), max(0, stride - extent)))
        candidates = [(edge, edge * stride - start) for edge in edges]
    else:
        depth = (0, max(0, extent - stride))
        inner = (0, (0, 0))
        outputs = [(edge + start + stride // 2) // stride for edge in edges]
        candidates = [(y * stride - start, y) for y in outputs]
    need = max(*depth, 1)
    kept = [(0, 0)]
    for edge, y in candidates:
        if edge - kept[-1][0] >= need and length - edge >= need and kept[-1][1] < y < out:
            kept.append((edge, y))
    inputs = [edge for edge, _ in kept] + [length]
    outputs = [y for _, y in kept] + [out]
    return _Halo(tuple(np.diff(inputs).tolist()), tuple(np.diff(outputs).tolist()),
                 depth if len(kept) > 1 else (0, 0), (start, inner[0]), (inner[1], (end, extra)))


def _convolution_chunk(desc: ConvolutionOperatorDesc, context: _Context, halos: tuple[_Halo, ...], *blocks: Any
                       ) -> NDArray:
    """CONVOLUTION on one input block (with its halos), the filter and the bias: the node's operator for the block,
    with the block's own paddings."""
    block_id: tuple[int, ...] = blocks[-1]
    x = np.asarray(blocks[0])
    first = x.ndim - len(halos)
    paddings = [halo.paddings(block_id[first + dim]) for dim, halo in enumerate(halos)]
    start, end, extra = (tuple(values) for values in zip(*paddings, strict=True))
    sizes = (x.shape[0], *desc.output_tensor.sizes[1:first],
             *(halo.output_chunks[block_id[first + dim]] for dim, halo in enumerate(halos)))
    data_type = desc.output_tensor.data_type
    tensors = [_bound(data_type, block) for block in blocks[:-1]]
    x_tensor, w_tensor = tensors[0][0], tensors[1][0]
    bias_tensor = tensors[2][0] if len(tensors) > 2 else None
    chunk = replace(desc, input_tensor=x_tensor, filter_tensor=w_tensor, bias_tensor=bias_tensor,
                    output_tensor=_packed(data_type, sizes), start_padding=start, end_padding=end,
                    output_padding=extra)
    memories = [memory for _, memory in tensors] + [None] * (3 - len(tensors))
    try:
        return _run(chunk, context, memories)[0]
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None


def _lower_convolution(desc: ConvolutionOperatorDesc, context: _Context, x: DaskArray, w: DaskArray,
                       bias: DaskArray | None) -> DaskArray:
    """CONVOLUTION blockwise over the batch's chunks and the spatial chunks (`_halo`), the halos shared by Dask's
    overlap (what `map_overlap` runs before its blocks); the channels, the filter and the bias in one chunk."""
    da = _dask_array()
    overlap = importlib.import_module("dask.array.overlap").overlap
    block_ids = importlib.import_module("dask.layers").ArrayBlockIdDep

    rank = x.ndim
    first = rank - desc.spatial_count
    backward = desc.direction is ConvolutionDirection.BACKWARD
    out_sizes = desc.output_tensor.sizes
    halos = tuple(_halo(x.shape[dim], x.chunks[dim], w.shape[dim], desc.strides[i], desc.dilations[i],
                        desc.start_padding[i], desc.end_padding[i], desc.output_padding[i], out_sizes[dim], backward)
                  for i, dim in enumerate(range(first, rank)))
    x = x.rechunk({**{dim: -1 for dim in range(1, first)},
                   **{first + i: halo.input_chunks for i, halo in enumerate(halos)}})
    spatial = {first + i: halo.depth for i, halo in enumerate(halos) if halo.depth != (0, 0)}
    if spatial:
        x = overlap(x, depth=spatial, boundary={dim: "none" for dim in spatial}, allow_rechunk=False)
    _check_largest_chunk(desc, "InputTensor", x)     # as the blocks the kernel sees, halos included
    chunks = (x.chunks[0], *((size,) for size in out_sizes[1:first]), *(halo.output_chunks for halo in halos))
    index = tuple(range(rank))
    arguments = [x, index, w.rechunk(-1), tuple(range(rank, 2 * rank))]
    if bias is not None:
        arguments += [bias.rechunk(-1), tuple(range(2 * rank, 3 * rank))]
    dtype = desc.output_tensor.data_type.numpy_dtype
    return da.blockwise(functools.partial(_convolution_chunk, desc, context, halos), index, *arguments,
                        block_ids(chunks), index, adjust_chunks=dict(enumerate(chunks)), dtype=dtype,
                        meta=_meta(rank, dtype), align_arrays=False, concatenate=True, token=_token(desc))


# -- the element-wise operators -------------------------------------------------------------------------------------

def _real_dimensions(desc: TensorDesc) -> list[int]:
    """The dimensions that address more than one memory element (size above 1, stride not 0)."""
    return [dim for dim, (size, stride) in enumerate(zip(desc.sizes, desc.element_strides, strict=True))
            if size > 1 and stride != 0]


def _is_dense(desc: TensorDesc, dims: Sequence[int]) -> bool:
    """Whether `dims`, from the largest stride to the smallest, are a packed layout (no gap, no overlap)."""
    ordered = sorted(dims, key=lambda dim: -desc.element_strides[dim])
    return [desc.element_strides[dim] for dim in ordered] == list(packed_strides([desc.sizes[dim] for dim in ordered]))


def _same_layout(tensor: TensorDesc, source: TensorDesc) -> bool:
    return tensor.sizes == source.sizes and tensor.element_strides == source.element_strides


def _read_through(label: str, name: str, tensor: TensorDesc, source: TensorDesc, array: DaskArray) -> DaskArray:
    """What an operator's input `tensor` reads of the memory that holds the expression `source` (whose logical array
    is `array`), each dimension that `tensor` broadcasts (stride 0) cut to size 1.

    Where the tensor reads the source's memory dimension by dimension (the same sizes and strides, perhaps in another
    order: a transposed view), a transpose of the source; where both are dense (a reshape), a reshape; anything else
    is laid out in memory in one chunk and read through the tensor's strides, as on one machine.
    """
    reads, holds = _real_dimensions(tensor), _real_dimensions(source)
    # The source as its memory holds it: the dimensions it aliases (stride 0) or that have one element taken once,
    # the others from the largest stride to the smallest.
    compact = array[tuple(slice(None) if dim in holds else 0 for dim in range(source.dimension_count))]
    held = sorted(holds, key=lambda dim: -source.element_strides[dim])
    memory = _transpose(compact, [holds.index(dim) for dim in held])
    order = sorted(reads, key=lambda dim: -tensor.element_strides[dim])
    layout = [(tensor.sizes[dim], tensor.element_strides[dim]) for dim in order]
    if layout != [(source.sizes[dim], source.element_strides[dim]) for dim in held]:
        if not (_is_dense(tensor, reads) and _is_dense(source, holds)
                and math.prod(tensor.sizes[dim] for dim in reads) == math.prod(source.sizes[dim] for dim in holds)):
            return _read_in_one_chunk(label, name, tensor, source, array)
        memory = _reshape(memory, tuple(size for size, _ in layout))
    expand = tuple(slice(None) if dim in reads else None for dim in range(tensor.dimension_count))
    return _transpose(memory, [order.index(dim) for dim in reads])[expand]


def _transpose(array: DaskArray, axes: list[int]) -> DaskArray:
    """A transpose of a Dask array (the array itself where the axes are in order)."""
    return array if axes == sorted(axes) else array.transpose(axes)


def _reshape(array: DaskArray, sizes: tuple[int, ...]) -> DaskArray:
    """A reshape of a Dask array; where Dask cannot split and merge its dimensions in one pass, through one
    dimension."""
    try:
        return array.reshape(sizes)
    except NotImplementedError:
        return array.reshape(-1).reshape(sizes)


def _read_in_one_chunk(label: str, name: str, tensor: TensorDesc, source: TensorDesc, array: DaskArray
                       ) -> DaskArray:
    """`_read_through` for any other strides: the source laid out in its memory, read through the tensor's."""
    if tensor.total_tensor_size_in_bytes > source.total_tensor_size_in_bytes:
        raise BindingError(f"{label}: {name} (Sizes {list(tensor.sizes)}, Strides {list(tensor.element_strides)}) "
                           f"needs {tensor.total_tensor_size_in_bytes} bytes; the expression it reads holds "
                           f"{source.total_tensor_size_in_bytes} (Sizes {list(source.sizes)}, Strides "
                           f"{list(source.element_strides)})")
    sizes = tuple(1 if stride == 0 else size for size, stride in zip(tensor.sizes, tensor.element_strides,
                                                                       strict=True))
    task = functools.partial(_read_memory, tensor, source)
    dtype = array.dtype
    return array.rechunk(-1).map_blocks(task, chunks=tuple((size,) for size in sizes), dtype=dtype,
                                        meta=_meta(len(sizes), dtype), name=_key("opendml-read", task, array))


def _read_memory(tensor: TensorDesc, source: TensorDesc, block: Any) -> NDArray:
    """The source's logical array laid out in its memory, read back through the tensor's strides (the dimensions it
    broadcasts cut to size 1)."""
    memory = np.zeros(source.total_tensor_size_in_bytes, np.uint8)
    tensor_view(memory, 0, source, writable=True)[...] = block
    view = tensor_view(memory, 0, tensor, writable=False)
    return np.array(view[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in tensor.element_strides)])


def _logical(label: str, name: str, tensor: TensorDesc, source: TensorDesc, array: DaskArray) -> DaskArray:
    """The logical array an input `tensor` reads (for the lowerings that take whole logical arrays), where its layout
    is not its expression's own (strides folded into the operator)."""
    if _same_layout(tensor, source):
        return array
    return _dask_array().broadcast_to(_read_through(label, name, tensor, source, array), tensor.sizes)


def _block_binding(data_type: DataType, block: NDArray, output: tuple[int, ...]) -> tuple[TensorDesc, NDArray]:
    """An input's block as the operator reads it for an output block, and the memory to bind: the block where it
    lies, read through its own strides (a slice of a larger array, a transposed view), from its first element to
    its last; a packed copy where its strides are negative or not whole elements. Stride 0 where the block has one
    element and the output block more (the dimensions the input broadcasts); a dimension of one element in both
    takes the packed stride (any stride reads the same element)."""
    itemsize = block.itemsize
    packed = packed_strides(output)
    if block.flags.aligned and all(stride >= 0 and stride % itemsize == 0
                                   for size, stride in zip(block.shape, block.strides, strict=True) if size > 1):
        strides = tuple((0 if wanted > 1 else fallback) if size == 1 else stride // itemsize
                        for size, wanted, stride, fallback in zip(block.shape, output, block.strides, packed,
                                                                   strict=True))
        last = sum((size - 1) * stride for size, stride in zip(block.shape, strides, strict=True))
        memory = np.lib.stride_tricks.as_strided(block, shape=(last + 1,), strides=(itemsize,), writeable=False)
    else:
        memory = np.ascontiguousarray(block)
        strides = tuple((0 if wanted > 1 else fallback) if size == 1 else stride
                        for size, wanted, stride, fallback in zip(block.shape, output, packed_strides(block.shape),
                                                                   packed, strict=True))
    return TensorDesc(data_type, output, None if strides == packed else strides), memory


def _element_wise_chunk(desc: ElementWiseOperatorDesc, context: _Context, present: tuple[bool, ...],
                        chunks: tuple[tuple[int, ...], ...], *blocks: Any) -> NDArray:
    """The operator on one output block, by its own kernel: a descriptor of the block's sizes, each input bound
    where its block lies (`_block_binding`), with stride 0 along the dimensions it broadcasts."""
    block_id: tuple[int, ...] = blocks[-1]
    output = tuple(chunks[dim][index] for dim, index in enumerate(block_id))
    given = iter(blocks[:-1])
    # The descriptor's fields: its input tensors in binding order, then OutputTensor (ops/elementwise.py).
    fields = [field.name for field in dataclasses.fields(cast(Any, desc))]
    tensors: dict[str, TensorDesc] = {}
    memories: list[NDArray | None] = []
    for field, (_, tensor), flag in zip(fields, desc.input_slots(), present, strict=False):
        if tensor is None or not flag:
            memories.append(None)
            continue
        tensors[field], memory = _block_binding(tensor.data_type, np.asarray(next(given)), output)
        memories.append(memory)
    tensors[fields[len(present)]] = _packed(desc.output_slots()[0][1].data_type, output)
    try:
        return _run(replace(cast(Any, desc), **tensors), context, memories)[0]
    except DmlError as error:
        raise _in_chunk(error, f"output chunk {list(block_id)}") from None


def _lower_element_wise(desc: ElementWiseOperatorDesc, context: _Context, inputs: Sequence[DaskArray | None],
                        sources: Sequence[TensorDesc | None]) -> DaskArray:
    """The operator blockwise over the output's chunks: each input as the operator reads it (`_read_through`),
    chunked as the output along the dimensions it does not broadcast and in one chunk of size 1 along those it does.
    The output's chunks are the inputs' (the finer where two differ); a dimension that every input broadcasts is
    chunked as Dask chunks a new array. Checks every chunk a kernel will see (DECISIONS 2) before any task runs."""
    da = _dask_array()
    core = importlib.import_module("dask.array.core")
    block_ids = importlib.import_module("dask.layers").ArrayBlockIdDep

    output = desc.output_slots()[0][1]
    rank = output.dimension_count
    reads = [None if array is None or tensor is None or source is None
             else _read_through(desc.label, name, tensor, source, array)
             for (name, tensor), array, source in zip(desc.input_slots(), inputs, sources, strict=True)]
    cuts: list[Any] = []
    for dim, size in enumerate(output.sizes):
        chunkings = [array.chunks[dim] for array in reads if array is not None and array.shape[dim] == size]
        cuts.append(core.common_blockdim(chunkings) if chunkings else "auto")
    chunks: tuple[tuple[int, ...], ...] = core.normalize_chunks(tuple(cuts), output.sizes,
                                                                dtype=output.data_type.numpy_dtype)
    reads = [None if array is None else
             array.rechunk({dim: chunks[dim] for dim in range(rank) if array.shape[dim] == output.sizes[dim]})
             for array in reads]
    present = tuple(array is not None for array in reads)
    index = tuple(range(rank))
    arguments = [part for array in reads if array is not None for part in (array, index)]
    dtype = output.data_type.numpy_dtype
    result = da.blockwise(functools.partial(_element_wise_chunk, desc, context, present, chunks), index, *arguments,
                          block_ids(chunks), index, adjust_chunks=dict(enumerate(chunks)), dtype=dtype,
                          meta=_meta(rank, dtype), align_arrays=False, concatenate=True, token=_token(desc))
    _check_chunk_limits(desc, reads, [result])
    return result


# -- the graph --------------------------------------------------------------------------------------------------------

def _meta(rank: int, dtype: Any) -> NDArray:
    return np.empty((0,) * rank, dtype)


def _token(desc: OperatorDesc) -> str:
    """The prefix of a node's Dask keys, e.g. opendml-mean-variance-normalization1."""
    return f"opendml-{desc.OPERATOR_TYPE.name.lower().replace('_', '-')}"


def _key(prefix: str, *parts: Any) -> str:
    """A Dask array name: the prefix, and a hash of what the array is made of (the same graph gives the same keys)."""
    return f"{prefix}-{importlib.import_module('dask.base').tokenize(*parts)}"


def _what(block: object) -> str:
    """What a chunk that is not an array is, for an error message: its type, and its dtype where it has one."""
    kind = type(block)
    dtype = getattr(block, "dtype", None)
    return f"a {kind.__module__}.{kind.__qualname__}" + (f" of dtype {dtype}" if dtype is not None else "")


def _input_chunk(name: str, data_type: DataType, block: Any, block_info: dict[Any, Any] | None = None) -> NDArray:
    """A chunk of a Dask graph input, checked against what its Dask array declares before any task reads it: a NumPy
    array (not a masked one: its mask would be dropped), of the array's dtype and of the chunk's shape. Dask checks
    neither (a `map_blocks` given the wrong `dtype=` says one thing and computes another), and a kernel would read
    the bytes as the declared type; refused with a BindingError naming the input, the chunk and both."""
    assert block_info is not None
    expected = tuple(block_info[None]["chunk-shape"])
    dtype = data_type.numpy_dtype
    where = f"CompiledGraph: input {name!r}: Dask chunk {list(block_info[None]['chunk-location'])}"
    if not isinstance(block, np.ndarray) or isinstance(block, np.ma.MaskedArray):
        raise BindingError(f"{where} is {_what(block)}; it must be a NumPy array (not a masked one) of dtype {dtype} "
                           f"and shape {list(expected)}, as the Dask array declares")
    if block.dtype != dtype:
        raise BindingError(f"{where} has dtype {block.dtype}; the Dask array declares {dtype} (DataType "
                           f"{data_type.name})")
    if block.shape != expected:
        raise BindingError(f"{where} has shape {list(block.shape)}; the Dask array's chunks say {list(expected)}")
    return block


def _check_aliased(desc: TensorDesc, name: str, block: Any) -> NDArray:
    """The input laid out at its strides reads back as given (where strides alias, the aliased elements are equal),
    as a dispatch on NumPy arrays requires."""
    array = np.asarray(block)
    lay_out_input(tensor_view(np.zeros(desc.total_tensor_size_in_bytes, np.uint8), 0, desc, writable=True), array,
                  True, name)
    return array


def _lower_generator(desc: GeneratorOperatorDesc, inputs: list[DaskArray | None]) -> DaskArray:
    """A generator (ops/generators.py) block by block over its output's chunks (its InputTensor's where it has one,
    else Dask's automatic ones): each block is the formula's NumPy rendering at the block's coordinate offset
    (generators.block_values), so that index, row and col are those of the whole output."""
    da = _dask_array()
    output = desc.output_tensor
    dtype = output.data_type.numpy_dtype
    source = inputs[0] if inputs else None

    def block(*blocks: NDArray, block_info: dict[Any, Any] | None = None) -> NDArray:
        assert block_info is not None
        origin = [start for start, _ in block_info[None]["array-location"]]
        return block_values(desc, origin, block_info[None]["chunk-shape"], blocks[0] if source is not None else None)

    base = source if source is not None else da.zeros(output.sizes, dtype=dtype, chunks="auto")
    return base.map_blocks(block, dtype=dtype, meta=_meta(len(output.sizes), dtype),
                           name=_key(_token(desc), desc, base))


# -- SPACE_TO_DEPTH, DEPTH_TO_SPACE and their "1" versions ----------------------------------------------------------

def _depth_space_chunk(desc: DepthSpaceBase, context: _Context, block: Any) -> NDArray:
    """One block's output by the node's kernel, on a descriptor of the block's sizes."""
    block = np.asarray(block)
    sizes = output_sizes(desc.TO_SPACE, block.shape, desc.block_size)
    assert sizes is not None
    data_type = desc.input_tensor.data_type
    kind = replace(cast(Any, desc), input_tensor=_packed(data_type, block.shape),
                   output_tensor=_packed(data_type, sizes))
    return _run(kind, context, [block])[0]


def _lower_depth_space(desc: DepthSpaceBase, context: _Context, x: DaskArray) -> DaskArray:
    """The depth/space operators block by block: the channels in one chunk, and (SPACE_TO_DEPTH) height and width in
    chunks of whole blocks, so that every output block is the node's kernel on one input block."""
    b = desc.block_size

    def whole_blocks(chunks: tuple[int, ...]) -> int | str:
        return max(b, chunks[0] // b * b) if not desc.TO_SPACE else chunks[0]

    x = x.rechunk({1: -1, 2: whole_blocks(x.chunks[2]), 3: whole_blocks(x.chunks[3])})
    scale = (1, 1, b, b) if desc.TO_SPACE else (1, 1, 1, 1)
    shrink = (1, 1, 1, 1) if desc.TO_SPACE else (1, 1, b, b)
    channels = desc.output_tensor.sizes[1]
    chunks = tuple((channels,) if dim == 1 else tuple(c * scale[dim] // shrink[dim] for c in x.chunks[dim])
                   for dim in range(4))
    dtype = desc.output_tensor.data_type.numpy_dtype
    task = functools.partial(_depth_space_chunk, desc, context)
    return x.map_blocks(task, dtype=dtype, chunks=chunks, meta=_meta(4, dtype), name=_key(_token(desc), task, x))


# -- REVERSE_SUBSEQUENCES -------------------------------------------------------------------------------------------

def _reverse_chunk(desc: ReverseSubsequencesOperatorDesc, context: _Context, block: Any, lengths: Any) -> NDArray:
    """One block's output by the node's kernel (the block holds whole sequences: Axis is one chunk)."""
    block, lengths = np.asarray(block), np.asarray(lengths)
    kind = replace(desc, input_tensor=_packed(desc.input_tensor.data_type, block.shape),
                   sequence_lengths_tensor=_packed(DataType.UINT32, lengths.shape),
                   output_tensor=_packed(desc.output_tensor.data_type, block.shape))
    return _run(kind, context, [block, lengths])[0]


def _lower_reverse(desc: ReverseSubsequencesOperatorDesc, context: _Context, x: DaskArray,
                   lengths: DaskArray) -> DaskArray:
    """REVERSE_SUBSEQUENCES blockwise: Axis in one chunk, the lengths chunked as x along every other dimension."""
    da = _dask_array()
    axis = desc.axis
    x = x.rechunk({axis: -1})
    lengths = lengths.rechunk(tuple((1,) if dim == axis else x.chunks[dim] for dim in range(x.ndim)))
    dtype = desc.output_tensor.data_type.numpy_dtype
    task = functools.partial(_reverse_chunk, desc, context)
    return da.map_blocks(task, x, lengths, dtype=dtype, chunks=x.chunks, meta=_meta(x.ndim, dtype),
                         name=_key(_token(desc), task, x, lengths))


# -- UPSAMPLE_2D -----------------------------------------------------------------------------------------------------

def _upsample_chunk(desc: Upsample2dOperatorDesc, context: _Context, block: Any) -> NDArray:
    """One block's output by the node's kernel, on a descriptor of the block's sizes (whole images)."""
    block = np.asarray(block)
    data_type = desc.input_tensor.data_type
    scale = desc.scale_size
    sizes = (*block.shape[:-2], block.shape[-2] * scale.height, block.shape[-1] * scale.width)
    kind = replace(desc, input_tensor=_packed(data_type, block.shape), output_tensor=_packed(data_type, sizes))
    return _run(kind, context, [block])[0]


def _lower_upsample(desc: Upsample2dOperatorDesc, context: _Context, x: DaskArray) -> DaskArray:
    """UPSAMPLE_2D blockwise: batch, channel (and depth) keep their chunks; height and width are rechunked to one
    chunk each (a LINEAR tap reads its neighbour across any cut), so each block is whole images."""
    rank = x.ndim
    x = x.rechunk({rank - 2: -1, rank - 1: -1})
    scale = (*([1] * (rank - 2)), desc.scale_size.height, desc.scale_size.width)
    chunks = tuple(tuple(c * scale[dim] for c in x.chunks[dim]) for dim in range(rank))
    dtype = desc.output_tensor.data_type.numpy_dtype
    task = functools.partial(_upsample_chunk, desc, context)
    return x.map_blocks(task, dtype=dtype, chunks=chunks, meta=_meta(rank, dtype), name=_key(_token(desc), task, x))


# -- CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT ------------------------------------------------------------------------

def _tally_chunk(desc: CumulativeOperatorDesc, context: _Context, block: Any, carry: Any = None) -> NDArray:
    """The inclusive tallies of one chunk (in the accumulation type: FLOAT32 for FLOAT16) by the node's kernel,
    started from `carry` (the tally of the chunks before it along Axis, in AxisDirection's order; None: the first):
    the kernel runs on the carry joined to the chunk where the walk enters it, so each tally is the one sequential
    walk of one machine, bit for bit."""
    block = np.asarray(block)
    accumulate = np.float32 if block.dtype == np.float16 else block.dtype
    block = block.astype(accumulate)
    axis, decreasing = desc.axis, desc.decreasing
    if carry is not None:
        block = np.concatenate([block, carry] if decreasing else [carry, block], axis=axis)
    data_type = desc.input_tensor.data_type
    tensor = _packed(DataType.FLOAT32 if data_type is DataType.FLOAT16 else data_type, block.shape)
    kind = type(desc)(tensor, tensor, axis, desc.axis_direction)
    tallies = _run(kind, context, [block])[0]
    if carry is not None:
        keep = slice(0, -1) if decreasing else slice(1, None)
        tallies = tallies[tuple(keep if dim == axis else slice(None) for dim in range(tallies.ndim))]
    return tallies


def _finish_chunk(desc: CumulativeOperatorDesc, tallies: Any, carry: Any = None) -> NDArray:
    """A chunk's output from its inclusive tallies: shifted by one along the walk for an exclusive scan (the carry,
    or the identity, entering first), rounded once to the data type (FLOAT16)."""
    tallies = np.asarray(tallies)
    if desc.exclusive:
        axis = desc.axis
        length = tallies.shape[axis]
        entering = (np.full_like(np.take(tallies, [0], axis=axis), desc.IDENTITY) if carry is None
                    else np.asarray(carry))
        if desc.decreasing:
            tallies = np.concatenate([np.take(tallies, range(1, length), axis=axis), entering], axis=axis)
        else:
            tallies = np.concatenate([entering, np.take(tallies, range(length - 1), axis=axis)], axis=axis)
    with np.errstate(all="ignore"):
        result: NDArray = tallies.astype(desc.output_tensor.data_type.numpy_dtype)
    return result


def _lower_cumulative(desc: CumulativeOperatorDesc, context: _Context, x: DaskArray) -> DaskArray:
    """CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT: the chunks along Axis one after the other in AxisDirection's
    order, each scanned by the node's kernel from the tally carried out of the ones before it (`_tally_chunk`); the
    other dimensions keep their chunks."""
    da = _dask_array()
    axis = desc.axis
    dtype = desc.output_tensor.data_type.numpy_dtype
    accumulate = np.dtype(np.float32) if dtype == np.float16 else dtype
    starts = np.cumsum((0, *x.chunks[axis]))
    order = range(len(x.chunks[axis]))
    pieces: list[Any] = [None] * len(order)
    carry = None
    token = _token(desc)

    def along(index: Any) -> tuple[Any, ...]:
        return tuple(index if dim == axis else slice(None) for dim in range(x.ndim))

    for chunk in (reversed(order) if desc.decreasing else order):
        piece = x[along(slice(starts[chunk], starts[chunk + 1]))]
        arrays = [piece] if carry is None else [piece, carry]
        tally = functools.partial(_tally_chunk, desc, context)
        tallies = da.map_blocks(tally, *arrays, dtype=accumulate, meta=_meta(x.ndim, accumulate),
                                name=_key(token + "-tally", chunk, *arrays))
        finish = functools.partial(_finish_chunk, desc)
        pieces[chunk] = da.map_blocks(finish, tallies, *arrays[1:], dtype=dtype, meta=_meta(x.ndim, dtype),
                                      name=_key(token + "-finish", chunk, tallies, *arrays[1:]))
        edge = 0 if desc.decreasing else tallies.shape[axis] - 1
        carry = tallies[along(slice(edge, edge + 1))]
    return da.concatenate(pieces, axis=axis)


def _lower_node(desc: OperatorDesc, context: _Context, inputs: list[DaskArray | None]) -> list[DaskArray]:
    """The Dask arrays of one node's outputs, from those of its inputs (None for an absent optional one)."""
    da = _dask_array()

    if isinstance(desc, CastOperatorDesc):   # blockwise: each chunk cast by the node's own kernel
        source: DaskArray = inputs[0]
        dtype = desc.output_tensor.data_type.numpy_dtype
        task = functools.partial(_node_chunk, desc, context, (True,))
        return [source.map_blocks(task, dtype=dtype, meta=_meta(source.ndim, dtype),
                                  name=_key(_token(desc), task, source))]
    if isinstance(desc, PaddingBase):   # PADDING, PADDING1, TILE (dask_padding.py)
        from .dask_padding import lower_padding

        return [lower_padding(desc, inputs[0])]
    from .ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc

    if isinstance(desc, (ScatterElementsOperatorDesc, ScatterNdOperatorDesc)):   # dask_scatter.py
        from .dask_scatter import lower_scatter

        return [lower_scatter(desc, context, inputs[0], inputs[1], inputs[2])]
    if isinstance(desc, SliceBase):   # SLICE, SLICE1: Dask's slicing (a negative step from the window's end)
        steps = desc._window()[2]
        cuts = tuple(slice(start, start + step * size if start + step * size >= 0 else None, step)
                     for start, step, size in zip(desc.start(), steps, desc.output_tensor.sizes, strict=True))
        whole: DaskArray = inputs[0]
        return [whole[cuts]]
    if isinstance(desc, DepthSpaceBase):
        return [_lower_depth_space(desc, context, inputs[0])]
    if isinstance(desc, ReverseSubsequencesOperatorDesc):
        return [_lower_reverse(desc, context, inputs[0], inputs[1])]
    if isinstance(desc, GeneratorOperatorDesc):
        return [_lower_generator(desc, inputs)]
    if isinstance(desc, Upsample2dOperatorDesc):
        return [_lower_upsample(desc, context, inputs[0])]
    if isinstance(desc, NonzeroCoordinatesOperatorDesc):   # dask_nonzero.py
        from .dask_nonzero import lower_nonzero

        return lower_nonzero(desc, context, inputs[0])
    from .ops.top_k import TopKOperatorDesc

    if isinstance(desc, TopKOperatorDesc):   # dask_top_k.py
        from .dask_top_k import lower_top_k

        return lower_top_k(desc, lambda node, arrays: _run(node, context, arrays), inputs[0], _key)
    x: DaskArray = inputs[0]
    if isinstance(desc, CumulativeOperatorDesc):
        return [_lower_cumulative(desc, context, x)]
    if isinstance(desc, (ReduceOperatorDesc, ArgMinOperatorDesc, ArgMaxOperatorDesc)):
        return [_lower_reduce(desc, context, x)]
    if isinstance(desc, ActivationOperatorDesc):
        dtype = x.dtype
        task = functools.partial(_node_chunk, desc, context, (True,))
        return [x.map_blocks(task, dtype=dtype, meta=_meta(x.ndim, dtype), name=_key(_token(desc), task, x))]
    if isinstance(desc, SplitOperatorDesc):
        return [x[tuple(slice(offset, offset + part.sizes[desc.axis]) if dim == desc.axis else slice(None)
                        for dim in range(x.ndim))]
                for offset, part in zip(desc.offsets, desc.output_tensors, strict=True)]
    if isinstance(desc, JoinOperatorDesc):
        return [da.concatenate(inputs, axis=desc.axis)]
    if isinstance(desc, (MeanVarianceNormalization1OperatorDesc, MeanVarianceNormalizationOperatorDesc)):
        return [_lower_normalization(desc, context, x, inputs[1], inputs[2])]
    if isinstance(desc, OneHotOperatorDesc):
        return [_lower_one_hot(desc, context, x, inputs[1])]
    if isinstance(desc, (GatherNd1OperatorDesc, GatherNdOperatorDesc)):
        return [_lower_gather(desc, context, x, inputs[1])]
    if isinstance(desc, (GatherOperatorDesc, GatherElementsOperatorDesc)):
        return [_lower_gather_axis(desc, context, x, inputs[1])]
    if isinstance(desc, GemmOperatorDesc):
        return [_lower_gemm(desc, context, x, inputs[1], inputs[2])]
    if isinstance(desc, ConvolutionOperatorDesc):
        return [_lower_convolution(desc, context, x, inputs[1], inputs[2])]
    raise UnsupportedError(f"{desc.label} has no Dask lowering")


def _check_largest_chunk(desc: OperatorDesc, name: str, array: DaskArray) -> None:
    """Every chunk a kernel sees is a DML tensor (DECISIONS 2's element limit; the graph's own tensors are logical):
    checked on the largest chunk of a tensor, before any task runs."""
    tensor = dict([*desc.input_slots(), *desc.output_slots()])[name]
    assert tensor is not None
    largest = _packed(tensor.data_type, [max(sizes) for sizes in array.chunks])
    check_element_limit(desc.label, f"{name}'s largest Dask chunk", largest)


def _check_chunk_limits(desc: OperatorDesc, inputs: Sequence[DaskArray | None], outputs: Sequence[DaskArray]
                        ) -> None:
    """_check_largest_chunk on each of a node's inputs and outputs (a lowering that rechunks an input checks it
    as rechunked)."""
    slots = [*desc.input_slots(), *desc.output_slots()]
    for (name, tensor), array in zip(slots, [*inputs, *outputs], strict=True):
        if tensor is not None and array is not None:
            _check_largest_chunk(desc, name, array)


class _Node(Protocol):
    """What `lower` reads of a graph's node (graph._Node); graph.py is not imported (it imports this module)."""

    @property
    def inputs(self) -> Sequence[Expression | None]: ...
    @property
    def outputs(self) -> Sequence[Expression]: ...
    @property
    def operator(self) -> Operator | None: ...
    @property
    def data(self) -> NDArray | None: ...


class Expression(Protocol):
    """What `lower` reads of a graph.Expression."""

    @property
    def node(self) -> _Node: ...
    @property
    def desc(self) -> TensorDesc: ...
    @property
    def name(self) -> str: ...
    @property
    def sizes(self) -> tuple[int, ...]: ...


class _Graph(Protocol):
    @property
    def device(self) -> Device: ...


class CompiledGraph(Protocol):
    """What `lower` reads of a graph.CompiledGraph."""

    @property
    def graph(self) -> _Graph: ...
    @property
    def flags(self) -> ExecutionFlags: ...
    @property
    def inputs(self) -> Sequence[Expression]: ...
    @property
    def outputs(self) -> Sequence[Expression]: ...
    @property
    def _nodes(self) -> Sequence[tuple[_Node, CompiledOperator]]: ...


def lower(compiled: CompiledGraph, arrays: Mapping[int, Any]) -> list[DaskArray]:
    """The compiled graph on Dask arrays: one lazy Dask array per output, in the order of `compiled.outputs`.

    `arrays` maps each input expression's id to its array, checked by `CompiledGraph` (name, dtype, shape): Dask
    arrays, or NumPy arrays, which are wrapped. Builds the Dask graph only; nothing runs.
    """
    da = _dask_array()

    device = compiled.graph.device
    context = _Context(device.feature_level, device.debug, compiled.flags)
    values: dict[int, DaskArray] = {}
    for expression in compiled.inputs:
        array = arrays[id(expression)]
        desc = expression.desc
        if is_dask_array(array):
            check = functools.partial(_input_chunk, expression.name, desc.data_type)
            array = array.map_blocks(check, dtype=array.dtype, meta=_meta(array.ndim, array.dtype),
                                     name=_key("opendml-input", check, array))
        else:
            array = da.from_array(array, chunks="auto")
        if strides_overlap(desc.sizes, desc.element_strides):
            check = functools.partial(_check_aliased, desc, expression.name)
            array = array.rechunk(-1).map_blocks(check, dtype=array.dtype, meta=_meta(array.ndim, array.dtype),
                                                 name=_key("opendml-input-check", check, array))
        values[id(expression)] = array

    def value_of(expression: Expression | None) -> DaskArray | None:
        if expression is None:
            return None
        if id(expression) not in values:     # a constant: its bytes are packed (Graph.constant)
            data = expression.node.data
            assert data is not None
            dtype = expression.desc.data_type.numpy_dtype
            logical = data[: expression.desc.element_count * dtype.itemsize].view(dtype).reshape(expression.sizes)
            values[id(expression)] = da.from_array(logical, chunks=-1)
        return values[id(expression)]

    for node, _ in compiled._nodes:
        assert node.operator is not None
        node_desc = node.operator.desc
        given = [value_of(expression) for expression in node.inputs]
        sources = [None if expression is None else expression.desc for expression in node.inputs]
        if isinstance(node_desc, ElementWiseOperatorDesc):
            outputs = [_lower_element_wise(node_desc, context, given, sources)]
        else:
            inputs = [None if array is None or tensor is None or source is None
                      else _logical(node_desc.label, name, tensor, source, array)
                      for (name, tensor), array, source in zip(node_desc.input_slots(), given, sources, strict=True)]
            outputs = _lower_node(node_desc, context, inputs)
            _check_chunk_limits(node_desc, inputs, outputs)
        for expression, output in zip(node.outputs, outputs, strict=True):
            values[id(expression)] = output
    return [values[id(expression)] for expression in compiled.outputs]
