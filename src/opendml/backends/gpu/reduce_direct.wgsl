// REDUCE in one elementwise pass: one invocation per output element (per output word for 8/16-bit outputs) folds
// the element's whole reduced block in order. Used for short blocks, and for many outputs that lie side by side
// in memory (neighbouring invocations then read neighbouring elements).
// Placeholders: KEPT (the layout block of the kept axes over the input's strides), REDUCED (N, a u32 expression), RAW_OUT.
fn value(o: u32) -> {RAW_OUT} {
    return state_finish(reduce_range(offset_of({KEPT}u, o), 0u, {REDUCED}, 1u, state_identity()));
}
