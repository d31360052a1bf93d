"""The run file: which processes a local tournament run started, so a later run can reap them.

A coordinator that plays on this machine writes ``<ARENA_HOME>/runs/<db>-t<ID>.json`` when it
starts: itself, its worker processes and multiprocessing's resource tracker (each as pid + start
time, so a reused pid is never mistaken for them) and the run's *marker*, an environment variable
(``ARENA_RUN``) every worker sets and every unsandboxed bot inherits.  The file is removed when the
run ends in any way but a hard kill.

Normally nothing is left to reap: workers die with their coordinator (a parent-death signal and
a thread watching the parent; see :mod:`arena.tournament.worker`), and sandboxed bots die with
their worker (bubblewrap's ``--die-with-parent``).  :func:`reap_dead_run` is the backstop, called
by the next ``start``/``resume`` of the tournament (after it took the tournament's lease): when
the file names a coordinator that no longer runs, its workers are stopped (SIGTERM, so they stop
their bots, then SIGKILL), every process still carrying the marker is killed with its process
group, the resource tracker too, and the file is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.lifecycle import ProcessRef, kill_group_or_process, marked_processes, process_host, wait_dead
from arena.store.db import arena_home

RUN_ENV = "ARENA_RUN"
"""The environment variable that marks a run's workers and their unsandboxed bots."""
WORKER_GRACE = 3.0
"""Seconds a dead run's worker gets to stop its bots after SIGTERM before it is killed."""

log = logging.getLogger(__name__)


def run_path(database_url: str, tournament_id: int) -> Path:
    """Where the run file of this database's tournament lives (one per database and tournament:
    several databases may share a data folder)."""
    key = hashlib.sha256(database_url.encode()).hexdigest()[:12]
    return arena_home() / "runs" / f"{key}-t{tournament_id}.json"


@dataclass
class RunFile:
    """One local run's processes (see the module's documentation)."""

    path: Path
    tournament_id: int
    marker: str
    host: str
    coordinator: ProcessRef
    workers: list[ProcessRef] = field(default_factory=list)
    helpers: list[ProcessRef] = field(default_factory=list)  # the resource tracker

    @classmethod
    def new(cls, path: Path, tournament_id: int) -> RunFile:
        """This process's run of the tournament (not written yet)."""
        me = ProcessRef.of(os.getpid())
        marker = f"t{tournament_id}:{socket.gethostname()}:{me.pid}:{me.start}"
        return cls(path, tournament_id, marker, process_host(), me)

    def save(self) -> None:
        """Write the file (atomically); a data folder that cannot take it is logged, not fatal
        (the run then just cannot be reaped by the next one)."""
        try:
            self._write()
        except OSError as exc:
            log.warning("cannot record this run in %s: %s", self.path, exc)

    def _write(self) -> None:
        data: dict[str, Any] = {
            "tournament": self.tournament_id,
            "marker": self.marker,
            "host": self.host,
            "coordinator": self.coordinator.to_json(),
            "workers": [w.to_json() for w in self.workers],
            "helpers": [h.to_json() for h in self.helpers],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def note(self, workers: list[ProcessRef], helpers: list[ProcessRef]) -> None:
        """Add processes the run started (saved when something is new)."""
        new = [w for w in workers if w not in self.workers] + [h for h in helpers if h not in self.helpers]
        if new:
            self.workers += [w for w in workers if w not in self.workers]
            self.helpers += [h for h in helpers if h not in self.helpers]
            self.save()

    def remove(self) -> None:
        """The run ended: forget it."""
        with contextlib.suppress(OSError):
            self.path.unlink()

    @classmethod
    def load(cls, path: Path) -> RunFile | None:
        """The run file at ``path``, or None when there is none (or it is unreadable)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                path,
                int(data["tournament"]),
                str(data["marker"]),
                str(data["host"]),
                ProcessRef.from_json(data["coordinator"]),
                [ProcessRef.from_json(w) for w in data.get("workers", [])],
                [ProcessRef.from_json(h) for h in data.get("helpers", [])],
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring the unreadable run file %s: %s", path, exc)
            return None


def reap_dead_run(path: Path) -> list[int]:
    """Stop whatever the dead run recorded at ``path`` left running; return the pids reaped.

    Nothing is touched while the recorded coordinator still runs (a live run is not ours to
    reap), nor when the file was written on another host or in another pid namespace
    (:func:`arena.lifecycle.process_host`).
    """
    run = RunFile.load(path)
    if run is None:
        return []
    if run.host != process_host() or run.coordinator.pid == os.getpid():
        return []
    if run.coordinator.alive():
        return []
    reaped: list[int] = []
    workers = [w for w in run.workers if w.alive()]
    for w in workers:
        w.signal(signal.SIGTERM)  # a worker stops its bots, then exits
    for w in wait_dead(workers, WORKER_GRACE):
        w.signal(signal.SIGKILL)
    reaped += [w.pid for w in workers]
    marked = marked_processes(RUN_ENV, run.marker)
    for ref in marked:
        kill_group_or_process(ref, signal.SIGKILL)
    reaped += [r.pid for r in marked]
    helpers = [h for h in run.helpers if h.alive()]
    for h in wait_dead(helpers, 1.0):  # the tracker exits by itself once the workers are gone
        h.signal(signal.SIGKILL)
    reaped += [h.pid for h in helpers]
    wait_dead([*workers, *marked, *helpers], 5.0)
    if reaped:
        log.warning(
            "reaped %d process(es) left by a dead run of tournament %s", len(reaped), run.tournament_id
        )
    run.remove()
    return reaped
