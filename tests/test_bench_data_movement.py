"""bench/bench_data_movement.py runs end to end (a benchmark, not a timed test: only that every workload builds, runs
and matches the benchmark's own references): --scale 256 shrinks every leading size to a few rows and one round."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_data_movement_benchmark_runs_every_workload_and_matches_its_references() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_data_movement.py"), "--scale", "256",
                           "--repeat", "1", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = done.stdout
    assert "MISMATCH" not in report, report
    for family in ("SLICE ", "SLICE1", "CAST FLOAT32", "CAST INT64", "PADDING CONSTANT", "PADDING REFLECTION", "TILE",
                   "GATHER rows", "GATHER last", "GATHER_ELEMENTS", "SCATTER_ND", "DEPTH_TO_SPACE", "CUMSUM last",
                   "CUMSUM axis 0", "TOP_K", "UPSAMPLE_2D NEAREST", "UPSAMPLE_2D LINEAR"):
        assert f"\n{family}" in report, (family, report)
    assert "whole run" in report, report
