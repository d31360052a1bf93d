"""Cool am Pool as a PettingZoo AEC environment for 2-4 players (needs the ``rl`` extra).

::

    from arena.envs.pettingzoo import env

    e = env(players=3, reward="placing", render_mode="ansi")
    e.reset(seed=42)                       # the §5 dice stream of seed 42
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        if terminated or truncated:
            action = None
        else:
            action = int(np.flatnonzero(obs["action_mask"])[0])   # your policy here
        e.step(action)
    print(e.record())                      # the game record; `arena engine verify` accepts it

* Agents ``player_0`` .. ``player_{n-1}`` are the seats; the agent to act is the seat to act.
* Observations are dicts: ``"observation"`` is the float32 vector of
  :mod:`arena.envs.observation` (egocentric, documented layout), ``"action_mask"`` an int8 mask
  over the fixed ``Discrete(376)`` action space of :mod:`arena.envs.actions`.
* Throws are chance events the environment resolves itself, from the dice stream of the seed
  given to ``reset`` (``reset(seed=None)`` draws the seed from the environment's generator, which
  a seeded reset seeds), so an episode is reproducible and identical to the engine's and the
  referee's game with that seed and those actions.
* Rewards are paid when the game ends (R25/R26 end it: ``terminated``; nothing truncates):
  ``reward="placing"`` or ``"margin"`` (:data:`arena.envs.episode.REWARD_MODES`).
* An illegal action index raises :class:`~arena.envs.actions.IllegalIndexError` naming the
  action and the legal ones; nothing is ever corrected silently.  A wrong player count raises
  :class:`~arena.envs.episode.PlayerCountError`.
* ``render_mode``: ``"ansi"`` (text), ``"rgb_array"`` (an ``(H, W, 3)`` uint8 array),
  ``"human"`` (the text printed to stdout); :meth:`CoolAmPoolEnv.svg` gives the picture as SVG.
"""

from __future__ import annotations

from typing import Any, Final

from arena.envs import require

require("pettingzoo", "PettingZoo")
require("gymnasium", "Gymnasium")

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo import AECEnv  # noqa: E402

from arena.engine import Phase, Rules  # noqa: E402
from arena.engine.chance import SEED_LIMIT  # noqa: E402
from arena.engine.variants import DEFAULT  # noqa: E402

from . import render as pictures  # noqa: E402
from .actions import N_ACTIONS  # noqa: E402
from .episode import Episode, check_players, check_reward, check_seed, rules_of  # noqa: E402
from .observation import OBS_SIZE, encode, mask  # noqa: E402

RENDER_MODES: Final = ("ansi", "rgb_array", "human")
_NO_ACTIONS: Final = np.zeros(N_ACTIONS, np.int8)
_NO_ACTIONS.flags.writeable = False
_OVER: Final = Phase.OVER
ObsDict = dict[str, npt.NDArray[Any]]


class EnvStateError(RuntimeError):
    """The environment is used before its first ``reset``."""


class CoolAmPoolEnv(AECEnv[str, ObsDict, int | None]):  # type: ignore[misc]
    """The AEC environment (see the module docstring)."""

    metadata: dict[str, Any] = {  # noqa: RUF012 - PettingZoo's convention
        "render_modes": list(RENDER_MODES),
        "name": "cool_am_pool_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        players: int = 2,
        *,
        reward: str = "placing",
        rules: Rules | str = DEFAULT,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.players = check_players(players)
        self.reward_mode = check_reward(reward)
        self.rules = rules_of(rules)
        if render_mode is not None and render_mode not in RENDER_MODES:
            choices = ", ".join(RENDER_MODES)
            raise ValueError(f"render_mode must be one of {choices} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{k}" for k in range(players)]
        self._seat = {a: k for k, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
            }
        )
        act_space = spaces.Discrete(N_ACTIONS)
        # One space object per agent, always the same one (PettingZoo's api_test checks identity).
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.episode: Episode | None = None
        self.agents: list[str] = []

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the same for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(376)``: every action of the notation by its stable index."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game whose throws come from the dice stream of ``seed`` (0 <= seed < 2**63;
        ``None``: a seed drawn from the environment's generator).  ``options`` is ignored."""
        if seed is not None:
            check_seed(seed)
            self._rng = np.random.default_rng(seed)
            dice_seed = seed
        else:
            dice_seed = int(self._rng.integers(0, SEED_LIMIT))
        self.episode = Episode(self.players, dice_seed, rules=self.rules, reward=self.reward_mode)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.episode.state.seat]

    def _game(self) -> Episode:
        if self.episode is None:
            raise EnvStateError("call reset() before using the environment")
        return self.episode

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index of the action space) for the agent to act; throws follow
        by themselves.  A terminated agent steps with ``None``."""
        game = self.episode
        if game is None:
            raise EnvStateError("call reset() before using the environment")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game.step(action)  # IllegalIndexError for anything but a legal index
        self._cumulative_rewards[agent] = 0.0
        state = game.state
        if state.phase == _OVER:
            rewards = game.rewards()
            for a in self.agents:
                self.rewards[a] = rewards[self._seat[a]]
                self.terminations[a] = True
            self._accumulate_rewards()
        else:
            # Rewards are paid at the end only: every step before it rewards 0 (nothing to add).
            self.agent_selection = self.possible_agents[state.seat]

    def observe(self, agent: str) -> ObsDict:
        """``{"observation": ..., "action_mask": ...}`` for ``agent``; the mask is all 0 unless
        ``agent`` is to act.  The mask is read-only (masks are shared between steps)."""
        game = self.episode
        if game is None:
            raise EnvStateError("call reset() before using the environment")
        state = game.state
        seat = self._seat[agent]
        to_act = state.seat == seat and not state.is_over
        return {"observation": encode(state, seat), "action_mask": mask(state) if to_act else _NO_ACTIONS}

    def last(self, observe: bool = True) -> tuple[ObsDict | None, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``: (observation, cumulative reward, terminated, truncated, info) of
        the agent to act."""
        game = self.episode
        if game is None:  # before reset() there is no agent to act (it was an AttributeError)
            raise EnvStateError("call reset() before using the environment")
        agent = self.agent_selection
        obs: ObsDict | None = None
        if observe:  # observe() inlined: this is the call every agent makes at every step
            state = game.state
            seat = self._seat[agent]
            to_act = state.seat == seat and state.phase != _OVER
            obs = {"observation": encode(state, seat), "action_mask": mask(state) if to_act else _NO_ACTIONS}
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The current state as text (``ansi``) or as an RGB array (``rgb_array``); ``human``
        prints the text board to stdout and returns ``None``, as does no render mode."""
        state = self._game().state
        if self.render_mode == "ansi":
            return pictures.ansi(state)
        if self.render_mode == "rgb_array":
            return pictures.rgb_array(state)
        if self.render_mode == "human":
            print(pictures.ansi(state), flush=True)  # a terminal is this game's window
        return None

    def svg(self) -> str:
        """The current state as an SVG document (the picture of ``rgb_array``)."""
        return pictures.svg(self._game().state)

    def record(self, **header: object) -> str:
        """The game record of the episode so far (rules.md §6.4)."""
        return self._game().record(**header)

    @property
    def seed_used(self) -> int:
        """The dice seed of the current episode."""
        return self._game().seed

    def close(self) -> None:
        """Nothing to release (no window is ever opened): the environment stays usable, and
        ``record()`` still gives the last episode."""


def raw_env(players: int = 2, **kwargs: Any) -> CoolAmPoolEnv:
    """The environment without wrappers (PettingZoo's naming)."""
    return CoolAmPoolEnv(players, **kwargs)


def env(players: int = 2, **kwargs: Any) -> CoolAmPoolEnv:
    """The environment.  It already refuses illegal actions and checks its own order of play,
    so PettingZoo's order-enforcing and illegal-action wrappers are not applied (they would turn
    an illegal index into a silent penalty instead of an error)."""
    return CoolAmPoolEnv(players, **kwargs)
