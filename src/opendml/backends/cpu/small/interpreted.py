"""numba-compiled functions run by the Python interpreter instead, from the same source.

`interpreted(module, overrides)` returns a namespace: `module`'s globals, in which every numba-compiled function is
replaced by its Python function (`py_func`) bound to that namespace (so what it calls is interpreted too), and
`overrides` replace what numba alone can run (overload stubs, intrinsics). The activations' formulas are written
once, for numba; the small-tensor kernels run exactly that source over a few elements, compiling nothing.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

from numba.core.dispatcher import Dispatcher


@functools.cache
def interpreted(module: types.ModuleType, overrides: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    namespace = dict(vars(module))
    for name, value in vars(module).items():
        if isinstance(value, Dispatcher):
            function = value.py_func
            if function.__module__ != module.__name__:  # imported: interpreted in its own module's globals
                namespace[name] = interpreted(sys.modules[function.__module__], overrides)[function.__name__]
                continue
            namespace[name] = types.FunctionType(function.__code__, namespace, function.__name__,
                                                 function.__defaults__, function.__closure__)
    namespace.update(overrides)
    return namespace
