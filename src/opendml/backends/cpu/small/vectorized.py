"""numba's activation formulas run by NumPy over whole arrays, from the same source (the cold start's large tensors).

`vectorized(module, overrides)` is `interpreted`'s counterpart (small/interpreted.py): a namespace of `module`'s
globals in which every numba-compiled function is recompiled from its own source, rewritten so that it computes on
NumPy arrays instead of scalars: a conditional expression `a if c else b` becomes `np.where(c, a, b)` (both sides
computed; the formulas have no side effects), `and`/`or`/`not` the element-wise logical functions, `math.copysign`
NumPy's, and a loop `for i in range(lo, hi)` runs once with `i` standing for the whole range (a `Span`, which the
loads and stores in `overrides` index with). The formulas stay written once, for numba; the arithmetic is the same
FLOAT32 operations in the same order (numba may contract a multiply-add into one rounding: results then differ in
the last place, as the interpreted kernels' do).
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import sys
import textwrap
import types
from typing import Any

import numpy as np
from numba.core.dispatcher import Dispatcher


class Span:
    """The range [lo, hi) of a vectorized loop, shifted by `+` (an output offset)."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi

    def __radd__(self, shift: int) -> Span:
        return Span(self.lo + shift, self.hi + shift)

    __add__ = __radd__

    @property
    def slice(self) -> slice:
        return slice(self.lo, self.hi)


def _range(lo: int, hi: int | None = None) -> list[Span]:
    return [Span(0, lo) if hi is None else Span(lo, hi)]


def _logical(function: Any) -> Any:
    def combine(*values: Any) -> Any:
        return functools.reduce(function, values)
    return combine


class _Rewrite(ast.NodeTransformer):
    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        return ast.Call(ast.Name("_vector_where", ast.Load()), [node.test, node.body, node.orelse], [])

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "_vector_and" if isinstance(node.op, ast.And) else "_vector_or"
        return ast.Call(ast.Name(name, ast.Load()), node.values, [])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name("_vector_not", ast.Load()), [node.operand], [])
        return node


def _rewritten(function: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    definition.decorator_list = []
    tree = ast.fix_missing_locations(_Rewrite().visit(tree))
    scope: dict[str, Any] = {}
    exec(compile(tree, inspect.getsourcefile(function) or "<formula>", "exec"), namespace, scope)
    rewritten: types.FunctionType = scope[function.__name__]
    return rewritten


@functools.cache
def vectorized(module: types.ModuleType, overrides: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    namespace = dict(vars(module))
    namespace.update(
        _vector_where=np.where, _vector_and=_logical(np.logical_and), _vector_or=_logical(np.logical_or),
        _vector_not=np.logical_not, range=_range,
        math=types.SimpleNamespace(**{**vars(math), "copysign": np.copysign}))
    for name, value in vars(module).items():
        if isinstance(value, Dispatcher):
            function = value.py_func
            if function.__module__ != module.__name__:  # imported: rewritten in its own module's globals
                namespace[name] = vectorized(sys.modules[function.__module__], overrides)[function.__name__]
            else:
                namespace[name] = _rewritten(function, namespace)
    namespace.update(overrides)
    return namespace
