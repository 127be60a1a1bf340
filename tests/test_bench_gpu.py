"""bench/bench_gpu.py runs end to end (a benchmark, not a timed test: only that every workload builds, runs on the
gpu backend and matches the benchmark's own references). Its workloads come from the CPU benchmarks' lists, so a
workload added there must be handled here too; a tiny scale keeps the run to seconds on lavapipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import gpu_adapter_missing

ROOT = Path(__file__).resolve().parent.parent


def test_the_gpu_benchmark_runs_every_workload_and_matches_its_references() -> None:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_gpu.py"), "--scale", "0.0001", "--repeat", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout
    assert "MISMATCH" not in table and "skipped" not in table, table
    for name in ("REDUCE", "ARGMAX DECREASING", "SPLIT", "JOIN", "ONE_HOT", "GATHER_ND1", "MVN"):
        assert f"\n{name}" in table or f" {name} " in table, (name, table)
    assert "whole run" in table
