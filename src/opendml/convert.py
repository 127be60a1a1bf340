"""The conversion of every value a caller hands to opendml: one helper per kind of value.

Every public entry point (descriptor and TensorDesc fields, the graph functions, Device and its methods) passes each
argument through one of these helpers, so that a field added later is safe by construction. A helper returns the
value converted for its field, or raises ValidationError naming the operator or function (`label`), the field, the
value received (through `describe`, bounded whatever its size or depth) and what is allowed. No raw Python exception
(TypeError, OverflowError, RecursionError, or whatever a hostile `__index__`, `__float__`, `__iter__` or `__repr__`
raises) comes out of them, and nothing is ever silently defaulted (`types.to_data_type(None)` is an error, not FLOAT64).

The rulings, alike for every field of a kind:

- Integers (`to_uint`, `to_int`, `to_uint_list`): what `operator.index` takes, as NumPy indexing does: int, NumPy
  integer scalars and 0-d integer arrays. Never bool (True is no size), float (even 3.0), str, Fraction or Decimal.
- Numbers (`to_float`): int, float, NumPy integer and floating scalars, 0-d arrays of those, and other real numbers
  (Fraction, Decimal). Never bool, complex or str. An int beyond float's range is refused, not an OverflowError.
- Lists (`to_sequence`, `to_uint_list`): a list, tuple, range, 1-d NumPy array or other iterable, read once and at
  most MAX_LIST_LENGTH items; never a str, bytes, mapping or set (no order, or not a list), nor a 0-d or 2-d array.
  Nested lists are never recursed into: an item that is a list is refused as an item.
- Flags (`to_flags`): a member, its integer value (only the type's bits), its name (short or DML's long one), or a
  flat list of those (OR-ed).
- Enums (`to_enum`, `to_dtype_enum`): a member, its value, or its name (short or DML's long one); never a member of
  another enum. Names are matched exactly as DML spells them, as DxDispatch's parsers match them (strcmp): no other
  case and no whitespace around them (a message names the near miss). A data type may also be a NumPy dtype (or a
  str or type NumPy reads as one, as exactly as NumPy reads it) that has a DML data type.
  This module imports nothing of opendml's but its errors: `types` builds its enums' parsers on it
  (`types.to_data_type` is `to_dtype_enum` over DataType).
- Names (`to_name`): a non-empty str of at most MAX_NAME_LENGTH characters that a terminal shows as it is: no lone
  surrogates (not UTF-8), no control characters (C0, DEL, C1), line or paragraph separators, nor bidirectional
  overrides. Names reach messages and printed output, which must not be able to fake or hide text.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import numbers
import unicodedata
from collections.abc import Mapping, Set
from decimal import Decimal
from operator import index as operator_index
from typing import Any, TypeVar

import numpy as np

from .errors import ValidationError

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
#: The largest magnitude a DML FLOAT (IEEE binary32) holds.
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Items read from one list argument at most: far past any DML array (8 dimensions), short of exhausting memory
#: on an endless iterator.
MAX_LIST_LENGTH = 1 << 16
#: Characters of a name at most.
MAX_NAME_LENGTH = 1024

EnumT = TypeVar("EnumT", bound=enum.Enum)
FlagT = TypeVar("FlagT", bound=enum.IntFlag)

#: Characters that reorder what a terminal shows (bidirectional embeddings, overrides and isolates).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})

# -- describing a received value ------------------------------------------------------------------------------------

_TEXT_LIMIT = 60      # characters of one repr shown
_DESCRIBE_LIMIT = 160  # characters of a whole description
_ITEMS_SHOWN = 4      # items of a container shown
_DEPTH_SHOWN = 2      # levels of nesting shown


def describe(value: object) -> str:
    """A short, printable summary of any value for a message: its repr, cut short, and its type where the repr does
    not show it (`'abc'`, `-1`, `[[[...]]]`, `[0, 1, 2, 3, ...] (list of 100)`, `1.000e+400 (an int of 401 digits)`,
    `Fraction(1, 3) (Fraction)`, `<Foo object: its __repr__ raised ValueError>`). Never recurses deeply, never
    raises, at most 160 characters, and holds only printable characters (control characters and lone surrogates
    escaped)."""
    try:
        text = _describe(value, 0)
    except Exception as error:  # a hostile object may break any step; the message must still be made
        text = f"<{_type_name(value)} object: describing it raised {_error_name(error)}>"
    return _clip(printable(text), _DESCRIBE_LIMIT)


def _describe(value: object, depth: int) -> str:
    kind = type(value)
    if value is None or kind in (bool, float, complex):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, enum.Enum):
        return _int_text(int.__int__(value)) + ("" if kind is int else f" ({_type_name(value)})")
    if kind in (str, bytes, bytearray):
        return _text_text(value)  # type: ignore[arg-type]
    if kind in (list, tuple, dict, set, frozenset):
        return _container_text(value, depth)
    if isinstance(value, np.ndarray):
        return _array_text(value)
    text = _repr_text(value)
    shows_type = text.startswith("<") or isinstance(value, (np.generic, np.dtype, enum.Enum))
    return text if shows_type else f"{text} ({_type_name(value)})"


def _int_text(number: int) -> str:
    if -10**40 < number < 10**40:
        return repr(number)
    # Huge: the decimal digits would cost time (and are refused past 4300 digits); the magnitude says enough.
    exponent = math.log10(abs(number))
    power = math.floor(exponent)
    sign = "-" if number < 0 else ""
    return f"{sign}{10 ** (exponent - power):.3f}e+{power} (an int of {power + 1} digits)"


def _text_text(value: str | bytes | bytearray) -> str:
    if len(value) <= _TEXT_LIMIT:
        return repr(value)
    unit = "characters" if isinstance(value, str) else "bytes"
    return f"{repr(value[:_TEXT_LIMIT])[:-1]}...{repr(value[:1])[-1]} ({len(value)} {unit})"


def _container_text(value: Any, depth: int) -> str:
    length = len(value)
    brackets = "[]" if type(value) is list else "()" if type(value) is tuple else "{}"
    if depth >= _DEPTH_SHOWN and length:
        inner = "..."
    elif isinstance(value, dict):
        inner = ", ".join(f"{_describe(key, depth + 1)}: {_describe(item, depth + 1)}"
                          for key, item in itertools.islice(value.items(), _ITEMS_SHOWN))
    else:
        inner = ", ".join(_describe(item, depth + 1) for item in itertools.islice(value, _ITEMS_SHOWN))
    if length > _ITEMS_SHOWN and inner != "...":
        inner += ", ..."
    elif length == 1 and type(value) is tuple and inner != "...":
        inner += ","
    text = _clip(brackets[0] + inner + brackets[1], _TEXT_LIMIT + 20)
    if depth == 0 and (inner.endswith("...") or type(value) in (set, frozenset)):
        text += f" ({type(value).__name__} of {length})"
    return text


def _array_text(array: np.ndarray[Any, Any]) -> str:
    kind = f"{array.ndim}-d {_type_name(array)} of {array.dtype}"
    if array.size <= _ITEMS_SHOWN and array.dtype.kind in "biufc":
        return f"{_clip(' '.join(repr(array.tolist()).split()), _TEXT_LIMIT)} ({kind})"
    return f"<{kind}, shape {tuple(array.shape)}>"


def _repr_text(value: object) -> str:
    try:
        text = repr(value)
    except Exception as error:
        return f"<{_type_name(value)} object: its __repr__ raised {_error_name(error)}>"
    if not isinstance(text, str):
        return f"<{_type_name(value)} object>"
    return _clip(text, _TEXT_LIMIT)


def _type_name(value: object) -> str:
    name = type(value).__name__
    return _clip(name, 40) if isinstance(name, str) else "object"


def _error_name(error: BaseException) -> str:
    """The exception's type and its message, bounded (its __str__ may itself raise)."""
    try:
        message = str(error)
    except Exception:
        message = ""
    name = _type_name(error)
    return _clip(f"{name}: {message}", _TEXT_LIMIT + 40) if message else name


def error_text(error: BaseException) -> str:
    """A third-party exception for a message: its type and text, bounded and printable (its __str__ may raise)."""
    return printable(_error_name(error))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def printable(text: str, encoding: str | None = None) -> str:
    """`text` as a terminal shows it: every character that is not printable (control characters such as ESC or a
    newline, lone surrogates, bidirectional overrides), and with an `encoding` every one it cannot encode, escaped as
    Python writes it in a string literal (\\x1b, \\n, \\ud800, \\u202e). Messages and the command line's output."""
    if not text.isprintable():
        text = "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)
    return text if encoding is None else text.encode(encoding, "backslashreplace").decode(encoding)


# -- the helpers ------------------------------------------------------------------------------------------------------

def _where(label: str, field: str) -> str:
    return f"{label}: {field}" if field else label


def _refuse(label: str, field: str, value: object, allowed: str, why: str = "") -> ValidationError:
    """The one message form: `label: field is <value>; it must be <allowed>`, with what went wrong converting it."""
    detail = f" ({why})" if why else ""
    return ValidationError(f"{_where(label, field)} is {describe(value)}{detail}; it must be {allowed}")


def range_text(low: int, high: int) -> str:
    """[low, high] as messages write it: `[0, 2^32)` for the ranges of the C integer types."""
    end = high + 1
    if end >= 1 << 16 and end & (end - 1) == 0:
        start = f"-2^{(-low).bit_length() - 1}" if low < 0 and (-low) & (-low - 1) == 0 else str(low)
        return f"[{start}, 2^{end.bit_length() - 1})"
    return f"[{low}, {high}]"


def _is_boolean(value: object) -> bool:
    return isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind == "b")


def _as_integer(label: str, field: str, value: object, allowed: str) -> int:
    """`value` through operator.index (int, NumPy integers, 0-d integer arrays), never a bool."""
    if type(value) is int:
        return value
    if _is_boolean(value):
        raise _refuse(label, field, value, allowed)
    try:
        return operator_index(value)  # type: ignore[arg-type]
    except TypeError:
        raise _refuse(label, field, value, allowed) from None
    except Exception as error:  # a hostile __index__
        raise _refuse(label, field, value, allowed, f"its __index__ raised {_error_name(error)}") from None


def to_int(label: str, field: str, value: object, *, low: int, high: int) -> int:
    """An integer field in [low, high] as an int."""
    if type(value) is int and low <= value <= high:
        return value
    allowed = f"an integer in {range_text(low, high)}"
    number = _as_integer(label, field, value, allowed)
    if not low <= number <= high:
        raise _refuse(label, field, number, allowed)
    return number


def to_uint(label: str, field: str, value: object, *, limit: int = UINT32_MAX) -> int:
    """An unsigned integer field (UINT by default; UINT64 with limit=UINT64_MAX) as an int in [0, limit]."""
    return to_int(label, field, value, low=0, high=limit)


def to_bool(label: str, field: str, value: object) -> bool:
    """A BOOL field: True, False, or an integer 0 or 1 (NumPy's bools and integers, 0-d arrays of them)."""
    allowed = "a BOOL (True or False)"
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "b":
        return bool(value.item())
    number = _as_integer(label, field, value, allowed)
    if number not in (0, 1):
        raise _refuse(label, field, value, allowed)
    return bool(number)


def to_float(label: str, field: str, value: object, *, finite: bool = True, limit: float | None = FLOAT32_MAX,
             what: str = "FLOAT") -> float:
    """A floating-point field as a Python float.

    With `finite` (the default) NaN and infinities are refused, and with `limit` (FLOAT's range by default) any
    magnitude above it, which a FLOAT would silently turn into infinity. `what` names the field's type in messages.
    """
    limit_text = f" (magnitude at most {limit:.6g})" if limit is not None else ""
    out_of_range = f"a finite {what}{limit_text}" if finite else f"a {what}{limit_text}"
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if _is_boolean(value) or not isinstance(value, (numbers.Real, Decimal)):
        raise _refuse(label, field, value, f"a number ({what})")
    try:
        number = float(value)
    except OverflowError:
        raise _refuse(label, field, value, out_of_range, "too large for a float") from None
    except Exception as error:  # a hostile __float__, or Decimal('sNaN')
        raise _refuse(label, field, value, f"a number ({what})", f"its __float__ raised {_error_name(error)}"
                      ) from None
    if finite and not math.isfinite(number):
        raise _refuse(label, field, number, out_of_range)
    if limit is not None and abs(number) > limit and not math.isnan(number) and not math.isinf(number):
        raise _refuse(label, field, number, out_of_range)
    return number


def to_sequence(label: str, field: str, value: object, *, what: str = "a list",
                max_length: int = MAX_LIST_LENGTH) -> list[Any]:
    """A list argument's items, read once: `what` (the message's name for the list, e.g. "a list of integers") from
    a list, tuple, range, 1-d array or other iterable; never a str, bytes, mapping, set or a 0-d or 2-d array."""
    not_a_list = (isinstance(value, (str, bytes, bytearray, memoryview, Mapping, Set))
                  or getattr(type(value), "__iter__", None) is None
                  or (isinstance(value, np.ndarray) and value.ndim != 1))
    if not_a_list:
        raise _refuse(label, field, value, what)
    try:
        items = list(itertools.islice(iter(value), max_length + 1))  # type: ignore[call-overload]
    except Exception as error:  # a hostile __iter__ or __next__
        raise _refuse(label, field, value, what, f"reading it raised {_error_name(error)}") from None
    if len(items) > max_length:
        raise _refuse(label, field, value, f"{what} of at most {max_length} items")
    return items


def to_uint_list(label: str, field: str, values: object, *, limit: int = UINT32_MAX) -> tuple[int, ...]:
    """A UINT array field (Sizes, Strides, Axes...) as a tuple of ints, each in [0, limit]; a message names the
    first bad item (`Axes[1]`)."""
    items = to_sequence(label, field, values, what="a list of integers")
    return tuple(to_uint(label, f"{field}[{index}]", item, limit=limit) for index, item in enumerate(items))


def _member_by_name(enum_type: type[EnumT], value: str, prefix: str, member_prefix: str) -> EnumT | None:
    """The member `value` names exactly: its short name (`SUM`) or DML's (`DML_REDUCE_FUNCTION_SUM`, `prefix` and the
    short name); with a `member_prefix` (FeatureLevel's "LEVEL_") also without it or with "." for "_" ("5.2")."""
    name = str.__str__(value).removeprefix(prefix)   # a str subclass's own methods play no part
    if member_prefix:
        name = member_prefix + name.removeprefix(member_prefix).replace(".", "_")
    return enum_type.__members__.get(name)


def _near_name(enum_type: type[enum.Enum], value: str, prefix: str, member_prefix: str) -> str:
    """Why a name that is no member's was refused, where it names one but for its case or the whitespace around it:
    the name as DML spells it (for the message); else ""."""
    value = str.__str__(value)
    near = value.strip().upper()
    if near == value or len(value) > _TEXT_LIMIT or _member_by_name(enum_type, near, prefix, member_prefix) is None:
        return ""
    return f"names are matched exactly as DML spells them: {near!r}"


def _allowed_names(enum_type: type[enum.Enum], member_prefix: str = "") -> str:
    return ", ".join(name[len(member_prefix):] for name in enum_type.__members__)


@functools.cache
def _enum_allowed(enum_type: type[enum.Enum], prefix: str, member_prefix: str) -> str:
    """What an enum field allows, for messages (made once per enum)."""
    values = sorted(member.value for member in enum_type)
    if values == list(range(values[0], values[-1] + 1)):
        numbers_text = f"{values[0]} {'and' if len(values) == 2 else 'to'} {values[-1]}"
    else:
        numbers_text = "their values"
    return f"one of {_allowed_names(enum_type, member_prefix)} ({prefix}*, or {numbers_text})"


@functools.cache
def _flags_allowed(flag_type: type[enum.IntFlag], prefix: str) -> tuple[int, str]:
    """Every bit of a flag type, and what a flag field allows, for messages (made once per flag type)."""
    all_bits = 0
    for member in flag_type:
        all_bits |= member.value
    return all_bits, (f"one of {_allowed_names(flag_type)} ({prefix}*), an integer of those bits ({all_bits:#x}), "
                      f"or a list of them")


def to_enum(label: str, field: str, value: object, enum_type: type[EnumT], prefix: str, *,
            member_prefix: str = "") -> EnumT:
    """A member of an IntEnum from a member, its value or its name: short (`SUM`) or DML's (`DML_REDUCE_FUNCTION_SUM`,
    with `prefix` "DML_REDUCE_FUNCTION_"), spelled exactly as DML spells it. `member_prefix` is a prefix of every
    member's name that the short form leaves out (FeatureLevel: "LEVEL_", so that "5_2" and "5.2" name LEVEL_5_2)."""
    if isinstance(value, enum_type):
        return value
    allowed = _enum_allowed(enum_type, prefix, member_prefix)
    if isinstance(value, str):
        member = _member_by_name(enum_type, value, prefix, member_prefix)
        if member is None:
            raise _refuse(label, field, value, allowed, _near_name(enum_type, value, prefix, member_prefix))
        return member
    if isinstance(value, enum.Enum):   # another enum's member, even an IntEnum's, is a mix-up
        raise _refuse(label, field, value, allowed)
    number = _as_integer(label, field, value, allowed)
    try:
        return enum_type(number)
    except ValueError:
        raise _refuse(label, field, value, allowed) from None


def to_flags(label: str, field: str, value: object, flag_type: type[FlagT], prefix: str) -> FlagT:
    """A flag set: a member, its integer value (only bits of `flag_type`), a name (short or DML's, e.g.
    DML_TENSOR_FLAG_OWNED_BY_DML with `prefix` "DML_TENSOR_FLAG_") or a flat list of those, OR-ed."""
    if isinstance(value, flag_type):
        return value
    all_bits, allowed = _flags_allowed(flag_type, prefix)
    if isinstance(value, (str, flag_type)) or not isinstance(value, (list, tuple)):
        return _one_flag(label, field, value, flag_type, prefix, all_bits, allowed)
    result = 0
    for index, item in enumerate(to_sequence(label, field, value, what=allowed)):
        result |= _one_flag(label, f"{field}[{index}]", item, flag_type, prefix, all_bits, allowed)
    return flag_type(result)


def _one_flag(label: str, field: str, value: object, flag_type: type[FlagT], prefix: str, all_bits: int,
              allowed: str) -> FlagT:
    if isinstance(value, flag_type):
        return value
    if isinstance(value, str):
        member = _member_by_name(flag_type, value, prefix, "")
        if member is None:
            raise _refuse(label, field, value, allowed, _near_name(flag_type, value, prefix, ""))
        return member
    if isinstance(value, enum.Enum):
        raise _refuse(label, field, value, allowed)
    number = _as_integer(label, field, value, allowed)
    if number < 0 or number & ~all_bits:
        bits = f"{number:#x}" if number.bit_length() <= 64 else "it"
        raise _refuse(label, field, value, allowed, f"{bits} has bits that are not {flag_type.__name__}"
                      if number >= 0 else "")
    return flag_type(number)


def to_dtype_enum(label: str, field: str, value: object, enum_type: type[EnumT], prefix: str,
                  dtypes: Mapping[EnumT, np.dtype[Any]]) -> EnumT:
    """A member of a data-type enum (types.DataType, through types.to_data_type) from a member, its value, its name
    (FLOAT16 or DML's, with `prefix` DML_TENSOR_DATA_TYPE_) or a NumPy dtype that `dtypes` maps a member to
    (np.float16, "float16", "f2", np.dtype("<f2")). None is refused: NumPy reads it as float64, which would hide a
    missing argument."""
    if isinstance(value, enum_type):
        return value
    allowed = f"a {enum_type.__name__}: {_enum_allowed(enum_type, prefix, '')}, or a NumPy dtype that has one"
    if isinstance(value, str):
        member = _member_by_name(enum_type, value, prefix, "")
        if member is not None:
            return member
    elif not isinstance(value, (type, np.dtype)):
        if isinstance(value, enum.Enum) or getattr(type(value), "__index__", None) is None:
            raise _refuse(label, field, value, allowed)
        try:
            return enum_type(_as_integer(label, field, value, allowed))
        except ValueError:
            raise _refuse(label, field, value, allowed) from None
    try:
        dtype = np.dtype(value)
    except Exception:  # NumPy raises TypeError, ValueError, and whatever a hostile type's dtype attribute does
        near = _near_name(enum_type, value, prefix, "") if isinstance(value, str) else ""
        raise _refuse(label, field, value, allowed, near or "neither a DML data type nor a NumPy dtype") from None
    for member, numpy_dtype in dtypes.items():
        if numpy_dtype == dtype:
            return member
    raise _refuse(label, field, value, allowed, f"NumPy dtype {_clip(str(dtype), _TEXT_LIMIT)} has no DML data type")


def to_name(label: str, field: str, value: object, *, max_length: int = MAX_NAME_LENGTH) -> str:
    """A name (of a graph input or constant, a backend, an adapter...): a non-empty str of at most `max_length`
    characters that shows as itself (see the module's rulings)."""
    allowed = f"a non-empty string of at most {max_length} printable characters"
    if not isinstance(value, str):
        raise _refuse(label, field, value, allowed)
    text = str.__str__(value)   # a str subclass's own methods play no part
    if not text or len(text) > max_length:
        raise _refuse(label, field, text, allowed)
    if not text.isprintable():
        for position, char in enumerate(text):
            if char in _BIDI_CONTROLS or unicodedata.category(char) in _UNPRINTABLE_CATEGORIES:
                raise _refuse(label, field, text, allowed, f"character {position} is {describe(char)}")
    return text


# -- device buffers' read and write ------------------------------------------------------------------------------------
#
# `GpuBuffer` and `HostBuffer` (`Device.create_buffer`) take the same arguments through these helpers, with the same
# messages; every refusal is a BindingError (the buffers' entry points raise it for what does not fit, too).
#
# - dtype: a NumPy dtype of numbers (integer, floating or complex; not bool, str, object or structured), given as a
#   dtype, a type or a str NumPy reads as one. None reads bytes.
# - shape: an int (as NumPy takes it: `read(np.float32, 4)` is `(4,)`) or a list of ints, each non-negative or one
#   -1, which NumPy's reshape would infer: the buffer's size must then be an exact multiple of the other
#   dimensions' bytes. The array is the buffer's first bytes; None reads every whole element (the buffer's size
#   rounded down to the dtype's itemsize).
# - offset: an integer (operator.index: never bool or float), a multiple of 4 inside the buffer.
# - data: a buffer-protocol object (bytes, bytearray, memoryview, mmap, array.array) or a NumPy array of numbers;
#   its logical contents are copied in row-major order (`tobytes()`), so a strided view writes what it shows.

#: Dimensions of a shape that `read` takes at most (NumPy's limit).
MAX_READ_DIMENSIONS = 64
_DTYPE_KINDS = "iufc"
_DATA_ALLOWED = "bytes-like (bytes, bytearray, memoryview, mmap, array.array) or a NumPy array of numbers"


def _binding_error(message: str) -> Exception:
    from .errors import BindingError  # errors imports nothing of ours; kept local like the other late imports

    return BindingError(message)


def _buffer_index(label: str, field: str, value: object, allowed: str) -> int:
    """An integer argument of a buffer's read or write (operator.index; never bool or float)."""
    try:
        return _as_integer(label, field, value, allowed)
    except ValidationError as error:
        raise _binding_error(str(error)) from None


def to_buffer_dtype(label: str, value: object) -> np.dtype[Any]:
    """The dtype a buffer's `read` returns: a NumPy dtype of numbers."""
    if not isinstance(value, (str, type, np.dtype)):
        raise _binding_error(f"{label}: dtype {describe(value)} is not a NumPy dtype (it must be a NumPy dtype of "
                             f"numbers, or a str or type NumPy reads as one)")
    try:
        dtype = np.dtype(value)
    except Exception as error:  # NumPy raises TypeError or ValueError; a hostile type anything
        raise _binding_error(f"{label}: dtype {describe(value)} is not a NumPy dtype ({_error_name(error)})") from None
    if dtype.kind not in _DTYPE_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise _binding_error(f"{label}: dtype {_clip(str(dtype), _TEXT_LIMIT)} holds no numbers; it must be a NumPy "
                             f"dtype of integers, floats or complex numbers")
    return dtype


def to_read_layout(label: str, dtype: object, shape: object, size: int) -> tuple[np.dtype[Any], tuple[int, ...]] | None:
    """(dtype, shape) of the array a buffer of `size` bytes reads as, from `read(dtype, shape)`; None for its bytes
    (`read()`). A -1 is inferred; a shape that needs more bytes than the buffer holds is refused."""
    if dtype is None:
        if shape is not None:
            raise _binding_error(f"{label}: give a dtype with a shape")
        return None
    numpy_dtype = to_buffer_dtype(label, dtype)
    itemsize = numpy_dtype.itemsize
    if shape is None:
        return numpy_dtype, (size // itemsize,)
    allowed = "an integer or a list of integers (each non-negative, or one -1)"
    if getattr(type(shape), "__index__", None) is not None and not isinstance(shape, np.ndarray):
        items: list[Any] = [shape]
    else:
        try:
            items = to_sequence(label, "shape", shape, what=allowed, max_length=MAX_READ_DIMENSIONS)
        except ValidationError as error:
            raise _binding_error(str(error)) from None
    field = "shape" if len(items) == 1 and items[0] is shape else None
    dims = [_buffer_index(label, field or f"shape[{index}]", item, allowed) for index, item in enumerate(items)]
    for index, dim in enumerate(dims):
        if dim < -1 or (dim == -1 and dims.index(-1) != index):
            raise _binding_error(f"{label}: {field or f'shape[{index}]'} is {dim}; {label.split('.')[-1]} takes "
                                 f"non-negative sizes and at most one -1")
    if -1 in dims:
        others = math.prod(dim for dim in dims if dim != -1)
        step = others * itemsize
        if not step or size % step:
            raise _binding_error(f"{label}: shape {dims} of {numpy_dtype} cannot be inferred: the buffer's {size} "
                                 f"bytes are not a whole number of {step}-byte rows (-1 takes the whole buffer, as "
                                 f"NumPy's reshape does)")
        dims[dims.index(-1)] = size // step
    needed = math.prod(dims) * itemsize
    if needed > size:
        raise _binding_error(f"{label}: shape [{', '.join(map(_int_text, dims))}] of {numpy_dtype} needs "
                             f"{_int_text(needed)} bytes; the buffer holds {size}")
    return numpy_dtype, tuple(dims)


def to_write_bytes(label: str, data: object, offset: object, size: int) -> tuple[np.ndarray[Any, np.dtype[np.uint8]],
                                                                                  int]:
    """(the bytes of `data`, the offset) for a buffer's `write(data, offset)` into a buffer of `size` bytes: `data`
    bytes-like or an array of numbers (copied in row-major order where it is not contiguous), the offset a
    multiple of 4 at which they fit."""
    start = _buffer_index(label, "offset", offset, "an integer (a multiple of 4)")
    array: np.ndarray[Any, Any] | None = data if isinstance(data, np.ndarray) else None
    if array is None and not isinstance(data, (str, int, float, list, tuple)) and data is not None:
        try:
            array = np.asarray(memoryview(data))  # type: ignore[arg-type]
        except Exception:   # no buffer protocol, or a format NumPy does not read: refused below
            array = None
    if array is None or array.dtype.kind not in _DTYPE_KINDS + "b" or array.dtype.fields is not None:
        why = " (an array of Python objects has no bytes to copy)" if array is not None and array.dtype.hasobject \
            else ""
        raise _binding_error(f"{label}: data is {describe(data)}{why}; it must be {_DATA_ALLOWED}")
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    if start < 0 or start % 4 or start + raw.size > size:
        raise _binding_error(f"{label}: {raw.size} bytes at offset {_int_text(start)} do not fit a buffer of {size} "
                             f"bytes (the offset must be a multiple of 4)")
    return raw, start
