"""WGSL rendering of DML's data types over 32-bit words.

Tensors are bound as `array<u32>` (but see below). An element's *raw* value is its bits: `u32` for types of 32
bits or fewer (8- and 16-bit values in the low bits), `vec2<u32>` (low word, high word) for 64-bit types.
Operators that only move data (SPLIT, ONE_HOT's values, GATHER_ND1) work on raw values and so move every type,
FLOAT64 included, bit-exactly. Operators that compute convert raw values to a *computation type*: f32 for FLOAT16
and FLOAT32 (FLOAT16 computes in float32), i32/u32 for the 8- to 32-bit integers, i64/u64 for the 64-bit ones
(which need the adapter's shader-int64).

A FLOAT16 input that a shader only computes with is bound as `array<f16>` instead where the adapter has shader-f16
(`tensor_input`): it then has `load_<name>` only.

Functions rendered here, for a tensor bound as `name` (whose base element is params[slot]):
    load_raw_<name>(e: u32) -> RAW       element e (counted from the tensor's element 0) of a >=32-bit type
    load_<name>(e: u32) -> CT            element e as the computation type (any type)
    store_raw_<name>(e: u32, v: RAW)     element e of a >=32-bit type
and, per data type, `to_raw_<T>(CT) -> RAW` (FLOAT16: round to nearest even, as NumPy does) and
`from_raw_<T>(RAW) -> CT`.
"""

from __future__ import annotations

from ...types import DataType

D = DataType

#: The computation type of each data type.
COMPUTE_TYPE: dict[DataType, str] = {
    D.FLOAT32: "f32", D.FLOAT16: "f32", D.UINT32: "u32", D.UINT16: "u32", D.UINT8: "u32", D.INT32: "i32",
    D.INT16: "i32", D.INT8: "i32", D.UINT64: "u64", D.INT64: "i64",
}


def raw_type(data_type: DataType) -> str:
    return "vec2<u32>" if data_type.element_size == 8 else "u32"


def needs_int64(data_type: DataType) -> bool:
    return data_type in (D.INT64, D.UINT64)


#: f32 -> FLOAT16 bits, rounding to nearest even (WGSL's pack2x16float may round either way); NaN keeps its sign
#: and top payload bits (a zero payload becomes 1, so that it stays a NaN), as NumPy converts.
F16_BITS = """
fn f16_bits(v: f32) -> u32 {
    let x = bitcast<u32>(v);
    let sign = (x >> 16u) & 0x8000u;
    let a = x & 0x7fffffffu;
    if (a > 0x7f800000u) {
        let payload = (a >> 13u) & 0x3ffu;
        return sign | 0x7c00u | select(payload, 1u, payload == 0u);
    }
    if (a >= 0x477ff000u) { return sign | 0x7c00u; }
    if (a >= 0x38800000u) {
        let rounded = a + 0xfffu + ((a >> 13u) & 1u);
        return sign | ((rounded - 0x38000000u) >> 13u);
    }
    return sign | u32(round(bitcast<f32>(a) * 16777216.0));
}
"""


def converters(data_type: DataType) -> str:
    """`from_raw_<T>` and `to_raw_<T>` of one data type (FLOAT64 has none: it is only moved)."""
    t = data_type.name
    if data_type is D.FLOAT64:
        return ""
    body = {
        D.FLOAT32: ("return bitcast<f32>(r);", "return bitcast<u32>(v);"),
        D.FLOAT16: ("return unpack2x16float(r).x;", "return f16_bits(v);"),
        D.UINT32: ("return r;", "return v;"),
        D.UINT16: ("return r & 0xffffu;", "return v & 0xffffu;"),
        D.UINT8: ("return r & 0xffu;", "return v & 0xffu;"),
        D.INT32: ("return bitcast<i32>(r);", "return bitcast<u32>(v);"),
        D.INT16: ("return bitcast<i32>(r << 16u) >> 16u;", "return bitcast<u32>(v) & 0xffffu;"),
        D.INT8: ("return bitcast<i32>(r << 24u) >> 24u;", "return bitcast<u32>(v) & 0xffu;"),
        D.UINT64: ("return u64(r.x) | (u64(r.y) << 32u);",
                   "return vec2<u32>(u32(v & 0xfffffffflu), u32(v >> 32u));"),
        D.INT64: ("return bitcast<i64>(u64(r.x) | (u64(r.y) << 32u));",
                  "let u = bitcast<u64>(v); return vec2<u32>(u32(u & 0xfffffffflu), u32(u >> 32u));"),
    }[data_type]
    ct, raw = COMPUTE_TYPE[data_type], raw_type(data_type)
    return (f"fn from_raw_{t}(r: {raw}) -> {ct} {{ {body[0]} }}\n"
            f"fn to_raw_{t}(v: {ct}) -> {raw} {{ {body[1]} }}\n")


def prelude(data_types: set[DataType]) -> str:
    """The converters of every type in `data_types` (and f16_bits where FLOAT16 is among them)."""
    parts = [F16_BITS] if D.FLOAT16 in data_types else []
    parts += [converters(data_type) for data_type in sorted(data_types)]
    return "".join(parts)


def buffer(name: str, binding: int) -> str:
    return f"@group(0) @binding({binding}) var<storage, read_write> {name}: array<u32>;\n"


def params_binding(binding: int) -> str:
    return f"@group(0) @binding({binding}) var<storage, read> P: array<u32>;\n"


def tensor_input(name: str, data_type: DataType, binding: int, *, computed: bool, f16: bool) -> str:
    """The binding of an input tensor with its loads (see `loads`; its base element is P[binding], as for every
    binding). A FLOAT16 tensor that the shader only computes with (`computed`: it calls load_<name>, never
    load_raw_<name>) is bound as array<f16> where the adapter has shader-f16 (`f16`), and its elements load as f16
    values, converted to f32 exactly; elsewhere FLOAT16 loads unpack them from 32-bit words (unpack2x16float). The
    two give the same f32 for every bit pattern."""
    if computed and f16 and data_type is D.FLOAT16:
        return (f"@group(0) @binding({binding}) var<storage, read_write> {name}: array<f16>;\n"
                f"fn load_{name}(e: u32) -> f32 {{ return f32({name}[P[{binding}u] + e]); }}\n")
    return buffer(name, binding) + loads(name, data_type, binding)


def loads(name: str, data_type: DataType, slot: int) -> str:
    """load_raw_<name> and load_<name> for a tensor bound as `name` whose base element is P[slot]."""
    size = data_type.element_size
    if size == 8:
        raw = (f"fn load_raw_{name}(e: u32) -> vec2<u32> {{ let i = 2u * (P[{slot}u] + e); "
               f"return vec2<u32>({name}[i], {name}[i + 1u]); }}\n")
    elif size == 4:
        raw = f"fn load_raw_{name}(e: u32) -> u32 {{ return {name}[P[{slot}u] + e]; }}\n"
    elif size == 2:
        raw = (f"fn load_raw_{name}(e: u32) -> u32 {{ let i = P[{slot}u] + e; "
               f"return ({name}[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu; }}\n")
    else:
        raw = (f"fn load_raw_{name}(e: u32) -> u32 {{ let i = P[{slot}u] + e; "
               f"return ({name}[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }}\n")
    if data_type is D.FLOAT64:
        return raw
    ct = COMPUTE_TYPE[data_type]
    return raw + f"fn load_{name}(e: u32) -> {ct} {{ return from_raw_{data_type.name}(load_raw_{name}(e)); }}\n"


def stores(name: str, data_type: DataType, slot: int) -> str:
    """store_raw_<name> for a tensor of a 32- or 64-bit type bound as `name` (narrower types are written a whole
    word at a time by the elementwise framework)."""
    size = data_type.element_size
    if size == 8:
        return (f"fn store_raw_{name}(e: u32, v: vec2<u32>) {{ let i = 2u * (P[{slot}u] + e); "
                f"{name}[i] = v.x; {name}[i + 1u] = v.y; }}\n")
    assert size == 4, data_type
    return f"fn store_raw_{name}(e: u32, v: u32) {{ {name}[P[{slot}u] + e] = v; }}\n"

