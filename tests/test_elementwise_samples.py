"""DirectML's seven DxDispatch element-wise samples (issue 26), run unchanged through `opendml dispatch` and
`opendml validate` on every backend: cpu with numba's kernels (`cpu`), cpu with the NumPy small-tensor kernels
(`cpu-small`), and gpu.

The samples are byte-for-byte copies of microsoft/DirectML's DxDispatch/models/ files (commit a9614e8; their git
blob ids below), with the two data files dml_element_wise_add_npy.json reads. Every expected line is worked out by
hand from the model's initializers and the operator's formula on its DML page, and printed as DxDispatch prints a
resource: `Resource 'name': v, v, ...`, floats as C++ streams print them (`%g`: 6 significant digits).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import backend_settings, gpu_adapter_missing

import opendml.backends.cpu
from opendml.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "models"

#: What each sample prints. Every tensor is FLOAT32 {3} unless said.
EXPECTED = {
    # ELEMENT_WISE_ADD, f(a, b) = a + b: A = 1, 2, 3; B = 5, 8, -5 -> 1 + 5, 2 + 8, 3 - 5.
    "dml_element_wise_add.json": ["Resource 'Out': 6, 10, -2"],
    # ELEMENT_WISE_ADD1 with a fused ACTIVATION_ELU (Alpha 0.5): ELU(a + b), ELU(x) = x for x > 0, else
    # Alpha * (exp(x) - 1). The sums 6, 10 stay; ELU(-2) = 0.5 * (0.1353352832366127 - 1) = -0.43233235838...,
    # -0.432332 to 6 significant digits (the 7th digit is 3: no FLOAT32 rounding or 4-ulp error changes it).
    "dml_element_wise_add1.json": ["Resource 'Out': 6, 10, -0.432332"],
    # ELEMENT_WISE_ADD of FLOAT32 {6}: A from the .npy (<f4, shape (6,): 1..6), B from the raw .dat (the same 24
    # bytes: 0x3f800000 = 1, 0x40000000 = 2, ..., 0x40c00000 = 6) -> 2, 4, ..., 12; then written to
    # dml_element_wise_add_output.npy (dimensions [6]) and .dat (test_add_npy_writes_its_files).
    "dml_element_wise_add_npy.json": ["Resource 'Out': 2, 4, 6, 8, 10, 12"],
    # ELEMENT_WISE_CLIP, in place (InputTensor and OutputTensor both bound to A), FLOAT32 {9}:
    # f(x) = max(Min, min(x, Max)) with Min -2.5, Max 2.5 over -4..4.
    "dml_element_wise_clip.json": ["Resource 'A': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5"],
    # ELEMENT_WISE_IDENTITY with ScaleBias {Scale 2, Bias 10}: f(x * 2 + 10) = x * 2 + 10 over 1, 2, 3.
    "dml_element_wise_identity.json": ["Resource 'Out': 12, 14, 16"],
    # ELEMENT_WISE_ADD with ATensor OWNED_BY_DML: A (1, 2, 3) is bound at the dispatchable (the operator's
    # initialization), B (5, 8, -5) and Out at the dispatch -> the sums of dml_element_wise_add.json.
    "dml_owned_tensors.json": ["Resource 'Out': 6, 10, -2"],
    # ELEMENT_WISE_CLIP1, FLOAT16 {5}: input 1, 2, 3, 4, 5 (a sequence from 1 by 1; each exact in FLOAT16);
    # MinMaxDataType FLOAT16, Min 2 (0x4000), Max 4 (0x4400), both exact -> 2, 2, 3, 4, 4, each exact in FLOAT16.
    "dml_scalar_union_fp16.json": ["Resource 'output': 2, 2, 3, 4, 4"],
}

#: (resources, dispatchables, commands) of each sample, as `opendml validate` counts them.
COUNTS = {
    "dml_element_wise_add.json": (3, 1, 2),
    "dml_element_wise_add1.json": (3, 1, 2),
    "dml_element_wise_add_npy.json": (3, 1, 4),
    "dml_element_wise_clip.json": (1, 1, 2),
    "dml_element_wise_identity.json": (2, 1, 2),
    "dml_owned_tensors.json": (3, 1, 2),
    "dml_scalar_union_fp16.json": (2, 1, 2),
}

#: The git blob id of each file in microsoft/DirectML (DxDispatch/models/, commit a9614e8): the copies are unchanged.
DIRECTML_BLOBS = {
    "dml_element_wise_add.json": "db9d0c8af6bcfb38ee70eb860d952d92ad60a3b3",
    "dml_element_wise_add1.json": "7e64bdf589c014ed88cb2a04440686216b652fbd",
    "dml_element_wise_add_input.dat": "cc239b1d366323c00843f32cbdb3258718f23488",
    "dml_element_wise_add_input.npy": "6bfcf217479bf9eda61f416ef8daed687810067f",
    "dml_element_wise_add_npy.json": "e7d3361588f3cfe32d9bb682222014d4df32782d",
    "dml_element_wise_clip.json": "eca0d8e1de2d0ea146f27df0ae6d2f6708ab9ea1",
    "dml_element_wise_identity.json": "bdc125f7501331075b8d226db49436f409c58f38",
    "dml_owned_tensors.json": "d819db3f746197a21a8e3392157451e616392d79",
    "dml_scalar_union_fp16.json": "21dd0bff2a2e9d10417f7d36fef7885431e900fb",
}

#: The lowest feature level each sample is valid at, and the problem `validate` reports one level below it. Every
#: tensor is 1-D: element-wise operators take 1 to 8 dimensions from 3_0 (4 to 5 at 2_x, 4 at 1_0); CLIP1 exists
#: from 5_0. The first tensor checked is the first in the struct.
LEVELS = {
    "dml_element_wise_add.json": ("3_0", "2_1", "add.desc.ATensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_element_wise_add1.json": ("3_0", "2_1", "add.desc.ATensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_element_wise_add_npy.json": ("3_0", "2_1", "add.desc.ATensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_element_wise_clip.json": ("3_0", "2_1", "clip.desc.InputTensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_element_wise_identity.json": ("3_0", "2_1",
                                       "identity.desc.InputTensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_owned_tensors.json": ("3_0", "2_1", "add.desc.ATensor.DimensionCount: 1 needs feature level 3_0"),
    "dml_scalar_union_fp16.json": ("5_0", "4_1",
                                   "clip.desc.DML_OPERATOR_ELEMENT_WISE_CLIP1: needs feature level 5_0"),
}

KERNELS = ["cpu", "cpu-small", "gpu"]


@pytest.fixture(params=KERNELS)
def kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The device backend (`--backend`) whose kernels run the sample: cpu with every tensor on numba's kernels,
    cpu with every tensor on the NumPy small-tensor kernels (conftest.backend_settings), or gpu."""
    name: str = request.param
    if name == "gpu":
        reason = gpu_adapter_missing()
        if reason is not None:
            pytest.skip(f"gpu backend: {reason}")
    device_backend, limits = backend_settings(name)
    for limit, value in limits.items():
        monkeypatch.setattr(opendml.backends.cpu, limit, value)
    return device_backend


def _cli(capsys: pytest.CaptureFixture[str], *arguments: str | Path) -> tuple[int, list[str], list[str]]:
    """(exit status, stdout lines, stderr lines) of `opendml ARGUMENTS`, run in this process."""
    capsys.readouterr()
    status = main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.splitlines()


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_the_samples_are_directml_files_unchanged() -> None:
    assert {name: _git_blob_id((EXAMPLES / name).read_bytes()) for name in DIRECTML_BLOBS} == DIRECTML_BLOBS
    assert set(EXPECTED) == set(COUNTS) == set(LEVELS) == {name for name in DIRECTML_BLOBS if name.endswith(".json")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dispatch(kernels: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "dispatch", "--backend", kernels, "--output-path", tmp_path, EXAMPLES / name)
    assert (status, err) == (0, [])
    assert out == EXPECTED[name]


def test_add_npy_writes_its_files(kernels: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _cli(capsys, "dispatch", "--backend", kernels, "--output-path", tmp_path,
                          EXAMPLES / "dml_element_wise_add_npy.json")
    assert (status, err) == (0, [])
    written = np.load(tmp_path / "dml_element_wise_add_output.npy", allow_pickle=False)
    assert written.dtype == np.float32 and written.shape == (6,)
    assert written.tolist() == [2, 4, 6, 8, 10, 12]
    raw = (tmp_path / "dml_element_wise_add_output.dat").read_bytes()
    assert raw == np.array([2, 4, 6, 8, 10, 12], "<f4").tobytes()       # the 24 bytes of Out, nothing more
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dml_element_wise_add_output.dat",
                                                               "dml_element_wise_add_output.npy"]


def _valid(name: str, level: str) -> str:
    """validate's line for a valid sample at a feature level (on the cpu backend)."""
    resources, dispatchables, commands = COUNTS[name]
    return (f"{EXAMPLES / name}: {resources} resources, {dispatchables} dispatchables, {commands} commands: valid at "
            f"feature level {level}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate(kernels: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "validate", "--backend", kernels, EXAMPLES / name)
    assert (status, err) == (0, [])
    where = "" if kernels == "cpu" else r" on the gpu backend, adapter '.*' \(.*\)"
    assert len(out) == 1 and re.fullmatch(re.escape(_valid(name, "6_4")) + where, out[0]), out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate_at_the_lowest_feature_level_and_below(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    lowest, below, problem = LEVELS[name]
    assert _cli(capsys, "validate", "--feature-level", lowest, EXAMPLES / name) == (0, [_valid(name, lowest)], [])
    assert _cli(capsys, "validate", "--feature-level", below, EXAMPLES / name) == (
        2, [], [f"error: dispatchables.{problem}; the device is at {below}"])


def test_a_user_runs_add_npy_in_a_folder(tmp_path: Path) -> None:
    """As a user would (a process of its own, no --output-path): writeFile's files land in the current folder."""
    result = subprocess.run([sys.executable, "-m", "opendml.cli", "dispatch",
                             str(EXAMPLES / "dml_element_wise_add_npy.json")],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED["dml_element_wise_add_npy.json"]
    assert np.load(tmp_path / "dml_element_wise_add_output.npy").tolist() == [2, 4, 6, 8, 10, 12]
    assert (tmp_path / "dml_element_wise_add_output.dat").stat().st_size == 24
