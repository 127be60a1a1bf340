"""Foreign memory: zero-copy Bindings over objects that move, typed arrays of another dtype, objects whose array
protocols raise, and the device buffers' read and write (HostBuffer on the cpu, GpuBuffer on the gpu).

Golden values are worked out by hand: RELU of [1, -2, 3, 4] is [1, 0, 3, 4].
"""

from __future__ import annotations

import array
import functools
import mmap
import re
from typing import Any

import numpy as np
import pytest

import opendml as dml

F32 = "FLOAT32"
X = np.array([1, -2, 3, 4], np.float32)
RELU_X = np.array([1, 0, 3, 4], np.float32)
PREFIX = "DML_OPERATOR_ACTIVATION_RELU: "


@functools.cache
def relu() -> dml.CompiledOperator:
    device = dml.Device()
    tensor = dml.TensorDesc(F32, [4])
    return device.compile_operator(device.create_operator(
        dml.ActivationReluOperatorDesc(input_tensor=tensor, output_tensor=tensor)))


class MovableTensor:
    """A DLPack tensor over a NumPy array it holds, whose `resize` replaces that array with a new one, as PyTorch's
    `resize_` reallocates a tensor's storage (and frees the old memory, which a stale binding would then use)."""

    def __init__(self, data: np.ndarray[Any, Any]) -> None:
        self.data = data

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.data.__dlpack_device__()

    def resize(self, count: int) -> None:
        self.data = np.zeros(count, self.data.dtype)


# -- item 1: memory that moves after binding ---------------------------------------------------------------------------

MOVED = (r"is bound to a MovableTensor whose memory moved or changed size or dtype since it was bound \(e\.g\. a "
         r"resize\); bind it again$")


def test_a_dlpack_output_that_moves_is_refused_not_written(backend: str) -> None:
    out = MovableTensor(np.zeros(4, np.float32))
    binding = dml.Binding(out)
    relu().execute([dml.Binding(X)], [binding])
    assert np.array_equal(out.data, RELU_X)
    out.data[...] = 0     # changed in place: the same memory, so the binding still holds
    relu().execute([dml.Binding(X)], [binding])
    assert np.array_equal(out.data, RELU_X)
    out.resize(1 << 20)
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "OutputTensor " + MOVED):
        relu().execute([dml.Binding(X)], [binding])
    assert not out.data.any()   # the new memory is not written either: the call failed
    relu().execute([dml.Binding(X)], [dml.Binding(out)])   # bound again, it is written
    assert np.array_equal(out.data[:4], RELU_X) and not out.data[4:].any()


def test_a_dlpack_input_that_moves_or_shrinks_is_refused(backend: str) -> None:
    source = MovableTensor(X.copy())
    binding = dml.Binding(source)
    out = np.zeros(4, np.float32)
    relu().execute([binding], [dml.Binding(out)])
    assert np.array_equal(out, RELU_X)
    source.data[...] = [-1, 5, -3, 7]   # in place: read anew
    relu().execute([binding], [dml.Binding(out)])
    assert np.array_equal(out, [0, 5, 0, 7])
    for count in (1 << 20, 4, 2):   # moved larger, moved at the same size, shrunk
        source.resize(count)
        source.data.fill(-7.0)
        out[...] = 9
        with pytest.raises(dml.BindingError, match="^" + PREFIX + "InputTensor " + MOVED):
            relu().execute([binding], [dml.Binding(out)])
        assert np.array_equal(out, [9, 9, 9, 9])


def test_buffer_protocol_memory_cannot_move_while_bound(backend: str) -> None:
    """A Binding's validated view holds a buffer export: a bytearray, an ndarray, an mmap or an array.array cannot
    be resized (or closed) while it lives, so its memory stays the caller's and in place."""
    raw = bytearray(16)
    values = np.zeros(4, np.float32)
    mapped = mmap.mmap(-1, 16)
    numbers = array.array("f", [0.0] * 4)
    bindings = [dml.Binding(memory) for memory in (raw, values, mapped, numbers)]
    for binding in bindings:
        relu().execute([dml.Binding(X)], [binding])
    for memory in (raw, mapped, numbers):
        assert np.array_equal(np.frombuffer(memory, np.float32), RELU_X)
    assert np.array_equal(values, RELU_X)
    with pytest.raises(BufferError):
        raw.extend(bytes(1 << 20))
    with pytest.raises(BufferError):
        del raw[4:]
    with pytest.raises(ValueError, match="cannot resize"):
        values.resize(1 << 20)
    with pytest.raises(BufferError):
        mapped.resize(1 << 20)
    with pytest.raises(BufferError):
        mapped.close()
    with pytest.raises(BufferError):
        numbers.extend([0.0] * 1000)
    del bindings
    raw.extend(bytes(4))   # once the Bindings are gone, the memory is the caller's to resize
    mapped.close()


# -- issue 31 item 3: a typed array of another dtype ------------------------------------------------------------------

@pytest.mark.parametrize("make, shown", [
    (lambda: np.ones((4,), np.float64), "float64"),
    (lambda: np.ones((2, 2), np.int32), "int32"),
    (lambda: np.ones(4, ">f4"), ">f4"),
    (lambda: MovableTensor(np.ones(4, np.float64)), "float64"),
    (lambda: array.array("d", [1.0] * 4), "float64"),
    (lambda: memoryview(np.ones(4, np.int32)), "int32"),
])
def test_a_typed_array_of_another_dtype_is_refused(backend: str, make: Any, shown: str) -> None:
    message = (rf"is bound to an array of {shown}; DataType FLOAT32 needs float32 \(bind untyped bytes, e\.g\. a uint8 "
               rf"view, to reinterpret memory\)$")
    out = np.full(4, 9, np.float32)
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "InputTensor " + message):
        relu().execute([dml.Binding(make())], [dml.Binding(out)])
    target = make()
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "OutputTensor " + message):
        relu().execute([dml.Binding(X)], [dml.Binding(target)])
    assert np.array_equal(out, [9] * 4)
    assert np.array_equal(np.asarray(target.data if isinstance(target, MovableTensor) else target).reshape(-1), [1] * 4)


def test_untyped_memory_binds_as_raw_bytes(backend: str) -> None:
    """bytes, bytearray, uint8 arrays and views, and create_buffer's memory are raw bytes, as DML binds them."""
    for source in (X.tobytes(), bytearray(X.tobytes()), X.view(np.uint8), np.frombuffer(X.tobytes(), np.uint8),
                   memoryview(X.tobytes())):
        out = bytearray(16)
        relu().execute([dml.Binding(source)], [dml.Binding(out)])
        assert np.array_equal(np.frombuffer(out, np.float32), RELU_X)
    out_array = np.zeros(16, np.uint8)
    relu().execute([dml.Binding(X)], [dml.Binding(out_array)])
    assert np.array_equal(out_array.view(np.float32), RELU_X)
    buffer = relu().operator.device.create_buffer(16)
    relu().execute([dml.Binding(X)], [dml.Binding(buffer)])
    assert np.array_equal(buffer.read(np.float32), RELU_X)


# -- item 4: objects whose protocols raise ---------------------------------------------------------------------------

class RaisingGetattr:
    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class RaisingDlpack:
    def __dlpack__(self, **kwargs: Any) -> Any:
        raise KeyError("dlpack refuses")

    def __dlpack_device__(self) -> Any:
        return (1, 0)


class WrongCapsule:
    def __dlpack__(self, **kwargs: Any) -> Any:
        return "not a capsule"

    def __dlpack_device__(self) -> Any:
        return (1, 0)


class RaisingArray:
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise OverflowError("array refuses")


class RaisingDlpackAndArray(RaisingDlpack, RaisingArray):
    pass


HOSTILE = [
    (RaisingGetattr, r"could not be read as an array \(looking up its __dlpack__ raised RuntimeError: no __dlpack__\)"),
    (RaisingDlpack, r".*KeyError: 'dlpack refuses'"),
    (WrongCapsule, r".*(TypeError|ValueError): .*"),
    (RaisingArray, r".*OverflowError: array refuses|.*not a contiguous buffer.*"),
    (RaisingDlpackAndArray, r".*OverflowError: array refuses|.*KeyError: 'dlpack refuses'"),
]


@pytest.mark.parametrize("make, why", HOSTILE, ids=[make.__name__ for make, _ in HOSTILE])
def test_hostile_array_objects_get_binding_errors(backend: str, make: Any, why: str) -> None:
    """__call__, a Binding as input and as output, and a graph's input: a BindingError naming the tensor."""
    out = np.full(4, 9, np.float32)
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "InputTensor " + why):
        relu()(make())
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "InputTensor " + why):
        relu().execute([dml.Binding(make())], [dml.Binding(out)])
    with pytest.raises(dml.BindingError, match="^" + PREFIX + "OutputTensor " + why):
        relu().execute([dml.Binding(X)], [dml.Binding(make())])
    assert np.array_equal(out, [9] * 4)
    graph = dml.Graph(relu().operator.device)
    compiled = graph.compile([dml.activation_relu(graph.input([4], F32, name="x"))])
    with pytest.raises(dml.BindingError, match=r"input 'x' " + why):
        compiled({"x": make()})


def test_a_binding_whose_dlpack_starts_raising_is_refused(backend: str) -> None:
    """The look-up at every dispatch is guarded too."""
    source = MovableTensor(X.copy())
    binding = dml.Binding(source)
    out = np.zeros(4, np.float32)
    relu().execute([binding], [dml.Binding(out)])
    source.data = RaisingDlpack()  # type: ignore[assignment]
    with pytest.raises(dml.BindingError, match=r"^" + PREFIX + r"InputTensor is bound to a MovableTensor whose "
                                               r"__dlpack__ could not be bound \(KeyError: 'dlpack refuses'\)$"):
        relu().execute([binding], [dml.Binding(out)])


# -- item 3: device buffers' read and write, the same on both backends ------------------------------------------------

def buffer_kind(backend: str) -> str:
    return "GpuBuffer" if backend == "gpu" else "HostBuffer"


def test_buffer_read_shapes(backend: str) -> None:
    buffer = dml.Device().create_buffer(np.arange(16, dtype=np.float32))
    expected = np.arange(16, dtype=np.float32)
    for shape, result_shape in (((-1,), (16,)), ((4, -1), (4, 4)), ((-1, 8), (2, 8)), (16, (16,)), (-1, (16,)),
                                (np.int64(3), (3,)), ((2, 2, -1), (2, 2, 4)), ((), ()), ((0, 5), (0, 5)),
                                ([np.uint8(2), 3], (2, 3)), (range(1, 3), (1, 2))):
        got = buffer.read(np.float32, shape)
        count = int(np.prod(result_shape))
        assert got.shape == result_shape and np.array_equal(got.reshape(-1), expected[:count]), shape
    # README's example: a 268-byte buffer read as its 67 floats
    odd = dml.Device().create_buffer(256 + 12)
    assert odd.read(np.float32, (256 + 12) // 4).shape == (67,)
    assert buffer.read(np.int16, (-1,)).shape == (32,) and buffer.read(np.float64, 8).shape == (8,)
    assert buffer.read(np.complex64, 8).shape == (8,)


def test_buffer_read_refusals(backend: str) -> None:
    label = buffer_kind(backend) + ".read"
    buffer = dml.Device().create_buffer(np.arange(16, dtype=np.float32))
    shape_kinds = r"an integer or a list of integers \(each non-negative, or one -1\)"
    cases = [
        ((np.float32, "16"), rf"shape is '16'; it must be {shape_kinds}"),
        ((np.float32, 16.0), rf"shape is 16\.0; it must be {shape_kinds}"),
        ((np.float32, (4.0, 4)), rf"shape\[0\] is 4\.0; it must be {shape_kinds}"),
        ((np.float32, True), rf"shape is True; it must be {shape_kinds}"),
        ((np.float32, (2, -2)), r"shape\[1\] is -2; read takes non-negative sizes and at most one -1"),
        ((np.float32, (-1, -1)), r"shape\[1\] is -1; read takes non-negative sizes and at most one -1"),
        ((np.float32, -3), r"shape is -3; read takes non-negative sizes and at most one -1"),
        ((np.float32, (-1, 3)), r"shape \[-1, 3\] of float32 cannot be inferred: the buffer's 64 bytes are not a "
                                r"whole number of 12-byte rows \(-1 takes the whole buffer, as NumPy's reshape "
                                r"does\)"),
        ((np.float32, (0, -1)), r"shape \[0, -1\] of float32 cannot be inferred: the buffer's 64 bytes are not a "
                                r"whole number of 0-byte rows .*"),
        ((np.float32, (2**62, 4)), r"shape \[4611686018427387904, 4\] of float32 needs 73786976294838206464 bytes; "
                                   r"the buffer holds 64"),
        ((np.float32, 17), r"shape \[17\] of float32 needs 68 bytes; the buffer holds 64"),
        ((np.float32, [1] * 65), r"shape is \[1, 1, 1, 1, \.\.\.\] \(list of 65\); it must be an integer or a list "
                                 r"of integers .* of at most 64 items"),
        ((object,), r"dtype object holds no numbers; it must be a NumPy dtype of integers, floats or complex numbers"),
        ((bool,), r"dtype bool holds no numbers; .*"),
        (("U4",), r"dtype <U4 holds no numbers; .*"),
        ((np.dtype([("a", "f4")]),), r"dtype \[\('a', '<f4'\)\] holds no numbers; .*"),
        (([("a", "f4")],), r"dtype \[\('a', 'f4'\)\] is not a NumPy dtype \(it must be .*\)"),
        ((16,), r"dtype 16 is not a NumPy dtype \(it must be a NumPy dtype of numbers, or a str or type NumPy reads "
                r"as one\)"),
        (("no dtype",), r"dtype 'no dtype' is not a NumPy dtype \(TypeError: .*\)"),
        ((None, 4), r"give a dtype with a shape"),
    ]
    for arguments, message in cases:
        with pytest.raises(dml.BindingError, match="^" + re.escape(label) + ": " + message + "$"):
            buffer.read(*arguments)


def test_buffer_write_data_kinds(backend: str) -> None:
    """Bytes-like data and arrays of numbers; a strided array or memoryview writes its logical contents in
    row-major order, as tobytes() gives them."""
    buffer = dml.Device().create_buffer(16)
    buffer.write(np.arange(8, dtype=np.int32)[::2])   # 0, 2, 4, 6
    assert np.array_equal(buffer.read(np.int32), [0, 2, 4, 6])
    buffer.write(np.arange(4, dtype=np.int16).reshape(2, 2).T, 8)   # [[0, 2], [1, 3]]
    assert np.array_equal(buffer.read(np.int16), [0, 0, 2, 0, 0, 2, 1, 3])
    buffer.write(memoryview(bytes(range(8)))[::2], np.int64(4))   # bytes 0, 2, 4, 6
    assert buffer.read()[4:8] == bytes([0, 2, 4, 6])
    buffer.write(array.array("i", [7]), 12)
    buffer.write(bytearray(b"\x05\x00\x00\x00"))
    assert np.array_equal(buffer.read(np.int32), [5, 0x06040200, 0x00020000, 7])
    buffer.write(np.float32(1.5), 4)
    assert buffer.read(np.float32, 2)[1] == 1.5


def test_buffer_write_refusals(backend: str) -> None:
    label = buffer_kind(backend) + ".write"
    buffer = dml.Device().create_buffer(16)
    buffer.write(np.arange(4, dtype=np.int32))
    allowed = r"it must be bytes-like \(bytes, bytearray, memoryview, mmap, array\.array\) or a NumPy array of numbers"
    cases = [
        (("abcd",), rf"data is 'abcd'; {allowed}"),
        (([1, 2, 3, 4],), rf"data is \[1, 2, 3, 4\]; {allowed}"),
        ((None,), rf"data is None; {allowed}"),
        ((12,), rf"data is 12; {allowed}"),
        ((np.array([None, 1]),), r"data is <1-d ndarray of object, shape \(2,\)> \(an array of Python objects has no "
                                 rf"bytes to copy\); {allowed}"),
        ((np.array(["ab"]),), rf"data is <1-d ndarray of <U2, shape \(1,\)>; {allowed}"),
        ((b"abcd", 4.0), r"offset is 4\.0; it must be an integer \(a multiple of 4\)"),
        ((b"abcd", True), r"offset is True; it must be an integer \(a multiple of 4\)"),
        ((b"abcd", "4"), r"offset is '4'; it must be an integer \(a multiple of 4\)"),
        ((b"abcd", 2), r"4 bytes at offset 2 do not fit a buffer of 16 bytes \(the offset must be a multiple of 4\)"),
        ((b"abcd", -4), r"4 bytes at offset -4 do not fit a buffer of 16 bytes .*"),
        ((bytes(20),), r"20 bytes at offset 0 do not fit a buffer of 16 bytes .*"),
    ]
    for arguments, message in cases:
        with pytest.raises(dml.BindingError, match="^" + re.escape(label) + ": " + message + "$"):
            buffer.write(*arguments)
    assert np.array_equal(buffer.read(np.int32), [0, 1, 2, 3])   # no refused write wrote anything


def test_a_foreign_type_name_is_shown_escaped(backend: str) -> None:
    """A class may be named anything; messages show its name as a terminal would print it literally."""
    evil = type("\x1b[2Jevil", (), {})
    with pytest.raises(dml.BindingError, match=r"^" + PREFIX + r"InputTensor is bound to a \\x1b\[2Jevil, which is "
                                               r"not a contiguous buffer \(it has neither the buffer protocol nor "
                                               r"__dlpack__\)$"):
        relu().execute([dml.Binding(evil())], [dml.Binding(bytearray(16))])


# -- the same Bindings again (issue 29): an execute on Bindings that passed every check runs without checking anew --

def fresh_relu() -> dml.CompiledOperator:
    device = dml.Device()
    tensor = dml.TensorDesc(F32, [4])
    return device.compile_operator(device.create_operator(
        dml.ActivationReluOperatorDesc(input_tensor=tensor, output_tensor=tensor)))


def test_the_same_bindings_again_compute_on_the_data_as_it_is_now(backend: str) -> None:
    """The second and later executes on the same Binding objects read their inputs anew: the data written between
    executes, on host memory and on the device's."""
    compiled = fresh_relu()
    device = compiled.operator.device
    for source, target, on_device in [(np.zeros(4, np.float32), np.zeros(4, np.float32), False),
                                      (device.create_buffer(16), device.create_buffer(16), True)]:
        inputs, outputs = [dml.Binding(source)], (dml.Binding(target),)
        for data in (X, -X, np.array([0.5, 7, -1, -0.0], np.float32)):
            if on_device:
                source.write(data)
            else:
                source[:] = data
            compiled.execute(inputs, outputs)
            got = target.read(np.float32) if on_device else target
            assert got.tolist() == np.maximum(data, 0).tolist()


def test_other_bindings_after_accepted_ones_are_checked_anew(backend: str) -> None:
    """Only the very same Binding objects, in the same slots, skip the checks: a new Binding over a buffer too
    small, the accepted input's Binding beside a new one over the same buffer that overlaps it without being its
    range (in either slot), or a list of another length are refused as ever, and the output keeps its bytes."""
    compiled = fresh_relu()
    device = compiled.operator.device
    source, target = device.create_buffer(np.concatenate([X, np.zeros(4, np.float32)])), device.create_buffer(16)
    good_in, good_out = dml.Binding(source), dml.Binding(target)
    compiled.execute([good_in], [good_out])
    target.write(np.full(4, 9, np.float32))
    overlap = r"the bound ranges of InputTensor and OutputTensor overlap without being the same"
    cases = [
        ([good_in], [dml.Binding(device.create_buffer(8))],
         r"OutputTensor binding needs bytes \[0, 16\) but the buffer holds 8 bytes$"),
        ([good_in], [dml.Binding(source, 0, 32)], overlap),
        ([dml.Binding(source, 0, 32)], [good_in], overlap),
        ([good_in], [good_out, good_out], r"2 output bindings given; the operator has 1 \(OutputTensor\)$"),
        ([good_in, good_in], [good_out], r"2 input bindings given; the operator has 1 \(InputTensor\)$"),
    ]
    for inputs, outputs, message in cases:
        with pytest.raises(dml.BindingError, match=message):
            compiled.execute(inputs, outputs)
    assert target.read(np.float32).tolist() == [9.0] * 4
    compiled.execute([good_in], [good_out])
    assert target.read(np.float32).tolist() == RELU_X.tolist()


def test_an_owned_input_initialized_again_is_used_by_the_same_bindings(backend: str) -> None:
    """initialize() again replaces the OWNED_BY_DML data that executes on the same Bindings read."""
    device = dml.Device()
    plain, owned = dml.TensorDesc(F32, [4]), dml.TensorDesc(F32, [4], flags=dml.TensorFlags.OWNED_BY_DML)
    compiled = device.compile_operator(device.create_operator(dml.ElementWiseAddOperatorDesc(plain, owned, plain)))
    target = device.create_buffer(16)
    inputs, outputs = [dml.Binding(device.create_buffer(X)), None], [dml.Binding(target)]
    for addend in ([1, 1, 1, 1], [10, 20, 30, 40]):
        compiled.initialize([None, dml.Binding(np.array(addend, np.float32))])
        compiled.execute(inputs, outputs)
        assert target.read(np.float32).tolist() == (X + np.array(addend, np.float32)).tolist()


def test_what_an_execute_keeps_goes_with_its_bindings(backend: str) -> None:
    """The kept execute holds its Bindings weakly: once one is collected its entry goes, with the device memory it
    bound; and a compiled operator holding an entry is freed at once, with no cycle for the collector to find."""
    import gc
    import weakref

    compiled = fresh_relu()
    device = compiled.operator.device
    target = device.create_buffer(16)
    inputs, outputs = [dml.Binding(device.create_buffer(X))], [dml.Binding(target)]
    compiled.execute(inputs, outputs)
    assert compiled._again is not None
    memory = weakref.ref(target)
    del target, outputs
    gc.collect()
    assert compiled._again is None and memory() is None
    compiled.execute(inputs, [dml.Binding(device.create_buffer(16))])
    owner = weakref.ref(compiled)
    gc.disable()
    try:
        del compiled
        assert owner() is None
    finally:
        gc.enable()
