// SPLIT and JOIN, one part, where an invocation copies RUN consecutive elements (runs.py): elements o.. o + RUN - 1
// of the target block, at target element offsets first.., from the source's consecutive elements at the same
// coordinates. IN: the source's layout block over the part's sizes.
fn run(o: u32, first: u32) {
    let source = offset_of({IN}u, o);
    for (var s = 0u; s < {RUN}u; s++) {
        store_raw_out(first + s, load_raw_x(source + s));
    }
}
