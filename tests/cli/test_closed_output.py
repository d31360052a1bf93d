"""A command whose output goes away: the reader of its pipe leaves (``arena ... | head``) or its
terminal hangs up.  The run is not broken by the failed writes (the tournament plays to its end
or stops cleanly on the hang-up's SIGHUP), nothing is lost, and the exit status is the one a
shell expects (:mod:`arena.cli.closed_output`, :mod:`arena.tournament.display`)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.console import Console
from store.helpers import SLEEPY_BOT

from arena.cli.closed_output import status_of
from arena.tournament.display import TournamentDisplay

from .helpers import ARENA, ROOT, arena_env, run_arena


def tournament_row(home: Path) -> str:
    listing = run_arena(["tournament", "list"], home)
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if re.match(r"^\S\s*1\s", line)]
    assert rows, listing.stdout
    return rows[0]


def test_a_pipe_whose_reader_left_does_not_break_the_tournament(home: Path) -> None:
    """``arena tournament run ... 2>&1 | head -2``: the progress lines after the second fail with
    EPIPE; before, the run crashed there (exit 1, the tournament left interrupted with a match
    'running').  Now every match is played and stored; only the final table is lost: exit 1, as
    Python and rich end on a closed pipe."""
    proc = subprocess.Popen(
        [str(ARENA), "tournament", "run", "greedy", "random", "invader", "--games", "4", "--jobs", "2",
         "--no-sandbox"],
        cwd=home,
        env=arena_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for _ in range(2):  # what `head -2` reads
            assert proc.stdout.readline()
        proc.stdout.close()
        assert proc.wait(timeout=300) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    row = tournament_row(home)
    assert "finished" in row and "interrupted" not in row, row


def test_a_terminal_that_hangs_up_stops_the_tournament_cleanly(home: Path) -> None:
    """The run's controlling terminal hangs up (its master side closes, as when a terminal window
    or an ssh connection goes): the kernel sends SIGHUP, the run stops cleanly, and its last
    writes fail with EIO.  Before, the failed redraw replaced the stop: exit 1.  Now exit 129 (as
    for any SIGHUP), the tournament interrupted, no match left 'running', and resumable."""
    bot = home / "sleepy_bot.py"
    bot.write_text(SLEEPY_BOT)
    master, slave = os.openpty()

    def controlling_terminal() -> None:  # in the child: a session of its own on the pty
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [str(ARENA), "tournament", "run", str(bot), "random", "--games", "2", "--jobs", "2", "--no-sandbox"],
        cwd=home,
        env=arena_env(home),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=controlling_terminal,
    )  # fmt: skip
    os.close(slave)
    try:
        shown = b""
        deadline = time.monotonic() + 60
        while b"current standings" not in shown and time.monotonic() < deadline:  # the live display is up
            if select.select([master], [], [], 0.2)[0]:
                shown += os.read(master, 65536)
        assert b"current standings" in shown, shown[-2000:]
        time.sleep(1.5)  # the matches are playing
        os.close(master)  # hang up
        master = -1
        assert proc.wait(timeout=120) == 128 + signal.SIGHUP
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    row = tournament_row(home)
    assert "interrupted" in row, row
    cells = [c.strip() for c in row.split("│")]
    running = cells[cells.index("interrupted") + 1 : cells.index("interrupted") + 5]
    assert running[2] == "0", row  # finished, queued, running, failed: none left running


class _Gone(io.TextIOBase):
    """A stream whose reader left: every write fails, as on a hung-up terminal (EIO) or a closed
    pipe (EPIPE)."""

    def __init__(self, code: int) -> None:
        self.code = code

    def write(self, s: str) -> int:
        raise OSError(self.code, os.strerror(self.code))

    def flush(self) -> None:
        raise OSError(self.code, os.strerror(self.code))


@pytest.mark.parametrize("tty", [True, False], ids=["live-display", "plain-lines"])
def test_the_display_never_raises_when_its_output_is_gone(tty: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.tournament.runner import Progress

    # a live display is on a terminal (EIO when it hangs up), plain lines may go to a pipe (EPIPE)
    monkeypatch.setattr("sys.stderr", _Gone(errno.EPIPE))
    console = Console(file=_Gone(errno.EIO), force_terminal=tty)
    display = TournamentDisplay("t", console=console, total=3, interval=0.0)
    with display:
        for done in (1, 2, 3):
            display(Progress(1, 3, done, 0, None, None))
    assert display.gone and display.live is None


def test_the_status_is_the_stop_being_handled_else_the_shells() -> None:
    class Stop(Exception):
        signum = int(signal.SIGTERM)

    try:
        try:
            raise Stop
        except Stop:
            raise OSError(errno.EIO, "Input/output error") from None
    except OSError as exc:
        assert status_of(exc) == 128 + signal.SIGTERM  # __context__ kept by `from None`
    assert status_of(BrokenPipeError(errno.EPIPE, "Broken pipe")) == 1
    assert status_of(OSError(errno.EIO, "Input/output error")) == 128 + signal.SIGHUP


def test_a_terminal_console_on_a_closed_pipe_does_not_end_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console that counts as a terminal on a pipe (FORCE_COLOR=1, TTY_COMPATIBLE=1): rich turns
    the BrokenPipeError into SystemExit(1) (and /dev/null over stdout), which ended the run before
    its first match (`FORCE_COLOR=1 arena tournament run ... 2>&1 | head -1`: left 'created')."""
    from arena.lifecycle import Stopped
    from arena.tournament.runner import Progress

    dup2: list[tuple[int, int]] = []
    monkeypatch.setattr("os.dup2", lambda a, b: dup2.append((a, b)))
    console = Console(file=_Gone(errno.EPIPE), force_terminal=True)
    display = TournamentDisplay("t", console=console, total=3, interval=0.0)
    with pytest.raises(Stopped), display:  # the run's own outcome, not SystemExit(1)
        display(Progress(1, 3, 1, 0, None, None))
        raise Stopped(signal.SIGTERM)
    assert display.gone and not dup2


def test_a_status_line_on_a_closed_pipe_goes_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """`arena evaluate --json > report.json 2> >(head -2)`: the progress line's EPIPE ended the
    evaluation (report.json empty); `arena train` likewise lost its weights."""
    from arena.termui import StatusLine

    monkeypatch.setattr("sys.stderr", _Gone(errno.EPIPE))
    line = StatusLine()
    line.write("games 1")
    line.write("games 2")
    line.close()
    assert line.quiet


def _closed(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


def _read_only(fd: int) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, fd)
    os.close(null)


@pytest.mark.parametrize("how", ["closed", "read-only"])
def test_a_command_started_with_stderr_closed_plays_its_games(home: Path, how: str) -> None:
    """``arena evaluate ... 2>&-``: its first line on stderr failed with EBADF and the run ended,
    status 1, before its first game.  Now /dev/null stands in for the closed stream: every game
    is played and the report comes out on stdout.  The same for a stderr open read-only
    (``2</dev/null``), whose writes failed with EBADF too."""
    args = [ARENA, "evaluate", "random", "--vs", "greedy-naive", "--games", "4", "--no-sandbox"]
    done = subprocess.run(
        [*args, "--json", "--seed", "7"],
        env=arena_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: _closed(2) if how == "closed" else _read_only(2),
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout
    report = json.loads(done.stdout)
    assert report["games"] == 4 and report["forfeits"] == {"candidate": 0, "baseline": 0}, report


def test_a_file_opened_after_a_closed_start_never_takes_a_standard_descriptor(tmp_path: Path) -> None:
    """With 0, 1 and 2 closed at start, the next file opened would take descriptor 0 and then
    whatever is written below Python to 1 or 2 would land in it."""
    script = (
        "import os, sys\n"
        "from arena.cli.closed_output import open_standard_streams\n"
        "open_standard_streams()\n"
        "f = open(sys.argv[1], 'w')\n"
        "print('written to stdout', file=sys.stdout)\n"
        "f.write(str(f.fileno()))\n"
        "f.close()\n"
    )
    out = tmp_path / "fd.txt"
    done = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        preexec_fn=lambda: _closed(0, 1, 2),
        timeout=60,
    )
    assert done.returncode == 0
    assert int(out.read_text()) > 2


def test_standard_streams_open_the_wrong_way_are_replaced(tmp_path: Path) -> None:
    """stdout and stderr open read-only, stdin write-only: each gets /dev/null the right way, so
    that writing (and reading) works; the descriptors stay 0, 1 and 2."""
    script = (
        "import os, sys\n"
        "from arena.cli.closed_output import open_standard_streams\n"
        "open_standard_streams()\n"
        "print('to stdout', flush=True)\n"
        "print('to stderr', file=sys.stderr, flush=True)\n"
        "assert sys.stdin.read() == ''\n"
        "os.write(3, b'ok')\n"
    )
    out = tmp_path / "ok.txt"

    def wrong_way() -> None:
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT), 3)
        _read_only(1)
        _read_only(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 0)
        os.close(null)

    done = subprocess.run([sys.executable, "-c", script], preexec_fn=wrong_way, close_fds=False, timeout=60)
    assert done.returncode == 0
    assert out.read_text() == "ok"


@pytest.mark.parametrize(
    ("variable", "columns"),
    [("COLUMNS", "0"), ("COLUMNS", "99999999999999999999"), ("TERMINAL_WIDTH", "abc")],
)
def test_a_width_no_terminal_has_is_not_used(home: Path, variable: str, columns: str) -> None:
    """``COLUMNS=0`` made rich print nothing at all: no help, no result table, and for a mistyped
    option exit 2 without a word; a 20-digit width made ``arena --help`` fail (OverflowError);
    typer's ``TERMINAL_WIDTH=abc`` a ValueError traceback.  Such a width is forgotten: the
    terminal's own, or the pipe's, is used."""
    helped = run_arena(["--help"], home, **{variable: columns})
    assert helped.returncode == 0 and "tournament" in helped.stdout, helped
    mistyped = run_arena(["tournament", "run", "--bogus"], home, **{variable: columns})
    assert mistyped.returncode == 2 and "No such option: --bogus" in mistyped.stderr, mistyped


def test_an_output_encoding_short_of_unicode_writes_escapes(home: Path) -> None:
    """stdout in ASCII (``PYTHONIOENCODING=ascii``; a C locale without Python's UTF-8 mode): the
    result table naming a bot 'zufällig' raised UnicodeEncodeError after the match was played:
    a traceback, exit 1, the result never shown.  Now the name comes out as ``zuf\\xe4llig``."""
    bot = home / "zufällig.py"
    bot.write_text((ROOT / "bots" / "random_bot.py").read_text(encoding="utf-8"), encoding="utf-8")
    args = ["match", "greedy", str(bot), "--seed", "3", "--no-sandbox", "--no-record"]
    done = run_arena(args, home, PYTHONIOENCODING="ascii")
    assert done.returncode == 0, done.stderr
    assert "zuf\\xe4llig" in done.stdout and "finished" in done.stdout, done.stdout


def test_a_token_is_not_made_for_a_closed_stdout(home: Path) -> None:
    """``arena users token NAME >&-``: the token, shown once and stored only as a hash, went to
    /dev/null and the command said it was made (exit 0).  Now it is refused and nothing made."""
    env = arena_env(home, ARENA_ADMIN_PASSWORD="a long password")
    made = subprocess.run([ARENA, "users", "add-admin", "ann"], env=env, capture_output=True, timeout=60)
    assert made.returncode == 0, made.stderr
    done = subprocess.run(
        [ARENA, "users", "token", "ann"],
        env=env,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: _closed(1),
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "nothing made" in done.stderr, done.stderr
    with contextlib.closing(sqlite3.connect(home / "arena.db")) as db:
        assert db.execute("SELECT count(*) FROM api_token").fetchone() == (0,)
