"""A bot's page data: versions with validation, recent matches, slowest decisions, forfeits with
their evidence (SQLite and PostgreSQL)."""

from __future__ import annotations

import time

import pytest

from arena.serve.services import ServeContext
from arena.serve.validator import ValidationService
from arena.store.db import Database
from arena.store.models_accounts import UserAccount
from arena.submission.botpage import NoSuchBotError, bot_page
from arena.submission.store import submit_version

from .conftest import CRASH_BOT, GOOD_BOT


def _validate_all(db: Database) -> None:
    service = ValidationService(ServeContext(db, jobs=2, log=lambda _line: None))
    service.start()
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            pages = [bot_page(db, n) for n in ("walker", "faller")]
            if all(v.status in ("active", "rejected") for p in pages for v in p.versions):
                return
            time.sleep(0.3)
        raise AssertionError("validation did not end")
    finally:
        service.stop()


def test_the_page_of_a_good_and_of_a_crashing_bot(db: Database, alice: UserAccount, bob: UserAccount) -> None:
    submit_version(db, alice, "walker", "walker.py", GOOD_BOT.read_bytes())
    submit_version(db, bob, "faller", "crash_bot.py", CRASH_BOT.read_bytes())
    _validate_all(db)
    good = bot_page(db, "walker")
    assert good.owner == "alice" and [v.status for v in good.versions] == ["active"]
    [v] = good.versions
    assert len(v.validation) == 2 and len(good.recent) == 2
    assert {m.id for m in good.recent} == {m.id for m in v.validation}
    assert good.slowest and good.slowest == sorted(good.slowest, key=lambda s: -s.think_max)
    assert good.forfeits == []
    bad = bot_page(db, "faller")
    [b] = bad.versions
    assert b.status == "rejected" and (b.reason or "").startswith("crashed")
    assert bad.forfeits and bad.forfeits[0].termination == "crashed"
    assert "cannot find my weights file" in bad.forfeits[0].evidence.get("stderr_tail", "")
    public = bad.to_json(private=False)
    assert (
        "stderr_tail" not in public["versions"][0] and "stderr_tail" not in public["forfeits"][0]["evidence"]
    )
    assert "cannot find my weights file" in bad.to_json(private=True)["versions"][0]["stderr_tail"]
    with pytest.raises(NoSuchBotError):
        bot_page(db, "nobody")


def test_the_line_after_an_upload_follows_the_version_s_status(db: Database, alice: UserAccount) -> None:
    """``/bots/NAME?uploaded=N`` said "it is validated now" whatever the version's state, and kept
    saying it once the version passed or failed.  The line reads the status from the store: it
    waits, is being validated, passed, failed (the reason in its row); none for an unknown N."""
    import re
    import urllib.request

    from arena.serve.webapp import serve_app
    from arena.submission.store import set_status
    from arena.web.auth_routes import Accounts
    from arena.web.server import BackgroundServer

    sub = submit_version(db, alice, "rover", "rover.py", GOOD_BOT.read_bytes())
    vid = sub.version.id or 0

    def line(site: str, n: int = 1) -> str:
        with urllib.request.urlopen(f"{site}/bots/rover?uploaded={n}", timeout=30) as r:
            page = r.read().decode("utf-8")
        found = re.search(r'<p class="acct-note" role="status"[^>]*>(.*?)</p>', page, re.S)
        return "" if found is None else " ".join(found.group(1).split())

    with BackgroundServer(serve_app(db, Accounts(db))) as site:
        pending = line(site)
        set_status(db, vid, "validating")
        validating = line(site)
        set_status(db, vid, "active")
        active = line(site)
        set_status(db, vid, "rejected", "crashed: exit status 1")
        rejected = line(site)
        unknown = line(site, 7)
    assert "it is validated now" not in pending + validating + active + rejected
    assert pending.startswith("Version 1 was uploaded; it waits its turn to be validated"), pending
    assert "short matches against random" in pending and "shows the result when it is done" in pending
    assert validating.startswith("Version 1 was uploaded; it is being validated now"), validating
    assert "short matches against random" in validating
    assert active == "Version 1 was uploaded; it passed its validation and is active.", active
    assert rejected == "Version 1 was uploaded; it failed its validation: the reason is in its row below."
    assert unknown == ""
