    // The levels left pair invocations less than {WIDTH} apart: the same pairs, in registers, a shuffle each.
    let rest = half * 2u;
    for (; half > 0u; half /= 2u) {
        v = {COMBINE}(v, {NAME}_down(v, half * step));
    }
    // Those pairs are this subgroup's lanes only where it is one run of invocations in order, aligned to {WIDTH} and
    // at least {WIDTH} long. Where it is not, part 0 replays the levels left from workgroup memory (no other invocation
    // touches its entries until the next barrier), in the same order.
    let first = subgroupBroadcastFirst(lane);
    let linear = subgroupAll(lane == first + sg.x) && sg.y >= {WIDTH}u && sg.y % {WIDTH}u == 0u &&
                 first % {WIDTH}u == 0u;
    if (part == 0u && !linear) {
        for (var h = rest / 2u; h > 0u; h /= 2u) {
            for (var i = 0u; i < h; i++) {
                {NAME}_share[home + i] = {COMBINE}({NAME}_share[home + i], {NAME}_share[home + i + h]);
            }
        }
        v = {NAME}_share[home];
    }
{RETURN}