"""Every code block of README.md runs as it is written, so that an example can never rot.

README.md's fenced blocks are read in order and each is handled by its kind; a block of no known kind fails the test
(`test_every_block_is_tested`), so a new block cannot be left untested.

- ```python blocks run in order. The first block of "## Example" runs in a fresh namespace; every later block runs in
  a fresh copy of that block's names, which the README's later examples continue (`np`, `dml`, `device`, `desc`).
  PYTHON_CHECKS then holds each block's results against values worked out by hand (or NumPy's, for the Dask block's
  random data). The gpu block needs a WebGPU adapter (lavapipe here and in CI; where none exists it skips, as the
  gpu backend's tests do).
- Shell blocks: every `$ opendml ...` line runs through the installed `opendml` console script (the one beside this
  Python; `python -m opendml.cli` where there is none), in the repository's root, and must exit with status 0; the
  lines under a command, up to the next `$`, are its expected output, exactly. The set-up lines (`python3 -m venv
  .venv && .venv/bin/pip install ... && ...`) are checked for form rather than run, since CI has just run them
  (`.ci/run` creates a venv and installs the package with its `test` extra): the venv, the extra, and the final
  command, of which `.venv/bin/opendml ...` runs like the other commands (pytest, which is this run, does not).
- Error blocks (lines `opendml.ValidationError: ...`) must be what the calls in ERRORS print as a traceback's last
  line, word for word.
- NOT_CODE lists the blocks that are no code (the Layers diagram), by their first line.

The README's placeholders and sizes are replaced through SUBSTITUTIONS, a table of (block, text, replacement, count):
the text must occur `count` times in its block, so the test fails when the README's text no longer matches it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@dataclass(frozen=True)
class Block:
    line: int           # of the opening fence
    language: str
    section: str        # the "## " heading it is under
    text: str

    @property
    def first_line(self) -> str:
        return self.text.splitlines()[0] if self.text else ""


def blocks() -> list[Block]:
    """README.md's fenced blocks, in order."""
    found: list[Block] = []
    section = ""
    lines = README.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.startswith("```"):
            end = next(position for position in range(index + 1, len(lines)) if lines[position].startswith("```"))
            found.append(Block(index + 1, line[3:].strip(), section, "\n".join(lines[index + 1:end]) + "\n"))
            index = end
        index += 1
    return found


def kind(block: Block) -> str:
    if block.language == "python":
        return "python"
    if block.language:
        return f"unknown language {block.language!r}"
    first = block.first_line
    if first.startswith("$ ") or first.startswith("python3 -m venv "):
        return "shell"
    if re.match(r"opendml\.\w+Error: ", first):
        return "errors"
    if first in NOT_CODE:
        return "not code"
    return "unknown"


#: Blocks that hold no code, by their first line.
NOT_CODE = {"cli.py, model/     the command line and DxDispatch's JSON models: resources, dispatchables, commands"}


def first_adapter() -> str:
    adapters = dml.list_adapters()
    return adapters[0].name if adapters else "NO-ADAPTER"


#: (a line of the block, the README's text, what the test runs instead, how many times the text occurs in the block).
SUBSTITUTIONS: list[tuple[str, str, str | Callable[[], str], int]] = [
    # The command line's placeholders: a model of examples/, and an adapter this machine has (lavapipe: llvmpipe).
    ("$ opendml validate MODEL.json", "MODEL.json", "examples/models/dml_reduce.json", 3),
    ("$ opendml dispatch -a NVIDIA MODEL.json", "-a NVIDIA", lambda: f"-a {shlex.quote(first_adapter())}", 1),
    # The Dask block: 32 GiB becomes [128, 16] FLOAT32 in 4 chunks along the ARGMAX axis (so the chunks' partials
    # combine); Dask's local threaded scheduler instead of a distributed Client (no processes to start on CI).
    ("client = Client()", "[2**21, 4096]", "[2**7, 16]", 1),
    ("client = Client()", "(2**21, 4096)", "(2**7, 16)", 1),
    ("client = Client()", "chunks=(2**14, 4096)", "chunks=(2**5, 16)", 1),
    ("client = Client()", "client = Client()", "client = None", 1),
]


def substituted(block: Block) -> str:
    text = block.text
    for marker, old, new, count in SUBSTITUTIONS:
        if marker in block.text:
            assert block.text.count(old) == count, (f"README.md line {block.line}: the test replaces {old!r} "
                                                     f"{count} time(s); the block now has it "
                                                     f"{block.text.count(old)} time(s): update SUBSTITUTIONS")
            text = text.replace(old, new if isinstance(new, str) else new())
    return text


def test_every_substitution_matches_the_readme() -> None:
    texts = [block.text for block in blocks()]
    for marker, old, _, count in SUBSTITUTIONS:
        holders = [text for text in texts if marker in text]
        assert len(holders) == 1, f"{marker!r} is in {len(holders)} README blocks; SUBSTITUTIONS expects one"
        assert holders[0].count(old) == count, f"README's {old!r} has changed: update SUBSTITUTIONS"


def test_every_block_is_tested() -> None:
    kinds = {block.line: kind(block) for block in blocks()}
    assert all(value in ("python", "shell", "errors", "not code") for value in kinds.values()), kinds
    assert sorted(set(kinds.values())) == ["errors", "not code", "python", "shell"]


# -- Python -----------------------------------------------------------------------------------------------------------

def _f32(buffer: bytearray | bytes, start: int) -> list[float]:
    return np.frombuffer(bytes(buffer[start:]), np.float32).tolist()


def _check_example(names: dict[str, Any], printed: str) -> None:
    assert names["out"].tolist() == [[6, 6, 9]]                      # the README's own comment
    assert _f32(names["out_buffer"], 256) == [3, 3, 3]               # ones summed over 3 rows
    assert bytes(names["out_buffer"][:256]) == bytes(256)            # nothing written before the offset


def _check_graph(names: dict[str, Any], printed: str) -> None:
    # arange(9) as 3x3: columns {0,3,6}, {1,4,7}, {2,5,8}
    assert names["total_out"].tolist() == [[9, 12, 15]]
    assert names["left"].tolist() == [[0], [3], [6]]
    assert names["right"].tolist() == [[1, 2], [4, 5], [7, 8]]
    # 2x - x^T = [[0, 2-3, 4-6], [6-1, 8-4, 10-7], [12-2, 14-5, 16-8]], clipped to [-4, 4]
    assert names["clipped_out"].tolist() == [[0, -1, -2], [4, 4, 3], [4, 4, 4]]


def _check_gpu(names: dict[str, Any], printed: str) -> None:
    lines = printed.splitlines()
    assert len(lines) == 2 and lines[0].startswith("[") and lines[1] == "[3. 3. 3.]"
    assert names["out"].tolist() == [[3, 3, 3]]


def _check_dask(names: dict[str, Any], printed: str) -> None:
    data = names["data"].compute()
    expected = np.argmax(data, axis=0).reshape(1, -1)               # NumPy's: the first maximum of each column
    assert names["where"].compute().tolist() == expected.tolist()
    assert printed == f"{expected.astype(np.uint32)}\n"
    mean = data.astype(np.float64).mean(axis=1, keepdims=True)
    variance = data.astype(np.float64).var(axis=1, keepdims=True)
    np.testing.assert_allclose(names["normalized"].compute(), (data - mean) / np.sqrt(variance + 1e-5), rtol=1e-5,
                               atol=1e-5)


def _check_dask_element_wise(names: dict[str, Any], printed: str) -> None:
    # x[i, j] = 6i + j times row[j] = j, plus 1; above[i, j] = x[j, i] > 10, i.e. 6j + i > 10
    assert names["scaled"].compute().tolist() == [[(6 * i + j) * j + 1 for j in range(6)] for i in range(4)]
    assert names["above"].compute().tolist() == [[int(6 * j + i > 10) for j in range(4)] for i in range(6)]
    assert printed == "((2, 2), (3, 3)) ((3, 3), (2, 2)) uint8\n[[0 0 1 1]\n [0 1 1 1]]\n"


#: (a line of the block, its check, whether it needs the gpu backend).
PYTHON_CHECKS: list[tuple[str, Callable[[dict[str, Any], str], None], bool]] = [
    ("out_buffer = bytearray(256 + 12)", _check_example, False),
    ("parts = dml.split(x, axis=1, sizes=[1, 2])", _check_graph, False),
    ('gpu = dml.Device(backend="gpu")', _check_gpu, True),
    ("import dask.array as da", _check_dask, False),
    ("import dask.array\n", _check_dask_element_wise, False),
]


def python_blocks() -> list[Block]:
    return [block for block in blocks() if kind(block) == "python"]


def run_block(block: Block, names: dict[str, Any]) -> None:
    """Runs the block's (substituted) code in `names`, then its check on the names and on what it printed."""
    checks = [check for marker, check, _ in PYTHON_CHECKS if marker in block.text]
    assert len(checks) == 1, f"README.md line {block.line}: a Python block without a check in PYTHON_CHECKS"
    code = compile(substituted(block), f"README.md:{block.line + 1}", "exec")
    printed = io.StringIO()
    with _scheduler(block):
        with contextlib.redirect_stdout(printed):
            exec(code, names)
        checks[0](names, printed.getvalue())


def _scheduler(block: Block) -> contextlib.AbstractContextManager[object]:
    """Dask's local threaded scheduler for the Dask block (SUBSTITUTIONS takes its Client away)."""
    if "import dask.array" not in block.text:
        return contextlib.nullcontext()
    import dask

    return dask.config.set(scheduler="threads")  # type: ignore[no-any-return]


def test_the_python_blocks_are_known() -> None:
    found = python_blocks()
    assert found[0].section == "Example", "the first Python block must be the Example, which the others continue"
    for marker, _, _ in PYTHON_CHECKS:
        assert sum(marker in block.text for block in found) == 1, f"no single README Python block has {marker!r}"


@pytest.mark.parametrize("index", range(len(PYTHON_CHECKS)), ids=[check.__name__[7:] for _, check, _ in PYTHON_CHECKS])
def test_python_block(index: int) -> None:
    marker, _, needs_gpu = PYTHON_CHECKS[index]
    if needs_gpu and (reason := gpu_adapter_missing()) is not None:
        pytest.skip(f"gpu backend: {reason}")
    found = python_blocks()
    example: dict[str, Any] = {}
    run_block(found[0], example)                        # the names the later blocks continue from
    block = next(block for block in found if marker in block.text)
    if block is not found[0]:
        run_block(block, dict(example))


# -- errors -----------------------------------------------------------------------------------------------------------

def _shape_error() -> None:
    T = dml.TensorDesc
    dml.Device(feature_level="6_4").create_operator(dml.ReduceOperatorDesc(
        "SUM", T("FLOAT32", [3, 3]), T("FLOAT32", [3, 3]), [0]))


def _level_error() -> None:
    T = dml.TensorDesc
    dml.Device(feature_level="4_1").create_operator(dml.ReduceOperatorDesc(
        "SUM", T("INT64", [3, 3]), T("INT64", [1, 3]), [0]))


#: The README's error lines, and the calls that raise them.
ERRORS: dict[str, Callable[[], None]] = {
    "opendml.ValidationError: DML_OPERATOR_REDUCE (Function SUM): OutputTensor.Sizes": _shape_error,
    "opendml.UnsupportedError: DML_OPERATOR_REDUCE (Function SUM): InputTensor.DataType INT64": _level_error,
}


def test_the_error_blocks_are_what_a_traceback_prints() -> None:
    lines = [line for block in blocks() if kind(block) == "errors" for line in block.text.splitlines()]
    assert len(lines) == len(ERRORS)
    for line in lines:
        calls = [call for start, call in ERRORS.items() if line.startswith(start)]
        assert len(calls) == 1, f"no call in ERRORS for README's {line!r}"
        with pytest.raises(dml.DmlError) as raised:
            calls[0]()
        assert traceback.format_exception_only(raised.value)[-1].rstrip("\n") == line


# -- shell ------------------------------------------------------------------------------------------------------------

SETUP = re.compile(r"python3 -m venv (?P<venv>\S+) && (?P=venv)/bin/pip install -e "
                   r"(?P<target>\.|\"\.\[(?P<extra>\w+)\]\") && (?P<command>.+)")


@dataclass(frozen=True)
class Command:
    line: int
    arguments: list[str]            # after `opendml`
    expected: list[str] | None      # the output lines under it, if any


def commands() -> list[Command]:
    """Every `$ opendml ...` command of the shell blocks (substituted) and the set-up lines' final opendml command."""
    found: list[Command] = []
    for block in blocks():
        if kind(block) != "shell":
            continue
        lines = substituted(block).splitlines()
        for offset, line in enumerate(lines):
            if line.startswith("python3 -m venv "):
                match = SETUP.fullmatch(line)
                assert match is not None, f"README.md line {block.line + 1 + offset}: not a set-up line: {line!r}"
                words = shlex.split(match["command"])
                if words[0] == f"{match['venv']}/bin/opendml":
                    found.append(Command(block.line + 1 + offset, words[1:], None))
            elif line.startswith("$ "):
                words = shlex.split(line[2:], comments=True)
                assert words[0] == "opendml", f"README.md line {block.line + 1 + offset}: a command other than opendml"
                output = list(itertools.takewhile(lambda text: not text.startswith("$ "), lines[offset + 1:]))
                found.append(Command(block.line + 1 + offset, words[1:], output or None))
    return found


def test_the_setup_lines() -> None:
    """Checked for form (CI ran them): a venv that .gitignore ignores, an extra that pyproject.toml defines, and a
    final command that is the venv's opendml (run by test_command) or its pytest."""
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
    pyproject = (ROOT / "pyproject.toml").read_text()
    setups = [line for block in blocks() if kind(block) == "shell" for line in block.text.splitlines()
              if line.startswith("python3 -m venv ")]
    assert len(setups) == 2
    for line in setups:
        match = SETUP.fullmatch(line)
        assert match is not None, line
        assert match["venv"].strip("/") in ignored, f".gitignore does not list the README's venv {match['venv']}"
        if match["extra"]:
            assert re.search(rf"^{match['extra']} = \[", pyproject, re.M), f"no extra {match['extra']!r}"
        assert match["command"] in (f"{match['venv']}/bin/opendml dispatch examples/models/dml_reduce.json",
                                    f"{match['venv']}/bin/python -m pytest"), match["command"]


def opendml_command() -> list[str]:
    script = Path(sys.executable).with_name("opendml")
    return [str(script)] if script.exists() else [sys.executable, "-m", "opendml.cli"]


COMMANDS = commands()


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(command.arguments) for command in COMMANDS])
def test_command(command: Command) -> None:
    uses_gpu = ("--backend" in command.arguments and "gpu" in command.arguments) or any(
        argument in ("-a", "--adapter", "-s", "--show_adapters", "--show-adapters") for argument in command.arguments)
    if uses_gpu and (reason := gpu_adapter_missing()) is not None:
        pytest.skip(f"gpu backend: {reason}")
    result = subprocess.run([*opendml_command(), *command.arguments], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"README.md line {command.line}: {result.stderr}"
    expected = command.expected
    if expected is None and command.arguments[:1] == ["dispatch"] and "examples/models/dml_reduce.json" in \
            command.arguments and "-i" not in command.arguments:
        expected = next(other.expected for other in COMMANDS if other.expected is not None)   # "the same output"
    if expected is not None:
        assert result.stdout.splitlines() == expected
    else:
        assert result.stdout.strip(), f"README.md line {command.line}: printed nothing"
