// PADDING, PADDING1 and TILE: output element o (row-major over OutputTensor's sizes) reads the input element whose
// coordinate along each dimension d is source_index(c_d - start_d, size_d) (ops/padding.py's formulas, MODE), or
// is the constant where CONSTANT's coordinate falls outside the input. Raw bits are moved: every type is exact.
// OUT: a block of the output's sizes; IN: the input's sizes and element strides; START: StartPadding per dimension.
fn source_index(i: i32, n: i32) -> i32 {
    switch ({MODE}) {
        case 1: { return clamp(i, 0, n - 1); }                              // EDGE
        case 2: {                                                           // REFLECTION
            if (n == 1) { return 0; }
            let p = 2 * (n - 1);
            let m = ((i % p) + p) % p;
            return select(p - m, m, m < n);
        }
        case 3: {                                                           // SYMMETRIC
            let p = 2 * n;
            let m = ((i % p) + p) % p;
            return select(p - 1 - m, m, m < n);
        }
        case 4: { return ((i % n) + n) % n; }                               // WRAP, TILE
        default: { return i; }                                              // CONSTANT
    }
}
fn value(o: u32) -> {RAW} {
    var rest = o;
    var offset = 0u;
    var inside = true;
    for (var d = i32(P[{OUT}u]) - 1; d >= 0; d--) {
        let size = size_of({OUT}u, u32(d));
        let c = i32(rest % size);
        rest /= size;
        let n = i32(size_of({IN}u, u32(d)));
        let i = source_index(c - i32(P[{START}u + u32(d)]), n);
        inside = inside && i >= 0 && i < n;
        offset += u32(max(i, 0)) * stride_of({IN}u, u32(d));
    }
    if (!inside) { return {CONSTANT}; }
    return load_raw_x(offset);
}
