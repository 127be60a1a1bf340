// SPLIT, output i: element o of the output is the input element at the same coordinates, shifted by the output's
// offset along Axis. Raw bits are moved, so every type (FLOAT64 too) is copied exactly.
// IN: the input's layout block over the output's sizes; AXIS_SHIFT: where the shift (the output's offset along
// Axis times the input's stride there) is stored.
fn value(o: u32) -> {RAW} {
    return load_raw_x(offset_of({IN}u, o) + P[{AXIS_SHIFT}u]);
}
