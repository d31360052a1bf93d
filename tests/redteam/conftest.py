"""Red-team fixtures: one real ``arena serve`` per test module (SQLite in a private ARENA_HOME)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from redteam.rtkit import Served


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home: Path = tmp_path_factory.mktemp("rt") / "home"
    server = Served(home)
    try:
        yield server
    finally:
        server.stop()
