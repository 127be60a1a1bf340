// SHRINK on an integer type, exactly: ops/activations.py's IntegerShrink, whose 20 words start at P[SHRINK] (each
// read as the type's computation type {CT}, the shifts modulo 2^32):
//   above, below: ranges [low, high] (empty when low > high): x > Threshold, x < -Threshold;
//   minus, plus: x - Bias and x + Bias truncated and saturated, each a range and two shifts (low, high, k): where
//   x lies in the range the first, elsewhere the second, clamp(x, low, high) - k. That value lies in the type's
//   range, so the 32-bit wrapping subtraction gives it exactly.
// IN: the input's layout block.
fn shrink_word(at: u32) -> {CT} { return {WORD}(P[at]); }
fn shrink_in(v: {CT}, at: u32) -> bool { return v >= shrink_word(at) && v <= shrink_word(at + 1u); }
fn shrink_shift(v: {CT}, at: u32) -> {CT} {
    let c = min(max(v, shrink_word(at)), shrink_word(at + 1u));
    return {WORD}(bitcast<u32>(c) - P[at + 2u]);
}
fn shrink_piece(v: {CT}, at: u32) -> {CT} {
    if (shrink_in(v, at)) { return shrink_shift(v, at + 2u); }
    return shrink_shift(v, at + 5u);
}
fn value(o: u32) -> u32 {
    let v = load_x(offset_of({IN}u, o));
    var r = {CT}(0);
    if (shrink_in(v, SHRINK)) {
        r = shrink_piece(v, SHRINK + 4u);
    } else if (shrink_in(v, SHRINK + 2u)) {
        r = shrink_piece(v, SHRINK + 12u);
    }
    return to_raw_{TYPE}(r);
}
