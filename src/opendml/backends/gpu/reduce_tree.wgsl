// REDUCE: work-group tree reductions, over the input (pass 1) or over pass 1's partial states (the merge pass).
// A work-group of 256 invocations serves 256 / PARTS outputs with PARTS invocations each, on one chunk (CHUNK
// consecutive indices of the BLOCK-long sequence each output folds) of them: invocation `part` folds indices part,
// part + PARTS, ... of the chunk (`fold`), then the PARTS states of each output are combined by a fixed binary
// tree (state_tree, see tree.py; no atomics: the order is the same on every adapter and every run). With
// OUTPUT_FAST the outputs are the fast-varying lane index (neighbouring outputs lie side by side in memory), else
// the parts are (the reduced axis is the contiguous one). Work-group w takes output group
// w / CHUNKS, chunk w % CHUNKS; part 0 hands the combined state to write_result.
// one_copy is opaque_one's value (see reduce_math.wgsl) and x_base the input's base element, read from P once.
// Placeholders: ONE (its position in P), GROUPS, OUTPUTS, CHUNKS, CHUNK, PARTS, OUTPUT_FAST, BLOCK (u32
// expressions: P reads, or literals where specialized), SUBGROUP_PARAMETERS and SUBGROUP (tree.py).
var<private> one_copy: f32;
var<private> x_base: u32;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32{SUBGROUP_PARAMETERS}) {
    one_copy = bitcast<f32>(P[{ONE}u]);
    x_base = P[0u];
    let w = wid.x + wid.y * groups.x;
    if (w >= {GROUPS}) { return; }
    let outputs = {OUTPUTS};
    let chunks = {CHUNKS};
    let parts = {PARTS};
    let per_group = 256u / parts;
    let output_group = w / chunks;
    let c = w - output_group * chunks;
    var slot: u32;
    var part: u32;
    var step = 1u;      // from the invocation of one part to the next
    if ({OUTPUT_FAST} != 0u) {
        slot = lane % per_group;
        part = lane / per_group;
        step = per_group;
    } else {
        part = lane % parts;
        slot = lane / parts;
    }
    let o = output_group * per_group + slot;
    let n = {BLOCK};
    let r0 = c * {CHUNK};
    let r1 = r0 + min({CHUNK}, n - r0);
    var s = state_identity();
    if (o < outputs && part < r1 - r0) {
        s = fold(o, r0 + part, r1, parts, s);
    }
    s = state_tree(s, slot * parts, part, parts, step, lane, {SUBGROUP});
    if (part == 0u && o < outputs) {
        write_result(o, c, s);
    }
}
