"""The play page's HTTP side, against a real ``arena play`` process: every bad post gets a clear
HTTP error and sends nothing, and a whole game played through the posts is stored and verifies."""

from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from browser.playkit import Played, start_play  # (tests/ is on the path: its packages import so)
from sqlmodel import select

from arena.engine import replay
from arena.store.db import Database
from arena.store.models import Match
from arena.web.replays import replay_text, verify_match


def call(url: str, data: bytes | None = None, kind: str = "application/json") -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": kind} if data is not None else {}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            body = res.read()
            status = res.status
    except urllib.error.HTTPError as err:
        body, status = err.read(), err.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")


class Seat:
    def __init__(self, played: Played) -> None:
        parts = urllib.parse.urlsplit(played.url)
        self.base = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self.key = urllib.parse.parse_qs(parts.query)["key"][0]

    def state(self, since: int = 0) -> dict[str, Any]:
        status, body = call(f"{self.base}/state?key={self.key}&since={since}")
        assert status == 200, body
        return dict(body)

    def request(self) -> dict[str, Any]:
        """The state once a request is open (polling)."""
        for _ in range(500):
            s = self.state()
            if s["request"] is not None:
                return s
            time.sleep(0.02)
        raise AssertionError("no request came")

    def post(self, body: dict[str, Any], form: bool = False) -> tuple[int, Any]:
        if form:
            data = urllib.parse.urlencode(body).encode()
            return call(f"{self.base}/action", data, "application/x-www-form-urlencoded")
        return call(f"{self.base}/action", json.dumps(body).encode())


def test_bad_posts_get_clear_errors_and_a_whole_game_still_verifies(tmp_path: Path) -> None:
    played = start_play(tmp_path, "random", "--seed", "3", "--grace", "20")
    try:
        seat = Seat(played)
        status, page = call(f"{seat.base}?key=wrong")
        assert status == 403 and "wrong or missing key" in page
        status, page = call(f"{seat.base.rsplit('/', 1)[0]}/nosuchgame?key={seat.key}")
        assert status == 404
        status, body = call(f"{seat.base}/state?key=wrong")
        assert status == 403 and body["error"] == "bad-key"

        s = seat.request()
        assert s["seat"] == 0 and s["seating"] == ["human:tester", "random"]
        request = s["request"]
        rid, legal = request["id"], request["legal"]
        assert all(o["action"] in legal and o["lounger"] for o in request["options"])
        good = {"key": seat.key, "seat": 0, "request_id": rid, "action": legal[3]}
        refusals = [
            ({**good, "key": "forged"}, 403, "bad-key"),
            ({**good, "seat": 1}, 403, "wrong-seat"),
            ({**good, "request_id": rid + 99}, 409, "unknown-request"),
            ({**good, "action": "pass"}, 422, "not-legal"),
            ({**good, "action": "place the-moon"}, 422, "not-legal"),
            ({**good, "request_id": "x"}, 400, "bad-post"),
        ]
        for body, want, code in refusals:
            status, answer = seat.post(body)
            assert (status, answer["error"]) == (want, code), (body, answer)
            assert answer["detail"]
        status, answer = call(f"{seat.base}/action", b"[1, 2", "application/json")
        assert status == 400 and answer["error"] == "bad-post"
        assert seat.state()["request"]["id"] == rid  # nothing was sent: the request is still open

        status, answer = seat.post({k: str(v) for k, v in good.items()}, form=True)  # a form post
        assert status == 200 and answer == {"ok": True, "request_id": rid}
        status, answer = seat.post(good)  # the same again: a double click or a replayed post
        assert (status, answer["error"]) == (409, "already-answered")

        # the rest of the game through the posts (polling the state is presence)
        since, moves = 0, 1
        while True:
            s = seat.state(since)
            since = s["count"]
            if s["final"] is not None:
                break
            r = s["request"]
            if r is None:
                time.sleep(0.01)
                continue
            status, answer = seat.post(
                {"key": seat.key, "seat": 0, "request_id": r["id"], "action": r["legal"][-1]}
            )
            assert status == 200, answer
            moves += 1
        final = s["final"]
        assert [x["termination"] for x in final["seats"]] == [final["termination"]] * 2
        assert status == 200
    finally:
        code = played.wait(60)
        played.stop()
    assert code == 0, "\n".join(played.lines)
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        assert verify_match(db, final["stored"]).ok
        rep = replay(replay_text(db, final["stored"]))
        assert rep.header["seating"] == ["human:tester", "random"]
        assert rep.result.get("forfeits", []) == []
        assert sum(1 for e in rep.events if e.get("seat") == 0 and "ms" in e) == moves
    finally:
        db.close()


def test_the_event_stream_sends_snapshots_and_its_end_starts_the_grace(tmp_path: Path) -> None:
    played = start_play(tmp_path, "random", "--seed", "4", "--move-time", "30", "--grace", "1")
    try:
        seat = Seat(played)
        with urllib.request.urlopen(f"{seat.base}/events?key={seat.key}&since=0", timeout=30) as stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            snaps = []
            while not snaps or snaps[-1]["request"] is None:  # one snapshot per change
                line = stream.readline().decode()
                if line.startswith("data: "):
                    snaps.append(json.loads(line[6:]))
                else:
                    assert line in ("\n", ": keep-alive\n"), line
            assert snaps[-1]["request"]["phase"] == "setup" and snaps[0]["since"] == 0
            assert [s["version"] for s in snaps] == sorted({s["version"] for s in snaps})
        # the stream closed: 1 s later the bridge ends its gRPC stream, the referee records it
    finally:
        code = played.wait(60)
        played.stop()
    assert code == 3
    assert "seat 0 (human:tester) forfeited: disconnected" in "\n".join(played.lines)


def processes_of(home: Path) -> list[int]:
    """Processes whose environment points ARENA_HOME at ``home`` (unsandboxed bots inherit it)."""
    marker = f"ARENA_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize(
    ("sig", "said"),
    [(signal.SIGINT, "arena: interrupted (Ctrl-C)"), (signal.SIGTERM, "arena: stopped (SIGTERM)")],
)
def test_a_stop_mid_match_stops_everything_and_records_the_match_as_interrupted(
    tmp_path: Path, sig: signal.Signals, said: str
) -> None:
    """Ctrl-C, and SIGTERM (which used to end the process at once, the match left ``running``)."""
    played = start_play(tmp_path, "random", "greedy", "--seed", "6")
    try:
        seat = Seat(played)
        seat.request()  # the match is on: the bots are connected, the person is asked
        assert len(processes_of(tmp_path)) >= 3  # arena play and its two bots
        played.proc.send_signal(sig)
        code = played.wait(60)
    finally:
        played.stop()
    assert code == 128 + sig, "\n".join(played.lines)
    assert said in played.lines
    deadline = time.monotonic() + 10
    while processes_of(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(tmp_path) == []  # no bot left behind
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        with db.session() as s:
            rows = [(m.status, m.error) for m in s.exec(select(Match)).all()]
    finally:
        db.close()
    assert rows == [("failed", "interrupted")]


def test_other_local_connections_do_not_lock_the_person_out(tmp_path: Path) -> None:
    """``arena play`` counts no connections per address: every local user is 127.0.0.1, and an
    outside review locked the person out of their own game with 64 idle connections (each answer
    refused 503 until the seat timed out)."""
    import socket

    played = start_play(tmp_path, "random", "--seed", "6")
    held: list[socket.socket] = []
    try:
        seat = Seat(played)
        seat.request()
        netloc = urllib.parse.urlsplit(played.url).netloc
        host, port = netloc.rsplit(":", 1)
        held = [socket.create_connection((host, int(port))) for _ in range(80)]
        state = seat.state()  # the 81st connection, the person's own
        assert "request" in state
    finally:
        for s in held:
            s.close()
        played.stop()
