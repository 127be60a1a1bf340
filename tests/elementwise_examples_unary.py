"""The examples the DirectML doc pages give for the element-wise UNARY operators, copied by hand as plain data.

Each entry: "operator" (the DML name without ELEMENT_WISE_), "fields" (the DML-named scalar fields; absent ones take
their defaults), "inputs" ({DML tensor field: (data type name, sizes, values in row-major order)}) and "output"
((data type name, sizes, values)). Nothing here is computed.

Only three pages give examples: BIT_NOT's and BIT_COUNT's operator pages, and the DML_ROUNDING_MODE enumeration page
(a table of inputs and results per mode, used by ROUND; the page gives no data type, FLOAT32 is ours). The other 32
unary operator pages give formulas only.
"""

from __future__ import annotations

EXAMPLES: list[dict[str, object]] = [
    # DML_ELEMENT_WISE_BIT_NOT_OPERATOR_DESC, "Example".
    {"operator": "BIT_NOT", "fields": {},
     "inputs": {"InputTensor": ("UINT8", (2, 2), (0, 128, 42, 255))},
     "output": ("UINT8", (2, 2), (255, 127, 213, 0))},
    # DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC, "Example".
    {"operator": "BIT_COUNT", "fields": {},
     "inputs": {"InputTensor": ("UINT32", (2, 2), (0, 123, 456, 789))},
     "output": ("UINT32", (2, 2), (0, 6, 4, 5))},
    # DML_ROUNDING_MODE (ne-directml-dml_rounding_mode), "Remarks" table: one row per mode.
    {"operator": "ROUND", "fields": {"RoundingMode": "DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"},
     "inputs": {"InputTensor": ("FLOAT32", (9,), (-2.5, -1.75, -1.5, -1.25, 0.0, 1.25, 1.5, 1.75, 2.5))},
     "output": ("FLOAT32", (9,), (-2.0, -2.0, -2.0, -1.0, 0.0, 1.0, 2.0, 2.0, 2.0))},
    {"operator": "ROUND", "fields": {"RoundingMode": "DML_ROUNDING_MODE_TOWARD_ZERO"},
     "inputs": {"InputTensor": ("FLOAT32", (9,), (-2.5, -1.75, -1.5, -1.25, 0.0, 1.25, 1.5, 1.75, 2.5))},
     "output": ("FLOAT32", (9,), (-2.0, -1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 2.0))},
    {"operator": "ROUND", "fields": {"RoundingMode": "DML_ROUNDING_MODE_TOWARD_INFINITY"},
     "inputs": {"InputTensor": ("FLOAT32", (9,), (-2.5, -1.75, -1.5, -1.25, 0.0, 1.25, 1.5, 1.75, 2.5))},
     "output": ("FLOAT32", (9,), (-3.0, -2.0, -2.0, -1.0, 0.0, 1.0, 2.0, 2.0, 3.0))},
]
