"""A naive GATHER_ND1 oracle, written from DIGEST 2.5 and DECISIONS 20-21 without the package's code.

One Python loop over the index positions; each tuple's coordinates are read as Python integers (so UINT64 values
of 2^63 and more stay what they are), wrapped once if negative and signed, and clamped; the gathered sub-block is
NumPy's basic indexing of the meaningful input.
"""

from __future__ import annotations

import itertools

import numpy as np


def gather_nd1_output_sizes(input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], input_dimension_count: int,
                            indices_dimension_count: int, batch_dimension_count: int) -> tuple[int, ...]:
    """The indices' meaningful sizes without the tuple size, then the input's meaningful sizes after the batch and
    tuple dimensions, padded on the left with 1s to the common rank."""
    rank = len(input_sizes)
    meaningful_input = input_sizes[rank - input_dimension_count:]
    meaningful_indices = indices_sizes[rank - indices_dimension_count:]
    tuple_size = meaningful_indices[-1]
    sizes = meaningful_indices[:-1] + meaningful_input[batch_dimension_count + tuple_size:]
    return (1,) * (rank - len(sizes)) + sizes


def reference_gather_nd1(x: np.ndarray, indices: np.ndarray, input_dimension_count: int,
                         indices_dimension_count: int, batch_dimension_count: int, *, signed: bool
                         ) -> tuple[np.ndarray, list[tuple[tuple[int, ...], int]]]:
    """(the logical output, every out-of-range coordinate as (its logical index in the indices tensor, value)).

    The out-of-range list is in row-major order over the index positions, then coordinate order within a tuple.
    """
    rank = x.ndim
    data = x.reshape(x.shape[rank - input_dimension_count:])
    tuples = indices.reshape(indices.shape[rank - indices_dimension_count:])
    batch = batch_dimension_count
    tuple_size = tuples.shape[-1]
    rest_shape = data.shape[batch + tuple_size:]
    result = np.empty(tuples.shape[:-1] + rest_shape, dtype=x.dtype)
    bad: list[tuple[tuple[int, ...], int]] = []
    leading = (0,) * (rank - indices_dimension_count)
    for position in itertools.product(*(range(n) for n in tuples.shape[:-1])):
        coordinates = []
        for k in range(tuple_size):
            value = int(tuples[(*position, k)])
            size = data.shape[batch + k]
            coordinate = value + size if signed and value < 0 else value
            if not 0 <= coordinate < size:
                bad.append((leading + position + (k,), value))
                coordinate = min(max(coordinate, 0), size - 1)
            coordinates.append(coordinate)
        result[position] = data[tuple(position[:batch]) + tuple(coordinates)]
    output_sizes = gather_nd1_output_sizes(x.shape, indices.shape, input_dimension_count, indices_dimension_count,
                                           batch_dimension_count)
    return result.reshape(output_sizes), bad


def reference_gather_nd1_vectorized(x: np.ndarray, indices: np.ndarray, input_dimension_count: int,
                                    indices_dimension_count: int, batch_dimension_count: int, *, signed: bool
                                    ) -> np.ndarray:
    """The same rule as reference_gather_nd1 with NumPy fancy indexing, for inputs too large for a Python loop.

    UINT64 values of 2^63 and more would not survive int64 arithmetic: callers use them only with the loop."""
    rank = x.ndim
    data = x.reshape(x.shape[rank - input_dimension_count:])
    tuples = indices.reshape(indices.shape[rank - indices_dimension_count:]).astype(np.int64)
    batch = batch_dimension_count
    coordinates = []
    for k in range(tuples.shape[-1]):
        size = data.shape[batch + k]
        value = tuples[..., k]
        if signed:
            value = np.where(value < 0, value + size, value)
        coordinates.append(np.clip(value, 0, size - 1))
    batch_grid = np.indices(tuples.shape[:batch], sparse=True) if batch else ()
    batch_index = tuple(axis.reshape(axis.shape + (1,) * (tuples.ndim - 1 - batch)) for axis in batch_grid)
    result = data[batch_index + tuple(coordinates)]
    output_sizes = gather_nd1_output_sizes(x.shape, indices.shape, input_dimension_count, indices_dimension_count,
                                           batch_dimension_count)
    return np.asarray(result).reshape(output_sizes)
