    // The fused row pass (see MvnKernel: one chunk per group, FLOAT32 tensors, Axes the trailing dimensions, so
    // that element j of group g is logical element g N + j of every tensor): once the segment's first invocation has
    // written the group's record (finish; the barrier makes it visible), every invocation normalizes the elements it
    // still holds and writes them, so the input is read once. The offsets of Output, Scale and Bias are their
    // group's (KEPT_COORDINATES: y_row, s_row and b_row from g) plus the element's within it (COORDINATES: y_at,
    // s_at and b_at from j).
    storageBarrier();
    if (valid) {
        let record = {FINAL} + 4u * g;
        let exponents = stats[record];
        let mean_hi = bitcast<f32>(stats[record + 1u]);
        let mean_lo = bitcast<f32>(stats[record + 2u]);
        let r = bitcast<f32>(stats[record + 3u]);
        var group_rest = g;
        var y_row = 0u;
        var s_row = 0u;
        var b_row = 0u;
{KEPT_COORDINATES}
        for (var k = 0u; k < SLOTS; k++) {
            let j = k * lanes + lane;
            if (j < count) {
                var rest = j;
                var y_at = y_row;
                var s_at = s_row;
                var b_at = b_row;
{COORDINATES}
                // y[k] is the element scaled where it is finite (scaled leaves the others as they are).
                let scaled_x = select(bitcast<f32>(bits[k]), y[k], is_finite(bits[k]));
                store_raw_out(y_at, to_raw_FLOAT32(normalize(bits[k], scaled_x, exponents, mean_hi, mean_lo, r, s_at,
                                                             b_at)));
            }
        }
    }
