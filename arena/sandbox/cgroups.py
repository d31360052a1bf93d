"""Per-bot cgroups: a process limit, a memory limit, exact CPU accounting for a whole tree, and
a CPU share per bot (the scheduler shares the CPU between bots, not between their processes).

Works with the cgroup v1 controllers (``pids``, ``memory``, ``cpuacct``, ``cpu``) and with cgroup v2.  A
cgroup is created below the one this process is in, named after this process; empty ones that
a dead arena process left behind (a worker killed mid-match) are removed when the next is made.
Where the kernel or the container does not let us create cgroups, :meth:`BotCgroup.create`
returns None and the sandbox relies on rlimits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

from arena.pidspace import judged_here, maker_of, maker_tag

ROOT = Path("/sys/fs/cgroup")
PREFIX = "arena-bot-"  # then the maker's pid, "-n" and its pid namespace, a dash, a random id


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path ("" key for cgroup v2)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _maker(name: str) -> tuple[int, str] | None:
    """The (pid, pid namespace) of the arena process that made the bot cgroup ``name``
    (``arena-bot-<pid>-n<namespace>-<id>``); None for a name that is not a bot cgroup's."""
    return maker_of(name, PREFIX)


def _sweep(parent: Path) -> None:
    """Remove the bot cgroups in ``parent`` left behind by an arena process that died without
    removing them (a worker killed mid-match), killing what is still in them first (a bot's
    escaped descendant whose arena process and guard were both SIGKILLed).  A live maker's
    cgroups are never touched, nor those made in another pid namespace (a container sharing the
    cgroup tree): their makers' pids mean nothing here, so they cannot be judged from here (names
    of older versions, without a namespace, are judged by their pid alone, as they were)."""
    with contextlib.suppress(OSError):
        for d in parent.glob(f"{PREFIX}*-*"):
            maker = _maker(d.name)
            if maker is None or not judged_here(maker[1]) or _alive(maker[0]):
                continue
            BotCgroup({"": d}, v2=False).remove(attempts=10)


def _alive(pid: int) -> bool:
    """True unless ``pid`` is gone or a zombie (a dead process nobody has reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


class BotCgroup:
    """One bot's cgroup(s).  ``procs_files`` are the files a launcher writes the bot's pid to."""

    def __init__(self, dirs: dict[str, Path], v2: bool) -> None:
        self.dirs = dirs
        self.v2 = v2

    @property
    def procs_files(self) -> list[str]:
        """Where to write a pid to put a process (and its future children) into the cgroups."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    @classmethod
    def create(cls, memory_mb: int | None, processes: int | None) -> BotCgroup | None:
        """Create the cgroups with the limits (None: no such limit, e.g. for an unsandboxed bot,
        whose cgroup serves to find and kill its whole tree), or None when that is not possible
        here."""
        name = f"{PREFIX}{maker_tag()}{uuid.uuid4().hex[:12]}"
        own = _own_paths()
        # "cpu" only groups: every bot its own group of equal weight, so the scheduler shares the
        # CPU between bots, not between their processes (a bot of 40 spinning processes, each its
        # own session, starved its opponent into timeouts even on the CPU clock)
        v1 = [c for c in ("pids", "memory", "cpuacct", "cpu") if (ROOT / c).is_dir() and c in own]
        dirs: dict[str, Path] = {}
        try:
            if v1:
                for c in v1:
                    _sweep(ROOT / c / own[c].lstrip("/"))
                    d = ROOT / c / own[c].lstrip("/") / name
                    d.mkdir()
                    dirs[c] = d
                if "pids" in dirs and processes is not None:
                    (dirs["pids"] / "pids.max").write_text(str(processes))
                if "memory" in dirs and memory_mb is not None:
                    (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory_mb * 1024 * 1024))
                return cls(dirs, v2=False)
            if (ROOT / "cgroup.controllers").exists() and "" in own:
                parent = ROOT / own[""].lstrip("/")
                _sweep(parent)
                with contextlib.suppress(OSError):  # the bots' CPU shared per bot (see above)
                    if "cpu" not in (parent / "cgroup.subtree_control").read_text().split():
                        (parent / "cgroup.subtree_control").write_text("+cpu")
                d = parent / name
                d.mkdir()
                dirs[""] = d
                if processes is not None:
                    with contextlib.suppress(OSError):
                        (d / "pids.max").write_text(str(processes))
                if memory_mb is not None:
                    with contextlib.suppress(OSError):
                        (d / "memory.max").write_text(str(memory_mb * 1024 * 1024))
                return cls(dirs, v2=True)
        except OSError:
            cls(dirs, v2=False).remove()
        return None

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used by every process that was ever in the cgroup (read twice
        for every decision: with plain system calls, a third of the cost of a file object)."""
        try:
            if self.v2:
                for line in _read(self.dirs[""] / "cpu.stat").splitlines():
                    key, value = line.split()
                    if key == "usage_usec":
                        return int(value) / 1e6
                return None
            if "cpuacct" in self.dirs:
                return int(_read(self.dirs["cpuacct"] / "cpuacct.usage")) / 1e9
        except (OSError, ValueError, KeyError):
            return None
        return None

    def oom_kills(self) -> int:
        """How many processes of the cgroup the kernel's out-of-memory killer has killed for
        reaching its memory limit (``oom_kill`` of ``memory.events``, cgroup v2, or of
        ``memory.oom_control``, v1); 0 where the kernel does not say."""
        path = self.dirs[""] / "memory.events" if self.v2 else None
        if not self.v2 and "memory" in self.dirs:
            path = self.dirs["memory"] / "memory.oom_control"
        if path is None:
            return 0
        try:
            for line in _read(path).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def pids(self) -> set[int]:
        """The processes currently in the cgroup."""
        out: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                out |= {int(p) for p in (d / "cgroup.procs").read_text().split()}
        return out

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup (repeat until it is empty, briefly)."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self, attempts: int = 250) -> None:
        """Kill what is left and delete the cgroups (trying ``attempts`` times, 20 ms apart, while
        the killed processes exit: on a loaded machine a killed fork bomb or memory hog can take
        seconds; what reappears in the group meanwhile is killed again)."""
        self.kill_all()
        for d in self.dirs.values():
            for attempt in range(attempts):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt % 25 == 24:
                        self.kill_all()
                    time.sleep(0.02)


def _read(path: Path) -> str:
    """A small control file's text, by plain system calls.  Raises OSError."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)
