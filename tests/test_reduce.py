"""REDUCE: the doc pages' examples (copied by hand), and every rule as a bad-input table with message regexes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from strategies import T

import opendml as dml

F32 = dml.DataType.FLOAT32
DOC_INPUT = np.array([[1, 2, 3],
                      [3, 0, 4],
                      [2, 4, 2]], dtype=np.float32)


def compile_reduce(function: str, input_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc, axes: list[int],
                   level: str = "6_4") -> dml.CompiledOperator:
    device = dml.Device(feature_level=level)
    desc = dml.ReduceOperatorDesc(function, input_tensor, output_tensor, axes)
    return device.compile_operator(device.create_operator(desc))


# -- goldens ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("axes", "output_sizes", "expected"), [
    ([0], [1, 3], [[6, 6, 9]]),          # Example 1: sum({1,3,2}), sum({2,0,4}), sum({3,4,2})
    ([1], [3, 1], [[6], [7], [8]]),      # Example 2: sum({1,2,3}), sum({3,0,4}), sum({2,4,2})
    ([0, 1], [1, 1], [[21]]),            # Example 3: the page's comment lists a 5 by mistake; 21 is right
])
def test_reduce_page_examples(axes: list[int], output_sizes: list[int], expected: list[list[float]]) -> None:
    compiled = compile_reduce("SUM", dml.TensorDesc(F32, [3, 3]), dml.TensorDesc(F32, output_sizes), axes)
    (output,) = compiled(DOC_INPUT)
    assert output.dtype == np.float32
    np.testing.assert_array_equal(output, np.array(expected, np.float32))


def test_dxdispatch_reduce_model() -> None:
    # dml_reduce.json: input 1..9 as [1,1,3,3], SUM over axis 3 -> 6, 15, 24, written into raw buffers.
    compiled = compile_reduce("DML_REDUCE_FUNCTION_SUM", dml.TensorDesc(F32, [1, 1, 3, 3]),
                              dml.TensorDesc(F32, [1, 1, 3, 1]), [3], level="1_0")
    input_buffer = bytearray(np.arange(1, 10, dtype=np.float32).tobytes())
    output_buffer = bytearray(12)
    compiled.execute(inputs=[dml.Binding(input_buffer)], outputs=[dml.Binding(output_buffer)])
    assert np.frombuffer(output_buffer, np.float32).tolist() == [6, 15, 24]


@pytest.mark.parametrize("axes", [[0, 1], [1, 0]])
def test_argmax_page_example(axes: list[int]) -> None:
    # DML_ARGMAX_OPERATOR_DESC's example: the maximum 5 sits at row 2, column 1 -> 2 * 3 + 1 = 7.
    compiled = compile_reduce("ARGMAX", dml.TensorDesc(F32, [3, 3]), dml.TensorDesc("UINT32", [1, 1]), axes)
    (output,) = compiled(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32))
    assert output.tolist() == [[7]]


def test_argmin_first_of_ties() -> None:
    # Ties go to the first index (DML_ARGMIN with AxisDirection INCREASING): the minimum 1 sits at 2 and at 4.
    compiled = compile_reduce("ARGMIN", dml.TensorDesc(F32, [5]), dml.TensorDesc("INT64", [1]), [0])
    (output,) = compiled(np.array([3, 2, 1, 2, 1], np.float32))
    assert output.tolist() == [2]


# Rows of raw bits (0.5, 1.0, -1.0; quiet NaNs of both signs, a negative one with a payload, a signaling one), and
# the bits each row's MAX and MIN must be: any NaN in the row makes it the canonical quiet NaN, 0x7fc00000 / 0x7e00.
NAN_ROWS = {
    "FLOAT32": (np.uint32, [
        ([0x3F000000, 0x7FC00000, 0xFFC00000], 0x7FC00000, 0x7FC00000),
        ([0xFFC00000, 0x3F800000, 0x3F000000], 0x7FC00000, 0x7FC00000),
        ([0x3F800000, 0xFFC12345, 0x7F800001], 0x7FC00000, 0x7FC00000),
        ([0x3F800000, 0xBF800000, 0x3F000000], 0x3F800000, 0xBF800000),
    ]),
    "FLOAT16": (np.uint16, [
        ([0x3800, 0x7E00, 0xFE00], 0x7E00, 0x7E00),
        ([0xFE00, 0x3C00, 0x3800], 0x7E00, 0x7E00),
        ([0x3C00, 0xFE45, 0x7C01], 0x7E00, 0x7E00),
        ([0x3C00, 0xBC00, 0x3800], 0x3C00, 0xBC00),
    ]),
}


@pytest.mark.parametrize("function", ["MAX", "MIN"])
@pytest.mark.parametrize("data_type", list(NAN_ROWS))
def test_max_min_nan_is_the_canonical_quiet_nan(data_type: str, function: str) -> None:
    # README, Rulings: a NaN result of MIN/MAX is the canonical quiet NaN, whatever the sign and payload of the NaNs
    # in the block; the rows reduced along axis 1, then as columns along axis 0, then the whole tensor at once.
    bits_type, rows = NAN_ROWS[data_type]
    raw = np.array([row for row, _, _ in rows], bits_type)
    x = raw.view(np.dtype(data_type.lower()))
    expected = [high if function == "MAX" else low for _, high, low in rows]
    canonical = rows[0][1]
    for source, axes, sizes, want in ((x, [1], [4, 1], expected), (x.T.copy(), [0], [1, 4], expected),
                                      (x, [0, 1], [1, 1], [canonical])):
        compiled = compile_reduce(function, dml.TensorDesc(data_type, list(source.shape)),
                                  dml.TensorDesc(data_type, sizes), axes)
        (output,) = compiled(source)
        assert [hex(bits) for bits in output.view(bits_type).reshape(-1).tolist()] == [hex(bits) for bits in want]


# -- the binding model ------------------------------------------------------------------------------------------------

def _sum_rows() -> dml.CompiledOperator:
    return compile_reduce("SUM", dml.TensorDesc(F32, [3, 3]), dml.TensorDesc(F32, [3, 1]), [1])


def test_strided_input_and_output_at_offsets() -> None:
    # Input transposed inside a padded buffer (strides {1, 4}), output every other element, bound at offset 32.
    compiled = compile_reduce("SUM", dml.TensorDesc(F32, [3, 3], [1, 4]), dml.TensorDesc(F32, [3, 1], [2, 1]), [1])
    memory = np.full(12, -1.0, np.float32)
    memory[[0, 4, 8]] = [1, 2, 3]       # row 0 of the logical input: elements (0,0) (0,1) (0,2)
    memory[[1, 5, 9]] = [3, 0, 4]
    memory[[2, 6, 10]] = [2, 4, 2]
    output = np.full(8 + 5, 99.0, np.float32)
    compiled.execute(inputs=[dml.Binding(memory)], outputs=[dml.Binding(output, offset=32)])
    assert output.tolist() == [99] * 8 + [6, 99, 7, 99, 8]


def test_zero_stride_input_broadcasts() -> None:
    compiled = compile_reduce("SUM", dml.TensorDesc(F32, [4, 3], [0, 1]), dml.TensorDesc(F32, [1, 3]), [0])
    output = np.zeros(3, np.float32)
    compiled.execute([dml.Binding(np.array([1, 2, 3], np.float32))], [dml.Binding(output)])
    assert output.tolist() == [4, 8, 12]


def test_inputs_unchanged_and_failed_dispatch_leaves_outputs() -> None:
    compiled = _sum_rows()
    source = DOC_INPUT.copy()
    output = np.full(3, 42.0, np.float32)
    compiled.execute([dml.Binding(source)], [dml.Binding(output)])
    np.testing.assert_array_equal(source, DOC_INPUT)
    assert output.tolist() == [6, 7, 8]
    untouched = np.full(8, 42.0, np.float32)
    with pytest.raises(dml.BindingError):
        compiled.execute([dml.Binding(source)], [dml.Binding(untouched, offset=8)])   # offset not a multiple of 16
    assert untouched.tolist() == [42.0] * 8


def test_owned_by_dml_input_is_bound_at_initialization() -> None:
    owned = dml.TensorDesc(F32, [3, 3], flags=dml.TensorFlags.OWNED_BY_DML)
    compiled = compile_reduce("SUM", owned, dml.TensorDesc(F32, [1, 3]), [0])
    output = np.zeros(3, np.float32)
    with pytest.raises(dml.BindingError, match="InputTensor is OWNED_BY_DML and was never initialized"):
        compiled.execute([None], [dml.Binding(output)])
    data = DOC_INPUT.copy()
    compiled.initialize([dml.Binding(data)])
    data[:] = 0                               # the initializer copied the data
    compiled.execute([None], [dml.Binding(output)])
    assert output.tolist() == [6, 6, 9]
    with pytest.raises(dml.BindingError, match="InputTensor is OWNED_BY_DML; it is bound at initialization"):
        compiled.execute([dml.Binding(data)], [dml.Binding(output)])
    assert compiled(DOC_INPUT)[0].tolist() == [[6, 6, 9]]
    with pytest.raises(dml.BindingError, match="InputTensor is not OWNED_BY_DML; bind it at execution"):
        _sum_rows().initialize([dml.Binding(data)])


# -- bad descriptors ---------------------------------------------------------------------------------------------



PREFIX = r"DML_OPERATOR_REDUCE \(Function (SUM|ARGMAX|ARGMIN|L2)\): "
BAD_DESCRIPTORS = [
    # (id, function, input, output, axes, level, error, message regex)
    ("wrong output sizes", "SUM", T(F32, [3, 3]), T(F32, [3, 3]), [0], "6_4", dml.ValidationError,
     r"OutputTensor.Sizes is \[3, 3\]; with Axes \[0\] it must be \[1, 3\]"),
    ("wrong output rank", "SUM", T(F32, [3, 3]), T(F32, [3]), [1], "6_4", dml.ValidationError,
     r"OutputTensor.DimensionCount is 1; it must equal InputTensor.DimensionCount \(2\)"),
    ("axis out of range", "SUM", T(F32, [3, 3]), T(F32, [1, 3]), [2], "6_4", dml.ValidationError,
     r"Axes\[0\] is 2; it must be in \[0, 1\] for InputTensor of 2 dimensions"),
    ("duplicate axes", "SUM", T(F32, [3, 3]), T(F32, [1, 3]), [0, 0], "6_4", dml.ValidationError,
     r"Axes\[1\] is 0, which appears twice; axes must be unique"),
    ("empty axes", "SUM", T(F32, [3, 3]), T(F32, [3, 3]), [], "6_4", dml.ValidationError,
     r"Axes is empty; it must name at least one axis of InputTensor"),
    ("mismatched data types", "SUM", T(F32, [3, 3]), T("FLOAT16", [1, 3]), [0], "6_4", dml.ValidationError,
     r"OutputTensor.DataType is FLOAT16; it must equal InputTensor.DataType \(FLOAT32\)"),
    ("ARGMAX into FLOAT32", "ARGMAX", T(F32, [3, 3]), T(F32, [1, 3]), [0], "6_4", dml.ValidationError,
     r"OutputTensor.DataType FLOAT32 is not supported; at feature level 6_4 it must be one of INT64, INT32, UINT64, "
     r"UINT32"),
    ("ARGMAX into INT64 below 3_0", "ARGMAX", T(F32, [1, 1, 3, 3]), T("INT64", [1, 1, 1, 3]), [2], "2_1",
     dml.UnsupportedError, r"OutputTensor.DataType INT64 needs feature level 3_0; the device is at 2_1"),
    ("ARGMAX index does not fit", "ARGMAX", T("INT8", [2**16, 2**15 + 1], [0, 0]), T("INT32", [1, 1]), [0, 1], "6_4",
     dml.ValidationError, r"OutputTensor.DataType INT32 cannot hold the largest index 2147549183"),
    ("INT64 below 5_0", "SUM", T("INT64", [3, 3]), T("INT64", [1, 3]), [0], "4_1", dml.UnsupportedError,
     r"InputTensor.DataType INT64 needs feature level 5_0; the device is at 4_1"),
    ("integer L2", "L2", T("INT32", [3, 3]), T("INT32", [1, 3]), [0], "6_4", dml.ValidationError,
     r"InputTensor.DataType INT32 is not supported; at feature level 6_4 it must be one of FLOAT32, FLOAT16"),
    ("rank 3 below 3_0", "SUM", T(F32, [3, 3, 3]), T(F32, [1, 3, 3]), [0], "2_1", dml.UnsupportedError,
     r"InputTensor.DimensionCount 3 needs feature level 3_0; the device is at 2_1"),
    ("rank 9", "SUM", T(F32, [1] * 9), T(F32, [1] * 9), [0], "6_4", dml.ValidationError,
     r"InputTensor.DimensionCount is 9; it must be 1 to 8"),
    ("a zero size", "SUM", T(F32, [3, 0]), T(F32, [1, 0]), [0], "6_4", dml.ValidationError,
     r"InputTensor.Sizes\[1\] is 0; every size must be at least 1"),
    ("last element past 2^32", "SUM", T(F32, [3, 2], [2**31, 1]), T(F32, [1, 2]), [0], "6_4", dml.ValidationError,
     r"InputTensor has its last element at index 4294967297; .* it must be below 2\^32"),
    ("overlapping output strides", "SUM", T(F32, [3, 3]), T(F32, [3, 1], [0, 1]), [1], "6_4", dml.ValidationError,
     r"OutputTensor.Strides \[0, 1\] map two elements of Sizes \[3, 1\] onto the same memory"),
    ("overlapping output strides, no zero", "SUM", T(F32, [4, 3, 3]), T(F32, [4, 3, 1], [2, 1, 1]), [2], "6_4",
     dml.ValidationError, r"OutputTensor.Strides \[2, 1, 1\] map two elements"),
    ("total size too small", "SUM", T(F32, [3, 3], total_tensor_size_in_bytes=32), T(F32, [1, 3]), [0], "6_4",
     dml.ValidationError,
     r"InputTensor.TotalTensorSizeInBytes is 32; it must be at least 36 \(DMLCalcBufferTensorSize\)"),
    ("total size not a multiple of 4", "SUM", T(F32, [3, 3], total_tensor_size_in_bytes=38), T(F32, [1, 3]), [0],
     "6_4", dml.ValidationError, r"InputTensor.TotalTensorSizeInBytes is 38; it must be a multiple of 4"),
    ("alignment not a power of two", "SUM", T(F32, [3, 3], guaranteed_base_offset_alignment=24), T(F32, [1, 3]), [0],
     "6_4", dml.ValidationError, r"InputTensor.GuaranteedBaseOffsetAlignment is 24; it must be 0 or a power of two"),
    ("owned output", "SUM", T(F32, [3, 3]), T(F32, [1, 3], flags="OWNED_BY_DML"), [0], "6_4", dml.ValidationError,
     r"OutputTensor.Flags is OWNED_BY_DML; only input tensors may be owned by DML"),
    ("UINT4 input", "SUM", T("UINT4", [3, 4]), T("UINT4", [1, 4]), [0], "6_4", dml.ValidationError,
     r"InputTensor.DataType UINT4 is not supported"),
]


@pytest.mark.parametrize(("function", "input_tensor", "output_tensor", "axes", "level", "error", "message"),
                         [case[1:] for case in BAD_DESCRIPTORS], ids=[case[0] for case in BAD_DESCRIPTORS])
def test_bad_descriptors(function: str, input_tensor: dml.TensorDesc, output_tensor: dml.TensorDesc, axes: list[int],
                         level: str, error: type[Exception], message: str) -> None:
    desc = dml.ReduceOperatorDesc(function, input_tensor, output_tensor, axes)
    with pytest.raises(error, match=PREFIX + message):
        dml.Device(feature_level=level).create_operator(desc)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.ReduceOperatorDesc("MEDIAN", T(F32, [3]), T(F32, [1]), [0]),
     r"^DML_OPERATOR_REDUCE: Function is 'MEDIAN'; it must be one of ARGMAX, ARGMIN, .*, SUM_SQUARE "
     r"\(DML_REDUCE_FUNCTION_\*, or 0 to 11\)$"),
    (lambda: dml.ReduceOperatorDesc("SUM", [3, 3], T(F32, [1]), [0]),
     r"DML_OPERATOR_REDUCE: InputTensor is \[3, 3\]; it must be a TensorDesc$"),
    (lambda: dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), [-1]),
     r"DML_OPERATOR_REDUCE: Axes\[0\] is -1; it must be an integer in \[0, 2\^32\)"),
    (lambda: dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), 0),
     r"DML_OPERATOR_REDUCE: Axes is 0; it must be a list of integers"),
])
def test_bad_descriptor_fields(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        build()


# -- bad bindings ------------------------------------------------------------------------------------------------

def _rows_input() -> np.ndarray:
    return DOC_INPUT.copy()


BAD_BINDINGS: list[tuple[str, Callable[[], tuple[list[object], list[object]]], str]] = [
    ("buffer too small", lambda: ([dml.Binding(bytearray(32))], [dml.Binding(bytearray(12))]),
     r"InputTensor binding needs bytes \[0, 36\) but the buffer holds 32 bytes"),
    ("size below the total", lambda: ([dml.Binding(_rows_input(), size=16)], [dml.Binding(bytearray(12))]),
     r"InputTensor binding size is 16 bytes; it must be at least TotalTensorSizeInBytes \(36\)"),
    ("offset not a multiple of 16", lambda: ([dml.Binding(bytearray(64), offset=4)], [dml.Binding(bytearray(12))]),
     r"InputTensor binding offset is 4; it must be a multiple of 16"),
    ("missing binding", lambda: ([], [dml.Binding(bytearray(12))]),
     r"0 input bindings given; the operator has 1 \(InputTensor\)"),
    ("extra binding", lambda: ([dml.Binding(_rows_input()), dml.Binding(_rows_input())], [dml.Binding(bytearray(12))]),
     r"2 input bindings given; the operator has 1 \(InputTensor\)"),
    ("None for a required input", lambda: ([None], [dml.Binding(bytearray(12))]),
     r"InputTensor is required; it is bound as None"),
    ("not a binding", lambda: ([_rows_input()], [dml.Binding(bytearray(12))]),
     r"the input binding of InputTensor is a ndarray; it must be a dml.Binding or None"),
    ("read-only output", lambda: ([dml.Binding(_rows_input())], [dml.Binding(bytes(12))]),
     r"OutputTensor is bound to a read-only buffer; an output buffer must be writable"),
    ("no buffer protocol", lambda: ([dml.Binding([1.0] * 9)], [dml.Binding(bytearray(12))]),
     r"InputTensor is bound to a list, which is not a contiguous buffer"),
    ("non-contiguous buffer",
     lambda: ([dml.Binding(np.zeros((3, 6), np.float32)[:, ::2])], [dml.Binding(bytearray(12))]),
     r"InputTensor is bound to a ndarray, which is not a contiguous buffer"),
]


@pytest.mark.parametrize(("bindings", "message"), [case[1:] for case in BAD_BINDINGS],
                         ids=[case[0] for case in BAD_BINDINGS])
def test_bad_bindings(bindings: Callable[[], tuple[list[object], list[object]]], message: str) -> None:
    inputs, outputs = bindings()
    before = [bytes(memoryview(binding.buffer)) for binding in outputs if isinstance(binding, dml.Binding)]
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_REDUCE \(Function SUM\): " + message):
        _sum_rows().execute(inputs, outputs)  # type: ignore[arg-type]
    after = [bytes(memoryview(binding.buffer)) for binding in outputs if isinstance(binding, dml.Binding)]
    assert before == after


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"offset": -16}, r"^Binding: offset is -16; it must be an integer in \[0, 2\^64\)$"),
    ({"offset": 2**64}, r"^Binding: offset is 18446744073709551616; it must be an integer in \[0, 2\^64\)$"),
    ({"size": 12.0}, r"^Binding: size is 12.0; it must be an integer in \[0, 2\^64\)$"),
])
def test_binding_offset_and_size_are_uint64(kwargs: dict[str, object], message: str) -> None:
    """DML_BUFFER_BINDING's Offset and SizeInBytes are UINT64s, converted when the Binding is made."""
    with pytest.raises(dml.ValidationError, match=message):
        dml.Binding(bytearray(64), **kwargs)  # type: ignore[arg-type]
    assert dml.Binding(bytearray(64), np.uint8(16), np.int64(32)).offset == 16


def test_output_overlapping_an_input() -> None:
    memory = np.zeros(64, np.float32)
    memory[:9] = DOC_INPUT.ravel()
    snapshot = memory.copy()
    compiled = _sum_rows()
    with pytest.raises(dml.BindingError, match=r"the bound ranges of InputTensor and OutputTensor overlap"):
        compiled.execute([dml.Binding(memory)], [dml.Binding(memory, offset=32)])   # input bytes [0, 36)
    np.testing.assert_array_equal(memory, snapshot)
    compiled.execute([dml.Binding(memory)], [dml.Binding(memory, offset=48)])        # disjoint: allowed
    assert memory[12:15].tolist() == [6, 7, 8]


def test_alignment_promise_is_enforced() -> None:
    aligned = dml.TensorDesc(F32, [3, 3], guaranteed_base_offset_alignment=64)
    compiled = compile_reduce("SUM", aligned, dml.TensorDesc(F32, [3, 1]), [1])
    with pytest.raises(dml.BindingError, match=r"offset is 16; it must be a multiple of 64 "
                                               r"\(GuaranteedBaseOffsetAlignment\)"):
        compiled.execute([dml.Binding(bytearray(128), offset=16)], [dml.Binding(bytearray(12))])


@pytest.mark.parametrize(("array", "message"), [
    (np.zeros((3, 3), np.float64), r"InputTensor array has dtype float64; DataType FLOAT32 needs float32"),
    (np.zeros((9,), np.float32), r"InputTensor array has shape \[9\]; it must be Sizes \[3, 3\]"),
    ([[1, 2, 3]] * 3, r"InputTensor must be a NumPy array, a buffer-protocol object \(memoryview\) or an object "
                      r"with __dlpack__ or __array__; got list"),
])
def test_convenience_call_errors(array: object, message: str) -> None:
    with pytest.raises(dml.BindingError, match=message):
        _sum_rows()(array)


class DLPackOnly:
    """A tensor of another library, as opendml sees it: only __dlpack__ (here over a NumPy array's memory)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, **kwargs: object) -> object:
        return self.array.__dlpack__(**kwargs)  # type: ignore[arg-type]

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__()  # type: ignore[return-value]


class ArrayOnly:
    """An object NumPy reads through __array__ only."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self.array


ROWS = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)


@pytest.mark.parametrize("wrap", [memoryview, DLPackOnly, ArrayOnly], ids=["memoryview", "dlpack", "array"])
def test_convenience_call_takes_the_ecosystems_arrays(wrap: Callable[[np.ndarray], object]) -> None:
    (output,) = _sum_rows()(wrap(ROWS.copy()))
    assert output.ravel().tolist() == [6, 7, 8]
    with pytest.raises(dml.BindingError, match=r"InputTensor array has dtype float64; DataType FLOAT32 needs "
                                               r"float32"):
        _sum_rows()(wrap(ROWS.astype(np.float64)))        # no silent cast


def test_convenience_call_reports_an_array_that_cannot_be_read() -> None:
    class Broken:
        def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
            raise RuntimeError("device tensor")

    with pytest.raises(dml.BindingError, match=r"^DML_OPERATOR_REDUCE \(Function SUM\): InputTensor could not be "
                                               r"read as an array \(RuntimeError: device tensor\)$"):
        _sum_rows()(Broken())


def test_bindings_over_dlpack_tensors_are_zero_copy() -> None:
    source, target = ROWS.copy(), np.full((3, 1), -1.0, np.float32)
    _sum_rows().execute([dml.Binding(DLPackOnly(source))], [dml.Binding(DLPackOnly(target))])
    assert target.ravel().tolist() == [6, 7, 8]               # written where the tensor lies
    with pytest.raises(dml.BindingError, match=r"OutputTensor is bound to a DLPackOnly, which is not a contiguous "
                                               r"buffer"):
        _sum_rows().execute([dml.Binding(source)], [dml.Binding(DLPackOnly(np.zeros((3, 2), np.float32)[:, :1]))])
    read_only = np.zeros(3, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(dml.BindingError, match=r"OutputTensor is bound to a read-only buffer"):
        _sum_rows().execute([dml.Binding(source)], [dml.Binding(memoryview(read_only))])


def test_convenience_call_zero_stride_must_be_consistent() -> None:
    compiled = compile_reduce("SUM", dml.TensorDesc(F32, [2, 3], [0, 1]), dml.TensorDesc(F32, [1, 3]), [0])
    assert compiled(np.array([[1, 2, 3], [1, 2, 3]], np.float32))[0].tolist() == [[2, 4, 6]]
    with pytest.raises(dml.BindingError, match="differs along a dimension whose stride is 0"):
        compiled(np.array([[1, 2, 3], [4, 5, 6]], np.float32))


def test_compile_checks_its_operator() -> None:
    desc = dml.ReduceOperatorDesc("SUM", T(F32, [3]), T(F32, [1]), [0])
    operator = dml.Device().create_operator(desc)
    with pytest.raises(dml.ValidationError, match="CompileOperator: the operator was not created by this device"):
        dml.Device().compile_operator(operator)
    with pytest.raises(dml.ValidationError,
                       match=r"^CreateOperator: desc is 'REDUCE'; it must be an operator descriptor$"):
        dml.Device().create_operator("REDUCE")  # type: ignore[arg-type]
