// REDUCE, specialized: reduce_tree.wgsl's pass 1 over the input where lanes run along the reduced block (not
// OUTPUT_FAST), with each invocation playing VIRTUAL of an output's PARTS parts, so that a work-group serves
// VIRTUAL times as many outputs: invocation `lane_part` of its output's LANES = PARTS / VIRTUAL folds parts
// lane_part, lane_part + LANES, ... exactly as reduce_tree.wgsl's invocations of those parts do, then combines them
// as the first levels of the fixed tree would (part p takes part p + half, for half = PARTS / 2 down to LANES), and
// state_tree runs the remaining levels over the LANES invocations. The same pairs in the same order: the same bits.
// Placeholders: ONE, GROUPS, OUTPUTS, CHUNKS, CHUNK, PARTS, BLOCK (literals), VIRTUAL, LANES (literals),
// SUBGROUP_PARAMETERS and SUBGROUP (tree.py).
var<private> one_copy: f32;
var<private> x_base: u32;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32{SUBGROUP_PARAMETERS}) {
    one_copy = bitcast<f32>(P[{ONE}u]);
    x_base = P[0u];
    let w = wid.x + wid.y * groups.x;
    if (w >= {GROUPS}) { return; }
    let chunks = {CHUNKS};
    let lanes = {LANES}u;
    let per_group = 256u / lanes;
    let output_group = w / chunks;
    let c = w - output_group * chunks;
    let lane_part = lane % lanes;
    let slot = lane / lanes;
    let o = output_group * per_group + slot;
    let n = {BLOCK};
    let r0 = c * {CHUNK};
    let r1 = r0 + min({CHUNK}, n - r0);
    var states: array<State, {VIRTUAL}>;
    for (var j = 0u; j < {VIRTUAL}u; j++) {
        let part = lane_part + j * lanes;
        states[j] = state_identity();
        if (o < {OUTPUTS} && part < r1 - r0) {
            states[j] = fold(o, r0 + part, r1, {PARTS}, states[j]);
        }
    }
    for (var half = {VIRTUAL}u / 2u; half > 0u; half /= 2u) {
        for (var j = 0u; j < half; j++) {
            states[j] = state_combine(states[j], states[j + half]);
        }
    }
    let s = state_tree(states[0], slot * lanes, lane_part, lanes, 1u, lane, {SUBGROUP});
    if (lane_part == 0u && o < {OUTPUTS}) {
        write_result(o, c, s);
    }
}
