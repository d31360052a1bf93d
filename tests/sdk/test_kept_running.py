"""A bot kept running across matches starts each new match clean: ``self.decision`` (README: set
while ``choose`` runs) is None in the next match's ``on_match_start``/``setup`` instead of the
previous match's last decision and events; a reconnect to the same match keeps it."""

from __future__ import annotations

from collections.abc import Sequence

from arena import sdk
from arena.engine import Action, State
from arena.v1 import arena_pb2 as pb


class _First(sdk.Bot):
    def choose(self, state: State, legal: Sequence[Action]) -> Action:
        return legal[0]


def _welcome(match_id: str) -> pb.Welcome:
    return pb.Welcome(match_id=match_id, seat=0, players=2, bot_seed=5, seating=["a", "b"])


def test_a_new_match_forgets_the_last_decision_and_a_reconnect_keeps_it() -> None:
    bot = _First()
    sdk._start_match(bot, _welcome("m1"), fresh=True)
    bot.decision = sdk.Decision(7, 1.0, 10.0, 0.0)
    sdk._start_match(bot, _welcome("m1"), fresh=False)  # a reconnect within m1
    assert bot.decision is not None and bot.decision.request_id == 7
    sdk._start_match(bot, _welcome("m2"), fresh=True)
    assert bot.decision is None
