// What ONE_HOT and GATHER_ND1 share. Index tensors (UINT32, INT32, UINT64, INT64) are read as numbers with 32-bit
// arithmetic only: every type becomes the two words (low, high) of a 64-bit two's complement integer, so one code
// path serves all four and huge unsigned values can never pass for negative ones. walk_offset maps a row-major
// index to an element offset through a layout block, sparing offset_of's division of the outermost dimension.
// SIGNED: whether the index type is signed; WORDS: the body of index_words for the type (ix is the index tensor);
// POSITION: the body of index_position for the type (index_tensors.py: 32-bit types need less).
const SIGNED_INDEX: bool = {SIGNED};

// Element e of ix as (low word, high word): INT32 sign-extended, UINT32 zero-extended, 64-bit types as stored.
fn index_words(e: u32) -> vec2<u32> {
    {WORDS}
}

// Whether the value is negative (only a signed type's can be).
fn index_is_negative(w: vec2<u32>) -> bool {
    return SIGNED_INDEX && (w.y >> 31u) != 0u;
}

// The position a value names along a dimension of `size` elements: a value in [0, size) names itself, a negative
// one in [-size, 0) counts from the end (once); anything else gives NONE (sizes are below 2^32, so a valid
// position never equals NONE).
fn index_position(w: vec2<u32>, size: u32) -> u32 {
    {POSITION}
}

// GATHER_ND1's coordinate made valid: a negative one of a signed type counts from the end once; whatever is still
// out of range is clamped to the nearest valid coordinate.
fn coordinate(w: vec2<u32>, size: u32) -> u32 {
    let position = index_position(w, size);
    if (position != NONE) {
        return position;
    }
    return select(size - 1u, 0u, index_is_negative(w));
}

// The element offset of row-major index `i` (below the block's element count) in a layout block (elementwise.py):
// offset_of without the remainder and division of the outermost dimension, which an index in range does not need.
fn walk_offset(block: u32, i: u32) -> u32 {
    let rank = rank_of(block);
    if (rank == 0u) {
        return 0u;
    }
    var rest = i;
    var offset = 0u;
    for (var d = rank - 1u; d > 0u; d--) {
        let size = size_of(block, d);
        offset += (rest % size) * stride_of(block, d);
        rest /= size;
    }
    return offset + rest * stride_of(block, 0u);
}
