"""The examples the element-wise binary and ternary operators' doc pages give, copied by hand (issue 26).

Each entry: the operator (DML name without DML_OPERATOR_ELEMENT_WISE_), its non-tensor fields, its inputs by DML
field name as (data type name, sizes, values in row-major order) and the output the page shows. Of the 27 pages
(ADD, ADD1, SUBTRACT, MULTIPLY, DIVIDE, POW, MAX, MIN, MEAN, LOGICAL_*, BIT_*, MODULUS_*, ATAN_YX,
DIFFERENCE_SQUARE, IF) only IF's gives an example with values. BIT_XOR's page has an "Example" section, but it
shows one InputTensor mapped to its bitwise complement (BIT_NOT's example, copied by mistake), so it is left out:
it is no BIT_XOR example.
"""

from __future__ import annotations

from typing import Any

EXAMPLES: list[dict[str, Any]] = [
    # DML_ELEMENT_WISE_IF_OPERATOR_DESC page: "Non-zero elements of ConditionTensor select from ATensor, while
    # zero-valued elements select from BTensor." The page gives values only; the sizes {2, 2} follow its nesting,
    # ConditionTensor is UINT8 (the only type its table allows) and FLOAT32 is our choice for the others (any of the
    # table's types gives the same values). Two dimensions need DML_FEATURE_LEVEL_3_0 or above.
    {
        "operator": "IF",
        "fields": {},
        "inputs": {
            "ConditionTensor": ("UINT8", (2, 2), [1, 0, 1, 1]),
            "ATensor": ("FLOAT32", (2, 2), [1.0, 2.0, 3.0, 4.0]),
            "BTensor": ("FLOAT32", (2, 2), [9.0, 8.0, 7.0, 6.0]),
        },
        "output": ("FLOAT32", (2, 2), [1.0, 8.0, 3.0, 4.0]),
    },
]
