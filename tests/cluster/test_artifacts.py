"""The worker's artifact cache: content-addressed, verified, never trusted blindly."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from arena.referee.timecontrol import TimeControl
from arena.store.tournaments import MatchTask, SeatTask
from arena.tournament.cluster import (
    Artifact,
    ArtifactMissingError,
    RemoteMatch,
    artifact_path,
    artifacts_present,
    has_artifact,
    localize,
    store_artifacts,
    worker_command,
)

BODY = b"#!/bin/sh\necho hello\n"
SHA = hashlib.sha256(BODY).hexdigest()


def test_store_and_find(arena_home: Path) -> None:
    assert artifacts_present([(SHA, "bot.sh")]) == []
    assert store_artifacts({SHA: ("bot.sh", BODY, True)}) == [SHA]
    path = arena_home / "artifacts" / SHA / "bot.sh"
    assert path.read_bytes() == BODY and os.access(path, os.X_OK)
    assert artifacts_present([(SHA, "bot.sh")]) == [SHA]
    assert store_artifacts({SHA: ("bot.sh", BODY, True)}) == []  # already there: nothing written
    assert [p.name for p in path.parent.iterdir()] == ["bot.sh"]  # no temporary files left


def test_wrong_bytes_are_refused(arena_home: Path) -> None:
    with pytest.raises(ValueError, match="do not match their sha256"):
        store_artifacts({SHA: ("bot.sh", BODY + b"#", False)})
    assert not (arena_home / "artifacts" / SHA / "bot.sh").exists()


def test_a_damaged_cache_entry_is_missing(arena_home: Path) -> None:
    path = arena_home / "artifacts" / SHA / "bot2.sh"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"tampered")
    assert not has_artifact(SHA, "bot2.sh")


@pytest.mark.parametrize("sha,name", [("ab" * 32, "../x"), ("ab" * 32, ""), ("AB" * 32, "x"), ("12", "x")])
def test_bad_references(sha: str, name: str) -> None:
    with pytest.raises(ValueError):
        artifact_path(sha, name)


def test_localize_points_commands_at_the_local_copy(arena_home: Path) -> None:
    origin = "/elsewhere/artifacts/" + SHA + "/bot.sh"
    seat = SeatTask(1, "b", ("/coordinator/python", "-u", origin), True)
    plain = SeatTask(2, "c", ("/usr/bin/env", "true"), False)
    task = MatchTask(7, 3, 99, (seat, plain), TimeControl(1.0, 5.0))
    job = RemoteMatch(task, (Artifact(SHA, "bot.sh", origin, True), None), "/coordinator/python")
    with pytest.raises(ArtifactMissingError) as info:
        localize(job)
    assert info.value.shas == [SHA]
    store_artifacts({SHA: ("bot.sh", BODY, True)})
    local = localize(job)
    assert local.seats[0].command == (sys.executable, "-u", str(arena_home / "artifacts" / SHA / "bot.sh"))
    assert local.seats[1] == plain
    assert (local.match_id, local.key) == (7, "t3-m7")


def test_worker_command() -> None:
    argv = worker_command("tcp://h:8786", 3, host="10.1.2.3")
    assert argv[:3] == [sys.executable, "-m", "distributed.cli.dask_worker"]
    assert argv[3:] == [
        "tcp://h:8786", "--nworkers", "3", "--nthreads", "1",
        "--preload", "arena.tournament.cluster", "--host", "10.1.2.3",
        "--dashboard-address", "10.1.2.3:0", "--no-dashboard",
    ]  # fmt: skip


def test_worker_command_listens_on_loopback_for_a_local_scheduler() -> None:
    argv = worker_command("tcp://127.0.0.1:8786", 1)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--dashboard-address") + 1] == "127.0.0.1:0"


def test_worker_command_refuses_an_unresolvable_scheduler() -> None:
    with pytest.raises(ValueError, match="give --host"):
        worker_command("tcp://no-such-host.invalid:8786", 1)
