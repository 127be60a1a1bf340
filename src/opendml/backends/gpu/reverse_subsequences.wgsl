// REVERSE_SUBSEQUENCES: output element o copies the input element of its sequence at L - 1 - k (k its coordinate
// along Axis, below L, the sequence's length clamped to the size along Axis) or at k itself, as raw bits.
// The output is row-major over (before, Axis, after): o = (before * SIZE + along) * AFTER_COUNT + after.
// X_BEFORE, X_AFTER, L_BEFORE, L_AFTER: layout blocks of the dimensions before and after Axis with the input's and
// the lengths' strides; X_STRIDE, SIZE, AFTER_COUNT: where the input's stride along Axis, the size along Axis and the
// element count after Axis are stored.
fn value(o: u32) -> {RAW} {
    let after_count = P[{AFTER_COUNT}u];
    let size = P[{SIZE}u];
    let sequence = o / after_count;
    let along = sequence % size;
    let before = sequence / size;
    let after = o % after_count;
    let length = min(load_raw_lengths(offset_of({L_BEFORE}u, before) + offset_of({L_AFTER}u, after)), size);
    let k = select(along, length - 1u - along, along < length);
    return load_raw_x(offset_of({X_BEFORE}u, before) + k * P[{X_STRIDE}u] + offset_of({X_AFTER}u, after));
}
