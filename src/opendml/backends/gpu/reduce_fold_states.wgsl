// REDUCE merge pass's fold: pass 1's states of output o for chunks r0, r0 + step, ... (below r1), combined in that
// order (scratch slot c * OUTPUTS + o holds chunk c's).
// Placeholders: OUTPUTS (a u32 expression).
fn fold(o: u32, r0: u32, r1: u32, step: u32, s: State) -> State {
    let outputs = {OUTPUTS};
    var acc = s;
    for (var c = r0; c < r1; c += step) {
        acc = state_combine(acc, state_load(c * outputs + o));
    }
    return acc;
}
