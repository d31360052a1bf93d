"""A small learned agent for Cool am Pool: a table of values for the rolling decisions.

It is a policy over the environment's observations, ``agent(obs, mask) -> index`` (the form the
PettingZoo environment gives and :class:`arena.envs.adapter.PolicyBot` takes), so the same object
trains in ``arena.envs.pettingzoo`` (``train_rolling.py``) and plays in the arena
(``rolling_bot.py``).

* Setup: the engine's greedy placement (most valuable free lounger, own colours first).
* Action phase: the legal action with the best immediate margin (own points gained minus the
  mean of what the others gain), computed with the engine on the decoded observation.
* Rolling (learned): the candidates are ``stop``, ``chip`` and "keep every die of colour c"; each
  is summarised by a small key (dice of that colour, dice thrown again, the best use of that
  colour, what stopping now would give) and the agent plays the candidate whose key has the best
  average outcome so far (the margin the turn's action gained, minus half a point per chip
  spent).  Keys never seen fall back to ``stop``: the untrained agent always stops.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from arena.engine import Action, ActionKind, GreedyPolicy, Phase, State, apply, legal_actions, scores
from arena.engine.board import (
    BLOCKED,
    FIVES,
    LIFEGUARD,
    LOUNGER_COLOUR,
    LOUNGER_VALUE,
    N_COLOURS,
    REGULAR,
    advance,
)
from arena.envs.actions import INDEX
from arena.envs.observation import decode

CHIP_COST = 0.5  # two chips are a point (R27)
OPTIMISM = 4.0  # value of an untried key while training (so every key gets tried)


def margin(s: State, seat: int = 0) -> float:
    """Seat's score minus the mean of the others'."""
    pts = scores(s)
    return pts[seat] - (sum(pts) - pts[seat]) / (len(pts) - 1)


def colour_gain(s: State, colour: int, dice: int, guard: int) -> float:
    """The best margin one lounger of ``colour`` reachable with ``dice`` dice would give seat 0
    (the rolling seat, in a decoded observation) with the lifeguard on ``guard``."""
    n = s.players
    blocked = BLOCKED[guard + 1]
    best = 0.0
    for i in REGULAR:
        if LOUNGER_COLOUR[i] != colour or LOUNGER_VALUE[i] > dice or i in blocked or s.secured[i]:
            continue
        v, owner, fig = LOUNGER_VALUE[i], s.towel[i], s.figure[i]
        if owner == 0:
            gain = v if fig < 0 else v + 1 / (n - 1)
        elif fig < 0:
            gain = 1.5 if s.figures[0] else 0.0
        elif fig == 0:
            gain = v - 1.0 if s.towels[0] else 0.0
        else:
            gain = 0.0
        best = max(best, gain)
    if dice >= 5 and s.towels[0] and any(s.towel[i] < 0 for i in FIVES):
        best = max(best, 5.0)
    return best


def _key(*parts: object) -> str:
    return ":".join(str(p) for p in parts)


class RollingAgent:
    """The agent: ``table`` maps a candidate's key to (sum of outcomes, count)."""

    def __init__(self, table: dict[str, list[float]] | None = None) -> None:
        self.table: dict[str, list[float]] = table or {}
        self.greedy = GreedyPolicy()

    # -- the policy

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action index to play (no exploration)."""
        return self.decide(obs, mask)[0]

    def decide(
        self, obs: np.ndarray, mask: np.ndarray, explore: random.Random | None = None
    ) -> tuple[int, str | None]:
        """(index, key of the rolling candidate chosen or None).  With ``explore`` the choice is
        optimistic about untried keys and sometimes random (training)."""
        s = decode(obs)
        legal = [a for a in legal_actions(s) if mask[INDEX[a]]]
        if s.phase == Phase.SETUP:
            return INDEX[self.greedy.choose(s)], None
        if s.phase == Phase.ACTION:
            return INDEX[self.best_action(s, legal)], None
        options = self.candidates(s, legal)
        if explore is not None and explore.random() < 0.1:
            action, key = explore.choice(options)
        else:
            action, key = max(options, key=lambda o: self.value(o[1], training=explore is not None))
        return INDEX[action], key

    def value(self, key: str, *, training: bool) -> float:
        """The average outcome of ``key``; untried: optimistic while training, else ``stop``'s
        fallback (the value stopping gives, read from the key) and -inf for the others."""
        hit = self.table.get(key)
        if hit and hit[1] > 0:
            return hit[0] / hit[1]
        if training:
            return OPTIMISM
        return float(key.split(":")[1]) if key.startswith("stop:") else float("-inf")

    @staticmethod
    def best_action(s: State, legal: Sequence[Action]) -> Action:
        """The lounger action with the best immediate margin (pass when nothing gains)."""
        before = margin(s)
        return max(legal, key=lambda a: margin(apply(s, a)) - before)

    def candidates(self, s: State, legal: Sequence[Action]) -> list[tuple[Action, str]]:
        """``stop``, ``chip`` and keep-one-colour candidates with their keys."""
        kept, last = s.kept, s.last
        guard = advance(s.guard, kept[LIFEGUARD] + last[LIFEGUARD])
        now = max(colour_gain(s, c, kept[c] + last[c], guard) for c in range(N_COLOURS))
        now_key = round(now)
        thrown = sum(last[:N_COLOURS])
        out: list[tuple[Action, str]] = []
        for a in legal:
            if a.kind == ActionKind.STOP:
                out.append((a, _key("stop", now_key)))
            elif a.kind == ActionKind.CHIP:
                best_kept = max(kept[:N_COLOURS])
                out.append((a, _key("chip", now_key, sum(last), best_kept)))
            elif a.kind == ActionKind.KEEP:
                colours = [c for c in range(N_COLOURS) if a.keep[c]]
                if len(colours) != 1 or a.keep[colours[0]] != last[colours[0]]:
                    continue  # only "keep every die of one colour"
                c = colours[0]
                have = kept[c] + last[c]
                rest = thrown - last[c]
                goal = colour_gain(s, c, have + rest, guard)
                out.append((a, _key("keep", now_key, have, rest, round(goal * 2) / 2)))
        return out

    # -- learning and storage

    def update(self, keys: Sequence[str], outcome: float) -> None:
        """Add ``outcome`` (a turn's result) to every key chosen in that turn."""
        for key in keys:
            entry = self.table.setdefault(key, [0.0, 0.0])
            entry[0] += outcome
            entry[1] += 1

    def save(self, path: str | Path) -> None:
        """Write the table as JSON."""
        Path(path).write_text(json.dumps(self.table, sort_keys=True, indent=0) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> RollingAgent:
        """Read a table written by :meth:`save`."""
        return cls(json.loads(Path(path).read_text()))
