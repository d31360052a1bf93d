"""``arena replays``: list with filters and paging, show, export (jsonl, json, html opened in
Chromium), and verify by id, by file and --all, including deliberately damaged replays."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.engine import render, replay
from arena.store.tournaments import load_replay

from .conftest import REPO, Arena, alter_throw, store_replay, throw_lines

pytestmark = pytest.mark.timeout(120)

runner = CliRunner()
EnvHome = Callable[[Arena], None]


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def listed(output: str) -> list[int]:
    """Match ids in the first column of a ``replays list`` table."""
    return [int(m) for m in re.findall(r"^│\s+(\d+)\s+│", output, flags=re.M)]


@pytest.fixture
def damaged(arena: Arena, tmp_path: Path) -> Arena:
    """A copy of the arena with two damaged replays: ``content`` (one throw altered, the hash
    updated so only the content is wrong) and ``hash`` (the stored sha256 does not match)."""
    copy = arena.copy(tmp_path / "damaged")
    db = copy.db()
    content, hashed = copy.matches
    text = load_replay(db, content)
    line = throw_lines(text)[2]
    store_replay(db, content, alter_throw(text, line))
    good = load_replay(db, hashed)
    store_replay(db, hashed, good.replace("pass", "stop", 1), sha=hashlib.sha256(good.encode()).hexdigest())
    db.close()
    copy.planted = {"content": content, "content_line": line, "hash": hashed}
    return copy


# ---- list --------------------------------------------------------------------------------------


def test_list_newest_first_with_paging(arena: Arena, env_home: EnvHome) -> None:
    env_home(arena)
    everything = sorted(arena.matches + arena.forfeit_matches)
    r = run("replays", "list", "--per-page", "100")
    assert r.exit_code == 0, r.output
    assert sorted(listed(r.output)) == everything
    assert f"of {len(everything)}" in r.output
    pages = []
    for page in (1, 2, 3):
        r = run("replays", "list", "--per-page", "2", "--page", str(page))
        assert r.exit_code == 0
        pages.append(listed(r.output))
    assert [len(p) for p in pages] == [2, 2, 1]
    # the same order, page by page
    assert [m for p in pages for m in p] == listed(run("replays", "list").output)
    r = run("replays", "list", "--per-page", "2", "--page", "9")
    assert r.exit_code == 0
    assert "page 9 is past the last one: the 5 matches make pages 1-3 at 2 a page" in r.output


def test_a_page_past_one_match_says_so_in_the_singular(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    arena = Path(sys.executable).with_name("arena")  # a real process: a match runs its own event loop
    played = subprocess.run(
        [str(arena), "match", "random", "random", "--seed", "1", "--no-sandbox", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert played.returncode == 0, played.stderr
    r = run("replays", "list", "--page", "2")
    assert "page 2 is past the last one: the one match makes page 1 at 20 a page" in r.output, r.output


def test_list_filters(arena: Arena, env_home: EnvHome) -> None:
    env_home(arena)
    r = run("replays", "list", "--tournament", str(arena.tournament))
    assert sorted(listed(r.output)) == arena.matches
    assert "greedy" in r.output and "invader" in r.output
    r = run("replays", "list", "--bot", "forfeiter")
    assert sorted(listed(r.output)) == arena.forfeit_matches
    r = run("replays", "list", "--bot", "forfeiter", "--per-page", "1", "--page", "9")
    assert f"the {len(arena.forfeit_matches)} matches make pages 1-" in r.output, r.output
    r = run("replays", "list", "--termination", "illegal-action")
    assert sorted(listed(r.output)) == arena.forfeit_matches and "illegal-action" in r.output
    r = run("replays", "list", "--termination", "round-cap")
    assert r.exit_code == 0 and listed(r.output) == []
    today = datetime.now(UTC).date()
    r = run(
        "replays", "list", "--since", (today - timedelta(days=1)).isoformat(), "--until", today.isoformat()
    )
    assert len(listed(r.output)) == len(arena.matches + arena.forfeit_matches)
    r = run("replays", "list", "--until", "2001-01-01")
    assert listed(r.output) == []
    r = run("replays", "list", "--since", "31/12/2024")
    assert r.exit_code == 2 and "--since" in r.output
    r = run("replays", "list", "--bot", "nobody")
    assert r.exit_code == 1 and "no bot 'nobody'" in r.output and "arena bots list" in r.output


# ---- show ----------------------------------------------------------------------------------------


def test_show_one_step_and_all(arena: Arena, env_home: EnvHome) -> None:
    env_home(arena)
    mid = arena.matches[0]
    db = arena.db()
    rep = replay(load_replay(db, mid))
    db.close()
    r = run("replays", "show", str(mid), "--step", "30", "--no-color")
    assert r.exit_code == 0, r.output
    assert render(rep.states[30]) in r.output
    assert f"step 30 of {len(rep.events)}" in r.output
    r = run("replays", "show", str(mid), "--step", "30", "--color")
    assert "\x1b[" in r.output and render(rep.states[30], color=True) in r.output
    r = run("replays", "show", str(mid), "--no-color")
    assert r.exit_code == 0
    assert r.output.count("lifeguard:") == len(rep.states)  # a board after every step
    assert f"result: scores {rep.result['scores']}" in r.output
    brief = run("replays", "show", str(mid), "--no-color", "--brief")
    assert brief.output.count("lifeguard:") < len(rep.states) / 2
    r = run("replays", "show", str(mid), "--step", str(len(rep.events) + 1))
    assert r.exit_code == 2 and f"0..{len(rep.events)}" in r.output
    r = run("replays", "show", "99999")
    assert r.exit_code == 1 and "no match 99999" in r.output


def test_show_names_a_forfeit(arena: Arena, env_home: EnvHome) -> None:
    env_home(arena)
    r = run("replays", "show", str(arena.forfeit_matches[0]), "--brief", "--no-color")
    assert r.exit_code == 0
    assert "forfeit: seat" in r.output and "illegal-action" in r.output and "auto: seat forfeited" in r.output


# ---- export --------------------------------------------------------------------------------------


def test_export_jsonl_and_json(arena: Arena, env_home: EnvHome, tmp_path: Path) -> None:
    env_home(arena)
    mid = arena.matches[1]
    db = arena.db()
    text = load_replay(db, mid)
    db.close()
    r = run("replays", "export", str(mid))
    assert r.exit_code == 0 and r.output == text
    out = tmp_path / "m.jsonl"
    r = run("replays", "export", str(mid), "--format", "jsonl", "--out", str(out))
    assert r.exit_code == 0 and out.read_text(encoding="utf-8") == text
    out = tmp_path / "m.json"
    r = run("replays", "export", str(mid), "--format", "json", "--out", str(out))
    assert r.exit_code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    rep = replay(text)
    assert len(data["states"]) == len(rep.states) and data["events"][0]["index"] == 1
    assert data["seating"] == rep.header["seating"] and data["result"] == rep.result
    r = run("replays", "export", str(mid), "--format", "pdf")
    assert r.exit_code == 2


def test_export_format_follows_the_extension_of_out(arena: Arena, env_home: EnvHome, tmp_path: Path) -> None:
    """Without --format, --out's extension names the format (.html, .json, .jsonl; anything else:
    jsonl); a --format given wins over the extension."""
    env_home(arena)
    mid = arena.matches[0]
    db = arena.db()
    text = load_replay(db, mid)
    db.close()
    for name, fmt in (("v.html", "html"), ("v.HTML", "html"), ("v.json", "json"), ("v.jsonl", "jsonl"),
                      ("v.txt", "jsonl"), ("v", "jsonl")):  # fmt: skip
        out = tmp_path / name
        r = run("replays", "export", str(mid), "--out", str(out))
        assert r.exit_code == 0, r.output
        assert f"wrote {out} (" in r.stderr and r.stderr.rstrip().endswith(f", {fmt})"), r.stderr
        noted = f"note: {name}'s extension names no export format (.jsonl, .json, .html): writing jsonl"
        assert (noted in r.stderr) == (name == "v.txt"), r.stderr  # an extension that says nothing
        written = out.read_text(encoding="utf-8")
        if fmt == "html":
            assert written.lstrip().lower().startswith("<!doctype html>"), written[:80]
        elif fmt == "json":
            assert json.loads(written)["events"][0]["index"] == 1
        else:
            assert written == text
        out.unlink()
    out = tmp_path / "record.html"
    r = run("replays", "export", str(mid), "--format", "jsonl", "--out", str(out))
    assert r.exit_code == 0 and out.read_text(encoding="utf-8") == text  # --format wins
    r = run("replays", "export", "--help")
    said = " ".join(r.output.replace("│", " ").split())
    assert "default: the one --out's extension names (.jsonl, .json, .html), else jsonl" in said, said


def test_export_html_opens_standalone_in_chromium(
    arena: Arena, env_home: EnvHome, tmp_path: Path, browser: Any, shots: Path
) -> None:
    env_home(arena)
    mid = arena.forfeit_matches[1]
    out = tmp_path / "viewer.html"
    r = run("replays", "export", str(mid), "--format", "html", "--out", str(out))
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    assert "<script src" not in html and 'rel="stylesheet"' not in html  # nothing to fetch
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    requests: list[str] = []
    context.on("request", lambda req: requests.append(req.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())
    page.wait_for_selector("#viewer[data-ready='1']")
    assert page.locator("g.lounger").count() == 26
    db = arena.db()
    rep = replay(load_replay(db, mid))
    db.close()
    page.keyboard.press("End")
    assert page.get_attribute("#board", "data-step") == str(len(rep.events))
    scores = [int(page.get_attribute(f"g.player[data-seat='{s}']", "data-score")) for s in range(3)]
    assert scores == rep.result["scores"]
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#board", "data-step") == str(len(rep.events) - 1)
    page.screenshot(path=str(shots / "export-standalone.png"))
    context.close()
    assert not errors
    assert all(u.startswith(("file:", "data:")) for u in requests), requests


# ---- verify ----------------------------------------------------------------------------------------


def test_verify_passes_on_good_replays(arena: Arena, env_home: EnvHome, tmp_path: Path) -> None:
    env_home(arena)
    mid = arena.matches[0]
    r = run("replays", "verify", str(mid))
    assert r.exit_code == 0, r.output
    assert f"OK   match {mid}" in r.output and "verified 1 replay: 1 OK" in r.output
    f = tmp_path / "record.jsonl"
    run("replays", "export", str(mid), "--out", str(f))
    r = run("replays", "verify", str(f), str(arena.forfeit_matches[0]))
    assert r.exit_code == 0 and "verified 2 replays: 2 OK" in r.output
    r = run("replays", "verify", "--all")
    n = len(arena.matches) + len(arena.forfeit_matches)
    assert r.exit_code == 0 and f"verified {n} replays: {n} OK" in r.output
    r = run("replays", "verify", "--all", "--tournament", str(arena.tournament), "-v")
    assert r.exit_code == 0 and r.output.count("OK   match") == len(arena.matches)


def test_verify_finds_an_altered_throw(damaged: Arena, env_home: EnvHome) -> None:
    env_home(damaged)
    mid, line = damaged.planted["content"], damaged.planted["content_line"]
    r = run("replays", "verify", str(mid))
    assert r.exit_code == 1
    assert f"FAIL match {mid}: line {line} (event {line - 1}):" in r.output
    assert "is not the dice stream's throw" in r.output
    assert "1 failed" in r.output


def test_verify_finds_a_hash_mismatch(damaged: Arena, env_home: EnvHome) -> None:
    env_home(damaged)
    mid = damaged.planted["hash"]
    r = run("replays", "verify", str(mid))
    assert r.exit_code == 1
    assert f"FAIL match {mid}: stored replay damaged (sha256)" in r.output


def test_verify_all_counts_the_failures(damaged: Arena, env_home: EnvHome) -> None:
    env_home(damaged)
    r = run("replays", "verify", "--all")
    n = len(damaged.matches) + len(damaged.forfeit_matches)
    assert r.exit_code == 1
    assert f"verified {n} replays: {n - 2} OK, 2 failed" in r.output
    assert r.output.count("FAIL") == 2 and "OK   match" not in r.output


def test_verify_a_damaged_file(arena: Arena, env_home: EnvHome, tmp_path: Path) -> None:
    env_home(arena)
    db = arena.db()
    text = load_replay(db, arena.matches[0])
    db.close()
    line = throw_lines(text)[7]
    f = tmp_path / "bad.jsonl"
    f.write_text(alter_throw(text, line), encoding="utf-8")
    r = run("replays", "verify", str(f))
    assert r.exit_code == 1 and f"line {line} (event {line - 1})" in r.output
    r = run("replays", "verify", str(tmp_path / "missing.jsonl"))
    assert r.exit_code == 2
    r = run("replays", "verify")
    assert r.exit_code == 2


# ---- the terminal viewer ---------------------------------------------------------------------


def test_terminal_viewer_keys(arena: Arena) -> None:
    from arena.cli.replays_cmd import Navigator

    db = arena.db()
    rep = replay(load_replay(db, arena.matches[0]))
    db.close()
    nav = Navigator(rep)
    for key in ("\x1b[C", "\x1b[C", "\x1b[C", "\x1b[D"):
        assert nav.press(key)
    assert nav.step == 2
    nav.press("\x1b[B")  # next turn
    assert (
        rep.states[nav.step].turn != rep.states[2].turn
        and rep.states[nav.step - 1].turn == rep.states[2].turn
    )
    nav.press("\x1b[F")
    assert nav.step == len(rep.events)
    assert "result: scores" in nav.screen(rep.header["seating"], "t").plain
    nav.press(" ")  # play from the end starts over
    assert nav.playing and nav.step == 0
    nav.tick()
    nav.tick()
    assert nav.step == 2
    nav.press("\x1b[H")
    assert nav.step == 0 and not nav.playing
    screen = nav.screen(rep.header["seating"], "t").plain
    assert "step 0/" in screen and "lifeguard:" in screen
    assert "q (Esc) quit" in screen
    # Esc closes the legend when it is open (it quit the viewer), and quits when it is not
    assert nav.press("?") and nav.legend
    assert nav.press("\x1b") and not nav.legend
    assert not nav.press("\x1b")
    assert not nav.press("q")


def test_the_terminal_viewer_asks_for_one_size_for_the_whole_replay(arena: Arena) -> None:
    """A newcomer at 62x16 saw step 0 drawn and a later step ask for 62x18: the size asked for
    changed from step to step. Now it is the tallest screen's, the same at every step."""
    import re

    from rich.console import Console

    from arena.cli.fullscreen import lines_of, too_small
    from arena.cli.replays_cmd import Navigator
    from arena.engine.render import BOARD_WIDTH

    db = arena.db()
    rep = replay(load_replay(db, arena.matches[0]))
    db.close()
    names, title = rep.header["seating"], "match 1: 0:greedy · 1:random"
    nav = Navigator(rep)
    measure = Console(width=BOARD_WIDTH, height=100, force_terminal=True)
    heights = {}
    for k in range(nav.last + 1):
        nav.step = k
        heights[k] = lines_of(measure, nav.screen(names, title), BOARD_WIDTH)
    low, high = min(heights.values()), max(heights.values())
    assert low < high  # the screens do differ in height (else this test shows nothing)
    assert nav.tallest(measure, names, title, BOARD_WIDTH) == high
    # a window between the shortest and the tallest screen: a screen that fits is shown, and
    # every one that does not asks for the same size, the tallest screen's
    middle = Console(width=BOARD_WIDTH, height=(low + high) // 2, force_terminal=True)
    asked = set()
    for k in range(nav.last + 1):
        nav.step = k
        notice = too_small(
            middle, nav.screen(names, title), BOARD_WIDTH, lambda w: nav.tallest(middle, names, title, w)
        )
        assert (notice is None) == (heights[k] <= middle.size.height), k
        if notice is not None:
            found = re.search(r"needs at least (\d+)×(\d+)", notice.plain)
            assert found is not None
            asked.add((int(found.group(1)), int(found.group(2))))
    assert asked == {(BOARD_WIDTH, high)}
    big = Console(width=BOARD_WIDTH, height=high, force_terminal=True)
    for k in range(nav.last + 1):
        nav.step = k
        assert (
            too_small(big, nav.screen(names, title), BOARD_WIDTH, lambda w: nav.tallest(big, names, title, w))
            is None
        )


def test_terminal_viewer_in_a_pty(arena: Arena) -> None:
    import os
    import pty
    import select
    import subprocess
    import time

    master, slave = pty.openpty()
    env = {**os.environ, "ARENA_HOME": str(arena.home), "COLUMNS": "120", "LINES": "40", "TERM": "xterm"}
    env.pop("ARENA_DATABASE_URL", None)
    proc = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "arena"), "replays", "view", str(arena.matches[0])],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    out = b""

    def wait_for(text: str, seconds: float) -> bool:
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if text.encode() in out:
                return True
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
        return text.encode() in out

    try:
        assert wait_for("step 0/", 30), out[-2000:]
        for k, key in enumerate(("\x1b[C", "\x1b[C", "\x1b[C"), start=1):
            os.write(master, key.encode())
            assert wait_for(f"step {k}/", 10), out[-2000:]
        os.write(master, b"q")
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_terminal_viewer_needs_a_terminal(arena: Arena, env_home: EnvHome) -> None:
    env_home(arena)
    r = run("replays", "view", str(arena.matches[0]))
    assert r.exit_code == 2 and "needs a terminal" in r.output
    # a wrong match is named first: 'needs a terminal' sent the user to fix the wrong thing
    r = run("replays", "view", "99999")
    assert r.exit_code != 0 and "needs a terminal" not in r.output and "99999" in r.output, r.output
