// NONZERO_COORDINATES, the write: invocation b walks its block of the input's logical elements again (as the count
// did) and writes the last COLUMNS coordinates of each nonzero element into the coordinates output c, one row per
// element from row s[b] on (the prefix pass's first row of the block), so the rows come in ascending element index
// and no row past the count is written. ROW, COLUMN: where c's element strides along M and N are stored; FIRST: the
// input dimension of the first column.
@compute @workgroup_size({WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let b = invocation(gid, groups);
    if (b >= P[{BLOCKS}u]) { return; }
    let first = b * {CHUNK}u;
    let end = select(P[{TOTAL}u], first + {CHUNK}u, P[{TOTAL}u] - first > {CHUNK}u);
    var at = s[P[1u] + b];
    for (var o = first; o < end; o++) {
        if ((load_raw_x(offset_of({X}u, o)) & {MASK}u) != 0u) {
            for (var k = 0u; k < {COLUMNS}u; k++) {
                store_raw_c(at * P[{ROW}u] + k * P[{COLUMN}u], coord_of({X}u, o, {FIRST}u + k));
            }
            at++;
        }
    }
}
