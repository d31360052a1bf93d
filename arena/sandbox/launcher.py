"""Start a bot from a script or an executable and make sure nothing of it outlives its match.

The interpreter comes from the file's shebang, else from its extension (``.py`` runs under the
arena's own Python, ``.js``/``.mjs`` under ``node``, ``.sh`` under ``bash``), else the file must be
executable.  The bot gets the referee address and its token both as flags
(``--address=ADDR --token=TOKEN``) and as environment variables (``ARENA_ADDRESS``,
``ARENA_TOKEN``).  It runs in its own process group; its stdout and stderr are captured to
bounded log files (and the last few KiB kept in memory as evidence).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from arena.referee.faults import Reason

from .bwrap import SOCKET_DIR, require_bwrap, wrap
from .cgroups import BotCgroup
from .limits import SandboxLimits

INTERPRETERS = {".py": [sys.executable], ".js": ["node"], ".mjs": ["node"], ".cjs": ["node"], ".sh": ["bash"]}
TAIL_BYTES = 4096


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
    """Drain one pipe: the first ``limit`` bytes go to a file, the last few KiB stay in memory."""

    def __init__(self, stream: asyncio.StreamReader, sink: IO[bytes] | None, limit: int) -> None:
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0
        self.written = 0
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
        finally:
            if sink is not None:
                if self.dropped:
                    sink.write(f"\n[arena: {self.dropped} further bytes dropped]\n".encode())
                sink.close()

    def text(self) -> str:
        return b"".join(self.tail)[-TAIL_BYTES:].decode("utf-8", "replace")


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
    ) -> None:
        self.name = name
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
        argv = wrap(
            [*self.command, f"--address={inner}", f"--token={token}"],
            bot_dir=self._bot_dir(),
            socket_dir=socket.parent,
            limits=self.sandbox,
            env=bot_env,
        )
        self.cgroup = BotCgroup.create(self.sandbox.memory_mb, self.sandbox.processes)
        outer_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        if self.cgroup is not None:
            outer_env["ARENA_CGROUP_PROCS"] = " ".join(self.cgroup.procs_files)
            join = 'for f in $ARENA_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done; exec "$@"'
            argv = ["/bin/sh", "-c", join, "sh", *argv]
        return argv, outer_env

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
            argv = [*self.command, f"--address={address}", f"--token={token}"]
            limit = self.output_limit
        out_sink = err_sink = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            stem = log_stem or self.name
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
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._out = _Capture(self.proc.stdout, out_sink, limit)
        self._err = _Capture(self.proc.stderr, err_sink, limit)

    def cpu_time(self) -> float | None:
        """CPU seconds used so far: the whole tree's via the cgroup, else the bot process's own
        (with its waited-for children) from /proc."""
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        if self.proc is None:
            return None
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def probe(self) -> tuple[Reason, str] | None:
        """(CRASHED, how) once the process has exited, (STALLED, ...) while it is stopped."""
        if self.proc is None:
            return None
        if self.proc.returncode is not None:
            return Reason.CRASHED, _exit_text(self.proc.returncode)
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        except OSError:
            return Reason.CRASHED, "the process is gone"
        state = stat.rsplit(")", 1)[-1].split()[0]
        if state in ("Z", "X"):
            return Reason.CRASHED, "the process exited"
        if state in ("T", "t"):
            return Reason.STALLED, "the process is stopped (frozen)"
        if any(st in ("T", "t") for st in _descendant_states(self.proc.pid)):
            # e.g. the bot inside bubblewrap: the launched process is bwrap, not the bot
            return Reason.STALLED, "a process of the bot is stopped (frozen)"
        return None

    async def settle(self, timeout: float = 1.0, exit_grace: float = 0.5) -> None:
        """After the bot's stream ended: if the process still runs, give it ``exit_grace``
        seconds to exit (a sandboxed bot's launcher, bwrap, exits just after the bot itself);
        once it has died, wait (at most ``timeout`` seconds) until everything it wrote to stderr
        has been read, so that :meth:`evidence` holds its last words."""
        if self.proc is None:
            return
        if self.probe() is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), exit_grace)
        probed = self.probe()
        if self._err is not None and probed is not None and probed[0] is Reason.CRASHED:
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
                callback(_exit_text(code))

        self._watch = asyncio.create_task(watch())

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
        _killpg(proc.pid, signal.SIGKILL)  # also any child left in the group
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
        if self.cgroup is not None:  # and anything that escaped the group (setsid) but not the cgroup
            self.cgroup.remove()
        for cap in (self._out, self._err):
            if cap is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(cap.task, 2.0)
        return proc.returncode


def _descendant_states(root: int) -> list[str]:
    """The states (R, S, T, Z, ...) of every descendant of ``root``, from /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append((int(entry), fields[0]))
    states, todo = [], [root]
    while todo:
        for pid, state in children.get(todo.pop(), ()):
            states.append(state)
            todo.append(pid)
    return states


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"the process was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"the process was killed by signal {-code}"
    return f"the process exited with status {code}"
