"""One valid descriptor of every element-wise operator, built from its row (ops/elementwise.py), for the tests that
need an example of every registered operator (test_fuzz_json, test_fuzz_values): a new row needs no new line."""

from __future__ import annotations

from typing import Any

import opendml as dml
from opendml.model.fields import fields_of
from opendml.ops.elementwise import ElementWiseOperatorDesc

F32 = dml.DataType.FLOAT32


def example_arguments(desc_type: type[ElementWiseOperatorDesc], sizes: tuple[int, ...] = (2, 2)) -> dict[str, Any]:
    """Constructor arguments (Python names): each tensor of `sizes` in FLOAT32 where its page's highest row lists it,
    else the first type listed (one type per same-type group: one all members allow), scalars 0 (Min) or 1 (Max),
    an identity ScaleBias on float inputs, a LINEAR FusedActivation, enums their first members."""
    info = desc_type.INFO
    top = max(info.support, key=lambda support_row: support_row.level).tensors
    chosen: dict[str, dml.DataType] = {}
    for name in info.tensor_fields():
        group = next((group for group in info.same_type if name in group), (name,))
        if group[0] in chosen:
            chosen[name] = chosen[group[0]]
            continue
        common = sorted((data_type for data_type in top[name].data_types
                         if all(data_type in top[member].data_types for member in group)),
                        key=lambda data_type: data_type != F32)
        chosen[name] = common[0]
        for member in group:
            chosen.setdefault(member, common[0])
    values: dict[str, Any] = {name: dml.TensorDesc(data_type, list(sizes)) for name, data_type in chosen.items()}
    first = chosen[info.inputs[0][0]]
    for name, kind in info.scalars:
        if kind == "DATA_TYPE":
            values[name] = first
        elif kind in ("FLOAT", "SCALAR"):
            values[name] = 1 if name == "Max" else 0
        elif kind == "SCALE_BIAS":
            values[name] = dml.ScaleBias(1.0, 0.0) if first.is_float else None
        elif kind == "ACTIVATION":
            values[name] = dml.ActivationLinearOperatorDesc(alpha=1.0, beta=0.0)
        elif kind == "ROUNDING":
            values[name] = dml.RoundingMode.HALVES_TO_NEAREST_EVEN
        elif kind == "INFINITY":
            values[name] = dml.IsInfinityMode.EITHER
    python_names = {item.dml_name: item.python_name for item in fields_of(desc_type)}
    return {python_names[name]: value for name, value in values.items()}


def example(desc_type: type[ElementWiseOperatorDesc]) -> ElementWiseOperatorDesc:
    """A valid descriptor (checked at the highest level)."""
    desc = desc_type(**example_arguments(desc_type))
    desc.validate(dml.FeatureLevel.LEVEL_6_4)
    return desc
