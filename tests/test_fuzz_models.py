"""Model fuzzing: the command line against mutated DxDispatch models.

The example models (examples/models/*.json) are mutated: values of the wrong type, missing and extra keys, huge
counts and sizes (10 GB sizeInBytes, 2^32 valueCount), deep nesting, sourcePath naming `../../etc/passwd`, absolute
paths, a symbolic link out of the folder, a FIFO and a socket named like data files (a FIFO opened for reading
would hang the run: an alarm fails it instead), a pickled .npy, a .npy whose header declares 40 GB, writeFile targets
outside the output folder, names holding newlines. Whatever the model, `opendml dispatch` (and `validate`):

- exits 0, or exits 2 with exactly one line on stderr (`error: ...`; validate: one per problem, the first being
  the line dispatch exits with); never a traceback (an exception escaping `opendml.cli.main` fails the test);
- opens no file outside the model's folder (an audit hook watches every `open`), and writes nothing outside the
  output folder;
- allocates at most a small multiple of --max-memory (tracemalloc watches NumPy's allocations too);
- runs the unmutated examples correctly.

Most runs call `opendml.cli.main([...])` in-process, for speed; a few run `python -m opendml.cli` as a user would.
writeFile's temporary-file-and-rename is checked against an exception in the middle of a write and against SIGKILL.

Examples: MODEL_EXAMPLES (OPENDML_MODEL_EXAMPLES; 2,000 with HYPOTHESIS_PROFILE=slow, 120 otherwise).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from test_cli import EVERY_EXPECTED, deadline

from opendml.cli import main
from opendml.model.reader import default_max_memory
from opendml.model.runner import write_atomically

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"
MODELS = {path.name: json.loads(path.read_text()) for path in sorted(EXAMPLES.glob("*.json"))}

SLOW = os.environ.get("HYPOTHESIS_PROFILE") == "slow"
MODEL_EXAMPLES = int(os.environ.get("OPENDML_MODEL_EXAMPLES", 2_000 if SLOW else 120))
MAX_MEMORY = 16 << 20
#: JSON parsing, the values of a list initializer and the kernels' plans come on top of the resources.
ALLOCATION_SLACK = 3 * MAX_MEMORY + (16 << 20)

# ---------------------------------------------------------------------------------------------------------------------
# Watching file access: an audit hook records every path opened while a run is watched
# ---------------------------------------------------------------------------------------------------------------------

_opened: list[str] | None = None


def _audit(event: str, arguments: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(arguments[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(arguments[0]))


sys.addaudithook(_audit)


@contextlib.contextmanager
def watching_opens() -> Iterator[list[str]]:
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


# ---------------------------------------------------------------------------------------------------------------------
# The folder a fuzzed model lives in
# ---------------------------------------------------------------------------------------------------------------------


def make_sandbox(root: Path) -> dict[str, Path]:
    """root/model (the model and its files), root/out (--output-path), root/secret (must never be read)."""
    model, out, secret = root / "model", root / "out", root / "secret"
    for folder in (model, out, secret):
        folder.mkdir()
    np.save(secret / "passwd.npy", np.arange(9, dtype=np.float32))
    (secret / "passwd.bin").write_bytes(b"\0" * 36)
    for data in (*EXAMPLES.glob("*.npy"), *EXAMPLES.glob("*.dat")):   # the files the examples read
        (model / data.name).write_bytes(data.read_bytes())
    np.save(model / "data.npy", np.arange(9, dtype=np.float32))
    np.arange(9, dtype=np.float32).tofile(model / "data.bin")
    np.save(model / "pickled.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with open(model / "huge_header.npy", "wb") as stream:  # declares 10^10 FLOAT32, holds 64 bytes
        np.lib.format.write_array_header_1_0(stream, {"descr": "<f4", "fortran_order": False, "shape": (10**10,)})
        stream.write(b"\0" * 64)
    np.save(model / "big_endian.npy", np.arange(9, dtype=">f4"))
    np.save(model / "fortran.npy", np.asfortranarray(np.ones((3, 3), np.float32)))
    np.save(model / "complex.npy", np.ones(9, np.complex64))
    (model / "empty.npy").write_bytes(b"")
    (model / "garbage.npy").write_bytes(b"\x93NUMPY\x01\x00{'descr': '<f4', 'fortran_order': False, 'shape': (")
    (model / "link.npy").symlink_to(secret / "passwd.npy")
    (model / "subdir.npy").mkdir()
    os.mkfifo(model / "fifo.npy")   # opening it for reading would block until a writer comes: never
    with socket.socket(socket.AF_UNIX) as server:   # the socket file stays when the socket is closed
        server.bind(str(model / "socket.npy"))
    return {"model": model, "out": out, "secret": secret}


SOURCE_PATHS = ("data.npy", "data.bin", "./data.npy", "pickled.npy", "huge_header.npy", "big_endian.npy",
                "fortran.npy", "complex.npy", "empty.npy", "garbage.npy", "link.npy", "subdir.npy", "missing.npy",
                "fifo.npy", "socket.npy",
                "data.txt", "../secret/passwd.npy", "../../etc/passwd", "../../../../../../etc/passwd.bin",
                "/etc/passwd", "/etc/passwd.npy", "SECRET_ABSOLUTE", "", ".", "..", "data.npy\x00.bin", "a" * 5000)
TARGET_PATHS = ("out.npy", "sub/dir/out.bin", "out.dat", "../escape.npy", "../../escape.bin", "/tmp/escape.npy",
                "SECRET_ABSOLUTE", "out.txt", "", ".npy", "sub/../out.npy", "con.bin")

# ---------------------------------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                         st.sampled_from((0, -1, 2**32, 2**64, 10 * 2**30, 1e400, -1e400)),
                         st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                         st.sampled_from(("FLOAT32", "UINT4", "INT4", "UNKNOWN", "deferred", "DML_OPERATOR_REDUCE",
                                          "SUM", "OWNED_BY_DML", "a\nb", "\x1b[31mred")))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=6)

HUGE_COUNTS = (2**31, 2**32 - 1, 2**32, 2**40, 10 * 2**30, 2**63, 2**64 - 1, 10**12)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(document, path[:-1])[path[-1]] = value
    return document


@st.composite
def mutated_model(draw: st.DrawFn) -> tuple[str, Any, int]:
    """(example name, mutated document, number of mutations)."""
    name = draw(st.sampled_from(sorted(MODELS)))
    document: Any = copy.deepcopy(MODELS[name])
    count = draw(st.sampled_from((0, 1, 1, 1, 2, 3)))
    for _ in range(count):
        paths = list(_paths(document))
        path = draw(st.sampled_from(paths))
        target = _get(document, path)
        kind = draw(st.sampled_from(("replace", "replace", "delete", "extra", "huge", "nest", "source", "target",
                                     "rename", "duplicate")))
        if kind == "replace":
            document = _set(document, path, draw(json_values))
        elif kind == "delete" and path:
            parent = _get(document, path[:-1])
            del parent[path[-1]]
        elif kind == "extra" and isinstance(target, dict):
            target[draw(st.sampled_from(("extra", "Strides", "sizeInBytes", "bindings", "Desc", "Type", "$schema",
                                         "FusedActivation", "dimensions", "elementOffset")))] = draw(json_values)
        elif kind == "extra" and isinstance(target, list):
            target.append(draw(json_values))
        elif kind == "huge" and path:
            document = _set(document, path, draw(st.one_of(st.sampled_from(HUGE_COUNTS),
                                                           st.lists(st.sampled_from(HUGE_COUNTS), min_size=1,
                                                                    max_size=9))))
        elif kind == "nest" and path:
            # Deep nesting is spliced into the JSON text by `model_text`: a Python object that deep would break
            # the reporting of a failure.
            depth = draw(st.sampled_from((10, 200, 5000, 100_000)))
            inner = json.dumps(_get(document, path))
            document = _set(document, path, f"NEST:{depth}:{inner}")
        elif kind == "source":
            resources = document.get("resources") if isinstance(document, dict) else None
            if isinstance(resources, dict) and resources:
                resource = draw(st.sampled_from(sorted(resources)))
                spec = {"initialValues": {"sourcePath": draw(st.sampled_from(SOURCE_PATHS))}}
                if draw(st.booleans()):
                    spec["initialValuesDataType"] = draw(st.sampled_from(("FLOAT32", "UINT8", "INT4")))
                resources[resource] = spec
        elif kind == "target":
            commands = document.get("commands") if isinstance(document, dict) else None
            resources = document.get("resources") if isinstance(document, dict) else None
            if isinstance(commands, list) and isinstance(resources, dict) and resources:
                command: dict[str, Any] = {"type": "writeFile", "resource": draw(st.sampled_from(sorted(resources))),
                                           "targetPath": draw(st.sampled_from(TARGET_PATHS))}
                if draw(st.booleans()):
                    command["dimensions"] = draw(st.sampled_from(([3], [1, 3], [65536] * 4, [2**32 - 1] * 3, [0])))
                commands.append(command)
        elif kind == "rename" and path and isinstance(_get(document, path[:-1]), dict):
            parent = _get(document, path[:-1])
            parent[draw(st.sampled_from(("a\nb", "", "x" * 300, "\u202e", "OutputTensors[0]")))] = parent.pop(path[-1])
        elif kind == "duplicate" and isinstance(document, dict) and isinstance(document.get("commands"), list):
            document["commands"] = document["commands"] * draw(st.sampled_from((2, 10)))
    return name, document, count


# ---------------------------------------------------------------------------------------------------------------------
# Running the command line
# ---------------------------------------------------------------------------------------------------------------------


def model_text(document: Any) -> str:
    """The JSON text of a mutated model, with its NEST markers expanded into arrays and objects nested that deep."""
    def expand(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: expand(value) for key, value in node.items()}
        if isinstance(node, list):
            return [expand(value) for value in node]
        if isinstance(node, str) and node.startswith("NEST:"):
            _, depth, inner = node.split(":", 2)
            half = int(depth) // 2
            return "\0NEST" + '[{"Desc": ' * half + inner + "}]" * half + "NEST\0"
        return node

    text = json.dumps(expand(document))
    while '"\\u0000NEST' in text:
        start = text.index('"\\u0000NEST')
        end = text.index('NEST\\u0000"', start)
        text = text[:start] + json.loads(text[start:end + len('NEST\\u0000"')])[5:-5] + text[end + len('NEST\\u0000"'):]
    return text


def run_cli(arguments: list[str]) -> tuple[int, str, str, int]:
    """(exit status, stdout, stderr, peak traced allocation) of opendml.cli.main, in-process."""
    out, err = io.StringIO(), io.StringIO()
    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), deadline(300):
            status = main(arguments)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return status, out.getvalue(), err.getvalue(), peak


def check_answer(status: int, stdout: str, stderr: str, *, command: str = "dispatch") -> None:
    assert status in (0, 2), (status, stderr)
    if status == 0:
        assert stderr == "", stderr
        return
    assert stderr.startswith("error: ") and stderr.endswith("\n"), stderr
    if command == "dispatch":
        assert stderr.count("\n") == 1, f"more than one line on stderr: {stderr!r}"
    assert "Traceback" not in stderr


def _under(path: str, folder: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def fuzz_one(document: Any, *, command: str = "dispatch", raw: str | None = None) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        sandbox = make_sandbox(root)
        text = raw if raw is not None else model_text(document).replace(
            "SECRET_ABSOLUTE", str(sandbox["secret"] / "passwd.npy"))
        model_path = sandbox["model"] / "model.json"
        model_path.write_text(text)
        before = sorted(str(path) for path in root.rglob("*"))
        arguments = [command, str(model_path), "--max-memory", str(MAX_MEMORY)]
        if command == "dispatch":
            arguments += ["--output-path", str(sandbox["out"])]
        with watching_opens() as opened:
            status, stdout, stderr, peak = run_cli(arguments)
        with contextlib.suppress(InvalidArgument):  # outside a hypothesis test there is nothing to note
            note(f"status {status}; stderr {stderr!r}; peak {peak}")
        check_answer(status, stdout, stderr, command=command)
        assert peak <= ALLOCATION_SLACK, f"allocated {peak} bytes with --max-memory {MAX_MEMORY}"
        for path in opened:
            assert not _under(path, sandbox["secret"]), f"read {path}, outside the model's folder"
            assert not path.startswith("/etc/"), f"read {path}, outside the model's folder"
        created = sorted(set(str(path) for path in root.rglob("*")) - set(before))
        for path in created:
            assert Path(path).is_relative_to(sandbox["out"]), f"created {path} outside --output-path"
        leftovers = [path for path in created if Path(path).name.startswith(".")]
        assert not leftovers, f"temporary files left behind: {leftovers}"
        if command == "validate" and status == 2:   # validate's first problem is the one a run stops at
            dispatched = run_cli(["dispatch", *arguments[1:], "--output-path", str(sandbox["out"])])
            assert dispatched[:3:2] == (2, stderr.splitlines(keepends=True)[0]), (dispatched[:3], stderr[:2000])
        return status, stdout, stderr


MODEL_SETTINGS = settings(max_examples=MODEL_EXAMPLES, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))


@MODEL_SETTINGS
@given(case=mutated_model())
def test_fuzz_models_dispatch(case: tuple[str, Any, int]) -> None:
    name, document, mutations = case
    note(f"{name} after {mutations} mutations: {json.dumps(document)[:3000]}")
    status, stdout, stderr = fuzz_one(document)
    if mutations == 0:
        expected = EVERY_EXPECTED[name]
        assert status == 0 and stdout.splitlines() == expected, (stdout, stderr)


@settings(MODEL_SETTINGS, max_examples=max(20, MODEL_EXAMPLES // 3))
@given(case=mutated_model())
def test_fuzz_models_validate(case: tuple[str, Any, int]) -> None:
    _, document, _ = case
    fuzz_one(document, command="validate")


@settings(MODEL_SETTINGS, max_examples=max(20, MODEL_EXAMPLES // 3))
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                      st.sampled_from(("", "{", "[]", "null", "{}", '{"resources": NaN}', "\ufeff{}",
                                       "[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000,
                                       '{"resources": {}, "dispatchables": {}, "commands": []}'))))
def test_fuzz_model_text(text: str) -> None:
    """Not JSON at all, or JSON of the wrong shape."""
    fuzz_one(None, raw=text)


# ---------------------------------------------------------------------------------------------------------------------
# Specific hostile models (each also reachable by the fuzzer, pinned here)
# ---------------------------------------------------------------------------------------------------------------------


def _reduce_with(resource_spec: dict[str, Any], name: str = "input") -> dict[str, Any]:
    document = copy.deepcopy(MODELS["dml_reduce.json"])
    document["resources"][name] = resource_spec
    return document


@pytest.mark.parametrize(("source", "message"), [
    ("../../etc/passwd", "outside the model's folder; pass --allow-outside-paths"),
    ("/etc/passwd", "outside the model's folder"),
    ("link.npy", "outside the model's folder"),
    ("../secret/passwd.npy", "outside the model's folder"),
    ("pickled.npy", "cannot load 'pickled.npy': .*unpickl"),
    ("huge_header.npy", "declares 40000000000 bytes of data, over the memory limit"),
    ("empty.npy", "cannot load 'empty.npy'"),
    ("garbage.npy", "cannot load 'garbage.npy'"),
    ("complex.npy", "'complex.npy' holds complex64 data; only arrays of a DML data type's numbers load"),
    ("subdir.npy", "'subdir.npy' is a directory, not a regular file; only regular files are read"),
    ("fifo.npy", r"'fifo\.npy' is a FIFO \(named pipe\), not a regular file; only regular files are read"),
    ("socket.npy", "'socket.npy' is a socket, not a regular file; only regular files are read"),
])
def test_hostile_source_paths(source: str, message: str) -> None:
    status, _, stderr = fuzz_one(_reduce_with({"initialValues": {"sourcePath": source}}))
    assert status == 2
    assert re.search(message, stderr), stderr


def test_allow_outside_paths_is_explicit() -> None:
    with tempfile.TemporaryDirectory() as temporary:
        sandbox = make_sandbox(Path(temporary))
        model = sandbox["model"] / "model.json"
        model.write_text(json.dumps(_reduce_with({"initialValues": {"sourcePath": "../secret/passwd.npy"}})))
        status, stdout, stderr, _ = run_cli(["dispatch", str(model), "--allow-outside-paths"])
        assert status == 0, stderr
        assert stdout.splitlines()[0] == "Resource 'input': 0, 1, 2, 3, 4, 5, 6, 7, 8"


@pytest.mark.parametrize("target", ["../escape.npy", "/tmp/opendml-escape.npy", "sub/../../escape.bin"])
def test_write_file_stays_in_the_output_folder(target: str) -> None:
    document = copy.deepcopy(MODELS["dml_reduce.json"])
    document["commands"].append({"type": "writeFile", "resource": "output", "targetPath": target})
    status, _, stderr = fuzz_one(document)
    assert status == 2 and "outside --output-path; pass --allow-outside-paths" in stderr, stderr
    assert not Path("/tmp/opendml-escape.npy").exists()


def test_write_file_dimensions_that_wrap_around_64_bits() -> None:
    document = _reduce_with({"initialValuesDataType": "FLOAT32", "initialValues": "deferred", "sizeInBytes": 0},
                            name="empty")
    document["commands"].append({"type": "writeFile", "resource": "empty", "targetPath": "e.npy",
                                 "dimensions": [65536] * 4})
    status, _, stderr = fuzz_one(document)
    assert status == 2 and "hold 18446744073709551616 elements" in stderr, stderr


def test_ten_gigabyte_resources_are_refused_before_allocation() -> None:
    for spec in ({"initialValuesDataType": "FLOAT32", "initialValues": "deferred", "sizeInBytes": 10 * 2**30},
                 {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 2**32 - 1, "value": 1}},
                 {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2], "initialValuesOffsetInBytes": 2**63}):
        status, _, stderr = fuzz_one(_reduce_with(spec, name="big"))
        assert status == 2 and "memory limit" in stderr, stderr


def test_names_with_newlines_give_one_line() -> None:
    document = _reduce_with({"initialValuesDataType": "FLOAT32", "initialValues": "deferred"}, name="bad\nname")
    status, _, stderr = fuzz_one(document)
    assert status == 2 and "bad\\nname" in stderr and stderr.count("\n") == 1, stderr


def test_float16_sequence_beyond_range_gives_no_warning() -> None:
    document = _reduce_with({"initialValuesDataType": "FLOAT16",
                             "initialValues": {"valueCount": 9, "valueStart": 1e300, "valueDelta": 1e300}})
    status, _, stderr = fuzz_one(document)
    assert status == 2 and stderr.count("\n") == 1 and "Warning" not in stderr, stderr


# ---------------------------------------------------------------------------------------------------------------------
# A few real subprocess runs, as a user runs the command
# ---------------------------------------------------------------------------------------------------------------------


def _subprocess(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "opendml.cli", *arguments], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_subprocess_hostile_models(tmp_path: Path) -> None:
    sandbox = make_sandbox(tmp_path)
    cases = {
        "deep.json": "[" * 200_000 + "]" * 200_000,
        "header.json": json.dumps(_reduce_with({"initialValues": {"sourcePath": "huge_header.npy"}})),
        "passwd.json": json.dumps(_reduce_with({"initialValuesDataType": "UINT8",
                                                "initialValues": {"sourcePath": "../../../../../etc/passwd"}})),
        "pickle.json": json.dumps(_reduce_with({"initialValues": {"sourcePath": "pickled.npy"}})),
        "newline.json": json.dumps(_reduce_with({"initialValuesDataType": "X"}, name="a\nb")),
    }
    for name, text in cases.items():
        (sandbox["model"] / name).write_text(text)
        result = _subprocess("dispatch", str(sandbox["model"] / name), cwd=sandbox["out"])
        assert result.returncode == 2, (name, result.stderr)
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, (name, result.stderr)
        assert result.stdout == ""


def test_subprocess_default_memory_limit_refuses_10_gigabytes(tmp_path: Path) -> None:
    document = _reduce_with({"initialValuesDataType": "FLOAT32", "initialValues": "deferred",
                             "sizeInBytes": 10 * 2**30}, name="big")
    (tmp_path / "big.json").write_text(json.dumps(document))
    result = _subprocess("dispatch", str(tmp_path / "big.json"), cwd=tmp_path)
    if default_max_memory() >= 10 * 2**30:  # a machine with more than 40 GB: the default allows it
        result = _subprocess("dispatch", str(tmp_path / "big.json"), "--max-memory", "1G", cwd=tmp_path)
    assert result.returncode == 2 and "memory limit" in result.stderr and result.stderr.count("\n") == 1, result


# ---------------------------------------------------------------------------------------------------------------------
# writeFile: old or new, never torn
# ---------------------------------------------------------------------------------------------------------------------


def test_write_interrupted_by_an_exception_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    target = tmp_path / "result.npy"
    old = np.arange(1000, dtype=np.float32)
    write_atomically("commands[0]", target, old)
    real_save = np.save

    def save_half_then_stop(stream: Any, values: Any, allow_pickle: bool = False) -> None:
        stream.write(b"\x93NUMPY half a header")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "save", save_half_then_stop)
    with pytest.raises(KeyboardInterrupt):
        write_atomically("commands[0]", target, np.zeros(1000, np.float32))
    monkeypatch.setattr(np, "save", real_save)
    assert np.array_equal(np.load(target), old)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["result.npy"], "a temporary file was left behind"

    raw = tmp_path / "result.bin"
    write_atomically("commands[1]", raw, old)
    monkeypatch.setattr(np, "ascontiguousarray", lambda values: (_ for _ in ()).throw(MemoryError()))
    with pytest.raises(MemoryError):
        write_atomically("commands[1]", raw, np.zeros(1000, np.float32))
    monkeypatch.undo()
    assert np.array_equal(np.fromfile(raw, np.float32), old)


_WRITER = """
import sys, numpy as np
from pathlib import Path
from opendml.model.runner import write_atomically
target = Path(sys.argv[1])
values = [np.full(1 << 20, 1.0, np.float32), np.full(1 << 20, 2.0, np.float32)]
print("ready", flush=True)
index = 0
while True:
    write_atomically("commands[0]", target, values[index % 2])
    index += 1
"""


def test_write_killed_at_random_times_leaves_old_or_new(tmp_path: Path) -> None:
    """SIGKILL a process that rewrites a 4 MB .npy in a loop: the target is always a whole file, all 1s or all 2s.
    (A killed process may leave its temporary `.result.npy.*` file; the target itself is never torn.)"""
    target = tmp_path / "result.npy"
    rng = np.random.default_rng(7)
    for _ in range(4):
        process = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        time.sleep(float(rng.uniform(0.05, 0.4)))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        process.stdout.close()
        if not target.exists():  # killed before the first rename
            continue
        values = np.load(target)
        assert values.shape == (1 << 20,) and values.dtype == np.float32
        assert (values == 1.0).all() or (values == 2.0).all(), "a torn file"
