// The element-wise engine's integer library (issue 26): 64-bit integers as vec2<u32> (low word, high word), so that
// INT64 and UINT64 tensors compute on any adapter (shader-int64 or not), and the 32-bit helpers whose edge cases
// WGSL leaves to the driver. Every result is exact, as the formula language's I kind states: + - * wrap, division
// truncates toward zero, division and modulus by zero give 0, MIN / -1 gives MIN, shifts by a count at or beyond the
// width (or negative) give 0. The u64_ functions read both operands as unsigned, the i64_ ones as two's complement;
// where the two agree (add, sub, mul, neg, eq, bit operations) only the i64_ name exists. It uses math.wgsl's
// m_mul_wide (the 64-bit product of two u32 values): math.wgsl comes first in every shader that includes it.

// -- arithmetic ---------------------------------------------------------------------------------------------------

fn i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let low = a.x + b.x;
    return vec2<u32>(low, a.y + b.y + u32(low < a.x));
}
fn i64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - u32(a.x < b.x));
}
fn i64_neg(a: vec2<u32>) -> vec2<u32> { return i64_sub(vec2<u32>(0u, 0u), a); }
// The low 64 bits of the product (signed and unsigned alike).
fn i64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let low = m_mul_wide(a.x, b.x);
    return vec2<u32>(low.x, low.y + a.x * b.y + a.y * b.x);
}

// An i32 sign-extended to 64 bits.
fn i64_from_i32(v: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(v), bitcast<u32>(v >> 31u)); }
fn i64_is_negative(a: vec2<u32>) -> bool { return a.y >= 0x80000000u; }
fn i64_is_zero(a: vec2<u32>) -> bool { return (a.x | a.y) == 0u; }
// abs(MIN) = MIN (wraps).
fn i64_abs(a: vec2<u32>) -> vec2<u32> { return select(a, i64_neg(a), i64_is_negative(a)); }
fn i64_sign(a: vec2<u32>) -> vec2<u32> {
    if (i64_is_negative(a)) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
    return vec2<u32>(u32(!i64_is_zero(a)), 0u);
}
fn u64_sign(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(u32(!i64_is_zero(a)), 0u); }

// -- comparisons ------------------------------------------------------------------------------------------------

fn i64_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }
fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
fn u64_le(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x <= b.x); }
fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x < b.x);
}
fn i64_le(a: vec2<u32>, b: vec2<u32>) -> bool {
    return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x <= b.x);
}
fn i64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, i64_le(a, b)); }
fn i64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64_le(a, b)); }
fn u64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(b, a, u64_le(a, b)); }
fn u64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, u64_le(a, b)); }

// -- division -----------------------------------------------------------------------------------------------------

// Unsigned a / b and a % b for b != 0: (quotient.x, quotient.y, remainder.x, remainder.y). 32-bit operands divide
// directly; others by shift and subtract over a's significant bits.
fn u64_divmod(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    if ((a.y | b.y) == 0u) { return vec4<u32>(a.x / b.x, 0u, a.x % b.x, 0u); }
    var q = vec2<u32>(0u, 0u);
    var r = vec2<u32>(0u, 0u);
    let bits = select(32u - countLeadingZeros(a.x), 64u - countLeadingZeros(a.y), a.y != 0u);
    for (var i = bits; i > 0u; i--) {
        let at = i - 1u;
        let bit = select(a.x >> at, a.y >> (at - 32u), at >= 32u) & 1u;
        // r < 2^(bits taken so far), so 2 r + bit never passes 2^64.
        r = vec2<u32>((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
        q = vec2<u32>(q.x << 1u, (q.y << 1u) | (q.x >> 31u));
        if (u64_le(b, r)) {
            r = i64_sub(r, b);
            q.x = q.x | 1u;
        }
    }
    return vec4<u32>(q, r);
}

// b == 0 gives 0.
fn u64_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (i64_is_zero(b)) { return vec2<u32>(0u, 0u); }
    return u64_divmod(a, b).xy;
}
fn u64_mod(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (i64_is_zero(b)) { return vec2<u32>(0u, 0u); }
    return u64_divmod(a, b).zw;
}

// Truncating division: b == 0 gives 0, MIN / -1 gives MIN (|MIN| = 2^63 as unsigned, negated back).
fn i64_div_trunc(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (i64_is_zero(b)) { return vec2<u32>(0u, 0u); }
    let q = u64_divmod(i64_abs(a), i64_abs(b)).xy;
    return select(q, i64_neg(q), i64_is_negative(a) != i64_is_negative(b));
}
// a - trunc(a / b) b: a's sign; b == 0 gives 0.
fn i64_mod_trunc(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (i64_is_zero(b)) { return vec2<u32>(0u, 0u); }
    let r = u64_divmod(i64_abs(a), i64_abs(b)).zw;
    return select(r, i64_neg(r), i64_is_negative(a));
}
// The floor modulus: b's sign; b == 0 gives 0.
fn i64_mod_floor(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let r = i64_mod_trunc(a, b);
    if (i64_is_zero(r) || i64_is_negative(r) == i64_is_negative(b)) { return r; }
    return i64_add(r, b);
}

// base^e, exactly (wrapping, as repeated multiplication); a negative INT64 exponent gives 1 / base^-e truncated: 1 for
// base 1, +-1 for base -1, 0 otherwise.
fn u64_pow(base: vec2<u32>, e: vec2<u32>) -> vec2<u32> {
    var result = vec2<u32>(1u, 0u);
    var power = base;
    var n = e;
    while ((n.x | n.y) != 0u) {
        if ((n.x & 1u) == 1u) { result = i64_mul(result, power); }
        power = i64_mul(power, power);
        n = vec2<u32>((n.x >> 1u) | (n.y << 31u), n.y >> 1u);
    }
    return result;
}
fn i64_pow(base: vec2<u32>, e: vec2<u32>) -> vec2<u32> {
    if (!i64_is_negative(e)) { return u64_pow(base, e); }
    if (base.x == 1u && base.y == 0u) { return base; }
    if ((base.x & base.y) == 0xffffffffu) { return select(vec2<u32>(1u, 0u), base, (e.x & 1u) == 1u); }
    return vec2<u32>(0u, 0u);
}

// -- bits ---------------------------------------------------------------------------------------------------------

fn i64_and(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return a & b; }
fn i64_or(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return a | b; }
fn i64_xor(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return a ^ b; }
fn i64_not(a: vec2<u32>) -> vec2<u32> { return ~a; }
fn i64_popcount(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(countOneBits(a.x) + countOneBits(a.y), 0u); }

// Whether a 64-bit shift count is below 64 (a negative INT64 count, read as unsigned, is not).
fn i64_count_ok(n: vec2<u32>) -> bool { return n.y == 0u && n.x < 64u; }

fn i64_shl(a: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
    if (!i64_count_ok(n)) { return vec2<u32>(0u, 0u); }
    let s = n.x;
    if (s == 0u) { return a; }
    if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
    return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}
// Logical shift right (UINT64).
fn u64_shr(a: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
    if (!i64_count_ok(n)) { return vec2<u32>(0u, 0u); }
    let s = n.x;
    if (s == 0u) { return a; }
    if (s >= 32u) { return vec2<u32>(a.y >> (s - 32u), 0u); }
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}
// Arithmetic shift right (INT64); a count of 64 or more (or negative) gives 0.
fn i64_shr(a: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
    if (!i64_count_ok(n)) { return vec2<u32>(0u, 0u); }
    let s = n.x;
    if (s == 0u) { return a; }
    let high = bitcast<i32>(a.y);
    if (s >= 32u) { return vec2<u32>(bitcast<u32>(high >> (s - 32u)), bitcast<u32>(high >> 31u)); }
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), bitcast<u32>(high >> s));
}

// -- conversions ----------------------------------------------------------------------------------------------------

// An unsigned 64-bit value to the nearest float32 (ties to even), with the sign bit `sign`.
fn u64_to_f32_signed(a: vec2<u32>, sign: u32) -> f32 {
    if (i64_is_zero(a)) { return bitcast<f32>(sign); }
    // Normalize so that the leading bit is bit 31 of `top`; `rest` holds the bits below it.
    var top = a.x;
    var rest = 0u;
    var lead = 31u;
    if (a.y != 0u) {
        let lz = countLeadingZeros(a.y);
        top = select((a.y << lz) | (a.x >> (32u - lz)), a.y, lz == 0u);
        rest = a.x << lz;
        lead = 63u - lz;
    } else {
        let lz = countLeadingZeros(a.x);
        top = a.x << lz;
        lead = 31u - lz;
    }
    let kept = top >> 8u;                                         // 24 bits
    let twice_rest = (top & 0xffu) * 2u + u32(rest != 0u);       // the dropped bits against a half of 0x100
    let up = twice_rest > 0x100u || (twice_rest == 0x100u && (kept & 1u) == 1u);
    // kept 2^(lead - 23): the exponent field is lead + 127; a carry out of `kept` moves into it.
    return bitcast<f32>(sign | ((((lead + 126u) << 23u) + kept + u32(up))));
}
fn u64_to_f32(a: vec2<u32>) -> f32 { return u64_to_f32_signed(a, 0u); }
fn i64_to_f32(a: vec2<u32>) -> f32 {
    return u64_to_f32_signed(i64_abs(a), select(0u, 0x80000000u, i64_is_negative(a)));
}

// trunc(|v|) as an unsigned 64-bit value for |v| < 2^64 (bits `a` of |v|, finite).
fn f32_magnitude_to_u64(a: u32) -> vec2<u32> {
    if (a < 0x3f800000u) { return vec2<u32>(0u, 0u); }
    let sig = (a & 0x7fffffu) | 0x800000u;
    let s = i32(a >> 23u) - 150;                                  // |v| = sig 2^s
    if (s <= 0) { return vec2<u32>(sig >> u32(-s), 0u); }
    return i64_shl(vec2<u32>(sig, 0u), vec2<u32>(u32(s), 0u));
}

// v truncated toward zero and clamped to INT64's range; NaN gives 0.
fn f32_to_i64_saturate(v: f32) -> vec2<u32> {
    let b = bitcast<u32>(v);
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) { return vec2<u32>(0u, 0u); }
    if (a >= 0x5f000000u) {                                       // |v| >= 2^63
        return select(vec2<u32>(0xffffffffu, 0x7fffffffu), vec2<u32>(0u, 0x80000000u), b >= 0x80000000u);
    }
    let m = f32_magnitude_to_u64(a);
    return select(m, i64_neg(m), b >= 0x80000000u);
}
// v truncated toward zero and clamped to UINT64's range; NaN gives 0.
fn f32_to_u64_saturate(v: f32) -> vec2<u32> {
    let b = bitcast<u32>(v);
    if (b >= 0x80000000u || b > 0x7f800000u) { return vec2<u32>(0u, 0u); }   // negative, -0, NaN
    if (b >= 0x5f800000u) { return vec2<u32>(0xffffffffu, 0xffffffffu); }    // v >= 2^64
    return f32_magnitude_to_u64(b);
}

// -- 32-bit helpers (the 8-, 16- and 32-bit types compute in i32 / u32) ---------------------------------------------

// Truncating division: b == 0 gives 0, MIN / -1 gives MIN (a narrower type's MIN / -1 overflows into its width and
// wraps back to MIN on store).
fn i32_div(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    if (b == -1) { return bitcast<i32>(0u - bitcast<u32>(a)); }
    return a / b;
}
// a - trunc(a / b) b (a's sign); b == 0 gives 0.
fn i32_mod(a: i32, b: i32) -> i32 {
    if (b == 0 || b == -1) { return 0; }
    return a % b;
}
// The floor modulus (b's sign); b == 0 gives 0.
fn i32_mod_floor(a: i32, b: i32) -> i32 {
    let r = i32_mod(a, b);
    return select(r, r + b, r != 0 && (r < 0) != (b < 0));
}
fn u32_div(a: u32, b: u32) -> u32 { return select(a / max(b, 1u), 0u, b == 0u); }
fn u32_mod(a: u32, b: u32) -> u32 { return select(a % max(b, 1u), 0u, b == 0u); }

// Shifts of a `width`-bit value (8, 16 or 32); a count at or beyond the width, or negative, gives 0. The result's
// bits above the width are dropped on store.
fn u32_shl(a: u32, n: u32, width: u32) -> u32 { return select(a << min(n, 31u), 0u, n >= width); }
fn u32_shr(a: u32, n: u32, width: u32) -> u32 { return select(a >> min(n, 31u), 0u, n >= width); }
fn i32_shl(a: i32, n: i32, width: u32) -> i32 {
    return select(bitcast<i32>(bitcast<u32>(a) << u32(n & 31)), 0, n < 0 || u32(n) >= width);
}
// Arithmetic (a is sign-extended from its width).
fn i32_shr(a: i32, n: i32, width: u32) -> i32 { return select(a >> u32(n & 31), 0, n < 0 || u32(n) >= width); }
// Bits set in the low `width` bits.
fn u32_popcount(a: u32, width: u32) -> u32 {
    return countOneBits(select(a & ((1u << (width & 31u)) - 1u), a, width >= 32u));
}
