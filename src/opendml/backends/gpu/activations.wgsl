// The FLOAT32 elementary functions of the fusable activations (activations.py renders the activation itself).
// Each constant is a placeholder filled from activations.py, as exact FLOAT32 bits. WGSL's exp, tanh and log are
// not used: their accuracy is left to the driver (tanh near 0 and exp(x) - 1 cancel), and these keep the tests'
// few units in the last place on any adapter. Infinities and NaN are told apart by their bits, which no
// floating-point optimization can fold away.

fn act_is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
fn act_is_inf(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u; }
// The sign bit: true for -0 too.
fn act_is_negative(v: f32) -> bool { return (bitcast<u32>(v) >> 31u) != 0u; }
// NaN in, NaN out, also where a formula's comparisons would pick a number.
fn act_keep_nan(v: f32, result: f32) -> f32 { return select(result, v, act_is_nan(v)); }

// 2^k for -126 <= k <= 127, from the exponent bits.
fn act_pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }

// exp(v): v = k ln2 + r, |r| <= ln2 / 2 (ln2 in two parts, k ln2_hi exact), degree-7 Taylor polynomial (relative
// error below 1e-8), times 2^k as two factors 2^(k >> 1) and 2^(k - (k >> 1)), so that results near FLOAT32's
// largest value and subnormal ones come out right (an adapter that flushes subnormals gives 0 there).
fn act_exp(v: f32) -> f32 {
    let c = clamp(v, {EXP_LOW}, {EXP_HIGH});
    let k = floor(c * {LOG2E} + 0.5);
    let r = (c - k * {LN2_HI}) - k * {LN2_LO};
    let p = 1.0 + r * (1.0 + r * ({R2} + r * ({R3} + r * ({R4} + r * ({R5} + r * ({R6} + r * {R7}))))));
    let ki = i32(k);
    let k1 = ki >> 1u;
    let result = (p * act_pow2(k1)) * act_pow2(ki - k1);
    return act_keep_nan(v, select(result, 0.0, v < {EXP_LOW}));
}

// exp(v) - 1 without cancellation near 0: degree-8 Taylor polynomial for |v| < 1/2, exp(v) - 1 beyond.
fn act_expm1(v: f32) -> f32 {
    let small = v * (1.0 + v * ({R2} + v * ({R3} + v * ({R4} + v * ({R5} + v * ({R6} + v * ({R7} + v * {R8})))))));
    return select(act_exp(v) - 1.0, small, abs(v) < 0.5);
}

// log(1 + u) for 0 <= u <= 1 as 2 atanh(s): s = u / (2 + u) up to u = sqrt2 - 1, beyond it ln 2 + 2 atanh(s) with
// s = (u - 1) / (u + 3) (that is, for (1 + u) / 2), so |s| < 0.18 (series to s^11) and 1 + u is never formed: an
// optimizer may rewrite (1 + u) - 1 as u, which would lose what rounding 1 + u dropped.
fn act_log1p_unit(u: f32) -> f32 {
    let big = u > {SQRT2_MINUS_1};
    let s = select(u / (2.0 + u), (u - 1.0) / (u + 3.0), big);
    let s2 = s * s;
    let series = 1.0 + s2 * ({O3} + s2 * ({O5} + s2 * ({O7} + s2 * ({O9} + s2 * {O11}))));
    return 2.0 * s * series + select(0.0, {LN2}, big);
}

// tanh z = e / (e + 2) with e = expm1(2 |z|), z's sign (-0 gives -0); |z| beyond 10 gives 1 (tanh 10 rounds to 1).
fn act_tanh(z: f32) -> f32 {
    let a = min(abs(z), 10.0);
    let e = act_expm1(2.0 * a);
    let t = e / (e + 2.0);
    return act_keep_nan(z, select(t, -t, act_is_negative(z)));
}
