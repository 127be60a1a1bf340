// {NAME}: the fixed binary tree over the entries home .. home + parts - 1 of {NAME}_share (parts a power of two):
// at each level, with half = parts / 2, parts / 4, ..., 1, entry p combines entry p + half into itself
// ({COMBINE}(a, b), a the lower part). Every invocation of the work-group calls it, in uniform control flow, with
// its own entry's value, its part p and `step`, the distance in local_invocation_index from the invocation of part p
// to that of part p + 1; `sg` is (subgroup_invocation_id, subgroup_size), unused without subgroups. Part 0 gets
// the result{RESULT_DOC}. The array may be written again only after a barrier.
var<workgroup> {NAME}_share: array<{T}, {SIZE}>;

fn {NAME}(value: {T}, home: u32, part: u32, parts: u32, step: u32, lane: u32, sg: vec2<u32>) -> {T} {
    var v = value;
    {NAME}_share[home + part] = v;
    workgroupBarrier();
    var half = parts / 2u;
    for (; half * step > {IN_REGISTERS}u; half /= 2u) {
        if (part < half) {
            v = {COMBINE}(v, {NAME}_share[home + part + half]);
            {NAME}_share[home + part] = v;
        }
        workgroupBarrier();
    }
{FINISH}}
