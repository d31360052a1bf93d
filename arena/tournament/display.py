"""Live progress of a tournament: a rich display on a terminal, plain lines otherwise.

The display never ends a run: when its output is gone (a pipe whose reader left, ``| head``; a
terminal that hung up), a write fails with an :class:`OSError`, and from then on the display
draws nothing and the run goes on (what stops a run is a signal, :mod:`arena.lifecycle`)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.endings import is_forfeit, win_share
from arena.store.tournaments import status_counts
from arena.termui import keep_going_on_closed_pipe, make_console
from arena.tournament.pull import planned_total

from .formats import CONTINUOUS
from .runner import Progress as RunProgress

if TYPE_CHECKING:
    from arena.lifecycle import Stopped
    from arena.store.db import Database
    from arena.store.lease import LeaseHolder


@dataclass
class _Standing:
    games: int = 0
    wins: float = 0.0
    points: int = 0
    forfeits: int = 0


@dataclass
class TournamentDisplay:
    """Callable progress sink for :func:`arena.tournament.runner.run_tournament`.

    Give ``total`` (all the tournament's matches) and ``done`` (those already played, on a resume)
    so a terminal's bar shows ``done/total`` from the start rather than after the first match;
    the plain (not a terminal) first line comes when the run starts, told by a
    :class:`~arena.tournament.runner.Progress` without a result."""

    title: str
    console: Console = field(default_factory=lambda: make_console(stderr=True))
    interval: float = 5.0  # seconds between plain progress lines
    standings: dict[str, _Standing] = field(default_factory=dict)
    total: int | None = None
    done: int = 0

    def __post_init__(self) -> None:
        self.tty = self.console.is_terminal
        self.started = time.monotonic()
        self.last_line = 0.0
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.bar.add_task(self.title, total=self.total, completed=self.done)
        self.live: Live | None = None
        self.gone = False  # the output failed once: nothing more is drawn
        keep_going_on_closed_pipe(self.console, then=self._broken_pipe)

    def __enter__(self) -> TournamentDisplay:
        try:
            if self.tty:
                self.live = Live(self._view(), console=self.console, refresh_per_second=4)
                self.live.__enter__()
            # a plain first line waits for the run's own start (a Progress without a result): a
            # run refused before it starts (another coordinator holds the lease) prints none
        except OSError:
            self._lost()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            try:
                live.update(self._view())
                live.__exit__(exc_type, exc, tb)
            except OSError:  # never in place of the run's own outcome
                self._lost(live)

    def _broken_pipe(self) -> None:
        """The console's write hit a closed pipe (the main thread's or the live refresh thread's,
        the console now quiet): nothing more is drawn; the run goes on."""
        self.gone = True

    def _lost(self, live: Live | None = None) -> None:
        """The output is gone: stop drawing (the live display's refresh thread too), quietly."""
        self.gone = True
        live = live or self.live
        self.live = None
        if live is not None:
            with contextlib.suppress(Exception):
                live.stop()

    def __call__(self, p: RunProgress) -> None:
        if p.last is not None:
            placings = p.last.placings
            for k, s in enumerate(p.last.seats):
                st = self.standings.setdefault(s.name, _Standing())
                st.games += 1
                st.points += s.score
                lost = is_forfeit(s.termination)
                st.wins += win_share(placings, k, forfeited=lost)  # the same wins as the stored leaderboard's
                st.forfeits += lost
        self.bar.update(self.task, total=p.total, completed=p.done + p.failed)
        try:
            self._draw(p)
        except OSError:
            self._lost()

    def _draw(self, p: RunProgress) -> None:
        if self.gone:
            return
        if self.live is not None:
            self.live.update(self._view())
            return
        now = time.monotonic()
        if p.last is None:  # the run starts: where it stands
            if not self.last_line:
                print(f"{self.title}: {p.done}/{p.total} matches done", file=sys.stderr, flush=True)
                self.last_line = now
            return
        if now - self.last_line >= self.interval or p.done + p.failed >= p.total:
            self.last_line = now
            leader = max(
                self.standings.items(), key=lambda kv: kv[1].wins / max(1, kv[1].games), default=None
            )
            # the live table's order (win share so far), not the final ranking by rating: named for what it is
            lead = (
                f"; top win share: {leader[0]} ({leader[1].wins / max(1, leader[1].games):.2f})"
                if leader
                else ""
            )
            played = max(0, p.done + p.failed - self.done)  # in this run (a resume starts at done)
            rate = played / max(1e-9, now - self.started)
            print(
                f"{self.title}: {p.done}/{p.total} matches done"
                f"{f', {p.failed} failed' if p.failed else ''} ({rate:.1f}/s){lead}",
                file=sys.stderr,
                flush=True,
            )

    def _view(self) -> Group:
        table = Table(title="current standings", title_justify="left")
        for col in ("bot", "games", "win share", "mean score", "forfeits"):
            table.add_column(col, justify="left" if col == "bot" else "right")
        ranked = sorted(self.standings.items(), key=lambda kv: -kv[1].wins / max(1, kv[1].games))
        for name, st in ranked:
            table.add_row(
                name,
                str(st.games),
                f"{st.wins / max(1, st.games):.2f}",
                f"{st.points / max(1, st.games):.1f}",
                str(st.forfeits),
            )
        return Group(self.bar, table)


def tournament_state(
    tournament_id: int, status: str, counts: Mapping[str, int], holder: LeaseHolder | None, fmt: str = ""
) -> str:
    """What a tournament is doing, in words: a ``running`` tournament whose coordinator is gone
    (Ctrl-C, a crash, a killed process: no live lease holder) is *interrupted*, with how to resume
    (the ladder's, which never finishes, with how to run the ladder).

    A lease holder is live while its heartbeat has not expired and, when it ran on this host, its
    process still runs (the rule by which a new coordinator would take the lease over)."""
    left = counts.get("queued", 0) + counts.get("running", 0)
    live = holder is not None and holder.live()
    if fmt in CONTINUOUS and status in ("created", "running") and not live:
        return "the ladder, not running now; 'arena ladder run' plays it on"
    if status == "created":
        return f"created, not started; start it with 'arena tournament start {tournament_id}'"
    if status != "running":
        return status
    if holder is not None and live:
        return f"running, coordinated by {holder.describe()}"
    resume = f"'arena tournament resume {tournament_id}'"
    if fmt in ROUND_BY_ROUND:  # its later rounds are made from the results: not counted yet
        if left == 0:
            return (
                f"interrupted between rounds; {resume} makes the next round, or finishes it if none is left"
            )
        return (
            f"interrupted: no coordinator is running it, {left} match{'es' if left != 1 else ''} left of the "
            f"rounds made so far (the next rounds are made as these finish); {resume} goes on"
        )
    if left == 0:
        return f"interrupted with every match played; {resume} finishes it"
    return (
        f"interrupted: no coordinator is running it, {left} match{'es' if left != 1 else ''} left; "
        f"resume with {resume}"
    )


ROUND_BY_ROUND = ("swiss", "knockout")  # formats that make each round from the last one's results


def stopped_message(db: Database, tournament_id: int, stop: Stopped, command: str = "arena") -> str:
    """``stopped by SIGTERM: 7 of 18 matches finished, 11 queued; resume with '...'`` (the resume
    command called as ``command``: how this shell calls ``arena``)."""
    resume = f"resume with '{command} tournament resume {tournament_id}'"
    try:
        counts = status_counts(db, tournament_id)
    except Exception:  # the database is away: the resume advice still holds
        return f"{stop.how()}; {resume}"
    planned = planned_total(db, tournament_id) or 0  # a Swiss or knockout stores a round at a time
    total = max(sum(counts.values()), planned)
    rest = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()) if k != "finished")
    told = f"{stop.how()}: {counts.get('finished', 0)} of {total} matches finished"
    if counts.get("queued", 0) + counts.get("running", 0) == 0 and sum(counts.values()) >= planned:
        return f"{told}{f', {rest}' if rest else ''}; nothing left to play"
    return f"{told}, {rest}; {resume}"
