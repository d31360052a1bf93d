"""Worker processes pinned to cores: each local worker (its referee, and the bots it starts,
which inherit the pinning) keeps to one core of its own.

Why: a match is a ping-pong between the referee and one bot at a time.  Unpinned, the kernel
wakes each side wherever a core is free, so two workers' processes keep migrating between the two
cores and every hand-off lands on a cold cache; pinned, each worker and its bots stay on their
core and the two matches do not meet.  Measured with ``benchmarks/tournament.py`` (4-player greedy
tables, 100 matches, three runs): ``--jobs 2`` 1.85-2.11x ``--jobs 1`` (steady) pinned, against
1.35-1.45x unpinned in the same runs (README, issue 20).  The same idea as fastchess's engine
affinity option.

The plan: with ``jobs`` workers and the cores this process may use (``os.sched_getaffinity``,
so ``taskset`` and cgroup limits are honoured), worker ``k`` (in start order) gets core
``cores[k]``.  Pinning is used only when it cannot unbalance the machine: at least two workers,
no more workers than cores.  ``ARENA_PIN_WORKERS=0`` (or ``pin=False``) turns it off.
A local Dask cluster (``--local-cluster N``) pins its worker processes the same way, a worker
the nanny restarts after a crash back on its old core (``cluster.LocalWorkerSetup``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from multiprocessing.context import SpawnContext
from multiprocessing.sharedctypes import Synchronized

log = logging.getLogger(__name__)

PIN_ENV = "ARENA_PIN_WORKERS"
"""Environment variable: ``0`` turns pinning off wherever the caller did not decide."""


def allowed_cores() -> tuple[int, ...]:
    """The cores this process may run on (all of them where the platform cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(os.cpu_count() or 1))


def wanted(jobs: int, pin: bool | None = None) -> tuple[int, ...] | None:
    """The cores to pin ``jobs`` workers to, in start order, or None for no pinning: ``pin``
    False, or None with ``ARENA_PIN_WORKERS=0``; fewer than two workers; more workers than cores;
    a platform without ``sched_setaffinity``."""
    if pin is None:
        pin = os.environ.get(PIN_ENV, "1").strip() not in ("0", "false", "no", "off")
    if not pin or not hasattr(os, "sched_setaffinity"):
        return None
    cores = allowed_cores()
    if jobs < 2 or jobs > len(cores):
        return None
    return cores[:jobs]


@dataclass
class Pinning:
    """What a pool's workers need to pin themselves: the cores, and a shared counter that gives
    each worker of the pool the next one (picklable into a spawned worker's initializer)."""

    cores: tuple[int, ...]
    counter: Synchronized[int]

    @classmethod
    def for_pool(cls, ctx: SpawnContext, jobs: int, pin: bool | None = None) -> Pinning | None:
        """A pinning for a new pool of ``jobs`` workers (see :func:`wanted`), or None."""
        cores = wanted(jobs, pin)
        return None if cores is None else cls(cores, ctx.Value("i", 0))

    def pin_this_process(self) -> int | None:
        """Pin the calling process to the pool's next core (:func:`pin_process`); return the
        core, or None if the kernel refused."""
        with self.counter.get_lock():
            k = self.counter.value
            self.counter.value = k + 1
        core = self.cores[k % len(self.cores)]
        return core if pin_process(core) else None


def pin_process(core: int) -> bool:
    """Pin every thread of the calling process to ``core`` (threads and processes it starts
    later inherit it); False if the kernel refused (logged)."""
    try:
        here = "/proc/self/task"
        tids = [int(t) for t in os.listdir(here)] if os.path.isdir(here) else [0]
        for tid in tids:
            os.sched_setaffinity(tid, {core})
    except OSError as exc:
        log.warning("could not pin process %d to core %d: %s", os.getpid(), core, exc)
        return False
    return True
