"""The package's import structure (issue 26): `convert` and `types`, and `graph` and `dask_graph`, are layers, not
circles. Every import statement of every module counts, wherever it stands: at the top, under `if TYPE_CHECKING:`,
or inside a function (a late import is a circle all the same, only hidden). The imports are read from the sources
with `ast`, not by importing them, so a circle is found even where it would import without failing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "opendml"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(module: str, tree: ast.AST) -> Iterator[str]:
    """The opendml modules `module` names in any import statement of its tree (`from .x import y` names
    opendml.x.y where that is a module, else opendml.x)."""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                name = f"{base}.{alias.name}"
                if name in MODULES:
                    yield name
                elif base in MODULES:
                    yield base


IMPORTS = {module: set(_imported(module, ast.parse(path.read_text(encoding="utf-8")))) for module, path in
           MODULES.items()}


def _reaches(start: str, target: str) -> list[str] | None:
    """A chain of imports from `start` to `target` (depth first), or None."""
    chain = [start]
    seen = {start}

    def walk(module: str) -> bool:
        for name in sorted(IMPORTS[module]):
            if name == target:
                chain.append(name)
                return True
            if name not in seen:
                seen.add(name)
                chain.append(name)
                if walk(name):
                    return True
                chain.pop()
        return False

    return chain if walk(start) else None


def test_the_reader_resolves_relative_imports() -> None:
    assert "opendml.errors" in IMPORTS["opendml.convert"]
    assert "opendml.types" in IMPORTS["opendml.model.reader"]       # from ..types import ...
    assert "opendml.ops.base" in IMPORTS["opendml.graph"]           # from .ops.base import ...
    assert "opendml.backends.gpu.context" in IMPORTS["opendml.graph"]  # an import inside a function


def test_the_reader_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .types import DataType\n"
              "def f():\n    from . import graph\n")
    assert set(_imported("opendml.convert", ast.parse(source))) == {"opendml.types", "opendml.graph"}


@pytest.mark.parametrize(("lower", "upper"), [("opendml.convert", "opendml.types"),
                                              ("opendml.dask_graph", "opendml.graph"),
                                              ("opendml.model.descs", "opendml.ops.base")])
def test_a_layer_never_imports_the_one_above_it(lower: str, upper: str) -> None:
    """`types` imports `convert` (its enums parse through convert's helpers), `graph` hands a Dask input over to
    `dask_graph`, and `OperatorDesc.from_dml` reads fields through model/descs.py (the JSON reader's path); the other
    way round, not even through a third module, lazily or for type hints."""
    assert _reaches(upper, lower) is not None
    assert _reaches(lower, upper) is None, f"import circle: {' -> '.join(_reaches(lower, upper) or [])}"
