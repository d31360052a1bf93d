"""The bot registry through the Python API and through ``arena bots``."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from sqlmodel import select

from arena.botref import BotRefError
from arena.store.bots import (
    BotRegistryError,
    DuplicateUploadError,
    UnknownBotError,
    _append_version,
    _latest_version,
    add_bot,
    artifact_path,
    bot_versions,
    command_of,
    get_or_add_bot,
    list_bots,
    remove_bot,
    resolve_version,
    sha256_file,
)
from arena.store.db import Database
from arena.store.models import Bot, BotVersion
from arena.store.tournaments import queued_tasks
from arena.tournament.service import create

from .helpers import bot_copy, cli_inproc, run_cli, sample


def _stored(db: Database) -> tuple[int, int]:
    with db.session() as session:
        return len(session.exec(select(Bot)).all()), len(session.exec(select(BotVersion)).all())


def _artifact_files(home: Path) -> list[Path]:
    folder = home / "artifacts"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_versions_list_and_resolve(db: Database, tmp_path: Path) -> None:
    src = bot_copy(tmp_path / "src", "mine")
    v1 = add_bot(db, "mine", src)
    assert (v1.version, v1.sha256, v1.filename) == (1, sha256_file(src), "mine.py")
    src.write_text(src.read_text() + "# better\n")
    v2 = add_bot(db, "mine", src)
    assert v2.version == 2 and v2.sha256 != v1.sha256 and v2.bot_id == v1.bot_id

    with pytest.raises(DuplicateUploadError, match="identical") as info:
        add_bot(db, "mine", src)
    assert "version 2" in str(info.value)
    assert _stored(db) == (1, 2)

    [info_] = list_bots(db)
    assert (info_.bot.name, info_.latest.version, info_.versions, info_.matches) == ("mine", 2, 2, 0)
    bot, versions = bot_versions(db, "mine")
    assert bot.name == "mine" and [v.version for v in versions] == [2, 1]

    assert resolve_version(db, "mine").id == v2.id
    assert resolve_version(db, "mine@1").id == v1.id
    assert resolve_version(db, "mine@2").id == v2.id
    with pytest.raises(UnknownBotError, match="has no version 3"):
        resolve_version(db, "mine@3")
    with pytest.raises(UnknownBotError, match="bad version"):
        resolve_version(db, "mine@two")

    # the identity check is against the current version only: going back is a new version
    src.write_text(bot_copy(tmp_path / "other", "mine").read_text())
    v3 = add_bot(db, "mine", src)
    assert v3.version == 3 and v3.sha256 == v1.sha256


def test_unknown_bot_suggests_close_names(db: Database) -> None:
    add_bot(db, "greedy", sample("greedy"))
    add_bot(db, "invader", sample("invader"))
    with pytest.raises(UnknownBotError, match="did you mean greedy"):
        resolve_version(db, "gredy")
    with pytest.raises(UnknownBotError, match="see 'arena bots list'"):
        resolve_version(db, "zzzzzz")
    with pytest.raises(BotRefError, match=r"no bot named 'invadr'\).*Did you mean invader\?$"):
        create(db, ["greedy", "invadr"], games=1)


def _bad_inputs(tmp_path: Path) -> list[tuple[str, Path, str]]:
    folder = tmp_path / "bad"
    folder.mkdir()
    plain = folder / "plain"  # no extension, no shebang, not executable
    plain.write_text("print('hi')\n")
    os.chmod(plain, 0o644)
    good = bot_copy(tmp_path / "good", "good")
    return [
        ("nobody", folder / "missing.py", "no such file"),
        ("nobody", folder, "not a file"),
        ("nobody", plain, "not executable and no known interpreter"),
        ("bad name", good, "bad bot name"),
        ("-dash", good, "bad bot name"),
        ("x" * 65, good, "bad bot name"),
        ("a/b", good, "bad bot name"),
        ("", good, "bad bot name"),
    ]


def test_bad_uploads_store_nothing(db: Database, tmp_path: Path, arena_home: Path) -> None:
    for name, path, message in _bad_inputs(tmp_path):
        with pytest.raises(BotRegistryError, match=message):
            add_bot(db, name, path)
    assert _stored(db) == (0, 0)
    assert _artifact_files(arena_home) == []


def test_other_launchers(db: Database, tmp_path: Path) -> None:
    shebang = tmp_path / "shebot"
    shebang.write_text("#!/usr/bin/env python3\nprint('x')\n")
    os.chmod(shebang, 0o644)
    v = add_bot(db, "shebot", shebang)
    assert command_of(v) == ["/usr/bin/env", "python3", str(artifact_path(v))]
    exe = tmp_path / "exebot"
    exe.write_bytes(b"\x7fELF not really\n")
    os.chmod(exe, 0o755)
    v = add_bot(db, "exebot", exe)
    assert command_of(v) == [str(artifact_path(v))]
    assert os.stat(artifact_path(v)).st_mode & stat.S_IXUSR, "the stored copy keeps the executable bit"


def test_artifact_is_a_copy(db: Database, tmp_path: Path, arena_home: Path) -> None:
    src = bot_copy(tmp_path / "src", "mine")
    v = add_bot(db, "mine", src)
    add_bot(db, "greedy", sample("greedy"))
    artifact = artifact_path(v)
    assert artifact.is_relative_to(arena_home.resolve() / "artifacts") and artifact != src
    assert sha256_file(artifact) == v.sha256
    src.write_text("raise SystemExit('changed after upload')\n")  # edit the original afterwards
    [version] = bot_versions(db, "mine")[1]
    assert version.sha256 == v.sha256 == sha256_file(artifact)
    assert artifact.read_text() != src.read_text()
    t = create(db, ["mine", "greedy"], games=1, seed=1)
    assert t.id is not None
    launched = {s.name: s.command for task in queued_tasks(db, t.id) for s in task.seats}
    assert launched["mine"][-1] == str(artifact)  # what a worker launches is the stored copy
    assert str(src) not in launched["mine"]


def test_remove_keeps_history(db: Database) -> None:
    add_bot(db, "greedy", sample("greedy"))
    add_bot(db, "invader", sample("invader"))
    add_bot(db, "random", sample("random"))
    remove_bot(db, "greedy")
    assert [i.bot.name for i in list_bots(db)] == ["invader", "random"]
    every = {i.bot.name: i for i in list_bots(db, include_removed=True)}
    assert set(every) == {"greedy", "invader", "random"} and every["greedy"].bot.removed_at is not None
    bot, versions = bot_versions(db, "greedy")
    assert bot.removed_at is not None and [v.version for v in versions] == [1]
    with pytest.raises(UnknownBotError, match="no bot named 'greedy'") as info:
        create(db, ["greedy", "invader"], games=1)
    assert "arena bots list" in str(info.value) or "did you mean" in str(info.value)
    with pytest.raises(UnknownBotError):
        resolve_version(db, "greedy@1")
    with pytest.raises(UnknownBotError):
        remove_bot(db, "greedy")  # already removed
    with pytest.raises(UnknownBotError):
        remove_bot(db, "nobody")
    # adding its file again brings it back (as 'arena bots remove' promises), without a new version
    again = add_bot(db, "greedy", sample("greedy"))
    assert again.version == 1
    assert [i.bot.name for i in list_bots(db)] == ["greedy", "invader", "random"]
    assert _stored(db) == (3, 3)


def test_concurrent_adds_of_one_file(sqlite_url: str, tmp_path: Path) -> None:
    """Threads adding the same (large) file under different names at once: all succeed."""
    db = Database(sqlite_url)
    errors: list[BaseException] = []
    for rnd in range(5):
        src = tmp_path / f"big{rnd}.py"
        src.write_text(sample("greedy").read_text() + f"# {rnd}\n" + "#" * 400_000 + "\n")
        barrier = threading.Barrier(4)

        def add(i: int, src: Path = src, rnd: int = rnd, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                add_bot(db, f"n{rnd}x{i}", src)
            except BaseException as exc:  # collected and reported below
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert len(list_bots(db)) == 20
    db.close()


@pytest.mark.parametrize("known", [False, True], ids=["new-name", "next-version"])
def test_two_writers_of_one_bot_name_take_turns(db: Database, tmp_path: Path, known: bool) -> None:
    """One transaction registers a version of ``racer`` (a new name, or the next version of a
    known one) and has not committed when another process adds a file under that name: the
    second waits and then numbers its version after the first.  On PostgreSQL both used to insert
    the name (or version N+1) and the second ended in an IntegrityError traceback
    (``arena bots add`` run four times at once); SQLite's BEGIN IMMEDIATE serialised them."""
    if known:
        add_bot(db, "racer", bot_copy(tmp_path / "v0", "racer", "zero"))
    first, second = bot_copy(tmp_path / "a", "racer", "first"), bot_copy(tmp_path / "b", "racer", "second")
    outcome: list[object] = []

    def other_process() -> None:
        try:
            outcome.append(add_bot(db, "racer", second))
        except BaseException as exc:  # reported by the assertion below
            outcome.append(exc)

    with db.session() as session:
        bot, added, _revived = get_or_add_bot(session, "racer")
        assert bot.id is not None and added is not known
        latest = _latest_version(session, bot.id)
        mine = _append_version(session, bot.id, latest, sha256_file(first), "racer.py", "[]", True)
        thread = threading.Thread(target=other_process)
        thread.start()
        thread.join(0.5)  # it waits for this transaction: no answer yet
        assert not outcome, outcome
    thread.join(30)
    [theirs] = outcome
    assert isinstance(theirs, BotVersion), theirs
    assert theirs.version == mine.version + 1 and theirs.bot_id == bot.id
    assert _stored(db) == (1, 3 if known else 2)


def test_bots_cli(sqlite_url: str, arena_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena bots`` as a user runs it (SQLite only, mostly in-process: a console-script call costs
    a second or more of start-up; the API tests above cover both backends)."""
    url = sqlite_url
    monkeypatch.setenv(
        "COLUMNS", "160"
    )  # the tables' rows read whole, whatever the terminal running the tests

    def cli(*args: str, code: int = 0) -> tuple[str, str]:
        proc = cli_inproc(arena_home, url, "bots", *args, code=code)
        return proc.stdout, proc.stderr

    src = bot_copy(tmp_path / "src", "mine")
    proc = run_cli(arena_home, url, "bots", "add", "mine", str(src))  # the real console script
    assert "added mine version 1" in proc.stdout
    proc = run_cli(arena_home, url, "bots", "add", "mine", str(src))  # again: skipped, not an error
    assert proc.stdout.startswith("mine version 1 is this file already") and "nothing added" in proc.stdout
    out, _ = cli("add", "mine", str(src))
    assert out == proc.stdout  # in-process runs say the same as the console script
    src.write_text(src.read_text() + "# v2\n")
    out, _ = cli("add", "mine", str(src))
    assert "added mine version 2" in out
    out, _ = cli("add", "other", str(sample("invader")), "--fresh")
    assert "added other version 1" in out
    for name, path, message in _bad_inputs(tmp_path):
        if path.name == "missing.py" or name == "bad name":  # a bad file and a bad name
            # a path that names nothing and a bad NAME are usage errors (exit 2, as in 'arena match')
            _, err = cli("add", name, str(path), code=2)
            assert err.startswith("error:") and message in err

    out, _ = cli("list")
    assert "mine" in out and "other" in out
    row = next(line for line in out.splitlines() if "mine" in line)
    assert "mine.py" in row and "│ 2 " in row  # latest version 2, 2 versions
    assert "│ active │ kept " in row  # its status, and how its process runs (it said "kept running")
    assert "│ active │ fresh " in next(line for line in out.splitlines() if "other" in line)

    out, _ = cli("show", "mine")
    assert "mine (active), 2 version(s)" in out
    db = Database(url)
    _, versions = bot_versions(db, "mine")
    db.close()
    for v in versions:
        assert v.sha256 in out and v.artifact in out.replace("\n", "")
    _, err = cli("show", "mien", code=1)
    assert "no bot named 'mien'" in err and "did you mean mine" in err

    out, _ = cli("remove", "mine")
    assert "removed mine" in out and "history kept" in out
    _, err = cli("remove", "mine")  # again: said so (it read "no bot named 'mine'", exit 1)
    assert "mine was removed already" in err and "brings it back" in err
    out, _ = cli("list")
    assert "mine" not in out and "other" in out
    out, _ = cli("list", "--all")
    row = next(line for line in out.splitlines() if "mine" in line)
    assert "removed" in row
    out, _ = cli("show", "mine")
    assert "mine (removed" in out and "2 version(s)" in out
    proc = cli_inproc(arena_home, url, "tournament", "create", "mine", "other", "--seed", "1", code=1)
    assert "no bot named 'mine'" in proc.stderr

    db = Database(url)
    assert _stored(db) == (2, 3)
    assert [i.bot.name for i in list_bots(db)] == ["other"]
    db.close()


def test_a_bare_name_passes_over_uploads_not_validated_or_rejected(db: Database, tmp_path: Path) -> None:
    """``name`` is the newest version that may play: a web upload still pending/validating or
    rejected by its validation is skipped; ``name@N`` still names any version."""
    from arena.store.models_accounts import BotUpload, UploadStatus, UserAccount

    src = bot_copy(tmp_path / "src", "mine")
    v1 = add_bot(db, "mine", src)  # from the CLI: no upload record, always playable
    with db.session() as session:
        user = UserAccount(username="ann", password_hash="x")
        session.add(user)
        session.flush()
        assert user.id is not None
        user_id = user.id

    def upload(extra: str, status: str) -> int:
        src.write_text(src.read_text() + extra)
        version = add_bot(db, "mine", src)
        assert version.id is not None
        with db.session() as session:
            session.add(BotUpload(bot_version_id=version.id, user_id=user_id, status=status))
        return version.id

    v2 = upload("# 2\n", UploadStatus.PENDING)
    assert resolve_version(db, "mine").id == v1.id
    assert resolve_version(db, "mine@2").id == v2
    with db.session() as session:
        row = session.exec(select(BotUpload).where(BotUpload.bot_version_id == v2)).one()
        row.status = UploadStatus.ACTIVE
        session.add(row)
    assert resolve_version(db, "mine").id == v2
    upload("# 3\n", UploadStatus.REJECTED)
    upload("# 4\n", UploadStatus.VALIDATING)
    assert resolve_version(db, "mine").id == v2
    assert resolve_version(db, "mine@3").version == 3

    src2 = bot_copy(tmp_path / "other", "fresh")
    only = add_bot(db, "fresh", src2)
    assert only.id is not None
    with db.session() as session:
        session.add(BotUpload(bot_version_id=only.id, user_id=user_id, status=UploadStatus.PENDING))
    with pytest.raises(UnknownBotError, match="no version that may play yet"):
        resolve_version(db, "fresh")


def test_a_file_name_that_is_not_utf8_is_stored_as_printable_text(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """A bot file named in Latin-1 (``zuf\\xe4llig.py``): Python reads the byte as a lone
    surrogate, which the database (and the bots' protocol) cannot carry; 'arena match' with it
    ended in a UnicodeEncodeError traceback, and 'arena bots add' blamed the bot for its check
    match.  Its name is now printable text; the file itself is found and stored."""
    from arena.botref import resolve
    from arena.store.bots import file_version

    path = tmp_path / os.fsdecode(b"zuf\xe4llig.py")
    path.write_bytes(sample("random").read_bytes())
    assert resolve(str(path)).name == "zuf\\udce4llig"
    played = file_version(sqlite_db, path)
    registered = add_bot(sqlite_db, "latin", path)
    for version in (played, registered):
        assert version.filename == "zuf\\udce4llig.py"
        assert artifact_path(version).read_bytes() == path.read_bytes()
        assert command_of(version)
    with sqlite_db.session() as session:
        assert set(session.exec(select(Bot.name)).all()) == {"file:zuf\\udce4llig.py", "latin"}
