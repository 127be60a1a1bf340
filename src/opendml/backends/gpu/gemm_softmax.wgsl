// A fused SOFTMAX / SOFTMAX1 over a FLOAT32 buffer `s`, in place: work-group g takes the GROUPS-th group of the
// dimensions outside the axes (group_offset) and its COUNT elements over the axes (element_offset), and writes
// exp(x - max) / sum exp(x - max). The maximum (NaN if any element is NaN, as m_maximum gives it) and the sum are
// reduced over the work-group in a fixed order, so a result does not depend on timing.

var<workgroup> shared_values: array<f32, {WIDTH}>;

fn reduce(t: u32, value: f32, is_max: bool) -> f32 {
    shared_values[t] = value;
    workgroupBarrier();
    for (var half = {WIDTH}u / 2u; half > 0u; half /= 2u) {
        if (t < half) {
            let other = shared_values[t + half];
            shared_values[t] = select(shared_values[t] + other, m_maximum(shared_values[t], other), is_max);
        }
        workgroupBarrier();
    }
    let result = shared_values[0];
    workgroupBarrier();
    return result;
}

@compute @workgroup_size({WIDTH})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {
    let g = wid.x + wid.y * groups.x;
    if (g >= {GROUPS}u) { return; }
    let origin = group_offset(g);
    var largest = bitcast<f32>(0xff800000u);
    for (var j = t; j < {COUNT}u; j += {WIDTH}u) {
        largest = m_maximum(largest, bitcast<f32>(s[origin + element_offset(j)]));
    }
    largest = reduce(t, largest, true);
    var total = 0.0;
    for (var j = t; j < {COUNT}u; j += {WIDTH}u) {
        total += m_exp(bitcast<f32>(s[origin + element_offset(j)]) - largest);
    }
    total = reduce(t, total, false);
    for (var j = t; j < {COUNT}u; j += {WIDTH}u) {
        let at = origin + element_offset(j);
        s[at] = bitcast<u32>(m_exp(bitcast<f32>(s[at]) - largest) / total);
    }
}
