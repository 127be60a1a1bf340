"""The harness the operator benchmarks share: optional peers, interleaved timing over a memory-copy floor,
result checks into poisoned buffers, and the report.

A benchmark script holds only its workloads: for each, the inputs, the opendml descriptor, each peer's call, the
floor's bytes and the target. Its `bench_workload` builds those as `Runner`s and hands them to `measure`; its
`SUITE` (a `Suite`) names the workloads and words the report, and `run_suite(SUITE)` is the whole run. The scripts
import this module by its bare name (`python bench/bench_X.py` puts bench/ first on sys.path).

What every script measures the same way:
- each implementation computes into caller-provided, preallocated outputs; the outputs are poisoned (NaN, or the
  largest integer) before a single checked run, so a result that the implementation did not write shows;
- the implementations of a workload are timed interleaved, round after round (floor, opendml, NumPy, ... then
  again), with gc off, so drift hits all of them alike; each is reported as its median time over the floor's;
- PyTorch runs with its default thread count and with one thread; ONNX Runtime with one intra-op thread and
  spinning off, through an io_binding to OrtValues over the caller's arrays;
- a peer that is not installed is shown as "-", one that fails on a workload as "-" with its error in the checks.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

import opendml as dml


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


torch: Any = _optional("torch")
onnx: Any = _optional("onnx")
ort: Any = _optional("onnxruntime") if onnx is not None else None
numba: Any = _optional("numba")

Array = np.ndarray[Any, Any]

FLOOR, OPENDML, NUMPY, TORCH, TORCH1, ORT = "floor", "opendml", "NumPy", "PyTorch", "PyTorch 1T", "ONNX Runtime"
PEERS = (NUMPY, TORCH, TORCH1, ORT)
COLUMNS = (OPENDML, *PEERS)

DISPATCH_TARGET_US = 15.0  # opendml's execute with reused Bindings on a tiny operator


class Unavailable(Exception):
    """Raised by a script's opendml builder where opendml does not implement the workload's operator yet: the
    peers are still timed, and opendml's column shows "-" with this reason in the checks."""


# -- implementations ------------------------------------------------------------------------------------------

def _nothing() -> None:
    return None


@dataclass
class Runner:
    """One implementation of one workload: `run` computes into `outs` (preallocated; poisoned before the checked
    run); `result` returns what it computed (by default `outs[0]`); `before` runs untimed before every run."""

    name: str
    run: Callable[[], object]
    outs: list[Array]
    before: Callable[[], None] = _nothing
    note: str = ""
    result_of: Callable[[], Array] | None = None
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)

    def result(self) -> Array:
        return self.outs[0] if self.result_of is None else self.result_of()


def copy_floor(source: Array, name: str = FLOOR) -> Runner:
    """np.copyto of `source` into a same-size preallocated array: its bytes read once and written once."""
    target = np.empty_like(source)
    return Runner(name, lambda: np.copyto(target, source), [target])


def torch_threads(threads: int) -> Callable[[], None]:
    """A Runner's `before` that puts PyTorch on `threads` threads (untimed)."""

    def before() -> None:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    return before


def ort_runner(graph: Any, opset: int, ir_version: int, inputs: dict[str, Array], outputs: dict[str, Array],
               outs: list[Array] | None = None, threads: int = 1) -> Runner:
    """ONNX Runtime on `graph` (checked): `threads` intra-op threads (default one), no spinning, an io_binding of
    each named input and output to an OrtValue over the caller's array. `outs` (default: the output arrays) are what
    the checks read."""
    helper = onnx.helper
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    keep = []  # the OrtValues wrap the arrays' memory: the closure keeps them alive
    for name, array in inputs.items():
        value = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_input(name, value)
        keep.append(value)
    for name, array in outputs.items():
        value = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_output(name, value)
        keep.append(value)

    def run_bound(_keep: list[Any] = keep) -> None:
        session.run_with_iobinding(binding)

    return Runner(ORT, run_bound, list(outputs.values()) if outs is None else outs)


# -- timing -----------------------------------------------------------------------------------------------------

def time_interleaved(runners: list[Runner], repeat: int) -> None:
    """Each round runs every implementation once, in order; median over rounds. gc is off while timing."""
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for runner in runners:
                runner.before()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                runner.run()
                wall1, cpu1 = time.perf_counter(), time.process_time()
                runner.times.append(wall1 - wall0)
                runner.cpu_times.append(cpu1 - cpu0)
    finally:
        gc.enable()


def median(values: list[float]) -> float:
    return statistics.median(values)


def per_call_us(call: Callable[[], object], count: int) -> float:
    """Median wall time of one call in microseconds, after up to 200 warm-up calls; gc off while timing."""
    return call_times_us(call, count)[0]


def call_times_us(call: Callable[[], object], count: int, before: Callable[[], object] | None = None
                  ) -> tuple[float, float]:
    """(median wall time, median CPU time of the calling thread) of one call in microseconds, after up to 200
    warm-up calls; gc off while timing. Calls follow each other at once, or each one after `before` (not timed: a
    device's wait for its earlier work, say). On a shared machine the thread's CPU time leaves out the time others
    took the core."""
    for _ in range(min(count, 200)):
        call()
    walls, cpus = [], []
    clock, thread_clock = time.perf_counter_ns, time.thread_time_ns
    gc.collect()
    gc.disable()
    try:
        for _ in range(count):
            if before is not None:
                before()
            start, start_cpu = clock(), thread_clock()
            call()
            cpus.append(thread_clock() - start_cpu)
            walls.append(clock() - start)
    finally:
        gc.enable()
    return statistics.median(walls) / 1000.0, statistics.median(cpus) / 1000.0


# -- checks -----------------------------------------------------------------------------------------------------

def poison(array: Array) -> None:
    """Fills an output buffer with a value no correct run leaves there, to show the run wrote into it."""
    if array.dtype.kind == "f":
        array.fill(np.nan)
    else:
        array.fill(np.iinfo(array.dtype).max)


def agrees_loosely(mine: Array, theirs: Array) -> bool:
    """Whether a peer's result matches opendml's within 1e-3 (relative, and absolute over the result's scale)."""
    if mine.shape != theirs.shape:
        return False
    a, b = mine.astype(np.float64), theirs.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-3 * scale))


# (runner, opendml's runner, the max abs errors so far by name, to record its own in) -> a problem, or None.
# Called after the runner's single checked run, opendml's first. opendml's runner is None only in a script whose
# builder raises Unavailable (its checks must not need it).
Check = Callable[[Runner, Any, dict[str, float]], str | None]


# -- one workload -----------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    label: str
    target: float  # the ratio over the floor opendml should stay within
    floor_s: float
    ratios: dict[str, float | None]
    floor_best_s: float
    best_ratios: dict[str, float | None]
    medians: dict[str, float]  # every timed runner's median, extras included
    missing: dict[str, str]
    problems: list[str]
    errors: dict[str, float]
    notes: list[str]
    first_call_s: float
    cpu_per_wall: dict[str, float]


def measure(*, label: str, target: float, repeat: int, opendml: Callable[[], Runner], floor: Callable[[], Runner],
            with_numpy: Callable[[], Runner], with_torch: Callable[[int, str], Runner],
            with_ort: Callable[[], Runner], check: Check,
            extras: Callable[[], list[Runner]] = list) -> Outcome:
    """Builds opendml (its first call timed), the floor, then each available peer (`with_torch(threads, name)`,
    once with the default thread count and once with one), and `extras` (timed but neither checked nor in the
    table); checks each result once; times them all interleaved."""
    missing: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []

    start = time.perf_counter()
    try:
        mine: Runner | None = opendml()
    except Unavailable as error:
        mine, missing[OPENDML] = None, f"n/a ({error})"
    if mine is not None:
        mine.run()
    first_call_s = time.perf_counter() - start if mine is not None else math.nan
    runners = [floor(), *([] if mine is None else [mine])]

    def add(name: str, build: Callable[[], Runner], available: bool) -> None:
        if not available:
            missing[name] = "not installed"
            return
        try:
            runner = build()
            runner.before()
            runner.run()
        except Exception as error:  # a peer without this operator or type: shown as n/a
            missing[name] = f"n/a ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
            return
        runners.append(runner)

    add(NUMPY, with_numpy, True)
    default_threads = torch.get_num_threads() if torch is not None else 0
    add(TORCH, lambda: with_torch(default_threads, TORCH), torch is not None)
    add(TORCH1, lambda: with_torch(1, TORCH1), torch is not None)
    add(ORT, with_ort, ort is not None)
    checked = runners[1:]
    runners += extras()

    # Correctness, once: every implementation writes into poisoned outputs.
    errors: dict[str, float] = {}
    for runner in checked:
        runner.before()
        for out in runner.outs:
            poison(out)
        runner.run()
        problem = check(runner, mine, errors)
        if problem is not None:
            problems.append(problem)
        if runner.note:
            notes.append(f"{runner.name}: {runner.note}")

    for runner in runners:  # warm-up: caches, thread pools, page faults
        runner.before()
        runner.run()
    time_interleaved(runners, repeat)
    if torch is not None:
        torch.set_num_threads(default_threads)

    floor_s, floor_best_s = median(runners[0].times), min(runners[0].times)
    ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    best_ratios: dict[str, float | None] = {name: None for name in COLUMNS}
    medians: dict[str, float] = {}
    cpu_per_wall: dict[str, float] = {}
    for runner in runners:
        medians[runner.name] = median(runner.times)
        cpu_per_wall[runner.name] = sum(runner.cpu_times) / sum(runner.times)
        if runner.name in ratios:
            ratios[runner.name] = medians[runner.name] / floor_s
            best_ratios[runner.name] = min(runner.times) / floor_best_s
    return Outcome(label, target, floor_s, ratios, floor_best_s, best_ratios, medians, missing, problems, errors,
                   notes, first_call_s, cpu_per_wall)


# -- startup ----------------------------------------------------------------------------------------------------

def startup_child(run: str, check: str) -> str:
    """A fresh interpreter's code that times importing numpy + opendml, then `run` (from the inputs to the first
    result), then runs `check` (an assert on that result) and prints both times as JSON."""
    return "\n".join([
        "",
        "import json, time",
        "start = time.perf_counter()",
        "import numpy as np",
        "import opendml as dml",
        "imported = time.perf_counter()",
        textwrap.dedent(run).strip("\n"),
        "done = time.perf_counter()",
        textwrap.dedent(check).strip("\n"),
        'print(json.dumps({"import_s": imported - start, "first_result_s": done - imported}))',
    ]) + "\n"


def startup(child_code: str, cache_dir: str) -> dict[str, float]:
    """Runs `child_code` (which prints {"import_s", "first_result_s"} as JSON) in a fresh interpreter with numba's
    cache in `cache_dir`; adds the wall time the parent measured as "total_s"."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    child = subprocess.run([sys.executable, "-c", child_code], env=env, capture_output=True, text=True,
                           check=False)
    total = time.perf_counter() - start
    if child.returncode != 0:
        raise RuntimeError(f"the startup child failed:\n{child.stderr[-2000:]}")
    parts: dict[str, float] = json.loads(child.stdout.strip().splitlines()[-1])
    parts["total_s"] = total
    return parts


# -- report -----------------------------------------------------------------------------------------------------

def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _flagged(outcome: Outcome, name: str) -> bool:
    return any(problem.startswith(name + " ") for problem in outcome.problems)


def print_table(outcomes: list[Outcome], best: bool = False) -> None:
    label_width = max(len("workload"), *(len(outcome.label) for outcome in outcomes))
    headers = ["workload".ljust(label_width), "floor ms", *COLUMNS]
    widths = [len(header) for header in headers]
    rows = []
    for outcome in outcomes:
        floor_s, ratios = (outcome.floor_best_s, outcome.best_ratios) if best else (outcome.floor_s, outcome.ratios)
        cells = [outcome.label.ljust(label_width), f"{floor_s * 1e3:.2f}"]
        cells += [fmt_ratio(ratios[name]) + ("!" if _flagged(outcome, name) else "") for name in COLUMNS]
        rows.append(cells)
        widths = [max(width, len(cell)) for width, cell in zip(widths, cells, strict=True)]

    def line(cells: list[str]) -> str:
        return " | ".join([cells[0].ljust(widths[0]), *(cell.rjust(width)
                                                        for cell, width in zip(cells[1:], widths[1:], strict=True))])

    print(line(headers))
    print("-+-".join("-" * width for width in widths))
    for cells in rows:
        print(line(cells))
    if best:
        print("(fastest of the rounds over the floor's fastest: less sensitive to other load on the machine)")
    else:
        print("(ratios: median time / median floor time; lower is better; '!' = result mismatch, see checks; "
              "'-' = peer not installed or without this operator)")


def verdict(outcome: Outcome, require_correct: bool = False) -> tuple[bool, str]:
    """Whether opendml met its floor target and beat the fastest correct peer, and the line that says so;
    `require_correct`: a mismatch of opendml's own result misses the floor target too."""
    mine = outcome.ratios[OPENDML]
    if mine is None:
        return False, f"MISS  {outcome.label}: opendml {outcome.missing.get(OPENDML, 'not run')}"
    peers = {name: ratio for name, ratio in outcome.ratios.items()
             if name in PEERS and ratio is not None and not _flagged(outcome, name)}
    floor_ok = mine <= outcome.target and not (require_correct and _flagged(outcome, OPENDML))
    text = (f"{outcome.label}: opendml {mine:.2f}x floor (target <= {outcome.target:.1f}x) "
            f"{'MET' if floor_ok else 'MISSED'}")
    if peers:
        fastest = min(peers, key=lambda name: peers[name])
        peer_ok = mine <= peers[fastest]
        text += (f"; vs fastest peer {fastest} {peers[fastest]:.2f}x: {mine / peers[fastest]:.2f}x its time "
                 f"{'MET' if peer_ok else 'MISSED'}")
    else:
        peer_ok = True
        text += "; no peer to compare"
    return floor_ok and peer_ok, ("OK    " if floor_ok and peer_ok else "MISS  ") + text


def numba_threads() -> int | str:
    return int(numba.get_num_threads()) if numba is not None else "n/a"


def errors_and_first_call(outcome: Outcome) -> str:
    """Each result's max abs error, then the time of opendml's first call."""
    errors = ", ".join(f"{name} {error:.2g}" for name, error in outcome.errors.items())
    return f"{errors}; opendml first call (compile + run) {outcome.first_call_s * 1e3:.0f} ms"


class Labelled(Protocol):
    @property
    def label(self) -> str: ...


W = TypeVar("W", bound=Labelled)


@dataclass(frozen=True)
class Suite(Generic[W]):
    """What one script's run consists of, and the wording of its report's sections."""

    doc: str | None  # the script's docstring: its first line is the --help description
    workloads: Sequence[W]
    bench: Callable[[dml.Device, W, int, np.random.Generator], Outcome]  # (device, workload, repeat, rng)
    seed: int
    full_repeat: int  # rounds per workload without --quick (5 with it)
    quick_help: str
    targets_title: str
    opendml_threads: str  # how opendml runs, for the threads section
    ort_model: str  # what ONNX Runtime runs ("one-node opset-18 model"), for the threads section
    checks_title: str
    dispatch_title: str  # "{count}" stands for the number of calls
    dispatch: Callable[[dml.Device, int], dict[str, float]]  # (device, count) -> microseconds by name
    dispatch_width: int
    floor_threads: str = "np.copyto, 1 thread"
    numpy_threads: str = "1 thread"
    check_summary: Callable[[Outcome], str] = errors_and_first_call  # the text after "<label>: " on a checks line
    dispatch_target_us: float | None = DISPATCH_TARGET_US  # None: no target on the reused-Bindings line
    # the startup section: the fresh interpreter's first result ("a [256,256] SUM"; None: no section and no
    # --no-startup option), the child's code from its inputs to that result, then the check of it (startup_child)
    startup_of: str | None = None
    startup_run: str = ""
    startup_check: str = ""
    startup_steps: str = "then Device/compile/first execute"  # what the child's first_result_s covers
    best_table: bool = False  # a second table of best times over the floor's best
    explain_threads: bool = True
    cpu_label: str = "process CPU/wall in timed calls"
    require_correct: bool = False  # see verdict
    count_met: bool = False  # a last targets line saying whether all were met
    table_note: Callable[[Outcome], str | None] | None = None  # a line under the table per workload
    only_option: bool = False  # --only TEXT: the workloads whose label contains TEXT


def parse_args(suite: Suite[Any]) -> argparse.Namespace:
    """The options every script has (--quick, --repeat, and --no-startup / --only where the suite has them);
    fills in `repeat` and `dispatch_count`."""
    parser = argparse.ArgumentParser(description=(suite.doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=suite.quick_help)
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per workload")
    if suite.startup_of is not None:
        parser.add_argument("--no-startup", action="store_true", help="skip the fresh-interpreter startup timing")
    if suite.only_option:
        parser.add_argument("--only", default=None, help="run only the workloads whose label contains this text")
    args = parser.parse_args()
    args.repeat = args.repeat if args.repeat is not None else (5 if args.quick else suite.full_repeat)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    args.dispatch_count = 3000 if args.quick else 20000
    return args


def _print_threads(suite: Suite[Any], outcomes: list[Outcome]) -> None:
    declared = {
        FLOOR: suite.floor_threads,
        OPENDML: suite.opendml_threads,
        NUMPY: suite.numpy_threads,
        TORCH: f"torch.get_num_threads() = {torch.get_num_threads()} (default)" if torch is not None else "-",
        TORCH1: "torch.set_num_threads(1)" if torch is not None else "-",
        ORT: (f"{suite.ort_model}, io_binding to preallocated OrtValues; intra_op_num_threads = 1, inter_op = 1, "
              "spinning off") if ort is not None else "-",
    }
    print("Threads:")
    if suite.explain_threads:
        print("  (process CPU/wall above 1 means more than one thread was busy; below 1, the process waited)")
    for name in (FLOOR, *COLUMNS):
        shares = [outcome.cpu_per_wall[name] for outcome in outcomes if name in outcome.cpu_per_wall]
        measured = (f"{suite.cpu_label} median {statistics.median(shares):.2f}, max {max(shares):.2f}"
                    if shares else "not run")
        print(f"  {name:<13} {declared[name]}; {measured}")


def _print_checks(suite: Suite[Any], outcomes: list[Outcome]) -> None:
    print(suite.checks_title)
    for outcome in outcomes:
        print(f"  {outcome.label}: {suite.check_summary(outcome)}")
        for problem in outcome.problems:
            print(f"    MISMATCH: {problem}")
        for name, why in outcome.missing.items():
            if why != "not installed":
                print(f"    {name}: {why}")
        for note in dict.fromkeys(outcome.notes):
            print(f"    {note}")


def _print_dispatch(suite: Suite[Any], results: dict[str, float], count: int) -> None:
    print(suite.dispatch_title.format(count=count))
    for name, micros in results.items():
        mark = ""
        if suite.dispatch_target_us is not None and name == "opendml execute, reused Bindings":
            met = "MET" if micros < suite.dispatch_target_us else "MISSED"
            mark = f"  (target < {suite.dispatch_target_us:.0f} us: {met})"
        print(f"  {name:<{suite.dispatch_width}} {micros:8.2f} us{mark}")


def _print_startup(suite: Suite[Any]) -> None:
    print(f"Startup (fresh `python -c` to the first result of {suite.startup_of}; wall time measured by the parent):")
    with tempfile.TemporaryDirectory(prefix="opendml-numba-cache-") as cache_dir:
        for kind in ("cold numba cache", "warm numba cache"):
            parts = startup(startup_child(suite.startup_run, suite.startup_check), cache_dir)
            print(f"  {kind}: {parts['total_s']:.2f} s total (import numpy + opendml {parts['import_s']:.2f} s, "
                  f"{suite.startup_steps} {parts['first_result_s']:.2f} s)")


def run_suite(suite: Suite[W]) -> int:
    """Parses the options, benchmarks the workloads, prints the report; the script's exit status."""
    args = parse_args(suite)
    workloads = [work for work in suite.workloads
                 if not suite.only_option or args.only is None or args.only in work.label]

    began = time.perf_counter()
    print(f"opendml {dml.__version__} | Python {platform.python_version()} | NumPy {np.__version__} | "
          f"numba {numba.__version__ if numba is not None else '-'} | "
          f"torch {torch.__version__ if torch is not None else '-'} | "
          f"onnxruntime {ort.__version__ if ort is not None else '-'}")
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{args.repeat} interleaved rounds per workload")
    if os.getloadavg()[0] > 0.5:
        print("WARNING: the machine is busy (load average above 0.5); timings are noisy")
    device = dml.Device()
    rng = np.random.default_rng(suite.seed)

    outcomes = []
    for work in workloads:
        outcomes.append(suite.bench(device, work, args.repeat, rng))
        gc.collect()  # the workload's arrays go before the next one allocates its own
        print(f"  done: {work.label} ({time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)

    print()
    print_table(outcomes)
    for outcome in outcomes:
        note = suite.table_note(outcome) if suite.table_note is not None else None
        if note is not None:
            print(note)
    print()
    print(suite.targets_title)
    all_met = True
    for outcome in outcomes:
        met, text = verdict(outcome, suite.require_correct)
        all_met &= met
        print("  " + text)
    if suite.count_met:
        print(f"  {'all targets met' if all_met else 'NOT all targets met'}")
    if suite.best_table:
        print()
        print("The same rounds, best time of each over the floor's best:")
        print_table(outcomes, best=True)
    print()
    _print_threads(suite, outcomes)
    print()
    _print_checks(suite, outcomes)
    print()
    _print_dispatch(suite, suite.dispatch(device, args.dispatch_count), args.dispatch_count)
    if suite.startup_of is not None and not args.no_startup:
        print()
        _print_startup(suite)

    print()
    print(f"load average {os.getloadavg()[0]:.2f} at end; whole run {time.perf_counter() - began:.0f} s")
    return 0
