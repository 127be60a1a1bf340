"""The 17 fusable activations: names, parameters and defaults (DIGEST 2.4), feature levels and parameter rules,
the fused form's rules and DML-named construction (each function's accuracy over its whole range is
test_activation_accuracy.py's)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from reference import ACTIVATION_PARAMETERS

import opendml as dml
from opendml.ops import activations as act

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16

# Written out from DIGEST 2.4: class name -> (DML operator, level introduced, {python parameter: default or None}).
EXPECTED: dict[str, tuple[str, str, dict[str, float | None]]] = {
    "ActivationLinearOperatorDesc": ("LINEAR", "1_0", {"alpha": None, "beta": None}),
    "ActivationSigmoidOperatorDesc": ("SIGMOID", "1_0", {}),
    "ActivationHardSigmoidOperatorDesc": ("HARD_SIGMOID", "1_0", {"alpha": 0.2, "beta": 0.5}),
    "ActivationTanhOperatorDesc": ("TANH", "1_0", {}),
    "ActivationScaledTanhOperatorDesc": ("SCALED_TANH", "1_0", {"alpha": 1.0, "beta": 0.5}),
    "ActivationReluOperatorDesc": ("RELU", "1_0", {}),
    "ActivationLeakyReluOperatorDesc": ("LEAKY_RELU", "1_0", {"alpha": 0.01}),
    "ActivationThresholdedReluOperatorDesc": ("THRESHOLDED_RELU", "1_0", {"alpha": 1.0}),
    "ActivationEluOperatorDesc": ("ELU", "1_0", {"alpha": 1.0}),
    "ActivationCeluOperatorDesc": ("CELU", "3_0", {"alpha": 1.0}),
    "ActivationScaledEluOperatorDesc": ("SCALED_ELU", "1_0", {"alpha": 1.67326319217681884765625,
                                                              "gamma": 1.05070102214813232421875}),
    "ActivationSoftplusOperatorDesc": ("SOFTPLUS", "1_0", {"steepness": 1.0}),
    "ActivationParametricSoftplusOperatorDesc": ("PARAMETRIC_SOFTPLUS", "1_0", {"alpha": None, "beta": None}),
    "ActivationSoftsignOperatorDesc": ("SOFTSIGN", "1_0", {}),
    "ActivationIdentityOperatorDesc": ("IDENTITY", "1_0", {}),
    "ActivationShrinkOperatorDesc": ("SHRINK", "2_0", {"bias": 0.0, "threshold": 0.5}),
    "ActivationGeluOperatorDesc": ("GELU", "5_1", {}),
}


def _build(class_name: str, **values: float) -> act.ActivationOperatorDesc:
    cls = getattr(dml, class_name)
    _, _, parameters = EXPECTED[class_name]
    kwargs = {name: values.get(name, 1.0 if default is None else default) for name, default in parameters.items()}
    result: act.ActivationOperatorDesc = cls(**kwargs)
    return result


@pytest.mark.parametrize("class_name", list(EXPECTED))
def test_names_parameters_defaults_and_levels(class_name: str) -> None:
    operator, level, parameters = EXPECTED[class_name]
    cls = getattr(dml, class_name)
    assert cls.OPERATOR_TYPE is dml.OperatorType["ACTIVATION_" + operator]
    assert cls.info().level is dml.FeatureLevel.parse(level)
    assert cls.parameter_names() == tuple(parameters)
    assert cls.info().parameters == ACTIVATION_PARAMETERS[operator]
    required = [name for name, default in parameters.items() if default is None]
    if required:
        with pytest.raises(TypeError):
            cls()
    else:
        instance = cls()
        for name, default in parameters.items():
            assert getattr(instance, name) == default
        assert instance.input_tensor is None and instance.output_tensor is None and instance.is_fused_form
    # positional parameters in DML's struct order; the tensors are keyword-only
    values = [float(index + 2) for index in range(len(parameters))]
    instance = cls(*values)
    assert list(instance.parameters().values()) == values
    assert list(instance.parameters()) == list(ACTIVATION_PARAMETERS[operator])


def test_seventeen_activations_in_the_table() -> None:
    assert len(act.ACTIVATIONS) == 17 == len(act.ACTIVATION_CLASSES)
    assert {cls.__name__ for cls in act.ACTIVATION_CLASSES.values()} == set(EXPECTED)


def _mvn(activation: dml.OperatorDesc) -> dml.MeanVarianceNormalization1OperatorDesc:
    x = dml.TensorDesc(F32, [1, 2, 3, 3])
    return dml.MeanVarianceNormalization1OperatorDesc(x, None, None, x, [2, 3], True, 1e-5, activation)


@pytest.mark.parametrize("class_name", list(EXPECTED))
def test_each_activation_from_its_own_level(class_name: str) -> None:
    _, level, _ = EXPECTED[class_name]
    introduced = max(dml.FeatureLevel.parse(level), dml.FeatureLevel.LEVEL_2_1)   # MVN1 itself needs 2_1
    for device_level in dml.FeatureLevel:
        if device_level < dml.FeatureLevel.LEVEL_2_1:
            continue
        device = dml.Device(feature_level=device_level)
        desc = _mvn(_build(class_name))
        if device_level >= introduced:
            device.create_operator(desc)
        else:
            with pytest.raises(dml.UnsupportedError, match=rf"needs feature level {level}; the device is at "
                                                           rf"{device_level}"):
                device.create_operator(desc)


@pytest.mark.parametrize(("steepness", "level", "error"), [
    (1.0, "2_1", None), (4.0, "6_3", None), (0.5, "6_3", dml.UnsupportedError), (0.999, "5_0", dml.UnsupportedError),
    (-2.0, "6_3", dml.UnsupportedError), (0.5, "6_4", None), (-2.0, "6_4", None), (0.0, "6_4", dml.ValidationError),
])
def test_softplus_steepness_by_level(steepness: float, level: str, error: type[Exception] | None) -> None:
    device = dml.Device(feature_level=level)
    desc = _mvn(dml.ActivationSoftplusOperatorDesc(steepness=steepness))
    if error is None:
        device.create_operator(desc)
    else:
        with pytest.raises(error, match=r"FusedActivation.Steepness"):
            device.create_operator(desc)


def test_parameter_rules_are_data() -> None:
    rules = {(rule.operator_type.name, rule.parameter): rule for rule in act.PARAMETER_RULES if rule.minimum}
    softplus = rules[("ACTIVATION_SOFTPLUS", "Steepness")]
    assert softplus.minimum == 1.0 and softplus.lifted_at is dml.FeatureLevel.LEVEL_6_4


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dml.ActivationEluOperatorDesc(alpha=math.nan), r"DML_OPERATOR_ACTIVATION_ELU: Alpha is nan; it must be a "
                                                            r"finite FLOAT"),
    (lambda: dml.ActivationLinearOperatorDesc(math.inf, 0.0), r"Alpha is inf; it must be a finite FLOAT"),
    (lambda: dml.ActivationLinearOperatorDesc(1.0, 1e39), r"Beta is 1e\+39; it must be a finite FLOAT"),
    (lambda: dml.ActivationShrinkOperatorDesc(bias=True), r"Bias is True; it must be a number"),
    (lambda: dml.ActivationSoftplusOperatorDesc("2"), r"Steepness is '2'; it must be a number"),
    (lambda: dml.ActivationReluOperatorDesc(input_tensor=[1, 2]), r"InputTensor is \[1, 2\]; it must be a TensorDesc$"),
])
def test_bad_parameters(build: Callable[[], object], message: str) -> None:
    with pytest.raises(dml.ValidationError, match=message):
        build()


def test_integer_and_numpy_parameters_become_floats() -> None:
    elu = dml.ActivationEluOperatorDesc(alpha=np.float32(0.5))
    assert type(elu.alpha) is float and elu.alpha == 0.5
    assert dml.ActivationLinearOperatorDesc(2, 3).parameters() == {"Alpha": 2.0, "Beta": 3.0}


def test_standalone_form() -> None:
    # The tensors are how a standalone activation is described (test_activation_standalone.py runs all 17); the
    # same class without them is the fused form, which a device refuses to run on its own.
    x = dml.TensorDesc(F32, [4])
    device = dml.Device()
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_ACTIVATION_RELU: InputTensor is absent; a "
                                                  r"standalone activation needs both"):
        device.create_operator(dml.ActivationReluOperatorDesc())
    relu = dml.ActivationReluOperatorDesc(input_tensor=x, output_tensor=x)
    assert relu.input_slots() == [("InputTensor", x)] and relu.output_slots() == [("OutputTensor", x)]
    assert not relu.is_fused_form
    (out,) = device.compile_operator(device.create_operator(relu))(np.array([-1, 0, 2, -3], np.float32))
    assert out.tolist() == [0, 0, 2, 0]
    with pytest.raises(dml.UnsupportedError, match=r"DML_OPERATOR_ACTIVATION_GELU needs feature level 5_1"):
        dml.Device(feature_level="5_0").create_operator(dml.ActivationGeluOperatorDesc(input_tensor=x,
                                                                                       output_tensor=x))
    with pytest.raises(dml.ValidationError, match=r"FusedActivation.InputTensor is set; a fused activation's "
                                                  r"InputTensor and OutputTensor must be absent"):
        device.create_operator(_mvn(relu))


def test_dml_field_names() -> None:
    elu = act.make_activation("DML_OPERATOR_ACTIVATION_ELU", {"Alpha": 0.5})
    assert elu == dml.ActivationEluOperatorDesc(alpha=0.5)
    shrink = act.make_activation("SHRINK", {"Bias": 0.25, "Threshold": 1.0})
    assert shrink == dml.ActivationShrinkOperatorDesc(0.25, 1.0)
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_ACTIVATION_ELU: Beta is not one of its fields"):
        act.make_activation("ELU", {"Beta": 1.0})
    with pytest.raises(dml.ValidationError, match=r"DML_OPERATOR_ACTIVATION_SOFTMAX is not a fusable activation; the "
                                                  r"fusable ones are DML_OPERATOR_ACTIVATION_LINEAR"):
        act.make_activation("ACTIVATION_SOFTMAX")
    for info in act.ACTIVATIONS:
        for dml_name in info.parameters:
            assert act.FIELDS[dml_name] == "".join("_" + c.lower() if c.isupper() else c for c in dml_name)[1:]


def test_json_field_table_matches() -> None:
    from opendml.model.fields import Kind, fields_of

    for cls in act.ACTIVATION_CLASSES.values():
        table = {item.dml_name: item for item in fields_of(cls)}
        assert set(table) == {"InputTensor", "OutputTensor", *cls.info().parameters}
        assert all(act.FIELDS[name] == item.python_name for name, item in table.items())
        assert table["InputTensor"].kind is Kind.OPTIONAL_TENSOR
        assert all(table[name].kind is Kind.FLOAT for name in cls.info().parameters)


def test_registered_by_operator_type() -> None:
    for operator_type, cls in act.ACTIVATION_CLASSES.items():
        assert dml.OperatorDesc.registry[operator_type] is cls
