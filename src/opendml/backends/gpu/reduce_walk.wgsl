// REDUCE: folding a run of one output's reduced block into a state.
// The reduced block is a row-major index r over the reduced axes, split into the innermost axis (INNER_SIZE
// elements, INNER_STRIDE apart) and the others (the layout block OUTER), so r = j * INNER_SIZE + i lies at
// offset_of(OUTER, j) + i * INNER_STRIDE from the output's base offset. Walking r by a fixed step needs a
// division only when it leaves a row.

// Folds elements r0, r0 + step, ... (below r1) of the block whose element 0 is at `base` into s, in that order.
fn reduce_range(base: u32, r0: u32, r1: u32, step: u32, s: State) -> State {
    var acc = s;
    if (r0 >= r1) { return acc; }
    let inner = {INNER_SIZE};
    let inner_stride = {INNER_STRIDE};
    var j = r0 / inner;
    var i = r0 - j * inner;
    var row = base + offset_of({OUTER}u, j);
    let count = (r1 - r0 - 1u) / step + 1u;     // no r0 + k * step past r1: no u32 overflow
    var r = r0;
    for (var k = 0u; k < count; k++) {
        if (count - k >= 4u && 3u * step < inner - i) {
            // Four elements of this row at once: their loads wait on nothing, so they are in flight together.
            let e = row + i * inner_stride;
            let d = step * inner_stride;
            acc = state_add(acc, e, r);
            acc = state_add(acc, e + d, r + step);
            acc = state_add(acc, e + 2u * d, r + 2u * step);
            acc = state_add(acc, e + 3u * d, r + 3u * step);
            k += 3u;
            r += 3u * step;
            i += 3u * step;
        } else {
            acc = state_add(acc, row + i * inner_stride, r);
        }
        r += step;
        let room = inner - i;
        if (step < room) {
            i += step;
        } else {
            let past = step - room;
            let rows = past / inner;
            j += 1u + rows;
            i = past - rows * inner;
            row = base + offset_of({OUTER}u, j);
        }
    }
    return acc;
}
