// The untiled product (gemm.py's direct_source): invocation t computes out(m, n) of batch b for t = (b M + m) N + n,
// over the operator's start, a_value, b_value and store, its K terms summed in blocks of 16 (each block apart, then
// added to the running sum), as the tiled pass sums them.

@compute @workgroup_size({WIDTH})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = gid.x + gid.y * groups.x * {WIDTH}u;
    if (t >= {COUNT}u) { return; }
    let n = t % {N}u;
    let rest = t / {N}u;
    let m = rest % {M}u;
    start(rest / {M}u);
    var acc = 0.0;
    for (var k0 = 0u; k0 < {K}u; k0 += 16u) {
        var part = 0.0;
        for (var k = k0; k < min(k0 + 16u, {K}u); k++) {
            part += a_value(m, k) * b_value(k, n);
        }
        acc += part;
    }
    store(m, n, acc);
}
