"""Start-up: how long a fresh process takes to its first result, warm (numba's cache filled) and cold (an empty
cache, as right after `pip install`), each against a bare `python -c "import numba"` measured in the same run.

    python bench/bench_startup.py            # 5 warm runs of each, 2 cold ones
    python bench/bench_startup.py --runs 9 --cold-runs 3

Every measurement is a new process (wall time from start to exit, so the interpreter's own start-up counts as it
does for a user). Cold runs point NUMBA_CACHE_DIR at a new empty directory each time; warm runs share one
directory, filled by a first run that is not counted. Targets (issue 17): warm runs within 0.25 s of the bare numba
import; cold: the first result of one operator within 2.5 s, every example model within 3 s.

Large tensors (issue 31): the workload graph (a [1024, 1024] FLOAT32 layer norm with GELU, its row SUM and row
ARGMAX) and single large SUM, MVN1 (with GELU) and GATHER_ND1, each in a new process: cold (an empty cache: the
NumPy kernels answer while a background process compiles numba's, backends/cpu/background.py), then warm (the cache
the cold run filled). Each prints the seconds from the process's start to its first result (target: 3 s cold),
how long its background compile then took to finish (the caller did not wait for it), and the dispatch time once
numba's kernels run. `--large-only` runs these alone; `--no-cold-start` measures them with numba compiling in the
caller instead (opendml.backends.cpu.COLD_START = False, as before issue 31).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "examples" / "models").glob("*.json"))
CLI = [sys.executable, "-m", "opendml.cli"]
FIRST_DISPATCH = (
    "import numpy as np, opendml as dml\n"
    "device = dml.Device()\n"
    "x = dml.TensorDesc('FLOAT32', [3, 3])\n"
    "op = device.compile_operator(device.create_operator(\n"
    "    dml.ReduceOperatorDesc('SUM', x, dml.TensorDesc('FLOAT32', [1, 3]), [0])))\n"
    "assert op(np.ones((3, 3), np.float32))[0].tolist() == [[3, 3, 3]]\n"
)
#: A first small dispatch of each operator, through the graph API (x: a 3x3 FLOAT32 input, i: 3x1 UINT32 indices).
GRAPH_DISPATCH = (
    "import numpy as np, opendml as dml\n"
    "graph = dml.Graph(dml.Device())\n"
    "x = graph.input([3, 3], 'FLOAT32', name='x')\n"
    "i = graph.input([3, 1], 'UINT32', name='i')\n"
    "y = {expression}\n"
    "inputs = {{'x': np.arange(9, dtype=np.float32).reshape(3, 3), 'i': np.array([[2], [0], [1]], np.uint32)}}\n"
    "graph.compile([y])(inputs)\n"
)
OPERATORS = {
    "ARGMAX": "dml.arg_max(x, axes=[1])",
    "SPLIT": "dml.split(x, 1, [1, 2])[1]",
    "JOIN": "dml.join([x, x], 0)",
    "ONE_HOT": "dml.one_hot(i, graph.constant(np.array([[0, 1]], np.float32)), 3, 1)",
    "GATHER_ND1": "dml.gather_nd(x, i, 2, 2)",
    "MEAN_VARIANCE_NORMALIZATION1": "dml.mean_variance_normalization(x, axes=[1])",
    "ACTIVATION_SIGMOID": "dml.activation_sigmoid(x)",
}


#: The large workloads (graph API): the setup, then `run()` dispatches it once.
LARGE_SETUP = (
    "graph = dml.Graph(dml.Device())\n"
    "x = graph.input([1024, 1024], 'FLOAT32', name='x')\n"
    "i = graph.input([1024, 1], 'UINT32', name='i')\n"
    "gelu = dml.FusedActivation.gelu()\n"
    "outputs = {outputs}\n"
    "compiled = graph.compile(outputs)\n"
    "data = {{'x': np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32),\n"
    "        'i': np.arange(1024, dtype=np.uint32)[::-1].reshape(1024, 1).copy()}}\n"
    "feeds = {{name: data[name] for name in [e.name for e in graph.inputs]}}\n"
    "def run():\n"
    "    return compiled(feeds)\n"
)
LARGE = {
    "graph: MVN1+GELU [1024,1024], row SUM, row ARGMAX":
        "[y := dml.mean_variance_normalization(x, axes=[1], fused_activation=gelu), dml.reduce(y, 'SUM', axes=[1]),"
        " dml.arg_max(y, axes=[1])]",
    "SUM [1024,1024] over rows": "[dml.reduce(x, 'SUM', axes=[1])]",
    "MVN1 + GELU [1024,1024]": "[dml.mean_variance_normalization(x, axes=[1], fused_activation=gelu)]",
    "GATHER_ND1 [1024,1024] rows by [1024,1] UINT32": "[dml.gather_nd(x, i, 2, 2)]",
}
LARGE_SCRIPT = (
    "import sys, time\n"
    "start = float(sys.argv[1])\n"
    "import numpy as np, opendml as dml, opendml.backends.cpu as cpu\n"
    "cpu.COLD_START = sys.argv[2] == '1'\n"
    "{setup}"
    "run()\n"
    "first = time.time() - start\n"
    "from opendml.backends.cpu.background import COMPILER\n"
    "clock = time.perf_counter(); COMPILER.wait(); waited = time.perf_counter() - clock\n"
    "run()  # numba's kernels take over (loaded from the cache)\n"
    "steady = []\n"
    "for _ in range(5):\n"
    "    clock = time.perf_counter(); run(); steady.append(time.perf_counter() - clock)\n"
    "print(first, waited, min(steady))\n"
)


def large_run(outputs: str, cache: str, cold_start: bool) -> tuple[float, float, float]:
    """(seconds to the first result from the process's start, the background compile's wait after it, the dispatch
    time once numba's kernels run)."""
    script = LARGE_SCRIPT.format(setup=LARGE_SETUP.format(outputs=outputs))
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
    result = subprocess.run([sys.executable, "-c", script, repr(time.time()), "1" if cold_start else "0"],
                            cwd=ROOT, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"large workload failed:\n{result.stderr}")
    first, waited, steady = (float(value) for value in result.stdout.split())
    return first, waited, steady


def large(cold_start: bool) -> None:
    how = "NumPy while numba compiles in the background" if cold_start else "numba compiling in the caller"
    print(f"\nlarge tensors ({how}): seconds from process start to first result / background compile after it / "
          "dispatch")
    for label, outputs in LARGE.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = large_run(outputs, cache, cold_start)
            warm = large_run(outputs, cache, cold_start)
        met = "MET" if cold[0] <= 3.0 else "MISSED"
        print(f"{label:52} cold {cold[0]:6.2f} / {cold[1]:6.1f} / {cold[2] * 1e3:5.1f} ms   "
              f"warm {warm[0]:5.2f} / {warm[1]:4.1f} / {warm[2] * 1e3:5.1f} ms   target 3 s cold: {met}")


def timed(command: list[str], cache: str) -> float:
    """Seconds from the start of a fresh process to its exit (it must succeed)."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr}")
    return elapsed


def row(label: str, times: list[float], floor: float | None = None, target: str = "") -> None:
    text = (f"{label:62} min {min(times):6.2f}  median {statistics.median(times):6.2f}  "
            f"max {max(times):6.2f} s")
    if floor is not None:
        text += f"  (median - numba import {statistics.median(times) - floor:+.2f} s)"
    print(text + (f"  {target}" if target else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="warm runs of each command")
    parser.add_argument("--cold-runs", type=int, default=2, help="cold runs of each command")
    parser.add_argument("--no-models", action="store_true", help="skip the cold run of every example model")
    parser.add_argument("--large-only", action="store_true", help="only the large-tensor workloads")
    parser.add_argument("--no-cold-start", action="store_true", help="large workloads with COLD_START off")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cpus; load average {os.getloadavg()[0]:.2f}")
    large(not args.no_cold_start)
    if args.large_only:
        return
    print("(tensors of at most opendml.backends.cpu.SMALL_TENSOR_ELEMENTS elements run NumPy kernels where the "
          "operator has them)")
    numba_import = [sys.executable, "-c", "import numba"]
    first_dispatch = [sys.executable, "-c", FIRST_DISPATCH]
    reduce_model = [*CLI, "dispatch", "examples/models/dml_reduce.json"]
    graph_dispatches = [(f"import opendml + a first small {name} (graph API)",
                         [sys.executable, "-c", GRAPH_DISPATCH.format(expression=expression)])
                        for name, expression in OPERATORS.items()]
    with tempfile.TemporaryDirectory() as warm_cache:
        for _, command in [("", first_dispatch), ("", reduce_model), *graph_dispatches]:
            timed(command, warm_cache)              # fill the cache (not counted)
        floors = [timed(numba_import, warm_cache) for _ in range(args.runs)]
        floor = statistics.median(floors)
        print("\nwarm (numba's cache filled):")
        row("python -c 'import numba'", floors)
        for label, command in (("opendml dispatch examples/models/dml_reduce.json", reduce_model),
                               ("import opendml + a first 3x3 REDUCE SUM", first_dispatch), *graph_dispatches):
            times = [timed(command, warm_cache) for _ in range(args.runs)]
            met = statistics.median(times) - floor <= 0.25
            row(label, times, floor, f"target +0.25 s: {'MET' if met else 'MISSED'}")
    print("\ncold (an empty numba cache for every run):")
    cold: list[tuple[str, list[str], float]] = [("import opendml + a first 3x3 REDUCE SUM", first_dispatch, 2.5)]
    cold += [(label, command, 2.5) for label, command in graph_dispatches]
    if not args.no_models:
        cold += [(f"opendml dispatch {model.name}", [*CLI, "dispatch", str(model.relative_to(ROOT))], 3.0)
                 for model in MODELS]
    for label, command, limit in cold:
        times = []
        for _ in range(args.cold_runs):
            with tempfile.TemporaryDirectory() as cache:
                times.append(timed(command, cache))
        met = statistics.median(times) <= limit
        row(label, times, target=f"target {limit} s: {'MET' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
