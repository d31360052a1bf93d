"""Small CLI truths: a bad --termination is refused, the demo prints its seed and refuses bad
arguments, a tournament's progress shows its total from the start, and after Ctrl-C
``tournament show`` says the tournament is interrupted, not running."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .helpers import ARENA, ROOT, arena_env, run_arena
from .test_interrupt import SLEEPY_BOT


def test_unknown_termination_is_refused(home: Path) -> None:
    bad = run_arena(["replays", "list", "--termination", "banana"], home)
    assert bad.returncode == 2, bad.stderr
    assert "unknown termination 'banana'" in bad.stderr and "crashed" in bad.stderr, bad.stderr
    assert "newer arena" not in bad.stderr  # the user typed it: no talk of stored values
    said = " ".join(bad.stderr.replace("│", " ").split())  # the error box wraps at its width
    assert "(or finished, round cap: the words the tables show)" in said, bad.stderr
    for word in ("crashed", "finished", "round cap", "Round-Cap"):  # as stored, or as the tables show
        good = run_arena(["replays", "list", "--termination", word], home)
        assert "unknown termination" not in good.stderr, good.stderr  # (no database here yet: exit 1)
    backwards = run_arena(["replays", "list", "--since", "2026-12-03", "--until", "2026-12-01"], home)
    assert backwards.returncode == 2, backwards.stderr
    said = " ".join(backwards.stderr.replace("│", " ").split())
    assert "2026-12-03 is after --until 2026-12-01: no day is in both" in said, backwards.stderr


def _line_with(proc: subprocess.Popen[str], text: str, timeout: float) -> list[str]:
    """stderr lines of ``proc`` up to the first containing ``text`` (fails after ``timeout``)."""
    assert proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if text in line:
            return seen
    raise AssertionError(f"no line with {text!r} within {timeout} s: {seen}")


def test_tournament_progress_and_show_tell_the_truth(home: Path) -> None:
    (home / "sleepy_bot.py").write_text(SLEEPY_BOT)
    for name, path in (("sleepy", home / "sleepy_bot.py"), ("rnd", ROOT / "bots" / "random_bot.py")):
        added = run_arena(["bots", "add", name, str(path), "--no-check"], home)
        assert added.returncode == 0, added.stderr
    proc = subprocess.Popen(
        [str(ARENA), "tournament", "run", "sleepy", "rnd", "--games", "2", "--jobs", "1", "--no-sandbox"],
        cwd=home, env=arena_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        # a match of the sleepy bot takes half a minute: the total is shown long before it ends
        lines = _line_with(proc, "0/4 matches done", timeout=60)
        assert not any("1/4" in line for line in lines), lines
        running = run_arena(["tournament", "show", "1"], home)
        assert "status running, coordinated by pid" in running.stdout, running.stdout
        assert _listed_status(home) == "running"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    shown = run_arena(["tournament", "show", "1"], home)
    assert shown.returncode == 0, shown.stderr
    assert "status interrupted: no coordinator is running it, 4 matches left;" in shown.stdout, shown.stdout
    assert "resume with 'arena tournament resume 1'" in shown.stdout
    assert "status running" not in shown.stdout
    # the listings say the same (they said "running" while nothing ran)
    assert _listed_status(home) == "interrupted"


def _listed_status(home: Path) -> tuple[str, ...] | str:
    """Tournament 1's status in 'arena tournament list', the web's list and page (one value when
    all three agree)."""
    from arena.store.db import Database
    from arena.web import queries

    listed = run_arena(["tournament", "list"], home)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("│ 1 "))
    cli = row.split("│")[5].strip()
    db = Database(f"sqlite:///{home / 'arena.db'}")
    try:
        web_list = queries.list_tournaments(db).items[0].status
        page = queries.get_tournament(db, 1)
        assert page is not None
        web_page = page.status
    finally:
        db.close()
    seen = (cli, web_list, web_page)
    return cli if len(set(seen)) == 1 else seen


def test_demo_prints_match_counts_in_words(home: Path) -> None:
    demo = subprocess.run(
        [sys.executable, "-m", "arena.demo", "--games", "1", "--move-time", "0.05", "--jobs", "2",
         "--seed", "4711"],
        cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    line = next(line for line in demo.stdout.splitlines() if line.startswith("Matches:"))
    assert re.fullmatch(r"Matches: \d+ finished(, \d+ \w+)*\. Database: \S+", line), line
    assert "{" not in line and "'" not in line
    header = demo.stdout.splitlines()[0]  # one line: a pipe got it broken inside the command
    assert header.startswith("Demo tournament ") and "duplicate dice; " in header, demo.stdout
    assert header.endswith("seed 4711 (the same matches again: ./dev demo --seed 4711)."), header
    # the hint's command works as printed, from the same shell (no venv on PATH: ./dev demo)
    hint = re.search(r"Replays \(\d+\): (\S+)/ +\(check one: (.+) engine verify <file>\)", demo.stdout)
    assert hint is not None, demo.stdout
    command = hint.group(2)
    assert command == "arena" or Path(home, command).is_file(), command
    replay = sorted(Path(hint.group(1)).glob("*.jsonl"))[0]
    checked = subprocess.run(
        [command if command != "arena" else ARENA, "engine", "verify", str(replay)],
        cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_demo_names_arena_as_this_shell_can_call_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``arena`` when it is on PATH and is this installation's; else the script's path, relative
    to the working directory when it lies under it (``.venv/bin/arena`` from the checkout)."""
    from arena.demo import arena_command

    script = Path(sys.executable).parent / "arena"
    monkeypatch.setenv("PATH", str(tmp_path))  # no arena on PATH
    monkeypatch.chdir(tmp_path)
    assert Path(arena_command()) == script.absolute()
    monkeypatch.chdir(ROOT)
    assert arena_command() == str(script.absolute().relative_to(ROOT))
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{tmp_path}")
    assert arena_command() == "arena"
    other = tmp_path / "arena"  # another installation's arena first on PATH: not this one
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{script.parent}")
    assert arena_command() != "arena"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "argument --games: 0 is below 1; give 1 or more"),
        (["--games", "x"], "argument --games: 'x' is not a whole number"),
        (["--jobs", "0"], "argument --jobs: 0 is below 1"),
        (["--move-time", "-1"], "argument --move-time: -1 is not above 0"),
        (["--move-time", "nan"], "argument --move-time: nan is not above 0"),
        (["--seed", "-3"], "argument --seed: -3 is below 0"),
        (["--seed", str(2**63)], f"is not below 2**63; give 0 to {2**63 - 1}"),
    ],
)
def test_demo_refuses_bad_arguments_before_playing(home: Path, args: list[str], message: str) -> None:
    demo = subprocess.run(
        [sys.executable, "-m", "arena.demo", *args],
        cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert demo.returncode == 2, demo.stdout + demo.stderr
    assert message in demo.stderr and "Traceback" not in demo.stderr, demo.stderr
    assert demo.stdout == "" and not (home / "arena.db").exists()  # nothing played, nothing stored


def test_starting_a_finished_tournament_says_so(home: Path) -> None:
    """A newcomer following the tour after the demo started an id that had finished long ago: the
    command re-showed its table as if it had just played it. Now it says nothing is left to run."""
    created = run_arena(["tournament", "create", "greedy", "random", "--games", "1", "--no-sandbox"], home)
    assert created.returncode == 0, created.stderr
    tid = created.stdout.strip()
    first = run_arena(["tournament", "start", tid], home)
    assert first.returncode == 0, first.stderr
    assert "has finished already" not in first.stderr
    again = run_arena(["tournament", "start", tid], home)
    assert again.returncode == 0, again.stderr
    assert (
        f"tournament {tid} (" in again.stderr
        and "has finished already: its 2 matches are played" in again.stderr
    )
    assert "Tournament " in again.stdout  # its standings, as before


def test_evaluate_never_prints_minus_zero() -> None:
    """A bot that mirrors its baseline showed 'Elo difference -0' and '[+0.00, +0.00]'."""
    import doctest

    import arena.cli.evaluate_cmd as evaluate_cmd

    assert doctest.testmod(evaluate_cmd).failed == 0
    assert (
        evaluate_cmd._elo(-0.0) == "+0"
        and evaluate_cmd._elo(-0.49) == "+0"
        and evaluate_cmd._elo(-0.6) == "-1"
    )


def test_arena_version(home: Path) -> None:
    run = run_arena(["--version"], home)
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(r"arena \d+\.\d+\.\d+; rules version '1' \(standard\), also .*\n", run.stdout), (
        run.stdout
    )


def test_ctrl_c_in_the_demo_is_one_line_with_the_resume_command(home: Path) -> None:
    """Ctrl-C in './dev demo' (the first command a newcomer runs) ends like 'arena tournament':
    one line with the counts and the resume command, status 130, no traceback; the resume then
    finishes the tournament."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.demo", "--games", "1", "--move-time", "0.05", "--jobs", "1",
         "--seed", "5"],
        cwd=home, env=arena_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    err_lines: list[str] = []
    assert proc.stderr is not None
    pump = threading.Thread(target=lambda: err_lines.extend(proc.stderr or ()), daemon=True)
    pump.start()
    try:
        deadline = time.monotonic() + 120
        while not any("matches done (" in line for line in err_lines):  # a match has finished
            assert time.monotonic() < deadline and proc.poll() is None, err_lines
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
        proc.wait(timeout=60)
        pump.join(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = "".join(err_lines)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    line = next(line for line in err.splitlines() if line.startswith("error: "))
    found = re.fullmatch(
        r"error: interrupted \(Ctrl-C\): (\d+) of 40 matches finished, .*; resume with '(.+) tournament "
        r"resume 1'",
        line,
    )
    assert found is not None, err
    command = found.group(2)
    resumed = subprocess.run(
        [command if command != "arena" else str(ARENA), "tournament", "resume", "1", "--jobs", "2"],
        cwd=home, env=arena_env(home), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "matches: 40 finished." in resumed.stderr


def test_a_tournament_run_says_why_a_bot_forfeited(home: Path) -> None:
    """A bot file that cannot start forfeits every game; after the table the run says why (the
    first forfeit's reason and detail, the match to show, the logs' folder): in the table it was
    only a count."""
    (home / "bad_bot.py").write_text("import sys\nthis is not python(\n")
    (home / "bad_bot.py").chmod(0o755)
    run = run_arena(["tournament", "run", "bad_bot.py", "random", "--games", "1", "--no-sandbox"], home)
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1, run.stderr  # random forfeits nothing: no line for it
    assert re.fullmatch(
        r"note: file:bad_bot\.py forfeited 2 of 2 games; the first \(match \d+, 'arena replays show \d+'\): "
        r"crashed: .*SyntaxError.*; the bots' logs: .*/logs/tournament-1/",
        notes[0],
    ), notes[0]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (
            ["tournament", "resume", "3"],
            1,
            "works on what is stored there, so it did not create an empty one",
        ),
        (["tournament", "start", "1"], 1, "works on what is stored there, so it did not create an empty one"),
        (["match", "greedy", "nosuchbot"], 2, "no bot 'nosuchbot'"),
        (["tournament", "run", "greedy", "nosuch"], 2, "no bot 'nosuch'"),
        (["tournament", "create", "greedy", "nosuch"], 2, "no bot 'nosuch'"),
    ],
)
def test_a_failing_command_in_the_wrong_folder_leaves_no_database(
    tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    """A write command that fails at once (an id or a bot that cannot be there: there is no
    database) does not create an empty database or folder: the next read command would
    otherwise find an empty database instead of saying there is none."""
    home = tmp_path / "arena-data"  # not there yet, as in a folder never used
    run = run_arena(args, tmp_path, ARENA_HOME=str(home))
    assert run.returncode == code, run.stderr
    assert says in run.stderr, run.stderr
    if "no bot" in says:
        assert f"there is no database at {home / 'arena.db'} yet, so no bot is registered" in run.stderr
    assert not home.exists(), sorted(p.name for p in home.rglob("*"))
    after = run_arena(["leaderboard"], tmp_path, ARENA_HOME=str(home))
    assert after.returncode == 1 and "there is no database at" in after.stderr, after.stderr


def test_demo_names_why_a_bot_forfeited(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A demo whose bots forfeited (a broken sandbox crashes them all) showed only the count in
    the table's forfeits column: like 'arena tournament run', it adds one line per bot with the
    first forfeit's reason and the match to show."""
    import shutil

    from arena import demo

    bots = tmp_path / "repo" / "bots"
    bots.mkdir(parents=True)
    for name in ("greedy", "invader", "random"):
        shutil.copy(ROOT / "bots" / f"{name}_bot.py", bots)
    (bots / "search_bot.py").write_text("import sys\nsys.exit('no search today')\n")
    monkeypatch.setattr(demo, "REPO", tmp_path / "repo")
    monkeypatch.setattr(demo, "bwrap_problem", lambda: "no sandbox in this test")
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    assert demo.main(["--games", "1", "--move-time", "0.05", "--jobs", "1", "--seed", "5"]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("note: search forfeited")]
    assert len(notes) == 1, err
    assert "crashed" in notes[0] and "no search today" in notes[0] and "arena replays show" in notes[0], notes
