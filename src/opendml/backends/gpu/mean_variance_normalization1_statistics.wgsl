// MVN statistics: each segment of LANES invocations (a power of two dividing the work-group) takes one item, a
// chunk of at most CHUNK elements of one group (a group is one chunk unless it is large), each invocation
// SLOTS of its elements, held in registers for every pass:
//   1. the largest finite magnitude (-> the exponent e of the scaling, see the scaling functions), the flags of
//      non-finite values and a rough sum (of x 2^-13), one tree for the three;
//   2. the sum and the sum of squares of the deviations d = y - shift, y = x 2^-e, shift the rough mean scaled:
//      mean = shift + sum(d) / n as two FLOAT32 parts, M2 = sum(d^2) - sum(d)^2 / n. Where the shift is too far
//      from the mean for that (M2 would cancel: data such as 1e4 + small noise, whose rough sum lost the low bits),
//      the work-group takes the sums again from shift + sum(d) / n, which is then within a few units in the last
//      place of the mean (the deviations of such data are exact), so most groups take two trees, not three.
// Every sum is a per-invocation sum in slot order, then a fixed tree over the segment (sum_tree, tree.py): one
// order, whatever the adapter. A one-chunk group is finished here; the chunks of a large group are written as
// records of 6 words at RECORDS (count, e, mean_hi, mean_lo, M2, flags) for the merge pass.
// Parameters: LANES, ITEMS (groups x chunks), CHUNKS (per group), CHUNK, N (elements per group), KEPT (layout of
// the groups: the input's sizes and strides over the kept dimensions), NORM (the same over Axes); SUBGROUP and
// SUBGROUP_PARAMETERS (tree.py); STATS_BINDING; ROW_ENTRY and ROW (the fused row pass's first statements and its
// output, or nothing).
@group(0) @binding({STATS_BINDING}) var<storage, read_write> stats: array<u32>;

const SLOTS: u32 = {SLOTS}u;
const WIDTH: u32 = {WIDTH}u;

fn add_sums(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return a + b; }

// The largest magnitude's bits and the flags.
fn max_or(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return vec2<u32>(max(a.x, b.x), a.y | b.y); }

// Element j of a group, from the group's first element (one merged dimension, the common case: no division).
fn element_offset(j: u32) -> u32 {
    if (rank_of({NORM}u) == 1u) { return j * stride_of({NORM}u, 0u); }
    return offset_of({NORM}u, j);
}

// The largest magnitude's bits, the flags and a rough sum (FLOAT32 bits).
fn top_combine(a: vec3<u32>, b: vec3<u32>) -> vec3<u32> {
    return vec3<u32>(max(a.x, b.x), a.y | b.y, bitcast<u32>(bitcast<f32>(a.z) + bitcast<f32>(b.z)));
}

var<workgroup> mvn_refine: u32;

@compute @workgroup_size(WIDTH)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>{SUBGROUP_PARAMETERS}) {
{ROW_ENTRY}    let lanes = {LANES};
    let lane = t & (lanes - 1u);
    let first = t - lane;
    let item = (wid.x + wid.y * groups.x) * (WIDTH / lanes) + t / lanes;
    let chunks = {CHUNKS};
    let valid = item < {ITEMS};
    let g = item / chunks;
    let start = (item - g * chunks) * {CHUNK};
    var count = 0u;
    if (valid) { count = min({CHUNK}, {N} - start); }
    let base = offset_of({KEPT}u, g);

    // 1. Load; the largest finite magnitude (as bits, which order like magnitudes) and the non-finite flags.
    var bits: array<u32, SLOTS>;
    var largest = 0u;
    var flags = 0u;
    var rough = 0.0;
    for (var k = 0u; k < SLOTS; k++) {
        let j = k * lanes + lane;
        var b = 0u;
        if (j < count) {
            b = bitcast<u32>(load_x(base + element_offset(start + j)));
            let a = b & 0x7fffffffu;
            if (a < 0x7f800000u) {
                largest = max(largest, a);
                rough += bitcast<f32>(b) * 0x1p-13f;
            } else if (a > 0x7f800000u) {
                flags = flags | 1u;
            } else {
                flags = flags | select(2u, 4u, a != b);
            }
        }
        bits[k] = b;
    }
    let sg = {SUBGROUP};
    let top = top_tree(vec3<u32>(largest, flags, bitcast<u32>(rough)), first, lane, lanes, 1u, t, sg);
    // Where the largest magnitude lies in [2^-20, 2^40), the values need no scaling (e 0: no sum or square
    // overflows, none of a deviation's bits that count next to the largest value underflows); a power of two
    // changes no rounding there, so the results agree with the scaled ones up to inverseSqrt's own error.
    var e = 0;
    if (top.x < 0x35800000u || top.x >= 0x53800000u) { e = exponent_of(top.x); }
    flags = top.y;

    // 2. The shift. Non-finite values count as 0 here (the flags then decide the result).
    var y: array<f32, SLOTS>;
    for (var k = 0u; k < SLOTS; k++) {
        y[k] = select(0.0, scaled(bits[k], e), (bits[k] & 0x7fffffffu) < 0x7f800000u);
    }
    let n = f32(count);
    // 2. The shift: the rough mean (a FLOAT32 sum of x 2^-13, which cannot overflow for CHUNK <= 2^12, taken in the
    // first tree), scaled. Where the deviations from it show that it is far from the mean (n (mean - shift)^2 more
    // than 1/64 of their sum of squares, so that M2 = sum(d^2) - sum(d)^2 / n would cancel: the rough sum lost
    // the low bits of data such as 1e4 + small noise, or underflowed), the work-group takes them again from the
    // shift plus their mean, which is then within a few units in the last place of the mean: the deviations of such
    // data are exact.
    var shift = 0.0;
    if (valid) { shift = times_pow2(bitcast<f32>(top.z) / n, 13 - e); }
    var sums: vec2<f32>;
    for (var round = 0u; round < 2u; round++) {
        if (t == 0u) { mvn_refine = 0u; }
        var sum_d = 0.0;
        var sum_d2 = 0.0;
        for (var k = 0u; k < SLOTS; k++) {
            if (k * lanes + lane < count) {
                let d = y[k] - shift;
                sum_d += d;
                sum_d2 += d * d;
            }
        }
        sums = sum_tree(vec2<f32>(sum_d, sum_d2), first, lane, lanes, 1u, t, sg);
        // Every part of a segment has its sums, so the segment moves its shift as one; a segment that does not
        // keeps it and takes the same sums again (its result does not depend on its neighbours).
        let far = valid && sums.x * (sums.x / n) > 0.015625 * sums.y;
        if (far && lane == 0u) { mvn_refine = 1u; }
        if (round == 1u || workgroupUniformLoad(&mvn_refine) == 0u) { break; }
        if (far) { shift += sums.x / n; }
    }
    if (valid && lane == 0u) {
        let total = sums.x;
        let mean_hi = shift;
        let mean_lo = total / n;
        let m2 = max(sums.y - total * mean_lo, 0.0);
        if (chunks == 1u) {
            finish(g, e, mean_hi, mean_lo, m2, flags, n);
        } else {
            let record = {RECORDS} + 6u * item;
            stats[record] = count;
            stats[record + 1u] = bitcast<u32>(e);
            stats[record + 2u] = bitcast<u32>(mean_hi);
            stats[record + 3u] = bitcast<u32>(mean_lo);
            stats[record + 4u] = bitcast<u32>(m2);
            stats[record + 5u] = flags;
        }
    }
{ROW}}
