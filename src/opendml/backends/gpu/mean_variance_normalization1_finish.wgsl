// MVN: a group's statistics -> its record for the output pass (4 words at FINAL + 4 g): e and k (two 16-bit
// halves), mean_hi, mean_lo, r, so that the output is ((x 2^-e - mean_hi) - mean_lo) * r * Scale * 2^k + Bias:
// NormalizeVariance TRUE: r is the rstd of the scaled values and k 0 (or, where that rstd would be subnormal, r the
// data's own rstd and k = e); FALSE: r 1 and k = e. The power of two comes last (the output pass applies it with
// Scale's exponent), so that nothing overflows or underflows where the result does not.
// In: the statistics of the values times 2^-e: mean = mean_hi + mean_lo (mean_lo a small correction), M2 (sum of
// squared deviations), the count, and flags of non-finite values (1 NaN, 2 +inf, 4 -inf), which decide the mean as
// the float64 sum would (NaN, or an infinity), and make the variance NaN.
fn finish(g: u32, e: i32, mean_hi_in: f32, mean_lo_in: f32, m2_in: f32, flags: u32, count: f32) {
    let inf = bitcast<f32>(0x7f800000u);
    let nan = bitcast<f32>(0x7fc00000u);
    var mean_hi = mean_hi_in;
    var mean_lo = mean_lo_in;
    var m2 = m2_in;
    if (flags != 0u) {
        mean_lo = 0.0;
        m2 = nan;
        if ((flags & 1u) != 0u || (flags & 6u) == 6u) { mean_hi = nan; }
        else if ((flags & 2u) != 0u) { mean_hi = inf; }
        else { mean_hi = -inf; }
    }
    let base = {FINAL} + 4u * g;
    stats[base + 1u] = bitcast<u32>(mean_hi);
    stats[base + 2u] = bitcast<u32>(mean_lo);
    if ({NORMALIZE} == 0u) {
        stats[base] = (bitcast<u32>(e) & 0xffffu) | (bitcast<u32>(e) << 16u);
        stats[base + 3u] = bitcast<u32>(1.0);
        return;
    }
    // rstd of the scaled values: 1 / sqrt(M2 / n + Epsilon 2^-2e), refined by a Newton step (the adapter's
    // inverseSqrt may be an approximation); 0 + 0 gives inf (Epsilon 0 on a constant group: 0 * inf = NaN, as DML).
    // Where Epsilon 2^-2e is huge (tiny data: the variance is negligible next to Epsilon), the data's own
    // 1 / sqrt(variance + Epsilon), and k = e.
    let epsilon = bitcast<f32>(P[{EPS}u]);
    let scaled_epsilon = times_pow2(epsilon, -2 * e);
    var s = m2 / count + scaled_epsilon;
    var post = 0;
    if (scaled_epsilon > 1.8446744e19) {
        s = times_pow2(m2 / count, 2 * e) + epsilon;
        post = e;
    }
    var r: f32;
    if (s == 0.0) {
        r = inf;
    } else if (s > 0.0) {
        r = inverseSqrt(s);
        if (r < inf) { r = fma(0.5 * r, fma(-(s * r), r, 1.0), r); }
    } else {
        r = nan;    // a NaN variance, or variance + Epsilon < 0 (a negative Epsilon)
    }
    // With Epsilon > 0 rstd is finite (Epsilon 2^-2e may have underflowed): a deviation of 0 gives 0, not NaN.
    r = select(r, 3.4028234e38, epsilon > 0.0 && r > 3.4028234e38);
    stats[base] = (bitcast<u32>(e) & 0xffffu) | (bitcast<u32>(post) << 16u);
    stats[base + 3u] = bitcast<u32>(r);
}
