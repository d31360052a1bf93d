"""The ladder inside a real ``arena serve`` (its background service): it plays the registered
bots as soon as the server starts; the server killed with kill -9 while the ladder runs and
started again loses and doubles nothing (SQLite and PostgreSQL); SIGTERM stops it cleanly."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

from serve.serverkit import ServeProcess
from store.helpers import sample

from arena.store.bots import add_bot
from arena.store.db import Database

from .test_ladder_service import _check_consistent


def _board(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/api/ladder", timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def _until(base: str, finished: int, server: ServeProcess, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        board = _board(base)
        if board["ladder"] is not None and board["finished"] >= finished and board["running"]:
            return board
        assert server.proc.poll() is None, server.output()
        assert time.monotonic() < deadline, f"the ladder did not get to {finished} matches: {board}"
        time.sleep(0.1)


def test_serve_runs_the_ladder_and_survives_kill_9(
    backend: str, db_url: str, arena_home: Path, tmp_path: Path
) -> None:
    db = Database(db_url)
    for name in ("greedy", "invader", "random"):
        add_bot(db, name, sample(name))
    db.close()
    first = ServeProcess(arena_home, db_url, tmp_path / "serve1.log", "--no-sandbox", "--jobs", "2")
    try:
        board = _until(first.url, 3, first)
        assert {r["bot"] for r in board["rows"]} == {"greedy", "invader", "random"}
        first.kill9()  # mid-match: a ladder match is running
    finally:
        first.stop()
    db = Database(db_url)
    before = _check_consistent(db, board["ladder"])
    db.close()
    done_before = sum(1 for r in before if r["status"] == "finished")

    second = ServeProcess(arena_home, db_url, tmp_path / "serve2.log", "--no-sandbox", "--jobs", "2")
    try:
        _until(second.url, done_before + 3, second)
    finally:
        code = second.stop()
    assert code == 128 + signal.SIGTERM, second.output()  # stopped by SIGTERM, cleanly
    db = Database(db_url)
    after = _check_consistent(db, board["ladder"])
    db.close()
    kept = {r["id"]: r["placings"] for r in before if r["status"] == "finished"}
    assert all(r["placings"] == kept[r["id"]] for r in after if r["id"] in kept)  # nothing finished redone
    assert any(int(str(r["attempts"])) >= 2 for r in after)  # what the kill cut off was played again
    assert "stopped by an error" not in second.output()
