"""``arena evaluate``'s schedule as a format: duplicate groups until the sequential test decides.

Entry 0 is the candidate, entries ``1..players-1`` the copies of the baseline.  Group ``g`` is one
seed (``seed + g``) under every seating of the candidate (:func:`arena.evaluation.seatings`), the
baselines around it in order.  Groups are handed out one at a time, whenever fewer than
``options["ahead"]`` matches wait to be played (so ``jobs`` tables are kept busy without running
far past a decision).  The complete groups, in seed order, feed the sequential test
(``options["sprt"]``: ``elo0``, ``elo1``, ``alpha``, ``beta``; absent: none): once it decides, or
once ``games`` groups are handed out, the format is finished (the matches still running are
played to the end by the runner).  A pure function of the settings and the recorded results.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.engine.chance import SEED_LIMIT
from arena.evaluation import GameOutcome, GroupOutcome, SequentialTest, SprtConfig, SprtState, seatings

from .base import Finished, Format, FormatError, History, Next, Pairing, Play, Recorded, Settings, Wait


class SequentialDuplicate(Format):
    """Duplicate groups of a candidate against a baseline, stopped by a sequential test."""

    name = "sequential"

    @classmethod
    def check(cls, settings: Settings) -> None:
        super().check(settings)
        if not 2 <= settings.entries <= 4 or settings.table_sizes != (settings.entries,):
            raise FormatError("a sequential evaluation seats every entry at one table of 2-4 players")
        if int(settings.options.get("ahead", 1)) < 1:
            raise FormatError("options['ahead'] must be at least 1")

    @property
    def sprt(self) -> SprtConfig | None:
        """The sequential test's configuration (None: play every group)."""
        raw = self.settings.options.get("sprt")
        return SprtConfig(**raw) if raw else None

    def group_seed(self, g: int) -> int:
        """The seed of group ``g``."""
        return (self.settings.seed + g) % SEED_LIMIT

    def pairings(self, g: int) -> tuple[Pairing, ...]:
        """Group ``g``: the candidate in every seat once, the baselines around it."""
        out = []
        for seat in seatings(self.settings.entries):
            order = list(range(1, self.settings.entries))
            order.insert(seat, 0)
            out.append(Pairing(self.group_seed(g), f"g{g:05d}", tuple(order), round=g))
        return tuple(out)

    def complete(self, history: History) -> list[GroupOutcome]:
        """The complete groups, contiguous from group 0 (what the statistics may use)."""
        by_group: dict[int, list[Recorded]] = {}
        for m in history.matches:
            by_group.setdefault(m.round, []).append(m)
        players = self.settings.entries
        out: list[GroupOutcome] = []
        while len(by_group.get(len(out), ())) == players and all(
            m.status == "finished" for m in by_group[len(out)]
        ):
            games = sorted(by_group[len(out)], key=lambda m: m.seating.index(0))
            out.append(GroupOutcome(games[0].seed, tuple(_game(m) for m in games)))
        return out

    def test(self, history: History) -> SprtState | None:
        """The sequential test over the complete groups (None without one)."""
        config = self.sprt
        if config is None:
            return None
        test = SequentialTest(config)
        for group in self.complete(history):
            if test.add(group.share).stopped:
                break
        return test.state

    def next(self, history: History) -> Next:
        state = self.test(history)
        handed = len({m.round for m in history.matches})
        if (state is not None and state.stopped) or handed >= self.settings.games:
            return Finished()
        waiting = sum(1 for m in history.matches if m.status == "queued")
        if waiting >= int(self.settings.options.get("ahead", 1)):
            return Wait()
        return Play(self.pairings(handed))

    def planned(self) -> int | None:
        return self.settings.games * self.settings.entries


def _game(m: Recorded) -> GameOutcome:
    assert m.scores is not None and m.placings is not None
    return GameOutcome(seed=m.seed, candidate_seat=m.seating.index(0), scores=m.scores, placings=m.placings)


def sprt_options(config: SprtConfig | None) -> dict[str, float] | None:
    """``options["sprt"]`` for ``config``."""
    if config is None:
        return None
    return {"elo0": config.elo0, "elo1": config.elo1, "alpha": config.alpha, "beta": config.beta}


__all__: Sequence[str] = ["SequentialDuplicate", "sprt_options"]
