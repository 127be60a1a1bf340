"""What ONE_HOT and GATHER_ND1 share on the GPU: reading index tensors as numbers (index_tensors.wgsl)."""

from __future__ import annotations

from ...types import DataType
from .kernel import template

#: The body of index_words (index_tensors.wgsl) per index type: the element as (low, high) words of an int64.
_INDEX_WORDS = {
    DataType.UINT32: "return vec2<u32>(load_raw_ix(e), 0u);",
    DataType.INT32: "let r = load_raw_ix(e);\n    return vec2<u32>(r, bitcast<u32>(bitcast<i32>(r) >> 31u));",
    DataType.UINT64: "return load_raw_ix(e);",
    DataType.INT64: "return load_raw_ix(e);",
}


#: The body of index_position (index_tensors.wgsl) for 64-bit index types: w is 2^64 - m for a negative value's
#: magnitude m; m <= size < 2^32 needs a high word of all ones and then m = 2^32 - w.x (w.x = 0 would be m = 2^32).
_POSITION_64 = """if (index_is_negative(w)) {
        let magnitude = 0u - w.x;
        if (w.y == 0xffffffffu && w.x != 0u && magnitude <= size) {
            return size - magnitude;
        }
        return NONE;
    }
    if (w.y == 0u && w.x < size) {
        return w.x;
    }
    return NONE;"""

#: The same for 32-bit index types, whose high word is only the sign's extension: a negative INT32 has w.x >= 2^31
#: (never 0) and magnitude 2^32 - w.x; a non-negative one (or any UINT32) names w.x when it is below size.
_POSITION_32 = """if (index_is_negative(w)) {
        let magnitude = 0u - w.x;
        return select(NONE, size - magnitude, magnitude <= size);
    }
    return select(NONE, w.x, w.x < size);"""


def index_functions(index_type: DataType) -> str:
    """index_words, index_is_negative, index_position and walk_offset (index_tensors.wgsl) for an index tensor bound
    as `ix` (load_raw_ix rendered beside them)."""
    return template("index_tensors.wgsl", SIGNED="true" if index_type in (DataType.INT32, DataType.INT64) else "false",
                    WORDS=_INDEX_WORDS[index_type],
                    POSITION=_POSITION_64 if index_type.element_size == 8 else _POSITION_32)
