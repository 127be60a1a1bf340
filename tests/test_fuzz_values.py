"""Fuzzing every Python entry point with values of every kind: only opendml's errors may come out.

A table of hostile values (huge and negative ints, inf and NaN, 2000-deep nesting, 0-d and 2-d arrays, NumPy scalars
of every dtype, strings, bytes, None, objects whose __index__, __float__, __len__, __iter__ or __repr__ raise,
bools, complex, Fraction and Decimal, unhashables...) is fed into every slot: each field of each descriptor class
(enumerated from the dataclasses and the registry, so that a new operator or field is covered without a change
here), each field of TensorDesc and Binding, each argument of calc_buffer_tensor_size, of the graph API's functions
(enumerated from their signatures) and of Device and its methods. Every other argument holds a valid value. Each case
must either raise a DmlError whose message is printable and bounded, or return an object that is valid: its fields
converted to canonical values (exact ints and floats, tuples, enums, TensorDescs), a descriptor that
`create_operator` either accepts or refuses with a DmlError. The value itself must not have been modified.

The cases: first the table, value by value across every slot (every pair once), then random values (boundary
integers, random strings with control characters, nested lists of table values...), two slots at once. CI runs
OPENDML_FUZZ_CASES cases (default 20000, a few seconds: every slot with about 90 of the table's values);
`OPENDML_FUZZ_CASES=100000` runs the whole table in every slot and random values after it (OPENDML_FUZZ_SEED
picks other random ones).
"""

from __future__ import annotations

import array
import ctypes
import dataclasses
import inspect
import itertools
import math
import mmap
import os
import random
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any, ClassVar

import element_wise_cases
import numpy as np
import pytest

import opendml as dml
import opendml.graph as graph_module
from opendml.convert import describe
from opendml.graph import ELEMENT_WISE_FUNCTIONS
from opendml.ops.activations import ActivationOperatorDesc
from opendml.ops.base import OperatorDesc
from opendml.ops.elementwise import CLASSES, ELEMENT_WISE, ElementWiseOperatorDesc

#: The graphs built here declare inputs that their compiled outputs do not read.
pytestmark = pytest.mark.filterwarnings("ignore:Graph.compile. input .* is not used")

CASES = int(os.environ.get("OPENDML_FUZZ_CASES", "20000"))
SEED = int(os.environ.get("OPENDML_FUZZ_SEED", "15"))   # of the random cases after the table
MESSAGE_LIMIT = 2000   # characters of one message at most

F32 = "FLOAT32"


def T(sizes: list[int], data_type: str = F32) -> dml.TensorDesc:
    return dml.TensorDesc(data_type, sizes)


# -- the hostile values ------------------------------------------------------------------------------------------

class RaisingIndex:
    def __index__(self) -> int:
        raise ValueError("__index__ refuses")


class RaisingFloat(float):
    """A float subclass is a numbers.Real; its __float__ raises."""

    def __float__(self) -> float:
        raise ArithmeticError("__float__ refuses")


class RaisingLength:
    def __len__(self) -> int:
        raise RuntimeError("__len__ refuses")

    def __iter__(self) -> Iterator[int]:
        raise RuntimeError("__iter__ refuses")

    def __getitem__(self, index: int) -> int:
        raise RuntimeError("__getitem__ refuses")


class RaisingIteration:
    def __iter__(self) -> Iterator[int]:
        yield 2
        raise KeyError("__next__ refuses")


class RaisingRepr:
    """Everything raises, its repr and str included."""

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ refuses")

    __str__ = __repr__

    def __index__(self) -> int:
        raise RuntimeError("__index__ refuses")

    def __float__(self) -> float:
        raise RuntimeError("__float__ refuses")

    def __iter__(self) -> Iterator[int]:
        raise RuntimeError("__iter__ refuses")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ refuses")

    __hash__ = None  # type: ignore[assignment]


class HugeIndex:
    def __index__(self) -> int:
        return 10**400


class HugeRepr:
    def __repr__(self) -> str:
        return "\x1b[2J" + "x" * 1_000_000


class RaisingDtype:
    """NumPy reads a `dtype` attribute as the dtype; this one raises."""

    @property
    def dtype(self) -> Any:
        raise RuntimeError("dtype refuses")


# Foreign array objects: every protocol NumPy and opendml ask a caller's object about, well-behaved and hostile.
FOREIGN_DATA = np.array([1, -2, 3, 4], np.float32)


class DlpackTensor:
    """A DLPack tensor over an array it holds; `move` replaces that array (PyTorch's resize_ reallocates)."""

    def __init__(self, data: np.ndarray[Any, Any]) -> None:
        self.data = data

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.data.__dlpack_device__()

    def move(self) -> None:
        self.data = np.zeros(1 << 12, self.data.dtype)


class RaisingGetattr:
    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"__getattr__ refuses {name}")


class RaisingDlpack:
    def __dlpack__(self, **kwargs: Any) -> Any:
        raise KeyError("__dlpack__ refuses")

    def __dlpack_device__(self) -> Any:
        return (1, 0)


class DlpackNotACapsule(RaisingDlpack):
    def __dlpack__(self, **kwargs: Any) -> Any:
        return ["not", "a", "capsule"]


class DlpackOtherDevice(DlpackTensor):
    """Says it is on a CUDA device; its capsule says the CPU, which is what NumPy (and so a Binding) reads."""

    def __dlpack_device__(self) -> Any:
        return (2, 0)   # kDLCUDA


class RaisingArray:
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise OverflowError("__array__ refuses")


class ArrayReturnsList:
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return [1.0, 2.0]


class ArrayCopies:
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return FOREIGN_DATA.copy()


class RaisingArrayInterface(ArrayCopies):
    @property
    def __array_interface__(self) -> Any:
        raise MemoryError("__array_interface__ refuses")


class BogusArrayInterface(ArrayCopies):
    __array_interface__: ClassVar[dict[str, object]] = {"version": 3, "shape": "four", "typestr": 12}


class RaisingArrayStruct(ArrayCopies):
    @property
    def __array_struct__(self) -> Any:
        raise ValueError("__array_struct__ refuses")


#: (name, factory, whether a float32 [4] tensor may bind it in place). Every entry point that takes an array or a
#: buffer gets each of them, in the table below and in test_foreign_objects_in_every_binding.
FOREIGN: list[tuple[str, Callable[[], object], bool]] = [
    ("dlpack float32", lambda: DlpackTensor(FOREIGN_DATA.copy()), True),
    ("dlpack float64", lambda: DlpackTensor(FOREIGN_DATA.astype(np.float64)), False),
    ("dlpack strided", lambda: DlpackTensor(np.repeat(FOREIGN_DATA, 2)[::2]), False),
    ("dlpack read-only", lambda: DlpackTensor(np.frombuffer(FOREIGN_DATA.tobytes(), np.float32)), True),
    ("dlpack raising", RaisingDlpack, False), ("dlpack not a capsule", DlpackNotACapsule, False),
    ("dlpack saying another device", lambda: DlpackOtherDevice(FOREIGN_DATA.copy()), True),
    ("__getattr__ raising", RaisingGetattr, False),
    ("__array__ raising", RaisingArray, False), ("__array__ returns a list", ArrayReturnsList, False),
    ("__array__ copies", ArrayCopies, False), ("__array_interface__ raising", RaisingArrayInterface, False),
    ("__array_interface__ bogus", BogusArrayInterface, False), ("__array_struct__ raising", RaisingArrayStruct, False),
    ("bytes", lambda: FOREIGN_DATA.tobytes(), True), ("bytearray", lambda: bytearray(FOREIGN_DATA.tobytes()), True),
    ("memoryview strided", lambda: memoryview(np.repeat(FOREIGN_DATA, 2))[::2], False),
    ("memoryview float32", lambda: memoryview(FOREIGN_DATA.copy()), True),
    ("memoryview 2-d", lambda: memoryview(FOREIGN_DATA.reshape(2, 2).copy()), True),
    ("array.array f", lambda: array.array("f", FOREIGN_DATA.tolist()), True),
    ("array.array d", lambda: array.array("d", FOREIGN_DATA.tolist()), False),
    ("ctypes float[4]", lambda: (ctypes.c_float * 4)(*FOREIGN_DATA.tolist()), True),
    ("mmap", lambda: foreign_mmap(), True),
    ("np float32 Fortran", lambda: np.asfortranarray(FOREIGN_DATA.reshape(2, 2)), False),
    ("np float32 big-endian", lambda: FOREIGN_DATA.astype(">f4"), False),
    ("np 0-d float32", lambda: np.array(1.5, np.float32), False),
    ("np float32 [2]", lambda: FOREIGN_DATA[:2].copy(), False),
]


def foreign_mmap() -> mmap.mmap:
    mapped = mmap.mmap(-1, FOREIGN_DATA.nbytes)
    mapped.write(FOREIGN_DATA.tobytes())
    return mapped


def deep_list(depth: int = 2000) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        node.append([])
        node = node[0]
    return root


def deep_tuple(depth: int = 2000) -> tuple[Any, ...]:
    value: tuple[Any, ...] = ()
    for _ in range(depth):
        value = (value,)
    return value


def deep_dict(depth: int = 2000) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def numpy_scalars() -> list[tuple[str, Callable[[], object]]]:
    """A scalar of every NumPy dtype kind: typical, extreme and special values."""
    values: list[tuple[str, Callable[[], object]]] = []
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(dtype)
        for number in (0, 1, 2, int(info.max), int(info.min)):
            values.append((f"np.{dtype.__name__}({number})", lambda dtype=dtype, number=number: dtype(number)))
    for dtype in (np.float16, np.float32, np.float64, np.longdouble):
        for number in (0.5, 2.0, math.inf, math.nan, float(np.finfo(dtype).max)):
            values.append((f"np.{dtype.__name__}({number})", lambda dtype=dtype, number=number: dtype(number)))
    values += [
        ("np.bool_(True)", lambda: np.bool_(True)), ("np.bool_(False)", lambda: np.bool_(False)),
        ("np.complex64(1+2j)", lambda: np.complex64(1 + 2j)), ("np.complex128(2)", lambda: np.complex128(2)),
        ("np.clongdouble(1j)", lambda: np.clongdouble(1j)),
        ("np.datetime64", lambda: np.datetime64("2024-01-01")), ("np.timedelta64", lambda: np.timedelta64(3, "s")),
        ("np.str_", lambda: np.str_("FLOAT32")), ("np.bytes_", lambda: np.bytes_(b"SUM")),
        ("np.void", lambda: np.void(b"\x01\x02")),
    ]
    return values


#: (name, factory): a factory makes a fresh value per case (some are mutable, some are iterators).
HOSTILE: list[tuple[str, Callable[[], object]]] = [
    *[(f"int {number}", lambda number=number: number) for number in (
        0, 1, 2, 3, 4, 7, 16, -1, -2, 2**31 - 1, 2**31, -2**31, 2**32 - 1, 2**32, 2**53 + 1, 2**63, 2**64 - 1,
        2**64, -2**63, -2**64, 10**400, -10**400)],
    ("int of 5000 digits", lambda: 10**5000),
    *[(f"float {number}", lambda number=number: number) for number in (
        0.0, -0.0, 0.5, 1.0, 2.0, 1e-5, 1e39, -1e39, 3.4028235e38, 1e308, 5e-324, math.inf, -math.inf, math.nan)],
    ("bool True", lambda: True), ("bool False", lambda: False), ("None", lambda: None),
    ("complex", lambda: 1 + 2j), ("complex real", lambda: complex(2, 0)),
    ("Fraction 1/3", lambda: Fraction(1, 3)), ("Fraction 2", lambda: Fraction(2)),
    ("Fraction huge", lambda: Fraction(10**5000, 3)),
    ("Decimal 1.5", lambda: Decimal("1.5")), ("Decimal sNaN", lambda: Decimal("sNaN")),
    ("Decimal 1e999999", lambda: Decimal("1e999999")), ("Decimal NaN", lambda: Decimal("NaN")),
    ("deep list", deep_list), ("deep tuple", deep_tuple), ("deep dict", deep_dict),
    ("list of deep lists", lambda: [deep_list(), deep_list()]),
    ("np 0-d int", lambda: np.array(3)), ("np 0-d float", lambda: np.array(2.5)),
    ("np 0-d bool", lambda: np.array(True)), ("np 0-d object", lambda: np.array(None, dtype=object)),
    ("np 0-d str", lambda: np.array("SUM")),
    ("np 1-d int", lambda: np.array([2, 3])), ("np 1-d uint8", lambda: np.array([1, 1], np.uint8)),
    ("np 1-d float", lambda: np.array([2.0, 3.0])), ("np 1-d empty", lambda: np.array([], np.int64)),
    ("np 1-d negative", lambda: np.array([-1, 2])), ("np 1-d object", lambda: np.array([RaisingIndex(), 2])),
    ("np 2-d", lambda: np.zeros((2, 3))), ("np 2-d int", lambda: np.ones((2, 3), np.int32)),
    ("np 2-d float32", lambda: np.ones((2, 3), np.float32)), ("np 3-d float32", lambda: np.ones((1, 2, 3), np.float32)),
    ("np 9-d", lambda: np.zeros((1,) * 9, np.float32)), ("np str array", lambda: np.array(["a", "b"])),
    ("np structured", lambda: np.zeros(2, dtype=[("a", "i4")])),
    ("np masked", lambda: np.ma.masked_array([1, 2], mask=[0, 1])),
    *numpy_scalars(),
    *[(f"str {text[:12]!r}", lambda text=text: text) for text in (
        "", "FLOAT32", "float32", "f4", "<f4", ">f4", "bool", "O", "U8", "SUM", "ARGMAX", "DECREASING",
        "OWNED_BY_DML", "5_2", "5.2", "7_0", "cpu", "x", "3", "1.5", "nan", "\ud800", "\x1b[2J", "a\u202eb",
        "line\nbreak", "DML_TENSOR_DATA_TYPE_FLOAT16", "DML_EXECUTION_FLAG_DISABLE_META_COMMANDS", "x" * 100_000)],
    ("bytes", lambda: b"FLOAT32"), ("bytes empty", lambda: b""), ("bytearray", lambda: bytearray(b"\x00" * 64)),
    ("memoryview", lambda: memoryview(bytearray(32))),
    ("list empty", list), ("tuple empty", tuple), ("dict empty", dict), ("set", lambda: {1, 2}),
    ("frozenset", lambda: frozenset({0})), ("dict", lambda: {"a": 1, 0: 2}),
    ("list [2, 3]", lambda: [2, 3]), ("tuple (1, 3)", lambda: (1, 3)), ("list [0]", lambda: [0]),
    ("list [1] * 9", lambda: [1] * 9), ("list [2] * 1000", lambda: [2] * 1000), ("list [-1]", lambda: [-1]),
    ("list [2**32]", lambda: [2**32]), ("list [1.5]", lambda: [1.5]), ("list [None]", lambda: [None]),
    ("list [True]", lambda: [True]), ("list of np ints", lambda: [np.int64(2), np.uint8(3)]),
    ("list [10**400]", lambda: [10**400]), ("list of strs", lambda: ["FLOAT32", "SUM"]),
    ("list [[2]]", lambda: [[2]]), ("list [raising index]", lambda: [RaisingIndex()]),
    ("list of flags", lambda: ["OWNED_BY_DML", 1]), ("list of levels", lambda: ["5_2", "6_0"]),
    ("range(3)", lambda: range(3)), ("range(0)", lambda: range(0)), ("generator", lambda: (n for n in (2, 3))),
    ("endless iterator", lambda: itertools.count()), ("map", lambda: map(int, "23")),
    ("RaisingIndex", RaisingIndex), ("RaisingFloat", lambda: RaisingFloat(1.5)), ("RaisingLength", RaisingLength),
    ("RaisingIteration", RaisingIteration), ("RaisingRepr", RaisingRepr), ("HugeIndex", HugeIndex),
    ("HugeRepr", HugeRepr), ("RaisingDtype", RaisingDtype), ("object", object), ("type int", lambda: int),
    ("type float", lambda: float), ("type np.float16", lambda: np.float16), ("type bool", lambda: bool),
    ("type object", lambda: object), ("np.dtype float32", lambda: np.dtype("float32")),
    ("np.dtype >i4", lambda: np.dtype(">i4")), ("np.dtype object", lambda: np.dtype(object)),
    ("lambda", lambda: (lambda: 0)), ("Ellipsis", lambda: ...), ("slice", lambda: slice(1, 2)),
    ("DataType.FLOAT32", lambda: dml.DataType.FLOAT32), ("DataType.UINT4", lambda: dml.DataType.UINT4),
    ("ReduceFunction.SUM", lambda: dml.ReduceFunction.SUM), ("AxisDirection.DECREASING",
                                                              lambda: dml.AxisDirection.DECREASING),
    ("FeatureLevel 5_2", lambda: dml.FeatureLevel.LEVEL_5_2), ("TensorFlags.OWNED_BY_DML",
                                                               lambda: dml.TensorFlags.OWNED_BY_DML),
    ("ExecutionFlags 7", lambda: dml.ExecutionFlags(7)), ("OperatorType.REDUCE", lambda: dml.OperatorType.REDUCE),
    ("TensorDesc", lambda: T([2, 3])), ("TensorDesc UINT32", lambda: T([3, 1], "UINT32")),
    ("list of TensorDesc", lambda: [T([2]), T([4])]), ("list [TensorDesc, None]", lambda: [T([2]), None]),
    ("ReluDesc", lambda: dml.ActivationReluOperatorDesc()),
    ("ReduceDesc", lambda: dml.ReduceOperatorDesc("SUM", T([2, 3]), T([1, 3]), [0])),
    ("FusedActivation.elu", lambda: dml.FusedActivation.elu()), ("Device", lambda: DEVICE),
    ("Binding", lambda: dml.Binding(bytearray(64))), ("list [Binding]", lambda: [dml.Binding(bytearray(64))]),
    ("list [None]*3", lambda: [None, None, None]),
    *((f"foreign: {name}", factory) for name, factory, _ in FOREIGN),
]


def random_value(rng: random.Random, depth: int = 0) -> object:
    """A value made up at random: boundary integers of every width, floats of every magnitude, strings of any code
    points, lists and dicts of random or table values."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        bits = rng.choice((1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 128, 1000, 20000))
        return rng.choice((-1, 1)) * (2**bits + rng.randrange(-2, 3))
    if kind == 1:
        return rng.choice((1.0, -1.0)) * 10.0 ** rng.uniform(-330, 308) if rng.random() < 0.9 else \
            rng.choice((math.inf, -math.inf, math.nan))
    if kind == 2:
        alphabet = "aZ_09.-\x00\x1b\n\t\x7f\x85\u202e\u2028\ud800\udfff\U0001f600"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 20)))
    if kind == 3:
        return rng.randrange(-4, 20)
    if kind == 4:
        return rng.choice(HOSTILE)[1]()
    if kind == 5:
        dtype = rng.choice((np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32, np.float64, np.bool_))
        shape = tuple(rng.randrange(0, 4) for _ in range(rng.randrange(0, 4)))
        return np.zeros(shape, dtype) if rng.random() < 0.5 else dtype(rng.randrange(0, 5))
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    if rng.random() < 0.3:
        return {rng.choice(("x", "input0", "", 0, 2.5, None, "\ud800")): random_value(rng, depth + 1)
                for _ in range(rng.randrange(0, 3))}
    return tuple(random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4)))


# -- the entry points --------------------------------------------------------------------------------------------

DEVICE = dml.Device()


@dataclasses.dataclass
class Slot:
    """One argument of one entry point: `call(values)` calls it with `values` replacing the valid ones."""

    name: str
    arguments: tuple[str, ...]
    call: Callable[[dict[str, object]], object]


def descriptor_baseline(cls: type[OperatorDesc]) -> dict[str, object]:
    """Valid constructor arguments of a descriptor class (a new class needs a line here: the coverage test says so)."""
    name = cls.OPERATOR_TYPE.name
    if issubclass(cls, ElementWiseOperatorDesc):
        return element_wise_cases.example_arguments(cls, (2, 3))
    if issubclass(cls, ActivationOperatorDesc):
        parameters = {field: 1.0 for field in cls.parameter_names()}
        return {**parameters, "input_tensor": T([2, 3]), "output_tensor": T([2, 3])}
    x4 = T([1, 1, 2, 2])
    return {
        "REDUCE": {"function": "SUM", "input_tensor": T([2, 3]), "output_tensor": T([1, 3]), "axes": [0]},
        "ARGMIN": {"input_tensor": T([2, 3]), "output_tensor": T([1, 3], "UINT32"), "axes": [0],
                   "axis_direction": "INCREASING"},
        "ARGMAX": {"input_tensor": T([2, 3]), "output_tensor": T([1, 3], "UINT32"), "axes": [0],
                   "axis_direction": "DECREASING"},
        "SPLIT": {"input_tensor": T([6]), "output_tensors": [T([2]), T([4])], "axis": 0},
        "JOIN": {"input_tensors": [T([2]), T([4])], "output_tensor": T([6]), "axis": 0},
        "GATHER_ND": {"input_tensor": T([2, 2]), "indices_tensor": T([2, 1], "UINT32"), "output_tensor": T([2, 2]),
                      "input_dimension_count": 2, "indices_dimension_count": 2},
        "GATHER_ND1": {"input_tensor": T([2, 2]), "indices_tensor": T([2, 1], "UINT32"), "output_tensor": T([2, 2]),
                       "input_dimension_count": 2, "indices_dimension_count": 2, "batch_dimension_count": 0},
        "GATHER": {"input_tensor": T([2, 2]), "indices_tensor": T([1, 3], "UINT32"), "output_tensor": T([3, 2]),
                   "axis": 0, "index_dimensions": 1},
        "GATHER_ELEMENTS": {"input_tensor": T([2, 2]), "indices_tensor": T([3, 2], "INT64"),
                            "output_tensor": T([3, 2]), "axis": 0},
        "SCATTER_ELEMENTS": {"input_tensor": T([2, 2]), "indices_tensor": T([3, 2], "INT64"),
                             "updates_tensor": T([3, 2]), "output_tensor": T([2, 2]), "axis": 0},
        "SCATTER_ND": {"input_tensor": T([2, 2]), "indices_tensor": T([2, 1], "UINT32"), "updates_tensor": T([2, 2]),
                       "output_tensor": T([2, 2]), "input_dimension_count": 2, "indices_dimension_count": 2},
        "NONZERO_COORDINATES": {"input_tensor": x4, "output_count_tensor": T([1, 1, 1, 1], "UINT32"),
                                "output_coordinates_tensor": T([1, 1, 4, 2], "UINT32")},
        "TOP_K": {"input_tensor": T([2, 3]), "output_value_tensor": T([2, 2]),
                  "output_index_tensor": T([2, 2], "UINT32"), "axis": 1, "k": 2},
        "TOP_K1": {"input_tensor": T([2, 3]), "output_value_tensor": T([1, 3]),
                   "output_index_tensor": T([1, 3], "UINT32"), "axis": 0, "k": 1, "axis_direction": "INCREASING"},
        "ONE_HOT": {"indices_tensor": T([3, 1], "UINT32"), "values_tensor": T([1, 2]), "output_tensor": T([3, 4]),
                    "axis": 1},
        "MEAN_VARIANCE_NORMALIZATION1": {"input_tensor": x4, "scale_tensor": None, "bias_tensor": None,
                                         "output_tensor": x4, "axes": [2, 3], "normalize_variance": True,
                                         "epsilon": 1e-5, "fused_activation": dml.ActivationReluOperatorDesc()},
        "MEAN_VARIANCE_NORMALIZATION": {"input_tensor": x4, "scale_tensor": x4, "bias_tensor": x4, "output_tensor": x4,
                                        "cross_channel": False, "normalize_variance": True, "epsilon": 1e-5,
                                        "fused_activation": None},
        "GEMM": {"a_tensor": T([2, 3]), "b_tensor": T([3, 2]), "c_tensor": T([2, 2]), "output_tensor": T([2, 2]),
                 "trans_a": "NONE", "trans_b": "NONE", "alpha": 1.0, "beta": 1.0,
                 "fused_activation": dml.ActivationReluOperatorDesc()},
        "CONVOLUTION": {"input_tensor": T([1, 1, 3, 3]), "filter_tensor": x4, "bias_tensor": T([1, 1, 1, 1]),
                        "output_tensor": x4, "mode": "CROSS_CORRELATION", "direction": "FORWARD",
                        "dimension_count": 2, "strides": [1, 1], "dilations": [1, 1], "start_padding": [0, 0],
                        "end_padding": [0, 0], "output_padding": [0, 0], "group_count": 1, "fused_activation": None},
        "FILL_VALUE_CONSTANT": {"output_tensor": T([2, 3]), "value_data_type": F32, "value": 1.5},
        "FILL_VALUE_SEQUENCE": {"output_tensor": T([4], "INT32"), "value_data_type": "INT32", "value_start": -3,
                                "value_delta": 2},
        "DIAGONAL_MATRIX": {"output_tensor": x4, "offset": -1, "value": 2.0},
        "DIAGONAL_MATRIX1": {"input_tensor": T([2, 3]), "output_tensor": T([2, 3]), "value_data_type": F32,
                             "value": 0.5, "diagonal_fill_begin": 0, "diagonal_fill_end": 2},
        "CAST": {"input_tensor": x4, "output_tensor": T([1, 1, 2, 2], "INT8")},
        "SPACE_TO_DEPTH": {"input_tensor": x4, "output_tensor": T([1, 4, 1, 1]), "block_size": 2},
        "DEPTH_TO_SPACE": {"input_tensor": T([1, 4, 1, 1]), "output_tensor": x4, "block_size": 2},
        "SPACE_TO_DEPTH1": {"input_tensor": x4, "output_tensor": T([1, 4, 1, 1]), "block_size": 2,
                            "order": "COLUMN_ROW_DEPTH"},
        "DEPTH_TO_SPACE1": {"input_tensor": T([1, 4, 1, 1]), "output_tensor": x4, "block_size": 2,
                            "order": "COLUMN_ROW_DEPTH"},
        "REVERSE_SUBSEQUENCES": {"input_tensor": x4, "sequence_lengths_tensor": T([1, 1, 2, 1], "UINT32"),
                                 "output_tensor": x4, "axis": 3},
        "SLICE": {"input_tensor": x4, "output_tensor": T([1, 1, 1, 2]), "dimension_count": 4, "offsets": [0, 0, 1, 0],
                  "sizes": [1, 1, 1, 2], "strides": [1, 1, 1, 1]},
        "SLICE1": {"input_tensor": x4, "output_tensor": T([1, 1, 1, 2]), "dimension_count": 4,
                   "input_window_offsets": [0, 0, 1, 0], "input_window_sizes": [1, 1, 1, 2],
                   "input_window_strides": [1, 1, 1, -1]},
        "UPSAMPLE_2D": {"input_tensor": x4, "output_tensor": T([1, 1, 2, 6]), "scale_size": (3, 1),
                        "interpolation_mode": "LINEAR"},
        "CUMULATIVE_SUMMATION": {"input_tensor": T([2, 3]), "output_tensor": T([2, 3]), "axis": 1,
                                 "axis_direction": "DECREASING", "has_exclusive_sum": True},
        "CUMULATIVE_PRODUCT": {"input_tensor": T([2, 3]), "output_tensor": T([2, 3]), "axis": 0,
                               "axis_direction": "INCREASING", "has_exclusive_product": False},
        "PADDING": {"input_tensor": T([2, 3]), "output_tensor": T([3, 6]), "padding_mode": "REFLECTION",
                    "padding_value": 1.5, "dimension_count": 2, "start_padding": [1, 2], "end_padding": [0, 1]},
        "PADDING1": {"input_tensor": T([2], "INT64"), "output_tensor": T([5], "INT64"), "padding_mode": "CONSTANT",
                     "padding_value_data_type": "INT64", "padding_value": -7, "dimension_count": 1,
                     "start_padding": [1], "end_padding": [2]},
        "TILE": {"input_tensor": T([2, 3]), "output_tensor": T([4, 3]), "repeats_count": 2, "repeats": [2, 1]},
    }[name]


def descriptor_slots() -> list[Slot]:
    """Every init field of every registered descriptor class."""
    slots = []
    for cls in OperatorDesc.registry.values():
        fields = [field.name for field in dataclasses.fields(cls) if field.init]  # type: ignore[arg-type]
        baseline = descriptor_baseline(cls)
        assert set(baseline) == set(fields), (cls.__name__, fields)

        def build(values: dict[str, object], cls: type[OperatorDesc] = cls,
                  baseline: dict[str, object] = baseline) -> object:
            desc = cls(**{**baseline, **values})  # type: ignore[arg-type]
            check_canonical(desc)
            try:
                DEVICE.create_operator(desc)
            except dml.DmlError as error:
                check_message(error)
            return desc

        for field in fields:
            slots.append(Slot(f"{cls.__name__}.{field}", (field,), build))
    return slots


def tensor_slots() -> list[Slot]:
    baseline = {"data_type": F32, "sizes": [2, 3], "strides": None, "flags": "NONE",
                "total_tensor_size_in_bytes": None, "guaranteed_base_offset_alignment": 0}
    assert set(baseline) == {field.name for field in dataclasses.fields(dml.TensorDesc) if field.init}

    def build(values: dict[str, object]) -> object:
        desc = dml.TensorDesc(**{**baseline, **values})  # type: ignore[arg-type]
        check_canonical(desc)
        assert desc.calc_size_in_bytes() >= 0
        try:
            dml.ReduceOperatorDesc("SUM", desc, T([1] * desc.dimension_count), list(range(desc.dimension_count))
                                   ).validate(DEVICE.feature_level)
        except dml.DmlError as error:
            check_message(error)
        return desc

    def calc(values: dict[str, object]) -> object:
        arguments = {"data_type": F32, "sizes": [2, 3], "strides": None, **values}
        size = dml.calc_buffer_tensor_size(**arguments)  # type: ignore[arg-type]
        assert type(size) is int and size >= 0
        return size

    binding_baseline = {"buffer": bytearray(64), "offset": 0, "size": None}

    def binding(values: dict[str, object]) -> object:
        made = dml.Binding(**{**binding_baseline, **values})
        assert type(made.offset) is int and (made.size is None or type(made.size) is int)
        try:
            COMPILED.execute([made], [dml.Binding(bytearray(16))])
        except dml.DmlError as error:
            check_message(error)
        return made

    return ([Slot(f"TensorDesc.{name}", (name,), build) for name in baseline]
            + [Slot(f"calc_buffer_tensor_size.{name}", (name,), calc) for name in ("data_type", "sizes", "strides")]
            + [Slot(f"Binding.{name}", (name,), binding) for name in binding_baseline])


def graph_baselines(g: dml.Graph) -> dict[str, tuple[Callable[..., object], dict[str, object]]]:
    """Each graph API function with valid arguments, by keyword (positional-only ones by name too)."""
    x = g.input([2, 3], F32)
    x4 = g.input([1, 1, 2, 2], F32)
    indices = g.input([3, 1], "UINT32")
    values = g.constant(np.array([[0.0, 1.0]], np.float32))
    table = {
        "reduce": (dml.reduce, {"x": x, "function": "SUM", "axes": [0], "output_dtype": None}),
        "split": (dml.split, {"x": x, "axis": 1, "sizes": [1, 2]}),
        "join": (dml.join, {"inputs": [x, x], "axis": 0}),
        "arg_max": (dml.arg_max, {"x": x, "axes": [1], "axis_direction": "INCREASING", "output_dtype": "UINT32"}),
        "arg_min": (dml.arg_min, {"x": x, "axes": None, "axis_direction": "DECREASING", "output_dtype": "INT64"}),
        "one_hot": (dml.one_hot, {"indices": indices, "values": values, "output_length": 4, "axis": 1}),
        "mean_variance_normalization": (dml.mean_variance_normalization, {
            "x": x4, "scale": None, "bias": None, "axes": [2, 3], "cross_channel": None, "normalize_variance": True,
            "epsilon": 1e-5, "fused_activation": dml.FusedActivation.relu()}),
        "gather_nd": (dml.gather_nd, {"x": g.input([2, 2], F32), "indices": g.input([2, 1], "UINT32"),
                                      "input_dimension_count": 2, "indices_dimension_count": 2,
                                      "batch_dimension_count": 0}),
        "gather": (dml.gather, {"x": g.input([2, 2], F32), "indices": g.input([1, 3], "UINT32"), "axis": 0,
                                "index_dimensions": 1}),
        "gather_elements": (dml.gather_elements, {"x": g.input([2, 2], F32), "indices": g.input([3, 2], "INT64"),
                                                  "axis": 0}),
        "scatter_elements": (dml.scatter_elements, {"x": g.input([2, 2], F32), "indices": g.input([3, 2], "INT64"),
                                                    "updates": g.input([3, 2], F32), "axis": 0}),
        "scatter_nd": (dml.scatter_nd, {"x": g.input([2, 2], F32), "indices": g.input([2, 1], "UINT32"),
                                        "updates": g.input([2, 2], F32), "input_dimension_count": 2,
                                        "indices_dimension_count": 2}),
        "nonzero_coordinates": (dml.nonzero_coordinates, {"x": x4}),
        "top_k": (dml.top_k, {"x": x4, "axis": -1, "k": 2, "axis_direction": "INCREASING",
                              "index_data_type": "UINT32"}),
        "fill_value_constant": (dml.fill_value_constant, {"graph": g, "sizes": [2, 3], "data_type": F32, "value": 1.5}),
        "fill_value_sequence": (dml.fill_value_sequence, {"graph": g, "sizes": [4], "data_type": "INT32",
                                                          "value_start": -3, "value_delta": 2}),
        "diagonal_matrix": (dml.diagonal_matrix, {"graph": g, "sizes": [1, 1, 2, 3], "data_type": F32, "offset": 1,
                                                  "value": 2.0}),
        "diagonal_matrix1": (dml.diagonal_matrix1, {"source": x, "value": 0.5, "diagonal_fill_begin": 0,
                                                    "diagonal_fill_end": 2, "sizes": None, "data_type": None}),
        "cast": (dml.cast, {"x": x, "data_type": "INT8"}),
        "space_to_depth": (dml.space_to_depth, {"x": x4, "block_size": 2, "order": "COLUMN_ROW_DEPTH"}),
        "depth_to_space": (dml.depth_to_space, {"x": g.input([1, 4, 1, 1], F32), "block_size": 2,
                                                "order": "DEPTH_COLUMN_ROW"}),
        "reverse_subsequences": (dml.reverse_subsequences, {
            "x": x4, "sequence_lengths": g.input([1, 1, 2, 1], "UINT32"), "axis": -1}),
        "slice": (dml.slice, {"x": x, "offsets": [0, 1], "sizes": [2, 2], "strides": [1, -1]}),
        "upsample_2d": (dml.upsample_2d, {"x": x4, "scale_size": (2, 1), "interpolation_mode": "NEAREST_NEIGHBOR"}),
        "cumulative_summation": (dml.cumulative_summation, {"x": x, "axis": -1, "axis_direction": "DECREASING",
                                                            "has_exclusive_sum": True}),
        "cumulative_product": (dml.cumulative_product, {"x": x, "axis": 0, "axis_direction": "INCREASING",
                                                        "has_exclusive_product": False}),
        "padding": (dml.padding, {"x": x, "padding_mode": "SYMMETRIC", "padding_value": 0.0, "start_padding": [1, 0],
                                  "end_padding": [0, 2]}),
        "tile": (dml.tile, {"x": x, "repeats": [2, 1]}),
        "gemm": (dml.gemm, {"a": x, "b": g.input([3, 2], F32), "c": None, "trans_a": "NONE", "trans_b": "NONE",
                            "alpha": 1.0, "beta": 1.0, "fused_activation": None}),
        "convolution": (dml.convolution, {
            "x": x4, "w": g.input([1, 1, 1, 1], F32), "bias": None, "mode": "CROSS_CORRELATION", "direction": "FORWARD",
            "strides": None, "dilations": None, "start_padding": None, "end_padding": None, "output_padding": None,
            "group_count": 1, "fused_activation": None, "output_sizes": None}),
        "Graph.input": (g.input, {"sizes": [2, 3], "dtype": F32, "name": None, "strides": None}),
        "Graph.constant": (g.constant, {"array": np.ones((2, 3), np.float32), "name": None}),
        "Graph.compile": (g.compile, {"outputs": [dml.reduce(x, "SUM")], "flags": "NONE"}),
        "Graph": (dml.Graph, {"device": DEVICE}),
    }
    for name in graph_module.__all__:
        if name.startswith("activation_"):
            function = getattr(dml, name)
            parameters = list(inspect.signature(function).parameters)
            table[name] = (function, {"x": x, **{parameter: 1.0 for parameter in parameters[1:]}})
    for name, member in vars(dml.FusedActivation).items():
        if isinstance(member, staticmethod):
            function = getattr(dml.FusedActivation, name)
            table[f"FusedActivation.{name}"] = (function, {key: 1.0 for key in inspect.signature(function).parameters})
    table["FusedActivation"] = (dml.FusedActivation, {"desc": dml.ActivationEluOperatorDesc()})
    table["transpose"] = (dml.transpose, {"x": x, "perm": [1, 0]})
    table["reshape"] = (dml.reshape, {"x": x, "sizes": [3, 2]})
    table["broadcast_to"] = (dml.broadcast_to, {"x": x, "sizes": [4, 2, 3]})
    table.update(element_wise_baselines(g))
    return table


def element_wise_baselines(g: dml.Graph) -> dict[str, tuple[Callable[..., object], dict[str, object]]]:
    """Every element-wise graph function with valid arguments: its operands as graph inputs of the types of the
    row's example (tests/element_wise_cases.py), its scalars the example's values, keywords their defaults."""
    table: dict[str, tuple[Callable[..., object], dict[str, object]]] = {}
    for info in ELEMENT_WISE:
        name = graph_module._function_name(info)
        if name in table or name not in ELEMENT_WISE_FUNCTIONS:
            continue
        function = ELEMENT_WISE_FUNCTIONS[name]
        example = element_wise_cases.example_arguments(CLASSES[info.operator_type], (2, 3))
        operands = [g.input([2, 3], example[field_name(dml_name)].data_type) for dml_name, _ in info.inputs]
        arguments: dict[str, object] = {}
        scalars = [example[field_name(dml_name)] for dml_name, kind in info.scalars if kind in ("FLOAT", "SCALAR")]
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                arguments[parameter.name] = parameter.default
            elif operands:
                arguments[parameter.name] = operands.pop(0)
            elif scalars:
                arguments[parameter.name] = scalars.pop(0)
            else:
                arguments[parameter.name] = parameter.default
        table[name] = (function, arguments)
    return table


def field_name(dml_name: str) -> str:
    """InputTensor -> input_tensor."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in dml_name).lstrip("_")


def call_with(function: Callable[..., object], arguments: dict[str, object]) -> object:
    """Calls `function` with `arguments`, positional-only ones by position."""
    signature = inspect.signature(function)
    positional = [arguments[name] for name, parameter in signature.parameters.items()
                  if parameter.kind is inspect.Parameter.POSITIONAL_ONLY]
    keywords = {name: value for name, value in arguments.items()
                if signature.parameters[name].kind is not inspect.Parameter.POSITIONAL_ONLY}
    return function(*positional, **keywords)


class GraphFactory:
    """A fresh graph every so often (inputs accumulate in one), with its baseline arguments."""

    def __init__(self) -> None:
        self.uses = 0
        self.table = graph_baselines(dml.Graph(DEVICE))

    def get(self) -> dict[str, tuple[Callable[..., object], dict[str, object]]]:
        self.uses += 1
        if self.uses % 200 == 0:
            self.table = graph_baselines(dml.Graph(DEVICE))
        return self.table


def graph_slots(factory: GraphFactory) -> list[Slot]:
    slots = []
    for name, (function, baseline) in factory.get().items():
        def call(values: dict[str, object], name: str = name) -> object:
            function, baseline = factory.get()[name]
            result = call_with(function, {**baseline, **values})
            for item in result if isinstance(result, list) else [result]:
                if isinstance(item, dml.Expression):
                    check_canonical(item.desc)
                elif isinstance(item, dml.FusedActivation):
                    assert item.desc is None or isinstance(item.desc, ActivationOperatorDesc)
                    hash(item)
            return result

        slots += [Slot(f"{name}.{argument}", (argument,), call) for argument in baseline]
    return slots


def compiled_graph_slots(factory: GraphFactory) -> list[Slot]:
    g = dml.Graph(DEVICE)
    x = g.input([2, 3], F32, name="x")
    compiled = g.compile([dml.reduce(x, "SUM", [0])])
    good = np.ones((2, 3), np.float32)

    def call(values: dict[str, object]) -> object:
        inputs = values.get("inputs", {"x": values.get("inputs['x']", good)})
        return compiled(inputs)  # type: ignore[arg-type]

    return [Slot("CompiledGraph.inputs", ("inputs",), call), Slot("CompiledGraph.inputs['x']", ("inputs['x']",), call)]


COMPILED = DEVICE.compile_operator(DEVICE.create_operator(dml.ReduceOperatorDesc("SUM", T([2, 3]), T([1, 3]), [0])))


def device_slots() -> list[Slot]:
    operator = DEVICE.create_operator(dml.ReduceOperatorDesc("SUM", T([2, 3]), T([1, 3]), [0]))
    device_baseline = {"feature_level": "5_2", "backend": "cpu", "debug": False, "adapter": None}

    def device(values: dict[str, object]) -> object:
        made = dml.Device(**{**device_baseline, **values})  # type: ignore[arg-type]
        assert isinstance(made.feature_level, dml.FeatureLevel) and type(made.debug) is bool
        return made

    def create_buffer(values: dict[str, object]) -> object:
        source = values["source"]
        if isinstance(source, (int, np.integer)) and not isinstance(source, bool) and source > 1 << 24:
            return None   # an allocation that large is tested once, not fuzzed
        return DEVICE.create_buffer(source)  # type: ignore[arg-type]

    def check_feature_support(values: dict[str, object]) -> object:
        arguments = {"data_type": values.get("data_type"), "feature_levels": values.get("feature_levels")}
        if arguments["data_type"] is None and arguments["feature_levels"] is None:
            arguments["feature_levels"] = ["5_2"]
        return DEVICE.check_feature_support(**arguments)  # type: ignore[arg-type]

    def create_operator(values: dict[str, object]) -> object:
        return DEVICE.create_operator(values["desc"])  # type: ignore[arg-type]

    def compile_operator(values: dict[str, object]) -> object:
        return DEVICE.compile_operator(values.get("operator", operator), values.get("flags", "NONE"))  # type: ignore

    def execute(values: dict[str, object]) -> object:
        inputs = values.get("inputs", [dml.Binding(np.ones((2, 3), np.float32))])
        outputs = values.get("outputs", [dml.Binding(bytearray(16))])
        if "inputs[0]" in values:
            inputs = [values["inputs[0]"]]
        if "Binding(buffer)" in values:
            inputs = [dml.Binding(values["Binding(buffer)"])]
        COMPILED.execute(inputs, outputs)  # type: ignore[arg-type]
        return None

    def initialize(values: dict[str, object]) -> object:
        COMPILED.initialize(values["inputs"])  # type: ignore[arg-type]
        return None

    def call(values: dict[str, object]) -> object:
        return COMPILED(values["array"])

    def call_many(values: dict[str, object]) -> object:
        arrays = values["arrays"]
        return COMPILED(*(arrays if type(arrays) in (list, tuple) else (arrays, arrays)))  # type: ignore[arg-type]

    buffer_baseline = {"dtype": np.float32, "shape": (2, -1), "data": np.arange(2, dtype=np.int32), "offset": 4}

    def read(values: dict[str, object]) -> object:
        arguments = {**buffer_baseline, **values}
        buffer = DEVICE.create_buffer(FOREIGN_DATA)
        result = buffer.read(arguments["dtype"], arguments["shape"])
        assert isinstance(result, (bytes, np.ndarray)) and len(buffer) == 16
        if isinstance(result, np.ndarray):   # the buffer's first bytes, in a dtype of numbers
            assert result.dtype.kind in "iufc" and result.nbytes <= 16
            assert result.tobytes() == FOREIGN_DATA.tobytes()[: result.nbytes]
        return None

    def write(values: dict[str, object]) -> object:
        arguments = {**buffer_baseline, **values}
        buffer = DEVICE.create_buffer(np.full(4, 7, np.int32))
        try:
            buffer.write(arguments["data"], arguments["offset"])
        except dml.DmlError:
            assert buffer.read() == np.full(4, 7, np.int32).tobytes(), "a refused write wrote"
            raise
        return None

    return ([Slot(f"Device.{name}", (name,), device) for name in device_baseline]
            + [Slot(f"HostBuffer.read.{name}", (name,), read) for name in ("dtype", "shape")]
            + [Slot(f"HostBuffer.write.{name}", (name,), write) for name in ("data", "offset")]
            + [Slot("Device.create_buffer.source", ("source",), create_buffer),
               Slot("Device.check_feature_support.data_type", ("data_type",), check_feature_support),
               Slot("Device.check_feature_support.feature_levels", ("feature_levels",), check_feature_support),
               Slot("Device.create_operator.desc", ("desc",), create_operator),
               Slot("Device.compile_operator.operator", ("operator",), compile_operator),
               Slot("Device.compile_operator.flags", ("flags",), compile_operator)]
            + [Slot(f"CompiledOperator.execute.{name}", (name,), execute)
               for name in ("inputs", "outputs", "inputs[0]", "Binding(buffer)")]
            + [Slot("CompiledOperator.initialize.inputs", ("inputs",), initialize),
               Slot("CompiledOperator.__call__.array", ("array",), call),
               Slot("CompiledOperator.__call__.arrays", ("arrays",), call_many)])


def all_slots() -> list[Slot]:
    factory = GraphFactory()
    return [*descriptor_slots(), *tensor_slots(), *graph_slots(factory), *compiled_graph_slots(factory),
            *device_slots()]


# -- the checks ----------------------------------------------------------------------------------------------------

CANONICAL = (int, float, bool, str, type(None))
CONVERTED_TYPES = (dml.TensorDesc, OperatorDesc, dml.DataType, dml.TensorFlags, dml.ReduceFunction, dml.AxisDirection,
                   dml.RoundingMode, dml.IsInfinityMode, dml.ScaleBias, dml.MatrixTransform, dml.ConvolutionMode,
                   dml.ConvolutionDirection, dml.PaddingMode, dml.DepthSpaceOrder, dml.InterpolationMode, dml.Size2D)


def check_canonical(value: object) -> None:
    """An accepted object's fields hold converted values only (exact ints and floats, enums, tuples of those,
    TensorDescs, descriptors), and it hashes (a frozen dataclass hashes all of its fields)."""
    hash(value)
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        item = getattr(value, field.name)
        for element in item if type(item) is tuple else (item,):
            assert type(element) in CANONICAL or isinstance(element, CONVERTED_TYPES), (field.name, type(element))
            # CLIP1's bounds (scalar unions) and PADDING's PaddingValue may be infinite or NaN
            if type(element) is float and field.metadata.get("kind") != "SCALAR" and field.metadata.get("finite", True):
                assert math.isfinite(element), field.name


def check_message(error: BaseException) -> None:
    message = str(error)
    assert len(message) <= MESSAGE_LIMIT, message[:300]
    assert message.isprintable(), ascii(message[:300])


def snapshot(value: object) -> object:
    """What must not change: a list's items, an array's bytes."""
    if type(value) is list:
        return list(value)
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        return value.copy()
    if isinstance(value, bytearray):
        return bytes(value)
    return None


def unchanged(value: object, before: object) -> bool:
    if before is None:
        return True
    if isinstance(before, np.ndarray):
        assert isinstance(value, np.ndarray)
        return value.shape == before.shape and value.tobytes() == before.tobytes()
    if isinstance(before, bytes):
        return bytes(value) == before  # type: ignore[arg-type]
    return all(a is b for a, b in zip(value, before, strict=True))  # type: ignore[call-overload]


def run_case(slot: Slot, values: dict[str, object]) -> tuple[str, str | None]:
    """("accepted" or "refused", None when the case passes, else what went wrong)."""
    befores = {name: snapshot(value) for name, value in values.items()}
    outcome = "accepted"
    try:
        slot.call(values)
    except dml.DmlError as error:
        outcome = "refused"
        try:
            check_message(error)
        except AssertionError as problem:
            return outcome, f"bad message: {problem}"
    except Exception as error:  # the point of the test: no other exception may come out
        return "escaped", f"{type(error).__name__}: {str(error)[:300]}"
    for name, value in values.items():
        if not unchanged(value, befores[name]):
            return outcome, f"{name} was modified"
    return outcome, None


def cases(slots: list[Slot], count: int, seed: int) -> Iterator[tuple[Slot, dict[str, object], str]]:
    """`count` cases: every (slot, table value) pair first, spread so that a short run sees every slot with many
    different values; then random values, in one or two slots."""
    rng = random.Random(seed)
    produced = 0
    for round_index in range(len(HOSTILE)):
        for slot_index, slot in enumerate(slots):
            if produced == count:
                return
            name, factory = HOSTILE[(round_index + slot_index * 7) % len(HOSTILE)]
            produced += 1
            yield slot, {slot.arguments[0]: factory()}, name
    while produced < count:
        slot = rng.choice(slots)
        values = {slot.arguments[0]: random_value(rng)}
        # A second bad argument of the same entry point, now and then.
        others = [other for other in slots if other.call is slot.call and other.arguments != slot.arguments]
        if others and rng.random() < 0.25:
            values[rng.choice(others).arguments[0]] = random_value(rng)
        produced += 1
        yield slot, values, "random"


# -- the tests -------------------------------------------------------------------------------------------------------

def test_every_entry_point_is_fuzzed() -> None:
    """Every registered descriptor's every field, every graph API function and Device method has a slot, and every
    baseline is valid (so that each case changes exactly the value under test)."""
    slots = all_slots()
    names = {slot.name.split(".")[0] for slot in slots}
    assert {cls.__name__ for cls in OperatorDesc.registry.values()} <= names
    graph_functions = {name for name in graph_module.__all__ if name[0].islower()}
    assert graph_functions <= names, graph_functions - names
    assert {"TensorDesc", "calc_buffer_tensor_size", "Binding", "Device", "Graph", "FusedActivation",
            "CompiledOperator", "CompiledGraph", "HostBuffer"} <= names
    for slot in slots:
        if slot.name.startswith(("Device.create_operator", "Device.create_buffer", "CompiledOperator.initialize",
                                 "CompiledOperator.__call__")):
            continue
        slot.call({})   # the baseline itself is accepted


def test_hostile_values_get_opendml_errors() -> None:
    slots = all_slots()
    failures: list[str] = []
    outcomes = {"accepted": 0, "refused": 0, "escaped": 0}
    start = time.perf_counter()
    for slot, values, name in cases(slots, CASES, SEED):
        outcome, problem = run_case(slot, values)
        outcomes[outcome] += 1
        if problem is not None and len(failures) < 20:
            failures.append(f"{slot.name} <- {name} ({describe(values)}): {problem}")
    elapsed = time.perf_counter() - start
    print(f"\n{sum(outcomes.values())} cases over {len(slots)} slots in {elapsed:.1f} s: {outcomes}")
    assert not failures, "\n".join(failures)
    # Not vacuous: the table holds valid values of every kind as well as hostile ones.
    assert outcomes["accepted"] > CASES // 20 and outcomes["refused"] > CASES // 2, outcomes


def test_a_huge_buffer_is_refused_with_opendml_error() -> None:
    with pytest.raises(dml.UnsupportedError, match=r"^Device.create_buffer: 9223372036854775807 bytes could not be "
                                                   r"allocated in host memory$"):
        dml.Device(backend="cpu").create_buffer(2**63 - 1)


RELU_DATA = np.array([1, 0, 3, 4], np.float32)   # RELU of FOREIGN_DATA, by hand


def readable_bytes(value: object) -> bytes | None:
    """A foreign object's bytes where they can be read without its hostile protocols (for 'unchanged')."""
    if isinstance(value, DlpackTensor):
        return value.data.tobytes()
    try:
        return memoryview(value).tobytes()  # type: ignore[arg-type]
    except TypeError:
        return None


def foreign_uses() -> list[tuple[str, Callable[[object], object]]]:
    """Every entry point that takes a caller's array or memory, each with one foreign object: a Binding as input and
    as output, __call__, a graph's input and a buffer's write. Each returns the logical float32 result, or None."""
    tensor = T([4])
    relu = DEVICE.compile_operator(DEVICE.create_operator(
        dml.ActivationReluOperatorDesc(input_tensor=tensor, output_tensor=tensor)))
    g = dml.Graph(DEVICE)
    graph = g.compile([dml.activation_relu(g.input([4], F32, name="x"))])

    def binding_input(value: object) -> object:
        out = np.full(4, 9, np.float32)
        try:
            relu.execute([dml.Binding(value)], [dml.Binding(out)])
        except dml.DmlError:
            assert np.array_equal(out, [9] * 4), "a refused execute wrote its output"
            raise
        return out

    def binding_output(value: object) -> object:
        relu.execute([dml.Binding(FOREIGN_DATA)], [dml.Binding(value)])
        written = readable_bytes(value)
        assert written is not None
        return np.frombuffer(written, np.float32)

    def buffer_write(value: object) -> object:
        buffer = DEVICE.create_buffer(np.full(4, 9, np.float32))
        try:
            buffer.write(value)
        except dml.DmlError:
            assert buffer.read(np.float32).tolist() == [9] * 4, "a refused write wrote"
            raise
        return None

    return [("Binding input", binding_input), ("Binding output", binding_output),
            ("__call__", lambda value: relu(value)[0]), ("graph input", lambda value: graph({"x": value})[0]),
            ("HostBuffer.write", buffer_write)]


def test_foreign_objects_in_every_binding() -> None:
    """Every foreign object in every entry point that takes one: a DmlError with a printable message (and nothing
    written), or the right result; a Binding takes in place exactly the objects that are float32 memory of 16
    contiguous bytes (or raw bytes); and one that moves after binding is refused at the next dispatch."""
    failures: list[str] = []
    count = 0
    for (name, factory, bindable), (use, call) in itertools.product(FOREIGN, foreign_uses()):
        count += 1
        value = factory()
        before = readable_bytes(value)
        try:
            result = call(value)
        except dml.DmlError as error:
            check_message(error)
            if use == "Binding input" and bindable:
                failures.append(f"{use} <- {name}: refused ({error})")
            if readable_bytes(value) != before:
                failures.append(f"{use} <- {name}: refused, but the object was modified")
            continue
        except Exception as error:
            failures.append(f"{use} <- {name}: {type(error).__name__}: {error}")
            continue
        if use == "Binding input" and not bindable:
            failures.append(f"{use} <- {name}: accepted")
        if result is not None and not np.array_equal(np.asarray(result).reshape(-1), RELU_DATA):
            failures.append(f"{use} <- {name}: accepted with a wrong result {result!r}")
        if use != "Binding output" and readable_bytes(value) != before:
            failures.append(f"{use} <- {name}: an input was modified")
    # Objects that change after binding: moved (resize_), or grown into another dtype, at the next dispatch.
    tensor = T([4])
    relu = DEVICE.compile_operator(DEVICE.create_operator(
        dml.ActivationReluOperatorDesc(input_tensor=tensor, output_tensor=tensor)))
    for change in ("move", "retype", "raise"):
        for side in ("input", "output"):
            count += 1
            foreign = DlpackTensor(FOREIGN_DATA.copy() if side == "input" else np.zeros(4, np.float32))
            other = dml.Binding(np.zeros(4, np.float32) if side == "input" else FOREIGN_DATA.copy())
            binding = dml.Binding(foreign)
            inputs, outputs = ([binding], [other]) if side == "input" else ([other], [binding])
            relu.execute(inputs, outputs)
            if change == "move":
                foreign.move()
            elif change == "retype":
                foreign.data = np.zeros(2, np.float64)
            else:
                foreign.data = RaisingDlpack()  # type: ignore[assignment]
            written = readable_bytes(other.buffer) if side == "input" else None
            with pytest.raises(dml.DmlError) as caught:
                relu.execute(inputs, outputs)
            check_message(caught.value)
            if side == "input" and readable_bytes(other.buffer) != written:
                failures.append(f"{change} {side}: the refused dispatch wrote its output")
    print(f"\n{count} foreign-object cases")
    assert not failures, "\n".join(failures[:20])
