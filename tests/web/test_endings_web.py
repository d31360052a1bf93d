"""The web pages read endings and wins from the one vocabulary (arena.endings): only the seat that
forfeited gets the red badge (the other "won by forfeit"), a first place shared by two seats shows
as half a win each, and an unknown termination filter is refused naming the choices."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.endings import MatchEnd, Reason
from arena.referee.result import MatchResult, SeatOutcome
from arena.store.tournaments import add_match, record_result
from arena.web.app import create_app
from arena.web.server import BackgroundServer

from .conftest import two_bot_tournament

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, int]]:
    """A fresh arena with two finished matches of one tournament (a shared first place, then a
    crash forfeit), served over HTTP; (url, tournament id)."""
    db, vids, names, tid = two_bot_tournament(tmp_path, monkeypatch)
    for k, (placings, ends, end) in enumerate(
        [
            ((1, 1), (MatchEnd.NORMAL, MatchEnd.NORMAL), MatchEnd.NORMAL),
            ((1, 2), (MatchEnd.FORFEIT, Reason.CRASHED), MatchEnd.FORFEIT),
        ]
    ):
        mid = add_match(db, tid, seed=k, group=f"g{k}", version_ids=vids)
        seats = tuple(
            SeatOutcome(s, names[vids[s]], 10, placings[s], ends[s], "", 0.1, 0.1, 2) for s in range(2)
        )
        assert record_result(db, mid, MatchResult(f"m{mid}", k, 2, end, seats, "a replay\n"))
    with BackgroundServer(create_app(db)) as url:
        yield url, tid
    db.close()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return str(r.read().decode("utf-8"))


def test_only_the_offender_is_marked_and_wins_are_shared(served: tuple[str, int]) -> None:
    url, tid = served
    html = _get(f"{url}/tournaments/{tid}")
    # each player's span: its classes, then its content (up to the next player's)
    players = [c.split('"', 1) for c in html.split('<span class="player')[1:] if not c.startswith('s"')]
    offender = [(cls, rest) for cls, rest in players if "crashed" in rest]
    winner = [(cls, rest) for cls, rest in players if "won by forfeit" in rest]
    assert len(offender) == len(winner) == 1, players
    assert 'class="badge bad">crashed<' in offender[0][1] and "forfeit" in offender[0][0].split()
    assert "badge bad" not in winner[0][1] and "forfeit" not in winner[0][0].split(), winner
    assert sum("badge bad" in rest for _, rest in players) == 1, players  # the shared first: none
    cells = {
        bot: re.findall(r'<td class="num">([^<]*)</td>', row)
        for bot, row in re.findall(r'<tr data-bot="([^"]+)"[^>]*>(.*?)</tr>', html, re.S)
    }
    # games, wins, mean score, timeouts, forfeits: greedy 1/2 + 1, random 1/2 + 0
    assert [c[-5:] for c in (cells["greedy"], cells["random"])] == [
        ["2", "1.5", "10.0", "0", "0"],
        ["2", "0.5", "10.0", "0", "1"],
    ], cells


def test_an_unknown_termination_filter_is_refused(served: tuple[str, int]) -> None:
    url, _ = served
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(f"{url}/matches?termination=banana")
    assert err.value.code == 400
    body = err.value.read().decode("utf-8")
    assert "unknown termination &#39;banana&#39;" in body or "unknown termination 'banana'" in body, body
    assert "crashed" in body
    assert "crashed" in _get(f"{url}/matches?termination=crashed")
