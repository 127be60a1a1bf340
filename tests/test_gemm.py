"""GEMM: goldens worked out by hand (the page, DML_GEMM_OPERATOR_DESC, has no worked example), every row of its
support table run against the float64 reference, and hypothesis properties through raw buffers (sentinel bytes around
and between the elements, inputs unchanged) against ``reference_gemm`` within a bound that scales with K.

The bound (tests/reference.py, ``accumulation_bound`` and ``result_bounds``), for K products per output:

    |computed - exact| <= 2 * (K + 4) * u * (|Alpha| * sum_k |op(A)[m, k]| |op(B)[k, n]| + |Beta * C[m, n]|)

with u = 2^-24 for FLOAT32 and for FLOAT16 (accumulated in FLOAT32, rounded once on the store), 2^-11 for FLOAT16
under ALLOW_HALF_PRECISION_COMPUTATION (the page lists no other type: no FLOAT64, no integers); then through the fused
activation over that interval, plus one unit of the output type (its rounding) and its smallest normal. A FLOAT16
running sum misses it (test_the_bound_refuses_a_float16_accumulation; test_float16_accumulates_in_float32 is a case
worked out by hand)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from reference import assert_within_bounds, reference_gemm, result_bounds
from strategies import (
    T,
    backends,
    build_buffer,
    check_gemm_convolution,
    execute_between_sentinels,
    gemm_descs,
    logical_data,
    read_buffer,
)

import opendml as dml

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
NONE, TRANSPOSE = dml.MatrixTransform.NONE, dml.MatrixTransform.TRANSPOSE
HALF = dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION
#: GEMM is in every feature level (1_0 on).
LEVELS = [str(level) for level in dml.FeatureLevel]
GEMM = dml.GemmOperatorDesc


@cache
def device(level: str) -> dml.Device:
    return dml.Device(feature_level=level)


def compile_gemm(desc: dml.OperatorDesc, level: str = "6_4", flags: dml.ExecutionFlags = dml.ExecutionFlags.NONE
                 ) -> dml.CompiledOperator:
    made = device(level)
    return made.compile_operator(made.create_operator(desc), flags)


def f32(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, np.float32)


# -- goldens (worked out by hand) -------------------------------------------------------------------------------------

def test_plain_product() -> None:
    # [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[5 + 14, 6 + 16], [15 + 28, 18 + 32]]
    compiled = compile_gemm(GEMM(T(F32, [2, 2]), T(F32, [2, 2]), None, T(F32, [2, 2])))
    (out,) = compiled(f32([[1, 2], [3, 4]]), f32([[5, 6], [7, 8]]))
    assert out.tolist() == [[19, 22], [43, 50]]


# TransA: A is stored {K=3, M=2}, op(A) = [[1, 3, 5], [2, 4, 6]]; TransB: B is stored {N=2, K=3}, op(B) = [[1, 2],
# [0, 1], [-1, 0]]. op(A) op(B) = [[1 - 5, 2 + 3], [2 - 6, 4 + 4]] = [[-4, 5], [-4, 8]]; Alpha 0.5 -> [[-2, 2.5],
# [-2, 4]]; Beta -1 times C [[1, 2], [3, 4]] -> [[-3, 0.5], [-5, 0]].
A_KM = f32([[1, 2], [3, 4], [5, 6]]).reshape(1, 1, 3, 2)
B_NK = f32([[1, 0, -1], [2, 1, 0]]).reshape(1, 1, 2, 3)
C_MN = f32([[1, 2], [3, 4]]).reshape(1, 1, 2, 2)


@pytest.mark.parametrize(("activation", "expected"), [
    (None, [[-3, 0.5], [-5, 0]]),
    (dml.ActivationReluOperatorDesc(), [[0, 0.5], [0, 0]]),
    # x >= 0 ? x : 0.125 x
    (dml.ActivationLeakyReluOperatorDesc(alpha=0.125), [[-0.375, 0.5], [-0.625, 0]]),
    # Alpha x + Beta = 2x + 1
    (dml.ActivationLinearOperatorDesc(alpha=2.0, beta=1.0), [[-5, 2], [-9, 1]]),
], ids=["none", "relu", "leaky_relu", "linear"])
def test_transposes_alpha_beta_c_and_fused_activation_at_level_1_0(activation: dml.OperatorDesc | None,
                                                                     expected: list[list[float]]) -> None:
    desc = GEMM(T(F32, [1, 1, 3, 2]), T(F32, [1, 1, 2, 3]), T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]),
                TRANSPOSE, TRANSPOSE, 0.5, -1.0, activation)
    (out,) = compile_gemm(desc, "1_0")(A_KM, B_NK, C_MN)
    assert out.reshape(2, 2).tolist() == expected


def test_sigmoid_fused() -> None:
    # [[1, 0], [0, 1]] x [[0, 2], [-2, ln 3]]: sigmoid(0) = 0.5, sigmoid(2) = 0.8807970780, sigmoid(-2) =
    # 0.1192029220, sigmoid(ln 3) = 3 / 4
    desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), None, T(F32, [2, 2]),
                fused_activation=dml.ActivationSigmoidOperatorDesc())
    (out,) = compile_gemm(desc)(f32([[1, 0], [0, 1]]), f32([[0, 2], [-2, np.log(3.0)]]))
    np.testing.assert_allclose(out, [[0.5, 0.8807970780], [0.1192029220, 0.75]], rtol=2e-7)


def test_fused_clip_from_level_6_0() -> None:
    # [[-3, 0.5], [-5, 0]] (the 1_0 case above) clipped to [-1, 0.25]
    desc = GEMM(T(F32, [1, 1, 3, 2]), T(F32, [1, 1, 2, 3]), T(F32, [1, 1, 2, 2]), T(F32, [1, 1, 2, 2]),
                TRANSPOSE, TRANSPOSE, 0.5, -1.0, dml.ElementWiseClipOperatorDesc(None, None, None, -1.0, 0.25))
    (out,) = compile_gemm(desc, "6_0")(A_KM, B_NK, C_MN)
    assert out.reshape(2, 2).tolist() == [[-1, 0.25], [-1, 0]]


LN2, LN3 = float(np.log(2.0)), float(np.log(3.0))


@pytest.mark.parametrize(("activation", "expected"), [
    # each row: e^0 : e^ln3 = 1 : 3 -> [1/4, 3/4]; e^ln2 : e^ln2 -> [1/2, 1/2]
    (dml.ActivationSoftmaxOperatorDesc(), [[1 / 4, 3 / 4], [1 / 2, 1 / 2]]),
    # each column (axis 0, M): 1 : 2 -> [1/3, 2/3]; 3 : 2 -> [3/5, 2/5]
    (dml.ActivationSoftmax1OperatorDesc(axes=[0]), [[1 / 3, 3 / 5], [2 / 3, 2 / 5]]),
    # the whole matrix: 1, 3, 2, 2 over 8
    (dml.ActivationSoftmax1OperatorDesc(axes=[0, 1]), [[1 / 8, 3 / 8], [2 / 8, 2 / 8]]),
], ids=["softmax", "softmax1_axis_0", "softmax1_both_axes"])
def test_fused_softmax_from_level_6_1(activation: dml.OperatorDesc, expected: list[list[float]]) -> None:
    # I x [[0, ln 3], [ln 2, ln 2]]
    desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), None, T(F32, [2, 2]), fused_activation=activation)
    (out,) = compile_gemm(desc, "6_1")(f32([[1, 0], [0, 1]]), f32([[0, LN3], [LN2, LN2]]))
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_owned_weights_give_the_same_bits() -> None:
    # B OWNED_BY_DML (bound once at initialize, as ONNX Runtime's initializers) or bound at every execute
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((3, 5, 7)).astype(np.float32), rng.standard_normal((3, 7, 4)).astype(np.float32)
    plain = GEMM(T(F32, [3, 5, 7]), T(F32, [3, 7, 4]), None, T(F32, [3, 5, 4]),
                 fused_activation=dml.ActivationTanhOperatorDesc())
    owned = GEMM(T(F32, [3, 5, 7]), T(F32, [3, 7, 4], flags=dml.TensorFlags.OWNED_BY_DML), None, T(F32, [3, 5, 4]),
                 fused_activation=dml.ActivationTanhOperatorDesc())
    (expected,) = compile_gemm(plain)(a, b)
    compiled = compile_gemm(owned)
    (first,) = compiled(a, b)
    out = np.zeros((3, 5, 4), np.float32)
    compiled.execute([dml.Binding(a), None, None], [dml.Binding(out)])
    assert first.tobytes() == expected.tobytes() and out.tobytes() == expected.tobytes()


def test_beta_is_ignored_without_c() -> None:
    # 2 x ([1, 2] . [3, 4]) = 2 x 11; Beta 3 has nothing to scale
    desc = GEMM(T(F32, [1, 2]), T(F32, [2, 1]), None, T(F32, [1, 1]), NONE, NONE, 2.0, 3.0)
    (out,) = compile_gemm(desc)(f32([[1, 2]]), f32([[3], [4]]))
    assert out.tolist() == [[22]]


def test_c_broadcast_by_zero_strides() -> None:
    # C {2, 2} at strides {0, 1}: both rows read [10, 20]. I x [[1, 2], [3, 4]] + C = [[11, 22], [13, 24]]
    desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), T(F32, [2, 2], [0, 1]), T(F32, [2, 2]))
    (out,) = compile_gemm(desc)(f32([[1, 0], [0, 1]]), f32([[1, 2], [3, 4]]), f32([[10, 20], [10, 20]]))
    assert out.tolist() == [[11, 22], [13, 24]]


def test_batched_with_b_shared_by_a_zero_batch_stride() -> None:
    # A {2, 1, 2, 2}: batch 0 the identity, batch 1 the row swap; B read by both batches from one [[1, 2], [3, 4]].
    desc = GEMM(T(F32, [2, 1, 2, 2]), T(F32, [2, 1, 2, 2], [0, 4, 2, 1]), None, T(F32, [2, 1, 2, 2]))
    a = f32([[1, 0], [0, 1], [0, 1], [1, 0]]).reshape(2, 1, 2, 2)
    b = np.broadcast_to(f32([[1, 2], [3, 4]]), (2, 1, 2, 2))
    (out,) = compile_gemm(desc)(a, b)
    assert out.reshape(2, 2, 2).tolist() == [[[1, 2], [3, 4]], [[3, 4], [1, 2]]]


def test_a_transpose_folded_into_strides_on_raw_buffers() -> None:
    # A {2, 3} at strides {1, 2} over [1..6]: A[i, j] = buffer[i + 2j] = [[1, 3, 5], [2, 4, 6]]; B = ones {3, 1};
    # the output {2, 1} at strides {2, 1} (a gap between the two) bound at byte 16 of a buffer of 7s.
    desc = GEMM(T(F32, [2, 3], [1, 2]), T(F32, [3, 1]), None, T(F32, [2, 1], [2, 1]))
    out = np.full(4 + 3, 7.0, np.float32)
    a = np.arange(1, 7, dtype=np.float32)
    compile_gemm(desc).execute([dml.Binding(a), dml.Binding(np.ones(3, np.float32)), None], [dml.Binding(out, 16)])
    assert out.tolist() == [7, 7, 7, 7, 9, 7, 12]
    assert a.tolist() == [1, 2, 3, 4, 5, 6]


def test_float16_accumulates_in_float32() -> None:
    # 2048 + 1 + 1: FLOAT16 holds 2050 (its spacing at 2048 is 2), but 2048 + 1 = 2049 rounds to 2048 (to even), so a
    # running FLOAT16 sum gives 2048; accumulated in FLOAT32 and rounded once it is 2050.
    desc = GEMM(T(F16, [1, 3]), T(F16, [3, 1]), None, T(F16, [1, 1]))
    (out,) = compile_gemm(desc)(np.array([[2048, 1, 1]], np.float16), np.ones((3, 1), np.float16))
    assert out.tolist() == [[2050]]


def test_float16_products_beyond_its_range() -> None:
    # 300 x 300 = 90000 is past FLOAT16's largest finite value (65504): held in FLOAT32, 90000 - 90000 = 0 (a FLOAT16
    # accumulator would hold inf - inf = NaN); 90000 + 90000 = 180000 rounds to FLOAT16 +inf on the store.
    desc = GEMM(T(F16, [1, 2]), T(F16, [2, 2]), None, T(F16, [1, 2]))
    (out,) = compile_gemm(desc)(np.array([[300, 300]], np.float16), np.array([[300, 300], [-300, 300]], np.float16))
    assert out.tolist() == [[0, np.inf]]


def test_float16_rounds_once() -> None:
    # Alpha 1/3 x (1 x 1) + 1 x C, C = 3 x 2^-13 (exact in FLOAT16): in FLOAT32, 0.3333333433 + 0.0003662109 =
    # 0.3336995542, which is 1366.83 x 2^-12 (FLOAT16's spacing in [1/4, 1/2)) and rounds once to 1367 x 2^-12 =
    # 0.333740234375. Rounding Alpha x AB to FLOAT16 first (1365 x 2^-12) and then adding C gives 1366.5 x 2^-12,
    # which rounds (to even) to 1366 x 2^-12 = 0.33349609375.
    desc = GEMM(T(F16, [1, 1]), T(F16, [1, 1]), T(F16, [1, 1]), T(F16, [1, 1]), NONE, NONE, 1.0 / 3.0, 1.0)
    (out,) = compile_gemm(desc)(np.ones((1, 1), np.float16), np.ones((1, 1), np.float16),
                                np.array([[3 * 2.0**-13]], np.float16))
    assert out.tolist() == [[0.333740234375]]


def test_nan_and_infinity_propagate_through_their_row() -> None:
    # Row 0 of A holds a NaN, row 1 an infinity times a positive B: [NaN, NaN] and [inf, inf]; row 2 is plain.
    desc = GEMM(T(F32, [3, 2]), T(F32, [2, 2]), None, T(F32, [3, 2]))
    (out,) = compile_gemm(desc)(f32([[np.nan, 1], [np.inf, 1], [1, 2]]), f32([[1, 2], [3, 4]]))
    assert np.isnan(out[0]).all()
    assert out[1].tolist() == [np.inf, np.inf]
    assert out[2].tolist() == [7, 10]


def test_a_failed_call_writes_nothing_and_changes_no_input() -> None:
    desc = GEMM(T(F32, [2, 2]), T(F32, [2, 2]), T(F32, [2, 2]), T(F32, [2, 2]))
    compiled = compile_gemm(desc)
    a, b, c = f32([[1, 2], [3, 4]]), f32([[5, 6], [7, 8]]), f32([[1, 1], [1, 1]])
    out = np.full(4, 42.0, np.float32)
    with pytest.raises(dml.BindingError, match=r"DML_OPERATOR_GEMM: CTensor binding needs bytes \[0, 16\) but the "
                                               r"buffer holds 8 bytes"):
        compiled.execute([dml.Binding(a), dml.Binding(b), dml.Binding(c.reshape(-1)[:2])], [dml.Binding(out)])
    assert out.tolist() == [42.0] * 4
    compiled.execute([dml.Binding(a), dml.Binding(b), dml.Binding(c)], [dml.Binding(out)])
    assert out.tolist() == [20, 23, 44, 51]
    assert a.tolist() == [[1, 2], [3, 4]] and b.tolist() == [[5, 6], [7, 8]] and c.tolist() == [[1, 1], [1, 1]]


# -- the page's support table, row by row -----------------------------------------------------------------------------

# Copied from the page: (level, dimension counts, data types), the same for the four tensors.
PAGE_ROWS = [("4_0", (2, 4), ["FLOAT32", "FLOAT16"]), ("1_0", (4, 4), ["FLOAT32", "FLOAT16"])]
ROW_CASES = [(level, data_type, rank) for level, (low, high), types in PAGE_ROWS for data_type in types
             for rank in range(low, high + 1)]


@pytest.mark.parametrize(("level", "data_type", "rank"), ROW_CASES, ids=[f"{lv}-{t}-{r}d" for lv, t, r in ROW_CASES])
def test_every_row_of_the_page(level: str, data_type: str, rank: int) -> None:
    # batches {2, 3}, M 3, K 5, N 4, TransB, C, Alpha 0.75, Beta -0.5, at the row's own level
    batch = [2, 3][: rank - 2]
    desc = GEMM(T(data_type, [*batch, 3, 5]), T(data_type, [*batch, 4, 5]), T(data_type, [*batch, 3, 4]),
                T(data_type, [*batch, 3, 4]), NONE, TRANSPOSE, 0.75, -0.5)
    check_case(GemmCase(level, desc, dml.ExecutionFlags.NONE, 7, "host"), raw=False)


# -- properties against the reference ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class GemmCase:
    level: str
    desc: dml.GemmOperatorDesc
    flags: dml.ExecutionFlags
    seed: int
    memory: str


@st.composite
def gemm_cases(draw: st.DrawFn, max_k: int = 24, max_side: int = 5) -> GemmCase:
    level = draw(st.sampled_from(LEVELS))
    desc = draw(gemm_descs(GEMM, dml.FeatureLevel.parse(level), max_k=max_k, max_side=max_side))
    half = desc.a_tensor.data_type == F16 and draw(st.booleans())
    case = GemmCase(level, desc, HALF if half else dml.ExecutionFlags.NONE, draw(st.integers(0, 2**32 - 1)),
                    draw(st.sampled_from(["host", "device"])))
    note(repr(case))
    return case


def check_case(case: GemmCase, *, raw: bool = True) -> None:
    desc = case.desc
    rng = np.random.default_rng(case.seed)
    tensors = [desc.a_tensor, desc.b_tensor, desc.c_tensor]
    a, b, c = (logical_data(rng, tensor) for tensor in tensors)
    assert a is not None and b is not None
    compiled = compile_gemm(desc, case.level, case.flags)
    out_desc = desc.output_tensor
    dtype = out_desc.data_type.numpy_dtype
    if raw:
        buffers = [None if x is None or t is None else build_buffer(x, t.strides, byte_offset=16 * (1 + i))
                   for i, (x, t) in enumerate(zip((a, b, c), tensors, strict=True))]
        data = execute_between_sentinels(device(case.level), compiled, buffers, dtype.itemsize, out_desc.sizes,
                                         out_desc.strides, memory=case.memory, seed=case.seed % 97, label="GEMM")
        got = read_buffer(data, dtype, out_desc.sizes, out_desc.strides,
                          byte_offset=16 * (len(buffers) + 1))
    else:
        (got,) = compiled(a, b, c)
    check_gemm_convolution(desc, (a, b, c), got, case.flags)


#: Examples per backend: 12 and 4 under the ci profile (60 examples by default), a fifth and a fifteenth of the
#: profile's (200 and 66 under the slow one).
PROPERTY_EXAMPLES = max(12, settings.default.max_examples // 5)
LARGE_EXAMPLES = max(4, settings.default.max_examples // 15)


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(case=gemm_cases())
def test_gemm_matches_reference_on_raw_buffers(case: GemmCase) -> None:
    check_case(case)


@settings(max_examples=LARGE_EXAMPLES, deadline=None)
@given(case=gemm_cases(max_k=300))
def test_long_contractions_stay_within_the_bound(case: GemmCase) -> None:
    check_case(case, raw=False)


@settings(max_examples=LARGE_EXAMPLES, deadline=None)
@given(case=gemm_cases(max_k=100, max_side=70))
def test_matrices_wider_than_the_kernels_tiles(case: GemmCase) -> None:
    # M and N up to 70, K up to 100: past the gpu's 64-column tiles and 32-deep K steps, and the cpu's small paths
    check_case(case, raw=False)


@backends("cpu")
def test_reference_activation_of_a_transposed_result() -> None:
    # einsum over transposed operands gives a column-major result; apply_activation once wrote its values into a
    # copy (reshape(-1) of a non-contiguous array) and returned uninitialised memory.
    value, magnitude = reference_gemm(f32([[1, 2], [3, 4]]), f32([[1, 0], [0, 1]]), None, trans_a="TRANSPOSE",
                                      trans_b="TRANSPOSE")
    low, high = result_bounds(value, magnitude, 2, np.float32, accumulate_unit=2.0**-24, activation="LINEAR",
                              parameters=(1.0, 1.0))
    assert_within_bounds(np.array([[2, 4], [3, 5]], np.float32), low, high, "LINEAR(op(A) op(B))")


@backends("cpu")
def test_the_bound_refuses_a_float16_accumulation() -> None:
    # The checker's own evidence: a FLOAT16 running sum of 256 normal products misses the FLOAT32 bound.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 256)).astype(np.float16)
    b = rng.standard_normal((256, 4)).astype(np.float16)
    value, magnitude = reference_gemm(a, b, None)
    running = np.zeros((4, 4), np.float16)
    for k in range(256):
        running = (running + a[:, k: k + 1] * b[k: k + 1, :]).astype(np.float16)
    low, high = result_bounds(value, magnitude, 256, np.float16, accumulate_unit=2.0**-24)
    with pytest.raises(AssertionError, match="out of bounds"):
        assert_within_bounds(running, low, high, "FLOAT16 running sum")
    assert_within_bounds((value.astype(np.float32)).astype(np.float16), low, high, "FLOAT32 then FLOAT16")
