"""The lists stay fast with 10,000 matches: every filter is an indexed query with LIMIT/OFFSET,
never "load all matches" (benchmarks/web.py measures the same over HTTP)."""

from __future__ import annotations

import importlib.util
import statistics
import time
import urllib.request
from types import ModuleType

import pytest

from arena.store.db import Database
from arena.web.queries import MatchFilters, list_matches

from .conftest import REPO

pytestmark = pytest.mark.timeout(120)

N = 10_000


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_web", REPO / "benchmarks" / "web.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('big') / 'arena.db'}")
    bench().fill(db, N)
    return db


@pytest.mark.parametrize(
    ("filters", "page"),
    [
        (MatchFilters(), 1),
        (MatchFilters(), N // 50),
        (MatchFilters(bot="search"), 1),
        (MatchFilters(bot="alpha", termination="normal"), 30),
        (MatchFilters(termination="timeout"), 1),
        (MatchFilters(tournament=7), 5),
        (MatchFilters(status=None, since=None), 100),
    ],
)
def test_list_queries_are_fast(big_db: Database, filters: MatchFilters, page: int) -> None:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        result = list_matches(big_db, filters, page=page, per_page=50)
        times.append(time.perf_counter() - t0)
    assert statistics.median(times) < 0.25, f"{filters} page {page}: {times}"
    if filters.termination == "timeout":
        assert result.total == 0
    else:
        assert len(result.items) == 50 and all(len(m.seats) >= 2 for m in result.items)
    if filters.bot:
        assert all(filters.bot in [s.bot for s in m.seats] for m in result.items)


def test_matches_page_and_api_over_http(big_db: Database) -> None:
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    with BackgroundServer(create_app(big_db)) as base:
        for path in (
            "/matches",
            f"/matches?page={N // 50}&bot=beta",
            "/api/matches",
            "/api/matches?page=150",
        ):
            times = []
            for _ in range(6):
                t0 = time.perf_counter()
                with urllib.request.urlopen(base + path, timeout=30) as r:
                    assert r.status == 200
                    r.read()
                times.append(time.perf_counter() - t0)
            assert statistics.median(times[1:]) < 0.5, (path, times)
