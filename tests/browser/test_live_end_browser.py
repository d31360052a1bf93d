"""In Chromium, a live match watched to its end (a real ``arena tournament run``: worker, bots,
referee): when it ends, the board marks each seat's place, as the replay does; it no longer marks
a seat "◀ to act" in a game that is over (nobody acts then)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.web.app import create_app
from arena.web.server import BackgroundServer

HERE = Path(__file__).resolve().parent
ARENA = Path(sys.executable).parent / "arena"

pytestmark = pytest.mark.timeout(240)

FLAGS = "Array.from(document.querySelectorAll('#board .player-flag')).map((e) => e.textContent)"


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def test_a_live_match_watched_to_its_end_shows_the_places_not_a_seat_to_act(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    url = f"sqlite:///{home / 'arena.db'}"
    db = Database(url)
    for name in ("steady1", "steady2"):
        f = tmp_path / f"{name}.py"
        f.write_text((HERE / "steady_bot.py").read_text() + f"# {name}\n")
        add_bot(db, name, f)
    env = {k: v for k, v in os.environ.items() if k != "ARENA_LIVE_SOCKET"}
    env.update(ARENA_HOME=str(home), ARENA_DATABASE_URL=url, STEADY_S="0.03")
    errors: list[str] = []
    with BackgroundServer(create_app(db)) as base:
        run = subprocess.Popen(
            [str(ARENA), "tournament", "run", "steady1", "steady2", "--tables", "2", "--games", "1",
             "--jobs", "1", "--no-sandbox", "--move-time", "5"],
            env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            deadline = time.monotonic() + 90
            running: list[dict[str, Any]] = []
            while not running and time.monotonic() < deadline:
                running = _json(f"{base}/api/matches?status=running")["items"]
                time.sleep(0.1)
            assert running, "no match started"
            match_id = running[0]["id"]
            page.goto(f"{base}/live/{match_id}")
            assert "/live/" in page.url, "the match ended before its live page opened"
            page.wait_for_function("document.getElementById('viewer').dataset.ready === '1'")
            page.wait_for_function("window.poolViewer.live.state === 'ended'", timeout=120_000)
            at, steps = page.evaluate("[window.poolViewer.step, window.poolViewer.steps]")
            assert at == steps  # it followed the match to its last step: the game is over
            assert "Game over" in page.locator("#viewer").inner_text()
            flags = page.evaluate(FLAGS)
            stored = _json(f"{base}/api/matches/{match_id}")
            places = [f"place {s['placing']}" for s in sorted(stored["seats"], key=lambda s: s["seat"])]
            assert flags == places, (flags, places)
            assert not any("to act" in f for f in flags), flags
        finally:
            page.context.close()
            try:
                run.wait(120)
            finally:
                if run.poll() is None:
                    os.killpg(run.pid, 9)
                    run.wait(10)
    db.close()
    assert errors == []
