"""Fixtures of the CLI tests: a fresh data directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty ARENA_HOME (also the working directory of the ``arena`` runs)."""
    path = tmp_path / "home"
    path.mkdir()
    return path
