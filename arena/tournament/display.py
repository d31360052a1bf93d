"""Live progress of a tournament: a rich display on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.termui import make_console

from .runner import Progress as RunProgress


@dataclass
class _Standing:
    games: int = 0
    wins: float = 0.0
    points: int = 0
    forfeits: int = 0


@dataclass
class TournamentDisplay:
    """Callable progress sink for :func:`arena.tournament.runner.run_tournament`."""

    title: str
    console: Console = field(default_factory=lambda: make_console(stderr=True))
    interval: float = 5.0  # seconds between plain progress lines
    standings: dict[str, _Standing] = field(default_factory=dict)

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
        self.task = self.bar.add_task(self.title, total=None)
        self.live: Live | None = None

    def __enter__(self) -> TournamentDisplay:
        if self.tty:
            self.live = Live(self._view(), console=self.console, refresh_per_second=4)
            self.live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live is not None:
            self.live.update(self._view())
            self.live.__exit__(exc_type, exc, tb)

    def __call__(self, p: RunProgress) -> None:
        if p.last is not None:
            for s in p.last.seats:
                st = self.standings.setdefault(s.name, _Standing())
                st.games += 1
                st.points += s.score
                shared = sum(1 for o in p.last.seats if o.placing == 1)
                st.wins += 1 / shared if s.placing == 1 else 0
                st.forfeits += s.termination not in ("normal", "round-cap", "forfeit")
        self.bar.update(self.task, total=p.total, completed=p.done + p.failed)
        if self.live is not None:
            self.live.update(self._view())
            return
        now = time.monotonic()
        if now - self.last_line >= self.interval or p.done + p.failed >= p.total:
            self.last_line = now
            leader = max(
                self.standings.items(), key=lambda kv: kv[1].wins / max(1, kv[1].games), default=None
            )
            lead = f"; leading: {leader[0]}" if leader else ""
            rate = (p.done + p.failed) / max(1e-9, now - self.started)
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
