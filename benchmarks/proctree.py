"""CPU seconds of every process a benchmark started, by kind, sampled from ``/proc``.

``getrusage(RUSAGE_CHILDREN)`` sums a whole process tree into one figure once it is reaped; to
say *which* process spends the time (the coordinator, its worker processes, the bots they keep,
the sandbox's helpers), :class:`TreeCpu` reads ``/proc/<pid>/stat`` of this process and all its
descendants every ``interval`` seconds in a thread and keeps each process's last reading, filed
under the kind :func:`kind_of` gives its latest command line (a process is filed by what it
runs after its exec, all its CPU included).  A process's CPU after its last sample (at most one
interval of it) is missed; :meth:`TreeCpu.stop` takes a last sample, so long-lived processes
(workers, kept bots) are counted to within that sample.  Linux only.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process itself: user + system) or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def kind_of(pid: int, root: int, cmdline: str) -> str:
    """The kind a process is filed under: ``coordinator`` (the benchmark's own process), ``bot``
    (a command naming a bot script or binary under ``bots/``), ``sandbox`` (bubblewrap), ``worker``
    (another Python process: a worker, a Dask process) or ``other``."""
    if pid == root:
        return "coordinator"
    if "/bots/" in cmdline or "_bot.py" in cmdline:
        return "bot"
    if cmdline.startswith(("bwrap", "/usr/bin/bwrap")):
        return "sandbox"
    if "python" in cmdline.split(" ", 1)[0]:
        return "worker"
    return "other"


class TreeCpu:
    """Samples the CPU of this process and its descendants (module docstring), thread by thread,
    until :meth:`stop`.  Only new process ids are read to find descendants, so a sample costs
    about one ``/proc`` listing plus a read per process (its command line) and per thread."""

    def __init__(self, interval: float = 0.05, classify: Callable[[int, int, str], str] = kind_of) -> None:
        self.interval = interval
        self.classify = classify
        self.root = os.getpid()
        self.own_cost = 0.0
        self._tree: set[int] = {self.root}
        self._foreign: set[int] = set()
        self._last: dict[tuple[int, int], tuple[str, float]] = {}  # (pid, tid) -> (thread name, cpu)
        self._kind: dict[int, str] = {}
        self._cmdlines: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tree-cpu", daemon=True)
        self._sample()  # what already runs counts from now, not from its start
        self._start = {key: cpu for key, (_, cpu) in self._last.items()}
        self._initial = set(self._tree)  # what already ran (a pool's resource tracker, say)
        self._thread.start()

    def _sample(self) -> None:
        fresh = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                pid = int(entry.name)
                if pid not in self._tree and pid not in self._foreign:
                    fresh.append(pid)
        fresh.sort()  # a parent's id is (almost always) below its child's
        for pid in fresh:
            got = _stat(pid)
            if got is not None and got[0] in self._tree:
                self._tree.add(pid)
            else:
                self._foreign.add(pid)
        for pid in self._tree:
            # read again every time: a child seen between its fork and its exec still shows its
            # parent's command line, and is filed by the program it then runs
            cmdline = _cmdline(pid)
            if (cmdline and cmdline != self._cmdlines.get(pid)) or pid not in self._kind:
                self._cmdlines[pid] = cmdline
                self._kind[pid] = self.classify(pid, self.root, cmdline)
        for pid in list(self._tree):
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
                except OSError:
                    continue
                name = raw[raw.index("(") + 1 : raw.rindex(")")]
                fields = raw[raw.rindex(")") + 2 :].split()
                self._last[(pid, int(tid))] = (name, (int(fields[11]) + int(fields[12])) / TICK)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()
        self.own_cost = time.thread_time()  # the sampler's own CPU (inside the coordinator's)

    def stop(self) -> dict[str, float]:
        """Stop sampling; CPU seconds used since the start, per kind of process."""
        return {kind: sum(v.values()) for kind, v in self.stop_threads().items()}

    def stop_threads(self) -> dict[str, dict[str, float]]:
        """Stop sampling (if still running); CPU seconds used since the start, per kind of process
        and, within it, per thread name (gRPC's threads, the main thread, ...)."""
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join()
            self._sample()
        out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for (pid, tid), (name, seconds) in self._last.items():
            label = "main" if pid == tid else name
            out[self._kind[pid]][label] += seconds - self._start.get((pid, tid), 0.0)
        return {k: dict(v) for k, v in out.items()}

    def processes(self, *, new_only: bool = False) -> dict[str, int]:
        """How many processes of each kind were seen (``new_only``: only those started after the
        sampling began, not the descendants that already ran, such as a resource tracker an
        earlier pool left)."""
        out: dict[str, int] = defaultdict(int)
        for pid, kind in self._kind.items():
            if not (new_only and pid in self._initial):
                out[kind] += 1
        return dict(out)

    def kind(self, pid: int) -> str | None:
        """The kind process ``pid`` is filed under (None: not seen in the tree)."""
        return self._kind.get(pid)
