// REDUCE, a tree pass into an 8/16-bit output: every state goes to scratch slot c * OUTPUTS + o (chunk c of
// output o); the elementwise combine pass writes the output. Placeholders: OUTPUTS.
fn write_result(o: u32, c: u32, s: State) {
    state_store(c * {OUTPUTS} + o, s);
}
