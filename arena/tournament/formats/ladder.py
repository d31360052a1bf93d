"""The ladder: a continuous format that picks the table that teaches the most, forever.

The rule, applied each time a table is asked for (table number ``g`` = 0, 1, 2, ...):

1. **Who may play**: the *active* entries (``options["active"]``, default every entry).  With
   fewer than 2 active entries the ladder waits.
2. **Table size**: ``table_sizes[g % len(table_sizes)]``, capped by the number of active entries.
3. **The first seat (the anchor)**:
   - *fairness floor first*: an entry that has not sat at any of the last ``floor`` tables
     (``options["floor"]``, default ``2 * active``) is *overdue*; the most overdue one (the
     oldest last table; never played counts as oldest) is the anchor;
   - otherwise the *most uncertain* entry: the largest OpenSkill ``sigma`` (a new bot starts at
     the prior's 25/3, so new and uncertain bots play first), ties broken by fewer games, then a
     fixed order drawn from the ladder seed.
4. **Opponents**: the ``k - 1`` other active entries with the nearest OpenSkill ``mu`` to the
   anchor's (similar strength teaches the most); entries already in a match in flight count as
   ``BUSY_PENALTY`` further away, and ties are broken by the table's seeded draw.
5. **Duplicate dice**: the table is played under every cyclic seat rotation with one seed,
   ``derive_seed(seed, 0x1add, g)``: one duplicate-dice group ``L<g>`` (its matches carry
   ``round = g``).

Only whole groups are handed out, one per question, and one more only when the queue is empty
(the coordinator asks when it has room): at most ``options["inflight"]`` groups (default 2) are
unfinished at once.  The ladder never finishes by itself: only ``options["max_tables"]``, a cap
on the tables handed out in all, makes it say :class:`Finished` (once that many are out and none
is open; until then it waits).  That option is one run's: the ladder service passes the tables
handed out before the run plus the run's ``--max-tables`` (:func:`arena.ladder.pull.ask`) and
ends that run there without marking the ladder finished.  It is never stored (one stored by an
earlier version is dropped when the ladder next runs: :func:`arena.ladder.field.forget_run_options`).

**What it is a function of**: the settings and the history, like every format.  Ratings are
OpenSkill (:mod:`arena.ratings.openskill`) over the finished matches in schedule order, unless
``options["ratings"]`` (entry -> ``[mu, sigma, games]``) gives them (the ladder service passes
its incrementally updated ratings, :mod:`arena.ratings.incremental`).  Likewise
``options["summary"]`` may give the history's totals (tables handed out, each entry's last
table, matches in flight per entry, unfinished groups) so that a ladder with 100,000 stored
matches need not load them; see :class:`Summary`.  Same inputs, same answer: deterministic for a
given seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.ratings.openskill import OpenSkillParams, Skill, plackett_luce_update
from arena.tournament.pairing import derive_seed, rotations

from .base import Finished, Format, FormatError, History, Next, Pairing, Play, Settings, Wait

BUSY_PENALTY = 1000.0
"""How much further (in ``mu``) an opponent already in a match in flight counts as."""
DEFAULT_INFLIGHT = 2
SEED_TAG = 0x1ADD


@dataclass(frozen=True)
class Standing:
    """An entry as the ladder sees it: its OpenSkill belief, games, last table and matches in
    flight."""

    mu: float
    sigma: float
    games: int = 0
    last: int = -1  # the last table number it sat at; -1: never
    busy: int = 0  # its matches queued or running


@dataclass(frozen=True)
class Summary:
    """What the ladder needs from the history: ``tables`` handed out so far, ``open_groups``
    (groups with a match not done yet), and per entry its last table and matches in flight."""

    tables: int = 0
    open_groups: int = 0
    last: Mapping[int, int] = field(default_factory=dict)
    busy: Mapping[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "open_groups": self.open_groups,
            "last": {str(e): v for e, v in self.last.items()},
            "busy": {str(e): v for e, v in self.busy.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Summary:
        return cls(
            tables=int(data.get("tables", 0)),
            open_groups=int(data.get("open_groups", 0)),
            last={int(e): int(v) for e, v in dict(data.get("last") or {}).items()},
            busy={int(e): int(v) for e, v in dict(data.get("busy") or {}).items()},
        )


def summarise(history: History) -> Summary:
    """The :class:`Summary` of a full history (tables are numbered by the matches' ``round``)."""
    last: dict[int, int] = {}
    busy: Counter[int] = Counter()
    open_groups: set[str] = set()
    tables = 0
    for m in history.matches:
        tables = max(tables, m.round + 1)
        for e in m.seating:
            last[e] = max(last.get(e, -1), m.round)
            if not m.done:
                busy[e] += 1
        if not m.done:
            open_groups.add(m.group)
    return Summary(tables, len(open_groups), last, dict(busy))


def replay_ratings(history: History, params: OpenSkillParams | None = None) -> dict[int, tuple[Skill, int]]:
    """OpenSkill over the finished matches in schedule order: entry -> (skill, games)."""
    p = params or OpenSkillParams()
    prior = Skill(p.mu, p.sigma)
    out: dict[int, tuple[Skill, int]] = {}
    for m in sorted(history.matches, key=lambda m: m.ordinal):
        if m.status != "finished" or m.placings is None:
            continue
        before = [out.get(e, (prior, 0))[0] for e in m.seating]
        for e, after in zip(m.seating, plackett_luce_update(before, m.placings, p), strict=True):
            out[e] = (after, out.get(e, (prior, 0))[1] + 1)
    return out


class Ladder(Format):
    """The continuous ladder (the rule is in the module docstring)."""

    name = "ladder"

    @classmethod
    def check(cls, settings: Settings) -> None:
        if not settings.table_sizes or any(not 2 <= k <= 4 for k in settings.table_sizes):
            raise FormatError(f"ladder tables seat 2-4 players, got {list(settings.table_sizes)}")
        inflight = settings.options.get("inflight", DEFAULT_INFLIGHT)
        if not isinstance(inflight, int) or inflight < 1:
            raise FormatError(f"the ladder's inflight must be a whole number >= 1, got {inflight!r}")
        floor = settings.options.get("floor")
        if floor is not None and (not isinstance(floor, int) or floor < 1):
            raise FormatError(f"the ladder's floor must be a whole number >= 1, got {floor!r}")
        for e in settings.options.get("active") or []:
            if not isinstance(e, int) or not 0 <= e < settings.entries:
                raise FormatError(f"active entry {e!r} is not in the field of {settings.entries}")

    def active(self) -> list[int]:
        """The entries that may be seated now, in field order."""
        given = self.settings.options.get("active")
        return sorted(set(given)) if given is not None else list(range(self.settings.entries))

    def standings(self, history: History, summary: Summary) -> dict[int, Standing]:
        """Every active entry's :class:`Standing`."""
        p = OpenSkillParams()
        given = self.settings.options.get("ratings")
        if given is not None:
            rated = {int(e): (Skill(float(v[0]), float(v[1])), int(v[2])) for e, v in dict(given).items()}
        else:
            rated = replay_ratings(history, p)
        prior = (Skill(p.mu, p.sigma), 0)
        out = {}
        for e in self.active():
            skill, games = rated.get(e, prior)
            out[e] = Standing(skill.mu, skill.sigma, games, summary.last.get(e, -1), summary.busy.get(e, 0))
        return out

    def summary(self, history: History) -> Summary:
        given = self.settings.options.get("summary")
        return Summary.from_json(given) if given is not None else summarise(history)

    def tie_order(self) -> dict[int, int]:
        """The fixed order that breaks ties between entries (drawn from the ladder seed)."""
        order = list(range(self.settings.entries))
        random.Random(derive_seed(self.settings.seed, SEED_TAG, 0)).shuffle(order)
        return {e: i for i, e in enumerate(order)}

    def floor(self, active: int) -> int:
        """Tables an entry may sit out before it is overdue."""
        return int(self.settings.options.get("floor") or 2 * active)

    def next(self, history: History) -> Next:
        s = self.settings
        summary = self.summary(history)
        limit = s.options.get("max_tables")  # the run's limit (see the module docstring)
        if limit is not None and summary.tables >= int(limit):
            return Finished() if summary.open_groups == 0 else Wait()
        if summary.open_groups >= int(s.options.get("inflight", DEFAULT_INFLIGHT)):
            return Wait()
        standings = self.standings(history, summary)
        if len(standings) < 2:
            return Wait()
        g = summary.tables
        table = self.pick(g, standings)
        seed = derive_seed(s.seed, SEED_TAG, g)
        return Play(tuple(Pairing(seed, f"L{g}", seating, round=g) for seating in rotations(table)))

    def pick(self, g: int, standings: Mapping[int, Standing]) -> tuple[int, ...]:
        """Table number ``g``'s entries, anchor first (steps 2-4 of the rule)."""
        sizes = self.settings.table_sizes
        k = min(sizes[g % len(sizes)], len(standings))
        tie = self.tie_order()
        rng = random.Random(derive_seed(self.settings.seed, SEED_TAG, g, 1))
        jitter = {e: rng.random() for e in sorted(standings)}
        floor = self.floor(len(standings))
        overdue = [e for e, st in standings.items() if g - st.last > floor]
        if overdue:
            anchor = min(overdue, key=lambda e: (standings[e].last, tie[e]))
        else:
            anchor = min(standings, key=lambda e: (-standings[e].sigma, standings[e].games, tie[e]))
        a = standings[anchor]
        others = sorted(
            (e for e in standings if e != anchor),
            key=lambda e: (
                abs(standings[e].mu - a.mu) + (BUSY_PENALTY if standings[e].busy else 0.0),
                jitter[e],
            ),
        )
        return (anchor, *others[: k - 1])


def ratings_option(ratings: Mapping[int, tuple[float, float, int]]) -> dict[str, list[float]]:
    """``options["ratings"]`` from entry -> (mu, sigma, games)."""
    return {str(e): [mu, sigma, float(games)] for e, (mu, sigma, games) in ratings.items()}
