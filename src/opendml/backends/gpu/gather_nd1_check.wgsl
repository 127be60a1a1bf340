// GATHER_ND1's debug-layer check: invocation t looks at coordinate t % K of the tuple at outer position t / K
// (row-major, as the output is laid out) and, when it is out of range, lowers status[0] to t. Integer minimum is
// independent of the order the invocations run in, so status[0] ends as the first coordinate out of range in
// row-major order (NONE when there is none), whatever the adapter.
// COUNT: the number of coordinates (outer positions x K); OUTER_IX and TUPLE as in gather_nd1.wgsl.
@group(0) @binding(1) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = invocation(gid, groups);
    if (t >= P[{COUNT}u]) {
        return;
    }
    let tuple_size = P[{TUPLE}u];
    let k = t % tuple_size;
    let at = walk_offset({OUTER_IX}u, t / tuple_size) + k * P[{TUPLE}u + 1u];
    if (index_position(index_words(at), P[{TUPLE}u + 2u + 2u * k]) == NONE) {
        atomicMin(&status[0], t);
    }
}
