#!/usr/bin/env python
"""Data-movement benchmark (issue 28): SLICE, CAST, PADDING, TILE, GATHER, SCATTER_ND, DEPTH_TO_SPACE, scans,
TOP_K and UPSAMPLE_2D against NumPy, PyTorch and ONNX Runtime, as ratios over a memory-copy floor of the same bytes.

    python bench/bench_data_movement.py              # full run, 11 rounds (a few minutes on 2 cores; under 2 GiB)
    python bench/bench_data_movement.py --quick      # 5 rounds per workload
    python bench/bench_data_movement.py --only CUMSUM --repeat 31
    python bench/bench_data_movement.py --scale 256 --repeat 1 --quick   # 1/256 of each tensor (the smoke test)

Workloads (FLOAT32 unless said; 64 MiB per full-size tensor; `--scale S` divides the leading size by S):
SLICE of a strided window (every second row of [4096, 4096], columns 1024 to 3071: Strides [2, 1]); SLICE1 reversing
the last axis of [4096, 4096] (InputWindowStrides [1, -1]); CAST FLOAT32 -> FLOAT16 of [4096, 4096] and INT64 ->
INT32 of [2048, 4096]; PADDING CONSTANT (1.5) and REFLECTION of [16, 64, 128, 128] by 2 on height and width; TILE of
[16, 64, 64, 64] by [1, 1, 2, 2]; GATHER of rows (axis 0) of a [262144, 64] table by 262144 INT64 indices, and
along the last axis of [4096, 4096] by 4096 indices; GATHER_ELEMENTS along the last axis of [2048, 4096] by INT64
[2048, 4096]; SCATTER_ND of 65536 distinct rows into a [262144, 64] table; DEPTH_TO_SPACE (DCR) of
[16, 256, 64, 64] by 2; CUMULATIVE_SUMMATION of [4096, 4096] over the last axis and over axis 0; TOP_K with K = 8
over the rows of [4096, 4096]; UPSAMPLE_2D 2x of [16, 64, 64, 64], NEAREST_NEIGHBOR and LINEAR. Indices are drawn
at random within range (no clamping to disagree on).

The floor of a workload is an np.copyto of (bytes read + bytes written) / 2 bytes between two preallocated arrays:
it moves exactly the operator's traffic (each input counted once, SCATTER_ND's output once). Every implementation
writes into caller-provided, preallocated outputs (reused dml.Bindings in opendml; out= or slice assignment in
NumPy and PyTorch, PyTorch with its default threads and with one; an io_binding to preallocated OrtValues of a
one-node opset-20 model in ONNX Runtime, one intra-op thread). The implementations of a workload are timed
interleaved, round after round, so drift hits all of them alike; the table shows each one's MEDIAN time over the
floor's, and the targets section opendml's time over the fastest correct peer's.

Targets (the issue's): copies (SLICE, SLICE1, CAST, PADDING, TILE, DEPTH_TO_SPACE, UPSAMPLE nearest) within 1.2x
of the floor, gathers and scatters within 1.5x, the scans within 1.5x, TOP_K and UPSAMPLE LINEAR within 2x; every
workload ahead of the fastest peer. A workload whose operator opendml does not implement yet (SCATTER_ND, TOP_K
while they are being written) is timed for its peers, opendml shown as "-" (`_harness.Unavailable`).

Checks, once per implementation into poisoned outputs: opendml bit for bit against a NumPy reference where the
result is exact (every copy and gather, CAST rounded once, the scans against NumPy's sequential FLOAT32
accumulation), UPSAMPLE LINEAR within 1e-6 of the float64 blend; TOP_K's values bit for bit and each index pointing
at its value; every peer loosely (1e-3). The cpu backend's cold start is off (opendml.backends.cpu.COLD_START):
every timed call runs numba's kernel, its first call compiling it where numba's cache does not hold it yet.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import _harness as h
import numpy as np
from _harness import NUMPY, OPENDML, Array, Outcome, Runner, onnx, torch

import opendml as dml
from opendml.backends import cpu

COPY, GATHER, SCAN, HEAVY = 1.2, 1.5, 1.5, 2.0   # targets: ratio over the floor
OPSET, IR_VERSION = 20, 9   # ONNX Runtime's one-node models

# A descriptor class opendml does not have yet (or fields it names otherwise): opendml's column is "-".
NOT_YET = (AttributeError, ModuleNotFoundError, NotImplementedError, TypeError, dml.UnsupportedError)


def tensor(data_type: str, sizes: tuple[int, ...]) -> dml.TensorDesc:
    return dml.TensorDesc(getattr(dml.DataType, data_type), sizes)


# -- what a workload is -----------------------------------------------------------------------------------------

@dataclass
class Spec:
    """One workload at its size: opendml's descriptor (built when called), its inputs in slot order, its outputs'
    (shape, dtype), the expected outputs, how each implementation computes, and the ONNX node."""

    desc: Callable[[], dml.OperatorDesc]
    inputs: list[Array]
    outputs: list[tuple[tuple[int, ...], Any]]
    expected: list[Array]
    numpy: Callable[[list[Array]], Callable[[], object]]        # (outputs) -> the call
    torch: Callable[[list[Any]], Callable[[], object]]          # (output tensors over the outputs) -> the call
    onnx_op: str
    onnx_inputs: dict[str, Array]
    onnx_constants: dict[str, Array] = field(default_factory=dict)   # initializers (Pad's pads, CumSum's axis, ...)
    onnx_attributes: dict[str, Any] = field(default_factory=dict)
    onnx_outputs: list[tuple[tuple[int, ...], Any]] | None = None    # where ONNX's output types differ
    exact: bool = True          # opendml bit for bit; else within `tolerance` of the float64 expected values
    tolerance: float = 0.0
    top_k: bool = False         # outputs are (values, indices): indices checked by the value they point at
    numpy_note: str = ""
    torch_note: str = ""

    @property
    def moved(self) -> int:
        """Bytes read (each input once) plus bytes written."""
        written = sum(math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in self.outputs)
        return sum(array.nbytes for array in self.inputs) + written

    def new_outputs(self, shapes: list[tuple[tuple[int, ...], Any]] | None = None) -> list[Array]:
        return [np.empty(shape, dtype) for shape, dtype in (shapes or self.outputs)]


@dataclass(frozen=True)
class Workload:
    label: str
    build: Callable[[np.random.Generator, int], Spec]   # (rng, divisor of the leading size) -> its Spec
    target: float


def leading(size: int, scale: int) -> int:
    return max(1, size // scale)


# -- the copies -------------------------------------------------------------------------------------------------

def slice_window(rng: np.random.Generator, scale: int) -> Spec:
    """SLICE: Offsets [0, 1024], Sizes [R / 2, 2048], Strides [2, 1] of [R, 4096]."""
    rows = leading(4096, scale)
    x = rng.standard_normal((rows, 4096), dtype=np.float32)
    out_rows = (rows + 1) // 2
    view = (slice(0, None, 2), slice(1024, 3072))
    expected = x[view].copy()

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, out = torch.from_numpy(x), outs[0]
        return lambda: out.copy_(tx[view])

    return Spec(lambda: dml.SliceOperatorDesc(tensor("FLOAT32", x.shape), tensor("FLOAT32", expected.shape), 2,
                                              (0, 1024), expected.shape, (2, 1)),
                [x], [((out_rows, 2048), np.float32)], [expected],
                lambda outs: lambda: np.copyto(outs[0], x[view]), torch_call, "Slice", {"x": x},
                {"starts": np.array([0, 1024], np.int64), "ends": np.array([rows, 3072], np.int64),
                 "axes": np.array([0, 1], np.int64), "steps": np.array([2, 1], np.int64)},
                numpy_note="np.copyto(out, x[::2, 1024:3072])", torch_note="out.copy_(x[::2, 1024:3072])")


def slice_reversed(rng: np.random.Generator, scale: int) -> Spec:
    """SLICE1 reversing the last axis: InputWindowStrides [1, -1] over the whole of [R, 4096]."""
    rows = leading(4096, scale)
    x = rng.standard_normal((rows, 4096), dtype=np.float32)
    expected = x[:, ::-1].copy()

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, out, backwards = torch.from_numpy(x), outs[0], torch.arange(4095, -1, -1)
        return lambda: torch.index_select(tx, 1, backwards, out=out)

    return Spec(lambda: dml.Slice1OperatorDesc(tensor("FLOAT32", x.shape), tensor("FLOAT32", x.shape), 2, (0, 0),
                                               x.shape, (1, -1)),
                [x], [(x.shape, np.float32)], [expected],
                lambda outs: lambda: np.copyto(outs[0], x[:, ::-1]), torch_call, "Slice", {"x": x},
                {"starts": np.array([-1], np.int64), "ends": np.array([-(2 ** 63)], np.int64),
                 "axes": np.array([1], np.int64), "steps": np.array([-1], np.int64)},
                numpy_note="np.copyto(out, x[:, ::-1])",
                torch_note="index_select(dim 1, out=) by descending indices (PyTorch has no negative strides)")


def cast(source: Any, target: Any, rows: int) -> Callable[[np.random.Generator, int], Spec]:
    """CAST of [rows, 4096]: FLOAT32 -> FLOAT16 rounded once (nearest, ties to even), INT64 -> INT32 of values within
    INT32's range."""
    def build(rng: np.random.Generator, scale: int) -> Spec:
        shape = (leading(rows, scale), 4096)
        if np.dtype(source).kind == "f":
            x = (rng.standard_normal(shape, dtype=np.float32) * 100).astype(source)
        else:
            x = rng.integers(-2 ** 31, 2 ** 31, shape, dtype=np.int64).astype(source)
        expected = x.astype(target)
        names = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16", np.dtype(np.int64): "INT64",
                 np.dtype(np.int32): "INT32"}

        def torch_call(outs: list[Any]) -> Callable[[], object]:
            tx, out = torch.from_numpy(x), outs[0]
            return lambda: out.copy_(tx)

        return Spec(lambda: dml.CastOperatorDesc(tensor(names[np.dtype(source)], shape),
                                                 tensor(names[np.dtype(target)], shape)),
                    [x], [(shape, target)], [expected],
                    lambda outs: lambda: np.copyto(outs[0], x, casting="unsafe"), torch_call, "Cast", {"x": x},
                    onnx_attributes={"to": onnx.helper.np_dtype_to_tensor_dtype(np.dtype(target))} if onnx else {},
                    numpy_note="np.copyto(out, x, casting='unsafe')", torch_note="out.copy_(x)")
    return build


PAD = 2   # PADDING's StartPadding = EndPadding on height and width


def pad_by_slices(out: Any, x: Any, value: float | None) -> None:
    """out = x padded by PAD on its last two axes, as slice assignments that work on NumPy arrays and PyTorch tensors
    alike: CONSTANT (`value`) fills the border; REFLECTION (`value` None) copies the interior, then reflects the
    columns from the input and the rows from the output's own padded rows."""
    height, width = x.shape[-2:]
    p = PAD
    out[..., p:p + height, p:p + width] = x
    if value is not None:
        out[..., :p, :] = value
        out[..., p + height:, :] = value
        out[..., p:p + height, :p] = value
        out[..., p:p + height, p + width:] = value
        return
    for k in range(p):
        out[..., p:p + height, p - 1 - k] = x[..., :, k + 1]
        out[..., p:p + height, p + width + k] = x[..., :, width - 2 - k]
    for k in range(p):
        out[..., p - 1 - k, :] = out[..., p + k + 1, :]
        out[..., p + height + k, :] = out[..., p + height - 2 - k, :]


def padding(mode: str) -> Callable[[np.random.Generator, int], Spec]:
    """PADDING of [16, 64, 128, 128] by 2 on both sides of height and width: CONSTANT 1.5 or REFLECTION."""
    def build(rng: np.random.Generator, scale: int) -> Spec:
        shape = (leading(16, scale), 64, 128, 128)
        x = rng.standard_normal(shape, dtype=np.float32)
        out_shape = (*shape[:2], 128 + 2 * PAD, 128 + 2 * PAD)
        value = 1.5 if mode == "CONSTANT" else None
        widths = ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD))
        expected = np.pad(x, widths, mode="constant", constant_values=1.5) if value is not None else \
            np.pad(x, widths, mode="reflect")

        def torch_call(outs: list[Any]) -> Callable[[], object]:
            tx, out = torch.from_numpy(x), outs[0]
            return lambda: pad_by_slices(out, tx, value)

        constants = {"pads": np.array([0, 0, PAD, PAD, 0, 0, PAD, PAD], np.int64)}
        if value is not None:
            constants["constant_value"] = np.array(value, np.float32)
        return Spec(lambda: dml.PaddingOperatorDesc(tensor("FLOAT32", shape), tensor("FLOAT32", out_shape), mode,
                                                    value or 0.0, 4, (0, 0, PAD, PAD), (0, 0, PAD, PAD)),
                    [x], [(out_shape, np.float32)], [expected],
                    lambda outs: lambda: pad_by_slices(outs[0], x, value), torch_call, "Pad", {"x": x}, constants,
                    {"mode": "constant" if value is not None else "reflect"},
                    numpy_note="slice assignments into out (np.pad allocates)",
                    torch_note="the same slice assignments on tensors (F.pad allocates)")
    return build


def tile(rng: np.random.Generator, scale: int) -> Spec:
    """TILE of [16, 64, 64, 64] by Repeats [1, 1, 2, 2]."""
    shape = (leading(16, scale), 64, 64, 64)
    x = rng.standard_normal(shape, dtype=np.float32)
    out_shape = (*shape[:2], 128, 128)
    split = (*shape[:2], 2, 64, 2, 64)
    expected = np.tile(x, (1, 1, 2, 2))
    spread = x[:, :, None, :, None, :]

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        view, source = outs[0].view(split), torch.from_numpy(x)[:, :, None, :, None, :]
        return lambda: view.copy_(source)

    return Spec(lambda: dml.TileOperatorDesc(tensor("FLOAT32", shape), tensor("FLOAT32", out_shape), 4, (1, 1, 2, 2)),
                [x], [(out_shape, np.float32)], [expected],
                lambda outs: lambda: np.copyto(outs[0].reshape(split), spread), torch_call, "Tile", {"x": x},
                {"repeats": np.array([1, 1, 2, 2], np.int64)},
                numpy_note="np.copyto of a broadcast view into out split as [N, C, 2, H, 2, W] (np.tile allocates)",
                torch_note="copy_ of the same broadcast view")


def depth_to_space(rng: np.random.Generator, scale: int) -> Spec:
    """DEPTH_TO_SPACE (DCR) of [16, 256, 64, 64] with BlockSize 2: output[n, c, h b + i, w b + j] =
    input[n, (i b + j) C' + c, h, w]."""
    n, channels, block = leading(16, scale), 256, 2
    x = rng.standard_normal((n, channels, 64, 64), dtype=np.float32)
    inner = channels // (block * block)
    out_shape = (n, inner, 64 * block, 64 * block)
    source = x.reshape(n, block, block, inner, 64, 64).transpose(0, 3, 4, 1, 5, 2)
    expected = np.ascontiguousarray(source).reshape(out_shape)
    split = (n, inner, 64, block, 64, block)

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        view = outs[0].view(split)
        moved = torch.from_numpy(x).view(n, block, block, inner, 64, 64).permute(0, 3, 4, 1, 5, 2)
        return lambda: view.copy_(moved)

    return Spec(lambda: dml.DepthToSpaceOperatorDesc(tensor("FLOAT32", x.shape), tensor("FLOAT32", out_shape),
                                                     block),
                [x], [(out_shape, np.float32)], [expected],
                lambda outs: lambda: np.copyto(outs[0].reshape(split), source), torch_call, "DepthToSpace",
                {"x": x}, onnx_attributes={"blocksize": block, "mode": "DCR"},
                numpy_note="np.copyto of the transposed 6-D view", torch_note="copy_ of the permuted 6-D view "
                                                                          "(pixel_shuffle is CRD and allocates)")


# -- the gathers and the scatter --------------------------------------------------------------------------------

def gather_rows(rng: np.random.Generator, scale: int) -> Spec:
    """GATHER along axis 0 of a [R * 64, 64] table by R * 64 INT64 indices (IndicesTensor [1, R * 64])."""
    count = leading(4096, scale) * 64
    x = rng.standard_normal((count, 64), dtype=np.float32)
    indices = rng.integers(0, count, (1, count), dtype=np.int64)
    flat = indices.reshape(-1)
    expected = x[flat]

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, ti, out = torch.from_numpy(x), torch.from_numpy(flat), outs[0]
        return lambda: torch.index_select(tx, 0, ti, out=out)

    return Spec(lambda: dml.GatherOperatorDesc(tensor("FLOAT32", x.shape), tensor("INT64", indices.shape),
                                               tensor("FLOAT32", expected.shape), 0, 1),
                [x, indices], [(expected.shape, np.float32)], [expected],
                lambda outs: lambda: np.take(x, flat, axis=0, out=outs[0], mode="clip"), torch_call, "Gather",
                {"x": x, "i": flat}, onnx_attributes={"axis": 0},
                numpy_note="np.take(axis=0, out=, mode='clip')", torch_note="index_select(out=)")


def gather_columns(rng: np.random.Generator, scale: int) -> Spec:
    """GATHER along the last axis of [R, 4096] by 4096 INT64 indices (IndicesTensor [1, 4096])."""
    x = rng.standard_normal((leading(4096, scale), 4096), dtype=np.float32)
    indices = rng.integers(0, 4096, (1, 4096), dtype=np.int64)
    flat = indices.reshape(-1)
    expected = x[:, flat]

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, ti, out = torch.from_numpy(x), torch.from_numpy(flat), outs[0]
        return lambda: torch.index_select(tx, 1, ti, out=out)

    return Spec(lambda: dml.GatherOperatorDesc(tensor("FLOAT32", x.shape), tensor("INT64", indices.shape),
                                               tensor("FLOAT32", expected.shape), 1, 1),
                [x, indices], [(expected.shape, np.float32)], [expected],
                lambda outs: lambda: np.take(x, flat, axis=1, out=outs[0], mode="clip"), torch_call, "Gather",
                {"x": x, "i": flat}, onnx_attributes={"axis": 1},
                numpy_note="np.take(axis=1, out=, mode='clip')", torch_note="index_select(dim 1, out=)")


def gather_elements(rng: np.random.Generator, scale: int) -> Spec:
    """GATHER_ELEMENTS along the last axis of [R, 4096] by INT64 [R, 4096]."""
    shape = (leading(2048, scale), 4096)
    x = rng.standard_normal(shape, dtype=np.float32)
    indices = rng.integers(0, 4096, shape, dtype=np.int64)
    expected = np.take_along_axis(x, indices, axis=1)
    starts = (np.arange(shape[0], dtype=np.int64) * 4096)[:, None]
    linear = np.empty(shape, np.int64)
    flat_x = x.reshape(-1)

    def numpy_call(outs: list[Array]) -> Callable[[], object]:
        def run() -> None:
            np.add(indices, starts, out=linear)
            np.take(flat_x, linear.reshape(-1), out=outs[0].reshape(-1), mode="clip")
        return run

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, ti, out = torch.from_numpy(x), torch.from_numpy(indices), outs[0]
        return lambda: torch.gather(tx, 1, ti, out=out)

    return Spec(lambda: dml.GatherElementsOperatorDesc(tensor("FLOAT32", shape), tensor("INT64", shape),
                                                       tensor("FLOAT32", shape), 1),
                [x, indices], [(shape, np.float32)], [expected], numpy_call, torch_call, "GatherElements",
                {"x": x, "i": indices}, onnx_attributes={"axis": 1},
                numpy_note="linear index into a preallocated int64 buffer, then np.take(out=, mode='clip') "
                           "(take_along_axis allocates)", torch_note="torch.gather(out=)")


def scatter_nd_rows(rng: np.random.Generator, scale: int) -> Spec:
    """SCATTER_ND of R * 16 distinct rows (INT64 IndicesTensor [R * 16, 1], UpdatesTensor [R * 16, 64]) into a
    [R * 64, 64] table; the output is the table with those rows replaced."""
    count = leading(4096, scale) * 64
    updated = count // 4
    x = rng.standard_normal((count, 64), dtype=np.float32)
    indices = rng.permutation(count)[:updated].astype(np.int64).reshape(updated, 1)
    flat = indices.reshape(-1)
    updates = rng.standard_normal((updated, 64), dtype=np.float32)
    expected = x.copy()
    expected[flat] = updates

    def desc() -> dml.OperatorDesc:
        scatter: Any = dml.ScatterNdOperatorDesc  # type: ignore[attr-defined]  (being written: issue 28)
        return scatter(input_tensor=tensor("FLOAT32", x.shape), indices_tensor=tensor("INT64", indices.shape),
                       updates_tensor=tensor("FLOAT32", updates.shape), output_tensor=tensor("FLOAT32", x.shape),
                       input_dimension_count=2, indices_dimension_count=2)

    def numpy_call(outs: list[Array]) -> Callable[[], object]:
        def run() -> None:
            np.copyto(outs[0], x)
            outs[0][flat] = updates
        return run

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, ti, tu, out = torch.from_numpy(x), torch.from_numpy(flat), torch.from_numpy(updates), outs[0]

        def run() -> None:
            out.copy_(tx)
            out.index_copy_(0, ti, tu)
        return run

    return Spec(desc, [x, indices, updates], [(x.shape, np.float32)], [expected], numpy_call, torch_call,
                "ScatterND", {"x": x, "i": indices, "u": updates},
                numpy_note="np.copyto, then out[rows] = updates", torch_note="copy_, then index_copy_")


# -- the scans, TOP_K and UPSAMPLE_2D ---------------------------------------------------------------------------

def cumulative_sum(axis: int) -> Callable[[np.random.Generator, int], Spec]:
    """CUMULATIVE_SUMMATION over `axis` of [R, 4096] (inclusive, increasing): each line tallied in order in
    FLOAT32, as np.cumsum does, so the result is exact against it."""
    def build(rng: np.random.Generator, scale: int) -> Spec:
        shape = (leading(4096, scale), 4096)
        x = rng.standard_normal(shape, dtype=np.float32)
        expected = np.cumsum(x, axis=axis, dtype=np.float32)

        def torch_call(outs: list[Any]) -> Callable[[], object]:
            tx, out = torch.from_numpy(x), outs[0]
            return lambda: torch.cumsum(tx, axis, out=out)

        return Spec(lambda: dml.CumulativeSummationOperatorDesc(tensor("FLOAT32", shape), tensor("FLOAT32", shape),
                                                                axis, "INCREASING", False),
                    [x], [(shape, np.float32)], [expected],
                    lambda outs: lambda: np.cumsum(x, axis=axis, out=outs[0]), torch_call, "CumSum", {"x": x},
                    {"axis": np.array(axis, np.int64)}, numpy_note="np.cumsum(out=)", torch_note="torch.cumsum(out=)")
    return build


K = 8


def top_k(rng: np.random.Generator, scale: int) -> Spec:
    """TOP_K with K = 8 over the last axis of [R, 4096]: the largest values first, and their UINT32 indices."""
    shape = (leading(4096, scale), 4096)
    x = rng.standard_normal(shape, dtype=np.float32)
    order = np.argsort(-x, axis=1, kind="stable")[:, :K]
    expected_values = np.take_along_axis(x, order, axis=1)
    out_shape = (shape[0], K)

    def desc() -> dml.OperatorDesc:
        operator: Any = dml.TopKOperatorDesc  # type: ignore[attr-defined]  (being written: issue 28)
        return operator(input_tensor=tensor("FLOAT32", shape), output_value_tensor=tensor("FLOAT32", out_shape),
                        output_index_tensor=tensor("UINT32", out_shape), axis=1, k=K)

    def numpy_call(outs: list[Array]) -> Callable[[], object]:
        def run() -> None:
            part = np.argpartition(x, shape[1] - K, axis=1)[:, shape[1] - K:]
            values = np.take_along_axis(x, part, axis=1)
            ranks = np.argsort(-values, axis=1, kind="stable")
            outs[0][...] = np.take_along_axis(values, ranks, axis=1)
            outs[1][...] = np.take_along_axis(part, ranks, axis=1)
        return run

    def torch_call(outs: list[Any]) -> Callable[[], object]:
        tx, values, indices = torch.from_numpy(x), outs[0], outs[1]
        return lambda: torch.topk(tx, K, dim=1, out=(values, indices))

    int64_outputs = [(out_shape, np.float32), (out_shape, np.int64)]
    return Spec(desc, [x], [(out_shape, np.float32), (out_shape, np.uint32)], [expected_values, x], numpy_call,
                torch_call, "TopK", {"x": x}, {"k": np.array([K], np.int64)}, {"axis": 1},
                onnx_outputs=int64_outputs, top_k=True,
                numpy_note="np.argpartition, then argsort of the K (allocates)", torch_note="torch.topk(out=)")


def upsample(mode: str) -> Callable[[np.random.Generator, int], Spec]:
    """UPSAMPLE_2D by 2 x 2 of [16, 64, 64, 64]: NEAREST_NEIGHBOR copies input[o // 2]; LINEAR blends, half-pixel,
    0.25 / 0.75 of the two nearest rows and columns (edges clamped)."""
    def build(rng: np.random.Generator, scale: int) -> Spec:
        shape = (leading(16, scale), 64, 64, 64)
        x = rng.standard_normal(shape, dtype=np.float32)
        out_shape = (*shape[:2], 128, 128)
        split = (*shape[:2], 64, 2, 64, 2)
        linear = mode == "LINEAR"
        if linear:
            expected = _blend2x(_blend2x(x.astype(np.float64), 2), 3)
        else:
            expected = x.repeat(2, axis=2).repeat(2, axis=3)
        scratch = np.empty((*shape[:2], 128, 64), np.float32)

        def numpy_call(outs: list[Array]) -> Callable[[], object]:
            if linear:
                return lambda: (_blend2x(x, 2, scratch), _blend2x(scratch, 3, outs[0]))
            spread = x[:, :, :, None, :, None]
            return lambda: np.copyto(outs[0].reshape(split), spread)

        def torch_call(outs: list[Any]) -> Callable[[], object]:
            tx, out = torch.from_numpy(x), outs[0]
            if linear:
                return lambda: torch._C._nn.upsample_bilinear2d(tx, [128, 128], False, None, None, out=out)
            view, spread = out.view(split), tx[:, :, :, None, :, None]
            return lambda: view.copy_(spread)

        attributes = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"} if linear else \
            {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
        return Spec(lambda: dml.Upsample2dOperatorDesc(tensor("FLOAT32", shape), tensor("FLOAT32", out_shape),
                                                       dml.Size2D(2, 2), mode),
                    [x], [(out_shape, np.float32)], [expected], numpy_call, torch_call, "Resize", {"x": x},
                    {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 2], np.float32)}, attributes,
                    exact=not linear, tolerance=1e-6,
                    numpy_note=("two separable 0.25/0.75 passes through a preallocated scratch" if linear else
                                "np.copyto of a broadcast view into out split as [N, C, H, 2, W, 2]"),
                    torch_note=("upsample_bilinear2d(out=), align_corners False" if linear else
                                "copy_ of the same broadcast view"))
    return build


def _blend2x(x: Array, axis: int, out: Array | None = None) -> Array:
    """x doubled along `axis` by half-pixel linear interpolation: out[2i] = 0.25 x[i - 1] + 0.75 x[i],
    out[2i + 1] = 0.75 x[i] + 0.25 x[i + 1], the neighbours clamped at the edges."""
    size = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 2 * size
    if out is None:
        out = np.empty(shape, x.dtype)
    quarter, rest = x.dtype.type(0.25), x.dtype.type(0.75)

    def part(array: Array, start: int | None, stop: int | None, step: int | None = None) -> Array:
        index: list[Any] = [slice(None)] * array.ndim
        index[axis] = slice(start, stop, step)
        return array[tuple(index)]

    even, odd = part(out, 0, None, 2), part(out, 1, None, 2)
    before = np.concatenate([part(x, 0, 1), part(x, 0, size - 1)], axis=axis)
    after = np.concatenate([part(x, 1, None), part(x, size - 1, None)], axis=axis)
    np.multiply(x, rest, out=even)
    even += before * quarter
    np.multiply(x, rest, out=odd)
    odd += after * quarter
    return out


WORKLOADS = (
    Workload("SLICE strided window [4096,4096] -> [2048,2048]", slice_window, COPY),
    Workload("SLICE1 reversed last axis [4096,4096]", slice_reversed, COPY),
    Workload("CAST FLOAT32 -> FLOAT16 [4096,4096]", cast(np.float32, np.float16, 4096), COPY),
    Workload("CAST INT64 -> INT32 [2048,4096]", cast(np.int64, np.int32, 2048), COPY),
    Workload("PADDING CONSTANT [16,64,128,128] +2", padding("CONSTANT"), COPY),
    Workload("PADDING REFLECTION [16,64,128,128] +2", padding("REFLECTION"), COPY),
    Workload("TILE [16,64,64,64] x [1,1,2,2]", tile, COPY),
    Workload("GATHER rows [262144,64] by 262144", gather_rows, GATHER),
    Workload("GATHER last axis [4096,4096] by 4096", gather_columns, GATHER),
    Workload("GATHER_ELEMENTS last axis [2048,4096]", gather_elements, GATHER),
    Workload("SCATTER_ND 65536 rows into [262144,64]", scatter_nd_rows, GATHER),
    Workload("DEPTH_TO_SPACE DCR [16,256,64,64] b2", depth_to_space, COPY),
    Workload("CUMSUM last axis [4096,4096]", cumulative_sum(1), SCAN),
    Workload("CUMSUM axis 0 [4096,4096]", cumulative_sum(0), SCAN),
    Workload("TOP_K K=8 rows of 4096 [4096,4096]", top_k, HEAVY),
    Workload("UPSAMPLE_2D NEAREST 2x [16,64,64,64]", upsample("NEAREST_NEIGHBOR"), COPY),
    Workload("UPSAMPLE_2D LINEAR 2x [16,64,64,64]", upsample("LINEAR"), HEAVY),
)


# -- checks and implementations ---------------------------------------------------------------------------------

def compare(spec: Spec, outs: list[Array], strict: bool) -> tuple[float, str | None]:
    """(max abs error, a problem or None) of an implementation's outputs: opendml's bound where `strict` (bit for
    bit, or within spec.tolerance of the float64 values), a peer's loosely (1e-3)."""
    if spec.top_k:
        values, indices = outs
        expected, x = spec.expected
        error = float(np.max(np.abs(values.astype(np.float64) - expected))) if values.size else 0.0
        if values.shape != expected.shape or not np.array_equal(values, expected):
            return error, f"gave other values than the K largest (max abs error {error:.3g})"
        if not np.array_equal(np.take_along_axis(x, indices.astype(np.int64), axis=1), values):
            return error, "gave indices that do not point at their values"
        return error, None
    worst, problem = 0.0, None
    for got, expected in zip(outs, spec.expected, strict=True):
        if got.shape != expected.shape:
            return math.inf, f"gave shape {got.shape}, expected {expected.shape}"
        wide, exact = got.astype(np.float64), expected.astype(np.float64)
        difference = np.where(np.isnan(wide) & ~np.isnan(exact), math.inf, np.abs(wide - exact))
        error = float(np.max(difference)) if difference.size else 0.0
        worst = max(worst, error)
        if not strict:
            if not h.agrees_loosely(exact, wide):
                problem = f"differs from the reference (max abs error {error:.3g})"
        elif not spec.exact:
            if error > spec.tolerance:
                problem = f"differs from the float64 result by {error:.3g} (at most {spec.tolerance:g})"
        elif not np.array_equal(got, expected):
            problem = f"differs from the exact result in {int(np.count_nonzero(got != expected))} elements"
    return worst, problem


def check_summary(outcome: Outcome) -> str:
    errors = ", ".join(f"{name} {error:.2g}" for name, error in outcome.errors.items())
    return f"max abs error {errors or '-'}; opendml first call (compile + run) {outcome.first_call_s * 1e3:.0f} ms"


def make_opendml(device: dml.Device, spec: Spec) -> Runner:
    try:
        compiled = device.compile_operator(device.create_operator(spec.desc()))
    except NOT_YET as error:
        raise h.Unavailable(f"{type(error).__name__}: {str(error).splitlines()[0][:140] if str(error) else ''}") \
            from error
    outs = spec.new_outputs()
    inputs, outputs = [dml.Binding(array) for array in spec.inputs], [dml.Binding(out) for out in outs]
    return Runner(OPENDML, lambda: compiled.execute(inputs, outputs), outs)


def make_numpy(spec: Spec) -> Runner:
    outs = spec.new_outputs(spec.onnx_outputs)
    return Runner(NUMPY, spec.numpy(outs), outs, note=spec.numpy_note)


def make_torch(spec: Spec, threads: int, name: str) -> Runner:
    outs = spec.new_outputs(spec.onnx_outputs)
    return Runner(name, spec.torch([torch.from_numpy(out) for out in outs]), outs, before=h.torch_threads(threads),
                  note=spec.torch_note)


def make_ort(spec: Spec) -> Runner:
    helper = onnx.helper
    outs = spec.new_outputs(spec.onnx_outputs)
    names = [f"y{j}" for j in range(len(outs))]

    def info(name: str, array: Array) -> Any:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    constants = [onnx.numpy_helper.from_array(value, name) for name, value in spec.onnx_constants.items()]
    node = helper.make_node(spec.onnx_op, [*spec.onnx_inputs, *spec.onnx_constants], names, **spec.onnx_attributes)
    graph = helper.make_graph([node], spec.onnx_op.lower(),
                              [info(name, array) for name, array in spec.onnx_inputs.items()],
                              [info(name, out) for name, out in zip(names, outs, strict=True)], constants)
    return h.ort_runner(graph, OPSET, IR_VERSION, dict(spec.onnx_inputs), dict(zip(names, outs, strict=True)), outs)


SCALE = 1   # --scale: the divisor of every workload's leading size


def bench_workload(device: dml.Device, work: Workload, repeat: int, rng: np.random.Generator) -> Outcome:
    spec = work.build(rng, SCALE)
    floor_bytes = spec.moved // 2

    def check(runner: Runner, mine: Any, errors: dict[str, float]) -> str | None:
        errors[runner.name], problem = compare(spec, runner.outs, strict=runner.name == OPENDML)
        return None if problem is None else f"{runner.name} {problem}"

    return h.measure(label=work.label, target=work.target, repeat=repeat, opendml=lambda: make_opendml(device, spec),
                     floor=lambda: h.copy_floor(np.ones(floor_bytes, np.uint8)), with_numpy=lambda: make_numpy(spec),
                     with_torch=lambda threads, name: make_torch(spec, threads, name),
                     with_ort=lambda: make_ort(spec), check=check)


def dispatch_overhead(device: dml.Device, count: int) -> dict[str, float]:
    """SLICE1 reversing a [16, 16] FLOAT32."""
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.empty_like(x)
    desc = dml.Slice1OperatorDesc(tensor("FLOAT32", (16, 16)), tensor("FLOAT32", (16, 16)), 2, (0, 0), (16, 16),
                                  (1, -1))
    compiled = device.compile_operator(device.create_operator(desc))
    inputs, outputs = [dml.Binding(x)], [dml.Binding(out)]
    results = {"opendml execute, reused Bindings": h.per_call_us(lambda: compiled.execute(inputs, outputs), count)}
    if not np.array_equal(out, x[:, ::-1]):
        raise AssertionError("the [16,16] SLICE1 gave a wrong result")
    results["NumPy np.copyto(out, x[:, ::-1])"] = h.per_call_us(lambda: np.copyto(out, x[:, ::-1]), count)
    return results


SUITE = h.Suite(
    doc=__doc__, workloads=WORKLOADS, bench=bench_workload, seed=20261128, full_repeat=11,
    quick_help="5 rounds per workload", only_option=True, count_met=True, best_table=True,
    targets_title=(f"Targets (opendml's median over the floor's: copies {COPY}x, gathers and scatters {GATHER}x, scans "
                   f"{SCAN}x, TOP_K and UPSAMPLE LINEAR {HEAVY}x; and its time at most the fastest correct peer's):"),
    opendml_threads=f"numba kernels or NumPy copies; numba.get_num_threads() = {h.numba_threads()}",
    ort_model="one-node opset-20 model",
    checks_title=("Checks (each result once, into poisoned outputs; opendml against the exact or float64 result, "
                  "the peers loosely; max abs error against it):"),
    dispatch_title="Dispatch overhead (SLICE1 reversing a [16,16] FLOAT32; median of {count} calls):",
    dispatch=dispatch_overhead, dispatch_width=36, check_summary=check_summary,
)


def main() -> int:
    """--scale S divides every workload's leading size by S; the rest are the harness's options."""
    global SCALE
    chooser = argparse.ArgumentParser(add_help=False)
    chooser.add_argument("--scale", type=int, default=1)
    chosen, rest = chooser.parse_known_args()
    if chosen.scale < 1:
        chooser.error("--scale must be at least 1")
    SCALE = chosen.scale
    sys.argv[1:] = rest
    cpu.COLD_START = False   # numba's kernels from the first call (compiled by this process where not cached)
    if SCALE > 1:
        print(f"(--scale {SCALE}: every leading size divided by {SCALE}; the timings say little)")
    return h.run_suite(SUITE)


if __name__ == "__main__":
    sys.exit(main())
