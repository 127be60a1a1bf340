// MVN: exact scaling by powers of two. Each group's statistics are taken on its values times 2^-e, e the exponent
// of its largest finite magnitude, so that the scaled values lie below 2 in magnitude: sums of them and of their
// squared deviations neither overflow (data near 3e38) nor lose their low bits (subnormal data, whose squares
// FLOAT32 cannot hold). The scaling is done on the bits, so it is exact and involves no subnormal arithmetic (an
// adapter that flushes subnormals still reads them right).

// 2^k for k clamped to [-126, 127], from the exponent bits.
fn pow2(k: i32) -> f32 { return bitcast<f32>(u32(clamp(k, -126, 127) + 127) << 23u); }

// v * 2^k for |k| up to 378, in three steps (each factor representable).
fn times_pow2(v: f32, k: i32) -> f32 {
    let a = clamp(k, -126, 127);
    let b = clamp(k - a, -126, 127);
    return ((v * pow2(a)) * pow2(b)) * pow2(k - a - b);
}

// The value with FLOAT32 bits `bits` times 2^-e, exactly where the result is a normal number; results below 2^-126
// (negligible next to the group's largest value, about 1) become zero; infinities and NaN stay as they are.
fn scaled(bits: u32, e: i32) -> f32 {
    if (e == 0) { return bitcast<f32>(bits); }
    let sign = bits & 0x80000000u;
    let field = i32((bits >> 23u) & 0xffu);
    if (field == 255) { return bitcast<f32>(bits); }
    if (field == 0) {
        // Zero or subnormal: m 2^-149 with m < 2^23, which FLOAT32 holds exactly.
        let k = -149 - e;
        if (k < -126) { return bitcast<f32>(sign); }
        return bitcast<f32>(sign | bitcast<u32>(f32(bits & 0x7fffffu) * pow2(k)));
    }
    let f = field - e;
    if (f <= 0) { return bitcast<f32>(sign); }
    if (f >= 255) { return bitcast<f32>(sign | 0x7f800000u); }
    return bitcast<f32>((bits & 0x807fffffu) | (u32(f) << 23u));
}

fn is_finite(bits: u32) -> bool { return (bits & 0x7fffffffu) < 0x7f800000u; }

// floor(log2) of a finite magnitude given by its bits (0 for zero).
fn exponent_of(magnitude: u32) -> i32 {
    if (magnitude >= 0x00800000u) { return i32(magnitude >> 23u) - 127; }
    if (magnitude == 0u) { return 0; }
    return 31 - i32(countLeadingZeros(magnitude)) - 149;
}
