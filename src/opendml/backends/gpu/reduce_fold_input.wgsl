// REDUCE pass 1's fold: elements r0, r0 + step, ... (below r1) of output o's reduced block, from the input.
// Placeholders: KEPT (the layout block of the kept axes over the input's strides).
fn fold(o: u32, r0: u32, r1: u32, step: u32, s: State) -> State {
    return reduce_range(offset_of({KEPT}u, o), r0, r1, step, s);
}
