// CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT, the tally: invocation l walks line l (the elements of one position
// of the other dimensions, row-major) along Axis, from its first element or, with DECREASING, its last, one
// element after the other in the computation type (f32 for FLOAT16 and FLOAT32; integers wrap), and writes each
// running tally's raw bits to the scratch `s` (packed, row-major): `STORED` is the tally after the element
// (inclusive) or before it (exclusive). The second pass copies the scratch into the output.
// LINES: the line count; X_LINES, S_LINES: layout blocks of the line's first element in the input and the scratch;
// LENGTH, X_STEP, S_STEP: where Axis's size and element strides are stored.
@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let l = invocation(gid, groups);
    if (l >= P[{LINES}u]) { return; }
    let length = P[{LENGTH}u];
    let x_line = offset_of({X_LINES}u, l);
    let s_line = offset_of({S_LINES}u, l);
    var tally = {CT}({IDENTITY});
    for (var k = 0u; k < length; k++) {
        let at = select(k, length - 1u - k, {DECREASING});
        let before = tally;
        let value = load_x(x_line + at * P[{X_STEP}u]);
        tally = select(tally {OP} value, value, k == 0u);   // the first element itself: a -0.0 stays -0.0
        store_raw_s(s_line + at * P[{S_STEP}u], to_raw_{T}({STORED}));
    }
}
