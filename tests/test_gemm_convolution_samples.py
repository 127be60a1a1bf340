"""DirectML's four DxDispatch GEMM and CONVOLUTION samples (issue 27), run unchanged through `opendml dispatch` and
`opendml validate` on every backend: cpu with numba's kernels (`cpu`), cpu with the NumPy small-tensor kernels
(`cpu-small`), and gpu.

The samples are byte-for-byte copies of microsoft/DirectML's DxDispatch/models/ files (commit a9614e8; their git
blob ids below). Every expected line is worked out by hand from the model's initializers and the operator's formula
on its DML page, and printed as DxDispatch prints a resource: `Resource 'name': v, v, ...` (`%g`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_elementwise_samples import EXAMPLES, _cli, _git_blob_id, kernels

__all__ = ["kernels"]   # the fixture, shared with the element-wise samples

#: What each sample prints (one FLOAT32 resource each).
EXPECTED = {
    # GEMM, Output = Alpha * A x B + Beta * C with Alpha = Beta = 1, no transposes. A {3, 1} = (1, 2, 3) is a column,
    # B {1, 3} = (4, 5, 6) a row (K = 1), so (A x B)[m, n] = A[m] * B[n]; C {3, 3} is 2 everywhere:
    #   row 0: 1*4 + 2 = 6,  1*5 + 2 = 7,  1*6 + 2 = 8
    #   row 1: 2*4 + 2 = 10, 2*5 + 2 = 12, 2*6 + 2 = 14
    #   row 2: 3*4 + 2 = 14, 3*5 + 2 = 17, 3*6 + 2 = 20
    "dml_gemm.json": ["Resource 'output': 6, 7, 8, 10, 12, 14, 14, 17, 20"],
    # GEMM of {1, 1, 32, 32} ones by {1, 1, 32, 32} ones (B OWNED_BY_DML, bound at initialization), no C, Alpha 1:
    # every output is sum over K = 32 of 1 * 1 = 32, exact in any accumulation order (also in FLOAT16, which the
    # sample's ALLOW_HALF_PRECISION_COMPUTATION permits). The output resource starts at 1 everywhere: all 1024
    # elements are overwritten.
    "dml_gemm_graph.json": ["Resource 'output': " + ", ".join(["32"] * 1024)],
    # CONVOLUTION, 2-D forward cross-correlation, no padding, strides and dilations 1: input {1, 1, 3, 3} = 1..9 in
    # row-major order (rows 1 2 3 / 4 5 6 / 7 8 9), filter {1, 1, 2, 2} all 0.5, output {1, 1, 2, 2} (3 - 2 + 1 = 2
    # per spatial dimension); each output is 0.5 times the sum of its 2x2 window:
    #   [0, 0]: 0.5 * (1 + 2 + 4 + 5) = 6     [0, 1]: 0.5 * (2 + 3 + 5 + 6) = 8
    #   [1, 0]: 0.5 * (4 + 5 + 7 + 8) = 12    [1, 1]: 0.5 * (5 + 6 + 8 + 9) = 14
    "dml_convolution_2d.json": ["Resource 'output': 6, 8, 12, 14"],
    # CONVOLUTION, 3-D: input {1, 1, 3, 3, 3} all 1 (a sequence from 1 by 0), filter {1, 1, 2, 2, 2} all 0.5,
    # output {1, 1, 2, 2, 2}: each output sums 2 * 2 * 2 = 8 products 1 * 0.5 = 4.
    "dml_convolution_3d.json": ["Resource 'output': 4, 4, 4, 4, 4, 4, 4, 4"],
}

#: (resources, dispatchables, commands) of each sample, as `opendml validate` counts them.
COUNTS = {
    "dml_gemm.json": (4, 1, 2),
    "dml_gemm_graph.json": (3, 1, 2),
    "dml_convolution_2d.json": (3, 1, 2),
    "dml_convolution_3d.json": (3, 1, 2),
}

#: The git blob id of each file in microsoft/DirectML (DxDispatch/models/, commit a9614e8): the copies are unchanged.
DIRECTML_BLOBS = {
    "dml_gemm.json": "4b5255fca4e8af6bfbc4529323a778a954253dbc",
    "dml_gemm_graph.json": "d07e1ac0db9a4c61585e448f5ef601081ae21877",
    "dml_convolution_2d.json": "eca636a29c5cceb3ec7a1e44750e25c96d6e4e49",
    "dml_convolution_3d.json": "123eb4524ae9ce5f4f6ada04272ca0912a3aef68",
}


def test_the_samples_are_directml_files_unchanged() -> None:
    assert {name: _git_blob_id((EXAMPLES / name).read_bytes()) for name in DIRECTML_BLOBS} == DIRECTML_BLOBS
    assert set(EXPECTED) == set(COUNTS) == set(DIRECTML_BLOBS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dispatch(kernels: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "dispatch", "--backend", kernels, "--output-path", tmp_path, EXAMPLES / name)
    assert (status, err) == (0, [])
    assert out == EXPECTED[name]


def _valid(name: str, level: str, path: Path | None = None) -> str:
    """validate's line for a valid sample at a feature level (on the cpu backend)."""
    resources, dispatchables, commands = COUNTS[name]
    return (f"{path or EXAMPLES / name}: {resources} resources, {dispatchables} dispatchables, {commands} commands: "
            f"valid at feature level {level}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate(kernels: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _cli(capsys, "validate", "--backend", kernels, EXAMPLES / name)
    assert (status, err) == (0, [])
    where = "" if kernels == "cpu" else r" on the gpu backend, adapter '.*' \(.*\)"
    assert len(out) == 1 and re.fullmatch(re.escape(_valid(name, "6_4")) + where, out[0]), out


def _variant(folder: Path, name: str, change: Any) -> Path:
    """A copy of the sample `name` in `folder` (made if needed) after `change(model)`."""
    model = json.loads((EXAMPLES / name).read_text())
    change(model)
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(model))
    return path


def _twos(model: dict[str, Any]) -> None:
    """dml_gemm_graph.json with B = 2 everywhere."""
    model["resources"]["B"]["initialValues"]["value"] = 2


def _not_owned(model: dict[str, Any]) -> None:
    """dml_gemm_graph.json with B = 2 an ordinary input, bound at the dispatch instead of at initialization."""
    _twos(model)
    gemm = model["dispatchables"]["gemm"]
    del gemm["desc"]["BTensor"]["Flags"], gemm["bindings"]
    model["commands"][0]["bindings"]["BTensor"] = "B"


def test_an_owned_b_gives_the_result_of_an_ordinary_one(kernels: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The result never depends on whether a tensor was owned (bound once at initialization) or bound at the
    dispatch: A = 1 and B = 2 everywhere -> each output is 32 * (1 * 2) = 64, either way."""
    expected = ["Resource 'output': " + ", ".join(["64"] * 1024)]
    for folder, change in (("owned", _twos), ("plain", _not_owned)):
        path = _variant(tmp_path / folder, "dml_gemm_graph.json", change)
        assert _cli(capsys, "dispatch", "--backend", kernels, "--output-path", tmp_path, path) == (0, expected, [])


def test_an_owned_tensor_must_be_bound_at_initialization(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """dml_gemm_graph.json without the dispatchable's binding of its OWNED_BY_DML B is refused, by name."""
    path = _variant(tmp_path, "dml_gemm_graph.json", lambda model: model["dispatchables"]["gemm"].pop("bindings"))
    status, out, err = _cli(capsys, "dispatch", path)
    assert (status, out) == (2, [])
    assert err == ["error: dispatchables.gemm.bindings: BTensor is OWNED_BY_DML; bind it here"]


def test_the_arrays_count_is_dimension_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CONVOLUTION's Strides, Dilations and paddings have DimensionCount entries each (DML_CONVOLUTION_OPERATOR_DESC
    has no count of its own for them): an array of another length is refused at its path."""
    def short_dilations(model: dict[str, Any]) -> None:
        model["dispatchables"]["conv2d"]["desc"]["Dilations"] = [1]

    status, out, err = _cli(capsys, "validate", _variant(tmp_path, "dml_convolution_2d.json", short_dilations))
    assert (status, out) == (2, [])
    assert err == ["error: dispatchables.conv2d.desc.DimensionCount: is 2 but Dilations has 1 entries"]


#: The lowest feature level each sample is valid at, and the problem `validate` reports one level below it (None: the
#: lowest level there is). GEMM takes 4 dimensions at 1_0 and 2 to 4 from 4_0 (dml_gemm.json's are 2-D);
#: CONVOLUTION 4 to 5 at 1_0 (3 to 5 from 4_0).
LEVELS = {
    "dml_gemm.json": ("4_0", "3_1", "gemm.desc.ATensor.DimensionCount: 2 needs feature level 4_0"),
    "dml_gemm_graph.json": ("1_0", None, None),
    "dml_convolution_2d.json": ("1_0", None, None),
    "dml_convolution_3d.json": ("1_0", None, None),
}


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_validate_at_the_lowest_feature_level_and_below(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    lowest, below, problem = LEVELS[name]
    assert _cli(capsys, "validate", "--feature-level", lowest, EXAMPLES / name) == (0, [_valid(name, lowest)], [])
    if below is not None:
        assert _cli(capsys, "validate", "--feature-level", below, EXAMPLES / name) == (
            2, [], [f"error: dispatchables.{problem}; the device is at {below}"])


def _with_activation(activation: dict[str, Any]) -> Any:
    def change(model: dict[str, Any]) -> None:
        model["dispatchables"]["gemm"]["desc"]["FusedActivation"] = activation
    return change


#: dml_gemm.json's A x B + C = 6 7 8 / 10 12 14 / 14 17 20 (EXPECTED) through a softmax over each row, worked out by
#: hand: row (6, 7, 8) -> (e^-2, e^-1, 1) / (1 + 0.36787944 + 0.13533528 = 1.50321472) = 0.0900306, 0.2447285,
#: 0.6652410; row (10, 12, 14) -> (e^-4, e^-2, 1) / 1.15365092 (e^-4 = 0.01831564) = 0.0158762, 0.1173104,
#: 0.8668133; row (14, 17, 20) -> (e^-6, e^-3, 1) / 1.05226582 (e^-6 = 0.00247875, e^-3 = 0.04978707) = 0.00235563,
#: 0.0473142, 0.9503302.
SOFTMAX_ROWS = [0.0900306, 0.2447285, 0.6652410, 0.0158762, 0.1173104, 0.8668133, 0.00235563, 0.0473142, 0.9503302]


@pytest.mark.parametrize(("activation", "expected"), [
    # CLIP to [7, 15] (fused from 6_0, its tensors absent as DxDispatch reads a FusedActivation): 6 -> 7, 17 and
    # 20 -> 15, the rest as they are
    ({"Type": "DML_OPERATOR_ELEMENT_WISE_CLIP", "Min": 7, "Max": 15}, [7, 7, 8, 10, 12, 14, 14, 15, 15]),
    ({"Type": "ELEMENT_WISE_CLIP", "Desc": {"Min": 7, "Max": 15}}, [7, 7, 8, 10, 12, 14, 14, 15, 15]),
    ({"Type": "ACTIVATION_RELU"}, [6, 7, 8, 10, 12, 14, 14, 17, 20]),       # every value positive already
    ({"Type": "DML_OPERATOR_ACTIVATION_SOFTMAX"}, SOFTMAX_ROWS),             # fused-only, from 6_1
    ({"Type": "ACTIVATION_SOFTMAX1", "AxisCount": 1, "Axes": [1]}, SOFTMAX_ROWS),   # its Axes: the last one
])
def test_fused_activations_of_a_model(activation: dict[str, Any], expected: list[float], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, "dml_gemm.json", _with_activation(activation))
    status, out, err = _cli(capsys, "dispatch", path)
    assert (status, err, len(out)) == (0, [], 1) and out[0].startswith("Resource 'output': ")
    printed = [float(value) for value in out[0].removeprefix("Resource 'output': ").split(", ")]
    # printed to 6 significant digits (half a unit of the 6th: at most 5e-6 relative), after FLOAT32's rounding
    np.testing.assert_allclose(printed, expected, rtol=1e-5)


@pytest.mark.parametrize(("activation", "level", "problem"), [
    ({"Type": "ELEMENT_WISE_CLIP", "Min": 7, "Max": 15}, "5_1",
     "FusedActivation: (DML_OPERATOR_ELEMENT_WISE_CLIP) needs feature level 6_0; the device is at 5_1"),
    ({"Type": "ACTIVATION_SOFTMAX"}, "6_0",
     "FusedActivation: (DML_OPERATOR_ACTIVATION_SOFTMAX) needs feature level 6_1; the device is at 6_0"),
    ({"Type": "ACTIVATION_SOFTMAXX"}, "6_4",
     "FusedActivation.Type: 'ACTIVATION_SOFTMAXX' is not an operator opendml implements"),
    ({"Type": "ELEMENT_WISE_CLIP", "Min": 7, "Max": 15, "ScaleBias": {"Scale": 2, "Bias": 0}}, "6_4",
     "FusedActivation.ScaleBias: set; a fused ELEMENT_WISE_CLIP takes no ScaleBias (leave it None)"),
])
def test_fused_activations_a_model_may_not_have(activation: dict[str, Any], level: str, problem: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, "dml_gemm.json", _with_activation(activation))
    status, out, err = _cli(capsys, "validate", "--feature-level", level, path)
    assert (status, out, len(err)) == (2, [], 1)
    assert err[0].startswith(f"error: dispatchables.gemm.desc.{problem}"), err
