"""Self-tests of the stride strategies and raw-buffer helpers in ``tests/strategies.py`` (no opendml involved)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided
from strategies import (
    OUTPUT_STRIDE_KINDS,
    STRIDE_KINDS,
    addressed_byte_mask,
    build_buffer,
    byte_offsets,
    effective_strides,
    element_offset,
    element_offsets,
    is_non_overlapping,
    logical_indices,
    packed_strides,
    read_buffer,
    shapes,
    strides_for,
    tensor_size_in_bytes,
)


def test_packed_strides_and_sizes() -> None:
    assert packed_strides([2, 3, 4]) == (12, 4, 1)
    assert packed_strides([2, 3, 4], order=[0, 1, 2]) == (1, 2, 6)
    assert tensor_size_in_bytes(4, [2, 3, 4], None) == 96
    assert tensor_size_in_bytes(2, [3], None) == 8  # 6 bytes rounded up to 4
    assert tensor_size_in_bytes(1, [2, 2], (0, 3)) == 4
    assert tensor_size_in_bytes(4, [2, 3], (10, 2)) == 4 * (1 + 10 + 4)


def test_build_and_read_buffer_by_hand() -> None:
    x = np.array([[1, 2], [3, 4]], dtype=np.int16)
    buf = build_buffer(x, (1, 3), byte_offset=16)  # transposed + padded: elements at 0, 3, 1, 4
    assert len(buf) == 16 + 12
    data = buf[16:].view(np.int16)
    assert data[0] == 1 and data[3] == 2 and data[1] == 3 and data[4] == 4
    np.testing.assert_array_equal(read_buffer(buf, np.int16, (2, 2), (1, 3), byte_offset=16), x)
    mask = addressed_byte_mask(len(buf), 2, (2, 2), (1, 3), byte_offset=16)
    assert mask.sum() == 8 and not mask[:16].any() and not mask[20:22].any()


@given(data=st.data(), rank=st.integers(1, 8), kind=st.sampled_from(STRIDE_KINDS))
def test_strided_round_trip_matches_numpy_views(data: st.DataObject, rank: int, kind: str) -> None:
    sizes = data.draw(shapes(rank, max_elements=512))
    strides = data.draw(strides_for(sizes, kind))
    s = effective_strides(sizes, strides)
    assert len(s) == rank and all(v >= 0 for v in s)
    if kind == "zero":
        assert 0 in s
    x = np.arange(int(np.prod(sizes)), dtype=np.int32).reshape(sizes) + 1
    offset = data.draw(byte_offsets())
    buf = build_buffer(x, strides, byte_offset=offset)
    assert len(buf) == offset + tensor_size_in_bytes(4, sizes, strides)
    back = read_buffer(buf, np.int32, sizes, strides, byte_offset=offset)
    # An independent view of the same bytes through numpy's own stride machinery.
    view = as_strided(
        buf[offset:].view(np.int32) if len(buf) > offset else buf, shape=sizes, strides=[4 * v for v in s]
    )
    np.testing.assert_array_equal(back, view)
    if is_non_overlapping(sizes, strides):
        np.testing.assert_array_equal(back, x)
    # Bytes not addressed by an element are sentinel bytes, untouched by the data.
    mask = addressed_byte_mask(len(buf), 4, sizes, strides, byte_offset=offset)
    fresh = build_buffer(np.zeros_like(x), strides, byte_offset=offset)
    np.testing.assert_array_equal(buf[~mask], fresh[~mask])


@given(data=st.data(), rank=st.integers(1, 8), kind=st.sampled_from(STRIDE_KINDS))
def test_element_offsets_match_plain_index_arithmetic(data: st.DataObject, rank: int, kind: str) -> None:
    sizes = data.draw(shapes(rank, max_elements=256))
    strides = data.draw(strides_for(sizes, kind))
    s = effective_strides(sizes, strides)
    offsets = element_offsets(sizes, strides)
    for index in logical_indices(sizes):
        assert offsets[index] == element_offset(index, s)


@given(data=st.data(), rank=st.integers(1, 8), kind=st.sampled_from(OUTPUT_STRIDE_KINDS))
def test_output_stride_kinds_never_overlap(data: st.DataObject, rank: int, kind: str) -> None:
    sizes = data.draw(shapes(rank, max_elements=256))
    strides = data.draw(strides_for(sizes, kind, allow_zero=False))
    assert is_non_overlapping(sizes, strides)


@given(rank=st.integers(1, 8), data=st.data())
def test_shapes_respect_element_budget(rank: int, data: st.DataObject) -> None:
    sizes = data.draw(shapes(rank, max_elements=4096))
    assert len(sizes) == rank and all(n >= 1 for n in sizes) and int(np.prod(sizes)) <= 4096
