// ONE_HOT where Axis is the output's last dimension (AFTER_COUNT 1) and an invocation writes a run of one
// sequence (runs.py): elements o + s x STEP (s < RUN) at output element offsets at + s x STEP, the sequence's
// index read and decoded once. DEPTH, ON, BEFORE, WALK as in one_hot.wgsl.
fn run(o: u32, at: u32) {
    let along = o % P[{DEPTH}u];
    let position = index_position(index_words({WALK}({BEFORE}u, o / P[{DEPTH}u])), P[{DEPTH}u]);
    let off = load_raw_values(0u);
    let on = load_raw_values(P[{ON}u]);
    for (var s = 0u; s < {RUN}u; s++) {
        store_raw_out(at + s * {STEP}u, select(off, on, along + s * {STEP}u == position));
    }
}
