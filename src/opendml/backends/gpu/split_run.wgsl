// SPLIT and JOIN, one part, where an invocation copies a run (runs.py): elements o + s x STEP (s < RUN) of the
// target block, at target element offsets first + s x STEP, from the source's elements at the same coordinates,
// STEP apart there too. IN: the source's layout block over the part's sizes.
fn run(o: u32, first: u32) {
    let source = offset_of({IN}u, o);
    for (var s = 0u; s < {RUN}u; s++) {
        store_raw_out(first + s * {STEP}u, load_raw_x(source + s * {STEP}u));
    }
}
