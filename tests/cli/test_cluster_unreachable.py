"""An unreachable --cluster is refused before the tournament is created (it used to create it,
wait 30 s for Dask, and leave an "interrupted" tournament behind; an outside CLI review)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arena.tournament.cluster import ClusterUnavailableError, check_scheduler

from .helpers import run_arena


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
