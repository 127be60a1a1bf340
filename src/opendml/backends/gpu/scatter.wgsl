// SCATTER_ELEMENTS and SCATTER_ND, the copy: output element o (row-major over the output's view: cells, then the
// rest) is element o % REST_COUNT of cell o / REST_COUNT, taken from the update at the cell's marked outer position
// (mark - 1) or, unmarked, from the input. Raw bits are moved, so every type (FLOAT64 too) is copied exactly.
// OUTER_UP: the outer dimensions' layout block in the updates; CELL_IN: the cells' layout block in the input;
// REST_UP, REST_IN: the rest's layout blocks in the updates and the input; REST_COUNT: the rest's element count.
fn value(o: u32) -> {RAW} {
    let count = P[{REST_COUNT}u];
    let cell = o / count;
    let r = o % count;
    let mark = load_raw_w(cell);
    if (mark != 0u) {
        return load_raw_u(offset_of({OUTER_UP}u, mark - 1u) + offset_of({REST_UP}u, r));
    }
    return load_raw_x(offset_of({CELL_IN}u, cell) + offset_of({REST_IN}u, r));
}
