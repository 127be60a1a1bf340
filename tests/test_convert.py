"""The conversion helpers (opendml.convert): what each one accepts, what it returns, and each message it gives."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import opendml as dml
from opendml.convert import (
    FLOAT32_MAX,
    MAX_LIST_LENGTH,
    UINT64_MAX,
    describe,
    error_text,
    range_text,
    to_bool,
    to_enum,
    to_flags,
    to_float,
    to_int,
    to_name,
    to_read_layout,
    to_sequence,
    to_uint,
    to_uint_list,
    to_write_bytes,
)
from opendml.types import to_data_type

L, F = "Op", "Field"    # the label and field of every message here


class RaisingIndex:
    def __index__(self) -> int:
        raise ValueError("no index")


class RaisingFloat(float):
    def __float__(self) -> float:
        raise ArithmeticError("no float")


class RaisingIter:
    def __iter__(self) -> Iterator[int]:
        yield 1
        raise KeyError("gone")


class RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def deep_list(depth: int) -> list[object]:
    root: list[object] = []
    node = root
    for _ in range(depth):
        node.append([])
        node = node[0]  # type: ignore[assignment]
    return root


def refused(message: str, convert: Callable[[], object]) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        convert()


# -- describe ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    (None, "None"), (-1, "-1"), (2.5, "2.5"), (math.inf, "inf"), (True, "True"), ("abc", "'abc'"), (b"ab", "b'ab'"),
    ([1, [2, [3, [4]]]], "[1, [2, [...]]]"), ((1,), "(1,)"), ({"a": 1}, "{'a': 1}"), ({3}, "{3} (set of 1)"),
    (list(range(100)), "[0, 1, 2, 3, ...] (list of 100)"), (2**64, "18446744073709551616"),
    (np.array(3), "3 (0-d ndarray of int64)"), (np.array([1.5, 2]), "[1.5, 2.0] (1-d ndarray of float64)"),
    (np.zeros((20, 30), np.float32), "<2-d ndarray of float32, shape (20, 30)>"), (np.float32(1.5), "np.float32(1.5)"),
    (dml.DataType.FLOAT32, "<DataType.FLOAT32: 1>"), (Fraction(1, 3), "Fraction(1, 3) (Fraction)"),
    (RaisingRepr(), "<RaisingRepr object: its __repr__ raised RuntimeError: no repr>"),
    ("\x1b[2J\ud800", r"'\x1b[2J\ud800'"),
])
def test_describe(value: object, expected: str) -> None:
    assert describe(value) == expected


def test_describe_is_bounded_and_printable_whatever_it_is_given() -> None:
    class Loud:
        def __repr__(self) -> str:
            return "\x1b[31m" + "x" * 100_000

    for value in (deep_list(5000), "y" * 100_000, b"z" * 100_000, list(range(10**5)), Loud(), Fraction(10**5000, 3),
                  {"k": deep_list(3000)}, type("N" * 500, (), {})(), np.zeros(10**6)):
        text = describe(value)
        assert len(text) <= 160 and text.isprintable(), text
    assert describe("y" * 100_000).endswith("...' (100000 characters)")
    assert describe(10**400) == "1.000e+400 (an int of 401 digits)"
    assert describe(-(10**5000)) == "-1.000e+5000 (an int of 5001 digits)"
    assert describe(Fraction(10**5000, 3)).startswith("<Fraction object: its __repr__ raised ValueError")


# -- integers ---------------------------------------------------------------------------------------------------------

def test_integers_accept_what_operator_index_accepts() -> None:
    assert to_uint(L, F, 3) == 3 and type(to_uint(L, F, np.uint64(2**64 - 1), limit=UINT64_MAX)) is int
    assert to_uint(L, F, np.int8(7)) == 7 and to_uint(L, F, np.array(5)) == 5     # a 0-d integer array, as NumPy
    assert to_int(L, F, -3, low=-4, high=4) == -3 and to_uint(L, F, 2**32 - 1) == 2**32 - 1
    assert range_text(0, 2**32 - 1) == "[0, 2^32)" and range_text(-2**31, 2**31 - 1) == "[-2^31, 2^31)"
    assert range_text(1, 8) == "[1, 8]"


@pytest.mark.parametrize(("value", "shown"), [
    (-1, "-1"), (2**32, "4294967296"), (3.0, "3.0"), (True, "True"), ("3", "'3'"), (None, "None"),
    (np.float64(2), r"np.float64\(2.0\)"), (np.bool_(True), "np.True_"), (np.array([1, 2]), r"\[1, 2\] \(1-d .*\)"),
    (np.array(2.5), r"2.5 \(0-d ndarray of float64\)"), (Fraction(2), r"Fraction\(2, 1\) \(Fraction\)"),
    (Decimal(2), r"Decimal\('2'\) \(Decimal\)"), (10**40, r"1.000e\+40 \(an int of 41 digits\)"),
    (deep_list(2000), r"\[\[\[...\]\]\]"),
])
def test_uint_refusals(value: object, shown: str) -> None:
    refused(rf"^Op: Field is {shown}; it must be an integer in \[0, 2\^32\)$", lambda: to_uint(L, F, value))


def test_int_refusals_name_the_range_and_a_raising_index() -> None:
    refused(r"^Op: Field is 5; it must be an integer in \[-4, 4\]$", lambda: to_int(L, F, 5, low=-4, high=4))
    refused(r"^Op: Field is 2\^64 \(.*\)|^Op: Field is 18446744073709551616; it must be an integer in \[0, 2\^64\)$",
            lambda: to_uint(L, F, 2**64, limit=UINT64_MAX))
    refused(r"^Op: Field is <.*RaisingIndex object at .*> \(its __index__ raised ValueError: no index\); it must be "
            r"an integer in \[0, 2\^32\)$", lambda: to_uint(L, F, RaisingIndex()))


def test_uint_lists() -> None:
    assert to_uint_list(L, F, [1, np.int64(2), np.array(3)]) == (1, 2, 3)
    assert to_uint_list(L, F, np.array([4, 5], np.uint8)) == (4, 5)
    assert to_uint_list(L, F, range(3)) == (0, 1, 2) and to_uint_list(L, F, (n for n in [7])) == (7,)
    assert to_uint_list(L, F, ()) == ()
    refused(r"^Op: Field\[1\] is -1; it must be an integer in \[0, 2\^32\)$", lambda: to_uint_list(L, F, [0, -1]))
    refused(r"^Op: Field\[0\] is \[\[\[...\]\]\]; it must be an integer", lambda: to_uint_list(L, F, deep_list(2000)))
    for value, shown in ((5, "5"), ("12", "'12'"), ({1: 2}, r"\{1: 2\}"), ({1}, r"\{1\} \(set of 1\)"),
                         (np.array(3), r"3 \(0-d ndarray of int64\)"),
                         (np.zeros((3, 2)), r"<2-d ndarray of float64, shape \(3, 2\)>"), (None, "None"),
                         (b"\x01", r"b'\\x01'")):
        refused(rf"^Op: Field is {shown}; it must be a list of integers$",
                lambda value=value: to_uint_list(L, F, value))
    refused(r"^Op: Field is <.*RaisingIter object at .*> \(reading it raised KeyError: 'gone'\); it must be a list of "
            r"integers$", lambda: to_uint_list(L, F, RaisingIter()))


def test_sequences_are_read_once_and_bounded() -> None:
    import itertools

    assert to_sequence(L, F, iter([1, "a"])) == [1, "a"]
    refused(rf"^Op: Field is count\({MAX_LIST_LENGTH + 1}\) \(count\); it must be a list of at most {MAX_LIST_LENGTH} "
            rf"items$",
            lambda: to_sequence(L, F, itertools.count()))
    refused(r"^Op: Field is 'ab'; it must be a list of names$", lambda: to_sequence(L, F, "ab", what="a list of names"))


# -- floats and bools -------------------------------------------------------------------------------------------------

def test_floats() -> None:
    for value, expected in ((1, 1.0), (np.float16(0.5), 0.5), (np.array(2.5), 2.5), (Fraction(1, 4), 0.25),
                            (Decimal("1.5"), 1.5), (np.int64(-3), -3.0), (FLOAT32_MAX, FLOAT32_MAX)):
        result = to_float(L, F, value)
        assert type(result) is float and result == expected
    assert math.isinf(to_float(L, F, math.inf, finite=False, limit=None))
    assert to_float(L, F, 1e300, limit=None) == 1e300


@pytest.mark.parametrize(("value", "message"), [
    ("1.5", r"^Op: Field is '1.5'; it must be a number \(FLOAT\)$"),
    (True, r"^Op: Field is True; it must be a number \(FLOAT\)$"),
    (1 + 2j, r"^Op: Field is \(1\+2j\); it must be a number \(FLOAT\)$"),
    (None, r"^Op: Field is None; it must be a number \(FLOAT\)$"),
    (np.zeros((3, 2)), r"^Op: Field is <2-d ndarray of float64, shape \(3, 2\)>; it must be a number \(FLOAT\)$"),
    (math.nan, r"^Op: Field is nan; it must be a finite FLOAT \(magnitude at most 3.40282e\+38\)$"),
    (-math.inf, r"^Op: Field is -inf; it must be a finite FLOAT \(magnitude at most 3.40282e\+38\)$"),
    (1e39, r"^Op: Field is 1e\+39; it must be a finite FLOAT \(magnitude at most 3.40282e\+38\)$"),
    (10**400 + 0, r"^Op: Field is 1.000e\+400 \(an int of 401 digits\) \(too large for a float\); it must be a finite "
              r"FLOAT \(magnitude at most 3.40282e\+38\)$"),
    (Fraction(10**400, 3), r"^Op: Field is .* \(too large for a float\); it must be a finite FLOAT"),
    (Decimal("sNaN"), r"^Op: Field is Decimal\('sNaN'\) \(Decimal\) \(its __float__ raised ValueError: cannot convert "
                      r"signaling NaN to float\); it must be a number \(FLOAT\)$"),
    (RaisingFloat(1.0), r"^Op: Field is 1.0 \(RaisingFloat\) \(its __float__ raised ArithmeticError: no float\); it "
                        r"must be a number \(FLOAT\)$"),
])
def test_float_refusals(value: object, message: str) -> None:
    refused(message, lambda: to_float(L, F, value))


def test_float_other_kinds_and_limits() -> None:
    refused(r"^Op: Field is nan; it must be a finite double$", lambda: to_float(L, F, math.nan, limit=None,
                                                                               what="double"))
    refused(r"^Op: Field is 5.0; it must be a finite double \(magnitude at most 4\)$",
            lambda: to_float(L, F, 5.0, limit=4.0, what="double"))


def test_bools() -> None:
    assert to_bool(L, F, True) is True and to_bool(L, F, 0) is False and to_bool(L, F, np.bool_(True)) is True
    assert to_bool(L, F, np.array(False)) is False and to_bool(L, F, np.uint8(1)) is True
    for value, shown in ((2, "2"), ("yes", "'yes'"), (1.0, "1.0"), (None, "None")):
        refused(rf"^Op: Field is {shown}; it must be a BOOL \(True or False\)$",
                lambda value=value: to_bool(L, F, value))


# -- enums, flags and data types --------------------------------------------------------------------------------------

def test_enums() -> None:
    R = dml.ReduceFunction
    assert to_enum(L, F, "SUM", R, "DML_REDUCE_FUNCTION_") is R.SUM   # exact names only: test_types
    assert to_enum(L, F, "DML_REDUCE_FUNCTION_MAX", R, "DML_REDUCE_FUNCTION_") is R.MAX
    assert to_enum(L, F, np.int32(10), R, "DML_REDUCE_FUNCTION_") is R.SUM
    level = to_enum(L, F, "5.2", dml.FeatureLevel, "DML_FEATURE_LEVEL_", member_prefix="LEVEL_")
    assert level is dml.FeatureLevel.LEVEL_5_2
    allowed = r"it must be one of ARGMAX, ARGMIN, .*, SUM_SQUARE \(DML_REDUCE_FUNCTION_\*, or 0 to 11\)$"
    for value, shown in (("MEAN", "'MEAN'"), (12, "12"), (True, "True"), (None, "None"), (1.0, "1.0"),
                         (dml.AxisDirection.DECREASING, "<AxisDirection.DECREASING: 1>"), ([10], r"\[10\]")):
        refused(rf"^Op: Field is {shown}; {allowed}",
                lambda value=value: to_enum(L, F, value, R, "DML_REDUCE_FUNCTION_"))
    refused(r"^Op: Field is '9_9'; it must be one of 1_0, 2_0, .*, 6_4 \(DML_FEATURE_LEVEL_\*, or their values\)$",
            lambda: to_enum(L, F, "9_9", dml.FeatureLevel, "DML_FEATURE_LEVEL_", member_prefix="LEVEL_"))
    refused(r"^Op: Field is 2; it must be one of INCREASING, DECREASING \(DML_AXIS_DIRECTION_\*, or 0 and 1\)$",
            lambda: to_enum(L, F, 2, dml.AxisDirection, "DML_AXIS_DIRECTION_"))


def test_flags() -> None:
    E = dml.ExecutionFlags
    assert to_flags(L, F, 0, E, "DML_EXECUTION_FLAG_") is E.NONE
    assert to_flags(L, F, ["DISABLE_META_COMMANDS", 1], E, "DML_EXECUTION_FLAG_") == 3
    assert to_flags(L, F, (), E, "DML_EXECUTION_FLAG_") == 0
    assert to_flags(L, F, "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE", E, "DML_EXECUTION_FLAG_") == 4
    allowed = (r"it must be one of NONE, ALLOW_HALF_PRECISION_COMPUTATION, DISABLE_META_COMMANDS, "
               r"DESCRIPTORS_VOLATILE \(DML_EXECUTION_FLAG_\*\), an integer of those bits \(0x7\), or a list of them$")
    refused(rf"^Op: Field is 8 \(0x8 has bits that are not ExecutionFlags\); {allowed}",
            lambda: to_flags(L, F, 8, E, "DML_EXECUTION_FLAG_"))
    refused(rf"^Op: Field is 1.000e\+400 \(an int of 401 digits\) \(it has bits that are not ExecutionFlags\); "
            rf"{allowed}", lambda: to_flags(L, F, 10**400, E, "DML_EXECUTION_FLAG_"))
    refused(rf"^Op: Field is -1; {allowed}", lambda: to_flags(L, F, -1, E, "DML_EXECUTION_FLAG_"))
    refused(rf"^Op: Field\[1\] is 'FAST'; {allowed}", lambda: to_flags(L, F, [1, "FAST"], E, "DML_EXECUTION_FLAG_"))
    refused(rf"^Op: Field\[0\] is \[\[\[...\]\]\]; {allowed}",   # nested lists are not read
            lambda: to_flags(L, F, deep_list(2000), E, "DML_EXECUTION_FLAG_"))
    refused(rf"^Op: Field is <TensorFlags.OWNED_BY_DML: 1>; {allowed}",
            lambda: to_flags(L, F, dml.TensorFlags.OWNED_BY_DML, E, "DML_EXECUTION_FLAG_"))


def test_data_types() -> None:
    D = dml.DataType
    for value, expected in ((D.INT8, D.INT8), ("UINT4", D.UINT4), ("DML_TENSOR_DATA_TYPE_FLOAT16", D.FLOAT16),
                            (1, D.FLOAT32), (np.int64(9), D.FLOAT64), (np.float16, D.FLOAT16), ("f4", D.FLOAT32),
                            (np.dtype("<u2"), D.UINT16), (int, D.INT64), (float, D.FLOAT64)):
        assert to_data_type(L, F, value) is expected
    allowed = (r"it must be a DataType: one of UNKNOWN, FLOAT32, .*, INT4 \(DML_TENSOR_DATA_TYPE_\*, or 0 to 13\), "
               r"or a NumPy dtype that has one$")
    for value, shown in ((None, "None"), (14, "14"), (-1, "-1"), (True, "True"), (2.0, "2.0"), ([1], r"\[1\]"),
                         (dml.ReduceFunction.SUM, "<ReduceFunction.SUM: 10>"), (np.zeros(2), r"\[0.0, 0.0\] .*")):
        refused(rf"^Op: Field is {shown}; {allowed}", lambda value=value: to_data_type(L, F, value))
    refused(rf"^Op: Field is 'FLOAT128' \(neither a DML data type nor a NumPy dtype\); {allowed}",
            lambda: to_data_type(L, F, "FLOAT128"))
    refused(rf"^Op: Field is 'bool' \(NumPy dtype bool has no DML data type\); {allowed}",
            lambda: to_data_type(L, F, "bool"))
    refused(rf"^Op: Field is dtype\('>f4'\) \(NumPy dtype >f4 has no DML data type\); {allowed}",
            lambda: to_data_type(L, F, np.dtype(">f4")))

    class RaisingDtype:
        @property
        def dtype(self) -> object:
            raise RuntimeError("no dtype")

    refused(rf"^Op: Field is <class '.*RaisingDtype'> \(NumPy dtype object has no DML data type\); {allowed}",
            lambda: to_data_type(L, F, RaisingDtype))


# -- names ------------------------------------------------------------------------------------------------------------

def test_names() -> None:
    assert to_name(L, F, "input x β 🙂") == "input x β 🙂"

    class Name(str):
        def __str__(self) -> str:
            return "other"

    assert type(to_name(L, F, Name("mine"))) is str and to_name(L, F, Name("mine")) == "mine"
    allowed = r"it must be a non-empty string of at most 1024 printable characters$"
    for value, shown in (("", "''"), (None, "None"), (3, "3"), (b"x", "b'x'"), (["x"], r"\['x'\]")):
        refused(rf"^Op: Field is {shown}; {allowed}", lambda value=value: to_name(L, F, value))
    refused(rf"^Op: Field is 'xxx.*' \(1025 characters\); {allowed}", lambda: to_name(L, F, "x" * 1025))
    for text, position, char in (("a\x1b[2J", 1, r"\\x1b"), ("ok\ud800", 2, r"\\ud800"), ("a\u202eb", 1, r"\\u202e"),
                                 ("two\nlines", 3, r"\\n"), ("a\u2028", 1, r"\\u2028"), ("\x7f", 0, r"\\x7f")):
        refused(rf"^Op: Field is '.*' \(character {position} is '{char}'\); {allowed}",
                lambda text=text: to_name(L, F, text))


def test_a_subclassed_enum_value_is_refused_not_trusted() -> None:
    class Other(enum.IntEnum):
        A = 0

    refused(r"^Op: Field is <Other.A: 0>; it must be one of INCREASING", lambda: to_enum(L, F, Other.A,
                                                                                         dml.AxisDirection, "X_"))


# -- device buffers' read and write ------------------------------------------------------------------------------

def test_to_read_layout() -> None:
    """(dtype, shape) of read(dtype, shape) from a buffer of 64 bytes; -1 inferred exactly; None for bytes."""
    f4 = np.dtype(np.float32)
    assert to_read_layout(L, None, None, 64) is None
    assert to_read_layout(L, np.float32, None, 64) == (f4, (16,))
    assert to_read_layout(L, "float64", None, 60) == (np.dtype(np.float64), (7,))   # the whole elements
    assert to_read_layout(L, np.float32, 4, 64) == (f4, (4,))
    assert to_read_layout(L, np.float32, np.uint16(4), 64) == (f4, (4,))
    assert to_read_layout(L, np.float32, (-1,), 64) == (f4, (16,))
    assert to_read_layout(L, np.float32, [4, -1], 64) == (f4, (4, 4))
    assert to_read_layout(L, np.float32, np.array([2, -1]), 64) == (f4, (2, 8))
    assert to_read_layout(L, np.int8, (), 64) == (np.dtype(np.int8), ())
    for dtype, shape, message in (
            (np.float32, (4, -1), r"shape \[4, -1\] of float32 cannot be inferred: the buffer's 60 bytes are not a "
                                  r"whole number of 16-byte rows"),
            (np.float32, "16", r"shape is '16'; it must be an integer or a list of integers"),
            (np.float32, np.array(3.0), r"shape is 3\.0 \(0-d ndarray of float64\); it must be an integer"),
            (np.float32, (RaisingIndex(),), r"shape\[0\] is <.*RaisingIndex object.*> \(its __index__ raised "
                                           r"ValueError: no index\); it must be an integer"),
            (np.float32, 16, r"shape \[16\] of float32 needs 64 bytes; the buffer holds 60$"),
            (np.object_, None, r"dtype object holds no numbers"),
            (None, (2,), r"give a dtype with a shape$")):
        with pytest.raises(dml.BindingError, match=rf"^{L}: {message}"):
            to_read_layout(L, dtype, shape, 60)


def test_to_write_bytes() -> None:
    raw, offset = to_write_bytes(L, np.arange(6, dtype=np.int16).reshape(2, 3).T, np.int32(4), 16)
    assert offset == 4 and raw.tobytes() == bytes([0, 0, 3, 0, 1, 0, 4, 0, 2, 0, 5, 0])   # row-major: 0 3 1 4 2 5
    raw, offset = to_write_bytes(L, memoryview(b"abcdef")[::2], 0, 4)
    assert offset == 0 and raw.tobytes() == b"ace"
    for data, offset, message in (
            (b"ab", 1.0, r"offset is 1\.0; it must be an integer \(a multiple of 4\)"),
            (b"ab", False, r"offset is False; it must be an integer"),
            ("ab", 0, r"data is 'ab'; it must be bytes-like .* or a NumPy array of numbers"),
            (np.array([b"ab"]), 0, r"data is <1-d ndarray of \|S2, shape \(1,\)>; it must be bytes-like"),
            (np.zeros(2, [("a", "i4")]), 0, r"data is <1-d ndarray of \[\('a', '<i4'\)\], shape \(2,\)>; it must"),
            (bytes(8), 12, r"8 bytes at offset 12 do not fit a buffer of 16 bytes \(the offset must be a multiple "
                           r"of 4\)$")):
        with pytest.raises(dml.BindingError, match=rf"^{L}: {message}"):
            to_write_bytes(L, data, offset, 16)


def test_error_text() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    assert error_text(KeyError("a\x1bb")) == "KeyError: 'a\\x1bb'"
    assert error_text(Unprintable()) == "Unprintable"
    assert len(error_text(ValueError("x" * 10_000))) <= 100
