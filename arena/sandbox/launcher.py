"""Start a bot from a script or an executable and make sure nothing of it outlives its match.

The interpreter comes from the file's shebang, else from its extension (``.py`` runs under the
arena's own Python, ``.js``/``.mjs`` under ``node``, ``.sh`` under ``bash``), else the file must be
executable.  The bot gets the referee address as a flag (``--address=ADDR``) and in the
environment (``ARENA_ADDRESS``); its token only in the environment (``ARENA_TOKEN``), never on a
command line, where every process on the host could read it (``/proc/PID/cmdline``).  It runs in
its own process group; its stdout and stderr are captured to bounded log files (and the last few
KiB kept in memory as evidence).

Nothing of a bot outlives it.  Sandboxed, bubblewrap's PID namespace and ``--die-with-parent``
see to that.  Unsandboxed, the bot runs below a guard (:mod:`arena.sandbox.guard`): a tiny parent
that is the bot's child subreaper (so even a double-forked ``setsid()`` grandchild stays below
it), kills the bot's whole tree when the bot ends or the arena dies, and joins the bot's cgroup
where cgroups can be created (then :meth:`BotProcess.stop` also empties the cgroup).
:func:`kill_all_bots` kills every bot a process has launched, at once, from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from arena.safetext import printable

from . import guard
from .bwrap import SOCKET_DIR, require_bwrap, wrap
from .cgroups import BotCgroup
from .limits import SandboxLimits
from .status import Probed, ProcessStatus

INTERPRETERS = {".py": [sys.executable], ".js": ["node"], ".mjs": ["node"], ".cjs": ["node"], ".sh": ["bash"]}
TAIL_BYTES = 4096
# Past its output limit a pipe is read at most this fast: reading a flood only to drop it cost the
# referee's event loop several seconds of CPU in a match (a bot writing 64 KiB chunks in a loop on
# both pipes), uncharged to the bot and slowing its opponents; now such a bot blocks on its own
# writes, and the tail (for a crash's detail) stays current.
DRAIN_BYTES_PER_SECOND = 4 << 20
GUARD = Path(guard.__file__).resolve()
GUARD_GRACE = 3.0  # seconds for a guard to kill and reap its bot's tree before it is SIGKILLed

_live: set[BotProcess] = set()  # started and not yet stopped (for kill_all_bots)
_live_lock = threading.Lock()


class BotLaunchError(Exception):
    """A bot that cannot be started: missing file, unknown interpreter, not executable."""


def launch_command(path: str | os.PathLike[str]) -> list[str]:
    """The argv that starts the bot at ``path`` (without the address and token flags)."""
    p = Path(path).resolve()
    if not p.exists():
        raise BotLaunchError(f"{path}: no such file")
    if not p.is_file():
        raise BotLaunchError(f"{path}: not a file (give the bot's script or executable)")
    try:
        with p.open("rb") as fh:
            first = fh.readline(512)
    except OSError as exc:
        raise BotLaunchError(f"{path}: cannot read it: {exc.strerror}") from None
    if p.suffix == ".py":
        return [sys.executable, str(p)]  # the arena's Python has the SDK installed
    if first.startswith(b"#!"):
        try:
            interpreter = shlex.split(first[2:].decode("utf-8").strip())
        except (UnicodeDecodeError, ValueError):
            raise BotLaunchError(f"{path}: unreadable shebang line") from None
        if interpreter:
            return [*interpreter, str(p)]
    if p.suffix in INTERPRETERS:
        return [*INTERPRETERS[p.suffix], str(p)]
    if os.access(p, os.X_OK):
        return [str(p)]
    raise BotLaunchError(
        f"{path}: not executable and no known interpreter; add a shebang line, use a .py/.js/.sh "
        f"extension, or chmod +x it"
    )


class _Capture:
    """Drain one pipe: the first ``limit`` bytes go to a file, the last few KiB stay in memory.
    Once ``limit`` bytes have come, the pipe is read no faster than :data:`DRAIN_BYTES_PER_SECOND`."""

    def __init__(self, stream: asyncio.StreamReader, sink: IO[bytes] | None, limit: int) -> None:
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0
        self.written = 0
        self.read = 0  # bytes read from the pipe
        self.task = asyncio.create_task(self._run(stream, sink, limit))

    async def _run(self, stream: asyncio.StreamReader, sink: IO[bytes] | None, limit: int) -> None:
        try:
            while chunk := await stream.read(65536):
                self.tail.append(chunk)
                self.tail_size += len(chunk)
                while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
                    self.tail_size -= len(self.tail.popleft())
                if sink is not None:
                    room = max(0, limit - self.written)
                    if room:
                        sink.write(chunk[:room])
                        self.written += min(room, len(chunk))
                    self.dropped += max(0, len(chunk) - room)
                self.read += len(chunk)
                if self.read > limit:  # a flood: no faster than the drain rate
                    await asyncio.sleep(len(chunk) / DRAIN_BYTES_PER_SECOND)
        finally:
            if sink is not None:
                if self.dropped:
                    sink.write(f"\n[arena: {self.dropped} further bytes dropped]\n".encode())
                sink.close()

    def text(self) -> str:
        """The tail, decoded, its control characters escaped (:func:`arena.safetext.printable`:
        it goes into forfeit details, the database and the operator's terminal)."""
        return printable(b"".join(self.tail)[-TAIL_BYTES:].decode("utf-8", "replace"))


MAX_LOG_STEM = 150
"""Bytes (UTF-8) of a bot log's name before ``.stdout.log``: a file system takes 255."""


def fit_log_stem(stem: str) -> str:
    """``stem`` cut to :data:`MAX_LOG_STEM` bytes of UTF-8 (a bot named after a 250-character
    file ended ``arena match`` in "File name too long" when its log was opened)."""
    return stem.encode()[:MAX_LOG_STEM].decode("utf-8", "ignore")


class BotProcess:
    """One launched bot process (and its process group)."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        *,
        log_dir: Path | None = None,
        output_limit: int = 1 << 20,
        cwd: Path | None = None,
        extra_env: dict[str, str] | None = None,
        sandbox: SandboxLimits | None = None,
        hide: Sequence[Path] = (),
    ) -> None:
        self.name = name
        # the arena's own files (data directory, database, logs) kept out of the sandbox's sight
        # should they lie in the bot's directory (arena.sandbox.bwrap.wrap)
        self.hide = list(hide)
        self.command = list(command)
        self.sandbox = sandbox
        self.cgroup: BotCgroup | None = None
        self.log_dir = log_dir
        self.output_limit = output_limit
        self.cwd = cwd
        self.extra_env = extra_env or {}
        self.proc: asyncio.subprocess.Process | None = None
        self._out: _Capture | None = None
        self._err: _Capture | None = None
        self.stdout_path: Path | None = None
        self.stderr_path: Path | None = None
        self._watch: asyncio.Task[None] | None = None  # see watch_exit()
        self._stopping = False
        self._bot_pid: int | None = None  # unsandboxed without a cgroup: the bot below its guard

    @property
    def pid(self) -> int | None:
        """The process id (also the process group id), once started."""
        return self.proc.pid if self.proc else None

    def _bot_dir(self) -> Path:
        """The bot's own directory: that of the last argument naming an existing file."""
        for part in reversed(self.command):
            p = Path(part)
            if p.is_absolute() and p.is_file():
                return p.parent
        return Path(self.command[-1]).resolve().parent

    def _sandboxed_argv(self, address: str, token: str) -> tuple[list[str], dict[str, str]]:
        """bwrap around the bot, and a tiny shell that first joins the bot's cgroup."""
        assert self.sandbox is not None
        require_bwrap()
        if not address.startswith("unix:"):
            raise BotLaunchError("a sandboxed bot reaches the referee only through a Unix socket")
        socket = Path(address.removeprefix("unix:"))
        inner = f"unix:{SOCKET_DIR}/{socket.name}"
        bot_env = {
            **self.extra_env,
            "ARENA_ADDRESS": inner,
            "ARENA_TOKEN": token,
            "ARENA_BOT_NAME": self.name,
        }
        argv, env = wrap(
            [*self.command, f"--address={inner}"],  # the token only in the environment
            bot_dir=self._bot_dir(),
            socket_dir=socket.parent,
            limits=self.sandbox,
            env=bot_env,
            hide=self.hide,
        )
        self.cgroup = BotCgroup.create(self.sandbox.memory_mb, self.sandbox.processes)
        if self.cgroup is not None:
            env["ARENA_CGROUP_PROCS"] = " ".join(self.cgroup.procs_files)
            join = (
                'for f in $ARENA_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done; '
                'unset ARENA_CGROUP_PROCS; exec "$@"'
            )
            argv = ["/bin/sh", "-c", join, "sh", *argv]
        return argv, env

    def _guarded_argv(self, address: str) -> list[str]:
        """The unsandboxed bot below its guard (which first joins the bot's cgroup, if any)."""
        self.cgroup = BotCgroup.create(None, None)  # no limits: only to find and kill the whole tree
        argv = [sys.executable, "-I", "-S", str(GUARD), "--parent", str(os.getpid())]
        for procs in self.cgroup.procs_files if self.cgroup is not None else ():
            argv += ["--cgroup-procs", procs]
        return [*argv, "--", *self.command, f"--address={address}"]  # the token only in the environment

    async def start(self, address: str, token: str, *, log_stem: str | None = None) -> None:
        """Start the bot, telling it where the referee is and which token to present."""
        if self.sandbox is not None:
            argv, env = self._sandboxed_argv(address, token)
            limit = self.sandbox.output_bytes
        else:
            env = dict(os.environ)
            env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
            env.update(self.extra_env)
            env.update(ARENA_ADDRESS=address, ARENA_TOKEN=token, ARENA_BOT_NAME=self.name)
            _check_executable(self.name, self.command[0], env["PATH"], self.cwd)
            argv = self._guarded_argv(address)
            limit = self.output_limit
        out_sink = err_sink = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            stem = fit_log_stem(log_stem or self.name)
            self.stdout_path = self.log_dir / f"{stem}.stdout.log"
            self.stderr_path = self.log_dir / f"{stem}.stderr.log"
            out_sink = self.stdout_path.open("wb")
            err_sink = self.stderr_path.open("wb")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                process_group=0,
            )
        except OSError as exc:
            for sink in (out_sink, err_sink):
                if sink is not None:
                    sink.close()
            if self.cgroup is not None:
                self.cgroup.remove()
            raise BotLaunchError(f"{self.name}: cannot start {argv[0]}: {exc.strerror}") from None
        with _live_lock:
            _live.add(self)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._out = _Capture(self.proc.stdout, out_sink, limit)
        self._err = _Capture(self.proc.stderr, err_sink, limit)

    def cpu_time(self) -> float | None:
        """CPU seconds used so far: the whole tree's via the cgroup, else the bot process's own
        (with its waited-for children) from /proc; unsandboxed, plus its guard's."""
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        if self.proc is None:
            return None
        ticks = _cpu_ticks(self.proc.pid)
        if ticks is None:
            return None
        if self.sandbox is None:  # the launched process is the guard: add the bot below it
            if self._bot_pid is None:
                self._bot_pid = _first_child(self.proc.pid)
            ticks += (_cpu_ticks(self._bot_pid) or 0) if self._bot_pid is not None else 0
        return ticks / os.sysconf("SC_CLK_TCK")

    def probe(self) -> Probed | None:
        """(EXITED, how) once the process has exited, (STOPPED, ...) while it is stopped, else None."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return ProcessStatus.EXITED, self._exit_text(self.proc.returncode)
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        except OSError:
            return ProcessStatus.EXITED, "the process is gone"
        state = stat.rsplit(")", 1)[-1].split()[0]
        if state in ("Z", "X"):
            return ProcessStatus.EXITED, "the process exited"
        if state in ("T", "t"):
            return ProcessStatus.STOPPED, "the process is stopped (frozen)"
        if any(st in ("T", "t") for st in _descendant_states(self.proc.pid)):
            # e.g. the bot inside bubblewrap: the launched process is bwrap, not the bot
            return ProcessStatus.STOPPED, "a process of the bot is stopped (frozen)"
        return None

    async def settle(self, timeout: float = 1.0, exit_grace: float = 0.5) -> None:
        """After the bot's stream ended: if the process still runs, give it ``exit_grace``
        seconds to exit (a sandboxed bot's launcher, bwrap, exits just after the bot itself);
        once it has died, wait (at most ``timeout`` seconds) until everything it wrote to stderr
        has been read, so that :meth:`evidence` holds its last words."""
        if self.proc is None:
            return
        if self.proc.returncode is None:
            # Running: it may be about to exit.  Already gone or a zombie: its exit status is
            # on its way (the event loop's child watcher reaps it, then tells this loop), and
            # a crash's report should say how it ended ("killed by SIGKILL"), not "gone".
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), exit_grace)
        probed = self.probe()
        if self._err is not None and probed is not None and probed[0] is ProcessStatus.EXITED:
            await asyncio.wait({self._err.task}, timeout=timeout)

    def watch_exit(self, callback: Callable[[str], None], *, stderr_wait: float = 0.5) -> None:
        """Call ``callback(how)`` once the process exits (``how``: ``the process exited with
        status 1``, ``... killed by SIGKILL``), after its stderr has been read to the end (at most
        ``stderr_wait`` seconds more), so that :meth:`evidence` then holds its last words.

        Sandboxed, the process watched is the launcher (sh, then bwrap), whose exit status is the
        bot's.  :meth:`stop` cancels the watch; the callback is not called for a process that
        :meth:`stop` ended.
        """
        if self.proc is None:
            raise RuntimeError("watch_exit() before start()")
        proc, err = self.proc, self._err

        async def watch() -> None:
            code = await proc.wait()
            if err is not None:
                await asyncio.wait({err.task}, timeout=stderr_wait)
            if not self._stopping:
                callback(self._exit_text(code))

        self._watch = asyncio.create_task(watch())

    def _exit_text(self, code: int) -> str:
        """How the process ended, in words; a kill by the kernel's out-of-memory killer in the
        bot's cgroup is said as such, with the sandbox's memory limit (the exit status alone,
        137 or SIGKILL, does not tell it from any other kill)."""
        text = _exit_text(code)
        if self.sandbox is not None and 128 < code < 128 + 65:  # bwrap passes a death by signal N
            text += f" (likely killed by {_signal(code - 128)})"  # on as status 128 + N
        limit = self.sandbox.memory_mb if self.sandbox is not None else None
        if self.cgroup is not None and limit is not None and self.cgroup.oom_kills() > 0:
            text += f": out of memory, the sandbox's limit of {limit} MiB reached (the kernel killed it)"
        return text

    def evidence(self) -> dict[str, str]:
        """The tail of the bot's stderr (for forfeit records)."""
        tail = self._err.text() if self._err else ""
        return {"stderr_tail": tail[-2000:]} if tail else {}

    def stderr_tail(self) -> str:
        """The last few KiB the bot wrote to stderr."""
        return self._err.text() if self._err else ""

    async def stop(self, grace: float = 1.0) -> int | None:
        """End the bot and everything in its process group; return its exit status."""
        proc = self.proc
        if proc is None:
            return None
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
        if proc.returncode is None:  # give it a moment to exit by itself, then ask, then force
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)
        if proc.returncode is None:
            _killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)
        if proc.returncode is None and self.sandbox is None:
            # the guard kills and reaps the bot's whole tree (setsid() escapees too), then exits
            _wake_and_kill(proc.pid)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), GUARD_GRACE)
        _killpg(proc.pid, signal.SIGKILL)  # also any child left in the group
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
        if self.cgroup is not None:  # and anything that escaped the group (setsid) but not the cgroup
            self.cgroup.remove()
        with _live_lock:
            _live.discard(self)
        for cap in (self._out, self._err):
            if cap is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(cap.task, 2.0)
        return proc.returncode

    def kill_now(self) -> None:
        """SIGKILL the bot and everything it started, without waiting (any thread, no event loop
        needed): the guard or the process group, and the cgroup.  :meth:`stop` still reaps it."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        if self.sandbox is None:
            _wake_and_kill(proc.pid)  # the guard kills the tree it is the subreaper of
        else:
            _killpg(proc.pid, signal.SIGKILL)  # bubblewrap: its PID namespace dies with it
        if self.cgroup is not None:
            self.cgroup.kill_all()


def live_bots() -> list[BotProcess]:
    """The bots this process has started and not yet stopped."""
    with _live_lock:
        return list(_live)


def kill_all_bots(timeout: float = 3.0) -> int:
    """Kill every bot this process has launched and not yet stopped, with all their descendants;
    return how many there were.

    For a process that must go now (its coordinator died, a signal): synchronous, callable from
    any thread and without the event loop that started the bots.  Each bot's guard (unsandboxed)
    kills and reaps the bot's tree; this waits up to ``timeout`` seconds for the guards to finish,
    then SIGKILLs whatever is left in the bots' process groups and cgroups.  The bots stay
    registered until :meth:`BotProcess.stop` (which may still be awaited to collect them).
    """
    bots = live_bots()
    for bot in bots:
        bot.kill_now()
    deadline = time.monotonic() + timeout
    pending = [b.pid for b in bots if b.pid is not None]
    while pending and time.monotonic() < deadline:
        pending = [pid for pid in pending if _running(pid)]
        if pending:
            time.sleep(0.02)
    for bot in bots:
        if bot.pid is not None:
            _killpg(bot.pid, signal.SIGKILL)
        if bot.cgroup is not None:
            bot.cgroup.remove()
    return len(bots)


def _stat_text(pid: int) -> str:
    """``/proc/PID/stat`` read with plain system calls (it is read twice for every decision: the
    file objects of ``open``/``Path.read_text`` cost three times as much).  Raises OSError."""
    fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    try:
        return os.read(fd, 4096).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _cpu_ticks(pid: int) -> int | None:
    """utime + stime + cutime + cstime of ``pid`` (clock ticks), or None when it is gone."""
    try:
        fields = _stat_text(pid).rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15])
    except (OSError, IndexError, ValueError):
        return None


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """Every process's pid and the fields of its ``/proc/PID/stat`` after the command name
    (state first, then the parent pid, ...); processes that vanish meanwhile are skipped."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            yield int(entry), Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue


def _first_child(parent: int) -> int | None:
    """The oldest child of ``parent`` (a guard's is its bot: orphans it adopts come later)."""
    found = [(int(fields[19]), pid) for pid, fields in _proc_stats() if int(fields[1]) == parent]
    return min(found)[1] if found else None


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _check_executable(name: str, program: str, path: str, cwd: Path | None) -> None:
    """Raise :class:`BotLaunchError` unless ``program`` can be executed (looked up on ``path``
    when it has no slash), as starting it directly would: the guard would only find out after
    the launch."""
    if "/" not in program:
        if shutil.which(program, path=path) is None:
            raise BotLaunchError(f"{name}: cannot start {program}: not found on PATH ({path})")
        return
    target = Path(cwd or ".") / program
    if not target.exists():
        raise BotLaunchError(f"{name}: cannot start {program}: No such file or directory")
    if not target.is_file() or not os.access(target, os.X_OK):
        raise BotLaunchError(f"{name}: cannot start {program}: Permission denied")


_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
"""Whether this kernel lists each task's children (``/proc/PID/task/TID/children``)."""


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (of all its threads), from ``/proc/PID/task/*/children``."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    return out


def _descendant_states(root: int) -> list[str]:
    """The states (R, S, T, Z, ...) of every descendant of ``root``, from /proc: by walking the
    subtree's children lists where the kernel has them (a few reads: this runs before every
    match for every kept-running bot), else by reading every process's stat."""
    if _CHILDREN_FILES:
        states, todo = [], _children(root)
        while todo:
            pid = todo.pop()
            try:
                states.append(_stat_text(pid).rsplit(")", 1)[1].split()[0])
            except (OSError, IndexError):
                continue  # it vanished meanwhile
            todo += _children(pid)
        return states
    children: dict[int, list[tuple[int, str]]] = {}
    for pid, fields in _proc_stats():
        children.setdefault(int(fields[1]), []).append((pid, fields[0]))
    states, todo = [], [root]
    while todo:
        for pid, state in children.get(todo.pop(), ()):
            states.append(state)
            todo.append(pid)
    return states


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _wake_and_kill(guard_pid: int) -> None:
    """Tell a guard to kill its bot's tree; first continue it, in case the bot stopped its
    whole process group (the guard's too) with SIGSTOP."""
    _kill(guard_pid, signal.SIGCONT)
    _kill(guard_pid, guard.KILL_SIGNAL)


def _signal(signum: int) -> str:
    """``SIGSEGV``, or ``signal 42`` for a number without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _exit_text(code: int) -> str:
    if code < 0:
        return f"the process was killed by {_signal(-code)}"
    return f"the process exited with status {code}"
