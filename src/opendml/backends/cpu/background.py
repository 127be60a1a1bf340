"""numba's kernels compiled in another process while NumPy answers (the cpu backend's cold start).

With numba's cache empty, compiling an operator's kernel takes seconds to a minute; loading it once compiled takes
about 0.2 s. So a descriptor whose kernel this machine has not compiled yet (no marker file, below) gets a
`BackgroundKernel`: its NumPy kernel (backends/cpu/small, which works at any size) answers every dispatch until a
background process has compiled numba's kernel for the same descriptor and the same bound memory, writing numba's
on-disk cache; the first dispatch after that loads numba's kernel from the cache and every later one runs it.

A process, not a thread: compiling holds the GIL, and on a machine of two cores a thread would slow the caller down.
The process runs at a lower priority (nice 10) and compiles the jobs queued so far, one after the other; jobs queued
while it runs go to the next one, and those still queued when the caller's process exits go to a last one that
outlives it (so that the next run finds them compiled). Each job writes a marker file once its kernel is in numba's
cache, beside that cache (NUMBA_CACHE_DIR, else the package's __pycache__ as numba uses, else ~/.cache/numba); its
name is a hash of the job and of the kernels' sources, so an edited kernel is compiled again. A job that fails (its
process exits without the marker) leaves the operator on its NumPy kernel, which keeps answering.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...ops.base import OperatorDesc
from ...types import ExecutionFlags
from .. import FlatArray, Kernel

_HERE = Path(__file__).resolve().parent


def marker_directory() -> Path:
    """Where the markers live: beside numba's cache for the kernels' modules (NUMBA_CACHE_DIR, else the in-tree
    __pycache__ where it is writable, else the user-wide ~/.cache/numba, as numba chooses)."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        return Path(configured) / "opendml-compiled"
    in_tree = _HERE / "__pycache__"
    if os.access(in_tree if in_tree.exists() else _HERE, os.W_OK):
        return in_tree / "opendml-compiled"
    return Path.home() / ".cache" / "numba" / "opendml-compiled"


def _sources_stamp() -> str:
    """The kernels' sources as numba stamps them (modification time and size), and NumPy's and Python's versions."""
    stamps = sorted((path.name, path.stat().st_mtime_ns, path.stat().st_size) for path in _HERE.glob("*.py"))
    return repr((stamps, np.__version__, sys.version))


@dataclass
class Job:
    """Compiling numba's kernel of `module_name` for `desc`, called once on zeroed flat arrays of the bound
    memory's (dtype, element count, writeable) per slot (None: an unbound optional slot), inputs then outputs: a
    read-only array is another type to numba, so the compiled kernel is the one the caller's dispatches load."""

    module_name: str
    desc: OperatorDesc
    flags: ExecutionFlags
    debug: bool
    inputs: list[tuple[str, int, bool] | None]
    outputs: list[tuple[str, int, bool]]
    marker: Path = field(default=Path(), compare=False)

    def __post_init__(self) -> None:
        key = pickle.dumps((self.module_name, self.desc, self.flags, self.debug, self.inputs, self.outputs))
        digest = hashlib.sha256(key + _sources_stamp().encode()).hexdigest()[:32]
        self.marker = marker_directory() / f"{self.module_name}-{digest}"

    def run(self) -> None:
        """Compile (numba writes its cache) and mark the kernel compiled."""
        module = importlib.import_module(f"{__package__}.{self.module_name}")
        kernel = module.compile_kernel(self.desc, self.flags, self.debug)
        kernel([None if spec is None else _zeros(*spec) for spec in self.inputs],
               [_zeros(*spec) for spec in self.outputs])
        self.marker.parent.mkdir(parents=True, exist_ok=True)
        self.marker.touch()


def _zeros(dtype: str, count: int, writeable: bool) -> FlatArray:
    array = np.zeros(count, dtype)
    array.flags.writeable = writeable
    return array


def _specs(arrays: Sequence[FlatArray | None]) -> list[tuple[str, int, bool] | None]:
    return [None if array is None else (array.dtype.str, int(array.size), bool(array.flags.writeable))
            for array in arrays]


class Compiler:
    """The background processes: one at a time, each compiling the jobs queued when it started. (Dispatches from
    several threads share it: a lock guards the queue.)"""

    #: The command that runs a background process (tests replace it with one that fails).
    command: tuple[str, ...] = (sys.executable, "-c", "from opendml.backends.cpu.background import main; main()")

    def __init__(self) -> None:
        self.queued: list[Job] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.jobs: list[Job] = []   # the running process's
        self.failed: set[Path] = set()
        self.lock = threading.Lock()
        atexit.register(self.flush)

    def start(self, jobs: list[Job], *, detached: bool = False) -> subprocess.Popen[bytes] | None:
        """The process compiling `jobs`; None where none could be started (the jobs then count as failed)."""
        try:
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=detached)
        except OSError:
            self.failed.update(job.marker for job in jobs)
            return None
        assert process.stdin is not None
        try:
            process.stdin.write(pickle.dumps(jobs))
            process.stdin.close()
        except OSError:  # the process ended before reading its jobs: they fail when it is polled
            pass
        return process

    def poll(self) -> None:
        """Note a finished process's failed jobs and start the next one on the jobs queued since."""
        with self.lock:
            self._poll()

    def _poll(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                return
            self.failed.update(job.marker for job in self.jobs if not job.marker.exists())
            self.process, self.jobs = None, []
        if self.queued:
            self.jobs, self.queued = self.queued, []
            self.process = self.start(self.jobs)

    def submit(self, job: Job) -> None:
        with self.lock:
            if job not in self.queued and job not in self.jobs:
                self.queued.append(job)
            self._poll()

    def state(self, job: Job) -> str:
        """'compiled', 'failed' or 'pending'."""
        if job.marker.exists():
            return "compiled"
        self.poll()
        if job.marker.exists():
            return "compiled"
        return "failed" if job.marker in self.failed else "pending"

    def wait(self) -> None:
        """Wait for every queued job's process (tests: a reproducible hand-over)."""
        while self.process is not None or self.queued:
            process = self.process
            if process is not None:
                process.wait()
            self.poll()

    def flush(self) -> None:
        """At exit: the jobs still queued go to a process that outlives this one."""
        with self.lock:
            if self.queued:
                self.start(self.queued, detached=True)
                self.queued = []


COMPILER = Compiler()


class BackgroundKernel:
    """The NumPy kernel `first` until the background process has compiled numba's kernel (`load`), then numba's.
    The job is submitted at the first dispatch (its bound memory's dtypes and sizes are part of numba's types)."""

    def __init__(self, first: Kernel, load: Callable[[], Kernel], module_name: str, desc: OperatorDesc,
                 flags: ExecutionFlags, debug: bool) -> None:
        self.first, self.load = first, load
        self.job_of = (module_name, desc, flags, debug)
        self.job: Job | None = None
        self.kernel: Kernel | None = None
        self.owned: dict[int, FlatArray] | None = None

    def initialize(self, owned: dict[int, FlatArray]) -> None:
        """The owned-weights hook (backends/__init__.py), forwarded to the NumPy kernel now and to numba's when it
        takes over."""
        self.owned = owned
        for kernel in (self.first, self.kernel):
            hook = getattr(kernel, "initialize", None)
            if hook is not None:
                hook(owned)

    def __call__(self, inputs: Sequence[FlatArray | None], outputs: Sequence[FlatArray]) -> None:
        kernel = self.kernel
        if kernel is None:
            if self.job is None:
                self.job = Job(*self.job_of, _specs(inputs), _specs(outputs))  # type: ignore[arg-type]
                if not self.job.marker.exists():  # compiled by an earlier process: numba's kernel at once
                    COMPILER.submit(self.job)
            if COMPILER.state(self.job) != "compiled":
                self.first(inputs, outputs)
                return
            kernel = self.kernel = self.load()
            hook = getattr(kernel, "initialize", None)
            if hook is not None and self.owned is not None:
                hook(self.owned)
        kernel(inputs, outputs)


def main() -> None:
    """The background process: compile the pickled jobs on stdin, at a low priority."""
    os.nice(10)
    jobs: list[Job] = pickle.loads(sys.stdin.buffer.read())
    for job in jobs:
        job.run()


