"""Elementwise passes whose invocations each write a run of consecutive output elements (issue 29).

Where a shader is specialized (specialize.ENABLED) and the output is a 32- or 64-bit type whose innermost merged
dimension is contiguous, an invocation of the data-movement kernels (SPLIT/JOIN, ONE_HOT, GATHER_ND1) writes a run
of LENGTH logical elements of one row, o, o + STEP, ..., o + (LENGTH - 1) x STEP, that lie STEP element offsets
apart in the output (and in the source they are copied from): the work that depends only on the row (an index
read and decoded, a gathered row's start, a slice's offset) is done once per run instead of once per element,
which is what costs on lavapipe (measured: ONE_HOT [131072] depth 64, four elements per invocation, half the time
of one). STEP consecutive invocations share a block of LENGTH x STEP consecutive elements, so that the
invocations of a subgroup touch consecutive words at each step of their runs, as a GPU's memory wants. The
operator supplies `fn run(o: u32, at: u32)`, which writes its run from element o at output element offset at
with store_raw_out; the entry point is rendered here in place of the elementwise Output's. 8- and 16-bit outputs
keep the Output's word-ownership pass (no word is written by two invocations), and so does the generic path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd

from ...tensor import TensorDesc
from .context import WORKGROUP_SIZE, GpuContext, group_counts
from .elementwise import Params
from .kernel import ElementwiseSource, Pass, compile_pass

#: The longest run an invocation writes (four gain most of what more would on lavapipe, and keep a GPU's
#: invocations many), and the most invocations that share a block of runs.
RUN, LANES = 4, 16


@dataclass(frozen=True)
class Run:
    """A run's elements (`length`) and the elements between two of them (`step`, the invocations sharing a block)."""

    length: int
    step: int


def contiguous_run(sizes: Sequence[int], strides: Sequence[int]) -> int:
    """The elements of a layout's innermost dimensions that lie at consecutive offsets (stride 1, then each outer
    one's stride the product of the sizes inside it), size-1 dimensions skipped: 1 where the innermost stride is
    not 1."""
    span = 1
    for size, stride in reversed([(size, stride) for size, stride in zip(sizes, strides, strict=True) if size > 1]):
        if stride != span:
            break
        span *= size
    return span


def run_layout(output: TensorDesc, *inner: int) -> Run:
    """The run an invocation may write (length 1: none): the largest powers of two, length up to RUN and then step
    up to LANES, whose product (a block) divides the output's contiguous innermost span (contiguous_run) and every
    size in `inner` (the operator's own rows of consecutive elements, which a block must not cross); length 1 for
    outputs of 8 or 16 bits."""
    if output.data_type.element_size < 4:
        return Run(1, 1)
    common = gcd(contiguous_run(output.sizes, output.element_strides), *inner)
    length = RUN
    while common % length:
        length //= 2
    step = LANES
    while common % (length * step):
        step //= 2
    return Run(length, step)


class RunSource(ElementwiseSource):
    """An elementwise pass (inputs, output) whose invocation t writes a run: the body defines `fn run(o: u32,
    at: u32)`; t's run starts at element (t / step) x length x step + t % step."""

    def __init__(self, inputs: Sequence[tuple[str, TensorDesc]], output: TensorDesc, params: Params, run: Run
                 ) -> None:
        super().__init__(inputs, output, params)
        self.run = run

    def compile(self, context: GpuContext, body: str) -> Pass:
        output, run = self.output, self.run
        text = self.render(body, context.f16)
        assert text.endswith(output.main())
        main = (f"@compute @workgroup_size({WORKGROUP_SIZE})\n"
                f"fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
                f"@builtin(num_workgroups) groups: vec3<u32>) {{\n"
                f"    let t = invocation(gid, groups);\n"
                f"    if (t >= {output.count // run.length}u) {{ return; }}\n"
                f"    let o = (t / {run.step}u) * {run.length * run.step}u + t % {run.step}u;\n"
                f"    run(o, offset_of({output.block}u, o));\n}}\n")
        return compile_pass(context, text[: len(text) - len(output.main())] + main, len(self.inputs) + 1,
                            self.params, group_counts(output.count // run.length))
