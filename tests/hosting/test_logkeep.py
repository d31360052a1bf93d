"""A host's folder of bot logs stays within bounds: the oldest logs go first, running bots' stay.

Every bot process writes two logs; a host that runs for weeks (``arena serve``'s ladder, a
lobby) launched processes without end, and a bot that printed its output limit and forfeited
every match left 2 MiB of new logs per match, for good.  Unit tests of
:func:`arena.hosting.logkeep.trim` (a property test for its contract), then a real host with real
bot processes: the folder stays within its bounds over many matches.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.hosting import BotSpec, LocalSeat, MatchHost, logkeep
from arena.matchrunner import resolve_bot
from arena.referee import TimeControl

FAST = TimeControl(0.5, 2.0)


def _log(folder: Path, name: str, size: int, age: float) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    stamp = 1_700_000_000 - age
    os.utime(path, (stamp, stamp))
    return path


def test_the_oldest_logs_go_until_the_folder_is_within_its_bytes(tmp_path: Path) -> None:
    old = _log(tmp_path, "a.stderr.log", 400, age=30)
    middle = _log(tmp_path, "b.stderr.log", 400, age=20)
    new = _log(tmp_path, "c.stderr.log", 400, age=10)
    done = logkeep.trim(tmp_path, max_bytes=900, max_files=100)
    assert done == logkeep.Trimmed(files=1, bytes=400)
    assert not old.exists() and middle.exists() and new.exists()


def test_the_oldest_logs_go_until_the_folder_is_within_its_file_count(tmp_path: Path) -> None:
    paths = [_log(tmp_path, f"m{k}-seat0-x.stdout.log", 0, age=100 - k) for k in range(10)]
    done = logkeep.trim(tmp_path, max_bytes=10**9, max_files=4)
    assert done.files == 6
    assert [p.exists() for p in paths] == [False] * 6 + [True] * 4


def test_running_bots_logs_and_other_files_are_never_deleted(tmp_path: Path) -> None:
    running = _log(tmp_path, "w1-quiet-1.stdout.log", 1000, age=99)  # the oldest, still written to
    other = _log(tmp_path, "notes.txt", 5000, age=98)  # not a log
    (tmp_path / "sub.log").mkdir()  # a folder named like a log
    link = tmp_path / "link.log"
    link.symlink_to(other)
    fresh = _log(tmp_path, "w1-new-2.stdout.log", 10, age=1)
    done = logkeep.trim(tmp_path, max_bytes=100, max_files=100, keep=[running])
    assert done.files == 1  # only the fresh log could go, and went (the running one is over alone)
    assert running.exists() and other.exists() and (tmp_path / "sub.log").is_dir() and link.is_symlink()
    assert not fresh.exists()


def test_a_missing_folder_is_nothing_to_trim(tmp_path: Path) -> None:
    assert logkeep.trim(tmp_path / "absent", max_bytes=0, max_files=0) == logkeep.Trimmed(0, 0)


@settings(max_examples=200)
@given(
    files=st.lists(st.tuples(st.integers(0, 500), st.booleans()), min_size=0, max_size=12),
    max_bytes=st.integers(0, 3000),
    max_files=st.integers(0, 12),
)
def test_trim_keeps_the_newest_within_bounds_and_never_a_running_log(
    files: list[tuple[int, bool]], max_bytes: int, max_files: int
) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        made = [
            (_log(folder, f"f{k}.stdout.log", size, age=float(k * 10 + 5)), size, running)
            for k, (size, running) in enumerate(files)
        ]  # file k is older than file k - 1
        keep = [p for p, _, running in made if running]
        logkeep.trim(folder, max_bytes=max_bytes, max_files=max_files, keep=keep)
        left = [(p, size, running) for p, size, running in made if p.exists()]
        assert all(p.exists() for p in keep)  # never a running bot's log
        deletable_left = [p for p, _, running in left if not running]
        within = sum(s for _, s, _ in left) <= max_bytes and len(left) <= max_files
        assert within or not deletable_left  # within bounds, or nothing more could go
        # what went is older than every deletable log that stayed
        gone = [k for k, (p, _, running) in enumerate(made) if not running and not p.exists()]
        stayed = [k for k, (p, _, running) in enumerate(made) if not running and p.exists()]
        assert not gone or not stayed or min(gone) > max(stayed)


def test_a_host_keeps_its_log_folder_within_bounds_over_many_matches(tmp_path: Path) -> None:
    """Real bots: one prints 20 KB to stderr each time it is started; the host plays 12 matches
    with a bound of 100 KB and no pause between trims, so its folder holds the newest logs only,
    among them the last match's."""
    chatty = tmp_path / "chatty_bot.py"
    random_bot = resolve_bot("random")
    chatty.write_text(
        "import sys\nsys.stderr.write('x' * 20_000 + '\\n')\nsys.stderr.flush()\n"
        + Path(random_bot.command[-1]).read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    spec = BotSpec("chatty", (sys.executable, str(chatty)))
    logs = tmp_path / "logs"

    async def scenario() -> None:
        host = MatchHost(sandbox=None, log_dir=logs)
        host.log_bytes = 100_000
        host.trim_every = 0.0
        await host.start()
        try:
            for m in range(12):
                seats = [LocalSeat(spec), LocalSeat(random_bot)]
                result = await host.play(seats, 900 + m, FAST, match_id=f"m{m}")
                assert not result.forfeits, result.forfeits
        finally:
            await host.close()

    asyncio.run(scenario())
    names = sorted(p.name for p in logs.iterdir())
    total = sum(p.stat().st_size for p in logs.iterdir())
    # the last trim ran before the last match's bots started: at most its two processes' logs over
    assert total <= 100_000 + 2 * 20_100, (total, names)
    assert "m11-seat0-chatty.stderr.log" in names and "m11-seat1-random.stdout.log" in names
    assert "m0-seat0-chatty.stderr.log" not in names, names
