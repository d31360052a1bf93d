"""Synthetic tournaments drawn from a known Plackett-Luce model (test helper, not a test module)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from arena.ratings import GameResult

TRUE_STRENGTHS: dict[str, float] = {"alpha": 1.0, "bravo": 0.5, "charlie": 0.0, "delta": -0.5}
SEAT0_BONUS = 0.3


def sample_order(log_strengths: Sequence[float], rng: np.random.Generator) -> list[int]:
    """Seats in finishing order, best first, drawn from the Plackett-Luce model.

    Uses the Gumbel-max construction: sorting ``log_strength + Gumbel noise`` descending gives a
    Plackett-Luce sample.
    """
    keys = np.asarray(log_strengths, dtype=float) + rng.gumbel(size=len(log_strengths))
    return [int(i) for i in np.argsort(-keys)]


def synthetic_games(
    n_games: int,
    seed: int,
    strengths: Mapping[str, float] = TRUE_STRENGTHS,
    seat0_bonus: float = SEAT0_BONUS,
    sizes: Sequence[int] = (2, 4),
    group_size: int = 1,
) -> list[GameResult]:
    """``n_games`` games among ``strengths``'s bots, sizes cycling through ``sizes``.

    Seat 0 gets ``seat0_bonus`` added to its log-strength. With ``group_size`` > 1, consecutive
    games share a group id (as duplicate-dice sets do) and reuse the same bots in rotated seats.
    """
    rng = np.random.default_rng(seed)
    bots = list(strengths)
    games: list[GameResult] = []
    players: list[str] = []
    for g in range(n_games):
        n = sizes[(g // group_size) % len(sizes)]
        if g % group_size == 0:
            players = [bots[i] for i in rng.choice(len(bots), size=n, replace=False)]
        else:
            players = players[1:] + players[:1]
        logs = [strengths[b] + (seat0_bonus if seat == 0 else 0.0) for seat, b in enumerate(players)]
        placings = [0] * n
        for place, seat in enumerate(sample_order(logs, rng), start=1):
            placings[seat] = place
        games.append(
            GameResult(
                players=tuple(players),
                placings=tuple(placings),
                scores=tuple(float(n - p) for p in placings),
                game_id=f"g{g}",
                group=f"grp{g // group_size}" if group_size > 1 else "",
            )
        )
    return games
