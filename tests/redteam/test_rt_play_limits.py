"""Red-team findings F1, F2, F4, F7, F9 (the play routes), fixed: each test failed before the fix.

* F1: a post to ``/play/...`` is bounded before it is read (413 for a large Content-Length, a
  chunked body cut at the limit; 404 for no game before its body), the server's memory unchanged;
* F7: malformed JSON to ``/play/ID/action`` (deep nesting, 1e999, a key that is a list or an
  object, fractions, bad UTF-8) is a 400/403, the seat's open request untouched;
* F2: one user runs at most 2 unfinished games (429 naming them), the server at most
  ``ARENA_PLAY_MAX_GAMES``; :class:`GameLimits` also limits game starts per user and hour;
* F4: ``POST /play/new bot=FILE`` never runs a file of the server's working directory;
* F9: ``POST /play/new`` with bad JSON or bad UTF-8 is a 400.

Real ``arena play`` / ``arena serve`` processes over raw sockets (tests/redteam/rtkit.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.hosting import BotSpec
from arena.humanseat.session import PlayRegistry, PlaySession, PlaySpec
from arena.humanseat.starter import GameLimitError, GameLimits
from arena.referee import TimeControl
from arena.web.play_routes import MAX_POST_BYTES
from redteam.rtkit import Client, Served, raw_exchange, sign_up
from redteam.test_rt_play import Played


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    p = Played(tmp_path_factory.mktemp("rtplaylim") / "home")
    try:
        yield p
    finally:
        p.stop()


def huge_post(played: Played, path: str, mb: int) -> tuple[bytes, float]:
    """POST ``mb`` MB with a Content-Length to ``path``: the first answer bytes and how much the
    server's memory grew meanwhile (MB)."""
    base = peak = rss_kb(played.proc.pid)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {mb << 20}\r\n\r\n"
    ).encode()

    def chunks() -> Iterator[bytes]:
        nonlocal peak
        for _ in range(mb):
            peak = max(peak, rss_kb(played.proc.pid))
            yield b"a" * (1 << 20)

    # the chunks are made while they are sent, so the memory is sampled during the post
    answer = raw_exchange(played, head, chunks(), timeout=120)  # type: ignore[arg-type]
    peak = max(peak, rss_kb(played.proc.pid))
    return answer, (peak - base) / 1024


def test_f1_play_posts_are_bounded_before_they_are_read(played: Played) -> None:
    request = played.request()
    for path in ("/play/nosuchgame/action", f"{played.path}/action"):
        answer, grew = huge_post(played, path, 200)
        assert answer.startswith((b"HTTP/1.1 413", b"HTTP/1.1 404")), answer[:200]
        assert grew < 50, f"the server held {grew:.0f} MB of a request body to {path}"
    assert huge_post(played, f"{played.path}/action", 1)[0].startswith(b"HTTP/1.1 413")
    # a chunked body (no length) is cut at the limit
    head = (
        f"POST {played.path}/action HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    piece = b"a" * 4096
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    answer = raw_exchange(played, head, [chunk] * 256 + [b"0\r\n\r\n"])
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # a post of the limit's size is read (and refused for what it is, not for its size)
    padded = b'{"pad": "' + b"x" * (MAX_POST_BYTES - 200) + b'"}'
    assert played.post(None, padded).status == 403  # no key
    assert played.request() == request  # the seat is untouched
    assert played.proc.poll() is None


BAD_ACTIONS = [
    b"[" * 5000 + b"]" * 5000,  # RecursionError in json.loads
    b"{" + b'"a":{' * 2000 + b"}" * 2001,
    b'{"key": ["K"], "seat": 0, "request_id": 1, "action": "x"}',  # AttributeError in check_key
    b'{"key": {"a": 1}, "seat": 0, "request_id": 1, "action": "x"}',
    b'{"key": 12, "seat": 0, "request_id": 1, "action": "x"}',
    b'{"key": "KEY", "seat": 1e999, "request_id": 1, "action": "x"}',  # OverflowError in _whole
    b'{"key": "KEY", "seat": 0, "request_id": 1e999, "action": "x"}',
    b'{"key": "KEY", "seat": 0, "request_id": -1e999, "action": "x"}',
    b'{"key": "KEY", "seat": 0, "request_id": 1.5, "action": "x"}',
    b'{"key": "KEY", "seat": 0, "request_id": [1], "action": "x"}',
    b'{"key": "KEY", "seat": 0, "request_id": ' + b"9" * 5000 + b', "action": "x"}',
    b'{"key": "KEY", "seat": 0, "request_id": 1, "action": "x", "\xff": 1}',  # bad UTF-8
]


@pytest.mark.parametrize("body", BAD_ACTIONS, ids=[f"bad{k}" for k in range(len(BAD_ACTIONS))])
def test_f7_malformed_actions_are_4xx_and_the_seat_survives(played: Played, body: bytes) -> None:
    request = played.request()
    answer = played.post(None, body.replace(b"KEY", played.key.encode()))
    assert answer.status in (400, 403), (answer.status, answer.text[-300:])
    assert answer.json()["detail"] and "Traceback" not in answer.text
    assert played.request() == request
    form = b"key=" + played.key.encode() + b"&request_id=1e999&action=x"
    assert played.post(None, form, kind="application/x-www-form-urlencoded").status == 400


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("rtplaycap") / "home"
    server = Served(home, ARENA_SANDBOX="off", ARENA_PLAY_MAX_GAMES="3")
    try:
        yield server
    finally:
        server.stop()


USERS: dict[str, Client] = {}  # signed up once (sign-ups are limited per address)


def start(user: Client, bot: str = "random") -> tuple[int, str]:
    r = user.form(
        "/play/new", {"bot": bot, "players": "2", "seat": "0", "csrf_token": user.csrf("/play/new")}
    )
    return r.status, r.header("location") or r.text


def test_f4_a_web_game_never_runs_a_file_of_the_working_directory(served: Served) -> None:
    marker = served.home / "ran.txt"
    (served.home / "admin_tool.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    )
    eve = sign_up(served, "evelyn", "evelyn-pw-1")
    status, text = start(eve, "admin_tool.py")
    assert status == 400, (status, text[-300:])
    assert "registered bot" in text and "sample bot" in text
    time.sleep(2)
    assert not marker.exists(), "a file of the server's working directory was run as a bot"


@pytest.mark.parametrize(
    "body,kind",
    [
        (b"{'bot': 1}", "application/json"),
        (b"[" * 5000 + b"]" * 5000, "application/json"),
        (b"\xff\xfe", "text/plain"),
        (b"bot=" + b"a" * (MAX_POST_BYTES + 10), "application/x-www-form-urlencoded"),
    ],
    ids=["bad-json", "deep-json", "bad-utf8", "too-large"],
)
def test_f9_play_new_answers_a_bad_body_with_4xx(served: Served, body: bytes, kind: str) -> None:
    user = USERS.get("frank") or USERS.setdefault("frank", sign_up(served, "frank", "frank-password"))
    r = user.request("POST", "/play/new", body, {"Content-Type": kind})
    assert r.status == (413 if len(body) > MAX_POST_BYTES else 400), (r.status, r.text[-300:])
    assert "Traceback" not in r.text


def test_f2_games_are_capped_per_user_and_per_server(served: Served) -> None:
    mallory = sign_up(served, "mallory", "mallory-pw-1")
    results = [start(mallory) for _ in range(4)]
    codes = [c for c, _ in results]
    assert codes == [303, 303, 429, 429], results
    refused = mallory.form(
        "/play/new", {"bot": "random", "players": "2", "seat": "0", "csrf_token": mallory.csrf("/play/new")}
    )
    assert refused.status == 429 and refused.header("retry-after")
    for _, where in results[:2]:  # the message names the running games
        assert where.partition("?")[0] in refused.text, refused.text[-500:]
    assert "at most 2" in refused.text
    bob = sign_up(served, "bobby", "bobby-pw-12")
    assert start(bob)[0] == 303  # the server's third game
    status, text = start(bob)
    assert status == 429 and "the server runs its most games" in text, (status, text[-300:])
    assert served.alive()


def test_game_limits_count_starts_per_user_in_a_window() -> None:
    async def check() -> None:
        registry = PlayRegistry()
        limits = GameLimits(per_user=2, total=3, starts=3, window=0.5)

        def add(owner: str, done: bool) -> None:
            spec = PlaySpec((BotSpec("b", ("true",)),), 0, owner, TimeControl(1.0, 0.0), 1)
            session = registry.add(PlaySession(spec, owner=owner))
            if done:
                session.done.set()

        for _ in range(3):
            limits.admit(registry, "ann")
            add("ann", done=True)  # finished games do not count as running ...
        with pytest.raises(GameLimitError, match="you started 3 games") as refused:
            limits.admit(registry, "ann")  # ... but their starts do
        assert 0 < refused.value.retry_after <= 0.5
        limits.admit(registry, "ben")  # another user is not limited by ann's starts
        add("ben", done=False)
        await asyncio.sleep(0.6)
        limits.admit(registry, "ann")  # the window has passed
        add("ann", done=False)
        limits.admit(registry, "ann")
        add("ann", done=False)
        with pytest.raises(GameLimitError, match="2 unfinished games"):
            limits.admit(registry, "ann")
        with pytest.raises(GameLimitError, match="most games at once"):
            limits.admit(registry, "cid")

    asyncio.run(check())


def test_game_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_PLAY_USER_GAMES", "1")
    monkeypatch.setenv("ARENA_PLAY_MAX_GAMES", "5")
    monkeypatch.setenv("ARENA_PLAY_STARTS_PER_HOUR", "7")
    limits = GameLimits.from_env()
    assert (limits.per_user, limits.total, limits.starts) == (1, 5, 7)
    monkeypatch.setenv("ARENA_PLAY_MAX_GAMES", "many")
    with pytest.raises(ValueError, match="ARENA_PLAY_MAX_GAMES must be a whole number"):
        GameLimits.from_env()


def test_one_address_runs_at_most_per_address_games_whatever_its_accounts() -> None:
    """Four fresh accounts from one address took every game slot of the server (an outside
    review): games are also counted per address."""
    registry = PlayRegistry()
    limits = GameLimits(per_user=2, per_address=3, total=8, starts=20)

    def add(owner: str, address: str) -> None:
        spec = PlaySpec((BotSpec("b", ("true",)),), 0, owner, TimeControl(1.0, 0.0), 1)
        registry.add(PlaySession(spec, owner=owner, address=address))

    for owner in ("u1", "u2", "u3"):
        limits.admit(registry, owner, "10.0.0.9")
        add(owner, "10.0.0.9")
    with pytest.raises(GameLimitError, match="3 unfinished games were started from your address"):
        limits.admit(registry, "u4", "10.0.0.9")
    limits.admit(registry, "u4", "10.0.0.10")  # another address is not limited by this one
