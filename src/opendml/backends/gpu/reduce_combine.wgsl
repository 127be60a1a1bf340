// REDUCE pass 2: output element o combines its CHUNKS partial states (scratch slot c * OUTPUTS + o for chunk c)
// in chunk order, finishes and converts; the elementwise Output writes it.
// Placeholders: OUTPUTS, CHUNKS (those counts, as u32 expressions), RAW_OUT.
fn value(o: u32) -> {RAW_OUT} {
    let outputs = {OUTPUTS};
    let chunks = {CHUNKS};
    var s = state_load(o);
    for (var c = 1u; c < chunks; c++) {
        s = state_combine(s, state_load(c * outputs + o));
    }
    return state_finish(s);
}
