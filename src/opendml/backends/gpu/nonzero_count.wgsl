// NONZERO_COORDINATES, the count: invocation b counts the nonzero elements among the input's logical elements
// [b CHUNK, (b + 1) CHUNK) (row-major; an element is nonzero where its raw bits under MASK are: the sign bit is
// masked off for the float types) into the scratch s[b].
// X: the input's layout block; BLOCKS, TOTAL: where the block count and the element count are stored.
@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = invocation(gid, groups);
    if (b >= P[{BLOCKS}u]) { return; }
    let first = b * {CHUNK}u;
    let end = select(P[{TOTAL}u], first + {CHUNK}u, P[{TOTAL}u] - first > {CHUNK}u);
    var found = 0u;
    for (var o = first; o < end; o++) {
        if ((load_raw_x(offset_of({X}u, o)) & {MASK}u) != 0u) { found++; }
    }
    s[P[1u] + b] = found;
}
