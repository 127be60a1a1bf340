// REDUCE state of MIN and MAX: the input's own raw bits, so the result is bit-exact (FLOAT16 too: no round trip
// through float32). Values are compared by order_key, an integer key that orders floats as IEEE values do (with
// -0 below +0, like the CPU's llvm.minimum / llvm.maximum) and needs no float compare (none that a driver could
// flush subnormals in). NaN propagates: the first NaN in the fixed combining order wins, and the result is the
// canonical quiet NaN (sign clear, zero payload) whichever NaN that was.
// Placeholders: RAW_IN, IDENTITY (raw bits every value beats or equals), BETTER (`>` for MAX, `<` for MIN),
// QUIET_NAN (the canonical quiet NaN's raw bits; any value for integers, which have none).
alias State = {RAW_IN};

fn state_identity() -> State { return {IDENTITY}; }

fn state_combine(a: State, b: State) -> State {
    if (is_nan_raw(a)) { return a; }
    if (is_nan_raw(b)) { return b; }
    return select(a, b, order_key(b) {BETTER} order_key(a));
}

fn state_add(s: State, e: u32, r: u32) -> State { return state_combine(s, load_raw_x(e)); }

fn state_finish(s: State) -> {RAW_IN} { return select(s, {QUIET_NAN}, is_nan_raw(s)); }
