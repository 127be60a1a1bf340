// REDUCE: float helpers shared by the reduction states (no placeholders).

// Bit tests, not comparisons: a driver's fast-math may fold `v != v`, but never an integer test.
fn is_nan_f32(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
fn is_finite_f32(v: f32) -> bool { return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u; }

// 1.0, read from the parameters: multiplying by it changes nothing, but hides an expression from the driver's
// algebraic simplifier. Mesa's NIR, for one, folds (a + b) - a to b and a - (a + b) to -b in shaders without
// exactness decorations (which WGSL cannot express), and that would reduce TwoSum's error term to 0.
// ONE_SOURCE is that read (P[ONE]), or a private copy of it that the entry point reads once (reduce_tree.wgsl), so
// that the loop over the elements loads no parameter per element.
fn opaque_one() -> f32 { return {ONE_SOURCE}; }

// TwoSum (Knuth): s = fl(a + b) and e with s + e == a + b exactly, whatever the magnitudes of a and b.
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let one = opaque_one();
    let s = (a + b) * one;
    let bb = (s - a) * one;
    let e = (a - (s - bb)) + (b - bb);
    return vec2<f32>(s, e);
}

// A compensated sum is (hi, lo): hi the float32 sum as accumulated, lo the sum of every rounding error made on the
// way, so hi + lo carries about twice float32's precision (the CPU sums FLOAT32 in float64).
fn csum_add(acc: vec2<f32>, v: f32) -> vec2<f32> {
    let t = two_sum(acc.x, v);
    return vec2<f32>(t.x, acc.y + t.y);
}

fn csum_combine(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let t = two_sum(a.x, b.x);
    return vec2<f32>(t.x, (a.y + b.y) + t.y);
}

// The sum rounded once to float32. Once hi is infinite or NaN, lo holds NaN garbage and hi alone is the answer;
// a zero lo leaves hi untouched (so a sum of -0.0 stays -0.0).
fn csum_value(s: vec2<f32>) -> f32 {
    if (!is_finite_f32(s.x) || s.y == 0.0) { return s.x; }
    return s.x + s.y;
}

// sqrt of hi + lo with one Newton step on the residual, so that the driver's sqrt precision does not matter.
fn csum_sqrt(s: vec2<f32>) -> f32 {
    let v = csum_value(s);
    if (!(v > 0.0) || !is_finite_f32(v)) { return sqrt(v); }
    let y = sqrt(v);
    let residual = fma(-y, y, s.x) + s.y;
    return y + residual / (2.0 * y);
}

// (hi + lo) / n, the quotient corrected by its residual for the same reason.
fn csum_divide(s: vec2<f32>, n: f32) -> f32 {
    let v = csum_value(s);
    let q = v / n;
    if (!is_finite_f32(q) || !is_finite_f32(v)) { return q; }
    let residual = fma(-q, n, s.x) + s.y;
    return q + residual / n;
}

// Natural log of a positive, finite float32 to about 1 ulp (WebGPU only promises an absolute 2^-21 near 1, which
// is no accuracy at all for a result near 0): x = m 2^e with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), and
// log(1 + f) = 2 atanh(s), s = f / (2 + f), written as f - (f^2/2 - s (f^2/2 + R(s^2))).
fn log_positive(x_in: f32) -> f32 {
    var x = x_in;
    var e = 0;
    if (x < 1.17549435e-38) {          // subnormal: scale into the normal range first
        x = x * 16777216.0;
        e = -24;
    }
    let bits = bitcast<u32>(x);
    e += i32(bits >> 23u) - 127;
    var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
    if (m > 1.41421356) {
        m = m * 0.5;
        e += 1;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (0.66666666666666667 + z * (0.4 + z * (0.28571428571428571 + z * (0.22222222222222222
        + z * 0.18181818181818182))));
    let half_square = 0.5 * f * f;
    let log1p_f = f - (half_square - s * (half_square + r));
    // ln 2 split so that e * LN2_HI is exact for |e| < 2^8.
    let k = f32(e);
    return k * 0.693145751953125 + (log1p_f + k * 1.428606765330187e-6);
}

// log(hi + lo): NaN below zero, -inf at zero, the infinities and NaN as they are.
fn csum_log(s: vec2<f32>) -> f32 {
    let v = csum_value(s);
    if (is_nan_f32(v) || v < 0.0) { return bitcast<f32>(0x7fc00000u); }
    if (v == 0.0) { return bitcast<f32>(0xff800000u); }
    if (!is_finite_f32(v)) { return v; }
    // log(v + d) ~ log(v) + d / v, with d = (hi + lo) - v, the rounding error of v.
    let d = (s.x - v * opaque_one()) + s.y;
    return log_positive(v) + d / v;
}

// exp(t) for t <= 0, to about 1 ulp: t is clamped at -80 (exp(-80) ~ 2e-35 is invisible next to the maximum's 1,
// and keeps 2^k a normal float32; NaN and -inf clamp there too), then exp(t) = 2^k exp(r), |r| <= ln2/2, with a
// degree-7 Taylor polynomial.
fn exp_negative(t_in: f32) -> f32 {
    let t = select(-80.0, t_in, t_in > -80.0);
    let k = floor(t * 1.4426950408889634 + 0.5);
    let r = (t - k * 0.693145751953125) - k * 1.428606765330187e-6;
    var p = 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    return p * bitcast<f32>(u32(i32(k) + 127) << 23u);
}
