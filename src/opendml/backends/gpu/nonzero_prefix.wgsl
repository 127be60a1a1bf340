// NONZERO_COORDINATES, the prefix: one work group turns the blocks' counts in the scratch s into each block's first
// output row (the sum of the counts before it, in block order) and stores their total in the count output n.
// Invocation t sums a run of consecutive blocks; invocation 0 scans the runs' sums; each invocation then rewrites
// its run. BLOCKS: where the block count is stored.
var<workgroup> sums: array<u32, {WORKGROUP_SIZE}>;

@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(local_invocation_index) t: u32) {
    let blocks = P[{BLOCKS}u];
    let per = blocks / {WORKGROUP_SIZE}u + 1u;
    let first = min(blocks, t * per);
    let last = min(blocks, first + per);
    var sum = 0u;
    for (var b = first; b < last; b++) { sum += s[P[0u] + b]; }
    sums[t] = sum;
    workgroupBarrier();
    if (t == 0u) {
        var total = 0u;
        for (var k = 0u; k < {WORKGROUP_SIZE}u; k++) {
            let value = sums[k];
            sums[k] = total;
            total += value;
        }
        store_raw_n(0u, total);
    }
    workgroupBarrier();
    var row = sums[t];
    for (var b = first; b < last; b++) {
        let value = s[P[0u] + b];
        s[P[0u] + b] = row;
        row += value;
    }
}
