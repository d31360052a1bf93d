"""One game driven by action indices: chance from the §5 dice stream, rewards at the end.

An :class:`Episode` is what the environments wrap.  It holds the engine state, applies the legal
action an index names (an illegal index raises :class:`~arena.envs.actions.IllegalIndexError`,
never a corrected move), and resolves every throw at once from the counter-based dice stream of
its seed (rules.md §5), so that the same seed and the same actions give the same game as the
engine and the referee.  It remembers the events cheaply and writes the game record (rules.md
§6.4) on request, which ``arena engine verify`` accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from arena.engine import (
    Action,
    DiceStream,
    IllegalActionError,
    Rules,
    State,
    apply,
    apply_throw,
    new_game,
    scores,
)
from arena.engine.board import MAX_PLAYERS, MIN_PLAYERS
from arena.engine.chance import SEED_LIMIT
from arena.engine.record import RecordWriter
from arena.engine.variants import DEFAULT, by_name

from .actions import ACTIONS, N_ACTIONS, IllegalIndexError, check_index

#: Reward modes (rewards are paid once, when the game ends; 0 before).
#: ``placing``: (seats beaten − seats that beat you) / (players − 1), in [-1, 1];
#: ``margin``: your score minus the mean score of the other seats (points).
#: Both sum to 0 over the seats (zero-sum).
REWARD_MODES: Final = ("placing", "margin")


class PlayerCountError(ValueError):
    """A player count outside 2..4."""


def check_players(players: object) -> int:
    """``players`` when it is an integer 2..4, else :class:`PlayerCountError` saying what is allowed."""
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise PlayerCountError(
            f"Cool am Pool is played by {MIN_PLAYERS}, 3 or {MAX_PLAYERS} players, got players={players!r}"
        )
    return players


def check_reward(reward: object) -> str:
    """``reward`` when it names a reward mode, else ``ValueError`` listing the modes."""
    if reward not in REWARD_MODES:
        raise ValueError(f"unknown reward mode {reward!r}: choose one of {', '.join(REWARD_MODES)}")
    return str(reward)


def check_seed(seed: object) -> int:
    """``seed`` when it is a dice-stream seed (an integer 0 <= seed < 2**63), else ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a dice seed is an integer 0 <= seed < 2**63 (rules.md §5), got {seed!r}")
    return seed


def rules_of(rules: Rules | str) -> Rules:
    """A :class:`Rules` value from itself or its variant name / version id."""
    return rules if isinstance(rules, Rules) else by_name(rules)


def final_rewards(points: Sequence[int], mode: str) -> tuple[float, ...]:
    """The end-of-game reward of every seat for final scores ``points`` (see :data:`REWARD_MODES`)."""
    n = len(points)
    if mode == "placing":
        return tuple(
            (sum(1 for q in points if q < p) - sum(1 for q in points if q > p)) / (n - 1) for p in points
        )
    if mode == "margin":
        total = sum(points)
        return tuple(float(p - (total - p) / (n - 1)) for p in points)
    raise ValueError(f"unknown reward mode {mode!r}: choose one of {', '.join(REWARD_MODES)}")


class Episode:
    """A game of ``players`` seats whose throws come from the dice stream of ``seed``."""

    __slots__ = ("dice", "events", "players", "reward", "rules", "seed", "state")

    def __init__(
        self, players: int, seed: int, *, rules: Rules | str = DEFAULT, reward: str = "placing"
    ) -> None:
        self.players = check_players(players)
        self.seed = check_seed(seed)
        self.rules = rules_of(rules)
        self.reward = check_reward(reward)
        self.dice = DiceStream(seed)
        self.state: State = new_game(players, self.rules)
        # The events so far: a tuple of faces for a throw, an Action for a decision.
        self.events: list[tuple[int, ...] | Action] = []

    @property
    def over(self) -> bool:
        """True once the game has ended."""
        return self.state.is_over

    def step(self, index: object) -> Action:
        """Apply the legal action with index ``index`` for the seat to act, then every throw that
        follows.  Returns the action.  Raises :class:`~arena.envs.actions.IllegalIndexError`
        (naming the action and the legal ones) for an index that is not legal now."""
        if type(index) is int and 0 <= index < N_ACTIONS:  # the hot path: the engine checks legality
            action = ACTIONS[index]
            try:
                state = apply(self.state, action)
            except IllegalActionError:
                raise IllegalIndexError(index, self.state) from None
        else:
            action = check_index(self.state, index)  # says what is wrong with the index
            state = apply(self.state, action)
        self.events.append(action)
        while state.is_chance:
            faces = self.dice.throw(state.turn, state.throw_no + 1, state.dice)
            self.events.append(faces)
            state = apply_throw(state, faces)
        self.state = state
        return action

    def rewards(self) -> tuple[float, ...]:
        """Every seat's reward: the final reward once the game is over, else zeros."""
        if not self.state.is_over:
            return (0.0,) * self.players
        return final_rewards(scores(self.state), self.reward)

    def record(self, **header: object) -> str:
        """The game record so far (rules.md §6.4), with the result line once the game is over;
        ``header`` adds keys to its first line."""
        writer = RecordWriter(self.players, self.seed, rules=self.rules, **header)
        state = new_game(self.players, self.rules)
        for event in self.events:
            if isinstance(event, Action):
                writer.decision(state, event)
                state = apply(state, event)
            else:
                writer.throw(event)
                state = apply_throw(state, event)
        if state.is_over:
            writer.finish(state)
        return writer.text()
