"""TensorDesc and calc_buffer_tensor_size against DIGEST 1.6-1.7 and DECISIONS 2-3."""

from __future__ import annotations

import dataclasses

import pytest

import opendml as dml

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16


def test_digest_worked_examples() -> None:
    assert dml.calc_buffer_tensor_size(F16, [1, 1, 3, 5]) == 32  # 15 halves = 30 bytes, rounded up to 32
    assert dml.calc_buffer_tensor_size(F32, [2, 3], [0, 1]) == 12  # row broadcast: last index 2 -> 3 elements


@pytest.mark.parametrize(
    ("data_type", "sizes", "strides", "expected"),
    [
        (F32, [3, 3], None, 36),
        (dml.DataType.UINT8, [3], None, 4),  # 3 bytes rounded up to 4
        (dml.DataType.INT8, [2, 3], [8, 1], 12),  # last index 8+2=10 -> 11 bytes -> 12
        (dml.DataType.FLOAT64, [2, 2], [1, 2], 32),  # transposed packed: last index 3
        (F32, [4, 5], [0, 0], 4),  # full broadcast: one element
        (dml.DataType.UINT4, [5], None, 4),  # 5 nibbles = 3 bytes -> 4 (DirectMLX's bit count)
        (dml.DataType.UNKNOWN, [5], None, 0),
        (F32, [2, 0], None, 0),
        (F32, [2**16, 2**16], [2**16, 1], 2**34),  # exact, no 32-bit wrap
    ],
)
def test_calc_buffer_tensor_size(
    data_type: dml.DataType, sizes: list[int], strides: list[int] | None, expected: int
) -> None:
    assert dml.calc_buffer_tensor_size(data_type, sizes, strides) == expected


def test_tensor_desc_defaults_and_immutability() -> None:
    desc = dml.TensorDesc("FLOAT16", [1, 1, 3, 5])
    assert desc.data_type is F16
    assert desc.sizes == (1, 1, 3, 5)
    assert desc.strides is None
    assert desc.flags is dml.TensorFlags.NONE
    assert desc.total_tensor_size_in_bytes == 32
    assert desc.guaranteed_base_offset_alignment == 0
    assert desc.element_strides == (15, 15, 5, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        desc.sizes = (2,)  # type: ignore[misc]
    strided = dml.TensorDesc(F32, [2, 3], [0, 1], total_tensor_size_in_bytes=64, flags="OWNED_BY_DML")
    assert strided.total_tensor_size_in_bytes == 64
    assert strided.flags is dml.TensorFlags.OWNED_BY_DML
    assert dml.TensorDesc(F32, [2, 3]) == dml.TensorDesc(F32, (2, 3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": [2, -1]}, r"^TensorDesc: Sizes\[1\] is -1; it must be an integer in \[0, 2\^32\)$"),
        ({"sizes": [2, 1.5]}, r"^TensorDesc: Sizes\[1\] is 1.5; it must be an integer in \[0, 2\^32\)$"),
        ({"sizes": 3}, r"^TensorDesc: Sizes is 3; it must be a list of integers$"),
        ({"sizes": [2], "strides": [2**32]}, r"^TensorDesc: Strides\[0\] is 4294967296; it must be an integer in "
                                             r"\[0, 2\^32\)$"),
        ({"sizes": [2], "total_tensor_size_in_bytes": -4}, r"^TensorDesc: TotalTensorSizeInBytes is -4; it must be an "
                                                           r"integer in \[0, 2\^64\)$"),
        ({"sizes": [3, 3], "strides": [3]}, r"^TensorDesc: Strides has 1 values; it must have one per dimension of "
                                            r"Sizes \(2\)$"),
        ({"sizes": [2], "flags": "BIG"}, r"^TensorDesc: Flags is 'BIG'; it must be one of NONE, "
                                         r"OWNED_BY_DML"),
    ],
)
def test_tensor_desc_type_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        dml.TensorDesc(F32, **kwargs)  # type: ignore[arg-type]
