// GELU(x) = x Phi(x) = max(x, 0) - |x| erfc(|x| / sqrt 2) / 2: for x < 0 that is x Phi(x) straight from erfc
// (relative accuracy in the tail), for x >= 0 x - x (1 - Phi(x)). WGSL has no erf; the erfc factor comes from the
// polynomials fitted for opendml by tools/fit_gelu.py (the CPU backend's, imported by activations.py):
// |x| erfc(|x| / sqrt 2) / 2 = w 2^z p(r), a = min(|x|, 13.2), w = a / (8 / (2 sqrt 2) + a),
// z = y(w) - a^2 / (2 ln 2) = k + r (k an integer, |r| <= 1/2), y of degree 8 in w, p(r) = 2^r / (2 sqrt 2) of
// degree 5. Past |x| = 13.2 |GELU| is below FLOAT32's smallest normal, and z stays above -125.3, so 2^k comes from
// exponent bits (k >= -126) with no test. NaN stays NaN; +inf gives inf, -inf a value below 2^-126 (the exact 0
// within FLOAT32's smallest normal).
fn act_gelu(x: f32) -> f32 {
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
    let two_k = bitcast<f32>(u32(i32(k) + 127) << 23u);
    let positive = select(x, 0.0, x < 0.0);
    return act_keep_nan(x, positive - w * (p * two_k));
}
