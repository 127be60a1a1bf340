// MVN statistics: each segment of LANES invocations (a power of two dividing the work-group) takes one item, a
// chunk of at most CHUNK elements of one group (a group is one chunk unless it is large), each invocation
// SLOTS of its elements, held in registers for every pass:
//   1. the largest finite magnitude (-> the exponent e of the scaling, see the scaling functions) and the flags of
//      non-finite values;
//   2. the sum of (y - y_0), y = x 2^-e, y_0 the chunk's first element: a shift near the mean, exact for data such
//      as 1e4 + small noise (the differences are exact), which a plain FLOAT32 sum would blur;
//   3. the sum and the sum of squares of the deviations d = y - shift: mean = shift + sum(d) / n as two FLOAT32
//      parts, M2 = sum(d^2) - sum(d)^2 / n, a sum of non-negative terms around the mean.
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
    for (var k = 0u; k < SLOTS; k++) {
        let j = k * lanes + lane;
        var b = 0u;
        if (j < count) {
            b = bitcast<u32>(load_x(base + element_offset(start + j)));
            let a = b & 0x7fffffffu;
            if (a < 0x7f800000u) {
                largest = max(largest, a);
            } else if (a > 0x7f800000u) {
                flags = flags | 1u;
            } else {
                flags = flags | select(2u, 4u, a != b);
            }
        }
        bits[k] = b;
    }
    let sg = {SUBGROUP};
    let top = max_or_tree(vec2<u32>(largest, flags), first, lane, lanes, 1u, t, sg);
    let e = exponent_of(top.x);
    flags = top.y;

    // 2. The shift. Non-finite values count as 0 here (the flags then decide the result).
    var y: array<f32, SLOTS>;
    for (var k = 0u; k < SLOTS; k++) {
        y[k] = select(0.0, scaled(bits[k], e), (bits[k] & 0x7fffffffu) < 0x7f800000u);
    }
    sum_tree_share[t] = vec2<f32>(y[0], 0.0);
    workgroupBarrier();
    let y0 = sum_tree_share[first].x;
    workgroupBarrier();
    var sum = 0.0;
    for (var k = 0u; k < SLOTS; k++) {
        if (k * lanes + lane < count) { sum += y[k] - y0; }
    }
    let n = f32(count);
    let shift = y0 + sum_tree(vec2<f32>(sum, 0.0), first, lane, lanes, 1u, t, sg).x / n;
    workgroupBarrier();

    // 3. Deviations from the shift.
    var sum_d = 0.0;
    var sum_d2 = 0.0;
    for (var k = 0u; k < SLOTS; k++) {
        if (k * lanes + lane < count) {
            let d = y[k] - shift;
            sum_d += d;
            sum_d2 += d * d;
        }
    }
    let sums = sum_tree(vec2<f32>(sum_d, sum_d2), first, lane, lanes, 1u, t, sg);
    if (valid && lane == 0u) {
        let total = sums.x;
        let mean_lo = total / n;
        let m2 = max(sums.y - total * mean_lo, 0.0);
        if (chunks == 1u) {
            finish(g, e, shift, mean_lo, m2, flags, n);
        } else {
            let record = {RECORDS} + 6u * item;
            stats[record] = count;
            stats[record + 1u] = bitcast<u32>(e);
            stats[record + 2u] = bitcast<u32>(shift);
            stats[record + 3u] = bitcast<u32>(mean_lo);
            stats[record + 4u] = bitcast<u32>(m2);
            stats[record + 5u] = flags;
        }
    }
{ROW}}
