"""Uploads and their validation by the server's validation service (real worker processes, real
sandboxed matches, real databases: SQLite and PostgreSQL)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlmodel import select

from arena.serve.services import ServeContext
from arena.serve.validator import ValidationService
from arena.store.db import Database
from arena.store.models import Match, MatchStatus
from arena.store.models_accounts import BotUpload, UploadStatus, UserAccount
from arena.submission import validation
from arena.submission.store import active_version_ids, delete_bot, match_ids, set_status, submit_version

from .conftest import CRASH_BOT, GOOD_BOT


def _status(db: Database, upload_id: int) -> BotUpload:
    with db.session() as session:
        row = session.get(BotUpload, upload_id)
        assert row is not None
        return row


def _wait(db: Database, upload_id: int, timeout: float = 120.0) -> BotUpload:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = _status(db, upload_id)
        if row.status in (UploadStatus.ACTIVE, UploadStatus.REJECTED):
            return row
        time.sleep(0.2)
    raise AssertionError(f"upload {upload_id} still {_status(db, upload_id).status}")


def test_good_upload_becomes_active_and_retires_the_previous(db: Database, alice: UserAccount) -> None:
    first = submit_version(db, alice, "rover", "rover.py", GOOD_BOT.read_bytes())
    second = submit_version(db, alice, "rover", "rover.py", GOOD_BOT.read_bytes() + b"\n# v2\n")
    assert first.upload.status == UploadStatus.PENDING and second.version.version == 2
    service = ValidationService(ServeContext(db, jobs=2, log=lambda _line: None))
    service.start()
    try:
        a = _wait(db, first.upload.id or 0)
        b = _wait(db, second.upload.id or 0)
    finally:
        service.stop()
    assert a.status == UploadStatus.RETIRED or a.status == UploadStatus.ACTIVE
    assert b.status == UploadStatus.ACTIVE
    assert _status(db, first.upload.id or 0).status == UploadStatus.RETIRED  # replaced by version 2
    ids = match_ids(b)
    assert len(ids) == len(validation.plan()) == 2
    with db.session() as session:
        matches = session.exec(select(Match).where(Match.id.in_(ids))).all()  # type: ignore[union-attr]
        assert {m.status for m in matches} == {MatchStatus.FINISHED}
        assert {m.group_key for m in matches} == {"validation"} and {m.tournament_id for m in matches} == {
            None
        }


def test_crashing_upload_is_rejected_with_its_stderr(db: Database, bob: UserAccount) -> None:
    sub = submit_version(db, bob, "crashy", "crash_bot.py", CRASH_BOT.read_bytes())
    service = ValidationService(ServeContext(db, jobs=1, log=lambda _line: None))
    service.start()
    try:
        row = _wait(db, sub.upload.id or 0)
    finally:
        service.stop()
    assert row.status == UploadStatus.REJECTED
    assert row.reason is not None and row.reason.startswith("crashed")
    assert row.stderr_tail is not None and "cannot find my weights file" in row.stderr_tail


def test_keep_previous_keeps_both_active(sqlite_db: Database) -> None:
    from arena.accounts.users import create_user

    carol = create_user(sqlite_db, "carol", "a long password")
    one = submit_version(sqlite_db, carol, "pair", "pair.py", GOOD_BOT.read_bytes())
    two = submit_version(
        sqlite_db, carol, "pair", "pair.py", GOOD_BOT.read_bytes() + b"#2\n", keep_previous=True
    )
    service = ValidationService(ServeContext(sqlite_db, jobs=2, log=lambda _line: None))
    service.start()
    try:
        _wait(sqlite_db, one.upload.id or 0)
        _wait(sqlite_db, two.upload.id or 0)
    finally:
        service.stop()
    assert _status(sqlite_db, one.upload.id or 0).status == UploadStatus.ACTIVE
    assert _status(sqlite_db, two.upload.id or 0).status == UploadStatus.ACTIVE
    assert active_version_ids(sqlite_db) == [one.version.id, two.version.id]
    set_status(sqlite_db, one.version.id or 0, UploadStatus.RETIRED, "retired by its owner")
    assert active_version_ids(sqlite_db) == [two.version.id]
    delete_bot(sqlite_db, two.version.bot_id)
    assert active_version_ids(sqlite_db) == []


@pytest.mark.parametrize("finished_first", [True])
def test_interrupted_validation_is_resumed_keeping_finished_matches(
    sqlite_db: Database, finished_first: bool
) -> None:
    """A dead server left the upload 'validating' with one match finished and one running: the
    next start keeps the finished one and plays only the other again."""
    from arena.accounts.users import create_user

    dave = create_user(sqlite_db, "dave", "a long password")
    sub = submit_version(sqlite_db, dave, "phoenix", "phoenix.py", GOOD_BOT.read_bytes())
    uid = sub.upload.id or 0
    assert validation.claim(sqlite_db) == uid
    tasks = validation.tasks_for(sqlite_db, uid, None)
    assert len(tasks) == 2
    # play the first match for real in a worker process (as the server's pool would: spawned, never
    # in this test process, whose gRPC threads must not host a referee next to forked children),
    # record it; the second stays 'running'
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from arena.tournament.worker import play_task

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        result = pool.submit(play_task, tasks[0]).result(timeout=240)
    validation.record(sqlite_db, uid, tasks[0].match_id, result)
    # ... and the server dies here.  A new one starts:
    service = ValidationService(ServeContext(sqlite_db, jobs=1, sandbox=None, log=lambda _line: None))
    service.start()
    try:
        row = _wait(sqlite_db, uid)
    finally:
        service.stop()
    assert row.status == UploadStatus.ACTIVE and row.attempts == 2
    ids = match_ids(row)
    assert ids[0] == tasks[0].match_id  # the finished match was kept
    assert ids[1] != tasks[1].match_id  # the interrupted one was replaced ...
    with sqlite_db.session() as session:
        old = session.get(Match, tasks[1].match_id)
        assert old is not None and old.status == MatchStatus.FAILED and "interrupted" in (old.error or "")
        new = session.get(Match, ids[1])
        assert new is not None and new.seed == old.seed == tasks[0].seed  # ... on the same dice


def test_validation_seeds_are_secret_and_both_seatings_share_one(sqlite_db: Database) -> None:
    """Validation seeds followed from the upload's id (``random.Random(f"validation-{id}")``):
    a bot that guessed its upload id knew every throw of its validation.  Now each upload's seed
    is drawn from the operating system; its two seatings share it (duplicate dice)."""
    import random

    from arena.accounts.users import create_user

    erin = create_user(sqlite_db, "erin", "a long password")
    seeds = []
    for k in range(2):
        sub = submit_version(sqlite_db, erin, f"lark{k}", "lark.py", GOOD_BOT.read_bytes())
        uid = sub.upload.id or 0
        assert validation.claim(sqlite_db) == uid
        tasks = validation.tasks_for(sqlite_db, uid, None)
        assert len(tasks) == 2 and tasks[0].seed == tasks[1].seed
        assert tasks[0].seed != random.Random(f"validation-{uid}").randrange(2**62)  # the old one
        seeds.append(tasks[0].seed)
    assert seeds[0] != seeds[1]


def _opponents(db: Database, upload_id: int) -> set[tuple[str, int]]:
    """(bot name, version id) of the non-candidate seats of upload ``upload_id``'s matches."""
    from arena.store.models import Bot, BotVersion, MatchSeat

    row = _status(db, upload_id)
    with db.session() as session:
        seats = session.exec(
            select(Bot.name, BotVersion.id)
            .join(BotVersion, BotVersion.bot_id == Bot.id)  # type: ignore[arg-type]
            .join(MatchSeat, MatchSeat.bot_version_id == BotVersion.id)  # type: ignore[arg-type]
            .where(MatchSeat.match_id.in_(match_ids(row)), MatchSeat.bot_version_id != row.bot_version_id)  # type: ignore[attr-defined]
        ).all()
    return {(name, vid or 0) for name, vid in seats}


def test_every_validation_match_plays_the_one_stored_random(db: Database, alice: UserAccount) -> None:
    """On a fresh database the first validation match registered the sample as ``random`` and the
    second recorded it as ``file:random_bot.py``: one opponent under two names.  Now both matches
    of both uploads play the same stored version of ``random``."""
    first = submit_version(db, alice, "rover", "rover.py", GOOD_BOT.read_bytes())
    second = submit_version(db, alice, "lander", "lander.py", GOOD_BOT.read_bytes() + b"\n# v2\n")
    for sub in (first, second):
        uid = sub.upload.id or 0
        assert validation.claim(db) == uid
        assert len(validation.tasks_for(db, uid, None)) == 2
    one, two = _opponents(db, first.upload.id or 0), _opponents(db, second.upload.id or 0)
    assert one == two and len(one) == 1 and next(iter(one))[0] == "random", (one, two)
    from arena.store.models import Bot

    with db.session() as session:
        assert session.exec(select(Bot).where(Bot.name == "file:random_bot.py")).first() is None


def test_the_validation_opponent_follows_the_sample_file(sqlite_db: Database, tmp_path: Path) -> None:
    """A ``random`` registered from an older sample file gets the current file as a new version
    (once); a ``random`` holding another file (registered before sample names were reserved) is
    left alone and the sample is recorded as ``file:random_bot.py``, the same version every time."""
    from arena.botref import SAMPLES_DIR
    from arena.store.bots import add_bot, remove_bot, sha256_file
    from arena.store.models import Bot, BotVersion

    older = tmp_path / "random_bot.py"
    older.write_bytes(GOOD_BOT.read_bytes() + b"\n# an older sample\n")
    old = add_bot(sqlite_db, "random", older)
    a = validation.opponent_version(sqlite_db, "random")
    assert a != old.id and validation.opponent_version(sqlite_db, "random") == a
    with sqlite_db.session() as session:
        v = session.get(BotVersion, a)
        assert v is not None and v.version == 2 and v.bot_id == old.bot_id
        assert v.sha256 == sha256_file(SAMPLES_DIR / "random_bot.py")

    other = tmp_path / "mine.py"
    other.write_bytes(GOOD_BOT.read_bytes() + b"\n# somebody's own\n")
    add_bot(sqlite_db, "greedy", other)
    g = validation.opponent_version(sqlite_db, "greedy")
    assert validation.opponent_version(sqlite_db, "greedy") == g
    with sqlite_db.session() as session:
        v = session.get(BotVersion, g)
        assert v is not None
        bot = session.get(Bot, v.bot_id)
        assert bot is not None and bot.name == "file:greedy_bot.py"
    remove_bot(sqlite_db, "random")  # a removed random still records the sample's version, not revived
    assert validation.opponent_version(sqlite_db, "random") == a
    with sqlite_db.session() as session:
        assert session.exec(select(Bot).where(Bot.name == "random")).one().removed_at is not None
