// GATHER_ND1: output element o is the input element that o's index tuple selects. The output is row-major over
// (outer dimensions: batch and index positions, then rest: the input's trailing dimensions), so o splits into the
// outer position o / REST_COUNT and the element o % REST_COUNT of the gathered sub-block. Raw bits are moved, so
// every type (FLOAT64 too) is copied exactly.
// OUTER_IX, OUTER_IN: layout blocks of the outer dimensions with the indices' strides and the input's (the batch
// dimensions' strides, 0 for index positions); REST: the rest's layout block in the input; REST_COUNT: the rest's
// element count; TUPLE: K, the indices' stride between a tuple's coordinates, then K (size, input stride) pairs.
// (The generic path's value; a specialized shader's is rendered by gather_nd1.py with these as constants.)

fn value(o: u32) -> {RAW} {
    let count = P[{REST_COUNT}u];
    var source = walk_offset({REST}u, o % count);
    // One walk over the outer coordinates (as walk_offset does): where the tuple starts in the indices, and where
    // its batch starts in the input.
    var rest = o / count;
    var at = 0u;
    let rank = rank_of({OUTER_IX}u);
    if (rank > 0u) {
        for (var d = rank - 1u; d > 0u; d--) {
            let size = size_of({OUTER_IX}u, d);
            let c = rest % size;
            rest /= size;
            at += c * stride_of({OUTER_IX}u, d);
            source += c * stride_of({OUTER_IN}u, d);
        }
        at += rest * stride_of({OUTER_IX}u, 0u);
        source += rest * stride_of({OUTER_IN}u, 0u);
    }
    let tuple_size = P[{TUPLE}u];
    let step = P[{TUPLE}u + 1u];
    for (var k = 0u; k < tuple_size; k++) {
        let size = P[{TUPLE}u + 2u + 2u * k];
        source += coordinate(index_words(at + k * step), size) * P[{TUPLE}u + 3u + 2u * k];
    }
    return load_raw_x(source);
}
