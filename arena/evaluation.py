"""Statistics of a duplicate-dice evaluation: one candidate bot against one baseline bot.

Pure functions of match results (no I/O, no randomness except a seeded bootstrap), used by
``arena evaluate`` (see :mod:`arena.evaluate_runner`).

The design
----------
A **duplicate group** is one match seed played under every seating that matters: with 2 players
both seatings (the candidate in seat 0, then in seat 1); with 3 or 4 players one candidate against
``players - 1`` copies of the baseline, the candidate in each seat once.  Every game of a group
sees the same dice (the referee's counter-based dice stream, rules.md §5), so most of the luck of
the dice cancels within a group.  Games of one group are correlated, groups are independent: every
interval and test below therefore treats the **group** as the unit of sampling.

Measures
--------
* **Pairwise share** ``p``: in every game the candidate meets each baseline seat once; it scores 1
  against a baseline it places above, 1/2 on an equal placing (ties count half), 0 below (placings
  as the referee reports them, so a forfeit ranks last).  ``p`` = points / pairings over all games.
* **Score difference**: candidate score minus the mean baseline score in the same game, averaged.
* **Elo difference**: ``Elo = -400 * log10(1/p - 1)`` (the logistic Elo model read backwards).

Intervals (95 % by default)
---------------------------
* score difference: Student-t interval on the per-group means (``groups - 1`` degrees of freedom);
* share and Elo: a percentile **bootstrap over duplicate groups** (resample whole groups with
  replacement, recompute the pooled share; 2000 resamples, fixed RNG seed so the report is
  reproducible), mapped to Elo through the formula above (monotone, so the Elo interval is the
  image of the share interval).  With fewer than :data:`MIN_BOOTSTRAP_GROUPS` groups the bootstrap
  is unreliable and a **Wilson** score interval with the number of groups as the effective sample
  size is used instead (conservative: it treats each group as a single Bernoulli trial), and so it
  is for a clean sweep (a share of exactly 0 or 1, which every resample repeats).  A share
  of exactly 0 or 1 has an infinite Elo; such bounds are reported as ``-inf``/``+inf`` (``null``
  in JSON).

Sequential test
---------------
A **GSPRT** (generalized sequential probability ratio test, as used by Fishtest for its game
pairs, generalized from pairs to duplicate groups) of ``H0: Elo = elo0`` against
``H1: Elo = elo1`` (defaults 0 and +150, alpha = beta = 0.05).  After each completed group (taken
in seed order) it computes the normal-approximation log-likelihood ratio of the group scores
``x_g`` (each group's pairwise share)::

    LLR = n * (s1 - s0) * (2 * mean(x) - s0 - s1) / (2 * var(x)),   s_i = 1 / (1 + 10**(-elo_i/400))

and stops when ``LLR >= log((1 - beta) / alpha)`` (accept H1: the candidate is stronger) or
``LLR <= log(beta / (1 - alpha))`` (accept H0), never before :data:`MIN_SEQUENTIAL_GROUPS` groups
(the variance of a handful of groups is too unstable).  Accepting H1 means the data favour
``elo1`` over ``elo0``; it does not bound the Elo by ``elo1`` -- read the interval for that.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from arena.endings import MatchEnd

CONFIDENCE: Final = 0.95
BOOTSTRAP_SAMPLES: Final = 2000
BOOTSTRAP_SEED: Final = 20240601
MIN_BOOTSTRAP_GROUPS: Final = 10
MIN_SEQUENTIAL_GROUPS: Final = 8


# --------------------------------------------------------------------------- elementary functions


def elo_from_share(p: float) -> float:
    """The Elo difference that the logistic model turns into an expected share ``p``.

    ``elo_from_share(0.5) == 0``; 0.64 is about +100; ``0`` and ``1`` give ``-inf``/``+inf``.

    >>> round(elo_from_share(0.75), 1)
    190.8
    """
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"a share must lie in [0, 1], got {p!r}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / p - 1.0)


def share_from_elo(elo: float) -> float:
    """The expected share of a player ``elo`` points stronger (inverse of :func:`elo_from_share`)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def normal_quantile(q: float) -> float:
    """The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"a quantile needs 0 < q < 1, got {q!r}")
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)  # fmt: skip
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01)  # fmt: skip
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)  # fmt: skip
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    low = 0.02425
    if q < low:
        r = math.sqrt(-2.0 * math.log(q))
        return (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) / (
            (((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1.0
        )
    if q > 1.0 - low:
        return -normal_quantile(1.0 - q)
    r = q - 0.5
    s = r * r
    return (
        (((((a[0] * s + a[1]) * s + a[2]) * s + a[3]) * s + a[4]) * s + a[5])
        * r
        / (((((b[0] * s + b[1]) * s + b[2]) * s + b[3]) * s + b[4]) * s + 1.0)
    )


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile with ``df`` degrees of freedom (Cornish-Fisher expansion around the
    normal quantile; exact forms for 1 and 2 degrees of freedom)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        a = 4.0 * q * (1.0 - q)
        return 2.0 * (q - 0.5) * math.sqrt(2.0 / a)
    z = normal_quantile(q)
    n = float(df)
    z3, z5, z7, z9 = z**3, z**5, z**7, z**9
    return (
        z
        + (z3 + z) / (4 * n)
        + (5 * z5 + 16 * z3 + 3 * z) / (96 * n**2)
        + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n**3)
        + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * n**4)
    )


@dataclass(frozen=True)
class Interval:
    """An estimate with a two-sided confidence interval."""

    estimate: float
    low: float
    high: float

    def excludes(self, value: float) -> bool:
        """True when ``value`` lies outside ``[low, high]``."""
        return value < self.low or value > self.high

    def map(self, fn: Callable[[float], float]) -> Interval:
        """The interval through a monotone increasing function."""
        return Interval(fn(self.estimate), fn(self.low), fn(self.high))


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """Student-t interval for the mean of independent ``values`` (needs at least one value; one
    value gives an infinitely wide interval)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    m = math.fsum(values) / n
    if n == 1:
        return Interval(m, -math.inf, math.inf)
    var = math.fsum((x - m) ** 2 for x in values) / (n - 1)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(var / n)
    return Interval(m, m - half, m + half)


def wilson_interval(p: float, n: float, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval of a proportion ``p`` observed on ``n`` (effective) trials."""
    if n <= 0:
        raise ValueError("the sample size must be positive")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a proportion must lie in [0, 1], got {p!r}")
    z = normal_quantile(0.5 + confidence / 2.0)
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # at a share of 0 or 1 that bound is the share itself: rounding left 0.9999999999999999 for
    # some n (an Elo interval of [+77, +6261] beside an estimate of +inf)
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return Interval(p, low, high)


def bootstrap_ratio_interval(
    numerators: Sequence[float],
    denominators: Sequence[float],
    confidence: float = CONFIDENCE,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval:
    """Percentile bootstrap interval of ``sum(num) / sum(den)`` resampling the pairs (groups)."""
    n = len(numerators)
    if n == 0 or n != len(denominators):
        raise ValueError("need equally many numerators and denominators, at least one")
    estimate = math.fsum(numerators) / math.fsum(denominators)
    rng = random.Random(seed)
    stats = []
    for _ in range(samples):
        num = den = 0.0
        for _ in range(n):
            k = rng.randrange(n)
            num += numerators[k]
            den += denominators[k]
        stats.append(num / den)
    stats.sort()
    tail = (1.0 - confidence) / 2.0
    lo = stats[max(0, math.floor(tail * samples))]
    hi = stats[min(samples - 1, math.ceil((1.0 - tail) * samples) - 1)]
    return Interval(estimate, lo, hi)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 < q <= 100) of ``values`` by the nearest-rank method: the
    smallest value with at least ``q`` % of the values at or below it (so p100 is the maximum,
    and p99 of 100 values is the second largest)."""
    if not values:
        raise ValueError("no values")
    if not 0.0 < q <= 100.0:
        raise ValueError(f"a percentile needs 0 < q <= 100, got {q!r}")
    ordered = sorted(values)
    rank = math.ceil(q / 100.0 * len(ordered))
    return ordered[max(1, rank) - 1]


@dataclass(frozen=True)
class Percentiles:
    """p50, p99 and the maximum of some durations (seconds), and how many there were."""

    count: int
    p50: float
    p99: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles:
        """The percentiles of ``values`` (at least one)."""
        return cls(len(values), percentile(values, 50), percentile(values, 99), max(values))

    def to_json(self) -> dict[str, float | int]:
        """Milliseconds, rounded to the microsecond."""
        return {
            "count": self.count,
            "p50": round(self.p50 * 1000, 3),
            "p99": round(self.p99 * 1000, 3),
            "max": round(self.max * 1000, 3),
        }


# --------------------------------------------------------------------------- games and groups


@dataclass(frozen=True)
class GameOutcome:
    """One finished game seen from the candidate: its seat, every seat's score and placing."""

    seed: int
    candidate_seat: int
    scores: tuple[int, ...]
    placings: tuple[int, ...]
    termination: str = str(MatchEnd.NORMAL)  # an arena.endings.MatchEnd value
    forfeits: tuple[int, ...] = ()  # seats that forfeited

    def __post_init__(self) -> None:
        n = len(self.scores)
        if not 2 <= n <= 4 or len(self.placings) != n:
            raise ValueError("scores and placings need one entry per seat (2-4 seats)")
        if not 0 <= self.candidate_seat < n:
            raise ValueError(f"candidate seat {self.candidate_seat} out of range")

    @property
    def players(self) -> int:
        """Seats in the game."""
        return len(self.scores)

    @property
    def pairwise_points(self) -> float:
        """1 per baseline placed below the candidate, 1/2 per equal placing."""
        me = self.placings[self.candidate_seat]
        pts = 0.0
        for seat, place in enumerate(self.placings):
            if seat != self.candidate_seat:
                pts += 1.0 if me < place else 0.5 if me == place else 0.0
        return pts

    @property
    def pairings(self) -> int:
        """Baselines the candidate met in this game."""
        return self.players - 1

    @property
    def score_difference(self) -> float:
        """Candidate score minus the mean baseline score."""
        others = [s for seat, s in enumerate(self.scores) if seat != self.candidate_seat]
        return self.scores[self.candidate_seat] - math.fsum(others) / len(others)


@dataclass(frozen=True)
class GroupOutcome:
    """A complete duplicate group: one seed under every seating."""

    seed: int
    games: tuple[GameOutcome, ...]

    @property
    def points(self) -> float:
        """Pairwise points of the candidate over the group."""
        return math.fsum(g.pairwise_points for g in self.games)

    @property
    def pairings(self) -> int:
        """Pairwise results in the group."""
        return sum(g.pairings for g in self.games)

    @property
    def share(self) -> float:
        """The group's pairwise share (its score in the sequential test)."""
        return self.points / self.pairings

    @property
    def score_difference(self) -> float:
        """Mean score difference over the group's games."""
        return math.fsum(g.score_difference for g in self.games) / len(self.games)


def seatings(players: int) -> tuple[int, ...]:
    """The candidate's seats in one duplicate group: every seat once (2 players: both seatings)."""
    if not 2 <= players <= 4:
        raise ValueError(f"players must be 2..4, got {players}")
    return tuple(range(players))


# --------------------------------------------------------------------------- sequential test


@dataclass(frozen=True)
class SprtConfig:
    """The hypotheses and error rates of the sequential test."""

    elo0: float = 0.0
    elo1: float = 150.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError("elo1 must be larger than elo0")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta must lie in (0, 0.5)")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this log-likelihood ratio."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this log-likelihood ratio."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SprtState:
    """The test after some groups: the log-likelihood ratio and the verdict so far."""

    llr: float
    lower: float
    upper: float
    groups: int
    decision: str  # "H1" (candidate stronger), "H0" (not stronger) or "continue"

    @property
    def stopped(self) -> bool:
        """True once the test has decided."""
        return self.decision != "continue"


def sprt_llr(group_scores: Sequence[float], config: SprtConfig) -> float:
    """The GSPRT log-likelihood ratio (normal approximation) of group scores in [0, 1]."""
    n = len(group_scores)
    if n < 2:
        return 0.0
    mean = math.fsum(group_scores) / n
    var = math.fsum((x - mean) ** 2 for x in group_scores) / n
    var = max(var, 1e-3)  # a few identical groups must not give an infinite ratio
    s0, s1 = share_from_elo(config.elo0), share_from_elo(config.elo1)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


class SequentialTest:
    """The sequential test fed one group score at a time (in seed order)."""

    def __init__(self, config: SprtConfig | None = None) -> None:
        self.config = config or SprtConfig()
        self.scores: list[float] = []
        self.state = SprtState(0.0, self.config.lower, self.config.upper, 0, "continue")

    def add(self, score: float) -> SprtState:
        """Add the next group's score; once decided, the verdict no longer changes."""
        if self.state.stopped:
            return self.state
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a group score must lie in [0, 1], got {score!r}")
        self.scores.append(score)
        cfg = self.config
        n = len(self.scores)
        llr = sprt_llr(self.scores, cfg)
        decision = "continue"
        if n >= MIN_SEQUENTIAL_GROUPS:
            if llr >= cfg.upper:
                decision = "H1"
            elif llr <= cfg.lower:
                decision = "H0"
        self.state = SprtState(llr, cfg.lower, cfg.upper, n, decision)
        return self.state


def sprt(group_scores: Sequence[float], config: SprtConfig | None = None) -> SprtState:
    """Run the sequential test over group scores taken in order; stop at the first crossing.

    Returns the state at the stop (or after the last group if no bound was crossed).
    """
    test = SequentialTest(config)
    for x in group_scores:
        if test.add(x).stopped:
            break
    return test.state


# --------------------------------------------------------------------------- the summary


@dataclass(frozen=True)
class Summary:
    """Everything ``arena evaluate`` reports."""

    candidate: str
    baseline: str
    players: int
    groups: int
    games: int
    pairings: int
    points: float
    share: Interval
    elo: Interval
    elo_method: str
    score_difference: Interval
    wins: int  # games the candidate finished alone in first place
    draws: int
    forfeits: dict[str, int]
    sprt: SprtState | None
    sprt_config: SprtConfig | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        """True when the Elo interval excludes 0."""
        return self.elo.excludes(0.0)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (infinite Elo bounds become ``null``)."""

        def num(x: float) -> float | None:
            return round(x, 6) if math.isfinite(x) else None

        def iv(i: Interval) -> dict[str, float | None]:
            return {"estimate": num(i.estimate), "low": num(i.low), "high": num(i.high)}

        out: dict[str, Any] = {
            "candidate": self.candidate,
            "baseline": self.baseline,
            "players": self.players,
            "groups": self.groups,
            "games": self.games,
            "pairings": self.pairings,
            "points": self.points,
            "share": iv(self.share),
            "elo": iv(self.elo),
            "elo_method": self.elo_method,
            "elo_excludes_zero": self.significant,
            "score_difference": iv(self.score_difference),
            "confidence": CONFIDENCE,
            "candidate_first_alone": self.wins,
            "games_with_shared_first": self.draws,
            "forfeits": dict(self.forfeits),
        }
        if self.sprt is not None and self.sprt_config is not None:
            c = self.sprt_config
            out["sprt"] = {
                "elo0": c.elo0,
                "elo1": c.elo1,
                "alpha": c.alpha,
                "beta": c.beta,
                "llr": round(self.sprt.llr, 4),
                "lower": round(self.sprt.lower, 4),
                "upper": round(self.sprt.upper, 4),
                "groups": self.sprt.groups,
                "decision": self.sprt.decision,
            }
        out.update(self.extra)
        return out


def share_interval(groups: Sequence[GroupOutcome], confidence: float = CONFIDENCE) -> tuple[Interval, str]:
    """The pairwise share with its interval and the method's name (see the module docstring)."""
    if not groups:
        raise ValueError("no groups")
    points = [g.points for g in groups]
    pairings = [float(g.pairings) for g in groups]
    p = math.fsum(points) / math.fsum(pairings)
    # A clean sweep (every pairing won, or every one lost) resamples to itself: the bootstrap's
    # interval was [1.000, 1.000] ([+inf, +inf] Elo) after 14 groups, claiming a certainty no
    # finite sample gives; Wilson's interval is the honest one there.
    if len(groups) >= MIN_BOOTSTRAP_GROUPS and 0.0 < p < 1.0:
        return bootstrap_ratio_interval(points, pairings, confidence), "bootstrap over duplicate groups"
    return wilson_interval(p, len(groups), confidence), "Wilson, n = duplicate groups"


def summarize(
    candidate: str,
    baseline: str,
    groups: Iterable[GroupOutcome],
    *,
    sprt_config: SprtConfig | None = None,
    sprt_state: SprtState | None = None,
    confidence: float = CONFIDENCE,
) -> Summary:
    """The summary of complete duplicate groups (at least one)."""
    gs = list(groups)
    if not gs:
        raise ValueError("no complete duplicate group to summarize")
    players = gs[0].games[0].players
    share, method = share_interval(gs, confidence)
    diffs = [g.score_difference for g in gs]
    games = [game for g in gs for game in g.games]
    wins = draws = 0
    forfeits: dict[str, int] = {"candidate": 0, "baseline": 0}
    for game in games:
        best = min(game.placings)
        firsts = [s for s, p in enumerate(game.placings) if p == best]
        if len(firsts) > 1:
            draws += 1
        elif firsts[0] == game.candidate_seat:
            wins += 1
        for seat in game.forfeits:
            forfeits["candidate" if seat == game.candidate_seat else "baseline"] += 1
    state = sprt_state
    if state is None and sprt_config is not None:
        state = sprt([g.share for g in gs], sprt_config)
    return Summary(
        candidate=candidate,
        baseline=baseline,
        players=players,
        groups=len(gs),
        games=len(games),
        pairings=sum(g.pairings for g in gs),
        points=math.fsum(g.points for g in gs),
        share=share,
        elo=share.map(elo_from_share),
        elo_method=method,
        score_difference=mean_interval(diffs, confidence),
        wins=wins,
        draws=draws,
        forfeits=forfeits,
        sprt=state,
        sprt_config=sprt_config,
    )
