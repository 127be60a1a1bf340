// SCATTER_ELEMENTS and SCATTER_ND, before the mark: every cell's mark set to 0 (none). COUNT: the cell count.
@group(0) @binding(0) var<storage, read_write> w: array<u32>;

@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = invocation(gid, groups);
    if (i < P[{COUNT}u]) {
        w[i] = 0u;
    }
}
