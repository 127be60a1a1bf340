// MVN output: an element normalized with its group's record (e and k, mean_hi, mean_lo, r; see finish), Scale,
// the power of two 2^k, Bias (Scale's element s and Bias's element b; absent ones are skipped), the fused
// activation; the caller rounds it once to the output's type. HAS_SCALE, HAS_BIAS are u32 expressions.
// `exponents` is the record's first word (e and k, two 16-bit halves; record_e gives e), y the element scaled
// (scaled(x_bits, e), which the caller may hold already).
fn record_e(exponents: u32) -> i32 { return bitcast<i32>(exponents << 16u) >> 16u; }

fn normalize(x_bits: u32, y: f32, exponents: u32, mean_hi: f32, mean_lo: f32, r: f32, s: u32, b: u32) -> f32 {
    let e = record_e(exponents);
    var k = bitcast<i32>(exponents) >> 16u;
    var v = ((y - mean_hi) - mean_lo) * r;
    let normalized = v;
    var factor = 1.0;
    // Whether v's exact value is finite (the FLOAT32 one may have overflowed): then an infinite Bias is the sum.
    var finite = is_finite(x_bits) && is_finite(bitcast<u32>(mean_hi)) && is_finite(bitcast<u32>(r));
    if ({HAS_SCALE} != 0u) {
        // Scale's own power of two joins 2^k: v * Scale rounded once, with no overflow or underflow on the way
        // that the result does not have (a subnormal Scale times a large deviation, say).
        let bits = bitcast<u32>(load_s(s));
        let quick = v * bitcast<f32>(bits);
        if (k == 0 && min(abs(v), abs(quick)) >= bitcast<f32>(0x01000000u) && is_finite(bitcast<u32>(quick))) {
            // v, the product and so every step below are normal numbers (at least 2^-125) and finite: the steps
            // below round the product once, exactly as this one multiplication does.
            factor = bitcast<f32>(bits);
            v = quick;
        } else if (is_finite(bits)) {
            let exponent = exponent_of(bits & 0x7fffffffu);
            factor = scaled(bits, exponent);
            v = v * factor;
            k += exponent;
        } else {
            // An infinite Scale makes the result an infinity of the deviation's sign (NaN for a zero deviation).
            // A deviation negligible next to the group's largest value is 0 among the scaled values: its sign
            // then comes from the data's own scale.
            if (v == 0.0) {
                let deviation = (bitcast<f32>(x_bits) - times_pow2(mean_hi, e)) - times_pow2(mean_lo, e);
                v = select(deviation, deviation * r, !is_finite(bitcast<u32>(r)));
            }
            v = v * bitcast<f32>(bits);
            finite = false;
        }
    }
    if (k != 0) { v = times_pow2(v, k); }
    if ({HAS_BIAS} != 0u) {
        let c = load_b(b);
        let c_bits = bitcast<u32>(c);
        if (finite && is_finite(c_bits) && !is_finite(bitcast<u32>(v))) {
            // normalized * Scale overflowed, the sum may not: one fused multiply-add (as on the cpu), a quarter of
            // the way (the exact product is at least 2^128, so normalized 2^(k-2) and Bias / 4 are exact, and even
            // an unfused fma's product stays below 2^127 where the sum is finite), then times 4.
            v = times_pow2(fma(times_pow2(normalized, k - 2), factor, 0.25 * c), 2);
        } else {
            v = select(v + c, c, finite && (c_bits & 0x7fffffffu) == 0x7f800000u);
        }
    }
    return activation(v);
}
