"""The gpu backend's specialized REDUCE pass 1 that gives each invocation several of an output's parts
(reduce.VIRTUAL_PARTS, reduce_tree_lanes.wgsl): the same parts folded and combined in the same order as the one
part an invocation pass (VIRTUAL_PARTS = 1, reduce_tree.wgsl), so the same bits, through odd row lengths, odd
start offsets (a FLOAT16 row starting mid-word), padded rows, chunked blocks and outputs that do not fill the last
work-group."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from conftest import gpu_adapter_missing

import opendml as dml
from opendml.backends.gpu import reduce, specialize

pytestmark = pytest.mark.skipif(gpu_adapter_missing() is not None, reason=f"gpu backend: {gpu_adapter_missing()}")

T = dml.TensorDesc

#: (function, data type, sizes, strides, offset in elements, axes); each with enough outputs to fill the work-groups
#: (outputs * parts >= 256 * VIRTUAL_PARTS), as the pass requires.
CASES = [
    ("SUM", "FLOAT16", [64, 37], [40, 1], 3, [1]),           # odd rows, odd start, padded: starts mid-word
    ("SUM", "FLOAT16", [5, 1001], [1001, 1], 1, [1]),       # odd length, odd start: every other row mid-word
    ("L2", "FLOAT16", [4, 4096], [4096, 1], 0, [1]),        # long rows
    ("SUM", "FLOAT32", [4, 70000], [70000, 1], 0, [1]),     # few outputs: chunked, pass 2 combines
    ("AVERAGE", "FLOAT32", [9, 300], [301, 1], 5, [1]),     # 9 outputs: the last work-group is not full
    ("ARGMAX", "FLOAT16", [9, 515], [515, 1], 1, [1]),
    ("MIN", "FLOAT16", [71, 33], [33, 1], 1, [1]),
    ("SUM", "INT32", [4, 999], [999, 1], 0, [1]),
    ("MULTIPLY", "FLOAT32", [6, 777], [779, 1], 1, [1]),    # float products round differently in another order
    ("MULTIPLY", "FLOAT16", [5, 2049], [2049, 1], 1, [1]),
]


def run(function: str, data_type: str, sizes: Sequence[int], strides: Sequence[int], offset: int,
        axes: Sequence[int], data: np.ndarray) -> tuple[np.ndarray, str]:
    """The output buffer's bytes (with sentinels around the output) and the passes' WGSL."""
    dtype = np.dtype(data.dtype)
    source = T(data_type, sizes, strides, total_tensor_size_in_bytes=data.nbytes)
    out_sizes = [1 if axis in axes else size for axis, size in enumerate(sizes)]
    if function == "ARGMAX":
        desc: dml.OperatorDesc = dml.ArgMaxOperatorDesc(source, T("UINT32", out_sizes), list(axes))
    else:
        desc = dml.ReduceOperatorDesc(function, source, T(data_type, out_sizes), list(axes))
    device = dml.Device(backend="gpu")
    compiled = device.compile_operator(device.create_operator(desc))
    view = data[offset:]
    result = compiled(np.lib.stride_tricks.as_strided(view, sizes, [s * dtype.itemsize for s in strides]))
    wgsl = "".join(step.work.wgsl for step in compiled._kernel.steps)  # type: ignore[attr-defined]
    return np.asarray(result[0]).copy(), wgsl


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_parts_played_several_to_an_invocation_give_the_same_bits(case: tuple, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    function, data_type, sizes, strides, offset, axes = case
    monkeypatch.setattr(specialize, "ENABLED", True)
    dtype = np.dtype(dml.DataType[data_type].numpy_dtype)
    rng = np.random.default_rng(29)
    count = offset + (sizes[0] - 1) * strides[0] + sizes[1]
    if function == "MULTIPLY":       # near 1, so that the products stay finite and every rounding shows
        data = (1 + rng.standard_normal(count) / 64).astype(dtype)
    elif dtype.kind == "f":
        # Magnitudes over many binades (FLOAT16's whole range), more than a compensated sum's two words hold, so
        # that a change of order shows in the bits.
        spread = 14 if dtype == np.float16 else 60
        data = (rng.standard_normal(count) * np.exp2(rng.integers(-spread, spread + 1, count))).astype(dtype)
    else:
        data = rng.integers(-1000, 1000, count).astype(dtype)
    lanes, lanes_wgsl = run(function, data_type, sizes, strides, offset, axes, data)
    monkeypatch.setattr(reduce, "VIRTUAL_PARTS", 1)
    single, single_wgsl = run(function, data_type, sizes, strides, offset, axes, data)
    assert "states[j]" in lanes_wgsl and "states[j]" not in single_wgsl
    assert lanes.dtype == single.dtype and lanes.tobytes() == single.tobytes()
