// REDUCE state of ARGMAX and ARGMIN: the best value's raw bits and its index in the reduced block (row-major over
// the reduced axes in increasing order). The better value wins; equal values (-0 equals +0) and NaNs go to the
// index TIE prefers, and a NaN beats every number, so the result is the first (or, with AxisDirection DECREASING,
// the last) extreme or NaN, whatever order the states are combined in. Values compare by value_key (see
// reduce_extreme.wgsl).
// Placeholders: RAW_IN, IDENTITY (raw bits that every value beats or equals), BETTER (`>` / `<`), TIE (whether b's
// index wins a tie against a's: `b.index < a.index`, or for the last index `b.index + 1u > a.index + 1u`, where
// the identity's index 0xffffffff wraps to 0 and so loses every tie either way), INDEX_RAW (the output's raw value
// of index i).
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
        take_b = b_nan && (!a_nan || {TIE});
    } else {
        let ka = value_key(a.raw);
        let kb = value_key(b.raw);
        take_b = kb {BETTER} ka || (kb == ka && {TIE});
    }
    if (take_b) { return b; }
    return a;
}

fn state_add(s: State, e: u32, r: u32) -> State { return state_combine(s, State(load_raw_x(e), r)); }

fn state_finish(s: State) -> {RAW_OUT} { let i = s.index; return {INDEX_RAW}; }
