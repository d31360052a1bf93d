"""The replay viewer shows the rules a game was played under: the variant's name and its own end
threshold (R25), read from the view data (never a constant of the page), in a real browser."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.web.export import standalone_html
from arena.web.viewdata import build_view

RECORDS = Path(__file__).parents[1] / "engine" / "golden" / "records"


def test_view_data_names_the_rules() -> None:
    sprint = build_view((RECORDS / "sprint1_engine_2p.jsonl").read_text(encoding="utf-8"))
    assert sprint["rules"] == {
        "version": "sprint-1",
        "variant": "sprint",
        "end_unoccupied": 10,
        "round_cap": 40,
        "summary": sprint["rules"]["summary"],
    }
    assert {s["rules"] for s in sprint["states"]} == {"sprint-1"}
    old = build_view((RECORDS / "v1_match_3p.jsonl").read_text(encoding="utf-8"))
    assert old["rules"]["version"] == "1" and old["rules"]["end_unoccupied"] == 4


@pytest.mark.parametrize(
    ("record", "version", "lines"),
    [
        ("sprint1_engine_2p.jsonl", "sprint-1", ["{n} loungers not occupied (ends at ≤ 10)", "sprint rules"]),
        ("v1_match_3p.jsonl", "1", ["{n} loungers not occupied (ends at ≤ 4)", ""]),
    ],
)
def test_viewer_shows_the_variant(
    page: Any, tmp_path: Path, record: str, version: str, lines: list[str]
) -> None:
    view = build_view((RECORDS / record).read_text(encoding="utf-8"))
    html = tmp_path / "replay.html"
    html.write_text(standalone_html(view, record), encoding="utf-8")
    page.goto(html.as_uri())
    page.wait_for_function("() => document.getElementById('board').dataset.step !== undefined")
    assert page.eval_on_selector("#board", "svg => svg.dataset.rules") == version
    texts = page.eval_on_selector_all(".panel-line", "es => es.map(e => e.textContent)")
    n = view["states"][0]["unoccupied"]
    assert texts[1:] == [line.format(n=n) for line in lines], texts  # the variant on a line of its own
    # the last step (the final round, game over): every line fits the side panel (none clipped)
    page.keyboard.press("End")
    page.wait_for_function("() => document.getElementById('board').dataset.step !== '0'")
    texts = page.eval_on_selector_all(".panel-line", "es => es.map(e => e.textContent)")
    assert texts[0].startswith("ended: ") and texts[2].endswith("final round"), texts
    widths = page.eval_on_selector_all(".panel-line", "es => es.map(e => e.getBoundingClientRect().right)")
    edge = page.eval_on_selector("#board", "svg => svg.getBoundingClientRect().right")
    assert max(widths) <= edge, (widths, edge)


def test_tournament_page_and_api_show_the_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.engine.variants import SPRINT
    from arena.store.db import Database
    from arena.tournament.service import create
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    sprint = create(db, ["greedy", "random"], games=1, rules=SPRINT)
    standard = create(db, ["greedy", "random"], games=1)
    assert (sprint.rules, standard.rules) == ("sprint-1", "1")
    server = BackgroundServer(create_app(db))
    url = server.start()
    try:
        with urllib.request.urlopen(f"{url}/tournaments/{sprint.id}", timeout=30) as r:
            html = r.read().decode()
        assert '<dd data-rules="sprint-1">sprint (sprint-1)</dd>' in html
        with urllib.request.urlopen(f"{url}/api/tournaments", timeout=30) as r:
            items = json.loads(r.read())["items"]
        assert {t["id"]: t["rules"] for t in items} == {sprint.id: "sprint-1", standard.id: "1"}
    finally:
        server.stop()
        db.close()


def test_view_data_of_a_time_that_is_not_finite() -> None:
    """JSON records may hold NaN and Infinity (Python's json reads them, the engine's check
    ignores the referee's times): a stored record with an "ms" of Infinity (edited; the referee
    never writes one) made format_ms raise decimal.InvalidOperation, an unhandled error for the
    page and for 'arena replays export --format json/html'.  Such a time gets no text."""
    from arena.engine import make_policy, play_game

    lines = play_game(3, [make_policy("greedy", 3, s) for s in range(2)]).record.splitlines()
    k = next(i for i, line in enumerate(lines) if '"action"' in line)
    event = json.loads(lines[k])
    event.update(ms=float("inf"), cpu_ms=float("nan"), away_ms=2.25)
    lines[k] = json.dumps(event)
    shown = build_view("\n".join(lines) + "\n")["events"][k - 1]
    assert "ms_text" not in shown and "cpu_ms_text" not in shown
    assert shown["away_ms_text"] == "2.3"
    # a double of 1e27 or more overflowed Decimal's 28 digits; an int past a double's range
    event.update(ms=1e27, cpu_ms=-1e308, away_ms=10**400)
    lines[k] = json.dumps(event)
    shown = build_view("\n".join(lines) + "\n")["events"][k - 1]
    assert shown["ms_text"] == "1" + "0" * 27 + ".0"
    assert shown["cpu_ms_text"] == "-1" + "0" * 308 + ".0"
    assert "away_ms_text" not in shown
