// REDUCE state of ARGMAX and ARGMIN: the best value's raw bits and its index in the reduced block (row-major over
// the reduced axes in increasing order). The better value wins; equal values (-0 equals +0) and NaNs go to the
// smaller index, and a NaN beats every number, so the result is the first extreme or the first NaN, whatever
// order the states are combined in. Values compare by value_key (see reduce_extreme.wgsl).
// Placeholders: RAW_IN, IDENTITY (raw bits that every value beats or equals), BETTER (`>` / `<`), INDEX_RAW (the
// output's raw value of index i).
struct State {
    raw: {RAW_IN},
    index: u32,
}

fn state_identity() -> State { return State({IDENTITY}, 0xffffffffu); }

fn state_combine(a: State, b: State) -> State {
    let a_nan = is_nan_raw(a.raw);
    let b_nan = is_nan_raw(b.raw);
    var take_b: bool;
    if (a_nan || b_nan) {
        take_b = b_nan && (!a_nan || b.index < a.index);
    } else {
        let ka = value_key(a.raw);
        let kb = value_key(b.raw);
        take_b = kb {BETTER} ka || (kb == ka && b.index < a.index);
    }
    if (take_b) { return b; }
    return a;
}

fn state_add(s: State, e: u32, r: u32) -> State { return state_combine(s, State(load_raw_x(e), r)); }

fn state_finish(s: State) -> {RAW_OUT} { let i = s.index; return {INDEX_RAW}; }
