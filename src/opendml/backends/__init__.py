"""Backends run validated operators. Each one answers two questions: which data types it supports, and how to
turn a descriptor into a kernel. A kernel reads and writes flat, typed views of the bound buffers
(element 0 = the binding's offset), addressing elements through the descriptor's element strides. With
debug=True a backend returns a kernel with DML's debug-layer checks of the data (e.g. GATHER_ND1's indices),
which raises before writing anything."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import UnsupportedError
from ..ops.base import OperatorDesc
from ..types import DataType, ExecutionFlags

FlatArray = np.ndarray[Any, np.dtype[Any]]
#: kernel(inputs, outputs): one flat typed view per tensor slot (None for an absent optional input).
Kernel = Callable[[Sequence[FlatArray | None], Sequence[FlatArray]], None]


class Backend(Protocol):
    name: str

    def supports_data_type(self, data_type: DataType) -> bool: ...

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags, debug: bool) -> Kernel: ...


def get_backend(name: str) -> Backend:
    from .cpu import CpuBackend  # imported here so that backends load only when asked for

    backends: dict[str, Callable[[], Backend]] = {"cpu": CpuBackend}
    if name not in backends:
        raise UnsupportedError(f"Device: backend {name!r} is not available; available: {', '.join(backends)}")
    return backends[name]()
