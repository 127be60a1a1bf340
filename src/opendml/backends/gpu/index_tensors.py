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


def index_functions(index_type: DataType) -> str:
    """index_words, index_is_negative, index_position and walk_offset (index_tensors.wgsl) for an index tensor bound
    as `ix` (load_raw_ix rendered beside them)."""
    return template("index_tensors.wgsl", SIGNED="true" if index_type in (DataType.INT32, DataType.INT64) else "false",
                    WORDS=_INDEX_WORDS[index_type])
