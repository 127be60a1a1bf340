// ONE_HOT: output element o is OnValue where its coordinate along Axis is the position its sequence's index names,
// and OffValue everywhere else (an index out of range names no position: its whole sequence stays off). The values
// are moved as raw bits, so every type (FLOAT64 and NaN payloads too) is copied exactly.
// The output is row-major over (before, Axis, after): o = (before * depth + along) * AFTER_COUNT + after.
// BEFORE, AFTER: layout blocks of the dimensions before and after Axis (merged) with the indices' strides;
// AFTER_COUNT, DEPTH, ON: where the element count after Axis, the output's size along Axis and OnValue's element
// offset in the values are stored (constants once specialized); WALK: offset_of where the shader is specialized
// (each block's own function, its divisors constants), else walk_offset (index_tensors.wgsl: offset_of without
// the outermost division, P read at run time).
fn value(o: u32) -> {RAW} {
    let after_count = P[{AFTER_COUNT}u];
    let depth = P[{DEPTH}u];
    let sequence = o / after_count;
    let along = sequence % depth;
    let at = {WALK}({BEFORE}u, sequence / depth) + {WALK}({AFTER}u, o % after_count);
    let position = index_position(index_words(at), depth);
    // OffValue is the values tensor's element 0; both are read at the same address by every invocation.
    return select(load_raw_values(0u), load_raw_values(P[{ON}u]), along == position);
}
