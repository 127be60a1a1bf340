"""Reading a model file's JSON text into Python values, with every number either exact or refused at its JSON path.

Python's json turns a float literal into the nearest double, so 1e400 silently becomes infinity, and refuses an
integer literal of more than 4300 digits with a ValueError (sys.get_int_max_str_digits). No DML type holds numbers
that large (float64's largest finite value has 309 digits), so such a literal becomes a HugeNumber here, and the
whole document is then walked once (without recursion) to refuse the first one at its JSON path, before any field
is read. The same walk refuses nesting deeper than MAX_DEPTH, so that nothing that reads the document later (the
reader, messages describing a value) can run out of stack; json's own RecursionError on deeper text (about 1000
levels) is refused as well. What remains are ints of at most MAX_DIGITS digits, finite floats (and the NaN and
Infinity constants Python's json writes), strings, booleans, None, lists and dicts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .errors import ModelError
from .files import open_regular_file

#: Digits of an integer literal read as an int; more than any DML type holds (UINT64: 20 digits, float64: 309).
MAX_DIGITS = 310
#: Levels of nesting a model may have: a DxDispatch model needs about ten (dispatchables.x.desc.FusedActivation.Desc.
#: InputTensor.Desc.Sizes[0]).
MAX_DEPTH = 64


class HugeNumber:
    """A JSON number beyond every DML type's range: a float literal beyond float64's (1e400), or an integer of more
    than MAX_DIGITS digits. Only its text is kept (converting a long integer literal costs time quadratic in its
    length)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        if len(self.text) <= 24:
            return self.text
        digits = sum(char.isdigit() for char in self.text)
        return f"{self.text[:10]}...{self.text[-6:]} ({digits} digits)"


def _integer(text: str) -> int | HugeNumber:
    return int(text) if len(text) <= MAX_DIGITS + 1 else HugeNumber(text)   # + 1: a minus sign


def _float(text: str) -> float | HugeNumber:
    number = float(text)
    return number if math.isfinite(number) else HugeNumber(text)


def parse_json(text: str, shown: str) -> Any:
    """`text` as JSON (a file shown as `shown` in messages), checked by `check_document`."""
    try:
        document = json.loads(text, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as error:
        raise ModelError("", f"{shown} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
                         ) from None
    except RecursionError:
        raise ModelError("", f"{shown} nests too deeply (a model may nest at most {MAX_DEPTH} levels)") from None
    check_document(document, shown)
    return document


def load_json(path: Path) -> Any:
    """The JSON document in the regular file `path` (see `parse_json`)."""
    shown = str(path)
    stream, _ = open_regular_file(path, "", shown)
    try:
        with stream:
            data = stream.read()
    except OSError as error:
        raise ModelError("", f"cannot read {shown}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError("", f"{shown} is not UTF-8 text") from None
    return parse_json(text, shown)


def check_document(document: Any, shown: str) -> None:
    """Refuses nesting deeper than MAX_DEPTH and the first HugeNumber, at its JSON path."""
    pending: list[tuple[Any, str, int]] = [(document, "", 0)]
    while pending:
        node, path, depth = pending.pop()
        if depth > MAX_DEPTH:
            where = path if len(path) <= 300 else f"{path[:200]}...{path[-80:]}"
            raise ModelError(where, f"nests more than {MAX_DEPTH} levels deep in {shown}; a model needs far fewer")
        items = enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict) else ()
        for key, value in items:
            if isinstance(value, (list, dict)):
                pending.append((value, child_path(path, key), depth + 1))
            elif isinstance(value, HugeNumber):
                raise ModelError(child_path(path, key), f"{value!r} is beyond the range of every DML data type "
                                 "(float64 holds magnitudes up to 1.8e308)")
    if isinstance(document, HugeNumber):
        raise ModelError("", f"{shown} holds only {document!r}, a number beyond every DML data type's range")


#: Characters of a key shown in a JSON path; longer keys are cut (the path still says where).
KEY_LIMIT = 80


def child_path(path: str, key: str | int) -> str:
    """The JSON path of `key` in the value at `path`: `resources.x`, `Sizes[2]`; long keys are cut short."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    shown = key if len(key) <= KEY_LIMIT else f"{key[:KEY_LIMIT - 20]}...{key[-8:]} ({len(key)} characters)"
    return f"{path}.{shown}" if path else shown
