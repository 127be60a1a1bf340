// REDUCE, specialized to a reduced block that is one run of INNER_STRIDE-spaced elements (one merged axis, so
// r = i): fold elements r0, r0 + step, ... (below r1) of the block whose element 0 is at `base` into s, in that
// order, as reduce_walk.wgsl does, with the block's sizes as literals and no row to split.
// Placeholders: INNER_STRIDE (a u32 literal).
fn reduce_range(base: u32, r0: u32, r1: u32, step: u32, s: State) -> State {
    var acc = s;
    // r1 + step fits a u32 (MAX_BLOCK), so r never wraps.
    for (var r = r0; r < r1; r += step) {
        acc = state_add(acc, base + r * {INNER_STRIDE}, r);
    }
    return acc;
}
