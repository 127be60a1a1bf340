"""The 17 activations over the whole FLOAT32 and FLOAT16 range, standalone and fused into
MEAN_VARIANCE_NORMALIZATION1, against tests/reference.py's float64 formulas, in units in the last place of the
output type (README's Rulings state the bound of each activation).

FLOAT32: a logarithmic sweep of both signs from the smallest subnormal to FLT_MAX, a dense sweep of [-20, 20],
+-0, +-inf, NaN and each formula's special points (its parameters, turns, the clamps and switch points of the
elementary functions, either side of each). FLOAT16: every one of the 65536 bit patterns. One dispatch per
activation, parameter set, data type, path and backend.

The error of an output is |got - exact| / ulp, ulp being the spacing of the output type at the exact value rounded
to it (the smallest subnormal's below the smallest normal: subnormal results count, none may flush); an exact value
that rounds to +-inf or +-0 must come out as exactly that (the sign of zero included), and NaN as NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import ACTIVATION_PARAMETERS, activation_turns, apply_activation

import opendml as dml

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16

#: Each activation's parameter sets (its defaults where it has them, and another that moves its turns, or flips a
#: sign).
PARAMETER_SETS: dict[str, list[tuple[float, ...]]] = {
    "LINEAR": [(1.5, -0.25), (-2.0, 3.0)],
    "SIGMOID": [()],
    "HARD_SIGMOID": [(0.2, 0.5), (-1.5, 0.25)],
    "TANH": [()],
    "SCALED_TANH": [(1.0, 0.5), (1.7159, 0.6667)],
    "RELU": [()],
    "LEAKY_RELU": [(0.01,), (-2.5,)],
    "THRESHOLDED_RELU": [(1.0,), (-0.5,)],
    "ELU": [(1.0,), (0.3,)],
    "CELU": [(1.0,), (0.5,), (-2.0,)],
    "SCALED_ELU": [(1.67326319217681884765625, 1.05070102214813232421875), (0.5, 2.0)],
    "SOFTPLUS": [(1.0,), (3.0,), (-2.0,)],
    "PARAMETRIC_SOFTPLUS": [(0.5, 3.0), (2.0, -1.0)],
    "SOFTSIGN": [()],
    "IDENTITY": [()],
    "SHRINK": [(0.0, 0.5), (0.25, 1.0)],
    "GELU": [()],
}

#: Where the elementary functions switch method or clamp (backends' _exp, _tanh, _sigmoid, _gelu, CELU's cut-offs):
#: the sweep takes each, either side, with both signs.
SWITCH_POINTS = [0.5, 1.0, 2.0**-24, 2.0**-126, 10.0, 13.15, 13.2, 13.5, 14.0, 14.3, 14.5, 20.0, 80.0, 87.0, 88.37,
                 88.72, 88.8, 100.0, 103.97, 104.0, 1e4, 65504.0]

#: The activations whose FLOAT32 results are rounded once (0.5 ulp); the others' bounds are below (`ulp_bounds`).
CORRECTLY_ROUNDED = {"IDENTITY", "RELU", "LEAKY_RELU", "THRESHOLDED_RELU", "SHRINK"}
#: Where the formula's first step is Alpha x (+ Beta) rounded: errors count in ulps of max(|f(x)|, |Alpha x|).
PRODUCT_FIRST = {"LINEAR", "HARD_SIGMOID"}


def ulp_bounds(name: str, parameters: tuple[float, ...], x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The bound README's Rulings state, per input: FLOAT32 results within 0.5 ulp (CORRECTLY_ROUNDED), 1 ulp of
    max(|f(x)|, |Alpha x|) for LINEAR and HARD_SIGMOID, and 4 ulp for the transcendental ones, plus, where
    an exponential's argument z is a rounded product or quotient (SOFTPLUS:
    Steepness x, PARAMETRIC_SOFTPLUS: Beta x, CELU: x / Alpha), 2 |z| ulp (the rounding of z alone is worth up to
    |z| ulp), and for GELU 2 x^2 ulp (its exponent -x^2 / 2 and erfc's fit in the tail). |z| counts up to 104 and
    x^2 up to 14.5^2, where the exponential (GELU) underflows: beyond, the error is that of the rest. FLOAT16
    results are the FLOAT32 ones rounded once: within 0.5 ulp plus 2^-13 ulp per ulp of the FLOAT32 bound."""
    if dtype == np.float16:
        return 0.5 + ulp_bounds(name, parameters, x, np.dtype(np.float32)) * 2.0**-13
    if name in CORRECTLY_ROUNDED:
        return np.full(x.shape, 0.5)
    if name in PRODUCT_FIRST:
        return np.full(x.shape, 1.0)
    argument = {"SOFTPLUS": lambda: parameters[0] * x, "PARAMETRIC_SOFTPLUS": lambda: parameters[1] * x,
                "CELU": lambda: x / parameters[0]}.get(name, lambda: np.zeros(x.shape))
    with np.errstate(all="ignore"):
        z = np.minimum(x * x, 14.5**2) if name == "GELU" else np.minimum(np.abs(argument()), 104.0)
    return 4.0 + 2.0 * np.where(np.isnan(z), 0.0, z)


def _float32_inputs(name: str, parameters: tuple[float, ...]) -> np.ndarray:
    """Both signs of: 3000 points from the smallest subnormal to FLT_MAX, [0, 20] in steps of 0.01, the special
    points and their neighbours; +-0, +-inf and NaN."""
    finfo = np.finfo(np.float32)
    logarithmic = np.geomspace(float(finfo.smallest_subnormal), float(finfo.max), 3000)
    points = [*SWITCH_POINTS, *(abs(t) for t in activation_turns(name, parameters))]
    if name in PRODUCT_FIRST:   # Alpha x + Beta = 0, 1
        points += [(target - parameters[1]) / parameters[0] for target in (0.0, 1.0)]
    edges = [np.nextafter(np.float32(p), np.float32(side)) for p in points for side in (-np.inf, np.inf)]
    special = np.array([*points, *edges], np.float64)
    values = np.concatenate([logarithmic, special, np.linspace(0.0, 20.0, 2001)])
    values = np.concatenate([values, -values, [0.0, -0.0, math.inf, -math.inf, math.nan]])
    return values.astype(np.float32)


def _float16_inputs() -> np.ndarray:
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def ulp_errors(got: np.ndarray, exact: np.ndarray, dtype: np.dtype, scale: np.ndarray | None = None) -> np.ndarray:
    """|got - exact| in ulps of `dtype` at max(|exact|, |scale|) rounded to it; 0 or inf where that rounds to +-0 or
    exact to +-inf (the sign counts), or exact is NaN."""
    info = np.finfo(dtype)
    unsigned = f"u{info.bits // 8}"
    with np.errstate(all="ignore"):
        rounded = exact.astype(dtype)
        magnitude = np.abs(rounded.astype(np.float64))
        if scale is not None:
            magnitude = np.maximum(magnitude, np.abs(np.where(np.isfinite(scale), scale, 0.0).astype(dtype)))
        exponent = np.floor(np.log2(np.maximum(magnitude, float(info.smallest_normal))))
        errors = np.abs(got.astype(np.float64) - exact) / np.exp2(exponent - info.nmant)
    same_bits = got.astype(dtype).view(unsigned) == rounded.view(unsigned)
    exactly = np.isnan(exact) | np.isinf(rounded) | (magnitude == 0)
    errors = np.where(exactly, np.where(same_bits | (np.isnan(exact) & np.isnan(got)), 0.0, np.inf), errors)
    return np.where(np.isnan(errors), np.inf, errors)


def _run(name: str, parameters: tuple[float, ...], values: np.ndarray, data_type: dml.DataType,
         fused: bool) -> np.ndarray:
    cls = dml.OperatorDesc.registry[dml.OperatorType["ACTIVATION_" + name]]
    device = dml.Device()
    if fused:   # Output = activation(Bias): a zero input, NormalizeVariance FALSE
        x = dml.TensorDesc(data_type, [1, values.size])
        desc = dml.MeanVarianceNormalization1OperatorDesc(x, None, x, x, [1], False, 0.0, cls(*parameters))
        (out,) = device.compile_operator(device.create_operator(desc))(np.zeros((1, values.size), values.dtype),
                                                                       None, values.reshape(1, -1))
    else:
        x = dml.TensorDesc(data_type, [values.size])
        (out,) = device.compile_operator(device.create_operator(cls(*parameters, input_tensor=x,
                                                                    output_tensor=x)))(values)
    return np.asarray(out).reshape(-1)


def max_ulp_error(name: str, parameters: tuple[float, ...], data_type: dml.DataType,
                  fused: bool) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the largest error over its bound, the inputs, the outputs, the errors, the bounds) of one activation over
    its sweep: the error and bound are in ulps."""
    values = _float32_inputs(name, parameters) if data_type is F32 else _float16_inputs()
    got = _run(name, parameters, values, data_type, fused)
    # Fused, the activation's input is 0 + Bias, which is +0 for a Bias of -0.
    with np.errstate(invalid="ignore"):
        x = values.astype(np.float64) + (0.0 if fused else -0.0)
    exact = apply_activation(name, parameters, x)
    scale = parameters[0] * x if name in PRODUCT_FIRST else None
    errors = ulp_errors(got, exact, values.dtype, scale)
    bounds = ulp_bounds(name, parameters, x, values.dtype)
    return float(np.max(errors / bounds)), values, got, errors, bounds


CASES = [(name, parameters) for name, sets in PARAMETER_SETS.items() for parameters in sets]


def test_every_activation_is_swept() -> None:
    assert list(PARAMETER_SETS) == list(ACTIVATION_PARAMETERS)
    assert all(len(p) == len(ACTIVATION_PARAMETERS[name]) for name, p in CASES)


@pytest.mark.parametrize("fused", [False, True], ids=["standalone", "fused"])
@pytest.mark.parametrize("data_type", [F32, F16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize(("name", "parameters"), CASES, ids=[f"{n}{list(p)}" for n, p in CASES])
def test_whole_range_within_the_ulp_bound(name: str, parameters: tuple[float, ...], data_type: dml.DataType,
                                          fused: bool, backend: str) -> None:
    parameters = tuple(float(np.float32(p)) for p in parameters)
    worst, values, got, errors, bounds = max_ulp_error(name, parameters, data_type, fused)
    bad = np.flatnonzero(errors > bounds)[:5]
    exact = apply_activation(name, parameters, values[bad].astype(np.float64))
    assert worst <= 1.0, (f"{name}{parameters}: {bad.size} inputs beyond the bound, e.g. f({values[bad].tolist()}) "
                          f"= {got[bad].tolist()}, exact {exact.tolist()}, {errors[bad].tolist()} ulp, bound "
                          f"{bounds[bad].tolist()}")
