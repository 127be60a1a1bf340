"""Parameters and the output side of every GPU kernel.

Shaders are generic over shapes and strides: what a descriptor fixes (sizes, strides, counts, an operator's
constants) travels in a u32 parameter buffer `P`, so one pipeline per operator, data types and options serves every
shape. `P[0..bindings)` holds each binding's base element (written per dispatch by the Recorder); `Params` appends
the rest and tells the shader where each part starts.

A tensor's layout is a block of 17 words: the rank, then 8 sizes and 8 element strides (unused ones 1 and 0).
`offset_of(block, o)` maps a logical row-major index to an element offset; `coord_of(block, o, d)` gives one
coordinate.

The output side: an operator supplies `fn value(o: u32) -> RAW` (the raw bits of logical output element o) and
`Output` renders the entry point that writes it. An output of 32 or 64 bits gets one invocation per element. A
8- or 16-bit output is written a whole 32-bit word per invocation: the invocation owns a word of the bound range,
finds the logical elements whose bytes lie in it (inverting the strides) and writes the word once, keeping the bytes
of any gap. A layout whose strides interleave cannot be inverted that way: its elements are listed at compile time
in the order of their offsets (`Output.table_bytes`), an invocation per element, and the first element of each
word writes the whole word. So no two invocations write the same word, and no byte outside the tensor's elements
changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...tensor import MAX_DIMENSION_COUNT, TensorDesc
from ...types import DataType
from ..plans import merge_dimensions
from . import specialize, wgsl
from .context import WORKGROUP_SIZE, group_counts

BLOCK = 1 + 2 * MAX_DIMENSION_COUNT
NONE = 0xFFFFFFFF
#: More than a pass's parameters other than an output's element table ever take (a few tensor blocks, constants).
OTHER_PARAMETER_BYTES = 4096

#: WGSL helpers over P: shapes, offsets, the invocation index.
COMMON = f"""
const NONE: u32 = 0xffffffffu;
fn rank_of(block: u32) -> u32 {{ return P[block]; }}
fn size_of(block: u32, d: u32) -> u32 {{ return P[block + 1u + d]; }}
fn stride_of(block: u32, d: u32) -> u32 {{ return P[block + {1 + MAX_DIMENSION_COUNT}u + d]; }}
fn offset_of(block: u32, o: u32) -> u32 {{
    var rest = o;
    var offset = 0u;
    for (var d = i32(P[block]) - 1; d >= 0; d--) {{
        let size = P[block + 1u + u32(d)];
        offset += (rest % size) * P[block + {1 + MAX_DIMENSION_COUNT}u + u32(d)];
        rest /= size;
    }}
    return offset;
}}
fn coord_of(block: u32, o: u32, dim: u32) -> u32 {{
    var rest = o;
    for (var d = P[block] - 1u; d > dim; d--) {{ rest /= P[block + 1u + d]; }}
    return rest % P[block + 1u + dim];
}}
fn invocation(gid: vec3<u32>, groups: vec3<u32>) -> u32 {{ return gid.x + gid.y * groups.x * {WORKGROUP_SIZE}u; }}
"""


#: A word pass keeps at least MIN_INVOCATIONS invocations (about a large GPU's resident threads) and gives each up to
#: MAX_WORDS_PER_INVOCATION 16-byte words, a dispatch's width apart, beyond that (lavapipe, 8M FLOAT32 elements, 15
#: interleaved rounds: RELU 52 / 48 / 47.5 ms and SIGMOID 120 / 112 / 94.5 ms with 2 / 4 / 8 words).
MIN_INVOCATIONS = 1 << 18
MAX_WORDS_PER_INVOCATION = 8


def word_layout(sizes: Sequence[int], strides: Sequence[int], element_size: int) -> int:
    """Elements per 16-byte word (8 or 4) where a tensor of these merged sizes and element strides is a whole
    number of words along its innermost dimension, contiguous there, every other stride a whole number of words
    (so each word of 16 bytes holds its own elements only); 0 where not (or for 8- and 64-bit types)."""
    if element_size not in (2, 4):
        return 0
    per_word = 16 // element_size
    if sizes[-1] % per_word or strides[-1] != 1 or any(stride % per_word for stride in strides[:-1]):
        return 0
    return per_word


def word_main(words: int, per_word: int, body: str) -> tuple[str, int]:
    """(the entry point of a pass over `words` 16-byte words, its invocation count): `body` (statements) runs for
    each word w, whose first logical element is o, several words an invocation on large passes."""
    invocations = -(-words // max(1, min(MAX_WORDS_PER_INVOCATION, words // MIN_INVOCATIONS)))
    return (f"@compute @workgroup_size({WORKGROUP_SIZE})\n"
            f"fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n"
            f"    let t = invocation(gid, groups);\n"
            f"    if (t >= {invocations}u) {{ return; }}\n"
            f"    for (var k = 0u; k < {-(-words // invocations)}u; k++) {{\n"
            f"        let w = t + k * {invocations}u;\n"
            f"        if (w >= {words}u) {{ return; }}\n"
            f"        let o = {per_word}u * w;\n{body}    }}\n}}\n"), invocations


def word_index(slot: int, block: int, per_word: int) -> str:
    """The vec4 word of logical element o (a multiple of `per_word`) of the tensor bound at `slot` with layout
    `block`."""
    return f"P[{slot}u] / {per_word}u + offset_of({block}u, o) / {per_word}u"


def word_of(values: Sequence[str], per_word: int) -> str:
    """The vec4<u32> of a word's raw values (u32 each; 16-bit ones two to a u32, the low one first)."""
    if per_word == 8:
        values = [f"(({values[2 * k]} & 0xffffu) | (({values[2 * k + 1]} & 0xffffu) << 16u))" for k in range(4)]
    return f"vec4<u32>({', '.join(values)})"


class Params:
    """The u32 parameter buffer of one dispatch, built at compile time.

    It also remembers what a specialized shader may take as WGSL constants (specialize.render): every layout block
    (`blocks`: start -> (sizes, strides)) and the words added with `add_constant` (`constants`: sizes, counts,
    integers that only shape the walk; never a float an expression computes with, whose folding could change a
    result)."""

    def __init__(self, binding_count: int) -> None:
        self.words: list[int] = [0] * binding_count
        self.blocks: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.constants: set[int] = set()

    def add(self, *values: int) -> int:
        """Appends u32 values; returns where they start."""
        start = len(self.words)
        for value in values:
            if not 0 <= value <= NONE:
                raise ValueError(f"parameter {value} does not fit a u32")
            self.words.append(int(value))
        return start

    def add_constant(self, *values: int) -> int:
        """Appends u32 values that a specialized shader reads as constants (P[start + k] becomes a literal)."""
        start = self.add(*values)
        self.constants.update(range(start, start + len(values)))
        return start

    def add_f32(self, value: float) -> int:
        return self.add(int(np.array([value], np.float32).view(np.uint32)[0]))

    def add_tensor(self, sizes: Sequence[int], strides: Sequence[int]) -> int:
        """A layout block (see the module docstring); returns where it starts."""
        pad = MAX_DIMENSION_COUNT - len(sizes)
        start = self.add_constant(len(sizes), *sizes, *([1] * pad), *strides, *([0] * pad))
        self.blocks[start] = (tuple(int(size) for size in sizes), tuple(int(stride) for stride in strides))
        return start

    def add_desc(self, desc: TensorDesc) -> int:
        return self.add_tensor(desc.sizes, desc.element_strides)

    def array(self) -> np.ndarray[Any, Any]:
        return np.array(self.words, dtype=np.uint32)


class Output:
    """The write side of an elementwise pass: the entry point that stores `value(o)` into output tensor `name`,
    bound at `slot`."""

    def __init__(self, desc: TensorDesc, name: str, slot: int, params: Params, words: bool = False) -> None:
        self.desc = desc
        self.name = name
        self.slot = slot
        self.data_type: DataType = desc.data_type
        self.element_size = desc.data_type.element_size
        self.count = desc.element_count
        self.block = params.add_desc(desc)
        self.count_at = params.add_constant(self.count)
        # `words` (where specialized): the word pass too, where the layout allows (word_layout)
        sizes, (strides,) = merge_dimensions(desc.sizes, desc.element_strides)
        self.per_word = word_layout(sizes, strides, self.element_size) if words and specialize.ENABLED else 0
        self.word_block = params.add_tensor(sizes, strides) if self.per_word else 0
        self.packed = self.element_size < 4
        if not self.packed:
            self.invocations = self.count
            return
        dims = _dims(desc)
        self.nested = _nested(dims)
        if self.nested:
            # An invocation per word the tensor's memory may touch, wherever its base element falls inside a word.
            last = sum((size - 1) * stride for size, stride in zip(desc.sizes, desc.element_strides, strict=True))
            self.invocations = last // (4 // self.element_size) + 2
            descending = self.descending = dims[::-1]
            self.plan = params.add_constant(last, len(descending), *(value for dim in descending for value in dim))
        else:
            # An invocation per element, in the order of their offsets (distinct: the rules refuse outputs whose
            # strides map two elements onto one).
            self.invocations = self.count
            offsets = np.zeros(1, np.int64)
            for size, stride in zip(desc.sizes, desc.element_strides, strict=True):
                offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride).reshape(-1)
            self.plan = params.add_constant(self.count)
            params.words.extend(np.argsort(offsets, kind="stable").tolist())

    @staticmethod
    def table_bytes(desc: TensorDesc) -> int:
        """The bytes of the element table an 8- or 16-bit output needs in its parameter buffer: 0 unless its
        strides interleave (the dimensions, ordered by stride, do not each step over the ones inside them)."""
        return 0 if desc.data_type.element_size >= 4 or _nested(_dims(desc)) else 4 * desc.element_count

    def declarations(self) -> str:
        """The output's buffer and, for 32/64-bit types, its store_raw function."""
        text = wgsl.buffer(self.name, self.slot)
        if not self.packed:
            text += wgsl.stores(self.name, self.data_type, self.slot)
        return text

    def main(self) -> str:
        """The entry point: every element's value written once, a word per invocation for narrow types."""
        head = (f"@compute @workgroup_size({WORKGROUP_SIZE})\n"
                f"fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
                f"@builtin(num_workgroups) groups: vec3<u32>) {{\n    let t = invocation(gid, groups);\n")
        if not self.packed:
            return head + (f"    if (t >= P[{self.count_at}u]) {{ return; }}\n"
                           f"    store_raw_{self.name}(offset_of({self.block}u, t), value(t));\n}}\n")
        per_word = 4 // self.element_size
        bits = 8 * self.element_size
        mask = (1 << bits) - 1
        plan = self.plan
        if not self.nested:
            # Invocation t takes the t-th element in offset order; the first element of a word writes the word,
            # with the (at most per_word) elements after it that lie in the same word.
            return head + (
                f"    let count = P[{plan}u];\n"
                f"    if (t >= count) {{ return; }}\n"
                f"    let base = P[{self.slot}u];\n"
                f"    let word = (base + offset_of({self.block}u, P[{plan + 1}u + t])) / {per_word}u;\n"
                f"    if (t > 0u && (base + offset_of({self.block}u, P[{plan}u + t])) / {per_word}u == word) "
                f"{{ return; }}\n"
                f"    var bits = {self.name}[word];\n"
                f"    for (var k = t; k < min(count, t + {per_word}u); k++) {{\n"
                f"        let o = P[{plan + 1}u + k];\n"
                f"        let at = base + offset_of({self.block}u, o);\n"
                f"        if (at / {per_word}u != word) {{ break; }}\n"
                f"        let shift = (at % {per_word}u) * {bits}u;\n"
                f"        bits = (bits & ~({mask:#x}u << shift)) | ((value(o) & {mask:#x}u) << shift);\n"
                f"    }}\n"
                f"    {self.name}[word] = bits;\n}}\n")
        if specialize.ENABLED:   # the dimensions' (stride, size, weight) as literals, the walk unrolled
            invert = "        var rest = u32(rel);\n        var o = 0u;\n" + "".join(
                f"        let c{k} = rest / {stride}u;\n        if (c{k} >= {size}u) {{ continue; }}\n"
                f"        rest -= c{k} * {stride}u;\n        o += c{k} * {weight}u;\n"
                for k, (stride, size, weight) in enumerate(self.descending)) + "        if (rest != 0u) { continue; }\n"
        else:
            invert = (f"        var rest = u32(rel);\n        var o = 0u;\n        var ok = true;\n"
                      f"        for (var k = 0u; k < P[{plan + 1}u]; k++) {{\n"
                      f"            let stride = P[{plan + 2}u + 3u * k];\n"
                      f"            let c = rest / stride;\n"
                      f"            if (c >= P[{plan + 3}u + 3u * k]) {{ ok = false; break; }}\n"
                      f"            rest -= c * stride;\n            o += c * P[{plan + 4}u + 3u * k];\n        }}\n"
                      f"        if (!ok || rest != 0u) {{ continue; }}\n")
        return head + (
            f"    let base = P[{self.slot}u];\n"
            f"    let word = base / {per_word}u + t;\n"
            f"    let first = i32(word * {per_word}u) - i32(base);\n"
            f"    if (first > i32(P[{plan}u])) {{ return; }}\n"
            f"    var bits = {self.name}[word];\n    var changed = false;\n"
            f"    for (var s = 0u; s < {per_word}u; s++) {{\n"
            f"        let rel = first + i32(s);\n"
            f"        if (rel < 0 || rel > i32(P[{plan}u])) {{ continue; }}\n"
            f"{invert}"
            f"        let shift = s * {bits}u;\n"
            f"        bits = (bits & ~({mask:#x}u << shift)) | ((value(o) & {mask:#x}u) << shift);\n"
            f"        changed = true;\n    }}\n"
            f"    if (changed) {{ {self.name}[word] = bits; }}\n}}\n")

    def groups(self) -> tuple[int, int]:
        return group_counts(self.invocations)

    def word_pass(self) -> tuple[str, tuple[int, int]]:
        """(the output's binding and the entry point of the word pass, its work-group counts), where `per_word`:
        each invocation stores whole 16-byte words of `value(o)`s, bytes of the tensor's elements only."""
        per_word = self.per_word
        values = [f"value(o + {lane}u)" for lane in range(per_word)]
        at = word_index(self.slot, self.word_block, per_word)
        body = f"        {self.name}[{at}] = {word_of(values, per_word)};\n"
        main, invocations = word_main(self.count // per_word, per_word, body)
        return (f"@group(0) @binding({self.slot}) var<storage, read_write> {self.name}: array<vec4<u32>>;\n" + main,
                group_counts(invocations))


def _dims(desc: TensorDesc) -> list[tuple[int, int, int]]:
    """(stride, size, row-major weight) of each dimension longer than 1, by increasing stride."""
    return sorted((stride, size, weight) for size, stride, weight in
                  zip(desc.sizes, desc.element_strides, _row_major_weights(desc.sizes), strict=True) if size > 1)


def _nested(dims: Sequence[tuple[int, int, int]]) -> bool:
    """Whether each dimension (of `_dims`) steps over all the ones of smaller stride: strides that can be inverted
    by dividing by each in turn."""
    return all(dims[k + 1][0] >= dims[k][0] * dims[k][1] for k in range(len(dims) - 1))


def _row_major_weights(sizes: Sequence[int]) -> list[int]:
    weights = [1] * len(sizes)
    for index in range(len(sizes) - 2, -1, -1):
        weights[index] = weights[index + 1] * sizes[index + 1]
    return weights
