"""The three examples of the DML_REDUCE_OPERATOR_DESC page, run through opendml.

Every example reduces the same 3x3 FLOAT32 input with DML_REDUCE_FUNCTION_SUM.
"""

from __future__ import annotations

import numpy as np

import opendml as dml

INPUT = np.array([[1, 2, 3],
                  [3, 0, 4],
                  [2, 4, 2]], dtype=np.float32)

EXAMPLES = [
    ("Example 1: SUM over the columns (Axes {0})", [0], [1, 3]),
    ("Example 2: SUM over the rows (Axes {1})", [1], [3, 1]),
    ("Example 3: SUM over all axes (Axes {0, 1})", [0, 1], [1, 1]),
]


def main() -> None:
    device = dml.Device()
    input_tensor = dml.TensorDesc(dml.DataType.FLOAT32, INPUT.shape)
    print(f"InputTensor (Sizes {list(INPUT.shape)}, FLOAT32):\n{INPUT}\n")
    for title, axes, output_sizes in EXAMPLES:
        desc = dml.ReduceOperatorDesc(function=dml.ReduceFunction.SUM, input_tensor=input_tensor,
                                      output_tensor=dml.TensorDesc(dml.DataType.FLOAT32, output_sizes), axes=axes)
        compiled = device.compile_operator(device.create_operator(desc))
        (output,) = compiled(INPUT)
        print(f"{title} -> OutputTensor (Sizes {output_sizes}):\n{output}\n")


if __name__ == "__main__":
    main()
