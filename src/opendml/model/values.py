"""JSON values converted exactly for the field that receives them, or refused with the field's JSON path.

The rulings (DxDispatch's, where it has one):
- An integer field takes a JSON integer in its type's range, never a float literal (2.0), a boolean or a string,
  as DxDispatch's parsers (rapidjson's IsUint64/IsInt64) do.
- A float field takes any JSON number, and the strings "nan", "inf" and "-inf" (any case). The number is rounded to
  the nearest value of the field's type, as DxDispatch's float parsing does (through a double); a finite number
  beyond the type's range is refused instead of becoming an infinity (write "inf" for one).
- A resource's initial values are converted for the resource's data type by the same rules, element by element.
  A sequence {"valueCount", "valueStart", "valueDelta"} holds valueStart + i * valueDelta for i < valueCount: in
  integer types exactly, every element in the type's range (so a descending UINT8 sequence 10, 9, ..., 6 is fine,
  and one that would pass 0 is refused); in float types computed in float64 and rounded once to the type.
Messages show the value received through `convert.describe`, bounded whatever its size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..convert import UINT32_MAX, describe, range_text
from ..types import DataType
from .document import child_path
from .errors import ModelError

_SPECIAL_FLOATS = {"nan": float("nan"), "inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf")}
_FLOAT_WORDS = 'a number, "nan", "inf" or "-inf"'


def json_integer(value: Any, path: str, low: int, high: int, type_name: str = "") -> int:
    """An integer field: a JSON integer in [low, high] (`type_name`, e.g. UINT8, names the type in messages)."""
    if type(value) is not int or not low <= value <= high:
        of_type = f" ({type_name})" if type_name else ""
        raise ModelError(path, f"{describe(value)}; it must be an integer in {range_text(low, high)}{of_type}")
    return value


def json_uint(value: Any, path: str, limit: int = UINT32_MAX) -> int:
    """A UINT field (UINT64 with limit 2^64 - 1): a JSON integer in [0, limit]."""
    return json_integer(value, path, 0, limit)


def json_real(value: Any, path: str, type_name: str = "FLOAT") -> float:
    """A float field's value as the nearest float64: a JSON number or "nan", "inf", "-inf" (any case, as DxDispatch
    reads them). The range of the field's own type is checked by whoever narrows it (`float_values`, descriptors)."""
    if type(value) is float:
        return value
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            raise ModelError(path, f"{describe(value)}; it must be a {type_name}: a number within its range, "
                                   f'"inf" or "-inf"') from None
    if isinstance(value, str):
        special = _SPECIAL_FLOATS.get(value.strip().lower())
        if special is not None:
            return special
    raise ModelError(path, f"{describe(value)}; it must be {_FLOAT_WORDS} ({type_name})")


def json_bool(value: Any, path: str) -> bool:
    """A BOOL field: JSON true or false (DxDispatch takes no 0 or 1)."""
    if type(value) is not bool:
        raise ModelError(path, f"{describe(value)}; it must be true or false")
    return value


# -- a resource's initial values -------------------------------------------------------------------------------------


def list_values(path: str, items: list[Any], data_type: DataType) -> np.ndarray[Any, Any]:
    """A list initializer ([1, 2.5, "nan"]) as an array of the data type; the first bad item is refused at its path."""
    return _elements(items, data_type, lambda index: child_path(path, index))


def constant_values(path: str, value: Any, count: int, data_type: DataType) -> np.ndarray[Any, Any]:
    """{"valueCount": count, "value": value} (`path`: the value's): `count` copies of the value."""
    return _elements([value], data_type, lambda index: path).repeat(count)


def _elements(items: list[Any], data_type: DataType, where: Callable[[int], str]) -> np.ndarray[Any, Any]:
    """JSON values as elements of the data type; item i is refused at the JSON path where(i)."""
    if data_type.is_float:
        reals = [json_real(item, where(index), data_type.name) for index, item in enumerate(items)]
        return float_values(np.array(reals, np.float64), data_type,
                            lambda index: (where(index), describe(reals[index])))
    low, high = _integer_range(data_type)
    for index, item in enumerate(items):
        json_integer(item, where(index), low, high, data_type.name)
    return np.array(items, dtype=data_type.numpy_dtype)


def sequence_values(path: str, start: Any, delta: Any, count: int, data_type: DataType) -> np.ndarray[Any, Any]:
    """{"valueCount": count, "valueStart": start, "valueDelta": delta}: start + i * delta for i < count."""
    if data_type.is_float:
        first = json_real(start, f"{path}.valueStart", data_type.name)
        step = json_real(delta, f"{path}.valueDelta", data_type.name)
        with np.errstate(over="ignore", invalid="ignore"):
            reals = first + np.arange(count, dtype=np.float64) * step
            if not (np.isfinite(first) and np.isfinite(step)):   # infinities or NaN asked for: no range to check
                return reals.astype(data_type.numpy_dtype)
        return float_values(reals, data_type, lambda index: (
            path, f"element {index} of the sequence, {first!r} + {index} * {step!r},"), infinities_asked=False)
    low, high = _integer_range(data_type)
    json_integer(start, f"{path}.valueStart", low, high, data_type.name)
    json_integer(delta, f"{path}.valueDelta", low - high, high - low, f"a step between two {data_type.name} values")
    bad = _first_outside(start, delta, count, low, high)
    if bad is not None:
        raise ModelError(path, f"element {bad} of the sequence is {start + bad * delta}; it must be an integer in "
                         f"{range_text(low, high)} ({data_type.name}) (valueStart {start}, valueDelta {delta}, "
                         f"valueCount {count})")
    # Computed modulo 2^64: every element fits the type, so its low bits are the element itself.
    steps = np.arange(count, dtype=np.uint64) * np.uint64(delta % 2**64) + np.uint64(start % 2**64)
    return steps.astype(data_type.numpy_dtype)


def _first_outside(start: int, delta: int, count: int, low: int, high: int) -> int | None:
    """The index of the first element of start + i * delta (i < count) outside [low, high] (start is inside)."""
    if delta == 0:
        return None
    first = (high - start) // delta + 1 if delta > 0 else (start - low) // -delta + 1
    return first if first < count else None


def float_values(reals: np.ndarray[Any, Any], data_type: DataType, element: Callable[[int], tuple[str, str]],
                 infinities_asked: bool = True) -> np.ndarray[Any, Any]:
    """float64 values rounded to the nearest value of a float data type. A value that is infinite there is refused
    (element(index): its JSON path and how to show it), unless it is an infinity the JSON asked for
    (`infinities_asked`: the float64 value is one)."""
    with np.errstate(over="ignore"):
        narrowed = reals.astype(data_type.numpy_dtype)
    beyond = np.isinf(narrowed) & ~np.isinf(reals) if infinities_asked else np.isinf(narrowed)
    if beyond.any():
        path, shown = element(int(np.argmax(beyond)))
        largest = float(np.finfo(data_type.numpy_dtype).max)
        raise ModelError(path, f"{shown} is beyond {data_type.name}'s range; it must be a number of magnitude at most "
                         f'{largest:.8g}, "nan", "inf" or "-inf"')
    return narrowed


def _integer_range(data_type: DataType) -> tuple[int, int]:
    info = np.iinfo(data_type.numpy_dtype)
    return int(info.min), int(info.max)
