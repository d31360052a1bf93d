"""An unreachable --cluster is refused before the tournament is created (it used to create it,
wait 30 s for Dask, and leave an "interrupted" tournament behind; an outside CLI review)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.tournament.cluster import ClusterUnavailableError, check_scheduler

from .helpers import run_arena

BOTS = Path(__file__).resolve().parents[2] / "bots"


def test_an_unreachable_cluster_leaves_nothing_behind(home: Path) -> None:
    start = time.monotonic()
    run = run_arena(["tournament", "run", "greedy", "random", "--cluster", "tcp://127.0.0.1:1"], home)
    assert time.monotonic() - start < 20
    assert run.returncode == 1, run.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in run.stderr, run.stderr
    assert not (home / "arena.db").exists()


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:x", "nonsense", "tcp://:8786"])
def test_a_bad_scheduler_address_is_named(address: str) -> None:
    with pytest.raises(ClusterUnavailableError, match="not an address of the form tcp://HOST:PORT"):
        check_scheduler(address)


@pytest.mark.parametrize(
    ("command", "address"),
    [
        (["tournament", "start", "1"], "nonsense"),
        (["tournament", "resume", "1"], "tcp://127.0.0.1:1"),
        (["ladder", "run", "--max-tables", "1"], "nonsense"),
        (["ladder", "run", "--max-tables", "1"], "tcp://127.0.0.1:1"),
    ],
)
def test_a_bad_cluster_for_an_existing_tournament_or_the_ladder_is_one_line(
    home: Path, command: list[str], address: str
) -> None:
    """``start``/``resume``/``ladder run`` check the address as ``run`` does: a malformed one
    gave Dask's client a ValueError, then 60 s of waiting and a TimeoutError traceback as it was
    collected at exit; an unreachable one made the ladder wait 30 s and end in an OSError
    traceback."""
    created = run_arena(["tournament", "create", "greedy", "random", "--games", "1"], home)
    assert created.returncode == 0, created.stderr
    for name in ("greedy", "random"):
        added = run_arena(["bots", "add", f"{name}x", f"{BOTS / name}_bot.py"], home)
        assert added.returncode == 0, added.stderr
    start = time.monotonic()
    run = run_arena([*command, "--cluster", address], home, timeout=100)
    assert time.monotonic() - start < 20
    assert run.returncode == 1, run.stderr
    assert f"cannot reach the Dask scheduler at {address}" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr


def test_a_bad_cluster_makes_no_ladder_and_ends_none(home: Path) -> None:
    """``ladder run --cluster`` checks the address before the ladder is made: an unreachable
    scheduler used to leave a new ladder behind, and with ``--new`` it ended the current ladder
    (marked finished) and started another before failing; an empty address played locally."""
    made = run_arena(["ladder", "run", "--max-tables", "0", "--no-sandbox"], home)
    assert made.returncode == 0, made.stderr
    for args in (["--new", "--cluster", "tcp://127.0.0.1:1"], ["--new", "--cluster", ""]):
        run = run_arena(["ladder", "run", "--max-tables", "0", *args], home, timeout=100)
        assert run.returncode == 1, run.stderr
        assert "cannot reach the Dask scheduler at" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr, run.stderr
    listed = run_arena(["tournament", "list"], home)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if " ladder " in line]
    assert len(rows) == 1, listed.stdout
    assert "finished" not in rows[0], listed.stdout


@contextmanager
def _listener(reply: bytes) -> Iterator[str]:
    """Something that is not a Dask scheduler on a loopback port: it accepts connections and
    sends ``reply`` (nothing: a server waiting for a request, like a web server)."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("reply", [b"", b"HTTP/1.0 400 Bad request\r\n\r\n" * 4])
def test_a_service_that_is_not_dask_is_named(reply: bytes) -> None:
    """Dask's client waited forever for the handshake of a silent service, and read another's
    bytes as a frame length (a MemoryError traceback)."""
    with _listener(reply) as address:
        start = time.monotonic()
        with pytest.raises(ClusterUnavailableError, match=f"cannot reach the Dask scheduler at {address}: "):
            check_scheduler(address, timeout=1.0)
        assert time.monotonic() - start < 10


def test_the_ladder_on_a_service_that_is_not_dask_is_one_line(home: Path) -> None:
    with _listener(b"") as address:
        run = run_arena(["ladder", "run", "--no-sandbox", "--cluster", address], home, timeout=60)
    assert run.returncode == 1, run.stderr
    assert f"cannot reach the Dask scheduler at {address}: it did not answer" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
