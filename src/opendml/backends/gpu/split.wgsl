// SPLIT and JOIN, one part: element o of the target block is the source element at the same coordinates. Each
// binding's base already points at the block's first element (the part's, or the whole tensor's slice, shifted
// along Axis), so the copy is the same in both directions. Raw bits are moved, so every type (FLOAT64 too) is
// copied exactly.
// IN: the source's layout block over the part's sizes.
fn value(o: u32) -> {RAW} {
    return load_raw_x(offset_of({IN}u, o));
}
