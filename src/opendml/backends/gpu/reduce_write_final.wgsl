// REDUCE, a tree pass into a 32/64-bit output: with FINAL set (the pass sees whole blocks) the state is finished
// and stored into output element o (layout block OUT), else it goes to scratch slot c * OUTPUTS + o.
// Placeholders: FINAL, OUT, OUTPUTS.
fn write_result(o: u32, c: u32, s: State) {
    if ({FINAL} != 0u) {
        store_raw_out(offset_of({OUT}u, o), state_finish(s));
        return;
    }
    state_store(c * {OUTPUTS} + o, s);
}
