"""bench/bench_gpu.py runs end to end (a benchmark, not a timed test: only that every workload builds, runs on the
gpu backend and matches the benchmark's own references, and so does its minimal shader). Its workloads come from
the CPU benchmarks' lists, so a workload added there must be handled here too; a tiny scale keeps the run to
seconds on lavapipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import gpu_adapter_missing

ROOT = Path(__file__).resolve().parent.parent


def test_the_gpu_benchmark_runs_every_workload_and_its_minimal_shader_and_matches_their_references() -> None:
    reason = gpu_adapter_missing()
    if reason is not None:
        pytest.skip(f"gpu backend: {reason}")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_gpu.py"), "--scale", "0.0001", "--repeat", "1",
                           "--host-clock"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout
    assert "MISMATCH" not in table and "skipped" not in table, table
    for name in ("REDUCE", "ARGMAX DECREASING", "SPLIT", "JOIN", "ONE_HOT", "GATHER_ND1", "MVN", "GEMM",
                 "CONVOLUTION", "ACTIVATION_RELU", "ACTIVATION_SIGMOID", "ELEMENT_WISE_ADD", "SLICE"):
        assert f"\n{name}" in table or f" {name} " in table, (name, table)
    lines = table.splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("workload "))
    columns = [cell.strip() for cell in lines[header].split(" | ")]
    assert "minimal" in columns and "/minimal" in columns, columns
    rows = lines[header + 2: next(index for index in range(header, len(lines)) if lines[index].startswith("(times"))]
    # Every workload has a minimal shader: its time and opendml's ratio over it are printed.
    ratio = columns.index("/minimal")
    assert rows and all(line.split(" | ")[ratio].strip().endswith("x") for line in rows), rows
    assert any(line.startswith("opendml / minimal shader: geometric mean ") and f"over {len(rows)} workloads" in line
               for line in lines), table
    assert "HOST clock" in table and "whole run" in table
