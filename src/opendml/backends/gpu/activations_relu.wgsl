// RELU on an integer type: max(x, 0), exactly, in the type's computation type ({CT}). IN: the input's layout block.
fn value(o: u32) -> u32 {
    let v = load_x(offset_of({IN}u, o));
    return to_raw_{TYPE}(select({CT}(0), v, v > {CT}(0)));
}
