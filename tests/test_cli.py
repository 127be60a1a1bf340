"""The `opendml` command line, run as a user would (a subprocess) or in-process (`run_cli`): examples, initializers,
files, broken models; JSON numbers converted exactly or refused, files that are not regular refused, output escaped,
bad option values refused (issue 15)."""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import pickle
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_cumulative import SAMPLES as CUMULATIVE_SAMPLES
from test_elementwise_samples import EXPECTED as ELEMENTWISE_SAMPLES
from test_gemm_convolution_samples import EXPECTED as GEMM_CONVOLUTION_SAMPLES
from test_generators import SAMPLES as GENERATOR_SAMPLES

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"


def opendml(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "opendml.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


# Expected outputs copied by hand from the doc pages and DxDispatch's README (DIGEST 4.5).
EXPECTED = {
    # UPSAMPLE_2D LINEAR x2 of [[1, 2], [3, 4]]: taps at (o + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75,
    # 1.25 (clamped to 1) along each axis: rows 1 + {0, .5, 1.5, 2}, columns + {0, .25, .75, 1} (by hand).
    "dml_upsample_2d.json": ["Resource 'output': 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, "
                             "3.25, 3.75, 4"],
    "dml_reduce.json": ["Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9", "Resource 'output': 6, 15, 24"],
    "reduce_sum_columns.json": ["Resource 'output': 6, 6, 9"],
    "reduce_sum_rows.json": ["Resource 'output': 6, 7, 8"],
    "reduce_sum_all.json": ["Resource 'output': 21"],
    "dml_split.json": ["Resource 'Out1': 1, 2", "Resource 'Out2': 3, 4", "Resource 'Out3': 5, 6"],
    # DxDispatch's dml_join.json: A[0:3] = 1, 2, 3; B[0:2] = 100, 115; A[4:9] = 5..9, joined along axis 0.
    "dml_join.json": ["Resource 'Out': 1, 2, 3, 100, 115, 5, 6, 7, 8, 9"],
    # SPLIT page: input {1,1,6,2} = 1..12; Example 1 (Axis 2 into 2, 1, 3 rows), Example 2 (Axis 3: odd, even).
    "split_axis2.json": ["Resource 'out0': 1, 2, 3, 4", "Resource 'out1': 5, 6",
                         "Resource 'out2': 7, 8, 9, 10, 11, 12"],
    "split_axis3.json": ["Resource 'odd': 1, 3, 5, 7, 9, 11", "Resource 'even': 2, 4, 6, 8, 10, 12"],
    # ONE_HOT page, Examples 1-4 (outputs {1,1,3,4}, row by row).
    "one_hot_rows.json": ["Resource 'output': 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0"],
    "one_hot_columns.json": ["Resource 'output': 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0"],
    "one_hot_on_off_values.json": ["Resource 'output': 2, 4, 4, 4, 4, 4, 4, 2, 4, 4, 2, 4"],
    "one_hot_negative_and_out_of_range.json": ["Resource 'output': 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1"],
    # GATHER_ND1 page: Example 1 (1-D remap) -> [[2,3],[0,1]]; Example 2 (batched) -> [[0,3],[7,4],[9,10]].
    "gather_nd1_rows.json": ["Resource 'output': 2, 3, 0, 1"],
    "gather_nd1_batched.json": ["Resource 'output': 0, 3, 7, 4, 9, 10"],
    # DxDispatch's dml_slice.json (unchanged): input {1,1,5,5} = 1..25 (row r, column c: 5r + c + 1), Offsets
    # {0,0,1,1}, Sizes {1,1,3,2}, Strides {1,1,1,2}: rows 1-3, columns 1 and 3 -> 7, 9, 12, 14, 17, 19.
    "dml_slice.json": ["Resource 'output': 7, 9, 12, 14, 17, 19"],
}

#: What every sample in examples/models prints, wherever its hand-worked lines live.
EVERY_EXPECTED = {**EXPECTED, **ELEMENTWISE_SAMPLES, **GEMM_CONVOLUTION_SAMPLES, **GENERATOR_SAMPLES,
                  **CUMULATIVE_SAMPLES}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_examples(name: str) -> None:
    result = opendml("dispatch", EXAMPLES / name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED[name]
    assert result.stderr == ""


def test_every_example_has_an_expected_output() -> None:
    # DxDispatch's element-wise samples: test_elementwise_samples.py runs them (they write files: --output-path);
    # its GEMM and CONVOLUTION samples: test_gemm_convolution_samples.py; dml_fill_value_sequence.json: test_generators;
    # dml_cumulative_product.json: test_cumulative.
    assert {path.name for path in EXAMPLES.glob("*.json")} == set(EVERY_EXPECTED)


def _reduce_model() -> dict[str, Any]:
    return json.loads((EXAMPLES / "dml_reduce.json").read_text())


def _write(tmp_path: Path, model: dict[str, Any], name: str = "model.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize(("values", "data_type", "expected"), [
    ([1, 2.5, "nan", "inf", "-inf"], "FLOAT32", "1, 2.5, nan, inf, -inf"),
    ({"valueCount": 4, "value": 7}, "DML_TENSOR_DATA_TYPE_INT16", "7, 7, 7, 7"),
    ({"valueCount": 4, "valueStart": 1, "valueDelta": 2.5}, "FLOAT64", "1, 3.5, 6, 8.5"),
    ({"valueCount": 3, "valueStart": -1, "valueDelta": -2}, "INT8", "-1, -3, -5"),   # 3 bytes (padded to 4)
    ([65535, 0], "UINT16", "65535, 0"),
])
def test_initializers(tmp_path: Path, values: Any, data_type: str, expected: str) -> None:
    model = {"resources": {"r": {"initialValuesDataType": data_type, "initialValues": values}},
             "dispatchables": {}, "commands": [{"type": "print", "resource": "r"}]}
    result = opendml("dispatch", _write(tmp_path, model))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"Resource 'r': {expected}"


def test_deferred_offset_and_size(tmp_path: Path) -> None:
    model = {"resources": {
        "d": {"initialValuesDataType": "UINT8", "initialValues": "deferred", "sizeInBytes": 4},
        "o": {"initialValuesDataType": "UINT8", "initialValues": [9], "initialValuesOffsetInBytes": 2,
              "sizeInBytes": 8}},
        "dispatchables": {}, "commands": [{"type": "print", "resource": "d"}, {"type": "print", "resource": "o"}]}
    result = opendml("dispatch", _write(tmp_path, model))
    assert result.stdout.splitlines() == ["Resource 'd': 0, 0, 0, 0", "Resource 'o': 0, 0, 9, 0, 0, 0, 0, 0"]


def test_npy_round_trip_and_raw_files(tmp_path: Path) -> None:
    data = np.arange(1, 10, dtype=np.float32)
    np.save(tmp_path / "input.npy", data)
    data.tofile(tmp_path / "input.dat")
    model = _reduce_model()
    model["resources"]["input"] = {"initialValues": {"sourcePath": "input.npy"}}
    model["resources"]["raw"] = {"initialValuesDataType": "FLOAT32", "initialValues": {"sourcePath": "input.dat"}}
    model["commands"] = [
        {"type": "dispatch", "dispatchable": "sum", "bindings": {"InputTensor": "raw", "OutputTensor": "output"}},
        {"type": "writeFile", "resource": "output", "targetPath": "out.npy", "dimensions": [1, 1, 3, 1]},
        {"type": "writeFile", "resource": "output", "targetPath": "sub/out.bin"},
    ]
    result = opendml("dispatch", _write(tmp_path, model), "--output-path", tmp_path / "results")
    assert result.returncode == 0, result.stderr
    written = np.load(tmp_path / "results" / "out.npy", allow_pickle=False)
    assert written.dtype == np.float32 and written.shape == (1, 1, 3, 1)
    assert written.ravel().tolist() == [6, 15, 24]
    assert np.fromfile(tmp_path / "results" / "sub" / "out.bin", np.float32).tolist() == [6, 15, 24]
    assert not [path for path in (tmp_path / "results").rglob(".*")]   # no temporary files left behind


def test_pickled_npy_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "evil.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert pickle.dumps(1)  # the file above holds a pickle; loading it must not unpickle
    model = _reduce_model()
    model["resources"]["input"] = {"initialValues": {"sourcePath": "evil.npy"}}
    result = opendml("dispatch", _write(tmp_path, model))
    assert result.returncode == 2
    assert re.fullmatch(r"error: resources\.input\.initialValues\.sourcePath: cannot load 'evil\.npy': .*pickl.*\n",
                        result.stderr)


def _mutated(change: Any) -> dict[str, Any]:
    model = copy.deepcopy(_reduce_model())
    change(model)
    return model


def _desc(model: dict[str, Any]) -> dict[str, Any]:
    desc: dict[str, Any] = model["dispatchables"]["sum"]["desc"]
    return desc


BROKEN_MODELS: list[tuple[str, Any, str]] = [
    ("unknown operator", lambda m: m["dispatchables"]["sum"].__setitem__("type", "DML_OPERATOR_LSTM"),
     r"dispatchables\.sum\.type: 'DML_OPERATOR_LSTM' is not an operator opendml implements \(`opendml ops` "
     r"lists the \d+ it does\)"),
    ("unknown field", lambda m: _desc(m).__setitem__("Axis", 3),
     r"dispatchables\.sum\.desc\.Axis: unknown field; expected one of Axes, AxisCount, Function, InputTensor, "
     r"OutputTensor"),
    ("missing field", lambda m: _desc(m).pop("Function"),
     r"dispatchables\.sum\.desc\.Function: is missing; DML_OPERATOR_REDUCE requires it"),
    ("AxisCount disagrees", lambda m: _desc(m).__setitem__("AxisCount", 2),
     r"dispatchables\.sum\.desc\.AxisCount: is 2 but Axes has 1 entries"),
    ("axis out of range", lambda m: _desc(m).__setitem__("Axes", [5]),
     r"dispatchables\.sum\.desc\.Axes\[0\]: 5; it must be in \[0, 3\] for InputTensor of 4 dimensions"),
    ("unknown resource", lambda m: m["commands"][0]["bindings"].__setitem__("InputTensor", "nothing"),
     r"commands\[0\]\.bindings\.InputTensor: 'nothing' is not a resource of this model"),
    ("resource too small", lambda m: m["resources"]["output"]["initialValues"].__setitem__("valueCount", 2),
     r"commands\[0\]\.bindings\.OutputTensor: binding needs bytes \[0, 12\) but the buffer holds 8 bytes"),
    ("wrong enum name", lambda m: _desc(m).__setitem__("Function", "DML_REDUCE_FUNCTION_MEAN"),
     r"dispatchables\.sum\.desc\.Function: ReduceFunction is 'DML_REDUCE_FUNCTION_MEAN'; it must be one of ARGMAX"),
    ("wrong data type name", lambda m: _desc(m)["InputTensor"].__setitem__("DataType", "FLOAT8"),
     r"dispatchables\.sum\.desc\.InputTensor\.DataType: DataType is 'FLOAT8'; it must be one of UNKNOWN, FLOAT32"),
    ("unknown dispatchable", lambda m: m["commands"][0].__setitem__("dispatchable", "mean"),
     r"commands\[0\]\.dispatchable: 'mean' is not a dispatchable of this model"),
    ("unknown command", lambda m: m["commands"].append({"type": "launch"}),
     r"commands\[3\]\.type: 'launch' is not a command; use dispatch, print or writeFile"),
    ("value out of range", lambda m: m["resources"].__setitem__(
        "x", {"initialValuesDataType": "UINT8", "initialValues": [256]}),
     r"resources\.x\.initialValues\[0\]: 256; it must be an integer in \[0, 255\] \(UINT8\)"),
    ("size smaller than data", lambda m: m["resources"]["input"].__setitem__("sizeInBytes", 8),
     r"resources\.input\.sizeInBytes: 8 is smaller than the initial data \(36 bytes including the offset\)"),
    ("sizeInBytes over the memory limit", lambda m: m["resources"]["output"].__setitem__("sizeInBytes", 10 << 30),
     r"resources\.output\.sizeInBytes: 10737418240 bytes would exceed the memory limit"),
    ("path outside the model's folder", lambda m: m["resources"].__setitem__(
        "input", {"initialValues": {"sourcePath": "../../etc/passwd.npy"}}),
     r"resources\.input\.initialValues\.sourcePath: '\.\./\.\./etc/passwd\.npy' is outside the model's folder; pass "
     r"--allow-outside-paths to allow it"),
    ("missing top-level key", lambda m: m.pop("commands"), r"commands: is missing"),
    ("feature level too low", lambda m: [_desc(m)[t].__setitem__("DataType", "INT64")
                                         for t in ("InputTensor", "OutputTensor")],
     r"dispatchables\.sum\.desc\.InputTensor\.DataType: INT64 needs feature level 5_0; the device is at 4_1"),
]


@pytest.mark.parametrize(("change", "message"), [case[1:] for case in BROKEN_MODELS],
                         ids=[case[0] for case in BROKEN_MODELS])
def test_broken_models(tmp_path: Path, change: Any, message: str) -> None:
    result = opendml("dispatch", "--feature-level", "4_1", _write(tmp_path, _mutated(change)))
    assert result.returncode == 2
    assert result.stdout == ""
    assert re.fullmatch(f"error: {message}.*\n", result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"resources": ')
    result = opendml("dispatch", broken)
    assert (result.returncode, result.stderr) == (2, f"error: {broken} is not valid JSON: Expecting value at line 1 "
                                                      f"column 15\n")
    result = opendml("dispatch", tmp_path / "absent.json")
    assert result.returncode == 2
    assert result.stderr == f"error: cannot read {tmp_path / 'absent.json'}: No such file or directory\n"


def test_bad_options() -> None:
    result = opendml("dispatch", "--feature-level", "9_9", EXAMPLES / "dml_reduce.json")
    assert result.returncode == 2
    assert result.stderr.startswith("error: argument --feature-level: FeatureLevel is '9_9'; it must be one of 1_0, ")
    result = opendml("dispatch", "--dispatch-iterations", "many", EXAMPLES / "dml_reduce.json")
    assert (result.returncode, result.stderr) == (2, "error: argument -i/--dispatch-iterations/--dispatch_iterations: "
                                                     "'many' is not an integer in [1, 4294967295] (see opendml "
                                                     "dispatch --help)\n")


def test_timing_output() -> None:
    result = opendml("dispatch", "-i", "5", "-w", "2", "--print-commands", EXAMPLES / "dml_reduce.json")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "commands[0]: dispatch sum"
    assert re.fullmatch(r"Dispatch 'sum': 5 iterations, min \d+\.\d{4} ms, median \d+\.\d{4} ms, max \d+\.\d{4} ms",
                        lines[1])
    assert lines[2:] == ["commands[1]: print input", "Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9",
                         "commands[2]: print output", "Resource 'output': 6, 15, 24"]


def test_validate(tmp_path: Path) -> None:
    result = opendml("validate", EXAMPLES / "dml_reduce.json")
    assert result.returncode == 0
    assert result.stdout.endswith("1 dispatchables, 3 commands: valid at feature level 6_4\n")
    model = _reduce_model()
    model["dispatchables"]["bad"] = copy.deepcopy(model["dispatchables"]["sum"])
    model["dispatchables"]["bad"]["desc"]["Axes"] = [7]
    model["dispatchables"]["sum"]["desc"]["OutputTensor"]["Sizes"] = [1, 1, 3, 3]
    result = opendml("validate", _write(tmp_path, model))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: dispatchables.sum.desc.OutputTensor.Sizes: [1, 1, 3, 3]; with Axes [3] it must be [1, 1, 3, 1]",
        "error: dispatchables.bad.desc.Axes[0]: 7; it must be in [0, 3] for InputTensor of 4 dimensions",
    ]


def test_ops_listing() -> None:
    result = opendml("ops")
    assert result.returncode == 0
    assert re.search(r"^DML_OPERATOR_REDUCE +ReduceOperatorDesc$", result.stdout, re.MULTILINE)
    result = opendml("ops", "REDUCE", "--feature-level", "2_1")
    assert result.returncode == 0
    assert "  Axes: UINT array (with AxisCount)" in result.stdout
    assert "  SUM:\n    InputTensor: DimensionCount exactly 4; FLOAT32, FLOAT16, INT32, UINT32\n" in result.stdout


def test_version_and_help() -> None:
    result = opendml("--version")
    assert result.returncode == 0 and re.fullmatch(r"opendml \d+\.\d+\.\d+\n", result.stdout)
    for command in ("dispatch", "validate", "ops"):
        result = opendml(command, "--help")
        assert result.returncode == 0 and result.stdout.startswith(f"usage: opendml {command}")


@pytest.mark.parametrize("activation", [
    {"Type": "ACTIVATION_LINEAR", "Alpha": 2.0, "Beta": 1.0},                                   # the short form
    {"Type": "DML_OPERATOR_ACTIVATION_LINEAR", "Desc": {"Alpha": 2.0, "Beta": 1.0}},            # the long form
])
def test_fused_activation_forms_and_absent_optional_tensors(tmp_path: Path, activation: dict[str, Any]) -> None:
    # x = 1, 2, 3, 4 over axes {2, 3}: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so
    # (x - 2.5) / sqrt(1.25) = -1.341641, -0.447214, 0.447214, 1.341641; then LINEAR 2 * y + 1.
    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]}
    model = {
        "resources": {"x": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3, 4]},
                      "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 4, "value": 0}}},
        "dispatchables": {"mvn": {"type": "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1", "desc": {
            "InputTensor": tensor, "OutputTensor": tensor, "AxisCount": 2, "Axes": [2, 3], "NormalizeVariance": True,
            "Epsilon": 0.0, "FusedActivation": activation}}},
        "commands": [{"type": "dispatch", "dispatchable": "mvn", "bindings": {"InputTensor": "x", "OutputTensor": "y"}},
                     {"type": "print", "resource": "y"}],
    }
    result = opendml("dispatch", _write(tmp_path, model))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Resource 'y': -1.68328, 0.105573, 1.89443, 3.68328\n"


# -- backends and adapters: --backend, -a/--adapter, -s/--show_adapters (DxDispatch's letters) ------------------------

NO_ADAPTER_REASON = ("no WebGPU adapter on this machine (dml.list_adapters() is empty); install wgpu and a Vulkan "
                     "driver (Debian's mesa-vulkan-drivers) to run the gpu backend's CLI tests")


@pytest.fixture
def gpu() -> None:
    """Skips a test that needs the gpu backend, only where no adapter exists at all."""
    import opendml as dml

    if not dml.list_adapters():
        pytest.skip(NO_ADAPTER_REASON)


def opendml_without_gpu(how: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process where the gpu backend cannot run: wgpu missing ("no-wgpu") or no adapter ("no-adapter")."""
    hide = ("sys.modules['wgpu'] = None" if how == "no-wgpu" else
            "import wgpu; wgpu.gpu.enumerate_adapters_sync = lambda: []")
    code = f"import sys; {hide}; from opendml.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300)


# One model per operator; each prints exactly what the cpu backend prints (and the doc pages' numbers).
GPU_EXAMPLES = ["dml_split.json", "split_axis3.json", "dml_reduce.json", "one_hot_negative_and_out_of_range.json",
                "gather_nd1_batched.json"]


@pytest.mark.parametrize("name", GPU_EXAMPLES)
def test_examples_on_the_gpu_print_the_cpu_output(gpu: None, name: str) -> None:
    on_gpu = opendml("dispatch", "--backend", "gpu", EXAMPLES / name)
    assert on_gpu.returncode == 0, on_gpu.stderr
    assert on_gpu.stdout == "".join(f"{line}\n" for line in EXPECTED[name])   # what test_examples gets on the cpu
    assert on_gpu.stderr.splitlines() == []


def test_dispatch_on_the_gpu_reads_back_only_what_it_prints(gpu: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A model's resources stay on the device: of dml_split.json's three outputs, the model below prints one (twice)
    and nothing else is copied back; the input goes up once."""
    from opendml.backends.gpu.context import GpuContext
    from opendml.cli import main

    model = json.loads((EXAMPLES / "dml_split.json").read_text())
    model["commands"] = [model["commands"][0], {"type": "print", "resource": "Out2"},
                         {"type": "print", "resource": "Out2"}]
    path = _write(tmp_path, model)
    reads: list[int] = []
    writes: list[int] = []
    read, write = GpuContext.read, GpuContext.write
    monkeypatch.setattr(GpuContext, "read", lambda self, handle, offset, size: reads.append(size) or read(
        self, handle, offset, size))
    monkeypatch.setattr(GpuContext, "write", lambda self, handle, offset, data: writes.append(data.nbytes) or write(
        self, handle, offset, data))
    assert main(["dispatch", "--backend", "gpu", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["Resource 'Out2': 3, 4"] * 2
    assert reads == [8, 8]                      # Out2's 8 bytes, for each print; not Out1, Out3 or A
    assert sorted(writes, reverse=True)[0] == 24 and writes.count(24) == 1


def test_adapter_selects_the_gpu_backend(gpu: None) -> None:
    import opendml as dml

    first = dml.list_adapters()[0].name
    part = first[: max(3, len(first) // 2)].upper()                      # a part of the name, in another case
    result = opendml("dispatch", "-a", part, EXAMPLES / "dml_split.json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED["dml_split.json"]
    result = opendml("validate", "--adapter", part, EXAMPLES / "dml_split.json")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r".*dml_split\.json: 4 resources, 1 dispatchables, 4 commands: valid at feature level 6_4 "
                        r"on the gpu backend, adapter '.+' \(\w+\)\n", result.stdout)
    assert part.lower() in result.stdout.lower()


def test_adapter_that_matches_nothing_and_adapter_with_the_cpu_backend(gpu: None) -> None:
    result = opendml("dispatch", "-a", "no such adapter 1234", EXAMPLES / "dml_split.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert re.fullmatch(r"error: Device: no GPU adapter's name contains 'no such adapter 1234'; the adapters are: "
                        r".+", result.stderr.splitlines()[0])
    assert "Traceback" not in result.stderr
    result = opendml("dispatch", "--backend", "cpu", "-a", "x", EXAMPLES / "dml_split.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("error: Device: adapter 'x' was given for the cpu backend; adapters select a GPU "
                             "(backend='gpu')\n")


def test_show_adapters(gpu: None) -> None:
    import opendml as dml

    expected = []
    for index, adapter in enumerate(dml.list_adapters()):
        expected += [""] if index else []
        expected += [adapter.name, f"-Vendor: {adapter.vendor or 'unknown'}", f"-Backend: {adapter.backend}",
                     f"-Device type: {adapter.device_type}"]
    for args in (["-s"], ["dispatch", "--show_adapters"], ["validate", "--show-adapters", EXAMPLES / "dml_split.json"],
                 ["ops", "-s"]):
        result = opendml(*args)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == expected          # lists and exits: no model is run
        assert result.stderr.splitlines() == []


@pytest.mark.parametrize("how", ["no-wgpu", "no-adapter"])
def test_no_gpu_adapter(how: str) -> None:
    result = opendml_without_gpu(how, "--show-adapters")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No GPU adapter found: the gpu backend cannot run on this machine; install "
                                    "opendml's gpu extra")
    assert "mesa-vulkan-drivers" in result.stdout
    for args in (["dispatch", "--backend", "gpu"], ["validate", "-a", "NVIDIA"]):
        result = opendml_without_gpu(how, *args, EXAMPLES / "dml_split.json")
        assert (result.returncode, result.stdout) == (2, "")
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: Device: ")
        assert "the gpu backend needs the wgpu package" in lines[0] if how == "no-wgpu" else \
            "backend 'gpu' found no GPU adapter on this machine" in lines[0]
        assert "pip install 'opendml[gpu]'" in lines[0] and "mesa-vulkan-drivers" in lines[0]
        assert "pip install -e '.[gpu]' in a checkout" in lines[0]           # as README installs it
        assert "Traceback" not in result.stderr
    if how == "no-wgpu":     # the cpu backend needs neither wgpu nor a GPU
        result = opendml_without_gpu(how, "dispatch", EXAMPLES / "dml_split.json")
        assert result.returncode == 0 and result.stdout.splitlines() == EXPECTED["dml_split.json"]


def test_bad_backend() -> None:
    result = opendml("dispatch", "--backend", "tpu", EXAMPLES / "dml_split.json")
    assert result.returncode == 2
    assert result.stderr == ("error: argument --backend: invalid choice: 'tpu' (choose from 'cpu', 'gpu') (see "
                             "opendml dispatch --help)\n")


def test_device_options_in_help() -> None:
    for command in ("dispatch", "validate", "ops"):
        text = " ".join(opendml(command, "--help").stdout.split())
        assert "--backend {cpu,gpu}" in text and "-a NAME, --adapter NAME" in text
        assert "-s, --show_adapters, --show-adapters" in text
        assert "selects the gpu backend" in text
    text = " ".join(opendml("--help").stdout.split())
    assert "-s, --show_adapters, --show-adapters" in text


def test_timing_and_files_on_the_gpu(gpu: None, tmp_path: Path) -> None:
    model = json.loads((EXAMPLES / "dml_split.json").read_text())
    model["commands"] += [{"type": "writeFile", "resource": "Out2", "targetPath": "out2.npy", "dimensions": [2, 1]},
                          {"type": "writeFile", "resource": "Out3", "targetPath": "out3.bin"}]
    path = _write(tmp_path, model)
    for backend in ("cpu", "gpu"):
        # DxDispatch's underscore spellings are accepted too.
        timing = ["--dispatch_iterations", "3", "--warmup_samples", "1"] if backend == "gpu" else []
        result = opendml("dispatch", "--backend", backend, *timing, path, "--output-path", tmp_path / backend)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        if timing:
            assert re.fullmatch(r"Dispatch 'split': 3 iterations, min \d+\.\d{4} ms, median \d+\.\d{4} ms, max "
                                r"\d+\.\d{4} ms", lines.pop(0))
        assert lines == EXPECTED["dml_split.json"]
        written = np.load(tmp_path / backend / "out2.npy", allow_pickle=False)
        assert written.dtype == np.float32 and written.tolist() == [[3], [4]]
        assert np.fromfile(tmp_path / backend / "out3.bin", np.float32).tolist() == [5, 6]
    assert (tmp_path / "cpu" / "out3.bin").read_bytes() == (tmp_path / "gpu" / "out3.bin").read_bytes()


def test_ops_on_the_gpu_backend(gpu: None) -> None:
    import opendml as dml

    on_cpu = opendml("ops", "ONE_HOT")
    result = opendml("ops", "ONE_HOT", "--backend", "gpu")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^support at feature level 6_4 on the gpu backend, adapter '.+' \(\w+\):$", result.stdout,
                     re.MULTILINE)
    assert result.stdout.split("support at")[0] == on_cpu.stdout.split("support at")[0]      # the same fields
    every_type = "  IndicesTensor: DimensionCount 1 to 8; INT64, INT32, UINT64, UINT32"
    assert every_type in on_cpu.stdout.splitlines()
    if dml.Device(backend="gpu").check_feature_support(data_type="INT64"):
        assert every_type in result.stdout.splitlines()
    # An adapter without shader-int64: its 64-bit integer types are listed apart.
    code = ("import sys; from opendml.backends.gpu import GpuBackend; from opendml.types import DataType; "
            "GpuBackend.supports_data_type = lambda self, t: t not in (DataType.INT64, DataType.UINT64); "
            "from opendml.cli import main; sys.exit(main(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", code, "ops", "ONE_HOT", "--backend", "gpu"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ("  IndicesTensor: DimensionCount 1 to 8; INT32, UINT32 (not on the gpu backend here: INT64, UINT64)"
            in result.stdout.splitlines())
    result = opendml("ops", "ONE_HOT", "--backend", "cpu")
    assert result.stdout == on_cpu.stdout.replace("at feature level 6_4:", "at feature level 6_4 on the cpu backend:")


# -- hostile input: JSON numbers, files that are not regular, escaped output, options (issue 15) ----------------------


class Hang(BaseException):
    """A run took too long: a BaseException, so that no `except OSError` (TimeoutError is one) or `except Exception`
    in the code under test can turn it into an ordinary error."""


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fails a run that takes longer than `seconds` (a hang, e.g. on a FIFO) instead of waiting for it forever."""
    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"the run took more than {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(*arguments: str | Path, seconds: int = 120) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `opendml.cli.main` in-process (argparse's SystemExit is a status too)."""
    from opendml.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), deadline(seconds):
        try:
            status = main([str(argument) for argument in arguments])
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 2
    return status, out.getvalue(), err.getvalue()


def _one_resource(tmp_path: Path, resource: Any, name: str = "r", text: str | None = None) -> Path:
    """A model of one resource, printed; `text` replaces the resource's JSON (numbers json cannot write)."""
    model = {"resources": {name: resource}, "dispatchables": {}, "commands": [{"type": "print", "resource": name}]}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model).replace('"TEXT"', text or '"TEXT"'))
    return path


@pytest.mark.parametrize(("values", "data_type", "expected"), [
    # The example: a descending UINT8 sequence that fits is computed in the resource's own type.
    ({"valueCount": 5, "valueStart": 10, "valueDelta": -1}, "UINT8", "10, 9, 8, 7, 6"),
    ({"valueCount": 3, "valueStart": -2**63, "valueDelta": 2**63 - 1}, "INT64",
     "-9223372036854775808, -1, 9223372036854775806"),
    ({"valueCount": 2, "valueStart": 2**64 - 1, "valueDelta": -(2**64 - 1)}, "UINT64", "18446744073709551615, 0"),
    ({"valueCount": 3, "valueStart": 0, "valueDelta": 0}, "UINT16", "0, 0, 0"),
    ({"valueCount": 0, "valueStart": 255, "valueDelta": 255}, "UINT8", ""),
    # Floats are rounded to the nearest value of the type: 65519 to FLOAT16's largest, 1e-400 to 0, -0.0 kept.
    ([65519, -0.0, 1e-400, 6e-8], "FLOAT16", "65504, -0, 0, 5.96046e-08"),
    (["NaN", "INF", "-inf", "+inf"], "FLOAT32", "nan, inf, -inf, inf"),
    ({"valueCount": 3, "valueStart": "-inf", "valueDelta": 1}, "FLOAT64", "-inf, -inf, -inf"),
    ({"valueCount": 2, "value": 18446744073709551615}, "UINT64", "18446744073709551615, 18446744073709551615"),
])
def test_json_numbers_converted_exactly(tmp_path: Path, values: Any, data_type: str, expected: str) -> None:
    model = _one_resource(tmp_path, {"initialValuesDataType": data_type, "initialValues": values})
    assert run_cli("dispatch", model) == (0, f"Resource 'r': {expected}\n", "")


BIG = "1" * 4301                     # more digits than Python's int() takes from text
LEAKY = {"DataType": "FLOAT32", "Sizes": [2]}

# (initialValuesDataType, the resource's initialValues as JSON text, the whole error line)
REFUSED_NUMBERS = [
    ("FLOAT32", "[1e400]", r"resources\.r\.initialValues\[0\]: 1e400 is beyond the range of every DML data type "
                           r"\(float64 holds magnitudes up to 1\.8e308\)"),
    ("UINT64", f"[{BIG}]", r"resources\.r\.initialValues\[0\]: 1111111111\.\.\.111111 \(4301 digits\) is beyond the "
                           r"range of every DML data type \(float64 holds magnitudes up to 1\.8e308\)"),
    ("FLOAT16", "[1, 70000]", r"resources\.r\.initialValues\[1\]: 70000\.0 is beyond FLOAT16's range; it must be a "
                              r"number of magnitude at most 65504, \"nan\", \"inf\" or \"-inf\""),
    ("FLOAT32", '{"valueCount": 2, "value": 1e39}', r"resources\.r\.initialValues\.value: 1e\+39 is beyond "
                                                    r"FLOAT32's range; it must be a number of magnitude at most "
                                                    r"3\.4028235e\+38, \"nan\", \"inf\" or \"-inf\""),
    ("FLOAT64", '{"valueCount": 3, "valueStart": 1e308, "valueDelta": 1e308}',
     r"resources\.r\.initialValues: element 1 of the sequence, 1e\+308 \+ 1 \* 1e\+308, is beyond FLOAT64's range; "
     r"it must be a number of magnitude at most 1\.7976931e\+308, \"nan\", \"inf\" or \"-inf\""),
    ("FLOAT32", f'[{"1" + "0" * 309}]', r"resources\.r\.initialValues\[0\]: 1\.000e\+309 \(an int of 310 digits\); "
                                        r"it must be a FLOAT32: a number within its range, \"inf\" or \"-inf\""),
    ("FLOAT32", '[[1]]', r"resources\.r\.initialValues\[0\]: \[1\]; it must be a number, \"nan\", \"inf\" or "
                         r"\"-inf\" \(FLOAT32\)"),
    ("INT8", "[2.0]", r"resources\.r\.initialValues\[0\]: 2\.0; it must be an integer in \[-128, 127\] \(INT8\)"),
    ("UINT8", '{"valueCount": 5, "valueStart": 3, "valueDelta": -1}',
     r"resources\.r\.initialValues: element 4 of the sequence is -1; it must be an integer in \[0, 255\] \(UINT8\) "
     r"\(valueStart 3, valueDelta -1, valueCount 5\)"),
    ("INT8", '{"valueCount": 200, "valueStart": 0, "valueDelta": 1}',
     r"resources\.r\.initialValues: element 128 of the sequence is 128; it must be an integer in \[-128, 127\] "
     r"\(INT8\) \(valueStart 0, valueDelta 1, valueCount 200\)"),
    ("UINT8", '{"valueCount": 2, "valueStart": 0, "valueDelta": 256}',
     r"resources\.r\.initialValues\.valueDelta: 256; it must be an integer in \[-255, 255\] \(a step between two "
     r"UINT8 values\)"),
    ("UINT32", '{"valueCount": 1, "valueStart": -1, "valueDelta": 0}',
     r"resources\.r\.initialValues\.valueStart: -1; it must be an integer in \[0, 2\^32\) \(UINT32\)"),
    ("UINT8", '{"valueCount": 2.0, "value": 1}', r"resources\.r\.initialValues\.valueCount: must be an integer; got "
                                                 r"a number"),
]


@pytest.mark.parametrize(("data_type", "text", "message"), REFUSED_NUMBERS)
def test_json_numbers_refused(tmp_path: Path, data_type: str, text: str, message: str) -> None:
    model = _one_resource(tmp_path, {"initialValuesDataType": data_type, "initialValues": "TEXT"}, text=text)
    status, stdout, stderr = run_cli("dispatch", model)
    assert (status, stdout) == (2, "")
    assert re.fullmatch(f"error: {message}\n", stderr), stderr


def _leaky_model(tmp_path: Path, **fields: Any) -> Path:
    """A standalone LEAKY_RELU model whose desc fields are `fields` (JSON text for the key "TEXT")."""
    desc = {"InputTensor": LEAKY, "OutputTensor": LEAKY, "Alpha": 0.5, **fields}
    model = {"resources": {"x": {"initialValuesDataType": "FLOAT32", "initialValues": [-2, 2]}},
             "dispatchables": {"leaky": {"type": "ACTIVATION_LEAKY_RELU", "desc": desc}},
             "commands": [{"type": "dispatch", "dispatchable": "leaky",
                           "bindings": {"InputTensor": "x", "OutputTensor": "x"}}, {"type": "print", "resource": "x"}]}
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize(("field", "text", "message"), [
    ("Alpha", "1" + "0" * 309, r"Alpha: 1\.000e\+309 \(an int of 310 digits\); it must be a FLOAT: a number within "
                               r"its range, \"inf\" or \"-inf\""),
    ("Alpha", "1e400", r"Alpha: 1e400 is beyond the range of every DML data type \(float64 holds magnitudes up to "
                       r"1\.8e308\)"),
    ("Alpha", "1e39", r"Alpha: 1e\+39; it must be a finite FLOAT \(magnitude at most 3\.40282e\+38\)"),
    ("Alpha", '"abc"', r"Alpha: 'abc'; it must be a number, \"nan\", \"inf\" or \"-inf\" \(FLOAT\)"),
    ("Alpha", '"inf"', r"Alpha: inf; it must be a finite FLOAT \(magnitude at most 3\.40282e\+38\)"),
    ("Alpha", "true", r"Alpha: True; it must be a number, \"nan\", \"inf\" or \"-inf\" \(FLOAT\)"),
    ("InputTensor", '{"DataType": "FLOAT32", "Sizes": [2.0]}', r"InputTensor\.Sizes\[0\]: 2\.0; it must be an "
                                                               r"integer in \[0, 2\^32\)"),
    ("InputTensor", '{"DataType": "FLOAT32", "Sizes": [2], "TotalTensorSizeInBytes": 18446744073709551616}',
     r"InputTensor\.TotalTensorSizeInBytes: 18446744073709551616; it must be an integer in \[0, 2\^64\)"),
])
def test_json_desc_fields_refused(tmp_path: Path, field: str, text: str, message: str) -> None:
    model = _leaky_model(tmp_path, **{field: "TEXT"})
    model.write_text(model.read_text().replace('"TEXT"', text))
    status, _, stderr = run_cli("dispatch", model)
    assert status == 2 and re.fullmatch(f"error: dispatchables\\.leaky\\.desc\\.{message}\n", stderr), stderr


def test_json_desc_float_field_rounds_to_nearest(tmp_path: Path) -> None:
    # Alpha 0.1 is the nearest FLOAT to 0.1 in the kernels; -2 * 0.1 in float32 prints as -0.2.
    assert run_cli("dispatch", _leaky_model(tmp_path, Alpha=0.1)) == (0, "Resource 'x': -0.2, 2\n", "")


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m["commands"][0].__setitem__("threadGroupCount", [1, 1]),
     r"commands\[0\]\.threadGroupCount: has 2 values; it must have 3"),
    (lambda m: m["commands"][1].__setitem__("verbose", "yes"), r"commands\[1\]\.verbose: 'yes'; it must be true or "
                                                                r"false"),
    (lambda m: m["commands"][0]["bindings"].__setitem__("InputTensor", {"name": "input", "offset": 4}),
     r"commands\[0\]\.bindings\.InputTensor\.offset: unknown field; expected one of counter, counterOffsetBytes, "
     r"elementCount, elementOffset, elementSizeInBytes, elementStride, format, name, shape"),
    (lambda m: m["commands"][0]["bindings"].__setitem__("InputTensor", {"name": "input", "format": 5}),
     r"commands\[0\]\.bindings\.InputTensor\.format: 5; it must be a string"),
    (lambda m: m["commands"][0]["bindings"].__setitem__("InputTensor", {"name": "input", "shape": [1.5]}),
     r"commands\[0\]\.bindings\.InputTensor\.shape\[0\]: 1\.5; it must be an integer in \[-2\^63, 2\^63\) \(INT64\)"),
    (lambda m: m["commands"][0]["bindings"].__setitem__("InputTensor", {"name": "input", "elementOffset": -1}),
     r"commands\[0\]\.bindings\.InputTensor\.elementOffset: -1; it must be an integer in \[0, 2\^64\)"),
    (lambda m: m["dispatchables"]["sum"].__setitem__("dmlCompileType", "x" * 1000),
     r"dispatchables\.sum\.dmlCompileType: 'x{60}\.\.\.' \(1000 characters\); it must be DmlCompileOp or "
     r"DmlCompileGraph"),
    (lambda m: m.__setitem__("extra", 1), r"extra: unknown field; expected one of \$schema, commands, dispatchables, "
                                          r"resources"),
    (lambda m: m["resources"]["output"].__setitem__("sizeInBytes", 12.0),
     r"resources\.output\.sizeInBytes: 12\.0; it must be an integer in \[0, 2\^64\)"),
])
def test_json_fields_refused(tmp_path: Path, change: Any, message: str) -> None:
    status, _, stderr = run_cli("dispatch", _write(tmp_path, _mutated(change)))
    assert status == 2 and re.fullmatch(f"error: {message}\n", stderr), stderr


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100 + "]" * 100, r"(\[0\]){65}: nests more than 64 levels deep in .*model\.json; a model needs far fewer"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, r".*model\.json nests too deeply \(a model may nest at most 64 "
                                               r"levels\)"),
    ("[" * 100_000 + "]" * 100_000, r".*model\.json nests too deeply \(a model may nest at most 64 levels\)"),
    ("-1e400", r".*model\.json holds only -1e400, a number beyond every DML data type's range"),
    ('{"resources": {"r": ' + "9" * 100_000 + "}}", r"resources\.r: 9999999999\.\.\.999999 \(100000 digits\) is "
                                                    r"beyond the range of every DML data type .*"),
])
def test_json_documents_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "model.json"
    path.write_text(text)
    status, _, stderr = run_cli("dispatch", path)
    assert status == 2 and re.fullmatch(f"error: {message}\n", stderr), stderr


def test_model_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_bytes(b'{"resources": "\xff"}')
    assert run_cli("dispatch", path) == (2, "", f"error: {path} is not UTF-8 text\n")


# -- files: regular files only ----------------------------------------------------------------------------------------


def test_fifo_source_path_and_model_are_refused_without_hanging(tmp_path: Path) -> None:
    """A FIFO would block a reader forever: refused before it is opened (a subprocess with a timeout, so that a
    regression fails rather than hangs)."""
    os.mkfifo(tmp_path / "pipe.npy")
    os.mkfifo(tmp_path / "pipe.json")
    model = _reduce_model()
    model["resources"]["input"] = {"initialValues": {"sourcePath": "pipe.npy"}}
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "dispatch", str(_write(tmp_path, model))],
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("error: resources.input.initialValues.sourcePath: 'pipe.npy' is a FIFO (named pipe), not "
                             "a regular file; only regular files are read\n")
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "validate", str(tmp_path / "pipe.json")],
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (2, f"error: {tmp_path / 'pipe.json'} is a FIFO (named pipe), not a "
                                                     f"regular file; only regular files are read\n")


def test_directories_devices_and_sockets_are_refused(tmp_path: Path) -> None:
    (tmp_path / "folder.npy").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "socket.bin"))
    (tmp_path / "zero.bin").symlink_to("/dev/zero")
    try:
        for source, kind, extra in (("folder.npy", "a directory", []), ("socket.bin", "a socket", []),
                                    ("zero.bin", "a character device", ["--allow-outside-paths"])):
            model = _reduce_model()
            model["resources"]["input"] = {"initialValuesDataType": "FLOAT32", "initialValues": {"sourcePath": source}}
            status, _, stderr = run_cli("dispatch", _write(tmp_path, model), *extra)
            assert (status, stderr) == (2, f"error: resources.input.initialValues.sourcePath: '{source}' is {kind}, "
                                           f"not a regular file; only regular files are read\n")
    finally:
        server.close()
    for path, kind in ((tmp_path, "a directory"), (Path("/dev/null"), "a character device")):
        assert run_cli("dispatch", path) == (2, "", f"error: {path} is {kind}, not a regular file; only regular files "
                                                    f"are read\n")


@pytest.mark.parametrize(("swap", "kind"), [("fifo", "a FIFO (named pipe)"), ("device", "a character device")])
def test_file_swapped_between_the_check_and_the_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str,
                                                      kind: str) -> None:
    """The path checked with stat is replaced before it is opened: the open descriptor's fstat tells, and a FIFO
    opened there does not block (O_NONBLOCK)."""
    from opendml.model import files

    np.save(tmp_path / "input.npy", np.arange(9, dtype=np.float32))
    real_open = os.open

    def swapping_open(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith("input.npy"):
            os.unlink(path)
            if swap == "fifo":
                os.mkfifo(path)
            else:
                os.symlink("/dev/zero", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(files.os, "open", swapping_open)
    model = _reduce_model()
    model["resources"]["input"] = {"initialValues": {"sourcePath": "input.npy"}}
    status, _, stderr = run_cli("dispatch", _write(tmp_path, model), seconds=60)
    assert (status, stderr) == (2, f"error: resources.input.initialValues.sourcePath: 'input.npy' is {kind}, not a "
                                   f"regular file; only regular files are read\n")


def test_npy_headers_refused(tmp_path: Path) -> None:
    def header(name: str, descr: str, shape: tuple[int, ...], version: bytes = b"\x01\x00") -> None:
        with open(tmp_path / name, "wb") as stream:
            np.lib.format.write_array_header_1_0(stream, {"descr": descr, "fortran_order": False, "shape": shape})
            stream.write(b"\0" * 64)
        data = bytearray((tmp_path / name).read_bytes())
        data[6:8] = version
        (tmp_path / name).write_bytes(bytes(data))

    header("negative.npy", "<f4", (-1,))
    header("quad.npy", "<f16", (2,))
    header("future.npy", "<f4", (2,), b"\x09\x09")
    for name, message in (("negative.npy", "cannot load 'negative.npy': its header declares the shape (-1,)"),
                          ("quad.npy", "'quad.npy' holds float128 data; only arrays of a DML data type's numbers "
                                       "load"),
                          ("future.npy", "cannot load 'future.npy': .npy format version 9.9 is unknown")):
        model = _reduce_model()
        model["resources"]["input"] = {"initialValues": {"sourcePath": name}}
        assert run_cli("dispatch", _write(tmp_path, model))[2] == (
            f"error: resources.input.initialValues.sourcePath: {message}\n")


def test_npy_files_load_in_every_layout(tmp_path: Path) -> None:
    """Big-endian and Fortran-ordered arrays load as the logical array, flat in C order."""
    np.save(tmp_path / "a.npy", np.arange(9, dtype=">f4").reshape(3, 3).T.copy(order="F"))
    model = _reduce_model()
    model["resources"]["input"] = {"initialValues": {"sourcePath": "a.npy"}}
    status, stdout, _ = run_cli("dispatch", _write(tmp_path, model))
    assert status == 0 and stdout.splitlines()[0] == "Resource 'input': 0, 3, 6, 1, 4, 7, 2, 5, 8"


# -- output: escaped ----------------------------------------------------------------------------------------------


def test_names_are_escaped_in_print_print_commands_and_errors(tmp_path: Path) -> None:
    name = "\x1b[2J\x1b[Hfake\nline\u202e"
    model = _reduce_model()
    model["resources"][name] = model["resources"].pop("output")
    model["commands"][0]["bindings"]["OutputTensor"] = name
    model["commands"][2]["resource"] = name
    status, stdout, stderr = run_cli("dispatch", "--print-commands", _write(tmp_path, model))
    escaped = "\\x1b[2J\\x1b[Hfake\\nline\\u202e"
    assert (status, stderr) == (0, "")
    assert stdout.splitlines()[-2:] == [f"commands[2]: print {escaped}", f"Resource '{escaped}': 6, 15, 24"]
    model["commands"].append({"type": "print", "resource": name + "\ud800"})
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(model))      # json writes the lone surrogate as \ud800
    status, stdout, stderr = run_cli("dispatch", path)
    assert (status, stdout) == (2, "")
    assert stderr == f"error: commands[3].resource: '{escaped}\\ud800' is not a resource of this model\n"


def test_printable() -> None:
    from opendml.cli import printable

    assert printable("plain text, é, 日本") == "plain text, é, 日本"
    assert printable("\x1b[31m\x07\x00\x7f\x9b\u2028\u202e\ud800\U0001f600") == \
        "\\x1b[31m\\x07\\x00\\x7f\\x9b\\u2028\\u202e\\ud800\U0001f600"
    assert printable("é 日本 \U0001f600", "ascii") == "\\xe9 \\u65e5\\u672c \\U0001f600"
    assert printable("é", "latin-1") == "é"


def test_output_in_an_ascii_terminal(tmp_path: Path) -> None:
    model = _reduce_model()
    model["resources"]["é"] = model["resources"].pop("output")
    model["commands"][0]["bindings"]["OutputTensor"] = "é"
    model["commands"][2]["resource"] = "é"
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "dispatch", str(_write(tmp_path, model))],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Resource '\\xe9': 6, 15, 24"


# -- command-line options --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-memory", "inf", "'inf' must be a positive size like 512M or 4G"),
    ("--max-memory", "nan", "'nan' must be a positive size like 512M or 4G"),
    ("--max-memory", "-1", "'-1' must be a positive size like 512M or 4G"),
    ("--max-memory", "0", "'0' must be a positive size like 512M or 4G"),
    ("--max-memory", "1e400", "'1e400' is more than 2^64 - 1 bytes"),
    ("--max-memory", "16777216T", "'16777216T' is more than 2^64 - 1 bytes"),
    ("--max-memory", "0.1", "'0.1' is less than 1 byte"),
    ("--max-memory", "lots", "'lots' is not a size like 512M or 4G"),
    ("--max-memory", "9" * 5000, "'" + "9" * 60 + "...' (5000 characters) is more than 2^64 - 1 bytes"),
    ("-i", "0", "'0' is not an integer in [1, 4294967295]"),
    ("-i", "-3", "'-3' is not an integer in [1, 4294967295]"),
    ("-i", "4294967296", "'4294967296' is not an integer in [1, 4294967295]"),
    ("-i", "1e3", "'1e3' is not an integer in [1, 4294967295]"),
    ("-w", "-1", "'-1' is not an integer in [0, 4294967295]"),
    ("-w", "9" * 5000, "'" + "9" * 60 + "...' (5000 characters) is not an integer in [0, 4294967295]"),
    ("-w", "\x1b[2J", "'\\x1b[2J' is not an integer in [0, 4294967295]"),
])
def test_bad_option_values(option: str, value: str, message: str) -> None:
    status, stdout, stderr = run_cli("dispatch", option, value, EXAMPLES / "dml_reduce.json")
    names = {"--max-memory": "--max-memory", "-i": "-i/--dispatch-iterations/--dispatch_iterations",
             "-w": "-w/--warmup-samples/--warmup_samples"}
    assert (status, stdout) == (2, "")
    assert stderr == f"error: argument {names[option]}: {message} (see opendml dispatch --help)\n"


def test_option_values_read_exactly() -> None:
    from opendml.cli import build_parser

    def parsed(*arguments: str) -> argparse.Namespace:
        return build_parser().parse_args(["dispatch", "model.json", *arguments])

    assert parsed("--max-memory", "1.5K").max_memory == 1536
    assert parsed("--max-memory", "18446744073709551615").max_memory == 2**64 - 1     # exact: no float rounding
    assert parsed("--max-memory", " 4gb ").max_memory == 4 << 30
    assert parsed("-i", "4294967295", "-w", "0").dispatch_iterations == 2**32 - 1


def test_unrecognized_arguments_are_escaped() -> None:
    status, _, stderr = run_cli("dispatch", EXAMPLES / "dml_reduce.json", "\x1b[2J\udcff")
    assert (status, stderr) == (2, "error: unrecognized arguments: \\x1b[2J\\udcff (see opendml --help)\n")


def test_binding_element_size_zero_is_the_resources(tmp_path: Path) -> None:
    """DxDispatch reads a binding's elementSizeInBytes 0 (its default) as the resource's element size."""
    model = _reduce_model()
    model["commands"][0]["bindings"]["InputTensor"] = {"name": "input", "elementSizeInBytes": 0, "elementOffset": 0,
                                                       "elementCount": 9, "format": "R32_FLOAT", "shape": [9]}
    assert run_cli("dispatch", _write(tmp_path, model))[1].splitlines()[-1] == "Resource 'output': 6, 15, 24"


# -- validate, print, other dispatchables, the gpu's start (issues 30 and 31) ----------------------------------------


def _argmax_model(axis_direction: Any = "INCREASING") -> dict[str, Any]:
    """ARGMAX over the 4 values of x into y (dispatchable 'a'); `axis_direction` is written as given."""
    return {
        "resources": {"x": {"initialValuesDataType": "FLOAT32", "initialValues": [3, 1, 4, 1]},
                      "y": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 1, "value": 0}}},
        "dispatchables": {"a": {"type": "DML_OPERATOR_ARGMAX", "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
            "OutputTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 1]},
            "AxisCount": 1, "Axes": [3], "AxisDirection": axis_direction}}},
        "commands": [{"type": "dispatch", "dispatchable": "a", "bindings": {"InputTensor": "x", "OutputTensor": "y"}},
                     {"type": "print", "resource": "y"}],
    }


def _mvn_without_type() -> dict[str, Any]:
    model = _argmax_model()
    tensor = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]}
    model["dispatchables"]["a"] = {"type": "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1", "desc": {
        "InputTensor": tensor, "OutputTensor": tensor, "AxisCount": 1, "Axes": [3], "NormalizeVariance": True,
        "Epsilon": 0.0, "FusedActivation": {"Alpha": 2.0}}}
    model["resources"]["y"] = {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 4, "value": 0}}
    return model


AXIS_DIRECTION = r"dispatchables\.a\.desc\.AxisDirection: AxisDirection is .*; it must be one of INCREASING, DECREASING"


@pytest.mark.parametrize(("model", "message"), [
    *[(_argmax_model(value), AXIS_DIRECTION) for value in (2, -1, "UP", None, 1.0, True, [0], {"a": 1})],
    (_mvn_without_type(), r"dispatchables\.a\.desc\.FusedActivation\.Type: is missing"),
], ids=["2", "-1", "UP", "null", "1.0", "true", "[0]", "object", "FusedActivation without Type"])
def test_validate_reports_the_dispatchables_own_error(tmp_path: Path, model: dict[str, Any], message: str) -> None:
    """Issue 30.5: validate said only that commands[0] names no dispatchable; it says what dispatch says, once."""
    path = _write(tmp_path, model)
    status, stdout, dispatched = run_cli("dispatch", path)
    assert (status, stdout) == (2, "") and re.fullmatch(f"error: {message}.*\n", dispatched), dispatched
    assert run_cli("validate", path) == (2, "", dispatched)


def test_validate_reports_every_error_and_nothing_that_follows(tmp_path: Path) -> None:
    """Every problem, in the order a run meets them (the first is the one dispatch reports); a command naming a
    refused resource or dispatchable is not a problem of its own."""
    model = _argmax_model(2)
    model["resources"]["bad"] = {"initialValuesDataType": "UINT8", "initialValues": [256]}
    model["dispatchables"]["sum"] = _reduce_model()["dispatchables"]["sum"]
    model["resources"]["input"] = _reduce_model()["resources"]["input"]
    model["commands"] += [
        {"type": "print", "resource": "bad"},                                       # follows from resources.bad
        {"type": "print", "resource": "missing"},
        {"type": "dispatch", "dispatchable": "a", "bindings": {}},                  # follows from dispatchables.a
        {"type": "writeFile", "resource": "x", "targetPath": "x.txt"},
        {"type": "dispatch", "dispatchable": "sum", "bindings": {"InputTensor": "input", "OutputTensor": "y"}},
    ]
    for tensor in ("InputTensor", "OutputTensor"):    # INT64 needs feature level 5_0: refused by create_operator
        model["dispatchables"]["sum"]["desc"][tensor]["DataType"] = "INT64"
    path = _write(tmp_path, model)
    status, stdout, stderr = run_cli("validate", "--feature-level", "4_1", path)
    assert (status, stdout) == (2, "")
    assert [line.split(":")[1] for line in stderr.splitlines()] == [
        " resources.bad.initialValues[0]", " dispatchables.a.desc.AxisDirection", " commands[3].resource",
        " commands[5].targetPath", " dispatchables.sum.desc.InputTensor.DataType"]
    assert run_cli("dispatch", "--feature-level", "4_1", path)[2] == stderr.splitlines(keepends=True)[0]


def test_a_model_refused_while_parsing_starts_no_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31.5: the adapter starts (a second on the gpu) only once the model has been read; validate still makes
    the device after a problem in reading, to check the operators that were read."""
    import opendml.cli

    made: list[str] = []
    device = opendml.cli.Device
    monkeypatch.setattr(opendml.cli, "Device", lambda **kwargs: made.append(kwargs["backend"]) or device(
        **{**kwargs, "backend": "cpu"}))
    path = _write(tmp_path, _argmax_model("UP"))
    status, _, stderr = run_cli("dispatch", "--backend", "gpu", path)
    assert (status, made) == (2, [])
    assert stderr.startswith("error: dispatchables.a.desc.AxisDirection: ")
    assert run_cli("validate", "--backend", "gpu", path) == (2, "", stderr) and made == ["gpu"]
    assert run_cli("dispatch", "--backend", "gpu", _write(tmp_path, _argmax_model()))[1] == "Resource 'y': 2\n"


PRINTED = [   # (resource, expected): DxDispatch prints the declared elements, not the buffer's padding to 4 bytes
    ({"initialValuesDataType": "UINT8", "initialValues": [1, 2, 3, 4, 5]}, "1, 2, 3, 4, 5"),   # the issue's
    ({"initialValuesDataType": "FLOAT16", "initialValues": [1.5, 2, 3, 4, 5]}, "1.5, 2, 3, 4, 5"),
    ({"initialValuesDataType": "INT8", "initialValues": {"valueCount": 3, "value": -7}}, "-7, -7, -7"),
    ({"initialValuesDataType": "UINT16", "initialValues": {"valueCount": 3, "valueStart": 1, "valueDelta": 1}},
     "1, 2, 3"),
    # An offset: the bytes before the values are declared too (3 bytes, padded to 4).
    ({"initialValuesDataType": "UINT8", "initialValues": [9], "initialValuesOffsetInBytes": 2}, "0, 0, 9"),
    # sizeInBytes declares the size: all of it (whole elements of it) is printed.
    ({"initialValuesDataType": "UINT8", "initialValues": [9], "initialValuesOffsetInBytes": 2, "sizeInBytes": 6},
     "0, 0, 9, 0, 0, 0"),
    ({"initialValuesDataType": "UINT16", "initialValues": [7], "sizeInBytes": 5}, "7, 0"),
    ({"initialValuesDataType": "UINT8", "initialValues": "deferred", "sizeInBytes": 5}, "0, 0, 0, 0, 0"),
    ({"initialValues": {"sourcePath": "five.npy"}}, "1, 2, 3, 4, 5"),
]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_print_shows_the_declared_elements(tmp_path: Path, backend: str) -> None:
    """Issue 30.9: a 5-element UINT8 resource printed 8 values (its buffer's padding to 4 bytes)."""
    import opendml as dml

    if backend == "gpu" and not dml.list_adapters():
        pytest.skip(NO_ADAPTER_REASON)
    np.save(tmp_path / "five.npy", np.arange(1, 6, dtype=np.uint8))
    model: dict[str, Any] = {"resources": {}, "dispatchables": {}, "commands": []}
    for index, (resource, _) in enumerate(PRINTED):
        model["resources"][f"r{index}"] = resource
        model["commands"].append({"type": "print", "resource": f"r{index}"})
    status, stdout, stderr = run_cli("dispatch", "--backend", backend, _write(tmp_path, model))
    assert (status, stderr) == (0, "")
    assert stdout.splitlines() == [f"Resource 'r{index}': {expected}" for index, (_, expected) in enumerate(PRINTED)]


OTHER_DISPATCHABLES = [   # DxDispatch's other dispatchable types, with the fields DxDispatch reads for them
    ("onnx", {"sourcePath": "model.onnx"}, "an ONNX model (ONNX Runtime)"),
    ("HLSL", {"sourcePath": "add.hlsl", "compiler": "dxc", "compilerArgs": ["-T", "cs_6_0"]}, "an HLSL compute shader"),
    ("dmlSerializedGraph", {"sourcePath": "graph.dml"}, "a serialized DirectML graph"),
]


@pytest.mark.parametrize(("kind", "fields", "what"), OTHER_DISPATCHABLES, ids=[case[0] for case in OTHER_DISPATCHABLES])
def test_dispatchables_opendml_does_not_run(tmp_path: Path, kind: str, fields: dict[str, Any], what: str) -> None:
    """Issue 31.4: an ONNX or HLSL dispatchable was refused as `sourcePath: unknown field`, or at a resource of
    DxDispatch's UNKNOWN type (HLSL models' mixed initializers): the type is said first, with what opendml runs."""
    model = _argmax_model()
    model["dispatchables"]["a"] = {"type": kind, **fields}
    model["resources"]["mixed"] = {"initialValuesDataType": "UNKNOWN", "initialValues": "deferred", "sizeInBytes": 8}
    path = _write(tmp_path, model)
    status, stdout, stderr = run_cli("dispatch", path)
    assert (status, stdout) == (2, "")
    assert stderr == (f"error: dispatchables.a.type: '{kind}' dispatchables ({what}) are not supported; opendml runs "
                      f"DirectML operators (a type such as DML_OPERATOR_REDUCE; `opendml ops` lists them)\n")
    assert run_cli("validate", path)[2].splitlines() == [
        stderr.rstrip("\n"), "error: resources.mixed.initialValuesDataType: UNKNOWN resources are not supported"]


@pytest.mark.parametrize(("name", "guess"), [
    ("DML_OPERATOR_REDUCE_SUM", "; did you mean DML_OPERATOR_REDUCE?"),
    ("reduction", "; did you mean DML_OPERATOR_REDUCE?"),
    ("DML_OPERATOR_GATHERND", "; did you mean DML_OPERATOR_GATHER_ND or DML_OPERATOR_GATHER_ND1 or "
                              "DML_OPERATOR_GATHER?"),
    ("RELU", "; did you mean DML_OPERATOR_ACTIVATION_RELU or DML_OPERATOR_ACTIVATION_ELU or "
             "DML_OPERATOR_ACTIVATION_GELU?"),
    ("DML_OPERATOR_LSTM", ""),
    ("x" * 5000, ""),
])
def test_unknown_operator_names_the_closest(tmp_path: Path, name: str, guess: str) -> None:
    """Issue 31.4: an unknown operator got the list of every operator (1,000 characters); now the closest names."""
    import opendml as dml

    count = len(dml.OperatorDesc.registry)
    model = _argmax_model()
    model["dispatchables"]["a"]["type"] = name
    status, _, stderr = run_cli("dispatch", _write(tmp_path, model))
    assert status == 2
    assert stderr.startswith(f"error: dispatchables.a.type: '{name[:50]}")
    assert stderr.endswith(f" is not an operator opendml implements{guess} (`opendml ops` lists the {count} it does)\n")
    assert len(stderr) < 250
    status, _, stderr = run_cli("ops", name)
    assert status == 2 and stderr.startswith("error: operator: ")
    assert stderr.endswith(f" is not an operator opendml implements{guess} (`opendml ops` lists the {count} it does)\n")


def _without_xdg() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}


def test_gpu_start_prints_no_driver_notices(gpu: None, tmp_path: Path) -> None:
    """Issue 31.5: with XDG_RUNTIME_DIR unset (a headless machine, CI), Mesa's Vulkan drivers printed "error:
    XDG_RUNTIME_DIR is invalid or not set in the environment." 4-6 times before opendml's output. The gpu context
    sets it to a private 0700 folder, removed at exit, where it is unset (for the Python API as for the CLI), and
    leaves a set one alone."""
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "dispatch", "--backend", "gpu",
                             str(EXAMPLES / "dml_reduce.json")], capture_output=True, text=True, timeout=300,
                            env=_without_xdg())
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == EXPECTED["dml_reduce.json"]
    code = ("import os, stat, opendml as dml; dml.Device(backend='gpu'); folder = os.environ['XDG_RUNTIME_DIR']; "
            "print(folder, oct(stat.S_IMODE(os.stat(folder).st_mode)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env=_without_xdg())
    assert result.stderr == ""
    folder, mode = result.stdout.split()
    assert mode == "0o700" and os.path.isabs(folder) and not os.path.exists(folder)
    mine = tmp_path / "runtime"
    mine.mkdir(mode=0o700)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "XDG_RUNTIME_DIR": str(mine)})
    assert result.stdout.split() == [str(mine), "0o700"] and mine.exists()


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_write_file_honours_the_umask(tmp_path: Path, umask: int) -> None:
    """Issue 31.7: writeFile's files were 0600 (mkstemp's) whatever the umask; now 0666 less the umask."""
    model = _reduce_model()
    model["commands"].append({"type": "writeFile", "resource": "output", "targetPath": "out.bin"})
    path = _write(tmp_path, model)
    previous = os.umask(umask)
    try:
        status, _, stderr = run_cli("dispatch", path, "--output-path", tmp_path / "out")
    finally:
        os.umask(previous)
    assert (status, stderr) == (0, "")
    assert (tmp_path / "out" / "out.bin").stat().st_mode & 0o777 == 0o666 & ~umask
