"""Opening the files a model run reads: regular files only.

A FIFO would block the reader until some other process writes to it (forever, for a FIFO in an untrusted archive),
a device can be endless (/dev/zero) or have side effects when opened, and a directory or a socket holds no data.
So a path is checked with `os.stat` before it is opened, opened without blocking (O_NONBLOCK: opening a FIFO then
returns at once) and checked again with `os.fstat` on the open descriptor: a path swapped for a FIFO or a device
between the check and the open is refused rather than read.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from .errors import ModelError

#: O_NONBLOCK: opening a FIFO does not wait for a writer; O_NOCTTY: a terminal device never becomes the process's
#: controlling terminal. Neither exists on Windows, where opening a named pipe by path is not possible this way.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of this st_mode is, in words ("a FIFO (named pipe)"); "a regular file" for one."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def open_regular_file(path: os.PathLike[str] | str, where: str, shown: str) -> tuple[BinaryIO, int]:
    """Opens `path` for reading if it is a regular file: (the binary stream, the file's size in bytes).

    Anything else raises ModelError at the JSON path `where`, naming the file as `shown`, before it is opened for
    reading; so do the errors of the operating system (a missing file, no permission).
    """
    try:
        _check_regular(os.stat(path).st_mode, where, shown)
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise ModelError(where, f"cannot read {shown}: {error.strerror or error}") from None
    except ValueError as error:   # a NUL character in the name
        raise ModelError(where, f"cannot read {shown}: {error}") from None
    try:
        after = os.fstat(descriptor)   # what was opened, should the path have been replaced since the check
        _check_regular(after.st_mode, where, shown)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb"), after.st_size
    except BaseException:
        os.close(descriptor)
        raise


def _check_regular(mode: int, where: str, shown: str) -> None:
    if not stat.S_ISREG(mode):
        raise ModelError(where, f"{shown} is {file_kind(mode)}, not a regular file; only regular files are read")
