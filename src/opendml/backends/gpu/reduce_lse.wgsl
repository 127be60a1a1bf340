// REDUCE state of LOG_SUM_EXP: the running maximum m and the compensated sum (hi, lo) of exp(x - m), rescaled
// whenever m grows (one pass over memory); the result is m + log(hi + lo), or m itself when m is NaN or infinite
// (a NaN anywhere gives NaN; +inf gives +inf; only -inf gives -inf). Every exp argument is <= 0 (see
// exp_negative). Placeholders: OUT, RAW_OUT.
struct State {
    m: f32,
    hi: f32,
    lo: f32,
}

fn state_identity() -> State { return State(bitcast<f32>(0xff800000u), 0.0, 0.0); }

fn state_add(s: State, e: u32, r: u32) -> State {
    let v = load_x(e);
    if (v > s.m) {
        let f = exp_negative(s.m - v);
        let t = two_sum(s.hi * f, 1.0);
        return State(v, t.x, s.lo * f + t.y);
    }
    if (is_nan_f32(v)) { return State(v, s.hi, s.lo); }
    let t = two_sum(s.hi, exp_negative(v - s.m));
    return State(s.m, t.x, s.lo + t.y);
}

fn state_combine(a: State, b: State) -> State {
    if (is_nan_f32(a.m)) { return a; }
    if (is_nan_f32(b.m)) { return b; }
    let m = select(a.m, b.m, b.m > a.m);
    let fa = exp_negative(a.m - m);
    let fb = exp_negative(b.m - m);
    let t = two_sum(a.hi * fa, b.hi * fb);
    return State(m, t.x, (a.lo * fa + b.lo * fb) + t.y);
}

fn state_finish(s: State) -> {RAW_OUT} {
    var result = s.m;
    if (is_finite_f32(s.m)) { result = s.m + csum_log(vec2<f32>(s.hi, s.lo)); }
    return to_raw_{OUT}(result);
}
