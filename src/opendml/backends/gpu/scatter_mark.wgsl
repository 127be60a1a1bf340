// SCATTER_ELEMENTS and SCATTER_ND, the mark: invocation t reads the tuple at outer position t (batch, then index
// positions, row-major) and raises the mark of the cell it selects to t + 1 with an atomic maximum, which does not
// depend on the order the invocations run in: each cell ends marked with its last position in row-major order (a
// later position of one batch is a larger t), or 0 where none selects it. A tuple with a coordinate out of range
// (after a negative one of a signed type counts from the end) selects nothing: its update is skipped.
// COUNT: the outer positions; OUTER_IX, OUTER_CELL: layout blocks of the outer dimensions with the indices' strides
// and the cells' (batch dimensions only); TUPLE: K, the indices' stride between a tuple's coordinates, then K
// (size, cell stride) pairs.
@group(0) @binding(1) var<storage, read_write> w: array<atomic<u32>>;

@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = invocation(gid, groups);
    if (t >= P[{COUNT}u]) {
        return;
    }
    let at = walk_offset({OUTER_IX}u, t);
    var cell = walk_offset({OUTER_CELL}u, t);
    let tuple_size = P[{TUPLE}u];
    let step = P[{TUPLE}u + 1u];
    for (var k = 0u; k < tuple_size; k++) {
        let position = index_position(index_words(at + k * step), P[{TUPLE}u + 2u + 2u * k]);
        if (position == NONE) {
            return;
        }
        cell += position * P[{TUPLE}u + 3u + 2u * k];
    }
    atomicMax(&w[cell], t + 1u);
}
