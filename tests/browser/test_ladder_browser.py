"""In Chromium, while a real ladder runs (``arena ladder run``: worker processes, bots, referee):
the ladder page updates itself without a reload and lists the matches in progress; a live match
page shows moves arriving as the referee applies them (and how long each took to arrive); a
bot's charts page shows its five charts, readable at 400 px wide."""

from __future__ import annotations

import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from store.helpers import wait_gone

from arena.store.bots import add_bot
from arena.store.db import Database
from arena.web.app import create_app

HERE = Path(__file__).resolve().parent
ARENA = Path(__import__("sys").executable).parent / "arena"


@dataclass
class Running:
    base: str
    home: Path
    ladder: subprocess.Popen[bytes]


@pytest.fixture
def running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Running]:
    """Three slow-but-steady greedy bots on a ladder of 2-player tables (2 workers), and the web
    app over the same database on a free port (a private ARENA_HOME)."""
    import os

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("ARENA_HOME", str(home))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    url = f"sqlite:///{home / 'arena.db'}"
    db = Database(url)
    for name in ("steady1", "steady2", "steady3"):
        f = tmp_path / f"{name}.py"
        f.write_text((HERE / "steady_bot.py").read_text() + f"# {name}\n")
        add_bot(db, name, f)
    app = create_app(db)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    while not server.started:
        time.sleep(0.05)
    env = {k: v for k, v in os.environ.items() if k != "ARENA_LIVE_SOCKET"}
    env.update(ARENA_HOME=str(home), ARENA_DATABASE_URL=url)
    log = (tmp_path / "ladder.log").open("wb")
    ladder = subprocess.Popen(
        [str(ARENA), "ladder", "run", "--jobs", "2", "--tables", "2", "--no-sandbox", "--max-tables", "40"],
        env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        yield Running(f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", home, ladder)
    finally:
        ladder.terminate()
        try:
            ladder.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(ladder.pid, 9)
            ladder.wait(10)
        log.close()
        server.should_exit = True
        web.join(10)
        if app.state.live_hub is not None:
            app.state.live_hub.close()
        db.close()
        left = wait_gone(str(home / "artifacts"), timeout=15.0)
        assert not left, f"bot processes outlived the ladder: {left}"


def test_ladder_live_match_and_charts(browser: Any, running: Running) -> None:
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # the ladder page, while the ladder runs: it redraws itself (no reload) and lists live matches
    page.goto(f"{running.base}/ladder")
    page.evaluate("window.__sameDocument = true")
    page.wait_for_function(
        "Number(document.getElementById('ladder').dataset.updates || 0) >= 1", timeout=30_000
    )
    page.wait_for_selector("#ladder-running li[data-match] a", timeout=90_000)
    assert page.evaluate("window.__sameDocument === true")  # updated in place, never reloaded
    assert page.locator("#ladder-rows tr").count() == 3

    # a live match: moves arrive while we watch
    page.locator("#ladder-running li[data-match] a").first.click()
    page.wait_for_url("**/live/*")
    page.wait_for_function("document.getElementById('viewer').dataset.ready === '1'")
    state = "window.poolViewer.live.state"
    page.wait_for_function(f"{state} === 'open' || {state} === 'ended'")
    first = page.evaluate("window.poolViewer.steps")
    page.wait_for_function(f"window.poolViewer.steps >= {first + 20} || {state} === 'ended'", timeout=60_000)
    live = page.evaluate("window.poolViewer.live")
    assert live["received"] >= 20, live
    at, steps = page.evaluate("[window.poolViewer.step, window.poolViewer.steps]")
    assert at == steps  # it follows the match
    assert int(page.locator("#viewer").get_attribute("data-live-steps") or 0) >= first + 20
    arrival = statistics.median(live["latencies"])
    print(f"live: {live['received']} steps, median {arrival * 1000:.1f} ms from the referee to the page")
    # How fast moves arrive is a figure for the benchmark (benchmarks/ladder.py), not for a timed
    # test: a loaded clean-clone run saw a median of 1.46 s where an idle machine gives tens of
    # milliseconds.  That they are live (sent as played, not from the replay at the end) is
    # tests/live/test_live.py's; here: they arrive, in order, while we watch.
    assert arrival < 10.0
    page.wait_for_function("window.poolViewer.live.state === 'ended'", timeout=120_000)
    page.locator("#live-replay").click()
    page.wait_for_url("**/matches/*")

    # a bot's charts, on a 400-px-wide screen
    phone = browser.new_context(viewport={"width": 400, "height": 800}).new_page()
    phone.on("pageerror", lambda exc: errors.append(str(exc)))
    phone.goto(f"{running.base}/ladder")
    phone.locator("#ladder-rows a").first.click()
    phone.wait_for_url("**/bots/*/charts")
    for chart in ("rating", "scores", "seats", "h2h", "days"):
        box = phone.locator(f"#chart-{chart} svg").bounding_box()
        assert box is not None and 300 <= box["width"] <= 400, (chart, box)
    assert phone.locator("#chart-rating polyline.mu").count() == 1  # it has played: a rating line
    assert phone.evaluate("document.scrollingElement.scrollWidth") <= 400  # nothing wider than the phone
    assert errors == []
