"""The error of a model file: the JSON path of the value at fault, and what is wrong with it."""

from __future__ import annotations

from ..errors import DmlError


class ModelError(DmlError):
    """A model file breaks a rule; `path` is the JSON path of the value at fault (empty for the file itself)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class FollowOnError(ModelError):
    """A problem that follows from one already reported: a command naming a resource or dispatchable that was refused.
    `opendml validate` leaves it out; a run never meets one (it stops at the first problem)."""
