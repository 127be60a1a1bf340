// TOP_K and TOP_K1, the ranks: invocation e takes input element e (row-major over InputTensor's sizes), at
// position i of its sequence along Axis, and counts the elements of the sequence that come before it: a larger
// order key (`order_key`, rendered per type: integers by value, floats with -0.0 = +0.0 and NaN above +inf, its
// complement with AxisDirection INCREASING), or an equal key at a lower index. Those ranks are a permutation of
// 0 .. length - 1, so each selected element (rank < K) writes its index i to its own scratch word: the scratch
// (packed, OutputIndexTensor's sizes) holds each output's index; the walk stops once the rank reaches K.
// COUNT: the input's element count; X_LINES: the input's layout with stride 0 along Axis (a sequence's first
// element); S_LINES: the scratch's likewise; X_STEP, S_STEP: the element strides along Axis; LENGTH, K: where the
// sequence length and K are stored; AXIS: Axis; INNER: the product of the sizes after Axis.
@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = invocation(gid, groups);
    if (e >= P[{COUNT}u]) { return; }
    let length = P[{LENGTH}u];
    let k = P[{K}u];
    let i = (e / P[{INNER}u]) % length;
    let x_line = offset_of({X_LINES}u, e);
    let step = P[{X_STEP}u];
    let mine = order_key(load_raw_x(x_line + i * step));
    var rank = 0u;
    for (var j = 0u; j < length; j++) {
        let other = order_key(load_raw_x(x_line + j * step));
        if (before(other, mine) || (j < i && !before(mine, other))) {
            rank++;
            if (rank >= k) { return; }
        }
    }
    store_raw_s(offset_of({S_LINES}u, e) + rank * P[{S_STEP}u], i);
}
