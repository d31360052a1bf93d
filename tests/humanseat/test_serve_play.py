"""``arena serve``'s "play against this bot": a signed-in user starts a game from the web app and
plays it; the game is stored under ``human:<username>``; without a user (or a CSRF token) nothing
starts."""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from pathlib import Path

from serve.serverkit import Client, ServeProcess

from arena.engine import replay
from arena.store.db import Database
from arena.web.replays import replay_text, verify_match

PASSWORD = "alice-secret-pw-123"


def test_a_signed_in_user_plays_a_bot_from_the_web_app(
    arena_home: Path, sqlite_url: str, tmp_path: Path
) -> None:
    server = ServeProcess(arena_home, sqlite_url, tmp_path / "serve.log", ARENA_SANDBOX="off")
    try:
        anonymous = Client(server.url)
        assert anonymous.get("/play/new?bot=random").status == 401
        assert anonymous.post("/play/new", {"bot": "random"}).status == 401

        alice = Client(server.url)
        alice.signup("alice", PASSWORD)
        form = alice.get("/play/new?bot=random")
        assert form.status == 200 and 'name="csrf_token"' in form.body
        assert alice.post("/play/new", {"bot": "random"}).status == 403  # no CSRF token: refused
        bad = alice.post("/play/new", {"bot": "../bots/random_bot.py"}, csrf_from="/play/new")
        assert bad.status == 400 and "not" in bad.body  # a file path is not a bot name
        started = alice.post(
            "/play/new", {"bot": "random", "players": "2", "seat": "1"}, csrf_from="/play/new"
        )
        assert started.status == 303, started.body
        where = started.headers["location"]
        assert re.fullmatch(r"/play/[\w-]+\?key=[\w-]+", where), where
        page = alice.get(where)
        assert page.status == 200 and "human:alice" in page.body

        path, _, query = where.partition("?")
        key = urllib.parse.parse_qs(query)["key"][0]
        since, final, live = 0, None, None
        deadline = time.monotonic() + 240
        while final is None and time.monotonic() < deadline:
            s = alice.get(f"{path}/state?key={key}&since={since}").json()
            since, final, r = s["count"], s["final"], s["request"]
            if r is None:
                time.sleep(0.01)
                continue
            body = json.dumps(
                {"key": key, "seat": 1, "request_id": r["id"], "action": r["legal"][0]}
            ).encode()
            answer = alice.request("POST", f"{path}/action", body, {"Content-Type": "application/json"})
            assert answer.status == 200, answer.body
            if live is None and since >= 10:  # the game is followed live by the server's hub
                (running,) = anonymous.get("/api/matches?status=running").json()["items"]
                assert running["seed"] is None  # its dice stay secret meanwhile
                live = anonymous.get(f"/api/live/{running['id']}").json()
                assert live["received"] > 0, live
        assert final is not None, "the game did not end"
        assert live is not None and live["match"] == final["stored"]
        # the bot's page (the sample bot is registered now) offers the game to a signed-in user
        assert 'id="play-link"' in alice.get("/bots/random").body
        assert 'id="play-link"' not in anonymous.get("/bots/random").body
    finally:
        server.stop()
    db = Database(sqlite_url)
    try:
        assert verify_match(db, final["stored"]).ok
        assert replay(replay_text(db, final["stored"])).header["seating"] == ["random", "human:alice"]
    finally:
        db.close()


def test_a_bot_that_cannot_be_played_is_named_in_the_web_users_terms(
    arena_home: Path, sqlite_url: str, tmp_path: Path
) -> None:
    """A refused game says what is wrong with the name, never the server's database URL, its file
    paths or ``arena`` commands a club member cannot run on the server (they said "see 'arena bots
    list'" and "in the database sqlite:////srv/...")."""
    from arena.store.bots import add_bot, add_remote_bot, artifact_path, remove_bot, resolve_version

    db = Database(sqlite_url)
    try:
        for name in ("gone", "lost"):
            f = tmp_path / f"{name}.py"
            f.write_text(
                (Path(__file__).resolve().parents[2] / "bots" / "random_bot.py").read_text() + f"# {name}\n"
            )
            add_bot(db, name, f)
        add_bot(db, "gone", tmp_path / "lost.py")  # a second version: gone@2
        remove_bot(db, "gone")
        artifact_path(resolve_version(db, "lost")).unlink()  # the data folder's artifacts/ cleaned
        add_remote_bot(db, "faraway")  # connects in by itself ('arena serve'): no web game
    finally:
        db.close()
    server = ServeProcess(arena_home, sqlite_url, tmp_path / "serve.log", ARENA_SANDBOX="off")
    try:
        alice = Client(server.url)
        alice.signup("alice", PASSWORD)
        said = {}
        for ref in ("nosuch", "lost@9", "lost@x", "gone", "lost", "faraway", "ghost@2"):
            r = alice.post("/play/new", {"bot": ref}, csrf_from="/play/new")
            assert r.status == 400, (ref, r.body)
            said[ref] = r.body
    finally:
        server.stop()
    for ref, body in said.items():
        for internal in ("sqlite:", str(arena_home), "arena bots", "arena db", "'arena "):
            assert internal not in body, (ref, internal, body)
    assert "no bot &#39;nosuch&#39; here: not a registered bot and not a sample bot" in said["nosuch"]
    assert "lost has no version 9" in said["lost@9"]
    assert "use name@N with a number N" in said["lost@x"]
    assert "gone was removed: it plays no new games" in said["gone"]
    assert "lost cannot play now: its stored file is missing or damaged on this server" in said["lost"]
    assert "faraway is a remote bot: it connects in by itself, it cannot be launched here" in said["faraway"]
    assert "no bot named &#39;ghost&#39;" in said["ghost@2"]
    log = (tmp_path / "serve.log").read_text()
    assert "is missing" in log and "arena bots add lost" in log  # the operator's advice: in the log


def test_the_running_games_a_429_lists_open_for_their_player_alone(
    arena_home: Path, sqlite_url: str, tmp_path: Path
) -> None:
    """Past the per-user limit the 429 lists (and links) the user's running games (/play/ID); opened by their
    player, signed in, each leads to its page with the key (it was a 403 "use the link 'arena play'
    printed", so a closed tab's game could not be found again); anyone else still gets the 403."""
    server = ServeProcess(
        arena_home, sqlite_url, tmp_path / "serve.log", ARENA_SANDBOX="off", ARENA_PLAY_USER_GAMES="1"
    )
    try:
        alice = Client(server.url)
        alice.signup("alice", PASSWORD)
        started = alice.post("/play/new", {"bot": "random"}, csrf_from="/play/new")
        assert started.status == 303, started.body
        where = started.headers["location"]
        refused = alice.post("/play/new", {"bot": "random"}, csrf_from="/play/new")
        assert refused.status == 429, refused.body
        (listed,) = set(re.findall(r"/play/[\w-]+", refused.body))
        assert re.findall(r'<a href="(/play/[\w-]+)">', refused.body) == [listed]  # a link, not text alone
        assert where.startswith(listed + "?key=")
        back = alice.get(listed)  # the player, signed in, without the key
        assert back.status == 303 and back.headers["location"] == where, back.body
        assert alice.get(back.headers["location"]).status == 200
        bob = Client(server.url)
        bob.signup("bob-the-other", PASSWORD)
        for other in (bob, Client(server.url)):  # another user, nobody signed in
            page = other.get(listed)
            assert page.status == 403 and "wrong or missing key" in page.body, page.body
            assert "key=" not in page.body and where.partition("?key=")[2] not in page.body
        assert alice.get(f"{listed}?key=wrong").status == 303  # a wrong key: the player's page too
    finally:
        server.stop()
