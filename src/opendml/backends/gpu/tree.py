"""Work-group tree reductions, shared by REDUCE's tree passes and MVN's statistics and merge passes.

Each segment of invocations combines its values by one fixed binary tree: at every level, part p combines part
p + half into itself. The pairs, and so the bits of a float result, are the same on every adapter and every run.

The upper levels run in workgroup memory, a barrier each. Where the adapter offers subgroups (the `subgroup`
feature), the levels whose pairs lie less than `GpuContext.subgroup_width` invocations apart (the adapter's smallest
subgroup size) run in registers instead, with subgroupShuffleDown, and without barriers. They combine the same pairs.
WebGPU does not promise that a subgroup is a run of neighbouring invocations in order, so every subgroup checks that
it is one (aligned, at least that wide); where the check fails, the segment's first invocation replays those levels
from workgroup memory, serially and in the same order. Results never depend on the subgroup size or on this check.

A shader that uses a tree takes the subgroup built-ins in its entry point (placeholder SUBGROUP_PARAMETERS) and
passes them to the tree (SUBGROUP, a vec2<u32>).
"""

from __future__ import annotations

from collections.abc import Sequence

from .context import GpuContext
from .kernel import template


def placeholders(context: GpuContext) -> dict[str, str]:
    """SUBGROUP_PARAMETERS (the end of the entry point's parameter list: the subgroup built-ins, or nothing without
    subgroups) and SUBGROUP (the value the trees take)."""
    if not context.subgroup_width:
        return {"SUBGROUP_PARAMETERS": "", "SUBGROUP": "vec2<u32>(0u)"}
    return {"SUBGROUP_PARAMETERS": (", @builtin(subgroup_invocation_id) sg_lane: u32, "
                                    "@builtin(subgroup_size) sg_size: u32"),
            "SUBGROUP": "vec2<u32>(sg_lane, sg_size)"}


def tree(context: GpuContext, name: str, value_type: str, combine: str, size: int, words: Sequence[str],
         from_words: str, broadcast: bool = False) -> str:
    """The WGSL of tree function `name` over `value_type` values and its workgroup array `name`_share of `size`
    entries. `combine` names fn(a, b) -> value_type. `words` are expressions of the value `s` of u32 scalar or vector
    type holding its bits, and `from_words` rebuilds it from w0, w1, ... (so that shuffles move bits exactly).
    With `broadcast` every part of a segment gets the result, else only part 0 does; either way the array may be
    written again only after a barrier."""
    width = context.subgroup_width
    result_doc = (", and so does every other part (it is left in the segment's first entry)" if broadcast else
                  " (the other parts' return values are partial where subgroups are used)")
    values = {"NAME": name, "T": value_type, "COMBINE": combine, "SIZE": size, "RESULT_DOC": result_doc}
    if not width:
        return template("tree.wgsl", IN_REGISTERS=0, FINISH=template("tree_memory.wgsl", **values), **values)
    if broadcast:
        result = (f"    if (part == 0u) {{ {name}_share[home] = v; }}\n    workgroupBarrier();\n"
                  f"    return {name}_share[home];\n")
    else:
        result = "    return v;\n"
    finish = template("tree_subgroup.wgsl", WIDTH=width, RETURN=result, **values)
    shuffles = "".join(f"    let w{index} = subgroupShuffleDown({word}, d);\n" for index, word in enumerate(words))
    down = f"fn {name}_down(s: {value_type}, d: u32) -> {value_type} {{\n{shuffles}    return {from_words};\n}}\n"
    return down + template("tree.wgsl", IN_REGISTERS=width // 2, FINISH=finish, **values)
