// The element-wise engine's FLOAT32 math library (issue 26): one function `m_<primitive>` per F primitive of the
// formula language, each within a few units in the last place of the float64 result rounded to float32 over the whole
// float32 domain (subnormal inputs and results, huge arguments of sin/cos/tan, C99's special values). No placeholders.
//
// Why it avoids WGSL's built-ins: their accuracy is left to the driver (sin, exp, log, pow, division, sqrt), some
// devices flush subnormal operands and results to zero, and no shader may rely on exactness tricks the compiler can
// see through: Mesa folds (a + b) - a to b and lowers fma to a multiply and an add (measured on lavapipe). So:
// - special values are told apart by their bits; a result that may be subnormal is assembled from its bits
//   (m_scaled, m_ldexp), and a subnormal input is normalized from its bits (m_norm);
// - products that must be exact split their factors by masking the low 12 significand bits (m_hi12), never by
//   Veltkamp's splitting or fma; floor, ceil, trunc, the roundings, fmod and the range reduction of sin/cos/tan
//   (Payne-Hanek, 2/pi to 320 bits) are integer arithmetic;
// - sqrt and division are refined by one correction step whose residual is computed exactly, so that the driver's
//   sqrt and division need only be roughly right.
// Polynomial coefficients were fitted in float64 (weighted least squares, then rounded to float32) for this file.

fn m_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn m_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
// The canonical quiet NaN.
fn m_nan() -> f32 { return bitcast<f32>(0x7fc00000u); }
// |x| with the sign bit `sign` (0 or 0x80000000).
fn m_signed(x: f32, sign: u32) -> f32 { return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | sign); }
// x with its low 12 significand bits cleared: the product of two such values is exact, and x - m_hi12(x) is exact.
fn m_hi12(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }

// m * 2^s (m an unsigned integer, s any exponent) rounded once to the nearest float32, ties to even, with the sign
// bit `sign`: normal, subnormal, zero or infinite, built from bits.
fn m_scaled(m: u32, s: i32, sign: u32) -> f32 {
    if (m == 0u) { return bitcast<f32>(sign); }
    let lead = 31 - i32(countLeadingZeros(m));            // m's leading bit
    let q = max(lead + s - 23, -149);                    // the result's unit in the last place is 2^q
    let d = q - s;                                       // m's bits below the result's last place
    var r = 0u;
    if (d <= 0) {
        r = m << u32(-d);
    } else if (d <= 31) {
        let kept = m >> u32(d);
        let rest = m & ((1u << u32(d)) - 1u);
        let half = 1u << u32(d - 1);
        r = kept + u32(rest > half || (rest == half && (kept & 1u) == 1u));
    } else if (d == 32) {
        r = u32(m > 0x80000000u);
    }
    if (q + 149 >= 254) { return bitcast<f32>(sign | 0x7f800000u); }
    // r < 2^24 (or 2^24 after rounding up): the exponent field follows from q, and a carry out of the significand
    // moves into it; r < 2^23 with q = -149 is a subnormal.
    return bitcast<f32>(sign | min((u32(q + 149) << 23u) + r, 0x7f800000u));
}

// y * 2^k for a normal or zero y, rounded once (subnormal results included).
fn m_ldexp(y: f32, k: i32) -> f32 {
    let b = bitcast<u32>(y);
    let a = b & 0x7fffffffu;
    if (a == 0u) { return y; }
    return m_scaled((a & 0x7fffffu) | 0x800000u, i32(a >> 23u) - 150 + k, b & 0x80000000u);
}

// |x| = m 2^e with m in [1, 2), for the bits `a` of a finite nonzero |x| (subnormals normalized from their bits).
struct MNorm { m: f32, e: i32 }
fn m_norm(a: u32) -> MNorm {
    if (a < 0x800000u) {
        let shift = countLeadingZeros(a) - 8u;
        return MNorm(bitcast<f32>(((a << shift) & 0x7fffffu) | 0x3f800000u), -126 - i32(shift));
    }
    return MNorm(bitcast<f32>((a & 0x7fffffu) | 0x3f800000u), i32(a >> 23u) - 127);
}

// a - p * q exactly, for p * q close to a (Dekker's product with masked halves).
fn m_residual(a: f32, p: f32, q: f32) -> f32 {
    let ph = m_hi12(p);
    let pl = p - ph;
    let qh = m_hi12(q);
    let ql = q - qh;
    return (((a - ph * qh) - ph * ql) - pl * qh) - pl * ql;
}

// a / b for normal a, b whose quotient and residual stay normal: the driver's quotient plus one correction.
fn m_div(a: f32, b: f32) -> f32 {
    let q = a / b;
    return q + m_residual(a, q, b) / b;
}

// -- sqrt -------------------------------------------------------------------------------------------------------

fn m_sqrt(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a == 0u || b == 0x7f800000u || a > 0x7f800000u) { return x; }
    if (b > 0x80000000u) { return m_nan(); }
    let n = m_norm(a);
    let odd = (n.e & 1) != 0;
    let m = select(n.m, n.m * 2.0, odd);                 // x = m 2^(2h), m in [1, 4)
    let y = sqrt(m);
    return m_ldexp(y + m_residual(m, y, y) * (0.5 / y), (n.e - select(0, 1, odd)) / 2);
}

// -- exp and friends ------------------------------------------------------------------------------------------

const M_LN2_HI: f32 = 0.693145751953125;                 // 15 bits: k * M_LN2_HI is exact for |k| < 512
const M_LN2_LO: f32 = 1.428606765330187e-06;
const M_LOG2E: f32 = 1.4426950216293335;

// exp(r) - 1 for |r| <= 0.7 (Taylor to r^11, truncation below 3e-11).
fn m_expm1_poly(r: f32) -> f32 {
    var p = 2.5052107943679403e-08;
    p = p * r + 2.755731998149713e-07;
    p = p * r + 2.7557318844628753e-06;
    p = p * r + 2.4801587642286904e-05;
    p = p * r + 0.00019841270113829523;
    p = p * r + 0.0013888889225199819;
    p = p * r + 0.008333333767950535;
    p = p * r + 0.0416666679084301;
    p = p * r + 0.1666666716337204;
    p = p * r + 0.5;
    return r + (r * r) * p;
}

// exp(x) = p 2^k for finite |x| < 128: (p in [0.7, 1.42], k), k an integer as f32.
fn m_exp_parts(x: f32) -> vec2<f32> {
    let k = floor(x * M_LOG2E + 0.5);
    let r = (x - k * M_LN2_HI) - k * M_LN2_LO;
    return vec2<f32>(1.0 + m_expm1_poly(r), k);
}

fn m_exp(x: f32) -> f32 {
    if (m_isnan(x)) { return x; }
    if (x > 89.0) { return bitcast<f32>(0x7f800000u); }
    if (x < -104.0) { return 0.0; }
    let e = m_exp_parts(x);
    let k = i32(e.y);
    // e.x is in [0.7, 1.42]: for these k, e.x 2^k is a normal float32, exactly the product by the power of two
    if (k >= -125 && k <= 127) { return e.x * bitcast<f32>(u32(k + 127) << 23u); }
    return m_ldexp(e.x, k);
}

fn m_expm1(x: f32) -> f32 {
    let a = bitcast<u32>(x) & 0x7fffffffu;
    if (a > 0x7f800000u || a < 0x33000000u) { return x; }        // NaN, |x| < 2^-25 (subnormals, zeros)
    if (x > 89.0) { return bitcast<f32>(0x7f800000u); }
    if (x < -17.5) { return -1.0; }
    if (a < 0x3f333333u) { return m_expm1_poly(x); }              // |x| < 0.7
    let k = floor(x * M_LOG2E + 0.5);
    let r = (x - k * M_LN2_HI) - k * M_LN2_LO;
    let em = m_expm1_poly(r);
    let ki = i32(k);
    if (ki > 24) { return m_ldexp(1.0 + em, ki); }
    let two = bitcast<f32>(u32(ki + 127) << 23u);
    return (two - 1.0) + two * em;                               // 2^k - 1 is exact for -25 < k <= 24
}

// e^|x| / 2 for 10 <= |x|: the halving in the exponent, so that it never overflows early.
fn m_exp_half(a: f32) -> f32 {
    if (a > 90.0) { return bitcast<f32>(0x7f800000u); }
    let e = m_exp_parts(a);
    return m_ldexp(e.x, i32(e.y) - 1);
}

fn m_sinh(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a >= 0x7f800000u || a < 0x39800000u) { return x; }       // NaN, infinities, |x| < 2^-12
    let ax = bitcast<f32>(a);
    var r: f32;
    if (ax < 1.0) {
        let t = ax * ax;                                         // Taylor to x^13
        let p = 0.1666666716337204 + t * (0.008333333767950535 + t * (0.00019841270113829523 + t * (2.755731998149713e-06
            + t * (2.505210838544172e-08 + t * 1.6059043836821613e-10))));
        r = ax + ax * (t * p);
    } else if (ax < 10.0) {
        let t = m_expm1(ax);
        r = 0.5 * (t + m_div(t, t + 1.0));                       // (e - 1/e) / 2 with e = t + 1
    } else {
        r = m_exp_half(ax);
    }
    return m_signed(r, b & 0x80000000u);
}

fn m_cosh(x: f32) -> f32 {
    let a = bitcast<u32>(x) & 0x7fffffffu;
    if (a > 0x7f800000u) { return x; }
    let ax = bitcast<f32>(a);
    if (a < 0x39800000u) { return 1.0; }
    if (ax < 0.35) {
        let t = m_expm1(ax);
        return 1.0 + m_div(t * t, 2.0 * (1.0 + t));
    }
    if (ax < 10.0) {
        let e = m_exp(ax);
        return 0.5 * e + m_div(0.5, e);
    }
    return m_exp_half(ax);
}

fn m_tanh(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u || a < 0x39800000u) { return x; }
    let ax = bitcast<f32>(a);
    var r = 1.0;
    if (ax < 0.55) {
        let t = ax * ax;
        var p = -0.000914963660761714;
        p = p * t + 0.003353441832587123;
        p = p * t - 0.008805929683148861;
        p = p * t + 0.021861771121621132;
        p = p * t - 0.05396769195795059;
        p = p * t + 0.13333331048488617;
        p = p * t - 0.3333333432674408;
        r = ax + ax * (t * p);
    } else if (ax < 9.5) {
        let e = m_expm1(2.0 * ax);
        r = m_div(e, e + 2.0);
    }
    return m_signed(r, b & 0x80000000u);
}

// -- logarithms -------------------------------------------------------------------------------------------------

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: 2 atanh(s), s = f / (2 + f), written as
// f - (f^2/2 - s (f^2/2 + R(s^2))) so that the quotient's rounding is damped.
fn m_log1p_kernel(f: f32) -> f32 {
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (0.6666666666666667 + z * (0.4 + z * (0.2857142857142857 + z * (0.2222222222222222
        + z * (0.18181818181818182 + z * 0.15384615384615385)))));
    let half_square = 0.5 * f * f;
    return f - (half_square - s * (half_square + r));
}

// log(m 2^e) for m in [1, 2).
fn m_log_norm(m_in: f32, e_in: i32) -> f32 {
    let big = m_in > 1.41421356;
    let f = select(m_in, m_in * 0.5, big) - 1.0;
    let k = f32(e_in + select(0, 1, big));
    return k * M_LN2_HI + (m_log1p_kernel(f) + k * M_LN2_LO);
}

fn m_log(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u || b == 0x7f800000u) { return x; }
    if (a == 0u) { return bitcast<f32>(0xff800000u); }
    if (b > 0x80000000u) { return m_nan(); }
    let n = m_norm(a);
    return m_log_norm(n.m, n.e);
}

// log(1 + x); 1 + x is formed exactly as an integer times a power of two.
fn m_log1p(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u || b == 0x7f800000u || a < 0x33800000u) { return x; }  // NaN, +inf, |x| < 2^-24
    if (b == 0xbf800000u) { return bitcast<f32>(0xff800000u); }
    if (b > 0xbf800000u) { return m_nan(); }
    if (x > -0.29289321 && x < 0.41421356) { return m_log1p_kernel(x); }
    let s = i32(a >> 23u) - 150;                                  // |x| = sig 2^s, |x| > 0.29
    let sig = (a & 0x7fffffu) | 0x800000u;
    if (s > 0) {
        let n = m_norm(a);                                       // x >= 2^24: log(1 + x) rounds as log(x)
        return m_log_norm(n.m, n.e);
    }
    let one = 1u << u32(-s);
    let total = select(sig + one, one - sig, b > 0x80000000u);  // 1 + x = total 2^s, total < 2^26
    let lead = 31u - countLeadingZeros(total);
    let drop = select(0u, lead - 23u, lead > 23u);
    let high = (total >> drop) << drop;
    let hf = f32(high);
    let n = m_norm(bitcast<u32>(hf));
    return m_log_norm(n.m, n.e + s) + f32(total - high) / hf;
}

// -- trigonometry -----------------------------------------------------------------------------------------------

// sin, cos and tan of r + lo for |r| <= pi/4, lo below r's last place (the reduction's next bits): Taylor to r^9
// and r^10; the sums that round are written so that the rounded part is small. tan = (r + a) / (1 - b) (a, b the
// tails of sin and cos) = r + (a + r b) / (1 - b); cot = 1 / tan with a corrected quotient.
fn m_sin_tail(r: f32, z: f32) -> f32 {
    let p = -0.1666666716337204 + z * (0.008333333767950535 + z * (-0.00019841270113829523
        + z * 2.755731998149713e-06));
    return r * (z * p);
}
fn m_cos_tail(z: f32) -> f32 {
    let p = 0.0416666679084301 + z * (-0.0013888889225199819 + z * (2.4801587642286904e-05
        + z * -2.755731998149713e-07));
    return 0.5 * z - (z * z) * p;
}
fn m_sin_kernel(r: f32, lo: f32) -> f32 {
    let z = r * r;
    return r + (m_sin_tail(r, z) + lo * (1.0 - 0.5 * z));
}
fn m_cos_kernel(r: f32, lo: f32) -> f32 {
    return 1.0 - (m_cos_tail(r * r) + r * lo);
}
fn m_tan_kernel(r: f32, lo: f32, cotangent: bool) -> f32 {
    let z = r * r;
    let b = m_cos_tail(z);
    let w = (m_sin_tail(r, z) + r * b) / (1.0 - b) + lo * (1.0 + z);   // tan = r + w
    if (!cotangent) { return r + w; }
    let y = 1.0 / (r + w);
    return y + y * (m_residual(1.0, y, r) - y * w);
}

// 2/pi to 320 bits after two zero words (so that a window may start before its first bit), and pi/2 * 2^63.
var<private> M_TWO_OVER_PI: array<u32, 12> = array<u32, 12>(0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
    0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u);
const M_PIO2_FIXED_HI: u32 = 0xc90fdaa2u;
const M_PIO2_FIXED_LO: u32 = 0x2168c234u;

// The 64-bit product of two u32 values: (low word, high word).
fn m_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

// 32 bits of the padded 2/pi table from bit `at`.
fn m_two_over_pi_bits(at: u32) -> u32 {
    let word = at >> 5u;
    let shift = at & 31u;
    let high = M_TWO_OVER_PI[word] << shift;
    return select(high | (M_TWO_OVER_PI[word + 1u] >> (32u - shift)), high, shift == 0u);
}

// |x| = q pi/2 + r, |r| <= pi/4, for the bits `a` of a finite |x| > pi/4 (Payne-Hanek): |x| = sig 2^s times 96 bits
// of 2/pi from the first that can reach the units' two bits, in integers; the fraction (64 bits) times pi/2 in
// fixed point, rounded once to float32. Returns (r, the next bits of the reduced argument, q mod 4 as f32).
fn m_reduce(a: u32) -> vec3<f32> {
    let sig = (a & 0x7fffffu) | 0x800000u;
    let start = u32(i32(a >> 23u) - 150 + 62);                   // s - 2 + 64 (the padding)
    let w2 = m_two_over_pi_bits(start);
    let w1 = m_two_over_pi_bits(start + 32u);
    let w0 = m_two_over_pi_bits(start + 64u);
    let p0 = m_mul_wide(sig, w0);
    let p1 = m_mul_wide(sig, w1);
    let p2 = m_mul_wide(sig, w2);
    // The product's bits 94 and 95 are the units' bits of |x| 2/pi; its bits below 94 the fraction.
    let word1 = p0.y + p1.x;
    let word2 = p1.y + p2.x + u32(word1 < p0.y);
    var q = word2 >> 30u;
    var f1 = (word2 << 2u) | (word1 >> 30u);
    var f0 = (word1 << 2u) | (p0.x >> 30u);
    var sign = 0u;
    if (f1 >= 0x80000000u) {                                    // fraction >= 1/2: r = (fraction - 1) pi/2
        q = q + 1u;
        sign = 0x80000000u;
        f1 = ~f1 + u32(f0 == 0u);
        f0 = ~f0 + 1u;
    }
    // (f1, f0) 2^-64 times pi/2 (2^-63 fixed): the product's high 64 bits are r 2^63.
    let l0 = m_mul_wide(f0, M_PIO2_FIXED_LO);
    let l1 = m_mul_wide(f0, M_PIO2_FIXED_HI);
    let l2 = m_mul_wide(f1, M_PIO2_FIXED_LO);
    let l3 = m_mul_wide(f1, M_PIO2_FIXED_HI);
    let c1a = l0.y + l1.x;
    let c1b = c1a + l2.x;
    let carry = u32(c1a < l0.y) + u32(c1b < c1a);
    let c2a = l1.y + l2.y;
    let c2b = c2a + l3.x;
    let c2 = c2b + carry;
    let carry2 = u32(c2a < l1.y) + u32(c2b < c2a) + u32(c2 < c2b);
    var h1 = l3.y + carry2;
    var h0 = c2;
    var scale = 0u;
    if (h1 == 0u) {
        h1 = h0;
        h0 = 0u;
        scale = 32u;
    }
    let lz = countLeadingZeros(h1);
    let top = select((h1 << lz) | (h0 >> (32u - lz)), h1, lz == 0u);
    let sticky = u32((h0 << lz) != 0u);
    // r = top 2^(31 - lz - scale - 63): keep 24 bits, round to nearest even.
    let kept = top >> 8u;
    let rest = (top & 0xffu) * 2u + sticky;                       // twice the rest, plus sticky
    let up = rest > 0x100u || (rest == 0x100u && (kept & 1u) == 1u);
    let bits = (u32(126 - i32(lz + scale)) << 23u) + kept + u32(up);
    let unit = bitcast<f32>(u32(96 - i32(lz + scale)) << 23u);  // 2^(-31 - lz - scale): top's last place
    let lo = (f32(top & 0xffu) - select(0.0, 256.0, up)) * unit;
    return vec3<f32>(bitcast<f32>(bits | sign), m_signed(lo, sign ^ (bitcast<u32>(lo) & 0x80000000u)), f32(q & 3u));
}

// (r, lo, quadrant) of x's absolute value `a` (finite): |x| itself below pi/4.
fn m_quadrant(a: u32) -> vec3<f32> {
    if (a <= 0x3f490fdbu) { return vec3<f32>(bitcast<f32>(a), 0.0, 0.0); }
    return m_reduce(a);
}

fn m_sin(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a < 0x39800000u) { return x; }                           // |x| < 2^-12: sin x rounds to x
    if (a >= 0x7f800000u) { return m_nan(); }
    let rq = m_quadrant(a);
    let q = u32(rq.z);
    let v = select(m_sin_kernel(rq.x, rq.y), m_cos_kernel(rq.x, rq.y), (q & 1u) == 1u);
    return bitcast<f32>(bitcast<u32>(v) ^ (b & 0x80000000u) ^ select(0u, 0x80000000u, q >= 2u));
}

fn m_cos(x: f32) -> f32 {
    let a = bitcast<u32>(x) & 0x7fffffffu;
    if (a < 0x39800000u) { return 1.0; }
    if (a >= 0x7f800000u) { return m_nan(); }
    let rq = m_quadrant(a);
    let q = u32(rq.z);
    let v = select(m_cos_kernel(rq.x, rq.y), m_sin_kernel(rq.x, rq.y), (q & 1u) == 1u);
    return bitcast<f32>(bitcast<u32>(v) ^ select(0u, 0x80000000u, q == 1u || q == 2u));
}

fn m_tan(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a < 0x39800000u) { return x; }
    if (a >= 0x7f800000u) { return m_nan(); }
    let rq = m_quadrant(a);
    let odd = (u32(rq.z) & 1u) == 1u;
    let v = m_tan_kernel(rq.x, rq.y, odd);
    return bitcast<f32>(bitcast<u32>(v) ^ (b & 0x80000000u) ^ select(0u, 0x80000000u, odd));
}

// -- inverse trigonometry ----------------------------------------------------------------------------------------

// asin(s) = s + s t R(t), t = s^2 <= 1/4: R(t).
fn m_asin_r(t: f32) -> f32 {
    return 0.16666659712791443 + t * (0.07500503957271576 + t * (0.04451726749539375 + t * (0.03180402144789696
        + t * (0.014455058611929417 + t * 0.037491168826818466))));
}

const M_PIO2_HI: f32 = 1.5707963705062866;
const M_PIO2_LO: f32 = -4.371138828673793e-08;
const M_PIO4_HI: f32 = 0.7853981852531433;
const M_PI_HI: f32 = 3.1415927410125732;

fn m_asin(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a < 0x39800000u || a > 0x7f800000u) { return x; }
    if (a > 0x3f800000u) { return m_nan(); }
    let ax = bitcast<f32>(a);
    var r = M_PIO2_HI;
    if (ax < 0.5) {
        let t = ax * ax;
        r = ax + ax * (t * m_asin_r(t));
    } else if (ax < 1.0) {
        // pi/2 - 2 asin(sqrt(t)), t = (1 - |x|) / 2, sqrt(t) = sh + c with sh's low bits masked.
        let t = (1.0 - ax) * 0.5;
        let s = m_sqrt(t);
        let sh = m_hi12(s);
        let c = (t - sh * sh) / (s + sh);
        let p = 2.0 * s * (t * m_asin_r(t)) - (M_PIO2_LO - 2.0 * c);
        r = M_PIO4_HI - (p - (M_PIO4_HI - 2.0 * sh));
    }
    return m_signed(r, b & 0x80000000u);
}

fn m_acos(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) { return x; }
    if (a > 0x3f800000u) { return m_nan(); }
    if (b == 0x3f800000u) { return 0.0; }
    if (b == 0xbf800000u) { return M_PI_HI; }
    if (a < 0x3f000000u) {
        let t = x * x;
        return M_PIO2_HI - (x - (M_PIO2_LO - x * (t * m_asin_r(t))));
    }
    if (b > 0x80000000u) {
        let t = (1.0 + x) * 0.5;
        let s = m_sqrt(t);
        return M_PI_HI - 2.0 * (s + (s * (t * m_asin_r(t)) - M_PIO2_LO));
    }
    let t = (1.0 - x) * 0.5;
    let s = m_sqrt(t);
    let sh = m_hi12(s);
    let c = (t - sh * sh) / (s + sh);
    return 2.0 * (sh + (s * (t * m_asin_r(t)) + c));
}

// atan(a) for a >= 0 (+inf included, NaN excluded): the argument reduced against 1/2, 1, 3/2 or infinity so that
// |t| < 7/16, then atan(t) = t + t z R(z), z = t^2.
fn m_atan_positive(ax: f32) -> f32 {
    let a = bitcast<u32>(ax);
    if (a >= 0x4c800000u) { return M_PIO2_HI; }                   // a >= 2^26
    if (a < 0x39800000u) { return ax; }
    var t = ax;
    var hi = 0.0;
    var lo = 0.0;
    if (ax >= 0.4375) {
        if (ax < 0.6875) {
            t = (2.0 * ax - 1.0) / (2.0 + ax);
            hi = 0.46364760398864746;
            lo = 5.01215868808913e-09;
        } else if (ax < 1.1875) {
            t = (ax - 1.0) / (ax + 1.0);
            hi = 0.7853981852531433;
            lo = -2.1855694143368964e-08;
        } else if (ax < 2.4375) {
            t = (ax - 1.5) / (1.0 + 1.5 * ax);
            hi = 0.9827937483787537;
            lo = -2.5131424052915463e-08;
        } else {
            t = -1.0 / ax;
            hi = M_PIO2_HI;
            lo = M_PIO2_LO;
        }
    }
    let z = t * t;
    let p = -0.3333333134651184 + z * (0.1999983936548233 + z * (-0.1428019255399704 + z * (0.11022567003965378
        + z * (-0.08354658633470535 + z * 0.04496851563453674))));
    return hi + ((t * (z * p) + lo) + t);
}

fn m_atan(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) { return x; }
    return m_signed(m_atan_positive(bitcast<f32>(b & 0x7fffffffu)), b & 0x80000000u);
}

// atan2(y, x) with C99's special values.
fn m_atan2(y: f32, x: f32) -> f32 {
    let by = bitcast<u32>(y);
    let bx = bitcast<u32>(x);
    let ay = by & 0x7fffffffu;
    let ax = bx & 0x7fffffffu;
    let sy = by & 0x80000000u;
    if (ay > 0x7f800000u || ax > 0x7f800000u) { return m_nan(); }
    let x_negative = bx >= 0x80000000u;
    var z: f32;                                                   // atan(|y| / |x|) (inf/inf: pi/4)
    if (ay == 0u) {
        z = 0.0;
    } else if (ax == 0u) {
        z = M_PIO2_HI;
    } else if (ay == 0x7f800000u) {
        z = select(M_PIO2_HI, M_PIO4_HI, ax == 0x7f800000u);
        if (ax == 0x7f800000u && x_negative) { return m_signed(2.3561944961547852, sy); }
    } else if (ax == 0x7f800000u) {
        z = 0.0;
    } else {
        let ny = m_norm(ay);
        let nx = m_norm(ax);
        z = m_atan_positive(m_ldexp(m_div(ny.m, nx.m), ny.e - nx.e));
    }
    if (x_negative) { z = M_PI_HI - (z - 2.0 * M_PIO2_LO); }
    return m_signed(z, sy);
}

// -- inverse hyperbolic functions ---------------------------------------------------------------------------------

fn m_asinh(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a < 0x39800000u || a >= 0x7f800000u) { return x; }
    let ax = bitcast<f32>(a);
    var r: f32;
    if (ax <= 0.5) {
        let t = ax * ax;
        var p = -0.006570376455783844;
        p = p * t + 0.014832708984613419;
        p = p * t - 0.02188904769718647;
        p = p * t + 0.030329259112477303;
        p = p * t - 0.04463972896337509;
        p = p * t + 0.07499991357326508;
        p = p * t - 0.1666666716337204;
        r = ax + ax * (t * p);
    } else if (ax < 2.0) {
        let t = ax * ax;
        r = m_log1p(ax + m_div(t, 1.0 + m_sqrt(1.0 + t)));
    } else if (ax < 4096.0) {
        r = m_log(2.0 * ax + 1.0 / (m_sqrt(ax * ax + 1.0) + ax));
    } else {
        let n = m_norm(a);
        r = m_log_norm(n.m, n.e + 1);                            // log(2 |x|)
    }
    return m_signed(r, b & 0x80000000u);
}

fn m_acosh(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u || b == 0x7f800000u) { return x; }
    if (b < 0x3f800000u || b >= 0x80000000u) { return m_nan(); }
    if (x < 2.0) {
        let t = x - 1.0;
        return m_log1p(t + m_sqrt(2.0 * t + t * t));
    }
    if (x < 4096.0) { return m_log(2.0 * x - 1.0 / (x + m_sqrt(x * x - 1.0))); }
    let n = m_norm(b);
    return m_log_norm(n.m, n.e + 1);
}

fn m_atanh(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a < 0x39800000u || a > 0x7f800000u) { return x; }
    if (a > 0x3f800000u) { return m_nan(); }
    if (a == 0x3f800000u) { return bitcast<f32>(0x7f800000u | (b & 0x80000000u)); }
    let ax = bitcast<f32>(a);
    var r: f32;
    if (ax <= 0.5) {
        let t = ax * ax;
        var p = 0.17599663138389587;
        p = p * t + 0.02446434274315834;
        p = p * t + 0.10285113006830215;
        p = p * t + 0.10966671258211136;
        p = p * t + 0.14294908940792084;
        p = p * t + 0.19999724626541138;
        p = p * t + 0.3333333730697632;
        r = ax + ax * (t * p);
    } else {
        r = 0.5 * m_log1p(m_div(2.0 * ax, 1.0 - ax));
    }
    return m_signed(r, b & 0x80000000u);
}

// -- erf ----------------------------------------------------------------------------------------------------------

fn m_erf(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    let sign = b & 0x80000000u;
    if (a > 0x7f800000u || a == 0u) { return x; }
    if (a >= 0x40800000u) { return m_signed(1.0, sign); }        // |x| >= 4: erf rounds to 1
    let ax = bitcast<f32>(a);
    if (a < 0x31800000u) {                                       // |x| < 2^-28: 2 x / sqrt(pi), scaled
        let n = m_norm(a);
        return m_signed(m_ldexp(n.m * 1.1283791670955126, n.e), sign);
    }
    var r: f32;
    if (ax < 0.84375) {
        let t = ax * ax;
        var p = 8.92413008841686e-05;
        p = p * t - 0.0008263035560958087;
        p = p * t + 0.005210817325860262;
        p = p * t - 0.026863062754273415;
        p = p * t + 0.11283757537603378;
        p = p * t - 0.37612637877464294;
        r = ax + ax * (0.12837916709551256 + t * p);
    } else if (ax < 1.5) {
        let s = ax - 1.171875;
        var p = 0.005796752870082855;
        p = p * s - 0.007358812261372805;
        p = p * s - 0.01829022727906704;
        p = p * s + 0.0565476231276989;
        p = p * s - 0.014146214351058006;
        p = p * s - 0.16638348996639252;
        p = p * s + 0.33490654826164246;
        p = p * s - 0.2857869267463684;
        p = p * s + 0.09746257215738297;
        r = 1.0 - p;
    } else if (ax < 2.5) {
        let s = ax - 2.0;
        var p = -0.0014284253120422363;
        p = p * s + 0.0033859037794172764;
        p = p * s - 0.0004947109264321625;
        p = p * s - 0.013089117594063282;
        p = p * s + 0.034448135644197464;
        p = p * s - 0.04822300747036934;
        p = p * s + 0.0413338728249073;
        p = p * s - 0.02066698484122753;
        p = p * s + 0.004677735269069672;
        r = 1.0 - p;
    } else {
        let s = ax - 3.25;
        var p = -2.0690753444796428e-05;
        p = p * s + 8.246274956036359e-05;
        p = p * s - 0.0001730839430820197;
        p = p * s + 0.00026352464919909835;
        p = p * s - 0.00031301486887969077;
        p = p * s + 0.00028653108165599406;
        p = p * s - 0.0001958897919394076;
        p = p * s + 9.486862836638466e-05;
        p = p * s - 2.9186739993747324e-05;
        p = p * s + 4.3027193896705285e-06;
        r = 1.0 - p;
    }
    return m_signed(r, sign);
}

// -- pow ----------------------------------------------------------------------------------------------------------

// 0: y is not an integer; 1: an odd integer; 2: an even integer (y finite and nonzero; `a` its bits without sign).
fn m_integer_kind(a: u32) -> u32 {
    let e = i32(a >> 23u) - 127;
    if (e < 0) { return 0u; }
    if (e >= 24) { return 2u; }
    let fraction_bits = u32(23 - e);
    if ((a & ((1u << fraction_bits) - 1u)) != 0u) { return 0u; }
    return 2u - ((((a & 0x7fffffu) | 0x800000u) >> fraction_bits) & 1u);
}

// |x|^y for finite nonzero x and y, not 1: 2^(y log2 |x|), log2 |x| as hi + lo (about 36 bits) from
// s = (m - 1) / (m + 1) carried to twice float32's precision, y log2 |x| as Z1 (exact) + Z2, then 2^Z.
fn m_pow_positive(ax: u32, y: f32) -> f32 {
    let n = m_norm(ax);
    let big = n.m > 1.41421356;
    let m = select(n.m, n.m * 0.5, big);
    let e = f32(n.e + select(0, 1, big));
    let u = m - 1.0;
    let v = m + 1.0;
    let s = u / v;
    let sh = m_hi12(s);
    let vh = m_hi12(v);
    let vl = m - (vh - 1.0);
    let sl = ((u - sh * vh) - sh * vl) / v;
    let z = s * s;
    let q = z * (0.9617967009544373 + z * (0.5770780444145203 + z * (0.41219857335090637 + z * (0.32059890031814575
        + z * (0.26230818033218384 + z * 0.22195307910442352)))));
    // log2 m = K s + s^3 Q(s^2), K = 2 / ln 2 = KH + KL.
    let main = 2.884765625 * sh;
    let rest = (0.0006244567921385169 * sh + 2.885390043258667 * sl) + s * q;
    let lh = m_hi12(e + main);
    let ll = (main - (lh - e)) + rest;
    let yh = m_hi12(y);
    let z1 = yh * lh;
    if (z1 > 160.0) { return bitcast<f32>(0x7f800000u); }
    if (z1 < -160.0) { return 0.0; }
    let z2 = (y - yh) * lh + y * ll;
    let k = floor(z1 + 0.5);
    let r = (z1 - k) + z2;
    var p = 1.0178086284895471e-07;
    p = p * r + 1.3215486660556053e-06;
    p = p * r + 1.5252733646775596e-05;
    p = p * r + 0.0001540352968731895;
    p = p * r + 0.0013333557872101665;
    p = p * r + 0.009618128649890423;
    p = p * r + 0.05550410971045494;
    p = p * r + 0.24022650718688965;
    p = p * r + 0.6931471824645996;
    return m_ldexp(1.0 + r * p, i32(k));
}

// pow(x, y) with C99's special values (Annex F.9.4.4).
fn m_pow(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let by = bitcast<u32>(y);
    let ax = bx & 0x7fffffffu;
    let ay = by & 0x7fffffffu;
    if (ay == 0u || bx == 0x3f800000u) { return 1.0; }
    if (ax > 0x7f800000u || ay > 0x7f800000u) { return m_nan(); }
    let y_negative = by >= 0x80000000u;
    if (ay == 0x7f800000u) {
        if (ax == 0x3f800000u) { return 1.0; }
        return select(0.0, bitcast<f32>(0x7f800000u), (ax > 0x3f800000u) != y_negative);
    }
    let kind = m_integer_kind(ay);
    let sign = select(0u, 0x80000000u, bx >= 0x80000000u && kind == 1u);
    if (ax == 0u) { return bitcast<f32>(sign | select(0u, 0x7f800000u, y_negative)); }
    if (ax == 0x7f800000u) { return bitcast<f32>(sign | select(0x7f800000u, 0u, y_negative)); }
    if (bx >= 0x80000000u && kind == 0u) { return m_nan(); }
    return m_signed(m_pow_positive(ax, y), sign);
}

// -- rounding, remainders, comparisons -----------------------------------------------------------------------------

// x rounded to an integer, from its bits: mode 0 toward zero, 1 down, 2 up, 3 halves to even, 4 halves away.
fn m_round_mode(x: f32, mode: u32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    let sign = b & 0x80000000u;
    if (a >= 0x4b000000u || a == 0u) { return x; }               // |x| >= 2^23 (integral), inf, NaN, zeros
    let e = i32(a >> 23u) - 127;
    let sig = (a & 0x7fffffu) | 0x800000u;
    // |x| = kept + fraction: kept = sig >> shift; shift up to 24 bits (|x| < 1 keeps 0), fraction compared with 1/2.
    let shift = u32(min(23 - e, 25));
    let kept = select(sig >> shift, 0u, shift >= 25u);
    let fraction = select(sig & ((1u << shift) - 1u), sig, shift >= 25u);
    let half = select(1u << (shift - 1u), 0x1000000u, shift >= 25u);
    let negative = sign != 0u;
    var up = false;
    switch (mode) {
        case 1u: { up = negative && fraction != 0u; }
        case 2u: { up = !negative && fraction != 0u; }
        case 3u: { up = fraction > half || (fraction == half && (kept & 1u) == 1u); }
        case 4u: { up = fraction >= half; }
        default: { }
    }
    return bitcast<f32>(bitcast<u32>(f32(kept + u32(up))) | sign);
}
fn m_trunc(x: f32) -> f32 { return m_round_mode(x, 0u); }
fn m_floor(x: f32) -> f32 { return m_round_mode(x, 1u); }
fn m_ceil(x: f32) -> f32 { return m_round_mode(x, 2u); }
fn m_round_even(x: f32) -> f32 { return m_round_mode(x, 3u); }
fn m_round_away(x: f32) -> f32 { return m_round_mode(x, 4u); }

// |v| = sig 2^scale for the bits `a` of a finite |v| (subnormals unnormalized, scale -149).
fn m_significand(a: u32) -> u32 { return select((a & 0x7fffffu) | 0x800000u, a, a < 0x800000u); }
fn m_scale(a: u32) -> i32 { return select(i32(a >> 23u) - 150, -149, a < 0x800000u); }

// C's fmod(x, y) for finite x and y with |x| >= |y| > 0: the remainder's magnitude, r 2^scale(|y|), exactly, from
// integer long division 8 bits at a time.
fn m_fmod_magnitude(ax: u32, ay: u32) -> u32 {
    let my = m_significand(ay);
    var r = m_significand(ax) % my;
    var left = m_scale(ax) - m_scale(ay);
    while (left > 0) {
        let step = min(left, 8);
        r = (r << u32(step)) % my;
        left -= step;
    }
    return r;
}

// C's fmod: the sign of x, exact.
fn m_fmod(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let ax = bx & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    if (ax >= 0x7f800000u || ay == 0u || ay > 0x7f800000u) { return m_nan(); }
    if (ay == 0x7f800000u || ax < ay) { return x; }
    return m_scaled(m_fmod_magnitude(ax, ay), m_scale(ay), bx & 0x80000000u);
}

// x - floor(x / y) y as Python's float % computes it: fmod, plus y where the signs differ and the remainder is not
// zero; a zero result has y's sign.
fn m_mod_floor(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let by = bitcast<u32>(y);
    let ax = bx & 0x7fffffffu;
    let ay = by & 0x7fffffffu;
    let sy = by & 0x80000000u;
    if (ax >= 0x7f800000u || ay == 0u || ay > 0x7f800000u) { return m_nan(); }
    var r = ax;                                                   // the remainder's magnitude, r 2^scale
    var scale = m_scale(ax);
    if (ay != 0x7f800000u && ax >= ay) {
        r = m_fmod_magnitude(ax, ay);
        scale = m_scale(ay);
    } else if (ax != 0u) {
        r = m_significand(ax);
    }
    if (r == 0u) { return bitcast<f32>(sy); }
    if ((bx & 0x80000000u) == sy) { return m_scaled(r, scale, sy); }
    if (ay == 0x7f800000u) { return y; }
    let gap = m_scale(ay) - scale;                                // |y| - |r| > 0
    if (gap <= 7) { return m_scaled((m_significand(ay) << u32(gap)) - r, scale, sy); }
    return y + x;                                                 // |x| < |y| / 128: no subnormal result
}

// NaN if either is NaN (the canonical quiet NaN), else the smaller / larger, compared by bits (so subnormals compare
// on any device); of two zeros, b (as NumPy's minimum and maximum give).
fn m_order(x: f32) -> i32 {
    let b = bitcast<i32>(x);
    return select(b, b ^ 0x7fffffff, b < 0);
}
fn m_zeros(a: f32, b: f32) -> bool { return ((bitcast<u32>(a) | bitcast<u32>(b)) & 0x7fffffffu) == 0u; }
fn m_minimum(a: f32, b: f32) -> f32 {
    if (m_isnan(a) || m_isnan(b)) { return m_nan(); }
    return select(b, a, m_order(a) < m_order(b) && !m_zeros(a, b));
}
fn m_maximum(a: f32, b: f32) -> f32 {
    if (m_isnan(a) || m_isnan(b)) { return m_nan(); }
    return select(b, a, m_order(a) > m_order(b) && !m_zeros(a, b));
}

// -1, 0 (+0 for either zero and for NaN: DML's SIGN page), 1.
fn m_sign(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a == 0u || a > 0x7f800000u) { return 0.0; }
    return bitcast<f32>(0x3f800000u | (b & 0x80000000u));
}
