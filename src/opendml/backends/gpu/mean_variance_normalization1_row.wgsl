    // The fused row pass (see MvnKernel: one chunk per group, a FLOAT32 output, Axes the trailing dimensions, so
    // that element j of group g is logical element g N + j of every tensor): once the segment's first invocation has
    // written the group's record (finish; the barrier makes it visible), every invocation normalizes the elements it
    // still holds and writes them, so the input is read once. COORDINATES gives the offsets y_at, s_at and b_at of
    // Output, Scale and Bias from `rest`.
    storageBarrier();
    if (valid) {
        let record = {FINAL} + 4u * g;
        let exponents = stats[record];
        let mean_hi = bitcast<f32>(stats[record + 1u]);
        let mean_lo = bitcast<f32>(stats[record + 2u]);
        let r = bitcast<f32>(stats[record + 3u]);
        for (var k = 0u; k < SLOTS; k++) {
            let j = k * lanes + lane;
            if (j < count) {
                var rest = g * {N} + j;
                var y_at = 0u;
                var s_at = 0u;
                var b_at = 0u;
{COORDINATES}
                // y[k] is the element scaled where it is finite (scaled leaves the others as they are).
                let scaled_x = select(bitcast<f32>(bits[k]), y[k], is_finite(bits[k]));
                store_raw_out(y_at, to_raw_FLOAT32(normalize(bits[k], scaled_x, exponents, mean_hi, mean_lo, r, s_at,
                                                             b_at)));
            }
        }
    }
