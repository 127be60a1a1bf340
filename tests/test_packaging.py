"""The package as pip installs it: a wheel built from the sources holds every file opendml reads at run time (the
GPU backend's WGSL shaders, py.typed), not only its modules. Editable installs (CI's, the README's) read them from
the source tree and would not notice."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "opendml"


def test_a_built_wheel_holds_every_file_of_the_package(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(PACKAGE, source / "src" / "opendml",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path),
                    str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("opendml-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    wanted = {path.relative_to(PACKAGE.parent).as_posix() for path in PACKAGE.rglob("*")
              if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".nbi", ".nbc")}
    assert any(name.endswith(".wgsl") for name in wanted)
    assert sorted(wanted - packed) == []
