"""The cpu GEMM kernel's own machinery (backends/cpu/gemm.py): row panels, the layouts that reach BLAS unpacked and
those packed, the transposed product for a column-major output, staged outputs through any strides, every fused
activation in the epilogue, the batch run one matrix per thread (and BLAS's thread count given back), and the NumPy
kernel where NumPy's OpenBLAS is missing. Values are checked against tests/reference.py's float64 GEMM within the
bound that scales with K, on raw buffers between sentinel bytes (inputs unchanged, nothing outside the output
written); every test runs numba's kernel (the small-tensor limit set to 0)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import assert_within_bounds, reference_gemm, result_bounds
from strategies import (
    accumulate_unit,
    build_buffer,
    execute_between_sentinels,
    fused_activation_of,
    logical_data,
    read_buffer,
)

import opendml as dml
import opendml.backends.cpu
from opendml.backends.cpu import convolution_blas
from opendml.backends.cpu import gemm as cpu_gemm
from opendml.errors import ValidationError
from opendml.ops.activation_softmax import ActivationSoftmax1OperatorDesc, ActivationSoftmaxOperatorDesc
from opendml.ops.activations import ACTIVATION_CLASSES

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
NONE, TRANSPOSE = dml.MatrixTransform.NONE, dml.MatrixTransform.TRANSPOSE
LEVEL = "6_4"


@pytest.fixture(autouse=True)
def numba_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opendml.backends.cpu, "SMALL_TENSOR_ELEMENTS", 0)


def tensor(data_type: dml.DataType, sizes: list[int], strides: list[int] | None = None) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes, strides=strides)


def check(desc: dml.GemmOperatorDesc, seed: int = 0) -> np.ndarray:
    """Runs `desc` on raw buffers between sentinels and checks every output against the reference bound; returns
    the output."""
    device = dml.Device(feature_level=LEVEL)
    compiled = device.compile_operator(device.create_operator(desc))
    rng = np.random.default_rng(seed)
    tensors = [desc.a_tensor, desc.b_tensor, desc.c_tensor]
    data = [logical_data(rng, t) for t in tensors]
    buffers = [None if x is None or t is None else build_buffer(x, t.strides, byte_offset=16 * (1 + i))
               for i, (x, t) in enumerate(zip(data, tensors, strict=True))]
    out = desc.output_tensor
    dtype = out.data_type.numpy_dtype
    raw = execute_between_sentinels(device, compiled, buffers, dtype.itemsize, out.sizes, out.strides,
                                    memory="host", seed=seed, label="GEMM")
    got = read_buffer(raw, dtype, out.sizes, out.strides, byte_offset=16 * (len(buffers) + 1))
    value, magnitude = reference_gemm(data[0], data[1], data[2], trans_a=desc.trans_a.name,
                                      trans_b=desc.trans_b.name, alpha=float(desc.alpha), beta=float(desc.beta))
    value, magnitude = (np.broadcast_to(array, out.sizes) for array in (value, magnitude))
    k = desc.a_tensor.sizes[-2] if desc.trans_a == TRANSPOSE else desc.a_tensor.sizes[-1]
    name, parameters, axes = fused_activation_of(desc)
    low, high = result_bounds(value, magnitude, k, dtype, accumulate_unit=accumulate_unit(out.data_type,
                                                                                          dml.ExecutionFlags.NONE),
                              activation=name, parameters=parameters, axes=axes)
    assert_within_bounds(got, low, high, f"GEMM K={k}", exact=value)
    return got


def plan(desc: dml.GemmOperatorDesc) -> cpu_gemm.GemmPlan:
    return cpu_gemm.GemmPlan(desc, desc.output_tensor, desc.fused_activation)


@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
def test_row_panels_cover_every_row_with_c_and_activation(data_type: dml.DataType,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # 8 elements per panel, N = 3: panels of 2 rows over M = 7 (the last one of 1 row), C a broadcast column; the batch
    # on one thread (a batch of small matrices would otherwise run whole matrices per thread)
    monkeypatch.setattr(cpu_gemm, "_PANEL_ELEMENTS", 8)
    monkeypatch.setattr(cpu_gemm, "_SMALL_PRODUCT", 0)
    desc = dml.GemmOperatorDesc(tensor(data_type, [2, 1, 7, 5]), tensor(data_type, [2, 1, 5, 3]),
                                tensor(data_type, [2, 1, 7, 3], [7, 0, 1, 0]), tensor(data_type, [2, 1, 7, 3]),
                                alpha=0.5, beta=-2.0, fused_activation=dml.ActivationReluOperatorDesc())
    assert plan(desc).meta[cpu_gemm._M_PANEL] == 2
    check(desc)


def test_transposes_folded_into_strides_reach_blas_unpacked() -> None:
    # op(A) = A^T of A stored [K, M] at strides [1, K] (a transposed view): BLAS reads it NoTrans... and TransB's
    # B stored column-major: both as they lie, no packing
    m, n, k = 6, 5, 4
    a = tensor(F32, [m, k], [1, m])          # A[i, k] at k * m + i: op(A) = A read with the trans flag
    b = tensor(F32, [n, k], [1, n])          # TransB: op(B)[k, j] = B[j, k] at k * n + j: row-major K x N
    desc = dml.GemmOperatorDesc(a, b, None, tensor(F32, [m, n]), NONE, TRANSPOSE)
    meta = plan(desc).meta
    assert (meta[cpu_gemm._M_A_PACK], meta[cpu_gemm._M_A_TRANS], meta[cpu_gemm._M_A_LD]) == (0, cpu_gemm._TRANS, m)
    assert (meta[cpu_gemm._M_B_PACK], meta[cpu_gemm._M_B_TRANS], meta[cpu_gemm._M_B_LD]) == (0, cpu_gemm._NO_TRANS, n)
    assert meta[cpu_gemm._M_DIRECT] == 1
    check(desc)


def test_other_layouts_are_packed() -> None:
    # A doubly strided (every other element of every other row), B with a zero stride (each row the same), C
    # column-broadcast, the output padded: all packed or staged, nothing outside written
    m, n, k = 5, 4, 3
    a = tensor(F32, [1, 1, m, k], [0, 0, 4 * k, 2])
    b = tensor(F32, [1, 1, k, n], [0, 0, 0, 1])
    c = tensor(F32, [1, 1, m, n], [0, 0, 1, 0])
    desc = dml.GemmOperatorDesc(a, b, c, tensor(F32, [1, 1, m, n], [0, 0, 2 * n + 1, 2]), beta=0.25)
    meta = plan(desc).meta
    assert (meta[cpu_gemm._M_A_PACK], meta[cpu_gemm._M_B_PACK], meta[cpu_gemm._M_DIRECT]) == (1, 1, 0)
    check(desc)


def test_a_column_major_output_runs_as_the_transposed_product() -> None:
    m, n, k = 6, 5, 7
    column_major = tensor(F32, [m, n], [1, m])
    desc = dml.GemmOperatorDesc(tensor(F32, [m, k]), tensor(F32, [k, n]), tensor(F32, [m, n]), column_major,
                                beta=1.5, fused_activation=dml.ActivationTanhOperatorDesc())
    assert plan(desc).swapped and plan(desc).meta[cpu_gemm._M_DIRECT] == 1
    check(desc)
    # a row softmax needs the rows: staged instead
    softmax = dml.GemmOperatorDesc(tensor(F32, [m, k]), tensor(F32, [k, n]), None, column_major,
                                   fused_activation=ActivationSoftmaxOperatorDesc())
    assert not plan(softmax).swapped and plan(softmax).meta[cpu_gemm._M_DIRECT] == 0
    check(softmax)


def _fusable(cls: type) -> dml.OperatorDesc:
    """The activation with the first of a few parameter values its rules accept."""
    names = cls.parameter_names()  # type: ignore[attr-defined]
    for value in (0.5, 1.5, 2.0):
        activation = cls(**dict.fromkeys(names, value))
        try:
            dml.GemmOperatorDesc(tensor(F32, [2, 2]), tensor(F32, [2, 2]), None, tensor(F32, [2, 2]),
                                 fused_activation=activation).validate(dml.FeatureLevel.parse(LEVEL))
        except ValidationError:
            continue
        return activation  # type: ignore[no-any-return]
    raise AssertionError(f"no parameters for {cls.__name__}")


ACTIVATIONS = {kind.name: _fusable(cls) for kind, cls in ACTIVATION_CLASSES.items()}
ACTIVATIONS["CLIP"] = dml.ElementWiseClipOperatorDesc(None, None, None, -0.5, 0.75)  # type: ignore[arg-type]
ACTIVATIONS["SOFTMAX"] = ActivationSoftmaxOperatorDesc()
ACTIVATIONS["SOFTMAX1_LAST"] = ActivationSoftmax1OperatorDesc(axes=[3])
ACTIVATIONS["SOFTMAX1_MATRIX"] = ActivationSoftmax1OperatorDesc(axes=[2, 3])    # across rows: staged
ACTIVATIONS["SOFTMAX1_BATCH"] = ActivationSoftmax1OperatorDesc(axes=[0])


@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_every_fused_activation_in_the_epilogue(name: str, data_type: dml.DataType) -> None:
    desc = dml.GemmOperatorDesc(tensor(data_type, [2, 1, 5, 4]), tensor(data_type, [2, 1, 6, 4]),
                                tensor(data_type, [2, 1, 5, 6], [0, 0, 6, 1]), tensor(data_type, [2, 1, 5, 6]),
                                NONE, TRANSPOSE, 1.25, 0.5, ACTIVATIONS[name])
    check(desc, seed=len(name))


def test_a_nan_makes_only_its_softmax_row_nan() -> None:
    device = dml.Device(feature_level=LEVEL)
    desc = dml.GemmOperatorDesc(tensor(F32, [2, 1]), tensor(F32, [1, 3]), None, tensor(F32, [2, 3]),
                                fused_activation=ActivationSoftmaxOperatorDesc())
    compiled = device.compile_operator(device.create_operator(desc))
    (got,) = compiled(np.array([[np.nan], [0.0]], np.float32), np.array([[1.0, 2.0, 3.0]], np.float32))
    assert np.isnan(got[0]).all()
    assert got[1].tolist() == pytest.approx([1 / 3] * 3)   # A's row 0: every exponent 0, each e^0 / 3


def test_batches_run_one_matrix_per_thread_and_give_blas_its_threads_back() -> None:
    # 6 small matrices, B shared through a zero batch stride: the batch-parallel path
    desc = dml.GemmOperatorDesc(tensor(F32, [6, 1, 9, 8]), tensor(F32, [6, 1, 8, 7], [0, 0, 7, 1]),
                                tensor(F32, [6, 1, 9, 7]), tensor(F32, [6, 1, 9, 7]), beta=0.5,
                                fused_activation=dml.ActivationSigmoidOperatorDesc())
    before = convolution_blas._get_threads()
    assert plan(desc).parallel
    check(desc)
    assert convolution_blas._get_threads() == before


def test_without_numpys_openblas_the_numpy_kernel_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_gemm, "SGEMM", 0)
    desc = dml.GemmOperatorDesc(tensor(F32, [3, 2]), tensor(F32, [2, 4]), None, tensor(F32, [3, 4]))
    kernel = cpu_gemm.compile_kernel(desc, dml.ExecutionFlags.NONE, False)
    assert kernel.__module__ == "opendml.backends.cpu.small.gemm"
    check(desc)


@pytest.mark.parametrize("batch", [1, 4])
def test_an_owned_b_is_packed_once_at_initialize(batch: int) -> None:
    # FLOAT16 B (widened: packed) OWNED_BY_DML and shared by the batch (zero batch stride): packed by initialize and
    # read from that copy at every execute (one matrix per thread for batch 4); the results bit for bit those of
    # the same GEMM without the flag
    device = dml.Device(feature_level=LEVEL)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((batch, 1, 6, 5)).astype(np.float16)
    b = rng.standard_normal(16).astype(np.float16)   # [5, 3] at strides [3, 1], padded to a multiple of 4 bytes
    results = []
    for flags in (dml.TensorFlags.NONE, dml.TensorFlags.OWNED_BY_DML):
        b_desc = dml.TensorDesc(F16, [batch, 1, 5, 3], strides=[0, 0, 3, 1], flags=flags)
        desc = dml.GemmOperatorDesc(tensor(F16, [batch, 1, 6, 5]), b_desc, None, tensor(F16, [batch, 1, 6, 3]),
                                    fused_activation=dml.ActivationEluOperatorDesc(0.5))
        compiled = device.compile_operator(device.create_operator(desc))
        owned = flags == dml.TensorFlags.OWNED_BY_DML
        if owned:
            compiled.initialize([None, dml.Binding(b), None])
            assert compiled._kernel.plan._b_packed is not None  # type: ignore[attr-defined]
        for _ in range(2):
            out = np.empty((batch, 1, 6, 3), np.float16)
            compiled.execute([dml.Binding(a), None if owned else dml.Binding(b), None], [dml.Binding(out)])
            results.append(out)
    assert all(np.array_equal(got, results[0]) for got in results)
    value, _ = reference_gemm(a, np.broadcast_to(b[:15].reshape(1, 1, 5, 3), (batch, 1, 5, 3)), None)
    expected = np.where(value > 0, value, 0.5 * np.expm1(value))
    assert np.allclose(results[-1].astype(np.float64), expected, rtol=2e-3, atol=2e-3)
