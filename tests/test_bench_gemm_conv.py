"""bench/bench_gemm_conv.py runs end to end (a benchmark, not a timed test: only that every workload builds, runs and
agrees with the benchmark's float64 references): --smoke shrinks every shape to a few thousand elements and runs one
round, with the gpu column (both backends where a WebGPU adapter exists); a peer that is not installed shows as
'-', but opendml must run every workload."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import gpu_adapter_missing

ROOT = Path(__file__).resolve().parent.parent


def test_the_gemm_conv_benchmark_runs_every_workload_and_matches_its_references() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_gemm_conv.py"), "--smoke", "--gpu"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = done.stdout
    assert "MISMATCH" not in report, report
    assert "opendml: n/a" not in report and "cpu n/a" not in report, report   # opendml ran every workload
    if gpu_adapter_missing() is None:
        assert "gpu n/a" not in report and "gpu backend n/a" not in report, report
    for family in ("GEMM f32", "GEMM f16", "GEMM f32 batched", "CONV 3x3", "CONV 1x1", "CONV depthwise", "CONV 3-D",
                   "CONV transposed"):
        assert f"\n{family}" in report, (family, report)
    assert "GPU column" in report and "whole run" in report, report
