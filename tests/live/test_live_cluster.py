"""Live matches played on a Dask cluster (arena/live/remote.py): the web hub's signed UDP
endpoint receives a cluster worker's events (workers that cannot reach its Unix socket); a
datagram that is unsigned or signed with another key is never applied."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from distributed import LocalCluster

from arena.live.channel import LIVE_ENV
from arena.live.hub import LiveHub
from arena.live.publish import UdpPublisher, observer_for
from arena.live.remote import UDP_ENV, LiveTarget, endpoint_path, read_endpoint, sign

from .test_live import FakeMatch, _get, _wait, record_text  # noqa: F401 (fixture)

SLOW_BOT = """
import random
import time

from arena.sdk import Bot, run


class SlowBot(Bot):
    name = "slow"
    version = "1"

    def choose(self, state, legal):
        time.sleep(0.04)  # a match long enough to be watched while it runs
        return random.choice(legal)


if __name__ == "__main__":
    run(SlowBot())
"""


def _path(tag: str) -> Path:
    return Path(tempfile.gettempdir()) / f"arena-live-udp-{os.getpid()}-{tag}.sock"


def test_the_udp_endpoint_takes_signed_events_only(record_text: str) -> None:  # noqa: F811
    lines = record_text.strip().splitlines()
    hub = LiveHub(_path("a"), ("127.0.0.1", 0)).start()
    try:
        assert hub.target is not None
        ep = endpoint_path(hub.path)
        assert read_endpoint(ep) == hub.target  # what a coordinator on this host reads
        assert stat.S_IMODE(ep.stat().st_mode) == 0o600  # it holds the key
        # forgeries: a valid resync of match 5, unsigned, then signed with another key
        forged = json.dumps({"m": 5, "k": 1, "l": lines[1], "ts": 1.0, "f": ""}).encode()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(forged, (hub.target.host, hub.target.port))
            s.sendto(sign(b"x" * 32, forged), (hub.target.host, hub.target.port))
        _wait(lambda: hub.forged == 2)
        # the real thing: a worker's observer with the endpoint the task carried
        obs = observer_for(6, LiveTarget(hub.target.host, hub.target.port, hub.target.key))
        assert obs is not None
        for k in range(1, len(lines) - 1):
            obs(FakeMatch(lines[: k + 1], k))
            time.sleep(0.0005)
        _wait(lambda: (f := hub.feed(6)) is not None and f.count == len(lines) - 2)
        assert hub.feed(5) is None and hub.forged == 2
    finally:
        hub.close()
    assert not ep.exists()


def test_a_signed_message_over_the_udp_limit_is_not_sent() -> None:
    hub = LiveHub(_path("b"), ("127.0.0.1", 0)).start()
    try:
        assert hub.target is not None
        pub = UdpPublisher(hub.target)
        assert not pub.send({"m": 1, "k": 1, "l": "x" * 70_000})
        assert pub.dropped == 1 and pub.sent == 0
    finally:
        hub.close()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A real local Dask cluster whose worker has a data folder of its own and no Unix live
    channel (as on another host): only the UDP endpoint can reach the hub."""
    worker_home = (tmp_path / "worker-home").resolve()
    worker_home.mkdir()
    lc = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},  # no port 8787 warning
        silence_logs=logging.ERROR, env={"ARENA_HOME": str(worker_home), LIVE_ENV: ""},
    )  # fmt: skip
    try:
        yield str(lc.scheduler_address)
    finally:
        lc.close()  # type: ignore[no-untyped-call]


def test_a_cluster_match_is_watched_live(
    tmp_path: Path, arena_home: Path, cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena serve --cluster``'s ladder on a real Dask cluster and the real web app over HTTP:
    the SSE stream of a running match delivers steps received live (``ts`` set) over UDP."""
    from arena.ladder.background import LadderService
    from arena.ladder.service import LadderSettings
    from arena.referee.timecontrol import TimeControl
    from arena.serve.services import ServeContext
    from arena.store.bots import add_bot
    from arena.store.db import Database
    from arena.web.app import create_app

    monkeypatch.setenv(UDP_ENV, "127.0.0.1:0")
    monkeypatch.delenv(LIVE_ENV, raising=False)
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    for name in ("slow_a", "slow_b"):
        bot = tmp_path / f"{name}.py"
        bot.write_text(SLOW_BOT.replace('"slow"', f'"{name}"'), encoding="utf-8")
        add_bot(db, name, bot)
    app = create_app(db)
    hub: LiveHub = app.state.live_hub
    assert hub is not None and hub.target is not None
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    lines: list[str] = []
    settings = LadderSettings(seed=3, table_sizes=(2,), control=TimeControl(5.0, 60.0), sandbox=None,
                              max_tables=1)  # fmt: skip
    service = LadderService(ServeContext(db, cluster=cluster, sandbox=None, log=lines.append), settings)
    try:
        _wait(lambda: server.started)
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        service.start()
        _wait(lambda: _get(f"{base}/api/ladder")["running"], timeout=120)
        match = _get(f"{base}/api/ladder")["running"][0]["match"]
        steps: list[dict[str, Any]] = []
        ended = None
        with urllib.request.urlopen(f"{base}/api/live/{match}/events", timeout=120) as r:
            event = None
            for raw in r:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                elif line.startswith("data: ") and event == "step":
                    steps += json.loads(line.removeprefix("data: "))["steps"]
                elif line.startswith("data: ") and event == "end":
                    ended = json.loads(line.removeprefix("data: "))
                    break
        assert ended is not None and ended["status"] == "finished", lines
        assert [s["k"] for s in steps] == list(range(1, len(steps) + 1))
        live = sum(1 for s in steps if s["ts"] is not None)  # received over UDP while it ran
        assert live >= len(steps) // 2 > 0, (live, len(steps))
        replay = _get(f"{base}/api/matches/{match}/replay")
        assert [s["state"] for s in steps] == replay["states"][1:]
        assert hub.forged == 0
    finally:
        service.stop()
        server.should_exit = True
        web.join(10)
        hub.close()
        db.close()


def test_an_endpoint_on_every_interface_is_given_as_the_address_towards_the_scheduler(cluster: str) -> None:
    """A hub bound to 0.0.0.0 is reached at this host's address on the scheduler's route (here
    loopback), never at 0.0.0.0 (which a worker on another host would take for itself)."""
    from distributed import Client

    from arena.tournament.cluster import DaskExecutor

    client = Client(cluster, set_as_default=False)  # type: ignore[no-untyped-call]
    try:
        wild = DaskExecutor(client, {}, live=lambda: LiveTarget("0.0.0.0", 4000, b"k" * 32))._live_target()
        assert wild == LiveTarget("127.0.0.1", 4000, b"k" * 32)
        named = LiveTarget("10.1.2.3", 4000, b"k" * 32)
        assert DaskExecutor(client, {}, live=lambda: named)._live_target() == named
        assert DaskExecutor(client, {})._live_target() is None
    finally:
        client.close()  # type: ignore[no-untyped-call]


def test_serve_picks_the_live_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena serve --cluster`` turns the UDP endpoint on (this host's address towards the
    scheduler, any port); ``--live-address`` wins; a bad one is refused with what to give."""
    import typer

    from arena.cli.serve_cmd import _live_endpoint

    monkeypatch.setenv(UDP_ENV, "")  # recorded, so the variable is restored (unset) afterwards
    monkeypatch.delenv(UDP_ENV)
    _live_endpoint(None, None)
    assert UDP_ENV not in os.environ  # local workers only: the Unix socket is enough
    _live_endpoint(None, "tcp://127.0.0.1:8786")
    assert os.environ[UDP_ENV] == "127.0.0.1:0"
    _live_endpoint("0.0.0.0:9999", "tcp://127.0.0.1:8786")
    assert os.environ[UDP_ENV] == "0.0.0.0:9999"
    with pytest.raises(typer.BadParameter, match="HOST:PORT"):
        _live_endpoint("nowhere", None)
