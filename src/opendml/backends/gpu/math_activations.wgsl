// The formula language's activation primitives sigmoid, softplus and gelu (m_sigmoid, m_softplus, m_gelu), over
// math.wgsl (which a shader that uses these includes first). The placeholders are GELU's constants
// (backends/activation_constants.py, the cpu's too), filled by element_wise.py as exact FLOAT32 bits.

// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: subnormal results come out right. NaN stays NaN.
fn m_sigmoid(x: f32) -> f32 {
    let e = m_exp(-abs(x));
    return select(1.0, e, x < 0.0) / (1.0 + e);
}

// ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|): nothing overflows. NaN stays NaN.
fn m_softplus(x: f32) -> f32 {
    return select(select(0.0, x, x > 0.0) + m_log1p(m_exp(-abs(x))), x, m_isnan(x));
}

// 2^k for -126 <= k <= 127, from the exponent bits.
fn m_pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }

// GELU(x) = x Phi(x) = max(x, 0) - |x| erfc(|x| / sqrt 2) / 2: for x < 0 that is x Phi(x) straight from erfc
// (relative accuracy in the tail), for x >= 0 x - x (1 - Phi(x)). The erfc factor comes from the polynomials fitted
// for opendml by tools/fit_gelu.py: |x| erfc(|x| / sqrt 2) / 2 = w 2^z p(r), a = min(|x|, 14.5),
// w = a / (8 / (2 sqrt 2) + a), z = y(w) - a^2 / (2 ln 2) = k + r (k an integer, |r| <= 1/2), y of degree 8 in w,
// p(r) = 2^r / (2 sqrt 2) of degree 5. Past |x| = 14.5 |GELU| is under half FLOAT32's smallest subnormal: x < 0
// gives -0, x > 0 gives x. 2^k (k down to -152) is two factors from exponent bits, the second last, so a subnormal
// result is rounded once. NaN stays NaN.
fn m_gelu(x: f32) -> f32 {
    let a = min(abs(x), {GELU_CLAMP});
    let w = a / ({GELU_OFFSET} + a);
    var z = {Y8};
    z = z * w + {Y7};
    z = z * w + {Y6};
    z = z * w + {Y5};
    z = z * w + {Y4};
    z = z * w + {Y3};
    z = z * w + {Y2};
    z = z * w + {Y1};
    z = z * w + {Y0};
    z = z - ({GELU_HALF_LOG2E} * a) * a;
    let k = round(z);
    let r = z - k;
    let p = {P0} + r * ({P1} + r * ({P2} + r * ({P3} + r * ({P4} + r * {P5}))));
    let ki = i32(k);
    let k1 = ki >> 1u;
    let tail = ((w * p) * m_pow2(k1)) * m_pow2(ki - k1);
    return select(select(x - tail, -tail, x < 0.0), x, m_isnan(x));
}
