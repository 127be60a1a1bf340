"""The generators: FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX and DIAGONAL_MATRIX1, as rows of the
element-wise engine (issue 28).

A generator is an engine row whose formula reads the OUTPUT element's coordinates (formula.COORDINATES: `index`, the
row-major linear index; `row` and `col`, the coordinates along the last two dimensions; INT64) instead of, or beside,
input tensors. Its descriptor has the engine's interface (formula_tree, formula_parameters, present_tensors,
view_type, scale_bias_value, scaled_inputs, variables, INFO.inputs), so every backend's element_wise kernel renders
it; the renderers bind the coordinates (cpu: an INT64 view of 0, 1, 2, ... through `coordinate_strides`; gpu: the
same strides over the logical index; NumPy: `coordinate_values`).

The pages' rules (each page's "Tensor support" is SUPPORT below):
- ValueDataType is OutputTensor's DataType, and Value, ValueStart, ValueDelta are DML_SCALAR_UNION values of that
  type, exactly (an unsigned type's member holds no negative number: a descending UINT8 sequence steps by 254);
- FILL_VALUE_SEQUENCE: OutputTensor[i] = ValueStart + ValueDelta * i, i the element's row-major index (the page's
  pseudocode): integers wrap in the type's width; floats compute in FLOAT32 (FLOAT16 widened exactly, the element
  rounded once), start + delta * float(i) with i rounded to FLOAT32 (README rulings);
- DIAGONAL_MATRIX: Value where col - row == Offset, else 0; Value is a FLOAT: truncated toward zero and saturated
  on an integer tensor ("10.6 will become 10"), rounded to FLOAT32 (and once to FLOAT16) on a float one;
- DIAGONAL_MATRIX1: with t = col - row, Value where DiagonalFillBegin <= t < DiagonalFillEnd (Begin <= End), or
  where t >= Begin or t < End (Begin > End: the band inverted), else InputTensor's element (0 where it is absent);
  InputTensor has OutputTensor's DataType, DimensionCount and Sizes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..convert import to_float, to_int
from ..errors import ValidationError
from ..formula import COORDINATES, Node, coordinate_values, load, numpy_function, parse, substitute
from ..support import F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, SupportTable, check_support, row
from ..tensor import TensorDesc
from ..types import DataType, FeatureLevel, OperatorType, to_data_type
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .elementwise import scalar_value
from .structs import ScalarValue

L = FeatureLevel
T = OperatorType
_INT = {"kind": "INT"}   # a DML INT field (signed; model/fields.py reads it as one)
_SCALAR = {"kind": "SCALAR"}   # a DML_SCALAR_UNION of ValueDataType (exact; a float one may be infinite)

_NUMERIC_32 = (F32, F16, I32, I16, I8, U32, U16, U8)
_NUMERIC_64 = (F32, F16, I64, I32, I16, I8, U64, U32, U16, U8)
_ALL = (F64, *_NUMERIC_64)

#: Each page's "Tensor support" table, one row per feature level it lists.
SUPPORT: dict[OperatorType, SupportTable] = {
    T.FILL_VALUE_CONSTANT: (row(L.LEVEL_2_1, 4, OutputTensor=_NUMERIC_32),
                            row(L.LEVEL_4_0, (1, 8), OutputTensor=_NUMERIC_32),
                            row(L.LEVEL_4_1, (1, 8), OutputTensor=_ALL)),
    T.FILL_VALUE_SEQUENCE: (row(L.LEVEL_2_1, 4, OutputTensor=_NUMERIC_32),
                            row(L.LEVEL_4_0, (1, 8), OutputTensor=_NUMERIC_32),
                            row(L.LEVEL_5_0, (1, 8), OutputTensor=_NUMERIC_64)),
    T.DIAGONAL_MATRIX: (row(L.LEVEL_2_0, 4, OutputTensor=(F32, F16)),
                        row(L.LEVEL_2_1, 4, OutputTensor=_NUMERIC_32),
                        row(L.LEVEL_4_0, (2, 4), OutputTensor=_NUMERIC_32),
                        row(L.LEVEL_5_1, (2, 4), OutputTensor=_ALL)),
    T.DIAGONAL_MATRIX1: (row(L.LEVEL_5_1, (2, 4), InputTensor=_ALL, OutputTensor=_ALL),),
}

_BAND = "(col - row >= DiagonalFillBegin and col - row < DiagonalFillEnd) if DiagonalFillEnd >= DiagonalFillBegin " \
        "else (col - row >= DiagonalFillBegin or col - row < DiagonalFillEnd)"


def _sequence(desc: Any) -> str:
    """ValueStart + ValueDelta * index: in FLOAT32 (FLOAT16 widened), or exactly in 64 bits and wrapped on store."""
    if desc.output_tensor.data_type.is_float:
        return "ValueStart + ValueDelta * to_float(index)"
    return "widen(ValueStart) + widen(ValueDelta) * index"


@dataclass(frozen=True)
class GeneratorInfo:
    """One generator: its inputs ((DML field, formula variable), binding order; all optional), its formula (or a
    function of the descriptor that picks it), and its FLOAT/SCALAR/INT parameters ((DML field, kind))."""

    operator_type: OperatorType
    formula: str | Callable[[Any], str]
    parameters: tuple[tuple[str, str], ...]
    inputs: tuple[tuple[str, str], ...] = ()

    @property
    def support(self) -> SupportTable:
        return SUPPORT[self.operator_type]

    @property
    def level(self) -> FeatureLevel:
        return min(support_row.level for support_row in self.support)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)


INFO: dict[OperatorType, GeneratorInfo] = {info.operator_type: info for info in (
    GeneratorInfo(T.FILL_VALUE_CONSTANT, "Value", (("Value", "SCALAR"),)),
    GeneratorInfo(T.FILL_VALUE_SEQUENCE, _sequence, (("ValueStart", "SCALAR"), ("ValueDelta", "SCALAR"))),
    GeneratorInfo(T.DIAGONAL_MATRIX, "select(col - row == Offset, Value, 0)", (("Offset", "INT"), ("Value", "FLOAT"))),
    GeneratorInfo(T.DIAGONAL_MATRIX1, f"select({_BAND}, Value, x)",
                  (("Value", "SCALAR"), ("DiagonalFillBegin", "INT"), ("DiagonalFillEnd", "INT")),
                  (("InputTensor", "x"),)),
)}


def _dml_name(python_name: str) -> str:
    return "".join(part.capitalize() for part in python_name.split("_"))


class GeneratorOperatorDesc(OperatorDesc):
    """Base of the four generator descriptors (frozen dataclasses, fields in DirectML.h's struct order)."""

    INFO: ClassVar[GeneratorInfo]
    #: The element-wise engine's kernel module on every backend.
    KERNEL_MODULE: ClassVar[str] = "element_wise"
    output_tensor: TensorDesc

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        for item in dataclasses.fields(self):   # type: ignore[arg-type]
            name, value = _dml_name(item.name), getattr(self, item.name)
            if name == "OutputTensor" or (name == "InputTensor" and value is not None):
                require_tensor(operator, name, value)
            elif name == "ValueDataType":
                object.__setattr__(self, item.name, to_data_type(operator, name, value))
            elif item.metadata.get("kind") == "INT":
                object.__setattr__(self, item.name, to_int(operator, name, value, low=-2**31, high=2**31 - 1))
            elif name == "Value" and self.OPERATOR_TYPE is T.DIAGONAL_MATRIX:
                object.__setattr__(self, item.name, to_float(operator, name, value))
        for name, kind in self.INFO.parameters:
            if kind == "SCALAR":
                attribute = _snake(name)
                object.__setattr__(self, attribute, scalar_value(operator, name, getattr(self, attribute),
                                                                 vars(self)["value_data_type"]))

    @classmethod
    def info(cls) -> GeneratorInfo:
        return cls.INFO

    @classmethod
    def support_tables(cls) -> dict[str, SupportTable]:
        return {"": cls.INFO.support}

    # -- OperatorDesc ------------------------------------------------------------------------------------------------

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [(name, getattr(self, _snake(name))) for name, _ in self.INFO.inputs]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the page's support table at `level`, ValueDataType, DIAGONAL_MATRIX1's input."""
        operator = self.label
        self.check_tensors()
        tensors = self.present_tensors()
        output = self.output_tensor
        source = tensors.get("InputTensor")
        if source is not None:
            check_same_rank(operator, "InputTensor", source, "OutputTensor", output)
            if source.sizes != output.sizes:
                raise ValidationError(f"{operator}: InputTensor.Sizes is {list(source.sizes)}; it must equal "
                                      f"OutputTensor.Sizes {list(output.sizes)}")
            check_same_data_type(operator, "InputTensor", source, "OutputTensor", output)
        check_support(self.INFO.support, operator, level, tensors)
        value_type = getattr(self, "value_data_type", None)
        if value_type is not None and value_type != output.data_type:
            raise ValidationError(f"{operator}: ValueDataType is {value_type.name}; it must equal "
                                  f"OutputTensor.DataType ({output.data_type.name})")

    # -- the engine's interface --------------------------------------------------------------------------------------

    def present_tensors(self) -> dict[str, TensorDesc]:
        """{DML field: tensor} of every tensor that is set, inputs first, OutputTensor last."""
        tensors = {name: tensor for name, tensor in self.input_slots() if tensor is not None}
        return {**tensors, "OutputTensor": self.output_tensor}

    def view_type(self, dml_name: str) -> DataType:
        return self.present_tensors()[dml_name].data_type

    def scale_bias_value(self) -> None:
        return None

    def scaled_inputs(self) -> tuple[str, ...]:
        return ()

    def variables(self) -> dict[str, str]:
        """{formula variable: DML field} of the inputs that are set."""
        return {variable: name for name, variable in self.INFO.inputs if getattr(self, _snake(name)) is not None}

    def formula_text(self) -> str:
        formula = self.INFO.formula
        return formula if isinstance(formula, str) else formula(self)

    def formula_types(self) -> dict[str, DataType]:
        """Inputs and SCALAR parameters as OutputTensor's type, INT parameters and the coordinates as INT64, a FLOAT
        (DIAGONAL_MATRIX's Value) as FLOAT32 on a float tensor and as the tensor's type on an integer one."""
        output = self.output_tensor.data_type
        types = dict.fromkeys(COORDINATES, DataType.INT64)
        types.update({variable: output for _, variable in self.INFO.inputs})
        for name, kind in self.INFO.parameters:
            types[name] = DataType.INT64 if kind == "INT" else \
                DataType.FLOAT32 if kind == "FLOAT" and output.is_float else output
        return types

    def formula_parameters(self) -> dict[str, float | int]:
        """{formula name: value}: SCALAR values exactly, INTs as they are, DIAGONAL_MATRIX's FLOAT Value rounded to
        FLOAT32 (on an integer tensor truncated toward zero and saturated to the type)."""
        output = self.output_tensor.data_type
        values: dict[str, float | int] = {}
        for name, kind in self.INFO.parameters:
            value = getattr(self, _snake(name))
            if kind == "FLOAT" and output.is_float:
                value = float(np.float32(value))
            elif kind == "FLOAT":
                info = np.iinfo(output.numpy_dtype)
                value = min(max(int(float(np.float32(value))), int(info.min)), int(info.max))
            values[name] = value
        return values

    def formula_tree(self) -> Node:
        """The typed tree of the formula, an absent InputTensor replaced by 0."""
        output = self.output_tensor.data_type
        tree = parse(self.formula_text(), self.formula_types(), output)
        for name, variable in self.INFO.inputs:
            if getattr(self, _snake(name)) is None:
                tree = substitute(tree, variable, parse("0", {}, output))
        return tree


def _snake(name: str) -> str:
    """DiagonalFillBegin -> diagonal_fill_begin."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


@dataclass(frozen=True)
class FillValueConstantOperatorDesc(GeneratorOperatorDesc):
    """DML_FILL_VALUE_CONSTANT_OPERATOR_DESC (FL 2_1): OutputTensor = Value."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.FILL_VALUE_CONSTANT
    INFO: ClassVar[GeneratorInfo] = INFO[T.FILL_VALUE_CONSTANT]
    output_tensor: TensorDesc
    value_data_type: DataType
    value: ScalarValue = field(metadata=_SCALAR)


@dataclass(frozen=True)
class FillValueSequenceOperatorDesc(GeneratorOperatorDesc):
    """DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC (FL 2_1): OutputTensor[i] = ValueStart + ValueDelta * i (row-major i)."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.FILL_VALUE_SEQUENCE
    INFO: ClassVar[GeneratorInfo] = INFO[T.FILL_VALUE_SEQUENCE]
    output_tensor: TensorDesc
    value_data_type: DataType
    value_start: ScalarValue = field(metadata=_SCALAR)
    value_delta: ScalarValue = field(metadata=_SCALAR)


@dataclass(frozen=True)
class DiagonalMatrixOperatorDesc(GeneratorOperatorDesc):
    """DML_DIAGONAL_MATRIX_OPERATOR_DESC (FL 2_0): Value where col - row == Offset, else 0."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.DIAGONAL_MATRIX
    INFO: ClassVar[GeneratorInfo] = INFO[T.DIAGONAL_MATRIX]
    output_tensor: TensorDesc
    offset: int = field(metadata=_INT)
    value: float = 1.0


@dataclass(frozen=True)
class DiagonalMatrix1OperatorDesc(GeneratorOperatorDesc):
    """DML_DIAGONAL_MATRIX1_OPERATOR_DESC (FL 5_1): Value inside the diagonal band [DiagonalFillBegin,
    DiagonalFillEnd) of col - row (inverted where Begin > End), InputTensor's element (or 0) outside it."""

    OPERATOR_TYPE: ClassVar[OperatorType] = T.DIAGONAL_MATRIX1
    INFO: ClassVar[GeneratorInfo] = INFO[T.DIAGONAL_MATRIX1]
    input_tensor: TensorDesc | None
    output_tensor: TensorDesc
    value_data_type: DataType
    value: ScalarValue = field(metadata=_SCALAR)
    diagonal_fill_begin: int = field(metadata=_INT)
    diagonal_fill_end: int = field(metadata=_INT)


#: Operator type -> descriptor class.
CLASSES: dict[OperatorType, type[GeneratorOperatorDesc]] = {
    cls.OPERATOR_TYPE: cls for cls in (FillValueConstantOperatorDesc, FillValueSequenceOperatorDesc,
                                       DiagonalMatrixOperatorDesc, DiagonalMatrix1OperatorDesc)}


def block_values(desc: GeneratorOperatorDesc, origin: Sequence[int], sizes: Sequence[int],
                 source: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """The generator's output block of `sizes` whose first element is at `origin` of the whole OutputTensor (Dask's
    chunks), by the NumPy rendering of its formula (as the small-tensor kernel): `source` is InputTensor's block."""
    output = desc.output_tensor
    tree = desc.formula_tree()
    env: dict[str, Any] = dict(desc.formula_parameters())
    used = {node.name for node in tree.walk() if node.op == "name"}
    env.update({name: coordinate_values(name, sizes, origin, output.sizes) for name in COORDINATES if name in used})
    if source is not None and "x" in used:
        data_type = output.data_type
        env["x"] = load(np.asarray(source), "F" if data_type.is_float else "I", data_type,
                        DataType.FLOAT64 if data_type == DataType.FLOAT64 else DataType.FLOAT32)
    result = np.empty(tuple(sizes), output.data_type.numpy_dtype)
    with np.errstate(all="ignore"):
        result[...] = numpy_function(tree, output.data_type)(env)
    return result
