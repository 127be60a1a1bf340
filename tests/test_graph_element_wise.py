"""The element-wise graph API (issue 26): one function per ELEMENT_WISE operator, generated from the rows and named as
DirectMLX names them; NumPy's broadcasting by zero strides; inferred output types; Python's operators; transpose,
reshape and broadcast_to as IDENTITY over strides, folded into element-wise readers; every message of the API.

Golden values are worked out by hand in the comments (NumPy's own broadcasting is the reference for the shapes table).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.ops.elementwise import ELEMENT_WISE

T = dml.OperatorType
NDArray = np.ndarray[Any, Any]

#: Every operator's function, as DirectMLX names it (dml::Add -> add, dml::ATanYX -> atan_yx, dml::Equals ->
#: equals, dml::IsNaN -> is_nan); the DML name in snake case where DirectMLX has none (clip1, add1, constant_pow is
#: also dml::Pow with a number); if_ for IF (`if` is Python's keyword).
NAMES = {
    "IDENTITY": "identity", "ABS": "abs", "ACOS": "acos", "ASIN": "asin", "ATAN": "atan", "CEIL": "ceil",
    "COS": "cos", "EXP": "exp", "FLOOR": "floor", "LOG": "log", "RECIP": "recip", "SIN": "sin", "SQRT": "sqrt",
    "TAN": "tan", "ERF": "erf", "SINH": "sinh", "COSH": "cosh", "TANH": "tanh", "ASINH": "asinh", "ACOSH": "acosh",
    "ATANH": "atanh", "CLIP": "clip", "CLIP1": "clip1", "THRESHOLD": "threshold", "CONSTANT_POW": "constant_pow",
    "LOGICAL_NOT": "logical_not", "SIGN": "sign", "IS_NAN": "is_nan", "IS_INFINITY": "is_infinity",
    "ROUND": "round", "BIT_NOT": "bit_not", "BIT_COUNT": "bit_count", "NEGATE": "negate",
    "QUANTIZE_LINEAR": "quantize_linear", "DEQUANTIZE_LINEAR": "dequantize_linear", "ADD": "add", "ADD1": "add1",
    "SUBTRACT": "subtract", "MULTIPLY": "multiply", "DIVIDE": "divide", "POW": "pow", "MAX": "max", "MIN": "min",
    "MEAN": "mean", "LOGICAL_AND": "logical_and", "LOGICAL_OR": "logical_or", "LOGICAL_XOR": "logical_xor",
    "LOGICAL_EQUALS": "equals", "LOGICAL_GREATER_THAN": "greater_than",
    "LOGICAL_GREATER_THAN_OR_EQUAL": "greater_than_or_equal", "LOGICAL_LESS_THAN": "less_than",
    "LOGICAL_LESS_THAN_OR_EQUAL": "less_than_or_equal", "BIT_AND": "bit_and", "BIT_OR": "bit_or",
    "BIT_XOR": "bit_xor", "BIT_SHIFT_LEFT": "bit_shift_left", "BIT_SHIFT_RIGHT": "bit_shift_right",
    "MODULUS_TRUNCATE": "modulus_truncate", "MODULUS_FLOOR": "modulus_floor", "ATAN_YX": "atan_yx",
    "DIFFERENCE_SQUARE": "difference_square", "IF": "if_",
}


def graph(level: str = "6_4") -> dml.Graph:
    return dml.Graph(dml.Device(feature_level=level))


def run(outputs: list[dml.Expression], inputs: dict[str, NDArray]) -> list[NDArray]:
    return outputs[0].graph.compile(outputs)(inputs)


def step_types(outputs: list[dml.Expression]) -> list[str]:
    """The operators a compiled graph runs, in order."""
    compiled = outputs[0].graph.compile(outputs)
    return [step.operator.desc.OPERATOR_TYPE.name for step in compiled.steps]


# -- one function per operator, from the rows -----------------------------------------------------------------------

def test_every_row_has_its_directmlx_named_function() -> None:
    assert {info.short_name for info in ELEMENT_WISE} == set(NAMES)
    for short_name, name in NAMES.items():
        function = getattr(dml, name)
        assert name in dml.__all__ and function.__name__ == name
        assert f"DML_OPERATOR_ELEMENT_WISE_{short_name}" in function.__doc__


@pytest.mark.parametrize(("name", "parameters"), [
    ("identity", {"x": inspect.Parameter.empty, "scale_bias": None}),
    ("clip", {"x": inspect.Parameter.empty, "min": inspect.Parameter.empty, "max": inspect.Parameter.empty,
              "scale_bias": None}),
    ("clip1", {"x": inspect.Parameter.empty, "min": inspect.Parameter.empty, "max": inspect.Parameter.empty,
               "scale_bias": None, "min_max_data_type": None}),
    ("round", {"x": inspect.Parameter.empty, "rounding_mode": dml.RoundingMode.HALVES_TO_NEAREST_EVEN}),
    ("is_infinity", {"x": inspect.Parameter.empty, "infinity_mode": dml.IsInfinityMode.EITHER,
                     "output_dtype": None}),
    ("add", {"a": inspect.Parameter.empty, "b": inspect.Parameter.empty, "fused_activation": None}),
    ("add1", {"a": inspect.Parameter.empty, "b": inspect.Parameter.empty, "fused_activation": None}),
    ("pow", {"x": inspect.Parameter.empty, "exponent": inspect.Parameter.empty, "scale_bias": None}),
    ("quantize_linear", {"x": inspect.Parameter.empty, "scale": inspect.Parameter.empty, "zero_point": None,
                         "output_dtype": None}),
    ("equals", {"a": inspect.Parameter.empty, "b": inspect.Parameter.empty, "output_dtype": None}),
    ("if_", {"condition": inspect.Parameter.empty, "a": inspect.Parameter.empty, "b": inspect.Parameter.empty}),
])
def test_signatures_carry_the_descriptors_fields_and_defaults(name: str, parameters: dict[str, object]) -> None:
    signature = inspect.signature(getattr(dml, name))
    assert {key: parameter.default for key, parameter in signature.parameters.items()} == parameters


# -- goldens worked out by hand -------------------------------------------------------------------------------------

def test_add_broadcasts_a_row() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    r = g.input([3], "FLOAT32", name="r")
    (y,) = run([dml.add(x, r)], {"x": np.arange(6, dtype=np.float32).reshape(2, 3),
                                 "r": np.array([10, 20, 30], np.float32)})
    # [[0+10, 1+20, 2+30], [3+10, 4+20, 5+30]]
    np.testing.assert_array_equal(y, np.array([[10, 21, 32], [13, 24, 35]], np.float32))


def test_subtract_broadcasts_a_column_against_a_row() -> None:
    g = graph()
    a = g.input([2, 1], "INT32", name="a")
    b = g.input([1, 3], "INT32", name="b")
    (y,) = run([dml.subtract(a, b)], {"a": np.array([[1], [2]], np.int32), "b": np.array([[10, 20, 30]], np.int32)})
    # 1 - 10, 1 - 20, 1 - 30; 2 - 10, ...
    np.testing.assert_array_equal(y, np.array([[-9, -19, -29], [-8, -18, -28]], np.int32))


@pytest.mark.parametrize(("build", "x", "expected"), [
    # CLIP to [-1, 1]
    (lambda x: dml.clip(x, min=-1, max=1), [-2, -0.5, 0.5, 3], [-1, -0.5, 0.5, 1]),
    # ROUND: halves to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0); toward zero (1.7 -> 1, -1.7 -> -1)
    (lambda x: dml.round(x), [0.5, 1.5, 2.5, -0.5], [0, 2, 2, -0.0]),
    (lambda x: dml.round(x, rounding_mode="TOWARD_ZERO"), [1.7, -1.7, 0.2, -0.2], [1, -1, 0, -0.0]),
    # THRESHOLD: max(x, 0.5)
    (lambda x: dml.threshold(x, 0.5), [0, 1, -3, 0.25], [0.5, 1, 0.5, 0.5]),
    # IDENTITY with ScaleBias: x * 2 + 1
    (lambda x: dml.identity(x, scale_bias=dml.ScaleBias(2.0, 1.0)), [0, 1, -1, 0.5], [1, 3, -1, 2]),
    # dml::Pow with a number: CONSTANT_POW, x ** 2
    (lambda x: dml.pow(x, 2.0), [3, -2, 0.5, 0], [9, 4, 0.25, 0]),
    # ADD with a FusedActivation: ADD1, relu(x + 1)
    (lambda x: dml.add(x, 1.0, fused_activation=dml.FusedActivation.relu()), [-3, -1, 0, 2], [0, 0, 1, 3]),
])
def test_unary_goldens(build: Any, x: list[float], expected: list[float]) -> None:
    g = graph()
    source = g.input([4], "FLOAT32", name="x")
    (y,) = run([build(source)], {"x": np.array(x, np.float32)})
    np.testing.assert_array_equal(y, np.array(expected, np.float32))
    assert np.array_equal(np.signbit(y), np.signbit(np.array(expected, np.float32)))


def test_comparison_gives_uint8_and_if_selects() -> None:
    g = graph()
    a = g.input([4], "FLOAT32", name="a")
    b = g.input([1], "FLOAT32", name="b")
    greater = dml.greater_than(a, b)
    picked = dml.if_(greater, a, b)             # where a > b: a, else b (max by IF)
    bigger, chosen = run([greater, picked], {"a": np.array([1, 5, 2, 7], np.float32), "b": np.array([2], np.float32)})
    assert bigger.dtype == np.uint8
    np.testing.assert_array_equal(bigger, [0, 1, 0, 1])
    np.testing.assert_array_equal(chosen, np.array([2, 5, 2, 7], np.float32))


def test_add_with_any_fused_activation_is_add1() -> None:
    g = graph()
    a = g.input([2], "FLOAT32")
    assert dml.add(a, a).operator_desc.OPERATOR_TYPE == T.ELEMENT_WISE_ADD
    none = dml.add(a, a, fused_activation=dml.FusedActivation.none()).operator_desc
    assert none.OPERATOR_TYPE == T.ELEMENT_WISE_ADD1 and none.fused_activation is None
    elu = dml.add1(a, a, fused_activation=dml.FusedActivation.elu(0.5)).operator_desc
    assert elu.fused_activation == dml.ActivationEluOperatorDesc(alpha=0.5)


def test_integer_divide_and_mean_truncate() -> None:
    g = graph()
    a = g.input([4], "INT32", name="a")
    quotient, mean = run([dml.divide(a, 2), dml.mean(a, 4)], {"a": np.array([7, -7, 1, -1], np.int32)})
    np.testing.assert_array_equal(quotient, np.array([3, -3, 0, 0], np.int32))        # toward zero
    np.testing.assert_array_equal(mean, np.array([5, -1, 2, 1], np.int32))            # (7+4)/2, (-7+4)/2, 5/2, 3/2


def test_quantize_and_dequantize_linear() -> None:
    g = graph()
    x = g.input([4], "FLOAT32", name="x")
    scale = g.input([1], "FLOAT32", name="scale")
    zero = g.input([1], "UINT8", name="zero")
    q = g.input([2], "UINT8", name="q")
    # round_even(x / 2) + 128, saturated: 0 -> 128; 2 -> 129; 3 -> 1.5 -> 2 -> 130; -1000 -> -500 + 128 -> 0
    # (130 - 128) * 2 = 4; (126 - 128) * 2 = -4
    quantized, dequantized = run([dml.quantize_linear(x, scale, zero), dml.dequantize_linear(q, scale, zero)],
                                 {"x": np.array([0, 2, 3, -1000], np.float32), "scale": np.array([2], np.float32),
                                  "zero": np.array([128], np.uint8), "q": np.array([130, 126], np.uint8)})
    np.testing.assert_array_equal(quantized, np.array([128, 129, 130, 0], np.uint8))
    np.testing.assert_array_equal(dequantized, np.array([4, -4], np.float32))


def test_clip1_in_int8_takes_the_tensors_type() -> None:
    g = graph()
    x = g.input([4], "INT8", name="x")
    clipped = dml.clip1(x, -5, 5)
    assert clipped.operator_desc.min_max_data_type == dml.DataType.INT8
    (y,) = run([clipped], {"x": np.array([-128, -5, 4, 127], np.int8)})
    np.testing.assert_array_equal(y, np.array([-5, -5, 4, 5], np.int8))


def test_float16_multiply() -> None:
    g = graph()
    a = g.input([3], "FLOAT16", name="a")
    (y,) = run([a * a], {"a": np.array([1.5, -2, 0.25], np.float16)})
    np.testing.assert_array_equal(y, np.array([2.25, 4, 0.0625], np.float16))


# -- broadcasting and inferred types --------------------------------------------------------------------------------

@pytest.mark.parametrize(("a_sizes", "b_sizes", "out", "a_strides", "b_strides"), [
    ([2, 3], [3], (2, 3), None, (0, 1)),
    ([4, 1, 3], [2, 1], (4, 2, 3), (3, 0, 1), (0, 1, 0)),
    ([1], [5, 1, 1], (5, 1, 1), (0, 0, 1), None),      # a stride under a size of 1 is never used
    ([2, 2], [2, 2], (2, 2), None, None),
])
def test_broadcasting_by_zero_strides(a_sizes: list[int], b_sizes: list[int], out: tuple[int, ...],
                                      a_strides: tuple[int, ...] | None, b_strides: tuple[int, ...] | None) -> None:
    g = graph()
    a = g.input(a_sizes, "FLOAT32", name="a")
    b = g.input(b_sizes, "FLOAT32", name="b")
    y = dml.multiply(a, b)
    desc = y.operator_desc
    assert y.sizes == out and desc.output_tensor.sizes == out
    assert desc.a_tensor.sizes == desc.b_tensor.sizes == out       # DML: every tensor has the output's sizes
    assert (desc.a_tensor.strides, desc.b_tensor.strides) == (a_strides, b_strides)
    assert desc.a_tensor.total_tensor_size_in_bytes == a.desc.total_tensor_size_in_bytes   # no copy: a's buffer
    rng = np.random.default_rng(0)
    arrays = {name: rng.integers(-9, 9, sizes).astype(np.float32) for name, sizes in (("a", a_sizes), ("b", b_sizes))}
    (result,) = run([y], arrays)
    np.testing.assert_array_equal(result, arrays["a"] * arrays["b"])   # small integers: exact in FLOAT32


@pytest.mark.parametrize(("build", "types", "expected"), [
    (lambda a, b: dml.add(a, b), ("FLOAT16", "FLOAT16"), "FLOAT16"),
    (lambda a, b: dml.equals(a, b), ("INT32", "INT32"), "UINT8"),
    (lambda a, b: dml.less_than(a, b, output_dtype="UINT32"), ("FLOAT32", "FLOAT32"), "UINT32"),
    (lambda a, b: dml.is_nan(a), ("FLOAT16", "FLOAT16"), "UINT8"),
    (lambda a, b: dml.is_infinity(a, infinity_mode="POSITIVE"), ("FLOAT32", "FLOAT32"), "UINT8"),
    (lambda a, b: dml.bit_count(a), ("UINT16", "UINT16"), "UINT8"),
    (lambda a, b: dml.logical_and(a, b), ("UINT32", "UINT32"), "UINT32"),
    (lambda a, b: dml.quantize_linear(a, b, None), ("FLOAT32", "FLOAT32"), "UINT8"),
    (lambda a, b: dml.quantize_linear(a, b, None, output_dtype="INT8"), ("FLOAT32", "FLOAT32"), "INT8"),
    (lambda a, b: dml.quantize_linear(a, b, a.graph.input([1], "INT8")), ("FLOAT16", "FLOAT16"), "INT8"),
    (lambda a, b: dml.dequantize_linear(a.graph.input([2], "INT8"), b), ("FLOAT16", "FLOAT16"), "FLOAT16"),
    (lambda a, b: dml.if_(a.graph.input([2], "UINT8"), a, b), ("INT64", "INT64"), "INT64"),
])
def test_inferred_output_types(build: Any, types: tuple[str, str], expected: str) -> None:
    g = graph()
    a = g.input([2], types[0])
    b = g.input([2], types[1])
    assert build(a, b).dtype == dml.DataType[expected]


# -- Python's operators ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("build", "expected"), [
    (lambda a, b: a + b, T.ELEMENT_WISE_ADD), (lambda a, b: a - b, T.ELEMENT_WISE_SUBTRACT),
    (lambda a, b: a * b, T.ELEMENT_WISE_MULTIPLY), (lambda a, b: a / b, T.ELEMENT_WISE_DIVIDE),
    (lambda a, b: a ** b, T.ELEMENT_WISE_POW), (lambda a, b: a ** 2, T.ELEMENT_WISE_CONSTANT_POW),
    (lambda a, b: a % b, T.ELEMENT_WISE_MODULUS_TRUNCATE), (lambda a, b: -a, T.ELEMENT_WISE_NEGATE),
    (lambda a, b: abs(a), T.ELEMENT_WISE_ABS), (lambda a, b: +a, T.ELEMENT_WISE_IDENTITY),
])
def test_float_operators_build_the_nodes(build: Any, expected: dml.OperatorType) -> None:
    g = graph()
    a = g.input([2], "FLOAT32")
    b = g.input([2], "FLOAT32")
    assert expected == build(a, b).operator_desc.OPERATOR_TYPE


@pytest.mark.parametrize(("build", "expected"), [
    (lambda a, b: a & b, T.ELEMENT_WISE_BIT_AND), (lambda a, b: a | b, T.ELEMENT_WISE_BIT_OR),
    (lambda a, b: a ^ b, T.ELEMENT_WISE_BIT_XOR), (lambda a, b: a << b, T.ELEMENT_WISE_BIT_SHIFT_LEFT),
    (lambda a, b: a >> b, T.ELEMENT_WISE_BIT_SHIFT_RIGHT), (lambda a, b: ~a, T.ELEMENT_WISE_BIT_NOT),
])
def test_bit_operators_build_the_nodes(build: Any, expected: dml.OperatorType) -> None:
    g = graph()
    a = g.input([2], "UINT32")
    b = g.input([2], "UINT32")
    assert expected == build(a, b).operator_desc.OPERATOR_TYPE


def test_operators_with_numbers_on_either_side() -> None:
    g = graph()
    x = g.input([3], "FLOAT32", name="x")
    outputs = [x + 1, 10 - x, 2 * x, 1 / x, x / 4, 2 ** x, x ** 2, -x, abs(x), np.float32(3) * x]
    results = run(outputs, {"x": np.array([1, -2, 4], np.float32)})
    expected = [[2, -1, 5], [9, 12, 6], [2, -4, 8], [1, -0.5, 0.25], [0.25, -0.5, 1], [2, 0.25, 16], [1, 4, 16],
                [-1, 2, -4], [1, 2, 4], [3, -6, 12]]
    for result, values in zip(results, expected, strict=True):
        np.testing.assert_array_equal(result, np.array(values, np.float32))
    constant = (x + 1).node.inputs[1]
    assert constant.node.kind == "constant" and constant.dtype == dml.DataType.FLOAT32 and constant.sizes == (1,)


def test_integer_operators_with_numbers() -> None:
    g = graph()
    x = g.input([3], "INT8", name="x")
    shifted = g.input([3], "UINT8", name="u")
    results = run([x + 1, x * 3, -x, x % 3, shifted << 1, shifted >> 1, shifted & 6, ~shifted],
                  {"x": np.array([127, -128, -7], np.int8), "u": np.array([3, 128, 255], np.uint8)})
    expected = [[-128, -127, -6],            # 127 + 1 wraps
                [125, -128, -21],            # 381 - 256 = 125; -384 + 256 = -128
                [-127, -128, 7],             # -(-128) wraps to -128
                [1, -2, -1],                 # C's %: sign of a (127 = 42*3 + 1, -128 = -42*3 - 2, -7 = -2*3 - 1)
                [6, 0, 254], [1, 64, 127], [2, 0, 6], [252, 127, 0]]
    for result, values in zip(results, expected, strict=True):
        np.testing.assert_array_equal(result, np.array(values, result.dtype))
    assert [result.dtype for result in results] == [np.int8] * 4 + [np.uint8] * 4


def test_expressions_stay_hashable_and_compare_by_identity() -> None:
    g = graph()
    a = g.input([2], "FLOAT32")
    b = g.input([2], "FLOAT32")
    assert len({a: 1, b: 2, a + b: 3}) == 3
    assert (a == b) is False and (a == a) is True and (a != b) is True


def test_negation_below_negate_level_is_identity_with_scale_bias() -> None:
    g = graph("4_1")                     # NEGATE comes with 5_0; Chromium's WebNN lowers neg to IDENTITY * -1
    x = g.input([3], "FLOAT32", name="x")
    negated = -x
    desc = negated.operator_desc
    assert desc.OPERATOR_TYPE == T.ELEMENT_WISE_IDENTITY and desc.scale_bias == dml.ScaleBias(-1.0, -0.0)
    assert np.signbit(desc.scale_bias.bias)         # x * -1 + (-0): -(+0) is -0, as NEGATE gives it
    (y,) = run([negated], {"x": np.array([1, -2, 0], np.float32)})
    np.testing.assert_array_equal(y, np.array([-1, 2, -0.0], np.float32))
    assert np.signbit(y[2])
    integers = g.input([3], "INT32")
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_ELEMENT_WISE_NEGATE needs feature level 5_0; "
                                                   r"the device is at 4_1"):
        _ = -integers


# -- views: transpose, reshape, broadcast_to ------------------------------------------------------------------------

X23 = np.arange(6, dtype=np.float32).reshape(2, 3)        # [[0, 1, 2], [3, 4, 5]]


def test_transpose_values_and_an_output_view_runs_one_identity() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    t = dml.transpose(x)
    assert t.sizes == (3, 2) and t.operator_desc.input_tensor.strides == (1, 3)
    assert step_types([t]) == ["ELEMENT_WISE_IDENTITY"]
    (y,) = run([t], {"x": X23})
    np.testing.assert_array_equal(y, np.array([[0, 3], [1, 4], [2, 5]], np.float32))
    w = graph().input([2, 3, 4], "FLOAT32", name="w")
    (z,) = run([dml.transpose(w, [2, 0, -2])], {"w": np.arange(24, dtype=np.float32).reshape(2, 3, 4)})
    assert z.shape == (4, 2, 3) and z[3, 1, 2] == 1 * 12 + 2 * 4 + 3      # element [1, 2, 3] of w


def test_views_fold_into_element_wise_readers() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    r = g.input([3], "FLOAT32", name="r")
    t = dml.transpose(x)
    total = t + dml.transpose(dml.broadcast_to(r, [2, 3]))         # [3, 2]: x[j, i] + r[i]
    back = dml.transpose(dml.transpose(x, [1, 0]), [1, 0]) * 1     # the two views collapse to x itself
    flat = dml.reshape(x, [6]) - 1
    assert step_types([total, back, flat]) == ["ELEMENT_WISE_ADD", "ELEMENT_WISE_MULTIPLY", "ELEMENT_WISE_SUBTRACT"]
    desc = total.operator_desc
    assert (desc.a_tensor.strides, desc.b_tensor.strides) == ((1, 3), (1, 0))
    assert back.operator_desc.a_tensor == x.desc
    assert total.node.inputs[:2] == (x, r)
    added, same, flattened = run([total, back, flat], {"x": X23, "r": np.array([10, 20, 30], np.float32)})
    np.testing.assert_array_equal(added, np.array([[10, 13], [21, 24], [32, 35]], np.float32))
    np.testing.assert_array_equal(same, X23)
    np.testing.assert_array_equal(flattened, np.array([-1, 0, 1, 2, 3, 4], np.float32))


def test_reshape_of_a_transpose_copies_once() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    flat = dml.reshape(dml.transpose(x), [-1]) + 0
    assert step_types([flat]) == ["ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_ADD"]   # the transpose, made packed
    (y,) = run([flat], {"x": X23})
    np.testing.assert_array_equal(y, np.array([0, 3, 1, 4, 2, 5], np.float32))


def test_reshape_of_a_strided_input_copies_once() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x", strides=[1, 2])       # column-major
    flat = dml.reshape(x, [3, 2]) + 0
    assert step_types([flat]) == ["ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_ADD"]
    (y,) = run([flat], {"x": X23})
    np.testing.assert_array_equal(y, np.array([[0, 1], [2, 3], [4, 5]], np.float32))


def test_views_feeding_other_operators_run_their_identity() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    sums = dml.reduce(dml.transpose(x), "SUM", axes=[1])            # row sums of x's transpose: x's column sums
    assert step_types([sums]) == ["ELEMENT_WISE_IDENTITY", "REDUCE"]
    (y,) = run([sums], {"x": X23})
    np.testing.assert_array_equal(y, np.array([[3], [5], [7]], np.float32))


def test_broadcast_to_of_a_constant() -> None:
    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    column = g.constant(np.array([[100], [200]], np.float32))
    total = x + dml.broadcast_to(column, [2, 3])
    assert step_types([total]) == ["ELEMENT_WISE_ADD"]
    (y,) = run([total], {"x": X23})
    np.testing.assert_array_equal(y, np.array([[100, 101, 102], [203, 204, 205]], np.float32))


def test_folded_views_on_dask_arrays() -> None:
    import dask
    import dask.array as da

    g = graph()
    x = g.input([2, 3], "FLOAT32", name="x")
    r = g.input([3], "FLOAT32", name="r")
    total = dml.transpose(x) * 10 + dml.reshape(r, [3, 1])      # [3, 2]: 10 * x[j, i] + r[i]
    (lazy,) = g.compile([total])({"x": da.from_array(X23, chunks=(1, 2)), "r": np.array([1, 2, 3], np.float32)})
    with dask.config.set(scheduler="synchronous"):
        np.testing.assert_array_equal(lazy.compute(), np.array([[1, 31], [12, 42], [23, 53]], np.float32))


# -- messages -------------------------------------------------------------------------------------------------------

def test_mismatched_types_name_the_function_and_types() -> None:
    g = graph()
    a = g.input([2], "FLOAT32")
    b = g.input([2], "INT32")
    with pytest.raises(dml.ValidationError, match=r"^dml\.add: a is FLOAT32 and b is INT32; they must have the same "
                                                  r"data type \(DML_OPERATOR_ELEMENT_WISE_ADD: ATensor, BTensor, "
                                                  r"OutputTensor share one\)$"):
        dml.add(a, b)
    with pytest.raises(dml.ValidationError, match=r"^dml\.if_: a is FLOAT32 and b is INT32"):
        dml.if_(g.input([2], "UINT8"), a, b)
    with pytest.raises(dml.ValidationError, match=r"^dml\.subtract: a is FLOAT32 and b is INT32"):
        _ = a - b


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda a, b, i: dml.add(a, g_other()), dml.ValidationError,
     r"^dml\.add: b belongs to another graph than a; the expressions of one operator must come from the same "
     r"dml\.Graph$"),
    (lambda a, b, i: dml.multiply(a, b), dml.ValidationError,
     r"^dml\.multiply: the sizes of a \[2, 3\] and b \[4\] do not broadcast \(NumPy's rules: aligned from the last "
     r"dimension, each size equal or 1\)$"),
    (lambda a, b, i: dml.add(a, "s"), dml.ValidationError,
     r"^dml\.add: b is 's'; it must be a dml\.Expression or a number$"),
    (lambda a, b, i: dml.add(a, True), dml.ValidationError, r"^dml\.add: b is True; it must be a dml\.Expression"),
    (lambda a, b, i: dml.quantize_linear(a, 1.0, "z"), dml.ValidationError,
     r"^dml\.quantize_linear: zero_point is 'z'; it must be a dml\.Expression, a number or None$"),
    (lambda a, b, i: dml.add(1, 2), dml.ValidationError,
     r"^dml\.add: a and b are numbers; at least one must be a dml\.Expression \(a number takes its partner's data "
     r"type\)$"),
    (lambda a, b, i: i + 300, dml.ValidationError,
     r"^dml\.add: b is 300; it must be an integer in \[-128, 127\] \(a number operand is a constant of INT8, its "
     r"partner's type\)$"),
    (lambda a, b, i: i * 0.5, dml.ValidationError, r"^dml\.multiply: b is 0\.5; it must be an integer in \[-128, "),
    (lambda a, b, i: 1e39 - a, dml.ValidationError,
     r"^dml\.subtract: a is 1e\+39, beyond FLOAT32's range \(a number operand is a constant of FLOAT32, its "
     r"partner's type\)$"),
    (lambda a, b, i: dml.clip(a), dml.ValidationError,
     r"^dml\.clip: missing a required argument: 'min'; its signature is clip\(x: 'Operand', min: 'float', max: "
     r"'float', \*, scale_bias: 'ScaleBias \| None' = None\) -> 'Expression'$"),
    (lambda a, b, i: dml.round(a, mode="TOWARD_ZERO"), dml.ValidationError,
     r"^dml\.round: got an unexpected keyword argument 'mode'; its signature is round\(x: 'Operand', \*, "),
    (lambda a, b, i: dml.round(a, rounding_mode="UP"), dml.ValidationError,
     r"^DML_OPERATOR_ELEMENT_WISE_ROUND: RoundingMode is 'UP'; it must be one of HALVES_TO_NEAREST_EVEN, "),
    (lambda a, b, i: dml.sqrt(i), dml.ValidationError,
     r"^DML_OPERATOR_ELEMENT_WISE_SQRT: InputTensor\.DataType INT8 is not supported; at feature level 6_4 it must be "
     r"one of FLOAT32, FLOAT16$"),
    (lambda a, b, i: dml.equals(a, a, output_dtype="bogus"), dml.ValidationError,
     r"^dml\.equals: output_dtype is 'bogus' \(neither a DML data type nor a NumPy dtype\); it must be a DataType"),
    (lambda a, b, i: dml.equals(a, a, output_dtype="FLOAT32"), dml.ValidationError,
     r"^DML_OPERATOR_ELEMENT_WISE_LOGICAL_EQUALS: OutputTensor\.DataType FLOAT32 is not supported"),
    (lambda a, b, i: dml.clip1(a, -1, 1, min_max_data_type="INT8"), dml.ValidationError,
     r"^DML_OPERATOR_ELEMENT_WISE_CLIP1: MinMaxDataType is INT8; it must equal InputTensor\.DataType \(FLOAT32\)$"),
    (lambda a, b, i: dml.transpose(a, [0, 0]), dml.ValidationError,
     r"^dml\.transpose: perm is \[0, 0\]; it must name each of x's 2 dimensions once \(a permutation of \[0, 1\]\)$"),
    (lambda a, b, i: dml.transpose(a, [0, 2]), dml.ValidationError,
     r"^dml\.transpose: perm\[1\] is 2; it must be an integer in \[-2, 1\]$"),
    (lambda a, b, i: dml.transpose(a, 1), dml.ValidationError,
     r"^dml\.transpose: perm is 1; it must be a list of integers$"),
    (lambda a, b, i: dml.transpose("x"), dml.ValidationError,
     r"^dml\.transpose: x is 'x'; it must be a dml\.Expression$"),
    (lambda a, b, i: dml.reshape(a, [4]), dml.ValidationError,
     r"^dml\.reshape: sizes is \[4\]; x \[2, 3\] has 6 elements, and a reshape keeps every one$"),
    (lambda a, b, i: dml.reshape(a, [-1, 4]), dml.ValidationError,
     r"^dml\.reshape: sizes is \[-1, 4\]; x \[2, 3\] has 6 elements, and a reshape keeps every one$"),
    (lambda a, b, i: dml.reshape(a, [-1, -1]), dml.ValidationError,
     r"^dml\.reshape: sizes is \[-1, -1\]; at most one size may be -1 \(inferred\)$"),
    (lambda a, b, i: dml.reshape(a, [-2, 3]), dml.ValidationError,
     r"^dml\.reshape: sizes\[0\] is -2; it must be -1 \(inferred\) or an integer in \[0, 2\^32\)$"),
    (lambda a, b, i: dml.reshape(a, [-1.0, 3]), dml.ValidationError,
     r"^dml\.reshape: sizes\[0\] is -1\.0; it must be -1 \(inferred\) or an integer in \[0, 2\^32\)$"),
    (lambda a, b, i: dml.broadcast_to(a, [4, 3]), dml.ValidationError,
     r"^dml\.broadcast_to: x's sizes \[2, 3\] do not broadcast to \[4, 3\] \(NumPy's rules: aligned from the last "
     r"dimension, each size equal or 1\)$"),
    (lambda a, b, i: dml.broadcast_to(a, [3]), dml.ValidationError,
     r"^dml\.broadcast_to: x's sizes \[2, 3\] do not broadcast to \[3\]"),
])
def test_messages(call: Any, error: type[Exception], message: str) -> None:
    g = graph()
    a = g.input([2, 3], "FLOAT32")
    b = g.input([4], "FLOAT32")
    i = g.input([2, 3], "INT8")
    with pytest.raises(error, match=message):
        call(a, b, i)


def g_other() -> dml.Expression:
    return graph().input([2, 3], "FLOAT32")
