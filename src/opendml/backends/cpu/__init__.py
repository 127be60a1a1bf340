"""The CPU backend: NumPy and numba kernels, one module per operator."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import UnsupportedError
from ...ops.base import OperatorDesc
from ...types import DataType, ExecutionFlags
from .. import Kernel
from . import reduce

_COMPILERS: dict[type[OperatorDesc], Callable[[OperatorDesc, ExecutionFlags], Kernel]] = {
    reduce.DESC_TYPE: reduce.compile_kernel,
}


class CpuBackend:
    name = "cpu"

    def supports_data_type(self, data_type: DataType) -> bool:
        # Every DML type with a NumPy dtype (DECISIONS 7); the packed 4-bit types are not used by these operators.
        return data_type not in (DataType.UNKNOWN, DataType.UINT4, DataType.INT4)

    def compile(self, desc: OperatorDesc, flags: ExecutionFlags) -> Kernel:
        compiler = _COMPILERS.get(type(desc))
        if compiler is None:
            raise UnsupportedError(f"{desc.label} is not implemented by the cpu backend")
        return compiler(desc, flags)
