// MVN output pass: element o normalized (see normalize) and rounded once to the output's type.
// COORDINATES: o's coordinates over the merged dimensions, found once, give the offsets x, s, b of Input, Scale
// and Bias and the group index g (each kept dimension's row-major weight among the kept dimensions, 0 along Axes;
// see MvnKernel._coordinates). FINAL is a u32 expression, TYPE the output's type.
fn value(o: u32) -> u32 {
    var rest = o;
    var x = 0u;
    var s = 0u;
    var b = 0u;
    var g = 0u;
{COORDINATES}
    let record = {FINAL} + 4u * g;
    let mean_hi = bitcast<f32>(load_raw_stats(record + 1u));
    let mean_lo = bitcast<f32>(load_raw_stats(record + 2u));
    let r = bitcast<f32>(load_raw_stats(record + 3u));
    let exponents = load_raw_stats(record);
    let x_bits = bitcast<u32>(load_x(x));
    return to_raw_{TYPE}(normalize(x_bits, scaled(x_bits, record_e(exponents)), exponents, mean_hi, mean_lo, r, s, b));
}
