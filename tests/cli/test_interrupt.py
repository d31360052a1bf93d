"""Ctrl-C at any moment prints one line and exits 130 (real ``arena`` processes, real SIGINT).

The signal goes to the whole process group, as a terminal's Ctrl-C does, at several moments: while
the interpreter is still importing the command's modules, while bots are starting, in the middle of
a match, and twice in a row.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store.helpers import SLEEPY_BOT

import arena
from arena.cli.interrupt import EXIT_INTERRUPTED, MESSAGE
from arena.lifecycle import ProcessRef, wait_dead

from .helpers import ARENA, Run, arena_env, interrupt_arena, run_arena


def assert_one_line(run: Run) -> None:
    """Exit 130, the message once as the last line, and no traceback."""
    assert run.returncode == EXIT_INTERRUPTED, run.stderr
    assert "Traceback" not in run.stderr and "KeyboardInterrupt" not in run.stderr, run.stderr
    assert "Aborted" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines and lines[-1] == MESSAGE, run.stderr
    assert run.stderr.count(MESSAGE) == 1, run.stderr


@pytest.fixture
def long_match(home: Path) -> list[str]:
    """``arena match`` between a bot that takes 0.1 s a move and ``random``: about half a minute."""
    bot = home / "sleepy_bot.py"
    bot.write_text(SLEEPY_BOT)
    return ["match", str(bot), "random", "--seed", "5", "--no-sandbox"]


@pytest.mark.parametrize(
    "delay", [0.1, 0.4, 1.0, 3.0], ids=["importing", "importing-later", "starting", "playing"]
)
def test_ctrl_c_at_any_moment_prints_one_line_and_exits_130(
    home: Path, long_match: list[str], delay: float
) -> None:
    run = interrupt_arena(long_match, home, [delay])
    if delay < 1.0 and run.returncode == -signal.SIGINT and not run.stderr:
        # On a loaded machine the signal can land before the interpreter has set up its own
        # handler (exec, loading): the default action ends the process silently, as it would any
        # program there; nothing of ours had run yet.
        return
    if delay < 1.0 and run.returncode == 1 and _in_pythons_own_start(run.stderr):
        # A little later it can land while the interpreter imports its ``site`` module (the
        # virtual environment's .pth files), before any code of ours: Python itself reports
        # "Fatal Python error: init_import_site" and exits 1, as it does for any program there
        # (seen once in a loaded run of the whole suite).
        return
    assert_one_line(run)


def _in_pythons_own_start(stderr: str) -> bool:
    """Whether the interrupt cut the interpreter's start-up (its ``site`` import), not our code:
    Python's fatal error, a KeyboardInterrupt, and no frame of ``arena``'s in the traceback."""
    return (
        stderr.startswith("Fatal Python error: init_import_site")
        and stderr.rstrip().endswith("KeyboardInterrupt")
        and f"{Path(arena.__file__).parent}{os.sep}" not in stderr
    )


def test_ctrl_c_while_the_handling_is_being_installed_prints_one_line(tmp_path: Path) -> None:
    """The "importing" case above, made certain: a Ctrl-C that lands while :func:`install` itself
    imports ``logging`` (seen once in a loaded CI run, a ``KeyboardInterrupt`` traceback) is the
    interrupt too: one line, 130."""
    import sys

    script = (
        "import arena.cli.main as m\ndef cut():\n    raise KeyboardInterrupt\nm.install = cut\nm.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert_one_line(Run(done.returncode, done.stdout, done.stderr))


def test_a_second_ctrl_c_during_clean_up_stays_quiet(home: Path, long_match: list[str]) -> None:
    assert_one_line(interrupt_arena(long_match, home, [2.5, 2.52, 2.6]))


def test_an_error_raised_while_handling_ctrl_c_counts_as_the_interrupt() -> None:
    """A clean-up that a second Ctrl-C cut short may fail with any error: that is still the
    interrupt (one line, 130), not a traceback; an error with no interrupt behind it is not."""
    from arena.cli.interrupt import during_interrupt

    def cut_short() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("Event loop is closed") from None

    with pytest.raises(RuntimeError) as caught:
        cut_short()
    assert during_interrupt(caught.value)  # `from None` hides it from tracebacks, not from __context__
    assert not during_interrupt(RuntimeError("a real bug"))


def test_run_interruptible_cancels_the_command_instead_of_raising_inside_the_loop() -> None:
    """The first Ctrl-C cancels the command's coroutine (it sees CancelledError and cleans up, never
    a KeyboardInterrupt raised somewhere inside the event loop, where gRPC's C core crashed on it);
    KeyboardInterrupt comes once the coroutine has unwound."""
    import asyncio
    import signal as sig

    from arena.cli.interrupt import run_interruptible

    seen: list[str] = []

    async def command() -> None:
        asyncio.get_running_loop().call_later(0.05, sig.raise_signal, sig.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            await asyncio.sleep(0.01)  # clean-up still runs on the loop
            seen.append("cleaned up")
            raise

    with pytest.raises(KeyboardInterrupt):
        run_interruptible(command())
    assert seen == ["cancelled", "cleaned up"]
    assert sig.getsignal(sig.SIGINT) is sig.default_int_handler  # the handler is restored


def test_a_second_ctrl_c_in_run_interruptible_leaves_at_once_with_the_line(tmp_path: Path) -> None:
    script = tmp_path / "second.py"
    script.write_text(
        "import asyncio, os, signal\n"
        "from arena.cli.interrupt import run_interruptible\n"
        "async def command():\n"
        "    loop = asyncio.get_running_loop()\n"
        "    loop.call_later(0.05, signal.raise_signal, signal.SIGINT)\n"
        "    try:\n"
        "        await asyncio.sleep(30)\n"
        "    except asyncio.CancelledError:\n"
        "        loop.call_later(0.05, signal.raise_signal, signal.SIGINT)\n"
        "        await asyncio.sleep(30)  # a clean-up that would take long\n"
        "run_interruptible(command())\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_INTERRUPTED, done.stderr
    assert done.stderr.strip() == MESSAGE, done.stderr


FINALIZER_SCRIPT = """
import sys, time
from arena.cli.interrupt import install, exit_interrupted
install()

class Finalized:
    def __del__(self):
        raise KeyboardInterrupt  # what a Ctrl-C landing inside a finalizer looks like

try:
    thing = Finalized()
    del thing
    if sys.argv[1] == "keep-going":
        for _ in range(500):
            time.sleep(0.01)
        print("lost")
    elif sys.argv[1] == "interrupted-meanwhile":  # another Ctrl-C ends it before the delivery
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("delivered")
    exit_interrupted()
"""


@pytest.mark.parametrize("after", ["keep-going", "end-at-once", "interrupted-meanwhile"])
def test_a_ctrl_c_swallowed_by_a_finalizer_still_ends_the_command(tmp_path: Path, after: str) -> None:
    """A Ctrl-C that lands while a finalizer runs raises where Python can only drop it (the CI
    run of 2026-12-01 lost one that way: the match played on and exited 0).  It comes back to the
    main code as a KeyboardInterrupt; a process that ends before it arrives still ends as
    interrupted, with the one line and 130; one that another Ctrl-C ends meanwhile prints the
    line once."""
    import subprocess
    import sys

    script = tmp_path / "finalizer.py"
    script.write_text(FINALIZER_SCRIPT)
    done = subprocess.run([sys.executable, str(script), after], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_INTERRUPTED, (done.stdout, done.stderr)
    assert done.stderr.strip() == MESSAGE, done.stderr
    assert "lost" not in done.stdout
    if after != "end-at-once":
        assert done.stdout.strip() == "delivered"


STOP_IN_FINALIZER_SCRIPT = """
import os, signal, sys, time
from arena.cli.interrupt import Terminated, exit_terminated, guard_shutdown, install
install()

if sys.argv[1] == "slow-hook":  # the hook still runs when the signal is sent again (a loaded machine)
    import arena.cli.interrupt as itr
    _resend = itr._redeliver_later
    def _slowly(signum):
        _resend(signum)
        time.sleep(0.3)
    itr._redeliver_later = _slowly

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs inside this finalizer
        time.sleep(0.05)

try:
    thing = Finalized()
    del thing
    if sys.argv[1] in ("keep-going", "slow-hook"):
        for _ in range(500):
            time.sleep(0.01)
        print("lost")
    guard_shutdown()  # the command is over (the resent signal may come before or after this)
except Terminated as stop:
    print("delivered")
    sys.stderr.write(stop.message + "\\n")
    exit_terminated(int(stop.code))
"""


@pytest.mark.parametrize("after", ["keep-going", "end-at-once", "slow-hook"])
def test_a_sigterm_swallowed_by_a_finalizer_still_stops_the_command(tmp_path: Path, after: str) -> None:
    """A SIGTERM whose handler runs while a finalizer does raises :class:`Terminated` where Python
    can only print and drop it: the command went on as if nothing had been sent (exit 0, an
    "Exception ignored" traceback).  The signal is sent again and stops the command in its main
    code; a process that ends before that still ends as stopped: its line and 143."""
    import subprocess
    import sys

    script = tmp_path / "stop_in_finalizer.py"
    script.write_text(STOP_IN_FINALIZER_SCRIPT)
    done = subprocess.run([sys.executable, str(script), after], capture_output=True, text=True, timeout=60)
    assert done.returncode == 128 + signal.SIGTERM, (done.stdout, done.stderr)
    assert done.stderr.strip() == "arena: stopped (SIGTERM)", done.stderr
    assert "lost" not in done.stdout
    if after != "end-at-once":
        assert done.stdout.strip() == "delivered"


def test_once_interrupted_asyncio_and_grpc_complaints_about_cut_tasks_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clean-clone run (2026-12-02) printed gRPC's own ``InvalidStateError`` traceback after a
    Ctrl-C that cut its server's start short; once a Ctrl-C is being handled, what the asyncio
    and grpc loggers say is not shown; before it, and from other loggers, everything is."""
    import logging

    from arena.cli import interrupt

    def record(name: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.ERROR, __file__, 1, "invalid state", None, None)

    monkeypatch.setattr(interrupt, "_interrupting", False)
    assert interrupt._quiet_interrupts(record("asyncio"))
    assert interrupt._quiet_interrupts(record("grpc._cython.cygrpc"))
    interrupt._mark_interrupting()
    assert not interrupt._quiet_interrupts(record("asyncio"))
    assert not interrupt._quiet_interrupts(record("grpc._cython.cygrpc"))
    assert interrupt._quiet_interrupts(record("arena.referee"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_mid_match_cleans_up_records_the_match_and_exits_128_plus_n(
    home: Path, long_match: list[str], sig: signal.Signals
) -> None:
    """SIGTERM (a service manager, ``kill``) and SIGHUP (a closed terminal) stop a match as Ctrl-C
    does: bots stopped, the match stored as failed, one line, exit 128 + N.  They used to kill the
    process at once and leave the match ``running`` in the database for ever."""
    import sqlite3

    # 2 s after the match's first line (a fixed 3 s from the start was, on a loaded machine,
    # sometimes before the match: the signal's default action killed the process, status -1)
    run = interrupt_arena(long_match, home, [2.0], sig=sig, after_line="seed 5")
    out = run.stdout  # stdout and stderr together
    assert run.returncode == 128 + sig, out
    assert "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[-1] == f"arena: stopped ({sig.name})", out
    with sqlite3.connect(home / "arena.db") as db:
        assert db.execute("select status from match").fetchall() == [("failed",)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_before_the_event_loop_gives_the_line_and_128_plus_n(
    home: Path, sig: signal.Signals
) -> None:
    """SIGTERM or SIGHUP while a command has not reached its event loop (here ``arena users
    add-admin`` waiting for the password on a terminal): the signal's default action killed the
    process, no line, status -N (and an ``arena match`` whose row was made then left it
    ``running`` for ever).  Now it unwinds the command: the line and 128 + N, nothing made."""
    import sqlite3

    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [str(ARENA), "users", "add-admin", "bob"],
        cwd=home, env=arena_env(home), stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    os.close(follower)
    try:
        assert proc.stderr is not None
        seen = b""
        while b"password" not in seen:  # getpass asks on stderr (no controlling terminal here)
            chunk = os.read(proc.stderr.fileno(), 1024)
            assert chunk, (proc.wait(), seen)
            seen += chunk
        time.sleep(0.2)  # into the read
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    text = (seen + err).decode(errors="replace")
    assert proc.returncode == 128 + sig, text
    assert "Traceback" not in text, text
    assert [line for line in text.splitlines() if line.strip()][-1].endswith(
        f"arena: stopped ({sig.name})"
    ), text
    db = home / "arena.db"
    if db.exists():  # made before the password was asked for, or not: no account either way
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
            assert "user_account" not in tables or conn.execute(
                "select count(*) from user_account"
            ).fetchone() == (0,)


@pytest.mark.parametrize("delay", [0.0, 0.3], ids=["workers-spawning", "workers-importing"])
def test_ctrl_c_while_the_workers_start_prints_no_traceback(home: Path, delay: float) -> None:
    """A terminal's Ctrl-C reaches the workers too: spawned with SIGINT blocked until their own
    handler is in place, they no longer print a ``KeyboardInterrupt`` traceback from the middle
    of their imports (an outside review saw one per worker, every time, right after the progress
    line appeared)."""
    args = ["tournament", "run", "greedy", "random", "invader", "--games", "2", "--jobs", "2", "--no-sandbox"]
    run = interrupt_arena(args, home, [delay], timeout=120, after_line="matches done")
    out = run.stdout
    assert run.returncode == EXIT_INTERRUPTED, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert "resume with 'arena tournament resume 1'" in out, out


def test_a_second_ctrl_c_while_a_tournament_stops_ends_it_at_once_with_a_line(home: Path) -> None:
    """The first Ctrl-C starts a clean stop; a second one (and a third, as from a held-down key)
    while that runs ends the process at once (status 130) with one line saying so, naming the
    resume command with the tournament's id, not silently; and the tournament resumes to its end."""
    args = [
        "tournament",
        "run",
        "greedy",
        "random",
        "invader",
        "--games",
        "12",
        "--jobs",
        "2",
        "--no-sandbox",
    ]
    # after the first progress line with a rate: matches are in play, so the clean stop takes a
    # while (the run's start line, "0/72 matches done", comes before any worker plays, and a stop
    # then was over before the second Ctrl-C). 72 matches: with 24, an idle CI machine played them
    # all (4.6/s) before its first rate line, "24/24", and no Ctrl-C was ever sent
    run = interrupt_arena(args, home, [0.5, 0.52, 0.54], timeout=120, after_line="matches done (")
    out = run.stdout
    assert run.returncode == EXIT_INTERRUPTED, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    line = "arena: interrupted (Ctrl-C) again: stopped at once; 'arena tournament resume 1' plays what"
    assert out.count(line) == 1, out
    resumed = run_arena(["tournament", "resume", "1"], home, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def _semaphores() -> dict[str, int]:
    """The named POSIX semaphores of multiprocessing on this machine (``/dev/shm/sem.mp-*``), by
    name, with their inode numbers."""
    out = {}
    for name in os.listdir("/dev/shm"):
        if name.startswith("sem.mp-"):
            with contextlib.suppress(OSError):
                out[name] = os.stat(f"/dev/shm/{name}").st_ino
    return out


def _semaphores_of(pid: int) -> set[str]:
    """The ``sem.mp-*`` files that process ``pid`` has open.  An open semaphore is mapped, but
    under the name of the temporary file glibc created it as (``sem.XXXXXX (deleted)``): the
    files are matched by inode."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return set()
    inodes = {int(m.group(1)) for m in re.finditer(r" (\d+) +/dev/shm/sem\.", maps)}
    return {name for name, inode in _semaphores().items() if inode in inodes}


@pytest.mark.parametrize("hangups", [1, 2], ids=["hang-up", "hang-up-and-the-shells"])
def test_a_closed_terminals_sighup_leaves_no_semaphores_and_no_processes(home: Path, hangups: int) -> None:
    """A closed terminal sends SIGHUP to the whole process group, multiprocessing's resource
    tracker included, which ignores SIGINT and SIGTERM but not SIGHUP: it died, the pool's clean-up
    relaunched it (a warning, a KeyError traceback per semaphore), and when a second SIGHUP (the
    shell's, after the terminal's) ended the run at once, nobody removed the pool's semaphores (six)
    from /dev/shm.  Now the tracker survives: the run stops as it does on SIGTERM (one SIGHUP) or
    at once (two), every process of it ends, and the semaphores its coordinator had open (new
    files, compared with /dev/shm before the run) are gone.  Other programs' semaphores, which
    may come and go meanwhile, are not looked at."""
    before = set(_semaphores())
    proc = _start_tournament(home)
    out, ours, tree, commands = "", set(), [], []
    try:
        out = _until_playing(proc)
        ours = _semaphores_of(proc.pid)
        tree = _descendants(proc.pid)
        commands = [_command(ref.pid) for ref in tree]
        late = False  # the second hang-up came after the first one's clean stop was over
        for k in range(hangups):
            if k:
                # two signals sent before the process is scheduled are one (standard signals do
                # not queue); and on a loaded machine this test's own sleep may outlast the clean
                # stop, after which a hang-up is ignored: both looked like a single hang-up
                _until_delivered(proc.pid, signal.SIGHUP)
                time.sleep(0.02)  # while the first one's clean stop runs
                out += _printed_so_far(proc)
                late = "error: stopped by SIGHUP" in out
            os.killpg(proc.pid, signal.SIGHUP)
        out += proc.communicate(timeout=120)[0]  # the tracker holds the pipe until it ends
        left = wait_dead(tree, 10.0)
    finally:
        _kill_all(proc, tree)
    assert ours and not ours & before, (ours, out)  # the pool's, created by this run
    assert any(b"resource_tracker" in cmd for cmd in commands), commands
    deadline = time.monotonic() + 5.0
    while ours & _semaphores().keys() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not ours & _semaphores().keys(), f"left in /dev/shm: {sorted(ours & _semaphores().keys())}\n{out}"
    assert not left, f"processes of the run outlived it: {left}\n{out}"
    assert proc.returncode == 128 + signal.SIGHUP, out
    assert "Traceback" not in out and "died unexpectedly" not in out, out
    again = "arena: stopped by SIGHUP again: stopped at once; 'arena tournament resume 1'"
    if hangups == 1 or (late and again not in out):  # late: ignored once the exit was under way
        assert "leaked" not in out, out
        last = out.strip().splitlines()[-1]
        assert last.startswith("error: stopped by SIGHUP: "), out
        assert "resume with 'arena tournament resume 1'" in last, out
    else:  # in time, or late but before the exit got that far: the second one ends it at once
        assert out.count(again) == 1, out


def _until_delivered(pid: int, sig: signal.Signals, timeout: float = 5.0) -> None:
    """Wait until ``sig`` is no longer pending for process ``pid`` (the kernel has delivered it)."""
    bit = 1 << (sig - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return
        pending = 0
        for line in status.splitlines():
            if line.startswith(("SigPnd:", "ShdPnd:")):
                pending |= int(line.split()[1], 16)
        if not pending & bit:
            return
        time.sleep(0.001)


def _printed_so_far(proc: subprocess.Popen[str]) -> str:
    """What the run has written to its pipe and this test has not read yet (without waiting)."""
    assert proc.stdout is not None
    fd, chunks = proc.stdout.fileno(), []
    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, 65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


def _start_tournament(home: Path) -> subprocess.Popen[str]:
    """A real two-job tournament in a process group of its own, as a terminal's foreground job,
    its output (both streams) on a pipe."""
    args = ["tournament", "run", "greedy", "random", "invader", "--games", "2", "--jobs", "2", "--no-sandbox"]
    return subprocess.Popen(
        [str(ARENA), *args],
        cwd=home,
        env=arena_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _until_playing(proc: subprocess.Popen[str]) -> str:
    """Read the run's output until its first progress line, then give the workers a second to
    be playing: what was read."""
    out = ""
    assert proc.stdout is not None
    for line in proc.stdout:
        out += line
        if "matches done" in line:
            break
    time.sleep(1.0)
    return out


def _kill_all(proc: subprocess.Popen[str], tree: list[ProcessRef]) -> None:
    """A test's clean-up: the run's group, the run and every process it had, killed for sure."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for ref in tree:
        ref.signal(signal.SIGKILL)


def _command(pid: int) -> bytes:
    """Process ``pid``'s command line (empty once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(root: int) -> list[ProcessRef]:
    """The live descendants of ``root`` (workers, their bots, the resource tracker)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                out.append(ProcessRef.of(pid))
                todo.append(pid)
    return [ref for ref in out if ref.start is not None]


def test_a_sighup_after_the_clean_stop_line_does_not_kill_the_exit(home: Path) -> None:
    """A closed terminal's second SIGHUP (its shell's) can come after the first one's clean stop
    has printed its line, while the process exits: the interpreter had restored SIGHUP's default
    action there, so the process died by the signal (status -SIGHUP, not 129).  Now the status
    stays 129, with no traceback and nothing left running."""
    proc = _start_tournament(home)
    out, tree = "", []
    try:
        out = _until_playing(proc)
        tree = _descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGHUP)
        for line in proc.stdout:
            out += line
            if line.startswith("error: stopped by SIGHUP"):
                break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGHUP)  # the shell's, while the process exits
        out += proc.communicate(timeout=120)[0]
        left = wait_dead(tree, 10.0)
    finally:
        _kill_all(proc, tree)
    assert proc.returncode == 128 + signal.SIGHUP, out
    assert "Traceback" not in out, out
    assert not left, f"processes of the run outlived it: {left}\n{out}"


def test_sigterm_in_a_matchs_last_moments_prints_its_line_and_nothing_else(home: Path) -> None:
    """SIGTERM as a match ends (its bots being stopped): after ``arena: stopped (SIGTERM)`` came
    asyncio's "Loop ... that handles pid N is closed" and "Exception ignored in ...
    BaseSubprocessTransport.__del__ ... Event loop is closed" tracebacks, in about 4 runs of 6 (an
    outside review).  A Ctrl-C never printed them: its end skips the interpreter's shutdown, which
    collected what the stop left of the event loop.  SIGTERM now ends the same way."""
    args = ["match", "greedy", "random", "--seed", "1", "--no-sandbox"]
    for delay in (0.0, 0.03, 0.06):
        run = interrupt_arena(args, home, [delay], sig=signal.SIGTERM, after_line="round  33")
        out = run.stdout  # stdout and stderr together
        assert run.returncode in (128 + signal.SIGTERM, 0), out  # 0: the match was over first
        for noise in ("Exception ignored", "is closed", "Traceback"):
            assert noise not in out, out


def test_ctrl_c_while_the_command_line_loads_is_one_line() -> None:
    """A Ctrl-C while the console script imports the command line (before ``main`` installs its
    handling) raised KeyboardInterrupt out of the script's import line: a traceback and -2 (a
    clean-clone run).  The script's module (``arena.cli.entry``) ends it as a later Ctrl-C does.
    The interrupt is put exactly there: the import of ``arena.cli.main`` raises it."""
    script = (
        "import builtins\n"
        "real = builtins.__import__\n"
        "def cut(name, *args, **kwargs):\n"
        "    if name == 'arena.cli.main':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = cut\n"
        "from arena.cli.entry import main\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_INTERRUPTED, done.stderr
    assert done.stderr == "arena: interrupted (Ctrl-C)\n" and done.stdout == "", done
    scripts = Path(sys.executable).with_name("arena").read_text(encoding="utf-8")
    assert "from arena.cli.entry import main" in scripts  # the console script goes through it
