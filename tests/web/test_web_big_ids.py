"""``arena web`` (no accounts): ids beyond 64 bits are a 404 on every route (never a 500)."""

from __future__ import annotations

import urllib.error
import urllib.request

from .conftest import Site


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_ids_beyond_64_bits_are_not_found(site: Site) -> None:
    for n in (2**63, 10**30, -(2**63) - 1):
        for path in (f"/matches/{n}", f"/api/matches/{n}", f"/api/matches/{n}/replay", f"/tournaments/{n}",
                     f"/api/tournaments/{n}", f"/api/leaderboard?tournament={n}", f"/matches/{n}/export.html",
                     f"/api/matches/{n}/replay.jsonl", f"/live/{n}", f"/api/live/{n}"):  # fmt: skip
            assert status(site.url + path) in (400, 404, 422), path
