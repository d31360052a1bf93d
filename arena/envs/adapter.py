"""From training to the arena: a policy over environment observations, or an OpenSpiel bot, as
an arena bot (an :class:`arena.sdk.Bot`) that plays real matches over gRPC, unchanged.

::

    from arena.envs.adapter import PolicyBot
    from arena.sdk import run

    def policy(obs, mask):                 # PettingZoo style: observation vector, int8 mask
        return int(np.flatnonzero(mask)[0])

    run(PolicyBot(policy, name="mine"))

    # an OpenSpiel bot, made per match once the seat count is known:
    from arena.envs.adapter import OpenSpielBot
    run(OpenSpielBot(lambda game, seat, seed: MCTSBot(game, 2.0, 50, ScoreEvaluator(),
                                                      random_state=np.random.RandomState(seed))))

The policy sees exactly what the environment gives (:func:`arena.envs.observation.encode` from
the bot's seat, :func:`arena.envs.observation.mask`) and answers an action index; the adapter
turns it into the action's notation.  An index that is not legal raises
:class:`~arena.envs.actions.IllegalIndexError` (the referee would forfeit the bot for an illegal
action anyway; the error names the action and the legal ones in the bot's log).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arena.engine import Action, State
from arena.sdk import Bot

from .actions import ACTIONS, check_index
from .observation import Mask, Observation, encode, mask

if TYPE_CHECKING:
    from .openspiel import CoolAmPoolGame

Policy = Callable[[Observation, Mask], object]
"""``policy(observation, mask) -> action index`` (an int or a numpy integer)."""


class PolicyBot(Bot):
    """An arena bot that asks ``policy(observation, mask)`` for every decision."""

    def __init__(self, policy: Policy, *, name: str = "policy", version: str = "1") -> None:
        super().__init__()
        self.policy = policy
        self.name = name
        self.version = version

    def choose(self, state: State, legal: object) -> Action:
        """The action whose index the policy answers for ``state`` seen from this bot's seat."""
        index = self.policy(encode(state, state.seat), mask(state))
        return check_index(state, index)


BotFactory = Callable[["CoolAmPoolGame", int, int], Any]
"""``make(game, seat, seed) -> pyspiel.Bot``: called at the start of every match."""


class OpenSpielBot(Bot):
    """An arena bot that asks an OpenSpiel bot (``bot.step(state)``) for every decision.

    Give it a ready bot (anything with ``step``; its game must have the match's player count),
    or ``make(game, seat, seed)``, which builds the OpenSpiel bot for each match, once the number of
    players and the rules are known (from the Welcome): ``game`` is ``python_cool_am_pool``
    loaded with them, ``seed`` the match's per-seat bot seed (for the bot's randomness, so a
    rerun repeats it).  Each decision wraps the referee's state as an OpenSpiel state
    (:meth:`~arena.envs.openspiel.CoolAmPoolGame.state_from_engine`) and plays the index the bot
    answers."""

    def __init__(self, make: BotFactory | Any, *, name: str = "openspiel", version: str = "1") -> None:
        super().__init__()
        if hasattr(make, "step"):  # a ready OpenSpiel bot: used as it is in every match
            ready = make
            self.make: BotFactory = lambda game, seat, seed: ready
        else:
            self.make = make
        self.name = name
        self.version = version
        self.game: CoolAmPoolGame | None = None
        self.bot: Any = None

    def setup(self, welcome: object) -> None:
        """Load the game for this match and build the OpenSpiel bot."""
        from .openspiel import load

        self.game = load(self.players, rules=self.rules.version)
        self.bot = self.make(self.game, self.seat, self.bot_seed)

    def choose(self, state: State, legal: object) -> Action:
        """The action whose index the OpenSpiel bot answers for ``state``."""
        if self.game is None or self.game.players != state.players or self.bot is None:
            self.setup(None)
        assert self.game is not None
        index = self.bot.step(self.game.state_from_engine(state))
        return check_index(state, index)


def action_of_index(index: int) -> Action:
    """The engine action of an index (for policies that want to look at what they answer)."""
    return ACTIONS[index]
