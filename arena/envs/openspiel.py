"""Cool am Pool as an OpenSpiel Python game, ``python_cool_am_pool`` (needs the ``rl`` extra).

::

    import pyspiel
    import arena.envs.openspiel  # registers the game

    game = pyspiel.load_game("python_cool_am_pool", {"players": 3})
    state = game.new_initial_state()

Parameters: ``players`` (2, 3 or 4; default 2), ``reward`` (``"placing"`` or ``"margin"``, see
:data:`arena.envs.episode.REWARD_MODES`; default ``"placing"``), ``rules`` (a variant name or
rules version id; default ``"standard"``).

* Decisions use the stable action indices of :mod:`arena.envs.actions` (376 distinct actions;
  legal actions ascending are the engine's order).
* Throws are explicit chance nodes.  The outcomes of a throw of k dice are the multisets of faces
  (numbered as in :func:`arena.envs.actions.throw_outcomes`) with their exact multinomial
  probabilities (:meth:`CoolAmPoolState.exact_chance_outcomes` gives them as fractions;
  ``chance_outcomes`` as floats).  :meth:`CoolAmPoolState.stream_outcome` is the outcome the §5
  dice stream of a seed gives, so a game can be played with the referee's dice.
* Perfect information: the observation tensor is the egocentric vector of
  :mod:`arena.envs.observation`; the information-state tensor is the same vector (the state is
  Markov: nothing in the history that is not on the board matters), the information-state
  string is the history (perfect recall).
* Serialisation is pyspiel's for Python games: ``state.serialize()`` holds the history and the
  state's own fields (the engine state among them, pickled); ``game.deserialize_state`` restores
  the state from it.
* Returns are paid at the end and sum to 0 (zero-sum).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from functools import cache
from typing import Any, Final

from arena.envs import require

require("pyspiel", "OpenSpiel (the open_spiel package)")

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
import pyspiel  # noqa: E402
from open_spiel.python.algorithms import mcts  # noqa: E402

from arena.engine import State, apply, apply_throw, new_game, render, scores  # noqa: E402
from arena.engine.chance import stream_faces  # noqa: E402
from arena.engine.notation import format_throw  # noqa: E402
from arena.engine.variants import DEFAULT  # noqa: E402

from .actions import (  # noqa: E402
    ACTIONS,
    MAX_THROW_OUTCOMES,
    N_ACTIONS,
    TEXTS,
    check_index,
    faces_of_counts,
    legal_indices,
    outcome_counts,
    outcome_number,
    throw_outcomes,
    throw_probabilities,
)
from .episode import check_players, check_reward, final_rewards, rules_of  # noqa: E402
from .observation import OBS_SIZE, SCORE_SCALE, encode, views  # noqa: E402

GAME_NAME: Final = "python_cool_am_pool"
DECISIONS_PER_TURN: Final = 11  # at most 10 throws (6 + 4 chips), each a decision, then the action
SETUP_PLACEMENTS: Final = 24

_CHANCE: Final = int(pyspiel.PlayerId.CHANCE)
_DEFAULTS: Final[dict[str, Any]] = {"players": 2, "reward": "placing", "rules": DEFAULT.variant}

GAME_TYPE: Final = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Cool am Pool (Pool Arena)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def _game_info(players: int, reward: str, round_cap: int) -> Any:
    bound = 1.0 if reward == "placing" else SCORE_SCALE
    return pyspiel.GameInfo(
        num_distinct_actions=N_ACTIONS,
        max_chance_outcomes=MAX_THROW_OUTCOMES,
        num_players=players,
        min_utility=-bound,
        max_utility=bound,
        utility_sum=0.0,
        max_game_length=SETUP_PLACEMENTS + round_cap * players * DECISIONS_PER_TURN,
    )


class CoolAmPoolGame(pyspiel.Game):  # type: ignore[misc]
    """The game; ``params`` as in the module docstring (anything else is refused)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = dict(params or {})
        unknown = sorted(set(given) - set(_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown parameters {unknown} for {GAME_NAME} (known: {', '.join(_DEFAULTS)})")
        values = {**_DEFAULTS, **given}
        self.players = check_players(values["players"])
        self.reward_mode = check_reward(values["reward"])
        self.rules = rules_of(str(values["rules"]))
        info = _game_info(self.players, self.reward_mode, self.rules.round_cap)
        super().__init__(GAME_TYPE, info, values)

    def new_initial_state(self) -> CoolAmPoolState:
        """The state before the first setup placement."""
        return CoolAmPoolState(self)

    def state_from_engine(self, state: State) -> CoolAmPoolState:
        """An OpenSpiel state wrapping an engine state (e.g. one the arena sent a bot), to search
        and play on.  Its history is empty: ``is_initial_state()`` is True and the
        information-state string (the history) says nothing; ``serialize()`` still round-trips
        it, as it keeps the engine state."""
        if state.players != self.players:
            raise ValueError(f"the state has {state.players} players, the game {self.players}")
        return CoolAmPoolState(self, state)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> CoolAmPoolObserver:
        """The observer for observation / information-state tensors and strings."""
        return CoolAmPoolObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


@cache
def _float_outcomes(k: int) -> list[tuple[int, float]]:
    return [(n, float(p)) for n, p in enumerate(throw_probabilities(k))]


@cache
def _outcome_texts(k: int) -> tuple[str, ...]:
    return tuple(format_throw(faces_of_counts(c)) for c in throw_outcomes(k))


class _Frozen:
    """Holds an immutable engine state; OpenSpiel clones Python states with ``copy.deepcopy``,
    which then shares the state instead of copying every tuple of it."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, object]) -> _Frozen:
        return self


class CoolAmPoolState(pyspiel.State):  # type: ignore[misc]
    """A game state: the engine's immutable :class:`~arena.engine.State` inside (:attr:`engine`)."""

    def __init__(self, game: CoolAmPoolGame, state: State | None = None) -> None:
        super().__init__(game)
        self._engine = _Frozen(state if state is not None else new_game(game.players, game.rules))
        self.reward_mode = game.reward_mode

    @property
    def engine(self) -> State:
        """The engine state."""
        return self._engine.state

    @engine.setter
    def engine(self, state: State) -> None:
        self._engine = _Frozen(state)

    # -- OpenSpiel's API

    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` before a throw, ``TERMINAL`` once over."""
        s = self.engine
        if s.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        if s.is_chance:
            return int(pyspiel.PlayerId.CHANCE)
        return s.seat

    def legal_actions(self, player: int | None = None) -> list[int]:
        """OpenSpiel's ``legal_actions``: of the player to act, or of ``player``, who has none
        unless it is to act.  pyspiel's Python states answer a chance node's outcomes for *every*
        player (C++ games answer nothing); this answers ``[]`` for a seat at a chance node.
        (Answered here, as pyspiel would for the player to act, without the round trip through
        pyspiel.)"""
        s = self.engine
        if s.is_over:
            return []
        if s.is_chance:
            return list(range(len(throw_probabilities(s.dice)))) if player in (None, _CHANCE) else []
        return legal_indices(s) if player is None or player == s.seat else []

    def legal_actions_mask(self, player: int | None = None) -> list[int]:
        """OpenSpiel's ``legal_actions_mask``; all 0 for a player not to act.  (pyspiel's own
        answer for a seat at a chance node writes the throw's up to 462 outcomes into a mask of
        376 actions: past its end, a heap corruption that aborts the process.)"""
        if player is not None and player != self.current_player():
            return [0] * (MAX_THROW_OUTCOMES if player == _CHANCE else N_ACTIONS)
        mask: list[int] = (
            super().legal_actions_mask() if player is None else super().legal_actions_mask(player)
        )
        return mask

    def _legal_actions(self, player: int) -> list[int]:
        """The legal action indices of the seat to act, ascending."""
        if player != self.engine.seat:
            return []
        return legal_indices(self.engine)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Every outcome of the due throw with its probability (floats of exact fractions)."""
        if not self.engine.is_chance:
            raise ValueError(f"no throw is due in phase {self.engine.phase.label}")
        return _float_outcomes(self.engine.dice)

    def exact_chance_outcomes(self) -> list[tuple[int, Fraction]]:
        """Every outcome of the due throw with its exact probability."""
        if not self.engine.is_chance:
            raise ValueError(f"no throw is due in phase {self.engine.phase.label}")
        return list(enumerate(throw_probabilities(self.engine.dice)))

    def _apply_action(self, action: int) -> None:
        s = self.engine
        if s.is_chance:
            if not 0 <= action < len(throw_probabilities(s.dice)):
                raise ValueError(
                    f"chance outcome {action} does not exist for a throw of {s.dice} dice "
                    f"(0..{len(throw_probabilities(s.dice)) - 1})"
                )
            self.engine = apply_throw(s, faces_of_counts(outcome_counts(s.dice, action)))
        else:
            self.engine = apply(s, check_index(s, action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            s = self.engine
            if s.is_chance and 0 <= action < len(throw_probabilities(s.dice)):
                return _outcome_texts(s.dice)[action]
            return f"chance outcome {action}"
        return TEXTS[action] if 0 <= action < N_ACTIONS else f"action {action}"

    def is_terminal(self) -> bool:
        """True once the game is over."""
        return self.engine.is_over

    def returns(self) -> list[float]:
        """The final rewards (0 for everyone before the end)."""
        if not self.engine.is_over:
            return [0.0] * self.engine.players
        return list(final_rewards(scores(self.engine), self.reward_mode))

    def __str__(self) -> str:
        return render(self.engine)

    # -- helpers

    def stream_outcome(self, seed: int) -> int:
        """The chance outcome the §5 dice stream of ``seed`` gives for the due throw."""
        s = self.engine
        if not s.is_chance:
            raise ValueError(f"no throw is due in phase {s.phase.label}")
        return outcome_number(stream_faces(seed, s.turn, s.throw_no + 1)[: s.dice])


class CoolAmPoolObserver:
    """OpenSpiel's Python observer: the egocentric vector of :mod:`arena.envs.observation`."""

    def __init__(self, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict: dict[str, npt.NDArray[np.float32]] = views(self.tensor)

    def set_from(self, state: CoolAmPoolState, player: int) -> None:
        """Fill :attr:`tensor` with ``state`` as seat ``player`` sees it."""
        self.tensor[:] = encode(state.engine, player)

    def string_from(self, state: CoolAmPoolState, player: int) -> str:
        """The history (information state) or the board (observation), from ``player``'s seat."""
        if self.perfect_recall:
            return f"seat {player}: {state.history_str()}"
        return f"seat {player} {compact(state.engine)}"


def compact(s: State) -> str:
    """A one-line text of every field of ``s`` (the observation string): phase, seat, round, turn,
    throw number, dice left to throw, whether this is the final round (R25) and how the game
    ended (``-`` while it goes on), lifeguard position, dice (kept/last/result per face), per
    lounger the towel owner (``-`` none, upper-case letter when secured) and the figure owner,
    supplies and chips per seat."""
    towels = "".join(
        "-" if o < 0 else (chr(65 + o) if sec else chr(97 + o))
        for o, sec in zip(s.towel, s.secured, strict=True)
    )
    figures = "".join("-" if f < 0 else str(f) for f in s.figure)
    dice = "/".join("".join(map(str, d)) for d in (s.kept, s.last, s.result))
    return (
        f"{s.phase.label} seat={s.seat} round={s.round} turn={s.turn} throw={s.throw_no} "
        f"to_throw={s.dice} final={int(s.final_round)} end={s.termination or '-'} "
        f"guard={s.guard} dice={dice} "
        f"towels={towels} figures={figures} supply={s.towels}/{s.figures} chips={s.chips} pool={s.pool}"
    )


class ScoreEvaluator(mcts.Evaluator):  # type: ignore[misc]
    """An MCTS leaf evaluator without rollouts (random rollouts of this game last hundreds of
    moves): at a terminal state its returns; elsewhere each seat's margin as the scores stand
    (its score minus the mean of the others'), squashed to (-1, 1) by ``tanh(margin / scale)``
    for the ``placing`` reward (raw for ``margin``).  Uniform priors."""

    def __init__(self, scale: float = 10.0) -> None:
        self.scale = scale

    def evaluate(self, state: CoolAmPoolState) -> npt.NDArray[np.float64]:
        s = state.engine
        if s.is_over:
            return np.array(final_rewards(scores(s), state.reward_mode), np.float64)
        margins = np.array(final_rewards(scores(s), "margin"), np.float64)
        return margins if state.reward_mode == "margin" else np.tanh(margins / self.scale)

    def prior(self, state: CoolAmPoolState) -> Sequence[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def load(players: int = 2, **params: Any) -> CoolAmPoolGame:
    """``pyspiel.load_game(GAME_NAME, {"players": players, **params})``, refusing a wrong count
    with :class:`~arena.envs.episode.PlayerCountError` before OpenSpiel sees it."""
    check_players(players)
    game: CoolAmPoolGame = pyspiel.load_game(GAME_NAME, {"players": players, **params})
    return game


def action_text(index: int) -> str:
    """The notation of a decision index (OpenSpiel's ``action_to_string`` for a seat)."""
    return str(ACTIONS[index])


pyspiel.register_game(GAME_TYPE, CoolAmPoolGame)
