"""Browser tests of the web app (Debian's Chromium via Playwright): the replay viewer against the
engine's states, controls, autoplay, leaderboard, lists, and the error pages."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.engine import FACES, LOUNGERS, State, reachable, replay, to_snapshot
from arena.engine.board import blocked_by
from arena.engine.record import Replay
from arena.store.tournaments import load_replay
from arena.web.viewdata import format_ms

from .conftest import REPO, Site

pytestmark = pytest.mark.timeout(120)

# Reads what the SVG shows: data attributes AND whether the drawn parts are displayed.
READ_BOARD = """() => {
  const svg = document.getElementById('board');
  const shown = (e) => e.getAttribute('display') !== 'none';
  const loungers = {};
  svg.querySelectorAll('g.lounger').forEach((g) => {
    const towel = shown(g.querySelector('g.towel'));
    loungers[g.dataset.lounger] = {
      towel: g.dataset.towel, side: g.dataset.side, figure: g.dataset.figure,
      blocked: g.dataset.blocked, reachable: g.dataset.reachable,
      towelShown: towel, fringeShown: towel && shown(g.querySelector('g.fringe')),
      figureShown: shown(g.querySelector('g.figure')), hatchShown: shown(g.querySelector('g.blocked')),
      seatLabel: towel ? g.querySelector('.towel-seat').textContent : '',
    };
  });
  const players = [...svg.querySelectorAll('g.player')].map((g) => ({
    score: g.dataset.score, towels: g.dataset.towels, figures: g.dataset.figures, chips: g.dataset.chips,
    scoreText: g.querySelector('.player-score').textContent,
  }));
  const dice = {};
  ['last', 'kept', 'result'].forEach((r) => { dice[r] = document.getElementById('dice-' + r).dataset.dice; });
  const legal = [...document.querySelectorAll('#ev-legal li')].map((li) => li.textContent);
  const chosen = document.querySelector('#ev-legal li.chosen');
  return {
    step: Number(svg.dataset.step), phase: svg.dataset.phase, seat: Number(svg.dataset.seat),
    round: Number(svg.dataset.round), turn: Number(svg.dataset.turn), pool: Number(svg.dataset.pool),
    lifeguard: svg.querySelector('g.lifeguard').dataset.position, loungers, players, dice,
    slider: Number(document.getElementById('slider').value),
    who: document.getElementById('ev-who').textContent, text: document.getElementById('ev-text').textContent,
    meta: document.getElementById('ev-meta').textContent, legal, chosen: chosen ? chosen.textContent : null,
    forfeit: (f => f.hidden ? '' : f.textContent)(document.getElementById('ev-forfeit')),
  };
}"""

WALK = """(n) => {
  const out = [];
  for (let k = 0; k <= n; k++) { window.poolViewer.go(k); out.push((%s)()); }
  return out;
}"""


def dice_text(counts: dict[str, int]) -> str:
    return ",".join(f for f in FACES for _ in range(counts.get(f, 0)))


def expected_board(state: State) -> dict[str, Any]:
    """What the board must show for ``state``, straight from the engine."""
    snap = to_snapshot(state)
    blocked = {LOUNGERS[i].name for i in blocked_by(state.guard)}
    reach = {LOUNGERS[i].name for i in reachable(state)}
    loungers = {}
    for lo in snap["loungers"]:
        has = lo["towel"] is not None
        loungers[lo["name"]] = {
            "towel": str(lo["towel"]) if has else "",
            "side": lo["side"] if has else "",
            "figure": "" if lo["figure"] is None else str(lo["figure"]),
            "blocked": "1" if lo["name"] in blocked else "0",
            "reachable": "1" if lo["name"] in reach else "0",
            "towelShown": has,
            "fringeShown": has and lo["side"] == "guest",
            "figureShown": lo["figure"] is not None,
            "hatchShown": lo["name"] in blocked,
            "seatLabel": str(lo["towel"]) if has else "",
        }
    phase = snap["phase"]
    return {
        "phase": phase,
        "seat": snap["seat"],
        "round": snap["round"],
        "turn": snap["turn"],
        "pool": snap["pool"],
        "lifeguard": snap["lifeguard"],
        "loungers": loungers,
        "players": [
            {
                "score": str(snap["scores"][p]),
                "towels": str(snap["towels"][p]),
                "figures": str(snap["figures"][p]),
                "chips": str(snap["chips"][p]),
                "scoreText": str(snap["scores"][p]),
            }
            for p in range(snap["players"])
        ],
        "dice": {
            "last": dice_text(snap["last_throw"]) if phase == "roll" else "",
            "kept": dice_text(snap["kept"]) if phase in ("roll", "throw") else "",
            "result": dice_text(snap["result"]) if phase == "action" else "",
        },
    }


def shown_board(dom: dict[str, Any]) -> dict[str, Any]:
    keys = ("phase", "seat", "round", "turn", "pool", "lifeguard", "loungers", "players", "dice")
    return {k: dom[k] for k in keys}


def engine_replay(site: Site, match_id: int) -> Replay:
    db = site.arena.db()
    try:
        return replay(load_replay(db, match_id))
    finally:
        db.close()


def open_match(page: Any, site: Site, match_id: int, step: int | None = None) -> None:
    url = f"{site.url}/matches/{match_id}" + (f"#step={step}" if step is not None else "")
    response = page.goto(url)
    assert response.status == 200
    page.wait_for_selector("#viewer[data-ready='1']")


def read(page: Any) -> dict[str, Any]:
    return page.evaluate(READ_BOARD)


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# ---- the replay viewer ---------------------------------------------------------------------


def test_every_step_shows_the_engines_state(page: Any, site: Site) -> None:
    """Walk the whole replay: the board, dice, scores and supplies equal the engine's state, and
    the event panel names who acted, the legal alternatives and the chosen one, the think time
    (formatted by the server's one rule, format_ms) and the seed exactly."""
    mid = site.arena.matches[0]
    rep = engine_replay(site, mid)
    open_match(page, site, mid)
    walked = page.evaluate(WALK % READ_BOARD, len(rep.events))
    assert len(walked) == len(rep.states)
    names = rep.header["seating"]
    for k, dom in enumerate(walked):
        assert dom["step"] == k and dom["slider"] == k
        assert shown_board(dom) == expected_board(rep.states[k]), f"step {k} differs from the engine"
        if k == 0:
            continue
        event = rep.events[k - 1]
        if "action" in event:
            assert dom["who"] == f"seat {event['seat']} ({names[event['seat']]})"
            assert dom["legal"] == event["legal"]
            assert dom["chosen"] == event["action"]
            if "ms" in event:
                assert f"think time {format_ms(event['ms'])} ms" in dom["meta"]
        else:
            assert dom["text"] == "throw: " + event["throw"].removeprefix("throw ").replace(",", ", ")
            assert f"the dice stream of seed {rep.header['seed']}" in dom["meta"]


def test_step_with_buttons_keys_and_slider(page: Any, site: Site, shots: Path) -> None:
    mid = site.arena.matches[1]
    rep = engine_replay(site, mid)
    n = len(rep.events)
    open_match(page, site, mid)
    assert read(page)["step"] == 0
    for _ in range(3):
        page.click("#btn-next")
    dom = read(page)
    assert dom["step"] == 3 and shown_board(dom) == expected_board(rep.states[3])
    page.click("#btn-prev")
    assert read(page)["step"] == 2
    page.locator("body").click(position={"x": 5, "y": 5})  # focus the page, not a control
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    dom = read(page)
    assert dom["step"] == 4 and shown_board(dom) == expected_board(rep.states[4])
    page.keyboard.press("End")
    dom = read(page)
    assert dom["step"] == n and shown_board(dom) == expected_board(rep.final)
    assert "Result" in page.inner_text("#ev-result")
    page.keyboard.press("Home")
    assert read(page)["step"] == 0
    k = n // 2
    page.eval_on_selector("#slider", "(e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }", k)
    dom = read(page)
    assert dom["step"] == k and shown_board(dom) == expected_board(rep.states[k])
    page.focus("#slider")
    page.keyboard.press("ArrowRight")  # the slider's own key handling
    assert read(page)["step"] == k + 1
    page.click("#btn-next-turn")
    dom = read(page)
    turn = rep.states[k + 1].turn
    assert rep.states[dom["step"]].turn != turn and rep.states[dom["step"] - 1].turn == turn
    page.click("#btn-last")
    assert read(page)["step"] == n
    page.click("#btn-first")
    assert read(page)["step"] == 0
    assert "#step=0" in page.url
    page.screenshot(path=str(shots / "viewer-controls.png"))


def test_deep_link_and_autoplay(page: Any, site: Site) -> None:
    mid = site.arena.matches[0]
    rep = engine_replay(site, mid)
    open_match(page, site, mid, step=40)
    dom = read(page)
    assert dom["step"] == 40 and shown_board(dom) == expected_board(rep.states[40])
    page.select_option("#speed", "30")
    page.click("#btn-play")
    page.wait_for_function("() => window.poolViewer.step >= 55", timeout=10_000)
    assert page.get_attribute("#viewer", "data-playing") == "1"
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press(" ")  # space pauses
    assert page.get_attribute("#viewer", "data-playing") == "0"
    stopped = read(page)["step"]
    page.wait_for_timeout(300)
    dom = read(page)
    assert dom["step"] == stopped and shown_board(dom) == expected_board(rep.states[stopped])


def test_step_in_the_address_is_followed_on_an_open_page(page: Any, site: Site) -> None:
    """Changing ``#step=N`` on an open page (typed, pasted, back/forward) shows step N."""
    mid = site.arena.matches[0]
    rep = engine_replay(site, mid)
    open_match(page, site, mid, step=5)
    assert read(page)["step"] == 5
    page.evaluate("() => { location.hash = '#step=17'; }")
    page.wait_for_function("() => window.poolViewer.step === 17", timeout=10_000)
    dom = read(page)
    assert shown_board(dom) == expected_board(rep.states[17])
    page.goto(f"{site.url}/matches/{mid}#step=33")  # same document: only the hash changes
    page.wait_for_function("() => window.poolViewer.step === 33", timeout=10_000)
    assert shown_board(read(page)) == expected_board(rep.states[33])
    page.go_back()  # back to #step=17 (go() replaces entries, it does not add them)
    page.wait_for_function("() => window.poolViewer.step === 17", timeout=10_000)
    page.click("#btn-play")
    page.evaluate("() => { location.hash = '#step=2'; }")
    page.wait_for_function("() => window.poolViewer.step === 2", timeout=10_000)
    assert page.get_attribute("#viewer", "data-playing") == "0"  # a jump stops autoplay
    page.wait_for_timeout(300)
    assert read(page)["step"] == 2


def test_forfeit_is_shown_with_its_reason(page: Any, site: Site, shots: Path) -> None:
    mid = site.arena.forfeit_matches[0]
    rep = engine_replay(site, mid)
    forfeits = rep.result["forfeits"]
    assert forfeits and forfeits[0]["reason"] == "illegal-action"
    f = forfeits[0]
    open_match(page, site, mid, step=max(0, f["at_event"] - 1))
    assert read(page)["forfeit"] == ""
    page.click("#btn-next")
    dom = read(page)
    assert f"seat {f['seat']}" in dom["forfeit"] and "illegal-action" in dom["forfeit"]
    assert "take-five" in dom["forfeit"]  # the detail names the offending action
    flag = page.text_content(f"g.player[data-seat='{f['seat']}'] .player-flag")
    assert flag == "FORFEITED"
    auto = next(k for k, e in enumerate(rep.events, start=1) if e.get("auto"))
    page.evaluate("(k) => window.poolViewer.go(k)", auto)
    dom = read(page)
    assert "auto" in dom["meta"] and shown_board(dom) == expected_board(rep.states[auto])
    page.screenshot(path=str(shots / "viewer-forfeit.png"))


def test_mid_game_picture_shows_the_engines_state(page: Any, site: Site, shots: Path) -> None:
    """A mid-game picture of a 3-player match (saved under the test's temporary folder only: a
    test never rewrites a tracked file): what it shows is the engine's state at that step, every
    seat's score and supplies included, and the seat cards show the final result."""
    mid = site.arena.forfeit_matches[-1]
    rep = engine_replay(site, mid)
    step = next(
        k
        for k in range(len(rep.states) // 2, len(rep.states))
        if rep.states[k].phase.label == "action"
        and reachable(rep.states[k])
        and "ms" not in rep.events[k - 1]
    )
    open_match(page, site, mid, step=step)
    page.set_viewport_size({"width": 1500, "height": 900})
    dom = read(page)
    state = rep.states[step]
    assert dom["step"] == step and shown_board(dom) == expected_board(state)
    assert dom["phase"] == "action" and any(lo["reachable"] == "1" for lo in dom["loungers"].values())
    snap = to_snapshot(state)
    texts = page.eval_on_selector_all(
        "g.player",
        "gs => gs.map(g => [g.querySelector('.player-score').textContent,"
        " g.querySelector('.player-line').textContent])",
    )
    assert texts == [
        [str(snap["scores"][p]), f"supply: {snap['towels'][p]} towels · {snap['figures'][p]} figures"]
        for p in range(snap["players"])
    ]
    cards = page.eval_on_selector_all(".seat-card .pts", "es => es.map(e => e.textContent)")
    assert cards == [f"{score} pts" for score in rep.result["scores"]]
    page.locator("#viewer").screenshot(path=str(shots / "viewer.png"))
    page.screenshot(path=str(shots / "match-page.png"), full_page=True)
    assert (shots / "viewer.png").stat().st_size > 10_000


# ---- the other pages -----------------------------------------------------------------------


def test_leaderboard_shows_the_bots(page: Any, site: Site, shots: Path) -> None:
    page.goto(site.url + "/")
    assert page.url.endswith("/leaderboard")
    bots = page.eval_on_selector_all("table.leaderboard tr[data-bot]", "rows => rows.map(r => r.dataset.bot)")
    assert set(bots) == {"greedy", "invader", "forfeiter"}
    with page.expect_navigation():
        page.click("a[data-system='elo']")
    assert "system=elo" in page.url
    assert "Elo" in page.inner_text(".switch a.active")
    assert len(page.query_selector_all("table.leaderboard tr[data-bot]")) == 3
    page.screenshot(path=str(shots / "leaderboard.png"))
    status, data = get(site.url + "/api/leaderboard?system=openskill")
    assert status == 200 and {r["bot"] for r in data["rows"]} == {"greedy", "invader", "forfeiter"}
    status, data = get(site.url + f"/api/leaderboard?tournament={site.arena.tournament}")
    assert status == 200 and {r["bot"] for r in data["rows"]} == {"greedy", "invader"}


def test_tournaments_and_matches_pages(page: Any, site: Site, shots: Path) -> None:
    page.goto(site.url + "/tournaments")
    ids = page.eval_on_selector_all(
        "tr[data-tournament]", "rows => rows.map(r => Number(r.dataset.tournament))"
    )
    assert ids == [site.arena.forfeit_tournament, site.arena.tournament]  # newest first
    with page.expect_navigation():
        page.click(f"tr[data-tournament='{site.arena.tournament}'] a")
    assert page.url.endswith(f"/tournaments/{site.arena.tournament}")
    standing = page.eval_on_selector_all(
        "table.leaderboard tr[data-bot]", "rows => rows.map(r => r.dataset.bot)"
    )
    assert set(standing) == {"greedy", "invader"}
    shown = page.eval_on_selector_all("tr[data-match]", "rows => rows.map(r => Number(r.dataset.match))")
    assert set(site.arena.matches) <= set(shown)

    page.goto(site.url + "/matches?per_page=2")
    total = int(page.get_attribute(".pager", "data-total"))
    assert total == len(site.arena.matches) + len(site.arena.forfeit_matches) + 2  # + 2 planted copies
    first = page.eval_on_selector_all("tr[data-match]", "rows => rows.map(r => Number(r.dataset.match))")
    assert len(first) == 2
    with page.expect_navigation():
        page.click(".pager a[rel='next']")
    second = page.eval_on_selector_all("tr[data-match]", "rows => rows.map(r => Number(r.dataset.match))")
    assert len(second) == 2 and not set(first) & set(second)
    page.goto(site.url + "/matches?termination=illegal-action")
    rows = page.eval_on_selector_all("tr[data-match]", "rows => rows.map(r => Number(r.dataset.match))")
    assert sorted(rows) == sorted(site.arena.forfeit_matches)
    page.select_option("select[name=bot]", "forfeiter")
    with page.expect_navigation():
        page.click(".filters button[type=submit]")
    assert "bot=forfeiter" in page.url
    page.screenshot(path=str(shots / "matches.png"))
    page.click(f"tr[data-match='{rows[0]}'] a.button")
    page.wait_for_selector("#viewer[data-ready='1']")


def test_json_api(site: Site) -> None:
    arena = site.arena
    status, data = get(site.url + "/api/tournaments")
    assert status == 200 and [t["id"] for t in data["items"]] == [arena.forfeit_tournament, arena.tournament]
    status, data = get(site.url + f"/api/matches?tournament={arena.tournament}&per_page=1&page=2")
    assert status == 200 and data["total"] == len(arena.matches) + 2 and len(data["items"]) == 1
    status, data = get(site.url + "/api/matches?bot=forfeiter")
    assert status == 200 and {m["id"] for m in data["items"]} == set(arena.forfeit_matches)
    mid = arena.matches[0]
    status, data = get(site.url + f"/api/matches/{mid}")
    assert status == 200 and data["id"] == mid and data["replay"]["sha256"]
    assert [s["bot"] for s in data["seats"]] in (["greedy", "invader"], ["invader", "greedy"])
    status, data = get(site.url + f"/api/matches/{mid}/replay")
    assert status == 200
    rep = engine_replay(site, mid)
    assert len(data["states"]) == len(rep.states) and len(data["events"]) == len(rep.events)
    for k in (0, 1, len(rep.states) // 2, len(rep.states) - 1):
        snap = {key: v for key, v in data["states"][k].items() if key not in ("blocked", "reachable")}
        assert snap == json.loads(json.dumps(to_snapshot(rep.states[k])))
    assert data["result"] == rep.result
    status, data = get(site.url + "/api/matches?since=yesterday")
    assert status == 400 and "since" in data["detail"]
    status, data = get(site.url + "/api/matches?per_page=100000")
    assert status == 400


# ---- errors ----------------------------------------------------------------------------------


def test_unknown_match_is_a_404(page: Any, site: Site) -> None:
    response = page.goto(site.url + "/matches/987654")
    assert response.status == 404
    assert "Unknown match" in page.inner_text("h1") and "987654" in page.inner_text(".detail")
    assert page.goto(site.url + "/tournaments/987654").status == 404
    assert page.goto(site.url + "/matches/not-a-number").status == 404
    assert page.goto(site.url + "/no/such/page").status == 404
    for path in (
        "/api/matches/987654",
        "/api/matches/987654/replay",
        "/api/tournaments/987654",
        "/api/nothing",
    ):
        status, data = get(site.url + path)
        assert status == 404 and data["status"] == 404 and data["detail"], path


def test_corrupt_replays_get_a_clear_error_page(page: Any, site: Site, shots: Path) -> None:
    planted = site.arena.planted
    response = page.goto(site.url + f"/matches/{planted['hash']}")
    assert response.status == 422
    assert "Corrupt replay" in page.inner_text("h1")
    assert "sha256" in page.inner_text(".detail")
    page.screenshot(path=str(shots / "corrupt-hash.png"))
    response = page.goto(site.url + f"/matches/{planted['content']}")
    assert response.status == 422
    line = planted["content_line"]
    detail = page.inner_text(".detail")
    assert f"line {line} (event {line - 1})" in detail and "dice stream" in detail
    status, data = get(site.url + f"/api/matches/{planted['content']}/replay")
    assert status == 422 and f"line {line}" in data["detail"]
    status, data = get(site.url + f"/api/matches/{planted['hash']}/replay")
    assert status == 422 and "sha256" in data["detail"]
    # the list still works with damaged replays in it
    assert page.goto(site.url + "/matches?status=all").status == 200


# ---- the command --------------------------------------------------------------------------------


def test_arena_web_prints_its_url_and_serves(site: Site) -> None:
    import os
    import re
    import signal
    import subprocess

    env = {**os.environ, "ARENA_HOME": str(site.arena.home)}
    env.pop("ARENA_DATABASE_URL", None)
    arena = str(REPO / ".venv" / "bin" / "arena")
    proc = subprocess.Popen(
        [arena, "web", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        url = match.group(0)
        with urllib.request.urlopen(url + "leaderboard", timeout=30) as r:
            assert r.status == 200 and b"greedy" in r.read()
        port = int(match.group(1))
        busy = subprocess.run(
            [arena, "web", "--port", str(port)], env=env, capture_output=True, text=True, timeout=60
        )
        assert busy.returncode == 1 and "try another --port" in busy.stderr
        # an address this machine does not have (TEST-NET-1), or a name it cannot resolve, is the
        # --host's fault, not the port's
        for host, said in (
            ("192.0.2.1", "give --host one of its addresses"),
            ("no-such-host.invalid", "no name this machine can resolve"),
        ):
            wrong = subprocess.run(
                [arena, "web", "--host", host, "--port", str(port)],
                env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert wrong.returncode == 1 and said in wrong.stderr, wrong.stderr
            assert "try another --port" not in wrong.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
