"""Who may play a web game against which stored version (arena.accounts.ownership.play_refusal):
an upload that has not passed its validation, or that its owner retired, is played by its owner
or an admin only.  An outside review started ``/play/new?bot=NAME@N`` against another user's
rejected version and read how it failed."""

from __future__ import annotations

from pathlib import Path

from arena.accounts.ownership import play_refusal
from arena.accounts.users import create_user
from arena.store.bots import add_bot
from arena.store.db import Database
from arena.store.models_accounts import UploadStatus
from arena.submission.store import set_status, submit_version

REPO = Path(__file__).resolve().parents[2]
PW = "a good long password"


def test_only_the_owner_or_an_admin_plays_a_version_not_in_play(db: Database) -> None:
    carol = create_user(db, "carol", PW)
    dave = create_user(db, "dave", PW)
    admin = create_user(db, "boss", PW, is_admin=True)
    data = (REPO / "bots" / "random_bot.py").read_bytes()
    version = submit_version(db, carol, "carolbot", "carolbot.py", data).version
    assert version.id is not None
    for status in (
        UploadStatus.PENDING,
        UploadStatus.VALIDATING,
        UploadStatus.REJECTED,
        UploadStatus.RETIRED,
    ):
        set_status(db, version.id, status, "crashed: secret" if status == UploadStatus.REJECTED else None)
        why = play_refusal(db, dave, version.id)
        assert why is not None and f"carolbot@1 is {status}" in why and "only its owner" in why, why
        assert play_refusal(db, carol, version.id) is None
        assert play_refusal(db, admin, version.id) is None
        assert play_refusal(db, None, version.id) is not None
    set_status(db, version.id, UploadStatus.ACTIVE)
    assert play_refusal(db, dave, version.id) is None
    registered = add_bot(db, "greedy", REPO / "bots" / "greedy_bot.py")  # no upload record
    assert registered.id is not None and play_refusal(db, dave, registered.id) is None


def test_sample_and_taken_names_are_reserved_whatever_their_case(db: Database) -> None:
    """'RANDOM' or 'Greedy' beside the samples, 'Abot' beside another user's 'abot': a name that
    differs only in case could pass for the other bot (an outside review uploaded all three)."""
    import pytest

    from arena.submission.store import UploadError

    eve = create_user(db, "eve", PW)
    ann = create_user(db, "ann", PW)
    data = (REPO / "bots" / "random_bot.py").read_bytes() + b"\n# mine\n"
    for name in (
        "RANDOM",
        "Greedy",
        "Search",
        "greedy_naive",
        "random.",
        "random-",
        "search.py",
        "invader_bot",
    ):
        with pytest.raises(UploadError, match="reserved for a sample bot") as info:
            submit_version(db, eve, name, "b.py", data)
        assert info.value.status == 403
    submit_version(db, ann, "abot", "b.py", data)
    with pytest.raises(UploadError, match="differs only in case from the bot 'abot'") as info:
        submit_version(db, eve, "Abot", "b.py", data + b"#2\n")
    assert info.value.status == 409
    submit_version(db, ann, "abot", "b.py", data + b"#3\n")  # its owner's own name, as spelt: fine
