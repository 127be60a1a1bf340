"""Naive reference implementations of SPLIT and ONE_HOT, the oracles of their property tests.

Independent of the ``opendml`` package (never import it here) and as plain as possible: a Python loop over every
logical index, element by element, with the rules as the doc pages and DECISIONS.md 14-16 state them. Index
values are read as exact Python integers, so huge UINT64 values are never mistaken for negative ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np


def _every_index(shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
    return itertools.product(*(range(size) for size in shape))


def reference_split(x: np.ndarray, axis: int, sizes: Sequence[int]) -> list[np.ndarray]:
    """Output i holds the input elements whose coordinate along ``axis`` lies in [start_i, start_i + sizes[i]),
    start_i being the sum of the sizes before it (DECISIONS 14)."""
    outputs = []
    start = 0
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = size
        output = np.empty(shape, x.dtype)
        for index in _every_index(shape):
            source = list(index)
            source[axis] += start
            output[index] = x[tuple(source)]
        outputs.append(output)
        start += size
    if start != x.shape[axis]:
        raise ValueError(f"the sizes {list(sizes)} do not add up to {x.shape[axis]}")
    return outputs


def off_and_on(values: np.ndarray) -> tuple[np.generic, np.generic]:
    """OffValue: the element at coordinate 0 everywhere. OnValue: coordinate 1 along the highest-numbered
    dimension whose size is > 1, 0 elsewhere (DECISIONS 16)."""
    rank = values.ndim
    dims = [dim for dim, size in enumerate(values.shape) if size > 1]
    if not dims:
        raise ValueError("the values tensor needs at least 2 elements")
    on_index = [0] * rank
    on_index[dims[-1]] = 1
    return values[(0,) * rank], values[tuple(on_index)]


def reference_one_hot(indices: np.ndarray, values: np.ndarray, depth: int, axis: int) -> np.ndarray:
    """Each sequence along ``axis`` (``depth`` long) is OffValue except at its index's position, OnValue.

    A negative index of a signed index type counts from the end (index + depth); an index still outside
    [0, depth) leaves the whole sequence at OffValue (DECISIONS 15). Signed index types exist from feature level
    3_0, where negative indices are supported, so the type alone decides."""
    if indices.shape[axis] != 1:
        raise ValueError("the indices must have size 1 along the axis")
    off, on = off_and_on(values)
    signed = indices.dtype.kind == "i"
    shape = list(indices.shape)
    shape[axis] = depth
    output = np.empty(shape, values.dtype)
    for index in _every_index(shape):
        at = list(index)
        at[axis] = 0
        raw = int(indices[tuple(at)])
        position = raw + depth if signed and raw < 0 else raw
        output[index] = on if 0 <= position < depth and index[axis] == position else off
    return output
