// MVN statistics of a large group, second pass: its chunks' records (RECORDS, 6 words each: count, e, mean_hi,
// mean_lo, M2, flags) merged into the group's record. Each segment of LANES invocations takes one group; each
// invocation walks chunks lane, lane + LANES, ... in order, then a fixed tree over the segment (tree.py).
// With every chunk brought to the group's exponent E (the largest of theirs; exact powers of two), weights
// w_c = n_c / n, and chunk means m_c = hi_c + lo_c:
//   G = hi_0 + sum w_c (hi_c - hi_0)          a shift near the mean (exactly hi_0 when all the hi_c are equal)
//   delta_c = (hi_c - G) + lo_c,  lo = sum w_c delta_c,  mean = G + lo
//   M2 = sum (M2_c + n_c (delta_c - lo)^2)  (Chan et al.'s combination: a sum of non-negative terms)
@group(0) @binding(0) var<storage, read_write> stats: array<u32>;

const WIDTH: u32 = {WIDTH}u;

fn add(a: f32, b: f32) -> f32 { return a + b; }

// The largest exponent (as i32 bits) and the flags.
fn max_or(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(bitcast<u32>(max(bitcast<i32>(a.x), bitcast<i32>(b.x))), a.y | b.y);
}

fn field(record: u32, k: u32) -> f32 { return bitcast<f32>(stats[record + k]); }

@compute @workgroup_size(WIDTH)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>{SUBGROUP_PARAMETERS}) {
    let lanes = {LANES};
    let lane = t & (lanes - 1u);
    let first = t - lane;
    let g = (wid.x + wid.y * groups.x) * (WIDTH / lanes) + t / lanes;
    let valid = g < {GROUPS};
    let chunks = {CHUNKS};
    let records = {RECORDS} + 6u * g * chunks;
    var mine = 0u;   // chunks this invocation walks
    if (valid && lane < chunks) { mine = (chunks - lane + lanes - 1u) / lanes; }

    var top = -2147483647;
    var flags = 0u;
    for (var i = 0u; i < mine; i++) {
        let record = records + 6u * (lane + i * lanes);
        top = max(top, bitcast<i32>(stats[record + 1u]));
        flags = flags | stats[record + 5u];
    }
    let sg = {SUBGROUP};
    let merged = max_or_tree(vec2<u32>(bitcast<u32>(top), flags), first, lane, lanes, 1u, t, sg);
    let e = bitcast<i32>(merged.x);
    flags = merged.y;
    let n = f32({N});
    var hi0 = 0.0;
    if (valid) { hi0 = times_pow2(field(records, 2u), bitcast<i32>(stats[records + 1u]) - e); }

    var sum = 0.0;
    for (var i = 0u; i < mine; i++) {
        let record = records + 6u * (lane + i * lanes);
        let hi = times_pow2(field(record, 2u), bitcast<i32>(stats[record + 1u]) - e);
        sum += (f32(stats[record]) / n) * (hi - hi0);
    }
    let shift = hi0 + sum_tree(sum, first, lane, lanes, 1u, t, sg);
    workgroupBarrier();

    sum = 0.0;
    for (var i = 0u; i < mine; i++) {
        let record = records + 6u * (lane + i * lanes);
        let k = bitcast<i32>(stats[record + 1u]) - e;
        let delta = (times_pow2(field(record, 2u), k) - shift) + times_pow2(field(record, 3u), k);
        sum += (f32(stats[record]) / n) * delta;
    }
    let mean_lo = sum_tree(sum, first, lane, lanes, 1u, t, sg);
    workgroupBarrier();

    sum = 0.0;
    for (var i = 0u; i < mine; i++) {
        let record = records + 6u * (lane + i * lanes);
        let k = bitcast<i32>(stats[record + 1u]) - e;
        let delta = (times_pow2(field(record, 2u), k) - shift) + times_pow2(field(record, 3u), k) - mean_lo;
        sum += times_pow2(field(record, 4u), 2 * k) + f32(stats[record]) * delta * delta;
    }
    let m2 = sum_tree(sum, first, lane, lanes, 1u, t, sg);
    if (valid && lane == 0u) {
        finish(g, e, shift, mean_lo, m2, flags, n);
    }
}
