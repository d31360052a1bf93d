"""``decision_values(state)``: the expected worth of every legal decision of the seat to act.

This is the strong evaluation the replay analysis reads (``arena replays analyse``): for each
decision of a stored game, the value of the move played and of the best alternative.
"""

from __future__ import annotations

from dataclasses import replace

from arena.engine import Action, Phase, State, legal_actions

from .search import Params, SearchPolicy, WorthModel


def decision_values(state: State, worth_model: WorthModel | None = None) -> dict[Action, float]:
    """Every legal decision of the seat to act in ``state``, with its expected worth.

    Contract:

    * keys: exactly ``legal_actions(state)`` (every legal action, forced ones included); an empty
      dict at a chance node (a throw is due) or when the game is over;
    * values: **points of final margin** (my final points minus the mean of the other players'),
      measured **relative to passing this turn**: the expected change the rest of this turn makes
      to the margin if the player takes that decision and then plays the rest of the turn the
      best way the search knows (exact expectimax over the remaining throws with their exact
      probabilities, R10-R15; risk-neutral: the bot's own risk attitude, ``Params.risk``, is
      left out so that values stay in points), valued by the search's evaluation (future-aware worths of the
      lounger actions and of chips, :mod:`arena.strength.worth`; the game's last turn by its
      pairwise result).  So values of one state are comparable with each other -- ``max(values)
      - values[played]`` is the expected points the played decision lost -- but not across
      states (each state has its own baseline);
    * rolling phase (STOP / CHIP / KEEP): the expectimax value of the rest of the turn after that
      choice (chips still held are included, so a CHIP carries its cost);
    * action phase (FLIP, RECLAIM, INVADE, CONQUER, TAKE_FIVE, PASS): the worth of the action
      (PASS = 0 plus nothing), chips held not included (they do not change in this phase except
      by an INVADE, whose chips are in its worth);
    * setup (placements): the search's placement preference (a ranking, not points: higher is
      preferred);
    * deterministic: the same state (and worth model) always gives the same values; a call takes
      a few milliseconds (at most about 50 ms on one core).

    ``worth_model`` replaces the search's default evaluation (the leaf-evaluation hook, see
    :class:`arena.strength.search.WorthModel`).
    """
    if state.phase in (Phase.THROW, Phase.OVER):
        return {}
    # in points: the search's risk attitude (Params.risk) would value leaves by result, not points
    policy = SearchPolicy(replace(Params.for_players(state.players), risk=0.0), worth_model=worth_model)
    legal = legal_actions(state)
    if state.phase == Phase.SETUP:
        return policy.setup_values(state)
    if state.phase == Phase.ROLL:
        values = {a: v for v, a in policy.roll_values(state)}
        return {a: values[a] for a in legal}
    return policy.action_values(state)
